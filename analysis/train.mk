# analysis/train.mk: master-weight update studies (mpe_update_*), the small
# training engine, the `update` subcommand, their tests, labs and benchmark.
libmpemu_analysis_la_SOURCES += analysis/update.c

check_PROGRAMS += tests/check_update
TESTS += tests/check_update
tests_check_update_SOURCES = tests/check_update.c
tests_check_update_CFLAGS = $(TEST_CFLAGS)
tests_check_update_LDADD = $(TEST_LDADD)
# the CLI part runs the built mpanalyze (MPANALYZE overrides the path)
tests_check_update_CFLAGS += $(JANSSON_CFLAGS)
tests_check_update_LDADD += $(JANSSON_LIBS)

dist_man_MANS += man/man3/mpe_update_study.3 man/man3/mpe_update_alloc.3 man/man3/mpe_update_free.3 \
	man/man3/mpe_update_step.3 man/man3/mpe_update_weights.3 man/man3/mpe_update_reference.3 \
	man/man3/mpe_update_stats_get.3 man/man3/mpe_update_is_lost.3 \
	man/man3/mpe_update_strategy_name.3 man/man3/mpe_update_strategy_lookup.3

# the training engine (public: lib/mpemu/train.h, mpe_train(3)), built into
# libmpemu-analysis; no contraction, so its bits do not depend on the compiler
noinst_LTLIBRARIES += libmpemu_train.la
libmpemu_train_la_SOURCES = analysis/train.c
libmpemu_train_la_CFLAGS = $(AM_CFLAGS) $(VISIBILITY_CFLAGS) -ffp-contract=off
libmpemu_analysis_la_LIBADD += libmpemu_train.la
dist_man_MANS += man/man3/mpe_train.3

# the labs: each is its .c and examples/lab_util.c (plots, option parsing,
# timing), against the installed headers alone (tests/check_layers.sh builds
# them out of the tree)
LAB_SOURCES = examples/lab_util.c examples/lab_util.h
LAB_CFLAGS = $(AM_CFLAGS) $(PLPLOT_CFLAGS) -ffp-contract=off
LAB_LDADD = $(MPE_ANALYSIS_LIBS) $(PLPLOT_LIBS) $(LIBM)
noinst_PROGRAMS += examples/amp_lab
examples_amp_lab_SOURCES = examples/amp_lab.c $(LAB_SOURCES)
examples_amp_lab_CFLAGS = $(LAB_CFLAGS) $(JANSSON_CFLAGS)
examples_amp_lab_LDADD = $(LAB_LDADD) $(JANSSON_LIBS)

check_PROGRAMS += tests/check_train
TESTS += tests/check_train
tests_check_train_SOURCES = tests/check_train.c
tests_check_train_CFLAGS = $(TEST_CFLAGS)
tests_check_train_LDADD = $(TEST_LDADD)

noinst_PROGRAMS += examples/mlp_lab
examples_mlp_lab_SOURCES = examples/mlp_lab.c $(LAB_SOURCES)
examples_mlp_lab_CFLAGS = $(LAB_CFLAGS) $(JANSSON_CFLAGS)
examples_mlp_lab_LDADD = $(LAB_LDADD) $(JANSSON_LIBS)

bench_programs += tests/bench/bench_train
tests_bench_bench_train_SOURCES = tests/bench/bench_train.c
tests_bench_bench_train_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_srcdir)/tests/bench
tests_bench_bench_train_LDADD = $(MPE_ANALYSIS_LIBS) $(LIBM)

EXTRA_DIST += examples/amp_lab.md examples/mlp_lab.md

# data-parallel training with a low-precision all-reduce (issue 18)
noinst_PROGRAMS += examples/ddp_lab
examples_ddp_lab_SOURCES = examples/ddp_lab.c $(LAB_SOURCES)
examples_ddp_lab_CFLAGS = $(LAB_CFLAGS)
examples_ddp_lab_LDADD = $(LAB_LDADD)
EXTRA_DIST += examples/ddp_lab.md
