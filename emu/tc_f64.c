/* Binary64 tensor cores: mpe_mma and mpe_gemm with an FP64 model (NVIDIA's
   DMMA, mma.sync .f64; AMD's v_mfma_f64). Each output is a chain of binary64
   fused multiply-adds in ascending k starting from c, as MMA-Sim models these
   instructions (mpe_tc_model_get(3)); the instructions of one GEMM continue
   the chain, so the result does not depend on the instruction's k. The
   portable path is the chain itself (fma from libm); the fast kernels
   (tc_f64_kernel.h) are the same chain on vector registers. */
#include "config.h"
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "isa.h"
#include "tc_drive.h"
#include "tc_epilogue.h"
#include "tc_f64.h"
#include "mpei_fenv.h"

/* the one quiet NaN of a binary64 result (as 0x7fffffff for binary32) */
static double canon(double v)
{
  if (!isnan(v))
    return v;
  const uint64_t u = 0x7fffffffffffffffull;
  double d;
  memcpy(&d, &u, sizeof d);
  return d;
}

static inline double at(const mpei_tc_opnd *x, int i, int l)
{
  return ((const double *)x->p)[(long)i * x->rs + (long)l * x->cs];
}

/* acc (M×N, row-major) holds the initial accumulators on entry and the
   results on return. */
static void run_portable(int M, int N, int K, const mpei_tc_opnd *a, const mpei_tc_opnd *b, double *acc)
{
  long total = (long)M * N;
#pragma omp parallel for schedule(static) if (total * (long)(K + 1) > 100000)
  for (long t = 0; t < total; t++) {
    MPEI_FENV_GUARD();   /* a worker of the team: the library's environment (mpemu(3)) */
    int i = (int)(t / N), j = (int)(t % N);
    double d = acc[t];
    for (int l = 0; l < K; l++)
      d = fma(at(a, i, l), at(b, l, j), d);
    acc[t] = d;
  }
}

enum { KC = 256, MC_PANELS = 8, NC_PANELS = 4 };

/* X (rows × K, element (i, l) at i*rs + l*cs) in panels of w rows: panel p,
   step k, row r at (p*K + k)*w + r; rows past the end are 0. */
static void pack(const mpei_tc_opnd *x, int rows, int K, int w, double *out)
{
  const int npan = (rows + w - 1) / w;
  const int par = (long)rows * K > 32768, nthr = par ? mpei_gemm_threads() : 1;
#pragma omp parallel for schedule(static) if (par) num_threads(nthr)
  for (int p = 0; p < npan; p++)
    for (int k = 0; k < K; k++)
      for (int r = 0; r < w; r++) {
        int i = p * w + r;
        out[((size_t)p * K + k) * w + r] = i < rows ? at(x, i, k) : 0.0;
      }
}

/* One call of the driver (tc_drive.h): the panels and the kernel. */
typedef struct {
  const double *pa, *pb;
  int K, mr, nb;
  mpei_tc_f64_fn kern;
} f64_call;

/* the driver's kernel: tile (ip, jp), k-steps [k0, k0 + kn), the chain
   continuing in c */
static void f64_tile(const void *ctx, int ip, int jp, int k0, int kn, void *c, long ldc)
{
  const f64_call *d = ctx;
  d->kern(d->pa + ((size_t)ip * d->K + k0) * d->mr, d->pb + ((size_t)jp * d->K + k0) * d->nb, c, ldc, kn);
}

static int run_fast(int M, int N, int K, const mpei_tc_opnd *a, const mpei_tc_opnd *b, double *acc)
{
  const mpei_isa_kernels *isa = mpei_isa();   /* the SIMD level's kernels (emu/isa.c) */
  if (!isa->tc_f64)
    return MPE_EUNSUP;
  const int mr = isa->tc_f64_mr, nb = isa->tc_f64_nb;
  const int mp = (M + mr - 1) / mr, np = (N + nb - 1) / nb;
  double *pa = malloc(sizeof(double) * ((size_t)mp * mr * K + 1));
  double *pb = malloc(sizeof(double) * ((size_t)np * nb * K + 1));
  int r = MPE_ENOMEM;
  if (pa && pb) {
    mpei_tc_opnd bT = { b->p, b->t, b->cs, b->rs, NULL };   /* column j of B as row j */
    pack(a, M, K, mr, pa);
    pack(&bT, N, K, nb, pb);
    const f64_call d = { pa, pb, K, mr, nb, isa->tc_f64 };
    const mpei_gemm_plan plan = { M, N, K, KC, mr, nb, MC_PANELS, NC_PANELS, sizeof(double), (long)M * N * K,
                                  f64_tile, &d, .acc = acc };
    r = mpei_gemm_run(&plan);
  }
  free(pa);
  free(pb);
  return r;
}

