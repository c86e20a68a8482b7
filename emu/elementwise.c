/* Element-wise array operations in a format: each result is formed in
   binary64 (exact, rounded to odd, or a SLEEF 1-ulp function value made safe
   at the points where binary64 would land on a rounding boundary), then
   rounded once to the format by the array-rounding kernels.

   Rounding path: for deterministic modes and formats with p <= 22 whose
   quanta are at least 4x binary32's (emin - p + 1 >= -147), the binary64 value
   is rounded to odd at binary32 (still innocuous: p + 2 <= 24 bits kept) and
   handed to mpe_round_f32 (SIMD). Otherwise mpe_round_f64 rounds the binary64
   value directly. Element i always uses the random word (seed, offset + i). */
#include "config.h"
#include <float.h>
#include <math.h>
#include <sleef.h>
#ifdef _OPENMP
#include <omp.h>
#endif
#include "mpei.h"
#include "mpemu/arith.h"
#include "arith_ro.h"
#include "elementwise.h"

#define CHUNK 2048
#define PAR_MIN (1u << 15)

enum { EW_ADD, EW_SUB, EW_MUL, EW_DIV, EW_FMA, EW_SCALE, EW_SQRT, EW_RECIP,
       EW_EXP, EW_LOG, EW_TANH, EW_SIGMOID };

typedef struct {
  int op;
  const float *x, *y, *z;
  float alpha;
  const struct mpe_format *f;
  mpe_round_opts o;
  int fast;
  mpei_ew_vfn vexp, vlog, vtanh;
} ew_job;

/* ---- portable SLEEF loops: the FMA build of SLEEF's scalar code where the
   CPU has FMA, so that every SIMD level gives the same binary64 values */
static int cpu_fma(void)
{
#if defined(__GNUC__) && (defined(__x86_64__) || defined(__i386__))
  return __builtin_cpu_supports("fma");
#else
  return 0;
#endif
}
#ifndef FP_FAST_FMA   /* sleef.h declares the FMA scalar code only for FMA builds */
double Sleef_expd1_u10purecfma(double);
double Sleef_logd1_u10purecfma(double);
double Sleef_tanhd1_u10purecfma(double);
#endif
#define PORTABLE_LOOP(name, fn)                                            \
  static void name(double *y, const double *x, size_t n)                  \
  {                                                                       \
    if (cpu_fma())                                                        \
      for (size_t i = 0; i < n; i++) y[i] = fn##purecfma(x[i]);           \
    else                                                                  \
      for (size_t i = 0; i < n; i++) y[i] = fn##purec(x[i]);              \
  }
PORTABLE_LOOP(exp_portable, Sleef_expd1_u10)
PORTABLE_LOOP(log_portable, Sleef_logd1_u10)
PORTABLE_LOOP(tanh_portable, Sleef_tanhd1_u10)

static void pick_kernels(ew_job *j)
{
  j->vexp = exp_portable;
  j->vlog = log_portable;
  j->vtanh = tanh_portable;
#ifdef HAVE_X86_SIMD
  int lvl = mpei_simd_level();
  if (lvl >= MPEI_SIMD_AVX512) {
    j->vexp = mpei_ew_exp_avx512;
    j->vlog = mpei_ew_log_avx512;
    j->vtanh = mpei_ew_tanh_avx512;
  } else if (lvl >= MPEI_SIMD_AVX2) {
    j->vexp = mpei_ew_exp_avx2;
    j->vlog = mpei_ew_log_avx2;
    j->vtanh = mpei_ew_tanh_avx2;
  }
#endif
}

static inline int snan32(float x)
{
  uint32_t u = mpei_f2u(x);
  return (u & 0x7f800000u) == 0x7f800000u && (u & 0x3fffffu) && !(u & 0x400000u);
}

/* NaN made from non-NaN operands, or a signalling NaN operand */
static inline unsigned invalid_of(double r, float a, float b)
{
  return ((isnan(r) && !isnan(a) && !isnan(b)) || snan32(a) || snan32(b)) ? MPE_FLAG_INVALID : 0;
}

