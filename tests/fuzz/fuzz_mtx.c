/* libFuzzer target for the Matrix Market reader (mpe_mtx_read), built by
   run.sh as fuzz_mtx. The input becomes an in-memory file opened by path, as
   a file on disk would be. Any return code is fine; a successful read must
   give a consistent CSR matrix (checked here, so a wrong number is caught as
   well as a crash). */
#include "fuzz_memfd.h"
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <mpemu.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
  char path[64];
  int fd = fuzz_memfd(data, size, path);
  if (fd < 0)
    return 0;
  mpe_csr *A = NULL;
  if (mpe_mtx_read(&A, path) == MPE_OK) {
    if (!A || A->nrows < 0 || A->ncols < 0 || A->rowptr[0] != 0 || A->rowptr[A->nrows] != A->nnz)
      abort();
    for (int i = 0; i < A->nrows; i++) {
      if (A->rowptr[i + 1] < A->rowptr[i])
        abort();
      for (size_t k = A->rowptr[i]; k < A->rowptr[i + 1]; k++)
        if (A->col[k] < 0 || A->col[k] >= A->ncols)
          abort();
    }
    mpe_csr_free(A);
  }
  return 0;
}
