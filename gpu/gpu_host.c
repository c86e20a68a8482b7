/* The GPU path (built when configure finds CUDA): device discovery, the host
   side of mpe_gpu_round_f32 / mpe_gpu_mma / mpe_gpu_gemm, and the three GEMM
   paths (MMA kernel, cuBLASLt pinned, plain cublasGemmEx).

   All calls take host pointers and are synchronous. They are serialised by one
   lock and run on one stream per device, so a pinned cuBLASLt algorithm always
   sees the same workspace and no concurrent kernel. Operands are converted on
   the host with the model's own loader (mpei_tc_load), so every path sees
   exactly the input-format values the CPU model sees. */
#include "config.h"
#include <float.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cuda_runtime_api.h>
#include <cublas_v2.h>
#include <cublasLt.h>
#include "mpei.h"
#include "cuda_lazy.h"
#include "mpemu/convert.h"
#include "mpemu/gpu.h"
#include "../emu/tc_iface.h"
#include "gpu_int.h"
#include "half_rne.h"

#define MAXDEV 16
#define LT_WORKSPACE ((size_t)32 << 20)   /* the fixed cuBLASLt workspace */
#define LT_CACHE 64                        /* pinned algorithms kept per device */
#define ROUND_CHUNK ((size_t)1 << 26)      /* elements per transfer in mpe_gpu_round_f32 */

typedef struct {
  int used, in, out16, m, n, k;
  cublasLtMatmulAlgo_t algo;
} lt_pin;

typedef struct {
  int ready;
  struct cudaDeviceProp prop;
  cudaStream_t stream;
  cublasHandle_t blas;
  cublasLtHandle_t lt;
  void *ws;
  lt_pin pins[LT_CACHE];
  int pin_next;
} gpu_ctx;

static pthread_mutex_t gpu_lock = PTHREAD_MUTEX_INITIALIZER;
static int gpu_ndev = -1;                 /* -1: not probed yet */
static gpu_ctx gpu_ctxs[MAXDEV];
static _Thread_local int gpu_cur;

/* ------------------------------------------------------------------ devices */

/* With gpu_lock held. */
static int probe_locked(void)
{
  if (gpu_ndev < 0) {
    int n = 0;
    if (cudaGetDeviceCount(&n) != cudaSuccess || n < 0)
      n = 0;
    (void)cudaGetLastError();        /* clear the error of a machine without a driver */
    gpu_ndev = n > MAXDEV ? MAXDEV : n;
  }
  return gpu_ndev;
}

static int cuda_code(cudaError_t e)
{
  switch (e) {
  case cudaSuccess: return MPE_OK;
  case cudaErrorMemoryAllocation: return MPE_ENOMEM;
  case cudaErrorNoKernelImageForDevice: case cudaErrorInvalidDeviceFunction:
  case cudaErrorUnsupportedPtxVersion:
    return MPE_EUNSUP;
  default: return MPE_EDEVICE;
  }
}

static int blas_code(cublasStatus_t s)
{
  switch (s) {
  case CUBLAS_STATUS_SUCCESS: return MPE_OK;
  case CUBLAS_STATUS_ALLOC_FAILED: return MPE_ENOMEM;
  case CUBLAS_STATUS_NOT_SUPPORTED: case CUBLAS_STATUS_ARCH_MISMATCH: case CUBLAS_STATUS_INVALID_VALUE:
    return MPE_EUNSUP;
  default: return MPE_EDEVICE;
  }
}

static void ctx_release(gpu_ctx *c)
{
  if (c->ws)
    cudaFree(c->ws);
  if (c->lt)
    cublasLtDestroy(c->lt);
  if (c->blas)
    cublasDestroy(c->blas);
  if (c->stream)
    cudaStreamDestroy(c->stream);
  memset(c, 0, sizeof *c);
}

/* Takes gpu_lock and makes the calling thread's device current; on success
   the caller runs its work and calls leave(). */
static int enter(gpu_ctx **out)
{
  pthread_mutex_lock(&gpu_lock);
  int n = probe_locked();
  if (n == 0 || gpu_cur >= n) {
    pthread_mutex_unlock(&gpu_lock);
    return MPE_EDEVICE;
  }
  gpu_ctx *c = &gpu_ctxs[gpu_cur];
  if (cudaSetDevice(gpu_cur) != cudaSuccess)
    goto fail;
  if (!c->ready) {
    if (mpei_cublas_load(NULL) != MPE_OK ||
        cudaGetDeviceProperties(&c->prop, gpu_cur) != cudaSuccess ||
        cudaStreamCreateWithFlags(&c->stream, cudaStreamNonBlocking) != cudaSuccess ||
        cublasCreate(&c->blas) != CUBLAS_STATUS_SUCCESS ||
        cublasSetStream(c->blas, c->stream) != CUBLAS_STATUS_SUCCESS ||
        cublasLtCreate(&c->lt) != CUBLAS_STATUS_SUCCESS ||
        cudaMalloc(&c->ws, LT_WORKSPACE) != cudaSuccess) {
      ctx_release(c);
      goto fail;
    }
    c->ready = 1;
  }
  *out = c;
  return MPE_OK;
fail:
  (void)cudaGetLastError();
  pthread_mutex_unlock(&gpu_lock);
  return MPE_EDEVICE;
}

static void leave(void)
{
  pthread_mutex_unlock(&gpu_lock);
}

static int dev_sm(const gpu_ctx *c) { return c->prop.major * 10 + c->prop.minor; }

/* The number of devices (probed once). */
static int probe(void)
{
  pthread_mutex_lock(&gpu_lock);
  int n = probe_locked();
  pthread_mutex_unlock(&gpu_lock);
  return n;
}

int mpe_gpu_device_count(int *count)
{
  if (!count)
    return MPE_EINVAL;
  int n = probe();
  if (n == 0)
    return MPE_EDEVICE;
  *count = n;
  return MPE_OK;
}

int mpe_gpu_info_get(int device, mpe_gpu_info *info)
{
  if (!info || device < 0)
    return MPE_EINVAL;
  pthread_mutex_lock(&gpu_lock);
  int n = probe_locked();
  if (n == 0) {
    pthread_mutex_unlock(&gpu_lock);
    return MPE_EDEVICE;
  }
  if (device >= n) {
    pthread_mutex_unlock(&gpu_lock);
    return MPE_EINVAL;
  }
  struct cudaDeviceProp p;
  int rt = 0, drv = 0;
  if (cudaGetDeviceProperties(&p, device) != cudaSuccess) {
    (void)cudaGetLastError();
    pthread_mutex_unlock(&gpu_lock);
    return MPE_EDEVICE;
  }
  cudaRuntimeGetVersion(&rt);
  cudaDriverGetVersion(&drv);
  pthread_mutex_unlock(&gpu_lock);
  mpe_gpu_info r;
  memset(&r, 0, sizeof r);
  snprintf(r.name, sizeof r.name, "%s", p.name);
  r.major = p.major;
  r.minor = p.minor;
  r.sm_count = p.multiProcessorCount;
  r.memory = p.totalGlobalMem;
  r.model = mpe_gpu_arch_model(p.major, p.minor);
  /* the MMA kernels exist for sm_75 and later (configure's targets, plus PTX
     for newer devices); sm_70 needs a toolkit that still builds it */
  r.mma_kernel = p.major * 10 + p.minor >= 75 && r.model != NULL;
  r.runtime_version = rt;
  r.driver_version = drv;
  r.cublas_version = mpei_cublas_load(NULL) == MPE_OK ? (int)cublasLtGetVersion() : 0;
  *info = r;
  return MPE_OK;
}

