/* Mixed-precision CG with reliable updates (QUDA; Strzodka & Göddeke 2006).
   Sloppy vectors live in binary32 buffers holding exactly the values their
   storage format can represent, times a power-of-two scale per vector; the
   solution, the partial accumulator and the true residuals are binary64. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "mpei.h"
#include "mpemu/cg.h"
#include "mpemu/fixed.h"
#include "mpemu/format.h"

void mpe_cg_opts_init(mpe_cg_opts *o)
{
  if (!o)
    return;
  memset(o, 0, sizeof *o);
  o->sloppy = MPE_CG_FP32;
  o->delta = 0.1;
  o->tol = 1e-10;
  o->max_iter = 0;   /* 10 n */
  o->fx16_block = 64;
}

/* ------------------------------------------------------------ operators */

static int stencil_order(int dim, int m)
{
  if (dim < 1 || dim > 3 || m < 1)
    return -1;
  long long n = 1;
  for (int d = 0; d < dim; d++)
    if ((n *= m) > (1 << 30))
      return -1;
  return (int)n;
}

int mpe_cg_op_order(const mpe_cg_op *A)
{
  MPEI_FENV_GUARD();
  if (!A)
    return -1;
  if (A->csr) {
    const mpe_csr *c = A->csr;
    if (c->nrows != c->ncols || c->nrows < 1 || !c->rowptr || !c->col || !c->val)
      return -1;
    return c->nrows;
  }
  return stencil_order(A->dim, A->m);
}

static int csr_valid(const mpe_csr *c)
{
  if (c->rowptr[0] != 0)
    return 0;
  for (int i = 0; i < c->nrows; i++) {
    if (c->rowptr[i + 1] < c->rowptr[i])
      return 0;
    for (size_t p = c->rowptr[i]; p < c->rowptr[i + 1]; p++)
      if (c->col[p] < 0 || c->col[p] >= c->ncols)
        return 0;
  }
  return 1;
}

/* Grid neighbours and the diagonal of point i in ascending column order, as
   the CSR form lists them: out[k] = column, w[k] = weight. */
static int stencil_row(int dim, int m, int i, int *out, double *w)
{
  int c[3] = { 0, 0, 0 }, stride[3] = { 1, m, m * m }, k = 0, t = i;
  for (int d = 0; d < dim; d++) {
    c[d] = t % m;
    t /= m;
  }
  for (int d = dim - 1; d >= 0; d--)
    if (c[d] > 0) {
      out[k] = i - stride[d];
      w[k++] = -1.0;
    }
  out[k] = i;
  w[k++] = 2.0 * dim;
  for (int d = 0; d < dim; d++)
    if (c[d] < m - 1) {
      out[k] = i + stride[d];
      w[k++] = -1.0;
    }
  return k;
}

int mpe_cg_apply(const mpe_cg_op *A, const double *x, double *y)
{
  MPEI_FENV_GUARD();
  int n = mpe_cg_op_order(A);
  if (n < 0 || !x || !y || (A->csr && !csr_valid(A->csr)))
    return MPE_EINVAL;
  if (A->csr) {
    const mpe_csr *c = A->csr;
    for (int i = 0; i < n; i++) {
      double s = 0.0;
      for (size_t p = c->rowptr[i]; p < c->rowptr[i + 1]; p++)
        s += c->val[p] * x[c->col[p]];
      y[i] = s;
    }
  } else {
    for (int i = 0; i < n; i++) {
      int col[7];
      double w[7], s = 0.0;
      int k = stencil_row(A->dim, A->m, i, col, w);
      for (int q = 0; q < k; q++)
        s += w[q] * x[col[q]];
      y[i] = s;
    }
  }
  return MPE_OK;
}

/* y = A x in binary32: each term one fmaf, in ascending column order. */
static void apply_sloppy(const mpe_cg_op *A, const float *valf, const float *x, float *y, int n)
{
  if (A->csr) {
    const mpe_csr *c = A->csr;
    for (int i = 0; i < n; i++) {
      float s = 0.0f;
      for (size_t p = c->rowptr[i]; p < c->rowptr[i + 1]; p++)
        s = fmaf(valf[p], x[c->col[p]], s);
      y[i] = s;
    }
  } else {
    for (int i = 0; i < n; i++) {
      int col[7];
      double w[7];
      float s = 0.0f;
      int k = stencil_row(A->dim, A->m, i, col, w);
      for (int q = 0; q < k; q++)
        s = fmaf((float)w[q], x[col[q]], s);
      y[i] = s;
    }
  }
}

