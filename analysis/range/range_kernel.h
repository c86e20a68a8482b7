/* The range-analysis kernels, written once with GCC vector extensions and
   included by range_avx2.c (VW = 8) and range_avx512.c (VW = 16), each compiled
   with its own -m flags; RK_LOW/RK_HIGH take the halves of a vector. The
   portable oracle is in range.c; the results are the same bits:
   - counts: |x| bit patterns against the target's thresholds;
   - sums of (round(x)-x)^2 and x^2: element i in lane i % 16, folded by mpai_rfold
     (the squares are exact: round(x)-x has at most 24 significant bits);
   - the largest |round(x)-x|/|x|: per lane the best pair (ad, ax), compared by
     cross products ad*bx > bd*ax (exact: 24-bit factors), one division per lane
     at the end; division rounds monotonically, so this is the max of the quotients.
   Needs an instruction-set header (lib/isa_*.h) included before it. */
#include <stdint.h>
#include <float.h>
#include <string.h>
#include "mpei_round_core.h"
#include "mpei_vec.h"

#define VW (MPEI_VBYTES / 4)
#define RK_LOW(v) MPEI_HALF_LO(v)
#define RK_HIGH(v) MPEI_HALF_HI(v)
#define RK_CVTD(v) ((vf64)MPEI_CVT_PS_PD(v))
#define RK_CVTL(v) ((vi64)MPEI_CVT_EPI32_EPI64(v))
#define RK_NAME(stem) MPEI_ISA_FN(mpai_range_##stem)

/* VW binary32 lanes per vector (8: AVX2, 16: AVX-512), VW/2 binary64 lanes;
   an iteration takes 16 values as NV = 16/VW float vectors, 2*NV double halves */
#define RK_NV (16 / VW)

/* 16 values from p into NV vectors; the tail padded with zeros (which count nowhere) */
static inline __attribute__((always_inline)) void rk_load(vf32 *v, const float *p, size_t left)
{
  if (left >= 16) {
    memcpy(v, p, 64);
  } else {
    float t[16] = { 0 };
    memcpy(t, p, left * sizeof *p);
    memcpy(v, t, 64);
  }
}

/* As rk_load, but a whole block straight from p one vector at a time: a copy
   through a stack array was stored in 16-byte pieces and loaded whole, which
   store forwarding cannot serve */
static inline __attribute__((always_inline)) void rk_load_direct(vf32 *v, const float *p, size_t left)
{
  if (left >= 16) {
#pragma GCC unroll 2
    for (int h = 0; h < RK_NV; h++)
      memcpy(&v[h], p + h * VW, sizeof v[h]);
  } else {
    rk_load(v, p, left);
  }
}

/* the running sums of 8 (AVX-512) or 4 (AVX2) lanes, and the best (|d|, |x|) pairs:
   the max does not depend on the order, so AVX-512 keeps two sets of pairs, one for
   even and one for odd iterations, to halve the chain of dependent instructions */
struct rk_acc { vf64 e2, x2; };
struct rk_max { vf64 bd, bx; };

static inline __attribute__((always_inline)) void rk_half(struct rk_acc *A, struct rk_max *M, vf64 xd, vf64 yd,
                                                         vi64 okl)
{
  vf64 d = (vf64)((vi64)(yd - xd) & okl), xs = (vf64)((vi64)xd & okl);
  A->e2 += d * d;
  A->x2 += xs * xs;
  vf64 ad = (vf64)((vi64)d & 0x7fffffffffffffffll);
  vf64 ax = (vf64)SEL(vi64, okl, (vf64)((vi64)xd & 0x7fffffffffffffffll), SPLAT(vf64, 1.0));
  vi64 better = ad * M->bx > M->bd * ax;
  M->bd = (vf64)SEL(vi64, better, ad, M->bd);
  M->bx = (vf64)SEL(vi64, better, ax, M->bx);
}

/* round to nearest even to an integer, exactly, whatever the rounding mode: truncate
   (after clamping; only lanes with |v| <= 32768.5 count), then step away from 0 when
   the rest is over 1/2, or 1/2 with an odd integer part */
