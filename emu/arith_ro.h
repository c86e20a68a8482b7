/* Round-to-odd binary64 helpers shared by the scalar arithmetic and the
   element-wise functions (internal). A value rounded to odd at 53 bits and
   then rounded once to p <= 51 bits gives the correctly rounded result of the
   exact value (Boldo and Melquiond, IEEE TC 2008). */
#ifndef MPEI_ARITH_RO_H
#define MPEI_ARITH_RO_H
#include <math.h>
#include "mpei.h"

/* s is the binary64 nearest to an exact value x, err = x - s (only its sign is
   used). Returns x rounded to odd at 53 bits. s is never 0 when err != 0. */
static inline double mpei_ro_adjust(double s, double err)
{
  if (err == 0)
    return s;
  uint64_t u = mpei_d2u(s);
  if (u & 1)
    return s;
  /* the odd neighbour on the side of x: one step of the magnitude */
  return mpei_u2d((signbit(s) != 0) == (err < 0) ? u + 1 : u - 1);
}

/* a + b rounded to odd (TwoSum gives the exact error of the binary64 sum);
   needs finite a, b whose sum does not overflow */
static inline double mpei_ro_sum(double a, double b)
{
  double s = a + b;
  double bb = s - a;
  double e = (a - (s - bb)) + (b - bb);
  return mpei_ro_adjust(s, e);
}

/* a / b rounded to odd; the FMA remainder is exact while nothing underflows */
static inline double mpei_ro_div(double a, double b)
{
  double q = a / b;
  if (isfinite(q) && q != 0) {
    double rem = fma(-q, b, a);
    q = mpei_ro_adjust(q, b > 0 ? rem : -rem);
  }
  return q;
}

/* sqrt(a) rounded to odd (a >= 0, or NaN) */
static inline double mpei_ro_sqrt(double a)
{
  double s = sqrt(a);
  if (isfinite(s) && s != 0)
    s = mpei_ro_adjust(s, fma(-s, s, a));
  return s;
}

/* IEEE sign of an exact zero sum: the common sign of two zeros, else +0 (-0 under RD) */
static inline double mpei_zero_sum_sign(double s, double a, double b, mpe_round r)
{
  if (s != 0 || (a == 0 && b == 0 && signbit(a) == signbit(b)))
    return s;
  return r == MPE_RD ? -0.0 : 0.0;
}
#endif
