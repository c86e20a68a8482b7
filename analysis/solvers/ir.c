/* LU-IR and GMRES-IR around the mixed-precision LU (docs/DESIGN.md §7): residuals,
   corrections and the FGMRES inner solver in binary64, fallback to
   LAPACKE_dgesv as cuSOLVER IRS and LAPACK DSGESV do. */
#include "config.h"
#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <cblas.h>
#include <lapacke.h>
#include "ir_internal.h"
#include "mpemu/format.h"
#include "mpemu/ir.h"
#include "mpei_fenv.h"

void mpe_ir_opts_init(mpe_ir_opts *o)
{
  if (!o)
    return;
  memset(o, 0, sizeof *o);
  o->solver = MPE_IR_LU_IR;
  o->factor = MPE_FP16;
  o->max_iter = 30;
  o->gmres_m = 50;
  o->gmres_tol = 1e-4;
}

/* The low-precision factorization used as solver / preconditioner:
   M^-1 v = S * LU^-1 (mu * R * v), R = S = I and mu = 1 without scaling. */
typedef struct {
  int n;
  float *lu;
  int *ipiv;
  double *rs, *cs;   /* row / column scaling (NULL without scaling) */
  double mu;
  float *w;          /* n floats of scratch */
} precond;

static void precond_apply(const precond *P, const double *v, double *z)
{
  int n = P->n;
  double t = 0.0;
  for (int i = 0; i < n; i++) {
    double a = fabs(P->rs ? P->mu * P->rs[i] * v[i] : v[i]);
    if (a > t)
      t = a;
  }
  if (t == 0.0 || !isfinite(t)) {
    for (int i = 0; i < n; i++)
      z[i] = t == 0.0 ? 0.0 : NAN;
    return;
  }
  /* a power-of-two scale keeps the binary32 right-hand side away from under/overflow */
  int e;
  frexp(t, &e);
  double sc = ldexp(1.0, e);
  for (int i = 0; i < n; i++)
    P->w[i] = (float)((P->rs ? P->mu * P->rs[i] * v[i] : v[i]) / sc);
  mpe_ir_lu_solve(P->lu, n, n, P->ipiv, P->w);
  for (int i = 0; i < n; i++)
    z[i] = (P->cs ? P->cs[i] : 1.0) * (double)P->w[i] * sc;
}

static double norm_inf(int n, const double *v)
{
  double m = 0.0;
  for (int i = 0; i < n; i++) {
    double a = fabs(v[i]);
    if (!(a <= m))
      m = a;   /* NaN propagates */
  }
  return m;
}

/* The binary64 kernels of the refinement, in a fixed order of operations (the
   library is built with -ffp-contract=off): the residuals, norms and GMRES
   steps, hence the iteration counts and errors, are the same bits for any
   OPENBLAS_NUM_THREADS / OMP_NUM_THREADS and on every machine; a BLAS's
   reduction order varies with its thread count and its kernels with the CPU. */

/* y = A x, column by column */
static void mat_vec(int n, const double *A, int lda, const double *x, double *y)
{
  memset(y, 0, (size_t)n * sizeof *y);
  for (int j = 0; j < n; j++) {
    const double *a = A + (size_t)j * lda, xj = x[j];
    for (int i = 0; i < n; i++)
      y[i] += a[i] * xj;
  }
}

static double norm_inf(int n, const double *v);

/* ||x||_2, scaled by the largest |x_i| so that it neither overflows nor underflows */
static double nrm2(int n, const double *x)
{
  double m = norm_inf(n, x);
  if (m == 0.0 || !isfinite(m))
    return m;
  double s[4] = { 0, 0, 0, 0 };
  for (int i = 0; i < n; i++) {
    double t = x[i] / m;
    s[i & 3] += t * t;
  }
  return m * sqrt((s[0] + s[1]) + (s[2] + s[3]));
}

static void axpy(int n, double a, const double *x, double *y)
{
  for (int i = 0; i < n; i++)
    y[i] += a * x[i];
}

/* r = b - A x, column by column */
static void residual(int n, const double *A, int lda, const double *b, const double *x, double *r)
{
  memcpy(r, b, (size_t)n * sizeof *r);
  for (int j = 0; j < n; j++) {
    const double *a = A + (size_t)j * lda, xj = x[j];
    for (int i = 0; i < n; i++)
      r[i] -= a[i] * xj;
  }
}

