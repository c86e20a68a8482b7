# tests/emu.mk: Check suites and benchmarks of lib/ and emu/
check_PROGRAMS += tests/check_core
TESTS += tests/check_core
tests_check_core_SOURCES = tests/check_core.c
tests_check_core_CFLAGS = $(TEST_CFLAGS)
tests_check_core_LDADD = $(TEST_LDADD)

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

check_PROGRAMS += tests/check_arith
TESTS += tests/check_arith
tests_check_arith_SOURCES = tests/check_arith.c
tests_check_arith_CFLAGS = $(TEST_CFLAGS)
tests_check_arith_LDADD = $(TEST_LDADD)

check_PROGRAMS += tests/check_fixed
TESTS += tests/check_fixed
tests_check_fixed_SOURCES = tests/check_fixed.c
tests_check_fixed_CFLAGS = $(TEST_CFLAGS)
tests_check_fixed_LDADD = $(TEST_LDADD)

check_PROGRAMS += tests/check_elementwise
TESTS += tests/check_elementwise
tests_check_elementwise_SOURCES = tests/check_elementwise.c
tests_check_elementwise_CFLAGS = $(TEST_CFLAGS)
tests_check_elementwise_LDADD = $(TEST_LDADD)

check_PROGRAMS += tests/check_tc
TESTS += tests/check_tc
tests_check_tc_SOURCES = tests/check_tc.c
tests_check_tc_CFLAGS = $(TEST_CFLAGS)
tests_check_tc_LDADD = $(TEST_LDADD)

check_PROGRAMS += tests/check_tc_int
TESTS += tests/check_tc_int
tests_check_tc_int_SOURCES = tests/check_tc_int.c
tests_check_tc_int_CFLAGS = $(TEST_CFLAGS)
tests_check_tc_int_LDADD = $(TEST_LDADD)

check_PROGRAMS += tests/check_quant
TESTS += tests/check_quant
tests_check_quant_SOURCES = tests/check_quant.c
tests_check_quant_CFLAGS = $(TEST_CFLAGS)
tests_check_quant_LDADD = $(TEST_LDADD)

# 2:4 structured sparsity: prune, compress/decompress, the sparse GEMM model
check_PROGRAMS += tests/check_sparse
TESTS += tests/check_sparse
tests_check_sparse_SOURCES = tests/check_sparse.c
tests_check_sparse_CFLAGS = $(TEST_CFLAGS)
tests_check_sparse_LDADD = $(TEST_LDADD)

check_PROGRAMS += tests/check_mx
TESTS += tests/check_mx
tests_check_mx_SOURCES = tests/check_mx.c
tests_check_mx_CFLAGS = $(TEST_CFLAGS)
tests_check_mx_LDADD = $(TEST_LDADD)

bench_programs += tests/bench/bench_round
tests_bench_bench_round_SOURCES = tests/bench/bench_round.c tests/bench/benchutil.h
tests_bench_bench_round_CFLAGS = $(AM_CFLAGS) $(AVX2_CFLAGS)
tests_bench_bench_round_LDADD = libmpemu.la $(LIBM)

bench_programs += tests/bench/bench_elementwise
tests_bench_bench_elementwise_SOURCES = tests/bench/bench_elementwise.c tests/bench/benchutil.h
tests_bench_bench_elementwise_CFLAGS = $(AM_CFLAGS)
tests_bench_bench_elementwise_LDADD = libmpemu.la $(LIBM)

bench_programs += tests/bench/bench_gemm
tests_bench_bench_gemm_SOURCES = tests/bench/bench_gemm.c
tests_bench_bench_gemm_CFLAGS = $(AM_CFLAGS) $(OPENBLAS_CFLAGS)
tests_bench_bench_gemm_LDADD = libmpemu.la $(OPENBLAS_LIBS) $(LIBM)

bench_programs += tests/bench/bench_tc_int
tests_bench_bench_tc_int_SOURCES = tests/bench/bench_tc_int.c
tests_bench_bench_tc_int_CFLAGS = $(AM_CFLAGS) $(OPENBLAS_CFLAGS)
tests_bench_bench_tc_int_LDADD = libmpemu.la $(OPENBLAS_LIBS) $(LIBM)

# FP64 tensor cores and AMD's matrix cores: the fma chain, reproducers, argument rules
check_PROGRAMS += tests/check_tc_wide
TESTS += tests/check_tc_wide
tests_check_tc_wide_SOURCES = tests/check_tc_wide.c
tests_check_tc_wide_CFLAGS = $(TEST_CFLAGS)
tests_check_tc_wide_LDADD = $(TEST_LDADD)

# block-scaled tensor cores (mpe_mma_scaled, mpe_gemm_scaled): MMA-Sim vectors, MPFR oracle
check_PROGRAMS += tests/check_tc_scaled
TESTS += tests/check_tc_scaled
tests_check_tc_scaled_SOURCES = tests/check_tc_scaled.c
tests_check_tc_scaled_CFLAGS = $(TEST_CFLAGS)
tests_check_tc_scaled_LDADD = $(TEST_LDADD)

# the same bits in any floating-point environment the caller sets (mpemu(3))
check_PROGRAMS += tests/check_fenv
TESTS += tests/check_fenv
tests_check_fenv_SOURCES = tests/check_fenv.c
tests_check_fenv_CFLAGS = $(TEST_CFLAGS)
tests_check_fenv_LDADD = $(TEST_LDADD)

# the Arm BF16 models against an MPFR reference of the Arm pseudo-code
check_PROGRAMS += tests/check_tc_arm
TESTS += tests/check_tc_arm
tests_check_tc_arm_SOURCES = tests/check_tc_arm.c
tests_check_tc_arm_CFLAGS = $(TEST_CFLAGS)
tests_check_tc_arm_LDADD = $(TEST_LDADD)
# the CPU dot-product models and the hardware path (mpe_cpu_gemm(3)): one program,
# a test per part, tests/check_cpu_PART.cpu, which make check runs as
# `tests/check_cpu_mu tests/check_cpu_PART.cpu` (no such file: the name is the argument);
# a part whose instruction this CPU lacks exits 77
# (written out: automake derives the log names from the words of TESTS)
CPU_MU_TESTS = tests/check_cpu_model.cpu tests/check_cpu_avx512bf16.cpu tests/check_cpu_avx512vnni.cpu \
  tests/check_cpu_avxvnni.cpu tests/check_cpu_amxbf16.cpu tests/check_cpu_amxfp16.cpu tests/check_cpu_amxint8.cpu \
  tests/check_cpu_avx512fp16.cpu
check_PROGRAMS += tests/check_cpu_mu
tests_check_cpu_mu_SOURCES = tests/check_cpu_mu.c
tests_check_cpu_mu_CFLAGS = $(TEST_CFLAGS)
tests_check_cpu_mu_LDADD = $(TEST_LDADD)
TESTS += $(CPU_MU_TESTS)
TEST_EXTENSIONS = .cpu
CPU_LOG_COMPILER = tests/check_cpu_mu$(EXEEXT)
$(CPU_MU_TESTS): tests/check_cpu_mu$(EXEEXT)
	@:

bench_programs += tests/bench/bench_cpu_mu
tests_bench_bench_cpu_mu_SOURCES = tests/bench/bench_cpu_mu.c tests/bench/benchutil.h
tests_bench_bench_cpu_mu_CFLAGS = $(AM_CFLAGS) $(OPENBLAS_CFLAGS)
tests_bench_bench_cpu_mu_LDADD = libmpemu.la $(OPENBLAS_LIBS) $(LIBM)
