/* The same bits whatever floating-point environment the caller has set
   (mpemu(3), "FLOATING-POINT ENVIRONMENT").

   One workload runs the boundary data of every computing family of the
   library: the scalar conversions and FP16/BF16 arithmetic, mpe_round_f32/f64
   for every built-in format and mode, the element-wise functions, range
   analysis, the tensor-core models (mpe_mma, mpe_gemm: h100, v100, a100,
   fma-chain, exact), the integer tensor cores, the 2:4 sparse GEMM (floating-point models),
   the block-scaled MMA (mpe_mma_scaled, mpe_gemm_scaled: b200:mxf8f6f4 with E4M3 x E5M2
   codes and UE8M0 scales, b200:mxf4nvf4 with UE4M3 scales), mixed FP8 mpe_mma and
   mpe_gemm, and mpe_mma_cd (binary16 C, binary32 D, v100). It runs
   first in the default environment at each SIMD level (the reference), then
   once per environment x level x team, and every output word is compared with
   the reference bit for bit. The environments: DAZ+FTZ set in MXCSR; each
   directed rounding mode through fesetround (x87 and SSE) and through MXCSR's
   RC field alone; the x87 precision control at 24 bits; every exception
   unmasked (feenableexcept); and all of them at once. A trap from inside the
   library is caught (SIGFPE: the handler masks the exceptions in the saved
   context and lets the instruction run again) and counted as a failure. The
   teams: one thread (level 0); four threads with the environment set in the
   calling thread only (the pool's threads keep what they had; top level);
   four threads with the environment set in every thread of the team first (a
   program built with -Ofast, whose threads all start with DAZ and FTZ; every
   level). The caller's environment,
   sticky exception flags included, must be the same after every family as
   before it ("env" column). Counts are printed per configuration; any
   difference fails the test. */
#define _GNU_SOURCE
#include <fenv.h>
#include <math.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <ucontext.h>
#ifdef _OPENMP
#include <omp.h>
#endif
#if defined(__x86_64__) || defined(__i386__)
#include <xmmintrin.h>
#define TS_X86 1
#else
#define TS_X86 0
#endif
#include "testsupport.h"
#include "boundary.h"

enum { F_SCALAR, F_ROUND, F_EW, F_RANGE, F_TC, F_INT, F_SPARSE, F_TCX, F_ENV, NFAM };
static const char *const fam_name[NFAM] = { "scalar", "round", "ew", "range", "tc", "int", "sparse", "tcx", "env" };

/* ------------------------------------------------------------ environments */

enum {
  E_DAZ_FTZ, E_FE_UP, E_FE_DOWN, E_FE_TZ, E_RC_UP, E_RC_DOWN, E_RC_TZ, E_X87_PC24, E_TRAPS, E_ALL, NENV
};
static const char *const env_name[NENV] = { "DAZ+FTZ",   "fesetround(UPWARD)", "fesetround(DOWNWARD)",
                                            "fesetround(TOWARDZERO)", "MXCSR RC up", "MXCSR RC down",
                                            "MXCSR RC zero", "x87 PC 24-bit", "exceptions unmasked",
                                            "all of them" };

#if TS_X86
static unsigned short x87_cw(void)
{
  unsigned short cw;
  __asm__ volatile("fnstcw %0" : "=m"(cw));
  return cw;
}
static void x87_set_cw(unsigned short cw) { __asm__ volatile("fldcw %0" : : "m"(cw)); }
static unsigned short x87_sw(void)
{
  unsigned short sw;
  __asm__ volatile("fnstsw %0" : "=m"(sw));
  return sw;
}
#endif

/* Set environment e in the calling thread (on top of the default one). The
   sticky flags are left raised on purpose: the library must leave them so. */
static void env_set(int e)
{
  fesetenv(FE_DFL_ENV);
#if TS_X86
  _mm_setcsr(_mm_getcsr() | 0x28u);   /* SSE's inexact and overflow flags (x87 flags pending under
                                         unmasked exceptions would trap at the next x87 instruction) */
#else
  feraiseexcept(FE_INEXACT | FE_OVERFLOW);
#endif
  switch (e) {
  case E_FE_UP: fesetround(FE_UPWARD); break;
  case E_FE_DOWN: fesetround(FE_DOWNWARD); break;
  case E_FE_TZ: fesetround(FE_TOWARDZERO); break;
#if TS_X86
  case E_DAZ_FTZ: _mm_setcsr(_mm_getcsr() | 0x8040u); break;
  case E_RC_UP: _mm_setcsr((_mm_getcsr() & ~0x6000u) | 0x4000u); break;
  case E_RC_DOWN: _mm_setcsr((_mm_getcsr() & ~0x6000u) | 0x2000u); break;
  case E_RC_TZ: _mm_setcsr(_mm_getcsr() | 0x6000u); break;
  case E_X87_PC24: x87_set_cw((unsigned short)(x87_cw() & ~0x300u)); break;
#endif
  case E_TRAPS: feenableexcept(FE_ALL_EXCEPT); break;
  case E_ALL:
    fesetround(FE_DOWNWARD);
#if TS_X86
    _mm_setcsr(_mm_getcsr() | 0x8040u);
    x87_set_cw((unsigned short)(x87_cw() & ~0x300u));
#endif
    feenableexcept(FE_ALL_EXCEPT);
    break;
  default: break;
  }
}

