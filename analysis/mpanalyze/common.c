/* mpanalyze: helpers shared by the subcommands. */
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
static const char *cmd_name;   /* the subcommand mpa_parse is reading for (NULL before) */


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

const char *mpa_esc(char *buf, size_t n, const char *str)
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
      return mpa_error(cmd_name, "bad --shape '%s' (e.g. 512,1024)", s), -1;
    unsigned long long v = strtoull(p, &e, 10);
    if (errno || o->ndim == MPE_IO_MAXDIM)
      return mpa_error(cmd_name, "bad --shape '%s'", s), -1;
    o->shape[o->ndim++] = v;
    p = e;
    if (*p == ',' || *p == 'x' || *p == 'X') {
      if (!*++p)   /* a separator wants a dimension after it: "20," and "0x" are refused */
        return mpa_error(cmd_name, "bad --shape '%s' (e.g. 512,1024)", s), -1;
    } else if (*p)
      return mpa_error(cmd_name, "bad --shape '%s' (e.g. 512,1024)", s), -1;
  }
  if (o->ndim == 0)
    return mpa_error(cmd_name, "empty --shape"), -1;
  return 0;
}

int mpa_parse_kind(const char *s, mpe_io_opts *o)
{
  for (int k = MPE_IO_NPY; k <= MPE_IO_PT; k++)
    if (!strcmp(s, mpe_io_kind_name((mpe_io_kind)k))) {
      o->kind = (mpe_io_kind)k;
      return 0;
    }
  mpa_error(cmd_name, "unknown --kind '%s' (npy, npz, safetensors, raw, text, pt)", s);
  return -1;
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

static mpe_io_dtype_rule rules[MPA_MAX_RULES];

int mpa_parse_dtype(const char *arg, mpe_io_opts *o)
{
  const char *eq = strrchr(arg, '=');
  mpe_type t;
  if (mpe_io_dtype_lookup(eq ? eq + 1 : arg, &t)) {
    mpa_error(cmd_name, "unknown --dtype '%s' (bf16, fp16, e4m3, e5m2, fp32, fp64; or NAME=TYPE for the members NAME names)",
              arg);
    return -1;
  }
  if (!eq) {
    o->has_dtype = 1;
    o->dtype = t;
    return 0;
  }
  if (eq == arg) {
    mpa_error(cmd_name, "--dtype '%s' names no member (NAME=TYPE, NAME a member name or a glob)", arg);
    return -1;
  }
  if (o->nrules == MPA_MAX_RULES) {
    mpa_error(cmd_name, "too many --dtype NAME=TYPE rules (at most %d)", MPA_MAX_RULES);
    return -1;
  }
  char *name = strndup(arg, (size_t)(eq - arg));   /* lives as long as the process */
  if (!name) {
    mpa_error(NULL, "out of memory");
    return -1;
  }
  rules[o->nrules] = (mpe_io_dtype_rule){ name, t };
  o->rules = rules;
  o->nrules++;
  return 0;
}

int mpa_name_match(const char *pattern, const char *name)
{
  return !strcmp(pattern, name) || (strpbrk(pattern, "*?[") && !fnmatch(pattern, name, 0));
}

int mpa_natcmp(const char *a, const char *b)
{
  while (*a && *b) {
    if (*a >= '0' && *a <= '9' && *b >= '0' && *b <= '9') {
      const char *ea = a, *eb = b;
      while (*a == '0' && a[1] >= '0' && a[1] <= '9') a++;   /* leading zeros do not count */
      while (*b == '0' && b[1] >= '0' && b[1] <= '9') b++;
      const char *da = a, *db = b;
      while (*a >= '0' && *a <= '9') a++;
      while (*b >= '0' && *b <= '9') b++;
      if (a - da != b - db)
        return a - da < b - db ? -1 : 1;
      int c = strncmp(da, db, (size_t)(a - da));
      if (c)
        return c;
      if (a - ea != b - eb)   /* equal numbers: fewer leading zeros first */
        return a - ea < b - eb ? -1 : 1;
      continue;
    }
    if (*a != *b)
      return (unsigned char)*a < (unsigned char)*b ? -1 : 1;
    a++, b++;
  }
  return *a ? 1 : *b ? -1 : 0;
}

static int natcmp_p(const void *a, const void *b)
{
  return mpa_natcmp(*(char *const *)a, *(char *const *)b);
}

static int tensor_ext(const char *name)
{
  static const char *ext[] = { ".npy", ".npz", ".safetensors", ".pt", ".pth", ".bin", ".csv", ".txt", ".tsv",
                               ".dat", ".raw" };
  const char *dot = strrchr(name, '.');
  for (size_t i = 0; dot && i < sizeof ext / sizeof ext[0]; i++)
    if (!strcasecmp(dot, ext[i]))
      return 1;
  return 0;
}

void mpa_free_inputs(char **paths, size_t np)
{
  for (size_t i = 0; paths && i < np; i++)
    free(paths[i]);
  free(paths);
}

/* Files named one by one in an order a shell's sorting gives but natural order
   does not (step10 before step2: an unquoted step*.npy): one warning line, as
   the steps are taken in the order given. */
static void warn_order(int n, char **args)
{
  for (int a = 0; a + 1 < n; a++)
    if (mpa_natcmp(args[a], args[a + 1]) > 0 && strcmp(args[a], args[a + 1]) < 0 &&
        !strpbrk(args[a], "*?[") && !strpbrk(args[a + 1], "*?[")) {
      mpa_error(cmd_name, "warning: %s comes before %s: the files are taken in the order given "
                "(quote the pattern, e.g. 'step*.npy', and mpanalyze sorts it naturally)",
                args[a], args[a + 1]);
      return;
    }
}

int mpa_expand_inputs(int n, char **args, char ***paths, size_t *np)
{
  char **v = NULL;
  size_t nv = 0, cap = 0;
  *paths = NULL;
  *np = 0;
  warn_order(n, args);
#define PUSH(str) do { \
    if (nv == cap) { \
      cap = cap ? 2 * cap : 16; \
      char **nn = realloc(v, cap * sizeof *nn); \
      if (!nn) goto oom; \
      v = nn; \
    } \
    if (!(v[nv] = strdup(str))) goto oom; \
    nv++; \
  } while (0)
  for (int a = 0; a < n; a++) {
    const char *arg = args[a];
    struct stat sb;
    size_t first = nv;
    if (stat(arg, &sb) == 0 && S_ISDIR(sb.st_mode)) {
      DIR *d = opendir(arg);
      if (!d) {
        mpa_free_inputs(v, nv);
        return mpa_error(arg, "cannot read the folder: %s", strerror(errno));
      }
      size_t al = strlen(arg);
      for (struct dirent *e; (e = readdir(d));) {
        if (e->d_name[0] == '.' || !tensor_ext(e->d_name))
          continue;
        char *p = malloc(al + strlen(e->d_name) + 2);
        if (!p) {
          closedir(d);
          goto oom;
        }
        sprintf(p, "%s%s%s", arg, al && arg[al - 1] == '/' ? "" : "/", e->d_name);
        struct stat fb;
        int reg = stat(p, &fb) == 0 && S_ISREG(fb.st_mode);
        if (reg && nv == cap) {
          cap = cap ? 2 * cap : 16;
          char **nn = realloc(v, cap * sizeof *nn);
          if (!nn) {
            free(p);
            closedir(d);
            goto oom;
          }
          v = nn;
        }
        if (reg)
          v[nv++] = p;
        else
          free(p);
      }
      closedir(d);
      if (nv == first) {
        mpa_free_inputs(v, nv);
        return mpa_error(arg, "the folder holds no tensor file (.npy, .npz, .safetensors, .pt, .pth, .bin, .csv, .txt, ...)");
      }
    } else if (access(arg, F_OK) != 0 && strpbrk(arg, "*?[")) {
      /* a name that exists is a file, whatever it holds; one that does not
         may be a pattern, and when it matches nothing either, both are said */
      int literal_err = errno;
      glob_t g;
      int gr = glob(arg, GLOB_NOSORT, NULL, &g);
      if (gr == GLOB_NOMATCH || (gr == 0 && g.gl_pathc == 0)) {
        globfree(&g);
        mpa_free_inputs(v, nv);
        return mpa_error(NULL, "cannot open '%s': %s (and no file matches it as a pattern)", arg,
                         strerror(literal_err));
      }
      if (gr) {
        globfree(&g);
        mpa_free_inputs(v, nv);
        return gr == GLOB_NOSPACE ? (mpa_error(NULL, "out of memory"), MPA_EXIT_FAIL) : mpa_error(arg, "cannot read the folders this pattern names");
      }
      for (size_t k = 0; k < g.gl_pathc; k++) {
        struct stat fb;
        if (stat(g.gl_pathv[k], &fb) == 0 && S_ISDIR(fb.st_mode))
          continue;   /* a pattern names files; folders it matches are passed by */
        if (nv == cap) {
          cap = cap ? 2 * cap : 16;
          char **nn = realloc(v, cap * sizeof *nn);
          if (!nn) {
            globfree(&g);
            goto oom;
          }
          v = nn;
        }
        if (!(v[nv] = strdup(g.gl_pathv[k]))) {
          globfree(&g);
          goto oom;
        }
        nv++;
      }
      globfree(&g);
      if (nv == first) {
        mpa_free_inputs(v, nv);
        return mpa_error(arg, "no file matches this pattern (only folders)");
      }
    } else {
      PUSH(arg);   /* a file (or a name that fails to open later, with its own message) */
    }
    if (nv - first > 1)
      qsort(v + first, nv - first, sizeof *v, natcmp_p);
  }
#undef PUSH
  *paths = v;
  *np = nv;
  return 0;
oom:
  mpa_free_inputs(v, nv);
  mpa_error(NULL, "out of memory");
  return MPA_EXIT_FAIL;
}

