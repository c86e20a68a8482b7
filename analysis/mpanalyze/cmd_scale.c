/* mpanalyze scale: replay a loss scaler over gradient dumps, one file per
   step. Each step's (unscaled) gradients are multiplied by the scale in force,
   rounded to the target format, and the scaler sees whether anything became
   inf/NaN. Dynamic presets skip such steps; "delayed" is Transformer Engine's
   FP8 delayed scaling (the scale comes from the amax of earlier steps). */
#include <config.h>
#include <getopt.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "mpanalyze.h"
#include "../mpai.h"   /* mpai_json_path, inline */

struct step {
  const char *file;
  double scale, amax;
  uint64_t count, underflow, overflow, nonfinite;
  int found_inf, skipped;
};

/* One step file with its gradients multiplied by scale: p's counts and
   p->amax (max |x| of the unscaled values, NaN once a NaN is seen). 0, or
   an exit code with the message said. */
static int step_stats(const char *path, const mpe_io_opts *io, const mpe_format *fmt, const char *const *want,
                      size_t nwant, double scale, struct step *p)
{
  mpe_io *f;
  if (mpa_open(path, io, &f))
    return MPA_EXIT_INPUT;
  mpe_range *r;
  int e = mpe_range_create(&r, &fmt, 1, NULL);
  if (e) {
    mpe_io_close(f);
    mpa_error("scale", "%s", e == MPE_ENOMEM ? "out of memory" : mpe_strerror(e));
    return e == MPE_ENOMEM ? MPA_EXIT_FAIL : MPA_EXIT_INPUT;
  }
  size_t used = 0;
  int err = 0;
  p->amax = 0;
  for (size_t i = 0; i < mpe_io_count(f) && !err; i++) {
    mpe_io_tensor ti;
    mpe_io_info(f, i, &ti);
    int keep = nwant == 0;
    for (size_t w = 0; w < nwant; w++)
      keep |= !strcmp(want[w], ti.name);
    if (!keep)
      continue;
    used++;
    err = mpa_feed(f, i, path, &r, 1, scale, &p->amax);
  }
  mpe_io_close(f);
  if (!err && used == 0)
    err = mpa_error(path, "no matching floating-point tensor");
  if (err) {
    mpe_range_free(r);
    return MPA_EXIT_INPUT;
  }
  mpe_range_summary su;
  mpe_range_stats rs;
  mpe_range_summary_get(r, &su);
  mpe_range_stats_get(r, 0, &rs);
  mpe_range_free(r);
  p->count = su.count;
  p->nonfinite = su.nan + su.inf;
  p->underflow = rs.underflow;
  p->overflow = rs.overflow;
  p->found_inf = p->overflow > 0 || p->nonfinite > 0;
  return 0;
}

/* Would a step whose largest |x| is amax overflow at this scale? The range
   report's own classification of amax * scale (binary64, as mpa_feed scales):
   it is monotone in |x|, so the largest magnitude decides for the whole step. */
static int overflows_at(const mpe_format *fmt, double amax, double scale, int *out)
{
  mpe_range *r;
  if (mpe_range_create(&r, &fmt, 1, NULL))
    return MPA_EXIT_FAIL;
  double v = amax * scale;
  mpe_range_add_f64(r, &v, 1);
  mpe_range_summary su;
  mpe_range_stats rs;
  mpe_range_summary_get(r, &su);
  mpe_range_stats_get(r, 0, &rs);
  mpe_range_free(r);
  *out = rs.overflow > 0 || su.nan + su.inf > 0;
  return 0;
}

/* Under mpirun: the steps' files are shared out among the ranks (step s on
   rank s mod np) in two passes. Pass 1 gives every step's largest |x| and
   non-finite count; every rank then replays the scaler over them (the
   decision "found inf" of a step is that of its largest magnitude, see
   overflows_at); pass 2 counts each step at its scale. The sums of the
   ranks' arrays (zeros where a rank has no step) give every rank the
   single-process table; rank 0 prints it. */
