/* Block-scaled tensor-core models: tcgen05.mma with .block_scale, kinds
   mxf8f6f4 (every product an addend) and mxf4 / mxf4nvf4 (the exact sums of
   groups of products are the addends). mpe_mma_scaled and mpe_gemm_scaled,
   the portable engine that is the oracle of their fast paths, the packer that
   hands kind::mxf8f6f4 to the shared block kernels (emu/tc_gemm.c), and the
   driver of the FP4 kinds' SIMD kernel (emu/tc_fp4_kernel.h).

   One instruction (model block L, K padded with zeros to a whole number of
   them) computes, for each output, from the initial accumulator c:
     addends  c, exponent e_c = max(floor(log2|c|), -126);
              G = 1: each product a*b*sa*sb, exponent e_a + e_b + e_sa + e_sb
                     (element exponents at least their format's emin);
              G > 1: each group of G products, value (sum a*b)*sa*sb, exponent
                     e_sa + e_sb (a scale's exponent, significand apart);
              a zero addend (c = 0, a zero product; a group whose products are
              all zero or whose scale is zero) takes the exponent scale_zero_exp.
     E_max    the largest of those exponents; each addend is cut toward zero to
              a multiple of 2^(E_max - F), the cut addends summed exactly and
              the sum rounded once to binary32 (round_fp32; zero results +0).
   NaN (an element, a scale 0xFF / UE4M3 0x7F, c, inf * 0, inf - inf) gives
   NaN; otherwise an infinite element or c gives that infinity. */
#include "config.h"
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#ifdef _OPENMP
#include <omp.h>
#endif
#include "tc_impl.h"
#include "tc_pack.h"
#include "isa.h"

MPEI_HIDDEN int mpei_tc_run_fast(const struct mpe_tc_model *m, int M, int N, int K, const mpei_tc_opnd *a,
                                 const mpei_tc_opnd *b, const mpei_tc_opnd *c, int out16, float *acc);

static int elem_type_ok(mpe_type t)
{
  return t == MPE_E4M3 || t == MPE_E5M2 || t == MPE_E2M3 || t == MPE_E3M2 || t == MPE_E2M1;
}

/* ------------------------------------------------------------------ decoding */

/* An element: |value| = mag * 2^(e - (p - 1)), e at least the format's emin
   (subnormals are not renormalised). cls: 0 zero, 1 finite, 2 inf, 3 NaN. */
typedef struct { float v; int16_t e; uint8_t mag, cls; } elem;
/* A scale: value sm * 2^(se - 3) (UE8M0: sm = 8), nan set for the NaN code. */
typedef struct { int16_t se; uint8_t sm, nan; } scl;

/* The 256 codes of an element format (codes masked to its width). */
typedef struct { elem el[256]; int p; } elem_table;

static void elem_table_init(elem_table *t, mpe_type ty)
{
  const struct mpe_format *f = (const struct mpe_format *)mpe_format_of(ty);
  const uint32_t mask = (1u << f->bits) - 1;
  t->p = f->p;
  for (uint32_t c = 0; c < 256; c++) {
    double v = mpei_decode(c & mask, f);
    elem x = { (float)v, 0, 0, 0 };
    if (isnan(v)) {
      x.cls = 3;
    } else if (isinf(v)) {
      x.cls = 2;
    } else if (v != 0) {
      int e = ilogb(v);
      if (e < f->emin)
        e = f->emin;
      x.cls = 1;
      x.e = (int16_t)e;
      x.mag = (uint8_t)ldexp(fabs(v), f->p - 1 - e);
    }
    t->el[c] = x;
  }
}

