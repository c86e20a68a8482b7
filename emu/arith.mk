# emu/arith.mk: correctly rounded FP16/BF16 arithmetic, element-wise array
# functions, 16-bit fixed point (issue 3)
libmpemu_la_SOURCES += emu/arith.c emu/fixed.c

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

libmpemu_la_SOURCES += emu/arith_ro.h emu/elementwise.c emu/elementwise.h emu/elementwise_kernel.h
if HAVE_X86_SIMD
noinst_LTLIBRARIES += libmpemu_ew_avx2.la libmpemu_ew_avx512.la
libmpemu_ew_avx2_la_SOURCES = emu/elementwise_avx2.c
libmpemu_ew_avx2_la_CFLAGS = $(AM_CFLAGS) $(VISIBILITY_CFLAGS) $(SLEEF_CFLAGS) $(AVX2_CFLAGS)
libmpemu_ew_avx512_la_SOURCES = emu/elementwise_avx512.c
libmpemu_ew_avx512_la_CFLAGS = $(AM_CFLAGS) $(VISIBILITY_CFLAGS) $(SLEEF_CFLAGS) $(AVX512_CFLAGS)
libmpemu_la_LIBADD += libmpemu_ew_avx2.la libmpemu_ew_avx512.la
endif

check_PROGRAMS += tests/check_elementwise
TESTS += tests/check_elementwise
tests_check_elementwise_SOURCES = tests/check_elementwise.c
tests_check_elementwise_CFLAGS = $(TEST_CFLAGS)
tests_check_elementwise_LDADD = $(TEST_LDADD)

# the harmonic-series lab (examples/harmonic.md explains it)
noinst_PROGRAMS += examples/harmonic
examples_harmonic_SOURCES = examples/harmonic.c
examples_harmonic_LDADD = libmpemu.la $(LIBM)
EXTRA_DIST += examples/harmonic.md

bench_programs += tests/bench/bench_elementwise
tests_bench_bench_elementwise_SOURCES = tests/bench/bench_elementwise.c tests/bench/benchutil.h
tests_bench_bench_elementwise_CFLAGS = $(AM_CFLAGS)
tests_bench_bench_elementwise_LDADD = libmpemu.la $(LIBM)

# man pages (.so aliases point at the family page)
dist_man_MANS += \
	man/man3/mpe_fp16_add.3 \
	man/man3/mpe_fp16_sub.3 \
	man/man3/mpe_fp16_mul.3 \
	man/man3/mpe_fp16_div.3 \
	man/man3/mpe_fp16_sqrt.3 \
	man/man3/mpe_fp16_fma.3 \
	man/man3/mpe_bf16_add.3 \
	man/man3/mpe_bf16_sub.3 \
	man/man3/mpe_bf16_mul.3 \
	man/man3/mpe_bf16_div.3 \
	man/man3/mpe_bf16_sqrt.3 \
	man/man3/mpe_bf16_fma.3 \
	man/man3/mpe_ew_exp.3 \
	man/man3/mpe_ew_add.3 \
	man/man3/mpe_ew_sub.3 \
	man/man3/mpe_ew_mul.3 \
	man/man3/mpe_ew_div.3 \
	man/man3/mpe_ew_fma.3 \
	man/man3/mpe_ew_scale.3 \
	man/man3/mpe_ew_sqrt.3 \
	man/man3/mpe_ew_recip.3 \
	man/man3/mpe_ew_log.3 \
	man/man3/mpe_ew_tanh.3 \
	man/man3/mpe_ew_sigmoid.3 \
	man/man3/mpe_ew_softmax.3 \
	man/man3/mpe_fx16_encode.3 \
	man/man3/mpe_fx16_decode.3 \
	man/man3/mpe_fp32_to_q16.3 \
	man/man3/mpe_q16_to_fp32.3
