/* Pass 1 of the block kernels (tc_kernel.h, tc_amd_kernel.h) in int16 lanes:
   each output's largest exponent sum ea + eb over a block's L products, for
   mr rows (mr even) of VW columns, two rows per register. Lane 2j + t holds
   b16[2j] + a16[2p + t] (B's exponents stored twice, a 32-bit broadcast of
   A's pair), so one add and one maximum serve 2 x VW products. a16: A's
   exponents, element (k, r) at k*mr + r; b16: B's, element (k, j) at 2(k*VW
   + j) and the next; zeros as MPEI_TC_ZERO_EXP16, twice of which still fits
   int16 (a row of no product gives -32768 plus at most the other side's
   largest). Row r's maximum goes to em[r], or with merge the larger of it
   and em[r]. The includer includes mpei_vec.h and defines VW and
   TC_MAX_EPI16 (lane-wise int16 maximum). */
#ifndef MPEI_TC_EXP16_H
#define MPEI_TC_EXP16_H

static inline __attribute__((always_inline)) void tc_exp16_pass(const int16_t *a16, const int16_t *b16, int L,
                                                                int mr, int merge, vi32 *em)
{
  vi16 pm[8];   /* mr / 2 of them */
#pragma GCC unroll 8
  for (int p = 0; p < mr / 2; p++)
    pm[p] = (vi16){} + (int16_t)-32768;
#pragma GCC unroll 8
  for (int k = 0; k < L; k++) {
    vi16 e;
    memcpy(&e, b16 + 2 * k * VW, sizeof e);
#pragma GCC unroll 8
    for (int p = 0; p < mr / 2; p++) {
      int32_t w;
      memcpy(&w, a16 + k * mr + 2 * p, sizeof w);
      pm[p] = TC_MAX_EPI16(pm[p], e + (vi16)SPLAT(vi32, w));
    }
  }
#pragma GCC unroll 8
  for (int p = 0; p < mr / 2; p++) {
    const vi32 w = (vi32)pm[p], lo = (vi32)((vu32)w << 16) >> 16, hi = w >> 16;
    em[2 * p] = merge ? MPEI_MAX_EPI32(em[2 * p], lo) : lo;
    em[2 * p + 1] = merge ? MPEI_MAX_EPI32(em[2 * p + 1], hi) : hi;
  }
}
#endif
