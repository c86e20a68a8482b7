/* Internal declarations of the tensor-core module (emu/tc_*.c). */
#ifndef MPEI_TC_IMPL_H
#define MPEI_TC_IMPL_H
#include <limits.h>
#include "mpei.h"
#include "mpemu/tc.h"
#include "tc_iface.h"

/* The format a block result is rounded to: binary32 or binary16. */
typedef struct {
  int p, emin, emax;
  mpe_round mode;
  int result_bits;
  int zexp;        /* the exponent of a zero c in E_max; MPEI_TC_ZERO_EXP: it drops out */
  int zero_sign;   /* 1: every zero block result is +0 */
  int c_emin;      /* the floor of a non-zero c's exponent in E_max (emin; -14 for the
                      binary16 C of mpe_mma_cd entering a binary32 block, mpei_tc_dot_c16) */
  int split;       /* 0, or binary16 output as two blocks of F' = split alignment bits
                      and c added after (mpe_tc_params.fp16_split) */
} mpei_tc_out;
MPEI_HIDDEN void mpei_tc_out_of(const struct mpe_tc_model *m, int out16, mpei_tc_out *o);

/* Round mag * 2^exp (plus a sticky bit below mag when sticky != 0) to p bits,
   normal exponents emin..emax, mode r; overflow gives inf. */
MPEI_HIDDEN double mpei_tc_round(int neg, uint64_t mag, int exp, int sticky, int p, int emin, int emax,
                                 mpe_round r);

/* The portable engine, the oracle of every fast path: one output
   d = sum_k a[k] b[k*bstride] + c under the model. a, b hold exact input-format
   values (inf/NaN allowed), c an exact value of the output format. The result
   is an exact value of the output format (NaN: any NaN). */
MPEI_HIDDEN double mpei_tc_dot(const struct mpe_tc_model *m, const double *a, const double *b,
                               long bstride, int k, double c, int out16);

/* fp16_split (binary16 output): h gets the model of the two binary16 blocks
   (block / 2 products each, binary16 operands, F = fp16_split, c inside,
   chained as usual); mpei_tc_split_add is the last step, r (their result)
   + c rounded once (o: the binary16 output of the model, mpei_tc_out_of). */
MPEI_HIDDEN void mpei_tc_split_model(const struct mpe_tc_model *m, struct mpe_tc_model *h);
MPEI_HIDDEN double mpei_tc_split_add(const mpei_tc_out *o, double r, double c);

/* mpei_tc_dot with binary32 output whose c is a binary16 value (Volta's
   mma.m8n8k4 .f32 D with .f16 C): in the first block c's exponent has
   binary16's floor -14; the later blocks are mpei_tc_dot's. */
MPEI_HIDDEN double mpei_tc_dot_c16(const struct mpe_tc_model *m, const double *a, const double *b, long bstride,
                                   int k, double c);

/* The shared driver of mpe_mma and mpe_gemm: acc[i*n + j] receives the value of
   output (i, j) of the chained-block computation (exact output-format values,
   held in binary32). c == NULL (or c->p == NULL) means an accumulator starting at zero.
   Returns 0 or MPE_ENOMEM. */
MPEI_HIDDEN int mpei_tc_run(const struct mpe_tc_model *m, int M, int N, int K, const mpei_tc_opnd *a,
                            const mpei_tc_opnd *b, const mpei_tc_opnd *c, int out16, float *acc);

/* The sizes, leading dimensions and pointers of an mpe_mma call (row-major A
   m×k, B k×n, C and D m×n; C may be NULL): MPE_EINVAL or MPE_OK. */
MPEI_HIDDEN int mpei_tc_mma_shape_check(int m, int n, int k, const void *A, int lda, const void *B, int ldb,
                                        const void *C, int ldc, const void *D, int ldd);
/* The product of an mpe_mma call on M×N accumulators acc (row-major, leading
   dimension N), which hold C on entry and D on return: MPE_OK or an error. */
typedef int (*mpei_tc_acc_run)(const struct mpe_tc_model *m, int M, int N, int K, const mpei_tc_opnd *a,
                               const mpei_tc_opnd *b, void *acc);
