/* AVX2 build of the AMD matrix-core kernels (compiled with AVX2_CFLAGS). */
#include "config.h"
#include <string.h>
#include "isa_avx2.h"
#include "tc_amd.h"
#define VW MPEI_TC_AMD_AVX2_VW
#define VWN 8   /* VW as a number for the preprocessor */
#define FLOOR_PD(x) ((__typeof__(x))_mm256_round_pd((__m256d)(x), _MM_FROUND_TO_NEG_INF | _MM_FROUND_NO_EXC))
#define FLOOR_PS(x) ((__typeof__(x))_mm256_round_ps((__m256)(x), _MM_FROUND_TO_NEG_INF | _MM_FROUND_NO_EXC))
#define FMA_PD(a, b, c) ((__typeof__(a))_mm256_fmadd_pd((__m256d)(a), (__m256d)(b), (__m256d)(c)))
#define ANY_I(v) (!_mm256_testz_si256((__m256i)(v), (__m256i)(v)))
#define MAX_I(a, b) ((__typeof__(a))_mm256_max_epi32((__m256i)(a), (__m256i)(b)))
#define MIN_I(a, b) ((__typeof__(a))_mm256_min_epi32((__m256i)(a), (__m256i)(b)))
#define CVT_I2D(x) ((vf64)_mm256_cvtepi32_pd((__m128i)(x)))
#define CVT_F2D(x) ((vf64)_mm256_cvtps_pd((__m128)(x)))
#define CVT_D2F(x) ((hf32)_mm256_cvtpd_ps((__m256d)(x)))
#define SET1_PD(x) ((vf64)_mm256_set1_pd(x))
#define JOIN(x, y) ((vf32)_mm256_insertf128_ps(_mm256_castps128_ps256((__m128)(x)), (__m128)(y), 1))
#define TC_MAX_EPI16(a, b) ((__typeof__(a))_mm256_max_epi16((__m256i)(a), (__m256i)(b)))
#include "tc_amd_kernel.h"

void mpei_tc_amd_avx2(const float *av, const int32_t *ae, const float *bv, const int32_t *be, float *c, int32_t *fl,
                      long ldc, const mpei_tc_amd_kp *kp)
{
  amd_kernel(av, ae, bv, be, c, fl, ldc, kp);
}
