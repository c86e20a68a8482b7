/* Mixed-precision blocked LU (Haidar et al., SC18): binary32 storage, binary32
   panels and triangular solves, trailing updates through one GEMM whose
   inputs are rounded to the factor format. */
#include <float.h>
#include <math.h>
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

typedef struct {
  mpe_type in;
  const mpe_tc_model *model;
  float *wl, *wu;   /* baseline scratch: rounded copies of L21 and U12 */
} lu_update_ctx;

/* A22 -= L21 * U12 (column-major, all with leading dimension lda). The single
   place where the low-precision GEMM happens. */
static int lu_update(lu_update_ctx *c, int m, int n, int k, const float *L21, const float *U12,
                     float *A22, int lda)
{
  if (c->model)
    return mpe_gemm(c->model, MPE_COL_MAJOR, MPE_NO_TRANS, MPE_NO_TRANS, m, n, k, -1.0f,
                    L21, MPE_FP32, lda, U12, MPE_FP32, lda, 1.0f, A22, MPE_FP32, lda);
  if (c->in == MPE_FP32) {
    cblas_sgemm(CblasColMajor, CblasNoTrans, CblasNoTrans, m, n, k, -1.0f, L21, lda, U12, lda,
                1.0f, A22, lda);
    return MPE_OK;
  }
  const mpe_format *f = mpe_format_of(c->in);
  for (int j = 0; j < k; j++)
    memcpy(c->wl + (size_t)j * m, L21 + (size_t)j * lda, (size_t)m * sizeof(float));
  for (int j = 0; j < n; j++)
    memcpy(c->wu + (size_t)j * k, U12 + (size_t)j * lda, (size_t)k * sizeof(float));
  /* on this thread alone: an OpenMP team started here would spin on the cores
     right when OpenBLAS's threads take them for the GEMM below */
#ifdef _OPENMP
  const int nt = omp_get_max_threads();
  omp_set_num_threads(1);
#endif
  int rc = mpe_round_f32(c->wl, c->wl, (size_t)m * k, f, NULL);
  if (!rc)
    rc = mpe_round_f32(c->wu, c->wu, (size_t)k * n, f, NULL);
#ifdef _OPENMP
  omp_set_num_threads(nt);
#endif
  if (rc)
    return rc;
  cblas_sgemm(CblasColMajor, CblasNoTrans, CblasNoTrans, m, n, k, -1.0f, c->wl, m, c->wu, k,
              1.0f, A22, lda);
  return MPE_OK;
}

/* Unblocked LU of the panel A[k.., k..k+kb-1]; row swaps are applied to whole rows. */
static int lu_panel(float *A, int n, int lda, int *ipiv, int k, int kb)
{
  for (int j = k; j < k + kb; j++) {
    float *colj = A + (size_t)j * lda;
    int p = j + (int)cblas_isamax(n - j, colj + j, 1);
    ipiv[j] = p;
    float piv = colj[p];
    if (piv == 0.0f || !isfinite(piv))
      return MPE_ERANGE;
    if (p != j)
      cblas_sswap(n, A + j, lda, A + p, lda);
    for (int i = j + 1; i < n; i++)
      colj[i] /= piv;
    if (j + 1 < k + kb && j + 1 < n)
      cblas_sger(CblasColMajor, n - j - 1, k + kb - j - 1, -1.0f, colj + j + 1, 1,
                 A + (size_t)(j + 1) * lda + j, lda, A + (size_t)(j + 1) * lda + j + 1, lda);
  }
  return MPE_OK;
}

int mpe_ir_lu(float *A, int n, int lda, int *ipiv, mpe_type in, const mpe_tc_model *model, int nb)
{
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
  lu_update_ctx c = { in, model, NULL, NULL };
  if (!model && in != MPE_FP32) {
    c.wl = malloc((size_t)n * nb * sizeof(float));
    c.wu = malloc((size_t)n * nb * sizeof(float));
    if (!c.wl || !c.wu) {
      free(c.wl);
      free(c.wu);
      return MPE_ENOMEM;
    }
  }
  int rc = MPE_OK;
  /* With a model, the GEMMs run on the library's OpenMP threads, which spin for
     a while after each one: OpenBLAS's threads would fight them for the cores
     during the panels and triangular solves. So OpenBLAS runs on this thread
     alone until the factorisation ends (openblas_set_num_threads is
     process-wide; the count is restored on return). */
  const int blas_threads = openblas_get_num_threads();
  if (model && blas_threads > 1)
    openblas_set_num_threads(1);
  for (int k = 0; k < n && !rc; k += nb) {
    int kb = n - k < nb ? n - k : nb;
    if ((rc = lu_panel(A, n, lda, ipiv, k, kb)) != MPE_OK)
      break;
    int rest = n - k - kb;
    if (rest > 0) {
      float *A11 = A + (size_t)k * lda + k, *A12 = A + (size_t)(k + kb) * lda + k;
      cblas_strsm(CblasColMajor, CblasLeft, CblasLower, CblasNoTrans, CblasUnit, kb, rest, 1.0f,
                  A11, lda, A12, lda);
      rc = lu_update(&c, rest, rest, kb, A + (size_t)k * lda + k + kb, A12, A12 + kb, lda);
    }
  }
  if (model && blas_threads > 1)
    openblas_set_num_threads(blas_threads);
  free(c.wl);
  free(c.wu);
  if (rc)
    return rc;
  for (int j = 0; j < n; j++)
    for (int i = 0; i < n; i++)
      if (!isfinite(A[(size_t)j * lda + i]))
        return MPE_ERANGE;
  return MPE_OK;
}

int mpe_ir_lu_solve(const float *LU, int n, int lda, const int *ipiv, float *x)
{
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
  cblas_strsv(CblasColMajor, CblasLower, CblasNoTrans, CblasUnit, n, LU, lda, x, 1);
  cblas_strsv(CblasColMajor, CblasUpper, CblasNoTrans, CblasNonUnit, n, LU, lda, x, 1);
  return MPE_OK;
}
