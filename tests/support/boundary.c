/* Boundary-case generator and exact references (see boundary.h). */
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "boundary.h"
#include "testsupport.h"

/* exponent of the quantum of g in the binade of a (a > 0, finite) */
static int quantum_exp(const ts_fmt *g, double a)
{
  int e = ilogb(a);
  return (e > g->emin ? e : g->emin) - g->p + 1;
}

int ts_fmt_fits(const ts_fmt *g, double x)
{
  double a = fabs(x);
  if (a == 0)
    return 1;
  if (!(a <= g->maxv))
    return 0;
  double t = ldexp(a, -quantum_exp(g, a));
  return t == floor(t);
}

/* x cut toward zero to g's grid, clamped to +-max */
static double fit_rz(const ts_fmt *g, double x)
{
  double a = fabs(x);
  if (a == 0 || !isfinite(a))
    return x;
  if (a > g->maxv)
    a = g->maxv;
  int q = quantum_exp(g, a);
  a = ldexp(trunc(ldexp(a, -q)), q);
  return x < 0 ? -a : a;
}

static uint64_t rnd(ts_bgen *g)
{
  return ts_rand64(&g->state);
}

static int binade_ok(const ts_bgen *g, int e)
{
  return e >= g->elo && e <= g->ehi;
}

static int value_ok(const ts_bgen *g, double x)
{
  if (x == 0 || !isfinite(x))
    return 1;
  return binade_ok(g, ilogb(x)) && ts_fmt_fits(&g->src, x);
}

static void add_exp(ts_bgen *g, int e)
{
  if (!binade_ok(g, e) || g->nexp == (int)(sizeof g->exps / sizeof g->exps[0]))
    return;
  for (int i = 0; i < g->nexp; i++)
    if (g->exps[i] == e)
      return;
  g->exps[g->nexp++] = e;
}

static void add_max(ts_bgen *g, double x)
{
  x = fabs(x);
  if (x == 0 || !isfinite(x) || !value_ok(g, x) || g->nmax == (int)(sizeof g->maxima / sizeof g->maxima[0]))
    return;
  g->maxima[g->nmax++] = x;
}

/* the lists of boundary binades and maximum magnitudes, inside the window */
static void make_lists(ts_bgen *g)
{
  const ts_fmt *t = &g->tgt, *s = &g->src;
  g->nexp = g->nmax = 0;
  int te[] = { t->emin - t->p - 1, t->emin - t->p, t->emin - t->p + 1, t->emin - t->p + 2, t->emin - 2,
               t->emin - 1, t->emin, t->emin + 1, t->emax - 1, t->emax, t->emax + 1, t->emax + 2,
               s->emin - s->p + 1, s->emin - s->p + 2, s->emin - 1, s->emin, s->emin + 1,
               s->emax - 1, s->emax, -1, 0, 1 };
  for (size_t i = 0; i < sizeof te / sizeof te[0]; i++)
    add_exp(g, te[i]);
  double qt = ldexp(1, t->emax - t->p + 1);              /* target quantum at the top */
  double qs = ldexp(1, quantum_exp(s, t->maxv));          /* source quantum there */
  double m[] = { t->maxv, t->maxv - qs, t->maxv + qs, t->maxv + qt / 2, t->maxv + qt / 2 - qs,
                 t->maxv + qt / 2 + qs, t->maxv + qt, s->maxv, s->maxv - ldexp(1, quantum_exp(s, s->maxv)),
                 ldexp(1, t->emin - t->p + 1), ldexp(1, t->emin - t->p), ldexp(1, t->emin - t->p) * 1.5,
                 ldexp(1, t->emin), ldexp(1, t->emin) - ldexp(1, t->emin - t->p + 1),
                 ldexp(1, t->emin) - ldexp(1, t->emin - t->p), ldexp(1, s->emin - s->p + 1),
                 ldexp(1, s->emin), ldexp(1, t->emax + 1), ldexp(1, t->emin - t->p + 1) * 0.75 };
  for (size_t i = 0; i < sizeof m / sizeof m[0]; i++)
    add_max(g, m[i]);
  /* the tie at the top and its neighbours, one source ulp either side */
  double top = t->maxv + qt / 2;
  add_max(g, top - ldexp(1, quantum_exp(s, top)));
}

