/* Integer tensor cores (mpe_tc_int(3)): mpe_mma / mpe_gemm with INT8, UINT8,
   INT4, UINT4 inputs against exact int64 references, at every SIMD level, for
   every integer model in its wrap-around and saturating (.satfinite) forms. */
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include "testsupport.h"

typedef struct { const char *name; mpe_type in; } named;
static const named models[] = {
  { "t4", MPE_INT8 }, { "t4", MPE_UINT8 }, { "t4", MPE_INT4 }, { "t4", MPE_UINT4 },
  { "a100", MPE_INT8 }, { "a100", MPE_UINT8 }, { "a100", MPE_INT4 }, { "a100", MPE_UINT4 },
  { "ada", MPE_INT8 }, { "ada", MPE_UINT8 }, { "ada", MPE_INT4 }, { "ada", MPE_UINT4 },
  { "h100", MPE_INT8 }, { "h100", MPE_UINT8 }, { "b200", MPE_INT8 }, { "b200", MPE_UINT8 },
  { "exact", MPE_INT8 }, { "exact", MPE_UINT8 }, { "exact", MPE_INT4 }, { "exact", MPE_UINT4 },
};
#define NMODEL ((int)(sizeof models / sizeof models[0]))
#define NCONFIG (2 * NMODEL)   /* each model wrapping, then saturating */

/* Config i: the named model, or its saturating twin (caller frees with
   mpe_tc_model_free, which ignores the built-in one). */
static mpe_tc_model *config(int i, mpe_tc_params *p, const char **label, char *buf, size_t n)
{
  const mpe_tc_model *m = mpe_tc_model_get(models[i % NMODEL].name, models[i % NMODEL].in);
  ck_assert_ptr_nonnull(m);
  ck_assert_int_eq(mpe_tc_model_params(m, p), MPE_OK);
  ck_assert_int_eq(p->satfinite, 0);
  snprintf(buf, n, "%s/%s/%s", models[i % NMODEL].name, mpe_type_name(models[i % NMODEL].in),
           i < NMODEL ? "wrap" : "sat");
  *label = buf;
  if (i < NMODEL)
    return (mpe_tc_model *)m;
  mpe_tc_model *s = NULL;
  p->satfinite = 1;
  ck_assert_int_eq(mpe_tc_model_custom(&s, p), MPE_OK);
  return s;
}

static int lo_of(mpe_type t) { return t == MPE_INT8 ? -128 : t == MPE_INT4 ? -8 : 0; }
static int hi_of(mpe_type t) { return t == MPE_INT8 ? 127 : t == MPE_INT4 ? 7 : t == MPE_UINT8 ? 255 : 15; }
static int is_signed(mpe_type t) { return t == MPE_INT8 || t == MPE_INT4; }

/* The other signedness of the same width: the hardware takes mixed operands. */
static mpe_type twin(mpe_type t)
{
  return t == MPE_INT8 ? MPE_UINT8 : t == MPE_UINT8 ? MPE_INT8 : t == MPE_INT4 ? MPE_UINT4 : MPE_INT4;
}

/* Random values weighted toward the extremes of t. */
static void fill(void *x, size_t n, mpe_type t, uint64_t *st)
{
  int lo = lo_of(t), hi = hi_of(t);
  for (size_t i = 0; i < n; i++) {
    uint64_t r = ts_rand64(st);
    int v;
    switch (r & 7) {
    case 0: case 1: v = lo; break;
    case 2: case 3: v = hi; break;
    case 4: v = 0; break;
    default: v = lo + (int)((r >> 8) % (uint64_t)(hi - lo + 1)); break;
    }
    if (is_signed(t))
      ((int8_t *)x)[i] = (int8_t)v;
    else
      ((uint8_t *)x)[i] = (uint8_t)v;
  }
}

static int get(const void *x, mpe_type t, size_t i)
{
  return is_signed(t) ? ((const int8_t *)x)[i] : ((const uint8_t *)x)[i];
}

static int32_t clamp64(int64_t v) { return v > INT32_MAX ? INT32_MAX : v < INT32_MIN ? INT32_MIN : (int32_t)v; }

