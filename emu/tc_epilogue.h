/* The BLAS epilogue of mpe_gemm on a binary32 C, written once: the portable
   build (emu/tc_mma.c) and each instruction set's build (emu/tc_avx2.c,
   emu/tc_avx512.c, where fmaf is one instruction) include it. */
#ifndef MPEI_TC_EPILOGUE_H
#define MPEI_TC_EPILOGUE_H
#include <math.h>
#include "mpei.h"

/* out = alpha*v + beta*cv as FMA(alpha, v, beta*cv) in the type of the
   operands, whose zero is ZERO: cv is not used when beta == 0, and without a
   product (use_ab 0) out is beta*cv. The binary32 epilogue below and the
   binary64 one of emu/tc_f64.c. */
#define MPEI_EPILOGUE(out, v, cv, alpha, beta, use_ab, ZERO, FMA) \
  do {                                                            \
    if (!(use_ab))                                                \
      (out) = (beta) != ZERO ? (beta) * (cv) : ZERO;              \
    else if ((beta) == ZERO)                                      \
      (out) = (alpha) == 1 ? (v) : (alpha) * (v);                 \
    else                                                          \
      (out) = FMA((alpha), (v), (beta) * (cv));                   \
  } while (0)

/* C = alpha*acc + beta*C in binary32, as fmaf(alpha, acc, beta*C); C is not read
   when beta == 0, and a NaN comes out as the one quiet NaN. A binary16 C is
   rounded once at the end (RNE). */
static inline __attribute__((always_inline)) float epilogue_one(float v, float cv, float alpha,
                                                                float beta, int use_ab)
{
  float out;
  MPEI_EPILOGUE(out, v, cv, alpha, beta, use_ab, 0.0f, fmaf);
  return isnan(out) ? mpei_u2f(0x7fffffffu) : out;
}

/* One row of a binary32 C. The loops are split by case so that each is a plain
   vector loop; the instruction sets' twins are the same source compiled with
   their -m flags, where fmaf is one instruction (in the baseline build it is
   a libm call). */
static inline __attribute__((always_inline)) void epilogue_row_body(float *c, const float *v, int n,
                                                                    float alpha, float beta, int use_ab)
{
  if (!use_ab && beta == 0.0f) {
    for (int j = 0; j < n; j++)
      c[j] = 0.0f;
  } else if (!use_ab) {
#pragma omp simd
    for (int j = 0; j < n; j++)
      c[j] = epilogue_one(0.0f, c[j], alpha, beta, 0);
  } else if (beta == 0.0f) {
#pragma omp simd
    for (int j = 0; j < n; j++)
      c[j] = epilogue_one(v[j], 0.0f, alpha, beta, 1);
  } else {
#pragma omp simd
    for (int j = 0; j < n; j++)
      c[j] = epilogue_one(v[j], c[j], alpha, beta, 1);
  }
}

#ifdef TC_CVTPS_PH
/* One row of a binary16 C (the instruction sets' builds, which define VW and
   TC_CVTPS_PH, binary32 lanes to binary16 bits, nearest-even): VW elements at
   a time through a binary32 row, C decoded exactly (F16C) and the results
   rounded once; the canonical NaN 0x7fffffff becomes 0x7fff. */
static inline __attribute__((always_inline)) void epilogue_row16_body(uint16_t *c, const float *v, int n,
                                                                      float alpha, float beta, int use_ab)
{
  for (int j = 0; j < n; j += VW) {
    const int w = n - j < VW ? n - j : VW;
    uint16_t h[VW] = { 0 };
    float f[VW];
    if (beta != 0.0f)
      memcpy(h, c + j, sizeof *h * (size_t)w);
    hu16 hv;
    memcpy(&hv, h, sizeof hv);
    const vf32 cf = (vf32)MPEI_CVTPH_PS(hv);
    memcpy(f, &cf, sizeof f);
    epilogue_row_body(f, v + j, w, alpha, beta, use_ab);
    vf32 r;
    memcpy(&r, f, sizeof r);
    hv = (hu16)TC_CVTPS_PH(r);
    memcpy(c + j, &hv, sizeof *h * (size_t)w);
  }
}
#endif
#endif
