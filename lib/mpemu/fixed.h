/* mpemu — 16-bit fixed point: QUDA's block-normalised format and plain Q formats. */
#ifndef MPEMU_FIXED_H
#define MPEMU_FIXED_H
#include "mpemu/core.h"
#ifdef __cplusplus
extern "C" {
#endif

/* QUDA's block-normalised format. For each block of `block` consecutive values
   (the last block may be shorter):
     m = max |x|;  inv = 32767.0f / m;  q[i] = round_r(x[i] * inv) clamped to [-32767, 32767];
     scale[b] = m * 3.0518509476e-5f.
   All arithmetic is binary32 (x[i] * inv is the binary32 product, then rounded
   to an integer under r). A zero x[i] always gives q[i] = 0 (also when inv
   overflows to inf because m < 32767/FLT_MAX). An all-zero block stores scale 0
   and zeros. scale holds ceil(n / block) values. Stochastic modes draw one word
   per element, in order, from the calling thread's generator (mpe_seed).
   Returns MPE_EINVAL (NULL pointer with n > 0, block == 0, bad mode) or
   MPE_ERANGE (a NaN or inf in x); in both cases q and scale are untouched. */
MPE_API int mpe_fx16_encode(int16_t *q, float *scale, const float *x, size_t n, size_t block, mpe_round r);
/* x[i] = (float)q[i] * scale[i / block] (binary32 product). MPE_EINVAL for a NULL
   pointer with n > 0 or block == 0 (x untouched). */
MPE_API int mpe_fx16_decode(float *x, const int16_t *q, const float *scale, size_t n, size_t block);

/* Plain Q format: value = q * 2^-frac_bits. Conversion rounds x * 2^frac_bits
   once under r and saturates at [-32768, 32767] (MPE_FLAG_SATURATED); NaN gives 0
   and MPE_FLAG_INVALID; an inexact result raises MPE_FLAG_INEXACT. frac_bits is
   clamped to [-512, 512]. Stochastic modes use the thread's generator. */
MPE_API int16_t mpe_fp32_to_q16(float x, int frac_bits, mpe_round r);
/* (float)(q * 2^-frac_bits), one rounding (RNE) when the value is below
   binary32's range; frac_bits clamped to [-512, 512]. */
MPE_API float   mpe_q16_to_fp32(int16_t q, int frac_bits);

#ifdef __cplusplus
}
#endif
#endif