void ts_bgen_init_fmt(ts_bgen *g, ts_fmt target, ts_fmt source, uint64_t seed)
{
  memset(g, 0, sizeof *g);
  g->tgt = target;
  g->src = source;
  g->state = seed;
  g->specials = 1;
  g->elo = source.emin - source.p + 1;
  g->ehi = source.emax;
  make_lists(g);
}

void ts_bgen_init(ts_bgen *g, const mpe_format *target, const mpe_format *source, uint64_t seed)
{
  ts_fmt t = ts_fmt_of(target);
  ts_bgen_init_fmt(g, t, source ? ts_fmt_of(source) : t, seed);
}

void ts_bgen_window(ts_bgen *g, int elo, int ehi)
{
  int lo = g->src.emin - g->src.p + 1, hi = g->src.emax;
  g->elo = elo > lo ? elo : lo;
  g->ehi = ehi < hi ? ehi : hi;
  make_lists(g);
}

/* significand patterns in [1, 2) with fb fraction bits; index < npat, or random */
enum { NPAT = 16 };
static double pattern(const ts_bgen *g, int i, uint64_t r)
{
  int fb = g->src.p - 1, tp = g->tgt.p;
  double ulp = ldexp(1, -fb);
  int k;
  switch (i) {
  case 0: return 1;
  case 1: return 2 - ulp;                                  /* all ones */
  case 2: return 1 + ulp;                                  /* one at the end */
  case 3: return 1.5;                                      /* one at the top */
  case 4: k = 2; break;                                    /* runs of ones, then zeros */
  case 5: k = tp - 2; break;
  case 6: k = tp - 1; break;
  case 7: k = tp; break;
  case 8: k = tp + 1; break;
  case 9: k = fb - 1; break;
  case 10: return 1 + ldexp(1, -(tp - 1)) - ulp;           /* zeros, then ones from the rounding bit on */
  case 11: return 1 + ldexp(1, -tp) - ulp;
  case 12: return 1 + ldexp(1, -(tp + 1)) - ulp;
  case 13: {                                                /* 1.0101... */
    double v = 1;
    for (int j = 2; j <= fb; j += 2)
      v += ldexp(1, -j);
    return v;
  }
  case 14: return 2 - ldexp(1, -(tp - 1)) + ldexp(1, -tp);  /* target all ones, then a tie bit */
  default: return 1 + ldexp((double)(r >> 11), -53) - fmod(ldexp((double)(r >> 11), -53), ulp);
  }
  if (k < 1)
    k = 1;
  if (k > fb)
    k = fb;
  return 2 - ldexp(1, -k);
}

static double structured(ts_bgen *g, int e, int pat, int neg, uint64_t r)
{
  double v = fit_rz(&g->src, ldexp(pattern(g, pat, r), e));
  return neg ? -v : v;
}

/* a tie (off = 0) or near-tie (off = +-1 source quantum, or sticky cases) of the
   target in binade et: base + qt/2 + off*qs, base chosen by kind */
static double tie(const ts_bgen *g, int et, int kind, int off, int neg, uint64_t r)
{
  const ts_fmt *t = &g->tgt;
  int qe = (et > t->emin ? et : t->emin) - t->p + 1;
  double qt = ldexp(1, qe), lo = ldexp(1, et);
  double steps = ldexp(1, et - qe);                      /* multiples of qt in the binade */
  double base;
  switch (kind) {
  case 0: base = lo; break;
  case 1: base = lo + (steps - 1) * qt; break;           /* last representable below 2^(et+1) */
  case 2: base = lo + qt; break;                         /* odd */
  default: base = lo + floor(ldexp((double)(r >> 11), -53) * steps) * qt; break;
  }
  double v = base + qt / 2;
  double qs = ldexp(1, quantum_exp(&g->src, v));
  switch (off) {
  case 0: break;
  case 1: v += qs; break;
  case 2: v -= qs; break;
  case 3: v = base + qs; break;                           /* only a sticky bit */
  default: v = base + qt - qs; break;                     /* everything below the next value */
  }
  return neg ? -v : v;
}