static int scale_ranks(char **paths, size_t ns, const mpe_io_opts *io, const mpe_format *fmt,
                       const char *const *want, size_t nwant, mpe_scaler *sc, mpe_delayed *dl, struct step *st)
{
  const int np = mpa_mpi_size(), me = mpa_mpi_rank();
  double *v = calloc(ns * 6, sizeof *v);
  int status = v ? 0 : MPA_EXIT_FAIL;
  if (!v)
    mpa_error(NULL, "out of memory");
  mpa_err_local = 1;
  for (size_t s = (size_t)me; s < ns && !status; s += (size_t)np) {
    struct step p = { 0 };
    status = step_stats(paths[s], io, fmt, want, nwant, 1.0, &p);
    v[2 * s] = p.amax;
    v[2 * s + 1] = (double)p.nonfinite;
  }
  mpa_err_local = 0;
  if ((status = mpa_mpi_max(status)) || mpa_mpi_sum_double(v, 2 * ns))
    goto out;
  for (size_t s = 0; s < ns && !status; s++) {
    struct step *p = &st[s];
    p->file = paths[s];
    p->scale = sc ? mpe_scaler_scale(sc) : mpe_delayed_scale(dl);
    double amax = v[2 * s];
    int ovf = 0;
    if (v[2 * s + 1] == 0 && (status = overflows_at(fmt, amax, p->scale, &ovf)))
      mpa_error(NULL, "out of memory");
    p->found_inf = v[2 * s + 1] > 0 || ovf;
    if (sc)
      p->skipped = !mpe_scaler_update(sc, p->found_inf);
    else
      mpe_delayed_update(dl, isnan(amax) ? INFINITY : amax);
  }
  double *c = v + 2 * ns;
  memset(c, 0, ns * 4 * sizeof *c);
  mpa_err_local = 1;
  for (size_t s = (size_t)me; s < ns && !status; s += (size_t)np) {
    struct step p = { 0 };
    status = step_stats(paths[s], io, fmt, want, nwant, st[s].scale, &p);
    if (!status && p.found_inf != st[s].found_inf)
      status = mpa_error(paths[s], "internal error: the overflow decision of pass 1 does not hold");
    c[4 * s] = (double)p.count;
    c[4 * s + 1] = (double)p.nonfinite;
    c[4 * s + 2] = (double)p.underflow;
    c[4 * s + 3] = (double)p.overflow;
  }
  mpa_err_local = 0;
  if ((status = mpa_mpi_max(status)) || mpa_mpi_sum_double(c, 4 * ns))
    goto out;
  for (size_t s = 0; s < ns; s++) {
    st[s].amax = v[2 * s];
    st[s].count = (uint64_t)c[4 * s];
    st[s].nonfinite = (uint64_t)c[4 * s + 1];
    st[s].underflow = (uint64_t)c[4 * s + 2];
    st[s].overflow = (uint64_t)c[4 * s + 3];
  }
out:
  free(v);
  return status ? status : MPA_EXIT_OK;
}

/* what the command was asked for */
struct scale_args {
  const char *preset, *plot;
  const mpe_format *fmt;
  double init;
  long interval, hyst, history, margin;   /* margin -1: not given */
  int json, delayed;
};

/* the options of one kind of scaling; MPA_EXIT_* (the error said) */
static int check_kind(struct scale_args *a)
{
  a->delayed = !strcmp(a->preset, "delayed") || !strcmp(a->preset, "te");
  /* an option of the other kind of scaling would be ignored: refused */
  if (!a->delayed && (a->history || a->margin >= 0))
    return mpa_error("scale", "--%s applies to --preset delayed only", a->history ? "history" : "margin");
  if (a->delayed && (a->init > 0 || a->interval || a->hyst))
    return mpa_error("scale", "--%s applies to the dynamic loss scalers, not to --preset delayed",
                     a->init > 0 ? "init" : a->interval ? "interval" : "hysteresis");
  if (a->margin < 0)
    a->margin = 0;
  if (!a->fmt)
    a->fmt = mpe_format_lookup(a->delayed ? "e5m2" : "fp16");
  return MPA_EXIT_OK;
}

