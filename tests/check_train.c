/* The training engine of the labs: gradients and optimizer steps against an
   independent binary64 implementation, the AMP levels' claims on a small
   version of lab (a) (O2 agrees with O0, O3 loses updates), loss scaling,
   bit-identical runs with 1 and 2 threads, errors. */
#include <math.h>
#include <stdlib.h>
#ifdef _OPENMP
#include <omp.h>
#endif
#include "testsupport.h"

/* ---- an independent binary64 MLP */

typedef struct {
  int nl, sizes[4];
  double *W[3], *b[3];
} ref_net;

static double ref_act(mpe_train_act a, double z)
{
  if (a == MPE_TRAIN_RELU)
    return z > 0 ? z : 0;
  if (a == MPE_TRAIN_GELU)
    return 0.5 * z * (1 + tanh(sqrt(2 / M_PI) * (z + 0.044715 * z * z * z)));
  return z;
}

static double ref_dact(mpe_train_act a, double z)
{
  if (a == MPE_TRAIN_RELU)
    return z > 0;
  if (a == MPE_TRAIN_GELU) {
    double k = sqrt(2 / M_PI), u = k * (z + 0.044715 * z * z * z), t = tanh(u);
    return 0.5 * (1 + t) + 0.5 * z * (1 - t * t) * k * (1 + 3 * 0.044715 * z * z);
  }
  return 1;
}

/* loss and gradients (gW, gb laid out like W, b) at the current weights */
static double ref_grad(const ref_net *r, mpe_train_act act, mpe_train_loss loss, const float *x, const float *t,
                       const int *lab, int n, double **gW, double **gb)
{
  double *a[4], *z[4];
  a[0] = malloc((size_t)n * r->sizes[0] * sizeof(double));
  for (int i = 0; i < n * r->sizes[0]; i++)
    a[0][i] = x[i];
  for (int l = 0; l < r->nl; l++) {
    int in = r->sizes[l], out = r->sizes[l + 1];
    z[l + 1] = malloc((size_t)n * out * sizeof(double));
    a[l + 1] = malloc((size_t)n * out * sizeof(double));
    for (int i = 0; i < n; i++)
      for (int j = 0; j < out; j++) {
        double s = r->b[l][j];
        for (int k = 0; k < in; k++)
          s += a[l][i * in + k] * r->W[l][j * in + k];
        z[l + 1][i * out + j] = s;
        a[l + 1][i * out + j] = l < r->nl - 1 ? ref_act(act, s) : s;
      }
  }
  int D = r->sizes[r->nl];
  double *dz = malloc((size_t)n * D * sizeof(double)), L = 0;
  const double *y = z[r->nl];
  if (loss == MPE_TRAIN_MSE) {
    for (int i = 0; i < n * D; i++) {
      L += (y[i] - t[i]) * (y[i] - t[i]);
      dz[i] = 2 * (y[i] - t[i]) / ((double)n * D);
    }
    L /= (double)n * D;
  } else {
    for (int i = 0; i < n; i++) {
      double m = -INFINITY, s = 0;
      for (int j = 0; j < D; j++)
        m = fmax(m, y[i * D + j]);
      for (int j = 0; j < D; j++)
        s += exp(y[i * D + j] - m);
      for (int j = 0; j < D; j++)
        dz[i * D + j] = (exp(y[i * D + j] - m) / s - (j == lab[i])) / n;
      L += -(y[i * D + lab[i]] - m - log(s)) / n;
    }
  }
  for (int l = r->nl - 1; l >= 0; l--) {
    int in = r->sizes[l], out = r->sizes[l + 1];
    for (int j = 0; j < out; j++) {
      gb[l][j] = 0;
      for (int i = 0; i < n; i++)
        gb[l][j] += dz[i * out + j];
      for (int k = 0; k < in; k++) {
        double s = 0;
        for (int i = 0; i < n; i++)
          s += dz[i * out + j] * a[l][i * in + k];
        gW[l][j * in + k] = s;
      }
    }
    if (l == 0)
      break;
    double *dp = malloc((size_t)n * in * sizeof(double));
    for (int i = 0; i < n; i++)
      for (int k = 0; k < in; k++) {
        double s = 0;
        for (int j = 0; j < out; j++)
          s += dz[i * out + j] * r->W[l][j * in + k];
        dp[i * in + k] = s * ref_dact(act, z[l][i * in + k]);
      }
    free(dz);
    dz = dp;
  }
  free(dz);
  for (int l = 0; l <= r->nl; l++) {
    free(a[l]);
    if (l)
      free(z[l]);
  }
  return L;
}

