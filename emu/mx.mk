# emu/mx.mk: block-scaled arrays (OCP MX v1.0 MXFP8/MXFP6/MXFP4, NVFP4) over
# the MX element formats of lib/mpemu/formats.def (issue 16)
libmpemu_la_SOURCES += emu/mx.c
mpemuinc_HEADERS += lib/mpemu/mx.h

check_PROGRAMS += tests/check_mx
TESTS += tests/check_mx
tests_check_mx_SOURCES = tests/check_mx.c
tests_check_mx_CFLAGS = $(TEST_CFLAGS)
tests_check_mx_LDADD = $(TEST_LDADD)

dist_man_MANS += man/man3/mpe_mx_quantize_f32.3 man/man3/mpe_mx_dequantize_f32.3
