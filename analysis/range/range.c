/* Range analysis. One pass over the values, memory fixed at allocation.

   Binary32 inputs (the common case) take the fast path, in blocks of BLOCK values:
   - the binade histogram is a scatter of each value into a small table keyed by
     its exponent field and a "category": how many leading ones its fraction has,
     compressed to the thresholds the float targets need (see below), or "exact
     power of two"; the table is folded into the binade counts at the end of a call;
   - each target's counts come from comparing |x| bit patterns with thresholds
     found once per target with the scalar rounding (rounding is monotone, so the
     values that round to 0, to a subnormal or overflow are contiguous ranges of
     bit patterns); the error statistics come from the array rounding
     (mpe_round_f32) of the block; both in the SIMD kernels of range_kernel.h.
   Binary64 inputs and formats wider than binary32 take the direct path: round
   the block, classify each value.

   The histogram and, per binade, the counts of exact powers of two and of values
   below each format's flush threshold make the counts for ANY power-of-two scale
   available after a single pass: scaling by 2^k moves every value by k binades
   and leaves its significand alone, so "S*x rounds to 0" is "x lies below a fixed
   point of binade emin-p-k" (see underflow_at). For a format of precision p that
   point of binade emin-1-k is 2^(emin-1-k)*(2 - 2^(1-p)): x is below it iff its
   fraction has fewer than p-1 leading ones, which is what the categories count. */
#include <config.h>
#include <float.h>
#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#ifdef _OPENMP
#include <omp.h>
#endif
#include "mpei.h"
#include "mpei_round_core.h"
#include "mpemu/range.h"
#include "range_internal.h"

#define BLOCK 4096
#define EMIN_ALL (-1074)          /* smallest binade of a binary64 value */
#define EMAX_ALL 1023
#define NB (EMAX_ALL - EMIN_ALL + 1)
#define MAXFMT 64
#define NCOPY 4                   /* interleaved histogram tables: fewer store-to-load stalls */
#define FX_BINS 17                /* fx16: binades -16..0 relative to the block max */
#define SUPER 1024                /* blocks shared out among the threads at a time */
#define PAR_BLOCKS 256            /* fewer blocks than this: one thread (on a loaded machine, short
                                     parallel regions wait for descheduled threads at their end) */
#define MAXTHREADS 64
#define TASK_BLOCKS 16            /* inside a parallel region: blocks as tasks from this many */

/* what a target has accumulated */
struct acc {
  uint64_t underflow, subnormal, overflow;
  long double err2, x2;
  double maxrel;
  uint64_t rh[FX_BINS], rbelow, rabove;   /* fx16 only */
};

struct tgt {
  mpe_range_target t;
  const mpe_format *f;            /* float targets */
  int p, emin, emax;
  double minnorm, maxf;           /* maxf: the largest finite (Q16: 32767*2^-F) */
  int fast;                       /* binary32 inputs by the kernels (float p <= 24, Q16) */
  int fused;                      /* float: rounded inside the kernel (p <= 24, emin >= -126) */
  uint64_t thr52;                 /* float: fraction (52 bits) below which x*2^k flushes in binade emin-1-k */
  int jcat;                       /* float: categories below jcat (and powers of two) are below thr52 */
  int low_pow2;                   /* float: powers of two are below thr52 (p > 1) */
  mpai_rthr32 thr;                /* binary32 thresholds */
  /* binary64 inputs to float targets with p <= 53, emin >= -1022: the same scheme on
     binary64 bit patterns (underflow <= u64 < subnormal <= s64; overflow >= o64) */
  int fused64;
  uint64_t u64, s64, o64, mnb64, add64, low64;
  int sbase64;
  double minsub64;
  struct acc a;
  uint64_t *low;                  /* float: per binade, values with fraction < thr52 */
  double *fxbuf;                  /* fx16: the open block */
  size_t fill;
};

struct mpe_range {
  size_t nf;
  struct tgt a[MAXFMT];
  int margin;
  uint64_t count, zeros, nan, inf;
  double max_abs, min_abs, max_pos, max_neg;
  int bmin, bmax;                 /* binades seen (bmin > bmax when none) */
  uint64_t *hist;                 /* binade histogram: hist[i] counts binade EMIN_ALL + i */
  uint64_t *pow2;                 /* per binade: exact powers of two */
  uint32_t *loc;                  /* per block binade counts (binary64 path), folded into hist */
  /* binary32 path: NCOPY tables of 256 exponent fields x ncat categories */
  int ncat;
  mpai_rkeys keys;
  /* per thread: NCOPY tables of 256 exponent fields x ncat categories, the keys of a block */
  int nts;
  uint32_t *tab[MAXTHREADS];
  uint16_t *key[MAXTHREADS];
  /* per block of a super-block: the kernels' results, extremes, subnormal inputs seen */
  mpai_rblk *bres;
  double *tseed;                  /* per thread and target: the fast kernel's seed (see add_spans) */
  uint32_t bmn[SUPER], bmxp[SUPER], bmxn[SUPER];
  int bsub[SUPER];
  mpai_rkern_float kfloat;
  mpai_rkern_q kq, kfused;
  mpai_rkern_fast kfast;
  mpai_rkern_keys kkeys;
  size_t fxmax;                   /* largest fx16 block */
  float *fxf, *fxy;               /* fx16 scratch */
  int16_t *fxq;
  float yf[BLOCK];
  double yd[BLOCK], xd[BLOCK];
};

static const mpe_round_opts rne;   /* zeroed: RNE, subnormals kept, no saturation */

/* ---------------------------------------------------------------- portable kernels */

/* round to nearest even for the fused kernels: the same integer steps, one value
   (magnitude in, magnitude out) */
static float fused_round(float x, const mpai_rthr32 *t)
{
  uint32_t a = mpei_f2u(x) & 0x7fffffffu, d = t->dsh;
  if (a >= t->mnb) {
    if (d == 0)
      return mpei_u2f(a);                             /* binary32 itself: exact */
    uint32_t one = 1u << d, low = one - 1, half = one >> 1, tr = a & ~low, rem = a & low;
    return mpei_u2f(MPEI_ROUND_CARRY(MPEI_RC_RNE, uint32_t, a, d, one, low, half, tr, rem, 0, 0, 0));
  }
  float xs = mpei_u2f(a) * t->k1 * t->k2;          /* < 2^(p-1): exact */
  int32_t i = (int32_t)xs;                            /* truncation */
  float f = xs - (float)i;
  i += MPEI_ROUND_UP(MPEI_RC_RNE, f != 0.0f, f > 0.5f, f == 0.5f, (i & 1) != 0, 0, 0, 0);
  return (float)i * t->minsub;                        /* exact: a p-bit integer times a power of two */
}

/* round to nearest even to an integer, without the caller's rounding mode */
static double rne_int(double v)
{
  if (!(fabs(v) < 0x1p52))
    return v;
  int64_t i = (int64_t)v;      /* truncation */
  double f = fabs(v - (double)i);
  if (MPEI_ROUND_UP(MPEI_RC_RNE, f != 0.0, f > 0.5, f == 0.5, (i & 1) != 0, v < 0, 0, 0))
    i += v < 0 ? -1 : 1;
  return (double)i;
}

/* q: 0 y given, 1 Q16, 2 float target rounded here */
static void ref_core(const float *x, const float *y, size_t n, const mpai_rthr32 *t, mpai_rblk *o, int q)
{
  double le[MPAI_RLANES] = { 0 }, lx[MPAI_RLANES] = { 0 }, m = o->maxrel;
  uint64_t unf = 0, sub = 0, ovf = 0;
  for (size_t i = 0; i < n; i++) {
    uint32_t u = mpei_f2u(x[i]), a = u & 0x7fffffffu;
    if (a == 0 || a >= 0x7f800000u)
      continue;
    if (a >= (u >> 31 ? t->oneg : t->opos)) {
      ovf++;
      continue;
    }
    if (a <= t->u)
      unf++;
    else if (a <= t->s)
      sub++;
    double xd = x[i], yd;
    if (q == 1) {
      yd = rne_int(xd * t->two_f) * t->two_mf;   /* exact products: powers of two */
    } else if (q == 2) {
      yd = fused_round(x[i], t);
      if (u >> 31)
        yd = -yd;
    } else {
      yd = y[i];
    }
    double d = yd - xd;
    le[i % MPAI_RLANES] += d * d;
    lx[i % MPAI_RLANES] += xd * xd;
    double rel = fabs(d) / fabs(xd);
    if (rel > m)
      m = rel;
  }
  mpai_rblk_set(o, unf, sub, ovf, le, lx, m);
}