int mpe_gpu_device_set(int device)
{
  if (device < 0)
    return MPE_EINVAL;
  int n = probe();
  if (n == 0)
    return MPE_EDEVICE;
  if (device >= n)
    return MPE_EINVAL;
  gpu_cur = device;
  return MPE_OK;
}

static int in_type_ok(mpe_type t)
{
  return t == MPE_FP16 || t == MPE_BF16 || t == MPE_TF32 || t == MPE_E4M3 || t == MPE_E5M2 ||
         mpei_type_is_int(t);
}

/* The model of the instruction the MMA path issues: mma.sync on every GPU. */
static const mpe_tc_model *device_model(const gpu_ctx *c, mpe_type in)
{
  const char *name = mpe_gpu_arch_model(c->prop.major, c->prop.minor);
  char full[32];
  if (!name || snprintf(full, sizeof full, "%s:mma.sync", name) >= (int)sizeof full)
    return NULL;
  return mpe_tc_model_get(full, in);
}

int mpe_gpu_model(const mpe_tc_model **model, mpe_type in)
{
  if (!model || !in_type_ok(in))
    return MPE_EINVAL;
  gpu_ctx *c;
  int r = enter(&c);
  if (r)
    return r;
  const mpe_tc_model *m = device_model(c, in);
  leave();
  if (!m)
    return MPE_EUNSUP;
  *model = m;
  return MPE_OK;
}

/* ------------------------------------------------------------------ device memory */

static int dalloc(void **p, size_t bytes)
{
  *p = NULL;
  if (bytes == 0)
    bytes = 1;
  cudaError_t e = cudaMalloc(p, bytes);
  if (e != cudaSuccess) {
    (void)cudaGetLastError();
    *p = NULL;
    return e == cudaErrorMemoryAllocation ? MPE_ENOMEM : MPE_EDEVICE;
  }
  return MPE_OK;
}

static int upload(gpu_ctx *c, void *d, const void *h, size_t bytes)
{
  return cuda_code(cudaMemcpyAsync(d, h, bytes, cudaMemcpyHostToDevice, c->stream));
}

static int download(gpu_ctx *c, void *h, const void *d, size_t bytes)
{
  cudaError_t e = cudaMemcpyAsync(h, d, bytes, cudaMemcpyDeviceToHost, c->stream);
  if (e == cudaSuccess)
    e = cudaStreamSynchronize(c->stream);
  return cuda_code(e);
}

/* The three operands of one product: A, B and C as byte arrays in one host
   allocation (h, hb, hc) and their device copies (dA, dB, dC). */
typedef struct {
  size_t abytes, bbytes, cbytes;
  uint8_t *h, *hb, *hc;
  void *dA, *dB, *dC;
} dev_bufs;

/* Host room for the three operands, uninitialized; hc is at h + abytes + bbytes. */
static int bufs_alloc(dev_bufs *b, size_t abytes, size_t bbytes, size_t cbytes)
{
  memset(b, 0, sizeof *b);
  b->abytes = abytes;
  b->bbytes = bbytes;
  b->cbytes = cbytes;
  b->h = malloc(abytes + bbytes + cbytes + 1);
  if (!b->h)
    return MPE_ENOMEM;
  b->hb = b->h + abytes;
  b->hc = b->hb + bbytes;
  return MPE_OK;
}

/* Device room for the three operands; A and B uploaded, and C when with_c. */
static int bufs_upload(gpu_ctx *c, dev_bufs *b, int with_c)
{
  int r = dalloc(&b->dA, b->abytes);
  if (!r)
    r = dalloc(&b->dB, b->bbytes);
  if (!r)
    r = dalloc(&b->dC, b->cbytes);
  if (!r)
    r = upload(c, b->dA, b->h, b->abytes);
  if (!r)
    r = upload(c, b->dB, b->hb, b->bbytes);
  if (!r && with_c)
    r = upload(c, b->dC, b->hc, b->cbytes);
  return r;
}

static void bufs_free(dev_bufs *b)
{
  cudaFree(b->dA);
  cudaFree(b->dB);
  cudaFree(b->dC);
  (void)cudaGetLastError();
  free(b->h);
}

/* ------------------------------------------------------------------ rounding */

int mpe_gpu_round_f32(float *y, const float *x, size_t n, const mpe_format *f, const mpe_round_opts *o)
{
  if (!f || (o && (unsigned)o->round >= MPE_NROUND) || (n > 0 && (!y || !x)) || f->p > 24)
    return MPE_EINVAL;
  gpu_ctx *c;
  int r = enter(&c);
  if (r)
    return r;
  if (n == 0) {
    leave();
    return MPE_OK;
  }
  mpe_round_opts opts = { MPE_RNE, 0, 0, 0, 0 };
  if (o)
    opts = *o;
  size_t chunk = n < ROUND_CHUNK ? n : ROUND_CHUNK;
  float *dx = NULL;
  unsigned *dfl = NULL, hfl = 0;
  float *tmp = NULL;
  r = dalloc((void **)&dx, chunk * sizeof(float));
  if (!r)
    r = dalloc((void **)&dfl, sizeof(unsigned));
  if (!r)
    r = cuda_code(cudaMemsetAsync(dfl, 0, sizeof(unsigned), c->stream));
  /* results go to a host copy first: y is written only when every chunk worked */
  if (!r && y != x && n > chunk) {
    tmp = malloc(n * sizeof(float));
    if (!tmp)
      r = MPE_ENOMEM;
  } else if (!r && y == x) {
    tmp = malloc(n * sizeof(float));
    if (!tmp)
      r = MPE_ENOMEM;
  }
  float *dst = tmp ? tmp : y;
  for (size_t i0 = 0; !r && i0 < n; i0 += chunk) {
    size_t len = n - i0 < chunk ? n - i0 : chunk;
    mpe_round_opts oc = opts;
    oc.offset = opts.offset + i0;
    mpei_gpu_plan plan;
    mpei_gpu_plan_make(&plan, f, &oc);
    r = upload(c, dx, x + i0, len * sizeof(float));
    if (!r)
      r = cuda_code((cudaError_t)mpei_gpu_launch_round(dx, dx, len, &plan, dfl, c->stream));
    if (!r)
      r = download(c, dst + i0, dx, len * sizeof(float));
  }
  if (!r)
    r = download(c, &hfl, dfl, sizeof(unsigned));
  if (!r && tmp)
    memcpy(y, tmp, n * sizeof(float));
  if (!r)
    mpei_flags |= hfl;
  free(tmp);
  cudaFree(dx);
  cudaFree(dfl);
  (void)cudaGetLastError();
  leave();
  return r;
}

