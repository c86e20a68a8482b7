/* The fast path of mpe_mma / mpe_gemm: operands are decoded once into packed
   panels (binary32 value and exponent per element), the output is cut into
   tiles run in parallel, K into chunks of whole blocks, and each tile calls the
   kernels of the SIMD level's table (emu/isa.c, built from tc_kernel.h). Every output is computed by one kernel
   call sequence with the same arithmetic whatever the thread count or the
   vector width, so the results do not depend on either. Outputs whose row of
   A, column of B or initial accumulator holds an inf or NaN are recomputed by
   the portable engine afterwards. Returns MPE_EUNSUP when the case is not
   covered (the caller then runs the portable engine). */
#include "config.h"
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "mpemu/convert.h"
#include "tc_pack.h"
#include "mpei_round_core.h"
#include "isa.h"
#include "tc_drive.h"

int mpei_tc_run_fast(const struct mpe_tc_model *m, int M, int N, int K, const mpei_tc_opnd *a,
                     const mpei_tc_opnd *b, const mpei_tc_opnd *c, int out16, float *acc);
int mpei_tc_run_fast_epi(const struct mpe_tc_model *m, int M, int N, int K, const mpei_tc_opnd *a,
                         const mpei_tc_opnd *b, float alpha, float beta, float *C, int ldc, int c_apart);

enum { KC = 256, MC_PANELS = 8, NC_PANELS = 8, MC_PANELS_F = 24, NC_PANELS_F = 16, EXP_LO = -48, EXP_HI = 62 };

/* Fast operand decoding: the exact input-format value as binary32 bits. */
typedef struct {
  const struct mpe_tc_model *m;
  const struct mpe_format *f;
  float fp8[256];
  uint32_t maxbits;     /* largest finite of the input format, binary32 bits */
  int drop;             /* 24 - p */
} decoder;

static void decoder_init(decoder *d, const struct mpe_tc_model *m, mpe_type t)
{
  d->m = m;
  /* a packed FP8 operand in its own format (a mixed call), binary32 ones to `in` */
  d->f = (const struct mpe_format *)mpe_format_of(mpei_type_fp8(t) ? t : m->p.in);
  d->maxbits = mpei_f2u((float)d->f->maxv);
  d->drop = 24 - d->f->p;
  if (mpei_type_fp8(t))
    for (int i = 0; i < 256; i++)
      d->fp8[i] = (float)mpei_decode((uint32_t)i, d->f);
}

static inline float decode_one(const decoder *d, const void *base, mpe_type t, size_t idx)
{
  switch (t) {
  case MPE_FP16: {
    uint32_t h = ((const uint16_t *)base)[idx];
    uint32_t sg = (h & 0x8000u) << 16, e = (h >> 10) & 0x1f, mt = h & 0x3ff;
    if (e == 0)
      return mpei_u2f(sg) + (sg ? -1.0f : 1.0f) * (float)mt * 0x1p-24f;
    if (e == 31)
      return mpei_u2f(sg | 0x7f800000u | (mt << 13) | (mt ? 0x400000u : 0));
    return mpei_u2f(sg | ((e + 112) << 23) | (mt << 13));
  }
  case MPE_BF16:
    return mpei_u2f((uint32_t)((const uint16_t *)base)[idx] << 16);
  case MPE_E4M3: case MPE_E5M2: case MPE_E4M3FNUZ: case MPE_E5M2FNUZ:
    return d->fp8[((const uint8_t *)base)[idx]];
  default: {
    float x = ((const float *)base)[idx];
    uint32_t u = mpei_f2u(x), a = u & 0x7fffffffu;
    int e = (int)(a >> 23) - 127;
    if (a < 0x7f800000u && e >= d->f->emin && e <= d->f->emax && d->drop > 0) {
      const uint32_t dd = (uint32_t)d->drop, one = 1u << dd, low = one - 1, half = one >> 1;
      const uint32_t tr = a & ~low, rem = a & low;
      uint32_t r;
      switch (d->m->p.input_round) {   /* the rounding core's carry form, on the magnitude */
      case MPE_RNE: r = MPEI_ROUND_CARRY(MPEI_RC_RNE, uint32_t, a, dd, one, low, half, tr, rem, 0, 0, 0); break;
      case MPE_RNA: r = MPEI_ROUND_CARRY(MPEI_RC_RNA, uint32_t, a, dd, one, low, half, tr, rem, 0, 0, 0); break;
      default: r = MPEI_ROUND_CARRY(MPEI_RC_RZ, uint32_t, a, dd, one, low, half, tr, rem, 0, 0, 0); break;
      }
      if (r <= d->maxbits)
        return mpei_u2f((u & 0x80000000u) | r);
    }
    return (float)mpei_tc_load(d->m, base, t, idx);
  }
  }
}

