/* Master-weight update studies: lost-update counts derived by hand and by the
   MPFR oracle, traces of the master and Kahan strategies worked out in the
   comments, stochastic-rounding statistics, thread independence, errors. */
#include <math.h>
#include <stdlib.h>
#ifdef _OPENMP
#include <omp.h>
#endif
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include <fcntl.h>
#include <jansson.h>
#include "testsupport.h"


static const char *const low_names[] = { "fp16", "bf16" };

/* ulp(w) in a format of precision p and minimum exponent emin */
static double t_ulp(double w, int p, int emin)
{
  double a = fabs(w);
  int e = emin;
  if (a >= ldexp(1.0, emin))
    e = ilogb(a);
  return ldexp(1.0, e - p + 1);
}

static double mpfr_rne(double x, const mpe_format *f)
{
  ts_fmt g = ts_fmt_of(f);
  return ts_round_mpfr_d(x, &g, MPE_RNE);
}

/* Weights around powers of two, updates u = ±k·ulp(w)/8, k = 1..7: the count of
   lost updates follows from the rule written out case by case here. Returns n;
   *lost_want receives the count, lost[i] (when not NULL) each verdict. */
static size_t rule_cases(int p, double **wp, double **up, int **lostp, uint64_t *lost_want)
{
  size_t cap = 13 * 4 * 4 * 7, n = 0;
  double *w = malloc(cap * sizeof *w), *u = malloc(cap * sizeof *u);
  int *lv = malloc(cap * sizeof *lv);
  uint64_t want = 0;
  for (int e = -6; e <= 6; e++) {
    double b = ldexp(1.0, e), ulp = ldexp(1.0, e - p + 1);
    /* power of two (even), +1 ulp (odd), +2 ulp (even), the top of the binade (odd) */
    const double ws[4] = { b, b + ulp, b + 2 * ulp, 2 * b - ulp };
    const int even[4] = { 1, 0, 1, 0 };
    for (int j = 0; j < 4; j++)
      for (int sw = -1; sw <= 1; sw += 2)
        for (int su = -1; su <= 1; su += 2)
          for (int k = 1; k <= 7; k++) {
            w[n] = sw * ws[j];
            u[n] = su * k * ulp / 8;
            int toward_zero = sw != su;
            int lost;
            if (j == 0 && toward_zero)      /* spacing below is ulp/2: threshold ulp/4 = 2/8, tie to w */
              lost = k <= 2;
            else                            /* threshold ulp/2 = 4/8, tie to the even one */
              lost = k < 4 || (k == 4 && even[j]);
            lv[n] = lost;
            want += lost;
            n++;
          }
  }
  *wp = w;
  *up = u;
  *lostp = lv;
  *lost_want = want;
  return n;
}

START_TEST(test_rule_by_hand)
{
  const mpe_format *f = mpe_format_lookup(low_names[_i]);
  double *w, *u;
  int *lv;
  uint64_t want;
  size_t n = rule_cases(mpe_format_precision(f), &w, &u, &lv, &want);
  for (size_t i = 0; i < n; i++) {
    ck_assert_int_eq(mpe_update_is_lost(w[i], u[i], f), lv[i]);
    /* the MPFR oracle agrees with the hand rule (w + u is exact in binary64) */
    ck_assert_int_eq(mpfr_rne(w[i] + u[i], f) == w[i], lv[i]);
  }
  mpe_update_stats st[MPE_UPDATE_NSTRATEGIES];
  ck_assert_int_eq(mpe_update_study(st, w, n, u, 1, 1, f, NULL), MPE_OK);
  ck_assert_uint_eq(st[MPE_UPDATE_LOW].updates, n);
  ck_assert_uint_eq(st[MPE_UPDATE_LOW].lost, want);
  ck_assert_uint_eq(st[MPE_UPDATE_LOW].stale, want);
  ck_assert(st[MPE_UPDATE_LOW].lost_fraction == (double)want / (double)n);
  /* 13 binades x 4 weights x 4 sign pairs x 7 values of k */
  ck_assert_uint_eq(n, 13 * 4 * 4 * 7);
  /* per binade: power of two toward zero (2 sign pairs) k <= 2: 4; power of two away
     (2 pairs) k <= 4: 8; b + ulp, odd (4 pairs) k <= 3: 12; b + 2ulp, even: 16;
     2b - ulp, odd: 12. */
  ck_assert_uint_eq(want, 13 * (4 + 8 + 12 + 16 + 12));
  /* FP32 master weights lose none of these updates (ulp32 = ulp/2^(24-p) << ulp/8) */
  ck_assert_uint_eq(st[MPE_UPDATE_MASTER].lost, 0);
  free(w);
  free(u);
  free(lv);
}
END_TEST

