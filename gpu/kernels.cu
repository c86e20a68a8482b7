/* CUDA kernels of the GPU path: array rounding (the integer method of
   round_dev.h), the MMA path (mma.sync issued in ascending k with nothing
   else in between, so each output is the hardware's own block chain, which
   the CPU model of that GPU describes) and the fma-chain reference.

   Built with -fmad=false -ftz=false -prec-div=true: no contraction or flushing
   may change a bit. Fragment layouts are those of the PTX ISA manual, section
   "Matrix fragments for mma.m16n8k*": groupID = lane / 4, tig = lane % 4. */
#include <cuda_runtime.h>
#include <stdint.h>
#include "gpu_int.h"

/* ------------------------------------------------------------------ rounding */

__global__ void round32_kernel(float *y, const float *x, size_t n, mpei_gpu_plan pl, unsigned *dflags)
{
  unsigned fl = 0;
  const int random = pl.mode == MPEI_RC_SR || pl.mode == MPEI_RC_SR_EQ;
  size_t stride = (size_t)gridDim.x * blockDim.x;
  for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride) {
    uint32_t u = __float_as_uint(x[i]);
    uint32_t rnd = random ? mpei_gpu_sr_word(pl.seed, pl.offset + i) : 0;
    y[i] = __uint_as_float(mpei_gpu_round_bits(u, &pl, rnd, &fl));
  }
  for (int o = 16; o > 0; o >>= 1)
    fl |= __shfl_xor_sync(0xffffffffu, fl, o);
  if ((threadIdx.x & 31) == 0 && fl)
    atomicOr(dflags, fl);
}

extern "C" int mpei_gpu_launch_round(float *y, const float *x, size_t n, const mpei_gpu_plan *pl,
                                     unsigned *dflags, void *stream)
{
  if (n == 0)
    return 0;
  const int threads = 256;
  size_t blocks = (n + threads - 1) / threads;
  if (blocks > 65535)
    blocks = 65535;
  round32_kernel<<<(unsigned)blocks, threads, 0, (cudaStream_t)stream>>>(y, x, n, *pl, dflags);
  return (int)cudaGetLastError();
}

/* ------------------------------------------------------------------ mma.sync */

static __device__ __forceinline__ uint32_t ld32(const uint8_t *p)
{
  return *(const uint32_t *)(const void *)p;
}

