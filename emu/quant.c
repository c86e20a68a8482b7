/* Integer quantisation (mpe_quant(3)): scales, zero points, encoding and
   decoding for MPE_INT8, MPE_UINT8, MPE_INT4, MPE_UINT4. The rounding to an
   integer is the library's one decision (mpei_round_count) and stochastic
   rounding draws the library's Philox words, so a quantised tensor is the
   same for any thread count and matches mpe_round_f32's streams. */
#include "config.h"
#include <float.h>
#include <math.h>
#include "mpei.h"
#include "mpemu/quant.h"

int mpe_quant_range(mpe_type t, int *qmin, int *qmax)
{
  if (!qmin || !qmax)
    return MPE_EINVAL;
  switch (t) {
  case MPE_INT8: *qmin = -128; *qmax = 127; return MPE_OK;
  case MPE_UINT8: *qmin = 0; *qmax = 255; return MPE_OK;
  case MPE_INT4: *qmin = -8; *qmax = 7; return MPE_OK;
  case MPE_UINT4: *qmin = 0; *qmax = 15; return MPE_OK;
  default: return MPE_EINVAL;
  }
}

/* Group of element (i, j) and the number of groups. */
static inline size_t group(mpe_quant_axis axis, size_t i, size_t j)
{
  return axis == MPE_QUANT_ROWS ? i : axis == MPE_QUANT_COLS ? j : 0;
}

static size_t ngroups(mpe_quant_axis axis, size_t rows, size_t cols)
{
  return axis == MPE_QUANT_ROWS ? rows : axis == MPE_QUANT_COLS ? cols : 1;
}

/* whether [a, a + na) and [b, b + nb) share a byte */
static int overlap(const void *a, size_t na, const void *b, size_t nb)
{
  uintptr_t a0 = (uintptr_t)a, b0 = (uintptr_t)b;
  return na && nb && a0 < b0 + nb && b0 < a0 + na;
}

static int args_ok(const void *a, const void *b, size_t rows, size_t cols, mpe_quant_axis axis, mpe_type t,
                   int *qmin, int *qmax)
{
  if (mpe_quant_range(t, qmin, qmax) != MPE_OK)
    return MPE_EINVAL;
  if (axis != MPE_QUANT_TENSOR && axis != MPE_QUANT_ROWS && axis != MPE_QUANT_COLS)
    return MPE_EINVAL;
  if (rows && cols && ((size_t)-1 / rows < cols || !mpei_count_ok(rows * cols, sizeof(float))))
    return MPE_EINVAL;
  if (rows && cols && (!a || !b))
    return MPE_EINVAL;
  return MPE_OK;
}

int mpe_quant_params(float *scale, int32_t *zero, const float *x, size_t rows, size_t cols,
                     mpe_quant_axis axis, mpe_type t, int symmetric)
{
  MPEI_FENV_GUARD();
  int qmin, qmax;
  int r = args_ok(x, scale, rows, cols, axis, t, &qmin, &qmax);
  if (r)
    return r;
  size_t ng = ngroups(axis, rows, cols);
  if (ng && (!scale || !zero))
    return MPE_EINVAL;
  /* scale[g] and zero[g] are written before group g + 1 is read */
  size_t n = rows * cols;
  if (overlap(scale, ng * sizeof *scale, x, n * sizeof *x) || overlap(zero, ng * sizeof *zero, x, n * sizeof *x) ||
      overlap(scale, ng * sizeof *scale, zero, ng * sizeof *zero))
    return MPE_EINVAL;
  for (size_t k = 0; k < n; k++)
    if (!isfinite(x[k]))
      return MPE_ERANGE;
  const int sgn = qmin < 0, Q = qmax == 127 || qmax == 255 ? 127 : 7;
  for (size_t g = 0; g < ng; g++) {
    /* extent of group g */
    size_t i0 = 0, i1 = rows, j0 = 0, j1 = cols;
    if (axis == MPE_QUANT_ROWS) { i0 = g; i1 = g + 1; }
    if (axis == MPE_QUANT_COLS) { j0 = g; j1 = g + 1; }
    double lo = 0.0, hi = 0.0;   /* the range always holds 0, so 0 is a code */
    for (size_t i = i0; i < i1; i++)
      for (size_t j = j0; j < j1; j++) {
        double v = x[i * cols + j];
        lo = v < lo ? v : lo;
        hi = v > hi ? v : hi;
      }
    double s;
    if (symmetric) {
      double amax = -lo > hi ? -lo : hi;
      s = amax / Q;
    } else {
      s = (hi - lo) / (qmax - qmin);
    }
    float sf = (float)s;
    if (s == 0.0)
      sf = 1.0f;          /* all zeros: any scale decodes them exactly */
    else if (sf < FLT_MIN)
      sf = FLT_MIN;
    int32_t z;
    if (symmetric) {
      z = sgn ? 0 : Q + 1;
    } else {
      int inexact;   /* rne(lo / sf): lo <= 0, the quotient in binary64 */
      double zl = mpei_round_count(-(double)lo / sf, 0, 1, MPE_RNE, 0, &inexact);
      double zd = qmin + zl;
      z = (int32_t)(zd < qmin ? qmin : zd > qmax ? qmax : zd);
    }
    scale[g] = sf;
    zero[g] = z;
  }
  return MPE_OK;
}

