/* Element-wise array operations: every result against MPFR (the exact value,
   or a 300-bit evaluation, rounded to the format by the suite's oracle),
   exhaustively over all FP16/BF16 inputs for the unary functions and on
   random binary32 operands; the rate of results that are not the correctly
   rounded ones is printed per function and format. Also: errors, flags,
   aliasing, SIMD-level and thread-count independence, stochastic modes. */
#include <math.h>
#include <float.h>
#include <stdlib.h>
#include <string.h>
#include <mpfr.h>
#ifdef _OPENMP
#include <omp.h>
#endif
#include "testsupport.h"
#include "boundary.h"

static const mpe_round det_modes[6] = { MPE_RNE, MPE_RNA, MPE_RZ, MPE_RU, MPE_RD, MPE_RO };

enum { F_ADD, F_SUB, F_MUL, F_DIV, F_FMA, F_SCALE, F_SQRT, F_RECIP, F_EXP, F_LOG, F_TANH, F_SIGMOID, NF };
static const char *const fnames[NF] = { "add", "sub", "mul", "div", "fma", "scale", "sqrt", "recip",
                                        "exp", "log", "tanh", "sigmoid" };
static const int exact_fn[NF] = { 1, 1, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0 };

static int call(int fn, float *out, const float *x, const float *y, const float *z, float alpha, size_t n,
                const mpe_format *f, const mpe_round_opts *o)
{
  switch (fn) {
  case F_ADD: return mpe_ew_add(out, x, y, n, f, o);
  case F_SUB: return mpe_ew_sub(out, x, y, n, f, o);
  case F_MUL: return mpe_ew_mul(out, x, y, n, f, o);
  case F_DIV: return mpe_ew_div(out, x, y, n, f, o);
  case F_FMA: return mpe_ew_fma(out, x, y, z, n, f, o);
  case F_SCALE: return mpe_ew_scale(out, alpha, x, n, f, o);
  case F_SQRT: return mpe_ew_sqrt(out, x, n, f, o);
  case F_RECIP: return mpe_ew_recip(out, x, n, f, o);
  case F_EXP: return mpe_ew_exp(out, x, n, f, o);
  case F_LOG: return mpe_ew_log(out, x, n, f, o);
  case F_TANH: return mpe_ew_tanh(out, x, n, f, o);
  default: return mpe_ew_sigmoid(out, x, n, f, o);
  }
}

/* ---- oracle */
#define WP 300   /* working precision */
#define KP 200   /* kept: truncated to KP-1 bits plus a sticky bit */

/* The value of fn at (a, b, c) in `big` (KP bits): exact, or a stand-in
   strictly on the exact value's side of every KP-1-bit number (a sticky bit),
   built from a WP-bit result t and the side of the exact value relative to t.
   Single MPFR operations give that side in their ternary value; the sigmoid
   is arranged so that one operation dominates (see below). Returns 0 when
   the result is NaN. */
static int mp_value(mpfr_t big, int fn, double a, double b, double c, double alpha)
{
  mpfr_t x, y, z, t, e;
  mpfr_inits2(WP, x, y, z, t, (mpfr_ptr)0);
  mpfr_init2(e, 2 * WP + 400);
  mpfr_set_d(x, a, MPFR_RNDN);
  mpfr_set_d(y, b, MPFR_RNDN);
  mpfr_set_d(z, c, MPFR_RNDN);
  int inex = 0;   /* sign of (t - exact) */
  switch (fn) {
  case F_ADD: inex = mpfr_add(t, x, y, MPFR_RNDN); break;
  case F_SUB: inex = mpfr_sub(t, x, y, MPFR_RNDN); break;
  case F_MUL: inex = mpfr_mul(t, x, y, MPFR_RNDN); break;
  case F_DIV: inex = mpfr_div(t, x, y, MPFR_RNDN); break;
  case F_FMA: inex = mpfr_fma(t, x, y, z, MPFR_RNDN); break;
  case F_SCALE: inex = mpfr_mul_d(t, x, alpha, MPFR_RNDN); break;
  case F_SQRT: inex = mpfr_sqrt(t, x, MPFR_RNDN); break;
  case F_RECIP: inex = mpfr_ui_div(t, 1, x, MPFR_RNDN); break;
  case F_EXP:
    inex = mpfr_exp(t, x, MPFR_RNDN);
    if (isfinite(a) && fabs(a) > 1e6) {   /* beyond MPFR's range: a stand-in far beyond every format */
      mpfr_set_ui_2exp(t, 1, a > 0 ? 1000000 : -1000000, MPFR_RNDN);
      inex = a > 0 ? -1 : 1;
    }
    break;
  case F_LOG: inex = mpfr_log(t, x, MPFR_RNDN); break;
  case F_TANH: inex = mpfr_tanh(t, x, MPFR_RNDN); break;
  default:
    if (a >= 0 || isnan(a)) {
      /* (1 + tanh(x/2)) / 2: the sum and the halving are exact, so the side is tanh's */
      mpfr_div_2ui(x, x, 1, MPFR_RNDN);
      inex = mpfr_tanh(t, x, MPFR_RNDN);
      mpfr_add_ui(e, t, 1, MPFR_RNDN);
      mpfr_div_2ui(e, e, 1, MPFR_RNDN);
      mpfr_set_prec(t, 2 * WP + 400);
      mpfr_set(t, e, MPFR_RNDN);
    } else if (a < -200) {
      inex = mpfr_exp(t, x, MPFR_RNDN);   /* e^x(1 - e^x): far below every format */
      if (isfinite(a) && a < -1e6) {
        mpfr_set_ui_2exp(t, 1, -1000000, MPFR_RNDN);
        inex = 1;
      }
    } else {
      /* 1/(1 + E), E = e^-x to 2WP bits: the division's rounding dominates */
      mpfr_neg(x, x, MPFR_RNDN);
      mpfr_set_prec(e, 2 * WP);
      int te = mpfr_exp(e, x, MPFR_RNDN);
      mpfr_t one_e;
      mpfr_init2(one_e, 2 * WP + 400);
      mpfr_add_ui(one_e, e, 1, MPFR_RNDN);   /* exact */
      inex = mpfr_ui_div(t, 1, one_e, MPFR_RNDN);
      if (inex == 0)
        inex = -te;   /* decreasing in E */
      mpfr_clear(one_e);
    }
    break;
  }
  int ok = !mpfr_nan_p(t);
  mpfr_t tr;
  mpfr_init2(tr, KP - 1);
  int t2 = mpfr_set(tr, t, MPFR_RNDZ);
  mpfr_set(big, tr, MPFR_RNDN);
  if (mpfr_regular_p(big) && (t2 || inex)) {
    mpfr_t ulp;
    mpfr_init2(ulp, 2);
    /* truncated: the exact value is beyond tr; else it is on the side inex says */
    int dir = t2 ? mpfr_sgn(big) : (inex > 0 ? -1 : 1);
    mpfr_set_si_2exp(ulp, dir, mpfr_get_exp(big) - KP, MPFR_RNDN);
    mpfr_add(big, big, ulp, MPFR_RNDN);
    mpfr_clear(ulp);
  }
  mpfr_clear(tr);
  mpfr_clears(x, y, z, t, e, (mpfr_ptr)0);
  return ok;
}

/* big rounded to format f by the suite's oracle (subnormals, IEEE overflow) */
static double oracle_round(mpfr_srcptr big, const mpe_format *f, mpe_round r)
{
  ts_fmt g = ts_fmt_of(f);
  return ts_round_mpfr(big, &g, r, 0, NULL);
}

/* distance in units of the format's quantum at the correct result */
static double ulps(double got, double want, const mpe_format *f)
{
  if (isinf(got) || isinf(want))
    return got == want ? 0 : INFINITY;
  double a = fabs(want);
  int e = a >= mpe_format_min_normal(f) ? ilogb(a) : mpe_format_emin(f);
  return fabs(got - want) / ldexp(1.0, e - mpe_format_precision(f) + 1);
}

typedef struct { long n, bad; double worst; } tally;

/* kept under MPE_CHECK_SUBSET: a zero, infinite or NaN operand or result, a
   result below f's smallest normal or in its top binade, a first operand at
   either end of its binade at f's precision */
