/* make bench: rounding a 64 Mi-element binary32 array, as a ratio to memcpy of
   the same array (and, for FP16 RNE, to a loop of the F16C instructions),
   on one thread (uniform and gradient-like data) and on all threads (uniform),
   then in cache (a small array rounded many times, one thread), then the
   cost of one call (scalar conversions and arithmetic, short arrays) in ns
   against a call of the F16C instruction, in the default floating-point
   environment and with the caller's MXCSR at DAZ+FTZ (mpemu(3): the library
   then loads its own control word on entry and the caller's on exit).
   Ratio = reference time / mpemu time:
   1.0 means as fast as the reference, higher is faster. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <math.h>
#include <immintrin.h>
#ifdef _OPENMP
#include <omp.h>
#endif
#include <mpemu.h>
#include "benchutil.h"
#include "mpei_fenv.h"

static size_t n = (size_t)64 << 20;

/* the reference of the call rows: one F16C conversion behind a call */
__attribute__((noinline)) static uint16_t f16c_call(float x) { return (uint16_t)_cvtss_sh(x, 0); }
/* the same under the library's save/set/restore of the environment (lib/mpei_fenv.h):
   the conversion raises the inexact flag, so the exit restores MXCSR as a library call does */
__attribute__((noinline)) static uint16_t f16c_guarded(float x)
{
  MPEI_FENV_GUARD();
  return (uint16_t)_cvtss_sh(x, 0);
}

/* ns per call of the scalar and short-array entry points, one thread */
static void call_rows(void)
{
  enum { NV = 4096, REPS = 2 };
  static float v[NV], yv[1024];
  static uint16_t hv[NV];
  uint64_t s = 0x9e3779b97f4a7c15ull;
  for (int i = 0; i < NV; i++) {
    s ^= s << 13; s ^= s >> 7; s ^= s << 17;
    v[i] = (float)(((double)(s >> 11) * 0x1p-53 - 0.5) * 1e-3);
    hv[i] = (uint16_t)_cvtss_sh(v[i], 0);
  }
  const double calls = (double)NV * REPS;
  printf("\nCall overhead, one thread: ns per call (best of 15; %d calls per timing), ratio = F16C call / mpemu call\n",
         NV * REPS);
  printf("%-32s %-10s %10s %12s\n", "call", "caller env", "ns/call", "vs F16C");
  unsigned csr0 = _mm_getcsr();
  for (int env = 0; env < 2; env++) {
    if (env)
      _mm_setcsr(csr0 | 0x8040u);   /* DAZ + FTZ, as -Ofast sets them */
    const char *en = env ? "DAZ+FTZ" : "default";
    volatile uint16_t sink16 = 0;
    double tref, t;
    BENCH_BEST(15, tref, for (int r_ = 0; r_ < REPS; r_++) for (int i = 0; i < NV; i++) sink16 = f16c_call(v[i]));
    printf("%-32s %-10s %10.2f %12s\n", "F16C vcvtps2ph (the reference)", en, 1e9 * tref / calls, "1.00x");
#define CALL_ROW(label, per, stmt)                                                                   \
  do {                                                                                               \
    BENCH_BEST(15, t, for (int r_ = 0; r_ < REPS; r_++) for (int i = 0; i < NV; i += (per)) stmt);    \
    printf("%-32s %-10s %10.2f %11.2fx\n", label, en, 1e9 * t / (calls / (per)), tref / (t * (per)));   \
  } while (0)
    CALL_ROW("F16C under MPEI_FENV_GUARD", 1, sink16 = f16c_guarded(v[i]));
    CALL_ROW("mpe_fp32_to_fp16 RNE", 1, sink16 = mpe_fp32_to_fp16(v[i], MPE_RNE));
    CALL_ROW("mpe_fp32_to_bf16 RNE", 1, sink16 = mpe_fp32_to_bf16(v[i], MPE_RNE));
    CALL_ROW("mpe_fp16_add RNE", 1, sink16 = mpe_fp16_add(hv[i], hv[(i + 1) & (NV - 1)], MPE_RNE));
    CALL_ROW("mpe_fp16_to_fp32 (bits only)", 1, sink16 = (uint16_t)mpe_fp16_to_fp32(hv[i]));
    mpe_round_opts o = { MPE_RNE, 0, 0, 0, 0 };
    const mpe_format *f16 = mpe_format_of(MPE_FP16);
    CALL_ROW("mpe_round_f32 fp16 RNE n=16", 16, mpe_round_f32(yv, v + i, 16, f16, &o));
    CALL_ROW("mpe_round_f32 fp16 RNE n=1024", 1024, mpe_round_f32(yv, v + i, 1024, f16, &o));
#undef CALL_ROW
    (void)sink16;
  }
  _mm_setcsr(csr0);
}
static float *x, *y;

static void par_memcpy(void *dst, const void *src, size_t bytes)
{
#ifdef _OPENMP
  int nt = omp_get_max_threads();
#pragma omp parallel for schedule(static)
  for (int t = 0; t < nt; t++) {
    size_t lo = bytes / (size_t)nt * (size_t)t, hi = t == nt - 1 ? bytes : bytes / (size_t)nt * (size_t)(t + 1);
    memcpy((char *)dst + lo, (const char *)src + lo, hi - lo);
  }
#else
  memcpy(dst, src, bytes);
#endif
}