static scl scale_of(uint8_t code, mpe_type st)
{
  scl s = { 0, 8, 0 };
  if (st == MPE_E8M0) {
    if (code == 0xff)
      s.nan = 1;
    else
      s.se = (int16_t)(code - 127);
    return s;
  }
  const uint32_t c = code & 0x7fu;   /* UE4M3: the sign bit is not read */
  if (c == 0x7f) {
    s.nan = 1;
    return s;
  }
  const double v = mpei_decode(c, (const struct mpe_format *)mpe_format_of(MPE_E4M3));
  if (v == 0) {
    s.sm = 0;
    s.se = -6;
    return s;
  }
  int e = ilogb(v);
  if (e < -6)
    e = -6;
  s.se = (int16_t)e;
  s.sm = (uint8_t)ldexp(v, 3 - e);
  return s;
}

static inline uint8_t code_at(const mpei_tc_opnd *x, int i, int l)
{
  return ((const uint8_t *)x->p)[(long)i * x->rs + (long)l * x->cs];
}

static inline uint8_t scale_code_at(const mpei_tc_scale *s, int i, int l)
{
  return s->p[(long)i * s->rs + (long)(l / s->block) * s->cs];
}

/* ------------------------------------------------------------------ engine */

/* mag * 2^ex cut toward zero to a multiple of 2^q, as a count of 2^q */
static inline int64_t cut(uint64_t mag, int ex, int q)
{
  const int sh = ex - q;
  if (sh >= 0)
    return (int64_t)(mag << sh);   /* the caller's bound: below 2^62 */
  return -sh >= 64 ? 0 : (int64_t)(mag >> -sh);
}

/* c's addend (c a finite binary32 value): its 24-bit significand at
   exponent e_c - 23, e_c = max(floor(log2|c|), -126), from its bits */
static inline void c_addend(double c, int *ec, uint64_t *mc)
{
  const uint32_t u = mpei_f2u((float)c), eb = u >> 23 & 0xffu;
  *ec = eb ? (int)eb - 127 : -126;
  *mc = eb ? (u & 0x7fffffu) | 0x800000u : u & 0x7fffffu;
}

static double finish(int64_t s, int q, mpe_round r)
{
  if (s == 0)
    return 0.0;
  const int neg = s < 0;
  const uint64_t mag = neg ? (uint64_t)0 - (uint64_t)s : (uint64_t)s;
  const int msb = 63 - __builtin_clzll(mag), e = msb + q;
  if (r == MPE_RZ && e >= -126 && e <= 127) {
    /* a normal binary32 result toward zero: the top 24 bits of the sum */
    const uint64_t m24 = msb >= 23 ? mag >> (msb - 23) : mag << (23 - msb);
    const uint32_t u = (uint32_t)(e + 127) << 23 | ((uint32_t)m24 & 0x7fffffu);
    return (double)mpei_u2f(u | (neg ? 0x80000000u : 0));
  }
  double v = mpei_tc_round(neg, mag, q, 0, 24, -126, 127, r);
  return v == 0 ? 0.0 : v;   /* a result that rounds to zero is +0 (MMA-Sim) */
}

/* One kind::mxf8f6f4 instruction: elements l0 .. l0+L-1 of row i and column
   j (past K: zeros). */
