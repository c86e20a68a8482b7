/* SLEEF vector loops over binary64 arrays, written once and compiled per
   instruction set (elementwise_avx2.c, elementwise_avx512.c). The tail is
   padded with zeros so every element goes through the same vector code. */
#include <string.h>

#define EW_LOOP(fname, sleeffn)                                   \
  void fname(double *y, const double *x, size_t n)                \
  {                                                               \
    size_t i = 0;                                                 \
    for (; i + VW <= n; i += VW)                                  \
      VSTORE(y + i, sleeffn(VLOAD(x + i)));                       \
    if (i < n) {                                                  \
      double buf[VW] = { 0 };                                     \
      memcpy(buf, x + i, (n - i) * sizeof(double));               \
      VSTORE(buf, sleeffn(VLOAD(buf)));                           \
      memcpy(y + i, buf, (n - i) * sizeof(double));               \
    }                                                             \
  }
