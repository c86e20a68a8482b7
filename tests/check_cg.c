/* Reliable-update CG: every sloppy storage reaches the true residual target on
   the 2-D Laplacian within twice the binary64 iteration count, reliable
   updates happen, stencil = CSR bit for bit, power-of-two rescaling makes the
   iteration scale-invariant (no fp16 underflow), breakdown/maxiter/error paths. */
#include <math.h>
#include <stdlib.h>
#include "testsupport.h"

static double *rand_vec(int n, uint64_t seed)
{
  double *v = malloc((size_t)n * sizeof *v);
  uint64_t st = seed;
  for (int i = 0; i < n; i++)
    v[i] = (double)(ts_rand64(&st) >> 11) * 0x1p-52 - 1.0;
  return v;
}

/* ||b - A x||_2 / ||b||_2 in long double from the CSR arrays (independent of mpe_cg_apply) */
static double rel_residual(const mpe_csr *L, const double *b, const double *x)
{
  long double rr = 0, bb = 0;
  for (int i = 0; i < L->nrows; i++) {
    long double s = b[i];
    for (size_t p = L->rowptr[i]; p < L->rowptr[i + 1]; p++)
      s -= (long double)L->val[p] * x[L->col[p]];
    rr += s * s;
    bb += (long double)b[i] * b[i];
  }
  return (double)sqrtl(rr / bb);
}

static mpe_cg_result solve(const mpe_cg_op *op, const double *b, double *x, mpe_cg_storage s, int expect)
{
  mpe_cg_opts o;
  mpe_cg_opts_init(&o);
  o.sloppy = s;
  mpe_cg_result r;
  int n = mpe_cg_op_order(op);
  memset(x, 0, (size_t)n * sizeof *x);
  ck_assert_int_eq(mpe_cg_solve(op, b, x, &o, &r), expect);
  return r;
}

START_TEST(test_laplace2d_all_storages)
{
  const int m = 64, n = m * m;
  mpe_cg_op op = { NULL, 2, m };
  mpe_csr *L;
  ck_assert_int_eq(mpe_csr_laplace(&L, 2, m), MPE_OK);
  double *b = rand_vec(n, ts_seed()), *x = malloc((size_t)n * sizeof *x);
  mpe_cg_result ref = solve(&op, b, x, MPE_CG_FP64, MPE_OK);
  ck_assert_int_eq(ref.status, MPE_CG_CONVERGED);
  ck_assert(ref.iterations > 100 && ref.iterations < 400);
  ck_assert(rel_residual(L, b, x) <= 1e-10);
  static const mpe_cg_storage st[] = { MPE_CG_FP32, MPE_CG_FP16, MPE_CG_BF16, MPE_CG_FX16 };
  static const char *names[] = { "fp32", "fp16", "bf16", "fx16" };
  for (int k = 0; k < 4; k++) {
    mpe_cg_result r = solve(&op, b, x, st[k], MPE_OK);
    double tr = rel_residual(L, b, x);
    fprintf(stderr, "cg laplace2d N=64 %s: %d iterations (fp64 %d), %d reliable updates, true residual %.3g\n",
            names[k], r.iterations, ref.iterations, r.reliable_updates, tr);
    ck_assert_int_eq(r.status, MPE_CG_CONVERGED);
    ck_assert_msg(tr <= 1e-10, "%s true residual %g", names[k], tr);
    ck_assert(fabs(tr - r.true_residual) <= 1e-3 * tr);
    ck_assert_msg(r.iterations <= 2 * ref.iterations, "%s: %d > 2 x %d", names[k], r.iterations, ref.iterations);
    ck_assert_int_ge(r.iterations, ref.iterations);
    ck_assert_int_gt(r.reliable_updates, 1);
  }
  mpe_csr_free(L);
  free(b);
  free(x);
}
END_TEST

