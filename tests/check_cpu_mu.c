/* The CPU dot-product models (mpe_tc_model_get(3), "CPU models") against the
   CPU's own instructions and against exact references, and the binary16
   arithmetic of mpe_fp16_* against AVX512_FP16.

   One program, run once per part: its argument is the part's name (model,
   avx512bf16, avx512vnni, avxvnni, amxbf16, amxfp16, amxint8, avx512fp16) or the
   test name make check gives it, tests/check_cpu_NAME.cpu (tests/emu.mk). A part
   that needs an instruction this CPU lacks exits 77 and names it.
     0  model:       every CPU model through mpe_mma against an MPFR reference of the
                     instruction's pseudo-code (binary32 fmas rounded once each,
                     flushing as documented) and exact int64 for the integer rows
     1  avx512-bf16: VDPBF16PS (mpe_cpu_mma / mpe_cpu_gemm) against the model and MPFR
     2  avx512-vnni: VPDPBUSD(S), EVEX
     3  avx-vnni:    VPDPBUSD(S), VEX
     4  amx-bf16:    TDPBF16PS; also which reading (SDM, Intrinsics Guide) it follows
     5  amx-fp16:    TDPFP16PS
     6  amx-int8:    TDPB[SU][SU]D
     7  avx512-fp16: mpe_fp16_add/sub/mul/div/sqrt/fma against vaddph & co. with
                     embedded rounding (RNE, RZ, RU, RD)
   Every comparison is bit for bit (a NaN result matches any NaN: the library's is
   canonical, the hardware's carries a payload). Counts of outputs compared are
   printed. CPU_MU_ITER scales the random rounds (default 1). */
#include "config.h"
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <stdint.h>
#include <cpuid.h>
#include <mpfr.h>
#include "mpemu.h"

static uint64_t rng = 0x9e3779b97f4a7c15ull;
static uint32_t rnd32(void)
{
  rng ^= rng << 13; rng ^= rng >> 7; rng ^= rng << 17;
  return (uint32_t)(rng >> 16);
}
static float u2f(uint32_t u) { float f; memcpy(&f, &u, 4); return f; }
static uint32_t f2u(float f) { uint32_t u; memcpy(&u, &f, 4); return u; }
static int same32(uint32_t x, uint32_t y)
{
  const int nx = (x & 0x7fffffffu) > 0x7f800000u, ny = (y & 0x7fffffffu) > 0x7f800000u;
  return nx || ny ? nx && ny : x == y;
}

/* ------------------------------------------------------------ the reference */

/* a bfloat16 or binary16 pattern as a float, subnormals read as zero with daz */
static float dec16(uint16_t h, int fp16, int daz)
{
  if (!fp16)
    return (h & 0x7f80) == 0 && daz ? u2f((uint32_t)(h & 0x8000) << 16) : u2f((uint32_t)h << 16);
  const int e = (h >> 10) & 31, mt = h & 0x3ff;
  const float s = h & 0x8000 ? -1.0f : 1.0f;
  if (e == 31)
    return mt ? NAN : s * INFINITY;
  if (e == 0)
    return daz ? s * 0.0f : s * ldexpf((float)mt, -24);
  return s * ldexpf((float)(mt | 0x400), e - 25);
}

/* one binary32 fma a*b + c in MPFR: 24 bits, nearest-even, exponent unbounded;
   then overflow to inf and, with ftz, a result below 2^-126 to a signed zero */
static float ref_fma(float a, float b, float c, int ftz)
{
  static int init;
  static mpfr_t x, y, z, r;
  if (!init) {
    mpfr_inits2(24, x, y, z, r, (mpfr_ptr)0);
    init = 1;
  }
  mpfr_set_flt(x, a, MPFR_RNDN);
  mpfr_set_flt(y, b, MPFR_RNDN);
  mpfr_set_flt(z, c, MPFR_RNDN);
  mpfr_fma(r, x, y, z, MPFR_RNDN);
  if (mpfr_nan_p(r))
    return NAN;
  const double d = mpfr_get_d(r, MPFR_RNDN);   /* exact: 24 bits, exponent within binary64's */
  if (fabs(d) >= 0x1p128)
    return d < 0 ? -INFINITY : INFINITY;
  if (fabs(d) < 0x1p-126 && d != 0) {
    if (!ftz) {
      fprintf(stderr, "reference: no subnormal results without FTZ\n");
      exit(99);
    }
    return d < 0 ? -0.0f : 0.0f;
  }
  return (float)d;
}

/* output (i, j) of the pseudo-code: pairs (2p, 2p+1), K padded with +0 */
static float ref_dot(int order, int flush, int fp16, int L, const uint16_t *a, const uint16_t *b, long bs, int k,
                     float c)
{
  const int dab = flush & MPE_TC_DAZ_AB, ftz = (flush & MPE_TC_FTZ) != 0;
  if ((flush & MPE_TC_DAZ_C) && (f2u(c) & 0x7f800000u) == 0)
    c = u2f(f2u(c) & 0x80000000u);
  float d = c;
  const int np = (k + 1) / 2;
  for (int p0 = 0; p0 < np; p0 += L / 2) {
    float e = 0.0f, o = 0.0f;
    for (int p = p0; p < np && p < p0 + L / 2; p++) {
      float x[2], y[2];
      for (int z = 0; z < 2; z++) {
        const int l = 2 * p + z;
        x[z] = l < k ? dec16(a[l], fp16, dab) : 0.0f;
        y[z] = l < k ? dec16(b[l * bs], fp16, dab) : 0.0f;
      }
      if (order == MPE_TC_PAIR_SPLIT) {
        e = ref_fma(x[0], y[0], e, ftz);
        o = ref_fma(x[1], y[1], o, ftz);
      } else if (order == MPE_TC_PAIR_ODD_FIRST) {
        d = ref_fma(x[1], y[1], d, ftz);
        d = ref_fma(x[0], y[0], d, ftz);
      } else {
        d = ref_fma(x[0], y[0], d, ftz);
        d = ref_fma(x[1], y[1], d, ftz);
      }
    }
    if (order == MPE_TC_PAIR_SPLIT)
      d = ref_fma(d, 1.0f, ref_fma(e, 1.0f, o, ftz), ftz);
  }
  return d;
}

