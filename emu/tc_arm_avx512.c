/* AVX512 build of the Arm BF16 kernel (tc_arm_kernel.h; compiled with AVX512_CFLAGS
   and -ffp-contract=off). */
#include "config.h"
#include "mpemu/core.h"
#include "isa_avx512.h"
#define VW MPEI_TC_ARM_AVX512_VW
#include "tc_arm_kernel.h"

void mpei_tc_arm_avx512(const float *ap, long lda, const float *bp, float *c, const mpei_tc_arm_kp *kp)
{
  arm_kernel(ap, lda, bp, c, kp);
}
