# analysis/range/: range analysis with its SIMD kernels (lib/mpemu/range.h),
# loss scalers (scaler.h) and master-weight update studies (update.h)
libmpemu_analysis_la_SOURCES += analysis/range/range.c analysis/range/range_internal.h analysis/range/scaler.c \
	analysis/range/update.c
if HAVE_X86_SIMD
noinst_LTLIBRARIES += libmpemu_range_avx2.la libmpemu_range_avx512.la
libmpemu_range_avx2_la_SOURCES = analysis/range/range_avx2.c analysis/range/range_kernel.h analysis/range/range_internal.h
libmpemu_range_avx2_la_CFLAGS = $(AM_CFLAGS) $(VISIBILITY_CFLAGS) $(AVX2_CFLAGS)
libmpemu_range_avx512_la_SOURCES = analysis/range/range_avx512.c analysis/range/range_kernel.h \
	analysis/range/range_internal.h
libmpemu_range_avx512_la_CFLAGS = $(AM_CFLAGS) $(VISIBILITY_CFLAGS) $(AVX512_CFLAGS)
libmpemu_analysis_la_LIBADD += libmpemu_range_avx2.la libmpemu_range_avx512.la
endif
# the range report over files (lib/mpemu/report.h, mpe_report_run(3)): the
# feed pipeline, parts, the ranks' merge, scratch files, JSON and text
libmpemu_analysis_la_SOURCES += analysis/range/feed.c analysis/range/report.c
