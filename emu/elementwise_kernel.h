/* The element-wise kernels, written once with GCC vector extensions on VW
   binary64 lanes and included, after an instruction-set header (lib/isa_*.h),
   by elementwise_avx2.c (VW = 4) and elementwise_avx512.c (VW = 8), each
   compiled with its own -m flags.

   Every function here computes, bit for bit, what the portable code in
   elementwise.c computes (eval_portable, then mpei_round_ref of the binary64
   value); check_elementwise compares them on random and boundary inputs for
   every operation, format and mode. Tails go through the same vector code on
   zero-padded copies; the flags of the padding lanes are masked off. */
#include <float.h>
#include <math.h>
#include <stdint.h>
#include <string.h>
#include "mpei_round_core.h"

#define VW (MPEI_VBYTES / 8)
#define SLEEF_EXP(v) ((vd)MPEI_SLEEF_EXP(v))
#define SLEEF_LOG(v) ((vd)MPEI_SLEEF_LOG(v))
#define SLEEF_TANH(v) ((vd)MPEI_SLEEF_TANH(v))
#define VSQRT(v) MPEI_SQRT_PD(v)
#define VFMA(a, b, c) MPEI_FMA_PD(a, b, c)
#define MULU32(a, b) MPEI_MULU32(a, b)
#define ALL64(m) MPEI_ALL64(m)
#define ANY64(m) MPEI_ANY64(m)
#define ALL32(m) MPEI_ALL32(m)
#define VFMAF(a, b, c) MPEI_FMA_PS(a, b, c)   /* on 2*VW binary32 lanes */
#define VSQRTF(v) MPEI_SQRT_PS(v)
#define WIDEN(f) ((vd)MPEI_CVT_PS_PD(f))
#define NARROW(d) ((vf)MPEI_CVT_PD_PS(d))

typedef double vd __attribute__((vector_size(VW * 8)));
typedef uint64_t vq __attribute__((vector_size(VW * 8)));
typedef int64_t vs __attribute__((vector_size(VW * 8)));
typedef float vf __attribute__((vector_size(VW * 4)));
typedef uint32_t vu32 __attribute__((vector_size(VW * 4)));
typedef int32_t vi32 __attribute__((vector_size(VW * 4)));

#define AI inline __attribute__((always_inline))
#define SPQ(v) ((vq){} + (uint64_t)(v))
#define SPS(v) ((vs){} + (int64_t)(v))
#define SPD(v) spd_(v)
#define SELQ(m, a, b) ((((vq)(m)) & (vq)(a)) | (~((vq)(m)) & (vq)(b)))
#define SELS(m, a, b) ((vs)SELQ((m), (vq)(a), (vq)(b)))
#define SELD(m, a, b) ((vd)SELQ((m), (vq)(a), (vq)(b)))

static const uint64_t ABS64 = 0x7fffffffffffffffull, SIGN64 = 0x8000000000000000ull;
static const uint64_t QNAN64 = 0x7ff8000000000000ull, INF64 = 0x7ff0000000000000ull;

static AI vd spd_(double v)   /* a splat that keeps -0 */
{
  uint64_t u;
  memcpy(&u, &v, 8);
  return (vd)SPQ(u);
}
static AI vd widen(vf f) { return WIDEN(f); }
static AI vf loadf(const float *p) { vf f; memcpy(&f, p, sizeof f); return f; }
static AI vd vabs(vd v) { return (vd)((vq)v & ABS64); }
static AI vs isnan_d(vd v) { return v != v; }
static AI vs isfin_d(vd v) { return (vs)(((vq)v & ABS64) < INF64); }

/* x rounded to odd at 53 bits, from s (nearest) and err = x - s (its sign);
   lanes outside `ok` keep s (as mpei_ro_adjust: the odd neighbour of x's
   side is (s truncated toward zero) | 1) */
static AI vd ro_adjust(vd s, vd err, vs ok)
{
  vq u = (vq)s;
  vs below = (vs)(u ^ (vq)err) < 0;   /* |x| < |s| */
  vq t = (u + (vq)below) | 1;
  return SELD(ok & (err != 0), t, s);
}

/* a + b rounded to odd with IEEE's sign of an exact zero sum; plain a + b
   where an operand is not finite (two binary32-range values, or a binary32
   product and a binary32, never overflow binary64: s is finite exactly when
   a and b are) */
static AI vd ro_sum(vd a, vd b, mpe_round r)
{
  vd s = a + b;
  vd bb = s - a;
  vd e = (a - (s - bb)) + (b - bb);
  s = ro_adjust(s, e, isfin_d(s));
  if (r == MPE_RD) {   /* otherwise the hardware's +0 / common sign is IEEE's */
    vs bothz = (a == 0) & (b == 0) & (vs)(((vq)a ^ (vq)b) < SIGN64);
    s = SELD((s == 0) & ~bothz, SPD(-0.0), s);
  }
  return s;
}

static AI vd ro_div(vd a, vd b)
{
  vd q = a / b;
  vd rem = VFMA(-q, b, a);
  vd err = SELD(b > 0, rem, -rem);
  return ro_adjust(q, err, isfin_d(q) & (q != 0));
}

typedef struct { vs invalid, divz; } evalfl;

/* binary32 signalling NaNs, as 64-bit lane masks */
static AI vs snan_f(vf f)
{
  vu32 u = (vu32)f;
  vi32 m = ((u & 0x7f800000u) == 0x7f800000u) & ((u & 0x3fffffu) != 0) & ((u & 0x400000u) == 0);
  return __builtin_convertvector(m, vs);
}

static AI vd qnan_of(vd v) { return (vd)(((vq)v & SIGN64) | QNAN64); }

/* NaN lanes of d (only for vectors that have one): the rule and the invalid
   flag of mpei_ew_nan_fix */
static AI vd nan_vec(const int op, const mpei_ew_args *a, vf xf, vf yf, vf zf, vd d, vs *invalid)
{
  const int nops = op == EW_FMA ? 3 : (op <= EW_DIV || op == EW_SCALE) ? 2 : 1;
  const vf af = (vf){} + a->alpha;
  const vf y2 = op == EW_SCALE ? af : yf;
  const vd x = widen(xf), y = widen(y2), z = widen(zf);
  const vs zero = SPS(0);
  vs nx = isnan_d(x), ny = nops > 1 ? isnan_d(y) : zero, nz = nops > 2 ? isnan_d(z) : zero;
  vs sn = snan_f(xf) | (nops > 1 ? snan_f(y2) : zero) | (nops > 2 ? snan_f(zf) : zero);
  vd nanv = SELD(nx, qnan_of(x), SELD(ny, qnan_of(y), SELD(nz, qnan_of(z), SPQ(QNAN64))));
  vs isn = isnan_d(d);
  if (op == EW_EXP || op == EW_TANH || op == EW_SIGMOID)
    *invalid |= isn & sn;
  else
    *invalid |= isn & (~(nx | ny | nz) | sn);
  return SELD(isn, nanv, d);
}

/* r: the SLEEF value (exp, log, tanh: of x; sigmoid: e^-x), computed by a
   separate pass so that this code holds its constants in registers */
