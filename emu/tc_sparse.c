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
  int nt = 1;
#ifdef _OPENMP
  nt = omp_get_max_threads();
#endif
  double *buf = malloc(sizeof(double) * 2 * ((size_t)s->kc + 1) * (size_t)nt);
  if (!buf)
    return MPE_ENOMEM;
  const long total = (long)s->M * s->N;
#pragma omp parallel if (total * (long)(s->kc + 1) > 20000)
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
  const int L = fma ? 1 : m->p.block, F = m->p.align_bits;
  const int vw = isa->tc_vw, mr = fma ? isa->tc_mrfs : isa->tc_mrs;
  const mpei_tc_blk_sp_fn blk = path == MPEI_TC_ACC_F64 ? isa->tc_blkw_sp : isa->tc_blk_sp;
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
  mpei_tc_panels pa = { malloc(sizeof(float) * asz), NULL }, pb = { sp_alloc64(sizeof(float) * bsz), NULL };
  int32_t *ax = malloc(sizeof(int32_t) * asz);
  unsigned char *bad = calloc((size_t)mp * mr + (size_t)nq * nw, 1);
  int nthr = 1;
#ifdef _OPENMP
  nthr = omp_get_max_threads();
#endif
  const int tm = MC_PANELS * mr, tn = NC_PAIRS * nw;   /* a thread tile */
  /* per thread: the portable fix-up's scratch, and with epi the tile's accumulators */
  double *ra = malloc(sizeof(double) * 2 * ((size_t)kc + 1) * (size_t)nthr);
  float *tacc_all = epi ? malloc(sizeof(float) * (size_t)tm * tn * (size_t)nthr) : NULL;
  if (!fma) {
    pa.e = malloc(sizeof(int32_t) * asz);
    pb.e = sp_alloc64(sizeof(int32_t) * bsz);
  }
  int r = MPE_OK;
  if (!pa.v || !pb.v || !ax || !bad || !ra || (epi && !tacc_all) || (!fma && (!pa.e || !pb.e))) {
    r = MPE_ENOMEM;
    goto out;
  }
  unsigned char *rowbad = bad, *colbad = bad + (size_t)mp * mr;
  if (mpei_tc_pack(m, s->v, 0, M, kc, Kcp, mr, &pa, rowbad) | mpei_tc_pack(m, s->b, 1, N, K, Kb, nw, &pb, colbad)) {
    r = MPE_EUNSUP;
    goto out;
  }
#pragma omp parallel for schedule(static) if ((long)mp * Kcp * mr > 65536)
  for (int p = 0; p < mp; p++)
    for (int q = 0; q < Kcp; q++)
      for (int rr = 0; rr < mr; rr++) {
        int i = p * mr + rr, l = i < M && q < kc ? s->kidx[(size_t)i * kc + q] : -1;
        ax[((size_t)p * Kcp + q) * mr + rr] = (l < 0 ? Kb - 1 : l) * nw;
      }
  if (!epi) {
#pragma omp parallel for schedule(static) if ((long)M * N > 65536)
    for (long t = 0; t < (long)M * N; t++)
      acc[t] = 0.0f;
  }
  mpei_tc_out o;
  mpei_tc_out_of(m, s->out16, &o);
  const int mt = (mp + MC_PANELS - 1) / MC_PANELS, nt = (nq + NC_PAIRS - 1) / NC_PAIRS;
  /* a chunk of whole blocks whose B rows (two per kept value, nw columns,
     value and exponent; the fma chain's values only) stay within 16 KiB, half
     of a level-1 cache */
  const int kct = 1024 / nw > 4 ? 1024 / nw : 4;
  const int kcb = fma ? 2 * kct : (kct / L > 0 ? kct / L : 1) * L;
  const long bpitch = (long)Kb * nw;
