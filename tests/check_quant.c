/* Quantisation (mpe_quant(3)): the scale and zero-point rules, encoding against
   an exact MPFR quotient, decoding against exact binary64 products, per-channel
   groups, stochastic rounding frequencies, flags and every error path. */
#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <mpfr.h>
#include "testsupport.h"

static const mpe_type types[] = { MPE_INT8, MPE_UINT8, MPE_INT4, MPE_UINT4 };

static int code(const void *q, mpe_type t, size_t k)
{
  return t == MPE_INT8 || t == MPE_INT4 ? ((const int8_t *)q)[k] : ((const uint8_t *)q)[k];
}

/* clamp(rne(x / s) + z): the quotient truncated to 199 bits with a sticky bit
   at the 200th (it stands for the exact quotient), rounded to an integer by
   the suite's oracle. */
static int ref_encode(float x, float s, int z, int qmin, int qmax)
{
  mpfr_t a, b, t;
  mpfr_inits2(200, a, b, (mpfr_ptr)0);
  mpfr_init2(t, 199);
  mpfr_set_flt(a, x, MPFR_RNDN);
  mpfr_set_flt(b, s, MPFR_RNDN);
  int ix = mpfr_div(t, a, b, MPFR_RNDZ);
  mpfr_set(a, t, MPFR_RNDN);   /* exact */
  if (ix && mpfr_regular_p(a)) {
    mpfr_set_si_2exp(b, mpfr_sgn(a), mpfr_get_exp(a) - 200, MPFR_RNDN);
    mpfr_add(a, a, b, MPFR_RNDN);   /* exact */
  }
  ts_fmt ints = ts_fmt_int();
  double v = ts_round_mpfr(a, &ints, MPE_RNE, 0, NULL) + z;
  mpfr_clears(a, b, t, (mpfr_ptr)0);
  return v < qmin ? qmin : v > qmax ? qmax : (int)v;
}

/* x: uniform, Gaussian-like, ties (k + 1/2 times a scale), zeros, extremes */
static void fill(float *x, size_t n, uint64_t *st, int kind)
{
  for (size_t i = 0; i < n; i++) {
    double u = (double)(ts_rand64(st) >> 11) * 0x1p-53;
    switch (kind % 4) {
    case 0: x[i] = (float)(8 * u - 3); break;
    case 1: { double v = (double)(ts_rand64(st) >> 11) * 0x1p-53;
              x[i] = (float)(1e-3 * sqrt(-2 * log(u + 1e-300)) * cos(6.283185307179586 * v)); break; }
    case 2: x[i] = (float)((int)(u * 40) - 20) * 0.5f; break;   /* ties at scale 1 */
    default: x[i] = i % 7 == 0 ? 0.0f : (float)((u - 0.5) * 1e30); break;
    }
  }
}

START_TEST(test_encode_exact)
{
  mpe_type t = types[_i % 4];
  int sym = _i / 4;
  int qmin, qmax;
  ck_assert_int_eq(mpe_quant_range(t, &qmin, &qmax), MPE_OK);
  uint64_t st = ts_seed() + (uint64_t)_i;
  const size_t R = 13, C = 29;
  float x[13 * 29], y[13 * 29], s[29];
  int32_t z[29];
  int8_t q[13 * 29];
  long n = 0, wrong = 0, dwrong = 0;
  for (int kind = 0; kind < 4; kind++)
    for (int ax = 0; ax < 3; ax++) {
      fill(x, R * C, &st, kind);
      mpe_quant_axis axis = (mpe_quant_axis)ax;
      ck_assert_int_eq(mpe_quant_params(s, z, x, R, C, axis, t, sym), MPE_OK);
      if (kind == 2 && ax == 0) {   /* exact ties: scale 1 */
        s[0] = 1.0f;
        z[0] = qmin < 0 ? 0 : (qmax + 1) / 2;
      }
      ck_assert_int_eq(mpe_quant_encode(q, x, R, C, axis, t, s, z, NULL), MPE_OK);
      ck_assert_int_eq(mpe_quant_decode(y, q, R, C, axis, t, s, z), MPE_OK);
      for (size_t i = 0; i < R; i++)
        for (size_t j = 0; j < C; j++) {
          size_t k = i * C + j, g = ax == 1 ? i : ax == 2 ? j : 0;
          int want = ref_encode(x[k], s[g], z[g], qmin, qmax);
          n++;
          if (code(q, t, k) != want && wrong++ < 5)
            printf("  %s sym=%d kind %d axis %d x=%a s=%a z=%d: %d, want %d\n", mpe_type_name(t), sym, kind, ax,
                   x[k], s[g], z[g], code(q, t, k), want);
          float dref = (float)((double)(code(q, t, k) - z[g]) * (double)s[g]);   /* exact product, one rounding */
          dwrong += ts_f2u(y[k]) != ts_f2u(dref);
          /* the round trip of a value inside the range errs by at most half a step, plus the
             decode's one binary32 rounding */
          if (want > qmin && want < qmax)
            ck_assert_msg(fabs((double)y[k] - x[k]) <= 0.5 * s[g] + fabs(y[k]) * 0x1p-24, "%a -> %a (s %a z %d q %d kind %d axis %d)", x[k], y[k], s[g], z[g], code(q, t, k), kind, ax);
        }
    }
  printf("quant encode %s %s: %ld values, %ld wrong codes, %ld wrong decodes\n", mpe_type_name(t),
         sym ? "symmetric" : "asymmetric", n, wrong, dwrong);
  ck_assert_int_eq(wrong, 0);
  ck_assert_int_eq(dwrong, 0);
}
END_TEST

