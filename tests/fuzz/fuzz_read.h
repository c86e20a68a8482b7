/* Read tensor i of an open file as the fuzz targets do: from its first value,
   at most FUZZ_MAX_VALUES values. A few bytes can declare a view of billions of
   values (a PyTorch tensor with stride 0 over a storage of one element, as
   torch.save writes an expanded tensor); reading them all is the reader's job
   and is linear, but it would hold one input past the timeout, so the targets
   stop there (mpanalyze bounds the same with --max-values). Traps where the
   reader hands out more values than the tensor's count. */
#ifndef MPE_FUZZ_READ_H
#define MPE_FUZZ_READ_H
#include <stddef.h>
#include <stdint.h>
#include <mpemu.h>

#define FUZZ_MAX_VALUES ((uint64_t)1 << 20)

static void fuzz_read_tensor(mpe_io *f, size_t i, double *buf, size_t max)
{
  mpe_io_tensor t;
  if (mpe_io_info(f, i, &t) || mpe_io_select(f, i))
    return;
  uint64_t got = 0;
  size_t n;
  while (got < FUZZ_MAX_VALUES && mpe_io_read(f, buf, max, &n) == 0 && n) {
    got += n;
    if (got > t.count)
      __builtin_trap();   /* more values than the tensor holds */
  }
}
#endif
