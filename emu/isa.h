/* Internal: the kernels of one instruction set, as one table. The tables are
   constant (emu/isa.c); mpei_isa() picks the one of the SIMD level detected
   once (lib/cpu.c, pthread_once) or forced by mpe_simd_level_set. A NULL entry
   means "no kernel here: use the portable code", which is always built and is
   the tests' oracle. The table is built and picked with MPEI_ISA_ROWS and
   MPEI_ISA_PICK (lib/mpei.h), as the range kernels' table of libmpemu-analysis
   is. A new instruction set is one lib/isa_*.h header (what the kernel
   templates need), the files that include it and a template, and its level
   in MPEI_ISA_ROWS. */
#ifndef MPEI_ISA_H
#define MPEI_ISA_H
#include "mpei.h"
#include "elementwise.h"
#include "tc_impl.h"
#include "tc_int.h"
#include "tc_f64.h"
#include "tc_arm_kernel_api.h"
#include "tc_fp4.h"
#include "tc_amd.h"

typedef struct {
  const char *name;
  mpei_kernel32 round32;          /* binary32 arrays (round_kernel.h) */
  mpei_ew_eval_fn ew_eval;        /* element-wise (elementwise_kernel.h) */
  mpei_ew_round_fn ew_round;
  mpei_ew_vfn ew_exp;
  mpei_ew_fast32_fn ew_fast32;
  /* tensor cores (tc_kernel.h): block, wide-block and fma-chain kernels, the
     epilogue row, and the register geometry the driver packs panels for */
  mpei_tc_blk_fn tc_blk, tc_blkw;
  mpei_tc_fma_fn tc_fma;
  mpei_tc_epi_fn tc_epilogue;
  mpei_tc_epi16_fn tc_epilogue16;   /* the same on a binary16 C */
  int tc_vw, tc_mr, tc_mrf;
  /* packing: binary16/bfloat16 decoding, exponents of packed values */
  mpei_tc_dec16_fn tc_dec16;
  mpei_tc_pack_exp_fn tc_pack_exp;
  /* 2:4 sparse A (tc_kernel.h, emu/tc_sparse.c): block, wide-block and fma-chain
     kernels and their rows per call (block, fma-chain); tiles are MPEI_TC_NRS*tc_vw
     wide (fma chain: MPEI_TC_NRFS*tc_vw) */
  mpei_tc_blk_sp_fn tc_blk_sp, tc_blkw_sp;
  mpei_tc_fma_sp_fn tc_fma_sp;
  int tc_mrs, tc_mrfs;
  /* integer (tc_int_kernel.h, emu/tc_int.c): tiles of tc_int_mr × tc_int_nb */
  mpei_tc_int_fn tc_int;
  int tc_int_mr, tc_int_nb;
  /* binary64 fma chain (tc_f64_kernel.h, emu/tc_f64.c): tiles of tc_f64_mr × tc_f64_nb */
  mpei_tc_f64_fn tc_f64;
  int tc_f64_mr, tc_f64_nb;
  /* Arm BF16 dot products (tc_arm_kernel.h, emu/tc_arm.c): B panels tc_arm_vw wide */
  mpei_tc_arm_fn tc_arm;
  int tc_arm_vw;
  /* block-scaled FP4 (tc_fp4_kernel.h, emu/tc_scaled.c) and its rows per call;
     tiles are MPEI_TC_FP4_NV*tc_vw wide */
  mpei_tc_fp4_fn tc_fp4;
  int tc_fp4_mr;
  /* AMD CDNA matrix cores (tc_amd_kernel.h, emu/tc_amd.c): B panels tc_amd_vw wide */
  mpei_tc_amd_fn tc_amd;
  int tc_amd_vw;
} mpei_isa_kernels;

MPEI_HIDDEN const mpei_isa_kernels *mpei_isa(void);
#endif
