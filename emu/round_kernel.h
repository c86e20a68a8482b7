/* The binary32 array-rounding kernel, written once with GCC vector extensions.
   Included, after an instruction-set header (lib/isa_*.h), by round_avx2.c
   (VW = 8) and round_avx512.c (VW = 16), each compiled with its own -m flags;
   the portable oracle is mpei_round_ref (round_ref.c).

   Each lane works on the magnitude bits a of x: with Eeff = max(E, 1) the
   significand M (implicit bit included) is rounded by dropping
   d = 24 - p + max(0, emin_b - Eeff) low bits, and the result is rebuilt as
   ((Eeff - 1) << 23) + (R << d); a carry moves into the exponent field on its
   own. Needs p <= 24 and emin >= -126 (the caller checks).

   Vectors whose lanes are all finite and at most the largest finite value (the
   usual case, gradients included) take round_lean: the same rounding with the
   quantum per lane, d = max(dbase + eminb - Eeff, dbase), applied to a itself
   (for d <= 23 the implicit bit is a multiple of the quantum, so the carry
   trick stays exact), and lanes below the smallest subnormal (d >= 24: the
   result is 0 or that subnormal) chosen by one compare. No branch depends on
   the lanes' magnitudes, so normal, subnormal and underflowing lanes cost the
   same. Other vectors (NaN, infinity, overflow) take round_lanes.

   Binary16 under RNE and RZ takes the F16C conversions instead (group_h16),
   and, on AVX-512, so do formats whose quantum add is exact (H16_FPQ: E4M3,
   E5M2, FP6, FP4, custom ones), E5M2 through F16C on AVX2; flags derived from
   compares; groups with NaN, infinite or too large lanes still take the paths
   above. Arrays of 8 MiB or more go four interleaved 4 KiB stretches at a
   time (groups). */
#include <stdint.h>
#include <string.h>
#include "mpei_round_core.h"
#include "mpei_vec.h"

#define VW (MPEI_VBYTES / 4)
#define STREAM_BYTES (8u << 20)

typedef struct { vu32 inexact, underflow, overflow, invalid, saturated, flushed; } flagacc;

static inline __attribute__((always_inline)) vu32 round_lanes(vu32 u, const mpei_plan32 *pl, const int mode,
                                                           vu32 rnd, flagacc *fa)
{
  const vu32 a = u & 0x7fffffffu, s = u & 0x80000000u;
  const vi32 E = (vi32)(a >> 23);
  const vi32 Eeff = E - (E == 0);
  vi32 dsub = SPLAT(vi32, pl->eminb) - Eeff;
  dsub &= dsub > 0;
  const vi32 dt = SPLAT(vi32, pl->dbase) + dsub;
  const vi32 d = (vi32)SEL(vu32, dt > 25, SPLAT(vu32, 25), (vu32)dt);
  const vu32 M = (a & 0x7fffffu) | ((vu32)(E != 0) & 0x800000u);
  const vu32 one_d = SPLAT(vu32, 1) << (vu32)d;
  const vu32 t = M >> (vu32)d, rem = M & (one_d - 1), half = one_d >> 1;
  const vi32 inexm = rem != 0;
  const vu32 inex = (vu32)inexm;
  const vi32 neg = (vi32)s != 0;
  /* MPE_SR: floor(rem * 2^(32-d)), with d unclamped (dt) */
  vi32 sh_l = 32 - dt, sh_r = dt - 32;
  sh_l = (vi32)SEL(vu32, sh_l > 31, SPLAT(vu32, 31), (vu32)sh_l);
  sh_r = (vi32)SEL(vu32, sh_r > 31, SPLAT(vu32, 31), (vu32)sh_r);
#define SR_T SEL(vu32, dt <= 32, rem << (vu32)(sh_l & (sh_l > 0)), M >> (vu32)(sh_r & (sh_r > 0)))
  const vu32 up = (vu32)MPEI_ROUND_UP(mode, inexm, rem > half, rem == half, (t & 1) != 0, neg, rnd < SR_T,
                                  (vi32)rnd < 0);
#undef SR_T
  const vu32 R = t - up;   /* up is 0 or all ones */
  vu32 res = SEL(vu32, dt >= 24, SEL(vu32, R != 0, SPLAT(vu32, pl->minsub_bits), SPLAT(vu32, 0)),
               ((vu32)(Eeff - 1) << 23) + (R << (vu32)d));

  const vi32 spec = (vi32)(a >= 0x7f800000u);
  const vi32 nan = (vi32)(a > 0x7f800000u);
  const vi32 ovf = (vi32)(res > pl->max_bits) & ~spec;
  vu32 to_max = (vu32)MPEI_ROUND_TO_MAX(mode, neg, SPLAT(vi32, -1));
  if (pl->saturate)
    to_max = SPLAT(vu32, ~0u);
  res = SEL(vu32, ovf, SEL(vu32, to_max, SPLAT(vu32, pl->max_bits), SPLAT(vu32, pl->ovf_bits)), res);
  res = SEL(vu32, spec, SEL(vu32, nan, SPLAT(vu32, 0x7fc00000u), SPLAT(vu32, pl->inf_bits)), res);
  vu32 fl = SPLAT(vu32, 0);
  if (pl->flush) {
    fl = (vu32)((res != 0) & (res < pl->minnorm_bits));
    res &= ~fl;
  }
  /* flags */
  const vu32 fin = ~(vu32)spec;
  const vu32 tinyb = SEL(vu32, neg, SPLAT(vu32, pl->tiny_neg), SPLAT(vu32, pl->tiny_pos));
  fa->inexact |= (fin & inex) | (vu32)ovf | fl;
  fa->underflow |= (fin & inex & (vu32)(a < tinyb)) | fl;
  fa->overflow |= (vu32)ovf;
  fa->flushed |= fl;
  const vu32 isinf = (vu32)(spec & ~nan);
  if (pl->saturate)
    fa->saturated |= (vu32)ovf | isinf;
  fa->invalid |= (vu32)nan & (vu32)((a & 0x400000u) == 0);
  if (!pl->has_inf && !pl->saturate)
    fa->invalid |= isinf;
  return res | s;
}

