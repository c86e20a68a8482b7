/* AVX-512 build of the AMD matrix-core kernels (compiled with AVX512_CFLAGS). */
#include "config.h"
#include <string.h>
#include "isa_avx512.h"
#include "tc_amd.h"
#define VW MPEI_TC_AMD_AVX512_VW
#define VWN 16   /* VW as a number for the preprocessor */
#define FLOOR_PD(x) \
  ((__typeof__(x))_mm512_roundscale_pd((__m512d)(x), _MM_FROUND_TO_NEG_INF | _MM_FROUND_NO_EXC))
#define FLOOR_PS(x) \
  ((__typeof__(x))_mm512_roundscale_ps((__m512)(x), _MM_FROUND_TO_NEG_INF | _MM_FROUND_NO_EXC))
#define FMA_PD(a, b, c) ((__typeof__(a))_mm512_fmadd_pd((__m512d)(a), (__m512d)(b), (__m512d)(c)))
#define ANY_I(v) (_mm512_test_epi32_mask((__m512i)(v), (__m512i)(v)) != 0)
#define MAX_I(a, b) ((__typeof__(a))_mm512_max_epi32((__m512i)(a), (__m512i)(b)))
#define MIN_I(a, b) ((__typeof__(a))_mm512_min_epi32((__m512i)(a), (__m512i)(b)))
#define CVT_I2D(x) ((vf64)_mm512_cvtepi32_pd((__m256i)(x)))
#define CVT_F2D(x) ((vf64)_mm512_cvtps_pd((__m256)(x)))
#define CVT_D2F(x) ((hf32)_mm512_cvtpd_ps((__m512d)(x)))
#define SET1_PD(x) ((vf64)_mm512_set1_pd(x))
#define JOIN(x, y) ((vf32)_mm512_insertf32x8(_mm512_castps256_ps512((__m256)(x)), (__m256)(y), 1))
#define FLOORI_PS(x) ((vi32)_mm512_cvt_roundps_epi32((__m512)(x), _MM_FROUND_TO_NEG_INF | _MM_FROUND_NO_EXC))
#define TC_MAX_EPI16(a, b) ((__typeof__(a))_mm512_max_epi16((__m512i)(a), (__m512i)(b)))
#define AMD_FIN512 1   /* two_f32_fin at CDNA3's widths on AVX-512 instructions */
#include "tc_amd_kernel.h"

void mpei_tc_amd_avx512(const float *av, const int32_t *ae, const float *bv, const int32_t *be, float *c,
                        int32_t *fl, long ldc, const mpei_tc_amd_kp *kp)
{
  amd_kernel(av, ae, bv, be, c, fl, ldc, kp);
}
