# emu/tc_int.mk: integer tensor cores (mpe_tc_int(3)) with their SIMD kernels,
# and quantisation (mpe_quant(3))
libmpemu_la_SOURCES += emu/tc_int.h emu/tc_int.c emu/tc_int_kernel.h
if HAVE_X86_SIMD
libmpemu_avx2_la_SOURCES += emu/tc_int_avx2.c
libmpemu_avx512_la_SOURCES += emu/tc_int_avx512.c
endif

libmpemu_la_SOURCES += emu/quant.c
