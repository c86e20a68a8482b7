/* mpanalyze order: how much a dump's sums move when the order of additions
   is not fixed (atomicAdd-style random orders, split-K), in a chosen format
   and rounding mode (mpe_order_study(3)). */
#include <config.h>
#include <getopt.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "mpanalyze.h"
#include "../mpai.h"   /* mpai_json_path, inline */

/* Read the tensor into a new binary32 array; the study's memory (the values,
   a permutation of them, ~100 bytes a row) counted against --max-memory first. */
static int load(const char *path, const char *tensor, const mpe_io_opts *io, long len, float **out, size_t *count)
{
  mpe_io *f = NULL;
  int rc = mpa_open(path, io, &f);
  if (rc)
    return rc;
  size_t idx = 0;
  if (tensor && mpe_io_find(f, tensor, &idx)) {
    mpe_io_close(f);
    return mpa_error(path, "no tensor named '%s'", tensor);
  }
  mpe_io_tensor t;
  if (mpe_io_count(f) == 0 || mpe_io_info(f, idx, &t)) {
    mpe_io_close(f);
    return mpa_error(path, "no floating-point tensor");
  }
  if ((rc = mpe_io_select(f, idx))) {   /* a view over the memory limit, a storage that cannot be opened */
    mpa_error(path, "%s", mpe_io_message(f)[0] ? mpe_io_message(f) : mpe_strerror(rc));
    mpe_io_close(f);
    return rc == MPE_ENOMEM ? MPA_EXIT_FAIL : MPA_EXIT_INPUT;
  }
  if (t.count == 0 || t.count > (uint64_t)(SIZE_MAX / sizeof(double))) {
    mpe_io_close(f);
    return mpa_error(path, "%llu values: nothing to sum or too many", (unsigned long long)t.count);
  }
  uint64_t rows = len > 0 ? t.count / (uint64_t)len : 1;
  if (mpa_budget(path, "the order study", t.count * 8 + rows * 96)) {
    mpe_io_close(f);
    return MPA_EXIT_INPUT;
  }
  size_t n = (size_t)t.count;
  void *v;
  rc = mpa_read_values(f, path, t.value_type, MPE_FP32, n, &v);   /* binary64 data are summed as binary32 */
  mpe_io_close(f);
  if (rc)
    return rc;
  *out = v;
  *count = n;
  return MPA_EXIT_OK;
}

