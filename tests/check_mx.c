/* The OCP MX element formats (FP6 E2M3, E3M2, FP4 E2M1, the E8M0 scale) as
   rows of formats.def, as rounding targets (mpe_round_f32/f64 against MPFR),
   and the block-scaled arrays (mpe_mx_quantize_f32/dequantize_f32) against an
   oracle of exact MPFR comparisons. */
#include <math.h>
#include <mpfr.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "testsupport.h"
#include <unistd.h>
#include "mpemu/io.h"
#include "mpemu/mx.h"

/* the element formats, from the OCP MX v1.0 tables (not from the library) */
static const struct {
  mpe_type t;
  const char *name;
  int ebits, mbits, bias;
  double maxv, minnorm, minsub;
} spec[] = {
  { MPE_E2M3, "e2m3", 2, 3, 1, 7.5, 1.0, 0.125 },
  { MPE_E3M2, "e3m2", 3, 2, 3, 28.0, 0.25, 0.0625 },
  { MPE_E2M1, "e2m1", 2, 1, 1, 6.0, 1.0, 0.5 },
};
#define NSPEC (sizeof spec / sizeof spec[0])

/* value of a code, from the field layout: no inf, no NaN */
static double spec_decode(int s, uint32_t c)
{
  int mb = spec[s].mbits, eb = spec[s].ebits;
  uint32_t m = c & ((1u << mb) - 1), e = (c >> mb) & ((1u << eb) - 1);
  double v = e ? ldexp(1.0 + ldexp(m, -mb), (int)e - spec[s].bias) : ldexp(m, 1 - spec[s].bias - mb);
  return (c >> (eb + mb)) & 1 ? -v : v;
}

START_TEST(test_rows)
{
  long checked = 0;
  for (size_t s = 0; s < NSPEC; s++) {
    const mpe_format *f = mpe_format_of(spec[s].t);
    ck_assert_ptr_nonnull(f);
    ck_assert_ptr_eq(mpe_format_lookup(spec[s].name), f);
    ck_assert_str_eq(mpe_type_name(spec[s].t), spec[s].name);
    ck_assert(mpe_format_max(f) == spec[s].maxv);
    ck_assert(mpe_format_min_normal(f) == spec[s].minnorm);
    ck_assert(mpe_format_min_subnormal(f) == spec[s].minsub);
    ck_assert_int_eq(mpe_format_has_inf(f), 0);
    ck_assert_int_eq(mpe_format_has_nan(f), 0);
    ck_assert_int_eq(mpe_format_precision(f), spec[s].mbits + 1);
    /* every code is finite; rounding its value gives it back (f32 and f64) */
    int ncode = 1 << (1 + spec[s].ebits + spec[s].mbits);
    for (int c = 0; c < ncode; c++) {
      double v = spec_decode((int)s, (uint32_t)c);
      float x = (float)v, y;
      double yd;
      ck_assert_int_eq(mpe_round_f32(&y, &x, 1, f, NULL), MPE_OK);
      ck_assert_int_eq(mpe_round_f64(&yd, &v, 1, f, NULL), MPE_OK);
      ck_assert(ts_same_f64(y, v) && ts_same_f64(yd, v));
      checked++;
    }
  }
  ck_assert_ptr_eq(mpe_format_lookup("fp4"), mpe_format_of(MPE_E2M1));
  ck_assert_ptr_eq(mpe_format_lookup("FP6_E3M2"), mpe_format_of(MPE_E3M2));
  /* E8M0: 2^(c - 127), 0xFF NaN; no sign; not a rounding target */
  const mpe_format *e8 = mpe_format_lookup("e8m0");
  ck_assert_ptr_eq(e8, mpe_format_of(MPE_E8M0));
  ck_assert_int_eq(mpe_format_is_signed(e8), 0);
  ck_assert(mpe_format_max(e8) == 0x1p127 && mpe_format_min_normal(e8) == 0x1p-127);
  float x = 1.0f, y;
  ck_assert_int_eq(mpe_round_f32(&y, &x, 1, e8, NULL), MPE_EUNSUP);
  ck_assert(isnan(mpe_round_scalar(1.0, e8, NULL)));
  printf("MX rows: %ld codes of e2m3/e3m2/e2m1 round to themselves\n", checked);
}
END_TEST

