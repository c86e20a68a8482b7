/* Arm BF16 dot products (A64 BFDOT and BFMMLA, Advanced SIMD and SVE, FEAT_BF16 and
   FEAT_EBF16) as tensor-core models (kind MPE_TC_ARM_BFDOT, mpe_tc_model_get(3), "Arm
   models").

   The portable engine follows the Arm ARM's pseudo-code step by step: BFDotAdd, with
   FPCR.EBF = 0 BFMulH, FPAdd_BF16 and BFRound (round to odd, inputs and results below
   2^-126 flushed, overflow to inf), with EBF = 1 FPDot and FPAdd under FPCR (RMode, FZ,
   FIZ, AH, FPRoundBase). Values are exact integers times powers of two; a sum keeps the
   smaller addend's bits down to 120 bits below the larger one's leading bit and folds
   the rest into one sticky unit, far below any rounding point. It is the oracle of the
   SIMD kernels (tc_arm_kernel.h), which compute the same steps with binary32/binary64
   arithmetic and error-free sums. */
#include "config.h"
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "tc_impl.h"
#include "isa.h"
#include "tc_arm_kernel_api.h"
#include "mpei_fenv.h"

/* ------------------------------------------------------------------ exact values */

/* (-1)^neg * mag * 2^exp, mag != 0 */
typedef struct {
  int neg;
  unsigned __int128 mag;
  int exp;
} xnum;

static xnum x_of(double v)   /* v finite, non-zero */
{
  int e;
  double f = frexp(fabs(v), &e);
  xnum r = { v < 0, (unsigned __int128)(uint64_t)ldexp(f, 53), e - 53 };
  return r;
}

static int x_msb(unsigned __int128 m)
{
  uint64_t hi = (uint64_t)(m >> 64);
  return hi ? 127 - __builtin_clzll(hi) : 63 - __builtin_clzll((uint64_t)m);
}

static int x_top(xnum v)   /* |v| in [2^t, 2^(t+1)) */
{
  return x_msb(v.mag) + v.exp;
}

static xnum x_mul(double a, double b)   /* exact: two 53-bit significands */
{
  xnum x = x_of(a), y = x_of(b);
  xnum r = { x.neg != y.neg, x.mag * y.mag, x.exp + y.exp };
  return r;
}

/* x + y; *zero set when the sum is exactly zero. Bits of the smaller addend more
   than 120 below the larger one's leading bit become one sticky unit. */
static xnum x_add(xnum x, xnum y, int *zero)
{
  const int tx = x_top(x), ty = x_top(y);
  const int base = (tx > ty ? tx : ty) - 120;
  unsigned __int128 v[2];
  const xnum *in[2] = { &x, &y };
  for (int i = 0; i < 2; i++) {
    const int sh = in[i]->exp - base;
    const unsigned __int128 m = in[i]->mag;
    if (sh >= 0)
      v[i] = m << sh;
    else if (-sh >= 128)
      v[i] = 1;
    else
      v[i] = (m >> -sh) | ((m & (((unsigned __int128)1 << -sh) - 1)) != 0);
  }
  xnum r = { x.neg, 0, base };
  if (x.neg == y.neg)
    r.mag = v[0] + v[1];
  else if (v[0] >= v[1])
    r.mag = v[0] - v[1];
  else {
    r.mag = v[1] - v[0];
    r.neg = y.neg;
  }
  *zero = r.mag == 0;
  return r;
}

enum { FLUSH_BEFORE = 1, FLUSH_AFTER = 2, OVF_INF = 4 };

/* v rounded to binary32 under mode (MPE_RNE, RU, RD, RZ, RO). FLUSH_BEFORE: |v| below
   2^-126 gives a zero of v's sign (BFRound; FPRoundBase with FZ and AH = 0); FLUSH_AFTER:
   so does v rounded to 24 bits with an unbounded exponent below 2^-126 (FZ with AH = 1);
   OVF_INF: overflow gives inf whatever the mode (BFRound), otherwise as FPRoundBase
   (RZ and the directed mode toward zero give the largest finite). */
