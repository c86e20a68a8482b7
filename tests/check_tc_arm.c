/* The Arm BF16 models ("arm-bfdot", "arm-bfmmla" and their -ebf16 rows, custom FPCR
   settings) against an exact reference of the Arm ARM's pseudo-code written here with
   MPFR (BFDotAdd: BFMulH, FPAdd_BF16, BFRound with FPCR.EBF = 0; FPDot, FPAdd and
   FPRoundBase under FPCR with EBF = 1), on boundary and random data, at every SIMD
   level. No Arm hardware checked these models (mpe_tc_model_get(3)). */
#include <math.h>
#include <stdlib.h>
#include "testsupport.h"

static const ts_fmt F32 = { 24, -126, 127, 0x1.fffffep127, 1 };

/* ---- the reference: exact values in MPFR, then the pseudo-code's roundings */

typedef struct {
  int ebf;
  mpe_round mode;          /* RMode */
  int fz, fiz, ah;
} rfpcr;

static rfpcr rfpcr_of(int fpcr)
{
  static const mpe_round rm[4] = { MPE_RNE, MPE_RU, MPE_RD, MPE_RZ };
  rfpcr r = { (fpcr >> 13) & 1, rm[(fpcr >> 22) & 3], (fpcr >> 24) & 1, fpcr & 1, (fpcr >> 1) & 1 };
  return r;
}

/* |v| against 2^e */
static int cmpabs_2exp(mpfr_srcptr v, int e)
{
  mpfr_t t;
  mpfr_init2(t, 2);
  mpfr_set_ui_2exp(t, 1, e, MPFR_RNDN);
  const int r = mpfr_cmpabs(v, t);
  mpfr_clear(t);
  return r;
}

static int below_min_normal(mpfr_srcptr v)
{
  return cmpabs_2exp(v, -126) < 0;
}

/* BFRound: round to odd, flushed below 2^-126 before rounding, overflow to inf */
static double bf_round(mpfr_srcptr v)
{
  if (below_min_normal(v))
    return mpfr_signbit(v) ? -0.0 : 0.0;
  if (cmpabs_2exp(v, 128) >= 0)
    return mpfr_signbit(v) ? -INFINITY : INFINITY;
  return ts_round_mpfr(v, &F32, MPE_RO, 0, NULL);
}

/* FPRoundBase to binary32 under FPCR (EBF = 1) */
static double fp_round(mpfr_srcptr v, const rfpcr *f)
{
  if (f->fz && !f->ah && below_min_normal(v))
    return mpfr_signbit(v) ? -0.0 : 0.0;
  if (f->fz && f->ah) {   /* tiny after rounding with an unbounded exponent */
    mpfr_t u;
    mpfr_init2(u, 24);
    mpfr_rnd_t rnd = f->mode == MPE_RU ? MPFR_RNDU : f->mode == MPE_RD ? MPFR_RNDD : f->mode == MPE_RZ ? MPFR_RNDZ : MPFR_RNDN;
    mpfr_set(u, v, rnd);
    const int tiny = below_min_normal(u);
    mpfr_clear(u);
    if (tiny)
      return mpfr_signbit(v) ? -0.0 : 0.0;
  }
  return ts_round_mpfr(v, &F32, f->mode, 0, NULL);
}

/* FPUnpack / BFUnpack of a binary32 (or bfloat16) value: a denormal flushed when asked */
static double unpack(double x, int flush)
{
  return flush && x != 0 && fabs(x) < 0x1p-126 ? copysign(0.0, x) : x;
}

enum { PREC = 1200 };

/* BFMulH */
static double ref_mulh(double a, double b)
{
  a = unpack(a, 1);
  b = unpack(b, 1);
  const int neg = !!signbit(a) ^ !!signbit(b);
  if (isnan(a) || isnan(b))
    return NAN;
  if ((isinf(a) && b == 0) || (isinf(b) && a == 0))
    return NAN;
  if (isinf(a) || isinf(b))
    return neg ? -INFINITY : INFINITY;
  if (a == 0 || b == 0)
    return neg ? -0.0 : 0.0;
  mpfr_t v;
  mpfr_init2(v, PREC);
  mpfr_set_d(v, a, MPFR_RNDN);
  mpfr_mul_d(v, v, b, MPFR_RNDN);
  double r = bf_round(v);
  mpfr_clear(v);
  return r;
}

