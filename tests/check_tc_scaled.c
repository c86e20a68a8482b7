/* The instruction families beyond one input format: block-scaled MMA
   (mpe_mma_scaled, mpe_gemm_scaled) and mixed FP8 operands (mpe_mma,
   mpe_gemm with one E4M3 and one E5M2 operand). The MMA-Sim vectors of
   tests/conformance/mmasim at every SIMD level, MPFR oracles of the
   instruction semantics on boundary data at every SIMD level and through both
   calls, the model rows, and the argument rules. */
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <mpfr.h>
#include "testsupport.h"

static const mpe_type elem_types[] = { MPE_E4M3, MPE_E5M2, MPE_E2M3, MPE_E3M2, MPE_E2M1 };

/* ------------------------------------------------------------------ the oracle */

/* An element or scale code decoded from its bit fields (no library code):
   ebits/mbits of the format, fn: E4M3's encoding (no inf, S.1111.111 NaN),
   finite: FP6/FP4 (every code finite). */
static double field_decode(unsigned code, int ebits, int mbits, int fn, int finite)
{
  const unsigned sign = code >> (ebits + mbits) & 1, e = code >> mbits & ((1u << ebits) - 1);
  const unsigned mt = code & ((1u << mbits) - 1);
  const int bias = (1 << (ebits - 1)) - 1;
  double v;
  if (!finite && !fn && e == (1u << ebits) - 1)
    v = mt ? NAN : INFINITY;
  else if (fn && e == (1u << ebits) - 1 && mt == (1u << mbits) - 1)
    v = NAN;
  else if (e == 0)
    v = ldexp((double)mt, 1 - bias - mbits);
  else
    v = ldexp((double)(mt | 1u << mbits), (int)e - bias - mbits);
  return sign ? -v : v;
}

typedef struct { int ebits, mbits, fn, finite, emin; } efmt;
static efmt efmt_of(mpe_type t)
{
  switch (t) {
  case MPE_E4M3: return (efmt){ 4, 3, 1, 0, -6 };
  case MPE_E5M2: return (efmt){ 5, 2, 0, 0, -14 };
  case MPE_E2M3: return (efmt){ 2, 3, 0, 1, 0 };
  case MPE_E3M2: return (efmt){ 3, 2, 0, 1, -2 };
  default: return (efmt){ 2, 1, 0, 1, 0 };
  }
}
static double elem_value(mpe_type t, uint8_t code)
{
  const efmt f = efmt_of(t);
  return field_decode(code & ((1u << (1 + f.ebits + f.mbits)) - 1), f.ebits, f.mbits, f.fn, f.finite);
}
/* exponent of a non-zero element: max(floor(log2|x|), emin) */
static int elem_exp(mpe_type t, double x)
{
  const int e = ilogb(x), lo = efmt_of(t).emin;
  return e < lo ? lo : e;
}
static double scale_value(mpe_type st, uint8_t code)
{
  if (st == MPE_E8M0)
    return code == 0xff ? NAN : ldexp(1.0, code - 127);
  return field_decode(code & 0x7fu, 4, 3, 1, 0);   /* UE4M3: the sign bit is not read */
}
static int scale_exp(mpe_type st, double s)
{
  if (st == MPE_E8M0)
    return ilogb(s);
  const int e = ilogb(s);
  return e < -6 ? -6 : e;
}

/* One instruction of a block-scaled model in MPFR: the addends' values, their
   exponents (zero addends at zexp), E_max, each |value| * 2^(F - E_max) cut to
   an integer, the exact sum, and one rounding toward zero to binary32 (at or
   past 2^128: inf; a zero result: +0). a, b, sa, sb: the values of the L
   elements and of their scales (padding: zeros with scale 1). */
static double oracle_instr(const mpe_tc_params *p, mpe_type at, mpe_type bt, mpe_type st, const double *a,
                           const double *b, const double *sa, const double *sb, double c)
{
  const int L = p->block, G = p->scale_group > 1 ? p->scale_group : 1, F = p->align_bits, zexp = p->scale_zero_exp;
  /* specials: the IEEE value of the exact sum in binary64 */
  double sp = c;
  for (int l = 0; l < L; l++)
    sp += a[l] * b[l] * sa[l] * sb[l];
  if (isnan(sp))
    return NAN;
  int nonfinite = isinf(sp);
  if (G > 1)   /* FP4 groups: a NaN scale makes the group NaN even over zero products */
    for (int l = 0; l < L; l += G)
      if (isnan(sa[l]) || isnan(sb[l]))
        return NAN;
  if (nonfinite)
    return sp;
  enum { NA = 1100 };
  mpfr_t v[NA], sum, t;
  int ex[NA], n = 0, emax = INT32_MIN;
  mpfr_inits2(512, sum, t, (mpfr_ptr)0);
  if (G == 1) {
    for (int l = 0; l < L; l++) {
      mpfr_init2(v[n], 512);
      mpfr_set_d(v[n], a[l], MPFR_RNDN);
      mpfr_mul_d(v[n], v[n], b[l], MPFR_RNDN);
      mpfr_mul_d(v[n], v[n], sa[l], MPFR_RNDN);
      mpfr_mul_d(v[n], v[n], sb[l], MPFR_RNDN);
      ex[n] = a[l] == 0 || b[l] == 0 ? zexp : elem_exp(at, a[l]) + elem_exp(bt, b[l]) + ilogb(sa[l]) + ilogb(sb[l]);
      n++;
    }
  } else {
    for (int g = 0; g < L; g += G) {
      mpfr_init2(v[n], 512);
      mpfr_set_zero(v[n], 1);
      int nz = 0;
      for (int l = g; l < g + G; l++) {
        mpfr_set_d(t, a[l], MPFR_RNDN);
        mpfr_mul_d(t, t, b[l], MPFR_RNDN);
        mpfr_add(v[n], v[n], t, MPFR_RNDN);
        nz |= a[l] * b[l] != 0;
      }
      mpfr_mul_d(v[n], v[n], sa[g], MPFR_RNDN);
      mpfr_mul_d(v[n], v[n], sb[g], MPFR_RNDN);
      ex[n] = !nz || sa[g] == 0 || sb[g] == 0 ? zexp : scale_exp(st, sa[g]) + scale_exp(st, sb[g]);
      n++;
    }
  }
  mpfr_init2(v[n], 512);
  mpfr_set_d(v[n], c, MPFR_RNDN);
  ex[n] = c == 0 ? zexp : ilogb(c) < -126 ? -126 : ilogb(c);
  n++;
  for (int q = 0; q < n; q++)
    emax = ex[q] > emax ? ex[q] : emax;
  mpfr_set_zero(sum, 1);
  for (int q = 0; q < n; q++) {
    mpfr_mul_2si(v[q], v[q], F - emax, MPFR_RNDN);
    mpfr_trunc(v[q], v[q]);
    mpfr_add(sum, sum, v[q], MPFR_RNDN);
    mpfr_clear(v[q]);
  }
  mpfr_mul_2si(sum, sum, emax - F, MPFR_RNDN);
  double r;
  if (mpfr_zero_p(sum)) {
    r = 0.0;
  } else {
    mpfr_abs(t, sum, MPFR_RNDN);
    if (mpfr_cmp_d(t, 0x1p128) >= 0) {
      r = mpfr_sgn(sum) < 0 ? -INFINITY : INFINITY;
    } else {
      const ts_fmt f32 = ts_fmt_type(MPE_FP32);
      r = ts_round_mpfr(sum, &f32, MPE_RZ, 0, NULL);
      if (r == 0)
        r = 0.0;
    }
  }
  mpfr_clears(sum, t, (mpfr_ptr)0);
  return r;
}

/* Output (i, j) of the row-major problem A (M×K, codes), B (K×N), SA (M×kb),
   SB (kb×N), C: instructions of L in ascending k, K padded with zeros. */
static double oracle(const mpe_tc_model *m, mpe_type at, mpe_type bt, mpe_type st, int sblock, int K,
                     const uint8_t *A, int lda, const uint8_t *B, int ldb, const uint8_t *SA, int ldsa,
                     const uint8_t *SB, int ldsb, int i, int j, double c)
{
  mpe_tc_params p;
  ck_assert_int_eq(mpe_tc_model_params(m, &p), 0);
  const int L = p.block;
  double a[1024], b[1024], sa[1024], sb[1024];
  for (int l0 = 0; l0 < K; l0 += L) {
    for (int l = 0; l < L; l++) {
      const int k = l0 + l;
      if (k < K) {
        a[l] = elem_value(at, A[(size_t)i * lda + k]);
        b[l] = elem_value(bt, B[(size_t)k * ldb + j]);
        sa[l] = scale_value(st, SA[(size_t)i * ldsa + k / sblock]);
        sb[l] = scale_value(st, SB[(size_t)(k / sblock) * ldsb + j]);
      } else {
        a[l] = b[l] = 0.0;
        sa[l] = sb[l] = 1.0;
      }
    }
    c = oracle_instr(&p, at, bt, st, a, b, sa, sb, c);
  }
  return c;
}