static inline __attribute__((always_inline)) vf64 rk_rne(vf64 v)
{
  const vf64 LIM = SPLAT(vf64, 65536.0);
  v = (vf64)SEL(vi64, v > LIM, LIM, v);
  v = (vf64)SEL(vi64, v < -LIM, -LIM, v);
  hi32 ti = __builtin_convertvector(v, hi32);
  vf64 t = __builtin_convertvector(ti, vf64), f = v - t;
  vf64 af = (vf64)((vi64)f & 0x7fffffffffffffffll);
  vi64 odd = (RK_CVTL(ti) & 1) != 0;
  vi64 up = MPEI_ROUND_UP(MPEI_RC_RNE, af != SPLAT(vf64, 0.0), af > SPLAT(vf64, 0.5), af == SPLAT(vf64, 0.5), odd,
                           0, 0, 0);
  vf64 step = (vf64)SEL(vi64, f < SPLAT(vf64, 0.0), SPLAT(vf64, -1.0), SPLAT(vf64, 1.0));
  return t + (vf64)SEL(vi64, up, step, SPLAT(vf64, 0.0));
}

/* q: 0 for a float target (y given), 1 for Q16 (rounded here), 2 for a float
   target rounded here (on magnitudes: |y|-|x| has the size of y-x) */
struct rk_ctx {
  vu32 U, S, OP, ON, MNB, LOW, cu, cs, co;
  vi32 U1, S1, Oi, MNBm1;      /* rk_vec_fused: U + 1, S + 1, opos, mnb - 1 as signed (u, s < 0x7f800000,
                                   opos <= 0x7f800000, mnb >= 2^-126's pattern) */
  vf64 TF, TMF;
  vf32 K1, K2, MINSUB;
  uint32_t dsh;
};

/* Every vector of thresholds and constants from t, counters at zero (a kernel
   leaves alone those it does not read) */
static inline __attribute__((always_inline)) void rk_ctx_init(struct rk_ctx *c, const mpai_rthr32 *t)
{
  c->U = SPLAT(vu32, t->u);
  c->S = SPLAT(vu32, t->s);
  c->OP = SPLAT(vu32, t->opos);
  c->ON = SPLAT(vu32, t->oneg);
  c->U1 = (vi32){} + (int32_t)(t->u + 1);
  c->S1 = (vi32){} + (int32_t)(t->s + 1);
  c->Oi = (vi32){} + (int32_t)t->opos;
  c->MNBm1 = (vi32){} + (int32_t)(t->mnb - 1);
  c->TF = SPLAT(vf64, t->two_f);
  c->TMF = SPLAT(vf64, t->two_mf);
  c->dsh = t->dsh;
  c->MNB = SPLAT(vu32, t->mnb);
  c->LOW = SPLAT(vu32, (1u << c->dsh) - 1);
  c->K1 = (vf32){} + t->k1;
  c->K2 = (vf32){} + t->k2;
  c->MINSUB = (vf32){} + t->minsub;
  c->cu = c->cs = c->co = (vu32){ 0 };
}

/* A block's results from the lanes: the counts summed; the sums of the
   2*RK_NV accumulators folded by mpai_rfold (lane j*VW/2 + l of A[j] holds the
   elements i = that mod 16); the largest |d|/|x| of the nm sets of pairs M,
   one division a lane, joined with o->maxrel. */
static inline __attribute__((always_inline)) void rk_finish(const struct rk_ctx *c, const struct rk_acc *A,
                                                           const struct rk_max *M, int nm, mpai_rblk *o)
{
  double le[16], lx[16], m = o->maxrel;
  uint64_t su = 0, ss = 0, so = 0;
  for (int l = 0; l < VW; l++) {
    su += c->cu[l];
    ss += c->cs[l];
    so += c->co[l];
  }
  for (int j = 0; j < 2 * RK_NV; j++)
    for (int l = 0; l < VW / 2; l++) {
      le[j * VW / 2 + l] = A[j].e2[l];
      lx[j * VW / 2 + l] = A[j].x2[l];
    }
  for (int j = 0; j < nm; j++)
    for (int l = 0; l < VW / 2; l++)
      if (M[j].bd[l] > 0) {
        double rel = M[j].bd[l] / M[j].bx[l];
        if (rel > m)
          m = rel;
      }
  mpai_rblk_set(o, su, ss, so, le, lx, m);
}