static float x_round(xnum v, mpe_round mode, int how)
{
  const int t = x_top(v);
  const float zero = v.neg ? -0.0f : 0.0f;
  if ((how & FLUSH_BEFORE) && t < -126)
    return zero;
  int inexact = 0;
  for (int pass = (how & FLUSH_AFTER) ? 0 : 1; pass < 2; pass++) {
    const int lsb = (pass == 0 || t > -126 ? t : -126) - 23;
    const int sh = lsb - v.exp;
    unsigned __int128 kept, rem = 0, half = 0;
    if (sh <= 0) {
      kept = v.mag << -sh;
    } else if (sh >= 128) {
      kept = 0;
      rem = v.mag;
      half = (unsigned __int128)1 << 127;   /* v.mag < 2^121: below half */
    } else {
      kept = v.mag >> sh;
      rem = v.mag & (((unsigned __int128)1 << sh) - 1);
      half = (unsigned __int128)1 << (sh - 1);
    }
    inexact = rem != 0;
    int up = 0;
    switch (mode) {
    case MPE_RNE: up = rem > half || (rem == half && inexact && (kept & 1)); break;
    case MPE_RU: up = inexact && !v.neg; break;
    case MPE_RD: up = inexact && v.neg; break;
    case MPE_RO: kept |= (unsigned)inexact; break;
    default: break;   /* MPE_RZ */
    }
    kept += (unsigned)up;
    const double r = ldexp((double)(uint64_t)kept, lsb);
    if (pass == 0) {
      if (r < 0x1p-126)
        return zero;   /* tiny after rounding: flushed */
      continue;
    }
    if (r >= 0x1p128) {
      const int inf = (how & OVF_INF) || mode == MPE_RNE || (mode == MPE_RU && !v.neg) ||
                      (mode == MPE_RD && v.neg);
      const float o = inf ? INFINITY : 0x1.fffffep127f;
      return v.neg ? -o : o;
    }
    return (float)(v.neg ? -r : r);
  }
  return zero;   /* not reached */
}

/* ------------------------------------------------------------------ FPCR.EBF = 0 */

/* BFUnpack: a denormal (binary32 or bfloat16) reads as a zero of its sign */
static double bf_unpack(double x)
{
  return x != 0 && fabs(x) < 0x1p-126 ? copysign(0.0, x) : x;
}

static float bf_mulh(double a, double b)
{
  a = bf_unpack(a);
  b = bf_unpack(b);
  const int neg = (signbit(a) != 0) != (signbit(b) != 0);
  if (isnan(a) || isnan(b) || (isinf(a) && b == 0) || (a == 0 && isinf(b)))
    return NAN;
  if (isinf(a) || isinf(b))
    return neg ? -INFINITY : INFINITY;
  if (a == 0 || b == 0)
    return neg ? -0.0f : 0.0f;
  return x_round(x_mul(a, b), MPE_RO, FLUSH_BEFORE | OVF_INF);
}

/* FPAdd_BF16 and FPAdd share their special cases; rounding: mode, how; the sign of
   an exact zero sum: negative under MPE_RD only */
static float add_special(double x, double y, mpe_round mode, int how)
{
  if (isnan(x) || isnan(y) || (isinf(x) && isinf(y) && (x < 0) != (y < 0)))
    return NAN;
  if (isinf(x) || isinf(y))
    return (float)(isinf(x) ? x : y);
  if (x == 0 && y == 0 && (signbit(x) != 0) == (signbit(y) != 0))
    return (float)x;
  if (x == 0 && y == 0)
    return mode == MPE_RD ? -0.0f : 0.0f;
  if (x == 0 || y == 0)
    return x_round(x_of(x == 0 ? y : x), mode, how);
  int zero;
  xnum s = x_add(x_of(x), x_of(y), &zero);
  if (zero)
    return mode == MPE_RD ? -0.0f : 0.0f;
  return x_round(s, mode, how);
}

