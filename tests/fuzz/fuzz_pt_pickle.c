/* libFuzzer target for the PyTorch reader's pickle interpreter (analysis/io_pt.c). The
   input is the pickle itself: it is wrapped in a well-formed torch.save archive
   (archive/data.pkl, archive/byteorder, three storages data/0..2 of 48 bytes) written
   with libzip, so that mutations reach the interpreter instead of failing the zip CRC
   as they do for fuzz_pt. Every tensor found is read to the end. Any return code is
   fine; crashes, hangs, leaks and sanitizer reports are not. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zip.h>
#include <mpemu.h>

static int add(zip_t *za, const char *name, const void *p, size_t n)
{
  zip_source_t *s = zip_source_buffer(za, p, n, 0);
  if (!s)
    return -1;
  if (zip_file_add(za, name, s, ZIP_FL_ENC_UTF_8) < 0) {
    zip_source_free(s);
    return -1;
  }
  return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
  static unsigned char st[48];
  for (size_t i = 0; i < sizeof st; i++)
    st[i] = (unsigned char)(i * 37 + 11);
  /* libzip writes an archive beside its path and renames it: a real file, not a memfd */
  char path[96];
  snprintf(path, sizeof path, "%s/mpemu-fuzz-pkl-%ld.pt", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp", (long)getpid());
  int err;
  zip_t *za = zip_open(path, ZIP_CREATE | ZIP_TRUNCATE, &err);
  if (!za || add(za, "archive/data.pkl", data, size) || add(za, "archive/byteorder", "little", 6) ||
      add(za, "archive/data/0", st, 48) || add(za, "archive/data/1", st, 48) || add(za, "archive/data/2", st, 48) ||
      zip_close(za)) {
    if (za)
      zip_discard(za);
    return 0;
  }
  mpe_io_opts o;
  memset(&o, 0, sizeof o);
  o.kind = MPE_IO_PT;
  mpe_io *f;
  char msg[256];
  if (mpe_io_open(&f, path, &o, msg, sizeof msg) == 0) {
    double buf[64];
    for (size_t i = 0; i < mpe_io_count(f); i++) {
      size_t n;
      if (mpe_io_select(f, i))
        continue;
      while (mpe_io_read(f, buf, 64, &n) == 0 && n)
        ;
    }
    mpe_io_close(f);
  }
  return 0;
}
