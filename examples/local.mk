# examples/: small programs a new user copies from
noinst_PROGRAMS += examples/tour
examples_tour_SOURCES = examples/tour.c
examples_tour_LDADD = libmpemu.la $(LIBM)

# the 2:4 sparsity lab (examples/sparse_lab.md): the training engine of the labs
noinst_PROGRAMS += examples/sparse_lab
examples_sparse_lab_SOURCES = examples/sparse_lab.c $(LAB_SOURCES)
examples_sparse_lab_CFLAGS = $(LAB_CFLAGS)
examples_sparse_lab_LDADD = $(LAB_LDADD)
EXTRA_DIST += examples/sparse_lab.md
