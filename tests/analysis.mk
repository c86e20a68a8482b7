# tests/analysis.mk: Check suites, script tests and benchmarks of analysis/ and
# the mpanalyze tool
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
# the constructor convention of <mpemu/core.h>, over every public constructor
check_PROGRAMS += tests/check_ctor
TESTS += tests/check_ctor
tests_check_ctor_SOURCES = tests/check_ctor.c
tests_check_ctor_CFLAGS = $(TEST_CFLAGS)
tests_check_ctor_LDADD = $(TEST_LDADD)
TESTS += tests/check_mpanalyze.sh
EXTRA_DIST += tests/check_mpanalyze.sh

# refinement, CG, test matrices and the Matrix Market reader
check_PROGRAMS += tests/check_matgen tests/check_ir tests/check_cg
TESTS += tests/check_matgen tests/check_ir tests/check_cg
SOLVERS_TEST_CFLAGS = $(TEST_CFLAGS) $(LAPACKE_CFLAGS) $(OPENBLAS_CFLAGS)
SOLVERS_TEST_LDADD = $(TEST_LDADD) $(LAPACKE_LIBS) $(OPENBLAS_LIBS)
tests_check_matgen_SOURCES = tests/check_matgen.c
tests_check_matgen_CFLAGS = $(SOLVERS_TEST_CFLAGS)
tests_check_matgen_LDADD = $(SOLVERS_TEST_LDADD)
tests_check_ir_SOURCES = tests/check_ir.c
tests_check_ir_CFLAGS = $(SOLVERS_TEST_CFLAGS)
tests_check_ir_LDADD = $(SOLVERS_TEST_LDADD)
tests_check_cg_SOURCES = tests/check_cg.c
tests_check_cg_CFLAGS = $(SOLVERS_TEST_CFLAGS)
tests_check_cg_LDADD = $(SOLVERS_TEST_LDADD)
EXTRA_DIST += tests/data/general.mtx tests/data/symmetric.mtx tests/data/skew.mtx \
	tests/data/pattern.mtx tests/data/array.mtx tests/data/array_sym.mtx tests/data/complex.mtx \
	tests/data/nan.mtx tests/data/bad_sizeline.mtx tests/data/bad_banner.mtx \
	tests/data/bad_symmetry.mtx tests/data/bad_index.mtx tests/data/bad_index0.mtx \
	tests/data/bad_truncated.mtx tests/data/bad_extra.mtx tests/data/bad_value.mtx \
	tests/data/bad_tokens.mtx tests/data/bad_upper.mtx tests/data/bad_huge.mtx \
	tests/data/bad_negative.mtx tests/data/bad_array_short.mtx tests/data/bad_symrect.mtx \
	tests/data/bad_binary.mtx tests/data/bad_empty.mtx

# update studies (the CLI part runs the built mpanalyze; MPANALYZE overrides the path)
check_PROGRAMS += tests/check_update
TESTS += tests/check_update
tests_check_update_SOURCES = tests/check_update.c
tests_check_update_CFLAGS = $(TEST_CFLAGS)
tests_check_update_LDADD = $(TEST_LDADD)
tests_check_update_CFLAGS += $(JANSSON_CFLAGS)
tests_check_update_LDADD += $(JANSSON_LIBS)

check_PROGRAMS += tests/check_train
TESTS += tests/check_train
tests_check_train_SOURCES = tests/check_train.c
tests_check_train_CFLAGS = $(TEST_CFLAGS)
tests_check_train_LDADD = $(TEST_LDADD)

# memory arithmetic, all-reduce, reduction order; the MPI ring against the
# emulation when Open MPI is there
check_PROGRAMS += tests/check_dist
TESTS += tests/check_dist tests/check_dist.sh
tests_check_dist_SOURCES = tests/check_dist.c
tests_check_dist_CFLAGS = $(TEST_CFLAGS)
tests_check_dist_LDADD = $(TEST_LDADD)
EXTRA_DIST += tests/check_dist.sh
if HAVE_MPI
TESTS += tests/check_mpi.sh
endif
EXTRA_DIST += tests/check_mpi.sh

bench_programs += tests/bench/bench_analysis
tests_bench_bench_analysis_SOURCES = tests/bench/bench_analysis.c
tests_bench_bench_analysis_LDADD = $(MPE_ANALYSIS_LIBS) $(LIBM)

bench_programs += tests/bench/bench_ir
tests_bench_bench_ir_SOURCES = tests/bench/bench_ir.c
tests_bench_bench_ir_CFLAGS = $(AM_CFLAGS) $(LAPACKE_CFLAGS) $(OPENBLAS_CFLAGS)
tests_bench_bench_ir_LDADD = $(MPE_SOLVERS_LIBS) $(LAPACKE_LIBS) $(OPENBLAS_LIBS) $(LIBM)

bench_programs += tests/bench/bench_train
tests_bench_bench_train_SOURCES = tests/bench/bench_train.c
tests_bench_bench_train_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_srcdir)/tests/bench
tests_bench_bench_train_LDADD = $(MPE_ANALYSIS_LIBS) $(LIBM)
