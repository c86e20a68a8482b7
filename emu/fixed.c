/* 16-bit fixed point: QUDA's block-normalised encoding (docs/DESIGN.md §3.4, taken
   literally: binary32 max, binary32 reciprocal, binary32 product, one integer
   rounding, clamp) and saturating Q formats. */
#include "config.h"
#include <math.h>
#include "mpei.h"
#include "mpemu/fixed.h"

#define FX_MAX 32767
/* 1/32767 rounded to binary32, as QUDA writes it */
#define FX_INV_SCALE 3.0518509476e-5f

static int stochastic(mpe_round r) { return r == MPE_SR || r == MPE_SR_EQ; }

/* v (finite) rounded to an integer under r, sign-magnitude like every other
   rounding in mpemu; *inexact set when v was not an integer. */
static double round_to_int(double v, mpe_round r, uint32_t rnd, int *inexact)
{
  int neg = signbit(v) != 0;
  double t = mpei_round_count(fabs(v), 0, neg, r, rnd, inexact);
  return neg ? -t : t;
}

int mpe_fx16_encode(int16_t *q, float *scale, const float *x, size_t n, size_t block, mpe_round r)
{
  MPEI_FENV_GUARD();
  if (block == 0 || (unsigned)r >= MPE_NROUND || (n > 0 && (!q || !scale || !x)) || !mpei_count_ok(n, sizeof(float)))
    return MPE_EINVAL;
  for (size_t i = 0; i < n; i++)
    if (!isfinite(x[i]))
      return MPE_ERANGE;
  unsigned fl = 0;
  for (size_t b0 = 0; b0 < n; b0 += block) {
    size_t len = n - b0 < block ? n - b0 : block;
    const float *xb = x + b0;
    float m = 0.0f;
    for (size_t i = 0; i < len; i++)
      m = fmaxf(m, fabsf(xb[i]));
    if (m == 0.0f) {
      scale[b0 / block] = 0.0f;
      for (size_t i = 0; i < len; i++)
        q[b0 + i] = 0;
      continue;
    }
    float inv = 32767.0f / m;          /* binary32 division; inf when m < 32767/FLT_MAX */
    for (size_t i = 0; i < len; i++) {
      uint32_t rnd = stochastic(r) ? mpei_thread_sr_word() : 0;
      if (xb[i] == 0.0f) {
        q[b0 + i] = 0;
        continue;
      }
      float p = xb[i] * inv;           /* binary32 product (inf when inv is) */
      int ix = 0;
      double v = isinf(p) ? (p > 0 ? FX_MAX : -FX_MAX) : round_to_int(p, r, rnd, &ix);
      if (ix)
        fl |= MPE_FLAG_INEXACT;
      if (v > FX_MAX)
        v = FX_MAX;
      else if (v < -FX_MAX)
        v = -FX_MAX;
      q[b0 + i] = (int16_t)v;
    }
    scale[b0 / block] = m * FX_INV_SCALE;
  }
  mpei_flags |= fl;
  return MPE_OK;
}

int mpe_fx16_decode(float *x, const int16_t *q, const float *scale, size_t n, size_t block)
{
  MPEI_FENV_GUARD();
  if (block == 0 || (n > 0 && (!x || !q || !scale)) || !mpei_count_ok(n, sizeof(float)))
    return MPE_EINVAL;
  for (size_t i = 0; i < n; i++)
    x[i] = (float)q[i] * scale[i / block];
  return MPE_OK;
}

static int clamp_bits(int b) { return b < -512 ? -512 : b > 512 ? 512 : b; }

int16_t mpe_fp32_to_q16(float x, int frac_bits, mpe_round r)
{
  MPEI_FENV_GUARD();
  MPEI_FENV_IN(x);
  if ((unsigned)r >= MPE_NROUND)
    r = MPE_RNE;   /* as the conversions: an out-of-range mode means RNE */
  uint32_t rnd = stochastic(r) ? mpei_thread_sr_word() : 0;
  if (isnan(x)) {
    mpei_flags |= MPE_FLAG_INVALID;
    return 0;
  }
  double v = ldexp((double)x, clamp_bits(frac_bits));   /* exact: |frac_bits| <= 512 */
  int ix = 0;
  if (isfinite(v) && fabs(v) < 65536.0)
    v = round_to_int(v, r, rnd, &ix);
  if (ix)
    mpei_flags |= MPE_FLAG_INEXACT;
  if (v > 32767.0 || v < -32768.0) {
    mpei_flags |= MPE_FLAG_SATURATED | (isinf(x) ? 0 : MPE_FLAG_INEXACT);
    return v > 0 ? 32767 : -32768;
  }
  MPEI_FENV_RETURN((int16_t)v);
}

float mpe_q16_to_fp32(int16_t q, int frac_bits)
{
  MPEI_FENV_GUARD();
  MPEI_FENV_RETURN((float)ldexp((double)q, -clamp_bits(frac_bits)));
}
