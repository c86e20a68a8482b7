/* Range analysis. Values come in blocks; each block is rounded to every
   target format by the library's own array rounding (mpe_round_f32/f64, so
   the counts at the boundaries are exactly what the emulation does), and the
   results are classified. The binade histogram (a GSL histogram) and, per
   binade, the counts of exact powers of two and of values below the format's
   flush threshold make the counts for ANY power-of-two scale available after
   a single pass: scaling by 2^k moves every value by k binades and leaves its
   significand alone, so "S*x rounds to 0" is "x lies below a fixed point of
   binade emin-p-k" (see underflow_at). */
#include <config.h>
#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <gsl/gsl_histogram.h>
#include "mpei.h"
#include "mpemu/range.h"

#define BLOCK 4096
#define EMIN_ALL (-1074)          /* smallest binade of a binary64 value */
#define EMAX_ALL 1023
#define NB (EMAX_ALL - EMIN_ALL + 1)
#define MAXFMT 64

struct fmt_acc {
  const mpe_format *f;
  int p, emin, emax;
  double minnorm;
  uint64_t thr52;                 /* significand fraction (52 bits) below which x*2^k flushes in binade emin-1-k */
  uint64_t underflow, subnormal, overflow;
  long double err2, x2;
  double maxrel;
  uint64_t *low;                  /* per binade: values with fraction < thr52 */
};

struct mpe_range {
  size_t nf;
  struct fmt_acc a[MAXFMT];
  int margin;
  uint64_t count, zeros, nan, inf;
  double max_abs, min_abs;
  int bmin, bmax;                 /* binades seen (bmin > bmax when none) */
  gsl_histogram *hist;            /* binade histogram over [EMIN_ALL, EMAX_ALL + 1) */
  uint64_t *pow2;                 /* per binade: exact powers of two */
  uint32_t *loc;                  /* per block binade counts, folded into hist */
  float yf[BLOCK];
  double yd[BLOCK], xd[BLOCK];
};

mpe_range *mpe_range_alloc(const mpe_format *const *formats, size_t nformats, const mpe_range_opts *o)
{
  if (!formats || nformats == 0 || nformats > MAXFMT || (o && o->margin < 0))
    return NULL;
  for (size_t k = 0; k < nformats; k++)
    if (!formats[k])
      return NULL;
  mpe_range *r = calloc(1, sizeof *r);
  if (!r)
    return NULL;
  r->nf = nformats;
  r->margin = o ? o->margin : 0;
  r->bmin = EMAX_ALL + 1;
  r->bmax = EMIN_ALL - 1;
  r->hist = gsl_histogram_alloc(NB);
  r->pow2 = calloc(NB, sizeof *r->pow2);
  r->loc = calloc(NB, sizeof *r->loc);
  int ok = r->hist && r->pow2 && r->loc;
  if (r->hist)
    gsl_histogram_set_ranges_uniform(r->hist, EMIN_ALL, EMAX_ALL + 1);
  for (size_t k = 0; k < nformats && ok; k++) {
    struct fmt_acc *a = &r->a[k];
    a->f = formats[k];
    a->p = mpe_format_precision(a->f);
    a->emin = mpe_format_emin(a->f);
    a->emax = mpe_format_emax(a->f);
    a->minnorm = mpe_format_min_normal(a->f);
    /* flush threshold: minnorm - minsub/2 = 2^(emin-1) * (2 - 2^(1-p)); as a fraction of 2^52 */
    a->thr52 = (1ull << 52) - (a->p <= 53 ? 1ull << (53 - a->p) : 0);
    ok = (a->low = calloc(NB, sizeof *a->low)) != NULL;
  }
  if (!ok) {
    mpe_range_free(r);
    return NULL;
  }
  return r;
}

void mpe_range_free(mpe_range *r)
{
  if (!r)
    return;
  for (size_t k = 0; k < r->nf; k++)
    free(r->a[k].low);
  if (r->hist)
    gsl_histogram_free(r->hist);
  free(r->pow2);
  free(r->loc);
  free(r);
}

size_t mpe_range_nformats(const mpe_range *r) { return r ? r->nf : 0; }