/* the flags a run raised; by value, so the accumulators stay in registers */
static inline __attribute__((always_inline)) unsigned flags_of(const flagacc fa)
{
  unsigned f = 0;
#define ANY(v) (!MPEI_ALL32((vi32)((v) == 0)))
  MPEI_FLAGS_ADD(f, fa, ANY);
#undef ANY
  return f;
}

/* One Philox round as MPEI_PHILOX_ROUND, the high half of each product
   brought down by swapping the 32-bit halves of its lane (vpshufd, off the
   port the multiplies and shifts share) rather than a 64-bit shift: the low
   half of every lane is the same word, the upper half holds other junk,
   which vpmuludq and the final selection of low halves ignore. */
#define HI_DOWN(v) ((vu64)__builtin_shufflevector((vu32)(v), (vu32)(v), MPEI_SHUF32_SWAP))
#define PHILOX_ROUND_SW(c0, c1, c2, c3, m0, m2, K0, K1) \
  do {                                                  \
    const vu64 p0_ = MPEI_MULU32(c0, m0), p2_ = MPEI_MULU32(c2, m2); \
    c0 = HI_DOWN(p2_) ^ c1 ^ (K0);                      \
    c2 = HI_DOWN(p0_) ^ c3 ^ (K1);                      \
    c1 = p2_;                                           \
    c3 = p0_;                                           \
  } while (0)

/* element 4j+w is word w of block j: the low dwords of (w0,w1) and (w2,w3)
   interleaved per block, then pairs of those per output vector (the index
   lists are the ISA header's: il[j] = (j odd ? VW : 0) + 2*(j/2), q_lo[j] =
   (j%4 < 2 ? 0 : VW) + 2*(j/4) + (j&1), q_hi = q_lo + VW/2) */
#define PHILOX_OUT(a0, a1, a2, a3, o_lo, o_hi)                        \
  do {                                                                \
    const vu32 x01_ = __builtin_shufflevector((vu32)a0, (vu32)a1, MPEI_SHUF32_IL); \
    const vu32 x23_ = __builtin_shufflevector((vu32)a2, (vu32)a3, MPEI_SHUF32_IL); \
    o_lo = __builtin_shufflevector(x01_, x23_, MPEI_SHUF32_QLO);      \
    o_hi = __builtin_shufflevector(x01_, x23_, MPEI_SHUF32_QHI);      \
  } while (0)

/* The Philox state of VW/2 blocks, one per 64-bit lane, at counters c + j
   (j = 0 .. VW/2 - 1; counters wrap mod 2^62 as the element index wraps mod
   2^64, mpei_sr_word) */
#define PHILOX_SET(c, x0, x1, x2, x3)                                             \
  do {                                                                         \
    vu64 lane_;                                                                  \
    for (int j_ = 0; j_ < VW / 2; j_++)                                        \
      lane_[j_] = (uint64_t)j_;                                                \
    const vu64 ctr_ = (((vu64){} + (uint64_t)(c)) + lane_) & 0x3fffffffffffffffull; \
    x0 = ctr_;                                                                 \
    x1 = ctr_ >> 32;                                                           \
    x2 = (vu64){};                                                               \
    x3 = (vu64){};                                                               \
  } while (0)

/* Random words for the 4*VW elements idx0 .. idx0 + 4*VW - 1 (idx0 % 4 == 0):
   one Philox block per counter idx/4, its 4 words spread to elements 4j+w.
   Two interleaved sets of VW/2 blocks, one block per 64-bit lane: the
   product p = c*M holds both halves Philox needs, so a round is two
   multiplies, two swaps and two three-way xors. */
static inline __attribute__((always_inline)) void random_block(const mpei_plan32 *pl, uint64_t idx0, vu32 out[4])
{
  const vu64 m0 = (vu64){} + MPEI_PHILOX_M0, m2 = (vu64){} + MPEI_PHILOX_M2;
  const uint64_t c = idx0 >> 2;
  vu64 a0, a1, a2, a3, b0, b1, b2, b3;
  PHILOX_SET(c, a0, a1, a2, a3);
  PHILOX_SET(c + VW / 2, b0, b1, b2, b3);
  uint32_t k0 = (uint32_t)pl->seed, k1 = (uint32_t)(pl->seed >> 32);
#pragma GCC unroll 10
  for (int r = 0; r < 10; r++) {
    const vu64 K0 = (vu64){} + k0, K1 = (vu64){} + k1;
    PHILOX_ROUND_SW(a0, a1, a2, a3, m0, m2, K0, K1);
    PHILOX_ROUND_SW(b0, b1, b2, b3, m0, m2, K0, K1);
    k0 += MPEI_PHILOX_W0;
    k1 += MPEI_PHILOX_W1;
  }
  PHILOX_OUT(a0, a1, a2, a3, out[0], out[1]);
  PHILOX_OUT(b0, b1, b2, b3, out[2], out[3]);
}

