# examples/: small programs a new user copies from
noinst_PROGRAMS += examples/tour
examples_tour_SOURCES = examples/tour.c
examples_tour_LDADD = libmpemu.la $(LIBM)
