/* The vector types and lane macros of the kernel templates (round,
   element-wise, tensor-core and range kernels), on GCC's vector extensions
   (GCC and clang). Included after an instruction-set header (lib/isa_*.h),
   which sets the register width MPEI_VBYTES.

   A type is named by its size and its lanes: v (one register), h (half a
   register) or w (two registers), then the element type: f32, f64 (floating
   point), i16, i32, i64 (signed), u16, u32, u64 (unsigned). With AVX2 (32-byte
   registers) vf32 is 8 binary32 lanes, vf64 4 binary64 lanes, hf32 4 and wf64
   8. A comparison of two vectors gives the signed type of their size and
   lanes: all ones where true, zero where false. */
#ifndef MPEI_VEC_H
#define MPEI_VEC_H
#include <stdint.h>
#include <string.h>

#define MPEI_VEC_(T, bytes) T __attribute__((vector_size(bytes)))
typedef MPEI_VEC_(float, MPEI_VBYTES) vf32;
typedef MPEI_VEC_(double, MPEI_VBYTES) vf64;
typedef MPEI_VEC_(int16_t, MPEI_VBYTES) vi16;
typedef MPEI_VEC_(int32_t, MPEI_VBYTES) vi32;
typedef MPEI_VEC_(int64_t, MPEI_VBYTES) vi64;
typedef MPEI_VEC_(uint16_t, MPEI_VBYTES) vu16;
typedef MPEI_VEC_(uint32_t, MPEI_VBYTES) vu32;
typedef MPEI_VEC_(uint64_t, MPEI_VBYTES) vu64;
typedef MPEI_VEC_(float, MPEI_VBYTES / 2) hf32;
typedef MPEI_VEC_(int32_t, MPEI_VBYTES / 2) hi32;
typedef MPEI_VEC_(uint16_t, MPEI_VBYTES / 2) hu16;
typedef MPEI_VEC_(uint32_t, MPEI_VBYTES / 2) hu32;
typedef MPEI_VEC_(float, MPEI_VBYTES * 2) wf32;
typedef MPEI_VEC_(double, MPEI_VBYTES * 2) wf64;
typedef MPEI_VEC_(int32_t, MPEI_VBYTES * 2) wi32;
typedef MPEI_VEC_(int64_t, MPEI_VBYTES * 2) wi64;
typedef MPEI_VEC_(uint32_t, MPEI_VBYTES * 2) wu32;
#undef MPEI_VEC_

/* every lane x, as type T (x - 0 rather than 0 + x: a binary -0 stays -0) */
#define SPLAT(T, x) ((__typeof__(((T){})[0]))(x) - (T){})
/* lane-wise m ? a : b, bit by bit, as type T (integer lanes): m a mask, a and
   b vectors, each of T's size (any lanes); a floating-point select is a
   cast of an integer one, (vf64)SEL(vu64, m, a, b) */
#define SEL(T, m, a, b) ((T)(((T)(m) & (T)(a)) | (~(T)(m) & (T)(b))))

/* a vector read from p, which need not be aligned */
#define MPEI_VEC_LOAD_(T, E) \
  static inline __attribute__((always_inline)) T load_##T(const E *p) { T v; memcpy(&v, p, sizeof v); return v; }
MPEI_VEC_LOAD_(vf32, float)
MPEI_VEC_LOAD_(vf64, double)
MPEI_VEC_LOAD_(vi32, int32_t)
MPEI_VEC_LOAD_(hf32, float)
#undef MPEI_VEC_LOAD_
#endif