/* ------------------------------------------------------------ data */

static const uint16_t bf_pool[] = {
  0x0000, 0x8000, 0x0001, 0x8001, 0x007f, 0x0040, 0x0080, 0x8080, 0x0081, 0x00ff, 0x0100, 0x3f80, 0xbf80,
  0x3f81, 0x3fff, 0x7f7f, 0xff7f, 0x7f80, 0xff80, 0x7fc0, 0x7f81, 0xffc1, 0x5f80, 0xdf80, 0x1f80, 0x2000,
  0x3380, 0x3400, 0xb380, 0x4b80, 0x0f80, 0x3f00 };
static const uint16_t h_pool[] = {
  0x0000, 0x8000, 0x0001, 0x8001, 0x03ff, 0x0200, 0x0400, 0x8400, 0x0401, 0x3c00, 0xbc00, 0x3c01, 0x3bff,
  0x7bff, 0xfbff, 0x7c00, 0xfc00, 0x7e00, 0x7c01, 0xfe01, 0x5bff, 0x1400, 0x0c00, 0x6800, 0xe800, 0x1000 };
static const uint32_t c_pool[] = {
  0x00000000, 0x80000000, 0x00000001, 0x80000001, 0x007fffff, 0x00400000, 0x00800000, 0x80800000, 0x00800001,
  0x00ffffff, 0x7f7fffff, 0xff7fffff, 0x7f800000, 0xff800000, 0x7fc00000, 0x3f800000, 0xbf800000, 0x4b800000,
  0xcb800000, 0x4b800001, 0x33800000, 0x0c000000, 0x01000000 };
#define NPOOL(p) ((int)(sizeof p / sizeof p[0]))

/* one input element: style 0 random bits, 1 exponents near 1 (cancellation,
   ties), 2 exponents near 2^-63 (products at the flush threshold), 3 small
   integers (ties against a c near 2^24); special: the chance of a pool value */
static uint16_t gen16(int fp16, int style, int special)
{
  if ((int)(rnd32() % 100) < special)
    return fp16 ? h_pool[rnd32() % NPOOL(h_pool)] : bf_pool[rnd32() % NPOOL(bf_pool)];
  const uint16_t s = (uint16_t)(rnd32() & 0x8000);
  if (fp16) {
    switch (style) {
    case 0: return (uint16_t)rnd32();
    case 2: return (uint16_t)(s | (rnd32() % 3) << 10 | (rnd32() & 0x3ff));   /* subnormal and tiny normal */
    case 3: return (uint16_t)(s | (uint16_t)(15 + rnd32() % 4) << 10 | (rnd32() & 0x300));
    default: return (uint16_t)(s | (uint16_t)(11 + rnd32() % 9) << 10 | (rnd32() & 0x3ff));
    }
  }
  switch (style) {
  case 0: return (uint16_t)rnd32();
  case 2: return (uint16_t)(s | (uint16_t)(127 - 70 + rnd32() % 16) << 7 | (rnd32() & 0x7f));
  case 3: return (uint16_t)(s | (uint16_t)(127 + rnd32() % 4) << 7 | (rnd32() & 0x60));
  default: return (uint16_t)(s | (uint16_t)(127 - 6 + rnd32() % 12) << 7 | (rnd32() & 0x7f));
  }
}

static uint32_t gen_c(int style, int special)
{
  if ((int)(rnd32() % 100) < special)
    return c_pool[rnd32() % NPOOL(c_pool)];
  const uint32_t s = rnd32() & 0x80000000u;
  switch (style) {
  case 0: return rnd32() << 1 ^ rnd32();
  case 2: return s | (uint32_t)(1 + rnd32() % 8) << 23 | (rnd32() & 0x7fffff);
  case 3: return s | (uint32_t)(127 + 24 + rnd32() % 2) << 23 | (rnd32() & 0x7fffff);
  default: return s | (uint32_t)(127 - 4 + rnd32() % 8) << 23 | (rnd32() & 0x7fffff);
  }
}

static const int ks[] = { 1, 2, 3, 4, 5, 7, 16, 31, 32, 33, 63, 64, 65, 100 };
#define NK ((int)(sizeof ks / sizeof ks[0]))

static int iters(void)
{
  const char *e = getenv("CPU_MU_ITER");
  int n = e ? atoi(e) : 1;
  return n > 0 ? n : 1;
}

/* ------------------------------------------------------------ floating-point models */

typedef int (*mma_fn)(const mpe_tc_model *, int, int, int, const void *, mpe_type, int, const void *, mpe_type,
                      int, const void *, int, void *, mpe_type, int);

/* Random problems through the model (mpe_mma) and, with hw, through mpe_cpu_mma,
   both against the reference; alt (optional): a second model whose agreement
   with the hardware is only counted. Returns the mismatches. */