/* random_block for two groups at once (idxA, idxB: multiples of 4): four
   independent sets of blocks in flight, which hides the multiplies' latency */
static inline __attribute__((always_inline)) void random_block2(const mpei_plan32 *pl, uint64_t idxA, uint64_t idxB,
                                                                vu32 outA[4], vu32 outB[4])
{
  const vu64 m0 = (vu64){} + MPEI_PHILOX_M0, m2 = (vu64){} + MPEI_PHILOX_M2;
  const uint64_t cA = idxA >> 2, cB = idxB >> 2;
  vu64 a0, a1, a2, a3, b0, b1, b2, b3, c0, c1, c2, c3, d0, d1, d2, d3;
  PHILOX_SET(cA, a0, a1, a2, a3);
  PHILOX_SET(cA + VW / 2, b0, b1, b2, b3);
  PHILOX_SET(cB, c0, c1, c2, c3);
  PHILOX_SET(cB + VW / 2, d0, d1, d2, d3);
  uint32_t k0 = (uint32_t)pl->seed, k1 = (uint32_t)(pl->seed >> 32);
#pragma GCC unroll 10
  for (int r = 0; r < 10; r++) {
    const vu64 K0 = (vu64){} + k0, K1 = (vu64){} + k1;
    PHILOX_ROUND_SW(a0, a1, a2, a3, m0, m2, K0, K1);
    PHILOX_ROUND_SW(b0, b1, b2, b3, m0, m2, K0, K1);
    PHILOX_ROUND_SW(c0, c1, c2, c3, m0, m2, K0, K1);
    PHILOX_ROUND_SW(d0, d1, d2, d3, m0, m2, K0, K1);
    k0 += MPEI_PHILOX_W0;
    k1 += MPEI_PHILOX_W1;
  }
  PHILOX_OUT(a0, a1, a2, a3, outA[0], outA[1]);
  PHILOX_OUT(b0, b1, b2, b3, outA[2], outA[3]);
  PHILOX_OUT(c0, c1, c2, c3, outB[0], outB[1]);
  PHILOX_OUT(d0, d1, d2, d3, outB[2], outB[3]);
}

/* Random words for the VW elements idx0 .. idx0 + VW - 1 (any alignment): the
   Philox blocks from idx0 rounded down to a block start, then the words taken
   from there. For the prologue and tail only; the main loop uses random_block. */
static inline __attribute__((always_inline)) vu32 random_lanes(const mpei_plan32 *pl, uint64_t idx0, const int mode)
{
  if (mode != MPE_SR && mode != MPE_SR_EQ)
    return SPLAT(vu32, 0);
  vu32 blk[4];
  uint32_t w[4 * VW];
  random_block(pl, idx0 & ~(uint64_t)3, blk);
  memcpy(w, blk, sizeof w);
  vu32 r;
  memcpy(&r, w + (idx0 & 3), sizeof r);
  return r;
}

/* What round_lean needs, splatted once per call. */
typedef struct {
  vi32 K, Kz, dbase;     /* d = max(K - Eeff, dbase), K = dbase + eminb; Kz: see lean_usable */
  vu32 minsub, halfq;    /* bits of the smallest subnormal q and of q / 2 */
  vu32 max, tbp, tbn, minnorm;
  vi32 nbias, nlim;      /* lane normal in the target: (vi32)(a + nbias) <= nlim */
} leanc;

static inline __attribute__((always_inline)) void lean_init(leanc *c, const mpei_plan32 *pl)
{
  c->K = SPLAT(vi32, pl->dbase + pl->eminb);
  c->Kz = SPLAT(vi32, pl->eminb == 1 ? pl->dbase : pl->dbase + pl->eminb);
  c->dbase = SPLAT(vi32, pl->dbase);
  c->minsub = SPLAT(vu32, pl->minsub_bits);
  /* q is a power of two of at least 2^-148 (p <= 23, emin >= -126) */
  c->halfq = SPLAT(vu32, pl->minsub_bits >= 0x01000000u ? pl->minsub_bits - 0x00800000u : pl->minsub_bits >> 1);
  c->max = SPLAT(vu32, pl->max_bits);
  c->tbp = SPLAT(vu32, pl->tiny_pos);
  c->tbn = SPLAT(vu32, pl->tiny_neg);
  c->minnorm = SPLAT(vu32, pl->minnorm_bits);
  /* minnorm <= a <= max as one signed compare: a - minnorm <= max - minnorm
     unsigned, the sign bit flipped on both sides */
  c->nbias = SPLAT(vi32, (int32_t)(0x80000000u - pl->minnorm_bits));
  c->nlim = SPLAT(vi32, (int32_t)((pl->max_bits - pl->minnorm_bits) ^ 0x80000000u));
}

/* Lanes that are all normal in the target and at most its largest finite
   value (no underflow possible) round with a fixed shift d = dbase: the
   classic carry-into-exponent trick, the cheapest form. Same decisions as
   round_lean and round_lanes (same random-word rule for SR). */
