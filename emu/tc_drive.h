/* Internal: the one loop nest of the fast GEMM paths (dense and 2:4 sparse
   floating point, integer, binary64). A caller packs its operands into
   panels, fills an mpei_gemm_plan and hands it to mpei_gemm_run, which cuts
   the output into thread tiles of mcp × ncp kernel tiles (mr × nr outputs
   each), runs the tiles in parallel (a team sized by mpei_threads_team: the
   free cores, at most omp_get_max_threads()) and,
   in each, K in ascending chunks of kc steps: for every chunk, every kernel
   tile of the thread tile, its B panel outermost, gets one call of the plan's
   kernel. Every output is thus computed by one sequence of kernel calls
   whatever the thread count. Edge tiles run on a copy padded with zeros.

   A kernel plugs in through one function, mpei_gemm_tile_fn: it finds its
   panels from the tile's indices and the chunk (in its own units of K: k-steps,
   blocks or segments) and accumulates into c. Outputs a kernel cannot compute
   (an inf or NaN in their row of A or column of B) are recomputed by the
   plan's fix function, the portable engine. */
#ifndef MPEI_TC_DRIVE_H
#define MPEI_TC_DRIVE_H
#include "tc_impl.h"

/* Kernel tile (ip, jp), K steps [k0, k0 + kn): c (leading dimension ldc, in
   elements) += the products. */
typedef void (*mpei_gemm_tile_fn)(const void *ctx, int ip, int jp, int k0, int kn, void *c, long ldc);
/* Output (i, j) by the portable engine; scratch: fix_scratch bytes of the thread. */
typedef float (*mpei_gemm_fix_fn)(const void *ctx, int i, int j, void *scratch);
/* Whether output (i, j) needs the fix-up for a reason of the caller's own
   (e.g. a non-finite initial accumulator), besides rowbad/colbad. */
typedef int (*mpei_gemm_bad_fn)(const void *ctx, int i, int j);

typedef struct {
  int M, N;              /* outputs */
  int K, kc;             /* K steps (the kernel's units, padded as the panels are); steps per chunk */
  int mr, nr;            /* a kernel tile */
  int mcp, ncp;          /* kernel tiles per thread tile, down and across */
  int esize;             /* bytes of one accumulator: 4 (binary32, int32) or 8 (binary64) */
  long work;             /* the products: a team only above 100000 */
  mpei_gemm_tile_fn tile;
  const void *ctx;       /* the kernel's and fix's own data */
  /* the fix-up (binary32 accumulators only): fix(i, j) where rowbad[i] or colbad[j]
     (or cbad(i, j)); rowbad NULL: none */
  const unsigned char *rowbad, *colbad;
  mpei_gemm_fix_fn fix;
  mpei_gemm_bad_fn cbad;
  size_t fix_scratch;
  /* the output: acc, M × N row-major (the initial accumulators in, the kernels'
     sums out; the caller then runs mpei_gemm_fixup), or with epi (acc NULL) the
     fused BLAS epilogue: a thread tile's accumulators start at zero in a buffer
     of the thread and, once its K loop ends, go through the fix-up and
     epi(C + i*ldc + j0, row, nj, alpha, beta, 1), row by row */
  void *acc;
  mpei_tc_epi_fn epi;
  float alpha, beta;
  float *C;
  int ldc;
} mpei_gemm_plan;

/* MPE_OK, MPE_ENOMEM, or MPE_EUNSUP (a kernel tile over 8 KiB). */
MPEI_HIDDEN int mpei_gemm_run(const mpei_gemm_plan *p);
/* The fix-up of a plan run into acc (binary32): MPE_OK or MPE_ENOMEM. */
MPEI_HIDDEN int mpei_gemm_fixup(const mpei_gemm_plan *p, float *acc);
/* The team for the drivers and their packing loops (mpei_threads_team). */
MPEI_HIDDEN int mpei_gemm_threads(void);
#endif
