/* AVX512 build of the range-analysis kernels (compiled with AVX512_CFLAGS). */
#include "config.h"
#include <immintrin.h>
#include "range_internal.h"
#define VW 16
#define RK_LOW(v) __builtin_shufflevector(v, v, 0, 1, 2, 3, 4, 5, 6, 7)
#define RK_HIGH(v) __builtin_shufflevector(v, v, 8, 9, 10, 11, 12, 13, 14, 15)
#define RK_CVTD(v) (rk_vd)_mm512_cvtps_pd((__m256)(v))
#define RK_CVTL(v) (rk_vl)_mm512_cvtepi32_epi64((__m256i)(v))
#define RK_NAME(stem) mpei_range_##stem##_avx512
#include "range_kernel.h"
