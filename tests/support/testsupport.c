#include <dirent.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <mpfr.h>
#include "testsupport.h"

/* $MPE_CONFORMANCE_DIR, else shared/conformance beside the project root or up to two
   levels further up (a `make distcheck` tree sits one level below the checkout). */
const char *ts_conformance_dir(void)
{
  static char buf[4096];
  const char *env = getenv("MPE_CONFORMANCE_DIR");
  struct stat st;
  if (env && *env) {
    snprintf(buf, sizeof buf, "%s", env);
    if (stat(buf, &st) == 0 && S_ISDIR(st.st_mode))
      return buf;
  } else {
    const char *src = getenv("MPE_SRCDIR");
#ifdef MPE_SRCDIR
    if (!src)
      src = MPE_SRCDIR;
#endif
    const char *ups[] = { "/..", "/../..", "/../../.." };
    for (int i = 0; i < 3; i++) {
      snprintf(buf, sizeof buf, "%s%s/shared/conformance", src ? src : ".", ups[i]);
      if (stat(buf, &st) == 0 && S_ISDIR(st.st_mode))
        return buf;
    }
  }
  fprintf(stderr, "conformance folder not found (set MPE_CONFORMANCE_DIR): %s\n", buf);
  return NULL;
}

FILE *ts_open_conformance(const char *rel)
{
  const char *dir = ts_conformance_dir();
  if (!dir)
    return NULL;
  char path[8192];
  snprintf(path, sizeof path, "%s/%s", dir, rel);
  size_t len = strlen(path);
  struct stat st;
  if (stat(path, &st) != 0)
    return NULL;
  /* always a pipe, so ts_close is always pclose */
  char cmd[8300];
  snprintf(cmd, sizeof cmd, "%s '%s'", len > 3 && !strcmp(path + len - 3, ".gz") ? "gzip -dc" : "cat", path);
  return popen(cmd, "r");
}

void ts_close(FILE *f)
{
  if (!f)
    return;
  pclose(f);
}

size_t ts_each_file(const char *reldir, const char *prefix, void (*fn)(const char *path, void *ctx), void *ctx)
{
  const char *src = getenv("MPE_SRCDIR");
#ifdef MPE_SRCDIR
  if (!src)
    src = MPE_SRCDIR;
#endif
  char dp[4096];
  snprintf(dp, sizeof dp, "%s/%s", src ? src : ".", reldir);
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
  SRunner *sr = srunner_create(s);
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
