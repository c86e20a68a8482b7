/* AMD's CDNA matrix cores on vector registers: mpe_mma / mpe_gemm with the
   v_mfma models (mpe_tc_model_get(3), "AMD models"). The operands are packed
   as the block engine's fast path packs them (emu/tc_pack.h), the output cut
   into tiles run in parallel, K into chunks of whole blocks, and each tile runs
   the SIMD level's kernel (tc_amd_kernel.h), which computes the portable
   engine's arithmetic (emu/tc_model.c) lane by lane. Outputs the kernels do
   not cover (an inf or NaN operand or initial c; CDNA1 blocks whose addends
   span more bits than binary64 holds) are redone by the portable engine. */
#include "config.h"
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "mpemu/convert.h"
#include "tc_amd.h"
#include "tc_pack.h"
#include "tc_drive.h"
#include "isa.h"
#include "mpei_fenv.h"

#ifdef HAVE_X86_SIMD

enum { KC = 256, MC_PANELS = 8, NC_PANELS = 8 };

/* the kernel arithmetic of model m, or 0 when none covers it */
static int amd_kind(const struct mpe_tc_model *m)
{
  const mpe_tc_params *p = &m->p;
  if (p->scale_group || (p->in_b && p->mfma != MPE_TC_MFMA_TWO_STAGE_SPLIT))
    return 0;   /* a mixed FNUZ call: the packers decode each operand in its own format */
  if (p->mfma == MPE_TC_MFMA_FTZ)
    return MPEI_TC_AMD_FTZ;
  if (p->mfma == MPE_TC_MFMA_TWO_STAGE || p->mfma == MPE_TC_MFMA_TWO_STAGE_SPLIT)
    return MPEI_TC_AMD_TWO;   /* align_bits, result_bits <= 40, block <= 64 (mpe_tc_model_custom) */
  if (p->mfma == MPE_TC_MFMA_NONE && p->kind == MPE_TC_EXACT && p->block >= 1 && p->block <= 64 &&
      p->round_fp32 == MPE_RNE)
    return MPEI_TC_AMD_EXACT;
  return 0;
}

/* EXACT: the largest F with L * 2^(F+2) + 2^(F+1) <= 2^53 (L products and c) */
static int exact_bits(int L)
{
  int F = 51;
  while ((double)L * ldexp(1.0, F + 2) + ldexp(1.0, F + 1) > 0x1p53)
    F--;
  return F;
}

static double load_c(const mpei_tc_opnd *c, int i, int j)
{
  if (!c || !c->p)
    return 0.0;
  const size_t idx = (size_t)((long)i * c->rs + (long)j * c->cs);
  return c->t == MPE_FP16 ? mpe_fp16_to_fp32(((const uint16_t *)c->p)[idx]) : ((const float *)c->p)[idx];
}

/* EXACT: for each of nb blocks of L steps of w packed exponents (panel by
   panel), the bounds of its products' part: hi, the largest exponent plus one
   (a value of exponent e lies below 2^(e+1)), and lo, the smallest exponent
   of a non-zero value less P1 (a multiple of 2^(e-P1)); zeros drop out. Kept
   as the kernel compares them (tc_amd_kernel.h, exact_run): B's (side 1)
   hi - lo - span, hi - span + 150, lo + span + 126; A's (side 0) hi - lo, hi,
   lo. Block b at out + 3*w*b, each of the three w long. */
static void exact_bounds(const int32_t *e, size_t nb, int L, int w, int P1, int span, int side, int32_t *out)
{
  int32_t hi[MPEI_TC_AMD_AVX512_VW], lo[MPEI_TC_AMD_AVX512_VW];   /* w <= the widest panel */
  for (size_t b = 0; b < nb; b++) {
    for (int j = 0; j < w; j++) {
      hi[j] = MPEI_TC_ZERO_EXP;
      lo[j] = -MPEI_TC_ZERO_EXP;
    }
    for (int q = 0; q < L; q++)   /* the panel's row of w, j innermost */
      for (int j = 0; j < w; j++) {
        const int32_t x = e[(b * L + q) * w + j];
        hi[j] = x > hi[j] ? x : hi[j];
        lo[j] = x != MPEI_TC_ZERO_EXP && x < lo[j] ? x : lo[j];
      }
    for (int j = 0; j < w; j++) {
      const int32_t h = hi[j] + 1, l = lo[j] - P1;
      out[3 * w * b + j] = h - l - (side ? span : 0);
      out[3 * w * b + w + j] = side ? h - span + 150 : h;
      out[3 * w * b + 2 * w + j] = side ? l + span + 126 : l;
    }
  }
}