/* binary64 d rounded to odd at binary32 (saturating at FLT_MAX, never 0 when d is not) */
static inline float ro32(double d)
{
  float f = (float)d;
  if ((double)f != d && !isnan(d)) {
    uint32_t u = mpei_f2u(f);
    if (!(u & 1))
      f = mpei_u2f(fabs(d) > fabs((double)f) ? u + 1 : u - 1);
  }
  return f;
}

/* d[i] for elements i0 .. i0+n-1 of a flat operation; returns invalid/divide flags */
static unsigned eval_flat(const ew_job *j, double *d, double *buf, size_t i0, size_t n)
{
  const float *x = j->x + i0, *y = j->y ? j->y + i0 : NULL, *z = j->z ? j->z + i0 : NULL;
  mpe_round r = j->o.round;
  unsigned fl = 0;
  switch (j->op) {
  case EW_ADD: case EW_SUB:
    for (size_t i = 0; i < n; i++) {
      double a = x[i], b = j->op == EW_SUB ? -(double)y[i] : (double)y[i];
      double s = isfinite(a) && isfinite(b) ? mpei_zero_sum_sign(mpei_ro_sum(a, b), a, b, r) : a + b;
      fl |= invalid_of(s, x[i], y[i]);
      d[i] = s;
    }
    break;
  case EW_MUL:
    for (size_t i = 0; i < n; i++) {
      d[i] = (double)x[i] * y[i];   /* exact */
      fl |= invalid_of(d[i], x[i], y[i]);
    }
    break;
  case EW_DIV:
    for (size_t i = 0; i < n; i++) {
      if (y[i] == 0 && x[i] != 0 && isfinite(x[i]))
        fl |= MPE_FLAG_DIVBYZERO;
      d[i] = mpei_ro_div(x[i], y[i]);
      fl |= invalid_of(d[i], x[i], y[i]);
    }
    break;
  case EW_FMA:
    for (size_t i = 0; i < n; i++) {
      double p = (double)x[i] * y[i], c = z[i];
      double s = isfinite(p) && isfinite(c) ? mpei_zero_sum_sign(mpei_ro_sum(p, c), p, c, r) : p + c;
      fl |= invalid_of(s, x[i], y[i]) | (isnan(z[i]) ? invalid_of(s, z[i], z[i]) : invalid_of(s, 0, 0));
      d[i] = s;
    }
    break;
  case EW_SCALE:
    for (size_t i = 0; i < n; i++) {
      d[i] = (double)j->alpha * x[i];   /* exact */
      fl |= invalid_of(d[i], x[i], j->alpha);
    }
    break;
  case EW_SQRT:
    for (size_t i = 0; i < n; i++) {
      d[i] = x[i] < 0 ? NAN : mpei_ro_sqrt(x[i]);
      fl |= invalid_of(d[i], x[i], 0);
    }
    break;
  case EW_RECIP:
    for (size_t i = 0; i < n; i++) {
      if (x[i] == 0)
        fl |= MPE_FLAG_DIVBYZERO;
      d[i] = mpei_ro_div(1.0, x[i]);
      fl |= invalid_of(d[i], x[i], 0);
    }
    break;
  case EW_EXP:
    for (size_t i = 0; i < n; i++)
      buf[i] = x[i];
    j->vexp(d, buf, n);
    for (size_t i = 0; i < n; i++) {
      float a = x[i];
      fl |= invalid_of(0, a, 0);
      /* binary64 overflow/underflow: an odd stand-in on the right side of every boundary */
      if (a > 709.0f)
        d[i] = isinf(a) ? INFINITY : DBL_MAX;
      else if (a < -745.0f)
        d[i] = isinf(a) ? 0.0 : 0x1p-1074;
      else if (a != 0 && (fabsf(a) < 0x1p-40f || d[i] == 1.0))   /* e^a is near 1, never 1 */
        d[i] = a > 0 ? 1 + 0x1p-52 : 1 - 0x1p-53;
    }
    break;
  case EW_LOG:
    for (size_t i = 0; i < n; i++)
      buf[i] = x[i];
    j->vlog(d, buf, n);
    for (size_t i = 0; i < n; i++) {
      if (x[i] == 0) {
        d[i] = -INFINITY;
        fl |= MPE_FLAG_DIVBYZERO;
      } else if (x[i] < 0) {
        d[i] = NAN;
      }
      fl |= invalid_of(d[i], x[i], 0);
    }
    break;
  case EW_TANH:
    for (size_t i = 0; i < n; i++)
      buf[i] = x[i];
    j->vtanh(d, buf, n);
    for (size_t i = 0; i < n; i++) {
      float a = x[i];
      fl |= invalid_of(0, a, 0);
      /* Where binary64 can land on a boundary of every format (+-1, or a itself)
         while the exact value cannot, an odd stand-in on the exact value's side:
         for |a| >= 9.7, 1 - |tanh a| < 2^-26, so 1 - 2^-53 lies between the same
         boundaries of any p <= 24 format; for small a, |tanh a| is just below |a|. */
      if (fabsf(a) >= 9.7f)
        d[i] = isinf(a) ? (a > 0 ? 1.0 : -1.0) : (a > 0 ? 1 - 0x1p-53 : -(1 - 0x1p-53));
      else if (a != 0 && (fabsf(a) < 0x1p-26f || d[i] == (double)a))
        d[i] = mpei_u2d(mpei_d2u((double)a) - 1);
    }
    break;
  case EW_SIGMOID:
    for (size_t i = 0; i < n; i++)
      buf[i] = -(double)x[i];
    j->vexp(d, buf, n);
    for (size_t i = 0; i < n; i++) {
      float a = x[i];
      fl |= invalid_of(0, a, 0);
      if (isnan(a))
        d[i] = a;
      else if (a >= 37.0f)              /* 1 - sigmoid < 2^-53 */
        d[i] = isinf(a) ? 1.0 : 1 - 0x1p-53;
      else if (a < -708.0f)             /* below binary32's range whatever the format */
        d[i] = isinf(a) ? 0.0 : 0x1p-1074;
      else if (a != 0 && fabsf(a) < 0x1p-45f)
        d[i] = a > 0 ? 0.5 + 0x1p-53 : 0.5 - 0x1p-54;
      else {
        d[i] = 1.0 / (1.0 + d[i]);
        if (d[i] == 1.0)                /* exact value within 2^-26 below 1 */
          d[i] = 1 - 0x1p-53;
        else if (d[i] == 0.5 && a != 0)
          d[i] = a > 0 ? 0.5 + 0x1p-53 : 0.5 - 0x1p-54;
      }
    }
    break;
  }
  return fl;
}

