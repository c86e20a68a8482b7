/* CPU dot-product instructions: the models of kind MPE_TC_CPU_CHAIN (VDPBF16PS,
   TDPBF16PS, TDPFP16PS) and the hardware path mpe_cpu_mma / mpe_cpu_gemm, which
   runs the instruction a built-in CPU model describes on this CPU (AVX512_BF16,
   AMX-BF16, AMX-FP16, AMX-INT8, AVX512_VNNI, AVX-VNNI) and returns MPE_EUNSUP
   where the CPU lacks it. See mpe_tc_model_get(3), "CPU models", and mpe_cpu_gemm(3).

   The model: every step is one binary32 fma rounded to nearest-even, with the
   flushing the model's `flush` names: subnormal A and B elements read as zero
   (DAZ_AB), a subnormal C read as zero (DAZ_C), every result that is tiny after
   rounding (to 24 bits, exponent unbounded) replaced by a zero of its sign (FTZ).
   The tininess rule is the one AVX512_BF16 shows: c = 2^-126, a*b = -2^-151 gives
   2^-126 (tiny before rounding, not after), tests/check_cpu_mu.c. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE 1   /* syscall() */
#endif
#include "config.h"
#include <math.h>
#include <stdlib.h>
#include <string.h>
#ifdef _OPENMP
#include <omp.h>
#endif
#include "tc_impl.h"
#include "mpei_fenv.h"

/* ------------------------------------------------------------------ the model */

int mpei_tc_cpu_custom(mpe_tc_model **out, const mpe_tc_params *p)
{
  if (p->in != MPE_BF16 && p->in != MPE_FP16)
    return MPE_EINVAL;
  if (p->block < 2 || p->block > 1024 || p->block % 2)
    return MPE_EINVAL;   /* an instruction holds whole pairs */
  if (p->pair_order < MPE_TC_PAIR_ASCENDING || p->pair_order > MPE_TC_PAIR_SPLIT)
    return MPE_EINVAL;
  if (p->flush & ~(MPE_TC_DAZ_AB | MPE_TC_DAZ_C | MPE_TC_FTZ))
    return MPE_EINVAL;
  mpe_tc_params q = *p;
  q.round_fp32 = q.round_fp16 = MPE_RNE;
  return mpei_tc_custom_new(out, &q, 0);
}

/* x read as zero when it lies below `tiny` (keeping its sign) */
static inline float daz(float x, float tiny)
{
  return fabsf(x) < tiny ? copysignf(0.0f, x) : x;
}

/* fmaf(a, b, c) rounded to nearest-even; with ftz, a result that is tiny after
   rounding to 24 bits with an unbounded exponent is a zero of its sign. a*b
   must be exact in binary64 (binary16 or bfloat16 factors, or a factor 1). */
static float fma_x86(float a, float b, float c, int ftz)
{
  float r = fmaf(a, b, c);   /* the library's environment: RNE, no flushing */
  if (!ftz || !(fabsf(r) <= 0x1p-126f) || r == 0.0f)
    return r;   /* normal, inf, NaN, or a zero (whose sign fmaf gets right) */
  if (fabsf(r) < 0x1p-126f)
    return copysignf(0.0f, r);   /* a subnormal: the exact value lies below 2^-126 - 2^-150 */
  /* |r| = 2^-126: the exact value v = a*b + c rounds (unbounded exponent) to
     2^-126 unless it lies below 2^-126 - 2^-151. v = s + t exactly (TwoSum). */
  const double p = (double)a * b, s = p + c, bb = s - p, t = (p - (s - bb)) + (c - bb);
  const double sg = r < 0 ? -1.0 : 1.0, lim = 0x1p-126 - 0x1p-151;
  /* sg*v >= lim  <=>  (sg*s - lim) >= -sg*t, where sg*s - lim is exact (Sterbenz) */
  return sg * s - lim >= -sg * t ? r : copysignf(0.0f, r);
}

