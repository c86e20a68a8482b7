/* Beyond one machine: the memory arithmetic against the talk (1 B parameters,
   AMP + Adam = 16 GB) and the ZeRO paper's Table 1; the low-precision
   all-reduce against an MPFR oracle that replays each algorithm's order of
   additions (ties, overflow, cancellation, every deterministic mode, FP8 with
   a scale); the reduction-order study on sums whose every order is known. */
#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <mpfr.h>
#include "testsupport.h"

/* ---------------------------------------------------------------- memory */

static mpe_memory_report mem(double psi, mpe_memory_optimizer o, mpe_memory_precision p, int zero, int gpus)
{
  mpe_memory_config c = { psi, o, p, zero, gpus, 0 };
  mpe_memory_report r;
  ck_assert_int_eq(mpe_memory_estimate(&r, &c), MPE_OK);
  return r;
}

/* the talk: 1e9 parameters, 2 bytes of weights, 2 of gradients, 12 of optimizer state */
START_TEST(test_memory_talk)
{
  for (int p = MPE_PREC_AMP_FP16; p <= MPE_PREC_AMP_BF16; p++) {
    mpe_memory_report r = mem(1e9, MPE_OPT_ADAM, (mpe_memory_precision)p, 0, 1);
    ck_assert(r.weights == 2e9 && r.gradients == 2e9);
    ck_assert(r.master == 4e9 && r.optimizer == 8e9 && r.k == 12);
    ck_assert(r.total == 16e9);
  }
  mpe_memory_report r = mem(1e9, MPE_OPT_ADAM, MPE_PREC_FP32, 0, 1);
  ck_assert(r.total == 16e9 && r.master == 0 && r.weights == 4e9);   /* 4 + 4 + 8 */
  r = mem(1e9, MPE_OPT_SGD, MPE_PREC_AMP_FP16, 0, 1);
  ck_assert(r.total == 12e9 && r.k == 8);
  r = mem(1e9, MPE_OPT_ADAFACTOR, MPE_PREC_AMP_BF16, 0, 1);
  ck_assert(r.total == 8e9 && r.k == 4);
  r = mem(1e9, MPE_OPT_ADAM, MPE_PREC_FP8, 0, 1);
  ck_assert(r.total == 14e9 && r.weights == 1e9 && r.gradients == 1e9);
}
END_TEST

/* ZeRO (Rajbhandari et al. 2020), Table 1, 7.5 B parameters, K = 12: the
   paper prints GB = 10^9 bytes to one decimal (two for 0.12) */
START_TEST(test_memory_zero_table)
{
  static const struct { int gpus; double gb[4]; double printed[4]; double scale; } rows[] = {
    { 64, { 120, 31.40625, 16.640625, 1.875 }, { 120, 31.4, 16.6, 1.9 }, 10 },
    { 1024, { 120, 30.087890625, 15.1025390625, 0.1171875 }, { 120, 30.1, 15.1, 0.12 }, 0 },
    { 1, { 120, 120, 120, 120 }, { 120, 120, 120, 120 }, 10 },
  };
  for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++)
    for (int z = 0; z < 4; z++) {
      mpe_memory_report r = mem(7.5e9, MPE_OPT_ADAM, MPE_PREC_AMP_FP16, z, rows[i].gpus);
      ck_assert_msg(fabs(r.total - rows[i].gb[z] * 1e9) <= 1e-6 * r.total, "Nd %d stage %d: %.17g",
                    rows[i].gpus, z, r.total);
      double sc = rows[i].scale ? rows[i].scale : (z == 3 ? 100 : 10);
      ck_assert_msg(round(r.total / 1e9 * sc) / sc == rows[i].printed[z], "Nd %d stage %d printed", rows[i].gpus, z);
    }
  /* stage by stage, what is divided */
  mpe_memory_report r = mem(7.5e9, MPE_OPT_ADAM, MPE_PREC_AMP_FP16, 2, 64);
  ck_assert(r.weights == 15e9 && r.gradients == 15e9 / 64 && r.master == 30e9 / 64 && r.optimizer == 60e9 / 64);
}
END_TEST

START_TEST(test_memory_activations)
{
  double b = 0;
  /* 1 layer, s = 2, b = 1, h = 4, a = 2: 2*1*4*(34 + 5*2*2/4) = 8*39 = 312 */
  ck_assert_int_eq(mpe_memory_activations(&b, 2, 1, 4, 1, 2), MPE_OK);
  ck_assert(b == 312);
  mpe_memory_config c = { 1e9, MPE_OPT_ADAM, MPE_PREC_AMP_FP16, 3, 8, 5e9 };
  mpe_memory_report r;
  ck_assert_int_eq(mpe_memory_estimate(&r, &c), MPE_OK);
  ck_assert(r.activations == 5e9 && r.total == 16e9 / 8 + 5e9);
}
END_TEST

