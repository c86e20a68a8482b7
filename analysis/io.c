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

#define DEFAULT_CHUNK (4u << 20)
#define DEFAULT_MAX_MEMBER (64ull << 30)
#define NPY_MAX_HEADER (1u << 20)
#define ST_MAX_HEADER (100ull << 20)   /* the safetensors library's own limit */
#define NPZ_MAX_MEMBERS 100000
#define DEFLATE_MAX_RATIO 1032         /* deflate cannot inflate more than this */

struct tens {
  mpe_io_tensor info;
  char *name;
  uint64_t offset;      /* file offset of the data (npy, raw, safetensors) or header bytes to skip (npz) */
  uint64_t nbytes;
  zip_uint64_t zindex;  /* npz member */
};

struct mpe_io {
  mpe_io_kind kind;
  FILE *fp;
  zip_t *za;
  uint64_t fsize;
  struct tens *t;
  size_t nt, cap, skipped;
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
  struct mpei_text txt;
  struct mpei_pt *pt;   /* PyTorch archives (io_pt.c) */
  struct mpei_skips sk; /* members skipped, other kinds (io_member.c) */
  char msg[256];
};

void mpei_io_msg(char *msg, size_t len, const char *fmt, ...)
{
  va_list ap;
  if (!msg || !len)
    return;
  va_start(ap, fmt);
  vsnprintf(msg, len, fmt, ap);
  va_end(ap);
}

#define FAIL(code, ...) do { mpei_io_msg(f->msg, sizeof f->msg, __VA_ARGS__); return (code); } while (0)

size_t mpe_io_dtype_size(mpe_type t)
{
  switch (t) {
  case MPE_FP64: return 8;
  case MPE_FP32: return 4;
  case MPE_FP16: case MPE_BF16: return 2;
  case MPE_E4M3: case MPE_E5M2: return 1;
  default: return 0;
  }
}

int mpe_io_dtype_lookup(const char *name, mpe_type *t)
{
  static const struct { const char *n; mpe_type t; } names[] = {
    { "f64", MPE_FP64 }, { "fp64", MPE_FP64 }, { "float64", MPE_FP64 }, { "double", MPE_FP64 },
    { "f32", MPE_FP32 }, { "fp32", MPE_FP32 }, { "float32", MPE_FP32 }, { "float", MPE_FP32 },
    { "f16", MPE_FP16 }, { "fp16", MPE_FP16 }, { "float16", MPE_FP16 }, { "half", MPE_FP16 },
    { "bf16", MPE_BF16 }, { "bfloat16", MPE_BF16 },
    { "e4m3", MPE_E4M3 }, { "f8_e4m3", MPE_E4M3 }, { "float8_e4m3fn", MPE_E4M3 }, { "fp8_e4m3", MPE_E4M3 },
    { "e5m2", MPE_E5M2 }, { "f8_e5m2", MPE_E5M2 }, { "float8_e5m2", MPE_E5M2 }, { "fp8_e5m2", MPE_E5M2 },
  };
  if (!name || !t)
    return MPE_EINVAL;
  for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
    if (!strcasecmp(name, names[i].n)) {
      *t = names[i].t;
      return MPE_OK;
    }
  return MPE_ENOTFOUND;
}

const char *mpe_io_kind_name(mpe_io_kind k)
{
  static const char *n[] = { "auto", "npy", "npz", "safetensors", "raw", "text", "pt" };
  return (unsigned)k < sizeof n / sizeof n[0] ? n[k] : NULL;
}

/* a*b with overflow detection */
int mpei_mul_u64(uint64_t a, uint64_t b, uint64_t *r)
{
  return __builtin_mul_overflow(a, b, r);
}

int mpei_utf8_valid(const char *s, size_t n)
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

static struct tens *add_tensor(mpe_io *f, const char *name, size_t namelen)
{
  if (f->nt == f->cap) {
    size_t nc = f->cap ? 2 * f->cap : 8;
    struct tens *nt = realloc(f->t, nc * sizeof *nt);
    if (!nt)
      return NULL;
    f->t = nt;
    f->cap = nc;
  }
  struct tens *t = &f->t[f->nt];
  memset(t, 0, sizeof *t);
  t->name = malloc(namelen + 1);
  if (!t->name)
    return NULL;
  memcpy(t->name, name, namelen);
  t->name[namelen] = 0;
  t->info.name = t->name;
  f->nt++;
  return t;
}

/* the last tensor added holds no floating-point data: list it as skipped instead */
static int skip_last(mpe_io *f, const struct mpei_npy_skip *sk)
{
  struct tens *t = &f->t[--f->nt];
  int rc = mpei_skip_add(&f->sk, t->name, strlen(t->name), sk->dtype, sk->why);
  free(t->name);
  if (rc)
    mpei_io_msg(f->msg, sizeof f->msg, "out of memory");
  return rc;
}

