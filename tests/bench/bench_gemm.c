/* make bench: tensor-core GEMM models against OpenBLAS SGEMM on the same data,
   all cores (OMP_NUM_THREADS and OPENBLAS_NUM_THREADS set both to fewer).
   $MPE_BENCH_GEMM_N: the sizes (default "1024 2048"); $MPE_BENCH_GEMM_MODELS:
   only the rows of these models (e.g. "fma-chain,h100"), without the call-shape
   and sparse tables. Each row: seconds of the model's mpe_gemm and of cblas_sgemm
   (medians), and the ratio t(cblas_sgemm) / t(model): the median of the
   ratios of runs made one right after the other, so that a machine shared
   with other work slows both alike. --scaled [n], --mixed [n], --c16 [n], --wide [n],
   --out16 [n]: only the block-scaled, mixed FP8, binary16-C, FP64-and-AMD or
   binary16-output table. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <math.h>
#include <time.h>
#include <cblas.h>
#include <mpemu.h>

static double now(void)
{
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static double frand(uint64_t *s)
{
  *s = *s * 6364136223846793005ull + 1442695040888963407ull;
  return (double)(*s >> 11) * 0x1p-53;
}

/* OpenBLAS's worker threads spin for a while after a call, and so do the
   OpenMP threads: on a small machine each would steal the other's cores.
   A pause before each timed call lets them go to sleep. */
static void settle(void)
{
  struct timespec t = { 0, 150000000L };
  nanosleep(&t, NULL);
}

