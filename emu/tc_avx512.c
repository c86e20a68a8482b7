/* AVX-512 build of the tensor-core kernels (compiled with AVX512_CFLAGS). */
#include "config.h"
#include "isa_avx512.h"
#include "tc_impl.h"
#define VW 16
#define MR MPEI_TC_AVX512_MR
#define MRF MPEI_TC_AVX512_MRF
#define MRS MPEI_TC_AVX512_MRS
#define MRFS MPEI_TC_AVX512_MRFS
#define AVX512_BLOCK_END 1
/* lane-wise int16 maximum (AVX-512 BW / AVX2) */
#define TC_MAX_EPI16(a, b) ((__typeof__(a))_mm512_max_epi16((__m512i)(a), (__m512i)(b)))
/* binary32 lanes to binary16 bits, nearest-even; and rounded to binary16 values */
#define TC_CVTPS_PH(x) _mm512_cvtps_ph((__m512)(x), _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC)
#define TC_RNE16(x) ((__typeof__(x))MPEI_CVTPH_PS(TC_CVTPS_PH(x)))
#include "tc_kernel.h"
#include "tc_epilogue.h"
#include "tc_fp4.h"
#define MR4 MPEI_TC_FP4_AVX512_MR
#define TC_TRUNC_PS(x) ((__typeof__(x))_mm512_roundscale_ps((__m512)(x), _MM_FROUND_TO_ZERO | _MM_FROUND_NO_EXC))
#include "tc_fp4_kernel.h"

#define TC_ISA avx512
#include "tc_entry.h"
