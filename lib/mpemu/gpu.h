/* mpemu — the GPU path, mpe_gpu_*: the CPU calls of format.h and tc.h run on an
   NVIDIA GPU (CUDA kernels, cuBLASLt, cuBLAS). See mpe_gpu(3).

   Every pointer given to an mpe_gpu_* function is a HOST pointer: the library
   copies the inputs to the device, runs there, and copies the results back
   before returning (calls are synchronous). Output arrays are written only on
   success.

   Return codes, checked in this order:
     MPE_EINVAL   bad arguments (same rules as the CPU call), nothing written;
     MPE_EUNSUP   the library was built without CUDA (every mpe_gpu_* that
                  returns int answers this, whatever its arguments);
     MPE_EDEVICE  built with CUDA but no usable device (no driver, no GPU, or a
                  CUDA runtime error);
     MPE_EUNSUP   this device or path cannot run this request (no instruction
                  for the input type, no code built for its architecture, a
                  model that is not this GPU's);
     MPE_ENOMEM   device memory ran out. */
#ifndef MPEMU_GPU_H
#define MPEMU_GPU_H
#include "mpemu/core.h"
#include "mpemu/format.h"
#include "mpemu/tc.h"
#ifdef __cplusplus
extern "C" {
#endif

/* How mpe_gpu_gemm computes the product. */
typedef enum {
  MPE_GPU_PATH_MMA,      /* mpemu's kernel: mma.sync in ascending k, epilogue on the host;
                            equals mpe_gemm with the device's model by construction */
  MPE_GPU_PATH_CUBLASLT, /* cuBLASLt pinned: compute 32F, alpha=1, beta=0, split-K 1,
                            reduction NONE, a tensor-core algorithm with a 32F accumulator
                            chosen once per shape, fixed workspace, one stream;
                            alpha/beta applied on the host as mpe_gemm does */
  MPE_GPU_PATH_GEMMEX    /* plain cublasGemmEx with CUBLAS_GEMM_DEFAULT: the library's own
                            choices (alpha, beta and C go to cuBLAS) */
} mpe_gpu_path;
#define MPE_GPU_NPATHS 3

/* "mma", "cublaslt", "gemmex"; NULL for a value out of range. Works in every build. */
MPE_API const char *mpe_gpu_path_name(mpe_gpu_path path);
/* The CPU tensor-core model name (see mpe_tc_model_get) for a compute capability:
   7.0 "v100", 7.5 "t4", 8.0/8.6/8.7 "a100", 8.9 "ada", 9.0 "h100", 10.x/12.x "b200";
   NULL for an architecture without a model. Works in every build. */
MPE_API const char *mpe_gpu_arch_model(int major, int minor);

typedef struct {
  char name[256];        /* the device's name */
  int major, minor;      /* compute capability */
  int sm_count;          /* multiprocessors (cuBLAS results may depend on it) */
  size_t memory;         /* global memory in bytes */
  const char *model;     /* mpe_gpu_arch_model(major, minor), or NULL */
  int mma_kernel;        /* 1 if this library holds MMA-path code for this device */
  int runtime_version;   /* CUDA runtime, e.g. 13000 */
  int driver_version;    /* CUDA version the driver supports */
  int cublas_version;    /* cublasLtGetVersion() */
} mpe_gpu_info;

/* Number of CUDA devices. MPE_EDEVICE (and *count untouched) when there are none. */
MPE_API int mpe_gpu_device_count(int *count);
/* Facts about device `device` (0 .. count-1). */
MPE_API int mpe_gpu_info_get(int device, mpe_gpu_info *info);
/* The device the calling thread's later mpe_gpu_* calls use (default 0). */
MPE_API int mpe_gpu_device_set(int device);
/* The CPU model of the current device for input type `in`: what mpe_gpu_mma and
   the MMA path compute. MPE_EUNSUP if the architecture has no model or no
   instruction for that input type. */
MPE_API int mpe_gpu_model(const mpe_tc_model **model, mpe_type in);

/* mpe_round_f32 on the device: same arguments, same results bit for bit (the
   stochastic modes use the same Philox4x32-10 stream: element i draws word
   (offset+i)%4 of the block at counter (offset+i)/4 under key seed), and the same
   sticky flags raised in the calling thread. y may equal x. */
MPE_API int mpe_gpu_round_f32(float *y, const float *x, size_t n, const mpe_format *f,
                              const mpe_round_opts *o);

/* mpe_mma on the device's tensor cores (mma.sync, k ascending, C in the first
   instruction). model: NULL for the current device's model of the input type,
   or a model equal to mpe_gpu_model's for that type; the reference model
   "fma-chain" runs as a chain of binary32 fma on the CUDA cores. With
   atype/btype MPE_FP32 the inputs are converted on the host first, with the
   model's input rule, exactly as mpe_mma converts them. Integer models and types
   as for mpe_gpu_gemm's MMA path. */
MPE_API int mpe_gpu_mma(const mpe_tc_model *model, int m, int n, int k,
                        const void *A, mpe_type atype, int lda,
                        const void *B, mpe_type btype, int ldb,
                        const void *C, int ldc, void *D, mpe_type dtype, int ldd);

/* mpe_gemm on the device through `path`. The arguments after `path` are those of
   mpe_gemm, checked by mpe_gemm's own rules. model as for mpe_gpu_mma (the cuBLAS
   paths use it only for the input type and its conversion rule).
   Integer models and types (mpe_tc_int(3)) run on the MMA path (mma.sync
   m16n8k32 .s8/.u8 or m16n8k64 .s4/.u4 on sm_80+, m8n8k16/m8n8k32 on T4,
   .satfinite for a saturating model) and, for INT8 A and B with a wrapping
   model, on the cuBLASLt path (CUBLAS_COMPUTE_32I); alpha/beta by the CPU's
   int32 epilogue. MPE_EUNSUP for the rest (the "exact" integer model,
   cublasGemmEx); see mpe_gpu(3). */
MPE_API int mpe_gpu_gemm(mpe_gpu_path path, const mpe_tc_model *model,
                         mpe_layout layout, mpe_trans ta, mpe_trans tb,
                         int m, int n, int k, float alpha,
                         const void *A, mpe_type atype, int lda,
                         const void *B, mpe_type btype, int ldb,
                         float beta, void *C, mpe_type ctype, int ldc);

#ifdef __cplusplus
}
#endif
#endif