static int edge_case(const mpe_format *f, float a, float got)
{
  const float g = fabsf(got);
  if (!isfinite(a) || a == 0 || !isfinite(got) || g == 0 || g < mpe_format_min_normal(f) ||
      g >= mpe_format_max(f) / 2)
    return 1;
  const int p = mpe_format_precision(f);
  const uint32_t top = (ts_f2u(a) & 0x7fffffu) >> (24 - (p < 24 ? p : 24));
  return top == 0 || top == (1u << ((p < 24 ? p : 24) - 1)) - 1;
}

/* got[0..n-1] against MPFR: every element, or under MPE_CHECK_SUBSET every
   Nth and every edge case; t->n counts those compared */
static void compare(tally *t, int fn, const mpe_format *f, mpe_round r, const float *got, const float *x,
                    const float *y, const float *z, float alpha, size_t n, int verbose)
{
  mpfr_t big;
  mpfr_init2(big, KP);
  for (size_t i = 0; i < n; i++) {
    if (!ts_in_subset(i) && !edge_case(f, x[i], got[i]))
      continue;
    double a = x[i], b = y ? y[i] : 0, c = z ? z[i] : 0;
    if (!mp_value(big, fn, a, b, c, alpha)) {
      ck_assert_msg(isnan(got[i]), "%s(%a) = %a, want NaN", fnames[fn], a, got[i]);
      continue;
    }
    double want = oracle_round(big, f, r);
    t->n++;
    if (want == 0 && got[i] == 0)
      continue;   /* zero signs: tested separately */
    if (!ts_same_f64(got[i], want)) {
      double u = ulps(got[i], want, f);
      if (verbose && t->bad < 3)
        fprintf(stderr, "%s %s %s: x=%a y=%a z=%a got %a want %a (%.3g ulp)\n", fnames[fn],
                mpe_format_name(f), mpe_round_name(r), a, b, c, got[i], want, u);
      t->bad++;
      t->worst = u > t->worst ? u : t->worst;
    }
  }
  mpfr_clear(big);
}

static const char *const fmt_names[] = { "fp16", "bf16" };

/* all 2^16 inputs of the format itself, 6 modes, every unary function */
START_TEST(test_unary_exhaustive)
{
  const mpe_format *f = mpe_format_lookup(fmt_names[_i]);
  float *x = malloc(65536 * sizeof *x), *y = malloc(65536 * sizeof *y);
  for (uint32_t h = 0; h < 65536; h++)
    x[h] = _i ? mpe_bf16_to_fp32((uint16_t)h) : mpe_fp16_to_fp32((uint16_t)h);
  for (int fn = F_SQRT; fn < NF; fn++) {
    tally t = { 0, 0, 0 };
    for (int m = 0; m < 6; m++) {
      ck_assert_int_eq(call(fn, y, x, NULL, NULL, 0, 65536, f, &(mpe_round_opts){ det_modes[m], 0, 0, 0, 0 }), MPE_OK);
      compare(&t, fn, f, det_modes[m], y, x, NULL, NULL, 0, 65536, 1);
    }
    fprintf(stderr, "ew %-7s %s: all 2^16 inputs x 6 modes: %ld results compared, %ld not correctly rounded (rate %.2e), worst %.3g ulp\n",
            fnames[fn], mpe_format_name(f), t.n, t.bad, (double)t.bad / t.n, t.worst);
    if (exact_fn[fn])
      ck_assert_int_eq(t.bad, 0);
    else
      ck_assert(t.bad <= t.n / 10000 && t.worst <= 1.0);
  }
  free(x);
  free(y);
}
END_TEST

/* random binary32 operand (not necessarily in the format): sign, exponent spread, 24 bits */
static float rnd_f32(uint64_t *st, int elo, int ehi)
{
  uint64_t r = ts_rand64(st);
  float v = ldexpf(1.0f + (float)((r >> 8) & 0x7fffff) * 0x1p-23f, elo + (int)((r >> 40) % (uint64_t)(ehi - elo + 1)));
  return (r >> 63) ? -v : v;
}

static void gen_operands(int fn, uint64_t *st, float *x, float *y, float *z, size_t n, const mpe_format *f)
{
  int p = mpe_format_precision(f);
  for (size_t i = 0; i < n; i++) {
    uint64_t k = ts_rand64(st) % 4;
    switch (fn) {
    case F_EXP: x[i] = rnd_f32(st, -30, 6); break;
    case F_LOG: x[i] = fabsf(rnd_f32(st, -140, 127)); break;
    case F_TANH: x[i] = rnd_f32(st, -30, 5); break;
    case F_SIGMOID: x[i] = rnd_f32(st, -30, 7); break;
    case F_SQRT: case F_RECIP: x[i] = fabsf(rnd_f32(st, -140, 127)); break;
    default:
      x[i] = rnd_f32(st, -20, 20);
      if (k == 0) {          /* alignment / near ties */
        y[i] = ldexpf(rnd_f32(st, 0, 0), ilogbf(x[i]) - p - (int)(ts_rand64(st) % 4));
      } else if (k == 1) {   /* cancellation */
        y[i] = -x[i] * (1.0f + rnd_f32(st, -24, -p));
      } else if (k == 2) {   /* products near the format's range ends */
        int lo = (ts_rand64(st) & 1) ? 60 : -75;
        x[i] = rnd_f32(st, lo, lo + 15);
        y[i] = rnd_f32(st, lo, lo + 15);
      } else {
        y[i] = rnd_f32(st, -20, 20);
      }
      z[i] = fn == F_FMA && k == 1 ? -(x[i] * y[i]) : rnd_f32(st, -30, 10);
      break;
    }
  }
}

/* random binary32 inputs into fp16, bf16, tf32, e4m3 and fp32 */
START_TEST(test_random_binary32)
{
  static const char *const names[] = { "fp16", "bf16", "tf32", "e4m3", "fp32" };
  const mpe_format *f = mpe_format_lookup(names[_i]);
  const size_t n = ts_expensive() ? 200000 : 12000;
  float *x = malloc(n * sizeof *x), *y = malloc(n * sizeof *y), *z = malloc(n * sizeof *z),
        *w = malloc(n * sizeof *w);
  uint64_t st = ts_seed() + (uint64_t)_i * 7919;
  for (int fn = 0; fn < NF; fn++) {
    tally t = { 0, 0, 0 };
    gen_operands(fn, &st, x, y, z, n, f);
    float alpha = rnd_f32(&st, -3, 3);
    for (int m = 0; m < 6; m++) {
      mpe_round_opts o = { det_modes[m], 0, 0, 0, 0 };
      ck_assert_int_eq(call(fn, w, x, y, z, alpha, n, f, &o), MPE_OK);
      compare(&t, fn, f, det_modes[m], w, x, fn <= F_FMA ? y : NULL, fn == F_FMA ? z : NULL, alpha, n, 1);
    }
    fprintf(stderr, "ew %-7s %s: %zu random binary32 inputs x 6 modes: %ld results compared, %ld not correctly rounded (rate %.2e), worst %.3g ulp\n",
            fnames[fn], names[_i], n, t.n, t.bad, (double)t.bad / t.n, t.worst);
    if (exact_fn[fn])
      ck_assert_int_eq(t.bad, 0);
    else
      ck_assert(t.bad <= t.n / 10000 + 1 && t.worst <= 1.0);
  }
  free(x); free(y); free(z); free(w);
}
END_TEST

