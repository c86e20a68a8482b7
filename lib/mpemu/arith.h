/* mpemu — correctly rounded FP16/BF16 scalar arithmetic on bit patterns
   (the element-wise array operations are in mpemu/elementwise.h). */
#ifndef MPEMU_ARITH_H
#define MPEMU_ARITH_H
#include "mpemu/core.h"
#include "mpemu/format.h"
/* the element-wise array operations (mpe_ew_*) were declared here; they have
   their own header now, included for programs that included this one */
#include "mpemu/elementwise.h"
#ifdef __cplusplus
extern "C" {
#endif

/* ---- scalar arithmetic on bit patterns (SoftFloat style)
   Each result is the exact result rounded once under r (all eight modes; an
   out-of-range r means MPE_RNE). Stochastic modes draw one word from the
   calling thread's generator (mpe_seed) per call. Sticky flags as IEEE 754
   with tininess detected after rounding: invalid (signalling NaN operand,
   inf-inf, 0*inf, 0/0, inf/inf, sqrt of a negative number), divide-by-zero,
   overflow, underflow (tiny and inexact), inexact.
   A NaN result is the canonical quiet NaN: 0x7E00 (fp16) / 0x7FC0 (bf16), sign
   bit clear, whatever the operands. An exact zero sum of operands of opposite
   sign is +0, or -0 under MPE_RD. */
MPE_API uint16_t mpe_fp16_add(uint16_t a, uint16_t b, mpe_round r);
MPE_API uint16_t mpe_fp16_sub(uint16_t a, uint16_t b, mpe_round r);
MPE_API uint16_t mpe_fp16_mul(uint16_t a, uint16_t b, mpe_round r);
MPE_API uint16_t mpe_fp16_div(uint16_t a, uint16_t b, mpe_round r);
MPE_API uint16_t mpe_fp16_sqrt(uint16_t a, mpe_round r);
MPE_API uint16_t mpe_fp16_fma(uint16_t a, uint16_t b, uint16_t c, mpe_round r);   /* a*b+c */
MPE_API uint16_t mpe_bf16_add(uint16_t a, uint16_t b, mpe_round r);
MPE_API uint16_t mpe_bf16_sub(uint16_t a, uint16_t b, mpe_round r);
MPE_API uint16_t mpe_bf16_mul(uint16_t a, uint16_t b, mpe_round r);
MPE_API uint16_t mpe_bf16_div(uint16_t a, uint16_t b, mpe_round r);
MPE_API uint16_t mpe_bf16_sqrt(uint16_t a, mpe_round r);
MPE_API uint16_t mpe_bf16_fma(uint16_t a, uint16_t b, uint16_t c, mpe_round r);   /* a*b+c */

#ifdef __cplusplus
}
#endif
#endif