/* The reference: exact int64 products and sums. wrap: the low 32 bits of
   c + the exact sum (one expression, no blocks). sat: blocks of L from c,
   each block's exact sum clamped (L >= K: one clamp at the end). */
static int32_t ref(const void *A, mpe_type at, long ars, long acs, const void *B, mpe_type bt, long brs,
                   long bcs, int i, int j, int K, int L, int sat, int32_t c)
{
  if (!sat) {
    int64_t s = c;
    for (int l = 0; l < K; l++)
      s += (int64_t)get(A, at, (size_t)(i * ars + l * acs)) * get(B, bt, (size_t)(l * brs + j * bcs));
    return (int32_t)(uint32_t)(uint64_t)s;
  }
  int64_t d = c;
  for (int l0 = 0; l0 < K; l0 += L) {
    int64_t s = 0;
    for (int l = l0; l < K && l < l0 + L; l++)
      s += (int64_t)get(A, at, (size_t)(i * ars + l * acs)) * get(B, bt, (size_t)(l * brs + j * bcs));
    d = clamp64(d + s);
  }
  return (int32_t)d;
}

static int block_of(const mpe_tc_params *p, int K)
{
  return p->kind == MPE_TC_EXACT ? (K > 0 ? K : 1) : p->block;
}

/* C values near the int32 limits, so that short sums overflow. */
static int32_t near_limit(uint64_t *st)
{
  uint64_t r = ts_rand64(st);
  int32_t off = (int32_t)((r >> 8) % 200000);
  switch (r & 3) {
  case 0: return INT32_MAX - off;
  case 1: return INT32_MIN + off;
  case 2: return (int32_t)(r >> 32);
  default: return 0;
  }
}

static const int shapes[][3] = {
  { 1, 1, 1 }, { 3, 5, 7 }, { 4, 16, 32 }, { 17, 19, 33 }, { 9, 40, 130 }, { 33, 17, 1000 }, { 5, 3, 2051 },
};
#define NSHAPE ((int)(sizeof shapes / sizeof shapes[0]))

/* mpe_mma: every model, level, shape; mixed signedness on half the shapes. */
START_TEST(test_mma_exact)
{
  mpe_tc_params p;
  const char *label;
  char buf[64];
  mpe_tc_model *m = config(_i, &p, &label, buf, sizeof buf);
  uint64_t st = ts_seed() ^ (uint64_t)_i * 0x9e3779b97f4a7c15ull;
  for (int lvl = 0; lvl <= 2; lvl++) {
    if (mpe_simd_level_set(lvl) != lvl) {
      printf("tc_int mma %s level%d: not on this CPU\n", label, lvl);
      continue;
    }
    long outs = 0, wrong = 0;
    for (int s = 0; s < NSHAPE; s++) {
      int M = shapes[s][0], N = shapes[s][1], K = shapes[s][2];
      mpe_type at = p.in, bt = s & 1 ? twin(p.in) : p.in;
      int lda = K + (s % 3), ldb = N + (s % 2), ldc = N + 1, ldd = N + 2;
      int8_t *A = malloc((size_t)M * lda), *B = malloc((size_t)K * ldb);
      int32_t *C = malloc(sizeof(int32_t) * (size_t)M * ldc), *D = malloc(sizeof(int32_t) * (size_t)M * ldd);
      fill(A, (size_t)M * lda, at, &st);
      fill(B, (size_t)K * ldb, bt, &st);
      for (int t = 0; t < M * ldc; t++)
        C[t] = near_limit(&st);
      ck_assert_int_eq(mpe_mma(m, M, N, K, A, at, lda, B, bt, ldb, C, ldc, D, MPE_INT32, ldd), MPE_OK);
      for (int i = 0; i < M; i++)
        for (int j = 0; j < N; j++) {
          int32_t want = ref(A, at, lda, 1, B, bt, ldb, 1, i, j, K, block_of(&p, K), p.satfinite, C[i * ldc + j]);
          outs++;
          if (D[i * ldd + j] != want && wrong++ < 5)
            printf("  %s level%d %dx%dx%d (%d,%d): %d, want %d\n", label, lvl, M, N, K, i, j, D[i * ldd + j], want);
        }
      /* D may be C */
      ck_assert_int_eq(mpe_mma(m, M, N, K, A, at, lda, B, bt, ldb, C, ldc, C, MPE_INT32, ldc), MPE_OK);
      for (int i = 0; i < M; i++)
        for (int j = 0; j < N; j++) {
          outs++;
          wrong += C[i * ldc + j] != D[i * ldd + j];
        }
      free(A); free(B); free(C); free(D);
    }
    printf("tc_int mma %s level%d: %ld outputs, %ld wrong\n", label, lvl, outs, wrong);
    ck_assert_msg(wrong == 0, "%s level %d: %ld of %ld wrong", label, lvl, wrong, outs);
  }
  mpe_simd_level_set(-1);
  mpe_tc_model_free(m);
}
END_TEST