/* the scaler the options ask for: *sc (dynamic loss scaling) or *dl (delayed,
   FP8), its parameters in *sp; MPA_EXIT_* (the error said) */
static int make_scaler(const struct scale_args *a, mpe_scaler **sc, mpe_delayed **dl, mpe_scaler_params *sp)
{
  memset(sp, 0, sizeof *sp);
  if (a->delayed) {
    mpe_delayed_params dp = { a->fmt, (int)a->history, (int)a->margin, 0 };
    int e = mpe_delayed_create(dl, &dp);
    if (e)
      return mpa_error("scale", "%s", e == MPE_EINVAL ? "delayed scaling needs a format whose max fits binary32 (e4m3, e5m2, fp16, bf16)"
                                                      : mpe_strerror(e)), e == MPE_EINVAL ? MPA_EXIT_INPUT : MPA_EXIT_FAIL;
    return MPA_EXIT_OK;
  }
  if (mpe_scaler_params_preset(sp, a->preset))
    return mpa_error("scale", "unknown --preset '%s' (pytorch, apex, megatron, deepspeed, deepspeed-zero, keras, delayed)",
                     a->preset);
  if (a->init > 0) {
    sp->init_scale = a->init;
    if (sp->max_scale < a->init) sp->max_scale = a->init;
    if (sp->min_scale > a->init) sp->min_scale = a->init;
  }
  if (a->interval) sp->growth_interval = (int)a->interval;
  if (a->hyst) sp->hysteresis = (int)a->hyst;
  int e = mpe_scaler_create(sc, sp);
  if (e)
    return mpa_error("scale", "%s", e != MPE_EINVAL ? mpe_strerror(e) : sp->storage == MPE_SCALER_BINARY32 && a->init > 0
                     ? "invalid scaler parameters (--init must be a finite non-zero binary32 value for this preset)"
                     : "invalid scaler parameters"), e == MPE_EINVAL ? MPA_EXIT_INPUT : MPA_EXIT_FAIL;
  return MPA_EXIT_OK;
}

/* every --dtype rule names a member it can type, as for range; MPA_EXIT_* */
static int check_rules(char **paths, size_t ns, const mpe_io_opts *io)
{
  mpa_rule_use *ru = calloc(1, sizeof *ru);
  if (!ru)
    return mpa_error("scale", "out of memory"), MPA_EXIT_FAIL;
  int bad = 0, quiet = mpa_quiet;
  mpa_quiet = 1;   /* the skipped-member notes come with the steps' own opens */
  for (size_t s = 0; s < ns && !bad; s++) {
    mpe_io *f;
    if (mpa_open(paths[s], io, &f))
      bad = 1;
    else {
      mpa_rules_mark(f, io, ru);
      mpe_io_close(f);
    }
  }
  mpa_quiet = quiet;
  if (!bad && mpa_rules_check(io, ru))
    bad = 1;
  free(ru);
  return bad ? MPA_EXIT_INPUT : MPA_EXIT_OK;
}

/* the steps replayed through the scaler, in one process or shared among the
   ranks; MPA_EXIT_* (the ranks other than 0 return theirs and print nothing) */
