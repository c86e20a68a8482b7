/* mpe_gemm_sp: the tensor-core GEMM with a 2:4 sparse A given compressed.
   Each output is the model's chained blocks over the kept products of its row
   of A, in ascending k, kept_block of them per block. The portable engine
   (mpei_tc_dot over the gathered products) is the oracle; the fast path packs
   the kept values of A into panels with, per value, the offset of the B row it
   multiplies (tc_kernel.h's sparse kernels, chosen through emu/isa.c), B into
   panels MPEI_TC_NRS vectors wide (fma chain: MPEI_TC_NRFS) on cache-line
   boundaries (a gathered row is one contiguous stretch), and shares the dense driver's packing and tiles
   (tc_pack.h). As in tc_gemm.c, outputs whose row of A or column of B holds an
   inf or NaN are recomputed by the portable engine, and for a row-major
   binary32 C the fix-up and the BLAS epilogue run on each thread tile as it
   finishes. */
#include "config.h"
#include <math.h>
#include <stdlib.h>
#include <string.h>
#ifdef _OPENMP
#include <omp.h>
#endif
#include "tc_pack.h"
#include "sparse_impl.h"
#include "isa.h"
#include "tc_drive.h"
#include "mpei_fenv.h"

enum { MC_PANELS = 32, NC_PAIRS = 2 };

/* The operands of one call, row-major view: kept value (i, q) of A at
   v->p[i*v->rs + q*v->cs] multiplying row kidx[i*kc + q] (-1: none) of op(B). */
typedef struct {
  const struct mpe_tc_model *m;
  int M, N, K, kc, out16;
  const mpei_tc_opnd *v, *b;
  const int32_t *kidx;
} sp_call;

/* One output by the portable engine; ra, rb: kc doubles of scratch. */
static float sp_dot(const sp_call *s, int i, int j, double *ra, double *rb)
{
  for (int q = 0; q < s->kc; q++) {
    int l = s->kidx[(size_t)i * s->kc + q];
    ra[q] = mpei_tc_load(s->m, s->v->p, s->v->t, (size_t)((long)i * s->v->rs + (long)q * s->v->cs));
    rb[q] = l < 0 ? 0.0 : mpei_tc_load(s->m, s->b->p, s->b->t, (size_t)((long)l * s->b->rs + (long)j * s->b->cs));
    if (l < 0)
      ra[q] = 0.0;   /* a padding position: no product */
  }
  return mpei_tc_f_canon(mpei_tc_dot(s->m, ra, rb, 1, s->kc, 0.0, s->out16));
}

static int sp_run_portable(const sp_call *s, float *acc)
{
  const long total = (long)s->M * s->N;
  const int par = total * (long)(s->kc + 1) > 20000, nt = par ? mpei_gemm_threads() : 1;
  double *buf = malloc(sizeof(double) * 2 * ((size_t)s->kc + 1) * (size_t)nt);
  if (!buf)
    return MPE_ENOMEM;
#pragma omp parallel if (par) num_threads(nt)
  {
    MPEI_FENV_GUARD();
    int t = 0;
#ifdef _OPENMP
    t = omp_get_thread_num();
#endif
    double *ra = buf + (size_t)t * 2 * ((size_t)s->kc + 1), *rb = ra + s->kc + 1;
#pragma omp for schedule(dynamic, 16)
    for (long o = 0; o < total; o++)
      acc[o] = sp_dot(s, (int)(o / s->N), (int)(o % s->N), ra, rb);
  }
  free(buf);
  return MPE_OK;
}

/* The BLAS epilogue fused into the tile loop (row-major binary32 C that shares
   no byte with V or B): C = alpha*acc + beta*C per tile, as it finishes. */
typedef struct { float alpha, beta; float *C; int ldc; } sp_epi;

/* size bytes aligned to 64 (a cache line), freed with free */
static void *sp_alloc64(size_t size)
{
  void *p = NULL;
  return posix_memalign(&p, 64, size ? size : 1) ? NULL : p;
}

/* One call of the sparse driver: the operands, their panels and kernels. */
typedef struct {
  const sp_call *s;
  int Kcp, mr, fma, vw;
  long bpitch;
  mpei_tc_panels pa, pb;
  const int32_t *ax;
  mpei_tc_blk_sp_fn blk;
  mpei_tc_fma_sp_fn fmak;
  mpei_tc_kp kp;   /* a whole chunk's block-kernel parameters */
} sp_drive;