START_TEST(test_memory_errors)
{
  mpe_memory_report r;
  mpe_memory_config ok = { 1e9, MPE_OPT_ADAM, MPE_PREC_AMP_FP16, 0, 1, 0 }, c;
  ck_assert_int_eq(mpe_memory_estimate(NULL, &ok), MPE_EINVAL);
  ck_assert_int_eq(mpe_memory_estimate(&r, NULL), MPE_EINVAL);
  c = ok; c.params = 0; ck_assert_int_eq(mpe_memory_estimate(&r, &c), MPE_EINVAL);
  c = ok; c.params = NAN; ck_assert_int_eq(mpe_memory_estimate(&r, &c), MPE_EINVAL);
  c = ok; c.zero = 4; ck_assert_int_eq(mpe_memory_estimate(&r, &c), MPE_EINVAL);
  c = ok; c.zero = -1; ck_assert_int_eq(mpe_memory_estimate(&r, &c), MPE_EINVAL);
  c = ok; c.gpus = 0; ck_assert_int_eq(mpe_memory_estimate(&r, &c), MPE_EINVAL);
  c = ok; c.activations = -1; ck_assert_int_eq(mpe_memory_estimate(&r, &c), MPE_EINVAL);
  c = ok; c.optimizer = (mpe_memory_optimizer)3; ck_assert_int_eq(mpe_memory_estimate(&r, &c), MPE_EINVAL);
  c = ok; c.precision = (mpe_memory_precision)4; ck_assert_int_eq(mpe_memory_estimate(&r, &c), MPE_EINVAL);
  double b;
  ck_assert_int_eq(mpe_memory_activations(&b, 0, 1, 1, 1, 1), MPE_EINVAL);
  ck_assert_int_eq(mpe_memory_activations(NULL, 1, 1, 1, 1, 1), MPE_EINVAL);
  for (int i = 0; i < MPE_MEMORY_NOPTIMIZERS; i++)
    ck_assert_int_eq(mpe_memory_optimizer_lookup(mpe_memory_optimizer_name((mpe_memory_optimizer)i)), i);
  for (int i = 0; i < MPE_MEMORY_NPRECISIONS; i++)
    ck_assert_int_eq(mpe_memory_precision_lookup(mpe_memory_precision_name((mpe_memory_precision)i)), i);
  ck_assert_int_eq(mpe_memory_optimizer_lookup("lamb"), -1);
  ck_assert_ptr_null(mpe_memory_precision_name((mpe_memory_precision)9));
}
END_TEST

/* ------------------------------------------------------ the MPFR oracle */

/* exact a + b + ... rounded to binary64 by round-to-odd (the reference for
   error statistics in binary64) */
static double mpfr_sum_ro(const double *v, size_t n)
{
  mpfr_t s;
  mpfr_init2(s, 1200);
  mpfr_set_zero(s, 1);
  for (size_t i = 0; i < n; i++)
    ck_assert_int_eq(mpfr_add_d(s, s, v[i], MPFR_RNDN), 0);   /* exact */
  double d = mpfr_get_d(s, MPFR_RNDZ);
  if (mpfr_cmp_d(s, d) != 0)
    d = ts_u2d(ts_d2u(d) | 1);
  mpfr_clear(s);
  return d;
}

static double oracle_round(double x, const mpe_format *f, mpe_round r)
{
  ts_fmt g = ts_fmt_of(f);
  return ts_round_mpfr_d(x, &g, r);
}

/* the exact v[0] + ... + v[n-1] rounded once to f */
static double oracle_sum(const double *v, size_t n, const mpe_format *f, mpe_round r)
{
  mpfr_t s;
  mpfr_init2(s, 1200);
  mpfr_set_zero(s, 1);
  for (size_t i = 0; i < n; i++)
    ck_assert_int_eq(mpfr_add_d(s, s, v[i], MPFR_RNDN), 0);   /* exact */
  ts_fmt g = ts_fmt_of(f);
  double d = ts_round_mpfr(s, &g, r, 0, NULL);
  mpfr_clear(s);
  return d;
}

/* a + b rounded once to f; inf/NaN follow IEEE */
static double oracle_add(double a, double b, const mpe_format *f, mpe_round r)
{
  if (!isfinite(a) || !isfinite(b))
    return a + b;
  if (a == -b)   /* an exact zero: IEEE 754 6.3, -0 only toward -inf (or -0 + -0) */
    return (a == 0 && signbit(a) && signbit(b)) || r == MPE_RD ? -0.0 : 0.0;
  double v[2] = { a, b };
  return oracle_sum(v, 2, f, r);
}

