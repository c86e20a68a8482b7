/* mpemu — 2:4 structured sparsity: pruning, the compressed form (kept values
   plus 2-bit indices) and the sparse tensor-core GEMM model. See
   mpe_prune_2_4(3), mpe_sparse_compress(3), mpe_gemm_sp(3). */
#ifndef MPEMU_SPARSE_H
#define MPEMU_SPARSE_H
#include <stdint.h>
#include "mpemu/core.h"
#include "mpemu/tc.h"
#ifdef __cplusplus
extern "C" {
#endif

/* A is m×k in `layout` (row-major: (i, l) at A[i*lda + l]; column-major:
   A[i + l*lda]); the groups of four run along k (l = 4g .. 4g+3; a last group
   of k % 4 elements is padded with zeros). type: MPE_FP32 or MPE_TF32 (float),
   MPE_FP16 or MPE_BF16 (uint16_t bits), MPE_E4M3 or MPE_E5M2 (uint8_t bits). */

/* Keep the two largest magnitudes of every group of four; the other two become
   +0. Ties go to the lower index; a NaN counts as larger than every number
   (it is kept, so that it reaches the product); +0 and -0 are equal. P may be
   A itself (ldp == lda); any other overlap of P and A is MPE_EINVAL. MPE_EINVAL
   for bad sizes, types or NULL. */
MPE_API int mpe_prune_2_4(mpe_layout layout, int m, int k, const void *A, mpe_type type, int lda,
                          void *P, int ldp);

/* Kept values per row, 2*ceil(k/4), and 16-bit metadata words per row, ceil(k/16)
   (0 for k <= 0). */
MPE_API int mpe_sparse_kept(int k);
MPE_API int mpe_sparse_meta_words(int k);

/* Compressed form of a 2:4 matrix, in the same layout as A:
   V: m × mpe_sparse_kept(k) values of `type` (row-major (i, q) at V[i*ldv + q],
      column-major V[i + q*ldv]): the two kept values of group g at q = 2g, 2g+1,
      lower index first;
   meta: m × mpe_sparse_meta_words(k) uint16_t words (row-major meta[i*ldm + w],
      column-major meta[i + w*ldm]): group g is the nibble at bits 4(g%4)..4(g%4)+3
      of word g/4, bits 1:0 the index (0..3) of its first kept value and bits 3:2
      that of its second, first < second (PTX mma.sp's sparse metadata).
   A group with fewer than two non-zeros keeps its lowest-index zeros to make two.
   MPE_EINVAL when a group holds more than two non-zeros (NaN counts as non-zero),
   for bad sizes, types, NULL, or A, V and meta not apart (any two sharing memory). */
MPE_API int mpe_sparse_compress(mpe_layout layout, int m, int k, const void *A, mpe_type type, int lda,
                                void *V, int ldv, uint16_t *meta, int ldm);
/* The dense m×k matrix again: kept values in place, +0 elsewhere. MPE_EINVAL for
   a nibble that is not two increasing indices, a non-zero kept value at an index
   past k (in the padded last group), bad sizes, types, NULL, or A sharing memory
   with V or meta. */
MPE_API int mpe_sparse_decompress(mpe_layout layout, int m, int k, const void *V, mpe_type type, int ldv,
                                  const uint16_t *meta, int ldm, void *A, int lda);

/* The sparse tensor-core GEMM: C = alpha * (A op(B)) + beta * C, BLAS semantics as
   mpe_gemm(3), with A the m×k 2:4 matrix given compressed (V, meta in `layout`,
   atype MPE_FP32 or the model's input type) and B dense. The products are those
   of the kept values only (B's rows at dropped positions are not read). In the
   hardware block model the kept products of a row are taken in ascending k in
   groups of kept_block (0: the model's block L) per hardware block, chained
   like mpe_gemm's blocks; kept_block = L/2 gives, bit for bit, mpe_gemm on the
   decompressed matrix when 4 divides L. No GPU data validates the grouping yet.
   Errors as mpe_gemm, and MPE_EINVAL for kept_block outside 0..1024 or metadata
   that mpe_sparse_decompress refuses. */
MPE_API int mpe_gemm_sp(const mpe_tc_model *model, int kept_block, mpe_layout layout, mpe_trans tb,
                        int m, int n, int k, float alpha,
                        const void *V, mpe_type atype, int ldv, const uint16_t *meta, int ldm,
                        const void *B, mpe_type btype, int ldb,
                        float beta, void *C, mpe_type ctype, int ldc);

#ifdef __cplusplus
}
#endif
#endif