static AI vd eval_vec(const int op, const mpei_ew_args *a, vf xf, vf yf, vf zf, vd r, evalfl *fl)
{
  const vd x = widen(xf), zero = SPD(0);
  vd d;
  switch (op) {
  case EW_ADD: case EW_SUB: {
    vd y = widen(yf);
    d = ro_sum(x, op == EW_SUB ? -y : y, a->round);
    break;
  }
  case EW_MUL: case EW_SCALE: {
    vd y = op == EW_MUL ? widen(yf) : SPD(a->alpha);
    d = x * y;   /* exact */
    break;
  }
  case EW_FMA: {
    vd y = widen(yf), z = widen(zf);
    vd p = x * y;   /* exact */
    d = ro_sum(p, z, a->round);
    break;
  }
  case EW_DIV: {
    vd y = widen(yf);
    fl->divz |= (y == 0) & (x != 0) & isfin_d(x);
    d = ro_div(x, y);
    break;
  }
  case EW_RECIP:
    fl->divz |= x == 0;
    d = ro_div(SPD(1), x);
    break;
  case EW_SQRT: {
    vd s = VSQRT(x);
    s = ro_adjust(s, VFMA(-s, s, x), isfin_d(s) & (s != 0));
    d = SELD(x < 0, SPQ(QNAN64), s);
    break;
  }
  /* the stand-ins: only when a lane needs one (rare) */
  case EW_EXP: {
    d = r;
    if (ANY64((vabs(x) > 709.0) | (vabs(x) < 0x1p-40) | (r == 1.0))) {
      vs c3 = (x != 0) & ((vabs(x) < 0x1p-40) | (r == 1.0));
      r = SELD(c3, SELD(x > 0, SPD(1 + 0x1p-52), SPD(1 - 0x1p-53)), r);
      r = SELD(x < -745.0, SELD(x == -INFINITY, zero, SPD(0x1p-1074)), r);
      d = SELD(x > 709.0, SELD(x == INFINITY, SPD(INFINITY), SPD(DBL_MAX)), r);
    }
    break;
  }
  case EW_LOG:
    d = r;
    if (ANY64(x <= 0)) {
      fl->divz |= x == 0;
      d = SELD(x < 0, SPQ(QNAN64), SELD(x == 0, SPD(-INFINITY), r));
    }
    break;
  case EW_TANH: {
    d = r;
    if (ANY64((vabs(x) >= (double)9.7f) | (vabs(x) < 0x1p-26) | (r == x))) {
      vs c2 = (x != 0) & ((vabs(x) < 0x1p-26) | (r == x));
      r = SELD(c2, (vd)((vq)x - 1), r);
      vd one = SELD(x > 0, SPD(1.0), SPD(-1.0));
      vd near1 = SELD(x > 0, SPD(1 - 0x1p-53), SPD(-(1 - 0x1p-53)));
      d = SELD(vabs(x) >= (double)9.7f, SELD(vabs(x) == INFINITY, one, near1), r);
    }
    break;
  }
  default: { /* EW_SIGMOID */
    vd q = 1.0 / (1.0 + r);
    d = q;
    if (ANY64((q == 1.0) | (q == 0.5) | (vabs(x) < 0x1p-45) | (vabs(x) >= 37.0))) {
      vd half_side = SELD(x > 0, SPD(0.5 + 0x1p-53), SPD(0.5 - 0x1p-54));
      q = SELD(q == 1.0, SPD(1 - 0x1p-53), SELD((q == 0.5) & (x != 0), half_side, q));
      q = SELD((x != 0) & (vabs(x) < 0x1p-45), half_side, q);
      q = SELD(x < -708.0, SELD(x == -INFINITY, zero, SPD(0x1p-1074)), q);
      d = SELD(x >= 37.0, SELD(x == INFINITY, SPD(1.0), SPD(1 - 0x1p-53)), q);
    }
    break;
  }
  }
  if (ANY64(isnan_d(d)))
    d = nan_vec(op, a, xf, yf, zf, d, &fl->invalid);
  return d;
}

static AI unsigned eval_body(double *d, const mpei_ew_args *args, size_t i0, size_t n, const int op)
{
  const mpei_ew_args A = *args;   /* a local copy: stores to d cannot alias it */
  const mpei_ew_args *a = &A;
  const float *x = a->x + i0;
  const float *y = (op <= EW_DIV || op == EW_FMA) ? a->y + i0 : NULL;
  const float *z = op == EW_FMA ? a->z + i0 : NULL;
  const vf fz = {};
  const int sleef = op == EW_EXP || op == EW_LOG || op == EW_TANH || op == EW_SIGMOID;
  evalfl fl = { SPS(0), SPS(0) };
  size_t i = 0;
  if (sleef) {
    for (; i + VW <= n; i += VW) {
      vd v = widen(loadf(x + i)), r;
      switch (op) {
      case EW_EXP: r = SLEEF_EXP(v); break;
      case EW_LOG: r = SLEEF_LOG(v); break;
      case EW_TANH: r = SLEEF_TANH(v); break;
      default: r = SLEEF_EXP(-v); break;
      }
      memcpy(d + i, &r, sizeof r);
    }
    i = 0;
  }
  for (; i + VW <= n; i += VW) {
    vd r = SPD(0);
    if (sleef)
      memcpy(&r, d + i, sizeof r);
    r = eval_vec(op, a, loadf(x + i), y ? loadf(y + i) : fz, z ? loadf(z + i) : fz, r, &fl);
    memcpy(d + i, &r, sizeof r);
  }
  if (i < n) {
    size_t len = n - i;
    float bx[VW] = { 0 }, by[VW] = { 0 }, bz[VW] = { 0 };
    memcpy(bx, x + i, len * 4);
    if (y)
      memcpy(by, y + i, len * 4);
    if (z)
      memcpy(bz, z + i, len * 4);
    evalfl tf = { SPS(0), SPS(0) };
    vd v = widen(loadf(bx)), r = SPD(0);
    switch (op) {
    case EW_EXP: r = SLEEF_EXP(v); break;
    case EW_LOG: r = SLEEF_LOG(v); break;
    case EW_TANH: r = SLEEF_TANH(v); break;
    case EW_SIGMOID: r = SLEEF_EXP(-v); break;
    default: break;
    }
    r = eval_vec(op, a, loadf(bx), loadf(by), loadf(bz), r, &tf);
    vs valid;
    for (int k = 0; k < VW; k++)
      valid[k] = (size_t)k < len ? -1 : 0;
    fl.invalid |= tf.invalid & valid;
    fl.divz |= tf.divz & valid;
    memcpy(d + i, &r, len * 8);
  }
  vs none = SPS(0);
  unsigned f = 0;
  if (memcmp(&fl.divz, &none, sizeof none))
    f |= MPE_FLAG_DIVBYZERO;
  if (memcmp(&fl.invalid, &none, sizeof none))
    f |= MPE_FLAG_INVALID;
  return f;
}

