/* libFuzzer target for the PyTorch reader's pickle interpreter (analysis/io_pt.c). The
   input is the pickle itself: it is wrapped in a well-formed torch.save archive
   (archive/data.pkl, archive/byteorder, three storages data/0..2 of 48 bytes, stored
   uncompressed as torch.save stores them) written by libzip into memory and opened by
   path as an in-memory file, so that mutations reach the interpreter instead of failing
   the zip CRC as they do for fuzz_pt. Every tensor found is read (fuzz_read.h). Any return
   code is fine; crashes, hangs, leaks and sanitizer reports are not. */
#include "fuzz_memfd.h"
#include "fuzz_read.h"
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
  zip_int64_t i = zip_file_add(za, name, s, ZIP_FL_ENC_UTF_8);
  if (i < 0) {
    zip_source_free(s);
    return -1;
  }
  return zip_set_file_compression(za, (zip_uint64_t)i, ZIP_CM_STORE, 0);
}

/* the archive: data.pkl, byteorder and the storages, written into *buf (free it) */
static int archive(const uint8_t *data, size_t size, uint8_t **buf, size_t *len)
{
  static unsigned char st[48];
  for (size_t i = 0; i < sizeof st; i++)
    st[i] = (unsigned char)(i * 37 + 11);
  *buf = NULL;
  zip_error_t ze;
  zip_error_init(&ze);
  zip_source_t *src = zip_source_buffer_create(NULL, 0, 0, &ze);
  zip_error_fini(&ze);
  if (!src)
    return -1;
  zip_source_keep(src);   /* it outlives the archive: the bytes are read from it after zip_close */
  zip_t *za = zip_open_from_source(src, ZIP_TRUNCATE, NULL);
  if (!za || add(za, "archive/data.pkl", data, size) || add(za, "archive/byteorder", "little", 6) ||
      add(za, "archive/data/0", st, 48) || add(za, "archive/data/1", st, 48) || add(za, "archive/data/2", st, 48) ||
      zip_close(za)) {
    if (za)
      zip_discard(za);
    zip_source_free(src);
    return -1;
  }
  zip_stat_t zs;
  int rc = -1;
  if (zip_source_stat(src, &zs) == 0 && (zs.valid & ZIP_STAT_SIZE) && zip_source_open(src) == 0) {
    if ((*buf = malloc(zs.size ? zs.size : 1)) && zip_source_read(src, *buf, zs.size) == (zip_int64_t)zs.size)
      rc = 0, *len = zs.size;
    zip_source_close(src);
  }
  zip_source_free(src);
  if (rc) {
    free(*buf);
    *buf = NULL;
  }
  return rc;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
  uint8_t *zb;
  size_t zl;
  if (archive(data, size, &zb, &zl))
    return 0;
  char path[64];
  int fd = fuzz_memfd(zb, zl, path);
  free(zb);
  if (fd < 0)
    return 0;
  mpe_io_opts o;
  memset(&o, 0, sizeof o);
  o.kind = MPE_IO_PT;
  mpe_io *f;
  char msg[256];
  if (mpe_io_open(&f, path, &o, msg, sizeof msg) == 0) {
    double buf[64];
    for (size_t i = 0; i < mpe_io_count(f); i++)
      fuzz_read_tensor(f, i, buf, 64);
    mpe_io_close(f);
  }
  return 0;
}