int mpa_cmd_order(int argc, char **argv)
{
  const char *tensor = NULL;
  const mpe_format *f = mpe_format_lookup("fp32");
  long len = 0, trials = 100, splits = 4;
  unsigned long long seed = 0;
  int json = 0, quiet = 0, first;
  mpe_round mode = MPE_RNE;
  mpe_io_opts io;
  memset(&io, 0, sizeof io);
  io.max_memory = mpa_max_memory;   /* what a reader may hold for one file */
  const mpa_opt opts[] = {
    { "tensor", 't', MPA_STRING, &tensor, 0, 0, "NAME", "the tensor to read (default: the first)", NULL, NULL, 0 },
    { "format", 'f', MPA_FORMAT, &f, 0, 0, "F", "the format every addition rounds to (default fp32)", NULL, NULL, 0 },
    { "round", 'r', MPA_ROUND, &mode, 0, 0, "MODE", "rne (default), rna, rz, ru, rd, ro, sr, sr_eq", NULL, NULL, 0 },
    { "len", 'l', MPA_LONG, &len, 1, 0x1p31, "K", "sum rows of K consecutive values (default: the whole tensor)",
      NULL, NULL, 0 },
    { "trials", 'n', MPA_LONG, &trials, 1, 0x1p20, "N", "random orders per row (default 100)", NULL, NULL, 0 },
    { "splits", 's', MPA_LONG, &splits, 1, 0x1p20, "S", "split-K parts (default 4)", NULL, NULL, 0 },
    { "seed", 0, MPA_U64, &seed, 0, 0x1p64, "S", "permutation and stochastic-rounding seed (default 0)",
      "a non-negative integer", NULL, 0 },
    { "dtype", 0, MPA_DTYPE, &io, 0, 0, "T", "what raw files (and |V2 .npy arrays) hold", NULL, NULL, MPA_PLAIN },
    MPA_OPT_JSON(&json),
    { "quiet", 'q', MPA_FLAG, &quiet, 0, 0, NULL, "no notes", NULL, NULL, 0 },
    MPA_OPT_END };
  const mpa_cli cli = { "order", "usage: mpanalyze order [options] FILE", NULL, opts };
  int rc = mpa_parse(&cli, argc, argv, &first);
  if (rc)
    return rc == 1 ? MPA_EXIT_OK : rc;
  if (first + 1 != argc)
    return mpa_error("order", "needs exactly one FILE (mpanalyze order --help)");
  const char *path = argv[first];
  if (mpe_format_precision(f) > 24)
    return mpa_error("order", "--format %s: sums are kept in binary32, at most 24 bits of precision",
                     mpe_format_name(f));
  float *x = NULL;
  size_t n = 0;
  rc = load(path, tensor, &io, len, &x, &n);
  if (rc)
    return rc;
  size_t k = len ? (size_t)len : n;
  if (n % k) {
    free(x);
    return mpa_error(path, "%zu values are not rows of --len %zu", n, k);
  }
  mpe_order_opts o;
  memset(&o, 0, sizeof o);
  o.format = f;
  o.round.round = mode;
  o.round.seed = seed;
  o.trials = (size_t)trials;
  o.seed = seed;
  o.splits = (size_t)splits;
  mpe_order_stats st;
  rc = mpe_order_study(&st, x, n / k, k, &o);
  free(x);
  if (rc == MPE_ERANGE)
    return mpa_error(path, "the tensor holds NaN or inf: its sums have no order to study");
  if (rc) {
    mpa_error(path, "order study failed: %s", mpe_strerror(rc));
    return MPA_EXIT_FAIL;
  }
  if (json) {
    json_t *doc = json_object(), *hist = json_array();
    json_object_set_new(doc, "command", json_string("order"));
    json_object_set_new(doc, "file", mpai_json_path(path));
    json_object_set_new(doc, "format", json_string(mpe_format_name(f)));
    json_object_set_new(doc, "round", json_string(mpe_round_name(mode)));
    json_object_set_new(doc, "rows", json_integer((json_int_t)st.rows));
    json_object_set_new(doc, "len", json_integer((json_int_t)st.len));
    json_object_set_new(doc, "trials", json_integer((json_int_t)st.trials));
    json_object_set_new(doc, "splits", json_integer((json_int_t)st.splits));
    json_object_set_new(doc, "seed", json_integer((json_int_t)seed));
    json_object_set_new(doc, "results", json_integer((json_int_t)st.results));
    json_object_set_new(doc, "differ", json_integer((json_int_t)st.differ));
    json_object_set_new(doc, "share_differ", mpa_json_num(st.share_differ));
    json_object_set_new(doc, "rows_spread", json_integer((json_int_t)st.rows_spread));
    json_object_set_new(doc, "max_spread_ulps", mpa_json_num(st.max_spread_ulps));
    json_object_set_new(doc, "mean_spread_ulps", mpa_json_num(st.mean_spread_ulps));
    for (int b = 0; b < MPE_ORDER_NBINS; b++)
      json_array_append_new(hist, json_integer((json_int_t)st.dev_hist[b]));
    json_object_set_new(doc, "deviation_histogram", hist);
    json_object_set_new(doc, "splitk_differ", json_integer((json_int_t)st.splitk_differ));
    json_object_set_new(doc, "splitk_max_ulps", mpa_json_num(st.splitk_max_ulps));
    json_object_set_new(doc, "sequential_max_err_ulps", mpa_json_num(st.seq_max_err_ulps));
    json_object_set_new(doc, "random_max_err_ulps", mpa_json_num(st.random_max_err_ulps));
    json_object_set_new(doc, "nonfinite", json_integer((json_int_t)st.nonfinite));
    rc = mpa_json_print(doc);
    json_decref(doc);
    return rc;
  }
  printf("reduction order: %s, %llu sum%s of %llu values in %s (%s), %llu random orders, split-K %llu\n",
         path, (unsigned long long)st.rows, st.rows == 1 ? "" : "s", (unsigned long long)st.len,
         mpe_format_name(f), mpe_round_name(mode), (unsigned long long)st.trials,
         (unsigned long long)st.splits);
  printf("  random orders differing from sequential: %llu of %llu (%.2f%%)\n",
         (unsigned long long)st.differ, (unsigned long long)st.results, 100 * st.share_differ);
  printf("  rows with a spread: %llu; max spread %.3g ulps, mean %.3g ulps\n",
         (unsigned long long)st.rows_spread, st.max_spread_ulps, st.mean_spread_ulps);
  printf("  split-K differs in %llu row%s, by at most %.3g ulps\n", (unsigned long long)st.splitk_differ,
         st.splitk_differ == 1 ? "" : "s", st.splitk_max_ulps);
  printf("  error against the exact sum: sequential max %.3g ulps, random orders max %.3g ulps\n",
         st.seq_max_err_ulps, st.random_max_err_ulps);
  if (st.nonfinite)
    printf("  sums that overflowed: %llu\n", (unsigned long long)st.nonfinite);
  printf("  |random - sequential| in ulps:\n");
  for (int b = 0; b < MPE_ORDER_NBINS; b++) {
    if (!st.dev_hist[b])
      continue;
    if (b == 0)
      printf("    %-14s %llu\n", "0", (unsigned long long)st.dev_hist[b]);
    else if (b == 1)
      printf("    %-14s %llu\n", "(0, 1]", (unsigned long long)st.dev_hist[b]);
    else if (b < MPE_ORDER_NBINS - 1) {
      char lab[32];
      snprintf(lab, sizeof lab, "(%g, %g]", ldexp(1, b - 2), ldexp(1, b - 1));
      printf("    %-14s %llu\n", lab, (unsigned long long)st.dev_hist[b]);
    } else {
      char lab[32];
      snprintf(lab, sizeof lab, "> %g", ldexp(1, b - 2));
      printf("    %-14s %llu\n", lab, (unsigned long long)st.dev_hist[b]);
    }
  }
  if (!quiet)
    printf("ulps: of the format at the exact sum. Orders are seeded (--seed): reruns give the same table.\n");
  return MPA_EXIT_OK;
}