START_TEST(test_softmax)
{
  const mpe_format *f = mpe_format_lookup(fmt_names[_i]);
  const size_t rows = 300, cols = 37;
  float *x = malloc(rows * cols * sizeof *x), *y = malloc(rows * cols * sizeof *y);
  uint64_t st = ts_seed() ^ 0x50f7;
  for (size_t i = 0; i < rows * cols; i++)
    x[i] = rnd_f32(&st, -4, 3);
  x[5] = -INFINITY;
  long bad = 0, total = 0;
  double worst = 0;
  mpfr_t m, s, t, big;
  mpfr_inits2(WP, m, s, t, (mpfr_ptr)0);
  mpfr_init2(big, KP);
  for (int k = 0; k < 6; k++) {
    mpe_round_opts o = { det_modes[k], 0, 0, 0, 0 };
    ck_assert_int_eq(mpe_ew_softmax(y, x, rows, cols, f, &o), MPE_OK);
    for (size_t r = 0; r < rows; r++) {
      const float *xr = x + r * cols;
      float mx = -INFINITY;
      for (size_t c = 0; c < cols; c++)
        mx = fmaxf(mx, xr[c]);
      mpfr_set_zero(s, 1);
      for (size_t c = 0; c < cols; c++) {
        mpfr_set_d(t, (double)xr[c] - mx, MPFR_RNDN);
        mpfr_exp(t, t, MPFR_RNDN);
        mpfr_add(s, s, t, MPFR_RNDN);
      }
      for (size_t c = 0; c < cols; c++) {
        mpfr_set_d(t, (double)xr[c] - mx, MPFR_RNDN);
        mpfr_exp(t, t, MPFR_RNDN);
        mpfr_div(t, t, s, MPFR_RNDN);
        mpfr_set(big, t, MPFR_RNDN);
        double want = oracle_round(big, f, det_modes[k]);
        double got = y[r * cols + c];
        total++;
        if (got != want) {
          bad++;
          worst = fmax(worst, ulps(got, want, f));
        }
      }
    }
  }
  mpfr_clears(m, s, t, big, (mpfr_ptr)0);
  fprintf(stderr, "ew softmax %s: %ld results (rows of %zu, 6 modes), %ld not correctly rounded (rate %.2e), worst %.3g ulp\n",
          fmt_names[_i], total, cols, bad, (double)bad / total, worst);
  ck_assert(bad <= total / 10000 + 1 && worst <= 1.0);
  ck_assert(y[5] == 0);
  /* a row with NaN or +inf is NaN; other rows are untouched by it */
  x[cols + 3] = NAN;
  x[2 * cols] = INFINITY;
  mpe_flags_clear(~0u);
  ck_assert_int_eq(mpe_ew_softmax(y, x, 3, cols, f, NULL), MPE_OK);
  ck_assert(mpe_flags_get() & MPE_FLAG_INVALID);
  for (size_t c = 0; c < cols; c++) {
    ck_assert(isnan(y[cols + c]) && isnan(y[2 * cols + c]));
    ck_assert(!isnan(y[c]));
  }
  free(x);
  free(y);
}
END_TEST

/* the same bits at every SIMD level and thread count, stochastic modes included;
   y == x gives the out-of-place result */
START_TEST(test_independence)
{
  const size_t n = 100003;
  const mpe_format *f = mpe_format_of(_i ? MPE_BF16 : MPE_FP16);
  float *x = malloc(n * sizeof *x), *y = malloc(n * sizeof *y), *z = malloc(n * sizeof *z);
  float *ref = malloc(n * sizeof *ref), *out = malloc(n * sizeof *out);
  uint64_t st = ts_seed() ^ 0x1d;
  for (size_t i = 0; i < n; i++) {
    x[i] = rnd_f32(&st, -6, 4);
    y[i] = rnd_f32(&st, -6, 4);
    z[i] = rnd_f32(&st, -6, 4);
  }
  for (int fn = 0; fn < NF; fn++) {
    for (int mode = 0; mode < MPE_NROUND; mode += 3) {   /* RNE, RU, SR */
      mpe_round_opts o = { (mpe_round)mode, 0, 0, 12345, 77 };
      mpe_simd_level_set(0);
#ifdef _OPENMP
      omp_set_num_threads(1);
#endif
      ck_assert_int_eq(call(fn, ref, x, y, z, 1.75f, n, f, &o), MPE_OK);
      for (int lvl = 0; lvl <= 2; lvl++) {
        mpe_simd_level_set(lvl);
#ifdef _OPENMP
        omp_set_num_threads(lvl == 2 ? 2 : 1);
#endif
        ck_assert_int_eq(call(fn, out, x, y, z, 1.75f, n, f, &o), MPE_OK);
        for (size_t i = 0; i < n; i++)
          ck_assert_msg(ts_f2u(out[i]) == ts_f2u(ref[i]), "%s mode %d level %d elem %zu: %a vs %a",
                        fnames[fn], mode, lvl, i, out[i], ref[i]);
      }
      /* in place */
      memcpy(out, x, n * sizeof *x);
      ck_assert_int_eq(call(fn, out, out, y, z, 1.75f, n, f, &o), MPE_OK);
      ck_assert(memcmp(out, ref, n * sizeof *out) == 0);
    }
  }
  mpe_simd_level_set(-1);
  free(x); free(y); free(z); free(ref); free(out);
}
END_TEST

/* ---- the vector kernels against the portable reference path (SIMD level 0):
   the same bits and the same flags for every operation, format, mode and
   option, on random binary32 patterns and on the boundary values of each
   format (zeros, infinities, quiet and signalling NaNs, the overflow and
   underflow thresholds, ties, subnormals, the points where the elementary
   functions switch to their stand-ins) */
static float u2f(uint32_t u) { float f; memcpy(&f, &u, 4); return f; }

static size_t edge_values(float *v, const mpe_format *f)
{
  int p = mpe_format_precision(f), emin = mpe_format_emin(f), emax = mpe_format_emax(f);
  double mx = mpe_format_max(f), mn = ldexp(1.0, emin), ms = ldexp(1.0, emin - p + 1);
  double cand[] = {
    0, 1, 2, 0.5, 3, 0.1, FLT_MAX, FLT_MIN, 0x1p-149, 0x1p-126, 0x1p-133, 0x1p-24, 0x1p-25,
    mx, mx + ldexp(1.0, emax - p), mx + ldexp(1.0, emax - p) * 0.999, mx + ldexp(1.0, emax - p) * 1.001,
    mx * 2, 65504, 65520, 448, 464, 480, 57344, 61440,
    mn, mn - ldexp(1.0, emin - p), mn - ldexp(1.0, emin - p - 1), mn - ldexp(1.0, emin - p - 2), mn * 0.75,
    ms, ms / 2, ms * 0.75, ms * 1.5, ms * 0.25, ms * 2.5, ms / 4,
    1 + ldexp(1.0, -p), 1 + 3 * ldexp(1.0, -p), 1 + ldexp(1.0, -p) + 0x1p-23, 1 + ldexp(1.0, -p) - 0x1p-23,
    1 - ldexp(1.0, -p - 1), 1 - ldexp(1.0, -p - 2),
    709, 709.5, 710, 745, 745.5, 746, 708, 88.72, 103.97, 0x1p-40, 0x1p-41, 0x1p-26, 0x1p-27, 0x1p-45,
    0x1p-46, 0x1p-60, 9.7, 9.69, 37, 36.9, 1e-8, 20, 17.3,
  };
  size_t k = 0;
  for (size_t i = 0; i < sizeof cand / sizeof cand[0]; i++)
    if (cand[i] <= FLT_MAX) {
      v[k++] = (float)cand[i];
      v[k++] = -(float)cand[i];
    }
  v[k++] = INFINITY;
  v[k++] = -INFINITY;
  v[k++] = u2f(0x7fc00000u);   /* quiet NaNs */
  v[k++] = u2f(0xffc00123u);
  v[k++] = u2f(0x7f800001u);   /* signalling NaNs */
  v[k++] = u2f(0xff8000f0u);
  return k;
}

/* an operand: a boundary value, any binary32 pattern, or a value near the format's grid */
static float pick(uint64_t *st, const float *edge, size_t nedge, const mpe_format *f)
{
  uint64_t r = ts_rand64(st);
  int p = mpe_format_precision(f);
  switch (r % 5) {
  case 0: case 1: return edge[(r >> 8) % nedge];
  case 2: return u2f((uint32_t)(r >> 20));
  case 3: {   /* a grid value of f plus a fraction of its quantum: ties and near-ties */
    float g = rnd_f32(st, mpe_format_emin(f) - p - 2, mpe_format_emax(f) + 1);
    if (g == 0 || !isfinite(g))
      return g;   /* ilogbf has no answer for these */
    double q = ldexp(1.0, ilogbf(g) - p + 1);
    double g2 = ldexp(floor(ldexp(fabs(g), -ilogbf(g) + p - 1)), ilogbf(g) - p + 1);
    static const double frac[] = { 0, 0.5, 0.25, 0.75, 0.5 + 0x1p-20, 0.5 - 0x1p-20, 1e-6 };
    double v = (g2 + q * frac[(r >> 8) % 7]) * (g < 0 ? -1 : 1);
    return fabs(v) <= FLT_MAX ? (float)v : g;
  }
  default: return rnd_f32(st, -30, 30);
  }
}

