/* Test matrices for the refinement experiments: randsvd, Hilbert, Dirichlet
   Laplacians (dense and CSR), diagonally dominant random; CSR helpers. */
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <gsl/gsl_matrix.h>
#include <gsl/gsl_randist.h>
#include <gsl/gsl_rng.h>
#include "mpei.h"
#include "mpemu/ir.h"
#include "ir_internal.h"

static int dense_args_ok(const double *A, int n, int lda)
{
  return A != NULL && n >= 1 && lda >= n;
}

static gsl_rng *rng_new(uint64_t seed)
{
  gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
  if (r)
    gsl_rng_set(r, (unsigned long)(seed ^ (seed >> 32)));
  return r;
}

/* A Haar-distributed orthogonal matrix (row-major n x n in q): Q of the QR
   factorization of a Gaussian matrix with diag(R) > 0, found by classical
   Gram-Schmidt run twice per column ("twice is enough": orthogonal to working
   precision) in a fixed order of operations, so that the matrix is the same
   bits for any BLAS thread count and on any machine (a BLAS-backed QR is not). */
static int random_orthogonal(gsl_matrix *q, gsl_rng *r)
{
  size_t n = q->size1;
  double *w = malloc(n * n * sizeof *w), *h = malloc(n * sizeof *h);   /* w: columns, contiguous */
  if (!w || !h) {
    free(w);
    free(h);
    return MPE_ENOMEM;
  }
  for (size_t i = 0; i < n; i++)
    for (size_t j = 0; j < n; j++)
      w[j * n + i] = gsl_ran_gaussian_ziggurat(r, 1.0);
  int rc = MPE_OK;
  for (size_t j = 0; j < n && rc == MPE_OK; j++) {
    double *v = w + j * n;
    for (int pass = 0; pass < 2; pass++) {
      for (size_t c = 0; c < j; c++) {
        const double *qc = w + c * n;
        double s = 0;
        for (size_t i = 0; i < n; i++)
          s += qc[i] * v[i];
        h[c] = s;
      }
      for (size_t c = 0; c < j; c++) {
        const double *qc = w + c * n;
        for (size_t i = 0; i < n; i++)
          v[i] -= h[c] * qc[i];
      }
    }
    double s = 0;
    for (size_t i = 0; i < n; i++)
      s += v[i] * v[i];
    double nv = sqrt(s);
    if (!(nv > 0) || !isfinite(nv)) {
      rc = MPE_ERANGE;   /* a dependent column: probability zero */
      break;
    }
    for (size_t i = 0; i < n; i++)
      v[i] /= nv;
  }
  if (rc == MPE_OK)
    for (size_t i = 0; i < n; i++)
      for (size_t j = 0; j < n; j++)
        gsl_matrix_set(q, i, j, w[j * n + i]);
  free(w);
  free(h);
  return rc;
}