/* ------------------------------------------------------------------ operands */

/* Pack op(X) (rows x k, element (i, l) at i*o->rs + l*o->cs) into a row-major
   R x Kp array of input-format elements (es bytes: 2 fp16/bf16 bits, 4 tf32 as
   binary32 bits, 1 fp8 bits; es == 0: binary32 values for the fma chain),
   zero padded. Values come from the model's loader, as on the CPU, except
   binary32 operands of a truncating TF32 model: their bits go as they are,
   since the tensor core drops the low 13 bits itself (which also leaves the
   GPU's own treatment of a NaN whose payload lies there to the GPU). */
static void pack(uint8_t *dst, int R, int Kp, int rows, int k, const struct mpe_tc_model *m,
                 const mpei_tc_opnd *o, mpe_type in, int es)
{
  const struct mpe_format *fi = (const struct mpe_format *)mpe_format_of(in);
  size_t esz = es ? (size_t)es : 4;
  memset(dst, 0, (size_t)R * Kp * esz);
  for (int i = 0; i < rows; i++)
    for (int l = 0; l < k; l++) {
      size_t idx = (size_t)((long)i * o->rs + (long)l * o->cs);
      double v = mpei_tc_load(m, o->p, o->t, idx);
      size_t at = (size_t)i * Kp + l;
      switch (es) {
      case 0: ((float *)dst)[at] = (float)v; break;
      case 4:
        if ((o->t == MPE_FP32 || o->t == MPE_TF32) && m->p.input_round == MPE_RZ)
          memcpy((uint32_t *)dst + at, (const float *)o->p + idx, 4);
        else
          ((uint32_t *)dst)[at] = mpei_f2u((float)v);
        break;
      case 2: ((uint16_t *)dst)[at] = (uint16_t)mpei_encode(v, fi); break;
      default: dst[at] = (uint8_t)mpei_encode(v, fi); break;
      }
    }
}

static int round_up(int v, int q) { return (v + q - 1) / q * q; }

static int mma_kind_for(int sm, mpe_type in, int out16)
{
  if (sm < 75)
    return -1;             /* V100: m8n8k4 is not built (see mpe_gpu(3)) */
  if (sm < 80)
    return in == MPE_FP16 ? (out16 ? MPEI_MMA_F16_K8_F16 : MPEI_MMA_F16_K8_F32) : -1;
  switch (in) {
  case MPE_FP16: return out16 ? MPEI_MMA_F16_K16_F16 : MPEI_MMA_F16_K16_F32;
  case MPE_BF16: return out16 ? -1 : MPEI_MMA_BF16_K16_F32;
  case MPE_TF32: return out16 ? -1 : MPEI_MMA_TF32_K8_F32;
  case MPE_E4M3: return sm < 89 ? -1 : out16 ? MPEI_MMA_E4M3_K32_F16 : MPEI_MMA_E4M3_K32_F32;
  case MPE_E5M2: return sm < 89 ? -1 : out16 ? MPEI_MMA_E5M2_K32_F16 : MPEI_MMA_E5M2_K32_F32;
  default: return -1;
  }
}

static int params_equal(const mpe_tc_params *a, const mpe_tc_params *b)
{
  return a->kind == b->kind && a->in == b->in && a->block == b->block &&
         a->align_bits == b->align_bits && a->result_bits == b->result_bits &&
         a->round_fp32 == b->round_fp32 && a->round_fp16 == b->round_fp16 &&
         a->input_round == b->input_round && a->zero_c_counts == b->zero_c_counts &&
         a->late_c == b->late_c && a->zero_c_exp == b->zero_c_exp && a->scale_group == b->scale_group;
}

/* What the MMA path runs for `model` on this device: *fma = 1 for the
   fma-chain reference, 0 for the tensor cores. */
static int mma_plan(const gpu_ctx *c, const mpe_tc_model *model, mpe_type in, int out16,
                    const mpe_tc_model **use, int *fma, int *kind)
{
  const mpe_tc_model *dev = device_model(c, in);
  mpe_tc_params p;
  *fma = 0;
  *kind = -1;
  if (model) {
    mpe_tc_model_params(model, &p);
    if (p.kind == MPE_TC_FMA_CHAIN) {
      if (out16)
        return MPE_EUNSUP;
      *use = model;
      *fma = 1;
      return MPE_OK;
    }
    mpe_tc_params q;
    /* binary16 output of FP8 tells mma.sync's two blocks from one (fp16_split): a model
       without them (h100, wgmma) is not what this path computes there */
    if (p.kind != MPE_TC_BLOCK || !dev || (mpe_tc_model_params(dev, &q), !params_equal(&p, &q)) ||
        (out16 && p.fp16_split != q.fp16_split))
      return MPE_EUNSUP;
    *use = model;
  } else {
    if (!dev)
      return MPE_EUNSUP;
    *use = dev;
  }
  *kind = mma_kind_for(dev_sm(c), in, out16);
  return *kind < 0 ? MPE_EUNSUP : MPE_OK;
}

/* acc (row-major M x N: float, or binary16 bits when out16) = the MMA path's
   chain for op(A) (M x K), op(B) (K x N), starting from C (NULL: zero; element
   (i, j) at i*c->rs + j*c->cs, of type c->t). */