/* the driver's kernel (tc_drive.h): tile (ip, jq), kept values [k0, k0 + kn) */
static void sp_tile(const void *ctx, int ip, int jq, int k0, int kn, void *c, long ldc)
{
  const sp_drive *d = ctx;
  const size_t ao = ((size_t)ip * d->Kcp + k0) * d->mr, bo = (size_t)jq * d->bpitch;
  if (d->fma) {
    d->fmak(d->pa.v + ao, d->ax + ao, d->pb.v + bo, c, ldc, kn);
    return;
  }
  mpei_tc_kp kp = d->kp;
  kp.nblk = kn / kp.L;
  d->blk(d->pa.v + ao, d->pa.e + ao, d->ax + ao, d->pb.v + bo, d->pb.e + bo, d->vw, c, ldc, &kp);
}

static float sp_fix(const void *ctx, int i, int j, void *scratch)
{
  const sp_drive *d = ctx;
  return sp_dot(d->s, i, j, scratch, (double *)scratch + d->s->kc + 1);
}

/* ax: for each packed kept value, the offset of the B row it multiplies
   (padding: the zero row Kb - 1) */
static void sp_offsets(const sp_call *s, int mp, int mr, int Kcp, int Kb, int nw, int32_t *ax)
{
  const int nthr = mpei_gemm_threads();
#pragma omp parallel for schedule(static) if ((long)mp * Kcp * mr > 65536) num_threads(nthr)
  for (int p = 0; p < mp; p++)
    for (int q = 0; q < Kcp; q++)
      for (int rr = 0; rr < mr; rr++) {
        int i = p * mr + rr, l = i < s->M && q < s->kc ? s->kidx[(size_t)i * s->kc + q] : -1;
        ax[((size_t)p * Kcp + q) * mr + rr] = (l < 0 ? Kb - 1 : l) * nw;
      }
}

/* Fills acc (M × N, without epi) or applies the epilogue to C (with epi). */
static int sp_run_fast(const sp_call *s, float *acc, const sp_epi *epi)
{
  const struct mpe_tc_model *m = s->m;
  const mpei_isa_kernels *isa = mpei_isa();
  const int M = s->M, N = s->N, K = s->K, kc = s->kc;
  if (!isa->tc_blk_sp || (long)M * N * (kc + 1) < 2048 || m->p.kind == MPE_TC_EXACT)
    return MPE_EUNSUP;
  if (epi && !isa->tc_epilogue)
    return MPE_EUNSUP;
  const mpei_tc_acc path = mpei_tc_acc_of(&m->p);
  if (path == MPEI_TC_ACC_NONE)
    return MPE_EUNSUP;
  const int fma = m->p.kind == MPE_TC_FMA_CHAIN;
  const int L = fma ? 1 : m->p.block;
  const int vw = isa->tc_vw, mr = fma ? isa->tc_mrfs : isa->tc_mrs;
  /* kept values padded to whole blocks; B rows to whole groups plus one zero
     row that padding values point at */
  const int Kcp = (kc + L - 1) / L * L, Kb = (K + 3) / 4 * 4 + 1;
  /* the kernels' tiles are mr × nw, nw = NRS*vw (fma chain: NRFS*vw); B is
     packed in panels that wide (the vectors of a row side by side, vw apart:
     one gathered row is one contiguous stretch), zero columns past N */
  const int nw = (fma ? MPEI_TC_NRFS : MPEI_TC_NRS) * vw, mp = (M + mr - 1) / mr, nq = (N + nw - 1) / nw;
  const size_t asz = (size_t)mp * mr * Kcp + 1, bsz = (size_t)nq * nw * Kb;
  /* B's rows on cache-line boundaries: a gathered row's vectors never
     straddle two lines (each vector load would then cost two) */
  sp_drive d = { s, Kcp, mr, fma, vw, (long)Kb * nw, { malloc(sizeof(float) * asz), NULL },
                 { sp_alloc64(sizeof(float) * bsz), NULL }, NULL,
                 path == MPEI_TC_ACC_F64 ? isa->tc_blkw_sp : isa->tc_blk_sp, isa->tc_fma_sp, { 0 } };
  int32_t *ax = malloc(sizeof(int32_t) * asz);
  unsigned char *bad = calloc((size_t)mp * mr + (size_t)nq * nw, 1);
  if (!fma) {
    d.pa.e = malloc(sizeof(int32_t) * asz);
    d.pb.e = sp_alloc64(sizeof(int32_t) * bsz);
  }
  int r = MPE_OK;
  if (!d.pa.v || !d.pb.v || !ax || !bad || (!fma && (!d.pa.e || !d.pb.e))) {
    r = MPE_ENOMEM;
    goto out;
  }
  unsigned char *rowbad = bad, *colbad = bad + (size_t)mp * mr;
  if (mpei_tc_pack(m, s->v, 0, M, kc, Kcp, mr, &d.pa, rowbad) | mpei_tc_pack(m, s->b, 1, N, K, Kb, nw, &d.pb, colbad)) {
    r = MPE_EUNSUP;
    goto out;
  }
  sp_offsets(s, mp, mr, Kcp, Kb, nw, ax);
  d.ax = ax;
  if (!epi)
    memset(acc, 0, sizeof(float) * (size_t)M * N);
  mpei_tc_out o;
  mpei_tc_out_of(m, s->out16, &o);
  /* a chunk of whole blocks whose B rows (two per kept value, nw columns,
     value and exponent; the fma chain's values only) stay within 16 KiB, half
     of a level-1 cache */
  const int kct = 1024 / nw > 4 ? 1024 / nw : 4;
  const int kcb = fma ? 2 * kct : (kct / L > 0 ? kct / L : 1) * L;
  d.kp = (mpei_tc_kp){ L, m->p.align_bits, kcb / L, o.result_bits ? o.result_bits + 1 : 0, o.p, o.emin, o.emax,
                       o.mode, o.zexp, m->p.late_c, o.zero_sign, path == MPEI_TC_ACC_I32X2 ? (L + 1) / 2 : 0,
                       NULL, NULL, NULL, NULL, 0 };
  /* a thread tile: MC_PANELS × NC_PAIRS kernel tiles */
  const mpei_gemm_plan plan = {
    M, N, Kcp, kcb, mr, nw, MC_PANELS, NC_PAIRS, 4, (long)M * N * kc, sp_tile, &d, fma ? NULL : rowbad, colbad,
    sp_fix, NULL, sizeof(double) * 2 * ((size_t)kc + 1), epi ? NULL : acc, epi ? isa->tc_epilogue : NULL,
    epi ? epi->alpha : 0.0f, epi ? epi->beta : 0.0f, epi ? epi->C : NULL, epi ? epi->ldc : 0 };
  /* the epilogue makes every NaN the one quiet NaN, as mpei_tc_finish does */
  r = mpei_gemm_run(&plan);
  if (r == MPE_OK && !epi) {
    mpei_tc_finish(acc, (size_t)M * N, fma, s->out16);
    r = mpei_gemm_fixup(&plan, acc);
  }
out:
  free(d.pa.v); free(d.pa.e); free(d.pb.v); free(d.pb.e); free(ax); free(bad);
  return r;
}

