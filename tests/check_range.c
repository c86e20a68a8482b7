/* Range analysis: counts against the MPFR oracle (independent of the
   library's rounding), the scale rule against a brute-force search, the
   one-pass counts at any power-of-two scale against rounding the scaled
   values, hand cases for values only binary64 holds, the error measure, the
   histograms and the error paths. */
#include <limits.h>
#include <fenv.h>
#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "testsupport.h"

/* The constructors: new_range* assert success; *_einval assert that a bad
   argument gives MPE_EINVAL with the out-pointer set to NULL (it starts
   non-NULL), and NULL from the deprecated wrapper. */
static mpe_range *new_range(const mpe_format *const *f, size_t n, const mpe_range_opts *o)
{
  mpe_range *r;
  ck_assert_int_eq(mpe_range_create(&r, f, n, o), MPE_OK);
  ck_assert_ptr_nonnull(r);
  return r;
}

static mpe_range *new_range_targets(const mpe_range_target *t, size_t n, const mpe_range_opts *o)
{
  mpe_range *r;
  ck_assert_int_eq(mpe_range_create_targets(&r, t, n, o), MPE_OK);
  ck_assert_ptr_nonnull(r);
  return r;
}

static char junk;

static void range_einval(const mpe_format *const *f, size_t n, const mpe_range_opts *o)
{
  mpe_range *r = (mpe_range *)(void *)&junk;
  ck_assert_int_eq(mpe_range_create(&r, f, n, o), MPE_EINVAL);
  ck_assert_ptr_null(r);
  ck_assert_ptr_null(mpe_range_alloc(f, n, o));
}

static void range_targets_einval(const mpe_range_target *t, size_t n, const mpe_range_opts *o)
{
  mpe_range *r = (mpe_range *)(void *)&junk;
  ck_assert_int_eq(mpe_range_create_targets(&r, t, n, o), MPE_EINVAL);
  ck_assert_ptr_null(r);
  ck_assert_ptr_null(mpe_range_alloc_targets(t, n, o));
}

static const char *fmts[] = { "fp16", "bf16", "tf32", "e4m3", "e5m2", "fp32", "fp64" };
#define NF 7

static const mpe_format *F(int k) { return mpe_format_lookup(fmts[k]); }

static double oracle(double x, const mpe_format *f)
{
  ts_fmt g = ts_fmt_of(f);
  return ts_round_mpfr_d(x, &g, MPE_RNE);
}

/* random binary32 values over a wide exponent range, with exact powers of two,
   format boundaries and their neighbours mixed in */
static float rand_value(uint64_t *st)
{
  static const float edges[] = { 65520.0f, 65504.0f, 0x1p-25f, 0x1p-24f, 0x1p-14f, 464.0f, 448.0f, 480.0f,
                                 61440.0f, 57344.0f, 0x1p-10f, 0x1p-9f, 0x1p-17f, 0x1p-16f, 0x1p-6f,
                                 0x1p-133f, 0x1p-134f, 0x1p-126f, 0x1.fep127f, 0x1.ffp127f, 0x1p-149f };
  uint64_t r = ts_rand64(st);
  float v;
  switch (r & 7) {
  case 0:
    v = edges[(r >> 3) % (sizeof edges / sizeof edges[0])];
    if ((r >> 20) & 1) v = nextafterf(v, (r >> 21) & 1 ? INFINITY : 0.0f);
    break;
  case 1:
    v = ldexpf(1.0f, (int)((r >> 3) % 270) - 149);
    break;
  case 2:
    v = ts_u2f((uint32_t)(r >> 8) & 0x7fffffffu);    /* any finite or not */
    break;
  default:
    v = ldexpf(1.0f + (float)((r >> 8) & 0xffffff) / 16777216.0f, (int)((r >> 40) % 80) - 50);
  }
  return (r >> 63) ? -v : v;
}

START_TEST(test_oracle_counts)
{
  enum { N = 6000 };
  uint64_t st = ts_seed() + (uint64_t)_i;
  float *x = malloc(N * sizeof *x);
  for (int i = 0; i < N; i++)
    x[i] = rand_value(&st);
  const mpe_format *fm[NF];
  for (int k = 0; k < NF; k++)
    fm[k] = F(k);
  int margin = _i;   /* 0..2 */
  mpe_range_opts o = { margin };
  mpe_range *r = new_range(fm, NF, &o);
  ck_assert_ptr_nonnull(r);
  /* in uneven pieces, to cross blocks */
  for (int s = 0; s < N;) {
    int m = 1 + (int)(ts_rand64(&st) % 5000);
    if (m > N - s) m = N - s;
    ck_assert_int_eq(mpe_range_add_f32(r, x + s, (size_t)m), 0);
    s += m;
  }
  double maxabs = 0;
  uint64_t zeros = 0, nonfin = 0;
  for (int i = 0; i < N; i++) {
    if (!isfinite(x[i])) nonfin++;
    else if (x[i] == 0) zeros++;
    else if (fabsf(x[i]) > maxabs) maxabs = fabsf(x[i]);
  }
  mpe_range_summary su;
  mpe_range_summary_get(r, &su);
  ck_assert_uint_eq(su.count, N);
  ck_assert_uint_eq(su.zeros, zeros);
  ck_assert_uint_eq(su.nan + su.inf, nonfin);
  ck_assert(su.max_abs == maxabs);
  for (int k = 0; k < NF; k++) {
    const mpe_format *f = fm[k];
    double mn = mpe_format_min_normal(f);
    uint64_t u = 0, sub = 0, ov = 0;
    for (int i = 0; i < N; i++) {
      if (!isfinite(x[i]) || x[i] == 0) continue;
      double y = oracle(x[i], f);
      if (!isfinite(y)) ov++;
      else if (y == 0) u++;
      else if (fabs(y) < mn) sub++;
    }
    mpe_range_stats s;
    ck_assert_int_eq(mpe_range_stats_get(r, (size_t)k, &s), 0);
    ck_assert_msg(s.underflow == u && s.subnormal == sub && s.overflow == ov,
                  "%s: underflow %llu/%llu subnormal %llu/%llu overflow %llu/%llu", fmts[k],
                  (unsigned long long)s.underflow, (unsigned long long)u, (unsigned long long)s.subnormal,
                  (unsigned long long)sub, (unsigned long long)s.overflow, (unsigned long long)ov);
    /* the scale: brute force from above */
    int kk = 2100;
    while (ldexp(maxabs, kk) > ldexp(mpe_format_max(f), -margin))
      kk--;
    ck_assert_int_eq(s.has_scale, 1);
    /* a loss scale is a binary32 number: the largest is 2^127, and the cap says so */
    ck_assert_int_eq(s.scale_capped, kk > 127);
    if (kk > 127)
      kk = 127;
    ck_assert_int_eq(s.scale_log2, kk);
    /* counts at several scales against rounding the scaled values */
    int ks[] = { kk, kk - 3, kk + 5, 0, -7, 12 };
    for (size_t j = 0; j < sizeof ks / sizeof ks[0]; j++) {
      uint64_t wu = 0, wuf = 0;
      int wov = 0;
      for (int i = 0; i < N; i++) {
        if (!isfinite(x[i]) || x[i] == 0) continue;
        double y = oracle(ldexp(x[i], ks[j]), f);
        if (!isfinite(y)) wov = 1;
        else if (y == 0) wu++, wuf++;
        else if (fabs(y) < mn) wuf++;
      }
      uint64_t gu, guf;
      int gov;
      ck_assert_int_eq(mpe_range_at_scale(r, (size_t)k, ks[j], &gu, &guf, &gov), 0);
      ck_assert_msg(gu == wu && guf == wuf && gov == wov, "%s at 2^%d: %llu/%llu %llu/%llu %d/%d", fmts[k], ks[j],
                    (unsigned long long)gu, (unsigned long long)wu, (unsigned long long)guf,
                    (unsigned long long)wuf, gov, wov);
      if (ks[j] == kk) {
        ck_assert_uint_eq(s.underflow_at_scale, wu);
        ck_assert_uint_eq(s.underflow_at_scale_flush, wuf);
        ck_assert_int_eq(wov, 0);
      }
    }
  }
  mpe_range_free(r);
  free(x);
}
END_TEST

