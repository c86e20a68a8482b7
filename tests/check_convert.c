/* Scalar conversions: TestFloat vectors, exhaustive 16- and 8-bit round trips,
   the MPFR oracle for everything TestFloat does not cover, and the F16C
   instruction over binary32 inputs. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <immintrin.h>
#if defined(__x86_64__)
#include <cpuid.h>
#endif
#include "testsupport.h"


enum { F32_TO_F16, F64_TO_F16, F32_TO_BF16 };
static const char *const tf_funcs[3] = { "f32_to_f16", "f64_to_f16", "f32_to_bf16" };

START_TEST(test_testfloat)
{
  int func = _i / 6, m = _i % 6;
  char rel[128];
  snprintf(rel, sizeof rel, "testfloat/%s_r%s.txt.gz", tf_funcs[func], ts_tf_modes[m]);
  ts_conf *fp = ts_conf_open(rel);
  ck_assert_msg(fp != NULL, "%s: missing (see the note above)", rel);
  uint64_t v[3];
  long n = 0, bad = 0, badflags = 0, malformed = 0;
  int k;
  const unsigned mask = MPE_FLAG_INVALID | MPE_FLAG_DIVBYZERO | MPE_FLAG_OVERFLOW |
                        MPE_FLAG_UNDERFLOW | MPE_FLAG_INEXACT;
  while ((k = ts_conf_words(fp, 16, v, 3)) != -1) {
    if (k == 0)
      continue;
    if (k != 3) {
      if (malformed++ < 5)
        fprintf(stderr, "%s line %ld: not 3 hex words\n", rel, ts_conf_lineno(fp));
      continue;
    }
    unsigned long long in = v[0];
    unsigned out = (unsigned)v[1], fl = (unsigned)v[2];
    n++;
    mpe_flags_clear(~0u);
    uint16_t got;
    if (func == F32_TO_F16)
      got = mpe_fp32_to_fp16(ts_u2f((uint32_t)in), ts_tf_round[m]);
    else if (func == F64_TO_F16)
      got = mpe_fp64_to_fp16(ts_u2d(in), ts_tf_round[m]);
    else
      got = mpe_fp32_to_bf16(ts_u2f((uint32_t)in), ts_tf_round[m]);
    unsigned gotfl = mpe_flags_get() & mask;
    int expnan = func == F32_TO_BF16 ? ((out & 0x7f80) == 0x7f80 && (out & 0x7f))
                                     : ((out & 0x7c00) == 0x7c00 && (out & 0x3ff));
    int gotnan = func == F32_TO_BF16 ? ((got & 0x7f80) == 0x7f80 && (got & 0x7f))
                                     : ((got & 0x7c00) == 0x7c00 && (got & 0x3ff));
    int ok = expnan ? gotnan : got == out;
    if (!ok) {
      if (bad < 5)
        fprintf(stderr, "%s: in %llx want %04x got %04x\n", rel, in, out, got);
      bad++;
    }
    if (gotfl != ts_tf_flags(fl)) {
      if (badflags < 5)
        fprintf(stderr, "%s: in %llx flags want %02x got %x\n", rel, in, fl, gotfl);
      badflags++;
    }
  }
  ts_conf_close(fp);
  printf("check_convert: TestFloat %s r%s: %ld vectors, %ld mismatches (%ld results, %ld flag bytes)\n",
         tf_funcs[func], ts_tf_modes[m], n, bad + badflags, bad, badflags);
  ts_conf_tally(n, bad + badflags + malformed);
  ck_assert_int_eq(malformed, 0);
  ck_assert_int_gt(n, 1000);
  ck_assert_int_eq(bad, 0);
  ck_assert_int_eq(badflags, 0);
}
END_TEST

/* every FP16/BF16 pattern decodes to its value and re-encodes to itself */
START_TEST(test_exhaustive16)
{
  long checked = 0;
  for (uint32_t h = 0; h < 65536; h++) {
    /* FP16 by the definition */
    int s = h >> 15, e = (h >> 10) & 31, m = h & 1023;
    double want = e == 0 ? ldexp(m, -24) : e == 31 ? (m ? NAN : INFINITY) : ldexp(m + 1024, e - 25);
    if (s)
      want = -want;
    float v = mpe_fp16_to_fp32((uint16_t)h);
    ck_assert_msg(ts_same_f64(v, want), "fp16 %04x decodes to %a", h, v);
    if (isnan(want)) {
      ck_assert_int_eq(signbit(v) != 0, s);
    }
    for (int r = 0; r < 6; r++) {
      mpe_flags_clear(~0u);
      uint16_t back = mpe_fp32_to_fp16(v, ts_tf_round[r]);
      if (isnan(want))
        ck_assert((back & 0x7c00) == 0x7c00 && (back & 0x3ff) && (back >> 15) == s);
      else {
        ck_assert_msg(back == h, "fp16 %04x re-encodes to %04x", h, back);
        ck_assert_uint_eq(mpe_flags_get(), 0);
      }
      back = mpe_fp64_to_fp16(v, ts_tf_round[r]);
      ck_assert(isnan(want) ? (back & 0x7fff) > 0x7c00 : back == h);
    }
    /* BF16 by the definition */
    e = (h >> 7) & 255; m = h & 127;
    want = e == 0 ? ldexp(m, -133) : e == 255 ? (m ? NAN : INFINITY) : ldexp(m + 128, e - 134);
    if (s)
      want = -want;
    v = mpe_bf16_to_fp32((uint16_t)h);
    ck_assert_msg(ts_same_f64(v, want), "bf16 %04x decodes to %a", h, v);
    for (int r = 0; r < 6; r++) {
      uint16_t back = mpe_fp32_to_bf16(v, ts_tf_round[r]);
      ck_assert(isnan(want) ? ((back & 0x7fff) > 0x7f80 && (back >> 15) == s) : back == h);
      back = mpe_fp64_to_bf16(v, ts_tf_round[r]);
      ck_assert(isnan(want) ? (back & 0x7fff) > 0x7f80 : back == h);
    }
    checked++;
  }
  ck_assert_int_eq(checked, 65536);
}
END_TEST