static unsigned eval_entry(double *d, const mpei_ew_args *a, size_t i0, size_t n)
{
  switch (a->op) {
  case EW_ADD: return eval_body(d, a, i0, n, EW_ADD);
  case EW_SUB: return eval_body(d, a, i0, n, EW_SUB);
  case EW_MUL: return eval_body(d, a, i0, n, EW_MUL);
  case EW_DIV: return eval_body(d, a, i0, n, EW_DIV);
  case EW_FMA: return eval_body(d, a, i0, n, EW_FMA);
  case EW_SCALE: return eval_body(d, a, i0, n, EW_SCALE);
  case EW_SQRT: return eval_body(d, a, i0, n, EW_SQRT);
  case EW_RECIP: return eval_body(d, a, i0, n, EW_RECIP);
  case EW_EXP: return eval_body(d, a, i0, n, EW_EXP);
  case EW_LOG: return eval_body(d, a, i0, n, EW_LOG);
  case EW_TANH: return eval_body(d, a, i0, n, EW_TANH);
  default: return eval_body(d, a, i0, n, EW_SIGMOID);
  }
}

/* ---- Philox4x32-10 (lib/mpei_philox.h) on VW counters, one counter per 64-bit lane */
static AI void philox_vec(vq ctr, uint64_t key, vq out[4])
{
  const vq m32 = SPQ(0xffffffffu);
  vq c0 = ctr & m32, c1 = ctr >> 32, c2 = SPQ(0), c3 = SPQ(0);
  uint32_t k0 = (uint32_t)key, k1 = (uint32_t)(key >> 32);
  /* the upper halves of c1, c3 (and so of c0, c2) carry junk that MULU32
     ignores; the words are masked once at the end */
#pragma GCC unroll 10
  for (int r = 0; r < 10; r++) {
    MPEI_PHILOX_ROUND(MULU32, vq, c0, c1, c2, c3, SPQ(MPEI_PHILOX_M0), SPQ(MPEI_PHILOX_M2), SPQ(k0), SPQ(k1));
    k0 += MPEI_PHILOX_W0;
    k1 += MPEI_PHILOX_W1;
  }
  out[0] = c0 & m32; out[1] = c1 & m32; out[2] = c2 & m32; out[3] = c3 & m32;
}

/* element indices wrap modulo 2^64, so their counters i/4 modulo 2^62 */
#define CTR_MASK SPQ(0x3fffffffffffffffull)

/* w[i] = mpei_sr_word(seed, idx0 + i), i < n */
static void sr_words(uint32_t *w, uint64_t seed, uint64_t idx0, size_t n)   /* n <= VW */
{
  uint32_t tmp[8 * VW];
  uint64_t c0 = idx0 >> 2, skip = idx0 & 3;
  size_t ncount = (size_t)((skip + n + 3) >> 2);
  vq lane;
  for (int j = 0; j < VW; j++)
    lane[j] = (uint64_t)j;
  for (size_t c = 0; c < ncount; c += VW) {
    vq out[4];
    philox_vec((SPQ(c0 + c) + lane) & CTR_MASK, seed, out);
    for (int j = 0; j < VW; j++)
      for (int k = 0; k < 4; k++)
        tmp[4 * (c + j) + k] = (uint32_t)out[k][j];
  }
  memcpy(w, tmp + skip, n * 4);
}

/* ---- binary64 -> the plan's format (as mpei_round_ref), flags as lane masks */
typedef struct { vs inexact, underflow, overflow, invalid, saturated, flushed; } roundfl;

static AI vd round_vec(vd dv, const mpei_ew_plan *pl, const int mode, vq rnd, roundfl *fa)
{
  const vq u = (vq)dv, a = u & ABS64, sgn = u & SIGN64;
  const vd ad = (vd)a;
  const vs neg = (vs)sgn != 0;
  if (ALL64(((ad >= pl->c.minnorm) | (ad == 0)) & (ad <= pl->c.maxv))) {
    /* every lane zero or normal in the format: a fixed number of bits to
       drop, the carry moves into the exponent on its own (same decisions as
       below; a zero stays zero and raises nothing) */
    const uint64_t dd = (uint64_t)pl->c.dbase64, one = 1ull << dd, low = one - 1, half = one >> 1;
    const vq t = a & ~low, rem = a & low;
    const vq res = MPEI_ROUND_CARRY(mode, vq, a, dd, one, low, half, t, rem, neg,
                                    rnd < (dd >= 32 ? rem >> (dd - 32) : rem << (32 - dd)), (rnd >> 31) != 0);
    if (ALL64((vd)res <= pl->c.maxv)) {
      fa->inexact |= (vs)(rem != 0);
      return (vd)(res | sgn);
    }
  } else if (ALL64(((ad >= pl->medium_min) | (ad == 0)) & (ad <= pl->c.maxv))) {
    /* some lanes subnormal in the format (at least two quanta, so that at most
       51 bits are dropped and the kept low bit is a significand bit): the same
       with a number of bits per lane */
    vs dsub = SPS(pl->c.eminb64) - (vs)(a >> 52);
    dsub &= dsub > 0;
    vs dds = SPS(pl->c.dbase64) + dsub;
    const vq dd = (vq)SELS(dds > 51, SPS(51), dds);   /* only zero lanes are clamped */
    const vq one = SPQ(1) << dd, low = one - 1, half = one >> 1;
    const vq t = a & ~low, rem = a & low;
    const vs big = (vs)dd >= 32;
    const vq res = MPEI_ROUND_CARRY(mode, vq, a, dd, one, low, half, t, rem, neg,
                                    rnd < SELQ(big, rem >> ((dd - 32) & (vq)big), rem << ((32 - dd) & ~(vq)big)),
                                    (rnd >> 31) != 0);
    if (ALL64((vd)res <= pl->c.maxv)) {
      const vs inex = (vs)(rem != 0);
      fa->inexact |= inex;
      fa->underflow |= inex & (ad < SELD(neg, SPD(pl->c.tiny_neg64), SPD(pl->c.tiny_pos64)));
      return (vd)(res | sgn);
    }
  }
  const vs E = (vs)(a >> 52);
  const vs Eeff = E - (E == 0);
  vs dsub = SPS(pl->c.eminb64) - Eeff;
  dsub &= dsub > 0;
  const vs dd = SPS(pl->c.dbase64) + dsub;             /* bits below the format's quantum */
  const vs ddc = SELS(dd > 63, SPS(63), dd);
  const vq M = (a & 0xfffffffffffffull) | ((vq)(E != 0) & (1ull << 52));
  const vq one = SPQ(1) << (vq)ddc;
  const vq t = M >> (vq)ddc, rem = M & (one - 1), half = one >> 1;
  const vs inex = (vs)(rem != 0);
  /* MPE_SR: floor(fraction * 2^32) of the remainder (round_ref.c), from dd unclamped */
  vs shr = dd - 32;
  shr = SELS(shr > 63, SPS(63), shr);
  const vs up = MPEI_ROUND_UP(mode, inex, (vs)(rem > half), (vs)(rem == half), (vs)((t & 1) != 0), neg,
                              (vs)(rnd < SELQ(dd <= 32, rem << (vq)((32 - dd) & (dd <= 32)),
                                              rem >> (vq)(shr & (shr > 0)))),
                              (vs)((rnd >> 31) != 0));
  const vq R = t - (vq)up;
  vq res = SELQ(dd >= 53, SELQ(R != 0, SPQ(pl->c.minsub_bits64), SPQ(0)),
                ((vq)(Eeff - 1) << 52) + (R << (vq)ddc));
  const vs spec = (vs)(a >= INF64), nan = (vs)(a > INF64), isinf = spec & ~nan;
  const vs ovf = ((vd)res > pl->c.maxv) & ~spec;
  vs to_max = MPEI_ROUND_TO_MAX(mode, neg, SPS(-1));
  if (pl->c.saturate)
    to_max = SPS(-1);
  const vq maxb = (vq)SPD(pl->c.maxv), ovfb = SPQ(pl->c.has_inf ? INF64 : QNAN64);
  res = SELQ(ovf, SELQ(to_max, maxb, ovfb), res);
  const vq infb = pl->c.saturate ? maxb : ovfb;
  res = SELQ(spec, SELQ(nan, SPQ(QNAN64), infb), res);
  vs fl = SPS(0);
  if (pl->c.flush) {
    fl = (vs)(res != 0) & ((vd)res < pl->c.minnorm) & ~spec;
    res &= ~(vq)fl;
  }
  const vs fin = ~spec;
  const vd tiny = SELD(neg, SPD(pl->c.tiny_neg64), SPD(pl->c.tiny_pos64));
  fa->inexact |= (fin & inex) | ovf | fl;
  fa->underflow |= (fin & inex & (ad < tiny)) | fl;
  fa->overflow |= ovf;
  fa->flushed |= fl;
  if (pl->c.saturate)
    fa->saturated |= ovf | isinf;
  fa->invalid |= nan & (vs)((a & 0x0008000000000000ull) == 0);
  if (!pl->c.has_inf && !pl->c.saturate)
    fa->invalid |= isinf;
  return (vd)(res | sgn);
}