static inline __attribute__((always_inline)) vu32 round_normal(vu32 u, const mpei_plan32 *pl, const int mode,
                                                            vu32 rnd, flagacc *fa)
{
  const vu32 a = u & 0x7fffffffu, s = u ^ a;
  const uint32_t d = (uint32_t)pl->dbase, one = 1u << d, low = one - 1, half = one >> 1;
  const vu32 t = a & ~low, rem = a & low;
  const vu32 res = MPEI_ROUND_CARRY(mode, vu32, a, d, one, low, half, t, rem, (vi32)s != 0,
                                  rnd < (rem << (32 - d)), (vi32)rnd < 0);
  fa->inexact |= rem;
  return res | s;
}

/* lanes not normal in the target or above its largest finite value */
static inline __attribute__((always_inline)) vi32 not_normal(vu32 u, const leanc *c)
{
  return (vi32)((u & 0x7fffffffu) + (vu32)c->nbias) > c->nlim;
}

/* Can round_lean serve this plan? It needs p <= 23 (dbase >= 1: the carry
   form needs a nonzero quantum). Outside SR it takes d from E rather than
   Eeff = max(E, 1) (one operation less): exact where every binary32 subnormal
   input (E = 0) is either below the smallest subnormal q (eminb >= p: the
   compare with q decides those lanes) or rounded with d = dbase like the
   normal ones (eminb = 1, binary32's own emin: Kz = dbase makes every d
   dbase). Formats between those take round_lanes. */
static inline int lean_usable(const mpei_plan32 *pl, const int mode)
{
  return pl->dbase > 0 && (mode == MPE_SR || pl->eminb == 1 || pl->eminb >= pl->p);
}

/* lanes that round_lean cannot take (NaN, infinity, above the largest finite) */
static inline __attribute__((always_inline)) vi32 not_lean(vu32 u, const leanc *c)
{
  return (vi32)(u & 0x7fffffffu) > (vi32)c->max;
}

/* A vector whose lanes are finite and at most the largest finite value, the
   format's p <= 23 (dbase >= 1: the carry form needs a nonzero quantum): the
   quantum per lane, normal, subnormal and underflowing lanes alike. Same
   decisions, results and flags as round_lanes (check_round holds them to it). */
static inline __attribute__((always_inline)) vu32 round_lean(vu32 u, const leanc *c, const int mode, const int flush,
                                                          vu32 rnd, flagacc *fa)
{
  const vu32 a = u & 0x7fffffffu;
  const vi32 neg = (vi32)u < 0;
  const vi32 E = (vi32)(a >> 23);
  const vi32 Eeff = mode == MPE_SR ? MPEI_MAX_EPI32(E, SPLAT(vi32, 1)) : E;
  /* bits dropped: dbase in the normal range, more below it; >= 24 below the
     smallest subnormal (every bit of the significand; the shifts give 0) */
  const vi32 d = MPEI_MAX_EPI32((mode == MPE_SR ? c->K : c->Kz) - Eeff, c->dbase);
  const vu32 low = ~MPEI_SLLV32(SPLAT(vu32, ~0u), d), one = low + 1, half = (low >> 1) + 1;
  const vu32 t = a & ~low, rem = a & low;
  const vi32 sreq = (vi32)rnd < 0;
  vi32 sr = SPLAT(vi32, 0);
  if (mode == MPE_SR) {
    /* floor(dropped part * 2^(32-d)) of the significand M, implicit bit
       included (below the smallest subnormal all of M is dropped) */
    const vu32 M = a - ((vu32)(Eeff - 1) << 23), rm = M & low;
    const vu32 thr = MPEI_SLLV32(rm, (vu32)(32 - d)) | MPEI_SRLV32(rm, (vu32)(d - 32));
    sr = (vi32)(rnd < thr);
  }
  /* the last kept bit: bit d of the significand; where d = 23 that is the
     implicit bit (1), which a does not hold in bit 23 (its exponent's) */
  const vu32 odd = MPEI_SRLV32(a | 0x00800000u, d) & 1;
  const vu32 r = MPEI_ROUND_CARRY_ODD(mode, vu32, a, odd, one, low, half, t, rem, neg, sr, sreq);
  /* below the smallest subnormal q: 0 or q, odd = 0 (0 is even); for the
     nearest modes the comparisons with q/2 imply a nonzero remainder */
  const vi32 tiny = (vi32)a < (vi32)c->minsub;
  const vi32 nz = mode == MPE_RNE || mode == MPE_RNA ? SPLAT(vi32, -1) : (vi32)(a != 0);
  const vi32 up = MPEI_ROUND_UP(mode, nz, (vi32)a > (vi32)c->halfq, (vi32)(a == c->halfq), SPLAT(vi32, 0), neg, sr, sreq);
  vu32 res = MPEI_BLEND32(tiny, (vu32)up & c->minsub, r);
  vu32 fl = SPLAT(vu32, 0);
  if (flush) {
    fl = (vu32)((res != 0) & ((vi32)res < (vi32)c->minnorm));
    res &= ~fl;
  }
  /* a lane is inexact iff its result differs from its input */
  const vu32 x = res ^ a;
  const vu32 tb = mode == MPE_RU || mode == MPE_RD ? MPEI_BLEND32(neg, c->tbn, c->tbp) : c->tbp;
  fa->inexact |= x;
  fa->underflow |= (x & (vu32)((vi32)a < (vi32)tb)) | fl;
  if (flush)
    fa->flushed |= fl;
  return res | (u ^ a);
}