static double st_block(const struct mpe_tc_model *m, const mpei_tc_opnd *a, const mpei_tc_opnd *b,
                       const elem_table *ta, const elem_table *tb, int i, int j, int l0, int K, double c)
{
  const int L = m->p.block, F = m->p.align_bits, zexp = m->p.scale_zero_exp;
  const int n = K - l0 < L ? K - l0 : L;
  enum { NMAX = 1024 + 1 };   /* c and up to 1024 products (block <= 1024) */
  uint64_t mag[NMAX];
  int ex[NMAX];
  unsigned char neg[NMAX];
  int nan = isnan(c), pinf = c == INFINITY, ninf = c == -INFINITY;
  int emax = c == 0 || !isfinite(c) ? zexp : 0, cnt = 0;
  if (c != 0 && isfinite(c)) {
    int ec;
    uint64_t mc;
    c_addend(c, &ec, &mc);
    emax = ec;
    mag[cnt] = mc;
    ex[cnt] = ec - 23;
    neg[cnt++] = c < 0;
  }
  for (int l = 0; l < n; l++) {
    const elem x = ta->el[code_at(a, i, l0 + l)], y = tb->el[code_at(b, l0 + l, j)];
    const scl sx = scale_of(scale_code_at(a->sc, i, l0 + l), a->sc->t);
    const scl sy = scale_of(scale_code_at(b->sc, j, l0 + l), b->sc->t);
    const int sg = (x.v < 0) != (y.v < 0);
    if (sx.nan || sy.nan || x.cls == 3 || y.cls == 3 || (x.cls == 2 && y.cls == 0) || (x.cls == 0 && y.cls == 2)) {
      nan = 1;
      continue;
    }
    if (x.cls == 2 || y.cls == 2) {
      if (sg)
        ninf = 1;
      else
        pinf = 1;
      continue;
    }
    if (x.cls == 0 || y.cls == 0) {
      emax = emax > zexp ? emax : zexp;
      continue;
    }
    const int e = x.e + y.e + sx.se + sy.se;
    emax = e > emax ? e : emax;
    mag[cnt] = (uint64_t)x.mag * y.mag;
    ex[cnt] = e - (ta->p - 1) - (tb->p - 1);
    neg[cnt++] = (unsigned char)sg;
  }
  if (n < L)   /* padding: zero products */
    emax = emax > zexp ? emax : zexp;
  if (nan || (pinf && ninf))
    return NAN;
  if (pinf || ninf)
    return pinf ? INFINITY : -INFINITY;
  const int q = emax - F;
  int64_t s = 0;
  for (int t = 0; t < cnt; t++) {
    const int64_t v = cut(mag[t], ex[t], q);
    s += neg[t] ? -v : v;
  }
  return finish(s, q, m->p.round_fp32);
}

/* The end of one kind::mxf4 / mxf4nvf4 instruction, given its groups:
   ps[g] the exact sum of group g's products in units of 2^-2 (FP4 values are
   multiples of 1/2), nz[g] whether one of them is non-zero, sx[g] and sy[g]
   its scales; the groups from nreal on are padding (zero groups). */
static double gst_end(const struct mpe_tc_model *m, const int64_t *ps, const unsigned char *nz, const scl *sx,
                      const scl *sy, int nreal, double c)
{
  const int F = m->p.align_bits, zexp = m->p.scale_zero_exp;
  if (isnan(c))
    return NAN;
  int emax = zexp;
  for (int g = 0; g < nreal; g++) {
    if (sx[g].nan || sy[g].nan)
      return NAN;
    if (nz[g] && sx[g].sm && sy[g].sm) {   /* else a zero group, at zexp */
      const int e = sx[g].se + sy[g].se;
      emax = e > emax ? e : emax;
    }
  }
  if (isinf(c))
    return c;
  int64_t s = 0;
  int ec = 0;
  uint64_t mc = 0;
  if (c != 0) {
    c_addend(c, &ec, &mc);
    emax = ec > emax ? ec : emax;
  }
  const int q = emax - F;
  if (c != 0) {
    const int64_t v = cut(mc, ec - 23, q);
    s += c < 0 ? -v : v;
  }
  for (int g = 0; g < nreal; g++) {
    if (!ps[g] || !sx[g].sm || !sy[g].sm)
      continue;
    const int64_t gm = ps[g] * sx[g].sm * sy[g].sm;   /* at exponent e_sx + e_sy - 2 - 6 */
    const int64_t v = cut((uint64_t)(gm < 0 ? -gm : gm), sx[g].se + sy[g].se - 8, q);
    s += gm < 0 ? -v : v;
  }
  return finish(s, q, m->p.round_fp32);
}