__attribute__((unused)) static long run_float(const char *name, mpe_type in, int hw, const mpe_tc_model *alt, long *alt_miss,
                      long *count)
{
  const mpe_tc_model *m = mpe_tc_model_get(name, in);
  if (!m) {
    printf("FAIL: no model %s\n", name);
    return 1;
  }
  /* what the instruction computes, written here (not read from the model) */
  const int all = MPE_TC_DAZ_AB | MPE_TC_DAZ_C | MPE_TC_FTZ;
  struct { int pair_order, flush, block; } p = { MPE_TC_PAIR_SPLIT, all, 32 };
  if (!strcmp(name, "avx512-bf16"))
    p.pair_order = MPE_TC_PAIR_ODD_FIRST, p.block = 2;
  else if (!strcmp(name, "amx-fp16"))
    p.flush = MPE_TC_FTZ;
  const int fp16 = in == MPE_FP16;
  long bad = 0;
  const int rounds = 60 * iters();
  for (int t = 0; t < rounds; t++) {
    const int M = 1 + (int)(rnd32() % 17), N = 1 + (int)(rnd32() % 18), K = ks[t % NK];
    const int style = (int)(rnd32() % 4), special = t % 3 == 0 ? 0 : t % 3 == 1 ? 5 : 30;
    uint16_t *A = malloc(sizeof(uint16_t) * (size_t)M * K), *B = malloc(sizeof(uint16_t) * (size_t)K * N);
    float *C = malloc(sizeof(float) * (size_t)M * N), *D = malloc(sizeof(float) * (size_t)M * N);
    float *H = malloc(sizeof(float) * (size_t)M * N), *X = malloc(sizeof(float) * (size_t)M * N);
    for (int i = 0; i < M * K; i++)
      A[i] = gen16(fp16, style, special);
    for (int i = 0; i < K * N; i++)
      B[i] = gen16(fp16, style, special);
    for (int i = 0; i < M * N; i++)
      C[i] = u2f(gen_c(style, special));
    if (mpe_mma(m, M, N, K, A, in, K, B, in, N, C, N, D, MPE_FP32, N) != MPE_OK) {
      printf("FAIL: mpe_mma %s\n", name);
      return bad + 1;
    }
    if (hw) {
      int r = mpe_cpu_mma(m, M, N, K, A, in, K, B, in, N, C, N, H, MPE_FP32, N);
      if (r != MPE_OK) {
        printf("FAIL: mpe_cpu_mma %s: %d\n", name, r);
        return bad + 1;
      }
    }
    if (alt && mpe_mma(alt, M, N, K, A, in, K, B, in, N, C, N, X, MPE_FP32, N) != MPE_OK)
      return bad + 1;
    for (int i = 0; i < M; i++)
      for (int j = 0; j < N; j++) {
        const size_t o = (size_t)i * N + j;
        const float ref = ref_dot(p.pair_order, p.flush, fp16, p.block, A + (size_t)i * K, B + j, N, K, C[o]);
        int miss = !same32(f2u(D[o]), f2u(ref)) || (hw && !same32(f2u(H[o]), f2u(ref)));
        if (alt && hw && !same32(f2u(X[o]), f2u(H[o])))
          (*alt_miss)++;
        if (miss && bad < 5)
          printf("  %s M%d N%d K%d (%d,%d): c %08x model %08x hw %08x ref %08x\n", name, M, N, K, i, j,
                 f2u(C[o]), f2u(D[o]), hw ? f2u(H[o]) : 0, f2u(ref));
        bad += miss;
        (*count)++;
      }
    free(A); free(B); free(C); free(D); free(H); free(X);
  }
  return bad;
}

/* Boundary vectors, 1 × N × 2 (column j: B's pair and C are its own, A's pair
   is shared by a group of columns): the cases that settled the semantics on
   the hardware (order, fma, DAZ of A, B and C, flushing of either step,
   tininess after rounding, the sign of flushed and exact zeros, ties), then a
   sweep of products around the flush threshold 2^-126 against c near it. */
