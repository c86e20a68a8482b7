/* mpe_mma and mpe_gemm: argument checks, operand views, the epilogue, and the
   driver that runs either a fast kernel (tc_gemm.c) or the portable engine. */
#include "config.h"
#include <math.h>
#include <stdlib.h>
#include <string.h>
#ifdef _OPENMP
#include <omp.h>
#endif
#include "mpemu/convert.h"
#include "tc_impl.h"
#include "tc_amd.h"
#include "tc_epilogue.h"
#include "isa.h"
#include "mpei_threads.h"
#include "mpei_fenv.h"

int mpei_tc_out16_ok(const struct mpe_tc_model *m)
{
  /* no binary16 accumulator: the TF32 block models, AMD's matrix cores, the Arm
     and x86 CPU instructions (binary32 only) */
  return !(m->p.in == MPE_TF32 && m->p.kind == MPE_TC_BLOCK) && m->p.instr != MPE_TC_MFMA && !m->p.mfma &&
         m->p.kind != MPE_TC_ARM_BFDOT && m->p.kind != MPE_TC_CPU_CHAIN;
}

int mpei_tc_in_ok(const struct mpe_tc_model *m, mpe_type t)
{
  return t == MPE_FP32 || t == m->p.in;
}

static int in_type_ok(mpe_type in)
{
  return in == MPE_FP16 || in == MPE_BF16 || in == MPE_TF32 || mpei_type_fp8(in);
}

/* The argument rules of mpe_mma (tc_impl.h). */
int mpei_tc_mma_check(mpe_type in, int m, int n, int k, const void *A, mpe_type atype, int lda, const void *B,
                      mpe_type btype, int ldb, const void *C, int ldc, const void *D, mpe_type dtype, int ldd)
{
  if (m < 0 || n < 0 || k < 0 || k > MPEI_TC_K_MAX || !in_type_ok(in))
    return MPE_EINVAL;
  if ((atype != MPE_FP32 && atype != in) || (btype != MPE_FP32 && btype != in))
    return MPE_EINVAL;
  if (dtype != MPE_FP32 && dtype != MPE_FP16)
    return MPE_EINVAL;
  return mpei_tc_mma_shape_check(m, n, k, A, lda, B, ldb, C, ldc, D, ldd);
}

/* The sizes, leading dimensions and pointers of an mpe_mma call (tc_impl.h). */
int mpei_tc_mma_shape_check(int m, int n, int k, const void *A, int lda, const void *B, int ldb, const void *C,
                            int ldc, const void *D, int ldd)
{
  if (m < 0 || n < 0 || k < 0)
    return MPE_EINVAL;
  if (lda < (k > 1 ? k : 1) || ldb < (n > 1 ? n : 1) || ldd < (n > 1 ? n : 1) ||
      (C && ldc < (n > 1 ? n : 1)))
    return MPE_EINVAL;
  if ((m > 0 && k > 0 && !A) || (k > 0 && n > 0 && !B) || (m > 0 && n > 0 && !D))
    return MPE_EINVAL;
  return MPE_OK;
}

/* The accumulators of an mpe_mma call (mpei_tc_mma_acc), es bytes each: a
   malloc'ed m×n copy of C (leading dimension ldc; zeros when C is NULL), NULL
   without memory; and the copy of them into D (leading dimension ldd). */
static void *acc_in(const void *C, int ldc, int m, int n, size_t es)
{
  unsigned char *acc = malloc(es * (size_t)m * n);
  for (int i = 0; acc && i < m; i++) {
    if (C)
      memcpy(acc + es * (size_t)i * n, (const unsigned char *)C + es * (size_t)i * ldc, es * (size_t)n);
    else
      memset(acc + es * (size_t)i * n, 0, es * (size_t)n);
  }
  return acc;
}

