/* Dynamic loss scaling. The five frameworks differ only in parameters once
   their rules are written as one machine:
   - an overflow skips the step and resets the count of clean steps; it backs
     the scale off (never below min_scale) unless hysteresis still has credit,
     in which case it only spends one unit of credit;
   - the scale grows (never above max_scale, and never to inf) when the count
     of clean steps minus growth_delay is a positive multiple of
     growth_interval; a growth refills the hysteresis credit.
   PyTorch, Apex, Keras: hysteresis 1 (every overflow backs off). Megatron and
   DeepSpeed: hysteresis 2, refilled only on growth. DeepSpeed's FP16_Optimizer
   counts `stable_interval = iter - last_overflow_iter - 1`, so its growths come
   after W+1 clean steps, then every W (growth_delay 1); its ZeRO scaler counts
   `iter - last_overflow_iter` (growth_delay 0: preset "deepspeed-zero").
   Where the scale lives matters at the ends of the range: PyTorch keeps it in
   a float32 tensor and its _amp_update_scale_ kernel computes
   (float)(scale * factor) with double factors, growing only when that is
   finite and backing off without a floor, so 166 overflows in a row from 2^16
   leave exactly 0. Megatron's DynamicGradScaler and tf.keras's
   LossScaleOptimizer keep float32 too; Apex and DeepSpeed keep Python floats. */
#include <config.h>
#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include "mpei.h"
#include "mpemu/scaler.h"

struct mpe_scaler {
  mpe_scaler_params p;
  double scale;
  uint64_t clean;      /* clean steps since the start or the last overflow */
  int credit;          /* hysteresis left */
  uint64_t steps, skipped;
};

int mpe_scaler_params_preset(mpe_scaler_params *p, const char *name)
{
  MPEI_FENV_GUARD();
  static const struct { const char *name; mpe_scaler_params p; } presets[] = {
    /* init, growth, backoff, min, max, interval, hysteresis, delay, storage */
    { "pytorch",        { 65536.0, 2.0, 0.5, 0.0, INFINITY, 2000, 1, 0, MPE_SCALER_BINARY32 } },
    { "apex",           { 65536.0, 2.0, 0.5, 0.0, 16777216.0, 2000, 1, 0, MPE_SCALER_BINARY64 } },
    { "megatron",       { 4294967296.0, 2.0, 0.5, 1.0, INFINITY, 1000, 2, 0, MPE_SCALER_BINARY32 } },
    { "deepspeed",      { 65536.0, 2.0, 0.5, 1.0, INFINITY, 1000, 2, 1, MPE_SCALER_BINARY64 } },
    { "deepspeed-zero", { 65536.0, 2.0, 0.5, 1.0, INFINITY, 1000, 2, 0, MPE_SCALER_BINARY64 } },
    { "keras",          { 32768.0, 2.0, 0.5, 1.0, INFINITY, 2000, 1, 0, MPE_SCALER_BINARY32 } },
  };
  if (!p || !name)
    return MPE_EINVAL;
  for (size_t i = 0; i < sizeof presets / sizeof presets[0]; i++)
    if (!strcasecmp(name, presets[i].name)) {
      *p = presets[i].p;
      return MPE_OK;
    }
  return MPE_ENOTFOUND;
}

/* v rounded to where the scale lives (binary32: once, to nearest even, as a
   C++ float = double assignment does) */
static double stored(int storage, double v)
{
  if (storage == MPE_SCALER_BINARY32) {
    volatile float f = (float)v;
    return f;
  }
  return v;
}

int mpe_scaler_create(mpe_scaler **out, const mpe_scaler_params *p)
{
  MPEI_FENV_GUARD();
  if (!out)
    return MPE_EINVAL;
  *out = NULL;
  if (!p || (p->storage != MPE_SCALER_BINARY64 && p->storage != MPE_SCALER_BINARY32))
    return MPE_EINVAL;
  mpe_scaler_params q = *p;
  q.init_scale = stored(q.storage, q.init_scale);
  q.min_scale = stored(q.storage, q.min_scale);
  q.max_scale = stored(q.storage, q.max_scale);
  if (!isfinite(q.init_scale) || !(q.init_scale > 0) || !isfinite(q.growth_factor) ||
      !(q.growth_factor > 0) || !(q.backoff_factor > 0 && q.backoff_factor <= 1) ||
      !(q.min_scale >= 0) || !(q.min_scale <= q.init_scale) || !(q.max_scale >= q.init_scale) ||
      q.growth_interval < 1 || q.hysteresis < 1 || q.growth_delay < 0)
    return MPE_EINVAL;
  mpe_scaler *s = calloc(1, sizeof *s);
  if (!s)
    return MPE_ENOMEM;
  s->p = q;
  s->scale = q.init_scale;
  s->credit = p->hysteresis;
  *out = s;
  return MPE_OK;
}

