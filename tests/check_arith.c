/* Scalar FP16/BF16 arithmetic: TestFloat vectors (results and flags), BF16
   (and FP16) against an MPFR oracle (exhaustive sqrt, random operands weighted
   toward hard cases), stochastic-rounding statistics, NaN/zero conventions. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <mpfr.h>
#include "testsupport.h"

static const unsigned flag_mask = MPE_FLAG_INVALID | MPE_FLAG_DIVBYZERO | MPE_FLAG_OVERFLOW |
                                  MPE_FLAG_UNDERFLOW | MPE_FLAG_INEXACT;

enum { OP_ADD, OP_SUB, OP_MUL, OP_DIV, OP_SQRT, OP_FMA, NOPS };
static const char *const op_names[NOPS] = { "add", "sub", "mul", "div", "sqrt", "mulAdd" };
static const int op_arity[NOPS] = { 2, 2, 2, 2, 1, 3 };

static uint16_t do_op(int bf, int op, uint16_t a, uint16_t b, uint16_t c, mpe_round r)
{
  switch (op) {
  case OP_ADD: return bf ? mpe_bf16_add(a, b, r) : mpe_fp16_add(a, b, r);
  case OP_SUB: return bf ? mpe_bf16_sub(a, b, r) : mpe_fp16_sub(a, b, r);
  case OP_MUL: return bf ? mpe_bf16_mul(a, b, r) : mpe_fp16_mul(a, b, r);
  case OP_DIV: return bf ? mpe_bf16_div(a, b, r) : mpe_fp16_div(a, b, r);
  case OP_SQRT: return bf ? mpe_bf16_sqrt(a, r) : mpe_fp16_sqrt(a, r);
  default: return bf ? mpe_bf16_fma(a, b, c, r) : mpe_fp16_fma(a, b, c, r);
  }
}

static int nan16(uint16_t h, int bf)
{
  return bf ? (h & 0x7f80) == 0x7f80 && (h & 0x7f) : (h & 0x7c00) == 0x7c00 && (h & 0x3ff);
}

/* ---- TestFloat: every line of f16_<op>_r<mode>, results (NaN by class) and flags */
START_TEST(test_testfloat)
{
  int op = _i / 6, m = _i % 6;
  char rel[128];
  snprintf(rel, sizeof rel, "testfloat/f16_%s_r%s.txt.gz", op_names[op], ts_tf_modes[m]);
  ts_conf *fp = ts_conf_open(rel);
  ck_assert_msg(fp != NULL, "%s: missing (see the note above)", rel);
  uint64_t v[5] = { 0 };
  long n = 0, bad = 0, badflags = 0, malformed = 0;
  int k;
  while ((k = ts_conf_words(fp, 16, v, 5)) != -1) {
    if (k == 0)
      continue;
    if (k != op_arity[op] + 2) {
      if (malformed++ < 5)
        fprintf(stderr, "%s line %ld: not %d hex words\n", rel, ts_conf_lineno(fp), op_arity[op] + 2);
      continue;
    }
    unsigned want = (unsigned)v[k - 2], wantfl = (unsigned)v[k - 1];
    n++;
    mpe_flags_clear(~0u);
    uint16_t got = do_op(0, op, (uint16_t)v[0], (uint16_t)v[1], (uint16_t)v[2], ts_tf_round[m]);
    unsigned gotfl = mpe_flags_get() & flag_mask;
    int ok = nan16((uint16_t)want, 0) ? nan16(got, 0) : got == want;
    if (!ok) {
      if (bad < 5)
        fprintf(stderr, "%s line %ld: want %04x got %04x\n", rel, ts_conf_lineno(fp), want, got);
      bad++;
    }
    if (gotfl != ts_tf_flags(wantfl)) {
      if (badflags < 5)
        fprintf(stderr, "%s line %ld: flags want %02x got %x\n", rel, ts_conf_lineno(fp), wantfl, gotfl);
      badflags++;
    }
  }
  ts_conf_close(fp);
  printf("check_arith: TestFloat f16_%s r%s: %ld vectors, %ld mismatches (%ld results, %ld flag bytes)\n",
         op_names[op], ts_tf_modes[m], n, bad + badflags, bad, badflags);
  ts_conf_tally(n, bad + badflags + malformed);
  ck_assert_int_eq(malformed, 0);
  ck_assert_int_gt(n, 400);
  ck_assert_int_eq(bad, 0);
  ck_assert_int_eq(badflags, 0);
}
END_TEST