/* One warp per 16x8 tile of D. KIND is a mpei_gpu_mma_kind. */
template <int KIND>
__global__ void mma_kernel(const uint8_t *A, const uint8_t *BT, const void *C, void *D,
                           int tilesM, int tilesN, int Np, int Kp)
{
  const int warp = (int)((blockIdx.x * (size_t)blockDim.x + threadIdx.x) >> 5);
  if (warp >= tilesM * tilesN)
    return;                                   /* the whole warp leaves together */
  const int lane = threadIdx.x & 31, g = lane >> 2, t = lane & 3;
  const int r0 = (warp / tilesN) * 16, n0 = (warp % tilesN) * 8;
  const size_t rowg = (size_t)(r0 + g), rowg8 = rowg + 8, coln = (size_t)(n0 + g);

  if (KIND == MPEI_MMA_F16_K8_F16 || KIND == MPEI_MMA_F16_K16_F16 || KIND == MPEI_MMA_E4M3_K32_F16 ||
      KIND == MPEI_MMA_E5M2_K32_F16) {
    /* binary16 accumulators: two registers of two halves */
    const uint16_t *Ch = (const uint16_t *)C;
    uint16_t *Dh = (uint16_t *)D;
    uint32_t c0 = Ch[rowg * Np + n0 + 2 * t] | ((uint32_t)Ch[rowg * Np + n0 + 2 * t + 1] << 16);
    uint32_t c1 = Ch[rowg8 * Np + n0 + 2 * t] | ((uint32_t)Ch[rowg8 * Np + n0 + 2 * t + 1] << 16);
    const int fp8 = KIND == MPEI_MMA_E4M3_K32_F16 || KIND == MPEI_MMA_E5M2_K32_F16, es = fp8 ? 1 : 2;
    for (int k0 = 0; k0 < Kp; k0 += (KIND == MPEI_MMA_F16_K8_F16 ? 8 : fp8 ? 32 : 16)) {
      const uint8_t *ag = A + (rowg * Kp + k0) * es, *ag8 = A + (rowg8 * Kp + k0) * es;
      const uint8_t *bg = BT + (coln * Kp + k0) * es;
      if (fp8) {
#if __CUDA_ARCH__ >= 890
        /* the registers of the binary32 FP8 form below, binary16 C and D */
        const uint32_t f[6] = { ld32(ag + 4 * t), ld32(ag8 + 4 * t), ld32(ag + 16 + 4 * t),
                                ld32(ag8 + 16 + 4 * t), ld32(bg + 4 * t), ld32(bg + 16 + 4 * t) };
#define MPEI_MMA_F8_F16(T)                                                                           \
  asm volatile("mma.sync.aligned.m16n8k32.row.col.f16." T "." T ".f16 {%0,%1}, {%2,%3,%4,%5}, {%6,%7}, {%8,%9};\n" \
               : "=r"(c0), "=r"(c1)                                                                  \
               : "r"(f[0]), "r"(f[1]), "r"(f[2]), "r"(f[3]), "r"(f[4]), "r"(f[5]), "r"(c0), "r"(c1))
        if (KIND == MPEI_MMA_E4M3_K32_F16)
          MPEI_MMA_F8_F16("e4m3");
        else
          MPEI_MMA_F8_F16("e5m2");
#undef MPEI_MMA_F8_F16
#else
        __trap();
#endif
      } else if (KIND == MPEI_MMA_F16_K8_F16) {
#if __CUDA_ARCH__ >= 750
        uint32_t a0 = ld32(ag + 4 * t), a1 = ld32(ag8 + 4 * t), b0 = ld32(bg + 4 * t);
        asm volatile("mma.sync.aligned.m16n8k8.row.col.f16.f16.f16.f16 {%0,%1}, {%2,%3}, {%4}, {%5,%6};\n"
                     : "=r"(c0), "=r"(c1) : "r"(a0), "r"(a1), "r"(b0), "r"(c0), "r"(c1));
#else
        __trap();
#endif
      } else {
#if __CUDA_ARCH__ >= 800
        uint32_t a0 = ld32(ag + 4 * t), a1 = ld32(ag8 + 4 * t);
        uint32_t a2 = ld32(ag + 16 + 4 * t), a3 = ld32(ag8 + 16 + 4 * t);
        uint32_t b0 = ld32(bg + 4 * t), b1 = ld32(bg + 16 + 4 * t);
        asm volatile("mma.sync.aligned.m16n8k16.row.col.f16.f16.f16.f16 {%0,%1}, {%2,%3,%4,%5}, {%6,%7}, {%8,%9};\n"
                     : "=r"(c0), "=r"(c1)
                     : "r"(a0), "r"(a1), "r"(a2), "r"(a3), "r"(b0), "r"(b1), "r"(c0), "r"(c1));
#else
        __trap();
#endif
      }
    }
    Dh[rowg * Np + n0 + 2 * t] = (uint16_t)c0;
    Dh[rowg * Np + n0 + 2 * t + 1] = (uint16_t)(c0 >> 16);
    Dh[rowg8 * Np + n0 + 2 * t] = (uint16_t)c1;
    Dh[rowg8 * Np + n0 + 2 * t + 1] = (uint16_t)(c1 >> 16);
    return;
  }

  const float *Cf = (const float *)C;
  float *Df = (float *)D;
  float c0 = Cf[rowg * Np + n0 + 2 * t], c1 = Cf[rowg * Np + n0 + 2 * t + 1];
  float c2 = Cf[rowg8 * Np + n0 + 2 * t], c3 = Cf[rowg8 * Np + n0 + 2 * t + 1];
  const int KI = KIND == MPEI_MMA_F16_K8_F32 || KIND == MPEI_MMA_TF32_K8_F32 ? 8
               : KIND == MPEI_MMA_E4M3_K32_F32 || KIND == MPEI_MMA_E5M2_K32_F32 ? 32 : 16;
  const int es = KIND == MPEI_MMA_TF32_K8_F32 ? 4
               : KIND == MPEI_MMA_E4M3_K32_F32 || KIND == MPEI_MMA_E5M2_K32_F32 ? 1 : 2;
  for (int k0 = 0; k0 < Kp; k0 += KI) {
    const uint8_t *ag = A + (rowg * Kp + k0) * es, *ag8 = A + (rowg8 * Kp + k0) * es;
    const uint8_t *bg = BT + (coln * Kp + k0) * es;
    if (KIND == MPEI_MMA_F16_K8_F32) {
#if __CUDA_ARCH__ >= 750
      uint32_t a0 = ld32(ag + 4 * t), a1 = ld32(ag8 + 4 * t), b0 = ld32(bg + 4 * t);
      asm volatile("mma.sync.aligned.m16n8k8.row.col.f32.f16.f16.f32 {%0,%1,%2,%3}, {%4,%5}, {%6}, {%7,%8,%9,%10};\n"
                   : "=f"(c0), "=f"(c1), "=f"(c2), "=f"(c3)
                   : "r"(a0), "r"(a1), "r"(b0), "f"(c0), "f"(c1), "f"(c2), "f"(c3));
#else
      __trap();
#endif
    } else {   /* tf32 k8, fp8 k32, fp16 / bf16 k16: four A registers, two B */
#if __CUDA_ARCH__ >= 800
      uint32_t a0 = ld32(ag + 4 * t), a1 = ld32(ag8 + 4 * t);
      uint32_t a2 = ld32(ag + 16 + 4 * t), a3 = ld32(ag8 + 16 + 4 * t);
      uint32_t b0 = ld32(bg + 4 * t), b1 = ld32(bg + 16 + 4 * t);
/* mma.sync of this shape and these types (PTX) on a0..a3, b0, b1 and c0..c3 */
#define MMA_A4B2(shape_types)                                                                   \
  asm volatile("mma.sync.aligned." shape_types " {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%10,%11,%12,%13};\n" \
               : "=f"(c0), "=f"(c1), "=f"(c2), "=f"(c3)                                          \
               : "r"(a0), "r"(a1), "r"(a2), "r"(a3), "r"(b0), "r"(b1), "f"(c0), "f"(c1), "f"(c2), "f"(c3))
      if (KIND == MPEI_MMA_TF32_K8_F32)
        MMA_A4B2("m16n8k8.row.col.f32.tf32.tf32.f32");
      else if (KIND == MPEI_MMA_E4M3_K32_F32 || KIND == MPEI_MMA_E5M2_K32_F32) {
#if __CUDA_ARCH__ >= 890
        if (KIND == MPEI_MMA_E4M3_K32_F32)
          MMA_A4B2("m16n8k32.row.col.f32.e4m3.e4m3.f32");
        else
          MMA_A4B2("m16n8k32.row.col.f32.e5m2.e5m2.f32");
#else
        __trap();
#endif
      } else if (KIND == MPEI_MMA_F16_K16_F32)
        MMA_A4B2("m16n8k16.row.col.f32.f16.f16.f32");
      else
        MMA_A4B2("m16n8k16.row.col.f32.bf16.bf16.f32");
#undef MMA_A4B2
#else
      __trap();
#endif
    }
  }
  Df[rowg * Np + n0 + 2 * t] = c0;
  Df[rowg * Np + n0 + 2 * t + 1] = c1;
  Df[rowg8 * Np + n0 + 2 * t] = c2;
  Df[rowg8 * Np + n0 + 2 * t + 1] = c3;
}

