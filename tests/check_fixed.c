/* 16-bit fixed point: QUDA block-normalised encoding/decoding and Q formats.
   Decoding is exhaustive over all 2^16 codes; encoding is compared with the
   written rule (binary32 steps, integer rounding by MPFR) on random blocks and
   edge cases; error paths leave the outputs untouched. */
#include <math.h>
#include <float.h>
#include <stdlib.h>
#include <string.h>
#include <mpfr.h>
#include "testsupport.h"

static const mpe_round det_modes[6] = { MPE_RNE, MPE_RNA, MPE_RZ, MPE_RU, MPE_RD, MPE_RO };

/* v rounded to an integer by the suite's MPFR oracle under a deterministic mode */
static double mp_rint(double v, mpe_round r)
{
  ts_fmt ints = ts_fmt_int();
  return ts_round_mpfr_d(v, &ints, r);
}

/* The rule of docs/DESIGN.md §3.4 for one block, written out independently: the
   binary32 product computed as an exact binary64 product rounded once. */
static void rule_block(int16_t *q, float *scale, const float *x, size_t len, mpe_round r)
{
  double m = 0;
  for (size_t i = 0; i < len; i++)
    m = fabs(x[i]) > m ? fabs(x[i]) : m;
  if (m == 0) {
    *scale = 0;
    for (size_t i = 0; i < len; i++)
      q[i] = 0;
    return;
  }
  float inv = 32767.0f / (float)m;
  for (size_t i = 0; i < len; i++) {
    if (x[i] == 0) {
      q[i] = 0;
      continue;
    }
    float p = (float)((double)x[i] * (double)inv);
    double v = isinf(p) ? copysign(32767.0, p) : mp_rint(p, r);
    q[i] = (int16_t)(v > 32767 ? 32767 : v < -32767 ? -32767 : v);
  }
  *scale = (float)(m * (double)3.0518509476e-5f);
}

static void check_encode(const float *x, size_t n, size_t block, mpe_round r, const char *what)
{
  size_t nb = (n + block - 1) / block;
  int16_t *q = malloc(n * sizeof *q), *qw = malloc(n * sizeof *qw);
  float *s = malloc(nb * sizeof *s), *sw = malloc(nb * sizeof *sw);
  ck_assert_int_eq(mpe_fx16_encode(q, s, x, n, block, r), MPE_OK);
  for (size_t b = 0; b < nb; b++) {
    size_t len = n - b * block < block ? n - b * block : block;
    rule_block(qw + b * block, sw + b, x + b * block, len, r);
    ck_assert_msg(ts_f2u(s[b]) == ts_f2u(sw[b]), "%s: scale[%zu] %a want %a", what, b, s[b], sw[b]);
  }
  for (size_t i = 0; i < n; i++)
    ck_assert_msg(q[i] == qw[i], "%s mode %s: x[%zu]=%a q %d want %d", what, mpe_round_name(r), i,
                  x[i], q[i], qw[i]);
  free(q); free(qw); free(s); free(sw);
}

static float rand_float(uint64_t *st)
{
  uint64_t r = ts_rand64(st);
  int e = (int)(r % 60) - 40;
  float v = ldexpf(1.0f + (float)((r >> 8) & 0xffffff) * 0x1p-24f, e);
  if ((r >> 40) % 17 == 0)
    v = 0;
  return (r >> 63) ? -v : v;
}

START_TEST(test_encode_random)
{
  mpe_round r = det_modes[_i];
  uint64_t st = ts_seed() + (uint64_t)_i;
  long total = 0;
  for (int t = 0; t < 300; t++) {
    size_t n = 1 + ts_rand64(&st) % 700, block = 1 + ts_rand64(&st) % 70;
    float *x = malloc(n * sizeof *x);
    float spread = ldexpf(1.0f, (int)(ts_rand64(&st) % 200) - 100);
    for (size_t i = 0; i < n; i++)
      x[i] = rand_float(&st) * spread;
    check_encode(x, n, block, r, "random");
    total += (long)n;
    free(x);
  }
  if (_i == 0)
    fprintf(stderr, "fx16 encode: %ld random values per mode match the written rule\n", total);
}
END_TEST

