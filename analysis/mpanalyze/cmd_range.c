/* mpanalyze range: the gradient-range report. Every file is opened and
   analysed completely before anything is printed, so bad input never leaves
   half a report behind. */
#include <config.h>
#include <getopt.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "mpanalyze.h"

#define MAXF 16

struct fhist { int first; uint64_t *c; size_t n; uint64_t below, above; };

struct tres {
  const char *file;
  char *name;
  mpe_type dtype;
  int ndim;
  uint64_t shape[MPE_IO_MAXDIM];
  mpe_range_summary sum;
  mpe_range_stats st[MAXF];
  struct fhist h;             /* over the data's binades */
  struct fhist fh[MAXF];      /* over each format's binades */
};

static int get_hist(const mpe_range *r, int k, struct fhist *h)
{
  size_t n;
  mpe_range_histogram(r, k, &h->first, NULL, 0, &n, NULL, NULL);
  h->c = calloc(n ? n : 1, sizeof *h->c);
  if (!h->c)
    return -1;
  return mpe_range_histogram(r, k, &h->first, h->c, n, &h->n, &h->below, &h->above);
}

static int extract(const mpe_range *r, size_t nf, struct tres *t)
{
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
  free(t->name);
  free(t->h.c);
  for (size_t k = 0; k < nf; k++)
    free(t->fh[k].c);
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

static json_t *tensor_json(const struct tres *t, const mpe_format **fm, size_t nf, int margin)
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
      json_object_set_new(x, "underflow_at_scale", json_integer(0));
      json_object_set_new(x, "underflow_at_scale_flush", json_integer(0));
    }
    json_object_set_new(x, "max_finite", json_real(mpe_format_max(fm[k])));
    json_object_set_new(x, "min_normal", json_real(mpe_format_min_normal(fm[k])));
    json_object_set_new(x, "min_subnormal", json_real(mpe_format_min_subnormal(fm[k])));
    json_object_set_new(x, "histogram", hist_json(&t->fh[k], 1));
    json_object_set_new(fo, mpe_format_name(fm[k]), x);
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

static void print_tensor(const struct tres *t, const mpe_format **fm, size_t nf)
{
  char b1[48], b2[48], b3[48], b4[48], b5[48];
  if (t->file) {
    char sh[160];
    shape_text(t, sh, sizeof sh);
    printf("%s: %s  %s %s  %llu values\n", t->file, t->name, mpe_type_name(t->dtype), sh,
           (unsigned long long)t->sum.count);
  } else {
    printf("%s  %llu values\n", t->name, (unsigned long long)t->sum.count);
  }
  printf("  zeros %s  nan %llu  inf %llu", pct(t->sum.zeros, t->sum.count, b1, sizeof b1),
         (unsigned long long)t->sum.nan, (unsigned long long)t->sum.inf);
  if (t->sum.max_abs > 0)
    printf("  max|x| %.4g (2^%d)  min|x|>0 %.4g (2^%d)", t->sum.max_abs, ilogb(t->sum.max_abs),
           t->sum.min_abs_nonzero, ilogb(t->sum.min_abs_nonzero));
  printf("\n  %-6s %-18s %-18s %-16s %-9s %-7s %-18s %s\n", "format", "underflow", "subnormal", "overflow",
         "rel.err", "scale", "underflow@scale", "(flushed)");
  for (size_t k = 0; k < nf; k++) {
    const mpe_range_stats *s = &t->st[k];
    char sc[16];
    if (s->has_scale)
      snprintf(sc, sizeof sc, "2^%d", s->scale_log2);
    else
      snprintf(sc, sizeof sc, "-");
    printf("  %-6s %-18s %-18s %-16s %-9.3g %-7s %-18s %s\n", mpe_format_name(fm[k]),
           pct(s->underflow, t->sum.count, b1, sizeof b1), pct(s->subnormal, t->sum.count, b2, sizeof b2),
           pct(s->overflow, t->sum.count, b3, sizeof b3), s->rel_error, sc,
           pct(s->underflow_at_scale, t->sum.count, b4, sizeof b4),
           pct(s->underflow_at_scale_flush, t->sum.count, b5, sizeof b5));
  }
}

