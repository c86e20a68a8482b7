/* The tensor-core kernels, written once with GCC vector extensions and
   included by tc_avx2.c (VW = 8) and tc_avx512.c (VW = 16), each compiled with
   its own -m flags. The includer includes its instruction set's header
   (lib/isa_*.h: half-register shuffles, truncation, int32 maximum, fma) and
   defines VW, MR and MRF. Every rounding of a result goes through the rounding
   core (round_pd below); the truncations are the model's cuts.

   Block kernel, per block of L products and for each of MR rows × VW columns:
     pass 1: E = max(ea + eb over the products, exponent of c)   (int32 lanes)
     pass 2: acc = sum of trunc(a*b * 2^(F-E))                      (the product
             a*b is exact in binary32; the scaled product is below 2^(F+2); the
             conversion truncates toward zero, which is the sign-magnitude cut)
     end:    in binary64: S = acc + trunc(c * 2^(F-E)), R = S * 2^(E-F) (exact),
             R rounded to the output format; overflow gives inf.
   The caller guarantees the bound of mpei_tc_acc_of (tc_impl.h) for the kernel
   it picks (L * (2^(F+2) - 1) <= 2^31 - 1 for blk_kernel), input exponents in
   [-48, 62] (so products, scales and cut addends are exact) and finite operands.
   blk_kernel_wide is the same model with binary64 sums, for wider blocks.
   With kp->late_c the block holds the products only and c is added after the
   block's rounding, in binary64, then rounded to nearest-even. With kp->pair
   (fp16_split) the blocks go in pairs, each pair one instruction: the pair
   starts from +0 and c is added after it (pair_start, pair_end). */
#include <stdint.h>
#include <math.h>
#include <string.h>
#include "mpei_round_core.h"
#include "mpei_vec.h"
#include "tc_exp16.h"

/* x - (+0) is x for every x, -0 included (0 + x would turn -0 into +0), so
   the compiler may drop the subtraction and fold the splat into a
   broadcast-from-memory FMA operand */

static inline __attribute__((always_inline)) vf64 pow2d(vi64 e)   /* 2^e, e in the normal range */
{
  return (vf64)((e + 1023) << 52);
}

/* x (exact binary64, ±0 or ±inf) rounded to p bits, normal exponents
   emin..emax; overflow gives inf. The decision is the rounding core's
   (lib/mpei_round_core.h), on the binary64 significand M (implicit bit
   included): d = 53 - p + max(0, emin - E) low bits are dropped and the
   result is rebuilt as ((E - 1) << 52) + (R << d), a carry moving into the
   exponent field on its own (when every lane is normal in the target, the
   core's carry form does the same in fewer steps). From d = 53 on, M is below one quantum of the
   target's subnormals: the result is 0 or that quantum. The output roundings
   of the tensor cores are deterministic (no random word). */
static inline __attribute__((always_inline)) vf64 round_pd_t(vf64 x, int p, int emin, int emax, const int mode)
{
  const vi64 u = (vi64)x;
  const vi64 a = u & (int64_t)0x7fffffffffffffff, s = u & (int64_t)0x8000000000000000;
  const vi64 lim = SPLAT(vi64, (int64_t)(emax + 1 + 1023) << 52);   /* 2^(emax+1): overflow */
  const vi64 minnorm = SPLAT(vi64, (int64_t)(emin + 1023) << 52);
  if (MPEI_ALL64((vi64)(a >= minnorm) & (vi64)(a < lim))) {
    /* every lane normal in the target: the carry form, d = 53 - p fixed */
    const int d = 53 - p;
    const int64_t one = (int64_t)1 << d, low = one - 1, half = one >> 1;
    const vi64 t = a & ~low, rem = a & low;
    vi64 res = MPEI_ROUND_CARRY(mode, vi64, a, d, one, low, half, t, rem, (vi64)(s != 0), SPLAT(vi64, 0), SPLAT(vi64, 0));
    res = SEL(vi64, (vi64)(res >= lim), SPLAT(vi64, (int64_t)0x7ff0000000000000), res);
    return (vf64)(res | s);
  }
  const vi64 E = a >> 52;                        /* biased; x is never a binary64 subnormal */
  const vi64 Eeff = E - (E == 0);                /* the exponent field of ±0 counts as 1 */
  vi64 dsub = SPLAT(vi64, emin + 1023) - Eeff;
  dsub &= (vi64)(dsub > 0);
  const vi64 dt = SPLAT(vi64, 53 - p) + dsub;
  const vi64 d = SEL(vi64, (vi64)(dt > 54), SPLAT(vi64, 54), dt);
  const vi64 M = (a & (int64_t)0xfffffffffffff) | ((vi64)(E != 0) & ((int64_t)1 << 52));
  const vi64 one = SPLAT(vi64, 1) << d, half = one >> 1;
  const vi64 t = (vi64)((vu64)M >> (vu64)d), rem = M & (one - 1);
  const vi64 up = (vi64)MPEI_ROUND_UP(mode, (vi64)(rem != 0), (vi64)(rem > half), (vi64)(rem == half),
                                  (vi64)((t & 1) != 0), (vi64)(s != 0), SPLAT(vi64, 0), SPLAT(vi64, 0));
  const vi64 R = t - up;                         /* up is 0 or all ones */
  const vi64 minsub = SPLAT(vi64, (int64_t)(emin - p + 1 + 1023) << 52);
  vi64 res = SEL(vi64, (vi64)(dt >= 53), minsub & (vi64)(R != 0), ((Eeff - 1) << 52) + (R << d));
  const vi64 ovf = (vi64)(res >= lim);
  res = SEL(vi64, ovf, SPLAT(vi64, (int64_t)0x7ff0000000000000), res);
  return (vf64)(res | s);
}