/* ------------------------------------------------------------ sloppy storage */

typedef struct {
  mpe_cg_storage kind;
  const mpe_format *fmt;
  size_t block;
  int16_t *q;      /* fixed16 scratch */
  float *bscale;
} store_ctx;

/* v := what storage holds for v (in place). Returns 0, or MPE_ERANGE for NaN/inf. */
static int store(store_ctx *st, float *v, size_t n)
{
  switch (st->kind) {
  case MPE_CG_FP16:
  case MPE_CG_BF16:
    mpe_round_f32(v, v, n, st->fmt, NULL);
    break;
  case MPE_CG_FX16:
    {
      int rc = mpe_fx16_encode(st->q, st->bscale, v, n, st->block, MPE_RNE);
      if (rc)
        return rc;
      mpe_fx16_decode(v, st->q, st->bscale, n, st->block);
    }
    break;
  default:
    break;
  }
  for (size_t i = 0; i < n; i++)
    if (!isfinite(v[i]))
      return MPE_ERANGE;
  return MPE_OK;
}

/* The power of two just above m >= 0 (1 for 0, inf and NaN). */
static double pow2_above(double m)
{
  if (m == 0.0 || !isfinite(m))
    return 1.0;
  int e;
  frexp(m, &e);
  return ldexp(1.0, e);
}

/* The power of two just above max |v| (1 for a zero vector). */
static double pow2_scale_d(const double *v, int n)
{
  double m = 0.0;
  for (int i = 0; i < n; i++)
    m = fmax(m, fabs(v[i]));
  return pow2_above(m);
}

static double pow2_scale_f(const float *v, int n)
{
  float m = 0.0f;
  for (int i = 0; i < n; i++)
    m = fmaxf(m, fabsf(v[i]));
  return pow2_above(m);
}

static double dot_ff(const float *a, const float *b, int n)
{
  double s = 0.0;
  for (int i = 0; i < n; i++)
    s += (double)a[i] * b[i];
  return s;
}

static double norm2_d(const double *v, int n)
{
  double s = 0.0;
  for (int i = 0; i < n; i++)
    s += v[i] * v[i];
  return sqrt(s);
}

/* r = b - A x, returns ||r||_2 */
static double true_residual(const mpe_cg_op *A, const double *b, const double *x, double *r, int n)
{
  mpe_cg_apply(A, x, r);
  for (int i = 0; i < n; i++)
    r[i] = b[i] - r[i];
  return norm2_d(r, n);
}

/* ------------------------------------------------------------ binary64 reference */

static int cg_fp64(const mpe_cg_op *A, const double *b, double *x, int n, double bnorm,
                   const mpe_cg_opts *o, int maxit, mpe_cg_result *R)
{
  double *r = malloc((size_t)n * sizeof *r), *p = malloc((size_t)n * sizeof *p),
         *q = malloc((size_t)n * sizeof *q);
  if (!r || !p || !q) {
    free(r);
    free(p);
    free(q);
    return MPE_ENOMEM;
  }
  double rn = true_residual(A, b, x, r, n), rr = rn * rn;
  memcpy(p, r, (size_t)n * sizeof *p);
  R->status = MPE_CG_MAXITER;
  if (rn <= o->tol * bnorm)
    R->status = MPE_CG_CONVERGED;
  while (R->status == MPE_CG_MAXITER && R->iterations < maxit) {
    mpe_cg_apply(A, p, q);
    double pq = 0.0;
    for (int i = 0; i < n; i++)
      pq += p[i] * q[i];
    if (!(pq > 0.0) || !isfinite(pq)) {
      R->status = MPE_CG_BREAKDOWN;
      break;
    }
    double alpha = rr / pq, rr_new = 0.0;
    for (int i = 0; i < n; i++) {
      x[i] += alpha * p[i];
      r[i] -= alpha * q[i];
      rr_new += r[i] * r[i];
    }
    R->iterations++;
    if (R->nhistory < o->history_cap)
      o->history[R->nhistory++] = sqrt(rr_new) / bnorm;
    if (sqrt(rr_new) <= o->tol * bnorm) {
      /* confirm on the true residual */
      rn = true_residual(A, b, x, r, n);
      R->reliable_updates++;
      rr_new = rn * rn;
      if (rn <= o->tol * bnorm) {
        R->status = MPE_CG_CONVERGED;
        break;
      }
    }
    double beta = rr_new / rr;
    rr = rr_new;
    for (int i = 0; i < n; i++)
      p[i] = r[i] + beta * p[i];
  }
  free(r);
  free(p);
  free(q);
  return MPE_OK;
}