/* VW elements from d (len of them, zero padding), words from sr_words */
static AI void round_part(float *y, const double *d, size_t len, const mpei_ew_plan *pl, uint64_t idx,
                          const int mode, roundfl *fa)
{
  double bd[VW] = { 0 };   /* zero rounds to zero and raises nothing */
  uint32_t bw[VW + 4] = { 0 };
  memcpy(bd, d, len * 8);
  if (mode == MPE_SR || mode == MPE_SR_EQ)
    sr_words(bw, pl->c.seed, idx, len);
  vd v;
  vu32 r32;
  memcpy(&v, bd, sizeof v);
  memcpy(&r32, bw, sizeof r32);
  vf f = NARROW(round_vec(v, pl, mode, __builtin_convertvector(r32, vq), fa));
  memcpy(y, &f, len * 4);
}

/* the words of the 4*VW elements of counters c .. c+VW-1, in element order */
static AI void sr_block(uint64_t seed, uint64_t c, vq r[4])
{
  vq lane, out[4];
  for (int j = 0; j < VW; j++)
    lane[j] = (uint64_t)j;
  philox_vec((SPQ(c) + lane) & CTR_MASK, seed, out);
  /* (index lists from the ISA header: p_lo = {0, VW, 1, VW+1, ...}, p_hi the
     same from VW/2, q_lo = {0, 1, VW, VW+1, 2, 3, ...}, q_hi from VW/2) */
  vq lo01 = __builtin_shufflevector(out[0], out[1], MPEI_SHUF64_PLO);
  vq hi01 = __builtin_shufflevector(out[0], out[1], MPEI_SHUF64_PHI);
  vq lo23 = __builtin_shufflevector(out[2], out[3], MPEI_SHUF64_PLO);
  vq hi23 = __builtin_shufflevector(out[2], out[3], MPEI_SHUF64_PHI);
  r[0] = __builtin_shufflevector(lo01, lo23, MPEI_SHUF64_QLO);
  r[1] = __builtin_shufflevector(lo01, lo23, MPEI_SHUF64_QHI);
  r[2] = __builtin_shufflevector(hi01, hi23, MPEI_SHUF64_QLO);
  r[3] = __builtin_shufflevector(hi01, hi23, MPEI_SHUF64_QHI);
}

static AI unsigned round_body(float *y, const double *d, size_t n, const mpei_ew_plan *plan, uint64_t idx0,
                              const int mode)
{
  const mpei_ew_plan P = *plan;
  const int sr = mode == MPE_SR || mode == MPE_SR_EQ;
  roundfl fa = { SPS(0), SPS(0), SPS(0), SPS(0), SPS(0), SPS(0) };
  size_t i = 0;
  if (sr) {
    /* to a Philox block boundary, then 4*VW elements per block of counters */
    size_t k = (size_t)((4 - (idx0 & 3)) & 3);
    if (k > n)
      k = n;
    if (k) {
      round_part(y, d, k, &P, idx0, mode, &fa);
      i = k;
    }
    for (; i + 4 * VW <= n; i += 4 * VW) {
      vq r[4];
      sr_block(P.c.seed, (idx0 + i) >> 2, r);
      for (int q = 0; q < 4; q++) {
        vd v;
        memcpy(&v, d + i + q * VW, sizeof v);
        vf f = NARROW(round_vec(v, &P, mode, r[q], &fa));   /* exact */
        memcpy(y + i + q * VW, &f, sizeof f);
      }
    }
  } else {
    for (; i + VW <= n; i += VW) {
      vd v;
      memcpy(&v, d + i, sizeof v);
      vf f = NARROW(round_vec(v, &P, mode, SPQ(0), &fa));   /* exact */
      memcpy(y + i, &f, sizeof f);
    }
  }
  for (; i < n; i += VW)
    round_part(y + i, d + i, n - i < VW ? n - i : VW, &P, idx0 + i, mode, &fa);
  vs z = SPS(0);
  unsigned f = 0;
#define ANY(v) (memcmp(&(v), &z, sizeof z) != 0)
  if (ANY(fa.inexact)) f |= MPE_FLAG_INEXACT;
  if (ANY(fa.underflow)) f |= MPE_FLAG_UNDERFLOW;
  if (ANY(fa.overflow)) f |= MPE_FLAG_OVERFLOW;
  if (ANY(fa.invalid)) f |= MPE_FLAG_INVALID;
  if (ANY(fa.saturated)) f |= MPE_FLAG_SATURATED;
  if (ANY(fa.flushed)) f |= MPE_FLAG_FLUSHED;
#undef ANY
  return f;
}

static unsigned round_entry(float *y, const double *d, size_t n, const mpei_ew_plan *pl, uint64_t idx0)
{
  switch (pl->c.mode) {
  case MPE_RNE: return round_body(y, d, n, pl, idx0, MPE_RNE);
  case MPE_RNA: return round_body(y, d, n, pl, idx0, MPE_RNA);
  case MPE_RZ: return round_body(y, d, n, pl, idx0, MPE_RZ);
  case MPE_RU: return round_body(y, d, n, pl, idx0, MPE_RU);
  case MPE_RD: return round_body(y, d, n, pl, idx0, MPE_RD);
  case MPE_RO: return round_body(y, d, n, pl, idx0, MPE_RO);
  case MPE_SR: return round_body(y, d, n, pl, idx0, MPE_SR);
  default: return round_body(y, d, n, pl, idx0, MPE_SR_EQ);
  }
}

