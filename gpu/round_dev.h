/* Rounding of one binary32 value to a format, in integer arithmetic only, so
   that the same source gives the same bits on the GPU (nvcc) and on the host
   (gcc). The GPU kernel of mpe_gpu_round_f32 calls it; tests/check_gpu.c
   compiles it on the host and checks it against mpe_round_f32 for every format
   and mode, so its arithmetic is proven without a device.

   The method is that of emu/round_kernel.h, one lane at a time, with the
   rounding position taken from the true exponent of the input so that formats
   whose emin lies below binary32's (custom formats) are handled too. */
#ifndef MPEI_GPU_ROUND_DEV_H
#define MPEI_GPU_ROUND_DEV_H
#include <stdint.h>
#include "../lib/mpei_philox.h"
#include "../lib/mpei_round_core.h"

#ifdef __CUDACC__
#define MPEI_GPU_HD __host__ __device__ __forceinline__
#else
#define MPEI_GPU_HD static inline
#endif

/* Everything the kernel needs about (format, options), precomputed on the host:
   the rounding core's plan (lib/mpei_round_core.h). */
typedef mpei_round_plan mpei_gpu_plan;

/* The flag bits are those of mpemu/core.h (MPE_FLAG_*); repeated here so that
   the header needs nothing from the library when nvcc compiles it. */
enum {
  MPEI_GPU_FL_INEXACT = 1u << 0, MPEI_GPU_FL_UNDERFLOW = 1u << 1, MPEI_GPU_FL_OVERFLOW = 1u << 2,
  MPEI_GPU_FL_INVALID = 1u << 3, MPEI_GPU_FL_SATURATED = 1u << 4, MPEI_GPU_FL_FLUSHED = 1u << 5
};
/* Rounding modes: MPEI_RC_* (lib/mpei_round_core.h), in the order of mpe_round. */

/* Philox4x32-10, the generator of emu/ (one source: lib/mpei_philox.h):
   word `index % 4` of the block at counter index / 4. */
MPEI_GPU_HD uint32_t mpei_gpu_sr_word(uint64_t seed, uint64_t index)
{
  return mpei_sr_word(seed, index);
}

MPEI_GPU_HD int mpei_gpu_top_bit(uint32_t v)   /* v != 0 */
{
  int b = 0;
  while (v >> 1) {
    v >>= 1;
    b++;
  }
  return b;
}

/* The rounded value of binary32 bits u; rnd is the random word of the element
   (stochastic modes). Flags are OR-ed into *fl. */
MPEI_GPU_HD uint32_t mpei_gpu_round_bits(uint32_t u, const mpei_gpu_plan *pl, uint32_t rnd, unsigned *fl)
{
  const uint32_t a = u & 0x7fffffffu, s = u & 0x80000000u;
  const int neg = s != 0;
  if (a >= 0x7f800000u) {
    if (a > 0x7f800000u) {                    /* NaN: quiet, sign kept, canonical payload */
      if (!(a & 0x400000u))
        *fl |= MPEI_GPU_FL_INVALID;
      return 0x7fc00000u | s;
    }
    if (pl->saturate)
      *fl |= MPEI_GPU_FL_SATURATED;
    else if (!pl->has_inf)
      *fl |= MPEI_GPU_FL_INVALID;
    return pl->inf_bits | s;
  }
  if (a == 0)
    return u;
  const int32_t E = (int32_t)(a >> 23);
  const int32_t Eeff = E ? E : 1;
  const uint64_t M = (a & 0x7fffffu) | (E ? 0x800000u : 0);
  const int32_t e = E ? E - 127 : mpei_gpu_top_bit((uint32_t)M) - 149;
  const int32_t qe = (e > pl->emin ? e : pl->emin) - pl->p + 1;
  int32_t d = qe - (Eeff - 150);              /* bits of M below the quantum */
  uint32_t res;
  int inex = 0;
  if (d <= 0) {
    res = a;
  } else {
    const int32_t dc = d > 40 ? 40 : d;       /* M < 2^24: the same t, rem and half as any larger d */
    const uint64_t one_d = (uint64_t)1 << dc, half = one_d >> 1;
    const uint64_t t = M >> dc, rem = M & (one_d - 1);
    inex = rem != 0;
    /* MPE_SR: P(up) = rem / 2^d, up when rnd < floor(rem * 2^(32-d)), d unclamped */
    const uint64_t up = MPEI_ROUND_UP(pl->mode, inex, rem > half, rem == half, (int)(t & 1), neg,
                                      (uint64_t)rnd < (d <= 32 ? rem << (32 - d) : d < 64 ? rem >> (d - 32) : 0),
                                      (int)(rnd >> 31));
    const uint64_t R = t + up;
    if (dc >= 24)                             /* below the quantum: 0 or the format's min subnormal */
      res = R ? pl->minsub_bits : 0;
    else
      res = (uint32_t)(((uint64_t)(Eeff - 1) << 23) + (R << dc));
  }
  int ovf = res > pl->max_bits;
  if (ovf) {
    int to_max = MPEI_ROUND_TO_MAX(pl->mode, neg, 1);
    if (pl->saturate)
      to_max = 1;
    res = to_max ? pl->max_bits : pl->ovf_bits;
    *fl |= MPEI_GPU_FL_OVERFLOW | MPEI_GPU_FL_INEXACT;
    if (pl->saturate)
      *fl |= MPEI_GPU_FL_SATURATED;
  }
  if (pl->flush && res != 0 && res < pl->minnorm_bits) {
    res = 0;
    *fl |= MPEI_GPU_FL_FLUSHED | MPEI_GPU_FL_UNDERFLOW | MPEI_GPU_FL_INEXACT;
  }
  if (inex) {
    *fl |= MPEI_GPU_FL_INEXACT;
    if (a < (neg ? pl->tiny_neg : pl->tiny_pos))
      *fl |= MPEI_GPU_FL_UNDERFLOW;
  }
  return res | s;
}

#if !defined(__CUDACC__) && defined(MPEI_H)
/* Host side: the plan of (format, options), from the one builder. Needs
   lib/mpei.h (struct mpe_format) and <math.h>, <float.h>. */
#include "../lib/mpei_round_plan.h"
static inline void mpei_gpu_plan_make(mpei_gpu_plan *pl, const struct mpe_format *f, const mpe_round_opts *o)
{
  mpei_round_plan_make(pl, f, o);
}
#endif
#endif
