/* AVX-512 build of the element-wise kernels (compiled with AVX512_CFLAGS). */
#include "config.h"
#include <immintrin.h>
#include <sleef.h>
#include "elementwise.h"
#define VW 8
#define SLEEF_EXP(v) ((vd)Sleef_expd8_u10avx512f((__m512d)(v)))
#define SLEEF_LOG(v) ((vd)Sleef_logd8_u10avx512f((__m512d)(v)))
#define SLEEF_TANH(v) ((vd)Sleef_tanhd8_u10avx512f((__m512d)(v)))
#define VSQRT(v) ((vd)_mm512_sqrt_pd((__m512d)(v)))
#define VFMA(a, b, c) ((vd)_mm512_fmadd_pd((__m512d)(a), (__m512d)(b), (__m512d)(c)))
#define MULU32(a, b) ((vq)_mm512_mul_epu32((__m512i)(a), (__m512i)(b)))
#define ALL64(m) (_mm512_movepi64_mask((__m512i)(m)) == 0xff)
#define ANY64(m) (_mm512_movepi64_mask((__m512i)(m)) != 0)
#define ALL32(m) (_mm512_movepi32_mask((__m512i)(m)) == 0xffff)
#define VFMAF(a, b, c) ((wf)_mm512_fmadd_ps((__m512)(a), (__m512)(b), (__m512)(c)))
#define VSQRTF(v) ((wf)_mm512_sqrt_ps((__m512)(v)))
#define WIDEN(f) ((vd)_mm512_cvtps_pd((__m256)(f)))
#define NARROW(d) ((vf)_mm512_cvtpd_ps((__m512d)(d)))
#include "elementwise_kernel.h"

EW_DEFINE(avx512)