/* Every finite value of the format as a weight, updates just below, at and just
   above ulp/4 and ulp/2 in both directions: the library's updated weights equal
   MPFR's rounding of the exact sum, element by element. */
START_TEST(test_exhaustive_mpfr)
{
  const mpe_format *f = mpe_format_lookup(low_names[_i]);
  const int p = mpe_format_precision(f), emin = mpe_format_emin(f);
  const int is_fp16 = _i == 0;
  static const double mult[] = { 0.25 * (1 - 0x1p-20), 0.25, 0.25 * (1 + 0x1p-20),
                                 0.5 * (1 - 0x1p-20), 0.5, 0.5 * (1 + 0x1p-20) };
  const size_t nm = sizeof mult / sizeof mult[0];
  double *w = malloc(65536 * sizeof *w);
  size_t n = 0;
  for (uint32_t b = 0; b < 65536; b++) {
    double v = is_fp16 ? mpe_fp16_to_fp32((uint16_t)b) : mpe_bf16_to_fp32((uint16_t)b);
    if (isfinite(v))
      w[n++] = v;
  }
  double *u = malloc(n * sizeof *u), *got = malloc(n * sizeof *got);
  for (size_t m = 0; m < 2 * nm; m++) {
    uint64_t lost_want = 0;
    for (size_t i = 0; i < n; i++)
      u[i] = (m < nm ? 1 : -1) * mult[m % nm] * t_ulp(w[i], p, emin);
    mpe_update *s;
    ck_assert_int_eq(mpe_update_alloc(&s, MPE_UPDATE_LOW, w, n, f, NULL), MPE_OK);
    ck_assert_int_eq(mpe_update_step(s, u), MPE_OK);
    ck_assert_int_eq(mpe_update_weights(s, got, NULL), MPE_OK);
    for (size_t i = 0; i < n; i++) {
      double want = mpfr_rne(w[i] + u[i], f);
      ck_assert_msg(ts_same_f64(got[i], want), "%s w=%a u=%a got %a want %a",
                    low_names[_i], w[i], u[i], got[i], want);
      int lost = ts_d2u(want) == ts_d2u(w[i]);
      lost_want += lost;
      ck_assert_int_eq(mpe_update_is_lost(w[i], u[i], f), want == w[i]);
    }
    mpe_update_stats st;
    ck_assert_int_eq(mpe_update_stats_get(s, &st), MPE_OK);
    ck_assert_uint_eq(st.lost, lost_want);
    ck_assert_uint_eq(st.updates, n);
    mpe_update_free(s);
  }
  free(w);
  free(u);
  free(got);
}
END_TEST

/* A sum that binary64 rounds onto the tie (1 + 2^-11 + 2^-60 needs 61 bits) must
   still be rounded from the exact value. */
START_TEST(test_no_double_rounding)
{
  const mpe_format *f = mpe_format_of(MPE_FP16);
  const double w[4] = { 1, 1, 1, 1 };
  const double u[4] = { 0x1p-11 + 0x1p-60, 0x1p-11 - 0x1p-60, -0x1p-12 - 0x1p-60, -0x1p-12 + 0x1p-60 };
  double got[4];
  mpe_update *s;
  ck_assert_int_eq(mpe_update_alloc(&s, MPE_UPDATE_LOW, w, 4, f, NULL), MPE_OK);
  ck_assert_int_eq(mpe_update_step(s, u), MPE_OK);
  ck_assert_int_eq(mpe_update_weights(s, got, NULL), MPE_OK);
  ck_assert(got[0] == 1 + 0x1p-10);   /* above the tie */
  ck_assert(got[1] == 1);
  ck_assert(got[2] == 1 - 0x1p-11);   /* below the tie toward zero (spacing 2^-11 under 1) */
  ck_assert(got[3] == 1);
  mpe_update_stats st;
  ck_assert_int_eq(mpe_update_stats_get(s, &st), MPE_OK);
  ck_assert_uint_eq(st.lost, 2);
  mpe_update_free(s);
}
END_TEST

/* w = 1 in FP16, u = 2^-13 = ulp(1)/8 for 8 steps; exact sum 1 + 2^-10.
   low: every update lost, w stays 1, drift 2^-10.
   master (FP32): m_k = 1 + k·2^-13 exactly, nothing lost; its FP16 copy RNE(m_k)
     is 1 for k = 1..4 (k = 4 is the tie 1 + 2^-11, to even), 1 + 2^-10 from k = 5:
     stale 7, drift 0.
   kahan: c_k = -k·2^-13 while t = 1 (k = 1..4); at k = 5 y = 5·2^-13 rounds w up to
     1 + 2^-10 and c = 2^-10 - 5·2^-13 = 3·2^-13; then y = -2^-12, -2^-13, 0 leave w
     and bring c to 2^-12, 2^-13, 0: never lost, stale 7, final w exact, drift 0. */
