# analysis/train.mk: master-weight update studies (mpe_update_*), the small
# training engine, the `update` subcommand, their tests, labs and benchmark.
libmpemu_la_SOURCES += analysis/update.c

check_PROGRAMS += tests/check_update
TESTS += tests/check_update
tests_check_update_SOURCES = tests/check_update.c
tests_check_update_CFLAGS = $(TEST_CFLAGS)
tests_check_update_LDADD = $(TEST_LDADD)
tests_check_update_SOURCES += analysis/mpanalyze/cmd_update.c
tests_check_update_CFLAGS += $(JANSSON_CFLAGS)
tests_check_update_LDADD += $(JANSSON_LIBS)

# `mpanalyze update` as a program of its own until it joins mpanalyze's table
noinst_PROGRAMS += analysis/mpa-update
analysis_mpa_update_SOURCES = analysis/train_update_main.c analysis/mpanalyze/cmd_update.c
analysis_mpa_update_CFLAGS = $(AM_CFLAGS) $(JANSSON_CFLAGS)
analysis_mpa_update_LDADD = libmpemu.la $(JANSSON_LIBS) $(LIBM)

dist_man_MANS += man/man3/mpe_update_study.3 man/man3/mpe_update_alloc.3 man/man3/mpe_update_free.3 \
	man/man3/mpe_update_step.3 man/man3/mpe_update_weights.3 man/man3/mpe_update_reference.3 \
	man/man3/mpe_update_stats_get.3 man/man3/mpe_update_is_lost.3 \
	man/man3/mpe_update_strategy_name.3 man/man3/mpe_update_strategy_lookup.3