void mpai_range_float_ref(const float *x, const float *y, size_t n, const mpai_rthr32 *t, mpai_rblk *o)
{
  ref_core(x, y, n, t, o, 0);
}

void mpai_range_q_ref(const float *x, size_t n, const mpai_rthr32 *t, mpai_rblk *o)
{
  ref_core(x, NULL, n, t, o, 1);
}

void mpai_range_fused_ref(const float *x, size_t n, const mpai_rthr32 *t, mpai_rblk *o)
{
  ref_core(x, NULL, n, t, o, 2);
}

void mpai_range_fast_ref(const float *x, size_t n, const mpai_rthr32 *t, mpai_rblk *o, int want_x2)
{
  ref_core(x, NULL, n, t, o, 2);
  if (!want_x2)
    o->x2 = 0;
}

void mpai_range_keys_ref(const float *x, size_t n, const mpai_rkeys *k, uint16_t *key, uint32_t *mn,
                         uint32_t *mxp, uint32_t *mxn)
{
  for (size_t i = 0; i < n; i++) {
    uint32_t u = mpei_f2u(x[i]), a = u & 0x7fffffffu, fr = u & 0x7fffffu, c = 0;
    for (int j = 0; j < k->nthr; j++)
      c += fr >= k->fthr[j];
    key[i] = (uint16_t)((a >> 23) * (uint32_t)k->ncat + (fr ? c : (uint32_t)k->ncat - 1));
    if (a == 0 || a >= 0x7f800000u)
      continue;
    if (a < *mn) *mn = a;
    if (u >> 31) {
      if (a > *mxn) *mxn = a;
    } else if (a > *mxp) {
      *mxp = a;
    }
  }
}

/* ---------------------------------------------------------------- thresholds */

static double q_round(double x, int fb)   /* Q16 integer before saturation, RNE */
{
  return rne_int(ldexp(x, fb));
}

enum { P_UNDER, P_TINY, P_OVER, P_QUNDER, P_QOVER_POS, P_QOVER_NEG };

/* x overflows float target g, y being x rounded to nearest-even: y is inf (or NaN);
   formats with no inf and no NaN (OCP FP6/FP4) saturate, so there x overflows when
   it rounds, exponent unbounded, beyond max finite: |x| >= max + ulp(max)/2 (max is
   odd, so the tie goes up) */
static int overflows(const struct tgt *g, double x, double y)
{
  if (!mpe_format_has_nan(g->f))
    return fabs(x) >= g->maxf + ldexp(1.0, g->emax - g->p);
  return !isfinite(y);
}

static int pred(const struct tgt *g, int what, uint32_t a)
{
  double x = (double)mpei_u2f(a);
  if (what >= P_QUNDER) {
    double v = q_round(x, g->t.frac_bits);
    return what == P_QUNDER ? v == 0 : what == P_QOVER_POS ? v > 32767.0 : v > 32768.0;
  }
  double y = mpe_round_scalar(x, g->f, &rne);
  return what == P_UNDER ? y == 0 : what == P_TINY ? fabs(y) < g->minnorm : overflows(g, x, y);
}

static int pred64(const struct tgt *g, int what, uint64_t a)
{
  double y = mpe_round_scalar(mpei_u2d(a), g->f, &rne);
  return what == P_UNDER ? y == 0 : what == P_TINY ? fabs(y) < g->minnorm : overflows(g, mpei_u2d(a), y);
}

/* the predicate on a binary32 (wide 0) or binary64 (wide 1) bit pattern */
static int holds(const struct tgt *g, int what, uint64_t a, int wide)
{
  return wide ? pred64(g, what, a) : pred(g, what, (uint32_t)a);
}

/* the first bit pattern from 1 up to +inf's where the monotone predicate holds
   (+inf's pattern when none) */
static uint64_t first_true(const struct tgt *g, int what, int wide)
{
  uint64_t lo = 1, hi = wide ? 0x7ff0000000000000ull : 0x7f800000u;   /* answer in [lo, hi] */
  while (lo < hi) {
    uint64_t mid = lo + (hi - lo) / 2;
    if (holds(g, what, mid, wide))
      hi = mid;
    else
      lo = mid + 1;
  }
  return lo;
}

/* the last bit pattern where a predicate true on a prefix holds (0 when none) */
static uint64_t last_true(const struct tgt *g, int what, int wide)
{
  uint64_t lo = 0, hi = wide ? 0x7fefffffffffffffull : 0x7f7fffffu;   /* answer in [lo, hi] */
  while (lo < hi) {
    uint64_t mid = hi - (hi - lo) / 2;
    if (holds(g, what, mid, wide))
      lo = mid;
    else
      hi = mid - 1;
  }
  return lo;
}

/* The thresholds of a target are binary searches of rounded values, most of the
   cost of a small tensor's accumulator. They depend only on the target's grid, so
   those of the built-in formats and of each Q16 frac_bits are found once per process
   and kept here (under a lock: accumulators are made from any thread). */
struct grid_thr {
  int have;
  uint32_t u, s, opos, oneg;      /* binary32 patterns (fast targets) */
  uint64_t u64, s64, o64;         /* binary64 patterns (fused64 float targets) */
};
enum { NBUILTIN_MAX = 64, QFB_MIN = -512, QFB_MAX = 512 };
static struct grid_thr float_thr[NBUILTIN_MAX], q_thr[QFB_MAX - QFB_MIN + 1];
static pthread_mutex_t thr_lock = PTHREAD_MUTEX_INITIALIZER;

static void find_thresholds(const struct tgt *g, struct grid_thr *c)
{
  /* the searches' roundings raise no flag of the caller's (mpe_flags_get(3)) */
  const unsigned flags = mpe_flags_get();
  if (g->t.kind == MPE_TARGET_Q16) {
    c->u = c->s = (uint32_t)last_true(g, P_QUNDER, 0);
    c->opos = (uint32_t)first_true(g, P_QOVER_POS, 0);
    c->oneg = (uint32_t)first_true(g, P_QOVER_NEG, 0);
  }
  if (g->t.kind == MPE_TARGET_FLOAT && g->fast) {
    c->u = (uint32_t)last_true(g, P_UNDER, 0);
    c->s = (uint32_t)last_true(g, P_TINY, 0);
    c->opos = c->oneg = (uint32_t)first_true(g, P_OVER, 0);   /* RNE is symmetric */
  }
  if (g->t.kind == MPE_TARGET_FLOAT && g->fused64) {
    c->u64 = last_true(g, P_UNDER, 1);
    c->s64 = last_true(g, P_TINY, 1);
    c->o64 = first_true(g, P_OVER, 1);
  }
  mpe_flags_clear(~0u);
  mpe_flags_raise(flags);
}

/* the cache entry of g's grid: a built-in format or a Q16 frac_bits (NULL: a custom format) */
static struct grid_thr *thr_slot(const struct tgt *g)
{
  if (g->t.kind == MPE_TARGET_Q16)
    return &q_thr[g->t.frac_bits - QFB_MIN];
  size_t n;
  const struct mpe_format *tab = mpei_format_table(&n);
  if (g->f < tab || g->f >= tab + n || n > NBUILTIN_MAX)
    return NULL;
  return &float_thr[g->f - tab];
}

/* g's thresholds: from `like` (h, the same grid), the cache, or a search */
static struct grid_thr thresholds_of(const struct tgt *g, const struct tgt *h)
{
  struct grid_thr c = { 0 };
  if (h) {
    c = (struct grid_thr){ 1, h->thr.u, h->thr.s, h->thr.opos, h->thr.oneg, h->u64, h->s64, h->o64 };
    return c;
  }
  struct grid_thr *slot = thr_slot(g);
  if (!slot) {
    find_thresholds(g, &c);
    return c;
  }
  pthread_mutex_lock(&thr_lock);
  if (!slot->have) {
    find_thresholds(g, slot);
    slot->have = 1;
  }
  c = *slot;
  pthread_mutex_unlock(&thr_lock);
  return c;
}