static int stochastic(mpe_round r) { return r == MPE_SR || r == MPE_SR_EQ; }

/* Round d (n values, first element index i0) into out; returns the flags raised. */
static unsigned round_chunk(const ew_job *j, float *out, double *d, float *tmp, size_t i0, size_t n)
{
  unsigned save = mpei_flags, fl;
  mpei_flags = 0;
  mpe_round_opts o = j->o;
  o.offset += i0;
  if (j->fast) {
    for (size_t i = 0; i < n; i++)
      tmp[i] = ro32(d[i]);
    mpe_round_f32(out, tmp, n, j->f, &o);
  } else {
    mpe_round_f64(d, d, n, j->f, &o);
    for (size_t i = 0; i < n; i++)
      out[i] = (float)d[i];   /* exact: the format fits binary32 */
  }
  fl = mpei_flags;
  mpei_flags = save;
  return fl;
}

static int check_common(const mpe_format *f, const mpe_round_opts *o)
{
  if (!f || (o && (unsigned)o->round >= MPE_NROUND))
    return MPE_EINVAL;
  if (f->p > 24 || f->emin < -126 || f->emax > 127)
    return MPE_EINVAL;
  return MPE_OK;
}

static void init_job(ew_job *j, int op, const mpe_format *f, const mpe_round_opts *o)
{
  mpe_round_opts d = { MPE_RNE, 0, 0, 0, 0 };
  j->op = op;
  j->f = f;
  j->o = o ? *o : d;
  j->fast = !stochastic(j->o.round) && f->p <= 22 && f->emin - f->p + 1 >= -147;
  j->y = j->z = NULL;
  j->alpha = 0;
  pick_kernels(j);
}