static int same_bits(float got, double want)
{
  if (isnan(want))
    return ts_f2u(got) == 0x7fffffffu;   /* the one NaN of the binary32 outputs */
  return ts_f2u(got) == ts_f2u((float)want);
}

/* ------------------------------------------------------------------ boundary data */

/* A code of type t: pattern 0 random, 1 edges (largest finite, smallest
   normal and subnormal, zero, their negatives), 2 edges with inf/NaN codes */
static uint8_t edge_code(uint64_t *s, mpe_type t, int pat)
{
  const efmt f = efmt_of(t);
  const int nb = 1 + f.ebits + f.mbits;
  const unsigned sgn = 1u << (nb - 1), top = sgn - 1;
  const uint64_t r = ts_rand64(s);
  if (pat == 0)
    return (uint8_t)(r & (sgn | top));
  if (pat == 3)   /* half zeros: groups whose products are all zero */
    return r % 2 ? 0 : (uint8_t)((r >> 8) & (sgn | top));
  if (pat == 4)   /* mostly the largest magnitude */
    return (uint8_t)((r % 4 ? (t == MPE_E4M3 ? 0x7e : t == MPE_E5M2 ? 0x7b : top) : (r >> 8) & top) |
                     ((r >> 40) & 1 ? sgn : 0));
  unsigned mag;
  const unsigned maxfin = t == MPE_E4M3 ? 0x7e : t == MPE_E5M2 ? 0x7b : top;
  switch (r % 8) {
  case 0: mag = maxfin; break;
  case 1: mag = 1u << f.mbits; break;          /* smallest normal */
  case 2: mag = 1; break;                       /* smallest subnormal */
  case 3: mag = 0; break;
  case 4: mag = (1u << f.mbits) - 1; break;     /* largest subnormal */
  case 5: mag = pat == 2 && !f.finite ? (t == MPE_E4M3 ? 0x7f : (r >> 8) & 1 ? 0x7c : 0x7d) : maxfin - 1; break;
  default: mag = (unsigned)(r >> 16) & top; break;
  }
  if (t == MPE_E4M3 && pat != 2 && mag == 0x7f)
    mag = 0x7e;
  if (t == MPE_E5M2 && pat != 2 && mag >= 0x7c)
    mag = 0x7b;
  return (uint8_t)(mag | ((r >> 40) & 1 ? sgn : 0));
}

/* a scale code: pattern 0/1 realistic (around 1), 2 the whole range with the NaN code,
   3 small (UE8M0: products of two around 2^-126..2^-150: subnormal results; UE4M3:
   the subnormal and smallest normal scales, zero included), 4 large (UE8M0:
   results around the largest binary32 and past it; UE4M3: the largest codes) */
static uint8_t edge_scale(uint64_t *s, mpe_type st, int pat)
{
  const uint64_t r = ts_rand64(s);
  if (pat == 3)
    return st == MPE_E8M0 ? (uint8_t)(58 + r % 12) : (uint8_t)(r % 12) | (r & (1u << 20) ? 0x80 : 0);
  if (pat == 4)
    return st == MPE_E8M0 ? (uint8_t)(r % 8 ? 180 + r % 12 : 250 + r % 5) : (uint8_t)(0x70 + r % 15);
  if (st == MPE_E8M0) {
    if (pat < 2)
      return (uint8_t)(127 - 12 + (int)(r % 25));
    static const uint8_t e[] = { 0, 1, 2, 126, 127, 128, 253, 254, 255, 100, 150, 60 };
    return e[r % (sizeof e)];
  }
  if (pat < 2)
    return (uint8_t)(0x20 + r % 0x30) | (r & (1u << 20) ? 0x80 : 0);   /* a sign bit is not read */
  static const uint8_t e[] = { 0x00, 0x80, 0x01, 0x07, 0x08, 0x7e, 0xfe, 0x7f, 0xff, 0x38, 0xb8, 0x30 };
  return e[r % (sizeof e)];
}

static float edge_c(uint64_t *s, int pat)
{
  const uint64_t r = ts_rand64(s);
  static const uint32_t e[] = { 0x00000000u, 0x80000000u, 0x00000001u, 0x80800000u, 0x7f7fffffu, 0xff7fffffu,
                                0x3f800000u, 0xbf800000u, 0x33c00000u, 0x7f800000u, 0xff800000u, 0x7fc00000u,
                                0x0a000000u, 0x9a400000u };
  if (pat == 2)
    return ts_u2f(e[r % (sizeof e / sizeof e[0])]);
  if (pat == 3)   /* zero or subnormal */
    return r % 4 == 0 ? 0.0f : ts_u2f((uint32_t)(r >> 8) & 0x807fffffu);
  if (pat == 4)   /* around the largest finite */
    return ts_u2f((r & 2 ? 0xff7fffffu : 0x7f7fffffu) - (uint32_t)((r >> 8) % 4 ? 0 : (r >> 16) % 4096));
  if (r % 4 == 0)
    return 0.0f;
  return ldexpf((r & 2 ? -1.0f : 1.0f) * (1.0f + (float)((r >> 8) & 0x7fffff) * 0x1p-23f), (int)((r >> 40) % 60) - 30);
}

/* Every output of mpe_mma_scaled (row-major) and of mpe_gemm_scaled (column-major,
   A and B transposed, alpha 1, beta 0, so the same numbers) at every SIMD level,
   against the oracle. Returns the outputs checked. */
static long check_case(const mpe_tc_model *m, mpe_type at, mpe_type bt, mpe_type st, int sblock, int M, int N,
                       int K, int pat, uint64_t *s)
{
  const int kb = (K + sblock - 1) / sblock;
  uint8_t *A = malloc((size_t)M * K), *B = malloc((size_t)K * N), *SA = malloc((size_t)M * kb),
          *SB = malloc((size_t)kb * N);
  uint8_t *SAt = malloc((size_t)M * kb), *SBt = malloc((size_t)kb * N);
  float *C = malloc(sizeof(float) * (size_t)M * N), *D = malloc(sizeof(float) * (size_t)M * N);
  double *W = malloc(sizeof(double) * (size_t)M * N), *W0 = malloc(sizeof(double) * (size_t)M * N);
  ck_assert(A && B && SA && SB && SAt && SBt && C && D && W && W0);
  for (int i = 0; i < M * K; i++)
    A[i] = edge_code(s, at, pat);
  for (int i = 0; i < K * N; i++)
    B[i] = edge_code(s, bt, pat);
  if (pat == 1)   /* cancelling pairs: a[l+1] = -a[l] against equal b */
    for (int l = 0; l + 1 < K; l += 2) {
      const unsigned sa_ = 1u << (efmt_of(at).ebits + efmt_of(at).mbits);
      for (int i = 0; i < M; i++)
        A[i * K + l + 1] = (uint8_t)(A[i * K + l] ^ sa_);
      if (efmt_of(at).ebits == efmt_of(bt).ebits && efmt_of(at).mbits == efmt_of(bt).mbits)
        for (int j = 0; j < N; j++)
          B[(l + 1) * N + j] = B[l * N + j];
    }
  for (int i = 0; i < M * kb; i++)
    SA[i] = edge_scale(s, st, pat);
  for (int i = 0; i < kb * N; i++)
    SB[i] = edge_scale(s, st, pat);
  for (int i = 0; i < M * N; i++)
    C[i] = edge_c(s, pat);
  for (int i = 0; i < M; i++)
    for (int q = 0; q < kb; q++)
      SAt[(size_t)q * M + i] = SA[(size_t)i * kb + q];   /* SA column-major, ldsa = M */
  for (int q = 0; q < kb; q++)
    for (int j = 0; j < N; j++)
      SBt[(size_t)j * kb + q] = SB[(size_t)q * N + j];   /* SB column-major, ldsb = kb */
  for (int i = 0; i < M; i++)
    for (int j = 0; j < N; j++)
    {
      W[(size_t)i * N + j] = oracle(m, at, bt, st, sblock, K, A, K, B, N, SA, kb, SB, N, i, j, C[(size_t)i * N + j]);
      W0[(size_t)i * N + j] = oracle(m, at, bt, st, sblock, K, A, K, B, N, SA, kb, SB, N, i, j, 0.0);
    }
  long checked = 0;
  for (int lvl = 2; lvl >= 0; lvl--) {
    mpe_simd_level_set(lvl);
    int rc = mpe_mma_scaled(m, M, N, K, A, at, K, B, bt, N, SA, kb, SB, N, st, sblock, C, N, D, MPE_FP32, N);
    ck_assert_int_eq(rc, 0);
    for (int t = 0; t < M * N; t++)
      ck_assert_msg(same_bits(D[t], W[t]), "%s %s x %s pattern %d K=%d level %d output (%d, %d): %08x, want %08x (%a)",
                    mpe_tc_model_name(m), mpe_type_name(at), mpe_type_name(bt), pat, K, lvl, t / N, t % N,
                    ts_f2u(D[t]), ts_f2u((float)W[t]), W[t]);
    checked += M * N;
    /* BLAS form, column-major (C is M × N with ldc = M): the row-major A (M × K)
       is a column-major K × M matrix, so op(A) = its transpose, and likewise B;
       the scales column-major too. alpha = 1, beta = 0: the oracle from c = 0 */
    for (int t = 0; t < M * N; t++)
      D[t] = 0.0f;
    rc = mpe_gemm_scaled(m, MPE_COL_MAJOR, MPE_TRANS, MPE_TRANS, M, N, K, 1.0f, A, at, K, B, bt, N, SAt, M, SBt, kb,
                         st, sblock, 0.0f, D, MPE_FP32, M);
    ck_assert_int_eq(rc, 0);
    for (int i = 0; i < M; i++)
      for (int j = 0; j < N; j++) {
        const double w = W0[(size_t)i * N + j];
        ck_assert_msg(same_bits(D[(size_t)j * M + i], w), "gemm %s %s x %s pattern %d K=%d level %d (%d, %d): %08x, want %08x",
                      mpe_tc_model_name(m), mpe_type_name(at), mpe_type_name(bt), pat, K, lvl, i, j,
                      ts_f2u(D[(size_t)j * M + i]), ts_f2u((float)w));
      }
    checked += M * N;
  }
  mpe_simd_level_set(-1);
  free(A); free(B); free(SA); free(SB); free(SAt); free(SBt); free(C); free(D); free(W); free(W0);
  return checked;
}