/* the largest exponent among n packed exponents (zeros: MPEI_TC_ZERO_EXP) */
static int max_exp(const int32_t *e, size_t n)
{
  int32_t mx = MPEI_TC_ZERO_EXP;
  for (size_t i = 0; i < n; i++)
    mx = e[i] > mx ? e[i] : mx;
  return mx;
}

typedef struct {
  mpei_tc_amd_fn kern;
  const mpei_tc_panels *pa, *pb;
  int Kp, mr, vw;
  mpei_tc_amd_kp kp0;
  int32_t *fl;        /* EXACT: M x N lost-bits flags */
  const int32_t *abnd, *bbnd;   /* EXACT: the panels' exponent bounds per block (exact_bounds) */
  const double *ad;   /* EXACT: A's panels in binary64 */
  const int16_t *a16, *b16;   /* or NULL: the panels' exponents in int16 (mpei_tc_exp16) */
  const float *acc;   /* the driver's accumulators (whole tiles are updated in place) */
  int M, N;
} amd_ctx;

/* The driver's kernel tile (emu/tc_drive.h): K steps [k0, k0 + kn), whole
   blocks. A whole tile lies in acc, its flags at the same place in fl; an edge
   tile is the driver's padded copy, its flags a copy merged afterwards. */
static void amd_tile(const void *ctx, int ip, int jp, int k0, int kn, void *cv, long ldc)
{
  const amd_ctx *x = ctx;
  float *c = cv;
  mpei_tc_amd_kp kp = x->kp0;
  kp.nblk = kn / kp.L;
  if (x->abnd) {
    kp.abnd = x->abnd + ((size_t)ip * (x->Kp / kp.L) + k0 / kp.L) * 3 * x->mr;
    kp.bbnd = x->bbnd + ((size_t)jp * (x->Kp / kp.L) + k0 / kp.L) * 3 * x->vw;
  }
  const size_t ao = ((size_t)ip * x->Kp + k0) * x->mr, bo = ((size_t)jp * x->Kp + k0) * x->vw;
  if (x->ad)
    kp.ad = x->ad + ao;
  if (x->a16) {
    kp.a16 = x->a16 + ao;
    kp.b16 = x->b16 + 2 * bo;
  }
  const int32_t *ae = x->pa->e ? x->pa->e + ao : NULL, *be = x->pb->e ? x->pb->e + bo : NULL;
  int32_t fbuf[MPEI_TC_AMD_MR * MPEI_TC_AMD_AVX512_VW];
  const uintptr_t off = (uintptr_t)c - (uintptr_t)x->acc;
  const int inside = (uintptr_t)c >= (uintptr_t)x->acc && off < (size_t)x->M * x->N * sizeof(float);
  int32_t *fp = !x->fl ? NULL : inside ? x->fl + off / sizeof(float) : fbuf;
  if (fp == fbuf)
    memset(fbuf, 0, sizeof fbuf);
  x->kern(x->pa->v + ao, ae, x->pb->v + bo, be, c, fp, ldc, &kp);
  if (fp != fbuf)
    return;
  for (int rr = 0; rr < x->mr; rr++)
    for (int jj = 0; jj < x->vw; jj++) {
      const int i = ip * x->mr + rr, j = jp * x->vw + jj;
      if (i < x->M && j < x->N)
        x->fl[(size_t)i * x->N + j] |= fbuf[rr * ldc + jj];
    }
}