static float bf_dot_add0(float c, double a0, double a1, double b0, double b1)
{
  const float p = add_special(bf_mulh(a0, b0), bf_mulh(a1, b1), MPE_RO, FLUSH_BEFORE | OVF_INF);
  return add_special(bf_unpack(c), bf_unpack(p), MPE_RO, FLUSH_BEFORE | OVF_INF);
}

/* ------------------------------------------------------------------ FPCR.EBF = 1 */

typedef struct {
  mpe_round mode;
  int in_flush;   /* FPUnpackBase: FZ with AH = 0, or FIZ */
  int how;        /* FLUSH_BEFORE (FZ, AH = 0) or FLUSH_AFTER (FZ, AH = 1) */
} fpcr_rules;

static fpcr_rules rules_of(int fpcr)
{
  static const mpe_round rm[4] = { MPE_RNE, MPE_RU, MPE_RD, MPE_RZ };
  const int ah = (fpcr & MPE_TC_FPCR_AH) != 0, fz = (fpcr & MPE_TC_FPCR_FZ) != 0;
  fpcr_rules r = { rm[(fpcr >> 22) & 3], (fz && !ah) || (fpcr & MPE_TC_FPCR_FIZ) != 0,
                   fz ? (ah ? FLUSH_AFTER : FLUSH_BEFORE) : 0 };
  return r;
}

static double in_flush(double x, const fpcr_rules *r)
{
  return r->in_flush ? bf_unpack(x) : x;
}

/* FPDot: a0*b0 + a1*b1 with one rounding */
static float fp_dot(double a0, double a1, double b0, double b1, const fpcr_rules *r)
{
  a0 = in_flush(a0, r); a1 = in_flush(a1, r); b0 = in_flush(b0, r); b1 = in_flush(b1, r);
  if (isnan(a0) || isnan(a1) || isnan(b0) || isnan(b1))
    return NAN;
  const int inv_a = (isinf(a0) && b0 == 0) || (a0 == 0 && isinf(b0));
  const int inv_b = (isinf(a1) && b1 == 0) || (a1 == 0 && isinf(b1));
  const int sa = (signbit(a0) != 0) != (signbit(b0) != 0), sb = (signbit(a1) != 0) != (signbit(b1) != 0);
  const int infa = isinf(a0) || isinf(b0), infb = isinf(a1) || isinf(b1);
  if (inv_a || inv_b || (infa && infb && sa != sb))
    return NAN;
  if (infa || infb)
    return (infa ? sa : sb) ? -INFINITY : INFINITY;
  const int za = a0 == 0 || b0 == 0, zb = a1 == 0 || b1 == 0;
  if (za && zb && sa == sb)
    return sa ? -0.0f : 0.0f;
  if (za && zb)
    return r->mode == MPE_RD ? -0.0f : 0.0f;
  if (za || zb)
    return x_round(za ? x_mul(a1, b1) : x_mul(a0, b0), r->mode, r->how);
  int zero;
  xnum s = x_add(x_mul(a0, b0), x_mul(a1, b1), &zero);
  if (zero)
    return r->mode == MPE_RD ? -0.0f : 0.0f;
  return x_round(s, r->mode, r->how);
}

static float bf_dot_add1(float c, double a0, double a1, double b0, double b1, const fpcr_rules *r)
{
  const float p = fp_dot(a0, a1, b0, b1, r);
  return add_special(in_flush(c, r), in_flush(p, r), r->mode, r->how);
}

/* ------------------------------------------------------------------ engine */

