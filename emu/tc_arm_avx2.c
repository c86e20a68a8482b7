/* AVX2 build of the Arm BF16 kernel (tc_arm_kernel.h; compiled with AVX2_CFLAGS
   and -ffp-contract=off). */
#include "config.h"
#include "mpemu/core.h"
#define VW MPEI_TC_ARM_AVX2_VW
#include "tc_arm_kernel.h"

int mpei_tc_arm_avx2(const float *ap, const float *bp, float *c, const mpei_tc_arm_kp *kp)
{
  return arm_kernel(ap, bp, c, kp);
}