/* A float target rounded here (q = 2), one vector of VW values. The same counts
   and sums as rk_vec, with less work per value:
   - |x| has its sign bit clear, so its bit patterns compare as signed integers
     (one instruction, where unsigned compares take two); RNE is symmetric, so
     the overflow threshold is one for both signs;
   - round(x)-x is formed in binary32 from the magnitudes, exactly (|y| = 0 or
     |y| within a factor 2 of |x|: Sterbenz), so only |x| and |round(x)-x| are
     widened to binary64, not x and y;
   - lanes that count nowhere carry |x| = |d| = 0: for them ad*bx > bd*ax is
     0 > 0, false, as with the 1 that rk_half puts there. */
static inline __attribute__((always_inline)) void rk_vec_fused(struct rk_ctx *c, vf32 xv, struct rk_acc *A,
                                                              struct rk_acc *B, struct rk_max *MA, struct rk_max *MB)
{
  vi32 a = (vi32)((vu32)xv & 0x7fffffffu);
  vi32 pos = a > 0, lt_o = a < c->Oi, lt_inf = a < 0x7f800000;
  vi32 le_u = c->U1 > a, le_s = c->S1 > a;   /* a <= U, a <= S */
  vi32 ok = pos & lt_o & lt_inf;
  c->co -= (vu32)(lt_inf & ~lt_o);             /* a >= O >= 1: non-zero */
  c->cu -= (vu32)(ok & le_u);
  c->cs -= (vu32)(ok & le_s & ~le_u);
  const uint32_t d = c->dsh, half = (1u << d) >> 1;
  vu32 au = (vu32)a;
  vu32 yn = d ? (au + ((half - 1) + ((au >> d) & 1))) & ~c->LOW : au;   /* MPEI_ROUND_CARRY, RNE */
  /* below 2^emin: exact operations only (see mpai_rthr32) */
  vf32 xs = (vf32)a * c->K1 * c->K2;
  vi32 i = __builtin_convertvector(xs, vi32);  /* truncation; lanes >= 2^emin are not used */
  vf32 f = xs - __builtin_convertvector(i, vf32);
  i -= (f > 0.5f) | ((f == 0.5f) & ((i & 1) != 0));   /* MPEI_ROUND_UP, RNE (f > 0.5 or f == 0.5: inexact) */
  vu32 ys = (vu32)(__builtin_convertvector(i, vf32) * c->MINSUB);
  vf32 yv = (vf32)SEL(vu32, a > c->MNBm1, yn, ys);
  vf32 ad = (vf32)((vu32)(yv - (vf32)a) & ((vu32)ok & 0x7fffffffu));
  vf32 ax = (vf32)((vu32)a & (vu32)ok);
  vf64 dl = RK_CVTD(RK_LOW(ad)), dh = RK_CVTD(RK_HIGH(ad)), xl = RK_CVTD(RK_LOW(ax)), xh = RK_CVTD(RK_HIGH(ax));
  A->e2 += dl * dl;
  A->x2 += xl * xl;
  B->e2 += dh * dh;
  B->x2 += xh * xh;
  vi64 bl = dl * MA->bx > MA->bd * xl, bh = dh * MB->bx > MB->bd * xh;
  MA->bd = (vf64)SEL(vi64, bl, dl, MA->bd);
  MA->bx = (vf64)SEL(vi64, bl, xl, MA->bx);
  MB->bd = (vf64)SEL(vi64, bh, dh, MB->bd);
  MB->bx = (vf64)SEL(vi64, bh, xh, MB->bx);
}

/* The fast fused kernel (mpai_rthr32's csub/cadd/alim): a float target rounded
   here, on a block where no finite |x| reaches the overflow threshold opos or alim.
   The same counts, sums and max as rk_core_fused with less work per value:
   - no overflow lane: ok is "non-zero and finite", and the sum of x^2 is the same
     for every such target, so it is summed only when asked (want_x2);
   - AVX-512: round to p bits by adding and subtracting C = 2^(E+24-p) (E the
     exponent of |x|, at least emin's: then the sum's ulp is x's quantum) with the
     rounding to nearest even written in the instruction ({rn-sae}: whatever the
     caller's mode); alim keeps C and the sum finite;
   - the max of |d|/|x|: a lane's exact update (rk_vec_fused's cross products) runs
     only when some lane may raise it: |d| > 0 and |d| >= thr*|x| in binary32, thr a
     binary32 lower bound of max(o->maxrel, the lane's bd/bx). A lane whose quotient
     beats that max has thr*|x| < |d| (exactly), and rounding is monotone, so
     fl(thr*|x|) <= |d|: no such lane is skipped; a lane skipped cannot change the
     result (o->maxrel joins it). */