static void ref_from(ref_net *r, const mpe_train_net *net, const mpe_train_arch *arch)
{
  r->nl = arch->nlayers;
  for (int l = 0; l <= r->nl; l++)
    r->sizes[l] = arch->sizes[l];
  for (int l = 0; l < r->nl; l++) {
    size_t nw = (size_t)arch->sizes[l] * arch->sizes[l + 1];
    float *W = malloc(nw * sizeof *W), *b = malloc((size_t)arch->sizes[l + 1] * sizeof *b);
    ck_assert_int_eq(mpe_train_weights(net, l, W, b), MPE_OK);
    r->W[l] = malloc(nw * sizeof(double));
    r->b[l] = malloc((size_t)arch->sizes[l + 1] * sizeof(double));
    for (size_t i = 0; i < nw; i++)
      r->W[l][i] = W[i];
    for (int i = 0; i < arch->sizes[l + 1]; i++)
      r->b[l][i] = b[i];
    free(W);
    free(b);
  }
}

static void ref_free(ref_net *r)
{
  for (int l = 0; l < r->nl; l++) {
    free(r->W[l]);
    free(r->b[l]);
  }
}

/* One O0 SGD step of lr = 2^-3 moves each weight by -lr g with g the binary64
   gradient, up to binary32 rounding; the loss it reports is the binary64 loss. */
START_TEST(test_sgd_gradients)
{
  const mpe_train_act act = (mpe_train_act)(_i % 3);
  const mpe_train_loss loss = (mpe_train_loss)(_i / 3);
  mpe_train_arch arch = { 2, { 5, 7, 3 }, act, loss, 4, 11 };
  mpe_train_policy pol = { MPE_TRAIN_O0, MPE_FP16, NULL, NULL, 0 };
  mpe_train_optim opt = { MPE_TRAIN_SGD, 0.125f, 0, 0, 0, 0 };
  mpe_train_net *net;
  ck_assert_int_eq(mpe_train_net_alloc(&net, &arch, &pol, &opt), MPE_OK);
  float x[20], t[12];
  int lab[4] = { 0, 2, 1, 2 };
  mpe_train_randn(x, 20, 3);
  mpe_train_randn(t, 12, 4);
  ref_net r;
  ref_from(&r, net, &arch);
  double *gW[2], *gb[2];
  for (int l = 0; l < 2; l++) {
    gW[l] = malloc((size_t)arch.sizes[l] * arch.sizes[l + 1] * sizeof(double));
    gb[l] = malloc((size_t)arch.sizes[l + 1] * sizeof(double));
  }
  double L = ref_grad(&r, act, loss, x, t, lab, 4, gW, gb);
  mpe_train_step_info info;
  ck_assert_int_eq(mpe_train_step(net, x, t, lab, 4, &info), MPE_OK);
  ck_assert_msg(fabs(info.loss - L) <= 1e-5 * fabs(L) + 1e-6, "loss %g vs %g", info.loss, L);
  ck_assert_int_eq(info.skipped, 0);
  ck_assert(info.scale == 1);
  for (int l = 0; l < 2; l++) {
    int in = arch.sizes[l], out = arch.sizes[l + 1];
    float *W = malloc((size_t)in * out * sizeof *W), b[8];
    ck_assert_int_eq(mpe_train_weights(net, l, W, b), MPE_OK);
    for (int i = 0; i < in * out; i++) {
      double want = r.W[l][i] - 0.125 * gW[l][i];
      ck_assert_msg(fabs(W[i] - want) <= 1e-6 + 1e-5 * fabs(0.125 * gW[l][i]),
                    "act %d loss %d layer %d W[%d] %g want %g", act, loss, l, i, W[i], want);
    }
    for (int i = 0; i < out; i++)
      ck_assert(fabs(b[i] - (r.b[l][i] - 0.125 * gb[l][i])) <= 1e-6 + 1e-5 * fabs(gb[l][i]));
    free(W);
    free(gW[l]);
    free(gb[l]);
  }
  ref_free(&r);
  mpe_train_net_free(net);
}
END_TEST

/* Adam's first step is -lr * g / (|g| + eps) = -lr sign(g) where |g| >> eps; SGD with
   momentum 0.9 takes -lr g1 then -lr (0.9 g1 + g2). */
