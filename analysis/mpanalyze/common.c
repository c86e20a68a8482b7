/* mpanalyze: what every subcommand shares: errors, opening inputs, the
   progress bar, JSON and text tables. The option parser is options.c, the
   inputs' expansion inputs.c, output files and the memory budget output.c. */
#include <config.h>
#include <dirent.h>
#include <errno.h>
#include <fnmatch.h>
#include <limits.h>
#include <glob.h>
#include <math.h>
#ifdef _OPENMP
#include <omp.h>
#endif
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>
#include <sys/stat.h>
#include "mpanalyze.h"

int mpa_quiet;

const char *mpa_esc(char *buf, size_t n, const char *str)
{
  return mpe_report_escape(buf, n, str);
}

/* keep what we print on one line and printable */
static void put_clean(FILE *out, const char *s)
{
  char buf[2048];
  fputs(mpa_esc(buf, sizeof buf, s), out);
}

int mpa_error(const char *where, const char *fmt, ...)
{
  char msg[512];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  mpa_progress_end();
  if (mpa_mpi_rank() > 0 && !mpa_err_local)
    return MPA_EXIT_INPUT;   /* rank 0 says it (every rank sees the same headers) */
  fputs("mpanalyze: ", stderr);
  if (where) {
    put_clean(stderr, where);
    fputs(": ", stderr);
  }
  put_clean(stderr, msg);
  fputc('\n', stderr);
  return MPA_EXIT_INPUT;
}

int mpa_skips_in_report;

int mpa_open(const char *path, const mpe_io_opts *o, mpe_io **f)
{
  char msg[300];
  int rc = mpe_io_open(f, path, o, msg, sizeof msg);
  if (rc)
    return mpa_error(path, "%s", msg);
  const char *name, *dtype, *why;   /* tensors the analysis cannot use, named */
  for (size_t i = 0; !mpa_quiet && !mpa_skips_in_report && i < mpe_io_skipped(*f) &&
                     !mpe_io_skipped_info(*f, i, &name, &dtype, &why); i++) {
    char ep[512], en[256];
    fprintf(stderr, "mpanalyze: note: %s: skipped '%s' (%s: %s)\n", mpa_esc(ep, sizeof ep, path),
            mpa_esc(en, sizeof en, name), dtype, why);
  }
  return 0;
}

/* progress bar */
static int bar_shown;
static int bar_pct = -1;

void mpa_progress(const char *label, uint64_t done, uint64_t total)
{
  if (mpa_quiet || total == 0 || !isatty(STDERR_FILENO))
    return;
  int pct = (int)(100.0 * (double)done / (double)total);
  if (pct == bar_pct)
    return;
  bar_pct = pct;
  char bar[31];
  int w = pct * 30 / 100;
  for (int i = 0; i < 30; i++)
    bar[i] = i < w ? '#' : '.';
  bar[30] = 0;
  fprintf(stderr, "\r%.40s [%s] %3d%%", label, bar, pct);
  fflush(stderr);
  bar_shown = 1;
}

void mpa_progress_end(void)
{
  if (bar_shown) {
    fprintf(stderr, "\r\033[K");
    fflush(stderr);
  }
  bar_shown = 0;
  bar_pct = -1;
}

static void feed_progress(void *ctx, uint64_t done, uint64_t total)
{
  mpa_progress(ctx, done, total);
}

int mpa_feed(mpe_io *f, size_t i, const char *path, mpe_range **r, size_t nr, double scale, double *amax)
{
  char msg[512];
  mpe_range_feed_opts o = { scale, amax, feed_progress, (void *)path };
  int rc = mpe_io_select(f, i);
  if (rc)
    return mpa_error(path, "%s", mpe_io_message(f));
  rc = mpe_range_feed(r, nr, f, i, UINT64_MAX, &o, msg, sizeof msg);
  if (rc == MPE_ENOMEM)
    return mpa_error(NULL, "out of memory"), MPA_EXIT_FAIL;
  return rc ? mpa_error(path, "%s", msg) : 0;
}

