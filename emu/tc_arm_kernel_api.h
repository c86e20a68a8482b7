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

/* One row of A (ap: 2 * npairs exact bfloat16 values as binary32, inputs already flushed
   as the model reads them) against a panel of VW columns of B (bp: element (l, j) at
   l * VW + j): c holds VW accumulators and is updated in place. Returns non-zero when a
   lane met a sum the kernel does not settle (FPCR.EBF = 0: a sum of finite addends that
   binary32 rounds to inf, which round-to-odd may keep finite): the caller recomputes that
   panel's outputs with the portable engine. */
typedef int (*mpei_tc_arm_fn)(const float *ap, const float *bp, float *c, const mpei_tc_arm_kp *kp);
#ifdef HAVE_X86_SIMD
MPEI_HIDDEN int mpei_tc_arm_avx2(const float *ap, const float *bp, float *c, const mpei_tc_arm_kp *kp);
MPEI_HIDDEN int mpei_tc_arm_avx512(const float *ap, const float *bp, float *c, const mpei_tc_arm_kp *kp);
#endif
enum { MPEI_TC_ARM_AVX2_VW = 8, MPEI_TC_ARM_AVX512_VW = 16 };
#endif