static void print_hist(const struct tres *t, const mpe_format **fm, size_t nf)
{
  if (t->h.n == 0)
    return;
  uint64_t mx = 0;
  for (size_t i = 0; i < t->h.n; i++)
    if (t->h.c[i] > mx)
      mx = t->h.c[i];
  printf("  binades of |x| (marks: %s limits)\n", mpe_format_name(fm[0]));
  int emin = mpe_format_emin(fm[0]), emax = mpe_format_emax(fm[0]), p = mpe_format_precision(fm[0]);
  (void)nf;
  for (size_t i = 0; i < t->h.n; i++) {
    int e = t->h.first + (int)i;
    int w = mx ? (int)((50 * t->h.c[i] + mx - 1) / mx) : 0;
    char bar[51];
    memset(bar, '#', (size_t)w);
    bar[w] = 0;
    const char *mark = e == emax ? "  <- max finite binade" : e == emin ? "  <- min normal" :
                       e == emin - p + 1 ? "  <- min subnormal" : e == emin - p ? "  <- 2^e and below round to 0" : "";
    if (e > emax)
      mark = "  overflows";
    printf("  2^%-5d %10llu %-50s%s\n", e, (unsigned long long)t->h.c[i], bar, mark);
  }
}

/* ---------------------------------------------------------------- command */

static void help(void)
{
  printf("usage: mpanalyze [range] FILE... [options]\n"
         "  -f, --format LIST   target formats (default fp16,bf16,e4m3,e5m2)\n"
         "  -t, --tensor NAME   only this tensor (may be repeated)\n"
         "  -m, --margin BITS   head room for the recommended scale (default 0)\n"
         "      --dtype T       raw files, and .npy |V2/|V1 arrays: bf16, fp16, e4m3, e5m2, fp32, fp64\n"
         "      --shape D,D..   raw files: the shape (default: from the file size)\n"
         "      --kind K        npy, npz, safetensors, raw, text (default: guessed)\n"
         "      --chunk BYTES   read size (default 4 MiB)\n"
         "      --json          one JSON document on stdout\n"
         "      --plot FILE     binade histogram as .svg or .png\n"
         "  -q, --quiet         no progress bar\n");
}

