/* Mixed-precision blocked LU (Haidar et al., SC18): binary32 storage, binary32
   panels and triangular solves, trailing updates through GEMMs whose inputs
   are rounded to the factor format. */
#include <float.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cblas.h>
#ifdef _OPENMP
#include <omp.h>
#endif
#include "mpei.h"
#include "mpemu/format.h"
#include "mpemu/ir.h"
#include "mpemu/tc.h"

int mpe_ir_default_block(int n)
{
  int nb = n / 16;
  return nb < 1 ? 1 : nb > 64 ? 64 : nb;
}

/* The factorization is recursive (Toledo 1997; Gustavson): the columns split
   in two at a multiple of nb, the left half is factored, U12 = L11^-1 A12 is
   solved, A22 -= L21 U12, and the right half is factored; the triangular
   solves split the same way. The leaves are the nb x nb diagonal blocks, so
   the arithmetic is that of the right-looking blocked LU: panels of nb
   columns (binary32, unblocked) and triangular solves with nb x nb unit lower
   blocks in binary32, and every product of an L entry outside the diagonal
   blocks with a U entry outside them made by a GEMM whose inputs are in the
   factor format, accumulated in binary32. Only the grouping of the binary32
   sums differs: the GEMMs are few and large (k up to n/2), so A22 is read
   and written O(log(n/nb)) times instead of n/nb times.

   Without a model, each entry of L (below the diagonal blocks) and of U
   (right of them) is rounded once, when final, into the shadow matrix S
   (same layout, leading dimension lds); the GEMMs read L21 and U12 from S.
   With `in` = binary32, S is A itself. */
enum { LU_TMP = 8192 };   /* 32 KiB: rows of U gathered for one rounding call */

typedef struct {
  float *A;
  int n, lda;
  int *ipiv;
  int nb;
  const mpe_format *f;   /* NULL: binary32 factors (S = A) or a model */
  const mpe_tc_model *model;
  float *S;
  int lds;
  int nonfinite;         /* a NaN/inf among the final factors */
  float *tmp;            /* LU_TMP floats of scratch for lu_final */
} lu_ctx;

static float *at(const lu_ctx *c, int i, int j) { return c->A + (size_t)j * c->lda + i; }

/* 0 if a NaN or inf is among x[0..m-1] (integer test: it vectorizes) */
static int all_finite_f32(const float *x, int m)
{
  uint32_t e = 0;
#ifdef _OPENMP
#pragma omp simd reduction(|: e)
#endif
  for (int r = 0; r < m; r++) {
    uint32_t u;
    memcpy(&u, x + r, sizeof u);
    e |= (u & 0x7f800000u) == 0x7f800000u;
  }
  return !e;
}

/* Copies rows i..i+m-1 of columns j..j+w-1 of A, all final factor entries,
   rounded into S (RNE), and notes a NaN/inf among them. Short columns (the
   rows of U right of a diagonal block) are gathered into c->tmp so that one
   call rounds many of them. */
static int lu_final(lu_ctx *c, int i, int j, int m, int w)
{
  if (m < 1 || w < 1)
    return MPE_OK;
  for (int q = j; q < j + w; q++)
    if (!all_finite_f32(at(c, i, q), m))
      c->nonfinite = 1;
  if (!c->f)
    return MPE_OK;
  if (m > LU_TMP / 16) {
    for (int q = j; q < j + w; q++) {
      int rc = mpe_round_f32(c->S + (size_t)q * c->lds + i, at(c, i, q), (size_t)m, c->f, NULL);
      if (rc)
        return rc;
    }
    return MPE_OK;
  }
  const int cols = LU_TMP / m;   /* >= 16 */
  for (int q0 = j; q0 < j + w; q0 += cols) {
    int wq = j + w - q0 < cols ? j + w - q0 : cols;
    for (int q = 0; q < wq; q++)
      memcpy(c->tmp + (size_t)q * m, at(c, i, q0 + q), (size_t)m * sizeof(float));
    int rc = mpe_round_f32(c->tmp, c->tmp, (size_t)m * wq, c->f, NULL);
    if (rc)
      return rc;
    for (int q = 0; q < wq; q++)
      memcpy(c->S + (size_t)(q0 + q) * c->lds + i, c->tmp + (size_t)q * m, (size_t)m * sizeof(float));
  }
  return MPE_OK;
}

/* A[i.., j..] (m x w) -= L[i.., p..] (m x k) * U[p.., j..] (k x w): the single
   place where the low-precision GEMM happens. */