START_TEST(test_stencil_equals_csr)
{
  static const int dm[3][2] = { { 1, 200 }, { 2, 20 }, { 3, 9 } };
  int dim = dm[_i][0], m = dm[_i][1];
  mpe_csr *L;
  ck_assert_int_eq(mpe_csr_laplace(&L, dim, m), MPE_OK);
  int n = L->nrows;
  mpe_cg_op a = { NULL, dim, m }, c = { L, 0, 0 };
  ck_assert_int_eq(mpe_cg_op_order(&a), n);
  ck_assert_int_eq(mpe_cg_op_order(&c), n);
  double *b = rand_vec(n, ts_seed() + 1), *x = malloc((size_t)n * sizeof *x), *y = malloc((size_t)n * sizeof *y);
  ck_assert_int_eq(mpe_cg_apply(&a, b, x), MPE_OK);
  ck_assert_int_eq(mpe_cg_apply(&c, b, y), MPE_OK);
  ck_assert(memcmp(x, y, (size_t)n * sizeof *x) == 0);
  for (int s = MPE_CG_FP64; s <= MPE_CG_FX16; s++) {
    mpe_cg_result ra = solve(&a, b, x, (mpe_cg_storage)s, MPE_OK), rc = solve(&c, b, y, (mpe_cg_storage)s, MPE_OK);
    ck_assert_int_eq(ra.iterations, rc.iterations);
    ck_assert_int_eq(ra.reliable_updates, rc.reliable_updates);
    ck_assert(memcmp(x, y, (size_t)n * sizeof *x) == 0);
    ck_assert(rel_residual(L, b, x) <= 1e-10);
  }
  mpe_csr_free(L);
  free(b);
  free(x);
  free(y);
}
END_TEST

/* b scaled by 2^-40: fp16 storage of unscaled values would underflow (most
   entries of r fall below 2^-24), but the power-of-two rescaling at each
   reliable update makes the whole iteration exactly scale-invariant. */
START_TEST(test_rescaling)
{
  const int m = 24, n = m * m;
  mpe_cg_op op = { NULL, 2, m };
  double *b = rand_vec(n, ts_seed() + 2), *x = malloc((size_t)n * sizeof *x), *bs = malloc((size_t)n * sizeof *bs),
         *xs = malloc((size_t)n * sizeof *xs);
  for (int i = 0; i < n; i++)
    bs[i] = ldexp(b[i], -40);
  for (int s = MPE_CG_FP16; s <= MPE_CG_FX16; s++) {
    mpe_cg_result r1 = solve(&op, b, x, (mpe_cg_storage)s, MPE_OK), r2 = solve(&op, bs, xs, (mpe_cg_storage)s, MPE_OK);
    ck_assert_int_eq(r1.iterations, r2.iterations);
    for (int i = 0; i < n; i++)
      ck_assert(xs[i] == ldexp(x[i], -40));
  }
  free(b);
  free(x);
  free(bs);
  free(xs);
}
END_TEST

START_TEST(test_delta)
{
  const int m = 32, n = m * m;
  mpe_cg_op op = { NULL, 2, m };
  double *b = rand_vec(n, ts_seed() + 3), *x = calloc((size_t)n, sizeof *x), hist[2000];
  mpe_cg_opts o;
  mpe_cg_opts_init(&o);
  o.sloppy = MPE_CG_FP16;
  o.history = hist;
  o.history_cap = 2000;
  mpe_cg_result r1, r2;
  o.delta = 0.5;
  ck_assert_int_eq(mpe_cg_solve(&op, b, x, &o, &r1), MPE_OK);
  memset(x, 0, (size_t)n * sizeof *x);
  o.delta = 1e-3;
  ck_assert_int_eq(mpe_cg_solve(&op, b, x, &o, &r2), MPE_OK);
  ck_assert_int_gt(r1.reliable_updates, 2 * r2.reliable_updates);
  ck_assert_int_eq(r2.nhistory, r2.iterations);
  ck_assert(hist[r2.nhistory - 1] < 1e-9 && hist[0] < 10);
  /* a good initial guess: converged without a single step */
  mpe_cg_result r3;
  ck_assert_int_eq(mpe_cg_solve(&op, b, x, &o, &r3), MPE_OK);
  ck_assert_int_eq(r3.iterations, 0);
  free(b);
  free(x);
}
END_TEST

START_TEST(test_mtx_cg)
{
  char path[4096];
  const char *src = getenv("MPE_SRCDIR");
  snprintf(path, sizeof path, "%s/tests/data/symmetric.mtx", src ? src : MPE_SRCDIR);
  mpe_csr *A;
  ck_assert_int_eq(mpe_mtx_read(&A, path), MPE_OK);
  mpe_cg_op op = { A, 0, 0 };
  double b[4] = { 1, 2, 3, 4 }, x[4];
  mpe_cg_result r = solve(&op, b, x, MPE_CG_FP16, MPE_OK);
  ck_assert(rel_residual(A, b, x) <= 1e-10);
  ck_assert_int_ge(r.iterations, 4);
  mpe_csr_free(A);
}
END_TEST

