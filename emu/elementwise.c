/* Element-wise array operations in a format: each result is formed in
   binary64 (exact, rounded to odd, or a SLEEF 1-ulp function value made safe
   at the points where binary64 would land on a rounding boundary), then
   rounded once to the format.

   Two implementations of every step, chosen by the SIMD level's row of the
   kernel table (emu/isa.c): the portable scalar code below (the reference the
   tests compare against) and the vector kernels of elementwise_kernel.h (AVX2,
   AVX-512), which compute the same bits.

   Rounding: the binary64 value is rounded once, directly, by mpe_round_f64
   (portable: mpei_round_ref) or by the vector kernel that reproduces
   mpei_round_ref's decisions and flags. Add, sub, mul, scale, div, recip and
   sqrt in the deterministic modes (p <= 22, no flushing), and add, sub, mul and
   scale in MPE_SR and MPE_SR_EQ (p <= 16), take a one-pass path on binary32
   lanes instead (the result and its exact error, rounded with integer
   operations; elementwise_kernel.h says why the bits are the same); lanes
   it does not cover go through the binary64 steps. Element i always uses the
   random word (seed, offset + i), the word of mpe_round_f64 and mpe_round_f32.
   A NaN result is the quiet NaN with the sign of the first NaN operand (x, y,
   z; alpha after x), or +NaN when the operation made it from numbers. */
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
#include "isa.h"
#include "mpei_round_plan.h"

#define CHUNK 2048
#define PAR_MIN (1u << 15)

typedef struct {
  mpei_ew_args a;
  const struct mpe_format *f;
  mpe_round_opts o;
  mpei_ew_plan plan;        /* direct rounding by the vector kernel */
  mpei_ew_eval_fn eval;
  mpei_ew_round_fn round;   /* NULL: mpe_round_f64 */
  mpei_ew_vfn vexp;
  mpei_ew_fast32_fn fast32;   /* add .. recip but fma, where plan.fast32; add, sub, mul, scale
                                 where plan.fast_sr (vector levels) */
} ew_job;

/* ---- portable SLEEF loops: the FMA build of SLEEF's scalar code where the
   CPU has FMA, so that every SIMD level gives the same binary64 values */
