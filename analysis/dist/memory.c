/* Memory arithmetic of data-parallel training (mpe_memory_estimate(3)).
   Model states follow Rajbhandari et al., "ZeRO: Memory Optimizations Toward
   Training Trillion Parameter Models", SC20, section 3.1 and Table 1: with
   Psi parameters, 16-bit weights and gradients take 2 Psi bytes each and the
   optimizer K Psi (K = 12 for mixed-precision Adam: binary32 master weights,
   momentum and variance); stage 1 divides the K Psi by N_d, stage 2 also the
   gradients, stage 3 also the weights. */
#include <config.h>
#include <math.h>
#include <string.h>
#include "mpemu/dist.h"
#include "mpei_fenv.h"
#include "mpei_names.h"

static const char *const opt_names[MPE_MEMORY_NOPTIMIZERS] = { "adam", "sgd", "adafactor" };
static const char *const prec_names[MPE_MEMORY_NPRECISIONS] = { "fp32", "amp-fp16", "amp-bf16", "fp8" };

const char *mpe_memory_optimizer_name(mpe_memory_optimizer o)
{
  return (unsigned)o < MPE_MEMORY_NOPTIMIZERS ? opt_names[o] : NULL;
}

int mpe_memory_optimizer_lookup(const char *name)
{
  return mpei_name_index(opt_names, MPE_MEMORY_NOPTIMIZERS, name, 0);
}

const char *mpe_memory_precision_name(mpe_memory_precision p)
{
  return (unsigned)p < MPE_MEMORY_NPRECISIONS ? prec_names[p] : NULL;
}

int mpe_memory_precision_lookup(const char *name)
{
  return mpei_name_index(prec_names, MPE_MEMORY_NPRECISIONS, name, 0);
}

/* Bytes per parameter: the working weights and gradients in the compute
   format, binary32 master weights when that format is not binary32, and the
   optimizer's own state in binary32 (Adam: momentum and variance; SGD:
   momentum; Adafactor with beta1 = 0: factored row/column second moments,
   O(rows + cols) per matrix, counted as 0 per parameter). */
static void per_param(mpe_memory_report *r, mpe_memory_optimizer opt, mpe_memory_precision prec)
{
  static const double state[MPE_MEMORY_NOPTIMIZERS] = { 8, 4, 0 };
  switch (prec) {
  case MPE_PREC_FP32:
    r->weight_bytes = 4;
    r->gradient_bytes = 4;
    r->master_bytes = 0;
    break;
  case MPE_PREC_AMP_FP16:
  case MPE_PREC_AMP_BF16:
    r->weight_bytes = 2;
    r->gradient_bytes = 2;
    r->master_bytes = 4;
    break;
  case MPE_PREC_FP8:   /* FP8 copies for the GEMMs (Micikevicius et al. 2022), binary32 master */
    r->weight_bytes = 1;
    r->gradient_bytes = 1;
    r->master_bytes = 4;
    break;
  }
  r->optimizer_bytes = state[opt];
  r->k = r->master_bytes + r->optimizer_bytes;
}

int mpe_memory_estimate(mpe_memory_report *r, const mpe_memory_config *c)
{
  MPEI_FENV_GUARD();
  if (!r || !c || !isfinite(c->params) || c->params <= 0 || c->zero < 0 || c->zero > 3 ||
      c->gpus < 1 || !isfinite(c->activations) || c->activations < 0 ||
      (unsigned)c->optimizer >= MPE_MEMORY_NOPTIMIZERS || (unsigned)c->precision >= MPE_MEMORY_NPRECISIONS)
    return MPE_EINVAL;
  mpe_memory_report t;
  memset(&t, 0, sizeof t);
  per_param(&t, c->optimizer, c->precision);
  double psi = c->params, nd = c->gpus;
  t.weights = t.weight_bytes * psi / (c->zero >= 3 ? nd : 1);
  t.gradients = t.gradient_bytes * psi / (c->zero >= 2 ? nd : 1);
  t.master = t.master_bytes * psi / (c->zero >= 1 ? nd : 1);
  t.optimizer = t.optimizer_bytes * psi / (c->zero >= 1 ? nd : 1);
  t.activations = c->activations;
  t.total = t.weights + t.gradients + t.master + t.optimizer + t.activations;
  *r = t;
  return MPE_OK;
}

int mpe_memory_activations(double *bytes, double seq, double batch, double hidden,
                           double layers, double heads)
{
  MPEI_FENV_GUARD();
  if (!bytes || !(seq > 0) || !(batch > 0) || !(hidden > 0) || !(layers > 0) || !(heads > 0) ||
      !isfinite(seq * batch * hidden * layers * heads))
    return MPE_EINVAL;
  *bytes = layers * seq * batch * hidden * (34.0 + 5.0 * heads * seq / hidden);
  return MPE_OK;
}
