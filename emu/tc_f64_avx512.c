/* AVX-512 build of the binary64 tensor-core kernel (compiled with AVX512_CFLAGS). */
#include "config.h"
#include <string.h>
#include "isa_avx512.h"
#include "tc_f64.h"
#define VW 8
#define MR MPEI_TC_F64_AVX512_MR
#define BCAST_PD(p) _mm512_set1_pd(*(p))
#include "tc_f64_kernel.h"

void mpei_tc_f64_avx512(const double *ap, const double *bp, double *c, long ldc, int K)
{
  f64_kernel(ap, bp, c, ldc, K);
}
