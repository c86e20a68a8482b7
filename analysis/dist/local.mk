# analysis/dist/: beyond one machine: memory arithmetic, low-precision
# all-reduce, reduction-order studies (public: lib/mpemu/dist.h)
libmpemu_analysis_la_SOURCES += analysis/dist/memory.c analysis/dist/allreduce.c analysis/dist/order.c \
	analysis/dist/exactsum.h
