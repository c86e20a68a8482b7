/* The SIMD kernels of the Arm BF16 models (tc_arm_kernel.h, built per instruction set
   by tc_arm_avx2.c and tc_arm_avx512.c; driver and portable engine in tc_arm.c). */
#ifndef MPEI_TC_ARM_KERNEL_API_H
#define MPEI_TC_ARM_KERNEL_API_H
#include "mpei.h"

typedef struct {
  int npairs;     /* BFDotAdd steps: pairs of k (the row of A holds 2 * npairs values) */
  int ebf;        /* FPCR.EBF */
  /* FPCR.EBF = 1 only */
  int mode;       /* MPE_RNE, MPE_RU, MPE_RD or MPE_RZ (RMode) */
  int in_flush;   /* binary32 inputs of each step below 2^-126 read as zeros (FZ, AH = 0; FIZ) */
  int out_flush;  /* results below 2^-126 before rounding become zeros (FZ, AH = 0) */
  int prod32;     /* every product of the call is zero or a binary32 normal (exact in
                     binary32): with RMode RN, binary32 arithmetic rounds each step */
} mpei_tc_arm_kp;

/* MPEI_TC_ARM_MR rows of A (row r at ap + r * lda: 2 * npairs exact bfloat16 values as
   binary32, inputs already flushed as the model reads them) against a panel of VW columns
   of B (bp: element (l, j) at l * VW + j): c holds MPEI_TC_ARM_MR rows of VW accumulators
   (row r at c + r * VW) and is updated in place. With FPCR.EBF = 0 a non-finite result
   may come from a sum of finite addends that binary32 rounds to inf, which round-to-odd
   keeps finite below 2^128: the caller recomputes such outputs with the portable engine. */
typedef void (*mpei_tc_arm_fn)(const float *ap, long lda, const float *bp, float *c, const mpei_tc_arm_kp *kp);
#ifdef HAVE_X86_SIMD
MPEI_HIDDEN void mpei_tc_arm_avx2(const float *ap, long lda, const float *bp, float *c, const mpei_tc_arm_kp *kp);
MPEI_HIDDEN void mpei_tc_arm_avx512(const float *ap, long lda, const float *bp, float *c, const mpei_tc_arm_kp *kp);
#endif
enum { MPEI_TC_ARM_AVX2_VW = 8, MPEI_TC_ARM_AVX512_VW = 16, MPEI_TC_ARM_MR = 4 };
#endif
