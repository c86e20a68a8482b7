/* What the modules of libmpemu-analysis share (not installed): its private
   names start mpai_, as libmpemu's start mpei_ (lib/mpei.h). */
#ifndef MPAI_H
#define MPAI_H
#include <errno.h>
#include <fcntl.h>
#include <stddef.h>
#include <stdio.h>
#include <sys/stat.h>
#include <unistd.h>
#include "mpei.h"

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

#endif
