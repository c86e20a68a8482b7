/* The kernel of the Arm BF16 models (tc_arm_kernel_api.h), written once with GCC vector
   extensions and included by tc_arm_avx2.c (VW = 8) and tc_arm_avx512.c (VW = 16), each
   compiled with its own -m flags and -ffp-contract=off (the error-free sums below must not
   become fmas). The portable engine in tc_arm.c is the oracle.

   Every sum is x + y in binary32 or binary64 round-to-nearest with its exact error
   e = (x + y) - s (Knuth's TwoSum; exact without overflow). From (s, e):
     round to odd at s's precision: when e != 0 and s is even, s moves one unit toward
       x + y (its magnitude up when e has s's sign, down otherwise);
     then binary64 -> binary32 by conversion (round to nearest: right, since 53 >= 24 + 2),
       moved one unit up (RU) or toward zero (RZ) when it lies on the wrong side.
   FPCR.EBF = 0: a product of two bfloat16 values is exact in binary32 unless below 2^-126
   (flushed: such a product lies at least 2^-142 below 2^-126, so binary32 rounding
   cannot carry it up to 2^-126) or at least 2^128 (inf, as binary32 gives); a sum below
   2^-126 is exact in binary32, so its flush is a test of s. A sum of finite addends that
   binary32 rounds to inf (round to odd keeps it finite below 2^128) leaves its output
   non-finite: the caller redoes every non-finite output with the portable engine. */
#include <stdint.h>
#include <string.h>
#include "tc_arm_kernel_api.h"
#include "mpei_vec.h"

#define MIN_NORMAL32 0x00800000

/* |x| below 2^-126 (zeros too): a zero of x's sign */
static inline __attribute__((always_inline)) vf32 flush32(vf32 x)
{
  const vi32 u = (vi32)x, tiny = (u & INT32_MAX) < MIN_NORMAL32;
  return (vf32)((tiny & (u & INT32_MIN)) | (~tiny & u));
}

/* FPAdd_BF16: round to odd, flushed below 2^-126 (an inf from finite addends stays inf:
   the caller redoes non-finite outputs) */
static inline __attribute__((always_inline)) vf32 add_ro(vf32 x, vf32 y)
{
  const vf32 s = x + y, bb = s - x;
  const vf32 e = (x - (s - bb)) + (y - bb);
  vi32 u = (vi32)s;
  const vi32 fin = (u & INT32_MAX) < 0x7f800000;
  const vi32 adj = (vi32)(e != 0) & fin & ((u & 1) == 0);
  u += adj & (1 + ((((vi32)e ^ u) < 0) & -2));   /* +1, or -1 when e and s differ in sign */
  const vi32 tiny = (u & INT32_MAX) < MIN_NORMAL32;
  u = (tiny & (u & INT32_MIN)) | (~tiny & u);
  return (vf32)u;
}

/* s + e (a TwoSum pair) to binary32 under ru (round up) or rz (toward zero), else to
   nearest; flush: a value below 2^-126 before rounding becomes a zero of its sign */
static inline __attribute__((always_inline)) vf32 round64(wf64 s, wf64 e, int ru, int rz, int flush)
{
  wi64 u = (wi64)s;
  const wi64 fin = (u & INT64_MAX) < 0x7ff0000000000000;
  const wi64 adj = (wi64)(e != 0) & fin & ((u & 1) == 0);
  u += adj & (1 + ((((wi64)e ^ u) < 0) & -2));
  const wf64 r = (wf64)u;
  vf32 t = __builtin_convertvector(r, vf32);
  vi32 tu = (vi32)t;
  if (ru) {
    const wf64 td = __builtin_convertvector(t, wf64);
    const vi32 lo = __builtin_convertvector((wi64)(td < r), vi32);
    tu += lo & (1 + ((tu < 0) & -2));   /* one unit up: magnitude up when positive, down when negative */
  } else if (rz) {
    const wf64 td = __builtin_convertvector(t, wf64);
    const wf64 am = (wf64)((wi64)td & INT64_MAX), rm = (wf64)((wi64)r & INT64_MAX);
    tu -= __builtin_convertvector((wi64)(am > rm), vi32) & 1;
  }
  if (flush) {
    const vi32 tiny = __builtin_convertvector((wi64)((wf64)(u & INT64_MAX) < 0x1p-126), vi32);
    tu = (tiny & (tu & INT32_MIN)) | (~tiny & tu);
  }
  return (vf32)tu;
}