/* FPAdd_BF16 (ebf = 0) and FPAdd under FPCR (ebf = 1) */
static double ref_add(double x, double y, const rfpcr *f)
{
  const int fl = !f->ebf || (f->fz && !f->ah) || f->fiz;
  x = unpack(x, fl);
  y = unpack(y, fl);
  if (isnan(x) || isnan(y))
    return NAN;
  if (isinf(x) && isinf(y) && signbit(x) != signbit(y))
    return NAN;
  if ((isinf(x) && !signbit(x)) || (isinf(y) && !signbit(y)))
    return INFINITY;
  if (isinf(x) || isinf(y))
    return -INFINITY;
  if (x == 0 && y == 0 && !!signbit(x) == !!signbit(y))
    return x;
  mpfr_t v;
  mpfr_init2(v, PREC);
  mpfr_set_d(v, x, MPFR_RNDN);
  mpfr_add_d(v, v, y, MPFR_RNDN);
  double r;
  if (mpfr_zero_p(v))
    r = f->ebf && f->mode == MPE_RD ? -0.0 : 0.0;
  else
    r = f->ebf ? fp_round(v, f) : bf_round(v);
  mpfr_clear(v);
  return r;
}

/* FPDot (ebf = 1) */
static double ref_dot(double a0, double a1, double b0, double b1, const rfpcr *f)
{
  const int fl = (f->fz && !f->ah) || f->fiz;
  a0 = unpack(a0, fl); a1 = unpack(a1, fl); b0 = unpack(b0, fl); b1 = unpack(b1, fl);
  if (isnan(a0) || isnan(a1) || isnan(b0) || isnan(b1))
    return NAN;
  const int sa = !!signbit(a0) ^ !!signbit(b0), sb = !!signbit(a1) ^ !!signbit(b1);
  const int ia = isinf(a0) || isinf(b0), ib = isinf(a1) || isinf(b1);
  const int za = a0 == 0 || b0 == 0, zb = a1 == 0 || b1 == 0;
  if ((isinf(a0) && b0 == 0) || (a0 == 0 && isinf(b0)) || (isinf(a1) && b1 == 0) || (a1 == 0 && isinf(b1)) ||
      (ia && ib && sa != sb))
    return NAN;
  if ((ia && !sa) || (ib && !sb))
    return INFINITY;
  if (ia || ib)
    return -INFINITY;
  if (za && zb && sa == sb)
    return sa ? -0.0 : 0.0;
  mpfr_t v, w;
  mpfr_inits2(PREC, v, w, (mpfr_ptr)0);
  mpfr_set_d(v, a0, MPFR_RNDN);
  mpfr_mul_d(v, v, b0, MPFR_RNDN);
  mpfr_set_d(w, a1, MPFR_RNDN);
  mpfr_mul_d(w, w, b1, MPFR_RNDN);
  mpfr_add(v, v, w, MPFR_RNDN);
  double r = mpfr_zero_p(v) ? (f->mode == MPE_RD ? -0.0 : 0.0) : fp_round(v, f);
  mpfr_clears(v, w, (mpfr_ptr)0);
  return r;
}

/* BFDotAdd */
static double ref_dotadd(double c, double a0, double a1, double b0, double b1, const rfpcr *f)
{
  if (!f->ebf)
    return ref_add(c, ref_add(ref_mulh(a0, b0), ref_mulh(a1, b1), f), f);
  return ref_add(c, ref_dot(a0, a1, b0, b1, f), f);
}

/* one output: K padded with zeros to a multiple of L (the instruction's K) */
static double ref_out(const uint16_t *a, const uint16_t *b, long bs, int k, int L, double c, const rfpcr *f)
{
  const int kp = (k + L - 1) / L * L;
  for (int l = 0; l < kp; l += 2) {
    double x[4] = { 0, 0, 0, 0 };
    if (l < k) {
      x[0] = mpe_bf16_to_fp32(a[l]);
      x[2] = mpe_bf16_to_fp32(b[l * bs]);
    }
    if (l + 1 < k) {
      x[1] = mpe_bf16_to_fp32(a[l + 1]);
      x[3] = mpe_bf16_to_fp32(b[(l + 1) * bs]);
    }
    c = ref_dotadd(c, x[0], x[1], x[2], x[3], f);
  }
  return c;
}

/* ---- data */

