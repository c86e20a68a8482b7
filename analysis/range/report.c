/* The range report over tensor files (mpe_report_run(3)): every tensor read
   and analysed for the targets, per-file sums, long tensors in parts that
   several processes may share, each tensor's report spilled to a scratch file
   as soon as it is known, and the report written as JSON or text. `mpanalyze
   range` and the Python package's analyze() are this call. Nothing is printed
   but the report itself, where the caller asks. */
#include "config.h"
#include <errno.h>
#include <float.h>
#include <fnmatch.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <jansson.h>
#include "mpai.h"
#include "mpei.h"
#include "mpemu/quant.h"
#include "mpemu/report.h"
#include "mpemu/version.h"

#define MAXF MPE_REPORT_MAX_TARGETS
#define FX_DEFAULT_MAX 65536   /* the default fx16 block: the contiguous dimension, at most this */

/* a target of the report: a float format, a Q format or QUDA's fx16 */
struct target {
  mpe_range_target t;
  char name[24];
  int fixed_block;             /* fx16: --fx-block given */
};

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

struct spill {
  FILE *fp;
  size_t n;             /* tensors written to it */
};

/* one input file (a step, or a shard): sums over its tensors */
struct step {
  const char *file;
  size_t tensors;
  uint64_t count, zeros, nan, inf;
  double max_abs;
  struct { uint64_t u, s, o; int has, k, capped; } f[MAXF];
};

/* members skipped (no floating-point data), for the report */
struct skip { const char *file; char *name, *dtype; const char *why; };

struct pend { size_t g; int owner, last; size_t ri; mpe_range *r; void *pk; size_t len; };

struct pendv { struct pend *v; size_t n, cap; };

/* the scratch buffers of the int8 pass */
struct i8buf {
  double buf[1 << 14];
  float xf[1 << 14], yf[1 << 14];
  int8_t q[1 << 14];
};

struct mpe_report {
  /* the options */
  struct target tg[MAXF];
  size_t nf;
  int i8, margin, json;
  char **want;                 /* --tensor names or globs */
  size_t nwant;
  mpe_io_opts io;
  char **paths;
  size_t npaths;
  int stepwise, keep_layers;   /* several files: one per step; each tensor's report kept */
  int np, me;                  /* ranks */
  const mpe_report_comm *comm;
  void (*progress)(void *ctx, const char *path, uint64_t done, uint64_t total);
  void *progress_ctx;
  const char *cur_path;
  const char *who;
  uint64_t part;               /* the part length of long tensors */
  uint64_t max_values, nvalues; /* --max-values (0: none), the values of the tensors taken so far */
  mpe_range_opts ro;
  /* the walk */
  mpe_range *total;
  size_t fxused;               /* the fx16 block of every tensor, 0 when they differ */
  struct tres *res;            /* the tensors kept (res[0] always, when rank 0) */
  size_t nres, cap;
  struct tres empty;           /* the results of the last empty tensor (a copy, owned here) */
  int empty_ok;
  size_t empty_blocks[MAXF];
  struct spill sp;
  char *found;                 /* per want: 1 found, 2 only a skipped member */
  mpe_report_rule_use *rule_used;
  struct step *steps;          /* per file */
  struct skip *sk;
  size_t nsk, csk;
  size_t ng, nu_all;           /* tensors analysed, parts counted */
  struct pendv pv;
  struct i8buf *i8buf;
  int local;                   /* errors now are this rank's own (another rank than 0) */
  /* the result */
  struct tres all;
  double *shares;
  mpe_report_error e;
};

/* record what went wrong; returns code */
static int rerr(struct mpe_report *R, int code, const char *where, const char *fmt, ...)
  __attribute__((format(printf, 4, 5)));
static int rerr(struct mpe_report *R, int code, const char *where, const char *fmt, ...)
{
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(R->e.msg, sizeof R->e.msg, fmt, ap);
  va_end(ap);
  snprintf(R->e.where, sizeof R->e.where, "%s", where ? where : "");
  R->e.fail = code == MPE_ENOMEM;
  R->e.local = R->local;
  return code;
}

static int name_match(const char *pattern, const char *name)
{
  return !strcmp(pattern, name) || (strpbrk(pattern, "*?[") && !fnmatch(pattern, name, 0));
}

/* q<F>, q16.<F>: F a whole number from -512 to 512 */
static int frac_bits(const char *s, long *v)
{
  char *e;
  errno = 0;
  long x = strtol(s, &e, 10);
  *v = x;
  return e != s && !*e && !errno && x >= -512 && x <= 512;
}

static json_t *json_num(double v)
{
  return isfinite(v) ? json_real(v) : json_null();
}

/* Length of the valid UTF-8 sequence at s that is not a control character
   (C1 controls U+0080..U+009F count as controls: 0x9b alone is a CSI to some
   terminals), or 0. */
static size_t printable_len(const unsigned char *s)
{
  unsigned c = s[0];
  if (c < 0x20 || c == 0x7f)
    return 0;
  if (c < 0x80)
    return 1;
  size_t l = c >= 0xc2 && c <= 0xdf ? 2 : c >= 0xe0 && c <= 0xef ? 3 : c >= 0xf0 && c <= 0xf4 ? 4 : 0;
  for (size_t k = 1; k < l; k++)
    if ((s[k] & 0xc0) != 0x80)
      return 0;
  if (l == 2 && c == 0xc2 && s[1] < 0xa0)
    return 0;
  if ((l == 3 && c == 0xe0 && s[1] < 0xa0) || (l == 4 && c == 0xf0 && s[1] < 0x90) ||
      (l == 4 && c == 0xf4 && s[1] > 0x8f) || (l == 3 && c == 0xed && s[1] > 0x9f))
    return 0;   /* overlong, past U+10FFFF, surrogates */
  return l;
}

const char *mpe_report_escape(char *buf, size_t n, const char *str)
{
  const unsigned char *s = (const unsigned char *)str;
  size_t o = 0;
  if (n == 0)
    return "";
  while (*s) {
    size_t l = printable_len(s);
    if (l == 0) {
      if (o + 5 > n - 1)
        break;
      snprintf(buf + o, 5, "\\x%02x", *s);
      o += 4;
      s++;
    } else {
      if (o + l > n - 1)
        break;
      memcpy(buf + o, s, l);
      o += l;
      s += l;
    }
  }
  buf[o] = '\0';
  return buf;
}


