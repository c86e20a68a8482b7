/* Lab: when does iterative refinement work? Hilbert and randsvd matrices,
   FP16 vs BF16 vs TF32 factors (H100 tensor-core model), LU-IR vs GMRES-IR.
   Build: cc refine_lab.c $(pkg-config --cflags --libs mpemu-analysis)
   Run:   ./refine_lab [n]   (see refine_lab.md for the questions) */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <mpemu.h>

static const char *outcome(const mpe_ir_result *r, char *buf)
{
  if (r->status == MPE_IR_CONVERGED)
    sprintf(buf, "%d", r->niters);
  else
    sprintf(buf, "F(%d)", r->niters);
  return buf;
}

static void row(const char *label, int n, const double *A)
{
  double *b = malloc(n * sizeof *b), *x = malloc(n * sizeof *x), *xt = malloc(n * sizeof *xt);
  for (int i = 0; i < n; i++)
    xt[i] = 1.0;
  for (int i = 0; i < n; i++) {
    b[i] = 0;
    for (int j = 0; j < n; j++)
      b[i] += A[(size_t)j * n + i] * xt[j];
  }
  static const mpe_type f[3] = { MPE_FP16, MPE_BF16, MPE_TF32 };
  printf("%-22s", label);
  for (int k = 0; k < 3; k++)
    for (int s = 0; s < 2; s++) {
      mpe_ir_opts o;
      mpe_ir_opts_init(&o);
      o.factor = f[k];
      o.solver = s ? MPE_IR_GMRES_IR : MPE_IR_LU_IR;
      o.model = mpe_tc_model_get("h100", f[k]);
      o.xtrue = xt;
      mpe_ir_result r;
      char buf[32];
      mpe_threads_fit();   /* a team of the cores free now: a busy core would stall the solve */
      if (mpe_ir_solve(n, A, n, b, x, &o, &r) != MPE_OK)
        printf(" %9s", "error");
      else
        printf(" %9s", outcome(&r, buf));
    }
  printf("\n");
  free(b);
  free(x);
  free(xt);
}

int main(int argc, char **argv)
{
  int n = argc > 1 ? atoi(argv[1]) : 100;
  if (n < 4 || n > 2000) {
    fprintf(stderr, "usage: refine_lab [n in 4..2000]\n");
    return 2;
  }
  double *A = malloc((size_t)n * n * sizeof *A);
  printf("corrections to converge with an H100-model LU (F(code): fell back to LAPACK dgesv)\n");
  printf("%-22s %9s %9s %9s %9s %9s %9s\n", "matrix", "fp16/LU", "fp16/GM", "bf16/LU", "bf16/GM", "tf32/LU", "tf32/GM");
  for (int h = 4; h <= 12; h += 4) {
    char label[32];
    mpe_mat_hilbert(A, h, h);
    sprintf(label, "hilbert n=%d", h);
    row(label, h, A);
  }
  for (int e = 1; e <= 11; e += 2) {
    char label[32];
    mpe_mat_randsvd(A, n, n, pow(10, e), 3, 1);
    sprintf(label, "randsvd3 k=1e%d", e);
    row(label, n, A);
  }
  free(A);
  return 0;
}