/* mpe_gemm: both layouts, all transpositions, integer alpha/beta. */
START_TEST(test_gemm_layouts)
{
  mpe_tc_params p;
  const char *label;
  char buf[64];
  mpe_tc_model *m = config(_i, &p, &label, buf, sizeof buf);
  uint64_t st = ts_seed() ^ (uint64_t)(_i + 100) * 0x9e3779b97f4a7c15ull;
  static const float ab[][2] = { { 1, 0 }, { 1, 1 }, { -3, -2 }, { 1048576, 1 }, { 0, 5 }, { -2147483648.0f, 1 } };
  for (int lvl = 0; lvl <= 1; lvl++) {
    mpe_simd_level_set(lvl);
    long outs = 0, wrong = 0;
    for (int v = 0; v < 8; v++) {
      int M = 7 + v * 3, N = 5 + v * 5, K = 31 + v * 37;
      mpe_layout lay = v & 1 ? MPE_COL_MAJOR : MPE_ROW_MAJOR;
      mpe_trans ta = v & 2 ? MPE_TRANS : MPE_NO_TRANS, tb = v & 4 ? MPE_TRANS : MPE_NO_TRANS;
      int row = lay == MPE_ROW_MAJOR;
      int ar = (ta == MPE_NO_TRANS) == row ? M : K, ac = (ta == MPE_NO_TRANS) == row ? K : M;
      int br = (tb == MPE_NO_TRANS) == row ? K : N, bc = (tb == MPE_NO_TRANS) == row ? N : K;
      int cr = row ? M : N, cc = row ? N : M;
      int lda = ac + 1, ldb = bc + 2, ldc = cc + 3;
      mpe_type at = v & 1 ? twin(p.in) : p.in, bt = p.in;
      int8_t *A = malloc((size_t)ar * lda), *B = malloc((size_t)br * ldb);
      int32_t *C = malloc(sizeof(int32_t) * (size_t)cr * ldc), *C0 = malloc(sizeof(int32_t) * (size_t)cr * ldc);
      fill(A, (size_t)ar * lda, at, &st);
      fill(B, (size_t)br * ldb, bt, &st);
      /* element (i, l) of op(A), (l, j) of op(B), (i, j) of C */
      long ars, acs, brs, bcs, crs = row ? ldc : 1, ccs = row ? 1 : ldc;
      if (row) {
        ars = ta == MPE_NO_TRANS ? lda : 1; acs = ta == MPE_NO_TRANS ? 1 : lda;
        brs = tb == MPE_NO_TRANS ? ldb : 1; bcs = tb == MPE_NO_TRANS ? 1 : ldb;
      } else {
        ars = ta == MPE_NO_TRANS ? 1 : lda; acs = ta == MPE_NO_TRANS ? lda : 1;
        brs = tb == MPE_NO_TRANS ? 1 : ldb; bcs = tb == MPE_NO_TRANS ? ldb : 1;
      }
      for (size_t x = 0; x < sizeof ab / sizeof ab[0]; x++) {
        for (int t = 0; t < cr * ldc; t++)
          C0[t] = C[t] = near_limit(&st);
        ck_assert_int_eq(mpe_gemm(m, lay, ta, tb, M, N, K, ab[x][0], A, at, lda, B, bt, ldb, ab[x][1], C,
                                  MPE_INT32, ldc), MPE_OK);
        int32_t al = (int32_t)ab[x][0], be = (int32_t)ab[x][1];
        for (int i = 0; i < M; i++)
          for (int j = 0; j < N; j++) {
            int32_t acc = ref(A, at, ars, acs, B, bt, brs, bcs, i, j, K, block_of(&p, K), p.satfinite, 0);
            int32_t c0 = C0[i * crs + j * ccs], want;
            if (p.satfinite)
              want = clamp64((int64_t)al * acc + (int64_t)be * c0);   /* fits int64: |al|,|be| <= 2^31 */
            else
              want = (int32_t)((uint32_t)al * (uint32_t)acc + (uint32_t)be * (uint32_t)c0);
            outs++;
            if (C[i * crs + j * ccs] != want && wrong++ < 5)
              printf("  %s level%d v%d alpha %g beta %g (%d,%d): %d, want %d\n", label, lvl, v, ab[x][0],
                     ab[x][1], i, j, C[i * crs + j * ccs], want);
          }
        /* padding untouched */
        for (int r = 0; r < cr; r++)
          for (int q = cc; q < ldc; q++)
            ck_assert_int_eq(C[r * ldc + q], C0[r * ldc + q]);
      }
      free(A); free(B); free(C); free(C0);
    }
    printf("tc_int gemm %s level%d: %ld outputs, %ld wrong\n", label, lvl, outs, wrong);
    ck_assert_msg(wrong == 0, "%s level %d: %ld of %ld wrong", label, lvl, wrong, outs);
  }
  mpe_simd_level_set(-1);
  mpe_tc_model_free(m);
}
END_TEST