START_TEST(test_traces)
{
  const mpe_format *f = mpe_format_of(MPE_FP16);
  const double w0 = 1, u = 0x1p-13;
  mpe_update_stats st[MPE_UPDATE_NSTRATEGIES];
  ck_assert_int_eq(mpe_update_study(st, &w0, 1, &u, 1, 8, f, NULL), MPE_OK);
  ck_assert_uint_eq(st[MPE_UPDATE_LOW].steps, 8);
  ck_assert_uint_eq(st[MPE_UPDATE_LOW].lost, 8);
  ck_assert(st[MPE_UPDATE_LOW].lost_fraction == 1.0);
  ck_assert(st[MPE_UPDATE_LOW].max_abs_drift == 0x1p-10);
  ck_assert(st[MPE_UPDATE_LOW].rms_drift == 0x1p-10);
  ck_assert(st[MPE_UPDATE_LOW].max_rel_drift == 0x1p-10 / (1 + 0x1p-10));
  ck_assert_uint_eq(st[MPE_UPDATE_MASTER].lost, 0);
  ck_assert_uint_eq(st[MPE_UPDATE_MASTER].stale, 7);
  ck_assert(st[MPE_UPDATE_MASTER].max_abs_drift == 0);
  ck_assert_uint_eq(st[MPE_UPDATE_KAHAN].lost, 0);
  ck_assert_uint_eq(st[MPE_UPDATE_KAHAN].stale, 7);
  ck_assert(st[MPE_UPDATE_KAHAN].max_abs_drift == 0);
  ck_assert_uint_eq(st[MPE_UPDATE_SR].updates, 8);

  /* the Kahan trace step by step */
  static const double wk[8] = { 1, 1, 1, 1, 1 + 0x1p-10, 1 + 0x1p-10, 1 + 0x1p-10, 1 + 0x1p-10 };
  mpe_update *s;
  ck_assert_int_eq(mpe_update_alloc(&s, MPE_UPDATE_KAHAN, &w0, 1, f, NULL), MPE_OK);
  for (int k = 0; k < 8; k++) {
    double rec, low;
    ck_assert_int_eq(mpe_update_step(s, &u), MPE_OK);
    ck_assert_int_eq(mpe_update_weights(s, &rec, &low), MPE_OK);
    ck_assert(rec == wk[k] && low == wk[k]);
  }
  mpe_update_free(s);

  /* FP32 master loses what is below its own half ulp: 2^-25 at 1 */
  const double tiny = 0x1p-25;
  ck_assert_int_eq(mpe_update_study(st, &w0, 1, &tiny, 1, 4, f, NULL), MPE_OK);
  ck_assert_uint_eq(st[MPE_UPDATE_MASTER].lost, 4);
  ck_assert(st[MPE_UPDATE_MASTER].max_abs_drift == 4 * tiny);
  /* a binary64 master keeps it */
  mpe_update_opts o = { 0 };
  mpe_format *m51;
  ck_assert_int_eq(mpe_format_custom(&m51, 51, -1022, 1023), MPE_OK);
  o.master = m51;
  ck_assert_int_eq(mpe_update_study(st, &w0, 1, &tiny, 1, 4, f, &o), MPE_OK);
  ck_assert_uint_eq(st[MPE_UPDATE_MASTER].lost, 0);
  ck_assert(st[MPE_UPDATE_MASTER].max_abs_drift == 0);
  /* Kahan in FP16 loses an update only when u - c rounds to 0 with c = 0: below 2^-25 */
  const double sub = 0x1p-26;
  ck_assert_int_eq(mpe_update_study(st, &w0, 1, &sub, 1, 3, f, NULL), MPE_OK);
  ck_assert_uint_eq(st[MPE_UPDATE_KAHAN].lost, 3);
  mpe_format_free(m51);
}
END_TEST

