/* cuBLAS and cuBLASLt, loaded on first use. Linking them costs every program
   that links libmpemu about 210 MB of resident memory (their relocations), GPU
   or not; so libmpemu links only the CUDA runtime and dlopen()s the two BLAS
   libraries the first time a GPU call needs them. Include after the cuBLAS
   headers: the calls in gpu_host.c then go through the pointers below, which
   are valid once mpei_cublas_load() has returned MPE_OK. */
#ifndef MPEI_CUBLAS_LAZY_H
#define MPEI_CUBLAS_LAZY_H
#include <cublas_v2.h>
#include <cublasLt.h>
#include "mpemu/core.h"

#define MPEI_CUBLAS_FUNCS(X)                                                     \
  X(cublasCreate_v2) X(cublasDestroy_v2) X(cublasSetStream_v2) X(cublasGemmEx)   \
  X(cublasLtCreate) X(cublasLtDestroy) X(cublasLtGetVersion) X(cublasLtMatmul)   \
  X(cublasLtMatmulAlgoCapGetAttribute) X(cublasLtMatmulAlgoCheck)                \
  X(cublasLtMatmulAlgoConfigSetAttribute) X(cublasLtMatmulAlgoGetHeuristic)      \
  X(cublasLtMatmulDescCreate) X(cublasLtMatmulDescDestroy)                       \
  X(cublasLtMatmulDescSetAttribute) X(cublasLtMatmulPreferenceCreate)            \
  X(cublasLtMatmulPreferenceDestroy) X(cublasLtMatmulPreferenceSetAttribute)     \
  X(cublasLtMatrixLayoutCreate) X(cublasLtMatrixLayoutDestroy)

typedef struct {
#define MPEI_CUBLAS_PTR(f) __typeof__(f) *f;
  MPEI_CUBLAS_FUNCS(MPEI_CUBLAS_PTR)
#undef MPEI_CUBLAS_PTR
} mpei_cublas_api;

extern mpei_cublas_api mpei_cublas __attribute__((visibility("hidden")));

/* Load both libraries and resolve every function (once; thread-safe). MPE_OK,
   or MPE_EDEVICE when a library or a symbol is missing (then *why, if not
   NULL, says which). Exported for tests/check_gpu. */
MPE_API int mpei_cublas_load(const char **why);

#ifndef MPEI_CUBLAS_LAZY_IMPL
#undef cublasCreate
#undef cublasDestroy
#undef cublasSetStream
#define cublasCreate (mpei_cublas.cublasCreate_v2)
#define cublasDestroy (mpei_cublas.cublasDestroy_v2)
#define cublasSetStream (mpei_cublas.cublasSetStream_v2)
#define cublasGemmEx (mpei_cublas.cublasGemmEx)
#define cublasLtCreate (mpei_cublas.cublasLtCreate)
#define cublasLtDestroy (mpei_cublas.cublasLtDestroy)
#define cublasLtGetVersion (mpei_cublas.cublasLtGetVersion)
#define cublasLtMatmul (mpei_cublas.cublasLtMatmul)
#define cublasLtMatmulAlgoCapGetAttribute (mpei_cublas.cublasLtMatmulAlgoCapGetAttribute)
#define cublasLtMatmulAlgoCheck (mpei_cublas.cublasLtMatmulAlgoCheck)
#define cublasLtMatmulAlgoConfigSetAttribute (mpei_cublas.cublasLtMatmulAlgoConfigSetAttribute)
#define cublasLtMatmulAlgoGetHeuristic (mpei_cublas.cublasLtMatmulAlgoGetHeuristic)
#define cublasLtMatmulDescCreate (mpei_cublas.cublasLtMatmulDescCreate)
#define cublasLtMatmulDescDestroy (mpei_cublas.cublasLtMatmulDescDestroy)
#define cublasLtMatmulDescSetAttribute (mpei_cublas.cublasLtMatmulDescSetAttribute)
#define cublasLtMatmulPreferenceCreate (mpei_cublas.cublasLtMatmulPreferenceCreate)
#define cublasLtMatmulPreferenceDestroy (mpei_cublas.cublasLtMatmulPreferenceDestroy)
#define cublasLtMatmulPreferenceSetAttribute (mpei_cublas.cublasLtMatmulPreferenceSetAttribute)
#define cublasLtMatrixLayoutCreate (mpei_cublas.cublasLtMatrixLayoutCreate)
#define cublasLtMatrixLayoutDestroy (mpei_cublas.cublasLtMatrixLayoutDestroy)
#endif
#endif