/* binary64 inputs and values that binary32 cannot hold: rounded once */
START_TEST(test_f64_hand)
{
  const double d[] = { 65520.0 - 0x1p-30, 0x1p-25 + 0x1p-60, 0x1p-25, 65520.0, 0x1p-14 - 0x1p-60, 1e300, -1e-300 };
  const mpe_format *f[2] = { mpe_format_lookup("fp16"), mpe_format_lookup("fp32") };
  mpe_range *r = new_range(f, 2, NULL);
  ck_assert_int_eq(mpe_range_add_f64(r, d, 7), 0);
  mpe_range_stats s;
  mpe_range_stats_get(r, 0, &s);
  /* fp16: 65520-2^-30 -> 65504; 2^-25+2^-60 -> 2^-24 (subnormal); 2^-25 -> 0; 65520 -> inf;
     2^-14-2^-60 -> 2^-14; 1e300 -> inf; -1e-300 -> -0 */
  ck_assert_uint_eq(s.overflow, 2);
  ck_assert_uint_eq(s.underflow, 2);
  ck_assert_uint_eq(s.subnormal, 1);
  mpe_range_stats_get(r, 1, &s);
  /* fp32: 1e300 overflows, -1e-300 underflows; the rest are normal */
  ck_assert_uint_eq(s.overflow, 1);
  ck_assert_uint_eq(s.underflow, 1);
  ck_assert_uint_eq(s.subnormal, 0);
  /* 1e300 = 0.7466*2^997 and fp32 max = 0.99999994*2^128: 2^-869 * 1e300 = 0.7466*2^128 fits, 2^-868
     does not; 2^-869 is no binary32 number (a loss scale is one): held at 2^-149 and said to be */
  ck_assert_int_eq(s.scale_log2, -149);
  ck_assert_int_eq(s.scale_capped, 1);
  mpe_range_summary su;
  mpe_range_summary_get(r, &su);
  ck_assert(su.max_abs == 1e300);
  ck_assert(su.min_abs_nonzero == 1e-300);
  mpe_range_free(r);
}
END_TEST

START_TEST(test_rel_error)
{
  const float x[3] = { 1.0f + 0x1p-11f, 3.0f, 1e6f };
  const mpe_format *f = mpe_format_lookup("fp16");
  mpe_range *r = new_range(&f, 1, NULL);
  mpe_range_add_f32(r, x, 3);
  mpe_range_stats s;
  mpe_range_stats_get(r, 0, &s);
  /* 1+2^-11 ties to 1 (error 2^-11), 3 is exact, 1e6 overflows and is left out */
  double a = 1.0 + 0x1p-11;
  double want = 0x1p-11 / sqrt(a * a + 9.0);
  ck_assert_msg(fabs(s.rel_error - want) <= 1e-15 * want, "%a vs %a", s.rel_error, want);
  ck_assert(s.max_rel_error == 0x1p-11 / a);
  ck_assert_uint_eq(s.overflow, 1);
  mpe_range_free(r);
}
END_TEST

START_TEST(test_histogram)
{
  const float x[] = { 1.0f, 1.5f, -2.0f, 0.25f, 0x1p-30f, 0.0f, NAN, 1e5f };
  const mpe_format *f[2] = { mpe_format_lookup("fp16"), mpe_format_lookup("e4m3") };
  mpe_range *r = new_range(f, 2, NULL);
  mpe_range_add_f32(r, x, 8);
  int first;
  size_t n;
  uint64_t c[64], below, above;
  ck_assert_int_eq(mpe_range_histogram(r, -1, &first, c, 64, &n, &below, &above), 0);
  ck_assert_int_eq(first, -30);
  ck_assert_uint_eq(n, 16 - -30 + 1);    /* 1e5 is in binade 16 */
  ck_assert_uint_eq(c[0], 1);
  ck_assert_uint_eq(c[30 - 2], 1);   /* 0.25 */
  ck_assert_uint_eq(c[30], 2);       /* 1, 1.5 */
  ck_assert_uint_eq(c[31], 1);       /* 2 */
  ck_assert_uint_eq(c[46], 1);       /* 1e5 */
  ck_assert_int_eq(mpe_range_histogram(r, 0, &first, c, 64, &n, &below, &above), 0);
  ck_assert_int_eq(first, -24);
  ck_assert_uint_eq(n, 40);
  ck_assert_uint_eq(below, 1);
  ck_assert_uint_eq(above, 1);
  ck_assert_uint_eq(c[24], 2);
  ck_assert_int_eq(mpe_range_histogram(r, 1, &first, c, 64, &n, &below, &above), 0);
  ck_assert_int_eq(first, -9);
  ck_assert_uint_eq(n, 18);
  ck_assert_uint_eq(below, 1);
  ck_assert_uint_eq(above, 1);
  ck_assert_int_eq(mpe_range_histogram(r, 0, &first, c, 10, &n, NULL, NULL), MPE_ERANGE);
  ck_assert_uint_eq(n, 40);
  ck_assert_int_eq(mpe_range_histogram(r, 2, &first, c, 64, &n, NULL, NULL), MPE_EINVAL);
  mpe_range_free(r);
}
END_TEST

/* target k's counts, scale and largest error equal in two accumulators, the
   error sums within 1e-12 (summed in another order) */
static void same_counts(const mpe_range *a, const mpe_range *b, size_t k, const char *what)
{
  mpe_range_stats p, q;
  mpe_range_stats_get(a, k, &p);
  mpe_range_stats_get(b, k, &q);
  ck_assert_msg(p.underflow == q.underflow && p.subnormal == q.subnormal && p.overflow == q.overflow,
                "%s: target %zu counts", what, k);
  ck_assert_msg(p.scale_log2 == q.scale_log2 && p.underflow_at_scale == q.underflow_at_scale &&
                p.underflow_at_scale_flush == q.underflow_at_scale_flush, "%s: target %zu scale", what, k);
  ck_assert_msg(p.max_rel_error == q.max_rel_error, "%s: target %zu largest error", what, k);
  ck_assert_msg(fabs(p.rel_error - q.rel_error) <= 1e-12 * p.rel_error, "%s: target %zu error sum", what, k);
}

/* histogram k (-1: of all values) equal in two accumulators */
static void same_histogram(const mpe_range *a, const mpe_range *b, int k, const char *what)
{
  uint64_t ca[2200], cb[2200], ba = 0, bb = 0, aa = 0, ab = 0;
  int fa, fb;
  size_t na, nb;
  ck_assert_int_eq(mpe_range_histogram(a, k, &fa, ca, 2200, &na, &ba, &aa), 0);
  ck_assert_int_eq(mpe_range_histogram(b, k, &fb, cb, 2200, &nb, &bb, &ab), 0);
  ck_assert_msg(fa == fb && na == nb && ba == bb && aa == ab && !memcmp(ca, cb, na * sizeof *ca),
                "%s: histogram %d", what, k);
}

START_TEST(test_pieces_same)
{
  enum { N = 20000 };
  uint64_t st = ts_seed();
  float *x = malloc(N * sizeof *x);
  for (int i = 0; i < N; i++)
    x[i] = rand_value(&st);
  const mpe_format *f[3] = { F(0), F(3), F(4) };
  mpe_range *a = new_range(f, 3, NULL), *b = new_range(f, 3, NULL);
  mpe_range_add_f32(a, x, N);
  for (int i = 0; i < N; i += 7)
    mpe_range_add_f32(b, x + i, (size_t)(N - i < 7 ? N - i : 7));
  for (size_t k = 0; k < 3; k++)
    same_counts(a, b, k, "one call vs calls of 7");
  mpe_range_free(a);
  mpe_range_free(b);
  free(x);
}
END_TEST