/* rows cycle: steps 0..4 use rows 0,1,0,1,0; the reference is w0 + 3 u0 + 2 u1 */
START_TEST(test_rows_reference)
{
  const mpe_format *f = mpe_format_of(MPE_BF16);
  const double w0[3] = { 1, -2, 0.375 };
  const double u[6] = { 0.5, 0.25, -0.125, 0x1p-3, 0x1p-4, 0x1p-5 };
  mpe_update *s;
  ck_assert_int_eq(mpe_update_alloc(&s, MPE_UPDATE_LOW, w0, 3, f, NULL), MPE_OK);
  for (int t = 0; t < 5; t++)
    ck_assert_int_eq(mpe_update_step(s, u + 3 * (t % 2)), MPE_OK);
  double ref[3];
  ck_assert_int_eq(mpe_update_reference(s, ref), MPE_OK);
  for (int i = 0; i < 3; i++)
    ck_assert(ref[i] == w0[i] + 3 * u[i] + 2 * u[3 + i]);
  mpe_update_stats a, st[MPE_UPDATE_NSTRATEGIES];
  ck_assert_int_eq(mpe_update_stats_get(s, &a), MPE_OK);
  ck_assert_int_eq(mpe_update_study(st, w0, 3, u, 2, 5, f, NULL), MPE_OK);
  ck_assert_uint_eq(a.lost, st[0].lost);
  ck_assert(a.max_abs_drift == st[0].max_abs_drift && a.rms_drift == st[0].rms_drift);
  ck_assert_uint_eq(a.steps, 5);
  ck_assert_uint_eq(a.updates, 15);
  /* zero updates are not counted */
  const double z[3] = { 0, -0.0, 1 };
  ck_assert_int_eq(mpe_update_study(st, w0, 3, z, 1, 2, f, NULL), MPE_OK);
  ck_assert_uint_eq(st[0].updates, 2);
  /* weights start rounded: 1 + 2^-12 is 1 in bf16, and so is its reference */
  const double w1 = 1 + 0x1p-12, u1 = 0x1p-7;
  ck_assert_int_eq(mpe_update_study(st, &w1, 1, &u1, 1, 1, f, NULL), MPE_OK);
  ck_assert(st[0].max_abs_drift == 0);
  ck_assert_uint_eq(st[0].lost, 0);
  mpe_update_free(s);
}
END_TEST

/* SR: with u = 3/8 ulp, P(w unchanged) = 5/8; the mean stays unbiased. */
START_TEST(test_sr_statistics)
{
  const mpe_format *f = mpe_format_lookup(low_names[_i]);
  const int p = mpe_format_precision(f);
  const size_t n = 20000;
  double *w = malloc(n * sizeof *w), *u = malloc(n * sizeof *u), *got = malloc(n * sizeof *got);
  const double ulp = ldexp(1.0, 1 - p);
  for (size_t i = 0; i < n; i++) {
    w[i] = 1.5;
    u[i] = 3 * ulp / 8;
  }
  mpe_update_opts o = { .seed = ts_seed() };
  mpe_update *s;
  ck_assert_int_eq(mpe_update_alloc(&s, MPE_UPDATE_SR, w, n, f, &o), MPE_OK);
  ck_assert_int_eq(mpe_update_step(s, u), MPE_OK);
  mpe_update_stats st;
  ck_assert_int_eq(mpe_update_stats_get(s, &st), MPE_OK);
  double mean = n * 5.0 / 8, sd = sqrt(n * 5.0 / 8 * 3.0 / 8);
  ck_assert_msg(fabs((double)st.lost - mean) < 5 * sd, "lost %llu", (unsigned long long)st.lost);
  ck_assert_int_eq(mpe_update_weights(s, got, NULL), MPE_OK);
  for (size_t i = 0; i < n; i++)
    ck_assert(got[i] == 1.5 || got[i] == 1.5 + ulp);
  /* 16 more steps: the RNE weight never moves, SR drifts like a random walk of mean 0 */
  for (int t = 0; t < 16; t++)
    ck_assert_int_eq(mpe_update_step(s, u), MPE_OK);
  ck_assert_int_eq(mpe_update_weights(s, got, NULL), MPE_OK);
  double ref = 1.5 + 17 * 3 * ulp / 8, sum = 0;
  for (size_t i = 0; i < n; i++)
    sum += got[i] - ref;
  /* per element the variance is at most 17 * ulp^2 / 4 */
  ck_assert_msg(fabs(sum / n) < 5 * sqrt(17.0 / 4 / n) * ulp, "mean drift %g ulp", sum / n / ulp);
  mpe_update_free(s);
  free(w);
  free(u);
  free(got);
}
END_TEST

/* Same seed, same results with 1 and 2 threads; another seed differs. */
START_TEST(test_sr_threads)
{
  const mpe_format *f = mpe_format_of(MPE_BF16);
  const size_t n = 1 << 17;
  double *w = malloc(n * sizeof *w), *u = malloc(n * sizeof *u);
  double *a = malloc(n * sizeof *a), *b = malloc(n * sizeof *b);
  uint64_t st = ts_seed();
  for (size_t i = 0; i < n; i++) {
    w[i] = (double)(ts_rand64(&st) >> 11) * 0x1p-53 - 0.5;
    u[i] = ((double)(ts_rand64(&st) >> 11) * 0x1p-53 - 0.5) * 1e-3;
  }
  for (int pass = 0; pass < 3; pass++) {
#ifdef _OPENMP
    omp_set_num_threads(pass == 1 ? 2 : 1);
#endif
    mpe_update_opts o = { .seed = pass == 2 ? 8 : 7 };
    mpe_update *s;
    ck_assert_int_eq(mpe_update_alloc(&s, MPE_UPDATE_SR, w, n, f, &o), MPE_OK);
    for (int t = 0; t < 3; t++)
      ck_assert_int_eq(mpe_update_step(s, u), MPE_OK);
    ck_assert_int_eq(mpe_update_weights(s, pass == 0 ? a : b, NULL), MPE_OK);
    mpe_update_free(s);
    if (pass == 1)
      ck_assert_int_eq(memcmp(a, b, n * sizeof *a), 0);
    if (pass == 2)
      ck_assert_int_ne(memcmp(a, b, n * sizeof *a), 0);
  }
  free(w);
  free(u);
  free(a);
  free(b);
}
END_TEST