static void acc_out(void *D, int ldd, const void *acc, int m, int n, size_t es)
{
  for (int i = 0; i < m; i++)
    memcpy((unsigned char *)D + es * (size_t)i * ldd, (const unsigned char *)acc + es * (size_t)i * n,
           es * (size_t)n);
}

/* An mpe_mma call on copied accumulators (tc_impl.h). */
int mpei_tc_mma_acc(const struct mpe_tc_model *model, mpei_tc_acc_run run, int m, int n, int k, const void *A,
                    mpe_type atype, int lda, const void *B, mpe_type btype, int ldb, const void *C, int ldc,
                    void *D, int ldd, size_t es)
{
  if (m == 0 || n == 0)
    return MPE_OK;
  void *acc = acc_in(C, ldc, m, n, es);
  if (!acc)
    return MPE_ENOMEM;
  mpei_tc_opnd a = { A, atype, lda, 1, NULL }, b = { B, btype, ldb, 1, NULL };
  int r = run(model, m, n, k, &a, &b, acc);
  if (r == MPE_OK)
    acc_out(D, ldd, acc, m, n, es);
  free(acc);
  return r;
}

/* The argument rules of mpe_gemm (tc_impl.h). */
int mpei_tc_gemm_check(mpe_type in, mpe_layout layout, mpe_trans ta, mpe_trans tb, int m, int n, int k,
                       float alpha, const void *A, mpe_type atype, int lda, const void *B, mpe_type btype,
                       int ldb, const void *C, mpe_type ctype, int ldc, mpei_tc_call *o)
{
  if (m < 0 || n < 0 || k < 0 || !in_type_ok(in))
    return MPE_EINVAL;
  if (layout != MPE_ROW_MAJOR && layout != MPE_COL_MAJOR)
    return MPE_EINVAL;
  if ((ta != MPE_NO_TRANS && ta != MPE_TRANS) || (tb != MPE_NO_TRANS && tb != MPE_TRANS))
    return MPE_EINVAL;
  if ((atype != MPE_FP32 && atype != in) || (btype != MPE_FP32 && btype != in))
    return MPE_EINVAL;
  if (ctype != MPE_FP32 && ctype != MPE_FP16)
    return MPE_EINVAL;
  const int use_ab = k > 0 && alpha != 0.0f;
  return mpei_tc_gemm_call(layout, ta, tb, m, n, k, A, atype, lda, B, btype, ldb, C, ldc, use_ab, o);
}

MPEI_HIDDEN int mpei_tc_run_fast(const struct mpe_tc_model *m, int M, int N, int K,
                                 const mpei_tc_opnd *a, const mpei_tc_opnd *b,
                                 const mpei_tc_opnd *c, int out16, float *acc);
MPEI_HIDDEN int mpei_tc_run_fast_epi(const struct mpe_tc_model *m, int M, int N, int K,
                                     const mpei_tc_opnd *a, const mpei_tc_opnd *b, float alpha,
                                     float beta, float *C, int ldc, int c_apart);

static double load_c(const mpei_tc_opnd *c, int i, int j)
{
  size_t idx = (size_t)((long)i * c->rs + (long)j * c->cs);
  if (c->t == MPE_FP16)
    return mpe_fp16_to_fp32(((const uint16_t *)c->p)[idx]);
  return ((const float *)c->p)[idx];
}

/* The portable path: decode every operand to binary64 once, then one call of
   the engine per output. */
