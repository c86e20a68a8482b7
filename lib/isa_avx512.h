/* The AVX-512 instruction set (F, BW, DQ, VL) for the kernel templates (emu/round_kernel.h,
   emu/elementwise_kernel.h, analysis/range_kernel.h): everything a template
   needs that GCC's vector extensions do not give, on 512-bit registers. A file
   compiled with AVX512_CFLAGS includes this, then a template. The vector types
   and lane macros are lib/mpei_vec.h's; a new instruction set is a header like
   this one and its level in MPEI_ISA_ROWS (lib/mpei.h). */
#ifndef MPEI_ISA_AVX512_H
#define MPEI_ISA_AVX512_H
#include <immintrin.h>

#define MPEI_ISA_FN(stem) stem##_avx512
#define MPEI_VBYTES 64

/* 32x32->64 products of the low halves of 64-bit lanes */
#define MPEI_MULU32(a, b) ((__typeof__(a))_mm512_mul_epu32((__m512i)(a), (__m512i)(b)))
/* every lane / some lane of a 32-bit or 64-bit mask set */
#define MPEI_ALL32(m) (_mm512_movepi32_mask((__m512i)(m)) == 0xffff)
#define MPEI_ALL64(m) (_mm512_movepi64_mask((__m512i)(m)) == 0xff)
#define MPEI_ANY64(m) (_mm512_movepi64_mask((__m512i)(m)) != 0)
/* non-temporal store of one register, and the fence after a run of them */
#define MPEI_STREAM_STORE(p, v) _mm512_stream_si512((void *)(p), (__m512i)(v))
#define MPEI_STREAM_FENCE() _mm_sfence()
/* one-rounding fma and square root, full registers */
#define MPEI_FMA_PD(a, b, c) ((__typeof__(a))_mm512_fmadd_pd((__m512d)(a), (__m512d)(b), (__m512d)(c)))
#define MPEI_SQRT_PD(v) ((__typeof__(v))_mm512_sqrt_pd((__m512d)(v)))
#define MPEI_FMA_PS(a, b, c) ((__typeof__(a))_mm512_fmadd_ps((__m512)(a), (__m512)(b), (__m512)(c)))
#define MPEI_SQRT_PS(v) ((__typeof__(v))_mm512_sqrt_ps((__m512)(v)))
/* a register of copies of the binary32 at p; as an FMA operand it becomes the
   instruction's embedded broadcast ({1to16}) */
#define MPEI_BCAST_PS(p) _mm512_set1_ps(*(p))
/* binary16 (a register of half as many bytes) widened exactly to binary32 (F16C) */
#define MPEI_CVTPH_PS(h) _mm512_cvtph_ps((__m256i)(h))
/* half a register of binary32 (int32) widened to a register of binary64 (int64), and back */
#define MPEI_CVT_PS_PD(h) _mm512_cvtps_pd((__m256)(h))
#define MPEI_CVT_PD_PS(d) _mm512_cvtpd_ps((__m512d)(d))
#define MPEI_CVT_EPI32_EPI64(h) _mm512_cvtepi32_epi64((__m256i)(h))
/* the halves of a register of 32-bit lanes */
#define MPEI_HALF_LO(v) __builtin_shufflevector(v, v, 0, 1, 2, 3, 4, 5, 6, 7)
#define MPEI_HALF_HI(v) __builtin_shufflevector(v, v, 8, 9, 10, 11, 12, 13, 14, 15)
/* two half registers joined, a binary64 register truncated toward zero
   (the tensor-core cut, not a rounding), and the lane-wise int32 maximum */
#define MPEI_JOIN(a, b) __builtin_shufflevector(a, b, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15)
#define MPEI_TRUNC_PD(x) ((__typeof__(x))_mm512_roundscale_pd((__m512d)(x), _MM_FROUND_TO_ZERO | _MM_FROUND_NO_EXC))
#define MPEI_MAX_EPI32(a, b) ((__typeof__(a))_mm512_max_epi32((__m512i)(a), (__m512i)(b)))
/* binary32 lanes rounded toward -inf to integers (still binary32) */
#define MPEI_FLOOR_PS(v) ((__typeof__(v))_mm512_roundscale_ps((__m512)(v), _MM_FROUND_TO_NEG_INF | _MM_FROUND_NO_EXC))

/* lane-wise shifts by per-lane counts (a count above 31 gives 0), a lane-wise
   select (m ? a : b, m a lane mask: one ternary-logic instruction) and "some
   lane of a 32-bit mask set" */
#define MPEI_SLLV32(v, c) ((__typeof__(v))_mm512_sllv_epi32((__m512i)(v), (__m512i)(c)))
#define MPEI_SRLV32(v, c) ((__typeof__(v))_mm512_srlv_epi32((__m512i)(v), (__m512i)(c)))
#define MPEI_BLEND32(m, a, b) \
  ((__typeof__(a))_mm512_ternarylogic_epi32((__m512i)(m), (__m512i)(a), (__m512i)(b), 0xca))
#define MPEI_ANY32(m) (_mm512_movepi32_mask((__m512i)(m)) != 0)

/* Lane orders for __builtin_shufflevector (as in isa_avx2.h, for 16 32-bit or
   8 64-bit lanes) */
#define MPEI_SHUF32_IL 0, 16, 2, 18, 4, 20, 6, 22, 8, 24, 10, 26, 12, 28, 14, 30
#define MPEI_SHUF32_QLO 0, 1, 16, 17, 2, 3, 18, 19, 4, 5, 20, 21, 6, 7, 22, 23
#define MPEI_SHUF32_QHI 8, 9, 24, 25, 10, 11, 26, 27, 12, 13, 28, 29, 14, 15, 30, 31
#define MPEI_SHUF64_PLO 0, 8, 1, 9, 2, 10, 3, 11
#define MPEI_SHUF64_PHI 4, 12, 5, 13, 6, 14, 7, 15
#define MPEI_SHUF64_QLO 0, 1, 8, 9, 2, 3, 10, 11
#define MPEI_SHUF64_QHI 4, 5, 12, 13, 6, 7, 14, 15
/* the two 32-bit halves of every 64-bit lane swapped (one vpshufd) */
#define MPEI_SHUF32_SWAP 1, 0, 3, 2, 5, 4, 7, 6, 9, 8, 11, 10, 13, 12, 15, 14
/* binary32 addition rounded to nearest-even / toward zero whatever MXCSR's
   rounding field says, exceptions suppressed (embedded rounding with SAE;
   MXCSR's FTZ and DAZ still apply) */
#define MPEI_ADD_RNE_PS(a, b) \
  ((__typeof__(a))_mm512_add_round_ps((__m512)(a), (__m512)(b), _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC))
#define MPEI_ADD_RZ_PS(a, b) \
  ((__typeof__(a))_mm512_add_round_ps((__m512)(a), (__m512)(b), _MM_FROUND_TO_ZERO | _MM_FROUND_NO_EXC))
#define MPEI_SUB_PS(a, b) \
  ((__typeof__(a))_mm512_sub_round_ps((__m512)(a), (__m512)(b), _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC))
/* SLEEF's 1-ulp binary64 functions on a register (needs <sleef.h>) */
#define MPEI_SLEEF_EXP(v) Sleef_expd8_u10avx512f((__m512d)(v))
#define MPEI_SLEEF_LOG(v) Sleef_logd8_u10avx512f((__m512d)(v))
#define MPEI_SLEEF_TANH(v) Sleef_tanhd8_u10avx512f((__m512d)(v))
#endif