/* the algorithms' orders, replayed value by value */
static void oracle_allreduce(double *out, double **x, size_t N, size_t n, mpe_allreduce_algo a,
                             const mpe_format *f, mpe_round r)
{
  double *t = malloc(N * sizeof *t);
  for (size_t i = 0; i < n; i++) {
    for (size_t w = 0; w < N; w++)
      t[w] = x[w][i];
    double s = 0;
    if (a == MPE_ALLREDUCE_NAIVE) {
      s = t[0];
      for (size_t w = 1; w < N; w++)
        s = oracle_add(s, t[w], f, r);
    } else if (a == MPE_ALLREDUCE_TREE) {
      for (size_t d = 1; d < N; d *= 2)
        for (size_t w = 0; w + d < N; w += 2 * d)
          t[w] = oracle_add(t[w], t[w + d], f, r);
      s = t[0];
    } else {
      /* the chunk holding i: c*n/N <= i < (c+1)*n/N; it starts at rank c */
      size_t c = 0;
      while (!((c * n) / N <= i && i < ((c + 1) * n) / N))
        c++;
      s = t[c];
      for (size_t k = 1; k < N; k++)
        s = oracle_add(s, t[(c + k) % N], f, r);
    }
    out[i] = s;
  }
  free(t);
}

/* values that make ties and overflow likely in format f: small multiples of
   powers of two around 1, around ulp-sized steps of a big value, and near max */
static float tricky(uint64_t *st, const mpe_format *f)
{
  int p = mpe_format_precision(f);
  double mx = mpe_format_max(f);
  uint64_t r = ts_rand64(st);
  double sign = (r & 1) ? -1 : 1;
  switch ((r >> 1) % 5) {
  case 0:   /* k * 2^j around 1 */
    return (float)(sign * (double)((r >> 8) % 16 + 1) * ldexp(1.0, (int)((r >> 16) % 7) - 3));
  case 1:   /* 2^p plus half-ulp steps: sums land on ties */
    return (float)(sign * (ldexp(1.0, p) + (double)((r >> 8) % 4)));
  case 2:   /* half of an ulp of 2^p */
    return (float)(sign * 0.5 * (double)((r >> 8) % 3 + 1));
  case 3:   /* near the largest finite */
    return (float)(sign * mx * (0.5 + 0.125 * (double)((r >> 8) % 4)));
  default:  /* small, subnormal in the narrow formats */
    return (float)(sign * mpe_format_min_normal(f) * (double)((r >> 8) % 5) * 0.25);
  }
}

static const char *const ar_formats[] = { "fp32", "fp16", "bf16", "e4m3", "e5m2" };
static const mpe_round ar_modes[] = { MPE_RNE, MPE_RNA, MPE_RZ, MPE_RU, MPE_RD, MPE_RO };

/* every algorithm x format x deterministic mode x N = 1..9 against the oracle,
   bit for bit; and the error statistics against the oracle's exact sums */
START_TEST(test_allreduce_oracle)
{
  const mpe_format *f = mpe_format_lookup(ar_formats[_i]);
  uint64_t st = ts_seed() + 77 * (uint64_t)_i;
  const size_t n = 11;
  size_t cases = 0;
  uint64_t total_nr = 0, total_nf = 0;
  for (size_t m = 0; m < sizeof ar_modes / sizeof ar_modes[0]; m++)
    for (size_t N = 1; N <= 9; N++) {
      float *in[9];
      double *xd[9];
      for (size_t w = 0; w < N; w++) {
        in[w] = malloc(n * sizeof(float));
        xd[w] = malloc(n * sizeof(double));
        for (size_t i = 0; i < n; i++) {
          in[w][i] = tricky(&st, f);
          xd[w][i] = oracle_round(in[w][i], f, ar_modes[m]);   /* the cast */
        }
      }
      for (int a = 0; a < MPE_ALLREDUCE_NALGOS; a++) {
        mpe_allreduce_opts o;
        memset(&o, 0, sizeof o);
        o.algo = (mpe_allreduce_algo)a;
        o.format = f;
        o.round.round = ar_modes[m];
        float out[11];
        double want[11];
        mpe_allreduce_stats s;
        ck_assert_int_eq(mpe_allreduce_f32(out, (const float *const *)in, N, n, &o, &s), MPE_OK);
        oracle_allreduce(want, xd, N, n, o.algo, f, ar_modes[m]);
        uint64_t not_rounded = 0, nonfinite = 0;
        for (size_t i = 0; i < n; i++) {
          ck_assert_msg(ts_same_f64(out[i], want[i]), "%s %s %s N=%zu i=%zu: %a, oracle %a",
                        ar_formats[_i], mpe_round_name(ar_modes[m]), mpe_allreduce_algo_name(o.algo),
                        N, i, out[i], want[i]);
          double col[9];
          int fin = 1;
          for (size_t w = 0; w < N; w++) {
            col[w] = xd[w][i];
            fin &= isfinite(col[w]);
          }
          if (!fin || !isfinite(want[i])) {
            nonfinite++;
            continue;
          }
          double cr = oracle_sum(col, N, f, ar_modes[m]);
          not_rounded += !(want[i] == cr);
        }
        ck_assert_uint_eq(s.nonfinite, nonfinite);
        ck_assert_uint_eq(s.not_rounded, not_rounded);
        ck_assert_uint_eq(s.workers, N);
        total_nr += not_rounded;
        total_nf += nonfinite;
        /* mpe_allreduce_error on the finished sums says the same */
        mpe_allreduce_stats s2;
        ck_assert_int_eq(mpe_allreduce_error(&s2, out, (const float *const *)in, N, n, &o), MPE_OK);
        ck_assert_uint_eq(s2.not_rounded, s.not_rounded);
        ck_assert(s2.max_ulps == s.max_ulps && s2.max_abs_err == s.max_abs_err);
        cases++;
      }
      for (size_t w = 0; w < N; w++) {
        free(in[w]);
        free(xd[w]);
      }
    }
  ck_assert_uint_eq(cases, 6 * 9 * 3);
  /* the data reach what they are made for: sums that are not the rounded
     exact sum, and overflow */
  ck_assert_msg(total_nr > 50 && total_nf > 20, "%s: %llu not rounded, %llu overflowed", ar_formats[_i],
                (unsigned long long)total_nr, (unsigned long long)total_nf);
}
END_TEST