/* binary64 exp for softmax (zero-padded tail) */
static void exp_entry(double *y, const double *x, size_t n)
{
  size_t i = 0;
  for (; i + VW <= n; i += VW) {
    vd v;
    memcpy(&v, x + i, sizeof v);
    v = SLEEF_EXP(v);
    memcpy(y + i, &v, sizeof v);
  }
  if (i < n) {
    double b[VW] = { 0 };
    memcpy(b, x + i, (n - i) * 8);
    vd v;
    memcpy(&v, b, sizeof v);
    v = SLEEF_EXP(v);
    memcpy(y + i, &v, (n - i) * 8);
  }
}

/* ---- binary32 fast path for add, sub, mul, scale, div, recip and sqrt in
   deterministic modes, into
   formats where rounding a binary32 round-to-odd value is innocuous (p <= 22
   and quanta >= 2^-147: p + 2 bits kept everywhere). 2*VW lanes at once:
   the binary32 result and its exact error (TwoSum, or the FMA remainder of
   the product, quotient or square root) give the exact value rounded to odd
   at binary32, which is
   rounded to the format with integer adds and masks. A vector with a lane
   outside the range where that is exact and final (zero or normal in the
   format, no overflow; products, dividends and radicands at least 2^-100 so
   that the remainder is exact) goes through the binary64 path instead. Same results and flags as
   that path (check_elementwise). */
typedef float wf __attribute__((vector_size(VW * 8)));
typedef uint32_t wu __attribute__((vector_size(VW * 8)));
typedef int32_t wi __attribute__((vector_size(VW * 8)));
#define SPW(v) ((wu){} + (uint32_t)(v))
#define SELW(m, a, b) ((((wu)(m)) & (wu)(a)) | (~((wu)(m)) & (wu)(b)))

static AI wf loadw(const float *p) { wf f; memcpy(&f, p, sizeof f); return f; }
/* the plan's constants as lane vectors, made once per call (loop-invariant
   splats the compiler would otherwise rebuild per vector) */
typedef struct {
  wu minn, maxb;             /* binary32 patterns: smallest normal and largest finite of the format */
  wu dd, one, low, half;     /* dd = 24 - p dropped bits; one = 2^dd, low = one - 1, half = one / 2 */
} f32const;

static AI void f32const_make(f32const *k, const mpei_ew_plan *pl)
{
  const uint32_t dd = (uint32_t)pl->c.dbase;
  k->minn = SPW(pl->c.minnorm_bits);
  k->maxb = SPW(pl->c.max_bits);
  k->dd = SPW(dd);
  k->one = SPW(1u << dd);
  k->low = SPW((1u << dd) - 1);
  k->half = SPW((1u << dd) >> 1);
}

static AI int fast32_vec(float *y, wf a, wf b, const f32const *k, const int op, const int mode, wu *inexact)
{
  wf s, e;
  if (op == EW_SUB)
    b = -b;
  if (op == EW_RECIP) {
    b = a;
    a = (wf)SPW(0x3f800000u);   /* 1 */
  }
  if (op == EW_MUL || op == EW_SCALE) {
    s = a * b;
    e = VFMAF(a, b, -s);
  } else if (op == EW_DIV || op == EW_RECIP) {
    s = a / b;
    e = (wf)((wu)VFMAF(-s, b, a) ^ ((wu)b & 0x80000000u));   /* the sign of a/b - s */
  } else if (op == EW_SQRT) {
    s = VSQRTF(a);
    e = VFMAF(-s, s, a);
  } else {
    s = a + b;
    wf bb = s - a;
    e = (a - (s - bb)) + (b - bb);
  }
  const wu u = (wu)s;
  const wi below = (wi)(u ^ (wu)e) < 0;               /* |exact| < |s| */
  wu r = SELW(e != 0, (u + (wu)below) | 1u, u);      /* rounded to odd */
  const wu ar = r & 0x7fffffffu;
  /* patterns below 2^31 (ar, minn, maxb) compare as signed integers: one instruction */
  wi ok = (((wi)ar >= (wi)k->minn) | ((wi)ar == 0)) & ((wi)ar <= (wi)k->maxb);
  /* remainders exact (2^-100: far from binary32's subnormals); a zero result
     only from a zero operand */
  if (op == EW_MUL || op == EW_SCALE)
    ok &= (ar >= 0x0d800000u) | ((ar == 0) & ((a == 0) | (b == 0)));
  if (op == EW_DIV || op == EW_RECIP || op == EW_SQRT)
    ok &= ((((wu)a & 0x7fffffffu) >= 0x0d800000u) & (ar != 0)) | ((a == 0) & (ar == 0));
  if (!ALL32(ok))
    return 0;
  if ((op == EW_ADD || op == EW_SUB) && mode == MPE_RD) {   /* IEEE's -0 for an exact zero sum under RD */
    wi bothz = (a == 0) & (b == 0) & (wi)(((wu)a ^ (wu)b) < 0x80000000u);
    r = SELW((ar == 0) & ~bothz, SPW(0x80000000u), r);
  }
  const wu sg = r & 0x80000000u;
  const wi neg = (wi)sg != 0;
  const wu t = ar & ~k->low, rem = ar & k->low;
  /* fast32 plans exclude the stochastic modes (make_plan) */
  wu res = MPEI_ROUND_CARRY(mode, wu, ar, k->dd, k->one, k->low, k->half, t, rem, neg, neg ^ neg, neg ^ neg);
  if (!ALL32((wi)res <= (wi)k->maxb))   /* res <= maxb + one < 2^31 */
    return 0;
  *inexact |= rem;
  res |= sg;
  memcpy(y, &res, sizeof res);
  return 1;
}

/* Vectors from i while each takes the fast path; returns the index of the
   first that does not (past n - 2*VW when all did); no calls inside (see
   sr32_run). alpha: scale only. */
static AI size_t fast32_run(float *y, const float *x, const float *yy, wf alpha, const f32const *kp, size_t i,
                            size_t n, const int op, const int mode, wu *inexact)
{
  const int has_y = op == EW_ADD || op == EW_SUB || op == EW_MUL || op == EW_DIV;
  const f32const K = *kp;
  wu inex = *inexact;
  for (; i + 2 * VW <= n; i += 2 * VW)
    if (!fast32_vec(y + i, loadw(x + i), has_y ? loadw(yy + i) : alpha, &K, op, mode, &inex))
      break;
  *inexact = inex;
  return i;
}