/* ---------------------------------------------------------------- allocation */

static int target_ok(const mpe_range_target *t)
{
  switch (t->kind) {
  case MPE_TARGET_FLOAT:   /* an unsigned scale format (E8M0) is no rounding target */
    return t->format != NULL && mpe_format_is_signed(t->format);
  case MPE_TARGET_Q16: return t->frac_bits >= -512 && t->frac_bits <= 512;
  case MPE_TARGET_FX16: return t->block >= 1 && t->block <= MPE_RANGE_FX16_MAXBLOCK;
  }
  return 0;
}

/* the range kernels of each instruction set: this module's table, picked as
   emu/isa.c's is (MPEI_ISA_PICK) */
typedef struct {
  const char *name;
  mpai_rkern_float kfloat;
  mpai_rkern_q kq, kfused;
  mpai_rkern_fast kfast;
  mpai_rkern_keys kkeys;
} range_isa;

#define RANGE_ROW(isa, ISA)                                                                              \
  { #isa, mpai_range_float_##isa, mpai_range_q_##isa, mpai_range_fused_##isa, mpai_range_fast_##isa,   \
    mpai_range_keys_##isa }
static const range_isa range_by_level[MPEI_SIMD_N] = {
  [MPEI_SIMD_NONE] = RANGE_ROW(ref, REF),
  MPEI_ISA_ROWS(RANGE_ROW)
};

static void set_kernels(mpe_range *r)
{
  /* chosen at allocation (mpe_simd_level_set) */
  const range_isa *k = MPEI_ISA_PICK(range_by_level, mpe_simd_level());
  r->kfloat = k->kfloat;
  r->kq = k->kq;
  r->kfused = k->kfused;
  r->kfast = k->kfast;
  r->kkeys = k->kkeys;
}

/* The histogram categories: with T_1 < ... < T_m the distinct p-1 < 24 of the
   float targets, category c holds the fractions with at least T_c and fewer than
   T_(c+1) leading ones; category m+1 the exact powers of two. */
static void make_categories(mpe_range *r)
{
  int used[24] = { 0 };
  for (size_t k = 0; k < r->nf; k++)
    if (r->a[k].t.kind == MPE_TARGET_FLOAT && r->a[k].p - 1 >= 1 && r->a[k].p - 1 < 24)
      used[r->a[k].p - 1] = 1;
  int m = 0, idx[24];
  for (int T = 1; T < 24; T++) {
    idx[T] = used[T] ? ++m : 0;
    if (used[T])   /* fractions whose T leading bits are ones */
      r->keys.fthr[m - 1] = (1u << 23) - (1u << (23 - T));
  }
  r->ncat = m + 2;
  r->keys.nthr = m;
  r->keys.ncat = m + 2;
  for (size_t k = 0; k < r->nf; k++) {
    struct tgt *g = &r->a[k];
    if (g->t.kind != MPE_TARGET_FLOAT)
      continue;
    int T = g->p - 1;
    g->low_pow2 = T >= 1;
    g->jcat = T < 1 ? 0 : T >= 24 ? m + 1 : idx[T];
  }
}

/* the thresholds of target k of `like` serve g when both round to the same grid */
static const struct tgt *same_grid(const mpe_range *like, size_t k, const struct tgt *g)
{
  if (!like || k >= like->nf || like->a[k].t.kind != g->t.kind)
    return NULL;
  const struct tgt *h = &like->a[k];
  if (g->t.kind == MPE_TARGET_FLOAT && h->t.format == g->t.format)
    return h;
  if (g->t.kind == MPE_TARGET_Q16 && h->t.frac_bits == g->t.frac_bits)
    return h;
  return NULL;
}

static mpe_range *alloc_like(const mpe_range_target *targets, size_t ntargets, const mpe_range_opts *o,
                             const mpe_range *like);

mpe_range *mpe_range_alloc_targets(const mpe_range_target *targets, size_t ntargets, const mpe_range_opts *o)
{
  return alloc_like(targets, ntargets, o, NULL);
}

mpe_range *mpai_range_alloc_like(const mpe_range_target *targets, size_t ntargets, const mpe_range_opts *o,
                                 const mpe_range *like)
{
  return alloc_like(targets, ntargets, o, like);
}

/* A new accumulator; the thresholds (a binary search of rounded values each,
   most of the cost of a small tensor's accumulator) are copied from `like`
   where it has the same target. */
static mpe_range *alloc_like(const mpe_range_target *targets, size_t ntargets, const mpe_range_opts *o,
                             const mpe_range *like)
{
  MPEI_FENV_GUARD();
  if (!targets || ntargets == 0 || ntargets > MAXFMT || (o && (o->margin < 0 || o->margin > 4096)))
    return NULL;
  for (size_t k = 0; k < ntargets; k++)
    if (!target_ok(&targets[k]))
      return NULL;
  mpe_range *r = calloc(1, sizeof *r);
  if (!r)
    return NULL;
  r->nf = ntargets;
  r->margin = o ? o->margin : 0;
  r->bmin = EMAX_ALL + 1;
  r->bmax = EMIN_ALL - 1;
  r->hist = calloc(NB, sizeof *r->hist);
  r->pow2 = calloc(NB, sizeof *r->pow2);
  r->loc = calloc(NB, sizeof *r->loc);
  int ok = r->hist && r->pow2 && r->loc;
  set_kernels(r);
  for (size_t k = 0; k < ntargets && ok; k++) {
    struct tgt *g = &r->a[k];
    g->t = targets[k];
    const struct tgt *h = same_grid(like, k, g);
    struct grid_thr c;
    switch (g->t.kind) {
    case MPE_TARGET_FLOAT:
      g->f = g->t.format;
      g->p = mpe_format_precision(g->f);
      g->emin = mpe_format_emin(g->f);
      g->emax = mpe_format_emax(g->f);
      g->minnorm = mpe_format_min_normal(g->f);
      g->maxf = mpe_format_max(g->f);
      /* flush threshold: minnorm - minsub/2 = 2^(emin-1) * (2 - 2^(1-p)); as a fraction of 2^52 */
      g->thr52 = (1ull << 52) - (g->p <= 53 ? 1ull << (53 - g->p) : 0);
      g->fast = g->p <= 24;
      g->fused = g->fast && g->emin >= -126;
      g->fused64 = g->p <= 53 && g->emin >= -1022;
      c = thresholds_of(g, h);
      if (g->fast) {
        g->thr.mnb = mpei_f2u(ldexpf(1.0f, g->emin));
        g->thr.dsh = (uint32_t)(24 - g->p);
        int e = g->p - 1 - g->emin;                     /* 1/minsub = 2^e, e <= 149 */
        g->thr.k1 = ldexpf(1.0f, e / 2);
        g->thr.k2 = ldexpf(1.0f, e - e / 2);
        g->thr.minsub = ldexpf(1.0f, -e);
        g->thr.u = c.u;
        g->thr.s = c.s;
        g->thr.opos = c.opos;
        g->thr.oneg = c.oneg;
        if (g->fused) {
          uint32_t d = g->thr.dsh;
          g->thr.cadd = d << 23;
          g->thr.csub = (uint32_t)(g->emin + 127 + (int)d) << 23;
          int ce = g->emin + 127 + (int)d;   /* csub's exponent field: 2*csub finite too */
          g->thr.alim = !d ? 0x7f800000u : ce <= 253 ? (254u - d) << 23 : 0;
        }
      }
      if (g->fused64) {
        unsigned d = (unsigned)(53 - g->p);
        g->u64 = c.u64;
        g->s64 = c.s64;
        g->o64 = c.o64;
        g->mnb64 = mpei_d2u(ldexp(1.0, g->emin));
        g->add64 = d ? (1ull << d >> 1) - 1 : 0;
        g->low64 = (1ull << d) - 1;
        g->sbase64 = 53 - g->p + g->emin + 1023;
        g->minsub64 = ldexp(1.0, g->emin - g->p + 1);
      }
      ok = (g->low = calloc(NB, sizeof *g->low)) != NULL;
      break;
    case MPE_TARGET_Q16:
      g->maxf = ldexp(32767.0, -g->t.frac_bits);
      g->fast = 1;
      c = thresholds_of(g, h);
      g->thr.u = g->thr.s = c.u;
      g->thr.opos = c.opos;
      g->thr.oneg = c.oneg;
      g->thr.two_f = ldexp(1.0, g->t.frac_bits);
      g->thr.two_mf = ldexp(1.0, -g->t.frac_bits);
      break;
    case MPE_TARGET_FX16:
      if (g->t.block > r->fxmax)
        r->fxmax = g->t.block;
      ok = (g->fxbuf = malloc(g->t.block * sizeof *g->fxbuf)) != NULL;
      break;
    }
  }
  if (ok) {
    make_categories(r);
    r->nts = 1;
#ifdef _OPENMP
    r->nts = omp_get_max_threads();
    if (r->nts > MAXTHREADS) r->nts = MAXTHREADS;
    if (r->nts < 1) r->nts = 1;
#endif
    for (int t = 0; t < r->nts && ok; t++) {
      r->tab[t] = calloc((size_t)NCOPY * 256 * (size_t)r->ncat, sizeof *r->tab[t]);
      r->key[t] = malloc(BLOCK * sizeof *r->key[t]);
      ok = r->tab[t] && r->key[t];
    }
    ok = ok && (r->bres = calloc((size_t)SUPER * ntargets, sizeof *r->bres)) != NULL;
    ok = ok && (r->tseed = calloc((size_t)r->nts * ntargets, sizeof *r->tseed)) != NULL;
  }
  if (ok && r->fxmax) {
    r->fxf = malloc(r->fxmax * sizeof *r->fxf);
    r->fxy = malloc(r->fxmax * sizeof *r->fxy);
    r->fxq = malloc(r->fxmax * sizeof *r->fxq);
    ok = r->fxf && r->fxy && r->fxq;
  }
  if (!ok) {
    mpe_range_free(r);
    return NULL;
  }
  return r;
}

mpe_range *mpe_range_alloc(const mpe_format *const *formats, size_t nformats, const mpe_range_opts *o)
{
  mpe_range *r;
  return mpe_range_create(&r, formats, nformats, o) ? NULL : r;
}

void mpe_range_free(mpe_range *r)
{
  if (!r)
    return;
  for (size_t k = 0; k < r->nf; k++) {
    free(r->a[k].low);
    free(r->a[k].fxbuf);
  }
  free(r->hist);
  free(r->pow2);
  free(r->loc);
  for (int t = 0; t < r->nts; t++) {
    free(r->tab[t]);
    free(r->key[t]);
  }
  free(r->bres);
  free(r->tseed);
  free(r->fxf);
  free(r->fxy);
  free(r->fxq);
  free(r);
}

size_t mpe_range_nformats(const mpe_range *r) { return r ? r->nf : 0; }

int mpe_range_target_get(const mpe_range *r, size_t k, mpe_range_target *t)
{
  if (!r || !t || k >= r->nf)
    return MPE_EINVAL;
  *t = r->a[k].t;
  return MPE_OK;
}

/* ---------------------------------------------------------------- the binade scan */

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

static void note_binade(mpe_range *r, int e)
{
  if (e < r->bmin) r->bmin = e;
  if (e > r->bmax) r->bmax = e;
}

/* one value straight into the binade counts (binary64 path, binary32 subnormals) */
static void count_direct(mpe_range *r, int e, uint64_t frac)
{
  int i = e - EMIN_ALL;
  r->hist[i]++;
  note_binade(r, e);
  r->pow2[i] += frac == 0;
  for (size_t k = 0; k < r->nf; k++)
    if (r->a[k].low)
      r->a[k].low[i] += frac < r->a[k].thr52;
}

static void note_extremes(mpe_range *r, double mn, double mxp, double mxn)
{
  if (mxp > r->max_pos) r->max_pos = mxp;
  if (mxn > r->max_neg) r->max_neg = mxn;
  r->max_abs = r->max_pos > r->max_neg ? r->max_pos : r->max_neg;
  if (mn > 0 && (r->min_abs == 0 || mn < r->min_abs))
    r->min_abs = mn;
}

/* binary32: scatter the keys into the category tables */
static void scatter(const mpe_range *r, uint32_t *tab, const uint16_t *key, size_t n)
{
  const size_t C = (size_t)r->ncat;
  uint32_t *t0 = tab, *t1 = t0 + 256 * C, *t2 = t1 + 256 * C, *t3 = t2 + 256 * C;
  size_t i = 0;
  for (; i + 4 <= n; i += 4) {
    t0[key[i]]++;
    t1[key[i + 1]]++;
    t2[key[i + 2]]++;
    t3[key[i + 3]]++;
  }
  for (; i < n; i++)
    t0[key[i]]++;
}

/* sum over the copies of the table's row e, category c */
static uint64_t tab_get(const mpe_range *r, const uint32_t *tab, int e, int c)
{
  uint64_t s = 0;
  for (int j = 0; j < NCOPY; j++)
    s += tab[(size_t)j * 256 * (size_t)r->ncat + (size_t)e * (size_t)r->ncat + (size_t)c];
  return s;
}

/* binary32 subnormal inputs in the tables' row 0 (other than zeros) */
static uint64_t tab_sub(const mpe_range *r, const uint32_t *tab)
{
  uint64_t s = 0;
  for (int c = 0; c < r->ncat - 1; c++)
    s += tab_get(r, tab, 0, c);
  return s;
}

/* fold the tables into the histogram, the power-of-two and the flush counts */
static void tab_fold(mpe_range *r, uint32_t *tab)
{
  const int C = r->ncat;
  uint64_t cnt[26];
  for (int e = 1; e < 255; e++) {
    uint64_t tot = 0;
    for (int c = 0; c < C; c++)
      tot += cnt[c] = tab_get(r, tab, e, c);
    if (!tot)
      continue;
    int b = e - 127, i = b - EMIN_ALL;
    r->hist[i] += tot;
    note_binade(r, b);
    r->pow2[i] += cnt[C - 1];
    for (size_t k = 0; k < r->nf; k++) {
      struct tgt *g = &r->a[k];
      if (!g->low)
        continue;
      uint64_t l = g->low_pow2 ? cnt[C - 1] : 0;
      for (int c = 0; c < g->jcat; c++)
        l += cnt[c];
      g->low[i] += l;
    }
  }
  r->zeros += tab_get(r, tab, 0, C - 1);
  r->inf += tab_get(r, tab, 255, C - 1);
  for (int c = 0; c < C - 1; c++)
    r->nan += tab_get(r, tab, 255, c);
  memset(tab, 0, (size_t)NCOPY * 256 * (size_t)C * sizeof *tab);
}

/* ---------------------------------------------------------------- fx16 */

/* One block of fx16: mpe_fx16_encode's rules with MPE_RNE (docs/DESIGN.md §3.4: binary32 max,
   binary32 reciprocal 32767/m, binary32 product, one rounding to an integer, clamp;
   a zero stays 0; decoding is the binary32 product q*scale), done here value by
   value; check_range compares it with mpe_fx16_encode/decode. */
static void fx_block(const struct tgt *g, const double *x, size_t len, float *xf, int16_t *q, float *y,
                     struct acc *a)
{
  (void)g;
  float m = 0.0f;
  for (size_t i = 0; i < len; i++) {
    float f = isfinite(x[i]) ? (float)x[i] : 0.0f;
    if (isinf(f)) {               /* a binary64 value beyond binary32's range */
      a->overflow++;
      f = 0.0f;
    }
    xf[i] = f;
    float af = fabsf(f);
    m = af > m ? af : m;
  }
  float inv = m > 0 ? 32767.0f / m : 0.0f, sc = m * 3.0518509476e-5f;
  for (size_t i = 0; i < len; i++) {
    float p = xf[i] * inv;      /* |p| <= 32767 up to the rounding of inv, or inf */
    int32_t r;
    if (fabsf(p) < 65536.0f) {
      r = (int32_t)p;           /* truncation, then to nearest even */
      float f = fabsf(p - (float)r);
      int up = MPEI_ROUND_UP(MPEI_RC_RNE, f != 0.0f, f > 0.5f, f == 0.5f, (r & 1) != 0, 0, 0, 0);
      r += up * (p < 0 ? -1 : 1);
    } else {
      r = p < 0 ? -32767 : 32767;
    }
    r = r > 32767 ? 32767 : r < -32767 ? -32767 : r;
    q[i] = xf[i] == 0.0f ? 0 : (int16_t)r;
    y[i] = (float)q[i] * sc;
  }
  int em = m > 0 ? ilogb((double)m) : 0;
  double e2 = 0, x2 = 0, mr = a->maxrel;
  for (size_t i = 0; i < len; i++) {
    double v = x[i];
    if (!isfinite(v) || v == 0 || isinf((float)v))   /* the latter: counted as overflow above */
      continue;
    a->underflow += y[i] == 0;     /* q = 0, or a scale below binary32's range */
    double d = (double)y[i] - v;
    e2 += d * d;
    x2 += v * v;
    double rel = fabs(d) / fabs(v);
    if (rel > mr)
      mr = rel;
    uint64_t vb = mpei_d2u(v) & 0x7fffffffffffffffull;
    int rb = xf[i] == 0 ? -FX_BINS : (vb >> 52 ? (int)(vb >> 52) - 1023 : ilogb(v)) - em;
    if (rb < 1 - FX_BINS) a->rbelow++;
    else if (rb > 0) a->rabove++;
    else a->rh[rb + FX_BINS - 1]++;
  }
  a->err2 += e2;
  a->x2 += x2;
  a->maxrel = mr;
}

static void fx_feed(mpe_range *r, struct tgt *g, const float *xf32, const double *xf64, size_t n)
{
  for (size_t i = 0; i < n;) {
    size_t take = g->t.block - g->fill;
    if (take > n - i)
      take = n - i;
    double *b = g->fxbuf + g->fill;
    if (xf32)
      for (size_t j = 0; j < take; j++)
        b[j] = xf32[i + j];
    else
      memcpy(b, xf64 + i, take * sizeof *b);
    g->fill += take;
    i += take;
    if (g->fill == g->t.block) {
      fx_block(g, g->fxbuf, g->fill, r->fxf, r->fxq, r->fxy, &g->a);
      g->fill = 0;
    }
  }
}

/* what target k has seen, its open fx16 block counted as a short block */
static int acc_view(const mpe_range *r, size_t k, struct acc *out)
{
  const struct tgt *g = &r->a[k];
  *out = g->a;
  if (g->t.kind != MPE_TARGET_FX16 || g->fill == 0)
    return MPE_OK;
  float *xf = malloc(g->fill * sizeof *xf), *y = malloc(g->fill * sizeof *y);
  int16_t *q = malloc(g->fill * sizeof *q);
  int rc = xf && y && q ? MPE_OK : MPE_ENOMEM;
  if (!rc)
    fx_block(g, g->fxbuf, g->fill, xf, q, y, out);
  free(xf);
  free(y);
  free(q);
  return rc;
}

/* ---------------------------------------------------------------- adding values */

/* a classified block's counts and sums into a; maxrel already includes a's */
static void acc_add(struct acc *a, uint64_t unf, uint64_t sub, uint64_t ovf, long double err2, long double x2,
                    double maxrel)
{
  a->underflow += unf;
  a->subnormal += sub;
  a->overflow += ovf;
  a->err2 += err2;
  a->x2 += x2;
  a->maxrel = maxrel;
}

/* classify the rounded block of float target g (x and y as binary64) */
static void classify(struct tgt *g, const double *x, const double *y, size_t n)
{
  uint64_t unf = 0, sub = 0, ovf = 0;
  long double err2 = 0, x2 = 0;
  double maxrel = g->a.maxrel;
  for (size_t i = 0; i < n; i++) {
    double xi = x[i], yi = y[i];
    if (!isfinite(xi))
      continue;
    if (overflows(g, xi, yi)) {
      ovf++;
      continue;
    }
    if (xi == 0)
      continue;
    if (yi == 0)
      unf++;
    else if (fabs(yi) < g->minnorm)
      sub++;
    double d = yi - xi;          /* exact for binary32 inputs; binary64: the rounding error of y */
    err2 += (long double)d * d;
    x2 += (long double)xi * xi;
    double rel = fabs(d) / fabs(xi);
    if (rel > maxrel)
      maxrel = rel;
  }
  acc_add(&g->a, unf, sub, ovf, err2, x2, maxrel);
}

/* float target g on binary64 values, classified by bit patterns and rounded here (RNE:
   the carry trick above 2^emin, the significand shifted below, integers only); the same
   results, sums included, as rounding with mpe_round_f64 and classify() */
static void classify_fused64(struct tgt *g, const double *x, size_t n)
{
  uint64_t unf = 0, sub = 0, ovf = 0;
  long double err2 = 0, x2 = 0;
  double maxrel = g->a.maxrel;
  const unsigned d = (unsigned)(53 - g->p);
  for (size_t i = 0; i < n; i++) {
    uint64_t a = mpei_d2u(x[i]) & 0x7fffffffffffffffull;
    if (a == 0 || a >= 0x7ff0000000000000ull)
      continue;
    if (a >= g->o64) {
      ovf++;
      continue;
    }
    unf += a <= g->u64;
    sub += a > g->u64 && a <= g->s64;
    double ax = mpei_u2d(a), y;
    if (a >= g->mnb64) {
      y = mpei_u2d((a + g->add64 + ((a >> d) & (d != 0))) & ~g->low64);
    } else {                     /* below 2^emin: the significand loses sbase64 - max(E, 1) bits */
      int E = (int)(a >> 52), sh = g->sbase64 - (E ? E : 1);
      uint64_t M = (a & 0xfffffffffffffull) | (E ? 1ull << 52 : 0);
      if (sh > 54)
        sh = 54;
      uint64_t add = sh ? ((1ull << sh >> 1) - 1) + ((M >> sh) & 1) : 0;
      y = (double)((M + add) >> sh) * g->minsub64;   /* exact */
    }
    double dd = y - ax;          /* the size of round(x) - x, rounded as classify() rounds it */
    err2 += (long double)dd * dd;
    x2 += (long double)ax * ax;
    double rel = fabs(dd) / ax;
    if (rel > maxrel)
      maxrel = rel;
  }
  acc_add(&g->a, unf, sub, ovf, err2, x2, maxrel);
}

/* Q16 target g on binary64 values */
static void classify_q64(struct tgt *g, const double *x, size_t n)
{
  int fb = g->t.frac_bits;
  for (size_t i = 0; i < n; i++) {
    double xi = x[i];
    if (!isfinite(xi) || xi == 0)
      continue;
    double v = q_round(xi, fb);
    if (v > 32767.0 || v < -32768.0) {
      g->a.overflow++;
      continue;
    }
    if (v == 0)
      g->a.underflow++;
    double d = ldexp(v, -fb) - xi;
    g->a.err2 += (long double)d * d;
    g->a.x2 += (long double)xi * xi;
    double rel = fabs(d) / fabs(xi);
    if (rel > g->a.maxrel)
      g->a.maxrel = rel;
  }
}

static void add_block(struct tgt *g, const mpai_rblk *b)
{
  g->a.underflow += b->underflow;
  g->a.subnormal += b->subnormal;
  g->a.overflow += b->overflow;
  g->a.err2 += b->e2;
  g->a.x2 += b->x2;
  if (b->maxrel > g->a.maxrel)
    g->a.maxrel = b->maxrel;
}

/* the part of a binary32 block that threads may share out: histogram keys,
   extremes, and the targets the kernels handle (results in res[k]) */
static void block_fast(const mpe_range *r, int t, const float *xb, size_t m, mpai_rblk *res, uint32_t *mn,
                       uint32_t *mxp, uint32_t *mxn, int *sub)
{
  uint64_t sub0 = tab_sub(r, r->tab[t]);
  *mn = 0xffffffffu;
  *mxp = *mxn = 0;
  r->kkeys(xb, m, &r->keys, r->key[t], mn, mxp, mxn);
  scatter(r, r->tab[t], r->key[t], m);
  *sub = tab_sub(r, r->tab[t]) != sub0;
  uint32_t amax = *mxp > *mxn ? *mxp : *mxn;   /* the largest finite |x| of the block */
  int have_x2 = 0;
  double x2 = 0;
  for (size_t k = 0; k < r->nf; k++) {
    const struct tgt *g = &r->a[k];
    mpai_rblk *b = &res[k];
    memset(b, 0, sizeof *b);
    if (g->t.kind == MPE_TARGET_Q16) {
      r->kq(xb, m, &g->thr, b);
    } else if (g->fused && amax < g->thr.opos && amax < g->thr.alim) {
      /* nothing overflows: the sum of x^2 is every such target's, found once */
      double *seed = &r->tseed[(size_t)t * r->nf + k];
      b->maxrel = *seed;
      r->kfast(xb, m, &g->thr, b, !have_x2);
      *seed = b->maxrel;
      if (have_x2)
        b->x2 = x2;
      x2 = b->x2;
      have_x2 = 1;
    } else if (g->fused) {
      r->kfused(xb, m, &g->thr, b);
    }
  }
}

/* one block of binary32 values: where it starts, how many (at most BLOCK) */
struct span { const float *x; size_t m; };

/* blocks b[0..nb) (nb <= SUPER): the kernels' part shared out among the threads,
   then the rest in block order; *used is raised to the threads that hold table counts */
static void add_spans(mpe_range *r, const struct span *sp, long nb, int *used)
{
  int nt = 1;
  /* The fast kernel's seed: a lower bound of the max |d|/|x| that the target will
     have once these blocks are added (the kernel skips values that cannot raise
     it, and returns the max joined with it): the max before them, then each
     thread's running max over the blocks it took (threads write only their own;
     whichever blocks a thread takes, the target's max after the call is the same) */
  for (int t = 0; t < r->nts; t++)
    for (size_t k = 0; k < r->nf; k++)
      r->tseed[(size_t)t * r->nf + k] = r->a[k].a.maxrel;
#ifdef _OPENMP
  int team = omp_in_parallel() ? omp_get_num_threads() : 1;
  if (team > 1 && team <= r->nts && nb >= TASK_BLOCKS) {
    /* called inside a parallel region (mpanalyze reads the next batch in a task
       of the same team): the blocks become tasks that the team's threads take as
       they come free, each with its own table (thread numbers are unique in a
       team); no second team to start, none competing with the first for cores */
#pragma omp taskloop grainsize(4)
    for (long b = 0; b < nb; b++) {
      MPEI_FENV_GUARD();   /* any thread of the caller's team may run it */
      block_fast(r, omp_get_thread_num(), sp[b].x, sp[b].m, r->bres + (size_t)b * r->nf, &r->bmn[b], &r->bmxp[b],
                 &r->bmxn[b], &r->bsub[b]);
    }
    nt = team;
    goto serial;
  }
  nt = omp_in_parallel() ? 1 : omp_get_max_threads();
  if (nt > r->nts) nt = r->nts;
  if (nb < PAR_BLOCKS) nt = 1;
  if (nt < 1) nt = 1;
  /* dynamic: a thread slowed by another process (or by a reader thread beside us)
     does not hold the others at the end of the region; every block's results go
     to its own slot and are summed in block order below, so the bits do not
     depend on which thread took which block */
#pragma omp parallel num_threads(nt) if (nt > 1)
#endif
  {
    MPEI_FENV_GUARD();
#ifdef _OPENMP
#pragma omp for schedule(dynamic, 8)
#endif
    for (long b = 0; b < nb; b++) {
      int t = 0;
#ifdef _OPENMP
      t = omp_get_thread_num();
#endif
      block_fast(r, t, sp[b].x, sp[b].m, r->bres + (size_t)b * r->nf, &r->bmn[b], &r->bmxp[b], &r->bmxn[b],
                 &r->bsub[b]);
    }
  }
#ifdef _OPENMP
serial:
#endif
  if (nt > *used)
    *used = nt;
  /* in block order: the sums, the rest of the targets */
  for (long b = 0; b < nb; b++) {
    size_t m = sp[b].m;
    const float *xb = sp[b].x;
    if (r->bsub[b]) {               /* binary32 subnormal inputs: place them by hand */
      for (size_t i = 0; i < m; i++) {
        uint32_t u = mpei_f2u(xb[i]) & 0x7fffffffu;
        if (u != 0 && u < 0x00800000u) {
          int e;
          uint64_t frac;
          binade32(u, &e, &frac);
          count_direct(r, e, frac);
        }
      }
    }
    note_extremes(r, r->bmn[b] == 0xffffffffu ? 0 : mpei_u2f(r->bmn[b]), mpei_u2f(r->bmxp[b]),
                  mpei_u2f(r->bmxn[b]));
    r->count += m;
    int have_d = 0;
    for (size_t k = 0; k < r->nf; k++) {
      struct tgt *g = &r->a[k];
      if (g->t.kind == MPE_TARGET_FX16) {
        fx_feed(r, g, xb, NULL, m);
      } else if (g->t.kind == MPE_TARGET_Q16 || g->fused) {
        add_block(g, &r->bres[(size_t)b * r->nf + k]);
      } else if (g->fast) {
        mpai_rblk bk = { 0 };
        mpe_round_f32(r->yf, xb, m, g->f, &rne);
        r->kfloat(xb, r->yf, m, &g->thr, &bk);
        add_block(g, &bk);
      } else {                 /* wider than binary32 (fp64, custom): round in binary64 */
        if (!have_d) {
          for (size_t i = 0; i < m; i++)
            r->xd[i] = xb[i];
          have_d = 1;
        }
        mpe_round_f64(r->yd, r->xd, m, g->f, &rne);
        classify(g, r->xd, r->yd, m);
      }
    }
  }
}

/* The blocks of each piece (BLOCK values from its start, the last one shorter),
   SUPER at a time. The table counters are 32 bits: they are folded at least every
   2^31 values. */
static void add_pieces32(mpe_range *r, const float *x, const size_t *len, size_t np)
{
  struct span sp[SUPER];
  long nb = 0;
  int used = 0;
  uint64_t since = 0;
  for (size_t p = 0; p < np; p++) {
    for (size_t i0 = 0; i0 < len[p]; i0 += BLOCK) {
      sp[nb].x = x + i0;
      sp[nb].m = len[p] - i0 < BLOCK ? len[p] - i0 : BLOCK;
      since += sp[nb].m;
      if (++nb == SUPER) {
        add_spans(r, sp, nb, &used);
        nb = 0;
        if (since >= (1ull << 31)) {
          for (int t = 0; t < used; t++)
            tab_fold(r, r->tab[t]);
          used = 0;
          since = 0;
        }
      }
    }
    x += len[p];
  }
  if (nb)
    add_spans(r, sp, nb, &used);
  for (int t = 0; t < used; t++)
    tab_fold(r, r->tab[t]);
}

int mpe_range_add_f32(mpe_range *r, const float *x, size_t n)
{
  MPEI_FENV_GUARD();
  if (!r || (!x && n) || !mpei_count_ok(n, sizeof *x))   /* no array holds more */
    return MPE_EINVAL;
  add_pieces32(r, x, &n, 1);
  return MPE_OK;
}

/* the arguments of an _add_pieces call: x may be NULL only when every piece is empty */
/* the pieces lie one after the other in one array: their total must fit one */
static int pieces_ok(const mpe_range *r, const void *x, const size_t *len, size_t npieces, size_t esize)
{
  if (!r || (npieces && !len))
    return 0;
  size_t total = 0;
  for (size_t p = 0; p < npieces; p++) {
    if ((len[p] && !x) || len[p] > (size_t)PTRDIFF_MAX / esize - total)
      return 0;
    total += len[p];
  }
  return 1;
}

int mpe_range_add_f32_pieces(mpe_range *r, const float *x, const size_t *len, size_t npieces)
{
  MPEI_FENV_GUARD();
  if (!pieces_ok(r, x, len, npieces, sizeof *x))
    return MPE_EINVAL;
  add_pieces32(r, x, len, npieces);
  return MPE_OK;
}

static void fold_block(mpe_range *r, int lo, int hi)
{
  for (int i = lo; i <= hi; i++)
    if (r->loc[i]) {
      r->hist[i] += r->loc[i];
      r->loc[i] = 0;
    }
  if (lo <= hi) {
    note_binade(r, lo + EMIN_ALL);
    note_binade(r, hi + EMIN_ALL);
  }
}

int mpe_range_add_f64(mpe_range *r, const double *x, size_t n)
{
  MPEI_FENV_GUARD();
  if (!r || (!x && n) || !mpei_count_ok(n, sizeof *x))
    return MPE_EINVAL;
  for (size_t s = 0; s < n; s += BLOCK) {
    size_t m = n - s < BLOCK ? n - s : BLOCK;
    const double *xb = x + s;
    int lo = NB, hi = -1;
    double mn = 0, mxp = 0, mxn = 0;
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
        double a = mpei_u2d(b);
        if (xb[i] < 0) { if (a > mxn) mxn = a; }
        else if (a > mxp) mxp = a;
        if (mn == 0 || a < mn) mn = a;
        int j = e - EMIN_ALL;
        r->loc[j]++;
        if (j < lo) lo = j;
        if (j > hi) hi = j;
        r->pow2[j] += frac == 0;
        for (size_t k = 0; k < r->nf; k++)
          if (r->a[k].low)
            r->a[k].low[j] += frac < r->a[k].thr52;
      }
    }
    fold_block(r, lo, hi);
    note_extremes(r, mn, mxp, mxn);
    r->count += m;
    for (size_t k = 0; k < r->nf; k++) {
      struct tgt *g = &r->a[k];
      if (g->t.kind == MPE_TARGET_FX16) {
        fx_feed(r, g, NULL, xb, m);
      } else if (g->t.kind == MPE_TARGET_Q16) {
        classify_q64(g, xb, m);
      } else if (g->fused64) {
        classify_fused64(g, xb, m);
      } else {
        mpe_round_f64(r->yd, xb, m, g->f, &rne);
        classify(g, xb, r->yd, m);
      }
    }
  }
  return MPE_OK;
}