/* a value of magnitude in [2^lo, 2^hi) with a random significand and sign */
static float in_range(uint64_t *st, int lo, int hi)
{
  uint64_t r = ts_rand64(st);
  double v = ldexp(1.0 + (double)((r >> 11) & 0xfffff) * 0x1p-20, lo + (int)((r >> 40) % (uint64_t)(hi - lo)));
  v = fmin(v, FLT_MAX);
  return (float)((r >> 63) ? -v : v);
}

/* Runs of 64 elements of one kind, so that whole vectors take each path of
   the kernels: mixed boundary values; values normal in f; values around f's
   subnormal range; zeros among normal values. */
static void fill_operands(uint64_t *st, float *x, float *y, float *z, size_t n, const mpe_format *f)
{
  float edge[256];
  size_t ne = edge_values(edge, f);
  int p = mpe_format_precision(f), emin = mpe_format_emin(f), emax = mpe_format_emax(f);
  int kind = 0;
  for (size_t i = 0; i < n; i++) {
    if (i % 64 == 0)
      kind = (int)(ts_rand64(st) % 4);
    if (kind == 1 || kind == 3) {
      x[i] = in_range(st, emin + 1, emax - 1);
      y[i] = in_range(st, emin + 1, emax - 1);
      z[i] = in_range(st, emin + 1, emax - 1);
      if (kind == 3 && ts_rand64(st) % 3 == 0)
        x[i] = 0;
      if (kind == 1 && ts_rand64(st) % 2)
        y[i] = x[i] * in_range(st, -p - 3, 1);   /* nearby exponents: sums stay normal */
      continue;
    }
    if (kind == 2) {
      x[i] = in_range(st, emin - p - 1, emin + 2);
      y[i] = in_range(st, emin - p - 1, emin + 2);
      z[i] = in_range(st, emin - p - 1, emin + 2);
      if (ts_rand64(st) % 2)
        y[i] = in_range(st, -2, 2);   /* products and scalings into the subnormal range */
      continue;
    }
    x[i] = pick(st, edge, ne, f);
    y[i] = pick(st, edge, ne, f);
    z[i] = pick(st, edge, ne, f);
    switch (ts_rand64(st) % 8) {
    case 0: y[i] = -x[i]; break;                                            /* exact zero sums */
    case 1: y[i] = -x[i] * (1.0f + ldexpf(1.0f, -(int)(ts_rand64(st) % 24))); break;   /* cancellation */
    case 2: z[i] = -(x[i] * y[i]); break;                                   /* fma cancellation */
    case 3: y[i] = x[i] * ldexpf(1.0f, -(int)(ts_rand64(st) % 60)); break;  /* alignment */
    default: break;
    }
  }
}

static const char *const cmp_formats[] = { "fp16", "bf16", "tf32", "e4m3", "e5m2", "fp32", "p22", "p23", "p5" };
#define NCMP (int)(sizeof cmp_formats / sizeof cmp_formats[0])

static const mpe_format *cmp_format(int k, mpe_format **own)
{
  *own = NULL;
  if (k < 6)
    return mpe_format_lookup(cmp_formats[k]);
  /* custom: the last fast format (p 22), one beyond it (p 23), a tiny range */
  int prec = k == 6 ? 22 : k == 7 ? 23 : 5, emin = k == 8 ? -6 : -126, emax = k == 8 ? 7 : 127;
  ck_assert_int_eq(mpe_format_custom(own, prec, emin, emax), MPE_OK);
  return *own;
}

START_TEST(test_vector_vs_reference)
{
  mpe_format *own;
  const mpe_format *f = cmp_format(_i, &own);
  const size_t n = ts_expensive() ? 40000 : 3001;   /* not a multiple of any vector width */
  float *x = malloc(n * sizeof *x), *y = malloc(n * sizeof *y), *z = malloc(n * sizeof *z);
  float *ref = malloc(n * sizeof *ref), *out = malloc(n * sizeof *out);
  uint64_t st = ts_seed() ^ (0x9e37u * (uint64_t)(_i + 1));
  long compared = 0;
#ifdef _OPENMP
  omp_set_num_threads(1);
#endif
  for (int fn = 0; fn < NF; fn++) {
    fill_operands(&st, x, y, z, n, f);
    float alpha = pick(&st, x, n, f);
    for (int mode = 0; mode < MPE_NROUND; mode++)
      for (int opt = 0; opt < 4; opt++) {
        /* odd offsets put the first element inside a Philox block */
        mpe_round_opts o = { (mpe_round)mode, opt & 1, opt >> 1, ts_rand64(&st), ts_rand64(&st) % 7 };
        mpe_simd_level_set(0);
        mpe_flags_clear(~0u);
        ck_assert_int_eq(call(fn, ref, x, y, z, alpha, n, f, &o), MPE_OK);
        unsigned rfl = mpe_flags_get();
        for (int lvl = 1; lvl <= 2; lvl++) {
          if (mpe_simd_level_set(lvl) != lvl)
            continue;
          mpe_flags_clear(~0u);
          ck_assert_int_eq(call(fn, out, x, y, z, alpha, n, f, &o), MPE_OK);
          unsigned ofl = mpe_flags_get();
          for (size_t i = 0; i < n; i++)   /* ck_assert per element would log every call */
            if (ts_f2u(out[i]) != ts_f2u(ref[i]))
              ck_abort_msg("%s %s %s flush %d sat %d level %d: x=%a y=%a z=%a alpha=%a: %a (0x%08x) vs reference %a (0x%08x)",
                           fnames[fn], mpe_format_name(f), mpe_round_name(o.round), o.flush_subnormals, o.saturate,
                           lvl, x[i], y[i], z[i], alpha, out[i], ts_f2u(out[i]), ref[i], ts_f2u(ref[i]));
          ck_assert_msg(ofl == rfl, "%s %s %s flush %d sat %d level %d: flags 0x%x vs reference 0x%x", fnames[fn],
                        mpe_format_name(f), mpe_round_name(o.round), o.flush_subnormals, o.saturate, lvl, ofl, rfl);
          compared += (long)n;
        }
      }
  }
  fprintf(stderr, "ew vector vs reference %s: %ld results (12 functions x 8 modes x flush/saturate, %zu inputs each): all identical, flags too\n",
          mpe_format_name(f), compared, n);
  mpe_simd_level_set(-1);
  mpe_flags_clear(~0u);
  mpe_format_free(own);
  free(x); free(y); free(z); free(ref); free(out);
}
END_TEST