START_TEST(test_param_rules)
{
  float s;
  int32_t z;
  /* symmetric: max|x| / 127 (or 7), zero 0 or the middle code */
  float x[4] = { -12.7f, 3.0f, 0.5f, 6.0f };
  ck_assert_int_eq(mpe_quant_params(&s, &z, x, 1, 4, MPE_QUANT_TENSOR, MPE_INT8, 1), MPE_OK);
  ck_assert(s == (float)(12.699999809265137 / 127) && z == 0);
  ck_assert_int_eq(mpe_quant_params(&s, &z, x, 1, 4, MPE_QUANT_TENSOR, MPE_UINT8, 1), MPE_OK);
  ck_assert(s == (float)((double)12.7f / 127) && z == 128);
  ck_assert_int_eq(mpe_quant_params(&s, &z, x, 1, 4, MPE_QUANT_TENSOR, MPE_INT4, 1), MPE_OK);
  ck_assert(s == (float)((double)12.7f / 7) && z == 0);
  ck_assert_int_eq(mpe_quant_params(&s, &z, x, 1, 4, MPE_QUANT_TENSOR, MPE_UINT4, 1), MPE_OK);
  ck_assert(s == (float)((double)12.7f / 7) && z == 8);
  int8_t q[4];
  ck_assert_int_eq(mpe_quant_encode(q, x, 1, 4, MPE_QUANT_TENSOR, MPE_INT8, &(float){ (float)((double)12.7f / 127) },
                                    &(int32_t){ 0 }, NULL), MPE_OK);
  ck_assert_int_eq(q[0], -127);   /* the extreme maps to -Q, never to -128 */
  /* asymmetric: [-1, 3] on uint8: scale 4/255, zero 0 - rne(-63.75) = 64 */
  float y[3] = { -1.0f, 3.0f, 0.25f };
  ck_assert_int_eq(mpe_quant_params(&s, &z, y, 3, 1, MPE_QUANT_TENSOR, MPE_UINT8, 0), MPE_OK);
  ck_assert(s == (float)(4.0 / 255) && z == 64);
  ck_assert_int_eq(mpe_quant_params(&s, &z, y, 3, 1, MPE_QUANT_TENSOR, MPE_INT8, 0), MPE_OK);
  ck_assert(s == (float)(4.0 / 255) && z == -64);
  /* a range that does not hold 0 is widened to hold it: [2, 6] -> [0, 6] */
  float w[2] = { 2.0f, 6.0f };
  ck_assert_int_eq(mpe_quant_params(&s, &z, w, 1, 2, MPE_QUANT_TENSOR, MPE_UINT4, 0), MPE_OK);
  ck_assert(s == (float)(6.0 / 15) && z == 0);
  /* all zeros: scale 1 */
  float zz[5] = { 0, -0.0f, 0, 0, 0 };
  ck_assert_int_eq(mpe_quant_params(&s, &z, zz, 5, 1, MPE_QUANT_TENSOR, MPE_INT8, 1), MPE_OK);
  ck_assert(s == 1.0f && z == 0);
  ck_assert_int_eq(mpe_quant_params(&s, &z, zz, 5, 1, MPE_QUANT_TENSOR, MPE_INT8, 0), MPE_OK);
  ck_assert(s == 1.0f && z == -128);
  /* tiny: the scale is raised to FLT_MIN */
  float tiny[2] = { 1e-40f, -3e-39f };
  ck_assert_int_eq(mpe_quant_params(&s, &z, tiny, 2, 1, MPE_QUANT_TENSOR, MPE_INT8, 1), MPE_OK);
  ck_assert(s == FLT_MIN);
  /* per row and per column: each group as a tensor of its own */
  float m[6] = { 1, -2, 3, -40, 5, 0.5f }, sr[3], s1;
  int32_t zr[3], z1;
  ck_assert_int_eq(mpe_quant_params(sr, zr, m, 2, 3, MPE_QUANT_ROWS, MPE_INT8, 0), MPE_OK);
  for (int r = 0; r < 2; r++) {
    ck_assert_int_eq(mpe_quant_params(&s1, &z1, m + 3 * r, 1, 3, MPE_QUANT_TENSOR, MPE_INT8, 0), MPE_OK);
    ck_assert(sr[r] == s1 && zr[r] == z1);
  }
  ck_assert_int_eq(mpe_quant_params(sr, zr, m, 2, 3, MPE_QUANT_COLS, MPE_INT8, 1), MPE_OK);
  for (int c = 0; c < 3; c++) {
    float col[2] = { m[c], m[3 + c] };
    ck_assert_int_eq(mpe_quant_params(&s1, &z1, col, 2, 1, MPE_QUANT_TENSOR, MPE_INT8, 1), MPE_OK);
    ck_assert(sr[c] == s1 && zr[c] == z1);
  }
}
END_TEST