/* One kind::mxf4 / mxf4nvf4 instruction: L/G groups of G FP4 products. */
static double gst_block(const struct mpe_tc_model *m, const mpei_tc_opnd *a, const mpei_tc_opnd *b,
                        const elem_table *ta, const elem_table *tb, int i, int j, int l0, int K, double c)
{
  const int L = m->p.block, G = m->p.scale_group;
  const int n = K - l0 < L ? K - l0 : L;
  enum { NG = 1024 };
  int64_t ps[NG];
  unsigned char nz[NG];
  scl sx[NG], sy[NG];
  int ng = 0, nreal = 0;
  for (int g0 = 0; g0 < L; g0 += G, ng++) {
    ps[ng] = 0;
    nz[ng] = 0;
    if (g0 >= n)
      continue;
    for (int t = g0; t < g0 + G && t < n; t++) {
      const float x = ta->el[code_at(a, i, l0 + t)].v, y = tb->el[code_at(b, l0 + t, j)].v;
      const int64_t pr = (int64_t)(x * 2.0f) * (int64_t)(y * 2.0f);
      ps[ng] += pr;
      nz[ng] |= pr != 0;
    }
    sx[ng] = scale_of(scale_code_at(a->sc, i, l0 + g0), a->sc->t);
    sy[ng] = scale_of(scale_code_at(b->sc, j, l0 + g0), b->sc->t);
    nreal = ng + 1;
  }
  return gst_end(m, ps, nz, sx, sy, nreal, c);
}

static double dot_tables(const struct mpe_tc_model *m, const mpei_tc_opnd *a, const mpei_tc_opnd *b,
                         const elem_table *ta, const elem_table *tb, int i, int j, int K, double c)
{
  for (int l0 = 0; l0 < K; l0 += m->p.block)
    c = m->p.scale_group > 1 ? gst_block(m, a, b, ta, tb, i, j, l0, K, c)
                             : st_block(m, a, b, ta, tb, i, j, l0, K, c);
  return c;
}

double mpei_tc_dot_scaled(const struct mpe_tc_model *m, const mpei_tc_opnd *a, const mpei_tc_opnd *b, int i,
                          int j, int K, double c)
{
  elem_table ta, tb;
  elem_table_init(&ta, a->t);
  elem_table_init(&tb, b->t);
  return dot_tables(m, a, b, &ta, &tb, i, j, K, c);
}

/* Every output by the engine: acc[i*N + j] (c: the initial accumulators, or NULL). */
static void run_portable(const struct mpe_tc_model *m, int M, int N, int K, const mpei_tc_opnd *a,
                         const mpei_tc_opnd *b, const float *c, int ldc, float *acc)
{
  elem_table ta, tb;
  elem_table_init(&ta, a->t);
  elem_table_init(&tb, b->t);
  const long total = (long)M * N;
#pragma omp parallel if (total * (long)(K + 1) > 20000)
  {
    MPEI_FENV_GUARD();   /* a worker of the team: the library's environment (mpemu(3)) */
#pragma omp for schedule(dynamic, 16)
  for (long t = 0; t < total; t++) {
    const int i = (int)(t / N), j = (int)(t % N);
    const double cv = c ? c[(size_t)i * ldc + j] : 0.0;
    acc[t] = mpei_tc_f_canon(dot_tables(m, a, b, &ta, &tb, i, j, K, cv));
  }
  }
}

/* ------------------------------------------------------------------ kind::mxf8f6f4: the block kernels */