/* ---- the MPFR oracle */
typedef struct { int bf, p, emin, emax; double maxv; } fmt16;
static const fmt16 FMT_FP16 = { 0, 11, -14, 15, 65504.0 };
static const fmt16 FMT_BF16 = { 1, 8, -126, 127, 0x1.fep127 };

static double val16(uint16_t h, int bf)
{
  return bf ? (double)mpe_bf16_to_fp32(h) : (double)mpe_fp16_to_fp32(h);
}

#define BIGP 600

/* The exact result of op on finite operands in `big` (600 bits): exact for
   add/sub/mul/fma; for div/sqrt truncated to 599 bits with a sticky bit at the
   600th, which decides every rounding to fewer than 598 bits as the exact value
   would. Returns 0 when the result is not a finite number (then no oracle). */
static int exact_op(mpfr_t big, int op, double a, double b, double c)
{
  mpfr_t x, y, z;
  mpfr_inits2(64, x, y, z, (mpfr_ptr)0);
  mpfr_set_d(x, a, MPFR_RNDN);
  mpfr_set_d(y, b, MPFR_RNDN);
  mpfr_set_d(z, c, MPFR_RNDN);
  int t = 0;
  switch (op) {
  case OP_ADD: t = mpfr_add(big, x, y, MPFR_RNDZ); break;
  case OP_SUB: t = mpfr_sub(big, x, y, MPFR_RNDZ); break;
  case OP_MUL: t = mpfr_mul(big, x, y, MPFR_RNDZ); break;
  case OP_FMA: t = mpfr_fma(big, x, y, z, MPFR_RNDZ); break;
  case OP_DIV: case OP_SQRT: {
    mpfr_t tr;
    mpfr_init2(tr, BIGP - 1);
    t = op == OP_DIV ? mpfr_div(tr, x, y, MPFR_RNDZ) : mpfr_sqrt(tr, x, MPFR_RNDZ);
    mpfr_set(big, tr, MPFR_RNDN);   /* exact */
    if (t && mpfr_number_p(big) && !mpfr_zero_p(big)) {
      mpfr_t ulp;
      mpfr_init2(ulp, 2);
      mpfr_set_si_2exp(ulp, mpfr_sgn(big), mpfr_get_exp(big) - BIGP, MPFR_RNDN);
      mpfr_add(big, big, ulp, MPFR_RNDN);   /* exact */
      mpfr_clear(ulp);
    }
    mpfr_clear(tr);
    t = 0;
    break;
  }
  }
  ck_assert_int_eq(t, 0);   /* add/sub/mul/fma are exact at 600 bits */
  mpfr_clears(x, y, z, (mpfr_ptr)0);
  return mpfr_number_p(big);
}

/* big rounded to the format by the suite's oracle (IEEE overflow, subnormals,
   tininess after rounding) */
static double oracle_round(mpfr_srcptr big, const fmt16 *f, mpe_round r, unsigned *flags)
{
  ts_fmt g = { f->p, f->emin, f->emax, f->maxv, 1 };
  return ts_round_mpfr(big, &g, r, 0, flags);
}

