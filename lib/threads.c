/* The OpenMP team for work that starts now: one thread per core that other
   processes leave free. On a machine busy with other work a second thread
   mostly waits, spinning, for its turn on a shared core, and a team of two
   runs many times slower than one thread. */
#include "config.h"
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#ifdef _OPENMP
#include <omp.h>
#endif
#include "mpei_threads.h"

#ifdef _OPENMP
/* Threads of this process that are running or runnable now (its own OpenMP
   workers may still be spinning after an earlier parallel region), or -1. */
static int own_runnable(void)
{
  DIR *d = opendir("/proc/self/task");
  if (!d)
    return -1;
  int n = 0;
  struct dirent *e;
  while ((e = readdir(d))) {
    if (e->d_name[0] < '0' || e->d_name[0] > '9')
      continue;
    char path[64], buf[512];
    snprintf(path, sizeof path, "/proc/self/task/%.20s/stat", e->d_name);
    FILE *fp = fopen(path, "r");
    if (!fp)
      continue;
    const size_t len = fread(buf, 1, sizeof buf - 1, fp);
    fclose(fp);
    buf[len] = 0;
    const char *rp = strrchr(buf, ')');   /* the state follows the name "(...)" */
    if (rp && rp[1] == ' ' && rp[2] == 'R')
      n++;
  }
  closedir(d);
  return n;
}

/* Cores free now: the run queue of /proc/loadavg (its fourth field,
   "runnable/total") less this process's own runnable threads; the load
   averages themselves trail what runs now by minutes. 0 when none, -1 when
   unknown. */
static int free_cores(void)
{
  FILE *fp = fopen("/proc/loadavg", "r");
  if (!fp)
    return -1;
  double l1, l5, l15;
  int runnable = 0, total = 0;
  const int ok = fscanf(fp, "%lf %lf %lf %d/%d", &l1, &l5, &l15, &runnable, &total) == 5;
  fclose(fp);
  const int own = own_runnable();
  if (!ok || own < 0)
    return -1;
  const int others = runnable > own ? runnable - own : 0;
  const int spare = omp_get_num_procs() - others;
  return spare > 0 ? spare : 0;
}
#endif

#ifdef _OPENMP
/* The team that fits the free cores, kept for 50 ms per thread (a training
   loop may ask every step). */
static int fit(void)
{
  static _Thread_local struct timespec last;
  static _Thread_local int team;
  struct timespec now;
  clock_gettime(CLOCK_MONOTONIC, &now);
  const double age = (double)(now.tv_sec - last.tv_sec) + 1e-9 * (double)(now.tv_nsec - last.tv_nsec);
  if (team < 1 || age < 0 || age > 0.05) {
    const int procs = omp_get_num_procs(), spare = free_cores();
    team = spare < 0 ? procs : spare < 1 ? 1 : spare < procs ? spare : procs;
    last = now;
  }
  return team;
}

/* OMP_NUM_THREADS or OMP_DYNAMIC set: the user decides, by OpenMP's own rules */
static int user_decides(void)
{
  return getenv("OMP_NUM_THREADS") || getenv("OMP_DYNAMIC");
}
#endif

int mpe_threads_fit(void)
{
#ifdef _OPENMP
  if (user_decides())
    return omp_get_max_threads();
  const int team = fit();
  omp_set_num_threads(team);
  return team;
#else
  return 1;
#endif
}

int mpei_threads_team(void)
{
#ifdef _OPENMP
  const int max = omp_get_max_threads();
  if (user_decides())
    return max;
  const int team = fit();
  return team < max ? team : max;
#else
  return 1;
#endif
}
