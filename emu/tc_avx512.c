/* AVX-512 build of the tensor-core kernels (compiled with AVX512_CFLAGS). */
#include "config.h"
#include <immintrin.h>
#include "tc_impl.h"
#define VW 16
#define MR MPEI_TC_AVX512_MR
#define MRF MPEI_TC_AVX512_MRF
#define LO(v) __builtin_shufflevector(v, v, 0, 1, 2, 3, 4, 5, 6, 7)
#define HI(v) __builtin_shufflevector(v, v, 8, 9, 10, 11, 12, 13, 14, 15)
#define JOIN(a, b) __builtin_shufflevector(a, b, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15)
#define RND_PD(x, imm) ((vd)_mm512_roundscale_pd((__m512d)(x), (imm)))
#define MAXI(a, b) ((vi)_mm512_max_epi32((__m512i)(a), (__m512i)(b)))
#define FMA_PS(a, b, c) ((vf)_mm512_fmadd_ps((__m512)(a), (__m512)(b), (__m512)(c)))
#define AVX512_BLOCK_END 1
#include "tc_kernel.h"

void mpei_tc_blk_avx512(const float *av, const int32_t *ae, const float *bv, const int32_t *be, float *c,
                        long ldc, const mpei_tc_kp *kp)
{
  blk_kernel(av, ae, bv, be, c, ldc, kp);
}

void mpei_tc_blkw_avx512(const float *av, const int32_t *ae, const float *bv, const int32_t *be, float *c,
                      long ldc, const mpei_tc_kp *kp)
{
  blk_kernel_wide(av, ae, bv, be, c, ldc, kp);
}

void mpei_tc_fma_avx512(const float *av, const float *bv, float *c, long ldc, int K)
{
  fma_kernel(av, bv, c, ldc, K);
}