/* clipping and rounding raise their flags */
START_TEST(test_flags)
{
  float x[3] = { 1.0f, 1000.0f, -1000.0f }, s = 1.0f;
  int32_t z = 0;
  int8_t q[3];
  mpe_flags_clear(~0u);
  ck_assert_int_eq(mpe_quant_encode(q, x, 1, 1, MPE_QUANT_TENSOR, MPE_INT8, &s, &z, NULL), MPE_OK);
  ck_assert_uint_eq(mpe_flags_get() & (MPE_FLAG_INEXACT | MPE_FLAG_SATURATED), 0);
  ck_assert_int_eq(mpe_quant_encode(q, x, 1, 3, MPE_QUANT_TENSOR, MPE_INT8, &s, &z, NULL), MPE_OK);
  ck_assert(mpe_flags_get() & MPE_FLAG_SATURATED);
  ck_assert(q[1] == 127 && q[2] == -128);
  mpe_flags_clear(~0u);
  float h = 0.5f;
  ck_assert_int_eq(mpe_quant_encode(q, &h, 1, 1, MPE_QUANT_TENSOR, MPE_INT8, &s, &z, NULL), MPE_OK);
  ck_assert(mpe_flags_get() & MPE_FLAG_INEXACT);
  ck_assert_int_eq(q[0], 0);   /* tie to even */
  uint8_t u[3];
  ck_assert_int_eq(mpe_quant_encode(u, x, 1, 3, MPE_QUANT_TENSOR, MPE_UINT4, &s, &(int32_t){ 8 }, NULL), MPE_OK);
  ck_assert(u[0] == 9 && u[1] == 15 && u[2] == 0);
  mpe_flags_clear(~0u);
}
END_TEST

