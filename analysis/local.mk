# analysis/: libmpemu-analysis. This fragment: the tensor-file readers, range
# analysis with its SIMD kernels, loss scalers; the other modules have their
# own fragments here (solvers.mk, train.mk, dist.mk), the CLI its own in
# analysis/mpanalyze/local.mk
libmpemu_analysis_la_SOURCES += analysis/io.c analysis/io_member.c analysis/io_pt.c analysis/io_text.c analysis/io_write.c analysis/io_internal.h \
	analysis/range.c analysis/range_internal.h analysis/scaler.c
if HAVE_X86_SIMD
noinst_LTLIBRARIES += libmpemu_range_avx2.la libmpemu_range_avx512.la
libmpemu_range_avx2_la_SOURCES = analysis/range_avx2.c analysis/range_kernel.h analysis/range_internal.h
libmpemu_range_avx2_la_CFLAGS = $(AM_CFLAGS) $(VISIBILITY_CFLAGS) $(AVX2_CFLAGS)
libmpemu_range_avx512_la_SOURCES = analysis/range_avx512.c analysis/range_kernel.h analysis/range_internal.h
libmpemu_range_avx512_la_CFLAGS = $(AM_CFLAGS) $(VISIBILITY_CFLAGS) $(AVX512_CFLAGS)
libmpemu_analysis_la_LIBADD += libmpemu_range_avx2.la libmpemu_range_avx512.la
endif