int mpe_range_add_f64_pieces(mpe_range *r, const double *x, const size_t *len, size_t npieces)
{
  MPEI_FENV_GUARD();
  if (!pieces_ok(r, x, len, npieces, sizeof *x))
    return MPE_EINVAL;
  for (size_t p = 0; p < npieces; p++) {
    mpe_range_add_f64(r, x, len[p]);
    x += len[p];
  }
  return MPE_OK;
}

/* ---------------------------------------------------------------- merging */

int mpe_range_merge(mpe_range *dst, const mpe_range *src)
{
  MPEI_FENV_GUARD();
  if (!dst || !src || dst == src || dst->nf != src->nf || dst->margin != src->margin)
    return MPE_EINVAL;
  for (size_t k = 0; k < dst->nf; k++) {
    const mpe_range_target *a = &dst->a[k].t, *b = &src->a[k].t;
    if (a->kind != b->kind || (a->kind == MPE_TARGET_FLOAT && a->format != b->format) ||
        (a->kind == MPE_TARGET_Q16 && a->frac_bits != b->frac_bits))
      return MPE_EINVAL;
  }
  struct acc v[MAXFMT];
  for (size_t k = 0; k < dst->nf; k++)
    if (acc_view(src, k, &v[k]))
      return MPE_ENOMEM;
  dst->count += src->count;
  dst->zeros += src->zeros;
  dst->nan += src->nan;
  dst->inf += src->inf;
  note_extremes(dst, src->min_abs, src->max_pos, src->max_neg);
  if (src->bmin <= src->bmax) {
    note_binade(dst, src->bmin);
    note_binade(dst, src->bmax);
  }
  for (size_t i = 0; i < NB; i++) {
    dst->hist[i] += src->hist[i];
    dst->pow2[i] += src->pow2[i];
  }
  for (size_t k = 0; k < dst->nf; k++) {
    struct acc *d = &dst->a[k].a;
    d->underflow += v[k].underflow;
    d->subnormal += v[k].subnormal;
    d->overflow += v[k].overflow;
    d->err2 += v[k].err2;
    d->x2 += v[k].x2;
    if (v[k].maxrel > d->maxrel)
      d->maxrel = v[k].maxrel;
    for (int i = 0; i < FX_BINS; i++)
      d->rh[i] += v[k].rh[i];
    d->rbelow += v[k].rbelow;
    d->rabove += v[k].rabove;
    if (dst->a[k].low)
      for (size_t i = 0; i < NB; i++)
        dst->a[k].low[i] += src->a[k].low[i];
  }
  return MPE_OK;
}