START_TEST(test_exhaustive8)
{
  for (uint32_t b = 0; b < 256; b++) {
    int s = b >> 7;
    /* E4M3: bias 7, no inf, S.1111.111 is NaN */
    int e = (b >> 3) & 15, m = b & 7;
    double want = (e == 15 && m == 7) ? NAN : e == 0 ? ldexp(m, -9) : ldexp(m + 8, e - 10);
    if (s)
      want = -want;
    float v = mpe_e4m3_to_fp32((uint8_t)b);
    ck_assert_msg(ts_same_f64(v, want), "e4m3 %02x decodes to %a", b, v);
    for (int r = 0; r < 6; r++)
      for (int sat = 0; sat < 2; sat++) {
        uint8_t back = mpe_fp32_to_e4m3(v, ts_tf_round[r], sat);
        ck_assert(isnan(want) ? (back & 0x7f) == 0x7f : back == b);
      }
    /* E5M2: bias 15, IEEE-like */
    e = (b >> 2) & 31; m = b & 3;
    want = e == 31 ? (m ? NAN : INFINITY) : e == 0 ? ldexp(m, -16) : ldexp(m + 4, e - 17);
    if (s)
      want = -want;
    v = mpe_e5m2_to_fp32((uint8_t)b);
    ck_assert_msg(ts_same_f64(v, want), "e5m2 %02x decodes to %a", b, v);
    for (int r = 0; r < 6; r++) {
      uint8_t back = mpe_fp32_to_e5m2(v, ts_tf_round[r], 0);
      ck_assert(isnan(want) ? (back & 0x7f) > 0x7c : back == b);
      if (!isinf(want)) {
        back = mpe_fp32_to_e5m2(v, ts_tf_round[r], 1);
        ck_assert(isnan(want) ? (back & 0x7f) > 0x7c : back == b);
      }
    }
    /* the FNUZ formats (AMD CDNA3): bias 8 and 16, every exponent finite, no
       inf, no -0: 0x80 is the one NaN */
    for (int fz = 0; fz < 2; fz++) {
      const int mb = fz ? 2 : 3, bias = fz ? 16 : 8;
      e = (int)(b >> mb) & ((1 << (7 - mb)) - 1);
      m = (int)b & ((1 << mb) - 1);
      want = b == 0x80 ? NAN : e == 0 ? ldexp(m, 1 - bias - mb) : ldexp(m + (1 << mb), e - bias - mb);
      if (s && b != 0x80)
        want = -want;
      v = fz ? mpe_e5m2fnuz_to_fp32((uint8_t)b) : mpe_e4m3fnuz_to_fp32((uint8_t)b);
      ck_assert_msg(ts_same_f64(v, want) || (isnan(v) && isnan(want)), "%s %02x decodes to %a",
                    fz ? "e5m2fnuz" : "e4m3fnuz", b, v);
      for (int r = 0; r < 6; r++)
        for (int sat = 0; sat < 2; sat++) {
          uint8_t back = fz ? mpe_fp32_to_e5m2fnuz(v, ts_tf_round[r], sat) : mpe_fp32_to_e4m3fnuz(v, ts_tf_round[r], sat);
          ck_assert_msg(back == b, "%s %02x mode %d sat %d: back %02x", fz ? "e5m2fnuz" : "e4m3fnuz", b, r, sat, back);
        }
    }
  }
}
END_TEST

