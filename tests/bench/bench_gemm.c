/* make bench: tensor-core GEMM models against OpenBLAS SGEMM on the same data,
   all cores. Each row: seconds of the model's mpe_gemm and of cblas_sgemm
   (medians), and the ratio t(cblas_sgemm) / t(model): the median of the
   ratios of runs made one right after the other, so that a machine shared
   with other work slows both alike. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <cblas.h>
#include <mpemu.h>

static double now(void)
{
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static double frand(uint64_t *s)
{
  *s = *s * 6364136223846793005ull + 1442695040888963407ull;
  return (double)(*s >> 11) * 0x1p-53;
}

static double median(double *v, int n)
{
  for (int i = 1; i < n; i++)
    for (int j = i; j > 0 && v[j - 1] > v[j]; j--) {
      double t = v[j]; v[j] = v[j - 1]; v[j - 1] = t;
    }
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

typedef struct { const char *name; mpe_type in; const char *target; double want; } row;

int main(void)
{
  static const row rows[] = {
    { "fma-chain", MPE_FP16, ">= 0.5", 0.5 }, { "h100", MPE_FP16, ">= 0.2", 0.2 },
    { "a100", MPE_FP16, ">= 0.2", 0.2 }, { "v100", MPE_FP16, ">= 0.15", 0.15 },
    { "h100", MPE_BF16, "", 0 }, { "a100", MPE_BF16, "", 0 }, { "h100", MPE_TF32, "", 0 },
    { "a100", MPE_TF32, "", 0 }, { "h100", MPE_E4M3, "", 0 }, { "ada", MPE_E5M2, "", 0 }, { "b200", MPE_E4M3, "", 0 },
  };
  const int sizes[] = { 1024, 2048 };
  printf("mpe_gemm (tensor-core models) vs OpenBLAS cblas_sgemm, square n×n×n, FP32 output, %s\n",
         mpe_cpu_features());
  printf("%-10s %-5s %5s %9s %9s %7s  %s\n", "model", "input", "n", "model s", "sgemm s", "ratio",
         "target");
  int failed = 0;
  for (size_t si = 0; si < sizeof sizes / sizeof sizes[0]; si++) {
    int n = sizes[si];
    size_t nn = (size_t)n * n;
    float *a = malloc(nn * 4), *b = malloc(nn * 4), *c = malloc(nn * 4);
    uint16_t *a16 = malloc(nn * 2), *b16 = malloc(nn * 2);
    uint8_t *a8 = malloc(nn), *b8 = malloc(nn);
    if (!a || !b || !c || !a16 || !b16 || !a8 || !b8)
      return 1;
    uint64_t s = 12345;
    for (size_t i = 0; i < nn; i++) {
      a[i] = (float)(2 * frand(&s) - 1);
      b[i] = (float)(2 * frand(&s) - 1);
    }
    int reps = n <= 1024 ? 7 : 3;
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, n, n, n, 1.0f, a, n, b, n, 0.0f, c, n);
    for (size_t ri = 0; ri < sizeof rows / sizeof rows[0]; ri++) {
      const row *w = &rows[ri];
      if (n > 1024 && w->want == 0)
        continue;   /* the other inputs at n = 1024 only: keeps the run short */
      const mpe_tc_model *m = mpe_tc_model_get(w->name, w->in);
      const void *pa = a, *pb = b;
      mpe_type t = MPE_FP32;
      if (w->in == MPE_FP16 || w->in == MPE_BF16) {
        for (size_t i = 0; i < nn; i++) {
          a16[i] = w->in == MPE_FP16 ? mpe_fp32_to_fp16(a[i], MPE_RNE) : mpe_fp32_to_bf16(a[i], MPE_RNE);
          b16[i] = w->in == MPE_FP16 ? mpe_fp32_to_fp16(b[i], MPE_RNE) : mpe_fp32_to_bf16(b[i], MPE_RNE);
        }
        pa = a16; pb = b16; t = w->in;
      } else if (w->in == MPE_E4M3 || w->in == MPE_E5M2) {
        for (size_t i = 0; i < nn; i++) {
          a8[i] = w->in == MPE_E4M3 ? mpe_fp32_to_e4m3(a[i], MPE_RNE, 1) : mpe_fp32_to_e5m2(a[i], MPE_RNE, 1);
          b8[i] = w->in == MPE_E4M3 ? mpe_fp32_to_e4m3(b[i], MPE_RNE, 1) : mpe_fp32_to_e5m2(b[i], MPE_RNE, 1);
        }
        pa = a8; pb = b8; t = w->in;
      }
      double tms[9], tss[9], rat[9];
      for (int r = 0; r < reps; r++) {
        double t0 = now();
        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, n, n, n, 1.0f, a, n, b, n, 0.0f, c, n);
        tss[r] = now() - t0;
        t0 = now();
        int rc = mpe_gemm(m, MPE_ROW_MAJOR, MPE_NO_TRANS, MPE_NO_TRANS, n, n, n, 1.0f, pa, t, n, pb, t, n,
                          0.0f, c, MPE_FP32, n);
        tms[r] = now() - t0;
        if (rc) {
          fprintf(stderr, "mpe_gemm %s: %s\n", w->name, mpe_strerror(rc));
          return 1;
        }
        rat[r] = tss[r] / tms[r];
      }
      double tm = median(tms, reps), ts = median(tss, reps);
      double ratio = median(rat, reps);
      const char *verdict = w->want == 0 ? "" : ratio >= w->want ? " met" : " NOT MET";
      if (w->want > 0 && ratio < w->want)
        failed++;
      printf("%-10s %-5s %5d %9.3f %9.3f %7.3f  %s%s\n", w->name, mpe_type_name(w->in), n, tm, ts,
             ratio, w->target, verdict);
    }
    free(a); free(b); free(c); free(a16); free(b16); free(a8); free(b8);
  }
  printf("%d target(s) not met\n", failed);
  return 0;
}