/* Check one operand set in the 6 deterministic modes; returns the mismatches. */
static long check_case(const fmt16 *f, int op, uint16_t a, uint16_t b, uint16_t c, long *flagbad)
{
  double x = val16(a, f->bf), y = val16(b, f->bf), z = val16(c, f->bf);
  if (isnan(x) || isnan(y) || isnan(z) || isinf(x) || isinf(y) || isinf(z))
    return 0;   /* specials: TestFloat and the convention tests */
  if (op == OP_SQRT && x < 0)
    return 0;
  if (op == OP_DIV && y == 0)
    return 0;
  mpfr_t big;
  mpfr_init2(big, BIGP);
  exact_op(big, op, x, y, z);
  long bad = 0;
  for (int m = 0; m < 6; m++) {
    mpe_round r = ts_tf_round[m];
    unsigned wantfl;
    double want = oracle_round(big, f, r, &wantfl);
    if (want == 0 && mpfr_zero_p(big)) {   /* exact zero: IEEE sign rules */
      int sa = signbit(x) != 0, sb = signbit(op == OP_SUB ? -y : y) != 0;
      if (op == OP_MUL || op == OP_DIV)
        want = (sa ^ (signbit(y) != 0)) ? -0.0 : 0.0;
      else if (op == OP_SQRT)
        want = x;
      else {
        if (op == OP_FMA) {
          sa = signbit(x) != signbit(y);
          sb = signbit(z) != 0;
        }
        double p = op == OP_FMA ? x * y : x;
        double q = op == OP_FMA ? z : (op == OP_SUB ? -y : y);
        want = (p == 0 && q == 0 && sa == sb) ? (sa ? -0.0 : 0.0) : (r == MPE_RD ? -0.0 : 0.0);
      }
    }
    mpe_flags_clear(~0u);
    uint16_t got = do_op(f->bf, op, a, b, c, r);
    unsigned gotfl = mpe_flags_get() & flag_mask;
    double g = val16(got, f->bf);
    if (!ts_same_f64(g, want)) {
      if (bad < 5)
        fprintf(stderr, "%s %s %04x %04x %04x mode %s: want %a got %a (%04x)\n", f->bf ? "bf16" : "fp16",
                op_names[op], a, b, c, mpe_round_name(r), want, g, got);
      bad++;
    }
    if (gotfl != wantfl) {
      if (*flagbad < 5)
        fprintf(stderr, "%s %s %04x %04x %04x mode %s: flags want %x got %x\n", f->bf ? "bf16" : "fp16",
                op_names[op], a, b, c, mpe_round_name(r), wantfl, gotfl);
      (*flagbad)++;
    }
  }
  mpfr_clear(big);
  return bad;
}

START_TEST(test_sqrt_exhaustive)
{
  const fmt16 *f = _i ? &FMT_BF16 : &FMT_FP16;
  long bad = 0, flagbad = 0, n = 0;
  for (uint32_t h = 0; h < 65536; h++) {
    double x = val16((uint16_t)h, f->bf);
    if (isnan(x) || isinf(x) || x < 0)
      continue;
    n++;
    bad += check_case(f, OP_SQRT, (uint16_t)h, 0, 0, &flagbad);
  }
  fprintf(stderr, "%s sqrt exhaustive: %ld finite non-negative inputs x 6 modes, %ld results and %ld flag sets differ\n",
          f->bf ? "bf16" : "fp16", n, bad, flagbad);
  ck_assert_int_eq(bad, 0);
  ck_assert_int_eq(flagbad, 0);
}
END_TEST

/* a pattern with sign s, biased exponent field e (0: subnormal), random fraction */
static uint16_t make16(const fmt16 *f, int s, int e, uint64_t rnd)
{
  int mb = f->p - 1;
  int emaxf = f->bf ? 254 : 30;
  if (e < 0) e = 0;
  if (e > emaxf) e = emaxf;
  return (uint16_t)(((unsigned)s << 15) | ((unsigned)e << mb) | (unsigned)(rnd & ((1u << mb) - 1)));
}

static int ebias(const fmt16 *f) { return f->bf ? 127 : 15; }

