# analysis/dist/: beyond one machine: memory arithmetic, low-precision
# all-reduce, reduction-order studies (public: lib/mpemu/dist.h). The
# reduction-order study draws its permutations with GSL's MT19937, so it is
# built into libmpemu-solvers, beside the other GSL users; the rest into
# libmpemu-analysis
libmpemu_analysis_la_SOURCES += analysis/dist/memory.c analysis/dist/allreduce.c analysis/dist/exactsum.h
libmpemu_solvers_la_SOURCES += analysis/dist/order.c