static void env_reset(void) { fesetenv(FE_DFL_ENV); }

/* the whole control and status state of the calling thread, as integers */
typedef struct { unsigned csr; unsigned short cw, sw; int round, flags; } fpstate;
static fpstate state_get(void)
{
  fpstate s = { 0, 0, 0, 0, 0 };
#if TS_X86
  s.csr = _mm_getcsr();
  s.cw = x87_cw();
  s.sw = (unsigned short)(x87_sw() & 0x3f);
#endif
  s.round = fegetround();
  s.flags = fetestexcept(FE_ALL_EXCEPT);
  return s;
}
static int state_same(fpstate a, fpstate b)
{
  return a.csr == b.csr && a.cw == b.cw && a.sw == b.sw && a.round == b.round && a.flags == b.flags;
}

static atomic_long traps;

/* A trap raised inside the library: counted; the saved context gets every
   exception masked, so the instruction runs again without trapping. */
static void on_sigfpe(int sig, siginfo_t *si, void *ctx)
{
  (void)sig;
  (void)si;
  atomic_fetch_add(&traps, 1);
#if defined(__x86_64__) && defined(__linux__)
  ucontext_t *uc = ctx;
  uc->uc_mcontext.fpregs->mxcsr |= 0x1f80u;
  uc->uc_mcontext.fpregs->cwd |= 0x3fu;
  uc->uc_mcontext.fpregs->swd &= (unsigned short)~0x80ffu;
#else
  (void)ctx;
  abort();   /* no way to resume: the trap still fails the test, loudly */
#endif
}

/* ------------------------------------------------------------ the data */

enum { NS = 1024, NBIG = 1 << 16, NRANGE = 260 * 4096, NH = 256, G = 48 };

static float xs[NS], ys[NS], zs[NS];
static double xd[NS];
static uint16_t h16[NH], b16[NH];
static float *big, *rbig;
static double *bigd;   /* big's first NBIG / 4 values in binary64 */
static float ga[G * G], gb[G * G], gc[G * G], qx[G * G];
static int8_t ia[G * G], ib[G * G];
static int32_t ic[G * G];
/* block-scaled and mixed FP8 operands: K = KX element codes (E4M3 rows of A,
   E5M2 columns of B; FP2 codes in their low bits), scales per 16 (SX of them) */
enum { KX = 96, SX = KX / 16 };
static uint8_t xa[G * KX], xb[KX * G], sxa[G * SX], sxb[SX * G], s4a[G * SX], s4b[SX * G];
static uint16_t ha[G * G], hb[G * G], hc[G * G];

static void put_fill(double *tab, size_t n, const mpe_format *t, const mpe_format *src, uint64_t seed,
                     double *out, size_t from, size_t to)
{
  ts_bgen g;
  ts_bgen_init(&g, t, src, seed);
  size_t m = ts_bgen_table(&g, tab, n);
  for (size_t i = from; i < to; i++)
    out[i] = i - from < m ? tab[i - from] : ts_bgen_next(&g);
}

