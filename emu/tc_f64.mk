# emu/tc_f64.mk: binary64 tensor cores (NVIDIA DMMA, AMD v_mfma_f64; mpe_mma(3)
# with MPE_FP64 operands) with their SIMD kernels
libmpemu_la_SOURCES += emu/tc_f64.h emu/tc_f64.c emu/tc_f64_kernel.h
if HAVE_X86_SIMD
libmpemu_avx2_la_SOURCES += emu/tc_f64_avx2.c
libmpemu_avx512_la_SOURCES += emu/tc_f64_avx512.c
endif
