/* mpanalyze range: the gradient-range report. Every file is opened and
   analysed completely before anything is printed, so bad input never leaves
   half a report behind. */
#include <config.h>
#include <errno.h>
#include <stdio.h>
#include <unistd.h>
#include <float.h>
#include <getopt.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "mpanalyze.h"

#define MAXF 16
#define FX_DEFAULT_MAX 65536   /* the default fx16 block: the contiguous dimension, at most this */

/* a target of the report: a float format, a Q format or QUDA's fx16 */
struct target {
  mpe_range_target t;
  char name[24];
  int fixed_block;             /* fx16: --fx-block given */
};

/* "fp16,q8,q16.12,fx16,int8" -> targets (int8 sets *i8 instead: it is not a
   range accumulator's target); prints the error itself */
static int parse_targets(const char *list, struct target *out, size_t *n, long fxblock, int *i8)
{
  char buf[256];
  if (strlen(list) >= sizeof buf)
    return mpa_error(NULL, "--format list too long"), -1;
  strcpy(buf, list);
  *n = 0;
  for (char *save, *tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
    if (*n == MAXF)
      return mpa_error(NULL, "too many formats (at most %d)", MAXF), -1;
    if (!strcmp(tok, "int8")) {
      if (*i8)
        return mpa_error(NULL, "format '%s' given twice", tok), -1;
      *i8 = 1;
      continue;
    }
    struct target *t = &out[*n];
    memset(t, 0, sizeof *t);
    const mpe_format *f = mpe_format_lookup(tok);
    long fb;
    if (f && !mpe_format_is_signed(f))
      return mpa_error(NULL, "--format %s: a scale format (no sign, no zero), not a rounding target", tok), -1;
    if (f) {
      t->t.kind = MPE_TARGET_FLOAT;
      t->t.format = f;
      snprintf(t->name, sizeof t->name, "%s", mpe_format_name(f));
    } else if (!strcmp(tok, "fx16")) {
      t->t.kind = MPE_TARGET_FX16;
      t->t.block = fxblock > 0 ? (size_t)fxblock : 1;
      t->fixed_block = fxblock > 0;
      snprintf(t->name, sizeof t->name, "fx16");
    } else if (tok[0] == 'q' && (!mpa_parse_int(tok + 1, -512, 512, &fb) ||
                                 (!strncmp(tok, "q16.", 4) && !mpa_parse_int(tok + 4, -512, 512, &fb)))) {
      t->t.kind = MPE_TARGET_Q16;
      t->t.frac_bits = (int)fb;
      snprintf(t->name, sizeof t->name, "q16.%ld", fb);
    } else {
      return mpa_error(NULL, "unknown format '%s' (fp16, bf16, tf32, e4m3, e5m2, e2m3, e3m2, e2m1, fp32, fp64, q<F>, q16.<F>, fx16, int8)",
                       tok), -1;
    }
    for (size_t j = 0; j < *n; j++)
      if (!strcmp(out[j].name, t->name))
        return mpa_error(NULL, "format '%s' given twice", tok), -1;
    (*n)++;
  }
  if (*n == 0 && !*i8)
    return mpa_error(NULL, "--format needs at least one format"), -1;
  if (*n == 0) {   /* int8 alone: the range report still needs one target; fp32 changes nothing */
    out[0].t.kind = MPE_TARGET_FLOAT;
    out[0].t.format = mpe_format_of(MPE_FP32);
    snprintf(out[0].name, sizeof out[0].name, "fp32");
    *n = 1;
  }
  return 0;
}

/* fx16 blocks for tensor ti: --fx-block, else its contiguous dimension (at most FX_DEFAULT_MAX) */
static void set_blocks(struct target *tg, size_t nf, const mpe_io_tensor *ti)
{
  uint64_t d = ti->ndim == 0 ? 1 : ti->fortran_order ? ti->shape[0] : ti->shape[ti->ndim - 1];
  if (d == 0) d = 1;
  if (d > FX_DEFAULT_MAX) d = FX_DEFAULT_MAX;
  for (size_t k = 0; k < nf; k++)
    if (tg[k].t.kind == MPE_TARGET_FX16 && !tg[k].fixed_block)
      tg[k].t.block = (size_t)d;
}

static mpe_range *alloc_for(const struct target *tg, size_t nf, const mpe_range_opts *ro)
{
  mpe_range_target t[MAXF];
  for (size_t k = 0; k < nf; k++)
    t[k] = tg[k].t;
  mpe_range *r;   /* the targets were checked when parsed: NULL means no memory */
  mpe_range_create_targets(&r, t, nf, ro);
  return r;
}

struct fhist { int first; uint64_t *c; size_t n; uint64_t below, above; };

/* --format int8: per-tensor symmetric INT8 (mpe_quant(3)): scale = max|x|/127
   over the finite values, q = rne(x / scale), decoded as q * scale. */
struct i8res {
  int has;
  float scale;
  uint64_t to_zero;           /* non-zero finite x with q = 0 */
  uint64_t clipped;           /* ±inf (clipped to ±127) and binary64 values beyond binary32 */
  uint64_t nan;               /* NaN: no code */
  uint64_t exact;             /* x with q * scale == x */
  double rel_error, max_rel_error;   /* as the float formats: ||q*s - x|| / ||x||, finite x */
};

/* The second pass over tensor i: quantise with the scale of its largest finite |x|. */
static int int8_pass(mpe_io *f, size_t i, const char *path, double max_abs, struct i8res *o)
{
  enum { NV = 1 << 14 };
  static double buf[NV];
  static float xf[NV], yf[NV];
  static int8_t q[NV];
  memset(o, 0, sizeof *o);
  o->has = 1;
  float m = max_abs > FLT_MAX ? FLT_MAX : (float)max_abs;   /* binary64 data may go beyond binary32 */
  int32_t z;
  if (mpe_quant_params(&o->scale, &z, &m, 1, 1, MPE_QUANT_TENSOR, MPE_INT8, 1))
    return mpa_error(path, "int8: no scale for max|x| %g", max_abs);
  mpe_io_tensor t;
  mpe_io_info(f, i, &t);
  if (mpe_io_select(f, i))
    return mpa_error(path, "%s", mpe_io_message(f));
  double num = 0, den = 0;
  for (;;) {
    size_t n;
    if (mpe_io_read(f, buf, NV, &n))
      return mpa_error(path, "%s", mpe_io_message(f));
    if (n == 0)
      break;
    size_t nf = 0;
    for (size_t k = 0; k < n; k++) {
      double v = t.value_type == MPE_FP64 ? buf[k] : (double)((float *)buf)[k];
      if (isnan(v))
        o->nan++;
      else if (isinf(v) || fabs(v) > FLT_MAX)
        o->clipped++;
      else
        xf[nf++] = (float)v;
    }
    if (mpe_quant_encode(q, xf, nf, 1, MPE_QUANT_TENSOR, MPE_INT8, &o->scale, &z, NULL) ||
        mpe_quant_decode(yf, q, nf, 1, MPE_QUANT_TENSOR, MPE_INT8, &o->scale, &z))
      return mpa_error(path, "int8: quantisation failed");
    for (size_t k = 0; k < nf; k++) {
      double x = xf[k], d = (double)yf[k] - x;
      o->to_zero += x != 0 && q[k] == 0;
      o->exact += d == 0;
      num += d * d;
      den += x * x;
      if (x != 0 && fabs(d / x) > o->max_rel_error)
        o->max_rel_error = fabs(d / x);
    }
  }
  o->rel_error = den > 0 ? sqrt(num / den) : 0;
  return 0;
}

struct tres {
  const char *file;
  size_t step;                /* which input file */
  size_t fxblock;             /* the fx16 block used (0: several) */
  char *name;
  mpe_type dtype;
  int ndim;
  uint64_t *shape;            /* ndim of them, after the name in one block */
  mpe_range_summary sum;
  struct fhist h;             /* over the data's binades */
  /* per format, nf of each in one block (a tensor costs about 250 bytes
     plus its histograms: 200,000 small tensors stay far below 100 MB) */
  mpe_range_stats *st;
  struct fhist *fh;           /* over each format's binades */
  int shared;                 /* the histograms belong to another tres */
  struct i8res i8;            /* --format int8 (has = 0 otherwise) */
};