__attribute__((unused)) static long run_edges(const char *name, mpe_type in, int hw, int order, int flush,
                                              long *count)
{
  const mpe_tc_model *m = mpe_tc_model_get(name, in);
  const int fp16 = in == MPE_FP16;
  /* a0 a1 b0 b1 (bfloat16) c (binary32) */
  static const uint16_t hand[][4] = {
    { 0x3f80, 0x4b80, 0x3f80, 0x3f80 }, { 0x5f80, 0, 0x5f80, 0 }, { 0x0040, 0, 0x4480, 0 }, { 0x0080, 0, 0x3f80, 0 },
    { 0x0080, 0x2000, 0x3f80, 0x1f80 }, { 0x8080, 0, 0x3300, 0 }, { 0x80c0, 0, 0x3380, 0 }, { 0xa000, 0, 0x1f80, 0 },
    { 0x8000, 0x8000, 0x3f80, 0x3f80 }, { 0x8000, 0x0000, 0x3f80, 0x3f80 }, { 0xbf80, 0, 0x3f80, 0 },
    { 0x8000, 0, 0x3f80, 0 }, { 0x3380, 0, 0x3f80, 0 }, { 0x3380, 0, 0x3f80, 0 }, { 0x0001, 0x8001, 0x3f80, 0x3f80 } };
  static const uint32_t hand_c[] = { 0xcb800000, 0xff7fffff, 0, 0x00400000, 0, 0x00800000, 0x00800000, 0,
                                     0x80000000, 0x80000000, 0x3f800000, 0x80400000, 0x3f800000, 0x3f800001,
                                     0x00000001 };
  enum { NH = sizeof hand / sizeof hand[0] };
  long bad = 0;
  enum { NC = 64 };
  uint16_t A[2], B[2 * NC];
  float C[NC], D[NC], H[NC];
  /* groups of columns: the hand vectors one at a time, then the sweep */
  const int groups = fp16 ? NH + 64 : NH + 2 * 128;
  for (int g = 0; g < groups; g++) {
    int n = 1;
    if (g < NH) {
      if (fp16)
        continue;   /* bfloat16 patterns */
      A[0] = hand[g][0]; A[1] = hand[g][1]; B[0] = hand[g][2]; B[1] = hand[g][3];
      C[0] = u2f(hand_c[g]);
    } else if (!fp16) {
      /* a = +-(1 + mt/128) 2^-64, b = (1 + x) 2^-(62..64): products near
         2^-126, against c near +-2^-126 (normal, subnormal, zero) */
      const int h = g - NH, mt = h % 128, sg = h / 128;
      A[0] = (uint16_t)((sg ? 0x8000 : 0) | (127 - 64) << 7 | mt);
      A[1] = (uint16_t)(rnd32() % 2 ? 0x0000 : (127 - 70) << 7 | (rnd32() & 0x7f));
      n = NC;
      for (int j = 0; j < n; j++) {
        B[j] = (uint16_t)((127 - 62 - (int)(rnd32() % 3)) << 7 | (rnd32() & 0x7f));
        B[n + j] = (uint16_t)(rnd32() & 0x80ff);
        static const uint32_t cs[] = { 0x00800000, 0x00800001, 0x00800002, 0x00ffffff, 0x01000000, 0x007fffff, 0 };
        C[j] = u2f(cs[rnd32() % 7] | (rnd32() % 2 ? 0x80000000u : 0));
      }
      if (rnd32() % 2) {   /* the product near 2^-126 in the odd slot, which goes first in VDPBF16PS */
        uint16_t t = A[0]; A[0] = A[1]; A[1] = t;
        for (int j = 0; j < n; j++) {
          t = B[j]; B[j] = B[n + j]; B[n + j] = t;
        }
      }
    } else {
      /* binary16: c subnormal or at 2^-126 against tiny products */
      A[0] = (uint16_t)(rnd32() & 0x83ff);
      A[1] = (uint16_t)(rnd32() & 0x87ff);
      n = NC;
      for (int j = 0; j < n; j++) {
        B[j] = (uint16_t)(rnd32() & 0x87ff);
        B[n + j] = (uint16_t)(rnd32() & 0x83ff);
        C[j] = u2f((rnd32() & 0x80ffffffu) >> (rnd32() % 2));
      }
    }
    if (g < NH)
      B[1] = hand[g][3];
    const uint16_t *Bp = B;
    uint16_t Bt[2 * NC];
    if (g < NH) {
      Bt[0] = B[0]; Bt[1] = B[1];
      Bp = Bt;
    }
    if (mpe_mma(m, 1, n, 2, A, in, 2, Bp, in, n, C, n, D, MPE_FP32, n) != MPE_OK)
      return bad + 1;
    if (hw && mpe_cpu_mma(m, 1, n, 2, A, in, 2, Bp, in, n, C, n, H, MPE_FP32, n) != MPE_OK)
      return bad + 1;
    for (int j = 0; j < n; j++) {
      const float ref = ref_dot(order, flush, fp16, order == MPE_TC_PAIR_ODD_FIRST ? 2 : 32, A, Bp + j, n, 2, C[j]);
      const int miss = !same32(f2u(D[j]), f2u(ref)) || (hw && !same32(f2u(H[j]), f2u(ref)));
      if (miss && bad < 5)
        printf("  %s edge %d col %d: a %04x %04x b %04x %04x c %08x: model %08x hw %08x ref %08x\n", name, g, j, A[0],
               A[1], Bp[j], Bp[n + j], f2u(C[j]), f2u(D[j]), hw ? f2u(H[j]) : 0, f2u(ref));
      bad += miss;
      (*count)++;
    }
  }
  /* K = 1: the pair padded with +0 (a -0 accumulator becomes +0 on the pad's fma) */
  if (!fp16) {
    const uint16_t a1 = 0x8000;
    for (int j = 0; j < NC; j++) {
      B[j] = bf_pool[j % NPOOL(bf_pool)];
      C[j] = u2f(j % 2 ? 0x80000000u : c_pool[j % NPOOL(c_pool)]);
    }
    if (mpe_mma(m, 1, NC, 1, &a1, in, 1, B, in, NC, C, NC, D, MPE_FP32, NC) != MPE_OK ||
        (hw && mpe_cpu_mma(m, 1, NC, 1, &a1, in, 1, B, in, NC, C, NC, H, MPE_FP32, NC) != MPE_OK))
      return bad + 1;
    for (int j = 0; j < NC; j++) {
      const float ref = ref_dot(order, flush, 0, order == MPE_TC_PAIR_ODD_FIRST ? 2 : 32, &a1, B + j, NC, 1, C[j]);
      const int miss = !same32(f2u(D[j]), f2u(ref)) || (hw && !same32(f2u(H[j]), f2u(ref)));
      if (miss && bad < 5)
        printf("  %s K=1 col %d: b %04x c %08x: model %08x hw %08x ref %08x\n", name, j, B[j], f2u(C[j]),
               f2u(D[j]), hw ? f2u(H[j]) : 0, f2u(ref));
      bad += miss;
      (*count)++;
    }
  }
  return bad;
}

/* mpe_gemm against mpe_cpu_gemm: layouts, transposes, alpha and beta */
__attribute__((unused)) static long run_gemm(const char *name, mpe_type in, long *count)
{
  const mpe_tc_model *m = mpe_tc_model_get(name, in);
  const int fp16 = in == MPE_FP16;
  long bad = 0;
  for (int t = 0; t < 24; t++) {
    const int M = 1 + (int)(rnd32() % 40), N = 1 + (int)(rnd32() % 40), K = ks[rnd32() % NK];
    const mpe_layout lay = t & 1 ? MPE_COL_MAJOR : MPE_ROW_MAJOR;
    const mpe_trans ta = t & 2 ? MPE_TRANS : MPE_NO_TRANS, tb = t & 4 ? MPE_TRANS : MPE_NO_TRANS;
    const float alpha = t & 8 ? 0.75f : 1.0f, beta = t & 16 ? -2.0f : 0.0f;
    const int ar = ((ta == MPE_NO_TRANS) == (lay == MPE_ROW_MAJOR)) ? M : K, ac = M * K / ar;
    const int br = ((tb == MPE_NO_TRANS) == (lay == MPE_ROW_MAJOR)) ? K : N, bc = K * N / br;
    const int cc = lay == MPE_ROW_MAJOR ? N : M;
    const int lda = ac + 1, ldb = bc + 2, ldc = cc + 3, cr = M * N / cc;
    uint16_t *A = calloc((size_t)ar * lda, 2), *B = calloc((size_t)br * ldb, 2);
    float *C1 = calloc((size_t)cr * ldc, 4), *C2 = calloc((size_t)cr * ldc, 4);
    for (int i = 0; i < ar * lda; i++)
      A[i] = gen16(fp16, 1, 3);
    for (int i = 0; i < br * ldb; i++)
      B[i] = gen16(fp16, 1, 3);
    for (int i = 0; i < cr * ldc; i++)
      C1[i] = C2[i] = u2f(gen_c(1, 3));
    int r1 = mpe_gemm(m, lay, ta, tb, M, N, K, alpha, A, in, lda, B, in, ldb, beta, C1, MPE_FP32, ldc);
    int r2 = mpe_cpu_gemm(m, lay, ta, tb, M, N, K, alpha, A, in, lda, B, in, ldb, beta, C2, MPE_FP32, ldc);
    if (r1 || r2) {
      printf("FAIL: gemm %s: %d %d\n", name, r1, r2);
      return bad + 1;
    }
    for (int i = 0; i < cr * ldc; i++) {
      bad += !same32(f2u(C1[i]), f2u(C2[i]));
      (*count)++;
    }
    free(A); free(B); free(C1); free(C2);
  }
  return bad;
}

