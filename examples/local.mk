# examples/: small programs a new user copies from, and the teaching labs
noinst_PROGRAMS += examples/tour
examples_tour_SOURCES = examples/tour.c
examples_tour_LDADD = libmpemu.la $(LIBM)

# the README's tour: each snippet is part of one of these programs, which check
# their own results (tests/check_doc_commands.sh checks the snippets are there)
tour_programs = examples/tour_round examples/tour_gemm examples/tour_int8 examples/tour_range
check_PROGRAMS += $(tour_programs)
TESTS += $(tour_programs)
examples_tour_round_SOURCES = examples/tour_round.c
examples_tour_round_LDADD = libmpemu.la $(LIBM)
examples_tour_gemm_SOURCES = examples/tour_gemm.c
examples_tour_gemm_LDADD = libmpemu.la $(LIBM)
examples_tour_int8_SOURCES = examples/tour_int8.c
examples_tour_int8_LDADD = libmpemu.la $(LIBM)
examples_tour_range_SOURCES = examples/tour_range.c
examples_tour_range_LDADD = $(MPE_ANALYSIS_LIBS) $(LIBM)
EXTRA_DIST += examples/tour.py

# the tensor-core lab
noinst_PROGRAMS += examples/tc_lab
examples_tc_lab_SOURCES = examples/tc_lab.c
examples_tc_lab_LDADD = libmpemu.la $(LIBM)
EXTRA_DIST += examples/tc_lab.md

# the harmonic-series lab (examples/harmonic.md explains it)
noinst_PROGRAMS += examples/harmonic
examples_harmonic_SOURCES = examples/harmonic.c
examples_harmonic_LDADD = libmpemu.la $(LIBM)
EXTRA_DIST += examples/harmonic.md

# the program that makes the demo's gradient dumps
noinst_PROGRAMS += examples/amp_dump
examples_amp_dump_SOURCES = examples/amp_dump.c
examples_amp_dump_CFLAGS = $(AM_CFLAGS) $(OPENBLAS_CFLAGS) $(GSL_CFLAGS)
examples_amp_dump_LDADD = $(MPE_ANALYSIS_LIBS) $(OPENBLAS_LIBS) $(GSL_LIBS) $(LIBM)

# the iterative-refinement lab
noinst_PROGRAMS += examples/refine_lab
examples_refine_lab_SOURCES = examples/refine_lab.c
examples_refine_lab_LDADD = $(MPE_SOLVERS_LIBS) $(LIBM)
EXTRA_DIST += examples/refine_lab.md

# the labs on the training engine: each is its .c and examples/lab_util.c
# (plots, option parsing, timing), against the installed headers alone
# (tests/check_layers.sh builds them out of the tree)
LAB_SOURCES = examples/lab_util.c examples/lab_util.h
LAB_CFLAGS = $(AM_CFLAGS) $(PLPLOT_CFLAGS) -ffp-contract=off
LAB_LDADD = $(MPE_ANALYSIS_LIBS) $(PLPLOT_LIBS) $(LIBM)
noinst_PROGRAMS += examples/amp_lab
examples_amp_lab_SOURCES = examples/amp_lab.c $(LAB_SOURCES)
examples_amp_lab_CFLAGS = $(LAB_CFLAGS) $(JANSSON_CFLAGS)
examples_amp_lab_LDADD = $(LAB_LDADD) $(JANSSON_LIBS)

noinst_PROGRAMS += examples/mlp_lab
examples_mlp_lab_SOURCES = examples/mlp_lab.c $(LAB_SOURCES)
examples_mlp_lab_CFLAGS = $(LAB_CFLAGS) $(JANSSON_CFLAGS)
examples_mlp_lab_LDADD = $(LAB_LDADD) $(JANSSON_LIBS)
EXTRA_DIST += examples/amp_lab.md examples/mlp_lab.md

# data-parallel training with a low-precision all-reduce
noinst_PROGRAMS += examples/ddp_lab
examples_ddp_lab_SOURCES = examples/ddp_lab.c $(LAB_SOURCES)
examples_ddp_lab_CFLAGS = $(LAB_CFLAGS)
examples_ddp_lab_LDADD = $(LAB_LDADD)
EXTRA_DIST += examples/ddp_lab.md

# the 2:4 sparsity lab (examples/sparse_lab.md)
noinst_PROGRAMS += examples/sparse_lab
examples_sparse_lab_SOURCES = examples/sparse_lab.c $(LAB_SOURCES)
examples_sparse_lab_CFLAGS = $(LAB_CFLAGS)
examples_sparse_lab_LDADD = $(LAB_LDADD)
EXTRA_DIST += examples/sparse_lab.md

if HAVE_MPI
# the ring all-reduce over MPI messages, checked against the emulation (tests/check_mpi.sh)
noinst_PROGRAMS += examples/allreduce_mpi
examples_allreduce_mpi_SOURCES = examples/allreduce_mpi.c
examples_allreduce_mpi_CFLAGS = $(AM_CFLAGS) $(MPI_CFLAGS) $(GSL_CFLAGS)
examples_allreduce_mpi_LDADD = $(MPE_ANALYSIS_LIBS) $(MPI_LIBS) $(GSL_LIBS) $(LIBM)
endif
