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

#ifdef __CUDACC__
#define MPEI_GPU_HD __host__ __device__ __forceinline__
#else
#define MPEI_GPU_HD static inline
#endif

/* Everything the kernel needs about (format, options), precomputed on the host. */
typedef struct {
  int32_t p, emin;               /* precision and normal emin of the format */
  uint32_t max_bits;             /* largest finite, as binary32 bits */
  uint32_t minnorm_bits, minsub_bits;
  uint32_t tiny_pos, tiny_neg;   /* |x| bits below which an inexact result is tiny */
  uint32_t ovf_bits, inf_bits;   /* what overflow and an infinite input become */
  int32_t mode, flush, saturate, has_inf;
  uint64_t seed, offset;
} mpei_gpu_plan;

/* The flag bits are those of mpemu/core.h (MPE_FLAG_*); repeated here so that
   the header needs nothing from the library when nvcc compiles it. */
enum {
  MPEI_GPU_FL_INEXACT = 1u << 0, MPEI_GPU_FL_UNDERFLOW = 1u << 1, MPEI_GPU_FL_OVERFLOW = 1u << 2,
  MPEI_GPU_FL_INVALID = 1u << 3, MPEI_GPU_FL_SATURATED = 1u << 4, MPEI_GPU_FL_FLUSHED = 1u << 5
};
/* Rounding modes, in the order of mpe_round. */
enum { MPEI_GPU_RNE, MPEI_GPU_RNA, MPEI_GPU_RZ, MPEI_GPU_RU, MPEI_GPU_RD, MPEI_GPU_RO,
       MPEI_GPU_SR, MPEI_GPU_SR_EQ };

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
    if (d > 40)
      d = 40;                                 /* M < 2^24: the same decisions as any larger d */
    const uint64_t one_d = (uint64_t)1 << d, half = one_d >> 1;
    const uint64_t t = M >> d, rem = M & (one_d - 1);
    uint64_t up = 0;
    inex = rem != 0;
    if (inex) {
      switch (pl->mode) {
      case MPEI_GPU_RNE: up = rem > half || (rem == half && (t & 1)); break;
      case MPEI_GPU_RNA: up = rem >= half; break;
      case MPEI_GPU_RZ: up = 0; break;
      case MPEI_GPU_RU: up = !neg; break;
      case MPEI_GPU_RD: up = neg; break;
      case MPEI_GPU_RO: up = (t & 1) == 0; break;
      case MPEI_GPU_SR: {
        /* P(up) = rem / 2^d: up when rnd < floor(rem * 2^(32-d)) */
        uint64_t T = d <= 32 ? rem << (32 - d) : rem >> (d - 32);
        up = (uint64_t)rnd < T;
        break;
      }
      default: up = rnd >> 31; break;        /* MPE_SR_EQ */
      }
    }
    const uint64_t R = t + up;
    if (d >= 24)                              /* below the quantum: 0 or the format's min subnormal */
      res = R ? pl->minsub_bits : 0;
    else
      res = (uint32_t)(((uint64_t)(Eeff - 1) << 23) + (R << d));
  }
  int ovf = res > pl->max_bits;
  if (ovf) {
    int to_max;
    switch (pl->mode) {
    case MPEI_GPU_RZ: case MPEI_GPU_RO: to_max = 1; break;
    case MPEI_GPU_RU: to_max = neg; break;
    case MPEI_GPU_RD: to_max = !neg; break;
    default: to_max = 0; break;
    }
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
/* Host side: the plan of (format, options), as emu/round_array.c builds its
   own. Needs lib/mpei.h (struct mpe_format) and <math.h>, <float.h>. */
static inline uint32_t mpei_gpu_ceil_bits(double v)   /* bits of the smallest binary32 >= v >= 0 */
{
  if (v > FLT_MAX)
    return 0x7f800000u;
  float f = (float)v;
  if ((double)f < v)
    f = nextafterf(f, INFINITY);
  return mpei_f2u(f);
}

static inline void mpei_gpu_plan_make(mpei_gpu_plan *pl, const struct mpe_format *f0,
                                      const mpe_round_opts *o)
{
  struct mpe_format f = *f0;
  if (f.maxv > FLT_MAX) {               /* binary32 view: exponent range clamped */
    f.emax = 127;
    f.maxv = ldexp(2.0 - ldexp(1.0, 1 - f.p), 127);
    f.has_inf = 1;
  }
  pl->p = f.p;
  pl->emin = f.emin;
  pl->max_bits = mpei_f2u((float)f.maxv);
  pl->minnorm_bits = mpei_gpu_ceil_bits(f.minnorm);
  pl->minsub_bits = mpei_gpu_ceil_bits(f.minsub);
  double nearest = f.minnorm - ldexp(1.0, f.emin - f.p - 1);   /* tiny iff |x| < this */
  double away = f.minnorm - ldexp(1.0, f.emin - f.p);          /* tiny iff |x| <= this */
  uint32_t tz = pl->minnorm_bits, tn = mpei_gpu_ceil_bits(nearest);
  uint32_t ta = mpei_f2u((float)away) + 1;
  switch (o->round) {
  case MPE_RNE: case MPE_RNA: pl->tiny_pos = pl->tiny_neg = tn; break;
  case MPE_RU: pl->tiny_pos = ta; pl->tiny_neg = tz; break;
  case MPE_RD: pl->tiny_pos = tz; pl->tiny_neg = ta; break;
  default: pl->tiny_pos = pl->tiny_neg = tz; break;
  }
  pl->ovf_bits = f.has_inf ? 0x7f800000u : 0x7fc00000u;
  pl->inf_bits = o->saturate ? pl->max_bits : pl->ovf_bits;
  pl->mode = (int32_t)o->round;
  pl->flush = o->flush_subnormals != 0;
  pl->saturate = o->saturate != 0;
  pl->has_inf = f.has_inf;
  pl->seed = o->seed;
  pl->offset = o->offset;
}
#endif
#endif