START_TEST(test_errors)
{
  const mpe_format *f = mpe_format_lookup("fp16"), *none = NULL;
  mpe_range_opts bad = { -1 };
  range_einval(NULL, 1, NULL);
  range_einval(&f, 0, NULL);
  range_einval(&none, 1, NULL);
  range_einval(&f, 1, &bad);
  /* a margin past 4096 bits: the scale arithmetic (exponent - margin) would overflow an int */
  mpe_range_opts huge = { INT_MAX }, big = { 4097 }, most = { 4096 };
  range_einval(&f, 1, &huge);
  range_einval(&f, 1, &big);
  const mpe_format *many[65], *e8m0 = mpe_format_lookup("e8m0");
  for (int k = 0; k < 65; k++)
    many[k] = f;
  range_einval(many, 65, NULL);          /* at most 64 targets */
  {
    /* counts no array can hold (they read past x before): refused, nothing counted */
    mpe_range *rc = new_range(&f, 1, NULL);
    float xf[4] = { 1, 2, 3, 4 };
    double xd[4] = { 1, 2, 3, 4 };
    size_t two[2] = { (size_t)PTRDIFF_MAX / 8, (size_t)PTRDIFF_MAX / 8 };
    ck_assert_int_eq(mpe_range_add_f32(rc, xf, SIZE_MAX), MPE_EINVAL);
    ck_assert_int_eq(mpe_range_add_f32(rc, xf, (size_t)PTRDIFF_MAX / 4 + 1), MPE_EINVAL);
    ck_assert_int_eq(mpe_range_add_f64(rc, xd, SIZE_MAX), MPE_EINVAL);
    ck_assert_int_eq(mpe_range_add_f64_pieces(rc, xd, two, 2), MPE_EINVAL);
    mpe_range_summary su;
    ck_assert_int_eq(mpe_range_summary_get(rc, &su), 0);
    ck_assert_uint_eq(su.count, 0);
    mpe_range_free(rc);
  }
  ck_assert_ptr_nonnull(e8m0);
  range_einval(&e8m0, 1, NULL);          /* unsigned: no rounding target */
  ck_assert_int_eq(mpe_range_create(NULL, &f, 1, NULL), MPE_EINVAL);
  mpe_range_target tq = { MPE_TARGET_Q16, NULL, 8, 0 };
  ck_assert_int_eq(mpe_range_create_targets(NULL, &tq, 1, NULL), MPE_EINVAL);
  mpe_range *r64 = new_range(many, 64, NULL);
  mpe_range_free(r64);
  /* the deprecated constructors still make accumulators */
  mpe_range *old = mpe_range_alloc(&f, 1, NULL), *oldt = mpe_range_alloc_targets(&tq, 1, NULL);
  ck_assert_ptr_nonnull(old);
  ck_assert_ptr_nonnull(oldt);
  ck_assert_uint_eq(mpe_range_nformats(old), 1);
  mpe_range_free(old);
  mpe_range_free(oldt);
  mpe_range *rm = new_range(&f, 1, &most);
  ck_assert_ptr_nonnull(rm);
  double xm = 1e300;
  mpe_range_stats sm;
  ck_assert_int_eq(mpe_range_add_f64(rm, &xm, 1), 0);
  ck_assert_int_eq(mpe_range_stats_get(rm, 0, &sm), 0);
  /* 2^k * 1e300 <= 65504 * 2^-4096 (1e300 = 0.75 * 2^997) asks for 2^(16 - 4096 - 997), which is 0 in
     binary32: held at 2^-149, its smallest power of two, and said to be capped */
  ck_assert_int_eq(sm.scale_log2, MPE_RANGE_SCALE_MIN_LOG2);
  ck_assert_int_eq(sm.scale_capped, 1);
  mpe_range_free(rm);
  /* the floor's edge: max|x| = 1, fp16 (65504 = 0.99951 * 2^16): margin m gives 2^(15 - m) */
  for (int m = 163; m <= 165; m++) {
    mpe_range_opts om = { m };
    mpe_range *re = new_range(&f, 1, &om);
    double one = 1.0;
    ck_assert_int_eq(mpe_range_add_f64(re, &one, 1), 0);
    ck_assert_int_eq(mpe_range_stats_get(re, 0, &sm), 0);
    ck_assert_int_eq(sm.scale_log2, m <= 164 ? 15 - m : -149);
    ck_assert_int_eq(sm.scale_capped, m > 164);
    mpe_range_free(re);
  }
  mpe_range *r = new_range(&f, 1, NULL);
  ck_assert_uint_eq(mpe_range_nformats(r), 1);
  ck_assert_int_eq(mpe_range_add_f32(r, NULL, 3), MPE_EINVAL);
  ck_assert_int_eq(mpe_range_add_f64(NULL, NULL, 0), MPE_EINVAL);
  ck_assert_int_eq(mpe_range_add_f32(r, NULL, 0), 0);
  mpe_range_stats s;
  ck_assert_int_eq(mpe_range_stats_get(r, 1, &s), MPE_EINVAL);
  ck_assert_int_eq(mpe_range_summary_get(r, NULL), MPE_EINVAL);
  ck_assert_int_eq(mpe_range_at_scale(r, 3, 0, NULL, NULL, NULL), MPE_EINVAL);
  /* only zeros: no scale */
  const float z[2] = { 0.0f, -0.0f };
  mpe_range_add_f32(r, z, 2);
  ck_assert_int_eq(mpe_range_stats_get(r, 0, &s), 0);
  ck_assert_int_eq(s.has_scale, 0);
  int first;
  size_t n;
  ck_assert_int_eq(mpe_range_histogram(r, -1, &first, NULL, 0, &n, NULL, NULL), 0);
  ck_assert_uint_eq(n, 0);
  mpe_range_free(r);
  mpe_range_free(NULL);
}
END_TEST


/* ------------------------------------------------------------------ the fast path
   against a straightforward per-value reference, on random values with the
   targets' boundaries and their neighbours mixed in */

#define NT 16
struct ref { uint64_t u, s, o; long double e2, x2; double maxrel; };

static void ref_value(struct ref *w, double x, double y, int ovf, double minnorm)
{
  if (ovf) {
    w->o++;
    return;
  }
  if (y == 0)
    w->u++;
  else if (fabs(y) < minnorm)
    w->s++;
  double d = y - x;
  w->e2 += (long double)d * d;
  w->x2 += (long double)x * x;
  if (fabs(d) / fabs(x) > w->maxrel)
    w->maxrel = fabs(d) / fabs(x);
}

/* binary32 values: q16 by mpe_fp32_to_q16 and its saturation flag */
static void ref_q(struct ref *w, const float *x, size_t n, int fb)
{
  for (size_t i = 0; i < n; i++) {
    if (!isfinite(x[i]) || x[i] == 0)
      continue;
    mpe_flags_clear(~0u);
    int16_t q = mpe_fp32_to_q16(x[i], fb, MPE_RNE);
    int sat = (mpe_flags_get() & MPE_FLAG_SATURATED) != 0;
    ref_value(w, x[i], ldexp((double)q, -fb), sat, 0);
  }
}

/* fx16 by mpe_fx16_encode/decode on blocks, non-finite values entering as 0 */
static void ref_fx(struct ref *w, const float *x, size_t n, size_t block)
{
  float *xb = malloc(block * sizeof *xb), *y = malloc(block * sizeof *y), sc;
  int16_t *q = malloc(block * sizeof *q);
  for (size_t b0 = 0; b0 < n; b0 += block) {
    size_t len = n - b0 < block ? n - b0 : block;
    for (size_t i = 0; i < len; i++)
      xb[i] = isfinite(x[b0 + i]) ? x[b0 + i] : 0.0f;
    ck_assert_int_eq(mpe_fx16_encode(q, &sc, xb, len, len, MPE_RNE), 0);
    ck_assert_int_eq(mpe_fx16_decode(y, q, &sc, len, len), 0);
    for (size_t i = 0; i < len; i++)
      if (xb[i] != 0)
        ref_value(w, xb[i], y[i], 0, 0);   /* underflow: decodes to 0 */
  }
  free(xb);
  free(y);
  free(q);
}

static float rand_fixed_edge(uint64_t *st)
{
  static const int fbs[] = { 0, 8, 15, -3, 140 };
  uint64_t r = ts_rand64(st);
  int F = fbs[(r >> 8) % 5];
  static const double e[] = { 0.5, 32767.5, 32768.5, 1.0, 32767.0, 32768.0 };
  float v = (float)ldexp(e[(r >> 16) % 6], -F);
  if ((r >> 24) & 1) v = nextafterf(v, (r >> 25) & 1 ? INFINITY : 0.0f);
  return (r >> 63) ? -v : v;
}

static void make_targets(mpe_range_target *t, mpe_format **custom)
{
  memset(t, 0, NT * sizeof *t);
  for (int k = 0; k < NF; k++) {
    t[k].kind = MPE_TARGET_FLOAT;
    t[k].format = F(k);
  }
  ck_assert_int_eq(mpe_format_custom(&custom[0], 11, -140, 15), 0);   /* below binary32's normals */
  ck_assert_int_eq(mpe_format_custom(&custom[1], 30, -200, 300), 0);  /* wider than binary32 */
  t[7] = (mpe_range_target){ MPE_TARGET_FLOAT, custom[0], 0, 0 };
  t[8] = (mpe_range_target){ MPE_TARGET_FLOAT, custom[1], 0, 0 };
  static const int fbs[] = { 0, 8, 15, -3, 140 };
  for (int j = 0; j < 5; j++)
    t[9 + j] = (mpe_range_target){ MPE_TARGET_Q16, NULL, fbs[j], 0 };
  t[14] = (mpe_range_target){ MPE_TARGET_FX16, NULL, 0, 64 };
  t[15] = (mpe_range_target){ MPE_TARGET_FX16, NULL, 0, 1000 };
}

