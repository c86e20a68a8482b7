/* The tensor-core module's interface to the rest of libmpemu (the GPU path,
   gpu/gpu_host.c): the model's layout, operand views, the argument rules of
   the GEMM and MMA calls and their epilogues, one definition each for the CPU
   and the GPU. Everything else of the module is private to emu/ (tc_impl.h). */
#ifndef MPEI_TC_IFACE_H
#define MPEI_TC_IFACE_H
#include "mpei.h"
#include "mpemu/tc.h"

struct mpe_tc_model {
  const char *name;
  mpe_tc_params p;
  int custom;
};

/* Convert one operand element to its exact input-format value (double). */
MPEI_HIDDEN double mpei_tc_load(const struct mpe_tc_model *m, const void *base, mpe_type t, size_t idx);

/* Scales of a block-scaled operand (mpe_mma_scaled): the scale of the
   element whose index across K is i (A's row, B's column) and along K is l
   is code p[i*rs + (l/block)*cs] of t (MPE_E8M0, or MPE_E4M3 read without
   its sign bit). */
typedef struct { const uint8_t *p; mpe_type t; long rs, cs; int block; } mpei_tc_scale;

/* Operand view: element (i, l) at index i*rs + l*cs; sc: NULL, or the
   scales of a block-scaled operand (whose t is then its element format). */
typedef struct { const void *p; mpe_type t; long rs, cs; const mpei_tc_scale *sc; } mpei_tc_opnd;

/* A BLAS-style GEMM call (mpe_gemm, and the integer GEMM of tc_int.c) made
   row-major: the leading dimensions checked against the stored shapes, NULL
   operands refused where they are read (C always when m, n > 0; A and B when
   use_ab), and a column-major call turned into the row-major C^T = op(B)^T op(A)^T.
   Returns MPE_EINVAL or MPE_OK (layout and transposes must be valid already). */
typedef struct {
  mpei_tc_opnd a, b;   /* op(A) and op(B) of the row-major problem */
  int M, N;            /* its output: M rows of N, C's leading dimension unchanged */
  int a_rows, b_rows;  /* rows of A and B as stored (the bytes they span) */
  int use_ab;          /* the product is formed (as passed in) */
} mpei_tc_call;
MPEI_HIDDEN int mpei_tc_gemm_call(mpe_layout layout, mpe_trans ta, mpe_trans tb, int m, int n, int k,
                                  const void *A, mpe_type atype, int lda, const void *B, mpe_type btype,
                                  int ldb, const void *C, int ldc, int use_ab, mpei_tc_call *o);

/* The argument rules of a floating-point GEMM, one definition for mpe_gemm and
   mpe_gpu_gemm once the input type `in` is known (from the model, or on the GPU
   from the packed operand type): sizes, layout and transposes, `in` one of the
   tensor-core input types (FP16, BF16, TF32, E4M3, E5M2), atype/btype MPE_FP32
   or `in`, ctype MPE_FP32 or MPE_FP16, then mpei_tc_gemm_call with
   use_ab = (k > 0 && alpha != 0). MPE_EINVAL or MPE_OK; *o filled on success. */
MPEI_HIDDEN int mpei_tc_gemm_check(mpe_type in, mpe_layout layout, mpe_trans ta, mpe_trans tb, int m, int n,
                                   int k, float alpha, const void *A, mpe_type atype, int lda, const void *B,
                                   mpe_type btype, int ldb, const void *C, mpe_type ctype, int ldc,
                                   mpei_tc_call *o);
/* The same for mpe_mma and mpe_gpu_mma (row-major A m×k, B k×n, C and D m×n). */
MPEI_HIDDEN int mpei_tc_mma_check(mpe_type in, int m, int n, int k, const void *A, mpe_type atype, int lda,
                                  const void *B, mpe_type btype, int ldb, const void *C, int ldc,
                                  const void *D, mpe_type dtype, int ldd);

/* mpe_gemm's epilogue, the one definition (emu/tc_epilogue.h's epilogue_one
   for the binary32 arithmetic, one RNE rounding for a binary16 C):
   C = alpha*acc + beta*C (use_ab 0: beta*C only) for an M × N acc held
   row-major in binary32 (exact binary16 values when ctype is MPE_FP16), with
   element (i, j) of C at C[i*crs + j*ccs] (binary32, or binary16 bits).
   Exported (mpei_) for the GPU host code and tests/check_gpu. */
MPE_API void mpei_tc_epilogue_strided(const float *acc, int M, int N, float alpha, float beta, int use_ab,
                                      void *C, mpe_type ctype, long crs, long ccs);

static inline int mpei_type_is_int(mpe_type t)
{
  return t == MPE_INT8 || t == MPE_UINT8 || t == MPE_INT4 || t == MPE_UINT4;
}

/* The FP8 family of t: 1 OCP (E4M3, E5M2), 2 FNUZ (E4M3FNUZ, E5M2FNUZ: AMD
   CDNA3), 0 not an FP8 format. A mixed FP8 call pairs the two of one family. */
static inline int mpei_type_fp8(mpe_type t)
{
  return t == MPE_E4M3 || t == MPE_E5M2 ? 1 : t == MPE_E4M3FNUZ || t == MPE_E5M2FNUZ ? 2 : 0;
}

/* The argument rules of the integer calls, one definition for the CPU
   (mpe_mma/mpe_gemm with an integer model) and the GPU path, given the model's
   input type `in`: MPE_EINVAL (sizes, leading dimensions, NULL operands, enum
   values, NaN alpha/beta), MPE_EUNSUP (operand types of the other width or not
   integer, an output other than MPE_INT32, alpha/beta not int32 integers), or
   MPE_OK with *ia, *ib the int32 alpha, beta and *o the row-major views. */
MPEI_HIDDEN int mpei_tc_int_mma_check(mpe_type in, int m, int n, int k, const void *A, mpe_type atype, int lda,
                                      const void *B, mpe_type btype, int ldb, const void *C, int ldc,
                                      const void *D, mpe_type dtype, int ldd);
MPEI_HIDDEN int mpei_tc_int_gemm_check(mpe_type in, mpe_layout layout, mpe_trans ta, mpe_trans tb, int m, int n,
                                       int k, float alpha, const void *A, mpe_type atype, int lda, const void *B,
                                       mpe_type btype, int ldb, float beta, const void *C, mpe_type ctype, int ldc,
                                       int32_t *ia, int32_t *ib, mpei_tc_call *o);
/* The integer epilogue of mpe_gemm, one definition: C = alpha*acc + beta*C in
   int32 arithmetic (wrap-around; sat: the exact value clamped), acc row-major
   M × N, element (i, j) of C at C[i*crs + j*ccs]; C not read when beta = 0. */
MPEI_HIDDEN void mpei_tc_int_epilogue_strided(const int32_t *acc, int M, int N, int32_t alpha, int32_t beta,
                                              int use_ab, int sat, int32_t *C, long crs, long ccs);

#endif