double mpei_tc_cpu_dot(const struct mpe_tc_model *m, const double *a, const double *b, long bs, int k, double c)
{
  const int fl = m->p.flush, ftz = (fl & MPE_TC_FTZ) != 0;
  /* a subnormal input element: below the input format's smallest normal */
  const float tiny_in = m->p.in == MPE_FP16 ? 0x1p-14f : 0x1p-126f;
  float d = (float)c;
  if (fl & MPE_TC_DAZ_C)
    d = daz(d, 0x1p-126f);
  const int np = (k + 1) / 2;   /* K padded with +0 to whole pairs */
  const int per = m->p.block / 2;   /* pairs per instruction */
#define ELEM(x, l) ((l) < k ? ((fl & MPE_TC_DAZ_AB) ? daz((float)(x), tiny_in) : (float)(x)) : 0.0f)
  for (int p0 = 0; p0 < np; p0 += per) {
    const int pn = np - p0 < per ? np - p0 : per;
    if (m->p.pair_order == MPE_TC_PAIR_SPLIT) {
      float e = 0.0f, o = 0.0f;
      for (int p = p0; p < p0 + pn; p++) {
        const int l = 2 * p;
        e = fma_x86(ELEM(a[l], l), ELEM(b[l * bs], l), e, ftz);
        o = fma_x86(ELEM(a[l + 1], l + 1), l + 1 < k ? ELEM(b[(l + 1) * bs], l + 1) : 0.0f, o, ftz);
      }
      d = fma_x86(d, 1.0f, fma_x86(e, 1.0f, o, ftz), ftz);
      continue;
    }
    for (int p = p0; p < p0 + pn; p++) {
      const int l = 2 * p, first = m->p.pair_order == MPE_TC_PAIR_ODD_FIRST;
      for (int z = 0; z < 2; z++) {
        const int q = l + (first ? 1 - z : z);
        d = fma_x86(ELEM(a[q], q), q < k ? ELEM(b[q * bs], q) : 0.0f, d, ftz);
      }
    }
  }
#undef ELEM
  return d;
}

/* ------------------------------------------------------------------ the hardware path */

/* The instruction a model asks the hardware for: its instr, for a built-in CPU
   row only (a custom model may describe what no instruction computes). */
static int hw_instr(const struct mpe_tc_model *m)
{
  if (!m || m->custom || m->p.instr < MPE_TC_X86_VDPBF16PS || m->p.instr > MPE_TC_X86_VPDPBUSDS)
    return 0;
  return m->p.instr;
}

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#include <pthread.h>
#ifdef __linux__
#include <sys/syscall.h>
#include <unistd.h>
#endif

static pthread_once_t amx_once = PTHREAD_ONCE_INIT;
static int amx_granted;

/* Linux lets a process use the tile data only after it asks; asked once, on
   the first use of an AMX model (the request grows what a signal frame needs) */
static void amx_request(void)
{
#ifdef __linux__
  amx_granted = (mpei_cpu_features() & MPEI_CPU_AMX_TILE) &&
                syscall(SYS_arch_prctl, 0x1023 /* ARCH_REQ_XCOMP_PERM */, 18 /* XFEATURE_XTILEDATA */) == 0;
#endif
}

static int hw_has(int instr)
{
  const unsigned f = mpei_cpu_features();
  unsigned need;
  switch (instr) {
  case MPE_TC_X86_VDPBF16PS: return (f & MPEI_CPU_AVX512BF16) != 0;
  case MPE_TC_X86_TDPBF16PS: need = MPEI_CPU_AMX_BF16; break;
  case MPE_TC_X86_TDPFP16PS: need = MPEI_CPU_AMX_FP16; break;
  case MPE_TC_X86_TDPBSSD: need = MPEI_CPU_AMX_INT8; break;
  default: return 0;
  }
  if (!(f & need))
    return 0;
  pthread_once(&amx_once, amx_request);
  return amx_granted;
}

/* VPDPBUSD(S): the EVEX form where the model is "avx512-vnni*", the VEX form for "avx-vnni*" */
static int hw_vnni(const struct mpe_tc_model *m)
{
  return (mpei_cpu_features() & (strncmp(m->name, "avx-vnni", 8) == 0 ? MPEI_CPU_AVXVNNI : MPEI_CPU_AVX512VNNI)) != 0;
}

/* Packed operands. Floating point: A as rows of KP/2 dwords (the pair (2q, 2q+1)
   of row i at ap[i*KP/2 + q], even element in the low half), B as KP/2 rows of N
   dwords (pair q of column j at bp[q*ldbp + j]). Integers: the same with
   quadruples of bytes (k = 4q .. 4q+3). Padding is +0. */
