/* Text tensors: numbers separated by white space, commas or semicolons, one
   row per line, '#' at the start of a token to the end of a line is a comment. The file is scanned
   once when opened (so a bad token is found before any report), then read
   again in chunks; memory stays at one buffer whatever the file size. */
#define _FILE_OFFSET_BITS 64
#include <config.h>
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "io_internal.h"

#define TOKMAX 64

static int fill(struct mpai_text *s, FILE *fp)
{
  if (s->eof)
    return 0;
  s->len = fread(s->buf, 1, s->cap, fp);
  s->at = 0;
  if (s->len == 0) {
    s->eof = 1;
    return ferror(fp) ? -1 : 0;
  }
  return 1;
}

/* Next token into tok. Returns 1 (token), 0 (end of file), -1 (read error),
   -2 (token too long), -3 (NUL or control byte), -4 (an empty field: a comma or
   semicolon at a line's start, after another one, or at a line's end, as "1,,2"
   or "1,2,"). *nl counts newlines passed. A UTF-8 byte-order mark that starts
   the file is passed over. */
static int next_token(struct mpai_text *s, FILE *fp, char *tok, uint64_t *nl)
{
  size_t n = 0;
  int comment = 0;
  for (;;) {
    if (s->at == s->len) {
      int r = fill(s, fp);
      if (r < 0)
        return -1;
      if (r == 0)
        break;
    }
    if (s->pos == 0 && s->len - s->at >= 3 && !memcmp(s->buf + s->at, "\xef\xbb\xbf", 3)) {
      s->at += 3;         /* a byte-order mark (spreadsheets write one) */
      s->pos += 3;
      continue;
    }
    char c = s->buf[s->at];
    if (c == '\n') {
      if (n)
        break;            /* the newline is seen again by the next call */
      if (s->sep == 1 && !comment)
        return -4;        /* "1,2," */
      comment = 0;
      s->sep = 2;
      (*nl)++;
      s->line++;
    } else if (comment) {
      ;
    } else if (c == '#' && n == 0) {
      comment = 1;   /* a comment starts a token; inside one (MSVC's 1.#INF) '#' is
                        part of it, so the token is refused rather than read as 1 */
    } else if (c == ' ' || c == '\t' || c == '\r' || c == ',' || c == ';') {
      int field = c == ',' || c == ';';
      if (n) {
        s->sep = field;
        s->at++;
        s->pos++;
        break;
      }
      if (field && s->sep)
        return -4;        /* ",1", "1,,2", "1, ,2" */
      if (field)
        s->sep = 1;
    } else if ((unsigned char)c < 0x20 || c == 0x7f) {
      return -3;
    } else {
      if (n + 1 >= TOKMAX)
        return -2;
      tok[n++] = c;
      s->sep = 0;
    }
    s->at++;
    s->pos++;
  }
  tok[n] = 0;
  if (!n && s->sep == 1)
    return -4;            /* "1,2," at the end of the file */
  return n > 0;
}

static int parse(const char *tok, double *v)
{
  char *end;
  errno = 0;
  *v = strtod(tok, &end);
  if (end == tok || *end)
    return -1;
  /* overflow is fine (gives inf, as NumPy would); so is underflow */
  return 0;
}

static int token_error(int r, struct mpai_text *s, const char *tok, char *msg, size_t msglen)
{
  if (r == -1) {
    mpai_io_msg(msg, msglen, "read error: %s", strerror(errno));
    return MPE_EIO;
  }
  if (r == -2)
    mpai_io_msg(msg, msglen, "line %llu: a token longer than %d characters", (unsigned long long)s->line, TOKMAX - 1);
  else if (r == -3)
    mpai_io_msg(msg, msglen, "line %llu: control character or NUL byte (binary file?)", (unsigned long long)s->line);
  else if (r == -4)
    mpai_io_msg(msg, msglen, "line %llu: an empty field (a comma or semicolon with no number before it)",
                (unsigned long long)s->line);
  else
    mpai_io_msg(msg, msglen, "line %llu: '%.40s' is not a number", (unsigned long long)s->line, tok);
  return MPE_EFORMAT;
}

int mpai_text_rewind(struct mpai_text *s, FILE *fp, char *msg, size_t msglen)
{
  if (fseeko(fp, 0, SEEK_SET)) {
    mpai_io_msg(msg, msglen, "seek failed: %s", strerror(errno));
    return MPE_EIO;
  }
  clearerr(fp);
  s->len = s->at = 0;
  s->pos = 0;
  s->line = 1;
  s->eof = 0;
  s->sep = 2;
  return MPE_OK;
}

int mpai_text_scan(struct mpai_text *s, FILE *fp, mpe_io_tensor *t, char *msg, size_t msglen)
{
  int rc = mpai_text_rewind(s, fp, msg, msglen);
  if (rc)
    return rc;
  char tok[TOKMAX];
  uint64_t count = 0, rows = 0, cols = 0, inrow = 0, nl = 0;
  int ragged = 0;
  for (;;) {
    uint64_t before = nl;
    int r = next_token(s, fp, tok, &nl);
    if (nl != before && inrow) {     /* a line with values ended */
      if (rows && inrow != cols)
        ragged = 1;
      cols = inrow;
      rows++;
      inrow = 0;
    }
    if (r == 0)
      break;
    double v;
    if (r < 0 || parse(tok, &v))
      return token_error(r < 0 ? r : 0, s, tok, msg, msglen);
    inrow++;
    count++;
  }
  if (inrow) {
    if (rows && inrow != cols)
      ragged = 1;
    cols = inrow;
    rows++;
  }
  t->dtype = MPE_FP64;
  t->value_type = MPE_FP64;
  t->count = count;
  if (!ragged && rows > 1 && cols > 1) {
    t->ndim = 2;
    t->shape[0] = rows;
    t->shape[1] = cols;
  } else {
    t->ndim = 1;
    t->shape[0] = count;
  }
  return MPE_OK;
}

int mpai_text_read(struct mpai_text *s, FILE *fp, double *v, size_t max, size_t *n, char *msg, size_t msglen)
{
  char tok[TOKMAX];
  uint64_t nl = 0;
  size_t k = 0;
  while (k < max) {
    int r = next_token(s, fp, tok, &nl);
    if (r == 0)
      break;
    if (r < 0 || parse(tok, &v[k]))
      return token_error(r < 0 ? r : 0, s, tok, msg, msglen);
    k++;
  }
  *n = k;
  return MPE_OK;
}
