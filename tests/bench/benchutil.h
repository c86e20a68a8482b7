/* Small helpers shared by the benchmarks. */
#ifndef MPE_BENCHUTIL_H
#define MPE_BENCHUTIL_H
#include <time.h>

static inline double bench_now(void)
{
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* best of `reps` timings of a statement */
#define BENCH_BEST(reps, result, stmt)                 \
  do {                                                 \
    double best_ = 1e30;                               \
    for (int r_ = 0; r_ < (reps); r_++) {              \
      double t0_ = bench_now();                        \
      stmt;                                            \
      double t_ = bench_now() - t0_;                   \
      if (t_ < best_)                                  \
        best_ = t_;                                    \
    }                                                  \
    (result) = best_;                                  \
  } while (0)
/* let the OpenBLAS and OpenMP worker threads go to sleep between timings */
static inline void bench_settle(void)
{
  struct timespec t = { 0, 100000000L };
  nanosleep(&t, NULL);
}

/* the median of v[0..n) (sorts v) */
static inline double bench_median(double *v, int n)
{
  for (int i = 1; i < n; i++)
    for (int j = i; j > 0 && v[j - 1] > v[j]; j--) {
      double t = v[j]; v[j] = v[j - 1]; v[j - 1] = t;
    }
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}
#endif
