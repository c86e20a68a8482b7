# emu/tc_int.mk: integer tensor cores (mpe_tc_int(3)) with their SIMD kernels,
# and quantisation (mpe_quant(3))
libmpemu_la_SOURCES += emu/tc_int.h emu/tc_int.c emu/tc_int_kernel.h
if HAVE_X86_SIMD
noinst_LTLIBRARIES += libmpemu_tcint_avx2.la libmpemu_tcint_avx512.la
libmpemu_tcint_avx2_la_SOURCES = emu/tc_int_avx2.c
libmpemu_tcint_avx2_la_CFLAGS = $(AM_CFLAGS) $(VISIBILITY_CFLAGS) $(AVX2_CFLAGS)
libmpemu_tcint_avx512_la_SOURCES = emu/tc_int_avx512.c
libmpemu_tcint_avx512_la_CFLAGS = $(AM_CFLAGS) $(VISIBILITY_CFLAGS) $(AVX512_CFLAGS)
libmpemu_la_LIBADD += libmpemu_tcint_avx2.la libmpemu_tcint_avx512.la
endif
EXTRA_DIST += emu/tc_int_kernel.h

libmpemu_la_SOURCES += emu/quant.c
