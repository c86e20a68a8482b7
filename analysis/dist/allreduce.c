/* All-reduce of N workers' arrays in a low-precision format, in the order of
   a named algorithm (mpe_allreduce(3)). Every cast and addition goes through
   the library's rounding (mpe_ew_scale, mpe_ew_add), so a real all-reduce
   that adds the same operands in the same order gets the same bits. The
   error is measured against exact sums (exactsum.h). */
#include <config.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "mpemu/arith.h"
#include "mpemu/dist.h"
#include "exactsum.h"
#include "mpei_fenv.h"
#include "mpei_names.h"

static const char *const algo_names[MPE_ALLREDUCE_NALGOS] = { "ring", "tree", "naive" };

const char *mpe_allreduce_algo_name(mpe_allreduce_algo a)
{
  return (unsigned)a < MPE_ALLREDUCE_NALGOS ? algo_names[a] : NULL;
}

int mpe_allreduce_algo_lookup(const char *name)
{
  return mpei_name_index(algo_names, MPE_ALLREDUCE_NALGOS, name, 0);
}

void mpe_allreduce_chunk(size_t n, size_t workers, size_t c, size_t *begin, size_t *end)
{
  MPEI_FENV_GUARD();
  if (!workers)
    workers = 1;
  if (c > workers)
    c = workers;
  /* chunk c = [c*n/N, (c+1)*n/N): sizes differ by at most one */
  unsigned __int128 b = (unsigned __int128)c * n / workers, e = (unsigned __int128)(c + 1 > workers ? workers : c + 1) * n / workers;
  if (begin)
    *begin = (size_t)b;
  if (end)
    *end = (size_t)e;
}

static int check(const float *out, const float *const *in, size_t workers, size_t n,
                 const mpe_allreduce_opts *o)
{
  if (!o || workers == 0 || (n > 0 && (!out || !in)))
    return MPE_EINVAL;
  for (size_t w = 0; n > 0 && w < workers; w++)
    if (!in[w])
      return MPE_EINVAL;
  if ((unsigned)o->algo >= MPE_ALLREDUCE_NALGOS || (unsigned)o->round.round >= MPE_NROUND)
    return MPE_EINVAL;
  if (o->format && mpe_format_precision(o->format) > 24)
    return MPE_EINVAL;
  if (o->scale != 0 && !(isfinite(o->scale) && o->scale > 0))
    return MPE_EINVAL;
  if (workers > SIZE_MAX / 2 / (n ? n : 1))
    return MPE_EINVAL;
  return MPE_OK;
}

static const mpe_format *fmt(const mpe_allreduce_opts *o)
{
  return o->format ? o->format : mpe_format_of(MPE_FP32);
}

static float scale_of(const mpe_allreduce_opts *o)
{
  return o->scale == 0 ? 1.0f : o->scale;
}

/* x_w = round(scale * in_w): stream index offset + w*n + i */
static int cast_all(float *x, const float *const *in, size_t workers, size_t n, const mpe_allreduce_opts *o)
{
  mpe_round_opts r = o->round;
  for (size_t w = 0; w < workers; w++) {
    r.offset = o->round.offset + (uint64_t)w * n;
    int rc = mpe_ew_scale(x + w * n, scale_of(o), in[w], n, fmt(o), &r);
    if (rc)
      return rc;
  }
  return MPE_OK;
}

/* acc[b..e) = acc[b..e) + x[b..e), the addition that folds in worker w:
   stream index offset + (N + w)*n + i */
static int fold(float *acc, const float *x, size_t b, size_t e, size_t w, size_t workers, size_t n,
                const mpe_allreduce_opts *o)
{
  mpe_round_opts r = o->round;
  r.offset = o->round.offset + (uint64_t)(workers + w) * n + b;
  return mpe_ew_add(acc + b, acc + b, x + b, e - b, fmt(o), &r);
}

static double ulp_of(double v, const mpe_format *f)
{
  int k = 0;
  int e = mpe_format_emin(f);
  if (v != 0 && isfinite(v)) {
    frexp(v, &k);
    if (k - 1 > e)
      e = k - 1;
  }
  return ldexp(1.0, e - mpe_format_precision(f) + 1);
}

