/* The integer block kernel, one source for every SIMD width (included by
   tc_int_avx2.c and tc_int_avx512.c after they define VW, MR, NV and
   MADD(a, b): the 32-bit lane sums a.lo*b.lo + a.hi*b.hi of int16 halves).
   MR rows × NV*VW columns of int32 outputs; see tc_int.h for the layout. */
typedef int32_t vi __attribute__((vector_size(VW * 4), aligned(4)));
typedef uint32_t vu __attribute__((vector_size(VW * 4), aligned(4)));

static inline vi broadcast(int32_t x)
{
  vi v;
  for (int l = 0; l < VW; l++)
    v[l] = x;
  return v;
}

/* c + s clamped to the int32 range: the wrapped sum overflowed exactly when c
   and s share a sign that the sum does not. */
static inline vi sat_add(vi c, vi s)
{
  vi r = (vi)((vu)c + (vu)s);
  vi ovf = ((c ^ r) & (s ^ r)) >> 31;          /* -1 where it overflowed */
  vi lim = (c >> 31) ^ broadcast(INT32_MAX);   /* INT32_MAX, or INT32_MIN for c < 0 */
  return (r & ~ovf) | (lim & ovf);
}

static inline __attribute__((always_inline)) void int_kernel(const int32_t *ap, const int32_t *bp,
                                                             int32_t *c, long ldc, int nseg, int segp,
                                                             int sat)
{
  for (int sg = 0; sg < nseg; sg++) {
    vi s[MR][NV];
    for (int r = 0; r < MR; r++)
      for (int v = 0; v < NV; v++)
        s[r][v] = broadcast(0);
    for (int kp = 0; kp < segp; kp++) {
      vi b[NV];
      for (int v = 0; v < NV; v++)
        memcpy(&b[v], bp + (size_t)kp * NV * VW + v * VW, sizeof b[v]);
      for (int r = 0; r < MR; r++) {
        vi a = broadcast(ap[(size_t)kp * MR + r]);
        for (int v = 0; v < NV; v++)
          s[r][v] = (vi)((vu)s[r][v] + (vu)MADD(a, b[v]));
      }
    }
    ap += (size_t)segp * MR;
    bp += (size_t)segp * NV * VW;
    for (int r = 0; r < MR; r++)
      for (int v = 0; v < NV; v++) {
        vi cv;
        memcpy(&cv, c + r * ldc + v * VW, sizeof cv);
        cv = sat ? sat_add(cv, s[r][v]) : (vi)((vu)cv + (vu)s[r][v]);
        memcpy(c + r * ldc + v * VW, &cv, sizeof cv);
      }
  }
}