START_TEST(test_optimizers)
{
  mpe_train_arch arch = { 1, { 6, 3 }, MPE_TRAIN_IDENTITY, MPE_TRAIN_MSE, 5, 5 };
  mpe_train_policy pol = { MPE_TRAIN_O0, MPE_FP16, NULL, NULL, 0 };
  float x[30], t[15];
  mpe_train_randn(x, 30, 8);
  mpe_train_randn(t, 15, 9);
  double *gW[1], *gb[1], *gW2[1], *gb2[1];
  gW[0] = malloc(18 * sizeof(double));
  gb[0] = malloc(3 * sizeof(double));
  gW2[0] = malloc(18 * sizeof(double));
  gb2[0] = malloc(3 * sizeof(double));
  float W[18], b[3];
  mpe_train_step_info info;

  mpe_train_optim adam = { MPE_TRAIN_ADAM, 1e-3f, 0, 0, 0, 0 };
  mpe_train_net *net;
  ck_assert_int_eq(mpe_train_net_alloc(&net, &arch, &pol, &adam), MPE_OK);
  ref_net r;
  ref_from(&r, net, &arch);
  ref_grad(&r, MPE_TRAIN_IDENTITY, MPE_TRAIN_MSE, x, t, NULL, 5, gW, gb);
  ck_assert_int_eq(mpe_train_step(net, x, t, NULL, 5, &info), MPE_OK);
  ck_assert_int_eq(mpe_train_weights(net, 0, W, b), MPE_OK);
  for (int i = 0; i < 18; i++)
    if (fabs(gW[0][i]) > 1e-4)
      ck_assert_msg(fabs((W[i] - r.W[0][i]) + 1e-3 * copysign(1, gW[0][i])) < 2e-7, "W[%d]", i);
  ref_free(&r);
  mpe_train_net_free(net);

  mpe_train_optim sgdm = { MPE_TRAIN_SGD, 0.0625f, 0.9f, 0, 0, 0 };
  ck_assert_int_eq(mpe_train_net_alloc(&net, &arch, &pol, &sgdm), MPE_OK);
  ref_from(&r, net, &arch);
  ref_grad(&r, MPE_TRAIN_IDENTITY, MPE_TRAIN_MSE, x, t, NULL, 5, gW, gb);
  for (int i = 0; i < 18; i++)
    r.W[0][i] -= 0.0625 * gW[0][i];
  for (int i = 0; i < 3; i++)
    r.b[0][i] -= 0.0625 * gb[0][i];
  ref_grad(&r, MPE_TRAIN_IDENTITY, MPE_TRAIN_MSE, x, t, NULL, 5, gW2, gb2);
  for (int i = 0; i < 18; i++)
    r.W[0][i] -= 0.0625 * (0.9 * gW[0][i] + gW2[0][i]);
  for (int i = 0; i < 3; i++)
    r.b[0][i] -= 0.0625 * (0.9 * gb[0][i] + gb2[0][i]);
  ck_assert_int_eq(mpe_train_step(net, x, t, NULL, 5, &info), MPE_OK);
  ck_assert_int_eq(mpe_train_step(net, x, t, NULL, 5, &info), MPE_OK);
  ck_assert_int_eq(mpe_train_weights(net, 0, W, b), MPE_OK);
  for (int i = 0; i < 18; i++)
    ck_assert_msg(fabs(W[i] - r.W[0][i]) < 2e-6, "W[%d] %g want %g", i, W[i], r.W[0][i]);
  for (int i = 0; i < 3; i++)
    ck_assert(fabs(b[i] - r.b[0][i]) < 2e-6);
  ref_free(&r);
  mpe_train_net_free(net);
  free(gW[0]);
  free(gb[0]);
  free(gW2[0]);
  free(gb2[0]);
}
END_TEST

/* ---- a small lab (a): Linear 128 -> 64, N = 16, MSE, SGD lr 1e-3 */

enum { AN = 16, ADIN = 128, ADOUT = 64 };

typedef struct {
  double loss[200];
  uint64_t updates, lost, skipped, zeros, values;
  double scale;
  float W[ADIN * ADOUT], b[ADOUT];
} amp_result;

