/* binary16 alpha and beta for cublasGemmEx with an FP16 C, rounded as the
   kernels round (round_dev.h), without touching the sticky flags. (The
   epilogue of the MMA and cuBLASLt paths is mpe_gemm's own,
   mpei_tc_epilogue_strided in emu/tc_mma.c.) Included by gpu_host.c and by
   tests/check_gpu.c, which checks it against mpe_fp32_to_fp16. Needs
   lib/mpei.h, <math.h> and round_dev.h before it. */
#ifndef MPEI_GPU_HALF_RNE_H
#define MPEI_GPU_HALF_RNE_H

/* binary16 bits of x rounded to nearest even (no sticky flags raised). */
static inline uint16_t mpei_gpu_f32_to_f16_rne(float x)
{
  /* mpei_gpu_plan_make's plan of binary16 under RNE, spelt out */
  static const mpei_gpu_plan plan16 = {
    .p = 11, .emin = -14, .max_bits = 0x477fe000u /* 65504 */, .minnorm_bits = 0x38800000u /* 2^-14 */,
    .minsub_bits = 0x33800000u /* 2^-24 */, .tiny_pos = 0x387fe000u, .tiny_neg = 0x387fe000u,
    .ovf_bits = 0x7f800000u, .inf_bits = 0x7f800000u, .mode = MPEI_RC_RNE, .flush = 0, .saturate = 0,
    .has_inf = 1, .seed = 0, .offset = 0, .dbase = 13, .eminb = 113
  };
  if (isnan(x))
    return 0x7fff;
  unsigned fl = 0;
  uint32_t r = mpei_gpu_round_bits(mpei_f2u(x), &plan16, 0, &fl);
  uint16_t s = (uint16_t)((r >> 16) & 0x8000u);
  uint32_t a = r & 0x7fffffffu;
  if (a == 0x7f800000u)
    return s | 0x7c00u;
  if (a < 0x38800000u)                       /* subnormal or zero: a multiple of 2^-24 */
    return s | (uint16_t)(mpei_u2f(a) * 16777216.0f);
  return s | (uint16_t)((((a >> 23) - 127 + 15) << 10) | ((a & 0x7fffffu) >> 13));
}

#endif
