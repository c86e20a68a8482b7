/* Internal: the SLEEF loops of the element-wise functions, per SIMD level. */
#ifndef MPEI_ELEMENTWISE_H
#define MPEI_ELEMENTWISE_H
#include <stddef.h>
#include "mpei.h"
typedef void (*mpei_ew_vfn)(double *y, const double *x, size_t n);
#ifdef HAVE_X86_SIMD
MPEI_HIDDEN void mpei_ew_exp_avx2(double *y, const double *x, size_t n);
MPEI_HIDDEN void mpei_ew_log_avx2(double *y, const double *x, size_t n);
MPEI_HIDDEN void mpei_ew_tanh_avx2(double *y, const double *x, size_t n);
MPEI_HIDDEN void mpei_ew_exp_avx512(double *y, const double *x, size_t n);
MPEI_HIDDEN void mpei_ew_log_avx512(double *y, const double *x, size_t n);
MPEI_HIDDEN void mpei_ew_tanh_avx512(double *y, const double *x, size_t n);
#endif
#endif