static int run_flat(ew_job *j, float *out, size_t n)
{
  size_t nchunks = (n + CHUNK - 1) / CHUNK;
  unsigned fl = 0;
  int par = 0;
#ifdef _OPENMP
  par = n >= PAR_MIN && omp_get_max_threads() > 1 && !omp_in_parallel();
#endif
#pragma omp parallel for schedule(static) reduction(| : fl) if (par)
  for (size_t c = 0; c < nchunks; c++) {
    double d[CHUNK], buf[CHUNK];
    float tmp[CHUNK];
    size_t i0 = c * CHUNK, len = n - i0 < CHUNK ? n - i0 : CHUNK;
    fl |= eval_flat(j, d, buf, i0, len);
    fl |= round_chunk(j, out + i0, d, tmp, i0, len);
  }
  mpei_flags |= fl;
  return MPE_OK;
}

static int unary(int op, float *y, const float *x, size_t n, const mpe_format *f, const mpe_round_opts *o)
{
  int e = check_common(f, o);
  if (e)
    return e;
  if (n > 0 && (!y || !x))
    return MPE_EINVAL;
  if (n == 0)
    return MPE_OK;
  ew_job j;
  init_job(&j, op, f, o);
  j.x = x;
  return run_flat(&j, y, n);
}

static int binary(int op, float *z, const float *x, const float *y, size_t n, const mpe_format *f,
                  const mpe_round_opts *o)
{
  int e = check_common(f, o);
  if (e)
    return e;
  if (n > 0 && (!z || !x || !y))
    return MPE_EINVAL;
  if (n == 0)
    return MPE_OK;
  ew_job j;
  init_job(&j, op, f, o);
  j.x = x;
  j.y = y;
  return run_flat(&j, z, n);
}

int mpe_ew_add(float *z, const float *x, const float *y, size_t n, const mpe_format *f, const mpe_round_opts *o)
{ return binary(EW_ADD, z, x, y, n, f, o); }
int mpe_ew_sub(float *z, const float *x, const float *y, size_t n, const mpe_format *f, const mpe_round_opts *o)
{ return binary(EW_SUB, z, x, y, n, f, o); }
int mpe_ew_mul(float *z, const float *x, const float *y, size_t n, const mpe_format *f, const mpe_round_opts *o)
{ return binary(EW_MUL, z, x, y, n, f, o); }
int mpe_ew_div(float *z, const float *x, const float *y, size_t n, const mpe_format *f, const mpe_round_opts *o)
{ return binary(EW_DIV, z, x, y, n, f, o); }

int mpe_ew_fma(float *w, const float *x, const float *y, const float *z, size_t n, const mpe_format *f,
               const mpe_round_opts *o)
{
  int e = check_common(f, o);
  if (e)
    return e;
  if (n > 0 && (!w || !x || !y || !z))
    return MPE_EINVAL;
  if (n == 0)
    return MPE_OK;
  ew_job j;
  init_job(&j, EW_FMA, f, o);
  j.x = x;
  j.y = y;
  j.z = z;
  return run_flat(&j, w, n);
}

int mpe_ew_scale(float *y, float alpha, const float *x, size_t n, const mpe_format *f, const mpe_round_opts *o)
{
  int e = check_common(f, o);
  if (e)
    return e;
  if (n > 0 && (!y || !x))
    return MPE_EINVAL;
  if (n == 0)
    return MPE_OK;
  ew_job j;
  init_job(&j, EW_SCALE, f, o);
  j.x = x;
  j.alpha = alpha;
  return run_flat(&j, y, n);
}