static int run_portable(const struct mpe_tc_model *m, int M, int N, int K, const mpei_tc_opnd *a,
                        const mpei_tc_opnd *b, const mpei_tc_opnd *c, int out16, float *acc)
{
  double *ad = malloc(sizeof(double) * ((size_t)M * K + (size_t)N * K + 1));
  if (!ad)
    return MPE_ENOMEM;
  double *bt = ad + (size_t)M * K;
  for (int i = 0; i < M; i++)
    for (int l = 0; l < K; l++)
      ad[(size_t)i * K + l] = mpei_tc_load(m, a->p, a->t, (size_t)((long)i * a->rs + (long)l * a->cs));
  for (int j = 0; j < N; j++)
    for (int l = 0; l < K; l++)
      bt[(size_t)j * K + l] = mpei_tc_load(m, b->p, b->t, (size_t)((long)l * b->rs + (long)j * b->cs));
  long total = (long)M * N;
#pragma omp parallel for schedule(dynamic, 16) if (total * (long)(K + 1) > 20000) num_threads(mpei_threads_team())
  for (long t = 0; t < total; t++) {
    MPEI_FENV_GUARD();   /* a worker of the team: the library's environment (mpemu(3)) */
    int i = (int)(t / N), j = (int)(t % N);
    double cv = c && c->p ? load_c(c, i, j) : 0.0;
    double d = mpei_tc_dot(m, ad + (size_t)i * K, bt + (size_t)j * K, 1, K, cv, out16);
    acc[t] = isnan(d) ? mpei_u2f(0x7fffffffu) : (float)d;
  }
  free(ad);
  return MPE_OK;
}

int mpei_tc_run(const struct mpe_tc_model *m, int M, int N, int K, const mpei_tc_opnd *a,
                const mpei_tc_opnd *b, const mpei_tc_opnd *c, int out16, float *acc)
{
  int r = m->p.kind == MPE_TC_ARM_BFDOT ? mpei_tc_arm_run(m, M, N, K, a, b, c, acc)
          : (m->p.mfma || m->p.kind == MPE_TC_EXACT) && !out16 ? mpei_tc_amd_run(m, M, N, K, a, b, c, acc)
                                         : mpei_tc_run_fast(m, M, N, K, a, b, c, out16, acc);   /* MPE_EUNSUP: no fast kernel */
  if (r != MPE_EUNSUP)
    return r;
  return run_portable(m, M, N, K, a, b, c, out16, acc);
}

/* A mixed FP8 call: an FP8 model, one operand packed E4M3 and the other
   packed E5M2 (the e4m3.e5m2 / e5m2.e4m3 forms of the FP8 instructions), or
   for an FNUZ model one E4M3FNUZ and one E5M2FNUZ (AMD's fp8_bf8, bf8_fp8). */
static int mixed_fp8(const struct mpe_tc_model *m, mpe_type at, mpe_type bt)
{
  const int fam = m ? mpei_type_fp8(m->p.in) : 0;
  return fam && mpei_type_fp8(at) == fam && mpei_type_fp8(bt) == fam && at != bt;
}

/* A custom model whose B format (in_b) differs from A's describes a mixed
   FP8 instruction: only a mixed call (one packed E4M3, one packed E5M2
   operand) matches it; any other call would decode B against the wrong
   format. */
static int in_b_conflict(const struct mpe_tc_model *m, mpe_type at, mpe_type bt)
{
  return m && m->p.in_b && m->p.in_b != (int)m->p.in && !mixed_fp8(m, at, bt);
}

/* The model that runs views a and b: m itself, or for a mixed call a copy
   in *tmp whose in and in_b are the formats of a and b (so that the engine
   and the packers decode each operand in its own format). */
static const struct mpe_tc_model *run_model(const struct mpe_tc_model *m, mpe_type at, mpe_type bt,
                                            struct mpe_tc_model *tmp)
{
  if (!mixed_fp8(m, at, bt))
    return m;
  *tmp = *m;
  tmp->p.in = at;
  tmp->p.in_b = bt;
  return tmp;
}

