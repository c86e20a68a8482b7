/* Tensor-core models: the parameter table, custom models, and the portable
   block engine that every fast kernel is checked against.

   One engine serves every GPU: a block of up to L exact products plus the
   accumulator c is aligned on the largest exponent E_max, each addend is cut
   toward zero to a multiple of 2^(E_max - F), the cut addends are summed
   exactly in an integer, and the sum is rounded once to the output format. */
#include "config.h"
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "tc_impl.h"

/* ------------------------------------------------------------------ table */

/* A row: name, then the parameters (named, so appended fields stay 0). z: the exponent a
   zero c takes with binary32 output (MMA-Sim's e_zero, mpe_tc_model_get(3)). */
#define ROWX(nm, kind_, in_, L, F, rb, r32, r16, ir, late, z, zs, tn, ins, sp)                            \
  { nm, { .kind = kind_, .in = in_, .block = L, .align_bits = F, .result_bits = rb, .round_fp32 = r32,  \
          .round_fp16 = r16, .input_round = ir, .zero_c_counts = 1, .late_c = late, .zero_c_exp = z,  \
          .zero_sign = zs, .tf32_nan = tn, .instr = ins, .fp16_split = sp }, 0 }
#define REF(nm, kind, in, ir) ROWX(nm, kind, in, 0, 0, 0, MPE_RNE, MPE_RNE, ir, 0, 0, 0, 0, 0, 0)
#define INT(nm, in, L, ins) ROWX(nm, MPE_TC_BLOCK, in, L, 0, 0, MPE_RNE, MPE_RNE, MPE_RNE, 0, 0, 0, 0, ins, 0)
/* a floating-point GPU row: RZ to binary32, RNE to binary16; TF32 operands
   are truncated bitwise (NaN payloads included), the others rounded (RNE);
   every zero block result is +0. sp: fp16_split (binary16 output of mma.sync FP8) */
#define GPUS(nm, in, L, F, rb, late, z, ins, sp) \
  ROWX(nm, MPE_TC_BLOCK, in, L, F, rb, MPE_RZ, MPE_RNE, (in) == MPE_TF32 ? MPE_RZ : MPE_RNE, late, z, 1, \
       (in) == MPE_TF32, ins, sp)
#define GPU(nm, in, L, F, rb, z, ins) GPUS(nm, in, L, F, rb, 0, z, ins, 0)
/* one instruction's FP16, BF16 and TF32 rows: TF32 blocks hold half as many products */
#define GPU16(nm, L, F, z, ins) \
  GPU(nm, MPE_FP16, L, F, 0, z, ins), GPU(nm, MPE_BF16, L, F, 0, z, ins), GPU(nm, MPE_TF32, (L) / 2, F, 0, z, ins)
/* one instruction's E4M3 and E5M2 rows */
#define GPU8(nm, L, F, rb, late, z, ins, sp) \
  GPUS(nm, MPE_E4M3, L, F, rb, late, z, ins, sp), GPUS(nm, MPE_E5M2, L, F, rb, late, z, ins, sp)
/* a binary64 row: the fma chain in binary64 (tc_f64.c) */
#define F64(nm, ins) ROWX(nm, MPE_TC_FMA_CHAIN, MPE_FP64, 0, 0, 0, MPE_RNE, MPE_RNE, MPE_RNE, 0, 0, 0, 0, ins, 0)
/* AMD CDNA rows (v_mfma): CDNA1 the exact model per block of L (mfma 0), CDNA2
   and CDNA3 their own arithmetic (mpe_tc_mfma); binary32 output, RNE */
#define AMDX(nm, kind_, in_, L, F, rb, mf)                                                           \
  { nm, { .kind = kind_, .in = in_, .block = L, .align_bits = F, .result_bits = rb, .round_fp32 = MPE_RNE, \
          .round_fp16 = MPE_RNE, .input_round = (in_) == MPE_TF32 ? MPE_RZ : MPE_RNE, .zero_c_counts = 1, \
          .tf32_nan = (in_) == MPE_TF32, .zero_sign = (kind_) == MPE_TC_EXACT, .instr = MPE_TC_MFMA,      \
          .mfma = mf }, 0 }
/* an Arm BF16 row (emu/tc_arm.c): the instruction's K and the FPCR it runs under */
#define ARM(nm, L, ins, fpcr_)                                                                        \
  { nm, { .kind = MPE_TC_ARM_BFDOT, .in = MPE_BF16, .block = L,                                       \
          .round_fp32 = (fpcr_) ? MPE_RNE : MPE_RO, .round_fp16 = MPE_RNE, .input_round = MPE_RNE,     \
          .instr = ins, .fpcr = fpcr_ }, 0 }
/* an integer row whose instructions saturate (satfinite = 1) */
#define INTSAT(nm, in_, L, ins)                                                                       \
  { nm, { .kind = MPE_TC_BLOCK, .in = in_, .block = L, .round_fp32 = MPE_RNE, .round_fp16 = MPE_RNE,     \
          .input_round = MPE_RNE, .zero_c_counts = 1, .satfinite = 1, .instr = ins }, 0 }
/* a CPU dot-product row (MPE_TC_CPU_CHAIN): the instruction's K, pair order, flushing */
#define CPU(nm, in_, L, ord, fl, ins)                                                                 \
  { nm, { .kind = MPE_TC_CPU_CHAIN, .in = in_, .block = L, .round_fp32 = MPE_RNE, .round_fp16 = MPE_RNE, \
          .input_round = MPE_RNE, .instr = ins, .pair_order = ord, .flush = fl }, 0 }
#define SYNC MPE_TC_MMA_SYNC
#define WG MPE_TC_WGMMA
#define TC5 MPE_TC_TCGEN05
/* A block-scaled instruction (tc_scaled.c): L elements per instruction, groups
   of G, the scale formats it takes and the exponent of a zero addend. */
#define SCALED(nm, in_, L, F, G, fmts, zexp)                                                        \
  { nm, { .kind = MPE_TC_BLOCK, .in = in_, .block = L, .align_bits = F, .round_fp32 = MPE_RZ,            \
          .round_fp16 = MPE_RNE, .input_round = MPE_RNE, .instr = MPE_TC_TCGEN05, .scale_group = G,      \
          .scale_fmts = fmts, .scale_zero_exp = zexp }, 0 }

/* The GPU data of tests/conformance/tensor-cores and MMA-Sim 2.1.1 (mpe_tc_model_get(3)).
   A row named after the GPU alone is the instruction cuBLAS issues for that
   type; "gpu:instr" rows are the other instructions of that GPU. */
