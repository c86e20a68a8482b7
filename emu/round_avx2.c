/* AVX2 build of the binary32 rounding kernel (compiled with AVX2_CFLAGS). */
#include "config.h"
#include <immintrin.h>
#include "mpei.h"
#define ALL_TRUE(m) (_mm256_movemask_ps((__m256)(m)) == 0xff)
#define VW 8
#define STREAM_BYTES (8u << 20)
#define STREAM_STORE(p, v) _mm256_stream_si256((__m256i *)(void *)(p), (__m256i)(v))
#define STREAM_FENCE() _mm_sfence()
#define MULU32(a, b) ((vq)_mm256_mul_epu32((__m256i)(a), (__m256i)(b)))
#include "round_kernel.h"

unsigned mpei_round32_avx2(float *y, const float *x, size_t n, const mpei_plan32 *pl, uint64_t base)
{
  return kernel_entry(y, x, n, pl, base);
}