/* the suite's oracle with OCP's rule: FP6/FP4 saturate (inf included) */
static double oracle(double x, const mpe_format *f, mpe_round r)
{
  if (isnan(x))
    return x;
  ts_fmt g = ts_fmt_of(f);
  mpfr_t v;
  mpfr_init2(v, 53);
  mpfr_set_d(v, x, MPFR_RNDN);
  double res = ts_round_mpfr(v, &g, r, 1, NULL);
  mpfr_clear(v);
  return res;
}

static size_t boundary_inputs(const mpe_format *f, float *x)
{
  size_t n = 0;
  /* every value, every midpoint, and their binary32 neighbours, both signs */
  double v[300];
  size_t nv = 0;
  double maxv = mpe_format_max(f);
  for (double a = 0; a <= maxv; a = nextafter(a, INFINITY)) {
    double r = mpe_round_scalar(a, f, &(mpe_round_opts){ MPE_RU, 0, 0, 0, 0 });
    if (r > maxv)
      break;
    v[nv++] = r;
    a = r;
  }
  for (size_t i = 0; i < nv; i++) {
    double pts[3] = { v[i], i + 1 < nv ? (v[i] + v[i + 1]) / 2 : v[i] * 1.03125, v[i] * 2 };
    for (int k = 0; k < 3; k++) {
      float c = (float)pts[k];
      float nb[3] = { c, nextafterf(c, INFINITY), nextafterf(c, -INFINITY) };
      for (int j = 0; j < 3; j++) {
        x[n++] = nb[j];
        x[n++] = -nb[j];
      }
    }
  }
  /* every binary32 exponent: 2^e, its neighbours, 1.5 * 2^e; and the specials */
  for (int e = -149; e <= 127; e++) {
    float p = ldexpf(1.0f, e);
    float pts[4] = { p, nextafterf(p, INFINITY), nextafterf(p, 0), e > -149 && e < 127 ? 1.5f * p : p };
    for (int j = 0; j < 4; j++) {
      x[n++] = pts[j];
      x[n++] = -pts[j];
    }
  }
  float sp[] = { 0.0f, -0.0f, INFINITY, -INFINITY, NAN, FLT_MAX, -FLT_MAX };
  for (size_t j = 0; j < sizeof sp / sizeof sp[0]; j++)
    x[n++] = sp[j];
  return n;
}

