/* mpemu — sparse matrices in compressed sparse row form (libmpemu-solvers).
   See mpe_csr_alloc(3); the Matrix Market reader that fills them is in
   mpemu/io.h (mpe_mtx_read(3)). */
#ifndef MPEMU_CSR_H
#define MPEMU_CSR_H
#include <stddef.h>
#include "mpemu/core.h"
#ifdef __cplusplus
extern "C" {
#endif

/* Compressed sparse row, 0-based, values in binary64. */
typedef struct {
  int nrows, ncols;
  size_t nnz;
  size_t *rowptr;   /* nrows + 1 entries */
  int *col;         /* nnz */
  double *val;      /* nnz */
} mpe_csr;

/* A zeroed matrix of the given shape with room for nnz entries (rowptr all 0). */
MPE_API int mpe_csr_alloc(mpe_csr **A, int nrows, int ncols, size_t nnz);
MPE_API void mpe_csr_free(mpe_csr *A);
/* The Laplacian of mpe_mat_laplace in CSR form (columns ascending in each row). */
MPE_API int mpe_csr_laplace(mpe_csr **A, int dim, int m);
/* Dense column-major copy (D is nrows x ncols, ld >= nrows; zeros filled in). */
MPE_API int mpe_csr_to_dense(double *D, int ld, const mpe_csr *A);

#ifdef __cplusplus
}
#endif
#endif