int mpei_tc_amd_run(const struct mpe_tc_model *m, int M, int N, int K, const mpei_tc_opnd *a,
                    const mpei_tc_opnd *b, const mpei_tc_opnd *c, float *acc)
{
  const int kind = amd_kind(m), lvl = mpei_simd_level();
  if (!kind || lvl < MPEI_SIMD_AVX2 || a->sc || (long)M * N * (K + 1) < 4096)
    return MPE_EUNSUP;
  const mpei_isa_kernels *ik = mpei_isa();
  const mpei_tc_amd_fn kern = ik->tc_amd;
  const int vw = ik->tc_amd_vw, mr = MPEI_TC_AMD_MR;
  const int L = m->p.block, ftz = kind == MPEI_TC_AMD_FTZ;
  const int Kp = (K + L - 1) / L * L, mp = (M + mr - 1) / mr, np = (N + vw - 1) / vw;
  const size_t asz = (size_t)mp * mr * Kp, bsz = (size_t)np * vw * Kp;
  mpei_tc_panels pa = { malloc(sizeof(float) * (asz ? asz : 1)), NULL };
  mpei_tc_panels pb = { malloc(sizeof(float) * (bsz ? bsz : 1)), NULL };
  unsigned char *bad = calloc((size_t)mp * mr + (size_t)np * vw, 1);
  int32_t *fl = kind == MPEI_TC_AMD_EXACT ? calloc((size_t)M * N, sizeof(int32_t)) : NULL;
  if (!ftz) {
    pa.e = malloc(sizeof(int32_t) * (asz ? asz : 1));
    pb.e = malloc(sizeof(int32_t) * (bsz ? bsz : 1));
  }
  int r = MPE_OK;
  if (!pa.v || !pb.v || !bad || (!ftz && (!pa.e || !pb.e)) || (kind == MPEI_TC_AMD_EXACT && !fl)) {
    r = MPE_ENOMEM;
    goto out;
  }
  unsigned char *rowbad = bad, *colbad = bad + (size_t)mp * mr;
  /* wide: some operand outside [2^-48, 2^63) (the packers' window); the
     kernels take any finite value (without exponents, FTZ keeps inf and NaN
     in the panels) */
  int wide = mpei_tc_pack(m, a, 0, M, K, Kp, mr, &pa, rowbad);
  wide |= mpei_tc_pack(m, b, 1, N, K, Kp, vw, &pb, colbad);
  if (kind == MPEI_TC_AMD_EXACT)   /* A past K -0: a product of -0 leaves every sum as it is, -0 included */
    for (int ip = 0; ip < mp; ip++)
      for (size_t l = (size_t)K * mr; l < (size_t)Kp * mr; l++)
        pa.v[(size_t)ip * Kp * mr + l] = -0.0f;
  if (ftz) {   /* operands below the input format's smallest normal read as +0 */
    const float tiny = ldexpf(1.0f, ((const struct mpe_format *)mpe_format_of(m->p.in))->emin);
    for (size_t i = 0; i < asz; i++)
      pa.v[i] = fabsf(pa.v[i]) < tiny ? 0.0f : pa.v[i];
    for (size_t i = 0; i < bsz; i++)
      pb.v[i] = fabsf(pb.v[i]) < tiny ? 0.0f : pb.v[i];
  } else if (kind == MPEI_TC_AMD_TWO && max_exp(pa.e, asz) + max_exp(pb.e, bsz) + 2 >= 128) {
    r = MPE_EUNSUP;   /* a product may reach 2^128 (infinite in the model): the portable engine */
    goto out;
  }
  int cbad = 0;   /* some initial c infinite or NaN */
  if (!c || !c->p)
    memset(acc, 0, sizeof(float) * (size_t)M * N);
  else
    for (int i = 0; i < M; i++)
      for (int j = 0; j < N; j++) {
        const float cv = (float)load_c(c, i, j);
        cbad |= !isfinite(cv);
        /* FTZ: a c below 2^-126 (-0 included) is +0 */
        acc[(size_t)i * N + j] = ftz && fabsf(cv) < 0x1p-126f ? 0.0f : cv;
      }
  int anybad = cbad || fl;   /* outputs the portable engine may have to redo */
  for (size_t i = 0; i < (size_t)mp * mr + (size_t)np * vw && !anybad; i++)
    anybad = bad[i];
  const int F = kind == MPEI_TC_AMD_EXACT ? exact_bits(L) : m->p.align_bits;
  const int F2 = m->p.result_bits;
  int32_t *abnd = NULL, *bbnd = NULL;
  double *ad = NULL;
  if (kind == MPEI_TC_AMD_EXACT) {
    abnd = malloc(sizeof(int32_t) * 3 * (asz / L ? asz / L : 1));
    bbnd = malloc(sizeof(int32_t) * 3 * (bsz / L ? bsz / L : 1));
    ad = malloc(sizeof(double) * (asz ? asz : 1));
    if (!abnd || !bbnd || !ad) {
      free(abnd);
      free(bbnd);
      free(ad);
      r = MPE_ENOMEM;
      goto out;
    }
    for (size_t i = 0; i < asz; i++)   /* each product's fma reads a straight from memory */
      ad[i] = pa.v[i];
    const int P1 = ((const struct mpe_format *)mpe_format_of(m->p.in))->p - 1;
    int span = 53;   /* the largest hi - lo of a block's addends: (L + 1) * 2^span <= 2^53 */
    while ((1L << (53 - span)) < L + 1)
      span--;
    exact_bounds(pa.e, (size_t)mp * (Kp / L), L, mr, P1, span, 0, abnd);
    exact_bounds(pb.e, (size_t)np * (Kp / L), L, vw, P1, span, 1, bbnd);
  }
  mpei_tc_amd_kp kp0 = { kind, L, F, F2, 0, ftz && m->p.in != MPE_FP16,
                         kind == MPEI_TC_AMD_TWO && !wide && F <= 29 && F2 + 1 >= F && F2 + 1 - F <= 16 &&
                             F2 <= 31 && (double)L * (ldexp(1.0, F + 2) - 1.0) + ldexp(1.0, F + 1) <= 2147483647.0,
                         m->p.mfma == MPE_TC_MFMA_TWO_STAGE_SPLIT, kind == MPEI_TC_AMD_EXACT && m->p.zero_sign,
                         NULL, NULL, NULL, NULL, NULL };
  /* pass 1 in int16 lanes (NULL when out of memory: int32 lanes) */
  int16_t *e16 = kp0.f32 && !kp0.split ? mpei_tc_exp16(&pa, asz, &pb, bsz) : NULL;
  const amd_ctx x = { kern, &pa, &pb, Kp, mr, vw, kp0, fl, abnd, bbnd, ad, e16, e16 ? e16 + asz : NULL, acc, M, N };
  const mpei_gemm_plan plan = { .M = M, .N = N, .K = Kp, .kc = (KC / L > 0 ? KC / L : 1) * L, .mr = mr, .nr = vw,
                                .mcp = MC_PANELS, .ncp = NC_PANELS, .esize = 4, .work = (long)M * N * K,
                                .tile = amd_tile, .ctx = &x, .acc = acc };
  r = mpei_gemm_run(&plan);
  free(e16);
  free(abnd);
  free(bbnd);
  free(ad);
  if (r != MPE_OK)
    goto out;
  if (!ftz && anybad) {
    /* the outputs the kernels leave to the portable engine: inf/NaN operands
       or c, and (CDNA1) blocks that lost bits */
#pragma omp parallel if ((long)M * N > 4096)
    {
      MPEI_FENV_GUARD();   /* a worker of the team: the library's environment (mpemu(3)) */
      double *ra = malloc(sizeof(double) * ((size_t)K + 1) * 2);
#pragma omp for schedule(dynamic, 8)
      for (int i = 0; i < M; i++) {
        int have_row = 0;
        for (int j = 0; j < N; j++) {
          const double cv = load_c(c, i, j);
          if (!rowbad[i] && !colbad[j] && isfinite(cv) && !(fl && fl[(size_t)i * N + j]))
            continue;
          if (!ra) {   /* no room: the caller's portable engine redoes the whole call */
#pragma omp atomic write
            r = MPE_EUNSUP;
            break;
          }
          double *rb = ra + K + 1;
          for (int l = 0; l < K && !have_row; l++)
            ra[l] = mpei_tc_load(m, a->p, a->t, (size_t)((long)i * a->rs + (long)l * a->cs));
          have_row = 1;
          for (int l = 0; l < K; l++)
            rb[l] = mpei_tc_load(m, b->p, b->t, (size_t)((long)l * b->rs + (long)j * b->cs));
          acc[(size_t)i * N + j] = mpei_tc_f_canon(mpei_tc_dot(m, ra, rb, 1, K, cv, 0));
        }
      }
      free(ra);
    }
  }
  if (r == MPE_OK)
    mpei_tc_finish(acc, (size_t)M * N, 0, 0);
out:
  free(pa.v); free(pa.e); free(pb.v); free(pb.e); free(bad); free(fl);
  return r;
}

#else

int mpei_tc_amd_run(const struct mpe_tc_model *m, int M, int N, int K, const mpei_tc_opnd *a,
                    const mpei_tc_opnd *b, const mpei_tc_opnd *c, float *acc)
{
  (void)m; (void)M; (void)N; (void)K; (void)a; (void)b; (void)c; (void)acc;
  return MPE_EUNSUP;
}

#endif
