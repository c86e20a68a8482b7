/* cuBLAS, cuBLASLt and cuSOLVER, loaded on first use. Linking them costs every
   program that links libmpemu a few hundred MB of resident memory (their
   relocations), GPU or not; so libmpemu links only the CUDA runtime and
   dlopen()s these libraries the first time a GPU call needs them. Include
   after the cuBLAS/cuSOLVER headers: the calls then go through the pointers
   below, valid once mpei_cublas_load() / mpei_cusolver_load() returned MPE_OK. */
#ifndef MPEI_CUDA_LAZY_H
#define MPEI_CUDA_LAZY_H
#include <cublas_v2.h>
#include <cublasLt.h>
#include <cusolverDn.h>
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

#define MPEI_CUSOLVER_FUNCS(X)                                                   \
  X(cusolverDnCreate) X(cusolverDnDestroy) X(cusolverDnSetStream)                \
  X(cusolverDnIRSParamsCreate) X(cusolverDnIRSParamsDestroy)                     \
  X(cusolverDnIRSParamsSetSolverPrecisions) X(cusolverDnIRSParamsSetRefinementSolver) \
  X(cusolverDnIRSParamsSetMaxIters) X(cusolverDnIRSParamsEnableFallback)         \
  X(cusolverDnIRSParamsDisableFallback) X(cusolverDnIRSInfosCreate)              \
  X(cusolverDnIRSInfosDestroy) X(cusolverDnIRSInfosGetNiters)                    \
  X(cusolverDnIRSInfosGetOuterNiters) X(cusolverDnIRSXgesv_bufferSize)           \
  X(cusolverDnIRSXgesv)

typedef struct {
#define MPEI_CUSOLVER_PTR(f) __typeof__(f) *f;
  MPEI_CUSOLVER_FUNCS(MPEI_CUSOLVER_PTR)
#undef MPEI_CUSOLVER_PTR
} mpei_cusolver_api;

extern mpei_cusolver_api mpei_cusolver __attribute__((visibility("hidden")));

/* Load both libraries and resolve every function (once; thread-safe). MPE_OK,
   or MPE_EDEVICE when a library or a symbol is missing (then *why, if not
   NULL, says which). Exported for tests/check_gpu. */
MPE_API int mpei_cublas_load(const char **why);
/* The same for cuSOLVER (libcusolver.so.<major>). */
MPE_API int mpei_cusolver_load(const char **why);

#ifndef MPEI_CUDA_LAZY_IMPL
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
#define MPEI_CUSOLVER_MAP(f) (mpei_cusolver.f)
#define cusolverDnCreate MPEI_CUSOLVER_MAP(cusolverDnCreate)
#define cusolverDnDestroy MPEI_CUSOLVER_MAP(cusolverDnDestroy)
#define cusolverDnSetStream MPEI_CUSOLVER_MAP(cusolverDnSetStream)
#define cusolverDnIRSParamsCreate MPEI_CUSOLVER_MAP(cusolverDnIRSParamsCreate)
#define cusolverDnIRSParamsDestroy MPEI_CUSOLVER_MAP(cusolverDnIRSParamsDestroy)
#define cusolverDnIRSParamsSetSolverPrecisions MPEI_CUSOLVER_MAP(cusolverDnIRSParamsSetSolverPrecisions)
#define cusolverDnIRSParamsSetRefinementSolver MPEI_CUSOLVER_MAP(cusolverDnIRSParamsSetRefinementSolver)
#define cusolverDnIRSParamsSetMaxIters MPEI_CUSOLVER_MAP(cusolverDnIRSParamsSetMaxIters)
#define cusolverDnIRSParamsEnableFallback MPEI_CUSOLVER_MAP(cusolverDnIRSParamsEnableFallback)
#define cusolverDnIRSParamsDisableFallback MPEI_CUSOLVER_MAP(cusolverDnIRSParamsDisableFallback)
#define cusolverDnIRSInfosCreate MPEI_CUSOLVER_MAP(cusolverDnIRSInfosCreate)
#define cusolverDnIRSInfosDestroy MPEI_CUSOLVER_MAP(cusolverDnIRSInfosDestroy)
#define cusolverDnIRSInfosGetNiters MPEI_CUSOLVER_MAP(cusolverDnIRSInfosGetNiters)
#define cusolverDnIRSInfosGetOuterNiters MPEI_CUSOLVER_MAP(cusolverDnIRSInfosGetOuterNiters)
#define cusolverDnIRSXgesv_bufferSize MPEI_CUSOLVER_MAP(cusolverDnIRSXgesv_bufferSize)
#define cusolverDnIRSXgesv MPEI_CUSOLVER_MAP(cusolverDnIRSXgesv)
#endif
#endif