static const struct mpe_tc_model models[] = {
  GPU("v100", MPE_FP16, 4, 23, 0, -131, SYNC),          /* mma.sync m8n8k4 */
  GPU("t4", MPE_FP16, 8, 24, 0, -132, SYNC),            /* mma.sync m16n8k8 */
  GPU16("a100", 8, 24, -132, SYNC),                      /* m16n8k16: two blocks of 8; TF32 m16n8k8 */
  GPU16("ada", 8, 24, -132, SYNC),
  GPU8("ada", 16, 13, 13, 0, -132, SYNC, 0),            /* m16n8k32: two blocks of 16 */
  /* Hopper: cuBLAS issues wgmma; mma.sync computes the same on these types except FP8
     with binary16 output: two binary16 blocks of 16 (k mod 4 in {0, 1}, then {2, 3}),
     F = 25, c added after (fp16_split): all 20,000 real H100/H200 mma.sync rows fit */
  GPU16("h100", 16, 25, -133, WG),
  GPU8("h100", 32, 13, 13, 0, -133, WG, 0),
  GPU16("h100:mma.sync", 16, 25, -133, SYNC),
  GPU8("h100:mma.sync", 32, 13, 13, 0, -133, SYNC, 25),
  /* datacenter Blackwell: cuBLAS issues tcgen05.mma, c inside the truncating
     block (MMA-Sim). mma.sync FP8: the products alone are summed (F = 25, RZ),
     then c is added with one nearest-even addition: all 10,000 real B200 rows
     fit (c inside a truncating block misses a third of them); with binary16
     output the two blocks of Hopper's mma.sync (fp16_split): all 10,000 fit */
  GPU16("b200", 16, 25, -133, TC5),
  GPU8("b200", 32, 25, 0, 0, -133, TC5, 0),
  GPU16("b200:mma.sync", 16, 25, -133, SYNC),
  GPU8("b200:mma.sync", 32, 25, 0, 1, -133, SYNC, 25),
  /* RTX Blackwell (sm_120): mma.sync only; FP8 with c inside the block (MMA-Sim) */
  GPU16("rtx-pro-6000", 16, 25, -133, SYNC),
  GPU8("rtx-pro-6000", 32, 25, 0, 0, -133, SYNC, 0),
  REF("exact", MPE_TC_EXACT, MPE_FP16, MPE_RNE),
  REF("exact", MPE_TC_EXACT, MPE_BF16, MPE_RNE),
  REF("exact", MPE_TC_EXACT, MPE_TF32, MPE_RZ),
  REF("exact", MPE_TC_EXACT, MPE_E4M3, MPE_RNE),
  REF("exact", MPE_TC_EXACT, MPE_E5M2, MPE_RNE),
  REF("fma-chain", MPE_TC_FMA_CHAIN, MPE_FP16, MPE_RNE),
  REF("fma-chain", MPE_TC_FMA_CHAIN, MPE_BF16, MPE_RNE),
  REF("fma-chain", MPE_TC_FMA_CHAIN, MPE_TF32, MPE_RZ),
  REF("fma-chain", MPE_TC_FMA_CHAIN, MPE_E4M3, MPE_RNE),
  REF("fma-chain", MPE_TC_FMA_CHAIN, MPE_E5M2, MPE_RNE),
  /* Integer tensor cores (emu/tc_int.c, mpe_tc_int(3)): L is the k of the mma
     instruction cuBLAS/CUTLASS issue: mma.m8n8k16 (s8) / m8n8k32 (s4) on Turing,
     mma.m16n8k32 (s8) / m16n8k64 (s4) on Ampere and Ada, wgmma m64nNk32 (s8) on
     Hopper, which has no 4-bit integer instruction, tcgen05.mma kind::i8 (k = 32 for
     8-bit inputs) on Blackwell, which has none either (NVIDIA lists INT8 tensor-core
     rates for B200, 4.5 dense POPS on HGX B200, and no INT4). mma.sync m16n8k32 on
     Hopper and Blackwell: the same exact sums. Wrap-around by default. */
  INT("t4", MPE_INT8, 16, SYNC), INT("t4", MPE_UINT8, 16, SYNC),
  INT("t4", MPE_INT4, 32, SYNC), INT("t4", MPE_UINT4, 32, SYNC),
  INT("a100", MPE_INT8, 32, SYNC), INT("a100", MPE_UINT8, 32, SYNC),
  INT("a100", MPE_INT4, 64, SYNC), INT("a100", MPE_UINT4, 64, SYNC),
  INT("ada", MPE_INT8, 32, SYNC), INT("ada", MPE_UINT8, 32, SYNC),
  INT("ada", MPE_INT4, 64, SYNC), INT("ada", MPE_UINT4, 64, SYNC),
  INT("h100", MPE_INT8, 32, WG), INT("h100", MPE_UINT8, 32, WG),
  INT("h100:mma.sync", MPE_INT8, 32, SYNC), INT("h100:mma.sync", MPE_UINT8, 32, SYNC),
  INT("b200", MPE_INT8, 32, TC5), INT("b200", MPE_UINT8, 32, TC5),
  INT("b200:mma.sync", MPE_INT8, 32, SYNC), INT("b200:mma.sync", MPE_UINT8, 32, SYNC),
  INT("rtx-pro-6000", MPE_INT8, 32, SYNC), INT("rtx-pro-6000", MPE_UINT8, 32, SYNC),
  /* Blackwell block-scaled MMA, tcgen05.mma .block_scale, as MMA-Sim 2.1.1 models it
     (mmasim/nv_ptx/sim.py, TCGen05MMABlockScale; mmasim/arithmetic/fdpa.py, st_fdpa and
     gst_fdpa). kind::mxf8f6f4 (k = 32, any pair of E4M3, E5M2, E2M3, E3M2, E2M1 operands,
     UE8M0 scales per 32): each scaled product is an addend, F = 25, zero addends at 2^-133.
     kind::mxf4 (UE8M0 per 32) and kind::mxf4nvf4 (UE8M0 per 16 or 32, UE4M3 per 16), FP4
     operands, k = 64: the exact sums of 16 products, times their scales, are the addends,
     F = 35, zero addends at 2^-139. Binary32 output rounded toward zero. */
  SCALED("b200:mxf8f6f4", MPE_E4M3, 32, 25, 1, MPE_TC_SF_UE8M0_32, -133),
  SCALED("b200:mxf8f6f4", MPE_E5M2, 32, 25, 1, MPE_TC_SF_UE8M0_32, -133),
  SCALED("b200:mxf8f6f4", MPE_E2M3, 32, 25, 1, MPE_TC_SF_UE8M0_32, -133),
  SCALED("b200:mxf8f6f4", MPE_E3M2, 32, 25, 1, MPE_TC_SF_UE8M0_32, -133),
  SCALED("b200:mxf8f6f4", MPE_E2M1, 32, 25, 1, MPE_TC_SF_UE8M0_32, -133),
  SCALED("b200:mxf4", MPE_E2M1, 64, 35, 16, MPE_TC_SF_UE8M0_32, -139),
  SCALED("b200:mxf4nvf4", MPE_E2M1, 64, 35, 16, MPE_TC_SF_UE8M0_32 | MPE_TC_SF_UE8M0_16 | MPE_TC_SF_UE4M3_16, -139),
  /* FP64 tensor cores (emu/tc_f64.c): a chain of binary64 fmas in ascending k
     from c, as MMA-Sim 2.1.1 models mma.sync .f64 (mmasim/nv_ptx/sim.py: MMA_FMA
     for every f64 shape): m8n8k4 from sm_80 on (A100, Ada, B200, RTX Blackwell),
     m16n8k4/k8/k16 on Hopper, where cuBLAS's DGEMM issues them */
  F64("a100", SYNC), F64("ada", SYNC), F64("h100", SYNC), F64("b200", SYNC), F64("rtx-pro-6000", SYNC),
  F64("fma-chain", 0),
  /* AMD CDNA matrix cores, v_mfma, as MMA-Sim 2.1.1 models them (mmasim/amd/sim.py;
     mmasim/arithmetic/fdpa.py, ftz_mul_add.py): CDNA1 (MI100) the exact sum of
     4 FP16 / 2 BF16 products and c, one RNE rounding (MMA_E_FDPA); CDNA2 (MI200)
     binary32 products summed in pairs with every denormal flushed (MMA_FTZ_MUL_ADD;
     4 products a step, 2 for the BF16 instructions without _1k); CDNA3 (MI300)
     the two-stage sum of 8 FP16/BF16 or 4 xf32 products (MMA_TR_FDPA, F = 24,
     F2 = 31); FP64 the binary64 fma chain. "mi250" BF16 is the _1k instructions
     CDNA2 added; "mi250:bf16" the older BF16 forms it runs as CDNA1's. */
  AMDX("mi100", MPE_TC_EXACT, MPE_FP16, 4, 0, 0, 0),
  AMDX("mi100", MPE_TC_EXACT, MPE_BF16, 2, 0, 0, 0),
  AMDX("mi250", MPE_TC_BLOCK, MPE_FP16, 4, 0, 0, MPE_TC_MFMA_FTZ),
  AMDX("mi250", MPE_TC_BLOCK, MPE_BF16, 4, 0, 0, MPE_TC_MFMA_FTZ),
  AMDX("mi250:bf16", MPE_TC_BLOCK, MPE_BF16, 2, 0, 0, MPE_TC_MFMA_FTZ),
  F64("mi250", MPE_TC_MFMA),
  AMDX("mi300", MPE_TC_BLOCK, MPE_FP16, 8, 24, 31, MPE_TC_MFMA_TWO_STAGE),
  AMDX("mi300", MPE_TC_BLOCK, MPE_BF16, 8, 24, 31, MPE_TC_MFMA_TWO_STAGE),
  AMDX("mi300", MPE_TC_BLOCK, MPE_TF32, 4, 24, 31, MPE_TC_MFMA_TWO_STAGE),
  /* CDNA3 FP8 (v_mfma_f32_16x16x32_{fp8,bf8}_{fp8,bf8}, 32x32x16): FNUZ operands, 16
     products a block in even and odd partial sums (MMA_GTR_FDPA, F = 24, F2 = 31);
     mixed pairs are the model with one operand of each */
  AMDX("mi300", MPE_TC_BLOCK, MPE_E4M3FNUZ, 16, 24, 31, MPE_TC_MFMA_TWO_STAGE_SPLIT),
  AMDX("mi300", MPE_TC_BLOCK, MPE_E5M2FNUZ, 16, 24, 31, MPE_TC_MFMA_TWO_STAGE_SPLIT),
  F64("mi300", MPE_TC_MFMA),
  /* Arm A64 BF16 dot products, from the Arm ARM's pseudo-code (BFDotAdd; mpe_tc_model_get(3),
     "Arm models"): FPCR.EBF = 0, and FEAT_EBF16 with FPCR.EBF = 1 and RN, no flushing */
  ARM("arm-bfdot", 2, MPE_TC_ARM_BFDOT_I, 0),
  ARM("arm-bfdot-ebf16", 2, MPE_TC_ARM_BFDOT_I, MPE_TC_FPCR_EBF),
  ARM("arm-bfmmla", 4, MPE_TC_ARM_BFMMLA, 0),
  ARM("arm-bfmmla-ebf16", 4, MPE_TC_ARM_BFMMLA, MPE_TC_FPCR_EBF),
  /* x86 dot-product instructions (emu/tc_cpu.c; mpe_tc_model_get(3), "CPU models"):
     VDPBF16PS, one instruction per pair, odd k first; TDPBF16PS and TDPFP16PS, K = 32
     per instruction, even and odd partial sums as the SDM writes them (the Intrinsics
     Guide's sequential reading: pair_order MPE_TC_PAIR_ASCENDING); the integer
     dot products through the integer engine (wrap-around; VPDPBUSDS saturates each
     instruction's four products and c) */
  CPU("avx512-bf16", MPE_BF16, 2, MPE_TC_PAIR_ODD_FIRST, MPE_TC_DAZ_AB | MPE_TC_DAZ_C | MPE_TC_FTZ,
      MPE_TC_X86_VDPBF16PS),
  CPU("amx-bf16", MPE_BF16, 32, MPE_TC_PAIR_SPLIT, MPE_TC_DAZ_AB | MPE_TC_DAZ_C | MPE_TC_FTZ,
      MPE_TC_X86_TDPBF16PS),
  CPU("amx-fp16", MPE_FP16, 32, MPE_TC_PAIR_SPLIT, MPE_TC_FTZ, MPE_TC_X86_TDPFP16PS),
  INT("amx-int8", MPE_INT8, 64, MPE_TC_X86_TDPBSSD), INT("amx-int8", MPE_UINT8, 64, MPE_TC_X86_TDPBSSD),
  INT("avx512-vnni", MPE_UINT8, 4, MPE_TC_X86_VPDPBUSD), INT("avx-vnni", MPE_UINT8, 4, MPE_TC_X86_VPDPBUSD),
  INTSAT("avx512-vnni:vpdpbusds", MPE_UINT8, 4, MPE_TC_X86_VPDPBUSDS),
  INTSAT("avx-vnni:vpdpbusds", MPE_UINT8, 4, MPE_TC_X86_VPDPBUSDS),
  REF("exact", MPE_TC_EXACT, MPE_INT8, MPE_RNE),
  REF("exact", MPE_TC_EXACT, MPE_UINT8, MPE_RNE),
  REF("exact", MPE_TC_EXACT, MPE_INT4, MPE_RNE),
  REF("exact", MPE_TC_EXACT, MPE_UINT4, MPE_RNE),
};