/* K long enough that the exact sum leaves int32: all-extreme operands. */
START_TEST(test_long_k_overflow)
{
  mpe_tc_params p;
  const char *label;
  char buf[64];
  mpe_tc_model *m = config(_i, &p, &label, buf, sizeof buf);
  const int M = 2, N = 3;
  int lo = lo_of(p.in), hi = hi_of(p.in);
  int64_t big = (int64_t)(lo * lo > hi * hi ? lo * lo : hi * hi);
  /* 8-bit: |sum| about 1.5 * 2^31 from C = 0; 4-bit (which would need K = 5e7):
     K = 2^16 from C just below INT32_MAX */
  int wide = p.in == MPE_INT8 || p.in == MPE_UINT8;
  int K = wide ? (int)(3221225472LL / big) + 7 : 65536;
  int8_t *A = malloc((size_t)M * K), *B = malloc((size_t)K * N);
  for (int l = 0; l < K; l++) {
    int av = lo * lo > hi * hi ? lo : hi;
    /* row 0: the extreme product all along (overflows); row 1: alternating signs, small sum */
    ((int8_t *)A)[l] = (int8_t)av;
    ((int8_t *)A)[K + l] = (int8_t)(is_signed(p.in) && (l & 1) ? lo : hi);
    for (int j = 0; j < N; j++)
      B[(size_t)l * N + j] = (int8_t)(j == 0 ? av : j == 1 ? hi : (is_signed(p.in) ? -1 : 1));
  }
  int32_t C[6] = { wide ? 0 : INT32_MAX - 1000, INT32_MAX, INT32_MIN, -1, 1, INT32_MAX - 5 }, D[6];
  long outs = 0, wrong = 0;
  for (int lvl = 0; lvl <= 1; lvl++) {
    mpe_simd_level_set(lvl);
    ck_assert_int_eq(mpe_mma(m, M, N, K, A, p.in, K, B, p.in, N, C, N, D, MPE_INT32, N), MPE_OK);
    for (int i = 0; i < M; i++)
      for (int j = 0; j < N; j++) {
        int32_t want = ref(A, p.in, K, 1, B, p.in, N, 1, i, j, K, block_of(&p, K), p.satfinite, C[i * N + j]);
        outs++;
        if (D[i * N + j] != want && wrong++ < 5)
          printf("  %s level%d K=%d (%d,%d): %d, want %d\n", label, lvl, K, i, j, D[i * N + j], want);
      }
  }
  /* the exact sum of row 0 × column 0 really leaves the int32 range */
  ck_assert(C[0] + big * K > INT32_MAX);
  if (p.satfinite)
    ck_assert_int_eq(D[0], INT32_MAX);
  else
    ck_assert_int_eq(D[0], (int32_t)(uint32_t)(uint64_t)(C[0] + big * K));
  printf("tc_int long K %s (K=%d): %ld outputs, %ld wrong\n", label, K, outs, wrong);
  ck_assert_int_eq(wrong, 0);
  mpe_simd_level_set(-1);
  free(A); free(B);
  mpe_tc_model_free(m);
}
END_TEST