/* N = 3 workers, n = 3 (one element per ring chunk), fp16, each element
   x = (2048, 1, 1): exact 2050. Naive and tree add 2048 + 1 first (a tie,
   to even 2048) twice: 2048. Ring chunk 0 starts at rank 0 (the same), chunk 1
   at rank 1: (1 + 1) + 2048 = 2050, chunk 2 at rank 2: (1 + 2048) + 1 = 2048. */
START_TEST(test_allreduce_schedule)
{
  float w0[3] = { 2048, 2048, 2048 }, w1[3] = { 1, 1, 1 }, w2[3] = { 1, 1, 1 };
  const float *in[3] = { w0, w1, w2 };
  mpe_allreduce_opts o;
  memset(&o, 0, sizeof o);
  o.format = mpe_format_of(MPE_FP16);
  float out[3];
  mpe_allreduce_stats s;
  o.algo = MPE_ALLREDUCE_RING;
  ck_assert_int_eq(mpe_allreduce_f32(out, in, 3, 3, &o, &s), MPE_OK);
  ck_assert(out[0] == 2048 && out[1] == 2050 && out[2] == 2048);
  ck_assert_uint_eq(s.not_rounded, 2);
  ck_assert(s.max_ulps == 1 && s.max_abs_err == 2 && s.max_rel_err == 2.0 / 2050);
  o.algo = MPE_ALLREDUCE_NAIVE;
  ck_assert_int_eq(mpe_allreduce_f32(out, in, 3, 3, &o, &s), MPE_OK);
  ck_assert(out[0] == 2048 && out[1] == 2048 && out[2] == 2048);
  ck_assert_uint_eq(s.not_rounded, 3);
  /* tree over 4 workers (2048, 1, 1, 0): (2048 + 1) + (1 + 0) = 2048 + 1 = 2048 ...
     and over (1, 1, 2048, 0): (1 + 1) + (2048 + 0) = 2050 */
  float z[3] = { 0, 0, 0 };
  const float *in4[4] = { w1, w2, w0, z };
  o.algo = MPE_ALLREDUCE_TREE;
  ck_assert_int_eq(mpe_allreduce_f32(out, in4, 4, 3, &o, &s), MPE_OK);
  ck_assert(out[0] == 2050 && out[1] == 2050 && out[2] == 2050);
  ck_assert_uint_eq(s.not_rounded, 0);
  /* chunks: sizes differ by at most one, cover [0, n) */
  size_t b, e, prev = 0;
  for (size_t c = 0; c < 7; c++) {
    mpe_allreduce_chunk(20, 7, c, &b, &e);
    ck_assert_uint_eq(b, prev);
    ck_assert(e - b == 2 || e - b == 3);
    prev = e;
  }
  ck_assert_uint_eq(prev, 20);
}
END_TEST

/* overflow and cancellation in binary32: (max, max, -max) overflows in the
   naive and tree orders; the ring's chunks 1 and 2 start at ranks 1 and 2
   and add max + -max first; and
   (1e30, 2^-149, -1e30): the naive order loses the tiny term entirely */