/* stochastic rounding: P(up) = the distance, the words of mpe_round_f32's stream */
START_TEST(test_stochastic)
{
  enum { N = 200000 };
  float *x = malloc(N * sizeof *x);
  int8_t *q = malloc(N), *q2 = malloc(N);
  float s = 0.125f;
  int32_t z = 0;
  for (int i = 0; i < N; i++)
    x[i] = (i & 1 ? -1.0f : 1.0f) * (2.0f + 0.3f) * s;   /* 2.3 steps: up with P = 0.3 */
  mpe_round_opts o = { .round = MPE_SR, .seed = 42, .offset = 0 };
  ck_assert_int_eq(mpe_quant_encode(q, x, N, 1, MPE_QUANT_TENSOR, MPE_INT8, &s, &z, &o), MPE_OK);
  long up = 0;
  for (int i = 0; i < N; i++) {
    int m = abs(q[i]);
    ck_assert(m == 2 || m == 3);
    up += m == 3;
  }
  double p = (double)up / N, sd = sqrt(0.3 * 0.7 / N);
  printf("quant SR: P(up) = %.4f for 0.3 (%.1f sigma)\n", p, (p - 0.3) / sd);
  ck_assert(fabs(p - 0.3) < 5 * sd);
  /* element k uses word (seed, offset + k): a suffix encoded alone with offset = its start agrees */
  o.offset = 1000;
  ck_assert_int_eq(mpe_quant_encode(q2, x + 1000, N - 1000, 1, MPE_QUANT_TENSOR, MPE_INT8, &s, &z, &o), MPE_OK);
  ck_assert_int_eq(memcmp(q + 1000, q2, N - 1000), 0);
  /* and the same decision as mpe_round_f32 makes on the same stream: 2.3 on a
     grid of integers is the count mpei_round_count gives; check against the
     custom format with spacing 1 around 2.3 (precision 2: 2, 3) */
  mpe_format *f;
  ck_assert_int_eq(mpe_format_custom(&f, 2, -10, 10), MPE_OK);
  float *y = malloc(N * sizeof *y), *xs = malloc(N * sizeof *xs);
  for (int i = 0; i < N; i++)
    xs[i] = x[i] / s;
  o.offset = 0;
  ck_assert_int_eq(mpe_round_f32(y, xs, N, f, &o), MPE_OK);
  long diff = 0;
  for (int i = 0; i < N; i++)
    diff += y[i] != (float)q[i];
  ck_assert_int_eq(diff, 0);
  mpe_format_free(f);
  free(x); free(q); free(q2); free(y); free(xs);
}
END_TEST