/* Operands weighted toward hard cases: the kind is chosen at random. */
static void gen_case(const fmt16 *f, int op, uint64_t *st, uint16_t *a, uint16_t *b, uint16_t *c)
{
  uint64_t r = ts_rand64(st), r2 = ts_rand64(st), r3 = ts_rand64(st);
  int kind = (int)(r % 8);
  int B = ebias(f), top = f->bf ? 254 : 30, mb = f->p - 1;
  int s1 = (r >> 8) & 1, s2 = (r >> 9) & 1, s3 = (r >> 10) & 1;
  int e1 = 1 + (int)((r >> 16) % (unsigned)top), d = (int)((r >> 32) % (unsigned)(f->p + 6));
  *a = (uint16_t)r2;
  *b = (uint16_t)(r2 >> 16);
  *c = (uint16_t)(r2 >> 32);
  switch (kind) {
  case 0: break;   /* any patterns */
  case 1:          /* near ties / alignment: exponents p..p+5 apart */
    *a = make16(f, s1, e1, r2);
    *b = make16(f, s2, e1 - d, r2 >> 16);
    *c = make16(f, s3, e1 - d - (int)(r3 % 4), r3 >> 8);
    break;
  case 2:          /* cancellation: b and c a few ulps from -a (or -a*b) */
    *a = make16(f, s1, e1, r2);
    *b = (uint16_t)((*a ^ 0x8000u) + (int)(r3 % 7) - 3);
    if (op == OP_FMA) {
      float pv = (float)(val16(*a, f->bf) * val16(*b, f->bf));
      uint16_t q = f->bf ? mpe_fp32_to_bf16(-pv, MPE_RNE) : mpe_fp32_to_fp16(-pv, MPE_RNE);
      *c = (uint16_t)(q + (int)((r3 >> 8) % 5) - 2);
    }
    break;
  case 3:          /* overflow boundary */
    *a = make16(f, s1, top - (int)(r3 % 3), r2);
    *b = make16(f, s2, op == OP_MUL || op == OP_FMA ? B + (int)((r3 >> 4) % 3) - 1
                       : op == OP_DIV ? B - (int)((r3 >> 4) % 3) : top - (int)((r3 >> 4) % 3), r2 >> 16);
    *c = make16(f, s3, top - (int)((r3 >> 8) % 4), r3 >> 16);
    break;
  case 4:          /* underflow boundary: results near 2^emin */
    *a = make16(f, s1, op == OP_ADD || op == OP_SUB ? 1 + (int)(r3 % 3) : B / 2 + 1 + (int)(r3 % 4), r2);
    *b = make16(f, s2, op == OP_MUL || op == OP_FMA ? 1 + B / 2 - (int)((r3 >> 4) % 6)
                       : op == OP_DIV ? B / 2 + B - 1 + (int)((r3 >> 4) % (unsigned)(f->p + 3)) - 2
                                      : 1 + (int)((r3 >> 4) % 3), r2 >> 16);
    *c = make16(f, s3, (int)((r3 >> 8) % 3), r3 >> 16);
    break;
  case 5:          /* subnormal operands */
    *a = make16(f, s1, 0, r2);
    *b = make16(f, s2, (r3 & 1) ? 0 : B + (int)((r3 >> 4) % 5) - 2, r2 >> 16);
    *c = make16(f, s3, (int)((r3 >> 8) % 2), r3 >> 16);
    break;
  case 6:          /* operands with short significands (exact and tie cases) */
    *a = (uint16_t)(make16(f, s1, e1, 0) | ((r2 & 3u) << (mb - 2)));
    *b = (uint16_t)(make16(f, s2, B + (int)(r3 % 5) - 2, 0) | (((r2 >> 8) & 3u) << (mb - 2)));
    *c = (uint16_t)(make16(f, s3, e1 - (int)((r3 >> 8) % (unsigned)(f->p + 2)), 0) | (((r2 >> 16) & 3u) << (mb - 2)));
    break;
  default:         /* moderate range, random */
    *a = make16(f, s1, B + (int)(r3 % 16) - 8, r2);
    *b = make16(f, s2, B + (int)((r3 >> 8) % 16) - 8, r2 >> 16);
    *c = make16(f, s3, B + (int)((r3 >> 16) % 16) - 8, r2 >> 32);
    break;
  }
}

