/* mpe_gpu_ir_solve: the solve of mpe_ir_solve through cuSOLVER's IRS API
   (cusolverDnIRSXgesv), for comparison with the emulated solvers. Built when
   configure finds CUDA; runs on the calling thread's current CUDA device.

   The options map onto cuSOLVER's: factor -> the lowest precision (main
   precision binary64), LU-IR -> CUSOLVER_IRS_REFINE_CLASSICAL, GMRES-IR ->
   CUSOLVER_IRS_REFINE_GMRES, max_iter -> the iteration cap, no_fallback ->
   cusolverDnIRSParamsDisableFallback. cuSOLVER applies its own stopping test,
   LU and GMRES; a tensor-core model, scaling and a per-iteration history are
   not available there (MPE_EUNSUP). niters keeps cuSOLVER's meaning, which
   mpe_ir_solve shares (>= 0 converged, < 0 why it gave up). */
#include "config.h"
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <cuda_runtime_api.h>
#include "ir_internal.h"
#include "cuda_lazy.h"

static int solver_code(cusolverStatus_t s)
{
  switch (s) {
  case CUSOLVER_STATUS_SUCCESS: return MPE_OK;
  case CUSOLVER_STATUS_ALLOC_FAILED: return MPE_ENOMEM;
  case CUSOLVER_STATUS_NOT_SUPPORTED: case CUSOLVER_STATUS_ARCH_MISMATCH: return MPE_EUNSUP;
  case CUSOLVER_STATUS_INVALID_VALUE: return MPE_EINVAL;
  default: return MPE_EDEVICE;
  }
}

static cusolverPrecType_t prec_of(mpe_type t)
{
  switch (t) {
  case MPE_FP16: return CUSOLVER_R_16F;
  case MPE_BF16: return CUSOLVER_R_16BF;
  case MPE_TF32: return CUSOLVER_R_TF32;
  default: return CUSOLVER_R_32F;
  }
}