static const struct { const char *alias, *name; } aliases[] = {
  { "a2", "a100" }, { "a30", "a100" }, { "l40s", "ada" }, { "h200", "h100" },
  { "fma", "fma-chain" }, { "mi210", "mi250" }, { "mi250x", "mi250" }, { "mi300x", "mi300" },
  { "mi300a", "mi300" }, { "mi325x", "mi300" },
};

/* the instruction names after ':' (the first of each is the one printed) */
static const struct { const char *name; int instr; } instrs[] = {
  { "mma.sync", MPE_TC_MMA_SYNC }, { "mma", MPE_TC_MMA_SYNC },
  { "wgmma", MPE_TC_WGMMA }, { "wgmma.mma-async", MPE_TC_WGMMA },
  { "tcgen05", MPE_TC_TCGEN05 }, { "tcgen05.mma", MPE_TC_TCGEN05 },
  { "mfma", MPE_TC_MFMA }, { "v-mfma", MPE_TC_MFMA },
};

/* a[0..an) equals b[0..bn), ignoring case in a and taking '_' for '-' */
static int name_eqn(const char *a, size_t an, const char *b, size_t bn)
{
  if (an != bn)
    return 0;
  for (size_t i = 0; i < an; i++) {
    char x = a[i];
    if (x >= 'A' && x <= 'Z') x = (char)(x - 'A' + 'a');
    if (x == '_') x = '-';
    if (x != b[i]) return 0;
  }
  return 1;
}

/* the GPU part of a name: up to ':' */
static size_t gpu_len(const char *s)
{
  const char *c = strchr(s, ':');
  return c ? (size_t)(c - s) : strlen(s);
}

const mpe_tc_model *mpe_tc_model_get(const char *name, mpe_type in)
{
  if (!name)
    return NULL;
  size_t gl = gpu_len(name);
  const char *gpu = name;
  for (size_t i = 0; i < sizeof aliases / sizeof aliases[0]; i++)
    if (name_eqn(name, gl, aliases[i].alias, strlen(aliases[i].alias))) {
      gpu = aliases[i].name;
      break;
    }
  const size_t gn = gpu == name ? gl : strlen(gpu);
  /* none named: the GPU's row for the instruction cuBLAS issues; else an
     instruction family, or a row's own suffix (the block-scaled kinds, "mxf4") */
  const char *is = name[gl] == ':' ? name + gl + 1 : NULL;
  const size_t isl = is ? strlen(is) : 0;
  int instr = 0;
  for (size_t i = 0; is && i < sizeof instrs / sizeof instrs[0] && !instr; i++)
    if (name_eqn(is, isl, instrs[i].name, strlen(instrs[i].name)))
      instr = instrs[i].instr;
  for (size_t i = 0; i < sizeof models / sizeof models[0]; i++) {
    const struct mpe_tc_model *m = &models[i];
    const size_t ml = gpu_len(m->name);
    if (m->p.in != in || !name_eqn(gpu, gn, m->name, ml))
      continue;
    if (!is ? m->name[ml] == '\0'
            : instr ? m->p.instr == instr && !m->p.scale_group
                    : m->name[ml] == ':' && name_eqn(is, isl, m->name + ml + 1, strlen(m->name + ml + 1)))
      return m;
  }
  return NULL;
}