int mpei_tc_pack_scaled(const mpei_tc_opnd *x, int transpose, int rows, int K, int Kp, int w, float *v,
                        int32_t *e, unsigned char *bad, int lo, int hi)
{
  elem_table t;
  elem_table_init(&t, x->t);
  scl st[256];
  for (int c = 0; c < 256; c++)
    st[c] = scale_of((uint8_t)c, x->sc->t);
  const int npan = (rows + w - 1) / w;
  int unsafe = 0;
#pragma omp parallel if ((long)rows * K > 65536)
  {
    MPEI_FENV_GUARD();   /* a worker of the team: the library's environment (mpemu(3)) */
#pragma omp for schedule(static) reduction(|: unsafe)
  for (int p = 0; p < npan; p++)
    for (int l = 0; l < Kp; l++)
      for (int r = 0; r < w; r++) {
        const int i = p * w + r;
        const size_t o = ((size_t)p * Kp + l) * w + r;
        float val = 0.0f;
        int ex = MPEI_TC_ZERO_EXP;
        if (i < rows && l < K) {
          const elem el = t.el[transpose ? code_at(x, l, i) : code_at(x, i, l)];
          const scl s = st[scale_code_at(x->sc, i, l)];
          if (el.cls >= 2 || s.nan) {
            bad[i] = 1;   /* the portable engine redoes the row's outputs */
          } else if (el.cls == 1) {
            ex = el.e + s.se;
            if (ex < lo || ex > hi)
              unsafe = 1;
            else
              val = ldexpf(el.v, s.se);   /* exact: a normal binary32 within the window */
          }
        }
        v[o] = val;
        if (e)
          e[o] = ex;
      }
  }
  return unsafe;
}

/* ------------------------------------------------------------------ kind::mxf4 / mxf4nvf4: the SIMD kernel */

/* Does the SIMD kernel hold the model (emu/tc_fp4.h)? Groups of at most 16,
   and one instruction's cut addends summing below 2^53: a group's value is at
   most 36 G * 15 * 15 (|S_g| <= 36 G, scale significands at most 15), cut at
   2^(e_g - 6 + F - E_max) with e_g <= E_max; c's below 2^(F+1). */
static int fp4_fits(const mpe_tc_params *p)
{
  const int G = p->scale_group;
  return G <= 16 && (double)(p->block / G) * G * 36 * 225 * ldexp(1.0, p->align_bits - 6) +
                        ldexp(1.0, p->align_bits + 1) <= 0x1p53;
}

/* The panels of operand x (rows × K; transposed: element (i, l) at (l, i)) in
   panels of w rows, as emu/tc_fp4.h lays them out: values and, per group of
   G elements, the scale's exponent and significand, the NaN flag and the mask
   of non-zero elements. Zeros with scale 1 past rows and K. */
static void fp4_pack(const mpei_tc_opnd *x, int transpose, int rows, int K, int Kp, int G, int w,
                     const elem_table *t, float *v, int32_t *info)
{
  scl st[256];
  for (int c = 0; c < 256; c++)
    st[c] = scale_of((uint8_t)c, x->sc->t);
  const int np = (rows + w - 1) / w, nb = Kp / G;
#pragma omp parallel if ((long)rows * K > 65536)
  {
    MPEI_FENV_GUARD();   /* a worker of the team: the library's environment (mpemu(3)) */
#pragma omp for schedule(static)
  for (int p = 0; p < np; p++)
    for (int gi = 0; gi < nb; gi++)
      for (int r = 0; r < w; r++) {
        const int i = p * w + r, l0 = gi * G;
        const scl s = i < rows && l0 < K ? st[scale_code_at(x->sc, i, l0)] : (scl){ 0, 8, 0 };
        float *vp = v + ((size_t)p * Kp + l0) * w + r;
        uint32_t nz = 0;
        for (int q = 0; q < G; q++) {
          const int l = l0 + q;
          const float y = i < rows && l < K ? t->el[transpose ? code_at(x, l, i) : code_at(x, i, l)].v : 0.0f;
          vp[(size_t)q * w] = y;
          nz |= (uint32_t)(y != 0.0f) << q;
        }
        int32_t *f = info + ((size_t)p * nb + gi) * 4 * w + r;
        const float sm = s.sm;
        f[MPEI_FP4_E * w] = s.se;
        f[MPEI_FP4_NZ * w] = s.sm ? (int32_t)nz : 0;
        f[MPEI_FP4_NAN * w] = s.nan ? -1 : 0;
        memcpy(&f[MPEI_FP4_SM * w], &sm, sizeof sm);
      }
  }
}

/* acc (M × N) by the SIMD level's FP4 kernel, from c (NULL: zeros); tiles of
   tc_fp4_mr rows × MPEI_TC_FP4_NV vectors. Returns MPE_EUNSUP when the level
   has no kernel or the model is outside its bound (the portable engine runs). */