/* binade and 52-bit fraction of a finite non-zero |x| from its binary64 bits */
static inline void binade64(uint64_t b, int *e, uint64_t *frac)
{
  int ex = (int)(b >> 52);
  uint64_t m = b & ((1ull << 52) - 1);
  if (ex == 0) {                       /* subnormal: normalise */
    int lz = __builtin_clzll(m) - 11;  /* leading zeros within the 52-bit field, + 1 */
    *e = -1022 - lz;
    *frac = (m << lz) & ((1ull << 52) - 1);
  } else {
    *e = ex - 1023;
    *frac = m;
  }
}

static inline void binade32(uint32_t b, int *e, uint64_t *frac)
{
  int ex = (int)(b >> 23);
  uint32_t m = b & 0x7fffff;
  if (ex == 0) {
    int lz = __builtin_clz(m) - 8;
    *e = -126 - lz;
    *frac = (uint64_t)((m << lz) & 0x7fffff) << 29;
  } else {
    *e = ex - 127;
    *frac = (uint64_t)m << 29;
  }
}

/* the format-independent part of a block: counts, extremes, binades */
static void scan_value(mpe_range *r, int e, uint64_t frac, double a, int *lo, int *hi)
{
  int i = e - EMIN_ALL;
  if (a > r->max_abs)
    r->max_abs = a;
  if (r->min_abs == 0 || a < r->min_abs)
    r->min_abs = a;
  r->loc[i]++;
  if (i < *lo) *lo = i;
  if (i > *hi) *hi = i;
  r->pow2[i] += frac == 0;
  for (size_t k = 0; k < r->nf; k++)
    r->a[k].low[i] += frac < r->a[k].thr52;
}

static void fold_block(mpe_range *r, int lo, int hi)
{
  for (int i = lo; i <= hi; i++)
    if (r->loc[i]) {
      gsl_histogram_accumulate(r->hist, EMIN_ALL + i + 0.5, (double)r->loc[i]);
      r->loc[i] = 0;
    }
  if (lo <= hi) {
    if (lo + EMIN_ALL < r->bmin) r->bmin = lo + EMIN_ALL;
    if (hi + EMIN_ALL > r->bmax) r->bmax = hi + EMIN_ALL;
  }
}

/* classify the rounded block of format a (x and y as binary64) */
static void classify(struct fmt_acc *a, const double *x, const double *y, size_t n)
{
  uint64_t unf = 0, sub = 0, ovf = 0;
  long double err2 = 0, x2 = 0;
  double maxrel = a->maxrel;
  for (size_t i = 0; i < n; i++) {
    double xi = x[i], yi = y[i];
    if (!isfinite(xi))
      continue;
    if (!isfinite(yi)) {
      ovf++;
      continue;
    }
    if (xi == 0)
      continue;
    if (yi == 0)
      unf++;
    else if (fabs(yi) < a->minnorm)
      sub++;
    double d = yi - xi;          /* exact for binary32 inputs; binary64: the rounding error of y */
    err2 += (long double)d * d;
    x2 += (long double)xi * xi;
    double rel = fabs(d) / fabs(xi);
    if (rel > maxrel)
      maxrel = rel;
  }
  a->underflow += unf;
  a->subnormal += sub;
  a->overflow += ovf;
  a->err2 += err2;
  a->x2 += x2;
  a->maxrel = maxrel;
}

/* binary32 inputs: branch-free so that it vectorises (omp simd reductions);
   the squares of binary32 values and of their differences cannot leave the
   binary64 range, so per-block double sums are exact enough and safe */
__attribute__((optimize("O3")))
static void classify32(struct fmt_acc *a, const float *x, const float *y, size_t n)
{
  uint32_t mnb = mpei_f2u((float)a->minnorm);
  uint64_t unf = 0, sub = 0, ovf = 0;
  double e2 = 0, x2 = 0, mr = 0;
#pragma omp simd reduction(+:unf, sub, ovf, e2, x2) reduction(max:mr)
  for (size_t i = 0; i < n; i++) {
    uint32_t ax = mpei_f2u(x[i]) & 0x7fffffffu, ay = mpei_f2u(y[i]) & 0x7fffffffu;
    int fx = ax < 0x7f800000u, fy = ay < 0x7f800000u;
    int nz = fx & fy & (ax != 0);
    ovf += (uint64_t)(fx & !fy);
    unf += (uint64_t)(nz & (ay == 0));
    sub += (uint64_t)(nz & (ay != 0) & (ay < mnb));
    double xd = nz ? (double)x[i] : 1.0, d = nz ? (double)y[i] - (double)x[i] : 0.0;
    e2 += d * d;
    x2 += nz ? xd * xd : 0.0;
    double rel = fabs(d) / fabs(xd);
    mr = rel > mr ? rel : mr;
  }
  a->underflow += unf;
  a->subnormal += sub;
  a->overflow += ovf;
  a->err2 += e2;
  a->x2 += x2;
  if (mr > a->maxrel)
    a->maxrel = mr;
}

