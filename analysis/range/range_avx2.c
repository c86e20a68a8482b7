/* AVX2 build of the range-analysis kernels (compiled with AVX2_CFLAGS). */
#include "config.h"
#include "range_internal.h"
#include "isa_avx2.h"
#include "range_kernel.h"