/* Where saturation happens: a block of +127*127 products after C = INT32_MAX - 100,
   then a block of -127*127. Per-instruction clamping keeps the first clamp
   (INT32_MAX - L*16129); the exact model clamps only the end (INT32_MAX - 100);
   wrap gives INT32_MAX - 100 too. A100 (L = 32) and T4 (L = 16) differ when the
   sign changes after 16 products. */
START_TEST(test_saturation_point)
{
  for (int lvl = 0; lvl <= 1; lvl++) {
    mpe_simd_level_set(lvl);
    static const char *const names[] = { "t4", "a100", "ada", "h100", "b200", "exact" };
    for (int w = 0; w < 6; w++) {
      const mpe_tc_model *m = mpe_tc_model_get(names[w], MPE_INT8);
      mpe_tc_params p;
      mpe_tc_model_params(m, &p);
      for (int half = 16; half <= 32; half += 16) {
        int K = 2 * half;
        int8_t A[64], B[64 * 8];
        for (int l = 0; l < K; l++) {
          A[l] = l < half ? 127 : -127;
          for (int j = 0; j < 8; j++)
            B[l * 8 + j] = 127;
        }
        int32_t C[8], D[8];
        for (int j = 0; j < 8; j++)
          C[j] = INT32_MAX - 100;
        mpe_tc_model *s = NULL;
        p.satfinite = 1;
        ck_assert_int_eq(mpe_tc_model_custom(&s, &p), MPE_OK);
        ck_assert_int_eq(mpe_mma(s, 1, 8, K, A, MPE_INT8, K, B, MPE_INT8, 8, C, 8, D, MPE_INT32, 8), MPE_OK);
        int L = p.kind == MPE_TC_EXACT ? K : p.block;
        int32_t want = L <= half ? INT32_MAX - half * 16129 : INT32_MAX - 100;
        for (int j = 0; j < 8; j++)
          ck_assert_msg(D[j] == want, "%s sat level %d half %d: %d, want %d", names[w], lvl, half, D[j], want);
        ck_assert_int_eq(mpe_mma(m, 1, 8, K, A, MPE_INT8, K, B, MPE_INT8, 8, C, 8, D, MPE_INT32, 8), MPE_OK);
        for (int j = 0; j < 8; j++)
          ck_assert_int_eq(D[j], INT32_MAX - 100);
        if (w == 0 && half == 16)
          printf("tc_int saturation point: t4 (L=16) %d, a100 (L=32) %d, exact %d\n", want, INT32_MAX - 100,
                 INT32_MAX - 100);
        mpe_tc_model_free(s);
      }
    }
  }
  mpe_simd_level_set(-1);
}
END_TEST

