/* mpemu — integer quantisation for the integer tensor cores: scales and zero
   points (symmetric or asymmetric, per tensor, per row or per column), encoding
   with round-to-nearest-even or stochastic rounding, and decoding. The rules
   are written out in mpe_quant(3). */
#ifndef MPEMU_QUANT_H
#define MPEMU_QUANT_H
#include "mpemu/core.h"
#include "mpemu/format.h"
#ifdef __cplusplus
extern "C" {
#endif

/* Which values share one scale and zero point in a rows × cols row-major array. */
typedef enum {
  MPE_QUANT_TENSOR,  /* one pair for the whole array */
  MPE_QUANT_ROWS,    /* one pair per row (rows pairs): per output channel of a weight W (out × in) */
  MPE_QUANT_COLS     /* one pair per column (cols pairs) */
} mpe_quant_axis;

/* The integer range of t: MPE_INT8 -128..127, MPE_UINT8 0..255, MPE_INT4 -8..7,
   MPE_UINT4 0..15. MPE_EINVAL for any other type or a NULL pointer. */
MPE_API int mpe_quant_range(mpe_type t, int *qmin, int *qmax);

/* Scale and zero point of each group of x (see mpe_quant(3)):
     symmetric:  scale = max|x| / Q with Q = 127 (8-bit) or 7 (4-bit); zero = 0
                 for signed t, 128 or 8 for unsigned t (codes 1..255 / 1..15);
     asymmetric: lo = min(min x, 0), hi = max(max x, 0); scale = (hi - lo) /
                 (qmax - qmin); zero = qmin - rne(lo / scale), within qmin..qmax.
   Quotients in binary64, the scale rounded once to binary32 (nearest-even) and
   raised to FLT_MIN when smaller; an all-zero group gets scale 1. Returns
   MPE_EINVAL (NULL pointer with rows*cols > 0, bad type or axis) or MPE_ERANGE
   (a NaN or inf in x); nothing is written then. MPE_EINVAL also when an output
   shares memory with an input, here and in encode and decode. */
MPE_API int mpe_quant_params(float *scale, int32_t *zero, const float *x, size_t rows, size_t cols,
                             mpe_quant_axis axis, mpe_type t, int symmetric);

/* q = clamp(round(x / scale) + zero, qmin, qmax), x / scale in binary64 (the
   rounding is that of the exact quotient), round = o->round (NULL: nearest-even;
   stochastic modes draw the word of element offset + i*cols + j under o->seed,
   the generator of mpe_round_f32). q is int8_t for MPE_INT8/MPE_INT4, uint8_t for
   MPE_UINT8/MPE_UINT4, laid out like x. Flags: MPE_FLAG_INEXACT when a value
   was rounded, MPE_FLAG_SATURATED when one was clipped. Returns MPE_EINVAL (NULL
   pointer, bad type, axis or mode, a scale that is not finite and > 0, a zero
   point outside qmin..qmax) or MPE_ERANGE (NaN or inf in x); q is untouched then. */
MPE_API int mpe_quant_encode(void *q, const float *x, size_t rows, size_t cols, mpe_quant_axis axis,
                             mpe_type t, const float *scale, const int32_t *zero, const mpe_round_opts *o);

/* x = (float)(q - zero) * scale (one binary32 rounding). MPE_EINVAL as above (a
   scale that is not finite and > 0 included) and for a code outside qmin..qmax
   (x untouched). */
MPE_API int mpe_quant_decode(float *x, const void *q, size_t rows, size_t cols, mpe_quant_axis axis,
                             mpe_type t, const float *scale, const int32_t *zero);

#ifdef __cplusplus
}
#endif
#endif
