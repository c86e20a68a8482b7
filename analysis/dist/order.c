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

/* one study: the inputs, the statistics, the work buffers */
typedef struct {
  const float *x;
  size_t rows, len, trials, splits, batch;
  const mpe_format *f;
  const mpe_order_opts *o;
  mpe_order_stats *st;
  uint32_t *perm;
  float *acc, *b, *seq, *part;
  double *ulp, *lo, *hi;
  mpai_xsum *xs;
  gsl_rng *rng;
} order_ws;

/* out[r] = elements pb..pe-1 of row r summed in order, additions in order k */
static int ordered_sum(const order_ws *w, size_t pb, size_t pe, size_t k, float *out)
{
  mpe_round_opts r0 = stream(w->o, pb, k, w->trials, w->rows);
  for (size_t r = 0; r < w->rows; r++)
    w->b[r] = w->x[r * w->len + pb];
  int rc = mpe_round_f32(out, w->b, w->rows, w->f, &r0);
  for (size_t j = pb + 1; j < pe && !rc; j++) {
    mpe_round_opts rj = stream(w->o, j, k, w->trials, w->rows);
    for (size_t r = 0; r < w->rows; r++)
      w->b[r] = w->x[r * w->len + j];
    rc = mpe_ew_add(out, out, w->b, w->rows, w->f, &rj);
  }
  return rc;
}

/* |v - exact sum of row r| in ulps */
static double err_ulps(const order_ws *w, size_t r, float v)
{
  mpai_xsum d = w->xs[r];
  mpai_xs_add(&d, v, 1);
  return fabs(mpai_xs_to_double(&d, 0)) / w->ulp[r];
}

/* the exact sums and the sequential order */
static int sequential(order_ws *w)
{
  mpe_order_stats *st = w->st;
  for (size_t r = 0; r < w->rows; r++) {
    mpai_xs_zero(&w->xs[r]);
    for (size_t j = 0; j < w->len; j++)
      mpai_xs_add(&w->xs[r], w->x[r * w->len + j], 0);
    w->ulp[r] = ulp_of(mpai_xs_to_double(&w->xs[r], 0), w->f);
  }
  int rc = ordered_sum(w, 0, w->len, 0, w->seq);
  for (size_t r = 0; r < w->rows && !rc; r++) {
    w->lo[r] = w->hi[r] = w->seq[r];
    if (!isfinite(w->seq[r])) {
      st->nonfinite++;
      continue;
    }
    double e = err_ulps(w, r, w->seq[r]);
    if (e > st->seq_max_err_ulps)
      st->seq_max_err_ulps = e;
  }
  return rc;
}

/* one random-order result v of row r against the sequential one */
static void note_random(order_ws *w, size_t r, float v)
{
  mpe_order_stats *st = w->st;
  const float sq = w->seq[r];
  if (!isfinite(v) || !isfinite(sq)) {
    st->nonfinite += !isfinite(v);
    if (!(v == sq))
      st->differ++;
    return;
  }
  double dev = fabs((double)v - (double)sq) / w->ulp[r];
  int bin = 0;
  if (v != sq) {
    st->differ++;
    bin = dev <= 1 ? 1 : 1 + (int)ceil(log2(dev));
    if (bin > MPE_ORDER_NBINS - 1)
      bin = MPE_ORDER_NBINS - 1;
  }
  st->dev_hist[bin]++;
  if (v < w->lo[r])
    w->lo[r] = v;
  if (v > w->hi[r])
    w->hi[r] = v;
  double e = err_ulps(w, r, v);
  if (e > st->random_max_err_ulps)
    st->random_max_err_ulps = e;
}

