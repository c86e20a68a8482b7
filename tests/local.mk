# tests/: the test-support library, the whole-project checks, `make bench`.
# Every Check suite, script test and benchmark is declared under tests/, by
# the folder it tests: tests/emu.mk (lib/ and emu/), tests/gpu.mk,
# tests/analysis.mk (analysis/ and mpanalyze).
check_LTLIBRARIES += tests/libtestsupport.la
tests_libtestsupport_la_SOURCES = tests/support/testsupport.c tests/support/testsupport.h \
	tests/support/boundary.c tests/support/boundary.h
tests_libtestsupport_la_CFLAGS = $(AM_CFLAGS) $(CHECK_CFLAGS) $(ZLIB_CFLAGS) -DMPE_SRCDIR='"$(abs_top_srcdir)"'
tests_libtestsupport_la_LIBADD = libmpemu-solvers.la $(MPE_ANALYSIS_LIBS) $(CHECK_LIBS) $(MPFR_LIBS) $(ZLIB_LIBS) $(LIBM)
TEST_LDADD = tests/libtestsupport.la libmpemu-solvers.la $(MPE_ANALYSIS_LIBS) $(CHECK_LIBS) $(MPFR_LIBS) $(LIBM)
TEST_CFLAGS = $(AM_CFLAGS) $(CHECK_CFLAGS) -I$(top_srcdir)/tests/support -DMPE_SRCDIR='"$(abs_top_srcdir)"'
# the reference data (tests/conformance/README.md): the tests read them from the source tree
EXTRA_DIST += tests/conformance
AM_TESTS_ENVIRONMENT = MPE_SRCDIR='$(abs_top_srcdir)'; export MPE_SRCDIR; CK_DEFAULT_TIMEOUT=1200; export CK_DEFAULT_TIMEOUT;

# whole-project checks: the Python package, the commands in the documents,
# the layering (and the labs built out of the tree), the manual pages
TESTS += tests/check_python.sh tests/check_doc_commands.sh tests/check_layers.sh tests/check_man.sh
EXTRA_DIST += tests/check_python.sh tests/check_doc_commands.sh tests/check_layers.sh tests/check_man.sh \
	tests/data tests/fuzz
# check_layers.sh runs `make install`, whose libtool relink rewrites the .so links
# in .libs for a moment: it starts only when every other test has finished, so no
# test loads a library that is being relinked
# (the target is named through a variable: a literal one would replace automake's own rule)
layers_log = tests/check_layers.sh.log
$(layers_log): $(filter-out $(layers_log),$(TEST_LOGS))

# make bench: every row a ratio to a reference measured in the same run
EXTRA_PROGRAMS += $(bench_programs)
CLEANFILES += $(bench_programs)
# (the first and last lines give the date, the CPU and the load average, which
# scripts/bench-tables copies into docs/BENCHMARKS.md)
bench: $(bench_programs) examples/amp_dump
	@echo "make bench: $$(date -u '+%Y-%m-%d %H:%M UTC'), $$(sed -n 's/^model name[^:]*: //p' /proc/cpuinfo 2>/dev/null | head -n 1), $$(nproc 2>/dev/null || echo ?) cores, load average before: $$(cut -d ' ' -f 1-3 /proc/loadavg 2>/dev/null)"
	@d=$$(mktemp -d) && ./examples/amp_dump $$d 12 >/dev/null && \
	  for b in $(bench_programs); do MPE_BENCH_GRADS=$$d ./$$b || { rm -rf $$d; exit 1; }; done; rm -rf $$d
	@py=$${PYTHON:-python3}; if ! command -v $$py >/dev/null 2>&1 || [ ! -f .libs/libmpemu.so ]; then \
	  echo "bench_linear: no $$py or no shared libmpemu: skipped"; \
	else MPEMU_LIB=$(abs_builddir)/.libs/libmpemu.so PYTHONPATH=$(abs_srcdir)/python $$py $(srcdir)/python/bench_linear.py || exit 1; fi
	@echo "make bench: load average after: $$(cut -d ' ' -f 1-3 /proc/loadavg 2>/dev/null)"
.PHONY: bench