static AI unsigned fast32_body(float *y, const mpei_ew_args *args, const mpei_ew_plan *plan, size_t i0, size_t n,
                               const int op, const int mode)
{
  const mpei_ew_plan P = *plan;
  const mpei_ew_args A = *args;
  const int has_y = op == EW_ADD || op == EW_SUB || op == EW_MUL || op == EW_DIV;
  const float *x = A.x + i0, *yy = has_y ? A.y + i0 : NULL;
  uint32_t abits;
  memcpy(&abits, &A.alpha, 4);
  const wf alpha = (wf)SPW(abits);   /* a splat that keeps -0 */
  wu inexact = SPW(0);
  unsigned f = 0;
  double d[2 * VW];
  f32const K;
  f32const_make(&K, &P);
  size_t i = 0;
  while (i + 2 * VW <= n) {
    i = fast32_run(y, x, yy, alpha, &K, i, n, op, mode, &inexact);
    if (i + 2 * VW > n)
      break;
    f |= eval_entry(d, &A, i0 + i, 2 * VW);   /* the vector at i, through binary64 */
    f |= round_entry(y + i, d, 2 * VW, &P, i0 + i);
    i += 2 * VW;
  }
  if (i < n) {
    f |= eval_entry(d, &A, i0 + i, n - i);
    f |= round_entry(y + i, d, n - i, &P, i0 + i);
  }
  wu z = SPW(0);
  if (memcmp(&inexact, &z, sizeof z))
    f |= MPE_FLAG_INEXACT;
  return f;
}

#define FAST32_MODES(op)                                                        \
  switch (pl->c.mode) {                                                           \
  case MPE_RNE: return fast32_body(y, a, pl, i0, n, op, MPE_RNE);               \
  case MPE_RNA: return fast32_body(y, a, pl, i0, n, op, MPE_RNA);               \
  case MPE_RZ: return fast32_body(y, a, pl, i0, n, op, MPE_RZ);                 \
  case MPE_RU: return fast32_body(y, a, pl, i0, n, op, MPE_RU);                 \
  case MPE_RD: return fast32_body(y, a, pl, i0, n, op, MPE_RD);                 \
  default: return fast32_body(y, a, pl, i0, n, op, MPE_RO);                     \
  }

/* ---- stochastic rounding of add, sub, mul and scale in one pass (plan.fast_sr:
   MPE_SR or MPE_SR_EQ, p <= 16), 2*VW binary32 lanes at once, the random words
   from the same Philox blocks as round_body.

   The exact value is the pair X = s + e: s the binary32 result, e its exact
   error (TwoSum, or the FMA remainder of the product), |e| <= ulp(s)/2 and,
   where |s| = 2^k and e points toward zero, |e| <= 2^(k-25). Take magnitudes:
   |X| = |s| + e' with e' = e carrying the sign relative to s. With |s| normal
   in the format and ulp = ulp(|s|), let one = 2^dd ulps be the format's quantum
   q (dd = 24 - p >= 8), t = |s| truncated to q and r = the ulps dropped. Then:
   - r > 0 or e' >= 0: |X| lies in [t, t + q) (|e'| is below one ulp, |s| at
     most t + q - ulp), so it truncates to t with the fraction
     F = floor((|X| - t) / q * 2^32) = r * 2^(32-dd) + floor(g),
     g = e' / ulp * 2^(32-dd), |g| <= 2^(31-dd);
   - r = 0 and e' < 0 ("wrapped"): |X| lies just below t and truncates to the
     grid value below, t - q' (q' = q, or q/2 where t = |s| is a power of two:
     the binade below has half the quantum; in bits both are t - one, as t - one
     is at least the format's smallest normal), with the fraction
     2^32 + floor(e' / q' * 2^32): the same sum taken modulo 2^32, g doubled
     where q' = q/2.
   g is e' times a power of two made from |s|'s exponent (a normal binary32
   for |s| >= 2^-64): exact where it is normal; below that only its sign
   matters (|g| < 1, floor 0 or -1), which a subnormal product keeps, and a
   product that underflows to zero is taken as -1 where e' < 0. MPE_SR rounds
   up iff the word is below F (mpei_round_ref: the fraction scaled to 2^32,
   floor), MPE_SR_EQ iff X is inexact and the word's top bit is set; up gives
   t + one (wrapped: t), down t (wrapped: t - one).
   The binary64 path rounds X rounded to odd at 53 bits; for p <= 16 that drops
   >= 37 bits, so its sticky bit lies below the 32 compared and its t, F and
   inexactness are those of X: the same bits. A vector with a lane the pair
   does not cover (|s| below 2^-64 or within a quantum of the smallest normal,
   at the largest finite or 2^127 and above, NaN, inf, a zero product of
   nonzero operands) goes through the binary64 path instead. The results here
   are normal in the format and below its largest finite: inexact is the only
   flag. */
/* the round keys of a seed, splat once per call */
typedef struct { vq k0[10], k1[10]; } srkeys;

static AI void srkeys_make(srkeys *K, uint64_t seed)
{
  uint32_t k0 = (uint32_t)seed, k1 = (uint32_t)(seed >> 32);
  for (int k = 0; k < 10; k++) {
    K->k0[k] = SPQ(k0);
    K->k1[k] = SPQ(k1);
    k0 += MPEI_PHILOX_W0;
    k1 += MPEI_PHILOX_W1;
  }
}

/* The words of the 8*VW elements of counters c .. c+2*VW-1 in element order,
   as four vectors of 2*VW words: two sets of VW counters whose rounds
   interleave (one set's chain of dependent multiplies leaves the multiplier
   idle). */
static AI void sr_block32(const srkeys *K, uint64_t c, wu r[4])
{
  const vq m32 = SPQ(0xffffffffu);
  vq lane;
  for (int j = 0; j < VW; j++)
    lane[j] = (uint64_t)j;
  const vq ctrA = (SPQ(c) + lane) & CTR_MASK, ctrB = (SPQ(c + VW) + lane) & CTR_MASK;
  vq a0 = ctrA & m32, a1 = ctrA >> 32, a2 = SPQ(0), a3 = SPQ(0);
  vq b0 = ctrB & m32, b1 = ctrB >> 32, b2 = SPQ(0), b3 = SPQ(0);
#pragma GCC unroll 10
  for (int k = 0; k < 10; k++) {
    MPEI_PHILOX_ROUND(MULU32, vq, a0, a1, a2, a3, SPQ(MPEI_PHILOX_M0), SPQ(MPEI_PHILOX_M2), K->k0[k], K->k1[k]);
    MPEI_PHILOX_ROUND(MULU32, vq, b0, b1, b2, b3, SPQ(MPEI_PHILOX_M0), SPQ(MPEI_PHILOX_M2), K->k0[k], K->k1[k]);
  }
  /* per counter the words (w0, w1) and (w2, w3) as 64-bit lanes (the shifts
     drop the junk upper halves of w1, w3), then the lanes of two counters
     after each other */
  const vq a01 = (a0 & m32) | (a1 << 32), a23 = (a2 & m32) | (a3 << 32);
  const vq b01 = (b0 & m32) | (b1 << 32), b23 = (b2 & m32) | (b3 << 32);
  r[0] = (wu)__builtin_shufflevector(a01, a23, MPEI_SHUF64_PLO);
  r[1] = (wu)__builtin_shufflevector(a01, a23, MPEI_SHUF64_PHI);
  r[2] = (wu)__builtin_shufflevector(b01, b23, MPEI_SHUF64_PLO);
  r[3] = (wu)__builtin_shufflevector(b01, b23, MPEI_SHUF64_PHI);
}