static void data_make(void)
{
  uint64_t seed = ts_seed();
  double *tab = malloc(8192 * sizeof *tab), *v = malloc(NS * sizeof *v);
  const mpe_format *f32 = mpe_format_of(MPE_FP32);
  /* binary32 values at the edges of FP16, BF16 (binary32's subnormals), E4M3, E2M1 */
  put_fill(tab, 8192, mpe_format_of(MPE_FP16), f32, seed, v, 0, NS / 4);
  put_fill(tab, 8192, mpe_format_of(MPE_BF16), f32, seed + 1, v, NS / 4, NS / 2);
  put_fill(tab, 8192, mpe_format_of(MPE_E4M3), f32, seed + 2, v, NS / 2, 3 * NS / 4);
  put_fill(tab, 8192, mpe_format_lookup("e2m1"), f32, seed + 3, v, 3 * NS / 4, NS);
  for (int i = 0; i < NS; i++) {
    xs[i] = (float)v[i];
    xd[i] = v[i];
  }
  xs[0] = ts_u2f(0x805e15b0u);   /* a binary32 subnormal: BF16 RNE keeps it (0x805e0000) */
  xs[1] = -0x1p-30f;              /* rounds to -0 in FP16 under RNE */
  xd[0] = xs[0];
  xd[1] = xs[1];
  uint64_t st = seed + 7;
  for (int i = 0; i < NS; i++) {
    ys[i] = xs[(ts_rand64(&st) % NS)];
    zs[i] = (ts_rand64(&st) & 1) ? xs[(ts_rand64(&st) % NS)] : -xs[i];
  }
  /* FP16 and BF16 operands: their own edges (subnormals, maxima, ties) */
  put_fill(tab, 8192, mpe_format_of(MPE_FP16), NULL, seed + 4, v, 0, NH);
  for (int i = 0; i < NH; i++)
    h16[i] = mpe_fp64_to_fp16(v[i], MPE_RNE);
  put_fill(tab, 8192, mpe_format_of(MPE_BF16), NULL, seed + 5, v, 0, NH);
  for (int i = 0; i < NH; i++)
    b16[i] = mpe_fp64_to_bf16(v[i], MPE_RNE);
  big = malloc(NBIG * sizeof *big);
  for (int i = 0; i < NBIG; i++)
    big[i] = xs[(i * 7 + i / NS) % NS];
  bigd = malloc(NBIG / 4 * sizeof *bigd);
  for (int i = 0; i < NBIG / 4; i++)
    bigd[i] = big[i];
  rbig = malloc(NRANGE * sizeof *rbig);
  for (int i = 0; i < NRANGE; i++)
    rbig[i] = xs[ts_rand64(&st) % NS];
  /* tensor-core operands: FP16 values at its edges (subnormal products, maxima,
     cancellation), one block of subnormal-only rows */
  put_fill(tab, 8192, mpe_format_of(MPE_FP16), NULL, seed + 6, v, 0, NS);
  for (int i = 0; i < G * G; i++) {
    ga[i] = (float)v[ts_rand64(&st) % NS];
    gb[i] = (float)v[ts_rand64(&st) % NS];
    gc[i] = xs[ts_rand64(&st) % NS];
    if (i < 4 * G)
      ga[i] = ldexpf((float)(ts_rand64(&st) % 1024), -24);
    qx[i] = isfinite(ga[i]) ? ga[i] : 0.5f;   /* quantisation takes finite values only */
    ia[i] = (int8_t)(ts_rand64(&st) & 0xff);
    ib[i] = (int8_t)(ts_rand64(&st) & 0xff);
    ic[i] = (int32_t)(ts_rand64(&st) >> 33) - (1 << 30);
    ha[i] = h16[ts_rand64(&st) % NH];
    hb[i] = h16[ts_rand64(&st) % NH];
    hc[i] = h16[ts_rand64(&st) % NH];
  }
  /* every code (NaN and inf among them); UE8M0 scales near 2^0 and, one in
     eight, at 2^-127.. (products far below binary32's normals: DAZ/FTZ matter) */
  for (int i = 0; i < G * KX; i++) {
    xa[i] = (uint8_t)(ts_rand64(&st) % 8 ? ts_rand64(&st) & 0x77 : ts_rand64(&st));
    xb[i] = (uint8_t)(ts_rand64(&st) % 8 ? ts_rand64(&st) & 0x73 : ts_rand64(&st));
  }
  for (int i = 0; i < G * SX; i++) {
    sxa[i] = (uint8_t)(ts_rand64(&st) % 8 ? 117 + ts_rand64(&st) % 20 : ts_rand64(&st) % 8);
    sxb[i] = (uint8_t)(ts_rand64(&st) % 8 ? 117 + ts_rand64(&st) % 20 : ts_rand64(&st) % 8);
    s4a[i] = (uint8_t)(ts_rand64(&st) % 0x7f);
    s4b[i] = (uint8_t)(ts_rand64(&st) % 0x7f);
  }
  free(tab);
  free(v);
}

/* ------------------------------------------------------------ the workload */

typedef struct {
  uint32_t *w[NFAM];
  size_t n[NFAM], cap[NFAM];
} outs;

static void put(outs *o, int f, const void *p, size_t bytes)
{
  size_t nw = (bytes + 3) / 4;
  if (o->n[f] + nw > o->cap[f]) {
    o->cap[f] = 2 * (o->n[f] + nw);
    o->w[f] = realloc(o->w[f], o->cap[f] * sizeof(uint32_t));
    ck_assert_ptr_nonnull(o->w[f]);
  }
  o->w[f][o->n[f] + nw - 1] = 0;
  memcpy(o->w[f] + o->n[f], p, bytes);
  o->n[f] += nw;
}
static void put32(outs *o, int f, uint32_t v) { put(o, f, &v, 4); }