int mpe_mma(const mpe_tc_model *model, int m, int n, int k,
            const void *A, mpe_type atype, int lda,
            const void *B, mpe_type btype, int ldb,
            const void *C, int ldc, void *D, mpe_type dtype, int ldd)
{
  MPEI_FENV_GUARD();
  if (model && (mpei_type_is_int(model->p.in) || mpei_type_is_int(atype) || mpei_type_is_int(btype) ||
                dtype == MPE_INT32))
    return mpei_tc_int_mma(model, m, n, k, A, atype, lda, B, btype, ldb, C, ldc, D, dtype, ldd);
  if (model && (model->p.in == MPE_FP64 || atype == MPE_FP64 || btype == MPE_FP64 || dtype == MPE_FP64))
    return mpei_tc_f64_mma(model, m, n, k, A, atype, lda, B, btype, ldb, C, ldc, D, dtype, ldd);
  /* a mixed FP8 call is checked as one in the model's format */
  const int mixed = mixed_fp8(model, atype, btype);
  if (!model || model->p.scale_group ||   /* block-scaled models: mpe_mma_scaled */
      in_b_conflict(model, atype, btype) ||
      mpei_tc_mma_check(model->p.in, m, n, k, A, mixed ? model->p.in : atype, lda, B,
                        mixed ? model->p.in : btype, ldb, C, ldc, D, dtype, ldd))
    return MPE_EINVAL;
  if (dtype == MPE_FP16 && !mpei_tc_out16_ok(model))
    return MPE_EUNSUP;
  if (m == 0 || n == 0)
    return MPE_OK;
  float *acc = malloc(sizeof(float) * (size_t)m * n);
  if (!acc)
    return MPE_ENOMEM;
  mpei_tc_opnd a = { A, atype, lda, 1, NULL }, b = { B, btype, ldb, 1, NULL };
  mpei_tc_opnd c = { C, dtype, ldc, 1, NULL };
  struct mpe_tc_model tmp;
  int r = mpei_tc_run(run_model(model, atype, btype, &tmp), m, n, k, &a, &b, &c, dtype == MPE_FP16, acc);
  if (r == MPE_OK) {
    for (int i = 0; i < m; i++)
      for (int j = 0; j < n; j++) {
        float v = acc[(size_t)i * n + j];
        if (dtype == MPE_FP16)
          ((uint16_t *)D)[(size_t)i * ldd + j] = mpei_tc_h_bits(v);
        else
          ((float *)D)[(size_t)i * ldd + j] = v;
      }
  }
  free(acc);
  return r;
}

static size_t elem_size(mpe_type t);

