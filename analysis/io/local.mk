# analysis/io/: the tensor-file readers and writers (public: lib/mpemu/io.h,
# mpe_io_open(3)): .npy, .npz, safetensors, raw, text and torch.save files
libmpemu_analysis_la_SOURCES += analysis/io/io.c analysis/io/io_member.c analysis/io/io_pt.c analysis/io/io_text.c \
	analysis/io/io_write.c analysis/io/io_internal.h
# what the modules of libmpemu-analysis share (analysis/mpai.h)
libmpemu_analysis_la_SOURCES += analysis/mpai.h analysis/mpai.c