START_TEST(test_errors)
{
  const mpe_format *f = mpe_format_of(MPE_FP16);
  const double w = 1, u = 0.5;
  mpe_update *s = (mpe_update *)&w;   /* NULL after an error (the constructor convention) */
  mpe_update_stats st[MPE_UPDATE_NSTRATEGIES];
  ck_assert_int_eq(mpe_update_alloc(NULL, MPE_UPDATE_LOW, &w, 1, f, NULL), MPE_EINVAL);
  ck_assert_int_eq(mpe_update_alloc(&s, MPE_UPDATE_LOW, NULL, 1, f, NULL), MPE_EINVAL);
  ck_assert_int_eq(mpe_update_alloc(&s, (mpe_update_strategy)4, &w, 1, f, NULL), MPE_EINVAL);
  ck_assert_int_eq(mpe_update_alloc(&s, MPE_UPDATE_LOW, &w, 1, NULL, NULL), MPE_EINVAL);
  ck_assert_int_eq(mpe_update_alloc(&s, MPE_UPDATE_LOW, &w, 1, mpe_format_of(MPE_FP64), NULL), MPE_EINVAL);
  mpe_update_opts o = { .master = mpe_format_of(MPE_BF16) };   /* master coarser than fp16 */
  ck_assert_int_eq(mpe_update_alloc(&s, MPE_UPDATE_MASTER, &w, 1, f, &o), MPE_EINVAL);
  o.master = mpe_format_of(MPE_FP64);   /* 53 bits: round-to-odd needs <= 51 */
  s = (mpe_update *)&w;
  ck_assert_int_eq(mpe_update_alloc(&s, MPE_UPDATE_MASTER, &w, 1, f, &o), MPE_EINVAL);
  ck_assert_ptr_null(s);
  ck_assert_int_eq(mpe_update_step(NULL, &u), MPE_EINVAL);
  ck_assert_int_eq(mpe_update_alloc(&s, MPE_UPDATE_LOW, &w, 1, f, NULL), MPE_OK);
  ck_assert_int_eq(mpe_update_step(s, NULL), MPE_EINVAL);
  ck_assert_int_eq(mpe_update_stats_get(s, NULL), MPE_EINVAL);
  ck_assert_int_eq(mpe_update_stats_get(NULL, st), MPE_EINVAL);
  ck_assert_int_eq(mpe_update_reference(s, NULL), MPE_EINVAL);
  ck_assert_int_eq(mpe_update_weights(NULL, NULL, NULL), MPE_EINVAL);
  mpe_update_free(s);
  mpe_update_free(NULL);
  memset(st, 0xab, sizeof st);
  ck_assert_int_eq(mpe_update_study(st, &w, 1, &u, 0, 1, f, NULL), MPE_EINVAL);
  ck_assert_int_eq(mpe_update_study(st, &w, 1, NULL, 1, 1, f, NULL), MPE_EINVAL);
  ck_assert_int_eq(mpe_update_study(NULL, &w, 1, &u, 1, 1, f, NULL), MPE_EINVAL);
  ck_assert_int_eq(mpe_update_study(st, &w, 1, &u, 1, 1, mpe_format_of(MPE_FP64), NULL), MPE_EINVAL);
  ck_assert_uint_eq(st[0].steps, 0xababababababababull);   /* untouched */
  /* n = 0 is fine */
  ck_assert_int_eq(mpe_update_study(st, NULL, 0, NULL, 1, 3, f, NULL), MPE_OK);
  ck_assert_uint_eq(st[0].steps, 3);
  ck_assert_uint_eq(st[0].updates, 0);
  ck_assert(st[0].lost_fraction == 0);
  /* the rule's invalid inputs */
  ck_assert_int_eq(mpe_update_is_lost(1, 0, f), -1);
  ck_assert_int_eq(mpe_update_is_lost(1 + 0x1p-12, 1, f), -1);   /* not an fp16 value */
  ck_assert_int_eq(mpe_update_is_lost(INFINITY, 1, f), -1);
  ck_assert_int_eq(mpe_update_is_lost(1, NAN, f), -1);
  ck_assert_int_eq(mpe_update_is_lost(1, 1, NULL), -1);
  /* names */
  for (int k = 0; k < MPE_UPDATE_NSTRATEGIES; k++)
    ck_assert_int_eq(mpe_update_strategy_lookup(mpe_update_strategy_name((mpe_update_strategy)k)), k);
  ck_assert_str_eq(mpe_update_strategy_name(MPE_UPDATE_KAHAN), "kahan");
  ck_assert_ptr_null(mpe_update_strategy_name((mpe_update_strategy)9));
  ck_assert_int_eq(mpe_update_strategy_lookup("nope"), -1);
  ck_assert_int_eq(mpe_update_strategy_lookup(NULL), -1);
}
END_TEST

