/* Master-weight update studies: w += u under four strategies (docs/DESIGN.md §6).

   Every sum is formed exactly enough to be rounded once: w + u is computed in
   binary64 with its rounding error (TwoSum), the error is folded in as a
   round-to-odd sticky bit, and the result is rounded to the target format by
   mpe_round_f64. Round-to-odd at 53 bits followed by any rounding to at most
   51 bits equals the rounding of the exact sum, so the lost-update counts
   follow the ulp rule exactly (the tests check this). */
#include <config.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "mpei.h"
#include "mpemu/update.h"
#include "mpei_names.h"

struct mpe_update {
  mpe_update_strategy strategy;
  size_t n;
  const mpe_format *low, *master;
  mpe_update_opts opts;
  double *w;     /* low-format weights (master: the low-format copy) */
  double *aux;   /* master: master weights; kahan: compensation c; otherwise unused */
  double *ref;   /* binary64 reference */
  double *t1, *t2, *t3; /* scratch */
  uint64_t steps, updates, lost, stale;
};

static const char *const strategy_names[MPE_UPDATE_NSTRATEGIES] = { "low", "master", "kahan", "sr" };

const char *mpe_update_strategy_name(mpe_update_strategy s)
{
  return (unsigned)s < MPE_UPDATE_NSTRATEGIES ? strategy_names[s] : NULL;
}

int mpe_update_strategy_lookup(const char *name)
{
  return mpei_name_index(strategy_names, MPE_UPDATE_NSTRATEGIES, name, 0);
}

/* a + b rounded to odd at 53 bits: the binary64 sum with the sticky bit of
   its rounding error in the last place. */
static inline double sum_odd(double a, double b)
{
  double s = a + b;
  if (!isfinite(s))
    return s;
  double bb = s - a;
  double e = (a - (s - bb)) + (b - bb);
  if (e != 0) {
    uint64_t bits = mpei_d2u(s);
    if (!(bits & 1))   /* the odd neighbour on the side of the exact sum */
      s = nextafter(s, e > 0 ? INFINITY : -INFINITY);
  }
  return s;
}

/* t[i] = x[i] + y[i] (x[i] - y[i] when neg) rounded once to f with ro: the
   sum rounded to odd in binary64 (sum_odd), then to f. MPE_OK or its error. */
static int add_round(double *t, const double *x, const double *y, int neg, size_t n, const mpe_format *f,
                     const mpe_round_opts *ro)
{
  for (size_t i = 0; i < n; i++)
    t[i] = sum_odd(x[i], neg ? -y[i] : y[i]);
  return mpe_round_f64(t, t, n, f, ro);
}

static inline int same_bits(double a, double b)
{
  return mpei_d2u(a) == mpei_d2u(b);
}

static int check_formats(const mpe_format *f, const mpe_update_opts *o, const mpe_format **master)
{
  if (!f || mpe_format_precision(f) > 24)
    return MPE_EINVAL;
  const mpe_format *m = (o && o->master) ? o->master : mpe_format_of(MPE_FP32);
  if (mpe_format_precision(m) > 51 || mpe_format_precision(m) < mpe_format_precision(f))
    return MPE_EINVAL;
  *master = m;
  return MPE_OK;
}

void mpe_update_free(mpe_update *s)
{
  if (!s)
    return;
  free(s->w);   /* the block of every array (mpe_update_alloc) */
  free(s);
}

static mpe_round_opts low_opts(const mpe_update *s, mpe_round r, uint64_t offset)
{
  mpe_round_opts ro = { r, s->opts.flush_subnormals, s->opts.saturate, s->opts.seed, offset };
  return ro;
}