int mpa_read_values(mpe_io *f, const char *path, mpe_type from, mpe_type to, size_t n, void **out)
{
  enum { CHUNK = 4096 };
  const size_t es = to == MPE_FP64 ? sizeof(double) : sizeof(float);
  void *v = malloc((n ? n : 1) * es), *buf = NULL;
  *out = NULL;
  if (!v || (from != to && !(buf = malloc(CHUNK * (from == MPE_FP64 ? sizeof(double) : sizeof(float)))))) {
    free(v);
    mpa_error(path, "out of memory");
    return MPA_EXIT_FAIL;
  }
  size_t got = 0;
  while (got < n) {
    size_t k = 0;
    int rc;
    if (buf) {
      rc = mpe_io_read(f, buf, n - got < CHUNK ? n - got : CHUNK, &k);
      for (size_t i = 0; !rc && i < k; i++)
        if (to == MPE_FP32)
          ((float *)v)[got + i] = (float)((const double *)buf)[i];
        else
          ((double *)v)[got + i] = ((const float *)buf)[i];
    } else {
      rc = mpe_io_read(f, (char *)v + got * es, n - got, &k);
    }
    if (rc) {
      mpa_error(path, "%s", mpe_io_message(f)[0] ? mpe_io_message(f) : mpe_strerror(rc));
      free(buf);
      free(v);
      return MPA_EXIT_INPUT;
    }
    if (k == 0)
      break;
    got += k;
  }
  free(buf);
  if (got != n) {
    free(v);
    return mpa_error(path, "%zu values read, the header says %zu", got, n);
  }
  *out = v;
  return MPA_EXIT_OK;
}

int mpa_json_print(json_t *doc)
{
  if (json_dumpf(doc, stdout, JSON_INDENT(2) | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(17)) == 0 &&
      fputc('\n', stdout) != EOF)
    return MPA_EXIT_OK;
  if (ferror(stdout))
    return MPA_EXIT_INPUT;   /* mpa_close_stdout says "standard output: write failed" */
  mpa_error(NULL, "out of memory");
  return MPA_EXIT_FAIL;
}

json_t *mpa_json_num(double v)
{
  return isfinite(v) ? json_real(v) : json_null();
}

/* ---- text tables */

static void table_cells(FILE *out, const mpa_col *cols, size_t n, const char *const *cells)
{
  for (size_t k = 0; k < n; k++) {
    int w = cols[k].width;
    fprintf(out, "%s%*s", k ? " " : "", w, cells[k]);
  }
  fputc('\n', out);
}

void mpa_table_head(FILE *out, const mpa_col *cols, size_t n)
{
  const char *heads[MPA_MAX_COLS];
  for (size_t k = 0; k < n && k < MPA_MAX_COLS; k++)
    heads[k] = cols[k].head;
  table_cells(out, cols, n < MPA_MAX_COLS ? n : MPA_MAX_COLS, heads);
}

void mpa_table_row(FILE *out, const mpa_col *cols, size_t n, ...)
{
  const char *cells[MPA_MAX_COLS];
  va_list ap;
  va_start(ap, n);
  for (size_t k = 0; k < n && k < MPA_MAX_COLS; k++)
    cells[k] = va_arg(ap, const char *);
  va_end(ap);
  table_cells(out, cols, n < MPA_MAX_COLS ? n : MPA_MAX_COLS, cells);
}

const char *mpa_cell(mpa_cellbuf *b, const char *fmt, ...)
{
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(b->s, sizeof b->s, fmt, ap);
  va_end(ap);
  return b->s;
}

void mpa_rules_mark(mpe_io *f, const mpe_io_opts *io, mpa_rule_use *u)
{
  mpe_report_rules_mark(f, io, u);
}

int mpa_rules_check(const mpe_io_opts *io, const mpa_rule_use *u)
{
  char msg[512];
  return mpe_report_rules_check(io, u, msg, sizeof msg) ? (mpa_error(mpa_cmd_name, "%s", msg), -1) : 0;
}