/* One panel of `w` rows (the operand type t a constant after inlining). */
static inline __attribute__((always_inline)) int pack_panel(const decoder *d, const mpei_tc_opnd *x,
                                                           mpe_type t, int transpose, int rows, int K,
                                                           int Kp, int w, int p, int pin, int sl,
                                                           mpei_tc_panels *pk, unsigned char *bad)
{
  int unsafe = 0;
  for (int l = 0; l < Kp; l++) {
    /* l's place: with split, the layout of pack below */
    const int pl = sl ? l / sl * sl + (l % sl % 4 < 2 ? 0 : sl / 2) + l % sl / 4 * 2 + l % 2 : l;
    for (int r = 0; r < w; r++) {
      int i = p * w + r;
      size_t o = ((size_t)p * Kp + pl) * w + r;
      float v = 0.0f;
      if (i < rows && l < K) {
        long idx = transpose ? (long)l * x->rs + (long)i * x->cs : (long)i * x->rs + (long)l * x->cs;
        v = decode_one(d, x->p, t, (size_t)idx);
      }
      if (pk->e) {
        int e = MPEI_TC_ZERO_EXP;
        uint32_t a = mpei_f2u(v) & 0x7fffffffu;
        if (a >= 0x7f800000u) {
          bad[i] = 1;
          v = 0.0f;
        } else if (a != 0) {
          e = (int)(a >> 23) - 127;
          if (e < EXP_LO || e > EXP_HI)
            unsafe = 1;   /* binary32 subnormals land here too */
          if (e < pin)
            e = pin;
        }
        pk->e[o] = e;
      }
      pk->v[o] = v;
    }
  }
  return unsafe;
}

/* The vector packer for binary16 and bfloat16 operands stored with a unit
   stride along the panel's rows (sr) or along K (sl): the same values and
   exponents as pack_panel, decoded VW at a time and the exponents computed by
   the SIMD kernel. Returns pack_panel's answer, or -1 when the panel holds an
   inf or NaN (pack_panel then redoes it and marks them). */
static int pack_panel_vec(const mpei_isa_kernels *isa, const mpei_tc_opnd *x, int transpose, int rows,
                          int K, int Kp, int w, int p, int pin, mpei_tc_panels *pk)
{
  enum { LC = 64 };
  const long sr = transpose ? x->cs : x->rs, sl = transpose ? x->rs : x->cs;
  const int bf = x->t == MPE_BF16, r0 = p * w, nr = rows - r0 < w ? rows - r0 : w;
  const uint16_t *base = x->p;
  float *v = pk->v + (size_t)p * Kp * w;
  if (sr == 1) {
    for (int l = 0; l < K; l++) {
      isa->tc_dec16(base + (long)l * sl + r0, bf, v + (size_t)l * w, nr);
      for (int r = nr; r < w; r++)
        v[(size_t)l * w + r] = 0.0f;
    }
  } else {
    /* sl == 1: LC values of each row decoded, then interleaved into the panel */
    float tmp[32 * LC];
    for (int l0 = 0; l0 < K; l0 += LC) {
      const int nl = K - l0 < LC ? K - l0 : LC;
      for (int r = 0; r < nr; r++)
        isa->tc_dec16(base + (long)(r0 + r) * sr + l0, bf, tmp + r * LC, nl);
      for (int l = 0; l < nl; l++) {
        float *o = v + (size_t)(l0 + l) * w;
        for (int r = 0; r < nr; r++)
          o[r] = tmp[r * LC + l];
        for (int r = nr; r < w; r++)
          o[r] = 0.0f;
      }
    }
  }
  memset(v + (size_t)K * w, 0, sizeof(float) * (size_t)(Kp - K) * w);
  if (!pk->e)
    return 0;
  const int f = isa->tc_pack_exp(v, pk->e + (size_t)p * Kp * w, (size_t)Kp * w, pin, EXP_LO, EXP_HI);
  return f & 2 ? -1 : f & 1;
}