static const mpe_type tc_types[] = { MPE_FP16, MPE_BF16 };
static const char *const tc_models[] = { "h100", "v100", "a100", "fma-chain", "exact" };

static void fam_scalar(outs *o)
{
  static const char *const fmts[] = { "fp16", "bf16", "tf32", "e4m3", "e5m2", "e2m1", "e3m2" };
  mpe_seed(42);
  for (int r = 0; r < MPE_NROUND; r++) {
    mpe_round_opts op = { .round = (mpe_round)r, .seed = 9 };
    for (int i = 0; i < NS; i++) {
      float x = xs[i];
      put32(o, F_SCALAR, mpe_fp32_to_fp16(x, r));
      put32(o, F_SCALAR, mpe_fp32_to_bf16(x, r));
      put32(o, F_SCALAR, mpe_fp64_to_fp16(xd[i], r));
      put32(o, F_SCALAR, mpe_fp64_to_bf16(xd[i], r));
      float t = mpe_fp32_to_tf32(x, r);
      put(o, F_SCALAR, &t, 4);
      put32(o, F_SCALAR, mpe_fp32_to_e4m3(x, r, i & 1));
      put32(o, F_SCALAR, mpe_fp32_to_e5m2(x, r, i & 1));
      put32(o, F_SCALAR, (uint16_t)mpe_fp32_to_q16(x, 12, r));
      if (i % 8 == 0)
        for (size_t k = 0; k < sizeof fmts / sizeof *fmts; k++) {
          double y = mpe_round_scalar(xd[i], mpe_format_lookup(fmts[k]), &op);
          put(o, F_SCALAR, &y, 8);
        }
    }
    for (int i = 0; i < NH; i++) {
      uint16_t a = h16[i], b = h16[(i * 7 + 3) % NH], c = h16[(i * 13 + 5) % NH];
      put32(o, F_SCALAR, mpe_fp16_add(a, b, r));
      put32(o, F_SCALAR, mpe_fp16_sub(a, b, r));
      put32(o, F_SCALAR, mpe_fp16_mul(a, b, r));
      put32(o, F_SCALAR, mpe_fp16_div(a, b, r));
      put32(o, F_SCALAR, mpe_fp16_sqrt(a, r));
      put32(o, F_SCALAR, mpe_fp16_fma(a, b, c, r));
      a = b16[i], b = b16[(i * 7 + 3) % NH], c = b16[(i * 13 + 5) % NH];
      put32(o, F_SCALAR, mpe_bf16_add(a, b, r));
      put32(o, F_SCALAR, mpe_bf16_sub(a, b, r));
      put32(o, F_SCALAR, mpe_bf16_mul(a, b, r));
      put32(o, F_SCALAR, mpe_bf16_div(a, b, r));
      put32(o, F_SCALAR, mpe_bf16_sqrt(a, r));
      put32(o, F_SCALAR, mpe_bf16_fma(a, b, c, r));
    }
  }
  for (int i = 0; i < NH; i++) {
    float a = mpe_fp16_to_fp32(h16[i]), b = mpe_bf16_to_fp32(b16[i]);
    double d = mpe_fp16_to_fp64(h16[i]);
    float e = mpe_e4m3_to_fp32((uint8_t)i), f = mpe_e5m2_to_fp32((uint8_t)i), q = mpe_q16_to_fp32((int16_t)h16[i], 20);
    put(o, F_SCALAR, &a, 4);
    put(o, F_SCALAR, &b, 4);
    put(o, F_SCALAR, &d, 8);
    put(o, F_SCALAR, &e, 4);
    put(o, F_SCALAR, &f, 4);
    put(o, F_SCALAR, &q, 4);
  }
  put32(o, F_SCALAR, mpe_flags_test_clear(~0u));
}

static float ybuf[NBIG];
static double ydbuf[NS];