static int cpu_fma(void)
{
  return (mpei_cpu_features() & MPEI_CPU_FMA) != 0;
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

/* d[i] for elements i0 .. i0+n-1 of a flat operation; returns invalid/divide flags */
static unsigned eval_portable(double *d, const mpei_ew_args *j, size_t i0, size_t n)
{
  const float *x = j->x + i0, *y = j->y ? j->y + i0 : NULL, *z = j->z ? j->z + i0 : NULL;
  mpe_round r = j->round;
  unsigned fl = 0;
  switch (j->op) {
  case EW_ADD: case EW_SUB:
    for (size_t i = 0; i < n; i++) {
      double a = x[i], b = j->op == EW_SUB ? -(double)y[i] : (double)y[i];
      double s = isfinite(a) && isfinite(b) ? mpei_zero_sum_sign(mpei_ro_sum(a, b), a, b, r) : a + b;
      d[i] = s;
    }
    break;
  case EW_MUL:
    for (size_t i = 0; i < n; i++) {
      d[i] = (double)x[i] * y[i];   /* exact */
    }
    break;
  case EW_DIV:
    for (size_t i = 0; i < n; i++) {
      if (y[i] == 0 && x[i] != 0 && isfinite(x[i]))
        fl |= MPE_FLAG_DIVBYZERO;
      d[i] = mpei_ro_div(x[i], y[i]);
    }
    break;
  case EW_FMA:
    for (size_t i = 0; i < n; i++) {
      double p = (double)x[i] * y[i], c = z[i];
      double s = isfinite(p) && isfinite(c) ? mpei_zero_sum_sign(mpei_ro_sum(p, c), p, c, r) : p + c;
      d[i] = s;
    }
    break;
  case EW_SCALE:
    for (size_t i = 0; i < n; i++) {
      d[i] = (double)j->alpha * x[i];   /* exact */
    }
    break;
  case EW_SQRT:
    for (size_t i = 0; i < n; i++) {
      d[i] = x[i] < 0 ? NAN : mpei_ro_sqrt(x[i]);
    }
    break;
  case EW_RECIP:
    for (size_t i = 0; i < n; i++) {
      if (x[i] == 0)
        fl |= MPE_FLAG_DIVBYZERO;
      d[i] = mpei_ro_div(1.0, x[i]);
    }
    break;
  case EW_EXP:
    for (size_t i = 0; i < n; i++)
      d[i] = x[i];
    exp_portable(d, d, n);   /* in place, element by element */
    for (size_t i = 0; i < n; i++) {
      float a = x[i];
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
      d[i] = x[i];
    log_portable(d, d, n);   /* in place, element by element */
    for (size_t i = 0; i < n; i++) {
      if (x[i] == 0) {
        d[i] = -INFINITY;
        fl |= MPE_FLAG_DIVBYZERO;
      } else if (x[i] < 0) {
        d[i] = NAN;
      }
    }
    break;
  case EW_TANH:
    for (size_t i = 0; i < n; i++)
      d[i] = x[i];
    tanh_portable(d, d, n);   /* in place, element by element */
    for (size_t i = 0; i < n; i++) {
      float a = x[i];
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
      d[i] = -(double)x[i];
    exp_portable(d, d, n);
    for (size_t i = 0; i < n; i++) {
      float a = x[i];
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
  for (size_t i = 0; i < n; i++)
    if (isnan(d[i]))
      fl |= mpei_ew_nan_fix(j, i0 + i, &d[i]);
  return fl;
}

/* Round d (n values, first element index i0) into out; returns the flags raised. */
static unsigned round_chunk(const ew_job *j, float *out, double *d, size_t i0, size_t n)
{
  if (j->round)
    return j->round(out, d, n, &j->plan, j->o.offset + i0);
  unsigned save = mpei_flags, fl;
  mpei_flags = 0;
  mpe_round_opts o = j->o;
  o.offset += i0;
  mpe_round_f64(d, d, n, j->f, &o);
  for (size_t i = 0; i < n; i++)
    out[i] = (float)d[i];   /* exact: the format fits binary32 */
  fl = mpei_flags;
  mpei_flags = save;
  return fl;
}

/* the vector kernels' view of mpei_round_ref for f and o: the core's plan */
static void make_plan(mpei_ew_plan *pl, const struct mpe_format *f, const mpe_round_opts *o)
{
  mpei_round_plan_make(&pl->c, f, o);
  pl->medium_min = o->flush_subnormals ? f->minnorm : 2 * f->minsub;
  pl->fast32 = o->round != MPE_SR && o->round != MPE_SR_EQ && !o->flush_subnormals && f->p <= 22 &&
               f->emin - f->p + 1 >= -147;
  /* p <= 16: the binary64 value's stochastic decision is that of the exact
     value (its sticky bit lies below the 32 bits compared), which the one-pass
     kernel derives from the binary32 pair (elementwise_kernel.h) */
  pl->fast_sr = (o->round == MPE_SR || o->round == MPE_SR_EQ) && f->p <= 16;
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
  j->a.op = op;
  j->f = f;
  j->o = o ? *o : d;
  j->a.round = j->o.round;
  j->a.x = j->a.y = j->a.z = NULL;
  j->a.alpha = 0;
  make_plan(&j->plan, f, &j->o);
  const mpei_isa_kernels *k = mpei_isa();
  j->eval = k->ew_eval ? k->ew_eval : eval_portable;
  j->round = k->ew_round;   /* NULL: mpe_round_f64 */
  j->vexp = k->ew_exp ? k->ew_exp : exp_portable;
  j->fast32 = k->ew_fast32;
}

static int run_flat(ew_job *j, float *out, size_t n)
{
  size_t nchunks = (n + CHUNK - 1) / CHUNK;
  unsigned fl = 0;
  int par = 0;
  int op = j->a.op;
  int one_pass = j->plan.fast32 ? op <= EW_RECIP && op != EW_FMA
                 : j->plan.fast_sr && (op == EW_ADD || op == EW_SUB || op == EW_MUL || op == EW_SCALE);
  mpei_ew_fast32_fn fast32 = one_pass ? j->fast32 : NULL;
#ifdef _OPENMP
  par = n >= PAR_MIN && omp_get_max_threads() > 1 && !omp_in_parallel();
#endif
#pragma omp parallel if (par)
  {
    MPEI_FENV_GUARD();
#pragma omp for schedule(static) reduction(| : fl)
    for (size_t c = 0; c < nchunks; c++) {
      size_t i0 = c * CHUNK, len = n - i0 < CHUNK ? n - i0 : CHUNK;
      if (fast32) {
        fl |= fast32(out + i0, &j->a, &j->plan, i0, len);
        continue;
      }
      double d[CHUNK];
      fl |= j->eval(d, &j->a, i0, len);
      fl |= round_chunk(j, out + i0, d, i0, len);
    }
  }
  mpei_flags |= fl;
  return MPE_OK;
}

/* An operation on nin = 1, 2 or 3 flat inputs (x; x, y; x, y, z) and alpha into
   out, n values. */
static int flat(int op, int nin, float *out, const float *x, const float *y, const float *z, float alpha, size_t n,
                const mpe_format *f, const mpe_round_opts *o)
{
  int e = check_common(f, o);
  if (e)
    return e;
  if (n > 0 && (!mpei_count_ok(n, sizeof(float)) || !out || !x || (nin > 1 && !y) || (nin > 2 && !z)))
    return MPE_EINVAL;   /* a count no array can hold: the chunk count below would wrap */
  if (n == 0)
    return MPE_OK;
  ew_job j;
  init_job(&j, op, f, o);
  j.a.x = x;
  j.a.y = y;
  j.a.z = z;
  j.a.alpha = alpha;
  return run_flat(&j, out, n);
}

static int unary(int op, float *y, const float *x, size_t n, const mpe_format *f, const mpe_round_opts *o)
{
  return flat(op, 1, y, x, NULL, NULL, 0.0f, n, f, o);
}

static int binary(int op, float *z, const float *x, const float *y, size_t n, const mpe_format *f,
                  const mpe_round_opts *o)
{
  return flat(op, 2, z, x, y, NULL, 0.0f, n, f, o);
}

int mpe_ew_add(float *z, const float *x, const float *y, size_t n, const mpe_format *f, const mpe_round_opts *o)
{
  MPEI_FENV_GUARD(); return binary(EW_ADD, z, x, y, n, f, o); }
int mpe_ew_sub(float *z, const float *x, const float *y, size_t n, const mpe_format *f, const mpe_round_opts *o)
{
  MPEI_FENV_GUARD(); return binary(EW_SUB, z, x, y, n, f, o); }
int mpe_ew_mul(float *z, const float *x, const float *y, size_t n, const mpe_format *f, const mpe_round_opts *o)
{
  MPEI_FENV_GUARD(); return binary(EW_MUL, z, x, y, n, f, o); }
int mpe_ew_div(float *z, const float *x, const float *y, size_t n, const mpe_format *f, const mpe_round_opts *o)
{
  MPEI_FENV_GUARD(); return binary(EW_DIV, z, x, y, n, f, o); }

int mpe_ew_fma(float *w, const float *x, const float *y, const float *z, size_t n, const mpe_format *f,
               const mpe_round_opts *o)
{
  MPEI_FENV_GUARD();
  return flat(EW_FMA, 3, w, x, y, z, 0.0f, n, f, o);
}

int mpe_ew_scale(float *y, float alpha, const float *x, size_t n, const mpe_format *f, const mpe_round_opts *o)
{
  MPEI_FENV_GUARD();
  return flat(EW_SCALE, 1, y, x, NULL, NULL, alpha, n, f, o);
}

int mpe_ew_sqrt(float *y, const float *x, size_t n, const mpe_format *f, const mpe_round_opts *o)
{
  MPEI_FENV_GUARD(); return unary(EW_SQRT, y, x, n, f, o); }
int mpe_ew_recip(float *y, const float *x, size_t n, const mpe_format *f, const mpe_round_opts *o)
{
  MPEI_FENV_GUARD(); return unary(EW_RECIP, y, x, n, f, o); }
int mpe_ew_exp(float *y, const float *x, size_t n, const mpe_format *f, const mpe_round_opts *o)
{
  MPEI_FENV_GUARD(); return unary(EW_EXP, y, x, n, f, o); }
int mpe_ew_log(float *y, const float *x, size_t n, const mpe_format *f, const mpe_round_opts *o)
{
  MPEI_FENV_GUARD(); return unary(EW_LOG, y, x, n, f, o); }
int mpe_ew_tanh(float *y, const float *x, size_t n, const mpe_format *f, const mpe_round_opts *o)
{
  MPEI_FENV_GUARD(); return unary(EW_TANH, y, x, n, f, o); }
int mpe_ew_sigmoid(float *y, const float *x, size_t n, const mpe_format *f, const mpe_round_opts *o)
{
  MPEI_FENV_GUARD(); return unary(EW_SIGMOID, y, x, n, f, o); }

/* ---- softmax over rows: two passes per row (sum, then values), so no scratch
   beyond the fixed chunk buffers whatever the row length */
/* d[i] = exp(xr[c0 + i] - m) in binary64 for the chunk from c0 (buf: its
   arguments); returns the chunk's length */
static size_t exp_chunk(const ew_job *j, double *d, double *buf, const float *xr, size_t c0, size_t cols, float m)
{
  size_t len = cols - c0 < CHUNK ? cols - c0 : CHUNK;
  for (size_t i = 0; i < len; i++)
    buf[i] = (double)xr[c0 + i] - m;
  j->vexp(d, buf, len);
  return len;
}

static unsigned softmax_row(const ew_job *j, float *yr, const float *xr, size_t cols, size_t base)
{
  double d[CHUNK], buf[CHUNK];
  unsigned fl = 0;
  float m = -INFINITY;
  int bad = 0;
  for (size_t c = 0; c < cols; c++) {
    if (isnan(xr[c]) || xr[c] == INFINITY)
      bad = 1;
    fl |= mpei_ew_snan32(xr[c]) ? MPE_FLAG_INVALID : 0;
    m = xr[c] > m ? xr[c] : m;
  }
  if (bad || m == -INFINITY) {
    for (size_t c = 0; c < cols; c++)
      yr[c] = NAN;
    return fl | MPE_FLAG_INVALID;
  }
  double s = 0;
  for (size_t c0 = 0; c0 < cols; c0 += CHUNK) {
    size_t len = exp_chunk(j, d, buf, xr, c0, cols, m);
    for (size_t i = 0; i < len; i++)
      s += d[i];
  }
  for (size_t c0 = 0; c0 < cols; c0 += CHUNK) {
    size_t len = exp_chunk(j, d, buf, xr, c0, cols, m);
    for (size_t i = 0; i < len; i++)
      d[i] /= s;
    fl |= round_chunk(j, yr + c0, d, base + c0, len);
  }
  return fl;
}

int mpe_ew_softmax(float *y, const float *x, size_t rows, size_t cols, const mpe_format *f,
                   const mpe_round_opts *o)
{
  MPEI_FENV_GUARD();
  int e = check_common(f, o);
  if (e)
    return e;
  if (rows > 0 && cols > 0 &&
      (!mpei_count_ok(cols, sizeof(float)) || !mpei_count_ok(rows, cols * sizeof(float)) || !y || !x))
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
#pragma omp parallel if (par)
  {
    MPEI_FENV_GUARD();
#pragma omp for schedule(static) reduction(| : fl)
    for (size_t r = 0; r < rows; r++)
      fl |= softmax_row(&j, y + r * cols, x + r * cols, cols, r * cols);
  }
  mpei_flags |= fl;
  return MPE_OK;
}