int mpe_mat_randsvd(double *A, int n, int lda, double kappa, int mode, uint64_t seed)
{
  MPEI_FENV_GUARD();
  if (!dense_args_ok(A, n, lda) || !(kappa >= 1.0) || isinf(kappa) || mode < 1 || mode > 5)
    return MPE_EINVAL;
  double *sigma = malloc((size_t)n * sizeof *sigma);
  gsl_matrix *u = gsl_matrix_alloc((size_t)n, (size_t)n), *v = gsl_matrix_alloc((size_t)n, (size_t)n);
  gsl_rng *r = rng_new(seed);
  int rc = MPE_ENOMEM;
  if (!sigma || !u || !v || !r)
    goto out;
  for (int i = 0; i < n; i++) {
    double t = n > 1 ? (double)i / (n - 1) : 0.0;
    switch (mode) {
    case 1: sigma[i] = i == 0 ? 1.0 : 1.0 / kappa; break;
    case 2: sigma[i] = i == n - 1 ? 1.0 / kappa : 1.0; break;
    case 3: sigma[i] = pow(kappa, -t); break;
    case 4: sigma[i] = 1.0 - t * (1.0 - 1.0 / kappa); break;
    default: sigma[i] = pow(kappa, -gsl_rng_uniform(r)); break;
    }
  }
  if (mode == 5 && n > 1) {
    sigma[0] = 1.0;
    sigma[n - 1] = 1.0 / kappa;
  }
  if (n == 1)
    sigma[0] = 1.0;
  if ((rc = random_orthogonal(u, r)) != MPE_OK || (rc = random_orthogonal(v, r)) != MPE_OK)
    goto out;
  /* u's row-major buffer read column-major is U^T; scale U's columns by sigma. */
  for (int i = 0; i < n; i++)
    for (int k = 0; k < n; k++)
      u->data[(size_t)i * u->tda + k] *= sigma[k];
  /* A = (U S) V^T, a_ij = sum_k (U S)_ik V_jk over rows of both buffers, in a
     fixed order (mpas_dot_fixed): the same matrix for any BLAS thread count
     and on any machine */
  for (int j = 0; j < n; j++) {
    const double *vj = v->data + (size_t)j * v->tda;
    for (int i = 0; i < n; i++)
      A[(size_t)j * lda + i] = mpas_dot_fixed(n, u->data + (size_t)i * u->tda, vj);
  }
  rc = MPE_OK;
out:
  free(sigma);
  gsl_matrix_free(u);
  gsl_matrix_free(v);
  gsl_rng_free(r);
  return rc;
}

int mpe_mat_hilbert(double *A, int n, int lda)
{
  MPEI_FENV_GUARD();
  if (!dense_args_ok(A, n, lda))
    return MPE_EINVAL;
  for (int j = 0; j < n; j++)
    for (int i = 0; i < n; i++)
      A[(size_t)j * lda + i] = 1.0 / (double)(i + j + 1);
  return MPE_OK;
}

/* n = m^dim, or -1 if dim/m are invalid or n overflows an int. */
static int laplace_order(int dim, int m)
{
  if (dim < 1 || dim > 3 || m < 1)
    return -1;
  long long n = 1;
  for (int d = 0; d < dim; d++) {
    n *= m;
    if (n > INT_MAX)
      return -1;
  }
  return (int)n;
}

/* Neighbours of grid point i in ascending index order; returns their count. */
static int laplace_neighbours(int dim, int m, int i, int *nb)
{
  int c[3] = { 0, 0, 0 }, stride[3] = { 1, m, m * m }, k = 0, t = i;
  for (int d = 0; d < dim; d++) {
    c[d] = t % m;
    t /= m;
  }
  for (int d = dim - 1; d >= 0; d--)
    if (c[d] > 0)
      nb[k++] = i - stride[d];
  for (int d = 0; d < dim; d++)
    if (c[d] < m - 1)
      nb[k++] = i + stride[d];
  return k;
}

int mpe_mat_laplace(double *A, int dim, int m, int lda)
{
  MPEI_FENV_GUARD();
  int n = laplace_order(dim, m);
  if (n < 0 || !dense_args_ok(A, n, lda))
    return MPE_EINVAL;
  for (int j = 0; j < n; j++)
    memset(A + (size_t)j * lda, 0, (size_t)n * sizeof *A);
  for (int i = 0; i < n; i++) {
    int nb[6], k = laplace_neighbours(dim, m, i, nb);
    A[(size_t)i * lda + i] = 2.0 * dim;
    for (int q = 0; q < k; q++)
      A[(size_t)nb[q] * lda + i] = -1.0;
  }
  return MPE_OK;
}

int mpe_mat_dominant(double *A, int n, int lda, uint64_t seed)
{
  MPEI_FENV_GUARD();
  if (!dense_args_ok(A, n, lda))
    return MPE_EINVAL;
  gsl_rng *r = rng_new(seed);
  double *rowsum = calloc((size_t)n, sizeof *rowsum);
  if (!r || !rowsum) {
    gsl_rng_free(r);
    free(rowsum);
    return MPE_ENOMEM;
  }
  for (int j = 0; j < n; j++)
    for (int i = 0; i < n; i++) {
      double a = 2.0 * gsl_rng_uniform(r) - 1.0;
      A[(size_t)j * lda + i] = a;
      rowsum[i] += fabs(a);
    }
  /* a_ii = 1 + sum_j |a_ij|: adding the sum to a negative a_ii would leave
     the row only weakly dominant, and the 1 x 1 matrix zero */
  for (int i = 0; i < n; i++)
    A[(size_t)i * lda + i] = 1.0 + rowsum[i];
  gsl_rng_free(r);
  free(rowsum);
  return MPE_OK;
}