/* Values for blocks where nothing overflows for some targets: the fast fused
   kernel (and its shared sum of x^2). Finite values above the cap are brought
   below it by 2^-20 steps (fraction bits kept); the cap itself and its neighbours
   stay: below e4m3's overflow, below fp16's, just around the bf16 kernel's limit
   alim (2^111). Modes 3 and 4: nothing below e4m3's or fp16's normals either, so
   that no underflow (|d|/|x| = 1) hides the largest relative error: the records
   decide it. */
static void cap_values(float *x, int n, int mode, uint64_t *st)
{
  static const float caps[] = { 448.0f, 65504.0f, 0x1p111f, 448.0f, 65504.0f };
  static const float floors[] = { 0, 0, 0, 0x1p-6f, 0x1p-14f };
  float cap = caps[mode], floor = floors[mode];
  for (int i = 0; i < n; i++) {
    while (isfinite(x[i]) && fabsf(x[i]) > cap)
      x[i] *= 0x1p-20f;
    while (x[i] != 0 && fabsf(x[i]) < floor)
      x[i] *= 0x1p20f;
    if ((ts_rand64(st) & 255) == 0)
      x[i] = nextafterf(cap, (ts_rand64(st) & 1) ? 0.0f : INFINITY);
  }
}

START_TEST(test_fast_reference)
{
  enum { N = 30000 };
  uint64_t st = ts_seed() + 17 * (uint64_t)_i;
  float *x = malloc(N * sizeof *x), *y = malloc(N * sizeof *y);
  for (int i = 0; i < N; i++)
    x[i] = (ts_rand64(&st) & 3) ? rand_value(&st) : rand_fixed_edge(&st);
  if (_i >= 3)
    cap_values(x, N, _i - 3, &st);
  mpe_range_target t[NT];
  mpe_format *custom[2];
  make_targets(t, custom);
  /* the kernels of every SIMD level, fed in uneven pieces */
  mpe_range *r[3];
  for (int lvl = 0; lvl < 3; lvl++) {
    mpe_simd_level_set(lvl);
    r[lvl] = new_range_targets(t, NT, NULL);
    ck_assert_ptr_nonnull(r[lvl]);
    uint64_t st2 = st;
    for (int s = 0; s < N;) {
      int m = 1 + (int)(ts_rand64(&st2) % 9000);
      if (m > N - s) m = N - s;
      ck_assert_int_eq(mpe_range_add_f32(r[lvl], x + s, (size_t)m), 0);
      s += m;
    }
  }
  mpe_simd_level_set(-1);
  for (int k = 0; k < NT; k++) {
    struct ref w = { 0 };
    if (t[k].kind == MPE_TARGET_FLOAT) {
      double mn = mpe_format_min_normal(t[k].format);
      for (int i = 0; i < N; i++) {
        if (!isfinite(x[i]) || x[i] == 0)
          continue;
        double yv = mpe_round_scalar(x[i], t[k].format, NULL);
        ref_value(&w, x[i], yv, !isfinite(yv), mn);
      }
    } else if (t[k].kind == MPE_TARGET_Q16) {
      ref_q(&w, x, N, t[k].frac_bits);
    } else {
      ref_fx(&w, x, N, t[k].block);
    }
    double want_rel = w.x2 > 0 ? (double)sqrtl(w.e2 / w.x2) : 0;
    mpe_range_stats s[3];
    for (int lvl = 0; lvl < 3; lvl++)
      ck_assert_int_eq(mpe_range_stats_get(r[lvl], (size_t)k, &s[lvl]), 0);
    ck_assert_msg(s[0].underflow == w.u && s[0].subnormal == w.s && s[0].overflow == w.o,
                  "target %d: u %llu/%llu s %llu/%llu o %llu/%llu", k, (unsigned long long)s[0].underflow,
                  (unsigned long long)w.u, (unsigned long long)s[0].subnormal, (unsigned long long)w.s,
                  (unsigned long long)s[0].overflow, (unsigned long long)w.o);
    ck_assert_msg(s[0].max_rel_error == w.maxrel, "target %d: max rel %a vs %a", k, s[0].max_rel_error, w.maxrel);
    ck_assert_msg(fabs(s[0].rel_error - want_rel) <= 1e-12 * want_rel, "target %d: rel %a vs %a", k,
                  s[0].rel_error, want_rel);
    /* every SIMD level: the same bits, the error sums included */
    for (int lvl = 1; lvl < 3; lvl++)
      ck_assert_msg(!memcmp(&s[lvl], &s[0], sizeof s[0]), "target %d: level %d differs", k, lvl);
  }
  mpe_range_summary a, b;
  mpe_range_summary_get(r[0], &a);
  for (int lvl = 1; lvl < 3; lvl++) {
    mpe_range_summary_get(r[lvl], &b);
    ck_assert(!memcmp(&a, &b, sizeof a));
  }
  for (int lvl = 0; lvl < 3; lvl++)
    mpe_range_free(r[lvl]);
  mpe_format_free(custom[0]);
  mpe_format_free(custom[1]);
  free(x);
  free(y);
}
END_TEST

/* The fast fused kernel on custom formats that the tests above leave out: p = 2
   to 24 with emin = -126 (every d = 24 - p from 22 to 0, where the AVX-512 kernel's
   C = 2^(E+d) and its limit alim = 2^(127-d) differ), values at and around alim,
   the overflow threshold, the largest finite, 2^emin and the subnormal ties of
   every format, binary32 subnormals and -0, in blocks of 4095, 4096 and 4097 values
   (one call, and pieces) and blocks where one value in a few is large; against
   mpe_round_scalar (counts, max relative error exactly, the norm ratio) and the
   same bits at every SIMD level. */
static void pool_around(float *pool, int *np, float v)
{
  float c[4] = { v, nextafterf(v, 0.0f), nextafterf(v, INFINITY), nextafterf(nextafterf(v, 0.0f), 0.0f) };
  for (int j = 0; j < 4; j++)
    if (c[j] > 0 && isfinite(c[j]) && *np < 8190) {
      pool[(*np)++] = c[j];
      pool[(*np)++] = -c[j];
    }
}

