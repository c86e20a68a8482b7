/* Tensor-file readers. Each format's opener fills a list of tensors with
   where their data lie; reading then streams one tensor in chunks through a
   single conversion routine. Every number a file claims (header length,
   shape, offsets, member sizes) is checked against what is really there
   before it is trusted: a hostile file gives MPE_EFORMAT and a message. */
#define _FILE_OFFSET_BITS 64
#include <config.h>
#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <jansson.h>
#include <zip.h>
#include "mpei.h"
#include "mpemu/convert.h"
#include "mpemu/io.h"
#include "io_internal.h"
#include "mpai.h"

#define DEFAULT_CHUNK (4u << 20)
#define DEFAULT_MAX_MEMBER (64ull << 30)
#define NPY_MAX_HEADER (1u << 20)
#define FP16_TABLE_MIN (1u << 14)       /* FP16 values of a tensor that make the table worth its 65,536 entries */
#define ST_MAX_HEADER (100ull << 20)   /* the safetensors library's own limit */
#define NPZ_MAX_MEMBERS 100000
#define DEFLATE_MAX_RATIO 1032         /* deflate cannot inflate more than this */

/* One tensor, compact: the name and the shape live in two arenas of the reader
   (f->names, f->dims), so a file of 200,000 small tensors costs ~60 bytes each
   plus its names, not a full mpe_io_tensor (~300 bytes) and a malloc per name. */
struct tens {
  uint64_t offset;      /* file offset of the data (npy, raw, safetensors) or header bytes to skip (npz) */
  uint64_t nbytes;
  uint64_t count;
  zip_uint64_t zindex;  /* npz member */
  size_t name;          /* offset of the name in f->names */
  size_t dims;          /* offset of the shape in f->dims */
  unsigned char ndim, dtype, value_type, fortran_order, big_endian;
};

/* a reader: one row of readers[] at the end of this file, which says how to add one */
struct reader {
  mpe_io_kind kind;
  const char *name;                        /* mpe_io_kind_name, mpanalyze --kind */
  const char *const *ext;                  /* file-name extensions, NULL-terminated */
  int (*probe)(const unsigned char *head, size_t n);   /* 1: the first bytes are this kind's */
  int (*fallback)(const mpe_io_opts *o);   /* 1: take a file nothing else claimed */
  int (*open)(mpe_io *f, const char *path, const mpe_io_opts *o, const unsigned char *head, size_t nhead);
  int (*select)(mpe_io *f, size_t i);
  int (*read)(mpe_io *f, void *values, size_t max, size_t *n);
};

struct mpe_io {
  mpe_io_kind kind;
  const struct reader *rd;   /* the row of readers[] (at the end of this file) for kind */
  FILE *fp;
  zip_t *za;
  uint64_t fsize;
  struct tens *t;
  size_t nt, cap, skipped;
  char *names;          /* every name, NUL-terminated, one after the other */
  size_t nlen, ncap;
  uint64_t *dims;       /* every shape, one after the other */
  size_t dlen, dcap;
  /* reading */
  long cur;             /* selected tensor or -1 */
  uint64_t left;        /* values still to read */
  zip_file_t *zf;
  uint64_t done, total;
  unsigned char *buf;
  size_t bufsize;
  float *tab16;         /* fp16 -> float table, made on first use */
  float tab8[256];
  int tab8_type;        /* which FP8 table is in tab8, -1 none */
  /* text */
  struct mpai_text txt;
  struct mpai_pt *pt;   /* PyTorch archives (io_pt.c) */
  struct mpai_skips sk; /* members skipped, other kinds (io_member.c) */
  uint64_t budget;      /* mpe_io_opts.max_memory (0: none) */
  uint64_t parsing;     /* bytes held while the file's header is parsed (safetensors) */
  char msg[256];
};

void mpai_io_msg(char *msg, size_t len, const char *fmt, ...)
{
  va_list ap;
  if (!msg || !len)
    return;
  va_start(ap, fmt);
  vsnprintf(msg, len, fmt, ap);
  va_end(ap);
}

#define FAIL(code, ...) do { mpai_io_msg(f->msg, sizeof f->msg, __VA_ARGS__); return (code); } while (0)

/* The bytes held for the file (its tensor tables, what parsing its header holds,
   and `more` about to be taken) against mpe_io_opts.max_memory: 0, or MPE_EUNSUP
   with the message. */
static int over_budget(mpe_io *f, uint64_t more)
{
  uint64_t held = (uint64_t)f->cap * sizeof *f->t + f->ncap + (uint64_t)f->dcap * sizeof *f->dims + f->parsing;
  held = more > UINT64_MAX - held ? UINT64_MAX : held + more;
  if (!f->budget || held <= f->budget)
    return 0;
  FAIL(MPE_EUNSUP, "reading it needs more than the memory limit of %llu bytes (%llu for its header and the list "
       "of its tensors)", (unsigned long long)f->budget, (unsigned long long)held);
}

/* sizes and names: the rows of lib/mpemu/formats.def with a file dtype */
size_t mpe_io_dtype_size(mpe_type t)
{
  return mpei_format_file_bytes(mpe_format_of(t));
}

int mpe_io_dtype_lookup(const char *name, mpe_type *t)
{
  if (!name || !t)
    return MPE_EINVAL;
  const struct mpe_format *f = mpei_format_named(name, strlen(name));
  if (!f || !mpei_format_file_bytes(f))
    return MPE_ENOTFOUND;
  *t = (mpe_type)f->type;
  return MPE_OK;
}

static const struct reader *reader_of(mpe_io_kind k);
static const struct reader *reader_guess(const char *path, const unsigned char *head, size_t n,
                                         const mpe_io_opts *o);

/* a*b with overflow detection */
int mpai_mul_u64(uint64_t a, uint64_t b, uint64_t *r)
{
  return __builtin_mul_overflow(a, b, r);
}

int mpai_utf8_valid(const char *s, size_t n)
{
  const unsigned char *p = (const unsigned char *)s;
  size_t i = 0;
  while (i < n) {
    unsigned c = p[i];
    size_t k;
    uint32_t cp;
    if (c < 0x80) { i++; continue; }
    if (c >= 0xc2 && c <= 0xdf) { k = 1; cp = c & 0x1f; }
    else if (c >= 0xe0 && c <= 0xef) { k = 2; cp = c & 0x0f; }
    else if (c >= 0xf0 && c <= 0xf4) { k = 3; cp = c & 0x07; }
    else return 0;
    if (n - i <= k)
      return 0;
    for (size_t j = 1; j <= k; j++) {
      if ((p[i + j] & 0xc0) != 0x80)
        return 0;
      cp = cp << 6 | (p[i + j] & 0x3f);
    }
    if ((k == 2 && cp < 0x800) || (k == 3 && (cp < 0x10000 || cp > 0x10ffff)) || (cp >= 0xd800 && cp <= 0xdfff))
      return 0;
    i += k + 1;
  }
  return 1;
}

#define TNAME(f, t) ((f)->names + (t)->name)


/* copy a name into f->names: its offset there, or (size_t)-1 when out of memory */
static size_t add_name(mpe_io *f, const char *name, size_t namelen)
{
  if (namelen > SIZE_MAX - 1 - f->nlen || mpai_grow((void **)&f->names, &f->ncap, f->nlen + namelen + 1, 1))
    return (size_t)-1;
  size_t at = f->nlen;
  memcpy(f->names + at, name, namelen);
  f->names[at + namelen] = 0;
  f->nlen += namelen + 1;
  return at;
}

/* a new tensor called name[0..namelen) described by *ti (its name is ignored);
   the pointer is valid until the next call. NULL when out of memory. */
static struct tens *add_tensor(mpe_io *f, const char *name, size_t namelen, const mpe_io_tensor *ti)
{
  if (mpai_grow((void **)&f->t, &f->cap, f->nt + 1, sizeof *f->t) ||
      mpai_grow((void **)&f->dims, &f->dcap, f->dlen + (size_t)ti->ndim, sizeof *f->dims))
    return NULL;
  size_t at = add_name(f, name, namelen);
  if (at == (size_t)-1)
    return NULL;
  struct tens *t = &f->t[f->nt++];
  memset(t, 0, sizeof *t);
  t->name = at;
  t->dims = f->dlen;
  if (ti->ndim > 0)   /* a 0-d tensor (one value) has no dims, and f->dims may still be NULL */
    memcpy(f->dims + f->dlen, ti->shape, (size_t)ti->ndim * sizeof *f->dims);
  f->dlen += (size_t)ti->ndim;
  t->ndim = (unsigned char)ti->ndim;
  t->count = ti->count;
  t->dtype = (unsigned char)ti->dtype;
  t->value_type = (unsigned char)ti->value_type;
  t->fortran_order = (unsigned char)!!ti->fortran_order;
  t->big_endian = (unsigned char)!!ti->big_endian;
  return t;
}

static void tens_info(const mpe_io *f, const struct tens *t, mpe_io_tensor *ti)
{
  memset(ti, 0, sizeof *ti);
  ti->name = TNAME(f, t);
  ti->dtype = (mpe_type)t->dtype;
  ti->value_type = (mpe_type)t->value_type;
  ti->ndim = t->ndim;
  if (t->ndim > 0)
    memcpy(ti->shape, f->dims + t->dims, (size_t)t->ndim * sizeof *f->dims);
  ti->count = t->count;
  ti->fortran_order = t->fortran_order;
  ti->big_endian = t->big_endian;
}

/* a member with no floating-point data: listed as skipped, with why */
static int skip_add(mpe_io *f, const char *name, size_t len, const struct mpai_npy_skip *sk)
{
  int rc = mpai_skip_add(&f->sk, name, len, sk->dtype, sk->why);
  if (rc)
    mpai_io_msg(f->msg, sizeof f->msg, "out of memory");
  return rc;
}