/* x + y, both binary32, under the mode (neg: RD as -RU(-x - y)) */
static inline __attribute__((always_inline)) vf32 add_fp(vf32 x, vf32 y, int neg, int ru, int rz, int flush)
{
  wf64 a = __builtin_convertvector(x, wf64), b = __builtin_convertvector(y, wf64);
  if (neg) {
    a = -a;
    b = -b;
  }
  const wf64 s = a + b, bb = s - a;
  const wf64 e = (a - (s - bb)) + (b - bb);
  const vf32 r = round64(s, e, ru, rz, flush);
  return neg ? -r : r;
}

/* MPEI_TC_ARM_MR rows at once (independent chains: the steps' latency overlaps) */
static inline __attribute__((always_inline)) void arm_kernel_t(const float *ap, long lda, const float *bp, float *c,
                                                              const mpei_tc_arm_kp *kp, const int ebf,
                                                              const int mode)
{
  enum { R = MPEI_TC_ARM_MR };
  vf32 acc[R];
  const int neg = mode == MPE_RD, ru = mode == MPE_RU || mode == MPE_RD, rz = mode == MPE_RZ;
  const int fin = kp->in_flush, fout = kp->out_flush;
  const int f32 = mode == MPE_RNE && kp->prod32;
#pragma GCC unroll 4
  for (int r = 0; r < R; r++)
    acc[r] = load_vf32(c + r * VW);
  for (int p = 0; p < kp->npairs; p++) {
    const vf32 b0 = load_vf32(bp + (size_t)2 * p * VW), b1 = load_vf32(bp + (size_t)(2 * p + 1) * VW);
#pragma GCC unroll 4
    for (int r = 0; r < R; r++) {
      const float a0 = ap[r * lda + 2 * p], a1 = ap[r * lda + 2 * p + 1];
      if (!ebf) {
        /* BFMulH twice, FPAdd_BF16 twice */
        const vf32 p0 = flush32(b0 * a0), p1 = flush32(b1 * a1);
        acc[r] = add_ro(acc[r], add_ro(p0, p1));
        continue;
      }
      if (f32) {
        /* exact products: binary32 additions round FPDot's sum and FPAdd's to nearest
           (a sum below 2^-126 is exact, so the flushes are tests of it) */
        vf32 d = b0 * a0 + b1 * a1;
        if (fout)
          d = flush32(d);
        if (fin) {
          d = flush32(d);
          acc[r] = flush32(acc[r]);
        }
        acc[r] = acc[r] + d;
        if (fout)
          acc[r] = flush32(acc[r]);
        continue;
      }
      /* FPDot: both products exact in binary64, one rounding; then FPAdd */
      wf64 q0 = __builtin_convertvector(b0, wf64) * (double)a0, q1 = __builtin_convertvector(b1, wf64) * (double)a1;
      if (neg) {
        q0 = -q0;
        q1 = -q1;
      }
      const wf64 s = q0 + q1, bb = s - q0;
      const wf64 e = (q0 - (s - bb)) + (q1 - bb);
      vf32 d = round64(s, e, ru, rz, fout);
      if (neg)
        d = -d;
      if (fin) {
        d = flush32(d);
        acc[r] = flush32(acc[r]);
      }
      acc[r] = add_fp(acc[r], d, neg, ru, rz, fout);
    }
  }
#pragma GCC unroll 4
  for (int r = 0; r < R; r++)
    memcpy(c + r * VW, &acc[r], sizeof acc[r]);
}

/* the format and mode constants in each copy */
static void arm_kernel(const float *ap, long lda, const float *bp, float *c, const mpei_tc_arm_kp *kp)
{
  if (!kp->ebf)
    arm_kernel_t(ap, lda, bp, c, kp, 0, MPE_RNE);
  else if (kp->mode == MPE_RU)
    arm_kernel_t(ap, lda, bp, c, kp, 1, MPE_RU);
  else if (kp->mode == MPE_RD)
    arm_kernel_t(ap, lda, bp, c, kp, 1, MPE_RD);
  else if (kp->mode == MPE_RZ)
    arm_kernel_t(ap, lda, bp, c, kp, 1, MPE_RZ);
  else
    arm_kernel_t(ap, lda, bp, c, kp, 1, MPE_RNE);
}
