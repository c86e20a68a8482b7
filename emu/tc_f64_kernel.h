/* The binary64 fma-chain kernel, one source for every SIMD width (included by
   tc_f64_avx2.c and tc_f64_avx512.c after they define VW (binary64 lanes per
   register), MR, BCAST_PD(p) (a register of copies of *p) and the instruction
   set's MPEI_FMA_PD). MR rows × 2*VW columns; see tc_f64.h for the layout. */
#include "mpei_vec.h"

static void f64_kernel(const double *ap, const double *bp, double *c, long ldc, int K)
{
  vf64 acc[MR * 2];
#pragma GCC unroll 32
  for (int u = 0; u < MR * 2; u++)
    acc[u] = load_vf64(c + (u / 2) * ldc + (u % 2) * VW);
#pragma GCC unroll 2
  for (int k = 0; k < K; k++) {
    const double *a = ap + (size_t)k * MR, *b = bp + (size_t)k * 2 * VW;
    const vf64 b0 = load_vf64(b), b1 = load_vf64(b + VW);
#pragma GCC unroll 16
    for (int r = 0; r < MR; r++) {
      const vf64 x = (vf64)BCAST_PD(a + r);
      acc[2 * r] = MPEI_FMA_PD(x, b0, acc[2 * r]);
      acc[2 * r + 1] = MPEI_FMA_PD(x, b1, acc[2 * r + 1]);
    }
  }
#pragma GCC unroll 32
  for (int u = 0; u < MR * 2; u++)
    memcpy(c + (u / 2) * ldc + (u % 2) * VW, &acc[u], sizeof acc[u]);
}