START_TEST(test_allreduce_overflow)
{
  float a[3] = { FLT_MAX, FLT_MAX, FLT_MAX }, b[3] = { FLT_MAX, FLT_MAX, FLT_MAX },
        c[3] = { -FLT_MAX, -FLT_MAX, -FLT_MAX };
  const float *in[3] = { a, b, c };
  mpe_allreduce_opts o;
  memset(&o, 0, sizeof o);
  float out[3];
  mpe_allreduce_stats s;
  o.algo = MPE_ALLREDUCE_NAIVE;
  ck_assert_int_eq(mpe_allreduce_f32(out, in, 3, 3, &o, &s), MPE_OK);
  ck_assert(isinf(out[0]) && isinf(out[1]) && isinf(out[2]));
  ck_assert_uint_eq(s.nonfinite, 3);
  o.algo = MPE_ALLREDUCE_RING;
  ck_assert_int_eq(mpe_allreduce_f32(out, in, 3, 3, &o, &s), MPE_OK);
  ck_assert(isinf(out[0]) && out[1] == FLT_MAX && out[2] == FLT_MAX);
  ck_assert_uint_eq(s.nonfinite, 1);
  ck_assert(s.max_abs_err == 0 && s.not_rounded == 0);
  o.round.round = MPE_RZ;   /* toward zero: max + max stays max */
  o.algo = MPE_ALLREDUCE_NAIVE;
  ck_assert_int_eq(mpe_allreduce_f32(out, in, 3, 3, &o, &s), MPE_OK);
  ck_assert(out[0] == 0 && s.nonfinite == 0);   /* RZ(max+max) = max, max - max = 0 */
  ck_assert(s.max_abs_err == FLT_MAX && s.max_rel_err == 1);

  float x[1] = { 1e30f }, y[1] = { 0x1p-149f }, z[1] = { -1e30f };
  const float *in2[3] = { x, y, z };
  memset(&o, 0, sizeof o);
  o.algo = MPE_ALLREDUCE_NAIVE;
  ck_assert_int_eq(mpe_allreduce_f32(out, in2, 3, 1, &o, &s), MPE_OK);
  ck_assert(out[0] == 0 && s.max_abs_err == 0x1p-149 && s.max_rel_err == 1 && s.not_rounded == 1);
  ck_assert(s.max_ulps == 1);
  const float *in3[3] = { x, z, y };
  ck_assert_int_eq(mpe_allreduce_f32(out, in3, 3, 1, &o, &s), MPE_OK);
  ck_assert(out[0] == 0x1p-149f && s.max_abs_err == 0 && s.not_rounded == 0);
}
END_TEST

/* FP8 with a scale: gradients of order 1e-3 vanish in e4m3 without a scale
   and survive with 2^10; the output is unscaled. out may alias in[0]. */
START_TEST(test_allreduce_fp8_scale)
{
  const size_t N = 4, n = 64;
  float *in[4];
  uint64_t st = ts_seed();
  for (size_t w = 0; w < N; w++) {
    in[w] = malloc(n * sizeof(float));
    for (size_t i = 0; i < n; i++)
      in[w][i] = (float)(1e-3 * ((double)(ts_rand64(&st) % 2001) / 1000.0 - 1.0));
  }
  mpe_allreduce_opts o;
  memset(&o, 0, sizeof o);
  o.algo = MPE_ALLREDUCE_RING;
  o.format = mpe_format_of(MPE_E4M3);
  float out0[64], out1[64];
  mpe_allreduce_stats s0, s1;
  ck_assert_int_eq(mpe_allreduce_f32(out0, (const float *const *)in, N, n, &o, &s0), MPE_OK);
  o.scale = 1024;
  ck_assert_int_eq(mpe_allreduce_f32(out1, (const float *const *)in, N, n, &o, &s1), MPE_OK);
  ck_assert_msg(s1.rms_err < s0.rms_err / 4, "rms %g (scaled) vs %g", s1.rms_err, s0.rms_err);
  /* against the oracle: cast round(1024 x), ring order, out = sum / 1024 */
  double *xd[4], want[64];
  for (size_t w = 0; w < N; w++) {
    xd[w] = malloc(n * sizeof(double));
    for (size_t i = 0; i < n; i++)
      xd[w][i] = oracle_round(1024.0 * in[w][i], o.format, MPE_RNE);
  }
  oracle_allreduce(want, xd, N, n, MPE_ALLREDUCE_RING, o.format, MPE_RNE);
  for (size_t i = 0; i < n; i++)
    ck_assert(out1[i] == (float)(want[i] / 1024));
  /* in place */
  float *keep = malloc(n * sizeof *keep);
  memcpy(keep, in[0], n * sizeof *keep);
  ck_assert_int_eq(mpe_allreduce_f32(in[0], (const float *const *)in, N, n, &o, NULL), MPE_OK);
  ck_assert_mem_eq(in[0], out1, n * sizeof(float));
  free(keep);
  for (size_t w = 0; w < N; w++) {
    free(in[w]);
    free(xd[w]);
  }
}
END_TEST

/* stochastic rounding: every sum is one of the two format neighbours of
   its exact value when N = 2 (one addition); reproducible from the seed */