START_TEST(test_mxf8f6f4_oracle)
{
  const mpe_tc_model *m = mpe_tc_model_get("b200:mxf8f6f4", MPE_E4M3);
  ck_assert_ptr_nonnull(m);
  static const struct { mpe_type a, b; } pairs[] = {
    { MPE_E4M3, MPE_E4M3 }, { MPE_E5M2, MPE_E5M2 }, { MPE_E2M3, MPE_E2M3 }, { MPE_E3M2, MPE_E3M2 },
    { MPE_E2M1, MPE_E2M1 }, { MPE_E4M3, MPE_E5M2 }, { MPE_E5M2, MPE_E2M1 }, { MPE_E2M3, MPE_E4M3 },
    { MPE_E3M2, MPE_E2M1 }, { MPE_E2M1, MPE_E3M2 },
  };
  static const int Ks[] = { 32, 45, 96 };
  uint64_t s = ts_seed() + 2828;
  long checked = 0;
  for (size_t q = 0; q < sizeof pairs / sizeof pairs[0]; q++)
    for (int pat = 0; pat < 3; pat++)
      checked += check_case(m, pairs[q].a, pairs[q].b, MPE_E8M0, 32, 13, 35, Ks[(q + (size_t)pat) % 3], pat, &s);
  printf("mxf8f6f4 oracle: %ld outputs equal to the MPFR model\n", checked);
}
END_TEST

START_TEST(test_mxf4_oracle)
{
  static const struct { const char *nm; mpe_type st; int blk; } cfg[] = {
    { "b200:mxf4", MPE_E8M0, 32 }, { "b200:mxf4nvf4", MPE_E8M0, 32 }, { "b200:mxf4nvf4", MPE_E8M0, 16 },
    { "b200:mxf4nvf4", MPE_E4M3, 16 },
  };
  static const int Ks[] = { 64, 100, 128 };
  uint64_t s = ts_seed() + 2929;
  long checked = 0;
  for (size_t q = 0; q < sizeof cfg / sizeof cfg[0]; q++) {
    const mpe_tc_model *m = mpe_tc_model_get(cfg[q].nm, MPE_E2M1);
    ck_assert_ptr_nonnull(m);
    for (int pat = 0; pat < 3; pat++)
      checked += check_case(m, MPE_E2M1, MPE_E2M1, cfg[q].st, cfg[q].blk, 13, 35, Ks[(q + (size_t)pat) % 3], pat, &s);
  }
  printf("mxf4/mxf4nvf4 oracle: %ld outputs equal to the MPFR model\n", checked);
}
END_TEST

/* The FP4 kinds' SIMD kernel (emu/tc_fp4_kernel.h) on boundary data at every level:
   every pattern (random; cancelling pairs; scale extremes with the NaN codes and
   inf/NaN c; subnormal results; the largest magnitudes) on each scale format, K
   not a multiple of the group, the block or the scale block, several instructions,
   partial tiles, and a custom model with groups of 8 and another F. */
START_TEST(test_fp4_boundary)
{
  static const struct { const char *nm; mpe_type st; int blk; } cfg[] = {
    { "b200:mxf4", MPE_E8M0, 32 }, { "b200:mxf4nvf4", MPE_E8M0, 16 }, { "b200:mxf4nvf4", MPE_E4M3, 16 },
  };
  static const int Ks[] = { 17, 40, 64, 131, 200 };
  uint64_t s = ts_seed() + 3030;
  long checked = 0;
  for (size_t q = 0; q < sizeof cfg / sizeof cfg[0]; q++) {
    const mpe_tc_model *m = mpe_tc_model_get(cfg[q].nm, MPE_E2M1);
    ck_assert_ptr_nonnull(m);
    for (int pat = 0; pat < 5; pat++)
      checked += check_case(m, MPE_E2M1, MPE_E2M1, cfg[q].st, cfg[q].blk, 26, 37, Ks[(q + (size_t)pat) % 5], pat,
                            &s);
  }
  mpe_tc_params p;
  ck_assert_int_eq(mpe_tc_model_params(mpe_tc_model_get("b200:mxf4nvf4", MPE_E2M1), &p), 0);
  p.block = 32;
  p.scale_group = 8;
  p.align_bits = 30;
  p.scale_zero_exp = -150;
  mpe_tc_model *cm;
  ck_assert_int_eq(mpe_tc_model_custom(&cm, &p), 0);
  for (int pat = 0; pat < 5; pat++)
    checked += check_case(cm, MPE_E2M1, MPE_E2M1, pat % 2 ? MPE_E4M3 : MPE_E8M0, 16, 13, 35, Ks[pat], pat, &s);
  mpe_tc_model_free(cm);
  printf("FP4 kernel boundary data: %ld outputs equal to the MPFR model\n", checked);
}
END_TEST

