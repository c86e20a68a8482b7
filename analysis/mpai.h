/* What the modules of libmpemu-analysis share (not installed): its private
   names start mpai_, as libmpemu's start mpei_ (lib/mpei.h). */
#ifndef MPAI_H
#define MPAI_H
#include <errno.h>
#include <fcntl.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "mpei.h"
#include "mpemu/range.h"

/* mpe_range_alloc_targets with the thresholds of `like`'s targets (same kind
   and format or Q format) copied instead of searched again: the report makes
   one accumulator per tensor (range.c); NULL: no memory or bad arguments */
MPEI_HIDDEN mpe_range *mpai_range_alloc_like(const mpe_range_target *targets, size_t ntargets,
                                             const mpe_range_opts *o, const mpe_range *like);

/* grow *p (cap elements of esize bytes, doubling from 16) to hold at least
   need elements: 0, or -1 with *p and *cap unchanged (no memory, overflow) */
MPEI_HIDDEN int mpai_grow(void **p, size_t *cap, size_t need, size_t esize);

/* open path for reading only when it is a regular file: opened without
   blocking and checked before any read (a FIFO would wait for a writer, a
   device read forever). 0 with *fp set; -1 for a file that is not regular;
   else the errno of the failure. Inline: libmpemu-solvers uses it too. */
static inline int mpai_fopen_regular(const char *path, FILE **fp)
{
  *fp = NULL;
  int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0)
    return errno;
  struct stat sb;
  int rc = fstat(fd, &sb) ? errno : S_ISREG(sb.st_mode) ? 0 : -1;
  int fl = rc ? -1 : fcntl(fd, F_GETFL);
  if (!rc && (fl == -1 || fcntl(fd, F_SETFL, fl & ~O_NONBLOCK) == -1 || !(*fp = fdopen(fd, "rb"))))
    rc = errno ? errno : EIO;
  if (rc)
    close(fd);
  return rc;
}

#ifdef JANSSON_H
/* a file name as a JSON string (jansson refuses bytes that are not UTF-8 and
   the key would be lost): valid UTF-8 sequences as they are, every other byte
   as the character of the same number (Latin-1: byte 0xE9 gives U+00E9).
   NULL only when out of memory. Inline: mpanalyze uses it too. */
static inline json_t *mpai_json_path(const char *s)
{
  json_t *j = json_string(s);
  if (j || !s)
    return j;
  size_t n = strlen(s), k = 0;
  char *o = malloc(2 * n + 1);
  if (!o)
    return NULL;
  for (size_t i = 0; i < n;) {
    const unsigned char c = (unsigned char)s[i];
    size_t len = c < 0x80 ? 1 : c >> 5 == 6 ? 2 : c >> 4 == 14 ? 3 : c >> 3 == 30 ? 4 : 0;
    json_t *t = len > 1 && len <= n - i ? json_stringn(s + i, len) : NULL;
    if (len == 1 || t) {
      memcpy(o + k, s + i, len);
      k += len;
      i += len;
    } else {
      o[k++] = (char)(0xc0 | c >> 6);
      o[k++] = (char)(0x80 | (c & 0x3f));
      i++;
    }
    json_decref(t);
  }
  j = json_stringn(o, k);
  free(o);
  return j;
}
#endif

#endif