static void amp_run(amp_result *res, mpe_train_level level, mpe_type low, const char *model, int steps,
                    double init_scale, float xscale)
{
  static float x[AN * ADIN], y[AN * ADOUT];
  mpe_train_randn(x, AN * ADIN, 3);
  mpe_train_randn(y, AN * ADOUT, 4);
  for (int i = 0; i < AN * ADIN; i++)
    x[i] *= xscale;
  mpe_train_arch arch = { 1, { ADIN, ADOUT }, MPE_TRAIN_IDENTITY, MPE_TRAIN_MSE, AN, 1 };
  mpe_train_policy pol = { level, low, model, NULL, init_scale };
  mpe_train_optim opt = { MPE_TRAIN_SGD, 1e-3f, 0, 0, 0, 0 };
  mpe_train_net *net;
  ck_assert_int_eq(mpe_train_net_alloc(&net, &arch, &pol, &opt), MPE_OK);
  memset(res, 0, sizeof *res);
  for (int t = 0; t < steps; t++) {
    mpe_train_step_info info;
    ck_assert_int_eq(mpe_train_step(net, x, y, NULL, AN, &info), MPE_OK);
    res->loss[t] = info.loss;
    res->updates += info.updates;
    res->lost += info.lost;
    res->skipped += (uint64_t)info.skipped;
    res->zeros += info.grad_zeros;
    res->values += info.grad_values;
  }
  res->scale = mpe_train_loss_scale(net);
  ck_assert_int_eq(mpe_train_weights(net, 0, res->W, res->b), MPE_OK);
  mpe_train_net_free(net);
}

/* O2 ends within 1e-3 (relative) of O0; O3 loses most of its updates while O0-O2
   lose almost none; O3's weights stay low-format values. */
START_TEST(test_amp_levels)
{
  const mpe_type low = _i ? MPE_BF16 : MPE_FP16;
  const mpe_format *f = mpe_format_of(low);
  static amp_result r0, r2, r3;
  amp_run(&r0, MPE_TRAIN_O0, low, "h100", 100, 0, 1);
  amp_run(&r2, MPE_TRAIN_O2, low, "h100", 100, 0, 1);
  amp_run(&r3, MPE_TRAIN_O3, low, "h100", 100, 0, 1);
  ck_assert(r0.loss[99] < r0.loss[0]);   /* it trains */
  double rel = fabs(r2.loss[99] - r0.loss[99]) / r0.loss[99];
  ck_assert_msg(rel < 1e-3, "O2 vs O0 %g", rel);
  ck_assert_msg((double)r3.lost / (double)r3.updates > 0.5, "O3 lost %g", (double)r3.lost / (double)r3.updates);
  ck_assert_msg((double)r2.lost / (double)r2.updates < 0.01, "O2 lost %g", (double)r2.lost / (double)r2.updates);
  ck_assert_msg((double)r0.lost / (double)r0.updates < 0.01, "O0 lost");
  ck_assert(r3.loss[99] > r0.loss[99]);  /* losing updates slows training */
  ck_assert_uint_eq(r2.skipped, 0);
  ck_assert(r2.scale == 65536);
  for (int i = 0; i < ADIN * ADOUT; i++)
    ck_assert(mpe_round_scalar(r3.W[i], f, NULL) == r3.W[i]);
}
END_TEST

/* Loss scaling: 2^40 overflows the FP16 gradients; the step is skipped (weights
   untouched) and the scale backs off by 2 until it fits. Without scaling, small
   gradients underflow to 0 in FP16; a scale of 2^16 keeps them. */
START_TEST(test_loss_scaling)
{
  const mpe_train_level level = _i ? MPE_TRAIN_O2 : MPE_TRAIN_O1;
  static amp_result a, b, c;
  amp_run(&a, level, MPE_FP16, "a100", 1, 0x1p40, 1);
  amp_run(&b, level, MPE_FP16, "a100", 0, 0x1p40, 1);   /* the initial weights */
  ck_assert_uint_eq(a.skipped, 1);
  ck_assert(a.scale == 0x1p39);
  ck_assert_uint_eq(a.updates, 0);
  ck_assert_int_eq(memcmp(a.W, b.W, sizeof a.W), 0);
  amp_run(&a, level, MPE_FP16, "a100", 40, 0x1p40, 1);
  /* gradients of the loss are about 2/(N D_out) = 2^-9 times O(1): dz * S must stay
     below 65504, and dW = dz^T x sums 16 such terms: the first good scale is 2^20 or less */
  ck_assert(a.skipped >= 16 && a.skipped <= 30);
  ck_assert(a.scale == ldexp(1, 40 - (int)a.skipped));
  /* underflow: inputs scaled by 2^-14 make dW of order 2^-23 .. 2^-30. O2 holds the
     weight gradients in FP16: unscaled, many become 0. O1's GEMMs write FP32: none do. */
  amp_run(&b, level, MPE_FP16, "a100", 1, 1, 0x1p-14f);
  amp_run(&c, level, MPE_FP16, "a100", 1, 65536, 0x1p-14f);
  if (level == MPE_TRAIN_O2)
    ck_assert_msg(b.zeros > 100 * (c.zeros + 1), "scale 1: %llu zeros, 2^16: %llu",
                  (unsigned long long)b.zeros, (unsigned long long)c.zeros);
  else
    ck_assert_uint_eq(b.zeros, 0);
}
END_TEST

