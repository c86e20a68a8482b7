# analysis/train/: the training engine of the labs (public: lib/mpemu/train.h,
# mpe_train(3)), built into libmpemu-analysis; no contraction, so its bits do
# not depend on the compiler
noinst_LTLIBRARIES += libmpemu_train.la
libmpemu_train_la_SOURCES = analysis/train/train.c
libmpemu_train_la_CFLAGS = $(AM_CFLAGS) $(VISIBILITY_CFLAGS) -ffp-contract=off
libmpemu_analysis_la_LIBADD += libmpemu_train.la
