/* The training engine of the labs: dense layers, ReLU/GELU, MSE and softmax
   cross-entropy, SGD with momentum and Adam, under the AMP levels O0-O3 (see
   mpemu/train.h for what each level rounds where). Built with -ffp-contract=off so
   the binary32 arithmetic written here is exactly the arithmetic done. */
#include <config.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "mpemu.h"
#include "mpei_fenv.h"

#define GELU_K 0.7978845608028654f   /* sqrt(2/pi) */
#define GELU_C 0.044715f

typedef struct {
  int in, out;
  float *W, *b;        /* the weights of record: FP32 master (O0-O2), low-format (O3) */
  float *Wl, *bl;      /* O2: the low-format copy the model computes with */
  float *gW, *gb;      /* gradients */
  float *s1W, *s1b, *s2W, *s2b;   /* optimizer state (momentum / Adam m, v) */
  float *z;            /* pre-activation outputs, batch x out */
  float *a;            /* post-activation outputs (the next layer's input), batch x out */
} layer;

struct mpe_train_net {
  mpe_train_arch arch;
  mpe_train_policy pol;
  mpe_train_optim opt;
  const mpe_format *f;       /* the low format (NULL for O0) */
  const mpe_format *f32;
  const mpe_tc_model *tc;    /* NULL for O0 */
  mpe_scaler *scaler;        /* O1, O2 */
  layer L[MPE_TRAIN_MAXLAYERS];
  float *x;                  /* the input as the level sees it, batch x sizes[0] */
  float *dz, *da, *tmp;      /* batch x max width */
  float *pack;               /* the binary32 GEMM's packed B */
  int *lab;
  uint64_t t;                /* optimizer steps applied */
  int first;                 /* SGD momentum: buf = g at the first step */
};

static const char *const level_names[MPE_TRAIN_NLEVELS] = { "O0", "O1", "O2", "O3" };

const char *mpe_train_level_name(mpe_train_level l)
{
  return (unsigned)l < MPE_TRAIN_NLEVELS ? level_names[l] : NULL;
}

int mpe_train_level_lookup(const char *name)
{
  if (!name)
    return -1;
  if ((name[0] == 'O' || name[0] == 'o') && name[1] >= '0' && name[1] <= '3' && !name[2])
    return name[1] - '0';
  if (name[0] >= '0' && name[0] <= '3' && !name[1])
    return name[0] - '0';
  return -1;
}

/* ---- deterministic data */