/* Same seed, bit-identical loss curves and weights with 1 and 2 threads, for every
   level, both formats, V100 and H100 models; an MLP with GELU, cross-entropy and Adam too. */
START_TEST(test_threads)
{
  static const struct { mpe_type low; const char *model; } cfg[] = {
    { MPE_FP16, "v100" }, { MPE_FP16, "h100" }, { MPE_BF16, "h100" } };
  const int c = _i / MPE_TRAIN_NLEVELS;
  const mpe_train_level level = (mpe_train_level)(_i % MPE_TRAIN_NLEVELS);
  static amp_result a, b;
#ifdef _OPENMP
  omp_set_num_threads(1);
#endif
  amp_run(&a, level, cfg[c].low, cfg[c].model, 12, 0, 1);
#ifdef _OPENMP
  omp_set_num_threads(2);
#endif
  amp_run(&b, level, cfg[c].low, cfg[c].model, 12, 0, 1);
  ck_assert_int_eq(memcmp(a.loss, b.loss, sizeof a.loss), 0);
  ck_assert_int_eq(memcmp(a.W, b.W, sizeof a.W), 0);

  /* MLP 32 -> 96 -> 4, GELU, cross-entropy, Adam, batch 64 */
  mpe_train_arch arch = { 2, { 32, 96, 4 }, MPE_TRAIN_GELU, MPE_TRAIN_XENT, 64, 2 };
  mpe_train_policy pol = { level, cfg[c].low, cfg[c].model, NULL, 0 };
  mpe_train_optim opt = { MPE_TRAIN_ADAM, 1e-2f, 0, 0, 0, 0 };
  float *x = malloc(64 * 32 * sizeof *x);
  int lab[64];
  ck_assert_int_eq(mpe_train_spirals(x, lab, 64, 32, 5), MPE_OK);
  double curve[2][8];
  for (int pass = 0; pass < 2; pass++) {
#ifdef _OPENMP
    omp_set_num_threads(pass + 1);
#endif
    mpe_train_net *net;
    ck_assert_int_eq(mpe_train_net_alloc(&net, &arch, &pol, &opt), MPE_OK);
    for (int t = 0; t < 8; t++) {
      mpe_train_step_info info;
      ck_assert_int_eq(mpe_train_step(net, x, NULL, lab, 64, &info), MPE_OK);
      curve[pass][t] = info.loss;
    }
    mpe_train_net_free(net);
  }
  ck_assert_int_eq(memcmp(curve[0], curve[1], sizeof curve[0]), 0);
  /* it trains, except pure FP16 Adam: v = (1 - beta2) g^2 underflows and u = -lr m / eps explodes */
  if (!(level == MPE_TRAIN_O3 && cfg[c].low == MPE_FP16))
    ck_assert(curve[0][7] < curve[0][0]);
  free(x);
}
END_TEST

START_TEST(test_data)
{
  enum { n = 4000, d = 16 };
  float *x = malloc(n * d * sizeof *x), *x2 = malloc(n * d * sizeof *x2);
  int *lab = malloc(n * sizeof *lab), *lab2 = malloc(n * sizeof *lab2), count[4] = { 0 };
  ck_assert_int_eq(mpe_train_spirals(x, lab, n, d, 9), MPE_OK);
  ck_assert_int_eq(mpe_train_spirals(x2, lab2, n, d, 9), MPE_OK);
  ck_assert_int_eq(memcmp(x, x2, n * d * sizeof *x), 0);
  ck_assert_int_eq(memcmp(lab, lab2, n * sizeof *lab), 0);
  for (int i = 0; i < n; i++) {
    ck_assert(lab[i] >= 0 && lab[i] < 4);
    count[lab[i]]++;
  }
  for (int k = 0; k < 4; k++)   /* each class 1000 +- 5 sigma (sigma = 27) */
    ck_assert(abs(count[k] - 1000) < 140);
  /* Box-Muller draws: mean 0, variance 1 */
  double s = 0, s2 = 0;
  mpe_train_randn(x, n * d, 1);
  for (int i = 0; i < n * d; i++) {
    s += x[i];
    s2 += (double)x[i] * x[i];
  }
  ck_assert(fabs(s / (n * d)) < 0.03 && fabs(s2 / (n * d) - 1) < 0.03);
  ck_assert_int_eq(mpe_train_spirals(NULL, lab, n, d, 1), MPE_EINVAL);
  ck_assert_int_eq(mpe_train_spirals(x, lab, n, 1, 1), MPE_EINVAL);
  free(x);
  free(x2);
  free(lab);
  free(lab2);
}
END_TEST