int mpe_mma_cd(const mpe_tc_model *model, int m, int n, int k, const void *A, mpe_type atype, int lda,
               const void *B, mpe_type btype, int ldb, const void *C, mpe_type ctype, int ldc, void *D,
               mpe_type dtype, int ldd)
{
  MPEI_FENV_GUARD();
  if (ctype == dtype)
    return mpe_mma(model, m, n, k, A, atype, lda, B, btype, ldb, C, ldc, D, dtype, ldd);
  /* C's type is checked as D's would be, then for the one mixed form */
  const int mixed = mixed_fp8(model, atype, btype);
  if (!model || model->p.scale_group || mpei_type_is_int(model->p.in) || (ctype != MPE_FP16 && ctype != MPE_FP32) ||
      in_b_conflict(model, atype, btype) ||
      mpei_tc_mma_check(model->p.in, m, n, k, A, mixed ? model->p.in : atype, lda, B, mixed ? model->p.in : btype,
                        ldb, C, ldc, D, dtype, ldd))
    return MPE_EINVAL;
  /* binary16 C, binary32 D: Volta's m8n8k4 (and the references, and custom models) */
  const char *nm = model->name;
  if (ctype != MPE_FP16 || model->p.in != MPE_FP16 || model->p.mfma ||
      (strcmp(nm, "v100") && strcmp(nm, "exact") && strcmp(nm, "fma-chain") && strcmp(nm, "custom")))
    return MPE_EUNSUP;
  if (m == 0 || n == 0)
    return MPE_OK;
  /* binary16 subnormal C values: in the first block their exponent's floor is
     -14, not binary32's -126 (for every other C the floors give the same E_max) */
  float *c32 = C ? malloc(sizeof(float) * (size_t)m * n) : NULL;   /* C's values, exact */
  if (C && !c32)
    return MPE_ENOMEM;
  long nsub = 0;
#pragma omp parallel if ((long)m * n > 65536) num_threads(mpei_threads_team())
  {
    MPEI_FENV_GUARD();   /* a worker of the team: the library's environment (mpemu(3)) */
#pragma omp for schedule(static) reduction(+: nsub)
  for (int i = 0; i < m; i++)
    for (int j = 0; j < n && C; j++) {
      const uint16_t h = ((const uint16_t *)C)[(size_t)i * ldc + j];
      c32[(size_t)i * n + j] = mpe_fp16_to_fp32(h);
      nsub += (h & 0x7fffu) && !(h & 0x7c00u) && model->p.kind == MPE_TC_BLOCK;
    }
  }
  /* one call, then those outputs again through the engine (all of K); or,
     when they are many (the engine's work, about nsub * k, above ten times
     the outputs), the first block alone with C's binary16 values, those
     outputs' first block again through the engine, then the rest of K from
     its binary32 results */
  const int k1 = k > model->p.block && (double)nsub * k > 10.0 * m * n ? model->p.block : k;
  float *acc = malloc(sizeof(float) * (size_t)m * n * (k1 < k ? 2 : 1));
  if (!acc) {
    free(c32);
    return MPE_ENOMEM;
  }
  mpei_tc_opnd a = { A, atype, lda, 1, NULL }, b = { B, btype, ldb, 1, NULL };
  mpei_tc_opnd c = { c32, MPE_FP32, n, 1, NULL };
  int r = mpei_tc_run(model, m, n, k1, &a, &b, &c, 0, acc);
  double *ad = NULL;
  if (r == MPE_OK && nsub) {
    /* the operands of the first k1 products decoded once: A's columns, B's rows (as columns) */
    ad = malloc(sizeof(double) * (size_t)k1 * ((size_t)m + n));
    if (!ad)
      r = MPE_ENOMEM;
  }
  if (r == MPE_OK && nsub) {
    double *bd = ad + (size_t)k1 * m;
    /* only the rows and columns those outputs use */
    unsigned char *need = calloc((size_t)m + n, 1);
    if (!need) {
      free(ad);
      free(acc);
      free(c32);
      return MPE_ENOMEM;
    }
    for (int i = 0; i < m; i++)
      for (int j = 0; j < n; j++) {
        const uint16_t h = ((const uint16_t *)C)[(size_t)i * ldc + j];
        if ((h & 0x7fffu) && !(h & 0x7c00u))
          need[i] = need[m + j] = 1;
      }
#pragma omp parallel if ((long)m * k1 > 65536) num_threads(mpei_threads_team())
  {
    MPEI_FENV_GUARD();   /* a worker of the team: the library's environment (mpemu(3)) */
#pragma omp for schedule(static)
    for (int i = 0; i < m; i++)
      for (int l = 0; l < k1 && need[i]; l++)
        ad[(size_t)i * k1 + l] = mpei_tc_load(model, A, atype, (size_t)i * lda + l);
  }
#pragma omp parallel if ((long)n * k1 > 65536) num_threads(mpei_threads_team())
  {
    MPEI_FENV_GUARD();   /* a worker of the team: the library's environment (mpemu(3)) */
#pragma omp for schedule(static)
    for (int j = 0; j < n; j++)
      for (int l = 0; l < k1 && need[m + j]; l++)
        bd[(size_t)j * k1 + l] = mpei_tc_load(model, B, btype, (size_t)l * ldb + j);
  }
    free(need);
#pragma omp parallel if ((long)nsub * k1 > 20000) num_threads(mpei_threads_team())
  {
    MPEI_FENV_GUARD();   /* a worker of the team: the library's environment (mpemu(3)) */
#pragma omp for schedule(static)
    for (int i = 0; i < m; i++)
      for (int j = 0; j < n; j++) {
        const uint16_t h = ((const uint16_t *)C)[(size_t)i * ldc + j];
        if ((h & 0x7fffu) && !(h & 0x7c00u))
          acc[(size_t)i * n + j] = mpei_tc_f_canon(
              mpei_tc_dot_c16(model, ad + (size_t)i * k1, bd + (size_t)j * k1, 1, k1, mpe_fp16_to_fp32(h)));
      }
  }
  }
  free(ad);
  float *out = acc;
  if (r == MPE_OK && k1 < k) {
    /* the later blocks: A and B from column / row k1 on, C the first block's results */
    mpei_tc_opnd a2 = { (const char *)A + (size_t)k1 * elem_size(atype), atype, lda, 1, NULL };
    mpei_tc_opnd b2 = { (const char *)B + (size_t)k1 * ldb * elem_size(btype), btype, ldb, 1, NULL };
    mpei_tc_opnd c2 = { acc, MPE_FP32, n, 1, NULL };
    out = acc + (size_t)m * n;
    r = mpei_tc_run(model, m, n, k - k1, &a2, &b2, &c2, 0, out);
  }
  if (r == MPE_OK)
    for (int i = 0; i < m; i++)
      memcpy((float *)D + (size_t)i * ldd, out + (size_t)i * n, sizeof(float) * (size_t)n);
  free(acc);
  free(c32);
  return r;
}

