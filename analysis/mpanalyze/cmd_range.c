/* mpanalyze range: the gradient-range report. Every file is opened and
   analysed completely before anything is printed, so bad input never leaves
   half a report behind. */
#include <config.h>
#include <errno.h>
#include <stdio.h>
#include <unistd.h>
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

/* "fp16,q8,q16.12,fx16" -> targets; prints the error itself */
static int parse_targets(const char *list, struct target *out, size_t *n, long fxblock)
{
  char buf[256];
  if (strlen(list) >= sizeof buf)
    return mpa_error(NULL, "--format list too long"), -1;
  strcpy(buf, list);
  *n = 0;
  for (char *save, *tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
    if (*n == MAXF)
      return mpa_error(NULL, "too many formats (at most %d)", MAXF), -1;
    struct target *t = &out[*n];
    memset(t, 0, sizeof *t);
    const mpe_format *f = mpe_format_lookup(tok);
    long fb;
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
      return mpa_error(NULL, "unknown format '%s' (fp16, bf16, tf32, e4m3, e5m2, fp32, fp64, q<F>, q16.<F>, fx16)",
                       tok), -1;
    }
    for (size_t j = 0; j < *n; j++)
      if (!strcmp(out[j].name, t->name))
        return mpa_error(NULL, "format '%s' given twice", tok), -1;
    (*n)++;
  }
  if (*n == 0)
    return mpa_error(NULL, "--format needs at least one format"), -1;
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
  return mpe_range_alloc_targets(t, nf, ro);
}

struct fhist { int first; uint64_t *c; size_t n; uint64_t below, above; };