START_TEST(test_errors)
{
  mpe_train_arch arch = { 2, { 4, 5, 3 }, MPE_TRAIN_RELU, MPE_TRAIN_XENT, 2, 1 };
  mpe_train_policy pol = { MPE_TRAIN_O2, MPE_BF16, "v100", NULL, 0 };
  mpe_train_optim opt = { MPE_TRAIN_SGD, 0.1f, 0, 0, 0, 0 };
  mpe_train_net *net = NULL;
  ck_assert_int_eq(mpe_train_net_alloc(&net, &arch, &pol, &opt), MPE_EUNSUP);   /* no BF16 on V100 */
  pol.model = "nope";
  ck_assert_int_eq(mpe_train_net_alloc(&net, &arch, &pol, &opt), MPE_ENOTFOUND);
  pol.model = "a100";
  pol.scaler = "nope";
  ck_assert_int_eq(mpe_train_net_alloc(&net, &arch, &pol, &opt), MPE_ENOTFOUND);
  pol.scaler = NULL;
  pol.low = MPE_E4M3;
  ck_assert_int_eq(mpe_train_net_alloc(&net, &arch, &pol, &opt), MPE_EINVAL);
  pol.low = MPE_BF16;
  pol.level = (mpe_train_level)4;
  ck_assert_int_eq(mpe_train_net_alloc(&net, &arch, &pol, &opt), MPE_EINVAL);
  pol.level = MPE_TRAIN_O2;
  arch.sizes[1] = 0;
  ck_assert_int_eq(mpe_train_net_alloc(&net, &arch, &pol, &opt), MPE_EINVAL);
  arch.sizes[1] = 5;
  opt.lr = 0;
  ck_assert_int_eq(mpe_train_net_alloc(&net, &arch, &pol, &opt), MPE_EINVAL);
  opt.lr = INFINITY;
  ck_assert_int_eq(mpe_train_net_alloc(&net, &arch, &pol, &opt), MPE_EINVAL);
  opt.lr = 0.1f;
  /* a loss scale the scaler cannot store (binary32): not "out of memory" */
  static const double bad_scales[] = { INFINITY, 1e300, 1e39, 1e-300, 5e-324 };
  for (size_t i = 0; i < sizeof bad_scales / sizeof bad_scales[0]; i++) {
    pol.init_scale = bad_scales[i];
    ck_assert_int_eq(mpe_train_net_alloc(&net, &arch, &pol, &opt), MPE_EINVAL);
  }
  pol.init_scale = 0;
  /* Adam: beta in [0, 1) (0 = the default), eps finite and >= 0 */
  static const float bad_adam[][3] = { { 2, 0, 0 }, { -0.5f, 0, 0 }, { 1, 0, 0 }, { 0, 1, 0 }, { 0, 2, 0 },
                                        { 0, 0, -1 }, { 0, 0, INFINITY } };
  for (size_t i = 0; i < sizeof bad_adam / sizeof bad_adam[0]; i++) {
    mpe_train_optim ad = { MPE_TRAIN_ADAM, 1e-3f, 0, bad_adam[i][0], bad_adam[i][1], bad_adam[i][2] };
    ck_assert_int_eq(mpe_train_net_alloc(&net, &arch, &pol, &ad), MPE_EINVAL);
  }
  ck_assert_int_eq(mpe_train_net_alloc(NULL, &arch, &pol, &opt), MPE_EINVAL);
  ck_assert_ptr_null(net);
  ck_assert_int_eq(mpe_train_net_alloc(&net, &arch, &pol, &opt), MPE_OK);
  float x[12] = { 0 }, out[9];
  int lab[3] = { 0, 1, 3 };
  mpe_train_step_info info;
  ck_assert_int_eq(mpe_train_step(net, x, NULL, lab, 3, &info), MPE_EINVAL);   /* n > batch */
  ck_assert_int_eq(mpe_train_step(net, x, NULL, lab + 1, 2, &info), MPE_EINVAL);   /* label 3 of 3 classes */
  ck_assert_int_eq(mpe_train_step(net, x, NULL, NULL, 2, &info), MPE_EINVAL);
  ck_assert_int_eq(mpe_train_step(net, x, NULL, lab, 2, NULL), MPE_EINVAL);
  ck_assert_int_eq(mpe_train_forward(net, x, 3, out), MPE_EINVAL);
  ck_assert_int_eq(mpe_train_forward(net, x, 2, out), MPE_OK);
  ck_assert_int_eq(mpe_train_weights(net, 2, NULL, NULL), MPE_EINVAL);
  ck_assert_int_eq(mpe_train_step(net, x, NULL, lab, 2, &info), MPE_OK);
  mpe_train_net_free(net);
  mpe_train_net_free(NULL);
  ck_assert_int_eq(mpe_train_level_lookup("O2"), 2);
  ck_assert_int_eq(mpe_train_level_lookup("o3"), 3);
  ck_assert_int_eq(mpe_train_level_lookup("O4"), -1);
  ck_assert_int_eq(mpe_train_level_lookup(NULL), -1);
  ck_assert_str_eq(mpe_train_level_name(MPE_TRAIN_O1), "O1");
  ck_assert_ptr_null(mpe_train_level_name((mpe_train_level)5));
}
END_TEST