START_TEST(test_fast_customs)
{
  enum { NC = 8, NPOOL = 8192 };
  static const int ps[NC] = { 2, 3, 9, 12, 20, 23, 24, 23 }, emaxs[NC] = { 127, 100, 127, 120, 127, 127, 127, 15 };
  mpe_format *cf[NC];
  mpe_range_target t[NC];
  float *pool = malloc(NPOOL * sizeof *pool);
  int np = 0;
  for (int k = 0; k < NC; k++) {
    ck_assert_int_eq(mpe_format_custom(&cf[k], ps[k], -126, emaxs[k]), 0);
    t[k] = (mpe_range_target){ MPE_TARGET_FLOAT, cf[k], 0, 0 };
    uint32_t lo = 0, hi = 0x7f800000u;   /* the overflow threshold: the first pattern rounding past max */
    while (hi - lo > 1) {
      uint32_t m = lo + (hi - lo) / 2;
      if (isfinite(mpe_round_scalar(ts_u2f(m), cf[k], NULL))) lo = m; else hi = m;
    }
    pool_around(pool, &np, ts_u2f(hi));
    pool_around(pool, &np, (float)mpe_format_max(cf[k]));
    pool_around(pool, &np, ldexpf(1.0f, 127 - (24 - ps[k])));       /* alim */
    pool_around(pool, &np, ldexpf(1.0f, 128 - (24 - ps[k])));
    double ms = ldexp(1.0, -126 - ps[k] + 1);                          /* the smallest subnormal */
    pool_around(pool, &np, (float)ms * 0.5f);                          /* a tie with 0 */
    pool_around(pool, &np, (float)ms * 1.5f);
    pool_around(pool, &np, (float)(ldexp(1.0, -126) - ms * 0.5));      /* a tie with 2^emin */
  }
  for (int e = -149; e < -120; e++)
    pool_around(pool, &np, ldexpf(1.5f, e));
  pool[np++] = ts_u2f(1);
  pool[np++] = ts_u2f(0x7fffff);
  pool[np++] = -0.0f;
  /* the pool below a cap: alim = 2^(127-d) of d = 22, 21, 15, 12, 4, 1, so
     that the blocks take the fast kernel right up to the limit */
  static const float caps[] = { INFINITY, 0x1p100f, 0x1p105f, 0x1p106f, 0x1p112f, 0x1p115f, 0x1p123f, 0x1p126f };
  int nq = 0;
  for (int i = 0; i < np; i++)
    if (fabsf(pool[i]) < caps[_i / 4])
      pool[nq++] = pool[i];
  uint64_t st = ts_seed() + 29 * (uint64_t)_i;
  static const int lens[] = { 4095, 4096, 4097, 12293 };
  const int n = lens[_i % 4];
  float *x = malloc((size_t)n * sizeof *x);
  for (int i = 0; i < n; i++) {   /* odd _i: one value in 8 from the pool */
    uint64_t r = ts_rand64(&st);
    float small = ldexpf(1.0f + (float)(r & 0xffffff) / 16777216.0f, (int)((r >> 24) % 40) - 30);
    small = (r >> 63) ? -small : small;
    x[i] = !(_i & 1) || ((r >> 48) & 7) == 0 ? pool[(r >> 32) % (uint64_t)nq] : small;
  }
  mpe_range *r[3][2];
  for (int lvl = 0; lvl < 3; lvl++) {
    mpe_simd_level_set(lvl);
    for (int sp = 0; sp < 2; sp++) {
      uint64_t st2 = st;   /* the same pieces at every level */
      r[lvl][sp] = new_range_targets(t, NC, NULL);
      for (int s = 0, m; s < n; s += m) {
        m = sp ? 1 + (int)(ts_rand64(&st2) % 5000) : n;
        if (m > n - s) m = n - s;
        ck_assert_int_eq(mpe_range_add_f32(r[lvl][sp], x + s, (size_t)m), 0);
      }
    }
  }
  mpe_simd_level_set(-1);
  for (int k = 0; k < NC; k++) {
    struct ref w = { 0 };
    double mn = mpe_format_min_normal(cf[k]);
    for (int i = 0; i < n; i++)
      if (isfinite(x[i]) && x[i] != 0) {
        double yv = mpe_round_scalar(x[i], cf[k], NULL);
        ref_value(&w, x[i], yv, !isfinite(yv), mn);
      }
    double want_rel = w.x2 > 0 ? (double)sqrtl(w.e2 / w.x2) : 0;
    for (int sp = 0; sp < 2; sp++) {
      mpe_range_stats s[3];
      for (int lvl = 0; lvl < 3; lvl++)
        ck_assert_int_eq(mpe_range_stats_get(r[lvl][sp], (size_t)k, &s[lvl]), 0);
      for (int lvl = 0; lvl < 3; lvl++) {
        ck_assert_msg(s[lvl].underflow == w.u && s[lvl].subnormal == w.s && s[lvl].overflow == w.o,
                      "p %d pieces %d level %d: u %llu/%llu s %llu/%llu o %llu/%llu", ps[k], sp, lvl,
                      (unsigned long long)s[lvl].underflow, (unsigned long long)w.u,
                      (unsigned long long)s[lvl].subnormal, (unsigned long long)w.s,
                      (unsigned long long)s[lvl].overflow, (unsigned long long)w.o);
        ck_assert_msg(s[lvl].max_rel_error == w.maxrel, "p %d pieces %d level %d: max rel %a vs %a", ps[k], sp,
                      lvl, s[lvl].max_rel_error, w.maxrel);
        ck_assert_msg(fabs(s[lvl].rel_error - want_rel) <= 1e-12 * want_rel, "p %d pieces %d level %d: rel %a vs %a",
                      ps[k], sp, lvl, s[lvl].rel_error, want_rel);
        ck_assert_msg(!memcmp(&s[lvl], &s[0], sizeof s[0]), "p %d pieces %d: level %d differs", ps[k], sp, lvl);
      }
    }
  }
  for (int lvl = 0; lvl < 3; lvl++)
    for (int sp = 0; sp < 2; sp++)
      mpe_range_free(r[lvl][sp]);
  for (int k = 0; k < NC; k++)
    mpe_format_free(cf[k]);
  free(pool);
  free(x);
}
END_TEST

/* Q16 on the scale: counts at any 2^e against rounding the scaled values */
START_TEST(test_q_at_scale)
{
  enum { N = 5000 };
  static const int fbs[] = { 0, 8, 15, -3 };
  uint64_t st = ts_seed() + 5;
  float *x = malloc(N * sizeof *x);
  for (int i = 0; i < N; i++)
    x[i] = (ts_rand64(&st) & 1) ? rand_value(&st) : rand_fixed_edge(&st);
  for (int j = 0; j < 4; j++) {
    int fb = fbs[j];
    mpe_range_target t = { MPE_TARGET_Q16, NULL, fb, 0 };
    mpe_range *r = new_range_targets(&t, 1, NULL);
    mpe_range_add_f32(r, x, N);
    mpe_range_stats s;
    mpe_range_stats_get(r, 0, &s);
    double maxabs = 0;
    for (int i = 0; i < N; i++)
      if (isfinite(x[i]) && fabsf(x[i]) > maxabs) maxabs = fabsf(x[i]);
    int kk = 2100;
    while (ldexp(maxabs, kk) > ldexp(32767.0, -fb))
      kk--;
    ck_assert_int_eq(s.scale_log2, kk);
    int ks[] = { kk, kk - 3, kk + 1, 0, -7, 12 };
    for (size_t m = 0; m < sizeof ks / sizeof ks[0]; m++) {
      uint64_t wu = 0;
      int wov = 0;
      for (int i = 0; i < N; i++) {
        if (!isfinite(x[i]) || x[i] == 0) continue;
        double v = ldexp((double)x[i], ks[m]);
        float vf = (float)v;
        int16_t q;
        unsigned fl;
        if ((double)vf == v) {     /* the library's own conversion where binary32 holds S*x */
          mpe_flags_clear(~0u);
          q = mpe_fp32_to_q16(vf, fb, MPE_RNE);
          fl = mpe_flags_get();
        } else {                   /* else by hand, in binary64 */
          double iv = nearbyint(ldexp(v, fb));
          fl = iv > 32767 || iv < -32768 ? MPE_FLAG_SATURATED : 0;
          q = (int16_t)(fl ? 1 : iv);
        }
        if (fl & MPE_FLAG_SATURATED) wov = 1;
        else if (q == 0) wu++;
      }
      uint64_t gu, guf;
      int gov;
      ck_assert_int_eq(mpe_range_at_scale(r, 0, ks[m], &gu, &guf, &gov), 0);
      ck_assert_msg(gu == wu && guf == wu && gov == wov, "q16.%d at 2^%d: %llu/%llu %d/%d", fb, ks[m],
                    (unsigned long long)gu, (unsigned long long)wu, gov, wov);
      if (ks[m] == kk) {
        ck_assert_uint_eq(s.underflow_at_scale, wu);
        ck_assert_int_eq(wov, 0);
      }
    }
    mpe_range_free(r);
  }
  free(x);
}
END_TEST

