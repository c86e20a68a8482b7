# emu/arith.mk: correctly rounded FP16/BF16 arithmetic, 16-bit fixed point,
# element-wise array functions and their SIMD kernels
libmpemu_la_SOURCES += emu/arith.c emu/fixed.c

libmpemu_la_SOURCES += emu/arith_ro.h emu/elementwise.c emu/elementwise.h emu/elementwise_kernel.h
if HAVE_X86_SIMD
noinst_LTLIBRARIES += libmpemu_ew_avx2.la libmpemu_ew_avx512.la
libmpemu_ew_avx2_la_SOURCES = emu/elementwise_avx2.c
libmpemu_ew_avx2_la_CFLAGS = $(AM_CFLAGS) $(VISIBILITY_CFLAGS) $(SLEEF_CFLAGS) $(AVX2_CFLAGS) -ffp-contract=off
libmpemu_ew_avx512_la_SOURCES = emu/elementwise_avx512.c
libmpemu_ew_avx512_la_CFLAGS = $(AM_CFLAGS) $(VISIBILITY_CFLAGS) $(SLEEF_CFLAGS) $(AVX512_CFLAGS) -ffp-contract=off
libmpemu_la_LIBADD += libmpemu_ew_avx2.la libmpemu_ew_avx512.la
endif
