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
#include "mpei_vec.h"

#define VW (MPEI_VBYTES / 8)
#define SLEEF_EXP(v) ((vf64)MPEI_SLEEF_EXP(v))
#define SLEEF_LOG(v) ((vf64)MPEI_SLEEF_LOG(v))
#define SLEEF_TANH(v) ((vf64)MPEI_SLEEF_TANH(v))
#define VSQRT(v) MPEI_SQRT_PD(v)
#define VFMA(a, b, c) MPEI_FMA_PD(a, b, c)
#define MULU32(a, b) MPEI_MULU32(a, b)
#define ALL64(m) MPEI_ALL64(m)
#define ANY64(m) MPEI_ANY64(m)
#define ALL32(m) MPEI_ALL32(m)
#define VFMAF(a, b, c) MPEI_FMA_PS(a, b, c)   /* on 2*VW binary32 lanes */
#define VSQRTF(v) MPEI_SQRT_PS(v)
#define WIDEN(f) ((vf64)MPEI_CVT_PS_PD(f))
#define NARROW(d) ((hf32)MPEI_CVT_PD_PS(d))

#define AI inline __attribute__((always_inline))

static const uint64_t ABS64 = 0x7fffffffffffffffull, SIGN64 = 0x8000000000000000ull;
static const uint64_t QNAN64 = 0x7ff8000000000000ull, INF64 = 0x7ff0000000000000ull;

static AI vf64 widen(hf32 f) { return WIDEN(f); }
static AI vf64 vabs(vf64 v) { return (vf64)((vu64)v & ABS64); }
static AI vi64 isnan_d(vf64 v) { return v != v; }
static AI vi64 isfin_d(vf64 v) { return (vi64)(((vu64)v & ABS64) < INF64); }

/* x rounded to odd at 53 bits, from s (nearest) and err = x - s (its sign);
   lanes outside `ok` keep s (as mpei_ro_adjust: the odd neighbour of x's
   side is (s truncated toward zero) | 1) */
static AI vf64 ro_adjust(vf64 s, vf64 err, vi64 ok)
{
  vu64 u = (vu64)s;
  vi64 below = (vi64)(u ^ (vu64)err) < 0;   /* |x| < |s| */
  vu64 t = (u + (vu64)below) | 1;
  return (vf64)SEL(vu64, ok & (err != 0), t, s);
}

/* a + b rounded to odd with IEEE's sign of an exact zero sum; plain a + b
   where an operand is not finite (two binary32-range values, or a binary32
   product and a binary32, never overflow binary64: s is finite exactly when
   a and b are) */
static AI vf64 ro_sum(vf64 a, vf64 b, mpe_round r)
{
  vf64 s = a + b;
  vf64 bb = s - a;
  vf64 e = (a - (s - bb)) + (b - bb);
  s = ro_adjust(s, e, isfin_d(s));
  if (r == MPE_RD) {   /* otherwise the hardware's +0 / common sign is IEEE's */
    vi64 bothz = (a == 0) & (b == 0) & (vi64)(((vu64)a ^ (vu64)b) < SIGN64);
    s = (vf64)SEL(vu64, (s == 0) & ~bothz, SPLAT(vf64, -0.0), s);
  }
  return s;
}

static AI vf64 ro_div(vf64 a, vf64 b)
{
  vf64 q = a / b;
  vf64 rem = VFMA(-q, b, a);
  vf64 err = (vf64)SEL(vu64, b > 0, rem, -rem);
  return ro_adjust(q, err, isfin_d(q) & (q != 0));
}

typedef struct { vi64 invalid, divz; } evalfl;

/* binary32 signalling NaNs, as 64-bit lane masks */
static AI vi64 snan_f(hf32 f)
{
  hu32 u = (hu32)f;
  hi32 m = ((u & 0x7f800000u) == 0x7f800000u) & ((u & 0x3fffffu) != 0) & ((u & 0x400000u) == 0);
  return __builtin_convertvector(m, vi64);
}

static AI vf64 qnan_of(vf64 v) { return (vf64)(((vu64)v & SIGN64) | QNAN64); }

/* NaN lanes of d (only for vectors that have one): the rule and the invalid
   flag of mpei_ew_nan_fix */
static AI vf64 nan_vec(const int op, const mpei_ew_args *a, hf32 xf, hf32 yf, hf32 zf, vf64 d, vi64 *invalid)
{
  const int nops = op == EW_FMA ? 3 : (op <= EW_DIV || op == EW_SCALE) ? 2 : 1;
  const hf32 af = (hf32){} + a->alpha;
  const hf32 y2 = op == EW_SCALE ? af : yf;
  const vf64 x = widen(xf), y = widen(y2), z = widen(zf);
  const vi64 zero = SPLAT(vi64, 0);
  vi64 nx = isnan_d(x), ny = nops > 1 ? isnan_d(y) : zero, nz = nops > 2 ? isnan_d(z) : zero;
  vi64 sn = snan_f(xf) | (nops > 1 ? snan_f(y2) : zero) | (nops > 2 ? snan_f(zf) : zero);
  vf64 nanv = (vf64)SEL(vu64, nx, qnan_of(x), (vf64)SEL(vu64, ny, qnan_of(y), (vf64)SEL(vu64, nz, qnan_of(z), SPLAT(vu64, QNAN64))));
  vi64 isn = isnan_d(d);
  if (op == EW_EXP || op == EW_TANH || op == EW_SIGMOID)
    *invalid |= isn & sn;
  else
    *invalid |= isn & (~(nx | ny | nz) | sn);
  return (vf64)SEL(vu64, isn, nanv, d);
}