START_TEST(test_models_and_errors)
{
  /* which GPUs have which instruction */
  ck_assert_ptr_null(mpe_tc_model_get("h100", MPE_INT4));
  ck_assert_ptr_null(mpe_tc_model_get("h100", MPE_UINT4));
  ck_assert_ptr_null(mpe_tc_model_get("v100", MPE_INT8));
  ck_assert_ptr_null(mpe_tc_model_get("b200", MPE_INT4));     /* Blackwell: INT8 only */
  ck_assert_ptr_null(mpe_tc_model_get("b200", MPE_UINT4));
  {
    /* RTX Blackwell's mma.sync and B200's tcgen05.mma kind::i8: the same exact sums */
    mpe_tc_params pr, pb;
    ck_assert_int_eq(mpe_tc_model_params(mpe_tc_model_get("rtx-pro-6000", MPE_INT8), &pr), 0);
    ck_assert_int_eq(mpe_tc_model_params(mpe_tc_model_get("b200", MPE_INT8), &pb), 0);
    ck_assert_int_eq(pr.instr, MPE_TC_MMA_SYNC);
    ck_assert_int_eq(pb.instr, MPE_TC_TCGEN05);
    pr.instr = pb.instr;
    ck_assert_int_eq(memcmp(&pr, &pb, sizeof pr), 0);
  }
  ck_assert_ptr_null(mpe_tc_model_get("fma-chain", MPE_INT8));
  ck_assert_ptr_nonnull(mpe_tc_model_get("h200", MPE_INT8));
  ck_assert_ptr_nonnull(mpe_tc_model_get("a30", MPE_INT4));
  mpe_tc_params p;
  ck_assert_int_eq(mpe_tc_model_params(mpe_tc_model_get("t4", MPE_INT8), &p), MPE_OK);
  ck_assert_int_eq(p.block, 16);
  ck_assert_int_eq(mpe_tc_model_params(mpe_tc_model_get("a100", MPE_INT4), &p), MPE_OK);
  ck_assert_int_eq(p.block, 64);
  ck_assert_int_eq(mpe_tc_model_params(mpe_tc_model_get("h100", MPE_UINT8), &p), MPE_OK);
  ck_assert_int_eq(p.block, 32);
  ck_assert_str_eq(mpe_type_name(MPE_INT8), "int8");
  ck_assert_str_eq(mpe_type_name(MPE_UINT4), "uint4");
  ck_assert_str_eq(mpe_type_name(MPE_INT32), "int32");

  /* custom models */
  mpe_tc_model *c = NULL;
  mpe_tc_model_params(mpe_tc_model_get("a100", MPE_INT8), &p);
  p.satfinite = 2;
  ck_assert_int_eq(mpe_tc_model_custom(&c, &p), MPE_EINVAL);
  p.satfinite = 1; p.block = 0;
  ck_assert_int_eq(mpe_tc_model_custom(&c, &p), MPE_EINVAL);
  p.block = 1025;
  ck_assert_int_eq(mpe_tc_model_custom(&c, &p), MPE_EINVAL);
  p.block = 32; p.kind = MPE_TC_FMA_CHAIN;
  ck_assert_int_eq(mpe_tc_model_custom(&c, &p), MPE_EINVAL);
  ck_assert_ptr_null(c);
  mpe_tc_model_params(mpe_tc_model_get("a100", MPE_FP16), &p);
  p.satfinite = 1;
  ck_assert_int_eq(mpe_tc_model_custom(&c, &p), MPE_EINVAL);

  const mpe_tc_model *i8 = mpe_tc_model_get("a100", MPE_INT8), *i4 = mpe_tc_model_get("a100", MPE_INT4);
  const mpe_tc_model *f16 = mpe_tc_model_get("a100", MPE_FP16);
  int8_t A[64] = { 0 }, B[64] = { 0 };
  int32_t C[16] = { 0 }, D[16];
  float F[16] = { 0 };
  ck_assert_int_eq(mpe_mma(NULL, 2, 2, 2, A, MPE_INT8, 2, B, MPE_INT8, 2, C, 2, D, MPE_INT32, 2), MPE_EINVAL);
  ck_assert_int_eq(mpe_mma(i8, -1, 2, 2, A, MPE_INT8, 2, B, MPE_INT8, 2, C, 2, D, MPE_INT32, 2), MPE_EINVAL);
  ck_assert_int_eq(mpe_mma(i8, 2, 2, 2, A, (mpe_type)99, 2, B, MPE_INT8, 2, C, 2, D, MPE_INT32, 2), MPE_EINVAL);
  ck_assert_int_eq(mpe_mma(i8, 2, 2, 2, NULL, MPE_INT8, 2, B, MPE_INT8, 2, C, 2, D, MPE_INT32, 2), MPE_EINVAL);
  ck_assert_int_eq(mpe_mma(i8, 2, 2, 2, A, MPE_INT8, 1, B, MPE_INT8, 2, C, 2, D, MPE_INT32, 2), MPE_EINVAL);
  ck_assert_int_eq(mpe_mma(i8, 2, 2, 2, A, MPE_INT8, 2, B, MPE_INT8, 2, C, 2, NULL, MPE_INT32, 2), MPE_EINVAL);
  /* k near INT_MAX: its padding to whole segments would overflow an int */
  ck_assert_int_eq(mpe_mma(i8, 1, 1, INT_MAX - 5, A, MPE_INT8, INT_MAX - 5, B, MPE_INT8, 1, C, 1, D, MPE_INT32, 1),
                   MPE_EINVAL);
  ck_assert_int_eq(mpe_gemm(i8, MPE_ROW_MAJOR, MPE_NO_TRANS, MPE_NO_TRANS, 1, 1, INT_MAX, 1, A, MPE_INT8, INT_MAX,
                            B, MPE_INT8, 1, 0, C, MPE_INT32, 1), MPE_EINVAL);
  /* well-formed but not computed: MPE_EUNSUP */
  ck_assert_int_eq(mpe_mma(i8, 2, 2, 2, A, MPE_INT4, 2, B, MPE_INT8, 2, C, 2, D, MPE_INT32, 2), MPE_EUNSUP);
  ck_assert_int_eq(mpe_mma(i8, 2, 2, 2, F, MPE_FP32, 2, B, MPE_INT8, 2, C, 2, D, MPE_INT32, 2), MPE_EUNSUP);
  ck_assert_int_eq(mpe_mma(i8, 2, 2, 2, A, MPE_INT8, 2, B, MPE_INT8, 2, F, 2, F, MPE_FP32, 2), MPE_EUNSUP);
  ck_assert_int_eq(mpe_mma(f16, 2, 2, 2, A, MPE_INT8, 2, B, MPE_INT8, 2, C, 2, D, MPE_INT32, 2), MPE_EUNSUP);
  ck_assert_int_eq(mpe_mma(f16, 2, 2, 2, F, MPE_FP32, 2, F, MPE_FP32, 2, C, 2, D, MPE_INT32, 2), MPE_EUNSUP);
  ck_assert_int_eq(mpe_gemm(i8, MPE_ROW_MAJOR, MPE_NO_TRANS, MPE_NO_TRANS, 2, 2, 2, 0.5f, A, MPE_INT8, 2, B,
                            MPE_INT8, 2, 0, C, MPE_INT32, 2), MPE_EUNSUP);
  ck_assert_int_eq(mpe_gemm(i8, MPE_ROW_MAJOR, MPE_NO_TRANS, MPE_NO_TRANS, 2, 2, 2, 1, A, MPE_INT8, 2, B,
                            MPE_INT8, 2, 4294967296.0f, C, MPE_INT32, 2), MPE_EUNSUP);
  ck_assert_int_eq(mpe_gemm(i8, MPE_ROW_MAJOR, MPE_NO_TRANS, MPE_NO_TRANS, 2, 2, 2, NAN, A, MPE_INT8, 2, B,
                            MPE_INT8, 2, 0, C, MPE_INT32, 2), MPE_EINVAL);
  ck_assert_int_eq(mpe_gemm(i8, (mpe_layout)7, MPE_NO_TRANS, MPE_NO_TRANS, 2, 2, 2, 1, A, MPE_INT8, 2, B,
                            MPE_INT8, 2, 0, C, MPE_INT32, 2), MPE_EINVAL);
  ck_assert_int_eq(mpe_gemm(i8, MPE_ROW_MAJOR, MPE_NO_TRANS, MPE_NO_TRANS, 2, 2, 2, 1, A, MPE_INT8, 2, B,
                            MPE_INT8, 2, 0, F, MPE_FP32, 2), MPE_EUNSUP);
  ck_assert_int_eq(mpe_gemm(i8, MPE_ROW_MAJOR, MPE_NO_TRANS, MPE_NO_TRANS, 2, 2, 2, 1, A, MPE_INT8, 2, B,
                            MPE_INT8, 2, 0, NULL, MPE_INT32, 2), MPE_EINVAL);
  /* the GPU path takes integer models (mpe_gpu(3), tests/check_gpu*): without
     CUDA it answers MPE_EUNSUP, with CUDA and no device MPE_EDEVICE */
  int ndev = 0;
  int gpu_want = !MPE_HAVE_CUDA ? MPE_EUNSUP : mpe_gpu_device_count(&ndev) != MPE_OK ? MPE_EDEVICE : -1;
  if (gpu_want >= 0) {
    ck_assert_int_eq(mpe_gpu_mma(i8, 2, 2, 2, A, MPE_INT8, 2, B, MPE_INT8, 2, C, 2, D, MPE_INT32, 2), gpu_want);
    ck_assert_int_eq(mpe_gpu_gemm(MPE_GPU_PATH_MMA, i8, MPE_ROW_MAJOR, MPE_NO_TRANS, MPE_NO_TRANS, 2, 2, 2, 1, A,
                                  MPE_INT8, 2, B, MPE_INT8, 2, 0, C, MPE_INT32, 2), gpu_want);
  }
  /* a 4-bit operand out of range: MPE_ERANGE at every level, D untouched */
  for (int lvl = 0; lvl <= 1; lvl++) {
    mpe_simd_level_set(lvl);
    for (int t = 0; t < 4; t++) {
      int8_t a4[64] = { 0 };
      a4[17] = t == 0 ? 8 : t == 1 ? -9 : t == 2 ? 100 : -128;
      for (int q = 0; q < 16; q++)
        D[q] = 12345;
      ck_assert_int_eq(mpe_mma(i4, 4, 4, 16, a4, MPE_INT4, 16, B, MPE_INT4, 4, C, 4, D, MPE_INT32, 4), MPE_ERANGE);
      ck_assert_int_eq(D[0], 12345);
      uint8_t u4[64] = { 0 };
      u4[40] = t == 0 ? 16 : 255;
      ck_assert_int_eq(mpe_mma(mpe_tc_model_get("t4", MPE_UINT4), 4, 4, 16, A, MPE_UINT4, 16, u4, MPE_UINT4, 4,
                               C, 4, D, MPE_INT32, 4), MPE_ERANGE);
    }
  }
  mpe_simd_level_set(-1);
  /* k = 0: D = C; alpha = 0: A and B are not read */
  for (int q = 0; q < 4; q++)
    C[q] = q - 2;
  ck_assert_int_eq(mpe_mma(i8, 2, 2, 0, NULL, MPE_INT8, 1, NULL, MPE_INT8, 2, C, 2, D, MPE_INT32, 2), MPE_OK);
  for (int q = 0; q < 4; q++)
    ck_assert_int_eq(D[q], q - 2);
  ck_assert_int_eq(mpe_gemm(i8, MPE_ROW_MAJOR, MPE_NO_TRANS, MPE_NO_TRANS, 2, 2, 2, 0, NULL, MPE_INT8, 2, NULL,
                            MPE_INT8, 2, 3, C, MPE_INT32, 2), MPE_OK);
  for (int q = 0; q < 4; q++)
    ck_assert_int_eq(C[q], 3 * (q - 2));
}
END_TEST

static Suite *tc_int_suite(void)
{
  Suite *s = suite_create("tc_int");
  TCase *tc = tcase_create("gemm");
  tcase_set_timeout(tc, 600);
  tcase_add_loop_test(tc, test_mma_exact, 0, NCONFIG);
  tcase_add_loop_test(tc, test_gemm_layouts, 0, NCONFIG);
  tcase_add_loop_test(tc, test_long_k_overflow, 0, NCONFIG);
  tcase_add_test(tc, test_saturation_point);
  tcase_add_test(tc, test_models_and_errors);
  suite_add_tcase(s, tc);
  return s;
}

int main(void)
{
  setvbuf(stdout, NULL, _IONBF, 0);
  return ts_run(tc_int_suite());
}