static double forward_error(int n, const double *x, const double *xtrue)
{
  if (!xtrue)
    return NAN;
  double d = 0.0, m = 0.0;
  for (int i = 0; i < n; i++) {
    double e = fabs(x[i] - xtrue[i]);
    if (!(e <= d))
      d = e;
    if (fabs(xtrue[i]) > m)
      m = fabs(xtrue[i]);
  }
  return m > 0 ? d / m : d;
}

typedef struct {
  int m;
  double *V, *Z, *H, *cs, *sn, *g, *y, *w;
} gmres_ws;

static int gmres_alloc(gmres_ws *g, int n, int m)
{
  /* one block, in order: V n×(m+1), Z n×m, H (m+1)×m (zeroed), cs, sn and y
     m each, g m+1, w n */
  const size_t N = (size_t)n, M = (size_t)m, nh = (M + 1) * M;
  g->m = m;
  g->V = malloc((N * (2 * M + 2) + nh + 4 * M + 1) * sizeof(double));
  if (!g->V)
    return MPE_ENOMEM;
  g->Z = g->V + N * (M + 1);
  g->H = g->Z + N * M;
  g->cs = g->H + nh;
  g->sn = g->cs + M;
  g->y = g->sn + M;
  g->g = g->y + M;
  g->w = g->g + M + 1;
  memset(g->H, 0, nh * sizeof(double));
  return MPE_OK;
}

static void gmres_free(gmres_ws *g)
{
  free(g->V);   /* the block of every array (gmres_alloc) */
}

/* Flexible GMRES (right preconditioning, modified Gram-Schmidt, Givens
   rotations) in binary64 for A d = r from d = 0; at most g->m steps, stopping
   when the residual estimate falls to tol * ||r||_2. Returns the steps taken. */
static int fgmres(gmres_ws *g, const precond *P, int n, const double *A, int lda,
                  const double *r, double tol, double *d)
{
  int m = g->m;
  double *H = g->H;   /* column-major (m+1) x m */
  double beta = nrm2(n, r);
  memset(d, 0, (size_t)n * sizeof *d);
  if (beta == 0.0 || !isfinite(beta))
    return 0;
  for (int i = 0; i < n; i++)
    g->V[i] = r[i] / beta;
  memset(g->g, 0, (size_t)(m + 1) * sizeof(double));
  g->g[0] = beta;
  int k = 0;
  for (int j = 0; j < m; j++) {
    double *vj = g->V + (size_t)j * n, *zj = g->Z + (size_t)j * n, *hj = H + (size_t)j * (m + 1);
    precond_apply(P, vj, zj);
    mat_vec(n, A, lda, zj, g->w);
    for (int i = 0; i <= j; i++) {
      double *vi = g->V + (size_t)i * n;
      hj[i] = mpas_dot_fixed(n, g->w, vi);
      axpy(n, -hj[i], vi, g->w);
    }
    double h = nrm2(n, g->w);
    hj[j + 1] = h;
    if (h > 0.0 && isfinite(h))
      for (int i = 0; i < n; i++)
        g->V[(size_t)(j + 1) * n + i] = g->w[i] / h;
    for (int i = 0; i < j; i++) {
      double a = hj[i], b = hj[i + 1];
      hj[i] = g->cs[i] * a + g->sn[i] * b;
      hj[i + 1] = -g->sn[i] * a + g->cs[i] * b;
    }
    double a = hj[j], b = hj[j + 1], rho = hypot(a, b);
    if (rho == 0.0 || !isfinite(rho))
      break;
    g->cs[j] = a / rho;
    g->sn[j] = b / rho;
    hj[j] = rho;
    hj[j + 1] = 0.0;
    g->g[j + 1] = -g->sn[j] * g->g[j];
    g->g[j] = g->cs[j] * g->g[j];
    k = j + 1;
    if (fabs(g->g[j + 1]) <= tol * beta || !(h > 0.0))
      break;
  }
  /* y = H(0:k,0:k)^-1 g(0:k), d = Z y */
  for (int i = k - 1; i >= 0; i--) {
    double s = g->g[i];
    for (int c = i + 1; c < k; c++)
      s -= H[(size_t)c * (m + 1) + i] * g->y[c];
    g->y[i] = s / H[(size_t)i * (m + 1) + i];
  }
  for (int c = 0; c < k; c++)
    axpy(n, g->y[c], g->Z + (size_t)c * n, d);
  return k;
}

/* One column a of A: l = (float)a, rowsum += |a|; returns max |a| (NaNs
   ignored: a NaN or inf shows in rowsum). gcc vectorizes it on request;
   clang will not take the floating-point max reduction without fast-math and
   warns when asked, so it is left to its own judgement. */
