/* Small writers for .npy, .npz and safetensors, used by the examples and tests. */
#define _FILE_OFFSET_BITS 64
#include <config.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zip.h>
#include "io_internal.h"
#include "mpei_fenv.h"

static const char *npy_descr_of(mpe_type t)
{
  const struct mpe_format *f = mpe_format_of(t);
  return f && mpei_format_file_bytes(f) ? f->npy : NULL;
}

static int check_out(const mpe_io_out *t, uint64_t *nbytes)
{
  size_t es = mpe_io_dtype_size(t->dtype);
  uint64_t c = 1;
  if (!es || t->ndim < 0 || t->ndim > MPE_IO_MAXDIM || (t->ndim && !t->shape) || !t->name)
    return MPE_EINVAL;
  for (int d = 0; d < t->ndim; d++)
    if (mpai_mul_u64(c, t->shape[d], &c))
      return MPE_EINVAL;
  if (mpai_mul_u64(c, es, nbytes) || (*nbytes && !t->data))
    return MPE_EINVAL;
  return MPE_OK;
}

/* the .npy preamble: magic, version 1.0, header padded to a multiple of 64 */
static int npy_header(const mpe_io_out *t, char *h, size_t hl, size_t *len)
{
  char dict[1024];
  size_t o = (size_t)snprintf(dict, sizeof dict, "{'descr': '%s', 'fortran_order': False, 'shape': (",
                              npy_descr_of(t->dtype));
  for (int d = 0; d < t->ndim && o < sizeof dict; d++)
    o += (size_t)snprintf(dict + o, sizeof dict - o, "%llu,%s", (unsigned long long)t->shape[d],
                          d + 1 < t->ndim ? " " : "");
  if (o < sizeof dict)
    o += (size_t)snprintf(dict + o, sizeof dict - o, "), }");
  if (o + 11 + 64 > hl || o >= sizeof dict)
    return MPE_EINVAL;
  size_t total = 10 + o + 1;
  size_t pad = (64 - total % 64) % 64;
  size_t hlen = o + pad + 1;
  memcpy(h, "\x93NUMPY\1\0", 8);
  h[8] = (char)(hlen & 0xff);
  h[9] = (char)(hlen >> 8);
  memcpy(h + 10, dict, o);
  memset(h + 10 + o, ' ', pad);
  h[10 + o + pad] = '\n';
  *len = 10 + hlen;
  return MPE_OK;
}

int mpe_io_write_npy(const char *path, const mpe_io_out *t)
{
  MPEI_FENV_GUARD();
  uint64_t nb;
  char h[1200];
  size_t hl;
  if (!path || !t || check_out(t, &nb) || npy_header(t, h, sizeof h, &hl))
    return MPE_EINVAL;
  FILE *fp = fopen(path, "wb");
  if (!fp)
    return MPE_EIO;
  int ok = fwrite(h, 1, hl, fp) == hl && (nb == 0 || fwrite(t->data, 1, nb, fp) == nb);
  ok &= fclose(fp) == 0;
  return ok ? MPE_OK : MPE_EIO;
}

static const char *st_name(mpe_type t)
{
  const struct mpe_format *f = mpe_format_of(t);
  return f ? f->st : NULL;
}

/* JSON string body with the escapes JSON needs */
static size_t json_str(char *o, size_t cap, const char *s)
{
  size_t n = 0;
  for (; *s; s++) {
    unsigned char c = (unsigned char)*s;
    char tmp[8];
    const char *p = tmp;
    if (c == '"' || c == '\\')
      snprintf(tmp, sizeof tmp, "\\%c", c);
    else if (c < 0x20)
      snprintf(tmp, sizeof tmp, "\\u%04x", c);
    else
      tmp[0] = (char)c, tmp[1] = 0;
    size_t l = strlen(p);
    if (o && n + l < cap)
      memcpy(o + n, p, l);
    n += l;
  }
  return n;
}