static int f64_run(int M, int N, int K, const mpei_tc_opnd *a, const mpei_tc_opnd *b, double *acc)
{
  if (K > 0) {
    int r = run_fast(M, N, K, a, b, acc);
    if (r != MPE_EUNSUP)
      return r;
  }
  run_portable(M, N, K, a, b, acc);
  return MPE_OK;
}

/* mpe_mma's product (mpei_tc_mma_acc): the sums, a NaN as the one quiet NaN */
static int f64_mma_run(const struct mpe_tc_model *m, int M, int N, int K, const mpei_tc_opnd *a,
                       const mpei_tc_opnd *b, void *acc)
{
  (void)m;
  double *d = acc;
  int r = f64_run(M, N, K, a, b, d);
  for (size_t i = 0; r == MPE_OK && i < (size_t)M * N; i++)
    d[i] = canon(d[i]);
  return r;
}

/* an FP64 model (built-in or not) and every operand binary64 */
static int types_ok(const struct mpe_tc_model *m, mpe_type at, mpe_type bt, mpe_type ct)
{
  return m && m->p.in == MPE_FP64 && at == MPE_FP64 && bt == MPE_FP64 && ct == MPE_FP64;
}

int mpei_tc_f64_mma(const struct mpe_tc_model *model, int m, int n, int k, const void *A, mpe_type atype,
                    int lda, const void *B, mpe_type btype, int ldb, const void *C, int ldc, void *D,
                    mpe_type dtype, int ldd)
{
  if (!types_ok(model, atype, btype, dtype) || mpei_tc_mma_shape_check(m, n, k, A, lda, B, ldb, C, ldc, D, ldd))
    return MPE_EINVAL;
  return mpei_tc_mma_acc(model, f64_mma_run, m, n, k, A, atype, lda, B, btype, ldb, C, ldc, D, ldd,
                         sizeof(double));
}

/* C = alpha*acc + beta*C in binary64, as fma(alpha, acc, beta*C): the binary32
   epilogue of mpe_gemm (emu/tc_epilogue.h) in binary64; C not read when beta = 0 */
static double epilogue(double v, double cv, double alpha, double beta, int use_ab)
{
  double out;
  MPEI_EPILOGUE(out, v, cv, alpha, beta, use_ab, 0.0, fma);
  return canon(out);
}

int mpei_tc_f64_gemm(const struct mpe_tc_model *model, mpe_layout layout, mpe_trans ta, mpe_trans tb, int m,
                     int n, int k, float alpha, const void *A, mpe_type atype, int lda, const void *B,
                     mpe_type btype, int ldb, float beta, void *C, mpe_type ctype, int ldc)
{
  if (!types_ok(model, atype, btype, ctype) || m < 0 || n < 0 || k < 0)
    return MPE_EINVAL;
  if (layout != MPE_ROW_MAJOR && layout != MPE_COL_MAJOR)
    return MPE_EINVAL;
  if ((ta != MPE_NO_TRANS && ta != MPE_TRANS) || (tb != MPE_NO_TRANS && tb != MPE_TRANS))
    return MPE_EINVAL;
  mpei_tc_call cl;   /* the shape checks and row-major views of mpe_gemm (tc_mma.c) */
  if (mpei_tc_gemm_call(layout, ta, tb, m, n, k, A, atype, lda, B, btype, ldb, C, ldc, k > 0 && alpha != 0.0f,
                        &cl))
    return MPE_EINVAL;
  if (m == 0 || n == 0)
    return MPE_OK;
  const int M = cl.M, N = cl.N, use_ab = cl.use_ab;
  double *acc = calloc((size_t)M * N, sizeof(double));
  if (!acc)
    return MPE_ENOMEM;
  int r = MPE_OK;
  if (use_ab)
    r = f64_run(M, N, k, &cl.a, &cl.b, acc);
  if (r == MPE_OK) {
#pragma omp parallel for schedule(static) if ((long)M * N > 65536)
    for (int i = 0; i < M; i++) {
      MPEI_FENV_GUARD();   /* a worker of the team: the library's environment (mpemu(3)) */
      for (int j = 0; j < N; j++) {
        double *c = (double *)C + (size_t)i * ldc + j;
        *c = epilogue(acc[(size_t)i * N + j], beta != 0.0f ? *c : 0.0, alpha, beta, use_ab);
      }
    }
  }
  free(acc);
  return r;
}