/* ------------------------------------------------------------ integer models */

static int32_t ref_int(const uint8_t *a, mpe_type at, const uint8_t *b, mpe_type bt, long bs, int k, int32_t c,
                       int L, int sat)
{
  int64_t d = c;
  for (int l0 = 0; l0 < k; l0 += L) {
    int64_t s = d;
    for (int l = l0; l < k && l < l0 + L; l++)
      s += (int64_t)(at == MPE_INT8 ? (int8_t)a[l] : a[l]) * (bt == MPE_INT8 ? (int8_t)b[l * bs] : b[l * bs]);
    d = sat ? (s > INT32_MAX ? INT32_MAX : s < INT32_MIN ? INT32_MIN : s) : (int32_t)(uint32_t)(uint64_t)s;
  }
  return (int32_t)d;
}

__attribute__((unused)) static long run_int(const char *name, mpe_type in, mpe_type at, mpe_type bt, int hw, long *count)
{
  const mpe_tc_model *m = mpe_tc_model_get(name, in);
  if (!m) {
    printf("FAIL: no model %s\n", name);
    return 1;
  }
  /* the instruction's K and saturation, written here (not read from the model) */
  const struct { int block, satfinite; } p = { strncmp(name, "amx", 3) ? 4 : 64, strstr(name, "vpdpbusds") != NULL };
  long bad = 0;
  for (int t = 0; t < 40 * iters(); t++) {
    const int M = 1 + (int)(rnd32() % 20), N = 1 + (int)(rnd32() % 40), K = ks[t % NK] + (t % 5 == 4 ? 200 : 0);
    uint8_t *A = malloc((size_t)M * K), *B = malloc((size_t)K * N);
    int32_t *C = malloc(sizeof(int32_t) * (size_t)M * N), *D = malloc(sizeof(int32_t) * (size_t)M * N),
            *H = malloc(sizeof(int32_t) * (size_t)M * N);
    const int ext = t % 3;   /* 0 random, 1 extremes (-128, 127, 255), 2 mixed */
    for (int i = 0; i < M * K; i++)
      A[i] = ext == 1 || (ext == 2 && rnd32() % 2) ? (at == MPE_INT8 ? (rnd32() & 1 ? 0x80 : 0x7f) : 0xff) : (uint8_t)rnd32();
    for (int i = 0; i < K * N; i++)
      B[i] = ext == 1 || (ext == 2 && rnd32() % 2) ? (bt == MPE_INT8 ? (rnd32() & 1 ? 0x80 : 0x7f) : 0xff) : (uint8_t)rnd32();
    static const int32_t cp[] = { INT32_MAX, INT32_MIN, INT32_MAX - 100000, INT32_MIN + 100000, 0, -1 };
    for (int i = 0; i < M * N; i++)
      C[i] = rnd32() % 2 ? cp[rnd32() % 6] : (int32_t)rnd32();
    if (mpe_mma(m, M, N, K, A, at, K, B, bt, N, C, N, D, MPE_INT32, N) != MPE_OK) {
      printf("FAIL: mpe_mma %s\n", name);
      return bad + 1;
    }
    if (hw && mpe_cpu_mma(m, M, N, K, A, at, K, B, bt, N, C, N, H, MPE_INT32, N) != MPE_OK) {
      printf("FAIL: mpe_cpu_mma %s\n", name);
      return bad + 1;
    }
    for (int i = 0; i < M; i++)
      for (int j = 0; j < N; j++) {
        const size_t o = (size_t)i * N + j;
        const int32_t ref = ref_int(A + (size_t)i * K, at, B + j, bt, N, K, C[o], p.block, p.satfinite);
        const int miss = D[o] != ref || (hw && H[o] != ref);
        if (miss && bad < 5)
          printf("  %s K%d (%d,%d): model %d hw %d ref %d\n", name, K, i, j, D[o], hw ? H[o] : 0, ref);
        bad += miss;
        (*count)++;
      }
    free(A); free(B); free(C); free(D); free(H);
  }
  return bad;
}

/* ------------------------------------------------------------ the parts */

__attribute__((unused)) static int report(const char *what, long bad, long count)
{
  printf("%s: %ld outputs compared, %ld mismatches\n", what, count, bad);
  return bad != 0;
}