/* ------------------------------------------------------------ reliable-update CG */

/* the CG of the sloppy formats: r and p stored in binary32 (rounded to the
   sloppy format) with a shared power-of-two scale, x accumulated in binary64,
   reliable updates recompute r from x in binary64 */
static int cg_sloppy(const mpe_cg_op *A, const double *b, double *x, int n, double bnorm, const mpe_cg_opts *opts,
                     int maxit, mpe_cg_result *R)
{
  store_ctx st = { opts->sloppy, NULL, (size_t)opts->fx16_block, NULL, NULL };
  if (opts->sloppy == MPE_CG_FP16)
    st.fmt = mpe_format_of(MPE_FP16);
  else if (opts->sloppy == MPE_CG_BF16)
    st.fmt = mpe_format_of(MPE_BF16);
  size_t nn = (size_t)n;
  double *r = malloc(nn * sizeof *r), *p = malloc(nn * sizeof *p), *xacc = calloc(nn, sizeof *xacc);
  float *Rv = malloc(nn * sizeof *Rv), *Ro = malloc(nn * sizeof *Ro), *Pv = malloc(nn * sizeof *Pv),
        *Qv = malloc(nn * sizeof *Qv), *valf = NULL;
  if (opts->sloppy == MPE_CG_FX16) {
    st.q = malloc(nn * sizeof *st.q);
    st.bscale = malloc((nn / st.block + 1) * sizeof *st.bscale);
  }
  if (A->csr)
    valf = malloc((A->csr->nnz ? A->csr->nnz : 1) * sizeof *valf);
  int rc = MPE_ENOMEM;
  if (!r || !p || !xacc || !Rv || !Ro || !Pv || !Qv || (A->csr && !valf) ||
      (opts->sloppy == MPE_CG_FX16 && (!st.q || !st.bscale)))
    goto out;
  if (A->csr)
    for (size_t k = 0; k < A->csr->nnz; k++)
      valf[k] = (float)A->csr->val[k];

  rc = MPE_OK;
  R->status = MPE_CG_MAXITER;
  double rn = true_residual(A, b, x, r, n);
  if (rn <= opts->tol * bnorm) {
    R->status = MPE_CG_CONVERGED;
    goto out;
  }
  /* sloppy r and p share the scale s between reliable updates */
  double s = pow2_scale_d(r, n);
  for (int i = 0; i < n; i++)
    Rv[i] = (float)(r[i] / s);
  if (store(&st, Rv, nn)) {
    R->status = MPE_CG_BREAKDOWN;
    goto out;
  }
  memcpy(Pv, Rv, nn * sizeof *Pv);
  double rr = s * s * dot_ff(Rv, Rv, n), maxr = rn;
  while (R->iterations < maxit) {
    apply_sloppy(A, valf, Pv, Qv, n);
    double sq = pow2_scale_f(Qv, n);
    for (int i = 0; i < n; i++)
      Qv[i] = (float)(Qv[i] / sq);
    double pap = s * s * sq * dot_ff(Pv, Qv, n);
    R->iterations++;
    if (store(&st, Qv, nn) || !(pap > 0.0) || !isfinite(pap)) {
      R->status = MPE_CG_BREAKDOWN;
      break;
    }
    double alpha = rr / pap;
    for (int i = 0; i < n; i++)
      xacc[i] += alpha * s * (double)Pv[i];
    float a = (float)(alpha * sq);
    float *t = Ro;
    Ro = Rv;
    Rv = t;
    for (int i = 0; i < n; i++)
      Rv[i] = fmaf(-a, Qv[i], Ro[i]);
    if (store(&st, Rv, nn)) {
      R->status = MPE_CG_BREAKDOWN;
      break;
    }
    double rr_old = rr;
    rr = s * s * dot_ff(Rv, Rv, n);
    double rnorm = sqrt(rr);
    if (R->nhistory < opts->history_cap)
      opts->history[R->nhistory++] = rnorm / bnorm;
    if (rnorm > maxr)
      maxr = rnorm;
    if (rnorm >= opts->delta * maxr && rnorm > opts->tol * bnorm) {
      /* Polak-Ribière beta; r and p share the scale s so it cancels */
      double sig = 0.0, oo = 0.0;
      for (int i = 0; i < n; i++) {
        sig += (double)Rv[i] * ((double)Rv[i] - (double)Ro[i]);
        oo += (double)Ro[i] * Ro[i];
      }
      float beta = (float)(sig / oo);
      for (int i = 0; i < n; i++)
        Pv[i] = fmaf(beta, Pv[i], Rv[i]);
      if (store(&st, Pv, nn)) {
        R->status = MPE_CG_BREAKDOWN;
        break;
      }
      continue;
    }
    /* reliable update: fold the accumulator, recompute r in binary64,
       re-project p against the new r, store both with a fresh scale */
    for (int i = 0; i < n; i++) {
      x[i] += xacc[i];
      xacc[i] = 0.0;
    }
    rn = true_residual(A, b, x, r, n);
    R->reliable_updates++;
    if (rn <= opts->tol * bnorm) {
      R->status = MPE_CG_CONVERGED;
      break;
    }
    rr = rn * rn;
    double rp = 0.0;
    for (int i = 0; i < n; i++) {
      p[i] = s * (double)Pv[i];
      rp += r[i] * p[i];
    }
    rp /= rr;
    double beta = rr / rr_old;
    for (int i = 0; i < n; i++)
      p[i] = r[i] + beta * (p[i] - rp * r[i]);
    s = pow2_scale_d(r, n);
    for (int i = 0; i < n; i++) {
      Rv[i] = (float)(r[i] / s);
      Pv[i] = (float)(p[i] / s);
    }
    if (store(&st, Rv, nn) || store(&st, Pv, nn)) {
      R->status = MPE_CG_BREAKDOWN;
      break;
    }
    rr = s * s * dot_ff(Rv, Rv, n);
    maxr = rn;
  }
  for (int i = 0; i < n; i++)
    x[i] += xacc[i];
out:
  free(r);
  free(p);
  free(xacc);
  free(Rv);
  free(Ro);
  free(Pv);
  free(Qv);
  free(valf);
  free(st.q);
  free(st.bscale);
  return rc;
}