static int replay(char **paths, size_t ns, const mpe_io_opts *io, const mpe_format *fmt, const char **want,
                  size_t nwant, mpe_scaler *sc, mpe_delayed *dl, struct step *st)
{
  if (mpa_mpi_size() > 1)
    return scale_ranks(paths, ns, io, fmt, want, nwant, sc, dl, st);
  for (size_t s = 0; s < ns; s++) {
    struct step *p = &st[s];
    p->file = paths[s];
    p->scale = sc ? mpe_scaler_scale(sc) : mpe_delayed_scale(dl);
    int rc = step_stats(paths[s], io, fmt, want, nwant, p->scale, p);
    if (rc)
      return rc;
    if (sc)
      p->skipped = !mpe_scaler_update(sc, p->found_inf);
    else
      mpe_delayed_update(dl, isnan(p->amax) ? INFINITY : p->amax);
  }
  return MPA_EXIT_OK;
}

static json_t *params_json(const struct scale_args *a, const mpe_scaler_params *sp)
{
  json_t *par = json_object();
  if (a->delayed) {
    json_object_set_new(par, "history_len", json_integer(a->history ? a->history : 1024));
    json_object_set_new(par, "margin", json_integer(a->margin));
    return par;
  }
  json_object_set_new(par, "init_scale", mpa_json_num(sp->init_scale));
  json_object_set_new(par, "growth_factor", mpa_json_num(sp->growth_factor));
  json_object_set_new(par, "backoff_factor", mpa_json_num(sp->backoff_factor));
  json_object_set_new(par, "min_scale", mpa_json_num(sp->min_scale));
  json_object_set_new(par, "max_scale", mpa_json_num(sp->max_scale));
  json_object_set_new(par, "growth_interval", json_integer(sp->growth_interval));
  json_object_set_new(par, "hysteresis", json_integer(sp->hysteresis));
  json_object_set_new(par, "growth_delay", json_integer(sp->growth_delay));
  json_object_set_new(par, "storage", json_string(sp->storage == MPE_SCALER_BINARY32 ? "binary32" : "binary64"));
  return par;
}

static int print_json(const struct scale_args *a, const mpe_scaler_params *sp, const struct step *st, size_t ns,
                      uint64_t nskip, double final_scale)
{
  json_t *doc = json_object(), *arr = json_array();
  json_object_set_new(doc, "mpanalyze", json_string(mpe_version_string()));
  json_object_set_new(doc, "command", json_string("scale"));
  json_object_set_new(doc, "preset", json_string(a->delayed ? "delayed" : a->preset));
  json_object_set_new(doc, "format", json_string(mpe_format_name(a->fmt)));
  json_object_set_new(doc, "params", params_json(a, sp));
  for (size_t s = 0; s < ns; s++) {
    json_t *o = json_object();
    json_object_set_new(o, "step", json_integer((json_int_t)s));
    json_object_set_new(o, "file", mpai_json_path(st[s].file));
    json_object_set_new(o, "scale", mpa_json_num(st[s].scale));
    json_object_set_new(o, "count", json_integer((json_int_t)st[s].count));
    json_object_set_new(o, "max_abs", mpa_json_num(st[s].amax));
    json_object_set_new(o, "nonfinite", json_integer((json_int_t)st[s].nonfinite));
    json_object_set_new(o, "overflow", json_integer((json_int_t)st[s].overflow));
    json_object_set_new(o, "found_inf", json_boolean(st[s].found_inf));
    json_object_set_new(o, "skipped", json_boolean(st[s].skipped));
    json_object_set_new(o, "underflow", json_integer((json_int_t)st[s].underflow));
    json_array_append_new(arr, o);
  }
  json_object_set_new(doc, "steps", arr);
  json_object_set_new(doc, "skipped", json_integer((json_int_t)nskip));
  json_object_set_new(doc, "final_scale", mpa_json_num(final_scale));
  int rc = mpa_json_print(doc);
  json_decref(doc);
  return rc;
}