static double median(double *v, int n)
{
  for (int i = 1; i < n; i++)
    for (int j = i; j > 0 && v[j - 1] > v[j]; j--) {
      double t = v[j]; v[j] = v[j - 1]; v[j - 1] = t;
    }
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

typedef struct { const char *name; mpe_type in; const char *target; double want; } row;

/* Every call shape (layout, transposes, alpha/beta) at LU's trailing-update size
   (m = n = 2048, k = 256, FP16 operands): each row is t(row-major, alpha 1, beta 0)
   / t(shape), medians of back-to-back pairs; the target is within 1.2x (>= 0.83). */
static int call_shapes(void)
{
  static const struct { const char *name; mpe_layout lay; mpe_trans ta, tb; float alpha, beta; } sh[] = {
    { "col N N a=-1 b=1", MPE_COL_MAJOR, MPE_NO_TRANS, MPE_NO_TRANS, -1.0f, 1.0f },
    { "col N N a=1 b=0", MPE_COL_MAJOR, MPE_NO_TRANS, MPE_NO_TRANS, 1.0f, 0.0f },
    { "row T N a=2 b=.5", MPE_ROW_MAJOR, MPE_TRANS, MPE_NO_TRANS, 2.0f, 0.5f },
    { "col T T a=1 b=1", MPE_COL_MAJOR, MPE_TRANS, MPE_TRANS, 1.0f, 1.0f },
  };
  static const char *models[] = { "fma-chain", "h100" };
  const int n = 2048, k = 256, reps = 3;
  uint16_t *a = malloc((size_t)n * k * 2), *b = malloc((size_t)n * k * 2);
  float *c = malloc((size_t)n * n * 4);
  if (!a || !b || !c)
    return 1;
  uint64_t s = 777;
  for (size_t i = 0; i < (size_t)n * k; i++) {
    a[i] = mpe_fp32_to_fp16((float)(2 * frand(&s) - 1), MPE_RNE);
    b[i] = mpe_fp32_to_fp16((float)(2 * frand(&s) - 1), MPE_RNE);
  }
  for (size_t i = 0; i < (size_t)n * n; i++)
    c[i] = (float)frand(&s);
  printf("\nmpe_gemm call shapes, m = n = %d, k = %d, FP16 operands: t(row N N a=1 b=0) / t(shape)\n", n, k);
  printf("%-10s %-18s %9s %9s %7s  %s\n", "model", "shape", "shape s", "plain s", "ratio", "target");
  int failed = 0;
  for (size_t mi = 0; mi < sizeof models / sizeof models[0]; mi++) {
    const mpe_tc_model *m = mpe_tc_model_get(models[mi], MPE_FP16);
    for (size_t si = 0; si < sizeof sh / sizeof sh[0]; si++) {
      double tp[3], tsh[3], rat[3];
      for (int r = 0; r < reps; r++) {
        settle();
        double t0 = now();
        int rc = mpe_gemm(m, MPE_ROW_MAJOR, MPE_NO_TRANS, MPE_NO_TRANS, n, n, k, 1.0f, a, MPE_FP16, k, b,
                          MPE_FP16, n, 0.0f, c, MPE_FP32, n);
        tp[r] = now() - t0;
        settle();
        /* the same stored arrays read as the shape asks: every shape has m = n, so
           each operand's leading dimension is k or n as its stored rows require */
        int row = sh[si].lay == MPE_ROW_MAJOR;
        int lda = (sh[si].ta == MPE_NO_TRANS) == row ? k : n, ldb = (sh[si].tb == MPE_NO_TRANS) == row ? n : k;
        t0 = now();
        rc |= mpe_gemm(m, sh[si].lay, sh[si].ta, sh[si].tb, n, n, k, sh[si].alpha, a, MPE_FP16, lda, b,
                       MPE_FP16, ldb, sh[si].beta, c, MPE_FP32, n);
        tsh[r] = now() - t0;
        if (rc) {
          fprintf(stderr, "mpe_gemm %s %s: failed\n", models[mi], sh[si].name);
          return 1;
        }
        rat[r] = tp[r] / tsh[r];
      }
      double ratio = median(rat, reps);
      if (ratio < 0.83)
        failed++;
      printf("%-10s %-18s %9.3f %9.3f %7.3f  >= 0.83%s\n", models[mi], sh[si].name, median(tsh, reps),
             median(tp, reps), ratio, ratio >= 0.83 ? " met" : " NOT MET");
    }
  }
  free(a); free(b); free(c);
  return failed;
}

/* 2:4 sparse against dense on the same shape (n × n × n, FP16 operands, the
   models' default grouping): A is pruned 2:4; the dense row multiplies the
   pruned A as stored (zeros included), the sparse row its compressed form.
   Ratio t(dense) / t(sparse), medians of back-to-back pairs; target >= 1.6. */
static int sparse_rows(int n)
{
  static const char *models[] = { "h100", "a100", "fma-chain" };
  const int reps = n > 1024 ? 3 : 5, kc = mpe_sparse_kept(n), nw = mpe_sparse_meta_words(n);
  uint16_t *a = malloc((size_t)n * n * 2), *b = malloc((size_t)n * n * 2), *v = malloc((size_t)n * kc * 2);
  uint16_t *meta = malloc((size_t)n * nw * 2);
  float *c = malloc((size_t)n * n * 4);
  if (!a || !b || !v || !meta || !c)
    return 1;
  uint64_t s = 4242;
  for (size_t i = 0; i < (size_t)n * n; i++) {
    a[i] = mpe_fp32_to_fp16((float)(2 * frand(&s) - 1), MPE_RNE);
    b[i] = mpe_fp32_to_fp16((float)(2 * frand(&s) - 1), MPE_RNE);
  }
  if (mpe_prune_2_4(MPE_ROW_MAJOR, n, n, a, MPE_FP16, n, a, n) ||
      mpe_sparse_compress(MPE_ROW_MAJOR, n, n, a, MPE_FP16, n, v, kc, meta, nw))
    return 1;
  printf("\nmpe_gemm_sp (2:4 sparse A, compressed) vs mpe_gemm (the same pruned A, dense), n = %d, FP16\n", n);
  printf("%-10s %-22s %9s %9s %7s  %s\n", "model", "row", "sparse s", "dense s", "ratio", "target");
  int failed = 0;
  for (size_t mi = 0; mi < sizeof models / sizeof models[0]; mi++) {
    const mpe_tc_model *m = mpe_tc_model_get(models[mi], MPE_FP16);
    double td[5], tsp[5], rat[5];
    for (int r = 0; r < reps; r++) {
      settle();
      double t0 = now();
      int rc = mpe_gemm(m, MPE_ROW_MAJOR, MPE_NO_TRANS, MPE_NO_TRANS, n, n, n, 1.0f, a, MPE_FP16, n, b, MPE_FP16, n,
                        0.0f, c, MPE_FP32, n);
      td[r] = now() - t0;
      settle();
      t0 = now();
      rc |= mpe_gemm_sp(m, 0, MPE_ROW_MAJOR, MPE_NO_TRANS, n, n, n, 1.0f, v, MPE_FP16, kc, meta, nw, b, MPE_FP16, n,
                        0.0f, c, MPE_FP32, n);
      tsp[r] = now() - t0;
      if (rc) {
        fprintf(stderr, "sparse row %s: failed\n", models[mi]);
        return 1;
      }
      rat[r] = td[r] / tsp[r];
    }
    double ratio = median(rat, reps);
    if (ratio < 1.6)
      failed++;
    printf("%-10s %-22s %9.3f %9.3f %7.3f  >= 1.6%s\n", models[mi], "sparse 2:4 / dense", median(tsp, reps),
           median(td, reps), ratio, ratio >= 1.6 ? " met" : " NOT MET");
  }
  free(a); free(b); free(v); free(meta); free(c);
  return failed;
}

/* N(0, sigma) by Box-Muller (sigma 0: uniform on [-1, 1)) */
static float gauss(uint64_t *s, double sigma)
{
  if (sigma == 0)
    return (float)(2 * frand(s) - 1);
  double u = frand(s), v = frand(s);
  return (float)(sigma * sqrt(-2 * log(u > 0 ? u : 0x1p-53)) * cos(6.283185307179586 * v));
}

/* Block-scaled GEMM (mpe_gemm_scaled) on MX/NVFP4-quantised operands against
   cblas_sgemm on the dequantised values, and the block model of the same
   instruction length (b200 FP8, L = 32) on E4M3 operands in the same run;
   n × n × n, each distribution. */
static int scaled_rows(int n)
{
  static const struct { const char *name; mpe_mx_kind kind; } rows[] = {
    { "b200:mxf8f6f4", MPE_MXFP8_E4M3 }, { "b200:mxf8f6f4", MPE_MXFP6_E2M3 }, { "b200:mxf4", MPE_MXFP4 },
    { "b200:mxf4nvf4", MPE_NVFP4 }, { "b200:mxf4nvf4", MPE_MXFP4 },
  };
  static const double sig[] = { 0, 1, 1e-3, 1e-5 };
  const size_t nn = (size_t)n * n;
  float *a = malloc(nn * 4), *bt = malloc(nn * 4), *c = malloc(nn * 4);
  uint8_t *aq = malloc(nn), *bq = malloc(nn), *btq = malloc(nn), *sa = malloc(nn / 16), *sb = malloc(nn / 16),
          *sbt = malloc(nn / 16);
  if (!a || !bt || !c || !aq || !bq || !btq || !sa || !sb || !sbt)
    return 1;
  const int reps = 5;
  printf("\nmpe_gemm_scaled (block-scaled MMA) vs cblas_sgemm on the dequantised values, n = %d; "
         "b200 e4m3 (mpe_gemm, L = 32) on the same run\n", n);
  printf("%-14s %-11s %-7s %9s %9s %7s %9s\n", "model", "format", "data", "model s", "sgemm s", "ratio",
         "b200 fp8");
  for (size_t di = 0; di < sizeof sig / sizeof sig[0]; di++) {
    uint64_t s = 777 + di;
    for (size_t i = 0; i < nn; i++) {
      a[i] = gauss(&s, sig[di]);
      bt[i] = gauss(&s, sig[di]);   /* B^T: row j is column j of B */
    }
    for (size_t ri = 0; ri < sizeof rows / sizeof rows[0]; ri++) {
      const mpe_mx_kind kd = rows[ri].kind;
      const int blk = mpe_mx_block(kd), kb = n / blk;
      const mpe_type et = (mpe_type)mpe_mx_element_type(kd), st = (mpe_type)mpe_mx_scale_type(kd);
      mpe_mx_quantize_f32(aq, sa, a, nn, kd, NULL);
      mpe_mx_quantize_f32(btq, sbt, bt, nn, kd, NULL);
      for (int j = 0; j < n; j++)
        for (int l = 0; l < n; l++)
          bq[(size_t)l * n + j] = btq[(size_t)j * n + l];
      for (int j = 0; j < n; j++)
        for (int q = 0; q < kb; q++)
          sb[(size_t)q * n + j] = sbt[(size_t)j * kb + q];
      /* SGEMM on the dequantised values (the same numbers the model multiplies) */
      float *ad = malloc(nn * 4), *bd = malloc(nn * 4);
      if (!ad || !bd)
        return 1;
      mpe_mx_dequantize_f32(ad, aq, sa, nn, kd);
      mpe_mx_dequantize_f32(bd, btq, sbt, nn, kd);
      const mpe_tc_model *m = mpe_tc_model_get(rows[ri].name, et);
      const mpe_tc_model *f8 = mpe_tc_model_get("b200", MPE_E4M3);
      double tm[9], ts[9], rat[9], rf8[9];
      for (int r = 0; r < reps; r++) {
        settle();
        double t0 = now();
        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, n, n, n, 1.0f, ad, n, bd, n, 0.0f, c, n);
        ts[r] = now() - t0;
        settle();
        t0 = now();
        int rc = mpe_gemm_scaled(m, MPE_ROW_MAJOR, MPE_NO_TRANS, MPE_NO_TRANS, n, n, n, 1.0f, aq, et, n, bq, et, n,
                                 sa, kb, sb, n, st, blk, 0.0f, c, MPE_FP32, n);
        tm[r] = now() - t0;
        if (rc) {
          fprintf(stderr, "mpe_gemm_scaled %s: %s\n", rows[ri].name, mpe_strerror(rc));
          return 1;
        }
        rat[r] = ts[r] / tm[r];
        if (et == MPE_E4M3) {   /* the block model of the same length on the same codes */
          settle();
          t0 = now();
          rc = mpe_gemm(f8, MPE_ROW_MAJOR, MPE_NO_TRANS, MPE_NO_TRANS, n, n, n, 1.0f, aq, MPE_E4M3, n, bq, MPE_E4M3,
                        n, 0.0f, c, MPE_FP32, n);
          rf8[r] = ts[r] / (now() - t0);
          if (rc)
            return 1;
        }
      }
      char f8s[32] = "";
      if (et == MPE_E4M3)
        snprintf(f8s, sizeof f8s, "%.3f", median(rf8, reps));
      char dist[16];
      snprintf(dist, sizeof dist, sig[di] == 0 ? "uniform" : "N(%g)", sig[di]);
      printf("%-14s %-11s %-7s %9.3f %9.3f %7.3f %9s\n", rows[ri].name, mpe_mx_name(kd), dist, median(tm, reps),
             median(ts, reps), median(rat, reps), f8s);
      free(ad);
      free(bd);
    }
  }
  free(a); free(bt); free(c); free(aq); free(bq); free(btq); free(sa); free(sb); free(sbt);
  return 0;
}

