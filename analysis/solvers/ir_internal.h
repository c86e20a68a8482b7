/* Private to libmpemu-solvers: the argument rules and error measures of
   mpe_ir_solve (ir.c), shared with its cuSOLVER twin (ir_cusolver.c); the
   private names of libmpemu-solvers start mpas_. */
#ifndef MPE_IR_INTERNAL_H
#define MPE_IR_INTERNAL_H
#include "mpei.h"
#include "mpemu/ir.h"

MPEI_HIDDEN int mpas_ir_check(int n, const double *A, int lda, const double *b, const double *x,
                              const mpe_ir_opts *opts);
MPEI_HIDDEN int mpas_ir_errors(int n, const double *A, int lda, const double *b, const double *x,
                               const double *xtrue, double *backward, double *fwd);

/* sum x[i] y[i] in a fixed order (four partial sums over i mod 4, added
   pairwise; the library is built with -ffp-contract=off): the same bits for any
   BLAS thread count and on any machine, as a BLAS ddot is not */
static inline double mpas_dot_fixed(int n, const double *x, const double *y)
{
  double s[4] = { 0, 0, 0, 0 };
  int i = 0;
  for (; i + 4 <= n; i += 4)
    for (int l = 0; l < 4; l++)
      s[l] += x[i + l] * y[i + l];
  for (; i < n; i++)
    s[i & 3] += x[i] * y[i];
  return (s[0] + s[1]) + (s[2] + s[3]);
}

#endif