static int part_model(void)
{
  int fail = 0;
  long c = 0, dummy = 0;
  {
    const long b_ = run_float("avx512-bf16", MPE_BF16, 0, NULL, &dummy, &c);
    fail |= report("avx512-bf16 model vs MPFR", b_, c);
  }
  c = 0;
  {
    const long b_ = run_float("amx-bf16", MPE_BF16, 0, NULL, &dummy, &c);
    fail |= report("amx-bf16 model vs MPFR", b_, c);
  }
  c = 0;
  {
    const long b_ = run_float("amx-fp16", MPE_FP16, 0, NULL, &dummy, &c);
    fail |= report("amx-fp16 model vs MPFR", b_, c);
  }
  {
    const int all = MPE_TC_DAZ_AB | MPE_TC_DAZ_C | MPE_TC_FTZ;
    long b_;
    c = 0;
    b_ = run_edges("avx512-bf16", MPE_BF16, 0, MPE_TC_PAIR_ODD_FIRST, all, &c);
    fail |= report("avx512-bf16 model vs MPFR, boundary vectors", b_, c);
    c = 0;
    b_ = run_edges("amx-bf16", MPE_BF16, 0, MPE_TC_PAIR_SPLIT, all, &c);
    fail |= report("amx-bf16 model vs MPFR, boundary vectors", b_, c);
    c = 0;
    b_ = run_edges("amx-fp16", MPE_FP16, 0, MPE_TC_PAIR_SPLIT, MPE_TC_FTZ, &c);
    fail |= report("amx-fp16 model vs MPFR, boundary vectors", b_, c);
  }
  /* the Intrinsics Guide's reading of TDPBF16PS, as a custom model */
  {
    mpe_tc_params p;
    mpe_tc_model_params(mpe_tc_model_get("amx-bf16", MPE_BF16), &p);
    p.pair_order = MPE_TC_PAIR_ASCENDING;
    mpe_tc_model *g = NULL;
    if (mpe_tc_model_custom(&g, &p) != MPE_OK)
      return 1;
    /* c = 0, products 2^24, 1, -2^24, 0: SDM (even, odd partial sums) 1, sequential 0 */
    const uint16_t A[4] = { 0x4b80, 0x3f80, 0xcb80, 0 }, B[4] = { 0x3f80, 0x3f80, 0x3f80, 0 };
    float d1, d2, c0 = 0.0f;
    mpe_mma(mpe_tc_model_get("amx-bf16", MPE_BF16), 1, 1, 4, A, MPE_BF16, 4, B, MPE_BF16, 1, &c0, 1, &d1, MPE_FP32, 1);
    mpe_mma(g, 1, 1, 4, A, MPE_BF16, 4, B, MPE_BF16, 1, &c0, 1, &d2, MPE_FP32, 1);
    printf("TDPBF16PS readings on [2^24, 1, -2^24, 0]: SDM %08x, Intrinsics Guide %08x\n", f2u(d1), f2u(d2));
    fail |= f2u(d1) != 0x3f800000u || f2u(d2) != 0;
    /* the custom model against the reference's sequential order */
    long bad = 0;
    c = 0;
    for (int t = 0; t < 30; t++) {
      const int K = ks[t % NK];
      uint16_t a[100], b[100];
      for (int l = 0; l < K; l++) {
        a[l] = gen16(0, t % 4, 10);
        b[l] = gen16(0, t % 4, 10);
      }
      float cc = u2f(gen_c(t % 4, 10)), d;
      mpe_mma(g, 1, 1, K, a, MPE_BF16, K, b, MPE_BF16, 1, &cc, 1, &d, MPE_FP32, 1);
      bad += !same32(f2u(d), f2u(ref_dot(MPE_TC_PAIR_ASCENDING, p.flush, 0, 32, a, b, 1, K, cc)));
      c++;
    }
    fail |= report("amx-bf16 Intrinsics Guide reading (custom) vs MPFR", bad, c);
    mpe_tc_model_free(g);
  }
  const char *ints[][2] = { { "amx-int8", "s8" }, { "avx512-vnni", "u8" }, { "avx512-vnni:vpdpbusds", "u8" },
                            { "avx-vnni", "u8" }, { "avx-vnni:vpdpbusds", "u8" } };
  for (int i = 0; i < 5; i++) {
    c = 0;
    const mpe_type in = ints[i][1][0] == 's' ? MPE_INT8 : MPE_UINT8;
    char lab[80];
    snprintf(lab, sizeof lab, "%s model (u8 x s8) vs exact int64", ints[i][0]);
    {
      const long b_ = run_int(ints[i][0], in, MPE_UINT8, MPE_INT8, 0, &c);
      fail |= report(lab, b_, c);
    }
  }
  c = 0;
  {
    const long b_ = run_int("amx-int8", MPE_INT8, MPE_INT8, MPE_INT8, 0, &c);
    fail |= report("amx-int8 model (s8 x s8) vs exact int64", b_, c);
  }
  /* the hardware path refuses what it cannot run */
  float x = 0;
  fail |= mpe_cpu_mma(mpe_tc_model_get("h100", MPE_BF16), 1, 1, 1, &x, MPE_FP32, 1, &x, MPE_FP32, 1, NULL, 1, &x,
                      MPE_FP32, 1) != MPE_EUNSUP;
  uint16_t h = 0;
  fail |= mpe_mma(mpe_tc_model_get("avx512-bf16", MPE_BF16), 1, 1, 1, &h, MPE_BF16, 1, &h, MPE_BF16, 1, NULL, 1, &h,
                  MPE_FP16, 1) != MPE_EUNSUP;
  /* no 2:4 sparse form */
  uint16_t meta = 0x44;
  fail |= mpe_gemm_sp(mpe_tc_model_get("amx-bf16", MPE_BF16), 0, MPE_ROW_MAJOR, MPE_NO_TRANS, 1, 1, 4, 1.0f, &h,
                      MPE_BF16, 2, &meta, 1, &h, MPE_BF16, 1, 0.0f, &x, MPE_FP32, 1) != MPE_EUNSUP;
  /* a custom model with pair_order or flush on another kind is refused */
  {
    mpe_tc_params p;
    mpe_tc_model_params(mpe_tc_model_get("h100", MPE_BF16), &p);
    p.flush = MPE_TC_FTZ;
    mpe_tc_model *bad = NULL;
    fail |= mpe_tc_model_custom(&bad, &p) != MPE_EINVAL || bad != NULL;
    mpe_tc_model_params(mpe_tc_model_get("avx512-bf16", MPE_BF16), &p);
    p.block = 3;   /* an odd instruction K */
    fail |= mpe_tc_model_custom(&bad, &p) != MPE_EINVAL;
  }
  return fail;
}

/* the instruction of the part, by CPUID (the library's own detection is what is tested) */
static int cpu_has(int part)
{
  unsigned a, b, c, d, a1 = 0, b1, c1, d1;
  if (!__get_cpuid_count(7, 0, &a, &b, &c, &d))
    return 0;
  if (a >= 1)
    __get_cpuid_count(7, 1, &a1, &b1, &c1, &d1);
  switch (part) {
  case 1: return (a1 >> 5) & 1;
  case 2: return (c >> 11) & 1;
  case 3: return (a1 >> 4) & 1;
  case 4: return (d >> 22) & 1;
  case 5: return (a1 >> 21) & 1;
  case 6: return (d >> 25) & 1;
  case 7: return (d >> 23) & 1;
  default: return 0;
  }
}
static const char *const part_instr[] = { "", "VDPBF16PS (AVX512_BF16)", "VPDPBUSD (AVX512_VNNI)",
                                          "VPDPBUSD (AVX-VNNI)", "TDPBF16PS (AMX-BF16)", "TDPFP16PS (AMX-FP16)",
                                          "TDPBSSD (AMX-INT8)", "VADDPH (AVX512_FP16)" };