/* mpei_tc_pack (tc_pack.h); with split = L (fp16_split, binary16 output of
   an FP8 model; Kp a multiple of L), each block of L holds first the elements
   with l mod 4 in {0, 1}, then the others, each half in order, and the
   exponents are at least binary16's emin (the FP8 values read as the binary16
   values they are). */
static int pack(const struct mpe_tc_model *m, const mpei_tc_opnd *x, int transpose, int rows, int K, int Kp,
                int w, int split, mpei_tc_panels *pk, unsigned char *bad)
{
  if (x->sc)   /* block-scaled operands: tc_scaled.c */
    return mpei_tc_pack_scaled(x, transpose, rows, K, Kp, w, pk->v, pk->e, bad, EXP_LO, EXP_HI);
  const mpe_type pt = split ? MPE_FP16 : mpei_type_fp8(x->t) ? x->t : m->p.in;
  const int pin = ((const struct mpe_format *)mpe_format_of(pt))->emin;
  int npan = (rows + w - 1) / w, unsafe = 0;
  decoder d;
  decoder_init(&d, m, x->t);
  const mpe_type t = x->t;
  const mpei_isa_kernels *isa = mpei_isa();
  const long sr = transpose ? x->cs : x->rs, sl = transpose ? x->rs : x->cs;
  const int vec = (t == MPE_FP16 || t == MPE_BF16) && isa->tc_dec16 && w <= 32 && (sr == 1 || sl == 1) && !split;
  const int par = (long)rows * K > 65536, nthr = par ? mpei_gemm_threads() : 1;
#pragma omp parallel for schedule(static) reduction(|: unsafe) if (par) num_threads(nthr)
  for (int p = 0; p < npan; p++) {
    MPEI_FENV_GUARD();   /* a worker of the team: the library's environment (mpemu(3)) */
    if (vec) {
      int u = pack_panel_vec(isa, x, transpose, rows, K, Kp, w, p, pin, pk);
      if (u >= 0) {
        unsafe |= u;
        continue;
      }
    }
    switch (t) {
    case MPE_FP16: unsafe |= pack_panel(&d, x, MPE_FP16, transpose, rows, K, Kp, w, p, pin, split, pk, bad); break;
    case MPE_BF16: unsafe |= pack_panel(&d, x, MPE_BF16, transpose, rows, K, Kp, w, p, pin, split, pk, bad); break;
    case MPE_E4M3: case MPE_E5M2: case MPE_E4M3FNUZ: case MPE_E5M2FNUZ:
      unsafe |= pack_panel(&d, x, MPE_E4M3, transpose, rows, K, Kp, w, p, pin, split, pk, bad);
      break;
    default: unsafe |= pack_panel(&d, x, MPE_FP32, transpose, rows, K, Kp, w, p, pin, split, pk, bad); break;
    }
  }
  return unsafe;
}

int mpei_tc_pack(const struct mpe_tc_model *m, const mpei_tc_opnd *x, int transpose, int rows, int K,
                int Kp, int w, mpei_tc_panels *pk, unsigned char *bad)
{
  return pack(m, x, transpose, rows, K, Kp, w, 0, pk, bad);
}

void mpei_tc_finish(float *acc, size_t n, int fma, int out16)
{
  /* fma-chain: binary16 output is one rounding of the binary32 chain */
  if (fma && out16) {
    const struct mpe_format *f16 = (const struct mpe_format *)mpe_format_of(MPE_FP16);
    for (size_t t = 0; t < n; t++) {
      unsigned fl = 0;   /* the sticky flags are not touched */
      acc[t] = (float)mpei_round_ref(acc[t], 0, f16, MPE_RNE, 0, 0, 0, &fl);
    }
  }
  for (size_t t = 0; t < n; t++)
    if (isnan(acc[t]))
      acc[t] = mpei_u2f(0x7fffffffu);
}

