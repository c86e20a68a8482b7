/* Integer tensor cores: INT8/UINT8/INT4/UINT4 inputs, exact products, int32
   accumulation that wraps modulo 2^32 or saturates per hardware block (PTX
   .satfinite), int32 output. mpe_mma and mpe_gemm hand every call with an
   integer model or type to this file (mpe_tc_int(3)).

   One model row serves every GPU: the block length L is the k of the mma
   instruction. An instruction computes d = c + sum of its L products exactly
   (int8 products are below 2^15, 64 of them below 2^21: no internal overflow
   is possible) and then wraps or clamps d to int32; a K longer than L chains
   instructions in ascending k with d as the next c. Wrap-around makes the
   chain the low 32 bits of the exact sum, whatever L; saturation depends on
   where the partial sums cross the limits, hence on L. */
#include "config.h"
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "isa.h"
#include "mpei_threads.h"
#include "tc_drive.h"
#include "tc_int.h"

static int width_of(mpe_type t)
{
  return t == MPE_INT8 || t == MPE_UINT8 ? 8 : t == MPE_INT4 || t == MPE_UINT4 ? 4 : 0;
}

static int known_type(mpe_type t)
{
  return (unsigned)t <= (unsigned)MPE_INT32;
}

int mpei_tc_int_custom(mpe_tc_model **out, const mpe_tc_params *p)
{
  if (p->kind != MPE_TC_BLOCK && p->kind != MPE_TC_EXACT)
    return MPE_EINVAL;   /* an fma chain has no integer meaning */
  if (p->kind == MPE_TC_BLOCK && (p->block < 1 || p->block > 1024))
    return MPE_EINVAL;
  if (p->satfinite != 0 && p->satfinite != 1)
    return MPE_EINVAL;
  if (p->zero_c_exp != 0 || p->zero_sign != 0 || p->tf32_nan != 0)
    return MPE_EINVAL;   /* floating-point parameters */
  struct mpe_tc_model *m = malloc(sizeof *m);
  if (!m)
    return MPE_ENOMEM;
  m->name = "custom";
  memset(&m->p, 0, sizeof m->p);
  m->p.kind = p->kind;
  m->p.in = p->in;
  m->p.block = p->kind == MPE_TC_BLOCK ? p->block : 0;
  m->p.round_fp32 = m->p.round_fp16 = m->p.input_round = MPE_RNE;
  m->p.satfinite = p->satfinite;
  m->p.instr = p->instr;
  m->custom = 1;
  *out = m;
  return MPE_OK;
}

static inline int32_t clamp32(int64_t v)
{
  return v > INT32_MAX ? INT32_MAX : v < INT32_MIN ? INT32_MIN : (int32_t)v;
}

static inline int32_t wrap32(int64_t v)
{
  return (int32_t)(uint32_t)(uint64_t)v;
}

/* One operand element as an int, and whether it lies in its type's range. */
static inline int load_int(const void *p, mpe_type t, size_t idx)
{
  return t == MPE_INT8 || t == MPE_INT4 ? ((const int8_t *)p)[idx] : ((const uint8_t *)p)[idx];
}

static inline int in_range(int v, mpe_type t)
{
  switch (t) {
  case MPE_INT4: return v >= -8 && v <= 7;
  case MPE_UINT4: return v <= 15;
  default: return 1;
  }
}

/* ------------------------------------------------------------ portable engine */

/* The oracle: one output, d = c + sum_k a[k] b[k], blocks of L in ascending k,
   each block's exact int64 result wrapped or clamped. */
static int32_t dot_ref(const int16_t *a, const int16_t *b, int K, int L, int sat, int32_t c)
{
  int64_t d = c;
  for (int l0 = 0; l0 < K; l0 += L) {
    int n = K - l0 < L ? K - l0 : L;
    int64_t s = 0;
    for (int l = 0; l < n; l++)
      s += (int32_t)a[l0 + l] * b[l0 + l];
    d = sat ? clamp32(d + s) : wrap32(d + s);
  }
  return (int32_t)d;
}

/* L of the model: the block, or all of K for the exact model (where the
   only saturation is at the end). At least 1. */
static int block_len(const struct mpe_tc_model *m, int K)
{
  if (m->p.kind == MPE_TC_EXACT)
    return K > 0 ? K : 1;
  return m->p.block;
}

/* Operand (rows × K, element (i, l) at i*rs + l*cs) decoded to int16, row i
   at out + i*K. MPE_ERANGE for a 4-bit value out of range. */
