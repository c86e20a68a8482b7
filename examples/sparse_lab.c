/* Lab: the 2:4 sparsity recipe — train dense, prune 2:4, evaluate, retrain
   with the mask fixed for the original schedule, evaluate again — on the MLP
   lab's classifier (examples/mlp_lab.c: 4-class spirals, two dense layers),
   in FP32 (O0) and FP16 AMP (O1) on an emulated tensor core, and after INT8
   quantisation. Prints the table of the talks (dense, sparse, sparse INT8
   accuracy and the differences). See examples/sparse_lab.md. */
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <mpemu.h>
#include "lab_util.h"

#define NL 2

typedef struct {
  int dim, hidden, batch;
  const float *x;
  const int *lab;
  int n;
} dataset;

static double accuracy(mpe_train_net *net, const dataset *d, float *out)
{
  int good = 0;
  for (int i0 = 0; i0 < d->n; i0 += d->batch) {
    int m = d->n - i0 < d->batch ? d->n - i0 : d->batch;
    if (mpe_train_forward(net, d->x + (size_t)i0 * d->dim, m, out))
      return NAN;
    good += lab_count_correct(out, d->lab + i0, m, 4);
  }
  return (double)good / d->n;
}

/* ---- INT8 inference: a symmetric per-tensor int8 quantisation of weights
   and activations by the library (mpe_quant_params / mpe_quant_encode: scale =
   max|x| / 127, round to nearest even), int32 accumulation (exact: at most 128
   products of magnitude 128^2), dequantised as acc * sx * sw + b in binary32. */
static int q8(int8_t *q, const float *x, size_t n, float *s)
{
  int32_t z;
  int rc = mpe_quant_params(s, &z, x, 1, n, MPE_QUANT_TENSOR, MPE_INT8, 1);
  return rc ? rc : mpe_quant_encode(q, x, 1, n, MPE_QUANT_TENSOR, MPE_INT8, s, &z, NULL);
}

/* y (n x out) = dequant(q8(x) q8(W)^T) + b, ReLU when relu */
static int q8_layer(float *y, const float *x, int n, int in, int out, const float *W, const float *b, int relu,
                    int8_t *qx, int8_t *qw)
{
  float sx, sw;
  int rc = q8(qx, x, (size_t)n * in, &sx);
  if (rc || (rc = q8(qw, W, (size_t)in * out, &sw)))
    return rc;
  for (int i = 0; i < n; i++)
    for (int o = 0; o < out; o++) {
      int32_t acc = 0;
      for (int k = 0; k < in; k++)
        acc += (int32_t)qx[(size_t)i * in + k] * qw[(size_t)o * in + k];
      float v = (float)acc * (sx * sw) + b[o];
      y[(size_t)i * out + o] = relu && v < 0.0f ? 0.0f : v;
    }
  return MPE_OK;
}

/* test accuracy of the network's FP32 weights run in INT8 (per batch: the
   activation scale is the batch's, as a dynamic-quantisation runtime does) */
static double accuracy_int8(mpe_train_net *net, const dataset *d)
{
  const int D = d->dim, H = d->hidden, B = d->batch;
  float *W1 = malloc(sizeof(float) * (size_t)H * D), *b1 = malloc(sizeof(float) * H);
  float *W2 = malloc(sizeof(float) * 4 * (size_t)H), *b2 = malloc(sizeof(float) * 4);
  float *h = malloc(sizeof(float) * (size_t)B * H), *o = malloc(sizeof(float) * (size_t)B * 4);
  int8_t *qx = malloc((size_t)B * (D > H ? D : H)), *qw = malloc((size_t)H * (D > 4 ? D : 4));
  double acc = NAN;
  if (W1 && b1 && W2 && b2 && h && o && qx && qw && !mpe_train_weights(net, 0, W1, b1) && !mpe_train_weights(net, 1, W2, b2)) {
    int good = 0;
    for (int i0 = 0; i0 < d->n; i0 += B) {
      int m = d->n - i0 < B ? d->n - i0 : B;
      if (q8_layer(h, d->x + (size_t)i0 * D, m, D, H, W1, b1, 1, qx, qw) ||
          q8_layer(o, h, m, H, 4, W2, b2, 0, qx, qw)) {
        good = -1;   /* a weight or activation not finite: no INT8 accuracy */
        break;
      }
      good += lab_count_correct(o, d->lab + i0, m, 4);
    }
    acc = good < 0 ? NAN : (double)good / d->n;
  }
  free(W1); free(b1); free(W2); free(b2); free(h); free(o); free(qx); free(qw);
  return acc;
}