/* The demo's real gradients (MPE_BENCH_GRADS=DIR: DIR/grad_step*.npy, written
   by examples/amp_dump, little-endian float32 .npy), repeated to fill x[0..n).
   Returns the number of distinct values read, 0 if there are none. */
static size_t load_grads(const char *dir)
{
  size_t have = 0;
  for (int step = 0; step < 1000 && have < n; step++) {
    char path[4096];
    snprintf(path, sizeof path, "%s/grad_step%d.npy", dir, step);
    FILE *fp = fopen(path, "rb");
    if (!fp)
      break;
    unsigned char head[12];
    size_t hl = 0;
    if (fread(head, 1, 10, fp) == 10 && memcmp(head, "\x93NUMPY", 6) == 0) {
      if (head[6] == 1)
        hl = 10 + (size_t)(head[8] | head[9] << 8);
      else if (fread(head + 10, 1, 2, fp) == 2)
        hl = 12 + (size_t)(head[8] | head[9] << 8 | head[10] << 16 | (size_t)head[11] << 24);
    }
    if (hl == 0 || fseek(fp, (long)hl, SEEK_SET) != 0) {
      fclose(fp);
      break;
    }
    have += fread(x + have, 4, n - have, fp);
    fclose(fp);
  }
  for (size_t i = have; have > 0 && i < n; i++)
    x[i] = x[i % have];
  return have;
}

static void f16c_loop(float *dst, const float *src, size_t len)
{
#ifdef _OPENMP
#pragma omp parallel for schedule(static)
#endif
  for (size_t i = 0; i < len; i += 8) {
    __m128i h = _mm256_cvtps_ph(_mm256_loadu_ps(src + i), _MM_FROUND_TO_NEAREST_INT);
    _mm256_storeu_ps(dst + i, _mm256_cvtph_ps(h));
  }
}