/* An mpe_mma call whose C and D elements (es bytes: int32, binary64) are
   copied as they are, after its arguments are checked: run on a malloc'ed
   m×n copy of C (zeros when C is NULL), then the copy into D when run gives
   MPE_OK. Nothing is done when m or n is 0. MPE_OK, MPE_ENOMEM or run's error. */
MPEI_HIDDEN int mpei_tc_mma_acc(const struct mpe_tc_model *model, mpei_tc_acc_run run, int m, int n, int k,
                                const void *A, mpe_type atype, int lda, const void *B, mpe_type btype, int ldb,
                                const void *C, int ldc, void *D, int ldd, size_t es);

/* the model has a binary16 output (dtype / ctype MPE_FP16): not the TF32
   block models nor AMD's matrix cores (their calls give MPE_EUNSUP) */
MPEI_HIDDEN int mpei_tc_out16_ok(const struct mpe_tc_model *m);

/* atype/btype t is one the model reads: MPE_FP32 or its input type */
MPEI_HIDDEN int mpei_tc_in_ok(const struct mpe_tc_model *m, mpe_type t);

/* mpei_tc_epilogue_strided's row-major case: C with leading dimension ldc. */
MPEI_HIDDEN void mpei_tc_epilogue_run(const float *acc, int M, int N, float alpha, float beta, int use_ab,
                                      void *C, mpe_type ctype, int ldc);

/* ---- fast kernels (tc_kernel.h, compiled per SIMD level) */
/* Where the fast kernels sum a block's cut addends. Each cut product is an
   integer of magnitude at most 2^(F+2) - 1 (significands below 2 each, scaled
   by 2^(F - E_max)), so n of them sum to at most n * (2^(F+2) - 1):
     MPEI_TC_ACC_I32    L products in one int32 lane:       L * (2^(F+2) - 1) <= 2^31 - 1
     MPEI_TC_ACC_I32X2  each half of the block in its own int32 lane, the two
                        joined in binary64:                  ceil(L/2) * (2^(F+2) - 1) <= 2^31 - 1
     MPEI_TC_ACC_F64    in a binary64 lane, exactly:        L * (2^(F+2) - 1) + 2^(F+1) <= 2^53
     MPEI_TC_ACC_NONE   no fast kernel holds it: the portable engine (int64 / exact) runs.
   The binary32 scaled product must also be an exact integer below 2^31 for the
   int32 path (F <= 29). Every model, built-in or custom, gets its path from this
   one function; no kernel is ever handed a model outside its bound. */
typedef enum { MPEI_TC_ACC_FMA, MPEI_TC_ACC_I32, MPEI_TC_ACC_I32X2, MPEI_TC_ACC_F64, MPEI_TC_ACC_NONE } mpei_tc_acc;
MPEI_HIDDEN mpei_tc_acc mpei_tc_acc_of(const mpe_tc_params *p);

/* Parameters of one call of the block kernel. */
typedef struct {
  int L, F, nblk;        /* products per block, alignment bits, blocks to run */
  int p1;                /* 0, or cut each block result to p1 bits first (toward zero) */
  int p, emin, emax;     /* output format of a block */
  int mode;              /* its rounding (MPE_RNE, RNA, RZ, RU, RD) */
  int zero_c;            /* the exponent of a zero c in E_max (MPEI_TC_ZERO_EXP: none) */
  int late_c;            /* c is added after the block, rounded to nearest-even */
  int zero_sign;         /* every zero block result is +0 */
  int half;              /* 0, or the first `half` products and the rest go to two int32
                            sums (MPEI_TC_ACC_I32X2) */
  /* NULL, or pass 1 in int16 lanes (blk_kernel without half): the exponents
     again as int16 (zeros MPEI_TC_ZERO_EXP16), A's laid out as ae (element
     (k, r) of the panel at ae0[i] is a16[i]), B's with each twice (element
     (k, j) at be0[i] is b16[2i] and b16[2i + 1]) */
  const int32_t *ae0, *be0;
  const int16_t *a16, *b16;
  int pair;              /* fp16_split: blocks 2i and 2i + 1 are one instruction, the
                            first started from +0, c added after the second with one
                            rounding (mode) */
} mpei_tc_kp;
/* Block kernel: MR rows × VW columns. av/ae: packed A panel (element (k, r) at
   k*MR + r: binary32 value, exponent), bv/be: packed B panel ((k, j) at k*VW + j),
   c: MR rows of VW accumulators (row r at c + r*ldc), updated in place.
   Fma kernel: c[r][j] = fmaf(a[k][r], b[k][j], c[r][j]) for k < K, on a tile of
   MRF rows × MPEI_TC_NRF*VW columns (B panels that wide: (k, j) at k*NRF*VW + j). */