static void fam_round(outs *o)
{
  size_t nt;
  for (int t = 0; t < 64; t++) {
    const mpe_format *f = mpe_format_of((mpe_type)t);
    if (!f || t == MPE_FP64 || !mpe_format_is_signed(f))
      continue;
    for (int r = 0; r < MPE_NROUND; r++) {
      mpe_round_opts op = { .round = (mpe_round)r, .flush_subnormals = r & 1, .saturate = (r >> 1) & 1,
                            .seed = 5, .offset = 3 };
      if (mpe_format_precision(f) <= 24 && mpe_round_f32(ybuf, xs, NS, f, &op) == MPE_OK)
        put(o, F_ROUND, ybuf, NS * sizeof(float));
      if (mpe_round_f64(ydbuf, xd, NS, f, &op) == MPE_OK)
        put(o, F_ROUND, ydbuf, NS * sizeof(double));
    }
  }
  /* long enough for the OpenMP path */
  static const mpe_type bt[] = { MPE_BF16, MPE_FP16, MPE_E4M3 };
  static const mpe_round br[] = { MPE_RNE, MPE_RU, MPE_SR };
  for (nt = 0; nt < 3; nt++) {
    mpe_round_opts op = { .round = br[nt], .seed = 11 };
    ck_assert_int_eq(mpe_round_f32(ybuf, big, NBIG, mpe_format_of(bt[nt]), &op), MPE_OK);
    put(o, F_ROUND, ybuf, NBIG * sizeof(float));
  }
  double *yd = malloc(NBIG / 4 * sizeof *yd);
  mpe_round_opts op = { .round = MPE_RD };
  ck_assert_int_eq(mpe_round_f64(yd, bigd, NBIG / 4, mpe_format_of(MPE_FP16), &op), MPE_OK);
  put(o, F_ROUND, yd, NBIG / 4 * sizeof(double));
  free(yd);
  put32(o, F_ROUND, mpe_flags_test_clear(~0u));
}

static void fam_ew(outs *o)
{
  static const mpe_type ft[] = { MPE_FP16, MPE_BF16, MPE_E4M3 };
  static const mpe_round er[] = { MPE_RNE, MPE_RZ, MPE_RU, MPE_RD, MPE_SR };
  for (int t = 0; t < 3; t++)
    for (int r = 0; r < 5; r++) {
      const mpe_format *f = mpe_format_of(ft[t]);
      mpe_round_opts op = { .round = er[r], .seed = 3 };
#define EW(call)                                                                                   \
  do {                                                                                             \
    if ((call) == MPE_OK)                                                                          \
      put(o, F_EW, ybuf, NS * sizeof(float));                                                      \
  } while (0)
      EW(mpe_ew_add(ybuf, xs, ys, NS, f, &op));
      EW(mpe_ew_sub(ybuf, xs, ys, NS, f, &op));
      EW(mpe_ew_mul(ybuf, xs, ys, NS, f, &op));
      EW(mpe_ew_div(ybuf, xs, ys, NS, f, &op));
      EW(mpe_ew_fma(ybuf, xs, ys, zs, NS, f, &op));
      EW(mpe_ew_scale(ybuf, 0.3f, xs, NS, f, &op));
      EW(mpe_ew_sqrt(ybuf, xs, NS, f, &op));
      EW(mpe_ew_recip(ybuf, xs, NS, f, &op));
      EW(mpe_ew_exp(ybuf, xs, NS, f, &op));
      EW(mpe_ew_log(ybuf, xs, NS, f, &op));
      EW(mpe_ew_tanh(ybuf, xs, NS, f, &op));
      EW(mpe_ew_sigmoid(ybuf, xs, NS, f, &op));
      EW(mpe_ew_softmax(ybuf, xs, 16, NS / 16, f, &op));
#undef EW
    }
  /* long enough for the OpenMP path */
  mpe_round_opts op = { .round = MPE_RD };
  ck_assert_int_eq(mpe_ew_mul(ybuf, big, big + 1, NBIG - 1, mpe_format_of(MPE_FP16), &op), MPE_OK);
  put(o, F_EW, ybuf, (NBIG - 1) * sizeof(float));
  ck_assert_int_eq(mpe_ew_exp(ybuf, big, NBIG, mpe_format_of(MPE_BF16), &op), MPE_OK);
  put(o, F_EW, ybuf, NBIG * sizeof(float));
  ck_assert_int_eq(mpe_ew_softmax(ybuf, big, 64, NBIG / 64, mpe_format_of(MPE_FP16), NULL), MPE_OK);
  put(o, F_EW, ybuf, NBIG * sizeof(float));
  put32(o, F_EW, mpe_flags_test_clear(~0u));
}

