/* amp_dump: the classic mixed-precision example, trained in FP32 on random
   data, dumping its weight gradients for mpanalyze.
   Model: y = x W^T + b with W 512x1024 (nn.Linear(1024, 512)), MSE loss,
   plain SGD. Each step's gradients are written to DIR as
     grad_stepN.npy            dL/dW (512 x 1024, float32)
     dumps/stepN.safetensors   "fc.weight" and "fc.bias"
   and the last step's as the files the README and mpanalyze(1) name:
     grads.safetensors, grads.npy, dump.npz (fc.weight, fc.bias), raw.bin
     (dL/dW as raw float32), act.npy (the layer's output in BF16, untyped |V2),
     mixed.npz (attn.q: that output in BF16, mlp.w: the weights in E4M3, both
     untyped), w.npy (the first 4 rows of the weights) and u.npy (their last SGD
     update, -lr dL/dW).
   usage: amp_dump [DIR] [STEPS]      (defaults: mpemu-demo, 4)
   then:  cd DIR && mpanalyze grads.safetensors --plot range.svg
          mpanalyze scale --preset pytorch --format fp16 'grad_step*.npy' */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <cblas.h>
#include <gsl/gsl_rng.h>
#include <mpemu.h>

enum { IN = 1024, OUT = 512, BATCH = 64 };
#define LR 0.1f

/* standard normal by Box-Muller from GSL's Mersenne twister (gsl_randist.h
   would clash with OpenBLAS's cblas.h) */
static double gaussian(gsl_rng *r)
{
  double u = gsl_rng_uniform_pos(r), v = gsl_rng_uniform(r);
  return sqrt(-2.0 * log(u)) * cos(2.0 * M_PI * v);
}

/* The last step's files under the names the documents use: t = the two
   gradients, W the weights before the update, act the layer's output in BF16. */
static int write_named(const char *dir, const mpe_io_out *t, const float *W, const uint16_t *act)
{
  const size_t n = (size_t)OUT * IN;
  float *u = malloc(sizeof(float) * n);
  uint8_t *w8 = malloc(n);
  if (!u || !w8) {
    free(u); free(w8);
    fprintf(stderr, "amp_dump: out of memory\n");
    return 1;
  }
  for (size_t i = 0; i < n; i++) {
    u[i] = -LR * ((const float *)t[0].data)[i];
    w8[i] = mpe_fp32_to_e4m3(W[i] * 64.0f, MPE_RNE, 1);
  }
  uint64_t ashape[2] = { BATCH, OUT }, wshape[1] = { n }, ushape[1] = { 4 * IN };
  mpe_io_out a = { "act", MPE_BF16, 2, ashape, act };
  mpe_io_out mixed[2] = { { "attn.q", MPE_BF16, 2, ashape, act }, { "mlp.w", MPE_E4M3, 1, wshape, w8 } };
  mpe_io_out w = { "w", MPE_FP32, 1, ushape, W }, up = { "u", MPE_FP32, 1, ushape, u };
  char path[4096];
  int rc = 0;
#define NAMED(name, call) \
  if (!rc) { snprintf(path, sizeof path, "%s/%s", dir, name); rc = call; }
  NAMED("grads.safetensors", mpe_io_write_safetensors(path, t, 2));
  NAMED("grads.npy", mpe_io_write_npy(path, &t[0]));
  NAMED("dump.npz", mpe_io_write_npz(path, t, 2, 1));
  NAMED("act.npy", mpe_io_write_npy(path, &a));
  NAMED("mixed.npz", mpe_io_write_npz(path, mixed, 2, 0));
  NAMED("w.npy", mpe_io_write_npy(path, &w));
  NAMED("u.npy", mpe_io_write_npy(path, &up));
#undef NAMED
  if (!rc) {
    snprintf(path, sizeof path, "%s/raw.bin", dir);
    FILE *fp = fopen(path, "wb");
    if (!fp || fwrite(t[0].data, sizeof(float), n, fp) != n)
      rc = MPE_EIO;
    if (fp && fclose(fp))
      rc = MPE_EIO;
  }
  if (rc)
    fprintf(stderr, "amp_dump: %s: %s\n", path, mpe_strerror(rc));
  free(u); free(w8);
  return rc;
}