static int run_groups(const struct mpe_tc_model *m, int M, int N, int K, const mpei_tc_opnd *a,
                      const mpei_tc_opnd *b, const float *c, int ldc, float *acc)
{
  const mpei_isa_kernels *isa = mpei_isa();
  const int L = m->p.block, G = m->p.scale_group;
  if (!isa->tc_fp4 || !fp4_fits(&m->p) || (long)M * N * (K + 1) < 4096)
    return MPE_EUNSUP;
  const int mr = isa->tc_fp4_mr, w = MPEI_TC_FP4_NV * isa->tc_vw;
  const int Kp = (K + L - 1) / L * L, mp = (M + mr - 1) / mr, np = (N + w - 1) / w, nb = Kp / G;
  const size_t arows = (size_t)mp * mr, brows = (size_t)np * w;
#ifdef _OPENMP
  const int nthr = omp_get_max_threads();
#else
  const int nthr = 1;
#endif
  const size_t wsz = (size_t)(L / G + 1) * mr * w;   /* per thread: the group sums and the tile */
  float *av = malloc(sizeof(float) * (arows + brows) * Kp);
  int32_t *ai = malloc(sizeof(int32_t) * 4 * (arows + brows) * nb);
  float *ws = malloc(sizeof(float) * wsz * nthr);
  if (!av || !ai || !ws) {
    free(av);
    free(ai);
    free(ws);
    return MPE_ENOMEM;
  }
  float *bv = av + arows * Kp;
  int32_t *bi = ai + 4 * arows * nb;
  elem_table ta, tb;
  elem_table_init(&ta, a->t);
  elem_table_init(&tb, b->t);
  fp4_pack(a, 0, M, K, Kp, G, mr, &ta, av, ai);
  fp4_pack(b, 1, N, K, Kp, G, w, &tb, bv, bi);
  const mpei_tc_fp4_kp kp = { Kp / L, L / G, G, m->p.align_bits, m->p.scale_zero_exp, m->p.round_fp32 };
#pragma omp parallel if ((long)M * N * K > 100000) num_threads(nthr)
  {
    MPEI_FENV_GUARD();   /* a worker of the team: the library's environment (mpemu(3)) */
#ifdef _OPENMP
    float *gs = ws + wsz * (size_t)omp_get_thread_num();
#else
    float *gs = ws;
#endif
    float *cur = gs + (size_t)(L / G) * mr * w;
#pragma omp for schedule(dynamic) collapse(2)
  for (int ip = 0; ip < mp; ip++)
    for (int jp = 0; jp < np; jp++) {
      for (int r = 0; r < mr; r++)
        for (int jj = 0; jj < w; jj++) {
          const int i = ip * mr + r, j = jp * w + jj;
          cur[r * w + jj] = c && i < M && j < N ? c[(size_t)i * ldc + j] : 0.0f;
        }
      isa->tc_fp4(av + (size_t)ip * Kp * mr, ai + (size_t)ip * nb * 4 * mr, bv + (size_t)jp * Kp * w,
                  bi + (size_t)jp * nb * 4 * w, cur, w, gs, &kp);
      for (int r = 0; r < mr; r++)
        for (int jj = 0; jj < w; jj++) {
          const int i = ip * mr + r, j = jp * w + jj;
          if (i < M && j < N)
            acc[(size_t)i * N + j] = cur[r * w + jj];
        }
    }
  }
  free(av);
  free(ai);
  free(ws);
  return MPE_OK;
}

/* ------------------------------------------------------------------ the calls */

/* acc (M × N) = the block-scaled product of the row-major views a, b (scales
   set) from the initial accumulators c (NULL: zero). */
