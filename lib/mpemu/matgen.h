/* mpemu — dense test matrices: randsvd, Hilbert, Laplacian, diagonally dominant
   (libmpemu-solvers). See mpe_mat_randsvd(3).

   Dense matrices are column-major (LAPACK order) with a leading dimension
   ld >= number of rows. */
#ifndef MPEMU_MATGEN_H
#define MPEMU_MATGEN_H
#include <stdint.h>
#include "mpemu/core.h"
#ifdef __cplusplus
extern "C" {
#endif

/* randsvd: A = U diag(sigma) V^T with Haar-random orthogonal U, V (QR of
   Gaussian matrices, GSL generator seeded by `seed`) and singular values
   1 = sigma_1 >= ... >= sigma_n = 1/kappa, so that the 2-norm condition
   number is kappa (kappa >= 1). mode: 1 one large (sigma_2.. = 1/kappa),
   2 one small (sigma_n = 1/kappa, the rest 1), 3 geometric, 4 arithmetic,
   5 log-uniform random (the end points pinned to 1 and 1/kappa). */
MPE_API int mpe_mat_randsvd(double *A, int n, int lda, double kappa, int mode, uint64_t seed);
/* Hilbert matrix a_ij = 1/(i+j+1), i, j from 0. */
MPE_API int mpe_mat_hilbert(double *A, int n, int lda);
/* Dirichlet Laplacian of dimension dim (1, 2 or 3) on a grid of m points per
   side, natural (lexicographic) order: order n = m^dim, 2*dim on the
   diagonal, -1 for each grid neighbour (no 1/h^2 factor). */
MPE_API int mpe_mat_laplace(double *A, int dim, int m, int lda);
/* Strictly diagonally dominant random: entries U(-1,1), then
   a_ii = 1 + sum_j |a_ij|, so a_ii >= 1 + sum_{j != i} |a_ij| for any n,
   the 1 x 1 matrix included. */
MPE_API int mpe_mat_dominant(double *A, int n, int lda, uint64_t seed);

#ifdef __cplusplus
}
#endif
#endif