static size_t elem_size(mpe_type t)
{
  return t == MPE_FP32 || t == MPE_TF32 ? 4 : mpei_type_fp8(t) ? 1 : 2;
}

/* bytes spanned by a row-major operand of `rows` rows with leading dimension ld */
static size_t extent(mpe_type t, int rows, int ld)
{
  return (size_t)(rows > 0 ? rows : 1) * (size_t)ld * elem_size(t);
}

static int overlaps(const void *p, size_t np, const void *q, size_t nq)
{
  uintptr_t a = (uintptr_t)p, b = (uintptr_t)q;
  return a < b + nq && b < a + np;
}

static void epilogue_row(float *c, const float *v, int n, float alpha, float beta, int use_ab)
{
  epilogue_row_body(c, v, n, alpha, beta, use_ab);
}

/* A BLAS-style GEMM call made row-major (tc_impl.h). */
int mpei_tc_gemm_call(mpe_layout layout, mpe_trans ta, mpe_trans tb, int m, int n, int k, const void *A,
                      mpe_type atype, int lda, const void *B, mpe_type btype, int ldb, const void *C, int ldc,
                      int use_ab, mpei_tc_call *o)
{
  const int row = layout == MPE_ROW_MAJOR;
  /* stored shapes: A is m×k (or k×m transposed), B k×n (or n×k) */
  const int a_cols = (ta == MPE_NO_TRANS) == row ? k : m;
  const int b_cols = (tb == MPE_NO_TRANS) == row ? n : k;
  const int c_cols = row ? n : m;
  if (k > MPEI_TC_K_MAX)
    return MPE_EINVAL;
  if (lda < (a_cols > 1 ? a_cols : 1) || ldb < (b_cols > 1 ? b_cols : 1) ||
      ldc < (c_cols > 1 ? c_cols : 1))
    return MPE_EINVAL;
  if ((m > 0 && n > 0 && !C) || (use_ab && m > 0 && !A) || (use_ab && n > 0 && !B))
    return MPE_EINVAL;
  o->use_ab = use_ab;
  o->a_rows = (ta == MPE_NO_TRANS) == row ? m : k;
  o->b_rows = (tb == MPE_NO_TRANS) == row ? k : n;
  /* element (i, l) of op(A) is at A[i*ars + l*acs], (l, j) of op(B) at B[l*brs + j*bcs] */
  long ars, acs, brs, bcs;
  if (row) {
    ars = ta == MPE_NO_TRANS ? lda : 1; acs = ta == MPE_NO_TRANS ? 1 : lda;
    brs = tb == MPE_NO_TRANS ? ldb : 1; bcs = tb == MPE_NO_TRANS ? 1 : ldb;
  } else {
    ars = ta == MPE_NO_TRANS ? 1 : lda; acs = ta == MPE_NO_TRANS ? lda : 1;
    brs = tb == MPE_NO_TRANS ? 1 : ldb; bcs = tb == MPE_NO_TRANS ? ldb : 1;
  }
  /* Every call becomes a row-major one: a column-major C (m×n) is the row-major
     C^T = op(B)^T op(A)^T (n×m), and since each product is exact and the block
     model only sums them, swapping the operands' roles gives the same bits. So
     the epilogue always walks C along its rows, whatever the layout. */
  if (row) {
    o->a = (mpei_tc_opnd){ A, atype, ars, acs, NULL };
    o->b = (mpei_tc_opnd){ B, btype, brs, bcs, NULL };
    o->M = m;
    o->N = n;
  } else {
    o->a = (mpei_tc_opnd){ B, btype, bcs, brs, NULL };
    o->b = (mpei_tc_opnd){ A, atype, acs, ars, NULL };
    o->M = n;
    o->N = m;
  }
  return MPE_OK;
}

