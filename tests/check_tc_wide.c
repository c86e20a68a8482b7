/* FP64 tensor cores (NVIDIA DMMA, AMD v_mfma_f64) and AMD's CDNA matrix cores:
   mpe_mma / mpe_gemm with binary64 operands against the CPU's own fused
   multiply-add in ascending k, on boundary data (signed zeros, subnormals,
   the largest finite values, overflow, cancellation, inf and NaN) at every
   SIMD level, every GEMM layout; the AMD rows' documented reproducers and the
   argument rules. The bitwise comparison with MMA-Sim's outputs for every one
   of these instructions is check_tc's "conformance mmasim" test. */
#include <float.h>
#include <math.h>
#include <stdlib.h>
#include "testsupport.h"

static const char *const f64_models[] = { "a100", "ada", "h100", "h100:mma.sync", "b200", "rtx-pro-6000",
                                          "mi250", "mi300", "fma-chain", "h200", "mi300x", "mi250:mfma" };
#define NF64 (int)(sizeof f64_models / sizeof f64_models[0])

/* a binary64 value weighted toward the edges */
static double edge64(uint64_t *st)
{
  static const double pool[] = { 0.0, -0.0, 1.0, -1.0, 0.5, 3.0, DBL_MAX, -DBL_MAX, DBL_MIN, -DBL_MIN,
                                 0x1p-1074, -0x1p-1074, 0x1.8p-1060, 0x1p511, 0x1p512, -0x1p512,
                                 0x1.fffffffffffffp-1, 1.0 + 0x1p-52, 1.0 - 0x1p-53, 0x1p-537 };
  uint64_t r = ts_rand64(st);
  switch (r & 15) {
  case 0: case 1: case 2: case 3:
    return pool[(r >> 8) % (sizeof pool / sizeof pool[0])];
  case 4:
    return (r >> 8) % 64 ? ldexp(1.0, (int)((r >> 20) % 2100) - 1075) : ((r >> 30) & 1 ? INFINITY : NAN);
  case 5:   /* any bit pattern: NaN payloads, infinities, subnormals */
    return ts_u2d(ts_rand64(st));
  default: {
    double m = (double)(ts_rand64(st) >> 11) * 0x1p-53 + 0.5;
    int e = (int)((r >> 8) % 40) - 20;
    return ((r >> 40) & 1 ? -m : m) * ldexp(1.0, e);
  }
  }
}

/* the chain itself, with the C library's fma: the reference */
static double chain(const double *a, long as, const double *b, long bs, int k, double c)
{
  for (int l = 0; l < k; l++)
    c = fma(a[l * as], b[l * bs], c);
  return c;
}

/* equal bits, or both NaN (mpemu's is the one quiet NaN) */
static void same64(double got, double want, const char *what, int i, int j)
{
  if (isnan(want)) {
    ck_assert_msg(ts_d2u(got) == 0x7fffffffffffffffull, "%s (%d,%d): %016llx, want the quiet NaN", what, i, j,
                  (unsigned long long)ts_d2u(got));
    return;
  }
  ck_assert_msg(ts_d2u(got) == ts_d2u(want), "%s (%d,%d): %a (%016llx), want %a", what, i, j, got,
                (unsigned long long)ts_d2u(got), want);
}

/* mpe_mma: every level, sizes past the kernels' tiles and the k chunk, with
   cancelling pairs planted in every row */
START_TEST(test_f64_mma)
{
  const mpe_tc_model *mdl = mpe_tc_model_get(f64_models[_i], MPE_FP64);
  ck_assert_msg(mdl != NULL, "%s", f64_models[_i]);
  uint64_t st = ts_seed() + (uint64_t)_i;
  static const int shapes[][3] = { { 1, 1, 1 }, { 13, 17, 5 }, { 25, 33, 300 }, { 12, 16, 9 }, { 3, 40, 0 } };
  for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++) {
    const int m = shapes[s][0], n = shapes[s][1], k = shapes[s][2];
    double *A = malloc(sizeof(double) * ((size_t)m * k + 1)), *B = malloc(sizeof(double) * ((size_t)k * n + 1));
    double *C = malloc(sizeof(double) * (size_t)m * n), *D = malloc(sizeof(double) * (size_t)m * n);
    ck_assert(A && B && C && D);
    for (int q = 0; q < m * k; q++)
      A[q] = edge64(&st);
    for (int q = 0; q < k * n; q++)
      B[q] = edge64(&st);
    for (int q = 0; q < m * n; q++)
      C[q] = edge64(&st);
    for (int i = 0; i < m && k >= 2; i++) {   /* a*b + (-a)*b: exact cancellation inside the chain */
      A[(size_t)i * k + 1] = -A[(size_t)i * k];
    }
    for (int j = 0; j < n && k >= 2; j++)
      B[(size_t)n + j] = B[j];
    for (int lvl = 2; lvl >= 0; lvl--) {
      mpe_simd_level_set(lvl);
      ck_assert_int_eq(mpe_mma(mdl, m, n, k, A, MPE_FP64, k > 1 ? k : 1, B, MPE_FP64, n, C, n, D, MPE_FP64, n),
                       MPE_OK);
      for (int i = 0; i < m; i++)
        for (int j = 0; j < n; j++)
          same64(D[(size_t)i * n + j], chain(A + (size_t)i * k, 1, B + j, n, k, C[(size_t)i * n + j]),
                 f64_models[_i], i, j);
      /* C = NULL: the chain from +0 */
      ck_assert_int_eq(mpe_mma(mdl, m, n, k, A, MPE_FP64, k > 1 ? k : 1, B, MPE_FP64, n, NULL, n, D, MPE_FP64, n),
                       MPE_OK);
      for (int i = 0; i < m; i++)
        for (int j = 0; j < n; j++)
          same64(D[(size_t)i * n + j], chain(A + (size_t)i * k, 1, B + j, n, k, 0.0), f64_models[_i], i, j);
    }
    mpe_simd_level_set(-1);
    free(A); free(B); free(C); free(D);
  }
}
END_TEST

/* mpe_gemm: both layouts, every transpose, alpha/beta forms, at every level;
   the reference is the chain and then fma(alpha, acc, beta*C) */
