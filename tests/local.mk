# tests/: Check suites, the test-support library, benchmarks
check_LTLIBRARIES += tests/libtestsupport.la
tests_libtestsupport_la_SOURCES = tests/support/testsupport.c tests/support/testsupport.h \
	tests/support/boundary.c tests/support/boundary.h
tests_libtestsupport_la_CFLAGS = $(AM_CFLAGS) $(CHECK_CFLAGS) $(ZLIB_CFLAGS) -DMPE_SRCDIR='"$(abs_top_srcdir)"'
tests_libtestsupport_la_LIBADD = $(MPE_ANALYSIS_LIBS) $(CHECK_LIBS) $(MPFR_LIBS) $(ZLIB_LIBS) $(LIBM)
TEST_LDADD = tests/libtestsupport.la $(MPE_ANALYSIS_LIBS) $(CHECK_LIBS) $(MPFR_LIBS) $(LIBM)
TEST_CFLAGS = $(AM_CFLAGS) $(CHECK_CFLAGS) -I$(top_srcdir)/tests/support -DMPE_SRCDIR='"$(abs_top_srcdir)"'
# the reference data (tests/conformance/README.md): the tests read them from the source tree
EXTRA_DIST += tests/conformance
AM_TESTS_ENVIRONMENT = MPE_SRCDIR='$(abs_top_srcdir)'; export MPE_SRCDIR; CK_DEFAULT_TIMEOUT=1200; export CK_DEFAULT_TIMEOUT;

check_PROGRAMS += tests/check_core
TESTS += tests/check_core
tests_check_core_SOURCES = tests/check_core.c
tests_check_core_CFLAGS = $(TEST_CFLAGS)
tests_check_core_LDADD = $(TEST_LDADD)

# make bench: every row a ratio to a reference measured in the same run
bench_programs += tests/bench/bench_round
EXTRA_PROGRAMS += $(bench_programs)
tests_bench_bench_round_SOURCES = tests/bench/bench_round.c tests/bench/benchutil.h
tests_bench_bench_round_CFLAGS = $(AM_CFLAGS) $(AVX2_CFLAGS)
tests_bench_bench_round_LDADD = libmpemu.la $(LIBM)
CLEANFILES += $(bench_programs)

bench: $(bench_programs)
	@for b in $(bench_programs); do ./$$b || exit 1; done
.PHONY: bench

check_PROGRAMS += tests/check_convert tests/check_round
TESTS += tests/check_convert tests/check_round
tests_check_convert_SOURCES = tests/check_convert.c
tests_check_convert_CFLAGS = $(TEST_CFLAGS)
tests_check_convert_LDADD = $(TEST_LDADD)
tests_check_round_SOURCES = tests/check_round.c
tests_check_round_CFLAGS = $(TEST_CFLAGS)
tests_check_round_LDADD = $(TEST_LDADD)

# boundary cases of every fast kernel against exact references (GMP, MPFR)
check_PROGRAMS += tests/check_boundary
TESTS += tests/check_boundary
tests_check_boundary_SOURCES = tests/check_boundary.c
tests_check_boundary_CFLAGS = $(TEST_CFLAGS)
tests_check_boundary_LDADD = $(TEST_LDADD)

# 2:4 structured sparsity: prune, compress/decompress, the sparse GEMM model
check_PROGRAMS += tests/check_sparse
TESTS += tests/check_sparse
tests_check_sparse_SOURCES = tests/check_sparse.c
tests_check_sparse_CFLAGS = $(TEST_CFLAGS)
tests_check_sparse_LDADD = $(TEST_LDADD)