typedef void (*mpei_tc_blk_fn)(const float *av, const int32_t *ae, const float *bv, const int32_t *be,
                               float *c, long ldc, const mpei_tc_kp *kp);
typedef void (*mpei_tc_fma_fn)(const float *av, const float *bv, float *c, long ldc, int K);
/* One row of the epilogue C = alpha*acc + beta*C (emu/tc_epilogue.h). */
typedef void (*mpei_tc_epi_fn)(float *c, const float *v, int n, float alpha, float beta, int use_ab);
/* The same on a row of binary16 C: read exactly, the binary32 result rounded
   to binary16 (nearest-even), a NaN 0x7fff. */
typedef void (*mpei_tc_epi16_fn)(uint16_t *c, const float *v, int n, float alpha, float beta, int use_ab);
/* Packing (tc_kernel.h): n binary16 (bf16: bfloat16) values decoded to binary32,
   and the exponents of n packed values (bit 0 of the result: one outside
   [lo, hi]; bit 1: an inf or NaN). */
typedef void (*mpei_tc_dec16_fn)(const uint16_t *src, int bf16, float *dst, int n);
typedef int (*mpei_tc_pack_exp_fn)(const float *v, int32_t *e, size_t n, int pin, int lo, int hi);
/* Each instruction set's build of tc_kernel.h defines these (emu/isa.c
   puts them in its table, with the register geometry below). */
#define MPEI_TC_DECLARE(isa)                                                                   \
  MPEI_HIDDEN void mpei_tc_blk_##isa(const float *, const int32_t *, const float *, const int32_t *, \
                                     float *, long, const mpei_tc_kp *);                       \
  MPEI_HIDDEN void mpei_tc_blkw_##isa(const float *, const int32_t *, const float *, const int32_t *, \
                                      float *, long, const mpei_tc_kp *);                      \
  MPEI_HIDDEN void mpei_tc_fma_##isa(const float *, const float *, float *, long, int);         \
  MPEI_HIDDEN void mpei_tc_epilogue_##isa(float *, const float *, int, float, float, int);      \
  MPEI_HIDDEN void mpei_tc_epilogue16_##isa(uint16_t *, const float *, int, float, float, int); \
  MPEI_HIDDEN void mpei_tc_dec16_##isa(const uint16_t *, int, float *, int);                    \
  MPEI_HIDDEN int mpei_tc_pack_exp_##isa(const float *, int32_t *, size_t, int, int, int);
/* 2:4 sparse A (emu/tc_sparse.c): the same kernels over the packed kept values
   of A (panels of MRS rows, MRFS for the fma chain), where ax (laid out like
   av) gives for each kept value the offset of the B row it multiplies in a B
   panel. Block kernels: bv/be are MPEI_TC_NRS vectors of B bpitch elements
   apart (the driver packs them side by side in one panel, bpitch = VW, rows
   NRS*VW apart) and c is a tile of MRS rows × MPEI_TC_NRS*VW columns. Fma
   kernel: B panels MPEI_TC_NRFS*VW wide (a row's vectors side by side) and
   c a tile of MRFS rows × MPEI_TC_NRFS*VW columns. */
typedef void (*mpei_tc_blk_sp_fn)(const float *av, const int32_t *ae, const int32_t *ax, const float *bv,
                                  const int32_t *be, long bpitch, float *c, long ldc, const mpei_tc_kp *kp);
