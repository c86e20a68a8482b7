/* AVX2 (FMA) build of the binary64 tensor-core kernel (compiled with AVX2_CFLAGS). */
#include "config.h"
#include <string.h>
#include "isa_avx2.h"
#include "tc_f64.h"
#define VW 4
#define MR MPEI_TC_F64_AVX2_MR
#define BCAST_PD(p) _mm256_broadcast_sd(p)
#include "tc_f64_kernel.h"

void mpei_tc_f64_avx2(const double *ap, const double *bp, double *c, long ldc, int K)
{
  f64_kernel(ap, bp, c, ldc, K);
}