/* Mixed FP8 (E4M3 A, E5M2 B) against cblas_sgemm on the same values, and the
   same model with both operands E4M3 in the same run; n × n × n, uniform and
   N(0, 1e-3) data. */
static int mixed_rows(int n)
{
  static const char *const gpus[] = { "ada", "h100", "b200" };
  static const double sig[] = { 0, 1e-3 };
  const size_t nn = (size_t)n * n;
  float *a = malloc(nn * 4), *b = malloc(nn * 4), *c = malloc(nn * 4);
  uint8_t *a8 = malloc(nn), *b8 = malloc(nn), *b4 = malloc(nn);
  if (!a || !b || !c || !a8 || !b8 || !b4)
    return 1;
  const int reps = 5;
  printf("\nmpe_gemm mixed FP8 (A e4m3, B e5m2) vs cblas_sgemm on the same values, n = %d; the same model "
         "with B e4m3 in the same run\n", n);
  printf("%-6s %-8s %9s %9s %7s %11s\n", "model", "data", "mixed s", "sgemm s", "ratio", "e4m3 ratio");
  for (size_t di = 0; di < sizeof sig / sizeof sig[0]; di++) {
    uint64_t s = 99 + di;
    for (size_t i = 0; i < nn; i++) {
      a8[i] = mpe_fp32_to_e4m3(gauss(&s, sig[di]) * (sig[di] ? 1 / sig[di] : 1), MPE_RNE, 1);
      b8[i] = mpe_fp32_to_e5m2(gauss(&s, sig[di]), MPE_RNE, 1);
      b4[i] = mpe_fp32_to_e4m3(mpe_e5m2_to_fp32(b8[i]), MPE_RNE, 1);
      a[i] = mpe_e4m3_to_fp32(a8[i]);
      b[i] = mpe_e5m2_to_fp32(b8[i]);
    }
    for (size_t g = 0; g < sizeof gpus / sizeof gpus[0]; g++) {
      const mpe_tc_model *m = mpe_tc_model_get(gpus[g], MPE_E4M3);
      double tm[9], ts[9], rat[9], r4[9];
      for (int r = 0; r < reps; r++) {
        settle();
        double t0 = now();
        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, n, n, n, 1.0f, a, n, b, n, 0.0f, c, n);
        ts[r] = now() - t0;
        settle();
        t0 = now();
        int rc = mpe_gemm(m, MPE_ROW_MAJOR, MPE_NO_TRANS, MPE_NO_TRANS, n, n, n, 1.0f, a8, MPE_E4M3, n, b8, MPE_E5M2,
                          n, 0.0f, c, MPE_FP32, n);
        tm[r] = now() - t0;
        settle();
        t0 = now();
        rc |= mpe_gemm(m, MPE_ROW_MAJOR, MPE_NO_TRANS, MPE_NO_TRANS, n, n, n, 1.0f, a8, MPE_E4M3, n, b4, MPE_E4M3, n,
                       0.0f, c, MPE_FP32, n);
        r4[r] = ts[r] / (now() - t0);
        if (rc) {
          fprintf(stderr, "mpe_gemm mixed %s: failed\n", gpus[g]);
          return 1;
        }
        rat[r] = ts[r] / tm[r];
      }
      char dist[16];
      snprintf(dist, sizeof dist, sig[di] == 0 ? "uniform" : "N(%g)", sig[di]);
      printf("%-6s %-8s %9.3f %9.3f %7.3f %11.3f\n", gpus[g], dist, median(tm, reps), median(ts, reps),
             median(rat, reps), median(r4, reps));
    }
  }
  free(a); free(b); free(c); free(a8); free(b8); free(b4);
  return 0;
}