static int run_mma(gpu_ctx *c, const mpe_tc_model *use, int fma, int kind, int out16, int M, int N,
                   int K, const mpei_tc_opnd *a, const mpei_tc_opnd *bt, const mpei_tc_opnd *cc,
                   mpe_type in, void *acc)
{
  int KI = fma ? 1 : mpei_gpu_mma_k(kind), es = fma ? 0 : mpei_gpu_mma_esize(kind);
  int Mp = fma ? M : round_up(M, 16), Np = fma ? N : round_up(N, 8), Kp = round_up(K, KI);
  size_t esz = es ? (size_t)es : 4, osz = out16 ? 2 : 4;
  dev_bufs b;
  if (bufs_alloc(&b, (size_t)Mp * Kp * esz, (size_t)Np * Kp * esz, (size_t)Mp * Np * osz))
    return MPE_ENOMEM;
  uint8_t *hc = b.hc;
  const struct mpe_tc_model *m = (const struct mpe_tc_model *)use;
  pack(b.h, Mp, Kp, M, K, m, a, in, es);
  pack(b.hb, Np, Kp, N, K, m, bt, in, es);
  memset(hc, 0, b.cbytes);
  if (cc && cc->p)
    for (int i = 0; i < M; i++)
      for (int j = 0; j < N; j++) {
        size_t idx = (size_t)((long)i * cc->rs + (long)j * cc->cs), at = (size_t)i * Np + j;
        if (out16)
          ((uint16_t *)hc)[at] = ((const uint16_t *)cc->p)[idx];
        else
          ((float *)hc)[at] = ((const float *)cc->p)[idx];
      }
  int r = bufs_upload(c, &b, 1);
  if (!r)
    r = cuda_code((cudaError_t)(fma ? mpei_gpu_launch_fma(b.dA, b.dB, b.dC, b.dC, M, N, K, c->stream)
                                    : mpei_gpu_launch_mma(kind, b.dA, b.dB, b.dC, b.dC, Mp, Np, Kp, c->stream)));
  if (!r)
    r = download(c, hc, b.dC, b.cbytes);
  if (!r)
    for (int i = 0; i < M; i++)
      memcpy((uint8_t *)acc + (size_t)i * N * osz, hc + (size_t)i * Np * osz, (size_t)N * osz);
  bufs_free(&b);
  return r;
}

/* ------------------------------------------------------------------ mpe_gpu_mma */

/* The input type of a call: the model's, or with no model the packed operand type. */
static mpe_type call_in_type(const mpe_tc_model *model, mpe_type atype, mpe_type btype)
{
  return model ? model->p.in : atype != MPE_FP32 ? atype : btype;
}

/* The integer tensor cores (end of this file). */
static int int_mma(const mpe_tc_model *model, int m, int n, int k, const void *A, mpe_type atype, int lda,
                   const void *B, mpe_type btype, int ldb, const void *C, int ldc, void *D, mpe_type dtype, int ldd);
static int int_gemm(mpe_gpu_path path, const mpe_tc_model *model, mpe_layout layout, mpe_trans ta, mpe_trans tb,
                    int m, int n, int k, float alpha, const void *A, mpe_type atype, int lda, const void *B,
                    mpe_type btype, int ldb, float beta, void *C, mpe_type ctype, int ldc);

static int is_int_call(const mpe_tc_model *model, mpe_type atype, mpe_type btype, mpe_type ctype)
{
  return (model && mpei_type_is_int(model->p.in)) || mpei_type_is_int(atype) || mpei_type_is_int(btype) ||
         ctype == MPE_INT32;
}

int mpe_gpu_mma(const mpe_tc_model *model, int m, int n, int k,
                const void *A, mpe_type atype, int lda, const void *B, mpe_type btype, int ldb,
                const void *C, int ldc, void *D, mpe_type dtype, int ldd)
{
  if (is_int_call(model, atype, btype, dtype))
    return int_mma(model, m, n, k, A, atype, lda, B, btype, ldb, C, ldc, D, dtype, ldd);
  mpe_type in = call_in_type(model, atype, btype);
  if (mpei_tc_mma_check(in, m, n, k, A, atype, lda, B, btype, ldb, C, ldc, D, dtype, ldd))
    return MPE_EINVAL;   /* mpe_mma's rules (emu/tc_mma.c) */
  gpu_ctx *c;
  int r = enter(&c);
  if (r)
    return r;
  const mpe_tc_model *use;
  int fma, kind, out16 = dtype == MPE_FP16;
  r = mma_plan(c, model, in, out16, &use, &fma, &kind);
  if (r || m == 0 || n == 0) {
    leave();
    return r;
  }
  size_t osz = out16 ? 2 : 4;
  void *acc = malloc((size_t)m * n * osz);
  if (!acc) {
    leave();
    return MPE_ENOMEM;
  }
  mpei_tc_opnd a = { A, atype, lda, 1, NULL }, bt = { B, btype, 1, ldb, NULL }, cc = { C, dtype, ldc, 1, NULL };
  r = run_mma(c, use, fma, kind, out16, m, n, k, &a, &bt, &cc, in, acc);
  leave();
  if (!r)
    for (int i = 0; i < m; i++)
      memcpy((uint8_t *)D + (size_t)i * ldd * osz, (uint8_t *)acc + (size_t)i * n * osz, (size_t)n * osz);
  free(acc);
  return r;
}

/* ------------------------------------------------------------------ cuBLAS paths */

static cudaDataType_t cuda_type(mpe_type t)
{
  switch (t) {
  case MPE_FP16: return CUDA_R_16F;
  case MPE_BF16: return CUDA_R_16BF;
  case MPE_E4M3: return CUDA_R_8F_E4M3;
  case MPE_E5M2: return CUDA_R_8F_E5M2;
  default: return CUDA_R_32F;        /* tf32 values travel as binary32 */
  }
}

/* Find (once per shape) and run the pinned cuBLASLt algorithm:
   D (column-major m x n, float or binary16 when out16) = op(A) op(B) with
   alpha = 1, beta = 0, A given as a k x m column-major array (ld Kp, used
   transposed) and B as k x n (ld Kp): the "TN" form FP8 needs. */