typedef void (*mpei_tc_fma_sp_fn)(const float *av, const int32_t *ax, const float *bv, float *c, long ldc,
                                  int K);
#define MPEI_TC_SP_DECLARE(isa)                                                                \
  MPEI_HIDDEN void mpei_tc_blk_sp_##isa(const float *, const int32_t *, const int32_t *, const float *, \
                                        const int32_t *, long, float *, long, const mpei_tc_kp *); \
  MPEI_HIDDEN void mpei_tc_blkw_sp_##isa(const float *, const int32_t *, const int32_t *, const float *, \
                                         const int32_t *, long, float *, long, const mpei_tc_kp *); \
  MPEI_HIDDEN void mpei_tc_fma_sp_##isa(const float *, const int32_t *, const float *, float *, long, int);
#ifdef HAVE_X86_SIMD
MPEI_TC_DECLARE(avx2)
MPEI_TC_DECLARE(avx512)
MPEI_TC_SP_DECLARE(avx2)
MPEI_TC_SP_DECLARE(avx512)
#endif
/* register geometry: VW columns per vector, MR rows per block-kernel call,
   MRF rows per fma-kernel call */
enum { MPEI_TC_AVX2_VW = 8, MPEI_TC_AVX2_MR = 4, MPEI_TC_AVX2_MRF = 6,
       MPEI_TC_AVX512_VW = 16, MPEI_TC_AVX512_MR = 6, MPEI_TC_AVX512_MRF = 12,
       /* the fma kernel's tiles are MPEI_TC_NRF vectors wide */
       MPEI_TC_NRF = 2,
       /* the sparse kernels' rows per call; the block kernels' tiles are
          MPEI_TC_NRS vectors wide, the fma kernel's MPEI_TC_NRFS (its loads per
          product fall with the width: each row gathers its own B rows) */
       MPEI_TC_NRS = 2, MPEI_TC_NRFS = 4,
       MPEI_TC_AVX2_MRS = 2, MPEI_TC_AVX2_MRFS = 3, MPEI_TC_AVX512_MRS = 4, MPEI_TC_AVX512_MRFS = 6 };
/* Exponent given to zero operands in packed panels: never the largest. */
/* the largest k the calls take: K padded to whole blocks, panels and
   segments (at most 4096 more) must still fit an int */
#define MPEI_TC_K_MAX (INT_MAX - 4096)

#define MPEI_TC_ZERO_EXP (-(1 << 20))
/* The same in the int16 exponents: twice it still fits int16. */
#define MPEI_TC_ZERO_EXP16 (-(1 << 14))

/* The end of mpe_tc_model_custom for every kind (tc_model.c): the checks all kinds
   share (input_round MPE_RZ, MPE_RNE or MPE_RNA; zero_c_counts 0 or 1; unless
   block_fields, the fields only the block engines read, align_bits .. mfma, zero),
   then *out = a new model "custom" holding *p. MPE_OK, MPE_EINVAL or MPE_ENOMEM. */
MPEI_HIDDEN int mpei_tc_custom_new(mpe_tc_model **out, const mpe_tc_params *p, int block_fields);

/* ---- integer tensor cores (tc_int.c) */
/* mpe_tc_model_custom for an integer input type. */
MPEI_HIDDEN int mpei_tc_int_custom(mpe_tc_model **out, const mpe_tc_params *p);
/* mpe_mma / mpe_gemm when the model or a type is an integer one (arguments as
   the public calls; the caller has checked nothing but model != NULL). */
MPEI_HIDDEN int mpei_tc_int_mma(const struct mpe_tc_model *model, int m, int n, int k, const void *A,
                                mpe_type atype, int lda, const void *B, mpe_type btype, int ldb,
                                const void *C, int ldc, void *D, mpe_type dtype, int ldd);
MPEI_HIDDEN int mpei_tc_int_gemm(const struct mpe_tc_model *model, mpe_layout layout, mpe_trans ta,
                                 mpe_trans tb, int m, int n, int k, float alpha, const void *A,
                                 mpe_type atype, int lda, const void *B, mpe_type btype, int ldb,
                                 float beta, void *C, mpe_type ctype, int ldc);