/* the same over many threads (above the parallel threshold), and softmax */
START_TEST(test_vector_vs_reference_threads)
{
  const mpe_format *f = mpe_format_lookup(_i ? "bf16" : "fp16");
  const size_t n = 40009;
  float *x = malloc(n * sizeof *x), *y = malloc(n * sizeof *y), *z = malloc(n * sizeof *z);
  float *ref = malloc(n * sizeof *ref), *out = malloc(n * sizeof *out);
  uint64_t st = ts_seed() ^ 0x7ead5;
  fill_operands(&st, x, y, z, n, f);
  for (int fn = 0; fn <= NF; fn++)
    for (int mode = 0; mode < MPE_NROUND; mode++) {
      mpe_round_opts o = { (mpe_round)mode, 0, 0, 99, 5 };
      size_t rows = 89, cols = n / 89;
      mpe_simd_level_set(0);
#ifdef _OPENMP
      omp_set_num_threads(1);
#endif
      mpe_flags_clear(~0u);
      if (fn == NF) {   /* softmax (inputs without NaN and +inf, or whole rows are NaN) */
        for (size_t i = 0; i < n; i++)
          if (isnan(x[i]) || x[i] == INFINITY)
            x[i] = 1.5f;
        ck_assert_int_eq(mpe_ew_softmax(ref, x, rows, cols, f, &o), MPE_OK);
      } else {
        ck_assert_int_eq(call(fn, ref, x, y, z, 0.375f, n, f, &o), MPE_OK);
      }
      unsigned rfl = mpe_flags_get();
      int lvl = mpe_simd_level_set(2);
#ifdef _OPENMP
      omp_set_num_threads(3);
#endif
      mpe_flags_clear(~0u);
      if (fn == NF)
        ck_assert_int_eq(mpe_ew_softmax(out, x, rows, cols, f, &o), MPE_OK);
      else
        ck_assert_int_eq(call(fn, out, x, y, z, 0.375f, n, f, &o), MPE_OK);
      ck_assert_msg(memcmp(out, ref, (fn == NF ? rows * cols : n) * sizeof *out) == 0, "%s %s level %d, 3 threads",
                    fn == NF ? "softmax" : fnames[fn], mpe_round_name(o.round), lvl);
      ck_assert_uint_eq(mpe_flags_get(), rfl);
    }
  mpe_simd_level_set(-1);
  mpe_flags_clear(~0u);
  free(x); free(y); free(z); free(ref); free(out);
}
END_TEST

/* stochastic rounding: neighbours only, P(up) = distance (SR) or 1/2 (SR_EQ) */
START_TEST(test_stochastic)
{
  const size_t n = 200000;
  const mpe_format *f = mpe_format_of(MPE_BF16);
  float *x = malloc(n * sizeof *x), *y = malloc(n * sizeof *y), *w = malloc(n * sizeof *w);
  for (size_t i = 0; i < n; i++) {
    x[i] = 1.0f;
    y[i] = 0x1.8p-10f;   /* 1 + 3/16 of a quantum */
  }
  for (int k = 0; k < 2; k++) {
    mpe_round_opts o = { k ? MPE_SR_EQ : MPE_SR, 0, 0, ts_seed(), 0 };
    ck_assert_int_eq(mpe_ew_add(w, x, y, n, f, &o), MPE_OK);
    long up = 0;
    for (size_t i = 0; i < n; i++) {
      ck_assert(w[i] == 1.0f || w[i] == 1.0078125f);
      up += w[i] != 1.0f;
    }
    double p = k ? 0.5 : 3.0 / 16, sd = sqrt(n * p * (1 - p));
    fprintf(stderr, "ew add bf16 %s: %ld/%zu up, expected %.0f (sd %.0f)\n", mpe_round_name(o.round), up, n, n * p, sd);
    ck_assert(fabs(up - n * p) <= 5 * sd);
  }
  /* exp(x) with SR: the mean of many draws approaches the exact value */
  for (size_t i = 0; i < n; i++)
    x[i] = 0.3f;
  mpe_round_opts o = { MPE_SR, 0, 0, ts_seed() + 1, 0 };
  ck_assert_int_eq(mpe_ew_exp(w, x, n, f, &o), MPE_OK);
  double mean = 0;
  for (size_t i = 0; i < n; i++)
    mean += w[i];
  mean /= n;
  double q = 0.0078125, sd = q / 2 / sqrt((double)n);
  fprintf(stderr, "ew exp bf16 sr: mean of %zu draws %.7f, exact %.7f (sd %.1e)\n", n, mean, exp(0.3f), sd);
  ck_assert(fabs(mean - exp((double)0.3f)) <= 5 * sd);
  free(x); free(y); free(w);
}
END_TEST

START_TEST(test_errors_flags)
{
  const mpe_format *h = mpe_format_of(MPE_FP16);
  float x[4] = { 1, 2, 3, 4 }, y[4] = { 9, 9, 9, 9 };
  mpe_round_opts bad = { (mpe_round)8, 0, 0, 0, 0 };
  for (int fn = 0; fn < NF; fn++) {
    ck_assert_int_eq(call(fn, y, x, x, x, 1, 4, NULL, NULL), MPE_EINVAL);
    ck_assert_int_eq(call(fn, y, x, x, x, 1, 4, mpe_format_of(MPE_FP64), NULL), MPE_EINVAL);
    ck_assert_int_eq(call(fn, y, x, x, x, 1, 4, h, &bad), MPE_EINVAL);
    ck_assert_int_eq(call(fn, NULL, x, x, x, 1, 4, h, NULL), MPE_EINVAL);
    ck_assert_int_eq(call(fn, y, NULL, x, x, 1, 4, h, NULL), MPE_EINVAL);
    ck_assert_int_eq(call(fn, NULL, NULL, NULL, NULL, 1, 0, h, NULL), MPE_OK);
    /* counts no array can hold: SIZE_MAX returned 0 without writing, SIZE_MAX / 2 read past x */
    ck_assert_int_eq(call(fn, y, x, x, x, 1, SIZE_MAX, h, NULL), MPE_EINVAL);
    ck_assert_int_eq(call(fn, y, x, x, x, 1, (size_t)PTRDIFF_MAX / sizeof(float) + 1, h, NULL), MPE_EINVAL);
    ck_assert(y[0] == 9 && y[3] == 9);
  }
  ck_assert_int_eq(mpe_ew_add(y, x, NULL, 4, h, NULL), MPE_EINVAL);
  ck_assert_int_eq(mpe_ew_fma(y, x, x, NULL, 4, h, NULL), MPE_EINVAL);
  ck_assert_int_eq(mpe_ew_softmax(NULL, x, 2, 2, h, NULL), MPE_EINVAL);
  ck_assert_int_eq(mpe_ew_softmax(y, x, 2, 2, NULL, NULL), MPE_EINVAL);
  ck_assert_int_eq(mpe_ew_softmax(y, x, SIZE_MAX, 2, h, NULL), MPE_EINVAL);
  ck_assert_int_eq(mpe_ew_softmax(y, x, (size_t)PTRDIFF_MAX / 8 + 1, 2, h, NULL), MPE_EINVAL);
  ck_assert(y[0] == 9);
  ck_assert_int_eq(mpe_ew_softmax(NULL, NULL, 0, 5, h, NULL), MPE_OK);
  /* flags */
  float one = 1, zero = 0, neg = -1, big = 100, inf = INFINITY, r;
  mpe_flags_clear(~0u);
  mpe_ew_recip(&r, &zero, 1, h, NULL);
  ck_assert(r == INFINITY && mpe_flags_get() == MPE_FLAG_DIVBYZERO);
  mpe_flags_clear(~0u);
  mpe_ew_div(&r, &neg, &zero, 1, h, NULL);
  ck_assert(r == -INFINITY && mpe_flags_get() == MPE_FLAG_DIVBYZERO);
  mpe_flags_clear(~0u);
  mpe_ew_log(&r, &zero, 1, h, NULL);
  ck_assert(r == -INFINITY && mpe_flags_get() == MPE_FLAG_DIVBYZERO);
  mpe_flags_clear(~0u);
  mpe_ew_log(&r, &neg, 1, h, NULL);
  ck_assert(isnan(r) && mpe_flags_get() == MPE_FLAG_INVALID);
  mpe_flags_clear(~0u);
  mpe_ew_sqrt(&r, &neg, 1, h, NULL);
  ck_assert(isnan(r) && mpe_flags_get() == MPE_FLAG_INVALID);
  mpe_flags_clear(~0u);
  float minf = -INFINITY;
  mpe_ew_add(&r, &inf, &minf, 1, h, NULL);
  ck_assert(isnan(r) && mpe_flags_get() == MPE_FLAG_INVALID);
  mpe_flags_clear(~0u);
  mpe_ew_exp(&r, &big, 1, h, NULL);
  ck_assert(r == INFINITY && mpe_flags_get() == (MPE_FLAG_OVERFLOW | MPE_FLAG_INEXACT));
  mpe_flags_clear(~0u);
  mpe_ew_exp(&r, &big, 1, h, &(mpe_round_opts){ MPE_RZ, 0, 0, 0, 0 });
  ck_assert(r == 65504);
  mpe_ew_exp(&r, &big, 1, h, &(mpe_round_opts){ MPE_RNE, 0, 1, 0, 0 });
  ck_assert(r == 65504 && (mpe_flags_get() & MPE_FLAG_SATURATED));
  mpe_flags_clear(~0u);
  float mbig = -1000;
  mpe_ew_exp(&r, &mbig, 1, h, &(mpe_round_opts){ MPE_RU, 0, 0, 0, 0 });
  ck_assert(r == 0x1p-24f && mpe_flags_get() == (MPE_FLAG_UNDERFLOW | MPE_FLAG_INEXACT));
  mpe_flags_clear(~0u);
  mpe_ew_exp(&r, &one, 1, h, &(mpe_round_opts){ MPE_RNE, 1, 0, 0, 0 });
  ck_assert(r == 2.71875f);
  /* tiny arguments: directed modes see the side of 1 / of x */
  float tiny = 0x1p-60f, mtiny = -0x1p-60f;
  mpe_ew_exp(&r, &tiny, 1, h, &(mpe_round_opts){ MPE_RU, 0, 0, 0, 0 });
  ck_assert(r == 1.0009765625f);
  mpe_ew_exp(&r, &mtiny, 1, h, &(mpe_round_opts){ MPE_RZ, 0, 0, 0, 0 });
  ck_assert(r == 1.0f - 0x1p-11f);
  mpe_ew_tanh(&r, &tiny, 1, h, &(mpe_round_opts){ MPE_RZ, 0, 0, 0, 0 });
  ck_assert(r == 0);   /* below fp16's range, rounds toward zero */
  float half = 0.5f;
  mpe_ew_tanh(&r, &half, 1, mpe_format_of(MPE_BF16), &(mpe_round_opts){ MPE_RO, 0, 0, 0, 0 });
  ck_assert(r != 0);
  /* exact zero sums: +0, or -0 under RD */
  float a = 1.5f, b = -1.5f;
  mpe_ew_add(&r, &a, &b, 1, h, NULL);
  ck_assert(r == 0 && !signbit(r));
  mpe_ew_add(&r, &a, &b, 1, h, &(mpe_round_opts){ MPE_RD, 0, 0, 0, 0 });
  ck_assert(r == 0 && signbit(r));
  mpe_flags_clear(~0u);
}
END_TEST

