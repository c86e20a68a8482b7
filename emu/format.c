/* Format descriptors: the built-in table, lookup by name, custom formats. */
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include "mpei.h"

/* the rows of lib/mpemu/formats.def; maxv, has_inf, minnorm, minsub are
   derived from the columns once (table_fill) */
static const struct mpe_format builtin[] = {
#define MPE_FORMAT(T, V, N, AL, P, LO, HI, EB, B, SP, NPY, ST, PT, PTS) \
  { .name = N, .type = T, .p = P, .emin = LO, .emax = HI, .ebits = EB, .bits = B, .special = MPEI_SP_##SP, \
    .aliases = AL, .npy = NPY, .st = ST, .pt = PT, .ptstorage = PTS },
#include "mpemu/formats.def"
#undef MPE_FORMAT
};
#define NBUILTIN (sizeof builtin / sizeof builtin[0])

/* the rows' values are their mpe_type numbers and distinct (checked when the
   table is filled: a duplicate is a build mistake, reported loudly) */
static struct mpe_format table[NBUILTIN];
static pthread_once_t table_once = PTHREAD_ONCE_INIT;

static void fill_limits(struct mpe_format *f)
{
  f->minnorm = ldexp(1.0, f->emin);
  f->minsub = ldexp(1.0, f->emin - f->p + 1);
}

static double max_of(const struct mpe_format *f)
{
  switch (f->special) {
  case MPEI_SP_FN: return ldexp(2.0 - ldexp(1.0, 2 - f->p), f->emax);   /* all-ones is NaN */
  case MPEI_SP_E8M0: return ldexp(1.0, f->emax);
  default: return ldexp(2.0 - ldexp(1.0, 1 - f->p), f->emax);
  }
}

/* minnorm/minsub/maxv are filled in once: ldexp is not a constant expression. Once
   with pthread_once: threads making their first call together each wrote the
   table while others read it (the same bytes, but a data race: ThreadSanitizer) */
static void table_fill(void)
{
  for (size_t i = 0; i < NBUILTIN; i++) {
    struct mpe_format f = builtin[i];
    f.has_inf = f.special == MPEI_SP_IEEE;
    f.maxv = max_of(&f);
    fill_limits(&f);
    for (size_t j = 0; j < i; j++)
      if (builtin[j].type == f.type) {
        fprintf(stderr, "mpemu: formats.def: %s and %s have the same type value\n", builtin[j].name, f.name);
        abort();
      }
    table[i] = f;
  }
}

const struct mpe_format *mpei_format_table(size_t *n)
{
  pthread_once(&table_once, table_fill);
  if (n)
    *n = NBUILTIN;
  return table;
}

const mpe_format *mpe_format_of(mpe_type t)
{
  size_t n;
  const struct mpe_format *tab = mpei_format_table(&n);
  for (size_t i = 0; i < n; i++)
    if (tab[i].type == (int)t)
      return &tab[i];
  return NULL;
}

size_t mpei_format_file_bytes(const struct mpe_format *f)
{
  if (!f || f->custom || (!f->npy && !f->st))
    return 0;
  int bits = f->bits;
  return bits <= 8 ? 1 : bits <= 16 ? 2 : bits <= 32 ? 4 : 8;
}

/* name[0..len) equals one of the '|'-separated words of list (ignoring case) */
static int in_list(const char *list, const char *name, size_t len)
{
  while (*list) {
    size_t w = strcspn(list, "|");
    if (w == len && !strncasecmp(list, name, len))
      return 1;
    list += w + (list[w] == '|');
  }
  return 0;
}

const struct mpe_format *mpei_format_named(const char *name, size_t len)
{
  size_t n;
  const struct mpe_format *tab = mpei_format_table(&n);
  if (!name || !len)
    return NULL;
  for (size_t i = 0; i < n; i++)
    if (in_list(tab[i].name, name, len) || in_list(tab[i].aliases, name, len))
      return &tab[i];
  return NULL;
}

const mpe_format *mpe_format_lookup(const char *name)
{
  return name ? mpei_format_named(name, strlen(name)) : NULL;
}

int mpe_format_custom(mpe_format **out, int precision, int emin, int emax)
{
  if (out)
    *out = NULL;   /* the constructor convention (mpemu/core.h) */
  if (!out || precision < 2 || precision > 53 || emin >= emax || emin < -16382 || emax > 16383)
    return MPE_EINVAL;
  struct mpe_format *f = calloc(1, sizeof *f);
  if (!f)
    return MPE_ENOMEM;
  f->type = -1;
  f->p = precision;
  f->emin = emin;
  f->emax = emax;
  f->ebits = 0;
  f->special = MPEI_SP_IEEE;
  f->has_inf = 1;
  f->custom = 1;
  f->aliases = "";
  /* (2 - 2^(1-p)) * 2^emax, saturating to DBL_MAX's neighbourhood: beyond
     binary64's range every double is below the format's max anyway. */
  f->maxv = emax > 1023 ? INFINITY : ldexp(2.0 - ldexp(1.0, 1 - precision), emax);
  fill_limits(f);
  snprintf(f->namebuf, sizeof f->namebuf, "custom(p=%d,emin=%d,emax=%d)", precision, emin, emax);
  f->name = f->namebuf;
  *out = f;
  return MPE_OK;
}

void mpe_format_free(mpe_format *f)
{
  if (f && f->custom)
    free(f);
}

const char *mpe_format_name(const mpe_format *f) { return f ? f->name : NULL; }
int mpe_format_precision(const mpe_format *f) { return f ? f->p : 0; }
int mpe_format_emin(const mpe_format *f) { return f ? f->emin : 0; }
int mpe_format_emax(const mpe_format *f) { return f ? f->emax : 0; }
double mpe_format_max(const mpe_format *f) { return f ? f->maxv : NAN; }
double mpe_format_min_normal(const mpe_format *f) { return f ? f->minnorm : NAN; }
double mpe_format_min_subnormal(const mpe_format *f) { return f ? f->minsub : NAN; }
int mpe_format_has_inf(const mpe_format *f) { return f ? f->has_inf : 0; }
int mpe_format_has_nan(const mpe_format *f) { return f ? f->special != MPEI_SP_FINITE : 0; }
int mpe_format_is_signed(const mpe_format *f) { return f ? f->special != MPEI_SP_E8M0 : 0; }
double mpe_format_unit_roundoff(const mpe_format *f) { return f ? ldexp(1.0, -f->p) : NAN; }