static int get_hist(const mpe_range *r, int k, struct fhist *h)
{
  size_t n;
  mpe_range_histogram(r, k, &h->first, NULL, 0, &n, NULL, NULL);
  h->c = NULL;
  if (n == 0)   /* an empty tensor: nothing to keep */
    return mpe_range_histogram(r, k, &h->first, NULL, 0, &h->n, &h->below, &h->above);
  h->c = calloc(n, sizeof *h->c);
  if (!h->c)
    return -1;
  return mpe_range_histogram(r, k, &h->first, h->c, n, &h->n, &h->below, &h->above);
}

static int extract(const mpe_range *r, size_t nf, struct tres *t)
{
  void *blk = calloc(nf, sizeof *t->st + sizeof *t->fh);
  if (!blk)
    return -1;
  t->st = blk;
  t->fh = (struct fhist *)(t->st + nf);
  mpe_range_summary_get(r, &t->sum);
  if (get_hist(r, -1, &t->h))
    return -1;
  for (size_t k = 0; k < nf; k++) {
    mpe_range_stats_get(r, k, &t->st[k]);
    if (get_hist(r, (int)k, &t->fh[k]))
      return -1;
  }
  return 0;
}

static void free_tres(struct tres *t, size_t nf)
{
  if (t->shape)
    free(t->shape);   /* the name lives in the same block */
  else
    free(t->name);
  for (size_t k = 0; !t->shared && t->fh && k < nf; k++)
    free(t->fh[k].c);
  if (!t->shared)
    free(t->h.c);
  free(t->st);
}

/* the results of an empty tensor into dst (name, file, shape kept): the
   stats copied, the histograms (all zero) shared with src, which outlives dst */
static int share_results(struct tres *dst, const struct tres *src, size_t nf)
{
  void *blk = calloc(nf, sizeof *dst->st + sizeof *dst->fh);
  if (!blk)
    return -1;
  dst->st = blk;
  dst->fh = (struct fhist *)(dst->st + nf);
  dst->sum = src->sum;
  dst->h = src->h;
  memcpy(dst->st, src->st, nf * sizeof *dst->st);
  memcpy(dst->fh, src->fh, nf * sizeof *dst->fh);
  dst->shared = 1;
  return 0;
}

/* a copy of the results of the empty tensor src that owns its histograms: an
   empty tensor's histograms may hold zero bins (a format's binades), and src is
   freed while the copy is shared with the empty tensors after it */
static int copy_results(struct tres *dst, const struct tres *src, size_t nf)
{
  if (share_results(dst, src, nf))
    return -1;
  dst->shared = 0;
  dst->h.c = NULL;
  for (size_t k = 0; k < nf; k++)
    dst->fh[k].c = NULL;
  int bad = 0;
  if (src->h.n && !(dst->h.c = malloc(src->h.n * sizeof *dst->h.c)))
    bad = 1;
  else if (src->h.n)
    memcpy(dst->h.c, src->h.c, src->h.n * sizeof *dst->h.c);
  for (size_t k = 0; k < nf && !bad; k++) {
    if (!src->fh[k].n)
      continue;
    if (!(dst->fh[k].c = malloc(src->fh[k].n * sizeof *dst->fh[k].c)))
      bad = 1;
    else
      memcpy(dst->fh[k].c, src->fh[k].c, src->fh[k].n * sizeof *dst->fh[k].c);
  }
  return bad ? -1 : 0;   /* on failure dst is whole enough for free_tres */
}

static int same_blocks(const struct target *tg, size_t nf, const size_t *blocks)
{
  for (size_t k = 0; k < nf; k++)
    if (tg[k].t.block != blocks[k])
      return 0;
  return 1;
}

/* ---------------------------------------------------------------- JSON */

static json_t *hist_json(const struct fhist *h, int with_tails)
{
  json_t *c = json_array();
  for (size_t i = 0; i < h->n; i++)
    json_array_append_new(c, json_integer((json_int_t)h->c[i]));
  json_t *o = json_object();
  json_object_set_new(o, "first_binade", json_integer(h->first));
  json_object_set_new(o, "counts", c);
  if (with_tails) {
    json_object_set_new(o, "below", json_integer((json_int_t)h->below));
    json_object_set_new(o, "above", json_integer((json_int_t)h->above));
  }
  return o;
}

static json_t *tensor_json(const struct tres *t, const struct target *tg, size_t nf, int margin)
{
  json_t *o = json_object();
  if (t->file) {
    json_object_set_new(o, "file", json_string(t->file));
    json_object_set_new(o, "name", json_string(t->name));
    json_object_set_new(o, "dtype", json_string(mpe_type_name(t->dtype)));
    json_t *sh = json_array();
    for (int d = 0; d < t->ndim; d++)
      json_array_append_new(sh, json_integer((json_int_t)t->shape[d]));
    json_object_set_new(o, "shape", sh);
  } else {
    json_object_set_new(o, "name", json_string(t->name));
  }
  json_object_set_new(o, "count", json_integer((json_int_t)t->sum.count));
  json_object_set_new(o, "zeros", json_integer((json_int_t)t->sum.zeros));
  json_object_set_new(o, "nonfinite", json_integer((json_int_t)(t->sum.nan + t->sum.inf)));
  json_object_set_new(o, "nan", json_integer((json_int_t)t->sum.nan));
  json_object_set_new(o, "inf", json_integer((json_int_t)t->sum.inf));
  json_object_set_new(o, "max_abs", json_real(t->sum.max_abs));
  json_object_set_new(o, "min_abs_nonzero", json_real(t->sum.min_abs_nonzero));
  json_object_set_new(o, "histogram", hist_json(&t->h, 0));
  json_t *fo = json_object();
  for (size_t k = 0; k < nf; k++) {
    const mpe_range_stats *s = &t->st[k];
    json_t *x = json_object();
    const struct target *g = &tg[k];
    static const char *kinds[] = { "float", "q16", "fx16" };
    json_object_set_new(x, "kind", json_string(kinds[g->t.kind]));
    if (g->t.kind == MPE_TARGET_Q16)
      json_object_set_new(x, "frac_bits", json_integer(g->t.frac_bits));
    if (g->t.kind == MPE_TARGET_FX16)
      json_object_set_new(x, "block", t->fxblock ? json_integer((json_int_t)t->fxblock) : json_null());
    json_object_set_new(x, "underflow", json_integer((json_int_t)s->underflow));
    json_object_set_new(x, "underflow_flush", json_integer((json_int_t)s->underflow_flush));
    json_object_set_new(x, "subnormal", json_integer((json_int_t)s->subnormal));
    json_object_set_new(x, "overflow", json_integer((json_int_t)s->overflow));
    json_object_set_new(x, "rel_error", json_real(s->rel_error));
    json_object_set_new(x, "max_rel_error", json_real(s->max_rel_error));
    json_object_set_new(x, "margin", json_integer(margin));
    if (s->has_scale) {
      json_object_set_new(x, "recommended_scale", mpa_json_num(ldexp(1.0, s->scale_log2)));
      json_object_set_new(x, "recommended_scale_log2", json_integer(s->scale_log2));
      json_object_set_new(x, "recommended_scale_capped", json_boolean(s->scale_capped));
      json_object_set_new(x, "underflow_at_scale", json_integer((json_int_t)s->underflow_at_scale));
      json_object_set_new(x, "underflow_at_scale_flush", json_integer((json_int_t)s->underflow_at_scale_flush));
    } else {
      json_object_set_new(x, "recommended_scale", json_null());
      json_object_set_new(x, "recommended_scale_log2", json_null());
      json_object_set_new(x, "recommended_scale_capped", json_false());
      json_object_set_new(x, "underflow_at_scale", json_integer((json_int_t)s->underflow_at_scale));
      json_object_set_new(x, "underflow_at_scale_flush", json_integer((json_int_t)s->underflow_at_scale_flush));
    }
    if (g->t.kind == MPE_TARGET_FLOAT) {
      json_object_set_new(x, "max_finite", json_real(mpe_format_max(g->t.format)));
      json_object_set_new(x, "min_normal", json_real(mpe_format_min_normal(g->t.format)));
      json_object_set_new(x, "min_subnormal", json_real(mpe_format_min_subnormal(g->t.format)));
    } else if (g->t.kind == MPE_TARGET_Q16) {   /* no subnormal range: both limits are the step 2^-F */
      json_object_set_new(x, "max_finite", json_real(ldexp(32767.0, -g->t.frac_bits)));
      json_object_set_new(x, "min_normal", json_real(ldexp(1.0, -g->t.frac_bits)));
      json_object_set_new(x, "min_subnormal", json_real(ldexp(1.0, -g->t.frac_bits)));
    } else {                                     /* relative to each block's max */
      json_object_set_new(x, "max_finite", json_null());
      json_object_set_new(x, "min_normal", json_null());
      json_object_set_new(x, "min_subnormal", json_null());
    }
    json_object_set_new(x, "histogram", hist_json(&t->fh[k], 1));
    json_object_set_new(fo, g->name, x);
  }
  if (t->i8.has) {
    const struct i8res *q = &t->i8;
    json_t *x = json_object();
    json_object_set_new(x, "kind", json_string("int8"));
    json_object_set_new(x, "scale", json_real(q->scale));
    json_object_set_new(x, "zero_point", json_integer(0));
    json_object_set_new(x, "round_to_zero", json_integer((json_int_t)q->to_zero));
    json_object_set_new(x, "clipped", json_integer((json_int_t)q->clipped));
    json_object_set_new(x, "nan", json_integer((json_int_t)q->nan));
    json_object_set_new(x, "exact", json_integer((json_int_t)q->exact));
    json_object_set_new(x, "rel_error", json_real(q->rel_error));
    json_object_set_new(x, "max_rel_error", json_real(q->max_rel_error));
    json_object_set_new(fo, "int8", x);
  }
  json_object_set_new(o, "formats", fo);
  return o;
}