int main(int argc, char **argv)
{
  /* --cache: the in-cache rows only; --calls: the call rows only; a number: the array length */
  if (argc > 1 && strcmp(argv[1], "--calls") == 0) {
    call_rows();
    return 0;
  }
  int cache_only = argc > 1 && strcmp(argv[1], "--cache") == 0;
  if (argc > 1 && !cache_only)
    n = strtoull(argv[1], NULL, 0) & ~(size_t)7;
  x = aligned_alloc(64, n * 4);
  y = aligned_alloc(64, n * 4);
  if (!x || !y) {
    fprintf(stderr, "bench_round: out of memory\n");
    return 1;
  }
#ifdef _OPENMP
  int maxt = omp_get_max_threads();
#else
  int maxt = 1;
#endif
  printf("\nArray rounding, %zu Mi binary32 elements (%s); ratio = reference time / mpemu time\n", n >> 20,
         mpe_cpu_features());
  printf("Targets (issue 13), one thread, every distribution: RNE and RZ >= 0.9x memcpy, SR >= 0.75x\n");
  const char *grads0 = getenv("MPE_BENCH_GRADS");
  size_t ngrads = grads0 && !cache_only ? load_grads(grads0) : 0;
  if (ngrads)
    printf("demo-grads: the %zu gradient values of examples/amp_dump's 12 steps, repeated\n", ngrads);
  printf("%-11s %-6s %-5s %8s %12s %12s %12s %12s  %s\n", "data", "format", "mode", "threads", "mpemu GB/s",
         "memcpy GB/s", "vs memcpy", "vs F16C", "target");
  int missed = 0;
  static const mpe_type types[] = { MPE_FP16, MPE_BF16, MPE_TF32, MPE_E4M3, MPE_E5M2 };
  static const mpe_round modes[] = { MPE_RNE, MPE_RZ, MPE_SR };
  /* uniform [-100, 100] (every value normal in every format), then gradient-like
     N(0, sigma): sigma = 1e-3 and 1e-5 put most FP16/FP8 results in the
     subnormal and underflow range */
  static const struct { const char *name; double sigma; } dists[] = {
    { "U(-100,100)", 0 }, { "N(0,1)", 1 }, { "N(0,1e-3)", 1e-3 }, { "N(0,1e-5)", 1e-5 },
    { "demo-grads", -1 } };   /* the last only with MPE_BENCH_GRADS (make bench sets it) */
  const char *grads = getenv("MPE_BENCH_GRADS");
  int threads[2] = { 1, maxt };
  for (size_t di = 0; di < (cache_only ? 0 : sizeof dists / sizeof dists[0]); di++) {
    if (dists[di].sigma < 0) {
      size_t have = grads ? load_grads(grads) : 0;
      if (have == 0)
        continue;
    }
    uint64_t s = 88172645463325252ull;
    for (size_t i = 0; dists[di].sigma >= 0 && i < n; i += 2) {
      double u[2];
      for (int k = 0; k < 2; k++) {
        s ^= s << 13; s ^= s >> 7; s ^= s << 17;
        u[k] = ((double)(s >> 11) + 0.5) * 0x1p-53;
      }
      if (dists[di].sigma == 0) {
        x[i] = (float)(u[0] * 200.0 - 100.0);
        x[i + 1] = (float)(u[1] * 200.0 - 100.0);
      } else {   /* Box-Muller */
        double r = dists[di].sigma * sqrt(-2.0 * log(u[0]));
        x[i] = (float)(r * cos(6.283185307179586 * u[1]));
        x[i + 1] = (float)(r * sin(6.283185307179586 * u[1]));
      }
    }
    /* all threads on the uniform data only: keeps the run short */
    for (int ti = 0; ti < (maxt > 1 && di == 0 ? 2 : 1); ti++) {
#ifdef _OPENMP
      omp_set_num_threads(threads[ti]);
#endif
      double tmem, tf16c;
      BENCH_BEST(5, tmem, par_memcpy(y, x, n * 4));
      BENCH_BEST(5, tf16c, f16c_loop(y, x, n));
      for (size_t a = 0; a < sizeof types / sizeof types[0]; a++)
        for (size_t b = 0; b < sizeof modes / sizeof modes[0]; b++) {
          mpe_round_opts o = { modes[b], 0, 0, 42, 0 };
          const mpe_format *f = mpe_format_of(types[a]);
          double t;
          BENCH_BEST(5, t, mpe_round_f32(y, x, n, f, &o));
          double gbs = 2.0 * (double)n * 4 / t / 1e9, mgbs = 2.0 * (double)n * 4 / tmem / 1e9;
          char vs16[32] = "";
          if (types[a] == MPE_FP16 && modes[b] == MPE_RNE)
            snprintf(vs16, sizeof vs16, "%.2fx", tf16c / t);
          double want = modes[b] == MPE_SR ? 0.75 : 0.9;
          char tg[32] = "";
          if (threads[ti] == 1) {
            snprintf(tg, sizeof tg, ">= %.2f %s", want, tmem / t >= want ? "met" : "NOT met");
            missed += tmem / t < want;
          }
          printf("%-11s %-6s %-5s %8d %12.1f %12.1f %11.2fx %12s  %s\n", dists[di].name, mpe_format_name(f),
                 mpe_round_name(modes[b]), threads[ti], gbs, mgbs, tmem / t, vs16, tg);
        }
    }
  }
  /* in cache: 8 Ki elements (32 KiB in, 32 KiB out: L2 on every current
     x86), one thread, many passes per timing; the F16C loop is the reference
     for FP16 RNE (target >= 0.8x) */
  {
#ifdef _OPENMP
    omp_set_num_threads(1);
#endif
    enum { NC = 8192, PASSES = 4000 };
    uint64_t s = 88172645463325252ull;
    for (size_t i = 0; i < NC; i++) {
      s ^= s << 13; s ^= s >> 7; s ^= s << 17;
      x[i] = (float)(((double)(s >> 11) * 0x1p-53 - 0.5) * 1e-3);   /* mixed normal/subnormal in FP16 and FP8 */
    }
    double tmem, tf16c;
    BENCH_BEST(5, tmem, for (int p_ = 0; p_ < PASSES; p_++) memcpy(y, x, NC * 4));
    BENCH_BEST(5, tf16c, for (int p_ = 0; p_ < PASSES; p_++) f16c_loop(y, x, NC));
    printf("\nIn cache: %d binary32 elements U(-5e-4,5e-4), %d passes, one thread; F16C loop %.1f GB/s, memcpy %.1f GB/s\n",
           NC, PASSES, 2.0 * NC * 4 * PASSES / tf16c / 1e9, 2.0 * NC * 4 * PASSES / tmem / 1e9);
    printf("%-6s %-5s %12s %12s %12s  %s\n", "format", "mode", "mpemu GB/s", "vs memcpy", "vs F16C", "target");
    for (size_t a = 0; a < sizeof types / sizeof types[0]; a++)
      for (size_t b = 0; b < sizeof modes / sizeof modes[0]; b++) {
        mpe_round_opts o = { modes[b], 0, 0, 42, 0 };
        const mpe_format *f = mpe_format_of(types[a]);
        double t;
        BENCH_BEST(5, t, for (int p_ = 0; p_ < PASSES; p_++) mpe_round_f32(y, x, NC, f, &o));
        char tg[32] = "";
        if (types[a] == MPE_FP16 && modes[b] == MPE_RNE) {
          snprintf(tg, sizeof tg, ">= 0.80 %s", tf16c / t >= 0.8 ? "met" : "NOT met");
          missed += tf16c / t < 0.8;
        }
        printf("%-6s %-5s %12.1f %11.2fx %11.2fx  %s\n", mpe_format_name(f), mpe_round_name(modes[b]),
               2.0 * NC * 4 * PASSES / t / 1e9, tmem / t, tf16c / t, tg);
      }
  }
  call_rows();
#ifdef _OPENMP
  omp_set_num_threads(maxt);
#endif
  printf("%d target(s) not met\n", missed);
  free(x);
  free(y);
  return 0;
}
