/* The AVX2 instruction set for the kernel templates (emu/round_kernel.h,
   emu/elementwise_kernel.h, analysis/range_kernel.h): everything a template
   needs that GCC's vector extensions do not give, on 256-bit registers. A file
   compiled with AVX2_CFLAGS includes this, then a template. The vector types
   and lane macros are lib/mpei_vec.h's; a new instruction set is a header like
   this one and its level in MPEI_ISA_ROWS (lib/mpei.h). */
#ifndef MPEI_ISA_AVX2_H
#define MPEI_ISA_AVX2_H
#include <immintrin.h>

#define MPEI_ISA_FN(stem) stem##_avx2
#define MPEI_VBYTES 32

/* 32x32->64 products of the low halves of 64-bit lanes */
#define MPEI_MULU32(a, b) ((__typeof__(a))_mm256_mul_epu32((__m256i)(a), (__m256i)(b)))
/* every lane / some lane of a 32-bit or 64-bit mask set */
#define MPEI_ALL32(m) (_mm256_movemask_ps((__m256)(m)) == 0xff)
#define MPEI_ALL64(m) (_mm256_movemask_pd((__m256d)(m)) == 0xf)
#define MPEI_ANY64(m) (_mm256_movemask_pd((__m256d)(m)) != 0)
/* non-temporal store of one register, and the fence after a run of them */
#define MPEI_STREAM_STORE(p, v) _mm256_stream_si256((__m256i *)(void *)(p), (__m256i)(v))
#define MPEI_STREAM_FENCE() _mm_sfence()
/* one-rounding fma and square root, full registers */
#define MPEI_FMA_PD(a, b, c) ((__typeof__(a))_mm256_fmadd_pd((__m256d)(a), (__m256d)(b), (__m256d)(c)))
#define MPEI_SQRT_PD(v) ((__typeof__(v))_mm256_sqrt_pd((__m256d)(v)))
#define MPEI_FMA_PS(a, b, c) ((__typeof__(a))_mm256_fmadd_ps((__m256)(a), (__m256)(b), (__m256)(c)))
#define MPEI_SQRT_PS(v) ((__typeof__(v))_mm256_sqrt_ps((__m256)(v)))
/* a register of copies of the binary32 at p, read from memory (vbroadcastss) */
#define MPEI_BCAST_PS(p) _mm256_broadcast_ss(p)
/* binary16 (a register of half as many bytes) widened exactly to binary32 (F16C) */
#define MPEI_CVTPH_PS(h) _mm256_cvtph_ps((__m128i)(h))
/* half a register of binary32 (int32) widened to a register of binary64 (int64), and back */
#define MPEI_CVT_PS_PD(h) _mm256_cvtps_pd((__m128)(h))
#define MPEI_CVT_PD_PS(d) _mm256_cvtpd_ps((__m256d)(d))
#define MPEI_CVT_EPI32_EPI64(h) _mm256_cvtepi32_epi64((__m128i)(h))
/* the halves of a register of 32-bit lanes */
#define MPEI_HALF_LO(v) __builtin_shufflevector(v, v, 0, 1, 2, 3)
#define MPEI_HALF_HI(v) __builtin_shufflevector(v, v, 4, 5, 6, 7)
/* two half registers joined, a binary64 register truncated toward zero
   (the tensor-core cut, not a rounding), and the lane-wise int32 maximum */
#define MPEI_JOIN(a, b) __builtin_shufflevector(a, b, 0, 1, 2, 3, 4, 5, 6, 7)
#define MPEI_TRUNC_PD(x) ((__typeof__(x))_mm256_round_pd((__m256d)(x), _MM_FROUND_TO_ZERO | _MM_FROUND_NO_EXC))
#define MPEI_MAX_EPI32(a, b) ((__typeof__(a))_mm256_max_epi32((__m256i)(a), (__m256i)(b)))
/* binary32 lanes rounded toward -inf to integers (still binary32) */
#define MPEI_FLOOR_PS(v) ((__typeof__(v))_mm256_round_ps((__m256)(v), _MM_FROUND_TO_NEG_INF | _MM_FROUND_NO_EXC))

/* lane-wise shifts by per-lane counts (a count above 31 gives 0, as the
   instructions define it), a lane-wise select (m ? a : b, m a lane mask) and
   "some lane of a 32-bit mask set" */
#define MPEI_SLLV32(v, c) ((__typeof__(v))_mm256_sllv_epi32((__m256i)(v), (__m256i)(c)))
#define MPEI_SRLV32(v, c) ((__typeof__(v))_mm256_srlv_epi32((__m256i)(v), (__m256i)(c)))
#define MPEI_BLEND32(m, a, b) ((__typeof__(a))_mm256_blendv_epi8((__m256i)(b), (__m256i)(a), (__m256i)(m)))
#define MPEI_ANY32(m) (_mm256_movemask_ps((__m256)(m)) != 0)

/* Lane orders for __builtin_shufflevector (constant indices: GCC >= 12 and clang
   both take it; GCC's __builtin_shuffle with a mask vector is GCC only), used to
   put Philox words in element order. With 32-bit lanes (8): IL interleaves the
   low dwords of the 64-bit lanes of two vectors, QLO/QHI take pairs of those.
   With 64-bit lanes (4): PLO/PHI interleave two vectors, QLO/QHI take pairs. */
#define MPEI_SHUF32_IL 0, 8, 2, 10, 4, 12, 6, 14
#define MPEI_SHUF32_QLO 0, 1, 8, 9, 2, 3, 10, 11
#define MPEI_SHUF32_QHI 4, 5, 12, 13, 6, 7, 14, 15
#define MPEI_SHUF64_PLO 0, 4, 1, 5
#define MPEI_SHUF64_PHI 2, 6, 3, 7
#define MPEI_SHUF64_QLO 0, 1, 4, 5
#define MPEI_SHUF64_QHI 2, 3, 6, 7
/* the two 32-bit halves of every 64-bit lane swapped (one vpshufd) */
#define MPEI_SHUF32_SWAP 1, 0, 3, 2, 5, 4, 7, 6
/* SLEEF's 1-ulp binary64 functions on a register (needs <sleef.h>) */
#define MPEI_SLEEF_EXP(v) Sleef_expd4_u10avx2((__m256d)(v))
#define MPEI_SLEEF_LOG(v) Sleef_logd4_u10avx2((__m256d)(v))
#define MPEI_SLEEF_TANH(v) Sleef_tanhd4_u10avx2((__m256d)(v))
#endif