static inline __attribute__((always_inline)) vf32 rk_fast_thr(const struct rk_max *ML, const struct rk_max *MH,
                                                              double seed)
{
  /* q's errors (double division, conversion) are below 2^-22 relative in any
     rounding mode; tiny q: 0 */
  const vf64 S = SPLAT(vf64, seed), TINY = SPLAT(vf64, 0x1p-100), Z = SPLAT(vf64, 0.0);
  vf64 ql = ML->bd / ML->bx, qh = MH->bd / MH->bx;
  ql = (vf64)SEL(vi64, ql < S, S, ql);
  qh = (vf64)SEL(vi64, qh < S, S, qh);
  ql = (vf64)SEL(vi64, ql < TINY, Z, ql);
  qh = (vf64)SEL(vi64, qh < TINY, Z, qh);
  hf32 fl = __builtin_convertvector(ql, hf32), fh = __builtin_convertvector(qh, hf32);
  vf32 t = (vf32)MPEI_JOIN(fl, fh) * (1.0f - 0x1p-20f);
  /* |d| <= |x| always (round(x) lies in [0, 2|x|]), so a lane at 1 (an underflow
     seen) is done: FLT_MAX*|x| > |x| >= |d| for every |x| > 0 */
  vi32 done = (vi32)MPEI_JOIN(__builtin_convertvector(ql >= 1.0, hi32), __builtin_convertvector(qh >= 1.0, hi32));
  return (vf32)SEL(vu32, done, (vu32)((vf32){} + FLT_MAX), (vu32)t);
}

