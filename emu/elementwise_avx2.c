/* AVX2 build of the element-wise kernels (compiled with AVX2_CFLAGS). */
#include "config.h"
#include <immintrin.h>
#include <sleef.h>
#include "elementwise.h"
#define VW 4
#define SLEEF_EXP(v) ((vd)Sleef_expd4_u10avx2((__m256d)(v)))
#define SLEEF_LOG(v) ((vd)Sleef_logd4_u10avx2((__m256d)(v)))
#define SLEEF_TANH(v) ((vd)Sleef_tanhd4_u10avx2((__m256d)(v)))
#define VSQRT(v) ((vd)_mm256_sqrt_pd((__m256d)(v)))
#define VFMA(a, b, c) ((vd)_mm256_fmadd_pd((__m256d)(a), (__m256d)(b), (__m256d)(c)))
#define MULU32(a, b) ((vq)_mm256_mul_epu32((__m256i)(a), (__m256i)(b)))
#define ALL64(m) (_mm256_movemask_pd((__m256d)(m)) == 0xf)
#define ANY64(m) (_mm256_movemask_pd((__m256d)(m)) != 0)
#define ALL32(m) (_mm256_movemask_ps((__m256)(m)) == 0xff)
#define VFMAF(a, b, c) ((wf)_mm256_fmadd_ps((__m256)(a), (__m256)(b), (__m256)(c)))
#define VSQRTF(v) ((wf)_mm256_sqrt_ps((__m256)(v)))
#define WIDEN(f) ((vd)_mm256_cvtps_pd((__m128)(f)))
#define NARROW(d) ((vf)_mm256_cvtpd_ps((__m256d)(d)))
#include "elementwise_kernel.h"

EW_DEFINE(avx2)