static uint64_t splitmix(uint64_t *s)
{
  uint64_t z = (*s += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

static double uniform01(uint64_t *s)   /* (0, 1) */
{
  return ((double)(splitmix(s) >> 11) + 0.5) * 0x1p-53;
}

void mpe_train_randn(float *x, size_t n, uint64_t seed)
{
  MPEI_FENV_GUARD();
  uint64_t s = seed;
  for (size_t i = 0; i < n; i += 2) {
    double r = sqrt(-2 * log(uniform01(&s))), th = 2 * M_PI * uniform01(&s);
    x[i] = (float)(r * cos(th));
    if (i + 1 < n)
      x[i + 1] = (float)(r * sin(th));
  }
}

int mpe_train_spirals(float *x, int *labels, int n, int d, uint64_t seed)
{
  MPEI_FENV_GUARD();
  if (!x || !labels || n < 1 || d < 2)
    return MPE_EINVAL;
  uint64_t s = seed ^ 0x5eed5eedull;
  float *mix = malloc((size_t)d * d * sizeof *mix), *v = malloc((size_t)d * sizeof *v);
  if (!mix || !v) {
    free(mix);
    free(v);
    return MPE_ENOMEM;
  }
  /* identity plus a random perturbation: well conditioned, spreads the plane over all features */
  mpe_train_randn(mix, (size_t)d * d, seed * 31 + 7);
  for (int i = 0; i < d; i++)
    for (int j = 0; j < d; j++)
      mix[(size_t)i * d + j] = (i == j ? 1.0f : 0.0f) + mix[(size_t)i * d + j] * (float)(0.5 / sqrt((double)d));
  for (int i = 0; i < n; i++) {
    int c = (int)(splitmix(&s) & 3);
    double r = 0.15 + 0.85 * uniform01(&s);
    double th = c * M_PI / 2 + 3.0 * r + 0.12 * (uniform01(&s) - 0.5) * 2;
    v[0] = (float)(2 * r * cos(th));
    v[1] = (float)(2 * r * sin(th));
    mpe_train_randn(v + 2, (size_t)d - 2, splitmix(&s));
    for (int j = 2; j < d; j++)
      v[j] *= 0.3f;
    for (int j = 0; j < d; j++) {
      double acc = 0;
      for (int k = 0; k < d; k++)
        acc += (double)mix[(size_t)j * d + k] * v[k];
      x[(size_t)i * d + j] = (float)acc;
    }
    labels[i] = c;
  }
  free(mix);
  free(v);
  return MPE_OK;
}

/* ---- GEMMs: C (m x n) = op(A) op(B), row-major, beta = 0 */

/* binary32 multiply then add in ascending k, one output row per thread */
static void gemm32(mpe_train_net *net, mpe_trans ta, mpe_trans tb, int m, int n, int k,
                   const float *A, int lda, const float *B, int ldb, float *C, int ldc)
{
  const float *Bp = B;
  int ldp = ldb;
  if (tb == MPE_TRANS) {   /* pack B^T (k x n) so the inner loop runs along contiguous j */
    float *P = net->pack;
    for (int kk = 0; kk < k; kk++)
      for (int j = 0; j < n; j++)
        P[(size_t)kk * n + j] = B[(size_t)j * ldb + kk];
    Bp = P;
    ldp = n;
  }
#pragma omp parallel if ((long)m * n * k > 100000)
  {
    MPEI_FENV_GUARD();
#pragma omp for schedule(static)
    for (int i = 0; i < m; i++) {
      float *restrict c = C + (size_t)i * ldc;
      for (int j = 0; j < n; j++)
        c[j] = 0;
      for (int kk = 0; kk < k; kk++) {
        const float aik = ta == MPE_NO_TRANS ? A[(size_t)i * lda + kk] : A[(size_t)kk * lda + i];
        const float *restrict b = Bp + (size_t)kk * ldp;
        for (int j = 0; j < n; j++)
          c[j] = c[j] + aik * b[j];
      }
    }
  }
}

static int gemm(mpe_train_net *net, mpe_trans ta, mpe_trans tb, int m, int n, int k,
                const float *A, int lda, const float *B, int ldb, float *C, int ldc)
{
  if (!net->tc) {
    gemm32(net, ta, tb, m, n, k, A, lda, B, ldb, C, ldc);
    return MPE_OK;
  }
  return mpe_gemm(net->tc, MPE_ROW_MAJOR, ta, tb, m, n, k, 1.0f, A, MPE_FP32, lda, B, MPE_FP32, ldb,
                  0.0f, C, MPE_FP32, ldc);
}

/* y = x rounded to the low format when the level holds values in it (O2, O3) */
static int to_low(const mpe_train_net *net, float *y, const float *x, size_t n)
{
  if (net->pol.level < MPE_TRAIN_O2) {
    if (y != x)
      memcpy(y, x, n * sizeof *y);
    return MPE_OK;
  }
  return mpe_round_f32(y, x, n, net->f, NULL);
}

/* ---- allocation */

void mpe_train_net_free(mpe_train_net *net)
{
  if (!net)
    return;
  for (int l = 0; l < net->arch.nlayers; l++) {
    layer *y = &net->L[l];
    free(y->W); free(y->b); free(y->Wl); free(y->bl); free(y->gW); free(y->gb);
    free(y->s1W); free(y->s1b); free(y->s2W); free(y->s2b); free(y->z); free(y->a);
  }
  free(net->x);
  free(net->dz);
  free(net->da);
  free(net->tmp);
  free(net->pack);
  free(net->lab);
  mpe_scaler_free(net->scaler);
  free(net);
}

static float *alloc_f(size_t n)
{
  return calloc(n ? n : 1, sizeof(float));
}

int mpe_train_net_alloc(mpe_train_net **out, const mpe_train_arch *arch, const mpe_train_policy *pol, const mpe_train_optim *opt)
{
  MPEI_FENV_GUARD();
  if (out)
    *out = NULL;   /* the constructor convention (mpemu/core.h) */
  if (!out || !arch || !pol || !opt || arch->nlayers < 1 || arch->nlayers > MPE_TRAIN_MAXLAYERS ||
      arch->batch < 1 || (unsigned)pol->level >= MPE_TRAIN_NLEVELS || (unsigned)arch->act > MPE_TRAIN_GELU ||
      (unsigned)arch->loss > MPE_TRAIN_XENT || (unsigned)opt->kind > MPE_TRAIN_ADAM || !(opt->lr > 0) ||
      !isfinite(opt->lr) || !(opt->momentum >= 0 && opt->momentum < 1) || !(pol->init_scale >= 0))
    return MPE_EINVAL;
  /* Adam: 0 means the default; otherwise 0 <= beta < 1 (beta = 1 divides by zero in
     the bias correction) and a finite eps > 0 */
  if (opt->kind == MPE_TRAIN_ADAM && (!(opt->beta1 >= 0 && opt->beta1 < 1) || !(opt->beta2 >= 0 && opt->beta2 < 1) ||
                                      !(opt->eps >= 0) || !isfinite(opt->eps)))
    return MPE_EINVAL;
  for (int l = 0; l <= arch->nlayers; l++)
    if (arch->sizes[l] < 1 || arch->sizes[l] > (1 << 20))
      return MPE_EINVAL;
  if (arch->loss == MPE_TRAIN_XENT && arch->sizes[arch->nlayers] < 2)
    return MPE_EINVAL;
  const mpe_format *f = NULL;
  const mpe_tc_model *tc = NULL;
  if (pol->level != MPE_TRAIN_O0) {
    if (pol->low != MPE_FP16 && pol->low != MPE_BF16)
      return MPE_EINVAL;
    if (!pol->model)
      return MPE_EINVAL;
    f = mpe_format_of(pol->low);
    tc = mpe_tc_model_get(pol->model, pol->low);
    if (!tc)
      return mpe_tc_model_get(pol->model, MPE_FP16) || mpe_tc_model_get(pol->model, MPE_BF16)
             ? MPE_EUNSUP : MPE_ENOTFOUND;
  }
  mpe_scaler_params sp;
  if (pol->level == MPE_TRAIN_O1 || pol->level == MPE_TRAIN_O2) {
    int rc = mpe_scaler_params_preset(&sp, pol->scaler ? pol->scaler : "pytorch");
    if (rc)
      return rc;
    if (pol->init_scale > 0) {
      /* the scale as the scaler stores it must be a finite number > 0 */
      double st = sp.storage == MPE_SCALER_BINARY32 ? (double)(float)pol->init_scale : pol->init_scale;
      if (!isfinite(st) || !(st > 0))
        return MPE_EINVAL;
      sp.init_scale = pol->init_scale;
      if (sp.max_scale < sp.init_scale)
        sp.max_scale = sp.init_scale;
      if (sp.min_scale > sp.init_scale)
        sp.min_scale = sp.init_scale;
    }
  }
  mpe_train_net *net = calloc(1, sizeof *net);
  if (!net)
    return MPE_ENOMEM;
  net->arch = *arch;
  net->pol = *pol;
  net->opt = *opt;
  if (net->opt.kind == MPE_TRAIN_ADAM) {
    if (net->opt.beta1 == 0) net->opt.beta1 = 0.9f;
    if (net->opt.beta2 == 0) net->opt.beta2 = 0.999f;
    if (net->opt.eps == 0) net->opt.eps = 1e-8f;
  }
  net->f = f;
  net->f32 = mpe_format_of(MPE_FP32);
  net->tc = tc;
  net->first = 1;
  int ok = 1;
  if (pol->level == MPE_TRAIN_O1 || pol->level == MPE_TRAIN_O2) {
    int rc = mpe_scaler_create(&net->scaler, &sp);   /* MPE_EINVAL or MPE_ENOMEM */
    if (rc) {
      mpe_train_net_free(net);
      return rc;
    }
  }
  const size_t B = (size_t)arch->batch;
  size_t maxw = 0, maxkn = 0;
  uint64_t s = arch->seed;
  for (int l = 0; l < arch->nlayers && ok; l++) {
    layer *y = &net->L[l];
    y->in = arch->sizes[l];
    y->out = arch->sizes[l + 1];
    size_t nw = (size_t)y->in * y->out;
    if ((size_t)y->in > maxw) maxw = (size_t)y->in;
    if ((size_t)y->out > maxw) maxw = (size_t)y->out;
    if (nw > maxkn) maxkn = nw;
    if (B * y->in > maxkn) maxkn = B * y->in;
    if (B * y->out > maxkn) maxkn = B * y->out;
    y->W = alloc_f(nw); y->b = alloc_f((size_t)y->out);
    y->gW = alloc_f(nw); y->gb = alloc_f((size_t)y->out);
    y->s1W = alloc_f(nw); y->s1b = alloc_f((size_t)y->out);
    y->s2W = alloc_f(nw); y->s2b = alloc_f((size_t)y->out);
    y->z = alloc_f(B * y->out); y->a = alloc_f(B * y->out);
    if (pol->level == MPE_TRAIN_O2) {
      y->Wl = alloc_f(nw);
      y->bl = alloc_f((size_t)y->out);
    }
    ok = y->W && y->b && y->gW && y->gb && y->s1W && y->s1b && y->s2W && y->s2b && y->z && y->a &&
         (pol->level != MPE_TRAIN_O2 || (y->Wl && y->bl));
    if (!ok)
      break;
    /* PyTorch's nn.Linear initialisation: U(-1/sqrt(in), 1/sqrt(in)) */
    double bound = 1 / sqrt((double)y->in);
    for (size_t i = 0; i < nw; i++)
      y->W[i] = (float)((2 * uniform01(&s) - 1) * bound);
    for (int i = 0; i < y->out; i++)
      y->b[i] = (float)((2 * uniform01(&s) - 1) * bound);
    if (pol->level == MPE_TRAIN_O3) {   /* the model itself is held in the low format */
      ok = !mpe_round_f32(y->W, y->W, nw, f, NULL) && !mpe_round_f32(y->b, y->b, (size_t)y->out, f, NULL);
    } else if (pol->level == MPE_TRAIN_O2) {
      ok = !mpe_round_f32(y->Wl, y->W, nw, f, NULL) && !mpe_round_f32(y->bl, y->b, (size_t)y->out, f, NULL);
    }
  }
  if (ok) {
    net->x = alloc_f(B * arch->sizes[0]);
    net->dz = alloc_f(B * maxw);
    net->da = alloc_f(B * maxw);
    net->tmp = alloc_f(B * maxw > maxkn ? B * maxw : maxkn);
    net->pack = alloc_f(maxkn);
    net->lab = calloc(B, sizeof *net->lab);
    ok = net->x && net->dz && net->da && net->tmp && net->pack && net->lab;
  }
  if (!ok) {
    mpe_train_net_free(net);
    return MPE_ENOMEM;
  }
  *out = net;
  return MPE_OK;
}

double mpe_train_loss_scale(const mpe_train_net *net)
{
  MPEI_FENV_GUARD();
  return net && net->scaler ? mpe_scaler_scale(net->scaler) : 1.0;
}

int mpe_train_weights(const mpe_train_net *net, int l, float *W, float *b)
{
  MPEI_FENV_GUARD();
  if (!net || l < 0 || l >= net->arch.nlayers)
    return MPE_EINVAL;
  const layer *y = &net->L[l];
  if (W)
    memcpy(W, y->W, (size_t)y->in * y->out * sizeof *W);
  if (b)
    memcpy(b, y->b, (size_t)y->out * sizeof *b);
  return MPE_OK;
}

int mpe_train_set_weights(mpe_train_net *net, int l, const float *W, const float *b)
{
  MPEI_FENV_GUARD();
  if (!net || l < 0 || l >= net->arch.nlayers)
    return MPE_EINVAL;
  layer *y = &net->L[l];
  const size_t nw = (size_t)y->in * y->out, nb = (size_t)y->out;
  if (W)
    memcpy(y->W, W, nw * sizeof *W);
  if (b)
    memcpy(y->b, b, nb * sizeof *b);
  int rc = MPE_OK;
  if (net->pol.level == MPE_TRAIN_O3)
    rc = mpe_round_f32(y->W, y->W, nw, net->f, NULL) || mpe_round_f32(y->b, y->b, nb, net->f, NULL) ? MPE_EINVAL : 0;
  else if (net->pol.level == MPE_TRAIN_O2)
    rc = mpe_round_f32(y->Wl, y->W, nw, net->f, NULL) || mpe_round_f32(y->bl, y->b, nb, net->f, NULL) ? MPE_EINVAL : 0;
  return rc;
}

/* ---- forward */

static void act_fwd(mpe_train_act act, float *a, const float *z, size_t n, float *t)
{
  switch (act) {
  case MPE_TRAIN_IDENTITY:
    if (a != z)
      memcpy(a, z, n * sizeof *a);
    break;
  case MPE_TRAIN_RELU:
    for (size_t i = 0; i < n; i++)
      a[i] = z[i] > 0 ? z[i] : 0.0f;
    break;
  case MPE_TRAIN_GELU: {   /* tanh form, binary32 opmath; tanh through mpe_ew_tanh */
    for (size_t i = 0; i < n; i++)
      t[i] = GELU_K * (z[i] + GELU_C * z[i] * z[i] * z[i]);
    mpe_ew_tanh(t, t, n, mpe_format_of(MPE_FP32), NULL);
    for (size_t i = 0; i < n; i++)
      a[i] = 0.5f * z[i] * (1.0f + t[i]);
    break;
  }
  }
}

/* d act / dz at z, binary32 */
static void act_grad(mpe_train_act act, float *g, const float *z, size_t n)
{
  switch (act) {
  case MPE_TRAIN_IDENTITY:
    for (size_t i = 0; i < n; i++)
      g[i] = 1;
    break;
  case MPE_TRAIN_RELU:
    for (size_t i = 0; i < n; i++)
      g[i] = z[i] > 0 ? 1.0f : 0.0f;
    break;
  case MPE_TRAIN_GELU:
    for (size_t i = 0; i < n; i++)
      g[i] = GELU_K * (z[i] + GELU_C * z[i] * z[i] * z[i]);
    mpe_ew_tanh(g, g, n, mpe_format_of(MPE_FP32), NULL);
    for (size_t i = 0; i < n; i++) {
      float th = g[i], dz = GELU_K * (1.0f + 3.0f * GELU_C * z[i] * z[i]);
      g[i] = 0.5f * (1.0f + th) + 0.5f * z[i] * (1.0f - th * th) * dz;
    }
    break;
  }
}

static int forward(mpe_train_net *net, const float *x, int n)
{
  const int nl = net->arch.nlayers;
  const int lo = net->pol.level >= MPE_TRAIN_O2;
  int rc = to_low(net, net->x, x, (size_t)n * net->arch.sizes[0]);
  const float *in = net->x;
  for (int l = 0; l < nl && !rc; l++) {
    layer *y = &net->L[l];
    const float *W = net->pol.level == MPE_TRAIN_O2 ? y->Wl : y->W;
    const float *b = net->pol.level == MPE_TRAIN_O2 ? y->bl : y->b;
    size_t m = (size_t)n * y->out;
    if ((rc = gemm(net, MPE_NO_TRANS, MPE_TRANS, n, y->out, y->in, in, y->in, W, y->in, y->z, y->out)))
      break;
    /* the bias enters like cuBLAS's epilogue: a binary32 add, then the output rounding.
       O1 adds the FP16/BF16 copy of the bias (what autocast hands to the GEMM). */
    if (net->pol.level == MPE_TRAIN_O1) {
      if ((rc = mpe_round_f32(net->tmp, b, (size_t)y->out, net->f, NULL)))
        break;
      b = net->tmp;
    }
    for (int i = 0; i < n; i++)
      for (int j = 0; j < y->out; j++)
        y->z[(size_t)i * y->out + j] = y->z[(size_t)i * y->out + j] + b[j];
    if (lo && (rc = mpe_round_f32(y->z, y->z, m, net->f, NULL)))
      break;
    if (l < nl - 1) {
      act_fwd(net->arch.act, y->a, y->z, m, net->tmp);
      if (lo && (rc = mpe_round_f32(y->a, y->a, m, net->f, NULL)))
        break;
      in = y->a;
    }
  }
  return rc;
}

int mpe_train_forward(mpe_train_net *net, const float *x, int n, float *out)
{
  MPEI_FENV_GUARD();
  if (!net || !x || !out || n < 1 || n > net->arch.batch)
    return MPE_EINVAL;
  int rc = forward(net, x, n);
  if (!rc) {
    const layer *y = &net->L[net->arch.nlayers - 1];
    memcpy(out, y->z, (size_t)n * y->out * sizeof *out);
  }
  return rc;
}

/* ---- loss: value and dL/d(output) (scaled, in net->dz) */

static int loss_grad(mpe_train_net *net, const float *target, const int *labels, int n, float scale, double *loss)
{
  const layer *y = &net->L[net->arch.nlayers - 1];
  const int D = y->out;
  const size_t m = (size_t)n * D;
  const float *out = y->z;
  float *g = net->dz;
  int rc = MPE_OK;
  float sum = 0;   /* FP32 reduction in a fixed order */
  if (net->arch.loss == MPE_TRAIN_MSE) {
    const float *t = target;
    if (net->pol.level == MPE_TRAIN_O3) {   /* the targets are low-format tensors too */
      if ((rc = mpe_round_f32(net->tmp, target, m, net->f, NULL)))
        return rc;
      t = net->tmp;
    }
    const float c = (float)(2.0 / ((double)n * D));
    for (size_t i = 0; i < m; i++) {
      float d = out[i] - t[i];
      sum = sum + d * d;
      g[i] = d * c;
    }
    sum = sum / (float)m;
  } else {
    if ((rc = mpe_ew_softmax(g, out, (size_t)n, (size_t)D,
                             net->pol.level == MPE_TRAIN_O3 ? net->f : net->f32, NULL)))
      return rc;
    for (int i = 0; i < n; i++) {
      int c = labels[i];
      float p = g[(size_t)i * D + c];
      net->tmp[i] = p;
    }
    if ((rc = mpe_ew_log(net->tmp, net->tmp, (size_t)n, net->f32, NULL)))
      return rc;
    for (int i = 0; i < n; i++)
      sum = sum - net->tmp[i];
    sum = sum / (float)n;
    const float inv = 1.0f / (float)n;
    for (int i = 0; i < n; i++)
      for (int j = 0; j < D; j++) {
        size_t k = (size_t)i * D + j;
        g[k] = (g[k] - (j == labels[i] ? 1.0f : 0.0f)) * inv;
      }
  }
  if (scale != 1.0f)
    for (size_t i = 0; i < m; i++)
      g[i] = g[i] * scale;
  if (net->pol.level >= MPE_TRAIN_O2 && (rc = mpe_round_f32(g, g, m, net->f, NULL)))
    return rc;
  double L = sum;
  if (net->pol.level == MPE_TRAIN_O3)
    L = mpe_round_scalar(L, net->f, NULL);
  *loss = L;
  return rc;
}

/* ---- backward: gradients of every layer from net->dz */

static int backward(mpe_train_net *net, int n)
{
  const int nl = net->arch.nlayers;
  const int lo = net->pol.level >= MPE_TRAIN_O2;
  int rc = MPE_OK;
  for (int l = nl - 1; l >= 0 && !rc; l--) {
    layer *y = &net->L[l];
    const float *in = l ? net->L[l - 1].a : net->x;
    const float *W = net->pol.level == MPE_TRAIN_O2 ? y->Wl : y->W;
    /* dW = dz^T in (out x in) */
    if ((rc = gemm(net, MPE_TRANS, MPE_NO_TRANS, y->out, y->in, n, net->dz, y->out, in, y->in, y->gW, y->in)))
      break;
    for (int j = 0; j < y->out; j++) {
      float s = 0;
      for (int i = 0; i < n; i++)
        s = s + net->dz[(size_t)i * y->out + j];
      y->gb[j] = s;
    }
    if (lo && ((rc = mpe_round_f32(y->gW, y->gW, (size_t)y->out * y->in, net->f, NULL)) ||
               (rc = mpe_round_f32(y->gb, y->gb, (size_t)y->out, net->f, NULL))))
      break;
    if (l == 0)
      break;
    /* da = dz W (n x in), then dz_prev = da * act'(z_prev) */
    if ((rc = gemm(net, MPE_NO_TRANS, MPE_NO_TRANS, n, y->in, y->out, net->dz, y->out, W, y->in, net->da, y->in)))
      break;
    size_t m = (size_t)n * y->in;
    if (lo && (rc = mpe_round_f32(net->da, net->da, m, net->f, NULL)))
      break;
    act_grad(net->arch.act, net->tmp, net->L[l - 1].z, m);
    if (lo)
      rc = mpe_ew_mul(net->dz, net->da, net->tmp, m, net->f, NULL);
    else
      for (size_t i = 0; i < m; i++)
        net->dz[i] = net->da[i] * net->tmp[i];
  }
  return rc;
}

/* ---- optimizer */

static int nonfinite_any(const float *x, size_t n)
{
  int bad = 0;
  for (size_t i = 0; i < n; i++)
    bad |= !isfinite(x[i]);
  return bad;
}

/* The update u of each weight for this step, binary32 opmath; the optimizer
   state is rounded to the low format under O3. */
static int optim_updates(mpe_train_net *net, float *u, const float *g, float *s1, float *s2, size_t n)
{
  const mpe_train_optim *o = &net->opt;
  int rc = MPE_OK;
  if (o->kind == MPE_TRAIN_SGD) {
    if (o->momentum > 0) {
      for (size_t i = 0; i < n; i++)
        s1[i] = net->first ? g[i] : o->momentum * s1[i] + g[i];
      if (net->pol.level == MPE_TRAIN_O3 && (rc = mpe_round_f32(s1, s1, n, net->f, NULL)))
        return rc;
      g = s1;
    }
    for (size_t i = 0; i < n; i++)
      u[i] = -o->lr * g[i];
  } else {
    const float b1 = o->beta1, b2 = o->beta2;
    const float c1 = 1.0f - (float)pow(b1, (double)net->t), c2 = 1.0f - (float)pow(b2, (double)net->t);
    for (size_t i = 0; i < n; i++) {
      s1[i] = b1 * s1[i] + (1.0f - b1) * g[i];
      s2[i] = b2 * s2[i] + (1.0f - b2) * g[i] * g[i];
    }
    if (net->pol.level == MPE_TRAIN_O3 && ((rc = mpe_round_f32(s1, s1, n, net->f, NULL)) ||
                                      (rc = mpe_round_f32(s2, s2, n, net->f, NULL))))
      return rc;
    for (size_t i = 0; i < n; i++) {
      float mh = s1[i] / c1, vh = s2[i] / c2;
      u[i] = -o->lr * mh / (sqrtf(vh) + o->eps);
    }
  }
  return rc;
}

/* w += u: binary32 for the master weights, one rounding to the low format for O3 */
static int apply(mpe_train_net *net, float *w, const float *u, size_t n, mpe_train_step_info *info)
{
  float *old = net->pack;   /* free between GEMMs; at least as large as any weight matrix */
  memcpy(old, w, n * sizeof *w);
  int rc = MPE_OK;
  if (net->pol.level == MPE_TRAIN_O3)
    rc = mpe_ew_add(w, w, u, n, net->f, NULL);
  else
    for (size_t i = 0; i < n; i++)
      w[i] = w[i] + u[i];
  for (size_t i = 0; i < n; i++)
    if (u[i] != 0) {
      info->updates++;
      info->lost += w[i] == old[i];
    }
  return rc;
}

int mpe_train_backward(mpe_train_net *net, const float *x, const float *target, const int *labels, int n,
                 mpe_train_step_info *info)
{
  MPEI_FENV_GUARD();
  if (!net || !x || n < 1 || n > net->arch.batch || !info ||
      (net->arch.loss == MPE_TRAIN_MSE && !target) || (net->arch.loss == MPE_TRAIN_XENT && !labels))
    return MPE_EINVAL;
  const int D = net->arch.sizes[net->arch.nlayers];
  if (net->arch.loss == MPE_TRAIN_XENT)
    for (int i = 0; i < n; i++)
      if (labels[i] < 0 || labels[i] >= D)
        return MPE_EINVAL;
  memset(info, 0, sizeof *info);
  const double scale = net->scaler ? mpe_scaler_scale(net->scaler) : 1.0;
  info->scale = scale;
  int rc = forward(net, x, n);
  if (!rc)
    rc = loss_grad(net, target, labels, n, (float)scale, &info->loss);
  if (!rc)
    rc = backward(net, n);
  return rc;
}

int mpe_train_grad(mpe_train_net *net, int l, float **gW, float **gb)
{
  MPEI_FENV_GUARD();
  if (!net || l < 0 || l >= net->arch.nlayers || !gW || !gb)
    return MPE_EINVAL;
  *gW = net->L[l].gW;
  *gb = net->L[l].gb;
  return MPE_OK;
}

int mpe_train_update(mpe_train_net *net, mpe_train_step_info *info)
{
  MPEI_FENV_GUARD();
  if (!net || !info)
    return MPE_EINVAL;
  const double scale = net->scaler ? mpe_scaler_scale(net->scaler) : 1.0;   /* that of mpe_train_backward */
  int rc = MPE_OK;
  const int nl = net->arch.nlayers;
  /* overflow check and unscaling (O1, O2): inf/NaN in the scaled gradients skips the step */
  if (net->scaler) {
    int found = 0;
    for (int l = 0; l < nl; l++)
      found |= nonfinite_any(net->L[l].gW, (size_t)net->L[l].in * net->L[l].out) |
               nonfinite_any(net->L[l].gb, (size_t)net->L[l].out);
    int apply_step = mpe_scaler_update(net->scaler, found);
    if (!apply_step) {
      info->skipped = 1;
      info->nonfinite = !isfinite(info->loss);
      return MPE_OK;
    }
    const float inv = (float)(1.0 / scale);
    for (int l = 0; l < nl; l++) {
      layer *y = &net->L[l];
      for (size_t i = 0; i < (size_t)y->in * y->out; i++)
        y->gW[i] = y->gW[i] * inv;
      for (int i = 0; i < y->out; i++)
        y->gb[i] = y->gb[i] * inv;
    }
  }
  net->t++;
  for (int l = 0; l < nl && !rc; l++) {
    layer *y = &net->L[l];
    size_t nw = (size_t)y->in * y->out;
    for (size_t i = 0; i < nw; i++)
      info->grad_zeros += y->gW[i] == 0;
    for (int i = 0; i < y->out; i++)
      info->grad_zeros += y->gb[i] == 0;
    info->grad_values += nw + (size_t)y->out;
    float *u = net->tmp;   /* sized for the largest weight matrix */
    if ((rc = optim_updates(net, u, y->gW, y->s1W, y->s2W, nw)) || (rc = apply(net, y->W, u, nw, info)))
      break;
    if ((rc = optim_updates(net, u, y->gb, y->s1b, y->s2b, (size_t)y->out)) ||
        (rc = apply(net, y->b, u, (size_t)y->out, info)))
      break;
    if (net->pol.level == MPE_TRAIN_O2 &&
        ((rc = mpe_round_f32(y->Wl, y->W, nw, net->f, NULL)) ||
         (rc = mpe_round_f32(y->bl, y->b, (size_t)y->out, net->f, NULL))))
      break;
    info->nonfinite |= nonfinite_any(y->W, nw);
  }
  net->first = 0;
  info->nonfinite |= !isfinite(info->loss);
  return rc;
}

int mpe_train_step(mpe_train_net *net, const float *x, const float *target, const int *labels, int n,
             mpe_train_step_info *info)
{
  MPEI_FENV_GUARD();
  int rc = mpe_train_backward(net, x, target, labels, n, info);
  return rc ? rc : mpe_train_update(net, info);
}
