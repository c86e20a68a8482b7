/* mpanalyze: helpers shared by the subcommands. */
#include <config.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "mpanalyze.h"

int mpa_quiet;

/* keep what we print on one line and printable */
static void put_clean(FILE *out, const char *s)
{
  for (; *s; s++) {
    unsigned char c = (unsigned char)*s;
    if (c < 0x20 || c == 0x7f)
      fprintf(out, "\\x%02x", c);
    else
      fputc(c, out);
  }
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

int mpa_parse_formats(const char *list, const mpe_format **out, size_t max, size_t *n)
{
  char buf[256];
  if (strlen(list) >= sizeof buf) {
    mpa_error(NULL, "--format list too long");
    return -1;
  }
  strcpy(buf, list);
  *n = 0;
  for (char *save, *t = strtok_r(buf, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
    const mpe_format *f = mpe_format_lookup(t);
    if (!f) {
      mpa_error(NULL, "unknown format '%s' (fp16, bf16, tf32, e4m3, e5m2, fp32, fp64)", t);
      return -1;
    }
    if (*n == max) {
      mpa_error(NULL, "too many formats (at most %zu)", max);
      return -1;
    }
    out[(*n)++] = f;
  }
  if (*n == 0) {
    mpa_error(NULL, "--format needs at least one format");
    return -1;
  }
  return 0;
}

int mpa_parse_int(const char *s, long lo, long hi, long *v)
{
  char *e;
  errno = 0;
  long x = strtol(s, &e, 10);
  if (e == s || *e || errno || x < lo || x > hi)
    return -1;
  *v = x;
  return 0;
}

int mpa_parse_shape(const char *s, mpe_io_opts *o)
{
  const char *p = s;
  o->ndim = 0;
  while (*p) {
    char *e;
    errno = 0;
    if (*p < '0' || *p > '9')
      return mpa_error(NULL, "bad --shape '%s' (e.g. 512,1024)", s), -1;
    unsigned long long v = strtoull(p, &e, 10);
    if (errno || o->ndim == MPE_IO_MAXDIM)
      return mpa_error(NULL, "bad --shape '%s'", s), -1;
    o->shape[o->ndim++] = v;
    p = e;
    if (*p == ',' || *p == 'x' || *p == 'X')
      p++;
    else if (*p)
      return mpa_error(NULL, "bad --shape '%s' (e.g. 512,1024)", s), -1;
  }
  if (o->ndim == 0)
    return mpa_error(NULL, "empty --shape"), -1;
  return 0;
}

int mpa_parse_kind(const char *s, mpe_io_opts *o)
{
  for (int k = MPE_IO_NPY; k <= MPE_IO_PT; k++)
    if (!strcmp(s, mpe_io_kind_name((mpe_io_kind)k))) {
      o->kind = (mpe_io_kind)k;
      return 0;
    }
  mpa_error(NULL, "unknown --kind '%s' (npy, npz, safetensors, raw, text, pt)", s);
  return -1;
}

int mpa_open(const char *path, const mpe_io_opts *o, mpe_io **f)
{
  char msg[300];
  int rc = mpe_io_open(f, path, o, msg, sizeof msg);
  if (rc)
    return mpa_error(path, "%s", msg);
  const char *name, *dtype, *why;   /* tensors the analysis cannot use, named */
  for (size_t i = 0; !mpa_quiet && i < mpe_io_skipped(*f) && !mpe_io_skipped_info(*f, i, &name, &dtype, &why); i++)
    fprintf(stderr, "mpanalyze: note: %s: skipped '%s' (%s: %s)\n", path, name, dtype, why);
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

#define FEED_VALUES (1u << 16)

int mpa_feed(mpe_io *f, size_t i, const char *path, mpe_range **r, size_t nr, double scale, double *amax)
{
  static double buf[FEED_VALUES], sbuf[FEED_VALUES];
  mpe_io_tensor t;
  mpe_io_info(f, i, &t);
  if (mpe_io_select(f, i))
    return mpa_error(path, "%s", mpe_io_message(f));
  for (;;) {
    size_t n;
    int rc = mpe_io_read(f, buf, FEED_VALUES, &n);
    if (rc)
      return mpa_error(path, "%s", mpe_io_message(f));
    if (n == 0)
      break;
    if (amax) {   /* max |x|, NaN as soon as one NaN is seen (as a GPU amax reduction would) */
      double m = *amax;
      for (size_t k = 0; k < n; k++) {
        double a = fabs(t.value_type == MPE_FP64 ? buf[k] : (double)((float *)buf)[k]);
        if (isnan(a) || a > m)
          m = isnan(m) ? m : a;
      }
      *amax = m;
    }
    if (scale != 1.0) {
      for (size_t k = 0; k < n; k++)
        sbuf[k] = (t.value_type == MPE_FP64 ? buf[k] : (double)((float *)buf)[k]) * scale;
      for (size_t k = 0; k < nr; k++)
        mpe_range_add_f64(r[k], sbuf, n);
    } else {
      for (size_t k = 0; k < nr; k++) {
        if (t.value_type == MPE_FP64)
          mpe_range_add_f64(r[k], buf, n);
        else
          mpe_range_add_f32(r[k], (float *)buf, n);
      }
    }
    mpa_progress(path, mpe_io_bytes_done(f), mpe_io_bytes_total(f));
  }
  return 0;
}

int mpa_json_print(json_t *doc)
{
  int rc = json_dumpf(doc, stdout, JSON_INDENT(2) | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(17));
  fputc('\n', stdout);
  return rc ? MPA_EXIT_FAIL : MPA_EXIT_OK;
}

json_t *mpa_json_num(double v)
{
  return isfinite(v) ? json_real(v) : json_null();
}