/* ---------------------------------------------------------------- transport */

/* The accumulated state as bytes, for another process (MPI) to merge in:
   the same machine type at both ends (native byte order and long double). */
#define PACK_MAGIC 0x4d50455250414b31ull   /* "MPERPAK1" */

static size_t pack_size(const mpe_range *r)
{
  size_t n = sizeof(uint64_t) + 5 * sizeof(int) + 4 * sizeof(uint64_t) + 4 * sizeof(double) +
             NB * sizeof(double) + NB * sizeof(uint64_t);
  for (size_t k = 0; k < r->nf; k++)
    n += sizeof(struct acc) + sizeof(int) + (r->a[k].low ? NB * sizeof(uint64_t) : 0);
  return n;
}

#define PUT(p, v) (memcpy((p), &(v), sizeof(v)), (p) += sizeof(v))
#define GET(p, v) (memcpy(&(v), (p), sizeof(v)), (p) += sizeof(v))

int mpe_range_pack(const mpe_range *r, void *buf, size_t cap, size_t *len)
{
  MPEI_FENV_GUARD();
  if (!r || !len || (cap && !buf))
    return MPE_EINVAL;
  *len = pack_size(r);
  if (!buf)
    return MPE_OK;
  if (cap < *len)
    return MPE_ERANGE;
  unsigned char *p = buf;
  uint64_t magic = PACK_MAGIC;
  int nf = (int)r->nf, nb = NB;
  PUT(p, magic);
  PUT(p, nf);
  PUT(p, r->margin);
  PUT(p, nb);
  PUT(p, r->bmin);
  PUT(p, r->bmax);
  PUT(p, r->count);
  PUT(p, r->zeros);
  PUT(p, r->nan);
  PUT(p, r->inf);
  PUT(p, r->max_abs);
  PUT(p, r->min_abs);
  PUT(p, r->max_pos);
  PUT(p, r->max_neg);
  for (size_t i = 0; i < NB; i++) {   /* the packed histogram is binary64 counts */
    double c = (double)r->hist[i];
    PUT(p, c);
  }
  memcpy(p, r->pow2, NB * sizeof(uint64_t));
  p += NB * sizeof(uint64_t);
  for (size_t k = 0; k < r->nf; k++) {
    struct acc v;
    if (acc_view(r, k, &v))
      return MPE_ENOMEM;
    PUT(p, v);
    int has_low = r->a[k].low != NULL;
    PUT(p, has_low);
    if (has_low) {
      memcpy(p, r->a[k].low, NB * sizeof(uint64_t));
      p += NB * sizeof(uint64_t);
    }
  }
  return MPE_OK;
}