/* every field of the first layout is an int-sized enum or int */
_Static_assert(MPE_TC_PARAMS_SIZE_V1 == 11 * sizeof(int) && sizeof(mpe_tc_kind) == sizeof(int) &&
                   sizeof(mpe_type) == sizeof(int) && sizeof(mpe_round) == sizeof(int),
               "mpe_tc_params: the first layout is eleven int-sized fields");

int mpe_tc_model_params_sized(const mpe_tc_model *m, mpe_tc_params *p, size_t size)
{
  if (!m || !p || size < MPE_TC_PARAMS_SIZE_V1)
    return MPE_EINVAL;
  if (size > sizeof *p) {   /* a newer header: its fields unknown here are zero (their default) */
    memset((char *)p + sizeof *p, 0, size - sizeof *p);
    size = sizeof *p;
  }
  memcpy(p, &m->p, size);
  return MPE_OK;
}

int (mpe_tc_model_params)(const mpe_tc_model *m, mpe_tc_params *p)
{
  return mpe_tc_model_params_sized(m, p, MPE_TC_PARAMS_SIZE_V1);
}

const char *mpe_tc_model_name(const mpe_tc_model *m)
{
  return m ? m->name : NULL;
}

const char *mpe_tc_model_name_at(int i)
{
  if (i < 0)
    return NULL;
  const size_t nm = sizeof models / sizeof models[0], na = sizeof aliases / sizeof aliases[0];
  for (size_t r = 0; r < nm; r++) {   /* a name counts at its first row */
    size_t q = 0;
    while (q < r && strcmp(models[q].name, models[r].name) != 0)
      q++;
    if (q == r && i-- == 0)
      return models[r].name;
  }
  return (size_t)i < na ? aliases[i].alias : NULL;
}

mpei_tc_acc mpei_tc_acc_of(const mpe_tc_params *p)
{
  if (p->kind == MPE_TC_FMA_CHAIN)
    return MPEI_TC_ACC_FMA;
  if (p->kind != MPE_TC_BLOCK || p->mfma || p->block < 1 || p->align_bits < 1 || p->align_bits > 50)
    return MPEI_TC_ACC_NONE;
  /* exact integer bounds, in binary64 (every quantity is a power of two or
     a product of two integers below 2^11 and 2^52: no rounding) */
  const double L = p->block, cut = ldexp(1.0, p->align_bits + 2) - 1.0;
  if (p->align_bits <= 29 && L * cut <= 2147483647.0)
    return MPEI_TC_ACC_I32;
  if (p->align_bits <= 29 && (double)((p->block + 1) / 2) * cut <= 2147483647.0)
    return MPEI_TC_ACC_I32X2;
  if (L * cut + ldexp(1.0, p->align_bits + 1) <= ldexp(1.0, 53))
    return MPEI_TC_ACC_F64;
  return MPEI_TC_ACC_NONE;
}

static int round_ok(mpe_round r)
{
  return r == MPE_RNE || r == MPE_RNA || r == MPE_RZ || r == MPE_RU || r == MPE_RD;
}

int mpei_tc_custom_new(mpe_tc_model **out, const mpe_tc_params *p, int block_fields)
{
  if (p->input_round != MPE_RZ && p->input_round != MPE_RNE && p->input_round != MPE_RNA)
    return MPE_EINVAL;
  if (p->zero_c_counts != 0 && p->zero_c_counts != 1)
    return MPE_EINVAL;
  if (!block_fields && (p->align_bits || p->result_bits || p->late_c || p->satfinite || p->zero_c_exp ||
                        p->zero_sign || p->tf32_nan || p->scale_group || p->scale_fmts || p->scale_zero_exp ||
                        p->in_b || p->mfma || p->fp16_split))
    return MPE_EINVAL;
  struct mpe_tc_model *m = malloc(sizeof *m);
  if (!m)
    return MPE_ENOMEM;
  m->name = "custom";
  m->p = *p;
  m->custom = 1;
  *out = m;
  return MPE_OK;
}

int (mpe_tc_model_custom)(mpe_tc_model **out, const mpe_tc_params *p)
{
  return mpe_tc_model_custom_sized(out, p, MPE_TC_PARAMS_SIZE_V1);
}