START_TEST(test_f64_gemm)
{
  const mpe_tc_model *mdl = mpe_tc_model_get("h100", MPE_FP64);
  ck_assert_ptr_nonnull(mdl);
  uint64_t st = ts_seed() + 77;
  const int m = 19, n = 23, k = 37;
  static const float ab[][2] = { { 1, 0 }, { 2, 0 }, { 1.5f, -1 }, { 0, 3 }, { -1, 0.25f } };
  double *A = malloc(sizeof(double) * m * k), *B = malloc(sizeof(double) * k * n);
  double *C0 = malloc(sizeof(double) * m * n), *C = malloc(sizeof(double) * m * n);
  ck_assert(A && B && C0 && C);
  for (int q = 0; q < m * k; q++)
    A[q] = edge64(&st);
  for (int q = 0; q < k * n; q++)
    B[q] = edge64(&st);
  for (int q = 0; q < m * n; q++)
    C0[q] = edge64(&st);
  for (int lvl = 2; lvl >= 0; lvl--) {
    mpe_simd_level_set(lvl);
    for (int lay = 0; lay < 2; lay++)
      for (int ta = 0; ta < 2; ta++)
        for (int tb = 0; tb < 2; tb++)
          for (size_t u = 0; u < sizeof ab / sizeof ab[0]; u++) {
            const int row = lay == 0;
            /* A is op(A) stored as given: row-major m×k (or k×m transposed) in `lay` */
            const int lda = (ta == 0) == row ? k : m, ldb = (tb == 0) == row ? n : k, ldc = row ? n : m;
            memcpy(C, C0, sizeof(double) * m * n);
            ck_assert_int_eq(mpe_gemm(mdl, row ? MPE_ROW_MAJOR : MPE_COL_MAJOR, ta ? MPE_TRANS : MPE_NO_TRANS,
                                      tb ? MPE_TRANS : MPE_NO_TRANS, m, n, k, ab[u][0], A, MPE_FP64, lda, B,
                                      MPE_FP64, ldb, ab[u][1], C, MPE_FP64, ldc),
                             MPE_OK);
            for (int i = 0; i < m; i++)
              for (int j = 0; j < n; j++) {
                /* element (i, l) of op(A), (l, j) of op(B), (i, j) of C, as stored */
                long ars = row ? (ta ? 1 : lda) : (ta ? lda : 1), acs = row ? (ta ? lda : 1) : (ta ? 1 : lda);
                long brs = row ? (tb ? 1 : ldb) : (tb ? ldb : 1), bcs = row ? (tb ? ldb : 1) : (tb ? 1 : ldb);
                size_t ci = row ? (size_t)i * ldc + j : (size_t)j * ldc + i;
                double acc = ab[u][0] != 0 ? chain(A + i * ars, acs, B + j * bcs, brs, k, 0.0) : 0.0;
                double alpha = ab[u][0], beta = ab[u][1], want;
                if (alpha == 0)
                  want = beta != 0 ? beta * C0[ci] : 0.0;
                else if (beta == 0)
                  want = alpha == 1 ? acc : alpha * acc;
                else
                  want = fma(alpha, acc, beta * C0[ci]);
                same64(C[ci], want, "gemm", i, j);
              }
          }
  }
  mpe_simd_level_set(-1);
  free(A); free(B); free(C0); free(C);
}
END_TEST

/* the AMD rows' documented behaviours, one reproducer each (each checked
   against MMA-Sim 2.1.1's MFMA("CDNA1"/"CDNA2"/"CDNA3", ...).dpa; the sets of
   tests/conformance/mmasim cover them at large) */
static float mma1(const char *name, mpe_type t, int k, const float *a, const float *b, float c)
{
  const mpe_tc_model *m = mpe_tc_model_get(name, t);
  ck_assert_msg(m != NULL, "%s", name);
  float d = NAN;
  ck_assert_int_eq(mpe_mma(m, 1, 1, k, a, MPE_FP32, k, b, MPE_FP32, 1, &c, 1, &d, MPE_FP32, 1), MPE_OK);
  return d;
}

START_TEST(test_amd_reproducers)
{
  /* CDNA2 flushes an FP16 subnormal operand; CDNA1, CDNA3 and NVIDIA keep it */
  const float sub[1] = { 0x1p-15f }, one[1] = { 1.0f };
  ck_assert_float_eq(mma1("mi250", MPE_FP16, 1, sub, one, 0.0f), 0.0f);
  ck_assert_float_eq(mma1("mi100", MPE_FP16, 1, sub, one, 0.0f), 0x1p-15f);
  ck_assert_float_eq(mma1("mi300", MPE_FP16, 1, sub, one, 0.0f), 0x1p-15f);
  ck_assert_float_eq(mma1("a100", MPE_FP16, 1, sub, one, 0.0f), 0x1p-15f);
  /* CDNA2: a binary32 subnormal sum is flushed too (BF16 2^-100 * 2^-30) */
  const float t1[1] = { 0x1p-100f }, t2[1] = { 0x1p-30f };
  ck_assert_float_eq(mma1("mi250", MPE_BF16, 1, t1, t2, 0.0f), 0.0f);
  ck_assert_float_eq(mma1("mi100", MPE_BF16, 1, t1, t2, 0.0f), 0x1p-130f);
  /* CDNA1: the exact sum, rounded once: 1 + 2^-24 + 2^-24 = 1 + 2^-23 */
  const float a3[4] = { 1.0f, 0x1p-12f, 0x1p-12f, 0.0f }, b3[4] = { 1.0f, 0x1p-12f, 0x1p-12f, 0.0f };
  ck_assert_float_eq(mma1("mi100", MPE_FP16, 4, a3, b3, 0.0f), 1.0f + 0x1p-23f);
  /* CDNA2: pairs rounded one by one: 1 + 2^-24 is 1 (nearest-even), twice */
  ck_assert_float_eq(mma1("mi250", MPE_FP16, 4, a3, b3, 0.0f), 1.0f);
  /* CDNA3: c cut toward -inf at 2^-24 below the products' exponent: with
     products summing to 1, c = -2^-30 takes away a whole 2^-24 (the sum
     1 - 2^-24 is a binary32 value) */
  const float a4[1] = { 1.0f }, b4[1] = { 1.0f };
  ck_assert_float_eq(mma1("mi300", MPE_FP16, 1, a4, b4, -0x1p-30f), 1.0f - 0x1p-24f);
  ck_assert_float_eq(mma1("a100", MPE_FP16, 1, a4, b4, -0x1p-30f), 1.0f);   /* cut toward zero */
  ck_assert_float_eq(mma1("mi100", MPE_FP16, 1, a4, b4, -0x1p-30f), 1.0f);
}
END_TEST

