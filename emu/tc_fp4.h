/* Internal: the SIMD kernel of the block-scaled FP4 kinds (kind::mxf4,
   kind::mxf4nvf4; emu/tc_scaled.c drives it, emu/tc_fp4_kernel.h is the
   kernel, built by tc_avx2.c and tc_avx512.c, picked by emu/isa.c).

   Panels (emu/tc_scaled.c packs them): an instruction is ngl groups of G
   elements along K, group gi of the panel covering elements gi*G .. gi*G+G-1.
     A panel of MR rows:     value (k, r) at av[k*MR + r] (binary32);
                             field f of group gi of row r at ai[(gi*4 + f)*MR + r]
     B panel of NV*VW cols:  value (k, j) at bv[k*NV*VW + j];
                             field f of group gi of column j at bi[(gi*4 + f)*NV*VW + j]
   The four fields of a row's (column's) group: MPEI_FP4_E the exponent of its
   scale, MPEI_FP4_NZ a bit mask of its non-zero elements (bit t: element
   gi*G + t; 0 when the scale is zero), MPEI_FP4_NAN -1 for a NaN scale of a
   group holding an element below K (else 0), MPEI_FP4_SM the scale's
   significand m as binary32 bits (scale = m * 2^(e - 3)). Rows, columns and
   elements past the operand are zeros with scale 1 (e 0, m 8).

   The kernel runs kp->nblk instructions on a tile of MR rows × NV*VW outputs
   (row r at c + r*ldc), c the accumulators in and the results out, with the
   work area ws of ngl*MR*NV*VW binary32. The caller guarantees G <= 16 and
   that every instruction's cut addends sum below 2^53 (fp4_fits, emu/tc_scaled.c). */
#ifndef MPEI_TC_FP4_H
#define MPEI_TC_FP4_H
#include "tc_impl.h"

enum { MPEI_FP4_E, MPEI_FP4_NZ, MPEI_FP4_NAN, MPEI_FP4_SM };

typedef struct {
  int nblk;        /* instructions */
  int ngl, G;      /* groups per instruction, elements per group */
  int F, zexp;     /* alignment bits, exponent of a zero addend */
  int mode;        /* the rounding of a result to binary32 */
} mpei_tc_fp4_kp;

typedef void (*mpei_tc_fp4_fn)(const float *av, const int32_t *ai, const float *bv, const int32_t *bi, float *c,
                               long ldc, float *ws, const mpei_tc_fp4_kp *kp);
#ifdef HAVE_X86_SIMD
MPEI_HIDDEN void mpei_tc_fp4_avx2(const float *, const int32_t *, const float *, const int32_t *, float *, long,
                                  float *, const mpei_tc_fp4_kp *);
MPEI_HIDDEN void mpei_tc_fp4_avx512(const float *, const int32_t *, const float *, const int32_t *, float *, long,
                                    float *, const mpei_tc_fp4_kp *);
#endif
/* rows per call; the tiles are MPEI_TC_FP4_NV vectors wide (the fma kernel's tile) */
enum { MPEI_TC_FP4_AVX2_MR = MPEI_TC_AVX2_MRF, MPEI_TC_FP4_AVX512_MR = MPEI_TC_AVX512_MRF, MPEI_TC_FP4_NV = MPEI_TC_NRF };
#endif