/* count = product of the shape, and nbytes = count * size, both without overflow */
static int shape_bytes(const mpe_io_tensor *in, size_t esize, uint64_t *count, uint64_t *nbytes)
{
  uint64_t c = 1;
  for (int d = 0; d < in->ndim; d++)
    if (mpai_mul_u64(c, in->shape[d], &c))
      return -1;
  if (mpai_mul_u64(c, esize, nbytes))
    return -1;
  *count = c;
  return 0;
}

static void shape_str(const mpe_io_tensor *t, char *s, size_t n)
{
  size_t o = 0;
  o += snprintf(s + o, n - o, "(");
  for (int d = 0; d < t->ndim && o < n; d++)
    o += snprintf(s + o, n - o, d ? ", %llu" : "%llu", (unsigned long long)t->shape[d]);
  if (o < n)
    snprintf(s + o, n - o, ")");
}

/* ------------------------------------------------------------------ .npy header */

static const char *skip_ws(const char *p, const char *e)
{
  while (p < e && (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r'))
    p++;
  return p;
}

/* a Python string literal in ' or " (no escapes in what NumPy writes) */
static const char *py_string(const char *p, const char *e, char *out, size_t outlen)
{
  if (p >= e || (*p != '\'' && *p != '"'))
    return NULL;
  char q = *p++;
  size_t n = 0;
  while (p < e && *p != q) {
    if (*p == '\\' || n + 1 >= outlen)
      return NULL;
    out[n++] = *p++;
  }
  if (p >= e)
    return NULL;
  out[n] = 0;
  return p + 1;
}

static const char *py_uint(const char *p, const char *e, uint64_t *v)
{
  uint64_t x = 0;
  const char *s = p;
  while (p < e && isdigit((unsigned char)*p)) {
    if (mpai_mul_u64(x, 10, &x) || __builtin_add_overflow(x, (uint64_t)(*p - '0'), &x))
      return NULL;
    p++;
  }
  if (p == s)
    return NULL;
  if (p < e && *p == 'L')   /* Python 2 longs */
    p++;
  *v = x;
  return p;
}

/* Parse "{'descr': '<f4', 'fortran_order': False, 'shape': (3, 4), }" */
int mpai_npy_dict(const char *p, const char *e, char *descr, size_t dlen, int *fortran,
                  int *ndim, uint64_t *shape, char *msg, size_t msglen)
{
  int seen = 0;
  p = skip_ws(p, e);
  if (p >= e || *p++ != '{')
    goto bad;
  for (;;) {
    char key[32];
    p = skip_ws(p, e);
    if (p < e && *p == '}') { p++; break; }
    if (!(p = py_string(p, e, key, sizeof key)))
      goto bad;
    p = skip_ws(p, e);
    if (p >= e || *p++ != ':')
      goto bad;
    p = skip_ws(p, e);
    if (!strcmp(key, "descr") && !(seen & 1)) {
      if (!(p = py_string(p, e, descr, dlen))) {
        mpai_io_msg(msg, msglen, ".npy header: 'descr' is not a simple type string (structured arrays are not supported)");
        return MPE_EUNSUP;
      }
      seen |= 1;
    } else if (!strcmp(key, "fortran_order") && !(seen & 2)) {
      if (e - p >= 4 && !strncmp(p, "True", 4)) { *fortran = 1; p += 4; }
      else if (e - p >= 5 && !strncmp(p, "False", 5)) { *fortran = 0; p += 5; }
      else goto bad;
      seen |= 2;
    } else if (!strcmp(key, "shape") && !(seen & 4)) {
      int n = 0;
      if (p >= e || *p++ != '(')
        goto bad;
      for (;;) {
        p = skip_ws(p, e);
        if (p < e && *p == ')') { p++; break; }
        if (n == MPE_IO_MAXDIM) {
          mpai_io_msg(msg, msglen, ".npy header: more than %d dimensions", MPE_IO_MAXDIM);
          return MPE_EFORMAT;
        }
        if (!(p = py_uint(p, e, &shape[n])))
          goto bad;
        n++;
        p = skip_ws(p, e);
        if (p < e && *p == ',') { p++; continue; }
        if (p < e && *p == ')') { p++; break; }
        goto bad;
      }
      *ndim = n;
      seen |= 4;
    } else {
      goto bad;
    }
    p = skip_ws(p, e);
    if (p < e && *p == ',') { p++; continue; }
    if (p < e && *p == '}') { p++; break; }
    goto bad;
  }
  p = skip_ws(p, e);
  if (p != e || seen != 7)
    goto bad;
  return MPE_OK;
bad:
  mpai_io_msg(msg, msglen, ".npy header is not a dictionary with 'descr', 'fortran_order' and 'shape'");
  return MPE_EFORMAT;
}

/* why a member of .npy kind c (NumPy's type character) is skipped */
static const char *npy_skip_why(char c, size_t n)
{
  switch (c) {
  case 'i': return "integer array";
  case 'u': return n == 2 || n == 1 ? "integer array (bit patterns? give a dtype for it)" : "integer array";
  case 'b': case '?': return "boolean array";
  case 'c': return "complex array";
  case 'f': return "floating-point width not supported";
  case 'V': return n == 2 ? "untyped 2-byte values: give a dtype (bf16 or fp16)" :
                   n == 1 ? "untyped 1-byte values: give a dtype (e4m3, e5m2 or another 1-byte format)" : "untyped values";
  case 'U': case 'S': case 'a': return "string array";
  case 'M': case 'm': return "date/time array";
  case 'O': return "Python objects (not read)";
  default: return "not a numeric type";
  }
}

/* the format whose .npy descriptor is "<" c (a typed floating-point one) */
static const struct mpe_format *npy_float(const char *c)
{
  size_t n;
  const struct mpe_format *tab = mpei_format_table(&n);
  for (size_t i = 0; i < n; i++)
    if (tab[i].npy && tab[i].npy[0] == '<' && !strcmp(tab[i].npy + 1, c))
      return &tab[i];
  return NULL;
}

/* descr -> dtype and byte order; V/u types need the user's dtype; a member
   with no floating-point data gives MPAI_SKIP and sk says why */
static int npy_descr(const char *d, const char *name, const mpe_io_opts *o, mpe_type *t, int *be,
                     char *msg, size_t msglen, struct mpai_npy_skip *sk)
{
  char order = d[0];
  const char *c = d + 1;
  if (order != '<' && order != '>' && order != '|' && order != '=') {
    order = '=';
    c = d;
  }
  *be = order == '>';
  char *end;
  unsigned long isz = c[0] && c[1] >= '0' && c[1] <= '9' ? strtoul(c + 1, &end, 10) : 0;
  if (isz && !*end && isz <= 16) {
    int rr = mpai_dtype_rule(o, name, isz, t, msg, msglen);
    if (rr == 1)
      return MPE_OK;
    if (rr < 0)
      return MPE_EINVAL;
  }
  const struct mpe_format *nf = npy_float(c);
  if (nf) *t = (mpe_type)nf->type;
  else if (!strcmp(c, "V2") || !strcmp(c, "V1") || !strcmp(c, "u2") || !strcmp(c, "u1")) {
    size_t n = (size_t)(c[1] - '0');
    if (!o->has_dtype) {
      snprintf(sk->dtype, sizeof sk->dtype, "%s", d);
      sk->why = npy_skip_why(c[0], n);
      return MPAI_SKIP;
    }
    if (mpe_io_dtype_size(o->dtype) != n) {
      mpai_io_msg(msg, msglen, "dtype %s has %zu-byte values but the array (%s) has %zu-byte values",
                  mpe_type_name(o->dtype), mpe_io_dtype_size(o->dtype), d, n);
      return MPE_EFORMAT;
    }
    *t = o->dtype;
  } else {
    snprintf(sk->dtype, sizeof sk->dtype, "%s", d);
    sk->why = npy_skip_why(c[0], isz);
    return MPAI_SKIP;
  }
  return MPE_OK;
}

/* Parse a whole .npy preamble held in buf[0..len). *hdr receives the header size.
   Needs len >= 12 or the whole header; returns MPE_EFORMAT on anything wrong. */
int mpai_npy_parse(const unsigned char *buf, size_t len, uint64_t avail, const mpe_io_opts *o,
                   mpe_io_tensor *t, uint64_t *hdr, uint64_t *nbytes, char *msg, size_t msglen,
                   struct mpai_npy_skip *sk)
{
  uint64_t hlen, pre;
  if (len >= 6 && !memcmp(buf, "\x93NUMPY", 6) && len < 10) {
    mpai_io_msg(msg, msglen, "truncated .npy header");
    return MPE_EFORMAT;
  }
  if (len < 10 || memcmp(buf, "\x93NUMPY", 6)) {
    mpai_io_msg(msg, msglen, "not a .npy file (bad magic)");
    return MPE_EFORMAT;
  }
  int major = buf[6];
  if (major == 1) {
    hlen = buf[8] | (uint64_t)buf[9] << 8;
    pre = 10;
  } else if (major == 2 || major == 3) {
    if (len < 12) {
      mpai_io_msg(msg, msglen, "truncated .npy header");
      return MPE_EFORMAT;
    }
    hlen = buf[8] | (uint64_t)buf[9] << 8 | (uint64_t)buf[10] << 16 | (uint64_t)buf[11] << 24;
    pre = 12;
  } else {
    mpai_io_msg(msg, msglen, "unsupported .npy version %d.%d", major, buf[7]);
    return MPE_EUNSUP;
  }
  if (hlen > NPY_MAX_HEADER) {
    mpai_io_msg(msg, msglen, ".npy header length %llu is implausibly large", (unsigned long long)hlen);
    return MPE_EFORMAT;
  }
  if (pre + hlen > avail) {
    mpai_io_msg(msg, msglen, ".npy header length %llu runs past the end of the data (%llu bytes)",
                (unsigned long long)hlen, (unsigned long long)avail);
    return MPE_EFORMAT;
  }
  if (pre + hlen > len) {
    mpai_io_msg(msg, msglen, "truncated .npy header");
    return MPE_EFORMAT;
  }
  char descr[32];
  int fortran = 0, ndim = 0;
  int rc = mpai_npy_dict((const char *)buf + pre, (const char *)buf + pre + hlen, descr, sizeof descr,
                         &fortran, &ndim, t->shape, msg, msglen);
  if (rc)
    return rc;
  int be;
  if ((rc = npy_descr(descr, t->name ? t->name : "", o, &t->dtype, &be, msg, msglen, sk)))
    return rc;
  t->ndim = ndim;
  t->fortran_order = fortran;
  t->big_endian = be && mpe_io_dtype_size(t->dtype) > 1;
  t->value_type = t->dtype == MPE_FP64 ? MPE_FP64 : MPE_FP32;
  if (shape_bytes(t, mpe_io_dtype_size(t->dtype), &t->count, nbytes)) {
    char s[128];
    shape_str(t, s, sizeof s);
    mpai_io_msg(msg, msglen, "shape %s is too large", s);
    return MPE_EFORMAT;
  }
  if (*nbytes != avail - pre - hlen) {
    char s[128];
    shape_str(t, s, sizeof s);
    mpai_io_msg(msg, msglen, "shape %s of %s needs %llu bytes of data but %llu are present", s, descr,
                (unsigned long long)*nbytes, (unsigned long long)(avail - pre - hlen));
    return MPE_EFORMAT;
  }
  *hdr = pre + hlen;
  return MPE_OK;
}

static const char *base_name(const char *path, size_t *len)
{
  const char *b = strrchr(path, '/');
  b = b ? b + 1 : path;
  const char *dot = strrchr(b, '.');
  *len = dot && dot != b ? (size_t)(dot - b) : strlen(b);
  return b;
}

/* the name of a single-tensor file's tensor: the file's base name without
   its extension (a neutral one where it is not valid UTF-8, to keep names
   printable), NUL-terminated in buf */
enum { SINGLE_NAME_MAX = 512 };
static const char *single_name(const char *path, char buf[SINGLE_NAME_MAX])
{
  size_t n;
  const char *b = base_name(path, &n);
  if (!mpai_utf8_valid(b, n))
    b = "tensor", n = 6;
  if (n >= SINGLE_NAME_MAX)
    n = SINGLE_NAME_MAX - 1;
  memcpy(buf, b, n);
  buf[n] = 0;
  return buf;
}

/* the one tensor of a single-tensor file, named after the file */
static int add_single(mpe_io *f, const char *path, const mpe_io_tensor *ti, uint64_t offset, uint64_t nbytes)
{
  char nm[SINGLE_NAME_MAX];
  single_name(path, nm);
  struct tens *t = add_tensor(f, nm, strlen(nm), ti);
  if (!t)
    FAIL(MPE_ENOMEM, "out of memory");
  t->offset = offset;
  t->nbytes = nbytes;
  return MPE_OK;
}

/* the bytes of a .npy header, from its first 12: magic, version, length (at most
   NPY_MAX_HEADER + 12; mpai_npy_parse judges the rest) */
static size_t npy_header_size(const unsigned char *b, size_t got)
{
  if (got < 12 || memcmp(b, "\x93NUMPY", 6))
    return got;
  uint64_t n = b[6] == 1 ? 10 + (uint64_t)(b[8] | b[9] << 8)
             : 12 + (uint64_t)(b[8] | b[9] << 8 | (uint64_t)b[10] << 16 | (uint64_t)b[11] << 24);
  return n > NPY_MAX_HEADER + 12 ? NPY_MAX_HEADER + 12 : (size_t)n;
}

static int open_npy(mpe_io *f, const char *path, const mpe_io_opts *o, const unsigned char *head, size_t nhead)
{
  (void)head, (void)nhead;
  /* the header's own size, not the 1 MiB a header may take */
  unsigned char pre[12];
  size_t got = fread(pre, 1, sizeof pre, f->fp);
  size_t want = npy_header_size(pre, got);
  unsigned char *hb = malloc(want > got ? want : got ? got : 1);
  if (!hb)
    FAIL(MPE_ENOMEM, "out of memory");
  memcpy(hb, pre, got);
  if (want > got)
    got += fread(hb + got, 1, want - got, f->fp);
  if (ferror(f->fp)) {
    free(hb);
    FAIL(MPE_EIO, "read error: %s", strerror(errno));
  }
  char nm[SINGLE_NAME_MAX];
  mpe_io_tensor ti;
  uint64_t offset, nbytes;
  memset(&ti, 0, sizeof ti);
  ti.name = single_name(path, nm);   /* for the dtype rules */
  struct mpai_npy_skip sk;
  int rc = mpai_npy_parse(hb, got, f->fsize, o, &ti, &offset, &nbytes, f->msg, sizeof f->msg, &sk);
  if (rc == MPAI_SKIP) {
    free(hb);
    return skip_add(f, nm, strlen(nm), &sk);
  }
  free(hb);
  return rc ? rc : add_single(f, path, &ti, offset, nbytes);
}

static int open_raw(mpe_io *f, const char *path, const mpe_io_opts *o, const unsigned char *head, size_t nhead)
{
  (void)head, (void)nhead;
  char nm[SINGLE_NAME_MAX];
  mpe_type dt = o->dtype;   /* a rule naming the file, else the dtype */
  int ruled = mpai_dtype_rule(o, single_name(path, nm), 0, &dt, NULL, 0) == 1;
  if (!o->has_dtype && !ruled)
    FAIL(MPE_EINVAL, "a raw binary file needs a dtype");
  size_t es = mpe_io_dtype_size(dt);
  if (!es)
    FAIL(MPE_EINVAL, "unknown dtype");
  mpe_io_tensor ti;
  uint64_t nbytes;
  memset(&ti, 0, sizeof ti);
  ti.dtype = dt;
  ti.value_type = dt == MPE_FP64 ? MPE_FP64 : MPE_FP32;
  if (o->ndim > 0) {
    if (o->ndim > MPE_IO_MAXDIM)
      FAIL(MPE_EINVAL, "more than %d dimensions", MPE_IO_MAXDIM);
    ti.ndim = o->ndim;
    memcpy(ti.shape, o->shape, (size_t)o->ndim * sizeof o->shape[0]);
    if (shape_bytes(&ti, es, &ti.count, &nbytes))
      FAIL(MPE_EFORMAT, "shape is too large");
    if (nbytes != f->fsize) {
      char s[128];
      shape_str(&ti, s, sizeof s);
      FAIL(MPE_EFORMAT, "shape %s of %s needs %llu bytes but the file has %llu", s, mpe_type_name(dt),
           (unsigned long long)nbytes, (unsigned long long)f->fsize);
    }
  } else {
    if (f->fsize % es)
      FAIL(MPE_EFORMAT, "file size %llu is not a multiple of %zu (%s)", (unsigned long long)f->fsize, es,
           mpe_type_name(dt));
    ti.ndim = 1;
    ti.shape[0] = ti.count = f->fsize / es;
    nbytes = f->fsize;
  }
  return add_single(f, path, &ti, 0, nbytes);
}

/* ------------------------------------------------------------------ safetensors */

static int st_dtype(const char *s, mpe_type *t, size_t *es)
{
  size_t nf;
  const struct mpe_format *tab = mpei_format_table(&nf);
  for (size_t i = 0; i < nf; i++)
    if (tab[i].st && !strcmp(s, tab[i].st)) {
      *t = (mpe_type)tab[i].type;
      *es = mpei_format_file_bytes(&tab[i]);
      return tab[i].type;
    }
  static const struct { const char *n; int t; size_t es; } d[] = {
    { "BOOL", -1, 1 }, { "U8", -1, 1 }, { "I8", -1, 1 }, { "I16", -1, 2 }, { "U16", -1, 2 },
    { "I32", -1, 4 }, { "U32", -1, 4 }, { "I64", -1, 8 }, { "U64", -1, 8 },
  };
  for (size_t i = 0; i < sizeof d / sizeof d[0]; i++)
    if (!strcmp(s, d[i].n)) {
      *t = (mpe_type)d[i].t;
      *es = d[i].es;
      return d[i].t;
    }
  *es = 0;
  return -2;
}

/* The header is walked member by member instead of being loaded whole: Jansson
   builds ~1 KB of tree per tensor entry (200,000 entries took 280 MB). The walk
   below only finds where each key and value lie; Jansson then decodes each key
   and each (small) value on its own, with its usual strictness (UTF-8, escapes,
   numbers, duplicate keys inside an entry), and frees it at once. */
#define ST_MAX_ENTRY (64u << 10)   /* text of one tensor entry: ~100 bytes in real files */

struct st_span { uint64_t b, e; size_t name; };
static int cmp_span(const void *a, const void *b)
{
  const struct st_span *x = a, *y = b;
  return x->b < y->b ? -1 : x->b > y->b ? 1 : (x->e > y->e) - (x->e < y->e);
}
static int cmp_tens(const void *a, const void *b)
{
  const struct tens *x = a, *y = b;
  return x->offset < y->offset ? -1 : x->offset > y->offset;
}
static int cmp_str(const void *a, const void *b)
{
  return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* a string that occurs twice among v[0..n) (v is sorted on the way), or NULL */
static const char *dup_name(const char **v, size_t n)
{
  if (n < 2)
    return NULL;
  qsort(v, n, sizeof *v, cmp_str);
  for (size_t i = 1; i < n; i++)
    if (!strcmp(v[i - 1], v[i]))
      return v[i];
  return NULL;
}

struct jwalk {
  const char *h;        /* the header text */
  size_t n, p;          /* its length, the position reached */
};

static void jw_ws(struct jwalk *w)
{
  while (w->p < w->n && (w->h[w->p] == ' ' || w->h[w->p] == '\t' || w->h[w->p] == '\n' || w->h[w->p] == '\r'))
    w->p++;
}

/* past the JSON string at w->p (which is '"'): 0, or -1 if it never ends */
static int jw_string(struct jwalk *w)
{
  for (size_t p = w->p + 1; p < w->n; p++) {
    if (w->h[p] == '\\')
      p++;
    else if (w->h[p] == '"') {
      w->p = p + 1;
      return 0;
    }
  }
  return -1;
}

/* past the JSON value at w->p: up to the first ',', '}' or ']' outside strings
   and brackets (Jansson checks the text itself). 0, or -1 if the header ends first. */
static int jw_value(struct jwalk *w)
{
  size_t depth = 0;
  while (w->p < w->n) {
    char c = w->h[w->p];
    if (c == '"') {
      if (jw_string(w))
        return -1;
      continue;
    }
    if (c == '{' || c == '[')
      depth++;
    else if (c == '}' || c == ']') {
      if (!depth)
        return 0;
      depth--;
    } else if (c == ',' && !depth)
      return 0;
    w->p++;
  }
  return -1;
}

/* white space and the '{' that opens an object: 1 with w->p past it, else 0 (w->p at
   what stands there instead) */
static int jw_open(struct jwalk *w)
{
  jw_ws(w);
  if (w->p >= w->n || w->h[w->p] != '{')
    return 0;
  w->p++;
  return 1;
}

/* the next member of the object being walked (w->p just past '{' or a member):
   1 with [*k, *k + *kl) the key's text (quotes included) and [*v, *v + *vl) the
   value's; 0 at the closing '}' (w->p past it); -1 malformed, *why says how */
static int jw_member(struct jwalk *w, int first, const char **k, size_t *kl, const char **v, size_t *vl,
                     const char **why)
{
  jw_ws(w);
  if (w->p < w->n && w->h[w->p] == '}' && first) {
    w->p++;
    return 0;
  }
  if (!first) {
    if (w->p < w->n && w->h[w->p] == '}') {
      w->p++;
      return 0;
    }
    if (w->p >= w->n || w->h[w->p] != ',')
      return *why = w->p >= w->n ? "unexpected end of header" : "',' or '}' expected", -1;
    w->p++;
    jw_ws(w);
  }
  if (w->p >= w->n || w->h[w->p] != '"')
    return *why = w->p >= w->n ? "unexpected end of header" : "string or '}' expected", -1;
  size_t k0 = w->p;
  if (jw_string(w))
    return *why = "unterminated string", -1;
  *k = w->h + k0;
  *kl = w->p - k0;
  jw_ws(w);
  if (w->p >= w->n || w->h[w->p] != ':')
    return *why = w->p >= w->n ? "unexpected end of header" : "':' expected", -1;
  w->p++;
  jw_ws(w);
  size_t v0 = w->p;
  if (jw_value(w))
    return *why = "unexpected end of header", -1;
  *v = w->h + v0;
  *vl = w->p - v0;
  if (*vl == 0)
    return *why = "a value expected", -1;
  return 1;
}

#define STFAIL(code, ...) do { mpai_io_msg(f->msg, sizeof f->msg, __VA_ARGS__); rc = (code); goto done; } while (0)
#define STJSON(pos, text) STFAIL(MPE_EFORMAT, "safetensors header is not valid JSON: %s (byte %zu)", (text), (size_t)(pos))

/* decode the JSON text [p, p + len) at byte `at` of the header: NULL and a message on error */
static json_t *st_decode(mpe_io *f, const char *p, size_t len, size_t at)
{
  json_error_t je;
  json_t *j = json_loadb(p, len, JSON_DECODE_ANY | JSON_REJECT_DUPLICATES, &je);
  if (!j)
    mpai_io_msg(f->msg, sizeof f->msg, "safetensors header is not valid JSON: %s (byte %zu)", je.text,
                at + (je.position > 0 ? (size_t)je.position : 0));
  return j;
}

/* st_decode of the next member's key (jw_member): 1 with *jk the key, [*v, *v + *vl)
   the value's text; 0 at the closing '}'; -1 with a message when it is not valid JSON */
static int st_member(mpe_io *f, struct jwalk *w, int first, json_t **jk, const char **v, size_t *vl)
{
  const char *k, *why;
  size_t kl;
  int m = jw_member(w, first, &k, &kl, v, vl, &why);
  if (m < 0)
    mpai_io_msg(f->msg, sizeof f->msg, "safetensors header is not valid JSON: %s (byte %zu)", why, w->p);
  if (m <= 0)
    return m;
  *jk = st_decode(f, k, kl, (size_t)(k - w->h));
  return *jk ? 1 : -1;
}

/* __metadata__: an object of strings (as the safetensors format has it), keys unique */
static int st_metadata(mpe_io *f, const char *h, size_t at, size_t len)
{
  int rc = MPE_OK;
  struct jwalk w = { h, at + len, at };
  char *keys = NULL;
  size_t *ka = NULL, nk = 0, capk = 0, klen = 0, kcap = 0;
  const char **kp = NULL;
  if (!jw_open(&w))
    STFAIL(MPE_EFORMAT, "safetensors __metadata__ is not an object");
  json_t *jk;
  const char *v;
  size_t vl;
  int m;
  for (int first = 1; (m = st_member(f, &w, first, &jk, &v, &vl)) > 0; first = 0) {
    size_t sl = json_string_length(jk);
    if (mpai_grow((void **)&keys, &kcap, klen + sl + 1, 1) || mpai_grow((void **)&ka, &capk, nk + 1, sizeof *ka)) {
      json_decref(jk);
      STFAIL(MPE_ENOMEM, "out of memory");
    }
    /* the keys kept, and the value decoded next (jansson copies it) */
    if (over_budget(f, kcap + capk * sizeof *ka + vl)) {
      json_decref(jk);
      rc = MPE_EUNSUP;
      goto done;
    }
    memcpy(keys + klen, json_string_value(jk), sl + 1);
    ka[nk++] = klen;
    klen += sl + 1;
    json_decref(jk);
    json_t *jv = st_decode(f, v, vl, (size_t)(v - h));
    if (!jv)
      { rc = MPE_EFORMAT; goto done; }
    int is_str = json_is_string(jv);
    json_decref(jv);
    if (!is_str)
      STFAIL(MPE_EFORMAT, "safetensors __metadata__ '%.64s' is not a string", keys + ka[nk - 1]);
  }
  if (m < 0)
    { rc = MPE_EFORMAT; goto done; }
  jw_ws(&w);
  if (w.p != w.n)
    STJSON(w.p, "end of __metadata__ expected");
  if (over_budget(f, kcap + capk * sizeof *ka + nk * sizeof *kp))
    { rc = MPE_EUNSUP; goto done; }
  if (nk && !(kp = malloc(nk * sizeof *kp)))
    STFAIL(MPE_ENOMEM, "out of memory");
  for (size_t i = 0; i < nk; i++)
    kp[i] = keys + ka[i];
  const char *d = dup_name(kp, nk);
  if (d)
    STFAIL(MPE_EFORMAT, "safetensors __metadata__ has the key '%.64s' twice", d);
done:
  free(keys);
  free(ka);
  free(kp);
  return rc;
}

/* one tensor entry: key (decoded) and the text of its value at byte `at` */
static int st_entry(mpe_io *f, const mpe_io_opts *o, const char *key, size_t keylen, const char *v, size_t vl,
                    size_t at, uint64_t hlen, uint64_t dsize, struct st_span *sp)
{
  int rc = MPE_OK;
  json_t *jv = NULL;
  if (vl > ST_MAX_ENTRY)
    STFAIL(MPE_EFORMAT, "safetensors entry '%.64s' is %zu bytes of JSON (at most %u expected)", key, vl, ST_MAX_ENTRY);
  if (!(jv = st_decode(f, v, vl, at)))
    return MPE_EFORMAT;
  json_t *jd = json_object_get(jv, "dtype"), *js = json_object_get(jv, "shape"),
         *jo = json_object_get(jv, "data_offsets");
  if (!json_is_object(jv) || !json_is_string(jd) || !json_is_array(js) || !json_is_array(jo) ||
      json_array_size(jo) != 2 || !json_is_integer(json_array_get(jo, 0)) ||
      !json_is_integer(json_array_get(jo, 1)))
    STFAIL(MPE_EFORMAT, "safetensors entry '%.64s' lacks dtype, shape or data_offsets [begin, end]", key);
  mpe_io_tensor ti;
  memset(&ti, 0, sizeof ti);
  size_t es;
  int dt = st_dtype(json_string_value(jd), &ti.dtype, &es);
  if (dt == -2)
    STFAIL(MPE_EFORMAT, "safetensors entry '%.64s' has unknown dtype '%.16s'", key, json_string_value(jd));
  if (json_array_size(js) > MPE_IO_MAXDIM)
    STFAIL(MPE_EFORMAT, "safetensors entry '%.64s' has more than %d dimensions", key, MPE_IO_MAXDIM);
  ti.ndim = (int)json_array_size(js);
  for (int d = 0; d < ti.ndim; d++) {
    json_t *x = json_array_get(js, (size_t)d);
    if (!json_is_integer(x) || json_integer_value(x) < 0)
      STFAIL(MPE_EFORMAT, "safetensors entry '%.64s' has a bad shape", key);
    ti.shape[d] = (uint64_t)json_integer_value(x);
  }
  json_int_t b = json_integer_value(json_array_get(jo, 0)), e = json_integer_value(json_array_get(jo, 1));
  uint64_t nb;
  if (shape_bytes(&ti, es, &ti.count, &nb))
    STFAIL(MPE_EFORMAT, "safetensors entry '%.64s': shape is too large", key);
  if (b < 0 || e < b || (uint64_t)e > dsize)
    STFAIL(MPE_EFORMAT, "safetensors entry '%.64s': data_offsets [%lld, %lld] outside the %llu data bytes",
           key, (long long)b, (long long)e, (unsigned long long)dsize);
  if ((uint64_t)(e - b) != nb)
    STFAIL(MPE_EFORMAT, "safetensors entry '%.64s': data_offsets span %llu bytes but shape x dtype needs %llu",
           key, (unsigned long long)(e - b), (unsigned long long)nb);
  sp->b = (uint64_t)b;
  sp->e = (uint64_t)e;
  int rr = mpai_dtype_rule(o, key, es, &ti.dtype, f->msg, sizeof f->msg);   /* --dtype NAME=TYPE */
  if (rr < 0) {
    rc = MPE_EINVAL;
    goto done;
  }
  if (rr == 1)
    dt = (int)ti.dtype;
  if (dt < 0) {   /* validated, not read: listed as skipped; its name kept for messages */
    const char *sd = json_string_value(jd);
    if (mpai_skip_add(&f->sk, key, keylen, sd, !strcmp(sd, "BOOL") ? "boolean tensor" : "integer tensor") ||
        (sp->name = add_name(f, key, keylen)) == (size_t)-1)
      STFAIL(MPE_ENOMEM, "out of memory");
    goto done;
  }
  ti.value_type = ti.dtype == MPE_FP64 ? MPE_FP64 : MPE_FP32;
  struct tens *t = add_tensor(f, key, keylen, &ti);
  if (!t)
    STFAIL(MPE_ENOMEM, "out of memory");
  t->offset = 8 + hlen + (uint64_t)b;
  t->nbytes = nb;
  sp->name = t->name;
done:
  json_decref(jv);
  return rc;
}

static int open_safetensors(mpe_io *f, const char *path, const mpe_io_opts *o, const unsigned char *head,
                            size_t nhead)
{
  (void)path, (void)head, (void)nhead;
  unsigned char lb[8];
  if (f->fsize < 8 || fread(lb, 1, 8, f->fp) != 8)
    FAIL(MPE_EFORMAT, "too short for a safetensors file (%llu bytes)", (unsigned long long)f->fsize);
  uint64_t n = 0;
  for (int i = 7; i >= 0; i--)
    n = n << 8 | lb[i];
  if (n > f->fsize - 8)
    FAIL(MPE_EFORMAT, "safetensors header length %llu runs past the end of the file (%llu bytes)",
         (unsigned long long)n, (unsigned long long)f->fsize);
  if (n > ST_MAX_HEADER)
    FAIL(MPE_EFORMAT, "safetensors header length %llu is implausibly large", (unsigned long long)n);
  if (n < 2)
    FAIL(MPE_EFORMAT, "safetensors header is empty");
  if (over_budget(f, n))
    return MPE_EUNSUP;
  f->parsing = n;   /* the header, until it is parsed */
  char *h = malloc(n);
  if (!h)
    FAIL(MPE_ENOMEM, "out of memory");
  if (fread(h, 1, n, f->fp) != n) {
    free(h);
    FAIL(MPE_EFORMAT, "truncated safetensors header");
  }
  int rc = MPE_OK, meta = 0;
  uint64_t dsize = f->fsize - 8 - n;
  struct st_span *sp = NULL;
  size_t nsp = 0, capsp = 0;
  const char **names = NULL;
  struct jwalk w = { h, (size_t)n, 0 };
  if (!jw_open(&w)) {
    /* a JSON value of another kind, or not JSON at all */
    if (w.p < w.n && strchr("[\"-0123456789tfn", h[w.p]))
      STFAIL(MPE_EFORMAT, "safetensors header is not a JSON object");
    STJSON(w.p, w.p < w.n ? "'{' expected" : "no JSON text");
  }
  json_t *jk;
  const char *v;
  size_t vl;
  int m;
  for (int first = 1; (m = st_member(f, &w, first, &jk, &v, &vl)) > 0; first = 0) {
    const char *key = json_string_value(jk);
    if (!strcmp(key, "__metadata__")) {
      json_decref(jk);
      if (meta++)
        STFAIL(MPE_EFORMAT, "safetensors header has __metadata__ twice");
      if ((rc = st_metadata(f, h, (size_t)(v - h), vl)))
        goto done;
      continue;
    }
    if (mpai_grow((void **)&sp, &capsp, nsp + 1, sizeof *sp)) {
      json_decref(jk);
      STFAIL(MPE_ENOMEM, "out of memory");
    }
    if (over_budget(f, capsp * sizeof *sp + vl)) {   /* the spans, the entry decoded next */
      json_decref(jk);
      rc = MPE_EUNSUP;
      goto done;
    }
    rc = st_entry(f, o, key, json_string_length(jk), v, vl, (size_t)(v - h), n, dsize, &sp[nsp]);
    json_decref(jk);
    if (rc)
      goto done;
    nsp++;
  }
  if (m < 0)
    { rc = MPE_EFORMAT; goto done; }
  jw_ws(&w);
  if (w.p != w.n)
    STJSON(w.p, "end of header expected");
  free(h);
  h = NULL;
  f->parsing = 0;
  /* every key once: the names of all entries, sorted */
  if (over_budget(f, capsp * sizeof *sp + nsp * sizeof *names))
    { rc = MPE_EUNSUP; goto done; }
  if (nsp && !(names = malloc(nsp * sizeof *names)))
    STFAIL(MPE_ENOMEM, "out of memory");
  for (size_t i = 0; i < nsp; i++)
    names[i] = f->names + sp[i].name;
  const char *d = dup_name(names, nsp);
  if (d)
    STFAIL(MPE_EFORMAT, "safetensors header is not valid JSON: duplicate object key '%.64s'", d);
  if (nsp > 1)     /* qsort wants a non-NULL array even for 0 elements */
    qsort(sp, nsp, sizeof *sp, cmp_span);
  for (size_t i = 1; i < nsp; i++)
    if (sp[i].b < sp[i - 1].e)
      STFAIL(MPE_EFORMAT, "safetensors entries '%.64s' and '%.64s' overlap", f->names + sp[i - 1].name,
             f->names + sp[i].name);
  if (f->nt > 1)   /* f->t is NULL when no entry is a float tensor */
    qsort(f->t, f->nt, sizeof *f->t, cmp_tens);
done:
  f->parsing = 0;
  free(h);
  free(sp);
  free(names);
  return rc;
}

/* ------------------------------------------------------------------ .npz */

static int zip_msg(mpe_io *f, int code, const char *what, zip_error_t *ze)
{
  mpai_io_msg(f->msg, sizeof f->msg, "%s: %s", what, zip_error_strerror(ze));
  return code;
}

/* torch.save archives: the pickle and the views are io_pt.c's */
static int open_pt(mpe_io *f, const char *path, const mpe_io_opts *o)
{
  size_t bl;
  const char *b = base_name(path, &bl);
  char root[128];
  snprintf(root, sizeof root, "%.*s", (int)(bl < 127 ? bl : 127), mpai_utf8_valid(b, bl) ? b : "tensor");
  f->kind = MPE_IO_PT;
  f->rd = reader_of(MPE_IO_PT);
  int rc = mpai_pt_open(f->za, root, o->max_memory, &f->pt, f->msg, sizeof f->msg);
  /* integer and bool tensors a --dtype rule names are read as that type's bit patterns */
  for (size_t k = rc ? 0 : mpai_pt_nskipped(f->pt); k-- > 0;) {
    const char *nm, *dt, *why;
    mpai_pt_skipped(f->pt, k, &nm, &dt, &why);
    mpe_type t;
    int r = mpai_dtype_rule(o, nm, mpai_pt_skipped_size(f->pt, k), &t, f->msg, sizeof f->msg);
    if (r < 0)
      return MPE_EINVAL;
    if (r > 0 && (rc = mpai_pt_adopt(f->pt, k, t)))
      FAIL(rc, "out of memory");
  }
  /* the list copied here (an entry, a name and a shape per tensor) beside what the pickle's reader holds */
  uint64_t need = rc ? 0 : mpai_pt_held(f->pt);
  for (size_t i = 0; o->max_memory && !rc && i < mpai_pt_count(f->pt); i++) {
    mpe_io_tensor ti;
    uint64_t nb;
    mpai_pt_info(f->pt, i, &ti, &nb);
    need += sizeof *f->t + strlen(ti.name) + 1 + 8 * (uint64_t)ti.ndim;
  }
  if (o->max_memory && need > o->max_memory)
    FAIL(MPE_EUNSUP, "its %zu tensors need more than the memory limit of %llu bytes for the list of them",
         mpai_pt_count(f->pt), (unsigned long long)o->max_memory);
  for (size_t i = 0; !rc && i < mpai_pt_count(f->pt); i++) {
    mpe_io_tensor ti;
    uint64_t nb;
    mpai_pt_info(f->pt, i, &ti, &nb);
    if (mpai_dtype_rule(o, ti.name, mpe_io_dtype_size(ti.dtype), &ti.dtype, f->msg, sizeof f->msg) < 0)
      return MPE_EINVAL;
    ti.value_type = ti.dtype == MPE_FP64 ? MPE_FP64 : MPE_FP32;
    struct tens *t = add_tensor(f, ti.name, strlen(ti.name), &ti);
    if (!t)
      FAIL(MPE_ENOMEM, "out of memory");
    t->nbytes = nb;
  }
  f->skipped += rc ? 0 : mpai_pt_nskipped(f->pt);
  return rc;
}

static int open_npz(mpe_io *f, const char *path, const mpe_io_opts *o)
{
  int zerr = 0;
  f->za = zip_open(path, ZIP_RDONLY | ZIP_CHECKCONS, &zerr);
  if (!f->za) {
    zip_error_t ze;
    zip_error_init_with_code(&ze, zerr);
    int rc = zip_msg(f, zerr == ZIP_ER_OPEN || zerr == ZIP_ER_READ ? MPE_EIO : MPE_EFORMAT, "not a readable zip archive", &ze);
    zip_error_fini(&ze);
    return rc;
  }
  zip_int64_t ne = zip_get_num_entries(f->za, 0);
  if (ne < 0 || ne > NPZ_MAX_MEMBERS)
    FAIL(MPE_EFORMAT, "zip archive claims %lld members", (long long)ne);
  char top[256];
  if (f->kind == MPE_IO_PT || (!o->kind && mpai_pt_sniff(f->za, top, sizeof top)))
    return open_pt(f, path, o);
  uint64_t cap = o->max_member_bytes ? o->max_member_bytes : DEFAULT_MAX_MEMBER;
  unsigned char *hb = NULL;   /* a member's header: grown to the largest one, not the 1 MiB a header may take */
  size_t hcap = 0;
  int rc = MPE_OK;
  for (zip_int64_t i = 0; i < ne && !rc; i++) {
    zip_stat_t st;
    zip_stat_init(&st);
    if (zip_stat_index(f->za, (zip_uint64_t)i, ZIP_FL_ENC_RAW, &st) ||
        !(st.valid & (ZIP_STAT_NAME | ZIP_STAT_SIZE | ZIP_STAT_COMP_SIZE | ZIP_STAT_COMP_METHOD))) {
      mpai_io_msg(f->msg, sizeof f->msg, "zip member %lld: unreadable directory entry", (long long)i);
      rc = MPE_EFORMAT;
      break;
    }
    size_t nl = strlen(st.name);
    if (nl && st.name[nl - 1] == '/')
      continue;   /* a directory */
    if (!mpai_utf8_valid(st.name, nl)) {
      mpai_io_msg(f->msg, sizeof f->msg, "zip member %lld has a name that is not valid UTF-8", (long long)i);
      rc = MPE_EFORMAT;
      break;
    }
    if (nl < 5 || strcmp(st.name + nl - 4, ".npy")) {
      mpai_io_msg(f->msg, sizeof f->msg, "zip member '%.64s' is not a .npy array", st.name);
      rc = MPE_EFORMAT;
      break;
    }
    if (st.comp_method != ZIP_CM_STORE && st.comp_method != ZIP_CM_DEFLATE) {
      mpai_io_msg(f->msg, sizeof f->msg, "zip member '%.64s' uses compression method %d (only stored and deflated are supported)",
                  st.name, (int)st.comp_method);
      rc = MPE_EUNSUP;
      break;
    }
    if (st.size > cap) {
      mpai_io_msg(f->msg, sizeof f->msg, "zip member '%.64s' would inflate to %llu bytes, over the limit of %llu",
                  st.name, (unsigned long long)st.size, (unsigned long long)cap);
      rc = MPE_EFORMAT;
      break;
    }
    if ((st.comp_method == ZIP_CM_STORE && st.size != st.comp_size) ||
        (st.comp_method == ZIP_CM_DEFLATE && st.size / DEFLATE_MAX_RATIO > st.comp_size + 64)) {
      mpai_io_msg(f->msg, sizeof f->msg, "zip member '%.64s' claims %llu bytes from %llu compressed: impossible (zip bomb?)",
                  st.name, (unsigned long long)st.size, (unsigned long long)st.comp_size);
      rc = MPE_EFORMAT;
      break;
    }
    zip_file_t *zf = zip_fopen_index(f->za, (zip_uint64_t)i, 0);
    if (!zf) {
      rc = zip_msg(f, MPE_EFORMAT, "cannot open zip member", zip_get_error(f->za));
      break;
    }
    /* the first 12 bytes tell the header's size; then the rest of it */
    size_t want = st.size < 12 ? (size_t)st.size : 12, got = 0;
    for (int pass = 0; pass < 2 && !rc; pass++) {
      if (want > hcap) {
        unsigned char *nb = realloc(hb, want);
        if (!nb) {
          mpai_io_msg(f->msg, sizeof f->msg, "out of memory");
          rc = MPE_ENOMEM;
          break;
        }
        hb = nb, hcap = want;
      }
      while (got < want) {
        zip_int64_t r = zip_fread(zf, hb + got, want - got);
        if (r <= 0)
          break;
        got += (size_t)r;
      }
      if (pass == 0 && got == want) {
        size_t h = npy_header_size(hb, got);
        want = h < st.size ? h : (size_t)st.size;
      }
    }
    zip_fclose(zf);
    if (rc)
      break;
    if (got < 10 || got < (st.size < 12 ? st.size : 10)) {
      mpai_io_msg(f->msg, sizeof f->msg, "zip member '%.64s' is truncated or corrupt", st.name);
      rc = MPE_EFORMAT;
      break;
    }
    char m[200], nm[SINGLE_NAME_MAX];
    mpe_io_tensor ti;
    uint64_t offset, nbytes;
    memset(&ti, 0, sizeof ti);
    size_t ml = nl - 4 < SINGLE_NAME_MAX ? nl - 4 : SINGLE_NAME_MAX - 1;
    memcpy(nm, st.name, ml);
    nm[ml] = 0;
    ti.name = nm;   /* for the dtype rules */
    struct mpai_npy_skip sk;
    rc = mpai_npy_parse(hb, got, st.size, o, &ti, &offset, &nbytes, m, sizeof m, &sk);
    if (rc == MPAI_SKIP) {
      if ((rc = skip_add(f, st.name, nl - 4, &sk)))
        break;
      continue;
    }
    if (rc) {
      mpai_io_msg(f->msg, sizeof f->msg, "member '%.64s': %s", st.name, m);
      break;
    }
    struct tens *t = add_tensor(f, st.name, nl - 4, &ti);
    if (!t) {
      rc = MPE_ENOMEM;
      mpai_io_msg(f->msg, sizeof f->msg, "out of memory");
      break;
    }
    t->offset = offset;
    t->nbytes = nbytes;
    t->zindex = (zip_uint64_t)i;
  }
  free(hb);
  return rc;
}

/* ------------------------------------------------------------------ open/close */

/* .npz and torch.save archives are both zips; open_npz tells them apart by
   content. A bare pickle (what torch.save wrote before PyTorch 1.6) is refused
   here, named, rather than failing as a broken zip. */
static int open_zip(mpe_io *f, const char *path, const mpe_io_opts *o, const unsigned char *head, size_t nhead)
{
  if (nhead >= 2 && head[0] == 0x80)
    FAIL(MPE_EUNSUP, "a bare pickle (torch.save before PyTorch 1.6, or pickle.dump) is not supported: "
         "re-save it with torch.save from PyTorch >= 1.6 (the zip format)");
  fclose(f->fp);
  f->fp = NULL;
  return open_npz(f, path, o);
}

static int open_text(mpe_io *f, const char *path, const mpe_io_opts *o, const unsigned char *head, size_t nhead)
{
  (void)o, (void)head, (void)nhead;
  mpe_io_tensor ti;
  memset(&ti, 0, sizeof ti);
  /* the scanner's buffer: the whole file when it is small, so that a short file
     costs a short allocation */
  f->txt.cap = f->fsize < MPAI_TEXT_BUF ? (size_t)f->fsize + 1 : MPAI_TEXT_BUF;
  if (!(f->txt.buf = malloc(f->txt.cap)))
    FAIL(MPE_ENOMEM, "out of memory");
  int rc = mpai_text_scan(&f->txt, f->fp, &ti, f->msg, sizeof f->msg);
  return rc ? rc : add_single(f, path, &ti, 0, f->fsize);
}

int mpe_io_open(mpe_io **out, const char *path, const mpe_io_opts *o, char *msg, size_t msglen)
{
  MPEI_FENV_GUARD();
  static const mpe_io_opts defaults;
  if (msg && msglen)
    msg[0] = 0;
  if (out)
    *out = NULL;   /* the constructor convention (mpemu/core.h): NULL on every failure */
  if (!out || !path) {
    mpai_io_msg(msg, msglen, "invalid argument");
    return MPE_EINVAL;
  }
  if (!o)
    o = &defaults;
  if ((o->kind != MPE_IO_AUTO && !reader_of(o->kind)) || o->ndim < 0 || o->ndim > MPE_IO_MAXDIM ||
      (o->has_dtype && !mpe_io_dtype_size(o->dtype)) || (o->nrules && !o->rules)) {
    mpai_io_msg(msg, msglen, "invalid reader options");
    return MPE_EINVAL;
  }
  mpe_io *f = calloc(1, sizeof *f);
  if (!f) {
    mpai_io_msg(msg, msglen, "out of memory");
    return MPE_ENOMEM;
  }
  for (size_t r = 0; r < o->nrules; r++)
    if (!o->rules[r].pattern || !mpe_io_dtype_size(o->rules[r].dtype)) {
      mpai_io_msg(msg, msglen, "invalid reader options (dtype rule %zu)", r);
      free(f);
      return MPE_EINVAL;
    }
  f->cur = -1;
  f->tab8_type = -1;
  f->budget = o->max_memory;
  f->bufsize = o->chunk_bytes ? o->chunk_bytes : DEFAULT_CHUNK;
  if (f->bufsize < 4096)
    f->bufsize = 4096;
  f->bufsize &= ~(size_t)7;
  int rc = MPE_OK;
  struct stat sb;
  int orc = mpai_fopen_regular(path, &f->fp);
  if (orc) {
    if (orc < 0)
      mpai_io_msg(f->msg, sizeof f->msg, "not a regular file");
    else
      mpai_io_msg(f->msg, sizeof f->msg, "cannot open: %s", strerror(orc));
    rc = MPE_EIO;
    goto fail;
  }
  fstat(fileno(f->fp), &sb);   /* succeeded just now on the same descriptor */
  f->fsize = (uint64_t)sb.st_size;
  unsigned char mg[8];
  size_t nm = fread(mg, 1, sizeof mg, f->fp);
  rewind(f->fp);
  f->rd = o->kind ? reader_of(o->kind) : reader_guess(path, mg, nm, o);
  if (!f->rd) {
    mpai_io_msg(f->msg, sizeof f->msg, "unknown file type (expected .npy, .npz, .safetensors, .csv/.txt, or raw with a dtype)");
    rc = MPE_EFORMAT;
    goto fail;
  }
  f->kind = f->rd->kind;
  rc = f->rd->open(f, path, o, mg, nm);
  if (rc)
    goto fail;
  /* the read buffer need hold no more than the largest tensor (and, for npz
     members, the header bytes skipped through it): a file of small tensors
     costs a small buffer, and every read still takes what a full-size one would */
  uint64_t need = 64;
  for (size_t i = 0; i < f->nt && need < f->bufsize; i++) {
    const struct tens *t = &f->t[i];
    size_t es = mpe_io_dtype_size((mpe_type)t->dtype);
    uint64_t b = t->nbytes;
    if (es && t->count > b / es)
      b = t->count > UINT64_MAX / es ? UINT64_MAX : t->count * es;
    if (f->rd->kind == MPE_IO_NPZ && t->offset > b)
      b = t->offset;
    if (b > need)
      need = b;
  }
  if (need < f->bufsize)
    f->bufsize = (size_t)(need + 7) & ~(size_t)7;
  if (!(f->buf = malloc(f->bufsize))) {
    rc = MPE_ENOMEM;
    goto fail;
  }
  for (size_t i = 0; i < f->nt; i++)
    f->total += f->t[i].nbytes;
  /* the lists are complete: give back what doubling left unused */
  if (f->nt < f->cap) {
    struct tens *t = realloc(f->t, f->nt * sizeof *f->t);
    if (t || !f->nt)
      f->t = t, f->cap = f->nt;
  }
  *out = f;
  return MPE_OK;
fail:
  mpai_io_msg(msg, msglen, "%s", f->msg[0] ? f->msg : mpe_strerror(rc));
  mpe_io_close(f);
  return rc;
}

void mpe_io_close(mpe_io *f)
{
  MPEI_FENV_GUARD();
  if (!f)
    return;
  if (f->zf)
    zip_fclose(f->zf);
  mpai_pt_free(f->pt);
  mpai_skips_free(&f->sk);
  if (f->za)
    zip_discard(f->za);
  if (f->fp)
    fclose(f->fp);
  free(f->t);
  free(f->names);
  free(f->dims);
  free(f->buf);
  free(f->txt.buf);
  free(f->tab16);
  free(f);
}

mpe_io_kind mpe_io_kind_of(const mpe_io *f) { return f ? f->kind : MPE_IO_AUTO; }
size_t mpe_io_count(const mpe_io *f) { return f ? f->nt : 0; }
size_t mpe_io_skipped(const mpe_io *f) { return f ? f->skipped + f->sk.n : 0; }

int mpe_io_skipped_info(const mpe_io *f, size_t i, const char **name, const char **dtype, const char **why)
{
  MPEI_FENV_GUARD();
  if (!f || !name || !dtype || !why || i >= mpe_io_skipped(f))
    return MPE_EINVAL;
  if (i < f->skipped) {
    mpai_pt_skipped(f->pt, i, name, dtype, why);
  } else {
    const struct mpai_skip *k = &f->sk.v[i - f->skipped];
    *name = k->name;
    *dtype = k->dtype;
    *why = k->why;
  }
  return MPE_OK;
}
const char *mpe_io_message(const mpe_io *f) { return f ? f->msg : ""; }
uint64_t mpe_io_bytes_done(const mpe_io *f) { return f ? f->done : 0; }
uint64_t mpe_io_bytes_total(const mpe_io *f) { return f ? f->total : 0; }

int mpe_io_info(const mpe_io *f, size_t i, mpe_io_tensor *t)
{
  MPEI_FENV_GUARD();
  if (!f || !t || i >= f->nt)
    return MPE_EINVAL;
  tens_info(f, &f->t[i], t);
  return MPE_OK;
}

int mpe_io_find(const mpe_io *f, const char *name, size_t *i)
{
  MPEI_FENV_GUARD();
  if (!f || !name || !i)
    return MPE_EINVAL;
  for (size_t k = 0; k < f->nt; k++)
    if (!strcmp(TNAME(f, &f->t[k]), name)) {
      *i = k;
      return MPE_OK;
    }
  return MPE_ENOTFOUND;
}

/* ------------------------------------------------------------------ reading */

/* the selects: put the reader at the first byte of tensor i's data */
static int select_seek(mpe_io *f, size_t i)
{
  if (fseeko(f->fp, (off_t)f->t[i].offset, SEEK_SET))
    FAIL(MPE_EIO, "seek failed: %s", strerror(errno));
  return MPE_OK;
}

static int select_member(mpe_io *f, size_t i)
{
  struct tens *t = &f->t[i];
  if (!(f->zf = zip_fopen_index(f->za, t->zindex, 0)))
    return zip_msg(f, MPE_EFORMAT, "cannot open zip member", zip_get_error(f->za));
  uint64_t skip = t->offset;
  while (skip) {
    size_t c = skip < f->bufsize ? (size_t)skip : f->bufsize;
    zip_int64_t r = zip_fread(f->zf, f->buf, c);
    if (r <= 0)
      FAIL(MPE_EFORMAT, "member '%.64s': truncated or corrupt", TNAME(f, t));
    skip -= (uint64_t)r;
  }
  return MPE_OK;
}

static int select_text(mpe_io *f, size_t i)
{
  (void)i;
  return mpai_text_rewind(&f->txt, f->fp, f->msg, sizeof f->msg);
}

static int select_pt(mpe_io *f, size_t i)
{
  return mpai_pt_select(f->pt, i, f->msg, sizeof f->msg);
}

int mpe_io_select(mpe_io *f, size_t i)
{
  MPEI_FENV_GUARD();
  if (!f || i >= f->nt)
    return MPE_EINVAL;
  struct tens *t = &f->t[i];
  f->msg[0] = 0;
  f->cur = -1;
  if (f->zf) {
    zip_fclose(f->zf);
    f->zf = NULL;
  }
  int rc = f->rd->select(f, i);
  if (rc)
    return rc;
  f->cur = (long)i;
  f->left = t->count;
  return MPE_OK;
}

/* the fetchers: exactly n bytes of the current tensor's stored data */
static int fetch_file(mpe_io *f, void *dst, size_t n)
{
  size_t got = fread(dst, 1, n, f->fp);
  if (got != n) {
    if (ferror(f->fp))
      FAIL(MPE_EIO, "read error: %s", strerror(errno));
    FAIL(MPE_EFORMAT, "data of '%.64s' end early (the file shrank?)", TNAME(f, &f->t[f->cur]));
  }
  return MPE_OK;
}

static int fetch_member(mpe_io *f, void *dst, size_t n)
{
  struct tens *t = &f->t[f->cur];
  size_t got = 0;
  while (got < n) {
    zip_int64_t r = zip_fread(f->zf, (char *)dst + got, n - got);
    if (r < 0)
      FAIL(MPE_EFORMAT, "member '%.64s': %s", TNAME(f, t), zip_file_strerror(f->zf));
    if (r == 0)
      FAIL(MPE_EFORMAT, "member '%.64s': data end early", TNAME(f, t));
    got += (size_t)r;
  }
  return MPE_OK;
}

static int fetch_pt(mpe_io *f, void *dst, size_t n)
{
  return mpai_pt_read(f->pt, dst, n / mpe_io_dtype_size((mpe_type)f->t[f->cur].dtype), f->msg, sizeof f->msg);
}

/* after the last value of a member: it must end there and pass its CRC */
static int finish_member(mpe_io *f)
{
  char c;
  zip_int64_t r = zip_fread(f->zf, &c, 1);
  if (r < 0)
    FAIL(MPE_EFORMAT, "member '%.64s': %s", TNAME(f, &f->t[f->cur]), zip_file_strerror(f->zf));
  if (r > 0)
    FAIL(MPE_EFORMAT, "member '%.64s' is longer than declared", TNAME(f, &f->t[f->cur]));
  zip_fclose(f->zf);
  f->zf = NULL;
  return MPE_OK;
}

static void bswap_n(unsigned char *p, size_t n, size_t es)
{
  for (size_t i = 0; i < n; i++, p += es)
    for (size_t a = 0, b = es - 1; a < b; a++, b--) {
      unsigned char c = p[a];
      p[a] = p[b];
      p[b] = c;
    }
}

/* the decoding tables for dt; the FP16 one (65,536 entries) only for a tensor
   long enough to repay it, shorter ones are decoded value by value */
static int make_tables(mpe_io *f, mpe_type dt, uint64_t count)
{
  if (dt == MPE_FP16 && !f->tab16 && count >= FP16_TABLE_MIN) {
    if (!(f->tab16 = malloc(65536 * sizeof(float))))
      FAIL(MPE_ENOMEM, "out of memory");
    for (uint32_t h = 0; h < 65536; h++)
      f->tab16[h] = mpe_fp16_to_fp32((uint16_t)h);
  }
  if (mpe_io_dtype_size(dt) == 1 && f->tab8_type != (int)dt) {
    const struct mpe_format *fm = mpe_format_of(dt);
    for (int v = 0; v < 256; v++)
      f->tab8[v] = (float)mpei_decode((uint32_t)v, fm);
    f->tab8_type = (int)dt;
  }
  return MPE_OK;
}

/* Values of a stored (binary) tensor: a chunk of bytes from `fetch`, converted */
static int read_stored(mpe_io *f, void *values, size_t max, size_t *n, int (*fetch)(mpe_io *, void *, size_t))
{
  struct tens *t = &f->t[f->cur];
  mpe_type dt = (mpe_type)t->dtype;
  size_t es = mpe_io_dtype_size(dt);
  size_t k = f->bufsize / es;
  if (k > max)
    k = max;
  if (k > f->left)
    k = (size_t)f->left;
  if (k == 0)
    return MPE_OK;
  int rc = make_tables(f, dt, t->count);
  if (rc)
    return rc;
  int direct = (dt == MPE_FP32 || dt == MPE_FP64);
  unsigned char *src = direct ? values : f->buf;
  if ((rc = fetch(f, src, k * es)))
    return rc;
  f->done += k * es;
  if (t->big_endian)
    bswap_n(src, k, es);
  float *y = values;
  switch (dt) {
  case MPE_FP16:
    for (size_t i = 0; i < k; i++) {
      uint16_t h;
      memcpy(&h, src + 2 * i, 2);
      y[i] = f->tab16 ? f->tab16[h] : mpe_fp16_to_fp32(h);
    }
    break;
  case MPE_BF16:
    for (size_t i = 0; i < k; i++) {
      uint16_t h;
      memcpy(&h, src + 2 * i, 2);
      y[i] = mpei_u2f((uint32_t)h << 16);
    }
    break;
  case MPE_FP32: case MPE_FP64:   /* read in place */
    break;
  default:   /* the one-byte formats */
    for (size_t i = 0; i < k; i++)
      y[i] = f->tab8[src[i]];
    break;
  }
  f->left -= k;
  *n = k;
  return MPE_OK;
}

/* the reads: the next values of the selected tensor (*n is 0 on entry) */
static int read_file(mpe_io *f, void *values, size_t max, size_t *n)
{
  return read_stored(f, values, max, n, fetch_file);
}

static int read_member(mpe_io *f, void *values, size_t max, size_t *n)
{
  int rc = read_stored(f, values, max, n, fetch_member);
  if (!rc && f->left == 0 && f->zf)
    rc = finish_member(f);
  return rc;
}

static int read_pt(mpe_io *f, void *values, size_t max, size_t *n)
{
  return read_stored(f, values, max, n, fetch_pt);
}

static int read_text(mpe_io *f, void *values, size_t max, size_t *n)
{
  int rc = mpai_text_read(&f->txt, f->fp, values, max, n, f->msg, sizeof f->msg);
  if (rc)
    return rc;
  if (*n > f->left)
    FAIL(MPE_EFORMAT, "the file changed while it was read");
  f->left -= *n;
  f->done = f->txt.pos;
  return MPE_OK;
}

int mpe_io_read(mpe_io *f, void *values, size_t max, size_t *n)
{
  MPEI_FENV_GUARD();
  if (!f || !n || (!values && max))
    return MPE_EINVAL;
  *n = 0;
  if (f->cur < 0)
    FAIL(MPE_EINVAL, "no tensor selected");
  return f->rd->read(f, values, max, n);
}

int mpe_io_seek(mpe_io *f, uint64_t value)
{
  MPEI_FENV_GUARD();
  if (!f)
    return MPE_EINVAL;
  if (f->cur < 0)
    FAIL(MPE_EINVAL, "no tensor selected");
  struct tens *t = &f->t[f->cur];
  if (value > t->count)
    FAIL(MPE_ERANGE, "value %llu of '%.64s', which holds %llu", (unsigned long long)value, TNAME(f, t),
         (unsigned long long)t->count);
  uint64_t at = t->count - f->left;
  size_t es = mpe_io_dtype_size((mpe_type)t->dtype);
  if (f->rd->select == select_seek) {
    if (fseeko(f->fp, (off_t)(t->offset + value * es), SEEK_SET))
      FAIL(MPE_EIO, "seek failed: %s", strerror(errno));
    f->done = f->done - at * es + value * es;
    f->left = t->count - value;
    return MPE_OK;
  }
  if (value < at) {   /* forward only: start the tensor again */
    uint64_t done = f->done;
    int rc = mpe_io_select(f, (size_t)f->cur);
    if (rc)
      return rc;
    f->done = done - (f->rd->read == read_text ? 0 : at * es);
    at = 0;
  }
  double junk[4096];
  while (at < value) {
    size_t n, want = value - at < 4096 ? (size_t)(value - at) : 4096;
    int rc = mpe_io_read(f, junk, want, &n);
    if (rc)
      return rc;
    if (n == 0)
      FAIL(MPE_EFORMAT, "data of '%.64s' end early", TNAME(f, t));
    at += n;
  }
  return MPE_OK;
}

/* ------------------------------------------------------------------ the table of readers */

static int probe_npy(const unsigned char *head, size_t n)
{
  return n >= 6 && !memcmp(head, "\x93NUMPY", 6);
}

static int probe_zip(const unsigned char *head, size_t n)
{
  return n >= 4 && (!memcmp(head, "PK\3\4", 4) || !memcmp(head, "PK\5\6", 4));
}

/* legacy torch.save: a pickle of a magic number (open_zip refuses it by name) */
static int probe_pt_legacy(const unsigned char *head, size_t n)
{
  return n >= 3 && head[0] == 0x80 && head[1] <= 5 && head[2] == 0x8a;
}

static int given_dtype(const mpe_io_opts *o)
{
  return o->has_dtype;
}

/* One row per reader, shaped like mpanalyze's command table. mpe_io_open walks
   it to guess a file's kind (when mpe_io_opts.kind is MPE_IO_AUTO): first every
   row's probe on the file's first 8 bytes, then every row's extensions
   (case-insensitive, the last '.' of the last path component), then every row's
   fallback on the options; the first row that answers wins, and no answer is
   "unknown file type". Then open lists the tensors (add_tensor, add_single,
   skip_add) after checking every size the file claims against the file;
   mpe_io_select calls select to go to the first byte of tensor i; mpe_io_read
   calls read for the next values (read_stored does the chunking and conversion
   of stored bytes, given a fetch function). The code around the calls (argument
   checks, messages to the caller, the chunk buffer, progress, mpe_io_close)
   is shared.

   To add a reader:
   1. add an mpe_io_kind value at the end of the enum in lib/mpemu/io.h (the
      numbers are ABI) and say what it reads there and in mpe_io_open(3);
   2. write its open (and a probe if the format has a magic number; a select
      and read, or reuse select_seek / read_file for data at file offsets);
      state the reader keeps goes in struct mpe_io and is freed in mpe_io_close;
   3. add its row here; in mpanalyze, move the end of the --kind loop in
      analysis/mpanalyze/common.c (it stops at MPE_IO_PT) and name the kind in
      cmd_range.c's help and mpanalyze(1);
   4. tests: good files (tests/check_io.c), hostile ones reaching every error
      path (tests/data/hostile, tests/check_mpanalyze.sh) and a fuzz target
      and corpus (tests/fuzz/run.sh, tests/fuzz/corpus/KIND). */

static const struct reader readers[] = {
  { MPE_IO_NPY, "npy", (const char *const[]){ ".npy", NULL },
    probe_npy, NULL, open_npy, select_seek, read_file },
  { MPE_IO_NPZ, "npz", (const char *const[]){ ".npz", NULL },
    probe_zip, NULL, open_zip, select_member, read_member },
  { MPE_IO_SAFETENSORS, "safetensors", (const char *const[]){ ".safetensors", NULL },
    NULL, NULL, open_safetensors, select_seek, read_file },
  { MPE_IO_RAW, "raw", (const char *const[]){ ".bin", ".raw", NULL },
    NULL, given_dtype, open_raw, select_seek, read_file },
  { MPE_IO_TEXT, "text", (const char *const[]){ ".csv", ".txt", ".tsv", ".dat", NULL },
    NULL, NULL, open_text, select_text, read_text },
  { MPE_IO_PT, "pt", (const char *const[]){ ".pt", ".pth", NULL },
    probe_pt_legacy, NULL, open_zip, select_pt, read_pt },   /* open_zip sends a pt archive to open_pt */
};
enum { NREADERS = sizeof readers / sizeof readers[0] };

static const struct reader *reader_of(mpe_io_kind k)
{
  for (size_t r = 0; r < NREADERS; r++)
    if (readers[r].kind == k)
      return &readers[r];
  return NULL;
}

static const struct reader *reader_guess(const char *path, const unsigned char *head, size_t n,
                                         const mpe_io_opts *o)
{
  for (size_t r = 0; r < NREADERS; r++)
    if (readers[r].probe && readers[r].probe(head, n))
      return &readers[r];
  const char *dot = strrchr(path, '.');
  const char *slash = strrchr(path, '/');
  if (dot && (!slash || dot > slash))
    for (size_t r = 0; r < NREADERS; r++)
      for (const char *const *e = readers[r].ext; *e; e++)
        if (!strcasecmp(dot, *e))
          return &readers[r];
  for (size_t r = 0; r < NREADERS; r++)
    if (readers[r].fallback && readers[r].fallback(o))
      return &readers[r];
  return NULL;
}

const char *mpe_io_kind_name(mpe_io_kind k)
{
  if (k == MPE_IO_AUTO)
    return "auto";
  const struct reader *r = reader_of(k);
  return r ? r->name : NULL;
}
