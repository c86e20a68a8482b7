# analysis/dist.mk: beyond one machine (issue 18): memory arithmetic, low-precision
# all-reduce, reduction-order studies
libmpemu_analysis_la_SOURCES += analysis/memory.c analysis/allreduce.c analysis/order.c analysis/exactsum.h
mpanalyze_SOURCES += analysis/mpanalyze/cmd_memory.c analysis/mpanalyze/cmd_order.c analysis/mpanalyze/mpi.c
if HAVE_MPI
# under mpirun the range report is shared out among the ranks (mpi.c, cmd_range.c)
mpanalyze_CFLAGS += -DMPA_HAVE_MPI $(MPI_CFLAGS)
mpanalyze_LDADD += $(MPI_LIBS)
endif

check_PROGRAMS += tests/check_dist
TESTS += tests/check_dist tests/check_dist.sh
tests_check_dist_SOURCES = tests/check_dist.c
tests_check_dist_CFLAGS = $(TEST_CFLAGS)
tests_check_dist_LDADD = $(TEST_LDADD)
EXTRA_DIST += tests/check_dist.sh

dist_man_MANS += man/man3/mpe_memory_estimate.3 man/man3/mpe_memory_activations.3 \
	man/man3/mpe_allreduce.3 man/man3/mpe_allreduce_f32.3 man/man3/mpe_allreduce_error.3 \
	man/man3/mpe_allreduce_chunk.3 man/man3/mpe_order_study.3 man/man3/mpe_range_pack.3 \
	man/man3/mpe_range_merge_packed.3

if HAVE_MPI
# the ring all-reduce over MPI messages, checked against the emulation (tests/check_mpi.sh)
noinst_PROGRAMS += examples/allreduce_mpi
examples_allreduce_mpi_SOURCES = examples/allreduce_mpi.c
examples_allreduce_mpi_CFLAGS = $(AM_CFLAGS) $(MPI_CFLAGS) $(GSL_CFLAGS)
examples_allreduce_mpi_LDADD = $(MPE_ANALYSIS_LIBS) $(MPI_LIBS) $(GSL_LIBS) $(LIBM)
TESTS += tests/check_mpi.sh
endif
EXTRA_DIST += tests/check_mpi.sh
