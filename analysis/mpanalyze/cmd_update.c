/* mpanalyze update: apply update dumps to weight dumps under the four
   master-weight strategies (mpe_update_study(3)) and report the updates that
   vanish (w + u == w with u != 0) and the drift from a binary64 reference.
   The updates file holds one or more rows of as many values as the weights;
   step t adds row t mod rows. Self-contained (libmpemu and Jansson only), so
   tests/check_update links it directly. */
#include <config.h>
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <jansson.h>
#include <mpemu.h>
#include "mpanalyze.h"

/* path opened in *f, its tensor `tensor` (NULL: the first) in *idx and *t;
   0, or the error said and f closed */
static int open_tensor(const char *path, const char *tensor, const mpe_io_opts *io, mpe_io **f, size_t *idx,
                       mpe_io_tensor *t)
{
  char msg[256] = "";
  int rc = mpe_io_open(f, path, io, msg, sizeof msg);
  if (rc)
    return mpa_error(path, "%s", msg[0] ? msg : mpe_strerror(rc));
  *idx = 0;
  if (tensor && mpe_io_find(*f, tensor, idx))
    rc = mpa_error(path, "no tensor named '%s'", tensor);
  else if (mpe_io_count(*f) == 0)
    rc = mpa_error(path, "no floating-point tensor");
  else if (mpe_io_info(*f, *idx, t))
    rc = mpa_error(path, "%s", mpe_io_message(*f));
  if (rc) {
    mpe_io_close(*f);
    *f = NULL;
  }
  return rc;
}

/* The values of the tensor load() would read, from the header alone. */
static int count_of(const char *path, const char *tensor, const mpe_io_opts *io, uint64_t *count)
{
  mpe_io *f;
  size_t idx;
  mpe_io_tensor t;
  int rc = open_tensor(path, tensor, io, &f, &idx, &t);
  if (!rc)
    *count = t.count;
  mpe_io_close(f);
  return rc;
}

/* Up front: the study holds every value at once, the weights and updates in
   binary64 and five (six for master and Kahan) binary64 arrays per weight in
   each of the four strategies, 8 * (1 + 22) bytes per weight; past
   --max-memory it stops before reading. */
static int check_budget(const char *wpath, uint64_t nw, uint64_t nu, int quiet)
{
  uint64_t limit = mpa_max_memory;
  if (!limit)
    return MPA_EXIT_OK;
  const uint64_t per_weight = 8 * (1 + 22);
  uint64_t need = nw > UINT64_MAX / per_weight ? UINT64_MAX : nw * per_weight;
  need = nu > (UINT64_MAX - need) / 8 ? UINT64_MAX : need + nu * 8;
  if (need <= limit) {
    if (!quiet && need >= (1ull << 30))   /* say it before a long, large run */
      fprintf(stderr, "mpanalyze update: holding %llu weights and %llu update values needs about %.1f GiB "
              "(limit %.1f GiB, --max-memory)\n", (unsigned long long)nw, (unsigned long long)nu,
              (double)need / 0x1p30, (double)limit / 0x1p30);
    return MPA_EXIT_OK;
  }
  char what[160];
  snprintf(what, sizeof what, "the update study of %llu weights and %llu update values, all held at once,",
           (unsigned long long)nw, (unsigned long long)nu);
  return mpa_budget(wpath, what, need);
}

/* Read one tensor of `path` into a new binary64 array. */
static int load(const char *path, const char *tensor, const mpe_io_opts *io, double **out, size_t *count)
{
  mpe_io *f;
  size_t idx;
  mpe_io_tensor t;
  int rc = open_tensor(path, tensor, io, &f, &idx, &t);
  if (rc)
    return rc;
  if ((rc = mpe_io_select(f, idx))) {
    mpe_io_close(f);
    return mpa_error(path, "%s", mpe_strerror(rc));
  }
  if (t.count > (uint64_t)(SIZE_MAX / sizeof(double))) {
    mpe_io_close(f);
    return mpa_error(path, "tensor too large");
  }
  size_t n = (size_t)t.count;
  void *v;
  rc = mpa_read_values(f, path, t.value_type, MPE_FP64, n, &v);
  mpe_io_close(f);
  if (rc)
    return rc;
  *out = v;
  *count = n;
  return MPA_EXIT_OK;
}