START_TEST(test_errors)
{
  float x[4] = { 1, 2, 3, 4 }, s[4] = { 1, 1, 1, 1 };
  int32_t z[4] = { 0, 0, 0, 0 };
  int8_t q[4] = { 9, 9, 9, 9 };
  int qmin, qmax;
  ck_assert_int_eq(mpe_quant_range(MPE_FP16, &qmin, &qmax), MPE_EINVAL);
  ck_assert_int_eq(mpe_quant_range(MPE_INT8, NULL, &qmax), MPE_EINVAL);
  ck_assert_int_eq(mpe_quant_params(s, z, x, 2, 2, MPE_QUANT_TENSOR, MPE_FP32, 1), MPE_EINVAL);
  /* rows * cols fits a size_t but n floats would pass PTRDIFF_MAX bytes: refused, not read */
  const size_t big = (size_t)PTRDIFF_MAX / 4 + 1;
  ck_assert_int_eq(mpe_quant_params(s, z, x, big, 1, MPE_QUANT_TENSOR, MPE_INT8, 1), MPE_EINVAL);
  ck_assert_int_eq(mpe_quant_encode(q, x, 1, big, MPE_QUANT_TENSOR, MPE_INT8, s, z, NULL), MPE_EINVAL);
  ck_assert_int_eq(mpe_quant_decode(x, q, big, 1, MPE_QUANT_TENSOR, MPE_INT8, s, z), MPE_EINVAL);
  ck_assert_int_eq(mpe_quant_params(s, z, x, 2, 2, (mpe_quant_axis)5, MPE_INT8, 1), MPE_EINVAL);
  ck_assert_int_eq(mpe_quant_params(s, z, NULL, 2, 2, MPE_QUANT_TENSOR, MPE_INT8, 1), MPE_EINVAL);
  ck_assert_int_eq(mpe_quant_params(NULL, z, x, 2, 2, MPE_QUANT_TENSOR, MPE_INT8, 1), MPE_EINVAL);
  ck_assert_int_eq(mpe_quant_params(s, z, NULL, 0, 2, MPE_QUANT_TENSOR, MPE_INT8, 1), MPE_OK);
  float bad[2] = { 1.0f, NAN };
  s[0] = 7;
  ck_assert_int_eq(mpe_quant_params(s, z, bad, 1, 2, MPE_QUANT_TENSOR, MPE_INT8, 1), MPE_ERANGE);
  bad[1] = -INFINITY;
  ck_assert_int_eq(mpe_quant_params(s, z, bad, 1, 2, MPE_QUANT_TENSOR, MPE_INT8, 0), MPE_ERANGE);
  ck_assert(s[0] == 7);   /* untouched */
  s[0] = 1;
  ck_assert_int_eq(mpe_quant_encode(q, bad, 1, 2, MPE_QUANT_TENSOR, MPE_INT8, s, z, NULL), MPE_ERANGE);
  ck_assert_int_eq(q[0], 9);
  ck_assert_int_eq(mpe_quant_encode(q, x, 2, 2, MPE_QUANT_TENSOR, MPE_INT8, NULL, z, NULL), MPE_EINVAL);
  ck_assert_int_eq(mpe_quant_encode(NULL, x, 2, 2, MPE_QUANT_TENSOR, MPE_INT8, s, z, NULL), MPE_EINVAL);
  mpe_round_opts o = { .round = (mpe_round)42 };
  ck_assert_int_eq(mpe_quant_encode(q, x, 2, 2, MPE_QUANT_TENSOR, MPE_INT8, s, z, &o), MPE_EINVAL);
  float sb[3] = { 0.0f, -1.0f, INFINITY };
  for (int i = 0; i < 3; i++)
    ck_assert_int_eq(mpe_quant_encode(q, x, 2, 2, MPE_QUANT_TENSOR, MPE_INT8, &sb[i], z, NULL), MPE_EINVAL);
  ck_assert_int_eq(mpe_quant_encode(q, x, 2, 2, MPE_QUANT_TENSOR, MPE_UINT8, s, &(int32_t){ 256 }, NULL), MPE_EINVAL);
  ck_assert_int_eq(mpe_quant_encode(q, x, 2, 2, MPE_QUANT_ROWS, MPE_INT4, s, (int32_t[]){ 0, 8 }, NULL), MPE_EINVAL);
  ck_assert_int_eq(q[0], 9);
  /* a 4-bit code out of range cannot be decoded */
  int8_t q4[4] = { 0, 7, -8, 8 };
  float y[4] = { 5, 5, 5, 5 };
  ck_assert_int_eq(mpe_quant_decode(y, q4, 2, 2, MPE_QUANT_TENSOR, MPE_INT4, s, z), MPE_EINVAL);
  ck_assert(y[0] == 5);
  q4[3] = 1;
  ck_assert_int_eq(mpe_quant_decode(y, q4, 2, 2, MPE_QUANT_TENSOR, MPE_INT4, s, z), MPE_OK);
  ck_assert(y[2] == -8.0f);
  ck_assert_int_eq(mpe_quant_decode(y, q4, 2, 2, MPE_QUANT_TENSOR, MPE_INT4, NULL, z), MPE_EINVAL);
}
END_TEST

/* decode with a scale that is not > 0 is refused as encode refuses it; an
   output sharing memory with an input is refused with nothing written */