int mpe_ew_sqrt(float *y, const float *x, size_t n, const mpe_format *f, const mpe_round_opts *o)
{ return unary(EW_SQRT, y, x, n, f, o); }
int mpe_ew_recip(float *y, const float *x, size_t n, const mpe_format *f, const mpe_round_opts *o)
{ return unary(EW_RECIP, y, x, n, f, o); }
int mpe_ew_exp(float *y, const float *x, size_t n, const mpe_format *f, const mpe_round_opts *o)
{ return unary(EW_EXP, y, x, n, f, o); }
int mpe_ew_log(float *y, const float *x, size_t n, const mpe_format *f, const mpe_round_opts *o)
{ return unary(EW_LOG, y, x, n, f, o); }
int mpe_ew_tanh(float *y, const float *x, size_t n, const mpe_format *f, const mpe_round_opts *o)
{ return unary(EW_TANH, y, x, n, f, o); }
int mpe_ew_sigmoid(float *y, const float *x, size_t n, const mpe_format *f, const mpe_round_opts *o)
{ return unary(EW_SIGMOID, y, x, n, f, o); }

/* ---- softmax over rows: two passes per row (sum, then values), so no scratch
   beyond the fixed chunk buffers whatever the row length */
static unsigned softmax_row(const ew_job *j, float *yr, const float *xr, size_t cols, size_t base)
{
  double d[CHUNK], buf[CHUNK];
  float tmp[CHUNK];
  unsigned fl = 0;
  float m = -INFINITY;
  int bad = 0;
  for (size_t c = 0; c < cols; c++) {
    if (isnan(xr[c]) || xr[c] == INFINITY)
      bad = 1;
    fl |= snan32(xr[c]) ? MPE_FLAG_INVALID : 0;
    m = xr[c] > m ? xr[c] : m;
  }
  if (bad || m == -INFINITY) {
    for (size_t c = 0; c < cols; c++)
      yr[c] = NAN;
    return fl | MPE_FLAG_INVALID;
  }
  double s = 0;
  for (size_t c0 = 0; c0 < cols; c0 += CHUNK) {
    size_t len = cols - c0 < CHUNK ? cols - c0 : CHUNK;
    for (size_t i = 0; i < len; i++)
      buf[i] = (double)xr[c0 + i] - m;
    j->vexp(d, buf, len);
    for (size_t i = 0; i < len; i++)
      s += d[i];
  }
  for (size_t c0 = 0; c0 < cols; c0 += CHUNK) {
    size_t len = cols - c0 < CHUNK ? cols - c0 : CHUNK;
    for (size_t i = 0; i < len; i++)
      buf[i] = (double)xr[c0 + i] - m;
    j->vexp(d, buf, len);
    for (size_t i = 0; i < len; i++)
      d[i] /= s;
    fl |= round_chunk(j, yr + c0, d, tmp, base + c0, len);
  }
  return fl;
}

int mpe_ew_softmax(float *y, const float *x, size_t rows, size_t cols, const mpe_format *f,
                   const mpe_round_opts *o)
{
  int e = check_common(f, o);
  if (e)
    return e;
  if (rows > 0 && cols > 0 && (rows > SIZE_MAX / cols || !y || !x))
    return MPE_EINVAL;
  if (rows == 0 || cols == 0)
    return MPE_OK;
  ew_job j;
  init_job(&j, EW_EXP, f, o);
  unsigned fl = 0;
  int par = 0;
#ifdef _OPENMP
  par = rows > 1 && rows * cols >= PAR_MIN && omp_get_max_threads() > 1 && !omp_in_parallel();
#endif
#pragma omp parallel for schedule(static) reduction(| : fl) if (par)
  for (size_t r = 0; r < rows; r++)
    fl |= softmax_row(&j, y + r * cols, x + r * cols, cols, r * cols);
  mpei_flags |= fl;
  return MPE_OK;
}