/* Binary16 C against binary32 C on the same call (mpe_gemm, n × n × n, E4M3 or
   FP16 operands from uniform [-1, 1) data): the fp16_split models (mma.sync
   FP8 with binary16 output: two binary16 blocks per instruction, then c),
   target t(binary16) / t(binary32) <= 1.3 (the median of the ratios of runs
   made one right after the other), and h100 FP16 for comparison. Returns the
   targets not met. */
static int out16_rows(int n)
{
  static const row rows[] = {
    { "h100:mma.sync", MPE_E4M3, "<= 1.3", 1.3 }, { "b200:mma.sync", MPE_E4M3, "<= 1.3", 1.3 },
    { "h100", MPE_FP16, "", 0 },
  };
  const size_t nn = (size_t)n * n;
  uint8_t *a8 = malloc(nn), *b8 = malloc(nn);
  uint16_t *a16 = malloc(nn * 2), *b16 = malloc(nn * 2), *c16 = malloc(nn * 2);
  float *c = malloc(nn * 4);
  if (!a8 || !b8 || !a16 || !b16 || !c16 || !c)
    return 1;
  uint64_t s = 777;
  for (size_t i = 0; i < nn; i++) {
    const float x = (float)(2 * frand(&s) - 1), y = (float)(2 * frand(&s) - 1);
    a8[i] = mpe_fp32_to_e4m3(x, MPE_RNE, 1);
    b8[i] = mpe_fp32_to_e4m3(y, MPE_RNE, 1);
    a16[i] = mpe_fp32_to_fp16(x, MPE_RNE);
    b16[i] = mpe_fp32_to_fp16(y, MPE_RNE);
  }
  const int reps = 7;
  int failed = 0;
  printf("\nmpe_gemm binary16 C vs binary32 C, the same call, n = %d\n", n);
  printf("%-14s %-5s %9s %9s %7s  %s\n", "model", "input", "c16 s", "c32 s", "ratio", "target");
  for (size_t ri = 0; ri < sizeof rows / sizeof rows[0]; ri++) {
    const row *w = &rows[ri];
    const mpe_tc_model *m = mpe_tc_model_get(w->name, w->in);
    const void *pa = w->in == MPE_FP16 ? (const void *)a16 : a8, *pb = w->in == MPE_FP16 ? (const void *)b16 : b8;
    double t16[9], t32[9], rat[9];
    for (int r = 0; r < reps; r++) {
      settle();
      double t0 = now();
      int rc = mpe_gemm(m, MPE_ROW_MAJOR, MPE_NO_TRANS, MPE_NO_TRANS, n, n, n, 1.0f, pa, w->in, n, pb, w->in, n,
                        0.0f, c, MPE_FP32, n);
      t32[r] = now() - t0;
      settle();
      t0 = now();
      rc |= mpe_gemm(m, MPE_ROW_MAJOR, MPE_NO_TRANS, MPE_NO_TRANS, n, n, n, 1.0f, pa, w->in, n, pb, w->in, n,
                     0.0f, c16, MPE_FP16, n);
      t16[r] = now() - t0;
      if (rc) {
        fprintf(stderr, "mpe_gemm %s binary16 C: %s\n", w->name, mpe_strerror(rc));
        return 1;
      }
      rat[r] = t16[r] / t32[r];
    }
    const double ratio = median(rat, reps);
    const int miss = w->want > 0 && ratio > w->want;
    failed += miss;
    printf("%-14s %-5s %9.4f %9.4f %7.3f  %s%s\n", w->name, mpe_type_name(w->in), median(t16, reps),
           median(t32, reps), ratio, w->target, w->want == 0 ? "" : miss ? " NOT MET" : " met");
  }
  free(a8); free(b8); free(a16); free(b16); free(c16); free(c);
  return failed;
}