static int lt_matmul(gpu_ctx *c, mpe_type in, int out16, int m, int n, int k, int Kp, int ldd,
                     const void *dA, const void *dB, void *dD)
{
  const int i8 = in == MPE_INT8;     /* INT8 A and B, int32 compute, scale and D */
  cublasComputeType_t ct = i8 ? CUBLAS_COMPUTE_32I : out16 ? CUBLAS_COMPUTE_16F
                                 : in == MPE_TF32 ? CUBLAS_COMPUTE_32F_FAST_TF32 : CUBLAS_COMPUTE_32F;
  cudaDataType_t st = i8 ? CUDA_R_32I : out16 ? CUDA_R_16F : CUDA_R_32F;
  cudaDataType_t dt = st;
  cudaDataType_t at = i8 ? CUDA_R_8I : cuda_type(in);
  cublasLtMatmulDesc_t op = NULL;
  cublasLtMatrixLayout_t la = NULL, lb = NULL, ld = NULL;
  cublasLtMatmulPreference_t pref = NULL;
  cublasOperation_t tA = CUBLAS_OP_T, tB = CUBLAS_OP_N;
  int r = MPE_OK;
  cublasStatus_t s = cublasLtMatmulDescCreate(&op, ct, st);
  if (s == CUBLAS_STATUS_SUCCESS)
    s = cublasLtMatmulDescSetAttribute(op, CUBLASLT_MATMUL_DESC_TRANSA, &tA, sizeof tA);
  if (s == CUBLAS_STATUS_SUCCESS)
    s = cublasLtMatmulDescSetAttribute(op, CUBLASLT_MATMUL_DESC_TRANSB, &tB, sizeof tB);
  if (s == CUBLAS_STATUS_SUCCESS)
    s = cublasLtMatrixLayoutCreate(&la, at, (uint64_t)k, (uint64_t)m, Kp);
  if (s == CUBLAS_STATUS_SUCCESS)
    s = cublasLtMatrixLayoutCreate(&lb, at, (uint64_t)k, (uint64_t)n, Kp);
  if (s == CUBLAS_STATUS_SUCCESS)
    s = cublasLtMatrixLayoutCreate(&ld, dt, (uint64_t)m, (uint64_t)n, ldd);
  if (s != CUBLAS_STATUS_SUCCESS) {
    r = blas_code(s);
    goto done;
  }

  /* the pinned algorithm of this shape, found on first use */
  lt_pin *pin = NULL;
  for (int i = 0; i < LT_CACHE; i++) {
    lt_pin *p = &c->pins[i];
    if (p->used && p->in == (int)in && p->out16 == out16 && p->m == m && p->n == n && p->k == k) {
      pin = p;
      break;
    }
  }
  if (!pin) {
    uint64_t ws = LT_WORKSPACE;
    const uint64_t accf = i8 ? CUBLASLT_NUMERICAL_IMPL_FLAGS_ACCUMULATOR_32I
                          : out16 ? CUBLASLT_NUMERICAL_IMPL_FLAGS_ACCUMULATOR_16F
                                  : CUBLASLT_NUMERICAL_IMPL_FLAGS_ACCUMULATOR_32F;
    uint64_t impl = CUBLASLT_NUMERICAL_IMPL_FLAGS_TENSOR_OP_MASK |
                    CUBLASLT_NUMERICAL_IMPL_FLAGS_OP_INPUT_TYPE_MASK | accf;
    s = cublasLtMatmulPreferenceCreate(&pref);
    if (s == CUBLAS_STATUS_SUCCESS)
      s = cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &ws, sizeof ws);
    if (s == CUBLAS_STATUS_SUCCESS)
      s = cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_IMPL_MASK, &impl, sizeof impl);
    cublasLtMatmulHeuristicResult_t res[16];
    int got = 0;
    if (s == CUBLAS_STATUS_SUCCESS)
      s = cublasLtMatmulAlgoGetHeuristic(c->lt, op, la, lb, ld, ld, pref, 16, res, &got);
    if (s != CUBLAS_STATUS_SUCCESS) {
      r = blas_code(s);
      goto done;
    }
    for (int i = 0; i < got && !pin; i++) {
      if (res[i].state != CUBLAS_STATUS_SUCCESS)
        continue;
      cublasLtMatmulAlgo_t algo = res[i].algo;
      uint64_t flags = 0;
      size_t wr = 0;
      if (cublasLtMatmulAlgoCapGetAttribute(&algo, CUBLASLT_ALGO_CAP_NUMERICAL_IMPL_FLAGS, &flags,
                                            sizeof flags, &wr) != CUBLAS_STATUS_SUCCESS)
        continue;
      if (!(flags & CUBLASLT_NUMERICAL_IMPL_FLAGS_TENSOR_OP_MASK) ||
          (flags & CUBLASLT_NUMERICAL_IMPL_FLAGS_ACCUMULATOR_TYPE_MASK) != accf)
        continue;
      /* no split of K, no reduction pass */
      int32_t splitk = 1;
      uint32_t red = CUBLASLT_REDUCTION_SCHEME_NONE;
      if (cublasLtMatmulAlgoConfigSetAttribute(&algo, CUBLASLT_ALGO_CONFIG_SPLITK_NUM, &splitk,
                                               sizeof splitk) != CUBLAS_STATUS_SUCCESS ||
          cublasLtMatmulAlgoConfigSetAttribute(&algo, CUBLASLT_ALGO_CONFIG_REDUCTION_SCHEME, &red,
                                               sizeof red) != CUBLAS_STATUS_SUCCESS)
        continue;
      cublasLtMatmulHeuristicResult_t chk;
      if (cublasLtMatmulAlgoCheck(c->lt, op, la, lb, ld, ld, &algo, &chk) != CUBLAS_STATUS_SUCCESS ||
          chk.workspaceSize > LT_WORKSPACE)
        continue;
      pin = &c->pins[c->pin_next];
      c->pin_next = (c->pin_next + 1) % LT_CACHE;
      pin->used = 1;
      pin->in = (int)in;
      pin->out16 = out16;
      pin->m = m;
      pin->n = n;
      pin->k = k;
      pin->algo = algo;
    }
    if (!pin) {
      r = MPE_EUNSUP;      /* no tensor-core algorithm with these constraints */
      goto done;
    }
  }
  {
    float one = 1.0f, zero = 0.0f;
    uint16_t one16 = 0x3c00, zero16 = 0;
    int32_t one32 = 1, zero32 = 0;
    const void *alpha = i8 ? (const void *)&one32 : out16 ? (const void *)&one16 : (const void *)&one;
    const void *beta = i8 ? (const void *)&zero32 : out16 ? (const void *)&zero16 : (const void *)&zero;
    s = cublasLtMatmul(c->lt, op, alpha, dA, la, dB, lb, beta, dD, ld, dD, ld, &pin->algo, c->ws,
                       LT_WORKSPACE, c->stream);
    r = blas_code(s);
  }
done:
  if (pref)
    cublasLtMatmulPreferenceDestroy(pref);
  if (ld)
    cublasLtMatrixLayoutDestroy(ld);
  if (lb)
    cublasLtMatrixLayoutDestroy(lb);
  if (la)
    cublasLtMatrixLayoutDestroy(la);
  if (op)
    cublasLtMatmulDescDestroy(op);
  return r;
}

/* ------------------------------------------------------------------ mpe_gpu_gemm */

/* One checked mpe_gpu_gemm call as every path reads it: op(A) as an m x k view
   a, op(B) transposed as an n x k view bt, element (i, j) of C at
   C[i*crs + j*ccs]; the accumulator of the MMA and cuBLASLt paths is row-major
   m x n (binary32, or binary16 bits when out16). */
typedef struct {
  int m, n, k, use_ab, out16;
  mpe_type in;
  float alpha, beta;
  mpei_tc_opnd a, bt;
  void *C;
  mpe_type ctype;
  long crs, ccs;
  const mpe_tc_model *use;   /* loads the operands; the MMA path runs it */
  int fma, kind;             /* MMA path: the fma-chain reference, the mma kind */
} gemm_job;

/* The views of mpe_gemm's row-major call cl (emu/tc_mma.c) without its swap
   of A and B for a column-major C: the device sees A and B in their roles. */