/* Overflow and saturation: max finite + a big update. */
START_TEST(test_overflow)
{
  const mpe_format *f = mpe_format_of(MPE_FP16);
  const double w = 65504, u = 16;   /* ulp(65504) = 32: 16 is the tie, max is odd: up to inf */
  mpe_update_stats st[MPE_UPDATE_NSTRATEGIES];
  ck_assert_int_eq(mpe_update_is_lost(w, u, f), 0);
  ck_assert_int_eq(mpe_update_study(st, &w, 1, &u, 1, 1, f, NULL), MPE_OK);
  ck_assert_uint_eq(st[MPE_UPDATE_LOW].nonfinite, 1);
  ck_assert_uint_eq(st[MPE_UPDATE_LOW].lost, 0);
  ck_assert_uint_eq(st[MPE_UPDATE_MASTER].nonfinite, 0);   /* the fp32 master holds 65520 */
  mpe_update_opts o = { .saturate = 1 };
  ck_assert_int_eq(mpe_update_study(st, &w, 1, &u, 1, 1, f, &o), MPE_OK);
  ck_assert_uint_eq(st[MPE_UPDATE_LOW].nonfinite, 0);
  ck_assert_uint_eq(st[MPE_UPDATE_LOW].lost, 1);   /* saturated back to 65504 */
  ck_assert(st[MPE_UPDATE_LOW].max_abs_drift == 16);
}
END_TEST

/* ---- the `mpanalyze update` subcommand */

static int write_f32(const char *path, const double *v, size_t n, size_t rows)
{
  float *x = malloc(n * rows * sizeof *x);
  for (size_t i = 0; i < n * rows; i++)
    x[i] = (float)v[i];
  uint64_t shape[2] = { rows, n };
  mpe_io_out o = { "t", MPE_FP32, rows > 1 ? 2 : 1, rows > 1 ? shape : shape + 1, x };
  int rc = mpe_io_write_npy(path, &o);
  free(x);
  return rc;
}

/* Run `mpanalyze update ARGS` (the built program, $MPANALYZE or ./mpanalyze)
   with stdout and stderr captured; returns its exit status. The library is
   tested directly above; the command is tested as a user runs it. */
static int run_cli(char **argv, char *out, size_t outlen, char *err, size_t errlen)
{
  int argc = 0;
  while (argv[argc])
    argc++;
  char on[] = "/tmp/mpe_updcli_outXXXXXX", en[] = "/tmp/mpe_updcli_errXXXXXX";
  int fo = mkstemp(on), fe = mkstemp(en);
  ck_assert(fo >= 0 && fe >= 0);
  const char *prog = getenv("MPANALYZE") ? getenv("MPANALYZE") : "./mpanalyze";
  char **av = calloc((size_t)argc + 2, sizeof *av);
  ck_assert_ptr_nonnull(av);
  av[0] = (char *)prog;
  memcpy(av + 1, argv, (size_t)argc * sizeof *av);
  fflush(stdout);
  fflush(stderr);
  pid_t pid = fork();
  ck_assert_int_ge(pid, 0);
  if (pid == 0) {
    dup2(fo, 1);
    dup2(fe, 2);
    execv(prog, av);
    _exit(127);
  }
  int st = 0;
  ck_assert_int_eq(waitpid(pid, &st, 0), pid);
  free(av);
  ck_assert_msg(WIFEXITED(st) && WEXITSTATUS(st) != 127, "%s did not run", prog);
  ssize_t k = pread(fo, out, outlen - 1, 0);
  out[k > 0 ? k : 0] = 0;
  k = pread(fe, err, errlen - 1, 0);
  err[k > 0 ? k : 0] = 0;
  close(fo);
  close(fe);
  unlink(on);
  unlink(en);
  return WEXITSTATUS(st);
}