static uint16_t bits16(const struct mpe_tc_model *m, const mpei_tc_opnd *x, long idx)
{
  if (x->t == m->p.in)
    return ((const uint16_t *)x->p)[idx];
  const double v = mpei_tc_load(m, x->p, x->t, (size_t)idx);   /* binary32: the model's input rule */
  if (m->p.in == MPE_FP16)
    return mpei_tc_h_bits(v);
  return isnan(v) ? 0x7fc0 : (uint16_t)(mpei_f2u((float)v) >> 16);
}

/* element idx of x as the instruction reads it: 16 bits (floating point) or a byte */
static uint32_t elem_bits(const struct mpe_tc_model *m, const mpei_tc_opnd *x, long idx, int per)
{
  return per == 2 ? bits16(m, x, idx) : ((const uint8_t *)x->p)[idx];
}

/* per: elements a dword (2 floating point, 4 integer), each 32/per bits wide */
static void pack(const struct mpe_tc_model *m, const mpei_tc_opnd *a, const mpei_tc_opnd *b, int M, int N, int K,
                 int KQ, int ldbp, int per, uint32_t *ap, uint32_t *bp)
{
  const int w = 32 / per;
  for (int i = 0; i < M; i++)
    for (int q = 0; q < KQ; q++) {
      uint32_t d = 0;
      for (int z = 0; z < per && per * q + z < K; z++)
        d |= elem_bits(m, a, (long)i * a->rs + (long)(per * q + z) * a->cs, per) << (w * z);
      ap[(size_t)i * KQ + q] = d;
    }
  for (int q = 0; q < KQ; q++)
    for (int j = 0; j < ldbp; j++) {
      uint32_t d = 0;
      for (int z = 0; z < per && per * q + z < K && j < N; z++)
        d |= elem_bits(m, b, (long)(per * q + z) * b->rs + (long)j * b->cs, per) << (w * z);
      bp[(size_t)q * ldbp + j] = d;
    }
}

/* ---- AVX-512 and AVX-VNNI: one row of 16 (8) outputs at a time, one
   instruction per pair (quadruple) of k, in ascending k, the accumulators
   starting from acc. The row kernels carry the target attributes; the OpenMP
   loop that calls them does not (an outlined parallel region would not inherit
   them under clang). */
typedef void (*row_fn)(const uint32_t *ap, const uint32_t *bp, int i, int N, int KQ, int ldbp, int sat, void *acc);

__attribute__((target("avx512f,avx512bf16"))) static void row_vdpbf16ps(const uint32_t *ap, const uint32_t *bp, int i,
                                                                        int N, int KQ, int ldbp, int sat, void *out)
{
  float *acc = out;
  (void)sat;
  for (int j0 = 0; j0 < N; j0 += 16) {
    const __mmask16 mk = N - j0 >= 16 ? (__mmask16)0xffff : (__mmask16)((1u << (N - j0)) - 1);
    __m512 c = _mm512_maskz_loadu_ps(mk, acc + (size_t)i * N + j0);
    for (int q = 0; q < KQ; q++) {
      const __m512i av = _mm512_set1_epi32((int)ap[(size_t)i * KQ + q]);
      const __m512i bv = _mm512_loadu_si512((const void *)(bp + (size_t)q * ldbp + j0));
      c = _mm512_dpbf16_ps(c, (__m512bh)av, (__m512bh)bv);
    }
    _mm512_mask_storeu_ps(acc + (size_t)i * N + j0, mk, c);
  }
}

__attribute__((target("avx512f,avx512vnni"))) static void row_vnni512(const uint32_t *ap, const uint32_t *bp, int i,
                                                                      int N, int KQ, int ldbp, int sat, void *out)
{
  int32_t *acc = out;
  for (int j0 = 0; j0 < N; j0 += 16) {
    const __mmask16 mk = N - j0 >= 16 ? (__mmask16)0xffff : (__mmask16)((1u << (N - j0)) - 1);
    __m512i c = _mm512_maskz_loadu_epi32(mk, acc + (size_t)i * N + j0);
    for (int q = 0; q < KQ; q++) {
      const __m512i av = _mm512_set1_epi32((int)ap[(size_t)i * KQ + q]);
      const __m512i bv = _mm512_loadu_si512((const void *)(bp + (size_t)q * ldbp + j0));
      c = sat ? _mm512_dpbusds_epi32(c, av, bv) : _mm512_dpbusd_epi32(c, av, bv);
    }
    _mm512_mask_storeu_epi32(acc + (size_t)i * N + j0, mk, c);
  }
}