#if VW >= 8
/* sr_block32 for two consecutive blocks (counters c .. c+4*VW-1, words of
   16*VW elements in r[0..7]): four sets of VW counters in flight, so that
   the multiplier is busy rather than waiting on one chain (AVX-512's 32
   registers hold them; the words are those of sr_block32 at c and c+2*VW). */
static AI void sr_block32x2(const srkeys *K, uint64_t c, wu r[8])
{
  const vq m32 = SPQ(0xffffffffu);
  vq lane;
  for (int j = 0; j < VW; j++)
    lane[j] = (uint64_t)j;
  const vq ctrA = (SPQ(c) + lane) & CTR_MASK, ctrB = (SPQ(c + VW) + lane) & CTR_MASK;
  const vq ctrC = (SPQ(c + 2 * VW) + lane) & CTR_MASK, ctrD = (SPQ(c + 3 * VW) + lane) & CTR_MASK;
  vq a0 = ctrA & m32, a1 = ctrA >> 32, a2 = SPQ(0), a3 = SPQ(0);
  vq b0 = ctrB & m32, b1 = ctrB >> 32, b2 = SPQ(0), b3 = SPQ(0);
  vq c0 = ctrC & m32, c1 = ctrC >> 32, c2 = SPQ(0), c3 = SPQ(0);
  vq d0 = ctrD & m32, d1 = ctrD >> 32, d2 = SPQ(0), d3 = SPQ(0);
#pragma GCC unroll 10
  for (int k = 0; k < 10; k++) {
    MPEI_PHILOX_ROUND(MULU32, vq, a0, a1, a2, a3, SPQ(MPEI_PHILOX_M0), SPQ(MPEI_PHILOX_M2), K->k0[k], K->k1[k]);
    MPEI_PHILOX_ROUND(MULU32, vq, b0, b1, b2, b3, SPQ(MPEI_PHILOX_M0), SPQ(MPEI_PHILOX_M2), K->k0[k], K->k1[k]);
    MPEI_PHILOX_ROUND(MULU32, vq, c0, c1, c2, c3, SPQ(MPEI_PHILOX_M0), SPQ(MPEI_PHILOX_M2), K->k0[k], K->k1[k]);
    MPEI_PHILOX_ROUND(MULU32, vq, d0, d1, d2, d3, SPQ(MPEI_PHILOX_M0), SPQ(MPEI_PHILOX_M2), K->k0[k], K->k1[k]);
  }
  const vq a01 = (a0 & m32) | (a1 << 32), a23 = (a2 & m32) | (a3 << 32);
  const vq b01 = (b0 & m32) | (b1 << 32), b23 = (b2 & m32) | (b3 << 32);
  const vq c01 = (c0 & m32) | (c1 << 32), c23 = (c2 & m32) | (c3 << 32);
  const vq d01 = (d0 & m32) | (d1 << 32), d23 = (d2 & m32) | (d3 << 32);
  r[0] = (wu)__builtin_shufflevector(a01, a23, MPEI_SHUF64_PLO);
  r[1] = (wu)__builtin_shufflevector(a01, a23, MPEI_SHUF64_PHI);
  r[2] = (wu)__builtin_shufflevector(b01, b23, MPEI_SHUF64_PLO);
  r[3] = (wu)__builtin_shufflevector(b01, b23, MPEI_SHUF64_PHI);
  r[4] = (wu)__builtin_shufflevector(c01, c23, MPEI_SHUF64_PLO);
  r[5] = (wu)__builtin_shufflevector(c01, c23, MPEI_SHUF64_PHI);
  r[6] = (wu)__builtin_shufflevector(d01, d23, MPEI_SHUF64_PLO);
  r[7] = (wu)__builtin_shufflevector(d01, d23, MPEI_SHUF64_PHI);
}
#endif

/* the format's constants, splat once per call */
typedef struct {
  wu lo, span;          /* |s| bits in [lo, lo + span) */
  wu low, nlow, pexp;   /* one - 1, ~low; 309 - dd: the biased exponent of 2^(32-dd)/ulp plus E_s */
  wu dd, dd32;          /* dd and 32 - dd, as lane shift counts */
} srconst;

static AI int sr32_vec(float *y, wf a, wf b, wu rnd, const srconst *k, const int op, const int mode, wu *inexact)
{
  wf s, e;
  if (op == EW_SUB)
    b = -b;
  if (op == EW_MUL || op == EW_SCALE) {
    s = a * b;
    e = VFMAF(a, b, -s);
  } else {
    s = a + b;
    wf bb = s - a;
    e = (a - (s - bb)) + (b - bb);
  }
  const wu u = (wu)s, sg = u & 0x80000000u, ar = u ^ sg;
  wi ok = (wi)((ar - k->lo) ^ 0x80000000u) < (wi)(k->span ^ 0x80000000u);   /* unsigned */
  /* exact zeros: a zero sum is exact; a zero product only of a zero operand */
  if (op == EW_MUL || op == EW_SCALE)
    ok |= (ar == 0) & ((a == 0) | (b == 0));
  else
    ok |= ar == 0;
  if (!ALL32(ok))
    return 0;
  const wf es = (wf)((wu)e ^ sg);   /* e' */
  const wi eneg = es < 0;
  const wu t = ar & k->nlow, r = ar & k->low;
  const wi wrap = (r == 0) & eneg;
  const wi half_q = wrap & ((ar << 9) == 0);
  const wf pw = (wf)((k->pexp - (ar >> 23) - (wu)half_q) << 23);
  const wf g = es * pw;
  /* floor(g), F with 2^31 added (a signed compare for the unsigned one) */
  const wi fg = __builtin_convertvector(MPEI_FLOOR_PS(g), wi) + ((g == 0) & eneg);
  const wu F = (r << k->dd32) + (wu)fg + 0x80000000u;
  wi up;
  if (mode == MPE_SR)
    up = (wi)(rnd ^ 0x80000000u) < (wi)F;
  else
    up = ((r != 0) | (es != 0)) & ((wi)rnd < 0);
  const wu res = t + ((wu)(wrap - up) << k->dd);
  *inexact |= r | (wu)es;   /* bits 0-30: r < 2^dd has no bit 31, es's bit 31 is its sign */
  const wu out = res | sg;
  memcpy(y, &out, sizeof out);
  return 1;
}

/* Whole blocks of 8*VW elements from i while every vector stays in the pair's
   range. Returns the start of the first block not finished (at or past n -
   8*VW + 1 when all were), with *q the vector of it that left the range. The
   binary64 path's calls stay out of this loop (the caller makes them), so
   fewer of its values live across a call in memory. */
