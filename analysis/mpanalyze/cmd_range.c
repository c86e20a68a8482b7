/* mpanalyze range: the gradient-range report. The options, one call of the
   library's report engine (mpe_report_run(3): every file is opened and
   analysed completely before anything is printed, so bad input never leaves
   half a report behind), the plot, the report. */
#include <config.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <mpemu/report.h>
#include "mpanalyze.h"

static void progress(void *ctx, const char *path, uint64_t done, uint64_t total)
{
  (void)ctx;
  mpa_progress(path, done, total);
}

/* the engine's error as mpanalyze says it (under mpirun, rank 0 says it, or
   the rank that alone could see it); MPA_EXIT_* */
static int said(const mpe_report_error *e)
{
  if (e->msg[0] && (mpa_mpi_rank() == 0 || e->local)) {
    int keep = mpa_err_local;
    mpa_err_local = e->local;
    mpa_error(e->where[0] ? e->where : NULL, "%s", e->msg);
    mpa_err_local = keep;
  }
  mpa_progress_end();
  return e->fail ? MPA_EXIT_FAIL : MPA_EXIT_INPUT;
}

/* --plot: the binade histogram (one file), the trend over files (several) */
static int plot_report(const char *plot, const mpe_report *rep, char **paths, size_t npaths, int linear)
{
  mpe_report_summary s;
  mpe_report_summary_get(rep, &s);
  char title[300], ef[200];
  if (npaths > 1) {
    const char *names[MPE_REPORT_MAX_TARGETS];
    for (size_t k = 0; k < s.ntargets; k++)
      names[k] = s.target[k].name;
    char el[200];
    snprintf(title, sizeof title, "%s ... %s (%zu files)", mpa_esc(ef, sizeof ef, paths[0]),
             mpa_esc(el, sizeof el, paths[npaths - 1]), npaths);
    return mpa_plot_steps(plot, title, names, s.ntargets, s.shares, npaths);
  }
  snprintf(title, sizeof title, "%s: %s", paths[0], s.hist_name);
  mpa_mark marks[MPE_REPORT_MAX_TARGETS];
  size_t nm = 0;
  for (size_t k = 0; k < s.ntargets; k++)
    if (s.target[k].has_limits)
      marks[nm++] = (mpa_mark){ s.target[k].name, s.target[k].min_subnormal, s.target[k].min_normal,
                                s.target[k].max_finite + 1 };
  mpa_hist_plot hp = { title, s.hist_first, s.hist, s.hist_n, nm, marks, linear };
  return mpa_plot_histogram(plot, &hp);
}

static int comm_max(void *ctx, int v) { (void)ctx; return mpa_mpi_max(v); }
static int comm_send(void *ctx, const void *buf, size_t len, int to) { (void)ctx; return mpa_mpi_send(buf, len, to, 7); }
static int comm_recv(void *ctx, void **buf, size_t *len, int from) { (void)ctx; return mpa_mpi_recv(buf, len, from, 7); }

int mpa_cmd_range(int argc, char **argv)
{
  const char *flist = "fp16,bf16,e4m3,e5m2", *plot = NULL;
  const char **want = calloc((size_t)argc + 1, sizeof *want);
  size_t nwant = 0;
  int json = 0, per_layer = 0, linear = 0, first;
  long margin = 0, chunk = 0, fxblock = 0;
  double max_values = 0;
  mpe_io_opts io;
  memset(&io, 0, sizeof io);
  io.max_memory = mpa_max_memory;   /* what a reader may hold for one file */
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
    { "max-values", 0, MPA_COUNT, &max_values, 0, 0, "N",
      "stop before a tensor that would take the values read past N\n(1 to 1e15; k, M, B, T suffixes; default no limit)",
      NULL, NULL, 0 },
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
  if (!want)
    return mpa_error(NULL, "out of memory"), MPA_EXIT_FAIL;
  int rc = mpa_parse(&cli, argc, argv, &first);
  if (rc == 1)   /* --help */
    rc = -1;
  if (!rc && first >= argc)
    rc = mpa_error("range", "no input file (mpanalyze --help)");
  if (!rc)
    rc = mpa_expand_inputs(argc - first, argv + first, &paths, &npaths);
  if (!rc && plot)
    rc = mpa_output_check(plot, (int)npaths, paths);   /* the options' own check saw argv */
  if (rc) {
    free(want);
    mpa_free_inputs(paths, npaths);
    return rc == -1 ? MPA_EXIT_OK : rc;
  }
  io.chunk_bytes = (size_t)chunk;
  const mpe_report_comm comm = { mpa_mpi_size(), mpa_mpi_rank(), comm_max, comm_send, comm_recv, NULL };
  const mpe_report_opts ro = { flist, fxblock, (int)margin, want, nwant, &io, per_layer, json, 0,
                               progress, NULL, &comm, "range", (uint64_t)max_values };
  mpe_report *rep;
  mpe_report_error e;
  rc = mpe_report_run(&rep, (const char *const *)paths, npaths, &ro, &e) ? said(&e) : MPA_EXIT_OK;
  mpa_progress_end();
  if (!rc && mpa_mpi_rank() == 0 && plot)
    rc = plot_report(plot, rep, paths, npaths, linear);
  if (!rc && mpe_report_write(rep, stdout, &e))
    rc = e.out_failed ? MPA_EXIT_INPUT : said(&e);   /* mpa_close_stdout says a write error */
  if (!rc && !json && plot && !mpa_quiet && mpa_mpi_rank() == 0)
    fprintf(stderr, "mpanalyze: wrote %s\n", plot);
  mpe_report_free(rep);
  mpa_free_inputs(paths, npaths);
  free(want);
  return rc;
}
