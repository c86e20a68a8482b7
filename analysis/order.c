/* Spread of sums whose order of additions is not fixed (mpe_order_study(3)):
   the sequential order, seeded random orders (what atomicAdd gives when the
   arrival order changes from run to run) and split-K. Every addition is
   rounded by mpe_ew_add; the additions of many rows (and trials) go through
   one call, so the study costs len calls per batch of orders. */
#include <config.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <gsl/gsl_randist.h>
#include <gsl/gsl_rng.h>
#include "mpemu/arith.h"
#include "mpemu/dist.h"
#include "exactsum.h"
#include "mpei_fenv.h"

#define BATCH_BYTES (64u << 20)   /* permutations held at once */

static double ulp_of(double v, const mpe_format *f)
{
  int k = 0, e = mpe_format_emin(f);
  if (v != 0 && isfinite(v)) {
    frexp(v, &k);
    if (k - 1 > e)
      e = k - 1;
  }
  return ldexp(1.0, e - mpe_format_precision(f) + 1);
}

/* the stream index of the addition that brings in element j of order k for row r:
   offset + (j*(trials+3) + k)*rows + r; k = 0 sequential, 1..trials random, trials+1 split-K
   within a part, trials+2 the addition that brings in the part starting at j. The first
   element of an order (or part) is cast to the format with its element's stream. */
static mpe_round_opts stream(const mpe_order_opts *o, size_t j, size_t k, size_t trials, size_t rows)
{
  mpe_round_opts r = o->round;
  r.offset = o->round.offset + ((uint64_t)j * (trials + 3) + k) * rows;
  return r;
}

