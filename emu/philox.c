/* The per-thread scalar stream of stochastic rounding (the generator itself,
   Philox4x32-10, is lib/mpei_philox.h, shared with the vector kernels and the
   GPU). */
#include "mpei.h"
#include "mpemu/convert.h"

/* The scalar stream of the calling thread: mpe_seed(s) restarts it at index 0. */
static _Thread_local uint64_t thread_seed;
static _Thread_local uint64_t thread_index;

void mpe_seed(uint64_t seed)
{
  thread_seed = seed;
  thread_index = 0;
}

uint32_t mpei_thread_sr_word(void)
{
  return mpei_sr_word(thread_seed, thread_index++);
}