/* "fp16,q8,q16.12,fx16,int8" -> targets (int8 sets *i8 instead: it is not a
   range accumulator's target); 0 or MPE_EINVAL, said in R */
static int parse_targets(struct mpe_report *R, const char *list, struct target *out, size_t *n, long fxblock, int *i8)
{
  char buf[256];
  if (strlen(list) >= sizeof buf)
    return rerr(R, MPE_EINVAL, NULL, "--format list too long");
  strcpy(buf, list);
  *n = 0;
  for (char *save, *tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
    if (*n == MAXF)
      return rerr(R, MPE_EINVAL, NULL, "too many formats (at most %d)", MAXF);
    if (!strcmp(tok, "int8")) {
      if (*i8)
        return rerr(R, MPE_EINVAL, NULL, "format '%s' given twice", tok);
      *i8 = 1;
      continue;
    }
    struct target *t = &out[*n];
    memset(t, 0, sizeof *t);
    const mpe_format *f = mpe_format_lookup(tok);
    long fb;
    if (f && !mpe_format_is_signed(f))
      return rerr(R, MPE_EINVAL, NULL, "--format %s: a scale format (no sign, no zero), not a rounding target", tok);
    if (f) {
      t->t.kind = MPE_TARGET_FLOAT;
      t->t.format = f;
      snprintf(t->name, sizeof t->name, "%s", mpe_format_name(f));
    } else if (!strcmp(tok, "fx16")) {
      t->t.kind = MPE_TARGET_FX16;
      t->t.block = fxblock > 0 ? (size_t)fxblock : 1;
      t->fixed_block = fxblock > 0;
      snprintf(t->name, sizeof t->name, "fx16");
    } else if (tok[0] == 'q' && (frac_bits(tok + 1, &fb) || (!strncmp(tok, "q16.", 4) && frac_bits(tok + 4, &fb)))) {
      t->t.kind = MPE_TARGET_Q16;
      t->t.frac_bits = (int)fb;
      snprintf(t->name, sizeof t->name, "q16.%ld", fb);
    } else {
      return rerr(R, MPE_EINVAL, NULL,
                  "unknown format '%s' (fp16, bf16, tf32, e4m3, e5m2, e2m3, e3m2, e2m1, fp32, fp64, q<F>, q16.<F>, fx16, int8)",
                  tok);
    }
    for (size_t j = 0; j < *n; j++)
      if (!strcmp(out[j].name, t->name))
        return rerr(R, MPE_EINVAL, NULL, "format '%s' given twice", tok);
    (*n)++;
  }
  if (*n == 0 && !*i8)
    return rerr(R, MPE_EINVAL, NULL, "--format needs at least one format");
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

/* an accumulator for the targets; like (NULL or one of the same targets) lends
   its thresholds */
static mpe_range *alloc_for(const struct target *tg, size_t nf, const mpe_range_opts *ro, const mpe_range *like)
{
  mpe_range_target t[MAXF];
  for (size_t k = 0; k < nf; k++)
    t[k] = tg[k].t;
  /* the targets were checked when parsed: NULL means no memory */
  return mpai_range_alloc_like(t, nf, ro, like);
}



/* The second pass over tensor i: quantise with the scale of its largest finite |x|. */
static int int8_pass(struct mpe_report *R, mpe_io *f, size_t i, const char *path, double max_abs, struct i8res *o)
{
  enum { NV = 1 << 14 };
  struct i8buf *w = R->i8buf;
  double *buf = w->buf;
  float *xf = w->xf, *yf = w->yf;
  int8_t *q = w->q;
  memset(o, 0, sizeof *o);
  o->has = 1;
  float m = max_abs > FLT_MAX ? FLT_MAX : (float)max_abs;   /* binary64 data may go beyond binary32 */
  int32_t z;
  if (mpe_quant_params(&o->scale, &z, &m, 1, 1, MPE_QUANT_TENSOR, MPE_INT8, 1))
    return rerr(R, MPE_EINVAL, path, "int8: no scale for max|x| %g", max_abs);
  mpe_io_tensor t;
  mpe_io_info(f, i, &t);
  int rc;
  if ((rc = mpe_io_select(f, i)))
    return rerr(R, rc, path, "%s", mpe_io_message(f));
  double num = 0, den = 0;
  for (;;) {
    size_t n;
    if ((rc = mpe_io_read(f, buf, NV, &n)))
      return rerr(R, rc, path, "%s", mpe_io_message(f));
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
      return rerr(R, MPE_EINVAL, path, "int8: quantisation failed");
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
    json_object_set_new(o, "file", mpai_json_path(t->file));
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
      json_object_set_new(x, "recommended_scale", json_num(ldexp(1.0, s->scale_log2)));
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
    fprintf(out, "%s: %s  %s %s  %llu values\n", mpe_report_escape(ef, sizeof ef, t->file), mpe_report_escape(en, sizeof en, t->name),
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

/* a recommended scale held at 2^127 or 2^-149: say so, with the scale the values would take */
static void print_capped(FILE *out, const struct tres *all, const struct target *tg, size_t nf, int margin)
{
  for (size_t k = 0; k < nf; k++) {
    const mpe_range_stats *s = &all->st[k];
    if (!s->has_scale || !s->scale_capped)
      continue;
    int top = s->scale_log2 == MPE_RANGE_SCALE_MAX_LOG2;
    fprintf(out, "note: %s: the recommended scale is capped at 2^%d, binary32's %s power of two (a loss scale is a "
           "binary32 number)", tg[k].name, s->scale_log2, top ? "largest" : "smallest");
    if (tg[k].t.kind == MPE_TARGET_FLOAT && all->sum.max_abs > 0) {
      int ea, et;
      double ma = frexp(all->sum.max_abs, &ea), mt = frexp(mpe_format_max(tg[k].t.format), &et);
      fprintf(out, "; max|x| = %.4g would take 2^%d", all->sum.max_abs, et - margin - ea - (ma > mt));
    }
    fprintf(out, "\n");
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

/* a JSON dump or tensor report to out that failed: a write error (said by the
   caller for its own stream), else out of memory */
static int write_failed(struct mpe_report *R, FILE *out)
{
  if (ferror(out)) {
    R->e.out_failed = 1;
    return rerr(R, MPE_EIO, NULL, "write failed: %s", strerror(errno ? errno : EIO));
  }
  return rerr(R, MPE_ENOMEM, NULL, "out of memory");
}

/* a tensor after the first into the scratch file */
static int spill_put(struct mpe_report *R, const struct tres *t)
{
  struct spill *sp = &R->sp;
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
      return rerr(R, MPE_EIO, tmpdir(), "cannot make a scratch file for the report (set TMPDIR to a writable folder): %s",
                  strerror(errno));
  }
  if (tensor_write(sp->fp, t, R->tg, R->nf, R->json, R->margin, 0, 0))
    return ferror(sp->fp) ? rerr(R, MPE_EIO, tmpdir(), "cannot write the report's scratch file: %s",
                                 strerror(errno ? errno : EIO))
                          : rerr(R, MPE_ENOMEM, NULL, "out of memory");
  if (ferror(sp->fp))
    return rerr(R, MPE_EIO, tmpdir(), "cannot write the report's scratch file: %s", strerror(errno));
  sp->n++;
  return 0;
}

/* the scratch file to out */
static int spill_copy(struct mpe_report *R, FILE *out)
{
  struct spill *sp = &R->sp;
  if (!sp->fp)
    return 0;
  char b[1 << 16];
  size_t got;
  if (fflush(sp->fp) || ferror(sp->fp) || fseek(sp->fp, 0, SEEK_SET))
    return rerr(R, MPE_EIO, tmpdir(), "cannot write the report's scratch file: %s", strerror(errno));
  while ((got = fread(b, 1, sizeof b, sp->fp)) > 0)
    if (fwrite(b, 1, got, out) != got)
      return write_failed(R, out);
  if (ferror(sp->fp))
    return rerr(R, MPE_EIO, tmpdir(), "cannot read back the report's scratch file: %s", strerror(errno));
  return 0;
}

/* ---------------------------------------------------------------- whole runs */


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
  json_object_set_new(o, "file", mpai_json_path(st->file));
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

static void print_steps(FILE *out, const struct step *st, size_t ns, const struct target *tg, size_t nf)
{
  fprintf(out, "per-step summary: %% of values that underflow / turn subnormal / overflow, per format\n");
  fprintf(out, "%5s %8s %12s %10s", "step", "tensors", "values", "max|x|");
  for (size_t k = 0; k < nf; k++)
    fprintf(out, "  %-20s", tg[k].name);
  fprintf(out, "  file\n");
  for (size_t i = 0; i < ns; i++) {
    const struct step *s = &st[i];
    fprintf(out, "%5zu %8zu %12llu %10.4g", i, s->tensors, (unsigned long long)s->count, s->max_abs);
    for (size_t k = 0; k < nf; k++) {
      char a[16], b[16], c[16], cell[64];
      snprintf(cell, sizeof cell, "%s/%s/%s", pc(share(s->f[k].u, s->count), a, sizeof a),
               pc(share(s->f[k].s, s->count), b, sizeof b), pc(share(s->f[k].o, s->count), c, sizeof c));
      fprintf(out, "  %-20s", cell);
    }
    char ef[512];
    fprintf(out, "  %s\n", mpe_report_escape(ef, sizeof ef, s->file));
  }
  fprintf(out, "\n");
}


static int keep_skips(mpe_io *f, const char *path, char *const *want, size_t nwant, char *found,
                      struct skip **sk, size_t *nsk, size_t *csk)
{
  for (size_t i = 0; i < mpe_io_skipped(f); i++) {
    const char *name, *dtype, *why;
    if (mpe_io_skipped_info(f, i, &name, &dtype, &why))
      continue;
    int keep = nwant == 0;
    for (size_t w = 0; w < nwant; w++)
      if (name_match(want[w], name))
        keep = 1, found[w] = found[w] ? found[w] : 2;   /* 2: only a skipped member */
    if (!keep)
      continue;
    if (mpai_grow((void **)sk, csk, *nsk + 1, sizeof **sk))
      return -1;
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

static int chunk_values(struct mpe_report *R, uint64_t *c)
{
  const char *e = getenv("MPE_RANGE_CHUNK");
  *c = RANGE_CHUNK_DEFAULT;
  if (!e || !*e)
    return 0;
  char *end;
  errno = 0;
  unsigned long long v = strtoull(e, &end, 10);
  if (*e < '0' || *e > '9' || *end || errno || v < RANGE_CHUNK_MIN || v > ((uint64_t)1 << 62))
    return rerr(R, MPE_EINVAL, NULL, "MPE_RANGE_CHUNK='%.40s': expected a number of values from %d to 2^62", e,
                RANGE_CHUNK_MIN);
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

static struct pend *pend_push(struct pendv *pv, size_t g, int owner)
{
  if (mpai_grow((void **)&pv->v, &pv->cap, pv->n + 1, sizeof *pv->v))
    return NULL;
  struct pend *pd = &pv->v[pv->n++];
  memset(pd, 0, sizeof *pd);
  pd->g = g;
  pd->owner = owner;
  return pd;
}

/* one tensor's walk: tensor i of f (count values, parts of L: nu of them,
   numbered from u0 among all parts), g among the tensors analysed */
struct unit { mpe_io *f; size_t i; const char *path; uint64_t count, L; size_t nu, u0, g; };

static void feed_progress(void *ctx, uint64_t done, uint64_t total)
{
  struct mpe_report *R = ctx;
  if (R->progress)
    R->progress(R->progress_ctx, R->cur_path, done, total);
}

/* count values (UINT64_MAX: to the end) of the selected tensor into *r */
static int feed(struct mpe_report *R, const struct unit *u, uint64_t count, mpe_range **r)
{
  char msg[512];
  mpe_range_feed_opts o = { 1.0, NULL, feed_progress, R };
  R->cur_path = u->path;
  int rc = mpe_range_feed(r, 1, u->f, u->i, count, &o, msg, sizeof msg);
  if (rc == MPE_ENOMEM)
    return rerr(R, rc, NULL, "out of memory");
  return rc ? rerr(R, rc, u->path, "%s", msg) : 0;
}

/* a whole tensor into *r */
static int feed_all(struct mpe_report *R, const struct unit *u, mpe_range **r)
{
  int rc = mpe_io_select(u->f, u->i);
  return rc ? rerr(R, rc, u->path, "%s", mpe_io_message(u->f)) : feed(R, u, UINT64_MAX, r);
}

/* r packed into a new entry of the parts list (rank me) */
static int pack_part(struct mpe_report *R, size_t g, const mpe_range *r)
{
  struct pend *pd = pend_push(&R->pv, g, R->me);
  if (!pd || mpe_range_pack(r, NULL, 0, &pd->len) || !(pd->pk = malloc(pd->len)) ||
      mpe_range_pack(r, pd->pk, pd->len, &pd->len))
    return rerr(R, MPE_ENOMEM, NULL, "out of memory");
  return 0;
}

/* The parts of u: into != NULL (one process): each in a fresh accumulator
   merged into `into` in order; else the parts of this rank packed into R->pv
   (rank 0 lists the others' too), the rest passed over. */
static int run_units(struct mpe_report *R, const struct unit *un, int np, mpe_range *into)
{
  int rc = mpe_io_select(un->f, un->i);
  if (rc)
    return rerr(R, rc, un->path, "%s", mpe_io_message(un->f));
  for (size_t u = 0; u < un->nu; u++) {
    int owner = (int)((un->u0 + u) % (size_t)np);
    uint64_t len = u + 1 < un->nu ? un->L : un->count - (uint64_t)u * un->L;
    if (owner != R->me) {
      if (R->me == 0 && !pend_push(&R->pv, un->g, owner))
        return rerr(R, MPE_ENOMEM, NULL, "out of memory");
      continue;
    }
    /* .npy, safetensors and raw data seek; npz members, text and pt read the
       values before the part and throw them away (after this rank's last part,
       nothing is read) */
    if ((rc = mpe_io_seek(un->f, (uint64_t)u * un->L)))
      return rerr(R, rc, un->path, "%s", mpe_io_message(un->f));
    mpe_range *r = alloc_for(R->tg, R->nf, &R->ro, R->total);
    if (!r)
      return rerr(R, MPE_ENOMEM, NULL, "out of memory");
    /* the last part reads to the end, as a whole tensor does */
    int e = feed(R, un, u + 1 < un->nu ? len : UINT64_MAX, &r);
    if (!e && into && mpe_range_merge(into, r))
      e = rerr(R, MPE_ENOMEM, NULL, "out of memory");
    if (!e && !into)
      e = pack_part(R, un->g, r);
    mpe_range_free(r);
    if (e)
      return e;
  }
  return 0;
}

/* ---------------------------------------------------------------- --dtype rules */

/* A member a rule names that stays skipped has another width (a rule of its
   width would have typed it); a readable one has the width of the type it is
   read as. */
enum { RULE_NAMED = 1, RULE_FITS = 2 };

void mpe_report_rules_mark(mpe_io *f, const mpe_io_opts *io, mpe_report_rule_use *u)
{
  for (size_t r = 0; f && io && u && r < io->nrules && r < MPE_REPORT_MAX_RULES; r++) {
    const char *pat = io->rules[r].pattern;
    size_t want = mpe_io_dtype_size(io->rules[r].dtype);
    for (size_t i = 0; !(u->used[r] & RULE_FITS) && i < mpe_io_count(f); i++) {
      mpe_io_tensor ti;
      if (mpe_io_info(f, i, &ti) || !name_match(pat, ti.name))
        continue;
      if (!u->used[r])
        snprintf(u->example[r], sizeof u->example[r], "'%.120s', %zu-byte %s", ti.name,
                 mpe_io_dtype_size(ti.dtype), mpe_type_name(ti.dtype));
      u->used[r] |= RULE_NAMED | (mpe_io_dtype_size(ti.dtype) == want ? RULE_FITS : 0);
    }
    for (size_t i = 0; !u->used[r] && i < mpe_io_skipped(f); i++) {
      const char *n, *d, *w;
      if (!mpe_io_skipped_info(f, i, &n, &d, &w) && name_match(pat, n)) {
        snprintf(u->example[r], sizeof u->example[r], "'%.120s', %.40s", n, d);
        u->used[r] |= RULE_NAMED;
      }
    }
  }
}

int mpe_report_rules_check(const mpe_io_opts *io, const mpe_report_rule_use *u, char *msg, size_t msglen)
{
  if (!io || !u || (msglen && !msg))
    return MPE_EINVAL;
  for (size_t r = 0; r < io->nrules && r < MPE_REPORT_MAX_RULES; r++) {
    const char *tn = mpe_type_name(io->rules[r].dtype);
    size_t w = mpe_io_dtype_size(io->rules[r].dtype);
    if (!u->used[r]) {
      if (msglen)
        snprintf(msg, msglen, "--dtype %s=%s: no member of the input is named so", io->rules[r].pattern, tn);
      return MPE_ENOTFOUND;
    }
    /* a glob naming only members of other widths would change nothing: refused,
       as a plain NAME of another width is when its file opens */
    if (!(u->used[r] & RULE_FITS) && strpbrk(io->rules[r].pattern, "*?[")) {
      if (msglen)
        snprintf(msg, msglen, "--dtype %s=%s: no member it names has %s's width (%zu byte%s), so none is read as %s "
                 "(e.g. %s)", io->rules[r].pattern, tn, tn, w, w == 1 ? "" : "s", tn, u->example[r]);
      return MPE_ENOTFOUND;
    }
  }
  return 0;
}

/* ---------------------------------------------------------------- the walk */

/* a new entry of res for tensor ti of file a (name, shape, dtype) */
static struct tres *res_push(struct mpe_report *R, const mpe_io_tensor *ti, size_t a, const char *path)
{
  if (mpai_grow((void **)&R->res, &R->cap, R->nres + 1, sizeof *R->res))
    return NULL;
  struct tres *t = &R->res[R->nres];
  memset(t, 0, sizeof *t);
  t->file = path;
  t->step = a;
  /* shape and name in one block, the shape first (aligned) */
  size_t nl = strlen(ti->name) + 1, sb = (size_t)ti->ndim * sizeof *t->shape;
  if (!(t->shape = malloc(sb + nl)))
    return NULL;
  memcpy(t->shape, ti->shape, sb);
  t->name = memcpy((char *)t->shape + sb, ti->name, nl);
  t->dtype = ti->dtype;
  t->ndim = ti->ndim;
  R->nres++;
  for (size_t k = 0; k < R->nf; k++)
    if (R->tg[k].t.kind == MPE_TARGET_FX16) {
      t->fxblock = R->tg[k].t.block;
      R->fxused = R->ng == 1 || R->fxused == t->fxblock ? t->fxblock : 0;   /* ng: nres drops while streaming */
    }
  return t;
}

/* a rank other than 0: analyse its parts of the tensor, pack them for rank 0 */
static int tensor_other_rank(struct mpe_report *R, const struct unit *u)
{
  int any = 0;
  for (size_t k = 0; k < u->nu && !any; k++)
    any = (int)((u->u0 + k) % (size_t)R->np) == R->me;
  if (!any)
    return 0;
  R->local = 1;
  int e;
  if (u->nu > 1) {
    e = run_units(R, u, R->np, NULL);
  } else {
    mpe_range *r = alloc_for(R->tg, R->nf, &R->ro, R->total);
    e = !r ? rerr(R, MPE_ENOMEM, NULL, "out of memory") : feed_all(R, u, &r);
    if (!e)
      e = pack_part(R, u->g, r);
    mpe_range_free(r);
  }
  R->local = 0;
  return e;
}

/* rank 0 under mpirun: analyse its own share now; every tensor is merged in order later */
static int tensor_rank0(struct mpe_report *R, const struct unit *u, mpe_range *r)
{
  size_t first = R->pv.n;
  int e = 0;
  if (u->nu > 1)
    e = run_units(R, u, R->np, NULL);
  else if (!pend_push(&R->pv, u->g, (int)(u->u0 % (size_t)R->np)))
    e = rerr(R, MPE_ENOMEM, NULL, "out of memory");
  else if ((int)(u->u0 % (size_t)R->np) == 0)
    e = feed_all(R, u, &r);   /* straight into the tensor's accumulator */
  if (R->pv.n > first) {   /* the tensor's accumulator goes with its first part */
    R->pv.v[first].r = r;
    R->pv.v[first].ri = R->nres - 1;
    R->pv.v[R->pv.n - 1].last = 1;
  } else {
    mpe_range_free(r);
  }
  return e;
}

/* one process: the tensor t (r its accumulator, or NULL to share the last
   empty tensor's results) analysed, summed into the total */
static int tensor_local(struct mpe_report *R, const struct unit *u, struct tres *t, mpe_range *r)
{
  if (!r) {
    /* an empty tensor's results depend only on the targets: copy the last
       empty one's instead of building an accumulator (thousands of empty
       tensors took a millisecond and kilobytes each) */
    if (share_results(t, &R->empty, R->nf))
      return rerr(R, MPE_ENOMEM, NULL, "out of memory");
    return R->i8 ? int8_pass(R, u->f, u->i, u->path, 0.0, &t->i8) : 0;
  }
  int e = u->nu > 1 ? run_units(R, u, 1, r) : feed_all(R, u, &r);
  if (!e && (extract(r, R->nf, t) || mpe_range_merge(R->total, r)))
    e = rerr(R, MPE_ENOMEM, NULL, "out of memory");
  if (!e && R->i8)
    e = int8_pass(R, u->f, u->i, u->path, t->sum.max_abs, &t->i8);
  if (!e && u->count == 0) {
    /* the empty tensors after this one share a copy of its results (t itself
       is freed once written out) */
    free_tres(&R->empty, R->nf);
    memset(&R->empty, 0, sizeof R->empty);
    if (copy_results(&R->empty, t, R->nf))
      return rerr(R, MPE_ENOMEM, NULL, "out of memory");
    R->empty_ok = 1;
    for (size_t k = 0; k < R->nf; k++)
      R->empty_blocks[k] = R->tg[k].t.block;
  }
  return e;
}

/* tensor i of file a, when selected */
static int walk_tensor(struct mpe_report *R, mpe_io *f, size_t i, size_t a)
{
  const char *path = R->paths[a];
  mpe_io_tensor ti;
  mpe_io_info(f, i, &ti);
  int keep = R->nwant == 0;
  for (size_t w = 0; w < R->nwant; w++)
    if (name_match(R->want[w], ti.name))
      keep = 1, R->found[w] = 1;
  if (!keep)
    return 0;
  if (R->max_values && ti.count > R->max_values - R->nvalues) {
    char en[256];
    return rerr(R, MPE_ERANGE, path, "tensor '%s' holds %llu values: with the %llu read before it, over the limit "
                "of %llu values (--max-values)", mpe_report_escape(en, sizeof en, ti.name),
                (unsigned long long)ti.count, (unsigned long long)R->nvalues, (unsigned long long)R->max_values);
  }
  R->nvalues += ti.count;
  struct unit u = { f, i, path, ti.count, 0, 0, R->nu_all, R->ng++ };
  set_blocks(R->tg, R->nf, &ti);
  u.L = unit_len(R->part, R->tg, R->nf, ti.count, &u.nu);
  R->nu_all += u.nu;
  if (R->me > 0)
    return tensor_other_rank(R, &u);
  int share_empty = R->np == 1 && ti.count == 0 && R->empty_ok && same_blocks(R->tg, R->nf, R->empty_blocks);
  mpe_range *r = share_empty ? NULL : alloc_for(R->tg, R->nf, &R->ro, R->total);
  struct tres *t = share_empty || r ? res_push(R, &ti, a, path) : NULL;
  if (!t) {
    mpe_range_free(r);
    return rerr(R, MPE_ENOMEM, NULL, "out of memory");
  }
  if (R->np > 1)
    return tensor_rank0(R, &u, r);
  int e = tensor_local(R, &u, t, r);
  mpe_range_free(r);
  if (e)
    return e;
  step_add(&R->steps[a], t, R->nf);
  if (R->keep_layers && R->nres > 1 && (e = spill_put(R, t)))
    return e;
  if (!R->keep_layers || R->nres > 1)   /* streaming: written out, or the step's sums are all a summary needs */
    free_tres(&R->res[--R->nres], R->nf);
  return 0;
}

/* file a: every tensor of it */
static int walk_file(struct mpe_report *R, size_t a)
{
  const char *path = R->paths[a];
  char msg[300];
  mpe_io *f;
  R->steps[a].file = path;
  int rc = mpe_io_open(&f, path, &R->io, msg, sizeof msg);
  if (rc)
    return rerr(R, rc, path, "%s", msg);
  mpe_report_rules_mark(f, &R->io, R->rule_used);
  if (keep_skips(f, path, R->want, R->nwant, R->found, &R->sk, &R->nsk, &R->csk))
    rc = rerr(R, MPE_ENOMEM, NULL, "out of memory");
  for (size_t i = 0; !rc && i < mpe_io_count(f); i++)
    rc = walk_tensor(R, f, i, a);
  mpe_io_close(f);
  return rc;
}

/* ---------------------------------------------------------------- after the walk */

/* every rank has walked the files: one verdict for all (the worst: no memory
   or the ranks' link 1, anything else 2) */
static int verdict(struct mpe_report *R, int rc)
{
  if (R->np == 1 || !R->comm->max)
    return rc;
  int st = R->comm->max(R->comm->ctx, rc ? (R->e.fail ? 1 : 2) : 0);
  if (!st)
    return rc;
  R->e.fail = st == 1;   /* the worst of all ranks; the one that failed, or rank 0, says why */
  return rc ? rc : st == 1 ? MPE_EIO : MPE_EINVAL;
}

/* the checks once every input is read: each name found, each rule used,
   something to analyse */
static int check_walk(struct mpe_report *R)
{
  for (size_t w = 0; w < R->nwant; w++)
    if (!R->found[w])
      return rerr(R, MPE_ENOTFOUND, NULL, "no tensor named '%s' in the input", R->want[w]);
  char msg[512];
  if (mpe_report_rules_check(&R->io, R->rule_used, msg, sizeof msg))
    return rerr(R, MPE_ENOTFOUND, R->who, "%s", msg);
  if (R->ng > 0)
    return 0;
  const char *where = R->npaths == 1 ? R->paths[0] : NULL;
  if (!R->nsk)
    return rerr(R, MPE_ENOTFOUND, where, "no floating-point tensor to analyse");
  /* say what there was */
  const struct skip *s = &R->sk[0];
  char en[256], hint[400] = "";
  mpe_report_escape(en, sizeof en, s->name);
  if (strstr(s->why, "integer") || strstr(s->why, "untyped"))
    snprintf(hint, sizeof hint, "; --dtype '%s=TYPE' reads it as TYPE's bit patterns", en);
  return rerr(R, MPE_ENOTFOUND, where, "no floating-point tensor to analyse: %s'%s' is %s, skipped (%s)%s",
              R->nsk > 1 ? "every member is skipped, e.g. " : "", en, s->dtype, s->why, hint);
}

/* a rank other than 0: its packed parts to rank 0 */
static int send_parts(struct mpe_report *R)
{
  for (size_t k = 0; k < R->pv.n; k++)
    if (R->comm->send(R->comm->ctx, R->pv.v[k].pk, R->pv.v[k].len, 0))
      return rerr(R, MPE_EIO, NULL, "sending tensor %zu to rank 0 failed", R->pv.v[k].g), R->e.fail = 1, MPE_EIO;
  return 0;
}

/* rank 0: the others' parts, then the total in file order; the parts of a
   tensor are merged into its accumulator in part order */
static int merge_parts(struct mpe_report *R)
{
  mpe_range *cur = NULL;
  size_t ri = 0;
  for (size_t k = 0; k < R->pv.n; k++) {
    struct pend *pd = &R->pv.v[k];
    if (pd->r)
      cur = pd->r, ri = pd->ri;
    int e = 0;
    if (pd->owner != 0) {
      void *b = NULL;
      size_t len = 0;
      e = R->comm->recv(R->comm->ctx, &b, &len, pd->owner) ? MPE_EIO : mpe_range_merge_packed(cur, b, len);
      free(b);
    } else if (pd->pk) {
      e = mpe_range_merge_packed(cur, pd->pk, pd->len);
    }
    if (e) {
      rerr(R, e, NULL, "tensor %zu from rank %d: %s", pd->g, pd->owner, mpe_strerror(e));
      R->e.fail = 1;
      return e;
    }
    if (!pd->last)
      continue;
    struct tres *t = &R->res[ri];
    if (extract(cur, R->nf, t) || mpe_range_merge(R->total, cur))
      return rerr(R, MPE_ENOMEM, NULL, "out of memory");
    step_add(&R->steps[t->step], t, R->nf);
    if (ri > 0 && R->keep_layers && (e = spill_put(R, t)))
      return e;
    if (ri > 0) {   /* written out, or summed into its step */
      free_tres(t, R->nf);
      memset(t, 0, sizeof *t);
    }
  }
  return 0;
}

/* the total, and the per-file shares a plot shows */
static int finish(struct mpe_report *R)
{
  char allname[64];
  snprintf(allname, sizeof allname, "all %zu tensors", R->ng);
  R->all.name = strdup(allname);
  R->all.fxblock = R->fxused;
  R->shares = malloc((R->nf * 3 * R->npaths + 1) * sizeof *R->shares);
  if (!R->all.name || !R->shares || extract(R->total, R->nf, &R->all))
    return rerr(R, MPE_ENOMEM, NULL, "out of memory");
  for (size_t k = 0; k < R->nf; k++)
    for (size_t s = 0; s < R->npaths; s++) {
      const struct step *st = &R->steps[s];
      R->shares[(k * 3 + 0) * R->npaths + s] = share(st->f[k].u, st->count);
      R->shares[(k * 3 + 1) * R->npaths + s] = share(st->f[k].s, st->count);
      R->shares[(k * 3 + 2) * R->npaths + s] = share(st->f[k].o, st->count);
    }
  return 0;
}

/* ---------------------------------------------------------------- setting up */

static char **copy_strings(const char *const *s, size_t n)
{
  char **c = calloc(n + 1, sizeof *c);
  for (size_t k = 0; c && k < n; k++)
    if (!(c[k] = strdup(s[k]))) {
      while (k)
        free(c[--k]);
      free(c);
      return NULL;
    }
  return c;
}

static void free_strings(char **s, size_t n)
{
  for (size_t k = 0; s && k < n; k++)
    free(s[k]);
  free(s);
}

/* the options into R; 0 or an error said in R */
static int setup(struct mpe_report *R, const char *const *paths, size_t npaths, const mpe_report_opts *o)
{
  R->margin = o->margin;
  R->max_values = o->max_values;
  R->json = o->json != 0;
  R->who = o->who;
  R->progress = o->progress;
  R->progress_ctx = o->progress_ctx;
  R->comm = o->comm && o->comm->size > 1 ? o->comm : NULL;
  R->np = R->comm ? R->comm->size : 1;
  R->me = R->comm ? R->comm->rank : 0;
  if (o->io)
    R->io = *o->io;
  if (o->margin < 0 || o->margin > 1000)
    return rerr(R, MPE_EINVAL, NULL, "--margin %d: expected 0 to 1000 bits", o->margin);
  if (o->fx_block < 0 || (size_t)o->fx_block > MPE_RANGE_FX16_MAXBLOCK)
    return rerr(R, MPE_EINVAL, NULL, "--fx-block %ld: expected 1 to %zu", o->fx_block, MPE_RANGE_FX16_MAXBLOCK);
  if (R->comm && (R->me < 0 || R->me >= R->np || !R->comm->max || !R->comm->send || !R->comm->recv))
    return rerr(R, MPE_EINVAL, NULL, "a bad mpe_report_comm (rank %d of %d)", R->me, R->np);
  int rc = parse_targets(R, o->formats ? o->formats : "fp16,bf16,e4m3,e5m2", R->tg, &R->nf, o->fx_block, &R->i8);
  if (rc)
    return rc;
  if (R->i8 && R->np > 1)
    return rerr(R, MPE_EINVAL, NULL, "--format int8 runs in one process only (not under mpirun)");
  if (npaths == 0)
    return rerr(R, MPE_EINVAL, R->who, "no input file");
  R->npaths = npaths;
  R->stepwise = npaths > 1;
  R->keep_layers = !R->stepwise || o->per_layer;
  R->ro.margin = o->margin;
  R->nwant = o->tensors ? o->ntensors : 0;
  if ((rc = o->part_values ? (R->part = o->part_values, 0) : chunk_values(R, &R->part)))
    return rc;
  R->paths = copy_strings(paths, npaths);
  R->want = copy_strings(o->tensors, R->nwant);
  R->total = alloc_for(R->tg, R->nf, &R->ro, NULL);
  R->found = calloc(R->nwant + 1, 1);
  R->rule_used = calloc(1, sizeof *R->rule_used);
  R->steps = calloc(npaths, sizeof *R->steps);
  R->i8buf = R->i8 ? malloc(sizeof *R->i8buf) : NULL;
  if (!R->paths || !R->want || !R->total || !R->found || !R->rule_used || !R->steps || (R->i8 && !R->i8buf))
    return rerr(R, MPE_ENOMEM, NULL, "out of memory");
  return 0;
}

/* the scratch state of the walk, once the report is made */
static void drop_walk(struct mpe_report *R)
{
  for (size_t k = 0; k < R->pv.n; k++) {
    mpe_range_free(R->pv.v[k].r);
    free(R->pv.v[k].pk);
  }
  free(R->pv.v);
  memset(&R->pv, 0, sizeof R->pv);
  mpe_range_free(R->total);
  R->total = NULL;
  free(R->i8buf);
  R->i8buf = NULL;
}

void mpe_report_free(mpe_report *R)
{
  if (!R)
    return;
  drop_walk(R);
  for (size_t i = 0; i < R->nres; i++)
    free_tres(&R->res[i], R->nf);
  free(R->res);
  free_tres(&R->empty, R->nf);
  free_tres(&R->all, R->nf);
  if (R->sp.fp)
    fclose(R->sp.fp);
  free(R->found);
  free(R->rule_used);
  free(R->steps);
  for (size_t k = 0; k < R->nsk; k++) {
    free(R->sk[k].name);
    free(R->sk[k].dtype);
  }
  free(R->sk);
  free(R->shares);
  free_strings(R->paths, R->npaths);
  free_strings(R->want, R->nwant);
  free(R);
}

int mpe_report_run(mpe_report **out, const char *const *paths, size_t npaths, const mpe_report_opts *o,
                   mpe_report_error *err)
{
  if (err)
    memset(err, 0, sizeof *err);
  if (out)
    *out = NULL;
  if (!out || !o || (npaths && !paths) || (o->ntensors && !o->tensors))
    return MPE_EINVAL;
  struct mpe_report *R = calloc(1, sizeof *R);
  if (!R) {
    if (err)
      snprintf(err->msg, sizeof err->msg, "out of memory"), err->fail = 1;
    return MPE_ENOMEM;
  }
  int rc = setup(R, paths, npaths, o);
  if (!rc) {
    for (size_t a = 0; a < npaths && !rc; a++)
      rc = walk_file(R, a);
    rc = verdict(R, rc);
  }
  if (!rc)
    rc = check_walk(R);
  if (!rc && R->me > 0)
    rc = send_parts(R);
  if (!rc && R->me == 0 && R->np > 1)
    rc = merge_parts(R);
  if (!rc && R->me == 0)
    rc = finish(R);
  drop_walk(R);
  if (rc) {
    if (err)
      *err = R->e;
    mpe_report_free(R);
    return rc;
  }
  *out = R;
  return 0;
}

/* ---------------------------------------------------------------- writing */

/* one JSON document, written a tensor at a time: 200,000 tensors as one
   jansson tree took gigabytes */
static int write_json(struct mpe_report *R, FILE *out)
{
  json_t *fl = json_array(), *sl = json_array();
  for (size_t k = 0; k < R->nf; k++)
    json_array_append_new(fl, json_string(R->tg[k].name));
  for (size_t k = 0; k < R->nsk; k++)
    json_array_append_new(sl, json_pack("{s:o, s:s, s:s, s:s}", "file", mpai_json_path(R->sk[k].file), "name", R->sk[k].name,
                                        "dtype", R->sk[k].dtype, "why", R->sk[k].why));
  json_t *head = json_pack("{s:s, s:s, s:s, s:i, s:o, s:o}", "mpanalyze", mpe_version_string(), "command", "range",
                           "rounding", "rne", "margin", R->margin, "formats", fl, "skipped", sl);
  const size_t flags = JSON_INDENT(2) | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(17);
  const size_t one = JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(17) | JSON_COMPACT;
  char *text = head ? json_dumps(head, flags) : NULL;
  json_decref(head);
  if (!text)
    return rerr(R, MPE_ENOMEM, NULL, "out of memory");
  text[strlen(text) - 2] = '\0';   /* drop the closing "\n}" */
  fputs(text, out);
  free(text);
  int rc = 0;
  if (R->stepwise) {
    fputs(",\n  \"steps\": [", out);
    for (size_t s = 0; s < R->npaths && !rc; s++) {
      json_t *o = step_json(&R->steps[s], s, R->tg, R->nf);
      fputs(s ? ",\n    " : "\n    ", out);
      if (!o || json_dumpf(o, out, one))
        rc = write_failed(R, out);
      json_decref(o);
    }
    fputs("\n  ]", out);
  }
  if (R->keep_layers) {
    fputs(",\n  \"tensors\": [", out);
    if (!rc && tensor_write(out, &R->res[0], R->tg, R->nf, 1, R->margin, 1, 0))
      rc = write_failed(R, out);
    if (!rc)
      rc = spill_copy(R, out);
    fputs("\n  ]", out);
  }
  fputs(",\n  \"total\": ", out);
  json_t *o = rc ? NULL : tensor_json(&R->all, R->tg, R->nf, R->margin);
  if (!rc && (!o || json_dumpf(o, out, one)))
    rc = write_failed(R, out);
  json_decref(o);
  fputs("\n}\n", out);
  return rc;
}

static int write_text(struct mpe_report *R, FILE *out)
{
  for (size_t k = 0; k < R->nsk; k++) {
    char ef[512], en[256];
    fprintf(out, "%s: %s  skipped: %s (%s)\n", mpe_report_escape(ef, sizeof ef, R->sk[k].file),
            mpe_report_escape(en, sizeof en, R->sk[k].name), R->sk[k].why, R->sk[k].dtype);
  }
  if (R->nsk)
    fprintf(out, "\n");
  if (R->stepwise)
    print_steps(out, R->steps, R->npaths, R->tg, R->nf);
  int rc = 0;
  if (R->keep_layers) {
    tensor_write(out, &R->res[0], R->tg, R->nf, 0, R->margin, 1, R->ng == 1);
    rc = spill_copy(R, out);
  }
  if (!rc && (R->ng > 1 || R->stepwise)) {
    print_tensor(out, &R->all, R->tg, R->nf);
    print_hist(out, &R->all, R->tg, R->nf);
  }
  if (!rc)
    print_capped(out, R->ng > 1 || R->stepwise ? &R->all : &R->res[0], R->tg, R->nf, R->margin);
  if (!rc && ferror(out))
    rc = write_failed(R, out);
  return rc;
}

int mpe_report_write(const mpe_report *r, FILE *out, mpe_report_error *err)
{
  if (err)
    memset(err, 0, sizeof *err);
  if (!r || !out)
    return MPE_EINVAL;
  if (r->me > 0)
    return 0;   /* rank 0 writes the report */
  /* the scratch file is read back and the error noted: the report's own state */
  struct mpe_report *R = (struct mpe_report *)r;
  memset(&R->e, 0, sizeof R->e);
  int rc = R->json ? write_json(R, out) : write_text(R, out);
  if (rc && err)
    *err = R->e;
  return rc;
}

int mpe_report_string(const mpe_report *r, char **text, mpe_report_error *err)
{
  if (err)
    memset(err, 0, sizeof *err);
  if (!r || !text)
    return MPE_EINVAL;
  *text = NULL;
  size_t len;
  FILE *m = open_memstream(text, &len);
  if (!m)
    return MPE_ENOMEM;
  int rc = mpe_report_write(r, m, err);
  if (fclose(m) && !rc)
    rc = MPE_ENOMEM;
  if (rc) {
    free(*text);
    *text = NULL;
  }
  return rc;
}

int mpe_report_summary_get(const mpe_report *r, mpe_report_summary *s)
{
  if (!r || !s)
    return MPE_EINVAL;
  memset(s, 0, sizeof *s);
  if (r->me > 0)
    return 0;
  s->ntargets = r->nf;
  for (size_t k = 0; k < r->nf; k++) {
    struct limits l = limits_of(&r->tg[k]);
    s->target[k] = (mpe_report_target_info){ r->tg[k].name, l.has, l.minsub, l.minnorm, l.max };
  }
  s->ntensors = r->ng;
  s->nfiles = r->npaths;
  s->shares = r->shares;
  const struct tres *t = r->ng == 1 && r->nres ? &r->res[0] : &r->all;
  s->hist_name = t->name;
  s->hist_first = t->h.first;
  s->hist = t->h.c;
  s->hist_n = t->h.n;
  return 0;
}

int mpe_report_range_json(const mpe_range *r, const mpe_range_target *targets, const char *const *names, size_t n,
                          int margin, char **text)
{
  if (text)
    *text = NULL;
  if (!r || !targets || !names || !text || n == 0 || n > 64)
    return MPE_EINVAL;
  struct target *tg = calloc(n, sizeof *tg);
  struct tres t;
  memset(&t, 0, sizeof t);
  t.name = "";
  int rc = tg ? 0 : MPE_ENOMEM;
  for (size_t k = 0; !rc && k < n; k++) {
    tg[k].t = targets[k];
    if (!names[k] || strlen(names[k]) >= sizeof tg[k].name)
      rc = MPE_EINVAL;
    else
      strcpy(tg[k].name, names[k]);
  }
  if (!rc && extract(r, n, &t))
    rc = MPE_ENOMEM;
  json_t *o = rc ? NULL : tensor_json(&t, tg, n, margin);
  if (!rc && (!o || !(*text = json_dumps(o, JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(17) | JSON_COMPACT))))
    rc = MPE_ENOMEM;
  json_decref(o);
  t.name = NULL;
  free_tres(&t, n);
  free(tg);
  return rc;
}
