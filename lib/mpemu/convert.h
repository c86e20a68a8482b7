/* mpemu — scalar conversions between binary32/binary64 and the narrow formats.
   Results are bit patterns; every conversion rounds exactly once and raises
   the sticky flags (see mpe_flags_get). Stochastic modes draw from the calling
   thread's generator (mpe_seed). */
#ifndef MPEMU_CONVERT_H
#define MPEMU_CONVERT_H
#include "mpemu/core.h"
#ifdef __cplusplus
extern "C" {
#endif

MPE_API uint16_t mpe_fp32_to_fp16(float x, mpe_round r);
MPE_API uint16_t mpe_fp64_to_fp16(double x, mpe_round r);
MPE_API float    mpe_fp16_to_fp32(uint16_t h);
MPE_API double   mpe_fp16_to_fp64(uint16_t h);
MPE_API uint16_t mpe_fp32_to_bf16(float x, mpe_round r);
MPE_API uint16_t mpe_fp64_to_bf16(double x, mpe_round r);   /* one rounding: never via binary32 */
MPE_API float    mpe_bf16_to_fp32(uint16_t h);
MPE_API float    mpe_fp32_to_tf32(float x, mpe_round r);    /* binary32 with the low 13 fraction bits 0 */
MPE_API uint8_t  mpe_fp32_to_e4m3(float x, mpe_round r, int saturate);
MPE_API uint8_t  mpe_fp32_to_e5m2(float x, mpe_round r, int saturate);
MPE_API float    mpe_e4m3_to_fp32(uint8_t v);
MPE_API float    mpe_e5m2_to_fp32(uint8_t v);
/* The FNUZ FP8 formats of AMD CDNA3 (MI300): no inf, no -0, code 0x80 the one NaN.
   NaN gives 0x80; inf and overflow give 0x80 without saturate (except in the
   modes that round toward zero for the sign, and MPE_RO: +-max), +-max with
   it; a zero result is 0x00. */
MPE_API uint8_t  mpe_fp32_to_e4m3fnuz(float x, mpe_round r, int saturate);
MPE_API uint8_t  mpe_fp32_to_e5m2fnuz(float x, mpe_round r, int saturate);
MPE_API float    mpe_e4m3fnuz_to_fp32(uint8_t v);
MPE_API float    mpe_e5m2fnuz_to_fp32(uint8_t v);

/* Seed the calling thread's generator for scalar MPE_SR / MPE_SR_EQ.
   The scalar stream is Philox4x32-10 keyed by seed; the i-th stochastic
   conversion after mpe_seed(s) gives the same result as element i of
   mpe_round_f32 with opts {seed = s, offset = 0}. */
MPE_API void     mpe_seed(uint64_t seed);

#ifdef __cplusplus
}
#endif
#endif