__attribute__((target("avx2,avxvnni"))) static void row_avxvnni(const uint32_t *ap, const uint32_t *bp, int i, int N,
                                                                int KQ, int ldbp, int sat, void *out)
{
  int32_t *acc = out;
  for (int j0 = 0; j0 < N; j0 += 8) {
    int32_t cb[8] = { 0 };
    const int nj = N - j0 < 8 ? N - j0 : 8;
    memcpy(cb, acc + (size_t)i * N + j0, sizeof(int32_t) * (size_t)nj);
    __m256i c = _mm256_loadu_si256((const __m256i *)cb);
    for (int q = 0; q < KQ; q++) {
      const __m256i av = _mm256_set1_epi32((int)ap[(size_t)i * KQ + q]);
      const __m256i bv = _mm256_loadu_si256((const __m256i *)(bp + (size_t)q * ldbp + j0));
      c = sat ? _mm256_dpbusds_avx_epi32(c, av, bv) : _mm256_dpbusd_avx_epi32(c, av, bv);
    }
    _mm256_storeu_si256((__m256i *)cb, c);
    memcpy(acc + (size_t)i * N + j0, cb, sizeof(int32_t) * (size_t)nj);
  }
}

static void run_rows(row_fn f, const uint32_t *ap, const uint32_t *bp, int M, int N, int KQ, int ldbp, int sat,
                     void *acc)
{
#pragma omp parallel for schedule(static) if ((long)M * N * KQ > 200000)
  for (int i = 0; i < M; i++)
    f(ap, bp, i, N, KQ, ldbp, sat, acc);
}

/* ---- AMX: tiles of up to 16 rows of 64 bytes. tmm0 holds C (16 × 16
   binary32 or int32), tmm1 A (16 rows × up to 16 dwords of K), tmm2 B (up to
   16 rows of dwords × 16 columns). Each K chunk of up to 16 dwords is one
   instruction; the last chunk holds only the dwords K needs. */
typedef struct {
  uint8_t palette, start_row, rsvd[14];
  uint16_t colsb[16];
  uint8_t rows[16];
} amx_cfg;

__attribute__((target("amx-tile"))) static void amx_config(int mr, int nc, int kq)
{
  amx_cfg cfg;
  memset(&cfg, 0, sizeof cfg);
  cfg.palette = 1;
  cfg.rows[0] = (uint8_t)mr; cfg.colsb[0] = (uint16_t)(nc * 4);
  cfg.rows[1] = (uint8_t)mr; cfg.colsb[1] = (uint16_t)(kq * 4);
  cfg.rows[2] = (uint8_t)kq; cfg.colsb[2] = (uint16_t)(nc * 4);
  _tile_loadconfig(&cfg);
}

/* one instruction tmm0 += tmm1 · tmm2 of the model's kind */
__attribute__((target("amx-tile,amx-bf16,amx-int8"))) static void amx_dp(int instr, int sa, int sb)
{
  switch (instr) {
  case MPE_TC_X86_TDPBF16PS: _tile_dpbf16ps(0, 1, 2); break;
  case MPE_TC_X86_TDPFP16PS:
    __asm__ volatile(".byte 0xc4, 0xe2, 0x6b, 0x5c, 0xc1" ::: "memory");   /* tdpfp16ps %tmm2, %tmm1, %tmm0 */
    break;
  default:
    if (sa && sb)
      _tile_dpbssd(0, 1, 2);
    else if (sa)
      _tile_dpbsud(0, 1, 2);
    else if (sb)
      _tile_dpbusd(0, 1, 2);
    else
      _tile_dpbuud(0, 1, 2);
    break;
  }
}

