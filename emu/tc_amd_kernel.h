/* AMD's CDNA matrix-core kernels, written once with GCC vector extensions and
   included by tc_amd_avx2.c and tc_amd_avx512.c, each compiled with its own
   -m flags and -ffp-contract=off. The includer includes its instruction set's
   header (lib/isa_*.h) and defines VW (binary32 lanes per register) and
   FLOOR_PD (one register of binary64 lanes rounded toward -inf). Each lane is
   one output; the arithmetic is the portable engine's (emu/tc_model.c:
   exact_dot per block, mfma_ftz, mfma_two_stage), step for step:

   EXACT: a block's addends (its products, exact in binary64, and c) scaled by
     2^(F - E), E the largest exponent among them, and summed in binary64: when
     every scaled addend is an integer the sum is exact (F keeps it below 2^53)
     and its conversion to binary32 is the one RNE rounding; a lane where some
     addend is not an integer is reported in fl.
   FTZ: binary32 products and sums (nearest-even), each flushed as the model
     says; FP16 products (at least 2^-28 once the operands are flushed) and
     their sums (multiples of 2^-48) are never tiny, so only BF16 flushes.
   TWO: the two stages in binary64 on integers: S, the block's products cut
     toward zero at 2^(E_max - F) (split: the even and the odd k's each at
     their own E_max, added at the larger with the other cut toward -inf), is
     below 64 * 2^42; with c at E = max(E_max,
     e_c), T = floor(S at 2^(E - F2 - 1)) + floor(c at 2^(E - F)) is below
     2^50; T cut toward -inf to F2 fraction bits at its own exponent, then
     converted to binary32 (nearest-even). Every step is exact in binary64.
   The driver (tc_amd.c) guarantees finite operands (TWO, EXACT: outputs with an
   inf or NaN operand, or a non-finite initial c, are redone by the portable
   engine) and, for TWO, no product of 2^128 or more. */
#include <stdint.h>
#include <string.h>
#include <math.h>

typedef float vf __attribute__((vector_size(VW * 4)));
typedef int32_t vi __attribute__((vector_size(VW * 4)));
typedef double vd __attribute__((vector_size(VW * 8)));
typedef int64_t vl __attribute__((vector_size(VW * 8)));
typedef double hd __attribute__((vector_size(VW * 4)));   /* one register of binary64 */

#define MR MPEI_TC_AMD_MR
#define SPLI(v) ((vi){} + (int32_t)(v))

static inline __attribute__((always_inline)) vf ldf(const float *p)
{
  vf v;
  memcpy(&v, p, sizeof v);
  return v;
}

static inline __attribute__((always_inline)) vi ldi(const int32_t *p)
{
  vi v;
  memcpy(&v, p, sizeof v);
  return v;
}

static inline __attribute__((always_inline)) vi maxi(vi a, vi b)
{
  const vi m = a > b;
  return (a & m) | (b & ~m);
}

static inline __attribute__((always_inline)) vi mini(vi a, vi b)
{
  const vi m = a < b;
  return (a & m) | (b & ~m);
}

static inline __attribute__((always_inline)) vd tod(vf x)
{
  return __builtin_convertvector(x, vd);
}

/* 2^e, e in binary64's normal range */
static inline __attribute__((always_inline)) vd pow2v(vi e)
{
  return (vd)((__builtin_convertvector(e, vl) + 1023) << 52);
}

static inline __attribute__((always_inline)) vd floorv(vd x)
{
  hd h[2];
  memcpy(h, &x, sizeof x);
  h[0] = FLOOR_PD(h[0]);
  h[1] = FLOOR_PD(h[1]);
  memcpy(&x, h, sizeof x);
  return x;
}

/* toward zero: floor of |x| with x's sign */
static inline __attribute__((always_inline)) vd truncv(vd x)
{
  const vl s = (vl)x & (int64_t)0x8000000000000000;
  return (vd)((vl)floorv((vd)((vl)x & (int64_t)0x7fffffffffffffff)) | s);
}

/* the exponent of a binary32 lane: zero and subnormals give -127, inf 128 */
static inline __attribute__((always_inline)) vi expf32(vf x)
{
  return (((vi)x >> 23) & 0xff) - 127;
}

/* |x| below 2^-126 made a zero of x's sign */
static inline __attribute__((always_inline)) vf ftz(vf x)
{
  const vi u = (vi)x;
  const vi keep = (vi)((u & 0x7fffffff) >= 0x00800000);
  return (vf)(u & (keep | (int32_t)0x80000000));
}

