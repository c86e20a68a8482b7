# emu/tc_amd.mk: AMD CDNA matrix cores (v_mfma; mpe_tc_model_get(3)) with their
# SIMD kernels (tc_amd_kernel.h); the kernels' sums are the models' own: -ffp-contract=off (no
# a*b + c turned into an fma)
libmpemu_la_SOURCES += emu/tc_amd.h emu/tc_amd.c
if HAVE_X86_SIMD
noinst_LTLIBRARIES += libmpemu_tc_amd_avx2.la libmpemu_tc_amd_avx512.la
libmpemu_tc_amd_avx2_la_SOURCES = emu/tc_amd_avx2.c
libmpemu_tc_amd_avx2_la_CFLAGS = $(AM_CFLAGS) $(VISIBILITY_CFLAGS) $(AVX2_CFLAGS) -ffp-contract=off -Wno-psabi
libmpemu_tc_amd_avx512_la_SOURCES = emu/tc_amd_avx512.c
libmpemu_tc_amd_avx512_la_CFLAGS = $(AM_CFLAGS) $(VISIBILITY_CFLAGS) $(AVX512_CFLAGS) -ffp-contract=off -Wno-psabi
libmpemu_la_LIBADD += libmpemu_tc_amd_avx2.la libmpemu_tc_amd_avx512.la
endif
EXTRA_DIST += emu/tc_amd_kernel.h