int mpe_cg_solve(const mpe_cg_op *A, const double *b, double *x, const mpe_cg_opts *opts,
                 mpe_cg_result *res)
{
  MPEI_FENV_GUARD();
  mpe_cg_opts dflt;
  if (!opts) {
    mpe_cg_opts_init(&dflt);
    opts = &dflt;
  }
  int n = mpe_cg_op_order(A);
  if (n < 0 || !b || !x || (A->csr && !csr_valid(A->csr)))
    return MPE_EINVAL;
  if ((int)opts->sloppy < MPE_CG_FP64 || opts->sloppy > MPE_CG_FX16 || !(opts->delta > 0.0) ||
      !(opts->delta < 1.0) || !(opts->tol > 0.0) || opts->max_iter < 0 ||
      (opts->sloppy == MPE_CG_FX16 && opts->fx16_block < 1) || opts->history_cap < 0 ||
      (opts->history_cap > 0 && !opts->history))
    return MPE_EINVAL;
  for (int i = 0; i < n; i++)
    if (!isfinite(b[i]) || !isfinite(x[i]))
      return MPE_ERANGE;
  const int maxit = opts->max_iter ? opts->max_iter : (n > (1 << 27) ? 1 << 30 : 10 * n);
  double bnorm = norm2_d(b, n);
  mpe_cg_result R = { 0 };
  if (bnorm == 0.0) {
    memset(x, 0, (size_t)n * sizeof *x);
    R.status = MPE_CG_CONVERGED;
    if (res)
      *res = R;
    return MPE_OK;
  }
  int rc = opts->sloppy == MPE_CG_FP64 ? cg_fp64(A, b, x, n, bnorm, opts, maxit, &R)
                                       : cg_sloppy(A, b, x, n, bnorm, opts, maxit, &R);
  if (rc)
    return rc;
  {
    double *t = malloc((size_t)n * sizeof *t);
    if (!t)
      return MPE_ENOMEM;
    R.true_residual = true_residual(A, b, x, t, n) / bnorm;
    free(t);
  }
  if (res)
    *res = R;
  return R.status == MPE_CG_CONVERGED ? MPE_OK : MPE_ECONVERGE;
}