/* bfloat16 edges: zeros, denormals, the smallest normals, 1 and its neighbours,
   ties and sticky bits for round to odd, products at 2^-126 and 2^128, the largest
   finite; inf and NaN come from specials[], rarely, so that most outputs stay finite */
static const uint16_t bf_edges[] = {
  0x0000, 0x8000, 0x0001, 0x807f, 0x007f, 0x0080, 0x8080, 0x0081, 0x3f80, 0xbf80, 0x3f81, 0xbfff,
  0x3fff, 0x4000, 0x3f7f, 0x2000, 0xa000, 0x2080, 0x1fff, 0x1f80, 0x2040, 0x5f80, 0xdf80, 0x5f7f,
  0x5fff, 0x6000, 0x7f7f, 0xff7f, 0x7f00, 0x3380, 0xb380, 0x3300, 0x4b80, 0x4b7f, 0x3400, 0x0100,
  0x1000, 0x3fc0, 0xbfc0, 0x4040,
};
static const uint16_t bf_specials[] = { 0x7f80, 0xff80, 0x7fc0, 0xffc1 };
/* binary32 C edges */
static const uint32_t c_edges[] = {
  0x00000000, 0x80000000, 0x00000001, 0x807fffff, 0x00800000, 0x80800000, 0x3f800000, 0xbf800000,
  0x3f800001, 0x4b800000, 0x7f7fffff, 0xff7fffff, 0x7f000000, 0x33800000, 0x00800001, 0x7f7ffffe,
  0xcb800001, 0x3f7fffff, 0xbf800001, 0x4effffff,
};
static const uint32_t c_specials[] = { 0x7f800000, 0xff800000, 0x7fc00000 };

#define PICK(t, r) (t)[(r) % (sizeof(t) / sizeof((t)[0]))]

static uint16_t rand_bf(uint64_t *st, int mode)
{
  uint64_t r = ts_rand64(st);
  if ((r >> 58) == 0 && mode != 3)   /* 1 in 64 */
    return PICK(bf_specials, r);
  switch (mode) {
  case 0: return PICK(bf_edges, r);
  case 1:   /* moderate exponents: cancellation and ties */
  case 3: {   /* the same without specials: products exact in binary32 */
    int e = 127 + (int)((r >> 8) % 13) - 6;
    return (uint16_t)(((r >> 20) & 1) << 15 | (unsigned)e << 7 | (r & 0x7f));
  }
  default: {   /* any finite pattern */
    uint16_t h = (uint16_t)r;
    return (h & 0x7f80) == 0x7f80 ? (uint16_t)(h & 0xbfff) : h;
  }
  }
}

static float rand_c(uint64_t *st, int mode)
{
  uint64_t r = ts_rand64(st);
  if ((r >> 58) == 0)
    return ts_u2f(PICK(c_specials, r));
  if (mode == 0)
    return ts_u2f(PICK(c_edges, r));
  if (mode == 1) {
    int e = 127 + (int)((r >> 30) % 17) - 8;
    return ts_u2f((uint32_t)(((r >> 40) & 1) << 31 | (uint64_t)e << 23 | (r & 0x7fffff)));
  }
  uint32_t u = (uint32_t)r;
  return ts_u2f((u & 0x7f800000u) == 0x7f800000u ? u & 0xbfffffffu : u);
}

/* ---- the comparisons */

static int same_out(float got, double want)
{
  if (isnan(want))
    return isnan(got);
  return ts_f2u(got) == ts_f2u((float)want);
}

static long n_compared, n_nonfinite, n_zero_tiny;