int mpe_tc_model_custom_sized(mpe_tc_model **out, const mpe_tc_params *p0, size_t size)
{
  if (out)
    *out = NULL;   /* the constructor convention (mpemu/core.h) */
  if (!out || !p0 || size < MPE_TC_PARAMS_SIZE_V1)
    return MPE_EINVAL;
  for (size_t i = sizeof *p0; i < size; i++)   /* a newer header's fields, unknown here */
    if (((const unsigned char *)p0)[i])
      return MPE_EUNSUP;
  mpe_tc_params pv;   /* the caller's bytes; fields it did not have are zero */
  memset(&pv, 0, sizeof pv);
  memcpy(&pv, p0, size < sizeof pv ? size : sizeof pv);
  const mpe_tc_params *p = &pv;
  if (p->kind == MPE_TC_ARM_BFDOT)
    return mpei_tc_arm_custom(out, p);
  if (p->kind != MPE_TC_BLOCK && p->kind != MPE_TC_EXACT && p->kind != MPE_TC_FMA_CHAIN &&
      p->kind != MPE_TC_CPU_CHAIN)
    return MPE_EINVAL;
  if (((p->instr < MPE_TC_INSTR_NONE || p->instr > MPE_TC_MFMA) &&
       (p->instr < MPE_TC_X86_VDPBF16PS || p->instr > MPE_TC_X86_VPDPBUSDS)) ||
      p->fpcr != 0)
    return MPE_EINVAL;
  if (p->kind == MPE_TC_CPU_CHAIN)
    return mpei_tc_cpu_custom(out, p);
  if (p->pair_order != 0 || p->flush != 0)
    return MPE_EINVAL;   /* the CPU chain's fields */
  if (p->mfma != MPE_TC_MFMA_NONE) {   /* the CDNA2/CDNA3 arithmetic: FP16, BF16 (CDNA3 also TF32, FNUZ FP8) */
    const int split = p->mfma == MPE_TC_MFMA_TWO_STAGE_SPLIT;
    if (p->kind != MPE_TC_BLOCK || p->scale_group || p->late_c || p->round_fp32 != MPE_RNE ||
        (split ? mpei_type_fp8(p->in) != 2 || (p->in_b && mpei_type_fp8(p->in_b) != 2)
               : p->in_b || (p->in != MPE_FP16 && p->in != MPE_BF16 &&
                             (p->in != MPE_TF32 || p->mfma != MPE_TC_MFMA_TWO_STAGE))))
      return MPE_EINVAL;
    if (p->mfma == MPE_TC_MFMA_FTZ ? (p->block != 2 && p->block != 4) || p->align_bits || p->result_bits
        : (p->mfma != MPE_TC_MFMA_TWO_STAGE && !split) || p->block < 1 || p->block > 64 || p->align_bits < 1 ||
          p->align_bits > 40 || p->result_bits < 1 || p->result_bits > 40)
      return MPE_EINVAL;
  } else if (mpei_type_fp8(p->in) == 2) {
    return MPE_EINVAL;   /* FNUZ operands: the CDNA3 FP8 arithmetic only */
  }
  if (mpei_type_is_int(p->in))
    return mpei_tc_int_custom(out, p);
  if (p->satfinite != 0)
    return MPE_EINVAL;
  if (p->scale_group != 0 || p->scale_fmts != 0 || p->scale_zero_exp != 0) {
    int r = mpei_tc_scaled_params_ok(p);
    if (r)
      return r;
  } else if (p->in != MPE_FP16 && p->in != MPE_BF16 && p->in != MPE_TF32 && !mpei_type_fp8(p->in)) {
    return MPE_EINVAL;
  }
  if (!round_ok(p->round_fp32) || !round_ok(p->round_fp16))
    return MPE_EINVAL;
  if (p->in_b != 0 && (!mpei_type_fp8(p->in) || mpei_type_fp8(p->in_b) != mpei_type_fp8(p->in)))
    return MPE_EINVAL;   /* B in its own format: the mixed FP8 instructions only */
  if (p->late_c != 0 && p->late_c != 1)
    return MPE_EINVAL;
  if (p->zero_c_exp != 0 && (p->zero_c_exp < -300 || p->zero_c_exp > -126))
    return MPE_EINVAL;
  if (p->zero_sign != 0 && p->zero_sign != 1)
    return MPE_EINVAL;
  if (p->tf32_nan != 0 && (p->tf32_nan != 1 || p->in != MPE_TF32))
    return MPE_EINVAL;
  if (p->kind == MPE_TC_EXACT && (p->block < 0 || p->block > 1024))
    return MPE_EINVAL;
  if (p->kind == MPE_TC_BLOCK && !p->mfma) {
    if (p->block < 1 || p->block > 1024 || p->align_bits < 1 || p->align_bits > 58)
      return MPE_EINVAL;
    /* the exact block sum, (L + 1) addends below 2^(F+2), must fit an int64 */
    int lg = 0;
    while ((1L << lg) < p->block + 1)
      lg++;
    if (p->align_bits + 2 + lg > 62)
      return MPE_EINVAL;
    if (p->result_bits < 0 || p->result_bits > 40)
      return MPE_EINVAL;
    /* the two binary16 blocks of FP8 mma.sync: half the block each, the same int64 bound */
    if (p->fp16_split != 0 && (mpei_type_fp8(p->in) != 1 || p->scale_group || p->block % 4 ||
                               p->fp16_split < 1 || p->fp16_split + 2 + lg > 62))
      return MPE_EINVAL;
  } else if (p->fp16_split != 0 && p->kind == MPE_TC_BLOCK) {
    return MPE_EINVAL;   /* the AMD arithmetic has no binary16 output */
  }
  if (p->kind != MPE_TC_BLOCK) {   /* the block engine's fields, read by no other kind */
    if (p->kind != MPE_TC_EXACT)   /* the exact model keeps its blocks (0: all of K) */
      pv.block = 0;
    pv.align_bits = 0;
    pv.result_bits = 0;
    pv.late_c = 0;
    pv.zero_c_exp = 0;
    pv.fp16_split = 0;
    if (p->kind != MPE_TC_EXACT)   /* and the exact model's blocks their sign of zero */
      pv.zero_sign = 0;
  }
  return mpei_tc_custom_new(out, p, 1);
}

void mpe_tc_model_free(mpe_tc_model *m)
{
  if (m && m->custom)
    free(m);
}

/* ------------------------------------------------------------------ rounding */

void mpei_tc_out_of(const struct mpe_tc_model *m, int out16, mpei_tc_out *o)
{
  if (out16) {
    o->p = 11; o->emin = -14; o->emax = 15; o->mode = m->p.round_fp16;
  } else {
    o->p = 24; o->emin = -126; o->emax = 127; o->mode = m->p.round_fp32;
  }
  /* a zero c: no exponent, the output's emin, or as far below it as
     zero_c_exp lies below binary32's emin */
  o->zexp = !m->p.zero_c_counts ? MPEI_TC_ZERO_EXP
          : m->p.zero_c_exp ? o->emin + (m->p.zero_c_exp + 126) : o->emin;
  o->zero_sign = (m->p.kind == MPE_TC_BLOCK || m->p.kind == MPE_TC_EXACT) && m->p.zero_sign;
  /* binary32 output only: the block result is first cut to result_bits
     fraction bits (the FP8 units of Ada and Hopper), then rounded; with
     binary16 output the same units fit the data without the cut */
  o->result_bits = !out16 && m->p.kind == MPE_TC_BLOCK && m->p.result_bits > 0 ? m->p.result_bits : 0;
  o->c_emin = o->emin;
  o->split = out16 && m->p.kind == MPE_TC_BLOCK ? m->p.fp16_split : 0;
}

double mpei_tc_round(int neg, uint64_t mag, int exp, int sticky, int p, int emin, int emax,
                     mpe_round r)
{
  if (mag == 0 && !sticky)
    return neg ? -0.0 : 0.0;
  int msb = mag ? 63 - __builtin_clzll(mag) : -1;
  int e = mag ? msb + exp : exp - 1;
  if (e < emin)
    e = emin;
  int lsb = e - (p - 1);
  long drop = (long)lsb - exp;
  uint64_t kept;
  int cmp;   /* remainder against half an ulp: -1 below, 0 equal, 1 above */
  int inexact;
  if (drop <= 0) {
    kept = mag << -drop;
    inexact = sticky != 0;
    cmp = inexact ? -1 : -2;
  } else if (drop > 64) {
    kept = 0;
    inexact = 1;
    cmp = -1;
  } else {
    uint64_t rem, half;
    if (drop == 64) {
      kept = 0; rem = mag; half = 1ull << 63;
    } else {
      kept = mag >> drop;
      rem = mag & ((1ull << drop) - 1);
      half = 1ull << (drop - 1);
    }
    inexact = rem != 0 || sticky;
    if (!inexact)
      cmp = -2;
    else if (rem > half || (rem == half && sticky))
      cmp = 1;
    else if (rem == half)
      cmp = 0;
    else
      cmp = -1;
  }
  /* the output roundings are deterministic (round_ok): no random word */
  int up = MPEI_ROUND_UP((int)r, inexact, cmp == 1, cmp == 0, (int)(kept & 1), neg, 0, 0);
  kept += (uint64_t)up;
  double v = ldexp((double)kept, lsb);
  if (v >= ldexp(1.0, emax + 1))
    v = INFINITY;
  return neg ? -v : v;
}

/* Round an exact binary64 value to the output format of the block. */
static double round_value(double v, const mpei_tc_out *o, int p, mpe_round r)
{
  if (v == 0 || isnan(v) || isinf(v))
    return v;
  int e;
  double f = frexp(fabs(v), &e);
  uint64_t mag = (uint64_t)ldexp(f, 53);
  return mpei_tc_round(v < 0, mag, e - 53, 0, p, o->emin, o->emax, r);
}

/* ------------------------------------------------------------------ engine */

static const struct mpe_format *in_fmt(const struct mpe_tc_model *m)
{
  return (const struct mpe_format *)mpe_format_of(m->p.in);
}

/* B's input format: `in`, or in_b for a mixed FP8 call */
static const struct mpe_format *in_fmt_b(const struct mpe_tc_model *m)
{
  return (const struct mpe_format *)mpe_format_of(m->p.in_b ? (mpe_type)m->p.in_b : m->p.in);
}