/* parts 1 to 6: the instruction of the part against its model */
static int part_insn(int part)
{
  if (!cpu_has(part)) {
    printf("SKIP: %s not on this CPU\n", part_instr[part]);
    return 77;
  }
  static const char *const models[] = { "", "avx512-bf16", "avx512-vnni", "avx-vnni", "amx-bf16", "amx-fp16",
                                        "amx-int8" };
  const char *nm = models[part];
  const mpe_type in = part == 5 ? MPE_FP16 : part == 2 || part == 3 ? MPE_UINT8
                    : part == 6 ? MPE_INT8 : MPE_BF16;
  float x = 0;
  int32_t xi = 0;
  const int r0 = part == 2 || part == 3 || part == 6
                     ? mpe_cpu_mma(mpe_tc_model_get(nm, in), 1, 1, 1, &xi, MPE_UINT8, 1, &xi, MPE_INT8, 1, NULL, 1, &xi,
                                   MPE_INT32, 1)
                     : mpe_cpu_mma(mpe_tc_model_get(nm, in), 1, 1, 1, &x, MPE_FP32, 1, &x, MPE_FP32, 1, NULL, 1, &x,
                                   MPE_FP32, 1);
  if (r0 == MPE_EUNSUP) {   /* on the CPU, not granted by the operating system */
    printf("SKIP: %s not usable here (operating system)\n", part_instr[part]);
    return 77;
  }
  int fail = 0;
  long c = 0;
  char lab[120];
  if (part == 1 || part == 4 || part == 5) {
    mpe_tc_model *g = NULL;
    long gm = 0;
    if (part == 4) {   /* the Intrinsics Guide's reading beside the SDM's */
      mpe_tc_params p;
      mpe_tc_model_params(mpe_tc_model_get(nm, in), &p);
      p.pair_order = MPE_TC_PAIR_ASCENDING;
      if (mpe_tc_model_custom(&g, &p) != MPE_OK)
        return 1;
    }
    {
      const int all = MPE_TC_DAZ_AB | MPE_TC_DAZ_C | MPE_TC_FTZ;
      const long b_ = run_edges(nm, in, 1, part == 1 ? MPE_TC_PAIR_ODD_FIRST : MPE_TC_PAIR_SPLIT,
                                part == 5 ? MPE_TC_FTZ : all, &c);
      snprintf(lab, sizeof lab, "%s: hardware vs model vs MPFR, boundary vectors", part_instr[part]);
      fail |= report(lab, b_, c);
      c = 0;
    }
    snprintf(lab, sizeof lab, "%s: hardware vs model vs MPFR", part_instr[part]);
    {
      const long b_ = run_float(nm, in, 1, g, &gm, &c);
      fail |= report(lab, b_, c);
    }
    if (g) {
      printf("TDPBF16PS: the Intrinsics Guide's sequential reading differs from the hardware on %ld of %ld outputs\n",
             gm, c);
      mpe_tc_model_free(g);
    }
    c = 0;
    snprintf(lab, sizeof lab, "%s: mpe_cpu_gemm vs mpe_gemm (layouts, alpha, beta)", part_instr[part]);
    {
      const long b_ = run_gemm(nm, in, &c);
      fail |= report(lab, b_, c);
    }
    return fail;
  }
  if (part == 6) {
    const mpe_type ty[2] = { MPE_INT8, MPE_UINT8 };
    for (int s = 0; s < 4; s++) {
      c = 0;
      snprintf(lab, sizeof lab, "%s %s x %s: hardware vs model vs int64", part_instr[6], s & 2 ? "u8" : "s8",
               s & 1 ? "u8" : "s8");
      {
        const long b_ = run_int(nm, in, ty[s >> 1], ty[s & 1], 1, &c);
        fail |= report(lab, b_, c);
      }
    }
    return fail;
  }
  for (int s = 0; s < 2; s++) {
    char full[64];
    snprintf(full, sizeof full, "%s%s", nm, s ? ":vpdpbusds" : "");
    c = 0;
    snprintf(lab, sizeof lab, "%s%s: hardware vs model vs int64", part_instr[part], s ? " saturating" : "");
    {
      const long b_ = run_int(full, in, MPE_UINT8, MPE_INT8, 1, &c);
      fail |= report(lab, b_, c);
    }
  }
  /* mpe_cpu_gemm column-major: the u8 operand keeps its role */
  {
    const mpe_tc_model *m = mpe_tc_model_get(nm, in);
    uint8_t A[5 * 9], B[9 * 7];
    int32_t C1[35], C2[35];
    for (int i = 0; i < 45; i++) A[i] = (uint8_t)rnd32();
    for (int i = 0; i < 63; i++) B[i] = (uint8_t)rnd32();
    for (int i = 0; i < 35; i++) C1[i] = C2[i] = (int32_t)rnd32();
    int r1 = mpe_gemm(m, MPE_COL_MAJOR, MPE_NO_TRANS, MPE_NO_TRANS, 5, 7, 9, 3, A, MPE_UINT8, 5, B, MPE_INT8, 9, -1,
                      C1, MPE_INT32, 5);
    int r2 = mpe_cpu_gemm(m, MPE_COL_MAJOR, MPE_NO_TRANS, MPE_NO_TRANS, 5, 7, 9, 3, A, MPE_UINT8, 5, B, MPE_INT8, 9,
                          -1, C2, MPE_INT32, 5);
    fail |= r1 || r2 || memcmp(C1, C2, sizeof C1);
    fail |= report("column-major mpe_cpu_gemm vs mpe_gemm", memcmp(C1, C2, sizeof C1) != 0, 35);
  }
  return fail;
}

