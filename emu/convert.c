/* Scalar conversions: the reference rounding, then the storage encoding. */
#include "config.h"
#include <math.h>
#include "mpei.h"
#include "mpemu/convert.h"

static int snan32(float x)
{
  uint32_t u = mpei_f2u(x);
  return (u & 0x7f800000u) == 0x7f800000u && (u & 0x3fffffu) && !(u & 0x400000u);
}

static int snan64(double x)
{
  return isnan(x) && !(mpei_d2u(x) & 0x0008000000000000ull);
}

static double conv(double x, int snan, mpe_type t, mpe_round r, int saturate)
{
  const struct mpe_format *f = mpe_format_of(t);
  unsigned fl = 0;
  if ((unsigned)r >= MPE_NROUND)
    r = MPE_RNE;   /* documented: an out-of-range mode means RNE */
  uint32_t rnd = (r == MPE_SR || r == MPE_SR_EQ) ? mpei_thread_sr_word() : 0;
  double v = mpei_round_ref(x, snan, f, r, 0, saturate, rnd, &fl);
  mpei_flags |= fl;
  return v;
}

uint16_t mpe_fp32_to_fp16(float x, mpe_round r)
{
  MPEI_FENV_GUARD();
  MPEI_FENV_IN(x);
  MPEI_FENV_RETURN((uint16_t)mpei_encode(conv(x, snan32(x), MPE_FP16, r, 0), mpe_format_of(MPE_FP16)));
}

uint16_t mpe_fp64_to_fp16(double x, mpe_round r)
{
  MPEI_FENV_GUARD();
  MPEI_FENV_IN(x);
  MPEI_FENV_RETURN((uint16_t)mpei_encode(conv(x, snan64(x), MPE_FP16, r, 0), mpe_format_of(MPE_FP16)));
}

/* NaN payloads survive decoding (quieted), as with the F16C instruction. */
float mpe_fp16_to_fp32(uint16_t h)
{
  if ((h & 0x7c00u) == 0x7c00u && (h & 0x3ffu))
    return mpei_u2f(((uint32_t)(h & 0x8000u) << 16) | 0x7fc00000u | ((uint32_t)(h & 0x3ffu) << 13));
  return (float)mpei_decode(h, mpe_format_of(MPE_FP16));
}
double mpe_fp16_to_fp64(uint16_t h) { return mpei_decode(h, mpe_format_of(MPE_FP16)); }

uint16_t mpe_fp32_to_bf16(float x, mpe_round r)
{
  MPEI_FENV_GUARD();
  MPEI_FENV_IN(x);
  MPEI_FENV_RETURN((uint16_t)mpei_encode(conv(x, snan32(x), MPE_BF16, r, 0), mpe_format_of(MPE_BF16)));
}

uint16_t mpe_fp64_to_bf16(double x, mpe_round r)
{
  MPEI_FENV_GUARD();
  MPEI_FENV_IN(x);
  MPEI_FENV_RETURN((uint16_t)mpei_encode(conv(x, snan64(x), MPE_BF16, r, 0), mpe_format_of(MPE_BF16)));
}

float mpe_bf16_to_fp32(uint16_t h) { return mpei_u2f((uint32_t)h << 16); }

float mpe_fp32_to_tf32(float x, mpe_round r)
{
  MPEI_FENV_GUARD();
  MPEI_FENV_IN(x);
  MPEI_FENV_RETURN((float)conv(x, snan32(x), MPE_TF32, r, 0));
}

/* binary32 to an FP8 code of format t */
static uint8_t fp8_of(float x, mpe_type t, mpe_round r, int saturate)
{
  MPEI_FENV_GUARD();
  MPEI_FENV_IN(x);
  MPEI_FENV_RETURN((uint8_t)mpei_encode(conv(x, snan32(x), t, r, saturate), mpe_format_of(t)));
}

uint8_t mpe_fp32_to_e4m3(float x, mpe_round r, int saturate) { return fp8_of(x, MPE_E4M3, r, saturate); }
uint8_t mpe_fp32_to_e5m2(float x, mpe_round r, int saturate) { return fp8_of(x, MPE_E5M2, r, saturate); }
uint8_t mpe_fp32_to_e4m3fnuz(float x, mpe_round r, int saturate) { return fp8_of(x, MPE_E4M3FNUZ, r, saturate); }
uint8_t mpe_fp32_to_e5m2fnuz(float x, mpe_round r, int saturate) { return fp8_of(x, MPE_E5M2FNUZ, r, saturate); }

float mpe_e4m3_to_fp32(uint8_t v) { return (float)mpei_decode(v, mpe_format_of(MPE_E4M3)); }
float mpe_e5m2_to_fp32(uint8_t v) { return (float)mpei_decode(v, mpe_format_of(MPE_E5M2)); }
float mpe_e4m3fnuz_to_fp32(uint8_t v) { return (float)mpei_decode(v, mpe_format_of(MPE_E4M3FNUZ)); }
float mpe_e5m2fnuz_to_fp32(uint8_t v) { return (float)mpei_decode(v, mpe_format_of(MPE_E5M2FNUZ)); }