/* the mode a compile-time constant in each copy, so the decision folds */
static inline __attribute__((always_inline)) vf64 round_pd(vf64 x, int p, int emin, int emax, int mode)
{
  switch (mode) {
  case MPE_RZ: return round_pd_t(x, p, emin, emax, MPEI_RC_RZ);
  case MPE_RNE: return round_pd_t(x, p, emin, emax, MPEI_RC_RNE);
  case MPE_RNA: return round_pd_t(x, p, emin, emax, MPEI_RC_RNA);
  case MPE_RU: return round_pd_t(x, p, emin, emax, MPEI_RC_RU);
  default: return round_pd_t(x, p, emin, emax, MPEI_RC_RD);
  }
}

/* r + c in one binary64 addition, then rounded to the output format (mode);
   a NaN sum stays. Correct since 53 >= 2p+2 (both are values of the output
   format, or c a binary32 value under late_c). */
static inline __attribute__((always_inline)) vf64 add_round(vf64 r, vf64 cd, const mpei_tc_kp *kp, int mode)
{
  vf64 t = r + cd;
  vi64 nan = (vi64)(t != t);
  r = round_pd(t, kp->p, kp->emin, kp->emax, mode);
  return (vf64)SEL(vi64, nan, (vi64)t, (vi64)r);
}

static inline __attribute__((always_inline)) hf32 block_end_halfd(vf64 accd, hf32 c, hi32 emax, const mpei_tc_kp *kp)
{
  vf64 cd = __builtin_convertvector(c, vf64);
  vi64 e = __builtin_convertvector(emax, vi64);
  vi64 lo = SPLAT(vi64, -400);
  e = SEL(vi64, (vi64)(e < lo), lo, e);   /* only when every addend is zero */
  vf64 tc = kp->late_c ? (vf64){} : MPEI_TRUNC_PD(cd * pow2d(kp->F - e));
  vf64 r = (accd + tc) * pow2d(e - kp->F);
  if (kp->p1)
    r = round_pd(r, kp->p1, kp->emin, kp->emax, MPE_RZ);
  r = round_pd(r, kp->p, kp->emin, kp->emax, kp->mode);
  if (kp->late_c) {
    r = add_round(r, cd, kp, MPE_RNE);
  } else {
    /* an accumulator that overflowed stays ±inf */
    vi64 cinf = ((vi64)cd & (int64_t)0x7fffffffffffffff) == (int64_t)0x7ff0000000000000;
    r = (vf64)SEL(vi64, cinf, (vi64)cd, (vi64)r);
  }
  if (kp->zero_sign)
    r += 0.0;   /* -0 + +0 = +0 under round-to-nearest; nothing else changes */
  return __builtin_convertvector(r, hf32);
}

static inline __attribute__((always_inline)) hf32 block_end_half(hi32 acc, hf32 c, hi32 emax, const mpei_tc_kp *kp)
{
  return block_end_halfd(__builtin_convertvector(acc, vf64), c, emax, kp);
}

/* Binary16 output rounded to nearest-even (kp->p = 11, no p1, no late_c) in
   binary32 lanes: S = acc + trunc(c * s) in int32 (s the pass-2 scale
   2^(F-E)), |S| cut to its leading 24 bits with the dropped bits' OR in the
   last one (round to odd: exact to 2 bits past binary16's 11, subnormals
   included), scaled by 2^(E-F) exactly (a normal binary32 value), then one
   nearest-even conversion to binary16 (TC_RNE16), which gives inf past
   65504. Returns 0 (nothing written) when a lane needs block_end_half: S past
   int32 or E below the scale's range. A c that is inf stays. */
static inline __attribute__((always_inline)) int block_end_h16(vi32 acc, vf32 *cv, vi32 em, vf32 s, int F,
                                                              int zero_sign, const int c0)
{
  /* c0: c is +0 (the first block of a pair): S = acc, within int32 */
  const vf32 c = *cv;
  const vi32 cinf = c0 ? SPLAT(vi32, 0) : (vi32)(((vu32)c & 0x7fffffffu) >= 0x7f800000u);
  const vi32 tc = c0 ? SPLAT(vi32, 0) : __builtin_convertvector((vf32)((vi32)(c * s) & ~cinf), vi32);   /* exact; 0 for inf */
  const vi32 sum = (vi32)((vu32)acc + (vu32)tc);
  if (MPEI_ANY32((c0 ? SPLAT(vi32, 0) : (acc ^ sum) & (tc ^ sum)) | (vi32)(em < F - 126)))
    return 0;
#ifdef AVX512_BLOCK_END
  /* the conversion toward zero, the last bit set when it dropped any; 2^(E-F) by vscalefps */
  const __m512 fz = _mm512_cvt_roundepi32_ps((__m512i)sum, _MM_FROUND_TO_ZERO | _MM_FROUND_NO_EXC);
  const __mmask16 inx = _mm512_cmpneq_epi32_mask(_mm512_cvttps_epi32(fz), (__m512i)sum);
  const __m512 fo = _mm512_castsi512_ps(_mm512_mask_or_epi32(_mm512_castps_si512(fz), inx, _mm512_castps_si512(fz),
                                                             _mm512_set1_epi32(1)));
  vf32 r = (vf32)_mm512_scalef_ps(fo, _mm512_cvtepi32_ps((__m512i)(em - F)));
#else
  const vu32 mag = (vu32)SEL(vi32, (vi32)(sum < 0), (vi32)((vu32){} - (vu32)sum), sum);
  /* the exponent of |S| (its conversion may round up a binade: a 23-bit cut, still
     exact to 2 bits past binary16) and the bits dropped below 24 */
  const vi32 fe = (vi32)(((vu32)__builtin_convertvector(sum, vf32) >> 23) & 0xffu) - (127 + 23);
  const vu32 d = (vu32)(fe & (vi32)(fe > 0));
  vu32 t = mag >> d;
  t |= (vu32)((t << d) != mag) & 1u;
  const vi32 k = (vi32)d + em - F;   /* -126 .. 127: 2^k normal */
  vf32 r = __builtin_convertvector((vi32)t, vf32) * (vf32)((k + 127) << 23);
  r = (vf32)((vu32)r | ((vu32)sum & 0x80000000u));
#endif
  r = TC_RNE16(r);
  if (!c0)
    r = (vf32)SEL(vi32, cinf, (vi32)c, (vi32)r);
  if (zero_sign)
    r = (vf32)((vi32)r & ~(vi32)(r == 0.0f));   /* every zero +0 */
  *cv = r;
  return 1;
}

