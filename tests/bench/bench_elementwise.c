/* make bench: element-wise add and exp rounded to FP16/BF16 over a 64 Mi-element
   binary32 array, as a ratio to the same loop in plain binary32 (z = x + y;
   y = expf(x) from libm, OpenMP over the same threads). Ratio = binary32 time /
   mpemu time: 1.0 means as fast as plain binary32, higher is faster.
   A second table: the other operations in FP16 on all threads, each against
   its binary32 loop (x*y, x/y, fmaf, sqrtf, tanhf, 1/(1+expf(-x))). */
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

#ifdef _OPENMP
#define F32_LOOP(name, expr)                                                   \
  static void name(float *w, const float *x, const float *y, const float *z, size_t len) \
  {                                                                            \
    _Pragma("omp parallel for schedule(static)")                              \
    for (size_t i = 0; i < len; i++)                                           \
      w[i] = (expr);                                                           \
  }
#else
#define F32_LOOP(name, expr)                                                   \
  static void name(float *w, const float *x, const float *y, const float *z, size_t len) \
  {                                                                            \
    for (size_t i = 0; i < len; i++)                                           \
      w[i] = (expr);                                                           \
  }
#endif
F32_LOOP(mul_f32, x[i] * y[i])
F32_LOOP(div_f32, x[i] / y[i])
F32_LOOP(fma_f32, fmaf(x[i], y[i], z[i]))
F32_LOOP(sqrt_f32, sqrtf(x[i]))
F32_LOOP(tanh_f32, tanhf(x[i]))
F32_LOOP(sigmoid_f32, 1.0f / (1.0f + expf(-x[i])))

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
          /* issue 13's targets: one thread, stochastic rounding, add >= 0.6x and exp >= 0.4x binary32 */
          const double goal = threads[ti] == 1 && modes[b] == MPE_SR ? (op ? 0.4 : 0.6) : 0;
          printf("%-4s %-6s %-5s %8d %12.0f %14.0f %10.3f", op ? "exp" : "add", mpe_type_name(types[a]),
                 mpe_round_name(modes[b]), threads[ti], n / t * 1e-6, n / tref * 1e-6, tref / t);
          if (goal > 0)
            printf("  >= %.2f %s", goal, tref / t >= goal ? "met" : "NOT met");
          printf("\n");
        }
  }
  /* the other operations, FP16, all threads */
#ifdef _OPENMP
  omp_set_num_threads(maxt);
#endif
  float *w = malloc(n * 4), *ax = malloc(n * 4);
  if (!w || !ax) {
    fprintf(stderr, "bench_elementwise: out of memory\n");
    return 1;
  }
  for (size_t i = 0; i < n; i++) {
    ax[i] = fabsf(x[i]);
    z[i] = 0.5f * y[i];
  }
  printf("\n%-7s %-5s %-5s %8s %12s %14s %10s\n", "op", "format", "mode", "threads", "mpemu Melem/s",
         "binary32 Melem/s", "ratio");
  static const char *const names[] = { "mul", "div", "fma", "sqrt", "tanh", "sigmoid" };
  const mpe_format *h = mpe_format_of(MPE_FP16);
  for (int op = 0; op < 6; op++) {
    double tref;
    switch (op) {
    case 0: BENCH_BEST(3, tref, mul_f32(w, x, y, z, n)); break;
    case 1: BENCH_BEST(3, tref, div_f32(w, x, y, z, n)); break;
    case 2: BENCH_BEST(3, tref, fma_f32(w, x, y, z, n)); break;
    case 3: BENCH_BEST(3, tref, sqrt_f32(w, ax, y, z, n)); break;
    case 4: BENCH_BEST(3, tref, tanh_f32(w, x, y, z, n)); break;
    default: BENCH_BEST(3, tref, sigmoid_f32(w, x, y, z, n)); break;
    }
    for (size_t b = 0; b < sizeof modes / sizeof modes[0]; b++) {
      mpe_round_opts o = { modes[b], 0, 0, 42, 0 };
      double t;
      switch (op) {
      case 0: BENCH_BEST(3, t, mpe_ew_mul(w, x, y, n, h, &o)); break;
      case 1: BENCH_BEST(3, t, mpe_ew_div(w, x, y, n, h, &o)); break;
      case 2: BENCH_BEST(3, t, mpe_ew_fma(w, x, y, z, n, h, &o)); break;
      case 3: BENCH_BEST(3, t, mpe_ew_sqrt(w, ax, n, h, &o)); break;
      case 4: BENCH_BEST(3, t, mpe_ew_tanh(w, x, n, h, &o)); break;
      default: BENCH_BEST(3, t, mpe_ew_sigmoid(w, x, n, h, &o)); break;
      }
      printf("%-7s %-6s %-5s %8d %12.0f %14.0f %10.3f\n", names[op], "fp16", mpe_round_name(modes[b]), maxt,
             n / t * 1e-6, n / tref * 1e-6, tref / t);
    }
  }
  free(w);
  free(ax);
  free(x);
  free(y);
  free(z);
  return 0;
}
