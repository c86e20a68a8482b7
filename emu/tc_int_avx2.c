/* AVX2 build of the integer tensor-core kernel (compiled with AVX2_CFLAGS). */
#include "config.h"
#include "isa_avx2.h"
#include <string.h>
#include "tc_int.h"
#define VW 8
#define ROWS(X) X(0) X(1) X(2) X(3) X(4) X(5)
#define MR MPEI_TC_INT_AVX2_MR
#define MADD(a, b) ((vi32)_mm256_madd_epi16((__m256i)(a), (__m256i)(b)))
#include "tc_int_kernel.h"

void mpei_tc_int_avx2(const int32_t *ap, const int32_t *bp, int32_t *c, long ldc, int nseg, int segp, int sat)
{
  if (sat)
    int_kernel(ap, bp, c, ldc, nseg, segp, 1);
  else
    int_kernel(ap, bp, c, ldc, nseg, segp, 0);
}
