# analysis/train.mk: master-weight update studies (mpe_update_*) and the
# training engine of the labs (public: lib/mpemu/train.h, mpe_train(3))
libmpemu_analysis_la_SOURCES += analysis/update.c

# the training engine, built into libmpemu-analysis; no contraction, so its
# bits do not depend on the compiler
noinst_LTLIBRARIES += libmpemu_train.la
libmpemu_train_la_SOURCES = analysis/train.c
libmpemu_train_la_CFLAGS = $(AM_CFLAGS) $(VISIBILITY_CFLAGS) -ffp-contract=off
libmpemu_analysis_la_LIBADD += libmpemu_train.la