static double special(ts_bgen *g, uint64_t r)
{
  static const uint64_t nans[] = { 0x7ff8000000000000ull, 0xfff8000000000000ull, 0x7ff0000000000001ull,
                                   0x7ff4000000000000ull, 0xfff0000000abcdefull };
  switch (r % 8) {
  case 0: case 1: return 0.0;
  case 2: case 3: return -0.0;
  case 4: return g->src.has_inf ? INFINITY : 0.0;
  case 5: return g->src.has_inf ? -INFINITY : -0.0;
  default: return ts_u2d(nans[(r >> 8) % 5]);
  }
}

double ts_bgen_next(ts_bgen *g)
{
  for (int tries = 0; tries < 64; tries++) {
    uint64_t r = rnd(g), r2 = rnd(g);
    int neg = (int)(r >> 63);
    double v;
    switch (r % 16) {
    case 0:
      if (g->specials)
        return special(g, r2);
      /* fall through */
    case 1: case 2: case 3: case 4: case 5: case 6: {
      int e;
      if ((r >> 8) % 4 == 0 || g->nexp == 0)
        e = g->elo + (int)((r2 >> 40) % (uint64_t)(g->ehi - g->elo + 1));
      else
        e = g->exps[(r >> 16) % (uint64_t)g->nexp];
      v = structured(g, e, (int)((r >> 24) % (NPAT + 4)), neg, r2);
      break;
    }
    case 7: case 8: case 9: case 10: case 11: {
      int et = g->exps[(r >> 16) % (uint64_t)(g->nexp ? g->nexp : 1)];
      v = tie(g, et, (int)((r >> 24) % 5), (int)((r >> 32) % 6), neg, r2);
      break;
    }
    case 12: case 13:
      if (g->nmax == 0)
        continue;
      v = g->maxima[(r >> 16) % (uint64_t)g->nmax];
      v = neg ? -v : v;
      break;
    default: {
      int e = g->elo + (int)((r2 >> 40) % (uint64_t)(g->ehi - g->elo + 1));
      v = structured(g, e, NPAT, neg, r2);
      break;
    }
    }
    if (isfinite(v) && v != 0 && value_ok(g, v))
      return v;
  }
  return 1.0;
}

float ts_bgen_next_f32(ts_bgen *g)
{
  static const uint32_t nans[] = { 0x7fc00000u, 0xffc00000u, 0x7f800001u, 0xff800001u,
                                   0x7fbfffffu, 0x7fc12345u, 0xffffffffu };
  double v = ts_bgen_next(g);
  if (isnan(v))
    return ts_u2f(nans[rnd(g) % 7]);
  return (float)v;
}

size_t ts_bgen_table(const ts_bgen *g0, double *out, size_t cap)
{
  ts_bgen g = *g0;      /* the random pattern uses a private stream */
  size_t n = 0;
#define PUT(x) do { double x_ = (x); if (n < cap && value_ok(&g, x_)) out[n++] = x_; } while (0)
  for (int i = 0; i < g.nexp; i++)
    for (int pat = 0; pat <= NPAT; pat++)
      for (int neg = 0; neg < 2; neg++)
        PUT(structured(&g, g.exps[i], pat, neg, rnd(&g)));
  for (int i = 0; i < g.nexp; i++)
    for (int kind = 0; kind < 4; kind++)
      for (int off = 0; off < 5; off++)
        for (int neg = 0; neg < 2; neg++)
          PUT(tie(&g, g.exps[i], kind, off, neg, rnd(&g)));
  for (int i = 0; i < g.nmax; i++) {
    PUT(g.maxima[i]);
    PUT(-g.maxima[i]);
  }
  PUT(0.0);
  PUT(-0.0);
  if (g.specials) {
    if (g.src.has_inf) {
      PUT(INFINITY);
      PUT(-INFINITY);
    }
    for (int i = 0; i < 5; i++)
      PUT(special(&g, 6 + ((uint64_t)i << 8)));
  }
#undef PUT
  return n;
}