static void job_make(gemm_job *j, const mpei_tc_call *cl, mpe_layout layout, int m, int n, int k, float alpha,
                     float beta, void *C, mpe_type ctype, int ldc, mpe_type in)
{
  memset(j, 0, sizeof *j);
  const mpei_tc_opnd *pa = &cl->a, *pb = &cl->b;
  if (layout == MPE_ROW_MAJOR) {          /* a = op(A), cl->b = op(B) */
    j->a = *pa;
    j->bt = (mpei_tc_opnd){ pb->p, pb->t, pb->cs, pb->rs, NULL };
    j->crs = ldc;
    j->ccs = 1;
  } else {                                /* cl->a = op(B)^T, cl->b = op(A)^T */
    j->a = (mpei_tc_opnd){ pb->p, pb->t, pb->cs, pb->rs, NULL };
    j->bt = *pa;
    j->crs = 1;
    j->ccs = ldc;
  }
  j->m = m;
  j->n = n;
  j->k = k;
  j->use_ab = cl->use_ab;
  j->out16 = ctype == MPE_FP16;
  j->in = in;
  j->alpha = alpha;
  j->beta = beta;
  j->C = C;
  j->ctype = ctype;
  j->kind = -1;
}

/* The cuBLAS paths use the model only to load operands (and for the input
   type): the caller's, else the device's, else "exact". */
static int blas_plan(const gpu_ctx *c, const mpe_tc_model *model, mpe_type in, int out16,
                     const mpe_tc_model **use)
{
  *use = model ? model : device_model(c, in);
  if (!*use)
    *use = mpe_tc_model_get("exact", in);
  if (!*use || (in == MPE_TF32 && out16))
    return MPE_EUNSUP;
  return MPE_OK;
}

/* MMA path: acc = the kernel's chain over k from a zero accumulator. */
static int gemm_mma(gpu_ctx *c, const gemm_job *j, void *acc)
{
  if (!j->use_ab)
    return MPE_OK;   /* acc stays zero */
  return run_mma(c, j->use, j->fma, j->kind, j->out16, j->m, j->n, j->k, &j->a, &j->bt, NULL, j->in, acc);
}

/* The operands of the cuBLAS paths, packed once: A as m x Kp and B^T as n x Kp,
   row-major, i.e. the column-major k x m and k x n arrays cuBLAS reads as "TN"
   (zero when not packed); room for C (m x n column-major) on the host (hc).
   *Kp: the padded depth. */
static int blas_pack(const gemm_job *j, int pack_ab, dev_bufs *b, int *Kp)
{
  const mpe_type in = j->in;
  const int es = in == MPE_TF32 ? 4 : (in == MPE_E4M3 || in == MPE_E5M2) ? 1 : 2;
  *Kp = round_up(j->k > 0 ? j->k : 1, 32);
  if (bufs_alloc(b, (size_t)j->m * *Kp * es, (size_t)j->n * *Kp * es, (size_t)j->m * j->n * (j->out16 ? 2 : 4)))
    return MPE_ENOMEM;
  const struct mpe_tc_model *lm = (const struct mpe_tc_model *)j->use;
  if (pack_ab) {
    pack(b->h, j->m, *Kp, j->m, j->k, lm, &j->a, in, es);
    pack(b->hb, j->n, *Kp, j->n, j->k, lm, &j->bt, in, es);
  } else {
    memset(b->h, 0, b->abytes + b->bbytes);
  }
  return MPE_OK;
}

/* cuBLASLt pinned: acc = op(A) op(B) with alpha = 1, beta = 0 on the device. */
static int gemm_lt(gpu_ctx *c, const gemm_job *j, void *acc)
{
  if (!j->use_ab)
    return MPE_OK;   /* acc stays zero */
  const size_t osz = j->out16 ? 2 : 4;
  dev_bufs b;
  int Kp;
  int r = blas_pack(j, 1, &b, &Kp);
  if (r)
    return r;
  r = bufs_upload(c, &b, 0);
  if (!r)
    r = lt_matmul(c, j->in, j->out16, j->m, j->n, j->k, Kp, j->m, b.dA, b.dB, b.dC);
  if (!r)
    r = download(c, b.hc, b.dC, b.cbytes);
  if (!r)   /* column-major D -> row-major acc */
    for (int i = 0; i < j->m; i++)
      for (int jj = 0; jj < j->n; jj++)
        memcpy((uint8_t *)acc + ((size_t)i * j->n + jj) * osz, b.hc + ((size_t)jj * j->m + i) * osz, osz);
  bufs_free(&b);
  return r;
}

/* Plain cublasGemmEx: alpha, beta and C go to cuBLAS as given; C written here. */
static int gemm_ex(gpu_ctx *c, const gemm_job *j)
{
  const int m = j->m, n = j->n, out16 = j->out16;
  const size_t osz = out16 ? 2 : 4;
  uint8_t *C = j->C;
  if (!(j->k > 0 || j->beta != 0.0f)) {
    for (int i = 0; i < m; i++)   /* k == 0 and beta == 0: C = 0 */
      for (int jj = 0; jj < n; jj++)
        memset(C + (size_t)((long)i * j->crs + (long)jj * j->ccs) * osz, 0, osz);
    return MPE_OK;
  }
  dev_bufs b;
  int Kp;
  int r = blas_pack(j, j->use_ab || (j->k > 0 && j->a.p && j->bt.p), &b, &Kp);
  if (r)
    return r;
  for (int i = 0; i < m; i++)
    for (int jj = 0; jj < n; jj++)
      memcpy(b.hc + ((size_t)jj * m + i) * osz, C + (size_t)((long)i * j->crs + (long)jj * j->ccs) * osz, osz);
  r = bufs_upload(c, &b, 1);
  if (!r && (j->in == MPE_E4M3 || j->in == MPE_E5M2))
    r = MPE_EUNSUP;    /* cublasGemmEx has no FP8 inputs: use cuBLASLt */
  if (!r) {
    cudaDataType_t at = cuda_type(j->in);
    cublasComputeType_t ct = out16 ? CUBLAS_COMPUTE_16F
                                   : j->in == MPE_TF32 ? CUBLAS_COMPUTE_32F_FAST_TF32 : CUBLAS_COMPUTE_32F;
    float alpha = j->alpha, beta = j->beta;
    uint16_t a16 = mpei_gpu_f32_to_f16_rne(alpha), b16 = mpei_gpu_f32_to_f16_rne(beta);
    const void *pa = out16 ? (const void *)&a16 : (const void *)&alpha;
    const void *pb = out16 ? (const void *)&b16 : (const void *)&beta;
    r = blas_code(cublasGemmEx(c->blas, CUBLAS_OP_T, CUBLAS_OP_N, m, n, j->k > 0 ? j->k : 0, pa, b.dA, at, Kp,
                               b.dB, at, Kp, pb, b.dC, out16 ? CUDA_R_16F : CUDA_R_32F, m, ct,
                               CUBLAS_GEMM_DEFAULT));
  }
  if (!r)
    r = download(c, b.hc, b.dC, b.cbytes);
  if (!r)
    for (int i = 0; i < m; i++)
      for (int jj = 0; jj < n; jj++)
        memcpy(C + (size_t)((long)i * j->crs + (long)jj * j->ccs) * osz, b.hc + ((size_t)jj * m + i) * osz, osz);
  bufs_free(&b);
  return r;
}