struct tres {
  const char *file;
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
      json_object_set_new(x, "underflow_at_scale", json_integer((json_int_t)s->underflow_at_scale));
      json_object_set_new(x, "underflow_at_scale_flush", json_integer((json_int_t)s->underflow_at_scale_flush));
    } else {
      json_object_set_new(x, "recommended_scale", json_null());
      json_object_set_new(x, "recommended_scale_log2", json_null());
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
      snprintf(sc, sizeof sc, "2^%d", s->scale_log2);
    else
      snprintf(sc, sizeof sc, "-");
    fprintf(out, "  %-6s %-18s %-18s %-16s %-9.3g %-7s %-18s %s\n", tg[k].name,
           pct(s->underflow, t->sum.count, b1, sizeof b1), pct(s->subnormal, t->sum.count, b2, sizeof b2),
           pct(s->overflow, t->sum.count, b3, sizeof b3), s->rel_error, sc,
           pct(s->underflow_at_scale, t->sum.count, b4, sizeof b4),
           pct(s->underflow_at_scale_flush, t->sum.count, b5, sizeof b5));
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

static void help(void)
{
  printf("usage: mpanalyze [range] FILE... [options]\n"
         "  -f, --format LIST   target formats (default fp16,bf16,e4m3,e5m2); also q<F>\n"
         "                      (= q16.<F>: 16-bit fixed point, F fraction bits) and fx16\n"
         "      --fx-block N    fx16 block length (default: the contiguous dimension, at most 65536)\n"
         "  -t, --tensor NAME   only this tensor (may be repeated)\n"
         "  -m, --margin BITS   head room for the recommended scale (default 0)\n"
         "      --dtype T       raw files, and .npy |V2/|V1 arrays: bf16, fp16, e4m3, e5m2, fp32, fp64\n"
         "      --shape D,D..   raw files: the shape (default: from the file size)\n"
         "      --kind K        npy, npz, safetensors, raw, text, pt (default: guessed)\n"
         "      --chunk BYTES   read size (default 4 MiB)\n"
         "      --json          one JSON document on stdout\n"
         "      --plot FILE     binade histogram as .svg or .png\n"
         "  -q, --quiet         no progress bar\n");
}


/* Per-tensor results are written out as soon as they are known, to a spill
   file (unlinked at once, in $TMPDIR), and copied to stdout only when every
   input has been read: memory stays flat in the number of tensors (200,000
   one-value tensors held 3.6 KB of histograms each, 730 MB), and an input
   that fails late still leaves stdout empty. The first tensor stays in
   memory: when it is the only one it is reported with its histogram and plotted. */
struct emitter {
  const struct target *tg;
  size_t nf;
  int json, margin;
  size_t n;             /* tensors emitted */
  struct tres first;
  FILE *spill;
};

static FILE *spill_open(void)
{
  const char *dir = getenv("TMPDIR");
  char path[4096];
  snprintf(path, sizeof path, "%s/mpanalyze.XXXXXX", dir && *dir ? dir : "/tmp");
  int fd = mkstemp(path);
  if (fd < 0)
    return NULL;
  unlink(path);
  FILE *fp = fdopen(fd, "w+b");
  if (!fp)
    close(fd);
  return fp;
}

static int emit_write(struct emitter *em, FILE *out, const struct tres *t, size_t index)
{
  if (em->json) {
    json_t *o = tensor_json(t, em->tg, em->nf, em->margin);
    fputs(index ? ",\n    " : "\n    ", out);
    int bad = !o || json_dumpf(o, out, JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(17) | JSON_COMPACT);
    json_decref(o);
    return bad ? -1 : 0;
  }
  print_tensor(out, t, em->tg, em->nf);
  fputc('\n', out);
  return 0;
}

/* the results of one more tensor, in file order; *t is emptied (its memory
   freed or kept as em->first). MPA_EXIT_* */
static int emit(struct emitter *em, struct tres *t)
{
  int rc = MPA_EXIT_OK;
  if (em->n == 0) {
    em->first = *t;
    memset(t, 0, sizeof *t);
    em->n++;
    return rc;
  }
  if (em->n == 1) {
    if (!(em->spill = spill_open()))
      rc = mpa_error(getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp", "cannot make a scratch file for the report: %s",
                     strerror(errno));
    else if (emit_write(em, em->spill, &em->first, 0))
      rc = mpa_error(NULL, "out of memory"), rc = MPA_EXIT_FAIL;
  }
  if (rc == MPA_EXIT_OK && emit_write(em, em->spill, t, em->n))
    rc = mpa_error(NULL, "out of memory"), rc = MPA_EXIT_FAIL;
  if (rc == MPA_EXIT_OK && ferror(em->spill))
    rc = mpa_error(NULL, "cannot write the report's scratch file in %s: %s", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp",
                   strerror(errno));
  free_tres(t, em->nf);
  memset(t, 0, sizeof *t);
  em->n++;
  return rc;
}

/* the spilled results to stdout. MPA_EXIT_* */
static int spill_copy(FILE *spill)
{
  char b[1 << 16];
  size_t got;
  if (fflush(spill) || ferror(spill) || fseek(spill, 0, SEEK_SET))
    return mpa_error(NULL, "cannot write the report's scratch file: %s", strerror(errno));
  while ((got = fread(b, 1, sizeof b, spill)) > 0)
    if (fwrite(b, 1, got, stdout) != got)
      return mpa_error("standard output", "write failed: %s", strerror(errno));
  if (ferror(spill))
    return mpa_error(NULL, "cannot read back the report's scratch file: %s", strerror(errno));
  return MPA_EXIT_OK;
}

int mpa_cmd_range(int argc, char **argv)
{
  static const struct option lo[] = {
    { "format", required_argument, 0, 'f' }, { "tensor", required_argument, 0, 't' },
    { "margin", required_argument, 0, 'm' }, { "dtype", required_argument, 0, 'd' },
    { "shape", required_argument, 0, 's' }, { "kind", required_argument, 0, 'k' },
    { "chunk", required_argument, 0, 'c' }, { "json", no_argument, 0, 'j' },
    { "plot", required_argument, 0, 'p' }, { "quiet", no_argument, 0, 'q' },
    { "help", no_argument, 0, 'h' }, { "fx-block", required_argument, 0, 'B' }, { 0, 0, 0, 0 } };
  struct target tg[MAXF];
  size_t nf = 0;
  const char *flist = "fp16,bf16,e4m3,e5m2", *plot = NULL;
  const char **want = calloc((size_t)argc + 1, sizeof *want);
  size_t nwant = 0;
  int json = 0;
  long margin = 0, chunk = 0, fxblock = 0;
  mpe_io_opts io;
  memset(&io, 0, sizeof io);
  optind = 1;
  int c, rc = MPA_EXIT_INPUT;
  while ((c = getopt_long(argc, argv, "f:t:m:qh", lo, NULL)) != -1) {
    switch (c) {
    case 'f': flist = optarg; break;
    case 't': want[nwant++] = optarg; break;
    case 'm':
      if (mpa_parse_int(optarg, 0, 1000, &margin)) { mpa_error(NULL, "bad --margin '%s'", optarg); goto out; }
      break;
    case 'd':
      if (mpe_io_dtype_lookup(optarg, &io.dtype)) { mpa_error(NULL, "unknown --dtype '%s'", optarg); goto out; }
      io.has_dtype = 1;
      break;
    case 's': if (mpa_parse_shape(optarg, &io)) goto out; break;
    case 'k': if (mpa_parse_kind(optarg, &io)) goto out; break;
    case 'c':
      if (mpa_parse_int(optarg, 4096, 1L << 40, &chunk)) { mpa_error(NULL, "bad --chunk '%s'", optarg); goto out; }
      io.chunk_bytes = (size_t)chunk;
      break;
    case 'B':
      if (mpa_parse_int(optarg, 1, (long)MPE_RANGE_FX16_MAXBLOCK, &fxblock)) {
        mpa_error(NULL, "bad --fx-block '%s' (1 to %zu)", optarg, MPE_RANGE_FX16_MAXBLOCK);
        goto out;
      }
      break;
    case 'j': json = 1; break;
    case 'p': plot = optarg; break;
    case 'q': mpa_quiet = 1; break;
    case 'h': if (mpa_mpi_rank() == 0) help(); rc = MPA_EXIT_OK; goto out;
    default: goto out;
    }
  }
  if (optind >= argc) {
    mpa_error(NULL, "no input file (mpanalyze --help)");
    goto out;
  }
  if (parse_targets(flist, tg, &nf, fxblock))
    goto out;
  if (plot && ((rc = mpa_plot_check_name(plot)) || (rc = mpa_output_check(plot, argc, argv))))
    goto out;
  rc = MPA_EXIT_INPUT;
  mpe_range_opts ro = { .margin = (int)margin };
  mpe_range *total = alloc_for(tg, nf, &ro);
  size_t fxused = 0;   /* the fx16 block of every tensor, 0 when they differ */
  struct emitter em;
  memset(&em, 0, sizeof em);
  em.tg = tg;
  em.nf = nf;
  em.json = json;
  em.margin = (int)margin;
  /* single process: one tensor's results at a time (cur); under mpirun rank 0
     keeps every tensor's description in res[] until the others' results arrive */
  struct tres cur, *res = NULL;
  memset(&cur, 0, sizeof cur);
  size_t nres = 0, cap = 0;
  struct tres empty;          /* the results of an empty tensor (owned here) */
  memset(&empty, 0, sizeof empty);
  int empty_ok = 0;
  size_t empty_blocks[MAXF];
  char *found = calloc(nwant + 1, 1);
  /* under mpirun (np > 1): tensor g is analysed by rank g mod np; rank 0 keeps an
     accumulator for every tensor (pend[g].r), the others send theirs packed
     (pend[g].pk), and rank 0 merges them into the total in file order, so the
     report is the single-process one bit for bit */
  int np = mpa_mpi_size(), me = mpa_mpi_rank(), failed = 0;
  size_t ng = 0, npend = 0, cpend = 0;
  struct pend { size_t g; mpe_range *r; void *pk; size_t len; } *pend = NULL;
  if (!total || !found) {
    mpa_error(NULL, "out of memory");
    rc = MPA_EXIT_FAIL;
    goto done;
  }
  for (int a = optind; a < argc; a++) {
    const char *path = argv[a];
    mpe_io *f;
    if (mpa_open(path, &io, &f)) {
      failed = 1;
      goto walked;
    }
    for (size_t i = 0; i < mpe_io_count(f); i++) {
      mpe_io_tensor ti;
      mpe_io_info(f, i, &ti);
      int keep = nwant == 0;
      for (size_t w = 0; w < nwant; w++)
        if (!strcmp(want[w], ti.name))
          keep = 1, found[w] = 1;
      if (!keep)
        continue;
      size_t g = ng++;
      int mine = (int)(g % (size_t)np) == me;
      if (np > 1 && (me == 0 || mine) && npend == cpend) {
        cpend = cpend ? 2 * cpend : 16;
        struct pend *np2 = realloc(pend, cpend * sizeof *np2);
        if (!np2) {
          mpe_io_close(f);
          rc = mpa_error(NULL, "out of memory"), rc = MPA_EXIT_FAIL;
          failed = 1;
          goto walked;
        }
        pend = np2;
      }
      if (np > 1 && me > 0) {
        if (!mine)
          continue;
        /* analyse, pack, keep the bytes for rank 0 */
        set_blocks(tg, nf, &ti);
        mpe_range *r = alloc_for(tg, nf, &ro);
        struct pend *pd = &pend[npend++];
        memset(pd, 0, sizeof *pd);
        pd->g = g;
        mpa_err_local = 1;
        int e = r ? mpa_feed(f, i, path, &r, 1, 1.0, NULL) : (mpa_error(NULL, "out of memory"), MPA_EXIT_FAIL);
        if (!e && (mpe_range_pack(r, NULL, 0, &pd->len) || !(pd->pk = malloc(pd->len)) ||
                   mpe_range_pack(r, pd->pk, pd->len, &pd->len)))
          e = mpa_error(NULL, "out of memory"), rc = MPA_EXIT_FAIL;
        mpa_err_local = 0;
        mpe_range_free(r);
        if (e) {
          mpe_io_close(f);
          failed = 1;
          goto walked;
        }
        continue;
      }
      set_blocks(tg, nf, &ti);
      int need_r = !(ti.count == 0 && empty_ok && same_blocks(tg, nf, empty_blocks));
      mpe_range *r = need_r ? alloc_for(tg, nf, &ro) : NULL;
      struct tres *t = &cur;
      if (np > 1) {
        if (nres == cap) {
          cap = cap ? 2 * cap : 16;
          struct tres *nr = realloc(res, cap * sizeof *nr);
          if (!nr) { mpe_range_free(r); r = NULL; need_r = 1; } else res = nr;
        }
        if (nres < cap)
          t = &res[nres++];
      }
      if (!r && need_r) {
        mpe_io_close(f);
        rc = mpa_error(NULL, "out of memory"), rc = MPA_EXIT_FAIL;
        failed = 1;
        goto walked;
      }
      memset(t, 0, sizeof *t);
      t->file = path;
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
          fxused = g == 0 || fxused == t->fxblock ? t->fxblock : 0;
        }
      if (np > 1) {
        /* rank 0: analyse its own share now; merge every tensor in order later */
        struct pend *pd = &pend[npend++];
        memset(pd, 0, sizeof *pd);
        pd->g = g;
        pd->r = r;
        if (!mine)
          continue;
        int e = mpa_feed(f, i, path, &r, 1, 1.0, NULL);
        pd->r = r;   /* mpa_feed may have replaced it */
        if (e) {
          mpe_io_close(f);
          failed = 1;
          goto walked;
        }
        continue;
      }
      int e = 0;
      if (!need_r) {
        /* an empty tensor's results depend only on the targets: copy the
           first empty one's instead of building an accumulator (thousands of
           empty tensors took a millisecond and kilobytes each) */
        if (share_results(t, &empty, nf))
          e = mpa_error(NULL, "out of memory");
      } else {
        e = mpa_feed(f, i, path, &r, 1, 1.0, NULL);
        if (!e && (extract(r, nf, t) || mpe_range_merge(total, r)))
          e = mpa_error(NULL, "out of memory");
        if (!e && ti.count == 0) {
          /* keep these (all-zero) results for the empty tensors after it:
             the histograms pass to `empty`, which frees them last */
          free_tres(&empty, nf);
          memset(&empty, 0, sizeof empty);
          if (share_results(&empty, t, nf)) {
            e = mpa_error(NULL, "out of memory");
          } else {
            empty.shared = 0;
            t->shared = 1;
            empty_ok = 1;
            for (size_t k = 0; k < nf; k++)
              empty_blocks[k] = tg[k].t.block;
          }
        }
      }
      mpe_range_free(r);
      if (!e)
        e = emit(&em, t);
      if (e) {
        rc = e;
        mpe_io_close(f);
        goto done;
      }
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
  if (ng == 0) {
    mpa_error(argv[optind], "no floating-point tensor to analyse");
    goto done;
  }
  if (np > 1 && me > 0) {
    for (size_t k = 0; k < npend; k++)
      if (mpa_mpi_send(pend[k].pk, pend[k].len, 0, 7)) {
        rc = MPA_EXIT_FAIL;
        goto done;
      }
    rc = MPA_EXIT_OK;
    goto done;
  }
  if (np > 1) {
    /* rank 0: the others' accumulators, then the total in file order */
    for (size_t k = 0; k < npend; k++) {
      struct pend *pd = &pend[k];
      int owner = (int)(pd->g % (size_t)np);
      if (owner != 0) {
        void *b = NULL;
        size_t len = 0;
        int e = mpa_mpi_recv(&b, &len, owner, 7) ? MPE_EIO : mpe_range_merge_packed(pd->r, b, len);
        free(b);
        if (e) {
          mpa_error(NULL, "tensor %zu from rank %d: %s", pd->g, owner, mpe_strerror(e));
          rc = MPA_EXIT_FAIL;
          goto done;
        }
      }
      if (extract(pd->r, nf, &res[k]) || mpe_range_merge(total, pd->r)) {
        mpa_error(NULL, "out of memory");
        rc = MPA_EXIT_FAIL;
        goto done;
      }
      mpe_range_free(pd->r);
      pd->r = NULL;
      if ((rc = emit(&em, &res[k])) != MPA_EXIT_OK)
        goto done;
    }
  }
  rc = MPA_EXIT_INPUT;
  size_t ntens = em.n;
  struct tres all;
  memset(&all, 0, sizeof all);
  char allname[64];
  snprintf(allname, sizeof allname, "all %zu tensors", ntens);
  all.name = strdup(allname);
  all.fxblock = fxused;
  if (!all.name || extract(total, nf, &all)) {
    mpa_error(NULL, "out of memory");
    free_tres(&all, nf);
    goto done;
  }
  if (plot) {
    const struct tres *pt = ntens == 1 ? &em.first : &all;
    char title[200];
    snprintf(title, sizeof title, "%s: %s", ntens == 1 ? em.first.file : "mpanalyze", pt->name);
    mpa_mark marks[MAXF];
    size_t nm = 0;
    for (size_t k = 0; k < nf; k++) {
      struct limits l = limits_of(&tg[k]);
      if (l.has)
        marks[nm++] = (mpa_mark){ tg[k].name, l.minsub, l.minnorm, l.max + 1 };
    }
    mpa_hist_plot hp = { title, pt->h.first, pt->h.c, pt->h.n, nm, marks };
    if ((rc = mpa_plot_histogram(plot, &hp))) {
      free_tres(&all, nf);
      goto done;
    }
  }
  if (json) {
    /* one document, written a tensor at a time: 200,000 tensors as one
       jansson tree took gigabytes */
    json_t *fl = json_array();
    for (size_t k = 0; k < nf; k++)
      json_array_append_new(fl, json_string(tg[k].name));
    json_t *head = json_pack("{s:s, s:s, s:s, s:i, s:o}", "mpanalyze", mpe_version_string(), "command", "range",
                             "rounding", "rne", "margin", (int)margin, "formats", fl);
    rc = head ? MPA_EXIT_OK : MPA_EXIT_FAIL;
    const size_t flags = JSON_INDENT(2) | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(17);
    char *text = head ? json_dumps(head, flags) : NULL;
    json_decref(head);
    if (!text) {
      rc = mpa_error(NULL, "out of memory"), rc = MPA_EXIT_FAIL;
    } else {
      text[strlen(text) - 2] = '\0';   /* drop the closing "\n}" */
      fputs(text, stdout);
      free(text);
      fputs(",\n  \"tensors\": [", stdout);
      if (ntens == 1)
        rc = emit_write(&em, stdout, &em.first, 0) ? MPA_EXIT_FAIL : MPA_EXIT_OK;
      else
        rc = spill_copy(em.spill);
      fputs("\n  ],\n  \"total\": ", stdout);
      json_t *o = rc ? NULL : tensor_json(&all, tg, nf, (int)margin);
      if (!rc && (!o || json_dumpf(o, stdout, JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(17) | JSON_COMPACT)))
        rc = mpa_error(NULL, "out of memory"), rc = MPA_EXIT_FAIL;
      json_decref(o);
      fputs("\n}\n", stdout);
    }
  } else {
    rc = MPA_EXIT_OK;
    if (ntens == 1) {
      print_tensor(stdout, &em.first, tg, nf);
      print_hist(stdout, &em.first, tg, nf);
      printf("\n");
    } else {
      rc = spill_copy(em.spill);
      if (rc == MPA_EXIT_OK) {
        print_tensor(stdout, &all, tg, nf);
        print_hist(stdout, &all, tg, nf);
      }
    }
    if (rc == MPA_EXIT_OK && plot && !mpa_quiet)
      fprintf(stderr, "mpanalyze: wrote %s\n", plot);
  }
  free_tres(&all, nf);
done:
  mpa_progress_end();
  for (size_t i = 0; i < nres; i++)
    free_tres(&res[i], nf);
  free(res);
  free_tres(&cur, nf);
  free_tres(&em.first, nf);
  free_tres(&empty, nf);
  if (em.spill)
    fclose(em.spill);
  free(found);
  mpe_range_free(total);
  for (size_t k = 0; k < npend; k++) {
    mpe_range_free(pend[k].r);
    free(pend[k].pk);
  }
  free(pend);
out:
  free(want);
  return rc;
}