/* Hand cases whose answers follow from the semantics by hand. */
START_TEST(test_hand)
{
  const mpe_tc_model *m = mpe_tc_model_get("b200:mxf8f6f4", MPE_E4M3);
  uint8_t A[32] = { 0 }, B[32] = { 0 }, sa = 127, sb = 127;
  float c = 0.0f, d;
  /* 1 * 1 with both scales 2^0 and c = 3 * 2^-25: c inside the block (kept whole at
     F = 25), 1 + 3 * 2^-25 rounded toward zero is 1 (the b200 FP8 mma.sync model, which adds
     c after the block with nearest-even, gives 1 + 2^-23) */
  A[0] = 0x38;   /* E4M3 1.0 */
  B[0] = 0x38;
  c = ldexpf(3.0f, -25);
  ck_assert_int_eq(mpe_mma_scaled(m, 1, 1, 32, A, MPE_E4M3, 32, B, MPE_E4M3, 1, &sa, 1, &sb, 1, MPE_E8M0, 32, &c, 1,
                                  &d, MPE_FP32, 1), 0);
  ck_assert_uint_eq(ts_f2u(d), 0x3f800000u);
  ck_assert_int_eq(mpe_mma(mpe_tc_model_get("b200:mma.sync", MPE_E4M3), 1, 1, 32, A, MPE_E4M3, 32, B, MPE_E4M3, 1,
                           &c, 1, &d, MPE_FP32, 1), 0);
  ck_assert_uint_eq(ts_f2u(d), 0x3f800001u);
  /* plain "b200" FP8 is tcgen05.mma, c inside the block like the scaled kind */
  ck_assert_int_eq(mpe_mma(mpe_tc_model_get("b200", MPE_E4M3), 1, 1, 32, A, MPE_E4M3, 32, B, MPE_E4M3, 1, &c, 1, &d,
                           MPE_FP32, 1), 0);
  ck_assert_uint_eq(ts_f2u(d), 0x3f800000u);
  /* scales 2^127 * 2^127 on 448 * 448: overflow to +inf */
  A[0] = 0x7e;
  B[0] = 0x7e;
  sa = sb = 254;
  c = 0.0f;
  ck_assert_int_eq(mpe_mma_scaled(m, 1, 1, 32, A, MPE_E4M3, 32, B, MPE_E4M3, 1, &sa, 1, &sb, 1, MPE_E8M0, 32, &c, 1,
                                  &d, MPE_FP32, 1), 0);
  ck_assert(isinf(d) && d > 0);
  /* the NaN scale over zero elements: NaN */
  A[0] = B[0] = 0;
  sa = 0xff;
  ck_assert_int_eq(mpe_mma_scaled(m, 1, 1, 32, A, MPE_E4M3, 32, B, MPE_E4M3, 1, &sa, 1, &sb, 1, MPE_E8M0, 32, &c, 1,
                                  &d, MPE_FP32, 1), 0);
  ck_assert_uint_eq(ts_f2u(d), 0x7fffffffu);
  /* kind::mxf4nvf4, UE4M3 scales: a group of products summing to zero keeps its scale's
     exponent in E_max (c = 1 is then cut at 2^(e_scale - 35)) */
  const mpe_tc_model *g = mpe_tc_model_get("b200:mxf4nvf4", MPE_E2M1);
  uint8_t a4[64] = { 0 }, b4[64] = { 0 }, s4a[4] = { 0x38, 0x38, 0x38, 0x38 }, s4b[4] = { 0x38, 0x38, 0x38, 0x38 };
  a4[0] = 0x2;    /* 1.0 */
  a4[1] = 0xa;    /* -1.0 */
  b4[0] = b4[1] = 0x2;
  s4a[0] = 0x78;  /* UE4M3 2^8 */
  s4b[0] = 0x78 | 0x80;   /* the sign bit is not read: 2^8 */
  c = 1.0f + ldexpf(1.0f, -20);
  ck_assert_int_eq(mpe_mma_scaled(g, 1, 1, 64, a4, MPE_E2M1, 64, b4, MPE_E2M1, 1, s4a, 4, s4b, 1, MPE_E4M3, 16, &c,
                                  1, &d, MPE_FP32, 1), 0);
  /* E_max = 16, c's addend cut to a multiple of 2^(16 - 35) = 2^-19: 1 + 2^-20 -> 1 */
  ck_assert_float_eq(d, 1.0f);
}
END_TEST

/* ------------------------------------------------------------------ MMA-Sim vectors */

typedef struct { long files, rows, miss; } tally;

/* The rows gathered so far, run as the diagonal of one n × n call (row r's
   a as row r of A, its b as column r of B, its c at C(r, r)) at every SIMD
   level. */
enum { R = 96, KMAX = 128 };
typedef struct {
  uint8_t A[R * KMAX], B[KMAX * R], SA[R * 8], SB[8 * R];
  float C[R * R], D[R * R];
  uint16_t C16[R * R];   /* C, A, B as binary16 (mpe_mma_cd), when c16_file */
  uint16_t A16[R * KMAX], B16[KMAX * R];
  uint32_t want[R];
  int n, at, bt;
} batch;

/* C binary16, D binary32: the files of Volta's m8n8k4 .f32.f16.f16.f16 */
static int c16_file;

static long run_batch(batch *bt_, const char *rel, const char *model, mpe_type st, int blk, int K, long first)
{
  const int kb = blk ? K / blk : 0, n = bt_->n;
  const mpe_tc_model *m = mpe_tc_model_get(model, (mpe_type)bt_->at);
  ck_assert_ptr_nonnull(m);
  long miss = 0;
  for (int lvl = 2; lvl >= 0; lvl--) {
    mpe_simd_level_set(lvl);
    int rc = c16_file ? mpe_mma_cd(m, n, n, K, bt_->A16, MPE_FP16, K, bt_->B16, MPE_FP16, R, bt_->C16, MPE_FP16, R,
                                   bt_->D, MPE_FP32, R)
             : blk ? mpe_mma_scaled(m, n, n, K, bt_->A, (mpe_type)bt_->at, K, bt_->B, (mpe_type)bt_->bt, R, bt_->SA,
                                  kb, bt_->SB, R, st, blk, bt_->C, R, bt_->D, MPE_FP32, R)
                 : mpe_mma(m, n, n, K, bt_->A, (mpe_type)bt_->at, K, bt_->B, (mpe_type)bt_->bt, R, bt_->C, R, bt_->D,
                           MPE_FP32, R);
    ck_assert_int_eq(rc, 0);
    for (int r = 0; r < n; r++) {
      const uint32_t g = ts_f2u(bt_->D[r * R + r]);
      if (g != bt_->want[r]) {
        if (miss < 5)
          printf("%s: a row of batch from %ld, level %d: %08x, MMA-Sim %08x\n", rel, first, lvl, g, bt_->want[r]);
        miss++;
      }
    }
  }
  mpe_simd_level_set(-1);
  bt_->n = 0;
  return miss;
}

/* One file: per line atype btype (mpe_type values), K codes of a, K of b,
   K/blk scales of a and of b (none when blk is 0: a plain mpe_mma call), c
   and MMA-Sim's d (binary32 bits), in hex.
   Lines go to four batches by their number modulo 4 (the generator's four
   kinds of rows), so that the realistic rows, whose scaled exponents suit the
   fast kernels, are run by them and not sent to the portable engine with the
   random-bit rows of the same batch. */
static void mmasim_file(const char *rel, const char *model, mpe_type st, int blk, int K, tally *tl)
{
  ts_conf *f = ts_conf_open(rel);
  if (!f)
    return;
  const int kb = blk ? K / blk : 0, words = 2 + 2 * K + 2 * kb + 2;
  static batch bs[4];
  uint64_t w[2 + 2 * KMAX + 16 + 2];
  long rows = 0, miss = 0, line = 0;
  for (int q = 0; q < 4; q++)
    bs[q].n = 0;
  for (;;) {
    const int got = ts_conf_words(f, 16, w, words);
    if (got == -1)
      break;
    ck_assert_msg(got == words, "%s line %ld: %d words, want %d", rel, ts_conf_lineno(f), got, words);
    batch *b = &bs[line++ % 4];
    const int newpair = b->n > 0 && ((int)w[0] != b->at || (int)w[1] != b->bt);
    for (int q = 0; q < 4; q++)
      if (bs[q].n > 0 && (newpair || &bs[q] == b) && (newpair || b->n == R)) {
        const long n = bs[q].n;
        miss += run_batch(&bs[q], rel, model, st, blk, K, rows);
        rows += n;
      }
    const int n = b->n;
    b->at = (int)w[0];
    b->bt = (int)w[1];
    for (int l = 0; l < K; l++) {
      b->A[n * K + l] = (uint8_t)w[2 + l];
      b->B[l * R + n] = (uint8_t)w[2 + K + l];
      b->A16[n * K + l] = (uint16_t)w[2 + l];
      b->B16[l * R + n] = (uint16_t)w[2 + K + l];
    }
    for (int q = 0; q < kb; q++) {
      b->SA[n * kb + q] = (uint8_t)w[2 + 2 * K + q];
      b->SB[q * R + n] = (uint8_t)w[2 + 2 * K + kb + q];
    }
    for (int j = 0; j < R; j++) {
      b->C[n * R + j] = 0.0f;
      b->C16[n * R + j] = 0;
    }
    b->C[n * R + n] = ts_u2f((uint32_t)w[words - 2]);
    b->C16[n * R + n] = (uint16_t)w[words - 2];
    b->want[n] = (uint32_t)w[words - 1];
    b->n++;
  }
  for (int q = 0; q < 4; q++)
    if (bs[q].n > 0) {
      const long n = bs[q].n;
      miss += run_batch(&bs[q], rel, model, st, blk, K, rows);
      rows += n;
    }
  ts_conf_close(f);
  printf("%s: %ld vectors x 3 SIMD levels, %ld mismatches\n", rel, rows, miss);
  ts_conf_tally(rows * 3, miss);
  tl->files++;
  tl->rows += rows * 3;
  tl->miss += miss;
}

