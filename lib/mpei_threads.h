/* Internal: the OpenMP team of a library kernel (lib/threads.c). */
#ifndef MPEI_THREADS_H
#define MPEI_THREADS_H
#include "mpei.h"

/* The team for a kernel that starts now: the cores other processes leave
   free (as mpe_threads_fit(3) counts them), at most omp_get_max_threads();
   with OMP_NUM_THREADS or OMP_DYNAMIC set, omp_get_max_threads(). Unlike
   mpe_threads_fit, it leaves the caller's OpenMP settings alone. 1 without
   OpenMP. */
MPEI_HIDDEN int mpei_threads_team(void);
#endif
