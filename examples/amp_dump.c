/* amp_dump: the classic mixed-precision example, trained in FP32 on random
   data, dumping its weight gradients for mpanalyze.
   Model: y = x W^T + b with W 512x1024 (nn.Linear(1024, 512)), MSE loss,
   plain SGD. Each step's gradients are written to DIR as
     grad_stepN.npy            dL/dW (512 x 1024, float32)
     grads_stepN.safetensors   "fc.weight" and "fc.bias"
   usage: amp_dump [DIR] [STEPS]      (defaults: mpemu-demo, 4)
   then:  mpanalyze DIR/grads_step3.safetensors --plot range.svg
          mpanalyze scale --preset pytorch --format fp16 DIR/grad_step*.npy */
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

/* standard normal by Box-Muller from GSL's Mersenne twister (gsl_randist.h
   would clash with OpenBLAS's cblas.h) */
static double gaussian(gsl_rng *r)
{
  double u = gsl_rng_uniform_pos(r), v = gsl_rng_uniform(r);
  return sqrt(-2.0 * log(u)) * cos(2.0 * M_PI * v);
}

int main(int argc, char **argv)
{
  const char *dir = argc > 1 ? argv[1] : "mpemu-demo";
  int steps = argc > 2 ? atoi(argv[2]) : 4;
  if (steps < 1 || steps > 1000) {
    fprintf(stderr, "amp_dump: STEPS must be 1..1000\n");
    return 2;
  }
  if (mkdir(dir, 0777) && errno != EEXIST) {
    fprintf(stderr, "amp_dump: cannot create %s: %s\n", dir, strerror(errno));
    return 1;
  }
  float *W = malloc(sizeof(float) * OUT * IN), *b = calloc(OUT, sizeof(float));
  float *X = malloc(sizeof(float) * BATCH * IN), *Y = malloc(sizeof(float) * BATCH * OUT);
  float *Z = malloc(sizeof(float) * BATCH * OUT), *dW = malloc(sizeof(float) * OUT * IN);
  float *db = malloc(sizeof(float) * OUT);
  if (!W || !b || !X || !Y || !Z || !dW || !db) {
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
  const float lr = 0.1f;
  for (int step = 0; step < steps; step++) {
    for (int i = 0; i < BATCH * IN; i++)
      X[i] = (float)gaussian(rng);
    for (int i = 0; i < BATCH * OUT; i++)
      Y[i] = (float)gaussian(rng);
    /* forward: Z = X W^T + b */
    for (int r = 0; r < BATCH; r++)
      memcpy(Z + (size_t)r * OUT, b, sizeof(float) * OUT);
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, BATCH, OUT, IN, 1.0f, X, IN, W, IN, 1.0f, Z, OUT);
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
    char path[4096];
    uint64_t wshape[2] = { OUT, IN }, bshape[1] = { OUT };
    mpe_io_out t[2] = { { "fc.weight", MPE_FP32, 2, wshape, dW }, { "fc.bias", MPE_FP32, 1, bshape, db } };
    snprintf(path, sizeof path, "%s/grad_step%d.npy", dir, step);
    int rc = mpe_io_write_npy(path, &t[0]);
    if (!rc) {
      snprintf(path, sizeof path, "%s/grads_step%d.safetensors", dir, step);
      rc = mpe_io_write_safetensors(path, t, 2);
    }
    if (rc) {
      fprintf(stderr, "amp_dump: %s: %s\n", path, mpe_strerror(rc));
      return 1;
    }
    printf("step %d  loss %.6f  wrote %s/grad_step%d.npy and grads_step%d.safetensors\n", step, loss, dir, step, step);
    /* SGD */
    cblas_saxpy(OUT * IN, -lr, dW, 1, W, 1);
    cblas_saxpy(OUT, -lr, db, 1, b, 1);
  }
  gsl_rng_free(rng);
  free(W); free(b); free(X); free(Y); free(Z); free(dW); free(db);
  return 0;
}