/* counts derived by hand at the Q rounding boundaries */
START_TEST(test_q_hand)
{
  const float t8 = 127.998046875f, n8 = -128.001953125f;   /* 32767.5 * 2^-8 and -32768.5 * 2^-8 */
  const float x[] = { 0x1p-9f, -0x1p-9f, nextafterf(0x1p-9f, 1.0f), t8, nextafterf(t8, 0.0f), n8,
                      nextafterf(n8, -INFINITY), 1.0f, -1.0f, -1e-30f, 0.0f, INFINITY };
  mpe_range_target t[3] = { { MPE_TARGET_Q16, NULL, 8, 0 }, { MPE_TARGET_Q16, NULL, 15, 0 },
                            { MPE_TARGET_Q16, NULL, 0, 0 } };
  mpe_range *r = new_range_targets(t, 3, NULL);
  ck_assert_int_eq(mpe_range_add_f32(r, x, 12), 0);
  mpe_range_stats s;
  /* q16.8: +-2^-9 tie to 0, its successor rounds to 1; 32767.5 ties to 32768 (saturates),
     -32768.5 ties to -32768 (fits); below it saturates. */
  mpe_range_stats_get(r, 0, &s);
  ck_assert_uint_eq(s.underflow, 3);
  ck_assert_uint_eq(s.overflow, 2);
  ck_assert_uint_eq(s.subnormal, 0);
  ck_assert_uint_eq(s.underflow_flush, 3);
  ck_assert(s.max_rel_error == 1.0);
  /* max|x| just above 128.0019 > 32767*2^-8: S = 2^-1; then |x| <= 2^-8 rounds to 0 */
  ck_assert_int_eq(s.has_scale, 1);
  ck_assert_int_eq(s.scale_log2, -1);
  ck_assert_uint_eq(s.underflow_at_scale, 4);
  ck_assert_uint_eq(s.underflow_at_scale_flush, 4);
  /* q16.15 (Q1.15): 1.0 saturates, -1.0 fits; |x| <= 2^-16 rounds to 0 */
  mpe_range_stats_get(r, 1, &s);
  ck_assert_uint_eq(s.underflow, 1);
  ck_assert_uint_eq(s.overflow, 5);
  ck_assert_int_eq(s.scale_log2, -8);    /* 128.0019 * 2^-8 = 0.50001 <= 0.99997, * 2^-7 is not */
  /* q16.0: everything below 1/2 in magnitude is lost, 2^-9 successor included */
  mpe_range_stats_get(r, 2, &s);
  ck_assert_uint_eq(s.underflow, 4);
  ck_assert_uint_eq(s.overflow, 0);
  int first;
  size_t n;
  uint64_t c[32], below, above;
  ck_assert_int_eq(mpe_range_histogram(r, 0, &first, c, 32, &n, &below, &above), 0);
  ck_assert_int_eq(first, -8);
  ck_assert_uint_eq(n, 15);
  ck_assert_uint_eq(below, 4);          /* 2^-9 twice, its successor, 1e-30 */
  ck_assert_uint_eq(above, 2);          /* the two 128.00..: binade 7, above 14 - 8 */
  ck_assert_uint_eq(c[8], 2);           /* +-1 */
  ck_assert_uint_eq(c[14], 2);          /* binade 6: 127.99.. and its predecessor */
  mpe_range_free(r);
}
END_TEST

/* binary64 inputs to Q16 and fx16: one rounding from binary64 */
START_TEST(test_fixed_f64)
{
  const double d[] = { 0x1p-9, 0x1p-9 + 0x1p-60, 127.998046875 - 0x1p-40, 127.998046875, 1e300, -1e-300, 0.0 };
  mpe_range_target t[2] = { { MPE_TARGET_Q16, NULL, 8, 0 }, { MPE_TARGET_FX16, NULL, 0, 7 } };
  mpe_range *r = new_range_targets(t, 2, NULL);
  ck_assert_int_eq(mpe_range_add_f64(r, d, 7), 0);
  mpe_range_stats s;
  mpe_range_stats_get(r, 0, &s);
  /* 2^-9 ties to 0, 2^-9+2^-60 rounds to 1; 32767.5-2^-32 rounds to 32767; 1e300 saturates; -1e-300 -> 0 */
  ck_assert_uint_eq(s.underflow, 2);
  ck_assert_uint_eq(s.overflow, 2);
  mpe_range_stats_get(r, 1, &s);
  /* fx16: 1e300 is beyond binary32 (overflow, enters as 0); block max 127.998..: -1e-300 (0 in binary32)
     and 2^-9 (2^-9 * 32767 / 128 = 0.49998) round to 0, 2^-9 + 2^-60 too (same binary32) */
  ck_assert_uint_eq(s.overflow, 1);
  ck_assert_uint_eq(s.underflow, 3);
  ck_assert_int_eq(s.has_scale, 0);
  ck_assert_uint_eq(s.underflow_at_scale, 3);
  mpe_range_free(r);
}
END_TEST

/* fx16: a large value flushes its block's small ones; the block length decides */
START_TEST(test_fx_hand)
{
  const float x[10] = { 1e5f, 1, 2, 3, 1, 2, 3, 4, 5, 5e-5f };
  /* block 4: [1e5 1 2 3]: 32767/1e5 = 0.32767, so 1 -> 0 (2 -> 0.655 -> 1); [1 2 3 4]: none;
     [5 5e-5] (the short last block): 5e-5 * 6553.4 = 0.33 -> 0. block 8: 1 twice, then 5e-5.
     block 2: [1e5 1]: 1 -> 0; [5 5e-5]: 5e-5 -> 0; the rest keep their values. */
  const size_t blocks[3] = { 4, 8, 2 };
  const uint64_t want[3] = { 2, 3, 2 };
  for (int j = 0; j < 3; j++) {
    mpe_range_target t = { MPE_TARGET_FX16, NULL, 0, blocks[j] };
    mpe_range *r = new_range_targets(&t, 1, NULL);
    ck_assert_int_eq(mpe_range_add_f32(r, x, 3), 0);     /* blocks span calls */
    mpe_range_stats s;
    mpe_range_stats_get(r, 0, &s);                        /* reading does not close the open block */
    ck_assert_int_eq(mpe_range_add_f32(r, x + 3, 7), 0);
    mpe_range_stats_get(r, 0, &s);
    ck_assert_msg(s.underflow == want[j], "block %zu: %llu", blocks[j], (unsigned long long)s.underflow);
    ck_assert_uint_eq(s.overflow, 0);
    ck_assert_uint_eq(s.subnormal, 0);
    ck_assert_int_eq(s.has_scale, 0);
    ck_assert(s.max_rel_error == 1.0);
    ck_assert_int_eq(mpe_range_at_scale(r, 0, 0, NULL, NULL, NULL), MPE_EUNSUP);
    if (j == 0) {
      /* binades relative to the block max: 1e5 in binade 16, 4 and 5 in binade 2 */
      int first;
      size_t n;
      uint64_t c[17], below, above;
      ck_assert_int_eq(mpe_range_histogram(r, 0, &first, c, 17, &n, &below, &above), 0);
      ck_assert_int_eq(first, -16);
      ck_assert_uint_eq(n, 17);
      const uint64_t wc[17] = { 1, 2, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 2, 3 };
      for (int i = 0; i < 17; i++)
        ck_assert_msg(c[i] == wc[i], "bin %d: %llu", i - 16, (unsigned long long)c[i]);
      ck_assert_uint_eq(below, 1);   /* 5e-5: binade -15, 17 below 5's */
      ck_assert_uint_eq(above, 0);
      ck_assert_int_eq(mpe_range_histogram(r, 0, &first, c, 16, &n, NULL, NULL), MPE_ERANGE);
    }
    mpe_range_free(r);
  }
}
END_TEST

/* merging two halves gives the counts of the whole */
START_TEST(test_merge)
{
  enum { N = 12000 };
  uint64_t st = ts_seed() + 3;
  float *x = malloc(N * sizeof *x);
  for (int i = 0; i < N; i++)
    x[i] = (ts_rand64(&st) & 3) ? rand_value(&st) : rand_fixed_edge(&st);
  if (_i > 0)   /* the fast fused kernel's blocks too */
    cap_values(x, N, _i == 1 ? 0 : 4, &st);
  mpe_range_target t[NT];
  mpe_format *custom[2];
  make_targets(t, custom);
  t[14].block = t[15].block = 1000;      /* the halves end on block boundaries */
  mpe_range *all = new_range_targets(t, NT, NULL), *a = new_range_targets(t, NT, NULL),
            *b = new_range_targets(t, NT, NULL);
  mpe_range_add_f32(all, x, N);
  mpe_range_add_f32(a, x, N / 2);
  mpe_range_add_f32(b, x + N / 2, N / 2);
  ck_assert_int_eq(mpe_range_merge(a, b), 0);
  mpe_range_summary sa, sb;
  mpe_range_summary_get(all, &sa);
  mpe_range_summary_get(a, &sb);
  ck_assert(!memcmp(&sa, &sb, sizeof sa));
  for (int k = 0; k < NT; k++) {
    same_counts(all, a, (size_t)k, "one accumulator vs two merged");
    same_histogram(all, a, k, "one accumulator vs two merged");
  }
  /* targets that differ, the same accumulator, NULL */
  mpe_range_target t2[NT];
  memcpy(t2, t, sizeof t2);
  t2[9].frac_bits = 1;
  mpe_range *c = new_range_targets(t2, NT, NULL);
  ck_assert_int_eq(mpe_range_merge(a, c), MPE_EINVAL);
  ck_assert_int_eq(mpe_range_merge(a, a), MPE_EINVAL);
  ck_assert_int_eq(mpe_range_merge(NULL, a), MPE_EINVAL);
  mpe_range_free(c);
  mpe_range_free(all);
  mpe_range_free(a);
  mpe_range_free(b);
  mpe_format_free(custom[0]);
  mpe_format_free(custom[1]);
  free(x);
}
END_TEST

