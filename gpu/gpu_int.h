/* Internal interface between the host code of the GPU path (gpu_host.c, plain C)
   and its CUDA kernels (kernels.cu, nvcc). Included by both: C only, no
   library headers. Launchers return a cudaError_t value (0 on success). */
#ifndef MPEI_GPU_INT_H
#define MPEI_GPU_INT_H
#include <stddef.h>
#include <stdint.h>
#include "round_dev.h"

#ifdef __cplusplus
extern "C" {
#endif
#define MPEI_GPU_API __attribute__((visibility("hidden")))

/* The mma.sync variants the MMA path issues. The kernel computes, for every
   16x8 tile of D, the chain over k0 = 0, KI, 2 KI, ... (ascending) of
   D = mma(A[:, k0:k0+KI], B[k0:k0+KI, :], D) starting from D = C. */
enum mpei_gpu_mma_kind {
  MPEI_MMA_F16_K8_F32,    /* m16n8k8   f32.f16.f16.f32      sm_75+ */
  MPEI_MMA_F16_K8_F16,    /* m16n8k8   f16.f16.f16.f16      sm_75+ */
  MPEI_MMA_F16_K16_F32,   /* m16n8k16  f32.f16.f16.f32      sm_80+ */
  MPEI_MMA_F16_K16_F16,   /* m16n8k16  f16.f16.f16.f16      sm_80+ */
  MPEI_MMA_BF16_K16_F32,  /* m16n8k16  f32.bf16.bf16.f32    sm_80+ */
  MPEI_MMA_TF32_K8_F32,   /* m16n8k8   f32.tf32.tf32.f32    sm_80+ */
  MPEI_MMA_E4M3_K32_F32,  /* m16n8k32  f32.e4m3.e4m3.f32    sm_89+ */
  MPEI_MMA_E5M2_K32_F32,  /* m16n8k32  f32.e5m2.e5m2.f32    sm_89+ */
  MPEI_MMA_E4M3_K32_F16,  /* m16n8k32  f16.e4m3.e4m3.f16    sm_89+ */
  MPEI_MMA_E5M2_K32_F16,  /* m16n8k32  f16.e5m2.e5m2.f16    sm_89+ */
  MPEI_MMA_NKINDS
};

/* Layout of the operands on the device (the host prepares them):
   A  row-major Mp x Kp, packed input elements (2 bytes fp16/bf16, 4 tf32 as
      binary32 bits, 1 fp8), zero padded;
   BT row-major Np x Kp (B transposed), same element type, zero padded;
   C, D row-major Mp x Np, float (f32 kinds) or binary16 bits (f16 kinds).
   Mp is a multiple of 16, Np of 8, Kp of the instruction's K. C may equal D. */
MPEI_GPU_API int mpei_gpu_launch_mma(int kind, const void *A, const void *BT, const void *C,
                                     void *D, int Mp, int Np, int Kp, void *stream);
/* The instruction K of a kind, and the element size in bytes of its inputs. */
MPEI_GPU_API int mpei_gpu_mma_k(int kind);
MPEI_GPU_API int mpei_gpu_mma_esize(int kind);
/* Smallest compute capability (major*10+minor) a kind needs. */
MPEI_GPU_API int mpei_gpu_mma_min_sm(int kind);

/* Integer tensor cores: for every tile of D (int32), the chain over
   k0 = 0, KI, 2 KI, ... (ascending) of D = mma(A[:, k0:k0+KI], B[k0:k0+KI, :], D)
   from D = C, by shape:
     0  mma.sync.m16n8k32 .s8/.u8, KI = 32, 16x8 tiles   sm_80+
     1  mma.sync.m16n8k64 .s4/.u4, KI = 64, 16x8 tiles   sm_80+
     2  mma.sync.m8n8k16  .s8/.u8, KI = 16, 8x8 tiles    sm_75+
     3  mma.sync.m8n8k32  .s4/.u4, KI = 32, 8x8 tiles    sm_75+
   8-bit inputs one byte per element; 4-bit inputs (odd shapes) two elements
   per byte, the lower k in the low nibble. .s32 accumulators, .satfinite when
   sat; as/bs: A/B signed (.s8/.s4) or not (.u8/.u4). Layout as for
   mpei_gpu_launch_mma (Mp a multiple of 16), C and D int32 (C may equal D). */
MPEI_GPU_API int mpei_gpu_launch_imma(int shape, int as, int bs, int sat, const void *A, const void *BT,
                                      const int32_t *C, int32_t *D, int Mp, int Np, int Kp, void *stream);

/* The "fma-chain" reference on CUDA cores: D[i][j] = fma chain over k ascending
   of A[i][k]*BT[j][k] starting from C[i][j]; all float, row-major, no padding. */
MPEI_GPU_API int mpei_gpu_launch_fma(const float *A, const float *BT, const float *C, float *D,
                                     int M, int N, int K, void *stream);

/* y[i] = round(x[i]) for i < n with the plan; element index pl->offset + i;
   the flags of all elements are OR-ed into *dflags (device memory). */
MPEI_GPU_API int mpei_gpu_launch_round(float *y, const float *x, size_t n, const mpei_gpu_plan *pl,
                                       unsigned *dflags, void *stream);

#ifdef __cplusplus
}
#endif
#endif