static int decode_all(const mpei_tc_opnd *x, int rows, int K, int16_t *out)
{
  int bad = 0;
  for (int i = 0; i < rows; i++)
    for (int l = 0; l < K; l++) {
      int v = load_int(x->p, x->t, (size_t)((long)i * x->rs + (long)l * x->cs));
      bad |= !in_range(v, x->t);
      out[(size_t)i * K + l] = (int16_t)v;
    }
  return bad ? MPE_ERANGE : MPE_OK;
}

static int run_portable(const struct mpe_tc_model *m, int M, int N, int K, const mpei_tc_opnd *a,
                        const mpei_tc_opnd *b, int32_t *acc)
{
  int16_t *ad = malloc(sizeof(int16_t) * ((size_t)M * K + (size_t)N * K + 1));
  if (!ad)
    return MPE_ENOMEM;
  int16_t *bt = ad + (size_t)M * K;
  mpei_tc_opnd bT = { b->p, b->t, b->cs, b->rs, NULL };   /* column j of B as row j */
  int r = decode_all(a, M, K, ad);
  if (r == MPE_OK)
    r = decode_all(&bT, N, K, bt);
  if (r == MPE_OK) {
    const int L = block_len(m, K), sat = m->p.satfinite;
    long total = (long)M * N;
#pragma omp parallel for schedule(static) if (total * (long)(K + 1) > 100000) num_threads(mpei_threads_team())
    for (long t = 0; t < total; t++) {
      int i = (int)(t / N), j = (int)(t % N);
      acc[t] = dot_ref(ad + (size_t)i * K, bt + (size_t)j * K, K, L, sat, acc[t]);
    }
  }
  free(ad);
  return r;
}

/* ------------------------------------------------------------ fast path */

enum { KC_PAIRS = 256, MC_PANELS = 8, NC_PANELS = 4 };

/* Pack X (rows × K, element (i, l) at i*rs + l*cs) into panels of w rows:
   panel p, pair kp, row r at (p*KP + kp)*w + r, the two halves holding the
   k-steps kmap[2kp] and kmap[2kp+1] (-1: padding, 0). */
static int pack(const mpei_tc_opnd *x, int rows, int KP, const int *kmap, int w, int32_t *out)
{
  int npan = (rows + w - 1) / w, bad = 0;
  const mpe_type t = x->t;
  const int par = (long)rows * KP > 32768, nthr = par ? mpei_gemm_threads() : 1;
#pragma omp parallel for schedule(static) reduction(|: bad) if (par) num_threads(nthr)
  for (int p = 0; p < npan; p++)
    for (int kp = 0; kp < KP; kp++)
      for (int r = 0; r < w; r++) {
        int i = p * w + r, h[2] = { 0, 0 };
        if (i < rows)
          for (int z = 0; z < 2; z++) {
            int l = kmap[2 * kp + z];
            if (l >= 0) {
              h[z] = load_int(x->p, t, (size_t)((long)i * x->rs + (long)l * x->cs));
              bad |= !in_range(h[z], t);
            }
          }
        out[((size_t)p * KP + kp) * w + r] = (int32_t)((uint32_t)(uint16_t)h[0] | (uint32_t)(uint16_t)h[1] << 16);
      }
  return bad;
}

/* One call of the driver (tc_drive.h): the panels and the kernel. */
typedef struct {
  const int32_t *pa, *pb;
  int KP, segp, mr, nb, sat;
  mpei_tc_int_fn kern;
} int_call;

/* the driver's kernel: tile (ip, jp), segments [s0, s0 + ns) */
static void int_tile(const void *ctx, int ip, int jp, int s0, int ns, void *c, long ldc)
{
  const int_call *d = ctx;
  const size_t k0 = (size_t)s0 * d->segp;
  d->kern(d->pa + ((size_t)ip * d->KP + k0) * d->mr, d->pb + ((size_t)jp * d->KP + k0) * d->nb, c, ldc, ns,
          d->segp, d->sat);
}

