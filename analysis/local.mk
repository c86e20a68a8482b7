# analysis/local.mk: tensor-file readers, range analysis, loss scalers, mpanalyze (issue 6)
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

# the tool
bin_PROGRAMS += mpanalyze
mpanalyze_SOURCES = analysis/mpanalyze/main.c analysis/mpanalyze/mpanalyze.h analysis/mpanalyze/common.c \
	analysis/mpanalyze/cmd_range.c analysis/mpanalyze/cmd_scale.c analysis/mpanalyze/plot.c \
	analysis/mpanalyze/cmd_refine.c analysis/mpanalyze/cmd_update.c
mpanalyze_CFLAGS = $(AM_CFLAGS) $(JANSSON_CFLAGS) $(PLPLOT_CFLAGS)
mpanalyze_LDADD = $(MPE_ANALYSIS_LIBS) $(JANSSON_LIBS) $(PLPLOT_LIBS) $(LIBM)

# tests
check_PROGRAMS += tests/check_io
TESTS += tests/check_io
tests_check_io_SOURCES = tests/check_io.c
tests_check_io_CFLAGS = $(TEST_CFLAGS)
tests_check_io_LDADD = $(TEST_LDADD)
check_PROGRAMS += tests/check_io_pt
TESTS += tests/check_io_pt
tests_check_io_pt_SOURCES = tests/check_io_pt.c
tests_check_io_pt_CFLAGS = $(TEST_CFLAGS)
tests_check_io_pt_LDADD = $(TEST_LDADD)
check_PROGRAMS += tests/check_range
TESTS += tests/check_range
tests_check_range_SOURCES = tests/check_range.c
tests_check_range_CFLAGS = $(TEST_CFLAGS)
tests_check_range_LDADD = $(TEST_LDADD)
check_PROGRAMS += tests/check_scaler
TESTS += tests/check_scaler
tests_check_scaler_SOURCES = tests/check_scaler.c
tests_check_scaler_CFLAGS = $(TEST_CFLAGS)
tests_check_scaler_LDADD = $(TEST_LDADD)
TESTS += tests/check_mpanalyze.sh tests/check_python.sh
EXTRA_DIST += tests/check_mpanalyze.sh tests/check_python.sh tests/data tests/fuzz \
	python/pyproject.toml python/setup.py python/README.md python/mpemu/__init__.py python/mpemu/_lib.py \
	python/mpemu/py.typed python/tests/test_mpemu.py

# the example that makes the demo's gradient dumps
noinst_PROGRAMS += examples/amp_dump
examples_amp_dump_SOURCES = examples/amp_dump.c
examples_amp_dump_CFLAGS = $(AM_CFLAGS) $(OPENBLAS_CFLAGS) $(GSL_CFLAGS)
examples_amp_dump_LDADD = $(MPE_ANALYSIS_LIBS) $(OPENBLAS_LIBS) $(GSL_LIBS) $(LIBM)

bench_programs += tests/bench/bench_analysis
tests_bench_bench_analysis_SOURCES = tests/bench/bench_analysis.c
tests_bench_bench_analysis_LDADD = $(MPE_ANALYSIS_LIBS) $(LIBM)

dist_man_MANS += man/man1/mpanalyze.1 man/man3/mpe_delayed_alloc.3 man/man3/mpe_delayed_update.3 man/man3/mpe_io_close.3 man/man3/mpe_io_info.3 man/man3/mpe_io_open.3 man/man3/mpe_io_read.3 man/man3/mpe_io_select.3 man/man3/mpe_io_skipped_info.3 man/man3/mpe_io_write_npy.3 man/man3/mpe_io_write_safetensors.3 man/man3/mpe_range_add_f32.3 man/man3/mpe_range_add_f32_pieces.3 man/man3/mpe_range_alloc.3 man/man3/mpe_range_alloc_targets.3 man/man3/mpe_range_merge.3 man/man3/mpe_range_target_get.3 man/man3/mpe_range_at_scale.3 man/man3/mpe_range_free.3 man/man3/mpe_range_histogram.3 man/man3/mpe_range_stats_get.3 man/man3/mpe_scaler_alloc.3 man/man3/mpe_scaler_free.3 man/man3/mpe_scaler_params_preset.3 man/man3/mpe_scaler_update.3 
TESTS += tests/check_doc_commands.sh tests/check_layers.sh
EXTRA_DIST += tests/check_doc_commands.sh tests/check_layers.sh
