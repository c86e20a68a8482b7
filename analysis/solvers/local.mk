# analysis/solvers/: mixed-precision LU, LU-IR, GMRES-IR, test matrices and
# the Matrix Market reader, reliable-update CG: libmpemu-solvers (BLAS/LAPACK
# and GSL)
libmpemu_solvers_la_SOURCES += analysis/solvers/ir_internal.h analysis/solvers/matgen.c analysis/solvers/mmio.c \
	analysis/solvers/ir_lu.c analysis/solvers/ir.c analysis/solvers/cg.c
if HAVE_CUDA
# the cuSOLVER refinement (mpe_gpu_ir_solve) shares mpe_ir_solve's checks
# (ir_internal.h); it loads cuSOLVER through its own hidden copy of gpu/'s lazy
# loader (gpu/cuda_lazy.h, the loader's interface)
noinst_LTLIBRARIES += libmpemu_solvers_cuda.la
libmpemu_solvers_cuda_la_SOURCES = analysis/solvers/ir_cusolver.c gpu/cuda_lazy.c gpu/cuda_lazy.h
libmpemu_solvers_cuda_la_CFLAGS = $(AM_CFLAGS) $(VISIBILITY_CFLAGS) $(CUDA_CFLAGS) -I$(top_srcdir)/gpu \
	-DMPE_CUDA_LIBDIR='"$(CUDA_LIBDIR)"'
libmpemu_solvers_la_LIBADD += libmpemu_solvers_cuda.la $(CUDA_LIBS)
endif