START_TEST(test_mmasim)
{
  tally tl = { 0, 0, 0 };
  mmasim_file("mmasim/tcgen05_mxf8f6f4_k32.txt.gz", "b200:mxf8f6f4", MPE_E8M0, 32, 32, &tl);
  mmasim_file("mmasim/tcgen05_mxf8f6f4_k96.txt.gz", "b200:mxf8f6f4", MPE_E8M0, 32, 96, &tl);
  mmasim_file("mmasim/tcgen05_mxf4_block32_ue8m0_k128.txt.gz", "b200:mxf4", MPE_E8M0, 32, 128, &tl);
  mmasim_file("mmasim/tcgen05_mxf4nvf4_block32_ue8m0_k128.txt.gz", "b200:mxf4nvf4", MPE_E8M0, 32, 128, &tl);
  mmasim_file("mmasim/tcgen05_mxf4nvf4_block16_ue8m0_k128.txt.gz", "b200:mxf4nvf4", MPE_E8M0, 16, 128, &tl);
  mmasim_file("mmasim/tcgen05_mxf4nvf4_block16_ue4m3_k128.txt.gz", "b200:mxf4nvf4", MPE_E4M3, 16, 128, &tl);
  printf("MMA-Sim block-scaled: %ld files, %ld outputs, %ld mismatches\n", tl.files, tl.rows, tl.miss);
  ck_assert_int_eq(tl.files, 6);
  ck_assert_int_eq(tl.miss, 0);
}
END_TEST

START_TEST(test_mixed_fp8_mmasim)
{
  tally tl = { 0, 0, 0 };
  mmasim_file("mmasim/mma_ada_fp8_mixed_k64.txt.gz", "ada", MPE_E8M0, 0, 64, &tl);
  mmasim_file("mmasim/wgmma_hopper_fp8_mixed_k64.txt.gz", "h100", MPE_E8M0, 0, 64, &tl);
  printf("MMA-Sim mixed FP8: %ld files, %ld outputs, %ld mismatches\n", tl.files, tl.rows, tl.miss);
  ck_assert_int_eq(tl.files, 2);
  ck_assert_int_eq(tl.miss, 0);
}
END_TEST

/* Volta's mma.m8n8k4 with a binary16 C and a binary32 D (mpe_mma_cd). */
START_TEST(test_c16_d32)
{
  tally tl = { 0, 0, 0 };
  c16_file = 1;
  mmasim_file("mmasim/mma_volta_m8n8k4_f32_f16c_k16.txt.gz", "v100", MPE_E8M0, 0, 16, &tl);
  fflush(stdout);
  c16_file = 0;
  ck_assert_int_eq(tl.files, 1);
  ck_assert_int_eq(tl.miss, 0);
  /* by hand: a = b = 2^-10 (1 + 2^-10), c = 2^-20 (a binary16 subnormal, 0x0010). Its exponent's
     floor is binary16's -14: E_max = -14, addends cut at 2^-37, the product's last bit 2^-40
     is lost: d = 2^-19 (1 + 2^-10). As a binary32 c (mpe_mma), E_max = -20 keeps it. */
  const mpe_tc_model *v = mpe_tc_model_get("v100", MPE_FP16);
  uint16_t a[4] = { 0x1401 }, b[4] = { 0x1401 }, c16 = 0x0010, h;
  float d, c32 = 0x1p-20f;
  ck_assert_int_eq(mpe_mma_cd(v, 1, 1, 4, a, MPE_FP16, 4, b, MPE_FP16, 1, &c16, MPE_FP16, 1, &d, MPE_FP32, 1), 0);
  ck_assert_float_eq(d, ldexpf(1.0f + 0x1p-10f, -19));
  ck_assert_int_eq(mpe_mma(v, 1, 1, 4, a, MPE_FP16, 4, b, MPE_FP16, 1, &c32, 1, &d, MPE_FP32, 1), 0);
  ck_assert_float_eq(d, ldexpf(1.0f + 0x1p-10f + 0x1p-21f, -19));
  /* the other combinations: mpe_mma itself, or no instruction */
  ck_assert_int_eq(mpe_mma_cd(v, 1, 1, 4, a, MPE_FP16, 4, b, MPE_FP16, 1, &c16, MPE_FP16, 1, &h, MPE_FP16, 1), 0);
  ck_assert_int_eq(mpe_mma_cd(v, 1, 1, 4, a, MPE_FP16, 4, b, MPE_FP16, 1, &c32, MPE_FP32, 1, &h, MPE_FP16, 1),
                   MPE_EUNSUP);
  ck_assert_int_eq(mpe_mma_cd(mpe_tc_model_get("a100", MPE_FP16), 1, 1, 4, a, MPE_FP16, 4, b, MPE_FP16, 1, &c16,
                              MPE_FP16, 1, &d, MPE_FP32, 1), MPE_EUNSUP);
  ck_assert_int_eq(mpe_mma_cd(v, 1, 1, 4, a, MPE_FP16, 4, b, MPE_FP16, 1, &c16, MPE_BF16, 1, &d, MPE_FP32, 1),
                   MPE_EINVAL);
  ck_assert_int_eq(mpe_mma_cd(NULL, 1, 1, 4, a, MPE_FP16, 4, b, MPE_FP16, 1, &c16, MPE_FP16, 1, &d, MPE_FP32, 1),
                   MPE_EINVAL);
  /* the fast kernels and the engine at every level, large enough for the kernels:
     the MMA-Sim rows above run as the diagonal of 96 x 96 calls */
}
END_TEST

/* ------------------------------------------------------------------ mixed FP8: the oracle */

/* One block of a plain FP8 model (mpe_tc_model_get(3)) in MPFR, A's elements
   of format at and B's of bt: the products' exponents e_a + e_b (each at least
   its own format's emin), c's at least -126 (a zero c at -126 when
   zero_c_counts, left out after the block with late_c), each addend cut to a
   multiple of 2^(E_max - F), the exact sum cut to result_bits fraction bits
   and rounded toward zero to binary32; late_c: then c added, nearest-even. */
static double oracle_fp8_block(const mpe_tc_params *p, mpe_type at, mpe_type bt, const double *a, const double *b,
                               int n, double c)
{
  double sp = p->late_c ? 0.0 : c;
  for (int l = 0; l < n; l++)
    sp += a[l] * b[l];
  if (isnan(sp) || isinf(sp))
    return p->late_c ? sp + c : sp;
  if (p->late_c && !isfinite(c))
    return c;
  const ts_fmt f32 = ts_fmt_type(MPE_FP32);
  mpfr_t sum, t;
  mpfr_inits2(256, sum, t, (mpfr_ptr)0);
  int emax = INT32_MIN;
  const int cin = !p->late_c && (c != 0 || p->zero_c_counts);
  if (cin)
    emax = c == 0 ? -126 : ilogb(c) < -126 ? -126 : ilogb(c);
  for (int l = 0; l < n; l++)
    if (a[l] != 0 && b[l] != 0) {
      const int e = elem_exp(at, a[l]) + elem_exp(bt, b[l]);
      emax = e > emax ? e : emax;
    }
  double r = 0.0;
  if (emax != INT32_MIN) {
    mpfr_set_zero(sum, 1);
    for (int l = 0; l <= n; l++) {
      if (l == n && !cin)
        break;
      if (l < n)
        mpfr_set_d(t, a[l] * b[l], MPFR_RNDN);   /* exact: two FP8 significands */
      else
        mpfr_set_d(t, c, MPFR_RNDN);
      mpfr_mul_2si(t, t, p->align_bits - emax, MPFR_RNDN);
      mpfr_trunc(t, t);
      mpfr_add(sum, sum, t, MPFR_RNDN);
    }
    mpfr_mul_2si(sum, sum, emax - p->align_bits, MPFR_RNDN);
    if (p->result_bits) {
      const ts_fmt cutf = { p->result_bits + 1, -126, 127, 0x1.fffffep127, 1 };
      r = ts_round_mpfr(sum, &cutf, MPE_RZ, 0, NULL);
      mpfr_set_d(sum, r, MPFR_RNDN);
    }
    r = mpfr_zero_p(sum) ? 0.0 : ts_round_mpfr(sum, &f32, MPE_RZ, 0, NULL);
  }
  if (p->late_c) {
    mpfr_set_d(sum, r, MPFR_RNDN);
    mpfr_set_d(t, c, MPFR_RNDN);
    mpfr_add(sum, sum, t, MPFR_RNDN);
    r = mpfr_zero_p(sum) ? 0.0 : ts_round_mpfr(sum, &f32, MPE_RNE, 0, NULL);
  }
  mpfr_clears(sum, t, (mpfr_ptr)0);
  return r;
}

