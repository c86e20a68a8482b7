/* AVX512 build of the range-analysis kernels (compiled with AVX512_CFLAGS). */
#include "config.h"
#include "range_internal.h"
#include "isa_avx512.h"
#include "range_kernel.h"
