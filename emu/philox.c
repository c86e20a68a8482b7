/* Philox4x32-10 (Salmon et al., SC11), the counter-based generator cuRAND uses.
   Stochastic rounding of element i draws word i%4 of the block at counter i/4
   under key = seed, so the result depends only on (seed, i). */
#include "mpei.h"
#include "mpemu/convert.h"

mpei_philox_out mpei_philox4x32_10(uint64_t counter, uint64_t key)
{
  uint32_t c0 = (uint32_t)counter, c1 = (uint32_t)(counter >> 32), c2 = 0, c3 = 0;
  uint32_t k0 = (uint32_t)key, k1 = (uint32_t)(key >> 32);
  for (int round = 0; round < 10; round++) {
    uint64_t p0 = (uint64_t)0xD2511F53u * c0;
    uint64_t p1 = (uint64_t)0xCD9E8D57u * c2;
    uint32_t n0 = (uint32_t)(p1 >> 32) ^ c1 ^ k0;
    uint32_t n1 = (uint32_t)p1;
    uint32_t n2 = (uint32_t)(p0 >> 32) ^ c3 ^ k1;
    uint32_t n3 = (uint32_t)p0;
    c0 = n0; c1 = n1; c2 = n2; c3 = n3;
    k0 += 0x9E3779B9u;
    k1 += 0xBB67AE85u;
  }
  mpei_philox_out o = { { c0, c1, c2, c3 } };
  return o;
}

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