/* m against the reference on one problem (A m×k, B k×n, C m×n binary32), at every SIMD level */
static void check_problem(const mpe_tc_model *mo, const char *what, int M, int N, int K, const uint16_t *A,
                          const uint16_t *B, const float *C)
{
  mpe_tc_params p;
  ck_assert_int_eq(mpe_tc_model_params(mo, &p), MPE_OK);
  const rfpcr f = rfpcr_of(p.fpcr);
  double *want = malloc(sizeof(double) * (size_t)M * N);
  float *D = malloc(sizeof(float) * (size_t)M * N);
  ck_assert(want && D);
  for (int i = 0; i < M; i++)
    for (int j = 0; j < N; j++)
      want[i * N + j] = ref_out(A + (size_t)i * K, B + j, N, K, p.block, C[i * N + j], &f);
  int last = -1;
  for (int lvl = 0; lvl <= 2; lvl++) {
    const int got_lvl = mpe_simd_level_set(lvl);
    if (got_lvl == last)
      continue;
    last = got_lvl;
    ck_assert_int_eq(mpe_mma(mo, M, N, K, A, MPE_BF16, K, B, MPE_BF16, N, C, N, D, MPE_FP32, N), MPE_OK);
    for (int t = 0; t < M * N; t++) {
      ck_assert_msg(same_out(D[t], want[t]),
                    "%s (fpcr %#x) level %d, K %d, output %d: %08x, reference %08x (c %08x)", what, p.fpcr,
                    got_lvl, K, t, ts_f2u(D[t]), ts_f2u((float)want[t]), ts_f2u(C[t]));
      n_compared++;
      n_nonfinite += !isfinite(want[t]);
      n_zero_tiny += want[t] == 0 || fabs(want[t]) < 0x1p-126;
    }
  }
  mpe_simd_level_set(-1);
  free(want);
  free(D);
}

/* the FPCR settings tried: the four named rows, then EBF = 1 under every RMode with FZ,
   FIZ and AH */
static const int fpcr_sets[] = { 0, MPE_TC_FPCR_FZ, MPE_TC_FPCR_FIZ, MPE_TC_FPCR_FZ | MPE_TC_FPCR_AH,
                                 MPE_TC_FPCR_FIZ | MPE_TC_FPCR_AH, MPE_TC_FPCR_AH,
                                 MPE_TC_FPCR_FZ | MPE_TC_FPCR_FIZ };

static void check_model_data(const mpe_tc_model *mo, const char *what, uint64_t *st, int rounds)
{
  static const int ks[] = { 1, 2, 3, 4, 5, 6, 8, 13, 32 };
  for (int r = 0; r < rounds; r++) {
    const int M = 3, N = 37, K = ks[r % (sizeof ks / sizeof ks[0])];
    uint16_t *A = malloc(sizeof(uint16_t) * (size_t)M * K), *B = malloc(sizeof(uint16_t) * (size_t)K * N);
    float *C = malloc(sizeof(float) * (size_t)M * N);
    ck_assert(A && B && C);
    const int mode = r % 4;   /* edges, moderate, any; 3: moderate alone */
    for (int t = 0; t < M * K; t++)
      A[t] = rand_bf(st, mode == 3 || (ts_rand64(st) & 1) ? mode : 0);
    for (int t = 0; t < K * N; t++)
      B[t] = rand_bf(st, mode == 3 || (ts_rand64(st) & 1) ? mode : 0);
    for (int t = 0; t < M * N; t++)
      C[t] = rand_c(st, mode == 3 ? 1 : (ts_rand64(st) & 3) ? mode : 0);
    check_problem(mo, what, M, N, K, A, B, C);
    free(A); free(B); free(C);
  }
}

START_TEST(test_named_rows)
{
  uint64_t st = ts_seed();
  static const char *names[] = { "arm-bfdot", "arm-bfdot-ebf16", "arm-bfmmla", "arm-bfmmla-ebf16" };
  for (int i = 0; i < 4; i++) {
    const mpe_tc_model *mo = mpe_tc_model_get(names[i], MPE_BF16);
    ck_assert_ptr_nonnull(mo);
    ck_assert_str_eq(mpe_tc_model_name(mo), names[i]);
    check_model_data(mo, names[i], &st, 60);
  }
  fprintf(stderr, "check_tc_arm: named rows: %ld outputs compared with the MPFR reference (%ld inf or NaN, "
                  "%ld zero or below 2^-126)\n", n_compared, n_nonfinite, n_zero_tiny);
}
END_TEST

