/* Internal: what elementwise.c shares with the SIMD kernels of the
   element-wise functions (elementwise_kernel.h, compiled per instruction set). */
#ifndef MPEI_ELEMENTWISE_H
#define MPEI_ELEMENTWISE_H
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

/* Rounding of binary64 values to a format of at most 24 bits inside
   binary32's range, with the decisions and flags of mpei_round_ref. */
typedef struct {
  int mode, flush, saturate, has_inf;
  int64_t dbase;          /* 53 - p: bits dropped from a normal binary64 significand */
  int64_t eminb;          /* emin + 1023 */
  double maxv, minnorm;
  uint64_t minsub_bits;   /* bits of 2^(emin - p + 1) */
  double tiny_pos, tiny_neg;  /* an inexact result from |d| below this is tiny (by sign) */
  uint64_t seed;
} mpei_ew_plan;

/* d[i] = the operation on element i0 + i (binary64: exact, rounded to odd, or
   the SLEEF value with its boundary stand-ins); returns invalid/divide flags. */
typedef unsigned (*mpei_ew_eval_fn)(double *d, const mpei_ew_args *a, size_t i0, size_t n);
/* y[i] = d[i] rounded to odd at binary32 (saturating at FLT_MAX, never 0 when d[i] is not) */
typedef void (*mpei_ew_ro32_fn)(float *y, const double *d, size_t n);
/* y[i] = d[i] rounded to the plan's format, element index idx0 + i; returns flags */
typedef unsigned (*mpei_ew_round_fn)(float *y, const double *d, size_t n, const mpei_ew_plan *pl, uint64_t idx0);
/* binary64 SLEEF loops (softmax) */
typedef void (*mpei_ew_vfn)(double *y, const double *x, size_t n);

#ifdef HAVE_X86_SIMD
#define MPEI_EW_DECLARE(isa)                                                                          \
  MPEI_HIDDEN unsigned mpei_ew_eval_##isa(double *d, const mpei_ew_args *a, size_t i0, size_t n);    \
  MPEI_HIDDEN void mpei_ew_ro32_##isa(float *y, const double *d, size_t n);                          \
  MPEI_HIDDEN unsigned mpei_ew_round_##isa(float *y, const double *d, size_t n, const mpei_ew_plan *pl, \
                                           uint64_t idx0);                                            \
  MPEI_HIDDEN void mpei_ew_exp_##isa(double *y, const double *x, size_t n);
MPEI_EW_DECLARE(avx2)
MPEI_EW_DECLARE(avx512)
#endif
#endif