static int run_scaled(const struct mpe_tc_model *m, int M, int N, int K, const mpei_tc_opnd *a,
                      const mpei_tc_opnd *b, const float *c, int ldc, float *acc)
{
  int r;
  if (m->p.scale_group > 1) {
    r = run_groups(m, M, N, K, a, b, c, ldc, acc);
  } else {
    mpei_tc_opnd cv = { c, MPE_FP32, ldc, 1, NULL };
    r = mpei_tc_run_fast(m, M, N, K, a, b, &cv, 0, acc);
  }
  if (r != MPE_EUNSUP)
    return r;
  run_portable(m, M, N, K, a, b, c, ldc, acc);
  return MPE_OK;
}

int mpei_tc_scaled_params_ok(const mpe_tc_params *p)
{
  if (p->scale_group < 1 || p->kind != MPE_TC_BLOCK || p->block < 1 || p->block > 1024 ||
      p->block % p->scale_group || !elem_type_ok(p->in) || p->late_c || p->result_bits)
    return MPE_EINVAL;
  if (p->scale_fmts <= 0 || p->scale_fmts > 7 || p->scale_zero_exp < -400 || p->scale_zero_exp > 400)
    return MPE_EINVAL;
  if (p->scale_group > 1) {
    /* FP4 groups (exact below 2^10, at most 16 in binary32), UE8M0 or UE4M3 scales, sums
       below 2^(F+11) per group: (L/G + 1) of them within an int64 */
    if (p->in != MPE_E2M1 || p->scale_group > 16 || p->block / p->scale_group > 64 || p->align_bits < 1 ||
        p->align_bits > 45)
      return MPE_EINVAL;
  } else if (p->scale_fmts & MPE_TC_SF_UE4M3_16) {
    return MPE_EINVAL;   /* products with UE4M3 significands: no instruction has them */
  }
  return MPE_OK;
}

/* The scale format and block of a call against the model's list. */
static int scale_ok(const struct mpe_tc_model *m, mpe_type st, int sblock)
{
  int bit = st == MPE_E8M0 && sblock == 32 ? MPE_TC_SF_UE8M0_32
            : st == MPE_E8M0 && sblock == 16 ? MPE_TC_SF_UE8M0_16
            : st == MPE_E4M3 && sblock == 16 ? MPE_TC_SF_UE4M3_16 : 0;
  return bit && (m->p.scale_fmts & bit) && sblock % m->p.scale_group == 0;
}

/* The rules shared by both calls: the model, element and scale types. */
static int types_ok(const struct mpe_tc_model *m, mpe_type at, mpe_type bt, mpe_type st, int sblock)
{
  if (!m || m->p.scale_group < 1 || !elem_type_ok(at) || !elem_type_ok(bt) || !scale_ok(m, st, sblock))
    return 0;
  return m->p.scale_group == 1 || (at == MPE_E2M1 && bt == MPE_E2M1);
}

static int nblocks(int k, int sblock)
{
  return k / sblock + (k % sblock != 0);
}

/* k padded to whole instructions must fit an int */
static int k_ok(const struct mpe_tc_model *m, int k)
{
  return k >= 0 && k <= INT_MAX - m->p.block;
}

int mpe_mma_scaled(const mpe_tc_model *model, int m, int n, int k, const void *A, mpe_type atype, int lda,
                   const void *B, mpe_type btype, int ldb, const uint8_t *SA, int ldsa, const uint8_t *SB, int ldsb,
                   mpe_type stype, int sblock, const void *C, int ldc, void *D, mpe_type dtype, int ldd)
{
  MPEI_FENV_GUARD();
  if (m < 0 || n < 0 || !types_ok(model, atype, btype, stype, sblock) || !k_ok(model, k) || dtype != MPE_FP32)
    return MPE_EINVAL;
  const int kb = nblocks(k, sblock);
  if (lda < (k > 1 ? k : 1) || ldb < (n > 1 ? n : 1) || ldd < (n > 1 ? n : 1) || (C && ldc < (n > 1 ? n : 1)) ||
      ldsa < (kb > 1 ? kb : 1) || ldsb < (n > 1 ? n : 1))
    return MPE_EINVAL;
  if ((m > 0 && k > 0 && (!A || !SA)) || (k > 0 && n > 0 && (!B || !SB)) || (m > 0 && n > 0 && !D))
    return MPE_EINVAL;
  if (m == 0 || n == 0)
    return MPE_OK;
  float *acc = malloc(sizeof(float) * (size_t)m * n);
  if (!acc)
    return MPE_ENOMEM;
  const mpei_tc_scale sca = { SA, stype, ldsa, 1, sblock }, scb = { SB, stype, 1, ldsb, sblock };
  const mpei_tc_opnd a = { A, atype, lda, 1, &sca }, b = { B, btype, ldb, 1, &scb };
  int r = run_scaled(model, m, n, k, &a, &b, C, ldc, acc);
  if (r == MPE_OK)
    for (int i = 0; i < m; i++)
      memcpy((float *)D + (size_t)i * ldd, acc + (size_t)i * n, sizeof(float) * (size_t)n);
  free(acc);
  return r;
}