/* The epilogue (tc_impl.h). Rows of C that lie along memory run through the
   instruction set's row kernels (the same epilogue_one, vectorised; binary16
   rounded by F16C, nearest-even like mpei_round_ref); every other element
   through epilogue_one here. */
void mpei_tc_epilogue_strided(const float *acc, int M, int N, float alpha, float beta, int use_ab, void *C,
                              mpe_type ctype, long crs, long ccs)
{
  const struct mpe_format *f16 = (const struct mpe_format *)mpe_format_of(MPE_FP16);
  mpei_tc_epi_fn row_fn = mpei_isa()->tc_epilogue ? mpei_isa()->tc_epilogue : epilogue_row;
  mpei_tc_epi16_fn row16_fn = mpei_isa()->tc_epilogue16;
#pragma omp parallel for schedule(static) if ((long)M * N > 65536) num_threads(mpei_threads_team())
  for (int i = 0; i < M; i++) {
    MPEI_FENV_GUARD();
    const float *v = acc + (size_t)i * N;
    if (ctype == MPE_FP32 && ccs == 1) {
      row_fn((float *)C + (size_t)i * crs, v, N, alpha, beta, use_ab);
      continue;
    }
    if (ctype == MPE_FP16 && ccs == 1 && row16_fn) {
      row16_fn((uint16_t *)C + (size_t)i * crs, v, N, alpha, beta, use_ab);
      continue;
    }
    for (int j = 0; j < N; j++) {
      size_t ci = (size_t)((long)i * crs + (long)j * ccs);
      if (ctype == MPE_FP32) {
        float *c = (float *)C + ci;
        *c = epilogue_one(v[j], beta != 0.0f ? *c : 0.0f, alpha, beta, use_ab);
        continue;
      }
      uint16_t *c16 = (uint16_t *)C + ci;
      float out = epilogue_one(v[j], beta != 0.0f ? mpe_fp16_to_fp32(*c16) : 0.0f, alpha, beta, use_ab);
      unsigned fl = 0;
      double h = mpei_round_ref(out, 0, f16, MPE_RNE, 0, 0, 0, &fl);
      *c16 = mpei_tc_h_bits(h);
    }
  }
}

void mpei_tc_epilogue_run(const float *acc, int M, int N, float alpha, float beta, int use_ab, void *C,
                          mpe_type ctype, int ldc)
{
  mpei_tc_epilogue_strided(acc, M, N, alpha, beta, use_ab, C, ctype, ldc, 1);
}

