/* Internal declarations of the 2:4 sparsity module (emu/sparse.c, emu/tc_sparse.c). */
#ifndef MPEI_SPARSE_IMPL_H
#define MPEI_SPARSE_IMPL_H
#include "mpei.h"
#include "mpemu/sparse.h"

/* bytes of one element of a type pruning takes; 0 for the others */
MPEI_HIDDEN int mpei_sp_esize(mpe_type t);
/* element idx of base is ±0 */
MPEI_HIDDEN int mpei_sp_is_zero(const void *base, mpe_type t, size_t idx);
/* Validate the metadata of a compressed m×k matrix (row: row-major) and, when
   kidx is not NULL, write the k index of each kept value (i, q) to
   kidx[i*kc + q], -1 for a padding position past k. MPE_EINVAL for a nibble
   that is not two increasing indices or a non-zero value at a padding position. */
MPEI_HIDDEN int mpei_sp_index(const void *V, mpe_type type, int row, int m, int k, int ldv,
                              const uint16_t *meta, int ldm, int32_t *kidx);
#endif
