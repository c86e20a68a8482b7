/* AVX-512 (BW) build of the integer tensor-core kernel (compiled with
   AVX512_CFLAGS). Chosen at run time only on a CPU with AVX-512BW. */
#include "config.h"
#include "isa_avx512.h"
#include <string.h>
#include "tc_int.h"
#define VW 16
#define ROWS(X) X(0) X(1) X(2) X(3) X(4) X(5) X(6) X(7) X(8) X(9) X(10) X(11)
#define MR MPEI_TC_INT_AVX512_MR
#define MADD(a, b) ((vi32)_mm512_madd_epi16((__m512i)(a), (__m512i)(b)))
#include "tc_int_kernel.h"

void mpei_tc_int_avx512(const int32_t *ap, const int32_t *bp, int32_t *c, long ldc, int nseg, int segp,
                        int sat)
{
  if (sat)
    int_kernel(ap, bp, c, ldc, nseg, segp, 1);
  else
    int_kernel(ap, bp, c, ldc, nseg, segp, 0);
}