int mpa_cmd_range(int argc, char **argv)
{
  static const struct option lo[] = {
    { "format", required_argument, 0, 'f' }, { "tensor", required_argument, 0, 't' },
    { "margin", required_argument, 0, 'm' }, { "dtype", required_argument, 0, 'd' },
    { "shape", required_argument, 0, 's' }, { "kind", required_argument, 0, 'k' },
    { "chunk", required_argument, 0, 'c' }, { "json", no_argument, 0, 'j' },
    { "plot", required_argument, 0, 'p' }, { "quiet", no_argument, 0, 'q' },
    { "help", no_argument, 0, 'h' }, { 0, 0, 0, 0 } };
  const mpe_format *fm[MAXF];
  size_t nf = 0;
  const char *flist = "fp16,bf16,e4m3,e5m2", *plot = NULL;
  const char **want = calloc((size_t)argc + 1, sizeof *want);
  size_t nwant = 0;
  int json = 0;
  long margin = 0, chunk = 0;
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
    case 'j': json = 1; break;
    case 'p': plot = optarg; break;
    case 'q': mpa_quiet = 1; break;
    case 'h': help(); rc = MPA_EXIT_OK; goto out;
    default: goto out;
    }
  }
  if (optind >= argc) {
    mpa_error(NULL, "no input file (mpanalyze --help)");
    goto out;
  }
  if (mpa_parse_formats(flist, fm, MAXF, &nf))
    goto out;
  if (plot && (rc = mpa_plot_check_name(plot)))
    goto out;
  rc = MPA_EXIT_INPUT;
  mpe_range_opts ro = { .margin = (int)margin };
  mpe_range *total = mpe_range_alloc(fm, nf, &ro);
  struct tres *res = NULL;
  size_t nres = 0, cap = 0;
  char *found = calloc(nwant + 1, 1);
  if (!total || !found) {
    mpa_error(NULL, "out of memory");
    rc = MPA_EXIT_FAIL;
    goto done;
  }
  for (int a = optind; a < argc; a++) {
    const char *path = argv[a];
    mpe_io *f;
    if (mpa_open(path, &io, &f))
      goto done;
    for (size_t i = 0; i < mpe_io_count(f); i++) {
      mpe_io_tensor ti;
      mpe_io_info(f, i, &ti);
      int keep = nwant == 0;
      for (size_t w = 0; w < nwant; w++)
        if (!strcmp(want[w], ti.name))
          keep = 1, found[w] = 1;
      if (!keep)
        continue;
      mpe_range *r = mpe_range_alloc(fm, nf, &ro);
      if (nres == cap) {
        cap = cap ? 2 * cap : 16;
        struct tres *nr = realloc(res, cap * sizeof *nr);
        if (!nr) { mpe_range_free(r); r = NULL; } else res = nr;
      }
      if (!r) {
        mpe_io_close(f);
        rc = mpa_error(NULL, "out of memory"), rc = MPA_EXIT_FAIL;
        goto done;
      }
      struct tres *t = &res[nres++];
      memset(t, 0, sizeof *t);
      t->file = path;
      t->name = strdup(ti.name);
      t->dtype = ti.dtype;
      t->ndim = ti.ndim;
      memcpy(t->shape, ti.shape, sizeof t->shape);
      mpe_range *both[2] = { r, total };
      int e = mpa_feed(f, i, path, both, 2, 1.0, NULL);
      if (!e && extract(r, nf, t))
        e = mpa_error(NULL, "out of memory");
      mpe_range_free(r);
      if (e) {
        mpe_io_close(f);
        goto done;
      }
    }
    mpe_io_close(f);
  }
  mpa_progress_end();
  for (size_t w = 0; w < nwant; w++)
    if (!found[w]) {
      mpa_error(NULL, "no tensor named '%s' in the input", want[w]);
      goto done;
    }
  if (nres == 0) {
    mpa_error(argv[optind], "no floating-point tensor to analyse");
    goto done;
  }
  struct tres all;
  memset(&all, 0, sizeof all);
  char allname[64];
  snprintf(allname, sizeof allname, "all %zu tensors", nres);
  all.name = strdup(allname);
  if (extract(total, nf, &all)) {
    mpa_error(NULL, "out of memory");
    goto done;
  }
  if (plot) {
    const struct tres *pt = nres == 1 ? &res[0] : &all;
    char title[200];
    snprintf(title, sizeof title, "%s: %s", nres == 1 ? res[0].file : "mpanalyze", pt->name);
    mpa_hist_plot hp = { title, pt->h.first, pt->h.c, pt->h.n, nf, fm };
    if ((rc = mpa_plot_histogram(plot, &hp))) {
      free_tres(&all, nf);
      goto done;
    }
  }
  if (json) {
    json_t *doc = json_object(), *arr = json_array(), *fl = json_array();
    json_object_set_new(doc, "mpanalyze", json_string(mpe_version_string()));
    json_object_set_new(doc, "command", json_string("range"));
    json_object_set_new(doc, "rounding", json_string("rne"));
    json_object_set_new(doc, "margin", json_integer(margin));
    for (size_t k = 0; k < nf; k++)
      json_array_append_new(fl, json_string(mpe_format_name(fm[k])));
    json_object_set_new(doc, "formats", fl);
    for (size_t i = 0; i < nres; i++)
      json_array_append_new(arr, tensor_json(&res[i], fm, nf, (int)margin));
    json_object_set_new(doc, "tensors", arr);
    json_object_set_new(doc, "total", tensor_json(&all, fm, nf, (int)margin));
    rc = mpa_json_print(doc);
    json_decref(doc);
  } else {
    for (size_t i = 0; i < nres; i++) {
      print_tensor(&res[i], fm, nf);
      if (nres == 1)
        print_hist(&res[i], fm, nf);
      printf("\n");
    }
    if (nres > 1) {
      print_tensor(&all, fm, nf);
      print_hist(&all, fm, nf);
    }
    if (plot && !mpa_quiet)
      fprintf(stderr, "mpanalyze: wrote %s\n", plot);
    rc = MPA_EXIT_OK;
  }
  free_tres(&all, nf);
done:
  mpa_progress_end();
  for (size_t i = 0; i < nres; i++)
    free_tres(&res[i], nf);
  free(res);
  free(found);
  mpe_range_free(total);
out:
  free(want);
  return rc;
}