int mpa_cmd_update(int argc, char **argv)
{
  const char *wpath = NULL, *upath = NULL, *tensor = NULL;
  const mpe_format *f = mpe_format_lookup("fp16"), *m = mpe_format_lookup("fp32");
  unsigned long long seed = 0;
  long steps = 0;
  int json = 0, quiet = 0;
  mpe_io_opts io;
  memset(&io, 0, sizeof io);
  io.max_memory = mpa_max_memory;   /* what a reader may hold for one file */
  const mpa_opt opts[] = {
    { "weights", 'w', MPA_PATH_IN, &wpath, 0, 0, "FILE", "the weights (npy, npz, safetensors, raw, text)", NULL, NULL, 0 },
    { "updates", 'u', MPA_PATH_IN, &upath, 0, 0, "FILE",
      "the updates w += u: as many values as the weights, or a multiple\n"
      "of that (one row per step; step t uses row t mod rows)", NULL, NULL, 0 },
    { "format", 'f', MPA_FORMAT, &f, 0, 0, "F", "the low format the weights are held in (default fp16)", NULL, NULL, 0 },
    { "master", 0, MPA_FORMAT, &m, 0, 0, "F", "the master-weight format (default fp32)", NULL, NULL, 0 },
    { "steps", 'n', MPA_LONG, &steps, 1, 0x1p40, "N", "steps to apply (default: the number of rows)", NULL, NULL, 0 },
    { "tensor", 't', MPA_STRING, &tensor, 0, 0, "NAME", "the tensor to read from each file (default: the first)",
      NULL, NULL, 0 },
    { "seed", 0, MPA_U64, &seed, 0, 0x1p64, "S", "stochastic-rounding seed (default 0)", "a non-negative integer",
      NULL, 0 },
    { "dtype", 0, MPA_DTYPE, &io, 0, 0, "T", "what raw files (and |V2 .npy arrays) hold", NULL, NULL, MPA_PLAIN },
    MPA_OPT_JSON(&json),
    { "quiet", 'q', MPA_FLAG, &quiet, 0, 0, NULL, "no notes", NULL, NULL, 0 },
    MPA_OPT_END };
  const mpa_cli cli = { "update", "usage: mpanalyze update --weights W --updates U [options]", NULL, opts };
  int rc = mpa_parse_no_operands(&cli, argc, argv);
  if (rc >= 0)
    return rc;
  if (!wpath || !upath)
    return mpa_error("update", "--weights and --updates are required (mpanalyze update --help)");
  const char *fname = mpe_format_name(f), *mname = mpe_format_name(m);
  if (mpe_format_precision(f) > 24)
    return mpa_error("update", "--format %s: the low format needs at most 24 bits of precision", fname);
  if (mpe_format_precision(m) < mpe_format_precision(f) || mpe_format_precision(m) > 51)
    return mpa_error("update", "--master %s: needs at least the precision of %s and at most 51 bits",
                     mname, fname);

  double *w = NULL, *u = NULL;
  size_t nw = 0, nu = 0;
  uint64_t cw = 0, cu = 0;
  rc = count_of(wpath, tensor, &io, &cw);
  if (rc || (rc = count_of(upath, tensor, &io, &cu)) || (rc = check_budget(wpath, cw, cu, quiet)))
    return rc;
  rc = load(wpath, tensor, &io, &w, &nw);
  if (rc)
    return rc;
  if ((rc = load(upath, tensor, &io, &u, &nu))) {
    free(w);
    return rc;
  }
  if (nw == 0 || nu == 0 || nu % nw) {
    free(w);
    free(u);
    return mpa_error(upath, "%zu values: not a positive multiple of the %zu weights in %s", nu, nw, wpath);
  }
  size_t rows = nu / nw;
  if (!steps)
    steps = (long)rows;
  for (size_t i = 0; i < nw; i++)
    if (!isfinite(w[i])) {
      free(w);
      free(u);
      return mpa_error(wpath, "value %zu is not finite", i);
    }

  mpe_update_opts o = { m, (uint64_t)seed, 0, 0 };
  mpe_update_stats st[MPE_UPDATE_NSTRATEGIES];
  rc = mpe_update_study(st, w, nw, u, rows, steps, f, &o);
  free(w);
  free(u);
  if (rc) {
    mpa_error("update", "update study failed: %s", mpe_strerror(rc));
    return MPA_EXIT_FAIL;
  }

  if (json) {
    json_t *doc = json_object(), *strat = json_object();
    json_object_set_new(doc, "command", json_string("update"));
    json_object_set_new(doc, "weights_file", json_string(wpath));
    json_object_set_new(doc, "updates_file", json_string(upath));
    json_object_set_new(doc, "format", json_string(mpe_format_name(f)));
    json_object_set_new(doc, "master", json_string(mpe_format_name(m)));
    json_object_set_new(doc, "weights", json_integer((json_int_t)nw));
    json_object_set_new(doc, "rows", json_integer((json_int_t)rows));
    json_object_set_new(doc, "steps", json_integer((json_int_t)steps));
    json_object_set_new(doc, "seed", json_integer((json_int_t)seed));
    for (int k = 0; k < MPE_UPDATE_NSTRATEGIES; k++) {
      const mpe_update_stats *s = &st[k];
      json_t *o2 = json_object();
      json_object_set_new(o2, "updates", json_integer((json_int_t)s->updates));
      json_object_set_new(o2, "lost", json_integer((json_int_t)s->lost));
      json_object_set_new(o2, "lost_fraction", mpa_json_num(s->lost_fraction));
      json_object_set_new(o2, "stale", json_integer((json_int_t)s->stale));
      json_object_set_new(o2, "stale_fraction", mpa_json_num(s->stale_fraction));
      json_object_set_new(o2, "max_abs_drift", mpa_json_num(s->max_abs_drift));
      json_object_set_new(o2, "rms_drift", mpa_json_num(s->rms_drift));
      json_object_set_new(o2, "max_rel_drift", mpa_json_num(s->max_rel_drift));
      json_object_set_new(o2, "nonfinite", json_integer((json_int_t)s->nonfinite));
      json_object_set_new(strat, mpe_update_strategy_name((mpe_update_strategy)k), o2);
    }
    json_object_set_new(doc, "strategies", strat);
    rc = mpa_json_print(doc);
    json_decref(doc);
    return rc;
  } else {
    printf("update study: %zu weights in %s (master %s), %zu update row%s, %llu step%s\n",
           nw, mpe_format_name(f), mpe_format_name(m), rows, rows == 1 ? "" : "s",
           (unsigned long long)steps, steps == 1 ? "" : "s");
    static const mpa_col cols[] = { { "strategy", -8 }, { "updates", 12 }, { "lost", 12 }, { "lost %", 9 },
                                    { "stale %", 9 }, { "max |drift|", 13 }, { "rms drift", 13 }, { "nonfinite", 9 } };
    mpa_table_head(stdout, cols, 8);
    for (int k = 0; k < MPE_UPDATE_NSTRATEGIES; k++) {
      const mpe_update_stats *s = &st[k];
      mpa_cellbuf b[7];
      mpa_table_row(stdout, cols, 8, mpe_update_strategy_name((mpe_update_strategy)k),
                    mpa_cell(&b[0], "%llu", (unsigned long long)s->updates), mpa_cell(&b[1], "%llu", (unsigned long long)s->lost),
                    mpa_cell(&b[2], "%.4f", 100 * s->lost_fraction), mpa_cell(&b[3], "%.4f", 100 * s->stale_fraction),
                    mpa_cell(&b[4], "%.6g", s->max_abs_drift), mpa_cell(&b[5], "%.6g", s->rms_drift),
                    mpa_cell(&b[6], "%llu", (unsigned long long)s->nonfinite));
    }
    if (!quiet)
      printf("lost: the strategy's state did not move (w + u == w, u != 0); stale: the %s weight\n"
             "the model computes with did not move; drift: against a binary64 reference.\n",
             mpe_format_name(f));
  }
  return MPA_EXIT_OK;
}