START_TEST(test_round_mpfr)
{
  enum { NB = 8192, NR = 1 << 21 };
  float *x = malloc((NB + NR) * sizeof *x), *y = malloc((NB + NR) * sizeof *y);
  double *xd = malloc((NB + NR) * sizeof *xd), *yd = malloc((NB + NR) * sizeof *yd);
  double *want = malloc((NB + NR) * sizeof *want);
  static const mpe_round modes[] = { MPE_RNE, MPE_RNA, MPE_RZ, MPE_RU, MPE_RD, MPE_RO };
  long total = 0, bad = 0;
  for (size_t s = 0; s < NSPEC; s++) {
    const mpe_format *f = mpe_format_of(spec[s].t);
    size_t nb = boundary_inputs(f, x);
    ck_assert_uint_lt(nb, NB);
    uint64_t st = ts_seed() + 17 * s;
    for (size_t i = 0; i < NR; i++) {   /* half any bits, half near the format's range */
      uint64_t r = ts_rand64(&st);
      uint32_t u = (uint32_t)r;
      if (r >> 63)
        u = (u & 0x807fffffu) | (uint32_t)(127 + mpe_format_emin(f) - 6 + (int)((r >> 40) % 16)) << 23;
      x[nb + i] = ts_u2f(u);
    }
    for (size_t m = 0; m < sizeof modes / sizeof modes[0]; m++) {
      /* RNE on every input; the other modes on the boundary inputs and 1/8 of the random ones */
      size_t n = modes[m] == MPE_RNE ? nb + NR : nb + NR / 8;
      mpe_round_opts o = { modes[m], 0, 0, 0, 0 };
      for (size_t i = 0; i < n; i++) {
        xd[i] = x[i];
        want[i] = oracle(x[i], f, modes[m]);
      }
      for (int lvl = 0; lvl < 2; lvl++) {   /* the reference, then the SIMD kernel */
        mpe_simd_level_set(lvl ? -1 : 0);
        ck_assert_int_eq(mpe_round_f32(y, x, n, f, &o), MPE_OK);
        if (!lvl)
          ck_assert_int_eq(mpe_round_f64(yd, xd, n, f, &o), MPE_OK);
        for (size_t i = 0; i < n; i++) {
          int ok = ts_same_f64(y[i], want[i]) && (lvl || ts_same_f64(yd[i], want[i]));
          if (!ok && bad < 10)
            fprintf(stderr, "%s %s lvl %d: x=%a got %a/%a want %a\n", spec[s].name, mpe_round_name(modes[m]), lvl,
                    (double)x[i], (double)y[i], yd[i], want[i]);
          bad += !ok;
          total++;
        }
      }
      mpe_simd_level_set(-1);
    }
  }
  printf("MX element rounding vs MPFR: %ld values (e2m3, e3m2, e2m1; 6 modes; f32 reference and SIMD, f64), "
         "%ld wrong\n", total, bad);
  ck_assert_int_eq(bad, 0);
  free(x), free(y), free(xd), free(yd), free(want);
}
END_TEST

/* ---- block-scaled arrays: the oracle, by exact MPFR comparisons */

/* the non-negative values of format t, ascending, codes 0.. (E4M3: without NaN) */
static int values_of(mpe_type t, double *v)
{
  const mpe_format *f = mpe_format_of(t);
  int n = 0;
  for (double a = 0;; a = nextafter(v[n - 1], INFINITY)) {
    double r = mpe_round_scalar(a, f, &(mpe_round_opts){ MPE_RU, 0, 1, 0, 0 });
    if (n && r <= v[n - 1])
      break;
    v[n++] = r;
    if (r == mpe_format_max(f))
      break;
  }
  return n;
}

/* a / b to 256 bits, truncated with a sticky bit: it stands for the exact
   quotient in the oracle (ts_round_mpfr) */
static void div_sticky(mpfr_t q, double a, double b)
{
  mpfr_t x, y, t;
  mpfr_inits2(64, x, y, (mpfr_ptr)0);
  mpfr_init2(t, 255);
  mpfr_set_d(x, a, MPFR_RNDN);
  mpfr_set_d(y, b, MPFR_RNDN);
  int ix = mpfr_div(t, x, y, MPFR_RNDZ);
  mpfr_set(q, t, MPFR_RNDN);   /* exact: q has 256 bits */
  if (ix && mpfr_regular_p(q)) {
    mpfr_set_si_2exp(x, mpfr_sgn(q), mpfr_get_exp(q) - 256, MPFR_RNDN);
    mpfr_add(q, q, x, MPFR_RNDN);   /* exact */
  }
  mpfr_clears(x, y, t, (mpfr_ptr)0);
}

/* q rounded by the oracle to format t (RNE, saturating, OCP's rule), as the
   index of its magnitude in v[0..n) (the values of values_of), signed: -i-1
   for a negative result */
static int nearest(mpfr_t q, mpe_type t, const double *v, int n)
{
  ts_fmt g = ts_fmt_type(t);
  double r = ts_round_mpfr(q, &g, MPE_RNE, 1, NULL), a = fabs(r);
  int i = 0;
  while (i < n && v[i] != a)
    i++;
  ck_assert_msg(i < n, "%a rounded to %a, not a value of %s", mpfr_get_d(q, MPFR_RNDN), r, mpe_type_name(t));
  return signbit(r) ? -i - 1 : i;
}