/* ---- 2:4 pruning through the library */

/* Prune layer l's W (out x in, groups of four along in) and return its mask
   (1 kept, 0 dropped): the compressed form with every kept value set to 1,
   decompressed. */
static int prune_layer(mpe_train_net *net, int l, int in, int out, float *mask)
{
  const int kc = mpe_sparse_kept(in), nw = mpe_sparse_meta_words(in);
  float *W = malloc(sizeof(float) * (size_t)in * out), *V = malloc(sizeof(float) * (size_t)kc * out);
  uint16_t *meta = malloc(sizeof(uint16_t) * (size_t)nw * out);
  int rc = !W || !V || !meta ? MPE_ENOMEM : 0;
  if (!rc)
    rc = mpe_train_weights(net, l, W, NULL);
  if (!rc)
    rc = mpe_prune_2_4(MPE_ROW_MAJOR, out, in, W, MPE_FP32, in, W, in);
  if (!rc)
    rc = mpe_sparse_compress(MPE_ROW_MAJOR, out, in, W, MPE_FP32, in, V, kc, meta, nw);
  if (!rc) {
    for (size_t q = 0; q < (size_t)kc * out; q++)
      V[q] = 1.0f;
    rc = mpe_sparse_decompress(MPE_ROW_MAJOR, out, in, V, MPE_FP32, kc, meta, nw, mask, in);
  }
  if (!rc)
    rc = mpe_train_set_weights(net, l, W, NULL);
  free(W); free(V); free(meta);
  return rc;
}

static int apply_mask(mpe_train_net *net, int l, size_t nw, const float *mask, float *W)
{
  int rc = mpe_train_weights(net, l, W, NULL);
  for (size_t i = 0; !rc && i < nw; i++)
    W[i] *= mask[i];
  return rc ? rc : mpe_train_set_weights(net, l, W, NULL);
}

typedef struct {
  const char *name;
  mpe_train_level level;
  const char *model;
  double dense, pruned, sparse, dense8, sparse8, dense2, seconds;
} row;

static int train_epochs(mpe_train_net *net, const dataset *tr, long epochs, float *const *mask, const size_t *nw,
                        float *wbuf, const char *what)
{
  const long spe = (tr->n + tr->batch - 1) / tr->batch;
  for (long e = 0; e < epochs; e++) {
    double loss = 0;
    for (long t = 0; t < spe; t++) {
      long i0 = t * tr->batch;
      int m = (int)(tr->n - i0 < tr->batch ? tr->n - i0 : tr->batch);
      mpe_train_step_info info;
      mpe_threads_fit();   /* a team of the cores free now: a busy core would stall the step */
      int rc = mpe_train_step(net, tr->x + (size_t)i0 * tr->dim, NULL, tr->lab + i0, m, &info);
      for (int l = 0; !rc && mask && l < NL; l++)
        rc = apply_mask(net, l, nw[l], mask[l], wbuf);
      if (rc)
        return rc;
      loss += info.loss;
    }
    if (e == epochs - 1 || (e + 1) % 5 == 0)
      fprintf(stderr, "sparse_lab:   %s epoch %ld/%ld, mean loss %.4f\n", what, e + 1, epochs, loss / spe);
  }
  return 0;
}