static double next_finite(ts_bgen *g)
{
  int sp = g->specials;
  g->specials = 0;
  double v = ts_bgen_next(g);
  g->specials = sp;
  return v;
}

static const char *const style_names[TS_BGEN_NSTYLES] = {
  "independent", "all equal", "alternating signs", "all-ones significands", "maximum magnitude",
  "near-cancelling pairs", "sparse", "subnormal"
};

const char *ts_bgen_style_name(int style)
{
  return style >= 0 && style < TS_BGEN_NSTYLES ? style_names[style] : "?";
}

int ts_bgen_vector(ts_bgen *g, double *x, size_t n, size_t stride)
{
  int style = (int)(rnd(g) % TS_BGEN_NSTYLES);
  double v = next_finite(g);
  int fb = g->src.p - 1, sign_mode = (int)(rnd(g) % 4);
  for (size_t i = 0; i < n; i++) {
    uint64_t r = rnd(g);
    int neg = (int)(r >> 63);
    double y;
    switch (style) {
    case 0: y = ts_bgen_next(g); break;
    case 1: y = v; break;
    case 2: y = i % 2 ? -v : v; break;
    case 3: {
      int e = g->nexp ? g->exps[(r >> 8) % (uint64_t)g->nexp] : 0;
      y = fit_rz(&g->src, ldexp(2 - ldexp(1, -fb), e));
      y = value_ok(g, y) ? y : v;
      y = neg ? -y : y;
      break;
    }
    case 4:                                   /* signs: all +, all -, alternating, random */
      neg = sign_mode == 0 ? 0 : sign_mode == 1 ? 1 : sign_mode == 2 ? (int)(i % 2) : neg;
      y = neg ? -g->src.maxv : g->src.maxv;
      y = value_ok(g, y) ? y : v;
      break;
    case 5:
      if (i % 2 == 0) {
        v = next_finite(g);
        y = v;
      } else {
        double a = fabs(v), q = ldexp(1, quantum_exp(&g->src, a));
        double w = (r >> 8) % 2 && a + q <= g->src.maxv ? a + q : a - q;
        w = value_ok(g, w) ? w : a;
        y = v < 0 ? w : -w;
      }
      break;
    case 6: y = (r >> 8) % 8 == 0 ? ts_bgen_next(g) : (neg ? -0.0 : 0.0); break;
    default: {
      int lo = g->tgt.emin - g->tgt.p + 1, hi = g->tgt.emin - 1;
      lo = lo > g->elo ? lo : g->elo;
      hi = hi < g->ehi ? hi : g->ehi;
      y = hi >= lo ? structured(g, lo + (int)((r >> 8) % (uint64_t)(hi - lo + 1)), (int)((r >> 20) % (NPAT + 1)),
                                neg, rnd(g))
                   : v;
      y = value_ok(g, y) ? y : v;
      break;
    }
    }
    x[i * stride] = y;
  }
  return style;
}

/* ------------------------------------------------------------------ exact rounding */