START_TEST(test_allreduce_sr)
{
  const size_t N = 5, n = 257;
  float *in[5];
  uint64_t st = ts_seed() ^ 5;
  for (size_t w = 0; w < N; w++) {
    in[w] = malloc(n * sizeof(float));
    for (size_t i = 0; i < n; i++)
      in[w][i] = (float)((double)(ts_rand64(&st) >> 11) * 0x1p-53 - 0.5);
  }
  mpe_allreduce_opts o;
  memset(&o, 0, sizeof o);
  o.algo = MPE_ALLREDUCE_RING;
  o.format = mpe_format_of(MPE_BF16);
  o.round.round = MPE_SR;
  o.round.seed = 42;
  float a[257], b[257];
  mpe_allreduce_stats s;
  ck_assert_int_eq(mpe_allreduce_f32(a, (const float *const *)in, 2, n, &o, &s), MPE_OK);
  ck_assert_uint_eq(s.not_rounded, 0);
  ck_assert_int_eq(mpe_allreduce_f32(a, (const float *const *)in, N, n, &o, &s), MPE_OK);
  ck_assert_int_eq(mpe_allreduce_f32(b, (const float *const *)in, N, n, &o, NULL), MPE_OK);
  ck_assert_mem_eq(a, b, sizeof a);
  o.round.seed = 43;
  ck_assert_int_eq(mpe_allreduce_f32(b, (const float *const *)in, N, n, &o, NULL), MPE_OK);
  ck_assert(memcmp(a, b, sizeof a) != 0);
  for (size_t w = 0; w < N; w++)
    free(in[w]);
}
END_TEST

START_TEST(test_allreduce_errors)
{
  float a[2] = { 1, 2 }, out[2];
  const float *in[2] = { a, NULL };
  mpe_allreduce_opts o;
  memset(&o, 0, sizeof o);
  ck_assert_int_eq(mpe_allreduce_f32(out, in, 2, 2, &o, NULL), MPE_EINVAL);   /* NULL worker */
  in[1] = a;
  ck_assert_int_eq(mpe_allreduce_f32(out, in, 0, 2, &o, NULL), MPE_EINVAL);
  ck_assert_int_eq(mpe_allreduce_f32(NULL, in, 2, 2, &o, NULL), MPE_EINVAL);
  ck_assert_int_eq(mpe_allreduce_f32(out, in, 2, 2, NULL, NULL), MPE_EINVAL);
  o.scale = -1;
  ck_assert_int_eq(mpe_allreduce_f32(out, in, 2, 2, &o, NULL), MPE_EINVAL);
  o.scale = NAN;
  ck_assert_int_eq(mpe_allreduce_f32(out, in, 2, 2, &o, NULL), MPE_EINVAL);
  o.scale = 0;
  o.format = mpe_format_of(MPE_FP64);
  ck_assert_int_eq(mpe_allreduce_f32(out, in, 2, 2, &o, NULL), MPE_EINVAL);
  o.format = NULL;
  o.algo = (mpe_allreduce_algo)3;
  ck_assert_int_eq(mpe_allreduce_f32(out, in, 2, 2, &o, NULL), MPE_EINVAL);
  o.algo = MPE_ALLREDUCE_RING;
  o.round.round = (mpe_round)8;
  ck_assert_int_eq(mpe_allreduce_f32(out, in, 2, 2, &o, NULL), MPE_EINVAL);
  o.round.round = MPE_RNE;
  ck_assert_int_eq(mpe_allreduce_error(NULL, out, in, 2, 2, &o), MPE_EINVAL);
  ck_assert_int_eq(mpe_allreduce_f32(out, in, 2, 2, &o, NULL), MPE_OK);
  ck_assert(out[0] == 2 && out[1] == 4);
  for (int i = 0; i < MPE_ALLREDUCE_NALGOS; i++)
    ck_assert_int_eq(mpe_allreduce_algo_lookup(mpe_allreduce_algo_name((mpe_allreduce_algo)i)), i);
  ck_assert_int_eq(mpe_allreduce_algo_lookup("butterfly"), -1);
}
END_TEST

/* ----------------------------------------------------- reduction order */

/* (2^24, 1, 1) in binary32: an order that adds 2^24 before both ones ties
   twice to even and gives 2^24; the two orders that add the ones first (2^24
   last) give 2^24 + 2, the exact sum. So 1/3 of random orders differ from the
   sequential 2^24, by one ulp. */