START_TEST(test_target_errors)
{
  mpe_range_target t = { MPE_TARGET_Q16, NULL, 513, 0 };
  range_targets_einval(&t, 1, NULL);
  t = (mpe_range_target){ MPE_TARGET_FX16, NULL, 0, 0 };
  range_targets_einval(&t, 1, NULL);
  t.block = MPE_RANGE_FX16_MAXBLOCK + 1;
  range_targets_einval(&t, 1, NULL);
  t = (mpe_range_target){ (mpe_target_kind)7, NULL, 0, 0 };
  range_targets_einval(&t, 1, NULL);
  t = (mpe_range_target){ MPE_TARGET_FLOAT, NULL, 0, 0 };
  range_targets_einval(&t, 1, NULL);
  range_targets_einval(NULL, 1, NULL);
  t = (mpe_range_target){ MPE_TARGET_Q16, NULL, -512, 0 };
  mpe_range *r = new_range_targets(&t, 1, NULL);
  ck_assert_ptr_nonnull(r);
  mpe_range_target g;
  ck_assert_int_eq(mpe_range_target_get(r, 0, &g), 0);
  ck_assert_int_eq(g.kind, MPE_TARGET_Q16);
  ck_assert_int_eq(g.frac_bits, -512);
  ck_assert_int_eq(mpe_range_target_get(r, 1, &g), MPE_EINVAL);
  mpe_range_free(r);
  const mpe_format *f = mpe_format_lookup("bf16");
  r = new_range(&f, 1, NULL);
  ck_assert_int_eq(mpe_range_target_get(r, 0, &g), 0);
  ck_assert_int_eq(g.kind, MPE_TARGET_FLOAT);
  ck_assert_ptr_eq(g.format, f);
  mpe_range_free(r);
}
END_TEST

/* a call long enough to be shared among threads gives the bits of block-sized calls */
START_TEST(test_threads_same)
{
  enum { N = 300 * 4096 };
  uint64_t st = ts_seed() + 11;
  float *x = malloc(N * sizeof *x);
  for (int i = 0; i < N; i++)
    x[i] = (i & 7) ? (float)((double)(ts_rand64(&st) >> 11) * 0x1p-53 - 0.5) * 0x1p-12f : rand_value(&st);
  mpe_range_target t[NT];
  mpe_format *custom[2];
  make_targets(t, custom);
  mpe_range *a = new_range_targets(t, NT, NULL), *b = new_range_targets(t, NT, NULL);
  ck_assert_int_eq(mpe_range_add_f32(a, x, N), 0);
  for (int i = 0; i < N; i += 4096)
    ck_assert_int_eq(mpe_range_add_f32(b, x + i, 4096), 0);
  for (int k = 0; k < NT; k++) {
    mpe_range_stats p, q;
    mpe_range_stats_get(a, (size_t)k, &p);
    mpe_range_stats_get(b, (size_t)k, &q);
    ck_assert_msg(!memcmp(&p, &q, sizeof p), "target %d", k);
  }
  mpe_range_summary sa, sb;
  mpe_range_summary_get(a, &sa);
  mpe_range_summary_get(b, &sb);
  ck_assert(!memcmp(&sa, &sb, sizeof sa));
  mpe_range_free(a);
  mpe_range_free(b);
  mpe_format_free(custom[0]);
  mpe_format_free(custom[1]);
  free(x);
}
END_TEST

/* all statistics of two accumulators, histograms included, bit for bit */
static void same_state(mpe_range *a, mpe_range *b, const char *what)
{
  mpe_range_summary sa, sb;
  mpe_range_summary_get(a, &sa);
  mpe_range_summary_get(b, &sb);
  ck_assert_msg(!memcmp(&sa, &sb, sizeof sa), "%s: summary", what);
  for (int k = -1; k < (int)mpe_range_nformats(a); k++) {
    if (k >= 0) {
      mpe_range_stats p, q;
      mpe_range_stats_get(a, (size_t)k, &p);
      mpe_range_stats_get(b, (size_t)k, &q);
      ck_assert_msg(!memcmp(&p, &q, sizeof p), "%s: target %d", what, k);
    }
    same_histogram(a, b, k, what);
  }
}

/* pieces of odd lengths in one call give the bits of one call per piece, whether the
   blocks are shared out by a team of its own or as tasks of the caller's team */
START_TEST(test_pieces_batch)
{
  enum { N = 700 * 4096 + 123 };
  static const size_t cut[] = { 1000, 5000, 4096, 1, 70001, 8192, 3, 65536, 1u << 20, 40000, 777777 };
  size_t len[sizeof cut / sizeof cut[0] + 1], np = 0, used = 0;
  for (size_t i = 0; i < sizeof cut / sizeof cut[0]; i++)
    used += len[np++] = cut[i];
  len[np++] = N - used;
  uint64_t st = ts_seed() + 31;
  float *x = malloc(N * sizeof *x);
  double *xd = malloc(N * sizeof *xd);
  for (int i = 0; i < N; i++) {
    x[i] = (i & 7) ? (float)((double)(ts_rand64(&st) >> 11) * 0x1p-53 - 0.5) * 0x1p-12f : rand_value(&st);
    xd[i] = x[i] * 1.25;
  }
  if (_i) {   /* most blocks on the fast fused kernel, whose seeds follow the threads' blocks */
    cap_values(x, N, 1, &st);
    for (int i = 0; i < N; i++)
      xd[i] = x[i] * 1.25;
  }
  mpe_range_target t[NT];
  mpe_format *custom[2];
  make_targets(t, custom);
  mpe_range *a = mpe_range_alloc_targets(t, NT, NULL), *b = mpe_range_alloc_targets(t, NT, NULL),
            *c = mpe_range_alloc_targets(t, NT, NULL), *one = mpe_range_alloc_targets(t, NT, NULL);
  ck_assert_int_eq(mpe_range_add_f32_pieces(a, x, len, np), 0);
  for (size_t p = 0, o = 0; p < np; o += len[p++])
    ck_assert_int_eq(mpe_range_add_f32(b, x + o, len[p]), 0);
  int rc = -1;
#pragma omp parallel num_threads(2)
#pragma omp single
  rc = mpe_range_add_f32_pieces(c, x, len, np);
  ck_assert_int_eq(rc, 0);
  same_state(a, b, "f32 pieces vs one call per piece");
  same_state(c, b, "f32 pieces as tasks vs one call per piece");
  /* the control: one call over everything splits the blocks otherwise */
  ck_assert_int_eq(mpe_range_add_f32(one, x, N), 0);
  int differ = 0;
  for (int k = 0; k < NT; k++) {
    mpe_range_stats p, q;
    mpe_range_stats_get(one, (size_t)k, &p);
    mpe_range_stats_get(b, (size_t)k, &q);
    ck_assert_uint_eq(p.underflow, q.underflow);   /* the counts never depend on it */
    differ += p.rel_error != q.rel_error;
  }
  /* (the capped values of _i = 1 may sum alike whatever the split: the control is _i = 0's) */
  ck_assert_msg(differ > 0 || _i, "no target's error sum shows the split: the test cannot tell pieces apart");
  mpe_range_free(a);
  mpe_range_free(b);
  a = mpe_range_alloc_targets(t, NT, NULL);
  b = mpe_range_alloc_targets(t, NT, NULL);
  ck_assert_int_eq(mpe_range_add_f64_pieces(a, xd, len, np), 0);
  for (size_t p = 0, o = 0; p < np; o += len[p++])
    ck_assert_int_eq(mpe_range_add_f64(b, xd + o, len[p]), 0);
  same_state(a, b, "f64 pieces vs one call per piece");
  /* bad arguments */
  ck_assert_int_eq(mpe_range_add_f32_pieces(NULL, x, len, np), MPE_EINVAL);
  ck_assert_int_eq(mpe_range_add_f32_pieces(a, x, NULL, 1), MPE_EINVAL);
  ck_assert_int_eq(mpe_range_add_f32_pieces(a, NULL, len, 1), MPE_EINVAL);
  ck_assert_int_eq(mpe_range_add_f64_pieces(a, NULL, len, 1), MPE_EINVAL);
  size_t zero = 0;
  ck_assert_int_eq(mpe_range_add_f32_pieces(a, NULL, &zero, 1), 0);
  ck_assert_int_eq(mpe_range_add_f64_pieces(a, NULL, NULL, 0), 0);
  same_state(a, b, "empty pieces change nothing");
  mpe_range_free(a);
  mpe_range_free(b);
  mpe_range_free(c);
  mpe_range_free(one);
  mpe_format_free(custom[0]);
  mpe_format_free(custom[1]);
  free(x);
  free(xd);
}
END_TEST

