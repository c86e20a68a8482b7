/* The kernel table of each instruction set (see isa.h). */
#include "config.h"
#include "isa.h"

#define ISA_ROW(isa, ISA)                                                                        \
  {                                                                                            \
    .name = #isa, .round32 = mpei_round32_##isa, .ew_eval = mpei_ew_eval_##isa,                \
    .ew_round = mpei_ew_round_##isa, .ew_exp = mpei_ew_exp_##isa, .ew_fast32 = mpei_ew_fast32_##isa, \
    .tc_blk = mpei_tc_blk_##isa, .tc_blkw = mpei_tc_blkw_##isa, .tc_fma = mpei_tc_fma_##isa,    \
    .tc_epilogue = mpei_tc_epilogue_##isa, .tc_epilogue16 = mpei_tc_epilogue16_##isa, \
    .tc_vw = MPEI_TC_##ISA##_VW, .tc_mr = MPEI_TC_##ISA##_MR, \
    .tc_mrf = MPEI_TC_##ISA##_MRF, .tc_dec16 = mpei_tc_dec16_##isa,                          \
    .tc_pack_exp = mpei_tc_pack_exp_##isa, .tc_blk_sp = mpei_tc_blk_sp_##isa,                         \
    .tc_blkw_sp = mpei_tc_blkw_sp_##isa, .tc_fma_sp = mpei_tc_fma_sp_##isa,                   \
    .tc_mrs = MPEI_TC_##ISA##_MRS, .tc_mrfs = MPEI_TC_##ISA##_MRFS,                            \
    .tc_int = mpei_tc_int_##isa, .tc_int_mr = MPEI_TC_INT_##ISA##_MR, .tc_int_nb = MPEI_TC_INT_##ISA##_NB, \
    .tc_f64 = mpei_tc_f64_##isa, .tc_f64_mr = MPEI_TC_F64_##ISA##_MR, .tc_f64_nb = MPEI_TC_F64_##ISA##_NB, \
    .tc_arm = mpei_tc_arm_##isa, .tc_arm_vw = MPEI_TC_ARM_##ISA##_VW,                          \
    .tc_fp4 = mpei_tc_fp4_##isa, .tc_fp4_mr = MPEI_TC_FP4_##ISA##_MR,                          \
    .tc_amd = mpei_tc_amd_##isa, .tc_amd_vw = MPEI_TC_AMD_##ISA##_VW                           \
  }

static const mpei_isa_kernels by_level[MPEI_SIMD_N] = {
  [MPEI_SIMD_NONE] = { .name = "portable" },
  MPEI_ISA_ROWS(ISA_ROW)
};

const mpei_isa_kernels *mpei_isa(void)
{
  return MPEI_ISA_PICK(by_level, mpei_simd_level());
}
