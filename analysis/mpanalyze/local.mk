# analysis/mpanalyze/: the mpanalyze command-line tool
bin_PROGRAMS += mpanalyze
mpanalyze_SOURCES = analysis/mpanalyze/main.c analysis/mpanalyze/mpanalyze.h analysis/mpanalyze/common.c \
	analysis/mpanalyze/cmd_range.c analysis/mpanalyze/cmd_scale.c analysis/mpanalyze/plot.c \
	analysis/mpanalyze/cmd_refine.c analysis/mpanalyze/cmd_update.c
mpanalyze_CFLAGS = $(AM_CFLAGS) $(JANSSON_CFLAGS) $(PLPLOT_CFLAGS)
mpanalyze_LDADD = libmpemu-solvers.la $(MPE_ANALYSIS_LIBS) $(JANSSON_LIBS) $(PLPLOT_LIBS) $(LIBM)
mpanalyze_SOURCES += analysis/mpanalyze/cmd_memory.c analysis/mpanalyze/cmd_order.c analysis/mpanalyze/mpi.c \
	analysis/mpanalyze/options.c analysis/mpanalyze/inputs.c analysis/mpanalyze/output.c
if HAVE_MPI
# under mpirun the range report is shared out among the ranks (mpi.c, cmd_range.c)
mpanalyze_CFLAGS += -DMPA_HAVE_MPI $(MPI_CFLAGS)
mpanalyze_LDADD += $(MPI_LIBS)
endif