/* Volta's binary16 C, binary32 D (mpe_mma_cd, v100) against cblas_sgemm on the
   same values, and mpe_mma v100 with the same C in binary32 in the same run;
   C uniform, and C of binary16 subnormals (the outputs the engine redoes). */
static int c16_rows(int n)
{
  const size_t nn = (size_t)n * n;
  float *a = malloc(nn * 4), *b = malloc(nn * 4), *c = malloc(nn * 4), *d = malloc(nn * 4);
  uint16_t *a16 = malloc(nn * 2), *b16 = malloc(nn * 2), *c16 = malloc(nn * 2);
  if (!a || !b || !c || !d || !a16 || !b16 || !c16)
    return 1;
  const mpe_tc_model *v = mpe_tc_model_get("v100", MPE_FP16);
  const int reps = 5;
  printf("\nmpe_mma_cd v100 (binary16 C, binary32 D) vs cblas_sgemm, n = %d; mpe_mma v100 (binary32 C) "
         "in the same run\n", n);
  printf("%-16s %9s %9s %7s %11s\n", "C", "cd s", "sgemm s", "ratio", "mma ratio");
  for (int sub = 0; sub < 2; sub++) {
    uint64_t s = 4242 + (uint64_t)sub;
    for (size_t i = 0; i < nn; i++) {
      a16[i] = mpe_fp32_to_fp16(gauss(&s, 0), MPE_RNE);
      b16[i] = mpe_fp32_to_fp16(gauss(&s, 0), MPE_RNE);
      c16[i] = mpe_fp32_to_fp16(gauss(&s, 0) * (sub ? 0x1p-16f : 1.0f), MPE_RNE);
      a[i] = mpe_fp16_to_fp32(a16[i]);
      b[i] = mpe_fp16_to_fp32(b16[i]);
      c[i] = mpe_fp16_to_fp32(c16[i]);
    }
    double tm[9], ts[9], rat[9], rm[9];
    for (int r = 0; r < reps; r++) {
      settle();
      memcpy(d, c, nn * 4);
      double t0 = now();
      cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, n, n, n, 1.0f, a, n, b, n, 1.0f, d, n);
      ts[r] = now() - t0;
      settle();
      t0 = now();
      int rc = mpe_mma_cd(v, n, n, n, a16, MPE_FP16, n, b16, MPE_FP16, n, c16, MPE_FP16, n, d, MPE_FP32, n);
      tm[r] = now() - t0;
      settle();
      t0 = now();
      rc |= mpe_mma(v, n, n, n, a16, MPE_FP16, n, b16, MPE_FP16, n, c, n, d, MPE_FP32, n);
      rm[r] = ts[r] / (now() - t0);
      if (rc) {
        fprintf(stderr, "mpe_mma_cd: failed\n");
        return 1;
      }
      rat[r] = ts[r] / tm[r];
    }
    printf("%-16s %9.3f %9.3f %7.3f %11.3f\n", sub ? "subnormal fp16" : "uniform", median(tm, reps),
           median(ts, reps), median(rat, reps), median(rm, reps));
  }
  free(a); free(b); free(c); free(d); free(a16); free(b16); free(c16);
  return 0;
}