static int dbg_left = 8;

static int mx_check_block(mpe_mx_kind k, const float *x, size_t m, const uint8_t *elem, uint8_t scale,
                          const double *ev, int nev, const double *sv, int nsv)
{
  mpe_type et = (mpe_type)mpe_mx_element_type(k);
  const mpe_format *ef = mpe_format_of(et);
  int bad = 0, special = 0;
  double amax = 0;
  for (size_t i = 0; i < m; i++) {
    if (!isfinite(x[i]))
      special = 1;
    else if (fabs(x[i]) > amax)
      amax = fabs(x[i]);
  }
  mpfr_t q;
  mpfr_init2(q, 256);
  int want_scale;
  if (special) {
    want_scale = k == MPE_NVFP4 ? 0x7f : 0xff;
  } else if (k == MPE_NVFP4) {
    div_sticky(q, amax, 6);
    want_scale = nearest(q, MPE_E4M3, sv, nsv);
  } else {
    int e = amax > 0 ? (int)mpfr_get_exp((mpfr_set_d(q, amax, MPFR_RNDN), q)) - 1 - mpe_format_emax(ef) : -127;
    want_scale = (e < -127 ? -127 : e > 127 ? 127 : e) + 127;
  }
  bad += scale != want_scale;
  if (scale != want_scale && dbg_left > 0 && dbg_left--)
    fprintf(stderr, "%s: scale %d want %d (amax %a)\n", mpe_mx_name(k), scale, want_scale, amax);
  double sval = special ? 0 : k == MPE_NVFP4 ? sv[want_scale] : ldexp(1.0, want_scale - 127);
  int sbit = 1 << (mpe_format_precision(ef) - 1 + (et == MPE_E2M1 ? 2 : et == MPE_E2M3 ? 2 : et == MPE_E3M2 ? 3 :
                                                    et == MPE_E4M3 ? 4 : 5));
  for (size_t i = 0; i < m; i++) {
    int want;
    if (special || sval == 0) {
      want = signbit(x[i]) && !special ? sbit : 0;
    } else {
      div_sticky(q, x[i], sval);
      int j = nearest(q, et, ev, nev);
      want = j < 0 ? sbit | (-j - 1) : j;
    }
    if (elem[i] != want && dbg_left > 0 && dbg_left--)
      fprintf(stderr, "%s: x %a scale %d: code %#x want %#x\n", mpe_mx_name(k), (double)x[i], scale, elem[i], want);
    bad += elem[i] != want;
  }
  mpfr_clear(q);
  return bad;
}