int mpe_update_alloc(mpe_update **out, mpe_update_strategy strategy, const double *w0, size_t n,
                     const mpe_format *f, const mpe_update_opts *o)
{
  MPEI_FENV_GUARD();
  const mpe_format *master;
  if (out)
    *out = NULL;   /* the constructor convention (mpemu/core.h) */
  if (!out || (!w0 && n > 0) || (unsigned)strategy >= MPE_UPDATE_NSTRATEGIES)
    return MPE_EINVAL;
  int rc = check_formats(f, o, &master);
  if (rc)
    return rc;
  mpe_update *s = calloc(1, sizeof *s);
  if (!s)
    return MPE_ENOMEM;
  s->strategy = strategy;
  s->n = n;
  s->low = f;
  s->master = master;
  if (o)
    s->opts = *o;
  s->opts.master = master;
  /* one block of len doubles per array: w, ref, t1, t2, t3, then aux for the
     strategies that keep one */
  const size_t len = n ? n : 1, narrays = strategy == MPE_UPDATE_MASTER || strategy == MPE_UPDATE_KAHAN ? 6 : 5;
  s->w = mpei_count_ok(len, narrays * sizeof(double)) ? malloc(len * narrays * sizeof(double)) : NULL;
  if (!s->w) {
    mpe_update_free(s);
    return MPE_ENOMEM;
  }
  s->ref = s->w + len;
  s->t1 = s->ref + len;
  s->t2 = s->t1 + len;
  s->t3 = s->t2 + len;
  s->aux = narrays == 6 ? s->t3 + len : NULL;
  mpe_round_opts rne = low_opts(s, MPE_RNE, 0);
  rc = mpe_round_f64(s->w, w0, n, f, &rne);
  if (rc) {
    mpe_update_free(s);
    return rc;
  }
  if (n)
    memcpy(s->ref, s->w, n * sizeof(double));
  if (strategy == MPE_UPDATE_MASTER && n)
    memcpy(s->aux, s->w, n * sizeof(double));
  if (strategy == MPE_UPDATE_KAHAN)
    for (size_t i = 0; i < n; i++)
      s->aux[i] = 0;
  *out = s;
  return MPE_OK;
}

static inline int is_update(double u)
{
  return u != 0 && !isnan(u);
}

int mpe_update_step(mpe_update *s, const double *u)
{
  MPEI_FENV_GUARD();
  if (!s || (!u && s->n > 0))
    return MPE_EINVAL;
  const size_t n = s->n;
  double *w = s->w, *a = s->aux, *t1 = s->t1, *t2 = s->t2, *t3 = s->t3, *ref = s->ref;
  uint64_t lost = 0, stale = 0, updates = 0;
  mpe_round_opts rne = low_opts(s, MPE_RNE, 0);
  int rc = MPE_OK;

  for (size_t i = 0; i < n; i++)
    ref[i] += u[i];

  switch (s->strategy) {
  case MPE_UPDATE_LOW:
  case MPE_UPDATE_SR: {
    mpe_round_opts sr = low_opts(s, MPE_SR, s->steps * (uint64_t)n);
    if ((rc = add_round(t1, w, u, 0, n, s->low, s->strategy == MPE_UPDATE_SR ? &sr : &rne)))
      return rc;
    for (size_t i = 0; i < n; i++) {
      if (is_update(u[i])) {
        updates++;
        if (same_bits(t1[i], w[i]))
          lost++;
      }
      w[i] = t1[i];
    }
    stale = lost;
    break;
  }
  case MPE_UPDATE_MASTER: {
    mpe_round_opts mo = { MPE_RNE, 0, 0, 0, 0 };
    rc = add_round(t1, a, u, 0, n, s->master, &mo);
    if (!rc)
      rc = mpe_round_f64(t2, t1, n, s->low, &rne);
    if (rc)
      return rc;
    for (size_t i = 0; i < n; i++) {
      if (is_update(u[i])) {
        updates++;
        lost += same_bits(t1[i], a[i]);
        stale += same_bits(t2[i], w[i]);
      }
      a[i] = t1[i];
      w[i] = t2[i];
    }
    break;
  }
  case MPE_UPDATE_KAHAN: {
    /* y = u - c; t = w + y; c = (t - w) - y, both operations rounded */
    if ((rc = add_round(t1, u, a, 1, n, s->low, &rne)) || (rc = add_round(t2, w, t1, 0, n, s->low, &rne)) ||
        (rc = add_round(t3, t2, w, 1, n, s->low, &rne)) || (rc = add_round(t3, t3, t1, 1, n, s->low, &rne)))
      return rc;
    for (size_t i = 0; i < n; i++) {
      if (is_update(u[i])) {
        updates++;
        int wsame = same_bits(t2[i], w[i]);
        stale += wsame;
        lost += wsame && same_bits(t3[i], a[i]);
      }
      a[i] = t3[i];
      w[i] = t2[i];
    }
    break;
  }
  }
  s->steps++;
  s->updates += updates;
  s->lost += lost;
  s->stale += stale;
  return MPE_OK;
}

int mpe_update_weights(const mpe_update *s, double *record, double *low)
{
  MPEI_FENV_GUARD();
  if (!s)
    return MPE_EINVAL;
  if (!s->n)
    return MPE_OK;
  if (record)
    memcpy(record, s->strategy == MPE_UPDATE_MASTER ? s->aux : s->w, s->n * sizeof(double));
  if (low)
    memcpy(low, s->w, s->n * sizeof(double));
  return MPE_OK;
}

int mpe_update_reference(const mpe_update *s, double *ref)
{
  MPEI_FENV_GUARD();
  if (!s || (!ref && s->n > 0))
    return MPE_EINVAL;
  if (s->n)
    memcpy(ref, s->ref, s->n * sizeof(double));
  return MPE_OK;
}