/* acc (M × N, 32-bit elements) += A·B on the tiles, K chained in ascending k */
__attribute__((target("amx-tile,amx-bf16,amx-int8"))) static void run_amx(int instr, int sa, int sb,
                                                                         const uint32_t *ap, const uint32_t *bp,
                                                                         int M, int N, int KQ, int ldbp, void *acc)
{
  uint32_t *out = acc;
  for (int i0 = 0; i0 < M; i0 += 16)
    for (int j0 = 0; j0 < N; j0 += 16) {
      const int mr = M - i0 < 16 ? M - i0 : 16, nc = N - j0 < 16 ? N - j0 : 16;
      int shape = -1;
      for (int q0 = 0; q0 < KQ; q0 += 16) {
        const int kq = KQ - q0 < 16 ? KQ - q0 : 16;
        if (kq != shape) {
          /* a new shape: the configuration zeroes the tiles, so C goes back in */
          if (shape >= 0)
            _tile_stored(0, out + (size_t)i0 * N + j0, (long)N * 4);
          amx_config(mr, nc, kq);
          _tile_loadd(0, out + (size_t)i0 * N + j0, (long)N * 4);
          shape = kq;
        }
        _tile_loadd(1, ap + (size_t)i0 * KQ + q0, (long)KQ * 4);
        _tile_loadd(2, bp + (size_t)q0 * ldbp + j0, (long)ldbp * 4);
        amx_dp(instr, sa, sb);
      }
      if (shape >= 0)
        _tile_stored(0, out + (size_t)i0 * N + j0, (long)N * 4);
    }
  _tile_release();
}

/* The product on the hardware: acc (M × N) holds C on entry and D on return. */
static int hw_run(const struct mpe_tc_model *m, int M, int N, int K, const mpei_tc_opnd *a, const mpei_tc_opnd *b,
                  void *acc)
{
  const int instr = hw_instr(m), is_int = mpei_type_is_int(m->p.in);
  if (K == 0)
    return MPE_OK;
  const int per = is_int ? 4 : 2, KQ = (K + per - 1) / per;
  const int ldbp = (N + 15) / 16 * 16;   /* whole vectors of B */
  uint32_t *ap = malloc(sizeof(uint32_t) * (size_t)M * KQ + 64);
  uint32_t *bp = malloc(sizeof(uint32_t) * (size_t)KQ * ldbp + 64);
  if (!ap || !bp) {
    free(ap);
    free(bp);
    return MPE_ENOMEM;
  }
  pack(m, a, b, M, N, K, KQ, ldbp, per, ap, bp);
  switch (instr) {
  case MPE_TC_X86_VDPBF16PS: run_rows(row_vdpbf16ps, ap, bp, M, N, KQ, ldbp, 0, acc); break;
  case MPE_TC_X86_VPDPBUSD: case MPE_TC_X86_VPDPBUSDS:
    run_rows(strncmp(m->name, "avx-vnni", 8) == 0 ? row_avxvnni : row_vnni512, ap, bp, M, N, KQ, ldbp,
             instr == MPE_TC_X86_VPDPBUSDS, acc);
    break;
  default:
    run_amx(instr, a->t == MPE_INT8, b->t == MPE_INT8, ap, bp, M, N, KQ, ldbp, acc);
    break;
  }
  free(ap);
  free(bp);
  return MPE_OK;
}

/* the model's instruction exists here (MPE_OK), or MPE_EUNSUP */
static int hw_ok(const struct mpe_tc_model *m)
{
  const int instr = hw_instr(m);
  if (!instr)
    return MPE_EUNSUP;
  if (instr == MPE_TC_X86_VPDPBUSD || instr == MPE_TC_X86_VPDPBUSDS)
    return hw_vnni(m) ? MPE_OK : MPE_EUNSUP;
  return hw_has(instr) ? MPE_OK : MPE_EUNSUP;
}

#else

static int hw_ok(const struct mpe_tc_model *m)
{
  (void)m;
  return MPE_EUNSUP;
}

static int hw_run(const struct mpe_tc_model *m, int M, int N, int K, const mpei_tc_opnd *a, const mpei_tc_opnd *b,
                  void *acc)
{
  (void)m; (void)M; (void)N; (void)K; (void)a; (void)b; (void)acc;
  return MPE_EUNSUP;
}

#endif

/* the operand types the instruction takes: VPDPBUSD u8 A and s8 B; the AMX
   integer forms any of s8 and u8 each; the floating-point ones the model's
   input type or binary32 (converted with the model's input rule) */
static int hw_types_ok(const struct mpe_tc_model *m, mpe_type at, mpe_type bt)
{
  if (m->p.instr == MPE_TC_X86_VPDPBUSD || m->p.instr == MPE_TC_X86_VPDPBUSDS)
    return at == MPE_UINT8 && bt == MPE_INT8;
  if (m->p.instr == MPE_TC_X86_TDPBSSD)
    return (at == MPE_INT8 || at == MPE_UINT8) && (bt == MPE_INT8 || bt == MPE_UINT8);
  return 1;
}

