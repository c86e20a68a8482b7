/* mpemu — element-wise array operations rounded once to a format (mpe_ew_*).
   See mpe_ew_exp(3). */
#ifndef MPEMU_ELEMENTWISE_H
#define MPEMU_ELEMENTWISE_H
#include <stddef.h>
#include "mpemu/core.h"
#include "mpemu/format.h"
#ifdef __cplusplus
extern "C" {
#endif

/* ---- element-wise array operations in a format
   Values are kept in binary32 arrays (as mpe_round_f32). Each output element
   is the operation on the binary32 inputs, as they are, rounded once to f
   under o (mode, flush_subnormals, saturate; stochastic element i uses the
   stream (o->seed, o->offset + i)). o == NULL means the defaults.
   add, sub, mul, div, fma, scale, sqrt and recip are correctly rounded (exact
   binary64 products, round-to-odd binary64 intermediates for the rest);
   exp, log, tanh, sigmoid and softmax are evaluated in binary64 with SLEEF
   (1-ulp functions) and then rounded once, so they are correctly rounded
   except when the binary64 value lies within about 2^-52 relative of a
   rounding boundary of f; near the points where binary64 itself would land
   on a boundary (e^x for tiny x, tanh near +-1, ...) an odd stand-in on the
   exact value's side keeps the directed modes right (measured rates in
   mpe_ew_exp(3)).
   f needs precision <= 24 and an exponent range inside binary32's (else
   MPE_EINVAL). Every mode rounds the binary64 value once, with the decisions
   of the reference rounding (AVX2/AVX-512 kernels where the CPU has them).
   A NaN result is the quiet NaN with the sign of the first NaN operand (x,
   y, z; alpha after x), or +NaN when made from numbers. Outputs may alias any
   input exactly (y == x); partial overlap is not allowed.
   Errors: MPE_EINVAL (NULL array with n > 0, NULL f, precision > 24, mode
   out of range); nothing is written then. Results do not depend on the
   number of threads or the SIMD level. Flags are raised in the calling
   thread as for the scalar functions (divide-by-zero for x/0, 1/0, log 0). */
MPE_API int mpe_ew_add(float *z, const float *x, const float *y, size_t n,
                       const mpe_format *f, const mpe_round_opts *o);   /* z = x + y */
MPE_API int mpe_ew_sub(float *z, const float *x, const float *y, size_t n,
                       const mpe_format *f, const mpe_round_opts *o);   /* z = x - y */
MPE_API int mpe_ew_mul(float *z, const float *x, const float *y, size_t n,
                       const mpe_format *f, const mpe_round_opts *o);   /* z = x * y */
MPE_API int mpe_ew_div(float *z, const float *x, const float *y, size_t n,
                       const mpe_format *f, const mpe_round_opts *o);   /* z = x / y */
MPE_API int mpe_ew_fma(float *w, const float *x, const float *y, const float *z, size_t n,
                       const mpe_format *f, const mpe_round_opts *o);   /* w = x*y + z */
MPE_API int mpe_ew_scale(float *y, float alpha, const float *x, size_t n,
                         const mpe_format *f, const mpe_round_opts *o); /* y = alpha * x */
MPE_API int mpe_ew_sqrt(float *y, const float *x, size_t n, const mpe_format *f, const mpe_round_opts *o);
MPE_API int mpe_ew_recip(float *y, const float *x, size_t n, const mpe_format *f, const mpe_round_opts *o);
MPE_API int mpe_ew_exp(float *y, const float *x, size_t n, const mpe_format *f, const mpe_round_opts *o);
MPE_API int mpe_ew_log(float *y, const float *x, size_t n, const mpe_format *f, const mpe_round_opts *o);
MPE_API int mpe_ew_tanh(float *y, const float *x, size_t n, const mpe_format *f, const mpe_round_opts *o);
MPE_API int mpe_ew_sigmoid(float *y, const float *x, size_t n, const mpe_format *f, const mpe_round_opts *o); /* 1/(1+e^-x) */
/* Row-wise softmax of a rows x cols row-major matrix: y[i][j] = e^(x[i][j]-m_i) / sum_j e^(x[i][j]-m_i)
   with m_i the row maximum, evaluated in binary64 and rounded once per element
   (element index i*cols + j). -inf entries give 0; a row holding a NaN or
   +inf, or only -inf, gives NaN in the whole row (MPE_FLAG_INVALID). */
MPE_API int mpe_ew_softmax(float *y, const float *x, size_t rows, size_t cols,
                           const mpe_format *f, const mpe_round_opts *o);

#ifdef __cplusplus
}
#endif
#endif