/* part 7: the binary16 arithmetic against AVX512_FP16 */
#if defined(__clang__) && __clang_major__ < 16 && !defined(__AVX512FP16__)
/* older clang declares the AVX512_FP16 intrinsics only under -mavx512fp16 */
static int part_fp16(void)
{
  printf("SKIP: %s: this compiler has no AVX512_FP16 intrinsics without -mavx512fp16\n", part_instr[7]);
  return 77;
}
#else
#include <immintrin.h>
/* one operation on the hardware, rounding r (a compile-time constant per case) */
#define HW_CASES(OP)                                                                               \
  switch (r) {                                                                                     \
  case MPE_RNE: v = OP(_MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC); break;                     \
  case MPE_RZ: v = OP(_MM_FROUND_TO_ZERO | _MM_FROUND_NO_EXC); break;                             \
  case MPE_RU: v = OP(_MM_FROUND_TO_POS_INF | _MM_FROUND_NO_EXC); break;                          \
  default: v = OP(_MM_FROUND_TO_NEG_INF | _MM_FROUND_NO_EXC); break;                              \
  }
__attribute__((target("avx512f,avx512fp16"))) static void hw_ph(int op, mpe_round r, const uint16_t *a,
                                                                 const uint16_t *b, const uint16_t *c, uint16_t *o)
{
  const __m512h x = (__m512h)_mm512_loadu_si512(a), y = (__m512h)_mm512_loadu_si512(b),
               z = (__m512h)_mm512_loadu_si512(c);
  __m512h v;
#define ADD(R) _mm512_add_round_ph(x, y, R)
#define SUB(R) _mm512_sub_round_ph(x, y, R)
#define MUL(R) _mm512_mul_round_ph(x, y, R)
#define DIV(R) _mm512_div_round_ph(x, y, R)
#define SQRT(R) _mm512_sqrt_round_ph(x, R)
#define FMA(R) _mm512_fmadd_round_ph(x, y, z, R)
  switch (op) {
  case 0: HW_CASES(ADD) break;
  case 1: HW_CASES(SUB) break;
  case 2: HW_CASES(MUL) break;
  case 3: HW_CASES(DIV) break;
  case 4: HW_CASES(SQRT) break;
  default: HW_CASES(FMA) break;
  }
  _mm512_storeu_si512(o, (__m512i)v);
}

static int same16(uint16_t x, uint16_t y)
{
  const int nx = (x & 0x7fff) > 0x7c00, ny = (y & 0x7fff) > 0x7c00;
  return nx || ny ? nx && ny : x == y;
}

static int part_fp16(void)
{
  if (!cpu_has(7) || !__builtin_cpu_supports("avx512f")) {
    printf("SKIP: %s not on this CPU\n", part_instr[7]);
    return 77;
  }
  static const char *const names[] = { "add", "sub", "mul", "div", "sqrt", "fma" };
  static const mpe_round modes[] = { MPE_RNE, MPE_RZ, MPE_RU, MPE_RD };
  static const char *const mnames[] = { "RNE", "RZ", "RU", "RD" };
  int fail = 0;
  enum { NB = 64 };
  const long nrand = 100000L * iters();
  for (int op = 0; op < 6; op++)
    for (int mi = 0; mi < 4; mi++) {
      const mpe_round r = modes[mi];
      long cnt = 0, bad = 0;
      /* every pair of the boundary values (their triples with a third for fma),
         then random patterns, 32 at a time */
      const long nb = NPOOL(h_pool), pairs = nb * nb;
      for (long base = 0; base < pairs + nrand; base += 32) {
        uint16_t a[32], b[32], c[32], o[32];
        for (int l = 0; l < 32; l++) {
          const long t = base + l;
          if (t < pairs) {
            a[l] = h_pool[t / nb];
            b[l] = h_pool[t % nb];
            c[l] = h_pool[rnd32() % nb];
          } else {
            const int st = (int)(t % 4);
            a[l] = gen16(1, st, 5);
            b[l] = gen16(1, st, 5);
            c[l] = gen16(1, st, 5);
          }
        }
        hw_ph(op, r, a, b, c, o);
        for (int l = 0; l < 32; l++) {
          uint16_t e;
          switch (op) {
          case 0: e = mpe_fp16_add(a[l], b[l], r); break;
          case 1: e = mpe_fp16_sub(a[l], b[l], r); break;
          case 2: e = mpe_fp16_mul(a[l], b[l], r); break;
          case 3: e = mpe_fp16_div(a[l], b[l], r); break;
          case 4: e = mpe_fp16_sqrt(a[l], r); break;
          default: e = mpe_fp16_fma(a[l], b[l], c[l], r); break;
          }
          if (!same16(e, o[l]) && bad++ < 3)
            printf("  fp16 %s %s %04x %04x %04x: library %04x hardware %04x\n", names[op], mnames[mi], a[l], b[l],
                   c[l], e, o[l]);
          cnt++;
        }
      }
      char lab[80];
      snprintf(lab, sizeof lab, "mpe_fp16_%s %s vs AVX512_FP16", names[op], mnames[mi]);
      fail |= report(lab, bad, cnt);
    }
  (void)NB;
  return fail;
}
#endif

int main(int argc, char **argv)
{
  static const char *const parts[] = { "model", "avx512bf16", "avx512vnni", "avxvnni",
                                       "amxbf16", "amxfp16", "amxint8", "avx512fp16" };
  /* the part's name, alone or in the test's name (a folder, "check_cpu_", ".cpu") */
  const char *a = argc == 2 ? argv[1] : "", *s = strrchr(a, '/');
  s = s ? s + 1 : a;
  if (strncmp(s, "check_cpu_", 10) == 0)
    s += 10;
  const size_t n = strcspn(s, ".");
  for (int p = 0; p < (int)(sizeof parts / sizeof parts[0]); p++)
    if (strlen(parts[p]) == n && strncmp(s, parts[p], n) == 0)
      return p == 0 ? part_model() : p == 7 ? part_fp16() : part_insn(p);
  fprintf(stderr, "usage: check_cpu_mu PART: model, avx512bf16, avx512vnni, avxvnni, amxbf16, amxfp16, "
                  "amxint8 or avx512fp16\n");
  return 99;
}