/* one vector of VW values for rk_core_fast: its halves into AL and AH */
static inline __attribute__((always_inline)) void rk_fast_vec(struct rk_ctx *c, vf32 xv, struct rk_acc *AL,
                                                             struct rk_acc *AH, struct rk_max *ML, struct rk_max *MH,
                                                             vf32 *thr, double seed, vu32 CADD, vu32 CSUB,
                                                             const int want_x2)
{
  const uint32_t d = c->dsh, half = (1u << d) >> 1;
  (void)CADD;
  (void)CSUB;
  (void)half;
  vi32 a = (vi32)((vu32)xv & 0x7fffffffu);
  vi32 pos = a > 0, ok = pos & (a < 0x7f800000);
  vi32 le_u = c->U1 > a, le_s = c->S1 > a;   /* a <= U, a <= S (both below inf's pattern) */
  c->cu -= (vu32)(pos & le_u);
  c->cs -= (vu32)(le_s & ~le_u);
  vf32 yv;
  if (d == 0) {
    yv = (vf32)a;                           /* binary32 itself: exact */
  } else {
#if VW == 16
    vu32 cb = ((vu32)a & 0x7f800000u) + CADD;
    cb = SEL(vu32, cb > CSUB, cb, CSUB);
    __m512 s = _mm512_add_round_ps((__m512)a, (__m512)cb, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
    yv = (vf32)_mm512_sub_round_ps(s, (__m512)cb, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
#else
    vu32 au = (vu32)a;
    vu32 yn = (au + ((half - 1) + ((au >> d) & 1))) & ~c->LOW;   /* MPEI_ROUND_CARRY, RNE */
    vf32 xs = (vf32)a * c->K1 * c->K2;
    vi32 ii = __builtin_convertvector(xs, vi32);
    vf32 f = xs - __builtin_convertvector(ii, vf32);
    ii -= (f > 0.5f) | ((f == 0.5f) & ((ii & 1) != 0));
    vu32 ys = (vu32)(__builtin_convertvector(ii, vf32) * c->MINSUB);
    yv = (vf32)SEL(vu32, a > c->MNBm1, yn, ys);
#endif
  }
  vf32 ad = (vf32)((vu32)(yv - (vf32)a) & ((vu32)ok & 0x7fffffffu));   /* exact: Sterbenz */
  vf32 ax = (vf32)((vu32)a & (vu32)ok);
  vf64 dl = RK_CVTD(RK_LOW(ad)), dh = RK_CVTD(RK_HIGH(ad));
  AL->e2 += dl * dl;
  AH->e2 += dh * dh;
  if (want_x2) {
    vf64 xl = RK_CVTD(RK_LOW(ax)), xh = RK_CVTD(RK_HIGH(ax));
    AL->x2 += xl * xl;
    AH->x2 += xh * xh;
  }
  vi32 cand = ((vi32)ad > 0) & ((vi32)ad >= (vi32)(*thr * ax));
  if (__builtin_expect(!MPEI_ALL32(~cand), 0)) {   /* some lane may raise its max */
    vf64 xl = RK_CVTD(RK_LOW(ax)), xh = RK_CVTD(RK_HIGH(ax));
    vi64 bl = dl * ML->bx > ML->bd * xl, bh = dh * MH->bx > MH->bd * xh;
    ML->bd = (vf64)SEL(vi64, bl, dl, ML->bd);
    ML->bx = (vf64)SEL(vi64, bl, xl, ML->bx);
    MH->bd = (vf64)SEL(vi64, bh, dh, MH->bd);
    MH->bx = (vf64)SEL(vi64, bh, xh, MH->bx);
    if (MPEI_ANY64(bl | bh))   /* not when |d|/|x| only equals the max (underflows: 1) */
      *thr = rk_fast_thr(ML, MH, seed);
  }
}

/* the accumulators in locals (an array indexed in the loop was kept on the
   stack: a store and a reload in every sum's chain) */
static inline __attribute__((always_inline)) void rk_core_fast(const float *x, size_t n, const mpai_rthr32 *t,
                                                              mpai_rblk *o, const int want_x2)
{
  struct rk_ctx c;
  rk_ctx_init(&c, t);
  struct rk_acc A0 = { { 0 }, { 0 } }, A1 = A0, A2 = A0, A3 = A0;
  struct rk_max ML = { { 0 }, SPLAT(vf64, 1.0) }, MH = ML;
  const double seed = o->maxrel;
  vf32 thr = rk_fast_thr(&ML, &MH, seed);
  const vu32 CADD = SPLAT(vu32, t->cadd), CSUB = SPLAT(vu32, t->csub);
  for (size_t i = 0; i < n; i += 16) {
    vf32 xv[RK_NV];
    rk_load_direct(xv, x + i, n - i);
    rk_fast_vec(&c, xv[0], &A0, &A1, &ML, &MH, &thr, seed, CADD, CSUB, want_x2);
#if VW == 8
    rk_fast_vec(&c, xv[1], &A2, &A3, &ML, &MH, &thr, seed, CADD, CSUB, want_x2);
#endif
  }
  struct rk_acc A[4] = { A0, A1, A2, A3 };
  struct rk_max M[2] = { ML, MH };
  rk_finish(&c, A, M, 2, o);
}

/* one vector of VW values: counts, then its two halves into A and B */
static inline __attribute__((always_inline)) void rk_vec(struct rk_ctx *c, vf32 xv, vf32 yv, struct rk_acc *A,
                                                        struct rk_acc *B, struct rk_max *MA, struct rk_max *MB,
                                                        const int q)
{
  vu32 u = (vu32)xv, a = u & 0x7fffffffu;
  vi32 neg = (vi32)u < 0;
  vi32 fin = (vi32)((a - 1u) < 0x7f7fffffu);                /* non-zero and finite */
  vi32 ov = fin & (vi32)(a >= SEL(vu32, neg, c->ON, c->OP));
  vi32 ok = fin & ~ov;
  c->co -= (vu32)ov;
  c->cu -= (vu32)(ok & (vi32)(a <= c->U));
  c->cs -= (vu32)(ok & (vi32)(a > c->U) & (vi32)(a <= c->S));
  if (q == 2) {
    const uint32_t d = c->dsh, one = 1u << d, half = one >> 1;
    const vu32 z = {};
    vu32 yn = d ? MPEI_ROUND_CARRY(MPEI_RC_RNE, vu32, a, d, one, c->LOW, half, a & ~c->LOW, a & c->LOW, z, z, z)
                 : a;   /* binary32 itself: exact */
    /* below 2^emin: exact operations only (see mpai_rthr32) */
    vf32 xs = (vf32)a * c->K1 * c->K2;
    vi32 i = __builtin_convertvector(xs, vi32);    /* truncation; lanes >= 2^emin are not used */
    vf32 f = xs - __builtin_convertvector(i, vf32);
    i -= MPEI_ROUND_UP(MPEI_RC_RNE, f != 0.0f, f > 0.5f, f == 0.5f, (i & 1) != 0, 0, 0, 0);
    vu32 ys = (vu32)(__builtin_convertvector(i, vf32) * c->MINSUB);
    xv = (vf32)a;
    yv = (vf32)SEL(vu32, a >= c->MNB, yn, ys);
  }
  vf64 xl = RK_CVTD(RK_LOW(xv)), xh = RK_CVTD(RK_HIGH(xv)), yl, yh;
  if (q == 1) {
    yl = rk_rne(xl * c->TF) * c->TMF;
    yh = rk_rne(xh * c->TF) * c->TMF;
  } else {
    yl = RK_CVTD(RK_LOW(yv));
    yh = RK_CVTD(RK_HIGH(yv));
  }
  rk_half(A, MA, xl, yl, RK_CVTL(RK_LOW(ok)));
  rk_half(B, MB, xh, yh, RK_CVTL(RK_HIGH(ok)));
}

/* The fused kernel's loop (q = 2): rk_vec_fused on 16 values at a time, with
   everything in locals (counters, sums, maxima) and the values loaded straight
   from x (rk_load_direct). Lanes as in rk_core: element i of the block in lane
   i mod 16. */
static inline __attribute__((always_inline)) void rk_core_fused(const float *x, size_t n, const mpai_rthr32 *t,
                                                               mpai_rblk *o)
{
  struct rk_ctx c;
  rk_ctx_init(&c, t);
  struct rk_acc A[2 * RK_NV];
  for (int j = 0; j < 2 * RK_NV; j++)
    A[j] = (struct rk_acc){ { 0 }, { 0 } };
  struct rk_max M0 = { { 0 }, SPLAT(vf64, 1.0) }, M1 = M0;
  for (size_t i = 0; i < n; i += 16) {
    vf32 xv[RK_NV];
    rk_load_direct(xv, x + i, n - i);
#pragma GCC unroll 2
    for (int h = 0; h < RK_NV; h++)
      rk_vec_fused(&c, xv[h], &A[2 * h], &A[2 * h + 1], &M0, &M1);
  }
  struct rk_max M[2] = { M0, M1 };
  rk_finish(&c, A, M, 2, o);
}

static inline __attribute__((always_inline)) void rk_core(const float *x, const float *y, size_t n,
                                                         const mpai_rthr32 *t, mpai_rblk *o, const int q)
{
  struct rk_ctx c;
  rk_ctx_init(&c, t);
  struct rk_acc A[4];
  struct rk_max M[8];
  for (int j = 0; j < 4; j++)
    A[j] = (struct rk_acc){ { 0 }, { 0 } };
  for (int j = 0; j < 8; j++)
    M[j] = (struct rk_max){ { 0 }, SPLAT(vf64, 1.0) };
  struct rk_acc A0 = A[0], A1 = A[1], A2 = A[2], A3 = A[3];
  struct rk_max M0 = M[0], M1 = M[1], M2 = M[2], M3 = M[3];
#if VW == 16
  for (size_t i = 0; i < n; i += 32) {
    vf32 xv[2] = { { 0 }, { 0 } }, yv[2] = { { 0 }, { 0 } };
    rk_load(&xv[0], x + i, n - i);
    if (n - i > 16)
      rk_load(&xv[1], x + i + 16, n - i - 16);
    if (q == 0) {
      rk_load(&yv[0], y + i, n - i);
      if (n - i > 16)
        rk_load(&yv[1], y + i + 16, n - i - 16);
    }
    rk_vec(&c, xv[0], q ? xv[0] : yv[0], &A0, &A1, &M0, &M1, q);
    rk_vec(&c, xv[1], q ? xv[1] : yv[1], &A0, &A1, &M2, &M3, q);
  }
#else
  for (size_t i = 0; i < n; i += 16) {
    vf32 xv[RK_NV], yv[RK_NV];
    rk_load(xv, x + i, n - i);
    if (q == 0)
      rk_load(yv, y + i, n - i);
    else
      for (int h = 0; h < RK_NV; h++)
        yv[h] = xv[h];
    rk_vec(&c, xv[0], yv[0], &A0, &A1, &M0, &M1, q);
    rk_vec(&c, xv[1], yv[1], &A2, &A3, &M2, &M3, q);
  }
#endif
  A[0] = A0;
  A[1] = A1;
  A[2] = A2;
  A[3] = A3;
  M[0] = M0;
  M[1] = M1;
  M[2] = M2;
  M[3] = M3;
  rk_finish(&c, A, M, 4, o);
}

void RK_NAME(float)(const float *x, const float *y, size_t n, const mpai_rthr32 *t, mpai_rblk *o)
{
  rk_core(x, y, n, t, o, 0);
}

void RK_NAME(q)(const float *x, size_t n, const mpai_rthr32 *t, mpai_rblk *o)
{
  rk_core(x, NULL, n, t, o, 1);
}

void RK_NAME(fused)(const float *x, size_t n, const mpai_rthr32 *t, mpai_rblk *o)
{
  rk_core_fused(x, n, t, o);
}

void RK_NAME(fast)(const float *x, size_t n, const mpai_rthr32 *t, mpai_rblk *o, int want_x2)
{
  if (want_x2)
    rk_core_fast(x, n, t, o, 1);
  else
    rk_core_fast(x, n, t, o, 0);
}

void RK_NAME(keys)(const float *x, size_t n, const mpai_rkeys *k, uint16_t *key, uint32_t *mn, uint32_t *mxp,
                   uint32_t *mxn)
{
  vu32 vmn = SPLAT(vu32, 0xffffffffu), vp = { 0 }, vn = { 0 };
  const vu32 NC = SPLAT(vu32, (uint32_t)k->ncat), TOP = SPLAT(vu32, (uint32_t)k->ncat - 1);
  for (size_t i = 0; i < n; i += 16) {
    vf32 xv[RK_NV];
    __builtin_prefetch(x + i + 512);   /* 2 KiB ahead: the first pass over values just read, from L3 */
    rk_load_direct(xv, x + i, n - i);
    uint16_t kk[16];
#pragma GCC unroll 2
    for (int h = 0; h < RK_NV; h++) {
      vu32 u = (vu32)xv[h], a = u & 0x7fffffffu, fr = u & 0x7fffffu;
#if VW == 16
      /* masked minimum and maxima (one instruction each); the exponent times ncat
         (< 2^16: the 16-bit product of each lane's low half, one uop) */
      __m512i ai = (__m512i)a;
      __mmask16 kok = _mm512_cmplt_epu32_mask((__m512i)(a - 1u), (__m512i)SPLAT(vu32, 0x7f7fffffu));
      __mmask16 kneg = _mm512_movepi32_mask((__m512i)u);
      vmn = (vu32)_mm512_mask_min_epu32((__m512i)vmn, kok, (__m512i)vmn, ai);
      vp = (vu32)_mm512_mask_max_epu32((__m512i)vp, kok & (__mmask16)~kneg, (__m512i)vp, ai);
      vn = (vu32)_mm512_mask_max_epu32((__m512i)vn, kok & kneg, (__m512i)vn, ai);
      vu32 ek = (vu32)_mm512_mullo_epi16((__m512i)(a >> 23), (__m512i)NC);
#else
      vi32 ok = (vi32)((a - 1u) < 0x7f7fffffu), neg = (vi32)u < 0;
      vu32 lo = SEL(vu32, ok, a, SPLAT(vu32, 0xffffffffu));
      vu32 hp = SEL(vu32, ok & ~neg, a, SPLAT(vu32, 0)), hn = SEL(vu32, ok & neg, a, SPLAT(vu32, 0));
      vmn = SEL(vu32, lo < vmn, lo, vmn);
      vp = SEL(vu32, hp > vp, hp, vp);
      vn = SEL(vu32, hn > vn, hn, vn);
      vu32 ek = (a >> 23) * NC;
#endif
      vu32 c = { 0 };
      for (int j = 0; j < k->nthr; j++)
        c -= (vu32)(fr >= SPLAT(vu32, k->fthr[j]));
      c = SEL(vu32, fr == 0, TOP, c);
      hu16 kv = __builtin_convertvector(ek + c, hu16);
      memcpy(kk + h * VW, &kv, sizeof kv);
    }
    memcpy(key + i, kk, (n - i < 16 ? n - i : 16) * sizeof *key);
  }
  uint32_t a = *mn, b = *mxp, c = *mxn;
  for (int l = 0; l < VW; l++) {
    if (vmn[l] < a) a = vmn[l];
    if (vp[l] > b) b = vp[l];
    if (vn[l] > c) c = vn[l];
  }
  *mn = a;
  *mxp = b;
  *mxn = c;
}