int main(int argc, char **argv)
{
  static const struct option lo[] = {
    { "epochs", required_argument, 0, 'E' }, { "model", required_argument, 0, 'm' },
    { "train", required_argument, 0, 'T' }, { "test", required_argument, 0, 't' },
    { "seed", required_argument, 0, 'S' }, { "help", no_argument, 0, 'h' }, { 0, 0, 0, 0 } };
  long epochs = 20, ntrain = 4096, ntest = 1024, seed = 1;
  const char *model = "h100";
  int c;
  while ((c = getopt_long(argc, argv, "h", lo, NULL)) != -1) {
    char *e = NULL;
    long v = 0;
    if (c == 'E' || c == 'T' || c == 't' || c == 'S') {
      v = strtol(optarg, &e, 10);
      if (e == optarg || *e || v < (c == 'S' ? 0 : 1) || v > (1L << 24)) {
        fprintf(stderr, "sparse_lab: bad option value '%s'\n", optarg);
        return 2;
      }
    }
    switch (c) {
    case 'E': epochs = v; break;
    case 'T': ntrain = v; break;
    case 't': ntest = v; break;
    case 'S': seed = v; break;
    case 'm': model = optarg; break;
    case 'h':
      printf("usage: sparse_lab [--epochs E (20)] [--model M (h100)] [--train N (4096)] [--test N (1024)] [--seed S (1)]\n"
             "  --model M: a tensor-core model with FP16 tensor cores:\n");
      lab_print_models(stdout, "    ", (const mpe_type[]){ MPE_FP16 }, 1);
      return 0;
    default: return 2;
    }
  }
  if (!mpe_tc_model_get(model, MPE_FP16)) {
    fprintf(stderr, "sparse_lab: no FP16 tensor-core model '%s'\n", model);
    return 2;
  }
  const int dim = 32, hidden = 128, batch = 128;
  float *all = malloc(sizeof(float) * (size_t)(ntrain + ntest) * dim);
  int *lab = malloc(sizeof(int) * (size_t)(ntrain + ntest));
  float *out = malloc(sizeof(float) * batch * 4), *wbuf = malloc(sizeof(float) * (size_t)hidden * dim);
  float *mask[NL] = { malloc(sizeof(float) * (size_t)hidden * dim), malloc(sizeof(float) * 4 * (size_t)hidden) };
  const size_t nw[NL] = { (size_t)hidden * dim, 4 * (size_t)hidden };
  if (!all || !lab || !out || !wbuf || !mask[0] || !mask[1])
    return 1;
  mpe_train_spirals(all, lab, (int)(ntrain + ntest), dim, (uint64_t)seed);
  dataset tr = { dim, hidden, batch, all, lab, (int)ntrain };
  dataset te = { dim, hidden, batch, all + (size_t)ntrain * dim, lab + ntrain, (int)ntest };
  mpe_train_arch arch = { NL, { dim, hidden, 4 }, MPE_TRAIN_RELU, MPE_TRAIN_XENT, batch, (uint64_t)seed };
  mpe_train_optim opt = { MPE_TRAIN_SGD, 0.05f, 0.9f, 0, 0, 0 };
  row R[2] = { { "FP32", MPE_TRAIN_O0, NULL, 0, 0, 0, 0, 0, 0, 0 }, { "FP16 AMP", MPE_TRAIN_O1, model, 0, 0, 0, 0, 0, 0, 0 } };
  double t0 = lab_now();
  for (int q = 0; q < 2; q++) {
    row *r = &R[q];
    double ts = lab_now();
    mpe_train_policy pol = { r->level, MPE_FP16, r->model, NULL, 0 };
    mpe_train_net *net;
    int rc = mpe_train_net_alloc(&net, &arch, &pol, &opt);
    if (rc) {
      fprintf(stderr, "sparse_lab: %s: %s\n", r->name, mpe_strerror(rc));
      return 1;
    }
    fprintf(stderr, "sparse_lab: %s%s%s: training dense, %ld epochs\n", r->name, r->model ? " on " : "",
            r->model ? r->model : "", epochs);
    if ((rc = train_epochs(net, &tr, epochs, NULL, nw, wbuf, "dense")))
      goto fail;
    r->dense = accuracy(net, &te, out);
    r->dense8 = accuracy_int8(net, &te);
    for (int l = 0; l < NL; l++)
      if ((rc = prune_layer(net, l, arch.sizes[l], arch.sizes[l + 1], mask[l])))
        goto fail;
    r->pruned = accuracy(net, &te, out);
    fprintf(stderr, "sparse_lab: %s: dense %.2f%%, pruned 2:4 %.2f%%; retraining with the mask fixed, %ld epochs\n",
            r->name, 100 * r->dense, 100 * r->pruned, epochs);
    if ((rc = train_epochs(net, &tr, epochs, mask, nw, wbuf, "sparse")))
      goto fail;
    r->sparse = accuracy(net, &te, out);
    r->sparse8 = accuracy_int8(net, &te);
    mpe_train_net_free(net);
    /* the control (FP32 only, to keep the run short): the dense network
       trained as long in total (2E epochs) */
    r->dense2 = NAN;
    if (r->level != MPE_TRAIN_O0) {
      r->seconds = lab_now() - ts;
      continue;
    }
    if ((rc = mpe_train_net_alloc(&net, &arch, &pol, &opt)))
      goto fail;
    fprintf(stderr, "sparse_lab: %s: control, dense for %ld epochs\n", r->name, 2 * epochs);
    if ((rc = train_epochs(net, &tr, 2 * epochs, NULL, nw, wbuf, "dense 2E")))
      goto fail;
    r->dense2 = accuracy(net, &te, out);
    r->seconds = lab_now() - ts;
    mpe_train_net_free(net);
    continue;
  fail:
    fprintf(stderr, "sparse_lab: %s: %s\n", r->name, mpe_strerror(rc));
    mpe_train_net_free(net);
    return 1;
  }
  printf("2:4 sparsity lab: %d-%d-4 ReLU MLP, 4-class spirals (%ld train / %ld test, seed %ld),\n"
         "SGD lr 0.05 momentum 0.9, batch %d, %ld epochs dense + %ld epochs retraining with the mask fixed\n\n",
         dim, hidden, ntrain, ntest, seed, batch, epochs, epochs);
  printf("%-18s %8s %8s %8s %8s %8s %8s %8s %9s\n", "training", "dense", "pruned", "sparse", "diff", "dns INT8",
         "spr INT8", "diff", "dense 2E");
  for (int q = 0; q < 2; q++) {
    const row *r = &R[q];
    char nm[40];
    snprintf(nm, sizeof nm, "%s%s%s", r->name, r->model ? " " : "", r->model ? r->model : "");
    printf("%-18s %7.2f%% %7.2f%% %7.2f%% %+8.2f %7.2f%% %7.2f%% %+8.2f", nm, 100 * r->dense, 100 * r->pruned,
           100 * r->sparse, 100 * (r->sparse - r->dense), 100 * r->dense8, 100 * r->sparse8,
           100 * (r->sparse8 - r->dense));
    if (isnan(r->dense2))
      printf(" %9s\n", "-");
    else
      printf(" %8.2f%%\n", 100 * r->dense2);
  }
  printf("\ntest accuracy. pruned: 2:4 pruned (mpe_prune_2_4), not retrained; sparse: after retraining;\n"
         "diff: sparse - dense, and sparse INT8 - dense (percentage points). INT8: the row's FP32\n"
         "weights and activations quantised per tensor (symmetric, scale max|x|/127), int32 sums.\n"
         "dense 2E: the control, a dense FP32 network trained as many epochs as dense + retraining.\n"
         "Total %.1f s.\n", lab_now() - t0);
  free(all); free(lab); free(out); free(wbuf); free(mask[0]); free(mask[1]);
  return 0;
}