/* kp->pair (fp16_split): the blocks go in pairs, the two binary16 blocks of
   one instruction. Before the first of a pair the accumulators are saved in
   the tile c (rows ldc apart, written back at the end anyway: in memory, not
   registers, which the pair's blocks need) and the block starts from +0;
   after the second, the saved ones are added to its result (add_round, in
   the output's rounding), every zero +0 with zero_sign. */
static inline __attribute__((always_inline)) void pair_start(vf32 *cv, float *c, long ldc, int n, int blk,
                                                             const mpei_tc_kp *kp)
{
  if (!kp->pair || blk % 2)
    return;
#pragma GCC unroll 16
  for (int u = 0; u < n; u++) {
    memcpy(c + u * ldc, &cv[u], sizeof cv[u]);
    cv[u] = SPLAT(vf32, 0.0f);
  }
  __asm__ volatile("" ::: "memory");   /* read back at pair_end, not kept in registers */
}

static inline __attribute__((always_inline)) hf32 pair_add(hf32 r, hf32 c, const mpei_tc_kp *kp)
{
  vf64 t = add_round(__builtin_convertvector(r, vf64), __builtin_convertvector(c, vf64), kp, kp->mode);
  if (kp->zero_sign)
    t += 0.0;   /* -0 + +0 = +0 */
  return __builtin_convertvector(t, hf32);
}

/* h16: binary16 output rounded to nearest-even, and the accumulators binary16
   values (C of a binary16 output, a pair's result): r + c rounded to binary32,
   then to binary16. The two roundings give the correctly rounded sum: when
   the sum of two binary16 values a, b (|a| >= |b|) is not a binary32 value,
   |b| < 2^-13 |a| and a is normal, so the sum and its binary32 rounding both
   lie nearer a than any binary16 midpoint (2^-12 |a| away, at least). */
static inline __attribute__((always_inline)) void pair_end(vf32 *cv, const float *c, long ldc, int n, int blk,
                                                           const mpei_tc_kp *kp, int h16)
{
  if (!kp->pair || !(blk % 2))
    return;
#pragma GCC unroll 16
  for (int u = 0; u < n; u++) {
    const vf32 c0 = load_vf32(c + u * ldc);
    if (!h16) {
      cv[u] = MPEI_JOIN(pair_add(MPEI_HALF_LO(cv[u]), MPEI_HALF_LO(c0), kp),
                        pair_add(MPEI_HALF_HI(cv[u]), MPEI_HALF_HI(c0), kp));
      continue;
    }
    vf32 r = TC_RNE16(cv[u] + c0);
    if (kp->zero_sign)
      r = (vf32)((vi32)r & ~(vi32)(r == 0.0f));   /* every zero +0 */
    cv[u] = r;
  }
}

#ifdef AVX512_BLOCK_END
/* The common case, binary32 output rounded toward zero (every GPU model), on
   AVX-512: c's cut addend is trunc(c * s) with the pass-2 scale s = 2^(F-E),
   S = acc + tc, RZ(S) by one conversion, an optional cut to p1 bits, and
   2^(E-F) applied by vscalefps rounding toward zero (rounding toward zero
   twice equals once). Returns 0 (nothing written) when a lane needs the
   binary64 path: S past int32, E below the scale's range, a result at the
   largest finite (it may be an overflow to inf) or, with a cut, subnormal. */
static inline __attribute__((always_inline)) int block_end_512(vi32 acc, vf32 *cv, vi32 em, vf32 s, int F, int p1,
                                                              int chk_ovf, int late_c, int zero_sign)
{
  __m512 c = (__m512)*cv;
  vi32 tc = late_c ? SPLAT(vi32, 0) : (vi32)_mm512_cvttps_epi32(_mm512_mul_ps(c, (__m512)s));
  /* wrapping int32 addition (tc is INT_MIN where c * s is inf or NaN; such
     a lane keeps c below, and a wrap past int32 is caught by chk_ovf) */
  vi32 sum = (vi32)((vu32)acc + (vu32)tc);
  __mmask16 bad = _mm512_cmplt_epi32_mask((__m512i)em, _mm512_set1_epi32(F - 126));
  if (chk_ovf)
    bad |= _mm512_movepi32_mask((__m512i)((acc ^ sum) & (tc ^ sum)));
  __m512 f = _mm512_cvt_roundepi32_ps((__m512i)sum, _MM_FROUND_TO_ZERO | _MM_FROUND_NO_EXC);
  if (p1)
    f = _mm512_castsi512_ps(_mm512_and_si512(_mm512_castps_si512(f), _mm512_set1_epi32(~((1 << (24 - p1)) - 1))));
  __m512 k = _mm512_cvtepi32_ps((__m512i)(em - F));
  __m512 r = _mm512_scalef_round_ps(f, k, _MM_FROUND_TO_ZERO | _MM_FROUND_NO_EXC);
  __m512 ra = _mm512_abs_ps(r);
  bad |= _mm512_cmp_ps_mask(ra, _mm512_set1_ps(0x1.fffffep127f), _CMP_EQ_OQ);
  if (p1)
    bad |= _mm512_mask_cmp_ps_mask(_mm512_cmp_ps_mask(ra, _mm512_setzero_ps(), _CMP_NEQ_OQ), ra,
                                   _mm512_set1_ps(0x1p-126f), _CMP_LT_OQ);
  if (bad)
    return 0;
  if (late_c) {
    /* c added in binary64 and rounded to nearest-even: correct since 53 >= 2*24+2 */
    __m512d lo = _mm512_add_pd(_mm512_cvtps_pd(_mm512_castps512_ps256(r)), _mm512_cvtps_pd(_mm512_castps512_ps256(c)));
    __m512d hi = _mm512_add_pd(_mm512_cvtps_pd(_mm256_castpd_ps(_mm512_extractf64x4_pd(_mm512_castps_pd(r), 1))),
                               _mm512_cvtps_pd(_mm256_castpd_ps(_mm512_extractf64x4_pd(_mm512_castps_pd(c), 1))));
    __m256 l8 = _mm512_cvtpd_ps(lo), h8 = _mm512_cvtpd_ps(hi);
    r = _mm512_insertf32x8(_mm512_castps256_ps512(l8), h8, 1);
  } else {
    /* an accumulator that overflowed stays ±inf */
    __mmask16 cinf = _mm512_cmp_ps_mask(_mm512_abs_ps(c), _mm512_set1_ps(__builtin_inff()), _CMP_EQ_OQ);
    r = _mm512_mask_blend_ps(cinf, r, c);
  }
  if (zero_sign)
    r = _mm512_add_ps(r, _mm512_setzero_ps());   /* -0 + +0 = +0 */
  *cv = (vf32)r;
  return 1;
}
#endif

