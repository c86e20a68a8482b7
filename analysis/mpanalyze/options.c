/* mpanalyze: the option tables (mpa_parse, mpa_help) and the value parsers
   every subcommand's options use. */
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

const char *mpa_cmd_name;   /* the subcommand mpa_parse is reading for (NULL before) */

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
      return mpa_error(mpa_cmd_name, "bad --shape '%s' (e.g. 512,1024)", s), -1;
    unsigned long long v = strtoull(p, &e, 10);
    if (errno || o->ndim == MPE_IO_MAXDIM)
      return mpa_error(mpa_cmd_name, "bad --shape '%s'", s), -1;
    o->shape[o->ndim++] = v;
    p = e;
    if (*p == ',' || *p == 'x' || *p == 'X') {
      if (!*++p)   /* a separator wants a dimension after it: "20," and "0x" are refused */
        return mpa_error(mpa_cmd_name, "bad --shape '%s' (e.g. 512,1024)", s), -1;
    } else if (*p)
      return mpa_error(mpa_cmd_name, "bad --shape '%s' (e.g. 512,1024)", s), -1;
  }
  if (o->ndim == 0)
    return mpa_error(mpa_cmd_name, "empty --shape"), -1;
  return 0;
}

int mpa_parse_kind(const char *s, mpe_io_opts *o)
{
  for (int k = MPE_IO_NPY; k <= MPE_IO_PT; k++)
    if (!strcmp(s, mpe_io_kind_name((mpe_io_kind)k))) {
      o->kind = (mpe_io_kind)k;
      return 0;
    }
  mpa_error(mpa_cmd_name, "unknown --kind '%s' (npy, npz, safetensors, raw, text, pt)", s);
  return -1;
}

static mpe_io_dtype_rule rules[MPA_MAX_RULES];

int mpa_parse_dtype(const char *arg, mpe_io_opts *o)
{
  const char *eq = strrchr(arg, '=');
  mpe_type t;
  if (mpe_io_dtype_lookup(eq ? eq + 1 : arg, &t)) {
    mpa_error(mpa_cmd_name, "unknown --dtype '%s' (bf16, fp16, e4m3, e5m2, fp32, fp64; or NAME=TYPE for the members NAME names)",
              arg);
    return -1;
  }
  if (!eq) {
    o->has_dtype = 1;
    o->dtype = t;
    return 0;
  }
  if (eq == arg) {
    mpa_error(mpa_cmd_name, "--dtype '%s' names no member (NAME=TYPE, NAME a member name or a glob)", arg);
    return -1;
  }
  if (o->nrules == MPA_MAX_RULES) {
    mpa_error(mpa_cmd_name, "too many --dtype NAME=TYPE rules (at most %d)", MPA_MAX_RULES);
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
    snprintf(buf, n, "see mpanalyze %s --help", mpa_cmd_name);
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
  return mpa_error(mpa_cmd_name, "%s --%s '%s' (%s)", unknown ? "unknown" : "bad", o->name, arg, want);
}

int mpa_parse_units(const char *s, const mpa_unit *units, size_t n, double *v)
{
  char *e;
  errno = 0;
  double x = strtod(s, &e);
  if (e == s || errno || !isfinite(x))
    return -1;
  if (*e) {
    size_t i;
    for (i = 0; i < n; i++)
      if (!strcasecmp(e, units[i].u))
        break;
    if (i == n)
      return -1;
    x *= units[i].m;
  }
  *v = x;
  return 0;
}

int mpa_parse_count(const char *s, double *v)
{
  static const mpa_unit units[] = { { "k", 1e3 }, { "m", 1e6 }, { "b", 1e9 }, { "g", 1e9 }, { "t", 1e12 } };
  double x;
  if (mpa_parse_units(s, units, sizeof units / sizeof units[0], &x))
    return -1;
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
      return mpa_error(mpa_cmd_name, "--%s %s: a scale format (no sign, no zero), not a format values are held in", o->name, arg);
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
        return mpa_error(mpa_cmd_name, "unknown --dtype '%s' (bf16, fp16, e4m3, e5m2, fp32, fp64)", arg);
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
      return mpa_error(mpa_cmd_name, "bad --%s '' (a file name)", o->name);
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
  mpa_cmd_name = cli->name;
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

int mpa_parse_no_operands(const mpa_cli *cli, int argc, char **argv)
{
  int first, rc = mpa_parse(cli, argc, argv, &first);
  if (rc)
    return rc == 1 ? MPA_EXIT_OK : rc;
  if (first < argc)
    return mpa_error(cli->name, "unexpected argument '%s' (mpanalyze %s --help)", argv[first], cli->name);
  return -1;
}

