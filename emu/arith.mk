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
