/* AMD's CDNA matrix-core kernels, written once with GCC vector extensions and
   included by tc_amd_avx2.c and tc_amd_avx512.c, each compiled with its own
   -m flags and -ffp-contract=off. The includer includes its instruction set's
   header (lib/isa_*.h) and defines VW (binary32 lanes per register; VWN the
   same as a number), FLOOR_PD and FLOOR_PS (one register of binary64 /
   binary32 lanes rounded toward -inf), FMA_PD (one register of binary64
   fma), MAX_I and MIN_I (of int32 lanes), TC_MAX_EPI16 (of int16 lanes), ANY_I
   (whether some bit of an int32 vector is set), the conversions between half
   a register of int32 or binary32 and one of binary64 (CVT_I2D, CVT_F2D,
   CVT_D2F: nearest-even) and SET1_PD (a register of binary64 lanes equal to
   one value); it may define JOIN (two halves of binary32 lanes as one
   register), FLOORI_PS (binary32 lanes rounded toward -inf, as int32) and
   AMD_FIN512 (TWO's stages 2-3 at CDNA3's widths on AVX-512 instructions:
   fin512). Each lane is
   one output; the arithmetic is the portable engine's (emu/tc_model.c:
   exact_dot per block, mfma_ftz, mfma_two_stage), step for step:

   EXACT: a block's addends (its products, exact in binary64, and c) scaled by
     2^(F - E), E the largest exponent among them, and summed in binary64: when
     every scaled addend is an integer the sum is exact (F keeps it below 2^53)
     and its conversion to binary32 is the one RNE rounding; a lane where some
     addend is not an integer is reported in fl (exact_row). Rows whose
     exponent bounds show every partial sum exact are summed unscaled by
     fma (exact_run).
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
     With every operand in binary32's window (kp->f32), stage 1 runs in
     binary32 and int32 lanes (split: one int32 sum per parity) and stage 2
     on a two-part integer (two_f32); stage 3 of the models' own widths
     (F = 24, F2 = 31) in binary32 and int32 lanes too (cut_rne32).
   The driver (tc_amd.c) guarantees finite operands (TWO, EXACT: outputs with an
   inf or NaN operand, or a non-finite initial c, are redone by the portable
   engine) and, for TWO, no product of 2^128 or more. */
#include <stdint.h>
#include <string.h>
#include <math.h>

#include "mpei_vec.h"   /* vf32 (VW binary32), wf64 and wi64 (VW binary64/int64), vf64 (one register of
                           binary64), hf32 and hi32 (half a register) */
#include "tc_exp16.h"   /* tc_exp16_pass: pass 1 in int16 lanes */
#if VWN == 16
#define LOHALF(v) __builtin_shufflevector(v, v, 0, 1, 2, 3, 4, 5, 6, 7)
#define HIHALF(v) __builtin_shufflevector(v, v, 8, 9, 10, 11, 12, 13, 14, 15)
#ifndef JOIN
#define JOIN(x, y) __builtin_shufflevector(x, y, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15)
#endif
#else
#define LOHALF(v) __builtin_shufflevector(v, v, 0, 1, 2, 3)
#define HIHALF(v) __builtin_shufflevector(v, v, 4, 5, 6, 7)
#ifndef JOIN
#define JOIN(x, y) __builtin_shufflevector(x, y, 0, 1, 2, 3, 4, 5, 6, 7)
#endif
#endif
#ifndef FLOORI_PS   /* binary32 lanes rounded toward -inf, as int32 */
#define FLOORI_PS(x) __builtin_convertvector(FLOOR_PS(x), vi32)
#endif

#define MR MPEI_TC_AMD_MR
#define SPLI(v) ((vi32){} + (int32_t)(v))

static inline __attribute__((always_inline)) vi32 maxi(vi32 a, vi32 b)
{
  return MAX_I(a, b);
}

static inline __attribute__((always_inline)) vi32 mini(vi32 a, vi32 b)
{
  return MIN_I(a, b);
}

static inline __attribute__((always_inline)) wf64 tod(vf32 x)
{
  return __builtin_convertvector(x, wf64);
}

/* 2^e, e in binary64's normal range */
static inline __attribute__((always_inline)) wf64 pow2v(vi32 e)
{
  return (wf64)((__builtin_convertvector(e, wi64) + 1023) << 52);
}

