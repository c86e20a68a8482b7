/* Internal declarations of the integer tensor-core GEMM (emu/tc_int*.c). */
#ifndef MPEI_TC_INT_H
#define MPEI_TC_INT_H
#include "tc_impl.h"

/* Packed panels for the fast kernels. K is cut into segments of `seg` k-steps
   (one hardware block when the model saturates, the whole K chunk when it
   wraps), each padded to an even length so that two k-steps form one int32
   word of two int16 halves (vpmaddwd: a0*b0 + a1*b1 per 32-bit lane).
     A panel of MR rows:  word (kp, r)  at kp*MR + r
     B panel of NB cols:  word (kp, j)  at kp*NB + j
   The kernel runs nseg segments of segp k-pairs. For each segment it sums the
   products in int32 lanes (exact: a segment holds at most 1024 products below
   2^16 each) and then folds the sum into c: c += s modulo 2^32, or, with
   sat != 0, c = clamp(c + s) to [INT32_MIN, INT32_MAX]. */
typedef void (*mpei_tc_int_fn)(const int32_t *ap, const int32_t *bp, int32_t *c, long ldc, int nseg,
                               int segp, int sat);
#ifdef HAVE_X86_SIMD
MPEI_HIDDEN void mpei_tc_int_avx2(const int32_t *, const int32_t *, int32_t *, long, int, int, int);
MPEI_HIDDEN void mpei_tc_int_avx512(const int32_t *, const int32_t *, int32_t *, long, int, int, int);
#endif
enum { MPEI_TC_INT_AVX2_MR = 6, MPEI_TC_INT_AVX2_NB = 16,
       MPEI_TC_INT_AVX512_MR = 12, MPEI_TC_INT_AVX512_NB = 32 };

#endif
