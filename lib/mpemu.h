/* mpemu — bit-exact low and mixed precision on a CPU. Umbrella header:
   #include <mpemu.h> and link with `pkg-config --libs mpemu` (formats, rounding,
   arithmetic, tensor cores), `pkg-config --libs mpemu-analysis` (also the
   readers, range reports, scalers, update studies, the training engine, the
   all-reduce) or `pkg-config --libs mpemu-solvers` (refinement, CG, test
   matrices, reduction-order studies: BLAS/LAPACK and GSL).
   Error codes and the one convention every constructor follows: <mpemu/core.h>. */
#ifndef MPEMU_H
#define MPEMU_H
#include "mpemu/version.h"
#include "mpemu/core.h"
#include "mpemu/convert.h"
#include "mpemu/format.h"
#include "mpemu/arith.h"
#include "mpemu/elementwise.h"
#include "mpemu/fixed.h"
#include "mpemu/tc.h"
#include "mpemu/quant.h"
#include "mpemu/sparse.h"
#include "mpemu/gpu.h"
#include "mpemu/csr.h"
#include "mpemu/matgen.h"
#include "mpemu/io.h"
#include "mpemu/range.h"
#include "mpemu/report.h"
#include "mpemu/scaler.h"
#include "mpemu/update.h"
#include "mpemu/ir.h"
#include "mpemu/cg.h"
#include "mpemu/dist.h"
#include "mpemu/train.h"
#include "mpemu/mx.h"
#endif