/* ---- MPFR oracle ---- */

typedef struct { const char *name; int p, emin, emax; double maxv; int has_inf; } fmtdesc;

static double oracle(double x, const fmtdesc *d, mpe_round r, int sat, int flush)
{
  if (isnan(x))
    return x;
  ts_fmt g = { d->p, d->emin, d->emax, d->maxv, d->has_inf };
  mpfr_t v;
  mpfr_init2(v, 53);
  mpfr_set_d(v, x, MPFR_RNDN);
  double y = ts_round_mpfr(v, &g, r, sat, NULL);
  mpfr_clear(v);
  if (flush && y != 0 && fabs(y) < ldexp(1.0, d->emin))
    y = signbit(y) ? -0.0 : 0.0;
  return y;
}

/* inputs: every boundary of the format, its neighbours, and random values */
static size_t make_inputs(double *x, size_t cap, const fmtdesc *d, uint64_t *rs, int as_float)
{
  size_t n = 0;
  double maxv = d->maxv, mn = ldexp(1.0, d->emin), ms = ldexp(1.0, d->emin - d->p + 1);
  double ulpmax = ldexp(1.0, (int)ilogb(maxv) - d->p + 1);
  double pts[] = { maxv, maxv + ulpmax / 2, maxv + ulpmax / 4, maxv + ulpmax, maxv * 2, mn, mn - ms / 2,
                   mn - ms, ms, ms / 2, ms / 4, ms * 1.5, ms * 0.75, 0.0, 1.0, 1.0 + ldexp(1.0, -d->p),
                   1.0 + ldexp(3.0, -d->p - 1), INFINITY, NAN };
  for (size_t i = 0; i < sizeof pts / sizeof pts[0] && n + 6 < cap; i++) {
    double v = pts[i];
    if (as_float && fabs(v) > 3.4e38 && !isinf(v))
      continue;
    x[n++] = v;
    x[n++] = -v;
    if (isfinite(v) && v != 0) {
      x[n++] = as_float ? nextafterf((float)v, INFINITY) : nextafter(v, INFINITY);
      x[n++] = as_float ? nextafterf((float)v, 0) : nextafter(v, 0);
      x[n] = -x[n - 1];
      n++;
    }
  }
  while (n < cap) {
    uint64_t r = ts_rand64(rs);
    double v;
    switch (r % 4) {
    case 0: /* random bits */
      v = as_float ? ts_u2f((uint32_t)(r >> 32)) : ts_u2d(r);
      break;
    case 1: { /* a format value plus a fraction of its quantum: ties and near ties */
      int e = d->emin - 3 + (int)((r >> 8) % (uint64_t)(d->emax - d->emin + 6));
      double q = ldexp(1.0, (e > d->emin ? e : d->emin) - d->p + 1);
      double base = ldexp(1.0, e) + q * (double)((r >> 20) % ((uint64_t)1 << (d->p - 1 < 40 ? d->p - 1 : 40)));
      static const double fr[] = { 0.5, 0.25, 0.75, 0.5 + 0x1p-20, 0.5 - 0x1p-20, 0x1p-20 };
      v = base + q * fr[(r >> 40) % 6];
      break;
    }
    default: { /* random significand in a random binade of the format's range */
      int e = d->emin - d->p - 2 + (int)((r >> 8) % (uint64_t)(d->emax - d->emin + d->p + 5));
      v = ldexp(1.0 + (double)(r >> 12) * 0x1p-52, e);
      break;
    }
    }
    if (as_float)
      v = (float)v;
    if (r & 1)
      v = -v;
    x[n++] = v;
  }
  return n;
}