static const mpe_round_opts rne;   /* zeroed: RNE, subnormals kept, no saturation */

int mpe_range_add_f32(mpe_range *r, const float *x, size_t n)
{
  if (!r || (!x && n))
    return MPE_EINVAL;
  for (size_t s = 0; s < n; s += BLOCK) {
    size_t m = n - s < BLOCK ? n - s : BLOCK;
    const float *xb = x + s;
    int lo = NB, hi = -1;
    for (size_t i = 0; i < m; i++) {
      uint32_t b = mpei_f2u(xb[i]) & 0x7fffffffu;
      if (b >= 0x7f800000u) {
        if (b > 0x7f800000u) r->nan++; else r->inf++;
      } else if (b == 0) {
        r->zeros++;
      } else {
        int e;
        uint64_t frac;
        binade32(b, &e, &frac);
        scan_value(r, e, frac, (double)mpei_u2f(b), &lo, &hi);
      }
    }
    fold_block(r, lo, hi);
    r->count += m;
    int have_d = 0;
    for (size_t k = 0; k < r->nf; k++) {
      struct fmt_acc *a = &r->a[k];
      if (a->p <= 24) {
        mpe_round_f32(r->yf, xb, m, a->f, &rne);
        classify32(a, xb, r->yf, m);
      } else {                 /* wider than binary32 (fp64, custom): round in binary64 */
        if (!have_d) {
          for (size_t i = 0; i < m; i++)
            r->xd[i] = xb[i];
          have_d = 1;
        }
        mpe_round_f64(r->yd, r->xd, m, a->f, &rne);
        classify(a, r->xd, r->yd, m);
      }
    }
  }
  return MPE_OK;
}

int mpe_range_add_f64(mpe_range *r, const double *x, size_t n)
{
  if (!r || (!x && n))
    return MPE_EINVAL;
  for (size_t s = 0; s < n; s += BLOCK) {
    size_t m = n - s < BLOCK ? n - s : BLOCK;
    const double *xb = x + s;
    int lo = NB, hi = -1;
    for (size_t i = 0; i < m; i++) {
      uint64_t b = mpei_d2u(xb[i]) & 0x7fffffffffffffffull;
      if (b >= 0x7ff0000000000000ull) {
        if (b > 0x7ff0000000000000ull) r->nan++; else r->inf++;
      } else if (b == 0) {
        r->zeros++;
      } else {
        int e;
        uint64_t frac;
        binade64(b, &e, &frac);
        scan_value(r, e, frac, mpei_u2d(b), &lo, &hi);
      }
    }
    fold_block(r, lo, hi);
    r->count += m;
    for (size_t k = 0; k < r->nf; k++) {
      mpe_round_f64(r->yd, xb, m, r->a[k].f, &rne);
      classify(&r->a[k], xb, r->yd, m);
    }
  }
  return MPE_OK;
}

int mpe_range_summary_get(const mpe_range *r, mpe_range_summary *s)
{
  if (!r || !s)
    return MPE_EINVAL;
  s->count = r->count;
  s->zeros = r->zeros;
  s->nan = r->nan;
  s->inf = r->inf;
  s->max_abs = r->max_abs;
  s->min_abs_nonzero = r->min_abs;
  return MPE_OK;
}

static uint64_t hist_at(const mpe_range *r, int e)
{
  if (e < EMIN_ALL || e > EMAX_ALL)
    return 0;
  return (uint64_t)gsl_histogram_get(r->hist, (size_t)(e - EMIN_ALL));
}

/* number of non-zero finite values in binades below e */
static uint64_t below_binade(const mpe_range *r, int e)
{
  uint64_t c = 0;
  int top = e - 1 < r->bmax ? e - 1 : r->bmax;
  for (int b = r->bmin; b <= top; b++)
    c += hist_at(r, b);
  return c;
}

