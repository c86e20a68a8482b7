#ifndef _GNU_SOURCE
#define _GNU_SOURCE   /* program_invocation_short_name */
#endif
#include <dirent.h>
#include <errno.h>   /* program_invocation_short_name */
#include <float.h>
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

int ts_conf_rows(const char *rel, int base, int max_rows, uint32_t **out, int *per_line)
{
  *out = NULL;
  *per_line = 0;
  ts_conf *f = ts_conf_open(rel);
  if (!f)
    return -1;
  size_t cap = 4096, n = 0;
  uint32_t *v = malloc(cap * sizeof *v);
  ck_assert_ptr_nonnull(v);
  uint64_t w[64];
  int rows = 0, words = -1, k;
  while ((max_rows <= 0 || rows < max_rows) && (k = ts_conf_words(f, base, w, 64)) != -1) {
    if (k == 0)
      continue;
    int bad = k < 0 || (words >= 0 && k != words);
    for (int i = 0; i < k && !bad; i++)
      bad = w[i] > 0xffffffffu;
    if (bad) {
      fprintf(stderr, "%s line %ld: malformed (%d words, a bad character or a word wider than 32 bits)\n", rel,
              ts_conf_lineno(f), k);
      free(v);
      ts_conf_close(f);
      return -2;
    }
    words = k;
    if (n + (size_t)k > cap) {
      v = realloc(v, (cap *= 2) * sizeof *v);
      ck_assert_ptr_nonnull(v);
    }
    for (int i = 0; i < k; i++)
      v[n++] = (uint32_t)w[i];
    rows++;
  }
  ts_conf_close(f);
  *out = v;
  *per_line = words < 0 ? 0 : words;
  return rows;
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

unsigned ts_subset(void)
{
  static unsigned n;   /* read from OpenMP threads: atomic */
  unsigned c = __atomic_load_n(&n, __ATOMIC_RELAXED);
  if (c)
    return c;
  const char *e = getenv("MPE_CHECK_SUBSET");
  unsigned v = 1;
  if (e && *e) {
    char *end;
    errno = 0;
    unsigned long u = strtoul(e, &end, 10);
    if (errno || *end || e[0] == '-' || u < 1 || u > 1000000)
      fprintf(stderr, "MPE_CHECK_SUBSET=%s is not a whole number from 1 to 1000000: the full sets run\n", e);
    else
      v = (unsigned)u;
  }
  if (v != 1)
    fprintf(stderr, "MPE_CHECK_SUBSET=%u: the long sweeps compare every %uth vector of their bulk\n", v, v);
  __atomic_store_n(&n, v, __ATOMIC_RELAXED);
  return v;
}

/* ------------------------------------------------------------ the MPFR oracle */

ts_fmt ts_fmt_of(const mpe_format *f)
{
  ts_fmt g = { mpe_format_precision(f), mpe_format_emin(f), mpe_format_emax(f), mpe_format_max(f),
               mpe_format_has_inf(f) };
  return g;
}

ts_fmt ts_fmt_type(mpe_type t)
{
  return ts_fmt_of(mpe_format_of(t));
}

ts_fmt ts_fmt_int(void)
{
  ts_fmt g = { 53, 52, 1023, DBL_MAX, 1 };
  return g;
}

/* ldexp with an exponent that may not fit an int: beyond +-100000 every
   binary64 result is inf or zero anyway */
static double ldexp_l(double m, long e)
{
  return ldexp(m, e > 100000 ? 100000 : e < -100000 ? -100000 : (int)e);
}

/* |v| on the grid of multiples of 2^q: the multiple chosen by mode r (neg: the
   sign of v), which is below 2^54 for the callers' q; *inexact when |v| is not
   on the grid. Exact: |v| 2^-q, its floor and its fraction all fit v's precision. */
static double grid_round(mpfr_srcptr v, long q, mpe_round r, int neg, int *inexact)
{
  mpfr_t s, t;
  mpfr_inits2(mpfr_get_prec(v), s, t, (mpfr_ptr)0);
  mpfr_abs(s, v, MPFR_RNDN);
  mpfr_mul_2si(s, s, -q, MPFR_RNDN);
  mpfr_floor(t, s);
  double m = mpfr_get_d(t, MPFR_RNDN);
  mpfr_sub(s, s, t, MPFR_RNDN);   /* the fraction */
  int ix = !mpfr_zero_p(s), half = mpfr_cmp_d(s, 0.5), up = 0;
  mpfr_clears(s, t, (mpfr_ptr)0);
  if (ix) {
    switch (r) {
    case MPE_RNE: up = half > 0 || (half == 0 && fmod(m, 2) != 0); break;
    case MPE_RNA: up = half >= 0; break;
    case MPE_RZ: up = 0; break;
    case MPE_RU: up = !neg; break;
    case MPE_RD: up = neg; break;
    case MPE_RO: up = fmod(m, 2) == 0; break;
    default: ck_abort_msg("ts_round_mpfr: mode %d is not deterministic", (int)r);
    }
  }
  *inexact = ix;
  return m + up;
}

/* The same rounding by MPFR itself: p bits, the format's exponent range
   (MPFR's significands are in [1/2, 1): 2^emin is 0.1b x 2^(emin+1)), then
   subnormalised. Beyond the binade of emax it gives inf or its own maximum:
   compared only for results up to maxv. */
static double mpfr_native(mpfr_srcptr v, const ts_fmt *f, mpfr_rnd_t m)
{
  mpfr_exp_t oemin = mpfr_get_emin(), oemax = mpfr_get_emax();
  mpfr_t w;
  mpfr_init2(w, f->p);
  int t = mpfr_set(w, v, m);   /* in the caller's range, as mpfr_check_range expects */
  mpfr_set_emin(f->emin - f->p + 2);
  mpfr_set_emax(f->emax + 1);
  t = mpfr_check_range(w, t, m);
  mpfr_subnormalize(w, t, m);
  double d = mpfr_get_d(w, MPFR_RNDN);
  mpfr_clear(w);
  mpfr_set_emin(oemin);
  mpfr_set_emax(oemax);
  return d;
}

double ts_round_mpfr(mpfr_srcptr v, const ts_fmt *f, mpe_round r, int sat, unsigned *flags)
{
  int neg = mpfr_signbit(v) != 0;
  if (flags)
    *flags = 0;
  ck_assert_msg(f->p >= 1 && f->p <= 53, "ts_round_mpfr: precision %d", f->p);
  if (mpfr_nan_p(v))
    return NAN;
  if (mpfr_zero_p(v))
    return neg ? -0.0 : 0.0;
  if (mpfr_inf_p(v)) {
    double a = sat ? f->maxv : f->has_inf ? INFINITY : NAN;
    return neg ? -a : a;
  }
  long e = (long)mpfr_get_exp(v) - 1;   /* |v| in [2^e, 2^(e+1)) */
  long qe = (e > f->emin ? e : f->emin) - f->p + 1, qu = e - f->p + 1;
  int ix, ixu;
  double res = ldexp_l(grid_round(v, qe, r, neg, &ix), qe);
  /* tininess after rounding: p bits, unbounded exponent */
  double unb = qu == qe ? res : ldexp_l(grid_round(v, qu, r, neg, &ixu), qu);
  unsigned fl = ix ? MPE_FLAG_INEXACT : 0;
  if (ix && unb < ldexp(1.0, f->emin))
    fl |= MPE_FLAG_UNDERFLOW;
  if (r != MPE_RNA && r != MPE_RO && res <= f->maxv) {
    static const mpfr_rnd_t mr[] = { MPFR_RNDN, MPFR_RNDN, MPFR_RNDZ, MPFR_RNDU, MPFR_RNDD };
    double w = mpfr_native(v, f, mr[r]);
    ck_assert_msg(w == (neg ? -res : res), "ts_round_mpfr: the grid gives %a, MPFR %a (%s, p=%d emin=%d)",
                  neg ? -res : res, w, mpe_round_name(r), f->p, f->emin);
  }
  if (res > f->maxv) {
    fl |= MPE_FLAG_OVERFLOW | MPE_FLAG_INEXACT;
    int toward_zero = r == MPE_RZ || r == MPE_RO || (r == MPE_RU && neg) || (r == MPE_RD && !neg);
    res = sat || toward_zero ? f->maxv : f->has_inf ? INFINITY : NAN;
  }
  if (flags)
    *flags = fl;
  return neg ? -res : res;
}

double ts_round_mpfr_d(double x, const ts_fmt *f, mpe_round r)
{
  if (isnan(x) || isinf(x) || x == 0)
    return x;
  mpfr_t v;
  mpfr_init2(v, 53);
  mpfr_set_d(v, x, MPFR_RNDN);
  double res = ts_round_mpfr(v, f, r, 0, NULL);
  mpfr_clear(v);
  return res;
}

double ts_mpfr_round(double x, int p, int emin, int emax, double maxv, int has_inf, mpe_round r)
{
  ts_fmt f = { p, emin, emax, maxv, has_inf };
  return ts_round_mpfr_d(x, &f, r);
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
  ts_subset();   /* read (and printed) once, before Check forks the tests */
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
