/* AVX2 build of the element-wise kernels (compiled with AVX2_CFLAGS). */
#include "config.h"
#include <sleef.h>
#include "elementwise.h"
#include "isa_avx2.h"
#include "elementwise_kernel.h"