int mpe_cpu_mma(const mpe_tc_model *model, int m, int n, int k, const void *A, mpe_type atype, int lda,
                const void *B, mpe_type btype, int ldb, const void *C, int ldc, void *D, mpe_type dtype, int ldd)
{
  MPEI_FENV_GUARD();
  if (!model)
    return MPE_EINVAL;
  const int is_int = mpei_type_is_int(model->p.in);
  int r = is_int ? mpei_tc_int_mma_check(model->p.in, m, n, k, A, atype, lda, B, btype, ldb, C, ldc, D, dtype, ldd)
                 : mpei_tc_mma_check(model->p.in, m, n, k, A, atype, lda, B, btype, ldb, C, ldc, D, dtype, ldd);
  if (r)
    return r;
  if ((r = hw_ok(model)) != MPE_OK)
    return r;
  if (dtype != (is_int ? MPE_INT32 : MPE_FP32) || !hw_types_ok(model, atype, btype))
    return MPE_EUNSUP;
  return mpei_tc_mma_acc(model, hw_run, m, n, k, A, atype, lda, B, btype, ldb, C, ldc, D, ldd, sizeof(uint32_t));
}

int mpe_cpu_gemm(const mpe_tc_model *model, mpe_layout layout, mpe_trans ta, mpe_trans tb, int m, int n, int k,
                 float alpha, const void *A, mpe_type atype, int lda, const void *B, mpe_type btype, int ldb,
                 float beta, void *C, mpe_type ctype, int ldc)
{
  MPEI_FENV_GUARD();
  if (!model)
    return MPE_EINVAL;
  const int is_int = mpei_type_is_int(model->p.in);
  mpei_tc_call cl;
  int32_t ia = 0, ib = 0;
  int r = is_int ? mpei_tc_int_gemm_check(model->p.in, layout, ta, tb, m, n, k, alpha, A, atype, lda, B, btype, ldb,
                                          beta, C, ctype, ldc, &ia, &ib, &cl)
                 : mpei_tc_gemm_check(model->p.in, layout, ta, tb, m, n, k, alpha, A, atype, lda, B, btype, ldb, C,
                                      ctype, ldc, &cl);
  if (r)
    return r;
  if ((r = hw_ok(model)) != MPE_OK)
    return r;
  /* the operands of the row-major problem C^T = op(B)^T op(A)^T of a
     column-major call have their roles swapped: the instruction gets them back
     in their own roles (VPDPBUSD's u8 A), and the result is transposed */
  const int swap = !hw_types_ok(model, cl.a.t, cl.b.t);
  if (ctype != (is_int ? MPE_INT32 : MPE_FP32) || (swap && !hw_types_ok(model, cl.b.t, cl.a.t)))
    return MPE_EUNSUP;
  if (m == 0 || n == 0)
    return MPE_OK;
  const int M = cl.M, N = cl.N;
  /* the accumulator starts at +0; with swap, a second one for the transposed product */
  uint32_t *acc = calloc((size_t)M * N * (swap ? 2 : 1), sizeof(uint32_t));
  if (!acc)
    return MPE_ENOMEM;
  if (cl.use_ab && !swap)
    r = hw_run(model, M, N, k, &cl.a, &cl.b, acc);
  if (cl.use_ab && swap) {
    const mpei_tc_opnd a2 = { cl.b.p, cl.b.t, cl.b.cs, cl.b.rs, NULL }, b2 = { cl.a.p, cl.a.t, cl.a.cs, cl.a.rs, NULL };
    uint32_t *t = acc + (size_t)M * N;
    r = hw_run(model, N, M, k, &a2, &b2, t);
    for (int i = 0; i < M; i++)
      for (int j = 0; j < N; j++)
        acc[(size_t)i * N + j] = t[(size_t)j * M + i];
  }
  if (r == MPE_OK) {
    if (is_int) {
      mpei_tc_int_epilogue_strided((const int32_t *)acc, M, N, ia, ib, cl.use_ab, model->p.satfinite, C, ldc, 1);
    } else {
      float *f = (float *)acc;
      for (size_t t = 0; t < (size_t)M * N; t++)
        if (isnan(f[t]))
          f[t] = mpei_u2f(0x7fffffffu);   /* the library's NaN, as mpe_gemm gives it */
      mpei_tc_epilogue_strided(f, M, N, alpha, beta, cl.use_ab, C, ctype, ldc, 1);
    }
  }
  free(acc);
  return r;
}