static double convert_column(int n, const double *restrict a, float *restrict l,
                             double *restrict rowsum)
{
  double m = 0.0;
#if defined(_OPENMP) && !defined(__clang__)
#pragma omp simd reduction(max: m)
#endif
  for (int i = 0; i < n; i++) {
    double v = fabs(a[i]);
    rowsum[i] += v;
    m = v > m ? v : m;
    l[i] = (float)a[i];
  }
  return m;
}

static int all_finite(int n, int cols, const double *A, int lda)
{
  for (int j = 0; j < cols; j++)
    for (int i = 0; i < n; i++)
      if (!isfinite(A[(size_t)j * lda + i]))
        return 0;
  return 1;
}

/* The argument rules of mpe_ir_solve (all but the finiteness of A). */
static int ir_check_args(int n, const double *A, int lda, const double *b, const double *x,
                         const mpe_ir_opts *opts)
{
  if (n < 1 || lda < n || !A || !b || !x)
    return MPE_EINVAL;
  if (opts->solver != MPE_IR_LU_IR && opts->solver != MPE_IR_GMRES_IR)
    return MPE_EINVAL;
  if (opts->factor != MPE_FP16 && opts->factor != MPE_BF16 && opts->factor != MPE_TF32 &&
      opts->factor != MPE_FP32)
    return MPE_EINVAL;
  if (opts->model) {
    mpe_tc_params tp;
    if (mpe_tc_model_params(opts->model, &tp) != MPE_OK || tp.in != opts->factor)
      return MPE_EINVAL;
  }
  if (opts->max_iter < 0 || opts->block < 0 || opts->history_cap < 0 ||
      (opts->history_cap > 0 && !opts->history))
    return MPE_EINVAL;
  if (opts->solver == MPE_IR_GMRES_IR && (opts->gmres_m < 1 || !(opts->gmres_tol > 0 && opts->gmres_tol < 1)))
    return MPE_EINVAL;
  return MPE_OK;
}

/* The argument rules of mpe_ir_solve, shared with mpe_gpu_ir_solve (ir_cusolver.c). */
int mpas_ir_check(int n, const double *A, int lda, const double *b, const double *x, const mpe_ir_opts *opts)
{
  int rc = ir_check_args(n, A, lda, b, x, opts);
  if (rc != MPE_OK)
    return rc;
  if (!all_finite(n, n, A, lda) || !all_finite(n, 1, b, n))
    return MPE_ERANGE;
  return MPE_OK;
}

/* The backward and forward errors of a solution x, as mpe_ir_solve reports them. */
int mpas_ir_errors(int n, const double *A, int lda, const double *b, const double *x, const double *xtrue,
                   double *backward, double *fwd)
{
  double *r = malloc((size_t)n * sizeof *r);
  if (!r)
    return MPE_ENOMEM;
  residual(n, A, lda, b, x, r);
  double anorm = LAPACKE_dlange(LAPACK_COL_MAJOR, 'I', n, n, A, lda);
  *backward = norm_inf(n, r) / (anorm * norm_inf(n, x) + norm_inf(n, b));
  *fwd = forward_error(n, x, xtrue);
  free(r);
  return MPE_OK;
}

#ifndef HAVE_CUDA
int mpe_gpu_ir_solve(int n, const double *A, int lda, const double *b, double *x,
                     const mpe_ir_opts *opts, mpe_ir_result *res)
{
  MPEI_FENV_GUARD();
  (void)n; (void)A; (void)lda; (void)b; (void)x; (void)opts; (void)res;
  return MPE_EUNSUP;   /* built without CUDA */
}
#endif

/* the former name (deprecated), kept for programs built against it */
int mpe_ir_solve_cusolver(int n, const double *A, int lda, const double *b, double *x,
                          const mpe_ir_opts *opts, mpe_ir_result *res)
{
  MPEI_FENV_GUARD();
  return mpe_gpu_ir_solve(n, A, lda, b, x, opts, res);
}

/* Two-sided scaling (Higham, Pranesh & Zounon): R = diag(1/max_j |a_ij|),
   S = diag(1/max_i |(RA)_ij|), the factor's copy mu R A S in P->lu; returns
   its max |a_ij| */
