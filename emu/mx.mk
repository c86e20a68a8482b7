# emu/mx.mk: block-scaled arrays (OCP MX v1.0 MXFP8/MXFP6/MXFP4, NVFP4) over
# the MX element formats of lib/mpemu/formats.def
libmpemu_la_SOURCES += emu/mx.c