double mpei_tc_arm_dot(const struct mpe_tc_model *m, const double *a, const double *b, long bs, int k,
                       double c)
{
  const int L = m->p.block, kp = (k + L - 1) / L * L;
  const int ebf = (m->p.fpcr & MPE_TC_FPCR_EBF) != 0;
  const fpcr_rules r = rules_of(m->p.fpcr);
  float d = (float)c;
  for (int l = 0; l < kp; l += 2) {
    /* K padded with zero elements to whole instructions */
    const double a0 = l < k ? a[l] : 0.0, b0 = l < k ? b[(long)l * bs] : 0.0;
    const double a1 = l + 1 < k ? a[l + 1] : 0.0, b1 = l + 1 < k ? b[(long)(l + 1) * bs] : 0.0;
    d = ebf ? bf_dot_add1(d, a0, a1, b0, b1, &r) : bf_dot_add0(d, a0, a1, b0, b1);
  }
  return d;
}

/* the FPCR bits that exist (AArch64): FIZ, AH, NEP, the trap enables, EBF, FZ16,
   RMode, FZ, DN, AHP; the models read EBF, and with it RMode, FZ, FIZ and AH */
#define FPCR_BITS 0x07c8bf07

int mpei_tc_arm_custom(mpe_tc_model **out, const mpe_tc_params *p)
{
  if (p->in != MPE_BF16 || (p->block != 2 && p->block != 4) || (p->fpcr & ~FPCR_BITS) != 0)
    return MPE_EINVAL;
  if (p->instr != MPE_TC_INSTR_NONE && p->instr != MPE_TC_ARM_BFDOT_I && p->instr != MPE_TC_ARM_BFMMLA)
    return MPE_EINVAL;
  if (p->pair_order || p->flush)
    return MPE_EINVAL;   /* the CPU chain's fields */
  mpe_tc_params q = *p;
  q.round_fp32 = (p->fpcr & MPE_TC_FPCR_EBF) ? rules_of(p->fpcr).mode : MPE_RO;
  return mpei_tc_custom_new(out, &q, 0);
}

/* ------------------------------------------------------------------ driver */

/* operand element (i, l) as the exact input value (binary32) */
static float arm_load(const struct mpe_tc_model *m, const mpei_tc_opnd *x, int transpose, int i, int l)
{
  const long idx = transpose ? (long)l * x->rs + (long)i * x->cs : (long)i * x->rs + (long)l * x->cs;
  if (x->t == MPE_BF16)
    return mpei_u2f((uint32_t)((const uint16_t *)x->p)[idx] << 16);
  return (float)mpei_tc_load(m, x->p, x->t, (size_t)idx);
}

/* A packed by rows (Kp values each) and B in panels of vw columns ((l, j) of panel jp at
   (jp * Kp + l) * vw + j), zero beyond K and N; the inputs flushed as the model reads
   them (flush: below 2^-126 a zero of the sign) */
static void arm_pack(const struct mpe_tc_model *m, const mpei_tc_opnd *x, int transpose, int rows, int K,
                     int Kp, int w, int flush, float *out)
{
  const int np = (rows + w - 1) / w;
#pragma omp parallel for schedule(static) if ((long)rows * K > 65536)
  for (int p = 0; p < np; p++) {
    MPEI_FENV_GUARD();   /* a worker of the team: the library's environment (mpemu(3)) */
    for (int l = 0; l < Kp; l++)
      for (int r = 0; r < w; r++) {
        const int i = p * w + r;
        float v = i < rows && l < K ? arm_load(m, x, transpose, i, l) : 0.0f;
        if (flush && v != 0 && fabsf(v) < 0x1p-126f)
          v = copysignf(0.0f, v);
        out[((size_t)p * Kp + l) * w + r] = v;
      }
  }
}

