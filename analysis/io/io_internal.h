/* Internal pieces shared by the tensor-file readers (not installed; private to
   libmpemu-analysis, whose private names start mpai_). */
#ifndef MPE_IO_INTERNAL_H
#define MPE_IO_INTERNAL_H
#include <stdio.h>
#include <stdint.h>
#include <zip.h>
#include "mpei.h"
#include "mpemu/io.h"

/* text reader state: a buffered scanner over the file */
#define MPAI_TEXT_BUF (1u << 16)
struct mpai_text {
  char *buf;            /* cap bytes: MPAI_TEXT_BUF, or the file's size + 1 when that is less
                           (the opener allocates it, mpe_io_close frees it) */
  size_t cap;
  size_t len, at;       /* bytes in buf, next byte to look at */
  uint64_t pos;         /* bytes of the file consumed */
  uint64_t line;
  int eof;
  int sep;              /* 0 after a value, 1 after a comma or semicolon that followed one, 2 at a line's start */
};

/* members skipped because they hold no floating-point data (io_member.c) */
struct mpai_skip { char *name; char dtype[32]; const char *why; };
struct mpai_skips { struct mpai_skip *v; size_t n, cap; };
MPEI_HIDDEN int mpai_skip_add(struct mpai_skips *s, const char *name, size_t nl, const char *dtype, const char *why);
MPEI_HIDDEN void mpai_skips_free(struct mpai_skips *s);
/* The element type the options give member `name` whose stored values are `es`
   bytes wide (0: any width, for raw files): 1 and *t when a rule applies, 0 when none does, -1 (msg set)
   when a plain-name rule names it but its values have another width. */
MPEI_HIDDEN int mpai_dtype_rule(const mpe_io_opts *o, const char *name, size_t es, mpe_type *t,
                                char *msg, size_t msglen);
/* returned by mpai_npy_parse for a member to skip: sk receives its dtype and why */
#define MPAI_SKIP (-1)
struct mpai_npy_skip { char dtype[32]; const char *why; };

MPEI_HIDDEN void mpai_io_msg(char *msg, size_t len, const char *fmt, ...)
  __attribute__((format(printf, 3, 4)));
MPEI_HIDDEN int mpai_mul_u64(uint64_t a, uint64_t b, uint64_t *r);
MPEI_HIDDEN int mpai_utf8_valid(const char *s, size_t n);
MPEI_HIDDEN int mpai_npy_dict(const char *p, const char *e, char *descr, size_t dlen, int *fortran,
                              int *ndim, uint64_t *shape, char *msg, size_t msglen);
MPEI_HIDDEN int mpai_npy_parse(const unsigned char *buf, size_t len, uint64_t avail, const mpe_io_opts *o,
                               mpe_io_tensor *t, uint64_t *hdr, uint64_t *nbytes, char *msg, size_t msglen,
                               struct mpai_npy_skip *sk);
/* Scan a whole text file once: count and check every number; sets the shape
   (rows x columns when every line has the same number of values, else 1-D). */
MPEI_HIDDEN int mpai_text_scan(struct mpai_text *s, FILE *fp, mpe_io_tensor *t, char *msg, size_t msglen);
MPEI_HIDDEN int mpai_text_rewind(struct mpai_text *s, FILE *fp, char *msg, size_t msglen);
MPEI_HIDDEN int mpai_text_read(struct mpai_text *s, FILE *fp, double *v, size_t max, size_t *n,
                               char *msg, size_t msglen);
/* torch.save archives (io_pt.c). mpai_pt_sniff: 1 when the archive holds <top>/data.pkl
   (prefix receives "<top>/"). mpai_pt_open runs the pickle and lists the tensors; *p must be
   freed with mpai_pt_free even on failure. mpai_pt_read gives the storage bytes of the next
   n elements of the selected tensor, in C order whatever its strides. budget (0: none) bounds
   the bytes it holds for the file (pickle, tables, a non-contiguous view's storage): past it
   the call fails with MPE_EUNSUP and says so. */
struct mpai_pt;
MPEI_HIDDEN uint64_t mpai_pt_held(const struct mpai_pt *p);
MPEI_HIDDEN int mpai_pt_sniff(zip_t *za, char *prefix, size_t plen);
MPEI_HIDDEN int mpai_pt_open(zip_t *za, const char *root_name, uint64_t budget, struct mpai_pt **p, char *msg,
                             size_t msglen);
MPEI_HIDDEN void mpai_pt_free(struct mpai_pt *p);
MPEI_HIDDEN size_t mpai_pt_count(const struct mpai_pt *p);
MPEI_HIDDEN void mpai_pt_info(const struct mpai_pt *p, size_t i, mpe_io_tensor *t, uint64_t *nbytes);
MPEI_HIDDEN size_t mpai_pt_nskipped(const struct mpai_pt *p);
MPEI_HIDDEN void mpai_pt_skipped(const struct mpai_pt *p, size_t i, const char **name, const char **dtype, const char **why);
/* the element bytes of skipped tensor i; mpai_pt_adopt lists it (after the others) as
   `type`'s bit patterns, as a --dtype rule asks (the sizes agree) */
MPEI_HIDDEN size_t mpai_pt_skipped_size(const struct mpai_pt *p, size_t i);
MPEI_HIDDEN int mpai_pt_adopt(struct mpai_pt *p, size_t i, mpe_type type);
MPEI_HIDDEN int mpai_pt_select(struct mpai_pt *p, size_t i, char *msg, size_t msglen);
MPEI_HIDDEN int mpai_pt_read(struct mpai_pt *p, unsigned char *dst, size_t n, char *msg, size_t msglen);
#endif