/* The byte offsets above: for 2-byte elements a pair (2t, 2t+1) starts at
   byte 4t and the second half of a k16 step at byte 16; for tf32 element t is
   at byte 4t and t+4 at byte 16; for fp8 the quad 4t..4t+3 is at byte 4t and
   4t+16.. at byte 16 + 4t. One formula serves all three. */

extern "C" int mpei_gpu_mma_k(int kind)
{
  switch (kind) {
  case MPEI_MMA_F16_K8_F32: case MPEI_MMA_F16_K8_F16: case MPEI_MMA_TF32_K8_F32: return 8;
  case MPEI_MMA_E4M3_K32_F32: case MPEI_MMA_E5M2_K32_F32:
  case MPEI_MMA_E4M3_K32_F16: case MPEI_MMA_E5M2_K32_F16: return 32;
  default: return 16;
  }
}

extern "C" int mpei_gpu_mma_esize(int kind)
{
  switch (kind) {
  case MPEI_MMA_TF32_K8_F32: return 4;
  case MPEI_MMA_E4M3_K32_F32: case MPEI_MMA_E5M2_K32_F32:
  case MPEI_MMA_E4M3_K32_F16: case MPEI_MMA_E5M2_K32_F16: return 1;
  default: return 2;
  }
}

extern "C" int mpei_gpu_mma_min_sm(int kind)
{
  switch (kind) {
  case MPEI_MMA_F16_K8_F32: case MPEI_MMA_F16_K8_F16: return 75;
  case MPEI_MMA_E4M3_K32_F32: case MPEI_MMA_E5M2_K32_F32:
  case MPEI_MMA_E4M3_K32_F16: case MPEI_MMA_E5M2_K32_F16: return 89;
  default: return 80;
  }
}