/* fx16 blocks whose max is so small that 32767/m is inf in binary32, or whose scale
   underflows: the same as mpe_fx16_encode/decode */
START_TEST(test_fx_tiny)
{
  enum { N = 4000 };
  uint64_t st = ts_seed() + 23;
  float *x = malloc(N * sizeof *x);
  for (int i = 0; i < N; i++) {
    uint64_t r = ts_rand64(&st);
    x[i] = ldexpf((float)((r >> 40) & 0xffffff) * 0x1p-24f, -100 - (int)(r % 50));
    if (r & 1) x[i] = -x[i];
  }
  for (size_t block = 1; block <= 16; block *= 4) {
    mpe_range_target t = { MPE_TARGET_FX16, NULL, 0, block };
    mpe_range *r = new_range_targets(&t, 1, NULL);
    mpe_range_add_f32(r, x, N);
    struct ref w = { 0 };
    ref_fx(&w, x, N, block);
    mpe_range_stats s;
    mpe_range_stats_get(r, 0, &s);
    ck_assert_uint_eq(s.underflow, w.u);
    ck_assert(s.max_rel_error == w.maxrel);
    double want = w.x2 > 0 ? (double)sqrtl(w.e2 / w.x2) : 0;
    ck_assert_msg(fabs(s.rel_error - want) <= 1e-12 * want, "block %zu: %a vs %a", block, s.rel_error, want);
    mpe_range_free(r);
  }
  free(x);
}
END_TEST

/* binary64 inputs: the bit-pattern path against rounding each value with
   mpe_round_scalar, the error sums grouped as the library groups them (blocks of
   4096 values summed in long double) so that they agree to the last bit */
START_TEST(test_f64_reference)
{
  enum { N = 20000, BLK = 4096 };
  uint64_t st = ts_seed() + 31 * (uint64_t)_i;
  double *x = malloc(N * sizeof *x);
  static const double edges[] = { 65520.0, 65504.0, 0x1p-25, 0x1p-24, 0x1p-14, 464.0, 448.0, 61440.0, 57344.0,
                                  0x1p-10, 0x1p-9, 0x1p-17, 0x1p-16, 0x1p-133, 0x1p-134, 0x1p-126, 0x1.fffffep127,
                                  0x1.ffffffp127, 0x1p-149, 0x1p-150, 0x1p-1074, 0x1p-1022, DBL_MAX, 1.0 };
  for (int i = 0; i < N; i++) {
    uint64_t r = ts_rand64(&st);
    double v;
    switch (r & 3) {
    case 0:
      v = edges[(r >> 3) % (sizeof edges / sizeof edges[0])];
      if ((r >> 20) & 1) v = nextafter(v, (r >> 21) & 1 ? INFINITY : 0.0);
      break;
    case 1:
      v = ts_u2d(ts_rand64(&st) & 0x7fffffffffffffffull);     /* any, non-finite included */
      break;
    case 2:
      v = ldexp(1.0 + (double)(ts_rand64(&st) >> 11) * 0x1p-53, (int)((r >> 8) % 400) - 200);
      break;
    default:
      v = ldexp(1.0 + (double)(ts_rand64(&st) >> 11) * 0x1p-53, (int)((r >> 8) % 80) - 50);
    }
    x[i] = (r >> 63) ? -v : v;
  }
  for (int k = 0; k < NF; k++) {
    const mpe_format *f = F(k);
    mpe_range *r = new_range(&f, 1, NULL);
    ck_assert_int_eq(mpe_range_add_f64(r, x, N), 0);
    double mn = mpe_format_min_normal(f), maxrel = 0;
    uint64_t u = 0, sub = 0, ov = 0;
    long double e2 = 0, x2 = 0;
    for (int b = 0; b < N; b += BLK) {
      long double be2 = 0, bx2 = 0;
      for (int i = b; i < N && i < b + BLK; i++) {
        if (!isfinite(x[i]) || x[i] == 0) continue;
        double y = mpe_round_scalar(x[i], f, NULL);
        if (!isfinite(y)) { ov++; continue; }
        if (y == 0) u++;
        else if (fabs(y) < mn) sub++;
        double d = y - x[i];
        be2 += (long double)d * d;
        bx2 += (long double)x[i] * x[i];
        if (fabs(d) / fabs(x[i]) > maxrel) maxrel = fabs(d) / fabs(x[i]);
      }
      e2 += be2;
      x2 += bx2;
    }
    mpe_range_stats s;
    mpe_range_stats_get(r, 0, &s);
    ck_assert_msg(s.underflow == u && s.subnormal == sub && s.overflow == ov, "%s: %llu/%llu %llu/%llu %llu/%llu",
                  fmts[k], (unsigned long long)s.underflow, (unsigned long long)u, (unsigned long long)s.subnormal,
                  (unsigned long long)sub, (unsigned long long)s.overflow, (unsigned long long)ov);
    ck_assert(s.max_rel_error == maxrel);
    ck_assert_msg(s.rel_error == (x2 > 0 ? (double)sqrtl(e2 / x2) : 0.0), "%s: %a", fmts[k], s.rel_error);
    mpe_range_free(r);
  }
  free(x);
}
END_TEST

/* the caller's rounding mode changes no count (the library rounds with integers) */
START_TEST(test_rounding_mode)
{
  enum { N = 8000 };
  static const int modes[] = { FE_UPWARD, FE_DOWNWARD, FE_TOWARDZERO };
  uint64_t st = ts_seed() + 41;
  float *x = malloc(N * sizeof *x);
  for (int i = 0; i < N; i++)
    x[i] = (ts_rand64(&st) & 3) ? rand_value(&st) : rand_fixed_edge(&st);
  if (_i > 0)   /* the fast fused kernel's blocks too */
    cap_values(x, N, _i == 1 ? 0 : 4, &st);
  mpe_range_target t[NT];
  mpe_format *custom[2];
  make_targets(t, custom);
  mpe_range *ref = new_range_targets(t, NT, NULL);
  mpe_range_add_f32(ref, x, N);
  for (int j = 0; j < 3; j++) {
    ck_assert_int_eq(fesetround(modes[j]), 0);
    mpe_range *r = new_range_targets(t, NT, NULL);
    mpe_range_add_f32(r, x, N);
    fesetround(FE_TONEAREST);
    for (int k = 0; k < NT - 2; k++) {       /* fx16 follows mpe_fx16_encode: binary32 arithmetic */
      mpe_range_stats a, b;
      mpe_range_stats_get(ref, (size_t)k, &a);
      mpe_range_stats_get(r, (size_t)k, &b);
      ck_assert_msg(a.underflow == b.underflow && a.subnormal == b.subnormal && a.overflow == b.overflow &&
                    a.scale_log2 == b.scale_log2 && a.underflow_at_scale == b.underflow_at_scale,
                    "mode %d, target %d", j, k);
    }
    mpe_range_free(r);
  }
  mpe_range_free(ref);
  mpe_format_free(custom[0]);
  mpe_format_free(custom[1]);
  free(x);
}
END_TEST

int main(void)
{
  Suite *s = suite_create("range");
  TCase *tc = tcase_create("counts");
  tcase_add_loop_test(tc, test_oracle_counts, 0, 3);
  tcase_add_test(tc, test_f64_hand);
  tcase_add_test(tc, test_rel_error);
  tcase_add_test(tc, test_pieces_same);
  suite_add_tcase(s, tc);
  tc = tcase_create("fast");
  tcase_set_timeout(tc, 120);
  tcase_add_loop_test(tc, test_fast_reference, 0, 8);
  tcase_add_loop_test(tc, test_fast_customs, 0, 32);
  tcase_add_loop_test(tc, test_merge, 0, 3);
  tcase_add_test(tc, test_threads_same);
  tcase_add_loop_test(tc, test_pieces_batch, 0, 2);
  tcase_add_loop_test(tc, test_rounding_mode, 0, 3);
  tcase_add_loop_test(tc, test_f64_reference, 0, 2);
  suite_add_tcase(s, tc);
  tc = tcase_create("fixed");
  tcase_add_test(tc, test_q_hand);
  tcase_add_test(tc, test_q_at_scale);
  tcase_add_test(tc, test_fixed_f64);
  tcase_add_test(tc, test_fx_hand);
  tcase_add_test(tc, test_fx_tiny);
  tcase_add_test(tc, test_target_errors);
  suite_add_tcase(s, tc);
  tc = tcase_create("api");
  tcase_add_test(tc, test_histogram);
  tcase_add_test(tc, test_errors);
  suite_add_tcase(s, tc);
  return ts_run(s);
}
