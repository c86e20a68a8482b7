/* The BLAS epilogue C = alpha*acc + beta*C of the MMA and cuBLASLt-pinned
   paths, applied on the host exactly as mpe_gemm applies it (emu/tc_mma.c):
   binary32 arithmetic, fmaf(alpha, acc, beta*C); C is not read when beta == 0;
   with alpha == 0 or k == 0 the product is not formed; a NaN becomes the
   canonical 0x7fffffff; binary16 C is rounded once at the end (RNE, NaN ->
   0x7fff). Included by gpu_host.c and by tests/check_gpu.c, which checks it
   against mpe_gemm without a device. Needs mpemu.h, lib/mpei.h, <math.h>,
   <float.h> and round_dev.h before it. */
#ifndef MPEI_GPU_EPILOGUE_H
#define MPEI_GPU_EPILOGUE_H

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

/* One element: v is the accumulator (an exact binary32 value; binary16 value
   when c16), C[ci] the element of C (binary16 bits when c16). */
static inline void mpei_gpu_epilogue(int use_ab, float alpha, float v, float beta, void *C, size_t ci,
                                     int c16)
{
  float cv = 0.0f, out;
  if (beta != 0.0f)
    cv = c16 ? mpe_fp16_to_fp32(((const uint16_t *)C)[ci]) : ((const float *)C)[ci];
  if (!use_ab)
    out = beta != 0.0f ? beta * cv : 0.0f;
  else if (beta == 0.0f)
    out = alpha == 1.0f ? v : alpha * v;
  else
    out = fmaf(alpha, v, beta * cv);
  if (isnan(out))
    out = mpei_u2f(0x7fffffffu);
  if (c16)
    ((uint16_t *)C)[ci] = mpei_gpu_f32_to_f16_rne(out);
  else
    ((float *)C)[ci] = out;
}
#endif