/* gemm with the AMD rows: every layout equals the instruction semantics with c = 0 */
START_TEST(test_amd_gemm)
{
  static const struct { const char *name; mpe_type t; } am[] = {
    { "mi100", MPE_FP16 }, { "mi100", MPE_BF16 }, { "mi250", MPE_FP16 }, { "mi250", MPE_BF16 },
    { "mi250:bf16", MPE_BF16 }, { "mi300", MPE_FP16 }, { "mi300", MPE_BF16 }, { "mi300", MPE_TF32 },
  };
  const mpe_tc_model *m = mpe_tc_model_get(am[_i].name, am[_i].t);
  ck_assert_ptr_nonnull(m);
  uint64_t st = ts_seed() + 5 + (uint64_t)_i;
  const int M = 9, N = 11, K = 21;
  float A[9 * 21], At[21 * 9], B[21 * 11], Bt[11 * 21], D[9 * 11], C[9 * 11];
  for (int i = 0; i < M; i++)
    for (int l = 0; l < K; l++) {
      uint64_t r = ts_rand64(&st);
      At[l * M + i] = A[i * K + l] = ldexp((float)((r & 0xff) + 1) / 256.0f, (int)((r >> 8) % 40) - 20) *
                                     ((r >> 20) & 1 ? -1.0f : 1.0f);
    }
  for (int l = 0; l < K; l++)
    for (int j = 0; j < N; j++) {
      uint64_t r = ts_rand64(&st);
      Bt[j * K + l] = B[l * N + j] = ldexp((float)((r & 0xff) + 1) / 256.0f, (int)((r >> 8) % 40) - 20);
    }
  ck_assert_int_eq(mpe_mma(m, M, N, K, A, MPE_FP32, K, B, MPE_FP32, N, NULL, N, D, MPE_FP32, N), MPE_OK);
  for (int lay = 0; lay < 2; lay++)
    for (int ta = 0; ta < 2; ta++)
      for (int tb = 0; tb < 2; tb++) {
        const int row = lay == 0;
        /* the stored operand: A (m×k row-major) is At in column-major, and so on */
        const float *pa = (ta == 0) == row ? A : At, *pb = (tb == 0) == row ? B : Bt;
        const int lda = (ta == 0) == row ? K : M, ldb = (tb == 0) == row ? N : K;
        ck_assert_int_eq(mpe_gemm(m, row ? MPE_ROW_MAJOR : MPE_COL_MAJOR, ta ? MPE_TRANS : MPE_NO_TRANS,
                                  tb ? MPE_TRANS : MPE_NO_TRANS, M, N, K, 1.0f, pa, MPE_FP32, lda, pb, MPE_FP32, ldb,
                                  0.0f, C, MPE_FP32, row ? N : M),
                         MPE_OK);
        for (int i = 0; i < M; i++)
          for (int j = 0; j < N; j++)
            ck_assert_msg(ts_f2u(C[row ? i * N + j : j * M + i]) == ts_f2u(D[i * N + j]),
                          "%s layout %d ta %d tb %d (%d,%d)", am[_i].name, lay, ta, tb, i, j);
      }
  /* no binary16 accumulator on AMD's matrix cores */
  uint16_t h[1] = { 0 };
  ck_assert_int_eq(mpe_mma(m, 1, 1, 1, A, MPE_FP32, 1, B, MPE_FP32, 1, h, 1, h, MPE_FP16, 1), MPE_EUNSUP);
  ck_assert_int_eq(mpe_gemm(m, MPE_ROW_MAJOR, MPE_NO_TRANS, MPE_NO_TRANS, 1, 1, 1, 1.0f, A, MPE_FP32, 1, B,
                            MPE_FP32, 1, 0.0f, h, MPE_FP16, 1),
                   MPE_EUNSUP);
}
END_TEST

/* An operand element of an AMD boundary set, as mpe_mma reads it (binary16 or
   bfloat16 bits, or the binary32 word of a TF32 operand): exponents at the
   format's edges and across a wide spread, significands with the lowest and
   the top bits set (ties at every grid), subnormals, signed zeros; with
   specials, also infinities and NaNs. huge: BF16/TF32 exponents up to the
   largest (products past 2^128); -1: BF16/TF32 normal values in [2^-47,
   2^47) (CDNA3's binary32 first stage); -2: products and sums about
   binary32's smallest normal (BF16/TF32 in [2^-70, 2^-55), FP16 subnormals
   and the smallest normals: CDNA2's flushing); otherwise at most 2^62. */
static uint32_t amd_elem(mpe_type t, uint64_t *st, int specials, int huge)
{
  const uint64_t r = ts_rand64(st);
  const uint32_t sg = (uint32_t)(r >> 63);
  static const uint32_t m16[] = { 0, 1, 0x3ff, 0x200, 0x201, 0x1ff };
  static const uint32_t m8[] = { 0, 1, 0x7f, 0x40, 0x41, 0x3f };
  if (t == MPE_FP16) {
    static const uint32_t ex[] = { 0, 0, 1, 2, 15, 16, 29, 30 };
    uint32_t e = (r & 3) ? 1 + (uint32_t)((r >> 8) % 30) : ex[(r >> 8) % 8];
    if (specials && (r >> 16) % 40 == 0)
      e = 31;
    if (huge == -2)
      e = (uint32_t)(r >> 8) % 4;
    if (huge == -3)   /* within [2^-2, 2^3) */
      e = 13 + (uint32_t)(r >> 8) % 5;
    const uint32_t m = (r >> 20) & 1 ? m16[(r >> 24) % 6] : (uint32_t)(r >> 24) & 0x3ff;
    return sg << 15 | e << 10 | m;
  }
  const uint32_t top = huge > 0 ? 254 : 127 + 62;
  static const uint32_t ex[] = { 0, 0, 1, 2, 100, 127, 128, 60 };
  uint32_t e = (r & 3) ? 1 + (uint32_t)((r >> 8) % top) : ex[(r >> 8) % 8];
  if (huge == -1)   /* within [2^-47, 2^47) */
    e = 80 + (uint32_t)((r >> 8) % 94);
  if (huge == -2)   /* in [2^-70, 2^-55): products about 2^-126 */
    e = 57 + (uint32_t)((r >> 8) % 15);
  if (huge == -3)   /* within [2^-2, 2^3) */
    e = 125 + (uint32_t)((r >> 8) % 5);
  if (huge > 0 && (r >> 16) % 8 == 0)
    e = 240 + (uint32_t)((r >> 30) % 15);
  if (specials && (r >> 16) % 40 == 1)
    e = 255;
  const uint32_t m = (r >> 20) & 1 ? m8[(r >> 24) % 6] : (uint32_t)(r >> 24) & 0x7f;
  if (t == MPE_BF16)
    return sg << 15 | e << 7 | m;
  /* TF32: ten significand bits, the 13 below them (dropped by the model) random */
  return sg << 31 | e << 23 | m << 16 | ((uint32_t)(r >> 44) & 7) << 13 | (uint32_t)(r >> 40) % 0x2000u;
}

/* a value of t with a significand of all ones or nearly, of sign sg, in [1, 2)
   or [2, 4) */
static uint32_t amd_top(mpe_type t, uint64_t *st, uint32_t sg)
{
  const uint64_t r = ts_rand64(st);
  const uint32_t low = (uint32_t)(r >> 8) % 4, e = (uint32_t)(r >> 16) & 1;
  if (t == MPE_FP16)
    return sg << 15 | (15 + e) << 10 | (0x3ff - low);
  if (t == MPE_BF16)
    return sg << 15 | (127 + e) << 7 | (0x7f - low);
  return sg << 31 | (127 + e) << 23 | (0x3ffu - low) << 13;   /* TF32: the ten bits it keeps */
}

/* an initial accumulator: zeros, subnormals, the smallest normal, the
   largest finite values, a spread of normal values; with specials, inf, NaN;
   tiny: zeros and values about 2^-126 only */
