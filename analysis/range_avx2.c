/* AVX2 build of the range-analysis kernels (compiled with AVX2_CFLAGS). */
#include "config.h"
#include "range_internal.h"
#define VW 8
#define RK_LOW(v) __builtin_shufflevector(v, v, 0, 1, 2, 3)
#define RK_HIGH(v) __builtin_shufflevector(v, v, 4, 5, 6, 7)
#define RK_NAME(stem) mpei_range_##stem##_avx2
#include "range_kernel.h"