static void k_exact(const float *av, const int32_t *ae, const float *bv, const int32_t *be, float *c, int32_t *fl,
                    long ldc, const mpei_tc_amd_kp *kp)
{
  const int L = kp->L, F = kp->F;
  vf acc[MR];
  vi bad[MR];
  for (int r = 0; r < MR; r++) {
    acc[r] = ldf(c + r * ldc);
    bad[r] = SPLI(0);
  }
  for (int blk = 0; blk < kp->nblk; blk++) {
    const float *a = av + (size_t)blk * L * MR, *b = bv + (size_t)blk * L * VW;
    const int32_t *ea = ae + (size_t)blk * L * MR, *eb = be + (size_t)blk * L * VW;
    for (int r = 0; r < MR; r++) {
      vi E = expf32(acc[r]);
      for (int q = 0; q < L; q++)
        E = maxi(E, ea[q * MR + r] + ldi(eb + q * VW));
      const vd sc = pow2v(F - E);
      vd s = tod(acc[r]) * sc;
      vl lost = (vl)(floorv(s) != s);   /* an integer: floor is itself */
      for (int q = 0; q < L; q++) {
        const vd x = tod(ldf(b + q * VW)) * (double)a[q * MR + r] * sc;
        lost |= (vl)(floorv(x) != x);
        s += x;
      }
      bad[r] |= __builtin_convertvector(lost, vi);
      acc[r] = __builtin_convertvector(s * pow2v(E - F), vf);
    }
  }
  for (int r = 0; r < MR; r++) {
    memcpy(c + r * ldc, &acc[r], sizeof acc[r]);
    const vi f = ldi(fl + r * ldc) | bad[r];
    memcpy(fl + r * ldc, &f, sizeof f);
  }
}

static void k_ftz(const float *av, const float *bv, float *c, long ldc, const mpei_tc_amd_kp *kp)
{
  const int P = kp->L, flush = kp->flush;
  vf acc[MR];
  for (int r = 0; r < MR; r++)
    acc[r] = ldf(c + r * ldc);
  for (int blk = 0; blk < kp->nblk; blk++) {
    const float *a = av + (size_t)blk * P * MR, *b = bv + (size_t)blk * P * VW;
    const vf b0 = ldf(b), b1 = ldf(b + VW);
    if (P == 4) {
      const vf b2 = ldf(b + 2 * VW), b3 = ldf(b + 3 * VW);
      for (int r = 0; r < MR; r++) {
        vf p0 = b0 * a[r], p1 = b1 * a[MR + r], p2 = b2 * a[2 * MR + r], p3 = b3 * a[3 * MR + r];
        if (flush) {
          p0 = ftz(p0); p1 = ftz(p1); p2 = ftz(p2); p3 = ftz(p3);
          acc[r] = ftz(acc[r] + ftz(ftz(p0 + p1) + ftz(p2 + p3)));
        } else {
          acc[r] = acc[r] + ((p0 + p1) + (p2 + p3));
        }
      }
    } else {
      for (int r = 0; r < MR; r++) {
        vf p0 = b0 * a[r], p1 = b1 * a[MR + r];
        if (flush)
          acc[r] = ftz(acc[r] + ftz(ftz(p0) + ftz(p1)));
        else
          acc[r] = acc[r] + (p0 + p1);
      }
    }
  }
  for (int r = 0; r < MR; r++)
    memcpy(c + r * ldc, &acc[r], sizeof acc[r]);
}

/* TWO, stage 1 over the products q0, q0 + qs, ... of a block (all of them, or
   the even or the odd k): the products cut toward zero at 2^(*em - F), an
   integer sum; *em their largest exponent, at least -96 (f32) or -600 (none:
   the sum is 0) */