/* one vector: round_lean when it may, else round_lanes */
static inline __attribute__((always_inline)) vu32 round_vec(vu32 u, const mpei_plan32 *pl, const leanc *c,
                                                         const int lean, const int mode, const int flush,
                                                         vu32 rnd, flagacc *fa)
{
  if (lean && !MPEI_ANY32(not_lean(u, c)))
    return round_lean(u, c, mode, flush, rnd, fa);
  return round_lanes(u, pl, mode, rnd, fa);
}

/* a partial vector of len < VW elements (index base + i), per-lane randomness */
static inline __attribute__((always_inline)) void partial(float *y, const float *x, size_t len,
                                                          const mpei_plan32 *pl, const leanc *c, const int lean,
                                                          uint64_t idx, const int mode, const int flush,
                                                          flagacc *fa)
{
  vu32 u = SPLAT(vu32, 0);
  memcpy(&u, x, len * 4);
  /* lanes past len hold +0, which raises nothing */
  vu32 r = round_vec(u, pl, c, lean, mode, flush, random_lanes(pl, idx, mode), fa);
  memcpy(y, &r, len * 4);
}

/* UNROLL vectors at a time: one test sends the group through round_normal
   (every lane normal), else one through round_lean (every lane finite, no
   overflow), else each vector its own way. x is read again for each vector
   (y may be x), which keeps fewer registers live than holding the group. */
#define UNROLL 4

static inline __attribute__((always_inline)) void group(float *y, const float *x, const vu32 rnd[UNROLL],
                                                        const mpei_plan32 *pl, const leanc *c, const int lean,
                                                        const int mode, const int flush, const int stream,
                                                        flagacc *fa)
{
  const int sr = mode == MPE_SR || mode == MPE_SR_EQ;
  vi32 bad = SPLAT(vi32, 0);
#pragma GCC unroll 4
  for (int q = 0; q < UNROLL; q++) {
    vu32 u;
    memcpy(&u, x + q * VW, sizeof u);
    bad |= not_normal(u, c);
  }
  if (pl->dbase > 0 && !MPEI_ANY32(bad)) {
#pragma GCC unroll 4
    for (int q = 0; q < UNROLL; q++) {
      vu32 u;
      memcpy(&u, x + q * VW, sizeof u);
      const vu32 r = round_normal(u, pl, mode, sr ? rnd[q] : SPLAT(vu32, 0), fa);
      if (stream)
        MPEI_STREAM_STORE(y + q * VW, r);
      else
        memcpy(y + q * VW, &r, sizeof r);
    }
    return;
  }
  bad = SPLAT(vi32, 0);
#pragma GCC unroll 4
  for (int q = 0; q < UNROLL; q++) {
    vu32 u;
    memcpy(&u, x + q * VW, sizeof u);
    bad |= not_lean(u, c);
  }
  if (lean && !MPEI_ANY32(bad)) {
#pragma GCC unroll 4
    for (int q = 0; q < UNROLL; q++) {
      vu32 u;
      memcpy(&u, x + q * VW, sizeof u);
      const vu32 r = round_lean(u, c, mode, flush, sr ? rnd[q] : SPLAT(vu32, 0), fa);
      if (stream)
        MPEI_STREAM_STORE(y + q * VW, r);
      else
        memcpy(y + q * VW, &r, sizeof r);
    }
  } else {
#pragma GCC unroll 1
    for (int q = 0; q < UNROLL; q++) {
      vu32 u;
      memcpy(&u, x + q * VW, sizeof u);
      const vu32 r = round_vec(u, pl, c, lean, mode, flush, sr ? rnd[q] : SPLAT(vu32, 0), fa);
      if (stream)
        MPEI_STREAM_STORE(y + q * VW, r);
      else
        memcpy(y + q * VW, &r, sizeof r);
    }
  }
}

/* Binary16 through the hardware conversions (F16C): vcvtps2ph with the
   rounding mode in its immediate, then vcvtph2ps, is IEEE rounding of binary32
   to binary16, subnormals included. The library's results are those bits for
   every lane that is not NaN and at most the largest finite value in
   magnitude (no overflow, no infinity: other groups take group()); its flags
   follow from them: a lane is inexact iff the result differs from the input,
   and underflows iff inexact and its magnitude is below the tininess bound.
   Used by kernel_body only for RNE and RZ (one tininess bound for both signs),
   binary16 itself, no saturation or flushing, and only while MXCSR has
   flush-to-zero and denormals-are-zero off and every exception masked
   (h16_usable).

   E5M2 has binary16's exponent range and 8 fewer significand bits: binary16
   rounded toward zero with a sticky bit in its last place (round to odd; the
   sticky bit from the conversions toward +inf and -inf differing) keeps at
   least 2 more bits than E5M2 everywhere, so rounding that 16-bit pattern at
   bit 8 (the last place of E5M2 for normal and subnormal values alike, the
   carry moving into the exponent field) is the one correct rounding. */
#if VW == 8
#define CVT_PS_PH(v, imm) _mm256_cvtps_ph((__m256)(v), (imm))
#else
#define CVT_PS_PH(v, imm) _mm512_cvtps_ph((__m512)(v), (imm))
#endif
#define FP16_MAX_BITS 0x477fe000u   /* 65504 */
#if VW == 8
#define MAX_EPU32(a, b) ((__typeof__(a))_mm256_max_epu32((__m256i)(a), (__m256i)(b)))
#else
#define MAX_EPU32(a, b) ((__typeof__(a))_mm512_max_epu32((__m512i)(a), (__m512i)(b)))
#endif