/* random orders, `batch` trials at a time: element (t - t0)*rows + r */
static int random_orders(order_ws *w)
{
  const size_t len = w->len;
  for (size_t t0 = 0; t0 < w->trials; t0 += w->batch) {
    size_t nb = w->trials - t0 < w->batch ? w->trials - t0 : w->batch, m = nb * w->rows;
    for (size_t q = 0; q < m; q++) {
      uint32_t *p = w->perm + q * len;
      for (size_t j = 0; j < len; j++)
        p[j] = (uint32_t)j;
      gsl_ran_shuffle(w->rng, p, len, sizeof *p);
    }
    for (size_t j = 0; j < len; j++) {
      mpe_round_opts rj = stream(w->o, j, 1 + t0, w->trials, w->rows);
      for (size_t q = 0; q < m; q++)
        w->b[q] = w->x[(q % w->rows) * len + w->perm[q * len + j]];
      int rc = j == 0 ? mpe_round_f32(w->acc, w->b, m, w->f, &rj) : mpe_ew_add(w->acc, w->acc, w->b, m, w->f, &rj);
      if (rc)
        return rc;
    }
    for (size_t q = 0; q < m; q++)
      note_random(w, q % w->rows, w->acc[q]);
  }
  return MPE_OK;
}

/* the spread of each row's results, in ulps */
static void spread(order_ws *w)
{
  mpe_order_stats *st = w->st;
  double sum = 0;
  size_t counted = 0;
  for (size_t r = 0; r < w->rows; r++) {
    if (!isfinite(w->lo[r]) || !isfinite(w->hi[r]))
      continue;
    double s = (w->hi[r] - w->lo[r]) / w->ulp[r];
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
static int split_k(order_ws *w)
{
  mpe_order_stats *st = w->st;
  const size_t k = w->trials + 1, rows = w->rows;
  for (size_t s = 0; s < w->splits; s++) {
    size_t pb = (size_t)((unsigned __int128)s * w->len / w->splits);
    size_t pe = (size_t)((unsigned __int128)(s + 1) * w->len / w->splits);
    int rc = ordered_sum(w, pb, pe, k, w->part);
    if (rc)
      return rc;
    if (s == 0) {
      memcpy(w->acc, w->part, rows * sizeof *w->acc);
    } else {
      mpe_round_opts rc2 = stream(w->o, pb, k + 1, w->trials, rows);
      if ((rc = mpe_ew_add(w->acc, w->acc, w->part, rows, w->f, &rc2)))
        return rc;
    }
  }
  for (size_t r = 0; r < rows; r++) {
    const float a = w->acc[r], sq = w->seq[r];
    if (!isfinite(a)) {
      st->nonfinite++;
      st->splitk_differ += !(a == sq);
      continue;
    }
    if (a != sq) {
      st->splitk_differ++;
      double dev = isfinite(sq) ? fabs((double)a - (double)sq) / w->ulp[r] : INFINITY;
      if (dev > st->splitk_max_ulps)
        st->splitk_max_ulps = dev;
    }
  }
  return MPE_OK;
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
  order_ws w = { x, rows, len, trials, splits, batch, f, o, st, malloc(batch * per_trial * sizeof *w.perm),
                 malloc(batch * rows * sizeof *w.acc), malloc(batch * rows * sizeof *w.b), malloc(rows * sizeof *w.seq),
                 malloc(rows * sizeof *w.part), malloc(rows * sizeof *w.ulp), malloc(rows * sizeof *w.lo),
                 malloc(rows * sizeof *w.hi), malloc(rows * sizeof *w.xs), gsl_rng_alloc(gsl_rng_mt19937) };
  int rc = MPE_ENOMEM;
  if (w.perm && w.acc && w.b && w.seq && w.part && w.ulp && w.lo && w.hi && w.xs && w.rng) {
    gsl_rng_set(w.rng, (unsigned long)o->seed);
    memset(st, 0, sizeof *st);
    st->rows = rows;
    st->len = len;
    st->trials = trials;
    st->splits = splits;
    st->results = (uint64_t)rows * trials;
    rc = sequential(&w);
    if (!rc)
      rc = random_orders(&w);
    if (!rc) {
      st->share_differ = st->results ? (double)st->differ / (double)st->results : 0;
      spread(&w);
      rc = split_k(&w);
    }
  }
  free(w.perm);
  free(w.acc);
  free(w.b);
  free(w.seq);
  free(w.part);
  free(w.ulp);
  free(w.lo);
  free(w.hi);
  free(w.xs);
  if (w.rng)
    gsl_rng_free(w.rng);
  return rc;
}