/* |x| = mag * 2^(e - (p - 1)) with e = max(floor(log2 |x|), emin): the
   significand of a subnormal is not renormalised. */
static inline void decode(double x, int p, int emin, uint64_t *mag, int *e)
{
  int ex = ilogb(x);
  if (ex < emin)
    ex = emin;
  *e = ex;
  *mag = (uint64_t)ldexp(fabs(x), p - 1 - ex);
}

/* Inf/NaN among the addends: returns 1 and sets *out when the result is special. */
static int specials(const double *a, const double *b, long bs, int k, double c, double *out)
{
  int nan = isnan(c), pinf = c == INFINITY, ninf = c == -INFINITY;
  for (int l = 0; l < k; l++) {
    double x = a[l], y = b[l * bs];
    if (isfinite(x) && isfinite(y))
      continue;
    if (isnan(x) || isnan(y) || x == 0 || y == 0) {
      nan = 1;
    } else if ((x < 0) != (y < 0)) {
      ninf = 1;
    } else {
      pinf = 1;
    }
  }
  if (nan || (pinf && ninf)) {
    *out = NAN;
    return 1;
  }
  if (pinf || ninf) {
    *out = pinf ? INFINITY : -INFINITY;
    return 1;
  }
  return 0;
}

static double block(const struct mpe_tc_model *m, const mpei_tc_out *o, const double *a,
                    const double *b, long bs, int n, double c);

/* fp16_split: the block as two binary16 blocks, the products at k mod 4 in
   {0, 1} with a +0 c, then those at k mod 4 in {2, 3} with the first's result
   as c, the FP8 operands read as the binary16 values they are; c is added to
   the second's result with one addition. The sum of two binary16 values is
   exact in binary64, so rounding it once is the correctly rounded sum. */
static double block_split(const struct mpe_tc_model *m, const mpei_tc_out *o, const double *a,
                          const double *b, long bs, int n, double c)
{
  enum { HMAX = 512 };   /* block <= 1024 */
  double ha[2][HMAX], hb[2][HMAX];
  int cnt[2] = { 0, 0 };
  for (int l = 0; l < n; l++) {
    const int h = (l & 3) >> 1;
    ha[h][cnt[h]] = a[l];
    hb[h][cnt[h]++] = b[l * bs];
  }
  struct mpe_tc_model mh;
  mpei_tc_split_model(m, &mh);
  mpei_tc_out oh = *o;
  oh.split = 0;
  double r = block(&mh, &oh, ha[0], hb[0], 1, cnt[0], 0.0);
  r = block(&mh, &oh, ha[1], hb[1], 1, cnt[1], r);
  return mpei_tc_split_add(o, r, c);
}

double mpei_tc_split_add(const mpei_tc_out *o, double r, double c)
{
  if (!isfinite(r) || !isfinite(c))
    return r + c;
  /* binary16 values are multiples of 2^-24 below 2^16: their sum times 2^24 is
     an exact integer below 2^41 */
  const double s = r + c;
  if (s == 0)
    return o->zero_sign ? 0.0 : s;
  const int64_t q = (int64_t)(s * 0x1p24);
  r = mpei_tc_round(q < 0, (uint64_t)(q < 0 ? -q : q), -24, 0, o->p, o->emin, o->emax, o->mode);
  return o->zero_sign && r == 0 ? 0.0 : r;
}

void mpei_tc_split_model(const struct mpe_tc_model *m, struct mpe_tc_model *h)
{
  *h = *m;
  h->p.in = MPE_FP16;
  h->p.in_b = 0;
  h->p.block = m->p.block / 2;
  h->p.align_bits = m->p.fp16_split;
  h->p.late_c = 0;
  h->p.fp16_split = 0;
}

/* One hardware block: n products and c. */
static double block(const struct mpe_tc_model *m, const mpei_tc_out *o, const double *a,
                    const double *b, long bs, int n, double c)
{
  if (o->split)
    return block_split(m, o, a, b, bs, n, c);
  if (m->p.late_c) {
    /* the products alone, then one binary64 addition of c: binary64 keeps
       more than 2p+2 bits, so rounding its sum to p bits (nearest-even) is
       the correctly rounded binary32/binary16 sum */
    double sp;
    if (specials(a, b, bs, n, 0.0, &sp))
      return sp + c;
    struct mpe_tc_model mp = *m;
    mpei_tc_out op = *o;
    mp.p.late_c = 0;
    op.zexp = MPEI_TC_ZERO_EXP;   /* the products alone */
    double r = block(&mp, &op, a, b, bs, n, 0.0);
    if (isnan(c) || isinf(c) || isinf(r))
      return r + c;
    r = round_value(r + c, o, o->p, MPE_RNE);
    return o->zero_sign && r == 0 ? 0.0 : r;
  }
  double sp;
  if (specials(a, b, bs, n, c, &sp))
    return sp;
  const struct mpe_format *fi = in_fmt(m), *fb = in_fmt_b(m);
  const int pin = fi->p, emin_in = fi->emin, F = m->p.align_bits;
  enum { NMAX = 1025 };
  uint64_t mag[NMAX];
  int ex[NMAX], neg[NMAX];
  int cnt = 0, have = 0, emax = 0;
  for (int l = 0; l < n; l++) {
    double x = a[l], y = b[l * bs];
    if (x == 0 || y == 0)
      continue;   /* a product with a zero factor drops out */
    uint64_t mx, my;
    int exx, exy;
    decode(x, pin, emin_in, &mx, &exx);
    decode(y, fb->p, fb->emin, &my, &exy);
    mag[cnt] = mx * my;
    ex[cnt] = exx + exy - (pin - 1) - (fb->p - 1);   /* value = mag * 2^ex */
    neg[cnt] = (x < 0) != (y < 0);
    if (!have || exx + exy > emax)
      emax = exx + exy;
    have = 1;
    cnt++;
  }
  if (c != 0 || o->zexp != MPEI_TC_ZERO_EXP) {
    uint64_t mc = 0;
    int ec = o->zexp;
    if (c != 0)
      decode(c, o->p, o->c_emin, &mc, &ec);
    if (!have || ec > emax)
      emax = ec;
    have = 1;
    mag[cnt] = mc;
    ex[cnt] = ec - (o->p - 1);
    neg[cnt] = c < 0;
    cnt++;
  }
  if (!have)
    return 0.0;
  const int q = emax - F;   /* addends are cut to multiples of 2^q */
  int64_t s = 0;
  for (int t = 0; t < cnt; t++) {
    int sh = ex[t] - q;
    uint64_t v;
    if (sh >= 0)
      v = mag[t] << sh;    /* below 2^(F+2): no overflow */
    else
      v = -sh >= 64 ? 0 : mag[t] >> -sh;
    s += neg[t] ? -(int64_t)v : (int64_t)v;
  }
  if (s == 0)
    return 0.0;   /* an exact zero from the fixed-point adder is +0 */
  int sneg = s < 0;
  uint64_t sm = sneg ? (uint64_t)0 - (uint64_t)s : (uint64_t)s;
  double r;
  if (o->result_bits)
    r = round_value(mpei_tc_round(sneg, sm, q, 0, o->result_bits + 1, o->emin, o->emax, MPE_RZ), o, o->p,
                    o->mode);
  else
    r = mpei_tc_round(sneg, sm, q, 0, o->p, o->emin, o->emax, o->mode);
  return o->zero_sign && r == 0 ? 0.0 : r;
}

/* The exact model: a fixed-point accumulator of 32-bit digits (in int64 for
   carries) spanning 2^-288 .. 2^352, enough for every product of the input
   formats, a binary32 c and 2^31 terms. */