#define E5M2_MAX_BITS 0x47600000u   /* 57344 */
enum { H16_NONE, H16_FP16, H16_E5M2, H16_FPQ };

static inline int h16_usable(const mpei_plan32 *pl)
{
  if (pl->flush || (pl->mode != MPE_RNE && pl->mode != MPE_RZ))
    return H16_NONE;
  /* FTZ (bit 15) and DAZ (bit 6) off, the six exception masks (bits 7-12) set */
  if ((_mm_getcsr() & 0x9fc0u) != 0x1f80u)
    return H16_NONE;
  if (pl->eminb == 127 - 14 && pl->has_inf && !pl->saturate && pl->p == 11 && pl->max_bits == FP16_MAX_BITS)
    return H16_FP16;
#ifdef MPEI_ADD_RZ_PS
  /* the quantum add (conv_h16, H16_FPQ): the constant B of every lane at most
     the largest finite value is a finite binary32 */
  if (pl->dbase >= 1 && pl->eminb >= 1 && (int32_t)(pl->max_bits >> 23) + pl->dbase <= 254)
    return H16_FPQ;
#endif
  if (pl->eminb == 127 - 14 && pl->has_inf && !pl->saturate && pl->p == 3 && pl->max_bits == E5M2_MAX_BITS)
    return H16_E5M2;
  return H16_NONE;
}

/* lanes rounded to binary16 (kind H16_FP16) or E5M2 (H16_E5M2), as binary32 */
static inline __attribute__((always_inline)) vu32 conv_h16(vu32 u, const int mode, const int kind, const vu32 db,
                                                         const vu32 kb)
{
#ifdef MPEI_ADD_RZ_PS
  if (kind == H16_FPQ) {
    /* |x| rounded to a multiple of its quantum q = 2^(max(E, emin) - p + 1):
       (|x| + B) - B with B = 2^23 q, B's biased exponent max(E + dbase,
       eminb + dbase) (db, kb: those shifted into the exponent field). As
       |x| < 2^(E+1) <= B (p <= 23), the sum lies in [B, 2B], where the
       binary32 spacing is q: its one rounding (the mode's, embedded) is the
       rounding of |x| to a multiple of q, and the subtraction is exact
       (Sterbenz; the difference is a multiple of q >= 2^-149). Normal,
       subnormal and underflowing lanes alike (below q/2 the sum rounds to B:
       0; ties to even: B/q = 2^23 is even). */
    const vu32 a = u & 0x7fffffffu;
    const vu32 B = (vu32)MPEI_MAX_EPI32((vi32)((a & 0x7f800000u) + db), (vi32)kb);
    const vu32 t = mode == MPE_RNE ? MPEI_ADD_RNE_PS(a, B) : MPEI_ADD_RZ_PS(a, B);
    return MPEI_SUB_PS(t, B) | (u ^ a);
  }
#endif
  /* the rounding immediate spelled out in each call: clang wants a constant there */
  if (kind == H16_FP16) {
    if (mode == MPE_RNE)
      return (vu32)MPEI_CVTPH_PS(CVT_PS_PH(u, _MM_FROUND_TO_NEAREST_INT));
    return (vu32)MPEI_CVTPH_PS(CVT_PS_PH(u, _MM_FROUND_TO_ZERO));
  }
  hu16 h = (hu16)CVT_PS_PH(u, _MM_FROUND_TO_ZERO);
  if (mode == MPE_RNE) {
    const hu16 hu = (hu16)CVT_PS_PH(u, _MM_FROUND_TO_POS_INF), hd = (hu16)CVT_PS_PH(u, _MM_FROUND_TO_NEG_INF);
    h |= (hu16)(hu != hd) & 1;
    h += 0x7f + ((h >> 8) & 1);
  }
  h &= 0xff00;
  return (vu32)MPEI_CVTPH_PS(h);
}

/* a group with a NaN, infinite or too large lane, the general way; out of
   line, so that the loop of run_h16 keeps its values in registers */
static __attribute__((noinline)) void group_h16_other(float *y, const float *x, const mpei_plan32 *pl,
                                                      const leanc *c, const int lean, const int mode,
                                                      const int stream, flagacc *fa)
{
  const vu32 rnd[UNROLL] = { SPLAT(vu32, 0), SPLAT(vu32, 0), SPLAT(vu32, 0), SPLAT(vu32, 0) };
  if (mode == MPE_RNE) {
    if (stream)
      group(y, x, rnd, pl, c, lean, MPE_RNE, 0, 1, fa);
    else
      group(y, x, rnd, pl, c, lean, MPE_RNE, 0, 0, fa);
  } else {
    if (stream)
      group(y, x, rnd, pl, c, lean, MPE_RZ, 0, 1, fa);
    else
      group(y, x, rnd, pl, c, lean, MPE_RZ, 0, 0, fa);
  }
}

/* One group at y, x through the conversions (the flag work only while fl:
   once inexact and underflow are both raised it is wasted), or, with a lane
   the conversions cannot take, the general way (its flags into *other). */
