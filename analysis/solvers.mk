# analysis/solvers.mk: mixed-precision LU, LU-IR, GMRES-IR, test matrices, reliable-update CG
libmpemu_la_SOURCES += analysis/matgen.c analysis/mmio.c analysis/ir_lu.c analysis/ir.c \
	analysis/cg.c