static const fmtdesc fmts32[] = {
  { "tf32", 11, -126, 127, 0x1.ffcp+127, 1 },
  { "fp16", 11, -14, 15, 65504, 1 },
  { "bf16", 8, -126, 127, 0x1.fep+127, 1 },
  { "e4m3", 4, -6, 8, 448, 0 },
  { "e5m2", 3, -14, 15, 57344, 1 },
  { "e4m3fnuz", 4, -7, 7, 240, 0 },
  { "e5m2fnuz", 3, -15, 15, 57344, 0 },
  { "custom", 5, -10, 10, 0x1.fp+10, 1 },      /* p=5, emin=-10, emax=10 */
  { "custom", 20, -60, 60, 0x1.ffffep+60, 1 },
  { "custom", 2, -2, 3, 12, 1 },
  { "custom", 11, -140, 100, 0x1.ffcp+100, 1 }, /* emin below binary32's: reference path */
};

static const mpe_format *get_fmt(const fmtdesc *d, mpe_format **owned)
{
  *owned = NULL;
  if (strcmp(d->name, "custom"))
    return mpe_format_lookup(d->name);
  ck_assert_int_eq(mpe_format_custom(owned, d->p, d->emin, d->emax), MPE_OK);
  return *owned;
}

/* f32 arrays (SIMD and reference kernels), every deterministic mode, saturation and flushing */
START_TEST(test_mpfr_f32)
{
  const fmtdesc *d = &fmts32[_i];
  mpe_format *owned;
  const mpe_format *f = get_fmt(d, &owned);
  enum { N = 60000 };
  static double xd[N];
  static float x[N], y[N];
  uint64_t rs = ts_seed() + (uint64_t)_i * 7919;
  size_t n = make_inputs(xd, N, d, &rs, 1);
  for (size_t i = 0; i < n; i++)
    x[i] = (float)xd[i];
  long total = 0;
  for (int lvl = 0; lvl <= 2; lvl++) {
    mpe_simd_level_set(lvl);
    for (int r = 0; r < 6; r++)
      for (int sat = 0; sat < 2; sat++)
        for (int fl = 0; fl < 2; fl++) {
          mpe_round_opts o = { ts_tf_round[r], fl, sat, 0, 0 };
          ck_assert_int_eq(mpe_round_f32(y, x, n, f, &o), MPE_OK);
          for (size_t i = 0; i < n; i++) {
            double want = oracle(x[i], d, ts_tf_round[r], sat, fl);
            if (!ts_same_f64(y[i], (float)want))
              ck_abort_msg("%s p=%d lvl %d mode %s sat %d flush %d: x=%a got %a want %a", d->name,
                           d->p, lvl, mpe_round_name(ts_tf_round[r]), sat, fl, x[i], y[i], want);
          }
          total += (long)n;
        }
  }
  mpe_simd_level_set(-1);
  /* the scalar conversions of the named formats */
  for (int r = 0; r < 6; r++)
    for (size_t i = 0; i < n; i++) {
      double want = oracle(x[i], d, ts_tf_round[r], 0, 0), got;
      if (!strcmp(d->name, "tf32"))
        got = mpe_fp32_to_tf32(x[i], ts_tf_round[r]);
      else if (!strcmp(d->name, "fp16"))
        got = mpe_fp16_to_fp32(mpe_fp32_to_fp16(x[i], ts_tf_round[r]));
      else if (!strcmp(d->name, "bf16"))
        got = mpe_bf16_to_fp32(mpe_fp32_to_bf16(x[i], ts_tf_round[r]));
      else if (!strcmp(d->name, "e4m3")) {
        got = mpe_e4m3_to_fp32(mpe_fp32_to_e4m3(x[i], ts_tf_round[r], 0));
        double ws = oracle(x[i], d, ts_tf_round[r], 1, 0);
        double gs = mpe_e4m3_to_fp32(mpe_fp32_to_e4m3(x[i], ts_tf_round[r], 1));
        ck_assert_msg(ts_same_f64(gs, ws), "e4m3 sat x=%a got %a want %a", x[i], gs, ws);
      } else if (!strcmp(d->name, "e5m2")) {
        got = mpe_e5m2_to_fp32(mpe_fp32_to_e5m2(x[i], ts_tf_round[r], 0));
        double ws = oracle(x[i], d, ts_tf_round[r], 1, 0);
        double gs = mpe_e5m2_to_fp32(mpe_fp32_to_e5m2(x[i], ts_tf_round[r], 1));
        ck_assert_msg(ts_same_f64(gs, ws), "e5m2 sat x=%a got %a want %a", x[i], gs, ws);
      } else if (!strcmp(d->name, "e4m3fnuz") || !strcmp(d->name, "e5m2fnuz")) {
        /* the codes have one zero (+0) and one NaN (0x80): overflow, inf and NaN give it */
        const int fz = d->p == 3;
        want += 0.0;
        for (int sat = 0; sat < 2; sat++) {
          uint8_t q = fz ? mpe_fp32_to_e5m2fnuz(x[i], ts_tf_round[r], sat) : mpe_fp32_to_e4m3fnuz(x[i], ts_tf_round[r], sat);
          double ws = oracle(x[i], d, ts_tf_round[r], sat, 0) + 0.0;
          ck_assert_msg(isnan(ws) ? q == 0x80 : q != 0x80, "%s sat %d x=%a: code %02x", d->name, sat, x[i], q);
          double gs = fz ? mpe_e5m2fnuz_to_fp32(q) : mpe_e4m3fnuz_to_fp32(q);
          ck_assert_msg(ts_same_f64(gs, ws) || (isnan(gs) && isnan(ws)), "%s sat %d x=%a got %a want %a", d->name,
                        sat, x[i], gs, ws);
          if (!sat)
            got = gs;
        }
        if (isnan(want) && isnan(got))
          got = want;
      } else
        break;
      ck_assert_msg(ts_same_f64(got, want), "%s scalar mode %s x=%a got %a want %a", d->name,
                    mpe_round_name(ts_tf_round[r]), x[i], got, want);
      total++;
    }
  fprintf(stderr, "mpfr f32 %s(p=%d,emin=%d,emax=%d): %ld results match\n", d->name, d->p, d->emin,
          d->emax, total);
  mpe_format_free(owned);
}
END_TEST