/* One call of the dense driver: the model, the operands and their panels. */
typedef struct {
  const struct mpe_tc_model *m;
  const mpei_tc_opnd *a, *b, *c;   /* c: the initial accumulators, or NULL */
  int K, Kp, mr, vw, kcb, fma, out16;
  mpei_tc_panels pa, pb;
  mpei_tc_blk_fn blk;
  mpei_tc_fma_fn fmak;
  mpei_tc_kp kp;   /* a whole chunk's block-kernel parameters */
} dense_call;

/* element (i, j) of the initial accumulators, 0 without */
static float c_at(const mpei_tc_opnd *c, int i, int j)
{
  if (!c || !c->p)
    return 0.0f;
  size_t idx = (size_t)((long)i * c->rs + (long)j * c->cs);
  return c->t == MPE_FP16 ? mpe_fp16_to_fp32(((const uint16_t *)c->p)[idx]) : ((const float *)c->p)[idx];
}

/* the driver's kernel (tc_drive.h): tile (ip, jp), k-steps [k0, k0 + kn) */
static void dense_tile(const void *ctx, int ip, int jp, int k0, int kn, void *c, long ldc)
{
  const dense_call *d = ctx;
  const size_t ao = ((size_t)ip * d->Kp + k0) * d->mr, bo = ((size_t)jp * d->Kp + k0) * d->vw;
  if (d->fma) {
    d->fmak(d->pa.v + ao, d->pb.v + bo, c, ldc, kn);
    return;
  }
  mpei_tc_kp kp = d->kp;
  kp.nblk = kn / kp.L;
  d->blk(d->pa.v + ao, d->pa.e + ao, d->pb.v + bo, d->pb.e + bo, c, ldc, &kp);
}

/* Output (i, j) by the portable engine (the fix-up of outputs touched by
   inf/NaN); scratch: room for 2K + 2 doubles. */
static float dense_fix(const void *ctx, int i, int j, void *scratch)
{
  const dense_call *d = ctx;
  const mpei_tc_opnd *a = d->a, *b = d->b;
  const int K = d->K;
  const double cv = c_at(d->c, i, j);
  if (a->sc)
    return mpei_tc_f_canon(mpei_tc_dot_scaled(d->m, a, b, i, j, K, cv));
  double *ra = scratch, *cb = ra + K + 1;
  for (int l = 0; l < K; l++) {
    ra[l] = mpei_tc_load(d->m, a->p, a->t, (size_t)((long)i * a->rs + (long)l * a->cs));
    cb[l] = mpei_tc_load(d->m, b->p, b->t, (size_t)((long)l * b->rs + (long)j * b->cs));
  }
  return mpei_tc_f_canon(mpei_tc_dot(d->m, ra, cb, 1, K, cv, d->out16));
}

/* an initial accumulator that is inf or NaN: the portable engine too */
static int dense_cbad(const void *ctx, int i, int j)
{
  return !isfinite(c_at(((const dense_call *)ctx)->c, i, j));
}

int16_t *mpei_tc_exp16(const mpei_tc_panels *pa, size_t asz, const mpei_tc_panels *pb, size_t bsz)
{
  int16_t *e16 = malloc(sizeof(int16_t) * (asz + 2 * bsz + 1));
  if (!e16)
    return NULL;
  int16_t *a16 = e16, *b16 = e16 + asz;
  const int nthr = mpei_gemm_threads();
#pragma omp parallel for schedule(static) if (asz > 262144) num_threads(nthr)
  for (size_t i = 0; i < asz; i++)
    a16[i] = (int16_t)(pa->e[i] < MPEI_TC_ZERO_EXP16 ? MPEI_TC_ZERO_EXP16 : pa->e[i]);
#pragma omp parallel for schedule(static) if (bsz > 131072) num_threads(nthr)
  for (size_t i = 0; i < bsz; i++)
    b16[2 * i] = b16[2 * i + 1] = (int16_t)(pb->e[i] < MPEI_TC_ZERO_EXP16 ? MPEI_TC_ZERO_EXP16 : pb->e[i]);
  return e16;
}

