/* Internal declarations of the binary64 tensor-core GEMM (emu/tc_f64*.c):
   the FP64 instructions (NVIDIA DMMA, AMD v_mfma_f64), which MMA-Sim models as
   a chain of binary64 fused multiply-adds in ascending k (mpe_tc_model_get(3)). */
#ifndef MPEI_TC_F64_H
#define MPEI_TC_F64_H
#include "tc_impl.h"

/* Packed panels for the fast kernel: A in panels of MR rows, element (k, r)
   at k*MR + r; B in panels of NB = 2*VW columns, (k, j) at k*NB + j. The
   kernel runs c[r][j] = fma(a[k][r], b[k][j], c[r][j]) for k = 0 .. K-1 on a
   tile of MR rows × NB columns (row r at c + r*ldc). */
typedef void (*mpei_tc_f64_fn)(const double *ap, const double *bp, double *c, long ldc, int K);
#ifdef HAVE_X86_SIMD
MPEI_HIDDEN void mpei_tc_f64_avx2(const double *, const double *, double *, long, int);
MPEI_HIDDEN void mpei_tc_f64_avx512(const double *, const double *, double *, long, int);
#endif
enum { MPEI_TC_F64_AVX2_MR = 6, MPEI_TC_F64_AVX2_NB = 8,
       MPEI_TC_F64_AVX512_MR = 12, MPEI_TC_F64_AVX512_NB = 16 };
#endif