int mpe_gpu_ir_solve(int n, const double *A, int lda, const double *b, double *x,
                          const mpe_ir_opts *opts, mpe_ir_result *res)
{
  mpe_ir_opts dflt;
  if (!opts) {
    mpe_ir_opts_init(&dflt);
    opts = &dflt;
  }
  int rc = mpas_ir_check(n, A, lda, b, x, opts);
  if (rc != MPE_OK)
    return rc;
  if (opts->model || opts->scale || opts->history_cap > 0)
    return MPE_EUNSUP;
  int ndev = 0;
  if (cudaGetDeviceCount(&ndev) != cudaSuccess || ndev < 1) {
    (void)cudaGetLastError();
    return MPE_EDEVICE;
  }
  if (mpei_cusolver_load(NULL) != MPE_OK)
    return MPE_EDEVICE;

  const size_t nn = (size_t)n * n;
  double *Ah = malloc(nn * sizeof *Ah), *xh = malloc((size_t)n * sizeof *xh);
  void *dA = NULL, *dB = NULL, *dX = NULL, *dW = NULL;
  int *dinfo = NULL;
  cusolverDnHandle_t h = NULL;
  cusolverDnIRSParams_t prm = NULL;
  cusolverDnIRSInfos_t inf = NULL;
  rc = MPE_ENOMEM;
  if (!Ah || !xh)
    goto out;
  for (int j = 0; j < n; j++)
    memcpy(Ah + (size_t)j * n, A + (size_t)j * lda, (size_t)n * sizeof *Ah);
  rc = MPE_EDEVICE;
  if (cudaMalloc(&dA, nn * sizeof(double)) != cudaSuccess ||
      cudaMalloc(&dB, (size_t)n * sizeof(double)) != cudaSuccess ||
      cudaMalloc(&dX, (size_t)n * sizeof(double)) != cudaSuccess ||
      cudaMalloc((void **)&dinfo, sizeof(int)) != cudaSuccess ||
      cudaMemcpy(dA, Ah, nn * sizeof(double), cudaMemcpyHostToDevice) != cudaSuccess ||
      cudaMemcpy(dB, b, (size_t)n * sizeof(double), cudaMemcpyHostToDevice) != cudaSuccess)
    goto out;
  cusolverStatus_t s = cusolverDnCreate(&h);
  if (s == CUSOLVER_STATUS_SUCCESS)
    s = cusolverDnIRSParamsCreate(&prm);
  if (s == CUSOLVER_STATUS_SUCCESS)
    s = cusolverDnIRSInfosCreate(&inf);
  if (s == CUSOLVER_STATUS_SUCCESS)
    s = cusolverDnIRSParamsSetSolverPrecisions(prm, CUSOLVER_R_64F, prec_of(opts->factor));
  if (s == CUSOLVER_STATUS_SUCCESS)
    s = cusolverDnIRSParamsSetRefinementSolver(prm, opts->solver == MPE_IR_GMRES_IR ? CUSOLVER_IRS_REFINE_GMRES
                                                                                   : CUSOLVER_IRS_REFINE_CLASSICAL);
  if (s == CUSOLVER_STATUS_SUCCESS)
    s = cusolverDnIRSParamsSetMaxIters(prm, opts->max_iter);
  if (s == CUSOLVER_STATUS_SUCCESS)
    s = opts->no_fallback ? cusolverDnIRSParamsDisableFallback(prm) : cusolverDnIRSParamsEnableFallback(prm);
  size_t lwork = 0;
  if (s == CUSOLVER_STATUS_SUCCESS)
    s = cusolverDnIRSXgesv_bufferSize(h, prm, n, 1, &lwork);
  if (s != CUSOLVER_STATUS_SUCCESS) {
    rc = solver_code(s);
    goto out;
  }
  if (lwork && cudaMalloc(&dW, lwork) != cudaSuccess)
    goto out;
  cusolver_int_t niters = 0, outer = 0, info = 0;
  s = cusolverDnIRSXgesv(h, prm, inf, n, 1, dA, n, dB, n, dX, n, dW, lwork, &niters, dinfo);
  if (s != CUSOLVER_STATUS_SUCCESS) {
    rc = solver_code(s);
    goto out;
  }
  if (cudaMemcpy(&info, dinfo, sizeof info, cudaMemcpyDeviceToHost) != cudaSuccess ||
      cudaMemcpy(xh, dX, (size_t)n * sizeof(double), cudaMemcpyDeviceToHost) != cudaSuccess)
    goto out;
  if (info > 0) {   /* U(info,info) is exactly zero: singular in binary64 */
    rc = MPE_ERANGE;
    goto out;
  }
  if (info < 0) {
    rc = MPE_EINVAL;
    goto out;
  }
  (void)cusolverDnIRSInfosGetOuterNiters(inf, &outer);

  mpe_ir_result R;
  memset(&R, 0, sizeof R);
  R.niters = (int)niters;
  R.iterations = (int)outer;
  R.inner_iterations = opts->solver == MPE_IR_GMRES_IR && niters > 0 ? (int)niters : 0;
  R.status = niters >= 0 ? MPE_IR_CONVERGED : opts->no_fallback ? MPE_IR_DIVERGED : MPE_IR_FALLBACK;
  rc = mpas_ir_errors(n, A, lda, b, xh, opts->xtrue, &R.backward_error, &R.forward_error);
  if (rc != MPE_OK)
    goto out;
  memcpy(x, xh, (size_t)n * sizeof *x);
  if (res)
    *res = R;
  rc = R.status == MPE_IR_DIVERGED ? MPE_ECONVERGE : MPE_OK;
out:
  if (inf)
    cusolverDnIRSInfosDestroy(inf);
  if (prm)
    cusolverDnIRSParamsDestroy(prm);
  if (h)
    cusolverDnDestroy(h);
  cudaFree(dA);
  cudaFree(dB);
  cudaFree(dX);
  cudaFree(dW);
  cudaFree(dinfo);
  (void)cudaGetLastError();
  free(Ah);
  free(xh);
  return rc;
}