START_TEST(test_encode_edges)
{
  mpe_round r = det_modes[_i];
  float zeros[5] = { 0, -0.0f, 0, 0, -0.0f };
  check_encode(zeros, 5, 5, r, "all-zero");
  int16_t q[8];
  float s[4];
  ck_assert_int_eq(mpe_fx16_encode(q, s, zeros, 5, 5, r), MPE_OK);
  ck_assert(s[0] == 0 && !signbit(s[0]));
  for (int i = 0; i < 5; i++)
    ck_assert_int_eq(q[i], 0);
  /* max is subnormal: 32767/m overflows to inf, every non-zero value saturates */
  float sub[4] = { 0x1p-140f, -0x1p-142f, 0, 0x3p-149f };
  check_encode(sub, 4, 4, r, "subnormal max");
  ck_assert_int_eq(mpe_fx16_encode(q, s, sub, 4, 4, r), MPE_OK);
  ck_assert_int_eq(q[0], 32767);
  ck_assert_int_eq(q[1], -32767);
  ck_assert_int_eq(q[2], 0);
  /* a small normal max whose reciprocal is still finite */
  float small[3] = { 1e-30f, -3e-31f, 7e-33f };
  check_encode(small, 3, 3, r, "small max");
  /* block length 1: each value is its own max */
  float one[6] = { 1.0f, -3.5f, 0, 1e-20f, -65504.0f, 0x1p-130f };
  check_encode(one, 6, 1, r, "block 1");
  /* values at exactly +-max, and the largest binary32 */
  float pm[6] = { 2.5f, -2.5f, 1.0f, -2.5f, 2.5f, 0.1f };
  check_encode(pm, 6, 6, r, "+-max");
  ck_assert_int_eq(mpe_fx16_encode(q, s, pm, 6, 6, r), MPE_OK);
  if (r == MPE_RNE || r == MPE_RNA) {
    ck_assert_int_eq(q[0], 32767);
    ck_assert_int_eq(q[1], -32767);
  }
  float big[3] = { FLT_MAX, -FLT_MAX, 1.0f };
  check_encode(big, 3, 2, r, "FLT_MAX");
  /* short last block */
  float tail[7] = { 1, 2, 3, 4, 5, 6, 0.25f };
  check_encode(tail, 7, 3, r, "short last block");
  ck_assert_int_eq(mpe_fx16_encode(q, s, tail, 7, 3, r), MPE_OK);
  ck_assert(s[2] == 0.25f * 3.0518509476e-5f);
}
END_TEST

START_TEST(test_encode_errors)
{
  int16_t q[4] = { 11, 12, 13, 14 };
  float s[2] = { 5, 6 };
  float bad[4][4] = { { 1, NAN, 2, 3 }, { 1, 2, 3, INFINITY }, { -INFINITY, 0, 0, 0 }, { 1, 2, 3, -NAN } };
  for (int k = 0; k < 4; k++) {
    ck_assert_int_eq(mpe_fx16_encode(q, s, bad[k], 4, 2, MPE_RNE), MPE_ERANGE);
    ck_assert(q[0] == 11 && q[1] == 12 && q[2] == 13 && q[3] == 14 && s[0] == 5 && s[1] == 6);
  }
  float ok[4] = { 1, 2, 3, 4 };
  ck_assert_int_eq(mpe_fx16_encode(q, s, ok, 4, 0, MPE_RNE), MPE_EINVAL);
  ck_assert_int_eq(mpe_fx16_encode(NULL, s, ok, 4, 2, MPE_RNE), MPE_EINVAL);
  ck_assert_int_eq(mpe_fx16_encode(q, NULL, ok, 4, 2, MPE_RNE), MPE_EINVAL);
  ck_assert_int_eq(mpe_fx16_encode(q, s, NULL, 4, 2, MPE_RNE), MPE_EINVAL);
  ck_assert_int_eq(mpe_fx16_encode(q, s, ok, 4, 2, (mpe_round)8), MPE_EINVAL);
  ck_assert(q[0] == 11 && s[0] == 5);
  ck_assert_int_eq(mpe_fx16_encode(NULL, NULL, NULL, 0, 1, MPE_RNE), MPE_OK);
  float x[4] = { 7, 7, 7, 7 };
  ck_assert_int_eq(mpe_fx16_decode(x, q, s, 4, 0), MPE_EINVAL);
  ck_assert_int_eq(mpe_fx16_decode(NULL, q, s, 4, 2), MPE_EINVAL);
  ck_assert_int_eq(mpe_fx16_decode(x, NULL, s, 4, 2), MPE_EINVAL);
  ck_assert_int_eq(mpe_fx16_decode(x, q, NULL, 4, 2), MPE_EINVAL);
  ck_assert(x[0] == 7 && x[3] == 7);
  ck_assert_int_eq(mpe_fx16_decode(NULL, NULL, NULL, 0, 3), MPE_OK);
  /* a count no buffer can hold is refused, not read */
  ck_assert_int_eq(mpe_fx16_encode(q, s, ok, SIZE_MAX, 2, MPE_RNE), MPE_EINVAL);
  ck_assert_int_eq(mpe_fx16_decode(x, q, s, (size_t)PTRDIFF_MAX / 4 + 1, 2), MPE_EINVAL);
}
END_TEST

