/* Internal declarations of AMD's CDNA matrix-core GEMM (emu/tc_amd*.c): the
   v_mfma models of mpe_tc_model_get(3), "AMD models", on vector registers. */
#ifndef MPEI_TC_AMD_H
#define MPEI_TC_AMD_H
#include "tc_impl.h"

/* The arithmetic a kernel call runs (one per CDNA generation). */
enum { MPEI_TC_AMD_EXACT = 1,   /* CDNA1: blocks of L, each summed exactly with c, one RNE rounding */
       MPEI_TC_AMD_FTZ = 2,     /* CDNA2: MPE_TC_MFMA_FTZ */
       MPEI_TC_AMD_TWO = 3 };   /* CDNA3: MPE_TC_MFMA_TWO_STAGE, _SPLIT (kp.split) */

/* One kernel call: nblk blocks of L products (FTZ: steps of L = 2 or 4) on a
   tile of MR rows × VW columns. F: EXACT, the bits each block's addends are
   scaled to below their largest exponent (addends that are not integers
   there are reported in fl); TWO, align_bits; F2: result_bits. flush: FTZ,
   the sums may be tiny (BF16; FP16 products and their sums never are).
   f32 (TWO): every operand is zero or in [2^-48, 2^63),
   L * (2^(F+2) - 1) + 2^(F+1) <= 2^31 - 1, 0 <= F2 + 1 - F <= 16 and
   F2 <= 31: stage 1 runs in binary32 and int32 lanes, stage 2 on a
   two-part integer.
   split (TWO): MPE_TC_MFMA_TWO_STAGE_SPLIT, the even and odd partial sums
   (without f32, stages 2-3 in binary64 lanes). */
typedef struct {
  int kind, L, F, F2, nblk, flush, f32, split;
  int zpos;   /* EXACT: each block's sum starts from +0 (zero_sign: -0 addends alone give +0) */
  const int32_t *abnd, *bbnd;   /* EXACT: the tile's exponent bounds, A's and B's (tc_amd.c, exact_bounds) */
  const double *ad;   /* EXACT: the tile's A panel in binary64 (av's values, the same layout) */
  const int16_t *a16, *b16;   /* TWO with f32 and no split, or NULL: the tile's exponents in int16
                                 (mpei_tc_exp16: A's as ae, B's each twice) */
} mpei_tc_amd_kp;

/* Panels as emu/tc_pack.h packs them: A in panels of MR rows (element (k, r)
   at k*MR + r: binary32 value, exponent), B in panels of VW columns ((k, j)
   at k*VW + j). c: MR rows of VW binary32 accumulators (row r at c + r*ldc),
   updated in place; fl (EXACT only): the same layout of int32, a lane set to
   nonzero where some block lost bits (the portable engine redoes that output).
   ae, be: NULL for FTZ. */
typedef void (*mpei_tc_amd_fn)(const float *av, const int32_t *ae, const float *bv, const int32_t *be, float *c,
                               int32_t *fl, long ldc, const mpei_tc_amd_kp *kp);
#ifdef HAVE_X86_SIMD
MPEI_HIDDEN void mpei_tc_amd_avx2(const float *, const int32_t *, const float *, const int32_t *, float *,
                                  int32_t *, long, const mpei_tc_amd_kp *);
MPEI_HIDDEN void mpei_tc_amd_avx512(const float *, const int32_t *, const float *, const int32_t *, float *,
                                    int32_t *, long, const mpei_tc_amd_kp *);
#endif
enum { MPEI_TC_AMD_AVX2_VW = 8, MPEI_TC_AMD_AVX512_VW = 16, MPEI_TC_AMD_MR = 4 };

/* mpei_tc_run for the AMD models (kind MPE_TC_EXACT with blocks, or mfma set)
   with binary32 output: MPE_EUNSUP when no fast kernel covers the call (the
   caller then runs the portable engine). */
MPEI_HIDDEN int mpei_tc_amd_run(const struct mpe_tc_model *m, int M, int N, int K, const mpei_tc_opnd *a,
                                const mpei_tc_opnd *b, const mpei_tc_opnd *c, float *acc);
#endif