/* S = 2^k. RNE: S*x rounds to 0 iff |S*x| <= minsub/2 = 2^(emin-p) (the tie goes to
   the even 0), i.e. x below binade emin-p-k or exactly 2^(emin-p-k). With flushing,
   S*x is lost iff it rounds below minnorm: |S*x| < minnorm - minsub/2 (the tie rounds
   up to minnorm, whose last bit is even), a point of binade emin-1-k. */
static void underflow_at(const mpe_range *r, const struct fmt_acc *a, long k, uint64_t *u, uint64_t *uf)
{
  long e0 = a->emin - a->p - k, e1 = a->emin - 1 - k;
  uint64_t total = below_binade(r, EMAX_ALL + 1);
  if (u) {
    if (e0 > EMAX_ALL) *u = total;
    else if (e0 < EMIN_ALL) *u = 0;
    else *u = below_binade(r, (int)e0) + r->pow2[e0 - EMIN_ALL];
  }
  if (uf) {
    if (e1 > EMAX_ALL) *uf = total;
    else if (e1 < EMIN_ALL) *uf = 0;
    else *uf = below_binade(r, (int)e1) + a->low[e1 - EMIN_ALL];
  }
}

/* largest k with 2^k * max_abs <= max_finite * 2^-margin, without overflow */
static int best_scale(double max_abs, double maxf, int margin)
{
  int ea, et;
  double ma = frexp(max_abs, &ea), mt = frexp(maxf, &et);
  return et - margin - ea - (ma > mt);
}

int mpe_range_stats_get(const mpe_range *r, size_t k, mpe_range_stats *s)
{
  if (!r || !s || k >= r->nf)
    return MPE_EINVAL;
  const struct fmt_acc *a = &r->a[k];
  memset(s, 0, sizeof *s);
  s->underflow = a->underflow;
  s->subnormal = a->subnormal;
  s->overflow = a->overflow;
  s->underflow_flush = a->underflow + a->subnormal;   /* flushing is after rounding */
  s->rel_error = a->x2 > 0 ? (double)sqrtl(a->err2 / a->x2) : 0.0;
  s->max_rel_error = a->maxrel;
  if (r->max_abs > 0) {
    s->has_scale = 1;
    s->scale_log2 = best_scale(r->max_abs, mpe_format_max(a->f), r->margin);
    underflow_at(r, a, s->scale_log2, &s->underflow_at_scale, &s->underflow_at_scale_flush);
  }
  return MPE_OK;
}

int mpe_range_at_scale(const mpe_range *r, size_t k, int e, uint64_t *underflow, uint64_t *underflow_flush,
                       int *overflows)
{
  if (!r || k >= r->nf)
    return MPE_EINVAL;
  const struct fmt_acc *a = &r->a[k];
  underflow_at(r, a, e, underflow, underflow_flush);
  if (overflows) {
    *overflows = 0;
    if (r->max_abs > 0) {
      /* 2^e * max_abs in binary64 is exact unless it leaves binary64's range */
      int em;
      frexp(r->max_abs, &em);
      if ((long)em + e > 1024)
        *overflows = 1;
      else if ((long)em + e > -1020) {
        double v = mpe_round_scalar(ldexp(r->max_abs, e), a->f, &rne);
        *overflows = !isfinite(v);
      }
    }
  }
  return MPE_OK;
}

int mpe_range_histogram(const mpe_range *r, int k, int *first, uint64_t *counts, size_t cap,
                        size_t *n, uint64_t *below, uint64_t *above)
{
  if (!r || !first || !n || (k >= 0 && (size_t)k >= r->nf) || (cap && !counts))
    return MPE_EINVAL;
  int lo, hi;
  uint64_t bl = 0, ab = 0;
  if (k < 0) {
    lo = r->bmin;
    hi = r->bmax;
  } else {
    const struct fmt_acc *a = &r->a[k];
    lo = a->emin - a->p + 1;
    hi = a->emax;
    for (int b = r->bmin; b <= r->bmax; b++) {
      if (b < lo) bl += hist_at(r, b);
      if (b > hi) ab += hist_at(r, b);
    }
  }
  size_t m = hi >= lo ? (size_t)(hi - lo + 1) : 0;
  *first = m ? lo : 0;
  *n = m;
  if (cap < m)
    return MPE_ERANGE;
  for (size_t i = 0; i < m; i++)
    counts[i] = hist_at(r, lo + (int)i);
  if (below) *below = bl;
  if (above) *above = ab;
  return MPE_OK;
}