START_TEST(test_cli_counts)
{
  const mpe_format *f = mpe_format_lookup(low_names[_i]);
  double *w, *u;
  int *lv;
  uint64_t want;
  size_t n = rule_cases(mpe_format_precision(f), &w, &u, &lv, &want);
  char wp[64], up[64];
  snprintf(wp, sizeof wp, "/tmp/mpe_updcli_w_%d_%d.npy", (int)getpid(), _i);
  snprintf(up, sizeof up, "/tmp/mpe_updcli_u_%d_%d.npy", (int)getpid(), _i);
  ck_assert_int_eq(write_f32(wp, w, n, 1), MPE_OK);
  ck_assert_int_eq(write_f32(up, u, n, 1), MPE_OK);
  static char out[1 << 16], err[4096];
  char *argv[] = { "update", "--weights", wp, "--updates", up, "--format", (char *)low_names[_i],
                   "--json", NULL };
  ck_assert_int_eq(run_cli(argv, out, sizeof out, err, sizeof err), 0);
  json_error_t je;
  json_t *doc = json_loads(out, 0, &je);
  ck_assert_msg(doc != NULL, "bad JSON: %s", je.text);
  json_t *low = json_object_get(json_object_get(doc, "strategies"), "low");
  ck_assert_int_eq(json_integer_value(json_object_get(low, "lost")), (json_int_t)want);
  ck_assert_int_eq(json_integer_value(json_object_get(low, "updates")), (json_int_t)n);
  ck_assert(json_real_value(json_object_get(low, "lost_fraction")) == (double)want / (double)n);
  for (int k = 0; k < MPE_UPDATE_NSTRATEGIES; k++) {
    json_t *o = json_object_get(json_object_get(doc, "strategies"), mpe_update_strategy_name((mpe_update_strategy)k));
    ck_assert_ptr_nonnull(o);
    ck_assert_ptr_nonnull(json_object_get(o, "max_abs_drift"));
    ck_assert_ptr_nonnull(json_object_get(o, "rms_drift"));
  }
  ck_assert_int_eq(json_integer_value(json_object_get(json_object_get(json_object_get(doc, "strategies"),
                                      "master"), "lost")), 0);
  ck_assert_int_eq(json_integer_value(json_object_get(doc, "steps")), 1);
  json_decref(doc);

  /* 3 steps of the same row: after the first, the lost ones stay lost (w unchanged,
     same u) and the others move w by at least one step; count only the first exactly */
  char *argv3[] = { "update", "-w", wp, "-u", up, "-f", (char *)low_names[_i], "--steps", "3", "--json", NULL };
  ck_assert_int_eq(run_cli(argv3, out, sizeof out, err, sizeof err), 0);
  doc = json_loads(out, 0, &je);
  ck_assert_ptr_nonnull(doc);
  low = json_object_get(json_object_get(doc, "strategies"), "low");
  ck_assert_int_eq(json_integer_value(json_object_get(low, "updates")), (json_int_t)(3 * n));
  ck_assert_int_ge(json_integer_value(json_object_get(low, "lost")), (json_int_t)(3 * want));
  json_decref(doc);

  /* the text table names every strategy */
  char *argvt[] = { "update", "-w", wp, "-u", up, NULL };
  ck_assert_int_eq(run_cli(argvt, out, sizeof out, err, sizeof err), 0);
  ck_assert_ptr_nonnull(strstr(out, "kahan"));
  ck_assert_ptr_nonnull(strstr(out, "master"));
  unlink(wp);
  unlink(up);
  free(w);
  free(u);
  free(lv);
}
END_TEST

/* Two update rows alternate: w = 1 (fp16), rows u0 = 2^-11 (a tie: lost from 1,
   which is even) and u1 = 2^-10 (one ulp): 1 -> 1 (lost) -> 1+2^-10 -> 1+2^-9
   (tie from the odd 1+2^-10 goes up to even) -> 1+2^-9+2^-10. 4 steps, 1 lost. */
START_TEST(test_cli_rows)
{
  const double w = 1, u[2] = { 0x1p-11, 0x1p-10 };
  char wp[64], up[64];
  snprintf(wp, sizeof wp, "/tmp/mpe_updcli_rw_%d.npy", (int)getpid());
  snprintf(up, sizeof up, "/tmp/mpe_updcli_ru_%d.npy", (int)getpid());
  ck_assert_int_eq(write_f32(wp, &w, 1, 1), MPE_OK);
  ck_assert_int_eq(write_f32(up, u, 1, 2), MPE_OK);
  static char out[1 << 16], err[4096];
  char *argv[] = { "update", "-w", wp, "-u", up, "--steps", "4", "--json", NULL };
  ck_assert_int_eq(run_cli(argv, out, sizeof out, err, sizeof err), 0);
  json_t *doc = json_loads(out, 0, NULL);
  ck_assert_ptr_nonnull(doc);
  ck_assert_int_eq(json_integer_value(json_object_get(doc, "rows")), 2);
  json_t *low = json_object_get(json_object_get(doc, "strategies"), "low");
  ck_assert_int_eq(json_integer_value(json_object_get(low, "lost")), 1);
  /* reference 1 + 2(2^-11 + 2^-10) = 1 + 3·2^-10; low ends at 1 + 3·2^-10 too */
  ck_assert(json_real_value(json_object_get(low, "max_abs_drift")) == 0);
  json_decref(doc);
  unlink(wp);
  unlink(up);
}
END_TEST

