/* AVX2 build of the range-analysis kernels (compiled with AVX2_CFLAGS). */
#include "config.h"
#include <immintrin.h>
#include "range_internal.h"
#define VW 8
#define RK_LOW(v) __builtin_shufflevector(v, v, 0, 1, 2, 3)
#define RK_HIGH(v) __builtin_shufflevector(v, v, 4, 5, 6, 7)
#define RK_CVTD(v) (rk_vd)_mm256_cvtps_pd((__m128)(v))
#define RK_CVTL(v) (rk_vl)_mm256_cvtepi32_epi64((__m128i)(v))
#define RK_NAME(stem) mpei_range_##stem##_avx2
#include "range_kernel.h"