/* every code, several scales and block layouts (a short last block included) */
START_TEST(test_decode_exhaustive)
{
  const size_t n = 65536, block = 1000;
  size_t nb = (n + block - 1) / block;
  int16_t *q = malloc(n * sizeof *q);
  float *x = malloc(n * sizeof *x), *s = malloc(nb * sizeof *s);
  static const float scales[] = { 1.0f, 0.0f, 0x1p-149f, 3.0518509476e-5f, 1e30f, -0.5f, 0x1.fffffep127f, 7.25e-12f };
  uint64_t st = ts_seed();
  for (size_t i = 0; i < n; i++)
    q[i] = (int16_t)(uint16_t)i;
  for (size_t k = 0; k < sizeof scales / sizeof scales[0] + 2; k++) {
    for (size_t b = 0; b < nb; b++)
      s[b] = k < sizeof scales / sizeof scales[0] ? scales[k] : ts_u2f((uint32_t)ts_rand64(&st) & 0x7f7fffffu);
    ck_assert_int_eq(mpe_fx16_decode(x, q, s, n, block), MPE_OK);
    for (size_t i = 0; i < n; i++) {
      float want = (float)((double)q[i] * (double)s[i / block]);   /* exact product, one rounding */
      ck_assert_msg(ts_f2u(x[i]) == ts_f2u(want), "code %d scale %a: %a want %a", q[i], s[i / block], x[i], want);
    }
  }
  free(q); free(x); free(s);
}
END_TEST

/* encode then decode: RNE error at most half a step (plus binary32 rounding of the steps) */
START_TEST(test_roundtrip_bound)
{
  uint64_t st = ts_seed() ^ 0x51;
  const size_t n = 4096, block = 24;
  float x[4096], y[4096], s[4096 / 24 + 1];
  int16_t q[4096];
  for (size_t i = 0; i < n; i++)
    x[i] = rand_float(&st);
  ck_assert_int_eq(mpe_fx16_encode(q, s, x, n, block, MPE_RNE), MPE_OK);
  ck_assert_int_eq(mpe_fx16_decode(y, q, s, n, block), MPE_OK);
  double worst = 0;
  for (size_t i = 0; i < n; i++) {
    double m = 0;
    for (size_t j = i / block * block; j < n && j < (i / block + 1) * block; j++)
      m = fmax(m, fabs(x[j]));
    if (m < 1e-30)
      continue;
    double err = fabs((double)y[i] - x[i]) / (m / 32767.0);
    worst = fmax(worst, err);
  }
  fprintf(stderr, "fx16 round trip (RNE): worst error %.4f steps of max/32767\n", worst);
  ck_assert(worst <= 0.5 + 1e-3);
}
END_TEST

START_TEST(test_encode_stochastic)
{
  /* 0.3 * 32767 = 9830.1 (binary32 product): P(9831) = its fraction */
  float x[2] = { 1.0f, 0.3f };
  float inv = 32767.0f / 1.0f, p = 0.3f * inv;
  double frac = (double)p - floor(p);
  mpe_seed(ts_seed());
  const int n = 200000;
  long up = 0, upeq = 0;
  int16_t q[2];
  float s;
  for (int i = 0; i < n; i++) {
    mpe_fx16_encode(q, &s, x, 2, 2, MPE_SR);
    ck_assert(q[1] == 9830 || q[1] == 9831);
    ck_assert_int_eq(q[0], 32767);
    up += q[1] == 9831;
    mpe_fx16_encode(q, &s, x, 2, 2, MPE_SR_EQ);
    upeq += q[1] == 9831;
  }
  double sd = sqrt(n * frac * (1 - frac)), sdeq = sqrt(n * 0.25);
  fprintf(stderr, "fx16 SR: %ld/%d up, expect %.0f (sd %.0f); SR_EQ %ld, expect %d\n", up, n, n * frac, sd, upeq, n / 2);
  ck_assert(fabs(up - n * frac) <= 5 * sd);
  ck_assert(fabs(upeq - n * 0.5) <= 5 * sdeq);
}
END_TEST

/* Q format: every code decodes to q * 2^-f and encodes back to itself */
START_TEST(test_q16_exhaustive)
{
  static const int fbits[] = { 0, 8, 15, -3, 30 };
  for (size_t k = 0; k < sizeof fbits / sizeof fbits[0]; k++) {
    int fb = fbits[k];
    for (int32_t c = -32768; c <= 32767; c++) {
      float v = mpe_q16_to_fp32((int16_t)c, fb);
      ck_assert(v == ldexp((double)c, -fb));
      for (int m = 0; m < MPE_NROUND; m++) {
        mpe_flags_clear(~0u);
        ck_assert_int_eq(mpe_fp32_to_q16(v, fb, (mpe_round)m), c);
        ck_assert_uint_eq(mpe_flags_get(), 0);
      }
    }
  }
}
END_TEST

