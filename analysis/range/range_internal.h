/* Range analysis: what the portable code (range.c) and the SIMD kernels
   (range_kernel.h, built for AVX2 and AVX-512) share. A kernel classifies one
   block of binary32 values for one target by comparing |x| bit patterns with
   thresholds found once per target, and sums the squared errors in 16 lanes
   (element i in lane i % 16, lanes folded in a fixed tree) so that every
   kernel, the portable one included, gives the same bits. Private to
   libmpemu-analysis (names mpai_). */
#ifndef MPEMU_RANGE_INTERNAL_H
#define MPEMU_RANGE_INTERNAL_H
#include <stddef.h>
#include <stdint.h>
#include "mpei.h"

#define MPAI_RLANES 16

typedef struct {
  uint32_t u;           /* underflow: 0 < |x| <= u (bit patterns of |x|) */
  uint32_t s;           /* subnormal result: u < |x| <= s */
  uint32_t opos, oneg;  /* overflow: o <= |x| < inf, o by the sign of x */
  double two_f, two_mf; /* Q16 only: 2^F and 2^-F */
  /* the rounding itself (float targets with p <= 24, emin >= -126; round to nearest
     even; exact operations only, whatever the caller's rounding mode): |x| >= 2^emin
     (bits mnb) drops dsh = 24-p bits with the carry trick; below, |x|*k1*k2 = |x|/minsub
     (exact: powers of two, scaling up) is rounded to an integer from its truncation and
     scaled back by minsub = 2^(emin-p+1), exactly */
  uint32_t mnb, dsh;
  float k1, k2, minsub;
  /* the fast fused kernel (blocks whose finite |x| are all below opos and alim):
     x rounded as (x + C) - C, C = max(2^(E+dsh), 2^(emin+dsh)) for |x| in binade
     E, whose bit patterns are (|x| & exponent bits) + cadd and csub; alim keeps
     2C finite (E + dsh <= 253); dsh = 0: x itself */
  uint32_t cadd, csub, alim;
} mpai_rthr32;

typedef struct {
  uint64_t underflow, subnormal, overflow;
  double e2, x2;        /* sums over the block: (round(x)-x)^2 and x^2 */
  double maxrel;        /* in: the running max of |round(x)-x|/|x|; out: raised */
} mpai_rblk;

/* y = round(x) already computed (float targets) */
typedef void (*mpai_rkern_float)(const float *x, const float *y, size_t n, const mpai_rthr32 *t, mpai_rblk *o);
/* Q16, and float targets rounded in the kernel (see mnb above) */
typedef void (*mpai_rkern_q)(const float *x, size_t n, const mpai_rthr32 *t, mpai_rblk *o);
/* float targets rounded in the kernel, on a block whose finite |x| are all below
   t->opos and t->alim: rk_core_fused's results, with o->maxrel in (joined as
   usual) and o->x2 = 0 unless want_x2 (it is the same for every such target) */
typedef void (*mpai_rkern_fast)(const float *x, size_t n, const mpai_rthr32 *t, mpai_rblk *o, int want_x2);
/* The histogram keys: key[i] = E*ncat + c with E the exponent field of x[i] and c
   the number of fthr[j] (j < nthr) at or below its fraction field, or ncat-1 when
   the fraction is 0. Also lowers *mn to the smallest bit pattern of the non-zero
   finite |x|, raises *mxp and *mxn to the largest of the positive and of the
   negative ones (start: 0xffffffff, 0, 0). */
typedef struct {
  int nthr, ncat;
  uint32_t fthr[24];
} mpai_rkeys;
typedef void (*mpai_rkern_keys)(const float *x, size_t n, const mpai_rkeys *k, uint16_t *key, uint32_t *mn,
                                uint32_t *mxp, uint32_t *mxn);

#ifdef HAVE_X86_SIMD
MPEI_HIDDEN void mpai_range_float_avx2(const float *x, const float *y, size_t n, const mpai_rthr32 *t, mpai_rblk *o);
MPEI_HIDDEN void mpai_range_q_avx2(const float *x, size_t n, const mpai_rthr32 *t, mpai_rblk *o);
MPEI_HIDDEN void mpai_range_fused_avx2(const float *x, size_t n, const mpai_rthr32 *t, mpai_rblk *o);
MPEI_HIDDEN void mpai_range_fast_avx2(const float *x, size_t n, const mpai_rthr32 *t, mpai_rblk *o, int want_x2);
MPEI_HIDDEN void mpai_range_fast_avx512(const float *x, size_t n, const mpai_rthr32 *t, mpai_rblk *o, int want_x2);
MPEI_HIDDEN void mpai_range_keys_avx2(const float *x, size_t n, const mpai_rkeys *k, uint16_t *key, uint32_t *mn,
                                     uint32_t *mxp, uint32_t *mxn);
MPEI_HIDDEN void mpai_range_float_avx512(const float *x, const float *y, size_t n, const mpai_rthr32 *t, mpai_rblk *o);
MPEI_HIDDEN void mpai_range_q_avx512(const float *x, size_t n, const mpai_rthr32 *t, mpai_rblk *o);
MPEI_HIDDEN void mpai_range_fused_avx512(const float *x, size_t n, const mpai_rthr32 *t, mpai_rblk *o);
MPEI_HIDDEN void mpai_range_keys_avx512(const float *x, size_t n, const mpai_rkeys *k, uint16_t *key, uint32_t *mn,
                                     uint32_t *mxp, uint32_t *mxn);
#endif

/* the portable kernels (range.c): the oracle of the SIMD ones */
MPEI_HIDDEN void mpai_range_float_ref(const float *x, const float *y, size_t n, const mpai_rthr32 *t, mpai_rblk *o);
MPEI_HIDDEN void mpai_range_q_ref(const float *x, size_t n, const mpai_rthr32 *t, mpai_rblk *o);
MPEI_HIDDEN void mpai_range_fused_ref(const float *x, size_t n, const mpai_rthr32 *t, mpai_rblk *o);
MPEI_HIDDEN void mpai_range_fast_ref(const float *x, size_t n, const mpai_rthr32 *t, mpai_rblk *o, int want_x2);
MPEI_HIDDEN void mpai_range_keys_ref(const float *x, size_t n, const mpai_rkeys *k, uint16_t *key, uint32_t *mn,
                                     uint32_t *mxp, uint32_t *mxn);

/* fold 16 lane sums in the fixed tree every kernel uses */
static inline double mpai_rfold(const double *l)
{
  double t[MPAI_RLANES];
  for (int i = 0; i < MPAI_RLANES; i++)
    t[i] = l[i];
  for (int w = MPAI_RLANES / 2; w >= 1; w /= 2)
    for (int i = 0; i < w; i++)
      t[i] += t[i + w];
  return t[0];
}

/* a kernel's results for one block: counts, the folded lane sums, the max */
static inline void mpai_rblk_set(mpai_rblk *o, uint64_t under, uint64_t sub, uint64_t over, const double *le,
                                 const double *lx, double maxrel)
{
  o->underflow = under;
  o->subnormal = sub;
  o->overflow = over;
  o->e2 = mpai_rfold(le);
  o->x2 = mpai_rfold(lx);
  o->maxrel = maxrel;
}

#endif
