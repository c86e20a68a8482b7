# emu/tc_int.mk: integer tensor cores (emu/tc_int.c, mpe_tc_int(3)) and quantisation (emu/quant.c, mpe_quant(3))
libmpemu_la_SOURCES += emu/tc_int.h emu/tc_int.c emu/tc_int_kernel.h
if HAVE_X86_SIMD
noinst_LTLIBRARIES += libmpemu_tcint_avx2.la libmpemu_tcint_avx512.la
libmpemu_tcint_avx2_la_SOURCES = emu/tc_int_avx2.c
libmpemu_tcint_avx2_la_CFLAGS = $(AM_CFLAGS) $(VISIBILITY_CFLAGS) $(AVX2_CFLAGS)
libmpemu_tcint_avx512_la_SOURCES = emu/tc_int_avx512.c
libmpemu_tcint_avx512_la_CFLAGS = $(AM_CFLAGS) $(VISIBILITY_CFLAGS) $(AVX512_CFLAGS)
libmpemu_la_LIBADD += libmpemu_tcint_avx2.la libmpemu_tcint_avx512.la
endif
EXTRA_DIST += emu/tc_int_kernel.h

check_PROGRAMS += tests/check_tc_int
TESTS += tests/check_tc_int
tests_check_tc_int_SOURCES = tests/check_tc_int.c
tests_check_tc_int_CFLAGS = $(TEST_CFLAGS)
tests_check_tc_int_LDADD = $(TEST_LDADD)

bench_programs += tests/bench/bench_tc_int
tests_bench_bench_tc_int_SOURCES = tests/bench/bench_tc_int.c
tests_bench_bench_tc_int_CFLAGS = $(AM_CFLAGS) $(OPENBLAS_CFLAGS)
tests_bench_bench_tc_int_LDADD = libmpemu.la $(OPENBLAS_LIBS) $(LIBM)

libmpemu_la_SOURCES += emu/quant.c
check_PROGRAMS += tests/check_quant
TESTS += tests/check_quant
tests_check_quant_SOURCES = tests/check_quant.c
tests_check_quant_CFLAGS = $(TEST_CFLAGS)
tests_check_quant_LDADD = $(TEST_LDADD)

dist_man_MANS += man/man3/mpe_tc_int.3 man/man3/mpe_quant_params.3 man/man3/mpe_quant_encode.3 \
	man/man3/mpe_quant_decode.3 man/man3/mpe_quant_range.3
