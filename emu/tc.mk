# emu/tc.mk: tensor-core models, mpe_mma / mpe_gemm and their kernels
libmpemu_la_SOURCES += emu/tc_impl.h emu/tc_model.c emu/tc_mma.c emu/tc_gemm.c emu/tc_kernel.h emu/tc_epilogue.h \
	emu/tc_pack.h emu/sparse_impl.h emu/sparse.c emu/tc_sparse.c
if HAVE_X86_SIMD
noinst_LTLIBRARIES += libmpemu_tc_avx2.la libmpemu_tc_avx512.la
libmpemu_tc_avx2_la_SOURCES = emu/tc_avx2.c
libmpemu_tc_avx2_la_CFLAGS = $(AM_CFLAGS) $(VISIBILITY_CFLAGS) $(AVX2_CFLAGS)
libmpemu_tc_avx512_la_SOURCES = emu/tc_avx512.c
libmpemu_tc_avx512_la_CFLAGS = $(AM_CFLAGS) $(VISIBILITY_CFLAGS) $(AVX512_CFLAGS)
libmpemu_la_LIBADD += libmpemu_tc_avx2.la libmpemu_tc_avx512.la
endif
EXTRA_DIST += emu/tc_kernel.h emu/tc_epilogue.h

check_PROGRAMS += tests/check_tc
TESTS += tests/check_tc
tests_check_tc_SOURCES = tests/check_tc.c
tests_check_tc_CFLAGS = $(TEST_CFLAGS)
tests_check_tc_LDADD = $(TEST_LDADD)

bench_programs += tests/bench/bench_gemm
tests_bench_bench_gemm_SOURCES = tests/bench/bench_gemm.c
tests_bench_bench_gemm_CFLAGS = $(AM_CFLAGS) $(OPENBLAS_CFLAGS)
tests_bench_bench_gemm_LDADD = libmpemu.la $(OPENBLAS_LIBS) $(LIBM)

noinst_PROGRAMS += examples/tc_lab
examples_tc_lab_SOURCES = examples/tc_lab.c
examples_tc_lab_LDADD = libmpemu.la $(LIBM)

dist_man_MANS += man/man3/mpe_mma.3 man/man3/mpe_gemm.3 man/man3/mpe_tc_model_get.3 \
	man/man3/mpe_tc_model_params.3 man/man3/mpe_tc_model_name.3 man/man3/mpe_tc_model_custom.3 \
	man/man3/mpe_tc_model_free.3 man/man3/mpe_prune_2_4.3 man/man3/mpe_sparse_compress.3 \
	man/man3/mpe_sparse_decompress.3 man/man3/mpe_sparse_kept.3 man/man3/mpe_sparse_meta_words.3 \
	man/man3/mpe_gemm_sp.3
EXTRA_DIST += examples/tc_lab.md