START_TEST(test_cli_errors)
{
  static char out[4096], err[4096];
  const double w[3] = { 1, 2, 3 }, u[2] = { 1, 2 };
  char wp[64], up[64];
  snprintf(wp, sizeof wp, "/tmp/mpe_updcli_ew_%d.npy", (int)getpid());
  snprintf(up, sizeof up, "/tmp/mpe_updcli_eu_%d.npy", (int)getpid());
  ck_assert_int_eq(write_f32(wp, w, 3, 1), MPE_OK);
  ck_assert_int_eq(write_f32(up, u, 2, 1), MPE_OK);
  char *a1[] = { "update", "-w", wp, "-u", "/nonexistent/u.npy", "--json", NULL };
  ck_assert_int_eq(run_cli(a1, out, sizeof out, err, sizeof err), 2);
  ck_assert_str_eq(out, "");
  ck_assert_ptr_nonnull(strstr(err, "/nonexistent/u.npy"));
  char *a2[] = { "update", "-w", wp, "-u", up, "--json", NULL };   /* 2 is not a multiple of 3 */
  ck_assert_int_eq(run_cli(a2, out, sizeof out, err, sizeof err), 2);
  ck_assert_str_eq(out, "");
  ck_assert_ptr_nonnull(strstr(err, up));
  char *a3[] = { "update", "-w", wp, "-u", wp, "-f", "fp99", NULL };
  ck_assert_int_eq(run_cli(a3, out, sizeof out, err, sizeof err), 2);
  ck_assert_ptr_nonnull(strstr(err, "fp99"));
  char *a4[] = { "update", "-w", wp, NULL };
  ck_assert_int_eq(run_cli(a4, out, sizeof out, err, sizeof err), 2);
  char *a5[] = { "update", "-w", wp, "-u", wp, "--steps", "0", NULL };
  ck_assert_int_eq(run_cli(a5, out, sizeof out, err, sizeof err), 2);
  char *a6[] = { "update", "-w", wp, "-u", wp, "-f", "fp16", "--master", "bf16", NULL };
  ck_assert_int_eq(run_cli(a6, out, sizeof out, err, sizeof err), 2);
  char *a7[] = { "update", "-w", wp, "-u", wp, "-f", "fp64", NULL };
  ck_assert_int_eq(run_cli(a7, out, sizeof out, err, sizeof err), 2);
  /* a truncated file */
  FILE *fp = fopen(up, "r+b");
  ck_assert_ptr_nonnull(fp);
  ck_assert_int_eq(ftruncate(fileno(fp), 70), 0);
  fclose(fp);
  char *a8[] = { "update", "-w", wp, "-u", up, NULL };
  ck_assert_int_eq(run_cli(a8, out, sizeof out, err, sizeof err), 2);
  ck_assert_str_eq(out, "");
  ck_assert_ptr_nonnull(strstr(err, up));
  char *a9[] = { "update", "--help", NULL };
  ck_assert_int_eq(run_cli(a9, out, sizeof out, err, sizeof err), 0);
  ck_assert_ptr_nonnull(strstr(out, "--weights"));
  unlink(wp);
  unlink(up);
}
END_TEST

int main(void)
{
  Suite *s = suite_create("update");
  TCase *tc = tcase_create("rule");
  tcase_set_timeout(tc, 300);
  tcase_add_loop_test(tc, test_rule_by_hand, 0, 2);
  tcase_add_loop_test(tc, test_exhaustive_mpfr, 0, 2);
  tcase_add_test(tc, test_no_double_rounding);
  suite_add_tcase(s, tc);
  tc = tcase_create("strategies");
  tcase_add_test(tc, test_traces);
  tcase_add_test(tc, test_rows_reference);
  tcase_add_test(tc, test_overflow);
  suite_add_tcase(s, tc);
  tc = tcase_create("sr");
  tcase_set_timeout(tc, 120);
  tcase_add_loop_test(tc, test_sr_statistics, 0, 2);
  tcase_add_test(tc, test_sr_threads);
  suite_add_tcase(s, tc);
  tc = tcase_create("errors");
  tcase_add_test(tc, test_errors);
  suite_add_tcase(s, tc);
  tc = tcase_create("cli");
  tcase_set_timeout(tc, 60);
  tcase_add_loop_test(tc, test_cli_counts, 0, 2);
  tcase_add_test(tc, test_cli_rows);
  tcase_add_test(tc, test_cli_errors);
  suite_add_tcase(s, tc);
  return ts_run(s);
}
