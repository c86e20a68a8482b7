# lib/: the public headers (mpemu.h and mpemu/*.h), the pkg-config files, and
# the code every module of libmpemu shares (errors, flags, version, CPU features)
include_HEADERS += lib/mpemu.h
mpemuincdir = $(includedir)/mpemu
mpemuinc_HEADERS = \
	lib/mpemu/core.h lib/mpemu/convert.h lib/mpemu/format.h lib/mpemu/arith.h \
	lib/mpemu/fixed.h lib/mpemu/tc.h lib/mpemu/quant.h lib/mpemu/gpu.h lib/mpemu/io.h lib/mpemu/range.h lib/mpemu/report.h \
	lib/mpemu/scaler.h lib/mpemu/update.h lib/mpemu/ir.h lib/mpemu/cg.h \
	lib/mpemu/dist.h lib/mpemu/sparse.h lib/mpemu/train.h lib/mpemu/matgen.h lib/mpemu/csr.h lib/mpemu/elementwise.h lib/mpemu/formats.def \
	lib/mpemu/mx.h
nodist_mpemuinc_HEADERS = lib/mpemu/version.h
libmpemu_la_SOURCES += lib/mpei.h lib/mpei_names.h lib/mpei_philox.h lib/mpei_round_core.h lib/mpei_round_plan.h lib/mpei_vec.h lib/error.c lib/flags.c lib/version.c lib/cpu.c lib/threads.c lib/mpei_threads.h
# the SIMD intrinsics wrappers the emu/ kernels include
libmpemu_la_SOURCES += lib/isa_avx2.h lib/isa_avx512.h
pkgconfigdir = $(libdir)/pkgconfig
pkgconfig_DATA = lib/mpemu.pc lib/mpemu-analysis.pc lib/mpemu-solvers.pc
