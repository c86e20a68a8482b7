# analysis/dist.mk: beyond one machine: memory arithmetic, low-precision
# all-reduce, reduction-order studies
libmpemu_analysis_la_SOURCES += analysis/memory.c analysis/allreduce.c analysis/order.c analysis/exactsum.h
