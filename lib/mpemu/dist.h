/* mpemu — beyond one machine: the memory arithmetic of data-parallel
   training with ZeRO (mpe_memory_estimate(3)), data-parallel all-reduce in a
   low-precision format in the order of a named algorithm (mpe_allreduce(3)),
   and the spread of sums whose order of additions is not fixed
   (mpe_order_study(3)). The memory arithmetic and the all-reduce are in
   libmpemu-analysis; mpe_order_study draws with GSL and is in
   libmpemu-solvers (`pkg-config --libs mpemu-solvers`). */
#ifndef MPEMU_DIST_H
#define MPEMU_DIST_H
#include "mpemu/core.h"
#include "mpemu/format.h"
#ifdef __cplusplus
extern "C" {
#endif

/* ---- memory arithmetic (Rajbhandari et al., ZeRO, SC20, section 3 and Table 1) */
typedef enum { MPE_OPT_ADAM = 0, MPE_OPT_SGD, MPE_OPT_ADAFACTOR } mpe_memory_optimizer;
typedef enum { MPE_PREC_FP32 = 0, MPE_PREC_AMP_FP16, MPE_PREC_AMP_BF16, MPE_PREC_FP8 } mpe_memory_precision;
#define MPE_MEMORY_NOPTIMIZERS 3
#define MPE_MEMORY_NPRECISIONS 4

/* "adam", "sgd", "adafactor" / "fp32", "amp-fp16", "amp-bf16", "fp8"; NULL / -1 otherwise. */
MPE_API const char *mpe_memory_optimizer_name(mpe_memory_optimizer o);
MPE_API int mpe_memory_optimizer_lookup(const char *name);
MPE_API const char *mpe_memory_precision_name(mpe_memory_precision p);
MPE_API int mpe_memory_precision_lookup(const char *name);

typedef struct {
  double params;                   /* number of parameters (Psi), > 0 */
  mpe_memory_optimizer optimizer;
  mpe_memory_precision precision;
  int zero;                        /* ZeRO-DP stage 0 (plain data parallel), 1, 2 or 3 */
  int gpus;                        /* data-parallel degree N_d >= 1 */
  double activations;              /* bytes of activations per GPU (not partitioned), >= 0 */
} mpe_memory_config;

typedef struct {
  /* bytes per parameter before partitioning */
  double weight_bytes, gradient_bytes, master_bytes, optimizer_bytes;
  double k;                        /* ZeRO's K: master + optimizer bytes per parameter */
  /* bytes per GPU after ZeRO partitioning */
  double weights, gradients, master, optimizer, activations, total;
} mpe_memory_report;

/* Per-GPU bytes of model states for c (formulas in mpe_memory_estimate(3)).
   MPE_EINVAL for NULL, params <= 0 or not finite, zero outside 0..3, gpus < 1,
   activations < 0 or not finite, enum values out of range. */
MPE_API int mpe_memory_estimate(mpe_memory_report *r, const mpe_memory_config *c);
/* Activation bytes of a GPT-style transformer trained with 16-bit activations,
   no recomputation and no tensor/sequence parallelism (Korthikanti et al., 2022,
   eq. 1): layers * seq * batch * hidden * (34 + 5 * heads * seq / hidden).
   MPE_EINVAL when any argument is 0. */
MPE_API int mpe_memory_activations(double *bytes, double seq, double batch, double hidden,
                                   double layers, double heads);

/* ---- all-reduce in a low-precision format */
typedef enum {
  MPE_ALLREDUCE_RING = 0,  /* reduce-scatter then all-gather (chunk schedule in mpe_allreduce(3)) */
  MPE_ALLREDUCE_TREE,      /* binomial tree to worker 0, then broadcast */
  MPE_ALLREDUCE_NAIVE      /* sequential: ((x0 + x1) + x2) + ... */
} mpe_allreduce_algo;
#define MPE_ALLREDUCE_NALGOS 3
/* "ring", "tree", "naive"; NULL / -1 otherwise. */
MPE_API const char *mpe_allreduce_algo_name(mpe_allreduce_algo a);
MPE_API int mpe_allreduce_algo_lookup(const char *name);

typedef struct {
  mpe_allreduce_algo algo;
  const mpe_format *format;  /* the format sent and summed in (NULL: fp32); precision <= 24 */
  mpe_round_opts round;      /* rounding of the cast and of every addition */
  float scale;               /* inputs are multiplied by scale before the cast (FP8 with a
                                scale); the sum is multiplied by 1/scale (binary64) on the way
                                out. 0 means 1; must be finite and > 0 otherwise */
} mpe_allreduce_opts;

typedef struct {
  uint64_t n, workers;
  uint64_t not_rounded;   /* sums (in format) that differ from the exact sum of the cast inputs rounded once */
  uint64_t nonfinite;     /* outputs that are inf or NaN although every input is finite */
  double max_ulps;        /* max |sum - exact sum of the cast inputs| in ulps of the format */
  double max_abs_err;     /* max |out - exact sum of the binary32 inputs| (cast, sums and unscale) */
  double max_rel_err;     /* the same relative to |exact sum|, over non-zero exact sums */
  double rms_err;         /* root mean square of out - exact sum */
} mpe_allreduce_stats;

/* out[i] = the sum over w < workers of in[w][i] as the algorithm sums it: each
   input is cast to the format (x = round(scale * in)), every addition is
   rounded to the format, out = sum * (1/scale) rounded to binary32. st (may
   be NULL) gets the error against the exact sums. out may alias in[0].
   MPE_EINVAL for NULL arrays with n > 0, workers == 0, a bad format, mode or
   scale; MPE_ENOMEM. */
MPE_API int mpe_allreduce_f32(float *out, const float *const *in, size_t workers, size_t n,
                              const mpe_allreduce_opts *o, mpe_allreduce_stats *st);
/* The error statistics of a finished sum out (as from mpe_allreduce_f32 or a
   real all-reduce with the same options): the same figures as st above. */
MPE_API int mpe_allreduce_error(mpe_allreduce_stats *st, const float *out, const float *const *in,
                                size_t workers, size_t n, const mpe_allreduce_opts *o);
/* Ring chunk c of n values over `workers` ranks: [*begin, *end). */
MPE_API void mpe_allreduce_chunk(size_t n, size_t workers, size_t c, size_t *begin, size_t *end);

/* ---- sums whose order is not fixed */
typedef struct {
  const mpe_format *format;  /* NULL: fp32; precision <= 24 */
  mpe_round_opts round;      /* every addition; stochastic streams as in mpe_order_study(3) */
  size_t trials;             /* random orders per row (default 100 when 0) */
  uint64_t seed;             /* permutation seed */
  size_t splits;             /* split-K parts S (default 4 when 0; clamped to the row length) */
} mpe_order_opts;

#define MPE_ORDER_NBINS 12
typedef struct {
  uint64_t rows, len, trials, splits;
  uint64_t results;          /* rows * trials random-order sums */
  uint64_t differ;           /* random-order sums != the sequential sum */
  double share_differ;       /* differ / results */
  uint64_t rows_spread;      /* rows where not every order gave the same sum */
  double max_spread_ulps;    /* max over rows of (largest - smallest sum over all orders) in ulps of the exact sum */
  double mean_spread_ulps;
  /* |random - sequential| in ulps of the exact sum: bin 0 exactly 0, bin 1 (0, 1],
     bin b (2^(b-2), 2^(b-1)] for 2 <= b < MPE_ORDER_NBINS-1, the last bin anything larger */
  uint64_t dev_hist[MPE_ORDER_NBINS];
  uint64_t splitk_differ;    /* rows whose split-K sum != the sequential sum */
  double splitk_max_ulps;    /* max |split-K - sequential| in ulps */
  double seq_max_err_ulps;   /* max |sequential - exact| in ulps */
  double random_max_err_ulps;/* max |random - exact| in ulps */
  uint64_t nonfinite;        /* sums that are inf or NaN */
} mpe_order_stats;

/* x holds rows * len binary32 values; each row is one sum, computed in the
   sequential order, in `trials` seeded random orders (atomicAdd-style) and
   split-K (S consecutive parts summed sequentially, then the S partial sums
   in order). MPE_EINVAL for NULL, len == 0, a bad format or mode; MPE_ERANGE
   for a NaN or inf in x; MPE_ENOMEM. */
MPE_API int mpe_order_study(mpe_order_stats *st, const float *x, size_t rows, size_t len,
                            const mpe_order_opts *o);

#ifdef __cplusplus
}
#endif
#endif