/* split: a compile-time copy of (kp->half != 0), so that the one-int32 kernel
   keeps the loop it had before the two-halves path existed */
static inline __attribute__((always_inline)) void blk_kernel_t(const float *av, const int32_t *ae,
                                                               const float *bv, const int32_t *be, float *c,
                                                               long ldc, const mpei_tc_kp *kp, const int split)
{
  const int L = kp->L, F = kp->F;
  const vi32 emin = SPLAT(vi32, kp->emin);
  const vi32 zexp = SPLAT(vi32, kp->zero_c);
  const vi32 slo = SPLAT(vi32, F - 126);
  /* binary16 output, nearest-even, c inside the block: block_end_h16 */
  const int h16 = kp->p == 11 && kp->emin == -14 && kp->emax == 15 && kp->mode == MPE_RNE && !kp->p1 &&
                  !kp->late_c;
#ifdef AVX512_BLOCK_END
  const int rz32 = kp->mode == MPE_RZ && kp->p == 24 && kp->emin == -126 && kp->p1 < 24;
  /* can acc + trunc(c*s) leave int32? L addends below 2^(F+2) and c below 2^(F+1) */
  const int chk_ovf = (double)L * ldexp(1.0, F + 2) + (kp->late_c ? 0.0 : ldexp(1.0, F + 1)) > 2147483647.0;
#endif
  vf32 cv[MR];
#pragma GCC unroll 16
  for (int r = 0; r < MR; r++)
    cv[r] = load_vf32(c + r * ldc);
  for (int blk = 0; blk < kp->nblk; blk++) {
    const float *a = av + (size_t)blk * L * MR, *b = bv + (size_t)blk * L * VW;
    const int32_t *ea = ae + (size_t)blk * L * MR, *eb = be + (size_t)blk * L * VW;
    pair_start(cv, c, ldc, MR, blk, kp);
    vi32 em[MR];
#pragma GCC unroll 16
    for (int r = 0; r < MR; r++) {
      if (kp->late_c) {   /* the block's E_max comes from its products only */
        em[r] = SPLAT(vi32, MPEI_TC_ZERO_EXP);
        continue;
      }
#ifdef AVX512_BLOCK_END
      {
        /* getexp(0) = -inf converts to INT_MIN; zeros take zexp */
        const __m512 cr = (__m512)cv[r];
        vi32 ce = MPEI_MAX_EPI32((vi32)_mm512_cvtps_epi32(_mm512_getexp_ps(cr)), emin);
        __mmask16 z = _mm512_cmp_ps_mask(cr, _mm512_setzero_ps(), _CMP_EQ_OQ);
        em[r] = (vi32)_mm512_mask_blend_epi32(z, (__m512i)ce, (__m512i)zexp);
        continue;
      }
#endif
      vu32 cb = (vu32)cv[r];
      vi32 ce = (vi32)((cb >> 23) & 0xffu) - 127;
      ce = MPEI_MAX_EPI32(ce, emin);
      vi32 z = (vi32)((cb & 0x7fffffffu) == 0);
      em[r] = (z & zexp) | (~z & ce);
    }
    if (!split && kp->a16) {   /* pass 1 in int16 lanes (tc_exp16.h) */
      tc_exp16_pass(kp->a16 + (ea - kp->ae0), kp->b16 + 2 * (eb - kp->be0), L, MR, 1, em);
    } else {
#pragma GCC unroll 4
      for (int k = 0; k < L; k++) {
        vi32 e = load_vi32(eb + k * VW);
#pragma GCC unroll 16
        for (int r = 0; r < MR; r++)
          em[r] = MPEI_MAX_EPI32(em[r], e + ea[k * MR + r]);
      }
    }
    vf32 s[MR];
    vi32 acc[MR];
#pragma GCC unroll 16
    for (int r = 0; r < MR; r++) {
      vi32 es = MPEI_MAX_EPI32(em[r], slo);
      s[r] = (vf32)((127 + F - es) << 23);
      acc[r] = SPLAT(vi32, 0);
    }
    const int kh = split ? kp->half : L;
#pragma GCC unroll 4
    for (int k = 0; k < kh; k++) {
      vf32 bk = load_vf32(b + k * VW);
#pragma GCC unroll 16
      for (int r = 0; r < MR; r++) {
        vf32 x = (bk * a[k * MR + r]) * s[r];
        acc[r] += __builtin_convertvector(x, vi32);
      }
    }
    if (split) {
      /* two int32 sums, each within its bound, joined exactly in binary64 */
      vi32 acc2[MR];
#pragma GCC unroll 16
      for (int r = 0; r < MR; r++)
        acc2[r] = SPLAT(vi32, 0);
#pragma GCC unroll 4
      for (int k = kh; k < L; k++) {
        vf32 bk = load_vf32(b + k * VW);
#pragma GCC unroll 16
        for (int r = 0; r < MR; r++) {
          vf32 x = (bk * a[k * MR + r]) * s[r];
          acc2[r] += __builtin_convertvector(x, vi32);
        }
      }
#pragma GCC unroll 16
      for (int r = 0; r < MR; r++) {
        vf64 lo2 = __builtin_convertvector(MPEI_HALF_LO(acc[r]), vf64) + __builtin_convertvector(MPEI_HALF_LO(acc2[r]), vf64);
        vf64 hi2 = __builtin_convertvector(MPEI_HALF_HI(acc[r]), vf64) + __builtin_convertvector(MPEI_HALF_HI(acc2[r]), vf64);
        hf32 lo = block_end_halfd(lo2, MPEI_HALF_LO(cv[r]), MPEI_HALF_LO(em[r]), kp);
        hf32 hi_ = block_end_halfd(hi2, MPEI_HALF_HI(cv[r]), MPEI_HALF_HI(em[r]), kp);
        cv[r] = MPEI_JOIN(lo, hi_);
      }
    } else {
#pragma GCC unroll 16
      for (int r = 0; r < MR; r++) {
#ifdef AVX512_BLOCK_END
        if (rz32 && block_end_512(acc[r], &cv[r], em[r], s[r], F, kp->p1, chk_ovf, kp->late_c,
                                    kp->zero_sign))
          continue;
#endif
        /* in pairs, pair_end makes every zero +0 (the sign of a zero block result
           reaches nothing else) */
        if (h16 && (kp->pair ? !(blk % 2) ? block_end_h16(acc[r], &cv[r], em[r], s[r], F, 0, 1)
                                           : block_end_h16(acc[r], &cv[r], em[r], s[r], F, 0, 0)
                             : block_end_h16(acc[r], &cv[r], em[r], s[r], F, kp->zero_sign, 0)))
          continue;
        hf32 lo = block_end_half(MPEI_HALF_LO(acc[r]), MPEI_HALF_LO(cv[r]), MPEI_HALF_LO(em[r]), kp);
        hf32 hi_ = block_end_half(MPEI_HALF_HI(acc[r]), MPEI_HALF_HI(cv[r]), MPEI_HALF_HI(em[r]), kp);
        cv[r] = MPEI_JOIN(lo, hi_);
      }
    }
    pair_end(cv, c, ldc, MR, blk, kp, h16);
  }
#pragma GCC unroll 16
  for (int r = 0; r < MR; r++)
    memcpy(c + r * ldc, &cv[r], sizeof cv[r]);
}