static inline __attribute__((always_inline)) wf64 floorv(wf64 x)
{
  vf64 h[2];
  memcpy(h, &x, sizeof x);
  h[0] = FLOOR_PD(h[0]);
  h[1] = FLOOR_PD(h[1]);
  memcpy(&x, h, sizeof x);
  return x;
}

/* toward zero: floor of |x| with x's sign */
static inline __attribute__((always_inline)) wf64 truncv(wf64 x)
{
  const wi64 s = (wi64)x & (int64_t)0x8000000000000000;
  return (wf64)((wi64)floorv((wf64)((wi64)x & (int64_t)0x7fffffffffffffff)) | s);
}

/* the exponent of a binary32 lane: zero and subnormals give -127, inf 128 */
static inline __attribute__((always_inline)) vi32 expf32(vf32 x)
{
  return (((vi32)x >> 23) & 0xff) - 127;
}

/* |x| below 2^-126 made a zero of x's sign */
static inline __attribute__((always_inline)) vf32 ftz(vf32 x)
{
  const vi32 u = (vi32)x;
  const vi32 keep = (vi32)((u & 0x7fffffff) >= 0x00800000);
  return (vf32)(u & (keep | (int32_t)0x80000000));
}

/* EXACT, one row of one block the slow way: the addends scaled to integers
   below 2^(F+2), a lane where some addend is not one marked in bad */
static inline __attribute__((always_inline)) vf32 exact_row(const float *a, const int32_t *ea, const float *b,
                                                          const int32_t *eb, vf32 acc, vi32 *bad, int r, int L, int F)
{
  vi32 E = expf32(acc);
  for (int q = 0; q < L; q++)
    E = maxi(E, ea[q * MR + r] + load_vi32(eb + q * VW));
  const wf64 sc = pow2v(F - E);
  wf64 s = tod(acc) * sc;
  wi64 lost = (wi64)(floorv(s) != s);   /* an integer: floor is itself */
  for (int q = 0; q < L; q++) {
    const wf64 x = tod(load_vf32(b + q * VW)) * (double)a[q * MR + r] * sc;
    lost |= (wi64)(floorv(x) != x);
    s += x;
  }
  *bad |= __builtin_convertvector(lost, vi32);
  return __builtin_convertvector(s * pow2v(E - F), vf32);
}

/* EXACT. A block's addends are integer multiples of 2^lo below 2^hi, lo and hi
   bounded from the exponents (a value of exponent e in a format of P bits is a
   multiple of 2^(e-P+1) below 2^(e+1); the packers clamp e at the format's
   emin, which keeps both true): the products' bound, a row of A's block plus a
   column of B's (abnd, bbnd: the driver's exact_bounds), and c's, 2^(e_c+1)
   and 2^(max(e_c, -126) - 23). Where (L + 1) * 2^(hi - lo) <= 2^53 in every
   lane of a row, c and the products summed in binary64 (fma: each product
   exact) are exact at every step; otherwise the row runs exact_row. The test
   on c's biased exponent b: b >= hi_p - span + 150 and b <= lo_p + span +
   126 (a zero or subnormal c, b = 0, taken as 2^-150: stricter, never
   looser). */
