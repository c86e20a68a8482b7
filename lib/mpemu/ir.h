/* mpemu — mixed-precision LU, LU-IR and GMRES-IR (libmpemu-solvers).
   See mpe_ir_solve(3), mpe_ir_lu(3).

   Dense matrices are column-major (LAPACK order) with a leading dimension
   ld >= number of rows. */
#ifndef MPEMU_IR_H
#define MPEMU_IR_H
#include "mpemu/core.h"
#include "mpemu/tc.h"
/* the test matrices, CSR matrices and the Matrix Market reader were declared
   here; they have headers of their own now, included for programs that
   included this one for them */
#include "mpemu/matgen.h"
#include "mpemu/csr.h"
#include "mpemu/io.h"
#ifdef __cplusplus
extern "C" {
#endif

/* ------------------------------------------------------------ mixed-precision LU */

/* Blocked right-looking LU with partial pivoting, in place, of the n x n
   binary32 matrix A (P*A = L*U, unit lower L). Panels (nb columns) and the
   block row U12 = L11^-1 A12 are computed in binary32 (OpenBLAS); each
   trailing update A22 -= L21*U12 is a GEMM whose inputs are rounded to `in`
   (MPE_FP16, MPE_BF16, MPE_TF32, or MPE_FP32 for none), accumulated and
   output in binary32: through mpe_gemm with `model` when model is not NULL
   (a model whose input format is `in`, else MPE_EINVAL; binary32 operands
   converted by the model's input rule; alpha = -1, beta = 1), else by
   rounding L21 and U12 to `in` (RNE) and calling OpenBLAS sgemm. Without a
   model the same arithmetic runs recursively (the columns split in halves at
   multiples of nb, the leaves the nb x nb diagonal blocks): every L and U
   entry outside the diagonal blocks is rounded once, and the products go
   through few large sgemm calls; only the grouping of binary32 sums differs.
   nb <= 0 picks the default (mpe_ir_default_block(n)). ipiv[k] (0-based)
   is the row swapped with row k at step k, as in LAPACK (1-based there).
   Returns MPE_EINVAL for bad arguments, MPE_ERANGE if a pivot is zero or a
   value becomes NaN/inf (A then holds a partial factorization). */
MPE_API int mpe_ir_lu(float *A, int n, int lda, int *ipiv, mpe_type in,
                      const mpe_tc_model *model, int nb);
/* Solve L*U*x = P*b in binary32 with the factors of mpe_ir_lu (x in place). */
MPE_API int mpe_ir_lu_solve(const float *LU, int n, int lda, const int *ipiv, float *x);
/* The block size used for nb <= 0: n/16 clamped to 1..64, so that small
   matrices still see their trailing updates in the factor format. */
MPE_API int mpe_ir_default_block(int n);

/* ------------------------------------------------------------ iterative refinement */

typedef enum {
  MPE_IR_LU_IR = 0,      /* x += LU^-1 r */
  MPE_IR_GMRES_IR = 1    /* x += d, d from FGMRES(A d = r) in binary64, LU as preconditioner */
} mpe_ir_solver;

typedef enum {
  MPE_IR_CONVERGED = 0,  /* the stopping test held */
  MPE_IR_FALLBACK = 1,   /* refinement gave up; x is the binary64 LAPACK solve */
  MPE_IR_DIVERGED = 2    /* refinement gave up and fallback was disabled */
} mpe_ir_status;

/* Why refinement gave up: cuSOLVER IRS / LAPACK DSGESV `niters` codes. */
enum {
  MPE_IR_NITERS_OVERFLOW = -2,  /* converting A to the factor format overflowed */
  MPE_IR_NITERS_FACTOR = -3     /* the low-precision LU failed (zero pivot, NaN/inf) */
  /* -(max_iter + 1): no convergence within max_iter corrections, or NaN/inf */
};

typedef struct {
  double residual;        /* ||b - A x||_inf */
  double backward_error;  /* ||r||_inf / (||A||_inf ||x||_inf + ||b||_inf) */
  double forward_error;   /* ||x - xtrue||_inf / ||xtrue||_inf; NaN without xtrue */
  int inner;              /* GMRES steps spent on the correction that led here (0 for LU-IR) */
} mpe_ir_step;

typedef struct {
  mpe_ir_solver solver;       /* default MPE_IR_LU_IR */
  mpe_type factor;            /* MPE_FP16 (default), MPE_BF16, MPE_TF32 or MPE_FP32 */
  const mpe_tc_model *model;  /* trailing-update model (see mpe_ir_lu); default NULL */
  int block;                  /* LU block size; 0: mpe_ir_default_block(n) */
  int scale;                  /* 1: two-sided scaling before the factorization
                                 (Higham, Pranesh, Zounon): rows then columns to max 1,
                                 times mu = 0.1 * max finite of the factor format */
  int no_fallback;            /* 1: never solve in binary64; status MPE_IR_DIVERGED instead */
  int max_iter;               /* corrections allowed; default 30 (DSGESV's ITERMAX) */
  int gmres_m;                /* GMRES-IR: steps per correction; default 50 */
  double gmres_tol;           /* GMRES-IR: relative residual for each correction; default 1e-6 */
  const double *xtrue;        /* the exact solution, or NULL: enables forward errors */
  mpe_ir_step *history;       /* NULL, or room for history_cap steps: step 0 is x0 */
  int history_cap;
} mpe_ir_opts;

typedef struct {
  mpe_ir_status status;
  int niters;              /* >= 0: corrections to converge; < 0: why it gave up (see above) */
  int iterations;          /* corrections applied (also when it gave up) */
  int inner_iterations;    /* GMRES steps in all (0 for LU-IR) */
  double backward_error;   /* of the returned x */
  double forward_error;    /* of the returned x, NaN without xtrue */
  int nhistory;            /* entries written to opts->history */
} mpe_ir_result;

/* The defaults above. */
MPE_API void mpe_ir_opts_init(mpe_ir_opts *o);

/* Solve A x = b (A n x n column-major binary64, lda >= n; A and b are not
   changed) by refinement of a low-precision LU (mpe_ir_solve(3)): x0 from the LU,
   then while ||b - A x||_inf > sqrt(n) ||A||_inf ||x||_inf 2^-53, a
   correction. Falls back to LAPACKE_dgesv when the conversion overflows,
   the LU fails or max_iter corrections do not suffice (unless no_fallback).
   opts NULL means the defaults. res may be NULL.
   Returns 0 (converged or fell back; see res->status), MPE_ECONVERGE when
   fallback was disabled and refinement gave up (x holds the last iterate),
   MPE_ERANGE when A is singular in binary64 or A, b hold NaN/inf (x untouched),
   MPE_EINVAL for bad arguments (nothing written), MPE_ENOMEM. */
MPE_API int mpe_ir_solve(int n, const double *A, int lda, const double *b, double *x,
                         const mpe_ir_opts *opts, mpe_ir_result *res);

/* The same solve through cuSOLVER's IRS API (cusolverDnIRSXgesv, binary64 main
   precision, `factor` as the lowest) on the current CUDA device; see
   mpe_gpu_ir_solve(3). MPE_EUNSUP without CUDA or for options cuSOLVER
   lacks (model, scale, history); MPE_EDEVICE without a usable device. */
MPE_API int mpe_gpu_ir_solve(int n, const double *A, int lda, const double *b, double *x,
                             const mpe_ir_opts *opts, mpe_ir_result *res);
/* Deprecated: the former name of mpe_gpu_ir_solve (every GPU function is mpe_gpu_*). */
MPE_API int mpe_ir_solve_cusolver(int n, const double *A, int lda, const double *b, double *x,
                                  const mpe_ir_opts *opts, mpe_ir_result *res)
    __attribute__((deprecated("use mpe_gpu_ir_solve")));

#ifdef __cplusplus
}
#endif
#endif
