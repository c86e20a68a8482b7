/* Internal: the packed panels of the fast GEMM drivers (emu/tc_gemm.c, dense;
   emu/tc_sparse.c, 2:4 sparse A), shared so that both decode operands and move
   output tiles the same way. */
#ifndef MPEI_TC_PACK_H
#define MPEI_TC_PACK_H
#include "tc_impl.h"

typedef struct {
  float *v;
  int32_t *e;     /* NULL for the fma-chain kernel */
} mpei_tc_panels;

/* Decode operand X (rows × K, element (i, l); transposed: (l, i)) into panels of
   `w` rows: panel p, element (l, r) at p*Kp*w + l*w + r, zeros past rows and K.
   With pk->e, each element's exponent too (MPEI_TC_ZERO_EXP for zeros, at least
   the input format's emin), inf/NaN replaced by 0 and bad[i] set for their rows.
   Returns 1 when some value is outside the kernels' exact window. */
MPEI_HIDDEN int mpei_tc_pack(const struct mpe_tc_model *m, const mpei_tc_opnd *x, int transpose, int rows,
                             int K, int Kp, int w, mpei_tc_panels *pk, unsigned char *bad);

/* The exponents of packed panels in int16, for the kernels' int16 pass 1
   (tc_kernel.h, tc_amd_kernel.h): A's (asz of them) as they lie, then B's (bsz)
   each twice; exponents in the packers' window fit, zeros and anything below
   become MPEI_TC_ZERO_EXP16. One allocation (free it); NULL when out of memory
   (pass 1 then runs in int32 lanes). */
MPEI_HIDDEN int16_t *mpei_tc_exp16(const mpei_tc_panels *pa, size_t asz, const mpei_tc_panels *pb, size_t bsz);

/* After the kernels: a binary16 fma-chain result rounded once (RNE), every NaN
   made the one quiet NaN. */
MPEI_HIDDEN void mpei_tc_finish(float *acc, size_t n, int fma, int out16);
#endif
