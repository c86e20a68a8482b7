/* mpemu — a small training engine for mixed-precision studies (libmpemu-analysis;
   the labs examples/amp_lab, mlp_lab, sparse_lab and ddp_lab are built on it).
   See mpe_train(3).

   A network is a stack of dense layers (y = x W^T + b, W stored out x in as in
   PyTorch) with ReLU or GELU between them, trained with MSE or softmax
   cross-entropy by SGD with momentum or Adam. Every GEMM goes through
   mpe_gemm with a tensor-core model (O0: a binary32 multiply-add in ascending
   k, no tensor cores), element-wise operations in a low format through the
   mpe_ew_* functions. The precision policy says where values are rounded:

   O0  everything binary32.
   O1  GEMM inputs rounded to the low format (the "FP16 copies" a tensor core
       reads), GEMM outputs binary32 (FP32 accumulation and output), everything
       else binary32: activations, loss, reductions, weights and optimizer.
       Dynamic loss scaling (a mpe_scaler preset).
   O2  the model's weights, activations and gradients held in the low format
       (GEMM outputs rounded to it, element-wise operations rounded once to
       it), FP32 master weights updated by the optimizer and copied down after
       each step; loss and its gradient computed in FP32; dynamic loss scaling.
   O3  pure low format: weights, activations, gradients and optimizer state
       all held in it, updates w = RNE(w + u) with u computed in FP32 opmath
       (as GPU kernels do), no master weights, no loss scaling.

   Results do not depend on the number of OpenMP threads: every GEMM output
   and every element is computed by one thread in a fixed order, and the
   reductions run in a fixed order. */