/* y: the format's sums (scaled); x: the cast inputs; out: the unscaled outputs */
static void stats(mpe_allreduce_stats *st, const float *y, const float *out, const float *x,
                  const float *const *in, size_t workers, size_t n, const mpe_allreduce_opts *o)
{
  const mpe_format *f = fmt(o);
  mpe_round_opts rr = o->round;
  int stochastic = o->round.round == MPE_SR || o->round.round == MPE_SR_EQ;
  double sumsq = 0;
  memset(st, 0, sizeof *st);
  st->n = n;
  st->workers = workers;
  for (size_t i = 0; i < n; i++) {
    mpai_xsum sx, sg, d;
    mpai_xs_zero(&sx);
    mpai_xs_zero(&sg);
    int in_finite = 1, cast_finite = 1;
    for (size_t w = 0; w < workers; w++) {
      float g = in[w][i], xi = x[w * n + i];
      if (!isfinite(g))
        in_finite = 0;
      else
        mpai_xs_add(&sg, g, 0);
      if (!isfinite(xi))
        cast_finite = 0;   /* the cast itself overflowed */
      else
        mpai_xs_add(&sx, xi, 0);
    }
    if (!in_finite)
      continue;
    if (!cast_finite || !isfinite(y[i]) || !isfinite(out[i])) {
      st->nonfinite++;
      continue;
    }
    /* the sum in the format against the exact sum of the cast inputs */
    double ex = mpai_xs_to_double(&sx, 1);
    rr.offset = 0;
    if (stochastic) {
      rr.round = MPE_RD;
      double lo = mpe_round_scalar(ex, f, &rr);
      rr.round = MPE_RU;
      double hi = mpe_round_scalar(ex, f, &rr);
      if (y[i] != lo && y[i] != hi)
        st->not_rounded++;
    } else {
      double ref = mpe_round_scalar(ex, f, &rr);
      if (!(y[i] == ref && !signbit(y[i]) == !signbit(ref)) && !(y[i] == 0 && ref == 0))
        st->not_rounded++;
    }
    d = sx;
    mpai_xs_add(&d, y[i], 1);
    double dy = fabs(mpai_xs_to_double(&d, 0)) / ulp_of(ex, f);
    if (dy > st->max_ulps)
      st->max_ulps = dy;
    /* the output against the exact sum of the binary32 inputs */
    d = sg;
    mpai_xs_add(&d, out[i], 1);
    double err = mpai_xs_to_double(&d, 0), ref = mpai_xs_to_double(&sg, 0);
    sumsq += err * err;
    if (fabs(err) > st->max_abs_err)
      st->max_abs_err = fabs(err);
    if (ref != 0 && fabs(err / ref) > st->max_rel_err)
      st->max_rel_err = fabs(err / ref);
  }
  st->rms_err = n ? sqrt(sumsq / (double)n) : 0;
}

int mpe_allreduce_f32(float *out, const float *const *in, size_t workers, size_t n,
                      const mpe_allreduce_opts *o, mpe_allreduce_stats *st)
{
  MPEI_FENV_GUARD();
  int rc = check(out, in, workers, n, o);
  if (rc)
    return rc;
  if (n == 0) {
    if (st) {
      memset(st, 0, sizeof *st);
      st->workers = workers;
    }
    return MPE_OK;
  }
  int tree = o->algo == MPE_ALLREDUCE_TREE;
  float *x = malloc(workers * n * sizeof *x);
  float *work = tree ? malloc(workers * n * sizeof *work) : NULL;
  float *y = malloc(n * sizeof *y);
  if (!x || !y || (tree && !work)) {
    free(x);
    free(work);
    free(y);
    return MPE_ENOMEM;
  }
  if ((rc = cast_all(x, in, workers, n, o)))
    goto done;
  switch (o->algo) {
  case MPE_ALLREDUCE_NAIVE:
    memcpy(y, x, n * sizeof *y);
    for (size_t w = 1; w < workers && !rc; w++)
      rc = fold(y, x + w * n, 0, n, w, workers, n, o);
    break;
  case MPE_ALLREDUCE_TREE:
    /* binomial tree: at distance d, worker w (a multiple of 2d) adds worker w+d's partial */
    memcpy(work, x, workers * n * sizeof *work);
    for (size_t d = 1; d < workers && !rc; d *= 2)
      for (size_t w = 0; w + d < workers && !rc; w += 2 * d)
        rc = fold(work + w * n, work + (w + d) * n, 0, n, w + d, workers, n, o);
    memcpy(y, work, n * sizeof *y);
    break;
  case MPE_ALLREDUCE_RING:
    /* chunk c starts at rank c; rank c+s (mod N) adds its own chunk to the
       partial it received, s = 1 .. N-1; all-gather copies without arithmetic */
    for (size_t c = 0; c < workers && !rc; c++) {
      size_t b, e;
      mpe_allreduce_chunk(n, workers, c, &b, &e);
      memcpy(y + b, x + c * n + b, (e - b) * sizeof *y);
      for (size_t s = 1; s < workers && !rc; s++) {
        size_t r = (c + s) % workers;
        rc = fold(y, x + r * n, b, e, r, workers, n, o);
      }
    }
    break;
  }
  if (rc)
    goto done;
  {
    float sc = scale_of(o);
    double inv = 1.0 / (double)sc;
    float *res = out;
    if (sc == 1.0f) {
      if (st)
        stats(st, y, y, x, in, workers, n, o);
      memcpy(res, y, n * sizeof *res);
    } else {
      float *tmp = malloc(n * sizeof *tmp);
      if (!tmp) {
        rc = MPE_ENOMEM;
        goto done;
      }
      for (size_t i = 0; i < n; i++)
        tmp[i] = (float)((double)y[i] * inv);
      if (st)
        stats(st, y, tmp, x, in, workers, n, o);
      memcpy(res, tmp, n * sizeof *res);
      free(tmp);
    }
  }
done:
  free(x);
  free(work);
  free(y);
  return rc;
}

int mpe_allreduce_error(mpe_allreduce_stats *st, const float *out, const float *const *in,
                        size_t workers, size_t n, const mpe_allreduce_opts *o)
{
  MPEI_FENV_GUARD();
  int rc = check(out, in, workers, n, o);
  if (rc || !st)
    return rc ? rc : MPE_EINVAL;
  if (n == 0) {
    memset(st, 0, sizeof *st);
    st->workers = workers;
    return MPE_OK;
  }
  float *x = malloc(workers * n * sizeof *x), *y = malloc(n * sizeof *y);
  if (!x || !y) {
    free(x);
    free(y);
    return MPE_ENOMEM;
  }
  if (!(rc = cast_all(x, in, workers, n, o))) {
    double sc = scale_of(o);
    for (size_t i = 0; i < n; i++)
      y[i] = (float)((double)out[i] * sc);
    stats(st, y, out, x, in, workers, n, o);
  }
  free(x);
  free(y);
  return rc;
}