static double scale_two_sided(precond *P, int n, const double *A, int lda, double mu)
{
  for (int i = 0; i < n; i++) {
    double m = 0.0;
    for (int j = 0; j < n; j++)
      m = fmax(m, fabs(A[(size_t)j * lda + i]));
    P->rs[i] = m > 0 ? 1.0 / m : 1.0;
  }
  for (int j = 0; j < n; j++) {
    double m = 0.0;
    for (int i = 0; i < n; i++)
      m = fmax(m, fabs(P->rs[i] * A[(size_t)j * lda + i]));
    P->cs[j] = m > 0 ? 1.0 / m : 1.0;
  }
  P->mu = mu;
  double amax = 0.0;
  for (int j = 0; j < n; j++)
    for (int i = 0; i < n; i++) {
      double a = P->mu * P->rs[i] * A[(size_t)j * lda + i] * P->cs[j];
      amax = fmax(amax, fabs(a));
      P->lu[(size_t)j * n + i] = (float)a;
    }
  return amax;
}

/* the system being refined, with its norms */
typedef struct { int n; const double *A; int lda; const double *b; double anorm, bnorm; } ir_sys;

/* The refinement from x0 = the LU's solution: corrections until
   ||r|| <= sqrt(n) ||A|| ||x|| 2^-53 (*rn, *xn of the last iterate), each
   step noted in opts->history; 1 when it gives up (non-finite, max_iter) */
static int refine(const ir_sys *s, const precond *P, gmres_ws *gw, const mpe_ir_opts *opts, double *xk, double *r,
                  double *d, mpe_ir_result *R, double *rn, double *xn)
{
  const int n = s->n;
  const double stop = sqrt((double)n) * s->anorm * 0x1p-53;
  int inner = 0;
  precond_apply(P, s->b, xk);
  for (int it = 0;; it++) {
    residual(n, s->A, s->lda, s->b, xk, r);
    *rn = norm_inf(n, r);
    *xn = norm_inf(n, xk);
    if (R->nhistory < opts->history_cap) {
      mpe_ir_step *h = &opts->history[R->nhistory++];
      h->residual = *rn;
      h->backward_error = *rn / (s->anorm * *xn + s->bnorm);
      h->forward_error = forward_error(n, xk, opts->xtrue);
      h->inner = inner;
    }
    R->iterations = it;
    if (!isfinite(*rn) || !isfinite(*xn)) {
      R->niters = -(opts->max_iter + 1);
      return 1;
    }
    if (*rn <= stop * *xn) {
      R->niters = it;
      return 0;
    }
    if (it == opts->max_iter) {
      R->niters = -(opts->max_iter + 1);
      return 1;
    }
    if (opts->solver == MPE_IR_LU_IR) {
      precond_apply(P, r, d);
      inner = 0;
    } else {
      inner = fgmres(gw, P, n, s->A, s->lda, r, opts->gmres_tol, d);
      R->inner_iterations += inner;
    }
    for (int i = 0; i < n; i++)
      xk[i] += d[i];
  }
}

/* the binary64 LAPACK solve of the fallback into x (A copied) */
static int solve_binary64(int n, const double *A, int lda, const double *b, double *x)
{
  double *Ad = malloc((size_t)n * n * sizeof(double));
  lapack_int *ip = malloc((size_t)n * sizeof(lapack_int));
  int rc = MPE_ENOMEM;
  if (Ad && ip) {
    for (int j = 0; j < n; j++)
      memcpy(Ad + (size_t)j * n, A + (size_t)j * lda, (size_t)n * sizeof(double));
    memcpy(x, b, (size_t)n * sizeof(double));
    lapack_int info = LAPACKE_dgesv(LAPACK_COL_MAJOR, n, 1, Ad, n, ip, x, n);
    rc = info == 0 ? MPE_OK : info > 0 ? MPE_ERANGE : MPE_EINVAL;
  }
  free(Ad);
  free(ip);
  return rc;
}