/* The same block model with the cut addends summed in binary64 lanes, for
   models whose exact block sum needs more than 31 bits (B200 FP8: L = 32,
   F = 25): L * (2^(F+2) - 1) + 2^(F+1) <= 2^53. */
static void blk_kernel(const float *av, const int32_t *ae, const float *bv, const int32_t *be,
                       float *c, long ldc, const mpei_tc_kp *kp)
{
  if (kp->half)
    blk_kernel_t(av, ae, bv, be, c, ldc, kp, 1);
  else
    blk_kernel_t(av, ae, bv, be, c, ldc, kp, 0);
}

static void blk_kernel_wide(const float *av, const int32_t *ae, const float *bv, const int32_t *be,
                            float *c, long ldc, const mpei_tc_kp *kp)
{
  const int L = kp->L, F = kp->F;
  const vi32 emin = SPLAT(vi32, kp->emin);
  const vi32 zexp = SPLAT(vi32, kp->zero_c);
  vf32 cv[MR];
#pragma GCC unroll 16
  for (int r = 0; r < MR; r++)
    cv[r] = load_vf32(c + r * ldc);
  for (int blk = 0; blk < kp->nblk; blk++) {
    const float *a = av + (size_t)blk * L * MR, *b = bv + (size_t)blk * L * VW;
    const int32_t *ea = ae + (size_t)blk * L * MR, *eb = be + (size_t)blk * L * VW;
    pair_start(cv, c, ldc, MR, blk, kp);
    vi32 em[MR];
#pragma GCC unroll 16
    for (int r = 0; r < MR; r++) {
      vu32 cb = (vu32)cv[r];
      vi32 ce = (vi32)((cb >> 23) & 0xffu) - 127;
      ce = MPEI_MAX_EPI32(ce, emin);
      vi32 z = (vi32)((cb & 0x7fffffffu) == 0);
      em[r] = (z & zexp) | (~z & ce);
      if (kp->late_c)
        em[r] = SPLAT(vi32, MPEI_TC_ZERO_EXP);
    }
#pragma GCC unroll 4
    for (int k = 0; k < L; k++) {
      vi32 e = load_vi32(eb + k * VW);
#pragma GCC unroll 16
      for (int r = 0; r < MR; r++)
        em[r] = MPEI_MAX_EPI32(em[r], e + ea[k * MR + r]);
    }
    vf64 slo[MR], shi[MR], alo[MR], ahi[MR];
#pragma GCC unroll 16
    for (int r = 0; r < MR; r++) {
      vi64 el = __builtin_convertvector(MPEI_HALF_LO(em[r]), vi64), eh = __builtin_convertvector(MPEI_HALF_HI(em[r]), vi64);
      vi64 lo = SPLAT(vi64, -400);
      el = SEL(vi64, (vi64)(el < lo), lo, el);
      eh = SEL(vi64, (vi64)(eh < lo), lo, eh);
      slo[r] = pow2d(F - el);
      shi[r] = pow2d(F - eh);
      alo[r] = (vf64){} + 0.0;
      ahi[r] = (vf64){} + 0.0;
    }
#pragma GCC unroll 2
    for (int k = 0; k < L; k++) {
      vf32 bk = load_vf32(b + k * VW);
#pragma GCC unroll 16
      for (int r = 0; r < MR; r++) {
        vf32 pr = bk * a[k * MR + r];   /* exact in binary32 */
        alo[r] += MPEI_TRUNC_PD(__builtin_convertvector(MPEI_HALF_LO(pr), vf64) * slo[r]);
        ahi[r] += MPEI_TRUNC_PD(__builtin_convertvector(MPEI_HALF_HI(pr), vf64) * shi[r]);
      }
    }
#pragma GCC unroll 16
    for (int r = 0; r < MR; r++) {
      hf32 lo = block_end_halfd(alo[r], MPEI_HALF_LO(cv[r]), MPEI_HALF_LO(em[r]), kp);
      hf32 hi_ = block_end_halfd(ahi[r], MPEI_HALF_HI(cv[r]), MPEI_HALF_HI(em[r]), kp);
      cv[r] = MPEI_JOIN(lo, hi_);
    }
    pair_end(cv, c, ldc, MR, blk, kp, 0);
  }
#pragma GCC unroll 16
  for (int r = 0; r < MR; r++)
    memcpy(c + r * ldc, &cv[r], sizeof cv[r]);
}

