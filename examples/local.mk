# examples/: small programs a new user copies from
noinst_PROGRAMS += examples/tour
examples_tour_SOURCES = examples/tour.c
examples_tour_LDADD = libmpemu.la $(LIBM)

# the 2:4 sparsity lab (examples/sparse_lab.md): the training engine of the labs
noinst_PROGRAMS += examples/sparse_lab
examples_sparse_lab_SOURCES = examples/sparse_lab.c
examples_sparse_lab_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_srcdir)/analysis
examples_sparse_lab_LDADD = analysis/libmpetrain.la $(MPE_ANALYSIS_LIBS) $(LIBM)
EXTRA_DIST += examples/sparse_lab.md
