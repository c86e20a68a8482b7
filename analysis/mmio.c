/* A defensive Matrix Market reader: every malformed input is MPE_EFORMAT
   (never a crash, never a huge allocation trusted from a header). */
#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include "mpemu/ir.h"

enum { F_REAL, F_PATTERN };
enum { S_GENERAL, S_SYMMETRIC, S_SKEW };

typedef struct {
  FILE *f;
  char *line;
  size_t cap;
} reader;

/* The next line that is neither blank nor a comment; NULL at end of file. */
static char *next_data_line(reader *rd)
{
  ssize_t len;
  while ((len = getline(&rd->line, &rd->cap, rd->f)) >= 0) {
    char *s = rd->line;
    if (memchr(s, '\0', (size_t)len))
      return (char *)-1;   /* binary junk */
    while (isspace((unsigned char)*s))
      s++;
    if (*s == '\0' || *s == '%')
      continue;
    return s;
  }
  return NULL;
}

static int parse_long(const char **s, long long *v)
{
  char *end;
  while (isspace((unsigned char)**s))
    (*s)++;
  if (!**s)
    return 0;
  errno = 0;
  *v = strtoll(*s, &end, 10);
  if (end == *s || errno || (*end && !isspace((unsigned char)*end)))
    return 0;
  *s = end;
  return 1;
}

/* 1 ok, 0 not a number, -1 not finite */
static int parse_double(const char **s, double *v)
{
  char *end;
  while (isspace((unsigned char)**s))
    (*s)++;
  if (!**s)
    return 0;
  *v = strtod(*s, &end);
  if (end == *s || (*end && !isspace((unsigned char)*end)))
    return 0;
  *s = end;
  return isfinite(*v) ? 1 : -1;
}

static int at_end(const char *s)
{
  while (isspace((unsigned char)*s))
    s++;
  return *s == '\0';
}

typedef struct {
  int *i, *j;
  double *v;
  size_t n, cap;
} coo;

static int coo_push(coo *c, int i, int j, double v)
{
  if (c->n == c->cap) {
    size_t cap = c->cap ? 2 * c->cap : 1024;
    int *ni = realloc(c->i, cap * sizeof *ni);
    if (ni) c->i = ni;
    int *nj = realloc(c->j, cap * sizeof *nj);
    if (nj) c->j = nj;
    double *nv = realloc(c->v, cap * sizeof *nv);
    if (nv) c->v = nv;
    if (!ni || !nj || !nv)
      return MPE_ENOMEM;
    c->cap = cap;
  }
  c->i[c->n] = i;
  c->j[c->n] = j;
  c->v[c->n++] = v;
  return MPE_OK;
}

/* COO -> CSR with columns sorted in each row and duplicates summed (in file order). */
static int coo_to_csr(mpe_csr **out, const coo *c, int m, int n)
{
  mpe_csr *A;
  int rc = mpe_csr_alloc(&A, m, n, c->n);
  if (rc)
    return rc;
  size_t *fill = calloc((size_t)m + 1, sizeof *fill);
  size_t maxlen = 0;
  for (size_t k = 0; k < c->n; k++)
    A->rowptr[c->i[k] + 1]++;
  for (int r = 0; r < m; r++) {
    if (A->rowptr[r + 1] > maxlen)
      maxlen = A->rowptr[r + 1];
    A->rowptr[r + 1] += A->rowptr[r];
  }
  int *tcol = malloc((maxlen ? maxlen : 1) * sizeof *tcol);
  double *tv = malloc((maxlen ? maxlen : 1) * sizeof *tv);
  if (!fill || !tcol || !tv) {
    free(fill);
    free(tcol);
    free(tv);
    mpe_csr_free(A);
    return MPE_ENOMEM;
  }
  for (size_t k = 0; k < c->n; k++) {
    size_t p = A->rowptr[c->i[k]] + fill[c->i[k]]++;
    A->col[p] = c->j[k];
    A->val[p] = c->v[k];
  }
  size_t w = 0;
  for (int r = 0; r < m; r++) {
    size_t b = A->rowptr[r], len = A->rowptr[r + 1] - b;
    /* stable insertion sort by column: rows are short */
    for (size_t k = 0; k < len; k++) {
      int col = A->col[b + k];
      double v = A->val[b + k];
      size_t q = k;
      while (q > 0 && tcol[q - 1] > col) {
        tcol[q] = tcol[q - 1];
        tv[q] = tv[q - 1];
        q--;
      }
      tcol[q] = col;
      tv[q] = v;
    }
    A->rowptr[r] = w;
    for (size_t k = 0; k < len; k++) {
      if (w > A->rowptr[r] && A->col[w - 1] == tcol[k]) {
        A->val[w - 1] += tv[k];
      } else {
        A->col[w] = tcol[k];
        A->val[w++] = tv[k];
      }
    }
  }
  A->rowptr[m] = w;
  A->nnz = w;
  free(fill);
  free(tcol);
  free(tv);
  *out = A;
  return MPE_OK;
}

