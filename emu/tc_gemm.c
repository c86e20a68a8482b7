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
#ifdef _OPENMP
#include <omp.h>
#endif
#include "mpemu/convert.h"
#include "tc_pack.h"
#include "mpei_round_core.h"
#include "isa.h"

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
  d->f = (const struct mpe_format *)mpe_format_of(t == MPE_E4M3 || t == MPE_E5M2 ? t : m->p.in);
  d->maxbits = mpei_f2u((float)d->f->maxv);
  d->drop = 24 - d->f->p;
  if (t == MPE_E4M3 || t == MPE_E5M2)
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
  case MPE_E4M3: case MPE_E5M2:
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
                                                           int Kp, int w, int p, int pin, mpei_tc_panels *pk,
                                                           unsigned char *bad)
{
  int unsafe = 0;
  for (int l = 0; l < Kp; l++)
    for (int r = 0; r < w; r++) {
      int i = p * w + r;
      size_t o = ((size_t)p * Kp + l) * w + r;
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

/* tc_pack.h */
int mpei_tc_pack(const struct mpe_tc_model *m, const mpei_tc_opnd *x, int transpose, int rows, int K,
                int Kp, int w, mpei_tc_panels *pk, unsigned char *bad)
{
  if (x->sc)   /* block-scaled operands: tc_scaled.c */
    return mpei_tc_pack_scaled(x, transpose, rows, K, Kp, w, pk->v, pk->e, bad, EXP_LO, EXP_HI);
  const int pin = ((const struct mpe_format *)mpe_format_of(x->t == MPE_E4M3 || x->t == MPE_E5M2 ? x->t : m->p.in))->emin;
  int npan = (rows + w - 1) / w, unsafe = 0;
  decoder d;
  decoder_init(&d, m, x->t);
  const mpe_type t = x->t;
  const mpei_isa_kernels *isa = mpei_isa();
  const long sr = transpose ? x->cs : x->rs, sl = transpose ? x->rs : x->cs;
  const int vec = (t == MPE_FP16 || t == MPE_BF16) && isa->tc_dec16 && w <= 32 && (sr == 1 || sl == 1);
#pragma omp parallel for schedule(static) reduction(|: unsafe) if ((long)rows * K > 65536)
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
    case MPE_FP16: unsafe |= pack_panel(&d, x, MPE_FP16, transpose, rows, K, Kp, w, p, pin, pk, bad); break;
    case MPE_BF16: unsafe |= pack_panel(&d, x, MPE_BF16, transpose, rows, K, Kp, w, p, pin, pk, bad); break;
    case MPE_E4M3: case MPE_E5M2:
      unsafe |= pack_panel(&d, x, MPE_E4M3, transpose, rows, K, Kp, w, p, pin, pk, bad);
      break;
    default: unsafe |= pack_panel(&d, x, MPE_FP32, transpose, rows, K, Kp, w, p, pin, pk, bad); break;
    }
  }
  return unsafe;
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

float *mpei_tc_tile_get(float *acc, int M, int N, int ip, int jp, int mr, int vw, float *buf, long *ldc)
{
  if ((ip + 1) * mr <= M && (jp + 1) * vw <= N) {
    *ldc = N;
    return acc + (size_t)ip * mr * N + (size_t)jp * vw;   /* the kernel works in place */
  }
  for (int rr = 0; rr < mr; rr++)
    for (int jj = 0; jj < vw; jj++) {
      int i = ip * mr + rr, j = jp * vw + jj;
      buf[rr * vw + jj] = i < M && j < N ? acc[(size_t)i * N + j] : 0.0f;
    }
  *ldc = vw;
  return buf;
}

void mpei_tc_tile_put(float *acc, int M, int N, int ip, int jp, int mr, int vw, const float *buf,
                      const float *tile)
{
  if (tile != buf)
    return;
  for (int rr = 0; rr < mr; rr++)
    for (int jj = 0; jj < vw; jj++) {
      int i = ip * mr + rr, j = jp * vw + jj;
      if (i < M && j < N)
        acc[(size_t)i * N + j] = buf[rr * vw + jj];
    }
}

/* Output (i, j) by the portable engine (the fix-up of outputs touched by
   inf/NaN); ra: room for 2K + 2 values. */
static double fix_dot(const struct mpe_tc_model *m, const mpei_tc_opnd *a, const mpei_tc_opnd *b, int i, int j,
                      int K, double cv, int out16, double *ra)
{
  if (a->sc)
    return mpei_tc_dot_scaled(m, a, b, i, j, K, cv);
  double *cb = ra + K + 1;
  for (int l = 0; l < K; l++) {
    ra[l] = mpei_tc_load(m, a->p, a->t, (size_t)((long)i * a->rs + (long)l * a->cs));
    cb[l] = mpei_tc_load(m, b->p, b->t, (size_t)((long)l * b->rs + (long)j * b->cs));
  }
  return mpei_tc_dot(m, ra, cb, 1, K, cv, out16);
}

/* The output one thread tile at a time: with epi, each tile's accumulators live
   in a buffer of the thread (zero at the start, padded to whole kernel tiles)
   and go through the fix-up and the BLAS epilogue into C as soon as the tile's
   K loop ends, while they are in cache; without, acc holds all M × N. */
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
  const mpei_tc_acc path = mpei_tc_acc_of(&m->p);
  if (path == MPEI_TC_ACC_NONE)
    return MPE_EUNSUP;
  const int L = fma ? 1 : m->p.block, F = m->p.align_bits, wide = path == MPEI_TC_ACC_F64;
  /* vw: the columns of a tile (and of a B panel) */
  const int vw = fma ? MPEI_TC_NRF * isa->tc_vw : isa->tc_vw, mr = fma ? isa->tc_mrf : isa->tc_mr;
  const mpei_tc_blk_fn blk = wide ? isa->tc_blkw : isa->tc_blk;
  const mpei_tc_fma_fn fmak = isa->tc_fma;
  const int Kp = (K + L - 1) / L * L;
  const int mp = (M + mr - 1) / mr, np = (N + vw - 1) / vw;
  size_t asz = (size_t)mp * mr * Kp, bsz = (size_t)np * vw * Kp;
  mpei_tc_panels pa = { malloc(sizeof(float) * (asz ? asz : 1)), NULL };
  mpei_tc_panels pb = { malloc(sizeof(float) * (bsz ? bsz : 1)), NULL };
  unsigned char *bad = calloc((size_t)mp * mr + (size_t)np * vw, 1);
  double *ra = malloc(sizeof(double) * ((size_t)K + 1) * 2);   /* for the portable fix-up */
  if (!fma) {
    pa.e = malloc(sizeof(int32_t) * (asz ? asz : 1));
    pb.e = malloc(sizeof(int32_t) * (bsz ? bsz : 1));
  }
  int16_t *e16 = NULL;   /* optional: without it, pass 1 in int32 lanes */
  int r = MPE_OK;
  if (!pa.v || !pb.v || !bad || !ra || (!fma && (!pa.e || !pb.e))) {
    r = MPE_ENOMEM;
    goto out;
  }
  unsigned char *rowbad = bad, *colbad = bad + (size_t)mp * mr;
  int unsafe = mpei_tc_pack(m, a, 0, M, K, Kp, mr, &pa, rowbad);
  unsafe |= mpei_tc_pack(m, b, 1, N, K, Kp, vw, &pb, colbad);
  if (unsafe) {
    r = MPE_EUNSUP;
    goto out;
  }
  /* the int16 exponents of the block kernel's pass 1 (blk_kernel without
     half): exponents are in [EXP_LO, EXP_HI] here, zeros MPEI_TC_ZERO_EXP16.
     Only for L >= 16: with shorter blocks, the unpacking of the two rows per
     block and building these arrays cost what pass 1 saves (AVX-512, n = 1024,
     one thread, CPU time against the int32 pass: h100 FP16 (L = 16) 0.95-0.97x,
     a100 (L = 8) 0.99-1.0x, v100 (L = 4) 1.02-1.05x) */
  if (!fma && !wide && path != MPEI_TC_ACC_I32X2 && mr % 2 == 0 && L >= 16) {
    e16 = malloc(sizeof(int16_t) * (asz + 2 * bsz + 1));
    if (e16) {
      int16_t *a16 = e16, *b16 = e16 + asz;
#pragma omp parallel for schedule(static) if (asz > 262144)
      for (size_t i = 0; i < asz; i++)
        a16[i] = (int16_t)(pa.e[i] < MPEI_TC_ZERO_EXP16 ? MPEI_TC_ZERO_EXP16 : pa.e[i]);
#pragma omp parallel for schedule(static) if (bsz > 131072)
      for (size_t i = 0; i < bsz; i++)
        b16[2 * i] = b16[2 * i + 1] = (int16_t)(pb.e[i] < MPEI_TC_ZERO_EXP16 ? MPEI_TC_ZERO_EXP16 : pb.e[i]);
    }
  }
  /* with epi, a C that shares bytes with A or B is written while the portable
     fix-up below may still read them: only when no output needs one */
  if (epi && !epi->c_apart && !fma) {
    int any = 0;
    for (int i = 0; i < mp * mr + np * vw; i++)
      any |= bad[i];
    if (any) {
      r = MPE_EUNSUP;
      goto out;
    }
  }
  /* initial accumulators: C, or zero */
  for (int i = 0; i < (epi ? 0 : M); i++)
    for (int j = 0; j < N; j++) {
      float cv = 0.0f;
      if (c && c->p) {
        size_t idx = (size_t)((long)i * c->rs + (long)j * c->cs);
        cv = c->t == MPE_FP16 ? mpe_fp16_to_fp32(((const uint16_t *)c->p)[idx]) : ((const float *)c->p)[idx];
      }
      acc[(size_t)i * N + j] = cv;
    }
  mpei_tc_out o;
  mpei_tc_out_of(m, out16, &o);
  /* a thread tile of mcp × ncp kernel tiles: the fma chain's bigger tiles
     reuse each B panel over more rows of A (the block kernels keep theirs) */
  const int mcp = fma ? MC_PANELS_F : MC_PANELS, ncp = fma ? NC_PANELS_F : NC_PANELS;
  const int mt = (mp + mcp - 1) / mcp, nt = (np + ncp - 1) / ncp;
  const int kcb = fma ? KC : (KC / L > 0 ? KC / L : 1) * L;   /* a chunk of whole blocks */
  const int tm = mcp * mr, tn = ncp * vw;   /* a thread tile */
  /* with epi, each thread's tile buffer, allocated before C is touched */
  int nthr = 1;
#ifdef _OPENMP
  nthr = omp_get_max_threads();
#endif
  float *tacc_all = NULL;
  double *tra_all = NULL;
  if (epi) {
    tacc_all = malloc(sizeof(float) * (size_t)tm * tn * nthr);
    tra_all = malloc(sizeof(double) * ((size_t)K + 1) * 2 * nthr);
    if (!tacc_all || !tra_all) {
      free(tacc_all);
      free(tra_all);
      r = MPE_ENOMEM;
      goto out;
    }
  }
#pragma omp parallel if ((long)M * N * K > 100000) num_threads(nthr)
  {
    MPEI_FENV_GUARD();
    int me = 0;
#ifdef _OPENMP
    me = omp_get_thread_num();
#endif
    float *tacc = epi ? tacc_all + (size_t)tm * tn * me : NULL;
    double *tra = epi ? tra_all + ((size_t)K + 1) * 2 * me : NULL;
#pragma omp for schedule(dynamic) collapse(2)
    for (int ti = 0; ti < mt; ti++)
      for (int tj = 0; tj < nt; tj++) {
        float cbuf[32 * 32];
        const int i0 = ti * tm, j0 = tj * tn;
        if (epi)
          memset(tacc, 0, sizeof(float) * (size_t)tm * tn);
        for (int k0 = 0; k0 < Kp; k0 += kcb) {
          int kn = Kp - k0 < kcb ? Kp - k0 : kcb;
          mpei_tc_kp kp = { L, F, kn / L, o.result_bits ? o.result_bits + 1 : 0, o.p, o.emin, o.emax,
                            o.mode, o.zexp, m->p.late_c, o.zero_sign,
                            path == MPEI_TC_ACC_I32X2 ? (L + 1) / 2 : 0, pa.e, pb.e, e16,
                            e16 ? e16 + asz : NULL };
          for (int jp = tj * ncp; jp < np && jp < (tj + 1) * ncp; jp++)
            for (int ip = ti * mcp; ip < mp && ip < (ti + 1) * mcp; ip++) {
              size_t ao = ((size_t)ip * Kp + k0) * mr, bo = ((size_t)jp * Kp + k0) * vw;
              long ldc;
              float *cp;
              if (epi) {   /* the thread's tile buffer, whole kernel tiles: in place */
                ldc = tn;
                cp = tacc + (size_t)(ip * mr - i0) * tn + (size_t)(jp * vw - j0);
              } else {
                cp = mpei_tc_tile_get(acc, M, N, ip, jp, mr, vw, cbuf, &ldc);
              }
              if (fma)
                fmak(pa.v + ao, pb.v + bo, cp, ldc, kn);
              else
                blk(pa.v + ao, pa.e + ao, pb.v + bo, pb.e + bo, cp, ldc, &kp);
              if (!epi)
                mpei_tc_tile_put(acc, M, N, ip, jp, mr, vw, cbuf, cp);
            }
        }
        if (!epi)
          continue;
        const int ni = M - i0 < tm ? M - i0 : tm, nj = N - j0 < tn ? N - j0 : tn;
        if (!fma)   /* outputs touched by inf/NaN: the portable engine */
          for (int ii = 0; ii < ni; ii++)
            for (int jj = 0; jj < nj; jj++) {
              const int i = i0 + ii, j = j0 + jj;
              if (!rowbad[i] && !colbad[j])
                continue;
              tacc[(size_t)ii * tn + jj] = mpei_tc_f_canon(fix_dot(m, a, b, i, j, K, 0.0, 0, tra));
            }
        for (int ii = 0; ii < ni; ii++)
          isa->tc_epilogue(epi->C + (size_t)(i0 + ii) * epi->ldc + j0, tacc + (size_t)ii * tn, nj, epi->alpha,
                           epi->beta, 1);
      }
  }
  free(tacc_all);
  free(tra_all);
  if (epi)
    goto out;
  mpei_tc_finish(acc, (size_t)M * N, fma, out16);
  if (!fma) {
    /* outputs touched by inf/NaN: the portable engine */
    for (int i = 0; i < M; i++)
      for (int j = 0; j < N; j++) {
        double cv = 0.0;
        if (c && c->p) {
          size_t idx = (size_t)((long)i * c->rs + (long)j * c->cs);
          cv = c->t == MPE_FP16 ? mpe_fp16_to_fp32(((const uint16_t *)c->p)[idx]) : ((const float *)c->p)[idx];
        }
        if (!rowbad[i] && !colbad[j] && isfinite(cv))
          continue;
        acc[(size_t)i * N + j] = mpei_tc_f_canon(fix_dot(m, a, b, i, j, K, cv, out16, ra));
      }
  }
out:
  free(pa.v); free(pa.e); free(pb.v); free(pb.e); free(bad); free(ra); free(e16);
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