/* ---------------------------------------------------------------- text */

static void shape_text(const struct tres *t, char *s, size_t n)
{
  size_t o = (size_t)snprintf(s, n, "(");
  for (int d = 0; d < t->ndim && o < n; d++)
    o += (size_t)snprintf(s + o, n - o, d ? ", %llu" : "%llu", (unsigned long long)t->shape[d]);
  if (o < n)
    snprintf(s + o, n - o, ")");
}

static const char *pct(uint64_t a, uint64_t n, char *buf, size_t len)
{
  if (a == 0)
    snprintf(buf, len, "0");
  else
    snprintf(buf, len, "%llu (%.3g%%)", (unsigned long long)a, 100.0 * (double)a / (double)n);
  return buf;
}

static void print_tensor(FILE *out, const struct tres *t, const struct target *tg, size_t nf)
{
  char b1[48], b2[48], b3[48], b4[48], b5[48];
  if (t->file) {
    char sh[160];
    shape_text(t, sh, sizeof sh);
    char ef[512], en[512];   /* names come from files: no terminal escapes */
    fprintf(out, "%s: %s  %s %s  %llu values\n", mpa_esc(ef, sizeof ef, t->file), mpa_esc(en, sizeof en, t->name),
           mpe_type_name(t->dtype), sh, (unsigned long long)t->sum.count);
  } else {
    fprintf(out, "%s  %llu values\n", t->name, (unsigned long long)t->sum.count);
  }
  fprintf(out, "  zeros %s  nan %llu  inf %llu", pct(t->sum.zeros, t->sum.count, b1, sizeof b1),
         (unsigned long long)t->sum.nan, (unsigned long long)t->sum.inf);
  if (t->sum.max_abs > 0)
    fprintf(out, "  max|x| %.4g (2^%d)  min|x|>0 %.4g (2^%d)", t->sum.max_abs, ilogb(t->sum.max_abs),
           t->sum.min_abs_nonzero, ilogb(t->sum.min_abs_nonzero));
  fprintf(out, "\n  %-6s %-18s %-18s %-16s %-9s %-7s %-18s %s\n", "format", "underflow", "subnormal", "overflow",
         "rel.err", "scale", "underflow@scale", "(flushed)");
  for (size_t k = 0; k < nf; k++) {
    const mpe_range_stats *s = &t->st[k];
    char sc[16];
    if (s->has_scale)
      snprintf(sc, sizeof sc, "2^%d%s", s->scale_log2, s->scale_capped ? "*" : "");
    else
      snprintf(sc, sizeof sc, "-");
    fprintf(out, "  %-6s %-18s %-18s %-16s %-9.3g %-7s %-18s %s\n", tg[k].name,
           pct(s->underflow, t->sum.count, b1, sizeof b1), pct(s->subnormal, t->sum.count, b2, sizeof b2),
           pct(s->overflow, t->sum.count, b3, sizeof b3), s->rel_error, sc,
           pct(s->underflow_at_scale, t->sum.count, b4, sizeof b4),
           pct(s->underflow_at_scale_flush, t->sum.count, b5, sizeof b5));
  }
  if (t->i8.has) {
    const struct i8res *q = &t->i8;
    fprintf(out, "  int8   scale %.6g (max|x|/127, symmetric, per tensor)  rounds to 0 %s  clipped %s  nan %llu"
           "  rel.err %.3g  max rel.err %.3g\n", q->scale, pct(q->to_zero, t->sum.count, b1, sizeof b1),
           pct(q->clipped, t->sum.count, b2, sizeof b2), (unsigned long long)q->nan, q->rel_error,
           q->max_rel_error);
  }
}

/* the limits of a target, as binades: min subnormal, min normal, max finite, and the
   binade at or below which values round to 0 (has = 0: none, fx16) */
struct limits { int has, minsub, minnorm, max, zero; };

static struct limits limits_of(const struct target *g)
{
  struct limits l = { 0, 0, 0, 0, 0 };
  if (g->t.kind == MPE_TARGET_FLOAT) {
    const mpe_format *f = g->t.format;
    int emin = mpe_format_emin(f), p = mpe_format_precision(f);
    l = (struct limits){ 1, emin - p + 1, emin, mpe_format_emax(f), emin - p };
  } else if (g->t.kind == MPE_TARGET_Q16) {
    int F = g->t.frac_bits;
    l = (struct limits){ 1, -F, -F, 14 - F, -F - 1 };
  }
  return l;
}

static void print_hist(FILE *out, const struct tres *t, const struct target *tg, size_t nf)
{
  if (t->h.n == 0)
    return;
  uint64_t mx = 0;
  for (size_t i = 0; i < t->h.n; i++)
    if (t->h.c[i] > mx)
      mx = t->h.c[i];
  struct limits l = limits_of(&tg[0]);
  if (l.has)
    fprintf(out, "  binades of |x| (marks: %s limits)\n", tg[0].name);
  else
    fprintf(out, "  binades of |x|\n");
  (void)nf;
  for (size_t i = 0; i < t->h.n; i++) {
    int e = t->h.first + (int)i;
    int w = mx ? (int)((50 * t->h.c[i] + mx - 1) / mx) : 0;
    char bar[51];
    memset(bar, '#', (size_t)w);
    bar[w] = 0;
    const char *mark = "";
    char zmark[48];
    if (l.has) {
      snprintf(zmark, sizeof zmark, "  <- |x| <= 2^%d rounds to 0", e);
      mark = e == l.max ? "  <- max finite binade" : e == l.minnorm && l.minsub != l.minnorm ? "  <- min normal" :
             e == l.minsub ? (l.minsub == l.minnorm ? "  <- smallest non-zero" : "  <- min subnormal") :
             e == l.zero ? zmark : "";
      if (e > l.max)
        mark = tg[0].t.kind == MPE_TARGET_Q16 ? "  saturates" : "  overflows";
    }
    fprintf(out, "  2^%-5d %10llu %-50s%s\n", e, (unsigned long long)t->h.c[i], bar, mark);
  }
}

