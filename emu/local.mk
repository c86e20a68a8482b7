# emu/: formats, the rounding core, scalar conversions, SIMD array kernels
# (the modules with their own kernels have their own fragments here: tc.mk,
# tc_int.mk, arith.mk, mx.mk)
libmpemu_la_SOURCES += emu/format.c emu/philox.c emu/round_ref.c \
	emu/convert.c emu/round_array.c emu/round_kernel.h emu/isa.c emu/isa.h
# One convenience library per instruction set holds the kernels built with
# that set's flags and nothing else: the module fragments included after this
# one (tc.mk, tc_int.mk, tc_f64.mk) append their kernel sources to it.
if HAVE_X86_SIMD
noinst_LTLIBRARIES += libmpemu_avx2.la libmpemu_avx512.la
libmpemu_avx2_la_SOURCES = emu/round_avx2.c
libmpemu_avx2_la_CFLAGS = $(AM_CFLAGS) $(VISIBILITY_CFLAGS) $(AVX2_CFLAGS)
libmpemu_avx512_la_SOURCES = emu/round_avx512.c
libmpemu_avx512_la_CFLAGS = $(AM_CFLAGS) $(VISIBILITY_CFLAGS) $(AVX512_CFLAGS)
libmpemu_la_LIBADD += libmpemu_avx2.la libmpemu_avx512.la
endif