int mpe_order_study(mpe_order_stats *st, const float *x, size_t rows, size_t len, const mpe_order_opts *o)
{
  MPEI_FENV_GUARD();
  if (!st || !o || !x || len == 0 || rows == 0 || (unsigned)o->round.round >= MPE_NROUND)
    return MPE_EINVAL;
  const mpe_format *f = o->format ? o->format : mpe_format_of(MPE_FP32);
  if (mpe_format_precision(f) > 24 || len > UINT32_MAX || rows > SIZE_MAX / len)
    return MPE_EINVAL;
  size_t trials = o->trials ? o->trials : 100, splits = o->splits ? o->splits : 4;
  if (splits > len)
    splits = len;
  for (size_t i = 0; i < rows * len; i++)
    if (!isfinite(x[i]))
      return MPE_ERANGE;
  size_t per_trial = rows * len;
  size_t batch = BATCH_BYTES / sizeof(uint32_t) / per_trial;
  if (batch < 1)
    batch = 1;
  if (batch > trials)
    batch = trials;
  if (batch > SIZE_MAX / sizeof(uint32_t) / per_trial)
    return MPE_ENOMEM;
  uint32_t *perm = malloc(batch * per_trial * sizeof *perm);
  float *acc = malloc(batch * rows * sizeof *acc), *b = malloc(batch * rows * sizeof *b);
  float *seq = malloc(rows * sizeof *seq), *part = malloc(rows * sizeof *part);
  double *ex = malloc(rows * sizeof *ex), *ulp = malloc(rows * sizeof *ulp);
  double *lo = malloc(rows * sizeof *lo), *hi = malloc(rows * sizeof *hi);
  mpei_xsum *xs = malloc(rows * sizeof *xs);
  gsl_rng *rng = gsl_rng_alloc(gsl_rng_mt19937);
  int rc = MPE_OK;
  if (!perm || !acc || !b || !seq || !part || !ex || !ulp || !lo || !hi || !xs || !rng) {
    rc = MPE_ENOMEM;
    goto done;
  }
  gsl_rng_set(rng, (unsigned long)o->seed);
  memset(st, 0, sizeof *st);
  st->rows = rows;
  st->len = len;
  st->trials = trials;
  st->splits = splits;
  st->results = (uint64_t)rows * trials;

  /* exact sums */
  for (size_t r = 0; r < rows; r++) {
    mpei_xs_zero(&xs[r]);
    for (size_t j = 0; j < len; j++)
      mpei_xs_add(&xs[r], x[r * len + j], 0);
    ex[r] = mpei_xs_to_double(&xs[r], 0);
    ulp[r] = ulp_of(ex[r], f);
  }
  /* sequential order */
  {
    mpe_round_opts r0 = stream(o, 0, 0, trials, rows);
    for (size_t r = 0; r < rows; r++)
      b[r] = x[r * len];
    if ((rc = mpe_round_f32(seq, b, rows, f, &r0)))
      goto done;
    for (size_t j = 1; j < len; j++) {
      mpe_round_opts rj = stream(o, j, 0, trials, rows);
      for (size_t r = 0; r < rows; r++)
        b[r] = x[r * len + j];
      if ((rc = mpe_ew_add(seq, seq, b, rows, f, &rj)))
        goto done;
    }
  }
  for (size_t r = 0; r < rows; r++) {
    lo[r] = hi[r] = seq[r];
    if (!isfinite(seq[r])) {
      st->nonfinite++;
      continue;
    }
    mpei_xsum d = xs[r];
    mpei_xs_add(&d, seq[r], 1);
    double e = fabs(mpei_xs_to_double(&d, 0)) / ulp[r];
    if (e > st->seq_max_err_ulps)
      st->seq_max_err_ulps = e;
  }
  /* random orders, `batch` trials at a time: element (t - t0)*rows + r */
  for (size_t t0 = 0; t0 < trials; t0 += batch) {
    size_t nb = trials - t0 < batch ? trials - t0 : batch, m = nb * rows;
    for (size_t q = 0; q < m; q++) {
      uint32_t *p = perm + q * len;
      for (size_t j = 0; j < len; j++)
        p[j] = (uint32_t)j;
      gsl_ran_shuffle(rng, p, len, sizeof *p);
    }
    for (size_t j = 0; j < len; j++) {
      mpe_round_opts rj = stream(o, j, 1 + t0, trials, rows);
      for (size_t q = 0; q < m; q++)
        b[q] = x[(q % rows) * len + perm[q * len + j]];
      rc = j == 0 ? mpe_round_f32(acc, b, m, f, &rj) : mpe_ew_add(acc, acc, b, m, f, &rj);
      if (rc)
        goto done;
    }
    for (size_t q = 0; q < m; q++) {
      size_t r = q % rows;
      float v = acc[q];
      if (!isfinite(v) || !isfinite(seq[r])) {
        st->nonfinite += !isfinite(v);
        if (!(v == seq[r]))
          st->differ++;
        continue;
      }
      double dev = fabs((double)v - (double)seq[r]) / ulp[r];
      int bin = 0;
      if (v != seq[r]) {
        st->differ++;
        bin = dev <= 1 ? 1 : 1 + (int)ceil(log2(dev));
        if (bin > MPE_ORDER_NBINS - 1)
          bin = MPE_ORDER_NBINS - 1;
      }
      st->dev_hist[bin]++;
      if (v < lo[r])
        lo[r] = v;
      if (v > hi[r])
        hi[r] = v;
      mpei_xsum d = xs[r];
      mpei_xs_add(&d, v, 1);
      double e = fabs(mpei_xs_to_double(&d, 0)) / ulp[r];
      if (e > st->random_max_err_ulps)
        st->random_max_err_ulps = e;
    }
  }
  st->share_differ = st->results ? (double)st->differ / (double)st->results : 0;
  {
    double sum = 0;
    size_t counted = 0;
    for (size_t r = 0; r < rows; r++) {
      if (!isfinite(lo[r]) || !isfinite(hi[r]))
        continue;
      double s = (hi[r] - lo[r]) / ulp[r];
      if (s > 0)
        st->rows_spread++;
      if (s > st->max_spread_ulps)
        st->max_spread_ulps = s;
      sum += s;
      counted++;
    }
    st->mean_spread_ulps = counted ? sum / (double)counted : 0;
  }
  /* split-K: part s = [s*len/S, (s+1)*len/S) summed in order, then the parts in order;
     the addition that brings in part s uses the stream of its first element */
  {
    size_t k = trials + 1;
    for (size_t s = 0; s < splits; s++) {
      size_t pb = (size_t)((unsigned __int128)s * len / splits), pe = (size_t)((unsigned __int128)(s + 1) * len / splits);
      mpe_round_opts r0 = stream(o, pb, k, trials, rows);
      for (size_t r = 0; r < rows; r++)
        b[r] = x[r * len + pb];
      if ((rc = mpe_round_f32(part, b, rows, f, &r0)))
        goto done;
      for (size_t j = pb + 1; j < pe; j++) {
        mpe_round_opts rj = stream(o, j, k, trials, rows);
        for (size_t r = 0; r < rows; r++)
          b[r] = x[r * len + j];
        if ((rc = mpe_ew_add(part, part, b, rows, f, &rj)))
          goto done;
      }
      if (s == 0)
        memcpy(acc, part, rows * sizeof *acc);
      else {
        mpe_round_opts rc2 = stream(o, pb, k + 1, trials, rows);
        if ((rc = mpe_ew_add(acc, acc, part, rows, f, &rc2)))
          goto done;
      }
    }
    for (size_t r = 0; r < rows; r++) {
      if (!isfinite(acc[r])) {
        st->nonfinite++;
        st->splitk_differ += !(acc[r] == seq[r]);
        continue;
      }
      if (acc[r] != seq[r]) {
        st->splitk_differ++;
        double dev = isfinite(seq[r]) ? fabs((double)acc[r] - (double)seq[r]) / ulp[r] : INFINITY;
        if (dev > st->splitk_max_ulps)
          st->splitk_max_ulps = dev;
      }
    }
  }
done:
  free(perm);
  free(acc);
  free(b);
  free(seq);
  free(part);
  free(ex);
  free(ulp);
  free(lo);
  free(hi);
  free(xs);
  if (rng)
    gsl_rng_free(rng);
  return rc;
}
