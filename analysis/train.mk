# analysis/train.mk: master-weight update studies (mpe_update_*), the small
# training engine, the `update` subcommand, their tests, labs and benchmark.
libmpemu_analysis_la_SOURCES += analysis/update.c

check_PROGRAMS += tests/check_update
TESTS += tests/check_update
tests_check_update_SOURCES = tests/check_update.c
tests_check_update_CFLAGS = $(TEST_CFLAGS)
tests_check_update_LDADD = $(TEST_LDADD)
tests_check_update_SOURCES += analysis/mpanalyze/cmd_update.c
tests_check_update_CFLAGS += $(JANSSON_CFLAGS)
tests_check_update_LDADD += $(JANSSON_LIBS)

dist_man_MANS += man/man3/mpe_update_study.3 man/man3/mpe_update_alloc.3 man/man3/mpe_update_free.3 \
	man/man3/mpe_update_step.3 man/man3/mpe_update_weights.3 man/man3/mpe_update_reference.3 \
	man/man3/mpe_update_stats_get.3 man/man3/mpe_update_is_lost.3 \
	man/man3/mpe_update_strategy_name.3 man/man3/mpe_update_strategy_lookup.3

# the training engine of the labs (not installed)
noinst_LTLIBRARIES += analysis/libmpetrain.la
analysis_libmpetrain_la_SOURCES = analysis/train.c analysis/train.h analysis/train_lab.c analysis/train_lab.h
analysis_libmpetrain_la_CFLAGS = $(AM_CFLAGS) $(PLPLOT_CFLAGS) -ffp-contract=off
analysis_libmpetrain_la_LIBADD = $(MPE_ANALYSIS_LIBS) $(PLPLOT_LIBS) $(LIBM)

# the labs
noinst_PROGRAMS += examples/amp_lab
examples_amp_lab_SOURCES = examples/amp_lab.c
examples_amp_lab_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_srcdir)/analysis
examples_amp_lab_CFLAGS = $(AM_CFLAGS) $(JANSSON_CFLAGS)
examples_amp_lab_LDADD = analysis/libmpetrain.la $(MPE_ANALYSIS_LIBS) $(JANSSON_LIBS) $(LIBM)

check_PROGRAMS += tests/check_train
TESTS += tests/check_train
tests_check_train_SOURCES = tests/check_train.c
tests_check_train_CFLAGS = $(TEST_CFLAGS) -I$(top_srcdir)/analysis
tests_check_train_LDADD = analysis/libmpetrain.la $(TEST_LDADD)

noinst_PROGRAMS += examples/mlp_lab
examples_mlp_lab_SOURCES = examples/mlp_lab.c
examples_mlp_lab_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_srcdir)/analysis
examples_mlp_lab_CFLAGS = $(AM_CFLAGS) $(JANSSON_CFLAGS)
examples_mlp_lab_LDADD = analysis/libmpetrain.la $(MPE_ANALYSIS_LIBS) $(JANSSON_LIBS) $(LIBM)

bench_programs += tests/bench/bench_train
tests_bench_bench_train_SOURCES = tests/bench/bench_train.c
tests_bench_bench_train_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_srcdir)/analysis -I$(top_srcdir)/tests/bench
tests_bench_bench_train_LDADD = analysis/libmpetrain.la $(MPE_ANALYSIS_LIBS) $(LIBM)

EXTRA_DIST += examples/amp_lab.md examples/mlp_lab.md

# data-parallel training with a low-precision all-reduce (issue 18)
noinst_PROGRAMS += examples/ddp_lab
examples_ddp_lab_SOURCES = examples/ddp_lab.c
examples_ddp_lab_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_srcdir)/analysis
examples_ddp_lab_LDADD = analysis/libmpetrain.la $(MPE_ANALYSIS_LIBS) $(LIBM)
EXTRA_DIST += examples/ddp_lab.md