/* ---------------------------------------------------------------- command */

/* a recommended scale held at 2^127: say so, with the scale the values would take */
static void print_capped(const struct tres *all, const struct target *tg, size_t nf, int margin)
{
  for (size_t k = 0; k < nf; k++) {
    const mpe_range_stats *s = &all->st[k];
    if (!s->has_scale || !s->scale_capped)
      continue;
    printf("note: %s: the recommended scale is capped at 2^%d, binary32's largest power of two (a loss scale is a "
           "binary32 number)", tg[k].name, MPE_RANGE_SCALE_MAX_LOG2);
    if (tg[k].t.kind == MPE_TARGET_FLOAT && all->sum.max_abs > 0) {
      int ea, et;
      double ma = frexp(all->sum.max_abs, &ea), mt = frexp(mpe_format_max(tg[k].t.format), &et);
      printf("; max|x| = %.4g would take 2^%d", all->sum.max_abs, et - margin - ea - (ma > mt));
    }
    printf("\n");
  }
}

/* ---------------------------------------------------------------- many tensors */

/* With many tensors (one file of thousands, or --per-layer), each tensor's own
   report is written out as soon as it is known, to a scratch file that is
   unlinked at once (in $TMPDIR), and copied to standard output when every input
   has been read: memory stays flat in the number of tensors (200,000 one-value
   tensors held 3.6 KB of histograms each, 730 MB), and an input that fails late
   still leaves standard output empty. The first tensor stays in memory (res[0]):
   alone, it is reported with its histogram and plotted. */
struct spill {
  FILE *fp;
  size_t n;             /* tensors written to it */
};

static const char *tmpdir(void)
{
  const char *d = getenv("TMPDIR");
  return d && *d ? d : "/tmp";
}

/* one tensor's report: text (with its histogram when hist) or a JSON array element */
static int tensor_write(FILE *out, const struct tres *t, const struct target *tg, size_t nf, int json, int margin,
                        int first, int hist)
{
  if (json) {
    json_t *o = tensor_json(t, tg, nf, margin);
    fputs(first ? "\n    " : ",\n    ", out);
    int bad = !o || json_dumpf(o, out, JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(17) | JSON_COMPACT);
    json_decref(o);
    return bad ? -1 : 0;
  }
  print_tensor(out, t, tg, nf);
  if (hist)
    print_hist(out, t, tg, nf);
  fputc('\n', out);
  return 0;
}

/* a JSON dump or tensor report that failed: a write error on `out` (exit 2,
   naming `where`), else out of memory. MPA_EXIT_* */
static int write_failed(FILE *out, const char *where)
{
  if (ferror(out))   /* standard output: mpa_close_stdout says it, once */
    return out == stdout ? MPA_EXIT_INPUT : mpa_error(where, "write failed: %s", strerror(errno ? errno : EIO));
  return mpa_error(NULL, "out of memory"), MPA_EXIT_FAIL;
}

/* a tensor after the first into the scratch file. MPA_EXIT_* */
static int spill_put(struct spill *sp, const struct tres *t, const struct target *tg, size_t nf, int json, int margin)
{
  if (!sp->fp) {
    char path[4096];
    snprintf(path, sizeof path, "%s/mpanalyze.XXXXXX", tmpdir());
    int fd = mkstemp(path);
    if (fd >= 0) {
      unlink(path);
      if (!(sp->fp = fdopen(fd, "w+b")))
        close(fd);
    }
    if (!sp->fp)
      return mpa_error(tmpdir(), "cannot make a scratch file for the report (set TMPDIR to a writable folder): %s",
                       strerror(errno));
  }
  if (tensor_write(sp->fp, t, tg, nf, json, margin, 0, 0))
    return ferror(sp->fp) ? mpa_error(tmpdir(), "cannot write the report's scratch file: %s", strerror(errno ? errno : EIO))
                          : (mpa_error(NULL, "out of memory"), MPA_EXIT_FAIL);
  if (ferror(sp->fp))
    return mpa_error(tmpdir(), "cannot write the report's scratch file: %s", strerror(errno));
  sp->n++;
  return MPA_EXIT_OK;
}

/* the scratch file to standard output. MPA_EXIT_* */
static int spill_copy(struct spill *sp)
{
  if (!sp->fp)
    return MPA_EXIT_OK;
  char b[1 << 16];
  size_t got;
  if (fflush(sp->fp) || ferror(sp->fp) || fseek(sp->fp, 0, SEEK_SET))
    return mpa_error(tmpdir(), "cannot write the report's scratch file: %s", strerror(errno));
  while ((got = fread(b, 1, sizeof b, sp->fp)) > 0)
    if (fwrite(b, 1, got, stdout) != got)
      return MPA_EXIT_INPUT;   /* mpa_close_stdout says it */
  if (ferror(sp->fp))
    return mpa_error(tmpdir(), "cannot read back the report's scratch file: %s", strerror(errno));
  return MPA_EXIT_OK;
}

/* ---------------------------------------------------------------- whole runs */

/* one input file (a step, or a shard): sums over its tensors */
struct step {
  const char *file;
  size_t tensors;
  uint64_t count, zeros, nan, inf;
  double max_abs;
  struct { uint64_t u, s, o; int has, k, capped; } f[MAXF];
};

static void step_add(struct step *st, const struct tres *t, size_t nf)
{
  st->tensors++;
  st->count += t->sum.count;
  st->zeros += t->sum.zeros;
  st->nan += t->sum.nan;
  st->inf += t->sum.inf;
  if (t->sum.max_abs > st->max_abs)
    st->max_abs = t->sum.max_abs;
  for (size_t k = 0; k < nf; k++) {
    const mpe_range_stats *s = &t->st[k];
    st->f[k].u += s->underflow;
    st->f[k].s += s->subnormal;
    st->f[k].o += s->overflow;
    if (s->has_scale) {   /* the step's scale is the smallest of its tensors' (it is set by max|x|) */
      if (!st->f[k].has || s->scale_log2 < st->f[k].k)
        st->f[k].k = s->scale_log2;
      st->f[k].capped = st->f[k].has ? st->f[k].capped && s->scale_capped : s->scale_capped;
      st->f[k].has = 1;
    }
  }
}

static double share(uint64_t a, uint64_t n)
{
  return n ? (double)a / (double)n : 0.0;
}

static json_t *step_json(const struct step *st, size_t i, const struct target *tg, size_t nf)
{
  json_t *o = json_object();
  json_object_set_new(o, "step", json_integer((json_int_t)i));
  json_object_set_new(o, "file", json_string(st->file));
  json_object_set_new(o, "tensors", json_integer((json_int_t)st->tensors));
  json_object_set_new(o, "count", json_integer((json_int_t)st->count));
  json_object_set_new(o, "zeros", json_integer((json_int_t)st->zeros));
  json_object_set_new(o, "nan", json_integer((json_int_t)st->nan));
  json_object_set_new(o, "inf", json_integer((json_int_t)st->inf));
  json_object_set_new(o, "max_abs", json_real(st->max_abs));
  json_t *fo = json_object();
  for (size_t k = 0; k < nf; k++) {
    json_t *x = json_object();
    json_object_set_new(x, "underflow", json_integer((json_int_t)st->f[k].u));
    json_object_set_new(x, "subnormal", json_integer((json_int_t)st->f[k].s));
    json_object_set_new(x, "overflow", json_integer((json_int_t)st->f[k].o));
    json_object_set_new(x, "underflow_share", json_real(share(st->f[k].u, st->count)));
    json_object_set_new(x, "subnormal_share", json_real(share(st->f[k].s, st->count)));
    json_object_set_new(x, "overflow_share", json_real(share(st->f[k].o, st->count)));
    json_object_set_new(x, "recommended_scale_log2", st->f[k].has ? json_integer(st->f[k].k) : json_null());
    json_object_set_new(x, "recommended_scale_capped", json_boolean(st->f[k].has && st->f[k].capped));
    json_object_set_new(fo, tg[k].name, x);
  }
  json_object_set_new(o, "formats", fo);
  return o;
}

