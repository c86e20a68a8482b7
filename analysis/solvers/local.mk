# analysis/solvers/: mixed-precision LU, LU-IR, GMRES-IR, test matrices and
# the Matrix Market reader, reliable-update CG: libmpemu-solvers (BLAS/LAPACK
# and GSL)
libmpemu_solvers_la_SOURCES += analysis/solvers/ir_internal.h analysis/solvers/matgen.c analysis/solvers/mmio.c \
	analysis/solvers/ir_lu.c analysis/solvers/ir.c analysis/solvers/cg.c
