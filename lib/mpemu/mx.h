/* mpemu — block-scaled arrays: the OCP Microscaling (MX) formats and NVFP4.
   See mpe_mx(3). */
#ifndef MPEMU_MX_H
#define MPEMU_MX_H
#include "mpemu/format.h"
#ifdef __cplusplus
extern "C" {
#endif

/* A block-scaled format: blocks of elements that share one scale. */
typedef enum {
  MPE_MXFP8_E4M3, /* 32 E4M3 elements, E8M0 scale */
  MPE_MXFP8_E5M2, /* 32 E5M2 elements, E8M0 scale */
  MPE_MXFP6_E2M3, /* 32 FP6 E2M3 elements, E8M0 scale */
  MPE_MXFP6_E3M2, /* 32 FP6 E3M2 elements, E8M0 scale */
  MPE_MXFP4,      /* 32 FP4 E2M1 elements, E8M0 scale */
  MPE_MXINT8,     /* 32 int8 elements, E8M0 scale: not implemented (MPE_EUNSUP) */
  MPE_NVFP4       /* 16 FP4 E2M1 elements, E4M3 scale (no per-tensor scale) */
} mpe_mx_kind;
#define MPE_NMX 7

/* Facts: elements per block, element and scale types (MPE_E8M0 or MPE_E4M3);
   0 / -1 for an unknown kind. */
MPE_API int mpe_mx_block(mpe_mx_kind k);
MPE_API int mpe_mx_element_type(mpe_mx_kind k);
MPE_API int mpe_mx_scale_type(mpe_mx_kind k);
/* "mxfp8_e4m3"|"mxfp8", "mxfp8_e5m2", "mxfp6_e2m3"|"mxfp6", "mxfp6_e3m2", "mxfp4", "mxint8",
   "nvfp4" and back (case-insensitive); NULL / -1 when unknown. */
MPE_API const char *mpe_mx_name(mpe_mx_kind k);
MPE_API int mpe_mx_lookup(const char *name);

/* Quantise n binary32 values: x[i] becomes element code elem[i] (one code per
   byte, in the low bits) of block i / block, whose scale code is
   scale[i / block]; the last block may be short (ceil(n / block) scales).
   MX kinds: scale 2^(floor(log2(amax)) - emax_elem) clamped to 2^-127..2^127,
   amax the largest |x| of the block (2^-127 for an all-zero block); a block
   holding a NaN or an infinity gets the NaN scale 0xFF and zero elements.
   NVFP4: scale amax / 6 rounded to E4M3 (nearest-even, saturating); a block
   whose scale is zero gets zero elements; a block with a NaN or infinity gets
   the E4M3 NaN scale 0x7F and zero elements. Elements: x / scale rounded to
   the element format with o->round (default nearest-even; the stochastic modes
   use element index o->offset + i), always saturating to the largest finite
   element; o->saturate and o->flush_subnormals are ignored. Raises the sticky
   flags of the element roundings. MPE_EINVAL for NULL pointers with n > 0, an
   unknown kind or mode; MPE_EUNSUP for MPE_MXINT8. */
MPE_API int mpe_mx_quantize_f32(uint8_t *elem, uint8_t *scale, const float *x, size_t n,
                                mpe_mx_kind k, const mpe_round_opts *o);
/* y[i] = element value * scale value, rounded to binary32 (exact for every
   block mpe_mx_quantize_f32 makes; a NaN scale gives NaN). Codes are masked
   to the element width. Same errors. */
MPE_API int mpe_mx_dequantize_f32(float *y, const uint8_t *elem, const uint8_t *scale, size_t n,
                                  mpe_mx_kind k);

#ifdef __cplusplus
}
#endif
#endif
