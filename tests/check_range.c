/* Range analysis: counts against the MPFR oracle (independent of the
   library's rounding), the scale rule against a brute-force search, the
   one-pass counts at any power-of-two scale against rounding the scaled
   values, hand cases for values only binary64 holds, the error measure, the
   histograms and the error paths. */
#include <float.h>
#include <math.h>
#include <stdlib.h>
#include "testsupport.h"

static const char *fmts[] = { "fp16", "bf16", "tf32", "e4m3", "e5m2", "fp32", "fp64" };
#define NF 7

static const mpe_format *F(int k) { return mpe_format_lookup(fmts[k]); }

static double oracle(double x, const mpe_format *f)
{
  return ts_mpfr_round(x, mpe_format_precision(f), mpe_format_emin(f), mpe_format_emax(f),
                       mpe_format_max(f), mpe_format_has_inf(f), MPE_RNE);
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
  mpe_range *r = mpe_range_alloc(fm, NF, &o);
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
  mpe_range *r = mpe_range_alloc(f, 2, NULL);
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
  /* 1e300 = 0.7466*2^997 and fp32 max = 0.99999994*2^128: 2^-869 * 1e300 = 0.7466*2^128 fits, 2^-868 does not */
  ck_assert_int_eq(s.scale_log2, -869);
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
  mpe_range *r = mpe_range_alloc(&f, 1, NULL);
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
  mpe_range *r = mpe_range_alloc(f, 2, NULL);
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

START_TEST(test_pieces_same)
{
  enum { N = 20000 };
  uint64_t st = ts_seed();
  float *x = malloc(N * sizeof *x);
  for (int i = 0; i < N; i++)
    x[i] = rand_value(&st);
  const mpe_format *f[3] = { F(0), F(3), F(4) };
  mpe_range *a = mpe_range_alloc(f, 3, NULL), *b = mpe_range_alloc(f, 3, NULL);
  mpe_range_add_f32(a, x, N);
  for (int i = 0; i < N; i += 7)
    mpe_range_add_f32(b, x + i, (size_t)(N - i < 7 ? N - i : 7));
  for (int k = 0; k < 3; k++) {
    mpe_range_stats sa, sb;
    mpe_range_stats_get(a, (size_t)k, &sa);
    mpe_range_stats_get(b, (size_t)k, &sb);
    ck_assert_uint_eq(sa.underflow, sb.underflow);
    ck_assert_uint_eq(sa.subnormal, sb.subnormal);
    ck_assert_uint_eq(sa.overflow, sb.overflow);
    ck_assert_int_eq(sa.scale_log2, sb.scale_log2);
    ck_assert_uint_eq(sa.underflow_at_scale, sb.underflow_at_scale);
    ck_assert(sa.max_rel_error == sb.max_rel_error);
    ck_assert(fabs(sa.rel_error - sb.rel_error) <= 1e-12 * sa.rel_error);
  }
  mpe_range_free(a);
  mpe_range_free(b);
  free(x);
}
END_TEST

START_TEST(test_errors)
{
  const mpe_format *f = mpe_format_lookup("fp16"), *none = NULL;
  mpe_range_opts bad = { -1 };
  ck_assert_ptr_null(mpe_range_alloc(NULL, 1, NULL));
  ck_assert_ptr_null(mpe_range_alloc(&f, 0, NULL));
  ck_assert_ptr_null(mpe_range_alloc(&none, 1, NULL));
  ck_assert_ptr_null(mpe_range_alloc(&f, 1, &bad));
  mpe_range *r = mpe_range_alloc(&f, 1, NULL);
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

int main(void)
{
  Suite *s = suite_create("range");
  TCase *tc = tcase_create("counts");
  tcase_add_loop_test(tc, test_oracle_counts, 0, 3);
  tcase_add_test(tc, test_f64_hand);
  tcase_add_test(tc, test_rel_error);
  tcase_add_test(tc, test_pieces_same);
  suite_add_tcase(s, tc);
  tc = tcase_create("api");
  tcase_add_test(tc, test_histogram);
  tcase_add_test(tc, test_errors);
  suite_add_tcase(s, tc);
  return ts_run(s);
}