static inline __attribute__((always_inline)) void group_h16(float *y, const float *x, const mpei_plan32 *pl,
                                                            const leanc *c, const int lean, const vu32 db,
                                                            const vu32 kb, const int mode, const int kind,
                                                            const int stream, const int fl, vu32 *inexact,
                                                            vu32 *underflow, flagacc *other)
{
  vu32 u[UNROLL], a[UNROLL];
#pragma GCC unroll 4
  for (int q = 0; q < UNROLL; q++) {
    memcpy(&u[q], x + q * VW, sizeof u[q]);
    a[q] = u[q] & 0x7fffffffu;
  }
  const vu32 m = MAX_EPU32(MAX_EPU32(a[0], a[1]), MAX_EPU32(a[2], a[3]));
  if (__builtin_expect(MPEI_ANY32((vi32)m > (vi32)c->max), 0)) {
    group_h16_other(y, x, pl, c, lean, mode, stream, other);
    return;
  }
#pragma GCC unroll 4
  for (int q = 0; q < UNROLL; q++) {
    const vu32 r = conv_h16(u[q], mode, kind, db, kb);
    if (fl) {
      const vu32 d = r ^ u[q];
      *inexact |= d;
      *underflow |= d & (vu32)((vi32)a[q] < (vi32)c->tbp);
    }
    if (stream)
      MPEI_STREAM_STORE(y + q * VW, r);
    else
      memcpy(y + q * VW, &r, sizeof r);
  }
}

/* Large arrays (il) go NPAGES 4 KiB stretches at a time, one group of each in
   turn: on the Sapphire Rapids core a single sequential stream of loads and
   streaming stores reached 0.75-0.8x memcpy at 256 MiB, four interleaved
   streams (glibc's large memcpy does the same) 1.0-1.1x. Every group is
   rounded on its own (y may be x), so the order changes neither results nor
   flags; element i keeps index base + i. */
#define PAGE_ELEMS 1024u
#define NPAGES 4u
#define SPAN (NPAGES * PAGE_ELEMS)

/* the whole groups from i on; returns where they end */
static inline __attribute__((always_inline)) size_t groups(float *y, const float *x, size_t i, size_t n,
                                                           const mpei_plan32 *pl, const leanc *c, const int lean,
                                                           uint64_t base, const int mode, const int flush,
                                                           const int stream, const int il, const int h16,
                                                           flagacc *fa)
{
  const int sr = mode == MPE_SR || mode == MPE_SR_EQ;
  if (h16) {
    const vu32 db = SPLAT(vu32, (uint32_t)pl->dbase << 23), kb = (vu32)c->K << 23;
    vu32 inexact = fa->inexact, underflow = fa->underflow;
    flagacc other = { SPLAT(vu32, 0), SPLAT(vu32, 0), SPLAT(vu32, 0), SPLAT(vu32, 0), SPLAT(vu32, 0), SPLAT(vu32, 0) };
#define RAISED (!MPEI_ALL32((vi32)((inexact | other.inexact) == 0)) && !MPEI_ALL32((vi32)((underflow | other.underflow) == 0)))
#define H16_AT(j, fl) group_h16(y + (j), x + (j), pl, c, lean, db, kb, mode, h16, stream, fl, &inexact, &underflow, &other)
    if (il) {
      for (; i + SPAN <= n; i += SPAN) {
        if (RAISED) {
          for (size_t g = 0; g < PAGE_ELEMS; g += UNROLL * VW)
#pragma GCC unroll 4
            for (unsigned p = 0; p < NPAGES; p++)
              H16_AT(i + p * PAGE_ELEMS + g, 0);
        } else {
          for (size_t g = 0; g < PAGE_ELEMS; g += UNROLL * VW)
#pragma GCC unroll 4
            for (unsigned p = 0; p < NPAGES; p++)
              H16_AT(i + p * PAGE_ELEMS + g, 1);
        }
      }
    }
    for (; i + UNROLL * VW <= n && !RAISED; i += UNROLL * VW)
      H16_AT(i, 1);
    for (; i + UNROLL * VW <= n; i += UNROLL * VW)
      H16_AT(i, 0);
#undef H16_AT
#undef RAISED
    fa->inexact = inexact | other.inexact;
    fa->underflow = underflow | other.underflow;
    fa->overflow |= other.overflow;
    fa->invalid |= other.invalid;
    fa->saturated |= other.saturated;
    fa->flushed |= other.flushed;
    return i;
  }
#define GROUP_AT(j)                                                   \
  do {                                                                \
    vu32 rnd[UNROLL];                                                   \
    if (sr)   /* random_block fills UNROLL = 4 vectors */             \
      random_block(pl, base + (j), rnd);                              \
    group(y + (j), x + (j), rnd, pl, c, lean, mode, flush, stream, fa); \
  } while (0)
/* SR: two groups' random words at once (random_block2) */
#define GROUP2_AT(j, k)                                                 \
  do {                                                                  \
    vu32 rA[UNROLL], rB[UNROLL];                                          \
    random_block2(pl, base + (j), base + (k), rA, rB);                  \
    group(y + (j), x + (j), rA, pl, c, lean, mode, flush, stream, fa);  \
    group(y + (k), x + (k), rB, pl, c, lean, mode, flush, stream, fa);  \
  } while (0)
  if (il) {
    for (; i + SPAN <= n; i += SPAN)
      for (size_t g = 0; g < PAGE_ELEMS; g += UNROLL * VW) {
        if (sr) {
#pragma GCC unroll 2
          for (unsigned p = 0; p < NPAGES; p += 2)
            GROUP2_AT(i + p * PAGE_ELEMS + g, i + (p + 1) * PAGE_ELEMS + g);
        } else {
#pragma GCC unroll 4
          for (unsigned p = 0; p < NPAGES; p++)
            GROUP_AT(i + p * PAGE_ELEMS + g);
        }
      }
  }
  if (sr)
    for (; i + 2 * UNROLL * VW <= n; i += 2 * UNROLL * VW)
      GROUP2_AT(i, i + UNROLL * VW);
  for (; i + UNROLL * VW <= n; i += UNROLL * VW)
    GROUP_AT(i);
#undef GROUP2_AT
#undef GROUP_AT
  return i;
}