static void print_text(const struct scale_args *a, const struct step *st, size_t ns, uint64_t nskip,
                       double final_scale)
{
  printf("%s scaler, %s: %zu steps, %llu skipped, final scale %.6g\n", a->delayed ? "delayed (FP8)" : a->preset,
         mpe_format_name(a->fmt), ns, (unsigned long long)nskip, final_scale);
  static const mpa_col cols[] = { { "step", -5 }, { "scale", -12 }, { "max|g|", -10 }, { "overflow", -10 },
                                  { "inf/nan", -8 }, { "skipped", -8 }, { "underflow", 0 } };
  mpa_col c[7];
  memcpy(c, cols, sizeof c);
  if (a->delayed)
    c[5].head = "";   /* delayed scaling skips no step */
  mpa_table_head(stdout, c, 7);
  for (size_t s = 0; s < ns; s++) {
    mpa_cellbuf b[6];
    int e;
    if (frexp(st[s].scale, &e) == 0.5)
      mpa_cell(&b[1], "2^%d", e - 1);
    else
      mpa_cell(&b[1], "%.6g", st[s].scale);
    mpa_table_row(stdout, c, 7, mpa_cell(&b[0], "%zu", s), b[1].s, mpa_cell(&b[2], "%.4g", st[s].amax),
                  mpa_cell(&b[3], "%llu", (unsigned long long)st[s].overflow),
                  mpa_cell(&b[4], "%llu", (unsigned long long)st[s].nonfinite),
                  a->delayed ? "" : st[s].skipped ? "yes" : "no",
                  mpa_cell(&b[5], "%llu (%.3g%%)", (unsigned long long)st[s].underflow,
                           st[s].count ? 100.0 * (double)st[s].underflow / (double)st[s].count : 0.0));
  }
  if (a->plot && !mpa_quiet)
    fprintf(stderr, "mpanalyze: wrote %s\n", a->plot);
}

/* the replay, the plot and the report, once the scaler is made; MPA_EXIT_* */
static int run_scale(const struct scale_args *a, const mpe_scaler_params *sp, char **paths, size_t ns,
                     const mpe_io_opts *io, const char **want, size_t nwant, mpe_scaler *sc, mpe_delayed *dl)
{
  struct step *st = calloc(ns, sizeof *st);
  double *scales = calloc(ns, sizeof *scales);
  int *ovf = calloc(ns, sizeof *ovf);
  int rc = !st || !scales || !ovf ? (mpa_error(NULL, "out of memory"), MPA_EXIT_FAIL) : MPA_EXIT_OK;
  if (!rc && io->nrules)
    rc = check_rules(paths, ns, io);
  if (!rc)
    rc = replay(paths, ns, io, a->fmt, want, nwant, sc, dl, st);
  mpa_progress_end();
  if (!rc && mpa_mpi_rank() == 0) {   /* rank 0 alone prints, the others end with its status */
    for (size_t s = 0; s < ns; s++) {
      scales[s] = st[s].scale;
      ovf[s] = st[s].found_inf;
    }
    char title[160];
    snprintf(title, sizeof title, "%s loss scale, %s (x: overflow)", a->preset, mpe_format_name(a->fmt));
    if (a->plot)
      rc = mpa_plot_scale(a->plot, title, scales, ovf, ns);
  }
  if (!rc && mpa_mpi_rank() == 0) {
    double final_scale = sc ? mpe_scaler_scale(sc) : mpe_delayed_scale(dl);
    uint64_t nskip = 0;
    for (size_t s = 0; s < ns; s++)
      nskip += (uint64_t)st[s].skipped;
    if (a->json)
      rc = print_json(a, sp, st, ns, nskip, final_scale);
    else
      print_text(a, st, ns, nskip, final_scale);
  }
  free(st);
  free(scales);
  free(ovf);
  return rc;
}