/* mpe_train_step is mpe_train_backward then mpe_train_update, bit for bit, at every level; and a
   data-parallel step with one worker and a binary32 all-reduce (what
   examples/ddp_lab does, through the writable mpe_train_grad buffers) is mpe_train_step. */
START_TEST(test_split_step)
{
  const mpe_train_level level = (mpe_train_level)_i;
  mpe_train_arch arch = { .nlayers = 2, .sizes = { 12, 8, 5 }, .act = MPE_TRAIN_RELU, .loss = MPE_TRAIN_MSE, .batch = 8, .seed = 3 };
  mpe_train_policy pol = { .level = level, .low = MPE_FP16, .model = "a100" };
  mpe_train_optim opt = { .kind = MPE_TRAIN_SGD, .lr = 0.05f, .momentum = 0.9f };
  mpe_train_net *a, *b, *c;
  ck_assert_int_eq(mpe_train_net_alloc(&a, &arch, &pol, &opt), MPE_OK);
  ck_assert_int_eq(mpe_train_net_alloc(&b, &arch, &pol, &opt), MPE_OK);
  ck_assert_int_eq(mpe_train_net_alloc(&c, &arch, &pol, &opt), MPE_OK);
  float x[8 * 12], t[8 * 5], g[8 * 12 + 12], out[8 * 12 + 12];
  mpe_allreduce_opts ao = { .algo = MPE_ALLREDUCE_RING };
  for (int s = 0; s < 6; s++) {
    mpe_train_randn(x, 8 * 12, 10 + (uint64_t)s);
    mpe_train_randn(t, 8 * 5, 20 + (uint64_t)s);
    mpe_train_step_info ia, ib, ic;
    ck_assert_int_eq(mpe_train_step(a, x, t, NULL, 8, &ia), MPE_OK);
    ck_assert_int_eq(mpe_train_backward(b, x, t, NULL, 8, &ib), MPE_OK);
    ck_assert_int_eq(mpe_train_update(b, &ib), MPE_OK);
    ck_assert_int_eq(mpe_train_backward(c, x, t, NULL, 8, &ic), MPE_OK);
    for (int l = 0; l < 2; l++) {
      float *gW, *gb;
      ck_assert_int_eq(mpe_train_grad(c, l, &gW, &gb), MPE_OK);
      const int nw = arch.sizes[l] * arch.sizes[l + 1], no = arch.sizes[l + 1];
      memcpy(g, gW, sizeof(float) * (size_t)nw);
      memcpy(g + nw, gb, sizeof(float) * (size_t)no);
      const float *in[1] = { g };
      ck_assert_int_eq(mpe_allreduce_f32(out, in, 1, (size_t)(nw + no), &ao, NULL), MPE_OK);
      memcpy(gW, out, sizeof(float) * (size_t)nw);
      memcpy(gb, out + nw, sizeof(float) * (size_t)no);
    }
    ck_assert_int_eq(mpe_train_update(c, &ic), MPE_OK);
    ck_assert(ia.loss == ib.loss && ia.loss == ic.loss);
    ck_assert(ia.updates == ib.updates && ia.lost == ib.lost && ia.updates == ic.updates && ia.lost == ic.lost);
    ck_assert(ia.skipped == ib.skipped && ia.skipped == ic.skipped);
  }
  for (int l = 0; l < 2; l++) {
    float wa[96], ba[8], wb[96], bb[8], wc[96], bc[8];
    ck_assert_int_eq(mpe_train_weights(a, l, wa, ba), MPE_OK);
    ck_assert_int_eq(mpe_train_weights(b, l, wb, bb), MPE_OK);
    ck_assert_int_eq(mpe_train_weights(c, l, wc, bc), MPE_OK);
    const size_t nw = (size_t)arch.sizes[l] * arch.sizes[l + 1], no = (size_t)arch.sizes[l + 1];
    ck_assert_int_eq(memcmp(wa, wb, nw * sizeof(float)), 0);
    ck_assert_int_eq(memcmp(wa, wc, nw * sizeof(float)), 0);
    ck_assert_int_eq(memcmp(ba, bb, no * sizeof(float)), 0);
    ck_assert_int_eq(memcmp(ba, bc, no * sizeof(float)), 0);
  }
  /* the mpe_train_grad buffers are the ones mpe_train_update reads: zeroed at a first
     step (momentum buffer = g = 0), nothing moves */
  mpe_train_net *d;
  ck_assert_int_eq(mpe_train_net_alloc(&d, &arch, &pol, &opt), MPE_OK);
  float w0[96], w1[96], b0[8], b1[8];
  float *gW, *gb;
  mpe_train_step_info iz;
  ck_assert_int_eq(mpe_train_weights(d, 0, w0, b0), MPE_OK);
  ck_assert_int_eq(mpe_train_backward(d, x, t, NULL, 8, &iz), MPE_OK);
  for (int l = 0; l < 2; l++) {
    ck_assert_int_eq(mpe_train_grad(d, l, &gW, &gb), MPE_OK);
    memset(gW, 0, sizeof(float) * (size_t)arch.sizes[l] * arch.sizes[l + 1]);
    memset(gb, 0, sizeof(float) * (size_t)arch.sizes[l + 1]);
  }
  ck_assert_int_eq(mpe_train_update(d, &iz), MPE_OK);
  ck_assert_int_eq(mpe_train_weights(d, 0, w1, b1), MPE_OK);
  ck_assert_uint_eq(iz.skipped, 0);
  ck_assert_uint_eq(iz.updates, 0);
  ck_assert_int_eq(memcmp(w0, w1, sizeof w0), 0);
  ck_assert_int_eq(memcmp(b0, b1, sizeof b0), 0);
  mpe_train_net_free(d);
  ck_assert_int_eq(mpe_train_grad(a, 2, &gW, &gb), MPE_EINVAL);
  ck_assert_int_eq(mpe_train_grad(a, -1, &gW, &gb), MPE_EINVAL);
  ck_assert_int_eq(mpe_train_grad(NULL, 0, &gW, &gb), MPE_EINVAL);
  mpe_train_step_info dummy;
  ck_assert_int_eq(mpe_train_update(NULL, &dummy), MPE_EINVAL);
  ck_assert_int_eq(mpe_train_update(a, NULL), MPE_EINVAL);
  mpe_train_net_free(a);
  mpe_train_net_free(b);
  mpe_train_net_free(c);
}
END_TEST

int main(void)
{
  Suite *s = suite_create("train");
  TCase *tc = tcase_create("reference");
  tcase_set_timeout(tc, 120);
  tcase_add_loop_test(tc, test_sgd_gradients, 0, 6);
  tcase_add_test(tc, test_optimizers);
  tcase_add_test(tc, test_data);
  suite_add_tcase(s, tc);
  tc = tcase_create("levels");
  tcase_set_timeout(tc, 300);
  tcase_add_loop_test(tc, test_amp_levels, 0, 2);
  tcase_add_loop_test(tc, test_loss_scaling, 0, 2);
  tcase_add_loop_test(tc, test_split_step, 0, MPE_TRAIN_NLEVELS);
  tcase_add_loop_test(tc, test_threads, 0, 3 * MPE_TRAIN_NLEVELS);
  suite_add_tcase(s, tc);
  tc = tcase_create("errors");
  tcase_add_test(tc, test_errors);
  suite_add_tcase(s, tc);
  return ts_run(s);
}