/* count = product of the shape, and nbytes = count * size, both without overflow */
static int shape_bytes(const mpe_io_tensor *in, size_t esize, uint64_t *count, uint64_t *nbytes)
{
  uint64_t c = 1;
  for (int d = 0; d < in->ndim; d++)
    if (mpei_mul_u64(c, in->shape[d], &c))
      return -1;
  if (mpei_mul_u64(c, esize, nbytes))
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
    if (mpei_mul_u64(x, 10, &x) || __builtin_add_overflow(x, (uint64_t)(*p - '0'), &x))
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
int mpei_npy_dict(const char *p, const char *e, char *descr, size_t dlen, int *fortran,
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
        mpei_io_msg(msg, msglen, ".npy header: 'descr' is not a simple type string (structured arrays are not supported)");
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
          mpei_io_msg(msg, msglen, ".npy header: more than %d dimensions", MPE_IO_MAXDIM);
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
  mpei_io_msg(msg, msglen, ".npy header is not a dictionary with 'descr', 'fortran_order' and 'shape'");
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
                   n == 1 ? "untyped 1-byte values: give a dtype (e4m3 or e5m2)" : "untyped values";
  case 'U': case 'S': case 'a': return "string array";
  case 'M': case 'm': return "date/time array";
  case 'O': return "Python objects (not read)";
  default: return "not a numeric type";
  }
}

/* descr -> dtype and byte order; V/u types need the user's dtype; a member
   with no floating-point data gives MPEI_SKIP and sk says why */
static int npy_descr(const char *d, const char *name, const mpe_io_opts *o, mpe_type *t, int *be,
                     char *msg, size_t msglen, struct mpei_npy_skip *sk)
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
    int rr = mpei_dtype_rule(o, name, isz, t, msg, msglen);
    if (rr == 1)
      return MPE_OK;
    if (rr < 0)
      return MPE_EINVAL;
  }
  if (!strcmp(c, "f2")) *t = MPE_FP16;
  else if (!strcmp(c, "f4")) *t = MPE_FP32;
  else if (!strcmp(c, "f8")) *t = MPE_FP64;
  else if (!strcmp(c, "V2") || !strcmp(c, "V1") || !strcmp(c, "u2") || !strcmp(c, "u1")) {
    size_t n = (size_t)(c[1] - '0');
    if (!o->has_dtype) {
      snprintf(sk->dtype, sizeof sk->dtype, "%s", d);
      sk->why = npy_skip_why(c[0], n);
      return MPEI_SKIP;
    }
    if (mpe_io_dtype_size(o->dtype) != n) {
      mpei_io_msg(msg, msglen, "dtype %s has %zu-byte values but the array (%s) has %zu-byte values",
                  mpe_type_name(o->dtype), mpe_io_dtype_size(o->dtype), d, n);
      return MPE_EFORMAT;
    }
    *t = o->dtype;
  } else {
    snprintf(sk->dtype, sizeof sk->dtype, "%s", d);
    sk->why = npy_skip_why(c[0], isz);
    return MPEI_SKIP;
  }
  return MPE_OK;
}

/* Parse a whole .npy preamble held in buf[0..len). *hdr receives the header size.
   Needs len >= 12 or the whole header; returns MPE_EFORMAT on anything wrong. */