/* The output one thread tile at a time (tc_drive.h): with epi, each tile's
   accumulators go through the fix-up and the BLAS epilogue into C as soon as
   the tile's K loop ends, while they are in cache; without, acc holds all
   M × N. */
typedef struct { float alpha, beta; float *C; int ldc, c_apart; } epi_args;

static int run_fast(const struct mpe_tc_model *m, int M, int N, int K, const mpei_tc_opnd *a,
                    const mpei_tc_opnd *b, const mpei_tc_opnd *c, int out16, float *acc, const epi_args *epi)
{
  const mpei_isa_kernels *isa = mpei_isa();   /* the SIMD level's kernels (emu/isa.c) */
  if (!isa->tc_blk || (long)M * N * (K + 1) < 4096)
    return MPE_EUNSUP;
  const int fma = m->p.kind == MPE_TC_FMA_CHAIN;
  if (m->p.kind == MPE_TC_EXACT || m->p.scale_group > 1)   /* groups of products: tc_scaled.c */
    return MPE_EUNSUP;
  /* fp16_split with binary16 output: each instruction of Li products is two
     blocks of the split model (mpei_tc_split_model), run as the kernels'
     pairs on the panels' split layout; c is added after each pair */
  const int split = out16 && !epi && m->p.fp16_split && m->p.kind == MPE_TC_BLOCK;
  struct mpe_tc_model hm;
  if (split)
    mpei_tc_split_model(m, &hm);
  const struct mpe_tc_model *km = split ? &hm : m;   /* the kernels' blocks */
  const mpei_tc_acc path = mpei_tc_acc_of(&km->p);
  if (path == MPEI_TC_ACC_NONE)
    return MPE_EUNSUP;
  const int Li = fma ? 1 : m->p.block, L = fma ? 1 : km->p.block, wide = path == MPEI_TC_ACC_F64;
  /* vw: the columns of a tile (and of a B panel) */
  const int vw = fma ? MPEI_TC_NRF * isa->tc_vw : isa->tc_vw, mr = fma ? isa->tc_mrf : isa->tc_mr;
  const int Kp = (K + Li - 1) / Li * Li;
  const int mp = (M + mr - 1) / mr, np = (N + vw - 1) / vw;
  size_t asz = (size_t)mp * mr * Kp, bsz = (size_t)np * vw * Kp;
  dense_call d = { m, a, b, epi ? NULL : c, K, Kp, mr, vw, 0, fma, epi ? 0 : out16,
                   { malloc(sizeof(float) * (asz ? asz : 1)), NULL }, { malloc(sizeof(float) * (bsz ? bsz : 1)), NULL },
                   wide ? isa->tc_blkw : isa->tc_blk, isa->tc_fma, { 0 } };
  unsigned char *bad = calloc((size_t)mp * mr + (size_t)np * vw, 1);
  if (!fma) {
    d.pa.e = malloc(sizeof(int32_t) * (asz ? asz : 1));
    d.pb.e = malloc(sizeof(int32_t) * (bsz ? bsz : 1));
  }
  int16_t *e16 = NULL;   /* optional: without it, pass 1 in int32 lanes */
  int r = MPE_OK;
  if (!d.pa.v || !d.pb.v || !bad || (!fma && (!d.pa.e || !d.pb.e))) {
    r = MPE_ENOMEM;
    goto out;
  }
  unsigned char *rowbad = bad, *colbad = bad + (size_t)mp * mr;
  const int sl = split ? Li : 0;
  if (pack(m, a, 0, M, K, Kp, mr, sl, &d.pa, rowbad) | pack(m, b, 1, N, K, Kp, vw, sl, &d.pb, colbad)) {
    r = MPE_EUNSUP;
    goto out;
  }
  /* int16 exponents only for L >= 16: with shorter blocks, the unpacking of the
     two rows per block and building these arrays cost what pass 1 saves
     (AVX-512, n = 1024, one thread, CPU time against the int32 pass: h100 FP16
     (L = 16) 0.95-0.97x, a100 (L = 8) 0.99-1.0x, v100 (L = 4) 1.02-1.05x) */
  if (!fma && !wide && path != MPEI_TC_ACC_I32X2 && mr % 2 == 0 && L >= 16)
    e16 = mpei_tc_exp16(&d.pa, asz, &d.pb, bsz);
  /* with epi, a C that shares bytes with A or B is written while the portable
     fix-up below may still read them: only when no output needs one */
  if (epi && !epi->c_apart && !fma && memchr(bad, 1, (size_t)mp * mr + (size_t)np * vw)) {
    r = MPE_EUNSUP;
    goto out;
  }
  for (int i = 0; i < (epi ? 0 : M); i++)   /* initial accumulators: C, or zero */
    for (int j = 0; j < N; j++)
      acc[(size_t)i * N + j] = c_at(c, i, j);
  mpei_tc_out o;
  mpei_tc_out_of(m, d.out16, &o);
  /* a thread tile of mcp × ncp kernel tiles: the fma chain's bigger tiles
     reuse each B panel over more rows of A (the block kernels keep theirs);
     K in chunks of whole blocks */
  const int kcb = fma ? KC : (KC / Li > 0 ? KC / Li : 1) * Li;
  d.kp = (mpei_tc_kp){ L, km->p.align_bits, kcb / L, o.result_bits ? o.result_bits + 1 : 0, o.p, o.emin, o.emax,
                       o.mode, o.zexp, km->p.late_c, o.zero_sign, path == MPEI_TC_ACC_I32X2 ? (L + 1) / 2 : 0,
                       d.pa.e, d.pb.e, e16, e16 ? e16 + asz : NULL, split };
  const mpei_gemm_plan plan = {
    M, N, Kp, kcb, mr, vw, fma ? MC_PANELS_F : MC_PANELS, fma ? NC_PANELS_F : NC_PANELS, 4, (long)M * N * K,
    dense_tile, &d, fma ? NULL : rowbad, colbad, dense_fix, d.c ? dense_cbad : NULL,
    sizeof(double) * ((size_t)K + 1) * 2, epi ? NULL : acc, epi ? isa->tc_epilogue : NULL,
    epi ? epi->alpha : 0.0f, epi ? epi->beta : 0.0f, epi ? epi->C : NULL, epi ? epi->ldc : 0 };
  r = mpei_gemm_run(&plan);
  if (r == MPE_OK && !epi) {
    mpei_tc_finish(acc, (size_t)M * N, fma, out16);
    r = mpei_gemm_fixup(&plan, acc);
  }
out:
  free(d.pa.v); free(d.pa.e); free(d.pb.v); free(d.pb.e); free(bad); free(e16);
  return r;
}

int mpei_tc_run_fast(const struct mpe_tc_model *m, int M, int N, int K, const mpei_tc_opnd *a,
                     const mpei_tc_opnd *b, const mpei_tc_opnd *c, int out16, float *acc)
{
  return run_fast(m, M, N, K, a, b, c, out16, acc, NULL);
}

/* mpe_gemm's binary32 C = alpha * op(A) op(B) + beta * C (row-major, leading
   dimension ldc) with the epilogue done tile by tile. c_apart: C shares no
   byte with A or B; when it may, the operands are packed before C is written
   and the call is refused if an output needs the portable fix-up (which rereads
   them). MPE_EUNSUP (C untouched): no fast kernel for the case. */
int mpei_tc_run_fast_epi(const struct mpe_tc_model *m, int M, int N, int K, const mpei_tc_opnd *a,
                         const mpei_tc_opnd *b, float alpha, float beta, float *C, int ldc, int c_apart)
{
  const epi_args e = { alpha, beta, C, ldc, c_apart };
  if (!mpei_isa()->tc_epilogue)
    return MPE_EUNSUP;
  return run_fast(m, M, N, K, a, b, NULL, 0, NULL, &e);
}
