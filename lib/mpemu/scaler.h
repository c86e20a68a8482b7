/* mpemu — dynamic loss scalers: the rules of PyTorch's GradScaler,
   Apex, Megatron-LM, DeepSpeed and Keras as one parametrised state machine,
   and Transformer Engine's delayed scaling for FP8. */
#ifndef MPEMU_SCALER_H
#define MPEMU_SCALER_H
#include "mpemu/core.h"
#include "mpemu/format.h"
#ifdef __cplusplus
extern "C" {
#endif

typedef struct { double init_scale, growth_factor, backoff_factor, min_scale, max_scale;
                 int growth_interval, hysteresis;
                 /* added after the fields of the contract: */
                 int growth_delay;   /* extra clean steps before the first growth after the start or
                                        an overflow (DeepSpeed's FP16_Optimizer: 1; others 0) */
                 int storage;        /* where the scale lives: MPE_SCALER_BINARY64 (0, a Python
                                        float: Apex, DeepSpeed) or MPE_SCALER_BINARY32 (a float32
                                        tensor or variable: PyTorch, Megatron, Keras) */
} mpe_scaler_params;

/* mpe_scaler_params.storage. With binary32 the scale, min_scale and max_scale
   are rounded to binary32 (init_scale must stay finite), and every growth or
   backoff is the binary64 product rounded to binary32, as PyTorch's
   _amp_update_scale_ does: a growth whose binary32 product is inf is not
   applied (the scale stops at 2^127 with factor 2), and a backoff can round
   the scale to 0 (below 2^-149, ties to even) unless min_scale holds it. */
enum { MPE_SCALER_BINARY64 = 0, MPE_SCALER_BINARY32 = 1 };

typedef struct mpe_scaler mpe_scaler;

/* Fill *p with a preset: "pytorch", "apex", "megatron", "deepspeed", "keras",
   and "deepspeed-zero" (DeepSpeed's ZeRO DynamicLossScaler, growth after W clean
   steps). pytorch, megatron and keras keep the scale in binary32, apex and the
   deepspeed presets in binary64. MPE_ENOTFOUND for other names, MPE_EINVAL for NULL. */
MPE_API int  mpe_scaler_params_preset(mpe_scaler_params *p, const char *name);
/* A scaler in *s (the constructor convention of <mpemu/core.h>: on failure *s is
   NULL). MPE_EINVAL when s or p is NULL or p is invalid (init_scale,
   growth_factor not finite and > 0, backoff_factor in (0, 1], min_scale >= 0,
   max_scale >= init_scale >= min_scale, growth_interval >= 1, hysteresis >= 1,
   growth_delay >= 0, storage one of MPE_SCALER_BINARY64/32; with binary32 these
   hold after rounding and init_scale <= FLT_MAX); MPE_ENOMEM. */
MPE_API int mpe_scaler_create(mpe_scaler **s, const mpe_scaler_params *p);
/* Deprecated (use mpe_scaler_create, which tells a bad p from no memory):
   the scaler, or NULL on either. */
MPE_API mpe_scaler *mpe_scaler_alloc(const mpe_scaler_params *p);
MPE_API void mpe_scaler_free(mpe_scaler *s);     /* NULL is ignored */
/* The scale to multiply the loss by in the coming step. */
MPE_API double mpe_scaler_scale(const mpe_scaler *s);
/* Report whether this step's scaled gradients held an inf or NaN.
   Returns 1 when the optimizer step is to be applied, 0 when it is skipped. */
MPE_API int  mpe_scaler_update(mpe_scaler *s, int found_inf);
/* Steps seen, steps skipped. */
MPE_API uint64_t mpe_scaler_steps(const mpe_scaler *s);
MPE_API uint64_t mpe_scaler_skipped(const mpe_scaler *s);

/* Transformer Engine "delayed scaling" for FP8: the scale of a step comes from
   the amax (max |x|) of earlier steps. */
typedef struct {
  const mpe_format *format;  /* target: e4m3 (forward) or e5m2 (gradients); NULL: e4m3 */
  int history_len;           /* amax history window (0: 1024) */
  int margin;                /* scale = fp8_max / amax / 2^margin (>= 0) */
  int most_recent;           /* 1: use the latest amax instead of the max over the window */
} mpe_delayed_params;

typedef struct mpe_delayed mpe_delayed;
/* Delayed scaling in *d (on failure *d is NULL): MPE_EINVAL when d or p is NULL,
   history_len < 0, margin outside 0..126, or a format whose max finite is not a
   positive binary32 number; MPE_ENOMEM. */
MPE_API int mpe_delayed_create(mpe_delayed **d, const mpe_delayed_params *p);
/* Deprecated (use mpe_delayed_create): the object, or NULL on bad params or no memory. */
MPE_API mpe_delayed *mpe_delayed_alloc(const mpe_delayed_params *p);
MPE_API void mpe_delayed_free(mpe_delayed *d);   /* NULL is ignored */
/* The scale for the coming step (1 before any amax has been recorded). */
MPE_API double mpe_delayed_scale(const mpe_delayed *d);
/* Record this step's amax and compute the next scale: the amax enters the
   history window, amax_ref = max of the window (or the latest), and the
   scale becomes (fp8_max / amax_ref) / 2^margin computed in binary32 as TE
   does; an amax_ref that is zero or not finite keeps the old scale, an
   infinite quotient gives FLT_MAX. MPE_EINVAL for NULL or a negative amax. */
MPE_API int  mpe_delayed_update(mpe_delayed *d, double amax);

#ifdef __cplusplus
}
#endif
#endif