static AI size_t sr32_run(float *y, const float *x, const float *yy, wf alpha, const srconst *kp, const srkeys *keys,
                          uint64_t idx0, size_t i, size_t n, const int op, const int mode, wu *inexact,
                          int *qfail)
{
  const srconst K = *kp;
  wu inex = *inexact;
#if VW >= 8
  for (; i + 16 * VW <= n; i += 16 * VW) {
    wu rw[8];
    sr_block32x2(keys, (idx0 + i) >> 2, rw);
    for (int q = 0; q < 8; q++) {
      const size_t k = i + (size_t)q * 2 * VW;
      const int has_y = op == EW_ADD || op == EW_SUB || op == EW_MUL;
      if (!sr32_vec(y + k, loadw(x + k), has_y ? loadw(yy + k) : alpha, rw[q], &K, op, mode, &inex)) {
        *qfail = q & 3;   /* the block of 8*VW holding vector q */
        *inexact = inex;
        return q < 4 ? i : i + 8 * VW;
      }
    }
  }
#endif
  for (; i + 8 * VW <= n; i += 8 * VW) {
    wu rw[4];
    sr_block32(keys, (idx0 + i) >> 2, rw);
    for (int q = 0; q < 4; q++) {
      const size_t k = i + (size_t)q * 2 * VW;
      const int has_y = op == EW_ADD || op == EW_SUB || op == EW_MUL;
      if (!sr32_vec(y + k, loadw(x + k), has_y ? loadw(yy + k) : alpha, rw[q], &K, op, mode, &inex)) {
        *qfail = q;
        *inexact = inex;
        return i;
      }
    }
  }
  *qfail = 0;
  *inexact = inex;
  return i;
}

static AI unsigned sr32_body(float *y, const mpei_ew_args *args, const mpei_ew_plan *plan, size_t i0, size_t n,
                             const int op, const int mode)
{
  const mpei_ew_plan P = *plan;
  const mpei_ew_args A = *args;
  const int has_y = op == EW_ADD || op == EW_SUB || op == EW_MUL;
  const float *x = A.x + i0, *yy = has_y ? A.y + i0 : NULL;
  uint32_t abits;
  memcpy(&abits, &A.alpha, 4);
  const wf alpha = (wf)SPW(abits);   /* a splat that keeps -0 */
  /* |s| at least one quantum above the smallest normal and 2^-64, below the
     largest finite and 2^127 */
  const uint32_t dd = (uint32_t)P.c.dbase, lo = P.c.minnorm_bits + (1u << dd);
  const uint32_t lo_bits = lo > 0x1f800000u ? lo : 0x1f800000u;
  const uint32_t hi_bits = P.c.max_bits < 0x7f000000u ? P.c.max_bits : 0x7f000000u;
  const srconst K = { SPW(lo_bits), SPW(hi_bits > lo_bits ? hi_bits - lo_bits : 0), SPW((1u << dd) - 1),
                      SPW(~((1u << dd) - 1)), SPW(309 - dd), SPW(dd), SPW(32 - dd) };
  const uint64_t idx0 = P.c.offset + i0;
  srkeys keys;
  srkeys_make(&keys, P.c.seed);
  wu inexact = SPW(0);
  unsigned f = 0;
  double d[8 * VW];
  /* to a Philox block boundary, then 8*VW elements per 2*VW counters */
  size_t i = (size_t)((4 - (idx0 & 3)) & 3);
  if (i > n)
    i = n;
  if (i) {
    f |= eval_entry(d, &A, i0, i);
    f |= round_entry(y, d, i, &P, idx0);
  }
  while (i + 8 * VW <= n) {
    int q;
    i = sr32_run(y, x, yy, alpha, &K, &keys, idx0, i, n, op, mode, &inexact, &q);
    if (i + 8 * VW > n)
      break;
    /* vector q of the block at i left the pair's range: it and the rest of
       the block through binary64 (those before it are stored, and y may be x) */
    const size_t k = i + (size_t)q * 2 * VW, len = 8 * VW - (size_t)q * 2 * VW;
    f |= eval_entry(d, &A, i0 + k, len);
    f |= round_entry(y + k, d, len, &P, idx0 + k);
    i += 8 * VW;
  }
  if (i < n) {
    f |= eval_entry(d, &A, i0 + i, n - i);
    f |= round_entry(y + i, d, n - i, &P, idx0 + i);
  }
  wu z = SPW(0);
  inexact &= 0x7fffffffu;   /* sr32_vec: bits 0-30 */
  if (memcmp(&inexact, &z, sizeof z))
    f |= MPE_FLAG_INEXACT;
  return f;
}

#define SR32_MODES(op)                                                          \
  return pl->c.mode == MPE_SR ? sr32_body(y, a, pl, i0, n, op, MPE_SR)          \
                              : sr32_body(y, a, pl, i0, n, op, MPE_SR_EQ);

/* op: add, sub, mul or scale; pl->c.mode stochastic, p <= 16 */
static unsigned sr32_entry(float *y, const mpei_ew_args *a, const mpei_ew_plan *pl, size_t i0, size_t n)
{
  if (a->op == EW_MUL)
    SR32_MODES(EW_MUL)
  else if (a->op == EW_SCALE)
    SR32_MODES(EW_SCALE)
  else if (a->op == EW_SUB)
    SR32_MODES(EW_SUB)
  else
    SR32_MODES(EW_ADD)
}

/* op: add, sub, mul, scale, div, recip or sqrt; pl->c.mode deterministic, the format as above (fast32);
   add, sub, mul or scale with pl->c.mode stochastic (fast_sr) */
static unsigned fast32_entry(float *y, const mpei_ew_args *a, const mpei_ew_plan *pl, size_t i0, size_t n)
{
  if (pl->c.mode == MPE_SR || pl->c.mode == MPE_SR_EQ)
    return sr32_entry(y, a, pl, i0, n);
  if (a->op == EW_MUL)
    FAST32_MODES(EW_MUL)
  else if (a->op == EW_SCALE)
    FAST32_MODES(EW_SCALE)
  else if (a->op == EW_DIV)
    FAST32_MODES(EW_DIV)
  else if (a->op == EW_RECIP)
    FAST32_MODES(EW_RECIP)
  else if (a->op == EW_SQRT)
    FAST32_MODES(EW_SQRT)
  else if (a->op == EW_SUB)
    FAST32_MODES(EW_SUB)
  else
    FAST32_MODES(EW_ADD)
}

unsigned MPEI_ISA_FN(mpei_ew_eval)(double *d, const mpei_ew_args *a, size_t i0, size_t n)
{
  return eval_entry(d, a, i0, n);
}

unsigned MPEI_ISA_FN(mpei_ew_round)(float *y, const double *d, size_t n, const mpei_ew_plan *pl, uint64_t idx0)
{
  return round_entry(y, d, n, pl, idx0);
}

void MPEI_ISA_FN(mpei_ew_exp)(double *y, const double *x, size_t n)
{
  exp_entry(y, x, n);
}

unsigned MPEI_ISA_FN(mpei_ew_fast32)(float *y, const mpei_ew_args *a, const mpei_ew_plan *pl, size_t i0, size_t n)
{
  return fast32_entry(y, a, pl, i0, n);
}
