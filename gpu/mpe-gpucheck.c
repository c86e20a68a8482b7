/* mpe-gpucheck: run the same inputs through the CPU models and the GPU path and
   count bitwise mismatches, per path and input; measure the cuBLAS K order with
   probes. Exit 0 when the paths that promise agreement (array rounding, the MMA
   kernel) agree, 1 when they do not, 2 on a usage error, 77 without a GPU.
   --cpu-as-gpu MODEL replaces every GPU call by the CPU model (a self-test of
   this program that needs no device). See mpe-gpucheck(1). */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>
#include <mpemu.h>
#include "korder.h"

static const char *conf_dir;
static const char *cpu_as_gpu;      /* model name, or NULL for the real device */
static int quick;
static uint64_t rng_state = 0x6d70656d75ull;
static long bad_promised;           /* mismatches on the paths that promise agreement */

static uint64_t rnd64(void)
{
  uint64_t z = (rng_state += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

static double rnd_normal(void)
{
  double u1 = ((rnd64() >> 11) + 1.0) * 0x1p-53, u2 = (rnd64() >> 11) * 0x1p-53;
  return sqrt(-2.0 * log(u1)) * cos(6.283185307179586 * u2);
}

/* ------------------------------------------------------------------ the "GPU" */

static const mpe_tc_model *gpu_model(mpe_type in)
{
  if (cpu_as_gpu)
    return mpe_tc_model_get(cpu_as_gpu, in);
  const mpe_tc_model *m = NULL;
  return mpe_gpu_model(&m, in) == MPE_OK ? m : NULL;
}

static int g_mma(const mpe_tc_model *model, int m, int n, int k, const void *A, mpe_type at, int lda,
                 const void *B, mpe_type bt, int ldb, const void *C, int ldc, void *D, mpe_type dt, int ldd)
{
  if (cpu_as_gpu)
    return mpe_mma(model, m, n, k, A, at, lda, B, bt, ldb, C, ldc, D, dt, ldd);
  return mpe_gpu_mma(model, m, n, k, A, at, lda, B, bt, ldb, C, ldc, D, dt, ldd);
}

static int g_gemm(mpe_gpu_path path, const mpe_tc_model *model, int m, int n, int k, float alpha,
                  const float *A, const float *B, float beta, float *C)
{
  if (cpu_as_gpu)
    return mpe_gemm(model, MPE_ROW_MAJOR, MPE_NO_TRANS, MPE_NO_TRANS, m, n, k, alpha, A, MPE_FP32, k,
                    B, MPE_FP32, n, beta, C, MPE_FP32, n);
  return mpe_gpu_gemm(path, model, MPE_ROW_MAJOR, MPE_NO_TRANS, MPE_NO_TRANS, m, n, k, alpha, A,
                      MPE_FP32, k, B, MPE_FP32, n, beta, C, MPE_FP32, n);
}

static long count_diff32(const float *a, const float *b, size_t n)
{
  long d = 0;
  for (size_t i = 0; i < n; i++)
    d += memcmp(&a[i], &b[i], 4) != 0;
  return d;
}

static void report(const char *path, const char *in, const char *input, int rc, long bad, long total,
                   int promised)
{
  if (rc)
    printf("  %-9s %-5s %-22s %s\n", path, in, input, mpe_strerror(rc));
  else
    printf("  %-9s %-5s %-22s %8ld mismatches of %ld\n", path, in, input, bad, total);
  if (promised && !rc)
    bad_promised += bad;
}

/* ------------------------------------------------------------------ rounding */

static void check_round(void)
{
  printf("array rounding (mpe_round_f32 against mpe_gpu_round_f32, flags included):\n");
  size_t n = quick ? 1 << 14 : 1 << 20;
  float *x = malloc(n * 4), *yc = malloc(n * 4), *yg = malloc(n * 4);
  if (!x || !yc || !yg)
    exit(2);
  for (size_t i = 0; i < n; i++) {
    uint32_t u = (uint32_t)rnd64();
    if (i % 2)      /* half of them near the formats' ranges */
      u = (u & 0x807fffffu) | ((uint32_t)(90 + rnd64() % 70) << 23);
    memcpy(&x[i], &u, 4);
  }
  for (int t = MPE_TF32; t <= MPE_E5M2; t++) {
    long bad = 0, total = 0;
    int rc = 0;
    for (int r = 0; r < 8 && !rc; r++) {
      mpe_round_opts o = { (mpe_round)r, r & 1, (r >> 1) & 1, 42 + (uint64_t)r, 1000 };
      mpe_flags_clear(~0u);
      mpe_round_f32(yc, x, n, mpe_format_of((mpe_type)t), &o);
      unsigned fc = mpe_flags_test_clear(~0u);
      if (cpu_as_gpu)
        rc = mpe_round_f32(yg, x, n, mpe_format_of((mpe_type)t), &o);
      else
        rc = mpe_gpu_round_f32(yg, x, n, mpe_format_of((mpe_type)t), &o);
      unsigned fg = mpe_flags_test_clear(~0u);
      bad += count_diff32(yc, yg, n) + (fc != fg);
      total += (long)n;
    }
    report("round", mpe_type_name((mpe_type)t), "random, 8 modes", rc, bad, total, 1);
  }
  free(x); free(yc); free(yg);
}

/* ------------------------------------------------------------------ random GEMMs */

static void random_values(float *v, size_t n, const mpe_tc_model *m, mpe_type in)
{
  /* normal values, scaled into the format's range, rounded to it by the model's rule later */
  double scale = in == MPE_E4M3 ? 16 : in == MPE_E5M2 ? 256 : 1;
  for (size_t i = 0; i < n; i++)
    v[i] = (float)(scale * rnd_normal());
  (void)m;
}

static void check_random(mpe_type in, const mpe_tc_model *model)
{
  static const int shapes[][3] = { { 16, 8, 16 }, { 64, 64, 64 }, { 100, 37, 129 }, { 256, 192, 512 } };
  int nshapes = quick ? 3 : 4;
  const char *iname = mpe_type_name(in);
  long bad[1 + 2 * MPE_GPU_NPATHS] = { 0 }, tot[1 + 2 * MPE_GPU_NPATHS] = { 0 };
  int rcs[1 + 2 * MPE_GPU_NPATHS] = { 0 };
  for (int s = 0; s < nshapes; s++) {
    int m = shapes[s][0], n = shapes[s][1], k = shapes[s][2];
    size_t mn = (size_t)m * n;
    float *A = malloc(sizeof(float) * (size_t)m * k), *B = malloc(sizeof(float) * (size_t)k * n);
    float *C = malloc(sizeof(float) * mn), *Dc = malloc(sizeof(float) * mn), *Dg = malloc(sizeof(float) * mn);
    if (!A || !B || !C || !Dc || !Dg)
      exit(2);
    random_values(A, (size_t)m * k, model, in);
    random_values(B, (size_t)k * n, model, in);
    for (size_t i = 0; i < mn; i++)
      C[i] = (float)rnd_normal();
    /* instruction semantics */
    if (!rcs[0]) {
      mpe_mma(model, m, n, k, A, MPE_FP32, k, B, MPE_FP32, n, C, n, Dc, MPE_FP32, n);
      rcs[0] = g_mma(model, m, n, k, A, MPE_FP32, k, B, MPE_FP32, n, C, n, Dg, MPE_FP32, n);
      bad[0] += count_diff32(Dc, Dg, mn);
      tot[0] += (long)mn;
    }
    /* BLAS semantics: alpha=1, beta=0, then alpha=0.75, beta=-1.5 with C */
    for (int p = 0; p < MPE_GPU_NPATHS; p++)
      for (int ab = 0; ab < 2; ab++) {
        int slot = 1 + 2 * p + ab;
        if (rcs[slot])
          continue;
        float alpha = ab ? 0.75f : 1.0f, beta = ab ? -1.5f : 0.0f;
        memcpy(Dc, C, sizeof(float) * mn);
        memcpy(Dg, C, sizeof(float) * mn);
        mpe_gemm(model, MPE_ROW_MAJOR, MPE_NO_TRANS, MPE_NO_TRANS, m, n, k, alpha, A, MPE_FP32, k, B,
                 MPE_FP32, n, beta, Dc, MPE_FP32, n);
        rcs[slot] = g_gemm((mpe_gpu_path)p, model, m, n, k, alpha, A, B, beta, Dg);
        bad[slot] += count_diff32(Dc, Dg, mn);
        tot[slot] += (long)mn;
      }
    free(A); free(B); free(C); free(Dc); free(Dg);
  }
  report("mma", iname, "random mpe_mma", rcs[0], bad[0], tot[0], 1);
  for (int p = 0; p < MPE_GPU_NPATHS; p++) {
    report(mpe_gpu_path_name((mpe_gpu_path)p), iname, "random gemm a=1 b=0", rcs[1 + 2 * p],
           bad[1 + 2 * p], tot[1 + 2 * p], p == MPE_GPU_PATH_MMA);
    report(mpe_gpu_path_name((mpe_gpu_path)p), iname, "random gemm a,b,C", rcs[2 + 2 * p],
           bad[2 + 2 * p], tot[2 + 2 * p], p == MPE_GPU_PATH_MMA);
  }
}

/* ------------------------------------------------------------------ conformance */

/* The conformance folder of the device: by model, refined by the device name. */
static const char *conf_gpu(const char *model, const char *devname)
{
  if (!model)
    return NULL;
  if (!strcmp(model, "v100")) return "V100";
  if (!strcmp(model, "a100")) return devname && strstr(devname, "A2") && !strstr(devname, "A20") ? "A2" : "A100";
  if (!strcmp(model, "ada")) return devname && strstr(devname, "L40S") ? "L40S" : "Ada";
  if (!strcmp(model, "h100")) return devname && strstr(devname, "H200") ? "H200" : "H100";
  if (!strcmp(model, "b200")) return "B200";
  return NULL;
}

/* The files as published (.txt) or as tests/conformance carries them (.txt.gz):
   zlib reads both. */
static gzFile conf_open(const char *gpu, const char *folder, const char *what, const char *suffix)
{
  char path[4096];
  snprintf(path, sizeof path, "%s/tensor-cores/%s/%s/%s_%s_%s.txt", conf_dir, gpu, folder, what, gpu, suffix);
  gzFile f = access(path, R_OK) == 0 ? gzopen(path, "rb") : NULL;
  if (!f && strlen(path) + 3 < sizeof path) {
    strcat(path, ".gz");
    f = gzopen(path, "rb");
  }
  return f;
}

static void conf_close(gzFile f)
{
  if (f)
    gzclose(f);
}

static int read_hex_line(gzFile f, float *v, int max)
{
  char line[8192];
  if (!gzgets(f, line, sizeof line))
    return -1;
  int n = 0;
  char *p = line, *e;
  while (n < max) {
    unsigned long u = strtoul(p, &e, 16);
    if (e == p)
      break;
    uint32_t w = (uint32_t)u;
    memcpy(&v[n++], &w, 4);
    p = e;
  }
  return n;
}

static int read_bin_line(gzFile f, float *v)
{
  char line[128];
  if (!gzgets(f, line, sizeof line))
    return -1;
  uint32_t w = (uint32_t)strtoul(line, NULL, 2);
  memcpy(v, &w, 4);
  return 0;
}

static void check_conformance(mpe_type in, const mpe_tc_model *model, const char *gpu)
{
  static const char *folder_of[] = { [MPE_FP16] = "fp16", [MPE_BF16] = "bf16", [MPE_TF32] = "tf32",
                                     [MPE_E4M3] = "E4M3", [MPE_E5M2] = "E5M2" };
  const char *folder = folder_of[in];
  const int fp8 = in == MPE_E4M3 || in == MPE_E5M2;
  for (int out16 = 0; out16 < 2; out16++) {
    if (out16 && ((in != MPE_FP16 && !fp8) || (fp8 && !strcmp(gpu, "L40S"))))
      continue;       /* FP16-output data: the fp16 folders and the FP8 ones but L40S's */
    gzFile fa = conf_open(gpu, folder, "a", folder), fb = conf_open(gpu, folder, "b", folder);
    gzFile fc = conf_open(gpu, folder, "c", "fp32"), fd = conf_open(gpu, folder, "d", out16 ? "fp16" : "fp32");
    if (!fa || !fb || !fc || !fd) {
      printf("  (no conformance data for %s/%s under %s)\n", gpu, folder, conf_dir);
      conf_close(fa);
      conf_close(fb);
      conf_close(fc);
      conf_close(fd);
      return;
    }
    enum { BATCH = 64, KMAX = 64 };
    /* the H100/H200 FP8 binary32 rows were made with c = 0; their binary16 rows with c */
    int c_zero = fp8 && !out16 && (!strcmp(gpu, "H100") || !strcmp(gpu, "H200"));
    float a[BATCH][KMAX], b[BATCH][KMAX], c[BATCH], d[BATCH];
    long rows = 0, cpu_vs_data = 0, gpu_vs_data = 0, gpu_vs_cpu = 0;
    int rc = 0, k = 0;
    for (;;) {
      int nb = 0;
      for (; nb < BATCH; nb++) {
        int ka = read_hex_line(fa, a[nb], KMAX), kb = read_hex_line(fb, b[nb], KMAX);
        if (ka <= 0 || kb != ka || read_bin_line(fc, &c[nb]) || read_bin_line(fd, &d[nb]))
          break;
        k = ka;
        if (c_zero)
          c[nb] = 0.0f;
        if (out16)
          c[nb] = mpe_fp16_to_fp32(mpe_fp32_to_fp16(c[nb], MPE_RNE));
      }
      if (nb == 0)
        break;
      /* the GPU: one nb x nb product with c on the diagonal; its diagonal is the batch */
      float *Am = calloc((size_t)nb * k, 4), *Bm = calloc((size_t)k * nb, 4), *Cm = calloc((size_t)nb * nb, 4);
      float *Dm = calloc((size_t)nb * nb, 4);
      uint16_t *C16 = calloc((size_t)nb * nb, 2), *D16 = calloc((size_t)nb * nb, 2);
      if (!Am || !Bm || !Cm || !Dm || !C16 || !D16)
        exit(2);
      for (int r = 0; r < nb; r++) {
        for (int l = 0; l < k; l++) {
          Am[(size_t)r * k + l] = a[r][l];
          Bm[(size_t)l * nb + r] = b[r][l];
        }
        Cm[(size_t)r * nb + r] = c[r];
        C16[(size_t)r * nb + r] = mpe_fp32_to_fp16(c[r], MPE_RNE);
      }
      if (!rc)
        rc = out16 ? g_mma(model, nb, nb, k, Am, MPE_FP32, k, Bm, MPE_FP32, nb, C16, nb, D16, MPE_FP16, nb)
                   : g_mma(model, nb, nb, k, Am, MPE_FP32, k, Bm, MPE_FP32, nb, Cm, nb, Dm, MPE_FP32, nb);
      for (int r = 0; r < nb; r++) {
        float dc, dg;
        if (out16) {
          uint16_t h, cc = mpe_fp32_to_fp16(c[r], MPE_RNE);
          mpe_mma(model, 1, 1, k, a[r], MPE_FP32, k, b[r], MPE_FP32, 1, &cc, 1, &h, MPE_FP16, 1);
          dc = mpe_fp16_to_fp32(h);
          dg = mpe_fp16_to_fp32(D16[(size_t)r * nb + r]);
        } else {
          mpe_mma(model, 1, 1, k, a[r], MPE_FP32, k, b[r], MPE_FP32, 1, &c[r], 1, &dc, MPE_FP32, 1);
          dg = Dm[(size_t)r * nb + r];
        }
        cpu_vs_data += memcmp(&dc, &d[r], 4) != 0;
        gpu_vs_data += memcmp(&dg, &d[r], 4) != 0;
        gpu_vs_cpu += memcmp(&dg, &dc, 4) != 0;
      }
      rows += nb;
      free(Am); free(Bm); free(Cm); free(Dm); free(C16); free(D16);
      if (quick && rows >= 512)
        break;
    }
    conf_close(fa); conf_close(fb); conf_close(fc); conf_close(fd);
    char label[64];
    snprintf(label, sizeof label, "%s %s K=%d", gpu, out16 ? "fp16-out" : "fp32-out", k);
    report("mma", mpe_type_name(in), label, rc, gpu_vs_cpu, rows, 1);
    if (!rc)
      printf("  %-9s %-5s %-22s GPU vs recorded %ld, CPU model vs recorded %ld (of %ld)\n", "", "", "",
             gpu_vs_data, cpu_vs_data, rows);
  }
}

/* ------------------------------------------------------------------ K order */

struct probe_ctx { mpe_gpu_path path; const mpe_tc_model *model; };

static int probe_gemm(void *ctx, int m, int n, int k, const float *A, const float *B, float *C)
{
  struct probe_ctx *p = ctx;
  return g_gemm(p->path, p->model, m, n, k, 1.0f, A, B, 0.0f, C);
}

static void check_korder(mpe_type in, const mpe_tc_model *model)
{
  static const int shapes[][3] = { { 256, 16, 32 }, { 512, 64, 128 }, { 1024, 64, 256 } };
  int nshapes = quick ? 1 : 3;
  for (int p = 0; p < MPE_GPU_NPATHS; p++)
    for (int s = 0; s < nshapes; s++) {
      struct probe_ctx ctx = { (mpe_gpu_path)p, model };
      mpek_result res;
      char line[256], label[64];
      int rc = mpek_probe(probe_gemm, &ctx, in, shapes[s][0], shapes[s][1], shapes[s][2], &res);
      snprintf(label, sizeof label, "m=%d n=%d k=%d", shapes[s][0], shapes[s][1], shapes[s][2]);
      if (rc)
        snprintf(line, sizeof line, "%s", mpe_strerror(rc));
      else
        mpek_describe(&res, line, sizeof line);
      printf("  %-9s %-5s %-22s %s\n", mpe_gpu_path_name((mpe_gpu_path)p), mpe_type_name(in), label, line);
    }
}

/* ------------------------------------------------------------------ main */

/* ------------------------------------------------------------------ open questions */

/* A model like m with one field changed (NULL when the library refuses it). */
static mpe_tc_model *model_with(const mpe_tc_model *m, int field, int value)
{
  mpe_tc_params p;
  if (mpe_tc_model_params(m, &p))
    return NULL;
  switch (field) {
  case 0: p.zero_sign = value; break;
  case 1: p.tf32_nan = value; break;
  case 2: p.zero_c_exp = value; break;
  case 3: p.late_c = value; break;
  default: p.fp16_split = value; break;
  }
  mpe_tc_model *v = NULL;
  return mpe_tc_model_custom(&v, &p) == MPE_OK ? v : NULL;
}

/* d = a.b + c for one row on the GPU's MMA path and on the CPU: bits of a
   binary32 or binary16 result, or -1 when the call fails. */
static long one_row(int gpu, const mpe_tc_model *m, const float *a, const float *b, int k, float c, int out16)
{
  int rc;
  if (out16) {
    uint16_t ch = mpe_fp32_to_fp16(c, MPE_RNE), dh = 0;
    rc = gpu ? g_mma(m, 1, 1, k, a, MPE_FP32, k, b, MPE_FP32, 1, &ch, 1, &dh, MPE_FP16, 1)
             : mpe_mma(m, 1, 1, k, a, MPE_FP32, k, b, MPE_FP32, 1, &ch, 1, &dh, MPE_FP16, 1);
    return rc ? -1 : (long)dh;
  }
  float d = 0;
  rc = gpu ? g_mma(m, 1, 1, k, a, MPE_FP32, k, b, MPE_FP32, 1, &c, 1, &d, MPE_FP32, 1)
           : mpe_mma(m, 1, 1, k, a, MPE_FP32, k, b, MPE_FP32, 1, &c, 1, &d, MPE_FP32, 1);
  uint32_t u;
  memcpy(&u, &d, 4);
  return rc ? -1 : (long)u;
}

static float bits_f(uint32_t u)
{
  float f;
  memcpy(&f, &u, 4);
  return f;
}

/* The reproducers of the choices mpe_tc_model_get(3) makes where no GPU row in
   the repository decides ("Where the models are settled"): each issues the
   device's mma.sync on the inputs and prints the GPU's bits beside the
   built-in model's and the other setting's. A GPU that differs from the
   built-in model counts as a mismatch of the MMA path. */
static void check_open_questions(void)
{
  static const struct {
    const char *what;
    mpe_type in;
    int k, out16, field, other;   /* field: 0 zero_sign, 1 tf32_nan, 2 zero_c_exp, 3 late_c,
                                     4 fp16_split */
    float a[4], b[4], c;
    uint32_t a_bits;              /* when non-zero: a[0] as these binary32 bits */
  } q[] = {
    { "sign of zero, bf16 -2^-75*2^-75, c=0, FP32 out", MPE_BF16, 1, 0, 0, 0, { -0x1p-75f }, { 0x1p-75f }, 0, 0 },
    { "sign of zero, fp16 -2^-13*2^-13, c=0, FP16 out", MPE_FP16, 1, 1, 0, 0, { -0x1p-13f }, { 0x1p-13f }, 0, 0 },
    { "TF32 NaN 7f800001 * 1, c=0", MPE_TF32, 1, 0, 1, 0, { 0 }, { 1 }, 0, 0x7f800001u },
    { "TF32 NaN ff801000 * 1, c=1", MPE_TF32, 1, 0, 1, 0, { 0 }, { 1 }, 1, 0xff801000u },
    { "zero-c floor, bf16 [2^-65,-2^-76].[2^-65,2^-76]", MPE_BF16, 2, 0, 2, 0,
      { 0x1p-65f, -0x1p-76f }, { 0x1p-65f, 0x1p-76f }, 0, 0 },
    { "zero-c floor, fp16 [3*2^-13,-2^-22].[2^-12,2^-22], FP16 out", MPE_FP16, 2, 1, 2, 0,
      { 3 * 0x1p-13f, -0x1p-22f }, { 0x1p-12f, 0x1p-22f }, 0, 0 },
    { "late c, e4m3 [1].[1], c=3*2^-25", MPE_E4M3, 1, 0, 3, -1, { 1 }, { 1 }, 3 * 0x1p-25f, 0 },
    /* FP8 with binary16 output: the first block (k mod 4 in {0, 1}) gives 1, the second
       adds 2^-11 and 2^-j: 1 + 2^-10 when 2^-j survives the alignment (j <= F'), else
       the tie goes to 1; j = 25 and 26 pin F' = 25 (the GPU rows say only F' >= 18) */
    { "split F', e5m2 [1,0,2^-5,2^-14].[1,0,2^-6,2^-11], FP16 out", MPE_E5M2, 4, 1, 4, 24,
      { 1, 0, 0x1p-5f, 0x1p-14f }, { 1, 0, 0x1p-6f, 0x1p-11f }, 0, 0 },
    { "split F', e5m2 [1,0,2^-5,2^-14].[1,0,2^-6,2^-12], FP16 out", MPE_E5M2, 4, 1, 4, 26,
      { 1, 0, 0x1p-5f, 0x1p-14f }, { 1, 0, 0x1p-6f, 0x1p-12f }, 0, 0 },
    /* c after both blocks: 1 + 2^-11 ties to 1, then c = 2^-11 ties again (1); a c
       inside a block of 32 makes 1 + 2^-10 */
    { "split c after, e4m3 [1,2^-5].[1,2^-6], c=2^-11, FP16 out", MPE_E4M3, 2, 1, 4, 0,
      { 1, 0x1p-5f }, { 1, 0x1p-6f }, 0x1p-11f, 0 },
  };
  static const char *const fields[] = { "zero_sign", "tf32_nan", "zero_c_exp", "late_c", "fp16_split" };
  printf("open questions: the GPU's mma.sync beside the models (mpe_tc_model_get(3)):\n");
  for (size_t i = 0; i < sizeof q / sizeof q[0]; i++) {
    const mpe_tc_model *m = gpu_model(q[i].in);
    if (!m) {
      printf("  %-60s no instruction for %s\n", q[i].what, mpe_type_name(q[i].in));
      continue;
    }
    mpe_tc_params p;
    mpe_tc_model_params(m, &p);
    const int cur = q[i].field == 0 ? p.zero_sign : q[i].field == 1 ? p.tf32_nan
                  : q[i].field == 2 ? p.zero_c_exp : q[i].field == 3 ? p.late_c : p.fp16_split;
    const int alt = q[i].other >= 0 ? q[i].other : !cur;
    float a[4] = { q[i].a[0], q[i].a[1], q[i].a[2], q[i].a[3] };
    if (q[i].a_bits)
      a[0] = bits_f(q[i].a_bits);
    mpe_tc_model *v = model_with(m, q[i].field, alt);
    long g = one_row(1, m, a, q[i].b, q[i].k, q[i].c, q[i].out16);
    long c0 = one_row(0, m, a, q[i].b, q[i].k, q[i].c, q[i].out16);
    long c1 = v ? one_row(0, v, a, q[i].b, q[i].k, q[i].c, q[i].out16) : -1;
    const int w = q[i].out16 ? 4 : 8;
    if (g < 0) {
      printf("  %-60s GPU call failed\n", q[i].what);
    } else {
      printf("  %-60s GPU %0*lx  %s=%d %0*lx  %s=%d %0*lx%s\n", q[i].what, w, g, fields[q[i].field], cur, w, c0,
             fields[q[i].field], alt, w, c1,
             g == c0 ? (g == c1 ? "" : "  (the built-in setting)") : g == c1 ? "  (the other setting: MISMATCH)"
                                                                             : "  (neither: MISMATCH)");
      bad_promised += g != c0;
    }
    mpe_tc_model_free(v);
  }
}

static void usage(FILE *f)
{
  fprintf(f, "usage: mpe-gpucheck [--conformance DIR] [--quick] [--seed N] [--cpu-as-gpu MODEL]\n");
}

int main(int argc, char **argv)
{
  conf_dir = getenv("MPE_CONFORMANCE_DIR");
  for (int i = 1; i < argc; i++) {
    if (!strcmp(argv[i], "--conformance") && i + 1 < argc) {
      conf_dir = argv[++i];
    } else if (!strcmp(argv[i], "--quick")) {
      quick = 1;
    } else if (!strcmp(argv[i], "--seed") && i + 1 < argc) {
      rng_state = strtoull(argv[++i], NULL, 0);
    } else if (!strcmp(argv[i], "--cpu-as-gpu") && i + 1 < argc) {
      cpu_as_gpu = argv[++i];
    } else if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) {
      usage(stdout);
      return 0;
    } else {
      usage(stderr);
      return 2;
    }
  }
  printf("mpe-gpucheck (mpemu %s)\n", mpe_version_string());
  const char *model_name;
  char devname[256] = "";
  if (cpu_as_gpu) {
    if (!mpe_tc_model_get(cpu_as_gpu, MPE_FP16) && !mpe_tc_model_get(cpu_as_gpu, MPE_TF32)) {
      fprintf(stderr, "mpe-gpucheck: unknown model '%s'\n", cpu_as_gpu);
      return 2;
    }
    printf("self-test: the CPU model '%s' stands in for the GPU (no device is used)\n", cpu_as_gpu);
    model_name = cpu_as_gpu;
  } else {
    int count = 0, rc = mpe_gpu_device_count(&count);
    if (rc == MPE_EUNSUP) {
      printf("mpe-gpucheck: no GPU device: this libmpemu was built without CUDA\n");
      return 77;
    }
    if (rc) {
      printf("mpe-gpucheck: no GPU device (%s)\n", mpe_strerror(rc));
      return 77;
    }
    mpe_gpu_info info;
    if (mpe_gpu_info_get(0, &info)) {
      printf("mpe-gpucheck: no GPU device (device 0 unreadable)\n");
      return 77;
    }
    printf("device 0: %s, compute capability %d.%d, %d SMs, %.1f GiB; CUDA runtime %d, driver %d, "
           "cuBLASLt %d\n", info.name, info.major, info.minor, info.sm_count,
           (double)info.memory / (1u << 30), info.runtime_version, info.driver_version, info.cublas_version);
    printf("CPU model of this GPU: %s%s\n", info.model ? info.model : "none",
           info.mma_kernel ? "" : " (no MMA-path kernel for this architecture)");
    model_name = info.model;
    snprintf(devname, sizeof devname, "%s", info.name);
  }

  check_round();
  static const mpe_type ins[] = { MPE_FP16, MPE_BF16, MPE_TF32, MPE_E4M3, MPE_E5M2 };
  printf("tensor-core products, bitwise mismatches of GPU against the CPU model (mpe_mma / mpe_gemm):\n");
  for (size_t t = 0; t < sizeof ins / sizeof ins[0]; t++) {
    const mpe_tc_model *m = gpu_model(ins[t]);
    if (!m) {
      printf("  %-9s %-5s no tensor-core instruction (or model) for this input\n", "-", mpe_type_name(ins[t]));
      continue;
    }
    check_random(ins[t], m);
    const char *gpu = conf_gpu(model_name, devname);
    if (conf_dir && gpu)
      check_conformance(ins[t], m, gpu);
  }
  if (!conf_dir)
    printf("  (conformance inputs skipped: give --conformance DIR or MPE_CONFORMANCE_DIR)\n");
  check_open_questions();
  printf("K order measured with probes (+X, -X at k=p,p+1 and a small s at k=q):\n");
  for (size_t t = 0; t < sizeof ins / sizeof ins[0]; t++) {
    const mpe_tc_model *m = gpu_model(ins[t]);
    if (m)
      check_korder(ins[t], m);
  }
  printf("%s: %ld mismatches on the paths that promise agreement (rounding, mma)\n",
         bad_promised ? "FAIL" : "PASS", bad_promised);
  return bad_promised ? 1 : 0;
}