/* The FP64 models (DMMA, v_mfma_f64: a binary64 fma chain) against
   cblas_dgemm, and AMD's FP16/BF16/TF32 matrix-core models (and two NVIDIA
   block models of the same block lengths) against cblas_sgemm on the same
   values, n × n × n: ratio t(BLAS) / t(model),
   medians of back-to-back pairs. */
static int wide_rows(int n)
{
  const size_t nn = (size_t)n * n;
  double *a = malloc(nn * 8), *b = malloc(nn * 8), *c = malloc(nn * 8);
  float *af = malloc(nn * 4), *bf = malloc(nn * 4), *cf = malloc(nn * 4);
  uint16_t *a16 = malloc(nn * 2), *b16 = malloc(nn * 2);
  uint8_t *a8 = malloc(nn), *b8 = malloc(nn);
  if (!a || !b || !c || !af || !bf || !cf || !a16 || !b16 || !a8 || !b8)
    return 1;
  uint64_t s = 2468;
  for (size_t i = 0; i < nn; i++) {
    a[i] = 2 * frand(&s) - 1;
    b[i] = 2 * frand(&s) - 1;
    af[i] = (float)a[i];
    bf[i] = (float)b[i];
  }
  /* inb: B's format when it differs (a mixed FP8 pair), else 0 */
  static const struct { const char *name; mpe_type in, inb; } rows[] = {
    { "h100", MPE_FP64, 0 }, { "mi300", MPE_FP64, 0 }, { "mi100", MPE_FP16, 0 }, { "mi100", MPE_BF16, 0 },
    { "mi250", MPE_FP16, 0 }, { "mi250", MPE_BF16, 0 }, { "mi250:bf16", MPE_BF16, 0 }, { "mi300", MPE_FP16, 0 },
    { "mi300", MPE_BF16, 0 }, { "mi300", MPE_TF32, 0 }, { "mi300", MPE_E4M3FNUZ, 0 }, { "mi300", MPE_E5M2FNUZ, 0 },
    { "mi300", MPE_E4M3FNUZ, MPE_E5M2FNUZ },
    /* NVIDIA block models of the same block lengths (v100: 4, a100: 8), for comparison */
    { "v100", MPE_FP16, 0 }, { "a100", MPE_FP16, 0 },
  };
  const int reps = 3;
  printf("\nmpe_gemm FP64 models vs cblas_dgemm, AMD models vs cblas_sgemm, n = %d\n", n);
  printf("%-10s %-17s %9s %9s %7s\n", "model", "input", "model s", "blas s", "ratio");
  for (size_t ri = 0; ri < sizeof rows / sizeof rows[0]; ri++) {
    const mpe_tc_model *m = mpe_tc_model_get(rows[ri].name, rows[ri].in);
    const mpe_type t = rows[ri].in;
    const int f64 = t == MPE_FP64, fp8 = t == MPE_E4M3FNUZ || t == MPE_E5M2FNUZ;
    const mpe_type tbt = rows[ri].inb ? rows[ri].inb : t;
    if (fp8)
      for (size_t i = 0; i < nn; i++) {
        a8[i] = t == MPE_E4M3FNUZ ? mpe_fp32_to_e4m3fnuz(af[i], MPE_RNE, 1) : mpe_fp32_to_e5m2fnuz(af[i], MPE_RNE, 1);
        b8[i] = tbt == MPE_E4M3FNUZ ? mpe_fp32_to_e4m3fnuz(bf[i], MPE_RNE, 1) : mpe_fp32_to_e5m2fnuz(bf[i], MPE_RNE, 1);
      }
    if (t == MPE_FP16 || t == MPE_BF16)
      for (size_t i = 0; i < nn; i++) {
        a16[i] = t == MPE_FP16 ? mpe_fp32_to_fp16(af[i], MPE_RNE) : mpe_fp32_to_bf16(af[i], MPE_RNE);
        b16[i] = t == MPE_FP16 ? mpe_fp32_to_fp16(bf[i], MPE_RNE) : mpe_fp32_to_bf16(bf[i], MPE_RNE);
      }
    const void *pa = f64 ? (const void *)a : t == MPE_TF32 ? (const void *)af : fp8 ? (const void *)a8 : a16;
    const void *pb = f64 ? (const void *)b : t == MPE_TF32 ? (const void *)bf : fp8 ? (const void *)b8 : b16;
    const mpe_type at = f64 ? MPE_FP64 : t == MPE_TF32 ? MPE_FP32 : t, bt = rows[ri].inb ? rows[ri].inb : at;
    double tm[3], tb[3], rat[3];
    for (int r = 0; r < reps; r++) {
      settle();
      double t0 = now();
      if (f64)
        cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, n, n, n, 1.0, a, n, b, n, 0.0, c, n);
      else
        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, n, n, n, 1.0f, af, n, bf, n, 0.0f, cf, n);
      tb[r] = now() - t0;
      settle();
      t0 = now();
      int rc = mpe_gemm(m, MPE_ROW_MAJOR, MPE_NO_TRANS, MPE_NO_TRANS, n, n, n, 1.0f, pa, at, n, pb, bt, n, 0.0f,
                        f64 ? (void *)c : (void *)cf, f64 ? MPE_FP64 : MPE_FP32, n);
      tm[r] = now() - t0;
      if (rc) {
        fprintf(stderr, "mpe_gemm %s: %s\n", rows[ri].name, mpe_strerror(rc));
        return 1;
      }
      rat[r] = tb[r] / tm[r];
    }
    char in[24];
    snprintf(in, sizeof in, "%s%s%s", mpe_type_name(t), rows[ri].inb ? "x" : "",
             rows[ri].inb ? mpe_type_name(rows[ri].inb) : "");
    printf("%-10s %-17s %9.3f %9.3f %7.3f\n", rows[ri].name, in, median(tm, reps), median(tb, reps),
           median(rat, reps));
  }
  free(a); free(b); free(c); free(af); free(bf); free(cf); free(a16); free(b16); free(a8); free(b8);
  return 0;
}