static void fam_range(outs *o, int several)
{
  const mpe_format *fs[] = { mpe_format_of(MPE_FP16), mpe_format_of(MPE_BF16), mpe_format_of(MPE_E4M3),
                             mpe_format_of(MPE_E5M2), mpe_format_of(MPE_TF32), mpe_format_lookup("e2m1") };
  size_t nf = sizeof fs / sizeof *fs;
  mpe_range *r;
  ck_assert_int_eq(mpe_range_create(&r, fs, nf, NULL), MPE_OK);
  ck_assert_int_eq(mpe_range_add_f32(r, xs, NS), MPE_OK);
  ck_assert_int_eq(mpe_range_add_f64(r, xd, NS), MPE_OK);
  /* enough blocks for the threads (only where there are several: it is the slow part) */
  if (several)
    ck_assert_int_eq(mpe_range_add_f32(r, rbig, NRANGE), MPE_OK);
  for (size_t k = 0; k < nf; k++) {
    mpe_range_stats s;
    memset(&s, 0, sizeof s);
    ck_assert_int_eq(mpe_range_stats_get(r, k, &s), MPE_OK);
    put(o, F_RANGE, &s, sizeof s);
    uint64_t u = 0, uf = 0;
    int ov = 0;
    mpe_range_at_scale(r, k, 7, &u, &uf, &ov);
    put(o, F_RANGE, &u, 8);
    put(o, F_RANGE, &uf, 8);
    put32(o, F_RANGE, (uint32_t)ov);
  }
  mpe_range_summary sm;
  memset(&sm, 0, sizeof sm);
  ck_assert_int_eq(mpe_range_summary_get(r, &sm), MPE_OK);
  put(o, F_RANGE, &sm, sizeof sm);
  mpe_range_free(r);
}

static void fam_tc(outs *o)
{
  static float d[G * G];
  static uint16_t dh[G * G];
  for (size_t mi = 0; mi < sizeof tc_models / sizeof *tc_models; mi++)
    for (int ti = 0; ti < 2; ti++) {
      const mpe_tc_model *m = mpe_tc_model_get(tc_models[mi], tc_types[ti]);
      if (!m)
        continue;
      memcpy(d, gc, sizeof d);
      if (mpe_gemm(m, MPE_ROW_MAJOR, MPE_NO_TRANS, MPE_TRANS, G, G, G, 0.7f, ga, MPE_FP32, G, gb, MPE_FP32, G,
                   -1.3f, d, MPE_FP32, G) == MPE_OK)
        put(o, F_TC, d, sizeof d);
      if (ti == 0 && mpe_mma(m, G, G, G, ga, MPE_FP32, G, gb, MPE_FP32, G, gc, G, d, MPE_FP32, G) == MPE_OK)
        put(o, F_TC, d, sizeof d);
      memset(dh, 0, sizeof dh);
      if (ti == 1 && mpe_gemm(m, MPE_COL_MAJOR, MPE_TRANS, MPE_NO_TRANS, 16, 16, G, 1.0f, ga, MPE_FP32, G, gb,
                              MPE_FP32, G, 0.5f, dh, MPE_FP16, 16) == MPE_OK)
        put(o, F_TC, dh, 256 * sizeof *dh);
    }
  put32(o, F_TC, mpe_flags_test_clear(~0u));
}

static void fam_int(outs *o)
{
  static int32_t d[G * G];
  static const char *const im[] = { "h100", "a100", "exact" };
  for (int mi = 0; mi < 3; mi++) {
    const mpe_tc_model *m = mpe_tc_model_get(im[mi], MPE_INT8);
    ck_assert_ptr_nonnull(m);
    memcpy(d, ic, sizeof d);
    ck_assert_int_eq(mpe_gemm(m, MPE_ROW_MAJOR, MPE_NO_TRANS, MPE_NO_TRANS, G, G, G, 3.0f, ia, MPE_INT8, G, ib,
                              MPE_INT8, G, -2.0f, d, MPE_INT32, G), MPE_OK);
    put(o, F_INT, d, sizeof d);
    ck_assert_int_eq(mpe_mma(m, G, G, G, ia, MPE_INT8, G, ib, MPE_INT8, G, ic, G, d, MPE_INT32, G), MPE_OK);
    put(o, F_INT, d, sizeof d);
  }
  /* quantisation around the integer cores: binary64 quotients rounded under a mode */
  static float sc[G];
  static int32_t zr[G];
  static int8_t q[G * G];
  mpe_round_opts op = { .round = MPE_RD };
  ck_assert_int_eq(mpe_quant_params(sc, zr, qx, G, G, MPE_QUANT_ROWS, MPE_INT8, 0), MPE_OK);
  ck_assert_int_eq(mpe_quant_encode(q, qx, G, G, MPE_QUANT_ROWS, MPE_INT8, sc, zr, &op), MPE_OK);
  put(o, F_INT, sc, sizeof sc);
  put(o, F_INT, zr, sizeof zr);
  put(o, F_INT, q, sizeof q);
  put32(o, F_INT, mpe_flags_test_clear(~0u));
}