START_TEST(test_mx_blocks)
{
  static const mpe_mx_kind ks[] = { MPE_MXFP8_E4M3, MPE_MXFP8_E5M2, MPE_MXFP6_E2M3, MPE_MXFP6_E3M2, MPE_MXFP4,
                                    MPE_NVFP4 };
  enum { NBLK = 6000 };
  double sv[128];
  int nsv = values_of(MPE_E4M3, sv);
  ck_assert_int_eq(nsv, 127);
  long blocks = 0, elems = 0, bad = 0, deq = 0;
  for (size_t kk = 0; kk < sizeof ks / sizeof ks[0]; kk++) {
    mpe_mx_kind k = ks[kk];
    size_t B = (size_t)mpe_mx_block(k), n = B * NBLK + B / 2;   /* a short last block */
    double ev[256];
    int nev = values_of((mpe_type)mpe_mx_element_type(k), ev);
    float *x = malloc(n * sizeof *x), *y = malloc(n * sizeof *y);
    uint8_t *el = malloc(n), *sc = malloc(n / B + 1);
    uint64_t st = ts_seed() + 101 * kk;
    for (size_t b = 0; b * B < n; b++) {
      uint64_t r = ts_rand64(&st);
      int kind = (int)(r % 16), e0 = (int)((r >> 8) % 300) - 150;
      for (size_t i = b * B; i < n && i < (b + 1) * B; i++) {
        uint64_t w = ts_rand64(&st);
        float v = ldexpf((float)(w >> 40) * 0x1p-24f, e0 + (int)((w >> 8) % 24) - 12);
        switch (kind) {
        case 0: v = 0; break;                                          /* all zero */
        case 1: v = i == b * B + 3 ? NAN : v; break;                   /* a NaN */
        case 2: v = i == b * B + 5 ? -INFINITY : v; break;             /* an infinity */
        case 3: v = ts_u2f((uint32_t)w & 0x807fffffu); break;          /* subnormal binary32 */
        case 4: v = (w & 1) ? FLT_MAX : ldexpf(1.0f, 127); break;      /* the largest */
        case 5: v = ldexpf((float)(w % 64) * 0.0625f, e0 / 8); break;  /* ties and exact values */
        default: break;
        }
        x[i] = (w >> 7) & 1 ? -v : v;
      }
    }
    ck_assert_int_eq(mpe_mx_quantize_f32(el, sc, x, n, k, NULL), MPE_OK);
    ck_assert_int_eq(mpe_mx_dequantize_f32(y, el, sc, n, k), MPE_OK);
    for (size_t b = 0; b * B < n; b++) {
      size_t m = n - b * B < B ? n - b * B : B;
      int bb = mx_check_block(k, x + b * B, m, el + b * B, sc[b], ev, nev, sv, nsv);
      if (bb && bad < 5)
        fprintf(stderr, "%s block %zu: %d wrong\n", mpe_mx_name(k), b, bb);
      bad += bb;
      blocks++;
      elems += (long)m;
    }
    /* dequantised = element value * scale value, exactly */
    const mpe_format *ef = mpe_format_of((mpe_type)mpe_mx_element_type(k));
    const mpe_format *sf = mpe_format_of((mpe_type)mpe_mx_scale_type(k));
    for (size_t i = 0; i < n; i++) {
      int nanscale = sc[i / B] == (k == MPE_NVFP4 ? 0x7f : 0xff);
      double s = k == MPE_NVFP4 ? sv[sc[i / B]] : ldexp(1.0, sc[i / B] - 127);
      int sb = 1 << (mpe_format_precision(ef) - 1 + (k == MPE_MXFP8_E4M3 ? 4 : k == MPE_MXFP8_E5M2 ? 5 :
                                                   k == MPE_MXFP6_E3M2 ? 3 : 2));
      double e = (el[i] & sb ? -1 : 1) * ev[el[i] & (sb - 1)];
      double want = nanscale ? NAN : e * s;
      (void)sf;
      deq += !ts_same_f64(y[i], (float)want) && !(want == 0 && y[i] == 0 && signbit(want) == signbit(y[i]));
    }
    free(x), free(y), free(el), free(sc);
  }
  printf("MX blocks vs MPFR oracle: %ld blocks, %ld elements (mxfp8 e4m3/e5m2, mxfp6 e2m3/e3m2, mxfp4, nvfp4): "
         "%ld wrong codes, %ld wrong dequantised values\n", blocks, elems, bad, deq);
  ck_assert_int_eq(bad, 0);
  ck_assert_int_eq(deq, 0);
}
END_TEST

