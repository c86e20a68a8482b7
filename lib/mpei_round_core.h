/* The rounding decision, written once over the lane type, for every rounding
   in the tree: the array kernels (emu/round_kernel.h, 32-bit lanes), the
   element-wise kernels (emu/elementwise_kernel.h, 64-bit and 32-bit lanes),
   the GPU (gpu/round_dev.h, width 1), the reference (emu/round_ref.c, which
   fixed point reuses) and the tensor-core output rounding (emu/tc_model.c).

   A "truth" is a comparison result in the convention of the caller's lanes:
   an all-ones mask per lane for GCC vectors, 0 or 1 for scalars. The macros
   combine truths with & | == != only, so the same text serves both. The
   operands are expressions evaluated only on the branch the mode selects
   (mode is a compile-time constant in the kernels, so the chain folds away).
   Plain C99: nvcc compiles it for the device; the mode numbers are those of
   mpe_round. */
#ifndef MPEI_ROUND_CORE_H
#define MPEI_ROUND_CORE_H
#include <stdint.h>

enum { MPEI_RC_RNE, MPEI_RC_RNA, MPEI_RC_RZ, MPEI_RC_RU, MPEI_RC_RD, MPEI_RC_RO, MPEI_RC_SR, MPEI_RC_SR_EQ };

/* What a rounding to (format, options) needs, on binary32 carriers: the plan
   of the array kernels (mpei_plan32), of the GPU (mpei_gpu_plan) and of the
   element-wise kernels (binary32 and binary64 carriers). One builder fills it:
   mpei_round_plan_make (lib/mpei_round_plan.h). */
typedef struct {
  int32_t p, emin;              /* precision and normal emin of the format */
  uint32_t max_bits;            /* largest finite, as binary32 bits */
  uint32_t minnorm_bits, minsub_bits;
  uint32_t tiny_pos, tiny_neg;  /* |x| bits below which an inexact result is tiny, by sign */
  uint32_t ovf_bits;            /* +inf, or the quiet NaN for formats without inf */
  uint32_t inf_bits;            /* what a +inf input becomes */
  int32_t mode, flush, saturate, has_inf;
  uint64_t seed, offset;
  int32_t dbase;                /* 24 - p: bits dropped from a normal binary32 */
  int32_t eminb;                /* emin + 127: the biased binary32 exponent of emin */
  /* the same on binary64 carriers (the element-wise kernels) */
  int64_t dbase64, eminb64;     /* 53 - p, emin + 1023 */
  double maxv, minnorm;         /* largest finite, 2^emin */
  double tiny_pos64, tiny_neg64;  /* |x| below which an inexact result is tiny, by sign */
  uint64_t minsub_bits64;       /* binary64 bits of 2^(emin - p + 1) */
} mpei_round_plan;

/* Round the magnitude up by one quantum? inex: the dropped part is not zero;
   gt, eq: it is above / exactly half a quantum; odd: the last kept bit is 1;
   neg: the value is negative; sr: the random word is below the dropped part
   scaled to 2^32 (floor), so P(up) is proportional to the distance (MPE_SR);
   sreq: the word's top bit (MPE_SR_EQ, P(up) = 1/2). Round to odd sets the
   last kept bit when inexact: an up step exactly when that bit is 0. */
#define MPEI_ROUND_UP(mode, inex, gt, eq, odd, neg, sr, sreq)                 \
  ((mode) == MPEI_RC_RNE  ? (inex) & ((gt) | ((eq) & (odd)))                  \
   : (mode) == MPEI_RC_RNA ? (inex) & ((gt) | (eq))                           \
   : (mode) == MPEI_RC_RZ  ? (inex) & ((inex) == 0)                           \
   : (mode) == MPEI_RC_RU  ? (inex) & ((neg) == 0)                            \
   : (mode) == MPEI_RC_RD  ? (inex) & ((neg) != 0)                            \
   : (mode) == MPEI_RC_RO  ? (inex) & ((odd) == 0)                            \
   : (mode) == MPEI_RC_SR  ? (inex) & (sr)                                    \
                           : (inex) & (sreq))

/* On overflow, does the result stay at the largest finite value (rather than
   infinity, or NaN where the format has none)? Toward zero and to odd: always;
   up: for negative values; down: for positive ones. Saturation (the caller's)
   overrides it. all: the all-true truth of the lane type. */
