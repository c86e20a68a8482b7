/* AVX-512 SLEEF loops for the element-wise functions (compiled with AVX512_CFLAGS). */
#include "config.h"
#include <immintrin.h>
#include <sleef.h>
#include "elementwise.h"
#define VW 8
#define VLOAD(p) _mm512_loadu_pd(p)
#define VSTORE(p, v) _mm512_storeu_pd((p), (v))
#include "elementwise_kernel.h"

EW_LOOP(mpei_ew_exp_avx512, Sleef_expd8_u10avx512f)
EW_LOOP(mpei_ew_log_avx512, Sleef_logd8_u10avx512f)
EW_LOOP(mpei_ew_tanh_avx512, Sleef_tanhd8_u10avx512f)