mpe_scaler *mpe_scaler_alloc(const mpe_scaler_params *p)
{
  MPEI_FENV_GUARD();
  mpe_scaler *s;
  mpe_scaler_create(&s, p);
  return s;
}

void mpe_scaler_free(mpe_scaler *s) { free(s); }
double mpe_scaler_scale(const mpe_scaler *s) { MPEI_FENV_GUARD(); return s ? s->scale : NAN; }
uint64_t mpe_scaler_steps(const mpe_scaler *s) { return s ? s->steps : 0; }
uint64_t mpe_scaler_skipped(const mpe_scaler *s) { return s ? s->skipped : 0; }

int mpe_scaler_update(mpe_scaler *s, int found_inf)
{
  MPEI_FENV_GUARD();
  if (!s)
    return 0;
  s->steps++;
  if (found_inf) {
    s->skipped++;
    s->clean = 0;
    if (s->credit > 1) {
      s->credit--;
    } else {
      double v = stored(s->p.storage, s->scale * s->p.backoff_factor);
      s->scale = v < s->p.min_scale ? s->p.min_scale : v;
    }
    return 0;
  }
  s->clean++;
  uint64_t w = (uint64_t)s->p.growth_interval, d = (uint64_t)s->p.growth_delay;
  if (s->clean > d && (s->clean - d) % w == 0) {
    double v = stored(s->p.storage, s->scale * s->p.growth_factor);
    if (v > s->p.max_scale)
      v = s->p.max_scale;
    if (isfinite(v))
      s->scale = v;
    s->credit = s->p.hysteresis;
  }
  return 1;
}

/* ---------------------------------------------------------------- delayed scaling */

struct mpe_delayed {
  float fp8_max;
  int len, margin, most_recent;
  int filled, head;
  float scale;
  float hist[];
};

int mpe_delayed_create(mpe_delayed **out, const mpe_delayed_params *p)
{
  MPEI_FENV_GUARD();
  if (!out)
    return MPE_EINVAL;
  *out = NULL;
  if (!p || p->history_len < 0 || p->margin < 0 || p->margin > 126)
    return MPE_EINVAL;
  const mpe_format *f = p->format ? p->format : mpe_format_of(MPE_E4M3);
  double mx = mpe_format_max(f);
  if (!(mx > 0) || mx > FLT_MAX)
    return MPE_EINVAL;
  int len = p->history_len ? p->history_len : 1024;
  mpe_delayed *d = calloc(1, sizeof *d + (size_t)len * sizeof(float));
  if (!d)
    return MPE_ENOMEM;
  d->fp8_max = (float)mx;
  d->len = len;
  d->margin = p->margin;
  d->most_recent = p->most_recent;
  d->scale = 1.0f;
  *out = d;
  return MPE_OK;
}

mpe_delayed *mpe_delayed_alloc(const mpe_delayed_params *p)
{
  MPEI_FENV_GUARD();
  mpe_delayed *d;
  mpe_delayed_create(&d, p);
  return d;
}

void mpe_delayed_free(mpe_delayed *d) { free(d); }
double mpe_delayed_scale(const mpe_delayed *d) { MPEI_FENV_GUARD(); return d ? d->scale : NAN; }

int mpe_delayed_update(mpe_delayed *d, double amax)
{
  MPEI_FENV_GUARD();
  if (!d || amax < 0 || isnan(amax))
    return MPE_EINVAL;
  float a = (float)amax;
  d->hist[d->head] = a;
  d->head = (d->head + 1) % d->len;
  if (d->filled < d->len)
    d->filled++;
  float ref = a;
  if (!d->most_recent)
    for (int i = 0; i < d->filled; i++)
      if (d->hist[i] > ref)
        ref = d->hist[i];
  if (isfinite(ref) && ref > 0) {
    volatile float q = d->fp8_max / ref;          /* binary32, as the TE kernel */
    float s = q / ldexpf(1.0f, d->margin);
    d->scale = isinf(s) ? FLT_MAX : s;
  }
  return MPE_OK;
}