int mpe_gemm_scaled(const mpe_tc_model *model, mpe_layout layout, mpe_trans ta, mpe_trans tb, int m, int n, int k,
                    float alpha, const void *A, mpe_type atype, int lda, const void *B, mpe_type btype, int ldb,
                    const uint8_t *SA, int ldsa, const uint8_t *SB, int ldsb, mpe_type stype, int sblock,
                    float beta, void *C, mpe_type ctype, int ldc)
{
  MPEI_FENV_GUARD();
  if (m < 0 || n < 0 || !types_ok(model, atype, btype, stype, sblock) || !k_ok(model, k) || ctype != MPE_FP32)
    return MPE_EINVAL;
  if ((layout != MPE_ROW_MAJOR && layout != MPE_COL_MAJOR) || (ta != MPE_NO_TRANS && ta != MPE_TRANS) ||
      (tb != MPE_NO_TRANS && tb != MPE_TRANS) || isnan(alpha) || isnan(beta))
    return MPE_EINVAL;
  const int use_ab = k > 0 && alpha != 0.0f, row = layout == MPE_ROW_MAJOR, kb = nblocks(k, sblock);
  /* the scale matrices: op(A)'s m × kb and op(B)'s kb × n, stored in `layout` */
  if (ldsa < ((row ? kb : m) > 1 ? (row ? kb : m) : 1) || ldsb < ((row ? n : kb) > 1 ? (row ? n : kb) : 1))
    return MPE_EINVAL;
  if (use_ab && ((m > 0 && !SA) || (n > 0 && !SB)))
    return MPE_EINVAL;
  mpei_tc_call cl;
  if (mpei_tc_gemm_call(layout, ta, tb, m, n, k, A, atype, lda, B, btype, ldb, C, ldc, use_ab, &cl))
    return MPE_EINVAL;
  if (m == 0 || n == 0)
    return MPE_OK;
  /* scale views indexed (index across K, block along K) */
  const mpei_tc_scale sca = { SA, stype, row ? ldsa : 1, row ? 1 : ldsa, sblock };
  const mpei_tc_scale scb = { SB, stype, row ? 1 : ldsb, row ? ldsb : 1, sblock };
  mpei_tc_opnd a = cl.a, b = cl.b;
  a.sc = row ? &sca : &scb;   /* column-major: the row-major C^T = op(B)^T op(A)^T */
  b.sc = row ? &scb : &sca;
  float *acc = malloc(sizeof(float) * (size_t)cl.M * cl.N);
  if (!acc)
    return MPE_ENOMEM;
  int r = MPE_OK;
  if (use_ab)
    r = run_scaled(model, cl.M, cl.N, k, &a, &b, NULL, 0, acc);
  else
    memset(acc, 0, sizeof(float) * (size_t)cl.M * cl.N);
  if (r == MPE_OK)
    mpei_tc_epilogue_run(acc, cl.M, cl.N, alpha, beta, use_ab, C, MPE_FP32, ldc);
  free(acc);
  return r;
}
