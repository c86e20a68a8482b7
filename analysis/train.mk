# analysis/train.mk: master-weight update studies (mpe_update_*), the small
# training engine, the `update` subcommand, their tests, labs and benchmark.
libmpemu_la_SOURCES += analysis/update.c

check_PROGRAMS += tests/check_update
TESTS += tests/check_update
tests_check_update_SOURCES = tests/check_update.c
tests_check_update_CFLAGS = $(TEST_CFLAGS)
tests_check_update_LDADD = $(TEST_LDADD)