static inline __attribute__((always_inline)) void exact_run(const float *av, const double *adv, const int32_t *ae,
                                                            const float *bv, const int32_t *be,
                                                            const int32_t *abnd, const int32_t *bbnd, vf32 *acc,
                                                            vi32 *bad, int nblk, int L, int F, int zpos)
{
  vf64 bd[128];   /* B's block in binary64, each row as two halves */
  for (int blk = 0; blk < nblk; blk++) {
    if (zpos)   /* the block's sum starts from +0: a -0 c turns +0, any other c stays */
      for (int r = 0; r < MR; r++)
        acc[r] += 0.0f;
    const float *a = av + (size_t)blk * L * MR, *b = bv + (size_t)blk * L * VW;
    const double *ad = adv + (size_t)blk * L * MR;
    const int32_t *ea = ae + (size_t)blk * L * MR, *eb = be + (size_t)blk * L * VW;
    const int32_t *ab = abnd + (size_t)blk * 3 * MR, *bb = bbnd + (size_t)blk * 3 * VW;
    const vi32 sb = load_vi32(bb), hib = load_vi32(bb + VW), lob = load_vi32(bb + 2 * VW);
#pragma GCC unroll 8
    for (int q = 0; q < L; q++) {
      const vf32 bq = load_vf32(b + q * VW);
      bd[2 * q] = CVT_F2D(LOHALF(bq));
      bd[2 * q + 1] = CVT_F2D(HIHALF(bq));
    }
    int wide[MR];
#pragma GCC unroll 4
    for (int r = 0; r < MR; r++) {
      const vi32 b = ((vi32)acc[r] >> 23) & 0xff;
      wide[r] = ANY_I((vi32)(sb + ab[r] > 0) | (vi32)(b < hib + ab[MR + r]) | (vi32)(b > lob + ab[2 * MR + r]));
    }
#pragma GCC unroll 4
    for (int r = 0; r < MR; r++) {
      if (wide[r]) {
        acc[r] = exact_row(a, ea, b, eb, acc[r], &bad[r], r, L, F);
        continue;
      }
      vf64 s0 = CVT_F2D(LOHALF(acc[r])), s1 = CVT_F2D(HIHALF(acc[r]));
#pragma GCC unroll 8
      for (int q = 0; q < L; q++) {
        const vf64 x = SET1_PD(ad[q * MR + r]);   /* (a -0 stays) */
        s0 = FMA_PD(bd[2 * q], x, s0);
        s1 = FMA_PD(bd[2 * q + 1], x, s1);
      }
      acc[r] = JOIN(CVT_D2F(s0), CVT_D2F(s1));
    }
  }
}

static void k_exact(const float *av, const int32_t *ae, const float *bv, const int32_t *be, float *c, int32_t *fl,
                    long ldc, const mpei_tc_amd_kp *kp)
{
  const int L = kp->L, F = kp->F;
  vf32 acc[MR];
  vi32 bad[MR];
  for (int r = 0; r < MR; r++) {
    acc[r] = load_vf32(c + r * ldc);
    bad[r] = SPLI(0);
  }
  if (L == 4)   /* the models' block lengths get their own unrolled copies */
    exact_run(av, kp->ad, ae, bv, be, kp->abnd, kp->bbnd, acc, bad, kp->nblk, 4, F, kp->zpos);
  else if (L == 2)
    exact_run(av, kp->ad, ae, bv, be, kp->abnd, kp->bbnd, acc, bad, kp->nblk, 2, F, kp->zpos);
  else
    exact_run(av, kp->ad, ae, bv, be, kp->abnd, kp->bbnd, acc, bad, kp->nblk, L, F, kp->zpos);
  for (int r = 0; r < MR; r++) {
    memcpy(c + r * ldc, &acc[r], sizeof acc[r]);
    if (ANY_I(bad[r])) {
      const vi32 f = load_vi32(fl + r * ldc) | bad[r];
      memcpy(fl + r * ldc, &f, sizeof f);
    }
  }
}

