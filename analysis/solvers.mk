# analysis/solvers.mk: mixed-precision LU, LU-IR, GMRES-IR, test matrices and
# the Matrix Market reader, reliable-update CG
libmpemu_analysis_la_SOURCES += analysis/ir_internal.h analysis/matgen.c analysis/mmio.c analysis/ir_lu.c analysis/ir.c \
	analysis/cg.c
