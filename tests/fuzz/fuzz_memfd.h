/* The fuzz input as an in-memory file (memfd) that the readers open by path,
   exactly as a file on disk. Returns the descriptor (close it when done) and
   fills path, or -1. */
#ifndef MPE_FUZZ_MEMFD_H
#define MPE_FUZZ_MEMFD_H
#define _GNU_SOURCE
#include <stdint.h>
#include <stdio.h>
#include <sys/mman.h>
#include <unistd.h>

static int fuzz_memfd(const uint8_t *data, size_t size, char path[64])
{
  int fd = memfd_create("fuzz", 0);
  if (fd < 0)
    return -1;
  if (size && write(fd, data, size) != (ssize_t)size) {
    close(fd);
    return -1;
  }
  snprintf(path, 64, "/proc/self/fd/%d", fd);
  return fd;
}
#endif
