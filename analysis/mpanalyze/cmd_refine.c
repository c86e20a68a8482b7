/* mpanalyze refine / cg: the refinement experiments from the command line. */
#include "config.h"
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <jansson.h>
#ifdef HAVE_PLPLOT
#include <plplot.h>
#endif
#include <mpemu.h>
#include "mpanalyze.h"

int mpa_cmd_refine(int argc, char **argv);
int mpa_cmd_cg(int argc, char **argv);

/* "mpanalyze: CMD: WHAT: WHY" (mpa_error); returns MPA_EXIT_INPUT */
static int fail(const char *cmd, const char *what, const char *why)
{
  return what ? mpa_error(cmd, "%s: %s", what, why) : mpa_error(cmd, "%s", why);
}

/* a library call's error: out of memory is exit 1, the rest bad input (2) */
static int fail_rc(const char *cmd, const char *what, int rc)
{
  int st = fail(cmd, rc == MPE_ENOMEM ? NULL : what, mpe_strerror(rc));
  return rc == MPE_ENOMEM ? MPA_EXIT_FAIL : st;
}

static int oom(const char *cmd)
{
  fail(cmd, NULL, "out of memory");
  return MPA_EXIT_FAIL;
}

static int laplace_dim(const char *name)
{
  if (!strcmp(name, "laplace1d")) return 1;
  if (!strcmp(name, "laplace2d")) return 2;
  if (!strcmp(name, "laplace3d")) return 3;
  return 0;
}

static int is_mtx(const char *name)
{
  size_t l = strlen(name);
  return l > 4 && !strcmp(name + l - 4, ".mtx");
}

