/* make bench: element-wise add and exp rounded to FP16/BF16 over a 64 Mi-element
   binary32 array, as a ratio to the same loop in plain binary32 (z = x + y;
   y = expf(x) from libm, OpenMP over the same threads). Ratio = binary32 time /
   mpemu time: 1.0 means as fast as plain binary32, higher is faster. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#ifdef _OPENMP
#include <omp.h>
#endif
#include <mpemu.h>
#include "benchutil.h"

static size_t n = (size_t)64 << 20;

static void add_f32(float *z, const float *x, const float *y, size_t len)
{
#ifdef _OPENMP
#pragma omp parallel for schedule(static)
#endif
  for (size_t i = 0; i < len; i++)
    z[i] = x[i] + y[i];
}

static void exp_f32(float *y, const float *x, size_t len)
{
#ifdef _OPENMP
#pragma omp parallel for schedule(static)
#endif
  for (size_t i = 0; i < len; i++)
    y[i] = expf(x[i]);
}

int main(int argc, char **argv)
{
  if (argc > 1)
    n = strtoull(argv[1], NULL, 0);
  float *x = malloc(n * 4), *y = malloc(n * 4), *z = malloc(n * 4);
  if (!x || !y || !z) {
    fprintf(stderr, "bench_elementwise: out of memory\n");
    return 1;
  }
  uint64_t s = 88172645463325252ull;
  for (size_t i = 0; i < n; i++) {
    s ^= s << 13; s ^= s >> 7; s ^= s << 17;
    x[i] = (float)((double)(s >> 11) * 0x1p-53 * 20.0 - 10.0);
    y[i] = (float)((double)(s & 0xffffff) * 0x1p-24 * 4.0 - 2.0);
  }
  memset(z, 0, n * 4);
#ifdef _OPENMP
  int maxt = omp_get_max_threads();
#else
  int maxt = 1;
#endif
  printf("\nElement-wise functions, %zu Mi binary32 elements (%s); ratio = binary32 time / mpemu time\n",
         n >> 20, mpe_cpu_features());
  printf("%-4s %-5s %-5s %8s %12s %14s %10s\n", "op", "format", "mode", "threads", "mpemu Melem/s",
         "binary32 Melem/s", "ratio");
  static const mpe_type types[] = { MPE_FP16, MPE_BF16 };
  static const mpe_round modes[] = { MPE_RNE, MPE_SR };
  int threads[2] = { 1, maxt };
  for (int ti = 0; ti < (maxt > 1 ? 2 : 1); ti++) {
#ifdef _OPENMP
    omp_set_num_threads(threads[ti]);
#endif
    double tadd, texp;
    BENCH_BEST(3, tadd, add_f32(z, x, y, n));
    BENCH_BEST(3, texp, exp_f32(z, x, n));
    for (int op = 0; op < 2; op++)
      for (size_t a = 0; a < sizeof types / sizeof types[0]; a++)
        for (size_t b = 0; b < sizeof modes / sizeof modes[0]; b++) {
          const mpe_format *f = mpe_format_of(types[a]);
          mpe_round_opts o = { modes[b], 0, 0, 42, 0 };
          double t, tref = op ? texp : tadd;
          if (op)
            BENCH_BEST(3, t, mpe_ew_exp(z, x, n, f, &o));
          else
            BENCH_BEST(3, t, mpe_ew_add(z, x, y, n, f, &o));
          printf("%-4s %-6s %-5s %8d %12.0f %14.0f %10.3f\n", op ? "exp" : "add", mpe_type_name(types[a]),
                 mpe_round_name(modes[b]), threads[ti], n / t * 1e-6, n / tref * 1e-6, tref / t);
        }
  }
  free(x);
  free(y);
  free(z);
  return 0;
}
