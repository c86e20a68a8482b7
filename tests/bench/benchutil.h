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
#endif