double ts_round_z(const mpz_t S, long X, const ts_fmt *g, mpe_round r, int ovf_inf, int *inexact)
{
  int sg = mpz_sgn(S);
  if (inexact)
    *inexact = 0;
  if (sg == 0)
    return 0.0;
  int neg = sg < 0;
  mpz_t A, M;
  mpz_inits(A, M, NULL);
  mpz_abs(A, S);
  long e = (long)mpz_sizeinbase(A, 2) - 1 + X;
  long qe = (e > g->emin ? e : g->emin) - g->p + 1;
  long sh = qe - X;
  int half = 0, sticky = 0;
  if (sh <= 0) {
    mpz_mul_2exp(M, A, (mp_bitcnt_t)-sh);
  } else {
    mpz_tdiv_q_2exp(M, A, (mp_bitcnt_t)sh);
    half = mpz_tstbit(A, (mp_bitcnt_t)sh - 1);
    sticky = mpz_scan1(A, 0) < (mp_bitcnt_t)sh - 1;
  }
  int inex = half || sticky, up;
  switch (r) {
  case MPE_RZ: up = 0; break;
  case MPE_RU: up = inex && !neg; break;
  case MPE_RD: up = inex && neg; break;
  case MPE_RNA: up = half; break;
  case MPE_RO: up = 0; if (inex) mpz_setbit(M, 0); break;
  default: up = half && (sticky || mpz_odd_p(M)); break;
  }
  if (up)
    mpz_add_ui(M, M, 1);
  double v = ldexp(mpz_get_d(M), (int)qe);
  mpz_clears(A, M, NULL);
  if (v > g->maxv) {
    int toward_zero = r == MPE_RZ || r == MPE_RO || (r == MPE_RU && neg) || (r == MPE_RD && !neg);
    if (ovf_inf)
      v = INFINITY;
    else if (toward_zero)
      v = g->maxv;
    else
      v = g->has_inf ? INFINITY : NAN;
  }
  if (inexact)
    *inexact = inex;
  return neg ? -v : v;
}

double ts_round_d(double x, const ts_fmt *g, mpe_round r)
{
  if (isnan(x) || x == 0)
    return x;
  if (isinf(x))
    return g->has_inf ? x : NAN;
  int e;
  double m = frexp(x, &e);
  mpz_t S;
  mpz_init_set_d(S, ldexp(m, 53));
  double v = ts_round_z(S, e - 53, g, r, 0, NULL);
  mpz_clear(S);
  return v;
}

/* ------------------------------------------------------------------ Philox4x32-10 */

void ts_philox4x32(uint32_t out[4], const uint32_t ctr[4], const uint32_t key[2])
{
  uint32_t c0 = ctr[0], c1 = ctr[1], c2 = ctr[2], c3 = ctr[3], k0 = key[0], k1 = key[1];
  for (int i = 0; i < 10; i++) {
    uint64_t p0 = (uint64_t)0xD2511F53u * c0, p1 = (uint64_t)0xCD9E8D57u * c2;
    uint32_t n0 = (uint32_t)(p1 >> 32) ^ c1 ^ k0, n2 = (uint32_t)(p0 >> 32) ^ c3 ^ k1;
    c1 = (uint32_t)p1;
    c3 = (uint32_t)p0;
    c0 = n0;
    c2 = n2;
    k0 += 0x9E3779B9u;
    k1 += 0xBB67AE85u;
  }
  out[0] = c0; out[1] = c1; out[2] = c2; out[3] = c3;
}

/* ------------------------------------------------------------------ tensor-core oracle */

/* every quantity is an integer multiple of 2^-UNIT: products of two inputs reach
   2^-272 (TF32 subnormals), binary32 c 2^-149 */
enum { UNIT = 400 };

static void to_units(mpz_t z, double x)
{
  mpz_set_d(z, ldexp(x, UNIT));
}

/* exponent of a non-zero finite input: floor(log2|x|), not below emin */
static long in_exp(double x, int emin)
{
  int e = ilogb(x);
  return e > emin ? e : emin;
}

/* IEEE specials of sum a_k b_k (+ c when with_c): 1 NaN, 2 +inf, 3 -inf, 0 none */
static int specials_of(int k0, int k1, const double *a, size_t sa, const double *b, size_t sb, double c,
                       int with_c)
{
  int nan = 0, pinf = 0, ninf = 0;
  if (with_c) {
    nan = isnan(c);
    pinf = isinf(c) && c > 0;
    ninf = isinf(c) && c < 0;
  }
  for (int k = k0; k < k1; k++) {
    double x = a[k * sa], y = b[k * sb];
    if (isnan(x) || isnan(y))
      nan = 1;
    else if (isinf(x) || isinf(y)) {
      if (x == 0 || y == 0)
        nan = 1;
      else if ((x < 0) != (y < 0))
        ninf = 1;
      else
        pinf = 1;
    }
  }
  if (nan || (pinf && ninf))
    return 1;
  return pinf ? 2 : ninf ? 3 : 0;
}

