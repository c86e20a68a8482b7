/* make bench: the integer tensor-core models (mpe_tc_int(3)) against OpenBLAS
   SGEMM on the same shape. OpenBLAS has no integer GEMM, so the reference is
   the FP32 rate: each row gives the medians of mpe_gemm (int8/int4 operands,
   int32 C) and of cblas_sgemm (binary32 operands of the same values), and the
   ratio t(cblas_sgemm) / t(model), the median of back-to-back pairs; above 1
   the emulated integer GEMM is faster than the machine's own FP32 GEMM. The
   rate column counts 2mnk operations per second of the model. */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <cblas.h>
#include <mpemu.h>

static double now(void)
{
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

/* let the OpenBLAS and OpenMP worker threads go to sleep between timings */
static void settle(void)
{
  struct timespec t = { 0, 150000000L };
  nanosleep(&t, NULL);
}

static double median(double *v, int n)
{
  for (int i = 1; i < n; i++)
    for (int j = i; j > 0 && v[j - 1] > v[j]; j--) {
      double t = v[j]; v[j] = v[j - 1]; v[j - 1] = t;
    }
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

int main(void)
{
  static const struct { const char *name; mpe_type in; int sat; } rows[] = {
    { "a100", MPE_INT8, 0 }, { "a100", MPE_INT8, 1 }, { "h100", MPE_UINT8, 0 }, { "t4", MPE_INT8, 1 },
    { "a100", MPE_INT4, 0 }, { "t4", MPE_UINT4, 1 },
  };
  static const int shapes[][3] = { { 1024, 1024, 1024 }, { 2048, 2048, 2048 }, { 4096, 1024, 4096 } };
  printf("\nmpe_gemm integer models (int32 C, alpha 1, beta 0) vs OpenBLAS cblas_sgemm on the same shape, %s\n",
         mpe_cpu_features());
  printf("%-6s %-5s %-4s %16s %9s %9s %8s %7s\n", "model", "input", "acc", "m x n x k", "model s", "sgemm s",
         "Gop/s", "ratio");
  for (size_t si = 0; si < sizeof shapes / sizeof shapes[0]; si++) {
    int m = shapes[si][0], n = shapes[si][1], k = shapes[si][2];
    float *a = malloc((size_t)m * k * 4), *b = malloc((size_t)k * n * 4), *c = malloc((size_t)m * n * 4);
    int8_t *a8 = malloc((size_t)m * k), *b8 = malloc((size_t)k * n);
    int32_t *ci = malloc((size_t)m * n * 4);
    if (!a || !b || !c || !a8 || !b8 || !ci)
      return 1;
    uint64_t s = 12345;
    int reps = m * (double)n * k <= 2e9 ? 5 : 3;
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, m, n, k, 1.0f, a, k, b, n, 0.0f, c, n);
    for (size_t ri = 0; ri < sizeof rows / sizeof rows[0]; ri++) {
      if (si > 0 && ri > 1 && ri != 4)
        continue;   /* the larger shapes for a100 int8 wrap/sat and int4 only: keeps the run short */
      mpe_type t = rows[ri].in;
      int lo = t == MPE_INT8 ? -128 : t == MPE_INT4 ? -8 : 0, hi = t == MPE_INT8 ? 127 : t == MPE_INT4 ? 7 : t == MPE_UINT8 ? 255 : 15;
      for (size_t i = 0; i < (size_t)m * k; i++) {
        s = s * 6364136223846793005ull + 1442695040888963407ull;
        int v = lo + (int)((s >> 33) % (uint64_t)(hi - lo + 1));
        a8[i] = (int8_t)v;
        a[i] = (float)v;
      }
      for (size_t i = 0; i < (size_t)k * n; i++) {
        s = s * 6364136223846793005ull + 1442695040888963407ull;
        int v = lo + (int)((s >> 33) % (uint64_t)(hi - lo + 1));
        b8[i] = (int8_t)v;
        b[i] = (float)v;
      }
      const mpe_tc_model *m0 = mpe_tc_model_get(rows[ri].name, t);
      mpe_tc_model *mc = NULL;
      const mpe_tc_model *md = m0;
      if (rows[ri].sat) {
        mpe_tc_params p;
        mpe_tc_model_params(m0, &p);
        p.satfinite = 1;
        if (mpe_tc_model_custom(&mc, &p))
          return 1;
        md = mc;
      }
      double tms[5], tss[5], rat[5];
      for (int r = 0; r < reps; r++) {
        settle();
        double t0 = now();
        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, m, n, k, 1.0f, a, k, b, n, 0.0f, c, n);
        tss[r] = now() - t0;
        settle();
        t0 = now();
        int rc = mpe_gemm(md, MPE_ROW_MAJOR, MPE_NO_TRANS, MPE_NO_TRANS, m, n, k, 1.0f, a8, t, k, b8, t, n, 0.0f,
                          ci, MPE_INT32, n);
        tms[r] = now() - t0;
        if (rc) {
          fprintf(stderr, "mpe_gemm %s %s: %s\n", rows[ri].name, mpe_type_name(t), mpe_strerror(rc));
          return 1;
        }
        rat[r] = tss[r] / tms[r];
      }
      double tm = median(tms, reps), ts = median(tss, reps);
      char shp[32];
      snprintf(shp, sizeof shp, "%dx%dx%d", m, n, k);
      printf("%-6s %-5s %-4s %16s %9.3f %9.3f %8.1f %7.3f\n", rows[ri].name, mpe_type_name(t),
             rows[ri].sat ? "sat" : "wrap", shp, tm, ts, 2.0 * m * n * k / tm * 1e-9, median(rat, reps));
      mpe_tc_model_free(mc);
    }
    free(a); free(b); free(c); free(a8); free(b8); free(ci);
  }
  return 0;
}