int mpei_tc_arm_run(const struct mpe_tc_model *m, int M, int N, int K, const mpei_tc_opnd *a,
                    const mpei_tc_opnd *b, const mpei_tc_opnd *c, float *acc)
{
  const mpei_isa_kernels *isa = mpei_isa();   /* the SIMD level's kernels (emu/isa.c) */
  const mpei_tc_arm_fn fn = isa->tc_arm;
  const int vw = isa->tc_arm_vw;
  const int fpcr = m->p.fpcr, ebf = (fpcr & MPE_TC_FPCR_EBF) != 0;
  /* FPCR.AH = 1 (flushing after rounding) with EBF: the portable engine */
  if (!fn || K == 0 || (ebf && (fpcr & MPE_TC_FPCR_AH)))
    return MPE_EUNSUP;
  const fpcr_rules ru = rules_of(fpcr);
  const mpei_tc_arm_kp kp = { 0, ebf, ru.mode, ebf && ru.in_flush, ebf && (ru.how & FLUSH_BEFORE), 0 };
  const int L = m->p.block, Kp = (K + L - 1) / L * L, npan = (N + vw - 1) / vw;
  const int R = MPEI_TC_ARM_MR, ngrp = (M + R - 1) / R;
  const int flush_in = !ebf || ru.in_flush;
  /* A by rows, whole groups of R (the rows past M zero), then the B panels */
  const size_t asz = (size_t)ngrp * R * Kp;
  float *ap = calloc(asz + (size_t)npan * vw * Kp, sizeof(float));
  if (!ap)
    return MPE_ENOMEM;
  float *bp = ap + asz;
  arm_pack(m, a, 0, M, K, Kp, 1, flush_in, ap);
  arm_pack(m, b, 1, N, K, Kp, vw, flush_in, bp);
  mpei_tc_arm_kp k2 = kp;
  k2.npairs = Kp / 2;
  if (ebf) {
    /* products of values with exponents in [-63, 62] lie in [2^-126, 2^126): exact in
       binary32 */
    int ok = 1;
    const size_t na = asz + (size_t)npan * vw * Kp;
#pragma omp parallel for schedule(static) reduction(&&: ok) if (na > 262144)
    for (size_t t = 0; t < na; t++) {
      const float v = fabsf(ap[t]);
      ok = ok && (v == 0 || (v >= 0x1p-63f && v < 0x1p63f));
    }
    k2.prod32 = ok;
  }
  int r = MPE_OK;
  /* panel-major: a B panel (Kp x vw) stays in cache across the rows of A */
#pragma omp parallel for collapse(2) schedule(dynamic) if ((long)M * N * K > 100000)
  for (int jp = 0; jp < npan; jp++)
    for (int g = 0; g < ngrp; g++) {
      MPEI_FENV_GUARD();
      float cv[MPEI_TC_ARM_MR * MPEI_TC_ARM_AVX512_VW];
      for (int rr = 0; rr < R; rr++)
        for (int t = 0; t < vw; t++) {
          const int i = g * R + rr, j = jp * vw + t;
          float v = 0.0f;
          if (i < M && j < N && c && c->p)
            v = ((const float *)c->p)[(long)i * c->rs + (long)j * c->cs];
          cv[rr * vw + t] = !ebf ? (float)bf_unpack(v) : v;   /* FPAdd_BF16 reads C so */
        }
      fn(ap + (size_t)g * R * Kp, Kp, bp + (size_t)jp * Kp * vw, cv, &k2);
      for (int rr = 0; rr < R && g * R + rr < M; rr++)
        for (int t = 0; t < vw && jp * vw + t < N; t++) {
          const int i = g * R + rr, j = jp * vw + t;
          float v = cv[rr * vw + t];
          if (!ebf && !isfinite(v)) {   /* maybe an overflow round-to-odd keeps finite */
            double d = c && c->p ? ((const float *)c->p)[(long)i * c->rs + (long)j * c->cs] : 0.0;
            const float *ar = ap + (size_t)i * Kp;
            for (int l = 0; l < Kp; l += 2) {
              const float *bq = bp + (size_t)jp * Kp * vw + (size_t)l * vw + t;
              d = bf_dot_add0((float)d, ar[l], ar[l + 1], bq[0], bq[vw]);
            }
            v = (float)d;
          }
          acc[(size_t)i * N + j] = isnan(v) ? mpei_u2f(0x7fffffffu) : v;
        }
    }
  free(ap);
  return r;
}