/* The MMA and cuBLASLt paths end with mpe_gemm's own epilogue (emu/tc_mma.c)
   on the host: acc (row-major m x n, binary16 bits when out16) into C;
   acc has room for m*n floats after its m*n binary16 accumulators when out16. */
static void host_epilogue(const gemm_job *j, void *acc)
{
  const size_t mn = (size_t)j->m * j->n;
  float *v = acc;
  if (j->out16) {
    v = (float *)((uint16_t *)acc + mn + (mn & 1));
    for (size_t t = 0; t < mn; t++)
      v[t] = mpe_fp16_to_fp32(((const uint16_t *)acc)[t]);
  }
  mpei_tc_epilogue_strided(v, j->m, j->n, j->alpha, j->beta, j->use_ab, j->C, j->ctype, j->crs, j->ccs);
}

int mpe_gpu_gemm(mpe_gpu_path path, const mpe_tc_model *model, mpe_layout layout, mpe_trans ta,
                 mpe_trans tb, int m, int n, int k, float alpha,
                 const void *A, mpe_type atype, int lda, const void *B, mpe_type btype, int ldb,
                 float beta, void *C, mpe_type ctype, int ldc)
{
  if ((unsigned)path >= MPE_GPU_NPATHS)
    return MPE_EINVAL;
  if (is_int_call(model, atype, btype, ctype))
    return int_gemm(path, model, layout, ta, tb, m, n, k, alpha, A, atype, lda, B, btype, ldb, beta, C, ctype, ldc);
  const mpe_type in = call_in_type(model, atype, btype);
  mpei_tc_call cl;       /* mpe_gemm's rules (emu/tc_mma.c) */
  if (mpei_tc_gemm_check(in, layout, ta, tb, m, n, k, alpha, A, atype, lda, B, btype, ldb, C, ctype, ldc, &cl))
    return MPE_EINVAL;
  gemm_job j;
  job_make(&j, &cl, layout, m, n, k, alpha, beta, C, ctype, ldc, in);

  gpu_ctx *c;
  int r = enter(&c);
  if (r)
    return r;
  r = path == MPE_GPU_PATH_MMA ? mma_plan(c, model, in, j.out16, &j.use, &j.fma, &j.kind)
                               : blas_plan(c, model, in, j.out16, &j.use);
  if (r || m == 0 || n == 0) {
    leave();
    return r;
  }
  if (path == MPE_GPU_PATH_GEMMEX) {
    r = gemm_ex(c, &j);
    leave();
    return r;
  }
  const size_t mn = (size_t)m * n;
  void *acc = calloc(j.out16 ? mn + (mn & 1) + 2 * mn : mn, j.out16 ? 2 : 4);
  if (!acc) {
    leave();
    return MPE_ENOMEM;
  }
  r = path == MPE_GPU_PATH_MMA ? gemm_mma(c, &j, acc) : gemm_lt(c, &j, acc);
  leave();
  if (!r)
    host_epilogue(&j, acc);
  free(acc);
  return r;
}

/* ------------------------------------------------------------------ integer tensor cores */

/* What the integer MMA path runs: the model (the caller's, or the device's for
   the input type) must be a block model of this device's type and block
   length, and one instruction is one block: mma.sync.m16n8k32 (8-bit, L = 32:
   A100, Ada, H100, B200) or m16n8k64 (4-bit, L = 64: A100, Ada) on sm_80+,
   m8n8k16 (8-bit, L = 16) or m8n8k32 (4-bit, L = 32) on T4. The model's
   satfinite picks .satfinite. *shape: mpei_gpu_launch_imma's. */
static int imma_plan(const gpu_ctx *c, const mpe_tc_model *model, mpe_type in, const mpe_tc_model **use,
                     int *shape)
{
  const mpe_tc_model *dev = device_model(c, in);
  const mpe_tc_model *u = model ? model : dev;
  if (!dev || u->p.kind != MPE_TC_BLOCK || u->p.in != dev->p.in || u->p.block != dev->p.block)
    return MPE_EUNSUP;
  const int w4 = in == MPE_INT4 || in == MPE_UINT4, sm = dev_sm(c);
  if (sm >= 80 && u->p.block == (w4 ? 64 : 32))
    *shape = w4;
  else if (sm >= 75 && u->p.block == (w4 ? 32 : 16))
    *shape = 2 + w4;
  else
    return MPE_EUNSUP;
  *use = u;
  return MPE_OK;
}

/* Pack op(X) (rows x k, element (i, l) at i*o->rs + l*o->cs) into a row-major
   R x Kp array of bytes, zero padded: 8-bit values one per byte; 4-bit values
   two per byte, element l in the low nibble when l is even. MPE_ERANGE for a
   4-bit value outside its type's range (as on the CPU). */
static int pack_int(uint8_t *dst, int R, int Kp, int rows, int k, const mpei_tc_opnd *o, int w4)
{
  const size_t rowbytes = w4 ? (size_t)Kp / 2 : (size_t)Kp;
  memset(dst, 0, (size_t)R * rowbytes);
  const int sgn = o->t == MPE_INT8 || o->t == MPE_INT4;
  for (int i = 0; i < rows; i++)
    for (int l = 0; l < k; l++) {
      size_t idx = (size_t)((long)i * o->rs + (long)l * o->cs);
      int v = sgn ? ((const int8_t *)o->p)[idx] : ((const uint8_t *)o->p)[idx];
      if (!w4) {
        dst[(size_t)i * rowbytes + l] = (uint8_t)v;
        continue;
      }
      if (o->t == MPE_INT4 ? (v < -8 || v > 7) : v > 15)
        return MPE_ERANGE;
      dst[(size_t)i * rowbytes + l / 2] |= (uint8_t)((v & 15) << (4 * (l & 1)));
    }
  return MPE_OK;
}

/* acc (row-major M x N int32) = the integer MMA chain for op(A) (M x K) and
   op(B) (B^T given as N x K), starting from C (element (i, j) at
   C[i*cc->rs + j*cc->cs]; NULL or cc->p NULL: zero). */