int mpe_range_merge_packed(mpe_range *dst, const void *buf, size_t len)
{
  MPEI_FENV_GUARD();
  if (!dst || !buf || len != pack_size(dst))
    return MPE_EINVAL;
  const unsigned char *p = buf;
  uint64_t magic;
  int nf, margin, nb;
  GET(p, magic);
  GET(p, nf);
  GET(p, margin);
  GET(p, nb);
  if (magic != PACK_MAGIC || nf != (int)dst->nf || margin != dst->margin || nb != NB)
    return MPE_EINVAL;
  /* a twin of dst holding the packed state, merged like any other accumulator */
  mpe_range_target t[MAXFMT];
  for (size_t k = 0; k < dst->nf; k++)
    t[k] = dst->a[k].t;
  mpe_range_opts o = { .margin = dst->margin };
  mpe_range *src = mpe_range_alloc_targets(t, dst->nf, &o);
  if (!src)
    return MPE_ENOMEM;
  GET(p, src->bmin);
  GET(p, src->bmax);
  GET(p, src->count);
  GET(p, src->zeros);
  GET(p, src->nan);
  GET(p, src->inf);
  GET(p, src->max_abs);
  GET(p, src->min_abs);
  GET(p, src->max_pos);
  GET(p, src->max_neg);
  int bad = 0;
  for (size_t i = 0; i < NB; i++) {
    double c;
    GET(p, c);
    bad |= !(c >= 0 && c < 0x1p64);   /* NaN too */
    src->hist[i] = bad ? 0 : (uint64_t)c;
  }
  memcpy(src->pow2, p, NB * sizeof(uint64_t));
  p += NB * sizeof(uint64_t);
  int rc = bad ? MPE_EINVAL : MPE_OK;
  for (size_t k = 0; k < dst->nf && !rc; k++) {
    int has_low;
    GET(p, src->a[k].a);
    GET(p, has_low);
    if (has_low != (src->a[k].low != NULL))
      rc = MPE_EINVAL;
    else if (has_low) {
      memcpy(src->a[k].low, p, NB * sizeof(uint64_t));
      p += NB * sizeof(uint64_t);
    }
  }
  if (!rc)
    rc = mpe_range_merge(dst, src);
  mpe_range_free(src);
  return rc;
}