/* r: the SLEEF value (exp, log, tanh: of x; sigmoid: e^-x), computed by a
   separate pass so that this code holds its constants in registers */
static AI vf64 eval_vec(const int op, const mpei_ew_args *a, hf32 xf, hf32 yf, hf32 zf, vf64 r, evalfl *fl)
{
  const vf64 x = widen(xf), zero = SPLAT(vf64, 0);
  vf64 d;
  switch (op) {
  case EW_ADD: case EW_SUB: {
    vf64 y = widen(yf);
    d = ro_sum(x, op == EW_SUB ? -y : y, a->round);
    break;
  }
  case EW_MUL: case EW_SCALE: {
    vf64 y = op == EW_MUL ? widen(yf) : SPLAT(vf64, a->alpha);
    d = x * y;   /* exact */
    break;
  }
  case EW_FMA: {
    vf64 y = widen(yf), z = widen(zf);
    vf64 p = x * y;   /* exact */
    d = ro_sum(p, z, a->round);
    break;
  }
  case EW_DIV: {
    vf64 y = widen(yf);
    fl->divz |= (y == 0) & (x != 0) & isfin_d(x);
    d = ro_div(x, y);
    break;
  }
  case EW_RECIP:
    fl->divz |= x == 0;
    d = ro_div(SPLAT(vf64, 1), x);
    break;
  case EW_SQRT: {
    vf64 s = VSQRT(x);
    s = ro_adjust(s, VFMA(-s, s, x), isfin_d(s) & (s != 0));
    d = (vf64)SEL(vu64, x < 0, SPLAT(vu64, QNAN64), s);
    break;
  }
  /* the stand-ins: only when a lane needs one (rare) */
  case EW_EXP: {
    d = r;
    if (ANY64((vabs(x) > 709.0) | (vabs(x) < 0x1p-40) | (r == 1.0))) {
      vi64 c3 = (x != 0) & ((vabs(x) < 0x1p-40) | (r == 1.0));
      r = (vf64)SEL(vu64, c3, (vf64)SEL(vu64, x > 0, SPLAT(vf64, 1 + 0x1p-52), SPLAT(vf64, 1 - 0x1p-53)), r);
      r = (vf64)SEL(vu64, x < -745.0, (vf64)SEL(vu64, x == -INFINITY, zero, SPLAT(vf64, 0x1p-1074)), r);
      d = (vf64)SEL(vu64, x > 709.0, (vf64)SEL(vu64, x == INFINITY, SPLAT(vf64, INFINITY), SPLAT(vf64, DBL_MAX)), r);
    }
    break;
  }
  case EW_LOG:
    d = r;
    if (ANY64(x <= 0)) {
      fl->divz |= x == 0;
      d = (vf64)SEL(vu64, x < 0, SPLAT(vu64, QNAN64), (vf64)SEL(vu64, x == 0, SPLAT(vf64, -INFINITY), r));
    }
    break;
  case EW_TANH: {
    d = r;
    if (ANY64((vabs(x) >= (double)9.7f) | (vabs(x) < 0x1p-26) | (r == x))) {
      vi64 c2 = (x != 0) & ((vabs(x) < 0x1p-26) | (r == x));
      r = (vf64)SEL(vu64, c2, (vf64)((vu64)x - 1), r);
      vf64 one = (vf64)SEL(vu64, x > 0, SPLAT(vf64, 1.0), SPLAT(vf64, -1.0));
      vf64 near1 = (vf64)SEL(vu64, x > 0, SPLAT(vf64, 1 - 0x1p-53), SPLAT(vf64, -(1 - 0x1p-53)));
      d = (vf64)SEL(vu64, vabs(x) >= (double)9.7f, (vf64)SEL(vu64, vabs(x) == INFINITY, one, near1), r);
    }
    break;
  }
  default: { /* EW_SIGMOID */
    vf64 q = 1.0 / (1.0 + r);
    d = q;
    if (ANY64((q == 1.0) | (q == 0.5) | (vabs(x) < 0x1p-45) | (vabs(x) >= 37.0))) {
      vf64 half_side = (vf64)SEL(vu64, x > 0, SPLAT(vf64, 0.5 + 0x1p-53), SPLAT(vf64, 0.5 - 0x1p-54));
      q = (vf64)SEL(vu64, q == 1.0, SPLAT(vf64, 1 - 0x1p-53), (vf64)SEL(vu64, (q == 0.5) & (x != 0), half_side, q));
      q = (vf64)SEL(vu64, (x != 0) & (vabs(x) < 0x1p-45), half_side, q);
      q = (vf64)SEL(vu64, x < -708.0, (vf64)SEL(vu64, x == -INFINITY, zero, SPLAT(vf64, 0x1p-1074)), q);
      d = (vf64)SEL(vu64, x >= 37.0, (vf64)SEL(vu64, x == INFINITY, SPLAT(vf64, 1.0), SPLAT(vf64, 1 - 0x1p-53)), q);
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
  const hf32 fz = {};
  const int sleef = op == EW_EXP || op == EW_LOG || op == EW_TANH || op == EW_SIGMOID;
  evalfl fl = { SPLAT(vi64, 0), SPLAT(vi64, 0) };
  size_t i = 0;
  if (sleef) {
    for (; i + VW <= n; i += VW) {
      vf64 v = widen(load_hf32(x + i)), r;
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
    vf64 r = SPLAT(vf64, 0);
    if (sleef)
      memcpy(&r, d + i, sizeof r);
    r = eval_vec(op, a, load_hf32(x + i), y ? load_hf32(y + i) : fz, z ? load_hf32(z + i) : fz, r, &fl);
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
    evalfl tf = { SPLAT(vi64, 0), SPLAT(vi64, 0) };
    vf64 v = widen(load_hf32(bx)), r = SPLAT(vf64, 0);
    switch (op) {
    case EW_EXP: r = SLEEF_EXP(v); break;
    case EW_LOG: r = SLEEF_LOG(v); break;
    case EW_TANH: r = SLEEF_TANH(v); break;
    case EW_SIGMOID: r = SLEEF_EXP(-v); break;
    default: break;
    }
    r = eval_vec(op, a, load_hf32(bx), load_hf32(by), load_hf32(bz), r, &tf);
    vi64 valid;
    for (int k = 0; k < VW; k++)
      valid[k] = (size_t)k < len ? -1 : 0;
    fl.invalid |= tf.invalid & valid;
    fl.divz |= tf.divz & valid;
    memcpy(d + i, &r, len * 8);
  }
  vi64 none = SPLAT(vi64, 0);
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
static AI void philox_vec(vu64 ctr, uint64_t key, vu64 out[4])
{
  const vu64 m32 = SPLAT(vu64, 0xffffffffu);
  vu64 c0 = ctr & m32, c1 = ctr >> 32, c2 = SPLAT(vu64, 0), c3 = SPLAT(vu64, 0);
  uint32_t k0 = (uint32_t)key, k1 = (uint32_t)(key >> 32);
  /* the upper halves of c1, c3 (and so of c0, c2) carry junk that MULU32
     ignores; the words are masked once at the end */
#pragma GCC unroll 10
  for (int r = 0; r < 10; r++) {
    MPEI_PHILOX_ROUND(MULU32, vu64, c0, c1, c2, c3, SPLAT(vu64, MPEI_PHILOX_M0), SPLAT(vu64, MPEI_PHILOX_M2), SPLAT(vu64, k0), SPLAT(vu64, k1));
    k0 += MPEI_PHILOX_W0;
    k1 += MPEI_PHILOX_W1;
  }
  out[0] = c0 & m32; out[1] = c1 & m32; out[2] = c2 & m32; out[3] = c3 & m32;
}

/* element indices wrap modulo 2^64, so their counters i/4 modulo 2^62 */
#define CTR_MASK SPLAT(vu64, 0x3fffffffffffffffull)

/* w[i] = mpei_sr_word(seed, idx0 + i), i < n */
static void sr_words(uint32_t *w, uint64_t seed, uint64_t idx0, size_t n)   /* n <= VW */
{
  uint32_t tmp[8 * VW];
  uint64_t c0 = idx0 >> 2, skip = idx0 & 3;
  size_t ncount = (size_t)((skip + n + 3) >> 2);
  vu64 lane;
  for (int j = 0; j < VW; j++)
    lane[j] = (uint64_t)j;
  for (size_t c = 0; c < ncount; c += VW) {
    vu64 out[4];
    philox_vec((SPLAT(vu64, c0 + c) + lane) & CTR_MASK, seed, out);
    for (int j = 0; j < VW; j++)
      for (int k = 0; k < 4; k++)
        tmp[4 * (c + j) + k] = (uint32_t)out[k][j];
  }
  memcpy(w, tmp + skip, n * 4);
}

/* ---- binary64 -> the plan's format (as mpei_round_ref), flags as lane masks */
typedef struct { vi64 inexact, underflow, overflow, invalid, saturated, flushed; } roundfl;

static AI vf64 round_vec(vf64 dv, const mpei_ew_plan *pl, const int mode, vu64 rnd, roundfl *fa)
{
  const vu64 u = (vu64)dv, a = u & ABS64, sgn = u & SIGN64;
  const vf64 ad = (vf64)a;
  const vi64 neg = (vi64)sgn != 0;
  if (ALL64(((ad >= pl->c.minnorm) | (ad == 0)) & (ad <= pl->c.maxv))) {
    /* every lane zero or normal in the format: a fixed number of bits to
       drop, the carry moves into the exponent on its own (same decisions as
       below; a zero stays zero and raises nothing) */
    const uint64_t dd = (uint64_t)pl->c.dbase64, one = 1ull << dd, low = one - 1, half = one >> 1;
    const vu64 t = a & ~low, rem = a & low;
    const vu64 res = MPEI_ROUND_CARRY(mode, vu64, a, dd, one, low, half, t, rem, neg,
                                    rnd < (dd >= 32 ? rem >> (dd - 32) : rem << (32 - dd)), (rnd >> 31) != 0);
    if (ALL64((vf64)res <= pl->c.maxv)) {
      fa->inexact |= (vi64)(rem != 0);
      return (vf64)(res | sgn);
    }
  } else if (ALL64(((ad >= pl->medium_min) | (ad == 0)) & (ad <= pl->c.maxv))) {
    /* some lanes subnormal in the format (at least two quanta, so that at most
       51 bits are dropped and the kept low bit is a significand bit): the same
       with a number of bits per lane */
    vi64 dsub = SPLAT(vi64, pl->c.eminb64) - (vi64)(a >> 52);
    dsub &= dsub > 0;
    vi64 dds = SPLAT(vi64, pl->c.dbase64) + dsub;
    const vu64 dd = (vu64)(vi64)SEL(vu64, dds > 51, SPLAT(vi64, 51), dds);   /* only zero lanes are clamped */
    const vu64 one = SPLAT(vu64, 1) << dd, low = one - 1, half = one >> 1;
    const vu64 t = a & ~low, rem = a & low;
    const vi64 big = (vi64)dd >= 32;
    const vu64 res = MPEI_ROUND_CARRY(mode, vu64, a, dd, one, low, half, t, rem, neg,
                                    rnd < SEL(vu64, big, rem >> ((dd - 32) & (vu64)big), rem << ((32 - dd) & ~(vu64)big)),
                                    (rnd >> 31) != 0);
    if (ALL64((vf64)res <= pl->c.maxv)) {
      const vi64 inex = (vi64)(rem != 0);
      fa->inexact |= inex;
      fa->underflow |= inex & (ad < (vf64)SEL(vu64, neg, SPLAT(vf64, pl->c.tiny_neg64), SPLAT(vf64, pl->c.tiny_pos64)));
      return (vf64)(res | sgn);
    }
  }
  const vi64 E = (vi64)(a >> 52);
  const vi64 Eeff = E - (E == 0);
  vi64 dsub = SPLAT(vi64, pl->c.eminb64) - Eeff;
  dsub &= dsub > 0;
  const vi64 dd = SPLAT(vi64, pl->c.dbase64) + dsub;             /* bits below the format's quantum */
  const vi64 ddc = (vi64)SEL(vu64, dd > 63, SPLAT(vi64, 63), dd);
  const vu64 M = (a & 0xfffffffffffffull) | ((vu64)(E != 0) & (1ull << 52));
  const vu64 one = SPLAT(vu64, 1) << (vu64)ddc;
  const vu64 t = M >> (vu64)ddc, rem = M & (one - 1), half = one >> 1;
  const vi64 inex = (vi64)(rem != 0);
  /* MPE_SR: floor(fraction * 2^32) of the remainder (round_ref.c), from dd unclamped */
  vi64 shr = dd - 32;
  shr = (vi64)SEL(vu64, shr > 63, SPLAT(vi64, 63), shr);
  const vi64 up = MPEI_ROUND_UP(mode, inex, (vi64)(rem > half), (vi64)(rem == half), (vi64)((t & 1) != 0), neg,
                              (vi64)(rnd < SEL(vu64, dd <= 32, rem << (vu64)((32 - dd) & (dd <= 32)),
                                              rem >> (vu64)(shr & (shr > 0)))),
                              (vi64)((rnd >> 31) != 0));
  const vu64 R = t - (vu64)up;
  vu64 res = SEL(vu64, dd >= 53, SEL(vu64, R != 0, SPLAT(vu64, pl->c.minsub_bits64), SPLAT(vu64, 0)),
                ((vu64)(Eeff - 1) << 52) + (R << (vu64)ddc));
  const vi64 spec = (vi64)(a >= INF64), nan = (vi64)(a > INF64), isinf = spec & ~nan;
  const vi64 ovf = ((vf64)res > pl->c.maxv) & ~spec;
  vi64 to_max = MPEI_ROUND_TO_MAX(mode, neg, SPLAT(vi64, -1));
  if (pl->c.saturate)
    to_max = SPLAT(vi64, -1);
  const vu64 maxb = (vu64)SPLAT(vf64, pl->c.maxv), ovfb = SPLAT(vu64, pl->c.has_inf ? INF64 : QNAN64);
  res = SEL(vu64, ovf, SEL(vu64, to_max, maxb, ovfb), res);
  const vu64 infb = pl->c.saturate ? maxb : ovfb;
  res = SEL(vu64, spec, SEL(vu64, nan, SPLAT(vu64, QNAN64), infb), res);
  vi64 fl = SPLAT(vi64, 0);
  if (pl->c.flush) {
    fl = (vi64)(res != 0) & ((vf64)res < pl->c.minnorm) & ~spec;
    res &= ~(vu64)fl;
  }
  const vi64 fin = ~spec;
  const vf64 tiny = (vf64)SEL(vu64, neg, SPLAT(vf64, pl->c.tiny_neg64), SPLAT(vf64, pl->c.tiny_pos64));
  fa->inexact |= (fin & inex) | ovf | fl;
  fa->underflow |= (fin & inex & (ad < tiny)) | fl;
  fa->overflow |= ovf;
  fa->flushed |= fl;
  if (pl->c.saturate)
    fa->saturated |= ovf | isinf;
  fa->invalid |= nan & (vi64)((a & 0x0008000000000000ull) == 0);
  if (!pl->c.has_inf && !pl->c.saturate)
    fa->invalid |= isinf;
  return (vf64)(res | sgn);
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
  vf64 v;
  hu32 r32;
  memcpy(&v, bd, sizeof v);
  memcpy(&r32, bw, sizeof r32);
  hf32 f = NARROW(round_vec(v, pl, mode, __builtin_convertvector(r32, vu64), fa));
  memcpy(y, &f, len * 4);
}

/* the words of the 4*VW elements of counters c .. c+VW-1, in element order */
static AI void sr_block(uint64_t seed, uint64_t c, vu64 r[4])
{
  vu64 lane, out[4];
  for (int j = 0; j < VW; j++)
    lane[j] = (uint64_t)j;
  philox_vec((SPLAT(vu64, c) + lane) & CTR_MASK, seed, out);
  /* (index lists from the ISA header: p_lo = {0, VW, 1, VW+1, ...}, p_hi the
     same from VW/2, q_lo = {0, 1, VW, VW+1, 2, 3, ...}, q_hi from VW/2) */
  vu64 lo01 = __builtin_shufflevector(out[0], out[1], MPEI_SHUF64_PLO);
  vu64 hi01 = __builtin_shufflevector(out[0], out[1], MPEI_SHUF64_PHI);
  vu64 lo23 = __builtin_shufflevector(out[2], out[3], MPEI_SHUF64_PLO);
  vu64 hi23 = __builtin_shufflevector(out[2], out[3], MPEI_SHUF64_PHI);
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
  roundfl fa = { SPLAT(vi64, 0), SPLAT(vi64, 0), SPLAT(vi64, 0), SPLAT(vi64, 0), SPLAT(vi64, 0), SPLAT(vi64, 0) };
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
      vu64 r[4];
      sr_block(P.c.seed, (idx0 + i) >> 2, r);
      for (int q = 0; q < 4; q++) {
        vf64 v;
        memcpy(&v, d + i + q * VW, sizeof v);
        hf32 f = NARROW(round_vec(v, &P, mode, r[q], &fa));   /* exact */
        memcpy(y + i + q * VW, &f, sizeof f);
      }
    }
  } else {
    for (; i + VW <= n; i += VW) {
      vf64 v;
      memcpy(&v, d + i, sizeof v);
      hf32 f = NARROW(round_vec(v, &P, mode, SPLAT(vu64, 0), &fa));   /* exact */
      memcpy(y + i, &f, sizeof f);
    }
  }
  for (; i < n; i += VW)
    round_part(y + i, d + i, n - i < VW ? n - i : VW, &P, idx0 + i, mode, &fa);
  vi64 z = SPLAT(vi64, 0);
  unsigned f = 0;
#define ANY(v) (memcmp(&(v), &z, sizeof z) != 0)
  MPEI_FLAGS_ADD(f, fa, ANY);
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
    vf64 v;
    memcpy(&v, x + i, sizeof v);
    v = SLEEF_EXP(v);
    memcpy(y + i, &v, sizeof v);
  }
  if (i < n) {
    double b[VW] = { 0 };
    memcpy(b, x + i, (n - i) * 8);
    vf64 v;
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

static AI vf32 loadw(const float *p) { vf32 f; memcpy(&f, p, sizeof f); return f; }
/* the plan's constants as lane vectors, made once per call (loop-invariant
   splats the compiler would otherwise rebuild per vector) */
typedef struct {
  vu32 minn, maxb;             /* binary32 patterns: smallest normal and largest finite of the format */
  vu32 dd, one, low, half;     /* dd = 24 - p dropped bits; one = 2^dd, low = one - 1, half = one / 2 */
} f32const;

static AI void f32const_make(f32const *k, const mpei_ew_plan *pl)
{
  const uint32_t dd = (uint32_t)pl->c.dbase;
  k->minn = SPLAT(vu32, pl->c.minnorm_bits);
  k->maxb = SPLAT(vu32, pl->c.max_bits);
  k->dd = SPLAT(vu32, dd);
  k->one = SPLAT(vu32, 1u << dd);
  k->low = SPLAT(vu32, (1u << dd) - 1);
  k->half = SPLAT(vu32, (1u << dd) >> 1);
}

static AI int fast32_vec(float *y, vf32 a, vf32 b, const f32const *k, const int op, const int mode, vu32 *inexact)
{
  vf32 s, e;
  if (op == EW_SUB)
    b = -b;
  if (op == EW_RECIP) {
    b = a;
    a = (vf32)SPLAT(vu32, 0x3f800000u);   /* 1 */
  }
  if (op == EW_MUL || op == EW_SCALE) {
    s = a * b;
    e = VFMAF(a, b, -s);
  } else if (op == EW_DIV || op == EW_RECIP) {
    s = a / b;
    e = (vf32)((vu32)VFMAF(-s, b, a) ^ ((vu32)b & 0x80000000u));   /* the sign of a/b - s */
  } else if (op == EW_SQRT) {
    s = VSQRTF(a);
    e = VFMAF(-s, s, a);
  } else {
    s = a + b;
    vf32 bb = s - a;
    e = (a - (s - bb)) + (b - bb);
  }
  const vu32 u = (vu32)s;
  const vi32 below = (vi32)(u ^ (vu32)e) < 0;               /* |exact| < |s| */
  vu32 r = SEL(vu32, e != 0, (u + (vu32)below) | 1u, u);      /* rounded to odd */
  const vu32 ar = r & 0x7fffffffu;
  /* patterns below 2^31 (ar, minn, maxb) compare as signed integers: one instruction */
  vi32 ok = (((vi32)ar >= (vi32)k->minn) | ((vi32)ar == 0)) & ((vi32)ar <= (vi32)k->maxb);
  /* remainders exact (2^-100: far from binary32's subnormals); a zero result
     only from a zero operand */
  if (op == EW_MUL || op == EW_SCALE)
    ok &= (ar >= 0x0d800000u) | ((ar == 0) & ((a == 0) | (b == 0)));
  if (op == EW_DIV || op == EW_RECIP || op == EW_SQRT)
    ok &= ((((vu32)a & 0x7fffffffu) >= 0x0d800000u) & (ar != 0)) | ((a == 0) & (ar == 0));
  if (!ALL32(ok))
    return 0;
  if ((op == EW_ADD || op == EW_SUB) && mode == MPE_RD) {   /* IEEE's -0 for an exact zero sum under RD */
    vi32 bothz = (a == 0) & (b == 0) & (vi32)(((vu32)a ^ (vu32)b) < 0x80000000u);
    r = SEL(vu32, (ar == 0) & ~bothz, SPLAT(vu32, 0x80000000u), r);
  }
  const vu32 sg = r & 0x80000000u;
  const vi32 neg = (vi32)sg != 0;
  const vu32 t = ar & ~k->low, rem = ar & k->low;
  /* fast32 plans exclude the stochastic modes (make_plan) */
  vu32 res = MPEI_ROUND_CARRY(mode, vu32, ar, k->dd, k->one, k->low, k->half, t, rem, neg, neg ^ neg, neg ^ neg);
  if (!ALL32((vi32)res <= (vi32)k->maxb))   /* res <= maxb + one < 2^31 */
    return 0;
  *inexact |= rem;
  res |= sg;
  memcpy(y, &res, sizeof res);
  return 1;
}

/* Vectors from i while each takes the fast path; returns the index of the
   first that does not (past n - 2*VW when all did); no calls inside (see
   sr32_run). alpha: scale only. */
static AI size_t fast32_run(float *y, const float *x, const float *yy, vf32 alpha, const f32const *kp, size_t i,
                            size_t n, const int op, const int mode, vu32 *inexact)
{
  const int has_y = op == EW_ADD || op == EW_SUB || op == EW_MUL || op == EW_DIV;
  const f32const K = *kp;
  vu32 inex = *inexact;
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
  const vf32 alpha = (vf32)SPLAT(vu32, abits);   /* a splat that keeps -0 */
  vu32 inexact = SPLAT(vu32, 0);
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
  vu32 z = SPLAT(vu32, 0);
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
typedef struct { vu64 k0[10], k1[10]; } srkeys;

static AI void srkeys_make(srkeys *K, uint64_t seed)
{
  uint32_t k0 = (uint32_t)seed, k1 = (uint32_t)(seed >> 32);
  for (int k = 0; k < 10; k++) {
    K->k0[k] = SPLAT(vu64, k0);
    K->k1[k] = SPLAT(vu64, k1);
    k0 += MPEI_PHILOX_W0;
    k1 += MPEI_PHILOX_W1;
  }
}

/* The words of the 8*VW elements of counters c .. c+2*VW-1 in element order,
   as four vectors of 2*VW words: two sets of VW counters whose rounds
   interleave (one set's chain of dependent multiplies leaves the multiplier
   idle). */
static AI void sr_block32(const srkeys *K, uint64_t c, vu32 r[4])
{
  const vu64 m32 = SPLAT(vu64, 0xffffffffu);
  vu64 lane;
  for (int j = 0; j < VW; j++)
    lane[j] = (uint64_t)j;
  const vu64 ctrA = (SPLAT(vu64, c) + lane) & CTR_MASK, ctrB = (SPLAT(vu64, c + VW) + lane) & CTR_MASK;
  vu64 a0 = ctrA & m32, a1 = ctrA >> 32, a2 = SPLAT(vu64, 0), a3 = SPLAT(vu64, 0);
  vu64 b0 = ctrB & m32, b1 = ctrB >> 32, b2 = SPLAT(vu64, 0), b3 = SPLAT(vu64, 0);
#pragma GCC unroll 10
  for (int k = 0; k < 10; k++) {
    MPEI_PHILOX_ROUND(MULU32, vu64, a0, a1, a2, a3, SPLAT(vu64, MPEI_PHILOX_M0), SPLAT(vu64, MPEI_PHILOX_M2), K->k0[k], K->k1[k]);
    MPEI_PHILOX_ROUND(MULU32, vu64, b0, b1, b2, b3, SPLAT(vu64, MPEI_PHILOX_M0), SPLAT(vu64, MPEI_PHILOX_M2), K->k0[k], K->k1[k]);
  }
  /* per counter the words (w0, w1) and (w2, w3) as 64-bit lanes (the shifts
     drop the junk upper halves of w1, w3), then the lanes of two counters
     after each other */
  const vu64 a01 = (a0 & m32) | (a1 << 32), a23 = (a2 & m32) | (a3 << 32);
  const vu64 b01 = (b0 & m32) | (b1 << 32), b23 = (b2 & m32) | (b3 << 32);
  r[0] = (vu32)__builtin_shufflevector(a01, a23, MPEI_SHUF64_PLO);
  r[1] = (vu32)__builtin_shufflevector(a01, a23, MPEI_SHUF64_PHI);
  r[2] = (vu32)__builtin_shufflevector(b01, b23, MPEI_SHUF64_PLO);
  r[3] = (vu32)__builtin_shufflevector(b01, b23, MPEI_SHUF64_PHI);
}

#if VW >= 8
/* sr_block32 for two consecutive blocks (counters c .. c+4*VW-1, words of
   16*VW elements in r[0..7]): four sets of VW counters in flight, so that
   the multiplier is busy rather than waiting on one chain (AVX-512's 32
   registers hold them; the words are those of sr_block32 at c and c+2*VW). */
static AI void sr_block32x2(const srkeys *K, uint64_t c, vu32 r[8])
{
  const vu64 m32 = SPLAT(vu64, 0xffffffffu);
  vu64 lane;
  for (int j = 0; j < VW; j++)
    lane[j] = (uint64_t)j;
  const vu64 ctrA = (SPLAT(vu64, c) + lane) & CTR_MASK, ctrB = (SPLAT(vu64, c + VW) + lane) & CTR_MASK;
  const vu64 ctrC = (SPLAT(vu64, c + 2 * VW) + lane) & CTR_MASK, ctrD = (SPLAT(vu64, c + 3 * VW) + lane) & CTR_MASK;
  vu64 a0 = ctrA & m32, a1 = ctrA >> 32, a2 = SPLAT(vu64, 0), a3 = SPLAT(vu64, 0);
  vu64 b0 = ctrB & m32, b1 = ctrB >> 32, b2 = SPLAT(vu64, 0), b3 = SPLAT(vu64, 0);
  vu64 c0 = ctrC & m32, c1 = ctrC >> 32, c2 = SPLAT(vu64, 0), c3 = SPLAT(vu64, 0);
  vu64 d0 = ctrD & m32, d1 = ctrD >> 32, d2 = SPLAT(vu64, 0), d3 = SPLAT(vu64, 0);
#pragma GCC unroll 10
  for (int k = 0; k < 10; k++) {
    MPEI_PHILOX_ROUND(MULU32, vu64, a0, a1, a2, a3, SPLAT(vu64, MPEI_PHILOX_M0), SPLAT(vu64, MPEI_PHILOX_M2), K->k0[k], K->k1[k]);
    MPEI_PHILOX_ROUND(MULU32, vu64, b0, b1, b2, b3, SPLAT(vu64, MPEI_PHILOX_M0), SPLAT(vu64, MPEI_PHILOX_M2), K->k0[k], K->k1[k]);
    MPEI_PHILOX_ROUND(MULU32, vu64, c0, c1, c2, c3, SPLAT(vu64, MPEI_PHILOX_M0), SPLAT(vu64, MPEI_PHILOX_M2), K->k0[k], K->k1[k]);
    MPEI_PHILOX_ROUND(MULU32, vu64, d0, d1, d2, d3, SPLAT(vu64, MPEI_PHILOX_M0), SPLAT(vu64, MPEI_PHILOX_M2), K->k0[k], K->k1[k]);
  }
  const vu64 a01 = (a0 & m32) | (a1 << 32), a23 = (a2 & m32) | (a3 << 32);
  const vu64 b01 = (b0 & m32) | (b1 << 32), b23 = (b2 & m32) | (b3 << 32);
  const vu64 c01 = (c0 & m32) | (c1 << 32), c23 = (c2 & m32) | (c3 << 32);
  const vu64 d01 = (d0 & m32) | (d1 << 32), d23 = (d2 & m32) | (d3 << 32);
  r[0] = (vu32)__builtin_shufflevector(a01, a23, MPEI_SHUF64_PLO);
  r[1] = (vu32)__builtin_shufflevector(a01, a23, MPEI_SHUF64_PHI);
  r[2] = (vu32)__builtin_shufflevector(b01, b23, MPEI_SHUF64_PLO);
  r[3] = (vu32)__builtin_shufflevector(b01, b23, MPEI_SHUF64_PHI);
  r[4] = (vu32)__builtin_shufflevector(c01, c23, MPEI_SHUF64_PLO);
  r[5] = (vu32)__builtin_shufflevector(c01, c23, MPEI_SHUF64_PHI);
  r[6] = (vu32)__builtin_shufflevector(d01, d23, MPEI_SHUF64_PLO);
  r[7] = (vu32)__builtin_shufflevector(d01, d23, MPEI_SHUF64_PHI);
}
#endif

/* the format's constants, splat once per call */
typedef struct {
  vu32 lo, span;          /* |s| bits in [lo, lo + span) */
  vu32 low, nlow, pexp;   /* one - 1, ~low; 309 - dd: the biased exponent of 2^(32-dd)/ulp plus E_s */
  vu32 dd, dd32;          /* dd and 32 - dd, as lane shift counts */
} srconst;

static AI int sr32_vec(float *y, vf32 a, vf32 b, vu32 rnd, const srconst *k, const int op, const int mode, vu32 *inexact)
{
  vf32 s, e;
  if (op == EW_SUB)
    b = -b;
  if (op == EW_MUL || op == EW_SCALE) {
    s = a * b;
    e = VFMAF(a, b, -s);
  } else {
    s = a + b;
    vf32 bb = s - a;
    e = (a - (s - bb)) + (b - bb);
  }
  const vu32 u = (vu32)s, sg = u & 0x80000000u, ar = u ^ sg;
  vi32 ok = (vi32)((ar - k->lo) ^ 0x80000000u) < (vi32)(k->span ^ 0x80000000u);   /* unsigned */
  /* exact zeros: a zero sum is exact; a zero product only of a zero operand */
  if (op == EW_MUL || op == EW_SCALE)
    ok |= (ar == 0) & ((a == 0) | (b == 0));
  else
    ok |= ar == 0;
  if (!ALL32(ok))
    return 0;
  const vf32 es = (vf32)((vu32)e ^ sg);   /* e' */
  const vi32 eneg = es < 0;
  const vu32 t = ar & k->nlow, r = ar & k->low;
  const vi32 wrap = (r == 0) & eneg;
  const vi32 half_q = wrap & ((ar << 9) == 0);
  const vf32 pw = (vf32)((k->pexp - (ar >> 23) - (vu32)half_q) << 23);
  const vf32 g = es * pw;
  /* floor(g), F with 2^31 added (a signed compare for the unsigned one) */
  const vi32 fg = __builtin_convertvector(MPEI_FLOOR_PS(g), vi32) + ((g == 0) & eneg);
  const vu32 F = (r << k->dd32) + (vu32)fg + 0x80000000u;
  vi32 up;
  if (mode == MPE_SR)
    up = (vi32)(rnd ^ 0x80000000u) < (vi32)F;
  else
    up = ((r != 0) | (es != 0)) & ((vi32)rnd < 0);
  const vu32 res = t + ((vu32)(wrap - up) << k->dd);
  *inexact |= r | (vu32)es;   /* bits 0-30: r < 2^dd has no bit 31, es's bit 31 is its sign */
  const vu32 out = res | sg;
  memcpy(y, &out, sizeof out);
  return 1;
}

/* Whole blocks of 8*VW elements from i while every vector stays in the pair's
   range. Returns the start of the first block not finished (at or past n -
   8*VW + 1 when all were), with *q the vector of it that left the range. The
   binary64 path's calls stay out of this loop (the caller makes them), so
   fewer of its values live across a call in memory. */
static AI size_t sr32_run(float *y, const float *x, const float *yy, vf32 alpha, const srconst *kp, const srkeys *keys,
                          uint64_t idx0, size_t i, size_t n, const int op, const int mode, vu32 *inexact,
                          int *qfail)
{
  const srconst K = *kp;
  vu32 inex = *inexact;
#if VW >= 8
  for (; i + 16 * VW <= n; i += 16 * VW) {
    vu32 rw[8];
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
    vu32 rw[4];
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
  const vf32 alpha = (vf32)SPLAT(vu32, abits);   /* a splat that keeps -0 */
  /* |s| at least one quantum above the smallest normal and 2^-64, below the
     largest finite and 2^127 */
  const uint32_t dd = (uint32_t)P.c.dbase, lo = P.c.minnorm_bits + (1u << dd);
  const uint32_t lo_bits = lo > 0x1f800000u ? lo : 0x1f800000u;
  const uint32_t hi_bits = P.c.max_bits < 0x7f000000u ? P.c.max_bits : 0x7f000000u;
  const srconst K = { SPLAT(vu32, lo_bits), SPLAT(vu32, hi_bits > lo_bits ? hi_bits - lo_bits : 0), SPLAT(vu32, (1u << dd) - 1),
                      SPLAT(vu32, ~((1u << dd) - 1)), SPLAT(vu32, 309 - dd), SPLAT(vu32, dd), SPLAT(vu32, 32 - dd) };
  const uint64_t idx0 = P.c.offset + i0;
  srkeys keys;
  srkeys_make(&keys, P.c.seed);
  vu32 inexact = SPLAT(vu32, 0);
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
  vu32 z = SPLAT(vu32, 0);
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