/* The MMA kernels run one warp per output tile, TILE_THREADS threads a block:
   the blocks for tilesM × tilesN tiles (0 when there are none). */
enum { TILE_THREADS = 128 };
static unsigned tile_blocks(int tilesM, int tilesN)
{
  const long warps = (long)tilesM * tilesN;
  return (unsigned)((warps * 32 + TILE_THREADS - 1) / TILE_THREADS);
}

extern "C" int mpei_gpu_launch_mma(int kind, const void *A, const void *BT, const void *C, void *D,
                                   int Mp, int Np, int Kp, void *stream)
{
  const int tilesM = Mp / 16, tilesN = Np / 8, threads = TILE_THREADS;
  const unsigned blocks = tile_blocks(tilesM, tilesN);
  if (blocks == 0)
    return 0;
  cudaStream_t s = (cudaStream_t)stream;
  const uint8_t *a = (const uint8_t *)A, *b = (const uint8_t *)BT;
  switch (kind) {
#define LAUNCH(K) case K: mma_kernel<K><<<blocks, threads, 0, s>>>(a, b, C, D, tilesM, tilesN, Np, Kp); break;
  LAUNCH(MPEI_MMA_F16_K8_F32)
  LAUNCH(MPEI_MMA_F16_K8_F16)
  LAUNCH(MPEI_MMA_F16_K16_F32)
  LAUNCH(MPEI_MMA_F16_K16_F16)
  LAUNCH(MPEI_MMA_BF16_K16_F32)
  LAUNCH(MPEI_MMA_TF32_K8_F32)
  LAUNCH(MPEI_MMA_E4M3_K32_F32)
  LAUNCH(MPEI_MMA_E5M2_K32_F32)
  LAUNCH(MPEI_MMA_E4M3_K32_F16)
  LAUNCH(MPEI_MMA_E5M2_K32_F16)
#undef LAUNCH
  default: return (int)cudaErrorInvalidValue;
  }
  return (int)cudaGetLastError();
}

/* ------------------------------------------------------------------ integer mma.sync */

/* One integer instruction: the type suffixes and .satfinite are part of the
   opcode, so each combination is its own asm string. */
#define MPEI_IMMA(SHAPE, SAT, AT, BT)                                                                  \
  asm volatile("mma.sync.aligned." SHAPE ".row.col" SAT ".s32." AT "." BT ".s32 "                      \
               "{%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%10,%11,%12,%13};\n"                          \
               : "=r"(c0), "=r"(c1), "=r"(c2), "=r"(c3)                                               \
               : "r"(a0), "r"(a1), "r"(a2), "r"(a3), "r"(b0), "r"(b1), "r"(c0), "r"(c1), "r"(c2), "r"(c3))
/* The instruction OP (MPEI_IMMA, or MPEI_IMMA_SMALL below) of the kernel's
   signs AS, BS, its SAT and its width W4 (4-bit elements, else 8-bit), with
   SHAPE8 and SHAPE4 the shapes of the 8-bit and the 4-bit forms. */