static int cmp_name(const void *a, const void *b)
{
  return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* An .npz member NAME.npy is a path in the archive: a name that is empty,
   not UTF-8, holds a control character or a backslash, starts with '/' or
   has a "." or ".." part would be one that unzip places elsewhere. */
static int member_name_ok(const char *name)
{
  size_t n = strlen(name);
  if (!n || name[0] == '/' || !mpai_utf8_valid(name, n))
    return 0;
  for (const char *c = name; *c; c++)
    if ((unsigned char)*c < 0x20 || *c == 0x7f || *c == '\\')
      return 0;
  for (const char *part = name; part; part = strchr(part, '/') ? strchr(part, '/') + 1 : NULL) {
    size_t len = strcspn(part, "/");
    if (len == 0 || (len == 1 && part[0] == '.') || (len == 2 && part[0] == '.' && part[1] == '.'))
      return 0;
  }
  return 1;
}

/* The arguments of a writer of n tensors: a path, the tensors (NULL only
   when n is 0) and their names. The readers refuse a file with two tensors
   of one name (and safetensors keeps __metadata__ for itself): the writers
   refuse to make one. MPE_OK, MPE_EINVAL or MPE_ENOMEM. */
static int set_ok(const char *path, const mpe_io_out *t, size_t n, int safetensors)
{
  if (!path || (!t && n))
    return MPE_EINVAL;
  const char **v = malloc((n ? n : 1) * sizeof *v);
  if (!v)
    return MPE_ENOMEM;
  int rc = MPE_OK;
  for (size_t i = 0; i < n && !rc; i++) {
    if (!t[i].name || (safetensors && !strcmp(t[i].name, "__metadata__")) ||
        (!safetensors && !member_name_ok(t[i].name)))
      rc = MPE_EINVAL;
    v[i] = t[i].name;
  }
  if (!rc && n > 1) {
    qsort(v, n, sizeof *v, cmp_name);
    for (size_t i = 1; i < n && !rc; i++)
      if (!strcmp(v[i - 1], v[i]))
        rc = MPE_EINVAL;
  }
  free(v);
  return rc;
}

int mpe_io_write_safetensors(const char *path, const mpe_io_out *t, size_t n)
{
  MPEI_FENV_GUARD();
  int nrc = set_ok(path, t, n, 1);
  if (nrc)
    return nrc;
  uint64_t *nb = calloc(n ? n : 1, sizeof *nb);
  if (!nb)
    return MPE_ENOMEM;
  size_t cap = 64;
  for (size_t i = 0; i < n; i++) {
    if (check_out(&t[i], &nb[i]) || !mpai_utf8_valid(t[i].name, strlen(t[i].name))) {
      free(nb);
      return MPE_EINVAL;
    }
    cap += json_str(NULL, 0, t[i].name) + 96 + 24 * (size_t)t[i].ndim;
  }
  char *h = malloc(cap + 8);
  if (!h) {
    free(nb);
    return MPE_ENOMEM;
  }
  size_t o = 0;
  uint64_t off = 0;
  h[o++] = '{';
  for (size_t i = 0; i < n; i++) {
    o += (size_t)snprintf(h + o, cap - o, "%s\"", i ? "," : "");
    o += json_str(h + o, cap - o, t[i].name);
    o += (size_t)snprintf(h + o, cap - o, "\":{\"dtype\":\"%s\",\"shape\":[", st_name(t[i].dtype));
    for (int d = 0; d < t[i].ndim; d++)
      o += (size_t)snprintf(h + o, cap - o, "%s%llu", d ? "," : "", (unsigned long long)t[i].shape[d]);
    o += (size_t)snprintf(h + o, cap - o, "],\"data_offsets\":[%llu,%llu]}", (unsigned long long)off,
                          (unsigned long long)(off + nb[i]));
    off += nb[i];
  }
  h[o++] = '}';
  while (o % 8)       /* pad with spaces so the data start 8-aligned */
    h[o++] = ' ';
  unsigned char lb[8];
  for (int i = 0; i < 8; i++)
    lb[i] = (unsigned char)((uint64_t)o >> (8 * i));
  FILE *fp = fopen(path, "wb");
  int ok = fp != NULL;
  if (ok) {
    ok = fwrite(lb, 1, 8, fp) == 8 && fwrite(h, 1, o, fp) == o;
    for (size_t i = 0; ok && i < n; i++)
      ok = nb[i] == 0 || fwrite(t[i].data, 1, nb[i], fp) == nb[i];
    ok &= fclose(fp) == 0;
  }
  free(h);
  free(nb);
  return ok ? MPE_OK : MPE_EIO;
}

int mpe_io_write_npz(const char *path, const mpe_io_out *t, size_t n, int deflate)
{
  MPEI_FENV_GUARD();
  int nrc = set_ok(path, t, n, 0);
  if (nrc)
    return nrc;
  for (size_t i = 0; i < n; i++) {
    uint64_t nb;
    if (check_out(&t[i], &nb))
      return MPE_EINVAL;
  }
  int err;
  zip_t *za = zip_open(path, ZIP_CREATE | ZIP_TRUNCATE, &err);
  if (!za)
    return MPE_EIO;
  int rc = MPE_OK;
  for (size_t i = 0; i < n && !rc; i++) {
    uint64_t nb;
    char h[1200];
    size_t hl;
    check_out(&t[i], &nb);
    if (npy_header(&t[i], h, sizeof h, &hl)) {
      rc = MPE_EINVAL;
      break;
    }
    unsigned char *m = malloc(hl + nb);
    char *name = malloc(strlen(t[i].name) + 5);
    if (!m || !name) {
      free(m);
      free(name);
      rc = MPE_ENOMEM;
      break;
    }
    memcpy(m, h, hl);
    if (nb)
      memcpy(m + hl, t[i].data, nb);
    sprintf(name, "%s.npy", t[i].name);
    zip_source_t *src = zip_source_buffer(za, m, hl + nb, 1);   /* libzip frees m */
    zip_int64_t idx = src ? zip_file_add(za, name, src, ZIP_FL_OVERWRITE | ZIP_FL_ENC_UTF_8) : -1;
    free(name);
    if (idx < 0) {
      if (src)
        zip_source_free(src);
      else
        free(m);
      rc = MPE_EIO;
      break;
    }
    zip_set_file_compression(za, (zip_uint64_t)idx, deflate ? ZIP_CM_DEFLATE : ZIP_CM_STORE, 0);
  }
  if (rc) {
    zip_discard(za);
    return rc;
  }
  return zip_close(za) ? (zip_discard(za), MPE_EIO) : MPE_OK;
}