/* binary64 inputs: one rounding straight to the format */
START_TEST(test_mpfr_f64)
{
  static const fmtdesc fmts64[] = {
    { "fp16", 11, -14, 15, 65504, 1 },
    { "bf16", 8, -126, 127, 0x1.fep+127, 1 },
    { "e4m3", 4, -6, 8, 448, 0 },
    { "e5m2", 3, -14, 15, 57344, 1 },
    { "e4m3fnuz", 4, -7, 7, 240, 0 },
    { "e5m2fnuz", 3, -15, 15, 57344, 0 },
    { "fp32", 24, -126, 127, 0x1.fffffep+127, 1 },
    { "custom", 30, -300, 300, 0x1.fffffff8p+300, 1 },
    { "custom", 53, -1000, 1000, 0x1.fffffffffffffp+1000, 1 },
    { "custom", 3, -1, 2, 7, 1 },
  };
  const fmtdesc *d = &fmts64[_i];
  mpe_format *owned;
  const mpe_format *f = get_fmt(d, &owned);
  enum { N = 40000 };
  static double x[N], y[N];
  uint64_t rs = ts_seed() + 31 + (uint64_t)_i;
  size_t n = make_inputs(x, N, d, &rs, 0);
  long total = 0;
  for (int r = 0; r < 6; r++)
    for (int sat = 0; sat < 2; sat++)
      for (int fl = 0; fl < 2; fl++) {
        mpe_round_opts o = { ts_tf_round[r], fl, sat, 0, 0 };
        ck_assert_int_eq(mpe_round_f64(y, x, n, f, &o), MPE_OK);
        for (size_t i = 0; i < n; i++) {
          double want = oracle(x[i], d, ts_tf_round[r], sat, fl);
          ck_assert_msg(ts_same_f64(y[i], want), "%s f64 mode %s sat %d fl %d x=%a got %a want %a",
                        d->name, mpe_round_name(ts_tf_round[r]), sat, fl, x[i], y[i], want);
        }
        total += (long)n;
      }
  if (!strcmp(d->name, "bf16") || !strcmp(d->name, "fp16"))
    for (int r = 0; r < 6; r++)
      for (size_t i = 0; i < n; i++) {
        double want = oracle(x[i], d, ts_tf_round[r], 0, 0);
        double got = d->p == 8 ? mpe_bf16_to_fp32(mpe_fp64_to_bf16(x[i], ts_tf_round[r]))
                               : mpe_fp16_to_fp32(mpe_fp64_to_fp16(x[i], ts_tf_round[r]));
        ck_assert_msg(ts_same_f64(got, want), "%s scalar f64 x=%a got %a want %a", d->name, x[i], got, want);
        total++;
      }
  fprintf(stderr, "mpfr f64 %s(p=%d,emin=%d,emax=%d): %ld results match\n", d->name, d->p, d->emin,
          d->emax, total);
  mpe_format_free(owned);
}
END_TEST