START_TEST(test_order_known)
{
  float x[3] = { 0x1p24f, 1, 1 };
  mpe_order_opts o;
  memset(&o, 0, sizeof o);
  o.trials = 600;
  o.seed = ts_seed();
  o.splits = 3;
  mpe_order_stats s;
  ck_assert_int_eq(mpe_order_study(&s, x, 1, 3, &o), MPE_OK);
  ck_assert_uint_eq(s.results, 600);
  ck_assert_msg(s.differ >= 140 && s.differ <= 260, "differ %llu of 600", (unsigned long long)s.differ);
  ck_assert_uint_eq(s.dev_hist[1], s.differ);
  ck_assert_uint_eq(s.dev_hist[0], 600 - s.differ);
  ck_assert(s.max_spread_ulps == 1 && s.rows_spread == 1);
  ck_assert(s.seq_max_err_ulps == 1 && s.random_max_err_ulps == 1);
  ck_assert_uint_eq(s.splitk_differ, 0);      /* (2^24 + 1) + 1 */
  o.splits = 2;                                /* 2^24 + (1 + 1) */
  mpe_order_stats s2;
  ck_assert_int_eq(mpe_order_study(&s2, x, 1, 3, &o), MPE_OK);
  ck_assert(s2.splitk_differ == 1 && s2.splitk_max_ulps == 1);
  ck_assert_uint_eq(s2.differ, s.differ);      /* same seed, same orders */
  /* exact sums (small integers) never move */
  float y[64];
  for (int i = 0; i < 64; i++)
    y[i] = (float)(i % 8 + 1);
  ck_assert_int_eq(mpe_order_study(&s, y, 4, 16, &o), MPE_OK);
  ck_assert(s.differ == 0 && s.max_spread_ulps == 0 && s.seq_max_err_ulps == 0 && s.splitk_differ == 0);
  ck_assert_uint_eq(s.dev_hist[0], 4 * 600);
}
END_TEST

/* the sequential sums of random bf16 rows against the MPFR replay, and the
   study's error figures against exact sums */
START_TEST(test_order_oracle)
{
  const size_t rows = 16, len = 40;
  float *x = malloc(rows * len * sizeof *x);
  uint64_t st = ts_seed() + 9;
  for (size_t i = 0; i < rows * len; i++)
    x[i] = (float)((double)(ts_rand64(&st) >> 11) * 0x1p-53 * ((i & 1) ? 3.0 : -2.0));
  const mpe_format *f = mpe_format_of(MPE_BF16);
  for (size_t m = 0; m < sizeof ar_modes / sizeof ar_modes[0]; m++) {
    mpe_order_opts o;
    memset(&o, 0, sizeof o);
    o.format = f;
    o.round.round = ar_modes[m];
    o.trials = 20;
    mpe_order_stats s;
    ck_assert_int_eq(mpe_order_study(&s, x, rows, len, &o), MPE_OK);
    double worst = 0;
    for (size_t r = 0; r < rows; r++) {
      double acc = oracle_round(x[r * len], f, ar_modes[m]), v[40];
      for (size_t j = 1; j < len; j++)
        acc = oracle_add(acc, x[r * len + j], f, ar_modes[m]);
      for (size_t j = 0; j < len; j++)
        v[j] = x[r * len + j];
      double ex = mpfr_sum_ro(v, len);
      int e = ilogb(ex);
      if (e < mpe_format_emin(f))
        e = mpe_format_emin(f);
      double err = fabs(acc - ex) / ldexp(1.0, e - mpe_format_precision(f) + 1);
      if (err > worst)
        worst = err;
    }
    ck_assert_msg(fabs(s.seq_max_err_ulps - worst) <= 1e-9 * worst, "%s: %.17g vs oracle %.17g",
                  mpe_round_name(ar_modes[m]), s.seq_max_err_ulps, worst);
    ck_assert(s.differ > 0 && s.share_differ > 0.1);   /* 40 terms in bf16 do move */
  }
  free(x);
}
END_TEST

START_TEST(test_order_errors)
{
  float x[2] = { 1, NAN };
  mpe_order_opts o;
  memset(&o, 0, sizeof o);
  mpe_order_stats s;
  ck_assert_int_eq(mpe_order_study(&s, x, 1, 2, &o), MPE_ERANGE);
  ck_assert_int_eq(mpe_order_study(&s, x, 1, 0, &o), MPE_EINVAL);
  ck_assert_int_eq(mpe_order_study(NULL, x, 1, 1, &o), MPE_EINVAL);
  ck_assert_int_eq(mpe_order_study(&s, x, 1, 1, NULL), MPE_EINVAL);
  o.format = mpe_format_of(MPE_FP64);
  ck_assert_int_eq(mpe_order_study(&s, x, 1, 1, &o), MPE_EINVAL);
  o.format = NULL;
  ck_assert_int_eq(mpe_order_study(&s, x, 1, 1, &o), MPE_OK);
  ck_assert(s.trials == 100 && s.splits == 1 && s.differ == 0);
}
END_TEST

/* ------------------------------------------- range accumulators as bytes */

/* what mpanalyze sends between MPI ranks: a packed accumulator merged into
   an empty one gives the same statistics and histograms, bit for bit, as the
   accumulator itself; a mismatched target list is refused */
