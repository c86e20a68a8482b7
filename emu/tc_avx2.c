/* AVX2 build of the tensor-core kernels (compiled with AVX2_CFLAGS). */
#include "config.h"
#include <immintrin.h>
#include "tc_impl.h"
#define VW 8
#define MR MPEI_TC_AVX2_MR
#define MRF MPEI_TC_AVX2_MRF
#define LO(v) __builtin_shufflevector(v, v, 0, 1, 2, 3)
#define HI(v) __builtin_shufflevector(v, v, 4, 5, 6, 7)
#define JOIN(a, b) __builtin_shufflevector(a, b, 0, 1, 2, 3, 4, 5, 6, 7)
#define RND_PD(x, imm) ((vd)_mm256_round_pd((__m256d)(x), (imm)))
#define MAXI(a, b) ((vi)_mm256_max_epi32((__m256i)(a), (__m256i)(b)))
#define FMA_PS(a, b, c) ((vf)_mm256_fmadd_ps((__m256)(a), (__m256)(b), (__m256)(c)))
#include "tc_kernel.h"

void mpei_tc_blk_avx2(const float *av, const int32_t *ae, const float *bv, const int32_t *be, float *c,
                      long ldc, const mpei_tc_kp *kp)
{
  blk_kernel(av, ae, bv, be, c, ldc, kp);
}

void mpei_tc_blkw_avx2(const float *av, const int32_t *ae, const float *bv, const int32_t *be, float *c,
                      long ldc, const mpei_tc_kp *kp)
{
  blk_kernel_wide(av, ae, bv, be, c, ldc, kp);
}

void mpei_tc_fma_avx2(const float *av, const float *bv, float *c, long ldc, int K)
{
  fma_kernel(av, bv, c, ldc, K);
}
