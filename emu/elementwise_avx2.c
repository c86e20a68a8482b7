/* AVX2 SLEEF loops for the element-wise functions (compiled with AVX2_CFLAGS). */
#include "config.h"
#include <immintrin.h>
#include <sleef.h>
#include "elementwise.h"
#define VW 4
#define VLOAD(p) _mm256_loadu_pd(p)
#define VSTORE(p, v) _mm256_storeu_pd((p), (v))
#include "elementwise_kernel.h"

EW_LOOP(mpei_ew_exp_avx2, Sleef_expd4_u10avx2)
EW_LOOP(mpei_ew_log_avx2, Sleef_logd4_u10avx2)
EW_LOOP(mpei_ew_tanh_avx2, Sleef_tanhd4_u10avx2)
