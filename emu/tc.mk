# emu/tc.mk: tensor-core models, mpe_mma / mpe_gemm, 2:4 sparsity and their
# SIMD kernels
libmpemu_la_SOURCES += emu/tc_impl.h emu/tc_model.c emu/tc_mma.c emu/tc_gemm.c emu/tc_kernel.h emu/tc_epilogue.h \
	emu/tc_pack.h emu/sparse_impl.h emu/sparse.c emu/tc_sparse.c emu/tc_scaled.c emu/tc_cpu.c
if HAVE_X86_SIMD
noinst_LTLIBRARIES += libmpemu_tc_avx2.la libmpemu_tc_avx512.la
libmpemu_tc_avx2_la_SOURCES = emu/tc_avx2.c
libmpemu_tc_avx2_la_CFLAGS = $(AM_CFLAGS) $(VISIBILITY_CFLAGS) $(AVX2_CFLAGS)
libmpemu_tc_avx512_la_SOURCES = emu/tc_avx512.c
libmpemu_tc_avx512_la_CFLAGS = $(AM_CFLAGS) $(VISIBILITY_CFLAGS) $(AVX512_CFLAGS)
libmpemu_la_LIBADD += libmpemu_tc_avx2.la libmpemu_tc_avx512.la
endif
EXTRA_DIST += emu/tc_kernel.h emu/tc_epilogue.h
# the module's interface to the GPU path (gpu/gpu_host.c)
libmpemu_la_SOURCES += emu/tc_iface.h
