/* Internal pieces shared by the tensor-file readers (not installed). */
#ifndef MPE_IO_INTERNAL_H
#define MPE_IO_INTERNAL_H
#include <stdio.h>
#include <stdint.h>
#include <zip.h>
#include "mpei.h"
#include "mpemu/io.h"

/* text reader state: a buffered scanner over the file */
#define MPEI_TEXT_BUF (1u << 16)
struct mpei_text {
  char *buf;            /* cap bytes: MPEI_TEXT_BUF, or the file's size + 1 when that is less
                           (the opener allocates it, mpe_io_close frees it) */
  size_t cap;
  size_t len, at;       /* bytes in buf, next byte to look at */
  uint64_t pos;         /* bytes of the file consumed */
  uint64_t line;
  int eof;
  int sep;              /* 0 after a value, 1 after a comma or semicolon that followed one, 2 at a line's start */
};

/* members skipped because they hold no floating-point data (io_member.c) */
struct mpei_skip { char *name; char dtype[32]; const char *why; };
struct mpei_skips { struct mpei_skip *v; size_t n, cap; };
MPEI_HIDDEN int mpei_skip_add(struct mpei_skips *s, const char *name, size_t nl, const char *dtype, const char *why);
MPEI_HIDDEN void mpei_skips_free(struct mpei_skips *s);
/* The element type the options give member `name` whose stored values are `es`
   bytes wide (0: any width, for raw files): 1 and *t when a rule applies, 0 when none does, -1 (msg set)
   when a plain-name rule names it but its values have another width. */
MPEI_HIDDEN int mpei_dtype_rule(const mpe_io_opts *o, const char *name, size_t es, mpe_type *t,
                                char *msg, size_t msglen);
/* returned by mpei_npy_parse for a member to skip: sk receives its dtype and why */
#define MPEI_SKIP (-1)
struct mpei_npy_skip { char dtype[32]; const char *why; };

MPEI_HIDDEN void mpei_io_msg(char *msg, size_t len, const char *fmt, ...)
  __attribute__((format(printf, 3, 4)));
MPEI_HIDDEN int mpei_mul_u64(uint64_t a, uint64_t b, uint64_t *r);
MPEI_HIDDEN int mpei_utf8_valid(const char *s, size_t n);
MPEI_HIDDEN int mpei_npy_dict(const char *p, const char *e, char *descr, size_t dlen, int *fortran,
                              int *ndim, uint64_t *shape, char *msg, size_t msglen);
MPEI_HIDDEN int mpei_npy_parse(const unsigned char *buf, size_t len, uint64_t avail, const mpe_io_opts *o,
                               mpe_io_tensor *t, uint64_t *hdr, uint64_t *nbytes, char *msg, size_t msglen,
                               struct mpei_npy_skip *sk);
/* Scan a whole text file once: count and check every number; sets the shape
   (rows x columns when every line has the same number of values, else 1-D). */
MPEI_HIDDEN int mpei_text_scan(struct mpei_text *s, FILE *fp, mpe_io_tensor *t, char *msg, size_t msglen);
MPEI_HIDDEN int mpei_text_rewind(struct mpei_text *s, FILE *fp, char *msg, size_t msglen);
MPEI_HIDDEN int mpei_text_read(struct mpei_text *s, FILE *fp, double *v, size_t max, size_t *n,
                               char *msg, size_t msglen);
/* torch.save archives (io_pt.c). mpei_pt_sniff: 1 when the archive holds <top>/data.pkl
   (prefix receives "<top>/"). mpei_pt_open runs the pickle and lists the tensors; *p must be
   freed with mpei_pt_free even on failure. mpei_pt_read gives the storage bytes of the next
   n elements of the selected tensor, in C order whatever its strides. */
struct mpei_pt;
MPEI_HIDDEN int mpei_pt_sniff(zip_t *za, char *prefix, size_t plen);
MPEI_HIDDEN int mpei_pt_open(zip_t *za, const char *root_name, struct mpei_pt **p, char *msg, size_t msglen);
MPEI_HIDDEN void mpei_pt_free(struct mpei_pt *p);
MPEI_HIDDEN size_t mpei_pt_count(const struct mpei_pt *p);
MPEI_HIDDEN void mpei_pt_info(const struct mpei_pt *p, size_t i, mpe_io_tensor *t, uint64_t *nbytes);
MPEI_HIDDEN size_t mpei_pt_nskipped(const struct mpei_pt *p);
MPEI_HIDDEN void mpei_pt_skipped(const struct mpei_pt *p, size_t i, const char **name, const char **dtype, const char **why);
/* the element bytes of skipped tensor i; mpei_pt_adopt lists it (after the others) as
   `type`'s bit patterns, as a --dtype rule asks (the sizes agree) */
MPEI_HIDDEN size_t mpei_pt_skipped_size(const struct mpei_pt *p, size_t i);
MPEI_HIDDEN int mpei_pt_adopt(struct mpei_pt *p, size_t i, mpe_type type);
MPEI_HIDDEN int mpei_pt_select(struct mpei_pt *p, size_t i, char *msg, size_t msglen);
MPEI_HIDDEN int mpei_pt_read(struct mpei_pt *p, unsigned char *dst, size_t n, char *msg, size_t msglen);
#endif