int mpe_update_stats_get(const mpe_update *s, mpe_update_stats *st)
{
  MPEI_FENV_GUARD();
  if (!s || !st)
    return MPE_EINVAL;
  const double *v = s->strategy == MPE_UPDATE_MASTER ? s->aux : s->w;
  mpe_update_stats r = { 0 };
  r.steps = s->steps;
  r.updates = s->updates;
  r.lost = s->lost;
  r.stale = s->stale;
  r.lost_fraction = s->updates ? (double)s->lost / (double)s->updates : 0.0;
  r.stale_fraction = s->updates ? (double)s->stale / (double)s->updates : 0.0;
  double sum2 = 0;
  for (size_t i = 0; i < s->n; i++) {
    if (!isfinite(v[i])) {
      r.nonfinite++;
      continue;
    }
    double d = fabs(v[i] - s->ref[i]);
    if (d > r.max_abs_drift)
      r.max_abs_drift = d;
    if (s->ref[i] != 0 && d / fabs(s->ref[i]) > r.max_rel_drift)
      r.max_rel_drift = d / fabs(s->ref[i]);
    sum2 += d * d;
  }
  size_t nf = s->n - (size_t)r.nonfinite;
  r.rms_drift = nf ? sqrt(sum2 / (double)nf) : 0.0;
  *st = r;
  return MPE_OK;
}

int mpe_update_study(mpe_update_stats st[MPE_UPDATE_NSTRATEGIES], const double *w0, size_t n,
                     const double *u, size_t rows, uint64_t steps,
                     const mpe_format *f, const mpe_update_opts *o)
{
  MPEI_FENV_GUARD();
  const mpe_format *master;
  if (!st || ((!w0 || !u) && n > 0) || rows == 0)
    return MPE_EINVAL;
  int rc = check_formats(f, o, &master);
  if (rc)
    return rc;
  mpe_update *s[MPE_UPDATE_NSTRATEGIES] = { 0 };
  for (int k = 0; k < MPE_UPDATE_NSTRATEGIES && !rc; k++)
    rc = mpe_update_alloc(&s[k], (mpe_update_strategy)k, w0, n, f, o);
  for (uint64_t t = 0; t < steps && !rc; t++)
    for (int k = 0; k < MPE_UPDATE_NSTRATEGIES && !rc; k++)
      rc = mpe_update_step(s[k], n ? u + (size_t)(t % rows) * n : NULL);
  mpe_update_stats tmp[MPE_UPDATE_NSTRATEGIES];
  for (int k = 0; k < MPE_UPDATE_NSTRATEGIES && !rc; k++)
    rc = mpe_update_stats_get(s[k], &tmp[k]);
  for (int k = 0; k < MPE_UPDATE_NSTRATEGIES; k++)
    mpe_update_free(s[k]);
  if (!rc)
    memcpy(st, tmp, sizeof tmp);
  return rc;
}

/* ulp of a finite value of f (the spacing above |w|; min subnormal at 0). */
static double ulp_of(double w, const mpe_format *f)
{
  int p = mpe_format_precision(f), emin = mpe_format_emin(f);
  double a = fabs(w);
  if (a < mpe_format_min_normal(f))
    return mpe_format_min_subnormal(f);
  int e;
  (void)frexp(a, &e);   /* a = m * 2^e, m in [0.5, 1) */
  e -= 1;
  if (e < emin)
    e = emin;
  return ldexp(1.0, e - p + 1);
}

int mpe_update_is_lost(double w, double u, const mpe_format *f)
{
  MPEI_FENV_GUARD();
  if (!f || !isfinite(w) || !isfinite(u) || u == 0)
    return -1;
  mpe_round_opts ro = { MPE_RNE, 0, 0, 0, 0 };
  if (mpe_round_scalar(w, f, &ro) != w || fabs(w) > mpe_format_max(f))
    return -1;
  double ulp = ulp_of(w, f);
  double half = ulp / 2;
  double a = fabs(u);
  int toward_zero = w != 0 && ((u < 0) != (w < 0));
  /* just below a normal power of two (above the smallest normal) the spacing halves */
  int pow2 = w != 0 && fabs(w) > mpe_format_min_normal(f) && frexp(fabs(w), &(int){ 0 }) == 0.5;
  if (toward_zero && pow2)
    half = ulp / 4;
  if (a < half)
    return 1;
  if (a > half)
    return 0;
  /* a tie: rounds to w when w's significand is even */
  double sig = fabs(w) / ulp;   /* an integer: the significand in units of ulp */
  return fmod(sig, 2.0) == 0.0;
}
