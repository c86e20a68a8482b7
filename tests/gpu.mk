# tests/gpu.mk: the host-side arithmetic of the GPU path and its error codes
# (always), and the CPU/GPU comparisons (skipped, exit 77, without a device)
check_PROGRAMS += tests/check_gpu tests/check_gpu_device
TESTS += tests/check_gpu tests/check_gpu_device
tests_check_gpu_SOURCES = tests/check_gpu.c gpu/korder.c gpu/korder.h
tests_check_gpu_CFLAGS = $(TEST_CFLAGS) -I$(top_srcdir)/gpu
tests_check_gpu_LDADD = $(TEST_LDADD)
tests_check_gpu_device_SOURCES = tests/check_gpu.c gpu/korder.c gpu/korder.h
tests_check_gpu_device_CFLAGS = $(TEST_CFLAGS) -I$(top_srcdir)/gpu -DMPE_GPU_DEVICE_TESTS
tests_check_gpu_device_LDADD = $(TEST_LDADD)