/* ------------------------------------------------------------ CSR */

int mpe_csr_alloc(mpe_csr **A, int nrows, int ncols, size_t nnz)
{
  MPEI_FENV_GUARD();
  if (A)
    *A = NULL;   /* the constructor convention (mpemu/core.h) */
  if (!A || nrows < 1 || ncols < 1 || nnz > (SIZE_MAX / 16))
    return MPE_EINVAL;
  mpe_csr *m = calloc(1, sizeof *m);
  if (!m)
    return MPE_ENOMEM;
  m->nrows = nrows;
  m->ncols = ncols;
  m->nnz = nnz;
  m->rowptr = calloc((size_t)nrows + 1, sizeof *m->rowptr);
  m->col = malloc((nnz ? nnz : 1) * sizeof *m->col);
  m->val = malloc((nnz ? nnz : 1) * sizeof *m->val);
  if (!m->rowptr || !m->col || !m->val) {
    mpe_csr_free(m);
    return MPE_ENOMEM;
  }
  *A = m;
  return MPE_OK;
}

void mpe_csr_free(mpe_csr *A)
{
  if (!A)
    return;
  free(A->rowptr);
  free(A->col);
  free(A->val);
  free(A);
}

int mpe_csr_laplace(mpe_csr **A, int dim, int m)
{
  MPEI_FENV_GUARD();
  if (A)
    *A = NULL;   /* the constructor convention (mpemu/core.h) */
  int n = laplace_order(dim, m);
  if (!A || n < 0)
    return MPE_EINVAL;
  size_t nnz = 0;
  for (int i = 0; i < n; i++) {
    int nb[6];
    nnz += 1 + (size_t)laplace_neighbours(dim, m, i, nb);
  }
  mpe_csr *L;
  int rc = mpe_csr_alloc(&L, n, n, nnz);
  if (rc)
    return rc;
  size_t p = 0;
  for (int i = 0; i < n; i++) {
    int nb[6], k = laplace_neighbours(dim, m, i, nb), diag_done = 0;
    L->rowptr[i] = p;
    for (int q = 0; q < k; q++) {
      if (!diag_done && nb[q] > i) {
        L->col[p] = i;
        L->val[p++] = 2.0 * dim;
        diag_done = 1;
      }
      L->col[p] = nb[q];
      L->val[p++] = -1.0;
    }
    if (!diag_done) {
      L->col[p] = i;
      L->val[p++] = 2.0 * dim;
    }
  }
  L->rowptr[n] = p;
  *A = L;
  return MPE_OK;
}

int mpe_csr_to_dense(double *D, int ld, const mpe_csr *A)
{
  MPEI_FENV_GUARD();
  if (!D || !A || !A->rowptr || ld < A->nrows)
    return MPE_EINVAL;
  for (int i = 0; i < A->nrows; i++) {
    if (A->rowptr[i + 1] < A->rowptr[i])
      return MPE_EINVAL;
    for (size_t p = A->rowptr[i]; p < A->rowptr[i + 1]; p++)
      if (A->col[p] < 0 || A->col[p] >= A->ncols)
        return MPE_EINVAL;
  }
  for (int j = 0; j < A->ncols; j++)
    memset(D + (size_t)j * ld, 0, (size_t)A->nrows * sizeof *D);
  for (int i = 0; i < A->nrows; i++)
    for (size_t p = A->rowptr[i]; p < A->rowptr[i + 1]; p++)
      D[(size_t)A->col[p] * ld + i] += A->val[p];
  return MPE_OK;
}