static int run_imma(gpu_ctx *c, const mpe_tc_model *use, int shape, int M, int N, int K, const mpei_tc_opnd *a,
                    const mpei_tc_opnd *bt, const mpei_tc_opnd *cc, int32_t *acc)
{
  static const int kis[4] = { 32, 64, 16, 32 };
  const int w4 = shape & 1, KI = kis[shape];
  const int Mp = round_up(M, 16), Np = round_up(N, 8), Kp = round_up(K, KI);
  dev_bufs b;
  if (bufs_alloc(&b, (size_t)Mp * Kp >> w4, (size_t)Np * Kp >> w4, (size_t)Mp * Np * 4))
    return MPE_ENOMEM;
  int32_t *hc = (int32_t *)(void *)b.hc;
  int r = pack_int(b.h, Mp, Kp, M, K, a, w4);
  if (!r)
    r = pack_int(b.hb, Np, Kp, N, K, bt, w4);
  if (r) {
    bufs_free(&b);
    return r;
  }
  memset(hc, 0, b.cbytes);
  if (cc && cc->p)
    for (int i = 0; i < M; i++)
      for (int j = 0; j < N; j++)
        hc[(size_t)i * Np + j] = ((const int32_t *)cc->p)[(long)i * cc->rs + (long)j * cc->cs];
  const int as = a->t == MPE_INT8 || a->t == MPE_INT4, bs = bt->t == MPE_INT8 || bt->t == MPE_INT4;
  r = bufs_upload(c, &b, 1);
  if (!r)
    r = cuda_code((cudaError_t)mpei_gpu_launch_imma(shape, as, bs, use->p.satfinite, b.dA, b.dB, b.dC, b.dC, Mp, Np,
                                                    Kp, c->stream));
  if (!r)
    r = download(c, hc, b.dC, b.cbytes);
  if (!r)
    for (int i = 0; i < M; i++)
      memcpy(acc + (size_t)i * N, hc + (size_t)i * Np, (size_t)N * sizeof(int32_t));
  bufs_free(&b);
  return r;
}

/* mpe_mma with an integer model or type: mpe_mma's integer rules
   (emu/tc_int.c), then the MMA kernel with C in the first instruction. */
static int int_mma(const mpe_tc_model *model, int m, int n, int k, const void *A, mpe_type atype, int lda,
                   const void *B, mpe_type btype, int ldb, const void *C, int ldc, void *D, mpe_type dtype, int ldd)
{
  mpe_type in = call_in_type(model, atype, btype);
  int r = mpei_tc_int_mma_check(in, m, n, k, A, atype, lda, B, btype, ldb, C, ldc, D, dtype, ldd);
  if (r)
    return r;
  gpu_ctx *c;
  if ((r = enter(&c)) != MPE_OK)
    return r;
  const mpe_tc_model *use = NULL;
  int shape = 0;
  r = imma_plan(c, model, in, &use, &shape);
  if (r || m == 0 || n == 0) {
    leave();
    return r;
  }
  int32_t *acc = malloc((size_t)m * n * sizeof(int32_t));
  if (!acc) {
    leave();
    return MPE_ENOMEM;
  }
  mpei_tc_opnd a = { A, atype, lda, 1, NULL }, bt = { B, btype, 1, ldb, NULL }, cc = { C, dtype, ldc, 1, NULL };
  r = run_imma(c, use, shape, m, n, k, &a, &bt, &cc, acc);
  leave();
  if (!r)
    for (int i = 0; i < m; i++)
      memcpy((int32_t *)D + (size_t)i * ldd, acc + (size_t)i * n, (size_t)n * sizeof(int32_t));
  free(acc);
  return r;
}

/* cuBLASLt pinned, INT8: acc = op(A) op(B) with compute type 32I, alpha = 1,
   beta = 0 (int32), A and B as CUDA_R_8I in the "TN" form. */
static int int_gemm_lt(gpu_ctx *c, const gemm_job *j, int32_t *acc)
{
  const int m = j->m, n = j->n, Kp = round_up(j->k, 32), ldd = round_up(m, 4);
  dev_bufs b;
  if (bufs_alloc(&b, (size_t)m * Kp, (size_t)n * Kp, (size_t)ldd * n * 4))
    return MPE_ENOMEM;
  int32_t *hc = (int32_t *)(void *)b.hc;
  pack_int(b.h, m, Kp, m, j->k, &j->a, 0);
  pack_int(b.hb, n, Kp, n, j->k, &j->bt, 0);
  int r = bufs_upload(c, &b, 0);
  if (!r)
    r = lt_matmul(c, MPE_INT8, 0, m, n, j->k, Kp, ldd, b.dA, b.dB, b.dC);
  if (!r)
    r = download(c, hc, b.dC, b.cbytes);
  if (!r)   /* column-major D -> row-major acc */
    for (int i = 0; i < m; i++)
      for (int jj = 0; jj < n; jj++)
        acc[(size_t)i * n + jj] = hc[(size_t)jj * ldd + i];
  bufs_free(&b);
  return r;
}

/* mpe_gemm with an integer model or type: the CPU's integer rules and
   epilogue (emu/tc_int.c); the product on the MMA kernel or cuBLASLt. */
static int int_gemm(mpe_gpu_path path, const mpe_tc_model *model, mpe_layout layout, mpe_trans ta, mpe_trans tb,
                    int m, int n, int k, float alpha, const void *A, mpe_type atype, int lda, const void *B,
                    mpe_type btype, int ldb, float beta, void *C, mpe_type ctype, int ldc)
{
  const mpe_type in = call_in_type(model, atype, btype);
  int32_t ia, ib;
  mpei_tc_call cl;
  int r = mpei_tc_int_gemm_check(in, layout, ta, tb, m, n, k, alpha, A, atype, lda, B, btype, ldb, beta, C, ctype,
                                 ldc, &ia, &ib, &cl);
  if (r)
    return r;
  gemm_job j;
  job_make(&j, &cl, layout, m, n, k, alpha, beta, C, ctype, ldc, in);
  gpu_ctx *c;
  if ((r = enter(&c)) != MPE_OK)
    return r;
  const mpe_tc_model *use = NULL;
  int shape = 0;
  if (path == MPE_GPU_PATH_MMA) {
    r = imma_plan(c, model, in, &use, &shape);
  } else if (path == MPE_GPU_PATH_CUBLASLT) {
    /* cublasLtMatmul's integer types: CUDA_R_8I A and B (no CUDA_R_8U), and
       nothing says its int32 accumulation saturates: wrapping models only */
    use = model ? model : device_model(c, in);
    if (!use)
      use = mpe_tc_model_get("exact", in);
    if (in != MPE_INT8 || atype != MPE_INT8 || btype != MPE_INT8 || use->p.satfinite)
      r = MPE_EUNSUP;
  } else {
    r = MPE_EUNSUP;    /* cublasGemmEx: not offered for integers */
  }
  if (r || m == 0 || n == 0) {
    leave();
    return r;
  }
  int32_t *acc = calloc((size_t)m * n, sizeof(int32_t));
  if (!acc) {
    leave();
    return MPE_ENOMEM;
  }
  if (j.use_ab)
    r = path == MPE_GPU_PATH_MMA ? run_imma(c, use, shape, m, n, k, &j.a, &j.bt, NULL, acc)
                                 : int_gemm_lt(c, &j, acc);
  leave();
  if (!r)
    mpei_tc_int_epilogue_strided(acc, m, n, ia, ib, j.use_ab, use->p.satfinite, C, j.crs, j.ccs);
  free(acc);
  return r;
}