static int lu_update(lu_ctx *c, int m, int w, int k, int i, int p, int j)
{
  if (m < 1 || w < 1 || k < 1)
    return MPE_OK;
  float *C = at(c, i, j);
  if (c->model)
    return mpe_gemm(c->model, MPE_COL_MAJOR, MPE_NO_TRANS, MPE_NO_TRANS, m, w, k, -1.0f,
                    at(c, i, p), MPE_FP32, c->lda, at(c, p, j), MPE_FP32, c->lda, 1.0f, C,
                    MPE_FP32, c->lda);
  const float *L = c->S + (size_t)p * c->lds + i, *U = c->S + (size_t)j * c->lds + p;
  cblas_sgemm(CblasColMajor, CblasNoTrans, CblasNoTrans, m, w, k, -1.0f, L, c->lds, U, c->lds,
              1.0f, C, c->lda);
  return MPE_OK;
}

/* Unblocked LU of the panel A[k.., k..k+kb-1]; row swaps are applied to whole rows. */
static int lu_panel(lu_ctx *c, int k, int kb)
{
  float *A = c->A;
  int n = c->n, lda = c->lda;
  for (int j = k; j < k + kb; j++) {
    float *colj = A + (size_t)j * lda;
    int p = j + (int)cblas_isamax(n - j, colj + j, 1);
    c->ipiv[j] = p;
    float piv = colj[p];
    if (piv == 0.0f || !isfinite(piv))
      return MPE_ERANGE;
    if (p != j) {
      cblas_sswap(n, A + j, lda, A + p, lda);
      if (c->f)   /* the rounded L entries left of the diagonal block move with their rows */
        cblas_sswap(k, c->S + j, c->lds, c->S + p, c->lds);
    }
    for (int i = j + 1; i < n; i++)
      colj[i] /= piv;
    /* the rank-1 update in a fixed order (not a BLAS sger, whose kernel fuses
       or not by CPU): the factors are the same bits on every machine */
    for (int q = j + 1; q < k + kb && q < n; q++) {
      float *colq = A + (size_t)q * lda, u = colq[j];
      for (int i = j + 1; i < n; i++)
        colq[i] -= colj[i] * u;
    }
  }
  return MPE_OK;
}

/* Inside a diagonal block (binary32 throughout) and without a model, panels
   wider than LU_INNER split in two with a binary32 sgemm between the halves
   (as LAPACK's sgetrf2): the unblocked panel's rank-1 updates run at a small
   fraction of sgemm's speed (n = 4096: 0.033 -> 0.025 s; the same split of
   the nb-row triangular solves was slower than one strsm, 0.044 -> 0.055 s).
   With a model the panels stay unblocked, so its factors do not change. */
enum { LU_INNER = 32 };

/* A[i.., j..] (m x w) -= A[i.., p..] (m x k) * A[p.., j..] (k x w), binary32 */
static void lu_gemm32(lu_ctx *c, int m, int w, int k, int i, int p, int j)
{
  if (m > 0 && w > 0 && k > 0)
    cblas_sgemm(CblasColMajor, CblasNoTrans, CblasNoTrans, m, w, k, -1.0f, at(c, i, p), c->lda,
                at(c, p, j), c->lda, 1.0f, at(c, i, j), c->lda);
}

static int lu_panel_split(lu_ctx *c, int k, int w)
{
  if (c->model || w <= LU_INNER)
    return lu_panel(c, k, w);
  int w1 = w / 2, rc;
  if ((rc = lu_panel_split(c, k, w1)) != MPE_OK)
    return rc;
  cblas_strsm(CblasColMajor, CblasLeft, CblasLower, CblasNoTrans, CblasUnit, w1, w - w1, 1.0f,
              at(c, k, k), c->lda, at(c, k, k + w1), c->lda);
  lu_gemm32(c, c->n - k - w1, w - w1, w1, k + w1, k, k + w1);
  return lu_panel_split(c, k + w1, w - w1);
}

/* where a block of w > nb columns (or rows) splits: half its nb-blocks, rounded down */
static int lu_split(int w, int nb) { return (w + nb - 1) / nb / 2 * nb; }

/* A[r..r+s-1, j..j+w-1] = L[r.., r..]^-1 A[r.., j..] (L unit lower, s x s), then
   the result rounded into S. */
static int lu_trsm(lu_ctx *c, int r, int s, int j, int w)
{
  if (s <= c->nb) {
    cblas_strsm(CblasColMajor, CblasLeft, CblasLower, CblasNoTrans, CblasUnit, s, w, 1.0f,
                at(c, r, r), c->lda, at(c, r, j), c->lda);
    return lu_final(c, r, j, s, w);
  }
  int s1 = lu_split(s, c->nb), rc;
  if ((rc = lu_trsm(c, r, s1, j, w)) != MPE_OK)
    return rc;
  if ((rc = lu_update(c, s - s1, w, s1, r + s1, r, j)) != MPE_OK)
    return rc;
  return lu_trsm(c, r + s1, s - s1, j, w);
}

