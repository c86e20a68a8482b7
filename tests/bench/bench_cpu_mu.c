/* make bench: the CPU dot-product models (mpe_tc_model_get(3), "CPU models")
   three ways on the same data in the same run: mpe_gemm with the model (the
   emulation), mpe_cpu_gemm (the instruction itself, "-" where this CPU lacks
   it) and OpenBLAS cblas_sgemm on the binary32 values. Square n×n×n, row-major,
   alpha 1, beta 0; medians of back-to-back runs. $MPE_BENCH_CPU_N: n (default
   384). The ratio columns are t(cblas_sgemm) / t(row). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <cblas.h>
#include <mpemu.h>
#include "benchutil.h"

int main(void)
{
  static const struct { const char *name; mpe_type in, at, bt; } rows[] = {
    { "avx512-bf16", MPE_BF16, MPE_BF16, MPE_BF16 }, { "amx-bf16", MPE_BF16, MPE_BF16, MPE_BF16 },
    { "amx-fp16", MPE_FP16, MPE_FP16, MPE_FP16 }, { "amx-int8", MPE_INT8, MPE_INT8, MPE_INT8 },
    { "avx512-vnni", MPE_UINT8, MPE_UINT8, MPE_INT8 }, { "avx-vnni", MPE_UINT8, MPE_UINT8, MPE_INT8 },
  };
  const char *e = getenv("MPE_BENCH_CPU_N");
  const int n = e && atoi(e) > 0 ? atoi(e) : 384, reps = 3;
  const size_t nn = (size_t)n * n;
  float *a = malloc(nn * 4), *b = malloc(nn * 4), *c = malloc(nn * 4), *cf = malloc(nn * 4);
  uint16_t *a16 = malloc(nn * 2), *b16 = malloc(nn * 2);
  uint8_t *a8 = malloc(nn), *b8 = malloc(nn);
  int32_t *ci = malloc(nn * 4);
  if (!a || !b || !c || !cf || !a16 || !b16 || !a8 || !b8 || !ci)
    return 1;
  printf("\nCPU dot-product models: mpe_gemm (model) and mpe_cpu_gemm (the instruction) vs OpenBLAS "
         "cblas_sgemm, n = %d, %s\n", n, mpe_cpu_features());
  printf("%-12s %-5s %9s %9s %9s %9s %9s  %s\n", "model", "input", "model s", "hw s", "sgemm s", "sg/model",
         "sg/hw", "hw = model");
  for (size_t ri = 0; ri < sizeof rows / sizeof rows[0]; ri++) {
    const mpe_type in = rows[ri].in;
    const int is_int = in == MPE_INT8 || in == MPE_UINT8;
    uint64_t s = 42 + ri;
    for (size_t i = 0; i < 2 * nn; i++) {
      s = s * 6364136223846793005ull + 1442695040888963407ull;
      const int lo = is_int ? ((i < nn ? rows[ri].at : rows[ri].bt) == MPE_INT8 ? -128 : 0) : 0;
      float v;
      if (is_int) {
        v = (float)(lo + (int)((s >> 33) % 256));
        (i < nn ? a8 : b8)[i % nn] = (uint8_t)(int)v;
      } else {
        v = (float)((double)(s >> 11) * 0x1p-53 * 2.0 - 1.0);
        uint16_t h = in == MPE_BF16 ? mpe_fp32_to_bf16(v, MPE_RNE) : mpe_fp32_to_fp16(v, MPE_RNE);
        (i < nn ? a16 : b16)[i % nn] = h;
        v = in == MPE_BF16 ? mpe_bf16_to_fp32(h) : mpe_fp16_to_fp32(h);
      }
      (i < nn ? a : b)[i % nn] = v;
    }
    const mpe_tc_model *m = mpe_tc_model_get(rows[ri].name, in);
    const void *A = is_int ? (const void *)a8 : (const void *)a16, *B = is_int ? (const void *)b8 : (const void *)b16;
    void *C = is_int ? (void *)ci : (void *)c;
    const mpe_type ct = is_int ? MPE_INT32 : MPE_FP32;
    double tm[3], th[3], ts[3];
    int hw = 1, same = 1;
    for (int r = 0; r < reps; r++) {
      bench_settle();
      double t0 = bench_now();
      cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, n, n, n, 1.0f, a, n, b, n, 0.0f, cf, n);
      ts[r] = bench_now() - t0;
      bench_settle();
      t0 = bench_now();
      if (mpe_gemm(m, MPE_ROW_MAJOR, MPE_NO_TRANS, MPE_NO_TRANS, n, n, n, 1.0f, A, rows[ri].at, n, B, rows[ri].bt, n,
                   0.0f, C, ct, n)) {
        fprintf(stderr, "mpe_gemm %s failed\n", rows[ri].name);
        return 1;
      }
      tm[r] = bench_now() - t0;
      void *keep = malloc(nn * 4);
      if (!keep)
        return 1;
      memcpy(keep, C, nn * 4);
      bench_settle();
      t0 = bench_now();
      int rc = mpe_cpu_gemm(m, MPE_ROW_MAJOR, MPE_NO_TRANS, MPE_NO_TRANS, n, n, n, 1.0f, A, rows[ri].at, n, B,
                            rows[ri].bt, n, 0.0f, C, ct, n);
      th[r] = bench_now() - t0;
      hw = rc == MPE_OK;
      if (hw && memcmp(keep, C, nn * 4))
        same = 0;
      free(keep);
      if (rc && rc != MPE_EUNSUP) {
        fprintf(stderr, "mpe_cpu_gemm %s: %s\n", rows[ri].name, mpe_strerror(rc));
        return 1;
      }
    }
    const double M = bench_median(tm, reps), H = bench_median(th, reps), S = bench_median(ts, reps);
    char hs[16] = "-", hr[16] = "-";
    if (hw) {
      snprintf(hs, sizeof hs, "%.4f", H);
      snprintf(hr, sizeof hr, "%.3f", S / H);
    }
    printf("%-12s %-5s %9.4f %9s %9.4f %9.3f %9s  %s\n", rows[ri].name, mpe_type_name(in), M, hs, S, S / M, hr,
           hw ? (same ? "yes" : "NO") : "-");
    if (hw && !same)
      return 1;
  }
  free(a); free(b); free(c); free(cf); free(a16); free(b16); free(a8); free(b8); free(ci);
  return 0;
}