START_TEST(test_facts)
{
  /* docs/DESIGN.md §4 facts, stated directly */
  ck_assert_uint_eq(mpe_fp32_to_fp16(65519.f, MPE_RNE), 0x7bff);
  ck_assert_uint_eq(mpe_fp32_to_fp16(65520.f, MPE_RNE), 0x7c00);
  ck_assert_uint_eq(mpe_fp32_to_fp16(0x1p-25f, MPE_RNE), 0x0000);
  ck_assert_uint_eq(mpe_fp32_to_fp16(0x1.000002p-25f, MPE_RNE), 0x0001);
  ck_assert_uint_eq(mpe_fp32_to_e4m3(464.f, MPE_RNE, 0), 0x7e);    /* tie to 448 */
  ck_assert_uint_eq(mpe_fp32_to_e4m3(465.f, MPE_RNE, 0) & 0x7f, 0x7f);   /* NaN */
  ck_assert_uint_eq(mpe_fp32_to_e4m3(465.f, MPE_RNE, 1), 0x7e);
  ck_assert_uint_eq(mpe_fp32_to_e4m3(-INFINITY, MPE_RNE, 1), 0xfe);
  ck_assert_uint_eq(mpe_fp32_to_e4m3(INFINITY, MPE_RNE, 0), 0x7f);
  /* FNUZ: 248 is the tie between 240 (odd) and 256 (beyond the largest): NaN, or 240 saturated */
  ck_assert_uint_eq(mpe_fp32_to_e4m3fnuz(247.99f, MPE_RNE, 0), 0x7f);
  ck_assert_uint_eq(mpe_fp32_to_e4m3fnuz(248.f, MPE_RNE, 0), 0x80);
  ck_assert_uint_eq(mpe_fp32_to_e4m3fnuz(-248.f, MPE_RNE, 1), 0xff);
  ck_assert_uint_eq(mpe_fp32_to_e4m3fnuz(INFINITY, MPE_RNE, 0), 0x80);
  ck_assert_uint_eq(mpe_fp32_to_e4m3fnuz(-INFINITY, MPE_RNE, 1), 0xff);
  ck_assert_uint_eq(mpe_fp32_to_e4m3fnuz(NAN, MPE_RNE, 1), 0x80);
  ck_assert_uint_eq(mpe_fp32_to_e4m3fnuz(-0.0f, MPE_RNE, 0), 0x00);
  ck_assert_uint_eq(mpe_fp32_to_e4m3fnuz(-0x1p-12f, MPE_RNE, 0), 0x00);   /* below half the least */
  ck_assert_uint_eq(mpe_fp32_to_e4m3fnuz(-0x1p-12f, MPE_RD, 0), 0x81);    /* -2^-10 */
  ck_assert_uint_eq(mpe_fp32_to_e4m3fnuz(0x1.8p-10f, MPE_RNE, 0), 0x02);  /* tie at 1.5 ulp: even */
  ck_assert_uint_eq(mpe_fp32_to_e5m2fnuz(61439.f, MPE_RNE, 0), 0x7f);
  ck_assert_uint_eq(mpe_fp32_to_e5m2fnuz(61440.f, MPE_RNE, 0), 0x80);
  ck_assert_uint_eq(mpe_fp32_to_e5m2fnuz(1e6f, MPE_RZ, 0), 0x7f);         /* toward zero: the largest */
  ck_assert_uint_eq(mpe_fp32_to_e5m2fnuz(-1e6f, MPE_RNE, 1), 0xff);
  ck_assert_uint_eq(mpe_fp32_to_e5m2fnuz(0x1p-17f, MPE_RNE, 0), 0x01);
  ck_assert(isnan(mpe_e5m2fnuz_to_fp32(0x80)) && mpe_e5m2fnuz_to_fp32(0xff) == -57344.f);
  ck_assert_uint_eq(mpe_fp32_to_e5m2(61440.f, MPE_RNE, 0), 0x7c);
  ck_assert_uint_eq(mpe_fp32_to_e5m2(61439.f, MPE_RNE, 0), 0x7b);
  ck_assert_uint_eq(mpe_fp32_to_e5m2(INFINITY, MPE_RNE, 1), 0x7b);
  ck_assert_uint_eq(mpe_fp32_to_e5m2(NAN, MPE_RNE, 1) & 0x7f, 0x7e);
  /* one rounding from binary64 (ml_dtypes double-rounds this to 1.0) */
  ck_assert_uint_eq(mpe_fp64_to_bf16(1 + 0x1p-8 + 0x1p-40, MPE_RNE), 0x3f81);
  ck_assert_uint_eq(mpe_fp32_to_bf16((float)(1 + 0x1p-8 + 0x1p-40), MPE_RNE), 0x3f80);
  /* sign of zero under directed rounding */
  ck_assert_uint_eq(mpe_fp32_to_fp16(-0x1p-30f, MPE_RU), 0x8000);
  ck_assert_uint_eq(mpe_fp32_to_fp16(-0x1p-30f, MPE_RZ), 0x8000);
  ck_assert_uint_eq(mpe_fp32_to_fp16(-0x1p-30f, MPE_RD), 0x8001);
  ck_assert_uint_eq(mpe_fp32_to_fp16(-0.0f, MPE_RD), 0x8000);
  ck_assert_uint_eq(mpe_fp32_to_fp16(0x1p-30f, MPE_RO), 0x0001);
  /* TF32 keeps 10 fraction bits */
  ck_assert_uint_eq(ts_f2u(mpe_fp32_to_tf32(ts_u2f(0x3f801000u), MPE_RNE)), 0x3f800000u);  /* tie, even */
  ck_assert_uint_eq(ts_f2u(mpe_fp32_to_tf32(ts_u2f(0x3f803000u), MPE_RNE)), 0x3f804000u);
  ck_assert_uint_eq(ts_f2u(mpe_fp32_to_tf32(ts_u2f(0x3f801fffu), MPE_RZ)), 0x3f800000u);
  /* canonical NaNs keep the sign */
  ck_assert_uint_eq(mpe_fp32_to_fp16(-NAN, MPE_RNE), 0xfe00);
  ck_assert_uint_eq(mpe_fp32_to_bf16(NAN, MPE_RNE), 0x7fc0);
  /* an out-of-range mode is RNE (documented) */
  ck_assert_uint_eq(mpe_fp32_to_fp16(1.0f + 0x1p-11f, (mpe_round)77), 0x3c00);
}
END_TEST