/* LU of the columns k..k+w-1, rows k..n-1 (all earlier columns' updates applied). */
static int lu_rec(lu_ctx *c, int k, int w)
{
  int rc;
  if (w <= c->nb) {
    if ((rc = lu_panel_split(c, k, w)) != MPE_OK)
      return rc;
    /* the panel's U11 and L11 are final too (the NaN/inf check) but stay unrounded:
       no GEMM takes them */
    for (int q = k; q < k + w; q++)
      if (!all_finite_f32(at(c, k, q), w))
        c->nonfinite = 1;
    return lu_final(c, k + w, k, c->n - k - w, w);
  }
  int w1 = lu_split(w, c->nb), w2 = w - w1;
  if ((rc = lu_rec(c, k, w1)) != MPE_OK)
    return rc;
  if ((rc = lu_trsm(c, k, w1, k + w1, w2)) != MPE_OK)
    return rc;
  if ((rc = lu_update(c, c->n - k - w1, w2, w1, k + w1, k, k + w1)) != MPE_OK)
    return rc;
  return lu_rec(c, k + w1, w2);
}

int mpe_ir_lu(float *A, int n, int lda, int *ipiv, mpe_type in, const mpe_tc_model *model, int nb)
{
  MPEI_FENV_GUARD();
  if (!A || !ipiv || n < 1 || lda < n)
    return MPE_EINVAL;
  if (in != MPE_FP16 && in != MPE_BF16 && in != MPE_TF32 && in != MPE_FP32)
    return MPE_EINVAL;
  if (model) {
    mpe_tc_params p;
    if (mpe_tc_model_params(model, &p) != MPE_OK || p.in != in)
      return MPE_EINVAL;   /* the model must take `in` (no tensor core takes binary32) */
  }
  if (nb <= 0)
    nb = mpe_ir_default_block(n);
  if (nb > n)
    nb = n;
  float tmp[LU_TMP];
  lu_ctx c = { A, n, lda, ipiv, nb, NULL, model, A, lda, 0, tmp };
  if (!model && in != MPE_FP32) {
    c.f = mpe_format_of(in);
    c.lds = n;
    c.S = malloc((size_t)n * n * sizeof(float));
    if (!c.S)
      return MPE_ENOMEM;
  }
  /* With a model, the GEMMs run on the library's OpenMP threads, which spin for
     a while after each one: OpenBLAS's threads would fight them for the cores
     during the panels and triangular solves. So OpenBLAS runs on this thread
     alone until the factorisation ends (openblas_set_num_threads is
     process-wide; the count is restored on return). Without a model, the
     rounding into S stays on this thread: an OpenMP team started there would
     spin on the cores right when OpenBLAS's threads take them for a GEMM. */
  const int blas_threads = openblas_get_num_threads();
  if (model && blas_threads > 1)
    openblas_set_num_threads(1);
#ifdef _OPENMP
  const int omp_threads = omp_get_max_threads();
  if (c.f)
    omp_set_num_threads(1);
#endif
  int rc = MPE_OK;
  if (!model) {
    rc = lu_rec(&c, 0, n);
  } else {
    /* right-looking: the model's GEMM is compute-bound, so the k = nb updates
       cost no more than fewer larger ones, and a call per step (not the
       recursion's many smaller ones) keeps its OpenMP team and packing
       overhead low */
    for (int k = 0; k < n && !rc; k += nb) {
      int kb = n - k < nb ? n - k : nb, rest = n - k - kb;
      if ((rc = lu_rec(&c, k, kb)) != MPE_OK || rest < 1)
        break;
      if ((rc = lu_trsm(&c, k, kb, k + kb, rest)) == MPE_OK)
        rc = lu_update(&c, rest, rest, kb, k + kb, k, k + kb);
    }
  }
#ifdef _OPENMP
  if (c.f)
    omp_set_num_threads(omp_threads);
#endif
  if (model && blas_threads > 1)
    openblas_set_num_threads(blas_threads);
  if (c.S != A)
    free(c.S);
  if (rc)
    return rc;
  return c.nonfinite ? MPE_ERANGE : MPE_OK;
}

int mpe_ir_lu_solve(const float *LU, int n, int lda, const int *ipiv, float *x)
{
  MPEI_FENV_GUARD();
  if (!LU || !ipiv || !x || n < 1 || lda < n)
    return MPE_EINVAL;
  for (int k = 0; k < n; k++)
    if (ipiv[k] < k || ipiv[k] >= n)
      return MPE_EINVAL;
  for (int k = 0; k < n; k++)
    if (ipiv[k] != k) {
      float t = x[k];
      x[k] = x[ipiv[k]];
      x[ipiv[k]] = t;
    }
  /* L y = x, then U x = y, column by column in a fixed order (a BLAS strsv's
     blocking depends on the CPU) */
  for (int k = 0; k < n; k++) {
    const float *l = LU + (size_t)k * lda, xk = x[k];
    for (int i = k + 1; i < n; i++)
      x[i] -= l[i] * xk;
  }
  for (int k = n - 1; k >= 0; k--) {
    const float *u = LU + (size_t)k * lda;
    x[k] /= u[k];
    for (int i = 0; i < k; i++)
      x[i] -= u[i] * x[k];
  }
  return MPE_OK;
}
