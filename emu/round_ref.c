/* The reference rounding: a binary64 value rounded to any format of at most
   53 bits, under every mode, with the sticky flags. It is plain C on exact
   binary64 arithmetic (scaling by powers of two, floor) and is the oracle the
   SIMD kernels are tested against. */
#include <math.h>
#include "mpei.h"

_Static_assert((int)MPEI_RC_RNE == (int)MPE_RNE && (int)MPEI_RC_RNA == (int)MPE_RNA &&
                   (int)MPEI_RC_RZ == (int)MPE_RZ && (int)MPEI_RC_RU == (int)MPE_RU &&
                   (int)MPEI_RC_RD == (int)MPE_RD && (int)MPEI_RC_RO == (int)MPE_RO &&
                   (int)MPEI_RC_SR == (int)MPE_SR && (int)MPEI_RC_SR_EQ == (int)MPE_SR_EQ,
               "lib/mpei_round_core.h numbers the modes as mpe_round");

/* Round |a| (finite, >= 0) at quantum 2^qe: returns the rounded multiple
   count and sets *inexact. neg is the sign of the original value. The
   decision is lib/mpei_round_core.h's, on exact binary64 arithmetic. */
double mpei_round_count(double a, int qe, int neg, mpe_round r, uint32_t rnd, int *inexact)
{
  double s = ldexp(a, -qe);     /* exact: fewer than 2^54 quanta */
  double t = floor(s);
  double frac = s - t;          /* exact */
  *inexact = frac != 0;
  return t + MPEI_ROUND_UP((int)r, *inexact, frac > 0.5, frac == 0.5, fmod(t, 2.0) != 0, neg,
                           (double)rnd < floor(ldexp(frac, 32)), (rnd >> 31) != 0);
}

double mpei_round_ref(double x, int snan, const struct mpe_format *f, mpe_round r,
                      int flush, int saturate, uint32_t rnd, unsigned *flags)
{
  int neg = signbit(x) != 0;
  if (f->special == MPEI_SP_FINITE)   /* no inf, no NaN: overflow can only saturate */
    saturate = 1;
  if (isnan(x)) {
    if (snan)
      *flags |= MPE_FLAG_INVALID;
    return neg ? -NAN : NAN;
  }
  if (isinf(x)) {
    if (saturate) {
      *flags |= MPE_FLAG_SATURATED;
      return neg ? -f->maxv : f->maxv;
    }
    if (!f->has_inf) {
      *flags |= MPE_FLAG_INVALID;
      return neg ? -NAN : NAN;
    }
    return x;
  }
  if (x == 0)
    return x;

  double a = fabs(x);
  int e = ilogb(a);
  int qe = (e > f->emin ? e : f->emin) - f->p + 1;
  int inexact;
  double res = ldexp(mpei_round_count(a, qe, neg, r, rnd, &inexact), qe);

  if (inexact) {
    *flags |= MPE_FLAG_INEXACT;
    /* tininess after rounding: rounded to p bits with an unbounded exponent */
    if (a < f->minnorm) {
      int tiny;
      if (r == MPE_SR || r == MPE_SR_EQ) {
        tiny = 1;
      } else {
        int ix;
        int qu = e - f->p + 1;
        tiny = ldexp(mpei_round_count(a, qu, neg, r, rnd, &ix), qu) < f->minnorm;
      }
      if (tiny)
        *flags |= MPE_FLAG_UNDERFLOW;
    }
  }
  if (res > f->maxv) {
    *flags |= MPE_FLAG_OVERFLOW | MPE_FLAG_INEXACT;
    int toward_zero = MPEI_ROUND_TO_MAX((int)r, neg, 1);
    if (saturate) {
      *flags |= MPE_FLAG_SATURATED;
      res = f->maxv;
    } else if (toward_zero) {
      res = f->maxv;
    } else if (f->has_inf) {
      res = INFINITY;
    } else {
      return neg ? -NAN : NAN;
    }
  }
  if (flush && res != 0 && res < f->minnorm) {
    *flags |= MPE_FLAG_FLUSHED | MPE_FLAG_UNDERFLOW | MPE_FLAG_INEXACT;
    res = 0;
  }
  return neg ? -res : res;
}

/* Storage encodings. Custom formats have no storage: their "bits" are
   binary64 bits. */
uint32_t mpei_encode(double v, const struct mpe_format *f)
{
  if (f->type == MPE_FP64 || f->custom)
    return 0; /* not used: callers keep binary64 values */
  if (f->type == MPE_FP32 || f->type == MPE_TF32)
    return mpei_f2u((float)v);
  if (f->special == MPEI_SP_E8M0)   /* 2^(code - 127); NaN, and what is no power of two, 0xFF */
    return !(v > 0) || isinf(v) ? 0xffu : (uint32_t)(ilogb(v) + 127);
  int ebits = f->ebits, mbits = f->p - 1;
  uint32_t sign = signbit(v) ? 1u << (ebits + mbits) : 0;
  uint32_t expall = (1u << ebits) - 1;
  if (f->special == MPEI_SP_FNUZ) {   /* the sign bit alone is NaN (inf too: no code); -0 is +0 */
    if (!isfinite(v))
      return 1u << (ebits + mbits);
    if (v == 0)
      return 0;
  }
  if (f->special == MPEI_SP_FINITE && !isfinite(v))   /* no code: callers keep such values apart */
    return sign | (expall << mbits) | ((1u << mbits) - 1);   /* the largest magnitude */
  if (isnan(v)) {
    if (f->special == MPEI_SP_FN) /* E4M3: S.1111.111 */
      return sign | (expall << mbits) | ((1u << mbits) - 1);
    return sign | (expall << mbits) | (1u << (mbits - 1));   /* quiet, payload 0 */
  }
  if (isinf(v))
    return sign | (expall << mbits);
  double a = fabs(v);
  if (a == 0)
    return sign;
  if (a < f->minnorm)
    return sign | (uint32_t)ldexp(a, -(f->emin - mbits));
  int e = ilogb(a);
  uint32_t m = (uint32_t)(ldexp(a, mbits - e) - ldexp(1.0, mbits));
  return sign | ((uint32_t)(e - f->emin + 1) << mbits) | m;
}

double mpei_decode(uint32_t bits, const struct mpe_format *f)
{
  if (f->type == MPE_FP32 || f->type == MPE_TF32)
    return mpei_u2f(bits);
  if (f->special == MPEI_SP_E8M0)
    return (bits & 0xffu) == 0xffu ? NAN : ldexp(1.0, (int)(bits & 0xffu) - 127);
  int ebits = f->ebits, mbits = f->p - 1;
  uint32_t expall = (1u << ebits) - 1;
  int neg = (bits >> (ebits + mbits)) & 1;
  uint32_t ex = (bits >> mbits) & expall, m = bits & ((1u << mbits) - 1);
  double v;
  if (f->special == MPEI_SP_FNUZ && neg && !ex && !m)   /* the one NaN */
    return NAN;
  if (ex == expall && (f->special == MPEI_SP_IEEE || (f->special == MPEI_SP_FN && m == (1u << mbits) - 1))) {
    if (!f->has_inf || m)
      v = NAN;
    else
      v = INFINITY;
  } else if (ex == 0) {
    v = ldexp((double)m, f->emin - mbits);
  } else {
    v = ldexp((double)(m | (1u << mbits)), (int)ex - 1 + f->emin - mbits);
  }
  return neg ? -v : v;
}