/* binary32 -> FP16 vs the F16C instruction: a stride by default, all 2^32 with MPE_CHECK_EXPENSIVE */
#if defined(__x86_64__)
__attribute__((target("f16c,avx2"))) static long f16c_range(uint64_t start, uint64_t end, uint64_t stride,
                                                            const mpe_round *modes, long *count)
{
  enum { B = 4096 };
  float x[B], y[B];
  long bad = 0;
  for (int mi = 0; mi < 4; mi++) {
    mpe_round_opts o = { modes[mi], 0, 0, 0, 0 };
    const int imm[4] = { _MM_FROUND_TO_NEAREST_INT, _MM_FROUND_TO_ZERO, _MM_FROUND_TO_POS_INF,
                         _MM_FROUND_TO_NEG_INF };
    for (uint64_t u = start; u < end;) {
      int n = 0;
      for (; n < B && u < end; n++, u += stride)
        x[n] = ts_u2f((uint32_t)u);
      mpe_round_f32(y, x, (size_t)n, mpe_format_of(MPE_FP16), &o);
      for (int i = 0; i < n; i += 8) {
        __m256 v;
        float tmp[8] = { 0 };
        memcpy(tmp, x + i, sizeof(float) * (size_t)(n - i < 8 ? n - i : 8));
        v = _mm256_loadu_ps(tmp);
        __m128i h;
        switch (imm[mi]) {
        case _MM_FROUND_TO_NEAREST_INT: h = _mm256_cvtps_ph(v, _MM_FROUND_TO_NEAREST_INT); break;
        case _MM_FROUND_TO_ZERO: h = _mm256_cvtps_ph(v, _MM_FROUND_TO_ZERO); break;
        case _MM_FROUND_TO_POS_INF: h = _mm256_cvtps_ph(v, _MM_FROUND_TO_POS_INF); break;
        default: h = _mm256_cvtps_ph(v, _MM_FROUND_TO_NEG_INF); break;
        }
        float back[8];
        _mm256_storeu_ps(back, _mm256_cvtph_ps(h));
        for (int j = 0; j < 8 && i + j < n; j++) {
          float a = back[j], b = y[i + j];
          int same = (isnan(a) && isnan(b)) || ts_f2u(a) == ts_f2u(b);
          if (!same) {
            if (bad < 5)
              fprintf(stderr, "F16C mismatch x=%08x mode %d: %08x vs %08x\n", ts_f2u(x[i + j]), mi,
                      ts_f2u(b), ts_f2u(a));
            bad++;
          }
        }
        (*count) += n - i < 8 ? n - i : 8;
      }
    }
  }
  return bad;
}
#endif

