/* The kernel table of each instruction set (see isa.h). */
#include "config.h"
#include "isa.h"

static const mpei_isa_kernels isa_portable = { "portable", NULL, NULL, NULL, NULL, NULL };
#ifdef HAVE_X86_SIMD
static const mpei_isa_kernels isa_avx2 = {
  "avx2", mpei_round32_avx2, mpei_ew_eval_avx2, mpei_ew_round_avx2, mpei_ew_exp_avx2, mpei_ew_fast32_avx2
};
static const mpei_isa_kernels isa_avx512 = {
  "avx512", mpei_round32_avx512, mpei_ew_eval_avx512, mpei_ew_round_avx512, mpei_ew_exp_avx512,
  mpei_ew_fast32_avx512
};
#endif

static const mpei_isa_kernels *const by_level[MPEI_SIMD_N] = {
  [MPEI_SIMD_NONE] = &isa_portable,
#ifdef HAVE_X86_SIMD
  [MPEI_SIMD_AVX2] = &isa_avx2,
  [MPEI_SIMD_AVX512] = &isa_avx512,
#endif
};

const mpei_isa_kernels *mpei_isa(void)
{
  const mpei_isa_kernels *k = by_level[mpei_simd_level()];
  return k ? k : &isa_portable;
}