#define MPEI_ROUND_TO_MAX(mode, neg, all)                                     \
  ((mode) == MPEI_RC_RZ || (mode) == MPEI_RC_RO ? (all)                       \
   : (mode) == MPEI_RC_RU ? ((neg) != 0) & (all)                              \
   : (mode) == MPEI_RC_RD ? ((neg) == 0) & (all)                              \
                          : ((all) ^ (all)))

/* The same decision in carry form, for lanes where the result stays normal
   (or zero) in the target: the magnitude bits a (of type U) rounded to a
   multiple of one = 2^d, low = one - 1, half = one / 2, t = a & ~low,
   rem = a & low; a carry out of the significand moves into the exponent on
   its own. negm: the sign as a lane mask; sr, sreq as above (truths). Each
   branch equals t + one * MPEI_ROUND_UP(...); the check_round and
   check_elementwise suites hold every kernel to the reference bit for bit. */
#define MPEI_ROUND_CARRY(mode, U, a, d, one, low, half, t, rem, negm, sr, sreq) \
  ((mode) == MPEI_RC_RNE  ? ((a) + (((half) - 1) + (((a) >> (d)) & 1))) & ~(low) \
   : (mode) == MPEI_RC_RNA ? ((a) + (half)) & ~(low)                           \
   : (mode) == MPEI_RC_RZ  ? (t)                                               \
   : (mode) == MPEI_RC_RU  ? ((a) + ((low) & ~(U)(negm))) & ~(low)             \
   : (mode) == MPEI_RC_RD  ? ((a) + ((low) & (U)(negm))) & ~(low)              \
   : (mode) == MPEI_RC_RO  ? (t) | ((U)((rem) != 0) & (one))                   \
   : (mode) == MPEI_RC_SR  ? (t) + ((U)(sr) & (one))                           \
                           : (t) + ((U)(((rem) != 0) & (sreq)) & (one)))

/* MPEI_ROUND_CARRY with the quantum per lane (the array kernels' subnormal
   lanes): one, low, half are lane vectors and odd is the last kept bit of the
   significand as a number (0 or 1; the implicit bit where a lane keeps only
   that one, which the bits of a do not show). Round to odd adds one when that
   bit is 0; the other branches are MPEI_ROUND_CARRY's, term for term. */
#define MPEI_ROUND_CARRY_ODD(mode, U, a, odd, one, low, half, t, rem, negm, sr, sreq) \
  ((mode) == MPEI_RC_RNE  ? ((a) + (((half) - 1) + (odd))) & ~(low)           \
   : (mode) == MPEI_RC_RNA ? ((a) + (half)) & ~(low)                           \
   : (mode) == MPEI_RC_RZ  ? (t)                                               \
   : (mode) == MPEI_RC_RU  ? ((a) + ((low) & ~(U)(negm))) & ~(low)             \
   : (mode) == MPEI_RC_RD  ? ((a) + ((low) & (U)(negm))) & ~(low)              \
   : (mode) == MPEI_RC_RO  ? (t) + ((U)(((rem) != 0) & ((odd) == 0)) & (one))  \
   : (mode) == MPEI_RC_SR  ? (t) + ((U)(sr) & (one))                           \
                           : (t) + ((U)(((rem) != 0) & (sreq)) & (one)))

/* f |= the MPE_FLAG_* bits of a kernel's flag accumulators fa, a struct of
   lane masks named inexact, underflow, overflow, invalid, saturated and
   flushed (the array kernels' flagacc, the element-wise kernels' roundfl);
   ANY(v) is true when a lane of v is set. */
#define MPEI_FLAGS_ADD(f, fa, ANY)                        \
  do {                                                    \
    if (ANY((fa).inexact)) (f) |= MPE_FLAG_INEXACT;       \
    if (ANY((fa).underflow)) (f) |= MPE_FLAG_UNDERFLOW;   \
    if (ANY((fa).overflow)) (f) |= MPE_FLAG_OVERFLOW;     \
    if (ANY((fa).invalid)) (f) |= MPE_FLAG_INVALID;       \
    if (ANY((fa).saturated)) (f) |= MPE_FLAG_SATURATED;   \
    if (ANY((fa).flushed)) (f) |= MPE_FLAG_FLUSHED;       \
  } while (0)
#endif
