/* AVX2 build of the tensor-core kernels (compiled with AVX2_CFLAGS). */
#include "config.h"
#include "isa_avx2.h"
#include "tc_impl.h"
#define VW 8
#define MR MPEI_TC_AVX2_MR
#define MRF MPEI_TC_AVX2_MRF
#define MRS MPEI_TC_AVX2_MRS
#define MRFS MPEI_TC_AVX2_MRFS
/* lane-wise int16 maximum (AVX-512 BW / AVX2) */
#define TC_MAX_EPI16(a, b) ((__typeof__(a))_mm256_max_epi16((__m256i)(a), (__m256i)(b)))
/* binary32 lanes to binary16 bits, nearest-even; and rounded to binary16 values */
#define TC_CVTPS_PH(x) _mm256_cvtps_ph((__m256)(x), _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC)
#define TC_RNE16(x) ((__typeof__(x))MPEI_CVTPH_PS(TC_CVTPS_PH(x)))
#include "tc_kernel.h"
#include "tc_epilogue.h"
#include "tc_fp4.h"
#define MR4 MPEI_TC_FP4_AVX2_MR
#define TC_TRUNC_PS(x) ((__typeof__(x))_mm256_round_ps((__m256)(x), _MM_FROUND_TO_ZERO | _MM_FROUND_NO_EXC))
#include "tc_fp4_kernel.h"

#define TC_ISA avx2
#include "tc_entry.h"