int mpa_cmd_scale(int argc, char **argv)
{
  struct scale_args a = { NULL, NULL, NULL, 0, 0, 0, 0, -1, 0, 0 };
  const char **want = calloc((size_t)argc + 1, sizeof *want);
  size_t nwant = 0;
  int first, rc;
  char **paths = NULL;   /* the step files, folders and globs expanded */
  size_t ns = 0;
  mpe_io_opts io;
  memset(&io, 0, sizeof io);
  io.max_memory = mpa_max_memory;   /* what a reader may hold for one file */
  const mpa_opt opts[] = {
    { "preset", 'p', MPA_STRING, &a.preset, 0, 0, "NAME",
      "pytorch, apex, megatron, deepspeed, deepspeed-zero, keras, or delayed (FP8)", NULL, NULL, 0 },
    { "format", 'f', MPA_FORMAT, &a.fmt, 0, 0, "F", "the format of the scaled gradients (default fp16; delayed: e5m2)",
      NULL, NULL, 0 },
    { "tensor", 't', MPA_STRINGS, want, 0, 0, "NAME", "only this tensor of each step (may be repeated)", NULL, &nwant, 0 },
    { "init", 0, MPA_DOUBLE, &a.init, 0, INFINITY, "S", "initial scale", NULL, NULL, MPA_LO_OPEN },
    { "interval", 0, MPA_LONG, &a.interval, 1, 0x1p30, "N", "growth interval", NULL, NULL, 0 },
    { "hysteresis", 0, MPA_LONG, &a.hyst, 1, 0x1p30, "N", "overflows tolerated before the scale backs off", NULL, NULL, 0 },
    { "history", 0, MPA_LONG, &a.history, 1, 0x1p24, "N", "delayed: amax history length (default 1024)", NULL, NULL, 0 },
    { "margin", 'm', MPA_LONG, &a.margin, 0, 126, "BITS", "delayed: scale = max / amax / 2^margin (default 0)", NULL, NULL, 0 },
    { "dtype", 0, MPA_DTYPE, &io, 0, 0, "T", "as for range", NULL, NULL, 0 },
    { "shape", 0, MPA_SHAPE, &io, 0, 0, "D,D..", "as for range", NULL, NULL, 0 },
    { "kind", 0, MPA_KIND, &io, 0, 0, "K", "as for range", NULL, NULL, 0 },
    MPA_OPT_JSON(&a.json),
    { "plot", 0, MPA_PLOT, &a.plot, 0, 0, "FILE", "the scale trajectory as .svg or .png", NULL, NULL, 0 },
    { "quiet", 'q', MPA_FLAG, &mpa_quiet, 0, 0, NULL, "no progress bar", NULL, NULL, 0 },
    MPA_OPT_END };
  const mpa_cli cli = { "scale", "usage: mpanalyze scale --preset NAME [options] STEP_FILE...", NULL, opts };
  if (!want)
    return mpa_error(NULL, "out of memory"), MPA_EXIT_FAIL;
  if ((rc = mpa_parse(&cli, argc, argv, &first))) {
    free(want);
    return rc == 1 ? MPA_EXIT_OK : rc;
  }
  if (!a.preset)
    rc = mpa_error("scale", "--preset is required (pytorch, apex, megatron, deepspeed, deepspeed-zero, keras, delayed)");
  else if (first >= argc)
    rc = mpa_error("scale", "no step file (mpanalyze scale --help)");
  mpe_scaler *sc = NULL;
  mpe_delayed *dl = NULL;
  mpe_scaler_params sp;
  if (!rc)
    rc = check_kind(&a);
  if (!rc)
    rc = mpa_expand_inputs(argc - first, argv + first, &paths, &ns);
  if (!rc && a.plot && mpa_output_check(a.plot, (int)ns, paths))
    rc = MPA_EXIT_INPUT;
  if (!rc)
    rc = make_scaler(&a, &sc, &dl, &sp);
  if (!rc)
    rc = run_scale(&a, &sp, paths, ns, &io, want, nwant, sc, dl);
  mpa_progress_end();
  mpe_scaler_free(sc);
  mpe_delayed_free(dl);
  mpa_free_inputs(paths, ns);
  free(want);
  return rc;
}
