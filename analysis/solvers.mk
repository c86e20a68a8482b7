# analysis/solvers.mk: mixed-precision LU, LU-IR, GMRES-IR, test matrices, reliable-update CG
libmpemu_analysis_la_SOURCES += analysis/ir_internal.h analysis/matgen.c analysis/mmio.c analysis/ir_lu.c analysis/ir.c \
	analysis/cg.c

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

# the refine and cg subcommands (analysis/mpanalyze/cmd_refine.c) are built into mpanalyze: see analysis/local.mk

bench_programs += tests/bench/bench_ir
tests_bench_bench_ir_SOURCES = tests/bench/bench_ir.c
tests_bench_bench_ir_CFLAGS = $(AM_CFLAGS) $(LAPACKE_CFLAGS) $(OPENBLAS_CFLAGS)
tests_bench_bench_ir_LDADD = $(MPE_ANALYSIS_LIBS) $(LAPACKE_LIBS) $(OPENBLAS_LIBS) $(LIBM)

dist_man_MANS += man/man3/mpe_ir_solve.3 man/man3/mpe_ir_opts_init.3 man/man3/mpe_ir_solve_cusolver.3 man/man3/mpe_gpu_ir_solve.3 \
	man/man3/mpe_ir_lu.3 man/man3/mpe_ir_lu_solve.3 man/man3/mpe_ir_default_block.3 \
	man/man3/mpe_cg_solve.3 man/man3/mpe_cg_opts_init.3 man/man3/mpe_cg_apply.3 \
	man/man3/mpe_cg_op_order.3 man/man3/mpe_mat_randsvd.3 man/man3/mpe_mat_hilbert.3 \
	man/man3/mpe_mat_laplace.3 man/man3/mpe_mat_dominant.3 man/man3/mpe_csr_alloc.3 \
	man/man3/mpe_csr_free.3 man/man3/mpe_csr_laplace.3 man/man3/mpe_csr_to_dense.3 \
	man/man3/mpe_mtx_read.3 \
	man/man3/mpe_mtx_size.3

noinst_PROGRAMS += examples/refine_lab
examples_refine_lab_SOURCES = examples/refine_lab.c
examples_refine_lab_LDADD = $(MPE_ANALYSIS_LIBS) $(LIBM)
EXTRA_DIST += examples/refine_lab.md