static void k_ftz(const float *av, const float *bv, float *c, long ldc, const mpei_tc_amd_kp *kp)
{
  const int P = kp->L, flush = kp->flush;
  vf32 acc[MR];
  for (int r = 0; r < MR; r++)
    acc[r] = load_vf32(c + r * ldc);
  for (int blk = 0; blk < kp->nblk; blk++) {
    const float *a = av + (size_t)blk * P * MR, *b = bv + (size_t)blk * P * VW;
    const vf32 b0 = load_vf32(b), b1 = load_vf32(b + VW);
    if (P == 4) {
      const vf32 b2 = load_vf32(b + 2 * VW), b3 = load_vf32(b + 3 * VW);
      for (int r = 0; r < MR; r++) {
        vf32 p0 = b0 * a[r], p1 = b1 * a[MR + r], p2 = b2 * a[2 * MR + r], p3 = b3 * a[3 * MR + r];
        if (flush) {
          p0 = ftz(p0); p1 = ftz(p1); p2 = ftz(p2); p3 = ftz(p3);
          acc[r] = ftz(acc[r] + ftz(ftz(p0 + p1) + ftz(p2 + p3)));
        } else {
          acc[r] = acc[r] + ((p0 + p1) + (p2 + p3));
        }
      }
    } else {
      for (int r = 0; r < MR; r++) {
        vf32 p0 = b0 * a[r], p1 = b1 * a[MR + r];
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
   integer sum; *em their largest exponent, or -600 where there is no product
   (the sum is 0, and c alone sets the block's exponent) */
static inline __attribute__((always_inline)) wf64 stage1(const float *a, const int32_t *ea, const float *b,
                                                       const int32_t *eb, int r, int q0, int qs,
                                                       const mpei_tc_amd_kp *kp, vi32 *emp)
{
  const int L = kp->L, F = kp->F;
  vi32 em = SPLI(-(1 << 22));
  for (int q = q0; q < L; q += qs)
    em = maxi(em, ea[q * MR + r] + load_vi32(eb + q * VW));
  em = maxi(em, SPLI(-600));   /* no product: S = 0 */
  wf64 S;
  if (kp->f32) {
    /* operands in [2^-48, 2^63): the products exact in binary32, scaled
       below 2^(F+2) (smaller ones may round, to less than 1), truncated
       by the conversion and summed in int32 */
    const vf32 sc = (vf32)((F - maxi(em, SPLI(-96)) + 127) << 23);   /* every product is at least 2^-96 */
    vi32 s32 = SPLI(0);
    for (int q = q0; q < L; q += qs)
      s32 += __builtin_convertvector(load_vf32(b + q * VW) * a[q * MR + r] * sc, vi32);
    S = __builtin_convertvector(s32, wf64);
  } else {
    const wf64 sc = pow2v(F - em);
    S = (wf64){};
    for (int q = q0; q < L; q += qs)
      S += truncv(tod(load_vf32(b + q * VW)) * (double)a[q * MR + r] * sc);
  }
  *emp = em;
  return S;
}


/* X * 2^g + lo (exact in binary64) cut toward -inf to F2 + 1 significant
   bits on its encoding, then rounded to binary32 (nearest-even) */
static inline __attribute__((always_inline)) hf32 cut_f32(hi32 X, hi32 lo, double two_g, int F2)
{
  vf64 T = FMA_PD(CVT_I2D(X), SET1_PD(two_g), CVT_I2D(lo));
  const int64_t m = ((int64_t)1 << (52 - F2)) - 1;
  T = (vf64)(((vi64)T + ((vi64)(T < 0) & m)) & ~m);
  return CVT_D2F(T);
}

/* cut_f32 for CDNA3's own widths (F = 24, F2 = 31: g = 8) in binary32 and
   int32 lanes, on the whole register: T = X * 2^8 + lo, |X| < 2^31, cut
   toward -inf to 32 significant bits and rounded to 24 (nearest-even), the
   result in units of 2^E (cut_f32's times 2^-(F2+1)). Y = X, or |X| - 1 where
   X < 0, has 8 bits fewer than T, or than |T| - 1 (the same count but where
   |T| is a power of two, which any cut leaves as it is): the cut is at 2^s,
   s = max(bits(Y) - 24, 0) <= 7, bits(Y) from the exponent of the binary32
   Y / 2^8 (exact, below 2^23). floor(T / 2^s) = Qh * 2^8 + Ql with Qh =
   floor(X / 2^s), |Qh| <= 2^24, and Ql in [0, 2^8), both exact in binary32:
   their binary32 sum is the one rounding, then scaled by 2^(s - 32) (exact:
   the sum is zero or at least 1). */
static inline __attribute__((always_inline)) vf32 cut_rne32(vi32 X, vi32 lo)
{
  const vi32 Y = X ^ (X >> 31);
  const vi32 s = maxi(((vi32)__builtin_convertvector(Y >> 8, vf32) >> 23) - 142, SPLI(0));
  const vf32 qh = __builtin_convertvector(X >> s, vf32);
  const vi32 ql = (vi32)(((vu32)X << (vu32)(8 - s)) | ((vu32)lo >> (vu32)s)) & 255;
  return (qh * 256.0f + __builtin_convertvector(ql, vf32)) * (vf32)((s + 127 - 32) << 23);
}

/* TWO with every operand zero or in [2^-48, 2^63) (kp->f32), one row of one
   block; em: the largest exponent sum of its products (none: below -96).
   Stage 1: the products exact in binary32, scaled below 2^(F+2) (smaller
   ones may round, to less than 1), truncated by the conversion, summed in
   int32: S at 2^(em - F). Stage 2 at E = max(em, e_c) >= -96, in units of
   2^(E - F2 - 1) as the two-part integer X * 2^g + Lo (g = F2 + 1 - F, Lo <
   2^g): X = floor(S at 2^(E - F)) + floor(c at 2^(E - F)), Lo the g bits of
   floor(S at 2^(E - F2 - 1)) below them; T = X * 2^g + Lo is exact in
   binary64 (the driver keeps |X| < 2^31, g <= 16). Stage 3: T cut toward -inf
   to F2 + 1 significant bits on its binary64 encoding (T's exponent is at
   least -126 wherever the cut drops bits), converted to binary32
   (nearest-even) and scaled by 2^(E - F2 - 1) in two exact steps (a result
   below 2^-126 is T < 4 times 2^(E - F2 - 1) >= 2^-128: representable). A
   block without products leaves c (-0 made +0), an infinite c stays (a NaN
   c, whose output the driver redoes, too). */
static inline __attribute__((always_inline)) vf32 two_f32_fin(vi32 S, vi32 em, vi32 keep, vf32 cv, int F, int F2,
                                                            double two_g, float two_f2, int split)
{
  const int g = F2 + 1 - F;
  const vf32 cf = (vf32)((vi32)cv & ~keep);   /* an infinite or NaN c out of the arithmetic */
  const vi32 ec = maxi(expf32(cf), SPLI(-126)), E = maxi(em, ec), d = E - em;
  /* c at 2^(E - F), scaled to no less than 1/2 (where c lies below 2^(E - F),
     0 or -1 either way): no underflow */
  vi32 C = FLOORI_PS(cf * (vf32)((maxi(F - E, -1 - ec) + 127) << 23));
  if (split)   /* a c more than F + 1 binades below E adds nothing */
    C &= ~(vi32)(ec < E - (F + 1));
  const vi32 X = (S >> mini(d, SPLI(31))) + C;
  /* Lo: floor(S * 2^(g - d)) mod 2^g, S shifted left by g - d or right by d - g */
  const vi32 t = d - g, cr = maxi(t, SPLI(0)), cl = cr - t;
  const vi32 lo = ((vi32)((vu32)S << (vu32)cl) >> mini(cr, SPLI(31))) & ((1 << g) - 1);
  const vf32 f = F == 24 && F2 == 31 ? cut_rne32(X, lo)
                                   : JOIN(cut_f32(LOHALF(X), LOHALF(lo), two_g, F2),
                                          cut_f32(HIHALF(X), HIHALF(lo), two_g, F2)) * two_f2;
  const vf32 res = f * (vf32)((E + 127) << 23);
  return (vf32)(((vi32)(cv + 0.0f) & keep) | ((vi32)res & ~keep));
}

#ifdef AMD_FIN512
/* two_f32_fin at CDNA3's own widths (F = 24, F2 = 31) without split, on
   AVX-512, for |S| < 2^29 (L <= 8). The same three stages with the same
   quantities, X = floor(S at 2^(E - 24)) + floor(c at 2^(E - 24)) and lo
   the next 8 bits of S, the result RNE24(T') * 2^(E - 32) where T = X * 2^8
   + lo and T' is T cut toward -inf to 32 significant bits, found without
   locating the cut:
   - |X| <= 2^24: X is exact in binary32 and T has at most 32 bits (-2^24
     included: T > -2^32), so T' = T and one fma rounds it;
   - |X| > 2^24: T has b + 8 > 32 bits (b = bits(|X|)), the cut at 2^(b - 24)
     lies in lo (below T's rounding point), and T' = X * 2^8 + lo' with lo' =
     lo with its b - 24 low bits cleared. lo' is then only a sticky bit:
     RNE24(T') = RNE24(2X + (lo' != 0)) * 2^7, since 2X has at least 26 bits,
     so every midpoint of the rounding is even and 2X + 1 stands for every
     value strictly between 2X and 2X + 2. |X| < 2^30 keeps 2X + 1 in int32.
     lo' != 0 is lo >= 2^(b - 24), lo * 2^23 >= 2^(b - 1), on binary32
     encodings. For X = -2^m (where bits(|X| - 1) = m would be exact) the
     sticky bit cannot matter: 2X is representable and 2X + 1 is no midpoint
     (m >= 25).
   C: c * 2^(24 - E) rounded toward -inf (exact but where it underflows, then
   below 1 in magnitude: a negative one stays below 0) and converted toward
   -inf. getexp(c): zeros give -inf, which converts to INT_MIN, and E =
   max(em, ec) >= -96 takes em. noprod: the lanes whose block has no product
   (em clamped); they and those of an infinite or NaN c keep c (-0 made +0). */
#define FIN512(F, F2, split, L) ((F) == 24 && (F2) == 31 && !(split) && (L) <= 8)
static inline __attribute__((always_inline)) vf32 fin512(vi32 S, vi32 em, __mmask16 noprod, vf32 cv)
{
  enum { rd = _MM_FROUND_TO_NEG_INF | _MM_FROUND_NO_EXC, rn = _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC };   /* constants, as clang requires */
  const __m512i s = (__m512i)S, e = (__m512i)em;
  const __m512 c = (__m512)cv;
  const __m512i E = _mm512_max_epi32(e, _mm512_cvtps_epi32(_mm512_getexp_ps(c)));
  const __m512i d = _mm512_sub_epi32(E, e);
  const __m512 sc = _mm512_castsi512_ps(_mm512_slli_epi32(_mm512_sub_epi32(_mm512_set1_epi32(151), E), 23));
  const __m512i C = _mm512_cvt_roundps_epi32(_mm512_mul_round_ps(c, sc, rd), rd);
  const __m512i X = _mm512_add_epi32(_mm512_srav_epi32(s, d), C);   /* counts of 32 or more fill with the sign */
  /* lo: S << (8 - d) for d <= 8 (a count past 31 gives 0), S >> (d - 8) for d > 8 */
  const __m512i eight = _mm512_set1_epi32(8);
  __m512i w = _mm512_sllv_epi32(s, _mm512_sub_epi32(eight, d));
  w = _mm512_mask_srav_epi32(w, _mm512_cmpgt_epi32_mask(d, eight), s, _mm512_sub_epi32(d, eight));
  const __m512i lo = _mm512_and_si512(w, _mm512_set1_epi32(255));
  const __m512 lof = _mm512_cvtepi32_ps(lo);
  const __m512i xa = _mm512_abs_epi32(X);
  const __m512 fa = _mm512_fmadd_round_ps(_mm512_cvtepi32_ps(X), _mm512_set1_ps(256.0f), lof, rn);
  const __m512i top = _mm512_and_si512(_mm512_castps_si512(_mm512_cvt_roundepi32_ps(xa, _MM_FROUND_TO_ZERO |
                                                                                       _MM_FROUND_NO_EXC)),
                                       _mm512_set1_epi32(0x7f800000));
  const __mmask16 sticky = _mm512_cmpge_epi32_mask(_mm512_add_epi32(_mm512_castps_si512(lof),
                                                                    _mm512_set1_epi32(23 << 23)), top);
  const __m512i X2 = _mm512_add_epi32(X, X);
  const __m512 fb = _mm512_cvt_roundepi32_ps(_mm512_mask_or_epi32(X2, sticky, X2, _mm512_set1_epi32(1)), rn);
  /* units of 2^(E - 25) (its encoding 253 << 23 less sc's): 2^(E - 25) >=
     2^-121 is normal, and a result below 2^-126 is a multiple of 2^(E - 32)
     >= 2^-128: the product is exact */
  const __m512 f = _mm512_mask_mul_ps(fb, _mm512_cmple_epi32_mask(xa, _mm512_set1_epi32(1 << 24)), fa,
                                      _mm512_set1_ps(0x1p-7f));
  const __m512 res = _mm512_mul_ps(f, _mm512_castsi512_ps(_mm512_sub_epi32(_mm512_set1_epi32(253 << 23),
                                                                           _mm512_castps_si512(sc))));
  const __mmask16 nf = _mm512_fpclass_ps_mask(c, 0x99);   /* 0x99: NaN or inf */
  if (!_kortestz_mask16_u8(noprod, nf))   /* rare: no product, or c infinite or NaN */
    return (vf32)_mm512_mask_blend_ps(_kor_mask16(noprod, nf), res, _mm512_add_ps(c, _mm512_setzero_ps()));
  return (vf32)res;
}

#endif

/* two_f32 on nblk blocks of L products, the MR rows side by side; split: the
   even and the odd k's each cut at their own largest exponent e_0, e_1 (int32
   sums S_0, S_1), S = floor(S_0 at 2^(em - F)) + floor(S_1 at 2^(em - F)),
   em = max(e_0, e_1) (arithmetic shifts; a gap of 31 or more leaves 0 or -1
   either way: |S_i| < 2^31), and c more than F + 1 binades below E dropped */
static inline __attribute__((always_inline)) void two_f32(const float *av, const int32_t *ae, const float *bv,
                                                          const int32_t *be, const int16_t *a16, const int16_t *b16,
                                                          vf32 *acc, int nblk, int L, int F, int F2, int split)
{
  const double two_g = ldexp(1.0, F2 + 1 - F);
  const float two_f2 = ldexpf(1.0f, -(F2 + 1));
  const int ng = split ? 2 : 1;
  for (int blk = 0; blk < nblk; blk++) {
    const float *a = av + (size_t)blk * L * MR, *b = bv + (size_t)blk * L * VW;
    const int32_t *ea = ae + (size_t)blk * L * MR, *eb = be + (size_t)blk * L * VW;
    vi32 eg[2][MR], em[MR], Sg[2][MR], S[MR], keep[MR];
    vf32 sc[2][MR];
#pragma GCC unroll 4
    for (int r = 0; r < MR; r++)
      eg[0][r] = eg[1][r] = SPLI(-(1 << 22));
    if (!split && a16)
      tc_exp16_pass(a16 + (size_t)blk * L * MR, b16 + (size_t)blk * 2 * L * VW, L, MR, 0, eg[0]);
    else
#pragma GCC unroll 16
      for (int q = 0; q < L; q++) {
        const vi32 e = load_vi32(eb + q * VW);
#pragma GCC unroll 4
        for (int r = 0; r < MR; r++)
          eg[q % ng][r] = maxi(eg[q % ng][r], ea[q * MR + r] + e);
      }
#ifdef AMD_FIN512
    __mmask16 kk[MR];
#endif
#pragma GCC unroll 4
    for (int r = 0; r < MR; r++) {
      em[r] = split ? maxi(eg[0][r], eg[1][r]) : eg[0][r];
      /* no product, or c infinite (or NaN, an output the driver redoes): the block leaves c */
#ifdef AMD_FIN512
      if (FIN512(F, F2, split, L)) {
        /* fin512 replaces these lanes whatever their sum: no clamp (a scale
           out of range multiplies only zero products) */
        kk[r] = _mm512_cmplt_epi32_mask((__m512i)em[r], _mm512_set1_epi32(-96));
        sc[0][r] = (vf32)((vu32)(F + 127 - em[r]) << 23);
        Sg[0][r] = SPLI(0);
        continue;
      }
#endif
      keep[r] = (em[r] < -96) | (((vi32)acc[r] & 0x7fffffff) > 0x7f7fffff);
      em[r] = maxi(em[r], SPLI(-96));
      for (int g = 0; g < ng; g++) {
        eg[g][r] = maxi(eg[g][r], SPLI(-96));
        sc[g][r] = (vf32)((F - eg[g][r] + 127) << 23);
        Sg[g][r] = SPLI(0);
      }
    }
#pragma GCC unroll 16
    for (int q = 0; q < L; q++) {
      const vf32 x = load_vf32(b + q * VW);
#pragma GCC unroll 4
      for (int r = 0; r < MR; r++)
        Sg[q % ng][r] += __builtin_convertvector(x * a[q * MR + r] * sc[q % ng][r], vi32);
    }
#pragma GCC unroll 4
    for (int r = 0; r < MR; r++) {
      S[r] = Sg[0][r];
      if (split)
        S[r] = (Sg[0][r] >> mini(em[r] - eg[0][r], SPLI(31))) + (Sg[1][r] >> mini(em[r] - eg[1][r], SPLI(31)));
#ifdef AMD_FIN512
      if (FIN512(F, F2, split, L)) {
        acc[r] = fin512(S[r], em[r], kk[r], acc[r]);
        continue;
      }
#endif
      acc[r] = two_f32_fin(S[r], em[r], keep[r], acc[r], F, F2, two_g, two_f2, split);
    }
  }
}

static void k_two(const float *av, const int32_t *ae, const float *bv, const int32_t *be, float *c, long ldc,
                  const mpei_tc_amd_kp *kp)
{
  const int L = kp->L, F = kp->F, F2 = kp->F2;
  const double g2 = ldexp(1.0, F2 + 1 - F);
  vf32 acc[MR];
  for (int r = 0; r < MR; r++)
    acc[r] = load_vf32(c + r * ldc);
  /* binary32 lanes and a two-part integer (one cut sum); the split sums, and
     operands outside the binary32 window, in binary64 lanes below */
  const int fast = kp->f32;
  if (fast) {   /* the models' shapes get their own unrolled copies */
    const int hw = F == 24 && F2 == 31;
    if (kp->split && hw && L == 16)
      two_f32(av, ae, bv, be, kp->a16, kp->b16, acc, kp->nblk, 16, 24, 31, 1);
    else if (kp->split)
      two_f32(av, ae, bv, be, kp->a16, kp->b16, acc, kp->nblk, L, F, F2, 1);
    else if (hw && L == 8)
      two_f32(av, ae, bv, be, kp->a16, kp->b16, acc, kp->nblk, 8, 24, 31, 0);
    else if (hw && L == 4)
      two_f32(av, ae, bv, be, kp->a16, kp->b16, acc, kp->nblk, 4, 24, 31, 0);
    else
      two_f32(av, ae, bv, be, kp->a16, kp->b16, acc, kp->nblk, L, F, F2, 0);
  }
  for (int blk = 0; blk < kp->nblk && !fast; blk++) {
    const float *a = av + (size_t)blk * L * MR, *b = bv + (size_t)blk * L * VW;
    const int32_t *ea = ae + (size_t)blk * L * MR, *eb = be + (size_t)blk * L * VW;
    for (int r = 0; r < MR; r++) {
      /* stage 1: one cut sum, or (split) the even and the odd k's, added at
         the larger exponent with the other cut toward -inf there (a gap
         down to -600 - 2^7: exact scaling, the floor 0 or -1) */
      vi32 em;
      wf64 S;
      if (kp->split) {
        vi32 e0, e1;
        const wf64 S0 = stage1(a, ea, b, eb, r, 0, 2, kp, &e0), S1 = stage1(a, ea, b, eb, r, 1, 2, kp, &e1);
        em = maxi(e0, e1);
        S = floorv(S0 * pow2v(e0 - em)) + floorv(S1 * pow2v(e1 - em));
      } else {
        S = stage1(a, ea, b, eb, r, 0, 1, kp, &em);
      }
      /* stage 2: at E, S cut to F2 + 1 fraction bits and c to F (toward -inf) */
      const vf32 cv = acc[r];
      const vi32 ec = maxi(expf32(cv), SPLI(-126));
      const vi32 E = maxi(em, ec);
      /* (a gap past 100 leaves 0 or -1 either way: S < 2^48, c's significand < 2) */
      const wf64 D = floorv(S * pow2v(F2 + 1 - F - mini(E - em, SPLI(100))));
      wf64 C2 = floorv(tod(cv) * pow2v(F - ec - mini(E - ec, SPLI(100)))) * g2;
      if (kp->split)   /* a c more than F + 1 binades below E adds nothing */
        C2 = (wf64)((wi64)C2 & ~__builtin_convertvector(ec < E - (F + 1), wi64));
      const wf64 T = D + C2;   /* units of 2^(E - F2 - 1) */
      /* stage 3: T cut toward -inf to F2 fraction bits at its exponent (at least -126) */
      const vi32 et = __builtin_convertvector((((wi64)T >> 52) & 0x7ff) - 1023, vi32);
      const vi32 sh = maxi(et + E - (F2 + 1), SPLI(-126)) - E + 1;
      const wf64 U = floorv(T * pow2v(-sh)) * pow2v(sh);
      const vf32 res = __builtin_convertvector(U * pow2v(E - (F2 + 1)), vf32);
      const vi32 inf = ((vi32)cv & 0x7fffffff) == 0x7f800000;   /* an infinite c stays */
      acc[r] = (vf32)(((vi32)cv & inf) | ((vi32)res & ~inf));
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