static double special_value(int s)
{
  return s == 1 ? NAN : s == 2 ? INFINITY : -INFINITY;
}

/* IEEE addition x + y rounded in g with mode rm (the late-c step: nearest-even) */
static double ieee_add(double x, double y, const ts_fmt *g, mpe_round rm)
{
  if (isnan(x) || isnan(y) || (isinf(x) && isinf(y) && (x > 0) != (y > 0)))
    return NAN;
  if (isinf(x))
    return x;
  if (isinf(y))
    return y;
  mpz_t S, t;
  mpz_inits(S, t, NULL);
  to_units(S, x);
  to_units(t, y);
  mpz_add(S, S, t);
  double v;
  if (mpz_sgn(S) == 0)
    v = signbit(x) && signbit(y) ? -0.0 : 0.0;
  else
    v = ts_round_z(S, -UNIT, g, rm, 0, NULL);
  mpz_clears(S, t, NULL);
  return v;
}

/* one hardware block: products k0..k1-1 and the accumulator c */
static double tc_block(const mpe_tc_params *p, int k0, int k1, const double *a, size_t sa, const double *b,
                       size_t sb, double c, mpe_type out)
{
  const ts_fmt of = ts_fmt_type(out);
  int ein = ts_fmt_type(p->in).emin;
  int late = p->late_c;
  int s = specials_of(k0, k1, a, sa, b, sb, c, !late);
  if (s)
    return late ? ieee_add(special_value(s), c, &of, MPE_RNE) : special_value(s);
  long emax = LONG_MIN;
  for (int k = k0; k < k1; k++) {
    double x = a[k * sa], y = b[k * sb];
    if (x != 0 && y != 0) {
      long e = in_exp(x, ein) + in_exp(y, ein);
      emax = e > emax ? e : emax;
    }
  }
  int c_in = !late && (c != 0 || p->zero_c_counts);
  if (c_in) {
    /* a zero c: zero_c_exp lies below binary32's emin as far as the exponent
       used lies below the output's (mpe_tc_model_get(3)) */
    long e = c != 0 ? in_exp(c, of.emin) : p->zero_c_exp ? of.emin + (p->zero_c_exp + 126) : of.emin;
    emax = e > emax ? e : emax;
  }
  double r = 0.0;
  if (emax != LONG_MIN) {
    long X = emax - p->align_bits;          /* the cut: multiples of 2^X */
    mpz_t S, t;
    mpz_inits(S, t, NULL);
    for (int k = k0; k < k1; k++) {
      double x = a[k * sa], y = b[k * sb];
      if (x != 0 && y != 0) {
        to_units(t, x * y);                 /* exact: at most 24 significant bits */
        mpz_tdiv_q_2exp(t, t, (mp_bitcnt_t)(X + UNIT));
        mpz_add(S, S, t);
      }
    }
    if (c_in) {
      to_units(t, c);
      mpz_tdiv_q_2exp(t, t, (mp_bitcnt_t)(X + UNIT));
      mpz_add(S, S, t);
    }
    mpe_round rm = out == MPE_FP16 ? p->round_fp16 : p->round_fp32;
    int neg = mpz_sgn(S) < 0;
    if (out == MPE_FP32 && p->result_bits > 0 && mpz_sgn(S) != 0) {
      /* fraction bits of the binary32 result: below 2^-126 those of a subnormal's
         field (the man page leaves this implicit; it matters only when
         result_bits < align_bits and the sum lies under 2^-126) */
      long e = (long)mpz_sizeinbase(S, 2) - 1 + X;
      long drop = (e > of.emin ? e : of.emin) - p->result_bits - X;
      if (drop > 0) {
        mpz_tdiv_q_2exp(S, S, (mp_bitcnt_t)drop);
        X += drop;
      }
    }
    r = ts_round_z(S, X, &of, rm, 1, NULL);
    if (r == 0 && neg)
      r = -0.0;                             /* a non-zero sum cut to zero keeps its sign */
    mpz_clears(S, t, NULL);
  }
  if (late)
    r = ieee_add(r, c, &of, MPE_RNE);
  return p->zero_sign && r == 0 ? 0.0 : r;  /* zero_sign: every zero result is +0 */
}

