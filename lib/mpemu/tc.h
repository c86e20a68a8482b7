/* mpemu — tensor-core models: mpe_mma (instruction semantics) and mpe_gemm
   (BLAS semantics). See mpe_mma(3), mpe_gemm(3), mpe_tc_model_get(3). */
#ifndef MPEMU_TC_H
#define MPEMU_TC_H
#include "mpemu/core.h"
#ifdef __cplusplus
extern "C" {
#endif

typedef struct mpe_tc_model mpe_tc_model;

/* What a model computes. */
typedef enum {
  MPE_TC_BLOCK,     /* hardware block model: groups of `block` products + c, see mpe_tc_model_get(3) */
  MPE_TC_EXACT,     /* exact dot product of all K terms plus c, one rounding; with block
                       L > 0, of each block of L products plus c (AMD CDNA1) */
  MPE_TC_FMA_CHAIN, /* d = c; d = fmaf(a_k, b_k, d) for ascending k */
  MPE_TC_CPU_CHAIN = 3, /* x86 dot-product instructions: binary32 fmas over pairs of k with the
                           order pair_order and the flushing `flush` say (mpe_tc_model_get(3)) */
  MPE_TC_ARM_BFDOT = 4  /* Arm BF16 dot products: d = c, then one BFDotAdd step per pair of k
                           (2p, 2p + 1), ascending, under the FPCR in `fpcr`; see
                           mpe_tc_model_get(3), "Arm models" */
} mpe_tc_kind;

/* A model is this row of parameters (see the table in mpe_tc_model_get(3)). */
typedef struct {
  mpe_tc_kind kind;
  mpe_type in;          /* input format: MPE_FP16, MPE_BF16, MPE_TF32, MPE_E4M3, MPE_E5M2;
                           MPE_E4M3FNUZ, MPE_E5M2FNUZ (the AMD CDNA3 FP8 models);
                           MPE_FP64 (built-in MPE_TC_FMA_CHAIN models only: binary64 fmas) */
  int block;            /* L: products per hardware block, 1..1024 (MPE_TC_BLOCK) */
  int align_bits;       /* F: addends are truncated to multiples of 2^(E_max - F), 1..58 */
  int result_bits;      /* 0, or a binary32 block result is first cut (toward zero) to this
                           many fraction bits, then rounded, 1..40 (FP8 on Ada/Hopper: 13) */
  mpe_round round_fp32; /* block result to binary32: MPE_RZ on the GPUs (RNE, RNA, RU, RD allowed) */
  mpe_round round_fp16; /* block result to binary16: MPE_RNE on the GPUs */
  mpe_round input_round;/* MPE_FP32 operands to the input format: MPE_RZ (truncate), MPE_RNE or
                           MPE_RNA; TF32 models default to MPE_RZ, the others to MPE_RNE */
  int zero_c_counts;    /* 1: c = 0 still takes part in E_max, with the exponent zero_c_exp
                           says (default); 0: a zero c drops out like a zero product */
  int late_c;           /* 0: c is an addend of the block (default); 1: the block sums its
                           products only, is rounded, and c is then added with one IEEE
                           addition rounded to nearest-even (B200 FP8) */
  int satfinite;        /* integer models (in = MPE_INT8, MPE_UINT8, MPE_INT4, MPE_UINT4) only:
                           0: the int32 accumulator wraps modulo 2^32 (default); 1: the exact
                           result of each block (one mma instruction: `block` products + c)
                           is clamped to [INT32_MIN, INT32_MAX] (PTX .satfinite). Must be 0
                           for floating-point models. See mpe_tc_int(3). */
  int zero_c_exp;       /* 0: a counted zero c takes the output format's emin; else the
                           exponent a zero c takes in E_max with binary32 output,
                           -300..-126 (the GPUs: -131 Volta, -132 Turing..Ada, -133
                           Hopper, Blackwell); with binary16 output it lies as far below
                           binary16's emin (-14): zero_c_exp + 112 */
  int zero_sign;        /* 0: a block result that is zero keeps the sign of its sum (a
                           negative sum that rounds to zero gives -0); 1: every zero
                           block result is +0 (the GPU models). MPE_TC_EXACT: 1 starts
                           each block's sum from +0, so -0 addends alone give +0 while
                           a negative sum that rounds to zero stays -0 (the mi100 rows) */
  int tf32_nan;         /* TF32 models only (0 otherwise): with input_round MPE_RZ,
                           0: a binary32 NaN operand stays NaN; 1: the operand's low 13
                           bits are dropped first, so a NaN whose payload lies only there
                           becomes +-inf (the GPU models). No effect with MPE_RNE/RNA */
  int instr;            /* the instruction the model describes (mpe_tc_instr); 0 for
                           custom models that name none. Informative: the arithmetic is
                           the other fields */
  /* Block-scaled models (tcgen05.mma .block_scale, mpe_mma_scaled(3)); 0 for every other model.
     scale_group: 0: not block-scaled; 1: each product a_k*b_k*sa*sb is one addend of the block
     (kind::mxf8f6f4); G > 1: the exact sum of G consecutive products, times the scales, is one
     addend with the scales' exponent (kind::mxf4, kind::mxf4nvf4: 16).
     scale_fmts: the scale formats the instruction accepts, MPE_TC_SF_* bits.
     scale_zero_exp: the exponent a zero addend takes in E_max (a zero product or c, and with
     G > 1 a group whose products are all zero or whose scale is zero): -133 for the Blackwell
     kinds; 0 when scale_group is 0. */
  int scale_group;
  int scale_fmts;
  int scale_zero_exp;
  /* FP8 models: 0 (B in the format `in`), or B's format when it differs from A's (MPE_E4M3 or
     MPE_E5M2, the mixed FP8 instructions; MPE_E4M3FNUZ or MPE_E5M2FNUZ for the AMD FNUZ
     models). mpe_mma and mpe_gemm set it themselves for a call whose packed operands are one
     E4M3 and one E5M2 (or one E4M3FNUZ and one E5M2FNUZ); see mpe_mma(3). A custom model whose
     in_b differs from `in` takes only such mixed calls (others: MPE_EINVAL). */
  int in_b;
  /* AMD matrix cores: 0 for every other model, or the CDNA arithmetic of an
     MFMA instruction (mpe_tc_mfma) whose products are summed otherwise than
     by the block engine above (MPE_TC_BLOCK models, binary32 output only). */
  int mfma;
  /* Arm models (kind MPE_TC_ARM_BFDOT; 0 for every other kind): the FPCR the instruction
     runs under, as the register's bits (MPE_TC_FPCR_*). With EBF clear (FEAT_EBF16 absent
     or FPCR.EBF = 0) the instruction reads none of it (round to odd, inputs and results
     flushed); with EBF set it reads RMode, FZ, FIZ and AH. `block` is the instruction's K
     (2: BFDOT, 4: BFMMLA), the unit K is padded to with zero elements. round_fp32 tells
     the resulting rounding (MPE_RO, or RMode's) and is set from fpcr by
     mpe_tc_model_custom. */
  int fpcr;
  /* CPU dot-product models (kind MPE_TC_CPU_CHAIN; 0 for every other kind). K is padded
     with +0 to a whole number of pairs (k = 2p, 2p + 1); `block` is the instruction's K.
     pair_order: MPE_TC_PAIR_ASCENDING: d = fma(a_k, b_k, d) for ascending k;
     MPE_TC_PAIR_ODD_FIRST: the same with the odd k of each pair first (VDPBF16PS);
     MPE_TC_PAIR_SPLIT: per instruction, the even and the odd k summed by fmas into two
     binary32 partial sums starting at +0, then d = d + (even + odd) (TDPBF16PS as the
     SDM writes it). flush: MPE_TC_DAZ_AB (subnormal A, B elements read as zero),
     MPE_TC_DAZ_C (a subnormal C read as zero), MPE_TC_FTZ (every binary32 result that is
     tiny after rounding becomes a zero of its sign). See mpe_tc_model_get(3). */
  int pair_order;
  int flush;
  /* FP8 block models (MPE_E4M3, MPE_E5M2) only; 0 for every other model. 0: binary16
     output as the fields above say (default); F' in 1..58 (bounded like align_bits by the
     block length): with binary16 output each block is two binary16 blocks and one
     addition, as Hopper's and Blackwell's mma.sync FP8 with binary16 D compute it: the
     block's products at k mod 4 in {0, 1} (the operands taken as the binary16 values they
     are) and a +0 c form a truncating block of F' alignment bits, rounded to binary16
     (round_fp16); that result is the c of the second, the products at k mod 4 in {2, 3};
     c is then added with one binary16 addition (round_fp16). Binary32 output does not read
     it. `block` must be a multiple of 4. See mpe_tc_model_get(3). */
  int fp16_split;
} mpe_tc_params;

/* mpe_tc_params.mfma (mpe_tc_model_get(3)). */
typedef enum {
  MPE_TC_MFMA_NONE = 0,
  /* CDNA2 (MI200): FP16/BF16 operands below the format's smallest normal read
     as +0, a zero c below binary32's likewise; products rounded to binary32;
     the `block` (2 or 4) products of a step summed in pairs, then added to the
     accumulator; every sum rounded to nearest-even and flushed to zero (sign
     kept) when below 2^-126 */
  MPE_TC_MFMA_FTZ = 1,
  /* CDNA3 (MI300): the block's products are aligned and cut toward zero at
     2^(E_max - align_bits); the sum, cut toward -inf to result_bits + 1
     fraction bits, and c, cut toward -inf to align_bits, are added at their
     larger exponent; that sum, cut toward -inf to result_bits fraction bits,
     is rounded to nearest-even (align_bits 24, result_bits 31) */
  MPE_TC_MFMA_TWO_STAGE = 2,
  /* CDNA3 FP8 (MI300, MPE_E4M3FNUZ and MPE_E5M2FNUZ operands): MPE_TC_MFMA_TWO_STAGE
     with the block's products in two partial sums, the even k and the odd k
     of the block, each aligned and cut toward zero at 2^(its own E_max -
     align_bits); the two are added at their larger exponent, the smaller cut
     toward -inf to align_bits fraction bits there, and that sum goes on as the
     cut sum of MPE_TC_MFMA_TWO_STAGE, except that a c whose exponent lies more
     than align_bits + 1 below the larger of the two adds nothing (block 16) */
  MPE_TC_MFMA_TWO_STAGE_SPLIT = 3
} mpe_tc_mfma;

/* Instruction families (mpe_tc_params.instr). */
typedef enum {
  MPE_TC_INSTR_NONE = 0,  /* unnamed (custom models, the references) */
  MPE_TC_MMA_SYNC = 1,    /* mma.sync (warp-level; Volta m8n8k4, Turing..Blackwell m16n8kK) */
  MPE_TC_WGMMA = 2,       /* wgmma.mma_async (Hopper, warpgroup-level) */
  MPE_TC_TCGEN05 = 3,     /* tcgen05.mma (datacenter Blackwell, tensor memory) */
  MPE_TC_MFMA = 4,        /* v_mfma (AMD CDNA matrix cores: MI100, MI200, MI300) */
  /* x86 (mpe_tc_model_get(3), mpe_cpu_gemm(3)) */
  MPE_TC_X86_VDPBF16PS = 16, /* AVX512_BF16 */
  MPE_TC_X86_TDPBF16PS = 17, /* AMX-BF16 */
  MPE_TC_X86_TDPFP16PS = 18, /* AMX-FP16 */
  MPE_TC_X86_TDPBSSD = 19,   /* AMX-INT8: TDPBSSD, TDPBSUD, TDPBUSD, TDPBUUD */
  MPE_TC_X86_VPDPBUSD = 20,  /* AVX512_VNNI, AVX-VNNI (u8 A, s8 B, int32 wrap-around) */
  MPE_TC_X86_VPDPBUSDS = 21, /* the same, each instruction's int32 result saturated */
  /* Arm A64, Advanced SIMD and SVE (FEAT_BF16) */
  MPE_TC_ARM_BFDOT_I = 32, /* BFDOT (vectors and by element) */
  MPE_TC_ARM_BFMMLA = 33   /* BFMMLA */
} mpe_tc_instr;

/* pair_order and flush (MPE_TC_CPU_CHAIN models) */
#define MPE_TC_PAIR_ASCENDING 0
#define MPE_TC_PAIR_ODD_FIRST 1
#define MPE_TC_PAIR_SPLIT 2
#define MPE_TC_DAZ_AB 1
#define MPE_TC_DAZ_C 2
#define MPE_TC_FTZ 4

/* mpe_tc_params.fpcr: the bits of the Arm FPCR register the models read */
#define MPE_TC_FPCR_FIZ (1 << 0)         /* flush denormal inputs (FEAT_AFP) */
#define MPE_TC_FPCR_AH (1 << 1)          /* alternate handling (FEAT_AFP) */
#define MPE_TC_FPCR_EBF (1 << 13)        /* extended BF16 behaviours (FEAT_EBF16) */
#define MPE_TC_FPCR_RMODE(r) ((r) << 22) /* 0 RN, 1 RP, 2 RM, 3 RZ */
#define MPE_TC_FPCR_FZ (1 << 24)         /* flush to zero */

/* scale_fmts bits: the (scale format, elements per scale) pairs a block-scaled model accepts */
#define MPE_TC_SF_UE8M0_32 1   /* MPE_E8M0 scales, one per 32 elements along K */
#define MPE_TC_SF_UE8M0_16 2   /* MPE_E8M0 scales, one per 16 */
#define MPE_TC_SF_UE4M3_16 4   /* MPE_E4M3 scales read as unsigned (sign bit ignored), one per 16 */

/* name: a GPU, "v100", "t4", "a100", "ada", "h100", "b200", "rtx-pro-6000" (aliases:
   "a2","a30","l40s","h200"), optionally followed by ":" and an instruction, "mma.sync",
   "wgmma" (h100) or "tcgen05" (b200), e.g. "b200:mma.sync"; a GPU name alone gives the
   instruction cuBLAS issues for a GEMM of that type on that GPU (mpe_tc_model_get(3)).
   The references: "exact" (exact dot product, one RNE rounding) and
   "fma-chain" (sequential binary32 fma, ascending k). in: MPE_FP16, MPE_BF16, MPE_TF32,
   MPE_E4M3, MPE_E5M2, and for the integer tensor cores MPE_INT8, MPE_UINT8 ("t4", "a100",
   "ada", "h100", "b200", "exact") and MPE_INT4, MPE_UINT4 ("t4", "a100", "ada", "exact"): exact
   int32 accumulation, see mpe_tc_int(3). MPE_FP64 ("a100", "ada", "h100", "b200",
   "rtx-pro-6000", "mi250", "mi300", "fma-chain"): the FP64 instructions, a chain of
   binary64 fmas (mpe_mma and mpe_gemm with binary64 operands). AMD matrix cores
   (v_mfma): "mi100" (CDNA1: FP16, BF16), "mi250" (CDNA2: FP16, BF16 (the _1k
   instructions), FP64; "mi250:bf16": the BF16 instructions without _1k), "mi300"
   (CDNA3: FP16, BF16, TF32 (xf32), FP64, and FP8 as MPE_E4M3FNUZ and MPE_E5M2FNUZ, the
   _fp8_fp8, _fp8_bf8, _bf8_fp8 and _bf8_bf8 instructions); aliases "mi210", "mi250x", "mi300x",
   "mi300a", "mi325x". The x86 dot-product instructions ("CPU models"): "avx512-bf16"
   (VDPBF16PS), "amx-bf16" (TDPBF16PS), MPE_BF16; "amx-fp16" (TDPFP16PS), MPE_FP16;
   "amx-int8" (MPE_INT8, MPE_UINT8); "avx512-vnni", "avx-vnni" and their ":vpdpbusds"
   (MPE_UINT8). Arm BF16 dot products (MPE_BF16 only): "arm-bfdot", "arm-bfmmla"
   (FPCR.EBF = 0) and "arm-bfdot-ebf16", "arm-bfmmla-ebf16" (FEAT_EBF16 with FPCR.EBF = 1,
   the rest of FPCR zero: round to nearest, no flushing); see mpe_tc_model_get(3), "Arm
   models". NULL when that GPU or CPU has no such instruction. */
MPE_API const mpe_tc_model *mpe_tc_model_get(const char *name, mpe_type in);

/* How mpe_tc_params grows without breaking programs built against an older
   header: new fields are only ever appended, and a zero value of a new field
   keeps the behaviour from before it existed. The functions that fill or read
   the struct are told its size as the caller was compiled: mpe_tc_model_params
   and mpe_tc_model_custom are macros passing sizeof *(p) to the _sized
   functions, so source that builds the struct with designated initialisers, or
   from mpe_tc_model_params, compiles unchanged. The library writes only `size`
   bytes, treats the fields past `size` as zero, and refuses (MPE_EUNSUP) a
   struct from a newer header whose fields unknown to it are not all zero.
   MPE_TC_PARAMS_SIZE_V1 is the size of the first layout (kind .. satfinite);
   smaller sizes are MPE_EINVAL. The plain functions remain exported for
   programs built before the macros: they use MPE_TC_PARAMS_SIZE_V1. */
#define MPE_TC_PARAMS_SIZE_V1 (offsetof(mpe_tc_params, satfinite) + sizeof(int))

/* The model's parameters; MPE_EINVAL for NULL. */
MPE_API int mpe_tc_model_params_sized(const mpe_tc_model *model, mpe_tc_params *p, size_t size);
MPE_API int (mpe_tc_model_params)(const mpe_tc_model *model, mpe_tc_params *p);
#define mpe_tc_model_params(model, p) mpe_tc_model_params_sized((model), (p), sizeof *(p))
/* The canonical name: the GPU alone ("h100") for the instruction cuBLAS issues, else
   "gpu:instruction" ("h100:mma.sync"); "exact", "fma-chain"; "custom" for a model made by
   mpe_tc_model_custom. */
MPE_API const char *mpe_tc_model_name(const mpe_tc_model *model);
/* The names mpe_tc_model_get takes, one for each i from 0: first every canonical name
   (as mpe_tc_model_name gives it: "v100", ..., "h100:mma.sync", "b200:mxf4", "exact",
   "avx512-vnni:vpdpbusds", ...), each once, then the aliases ("a2", "h200", "mi300x",
   ...); NULL for i < 0 and past the last. A name is valid for the input types whose
   mpe_tc_model_get is not NULL. See mpe_tc_model_name_at(3). */
MPE_API const char *mpe_tc_model_name_at(int i);
/* A model from parameters (for "what if the H100 kept one more bit" questions):
   start from mpe_tc_model_params of a named model and change fields. On
   failure *m is NULL (<mpemu/core.h>); MPE_EINVAL for a parameter out of range, MPE_ENOMEM.
   Free with mpe_tc_model_free (NULL and the built-in models are ignored). */
MPE_API int mpe_tc_model_custom_sized(mpe_tc_model **m, const mpe_tc_params *p, size_t size);
MPE_API int (mpe_tc_model_custom)(mpe_tc_model **m, const mpe_tc_params *p);
#define mpe_tc_model_custom(m, p) mpe_tc_model_custom_sized((m), (p), sizeof *(p))
MPE_API void mpe_tc_model_free(mpe_tc_model *m);

/* Instruction semantics, row-major: D = A*B + C with C entering the first hardware block and
   blocks chained in ascending k. A is m×k, B k×n, C and D m×n. atype/btype: MPE_FP32 (binary32
   values, converted with the model's input rule) or the packed input type (uint16_t for
   FP16/BF16, uint8_t for FP8; with an FP8 model, one operand may be packed E4M3 and the other
   packed E5M2, or with mi300's FNUZ models one E4M3FNUZ and one E5M2FNUZ: the mixed FP8
   instructions). dtype: MPE_FP32 (C, D are float) or MPE_FP16 (uint16_t).
   Integer models: atype/btype MPE_INT8 or MPE_UINT8 (8-bit models), MPE_INT4 or MPE_UINT4
   (4-bit models, one value per byte), dtype MPE_INT32 (C, D are int32_t); see mpe_tc_int(3). */
MPE_API int mpe_mma(const mpe_tc_model *model, int m, int n, int k,
                    const void *A, mpe_type atype, int lda,
                    const void *B, mpe_type btype, int ldb,
                    const void *C, int ldc, void *D, mpe_type dtype, int ldd);

/* mpe_mma with C and D of their own types: ctype == dtype is mpe_mma; ctype MPE_FP16 (C as
   uint16_t binary16 patterns) with dtype MPE_FP32 is Volta's mma.sync.m8n8k4 .f32.f16.f16.f16
   (models "v100", "exact", "fma-chain" and custom FP16 models; MPE_EUNSUP for the other GPUs,
   which have no such instruction). See mpe_mma_cd(3). */
MPE_API int mpe_mma_cd(const mpe_tc_model *model, int m, int n, int k,
                       const void *A, mpe_type atype, int lda,
                       const void *B, mpe_type btype, int ldb,
                       const void *C, mpe_type ctype, int ldc, void *D, mpe_type dtype, int ldd);

/* BLAS semantics (what cublasGemmEx/cublasLtMatmul compute): accumulator starts at 0,
   C = alpha*acc + beta*C. Argument order follows cblas_sgemm with types added.
   Integer models: ctype MPE_INT32, alpha and beta integers (cuBLASLt's CUBLAS_COMPUTE_32I
   with an int32 scale type), the epilogue in int32 arithmetic; see mpe_tc_int(3). */
typedef enum { MPE_ROW_MAJOR, MPE_COL_MAJOR } mpe_layout;
typedef enum { MPE_NO_TRANS, MPE_TRANS } mpe_trans;
MPE_API int mpe_gemm(const mpe_tc_model *model, mpe_layout layout, mpe_trans ta, mpe_trans tb,
                     int m, int n, int k, float alpha,
                     const void *A, mpe_type atype, int lda,
                     const void *B, mpe_type btype, int ldb,
                     float beta, void *C, mpe_type ctype, int ldc);

/* Block-scaled instruction semantics (tcgen05.mma kind::mxf8f6f4, kind::mxf4, kind::mxf4nvf4
   with .block_scale), row-major like mpe_mma: D = (A*SA)(B*SB) + C. A is m×k element codes of
   atype, B k×n codes of btype, one code per byte in the low bits (MPE_E4M3, MPE_E5M2, MPE_E2M3,
   MPE_E3M2, MPE_E2M1, as the model's kind allows). stype MPE_E8M0 or MPE_E4M3 (UE4M3: the sign
   bit is ignored), one scale per sblock (16 or 32) consecutive elements along K: SA is
   m × ceil(k/sblock) (scale of A(i, l) at SA[i*ldsa + l/sblock]), SB ceil(k/sblock) × n (scale
   of B(l, j) at SB[(l/sblock)*ldsb + j]). C (NULL: zero) and D are m×n binary32 (dtype
   MPE_FP32). K is cut into the model's instructions in ascending k; a K that is not a whole
   number of instructions is padded with zero elements. See mpe_mma_scaled(3). */
MPE_API int mpe_mma_scaled(const mpe_tc_model *model, int m, int n, int k,
                           const void *A, mpe_type atype, int lda,
                           const void *B, mpe_type btype, int ldb,
                           const uint8_t *SA, int ldsa, const uint8_t *SB, int ldsb,
                           mpe_type stype, int sblock,
                           const void *C, int ldc, void *D, mpe_type dtype, int ldd);

/* BLAS semantics over block-scaled operands (the block-scaled cublasLtMatmul): accumulator
   starts at 0, C = alpha*acc + beta*C, C binary32 (ctype MPE_FP32). SA holds the scales of
   op(A) as an m × ceil(k/sblock) matrix and SB those of op(B) as ceil(k/sblock) × n, both
   stored in `layout` with leading dimensions ldsa, ldsb. See mpe_gemm_scaled(3). */
MPE_API int mpe_gemm_scaled(const mpe_tc_model *model, mpe_layout layout, mpe_trans ta, mpe_trans tb,
                            int m, int n, int k, float alpha,
                            const void *A, mpe_type atype, int lda,
                            const void *B, mpe_type btype, int ldb,
                            const uint8_t *SA, int ldsa, const uint8_t *SB, int ldsb,
                            mpe_type stype, int sblock,
                            float beta, void *C, mpe_type ctype, int ldc);

/* The hardware path of the CPU models: mpe_mma and mpe_gemm computed by the instruction a
   built-in CPU model describes ("avx512-bf16": VDPBF16PS, "amx-bf16": TDPBF16PS, "amx-fp16":
   TDPFP16PS, "amx-int8": TDPB[SU][SU]D, "avx512-vnni" / "avx-vnni" and their ":vpdpbusds":
   VPDPBUSD(S)) on the running CPU. Same arguments and argument rules as mpe_mma and
   mpe_gemm; binary32 (int32) C and D only. MPE_EUNSUP when the model names no CPU
   instruction (other models, custom models) or this CPU (or its operating system) does not
   run it; mpe_gemm itself never uses the hardware. See mpe_cpu_gemm(3). */
MPE_API int mpe_cpu_mma(const mpe_tc_model *model, int m, int n, int k,
                        const void *A, mpe_type atype, int lda,
                        const void *B, mpe_type btype, int ldb,
                        const void *C, int ldc, void *D, mpe_type dtype, int ldd);
MPE_API int mpe_cpu_gemm(const mpe_tc_model *model, mpe_layout layout, mpe_trans ta, mpe_trans tb,
                         int m, int n, int k, float alpha,
                         const void *A, mpe_type atype, int lda,
                         const void *B, mpe_type btype, int ldb,
                         float beta, void *C, mpe_type ctype, int ldc);

#ifdef __cplusplus
}
#endif
#endif
