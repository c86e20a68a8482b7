/* libFuzzer target for the tensor-file readers. Built once per kind by run.sh,
   with FUZZ_KIND set to one reader. The input becomes an in-memory file
   (memfd) opened by path, exactly as a file on disk would be; every tensor
   is then read (fuzz_read.h). Any return code is fine; crashes, leaks and
   sanitizer reports are not. */
#include "fuzz_memfd.h"
#include "fuzz_read.h"
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <mpemu.h>

#ifndef FUZZ_KIND
#define FUZZ_KIND MPE_IO_AUTO
#endif

static void read_all(const char *path, const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
  char path[64];
  int fd = fuzz_memfd(data, size, path);
  if (fd < 0)
    return 0;
  read_all(path, data, size);
#if FUZZ_KIND == MPE_IO_SAFETENSORS
  /* The 8-byte length prefix rarely survives a mutation, and then the JSON
     behind it is never parsed (58 edges from an empty corpus). So the input
     is also tried as HEADER NUL DATA with the prefix written for it: every
     mutation of the JSON text reaches the header checks. */
  if (size > 0 && size < (1u << 20)) {
    const uint8_t *nul = memchr(data, 0, size);
    size_t hl = nul ? (size_t)(nul - data) : size;
    uint8_t *b = malloc(size + 8);
    if (!b)
      return 0;
    for (int k = 0; k < 8; k++)
      b[k] = (uint8_t)((uint64_t)hl >> (8 * k));
    memcpy(b + 8, data, hl);
    if (nul)
      memcpy(b + 8 + hl, nul + 1, size - hl - 1);
    size_t bl = 8 + size - (nul ? 1 : 0);
    fd = fuzz_memfd(b, bl, path);
    if (fd >= 0)
      read_all(path, b, bl);
    free(b);
  }
#endif
  return 0;
}

static void read_all(const char *path, const uint8_t *data, size_t size)
{
  (void)data;
  (void)size;
  for (int variant = 0; variant < 2; variant++) {
    mpe_io_opts o;
    memset(&o, 0, sizeof o);
    o.kind = FUZZ_KIND;
    o.has_dtype = 1;
    o.dtype = variant ? MPE_BF16 : MPE_E5M2;   /* for |V2 / |V1 arrays and raw */
    o.chunk_bytes = 4096;
#if FUZZ_KIND == MPE_IO_RAW
    if (variant && size >= 2) {   /* a shape the data may not fit: it must be refused, not trusted */
      o.ndim = 2;
      o.shape[0] = (uint64_t)data[0] + 1;
      o.shape[1] = (uint64_t)data[1] << (data[0] & 63);
    }
#endif
    o.max_member_bytes = 1 << 24;
    mpe_io *f;
    char msg[256];
    if (mpe_io_open(&f, path, &o, msg, sizeof msg))
      continue;
    double buf[700];
    for (size_t i = 0; i < mpe_io_count(f); i++)
      fuzz_read_tensor(f, i, buf, 700);
    mpe_io_close(f);
  }
}
