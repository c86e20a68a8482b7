/* The fuzz input as an in-memory file (memfd) that the readers open by path,
   exactly as a file on disk. One memfd serves every execution: it is emptied
   and rewritten each time (creating and closing one per input costs more than
   reading a short input). Returns the descriptor, which stays open, and fills
   path, or -1. */
#ifndef MPE_FUZZ_MEMFD_H
#define MPE_FUZZ_MEMFD_H
#define _GNU_SOURCE
#include <stdint.h>
#include <stdio.h>
#include <sys/mman.h>
#include <unistd.h>

static int fuzz_memfd(const uint8_t *data, size_t size, char path[64])
{
  static int fd = -1;
  if (fd < 0 && (fd = memfd_create("fuzz", 0)) < 0)
    return -1;
  if (ftruncate(fd, 0) || (size && pwrite(fd, data, size, 0) != (ssize_t)size))
    return -1;
  snprintf(path, 64, "/proc/self/fd/%d", fd);
  return fd;
}
#endif