static inline __attribute__((always_inline)) unsigned kernel_body(float *y, const float *x, size_t n,
                                                                  const mpei_plan32 *plan, uint64_t base,
                                                                  const int mode, const int flush, const int h16)
{
  const mpei_plan32 P = *plan;   /* a local copy: stores to y cannot alias it */
  const mpei_plan32 *pl = &P;
  leanc c;
  lean_init(&c, pl);
  const int lean = lean_usable(pl, mode);
  flagacc fa = { SPLAT(vu32, 0), SPLAT(vu32, 0), SPLAT(vu32, 0), SPLAT(vu32, 0), SPLAT(vu32, 0), SPLAT(vu32, 0) };
  const int sr = mode == MPE_SR || mode == MPE_SR_EQ;
  size_t i = 0;
  /* prologue: element index on a Philox block (SR), y on a vector boundary (streaming) */
  size_t k_idx = sr ? (size_t)((4 - (base & 3)) & 3) : 0;
  int stream = n * 4 >= STREAM_BYTES && y != x && ((uintptr_t)y & 3) == 0;
  size_t k_al = stream ? (VW - (((uintptr_t)y >> 2) & (VW - 1))) & (VW - 1) : 0;
  if (stream && sr && ((k_al - k_idx) & 3) != 0)
    stream = 0;
  size_t k = stream ? k_al : k_idx;
  if (k > n)
    k = n;
  while (i < k) {
    size_t len = k - i < VW ? k - i : VW;
    partial(y + i, x + i, len, pl, &c, lean, base + i, mode, flush, &fa);
    i += len;
  }
  const int il = n * 4 >= STREAM_BYTES;   /* interleaved stretches (groups) */
  if (stream) {
    i = groups(y, x, i, n, pl, &c, lean, base, mode, flush, 1, il, h16, &fa);
    MPEI_STREAM_FENCE();
  } else
    i = groups(y, x, i, n, pl, &c, lean, base, mode, flush, 0, il, h16, &fa);
  for (; i + VW <= n; i += VW) {
    vu32 u;
    memcpy(&u, x + i, sizeof u);
    const vu32 r = round_vec(u, pl, &c, lean, mode, flush, random_lanes(pl, base + i, mode), &fa);
    memcpy(y + i, &r, sizeof r);
  }
  if (i < n)
    partial(y + i, x + i, n - i, pl, &c, lean, base + i, mode, flush, &fa);
  return flags_of(fa);
}

#define ROUND32_MODES(flush)                                                     \
  switch (pl->mode) {                                                            \
  case MPE_RNE: return kernel_body(y, x, n, pl, base, MPE_RNE, flush, 0);        \
  case MPE_RNA: return kernel_body(y, x, n, pl, base, MPE_RNA, flush, 0);        \
  case MPE_RZ: return kernel_body(y, x, n, pl, base, MPE_RZ, flush, 0);          \
  case MPE_RU: return kernel_body(y, x, n, pl, base, MPE_RU, flush, 0);          \
  case MPE_RD: return kernel_body(y, x, n, pl, base, MPE_RD, flush, 0);          \
  case MPE_RO: return kernel_body(y, x, n, pl, base, MPE_RO, flush, 0);          \
  case MPE_SR: return kernel_body(y, x, n, pl, base, MPE_SR, flush, 0);          \
  default: return kernel_body(y, x, n, pl, base, MPE_SR_EQ, flush, 0);           \
  }

unsigned MPEI_ISA_FN(mpei_round32)(float *y, const float *x, size_t n, const mpei_plan32 *pl, uint64_t base)
{
  switch (h16_usable(pl)) {
  case H16_FP16:
    return pl->mode == MPE_RNE ? kernel_body(y, x, n, pl, base, MPE_RNE, 0, H16_FP16)
                               : kernel_body(y, x, n, pl, base, MPE_RZ, 0, H16_FP16);
  case H16_E5M2:
    return pl->mode == MPE_RNE ? kernel_body(y, x, n, pl, base, MPE_RNE, 0, H16_E5M2)
                               : kernel_body(y, x, n, pl, base, MPE_RZ, 0, H16_E5M2);
#ifdef MPEI_ADD_RZ_PS
  case H16_FPQ:
    return pl->mode == MPE_RNE ? kernel_body(y, x, n, pl, base, MPE_RNE, 0, H16_FPQ)
                               : kernel_body(y, x, n, pl, base, MPE_RZ, 0, H16_FPQ);
#endif
  default:
    break;
  }
  if (pl->flush)
    ROUND32_MODES(1)
  ROUND32_MODES(0)
}