START_TEST(test_mx_api)
{
  float x[40] = { 1 }, y[40];
  uint8_t e[40], s[2];
  ck_assert_int_eq(mpe_mx_quantize_f32(e, s, x, 40, MPE_MXINT8, NULL), MPE_EUNSUP);
  ck_assert_int_eq(mpe_mx_dequantize_f32(y, e, s, 40, MPE_MXINT8), MPE_EUNSUP);
  ck_assert_int_eq(mpe_mx_quantize_f32(e, s, x, 40, (mpe_mx_kind)99, NULL), MPE_EINVAL);
  ck_assert_int_eq(mpe_mx_quantize_f32(NULL, s, x, 40, MPE_MXFP4, NULL), MPE_EINVAL);
  ck_assert_int_eq(mpe_mx_quantize_f32(NULL, NULL, NULL, 0, MPE_MXFP4, NULL), MPE_OK);
  /* a count no buffer can hold (n floats past PTRDIFF_MAX bytes) is refused, not read */
  ck_assert_int_eq(mpe_mx_quantize_f32(e, s, x, SIZE_MAX, MPE_MXFP4, NULL), MPE_EINVAL);
  ck_assert_int_eq(mpe_mx_quantize_f32(e, s, x, (size_t)PTRDIFF_MAX / 4 + 1, MPE_NVFP4, NULL), MPE_EINVAL);
  ck_assert_int_eq(mpe_mx_dequantize_f32(y, e, s, SIZE_MAX, MPE_MXFP4), MPE_EINVAL);
  ck_assert_int_eq(mpe_mx_lookup("MXFP4"), MPE_MXFP4);
  ck_assert_int_eq(mpe_mx_lookup("nvfp4"), MPE_NVFP4);
  ck_assert_int_eq(mpe_mx_lookup("mxfp8"), MPE_MXFP8_E4M3);
  ck_assert_int_eq(mpe_mx_lookup("mxfp5"), -1);
  ck_assert_int_eq(mpe_mx_block(MPE_NVFP4), 16);
  ck_assert_int_eq(mpe_mx_block(MPE_MXFP6_E3M2), 32);
  ck_assert_int_eq(mpe_mx_scale_type(MPE_NVFP4), MPE_E4M3);
  /* amax 1: scale 2^(0 - 2), elements 1 / 0.25 = 4 (0b0110) and 0.75 / 0.25 = 3 (0b0101) */
  float z[32] = { 1.0f, 0.75f };
  ck_assert_int_eq(mpe_mx_quantize_f32(e, s, z, 32, MPE_MXFP4, NULL), MPE_OK);
  ck_assert_int_eq(s[0], 127 - 2);
  ck_assert_int_eq(e[0], 0x6);
  ck_assert_int_eq(e[1], 0x5);
  /* every E8M0 scale code: element 1.0 (e2m1 0x2) times 2^(c - 127), 0xFF NaN */
  for (int c = 0; c < 256; c++) {
    uint8_t one = 0x2, sc = (uint8_t)c;
    float v;
    ck_assert_int_eq(mpe_mx_dequantize_f32(&v, &one, &sc, 1, MPE_MXFP4), MPE_OK);
    ck_assert(c == 255 ? isnan(v) : v == ldexpf(1.0f, c - 127));
  }
  printf("MX: 256 E8M0 scale codes decode as 2^(c - 127), 0xFF NaN\n");
  /* what a block loses is flagged: a NaN in the block (the NaN scale, its finite
     values zeroed) is INVALID; an NVFP4 block whose scale amax/6 rounds to 0 in
     E4M3 (amax 1e-4) has its non-zero values underflow: INEXACT and UNDERFLOW */
  float nb[32] = { 1.0f, NAN, 2.0f };
  mpe_flags_clear(~0u);
  ck_assert_int_eq(mpe_mx_quantize_f32(e, s, nb, 32, MPE_MXFP4, NULL), MPE_OK);
  ck_assert_int_eq(s[0], 0xFF);
  ck_assert(mpe_flags_get() & MPE_FLAG_INVALID);
  float tb[16];
  for (int i = 0; i < 16; i++)
    tb[i] = 1e-4f * (float)(i % 3);
  mpe_flags_clear(~0u);
  ck_assert_int_eq(mpe_mx_quantize_f32(e, s, tb, 16, MPE_NVFP4, NULL), MPE_OK);
  ck_assert_int_eq(s[0], 0x00);
  ck_assert_uint_eq(mpe_flags_get() & (MPE_FLAG_INEXACT | MPE_FLAG_UNDERFLOW), MPE_FLAG_INEXACT | MPE_FLAG_UNDERFLOW);
  /* a finite block raises neither */
  mpe_flags_clear(~0u);
  ck_assert_int_eq(mpe_mx_quantize_f32(e, s, z, 32, MPE_MXFP4, NULL), MPE_OK);
  ck_assert_uint_eq(mpe_flags_get() & MPE_FLAG_INVALID, 0);
  mpe_flags_clear(~0u);
}
END_TEST