/* NaN signs, the invalid flag of NaN propagation, overflow beyond binary32 */
START_TEST(test_nan_overflow_rules)
{
  const mpe_format *bf = mpe_format_of(MPE_BF16);
  float qn = u2f(0x7fc00000u), mqn = u2f(0xffc00000u), one = 1, big = 0x1p100f, inf = INFINITY, minf = -INFINITY, r;
  for (int lvl = 0; lvl <= 2; lvl++) {
    mpe_simd_level_set(lvl);
    /* the sign of the first NaN operand; + for a NaN made from numbers */
    mpe_ew_add(&r, &mqn, &qn, 1, bf, NULL);
    ck_assert_uint_eq(ts_f2u(r), 0xffc00000u);
    mpe_ew_sub(&r, &one, &mqn, 1, bf, NULL);
    ck_assert_uint_eq(ts_f2u(r), 0xffc00000u);
    mpe_ew_fma(&r, &one, &one, &mqn, 1, bf, NULL);
    ck_assert_uint_eq(ts_f2u(r), 0xffc00000u);
    mpe_ew_scale(&r, -NAN, &one, 1, bf, NULL);
    ck_assert_uint_eq(ts_f2u(r), 0xffc00000u);
    mpe_flags_clear(~0u);
    mpe_ew_add(&r, &inf, &minf, 1, bf, NULL);
    ck_assert_uint_eq(ts_f2u(r), 0x7fc00000u);
    ck_assert_uint_eq(mpe_flags_get(), MPE_FLAG_INVALID);
    /* a quiet NaN operand propagates without invalid, in fma too */
    mpe_flags_clear(~0u);
    mpe_ew_fma(&r, &mqn, &one, &one, 1, bf, NULL);
    ck_assert(isnan(r) && signbit(r));
    ck_assert_uint_eq(mpe_flags_get(), 0);
    mpe_ew_exp(&r, &mqn, 1, bf, NULL);
    ck_assert_uint_eq(ts_f2u(r), 0xffc00000u);
    ck_assert_uint_eq(mpe_flags_get(), 0);
    /* signed zeros through whole vectors: alpha = -0, exact zero sums under RD */
    float v[64], w[64], o[64];
    for (int i = 0; i < 64; i++) {
      v[i] = 1.5f + (float)i;
      w[i] = v[i];
    }
    mpe_ew_scale(o, -0.0f, v, 64, bf, NULL);
    for (int i = 0; i < 64; i++)
      ck_assert(o[i] == 0 && signbit(o[i]));
    mpe_ew_sub(o, v, w, 64, bf, &(mpe_round_opts){ MPE_RD, 0, 0, 0, 0 });
    for (int i = 0; i < 64; i++)
      ck_assert(o[i] == 0 && signbit(o[i]));
    mpe_ew_sub(o, v, w, 64, bf, NULL);
    for (int i = 0; i < 64; i++)
      ck_assert(o[i] == 0 && !signbit(o[i]));
    /* 2^200 rounded toward zero: the largest finite value, and overflow (IEEE: the
       result rounded with an unbounded exponent exceeds it) */
    for (int m = MPE_RZ; m <= MPE_RO; m++) {
      mpe_flags_clear(~0u);
      mpe_ew_mul(&r, &big, &big, 1, bf, &(mpe_round_opts){ (mpe_round)m, 0, 0, 0, 0 });
      ck_assert(r == (m == MPE_RU || m == MPE_RNE ? INFINITY : 0x1.fep127f));
      ck_assert_uint_eq(mpe_flags_get(), MPE_FLAG_OVERFLOW | MPE_FLAG_INEXACT);
    }
  }
  mpe_simd_level_set(-1);
  mpe_flags_clear(~0u);
}
END_TEST

/* stochastic element indices offset + i wrap modulo 2^64 in every path */
START_TEST(test_stochastic_index_wrap)
{
  const mpe_format *f = mpe_format_of(MPE_FP16);
  float x[200], y[200], ref[200], out[200];
  uint64_t st = ts_seed() ^ 0x3a9;
  for (int i = 0; i < 200; i++) {
    x[i] = rnd_f32(&st, -4, 4);
    y[i] = rnd_f32(&st, -20, 4);
  }
  for (int k = 0; k < 2; k++) {
    mpe_round_opts o = { k ? MPE_SR_EQ : MPE_SR, 0, 0, 77, UINT64_MAX - 101 };
    mpe_simd_level_set(0);
    ck_assert_int_eq(mpe_ew_add(ref, x, y, 200, f, &o), MPE_OK);
    for (int lvl = 1; lvl <= 2; lvl++) {
      if (mpe_simd_level_set(lvl) != lvl)
        continue;
      ck_assert_int_eq(mpe_ew_add(out, x, y, 200, f, &o), MPE_OK);
      ck_assert(memcmp(out, ref, sizeof out) == 0);
    }
  }
  mpe_simd_level_set(-1);
}
END_TEST

/* ---- the one-pass stochastic kernel (add, sub, mul, scale; p <= 16) */

/* the word of element idx of the stream `seed` (mpemu(3): word idx%4 of the block at counter idx/4) */
static uint32_t sr_word(uint64_t seed, uint64_t idx)
{
  uint32_t key[2] = { (uint32_t)seed, (uint32_t)(seed >> 32) };
  uint32_t ctr[4] = { (uint32_t)(idx / 4), (uint32_t)(idx / 4 >> 32), 0, 0 }, o[4];
  ts_philox4x32(o, ctr, key);
  return o[idx % 4];
}

static const mpe_format *sr_format(int k, mpe_format **own)
{
  static const char *const names[] = { "fp16", "bf16", "tf32", "e4m3", "e5m2" };
  *own = NULL;
  if (k < 5)
    return mpe_format_lookup(names[k]);
  /* the widest format of the one-pass kernel (p 16), and a tiny range */
  ck_assert_int_eq(mpe_format_custom(own, k == 5 ? 16 : 5, k == 5 ? -126 : -6, k == 5 ? 127 : 7), MPE_OK);
  return *own;
}
#define NSRF 7