/* ---------------------------------------------------------------- statistics */

int mpe_range_summary_get(const mpe_range *r, mpe_range_summary *s)
{
  MPEI_FENV_GUARD();
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
  return r->hist[e - EMIN_ALL];
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
   up to minnorm, whose last bit is even), a point of binade emin-1-k. Q16: q = 0 iff
   |S*x*2^F| <= 1/2, the same rule with emin-p = -1-F; nothing is subnormal. */
static void underflow_at(const mpe_range *r, const struct tgt *g, long k, uint64_t *u, uint64_t *uf)
{
  int q = g->t.kind == MPE_TARGET_Q16;
  long e0 = (q ? -1L - g->t.frac_bits : (long)g->emin - g->p) - k, e1 = g->emin - 1 - k;
  uint64_t total = below_binade(r, EMAX_ALL + 1), w0;
  if (e0 > EMAX_ALL) w0 = total;
  else if (e0 < EMIN_ALL) w0 = 0;
  else w0 = below_binade(r, (int)e0) + r->pow2[e0 - EMIN_ALL];
  if (u)
    *u = w0;
  if (uf) {
    if (q) *uf = w0;
    else if (e1 > EMAX_ALL) *uf = total;
    else if (e1 < EMIN_ALL) *uf = 0;
    else *uf = below_binade(r, (int)e1) + g->low[e1 - EMIN_ALL];
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
  MPEI_FENV_GUARD();
  if (!r || !s || k >= r->nf)
    return MPE_EINVAL;
  const struct tgt *g = &r->a[k];
  struct acc a;
  int rc = acc_view(r, k, &a);
  if (rc)
    return rc;
  memset(s, 0, sizeof *s);
  s->underflow = a.underflow;
  s->subnormal = a.subnormal;
  s->overflow = a.overflow;
  s->underflow_flush = a.underflow + a.subnormal;   /* flushing is after rounding */
  s->rel_error = a.x2 > 0 ? (double)sqrtl(a.err2 / a.x2) : 0.0;
  s->max_rel_error = a.maxrel;
  if (g->t.kind == MPE_TARGET_FX16) {
    s->underflow_at_scale = s->underflow_at_scale_flush = a.underflow;   /* no scale applies */
  } else if (r->max_abs > 0) {
    s->has_scale = 1;
    s->scale_log2 = best_scale(r->max_abs, g->maxf, r->margin);
    if (s->scale_log2 > MPE_RANGE_SCALE_MAX_LOG2) {   /* no binary32 loss scale is larger */
      s->scale_log2 = MPE_RANGE_SCALE_MAX_LOG2;
      s->scale_capped = 1;
    } else if (s->scale_log2 < MPE_RANGE_SCALE_MIN_LOG2) {   /* nor smaller: 2^-150 is 0 */
      s->scale_log2 = MPE_RANGE_SCALE_MIN_LOG2;
      s->scale_capped = 1;
    }
    underflow_at(r, g, s->scale_log2, &s->underflow_at_scale, &s->underflow_at_scale_flush);
  }
  return MPE_OK;
}

/* does 2^e * v (v > 0) overflow target g? */
static int overflows_at(const struct tgt *g, double v, int e, int neg)
{
  int em;
  frexp(v, &em);
  if ((long)em + e > 1024)
    return 1;
  if ((long)em + e <= -1020)
    return 0;
  double sv = ldexp(v, e);         /* exact: inside binary64's normal range */
  if (g->t.kind == MPE_TARGET_Q16) {
    double q = q_round(sv, g->t.frac_bits);
    return neg ? q > 32768.0 : q > 32767.0;
  }
  return overflows(g, sv, mpe_round_scalar(sv, g->f, &rne));
}

int mpe_range_at_scale(const mpe_range *r, size_t k, int e, uint64_t *underflow, uint64_t *underflow_flush,
                       int *overflows)
{
  MPEI_FENV_GUARD();
  if (!r || k >= r->nf)
    return MPE_EINVAL;
  const struct tgt *g = &r->a[k];
  if (g->t.kind == MPE_TARGET_FX16)
    return MPE_EUNSUP;
  underflow_at(r, g, e, underflow, underflow_flush);
  if (overflows)
    *overflows = (r->max_pos > 0 && overflows_at(g, r->max_pos, e, 0)) ||
                 (r->max_neg > 0 && overflows_at(g, r->max_neg, e, 1));
  return MPE_OK;
}

int mpe_range_histogram(const mpe_range *r, int k, int *first, uint64_t *counts, size_t cap,
                        size_t *n, uint64_t *below, uint64_t *above)
{
  MPEI_FENV_GUARD();
  if (!r || !first || !n || (k >= 0 && (size_t)k >= r->nf) || (cap && !counts))
    return MPE_EINVAL;
  int lo, hi;
  uint64_t bl = 0, ab = 0;
  if (k >= 0 && r->a[k].t.kind == MPE_TARGET_FX16) {
    struct acc a;
    int rc = acc_view(r, (size_t)k, &a);
    if (rc)
      return rc;
    *first = 1 - FX_BINS;
    *n = FX_BINS;
    if (cap < FX_BINS)
      return MPE_ERANGE;
    memcpy(counts, a.rh, sizeof a.rh);
    if (below) *below = a.rbelow;
    if (above) *above = a.rabove;
    return MPE_OK;
  }
  if (k < 0) {
    lo = r->bmin;
    hi = r->bmax;
  } else {
    const struct tgt *g = &r->a[k];
    if (g->t.kind == MPE_TARGET_Q16) {
      lo = -g->t.frac_bits;
      hi = 14 - g->t.frac_bits;
    } else {
      lo = g->emin - g->p + 1;
      hi = g->emax;
    }
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

/* ---------------------------------------------------------------- constructors
   that tell a bad argument (MPE_EINVAL) from no memory (MPE_ENOMEM): every
   argument mpe_range_alloc_targets refuses is checked here first, so its NULL
   afterwards can only mean that an allocation failed. */
int mpe_range_create_targets(mpe_range **out, const mpe_range_target *targets, size_t ntargets,
                             const mpe_range_opts *o)
{
  MPEI_FENV_GUARD();
  if (!out)
    return MPE_EINVAL;
  *out = NULL;
  if (!targets || ntargets == 0 || ntargets > MAXFMT || (o && (o->margin < 0 || o->margin > 4096)))
    return MPE_EINVAL;
  for (size_t k = 0; k < ntargets; k++)
    if (!target_ok(&targets[k]))
      return MPE_EINVAL;
  *out = mpe_range_alloc_targets(targets, ntargets, o);
  return *out ? MPE_OK : MPE_ENOMEM;
}

int mpe_range_create(mpe_range **out, const mpe_format *const *formats, size_t nformats, const mpe_range_opts *o)
{
  MPEI_FENV_GUARD();
  if (!out)
    return MPE_EINVAL;
  *out = NULL;
  if (!formats || nformats == 0 || nformats > MAXFMT)
    return MPE_EINVAL;
  mpe_range_target t[MAXFMT];
  memset(t, 0, sizeof t);
  for (size_t k = 0; k < nformats; k++) {
    t[k].kind = MPE_TARGET_FLOAT;
    t[k].format = formats[k];
  }
  return mpe_range_create_targets(out, t, nformats, o);
}
