# emu/tc.mk: tensor-core models, mpe_mma / mpe_gemm, 2:4 sparsity and their
# SIMD kernels
libmpemu_la_SOURCES += emu/tc_impl.h emu/tc_model.c emu/tc_mma.c emu/tc_gemm.c emu/tc_kernel.h emu/tc_epilogue.h \
	emu/tc_pack.h emu/tc_drive.h emu/tc_drive.c emu/sparse_impl.h emu/sparse.c emu/tc_sparse.c emu/tc_scaled.c emu/tc_cpu.c emu/tc_fp4.h
if HAVE_X86_SIMD
libmpemu_avx2_la_SOURCES += emu/tc_avx2.c
libmpemu_avx512_la_SOURCES += emu/tc_avx512.c
endif
EXTRA_DIST += emu/tc_kernel.h emu/tc_epilogue.h emu/tc_fp4_kernel.h emu/tc_entry.h emu/tc_exp16.h
# the module's interface to the GPU path (gpu/gpu_host.c)
libmpemu_la_SOURCES += emu/tc_iface.h
# Arm BF16 dot products (emu/tc_arm.c) and their SIMD kernel (tc_arm_kernel.h): the
# error-free sums need -ffp-contract=off (no a*b + c turned into an fma)
noinst_LTLIBRARIES += libmpemu_tc_arm.la
libmpemu_tc_arm_la_SOURCES = emu/tc_arm.c emu/tc_arm_kernel_api.h
libmpemu_tc_arm_la_CFLAGS = $(AM_CFLAGS) $(VISIBILITY_CFLAGS) -ffp-contract=off
libmpemu_la_LIBADD += libmpemu_tc_arm.la
if HAVE_X86_SIMD
noinst_LTLIBRARIES += libmpemu_tc_arm_avx2.la libmpemu_tc_arm_avx512.la
libmpemu_tc_arm_avx2_la_SOURCES = emu/tc_arm_avx2.c emu/tc_arm_kernel.h
libmpemu_tc_arm_avx2_la_CFLAGS = $(AM_CFLAGS) $(VISIBILITY_CFLAGS) $(AVX2_CFLAGS) -ffp-contract=off -Wno-psabi
libmpemu_tc_arm_avx512_la_SOURCES = emu/tc_arm_avx512.c emu/tc_arm_kernel.h
libmpemu_tc_arm_avx512_la_CFLAGS = $(AM_CFLAGS) $(VISIBILITY_CFLAGS) $(AVX512_CFLAGS) -ffp-contract=off -Wno-psabi
libmpemu_la_LIBADD += libmpemu_tc_arm_avx2.la libmpemu_tc_arm_avx512.la
endif