typedef struct { long d[3], wrapped, halfq; } edge_counts;

/* Sums on the decision boundary: element i, word w, gets the exact value
   x + y = t + q (w + d) / 2^32 with d in {-1, 0, +1} (d = 0 where w + d would
   leave 32 bits), t on the format's grid (quantum q): x = t + ((w + d) >>
   (32 - dd)) ulps of binary32 holds the bits s keeps, y the rest (below one
   ulp, so s = RN(x + y) is x or x plus one ulp with a negative error).
   MPE_SR must round up exactly when d = +1, MPE_SR_EQ exactly when w's top
   bit is set. t: random grid values, the smallest normal and the next one,
   values just below a power of two (with w's top bits all ones, s is the
   power of two and the error negative: the quantum below is half) and the
   top of the range. Negated at random. */
static void sr_edges(float *x, float *y, float *want, float *want_eq, size_t n, const mpe_format *f, uint64_t seed,
                     uint64_t offset, uint64_t *st, edge_counts *c)
{
  const int p = mpe_format_precision(f), emin = mpe_format_emin(f), emax = mpe_format_emax(f);
  const int dd = 24 - p, lowbits = 32 - dd;
  const double mx = mpe_format_max(f);
  const int elo = p - 118 > emin ? p - 118 : emin;   /* y's last bit within binary32's subnormals */
  size_t i = 0;
  while (i < n) {
    int kind = (int)(ts_rand64(st) % 8);
    int e = elo + (int)(ts_rand64(st) % (uint64_t)(emax - elo + 1));
    double q = ldexp(1.0, e - p + 1), t;
    uint64_t m = (1ull << (p - 1)) + ts_rand64(st) % (1ull << (p - 1));
    switch (kind) {
    case 0: q = ldexp(1.0, emin - p + 1); t = ldexp(1.0, emin); break;        /* smallest normal */
    case 1: q = ldexp(1.0, emin - p + 1); t = ldexp(1.0, emin) + q; break;
    case 2: case 3: t = ldexp(2.0, e) - q; break;                             /* below a power of two */
    case 4: q = ldexp(1.0, emax - p + 1); t = mx - q; break;                  /* up gives the largest */
    default: t = (double)m * q; break;
    }
    if (t + q > mx || (kind < 2 && emin < elo))
      continue;
    for (int k = 0; k < 3 && i < n; k++, i++) {
      uint32_t w = sr_word(seed, offset + i);
      int d = k - 1;
      if ((d < 0 && w == 0) || (d > 0 && w == UINT32_MAX))
        d = 0;
      uint64_t v = (uint64_t)w + (uint64_t)(int64_t)d;   /* in [0, 2^32) */
      double ulp = ldexp(q, -dd);
      double xv = t + (double)(v >> lowbits) * ulp, yv = ldexp((double)(v & ((1ull << lowbits) - 1)), -lowbits) * ulp;
      int neg = (ts_rand64(st) & 1) != 0;
      x[i] = (float)(neg ? -xv : xv);
      y[i] = (float)(neg ? -yv : yv);
      ck_assert((double)fabsf(x[i]) == xv && (double)fabsf(y[i]) == yv);
      double up = t + q;
      want[i] = (float)(neg ? -(d > 0 ? up : t) : (d > 0 ? up : t));
      want_eq[i] = (float)(neg ? -((w >> 31) ? up : t) : ((w >> 31) ? up : t));
      c->d[d + 1]++;
      if ((double)fabsf(x[i] + y[i]) == up) {
        c->wrapped++;
        int ex;
        c->halfq += frexp(up, &ex) == 0.5;
      }
    }
  }
}

/* add and sub (of -y) of x, y in SR and SR_EQ at every SIMD level against the
   expectation; returns the results compared */
static long sr_edges_check(const float *x, const float *y, const float *want, const float *want_eq, size_t n,
                           const mpe_format *f, uint64_t seed, uint64_t offset)
{
  long compared = 0;
  float *out = malloc(n * sizeof *out), *ny = malloc(n * sizeof *ny);
  for (size_t j = 0; j < n; j++)
    ny[j] = -y[j];
  for (int k = 0; k < 2; k++) {
    mpe_round_opts o = { k ? MPE_SR_EQ : MPE_SR, 0, 0, seed, offset };
    const float *w = k ? want_eq : want;
    for (int fn = 0; fn < 2; fn++)
      for (int lvl = 0; lvl <= 2; lvl++) {
        if (mpe_simd_level_set(lvl) != lvl)
          continue;
        ck_assert_int_eq(fn ? mpe_ew_sub(out, x, ny, n, f, &o) : mpe_ew_add(out, x, y, n, f, &o), MPE_OK);
        for (size_t j = 0; j < n; j++)
          if (ts_f2u(out[j]) != ts_f2u(w[j]))
            ck_abort_msg("%s %s %s level %d elem %zu: x=%a y=%a word 0x%08x: %a, want %a", fn ? "sub" : "add",
                         mpe_format_name(f), mpe_round_name(o.round), lvl, j, x[j], y[j],
                         sr_word(seed, offset + j), out[j], w[j]);
        compared += (long)n;
      }
  }
  free(out);
  free(ny);
  return compared;
}

START_TEST(test_sr_decision_edges)
{
  mpe_format *own;
  const mpe_format *f = sr_format(_i, &own);
  const int dd = 24 - mpe_format_precision(f);
  const size_t n = 60000, nb = 160;
  float *x = malloc(n * sizeof *x), *y = malloc(n * sizeof *y);
  float *want = malloc(n * sizeof *want), *want_eq = malloc(n * sizeof *want_eq);
  uint64_t st = ts_seed() ^ (0x5e11u + (uint64_t)_i);
  const uint64_t seed = ts_rand64(&st), offset = ts_rand64(&st) % 7;
  edge_counts c = { { 0 }, 0, 0 };
#ifdef _OPENMP
  omp_set_num_threads(1);
#endif
  sr_edges(x, y, want, want_eq, n, f, seed, offset, &st, &c);
  long compared = sr_edges_check(x, y, want, want_eq, n, f, seed, offset);
  /* the wrapped case on purpose: element 37 of a 160-element call (inside the
     vector kernels' first whole block of counters at every width) placed on
     words whose top dd + 1 bits are set, below a power of two a quarter of the
     time */
  int found = 0;
  for (uint64_t j = 64; j < (64ull << 22) && found < 24; j++) {
    uint32_t w = sr_word(seed, j);
    if ((w >> (31 - dd)) != (1u << (dd + 1)) - 1)
      continue;
    found++;
    uint64_t off = j - 37;
    edge_counts c1;
    int tries = 0;
    do {
      memset(&c1, 0, sizeof c1);
      sr_edges(x, y, want, want_eq, nb, f, seed, off, &st, &c1);
    } while (c1.wrapped == 0 && ++tries < 100);
    c.wrapped += c1.wrapped;
    c.halfq += c1.halfq;
    compared += sr_edges_check(x, y, want, want_eq, nb, f, seed, off);
  }
  fprintf(stderr, "ew SR decision edges %s: %ld results (sums with d = -1, 0, +1: %ld, %ld, %ld; %ld wrapped, %ld of "
          "them at a power of two; add and sub, SR and SR_EQ, every SIMD level): all as expected\n",
          mpe_format_name(f), compared, c.d[0], c.d[1], c.d[2], c.wrapped, c.halfq);
  ck_assert(c.wrapped > 0 && c.halfq > 0);
  mpe_simd_level_set(-1);
  mpe_format_free(own);
  free(x); free(y); free(want); free(want_eq);
}
END_TEST

/* The one-pass kernel against the reference path (SIMD level 0: binary64
   value, then mpe_round_f64) on random operands: the boundary mix of
   fill_operands, and runs of ordinary values (a few binades around 1, as a
   network's activations; exponents far apart; cancelling pairs), every format
   of the kernel, add, sub, mul and scale, SR and SR_EQ, results and flags. */