/* fma chain: MRF rows × NRF*VW columns (NRF vectors side by side, so that
   one broadcast of a[k][r] serves NRF vector FMAs and one load of b[k] serves
   MRF of them; the broadcast comes straight from memory: vbroadcastss on
   AVX2, the FMA's own {1to16} operand on AVX-512). The packed B panel holds
   NRF*VW columns per k. */
#define NRF MPEI_TC_NRF
enum { PF_A = 16 };
static void fma_kernel(const float *av, const float *bv, float *c, long ldc, int K)
{
  vf32 acc[MRF * NRF];
#pragma GCC unroll 32
  for (int u = 0; u < MRF * NRF; u++)
    acc[u] = load_vf32(c + (u / NRF) * ldc + (u % NRF) * VW);
#pragma GCC unroll 4
  for (int k = 0; k < K; k++) {
    const float *a = av + (size_t)k * MRF, *b = bv + (size_t)k * NRF * VW;
    vf32 bk[NRF];
    /* A streams from L2: its line PF_A steps ahead is requested now */
    __builtin_prefetch(a + PF_A * MRF, 0, 3);
#pragma GCC unroll 4
    for (int h = 0; h < NRF; h++)
      bk[h] = load_vf32(b + h * VW);
#pragma GCC unroll 16
    for (int r = 0; r < MRF; r++) {
      const vf32 x = (vf32)MPEI_BCAST_PS(a + r);
#pragma GCC unroll 4
      for (int h = 0; h < NRF; h++)
        acc[NRF * r + h] = MPEI_FMA_PS(bk[h], x, acc[NRF * r + h]);
    }
  }
#pragma GCC unroll 32
  for (int u = 0; u < MRF * NRF; u++)
    memcpy(c + (u / NRF) * ldc + (u % NRF) * VW, &acc[u], sizeof acc[u]);
}

/* ---- packing (emu/tc_gemm.c)

   n binary16 values at src (bf16 != 0: bfloat16) decoded exactly to binary32:
   one vcvtph2ps per VW values (F16C), a widening shift for bfloat16. */
static void pack_dec16(const uint16_t *src, int bf16, float *dst, int n)
{
  int j = 0;
  for (; j + VW <= n; j += VW) {
    hu16 h;
    memcpy(&h, src + j, sizeof h);
    vf32 v = bf16 ? (vf32)(__builtin_convertvector(h, vu32) << 16) : (vf32)MPEI_CVTPH_PS(h);
    memcpy(dst + j, &v, sizeof v);
  }
  if (j < n) {   /* the tail through a zero-padded register */
    uint16_t t[VW] = { 0 };
    float o[VW];
    memcpy(t, src + j, (size_t)(n - j) * sizeof *t);
    hu16 h;
    memcpy(&h, t, sizeof h);
    vf32 v = bf16 ? (vf32)(__builtin_convertvector(h, vu32) << 16) : (vf32)MPEI_CVTPH_PS(h);
    memcpy(o, &v, sizeof v);
    memcpy(dst + j, o, (size_t)(n - j) * sizeof *o);
  }
}

/* The exponents of n packed binary32 values (the rule of tc_gemm.c's scalar
   packer): MPEI_TC_ZERO_EXP for zeros, else the exponent raised to at least
   pin. Returns bit 0 when some nonzero finite value's exponent is outside
   [lo, hi] (binary32 subnormals included), bit 1 when some value is inf or NaN
   (the caller then packs the panel with the scalar packer, which marks them). */
static int pack_exp(const float *v, int32_t *e, size_t n, int pin, int lo, int hi)
{
  vi32 unsafe = SPLAT(vi32, 0), nonfin = SPLAT(vi32, 0);
  const vi32 vpin = SPLAT(vi32, pin);
  size_t j = 0;
  for (; j + VW <= n; j += VW) {
    const vu32 a = (vu32)load_vf32(v + j) & 0x7fffffffu;
    const vi32 z = (vi32)(a == 0u), nf = (vi32)(a >= 0x7f800000u);
    const vi32 ex = (vi32)(a >> 23) - 127;
    unsafe |= ~z & ~nf & ((vi32)(ex < lo) | (vi32)(ex > hi));
    nonfin |= nf;
    const vi32 r = (z & SPLAT(vi32, MPEI_TC_ZERO_EXP)) | (~z & MPEI_MAX_EPI32(ex, vpin));
    memcpy(e + j, &r, sizeof r);
  }
  int flags = 0;
  for (int q = 0; q < VW; q++)
    flags |= (unsafe[q] != 0) | (nonfin[q] != 0) << 1;
  for (; j < n; j++) {
    uint32_t a;
    memcpy(&a, v + j, sizeof a);
    a &= 0x7fffffffu;
    int ex = (int)(a >> 23) - 127;
    if (a >= 0x7f800000u)
      flags |= 2;
    else if (a != 0 && (ex < lo || ex > hi))
      flags |= 1;
    e[j] = a == 0 ? MPEI_TC_ZERO_EXP : ex < pin ? pin : ex;
  }
  return flags;
}