int mpe_mtx_read(mpe_csr **out, const char *path)
{
  if (!out || !path)
    return MPE_EINVAL;
  reader rd = { fopen(path, "r"), NULL, 0 };
  if (!rd.f)
    return MPE_EIO;
  struct stat st;
  if (fstat(fileno(rd.f), &st) != 0 || !S_ISREG(st.st_mode)) {
    fclose(rd.f);
    return MPE_EIO;
  }
  size_t fsize = (size_t)st.st_size;
  coo c = { 0 };
  int rc = MPE_EFORMAT;

  /* banner */
  if (getline(&rd.line, &rd.cap, rd.f) < 0)
    goto out;
  char obj[32], fmt[32], field[32], sym[32], extra[2];
  int got = sscanf(rd.line, "%%%%MatrixMarket %31s %31s %31s %31s %1s", obj, fmt, field, sym, extra);
  if (got != 4)
    goto out;
  if (strcasecmp(obj, "matrix") != 0) {
    rc = strcasecmp(obj, "vector") == 0 ? MPE_EUNSUP : MPE_EFORMAT;
    goto out;
  }
  int coordinate;
  if (strcasecmp(fmt, "coordinate") == 0)
    coordinate = 1;
  else if (strcasecmp(fmt, "array") == 0)
    coordinate = 0;
  else
    goto out;
  int fld;
  if (strcasecmp(field, "real") == 0 || strcasecmp(field, "double") == 0 ||
      strcasecmp(field, "integer") == 0)
    fld = F_REAL;
  else if (strcasecmp(field, "pattern") == 0 && coordinate)
    fld = F_PATTERN;
  else if (strcasecmp(field, "complex") == 0) {
    rc = MPE_EUNSUP;
    goto out;
  } else
    goto out;
  int symm;
  if (strcasecmp(sym, "general") == 0)
    symm = S_GENERAL;
  else if (strcasecmp(sym, "symmetric") == 0)
    symm = S_SYMMETRIC;
  else if (strcasecmp(sym, "skew-symmetric") == 0)
    symm = S_SKEW;
  else if (strcasecmp(sym, "hermitian") == 0) {
    rc = MPE_EUNSUP;
    goto out;
  } else
    goto out;

  /* size line */
  const char *s = next_data_line(&rd);
  if (!s || s == (char *)-1)
    goto out;
  long long m, n, nz = 0;
  if (!parse_long(&s, &m) || !parse_long(&s, &n) || (coordinate && !parse_long(&s, &nz)) || !at_end(s))
    goto out;
  if (m < 1 || n < 1 || m > INT_MAX - 1 || n > INT_MAX - 1 || nz < 0)
    goto out;
  if (symm != S_GENERAL && m != n)
    goto out;
  /* every entry needs a few bytes: a count beyond the file size is a lie */
  unsigned long long want = coordinate ? (unsigned long long)nz
                                       : (unsigned long long)m * (unsigned long long)n;
  if (!coordinate && symm != S_GENERAL)
    want = symm == S_SYMMETRIC ? (unsigned long long)m * (m + 1) / 2 : (unsigned long long)m * (m - 1) / 2;
  if (coordinate && (unsigned long long)nz > (unsigned long long)m * (unsigned long long)n)
    goto out;
  if (want > fsize / 2 + 1)
    goto out;

  if (coordinate) {
    for (long long k = 0; k < nz; k++) {
      s = next_data_line(&rd);
      if (!s || s == (char *)-1)
        goto out;
      long long i, j;
      double v = 1.0;
      if (!parse_long(&s, &i) || !parse_long(&s, &j))
        goto out;
      if (fld == F_REAL) {
        int pr = parse_double(&s, &v);
        if (pr == 0)
          goto out;
        if (pr < 0) {
          rc = MPE_ERANGE;
          goto out;
        }
      }
      if (!at_end(s) || i < 1 || i > m || j < 1 || j > n)
        goto out;
      if (symm != S_GENERAL && i < j)
        goto out;   /* only the lower triangle may be given */
      if (symm == S_SKEW && i == j)
        goto out;
      if ((rc = coo_push(&c, (int)i - 1, (int)j - 1, v)) != MPE_OK)
        goto out;
      if (symm != S_GENERAL && i != j &&
          (rc = coo_push(&c, (int)j - 1, (int)i - 1, symm == S_SKEW ? -v : v)) != MPE_OK)
        goto out;
      rc = MPE_EFORMAT;
    }
  } else {
    long long i = 0, j = 0;   /* column-major walk over the stored part */
    if (symm == S_SKEW)
      i = 1;
    unsigned long long count = 0;
    s = NULL;
    while (count < want) {
      if (!s || at_end(s)) {
        s = next_data_line(&rd);
        if (!s || s == (char *)-1)
          goto out;
      }
      double v;
      int pr = parse_double(&s, &v);
      if (pr == 0)
        goto out;
      if (pr < 0) {
        rc = MPE_ERANGE;
        goto out;
      }
      if (v != 0.0) {
        if ((rc = coo_push(&c, (int)i, (int)j, v)) != MPE_OK)
          goto out;
        if (symm != S_GENERAL && i != j &&
            (rc = coo_push(&c, (int)j, (int)i, symm == S_SKEW ? -v : v)) != MPE_OK)
          goto out;
        rc = MPE_EFORMAT;
      }
      count++;
      if (++i == m) {
        j++;
        i = symm == S_GENERAL ? 0 : symm == S_SYMMETRIC ? j : j + 1;
      }
    }
    if (s && !at_end(s))
      goto out;
  }
  /* nothing but comments and blank lines may follow */
  if (next_data_line(&rd) != NULL)
    goto out;
  if (ferror(rd.f)) {
    rc = MPE_EIO;
    goto out;
  }
  rc = coo_to_csr(out, &c, (int)m, (int)n);
out:
  free(c.i);
  free(c.j);
  free(c.v);
  free(rd.line);
  fclose(rd.f);
  return rc;
}