static const char *pc(double v, char *b, size_t n)
{
  if (v == 0)
    snprintf(b, n, "0");
  else
    snprintf(b, n, "%.3g", 100 * v);
  return b;
}

static void print_steps(const struct step *st, size_t ns, const struct target *tg, size_t nf)
{
  printf("per-step summary: %% of values that underflow / turn subnormal / overflow, per format\n");
  printf("%5s %8s %12s %10s", "step", "tensors", "values", "max|x|");
  for (size_t k = 0; k < nf; k++)
    printf("  %-20s", tg[k].name);
  printf("  file\n");
  for (size_t i = 0; i < ns; i++) {
    const struct step *s = &st[i];
    printf("%5zu %8zu %12llu %10.4g", i, s->tensors, (unsigned long long)s->count, s->max_abs);
    for (size_t k = 0; k < nf; k++) {
      char a[16], b[16], c[16], cell[64];
      snprintf(cell, sizeof cell, "%s/%s/%s", pc(share(s->f[k].u, s->count), a, sizeof a),
               pc(share(s->f[k].s, s->count), b, sizeof b), pc(share(s->f[k].o, s->count), c, sizeof c));
      printf("  %-20s", cell);
    }
    char ef[512];
    printf("  %s\n", mpa_esc(ef, sizeof ef, s->file));
  }
  printf("\n");
}

/* members skipped (no floating-point data), for the report */
struct skip { const char *file; char *name, *dtype; const char *why; };

static int keep_skips(mpe_io *f, const char *path, const char **want, size_t nwant, char *found,
                      struct skip **sk, size_t *nsk, size_t *csk)
{
  for (size_t i = 0; i < mpe_io_skipped(f); i++) {
    const char *name, *dtype, *why;
    if (mpe_io_skipped_info(f, i, &name, &dtype, &why))
      continue;
    int keep = nwant == 0;
    for (size_t w = 0; w < nwant; w++)
      if (mpa_name_match(want[w], name))
        keep = 1, found[w] = found[w] ? found[w] : 2;   /* 2: only a skipped member */
    if (!keep)
      continue;
    if (*nsk == *csk) {
      size_t nc = *csk ? 2 * *csk : 8;
      struct skip *n2 = realloc(*sk, nc * sizeof *n2);
      if (!n2)
        return -1;
      *sk = n2;
      *csk = nc;
    }
    struct skip *s = &(*sk)[*nsk];
    s->file = path;
    s->why = why;   /* static text of the library */
    s->name = strdup(name);
    s->dtype = strdup(dtype);
    if (!s->name || !s->dtype) {
      free(s->name);
      free(s->dtype);
      return -1;
    }
    (*nsk)++;
  }
  return 0;
}

/* ---------------------------------------------------------------- units of work */

/* A tensor longer than the chunk C (MPE_RANGE_CHUNK values, default 2^22) is
   analysed as parts of L values each (the last one to the end), every part in
   an accumulator of its own, merged into the tensor's in part order: the sums
   of squares behind rel.err are long double sums, whose last bits depend on the
   order of additions, and this order is the same however many processes share
   the parts out (mpirun -np N: part u, counting every tensor's parts in file
   order, goes to rank u mod N). L is C, rounded down to whole fx16 blocks (an
   fx16 block never straddles two parts: an open block is closed by a merge). */
#define RANGE_CHUNK_DEFAULT ((uint64_t)1 << 22)
#define RANGE_CHUNK_MIN 1024

static int chunk_values(uint64_t *c)
{
  const char *e = getenv("MPE_RANGE_CHUNK");
  *c = RANGE_CHUNK_DEFAULT;
  if (!e || !*e)
    return 0;
  char *end;
  errno = 0;
  unsigned long long v = strtoull(e, &end, 10);
  if (*e < '0' || *e > '9' || *end || errno || v < RANGE_CHUNK_MIN || v > ((uint64_t)1 << 62))
    return mpa_error(NULL, "MPE_RANGE_CHUNK='%.40s': expected a number of values from %d to 2^62", e, RANGE_CHUNK_MIN);
  *c = v;
  return 0;
}

/* the part length for a tensor of count values (targets' blocks set): the number of parts in *nu */
static uint64_t unit_len(uint64_t chunk, const struct target *tg, size_t nf, uint64_t count, size_t *nu)
{
  uint64_t L = chunk;
  for (size_t k = 0; k < nf; k++)
    if (tg[k].t.kind == MPE_TARGET_FX16)
      L = (L / tg[k].t.block ? L / tg[k].t.block : 1) * tg[k].t.block;
  *nu = count > L ? (size_t)((count + L - 1) / L) : 1;
  return L;
}

/* under mpirun: a part (or a whole tensor) that rank 0 merges, in order. Rank 0
   lists every part: r is the tensor's accumulator on its first part, ri its
   place in res, last marks its last part; a part it computed itself is packed
   (pk) or, a whole tensor, already in r. The other ranks list their own parts,
   packed, to send. */
struct pend { size_t g; int owner, last; size_t ri; mpe_range *r; void *pk; size_t len; };
struct pendv { struct pend *v; size_t n, cap; };

static struct pend *pend_push(struct pendv *pv, size_t g, int owner)
{
  if (pv->n == pv->cap) {
    size_t nc = pv->cap ? 2 * pv->cap : 16;
    struct pend *v = realloc(pv->v, nc * sizeof *v);
    if (!v)
      return NULL;
    pv->v = v;
    pv->cap = nc;
  }
  struct pend *pd = &pv->v[pv->n++];
  memset(pd, 0, sizeof *pd);
  pd->g = g;
  pd->owner = owner;
  return pd;
}

/* the nu parts of tensor i (count values, parts of L), numbered from u0 among
   all parts: into != NULL (one process): each in a fresh accumulator merged into
   `into` in order; else the parts of rank `me` packed into pv (rank 0 lists the
   others' too), the rest passed over. Prints its error; MPA_EXIT_* */
static int run_units(mpe_io *f, size_t i, const char *path, uint64_t count, uint64_t L, size_t nu, size_t u0,
                     int np, int me, const struct target *tg, size_t nf, const mpe_range_opts *ro, mpe_range *into,
                     struct pendv *pv, size_t g)
{
  if (mpe_io_select(f, i))
    return mpa_error(path, "%s", mpe_io_message(f));
  for (size_t u = 0; u < nu; u++) {
    int owner = (int)((u0 + u) % (size_t)np);
    uint64_t len = u + 1 < nu ? L : count - (uint64_t)u * L;
    if (owner != me) {
      if (me == 0 && !pend_push(pv, g, owner))
        return mpa_error(NULL, "out of memory"), MPA_EXIT_FAIL;
      continue;
    }
    /* .npy, safetensors and raw data seek; npz members, text and pt read the
       values before the part and throw them away (after this rank's last part,
       nothing is read) */
    if (mpe_io_seek(f, (uint64_t)u * L))
      return mpa_error(path, "%s", mpe_io_message(f));
    mpe_range *r = alloc_for(tg, nf, ro);
    if (!r)
      return mpa_error(NULL, "out of memory"), MPA_EXIT_FAIL;
    /* the last part reads to the end, as a whole tensor does */
    int e = mpa_feed_part(f, i, path, u + 1 < nu ? len : UINT64_MAX, &r, 1, 1.0, NULL);
    if (!e && into && mpe_range_merge(into, r))
      e = (mpa_error(NULL, "out of memory"), MPA_EXIT_FAIL);
    if (!e && !into) {
      struct pend *pd = pend_push(pv, g, me);
      if (!pd || mpe_range_pack(r, NULL, 0, &pd->len) || !(pd->pk = malloc(pd->len)) ||
          mpe_range_pack(r, pd->pk, pd->len, &pd->len))
        e = (mpa_error(NULL, "out of memory"), MPA_EXIT_FAIL);
    }
    mpe_range_free(r);
    if (e)
      return e;
  }
  return MPA_EXIT_OK;
}