/* ---- 2:4 sparse A (emu/tc_sparse.c)

   The same block model over the kept products of a compressed A: the packed
   panel holds K/2 kept values per row (value av, exponent ae, as above) and,
   in ax laid out like them, the offset of the B row each one multiplies
   within a B panel. So each row of the tile reads its own B rows, and there
   are half as many products as in the dense kernel. A row's index and value
   then serve MPEI_TC_NRS vectors of B (bv, be + h*bpitch: NRS*VW columns;
   emu/tc_sparse.c packs them side by side, bpitch = VW, rows NRS*VW apart), which
   spreads the loads that the gather adds over several products. The
   includer defines MRS and MRFS (rows per call); the tile is MRS × NRS*VW
   (the fma kernel's MRFS × NRFS*VW, below). A
   padding value is 0 with exponent MPEI_TC_ZERO_EXP and points at a zero B
   row: it drops out like a zero product. */
#define NRS MPEI_TC_NRS

/* c's exponent in the block's E_max (the zero_c and late_c rules above) */
static inline __attribute__((always_inline)) vi32 sp_c_exp(vf32 cv, const mpei_tc_kp *kp)
{
  if (kp->late_c)
    return SPLAT(vi32, MPEI_TC_ZERO_EXP);
  const vu32 cb = (vu32)cv;
  const vi32 ce = MPEI_MAX_EPI32((vi32)((cb >> 23) & 0xffu) - 127, SPLAT(vi32, kp->emin));
  const vi32 z = (vi32)((cb & 0x7fffffffu) == 0);
  return (z & SPLAT(vi32, kp->zero_c)) | (~z & ce);
}

/* pass 1 over the L kept products of a block, each row its own B rows */
static inline __attribute__((always_inline)) void sp_emax(vi32 *em, const int32_t *ea, const int32_t *xa,
                                                          const int32_t *be, long bpitch, int L)
{
#pragma GCC unroll 4
  for (int k = 0; k < L; k++)
#pragma GCC unroll 16
    for (int r = 0; r < MRS; r++) {
      const int32_t *e = be + xa[k * MRS + r];
      const int32_t x = ea[k * MRS + r];
#pragma GCC unroll 8
      for (int h = 0; h < NRS; h++)
        em[NRS * r + h] = MPEI_MAX_EPI32(em[NRS * r + h], load_vi32(e + h * bpitch) + x);
    }
}

/* pass 2 in int32 lanes: acc += trunc(b * a * s) for kept products k0 .. k1-1 */
static inline __attribute__((always_inline)) void sp_sum(vi32 *acc, const vf32 *s, const float *a, const int32_t *xa,
                                                         const float *bv, long bpitch, int k0, int k1)
{
#pragma GCC unroll 4
  for (int k = k0; k < k1; k++)
#pragma GCC unroll 16
    for (int r = 0; r < MRS; r++) {
      const float *b = bv + xa[k * MRS + r];
      const float x = a[k * MRS + r];
#pragma GCC unroll 8
      for (int h = 0; h < NRS; h++)
        acc[NRS * r + h] += __builtin_convertvector((load_vf32(b + h * bpitch) * x) * s[NRS * r + h], vi32);
    }
}

static inline __attribute__((always_inline)) void blk_sp_t(const float *av, const int32_t *ae, const int32_t *ax,
                                                           const float *bv, const int32_t *be, long bpitch, float *c,
                                                           long ldc, const mpei_tc_kp *kp, const int split)
{
  const int L = kp->L, F = kp->F;
  const vi32 slo = SPLAT(vi32, F - 126);
  vf32 cv[MRS * NRS];
#pragma GCC unroll 16
  for (int u = 0; u < MRS * NRS; u++)
    cv[u] = load_vf32(c + (u / NRS) * ldc + (u % NRS) * VW);
  for (int blk = 0; blk < kp->nblk; blk++) {
    const size_t o = (size_t)blk * L * MRS;
    vi32 em[MRS * NRS], acc[MRS * NRS], acc2[MRS * NRS];
    vf32 s[MRS * NRS];
#pragma GCC unroll 16
    for (int u = 0; u < MRS * NRS; u++)
      em[u] = sp_c_exp(cv[u], kp);
    sp_emax(em, ae + o, ax + o, be, bpitch, L);
#pragma GCC unroll 16
    for (int u = 0; u < MRS * NRS; u++) {
      s[u] = (vf32)((127 + F - MPEI_MAX_EPI32(em[u], slo)) << 23);
      acc[u] = SPLAT(vi32, 0);
      acc2[u] = SPLAT(vi32, 0);
    }
    const int kh = split ? kp->half : L;
    sp_sum(acc, s, av + o, ax + o, bv, bpitch, 0, kh);
    if (split)
      sp_sum(acc2, s, av + o, ax + o, bv, bpitch, kh, L);
#pragma GCC unroll 16
    for (int u = 0; u < MRS * NRS; u++) {
      /* with split, the two int32 sums joined exactly in binary64 */
      vf64 lo2 = __builtin_convertvector(MPEI_HALF_LO(acc[u]), vf64), hi2 = __builtin_convertvector(MPEI_HALF_HI(acc[u]), vf64);
      if (split) {
        lo2 += __builtin_convertvector(MPEI_HALF_LO(acc2[u]), vf64);
        hi2 += __builtin_convertvector(MPEI_HALF_HI(acc2[u]), vf64);
      }
      hf32 lo = block_end_halfd(lo2, MPEI_HALF_LO(cv[u]), MPEI_HALF_LO(em[u]), kp);
      hf32 hi_ = block_end_halfd(hi2, MPEI_HALF_HI(cv[u]), MPEI_HALF_HI(em[u]), kp);
      cv[u] = MPEI_JOIN(lo, hi_);
    }
  }
#pragma GCC unroll 16
  for (int u = 0; u < MRS * NRS; u++)
    memcpy(c + (u / NRS) * ldc + (u % NRS) * VW, &cv[u], sizeof cv[u]);
}