static void random_vs_mpfr(const fmt16 *f, int op, long n)
{
  uint64_t st = ts_seed() ^ (uint64_t)(op * 131 + f->bf * 7 + 1) * 0x9e3779b97f4a7c15ull;
  long bad = 0, flagbad = 0;
  for (long i = 0; i < n; i++) {
    uint16_t a, b, c;
    gen_case(f, op, &st, &a, &b, &c);
    bad += check_case(f, op, a, b, c, &flagbad);
  }
  fprintf(stderr, "%s %s vs MPFR: %ld random operand sets x 6 modes, %ld results and %ld flag sets differ\n",
          f->bf ? "bf16" : "fp16", op_names[op], n, bad, flagbad);
  ck_assert_int_eq(bad, 0);
  ck_assert_int_eq(flagbad, 0);
}

/* _i: op * 2 + (bf16) */
START_TEST(test_random_mpfr)
{
  const fmt16 *f = (_i & 1) ? &FMT_BF16 : &FMT_FP16;
  int op = _i / 2;
  long n = (_i & 1) ? 100000 : 20000;
  const char *only = getenv("MPE_ARITH_ONLY");   /* e.g. "div,sqrt": split a long expensive run */
  if (only) {
    char want[32], list[256];
    snprintf(want, sizeof want, ",%s,", op_names[op]);
    snprintf(list, sizeof list, ",%s,", only);
    if (!strstr(list, want))
      return;
  }
  if (ts_expensive() && (_i & 1))
    n = 10000000;
  random_vs_mpfr(f, op, n);
}
END_TEST

/* ---- stochastic rounding: results are the two neighbours, with P(away from
   zero) = the distance fraction (MPE_SR) or 1/2 (MPE_SR_EQ). The bound: each
   case's frequency within 5 standard deviations, and the standardised sum of
   all cases within 5. */
static double neighbours(const fmt16 *f, int op, uint16_t a, uint16_t b, uint16_t c, double *lo, double *hi)
{
  double x = val16(a, f->bf), y = val16(b, f->bf), z = val16(c, f->bf);
  mpfr_t big;
  mpfr_init2(big, BIGP);
  exact_op(big, op, x, y, z);
  unsigned fl;
  int neg = mpfr_signbit(big) != 0;
  *lo = oracle_round(big, f, MPE_RZ, &fl);
  *hi = oracle_round(big, f, neg ? MPE_RD : MPE_RU, NULL);
  int ix = (fl & MPE_FLAG_INEXACT) != 0;
  double frac = 0;
  if (ix) {
    mpfr_t d;
    mpfr_init2(d, BIGP + 8);
    mpfr_sub_d(d, big, *lo, MPFR_RNDN);
    mpfr_div_d(d, d, *hi - *lo, MPFR_RNDN);
    frac = mpfr_get_d(d, MPFR_RNDN);
    mpfr_clear(d);
  }
  mpfr_clear(big);
  return ix ? frac : -1;
}