START_TEST(test_fpcr)
{
  uint64_t st = ts_seed() ^ 0x5eed;
  const long before = n_compared;
  mpe_tc_params p;
  ck_assert_int_eq(mpe_tc_model_params(mpe_tc_model_get("arm-bfdot-ebf16", MPE_BF16), &p), MPE_OK);
  for (int rm = 0; rm < 4; rm++)
    for (size_t s = 0; s < sizeof fpcr_sets / sizeof fpcr_sets[0]; s++) {
      mpe_tc_params q = p;
      q.fpcr = MPE_TC_FPCR_EBF | MPE_TC_FPCR_RMODE(rm) | fpcr_sets[s];
      mpe_tc_model *mo;
      ck_assert_int_eq(mpe_tc_model_custom(&mo, &q), MPE_OK);
      mpe_tc_params got;
      mpe_tc_model_params(mo, &got);
      static const mpe_round rmode[4] = { MPE_RNE, MPE_RU, MPE_RD, MPE_RZ };
      ck_assert_int_eq(got.round_fp32, rmode[rm]);
      check_model_data(mo, "custom", &st, 18);
      mpe_tc_model_free(mo);
    }
  fprintf(stderr, "check_tc_arm: FPCR settings: %ld outputs compared with the MPFR reference (%ld inf or NaN, "
                  "%ld zero or below 2^-126)\n", n_compared - before, n_nonfinite, n_zero_tiny);
}
END_TEST

/* results worked by hand from the pseudo-code */
START_TEST(test_pinned)
{
  const mpe_tc_model *e0 = mpe_tc_model_get("arm-bfdot", MPE_BF16), *e1 = mpe_tc_model_get("arm-bfdot-ebf16", MPE_BF16);
  float d;
  /* 1*1 + 2^-30*1: the pair sum is inexact: round to odd gives 1 + 2^-23; fused and
     to nearest, 1 */
  const uint16_t a[2] = { 0x3f80, 0x3080 }, b[2] = { 0x3f80, 0x3f80 };
  ck_assert_int_eq(mpe_mma(e0, 1, 1, 2, a, MPE_BF16, 2, b, MPE_BF16, 1, NULL, 1, &d, MPE_FP32, 1), MPE_OK);
  ck_assert_uint_eq(ts_f2u(d), 0x3f800001u);
  ck_assert_int_eq(mpe_mma(e1, 1, 1, 2, a, MPE_BF16, 2, b, MPE_BF16, 1, NULL, 1, &d, MPE_FP32, 1), MPE_OK);
  ck_assert_uint_eq(ts_f2u(d), 0x3f800000u);
  /* 2^-64 * 2^-63 = 2^-127: flushed with EBF = 0, a binary32 denormal with EBF = 1 */
  const uint16_t a2[2] = { 0x1f80, 0 }, b2[2] = { 0x2000, 0 };
  ck_assert_int_eq(mpe_mma(e0, 1, 1, 2, a2, MPE_BF16, 2, b2, MPE_BF16, 1, NULL, 1, &d, MPE_FP32, 1), MPE_OK);
  ck_assert_uint_eq(ts_f2u(d), 0u);
  ck_assert_int_eq(mpe_mma(e1, 1, 1, 2, a2, MPE_BF16, 2, b2, MPE_BF16, 1, NULL, 1, &d, MPE_FP32, 1), MPE_OK);
  ck_assert_uint_eq(ts_f2u(d), 0x00400000u);
  /* 2^64 * 2^64 overflows the EBF = 0 product; the fused pair with -2^64 * 2^64 is 0 */
  const uint16_t a3[2] = { 0x5f80, 0xdf80 }, b3[2] = { 0x5f80, 0x5f80 };
  ck_assert_int_eq(mpe_mma(e0, 1, 1, 2, a3, MPE_BF16, 2, b3, MPE_BF16, 1, NULL, 1, &d, MPE_FP32, 1), MPE_OK);
  ck_assert(isnan(d));   /* inf + -inf */
  ck_assert_int_eq(mpe_mma(e1, 1, 1, 2, a3, MPE_BF16, 2, b3, MPE_BF16, 1, NULL, 1, &d, MPE_FP32, 1), MPE_OK);
  ck_assert_uint_eq(ts_f2u(d), 0u);
  /* zeros: -0 * 1 + 0 * 0 is +0 (an exact zero sum under round to odd), and -0 + +0 too */
  const float c = -0.0f;
  const uint16_t z[2] = { 0x8000, 0 }, o[2] = { 0x3f80, 0 };
  ck_assert_int_eq(mpe_mma(e0, 1, 1, 2, z, MPE_BF16, 2, o, MPE_BF16, 1, &c, 1, &d, MPE_FP32, 1), MPE_OK);
  ck_assert_uint_eq(ts_f2u(d), 0u);   /* -0 + (-0 + +0 = +0) = +0 */
  ck_assert_int_eq(mpe_mma(e0, 1, 1, 0, z, MPE_BF16, 2, o, MPE_BF16, 1, &c, 1, &d, MPE_FP32, 1), MPE_OK);
  ck_assert_uint_eq(ts_f2u(d), 0x80000000u);   /* no instruction: C */
  /* (2^128 - 2^104) + 2^52 * 2^51 = 2^128 - 2^103: to nearest an overflow, to odd the
     largest finite (the kernels hand such sums to the portable engine); + 2^104: inf */
  const uint16_t a4[2] = { 0x5980, 0 }, b4[2] = { 0x5900, 0 }, b5[2] = { 0x5980, 0 };
  const float cmax = 0x1.fffffep127f;
  check_problem(e0, "overflow edge", 1, 1, 2, a4, b4, &cmax);
  check_problem(e0, "overflow edge", 1, 1, 2, a4, b5, &cmax);
  for (int lvl = 0; lvl <= 2; lvl++) {
    mpe_simd_level_set(lvl);
    ck_assert_int_eq(mpe_mma(e0, 1, 1, 2, a4, MPE_BF16, 2, b4, MPE_BF16, 1, &cmax, 1, &d, MPE_FP32, 1), MPE_OK);
    ck_assert_uint_eq(ts_f2u(d), 0x7f7fffffu);
    ck_assert_int_eq(mpe_mma(e0, 1, 1, 2, a4, MPE_BF16, 2, b5, MPE_BF16, 1, &cmax, 1, &d, MPE_FP32, 1), MPE_OK);
    ck_assert_uint_eq(ts_f2u(d), 0x7f800000u);
  }
  mpe_simd_level_set(-1);
}
END_TEST