static void blk_sp_kernel(const float *av, const int32_t *ae, const int32_t *ax, const float *bv,
                          const int32_t *be, long bpitch, float *c, long ldc, const mpei_tc_kp *kp)
{
  if (kp->half)
    blk_sp_t(av, ae, ax, bv, be, bpitch, c, ldc, kp, 1);
  else
    blk_sp_t(av, ae, ax, bv, be, bpitch, c, ldc, kp, 0);
}

/* binary64 sums, for the blocks of blk_kernel_wide */
static void blk_sp_kernel_wide(const float *av, const int32_t *ae, const int32_t *ax, const float *bv,
                               const int32_t *be, long bpitch, float *c, long ldc, const mpei_tc_kp *kp)
{
  const int L = kp->L, F = kp->F;
  vf32 cv[MRS * NRS];
#pragma GCC unroll 16
  for (int u = 0; u < MRS * NRS; u++)
    cv[u] = load_vf32(c + (u / NRS) * ldc + (u % NRS) * VW);
  for (int blk = 0; blk < kp->nblk; blk++) {
    const size_t o = (size_t)blk * L * MRS;
    const float *a = av + o;
    const int32_t *xa = ax + o;
    vi32 em[MRS * NRS];
    vf64 slo[MRS * NRS], shi[MRS * NRS], alo[MRS * NRS], ahi[MRS * NRS];
#pragma GCC unroll 16
    for (int u = 0; u < MRS * NRS; u++)
      em[u] = sp_c_exp(cv[u], kp);
    sp_emax(em, ae + o, xa, be, bpitch, L);
#pragma GCC unroll 16
    for (int u = 0; u < MRS * NRS; u++) {
      vi64 el = __builtin_convertvector(MPEI_HALF_LO(em[u]), vi64), eh = __builtin_convertvector(MPEI_HALF_HI(em[u]), vi64);
      el = SEL(vi64, (vi64)(el < -400), SPLAT(vi64, -400), el);
      eh = SEL(vi64, (vi64)(eh < -400), SPLAT(vi64, -400), eh);
      slo[u] = pow2d(F - el);
      shi[u] = pow2d(F - eh);
      alo[u] = (vf64){} + 0.0;
      ahi[u] = (vf64){} + 0.0;
    }
    for (int k = 0; k < L; k++)
#pragma GCC unroll 16
      for (int u = 0; u < MRS * NRS; u++) {
        vf32 pr = load_vf32(bv + xa[k * MRS + u / NRS] + (u % NRS) * bpitch) * a[k * MRS + u / NRS];   /* exact */
        alo[u] += MPEI_TRUNC_PD(__builtin_convertvector(MPEI_HALF_LO(pr), vf64) * slo[u]);
        ahi[u] += MPEI_TRUNC_PD(__builtin_convertvector(MPEI_HALF_HI(pr), vf64) * shi[u]);
      }
#pragma GCC unroll 16
    for (int u = 0; u < MRS * NRS; u++) {
      hf32 lo = block_end_halfd(alo[u], MPEI_HALF_LO(cv[u]), MPEI_HALF_LO(em[u]), kp);
      hf32 hi_ = block_end_halfd(ahi[u], MPEI_HALF_HI(cv[u]), MPEI_HALF_HI(em[u]), kp);
      cv[u] = MPEI_JOIN(lo, hi_);
    }
  }
#pragma GCC unroll 16
  for (int u = 0; u < MRS * NRS; u++)
    memcpy(c + (u / NRS) * ldc + (u % NRS) * VW, &cv[u], sizeof cv[u]);
}

/* fma chain over the kept products: c[r][j] = fmaf(a[k][r], b[row k of r][j], c[r][j]),
   MRFS rows × NRFS*VW columns. Unlike the dense kernel, no B vector is shared
   between rows (each row gathers its own B rows), so the cost per product is
   the loads: the offset, the broadcast of a[k][r] and NRFS vectors of B (the
   FMAs' memory operands). A wide tile spreads the first two over NRFS FMAs;
   the B panel holds NRFS*VW columns per row, side by side, so a gathered row
   is one contiguous stretch at compile-time offsets. */
#define NRFS MPEI_TC_NRFS
static void fma_sp_kernel(const float *av, const int32_t *ax, const float *bv, float *c, long ldc, int K)
{
  vf32 acc[MRFS * NRFS];
#pragma GCC unroll 32
  for (int u = 0; u < MRFS * NRFS; u++)
    acc[u] = load_vf32(c + (u / NRFS) * ldc + (u % NRFS) * VW);
  for (int k = 0; k < K; k++)
#pragma GCC unroll 16
    for (int r = 0; r < MRFS; r++) {
      const float *b = bv + ax[(size_t)k * MRFS + r];
      const vf32 x = SPLAT(vf32, av[(size_t)k * MRFS + r]);
#pragma GCC unroll 8
      for (int h = 0; h < NRFS; h++)
        acc[NRFS * r + h] = MPEI_FMA_PS(load_vf32(b + h * VW), x, acc[NRFS * r + h]);
    }
#pragma GCC unroll 32
  for (int u = 0; u < MRFS * NRFS; u++)
    memcpy(c + (u / NRFS) * ldc + (u % NRFS) * VW, &acc[u], sizeof acc[u]);
}