START_TEST(test_stochastic)
{
  const fmt16 *f = (_i & 1) ? &FMT_BF16 : &FMT_FP16;
  mpe_round r = (_i & 2) ? MPE_SR_EQ : MPE_SR;
  uint64_t st = ts_seed() + 17u * (uint64_t)_i;
  mpe_seed(ts_seed() + (uint64_t)_i);
  const int draws = 4000;
  double zsum = 0, vsum = 0;
  int cases = 0;
  for (int op = 0; op < NOPS; op++) {
    for (int k = 0; k < 12;) {
      uint16_t a, b, c;
      gen_case(f, op, &st, &a, &b, &c);
      double x = val16(a, f->bf), y = val16(b, f->bf), z = val16(c, f->bf);
      if (!isfinite(x) || !isfinite(y) || !isfinite(z) || (op == OP_SQRT && x < 0) || (op == OP_DIV && y == 0))
        continue;
      double lo, hi;
      double frac = neighbours(f, op, a, b, c, &lo, &hi);
      if (frac < 0 || isinf(hi))
        continue;   /* exact, or the far neighbour is an overflow */
      double p = r == MPE_SR ? frac : 0.5;
      int up = 0;
      for (int j = 0; j < draws; j++) {
        double g = val16(do_op(f->bf, op, a, b, c, r), f->bf);
        ck_assert_msg(g == lo || g == hi, "%s %s %04x %04x %04x: %a is not %a or %a",
                      f->bf ? "bf16" : "fp16", op_names[op], a, b, c, g, lo, hi);
        up += g == hi;
      }
      double sd = sqrt(draws * p * (1 - p)) + 1.0;
      ck_assert_msg(fabs(up - draws * p) <= 5 * sd, "%s %s %04x %04x %04x: %d of %d up, expected p=%g",
                    f->bf ? "bf16" : "fp16", op_names[op], a, b, c, up, draws, p);
      zsum += up - draws * p;
      vsum += draws * p * (1 - p);
      cases++;
      k++;
    }
  }
  double zstat = zsum / sqrt(vsum);
  fprintf(stderr, "%s %s: %d inexact cases x %d draws, standardised total deviation %.2f (bound 5)\n",
          f->bf ? "bf16" : "fp16", mpe_round_name(r), cases, draws, zstat);
  ck_assert(fabs(zstat) <= 5);
}
END_TEST

/* one long run: bf16 1 + 2^-10 (3/8 of the way... exactly 1/8 of a quantum) */
START_TEST(test_stochastic_long)
{
  mpe_seed(ts_seed());
  const long n = 1000000;
  uint16_t one = 0x3f80, tiny = mpe_fp32_to_bf16(0x1p-10f, MPE_RNE);
  long up = 0, upeq = 0;
  for (long i = 0; i < n; i++) {
    up += mpe_bf16_add(one, tiny, MPE_SR) != one;
    upeq += mpe_bf16_add(one, tiny, MPE_SR_EQ) != one;
  }
  double sd = sqrt(n * 0.125 * 0.875), sdeq = sqrt(n * 0.25);
  fprintf(stderr, "bf16 1+2^-10: SR %ld/%ld up (expect %.0f, sd %.0f); SR_EQ %ld/%ld (expect %.0f, sd %.0f)\n",
          up, n, n * 0.125, sd, upeq, n, n * 0.5, sdeq);
  ck_assert(fabs(up - n * 0.125) <= 5 * sd);
  ck_assert(fabs(upeq - n * 0.5) <= 5 * sdeq);
}
END_TEST

/* the i-th stochastic call after mpe_seed(s) uses word i, as the conversions do */
START_TEST(test_stream)
{
  uint16_t a = 0x3f81, b = 0x3b05;   /* bf16 operands whose sum is exact in binary64 */
  double exact = val16(a, 1) + val16(b, 1);
  uint16_t got[64], again[64], conv[64];
  mpe_seed(99);
  for (int i = 0; i < 64; i++)
    got[i] = mpe_bf16_add(a, b, MPE_SR);
  mpe_seed(99);
  for (int i = 0; i < 64; i++)
    again[i] = mpe_bf16_add(a, b, MPE_SR);
  mpe_seed(99);
  for (int i = 0; i < 64; i++)
    conv[i] = mpe_fp64_to_bf16(exact, MPE_SR);
  int differ = 0;
  for (int i = 0; i < 64; i++) {
    ck_assert_uint_eq(got[i], again[i]);
    ck_assert_uint_eq(got[i], conv[i]);
    differ |= got[i] != got[0];
  }
  ck_assert(differ);   /* both neighbours occur */
}
END_TEST