#define MPEI_IMMA_SIGNS(OP, SHAPE, ST, W)                                                              \
  do {                                                                                                 \
    if (AS && BS) OP(SHAPE, ST, "s" W, "s" W);                                                         \
    else if (AS) OP(SHAPE, ST, "s" W, "u" W);                                                          \
    else if (BS) OP(SHAPE, ST, "u" W, "s" W);                                                          \
    else OP(SHAPE, ST, "u" W, "u" W);                                                                  \
  } while (0)
#define MPEI_IMMA_PICK(OP, SHAPE8, SHAPE4)                                                             \
  do {                                                                                                 \
    if (W4) {                                                                                          \
      if (SAT) MPEI_IMMA_SIGNS(OP, SHAPE4, ".satfinite", "4");                                         \
      else MPEI_IMMA_SIGNS(OP, SHAPE4, "", "4");                                                       \
    } else {                                                                                           \
      if (SAT) MPEI_IMMA_SIGNS(OP, SHAPE8, ".satfinite", "8");                                         \
      else MPEI_IMMA_SIGNS(OP, SHAPE8, "", "8");                                                       \
    }                                                                                                  \
  } while (0)

/* One warp per 16x8 tile of D (SHAPE 0, 1) or 8x8 tile (SHAPE 2, 3). The
   fragments of m16n8k32 .s8/.u8 are those of the fp8 m16n8k32 above (four
   elements per register: row g or g+8, columns 4t..4t+3 and 16+4t..); those
   of m16n8k64 .s4/.u4 hold eight elements per register at columns 8t..8t+7
   and 32+8t.., which with two elements per byte are again the bytes 4t..4t+3
   and 16+4t.. of the row; m8n8k16 .s8/.u8 and m8n8k32 .s4/.u4 (Turing) hold
   one register of A (row g, bytes 4t..4t+3) and one of B (column g, the same
   bytes of B^T's row) and two accumulators (row g, columns 2t, 2t+1) (PTX
   ISA, "Matrix Fragments for mma.m8n8k16", "m8n8k32", "m16n8k32",
   "m16n8k64"). */
template <int SHAPE, int AS, int BS, int SAT>
__global__ void imma_kernel(const uint8_t *A, const uint8_t *BT, const int32_t *C, int32_t *D, int tilesM,
                            int tilesN, int Np, int Kp)
{
  const int W4 = SHAPE & 1, SMALL = SHAPE >= 2;
  const int warp = (int)((blockIdx.x * (size_t)blockDim.x + threadIdx.x) >> 5);
  if (warp >= tilesM * tilesN)
    return;
  const int lane = threadIdx.x & 31, g = lane >> 2, t = lane & 3;
  const int r0 = (warp / tilesN) * (SMALL ? 8 : 16), n0 = (warp % tilesN) * 8;
  const size_t rowg = (size_t)(r0 + g), rowg8 = rowg + 8, coln = (size_t)(n0 + g);
  uint32_t c0 = (uint32_t)C[rowg * Np + n0 + 2 * t], c1 = (uint32_t)C[rowg * Np + n0 + 2 * t + 1];
  uint32_t c2 = 0, c3 = 0;
  if (!SMALL) {
    c2 = (uint32_t)C[rowg8 * Np + n0 + 2 * t];
    c3 = (uint32_t)C[rowg8 * Np + n0 + 2 * t + 1];
  }
  const int KI = SHAPE == 0 ? 32 : SHAPE == 1 ? 64 : SHAPE == 2 ? 16 : 32;
  for (int k0 = 0; k0 < Kp; k0 += KI) {
    const uint8_t *ag = A + ((rowg * Kp + k0) >> W4), *bg = BT + ((coln * Kp + k0) >> W4);
    if (SMALL) {
#if __CUDA_ARCH__ >= 750
      uint32_t a0 = ld32(ag + 4 * t), b0 = ld32(bg + 4 * t);
#define MPEI_IMMA_SMALL(SH, ST, AT, BT_)                                                               \
      asm volatile("mma.sync.aligned." SH ".row.col" ST ".s32." AT "." BT_ ".s32 {%0,%1}, {%2}, {%3}, {%4,%5};\n" \
                   : "=r"(c0), "=r"(c1) : "r"(a0), "r"(b0), "r"(c0), "r"(c1))
      MPEI_IMMA_PICK(MPEI_IMMA_SMALL, "m8n8k16", "m8n8k32");
#undef MPEI_IMMA_SMALL
#else
      (void)ag; (void)bg;
      __trap();
#endif
      continue;
    }
    const uint8_t *ag8 = A + ((rowg8 * Kp + k0) >> W4);
#if __CUDA_ARCH__ >= 800
    uint32_t a0 = ld32(ag + 4 * t), a1 = ld32(ag8 + 4 * t);
    uint32_t a2 = ld32(ag + 16 + 4 * t), a3 = ld32(ag8 + 16 + 4 * t);
    uint32_t b0 = ld32(bg + 4 * t), b1 = ld32(bg + 16 + 4 * t);
    MPEI_IMMA_PICK(MPEI_IMMA, "m16n8k32", "m16n8k64");
#else
    (void)ag; (void)ag8; (void)bg;
    __trap();
#endif
  }
  D[rowg * Np + n0 + 2 * t] = (int32_t)c0;
  D[rowg * Np + n0 + 2 * t + 1] = (int32_t)c1;
  if (!SMALL) {
    D[rowg8 * Np + n0 + 2 * t] = (int32_t)c2;
    D[rowg8 * Np + n0 + 2 * t + 1] = (int32_t)c3;
  }
}
#undef MPEI_IMMA_PICK
#undef MPEI_IMMA_SIGNS
#undef MPEI_IMMA

