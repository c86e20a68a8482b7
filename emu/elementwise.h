/* Internal: what elementwise.c shares with the SIMD kernels of the
   element-wise functions (elementwise_kernel.h, compiled per instruction set). */
#ifndef MPEI_ELEMENTWISE_H
#define MPEI_ELEMENTWISE_H
#include <math.h>
#include <stddef.h>
#include "mpei.h"

enum { EW_ADD, EW_SUB, EW_MUL, EW_DIV, EW_FMA, EW_SCALE, EW_SQRT, EW_RECIP,
       EW_EXP, EW_LOG, EW_TANH, EW_SIGMOID };

/* The operation and its operands (element i reads x[i], y[i], z[i]). */
typedef struct {
  int op;
  mpe_round round;   /* only the sign of an exact zero sum depends on it */
  const float *x, *y, *z;
  float alpha;
} mpei_ew_args;

static inline int mpei_ew_snan32(float x)
{
  uint32_t u = mpei_f2u(x);
  return (u & 0x7f800000u) == 0x7f800000u && (u & 0x3fffffu) && !(u & 0x400000u);
}

/* Element i's binary64 result *d is NaN: give it the sign of the first NaN
   operand (x, y, z; alpha after x), or + when the operation made it from
   numbers; returns MPE_FLAG_INVALID where IEEE 754 raises it (a NaN made from
   numbers, or a signalling NaN operand; for exp, tanh and sigmoid only the
   latter). The portable evaluation uses it; the vector kernels do the same
   (nan_vec in elementwise_kernel.h). */
static inline unsigned mpei_ew_nan_fix(const mpei_ew_args *a, size_t i, double *d)
{
  float x = a->x[i], y = 0, z = 0;
  int nops = 1;
  switch (a->op) {
  case EW_ADD: case EW_SUB: case EW_MUL: case EW_DIV: y = a->y[i]; nops = 2; break;
  case EW_FMA: y = a->y[i]; z = a->z[i]; nops = 3; break;
  case EW_SCALE: y = a->alpha; nops = 2; break;
  default: break;
  }
  int anynan = isnan(x) || (nops > 1 && isnan(y)) || (nops > 2 && isnan(z));
  int anysnan = mpei_ew_snan32(x) || (nops > 1 && mpei_ew_snan32(y)) || (nops > 2 && mpei_ew_snan32(z));
  *d = isnan(x) ? copysign(NAN, x) : nops > 1 && isnan(y) ? copysign(NAN, y)
     : nops > 2 && isnan(z) ? copysign(NAN, z) : NAN;
  if (a->op == EW_EXP || a->op == EW_TANH || a->op == EW_SIGMOID)
    return anysnan ? MPE_FLAG_INVALID : 0;
  return !anynan || anysnan ? MPE_FLAG_INVALID : 0;
}

/* Rounding of binary64 values to a format of at most 24 bits inside
   binary32's range, with the decisions and flags of mpei_round_ref: the
   rounding core's plan (binary64 carriers; binary32 ones on the fast32 path). */
typedef struct {
  mpei_round_plan c;
  double medium_min;      /* 2^(emin - p + 2), or minnorm when flushing */
  int fast32;             /* deterministic mode, p <= 22, quanta >= 2^-147, no flushing */
  int fast_sr;            /* MPE_SR or MPE_SR_EQ, p <= 16: add, sub, mul and scale in one
                             binary32 pass (fast32 entry) */
} mpei_ew_plan;

/* d[i] = the operation on element i0 + i (binary64: exact, rounded to odd, or
   the SLEEF value with its boundary stand-ins); returns invalid/divide flags. */
typedef unsigned (*mpei_ew_eval_fn)(double *d, const mpei_ew_args *a, size_t i0, size_t n);
/* y[i] = d[i] rounded to the plan's format, element index idx0 + i; returns flags */
typedef unsigned (*mpei_ew_round_fn)(float *y, const double *d, size_t n, const mpei_ew_plan *pl, uint64_t idx0);
/* y[i] = element i0 + i of add, sub, mul, scale, div, recip or sqrt rounded to the plan's format
   (plan.fast32 set), or of add, sub, mul or scale (plan.fast_sr set; random word of element
   pl->c.offset + i0 + i): as eval then round, faster; returns flags */
typedef unsigned (*mpei_ew_fast32_fn)(float *y, const mpei_ew_args *a, const mpei_ew_plan *pl, size_t i0, size_t n);
/* binary64 SLEEF loops (softmax) */
typedef void (*mpei_ew_vfn)(double *y, const double *x, size_t n);

#ifdef HAVE_X86_SIMD
#define MPEI_EW_DECLARE(isa)                                                                          \
  MPEI_HIDDEN unsigned mpei_ew_eval_##isa(double *d, const mpei_ew_args *a, size_t i0, size_t n);    \
  MPEI_HIDDEN unsigned mpei_ew_round_##isa(float *y, const double *d, size_t n, const mpei_ew_plan *pl, \
                                           uint64_t idx0);                                            \
  MPEI_HIDDEN void mpei_ew_exp_##isa(double *y, const double *x, size_t n);                          \
  MPEI_HIDDEN unsigned mpei_ew_fast32_##isa(float *y, const mpei_ew_args *a, const mpei_ew_plan *pl, \
                                            size_t i0, size_t n);
MPEI_EW_DECLARE(avx2)
MPEI_EW_DECLARE(avx512)
#endif
#endif