START_TEST(test_aliasing)
{
  float x[8] = { 1, 2, 3, 4, 5, 6, 7, 8 }, s = 1, y[4] = { 5, 5, 5, 5 };
  int32_t z = 0;
  int8_t q[4] = { 1, 2, 3, 4 };
  const float sb[3] = { 0.0f, -0.0f, -1.0f };
  for (int i = 0; i < 3; i++)
    ck_assert_int_eq(mpe_quant_decode(y, q, 1, 4, MPE_QUANT_TENSOR, MPE_INT8, &sb[i], &z), MPE_EINVAL);
  ck_assert(y[0] == 5);
  /* decode in place: x[0] would overwrite codes 1..3 before they are read */
  float buf[4];
  int8_t *qb = (int8_t *)buf;
  memcpy(qb, q, 4);
  ck_assert_int_eq(mpe_quant_decode(buf, qb, 1, 4, MPE_QUANT_TENSOR, MPE_INT8, &s, &z), MPE_EINVAL);
  ck_assert(memcmp(qb, q, 4) == 0);
  ck_assert_int_eq(mpe_quant_decode(buf, q, 1, 4, MPE_QUANT_TENSOR, MPE_INT8, buf + 3, &z), MPE_EINVAL);
  ck_assert_int_eq(mpe_quant_decode(buf, q, 1, 4, MPE_QUANT_TENSOR, MPE_INT8, &s, (int32_t *)buf + 1), MPE_EINVAL);
  ck_assert_int_eq(mpe_quant_decode(buf, q, 1, 4, MPE_QUANT_TENSOR, MPE_INT8, &s, &z), MPE_OK);
  ck_assert(buf[0] == 1 && buf[1] == 2 && buf[2] == 3 && buf[3] == 4);
  /* encode onto the values, the scales or the zero points */
  float xs[4] = { 1, 2, 3, 4 };
  ck_assert_int_eq(mpe_quant_encode(xs, xs, 1, 4, MPE_QUANT_TENSOR, MPE_INT8, &s, &z, NULL), MPE_EINVAL);
  ck_assert_int_eq(mpe_quant_encode((char *)xs + 15, xs, 1, 4, MPE_QUANT_TENSOR, MPE_INT8, &s, &z, NULL), MPE_EINVAL);
  ck_assert_int_eq(mpe_quant_encode(&s, xs, 1, 4, MPE_QUANT_TENSOR, MPE_INT8, &s, &z, NULL), MPE_EINVAL);
  ck_assert_int_eq(mpe_quant_encode(&z, xs, 1, 4, MPE_QUANT_TENSOR, MPE_INT8, &s, &z, NULL), MPE_EINVAL);
  ck_assert(xs[0] == 1 && xs[3] == 4 && s == 1 && z == 0);
  /* codes right after the values, touching them without sharing a byte, are fine */
  ck_assert_int_eq(mpe_quant_encode((char *)x + 16, x, 1, 4, MPE_QUANT_TENSOR, MPE_INT8, &s, &z, NULL), MPE_OK);
  ck_assert_int_eq(mpe_quant_encode((char *)x + 15, x, 1, 4, MPE_QUANT_TENSOR, MPE_INT8, &s, &z, NULL), MPE_EINVAL);
  memcpy(x + 4, (const float[]){ 5, 6, 7, 8 }, 4 * sizeof *x);
  ck_assert_int_eq(mpe_quant_encode(q, xs, 1, 4, MPE_QUANT_TENSOR, MPE_INT8, &s, &z, NULL), MPE_OK);
  /* per-row scales written inside x: row 1 would be read after scale[0] overwrote it */
  int32_t zz[2] = { 9, 9 };
  ck_assert_int_eq(mpe_quant_params(x + 4, zz, x, 2, 4, MPE_QUANT_ROWS, MPE_INT8, 1), MPE_EINVAL);
  ck_assert_int_eq(mpe_quant_params((float *)zz, zz, x, 2, 4, MPE_QUANT_ROWS, MPE_INT8, 1), MPE_EINVAL);
  ck_assert_int_eq(mpe_quant_params(&s, (int32_t *)x + 7, x, 2, 4, MPE_QUANT_TENSOR, MPE_INT8, 1), MPE_EINVAL);
  ck_assert(x[4] == 5 && zz[0] == 9 && s == 1);
  float s2[2];
  ck_assert_int_eq(mpe_quant_params(s2, zz, x, 2, 4, MPE_QUANT_ROWS, MPE_INT8, 1), MPE_OK);
  ck_assert(s2[0] == 4.0f / 127 && s2[1] == 8.0f / 127 && zz[0] == 0 && zz[1] == 0);
}
END_TEST

static Suite *quant_suite(void)
{
  Suite *s = suite_create("quant");
  TCase *tc = tcase_create("quant");
  tcase_add_loop_test(tc, test_encode_exact, 0, 8);
  tcase_add_test(tc, test_param_rules);
  tcase_add_test(tc, test_flags);
  tcase_add_test(tc, test_stochastic);
  tcase_add_test(tc, test_errors);
  tcase_add_test(tc, test_aliasing);
  suite_add_tcase(s, tc);
  return s;
}

int main(void)
{
  setvbuf(stdout, NULL, _IONBF, 0);
  return ts_run(quant_suite());
}