int mpe_ir_solve(int n, const double *A, int lda, const double *b, double *x,
                 const mpe_ir_opts *opts, mpe_ir_result *res)
{
  MPEI_FENV_GUARD();
  mpe_ir_opts dflt;
  if (!opts) {
    mpe_ir_opts_init(&dflt);
    opts = &dflt;
  }
  /* the finiteness of A is checked in the pass that converts it (below) */
  int chk = ir_check_args(n, A, lda, b, x, opts);
  if (chk == MPE_OK && !all_finite(n, 1, b, n))
    chk = MPE_ERANGE;
  if (chk != MPE_OK)
    return chk;

  size_t nn = (size_t)n * n;
  precond P = { n, malloc(nn * sizeof(float)), malloc((size_t)n * sizeof(int)), NULL, NULL, 1.0,
                malloc((size_t)n * sizeof(float)) };
  double *xk = malloc((size_t)n * sizeof(double)), *r = malloc((size_t)n * sizeof(double)),
         *d = malloc((size_t)n * sizeof(double));
  gmres_ws gw = { 0 };
  int rc = MPE_ENOMEM;
  if (!P.lu || !P.ipiv || !P.w || !xk || !r || !d)
    goto out;
  if (opts->solver == MPE_IR_GMRES_IR) {
    int m = opts->gmres_m < n ? opts->gmres_m : n;
    if (gmres_alloc(&gw, n, m) != MPE_OK)
      goto out;
  }
  if (opts->scale) {
    P.rs = malloc((size_t)n * sizeof(double));
    P.cs = malloc((size_t)n * sizeof(double));
    if (!P.rs || !P.cs)
      goto out;
  }

  mpe_ir_result R = { 0 };
  R.forward_error = NAN;
  const double fmt_max = mpe_format_max(mpe_format_of(opts->factor));
  int give_up = 0;

  /* ---- one pass over A: its finiteness, ||A||_inf (the row sums of |a_ij| in
     d, column by column: LAPACK dlange's order, so the same bits) and, without
     scaling, the conversion to binary32 storage and max |a_ij| */
  double amax = 0.0;
  for (int i = 0; i < n; i++)
    d[i] = 0.0;
  for (int j = 0; j < n; j++) {
    double m = convert_column(n, A + (size_t)j * lda, P.lu + (size_t)j * n, d);
    amax = m > amax ? m : amax;
  }
  double an = 0.0;
  for (int i = 0; i < n; i++)
    an = d[i] > an ? d[i] : an;   /* a NaN row sum is skipped here but fails the test below */
  /* a NaN/inf in A makes its row sum NaN/inf; a row sum can also overflow
     from finite values alone, so then A itself decides */
  if (!(an <= DBL_MAX) || !all_finite(n, 1, d, n)) {
    if (!all_finite(n, n, A, lda)) {
      rc = MPE_ERANGE;
      goto out;
    }
  }
  const double anorm = an;
  const double bnorm = norm_inf(n, b);

  /* ---- two-sided scaling */
  if (opts->scale)
    amax = scale_two_sided(&P, n, A, lda, opts->factor == MPE_FP16 ? 0.1 * fmt_max : 1.0);
  if (amax > fmt_max || amax > FLT_MAX) {
    R.niters = MPE_IR_NITERS_OVERFLOW;
    give_up = 1;
  }

  /* ---- factorization */
  if (!give_up) {
    rc = mpe_ir_lu(P.lu, n, n, P.ipiv, opts->factor, opts->model, opts->block);
    if (rc == MPE_ERANGE) {
      R.niters = MPE_IR_NITERS_FACTOR;
      give_up = 1;
    } else if (rc != MPE_OK) {
      goto out;
    }
  }

  /* ---- refinement */
  double rn = 0.0, xn = 0.0;   /* ||r||, ||x|| of the converged iterate */
  if (!give_up) {
    const ir_sys sys = { n, A, lda, b, anorm, bnorm };
    give_up = refine(&sys, &P, &gw, opts, xk, r, d, &R, &rn, &xn);
  }

  /* ---- outcome */
  if (!give_up) {
    R.status = MPE_IR_CONVERGED;
  } else if (opts->no_fallback) {
    R.status = MPE_IR_DIVERGED;
    if (R.niters == MPE_IR_NITERS_OVERFLOW || R.niters == MPE_IR_NITERS_FACTOR)
      for (int i = 0; i < n; i++)
        xk[i] = NAN;   /* no iterate exists */
  } else {
    if ((rc = solve_binary64(n, A, lda, b, xk)) != MPE_OK)
      goto out;
    R.status = MPE_IR_FALLBACK;
  }
  if (R.status != MPE_IR_CONVERGED) {   /* converged: r is the residual of xk already */
    residual(n, A, lda, b, xk, r);
    rn = norm_inf(n, r);
    xn = norm_inf(n, xk);
  }
  R.backward_error = rn / (anorm * xn + bnorm);
  R.forward_error = forward_error(n, xk, opts->xtrue);
  memcpy(x, xk, (size_t)n * sizeof(double));
  if (res)
    *res = R;
  rc = R.status == MPE_IR_DIVERGED ? MPE_ECONVERGE : MPE_OK;
out:
  free(P.lu);
  free(P.ipiv);
  free(P.w);
  free(P.rs);
  free(P.cs);
  free(xk);
  free(r);
  free(d);
  if (opts->solver == MPE_IR_GMRES_IR)
    gmres_free(&gw);
  return rc;
}