/* Mixed E4M3 x E5M2 and E5M2 x E4M3 on the Ada, H100 and B200 FP8 models:
   every output of mpe_mma and of mpe_gemm (column-major, both operands
   transposed) at every SIMD level against the oracle, on edge codes (largest
   finite, smallest normal and subnormal of each format, inf/NaN codes),
   cancelling pairs, special c, an all-subnormal E5M2 operand, K not a
   multiple of the block. */
START_TEST(test_mixed_fp8_oracle)
{
  static const char *const gpus[] = { "ada", "h100", "b200" };
  static const struct { mpe_type a, b; } pairs[] = { { MPE_E4M3, MPE_E5M2 }, { MPE_E5M2, MPE_E4M3 } };
  static const int Ks[] = { 32, 45, 100 };
  enum { M = 13, N = 35, KX = 100 };
  static uint8_t A[M * KX], B[KX * N];
  static float C[M * N], D[M * N];
  static double W[M * N], W0[M * N];
  uint64_t s = ts_seed() + 3131;
  long checked = 0;
  for (size_t g = 0; g < 3; g++)
    for (size_t q = 0; q < 2; q++)
      for (int pat = 0; pat < 4; pat++) {
        const int K = Ks[(g + q + (size_t)pat) % 3];
        const mpe_tc_model *m = mpe_tc_model_get(gpus[g], pairs[q].a);
        mpe_tc_params p;
        ck_assert_int_eq(mpe_tc_model_params(m, &p), 0);
        for (int i = 0; i < M * K; i++)
          A[i] = edge_code(&s, pairs[q].a, pat == 1 ? 0 : pat);
        for (int i = 0; i < K * N; i++)
          B[i] = edge_code(&s, pairs[q].b, pat == 1 ? 0 : pat);
        if (pat == 3)   /* the E5M2 operand all subnormal: its exponents at -14, not E4M3's -6 */
          for (int i = 0; i < (pairs[q].b == MPE_E5M2 ? K * N : M * K); i++) {
            uint8_t *x = pairs[q].b == MPE_E5M2 ? &B[i] : &A[i];
            *x = (uint8_t)((ts_rand64(&s) & 0x80) | (1 + ts_rand64(&s) % 3));
          }
        if (pat == 1)   /* cancelling pairs: a[l+1] = -a[l], b[l+1] = b[l] */
          for (int l = 0; l + 1 < K; l += 2) {
            for (int i = 0; i < M; i++)
              A[i * K + l + 1] = (uint8_t)(A[i * K + l] ^ 0x80);
            for (int j = 0; j < N; j++)
              B[(l + 1) * N + j] = B[l * N + j];
          }
        for (int i = 0; i < M * N; i++)
          C[i] = edge_c(&s, pat == 3 ? 0 : pat);
        for (int i = 0; i < M; i++)
          for (int j = 0; j < N; j++) {
            double cw = C[i * N + j], cz = 0.0, a[KX], b[KX];
            for (int l0 = 0; l0 < K; l0 += p.block) {
              const int n = K - l0 < p.block ? K - l0 : p.block;
              for (int l = 0; l < n; l++) {
                a[l] = elem_value(pairs[q].a, A[i * K + l0 + l]);
                b[l] = elem_value(pairs[q].b, B[(l0 + l) * N + j]);
              }
              cw = oracle_fp8_block(&p, pairs[q].a, pairs[q].b, a, b, n, cw);
              cz = oracle_fp8_block(&p, pairs[q].a, pairs[q].b, a, b, n, cz);
            }
            W[i * N + j] = cw;
            W0[i * N + j] = cz;
          }
        for (int lvl = 2; lvl >= 0; lvl--) {
          mpe_simd_level_set(lvl);
          ck_assert_int_eq(mpe_mma(m, M, N, K, A, pairs[q].a, K, B, pairs[q].b, N, C, N, D, MPE_FP32, N), 0);
          for (int t = 0; t < M * N; t++)
            ck_assert_msg(same_bits(D[t], W[t]), "%s %s x %s pattern %d K=%d level %d (%d, %d): %08x, want %08x",
                          gpus[g], mpe_type_name(pairs[q].a), mpe_type_name(pairs[q].b), pat, K, lvl, t / N, t % N,
                          ts_f2u(D[t]), ts_f2u((float)W[t]));
          ck_assert_int_eq(mpe_gemm(m, MPE_COL_MAJOR, MPE_TRANS, MPE_TRANS, M, N, K, 1.0f, A, pairs[q].a, K, B,
                                    pairs[q].b, N, 0.0f, D, MPE_FP32, M), 0);
          for (int i = 0; i < M; i++)
            for (int j = 0; j < N; j++)
              ck_assert_msg(same_bits(D[j * M + i], W0[i * N + j]), "gemm %s %s x %s pattern %d K=%d level %d (%d, %d)",
                            gpus[g], mpe_type_name(pairs[q].a), mpe_type_name(pairs[q].b), pat, K, lvl, i, j);
          checked += 2 * M * N;
        }
        mpe_simd_level_set(-1);
      }
  /* the same codes in one format give what the single-format call gives: E5M2
     operands whose values E4M3 holds exactly (normal, exponent -6..8) */
  const mpe_tc_model *h = mpe_tc_model_get("h100", MPE_E4M3);
  uint8_t b5[64], b4[64], a4[64];
  for (int l = 0; l < 64; l++) {
    a4[l] = edge_code(&s, MPE_E4M3, 0) & 0xf7;   /* no NaN */
    b5[l] = (uint8_t)((ts_rand64(&s) & 0x80) | (0x24 + ts_rand64(&s) % 0x38));   /* E5M2 2^-6 .. 2^7 */
    b4[l] = mpe_fp32_to_e4m3(mpe_e5m2_to_fp32(b5[l]), MPE_RNE, 0);
  }
  float d1, d2, c1 = 0.25f;
  ck_assert_int_eq(mpe_mma(h, 1, 1, 64, a4, MPE_E4M3, 64, b5, MPE_E5M2, 1, &c1, 1, &d1, MPE_FP32, 1), 0);
  ck_assert_int_eq(mpe_mma(h, 1, 1, 64, a4, MPE_E4M3, 64, b4, MPE_E4M3, 1, &c1, 1, &d2, MPE_FP32, 1), 0);
  ck_assert_uint_eq(ts_f2u(d1), ts_f2u(d2));
  printf("mixed FP8 oracle: %ld outputs equal to the MPFR model\n", checked);
}
END_TEST

/* ------------------------------------------------------------------ models and arguments */