static uint64_t splitmix(uint64_t *s)
{
  uint64_t z = (*s += 0x9e3779b97f4a7c15ULL);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

static double urand(uint64_t *s) { return (double)(splitmix(s) >> 11) * 0x1p-52 - 1.0; }


/* ------------------------------------------------------------ refine */

typedef struct {
  const char *matrix;
  int n, mode, scale, no_fallback, json, quiet, block, max_iter, gmres_m;
  double cond;
  uint64_t seed;
  const char *factor, *solver, *model, *plot, *sweep;
  int cusolver;   /* --cusolver: the same solve through cuSOLVER IRS (mpe_gpu_ir_solve) */
  double k0, k1;  /* --cond-sweep K0:K1:STEPS */
  int steps;
} refine_args;

/* --cond-sweep A:B:STEPS, 1 <= A <= B, 1 <= STEPS <= 200 */
static int take_sweep(const char *arg, void *field)
{
  refine_args *a = field;
  char buf[128], *e;
  if (snprintf(buf, sizeof buf, "%s", arg) >= (int)sizeof buf)
    return -1;
  char *c1 = strchr(buf, ':'), *c2 = c1 ? strchr(c1 + 1, ':') : NULL;
  if (!c1 || !c2)
    return -1;
  *c1 = *c2 = '\0';
  long steps;
  a->k0 = strtod(buf, &e);
  if (e == buf || *e || !isfinite(a->k0))
    return -1;
  a->k1 = strtod(c1 + 1, &e);
  if (e == c1 + 1 || *e || !isfinite(a->k1) || mpa_parse_int(c2 + 1, 1, 200, &steps) || a->k0 < 1 || a->k1 < a->k0)
    return -1;
  a->steps = (int)steps;
  a->sweep = arg;
  return 0;
}

#define MAX_DENSE 20000

/* what a dense solve of order n holds at once: A in binary64, its binary32
   LU, and the binary64 copy a fallback factorises */
static uint64_t dense_bytes(int n)
{
  return (uint64_t)n * (uint64_t)n * 20 + (uint64_t)n * 64;
}

static int mtx_too_empty(const char *cmd, const char *path, int rows, int cols, size_t entries)
{
  char why[200];
  snprintf(why, sizeof why, "declares %d x %d but stores %zu entr%s: more than %d empty rows or columns "
           "(mpe_mtx_read(3)); refused before allocating", rows, cols, entries, entries == 1 ? "y" : "ies",
           MPE_MTX_MAX_EMPTY);
  return fail(cmd, path, why);
}

/* a row or column without an entry makes the matrix singular whatever its
   values: say so before building a dense matrix and factorising it */
static int structurally_singular(const char *cmd, const char *path, const mpe_csr *S)
{
  char *seen = calloc((size_t)S->ncols + 1, 1);
  if (!seen)
    return oom(cmd);
  char why[128] = "";
  for (int i = 0; i < S->nrows && !why[0]; i++)
    if (S->rowptr[i] == S->rowptr[i + 1])
      snprintf(why, sizeof why, "structurally singular: row %d has no entry", i + 1);
  for (size_t k = 0; k < S->nnz; k++)
    seen[S->col[k]] = 1;
  for (int j = 0; j < S->ncols && !why[0]; j++)
    if (!seen[j])
      snprintf(why, sizeof why, "structurally singular: column %d has no entry", j + 1);
  free(seen);
  if (!why[0])
    return 0;
  fail(cmd, path, why);
  return MPA_EXIT_NUMERIC;
}

/* Build the dense test matrix; *order is its order. Returns 0 or an exit status. */
static int build_matrix(const refine_args *a, double **Aout, int *order, double cond)
{
  int dim = laplace_dim(a->matrix), n = a->n;
  mpe_csr *S = NULL;
  if (is_mtx(a->matrix)) {
    /* the size line first: a file cannot make us read, let alone densify,
       what no dense solve here would take */
    int rows = 0, cols = 0;
    size_t entries = 0;
    int rc = mpe_mtx_size(a->matrix, &rows, &cols, &entries);
    if (rc == MPE_EUNSUP && rows > 0)
      return mtx_too_empty("refine", a->matrix, rows, cols, entries);
    if (rc)
      return rc == MPE_EFORMAT ? fail("refine", a->matrix, "malformed Matrix Market file")
                               : fail_rc("refine", a->matrix, rc);
    if (rows != cols)
      return fail("refine", a->matrix, "matrix is not square");
    if (rows > MAX_DENSE)
      return fail("refine", a->matrix, "too large for a dense solve (order > 20000)");
    if (mpa_budget(a->matrix, "the dense solve", dense_bytes(rows)))
      return MPA_EXIT_INPUT;
    rc = mpe_mtx_read(&S, a->matrix);
    if (rc)
      return rc == MPE_EFORMAT ? fail("refine", a->matrix, "malformed Matrix Market file")
                               : fail_rc("refine", a->matrix, rc);
    if ((rc = structurally_singular("refine", a->matrix, S)) != 0) {
      mpe_csr_free(S);
      return rc;
    }
    n = S->nrows;
  } else if (dim) {
    long long o = 1;
    for (int d = 0; d < dim; d++)
      o *= n;
    if (o > MAX_DENSE)
      return fail("refine", a->matrix, "grid too large for a dense solve (order > 20000)");
    n = (int)o;
  } else if (n > MAX_DENSE) {
    return fail("refine", a->matrix, "--n over 20000, the largest order of a dense solve");
  }
  if (!S && mpa_budget(a->matrix, "the dense solve", dense_bytes(n)))
    return MPA_EXIT_INPUT;
  double *A = malloc((size_t)n * n * sizeof *A);
  if (!A) {
    mpe_csr_free(S);
    return oom("refine");
  }
  int rc;
  if (S)
    rc = mpe_csr_to_dense(A, n, S);
  else if (dim)
    rc = mpe_mat_laplace(A, dim, a->n, n);
  else if (!strcmp(a->matrix, "hilbert"))
    rc = mpe_mat_hilbert(A, n, n);
  else if (!strcmp(a->matrix, "dominant"))
    rc = mpe_mat_dominant(A, n, n, a->seed);
  else if (!strcmp(a->matrix, "randsvd"))
    rc = mpe_mat_randsvd(A, n, n, cond, a->mode, a->seed);
  else
    rc = -1;
  mpe_csr_free(S);
  if (rc) {
    free(A);
    return fail("refine", a->matrix, rc < 0 ? "unknown matrix (hilbert, laplace1d|2d|3d, randsvd, dominant or FILE.mtx)"
                                            : mpe_strerror(rc));
  }
  *Aout = A;
  *order = n;
  return 0;
}

static const char *status_name(mpe_ir_status s)
{
  return s == MPE_IR_CONVERGED ? "converged" : s == MPE_IR_FALLBACK ? "fallback" : "diverged";
}

static int lookup_factor(const char *s, mpe_type *t)
{
  if (!strcmp(s, "fp16")) *t = MPE_FP16;
  else if (!strcmp(s, "bf16")) *t = MPE_BF16;
  else if (!strcmp(s, "tf32")) *t = MPE_TF32;
  else if (!strcmp(s, "fp32")) *t = MPE_FP32;
  else return 0;
  return 1;
}

static int lookup_solver(const char *s, mpe_ir_solver *v)
{
  if (!strcmp(s, "lu-ir")) *v = MPE_IR_LU_IR;
  else if (!strcmp(s, "gmres-ir")) *v = MPE_IR_GMRES_IR;
  else return 0;
  return 1;
}

/* Options for one variant; returns 0 or an exit status. */
static int variant_opts(const refine_args *a, const char *factor, const char *solver, mpe_ir_opts *o)
{
  mpe_ir_opts_init(o);
  if (!lookup_factor(factor, &o->factor))
    return fail("refine", factor, "unknown --factor (fp16, bf16, tf32, fp32)");
  if (!lookup_solver(solver, &o->solver))
    return fail("refine", solver, "unknown --solver (lu-ir, gmres-ir)");
  if (a->model && strcmp(a->model, "none") != 0 && o->factor != MPE_FP32) {
    o->model = mpe_tc_model_get(a->model, o->factor);
    if (!o->model) {
      /* name the models that have this instruction */
      char why[1024];
      size_t w = (size_t)snprintf(why, sizeof why, "unknown tensor-core model for --factor %s (valid: none", factor);
      const char *nm;
      for (int k = 0; (nm = mpe_tc_model_name_at(k)) != NULL && w < sizeof why; k++)
        if (mpe_tc_model_get(nm, o->factor))
          w += (size_t)snprintf(why + w, sizeof why - w, ", %s", nm);
      if (w < sizeof why)
        snprintf(why + w, sizeof why - w, ")");
      return fail("refine", a->model, why);
    }
  }
  o->scale = a->scale;
  o->no_fallback = a->no_fallback;
  o->block = a->block;
  if (a->max_iter >= 0)
    o->max_iter = a->max_iter;
  if (a->gmres_m > 0)
    o->gmres_m = a->gmres_m;
  return 0;
}

static void make_rhs(int n, const double *A, uint64_t seed, double *xt, double *b)
{
  uint64_t s = seed ^ 0x5eedULL;
  for (int i = 0; i < n; i++)
    xt[i] = urand(&s);
  for (int i = 0; i < n; i++)
    b[i] = 0.0;
  for (int j = 0; j < n; j++)
    for (int i = 0; i < n; i++)
      b[i] += A[(size_t)j * n + i] * xt[j];
}

static int refine_one(const refine_args *a)
{
  double *A = NULL;
  int n = 0, rc = build_matrix(a, &A, &n, a->cond);
  if (rc)
    return rc;
  mpe_ir_opts o;
  if ((rc = variant_opts(a, a->factor, a->solver, &o)) != 0) {
    free(A);
    return rc;
  }
  double *b = malloc((size_t)n * sizeof *b), *x = malloc((size_t)n * sizeof *x), *xt = malloc((size_t)n * sizeof *xt);
  mpe_ir_step *h = calloc((size_t)o.max_iter + 2, sizeof *h);
  if (!b || !x || !xt || !h) {
    free(A); free(b); free(x); free(xt); free(h);
    return oom("refine");
  }
  make_rhs(n, A, a->seed, xt, b);
  o.xtrue = xt;
  mpe_ir_result r;
  int status = 0;
  if (a->cusolver) {
    /* cuSOLVER runs its own LU: no emulated model, no scaling, no history */
    if (o.model || o.scale) {
      status = fail("refine", "--cusolver", "cuSOLVER IRS takes neither --model nor --scale");
      goto out;
    }
    rc = mpe_gpu_ir_solve(n, A, n, b, x, &o, &r);
  } else {
    o.history = h;
    o.history_cap = o.max_iter + 2;
    rc = mpe_ir_solve(n, A, n, b, x, &o, &r);
  }
  if (rc == MPE_ERANGE) {   /* A and b are finite: dgesv of the fallback met an exact zero pivot */
    fail("refine", a->matrix, "singular matrix: the low-precision LU and the binary64 fallback (dgesv) both "
                              "met a zero pivot; no solution");
    status = MPA_EXIT_NUMERIC;
    goto out;
  }
  if (rc && rc != MPE_ECONVERGE) {
    status = fail_rc("refine", a->cusolver ? "--cusolver" : a->matrix, rc);
    goto out;
  }
  const char *model = a->cusolver ? "cusolver" : o.model ? mpe_tc_model_name(o.model) : "none";
  /* the plot before the report: a plot that cannot be written leaves nothing on stdout */
  if (a->plot) {
#ifdef HAVE_PLPLOT
    PLFLT xs[64], ys[64];
    int k = r.nhistory < 64 ? r.nhistory : 64;
    double lo = -17;
    for (int i = 0; i < k; i++) {
      xs[i] = i;
      ys[i] = log10(fmax(h[i].backward_error, 1e-20));
      lo = fmin(lo, ys[i]);
    }
    if (mpa_plot_open(a->plot)) {
      status = MPA_EXIT_INPUT;
      goto out;
    }
    plcol0(MPA_PLOT_INK);
    plenv(0, k > 1 ? k - 1 : 1, floor(lo), 0, 0, 20);
    pllab("iteration", "normwise backward error", "iterative refinement");
    plcol0(MPA_PLOT_CURVE(0));
    plline(k, xs, ys);
    plpoin(k, xs, ys, 17);
    if ((status = mpa_plot_end(a->plot)) != 0)
      goto out;
#endif   /* without PLplot --plot is refused with the options */
  }
  if (a->json) {
    json_t *j = json_object(), *hist = json_array();
    json_object_set_new(j, "matrix", json_string(a->matrix));
    json_object_set_new(j, "n", json_integer(n));
    if (!strcmp(a->matrix, "randsvd")) {
      json_object_set_new(j, "cond", json_real(a->cond));
      json_object_set_new(j, "mode", json_integer(a->mode));
    }
    json_object_set_new(j, "factor", json_string(a->factor));
    json_object_set_new(j, "model", json_string(model));
    json_object_set_new(j, "backend", json_string(a->cusolver ? "cusolver" : "cpu"));
    json_object_set_new(j, "solver", json_string(a->solver));
    json_object_set_new(j, "scale", json_boolean(a->scale));
    json_object_set_new(j, "status", json_string(status_name(r.status)));
    json_object_set_new(j, "niters", json_integer(r.niters));
    json_object_set_new(j, "stop_reason", json_string(r.niters >= 0 ? "converged"
                                                      : r.niters == MPE_IR_NITERS_OVERFLOW ? "conversion_overflow"
                                                      : r.niters == MPE_IR_NITERS_FACTOR ? "factorization_failed"
                                                      : "iteration_limit"));
    json_object_set_new(j, "iterations", json_integer(r.iterations));
    json_object_set_new(j, "inner_iterations", json_integer(r.inner_iterations));
    json_object_set_new(j, "backward_error", mpa_json_num(r.backward_error));
    json_object_set_new(j, "forward_error", mpa_json_num(r.forward_error));
    for (int i = 0; i < r.nhistory; i++) {
      json_t *e = json_object();
      json_object_set_new(e, "iteration", json_integer(i));
      json_object_set_new(e, "backward_error", mpa_json_num(h[i].backward_error));
      json_object_set_new(e, "forward_error", mpa_json_num(h[i].forward_error));
      json_object_set_new(e, "residual", mpa_json_num(h[i].residual));
      json_object_set_new(e, "inner", json_integer(h[i].inner));
      json_array_append_new(hist, e);
    }
    json_object_set_new(j, "history", hist);
    int jrc = mpa_json_print(j);
    json_decref(j);
    if (jrc) {
      status = jrc;
      goto out;
    }
  } else if (!a->quiet) {
    printf("%s n=%d, %s LU (model %s%s), %s: %s after %d correction%s", a->matrix, n, a->factor, model,
           a->scale ? ", scaled" : "", a->solver, status_name(r.status), r.iterations, r.iterations == 1 ? "" : "s");
    if (r.inner_iterations)
      printf(" (%d GMRES steps)", r.inner_iterations);
    if (r.niters < 0)   /* cuSOLVER's negative codes say why; in words here */
      printf(" (%s%s)", r.status == MPE_IR_FALLBACK ? "binary64 solve instead: " : "",
             r.niters == MPE_IR_NITERS_OVERFLOW ? "converting A to the factor format overflowed"
             : r.niters == MPE_IR_NITERS_FACTOR ? "the low-precision LU met a zero pivot or NaN/inf"
             : "no convergence within the iteration limit");
    printf("\n  backward error %.3e, forward error %.3e\n", r.backward_error, r.forward_error);
    printf("  %4s %12s %12s %6s\n", "iter", "backward", "forward", "inner");
    for (int i = 0; i < r.nhistory; i++)
      printf("  %4d %12.3e %12.3e %6d\n", i, h[i].backward_error, h[i].forward_error, h[i].inner);
  }
  if (r.status == MPE_IR_DIVERGED) {
    mpa_error("refine", "%s: no solution: %s (--no-fallback)", a->matrix,
            r.niters == MPE_IR_NITERS_OVERFLOW ? "converting A to the factor format overflowed"
            : r.niters == MPE_IR_NITERS_FACTOR ? "the low-precision LU met a zero pivot or NaN/inf"
            : "no convergence within the iteration limit");
    status = MPA_EXIT_NUMERIC;
  } else {
    status = 0;
  }
out:
  free(A); free(b); free(x); free(xt); free(h);
  return status;
}

static int split_list(char *s, char **items, int max)
{
  int k = 0;
  for (char *t = strtok(s, ","); t && k < max; t = strtok(NULL, ","))
    items[k++] = t;
  return k;
}

/* the results of a --cond-sweep: point k, variant v = f * ns + s */
typedef struct {
  int n, steps, nf, ns, nv;
  char **factors, **solvers;
  const mpe_ir_opts *opts;
  const double *kap;
  const int *it, *st;
} sweep_res;

static int sweep_json(const refine_args *a, const sweep_res *w)
{
  json_t *j = json_object(), *ks = json_array(), *vs = json_array();
  json_object_set_new(j, "matrix", json_string("randsvd"));
  json_object_set_new(j, "mode", json_integer(a->mode));
  json_object_set_new(j, "n", json_integer(w->n));
  for (int k = 0; k < w->steps; k++)
    json_array_append_new(ks, json_real(w->kap[k]));
  json_object_set_new(j, "kappa", ks);
  for (int v = 0; v < w->nv; v++) {
    json_t *e = json_object(), *its = json_array(), *sts = json_array();
    json_object_set_new(e, "factor", json_string(w->factors[v / w->ns]));
    json_object_set_new(e, "solver", json_string(w->solvers[v % w->ns]));
    json_object_set_new(e, "model", json_string(w->opts[v].model ? mpe_tc_model_name(w->opts[v].model) : "none"));
    for (int k = 0; k < w->steps; k++) {
      json_array_append_new(its, json_integer(w->it[k * w->nv + v]));
      json_array_append_new(sts, json_string(status_name((mpe_ir_status)w->st[k * w->nv + v])));
    }
    json_object_set_new(e, "iterations", its);
    json_object_set_new(e, "status", sts);
    json_array_append_new(vs, e);
  }
  json_object_set_new(j, "variants", vs);
  int jrc = mpa_json_print(j);
  json_decref(j);
  return jrc;
}

static void sweep_text(const refine_args *a, const sweep_res *w)
{
  printf("randsvd mode %d, n=%d: corrections to converge (F: fell back, D: diverged)\n%10s", a->mode, w->n, "kappa");
  for (int v = 0; v < w->nv; v++) {
    char h[32];
    snprintf(h, sizeof h, "%s/%s", w->factors[v / w->ns], w->solvers[v % w->ns]);
    printf(" %14s", h);
  }
  printf("\n");
  for (int k = 0; k < w->steps; k++) {
    printf("%10.1e", w->kap[k]);
    for (int v = 0; v < w->nv; v++) {
      if (w->st[k * w->nv + v] == MPE_IR_CONVERGED)
        printf(" %14d", w->it[k * w->nv + v]);
      else
        printf(" %14s", w->st[k * w->nv + v] == MPE_IR_FALLBACK ? "F" : "D");
    }
    printf("\n");
  }
}

/* iterations against kappa (without PLplot --plot is refused with the options) */
static int sweep_plot(const refine_args *a, const sweep_res *w)
{
#ifdef HAVE_PLPLOT
  const int steps = w->steps, nv = w->nv, ns = w->ns;
  const double *kap = w->kap;
  PLFLT *xs = malloc((size_t)steps * sizeof *xs), *ys = malloc((size_t)steps * sizeof *ys);
  int cap = w->opts[0].max_iter + 1;
  if (!xs || !ys || mpa_plot_open(a->plot)) {
    free(xs);
    free(ys);
    return xs && ys ? MPA_EXIT_INPUT : oom("refine");
  }
  plcol0(MPA_PLOT_INK);
  plenv(log10(kap[0]), log10(kap[steps - 1]) + (steps == 1), 0, cap + 1, 0, 10);
  pllab("condition number (2-norm)", "corrections (fallback drawn at the cap + 1)", "iterations vs kappa");
  for (int v = 0; v < nv; v++) {
    for (int k = 0; k < steps; k++) {
      xs[k] = log10(kap[k]);
      ys[k] = w->st[k * nv + v] == MPE_IR_CONVERGED ? w->it[k * nv + v] : cap;
    }
    plcol0(MPA_PLOT_CURVE(v));
    pllsty(1 + (v % ns));
    plline(steps, xs, ys);
    plpoin(steps, xs, ys, 2 + v);
    char lab[32];
    snprintf(lab, sizeof lab, "%s/%s", w->factors[v / ns], w->solvers[v % ns]);
    plptex(log10(kap[0]) + 0.05 * (log10(kap[steps - 1]) - log10(kap[0]) + 1), (cap + 1) * (0.93 - 0.8 * v / nv),
           1, 0, 0, lab);
  }
  free(xs);
  free(ys);
  return mpa_plot_end(a->plot);
#else
  (void)a;
  (void)w;
  return 0;
#endif
}

static int refine_sweep(const refine_args *a)
{
  const double k0 = a->k0, k1 = a->k1;
  const int steps = a->steps;
  if (strcmp(a->matrix, "randsvd") != 0)
    return fail("refine", a->matrix, "--cond-sweep needs --matrix randsvd");
  char fl[64], sl[64], *factors[4], *solvers[2];
  snprintf(fl, sizeof fl, "%s", a->factor);
  snprintf(sl, sizeof sl, "%s", a->solver);
  int nf = split_list(fl, factors, 4), ns = split_list(sl, solvers, 2), nv = nf * ns;
  mpe_ir_opts opts[8];
  for (int f = 0; f < nf; f++)
    for (int s = 0; s < ns; s++) {
      int rc = variant_opts(a, factors[f], solvers[s], &opts[f * ns + s]);
      if (rc)
        return rc;
    }
  int n = a->n;
  if (n > MAX_DENSE)
    return fail("refine", "randsvd", "--n over 20000, the largest order of a dense solve");
  if (mpa_budget("randsvd", "the dense solve", dense_bytes(n)))
    return MPA_EXIT_INPUT;
  double *A = malloc((size_t)n * n * sizeof *A), *b = malloc((size_t)n * sizeof *b), *x = malloc((size_t)n * sizeof *x),
         *xt = malloc((size_t)n * sizeof *xt), *kap = malloc((size_t)steps * sizeof *kap);
  int *it = malloc((size_t)steps * nv * sizeof *it), *st = malloc((size_t)steps * nv * sizeof *st);
  if (!A || !b || !x || !xt || !kap || !it || !st) {
    free(A); free(b); free(x); free(xt); free(kap); free(it); free(st);
    return oom("refine");
  }
  int status = 0, np = mpa_mpi_size(), me = mpa_mpi_rank();
  /* under mpirun point k is solved by rank k mod np; the counts are summed on
     every rank (the others hold zeros there), so rank 0 prints the same table */
  mpa_err_local = 1;
  for (int k = 0; k < steps && !status; k++) {
    kap[k] = steps == 1 ? k0 : k0 * pow(k1 / k0, (double)k / (steps - 1));
    if (k % np != me) {
      for (int v = 0; v < nv; v++)
        it[k * nv + v] = st[k * nv + v] = 0;
      continue;
    }
    int rc = mpe_mat_randsvd(A, n, n, kap[k], a->mode, a->seed);
    if (rc) {
      status = fail_rc("refine", "randsvd", rc);
      break;
    }
    make_rhs(n, A, a->seed, xt, b);
    for (int v = 0; v < nv; v++) {
      mpe_ir_result r;
      opts[v].xtrue = xt;
      rc = mpe_ir_solve(n, A, n, b, x, &opts[v], &r);
      if (rc && rc != MPE_ECONVERGE) {
        status = fail_rc("refine", "solve", rc);
        break;
      }
      it[k * nv + v] = r.iterations;
      st[k * nv + v] = r.status;
    }
    if (!a->quiet && !a->json && np == 1)
      fprintf(stderr, "\r  kappa %d/%d", k + 1, steps);
  }
  mpa_err_local = 0;
  if (np > 1) {
    if ((status = mpa_mpi_max(status)) || mpa_mpi_sum_int(it, (size_t)steps * nv) ||
        mpa_mpi_sum_int(st, (size_t)steps * nv) || me > 0)
      goto out;
  } else if (status) {
    goto out;
  }
  if (!a->quiet && !a->json)
    fprintf(stderr, "\r%*s\r", 20, "");
  const sweep_res w = { n, steps, nf, ns, nv, factors, solvers, opts, kap, it, st };
  if (a->plot && (status = sweep_plot(a, &w)) != 0)   /* before the report, as above */
    goto out;
  if (a->json)
    status = sweep_json(a, &w);
  else
    sweep_text(a, &w);
out:
  free(A); free(b); free(x); free(xt); free(kap); free(it); free(st);
  return status;
}

int mpa_cmd_refine(int argc, char **argv)
{
  refine_args a = { NULL, 256, 2, 0, 0, 0, 0, 0, -1, 0, 1e4, 1, NULL, NULL, "none", NULL, NULL, 0, 0, 0, 0 };
  int seed = 1;
  const mpa_opt opts[] = {
    { "matrix", 0, MPA_STRING, &a.matrix, 0, 0, "M",
      "hilbert, laplace1d, laplace2d, laplace3d, randsvd, dominant (default)\nor FILE.mtx", NULL, NULL, 0 },
    { "n", 0, MPA_INT, &a.n, 1, 1 << 20, "N", "the order (default 256)", NULL, NULL, 0 },
    { "cond", 0, MPA_DOUBLE, &a.cond, 1, INFINITY, "K", "randsvd: the 2-norm condition number (default 1e4)",
      NULL, NULL, 0 },
    { "mode", 0, MPA_INT, &a.mode, 1, 5, "1..5", "randsvd: the singular value distribution (default 2)", NULL, NULL, 0 },
    { "factor", 0, MPA_STRING, &a.factor, 0, 0, "F", "the LU's format: fp16 (default), bf16, tf32, fp32", NULL, NULL, 0 },
    { "model", 0, MPA_STRING, &a.model, 0, 0, "GPU", "the tensor-core model of the LU: none (default), v100, a100,\n"
      "h100, ...", NULL, NULL, 0 },
    { "solver", 0, MPA_STRING, &a.solver, 0, 0, "S", "lu-ir (default) or gmres-ir", NULL, NULL, 0 },
    { "scale", 0, MPA_FLAG, &a.scale, 0, 0, NULL, "scale A into the factor format's range first", NULL, NULL, 0 },
    { "no-fallback", 0, MPA_FLAG, &a.no_fallback, 0, 0, NULL, "no binary64 solve when refinement fails", NULL, NULL, 0 },
    { "block", 0, MPA_INT, &a.block, 1, 4096, "NB", "the LU's block size", NULL, NULL, 0 },
    { "max-iter", 0, MPA_INT, &a.max_iter, 0, 10000, "K", "refinement steps at most", NULL, NULL, 0 },
    { "gmres-m", 0, MPA_INT, &a.gmres_m, 1, 100000, "M", "GMRES restart length", NULL, NULL, 0 },
    { "seed", 0, MPA_INT, &seed, 0, 1 << 30, "S", "the random matrices' and right-hand side's seed (default 1)",
      NULL, NULL, 0 },
    { "cusolver", 0, MPA_FLAG, &a.cusolver, 0, 0, NULL, "the same solve through cuSOLVER IRS on the GPU", NULL, NULL, 0 },
    { "cond-sweep", 0, MPA_CALL, &a, 0, 0, "A:B:STEPS",
      "sweep randsvd's condition number from A to B (--factor and\n--solver take comma lists here)",
      "A:B:STEPS with 1 <= A <= B and 1 <= STEPS <= 200", (const void *)take_sweep, 0 },
    MPA_OPT_JSON(&a.json),
    { "plot", 0, MPA_PLOT, &a.plot, 0, 0, "FILE", "the backward error per step (or per kappa) as .svg or .png",
      NULL, NULL, 0 },
    { "quiet", 'q', MPA_FLAG, &a.quiet, 0, 0, NULL, "no notes", NULL, NULL, 0 },
    MPA_OPT_END };
  const mpa_cli cli = { "refine", "usage: mpanalyze refine [options]", NULL, opts };
  int rc = mpa_parse_no_operands(&cli, argc, argv);
  if (rc >= 0)
    return rc;
  a.seed = (uint64_t)seed;
  int sweep_lists = (a.factor ? 1 : 0) | (a.solver ? 2 : 0) | (a.matrix ? 4 : 0);
  if (!a.matrix)
    a.matrix = "dominant";
  if (!a.factor)
    a.factor = "fp16";
  if (!a.solver)
    a.solver = "lu-ir";
  if (a.sweep && a.cusolver)
    return fail("refine", "--cusolver", "not available with --cond-sweep");
  if (a.sweep) {
    refine_args b = a;
    if (!(sweep_lists & 1))
      b.factor = "fp16,bf16,tf32";
    if (!(sweep_lists & 2))
      b.solver = "lu-ir,gmres-ir";
    if (!(sweep_lists & 4))
      b.matrix = "randsvd";   /* the sweep is over randsvd's condition number */
    return refine_sweep(&b);
  }
  if (mpa_mpi_rank() > 0)
    return 0;   /* under mpirun only the sweep is shared out */
  return refine_one(&a);
}

/* ------------------------------------------------------------ cg */

/* per unknown: b, x and the history here; r, p, q, accumulator (binary64),
   four binary32 vectors and 16-bit storage in mpe_cg_solve */
#define CG_BYTES_PER_ROW 120

/* the operator of --matrix (a Laplacian stencil, its CSR, or a .mtx file in *S);
   MPA_EXIT_* */
static int cg_operator(const char *matrix, int n, int use_csr, mpe_cg_op *op, mpe_csr **S)
{
  int rc, dim = laplace_dim(matrix);
  if (is_mtx(matrix)) {
    int rows = 0, cols = 0;
    size_t entries = 0;
    rc = mpe_mtx_size(matrix, &rows, &cols, &entries);
    if (rc == MPE_EUNSUP && rows > 0)
      return mtx_too_empty("cg", matrix, rows, cols, entries);
    /* CSR (mirrored entries count twice) plus the solver's vectors */
    if (!rc && mpa_budget(matrix, "the CG solve", (uint64_t)entries * 2 * 16 + (uint64_t)rows * CG_BYTES_PER_ROW))
      return MPA_EXIT_INPUT;
    if ((rc = mpe_mtx_read(S, matrix)) != 0)
      return rc == MPE_EFORMAT ? fail("cg", matrix, "malformed Matrix Market file")
                               : fail_rc("cg", matrix, rc);
    if ((*S)->nrows != (*S)->ncols)
      return fail("cg", matrix, "matrix is not square");
    if ((rc = structurally_singular("cg", matrix, *S)) != 0)
      return rc;
    op->csr = *S;
    return 0;
  }
  if (!dim)
    return fail("cg", matrix, "unknown matrix (laplace1d|2d|3d or FILE.mtx)");
  op->dim = dim;
  op->m = n;
  int N = mpe_cg_op_order(op);
  if (N < 0)
    return fail("cg", matrix, "grid too large");
  /* the stencil's CSR (2 dim + 1 entries a row, 12 bytes each, and its row
     pointers) is counted before it is built */
  if (mpa_budget(matrix, "the CG solve", (uint64_t)N * CG_BYTES_PER_ROW +
                                         (use_csr ? (uint64_t)N * (2 * dim + 1) * 12 + (uint64_t)N * 8 : 0)))
    return MPA_EXIT_INPUT;
  if (use_csr) {
    if ((rc = mpe_csr_laplace(S, dim, n)) != 0)
      return fail_rc("cg", matrix, rc);
    op->csr = *S;
  }
  return 0;
}

/* the residual history (without PLplot --plot is refused with the options) */
static int cg_plot(const char *plot, const double *hist, int k)
{
#ifdef HAVE_PLPLOT
  PLFLT *xs = malloc((size_t)(k + 1) * sizeof *xs), *ys = malloc((size_t)(k + 1) * sizeof *ys);
  if (!xs || !ys || mpa_plot_open(plot)) {
    free(xs);
    free(ys);
    return xs && ys ? MPA_EXIT_INPUT : oom("cg");
  }
  double lo = 0;
  for (int i = 0; i < k; i++) {
    xs[i] = i + 1;
    ys[i] = log10(fmax(hist[i], 1e-30));
    lo = fmin(lo, ys[i]);
  }
  plcol0(MPA_PLOT_INK);
  plenv(0, k + 1, floor(lo), 1, 0, 20);
  pllab("iteration", "iterated relative residual", "reliable-update CG");
  plcol0(MPA_PLOT_CURVE(0));
  plline(k, xs, ys);
  free(xs);
  free(ys);
  return mpa_plot_end(plot);
#else
  (void)plot;
  (void)hist;
  (void)k;
  return 0;
#endif
}

int mpa_cmd_cg(int argc, char **argv)
{
  const char *matrix = "laplace2d", *plot = NULL;
  int n = 64, json = 0, quiet = 0, use_csr = 0, max_iter = 0, seed = 1, s = MPE_CG_FP16;
  double delta = 0.1, tol = 1e-10;
  static const char *const names[] = { "fp64", "fp32", "fp16", "bf16", "fx16", NULL };   /* mpe_cg_storage's order */
  const mpa_opt opts[] = {
    { "matrix", 0, MPA_STRING, &matrix, 0, 0, "M", "laplace1d, laplace2d (default), laplace3d or FILE.mtx", NULL, NULL, 0 },
    { "n", 0, MPA_INT, &n, 1, 1 << 20, "N", "grid points per dimension (default 64)", NULL, NULL, 0 },
    { "csr", 0, MPA_FLAG, &use_csr, 0, 0, NULL, "the Laplacian as a CSR matrix, not a stencil", NULL, NULL, 0 },
    { "sloppy", 0, MPA_ENUM, &s, 0, 0, "F", "the 16-bit storage: fp16 (default), bf16, fx16; or fp32, fp64",
      "fp16, bf16, fx16, fp32, fp64", names, 0 },
    { "delta", 0, MPA_DOUBLE, &delta, 0, 1, "D", "reliable-update threshold (default 0.1)", NULL, NULL,
      MPA_LO_OPEN | MPA_HI_OPEN },
    { "tol", 0, MPA_DOUBLE, &tol, 0, INFINITY, "T", "relative residual to reach (default 1e-10)", NULL, NULL, MPA_LO_OPEN },
    { "max-iter", 0, MPA_INT, &max_iter, 1, 1 << 30, "K", "iterations at most (default 10 N)", NULL, NULL, 0 },
    { "seed", 0, MPA_INT, &seed, 0, 1 << 30, "S", "the right-hand side's seed (default 1)", NULL, NULL, 0 },
    MPA_OPT_JSON(&json),
    { "plot", 0, MPA_PLOT, &plot, 0, 0, "FILE", "the residual history as .svg or .png", NULL, NULL, 0 },
    { "quiet", 'q', MPA_FLAG, &quiet, 0, 0, NULL, "no text report", NULL, NULL, 0 },
    MPA_OPT_END };
  const mpa_cli cli = { "cg", "usage: mpanalyze cg [options]", NULL, opts };
  int rc = mpa_parse_no_operands(&cli, argc, argv);
  if (rc >= 0)
    return rc;
  const char *sloppy = names[s];
  mpe_cg_opts o;
  mpe_cg_opts_init(&o);
  o.sloppy = (mpe_cg_storage)s;
  o.delta = delta;
  o.tol = tol;
  o.max_iter = max_iter;
  mpe_csr *S = NULL;
  mpe_cg_op op = { NULL, 0, 0 };
  if ((rc = cg_operator(matrix, n, use_csr, &op, &S)) != 0) {
    mpe_csr_free(S);
    return rc;
  }
  int N = mpe_cg_op_order(&op);
  double *b = malloc((size_t)N * sizeof *b), *x = calloc((size_t)N, sizeof *x);
  int cap = max_iter ? max_iter : 10 * N;
  if (cap > 1000000)
    cap = 1000000;
  double *hist = malloc((size_t)cap * sizeof *hist);
  if (!b || !x || !hist) {
    free(b); free(x); free(hist); mpe_csr_free(S);
    return oom("cg");
  }
  uint64_t st = (uint64_t)seed;
  for (int i = 0; i < N; i++)
    b[i] = urand(&st);
  /* the binary64 reference count */
  mpe_cg_opts o64 = o;
  o64.sloppy = MPE_CG_FP64;
  mpe_cg_result r64, r;
  rc = mpe_cg_solve(&op, b, x, &o64, &r64);
  if (rc && rc != MPE_ECONVERGE) {
    free(b); free(x); free(hist); mpe_csr_free(S);
    return fail_rc("cg", matrix, rc);
  }
  memset(x, 0, (size_t)N * sizeof *x);
  o.history = hist;
  o.history_cap = cap;
  rc = mpe_cg_solve(&op, b, x, &o, &r);
  int status = 0;
  if (rc && rc != MPE_ECONVERGE) {
    status = fail_rc("cg", matrix, rc);
    goto out;
  }
  static const char *sn[] = { "converged", "maxiter", "breakdown" };
  /* the plot before the report: a plot that cannot be written leaves nothing on stdout */
  if (plot && (status = cg_plot(plot, hist, r.nhistory)) != 0)
    goto out;
  if (json) {
    json_t *j = json_object(), *h = json_array();
    json_object_set_new(j, "matrix", json_string(matrix));
    json_object_set_new(j, "n", json_integer(N));
    json_object_set_new(j, "sloppy", json_string(sloppy));
    json_object_set_new(j, "delta", json_real(delta));
    json_object_set_new(j, "tol", json_real(tol));
    json_object_set_new(j, "status", json_string(sn[r.status]));
    json_object_set_new(j, "iterations", json_integer(r.iterations));
    json_object_set_new(j, "reliable_updates", json_integer(r.reliable_updates));
    json_object_set_new(j, "true_residual", mpa_json_num(r.true_residual));
    json_object_set_new(j, "fp64_iterations", json_integer(r64.iterations));
    for (int i = 0; i < r.nhistory; i++)
      json_array_append_new(h, mpa_json_num(hist[i]));
    json_object_set_new(j, "history", h);
    int jrc = mpa_json_print(j);
    json_decref(j);
    if (jrc) {
      status = jrc;
      goto out;
    }
  } else if (!quiet) {
    printf("%s (order %d), %s sloppy storage, delta %g: %s in %d iterations (fp64 CG: %d), "
           "%d reliable updates, true relative residual %.3e\n", matrix, N, sloppy, delta, sn[r.status],
           r.iterations, r64.iterations, r.reliable_updates, r.true_residual);
  }
  status = 0;
  if (r.status != MPE_CG_CONVERGED) {
    mpa_error("cg", "%s: %s", matrix, r.status == MPE_CG_MAXITER
            ? "stopped at the iteration limit before reaching --tol (raise --max-iter)"
            : "breakdown: p'Ap <= 0 or not finite (is the matrix symmetric positive definite?)");
    status = MPA_EXIT_NUMERIC;
  }
out:
  free(b); free(x); free(hist); mpe_csr_free(S);
  return status;
}