static float amd_c(uint64_t *st, int specials, int tiny)
{
  static const float pool[] = { 0.0f, -0.0f, 0x1p-149f, -0x1p-140f, 0x1p-126f, -0x1.fffffcp-127f, FLT_MAX,
                                -FLT_MAX, 1.0f, -0x1.000002p0f, 0x1p-30f, 0x1.fffffep100f };
  const uint64_t r = ts_rand64(st);
  if (specials && r % 30 == 0)
    return (r >> 8) & 1 ? INFINITY : -NAN;
  if (r & 1)
    return pool[(r >> 8) % (tiny ? 6 : sizeof pool / sizeof pool[0])];
  if (tiny)   /* about binary32's smallest normal */
    return ldexpf((float)((r >> 8) & 0xffffff) * 0x1p-24f, (int)((r >> 40) % 20) - 135) * ((r >> 39) & 1 ? -1 : 1);
  return ldexpf((float)((r >> 8) & 0xffffff) * 0x1p-24f, (int)((r >> 40) % 120) - 60) * ((r >> 39) & 1 ? -1 : 1);
}

/* mpe_mma with C, and mpe_gemm's C = A B + C (one more binary32 addition), at
   SIMD levels 1 and 2 equal to level 0 (the portable engine) bit for bit (a
   NaN of mpe_gemm: any NaN); what names the model and A's type (bt, B's type,
   follows it in a message). Returns the outputs compared. */
static long amd_levels_run(const mpe_tc_model *m, int M, int N, int K, const void *A, mpe_type at, const void *B,
                           mpe_type bt, const float *C, const char *what, int set, int sh)
{
  float *D0 = malloc(sizeof(float) * M * N), *D = malloc(sizeof(float) * M * N);
  float *G = malloc(sizeof(float) * M * N), *G0 = malloc(sizeof(float) * M * N);
  ck_assert(D0 && D && G && G0);
  for (int lvl = 0; lvl <= 2; lvl++) {
    mpe_simd_level_set(lvl);
    float *d = lvl ? D : D0, *g = lvl ? G : G0;
    ck_assert_int_eq(mpe_mma(m, M, N, K, A, at, K, B, bt, N, C, N, d, MPE_FP32, N), MPE_OK);
    memcpy(g, C, sizeof(float) * M * N);
    ck_assert_int_eq(mpe_gemm(m, MPE_ROW_MAJOR, MPE_NO_TRANS, MPE_NO_TRANS, M, N, K, 1.0f, A, at, K, B, bt, N, 1.0f,
                              g, MPE_FP32, N),
                     MPE_OK);
    for (int q = 0; q < M * N && lvl; q++) {
      ck_assert_msg(ts_f2u(D[q]) == ts_f2u(D0[q]), "%s %s set %d shape %d level %d (%d,%d): %a, portable %a", what,
                    mpe_type_name(bt), set, sh, lvl, q / N, q % N, D[q], D0[q]);
      ck_assert_msg(ts_f2u(G[q]) == ts_f2u(G0[q]) || (isnan(G[q]) && isnan(G0[q])),
                    "%s %s gemm set %d shape %d level %d (%d,%d): %a, portable %a", what, mpe_type_name(bt), set, sh,
                    lvl, q / N, q % N, G[q], G0[q]);
    }
  }
  mpe_simd_level_set(-1);
  free(D0); free(D); free(G); free(G0);
  return 2L * M * N * 2;
}

/* the AMD rows' fast kernels (emu/tc_amd*.c) equal the portable engine bit for
   bit at every SIMD level, on sizes past the tiles and the k chunk with K not
   a multiple of the block, on boundary data: finite sets (the kernels run
   every output; CDNA1's binary64 sums lose bits on the wide exponent spreads
   and hand those outputs back), sets with inf/NaN operands and c (their
   outputs go to the portable engine), huge BF16/TF32 exponents, pairs of
   products cancelling exactly, BF16/TF32 values in the window of CDNA3's
   binary32 first stage, products and sums about 2^-126, signed zeros and
   blocks without products beside tiny c, and c from 2^-70 to 2^45 beside
   products about 1 (CDNA1: the bound of the binary64 sum on both sides;
   CDNA3: every shift between the products and c, carries of the two-part
   integer, c at powers of two), and block sums at their bound (significands
   near 2, one sign per block) beside c of about their size (CDNA3: the last
   cut at every position the two-part integer allows, ties of its rounding),
   and positive products below c = -2^k (CDNA3: a sum just short of a power
   of two, where the cut's position is one bit below the high part's) */