START_TEST(test_range_pack)
{
  static const mpe_type ft[] = { MPE_FP16, MPE_BF16, MPE_E4M3 };
  mpe_range_target t[4];
  memset(t, 0, sizeof t);
  for (int k = 0; k < 3; k++) {
    t[k].kind = MPE_TARGET_FLOAT;
    t[k].format = mpe_format_of(ft[k]);
  }
  t[3].kind = MPE_TARGET_FX16;
  t[3].block = 100;
  mpe_range_opts ro = { .margin = 1 };
  mpe_range *a, *b, *c;
  ck_assert_int_eq(mpe_range_create_targets(&a, t, 4, &ro), MPE_OK);
  ck_assert_int_eq(mpe_range_create_targets(&b, t, 4, &ro), MPE_OK);
  ck_assert_int_eq(mpe_range_create_targets(&c, t, 3, &ro), MPE_OK);
  float x[1037];
  uint64_t st = ts_seed();
  for (size_t i = 0; i < 1037; i++)
    x[i] = (float)(ldexp((double)(ts_rand64(&st) >> 40), -(int)(ts_rand64(&st) % 40)) * ((i & 1) ? 1 : -1));
  x[5] = 0;
  x[6] = INFINITY;
  ck_assert_int_eq(mpe_range_add_f32(a, x, 1037), MPE_OK);   /* leaves an fx16 block open */
  size_t len = 0;
  ck_assert_int_eq(mpe_range_pack(a, NULL, 0, &len), MPE_OK);
  unsigned char *buf = malloc(len);
  ck_assert_int_eq(mpe_range_pack(a, buf, len - 1, &len), MPE_ERANGE);
  ck_assert_int_eq(mpe_range_pack(a, buf, len, &len), MPE_OK);
  ck_assert_int_eq(mpe_range_merge_packed(c, buf, len), MPE_EINVAL);   /* other targets */
  ck_assert_int_eq(mpe_range_merge_packed(b, buf, len - 1), MPE_EINVAL);
  ck_assert_int_eq(mpe_range_merge_packed(b, buf, len), MPE_OK);
  mpe_range_summary sa, sb;
  memset(&sa, 0, sizeof sa);
  memset(&sb, 0, sizeof sb);
  mpe_range_summary_get(a, &sa);
  mpe_range_summary_get(b, &sb);
  ck_assert_mem_eq(&sa, &sb, sizeof sa);
  for (int k = -1; k < 4; k++) {
    if (k >= 0) {
      mpe_range_stats qa, qb;
      memset(&qa, 0, sizeof qa);
      memset(&qb, 0, sizeof qb);
      mpe_range_stats_get(a, (size_t)k, &qa);
      mpe_range_stats_get(b, (size_t)k, &qb);
      ck_assert_mem_eq(&qa, &qb, sizeof qa);
    }
    uint64_t ha[4096], hb[4096], ba, bb, aa, ab;
    int fa, fb;
    size_t na, nb;
    ck_assert_int_eq(mpe_range_histogram(a, k, &fa, ha, 4096, &na, &ba, &aa), MPE_OK);
    ck_assert_int_eq(mpe_range_histogram(b, k, &fb, hb, 4096, &nb, &bb, &ab), MPE_OK);
    ck_assert(fa == fb && na == nb && ba == bb && aa == ab);
    ck_assert_mem_eq(ha, hb, na * sizeof *ha);
  }
  free(buf);
  mpe_range_free(a);
  mpe_range_free(b);
  mpe_range_free(c);
}
END_TEST

int main(void)
{
  Suite *s = suite_create("dist");
  TCase *tc = tcase_create("memory");
  tcase_add_test(tc, test_memory_talk);
  tcase_add_test(tc, test_memory_zero_table);
  tcase_add_test(tc, test_memory_activations);
  tcase_add_test(tc, test_memory_errors);
  suite_add_tcase(s, tc);
  tc = tcase_create("allreduce");
  tcase_set_timeout(tc, 120);
  tcase_add_loop_test(tc, test_allreduce_oracle, 0, 5);
  tcase_add_test(tc, test_allreduce_schedule);
  tcase_add_test(tc, test_allreduce_overflow);
  tcase_add_test(tc, test_allreduce_fp8_scale);
  tcase_add_test(tc, test_allreduce_sr);
  tcase_add_test(tc, test_allreduce_errors);
  suite_add_tcase(s, tc);
  tc = tcase_create("order");
  tcase_set_timeout(tc, 120);
  tcase_add_test(tc, test_order_known);
  tcase_add_test(tc, test_order_oracle);
  tcase_add_test(tc, test_order_errors);
  suite_add_tcase(s, tc);
  tc = tcase_create("range-pack");
  tcase_add_test(tc, test_range_pack);
  suite_add_tcase(s, tc);
  return ts_run(s);
}