#ifndef MPEMU_TRAIN_H
#define MPEMU_TRAIN_H
#include <stddef.h>
#include <stdint.h>
#include "mpemu/core.h"
#ifdef __cplusplus
extern "C" {
#endif

typedef enum { MPE_TRAIN_O0 = 0, MPE_TRAIN_O1, MPE_TRAIN_O2, MPE_TRAIN_O3 } mpe_train_level;
#define MPE_TRAIN_NLEVELS 4
typedef enum { MPE_TRAIN_IDENTITY = 0, MPE_TRAIN_RELU, MPE_TRAIN_GELU } mpe_train_act;
typedef enum { MPE_TRAIN_MSE = 0, MPE_TRAIN_XENT } mpe_train_loss;
typedef enum { MPE_TRAIN_SGD = 0, MPE_TRAIN_ADAM } mpe_train_optim_kind;

typedef struct {
  mpe_train_level level;
  mpe_type low;            /* MPE_FP16 or MPE_BF16 (O0 ignores it) */
  const char *model;       /* tensor-core model: "v100", "a100", "h100", ... (O0 ignores it) */
  const char *scaler;      /* loss-scaler preset for O1/O2 (NULL: "pytorch") */
  double init_scale;       /* 0: the preset's initial scale */
} mpe_train_policy;

typedef struct {
  mpe_train_optim_kind kind;
  float lr;
  float momentum;          /* SGD: buf = momentum*buf + g (buf = g at the first step) */
  float beta1, beta2, eps; /* Adam (0: 0.9, 0.999, 1e-8) */
} mpe_train_optim;

typedef struct {
  int nlayers;             /* dense layers, 1..MPE_TRAIN_MAXLAYERS */
  int sizes[9];            /* sizes[0] inputs, sizes[l+1] outputs of layer l */
  mpe_train_act act;             /* between layers (none after the last) */
  mpe_train_loss loss;
  int batch;               /* the largest batch mpe_train_step / mpe_train_forward will see */
  uint64_t seed;           /* weights: uniform(-1/sqrt(fan_in), 1/sqrt(fan_in)), biases likewise */
} mpe_train_arch;
#define MPE_TRAIN_MAXLAYERS 8

typedef struct {
  double loss;             /* the loss as the level computed it (O3: rounded to the low format) */
  double scale;            /* the loss scale used in this step (1 without scaling) */
  int skipped;             /* 1: inf/NaN in the scaled gradients, step skipped */
  int nonfinite;           /* the loss or a weight is not finite (training diverged) */
  uint64_t updates;        /* weight updates with u != 0 in this step */
  uint64_t lost;           /* of those, updates after which the stored weight did not change
                              (the master weight for O0-O2, the low-format weight for O3) */
  uint64_t grad_values;    /* weight-gradient values (all layers, W and b) */
  uint64_t grad_zeros;     /* of those, exact zeros as the level holds them (after unscaling):
                              underflow shows up here */
} mpe_train_step_info;

typedef struct mpe_train_net mpe_train_net;

/* Errors: MPE_EINVAL (bad sizes, level, low type, optimizer), MPE_ENOTFOUND (unknown
   tensor-core model or scaler preset), MPE_EUNSUP (the model has no tensor core for
   that input type, e.g. BF16 on the V100), MPE_ENOMEM. On failure *net is NULL (<mpemu/core.h>). */
MPE_API int  mpe_train_net_alloc(mpe_train_net **net, const mpe_train_arch *arch, const mpe_train_policy *pol, const mpe_train_optim *opt);
MPE_API void mpe_train_net_free(mpe_train_net *net);
/* One training step on a batch of n <= arch->batch rows: x is n x sizes[0]; target is
   n x sizes[last] (MSE) or labels holds n class indices (cross-entropy). */
MPE_API int  mpe_train_step(mpe_train_net *net, const float *x, const float *target, const int *labels, int n,
              mpe_train_step_info *info);
/* The two halves of mpe_train_step, for data-parallel training (examples/ddp_lab):
   mpe_train_backward runs the forward pass, the loss and the backward pass on a batch
   and leaves the gradients in the network (multiplied by the loss scale under
   O1/O2; info gets the loss and the scale); mpe_train_grad gives layer l's gradient
   buffers (out x in and out values), which a data-parallel driver may overwrite
   with the all-reduced gradients; mpe_train_update does the rest of the step with
   the info of mpe_train_backward (overflow check and unscaling, the optimizer, the
   low-format copies). mpe_train_step is mpe_train_backward then mpe_train_update. */
MPE_API int  mpe_train_backward(mpe_train_net *net, const float *x, const float *target, const int *labels, int n,
                  mpe_train_step_info *info);
MPE_API int  mpe_train_grad(mpe_train_net *net, int l, float **gW, float **gb);
MPE_API int  mpe_train_update(mpe_train_net *net, mpe_train_step_info *info);
/* The network's outputs (n x sizes[last], before softmax) under the policy. */
MPE_API int  mpe_train_forward(mpe_train_net *net, const float *x, int n, float *out);
/* Copy of the weights (master for O0-O2) of layer l: W (out x in) and b (out). */
MPE_API int  mpe_train_weights(const mpe_train_net *net, int l, float *W, float *b);
/* Replace the weights of layer l (W: out x in, b: out; either may be NULL to keep
   it): the weights of record as the level holds them (rounded to the low format
   for O3) and, for O2, the low-format copy. The optimizer state is kept (the
   sparse lab re-applies a pruning mask after every step this way). */
MPE_API int mpe_train_set_weights(mpe_train_net *net, int l, const float *W, const float *b);
MPE_API double mpe_train_loss_scale(const mpe_train_net *net);

MPE_API const char *mpe_train_level_name(mpe_train_level l);    /* "O0".."O3" */
MPE_API int mpe_train_level_lookup(const char *name);     /* "O0"/"o0"/"0" .. ; -1 if unknown */

/* ---- deterministic data for the labs (splitmix64 + Box-Muller) */
MPE_API void mpe_train_randn(float *x, size_t n, uint64_t seed);
/* A 4-class problem in d >= 2 dimensions: four interleaved spiral arms in a plane,
   the other d-2 coordinates noise, all mixed by a fixed random rotation-like
   matrix. x: n x d, labels: n. */
MPE_API int mpe_train_spirals(float *x, int *labels, int n, int d, uint64_t seed);

#ifdef __cplusplus
}
#endif
#endif