extern "C" int mpei_gpu_launch_imma(int shape, int as, int bs, int sat, const void *A, const void *BT,
                                    const int32_t *C, int32_t *D, int Mp, int Np, int Kp, void *stream)
{
  const int tilesM = Mp / (shape >= 2 ? 8 : 16), tilesN = Np / 8, threads = TILE_THREADS;
  const unsigned blocks = tile_blocks(tilesM, tilesN);
  if (blocks == 0)
    return 0;
  cudaStream_t s = (cudaStream_t)stream;
  const uint8_t *a = (const uint8_t *)A, *b = (const uint8_t *)BT;
  if (shape < 0 || shape > 3)
    return (int)cudaErrorInvalidValue;
  switch (shape * 8 + (as ? 4 : 0) + (bs ? 2 : 0) + (sat ? 1 : 0)) {
#define LAUNCH(W, X, Y, Z) \
  case W * 8 + X * 4 + Y * 2 + Z: imma_kernel<W, X, Y, Z><<<blocks, threads, 0, s>>>(a, b, C, D, tilesM, tilesN, Np, Kp); break;
#define LAUNCH4(W, X) LAUNCH(W, X, 0, 0) LAUNCH(W, X, 0, 1) LAUNCH(W, X, 1, 0) LAUNCH(W, X, 1, 1)
  LAUNCH4(0, 0) LAUNCH4(0, 1) LAUNCH4(1, 0) LAUNCH4(1, 1)
  LAUNCH4(2, 0) LAUNCH4(2, 1) LAUNCH4(3, 0) LAUNCH4(3, 1)
#undef LAUNCH4
#undef LAUNCH
  default: return (int)cudaErrorInvalidValue;
  }
  return (int)cudaGetLastError();
}

/* ------------------------------------------------------------------ fma chain */

__global__ void fma_kernel(const float *A, const float *BT, const float *C, float *D, int M, int N, int K)
{
  const long idx = (long)blockIdx.x * blockDim.x + threadIdx.x;
  if (idx >= (long)M * N)
    return;
  const int i = (int)(idx / N), j = (int)(idx % N);
  const float *a = A + (size_t)i * K, *b = BT + (size_t)j * K;
  float acc = C[idx];
  for (int k = 0; k < K; k++)
    acc = __fmaf_rn(a[k], b[k], acc);
  D[idx] = acc;
}

extern "C" int mpei_gpu_launch_fma(const float *A, const float *BT, const float *C, float *D,
                                   int M, int N, int K, void *stream)
{
  const long total = (long)M * N;
  if (total == 0)
    return 0;
  const int threads = 128;
  fma_kernel<<<(unsigned)((total + threads - 1) / threads), threads, 0, (cudaStream_t)stream>>>(
      A, BT, C, D, M, N, K);
  return (int)cudaGetLastError();
}