/* ---------------------------------------------------------------- command */

int mpa_cmd_range(int argc, char **argv)
{
  struct target tg[MAXF];
  size_t nf = 0;
  const char *flist = "fp16,bf16,e4m3,e5m2", *plot = NULL;
  const char **want = calloc((size_t)argc + 1, sizeof *want);
  size_t nwant = 0;
  int json = 0, per_layer = 0, linear = 0, first;
  long margin = 0, chunk = 0, fxblock = 0;
  mpe_io_opts io;
  memset(&io, 0, sizeof io);
  char **paths = NULL;
  size_t npaths = 0;
  const mpa_opt opts[] = {
    { "format", 'f', MPA_STRING, &flist, 0, 0, "LIST",
      "target formats (default fp16,bf16,e4m3,e5m2); also q<F>\n"
      "(= q16.<F>: 16-bit fixed point, F fraction bits), fx16, and int8\n"
      "(per-tensor symmetric INT8: what it rounds to 0 and clips)", NULL, NULL, 0 },
    { "fx-block", 0, MPA_LONG, &fxblock, 1, (double)MPE_RANGE_FX16_MAXBLOCK, "N",
      "fx16 block length (default: the contiguous dimension, at most 65536)", NULL, NULL, 0 },
    { "tensor", 't', MPA_STRINGS, want, 0, 0, "NAME", "only this tensor or member (a name or a glob; may be repeated)",
      NULL, &nwant, 0 },
    { "margin", 'm', MPA_LONG, &margin, 0, 1000, "BITS", "head room for the recommended scale (default 0)",
      "0 to 1000 bits", NULL, 0 },
    { "dtype", 0, MPA_DTYPE, &io, 0, 0, "[NAME=]T",
      "T: what raw files and .npy |V2/|V1 arrays hold: bf16, fp16, e4m3,\n"
      "e5m2, fp32, fp64; NAME=T: the members named NAME (a glob) hold T\n"
      "(may be repeated; first match of their width wins)", NULL, NULL, 0 },
    { "shape", 0, MPA_SHAPE, &io, 0, 0, "D,D..", "raw files: the shape (default: from the file size)", NULL, NULL, 0 },
    { "kind", 0, MPA_KIND, &io, 0, 0, "K", "npy, npz, safetensors, raw, text, pt (default: guessed)", NULL, NULL, 0 },
    { "chunk", 0, MPA_LONG, &chunk, 4096, 0x1p40, "BYTES", "read size (4096 to 2^40; default 4 MiB)",
      "a number of bytes from 4096 to 1099511627776 = 2^40", NULL, 0 },
    { "per-layer", 0, MPA_FLAG, &per_layer, 0, 0, NULL,
      "with several files: every tensor's report too, not only the per-step summary", NULL, NULL, 0 },
    MPA_OPT_JSON(&json),
    { "plot", 0, MPA_PLOT, &plot, 0, 0, "FILE",
      ".svg or .png: the binade histogram (one file), the trend over steps (several)", NULL, NULL, 0 },
    { "linear", 0, MPA_FLAG, &linear, 0, 0, NULL, "the histogram's axis in percent, not log", NULL, NULL, 0 },
    { "quiet", 'q', MPA_FLAG, &mpa_quiet, 0, 0, NULL, "no progress bar", NULL, NULL, 0 },
    MPA_OPT_END };
  const mpa_cli cli = { "range", "usage: mpanalyze [range] FILE|FOLDER|'GLOB'... [options]",
                        "A FOLDER stands for its tensor files; a quoted GLOB is expanded by mpanalyze. Both are\n"
                        "sorted naturally (step2 before step10); one file at a time is read.", opts };
  int rc = MPA_EXIT_INPUT;
  if (!want)
    return mpa_error(NULL, "out of memory"), MPA_EXIT_FAIL;
  if ((rc = mpa_parse(&cli, argc, argv, &first))) {
    rc = rc == 1 ? MPA_EXIT_OK : rc;
    goto out;
  }
  rc = MPA_EXIT_INPUT;
  io.chunk_bytes = (size_t)chunk;
  if (first >= argc) {
    mpa_error("range", "no input file (mpanalyze --help)");
    goto out;
  }
  int i8 = 0;
  if (parse_targets(flist, tg, &nf, fxblock, &i8))
    goto out;
  if (i8 && mpa_mpi_size() > 1) {
    if (mpa_mpi_rank() == 0)
      mpa_error(NULL, "--format int8 runs in one process only (not under mpirun)");
    goto out;
  }
  if ((rc = mpa_expand_inputs(argc - first, argv + first, &paths, &npaths)))
    goto out;
  rc = MPA_EXIT_INPUT;
  if (plot && (rc = mpa_output_check(plot, (int)npaths, paths)))   /* the options' own check saw argv */
    goto out;
  rc = MPA_EXIT_INPUT;
  mpa_skips_in_report = 1;
  /* several files: one per step (or shard); the summary is per file, and the
     tensors' own reports are kept only with --per-layer */
  const int stepwise = npaths > 1, keep_layers = !stepwise || per_layer;
  mpe_range_opts ro = { .margin = (int)margin };
  mpe_range *total = alloc_for(tg, nf, &ro);
  size_t fxused = 0;   /* the fx16 block of every tensor, 0 when they differ */
  struct tres *res = NULL;
  size_t nres = 0, cap = 0;
  struct tres empty;          /* the results of the last empty tensor (a copy, owned here) */
  memset(&empty, 0, sizeof empty);
  struct spill sp = { NULL, 0 };
  int empty_ok = 0;
  size_t empty_blocks[MAXF];
  char *found = calloc(nwant + 1, 1);
  mpa_rule_use *rule_used = calloc(1, sizeof *rule_used);
  struct step *steps = calloc(npaths, sizeof *steps);
  struct skip *sk = NULL;
  size_t nsk = 0, csk = 0;
  /* under mpirun (np > 1): part u (a whole tensor, or a part of a long one; see
     run_units) is analysed by rank u mod np; rank 0 keeps an accumulator for every
     tensor (pv.v[].r), the others send theirs packed (pv.v[].pk), and rank 0
     merges them into the total in file order, so the report is the
     single-process one bit for bit */
  int np = mpa_mpi_size(), me = mpa_mpi_rank(), failed = 0;
  size_t ng = 0, nu_all = 0;
  struct pendv pv = { NULL, 0, 0 };
  uint64_t part;
  if (chunk_values(&part)) {
    rc = MPA_EXIT_INPUT;
    goto done;
  }
  if (!total || !found || !rule_used || !steps) {
    mpa_error(NULL, "out of memory");
    rc = MPA_EXIT_FAIL;
    goto done;
  }
  for (size_t a = 0; a < npaths; a++) {
    const char *path = paths[a];
    steps[a].file = path;
    mpe_io *f;
    if (mpa_open(path, &io, &f)) {
      failed = 1;
      goto walked;
    }
    mpa_rules_mark(f, &io, rule_used);
    if (keep_skips(f, path, want, nwant, found, &sk, &nsk, &csk)) {
      mpe_io_close(f);
      rc = mpa_error(NULL, "out of memory"), rc = MPA_EXIT_FAIL;
      failed = 1;
      goto walked;
    }
    for (size_t i = 0; i < mpe_io_count(f); i++) {
      mpe_io_tensor ti;
      mpe_io_info(f, i, &ti);
      int keep = nwant == 0;
      for (size_t w = 0; w < nwant; w++)
        if (mpa_name_match(want[w], ti.name))
          keep = 1, found[w] = 1;
      if (!keep)
        continue;
      size_t g = ng++;
      set_blocks(tg, nf, &ti);
      size_t nu;
      uint64_t L = unit_len(part, tg, nf, ti.count, &nu), u0 = nu_all;
      nu_all += nu;
      int mine = (int)(u0 % (size_t)np) == me;
      if (np > 1 && me > 0) {
        /* analyse its parts, pack them, keep the bytes for rank 0 */
        int any = 0;
        for (size_t u = 0; u < nu && !any; u++)
          any = (int)((u0 + u) % (size_t)np) == me;
        if (!any)
          continue;
        mpa_err_local = 1;
        int e;
        if (nu > 1) {
          e = run_units(f, i, path, ti.count, L, nu, u0, np, me, tg, nf, &ro, NULL, &pv, g);
        } else {
          mpe_range *r = alloc_for(tg, nf, &ro);
          struct pend *pd = r ? pend_push(&pv, g, me) : NULL;
          e = pd ? mpa_feed(f, i, path, &r, 1, 1.0, NULL) : (mpa_error(NULL, "out of memory"), MPA_EXIT_FAIL);
          if (!e && (mpe_range_pack(r, NULL, 0, &pd->len) || !(pd->pk = malloc(pd->len)) ||
                     mpe_range_pack(r, pd->pk, pd->len, &pd->len)))
            e = (mpa_error(NULL, "out of memory"), MPA_EXIT_FAIL);
          mpe_range_free(r);
        }
        mpa_err_local = 0;
        if (e) {
          rc = e;
          mpe_io_close(f);
          failed = 1;
          goto walked;
        }
        continue;
      }
      int share_empty = ti.count == 0 && empty_ok && same_blocks(tg, nf, empty_blocks);
      mpe_range *r = share_empty ? NULL : alloc_for(tg, nf, &ro);
      if (nres == cap) {
        cap = cap ? 2 * cap : 16;
        struct tres *nr = realloc(res, cap * sizeof *nr);
        if (!nr) { mpe_range_free(r); r = NULL; share_empty = 0; } else res = nr;
      }
      if (!r && !share_empty) {
        mpe_io_close(f);
        rc = mpa_error(NULL, "out of memory"), rc = MPA_EXIT_FAIL;
        failed = 1;
        goto walked;
      }
      struct tres *t = &res[nres++];
      memset(t, 0, sizeof *t);
      t->file = path;
      t->step = a;
      /* shape and name in one block, the shape first (aligned) */
      size_t nl = strlen(ti.name) + 1, sb = (size_t)ti.ndim * sizeof *t->shape;
      if ((t->shape = malloc(sb + nl))) {
        memcpy(t->shape, ti.shape, sb);
        t->name = memcpy((char *)t->shape + sb, ti.name, nl);
      }
      t->dtype = ti.dtype;
      t->ndim = ti.ndim;
      if (!t->shape) {
        mpe_range_free(r);
        mpe_io_close(f);
        rc = mpa_error(NULL, "out of memory"), rc = MPA_EXIT_FAIL;
        goto done;
      }
      for (size_t k = 0; k < nf; k++)
        if (tg[k].t.kind == MPE_TARGET_FX16) {
          t->fxblock = tg[k].t.block;
          fxused = g == 0 || fxused == t->fxblock ? t->fxblock : 0;   /* g: nres drops while streaming */
        }
      if (np > 1) {
        /* rank 0: analyse its own share now; merge every tensor in order later */
        size_t first = pv.n;
        int e = MPA_EXIT_OK;
        if (nu > 1) {
          e = run_units(f, i, path, ti.count, L, nu, u0, np, me, tg, nf, &ro, NULL, &pv, g);
        } else if (!pend_push(&pv, g, (int)(u0 % (size_t)np))) {
          e = (mpa_error(NULL, "out of memory"), MPA_EXIT_FAIL);
        } else if (mine) {
          e = mpa_feed(f, i, path, &r, 1, 1.0, NULL);   /* straight into the tensor's accumulator */
        }
        if (pv.n > first) {   /* the tensor's accumulator goes with its first part */
          pv.v[first].r = r;
          pv.v[first].ri = nres - 1;
          pv.v[pv.n - 1].last = 1;
        } else {
          mpe_range_free(r);
        }
        if (e) {
          rc = e;
          mpe_io_close(f);
          failed = 1;
          goto walked;
        }
        continue;
      }
      int e = 0;
      if (share_empty) {
        /* an empty tensor's results depend only on the targets: copy the
           last empty one's instead of building an accumulator (thousands of
           empty tensors took a millisecond and kilobytes each) */
        if (share_results(t, &empty, nf))
          e = mpa_error(NULL, "out of memory");
        else if (i8)
          e = int8_pass(f, i, path, 0.0, &t->i8);
      } else {
        e = nu > 1 ? run_units(f, i, path, ti.count, L, nu, u0, 1, 0, tg, nf, &ro, r, NULL, g)
                   : mpa_feed(f, i, path, &r, 1, 1.0, NULL);
        if (!e && (extract(r, nf, t) || mpe_range_merge(total, r)))
          e = mpa_error(NULL, "out of memory");
        if (!e && i8)
          e = int8_pass(f, i, path, t->sum.max_abs, &t->i8);
        if (!e && ti.count == 0) {
          /* the empty tensors after this one share a copy of its results
             (t itself is freed once written out) */
          free_tres(&empty, nf);
          memset(&empty, 0, sizeof empty);
          if (copy_results(&empty, t, nf)) {
            e = mpa_error(NULL, "out of memory");
          } else {
            empty_ok = 1;
            for (size_t k = 0; k < nf; k++)
              empty_blocks[k] = tg[k].t.block;
          }
        }
      }
      mpe_range_free(r);
      if (e) {
        mpe_io_close(f);
        goto done;
      }
      step_add(&steps[a], t, nf);
      if (keep_layers && nres > 1 && (e = spill_put(&sp, t, tg, nf, json, (int)margin))) {
        mpe_io_close(f);
        rc = e;
        goto done;
      }
      if (!keep_layers || nres > 1)   /* streaming: written out, or the step's sums are all a summary needs */
        free_tres(&res[--nres], nf);
    }
    mpe_io_close(f);
  }
walked:
  /* every rank has walked the files: one verdict for all */
  if (np > 1) {
    int st = mpa_mpi_max(failed ? (rc ? rc : MPA_EXIT_INPUT) : 0);
    if (st) {
      rc = st;
      goto done;
    }
  } else if (failed) {
    goto done;
  }
  mpa_progress_end();
  for (size_t w = 0; w < nwant; w++)
    if (!found[w]) {
      mpa_error(NULL, "no tensor named '%s' in the input", want[w]);
      goto done;
    }
  if (mpa_rules_check(&io, rule_used))
    goto done;
  if (ng == 0) {
    if (nsk) {   /* say what there was */
      char en[256], hint[400] = "";
      mpa_esc(en, sizeof en, sk[0].name);
      if (strstr(sk[0].why, "integer") || strstr(sk[0].why, "untyped"))
        snprintf(hint, sizeof hint, "; --dtype '%s=TYPE' reads it as TYPE's bit patterns", en);
      mpa_error(npaths == 1 ? paths[0] : NULL, "no floating-point tensor to analyse: %s'%s' is %s, skipped (%s)%s",
                nsk > 1 ? "every member is skipped, e.g. " : "", en, sk[0].dtype, sk[0].why, hint);
    } else {
      mpa_error(npaths == 1 ? paths[0] : NULL, "no floating-point tensor to analyse");
    }
    goto done;
  }
  if (np > 1 && me > 0) {
    for (size_t k = 0; k < pv.n; k++)
      if (mpa_mpi_send(pv.v[k].pk, pv.v[k].len, 0, 7)) {
        rc = MPA_EXIT_FAIL;
        goto done;
      }
    rc = MPA_EXIT_OK;
    goto done;
  }
  if (np > 1) {
    /* rank 0: the others' accumulators, then the total in file order; the
       parts of a tensor are merged into its accumulator in part order */
    mpe_range *cur = NULL;
    size_t ri = 0;
    for (size_t k = 0; k < pv.n; k++) {
      struct pend *pd = &pv.v[k];
      if (pd->r)
        cur = pd->r, ri = pd->ri;
      int e = 0;
      if (pd->owner != 0) {
        void *b = NULL;
        size_t len = 0;
        e = mpa_mpi_recv(&b, &len, pd->owner, 7) ? MPE_EIO : mpe_range_merge_packed(cur, b, len);
        free(b);
      } else if (pd->pk) {
        e = mpe_range_merge_packed(cur, pd->pk, pd->len);
      }
      if (e) {
        mpa_error(NULL, "tensor %zu from rank %d: %s", pd->g, pd->owner, mpe_strerror(e));
        rc = MPA_EXIT_FAIL;
        goto done;
      }
      if (!pd->last)
        continue;
      if (extract(cur, nf, &res[ri]) || mpe_range_merge(total, cur)) {
        mpa_error(NULL, "out of memory");
        rc = MPA_EXIT_FAIL;
        goto done;
      }
      step_add(&steps[res[ri].step], &res[ri], nf);
      if (ri > 0 && keep_layers && (rc = spill_put(&sp, &res[ri], tg, nf, json, (int)margin)))
        goto done;
      rc = MPA_EXIT_INPUT;
      if (ri > 0) {   /* written out, or summed into its step */
        free_tres(&res[ri], nf);
        memset(&res[ri], 0, sizeof res[ri]);
      }
    }
  }
  struct tres all;
  memset(&all, 0, sizeof all);
  char allname[64];
  snprintf(allname, sizeof allname, "all %zu tensors", (size_t)ng);
  all.name = strdup(allname);
  all.fxblock = fxused;
  if (!all.name || extract(total, nf, &all)) {
    mpa_error(NULL, "out of memory");
    free_tres(&all, nf);
    goto done;
  }
  if (plot) {
    char title[300], ef[200];
    if (stepwise) {
      const char *names[MAXF];
      double *sh = malloc(nf * 3 * npaths * sizeof *sh);
      if (!sh) {
        mpa_error(NULL, "out of memory");
        free_tres(&all, nf);
        goto done;
      }
      for (size_t k = 0; k < nf; k++) {
        names[k] = tg[k].name;
        for (size_t s = 0; s < npaths; s++) {
          sh[(k * 3 + 0) * npaths + s] = share(steps[s].f[k].u, steps[s].count);
          sh[(k * 3 + 1) * npaths + s] = share(steps[s].f[k].s, steps[s].count);
          sh[(k * 3 + 2) * npaths + s] = share(steps[s].f[k].o, steps[s].count);
        }
      }
      char el[200];
      snprintf(title, sizeof title, "%s ... %s (%zu files)", mpa_esc(ef, sizeof ef, paths[0]),
               mpa_esc(el, sizeof el, paths[npaths - 1]), npaths);
      rc = mpa_plot_steps(plot, title, names, nf, sh, npaths);
      free(sh);
    } else {
      const struct tres *pt = ng == 1 ? &res[0] : &all;
      snprintf(title, sizeof title, "%s: %s", paths[0], pt->name);
      mpa_mark marks[MAXF];
      size_t nm = 0;
      for (size_t k = 0; k < nf; k++) {
        struct limits l = limits_of(&tg[k]);
        if (l.has)
          marks[nm++] = (mpa_mark){ tg[k].name, l.minsub, l.minnorm, l.max + 1 };
      }
      mpa_hist_plot hp = { title, pt->h.first, pt->h.c, pt->h.n, nm, marks, linear };
      rc = mpa_plot_histogram(plot, &hp);
    }
    if (rc) {
      free_tres(&all, nf);
      goto done;
    }
  }
  if (json) {
    /* one document, written a tensor at a time: 200,000 tensors as one
       jansson tree took gigabytes */
    json_t *fl = json_array(), *sl = json_array();
    for (size_t k = 0; k < nf; k++)
      json_array_append_new(fl, json_string(tg[k].name));
    for (size_t k = 0; k < nsk; k++)
      json_array_append_new(sl, json_pack("{s:s, s:s, s:s, s:s}", "file", sk[k].file, "name", sk[k].name,
                                          "dtype", sk[k].dtype, "why", sk[k].why));
    json_t *head = json_pack("{s:s, s:s, s:s, s:i, s:o, s:o}", "mpanalyze", mpe_version_string(), "command", "range",
                             "rounding", "rne", "margin", (int)margin, "formats", fl, "skipped", sl);
    rc = head ? MPA_EXIT_OK : MPA_EXIT_FAIL;
    const size_t flags = JSON_INDENT(2) | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(17);
    const size_t one = JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(17) | JSON_COMPACT;
    char *text = head ? json_dumps(head, flags) : NULL;
    json_decref(head);
    if (!text) {
      rc = mpa_error(NULL, "out of memory"), rc = MPA_EXIT_FAIL;
    } else {
      text[strlen(text) - 2] = '\0';   /* drop the closing "\n}" */
      fputs(text, stdout);
      free(text);
      if (stepwise) {
        fputs(",\n  \"steps\": [", stdout);
        for (size_t s = 0; s < npaths && rc == MPA_EXIT_OK; s++) {
          json_t *o = step_json(&steps[s], s, tg, nf);
          fputs(s ? ",\n    " : "\n    ", stdout);
          if (!o || json_dumpf(o, stdout, one))
            rc = write_failed(stdout, "standard output");
          json_decref(o);
        }
        fputs("\n  ]", stdout);
      }
      if (keep_layers) {
        fputs(",\n  \"tensors\": [", stdout);
        if (rc == MPA_EXIT_OK && tensor_write(stdout, &res[0], tg, nf, 1, (int)margin, 1, 0))
          rc = write_failed(stdout, "standard output");
        if (rc == MPA_EXIT_OK)
          rc = spill_copy(&sp);
        fputs("\n  ]", stdout);
      }
      fputs(",\n  \"total\": ", stdout);
      json_t *o = rc == MPA_EXIT_OK ? tensor_json(&all, tg, nf, (int)margin) : NULL;
      if (rc == MPA_EXIT_OK && (!o || json_dumpf(o, stdout, one)))
        rc = write_failed(stdout, "standard output");
      json_decref(o);
      fputs("\n}\n", stdout);
    }
  } else {
    for (size_t k = 0; k < nsk; k++) {
      char ef[512], en[256];
      printf("%s: %s  skipped: %s (%s)\n", mpa_esc(ef, sizeof ef, sk[k].file), mpa_esc(en, sizeof en, sk[k].name),
             sk[k].why, sk[k].dtype);
    }
    if (nsk)
      printf("\n");
    if (stepwise)
      print_steps(steps, npaths, tg, nf);
    rc = MPA_EXIT_OK;
    if (keep_layers) {
      tensor_write(stdout, &res[0], tg, nf, 0, (int)margin, 1, ng == 1);
      rc = spill_copy(&sp);
    }
    if (rc == MPA_EXIT_OK && (ng > 1 || stepwise)) {
      print_tensor(stdout, &all, tg, nf);
      print_hist(stdout, &all, tg, nf);
    }
    if (rc == MPA_EXIT_OK)
      print_capped(ng > 1 || stepwise ? &all : &res[0], tg, nf, (int)margin);
    if (rc == MPA_EXIT_OK && plot && !mpa_quiet)
      fprintf(stderr, "mpanalyze: wrote %s\n", plot);
  }
  free_tres(&all, nf);
done:
  mpa_progress_end();
  for (size_t i = 0; i < nres; i++)
    free_tres(&res[i], nf);
  free(res);
  free_tres(&empty, nf);
  if (sp.fp)
    fclose(sp.fp);
  free(found);
  free(rule_used);
  free(steps);
  for (size_t k = 0; k < nsk; k++) {
    free(sk[k].name);
    free(sk[k].dtype);
  }
  free(sk);
  mpe_range_free(total);
  for (size_t k = 0; k < pv.n; k++) {
    mpe_range_free(pv.v[k].r);
    free(pv.v[k].pk);
  }
  free(pv.v);
out:
  mpa_free_inputs(paths, npaths);
  free(want);
  return rc;
}
