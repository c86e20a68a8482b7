/* mpemu — tensor-core models: mpe_mma (instruction semantics) and mpe_gemm
   (BLAS semantics). See mpe_mma(3), mpe_gemm(3), mpe_tc_model_get(3). */
#ifndef MPEMU_TC_H
#define MPEMU_TC_H
#include "mpemu/core.h"
#ifdef __cplusplus
extern "C" {
#endif

typedef struct mpe_tc_model mpe_tc_model;

/* name: "v100", "t4", "a100", "ada", "h100", "b200" (aliases: "a2","a30","l40s","h200",
   "rtx-pro-6000"), and the references "exact" (exact dot product, one RNE rounding) and
   "fma-chain" (sequential binary32 fma, ascending k). in: MPE_FP16, MPE_BF16, MPE_TF32,
   MPE_E4M3, MPE_E5M2. NULL when that GPU has no such instruction. */
MPE_API const mpe_tc_model *mpe_tc_model_get(const char *name, mpe_type in);

/* Instruction semantics, row-major: D = A*B + C with C entering the first hardware block and
   blocks chained in ascending k. A is m×k, B k×n, C and D m×n. atype/btype: MPE_FP32 (binary32
   values, converted with the model's input rule) or the packed input type (uint16_t for
   FP16/BF16, uint8_t for FP8). dtype: MPE_FP32 (C, D are float) or MPE_FP16 (uint16_t). */
MPE_API int mpe_mma(const mpe_tc_model *model, int m, int n, int k,
                    const void *A, mpe_type atype, int lda,
                    const void *B, mpe_type btype, int ldb,
                    const void *C, int ldc, void *D, mpe_type dtype, int ldd);

/* BLAS semantics (what cublasGemmEx/cublasLtMatmul compute): accumulator starts at 0,
   C = alpha*acc + beta*C. Argument order follows cblas_sgemm with types added. */
typedef enum { MPE_ROW_MAJOR, MPE_COL_MAJOR } mpe_layout;
typedef enum { MPE_NO_TRANS, MPE_TRANS } mpe_trans;
MPE_API int mpe_gemm(const mpe_tc_model *model, mpe_layout layout, mpe_trans ta, mpe_trans tb,
                     int m, int n, int k, float alpha,
                     const void *A, mpe_type atype, int lda,
                     const void *B, mpe_type btype, int ldb,
                     float beta, void *C, mpe_type ctype, int ldc);

#ifdef __cplusplus
}
#endif
#endif