/* the files: E8M0 through safetensors (F8_E8M0), E2M1 codes through .npy |V1 with a dtype */
START_TEST(test_mx_files)
{
  mpe_type t;
  ck_assert_int_eq(mpe_io_dtype_lookup("F8_E8M0", &t), MPE_OK);
  ck_assert_int_eq(t, MPE_E8M0);
  ck_assert_int_eq(mpe_io_dtype_lookup("fp4", &t), MPE_OK);
  ck_assert_int_eq(t, MPE_E2M1);
  ck_assert_uint_eq(mpe_io_dtype_size(MPE_E3M2), 1);
  ck_assert_uint_eq(mpe_io_dtype_size(MPE_TF32), 0);
  uint8_t sc[256], el[16];
  for (int c = 0; c < 256; c++)
    sc[c] = (uint8_t)c;
  for (int c = 0; c < 16; c++)
    el[c] = (uint8_t)c;
  char dir[] = "/tmp/check_mx_XXXXXX", st[64], np[64];
  ck_assert_ptr_nonnull(mkdtemp(dir));
  snprintf(st, sizeof st, "%s/s.safetensors", dir);
  snprintf(np, sizeof np, "%s/e.npy", dir);
  uint64_t n256 = 256, n16 = 16;
  mpe_io_out o1 = { "scales", MPE_E8M0, 1, &n256, sc }, o2 = { "e", MPE_E2M1, 1, &n16, el };
  ck_assert_int_eq(mpe_io_write_safetensors(st, &o1, 1), MPE_OK);
  ck_assert_int_eq(mpe_io_write_npy(np, &o2), MPE_OK);
  float v[256];
  size_t n;
  mpe_io *f;
  char msg[256];
  ck_assert_int_eq(mpe_io_open(&f, st, NULL, msg, sizeof msg), MPE_OK);
  ck_assert_int_eq(mpe_io_select(f, 0), MPE_OK);
  ck_assert_int_eq(mpe_io_read(f, v, 256, &n), MPE_OK);
  ck_assert_uint_eq(n, 256);
  for (int c = 0; c < 256; c++)
    ck_assert(c == 255 ? isnan(v[c]) : v[c] == ldexpf(1.0f, c - 127));
  mpe_io_close(f);
  mpe_io_opts io = { .has_dtype = 1, .dtype = MPE_E2M1 };
  ck_assert_int_eq(mpe_io_open(&f, np, &io, msg, sizeof msg), MPE_OK);
  ck_assert_int_eq(mpe_io_select(f, 0), MPE_OK);
  ck_assert_int_eq(mpe_io_read(f, v, 16, &n), MPE_OK);
  ck_assert_uint_eq(n, 16);
  for (int c = 0; c < 16; c++)
    ck_assert(v[c] == (float)spec_decode(2, (uint32_t)c));
  mpe_io_close(f);
  remove(st);
  remove(np);
  rmdir(dir);
}
END_TEST

int main(void)
{
  Suite *s = suite_create("mx");
  TCase *tc = tcase_create("mx");
  tcase_set_timeout(tc, 1200);
  tcase_add_test(tc, test_rows);
  tcase_add_test(tc, test_round_mpfr);
  tcase_add_test(tc, test_mx_blocks);
  tcase_add_test(tc, test_mx_api);
  tcase_add_test(tc, test_mx_files);
  suite_add_tcase(s, tc);
  return ts_run(s);
}