int mpa_getopt(int argc, char **argv, const char *shortopts, const struct option *lo)
{
  opterr = 0;
  int c = getopt_long(argc, argv, shortopts, lo, NULL);
  if (c != '?' && c != ':')
    return c;
  /* the word that was wrong is the last one getopt took */
  const char *w = optind - 1 >= 1 && optind - 1 < argc ? argv[optind - 1] : "";
  char opt[80];
  const char *why = "unrecognized option '%s'";
  if (!strncmp(w, "--", 2)) {
    snprintf(opt, sizeof opt, "%.*s", (int)strcspn(w, "="), w);
    if (optopt)
      why = strchr(w, '=') ? "option '%s' takes no value" : "option '%s' needs a value";
  } else {
    snprintf(opt, sizeof opt, "-%c", optopt);
    const char *sp = optopt ? strchr(shortopts, optopt) : NULL;
    if (sp && sp[1] == ':')
      why = "option '%s' needs a value";
  }
  char msg[200];
  snprintf(msg, sizeof msg, why, opt);
  mpa_error(argv[0], "%s (mpanalyze %s --help)", msg, argv[0]);
  return '?';
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

/* Reading and analysing overlap: while the range accumulators take one batch
   of values, the next is read into a second buffer. Both run in one OpenMP team:
   the read is a task, and the accumulators share a batch's blocks out as tasks
   too (mpe_range_add_f32_pieces inside a parallel region), so each thread reads
   or analyses as work comes, and no thread waits spinning for another team's.
   Each read asks for FEED_VALUES values, as mpanalyze always has, and a batch
   keeps the split of its reads, so the reports are bit for bit those of one
   library call per read. */
#define FEED_VALUES (1u << 16)
#define BATCH_READS 16                  /* a batch: up to 2^20 values, when reads are whole */
#define BATCH_VALUES ((size_t)BATCH_READS * FEED_VALUES)
#define MAX_PIECES 4096                 /* more reads than this (a small --chunk) end a batch early */

struct batch {
  void *v;                              /* values: float or double (value_type) */
  size_t vcap, pcap;                    /* room for values and for pieces */
  size_t n, np;
  size_t *len;                          /* the pieces: one per read */
  uint64_t done;                        /* mpe_io_bytes_done after this batch */
  int rc;                               /* a read error: mpe_io_message says it */
  int last;                             /* the tensor (or the part asked for) ends with this batch */
  uint64_t *want;                       /* values still to read in the part; UINT64_MAX: to the end */
};

/* read the next batch of the selected tensor into b */
static void fill(mpe_io *f, size_t es, struct batch *b)
{
  b->n = b->np = 0;
  b->rc = 0;
  b->last = 0;
  while (b->n + FEED_VALUES <= b->vcap && b->np < b->pcap) {
    size_t n, ask = *b->want < FEED_VALUES ? (size_t)*b->want : FEED_VALUES;
    if (ask == 0) {   /* a part ends here, without a read past it */
      b->last = 1;
      break;
    }
    if ((b->rc = mpe_io_read(f, (char *)b->v + b->n * es, ask, &n)))
      break;
    if (n == 0) {
      b->last = 1;
      break;
    }
    if (*b->want != UINT64_MAX)
      *b->want -= n;
    b->len[b->np++] = n;
    b->n += n;
  }
  b->done = mpe_io_bytes_done(f);
}

/* one batch into the accumulators */
static void feed_take(const struct batch *b, int f64, mpe_range **r, size_t nr, double scale, double *amax, double *sbuf)
{
  if (amax) {   /* max |x|, NaN as soon as one NaN is seen (as a GPU amax reduction would) */
    double m = *amax;
    for (size_t k = 0; k < b->n; k++) {
      double a = fabs(f64 ? ((double *)b->v)[k] : (double)((float *)b->v)[k]);
      if (isnan(a) || a > m)
        m = isnan(m) ? m : a;
    }
    *amax = m;
  }
  if (scale != 1.0) {
    for (size_t k = 0; k < b->n; k++)
      sbuf[k] = (f64 ? ((double *)b->v)[k] : (double)((float *)b->v)[k]) * scale;
    for (size_t k = 0; k < nr; k++)
      mpe_range_add_f64_pieces(r[k], sbuf, b->len, b->np);
  } else {
    for (size_t k = 0; k < nr; k++) {
      if (f64)
        mpe_range_add_f64_pieces(r[k], b->v, b->len, b->np);
      else
        mpe_range_add_f32_pieces(r[k], b->v, b->len, b->np);
    }
  }
}

/* batches b[0] (read) and b[1] in turn: the next one is read in a task while the
   current one is analysed; returns the batch that failed to read, or NULL */
static struct batch *stream(mpe_io *f, size_t es, struct batch *bb, int f64, const char *path, mpe_range **r,
                            size_t nr, double scale, double *amax, double *sbuf)
{
  struct batch *bad = NULL;
  fill(f, es, &bb[0]);
  for (int k = 0;; k ^= 1) {
    struct batch *b = &bb[k], *next = &bb[k ^ 1];
    if (b->rc) {
      bad = b;
      break;
    }
    int more = !b->last;
    if (more) {
#ifdef _OPENMP
#pragma omp task default(none) firstprivate(f, es, next)
#endif
      fill(f, es, next);
    }
    feed_take(b, f64, r, nr, scale, amax, sbuf);
    mpa_progress(path, b->done, mpe_io_bytes_total(f));
#ifdef _OPENMP
#pragma omp taskwait
#endif
    if (!more)
      break;
  }
  return bad;
}

int mpa_feed(mpe_io *f, size_t i, const char *path, mpe_range **r, size_t nr, double scale, double *amax)
{
  if (mpe_io_select(f, i))
    return mpa_error(path, "%s", mpe_io_message(f));
  return mpa_feed_part(f, i, path, UINT64_MAX, r, nr, scale, amax);
}

int mpa_feed_part(mpe_io *f, size_t i, const char *path, uint64_t count, mpe_range **r, size_t nr, double scale,
                  double *amax)
{
  static double small[FEED_VALUES];     /* a tensor of one read: no allocation (200,000 tiny tensors) */
  static size_t small_len[1];
  mpe_io_tensor t;
  mpe_io_info(f, i, &t);
  int f64 = t.value_type == MPE_FP64;
  size_t es = f64 ? sizeof(double) : sizeof(float);
  uint64_t want = count, n = count < t.count ? count : t.count;
  /* more than one batch: two of them, read and analysed at once (the counts of
     text files are known once they are opened) */
  int big = n > FEED_VALUES, two = n > BATCH_VALUES, rc = 0;
  struct batch bb[2];
  memset(bb, 0, sizeof bb);
  bb[0].want = bb[1].want = &want;
  double *sbuf = NULL;
  for (int k = 0; k < 2; k++) {
    struct batch *b = &bb[k];
    b->vcap = big ? BATCH_VALUES : FEED_VALUES;
    b->pcap = big ? MAX_PIECES : 1;
    b->v = !big ? (void *)small : k == 0 || two ? malloc(b->vcap * es) : NULL;
    b->len = !big ? small_len : k == 0 || two ? malloc(b->pcap * sizeof *b->len) : NULL;
    if ((k == 0 || two) && (!b->v || !b->len))
      rc = 1;
  }
  if (scale != 1.0 && !rc && !(sbuf = malloc(bb[0].vcap * sizeof *sbuf)))
    rc = 1;
  if (rc) {
    rc = (mpa_error(NULL, "out of memory"), MPA_EXIT_FAIL);
    goto out;
  }
  struct batch *bad = NULL;
  if (!two) {
    /* one batch at a time, here */
    for (;;) {
      fill(f, es, &bb[0]);
      if (bb[0].rc) {
        bad = &bb[0];
        break;
      }
      feed_take(&bb[0], f64, r, nr, scale, amax, sbuf);
      mpa_progress(path, bb[0].done, mpe_io_bytes_total(f));
      if (bb[0].last)
        break;
    }
  } else {
#ifdef _OPENMP
    /* a team as large as the machine has cores to spare now (on a machine busy
       with other work a second thread mostly waits, spinning, for the first to
       be scheduled: it made the run slower than one thread) */
    const int nt = mpe_threads_fit();
#pragma omp parallel num_threads(nt) default(none) shared(bad, f, es, bb, f64, path, r, nr, scale, amax, sbuf)
#pragma omp single
#endif
    bad = stream(f, es, bb, f64, path, r, nr, scale, amax, sbuf);
  }
  if (bad)
    rc = mpa_error(path, "%s", mpe_io_message(f));
  else if (want != UINT64_MAX && want > 0)
    rc = mpa_error(path, "the data end early (the file changed while it was read?)");
out:
  for (int k = 0; k < 2 && big; k++) {
    free(bb[k].v);
    free(bb[k].len);
  }
  free(sbuf);
  return rc;
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

/* "DIR/.mpa-XXXXXX" beside path: a short name, so that any name that can be
   created in DIR can be written through it */
static int temp_beside(const char *path, char *tmp, size_t n)
{
  const char *slash = strrchr(path, '/');
  int dl = slash ? (int)(slash - path + 1) : 0;
  if (snprintf(tmp, n, "%.*s.mpa-XXXXXX", dl, path) >= (int)n)
    return -1;
  return mkstemp(tmp);
}

/* The file an output goes to: path itself, or where a symbolic link at path
   leads (the link is kept; its target is replaced). A link to nothing or a loop
   of links is refused. 0 with *target path or buf, or prints and returns 2. */
static int output_target(const char *path, char *buf, const char **target)
{
  struct stat sl;
  *target = path;
  if (lstat(path, &sl) != 0 || !S_ISLNK(sl.st_mode))
    return 0;
  if (realpath(path, buf))
    *target = buf;
  else if (errno == ENOENT)
    return mpa_error(path, "a symbolic link to nothing; refusing to write through it");
  else if (errno == ELOOP)
    return mpa_error(path, "a loop of symbolic links; refusing to write through it");
  else
    return mpa_error(path, "cannot follow the symbolic link: %s", strerror(errno));
  return 0;
}

int mpa_output_check(const char *out, int argc, char **argv)
{
  if (!strcmp(out, "-"))
    return mpa_error(out, "an output must be a file name (refusing to write it to standard output)");
  char real[PATH_MAX];
  const char *target;
  if (output_target(out, real, &target))
    return MPA_EXIT_INPUT;
  struct stat so, si;
  int exists = stat(target, &so) == 0;
  if (exists && !S_ISREG(so.st_mode))
    return mpa_error(out, "not a regular file; refusing to replace it with an output");
  for (int i = 0; exists && i < argc; i++)
    if (argv[i] != out && stat(argv[i], &si) == 0 && si.st_dev == so.st_dev && si.st_ino == so.st_ino)
      return mpa_error(out, "is also an input (%s); refusing to overwrite it", argv[i]);
  char tmp[4096];
  int fd = temp_beside(target, tmp, sizeof tmp);
  if (fd < 0)
    return mpa_error(out, "cannot write here: %s", strerror(errno));
  close(fd);
  unlink(tmp);
  return 0;
}

int mpa_write_file(const char *path, const void *data, size_t n)
{
  char tmp[4096], real[PATH_MAX];
  const char *target;
  if (output_target(path, real, &target))
    return MPA_EXIT_INPUT;
  int fd = temp_beside(target, tmp, sizeof tmp);
  if (fd < 0)
    return mpa_error(path, "cannot write here: %s", strerror(errno));
  const char *p = data;
  int err = 0;
  while (n && !err) {
    ssize_t w = write(fd, p, n);
    if (w < 0 && errno == EINTR)
      continue;
    if (w <= 0)
      err = w < 0 ? errno : EIO;
    else
      p += w, n -= (size_t)w;
  }
  /* the mode a new file would get (mkstemp made it 0600) */
  mode_t um = umask(0);
  umask(um);
  if (!err && fchmod(fd, 0666 & ~um) != 0)
    err = errno;
  if (!err && fsync(fd) != 0 && errno != EINVAL)
    err = errno;
  if (close(fd) != 0 && !err)
    err = errno;
  if (!err && rename(tmp, target) != 0)
    err = errno;
  if (err) {
    unlink(tmp);
    return mpa_error(path, "write failed: %s (nothing written; an old file is left as it was)", strerror(err));
  }
  return 0;
}

int mpa_close_stdout(int status)
{
  /* a report cut short by a full disk or a closed pipe must not exit 0 */
  int bad = fflush(stdout) != 0 || ferror(stdout);
  int err = errno;
  if (fclose(stdout) != 0 && !bad) {
    bad = 1;
    err = errno;
  }
  if (bad) {
    mpa_error("standard output", "write failed: %s", strerror(err ? err : EIO));
    return MPA_EXIT_INPUT;
  }
  return status;
}

uint64_t mpa_max_memory;

static uint64_t physical_memory(void)
{
  long pages = sysconf(_SC_PHYS_PAGES), size = sysconf(_SC_PAGESIZE);
  return pages > 0 && size > 0 ? (uint64_t)pages * (uint64_t)size : (uint64_t)8 << 30;
}

/* "512M", "16G", "1.5T", "1048576" (bytes), "25%" (of physical memory) */
static int parse_size(const char *s, uint64_t *out)
{
  char *e;
  errno = 0;
  double v = strtod(s, &e);
  if (e == s || errno || !(v > 0) || !isfinite(v))
    return -1;
  double mul = 1;
  if (*e == '%') {
    if (v > 100)
      return -1;
    mul = (double)physical_memory() / 100;
    e++;
  } else if (*e) {
    const char *units = "KMGT";
    const char *u = strchr(units, *e == 'k' ? 'K' : *e == 'm' ? 'M' : *e == 'g' ? 'G' : *e == 't' ? 'T' : *e);
    if (!u || !*e)
      return -1;
    mul = ldexp(1.0, 10 * (int)(u - units + 1));
    e++;
    if (*e == 'i')
      e++;
    if (*e == 'B' || *e == 'b')
      e++;
  }
  /* at least one byte: 0.5 or 1e-300 would be a limit of 0 bytes, as "0" is refused */
  if (*e || v * mul >= 0x1p63 || v * mul < 1)
    return -1;
  *out = (uint64_t)(v * mul);
  return 0;
}

int mpa_take_max_memory(int *argc, char **argv)
{
  mpa_max_memory = physical_memory() / 2;
  int o = 1;
  for (int i = 1; i < *argc; i++) {
    const char *v = NULL;
    if (!strcmp(argv[i], "--")) {
      /* "--" and what follows are operands, "--max-memory" among them a file name */
      while (i < *argc)
        argv[o++] = argv[i++];
      break;
    }
    if (!strcmp(argv[i], "--max-memory")) {
      if (i + 1 >= *argc)
        return mpa_error(NULL, "--max-memory needs a size (e.g. 4G, 512M, 50%%)");
      v = argv[++i];
    } else if (!strncmp(argv[i], "--max-memory=", 13)) {
      v = argv[i] + 13;
    } else {
      argv[o++] = argv[i];
      continue;
    }
    if (parse_size(v, &mpa_max_memory))
      return mpa_error(v, "--max-memory wants a size such as 4G, 512M, 1048576 or 50%% (of physical memory)");
  }
  argv[o] = NULL;
  *argc = o;
  return 0;
}

static const char *human(uint64_t b, char *buf, size_t n)
{
  static const char *u[] = { "bytes", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB" };
  double v = (double)b;
  int k = 0;
  while (v >= 1024 && k < 6)
    v /= 1024, k++;
  snprintf(buf, n, k ? "%.1f %s" : "%.0f %s", v, u[k]);
  return buf;
}

int mpa_budget(const char *where, const char *what, uint64_t bytes)
{
  if (bytes <= mpa_max_memory)
    return 0;
  char need[32], lim[32];
  return mpa_error(where, "%s needs about %s, over the memory limit of %s (--max-memory, default half of "
                   "physical memory; raise it with --max-memory SIZE, e.g. --max-memory %lluG)",
                   what, human(bytes, need, sizeof need), human(mpa_max_memory, lim, sizeof lim),
                   (unsigned long long)((bytes >> 30) + 1));
}

/* ---- the option tables */


/* "2^40" for powers of two past a million, else %.17g */
static void say_num(char *buf, size_t n, double v)
{
  int e;
  if (fabs(v) >= 0x1p20 && frexp(fabs(v), &e) == 0.5)
    snprintf(buf, n, "%s2^%d", v < 0 ? "-" : "", e - 1);
  else
    snprintf(buf, n, "%.17g", v);
}

/* what a value of o must be, when the table does not say it */
static void say_want(const mpa_opt *o, char *buf, size_t n)
{
  char lo[40], hi[40];
  say_num(lo, sizeof lo, o->lo);
  say_num(hi, sizeof hi, o->hi);
  switch (o->kind) {
  case MPA_INT: case MPA_LONG:
    snprintf(buf, n, "an integer from %s to %s", lo, hi);
    break;
  case MPA_U64:
    snprintf(buf, n, "an integer from 0 to %s", hi);
    break;
  case MPA_DOUBLE:
    if (isinf(o->hi))
      snprintf(buf, n, "a number %s %s", o->flags & MPA_LO_OPEN ? ">" : ">=", lo);
    else if (o->flags & (MPA_LO_OPEN | MPA_HI_OPEN))
      snprintf(buf, n, "a number with %s %s x %s %s", lo, o->flags & MPA_LO_OPEN ? "<" : "<=",
               o->flags & MPA_HI_OPEN ? "<" : "<=", hi);
    else
      snprintf(buf, n, "a number from %s to %s", lo, hi);
    break;
  case MPA_COUNT:
    snprintf(buf, n, "a count from 1 to 1e15: 1.3e9, 7.5B, 350M, 125k");
    break;
  case MPA_FORMAT:
    snprintf(buf, n, "fp16, bf16, tf32, e4m3, e5m2, fp32, fp64, ...");
    break;
  case MPA_ROUND:
    snprintf(buf, n, "rne, rna, rz, ru, rd, ro, sr, sr_eq");
    break;
  case MPA_ENUM: {
    const char *const *w = o->extra;
    size_t l = 0;
    buf[0] = 0;
    for (size_t k = 0; w && w[k] && l < n; k++)
      l += (size_t)snprintf(buf + l, n - l, "%s%s", k ? ", " : "", w[k]);
    break;
  }
  default:
    snprintf(buf, n, "see mpanalyze %s --help", cmd_name);
  }
}

static int bad_value(const mpa_opt *o, const char *arg)
{
  char want[400];
  if (o->want)
    snprintf(want, sizeof want, "%s", o->want);
  else
    say_want(o, want, sizeof want);
  int unknown = o->kind == MPA_ENUM || o->kind == MPA_ROUND || o->kind == MPA_FORMAT || (o->flags & MPA_WORD);
  return mpa_error(cmd_name, "%s --%s '%s' (%s)", unknown ? "unknown" : "bad", o->name, arg, want);
}

int mpa_parse_count(const char *s, double *v)
{
  char *e;
  errno = 0;
  double x = strtod(s, &e);
  if (e == s || errno || !isfinite(x))
    return -1;
  if (*e) {
    static const struct { const char *u; double m; } units[] = {
      { "k", 1e3 }, { "m", 1e6 }, { "b", 1e9 }, { "g", 1e9 }, { "t", 1e12 } };
    size_t i;
    for (i = 0; i < sizeof units / sizeof units[0]; i++)
      if (!strcasecmp(e, units[i].u))
        break;
    if (i == sizeof units / sizeof units[0])
      return -1;
    x *= units[i].m;
  }
  /* from one to 10^15 (a thousand times the largest models): every product
     the memory arithmetic forms of such counts stays finite */
  if (!(x >= 1) || !(x <= 1e15))
    return -1;
  *v = x;
  return 0;
}

/* one option's value into its field: 0, or prints and returns MPA_EXIT_INPUT */
static int take(const mpa_opt *o, const char *arg)
{
  char *e;
  switch (o->kind) {
  case MPA_FLAG:
    *(int *)o->field = 1;
    return 0;
  case MPA_INT: case MPA_LONG: {
    long v;
    if (mpa_parse_int(arg, (long)o->lo, (long)o->hi, &v))
      return bad_value(o, arg);
    if (o->kind == MPA_INT)
      *(int *)o->field = (int)v;
    else
      *(long *)o->field = v;
    return 0;
  }
  case MPA_U64: {
    errno = 0;
    /* decimal, or hexadecimal after 0x (a seed copied from a log); 010 is ten, not octal */
    const char *a = arg + strspn(arg, " \t");
    unsigned long long v = strtoull(arg, &e, a[0] == '0' && (a[1] == 'x' || a[1] == 'X') ? 16 : 10);
    if (e == arg || *e || errno || arg[strspn(arg, " \t")] == '-' || (o->hi > 0 && (double)v > o->hi))
      return bad_value(o, arg);
    *(unsigned long long *)o->field = v;
    return 0;
  }
  case MPA_DOUBLE: {
    errno = 0;
    double v = strtod(arg, &e);
    if (e == arg || *e || !isfinite(v) || v < o->lo || v > o->hi || ((o->flags & MPA_LO_OPEN) && v == o->lo) ||
        ((o->flags & MPA_HI_OPEN) && v == o->hi))
      return bad_value(o, arg);
    *(double *)o->field = v;
    return 0;
  }
  case MPA_COUNT:
    return mpa_parse_count(arg, (double *)o->field) ? bad_value(o, arg) : 0;
  case MPA_FORMAT: {
    const mpe_format *f = mpe_format_lookup(arg);
    if (!f)
      return bad_value(o, arg);
    if (!mpe_format_is_signed(f))   /* E8M0 holds block scales: no sign, no zero */
      return mpa_error(cmd_name, "--%s %s: a scale format (no sign, no zero), not a format values are held in", o->name, arg);
    *(const mpe_format **)o->field = f;
    return 0;
  }
  case MPA_ROUND: {
    int m = mpe_round_lookup(arg);
    if (m < 0)
      return bad_value(o, arg);
    *(mpe_round *)o->field = (mpe_round)m;
    return 0;
  }
  case MPA_ENUM: {
    const char *const *w = o->extra;
    for (int k = 0; w[k]; k++)
      if (!strcmp(arg, w[k])) {
        *(int *)o->field = k;
        return 0;
      }
    return bad_value(o, arg);
  }
  case MPA_DTYPE: {
    mpe_io_opts *io = o->field;
    if (o->flags & MPA_PLAIN) {
      if (mpe_io_dtype_lookup(arg, &io->dtype))
        return mpa_error(cmd_name, "unknown --dtype '%s' (bf16, fp16, e4m3, e5m2, fp32, fp64)", arg);
      io->has_dtype = 1;
      return 0;
    }
    return mpa_parse_dtype(arg, io) ? MPA_EXIT_INPUT : 0;
  }
  case MPA_SHAPE:
    return mpa_parse_shape(arg, o->field) ? MPA_EXIT_INPUT : 0;
  case MPA_KIND:
    return mpa_parse_kind(arg, o->field) ? MPA_EXIT_INPUT : 0;
  case MPA_PATH_IN: case MPA_PLOT:
    if (!arg[0])
      return mpa_error(cmd_name, "bad --%s '' (a file name)", o->name);
    *(const char **)o->field = arg;
    return 0;
  case MPA_STRING:
    *(const char **)o->field = arg;
    return 0;
  case MPA_STRINGS: {
    size_t *n = (size_t *)o->extra;
    ((const char **)o->field)[(*n)++] = arg;   /* sized by the caller for argc entries */
    return 0;
  }
  case MPA_CALL:
    return ((mpa_opt_fn)o->extra)(arg, o->field) ? bad_value(o, arg) : 0;
  }
  return bad_value(o, arg);
}

#define MPA_MAX_OPTS 40

int mpa_parse(const mpa_cli *cli, int argc, char **argv, int *first)
{
  struct option lo[MPA_MAX_OPTS + 2];
  char shortopts[2 * MPA_MAX_OPTS + 4];
  size_t n = 0, s = 0;
  cmd_name = cli->name;
  for (; cli->opts[n].name; n++) {
    const mpa_opt *o = &cli->opts[n];
    if (n == MPA_MAX_OPTS)
      return mpa_error(cli->name, "internal error: more than %d options", MPA_MAX_OPTS);
    int has_arg = o->kind == MPA_FLAG ? no_argument : required_argument;
    lo[n] = (struct option){ o->name, has_arg, NULL, o->key ? o->key : 256 + (int)n };
    if (o->key) {
      shortopts[s++] = (char)o->key;
      if (has_arg)
        shortopts[s++] = ':';
    }
  }
  lo[n] = (struct option){ "help", no_argument, NULL, 'h' };
  lo[n + 1] = (struct option){ NULL, 0, NULL, 0 };
  shortopts[s++] = 'h';
  shortopts[s] = 0;
  optind = 1;
  int c;
  while ((c = mpa_getopt(argc, argv, shortopts, lo)) != -1) {
    if (c == '?')
      return MPA_EXIT_INPUT;
    if (c == 'h') {
      if (mpa_mpi_rank() == 0)
        mpa_help(cli, stdout);
      return 1;
    }
    const mpa_opt *o = NULL;
    for (size_t k = 0; k < n && !o; k++)
      if (c == (cli->opts[k].key ? cli->opts[k].key : 256 + (int)k))
        o = &cli->opts[k];
    if (!o || take(o, optarg))
      return MPA_EXIT_INPUT;
  }
  for (size_t k = 0; k < n; k++) {
    const mpa_opt *o = &cli->opts[k];
    const char *out = o->kind == MPA_PLOT ? *(const char **)o->field : NULL;
    if (out && (mpa_plot_check_name(out) || mpa_output_check(out, argc, argv)))
      return MPA_EXIT_INPUT;
  }
  *first = optind;
  return 0;
}

void mpa_help(const mpa_cli *cli, FILE *out)
{
  int col = 0;
  for (const mpa_opt *o = cli->opts; o->name; o++) {
    int w = 6 + 2 + (int)strlen(o->name) + (o->arg ? 1 + (int)strlen(o->arg) : 0);
    col = w > col ? w : col;
  }
  col += 3;
  fprintf(out, "%s\n", cli->usage);
  for (const mpa_opt *o = cli->opts; o->name; o++) {
    char left[128];
    if (o->key)
      snprintf(left, sizeof left, "  -%c, --%s%s%s", o->key, o->name, o->arg ? " " : "", o->arg ? o->arg : "");
    else
      snprintf(left, sizeof left, "      --%s%s%s", o->name, o->arg ? " " : "", o->arg ? o->arg : "");
    fprintf(out, "%-*s", col, left);
    for (const char *h = o->help; *h;) {
      size_t l = strcspn(h, "\n");
      fprintf(out, "%.*s\n", (int)l, h);
      h += l;
      if (*h == '\n' && *++h)
        fprintf(out, "%*s", col, "");
    }
  }
  if (cli->footer)
    fprintf(out, "%s\n", cli->footer);
}

int mpa_no_operands(const mpa_cli *cli, int first, int argc, char **argv)
{
  if (first < argc)
    return mpa_error(cli->name, "unexpected argument '%s' (mpanalyze %s --help)", argv[first], cli->name);
  return 0;
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

/* --dtype rules against the members of the inputs. A member a rule names that
   stays skipped has another width (a rule of its width would have typed it); a
   readable one has the width of the type it is read as. */
enum { RULE_NAMED = 1, RULE_FITS = 2 };

void mpa_rules_mark(mpe_io *f, const mpe_io_opts *io, mpa_rule_use *u)
{
  for (size_t r = 0; r < io->nrules && r < MPA_MAX_RULES; r++) {
    const char *pat = io->rules[r].pattern;
    size_t want = mpe_io_dtype_size(io->rules[r].dtype);
    for (size_t i = 0; !(u->used[r] & RULE_FITS) && i < mpe_io_count(f); i++) {
      mpe_io_tensor ti;
      if (mpe_io_info(f, i, &ti) || !mpa_name_match(pat, ti.name))
        continue;
      if (!u->used[r])
        snprintf(u->example[r], sizeof u->example[r], "'%.120s', %zu-byte %s", ti.name,
                 mpe_io_dtype_size(ti.dtype), mpe_type_name(ti.dtype));
      u->used[r] |= RULE_NAMED | (mpe_io_dtype_size(ti.dtype) == want ? RULE_FITS : 0);
    }
    for (size_t i = 0; !u->used[r] && i < mpe_io_skipped(f); i++) {
      const char *n, *d, *w;
      if (!mpe_io_skipped_info(f, i, &n, &d, &w) && mpa_name_match(pat, n)) {
        snprintf(u->example[r], sizeof u->example[r], "'%.120s', %.40s", n, d);
        u->used[r] |= RULE_NAMED;
      }
    }
  }
}

int mpa_rules_check(const mpe_io_opts *io, const mpa_rule_use *u)
{
  for (size_t r = 0; r < io->nrules && r < MPA_MAX_RULES; r++) {
    const char *tn = mpe_type_name(io->rules[r].dtype);
    size_t w = mpe_io_dtype_size(io->rules[r].dtype);
    if (!u->used[r])
      return mpa_error(cmd_name, "--dtype %s=%s: no member of the input is named so", io->rules[r].pattern, tn), -1;
    /* a glob naming only members of other widths would change nothing: refused,
       as a plain NAME of another width is when its file opens */
    if (!(u->used[r] & RULE_FITS) && strpbrk(io->rules[r].pattern, "*?["))
      return mpa_error(cmd_name, "--dtype %s=%s: no member it names has %s's width (%zu byte%s), so none is read as %s "
                       "(e.g. %s)", io->rules[r].pattern, tn, tn, w, w == 1 ? "" : "s", tn, u->example[r]), -1;
  }
  return 0;
}