START_TEST(test_models)
{
  for (size_t t = 0; t < 5; t++) {
    const mpe_tc_model *m = mpe_tc_model_get("b200:mxf8f6f4", elem_types[t]);
    ck_assert_ptr_nonnull(m);
    mpe_tc_params p;
    ck_assert_int_eq(mpe_tc_model_params(m, &p), 0);
    ck_assert_int_eq(p.block, 32);
    ck_assert_int_eq(p.align_bits, 25);
    ck_assert_int_eq(p.scale_group, 1);
    ck_assert_int_eq(p.scale_zero_exp, -133);
    ck_assert_int_eq(p.scale_fmts, MPE_TC_SF_UE8M0_32);
  }
  mpe_tc_params p;
  ck_assert_int_eq(mpe_tc_model_params(mpe_tc_model_get("b200:mxf4nvf4", MPE_E2M1), &p), 0);
  ck_assert_int_eq(p.block, 64);
  ck_assert_int_eq(p.align_bits, 35);
  ck_assert_int_eq(p.scale_group, 16);
  ck_assert_int_eq(p.scale_zero_exp, -139);
  ck_assert_ptr_null(mpe_tc_model_get("b200:mxf4", MPE_E4M3));
  /* the kind after ':' as the instruction names are read: any case, nothing after it;
     an instruction family never names a block-scaled row */
  ck_assert_ptr_eq(mpe_tc_model_get("B200:MXF4", MPE_E2M1), mpe_tc_model_get("b200:mxf4", MPE_E2M1));
  ck_assert_ptr_nonnull(mpe_tc_model_get("b200:mxf4", MPE_E2M1));
  ck_assert_ptr_null(mpe_tc_model_get("b200:mxf4:", MPE_E2M1));
  ck_assert_ptr_null(mpe_tc_model_get("b200:", MPE_E2M1));
  ck_assert_ptr_null(mpe_tc_model_get(":mxf4", MPE_E2M1));
  ck_assert_ptr_null(mpe_tc_model_get("h100:mxf4", MPE_E2M1));
  ck_assert_ptr_null(mpe_tc_model_get("b200:tcgen05", MPE_E2M1));
  ck_assert_ptr_eq(mpe_tc_model_get("b200:tcgen05", MPE_E4M3), mpe_tc_model_get("b200", MPE_E4M3));
  ck_assert_ptr_null(mpe_tc_model_get("b200", MPE_E2M1));
  /* the other models are not block-scaled */
  ck_assert_int_eq(mpe_tc_model_params(mpe_tc_model_get("b200", MPE_E4M3), &p), 0);
  ck_assert_int_eq(p.scale_group, 0);
  /* custom block-scaled models: the rules */
  mpe_tc_model *c;
  ck_assert_int_eq(mpe_tc_model_params(mpe_tc_model_get("b200:mxf4nvf4", MPE_E2M1), &p), 0);
  ck_assert_int_eq(mpe_tc_model_custom(&c, &p), 0);
  ck_assert_str_eq(mpe_tc_model_name(c), "custom");
  mpe_tc_model_free(c);
  mpe_tc_params q = p;
  q.in = MPE_E4M3;   /* groups: FP4 only */
  ck_assert_int_eq(mpe_tc_model_custom(&c, &q), MPE_EINVAL);
  q = p;
  q.block = 40;   /* not a whole number of groups */
  ck_assert_int_eq(mpe_tc_model_custom(&c, &q), MPE_EINVAL);
  q = p;
  q.scale_fmts = 8;
  ck_assert_int_eq(mpe_tc_model_custom(&c, &q), MPE_EINVAL);
  q = p;
  q.scale_group = 0;   /* block-scaled fields without a group size */
  ck_assert_int_eq(mpe_tc_model_custom(&c, &q), MPE_EINVAL);
  ck_assert_int_eq(mpe_tc_model_params(mpe_tc_model_get("b200:mxf8f6f4", MPE_E5M2), &q), 0);
  q.scale_fmts |= MPE_TC_SF_UE4M3_16;   /* per-product scales are UE8M0 */
  ck_assert_int_eq(mpe_tc_model_custom(&c, &q), MPE_EINVAL);
  q.scale_fmts = MPE_TC_SF_UE8M0_32;
  q.align_bits = 30;   /* a what-if model: one more alignment width, same rules */
  ck_assert_int_eq(mpe_tc_model_custom(&c, &q), 0);
  mpe_tc_model_free(c);
}
END_TEST

START_TEST(test_errors)
{
  const mpe_tc_model *m = mpe_tc_model_get("b200:mxf8f6f4", MPE_E4M3), *g = mpe_tc_model_get("b200:mxf4nvf4", MPE_E2M1);
  uint8_t A[64] = { 0 }, B[64] = { 0 }, S[8] = { 127, 127, 127, 127, 127, 127, 127, 127 };
  float C[4] = { 0 }, D[4];
  uint16_t H[4];
  /* block-scaled models refuse the plain calls, and the plain models the scaled ones */
  ck_assert_int_eq(mpe_mma(m, 1, 1, 32, A, MPE_E4M3, 32, B, MPE_E4M3, 1, C, 1, D, MPE_FP32, 1), MPE_EINVAL);
  ck_assert_int_eq(mpe_gemm(m, MPE_ROW_MAJOR, MPE_NO_TRANS, MPE_NO_TRANS, 1, 1, 32, 1.0f, A, MPE_E4M3, 32, B,
                            MPE_E4M3, 1, 0.0f, D, MPE_FP32, 1), MPE_EINVAL);
  ck_assert_int_eq(mpe_mma_scaled(mpe_tc_model_get("b200", MPE_E4M3), 1, 1, 32, A, MPE_E4M3, 32, B, MPE_E4M3, 1, S,
                                  1, S, 1, MPE_E8M0, 32, C, 1, D, MPE_FP32, 1), MPE_EINVAL);
  ck_assert_int_eq(mpe_mma_scaled(NULL, 1, 1, 32, A, MPE_E4M3, 32, B, MPE_E4M3, 1, S, 1, S, 1, MPE_E8M0, 32, C, 1, D,
                                  MPE_FP32, 1), MPE_EINVAL);
#define MS(...) mpe_mma_scaled(__VA_ARGS__)
  /* the valid call, then one fault at a time */
  ck_assert_int_eq(MS(m, 1, 1, 32, A, MPE_E4M3, 32, B, MPE_E2M1, 1, S, 1, S, 1, MPE_E8M0, 32, C, 1, D, MPE_FP32, 1), 0);
  ck_assert_int_eq(MS(m, 1, 1, 32, A, MPE_FP32, 32, B, MPE_E4M3, 1, S, 1, S, 1, MPE_E8M0, 32, C, 1, D, MPE_FP32, 1), MPE_EINVAL);
  ck_assert_int_eq(MS(m, 1, 1, 32, A, MPE_E4M3, 32, B, MPE_E4M3, 1, S, 1, S, 1, MPE_E8M0, 16, C, 1, D, MPE_FP32, 1), MPE_EINVAL);
  ck_assert_int_eq(MS(m, 1, 1, 32, A, MPE_E4M3, 32, B, MPE_E4M3, 1, S, 1, S, 1, MPE_E4M3, 32, C, 1, D, MPE_FP32, 1), MPE_EINVAL);
  ck_assert_int_eq(MS(m, 1, 1, 32, A, MPE_E4M3, 32, B, MPE_E4M3, 1, S, 1, S, 1, MPE_E8M0, 32, C, 1, H, MPE_FP16, 1), MPE_EINVAL);
  ck_assert_int_eq(MS(m, 1, 1, 32, A, MPE_E4M3, 31, B, MPE_E4M3, 1, S, 1, S, 1, MPE_E8M0, 32, C, 1, D, MPE_FP32, 1), MPE_EINVAL);
  ck_assert_int_eq(MS(m, 1, 1, 32, A, MPE_E4M3, 32, B, MPE_E4M3, 1, NULL, 1, S, 1, MPE_E8M0, 32, C, 1, D, MPE_FP32, 1), MPE_EINVAL);
  ck_assert_int_eq(MS(m, 1, 1, 32, A, MPE_E4M3, 32, B, MPE_E4M3, 1, S, 1, NULL, 1, MPE_E8M0, 32, C, 1, D, MPE_FP32, 1), MPE_EINVAL);
  ck_assert_int_eq(MS(m, 1, 2, 64, A, MPE_E4M3, 64, B, MPE_E4M3, 2, S, 1, S, 2, MPE_E8M0, 32, C, 2, D, MPE_FP32, 2), MPE_EINVAL);   /* ldsa < 2 blocks */
  ck_assert_int_eq(MS(m, 1, 2, 32, A, MPE_E4M3, 32, B, MPE_E4M3, 2, S, 1, S, 1, MPE_E8M0, 32, C, 2, D, MPE_FP32, 2), MPE_EINVAL);   /* ldsb < n */
  ck_assert_int_eq(MS(m, -1, 1, 32, A, MPE_E4M3, 32, B, MPE_E4M3, 1, S, 1, S, 1, MPE_E8M0, 32, C, 1, D, MPE_FP32, 1), MPE_EINVAL);
  /* FP4 groups: FP4 operands only, the model's scale formats */
  ck_assert_int_eq(MS(g, 1, 1, 64, A, MPE_E2M1, 64, B, MPE_E2M1, 1, S, 4, S, 1, MPE_E4M3, 16, C, 1, D, MPE_FP32, 1), 0);
  ck_assert_int_eq(MS(g, 1, 1, 64, A, MPE_E4M3, 64, B, MPE_E2M1, 1, S, 4, S, 1, MPE_E4M3, 16, C, 1, D, MPE_FP32, 1), MPE_EINVAL);
  ck_assert_int_eq(MS(g, 1, 1, 64, A, MPE_E2M1, 64, B, MPE_E2M1, 1, S, 4, S, 1, MPE_E4M3, 32, C, 1, D, MPE_FP32, 1), MPE_EINVAL);
  ck_assert_int_eq(MS(mpe_tc_model_get("b200:mxf4", MPE_E2M1), 1, 1, 64, A, MPE_E2M1, 64, B, MPE_E2M1, 1, S, 4, S, 1,
                      MPE_E8M0, 16, C, 1, D, MPE_FP32, 1), MPE_EINVAL);
#undef MS
  /* BLAS form */
  ck_assert_int_eq(mpe_gemm_scaled(m, MPE_ROW_MAJOR, MPE_NO_TRANS, MPE_NO_TRANS, 1, 1, 32, 1.0f, A, MPE_E4M3, 32, B,
                                   MPE_E4M3, 1, S, 1, S, 1, MPE_E8M0, 32, 0.0f, D, MPE_FP32, 1), 0);
  ck_assert_int_eq(mpe_gemm_scaled(m, (mpe_layout)7, MPE_NO_TRANS, MPE_NO_TRANS, 1, 1, 32, 1.0f, A, MPE_E4M3, 32, B,
                                   MPE_E4M3, 1, S, 1, S, 1, MPE_E8M0, 32, 0.0f, D, MPE_FP32, 1), MPE_EINVAL);
  ck_assert_int_eq(mpe_gemm_scaled(m, MPE_ROW_MAJOR, MPE_NO_TRANS, MPE_NO_TRANS, 1, 1, 32, NAN, A, MPE_E4M3, 32, B,
                                   MPE_E4M3, 1, S, 1, S, 1, MPE_E8M0, 32, 0.0f, D, MPE_FP32, 1), MPE_EINVAL);
  ck_assert_int_eq(mpe_gemm_scaled(m, MPE_ROW_MAJOR, MPE_NO_TRANS, MPE_NO_TRANS, 1, 1, 32, 1.0f, A, MPE_E4M3, 32, B,
                                   MPE_E4M3, 1, S, 1, S, 1, MPE_E8M0, 32, 0.0f, H, MPE_FP16, 1), MPE_EINVAL);
  /* alpha = 0: C = beta*C without reading A, B or the scales */
  D[0] = 2.0f;
  ck_assert_int_eq(mpe_gemm_scaled(m, MPE_ROW_MAJOR, MPE_NO_TRANS, MPE_NO_TRANS, 1, 1, 32, 0.0f, NULL, MPE_E4M3, 32,
                                   NULL, MPE_E4M3, 1, NULL, 1, NULL, 1, MPE_E8M0, 32, 0.5f, D, MPE_FP32, 1), 0);
  ck_assert_float_eq(D[0], 1.0f);
  /* a k whose padding to whole instructions overflows int (nothing is read) */
  ck_assert_int_eq(mpe_mma_scaled(m, 1, 1, INT_MAX - 5, A, MPE_E4M3, INT_MAX, B, MPE_E4M3, 1, S, INT_MAX / 32 + 1, S,
                                  1, MPE_E8M0, 32, C, 1, D, MPE_FP32, 1), MPE_EINVAL);
  ck_assert_int_eq(mpe_gemm_scaled(m, MPE_ROW_MAJOR, MPE_NO_TRANS, MPE_NO_TRANS, 1, 1, INT_MAX, 1.0f, A, MPE_E4M3,
                                   INT_MAX, B, MPE_E4M3, 1, S, INT_MAX / 32 + 1, S, 1, MPE_E8M0, 32, 0.0f, D, MPE_FP32,
                                   1), MPE_EINVAL);
  /* k = 0: D = C */
  C[0] = 3.0f;
  ck_assert_int_eq(mpe_mma_scaled(m, 1, 1, 0, NULL, MPE_E4M3, 1, NULL, MPE_E4M3, 1, NULL, 1, NULL, 1, MPE_E8M0, 32, C,
                                  1, D, MPE_FP32, 1), 0);
  ck_assert_float_eq(D[0], 3.0f);
}
END_TEST