START_TEST(test_f16c)
{
#if defined(__x86_64__)
  __builtin_cpu_init();
  unsigned eax, ebx, ecx, edx;   /* F16C: CPUID 1, ECX bit 29 (clang's __builtin_cpu_supports lacks "f16c") */
  if (!__get_cpuid(1, &eax, &ebx, &ecx, &edx) || !(ecx & bit_F16C) || !__builtin_cpu_supports("avx2")) {
    fprintf(stderr, "no F16C on this CPU: comparison skipped\n");
    return;
  }
  static const mpe_round modes[4] = { MPE_RNE, MPE_RZ, MPE_RU, MPE_RD };
  /* an odd stride visits every low-bit pattern: 257, or 257 x MPE_CHECK_SUBSET made odd */
  uint64_t stride = ts_expensive() ? 1 : (257 * (uint64_t)ts_subset()) | 1;
  long count = 0, bad = 0;
#pragma omp parallel for reduction(+ : count, bad) schedule(dynamic)
  for (int chunk = 0; chunk < 256; chunk++) {
    uint64_t start = (uint64_t)chunk << 24, end = start + (1u << 24);
    start += (stride - start % stride) % stride;
    long c = 0;
    bad += f16c_range(start, end, stride, modes, &c);
    count += c;
  }
  fprintf(stderr, "F16C: %ld binary32 inputs x modes compared (stride %llu), %ld mismatches\n", count,
          (unsigned long long)stride, bad);
  ck_assert_int_eq(bad, 0);
#endif
}
END_TEST

int main(void)
{
  Suite *s = suite_create("convert");
  TCase *tc = tcase_create("testfloat");
  tcase_add_loop_test(tc, test_testfloat, 0, 18);
  tcase_set_timeout(tc, 1800);
  suite_add_tcase(s, tc);
  tc = tcase_create("exhaustive");
  tcase_add_test(tc, test_exhaustive16);
  tcase_add_test(tc, test_exhaustive8);
  tcase_add_test(tc, test_facts);
  tcase_set_timeout(tc, 1800);
  suite_add_tcase(s, tc);
  tc = tcase_create("mpfr");
  tcase_add_loop_test(tc, test_mpfr_f32, 0, (int)(sizeof fmts32 / sizeof fmts32[0]));
  tcase_add_loop_test(tc, test_mpfr_f64, 0, 10);
  tcase_set_timeout(tc, 1800);
  suite_add_tcase(s, tc);
  tc = tcase_create("f16c");
  tcase_add_test(tc, test_f16c);
  tcase_set_timeout(tc, 7200);
  suite_add_tcase(s, tc);
  return ts_run(s);
}