#pragma omp parallel if ((long)M * N * kc > 100000) num_threads(nthr)
  {
    MPEI_FENV_GUARD();
    int me = 0;
#ifdef _OPENMP
    me = omp_get_thread_num();
#endif
    double *tra = ra + 2 * ((size_t)kc + 1) * (size_t)me;
    float *tacc = epi ? tacc_all + (size_t)tm * tn * (size_t)me : NULL;
#pragma omp for schedule(dynamic) collapse(2)
    for (int ti = 0; ti < mt; ti++)
      for (int tj = 0; tj < nt; tj++) {
        float cbuf[16 * 64];
        const int i0 = ti * tm, j0 = tj * tn;
        if (epi)
          memset(tacc, 0, sizeof(float) * (size_t)tm * tn);
        for (int k0 = 0; k0 < Kcp; k0 += kcb) {
          const int kn = Kcp - k0 < kcb ? Kcp - k0 : kcb;
          const mpei_tc_kp kp = { L, F, kn / L, o.result_bits ? o.result_bits + 1 : 0, o.p, o.emin, o.emax,
                                  o.mode, o.zexp, m->p.late_c, o.zero_sign,
                                  path == MPEI_TC_ACC_I32X2 ? (L + 1) / 2 : 0, NULL, NULL, NULL, NULL };
          for (int jq = tj * NC_PAIRS; jq < nq && jq < (tj + 1) * NC_PAIRS; jq++)
            for (int ip = ti * MC_PANELS; ip < mp && ip < (ti + 1) * MC_PANELS; ip++) {
              const size_t ao = ((size_t)ip * Kcp + k0) * mr, bo = (size_t)jq * bpitch;
              long ldc;
              float *cp;
              if (epi) {   /* the thread's tile buffer, whole kernel tiles: in place */
                ldc = tn;
                cp = tacc + (size_t)(ip * mr - i0) * tn + (size_t)(jq * nw - j0);
              } else {
                cp = mpei_tc_tile_get(acc, M, N, ip, jq, mr, nw, cbuf, &ldc);
              }
              if (fma)
                isa->tc_fma_sp(pa.v + ao, ax + ao, pb.v + bo, cp, ldc, kn);
              else
                blk(pa.v + ao, pa.e + ao, ax + ao, pb.v + bo, pb.e + bo, vw, cp, ldc, &kp);
              if (!epi)
                mpei_tc_tile_put(acc, M, N, ip, jq, mr, nw, cbuf, cp);
            }
        }
        if (!epi)
          continue;
        const int ni = M - i0 < tm ? M - i0 : tm, nj = N - j0 < tn ? N - j0 : tn;
        if (!fma)   /* outputs touched by inf/NaN: the portable engine */
          for (int ii = 0; ii < ni; ii++)
            for (int jj = 0; jj < nj; jj++)
              if (rowbad[i0 + ii] || colbad[j0 + jj])
                tacc[(size_t)ii * tn + jj] = sp_dot(s, i0 + ii, j0 + jj, tra, tra + kc + 1);
        /* the epilogue makes every NaN the one quiet NaN, as mpei_tc_finish does */
        for (int ii = 0; ii < ni; ii++)
          isa->tc_epilogue(epi->C + (size_t)(i0 + ii) * epi->ldc + j0, tacc + (size_t)ii * tn, nj, epi->alpha,
                           epi->beta, 1);
      }
  }
  if (epi)
    goto out;
  mpei_tc_finish(acc, (size_t)M * N, fma, s->out16);
  if (!fma)
    for (int i = 0; i < M; i++)
      for (int j = 0; j < N; j++)
        if (rowbad[i] || colbad[j])
          acc[(size_t)i * N + j] = sp_dot(s, i, j, ra, ra + kc + 1);
out:
  free(pa.v); free(pa.e); free(pb.v); free(pb.e); free(ax); free(bad); free(ra); free(tacc_all);
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
  if (ctype == MPE_FP16 && !mpei_tc_out16_ok(model))
    return MPE_EUNSUP;
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