/* A custom model at the largest block (1024): c and 1024 products are 1025 addends of
   one instruction; ones times unit scales plus c = 1 sum to 1025 exactly, at 1 x 1
   (the engine) and 16 x 16 (the block kernels when the level has them). */
START_TEST(test_block_1024)
{
  mpe_tc_params p;
  ck_assert_int_eq(mpe_tc_model_params(mpe_tc_model_get("b200:mxf8f6f4", MPE_E4M3), &p), 0);
  p.block = 1024;
  p.align_bits = 20;
  mpe_tc_model *cm;
  ck_assert_int_eq(mpe_tc_model_custom(&cm, &p), 0);
  enum { K = 1024, N = 16 };
  uint8_t *A = malloc((size_t)N * K), *B = malloc((size_t)K * N), *S = malloc((size_t)N * (K / 32));
  float C[N * N], D[N * N];
  ck_assert(A && B && S);
  memset(A, 0x38, (size_t)N * K);   /* E4M3 1.0 */
  memset(B, 0x38, (size_t)K * N);
  memset(S, 127, (size_t)N * (K / 32));   /* UE8M0 2^0 */
  for (int t = 0; t < N * N; t++)
    C[t] = 1.0f;
  for (int n = 1; n <= N; n += N - 1) {
    for (int t = 0; t < N * N; t++)
      D[t] = 0.0f;
    ck_assert_int_eq(mpe_mma_scaled(cm, n, n, K, A, MPE_E4M3, K, B, MPE_E4M3, n, S, K / 32, S, n, MPE_E8M0, 32, C,
                                    n, D, MPE_FP32, n), 0);
    for (int t = 0; t < n * n; t++)
      ck_assert_float_eq(D[t], 1025.0f);
  }
  free(A);
  free(B);
  free(S);
  mpe_tc_model_free(cm);
}
END_TEST

/* A custom FP8 model with B in its own format (in_b) describes the mixed
   instructions: a call that is not mixed (B packed in A's format, or a binary32
   operand) would read B against the wrong format and is refused; the mixed
   calls run. */
START_TEST(test_in_b_custom)
{
  mpe_tc_params p;
  ck_assert_int_eq(mpe_tc_model_params(mpe_tc_model_get("h100", MPE_E4M3), &p), 0);
  p.in_b = MPE_E5M2;
  mpe_tc_model *cm;
  ck_assert_int_eq(mpe_tc_model_custom(&cm, &p), 0);
  enum { K = 32 };
  uint8_t a[K], b[K];
  float bf[K], d = 0.0f;
  memset(a, 0x3b, K);   /* E4M3 1.375, not an E5M2 value */
  memset(b, 0x3c, K);   /* E5M2 1.0 */
  for (int l = 0; l < K; l++)
    bf[l] = 1.375f;
  ck_assert_int_eq(mpe_mma(cm, 1, 1, K, a, MPE_E4M3, K, a, MPE_E4M3, 1, NULL, 1, &d, MPE_FP32, 1), MPE_EINVAL);
  ck_assert_int_eq(mpe_mma(cm, 1, 1, K, a, MPE_E4M3, K, bf, MPE_FP32, 1, NULL, 1, &d, MPE_FP32, 1), MPE_EINVAL);
  ck_assert_int_eq(mpe_mma_cd(cm, 1, 1, K, bf, MPE_FP32, K, a, MPE_E4M3, 1, NULL, MPE_FP16, 1, &d, MPE_FP32, 1),
                   MPE_EINVAL);
  ck_assert_int_eq(mpe_gemm(cm, MPE_ROW_MAJOR, MPE_NO_TRANS, MPE_NO_TRANS, 1, 1, K, 1.0f, a, MPE_E4M3, K, a,
                            MPE_E4M3, 1, 0.0f, &d, MPE_FP32, 1), MPE_EINVAL);
  ck_assert_int_eq(mpe_mma(cm, 1, 1, K, a, MPE_E4M3, K, b, MPE_E5M2, 1, NULL, 1, &d, MPE_FP32, 1), MPE_OK);
  ck_assert_float_eq(d, 44.0f);
  ck_assert_int_eq(mpe_gemm(cm, MPE_ROW_MAJOR, MPE_NO_TRANS, MPE_NO_TRANS, 1, 1, K, 1.0f, a, MPE_E4M3, K, b,
                            MPE_E5M2, 1, 0.0f, &d, MPE_FP32, 1), MPE_OK);
  ck_assert_float_eq(d, 44.0f);
  mpe_tc_model_free(cm);
}
END_TEST

static Suite *scaled_suite(void)
{
  Suite *s = suite_create("tc_scaled");
  TCase *tc = tcase_create("core");
  tcase_set_timeout(tc, 600);
  tcase_add_test(tc, test_models);
  tcase_add_test(tc, test_errors);
  tcase_add_test(tc, test_block_1024);
  tcase_add_test(tc, test_in_b_custom);
  tcase_add_test(tc, test_hand);
  tcase_add_test(tc, test_mxf8f6f4_oracle);
  tcase_add_test(tc, test_mxf4_oracle);
  tcase_add_test(tc, test_fp4_boundary);
  tcase_add_test(tc, test_mmasim);
  tcase_add_test(tc, test_mixed_fp8_oracle);
  tcase_add_test(tc, test_mixed_fp8_mmasim);
  tcase_add_test(tc, test_c16_d32);
  suite_add_tcase(s, tc);
  return s;
}

int main(void)
{
  return ts_run(scaled_suite());
}
