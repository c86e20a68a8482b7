# emu/tc.mk: tensor-core models, mpe_mma / mpe_gemm and their kernels
libmpemu_la_SOURCES += emu/tc_impl.h emu/tc_model.c emu/tc_mma.c emu/tc_gemm.c

check_PROGRAMS += tests/check_tc
TESTS += tests/check_tc
tests_check_tc_SOURCES = tests/check_tc.c
tests_check_tc_CFLAGS = $(TEST_CFLAGS)
tests_check_tc_LDADD = $(TEST_LDADD)