/* NaN results are canonical; invalid only for signalling NaNs and invalid operations */
START_TEST(test_nan_conventions)
{
  struct { int bf; int op; uint16_t a, b, c; uint16_t want; unsigned fl; } cs[] = {
    { 0, OP_ADD, 0x7c01, 0x3c00, 0, 0x7e00, MPE_FLAG_INVALID },     /* sNaN */
    { 0, OP_ADD, 0xfe55, 0x3c00, 0, 0x7e00, 0 },                    /* qNaN, payload dropped */
    { 0, OP_ADD, 0x7c00, 0xfc00, 0, 0x7e00, MPE_FLAG_INVALID },     /* inf - inf */
    { 0, OP_SUB, 0x7c00, 0x7c00, 0, 0x7e00, MPE_FLAG_INVALID },
    { 0, OP_MUL, 0x0000, 0xfc00, 0, 0x7e00, MPE_FLAG_INVALID },
    { 0, OP_DIV, 0x8000, 0x0000, 0, 0x7e00, MPE_FLAG_INVALID },
    { 0, OP_DIV, 0x3c00, 0x8000, 0, 0xfc00, MPE_FLAG_DIVBYZERO },
    { 0, OP_DIV, 0x7c00, 0x0000, 0, 0x7c00, 0 },
    { 0, OP_SQRT, 0xbc00, 0, 0, 0x7e00, MPE_FLAG_INVALID },
    { 0, OP_SQRT, 0x8000, 0, 0, 0x8000, 0 },
    { 0, OP_FMA, 0x0000, 0x7c00, 0x7e00, 0x7e00, MPE_FLAG_INVALID },  /* 0*inf + qNaN */
    { 0, OP_FMA, 0x7c00, 0x3c00, 0xfc00, 0x7e00, MPE_FLAG_INVALID },
    { 1, OP_ADD, 0x7f81, 0x3f80, 0, 0x7fc0, MPE_FLAG_INVALID },
    { 1, OP_MUL, 0xffc1, 0x3f80, 0, 0x7fc0, 0 },
    { 1, OP_DIV, 0x7f80, 0xff80, 0, 0x7fc0, MPE_FLAG_INVALID },
    { 1, OP_DIV, 0xbf80, 0x0000, 0, 0xff80, MPE_FLAG_DIVBYZERO },
    { 1, OP_SQRT, 0xff80, 0, 0, 0x7fc0, MPE_FLAG_INVALID },
    { 1, OP_FMA, 0x7f80, 0x0000, 0x3f80, 0x7fc0, MPE_FLAG_INVALID },
  };
  for (size_t i = 0; i < sizeof cs / sizeof cs[0]; i++) {
    for (int m = 0; m < MPE_NROUND; m++) {
      mpe_flags_clear(~0u);
      uint16_t got = do_op(cs[i].bf, cs[i].op, cs[i].a, cs[i].b, cs[i].c, (mpe_round)m);
      ck_assert_msg(got == cs[i].want, "case %zu mode %d: got %04x want %04x", i, m, got, cs[i].want);
      ck_assert_uint_eq(mpe_flags_get(), cs[i].fl);
    }
  }
}
END_TEST

