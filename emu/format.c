/* Format descriptors: the built-in table, lookup by name, custom formats. */
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <strings.h>
#include "mpei.h"

static const struct mpe_format builtin[] = {
#define X(t, n, p, lo, hi, eb, inf, mx) \
  { n, t, p, lo, hi, eb, inf, mx, 0, 0, 0, {0} },
#include "formats.def"
#undef X
};
#define NBUILTIN (sizeof builtin / sizeof builtin[0])

/* minnorm/minsub are filled in once: ldexp is not a constant expression. Once
   with pthread_once: threads making their first call together each wrote the
   table while others read it (the same bytes, but a data race: ThreadSanitizer) */
static struct mpe_format table[NBUILTIN];
static pthread_once_t table_once = PTHREAD_ONCE_INIT;

static void fill_limits(struct mpe_format *f)
{
  f->minnorm = ldexp(1.0, f->emin);
  f->minsub = ldexp(1.0, f->emin - f->p + 1);
}

static void table_fill(void)
{
  for (size_t i = 0; i < NBUILTIN; i++) {
    struct mpe_format f = builtin[i];
    fill_limits(&f);
    table[i] = f;
  }
}

static const struct mpe_format *table_get(void)
{
  pthread_once(&table_once, table_fill);
  return table;
}

const mpe_format *mpe_format_of(mpe_type t)
{
  const struct mpe_format *tab = table_get();
  for (size_t i = 0; i < NBUILTIN; i++)
    if (tab[i].type == (int)t)
      return &tab[i];
  return NULL;
}

const mpe_format *mpe_format_lookup(const char *name)
{
  static const struct { const char *alias; mpe_type t; } aliases[] = {
    { "fp16", MPE_FP16 }, { "binary16", MPE_FP16 }, { "half", MPE_FP16 }, { "f16", MPE_FP16 },
    { "bf16", MPE_BF16 }, { "bfloat16", MPE_BF16 },
    { "tf32", MPE_TF32 },
    { "e4m3", MPE_E4M3 }, { "fp8-e4m3", MPE_E4M3 }, { "f8_e4m3", MPE_E4M3 },
    { "e5m2", MPE_E5M2 }, { "fp8-e5m2", MPE_E5M2 }, { "f8_e5m2", MPE_E5M2 },
    { "fp32", MPE_FP32 }, { "binary32", MPE_FP32 }, { "single", MPE_FP32 }, { "f32", MPE_FP32 },
    { "fp64", MPE_FP64 }, { "binary64", MPE_FP64 }, { "double", MPE_FP64 }, { "f64", MPE_FP64 },
  };
  if (!name)
    return NULL;
  for (size_t i = 0; i < sizeof aliases / sizeof aliases[0]; i++)
    if (!strcasecmp(name, aliases[i].alias))
      return mpe_format_of(aliases[i].t);
  return NULL;
}

int mpe_format_custom(mpe_format **out, int precision, int emin, int emax)
{
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
  f->has_inf = 1;
  f->custom = 1;
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
double mpe_format_unit_roundoff(const mpe_format *f) { return f ? ldexp(1.0, -f->p) : NAN; }