int main(int argc, char **argv)
{
  if (argc > 1 && !strcmp(argv[1], "--sparse")) {   /* the sparse rows alone */
    int f = sparse_rows(1024) + sparse_rows(2048);
    printf("%d target(s) not met\n", f);
    return 0;
  }
  if (argc > 1 && !strcmp(argv[1], "--scaled"))   /* the block-scaled rows alone */
    return scaled_rows(argc > 2 ? atoi(argv[2]) : 1024);
  if (argc > 1 && !strcmp(argv[1], "--mixed"))   /* the mixed FP8 rows alone */
    return mixed_rows(argc > 2 ? atoi(argv[2]) : 1024);
  if (argc > 1 && !strcmp(argv[1], "--c16"))   /* the binary16-C rows alone */
    return c16_rows(argc > 2 ? atoi(argv[2]) : 1024);
  if (argc > 1 && !strcmp(argv[1], "--out16")) {   /* the binary16-output rows alone */
    int f = out16_rows(argc > 2 ? atoi(argv[2]) : 512);
    printf("%d target(s) not met\n", f);
    return 0;
  }
  if (argc > 1 && !strcmp(argv[1], "--wide"))   /* the FP64 and AMD rows alone */
    return wide_rows(argc > 2 ? atoi(argv[2]) : 1024);
  static const row rows[] = {
    /* issue 13's targets */
    { "fma-chain", MPE_FP16, ">= 0.8", 0.8 }, { "h100", MPE_FP16, ">= 0.27", 0.27 },
    { "a100", MPE_FP16, ">= 0.27", 0.27 }, { "v100", MPE_FP16, ">= 0.18", 0.18 },
    { "h100", MPE_BF16, "", 0 }, { "a100", MPE_BF16, "", 0 }, { "h100", MPE_TF32, "", 0 },
    { "a100", MPE_TF32, "", 0 }, { "h100", MPE_E4M3, "", 0 }, { "ada", MPE_E5M2, "", 0 }, { "b200", MPE_E4M3, ">= 0.27", 0.27 },
    /* Arm BF16 dot products (FPCR.EBF = 0 and 1) */
    { "arm-bfdot", MPE_BF16, "", 0 }, { "arm-bfdot-ebf16", MPE_BF16, "", 0 },
  };
  const char *envn = getenv("MPE_BENCH_GEMM_N"), *only = getenv("MPE_BENCH_GEMM_MODELS");
  char szs[256];
  snprintf(szs, sizeof szs, "%s", envn && *envn ? envn : "1024 2048");
  int sizes[16], nsz = 0;
  for (char *tok = strtok(szs, " ,"); tok && nsz < 16; tok = strtok(NULL, " ,"))
    if (atoi(tok) >= 16)
      sizes[nsz++] = atoi(tok);
  printf("mpe_gemm (tensor-core models) vs OpenBLAS cblas_sgemm, square n×n×n, FP32 output, %s\n",
         mpe_cpu_features());
  printf("%-10s %-5s %5s %9s %9s %7s  %s\n", "model", "input", "n", "model s", "sgemm s", "ratio",
         "target");
  int failed = 0;
  for (int si = 0; si < nsz; si++) {
    int n = sizes[si];
    size_t nn = (size_t)n * n;
    float *a = malloc(nn * 4), *b = malloc(nn * 4), *c = malloc(nn * 4);
    uint16_t *a16 = malloc(nn * 2), *b16 = malloc(nn * 2);
    uint8_t *a8 = malloc(nn), *b8 = malloc(nn);
    if (!a || !b || !c || !a16 || !b16 || !a8 || !b8)
      return 1;
    uint64_t s = 12345;
    for (size_t i = 0; i < nn; i++) {
      a[i] = (float)(2 * frand(&s) - 1);
      b[i] = (float)(2 * frand(&s) - 1);
    }
    int reps = n <= 1024 ? 7 : n <= 2048 ? 3 : 2;
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, n, n, n, 1.0f, a, n, b, n, 0.0f, c, n);
    for (size_t ri = 0; ri < sizeof rows / sizeof rows[0]; ri++) {
      const row *w = &rows[ri];
      if (only) {
        char list[256], *save = NULL;
        int hit = 0;
        snprintf(list, sizeof list, "%s", only);
        for (char *t = strtok_r(list, " ,", &save); t; t = strtok_r(NULL, " ,", &save))
          hit |= !strcmp(t, w->name);
        if (!hit)
          continue;
      } else if (n > 1024 && w->want == 0) {
        continue;   /* the other inputs at n = 1024 only: keeps the run short */
      }
      const mpe_tc_model *m = mpe_tc_model_get(w->name, w->in);
      const void *pa = a, *pb = b;
      mpe_type t = MPE_FP32;
      if (w->in == MPE_FP16 || w->in == MPE_BF16) {
        for (size_t i = 0; i < nn; i++) {
          a16[i] = w->in == MPE_FP16 ? mpe_fp32_to_fp16(a[i], MPE_RNE) : mpe_fp32_to_bf16(a[i], MPE_RNE);
          b16[i] = w->in == MPE_FP16 ? mpe_fp32_to_fp16(b[i], MPE_RNE) : mpe_fp32_to_bf16(b[i], MPE_RNE);
        }
        pa = a16; pb = b16; t = w->in;
      } else if (w->in == MPE_E4M3 || w->in == MPE_E5M2) {
        for (size_t i = 0; i < nn; i++) {
          a8[i] = w->in == MPE_E4M3 ? mpe_fp32_to_e4m3(a[i], MPE_RNE, 1) : mpe_fp32_to_e5m2(a[i], MPE_RNE, 1);
          b8[i] = w->in == MPE_E4M3 ? mpe_fp32_to_e4m3(b[i], MPE_RNE, 1) : mpe_fp32_to_e5m2(b[i], MPE_RNE, 1);
        }
        pa = a8; pb = b8; t = w->in;
      }
      double tms[9], tss[9], rat[9];
      for (int r = 0; r < reps; r++) {
        settle();
        double t0 = now();
        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, n, n, n, 1.0f, a, n, b, n, 0.0f, c, n);
        tss[r] = now() - t0;
        settle();
        t0 = now();
        int rc = mpe_gemm(m, MPE_ROW_MAJOR, MPE_NO_TRANS, MPE_NO_TRANS, n, n, n, 1.0f, pa, t, n, pb, t, n,
                          0.0f, c, MPE_FP32, n);
        tms[r] = now() - t0;
        if (rc) {
          fprintf(stderr, "mpe_gemm %s: %s\n", w->name, mpe_strerror(rc));
          return 1;
        }
        rat[r] = tss[r] / tms[r];
      }
      double tm = median(tms, reps), ts = median(tss, reps);
      double ratio = median(rat, reps);
      const char *verdict = w->want == 0 ? "" : ratio >= w->want ? " met" : " NOT MET";
      if (w->want > 0 && ratio < w->want)
        failed++;
      printf("%-10s %-5s %5d %9.3f %9.3f %7.3f  %s%s\n", w->name, mpe_type_name(w->in), n, tm, ts,
             ratio, w->target, verdict);
    }
    free(a); free(b); free(c); free(a16); free(b16); free(a8); free(b8);
  }
  if (!only) {
    if (scaled_rows(1024) || mixed_rows(1024) || c16_rows(1024) || wide_rows(1024))
      return 1;
    failed += out16_rows(512);
    failed += call_shapes();
    failed += sparse_rows(1024) + sparse_rows(2048);
  }
  printf("%d target(s) not met\n", failed);
  return 0;
}