/* mpe_gemm through the same models: a larger problem against mpe_mma with C = 0, and the
   epilogue */
START_TEST(test_gemm)
{
  uint64_t st = ts_seed() ^ 0x9e3779b9;
  const int M = 21, N = 45, K = 70;
  uint16_t *A = malloc(sizeof(uint16_t) * M * K), *B = malloc(sizeof(uint16_t) * K * N);
  float *C = malloc(sizeof(float) * M * N), *D = malloc(sizeof(float) * M * N), *Z = calloc((size_t)M * N, sizeof(float));
  float *Af = malloc(sizeof(float) * M * K);
  ck_assert(A && B && C && D && Z && Af);
  for (int t = 0; t < M * K; t++) {
    A[t] = rand_bf(&st, 1);
    Af[t] = mpe_bf16_to_fp32(A[t]);
  }
  for (int t = 0; t < K * N; t++)
    B[t] = rand_bf(&st, 1);
  static const char *names[] = { "arm-bfdot", "arm-bfdot-ebf16", "arm-bfmmla", "arm-bfmmla-ebf16" };
  for (int i = 0; i < 4; i++) {
    const mpe_tc_model *mo = mpe_tc_model_get(names[i], MPE_BF16);
    check_problem(mo, names[i], M, N, K, A, B, Z);
    ck_assert_int_eq(mpe_mma(mo, M, N, K, A, MPE_BF16, K, B, MPE_BF16, N, NULL, N, D, MPE_FP32, N), MPE_OK);
    /* binary32 A operands read through the input rule (exact bfloat16 values here) */
    ck_assert_int_eq(mpe_gemm(mo, MPE_ROW_MAJOR, MPE_NO_TRANS, MPE_NO_TRANS, M, N, K, 1.0f, Af, MPE_FP32, K, B,
                              MPE_BF16, N, 0.0f, C, MPE_FP32, N), MPE_OK);
    for (int t = 0; t < M * N; t++)
      ck_assert_uint_eq(ts_f2u(C[t]), ts_f2u(D[t]));
    /* column-major, transposed: the same products */
    for (int t = 0; t < M * N; t++)
      C[t] = 1.0f;
    ck_assert_int_eq(mpe_gemm(mo, MPE_COL_MAJOR, MPE_TRANS, MPE_TRANS, M, N, K, 2.0f, A, MPE_BF16, K, B, MPE_BF16,
                              N, 0.5f, C, MPE_FP32, M), MPE_OK);
    for (int ii = 0; ii < M; ii++)
      for (int j = 0; j < N; j++)
        ck_assert(same_out(C[j * M + ii], 2.0f * D[ii * N + j] + 0.5f));
    n_compared += 2L * M * N;
  }
  free(A); free(B); free(C); free(D); free(Z); free(Af);
}
END_TEST