static int run_fast(const struct mpe_tc_model *m, int M, int N, int K, const mpei_tc_opnd *a,
                    const mpei_tc_opnd *b, int32_t *acc)
{
  const mpei_isa_kernels *isa = mpei_isa();   /* the SIMD level's kernels (emu/isa.c) */
  const int sat = m->p.satfinite;
  if (!isa->tc_int)
    return MPE_EUNSUP;
  /* segment: one block when saturating (the exact model: all of K, which must
     then fit an int32 lane); anything when wrapping (the sum is modular) */
  int seg = sat ? block_len(m, K) : (K < 2 * KC_PAIRS ? K : 2 * KC_PAIRS);
  if (sat && (double)seg * 65025.0 > 2147483647.0)
    return MPE_EUNSUP;
  if (seg < 1)
    seg = 1;
  const int segp = (seg + 1) / 2, nseg = (K + seg - 1) / seg, KP = nseg * segp;
  const int mr = isa->tc_int_mr, nb = isa->tc_int_nb;
  const int mp = (M + mr - 1) / mr, np = (N + nb - 1) / nb;
  int *kmap = malloc(sizeof(int) * ((size_t)2 * KP + 1));
  int32_t *pa = malloc(sizeof(int32_t) * ((size_t)mp * mr * KP + 1));
  int32_t *pb = malloc(sizeof(int32_t) * ((size_t)np * nb * KP + 1));
  int r = MPE_OK;
  if (!kmap || !pa || !pb) {
    r = MPE_ENOMEM;
    goto out;
  }
  for (int q = 0; q < 2 * KP; q++) {
    int s = q / (2 * segp), off = q % (2 * segp), l = s * seg + off;
    kmap[q] = off < seg && l < K ? l : -1;
  }
  mpei_tc_opnd bT = { b->p, b->t, b->cs, b->rs, NULL };
  if (pack(a, M, KP, kmap, mr, pa) | pack(&bT, N, KP, kmap, nb, pb)) {
    r = MPE_ERANGE;
    goto out;
  }
  const int_call d = { pa, pb, KP, segp, mr, nb, sat, isa->tc_int };
  /* k chunks of whole segments, for the caches */
  const mpei_gemm_plan plan = { M, N, nseg, segp >= KC_PAIRS ? 1 : KC_PAIRS / segp, mr, nb, MC_PANELS, NC_PANELS,
                                sizeof(int32_t), (long)M * N * K, int_tile, &d, .acc = acc };
  r = mpei_gemm_run(&plan);
out:
  free(kmap); free(pa); free(pb);
  return r;
}

/* acc (M×N, row-major) holds the initial accumulators on entry and the
   results on return. */
static int int_run(const struct mpe_tc_model *m, int M, int N, int K, const mpei_tc_opnd *a,
                   const mpei_tc_opnd *b, void *acc)
{
  if (K == 0)
    return MPE_OK;
  int r = run_fast(m, M, N, K, a, b, acc);
  return r != MPE_EUNSUP ? r : run_portable(m, M, N, K, a, b, acc);
}

/* ------------------------------------------------------------ public entries */

/* Types: MPE_EINVAL for values outside the enum, MPE_EUNSUP for well-formed
   combinations this model does not compute (a float model with integer data,
   an integer model with float data, operands of the other width, an output
   other than MPE_INT32). */
static int check_types(mpe_type in, mpe_type at, mpe_type bt, mpe_type ct)
{
  if (!known_type(at) || !known_type(bt) || !known_type(ct))
    return MPE_EINVAL;
  int w = width_of(in);
  if (!w || width_of(at) != w || width_of(bt) != w || ct != MPE_INT32)
    return MPE_EUNSUP;
  return MPE_OK;
}

/* The argument rules of the integer mpe_mma (tc_impl.h). */
int mpei_tc_int_mma_check(mpe_type in, int m, int n, int k, const void *A, mpe_type atype, int lda, const void *B,
                          mpe_type btype, int ldb, const void *C, int ldc, const void *D, mpe_type dtype, int ldd)
{
  if (m < 0 || n < 0 || k < 0 || k > MPEI_TC_K_MAX)
    return MPE_EINVAL;
  int r = check_types(in, atype, btype, dtype);
  return r ? r : mpei_tc_mma_shape_check(m, n, k, A, lda, B, ldb, C, ldc, D, ldd);
}

int mpei_tc_int_mma(const struct mpe_tc_model *model, int m, int n, int k, const void *A, mpe_type atype,
                    int lda, const void *B, mpe_type btype, int ldb, const void *C, int ldc, void *D,
                    mpe_type dtype, int ldd)
{
  if (!model)
    return MPE_EINVAL;
  int r = mpei_tc_int_mma_check(model->p.in, m, n, k, A, atype, lda, B, btype, ldb, C, ldc, D, dtype, ldd);
  if (r)
    return r;
  return mpei_tc_mma_acc(model, int_run, m, n, k, A, atype, lda, B, btype, ldb, C, ldc, D, ldd, sizeof(int32_t));
}

