/* AVX-512 build of the element-wise kernels (compiled with AVX512_CFLAGS). */
#include "config.h"
#include <sleef.h>
#include "elementwise.h"
#include "isa_avx512.h"
#include "elementwise_kernel.h"
