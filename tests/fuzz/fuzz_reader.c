/* libFuzzer target for the tensor-file readers. Built once per kind by run.sh,
   with FUZZ_KIND set to one reader. The input becomes an in-memory file
   (memfd) opened by path, exactly as a file on disk would be; every tensor
   is then read to the end. Any return code is fine; crashes, leaks and
   sanitizer reports are not. */
#include "fuzz_memfd.h"
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <mpemu.h>

#ifndef FUZZ_KIND
#define FUZZ_KIND MPE_IO_AUTO
#endif

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
  char path[64];
  int fd = fuzz_memfd(data, size, path);
  if (fd < 0)
    return 0;
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
    for (size_t i = 0; i < mpe_io_count(f); i++) {
      size_t n;
      mpe_io_tensor t;
      mpe_io_info(f, i, &t);
      if (mpe_io_select(f, i))
        continue;
      while (mpe_io_read(f, buf, 700, &n) == 0 && n)
        ;
    }
    mpe_io_close(f);
  }
  close(fd);
  return 0;
}