START_TEST(test_sr_one_pass_random)
{
  mpe_format *own;
  const mpe_format *f = sr_format(_i, &own);
  const size_t n = ts_expensive() ? (1u << 20) : (1u << 18);
  float *x = malloc(n * sizeof *x), *y = malloc(n * sizeof *y), *z = malloc(n * sizeof *z);
  float *ref = malloc(n * sizeof *ref), *out = malloc(n * sizeof *out);
  uint64_t st = ts_seed() ^ (0xa11u * (uint64_t)(_i + 3));
  static const int fns[4] = { F_ADD, F_SUB, F_MUL, F_SCALE };
  long compared = 0;
#ifdef _OPENMP
  omp_set_num_threads(1);
#endif
  for (int set = 0; set < 2; set++) {
    if (set == 0) {
      fill_operands(&st, x, y, z, n, f);
    } else {
      for (size_t i = 0; i < n; i++) {
        int kind = (int)((i / 64) % 4);
        x[i] = in_range(&st, -8, 8);
        y[i] = kind == 0 ? in_range(&st, -8, 8)
             : kind == 1 ? in_range(&st, -40, 40)
             : kind == 2 ? -x[i] * (1.0f + ldexpf((float)(ts_rand64(&st) % 256), -(int)(ts_rand64(&st) % 30)))
                         : x[i] * ldexpf(1.0f, -(int)(ts_rand64(&st) % 40));
      }
    }
    for (int k = 0; k < 4; k++)
      for (int mode = MPE_SR; mode <= MPE_SR_EQ; mode++) {
        float alpha = k == 3 ? in_range(&st, -4, 4) : 0.0f;
        mpe_round_opts o = { (mpe_round)mode, 0, 0, ts_rand64(&st), ts_rand64(&st) % 5 };
        mpe_simd_level_set(0);
        mpe_flags_clear(~0u);
        ck_assert_int_eq(call(fns[k], ref, x, y, z, alpha, n, f, &o), MPE_OK);
        unsigned rfl = mpe_flags_get();
        for (int lvl = 1; lvl <= 2; lvl++) {
          if (mpe_simd_level_set(lvl) != lvl)
            continue;
          mpe_flags_clear(~0u);
          ck_assert_int_eq(call(fns[k], out, x, y, z, alpha, n, f, &o), MPE_OK);
          ck_assert_uint_eq(mpe_flags_get(), rfl);
          for (size_t i = 0; i < n; i++)
            if (ts_f2u(out[i]) != ts_f2u(ref[i]))
              ck_abort_msg("%s %s %s level %d elem %zu: x=%a y=%a alpha=%a: %a vs reference %a", fnames[fns[k]],
                           mpe_format_name(f), mpe_round_name(o.round), lvl, i, x[i], y[i], alpha, out[i], ref[i]);
          compared += (long)n;
        }
      }
  }
  fprintf(stderr, "ew SR one pass vs reference %s: %ld results (add, sub, mul, scale x SR, SR_EQ x 2 operand sets "
          "of %zu): all identical, flags too\n", mpe_format_name(f), compared, n);
  mpe_simd_level_set(-1);
  mpe_flags_clear(~0u);
  mpe_format_free(own);
  free(x); free(y); free(z); free(ref); free(out);
}
END_TEST

/* Large |s| with a tiny error (|x| in [2^40, 2^120], |y| far below a binary32
   ulp of x, either sign): the one-pass kernel's scaled error underflows
   binary32; where y points toward zero the exact value lies just below the
   power of two, one step below it for MPE_SR only on the word 2^32 - 1.
   Formats reaching 2^121. */
START_TEST(test_sr_tiny_error)
{
  mpe_format *own;
  const mpe_format *f = sr_format(_i, &own);
  if (mpe_format_emax(f) < 121) {
    mpe_format_free(own);
    return;
  }
  const int p = mpe_format_precision(f);
  const size_t n = 4096;
  float x[4096], y[4096], want[4096], want_eq[4096], out[4096];
  uint64_t st = ts_seed() ^ (0x7153u + (uint64_t)_i);
  const uint64_t seed = ts_rand64(&st), offset = ts_rand64(&st) % 5;
  long compared = 0, below = 0;
  for (size_t i = 0; i < n; i++) {
    int k = 40 + (int)(ts_rand64(&st) % 81), j = 30 + (int)(ts_rand64(&st) % 109);   /* y exact in binary32 */
    int neg = (int)(ts_rand64(&st) & 1), toward = (int)(ts_rand64(&st) & 1);
    double xv = ldexp(1.0, k), yv = ldexp(1.0 + (double)(ts_rand64(&st) % 1024) / 1024, -j);
    uint32_t w = sr_word(seed, offset + i);
    double prev = xv - ldexp(1.0, k - p);   /* the grid value below 2^k */
    double r_sr = toward && w == UINT32_MAX ? prev : xv;
    double r_eq = toward && !(w >> 31) ? prev : xv;
    if (!toward) {   /* just above 2^k: down unless the word is below floor(y / q * 2^32) = 0 */
      r_eq = (w >> 31) ? xv + ldexp(1.0, k - p + 1) : xv;
    }
    below += toward;
    x[i] = (float)(neg ? -xv : xv);
    y[i] = (float)((neg ^ toward) ? -yv : yv);
    want[i] = (float)(neg ? -r_sr : r_sr);
    want_eq[i] = (float)(neg ? -r_eq : r_eq);
  }
  for (int m = 0; m < 2; m++) {
    mpe_round_opts o = { m ? MPE_SR_EQ : MPE_SR, 0, 0, seed, offset };
    for (int lvl = 0; lvl <= 2; lvl++) {
      if (mpe_simd_level_set(lvl) != lvl)
        continue;
      ck_assert_int_eq(mpe_ew_add(out, x, y, n, f, &o), MPE_OK);
      for (size_t i = 0; i < n; i++)
        if (ts_f2u(out[i]) != ts_f2u(m ? want_eq[i] : want[i]))
          ck_abort_msg("add %s %s level %d elem %zu: x=%a y=%a word 0x%08x: %a, want %a", mpe_format_name(f),
                       mpe_round_name(o.round), lvl, i, x[i], y[i], sr_word(seed, offset + i), out[i],
                       m ? want_eq[i] : want[i]);
      compared += (long)n;
    }
  }
  fprintf(stderr, "ew SR tiny error %s: %ld results (%ld of %zu sums just below a power of two): all as expected\n",
          mpe_format_name(f), compared, below, n);
  mpe_simd_level_set(-1);
  mpe_format_free(own);
}
END_TEST

int main(void)
{
  mpfr_set_emax(mpfr_get_emax_max());   /* e^(2^29) is a finite number */
  mpfr_set_emin(mpfr_get_emin_min());
  Suite *s = suite_create("elementwise");
  TCase *mp = tcase_create("mpfr");
  tcase_set_timeout(mp, 600);   /* seconds under the sanitizers; a few here */
  tcase_add_loop_test(mp, test_unary_exhaustive, 0, 2);
  tcase_add_loop_test(mp, test_random_binary32, 0, 5);
  tcase_add_loop_test(mp, test_softmax, 0, 2);
  suite_add_tcase(s, mp);
  TCase *misc = tcase_create("misc");
  tcase_set_timeout(misc, 600);
  tcase_add_loop_test(misc, test_independence, 0, 2);
  tcase_add_loop_test(misc, test_vector_vs_reference, 0, NCMP);
  tcase_add_loop_test(misc, test_vector_vs_reference_threads, 0, 2);
  tcase_add_test(misc, test_stochastic);
  tcase_add_test(misc, test_errors_flags);
  tcase_add_test(misc, test_nan_overflow_rules);
  tcase_add_test(misc, test_stochastic_index_wrap);
  tcase_add_loop_test(misc, test_sr_decision_edges, 0, NSRF);
  tcase_add_loop_test(misc, test_sr_one_pass_random, 0, NSRF);
  tcase_add_loop_test(misc, test_sr_tiny_error, 0, NSRF);
  suite_add_tcase(s, misc);
  return ts_run(s);
}