START_TEST(test_amd_levels)
{
  static const struct { const char *name; mpe_type t; } am[] = {
    { "mi100", MPE_FP16 }, { "mi100", MPE_BF16 }, { "mi250", MPE_FP16 }, { "mi250", MPE_BF16 },
    { "mi250:bf16", MPE_BF16 }, { "mi300", MPE_FP16 }, { "mi300", MPE_BF16 }, { "mi300", MPE_TF32 },
  };
  const mpe_tc_model *m = mpe_tc_model_get(am[_i].name, am[_i].t);
  ck_assert_ptr_nonnull(m);
  const mpe_type t = am[_i].t, at = t == MPE_TF32 ? MPE_FP32 : t;
  const int es = t == MPE_TF32 ? 4 : 2;
  /* the last shape for set 9 alone: many outputs of few blocks */
  static const int shapes[][3] = { { 9, 37, 267 }, { 21, 70, 30 }, { 4, 64, 63 }, { 64, 64, 16 } };
  mpe_tc_params mp;
  ck_assert_int_eq(mpe_tc_model_params(m, &mp), MPE_OK);
  for (int set = 0; set < 10; set++)
    for (size_t sh = 0; sh < sizeof shapes / sizeof shapes[0]; sh++) {
      if ((sh == 3) != (set == 9))
        continue;
      const int M = shapes[sh][0], N = shapes[sh][1], K = shapes[sh][2];
      uint64_t st = ts_seed() + 1000 * (uint64_t)_i + 10 * (uint64_t)set + sh;
      unsigned char *A = malloc((size_t)M * K * es), *B = malloc((size_t)K * N * es);
      float *C = malloc(sizeof(float) * M * N);
      ck_assert(A && B && C);
      const int specials = set == 1;
      const int huge = set == 2 ? 1 : set == 4 || set == 6 ? -1 : set == 5 ? -2 : set == 7 || set == 9 ? -3 : 0;
      for (int q = 0; q < M * K; q++) {
        uint32_t w = amd_elem(t, &st, specials, huge);
        memcpy(A + (size_t)q * es, &w, (size_t)es);
      }
      for (int q = 0; q < K * N; q++) {
        uint32_t w = amd_elem(t, &st, specials, huge);
        memcpy(B + (size_t)q * es, &w, (size_t)es);
      }
      if (set == 3)   /* products a*b and (-a)*b in every row: exact cancellation */
        for (int i = 0; i < M; i++)
          for (int l = 0; l + 1 < K; l += 3) {
            memcpy(A + ((size_t)i * K + l + 1) * es, A + ((size_t)i * K + l) * es, (size_t)es);
            A[((size_t)i * K + l + 1) * es + es - 1] ^= 0x80;
            memcpy(B + ((size_t)(l + 1) * N) * es, B + ((size_t)l * N) * es, (size_t)N * es);
          }
      if (set == 6) {   /* B positive; rows of +0 or -0, rows with every other run of 8 zero */
        for (int q = 0; q < K * N; q++)
          B[(size_t)q * es + es - 1] &= 0x7f;
        for (int i = 0; i < M; i++)
          for (int l = 0; l < K && i % 3 != 2; l++)
            if (i % 3 == 0 || l % 16 < 8) {
              const uint32_t z = (uint32_t)(i / 3) % 2 << (8 * es - 1);
              memcpy(A + ((size_t)i * K + l) * es, &z, (size_t)es);
            }
      }
      if (set == 9)   /* positive operands */
        for (int q = 0; q < (M > N ? M : N) * K; q++) {
          if (q < M * K)
            A[(size_t)q * es + es - 1] &= 0x7f;
          if (q < K * N)
            B[(size_t)q * es + es - 1] &= 0x7f;
        }
      if (set == 8)   /* significands near 2, one sign per block of A's row: block sums at their bound */
        for (int l = 0; l < K; l++) {
          for (int i = 0; i < M; i++) {
            const uint32_t w = amd_top(t, &st, (uint32_t)(l / mp.block + i) & 1);
            memcpy(A + ((size_t)i * K + l) * es, &w, (size_t)es);
          }
          for (int j = 0; j < N; j++) {
            const uint32_t w = amd_top(t, &st, 0);
            memcpy(B + ((size_t)l * N + j) * es, &w, (size_t)es);
          }
        }
      for (int q = 0; q < M * N; q++) {
        C[q] = amd_c(&st, specials, set == 5 || set == 6);
        if (set == 8)   /* ±2^k with k in [-3, 8], about a block's sum: every shift of CDNA3's last cut */
          C[q] = ldexpf((float)(ts_rand64(&st) | 1) * 0x1p-64f * (C[q] < 0 ? -1.0f : 1.0f),
                        (int)(ts_rand64(&st) % 12) - 3);
        if (set == 9)   /* mostly -2^k, k in [-2, 33], above positive products: every low part of CDNA3's sum */
          C[q] = ldexpf(ts_rand64(&st) % 4 ? -1.0f : 1.0f, (int)(ts_rand64(&st) % 36) - 2);
        if (set == 7) {   /* ±(1 or a random significand) 2^k, k in [-70, 45] */
          const uint64_t r = ts_rand64(&st);
          const float sig = (r >> 8) & 1 ? 1.0f : 1.0f + (float)((r >> 9) & 0x7fffff) * 0x1p-23f;
          C[q] = ldexpf((r >> 40) & 1 ? -sig : sig, (int)((r >> 41) % 116) - 70);
        }
      }
      amd_levels_run(m, M, N, K, A, at, B, at, C, am[_i].name, set, (int)sh);
      free(A); free(B); free(C);
    }
}
END_TEST

/* an FNUZ FP8 code: random, or (edge) the largest, the smallest, subnormals,
   zero, with specials the NaN 0x80; parity >= 0: the k of that parity near
   the top exponent, the others low (the even and odd partial sums apart) */
static uint8_t fnuz_elem(uint64_t *st, int l, int edge, int specials, int parity)
{
  static const uint8_t mags[] = { 0x7f, 0x7e, 0x01, 0x02, 0x03, 0x04, 0x07, 0x08, 0x00, 0x40 };
  const uint64_t r = ts_rand64(st);
  if (specials && r % 37 == 0)
    return 0x80;
  uint32_t mag = (uint32_t)(r >> 8) & 0x7f;
  if (edge && (r >> 16) % 3 == 0)
    mag = mags[(r >> 20) % 10];
  if (parity >= 0)
    mag = (l & 1) == parity ? 0x70 + (uint32_t)((r >> 24) % 16) : 0x08 + (uint32_t)((r >> 24) % 0x50);
  return (uint8_t)(mag | (mag && (r >> 40) & 1 ? 0x80u : 0u));
}

/* mi300's FP8 kernels (the even/odd split sum, emu/tc_amd_kernel.h) equal the
   portable engine at every SIMD level for the four FNUZ operand pairs:
   random codes, edge codes, the NaN code and inf/NaN c, exact cancellation,
   even and odd k at far-apart exponents, c near binary32's smallest normal,
   the largest magnitudes with one sign per block beside c of about their sum,
   positive products below c = -2^k */
START_TEST(test_amd_fnuz_levels)
{
  const mpe_type ta = _i & 1 ? MPE_E5M2FNUZ : MPE_E4M3FNUZ, tb = _i & 2 ? MPE_E5M2FNUZ : MPE_E4M3FNUZ;
  const mpe_tc_model *m = mpe_tc_model_get("mi300", ta);
  ck_assert_ptr_nonnull(m);
  /* the last shape for set 8 alone: many outputs of few blocks */
  static const int shapes[][3] = { { 9, 37, 267 }, { 21, 70, 30 }, { 4, 64, 63 }, { 64, 64, 32 } };
  long compared = 0;
  for (int set = 0; set < 9; set++)
    for (size_t sh = 0; sh < sizeof shapes / sizeof shapes[0]; sh++) {
      if ((sh == 3) != (set == 8))
        continue;
      const int M = shapes[sh][0], N = shapes[sh][1], K = shapes[sh][2];
      uint64_t st = ts_seed() + 5000 + 1000 * (uint64_t)_i + 10 * (uint64_t)set + sh;
      uint8_t *A = malloc((size_t)M * K), *B = malloc((size_t)K * N);
      float *C = malloc(sizeof(float) * M * N);
      ck_assert(A && B && C);
      const int edge = set == 1 || set == 2, specials = set == 2;
      for (int i = 0; i < M; i++) {
        const int par = set == 4 ? (int)(ts_rand64(&st) & 1) : -1;
        for (int l = 0; l < K; l++)
          A[(size_t)i * K + l] = fnuz_elem(&st, l, edge, specials, par);
      }
      for (int q = 0; q < K * N; q++)
        B[q] = fnuz_elem(&st, 0, edge, specials, -1);
      if (set == 3)   /* products a*b and (-a)*b in every row: exact cancellation */
        for (int i = 0; i < M; i++)
          for (int l = 0; l + 1 < K; l += 3) {
            const uint8_t x = A[(size_t)i * K + l];
            A[(size_t)i * K + l + 1] = x ? x ^ 0x80 : 0;
            memcpy(B + (size_t)(l + 1) * N, B + (size_t)l * N, (size_t)N);
          }
      if (set == 6)   /* rows of zeros, rows with the even (or odd) k zero, beside tiny c */
        for (int i = 0; i < M; i++)
          for (int l = 0; l < K && i % 3 != 2; l++)
            if (i % 3 == 0 || l % 2 == i / 3 % 2)
              A[(size_t)i * K + l] = 0;
      if (set == 7)   /* the largest magnitudes, one sign per block of 16 in A's row: the split sums at their bound */
        for (int l = 0; l < K; l++) {
          for (int i = 0; i < M; i++)
            A[(size_t)i * K + l] = (uint8_t)((0x7f - ts_rand64(&st) % 4) | ((l / 16 + i) & 1 ? 0x80u : 0u));
          for (int j = 0; j < N; j++)
            B[(size_t)l * N + j] = (uint8_t)(0x7f - ts_rand64(&st) % 4);
        }
      if (set == 8)   /* positive codes */
        for (int q = 0; q < (M > N ? M : N) * K; q++) {
          if (q < M * K)
            A[q] &= 0x7f;
          if (q < K * N)
            B[q] &= 0x7f;
        }
      for (int q = 0; q < M * N; q++) {
        C[q] = amd_c(&st, specials, set == 5 || set == 6);
        if (set == 8)   /* mostly -2^k, k in [-4, 45] */
          C[q] = ldexpf(ts_rand64(&st) % 4 ? -1.0f : 1.0f, (int)(ts_rand64(&st) % 50) - 4);
        if (set == 7)   /* about a block's sum (E4M3FNUZ's largest is below 2^8, E5M2FNUZ's 2^16) */
          C[q] = ldexpf((float)(ts_rand64(&st) | 1) * 0x1p-64f * (C[q] < 0 ? -1.0f : 1.0f),
                        (ta == MPE_E5M2FNUZ ? 16 : 8) + (tb == MPE_E5M2FNUZ ? 16 : 8) - 4 +
                            (int)(ts_rand64(&st) % 12));
      }
      char what[48];
      snprintf(what, sizeof what, "mi300 %s x", mpe_type_name(ta));
      compared += amd_levels_run(m, M, N, K, A, ta, B, tb, C, what, set, (int)sh);
      free(A); free(B); free(C);
    }
  printf("check_tc_wide: mi300 %s x %s: %ld outputs of SIMD levels 1, 2 equal the portable engine\n",
         mpe_type_name(ta), mpe_type_name(tb), compared);
}
END_TEST

