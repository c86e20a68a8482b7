#ifndef _GNU_SOURCE
#define _GNU_SOURCE   /* program_invocation_short_name */
#endif
#include <dirent.h>
#include <errno.h>   /* program_invocation_short_name */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <mpfr.h>
#include <zlib.h>
#include "testsupport.h"

/* ------------------------------------------------------------ conformance data */

/* Check runs every test in a child process: what the whole run must know (the
   note about missing data was printed; the counts for the closing line) lives
   in a page shared with the children, mapped by ts_run before they start. */
typedef struct {
  int noted;
  long files, vectors, mismatches;
  int from_env, from_tree;
} conf_shared;

static conf_shared conf_local;
static conf_shared *conf_state = &conf_local;

static void conf_map_shared(void)
{
  if (conf_state != &conf_local)
    return;
  void *p = mmap(NULL, sizeof(conf_shared), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  if (p != MAP_FAILED) {
    memcpy(p, &conf_local, sizeof conf_local);
    conf_state = p;
  }
}

/* the source tree: $MPE_SRCDIR (set by make check), else the one built from */
static const char *srcdir(void)
{
  const char *src = getenv("MPE_SRCDIR");
#ifdef MPE_SRCDIR
  if (!src || !*src)
    src = MPE_SRCDIR;
#endif
  return src && *src ? src : ".";
}

/* one line for the whole run, however many tests miss their data */
static void conf_note(const char *msg)
{
  if (!__atomic_exchange_n(&conf_state->noted, 1, __ATOMIC_SEQ_CST))
    fprintf(stderr, "%s; see README.md, \"Conformance data\"\n", msg);
}

struct ts_conf {
  gzFile gz;
  long line;
  int failed;   /* a read error was reported: the file ends there */
  char buf[8192];
};

/* dir/rel, or dir/rel with ".gz" added or removed; 1 and the path if a file is there */
static int conf_find(const char *dir, const char *rel, char *path, size_t size)
{
  size_t n = strlen(rel);
  int gz = n > 3 && !strcmp(rel + n - 3, ".gz");
  struct stat st;
  for (int alt = 0; alt < 2; alt++) {
    int len = alt == 0 ? snprintf(path, size, "%s/%s", dir, rel)
              : gz     ? snprintf(path, size, "%s/%.*s", dir, (int)(n - 3), rel)
                       : snprintf(path, size, "%s/%s.gz", dir, rel);
    if (len > 0 && (size_t)len < size && stat(path, &st) == 0 && S_ISREG(st.st_mode))
      return 1;
  }
  return 0;
}

ts_conf *ts_conf_open(const char *rel)
{
  char path[8192], tree[4096], msg[12800];
  const char *env = getenv("MPE_CONFORMANCE_DIR");
  struct stat st;
  int found = 0;
  if (env && *env) {
    if (stat(env, &st) != 0 || !S_ISDIR(st.st_mode)) {
      snprintf(msg, sizeof msg, "conformance data: MPE_CONFORMANCE_DIR=%s is not a folder", env);
      conf_note(msg);
      return NULL;
    }
    if (conf_find(env, rel, path, sizeof path)) {
      found = 1;
      conf_state->from_env = 1;
    }
  }
  snprintf(tree, sizeof tree, "%s/tests/conformance", srcdir());
  if (!found && conf_find(tree, rel, path, sizeof path)) {
    found = 1;
    conf_state->from_tree = 1;
  }
  if (!found) {
    snprintf(msg, sizeof msg, "conformance data missing: %s is in neither $MPE_CONFORMANCE_DIR nor %s", rel, tree);
    conf_note(msg);
    return NULL;
  }
  ts_conf *f = malloc(sizeof *f);
  if (!f)
    return NULL;
  f->gz = gzopen(path, "rb");
  if (!f->gz) {
    free(f);
    snprintf(msg, sizeof msg, "conformance data: cannot open %s", path);
    conf_note(msg);
    return NULL;
  }
  gzbuffer(f->gz, 1 << 17);
  f->line = 0;
  f->failed = 0;
  return f;
}

int ts_conf_words(ts_conf *f, int base, uint64_t *w, int max)
{
  if (f->failed)
    return -1;
  if (!gzgets(f->gz, f->buf, sizeof f->buf)) {
    int err;
    gzerror(f->gz, &err);
    if (err == Z_OK && gzeof(f->gz))
      return -1;
    f->failed = 1;   /* a truncated or corrupt .gz: reported once, then the end */
    return -2;
  }
  f->line++;
  size_t len = strlen(f->buf);
  if (len == sizeof f->buf - 1 && f->buf[len - 1] != '\n' && !gzeof(f->gz))
    return -2;
  int n = 0, maxdigits = base == 2 ? 64 : 16;
  const char *p = f->buf;
  for (;;) {
    while (*p == ' ' || *p == '\t' || *p == '\r' || *p == '\n')
      p++;
    if (!*p)
      return n;
    uint64_t v = 0;
    int digits = 0;
    for (; *p && *p != ' ' && *p != '\t' && *p != '\r' && *p != '\n'; p++, digits++) {
      int d = *p >= '0' && *p <= '9' ? *p - '0'
            : *p >= 'a' && *p <= 'f' ? *p - 'a' + 10
            : *p >= 'A' && *p <= 'F' ? *p - 'A' + 10 : 99;
      if (d >= base || digits == maxdigits)
        return -2;
      v = v * (uint64_t)base + (uint64_t)d;
    }
    if (n == max)
      return -2;
    w[n++] = v;
  }
}

long ts_conf_lineno(const ts_conf *f)
{
  return f->line;
}

void ts_conf_close(ts_conf *f)
{
  if (!f)
    return;
  gzclose(f->gz);
  free(f);
}

void ts_conf_tally(long vectors, long mismatches)
{
  __atomic_add_fetch(&conf_state->files, 1, __ATOMIC_SEQ_CST);
  __atomic_add_fetch(&conf_state->vectors, vectors, __ATOMIC_SEQ_CST);
  __atomic_add_fetch(&conf_state->mismatches, mismatches, __ATOMIC_SEQ_CST);
}

size_t ts_each_file(const char *reldir, const char *prefix, void (*fn)(const char *path, void *ctx), void *ctx)
{
  char dp[4096];
  snprintf(dp, sizeof dp, "%s/%s", srcdir(), reldir);
  DIR *dh = opendir(dp);
  if (!dh)
    return 0;
  size_t files = 0;
  struct dirent *e;
  while ((e = readdir(dh))) {
    if (e->d_name[0] == '.' || strncmp(e->d_name, prefix, strlen(prefix)) != 0)
      continue;
    char fp[8192];
    snprintf(fp, sizeof fp, "%s/%s", dp, e->d_name);
    fn(fp, ctx);
    files++;
  }
  closedir(dh);
  return files;
}

const char *const ts_tf_modes[6] = { "near_even", "near_maxMag", "minMag", "max", "min", "odd" };
const mpe_round ts_tf_round[6] = { MPE_RNE, MPE_RNA, MPE_RZ, MPE_RU, MPE_RD, MPE_RO };

unsigned ts_tf_flags(unsigned b)
{
  unsigned f = 0;
  if (b & 0x10) f |= MPE_FLAG_INVALID;
  if (b & 0x08) f |= MPE_FLAG_DIVBYZERO;
  if (b & 0x04) f |= MPE_FLAG_OVERFLOW;
  if (b & 0x02) f |= MPE_FLAG_UNDERFLOW;
  if (b & 0x01) f |= MPE_FLAG_INEXACT;
  return f;
}

uint64_t ts_seed(void)
{
  static int printed;
  static uint64_t seed = 0x6d70656d75ull;
  const char *e = getenv("MPE_CHECK_SEED");
  if (e && *e)
    seed = strtoull(e, NULL, 0);
  if (!printed) {
    fprintf(stderr, "MPE_CHECK_SEED=%llu\n", (unsigned long long)seed);
    printed = 1;
  }
  return seed;
}

uint64_t ts_rand64(uint64_t *s)
{
  uint64_t z = (*s += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

int ts_expensive(void)
{
  const char *e = getenv("MPE_CHECK_EXPENSIVE");
  return e && *e && strcmp(e, "0");
}

/* x rounded by MPFR to p bits, exponent range of the format (subnormals kept),
   in direction m; *inexact set. Overflow follows MPFR (inf or the largest value
   with binade exponent emax). */
static double mpfr_dir(double x, int p, int emin, int emax, mpfr_rnd_t m, int *inexact)
{
  mpfr_exp_t oemin = mpfr_get_emin(), oemax = mpfr_get_emax();
  mpfr_t v;
  mpfr_init2(v, p);
  mpfr_set_emin(emin - p + 2);  /* MPFR significands are in [1/2, 1) */
  mpfr_set_emax(emax + 1);
  int t = mpfr_set_d(v, x, m);
  t = mpfr_check_range(v, t, m);
  t = mpfr_subnormalize(v, t, m);
  double res = mpfr_get_d(v, MPFR_RNDN);
  *inexact = t != 0 || mpfr_inexflag_p();
  mpfr_clear_inexflag();
  mpfr_clear(v);
  mpfr_set_emin(oemin);
  mpfr_set_emax(oemax);
  return res;
}

double ts_mpfr_round(double x, int p, int emin, int emax, double maxv, int has_inf, mpe_round r)
{
  if (isnan(x) || isinf(x) || x == 0)
    return x;
  int neg = x < 0, ix;
  double res;
  switch (r) {
  case MPE_RZ: res = mpfr_dir(x, p, emin, emax, MPFR_RNDZ, &ix); break;
  case MPE_RU: res = mpfr_dir(x, p, emin, emax, MPFR_RNDU, &ix); break;
  case MPE_RD: res = mpfr_dir(x, p, emin, emax, MPFR_RNDD, &ix); break;
  case MPE_RNA: {
    double z = mpfr_dir(x, p, emin, emax, MPFR_RNDZ, &ix);
    double a = mpfr_dir(x, p, emin, emax, MPFR_RNDA, &ix);
    /* a tie is exactly halfway: x - z == a - x (exact in binary64 for these widths) */
    res = (ix && fabs(x - z) == fabs(a - x)) ? a : mpfr_dir(x, p, emin, emax, MPFR_RNDN, &ix);
    break;
  }
  case MPE_RO: {
    res = mpfr_dir(x, p, emin, emax, MPFR_RNDZ, &ix);
    if (ix) {
      double a = fabs(res);
      int e = a >= ldexp(1.0, emin) ? ilogb(a) : emin;
      double q = ldexp(1.0, e - p + 1);
      double m = floor(a / q);
      if (fmod(m, 2.0) == 0)
        m += 1;
      res = neg ? -(m * q) : m * q;
    }
    break;
  }
  default: res = mpfr_dir(x, p, emin, emax, MPFR_RNDN, &ix); break;
  }
  /* beyond max finite: IEEE overflow rules, or NaN for an encoding without inf */
  if (fabs(res) > maxv) {
    int toward_zero = r == MPE_RZ || r == MPE_RO || (r == MPE_RU && neg) || (r == MPE_RD && !neg);
    if (toward_zero)
      res = neg ? -maxv : maxv;
    else
      res = has_inf ? (neg ? -INFINITY : INFINITY) : (neg ? -NAN : NAN);
  }
  if (res == 0)
    res = neg ? -0.0 : 0.0;
  return res;
}

int ts_same_f64(double a, double b)
{
  if (isnan(a) || isnan(b))
    return isnan(a) && isnan(b);
  return ts_d2u(a) == ts_d2u(b);
}

int ts_run(Suite *s)
{
  conf_map_shared();
  SRunner *sr = srunner_create(s);
  srunner_run_all(sr, CK_NORMAL);
  if (conf_state->files) {
    const char *prog = program_invocation_short_name;
    if (!strncmp(prog, "lt-", 3))
      prog += 3;
    printf("%s: conformance: %ld files, %ld vectors, %ld mismatches (data from %s%s%s)\n", prog,
           conf_state->files, conf_state->vectors, conf_state->mismatches,
           conf_state->from_env ? "$MPE_CONFORMANCE_DIR" : "",
           conf_state->from_env && conf_state->from_tree ? " and " : "",
           conf_state->from_tree ? "tests/conformance" : "");
  }
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