int main(int argc, char **argv)
{
  if (argc > 3 || (argc > 1 && argv[1][0] == '-')) {   /* --help, or an option: not a folder name */
    fprintf(stderr, "usage: amp_dump [DIR] [STEPS]   (defaults: mpemu-demo, 4)\n");
    return argc > 1 && !strcmp(argv[1], "--help") ? 0 : 2;
  }
  const char *dir = argc > 1 ? argv[1] : "mpemu-demo";
  int steps = argc > 2 ? atoi(argv[2]) : 4;
  if (steps < 1 || steps > 1000) {
    fprintf(stderr, "amp_dump: STEPS must be 1..1000\n");
    return 2;
  }
  char path[4096];
  snprintf(path, sizeof path, "%s/dumps", dir);
  if ((mkdir(dir, 0777) && errno != EEXIST) || (mkdir(path, 0777) && errno != EEXIST)) {
    fprintf(stderr, "amp_dump: cannot create %s: %s\n", path, strerror(errno));
    return 1;
  }
  float *W = malloc(sizeof(float) * OUT * IN), *b = calloc(OUT, sizeof(float));
  float *X = malloc(sizeof(float) * BATCH * IN), *Y = malloc(sizeof(float) * BATCH * OUT);
  float *Z = malloc(sizeof(float) * BATCH * OUT), *dW = malloc(sizeof(float) * OUT * IN);
  float *db = malloc(sizeof(float) * OUT);
  uint16_t *act = malloc(sizeof(uint16_t) * BATCH * OUT);
  if (!W || !b || !X || !Y || !Z || !dW || !db || !act) {
    fprintf(stderr, "amp_dump: out of memory\n");
    return 1;
  }
  gsl_rng *rng = gsl_rng_alloc(gsl_rng_mt19937);
  gsl_rng_set(rng, 2018);
  const float bound = 1.0f / sqrtf((float)IN);      /* PyTorch's default init range */
  for (int i = 0; i < OUT * IN; i++)
    W[i] = (float)(bound * (2.0 * gsl_rng_uniform(rng) - 1.0));
  for (int i = 0; i < OUT; i++)
    b[i] = (float)(bound * (2.0 * gsl_rng_uniform(rng) - 1.0));
  const float lr = LR;
  for (int step = 0; step < steps; step++) {
    for (int i = 0; i < BATCH * IN; i++)
      X[i] = (float)gaussian(rng);
    for (int i = 0; i < BATCH * OUT; i++)
      Y[i] = (float)gaussian(rng);
    /* forward: Z = X W^T + b */
    for (int r = 0; r < BATCH; r++)
      memcpy(Z + (size_t)r * OUT, b, sizeof(float) * OUT);
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, BATCH, OUT, IN, 1.0f, X, IN, W, IN, 1.0f, Z, OUT);
    for (int i = 0; i < BATCH * OUT; i++)
      act[i] = mpe_fp32_to_bf16(Z[i], MPE_RNE);
    double loss = 0;
    const float g = 2.0f / (BATCH * OUT);            /* d mean((Z-Y)^2) / dZ */
    for (int i = 0; i < BATCH * OUT; i++) {
      float d = Z[i] - Y[i];
      loss += (double)d * d;
      Z[i] = g * d;                                  /* Z now holds dL/dZ */
    }
    loss /= BATCH * OUT;
    /* backward: dW = dZ^T X, db = column sums of dZ */
    cblas_sgemm(CblasRowMajor, CblasTrans, CblasNoTrans, OUT, IN, BATCH, 1.0f, Z, OUT, X, IN, 0.0f, dW, IN);
    for (int j = 0; j < OUT; j++) {
      float s = 0;
      for (int r = 0; r < BATCH; r++)
        s += Z[(size_t)r * OUT + j];
      db[j] = s;
    }
    uint64_t wshape[2] = { OUT, IN }, bshape[1] = { OUT };
    mpe_io_out t[2] = { { "fc.weight", MPE_FP32, 2, wshape, dW }, { "fc.bias", MPE_FP32, 1, bshape, db } };
    snprintf(path, sizeof path, "%s/grad_step%d.npy", dir, step);
    int rc = mpe_io_write_npy(path, &t[0]);
    if (!rc) {
      snprintf(path, sizeof path, "%s/dumps/step%d.safetensors", dir, step);
      rc = mpe_io_write_safetensors(path, t, 2);
    }
    if (rc) {
      fprintf(stderr, "amp_dump: %s: %s\n", path, mpe_strerror(rc));
      return 1;
    }
    printf("step %d  loss %.6f  wrote %s/grad_step%d.npy and dumps/step%d.safetensors\n", step, loss, dir, step, step);
    if (step == steps - 1 && write_named(dir, t, W, act))
      return 1;
    /* SGD */
    cblas_saxpy(OUT * IN, -lr, dW, 1, W, 1);
    cblas_saxpy(OUT, -lr, db, 1, b, 1);
  }
  gsl_rng_free(rng);
  free(W); free(b); free(X); free(Y); free(Z); free(dW); free(db); free(act);
  return 0;
}