int mpei_npy_parse(const unsigned char *buf, size_t len, uint64_t avail, const mpe_io_opts *o,
                   mpe_io_tensor *t, uint64_t *hdr, uint64_t *nbytes, char *msg, size_t msglen,
                   struct mpei_npy_skip *sk)
{
  uint64_t hlen, pre;
  if (len >= 6 && !memcmp(buf, "\x93NUMPY", 6) && len < 10) {
    mpei_io_msg(msg, msglen, "truncated .npy header");
    return MPE_EFORMAT;
  }
  if (len < 10 || memcmp(buf, "\x93NUMPY", 6)) {
    mpei_io_msg(msg, msglen, "not a .npy file (bad magic)");
    return MPE_EFORMAT;
  }
  int major = buf[6];
  if (major == 1) {
    hlen = buf[8] | (uint64_t)buf[9] << 8;
    pre = 10;
  } else if (major == 2 || major == 3) {
    if (len < 12) {
      mpei_io_msg(msg, msglen, "truncated .npy header");
      return MPE_EFORMAT;
    }
    hlen = buf[8] | (uint64_t)buf[9] << 8 | (uint64_t)buf[10] << 16 | (uint64_t)buf[11] << 24;
    pre = 12;
  } else {
    mpei_io_msg(msg, msglen, "unsupported .npy version %d.%d", major, buf[7]);
    return MPE_EUNSUP;
  }
  if (hlen > NPY_MAX_HEADER) {
    mpei_io_msg(msg, msglen, ".npy header length %llu is implausibly large", (unsigned long long)hlen);
    return MPE_EFORMAT;
  }
  if (pre + hlen > avail) {
    mpei_io_msg(msg, msglen, ".npy header length %llu runs past the end of the data (%llu bytes)",
                (unsigned long long)hlen, (unsigned long long)avail);
    return MPE_EFORMAT;
  }
  if (pre + hlen > len) {
    mpei_io_msg(msg, msglen, "truncated .npy header");
    return MPE_EFORMAT;
  }
  char descr[32];
  int fortran = 0, ndim = 0;
  int rc = mpei_npy_dict((const char *)buf + pre, (const char *)buf + pre + hlen, descr, sizeof descr,
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
    mpei_io_msg(msg, msglen, "shape %s is too large", s);
    return MPE_EFORMAT;
  }
  if (*nbytes != avail - pre - hlen) {
    char s[128];
    shape_str(t, s, sizeof s);
    mpei_io_msg(msg, msglen, "shape %s of %s needs %llu bytes of data but %llu are present", s, descr,
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

static int add_single(mpe_io *f, const char *path, struct tens **out)
{
  size_t n;
  const char *b = base_name(path, &n);
  if (!mpei_utf8_valid(b, n))  /* keep names printable: replace by a neutral one */
    b = "tensor", n = 6;
  if (!(*out = add_tensor(f, b, n)))
    FAIL(MPE_ENOMEM, "out of memory");
  return MPE_OK;
}

static int open_npy(mpe_io *f, const char *path, const mpe_io_opts *o)
{
  unsigned char *hb = malloc(NPY_MAX_HEADER + 12);
  if (!hb)
    FAIL(MPE_ENOMEM, "out of memory");
  size_t got = fread(hb, 1, NPY_MAX_HEADER + 12, f->fp);
  if (ferror(f->fp)) {
    free(hb);
    FAIL(MPE_EIO, "read error: %s", strerror(errno));
  }
  struct tens *t;
  int rc = add_single(f, path, &t);
  struct mpei_npy_skip sk;
  if (!rc && (rc = mpei_npy_parse(hb, got, f->fsize, o, &t->info, &t->offset, &t->nbytes, f->msg, sizeof f->msg,
                                  &sk)) == MPEI_SKIP)
    rc = skip_last(f, &sk);
  free(hb);
  return rc;
}

static int open_raw(mpe_io *f, const char *path, const mpe_io_opts *o)
{
  struct tens *t;
  int rc = add_single(f, path, &t);
  if (rc)
    return rc;
  mpe_type dt = o->dtype;   /* a rule naming the file, else the dtype */
  int ruled = mpei_dtype_rule(o, t->name, 0, &dt, NULL, 0) == 1;
  if (!o->has_dtype && !ruled)
    FAIL(MPE_EINVAL, "a raw binary file needs a dtype");
  size_t es = mpe_io_dtype_size(dt);
  t->info.dtype = dt;
  t->info.value_type = dt == MPE_FP64 ? MPE_FP64 : MPE_FP32;
  if (o->ndim > 0) {
    if (o->ndim > MPE_IO_MAXDIM)
      FAIL(MPE_EINVAL, "more than %d dimensions", MPE_IO_MAXDIM);
    t->info.ndim = o->ndim;
    memcpy(t->info.shape, o->shape, (size_t)o->ndim * sizeof o->shape[0]);
    if (shape_bytes(&t->info, es, &t->info.count, &t->nbytes))
      FAIL(MPE_EFORMAT, "shape is too large");
    if (t->nbytes != f->fsize) {
      char s[128];
      shape_str(&t->info, s, sizeof s);
      FAIL(MPE_EFORMAT, "shape %s of %s needs %llu bytes but the file has %llu", s, mpe_type_name(dt),
           (unsigned long long)t->nbytes, (unsigned long long)f->fsize);
    }
  } else {
    if (f->fsize % es)
      FAIL(MPE_EFORMAT, "file size %llu is not a multiple of %zu (%s)", (unsigned long long)f->fsize, es,
           mpe_type_name(dt));
    t->info.ndim = 1;
    t->info.shape[0] = t->info.count = f->fsize / es;
    t->nbytes = f->fsize;
  }
  t->offset = 0;
  return MPE_OK;
}

/* ------------------------------------------------------------------ safetensors */

static int st_dtype(const char *s, mpe_type *t, size_t *es)
{
  static const struct { const char *n; int t; size_t es; } d[] = {
    { "F64", MPE_FP64, 8 }, { "F32", MPE_FP32, 4 }, { "F16", MPE_FP16, 2 }, { "BF16", MPE_BF16, 2 },
    { "F8_E4M3", MPE_E4M3, 1 }, { "F8_E5M2", MPE_E5M2, 1 },
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

struct st_span { uint64_t b, e; const char *name; };
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

static int open_safetensors(mpe_io *f, const mpe_io_opts *o)
{
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
  char *h = malloc(n);
  if (!h)
    FAIL(MPE_ENOMEM, "out of memory");
  if (fread(h, 1, n, f->fp) != n) {
    free(h);
    FAIL(MPE_EFORMAT, "truncated safetensors header");
  }
  json_error_t je;
  json_t *root = json_loadb(h, n, JSON_REJECT_DUPLICATES, &je);
  free(h);
  if (!root)
    FAIL(MPE_EFORMAT, "safetensors header is not valid JSON: %s (byte %d)", je.text, je.position);
  int rc = MPE_OK;
  uint64_t dsize = f->fsize - 8 - n;
  size_t nobj = json_object_size(root);
  struct st_span *sp = NULL;
  size_t nsp = 0;
  if (!json_is_object(root)) {
    mpei_io_msg(f->msg, sizeof f->msg, "safetensors header is not a JSON object");
    rc = MPE_EFORMAT;
    goto done;
  }
  sp = calloc(nobj ? nobj : 1, sizeof *sp);
  if (!sp) {
    rc = MPE_ENOMEM;
    mpei_io_msg(f->msg, sizeof f->msg, "out of memory");
    goto done;
  }
  const char *key;
  json_t *v;
  json_object_foreach(root, key, v) {
    if (!strcmp(key, "__metadata__")) {
      if (!json_is_object(v)) {
        mpei_io_msg(f->msg, sizeof f->msg, "safetensors __metadata__ is not an object");
        rc = MPE_EFORMAT;
        goto done;
      }
      continue;
    }
    json_t *jd = json_object_get(v, "dtype"), *js = json_object_get(v, "shape"),
           *jo = json_object_get(v, "data_offsets");
    if (!json_is_object(v) || !json_is_string(jd) || !json_is_array(js) || !json_is_array(jo) ||
        json_array_size(jo) != 2 || !json_is_integer(json_array_get(jo, 0)) ||
        !json_is_integer(json_array_get(jo, 1))) {
      mpei_io_msg(f->msg, sizeof f->msg, "safetensors entry '%.64s' lacks dtype, shape or data_offsets [begin, end]", key);
      rc = MPE_EFORMAT;
      goto done;
    }
    mpe_io_tensor ti;
    memset(&ti, 0, sizeof ti);
    size_t es;
    int dt = st_dtype(json_string_value(jd), &ti.dtype, &es);
    if (dt == -2) {
      mpei_io_msg(f->msg, sizeof f->msg, "safetensors entry '%.64s' has unknown dtype '%.16s'", key, json_string_value(jd));
      rc = MPE_EFORMAT;
      goto done;
    }
    if (json_array_size(js) > MPE_IO_MAXDIM) {
      mpei_io_msg(f->msg, sizeof f->msg, "safetensors entry '%.64s' has more than %d dimensions", key, MPE_IO_MAXDIM);
      rc = MPE_EFORMAT;
      goto done;
    }
    ti.ndim = (int)json_array_size(js);
    for (int d = 0; d < ti.ndim; d++) {
      json_t *x = json_array_get(js, (size_t)d);
      if (!json_is_integer(x) || json_integer_value(x) < 0) {
        mpei_io_msg(f->msg, sizeof f->msg, "safetensors entry '%.64s' has a bad shape", key);
        rc = MPE_EFORMAT;
        goto done;
      }
      ti.shape[d] = (uint64_t)json_integer_value(x);
    }
    json_int_t b = json_integer_value(json_array_get(jo, 0)), e = json_integer_value(json_array_get(jo, 1));
    uint64_t nb;
    if (shape_bytes(&ti, es, &ti.count, &nb)) {
      mpei_io_msg(f->msg, sizeof f->msg, "safetensors entry '%.64s': shape is too large", key);
      rc = MPE_EFORMAT;
      goto done;
    }
    if (b < 0 || e < b || (uint64_t)e > dsize) {
      mpei_io_msg(f->msg, sizeof f->msg, "safetensors entry '%.64s': data_offsets [%lld, %lld] outside the %llu data bytes",
                  key, (long long)b, (long long)e, (unsigned long long)dsize);
      rc = MPE_EFORMAT;
      goto done;
    }
    if ((uint64_t)(e - b) != nb) {
      mpei_io_msg(f->msg, sizeof f->msg, "safetensors entry '%.64s': data_offsets span %llu bytes but shape x dtype needs %llu",
                  key, (unsigned long long)(e - b), (unsigned long long)nb);
      rc = MPE_EFORMAT;
      goto done;
    }
    sp[nsp].b = (uint64_t)b;
    sp[nsp].e = (uint64_t)e;
    sp[nsp].name = key;
    nsp++;
    int rr = mpei_dtype_rule(o, key, es, &ti.dtype, f->msg, sizeof f->msg);
    if (rr < 0) {
      rc = MPE_EINVAL;
      goto done;
    }
    if (rr == 1) {
      dt = (int)ti.dtype;
    } else if (dt < 0) {
      const char *sd = json_string_value(jd);
      if ((rc = mpei_skip_add(&f->sk, key, strlen(key), sd, !strcmp(sd, "BOOL") ? "boolean tensor" : "integer tensor"))) {
        mpei_io_msg(f->msg, sizeof f->msg, "out of memory");
        goto done;
      }
      continue;
    }
    struct tens *t = add_tensor(f, key, strlen(key));
    if (!t) {
      rc = MPE_ENOMEM;
      mpei_io_msg(f->msg, sizeof f->msg, "out of memory");
      goto done;
    }
    ti.name = t->name;
    ti.value_type = ti.dtype == MPE_FP64 ? MPE_FP64 : MPE_FP32;
    t->info = ti;
    t->offset = 8 + n + (uint64_t)b;
    t->nbytes = nb;
  }
  if (nsp > 1)     /* qsort wants a non-NULL array even for 0 elements */
    qsort(sp, nsp, sizeof *sp, cmp_span);
  for (size_t i = 1; i < nsp; i++)
    if (sp[i].b < sp[i - 1].e) {
      mpei_io_msg(f->msg, sizeof f->msg, "safetensors entries '%.64s' and '%.64s' overlap", sp[i - 1].name, sp[i].name);
      rc = MPE_EFORMAT;
      goto done;
    }
  if (f->nt > 1)   /* f->t is NULL when no entry is a float tensor */
    qsort(f->t, f->nt, sizeof *f->t, cmp_tens);
  for (size_t i = 0; i < f->nt; i++)
    f->t[i].info.name = f->t[i].name;
done:
  free(sp);
  json_decref(root);
  return rc;
}

/* ------------------------------------------------------------------ .npz */

static int zip_msg(mpe_io *f, int code, const char *what, zip_error_t *ze)
{
  mpei_io_msg(f->msg, sizeof f->msg, "%s: %s", what, zip_error_strerror(ze));
  return code;
}

/* torch.save archives: the pickle and the views are io_pt.c's */
static int open_pt(mpe_io *f, const char *path, const mpe_io_opts *o)
{
  size_t bl;
  const char *b = base_name(path, &bl);
  char root[128];
  snprintf(root, sizeof root, "%.*s", (int)(bl < 127 ? bl : 127), mpei_utf8_valid(b, bl) ? b : "tensor");
  f->kind = MPE_IO_PT;
  int rc = mpei_pt_open(f->za, root, &f->pt, f->msg, sizeof f->msg);
  for (size_t i = 0; !rc && i < mpei_pt_count(f->pt); i++) {
    mpe_io_tensor ti;
    uint64_t nb;
    mpei_pt_info(f->pt, i, &ti, &nb);
    struct tens *t = add_tensor(f, ti.name, strlen(ti.name));
    if (!t)
      FAIL(MPE_ENOMEM, "out of memory");
    t->info = ti;
    t->info.name = t->name;
    t->nbytes = nb;
    int rr = mpei_dtype_rule(o, t->name, mpe_io_dtype_size(ti.dtype), &t->info.dtype, f->msg, sizeof f->msg);
    if (rr < 0)
      return MPE_EINVAL;
    t->info.value_type = t->info.dtype == MPE_FP64 ? MPE_FP64 : MPE_FP32;
  }
  f->skipped += rc ? 0 : mpei_pt_nskipped(f->pt);
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
  if (f->kind == MPE_IO_PT || (!o->kind && mpei_pt_sniff(f->za, top, sizeof top)))
    return open_pt(f, path, o);
  uint64_t cap = o->max_member_bytes ? o->max_member_bytes : DEFAULT_MAX_MEMBER;
  unsigned char *hb = malloc(NPY_MAX_HEADER + 12);
  if (!hb)
    FAIL(MPE_ENOMEM, "out of memory");
  int rc = MPE_OK;
  for (zip_int64_t i = 0; i < ne && !rc; i++) {
    zip_stat_t st;
    zip_stat_init(&st);
    if (zip_stat_index(f->za, (zip_uint64_t)i, ZIP_FL_ENC_RAW, &st) ||
        !(st.valid & (ZIP_STAT_NAME | ZIP_STAT_SIZE | ZIP_STAT_COMP_SIZE | ZIP_STAT_COMP_METHOD))) {
      mpei_io_msg(f->msg, sizeof f->msg, "zip member %lld: unreadable directory entry", (long long)i);
      rc = MPE_EFORMAT;
      break;
    }
    size_t nl = strlen(st.name);
    if (nl && st.name[nl - 1] == '/')
      continue;   /* a directory */
    if (!mpei_utf8_valid(st.name, nl)) {
      mpei_io_msg(f->msg, sizeof f->msg, "zip member %lld has a name that is not valid UTF-8", (long long)i);
      rc = MPE_EFORMAT;
      break;
    }
    if (nl < 5 || strcmp(st.name + nl - 4, ".npy")) {
      mpei_io_msg(f->msg, sizeof f->msg, "zip member '%.64s' is not a .npy array", st.name);
      rc = MPE_EFORMAT;
      break;
    }
    if (st.comp_method != ZIP_CM_STORE && st.comp_method != ZIP_CM_DEFLATE) {
      mpei_io_msg(f->msg, sizeof f->msg, "zip member '%.64s' uses compression method %d (only stored and deflated are supported)",
                  st.name, (int)st.comp_method);
      rc = MPE_EUNSUP;
      break;
    }
    if (st.size > cap) {
      mpei_io_msg(f->msg, sizeof f->msg, "zip member '%.64s' would inflate to %llu bytes, over the limit of %llu",
                  st.name, (unsigned long long)st.size, (unsigned long long)cap);
      rc = MPE_EFORMAT;
      break;
    }
    if ((st.comp_method == ZIP_CM_STORE && st.size != st.comp_size) ||
        (st.comp_method == ZIP_CM_DEFLATE && st.size / DEFLATE_MAX_RATIO > st.comp_size + 64)) {
      mpei_io_msg(f->msg, sizeof f->msg, "zip member '%.64s' claims %llu bytes from %llu compressed: impossible (zip bomb?)",
                  st.name, (unsigned long long)st.size, (unsigned long long)st.comp_size);
      rc = MPE_EFORMAT;
      break;
    }
    zip_file_t *zf = zip_fopen_index(f->za, (zip_uint64_t)i, 0);
    if (!zf) {
      rc = zip_msg(f, MPE_EFORMAT, "cannot open zip member", zip_get_error(f->za));
      break;
    }
    size_t want = st.size < NPY_MAX_HEADER + 12 ? (size_t)st.size : NPY_MAX_HEADER + 12, got = 0;
    while (got < want) {
      zip_int64_t r = zip_fread(zf, hb + got, want - got);
      if (r <= 0)
        break;
      got += (size_t)r;
    }
    zip_fclose(zf);
    if (got < 10 || got < (st.size < 12 ? st.size : 10)) {
      mpei_io_msg(f->msg, sizeof f->msg, "zip member '%.64s' is truncated or corrupt", st.name);
      rc = MPE_EFORMAT;
      break;
    }
    struct tens *t = add_tensor(f, st.name, nl - 4);
    if (!t) {
      rc = MPE_ENOMEM;
      mpei_io_msg(f->msg, sizeof f->msg, "out of memory");
      break;
    }
    char m[200];
    struct mpei_npy_skip sk;
    rc = mpei_npy_parse(hb, got, st.size, o, &t->info, &t->offset, &t->nbytes, m, sizeof m, &sk);
    if (rc == MPEI_SKIP)
      rc = skip_last(f, &sk);
    else if (rc)
      mpei_io_msg(f->msg, sizeof f->msg, "member '%.64s': %s", st.name, m);
    t->zindex = (zip_uint64_t)i;
  }
  free(hb);
  return rc;
}

/* ------------------------------------------------------------------ open/close */

static mpe_io_kind guess_kind(const char *path, const unsigned char *mg, size_t n, const mpe_io_opts *o)
{
  if (n >= 6 && !memcmp(mg, "\x93NUMPY", 6))
    return MPE_IO_NPY;
  if (n >= 4 && (!memcmp(mg, "PK\3\4", 4) || !memcmp(mg, "PK\5\6", 4)))
    return MPE_IO_NPZ;
  if (n >= 3 && mg[0] == 0x80 && mg[1] <= 5 && mg[2] == 0x8a)   /* legacy torch.save: a pickle of a magic number */
    return MPE_IO_PT;
  const char *dot = strrchr(path, '.');
  const char *slash = strrchr(path, '/');
  if (dot && (!slash || dot > slash)) {
    if (!strcasecmp(dot, ".npy")) return MPE_IO_NPY;
    if (!strcasecmp(dot, ".npz")) return MPE_IO_NPZ;
    if (!strcasecmp(dot, ".safetensors")) return MPE_IO_SAFETENSORS;
    if (!strcasecmp(dot, ".pt") || !strcasecmp(dot, ".pth")) return MPE_IO_PT;
    if (!strcasecmp(dot, ".csv") || !strcasecmp(dot, ".txt") || !strcasecmp(dot, ".tsv") || !strcasecmp(dot, ".dat"))
      return MPE_IO_TEXT;
    if (!strcasecmp(dot, ".bin") || !strcasecmp(dot, ".raw"))
      return MPE_IO_RAW;
  }
  if (o->has_dtype)
    return MPE_IO_RAW;
  return MPE_IO_AUTO;
}

int mpe_io_open(mpe_io **out, const char *path, const mpe_io_opts *o, char *msg, size_t msglen)
{
  static const mpe_io_opts defaults;
  if (msg && msglen)
    msg[0] = 0;
  if (!out || !path) {
    mpei_io_msg(msg, msglen, "invalid argument");
    return MPE_EINVAL;
  }
  *out = NULL;
  if (!o)
    o = &defaults;
  if ((unsigned)o->kind > MPE_IO_PT || o->ndim < 0 || o->ndim > MPE_IO_MAXDIM ||
      (o->has_dtype && !mpe_io_dtype_size(o->dtype)) || (o->nrules && !o->rules)) {
    mpei_io_msg(msg, msglen, "invalid reader options");
    return MPE_EINVAL;
  }
  mpe_io *f = calloc(1, sizeof *f);
  if (!f) {
    mpei_io_msg(msg, msglen, "out of memory");
    return MPE_ENOMEM;
  }
  for (size_t r = 0; r < o->nrules; r++)
    if (!o->rules[r].pattern || !mpe_io_dtype_size(o->rules[r].dtype)) {
      mpei_io_msg(msg, msglen, "invalid reader options (dtype rule %zu)", r);
      free(f);
      return MPE_EINVAL;
    }
  f->cur = -1;
  f->tab8_type = -1;
  f->bufsize = o->chunk_bytes ? o->chunk_bytes : DEFAULT_CHUNK;
  if (f->bufsize < 4096)
    f->bufsize = 4096;
  f->bufsize &= ~(size_t)7;
  int rc = MPE_OK;
  struct stat sb;
  f->fp = fopen(path, "rb");
  if (!f->fp) {
    mpei_io_msg(f->msg, sizeof f->msg, "cannot open: %s", strerror(errno));
    rc = errno == ENOENT || errno == EACCES ? MPE_EIO : MPE_EIO;
    goto fail;
  }
  if (fstat(fileno(f->fp), &sb) || !S_ISREG(sb.st_mode)) {
    mpei_io_msg(f->msg, sizeof f->msg, "not a regular file");
    rc = MPE_EIO;
    goto fail;
  }
  f->fsize = (uint64_t)sb.st_size;
  unsigned char mg[8];
  size_t nm = fread(mg, 1, sizeof mg, f->fp);
  rewind(f->fp);
  f->kind = o->kind ? o->kind : guess_kind(path, mg, nm, o);
  switch (f->kind) {
  case MPE_IO_NPY: rc = open_npy(f, path, o); break;
  case MPE_IO_NPZ: case MPE_IO_PT:
    if (nm >= 2 && mg[0] == 0x80) {
      mpei_io_msg(f->msg, sizeof f->msg, "a bare pickle (torch.save before PyTorch 1.6, or pickle.dump) is not supported: "
                  "re-save it with torch.save from PyTorch >= 1.6 (the zip format)");
      rc = MPE_EUNSUP;
      break;
    }
    fclose(f->fp);
    f->fp = NULL;
    rc = open_npz(f, path, o);
    break;
  case MPE_IO_SAFETENSORS: rc = open_safetensors(f, o); break;
  case MPE_IO_RAW: rc = open_raw(f, path, o); break;
  case MPE_IO_TEXT: {
    struct tens *t;
    rc = add_single(f, path, &t);
    if (!rc)
      rc = mpei_text_scan(&f->txt, f->fp, &t->info, f->msg, sizeof f->msg);
    t->nbytes = f->fsize;
    break;
  }
  default:
    mpei_io_msg(f->msg, sizeof f->msg, "unknown file type (expected .npy, .npz, .safetensors, .csv/.txt, or raw with a dtype)");
    rc = MPE_EFORMAT;
  }
  if (rc)
    goto fail;
  if (!(f->buf = malloc(f->bufsize))) {
    rc = MPE_ENOMEM;
    goto fail;
  }
  for (size_t i = 0; i < f->nt; i++)
    f->total += f->t[i].nbytes;
  *out = f;
  return MPE_OK;
fail:
  mpei_io_msg(msg, msglen, "%s", f->msg[0] ? f->msg : mpe_strerror(rc));
  mpe_io_close(f);
  return rc;
}

void mpe_io_close(mpe_io *f)
{
  if (!f)
    return;
  if (f->zf)
    zip_fclose(f->zf);
  mpei_pt_free(f->pt);
  mpei_skips_free(&f->sk);
  if (f->za)
    zip_discard(f->za);
  if (f->fp)
    fclose(f->fp);
  for (size_t i = 0; i < f->nt; i++)
    free(f->t[i].name);
  free(f->t);
  free(f->buf);
  free(f->tab16);
  free(f);
}

mpe_io_kind mpe_io_kind_of(const mpe_io *f) { return f ? f->kind : MPE_IO_AUTO; }
size_t mpe_io_count(const mpe_io *f) { return f ? f->nt : 0; }
size_t mpe_io_skipped(const mpe_io *f) { return f ? f->skipped + f->sk.n : 0; }

int mpe_io_skipped_info(const mpe_io *f, size_t i, const char **name, const char **dtype, const char **why)
{
  if (!f || !name || !dtype || !why || i >= mpe_io_skipped(f))
    return MPE_EINVAL;
  if (i < f->skipped) {
    mpei_pt_skipped(f->pt, i, name, dtype, why);
  } else {
    const struct mpei_skip *k = &f->sk.v[i - f->skipped];
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
  if (!f || !t || i >= f->nt)
    return MPE_EINVAL;
  *t = f->t[i].info;
  return MPE_OK;
}

int mpe_io_find(const mpe_io *f, const char *name, size_t *i)
{
  if (!f || !name || !i)
    return MPE_EINVAL;
  for (size_t k = 0; k < f->nt; k++)
    if (!strcmp(f->t[k].name, name)) {
      *i = k;
      return MPE_OK;
    }
  return MPE_ENOTFOUND;
}

/* ------------------------------------------------------------------ reading */

int mpe_io_select(mpe_io *f, size_t i)
{
  if (!f || i >= f->nt)
    return MPE_EINVAL;
  struct tens *t = &f->t[i];
  f->msg[0] = 0;
  f->cur = -1;
  if (f->zf) {
    zip_fclose(f->zf);
    f->zf = NULL;
  }
  if (f->pt) {
    int rc = mpei_pt_select(f->pt, i, f->msg, sizeof f->msg);
    if (rc)
      return rc;
  } else if (f->kind == MPE_IO_NPZ) {
    if (!(f->zf = zip_fopen_index(f->za, t->zindex, 0)))
      return zip_msg(f, MPE_EFORMAT, "cannot open zip member", zip_get_error(f->za));
    uint64_t skip = t->offset;
    while (skip) {
      size_t c = skip < f->bufsize ? (size_t)skip : f->bufsize;
      zip_int64_t r = zip_fread(f->zf, f->buf, c);
      if (r <= 0)
        FAIL(MPE_EFORMAT, "member '%.64s': truncated or corrupt", t->name);
      skip -= (uint64_t)r;
    }
  } else if (f->kind == MPE_IO_TEXT) {
    int rc = mpei_text_rewind(&f->txt, f->fp, f->msg, sizeof f->msg);
    if (rc)
      return rc;
  } else {
    if (fseeko(f->fp, (off_t)t->offset, SEEK_SET))
      FAIL(MPE_EIO, "seek failed: %s", strerror(errno));
  }
  f->cur = (long)i;
  f->left = t->info.count;
  return MPE_OK;
}

/* read exactly n bytes of the current tensor's data */
static int read_bytes(mpe_io *f, void *dst, size_t n)
{
  struct tens *t = &f->t[f->cur];
  size_t got = 0;
  if (f->pt) {
    int rc = mpei_pt_read(f->pt, dst, n / mpe_io_dtype_size(t->info.dtype), f->msg, sizeof f->msg);
    if (rc)
      return rc;
  } else if (f->zf) {
    while (got < n) {
      zip_int64_t r = zip_fread(f->zf, (char *)dst + got, n - got);
      if (r < 0)
        FAIL(MPE_EFORMAT, "member '%.64s': %s", t->name, zip_file_strerror(f->zf));
      if (r == 0)
        FAIL(MPE_EFORMAT, "member '%.64s': data end early", t->name);
      got += (size_t)r;
    }
  } else {
    got = fread(dst, 1, n, f->fp);
    if (got != n) {
      if (ferror(f->fp))
        FAIL(MPE_EIO, "read error: %s", strerror(errno));
      FAIL(MPE_EFORMAT, "data of '%.64s' end early (the file shrank?)", t->name);
    }
  }
  f->done += n;
  return MPE_OK;
}

/* after the last value of a member: it must end there and pass its CRC */
static int finish_member(mpe_io *f)
{
  char c;
  zip_int64_t r = zip_fread(f->zf, &c, 1);
  if (r < 0)
    FAIL(MPE_EFORMAT, "member '%.64s': %s", f->t[f->cur].name, zip_file_strerror(f->zf));
  if (r > 0)
    FAIL(MPE_EFORMAT, "member '%.64s' is longer than declared", f->t[f->cur].name);
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

static int make_tables(mpe_io *f, mpe_type dt)
{
  if (dt == MPE_FP16 && !f->tab16) {
    if (!(f->tab16 = malloc(65536 * sizeof(float))))
      FAIL(MPE_ENOMEM, "out of memory");
    for (uint32_t h = 0; h < 65536; h++)
      f->tab16[h] = mpe_fp16_to_fp32((uint16_t)h);
  }
  if ((dt == MPE_E4M3 || dt == MPE_E5M2) && f->tab8_type != (int)dt) {
    for (int v = 0; v < 256; v++)
      f->tab8[v] = dt == MPE_E4M3 ? mpe_e4m3_to_fp32((uint8_t)v) : mpe_e5m2_to_fp32((uint8_t)v);
    f->tab8_type = (int)dt;
  }
  return MPE_OK;
}

int mpe_io_read(mpe_io *f, void *values, size_t max, size_t *n)
{
  if (!f || !n || (!values && max))
    return MPE_EINVAL;
  *n = 0;
  if (f->cur < 0)
    FAIL(MPE_EINVAL, "no tensor selected");
  struct tens *t = &f->t[f->cur];
  mpe_type dt = t->info.dtype;
  if (f->kind == MPE_IO_TEXT) {
    int rc = mpei_text_read(&f->txt, f->fp, values, max, n, f->msg, sizeof f->msg);
    if (rc)
      return rc;
    if (*n > f->left)
      FAIL(MPE_EFORMAT, "the file changed while it was read");
    f->left -= *n;
    f->done = f->txt.pos;
    return MPE_OK;
  }
  size_t es = mpe_io_dtype_size(dt);
  size_t k = f->bufsize / es;
  if (k > max)
    k = max;
  if (k > f->left)
    k = (size_t)f->left;
  if (k == 0) {
    if (f->left == 0 && f->zf)
      return finish_member(f);
    return MPE_OK;
  }
  int rc = make_tables(f, dt);
  if (rc)
    return rc;
  int direct = (dt == MPE_FP32 || dt == MPE_FP64);
  unsigned char *src = direct ? values : f->buf;
  if ((rc = read_bytes(f, src, k * es)))
    return rc;
  if (t->info.big_endian)
    bswap_n(src, k, es);
  float *y = values;
  switch (dt) {
  case MPE_FP16:
    for (size_t i = 0; i < k; i++) {
      uint16_t h;
      memcpy(&h, src + 2 * i, 2);
      y[i] = f->tab16[h];
    }
    break;
  case MPE_BF16:
    for (size_t i = 0; i < k; i++) {
      uint16_t h;
      memcpy(&h, src + 2 * i, 2);
      y[i] = mpei_u2f((uint32_t)h << 16);
    }
    break;
  case MPE_E4M3: case MPE_E5M2:
    for (size_t i = 0; i < k; i++)
      y[i] = f->tab8[src[i]];
    break;
  default:
    break;
  }
  f->left -= k;
  *n = k;
  if (f->left == 0 && f->zf)
    return finish_member(f);
  return MPE_OK;
}