START_TEST(test_failures)
{
  mpe_csr *L;
  ck_assert_int_eq(mpe_csr_laplace(&L, 1, 50), MPE_OK);
  int n = L->nrows;
  double *b = rand_vec(n, 5), *x = calloc((size_t)n, sizeof *x);
  /* not positive definite: breakdown */
  for (size_t k = 0; k < L->nnz; k++)
    L->val[k] = -L->val[k];
  mpe_cg_op op = { L, 0, 0 };
  mpe_cg_result r = solve(&op, b, x, MPE_CG_FP16, MPE_ECONVERGE);
  ck_assert_int_eq(r.status, MPE_CG_BREAKDOWN);
  r = solve(&op, b, x, MPE_CG_FP64, MPE_ECONVERGE);
  ck_assert_int_eq(r.status, MPE_CG_BREAKDOWN);
  for (size_t k = 0; k < L->nnz; k++)
    L->val[k] = -L->val[k];
  /* iteration cap */
  mpe_cg_opts o;
  mpe_cg_opts_init(&o);
  o.max_iter = 5;
  ck_assert_int_eq(mpe_cg_solve(&op, b, x, &o, &r), MPE_ECONVERGE);
  ck_assert_int_eq(r.status, MPE_CG_MAXITER);
  ck_assert_int_eq(r.iterations, 5);
  ck_assert(r.true_residual > 1e-3 && r.true_residual < 1);
  /* argument errors write nothing */
  double keep = x[0];
  mpe_cg_opts_init(&o);
  ck_assert_int_eq(mpe_cg_solve(NULL, b, x, &o, &r), MPE_EINVAL);
  ck_assert_int_eq(mpe_cg_solve(&op, NULL, x, &o, &r), MPE_EINVAL);
  ck_assert_int_eq(mpe_cg_solve(&op, b, NULL, &o, &r), MPE_EINVAL);
  o.delta = 1.0;
  ck_assert_int_eq(mpe_cg_solve(&op, b, x, &o, &r), MPE_EINVAL);
  o.delta = 0.0;
  ck_assert_int_eq(mpe_cg_solve(&op, b, x, &o, &r), MPE_EINVAL);
  mpe_cg_opts_init(&o);
  o.tol = -1;
  ck_assert_int_eq(mpe_cg_solve(&op, b, x, &o, &r), MPE_EINVAL);
  mpe_cg_opts_init(&o);
  o.sloppy = (mpe_cg_storage)9;
  ck_assert_int_eq(mpe_cg_solve(&op, b, x, &o, &r), MPE_EINVAL);
  mpe_cg_opts_init(&o);
  o.sloppy = MPE_CG_FX16;
  o.fx16_block = 0;
  ck_assert_int_eq(mpe_cg_solve(&op, b, x, &o, &r), MPE_EINVAL);
  mpe_cg_opts_init(&o);
  o.history_cap = 4;
  ck_assert_int_eq(mpe_cg_solve(&op, b, x, &o, &r), MPE_EINVAL);
  mpe_cg_op bad = { NULL, 4, 10 };
  ck_assert_int_eq(mpe_cg_solve(&bad, b, x, NULL, &r), MPE_EINVAL);
  ck_assert_int_eq(mpe_cg_op_order(&bad), -1);
  ck_assert_int_eq(mpe_cg_op_order(NULL), -1);
  L->col[3] = n;   /* a column out of range */
  ck_assert_int_eq(mpe_cg_solve(&op, b, x, NULL, &r), MPE_EINVAL);
  ck_assert_int_eq(mpe_cg_apply(&op, b, x), MPE_EINVAL);
  L->col[3] = 1;
  L->ncols = n + 1;   /* not square */
  ck_assert_int_eq(mpe_cg_solve(&op, b, x, NULL, &r), MPE_EINVAL);
  L->ncols = n;
  ck_assert(x[0] == keep);
  b[7] = NAN;
  ck_assert_int_eq(mpe_cg_solve(&op, b, x, NULL, &r), MPE_ERANGE);
  ck_assert(x[0] == keep);
  /* b = 0: x = 0 at once */
  memset(b, 0, (size_t)n * sizeof *b);
  ck_assert_int_eq(mpe_cg_solve(&op, b, x, NULL, &r), MPE_OK);
  ck_assert(x[0] == 0 && r.iterations == 0);
  mpe_cg_opts_init(NULL);
  mpe_csr_free(L);
  free(b);
  free(x);
}
END_TEST

int main(void)
{
  Suite *s = suite_create("cg");
  TCase *tc = tcase_create("convergence");
  tcase_add_test(tc, test_laplace2d_all_storages);
  tcase_add_loop_test(tc, test_stencil_equals_csr, 0, 3);
  tcase_add_test(tc, test_rescaling);
  tcase_add_test(tc, test_delta);
  tcase_add_test(tc, test_mtx_cg);
  suite_add_tcase(s, tc);
  tc = tcase_create("failures");
  tcase_add_test(tc, test_failures);
  suite_add_tcase(s, tc);
  return ts_run(s);
}