START_TEST(test_q16_rounding)
{
  uint64_t st = ts_seed() ^ 0x99;
  for (int t = 0; t < 200000; t++) {
    uint64_t r = ts_rand64(&st);
    int fb = (int)(r % 20) - 2;
    float x = ldexpf((float)((r >> 8) & 0xffffff) * 0x1p-24f, (int)((r >> 40) % 24) - 8 - fb);
    if (r >> 63)
      x = -x;
    mpe_round m = det_modes[(r >> 32) % 6];
    double v = mp_rint(ldexp(x, fb), m);
    int16_t want = (int16_t)(v > 32767 ? 32767 : v < -32768 ? -32768 : v);
    mpe_flags_clear(~0u);
    int16_t got = mpe_fp32_to_q16(x, fb, m);
    ck_assert_msg(got == want, "x=%a f=%d mode %s: %d want %d", x, fb, mpe_round_name(m), got, want);
    unsigned fl = mpe_flags_get();
    ck_assert_uint_eq((fl & MPE_FLAG_SATURATED) != 0, v > 32767 || v < -32768);
    ck_assert_uint_eq((fl & MPE_FLAG_INEXACT) != 0, ldexp(x, fb) != (double)want);
  }
  mpe_flags_clear(~0u);
  ck_assert_int_eq(mpe_fp32_to_q16(1e9f, 8, MPE_RNE), 32767);
  ck_assert_int_eq(mpe_fp32_to_q16(-1e9f, 8, MPE_RZ), -32768);
  ck_assert_int_eq(mpe_fp32_to_q16(128.0f, 8, MPE_RNE), 32767);   /* 32768 saturates */
  ck_assert_int_eq(mpe_fp32_to_q16(-128.0f, 8, MPE_RNE), -32768); /* representable */
  ck_assert_int_eq(mpe_fp32_to_q16(INFINITY, 0, MPE_RNE), 32767);
  ck_assert_int_eq(mpe_fp32_to_q16(-INFINITY, 0, MPE_RNE), -32768);
  ck_assert_uint_eq(mpe_flags_get() & MPE_FLAG_SATURATED, MPE_FLAG_SATURATED);
  mpe_flags_clear(~0u);
  ck_assert_int_eq(mpe_fp32_to_q16(NAN, 4, MPE_RNE), 0);
  ck_assert_uint_eq(mpe_flags_get(), MPE_FLAG_INVALID);
  mpe_flags_clear(~0u);
  /* huge frac_bits are clamped, not undefined */
  ck_assert_int_eq(mpe_fp32_to_q16(1.0f, 100000, MPE_RNE), 32767);
  ck_assert_int_eq(mpe_fp32_to_q16(1.0f, -100000, MPE_RNE), 0);
  ck_assert_int_eq(mpe_fp32_to_q16(1.0f, -100000, MPE_RU), 1);
  ck_assert(mpe_q16_to_fp32(1, -100000) == INFINITY);
  ck_assert(mpe_q16_to_fp32(1, 100000) == 0);
  /* an out-of-range mode means RNE */
  ck_assert_int_eq(mpe_fp32_to_q16(2.5f, 0, (mpe_round)42), 2);
  /* SR: 0.25 step fraction */
  mpe_seed(ts_seed());
  long up = 0;
  const int n = 100000;
  for (int i = 0; i < n; i++)
    up += mpe_fp32_to_q16(1.25f, 0, MPE_SR) == 2;
  ck_assert(fabs(up - n * 0.25) <= 5 * sqrt(n * 0.25 * 0.75));
}
END_TEST

int main(void)
{
  Suite *s = suite_create("fixed");
  TCase *fx = tcase_create("fx16");
  tcase_add_loop_test(fx, test_encode_random, 0, 6);
  tcase_add_loop_test(fx, test_encode_edges, 0, 6);
  tcase_add_test(fx, test_encode_errors);
  tcase_add_test(fx, test_decode_exhaustive);
  tcase_add_test(fx, test_roundtrip_bound);
  tcase_add_test(fx, test_encode_stochastic);
  suite_add_tcase(s, fx);
  TCase *q = tcase_create("q16");
  tcase_set_timeout(q, 120);   /* 2.6 million conversions: seconds on a loaded machine */
  tcase_add_test(q, test_q16_exhaustive);
  tcase_add_test(q, test_q16_rounding);
  suite_add_tcase(s, q);
  return ts_run(s);
}
