/* AVX-512 build of the binary32 rounding kernel (compiled with AVX512_CFLAGS). */
#include "config.h"
#include <immintrin.h>
#include "mpei.h"
#define ALL_TRUE(m) (_mm512_movepi32_mask((__m512i)(m)) == 0xffff)
#define VW 16
#define STREAM_BYTES (8u << 20)
#define STREAM_STORE(p, v) _mm512_stream_si512((void *)(p), (__m512i)(v))
#define STREAM_FENCE() _mm_sfence()
#define MULU32(a, b) ((vq)_mm512_mul_epu32((__m512i)(a), (__m512i)(b)))
#include "round_kernel.h"

unsigned mpei_round32_avx512(float *y, const float *x, size_t n, const mpei_plan32 *pl, uint64_t base)
{
  return kernel_entry(y, x, n, pl, base);
}
