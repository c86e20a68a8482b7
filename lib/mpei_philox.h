/* Philox4x32-10 (Salmon et al., SC11), the counter-based generator cuRAND uses,
   written once for every user: the scalar streams of emu/ (philox.c, the
   array oracle), the GPU kernels (nvcc, through gpu/round_dev.h) and the vector
   kernels (round_kernel.h, elementwise_kernel.h), which run MPEI_PHILOX_ROUND
   on 64-bit lanes. Stochastic rounding of element i draws word i%4 of the
   block at counter i/4 (mod 2^62) under key = seed, so a result depends only
   on (seed, i). Plain C99/C++: no library header is needed. */
#ifndef MPEI_PHILOX_H
#define MPEI_PHILOX_H
#include <stdint.h>

#ifdef __CUDACC__
#define MPEI_HD __host__ __device__ __forceinline__
#else
#define MPEI_HD static inline
#endif

#define MPEI_PHILOX_M0 0xD2511F53u
#define MPEI_PHILOX_M2 0xCD9E8D57u
#define MPEI_PHILOX_W0 0x9E3779B9u
#define MPEI_PHILOX_W1 0xBB67AE85u

/* One round on a state held in 64-bit lanes (scalars or GCC vectors): MUL(c, m)
   is the 64-bit product of the low 32 bits of c and m (vpmuludq on vectors), so
   the upper halves of c0..c3 may carry junk; only the low halves are words of
   the state. K0, K1: the round keys (32-bit values). */
#define MPEI_PHILOX_ROUND(MUL, T, c0, c1, c2, c3, m0, m2, K0, K1) \
  do {                                                            \
    T p0_ = MUL(c0, m0), p2_ = MUL(c2, m2);                       \
    c0 = (p2_ >> 32) ^ c1 ^ (K0);                                 \
    c2 = (p0_ >> 32) ^ c3 ^ (K1);                                 \
    c1 = p2_;                                                     \
    c3 = p0_;                                                     \
  } while (0)

#define MPEI_PHILOX_MUL64(c, m) ((uint64_t)(uint32_t)(c) * (uint64_t)(m))

/* The four words of the block at `counter` under `key`. */
MPEI_HD void mpei_philox_block(uint64_t counter, uint64_t key, uint32_t out[4])
{
  uint64_t c0 = counter, c1 = counter >> 32, c2 = 0, c3 = 0;
  uint32_t k0 = (uint32_t)key, k1 = (uint32_t)(key >> 32);
  for (int r = 0; r < 10; r++) {
    MPEI_PHILOX_ROUND(MPEI_PHILOX_MUL64, uint64_t, c0, c1, c2, c3, MPEI_PHILOX_M0, MPEI_PHILOX_M2, k0, k1);
    k0 += MPEI_PHILOX_W0;
    k1 += MPEI_PHILOX_W1;
  }
  out[0] = (uint32_t)c0;
  out[1] = (uint32_t)c1;
  out[2] = (uint32_t)c2;
  out[3] = (uint32_t)c3;
}

/* The 32-bit random word of stochastic element `index` under `seed` (a switch,
   not an indexed array, so that nvcc keeps the words in registers). */
MPEI_HD uint32_t mpei_sr_word(uint64_t seed, uint64_t index)
{
  uint32_t w[4];
  mpei_philox_block(index >> 2, seed, w);
  switch (index & 3) {
  case 0: return w[0];
  case 1: return w[1];
  case 2: return w[2];
  default: return w[3];
  }
}
#endif
