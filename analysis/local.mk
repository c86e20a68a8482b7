# analysis/local.mk: tensor-file readers, range analysis, loss scalers, mpanalyze (issue 6)
libmpemu_la_SOURCES += analysis/io.c analysis/io_text.c analysis/io_write.c analysis/io_internal.h \
	analysis/range.c analysis/scaler.c
libmpemu_la_CFLAGS += $(JANSSON_CFLAGS) $(LIBZIP_CFLAGS)
libmpemu_la_LIBADD += $(JANSSON_LIBS) $(LIBZIP_LIBS)