enum { XBASE = -288, XDIG = 20 };

static void xadd(int64_t *acc, uint64_t mag, int ex, int neg)
{
  int pos = ex - XBASE;
  int d = pos >> 5, off = pos & 31;
  unsigned __int128 v = (unsigned __int128)mag << off;
  int64_t w0 = (int64_t)(uint32_t)v, w1 = (int64_t)(uint32_t)(v >> 32), w2 = (int64_t)(uint64_t)(v >> 64);
  if (neg) {
    acc[d] -= w0; acc[d + 1] -= w1; acc[d + 2] -= w2;
  } else {
    acc[d] += w0; acc[d + 1] += w1; acc[d + 2] += w2;
  }
}

static void xnorm(int64_t *acc)
{
  for (int i = 0; i < XDIG - 1; i++) {
    int64_t carry = acc[i] >> 32;   /* arithmetic: floor division */
    acc[i] -= carry * ((int64_t)1 << 32);
    acc[i + 1] += carry;
  }
}

static double exact_dot(const struct mpe_tc_model *m, const mpei_tc_out *o, const double *a,
                        const double *b, long bs, int k, double c)
{
  double sp;
  if (specials(a, b, bs, k, c, &sp))
    return sp;
  const struct mpe_format *fi = in_fmt(m), *fb = in_fmt_b(m);
  int64_t acc[XDIG];
  memset(acc, 0, sizeof acc);
  int all_negzero = signbit(c) && c == 0, any = 0;
  long pending = 0;
  for (int l = 0; l < k; l++) {
    double x = a[l], y = b[l * bs];
    if (x == 0 || y == 0) {
      if ((signbit(x) != 0) == (signbit(y) != 0))
        all_negzero = 0;
      continue;
    }
    all_negzero = 0;
    any = 1;
    uint64_t mx, my;
    int exx, exy;
    decode(x, fi->p, fi->emin, &mx, &exx);
    decode(y, fb->p, fb->emin, &my, &exy);
    xadd(acc, mx * my, exx + exy - (fi->p - 1) - (fb->p - 1), (x < 0) != (y < 0));
    if (++pending == (1L << 29)) {
      xnorm(acc);
      pending = 0;
    }
  }
  if (c != 0) {
    uint64_t mc;
    int ec;
    decode(c, o->p, o->emin, &mc, &ec);
    xadd(acc, mc, ec - (o->p - 1), c < 0);
    any = 1;
  }
  if (!any)   /* zero_sign: the sum starts from +0, so -0 addends alone give +0 */
    return all_negzero && !o->zero_sign ? -0.0 : 0.0;
  xnorm(acc);
  int neg = acc[XDIG - 1] < 0;
  if (neg) {
    /* negate the two's-complement number digit by digit */
    for (int i = 0; i < XDIG; i++)
      acc[i] = -acc[i];
    xnorm(acc);
  }
  int top = XDIG - 1;
  while (top >= 0 && acc[top] == 0)
    top--;
  if (top < 0)
    return 0.0;   /* exact cancellation: +0 under round-to-nearest */
  /* the 64 bits below the leading digit's top bit, and a sticky bit */
  int lz = __builtin_clzll((uint64_t)acc[top]) - 32;
  unsigned __int128 w = 0;
  int got = 0, i = top;
  while (i >= 0 && got < 96) {
    w = (w << 32) | (uint32_t)acc[i];
    got += 32;
    i--;
  }
  int sticky = 0;
  for (int t = i; t >= 0; t--)
    sticky |= acc[t] != 0;
  /* w holds `got` bits, the leading one at bit got-1-lz */
  int lead = got - 1 - lz;
  int shift = lead - 63;
  uint64_t mag;
  if (shift > 0) {
    sticky |= (w & (((unsigned __int128)1 << shift) - 1)) != 0;
    mag = (uint64_t)(w >> shift);
  } else {
    mag = (uint64_t)(w << -shift);
  }
  int ex = XBASE + 32 * (i + 1) + shift;
  return mpei_tc_round(neg, mag, ex, sticky, o->p, o->emin, o->emax, o->mode);
}

static double fma_chain(const mpei_tc_out *o, const double *a, const double *b, long bs, int k,
                        double c, int out16)
{
  float d = (float)c;
  for (int l = 0; l < k; l++)
    d = fmaf((float)a[l], (float)b[l * bs], d);
  if (!out16)
    return d;
  return round_value(d, o, o->p, o->mode);
}

/* ---- AMD CDNA2 and CDNA3 (mpe_tc_mfma) */

/* x with its subnormal magnitudes flushed: to +0 (keep 0) or to a zero of x's sign */
static inline double flush(double x, double tiny, int keep)
{
  return fabs(x) < tiny ? (keep ? x * 0.0 : 0.0) : x;
}

/* binary32 addition (nearest-even), a result below 2^-126 flushed (sign kept) */
static inline float add_ftz(float x, float y)
{
  return (float)flush((double)(x + y), 0x1p-126, 1);
}

/* CDNA2: the chain in steps of P = block products (the last step padded with +0) */
static double mfma_ftz(const struct mpe_tc_model *m, const double *a, const double *b, long bs, int k, double c)
{
  const double tiny = ldexp(1.0, in_fmt(m)->emin);
  const int P = m->p.block;
  float acc = (float)flush(c, 0x1p-126, 0);
  for (int l0 = 0; l0 < k; l0 += P) {
    float p[4] = { 0.0f, 0.0f, 0.0f, 0.0f };
    for (int q = 0; q < P && l0 + q < k; q++) {
      /* the product of two flushed operands, exact in binary64, rounded once */
      double x = flush(a[l0 + q], tiny, 0), y = flush(b[(long)(l0 + q) * bs], tiny, 0);
      p[q] = (float)flush((double)(float)(x * y), 0x1p-126, 1);
    }
    float s = add_ftz(p[0], p[1]);
    if (P == 4)
      s = add_ftz(s, add_ftz(p[2], p[3]));
    acc = add_ftz(acc, s);
  }
  return acc;
}

/* 2^e, -1022 <= e <= 1023 */
static inline double pow2i(int e)
{
  const uint64_t u = (uint64_t)(e + 1023) << 52;
  double d;
  memcpy(&d, &u, sizeof d);
  return d;
}

/* x = s * 2^e with 1 <= |s| < 2, or e = emin and |s| < 1 (subnormals, zero);
   x is zero or a normal binary64 value (every value of the engine's input
   and output formats is), emin >= -1022 */
static inline double sig_exp(double x, int emin, int *e)
{
  uint64_t u;
  memcpy(&u, &x, sizeof u);
  int ex = (int)((u >> 52) & 0x7ff) - 1023;
  if (x == 0 || ex < emin)
    ex = emin;
  *e = ex;
  return x * pow2i(-ex);
}

/* CDNA3: one block of n products and c (tc.h, MPE_TC_MFMA_TWO_STAGE and, for
   FP8, MPE_TC_MFMA_TWO_STAGE_SPLIT). Every step is exact in binary64: the cut
   sums of at most 64 products below 4 with F <= 40 fraction bits, the
   second-stage terms below 2^7 on a grid of 2^-(F2+1) (F2 <= 40). */