static inline __attribute__((always_inline)) vd stage1(const float *a, const int32_t *ea, const float *b,
                                                       const int32_t *eb, int r, int q0, int qs,
                                                       const mpei_tc_amd_kp *kp, vi *emp)
{
  const int L = kp->L, F = kp->F;
  vi em = SPLI(-(1 << 22));
  for (int q = q0; q < L; q += qs)
    em = maxi(em, ea[q * MR + r] + ldi(eb + q * VW));
  vd S;
  if (kp->f32) {
    /* operands in [2^-48, 2^63): the products exact in binary32, scaled
       below 2^(F+2) (smaller ones may round, to less than 1), truncated
       by the conversion and summed in int32 */
    em = maxi(em, SPLI(-96));
    const vf sc = (vf)((F - em + 127) << 23);
    vi s32 = SPLI(0);
    for (int q = q0; q < L; q += qs)
      s32 += __builtin_convertvector(ldf(b + q * VW) * a[q * MR + r] * sc, vi);
    S = __builtin_convertvector(s32, vd);
  } else {
    em = maxi(em, SPLI(-600));   /* no product: S = 0 */
    const vd sc = pow2v(F - em);
    S = (vd){};
    for (int q = q0; q < L; q += qs)
      S += truncv(tod(ldf(b + q * VW)) * (double)a[q * MR + r] * sc);
  }
  *emp = em;
  return S;
}

static void k_two(const float *av, const int32_t *ae, const float *bv, const int32_t *be, float *c, long ldc,
                  const mpei_tc_amd_kp *kp)
{
  const int L = kp->L, F = kp->F, F2 = kp->F2;
  const double g2 = ldexp(1.0, F2 + 1 - F);
  vf acc[MR];
  for (int r = 0; r < MR; r++)
    acc[r] = ldf(c + r * ldc);
  for (int blk = 0; blk < kp->nblk; blk++) {
    const float *a = av + (size_t)blk * L * MR, *b = bv + (size_t)blk * L * VW;
    const int32_t *ea = ae + (size_t)blk * L * MR, *eb = be + (size_t)blk * L * VW;
    for (int r = 0; r < MR; r++) {
      /* stage 1: one cut sum, or (split) the even and the odd k's, added at
         the larger exponent with the other cut toward -inf there (a gap
         down to -600 - 2^7: exact scaling, the floor 0 or -1) */
      vi em;
      vd S;
      if (kp->split) {
        vi e0, e1;
        const vd S0 = stage1(a, ea, b, eb, r, 0, 2, kp, &e0), S1 = stage1(a, ea, b, eb, r, 1, 2, kp, &e1);
        em = maxi(e0, e1);
        S = floorv(S0 * pow2v(e0 - em)) + floorv(S1 * pow2v(e1 - em));
      } else {
        S = stage1(a, ea, b, eb, r, 0, 1, kp, &em);
      }
      /* stage 2: at E, S cut to F2 + 1 fraction bits and c to F (toward -inf) */
      const vf cv = acc[r];
      const vi ec = maxi(expf32(cv), SPLI(-126));
      const vi E = maxi(em, ec);
      /* (a gap past 100 leaves 0 or -1 either way: S < 2^48, c's significand < 2) */
      const vd D = floorv(S * pow2v(F2 + 1 - F - mini(E - em, SPLI(100))));
      vd C2 = floorv(tod(cv) * pow2v(F - ec - mini(E - ec, SPLI(100)))) * g2;
      if (kp->split)   /* a c more than F + 1 binades below E adds nothing */
        C2 = (vd)((vl)C2 & ~__builtin_convertvector(ec < E - (F + 1), vl));
      const vd T = D + C2;   /* units of 2^(E - F2 - 1) */
      /* stage 3: T cut toward -inf to F2 fraction bits at its exponent (at least -126) */
      const vi et = __builtin_convertvector((((vl)T >> 52) & 0x7ff) - 1023, vi);
      const vi sh = maxi(et + E - (F2 + 1), SPLI(-126)) - E + 1;
      const vd U = floorv(T * pow2v(-sh)) * pow2v(sh);
      const vf res = __builtin_convertvector(U * pow2v(E - (F2 + 1)), vf);
      const vi inf = ((vi)cv & 0x7fffffff) == 0x7f800000;   /* an infinite c stays */
      acc[r] = (vf)(((vi)cv & inf) | ((vi)res & ~inf));
    }
  }
  for (int r = 0; r < MR; r++)
    memcpy(c + r * ldc, &acc[r], sizeof acc[r]);
}

static void amd_kernel(const float *av, const int32_t *ae, const float *bv, const int32_t *be, float *c, int32_t *fl,
                       long ldc, const mpei_tc_amd_kp *kp)
{
  switch (kp->kind) {
  case MPEI_TC_AMD_EXACT: k_exact(av, ae, bv, be, c, fl, ldc, kp); break;
  case MPEI_TC_AMD_FTZ: k_ftz(av, bv, c, ldc, kp); break;
  default: k_two(av, ae, bv, be, c, ldc, kp); break;
  }
}
