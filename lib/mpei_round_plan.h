/* The one plan builder of the rounding core (host side): a format under
   rounding options seen on binary32 and binary64 carriers, for the array
   kernels (emu/round_array.c), the element-wise kernels (emu/elementwise.c)
   and the GPU (gpu/round_dev.h). Needs lib/mpei.h, <math.h> and <float.h>. */
#ifndef MPEI_ROUND_PLAN_H
#define MPEI_ROUND_PLAN_H

/* bits of the smallest binary32 >= v (v >= 0) */
static inline uint32_t mpei_ceil_bits32(double v)
{
  if (v > FLT_MAX)
    return 0x7f800000u;
  float f = (float)v;
  if ((double)f < v)
    f = nextafterf(f, INFINITY);
  return mpei_f2u(f);
}

/* binary32 view of a format: the exponent range clamped to binary32's */
static inline struct mpe_format mpei_format_clamp32(const struct mpe_format *f)
{
  struct mpe_format g = *f;
  if (g.maxv > FLT_MAX) {
    g.emax = 127;
    g.maxv = ldexp(2.0 - ldexp(1.0, 1 - g.p), 127);
    g.has_inf = 1;
  }
  return g;
}

static inline void mpei_round_plan_make(mpei_round_plan *pl, const struct mpe_format *f0,
                                        const mpe_round_opts *o)
{
  const struct mpe_format f = mpei_format_clamp32(f0);
  const double mn = f.minnorm;
  pl->p = f.p;
  pl->emin = f.emin;
  pl->dbase = 24 - f.p;
  pl->eminb = f.emin + 127;
  pl->max_bits = mpei_f2u((float)f.maxv);
  pl->minnorm_bits = mpei_ceil_bits32(mn);
  pl->minsub_bits = mpei_ceil_bits32(f.minsub);
  double nearest = mn - ldexp(1.0, f.emin - f.p - 1);   /* tiny iff |x| < this */
  double away = mn - ldexp(1.0, f.emin - f.p);          /* tiny iff |x| <= this */
  uint32_t tz = pl->minnorm_bits, tn = mpei_ceil_bits32(nearest), ta = mpei_f2u((float)away) + 1;
  switch (o->round) {
  case MPE_RNE: case MPE_RNA: pl->tiny_pos = pl->tiny_neg = tn; break;
  case MPE_RU: pl->tiny_pos = ta; pl->tiny_neg = tz; break;
  case MPE_RD: pl->tiny_pos = tz; pl->tiny_neg = ta; break;
  default: pl->tiny_pos = pl->tiny_neg = tz; break;
  }
  pl->ovf_bits = f.has_inf ? 0x7f800000u : 0x7fc00000u;
  /* formats with no inf and no NaN (OCP FP6/FP4) always saturate */
  const int saturate = o->saturate || f.special == MPEI_SP_FINITE;
  pl->inf_bits = saturate ? pl->max_bits : pl->ovf_bits;
  pl->mode = (int32_t)o->round;
  pl->flush = o->flush_subnormals != 0;
  pl->saturate = saturate;
  pl->has_inf = f.has_inf;
  pl->seed = o->seed;
  pl->offset = o->offset;
  /* binary64 carriers: tiny iff |x| < nearest (to nearest), |x| <= away (away
     from zero: below its successor), |x| < minnorm (otherwise) */
  pl->dbase64 = 53 - f.p;
  pl->eminb64 = f.emin + 1023;
  pl->maxv = f.maxv;
  pl->minnorm = mn;
  pl->minsub_bits64 = mpei_d2u(f.minsub);
  double above_pred = nextafter(away, INFINITY);
  switch (o->round) {
  case MPE_RNE: case MPE_RNA: pl->tiny_pos64 = pl->tiny_neg64 = nearest; break;
  case MPE_RU: pl->tiny_pos64 = above_pred; pl->tiny_neg64 = mn; break;
  case MPE_RD: pl->tiny_pos64 = mn; pl->tiny_neg64 = above_pred; break;
  default: pl->tiny_pos64 = pl->tiny_neg64 = mn; break;
  }
}
#endif