START_TEST(test_models_and_errors)
{
  /* which GPUs have FP64 and AMD rows */
  ck_assert_ptr_null(mpe_tc_model_get("v100", MPE_FP64));
  ck_assert_ptr_null(mpe_tc_model_get("t4", MPE_FP64));
  ck_assert_ptr_null(mpe_tc_model_get("mi100", MPE_FP64));
  ck_assert_ptr_null(mpe_tc_model_get("exact", MPE_FP64));
  ck_assert_ptr_null(mpe_tc_model_get("h100:wgmma", MPE_FP64));
  ck_assert_ptr_null(mpe_tc_model_get("mi250", MPE_TF32));
  ck_assert_ptr_null(mpe_tc_model_get("mi100:bf16", MPE_BF16));
  ck_assert_ptr_null(mpe_tc_model_get("mi300", MPE_E4M3));   /* AMD's FP8 is FNUZ, not OCP */
  ck_assert_ptr_null(mpe_tc_model_get("h100", MPE_E4M3FNUZ));
  ck_assert_ptr_null(mpe_tc_model_get("mi250", MPE_E5M2FNUZ));
  ck_assert_str_eq(mpe_tc_model_name(mpe_tc_model_get("h200", MPE_FP64)), "h100");
  ck_assert_str_eq(mpe_tc_model_name(mpe_tc_model_get("mi250x", MPE_BF16)), "mi250");
  ck_assert_str_eq(mpe_tc_model_name(mpe_tc_model_get("MI300X", MPE_TF32)), "mi300");
  ck_assert_str_eq(mpe_tc_model_name(mpe_tc_model_get("mi250:bf16", MPE_BF16)), "mi250:bf16");
  ck_assert_ptr_eq(mpe_tc_model_get("mi250:mfma", MPE_BF16), mpe_tc_model_get("mi250", MPE_BF16));
  mpe_tc_params p;
  ck_assert_int_eq(mpe_tc_model_params(mpe_tc_model_get("mi300", MPE_FP16), &p), MPE_OK);
  ck_assert_int_eq(p.mfma, MPE_TC_MFMA_TWO_STAGE);
  ck_assert_int_eq(p.instr, MPE_TC_MFMA);
  ck_assert_int_eq(p.block, 8);
  /* a custom copy computes the same; out-of-range fields are refused */
  mpe_tc_model *cm = NULL;
  ck_assert_int_eq(mpe_tc_model_custom(&cm, &p), MPE_OK);
  const float a4[1] = { 1.0f }, b4[1] = { 1.0f };
  float c = -0x1p-30f, d = 0;
  ck_assert_int_eq(mpe_mma(cm, 1, 1, 1, a4, MPE_FP32, 1, b4, MPE_FP32, 1, &c, 1, &d, MPE_FP32, 1), MPE_OK);
  ck_assert_float_eq(d, 1.0f - 0x1p-24f);
  mpe_tc_model_free(cm);
  mpe_tc_params q = p;
  q.mfma = 3;
  ck_assert_int_eq(mpe_tc_model_custom(&cm, &q), MPE_EINVAL);
  q = p;
  q.result_bits = 0;
  ck_assert_int_eq(mpe_tc_model_custom(&cm, &q), MPE_EINVAL);
  q = p;
  q.in = MPE_E4M3;
  ck_assert_int_eq(mpe_tc_model_custom(&cm, &q), MPE_EINVAL);
  q.in = MPE_E4M3FNUZ;   /* FNUZ operands: the split sum only */
  ck_assert_int_eq(mpe_tc_model_custom(&cm, &q), MPE_EINVAL);
  {
    /* the FP8 rows: the split sum, block 16, F 24, F2 31; their arguments */
    mpe_tc_params f;
    const mpe_tc_model *m8 = mpe_tc_model_get("mi300x", MPE_E5M2FNUZ);
    ck_assert_int_eq(mpe_tc_model_params(m8, &f), MPE_OK);
    ck_assert(f.mfma == MPE_TC_MFMA_TWO_STAGE_SPLIT && f.block == 16 && f.align_bits == 24 && f.result_bits == 31 &&
              f.in == MPE_E5M2FNUZ && f.in_b == 0 && f.instr == MPE_TC_MFMA);
    mpe_tc_params g = f;
    g.in_b = MPE_E4M3FNUZ;   /* a custom mixed model */
    ck_assert_int_eq(mpe_tc_model_custom(&cm, &g), MPE_OK);
    mpe_tc_model_free(cm);
    g.in_b = MPE_E4M3;   /* pairs within one family only */
    ck_assert_int_eq(mpe_tc_model_custom(&cm, &g), MPE_EINVAL);
    g = f;
    g.in = MPE_FP16;
    ck_assert_int_eq(mpe_tc_model_custom(&cm, &g), MPE_EINVAL);
    g = f;
    g.mfma = MPE_TC_MFMA_NONE;
    ck_assert_int_eq(mpe_tc_model_custom(&cm, &g), MPE_EINVAL);
    /* 0x7f x 0x7f = 57344^2 in k = 0, c = 1: exact in binary32's grid here */
    const uint8_t a8[2] = { 0x7f, 0x00 }, b8[2] = { 0x7f, 0x00 }, e8[2] = { 0x7f, 0x00 };
    float c8 = 1.0f, d8 = 0;
    uint16_t h8;
    ck_assert_int_eq(mpe_mma(m8, 1, 1, 2, a8, MPE_E5M2FNUZ, 2, b8, MPE_E5M2FNUZ, 1, &c8, 1, &d8, MPE_FP32, 1),
                     MPE_OK);
    ck_assert_float_eq(d8, 57344.0f * 57344.0f);
    /* mixed: A E4M3FNUZ 240, B E5M2FNUZ 57344 */
    ck_assert_int_eq(mpe_mma(m8, 1, 1, 2, e8, MPE_E4M3FNUZ, 2, b8, MPE_E5M2FNUZ, 1, &c8, 1, &d8, MPE_FP32, 1),
                     MPE_OK);
    ck_assert_float_eq(d8, 240.0f * 57344.0f + 1.0f);
    /* mpe_tc_model_get(3)'s example: the odd partial sum -2^-20 cut toward -inf at
       2^(14 - 24) beside the even 2^14: 16384 - 2^-10 (one sum cut toward zero: 16384) */
    const uint8_t xa[2] = { 0x78, 0x81 }, xb[2] = { 0x78, 0x01 };
    const float z8 = 0.0f;
    ck_assert_int_eq(mpe_mma(mpe_tc_model_get("mi300", MPE_E4M3FNUZ), 1, 1, 2, xa, MPE_E4M3FNUZ, 2, xb, MPE_E4M3FNUZ,
                             1, &z8, 1, &d8, MPE_FP32, 1),
                     MPE_OK);
    ck_assert_uint_eq(ts_f2u(d8), 0x467fffffu);
    /* 0x80 is NaN */
    const uint8_t n8[2] = { 0x80, 0x00 };
    ck_assert_int_eq(mpe_mma(m8, 1, 1, 2, n8, MPE_E5M2FNUZ, 2, b8, MPE_E5M2FNUZ, 1, &c8, 1, &d8, MPE_FP32, 1),
                     MPE_OK);
    ck_assert(isnan(d8));
    ck_assert_int_eq(mpe_mma(m8, 1, 1, 2, a8, MPE_E4M3, 2, b8, MPE_E5M2FNUZ, 1, &c8, 1, &d8, MPE_FP32, 1),
                     MPE_EINVAL);   /* an OCP operand */
    ck_assert_int_eq(mpe_mma(m8, 1, 1, 2, a8, MPE_E5M2FNUZ, 2, b8, MPE_E5M2FNUZ, 1, &c8, 1, &h8, MPE_FP16, 1),
                     MPE_EUNSUP);   /* binary32 accumulators only */
    ck_assert_int_eq(mpe_mma(mpe_tc_model_get("h100", MPE_E4M3), 1, 1, 2, e8, MPE_E4M3FNUZ, 2, b8, MPE_E5M2FNUZ, 1,
                             &c8, 1, &d8, MPE_FP32, 1),
                     MPE_EINVAL);   /* FNUZ operands on an OCP FP8 model */
  }
  ck_assert_int_eq(mpe_tc_model_params(mpe_tc_model_get("mi250", MPE_FP16), &q), MPE_OK);
  q.block = 3;
  ck_assert_int_eq(mpe_tc_model_custom(&cm, &q), MPE_EINVAL);
  q.block = 2;
  ck_assert_int_eq(mpe_tc_model_custom(&cm, &q), MPE_OK);
  mpe_tc_model_free(cm);
  ck_assert_int_eq(mpe_tc_model_params(mpe_tc_model_get("h100", MPE_FP64), &q), MPE_OK);
  ck_assert_int_eq(q.kind, MPE_TC_FMA_CHAIN);
  ck_assert_int_eq(mpe_tc_model_custom(&cm, &q), MPE_EINVAL);   /* FP64 models are the built-in ones */
  ck_assert_ptr_null(cm);
  /* FP64 operands go with an FP64 model, and only they */
  const mpe_tc_model *d64 = mpe_tc_model_get("a100", MPE_FP64), *h16 = mpe_tc_model_get("a100", MPE_FP16);
  double x[4] = { 1, 2, 3, 4 }, y[4] = { 0 };
  float xf[4] = { 1, 2, 3, 4 };
  ck_assert_int_eq(mpe_mma(d64, 2, 2, 2, x, MPE_FP64, 2, x, MPE_FP64, 2, NULL, 2, y, MPE_FP64, 2), MPE_OK);
  ck_assert(y[0] == 7 && y[1] == 10 && y[2] == 15 && y[3] == 22);
  ck_assert_int_eq(mpe_mma(d64, 2, 2, 2, xf, MPE_FP32, 2, x, MPE_FP64, 2, NULL, 2, y, MPE_FP64, 2), MPE_EINVAL);
  ck_assert_int_eq(mpe_mma(d64, 2, 2, 2, x, MPE_FP64, 2, x, MPE_FP64, 2, NULL, 2, y, MPE_FP32, 2), MPE_EINVAL);
  ck_assert_int_eq(mpe_mma(h16, 2, 2, 2, x, MPE_FP64, 2, x, MPE_FP64, 2, NULL, 2, y, MPE_FP64, 2), MPE_EINVAL);
  ck_assert_int_eq(mpe_mma(d64, 2, 2, 2, x, MPE_FP64, 1, x, MPE_FP64, 2, NULL, 2, y, MPE_FP64, 2), MPE_EINVAL);
  ck_assert_int_eq(mpe_mma(d64, 2, 2, 2, NULL, MPE_FP64, 2, x, MPE_FP64, 2, NULL, 2, y, MPE_FP64, 2), MPE_EINVAL);
  ck_assert_int_eq(mpe_mma(d64, -1, 2, 2, x, MPE_FP64, 2, x, MPE_FP64, 2, NULL, 2, y, MPE_FP64, 2), MPE_EINVAL);
  ck_assert_int_eq(mpe_mma(NULL, 2, 2, 2, x, MPE_FP64, 2, x, MPE_FP64, 2, NULL, 2, y, MPE_FP64, 2), MPE_EINVAL);
  ck_assert_int_eq(mpe_gemm(d64, MPE_ROW_MAJOR, MPE_NO_TRANS, MPE_NO_TRANS, 2, 2, 2, 1, x, MPE_FP64, 2, x,
                            MPE_FP64, 2, 0, y, MPE_FP32, 2),
                   MPE_EINVAL);
  ck_assert_int_eq(mpe_gemm(d64, (mpe_layout)7, MPE_NO_TRANS, MPE_NO_TRANS, 2, 2, 2, 1, x, MPE_FP64, 2, x,
                            MPE_FP64, 2, 0, y, MPE_FP64, 2),
                   MPE_EINVAL);
  ck_assert_int_eq(mpe_gemm(d64, MPE_ROW_MAJOR, MPE_NO_TRANS, MPE_NO_TRANS, 2, 2, 2, 1, x, MPE_FP64, 2, x,
                            MPE_FP64, 2, 0, NULL, MPE_FP64, 2),
                   MPE_EINVAL);
  ck_assert_int_eq(mpe_mma_cd(d64, 2, 2, 2, x, MPE_FP64, 2, x, MPE_FP64, 2, NULL, MPE_FP16, 2, y, MPE_FP64, 2),
                   MPE_EINVAL);
  /* empty shapes */
  ck_assert_int_eq(mpe_mma(d64, 0, 2, 2, NULL, MPE_FP64, 2, x, MPE_FP64, 2, NULL, 2, y, MPE_FP64, 2), MPE_OK);
  ck_assert_int_eq(mpe_gemm(d64, MPE_ROW_MAJOR, MPE_NO_TRANS, MPE_NO_TRANS, 2, 2, 0, 1, NULL, MPE_FP64, 1, NULL,
                            MPE_FP64, 2, 2, x, MPE_FP64, 2),
                   MPE_OK);
  ck_assert(x[0] == 2 && x[3] == 8);
}
END_TEST