int mpe_gemm(const mpe_tc_model *model, mpe_layout layout, mpe_trans ta, mpe_trans tb,
             int m, int n, int k, float alpha,
             const void *A, mpe_type atype, int lda,
             const void *B, mpe_type btype, int ldb,
             float beta, void *C, mpe_type ctype, int ldc)
{
  MPEI_FENV_GUARD();
  if (model && (mpei_type_is_int(model->p.in) || mpei_type_is_int(atype) || mpei_type_is_int(btype) ||
                ctype == MPE_INT32))
    return mpei_tc_int_gemm(model, layout, ta, tb, m, n, k, alpha, A, atype, lda, B, btype, ldb, beta, C,
                            ctype, ldc);
  if (model && (model->p.in == MPE_FP64 || atype == MPE_FP64 || btype == MPE_FP64 || ctype == MPE_FP64))
    return mpei_tc_f64_gemm(model, layout, ta, tb, m, n, k, alpha, A, atype, lda, B, btype, ldb, beta, C,
                            ctype, ldc);
  mpei_tc_call cl;
  const int mixed = mixed_fp8(model, atype, btype);
  if (!model || model->p.scale_group ||   /* block-scaled models: mpe_gemm_scaled */
      in_b_conflict(model, atype, btype) ||
      mpei_tc_gemm_check(model->p.in, layout, ta, tb, m, n, k, alpha, A, mixed ? model->p.in : atype, lda, B,
                         mixed ? model->p.in : btype, ldb, C, ctype, ldc, &cl))
    return MPE_EINVAL;
  if (mixed) {   /* the views keep the operands' own types */
    cl.a.t = layout == MPE_ROW_MAJOR ? atype : btype;
    cl.b.t = layout == MPE_ROW_MAJOR ? btype : atype;
  }
  struct mpe_tc_model tmp;
  model = run_model(model, cl.a.t, cl.b.t, &tmp);
  const int use_ab = cl.use_ab;
  if (ctype == MPE_FP16 && !mpei_tc_out16_ok(model))
    return MPE_EUNSUP;
  if (m == 0 || n == 0)
    return MPE_OK;
  size_t a_span = extent(atype, cl.a_rows, lda), b_span = extent(btype, cl.b_rows, ldb);
  mpei_tc_opnd a = cl.a, b = cl.b;
  const int M = cl.M, N = cl.N;
  /* a binary32 C: the fast driver applies the epilogue to each tile of
     accumulators as it finishes (no M × N buffer); A and B are packed before
     C is written (LU's update, A22 -= L21 U12, shares its array with U12) */
  size_t c_bytes = extent(MPE_FP32, M, ldc);
  const int c_apart = !overlaps(C, c_bytes, A, a_span) && !overlaps(C, c_bytes, B, b_span);
  if (use_ab && ctype == MPE_FP32) {
    int r = mpei_tc_run_fast_epi(model, M, N, k, &a, &b, alpha, beta, (float *)C, ldc, c_apart);
    if (r != MPE_EUNSUP)
      return r;
  }
  /* the plain case (binary32 C without padding, alpha = 1, beta = 0): the accumulators are C itself */
  if (use_ab && ctype == MPE_FP32 && alpha == 1.0f && beta == 0.0f && ldc == N && c_apart)
    return mpei_tc_run(model, M, N, k, &a, &b, NULL, 0, (float *)C);
  float *acc = malloc(sizeof(float) * (size_t)M * N);
  if (!acc)
    return MPE_ENOMEM;
  int r = MPE_OK;
  if (use_ab)
    r = mpei_tc_run(model, M, N, k, &a, &b, NULL, ctype == MPE_FP16, acc);
  else
    for (size_t t = 0; t < (size_t)M * N; t++)
      acc[t] = 0.0f;
  if (r == MPE_OK)
    mpei_tc_epilogue_run(acc, M, N, alpha, beta, use_ab, C, ctype, ldc);
  free(acc);
  return r;
}