static double mfma_two_stage(const struct mpe_tc_model *m, const double *a, const double *b, long bs, int n,
                             double c)
{
  const struct mpe_format *fi = in_fmt(m), *fib = in_fmt_b(m);
  const int F = m->p.align_bits, F2 = m->p.result_bits, split = m->p.mfma == MPE_TC_MFMA_TWO_STAGE_SPLIT;
  /* inf and NaN, with a finite product of 2^128 or more taken as infinite */
  int nan = isnan(c), pinf = c == INFINITY, ninf = c == -INFINITY;
  double ps[64];
  int pe[64], pg[64], cnt = 0, gcnt[2] = { 0, 0 }, gmax[2] = { 0, 0 };
  for (int l = 0; l < n; l++) {
    const double x = a[l], y = b[(long)l * bs];
    int ex, ey;
    if (isnan(x) || isnan(y) || (isinf(x) && y == 0) || (isinf(y) && x == 0)) {
      nan = 1;
      continue;
    }
    const int neg = (signbit(x) != 0) != (signbit(y) != 0);
    if (isinf(x) || isinf(y)) {
      pinf |= !neg;
      ninf |= neg;
      continue;
    }
    if (x == 0 || y == 0)
      continue;   /* a zero product drops out */
    const double s = sig_exp(x, fi->emin, &ex) * sig_exp(y, fib->emin, &ey);
    if ((fabs(s) >= 2.0) + ex + ey >= 128) {
      pinf |= !neg;
      ninf |= neg;
      continue;
    }
    const int g = split ? l & 1 : 0;   /* the partial sum it joins: even or odd k (split) */
    if (!gcnt[g]++ || ex + ey > gmax[g])
      gmax[g] = ex + ey;
    ps[cnt] = s;
    pg[cnt] = g;
    pe[cnt++] = ex + ey;
  }
  if (nan || (pinf && ninf))
    return NAN;
  if (pinf || ninf)
    return pinf ? INFINITY : -INFINITY;
  /* stage 1: each partial sum's products cut toward zero at 2^(its emax - F)
     (pe - emax >= -600: no underflow); split, the two added at the larger
     emax, the other cut toward -inf there; a zero sum is +0 */
  double gs[2] = { 0.0, 0.0 };
  for (int t = 0; t < cnt; t++)
    gs[pg[t]] += trunc(ps[t] * pow2i(pe[t] - gmax[pg[t]] + F));
  const int emax = !gcnt[1] || (gcnt[0] && gmax[0] >= gmax[1]) ? gmax[0] : gmax[1];
  double sdot = 0.0;
  for (int g = 0; g < 2; g++)
    if (gcnt[g])
      sdot += floor(gs[g] * pow2i(gmax[g] - emax > -600 ? gmax[g] - emax : -600));
  sdot = sdot * pow2i(-F) + 0.0;
  /* stage 2: beside c, at the larger exponent E, both cut toward -inf */
  int ec;
  const double sc = sig_exp(c, -126, &ec);
  const int E = cnt && emax > ec ? emax : ec;
  const double d2 = cnt ? floor(sdot * pow2i(emax - E + F2 + 1)) * pow2i(-(F2 + 1)) : 0.0;
  /* split: a c more than F + 1 binades below E adds nothing (not even the -2^-F
     of its floor) */
  const double c2 = split && ec < E - F - 1 ? 0.0 : floor(sc * pow2i(ec - E + F)) * pow2i(-F);
  int ev;
  const double sv = sig_exp((d2 + c2) * pow2i(E), -126, &ev);
  /* stage 3: cut toward -inf to F2 fraction bits, rounded to nearest-even */
  return (double)(float)(floor(sv * pow2i(F2)) * pow2i(-F2) * pow2i(ev));
}

double mpei_tc_dot(const struct mpe_tc_model *m, const double *a, const double *b, long bs, int k,
                   double c, int out16)
{
  if (m->p.mfma == MPE_TC_MFMA_FTZ)
    return mfma_ftz(m, a, b, bs, k, c);
  if (m->p.mfma == MPE_TC_MFMA_TWO_STAGE || m->p.mfma == MPE_TC_MFMA_TWO_STAGE_SPLIT) {
    for (int l0 = 0; l0 < k; l0 += m->p.block)
      c = mfma_two_stage(m, a + l0, b + (long)l0 * bs, bs, k - l0 < m->p.block ? k - l0 : m->p.block, c);
    return c;
  }
  mpei_tc_out o;
  mpei_tc_out_of(m, out16, &o);
  switch (m->p.kind) {
  case MPE_TC_EXACT:
    if (m->p.block <= 0)
      return exact_dot(m, &o, a, b, bs, k, c);
    for (int l0 = 0; l0 < k; l0 += m->p.block)   /* blocks of L, each rounded (AMD CDNA1) */
      c = exact_dot(m, &o, a + l0, b + (long)l0 * bs, bs, k - l0 < m->p.block ? k - l0 : m->p.block, c);
    return c;
  case MPE_TC_FMA_CHAIN: return fma_chain(&o, a, b, bs, k, c, out16);
  case MPE_TC_ARM_BFDOT: return mpei_tc_arm_dot(m, a, b, bs, k, c);
  case MPE_TC_CPU_CHAIN: return mpei_tc_cpu_dot(m, a, b, bs, k, c);
  default: break;
  }
  const int L = m->p.block;
  for (int l0 = 0; l0 < k; l0 += L) {
    int n = k - l0 < L ? k - l0 : L;
    c = block(m, &o, a + l0, b + (long)l0 * bs, bs, n, c);
  }
  return c;
}

double mpei_tc_dot_c16(const struct mpe_tc_model *m, const double *a, const double *b, long bs, int k, double c)
{
  if (m->p.kind != MPE_TC_BLOCK || k == 0)
    return mpei_tc_dot(m, a, b, bs, k, c, 0);   /* c's exponent plays no part */
  mpei_tc_out o;
  mpei_tc_out_of(m, 0, &o);
  o.c_emin = -14;
  const int n = k < m->p.block ? k : m->p.block;
  c = block(m, &o, a, b, bs, n, c);
  return n < k ? mpei_tc_dot(m, a + n, b + (long)n * bs, bs, k - n, c, 0) : c;
}

/* ------------------------------------------------------------------ operands */

double mpei_tc_load(const struct mpe_tc_model *m, const void *base, mpe_type t, size_t idx)
{
  const struct mpe_format *fi = in_fmt(m);
  switch (t) {
  case MPE_FP16: case MPE_BF16: case MPE_E4M3: case MPE_E5M2: case MPE_E4M3FNUZ: case MPE_E5M2FNUZ: {
    uint32_t bits = mpei_type_fp8(t) ? ((const uint8_t *)base)[idx] : ((const uint16_t *)base)[idx];
    /* a packed operand in its own format (a mixed FP8 call: A's or B's) */
    return mpei_decode(bits, (const struct mpe_format *)mpe_format_of(t));
  }
  default: {   /* MPE_FP32, MPE_TF32: binary32 values through the input rule */
    float x = ((const float *)base)[idx];
    uint32_t u = mpei_f2u(x);
    if (m->p.tf32_nan && m->p.input_round == MPE_RZ && isnan(x)) {   /* the low 13 bits dropped first */
      u &= ~0x1fffu;
      x = mpei_u2f(u);
    }
    int snan = (u & 0x7f800000u) == 0x7f800000u && (u & 0x7fffffu) && !(u & 0x400000u);
    unsigned fl = 0;
    int sat = mpei_type_fp8(m->p.in) != 0;
    return mpei_round_ref((double)x, snan, fi, m->p.input_round, 0, sat, 0, &fl);
  }
  }
}

uint16_t mpei_tc_h_bits(double v)
{
  if (isnan(v))
    return 0x7fff;
  return (uint16_t)mpei_encode(v, (const struct mpe_format *)mpe_format_of(MPE_FP16));
}

float mpei_tc_f_canon(double v)
{
  return isnan(v) ? mpei_u2f(0x7fffffffu) : (float)v;
}