/* fp16_split, binary16 output (mpe_tc_model_get(3)): the products at k mod 4 in
   {0, 1} of the block, read as binary16 values, with c = +0; then those at
   k mod 4 in {2, 3} with that result as c; then c added with one addition */
static double tc_split_block(const mpe_tc_params *p, int k0, int k1, const double *a, size_t sa,
                             const double *b, size_t sb, double c)
{
  double ha[2][512], hb[2][512];
  int n[2] = { 0, 0 };
  for (int k = k0; k < k1; k++) {
    int h = (k - k0) % 4 >= 2;
    ha[h][n[h]] = a[k * sa];
    hb[h][n[h]++] = b[k * sb];
  }
  mpe_tc_params ph = *p;
  ph.in = MPE_FP16;
  ph.align_bits = p->fp16_split;
  ph.late_c = 0;
  double r = tc_block(&ph, 0, n[0], ha[0], 1, hb[0], 1, 0.0, MPE_FP16);
  r = tc_block(&ph, 0, n[1], ha[1], 1, hb[1], 1, r, MPE_FP16);
  const ts_fmt hf = ts_fmt_type(MPE_FP16);
  r = ieee_add(r, c, &hf, p->round_fp16);
  return p->zero_sign && r == 0 ? 0.0 : r;
}

static double tc_exact(int K, const double *a, size_t sa, const double *b, size_t sb, double c, mpe_type out)
{
  const ts_fmt of = ts_fmt_type(out);
  int s = specials_of(0, K, a, sa, b, sb, c, 1);
  if (s)
    return special_value(s);
  mpz_t S, t;
  mpz_inits(S, t, NULL);
  int all_neg_zero = signbit(c) && c == 0;
  to_units(S, c);
  for (int k = 0; k < K; k++) {
    double x = a[k * sa], y = b[k * sb], pr = x * y;
    if (!(pr == 0 && signbit(pr)))
      all_neg_zero = 0;
    to_units(t, pr);
    mpz_add(S, S, t);
  }
  double v = mpz_sgn(S) == 0 ? (all_neg_zero ? -0.0 : 0.0) : ts_round_z(S, -UNIT, &of, MPE_RNE, 0, NULL);
  mpz_clears(S, t, NULL);
  return v;
}

double ts_tc_oracle(const mpe_tc_params *p, int K, const double *a, size_t sa, const double *b, size_t sb,
                    double c, mpe_type out)
{
  if (p->kind == MPE_TC_EXACT)
    return tc_exact(K, a, sa, b, sb, c, out);
  if (p->kind == MPE_TC_FMA_CHAIN) {
    float d = (float)c;
    for (int k = 0; k < K; k++)
      d = fmaf((float)a[k * sa], (float)b[k * sb], d);
    return d;
  }
  double d = c;
  for (int k0 = 0; k0 < K; k0 += p->block) {
    const int k1 = k0 + p->block < K ? k0 + p->block : K;
    d = out == MPE_FP16 && p->fp16_split ? tc_split_block(p, k0, k1, a, sa, b, sb, d)
                                         : tc_block(p, k0, k1, a, sa, b, sb, d, out);
  }
  return d;
}

double ts_tc_input(const mpe_tc_params *p, float x)
{
  ts_fmt in = ts_fmt_type(p->in);
  int fp8 = p->in == MPE_E4M3 || p->in == MPE_E5M2;
  if (isnan(x))
    return x;
  if (isinf(x))
    return fp8 ? (x < 0 ? -in.maxv : in.maxv) : x;
  double r = ts_round_d(x, &in, p->input_round);
  if (fp8 && !isfinite(r))
    r = x < 0 ? -in.maxv : in.maxv;
  return r;
}
