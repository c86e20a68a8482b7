/* The integer block kernel, one source for every SIMD width (included by
   tc_int_avx2.c and tc_int_avx512.c after they define VW, MR, ROWS(X) (X(0)
   ... X(MR-1)) and MADD(a, b): the 32-bit lane sums a.lo*b.lo + a.hi*b.hi of
   int16 halves). MR rows × 2*VW columns of int32 outputs; see tc_int.h for
   the layout. */
#include "mpei_vec.h"

/* c + s clamped to the int32 range: the wrapped sum overflowed exactly when c
   and s share a sign that the sum does not. */
static inline vi32 sat_add(vi32 c, vi32 s)
{
  vi32 r = (vi32)((vu32)c + (vu32)s);
  vi32 ovf = ((c ^ r) & (s ^ r)) >> 31;          /* -1 where it overflowed */
  vi32 lim = (c >> 31) ^ SPLAT(vi32, INT32_MAX);   /* INT32_MAX, or INT32_MIN for c < 0 */
  return (r & ~ovf) | (lim & ovf);
}

/* c = c + s (mod 2^32) or clamp(c + s), one vector of outputs */
static inline void fold(int32_t *c, vi32 s, int sat)
{
  vi32 cv = load_vi32(c);
  cv = sat ? sat_add(cv, s) : (vi32)((vu32)cv + (vu32)s);
  memcpy(c, &cv, sizeof cv);
}

/* Two vectors of columns (NB = 2 VW) per row; ROWS(X) expands X(r) for each of
   the MR rows, so that every accumulator is a named variable (a register). */
#define DECL(r) vi32 s##r##_0 = SPLAT(vi32, 0), s##r##_1 = SPLAT(vi32, 0);
#define STEP(r)                                                      \
  {                                                                  \
    vi32 a_ = SPLAT(vi32, ap[(size_t)kp * MR + (r)]);                    \
    s##r##_0 = (vi32)((vu32)s##r##_0 + (vu32)MADD(a_, b0));                \
    s##r##_1 = (vi32)((vu32)s##r##_1 + (vu32)MADD(a_, b1));                \
  }
#define SAVE(r) out[2 * (r)] = s##r##_0; out[2 * (r) + 1] = s##r##_1;

/* One segment, in a function of its own: GCC then keeps the 2*MR
   accumulators in registers (inlined into the segment loop it spilled them). */
static __attribute__((noinline)) void seg_kernel(const int32_t *ap, const int32_t *bp, int32_t *c, long ldc,
                                                 int segp, int sat)
{
  ROWS(DECL)
  for (int kp = 0; kp < segp; kp++) {
    vi32 b0 = load_vi32(bp + (size_t)kp * 2 * VW), b1 = load_vi32(bp + (size_t)kp * 2 * VW + VW);
    ROWS(STEP)
  }
  vi32 out[2 * MR];
  ROWS(SAVE)
  for (int r = 0; r < MR; r++) {
    fold(c + r * ldc, out[2 * r], sat);
    fold(c + r * ldc + VW, out[2 * r + 1], sat);
  }
}

static inline void int_kernel(const int32_t *ap, const int32_t *bp, int32_t *c, long ldc, int nseg, int segp,
                              int sat)
{
  for (int sg = 0; sg < nseg; sg++)
    seg_kernel(ap + (size_t)sg * segp * MR, bp + (size_t)sg * segp * 2 * VW, c, ldc, segp, sat);
}