static void fam_sparse(outs *o)
{
  static float p[G * G], v[G * G], c[G * G];
  static uint16_t meta[G * G];
  int kept = mpe_sparse_kept(G), mw = mpe_sparse_meta_words(G);
  ck_assert_int_eq(mpe_prune_2_4(MPE_ROW_MAJOR, G, G, ga, MPE_FP32, G, p, G), MPE_OK);
  ck_assert_int_eq(mpe_sparse_compress(MPE_ROW_MAJOR, G, G, p, MPE_FP32, G, v, kept, meta, mw), MPE_OK);
  put(o, F_SPARSE, p, sizeof p);
  for (int ti = 0; ti < 2; ti++) {
    const mpe_tc_model *m = mpe_tc_model_get("h100", tc_types[ti]);
    {
      memcpy(c, gc, sizeof c);
      ck_assert_int_eq(mpe_gemm_sp(m, ti * 4, MPE_ROW_MAJOR, MPE_NO_TRANS, G, G, G, 0.7f, v, MPE_FP32, kept, meta,
                                   mw, gb, MPE_FP32, G, -1.3f, c, MPE_FP32, G), MPE_OK);
      put(o, F_SPARSE, c, sizeof c);
    }
  }
  put32(o, F_SPARSE, mpe_flags_test_clear(~0u));
}

static void fam_tcx(outs *o)
{
  static float d[G * G];
  const mpe_tc_model *s8 = mpe_tc_model_get("b200:mxf8f6f4", MPE_E4M3);
  const mpe_tc_model *s4 = mpe_tc_model_get("b200:mxf4nvf4", MPE_E2M1);
  ck_assert_ptr_nonnull(s8);
  ck_assert_ptr_nonnull(s4);
  /* scales per 32: SX / 2 of them per row of A and column of B */
  ck_assert_int_eq(mpe_mma_scaled(s8, G, G, KX, xa, MPE_E4M3, KX, xb, MPE_E5M2, G, sxa, SX, sxb, G, MPE_E8M0, 32,
                                  gc, G, d, MPE_FP32, G), MPE_OK);
  put(o, F_TCX, d, sizeof d);
  ck_assert_int_eq(mpe_mma_scaled(s4, G, G, KX, xa, MPE_E2M1, KX, xb, MPE_E2M1, G, s4a, SX, s4b, G, MPE_E4M3, 16,
                                  gc, G, d, MPE_FP32, G), MPE_OK);
  put(o, F_TCX, d, sizeof d);
  memcpy(d, gc, sizeof d);
  ck_assert_int_eq(mpe_gemm_scaled(s8, MPE_ROW_MAJOR, MPE_NO_TRANS, MPE_NO_TRANS, G, G, KX, 0.7f, xa, MPE_E5M2, KX,
                                   xb, MPE_E4M3, G, sxa, SX, sxb, G, MPE_E8M0, 32, -1.3f, d, MPE_FP32, G), MPE_OK);
  put(o, F_TCX, d, sizeof d);
  /* mixed FP8 on the plain models */
  ck_assert_int_eq(mpe_mma(mpe_tc_model_get("h100", MPE_E4M3), G, G, KX, xa, MPE_E4M3, KX, xb, MPE_E5M2, G, gc, G,
                           d, MPE_FP32, G), MPE_OK);
  put(o, F_TCX, d, sizeof d);
  memcpy(d, gc, sizeof d);
  ck_assert_int_eq(mpe_gemm(mpe_tc_model_get("b200", MPE_E5M2), MPE_ROW_MAJOR, MPE_NO_TRANS, MPE_NO_TRANS, G, G, KX,
                            0.7f, xa, MPE_E5M2, KX, xb, MPE_E4M3, G, -1.3f, d, MPE_FP32, G), MPE_OK);
  put(o, F_TCX, d, sizeof d);
  /* binary16 C (subnormals among them), binary32 D */
  ck_assert_int_eq(mpe_mma_cd(mpe_tc_model_get("v100", MPE_FP16), G, G, G, ha, MPE_FP16, G, hb, MPE_FP16, G, hc,
                              MPE_FP16, G, d, MPE_FP32, G), MPE_OK);
  put(o, F_TCX, d, sizeof d);
  put32(o, F_TCX, mpe_flags_test_clear(~0u));
}

typedef void (*family_fn)(outs *);

/* Run the workload with environment e (-1: the default) set in the calling
   thread, or in every thread of the team when `team`. Each family runs with
   the environment just set, and the state it leaves is compared with the
   state before it. */
