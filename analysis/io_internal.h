/* Internal pieces shared by the tensor-file readers (not installed). */
#ifndef MPE_IO_INTERNAL_H
#define MPE_IO_INTERNAL_H
#include <stdio.h>
#include <stdint.h>
#include "mpei.h"
#include "mpemu/io.h"

/* text reader state: a buffered scanner over the file */
struct mpei_text {
  char buf[1 << 16];
  size_t len, at;       /* bytes in buf, next byte to look at */
  uint64_t pos;         /* bytes of the file consumed */
  uint64_t line;
  int eof;
};

MPEI_HIDDEN void mpei_io_msg(char *msg, size_t len, const char *fmt, ...)
  __attribute__((format(printf, 3, 4)));
MPEI_HIDDEN int mpei_mul_u64(uint64_t a, uint64_t b, uint64_t *r);
MPEI_HIDDEN int mpei_utf8_valid(const char *s, size_t n);
MPEI_HIDDEN int mpei_npy_dict(const char *p, const char *e, char *descr, size_t dlen, int *fortran,
                              int *ndim, uint64_t *shape, char *msg, size_t msglen);
MPEI_HIDDEN int mpei_npy_parse(const unsigned char *buf, size_t len, uint64_t avail, const mpe_io_opts *o,
                               mpe_io_tensor *t, uint64_t *hdr, uint64_t *nbytes, char *msg, size_t msglen);
/* Scan a whole text file once: count and check every number; sets the shape
   (rows x columns when every line has the same number of values, else 1-D). */
MPEI_HIDDEN int mpei_text_scan(struct mpei_text *s, FILE *fp, mpe_io_tensor *t, char *msg, size_t msglen);
MPEI_HIDDEN int mpei_text_rewind(struct mpei_text *s, FILE *fp, char *msg, size_t msglen);
MPEI_HIDDEN int mpei_text_read(struct mpei_text *s, FILE *fp, double *v, size_t max, size_t *n,
                               char *msg, size_t msglen);
#endif
