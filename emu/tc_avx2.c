/* AVX2 build of the tensor-core kernels (compiled with AVX2_CFLAGS). */
#include "config.h"
#include "isa_avx2.h"
#include "tc_impl.h"
#define VW 8
#define MR MPEI_TC_AVX2_MR
#define MRF MPEI_TC_AVX2_MRF
#define MRS MPEI_TC_AVX2_MRS
#define MRFS MPEI_TC_AVX2_MRFS
/* lane-wise int16 maximum (AVX-512 BW / AVX2) */
#define TC_MAX_EPI16(a, b) ((__typeof__(a))_mm256_max_epi16((__m256i)(a), (__m256i)(b)))
#include "tc_kernel.h"
#include "tc_epilogue.h"
#include "tc_fp4.h"
#define MR4 MPEI_TC_FP4_AVX2_MR
#define TC_TRUNC_PS(x) ((__typeof__(x))_mm256_round_ps((__m256)(x), _MM_FROUND_TO_ZERO | _MM_FROUND_NO_EXC))
#include "tc_fp4_kernel.h"

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

void mpei_tc_epilogue_avx2(float *c, const float *v, int n, float alpha, float beta, int use_ab)
{
  epilogue_row_body(c, v, n, alpha, beta, use_ab);
}

void mpei_tc_blk_sp_avx2(const float *av, const int32_t *ae, const int32_t *ax, const float *bv,
                        const int32_t *be, long bpitch, float *c, long ldc, const mpei_tc_kp *kp)
{
  blk_sp_kernel(av, ae, ax, bv, be, bpitch, c, ldc, kp);
}

void mpei_tc_blkw_sp_avx2(const float *av, const int32_t *ae, const int32_t *ax, const float *bv,
                         const int32_t *be, long bpitch, float *c, long ldc, const mpei_tc_kp *kp)
{
  blk_sp_kernel_wide(av, ae, ax, bv, be, bpitch, c, ldc, kp);
}

void mpei_tc_fma_sp_avx2(const float *av, const int32_t *ax, const float *bv, float *c, long ldc, int K)
{
  fma_sp_kernel(av, ax, bv, c, ldc, K);
}

void mpei_tc_dec16_avx2(const uint16_t *src, int bf16, float *dst, int n)
{
  pack_dec16(src, bf16, dst, n);
}

int mpei_tc_pack_exp_avx2(const float *v, int32_t *e, size_t n, int pin, int lo, int hi)
{
  return pack_exp(v, e, n, pin, lo, hi);
}

void mpei_tc_fp4_avx2(const float *av, const int32_t *ai, const float *bv, const int32_t *bi, float *c, long ldc,
                      float *ws, const mpei_tc_fp4_kp *kp)
{
  fp4_kernel(av, ai, bv, bi, c, ldc, ws, kp);
}