/* alpha, beta: integers in the int32 range (cuBLASLt's CUDA_R_32I scale type). */
static int int_scalar(float x, int32_t *v)
{
  if (isnan(x))
    return MPE_EINVAL;
  if (!(x >= -2147483648.0f && x < 2147483648.0f) || x != truncf(x))
    return MPE_EUNSUP;
  *v = (int32_t)x;
  return MPE_OK;
}

/* alpha*acc + beta*c: int32 arithmetic (wrap-around) or, for a saturating
   model, the exact value clamped. */
static inline int32_t epilogue(int32_t acc, int32_t c, int32_t alpha, int32_t beta, int sat)
{
  if (sat) {
    __int128 v = (__int128)alpha * acc + (__int128)beta * c;
    return v > INT32_MAX ? INT32_MAX : v < INT32_MIN ? INT32_MIN : (int32_t)v;
  }
  return (int32_t)((uint32_t)alpha * (uint32_t)acc + (uint32_t)beta * (uint32_t)c);
}

/* The argument rules of the integer mpe_gemm (tc_impl.h). */
int mpei_tc_int_gemm_check(mpe_type in, mpe_layout layout, mpe_trans ta, mpe_trans tb, int m, int n, int k,
                           float alpha, const void *A, mpe_type atype, int lda, const void *B, mpe_type btype,
                           int ldb, float beta, const void *C, mpe_type ctype, int ldc, int32_t *ia, int32_t *ib,
                           mpei_tc_call *o)
{
  if (m < 0 || n < 0 || k < 0)
    return MPE_EINVAL;
  if (layout != MPE_ROW_MAJOR && layout != MPE_COL_MAJOR)
    return MPE_EINVAL;
  if ((ta != MPE_NO_TRANS && ta != MPE_TRANS) || (tb != MPE_NO_TRANS && tb != MPE_TRANS))
    return MPE_EINVAL;
  int r = check_types(in, atype, btype, ctype);
  if (r)
    return r;
  if ((r = int_scalar(alpha, ia)) != MPE_OK || (r = int_scalar(beta, ib)) != MPE_OK)
    return r;
  const int use_ab = k > 0 && *ia != 0;
  if (mpei_tc_gemm_call(layout, ta, tb, m, n, k, A, atype, lda, B, btype, ldb, C, ldc, use_ab, o))
    return MPE_EINVAL;
  return MPE_OK;
}

/* The integer epilogue (tc_impl.h). */
void mpei_tc_int_epilogue_strided(const int32_t *acc, int M, int N, int32_t ia, int32_t ib, int use_ab, int sat,
                                  int32_t *C, long crs, long ccs)
{
#pragma omp parallel for schedule(static) if ((long)M * N > 65536) num_threads(mpei_threads_team())
  for (int i = 0; i < M; i++) {
    const int32_t *v = acc + (size_t)i * N;
    for (int j = 0; j < N; j++) {
      int32_t *c = C + (long)i * crs + (long)j * ccs;
      *c = epilogue(use_ab ? v[j] : 0, ib != 0 ? *c : 0, use_ab ? ia : 0, ib, sat);
    }
  }
}

int mpei_tc_int_gemm(const struct mpe_tc_model *model, mpe_layout layout, mpe_trans ta, mpe_trans tb,
                     int m, int n, int k, float alpha, const void *A, mpe_type atype, int lda,
                     const void *B, mpe_type btype, int ldb, float beta, void *C, mpe_type ctype, int ldc)
{
  if (!model)
    return MPE_EINVAL;
  int32_t ia, ib;
  mpei_tc_call cl;   /* the shape checks and row-major views of mpe_gemm (tc_mma.c) */
  int r = mpei_tc_int_gemm_check(model->p.in, layout, ta, tb, m, n, k, alpha, A, atype, lda, B, btype, ldb, beta,
                                 C, ctype, ldc, &ia, &ib, &cl);
  if (r)
    return r;
  if (m == 0 || n == 0)
    return MPE_OK;
  const mpei_tc_opnd a = cl.a, b = cl.b;
  const int M = cl.M, N = cl.N, use_ab = cl.use_ab;
  int32_t *acc = calloc((size_t)M * N, sizeof(int32_t));
  if (!acc)
    return MPE_ENOMEM;
  if (use_ab)
    r = int_run(model, M, N, k, &a, &b, acc);
  if (r == MPE_OK)
    mpei_tc_int_epilogue_strided(acc, M, N, ia, ib, use_ab, model->p.satfinite, C, ldc, 1);
  free(acc);
  return r;
}