static void workload(outs *o, int e, int team, int several)
{
  for (int f = 0; f < NFAM; f++)
    o->n[f] = 0;
  for (int f = 0; f < F_ENV; f++) {
#ifdef _OPENMP
    if (team && e >= 0) {
#pragma omp parallel
      env_set(e);
    }
#else
    (void)team;
#endif
    if (e >= 0)
      env_set(e);
    fpstate before = state_get();
    switch (f) {
    case F_SCALAR: fam_scalar(o); break;
    case F_ROUND: fam_round(o); break;
    case F_EW: fam_ew(o); break;
    case F_RANGE: fam_range(o, several); break;
    case F_TC: fam_tc(o); break;
    case F_INT: fam_int(o); break;
    case F_SPARSE: fam_sparse(o); break;
    case F_TCX: fam_tcx(o); break;
    }
    fpstate after = state_get();
    env_reset();
#ifdef _OPENMP
    if (team && e >= 0) {
#pragma omp parallel
      env_reset();
    }
#endif
    put32(o, F_ENV, !state_same(before, after));
    if (!state_same(before, after))
      printf("%s left csr %#x (was %#x), x87 cw %#x (%#x) sw %#x (%#x), round %#x (%#x), flags %#x (%#x)\n",
             fam_name[f], after.csr, before.csr, after.cw, before.cw, after.sw, before.sw, after.round, before.round,
             after.flags, before.flags);
  }
}

static long differ(const outs *a, const outs *b, int f)
{
  if (a->n[f] != b->n[f])
    return (long)(a->n[f] > b->n[f] ? a->n[f] : b->n[f]);
  long d = 0;
  for (size_t i = 0; i < a->n[f]; i++)
    d += a->w[f][i] != b->w[f][i];
  return d;
}

START_TEST(test_environments)
{
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_sigaction = on_sigfpe;
  sa.sa_flags = SA_SIGINFO;
  sigemptyset(&sa.sa_mask);
  ck_assert_int_eq(sigaction(SIGFPE, &sa, NULL), 0);
  env_reset();
  data_make();
  static const char *const team_name[3] = { "1 thread", "4, caller", "4, team" };
  long total = 0, total_traps = 0;
  outs ref, run;
  memset(&ref, 0, sizeof ref);
  memset(&run, 0, sizeof run);
  printf("%-22s %-5s %-9s", "environment", "level", "threads");
  for (int f = 0; f < NFAM; f++)
    printf(" %7s", fam_name[f]);
  printf(" %6s\n", "traps");
  for (int lv = 0; lv < 3; lv++) {
    if (mpe_simd_level_set(lv) != lv)
      continue;
    for (int tm = 0; tm < 3; tm++) {
      /* one thread at level 0, the caller-only team at the top level, the team everywhere */
      if ((tm == 0 && lv > 0) || (tm == 1 && mpe_simd_level_set(lv + 1) != lv))
        continue;
      mpe_simd_level_set(lv);
#ifdef _OPENMP
      omp_set_num_threads(tm == 0 ? 1 : 4);
#else
      if (tm > 0)
        continue;
#endif
      /* the reference: the default environment, the same team */
      workload(&ref, -1, 0, tm == 2);
      for (int f = 0; f < F_ENV; f++)
        ck_assert_msg(ref.n[f] > 0, "no output from %s", fam_name[f]);
      long envd = 0;
      for (size_t i = 0; i < ref.n[F_ENV]; i++)
        envd += ref.w[F_ENV][i] != 0;
      if (envd) {
        printf("%-22s %-5d %-9s %55s %7ld\n", "default", lv, team_name[tm], "", envd);
        total += envd;
      }
      for (int e = 0; e < NENV; e++) {
        long t0 = atomic_load(&traps);
        workload(&run, e, tm == 2, tm == 2);
        long nt = atomic_load(&traps) - t0;
        printf("%-22s %-5d %-9s", env_name[e], lv, team_name[tm]);
        for (int f = 0; f < NFAM; f++) {
          long d = f == F_ENV ? 0 : differ(&ref, &run, f);
          if (f == F_ENV)
            for (size_t i = 0; i < run.n[F_ENV]; i++)
              d += run.w[F_ENV][i] != 0;
          printf(" %7ld", d);
          total += d;
        }
        printf(" %6ld\n", nt);
        total_traps += nt;
      }
    }
  }
  mpe_simd_level_set(-1);
  for (int f = 0; f < NFAM; f++) {
    free(ref.w[f]);
    free(run.w[f]);
  }
  free(big);
  free(bigd);
  free(rbig);
  ck_assert_msg(total == 0 && total_traps == 0, "%ld words differ or environments changed, %ld traps", total,
                total_traps);
}
END_TEST

static Suite *fenv_suite(void)
{
  Suite *s = suite_create("fenv");
  TCase *tc = tcase_create("fenv");
  tcase_add_test(tc, test_environments);
  tcase_set_timeout(tc, 1200);
  suite_add_tcase(s, tc);
  return s;
}

int main(void)
{
  setvbuf(stdout, NULL, _IONBF, 0);
  return ts_run(fenv_suite());
}