/* bytes spanned by rows × ld elements of esize bytes, the last row `cols` long */
static size_t span(int esize, int rows, int cols, int ld)
{
  return rows > 0 && cols > 0 ? ((size_t)(rows - 1) * (size_t)ld + (size_t)cols) * (size_t)esize : 0;
}

static int overlaps(const void *p, size_t np, const void *q, size_t nq)
{
  const unsigned char *a = p, *b = q;
  return np && nq && a < b + nq && b < a + np;
}

int mpe_gemm_sp(const mpe_tc_model *model, int kept_block, mpe_layout layout, mpe_trans tb, int m, int n,
                int k, float alpha, const void *V, mpe_type atype, int ldv, const uint16_t *meta, int ldm,
                const void *B, mpe_type btype, int ldb, float beta, void *C, mpe_type ctype, int ldc)
{
  MPEI_FENV_GUARD();
  if (!model || m < 0 || n < 0 || k < 0 || k > MPEI_TC_K_MAX || kept_block < 0 || kept_block > 1024)
    return MPE_EINVAL;
  if (layout != MPE_ROW_MAJOR && layout != MPE_COL_MAJOR)
    return MPE_EINVAL;
  if (tb != MPE_NO_TRANS && tb != MPE_TRANS)
    return MPE_EINVAL;
  if (!mpei_tc_in_ok(model, atype) || !mpei_tc_in_ok(model, btype))
    return MPE_EINVAL;
  /* block-scaled models take scales (mpe_gemm_scaled); a B format of its own is
     the mixed FP8 instructions', which have no sparse form here */
  if (model->p.scale_group || (model->p.in_b && model->p.in_b != (int)model->p.in))
    return MPE_EINVAL;
  if (ctype != MPE_FP32 && ctype != MPE_FP16)
    return MPE_EINVAL;
  const int row = layout == MPE_ROW_MAJOR, kc = mpe_sparse_kept(k), nw = mpe_sparse_meta_words(k);
  /* stored shapes: V is m×kc, meta m×nw (in the layout), B k×n (or n×k) */
  const int b_cols = (tb == MPE_NO_TRANS) == row ? n : k;
  const int v_need = row ? kc : m, m_need = row ? nw : m, c_need = row ? n : m;
  if (ldv < (v_need > 1 ? v_need : 1) || ldm < (m_need > 1 ? m_need : 1) ||
      ldb < (b_cols > 1 ? b_cols : 1) || ldc < (c_need > 1 ? c_need : 1))
    return MPE_EINVAL;
  const int use_ab = k > 0 && alpha != 0.0f;
  if ((m > 0 && n > 0 && !C) || (use_ab && m > 0 && (!V || !meta)) || (use_ab && n > 0 && !B))
    return MPE_EINVAL;
  if (ctype == MPE_FP16 && (!mpei_tc_out16_ok(model) || model->p.fp16_split))
    return MPE_EUNSUP;   /* fp16_split: what mma.sp computes is not known */
  if (model->p.instr == MPE_TC_MFMA || model->p.mfma)   /* AMD's sparse smfmac: not modelled */
    return MPE_EUNSUP;
  if (model->p.kind == MPE_TC_ARM_BFDOT)
    return MPE_EUNSUP;   /* Arm has no sparse BF16 dot product */
  if (model->p.kind == MPE_TC_CPU_CHAIN)
    return MPE_EUNSUP;   /* the CPU dot-product instructions have no 2:4 sparse form */
  /* the model with the sparse grouping: its checks are mpe_tc_model_custom's */
  mpe_tc_params p = model->p;
  if (p.kind == MPE_TC_BLOCK && kept_block > 0)
    p.block = kept_block;
  p.fp16_split = 0;   /* binary16 output only, refused above */
  mpe_tc_model *ms;
  int r = mpe_tc_model_custom(&ms, &p);
  if (r)
    return r;
  /* a row-major binary32 C apart from V and B: the epilogue runs tile by tile
     in the fast driver, without an M × N buffer */
  const int es = mpei_sp_esize(atype) ? mpei_sp_esize(atype) : 4, bs = mpei_sp_esize(btype) ? mpei_sp_esize(btype) : 4;
  const int fused = use_ab && row && ctype == MPE_FP32 && m > 0 && n > 0 &&
                    !overlaps(C, span(4, m, n, ldc), V, span(es, m, kc, ldv)) &&
                    !overlaps(C, span(4, m, n, ldc), B, tb == MPE_NO_TRANS ? span(bs, k, n, ldb) : span(bs, n, k, ldb));
  int32_t *kidx = malloc(sizeof(int32_t) * ((size_t)m * kc + 1));
  float *acc = fused ? NULL : malloc(sizeof(float) * ((size_t)m * n + 1));
  float *acct = row ? NULL : malloc(sizeof(float) * ((size_t)m * n + 1));
  if (!kidx || (!fused && !acc) || (!row && !acct)) {
    r = MPE_ENOMEM;
    goto out;
  }
  if (use_ab && m > 0 && (r = mpei_sp_index(V, atype, row, m, k, ldv, meta, ldm, kidx)))
    goto out;
  if (m == 0 || n == 0)
    goto out;
  /* kept value (i, q) and element (l, j) of op(B) */
  mpei_tc_opnd v = { V, atype, row ? ldv : 1, row ? 1 : ldv, NULL };
  long brs, bcs;
  if (row) {
    brs = tb == MPE_NO_TRANS ? ldb : 1; bcs = tb == MPE_NO_TRANS ? 1 : ldb;
  } else {
    brs = tb == MPE_NO_TRANS ? 1 : ldb; bcs = tb == MPE_NO_TRANS ? ldb : 1;
  }
  mpei_tc_opnd b = { B, btype, brs, bcs, NULL };
  sp_call s = { ms, m, n, k, kc, ctype == MPE_FP16, &v, &b, kidx };
  if (fused) {
    const sp_epi e = { alpha, beta, (float *)C, ldc };
    r = sp_run_fast(&s, NULL, &e);
    if (r != MPE_EUNSUP)
      goto out;
    /* no fast kernel for the case: the portable engine into a buffer */
    if (!(acc = malloc(sizeof(float) * ((size_t)m * n + 1)))) {
      r = MPE_ENOMEM;
      goto out;
    }
    r = sp_run_portable(&s, acc);
  } else if (use_ab) {
    r = sp_run_fast(&s, acc, NULL);
    if (r == MPE_EUNSUP)
      r = sp_run_portable(&s, acc);
  } else {
    for (size_t t = 0; t < (size_t)m * n; t++)
      acc[t] = 0.0f;
  }
  if (r == MPE_OK) {
    if (row) {
      mpei_tc_epilogue_run(acc, m, n, alpha, beta, use_ab, C, ctype, ldc);
    } else {
      /* a column-major C is the row-major n×m C^T */
      for (int i = 0; i < m; i++)
        for (int j = 0; j < n; j++)
          acct[(size_t)j * m + i] = acc[(size_t)i * n + j];
      mpei_tc_epilogue_run(acct, n, m, alpha, beta, use_ab, C, ctype, ldc);
    }
  }
out:
  mpe_tc_model_free(ms);
  free(kidx); free(acc); free(acct);
  return r;
}