/* ---- binary64 models (tc_f64.c): mpe_mma / mpe_gemm when the model or a type
   is MPE_FP64 (arguments as the public calls; MPE_EINVAL unless the model and
   every operand are FP64) */
MPEI_HIDDEN int mpei_tc_f64_mma(const struct mpe_tc_model *model, int m, int n, int k, const void *A,
                                mpe_type atype, int lda, const void *B, mpe_type btype, int ldb,
                                const void *C, int ldc, void *D, mpe_type dtype, int ldd);
MPEI_HIDDEN int mpei_tc_f64_gemm(const struct mpe_tc_model *model, mpe_layout layout, mpe_trans ta,
                                 mpe_trans tb, int m, int n, int k, float alpha, const void *A,
                                 mpe_type atype, int lda, const void *B, mpe_type btype, int ldb,
                                 float beta, void *C, mpe_type ctype, int ldc);
/* ---- Arm BF16 dot products (tc_arm.c) */
/* mpe_tc_model_custom for kind MPE_TC_ARM_BFDOT. */
MPEI_HIDDEN int mpei_tc_arm_custom(mpe_tc_model **out, const mpe_tc_params *p);
/* mpei_tc_dot for kind MPE_TC_ARM_BFDOT (binary32 output): the Arm pseudo-code's
   BFDotAdd steps over the pairs of k, K padded with zeros to a multiple of block. */
MPEI_HIDDEN double mpei_tc_arm_dot(const struct mpe_tc_model *m, const double *a, const double *b, long bstride,
                                   int k, double c);
/* mpei_tc_run for those models: MPE_EUNSUP when no fast kernel covers the call. */
MPEI_HIDDEN int mpei_tc_arm_run(const struct mpe_tc_model *m, int M, int N, int K, const mpei_tc_opnd *a,
                                const mpei_tc_opnd *b, const mpei_tc_opnd *c, float *acc);
/* ---- CPU dot-product models (tc_cpu.c) */
/* mpe_tc_model_custom for kind MPE_TC_CPU_CHAIN. */
MPEI_HIDDEN int mpei_tc_cpu_custom(mpe_tc_model **out, const mpe_tc_params *p);
/* mpei_tc_dot for kind MPE_TC_CPU_CHAIN (binary32 output only). */
MPEI_HIDDEN double mpei_tc_cpu_dot(const struct mpe_tc_model *m, const double *a, const double *b, long bstride,
                                   int k, double c);

/* ---- block-scaled models (tc_scaled.c) */
/* The rules for a custom model's block-scaled fields (scale_group,
   scale_fmts, scale_zero_exp and what they ask of the others): MPE_OK or
   MPE_EINVAL. */
MPEI_HIDDEN int mpei_tc_scaled_params_ok(const mpe_tc_params *p);
/* Output (i, j) of a block-scaled call under model m (scale_group > 0):
   row i of a, column j of b (both with sc set), initial accumulator c (an
   exact binary32 value). Returns the exact binary32 result (NaN: any NaN). */
MPEI_HIDDEN double mpei_tc_dot_scaled(const struct mpe_tc_model *m, const mpei_tc_opnd *a, const mpei_tc_opnd *b,
                                      int i, int j, int K, double c);
/* mpei_tc_pack (tc_pack.h) for an operand with scales: the value of each
   element times its scale (binary32) and, with pk->e, the element's exponent
   (at least its format's emin) plus the scale's; rows holding an inf, a NaN
   or a NaN scale are marked in bad. Returns 1 when some exponent is outside
   [lo, hi]. */
MPEI_HIDDEN int mpei_tc_pack_scaled(const mpei_tc_opnd *x, int transpose, int rows, int K, int Kp, int w,
                                    float *v, int32_t *e, unsigned char *bad, int lo, int hi);

/* binary16 bits of an exact binary16 value (NaN -> 0x7fff) and back. */
MPEI_HIDDEN uint16_t mpei_tc_h_bits(double v);
MPEI_HIDDEN float mpei_tc_f_canon(double v);   /* NaN -> 0x7fffffff */
#endif
