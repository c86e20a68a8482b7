/* mpemu — mixed-precision CG with reliable updates (libmpemu-solvers). See mpe_cg_solve(3). */
#ifndef MPEMU_CG_H
#define MPEMU_CG_H
#include "mpemu/core.h"
#include "mpemu/ir.h"
#ifdef __cplusplus
extern "C" {
#endif

/* How the sloppy vectors (residual, search direction, A*p) are stored. */
typedef enum {
  MPE_CG_FP64 = 0,  /* plain binary64 CG (the reference; no sloppy precision) */
  MPE_CG_FP32,      /* binary32 */
  MPE_CG_FP16,      /* binary16 values with a power-of-two scale per vector */
  MPE_CG_BF16,      /* bfloat16 values with a power-of-two scale per vector */
  MPE_CG_FX16       /* QUDA fixed16: mpe_fx16_encode blocks of fx16_block values */
} mpe_cg_storage;

/* The operator: a CSR matrix, or (csr NULL) the Dirichlet Laplacian stencil
   of dimension dim on an m^dim grid, as in mpe_mat_laplace, applied without
   storing a matrix. It must be symmetric positive definite. */
typedef struct {
  const mpe_csr *csr;
  int dim, m;
} mpe_cg_op;

typedef enum {
  MPE_CG_CONVERGED = 0,  /* ||b - A x||_2 <= tol ||b||_2, checked on the true residual */
  MPE_CG_MAXITER = 1,    /* max_iter iterations without convergence */
  MPE_CG_BREAKDOWN = 2   /* p'Ap <= 0 or NaN/inf: A is not SPD or precision is exhausted */
} mpe_cg_status;

typedef struct {
  mpe_cg_storage sloppy;  /* default MPE_CG_FP32 */
  double delta;           /* reliable-update threshold, default 0.1 */
  double tol;             /* relative true residual to reach, default 1e-10 */
  int max_iter;           /* default 10 * n */
  int fx16_block;         /* values per fixed16 block, default 64 */
  double *history;        /* NULL, or room for history_cap iterated relative residuals */
  int history_cap;
} mpe_cg_opts;

typedef struct {
  mpe_cg_status status;
  int iterations;          /* CG steps (one sloppy operator application each) */
  int reliable_updates;    /* true-residual recomputations, the final check included */
  double true_residual;    /* ||b - A x||_2 / ||b||_2 in binary64, for the returned x */
  int nhistory;            /* entries written to opts->history (one per step) */
} mpe_cg_result;

MPE_API void mpe_cg_opts_init(mpe_cg_opts *o);

/* Solve A x = b by CG with reliable updates (docs/DESIGN.md §7; QUDA, Strzodka &
   Göddeke): x (binary64) holds the initial guess on entry and the solution on
   return; b is binary64. The iteration runs with binary32 arithmetic on vectors
   stored as opts->sloppy, dot products accumulated in binary64; the solution
   and the partial accumulator stay in binary64. When the iterated residual
   falls below delta times its largest value since the last update, the true
   residual b - A x is recomputed in binary64, the accumulator is folded into
   x, the search direction is re-projected (p -= (r'p / r'r) r, then
   p = r + (r'r / r_old'r_old) p) and the sloppy vectors are stored again with
   a new power-of-two scale (so FP16 storage neither underflows nor overflows).
   β is in Polak-Ribière form between updates. A sloppy residual below tol
   forces an update; the solve stops only when the true residual passes.
   opts NULL means the defaults; res may be NULL.
   Returns 0 (converged), MPE_ECONVERGE (MAXITER or BREAKDOWN; x holds the last
   iterate, res says which), MPE_EINVAL (bad arguments, nothing written),
   MPE_ERANGE (NaN/inf in b or x), or MPE_ENOMEM. */
MPE_API int mpe_cg_solve(const mpe_cg_op *A, const double *b, double *x,
                         const mpe_cg_opts *opts, mpe_cg_result *res);

/* y = A x in binary64 for the operator (n = its order). */
MPE_API int mpe_cg_apply(const mpe_cg_op *A, const double *x, double *y);
/* The order of the operator, or -1 if it is not valid (non-square CSR, bad dim/m). */
MPE_API int mpe_cg_op_order(const mpe_cg_op *A);

#ifdef __cplusplus
}
#endif
#endif