/* CDNA1 (mi100): a block whose c and products are all -0 (c = -0, a = -0 or a
   negative value times +0) gives +0 in MMA-Sim 2.1.1 (e_fdpa sums exactly from
   +0: f32_16x16x16f16 and f32_16x16x8bf16 with A = [-0, ...], B = [1, ...],
   C = -0 give 0x00000000, at every K), at every SIMD level */
START_TEST(test_amd_cdna1_neg_zero)
{
  static const mpe_type ty[] = { MPE_FP16, MPE_BF16 };
  const mpe_tc_model *m = mpe_tc_model_get("mi100", ty[_i]);
  ck_assert_ptr_nonnull(m);
  static const int ks[] = { 1, 2, 4, 7, 8 };
  float A[3 * 8], B[8 * 2], C[3 * 2], D[3 * 2];
  for (size_t s = 0; s < sizeof ks / sizeof ks[0]; s++) {
    const int K = ks[s];
    for (int l = 0; l < K; l++) {
      A[l] = -0.0f;                          /* row 0: -0 times 1 */
      A[K + l] = -0x1p-3f;                   /* row 1: a negative value (times +0 in column 1) */
      A[2 * K + l] = l % 2 ? -0.0f : -1.0f;  /* row 2: -1 and -0 (times +0 in column 1) */
      B[l * 2] = 1.0f;
      B[l * 2 + 1] = 0.0f;
    }
    for (int q = 0; q < 6; q++)
      C[q] = -0.0f;
    for (int lvl = 0; lvl <= 2; lvl++) {
      mpe_simd_level_set(lvl);
      ck_assert_int_eq(mpe_mma(m, 3, 2, K, A, MPE_FP32, K, B, MPE_FP32, 2, C, 2, D, MPE_FP32, 2), MPE_OK);
      for (int q = 0; q < 6; q++) {
        if (q == 2 || q == 4)   /* rows 1 and 2 times 1: non-zero results */
          continue;
        ck_assert_msg(ts_f2u(D[q]) == 0, "mi100 %s K %d level %d (%d,%d): %a, MMA-Sim +0", mpe_type_name(ty[_i]),
                      K, lvl, q / 2, q % 2, D[q]);
      }
    }
  }
  /* a call large enough for the SIMD kernels (64 x 48 x 8): c = -0 everywhere,
     A's rows alternate -0 and negative values, B's columns 1 and +0; an output is
     +0 where every addend is a zero, and the one-call result equals level 0 */
  enum { GM = 64, GN = 48, GK = 8 };
  float *GA = malloc(sizeof(float) * GM * GK), *GB = malloc(sizeof(float) * GK * GN);
  float *GC = malloc(sizeof(float) * GM * GN), *GD = malloc(sizeof(float) * GM * GN);
  float *G0 = malloc(sizeof(float) * GM * GN);
  for (int i = 0; i < GM; i++)
    for (int l = 0; l < GK; l++)
      GA[i * GK + l] = i % 2 ? -0.0f : -ldexpf(1.0f, -(i + l) % 9);
  for (int l = 0; l < GK; l++)
    for (int j = 0; j < GN; j++)
      GB[l * GN + j] = j % 3 ? 0.0f : 1.0f;
  for (int lvl = 0; lvl <= 2; lvl++) {
    mpe_simd_level_set(lvl);
    for (int q = 0; q < GM * GN; q++)
      GD[q] = -0.0f;
    ck_assert_int_eq(mpe_mma(m, GM, GN, GK, GA, MPE_FP32, GK, GB, MPE_FP32, GN, GD, GN, GC, MPE_FP32, GN), MPE_OK);
    for (int i = 0; i < GM; i++)
      for (int j = 0; j < GN; j++) {
        const int zero = i % 2 || j % 3;   /* -0 or a zero product in every step */
        if (zero)
          ck_assert_msg(ts_f2u(GC[i * GN + j]) == 0, "mi100 %s 64x48x8 level %d (%d,%d): %a, MMA-Sim +0",
                        mpe_type_name(ty[_i]), lvl, i, j, GC[i * GN + j]);
        else
          ck_assert_msg(GC[i * GN + j] < 0, "mi100 %s 64x48x8 level %d (%d,%d): %a", mpe_type_name(ty[_i]), lvl, i, j,
                        GC[i * GN + j]);
      }
    if (lvl == 0)
      memcpy(G0, GC, sizeof(float) * GM * GN);
    else
      for (int q = 0; q < GM * GN; q++)
        ck_assert_msg(ts_f2u(GC[q]) == ts_f2u(G0[q]), "mi100 %s 64x48x8 level %d: output %d %a, level 0 %a",
                      mpe_type_name(ty[_i]), lvl, q, GC[q], G0[q]);
  }
  free(GA); free(GB); free(GC); free(GD); free(G0);
  mpe_simd_level_set(-1);
}
END_TEST

static Suite *wide_suite(void)
{
  Suite *s = suite_create("tc_wide");
  TCase *tc = tcase_create("fp64_and_amd");
  tcase_set_timeout(tc, 600);
  tcase_add_loop_test(tc, test_f64_mma, 0, NF64);
  tcase_add_test(tc, test_f64_gemm);
  tcase_add_test(tc, test_amd_reproducers);
  tcase_add_loop_test(tc, test_amd_gemm, 0, 8);
  tcase_add_loop_test(tc, test_amd_levels, 0, 8);
  tcase_add_loop_test(tc, test_amd_fnuz_levels, 0, 4);
  tcase_add_loop_test(tc, test_amd_cdna1_neg_zero, 0, 2);
  tcase_add_test(tc, test_models_and_errors);
  suite_add_tcase(s, tc);
  return s;
}

int main(void)
{
  setvbuf(stdout, NULL, _IONBF, 0);
  return ts_run(wide_suite());
}
