/* mpemu — master-weight update studies: apply updates w += u to
   weights held in a low-precision format under four strategies and count the
   updates that vanish (w + u == w with u != 0), against a binary64 reference.
   See mpe_update_study(3). */
#ifndef MPEMU_UPDATE_H
#define MPEMU_UPDATE_H
#include "mpemu/core.h"
#include "mpemu/format.h"
#ifdef __cplusplus
extern "C" {
#endif

typedef enum {
  MPE_UPDATE_LOW = 0,  /* weights held in the low format, w = RNE(w + u) */
  MPE_UPDATE_MASTER,   /* master weights in binary32 (or opts->master), m = RNE(m + u);
                          the model's copy is RNE(m) in the low format */
  MPE_UPDATE_KAHAN,    /* low-format weights with a low-format Kahan compensation c:
                          y = u - c, t = w + y, c = (t - w) - y, w = t (each op rounded RNE) */
  MPE_UPDATE_SR        /* low-format weights, w = SR(w + u) (stream (seed, step*n + i)) */
} mpe_update_strategy;
#define MPE_UPDATE_NSTRATEGIES 4

/* "low", "master", "kahan", "sr"; NULL / -1 for anything else. */
MPE_API const char *mpe_update_strategy_name(mpe_update_strategy s);
MPE_API int mpe_update_strategy_lookup(const char *name);

typedef struct {
  const mpe_format *master;  /* master-weight format (NULL: fp32); precision <= 51 */
  uint64_t seed;             /* stochastic rounding stream */
  int flush_subnormals;      /* low-format results flush subnormals to signed zero */
  int saturate;              /* low-format overflow gives +-max finite instead of inf */
} mpe_update_opts;           /* a zeroed struct or NULL means the defaults */

typedef struct {
  uint64_t steps;        /* steps applied */
  uint64_t updates;      /* element updates with u != 0 (u not NaN) */
  uint64_t lost;         /* of those, updates after which the strategy's state was unchanged:
                            low, sr: w; master: the master weight; kahan: both w and c */
  uint64_t stale;        /* of those, updates after which the low-format weight the model
                            computes with (w, or master's copy) was unchanged */
  double lost_fraction;  /* lost / updates (0 when updates == 0) */
  double stale_fraction; /* stale / updates */
  double max_abs_drift;  /* max_i |v_i - r_i|: v the weight of record (master: the master
                            weight, else w), r the binary64 reference */
  double rms_drift;      /* sqrt(mean_i (v_i - r_i)^2) */
  double max_rel_drift;  /* max_i |v_i - r_i| / |r_i| over r_i != 0 */
  uint64_t nonfinite;    /* weights of record that are inf or NaN now */
} mpe_update_stats;

/* One strategy applied step by step to n weights. Every strategy and the
   binary64 reference start from w0 rounded to f (RNE), so the drift measures
   the updates alone. Sums are rounded once from the exact w + u (binary64
   round-to-odd intermediate), so the lost-update rule of mpe_update_study(3) holds
   exactly: with RNE, w + u == w when |u| < ulp(w)/2, ties to even, ulp(w)/4
   toward zero at a power of two. */
typedef struct mpe_update mpe_update;

/* f: the low format (precision <= 24). Errors: MPE_EINVAL (NULL s or f, NULL w0
   with n > 0, strategy out of range, f precision > 24, master precision > 51 or
   below f's), MPE_ENOMEM. On failure *s is NULL (<mpemu/core.h>). */
MPE_API int  mpe_update_alloc(mpe_update **s, mpe_update_strategy strategy, const double *w0, size_t n,
                              const mpe_format *f, const mpe_update_opts *o);
MPE_API void mpe_update_free(mpe_update *s);          /* NULL is ignored */
/* Apply one step: w_i += u_i for i < n. Errors: MPE_EINVAL (NULL). */
MPE_API int  mpe_update_step(mpe_update *s, const double *u);
/* The weights of record (master: the master weights, otherwise the low-format
   weights) and the low-format weights the model computes with (either may be
   NULL). */
MPE_API int  mpe_update_weights(const mpe_update *s, double *record, double *low);
/* The binary64 reference weights. */
MPE_API int  mpe_update_reference(const mpe_update *s, double *ref);
MPE_API int  mpe_update_stats_get(const mpe_update *s, mpe_update_stats *st);

/* All four strategies in one call: `steps` steps over n weights, step t adding
   row (t mod rows) of u (rows x n, row-major). st[k] receives the statistics of
   strategy k (indexed by mpe_update_strategy). Errors: MPE_EINVAL (NULL
   pointers with n > 0, rows == 0, bad f or opts as for mpe_update_alloc),
   MPE_ENOMEM; st is written only on success. */
MPE_API int  mpe_update_study(mpe_update_stats st[MPE_UPDATE_NSTRATEGIES], const double *w0, size_t n,
                              const double *u, size_t rows, uint64_t steps,
                              const mpe_format *f, const mpe_update_opts *o);

/* The rule, for one value: 1 when w + u rounded to nearest-even in f equals w
   (w a finite value of f, u != 0 finite); computed from ulp(w) and the
   significand parity, not by rounding. -1 for invalid arguments. */
MPE_API int  mpe_update_is_lost(double w, double u, const mpe_format *f);

#ifdef __cplusplus
}
#endif
#endif
