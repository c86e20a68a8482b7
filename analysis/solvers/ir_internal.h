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

#endif