/* The parameters of ng groups: both arrays given, finite positive scales,
   zero points that are codes. */
static int groups_ok(const float *scale, const int32_t *zero, size_t ng, int qmin, int qmax)
{
  if (!scale || !zero)
    return 0;
  for (size_t g = 0; g < ng; g++)
    if (!isfinite(scale[g]) || !(scale[g] > 0.0f) || zero[g] < qmin || zero[g] > qmax)
      return 0;
  return 1;
}

/* What encoding and decoding both ask once args_ok passed: the ng groups'
   scales and zero points (groups_ok), and an output (out, nout bytes) apart
   from the input (in, nin bytes), the scales and the zero points. */
static int coded_ok(const void *out, size_t nout, const void *in, size_t nin, const float *scale,
                    const int32_t *zero, size_t ng, int qmin, int qmax)
{
  return groups_ok(scale, zero, ng, qmin, qmax) && !overlap(out, nout, in, nin) &&
         !overlap(out, nout, scale, ng * sizeof *scale) && !overlap(out, nout, zero, ng * sizeof *zero);
}

int mpe_quant_encode(void *q, const float *x, size_t rows, size_t cols, mpe_quant_axis axis, mpe_type t,
                     const float *scale, const int32_t *zero, const mpe_round_opts *o)
{
  MPEI_FENV_GUARD();
  int qmin, qmax;
  int r = args_ok(q, x, rows, cols, axis, t, &qmin, &qmax);
  if (r)
    return r;
  mpe_round_opts d = { 0 };
  if (!o)
    o = &d;
  if ((unsigned)o->round >= MPE_NROUND)
    return MPE_EINVAL;
  size_t ng = ngroups(axis, rows, cols), n = rows * cols;
  if (!n)
    return MPE_OK;
  /* the codes are written by threads in parallel: none may land on a value,
     scale or zero point another thread has still to read */
  if (!coded_ok(q, n, x, n * sizeof *x, scale, zero, ng, qmin, qmax))
    return MPE_EINVAL;
  for (size_t k = 0; k < n; k++)
    if (!isfinite(x[k]))
      return MPE_ERANGE;
  const int sr = o->round == MPE_SR || o->round == MPE_SR_EQ, sgn = qmin < 0;
  unsigned fl = 0;
#pragma omp parallel if (n > 65536)
  {
    MPEI_FENV_GUARD();
#pragma omp for schedule(static) reduction(|: fl)
    for (size_t i = 0; i < rows; i++)
      for (size_t j = 0; j < cols; j++) {
        size_t k = i * cols + j, g = group(axis, i, j);
        double v = (double)x[k] / scale[g];
        int neg = signbit(v) != 0;
        double a = fabs(v);
        if (a > 1e6)
          a = 1e6;   /* clipped below anyway; keeps the count exact */
        int inexact;
        uint32_t rnd = sr ? mpei_sr_word(o->seed, o->offset + k) : 0;
        double c = mpei_round_count(a, 0, neg, o->round, rnd, &inexact);
        double qv = (neg ? -c : c) + zero[g];
        if (inexact)
          fl |= MPE_FLAG_INEXACT;
        if (qv < qmin || qv > qmax) {
          fl |= MPE_FLAG_SATURATED;
          qv = qv < qmin ? qmin : qmax;
        }
        if (sgn)
          ((int8_t *)q)[k] = (int8_t)qv;
        else
          ((uint8_t *)q)[k] = (uint8_t)qv;
      }
  }
  mpei_flags |= fl;
  return MPE_OK;
}

int mpe_quant_decode(float *x, const void *q, size_t rows, size_t cols, mpe_quant_axis axis, mpe_type t,
                     const float *scale, const int32_t *zero)
{
  MPEI_FENV_GUARD();
  int qmin, qmax;
  int r = args_ok(x, q, rows, cols, axis, t, &qmin, &qmax);
  if (r)
    return r;
  size_t ng = ngroups(axis, rows, cols), n = rows * cols;
  if (!n)
    return MPE_OK;
  /* x[k] is written over the bytes of codes 4k .. 4k+3, still to be read */
  if (!coded_ok(x, n * sizeof *x, q, n, scale, zero, ng, qmin, qmax))
    return MPE_EINVAL;
  const int sgn = qmin < 0;
  for (size_t k = 0; k < n; k++) {
    int v = sgn ? ((const int8_t *)q)[k] : ((const uint8_t *)q)[k];
    if (v < qmin || v > qmax)
      return MPE_EINVAL;
  }
  for (size_t i = 0; i < rows; i++)
    for (size_t j = 0; j < cols; j++) {
      size_t k = i * cols + j, g = group(axis, i, j);
      int v = sgn ? ((const int8_t *)q)[k] : ((const uint8_t *)q)[k];
      x[k] = (float)(v - zero[g]) * scale[g];
    }
  return MPE_OK;
}
