/* make bench: mixed-precision LU-IR against LAPACK on the same matrix.
   Rows: time of each solver as a ratio to LAPACKE_dgesv and LAPACKE_dsgesv
   measured in the same run (diagonally dominant matrix, cuSOLVER's IRS sample).
   Sizes: $MPE_BENCH_IR_N (e.g. "1024"), default "2048 4096". */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <lapacke.h>
#include <mpemu.h>

static double now(void)
{
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec + 1e-9 * t.tv_nsec;
}

static double *A0, *A, *b, *x;
static lapack_int *ipiv;

static double t_dgesv(int n)
{
  memcpy(A, A0, (size_t)n * n * sizeof *A);
  memcpy(x, b, (size_t)n * sizeof *x);
  double t = now();
  if (LAPACKE_dgesv(LAPACK_COL_MAJOR, n, 1, A, n, ipiv, x, n) != 0)
    exit(1);
  return now() - t;
}

static double t_dsgesv(int n, lapack_int *iter)
{
  memcpy(A, A0, (size_t)n * n * sizeof *A);
  double t = now();
  if (LAPACKE_dsgesv(LAPACK_COL_MAJOR, n, 1, A, n, ipiv, b, n, x, n, iter) != 0)
    exit(1);
  return now() - t;
}

static double t_ir(int n, const char *model, mpe_ir_result *r)
{
  mpe_ir_opts o;
  mpe_ir_opts_init(&o);
  o.model = model ? mpe_tc_model_get(model, MPE_FP16) : NULL;
  double t = now();
  if (mpe_ir_solve(n, A0, n, b, x, &o, r) != MPE_OK)
    exit(1);
  return now() - t;
}

static double best(double a, double b) { return a < b ? a : b; }

int main(void)
{
  const char *env = getenv("MPE_BENCH_IR_N");
  char sizes[256];
  snprintf(sizes, sizeof sizes, "%s", env && *env ? env : "2048 4096");
  printf("\nbench_ir: LU-IR (FP16 factor, binary64 refinement), speed vs LAPACK in the same run (t_lapack / t)\n");
  printf("%6s %-22s %10s %10s %10s %7s %10s\n", "n", "solver", "seconds", "vs dgesv", "vs dsgesv", "iters", "berr");
  for (char *tok = strtok(sizes, " ,"); tok; tok = strtok(NULL, " ,")) {
    int n = atoi(tok);
    if (n < 16)
      continue;
    A0 = malloc((size_t)n * n * sizeof *A0);
    A = malloc((size_t)n * n * sizeof *A);
    b = malloc((size_t)n * sizeof *b);
    x = malloc((size_t)n * sizeof *x);
    ipiv = malloc((size_t)n * sizeof *ipiv);
    if (!A0 || !A || !b || !x || !ipiv || mpe_mat_dominant(A0, n, n, 1) != MPE_OK)
      return 1;
    for (int i = 0; i < n; i++)
      b[i] = 1.0;
    double td = best(t_dgesv(n), t_dgesv(n));
    lapack_int iter;
    double ts = best(t_dsgesv(n, &iter), t_dsgesv(n, &iter));
    printf("%6d %-22s %10.4f %10.2f %10.2f %7d %10s\n", n, "LAPACKE_dgesv", td, 1.0, ts / td, 0, "-");
    printf("%6d %-22s %10.4f %10.2f %10.2f %7d %10s\n", n, "LAPACKE_dsgesv", ts, td / ts, 1.0, (int)iter, "-");
    /* goal: issue 13's target against dgesv at n = 4096 */
    static const struct { const char *label, *model; double goal; } rows[] = {
      { "lu-ir fp16 (sgemm)", NULL, 1.0 }, { "lu-ir fp16 fma-chain", "fma-chain", 0.6 },
      { "lu-ir fp16 h100", "h100", 0.3 },
    };
    for (size_t k = 0; k < sizeof rows / sizeof rows[0]; k++) {
      mpe_ir_result r;
      double t = t_ir(n, rows[k].model, &r);
      printf("%6d %-22s %10.4f %10.2f %10.2f %7d %10.2e", n, rows[k].label, t, td / t, ts / t, r.niters,
             r.backward_error);
      if (n == 4096)
        printf("  >= %.1f %s", rows[k].goal, td / t >= rows[k].goal ? "met" : "NOT met");
      printf("\n");
      fflush(stdout);
    }
    free(A0); free(A); free(b); free(x); free(ipiv);
  }
  return 0;
}