/* exact zeros: x + (-x) is +0 (-0 under RD); -0 + -0 = -0; fma likewise */
START_TEST(test_zero_signs)
{
  for (int m = 0; m < MPE_NROUND; m++) {
    mpe_round r = (mpe_round)m;
    uint16_t z = r == MPE_RD ? 0x8000 : 0x0000, zb = r == MPE_RD ? 0x8000 : 0x0000;
    ck_assert_uint_eq(mpe_fp16_add(0x3c00, 0xbc00, r), z);
    ck_assert_uint_eq(mpe_fp16_sub(0x3555, 0x3555, r), z);
    ck_assert_uint_eq(mpe_fp16_add(0x8000, 0x8000, r), 0x8000);
    ck_assert_uint_eq(mpe_fp16_add(0x0000, 0x8000, r), z);
    ck_assert_uint_eq(mpe_fp16_sub(0x8000, 0x0000, r), 0x8000);
    ck_assert_uint_eq(mpe_bf16_add(0x3f80, 0xbf80, r), zb);
    ck_assert_uint_eq(mpe_bf16_fma(0x3f80, 0x3f80, 0xbf80, r), zb);      /* 1*1 - 1 */
    ck_assert_uint_eq(mpe_bf16_fma(0x8000, 0x3f80, 0x8000, r), 0x8000);  /* -0*1 + -0 */
    ck_assert_uint_eq(mpe_bf16_fma(0x8000, 0x3f80, 0x0000, r), zb);      /* -0*1 + +0 */
    ck_assert_uint_eq(mpe_fp16_fma(0x8000, 0x8000, 0x8000, r), z);       /* +0 + -0 */
    ck_assert_uint_eq(mpe_fp16_mul(0x8000, 0x3c00, r), 0x8000);
    /* a tiny negative result keeps its sign when it rounds to zero */
    uint16_t t = mpe_fp16_mul(0x8001, 0x3800, r);   /* -2^-25 */
    ck_assert_uint_eq(t & 0x8000, 0x8000);
  }
  /* an out-of-range mode means RNE */
  ck_assert_uint_eq(mpe_fp16_add(0x3c00, 0x0001, (mpe_round)99), mpe_fp16_add(0x3c00, 0x0001, MPE_RNE));
  ck_assert_uint_eq(mpe_bf16_div(0x3f80, 0x4040, (mpe_round)-1), mpe_bf16_div(0x3f80, 0x4040, MPE_RNE));
}
END_TEST

/* FMA rounds once: cases where the binary32 fmaf result rounded to bf16 is
   wrong exist, and ours agrees with MPFR on them. */
START_TEST(test_fma_single_rounding)
{
  uint64_t st = ts_seed() ^ 0xf3aull;
  int found = 0;
  long tries = 0, flagbad = 0;
  for (; tries < 4000000 && found < 20; tries++) {
    uint16_t a, b, c;
    gen_case(&FMT_BF16, OP_FMA, &st, &a, &b, &c);
    float x = mpe_bf16_to_fp32(a), y = mpe_bf16_to_fp32(b), z = mpe_bf16_to_fp32(c);
    if (!isfinite(x) || !isfinite(y) || !isfinite(z))
      continue;
    uint16_t twice = mpe_fp32_to_bf16(fmaf(x, y, z), MPE_RNE);
    uint16_t once = mpe_bf16_fma(a, b, c, MPE_RNE);
    if (twice != once && !(nan16(twice, 1) && nan16(once, 1))) {
      found++;
      ck_assert_int_eq(check_case(&FMT_BF16, OP_FMA, a, b, c, &flagbad), 0);
    }
  }
  fprintf(stderr, "bf16 fma: %d double-rounding cases of fmaf+round found in %ld tries, all correct here\n",
          found, tries);
  ck_assert_int_eq(found, 20);
  ck_assert_int_eq(flagbad, 0);
}
END_TEST

int main(void)
{
  Suite *s = suite_create("arith");
  TCase *tf = tcase_create("testfloat");
  tcase_add_loop_test(tf, test_testfloat, 0, NOPS * 6);
  suite_add_tcase(s, tf);
  TCase *mp = tcase_create("mpfr");
  tcase_add_loop_test(mp, test_sqrt_exhaustive, 0, 2);
  tcase_add_loop_test(mp, test_random_mpfr, 0, NOPS * 2);
  tcase_add_test(mp, test_fma_single_rounding);
  suite_add_tcase(s, mp);
  TCase *sr = tcase_create("stochastic");
  tcase_add_loop_test(sr, test_stochastic, 0, 4);
  tcase_add_test(sr, test_stochastic_long);
  tcase_add_test(sr, test_stream);
  suite_add_tcase(s, sr);
  TCase *cv = tcase_create("conventions");
  tcase_add_test(cv, test_nan_conventions);
  tcase_add_test(cv, test_zero_signs);
  suite_add_tcase(s, cv);
  return ts_run(s);
}