START_TEST(test_errors)
{
  const mpe_tc_model *mo = mpe_tc_model_get("arm-bfmmla", MPE_BF16);
  ck_assert_ptr_null(mpe_tc_model_get("arm-bfdot", MPE_FP16));
  ck_assert_ptr_null(mpe_tc_model_get("arm-bfdot:mma.sync", MPE_BF16));
  uint16_t a[4] = { 0x3f80, 0x3f80, 0x3f80, 0x3f80 }, h[1];
  float c = 0, d;
  /* the instructions have binary32 results only */
  ck_assert_int_eq(mpe_mma(mo, 1, 1, 4, a, MPE_BF16, 4, a, MPE_BF16, 1, NULL, 1, h, MPE_FP16, 1), MPE_EUNSUP);
  ck_assert_int_eq(mpe_gemm(mo, MPE_ROW_MAJOR, MPE_NO_TRANS, MPE_NO_TRANS, 1, 1, 4, 1.0f, a, MPE_BF16, 4, a,
                            MPE_BF16, 1, 0.0f, h, MPE_FP16, 1), MPE_EUNSUP);
  ck_assert_int_eq(mpe_mma(mo, 1, 1, 4, a, MPE_FP16, 4, a, MPE_BF16, 1, &c, 1, &d, MPE_FP32, 1), MPE_EINVAL);
  /* no sparse BF16 dot product on Arm */
  uint16_t meta[4] = { 0, 0, 0, 0 };
  ck_assert_int_eq(mpe_gemm_sp(mo, 0, MPE_ROW_MAJOR, MPE_NO_TRANS, 1, 1, 4, 1.0f, a, MPE_BF16, 2, meta,
                               mpe_sparse_meta_words(4), a, MPE_BF16, 1, 0.0f, &d, MPE_FP32, 1), MPE_EUNSUP);
  mpe_tc_params p, q;
  mpe_tc_model_params(mo, &p);
  ck_assert_int_eq(p.kind, MPE_TC_ARM_BFDOT);
  ck_assert_int_eq(p.block, 4);
  ck_assert_int_eq(p.instr, MPE_TC_ARM_BFMMLA);
  ck_assert_int_eq(p.round_fp32, MPE_RO);
  mpe_tc_model *cm;
  q = p; q.fpcr = 1 << 30;            /* not an FPCR bit */
  ck_assert_int_eq(mpe_tc_model_custom(&cm, &q), MPE_EINVAL);
  ck_assert_ptr_null(cm);
  q = p; q.block = 3;
  ck_assert_int_eq(mpe_tc_model_custom(&cm, &q), MPE_EINVAL);
  q = p; q.in = MPE_FP16;
  ck_assert_int_eq(mpe_tc_model_custom(&cm, &q), MPE_EINVAL);
  q = p; q.align_bits = 24;
  ck_assert_int_eq(mpe_tc_model_custom(&cm, &q), MPE_EINVAL);
  q = p; q.instr = MPE_TC_WGMMA;
  ck_assert_int_eq(mpe_tc_model_custom(&cm, &q), MPE_EINVAL);
  /* fpcr belongs to the Arm kind */
  mpe_tc_model_params(mpe_tc_model_get("h100", MPE_BF16), &q);
  q.fpcr = MPE_TC_FPCR_EBF;
  ck_assert_int_eq(mpe_tc_model_custom(&cm, &q), MPE_EINVAL);
  /* EBF = 0 reads no other FPCR bit: a custom copy with FZ and RZ computes the same */
  q = p; q.fpcr = MPE_TC_FPCR_FZ | MPE_TC_FPCR_RMODE(3);
  ck_assert_int_eq(mpe_tc_model_custom(&cm, &q), MPE_OK);
  mpe_tc_model_params(cm, &q);
  ck_assert_int_eq(q.round_fp32, MPE_RO);
  mpe_tc_model_free(cm);
}
END_TEST

static Suite *suite(void)
{
  Suite *s = suite_create("tc_arm");
  TCase *t = tcase_create("arm");
  tcase_set_timeout(t, 120);
  tcase_add_test(t, test_pinned);
  tcase_add_test(t, test_named_rows);
  tcase_add_test(t, test_fpcr);
  tcase_add_test(t, test_gemm);
  tcase_add_test(t, test_errors);
  suite_add_tcase(s, t);
  return s;
}

int main(void)
{
  return ts_run(suite());
}
