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
#include "mpei_fenv.h"
#include "../mpai.h"   /* mpai_fopen_regular, inline */

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

/* entry (i, j) and, in a symmetric or skew-symmetric matrix, its mirror (j, i) */
static int push_entry(coo *c, int i, int j, double v, int symm)
{
  int rc = coo_push(c, i, j, v);
  if (rc == MPE_OK && symm != S_GENERAL && i != j)
    rc = coo_push(c, j, i, symm == S_SKEW ? -v : v);
  return rc;
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
  /* each value was finite; a sum of duplicates may not be (1.7e308 twice) */
  for (size_t k = 0; k < w; k++)
    if (!isfinite(A->val[k])) {
      mpe_csr_free(A);
      return MPE_ERANGE;
    }
  *out = A;
  return MPE_OK;
}

/* What the banner and size line say. */
typedef struct {
  int coordinate, fld, symm;
  long long m, n, nz;
  unsigned long long want;   /* stored entries the file must hold */
} header;

/* Read and check the banner and size line; MPE_EUNSUP past the limit on rows
   and columns with no entry (h->m, h->n are then filled in). */
static int read_header(reader *rd, size_t fsize, header *h)
{
  memset(h, 0, sizeof *h);
  if (getline(&rd->line, &rd->cap, rd->f) < 0)
    return MPE_EFORMAT;
  char obj[32], fmt[32], field[32], sym[32], extra[2];
  int got = sscanf(rd->line, "%%%%MatrixMarket %31s %31s %31s %31s %1s", obj, fmt, field, sym, extra);
  if (got != 4)
    return MPE_EFORMAT;
  if (strcasecmp(obj, "matrix") != 0)
    return strcasecmp(obj, "vector") == 0 ? MPE_EUNSUP : MPE_EFORMAT;
  if (strcasecmp(fmt, "coordinate") == 0)
    h->coordinate = 1;
  else if (strcasecmp(fmt, "array") == 0)
    h->coordinate = 0;
  else
    return MPE_EFORMAT;
  if (strcasecmp(field, "real") == 0 || strcasecmp(field, "double") == 0 ||
      strcasecmp(field, "integer") == 0)
    h->fld = F_REAL;
  else if (strcasecmp(field, "pattern") == 0 && h->coordinate)
    h->fld = F_PATTERN;
  else
    return strcasecmp(field, "complex") == 0 ? MPE_EUNSUP : MPE_EFORMAT;
  if (strcasecmp(sym, "general") == 0)
    h->symm = S_GENERAL;
  else if (strcasecmp(sym, "symmetric") == 0)
    h->symm = S_SYMMETRIC;
  else if (strcasecmp(sym, "skew-symmetric") == 0)
    h->symm = S_SKEW;
  else
    return strcasecmp(sym, "hermitian") == 0 ? MPE_EUNSUP : MPE_EFORMAT;

  const char *s = next_data_line(rd);
  if (!s || s == (char *)-1)
    return MPE_EFORMAT;
  long long m, n, nz = 0;
  if (!parse_long(&s, &m) || !parse_long(&s, &n) || (h->coordinate && !parse_long(&s, &nz)) || !at_end(s))
    return MPE_EFORMAT;
  if (m < 1 || n < 1 || m > INT_MAX - 1 || n > INT_MAX - 1 || nz < 0)
    return MPE_EFORMAT;
  if (h->symm != S_GENERAL && m != n)
    return MPE_EFORMAT;
  /* every entry needs a few bytes: a count beyond the file size is a lie */
  unsigned long long want = h->coordinate ? (unsigned long long)nz
                                          : (unsigned long long)m * (unsigned long long)n;
  if (!h->coordinate && h->symm != S_GENERAL)
    want = h->symm == S_SYMMETRIC ? (unsigned long long)m * (m + 1) / 2 : (unsigned long long)m * (m - 1) / 2;
  if (h->coordinate && (unsigned long long)nz > (unsigned long long)m * (unsigned long long)n)
    return MPE_EFORMAT;
  if (want > fsize / 2 + 1)
    return MPE_EFORMAT;
  h->m = m;
  h->n = n;
  h->nz = nz;
  h->want = want;
  /* rows and columns cost memory whether or not they hold an entry: at most
     MPE_MTX_MAX_EMPTY of them beyond what the entries (mirrored: twice) fill */
  unsigned long long fillable = 2 * want + MPE_MTX_MAX_EMPTY;
  if ((unsigned long long)m > fillable || (unsigned long long)n > fillable)
    return MPE_EUNSUP;
  return MPE_OK;
}

/* Opens path (a regular file) and reads its header into *h: the read_header
   result, or MPE_EIO. rd is to be closed with close_reader whatever the result. */
static int open_matrix(reader *rd, const char *path, header *h)
{
  memset(h, 0, sizeof *h);
  rd->line = NULL;
  rd->cap = 0;
  if (mpai_fopen_regular(path, &rd->f))
    return MPE_EIO;
  struct stat st;
  if (fstat(fileno(rd->f), &st) != 0)
    return MPE_EIO;
  return read_header(rd, (size_t)st.st_size, h);
}

static void close_reader(reader *rd)
{
  free(rd->line);
  if (rd->f)
    fclose(rd->f);
}

int mpe_mtx_size(const char *path, int *nrows, int *ncols, size_t *entries)
{
  MPEI_FENV_GUARD();
  if (!path || !nrows || !ncols || !entries)
    return MPE_EINVAL;
  reader rd;
  header h;
  int rc = open_matrix(&rd, path, &h);
  if (rc == MPE_OK || (rc == MPE_EUNSUP && h.m > 0)) {
    *nrows = (int)h.m;
    *ncols = (int)h.n;
    *entries = (size_t)h.want;
  }
  close_reader(&rd);
  return rc;
}

int mpe_mtx_read(mpe_csr **out, const char *path)
{
  MPEI_FENV_GUARD();
  if (!out)
    return MPE_EINVAL;
  *out = NULL;   /* the constructor convention (mpemu/core.h): NULL on every failure */
  if (!path)
    return MPE_EINVAL;
  reader rd;
  coo c = { 0 };
  header h;
  const char *s;
  int rc = open_matrix(&rd, path, &h);
  if (rc != MPE_OK)
    goto out;
  rc = MPE_EFORMAT;
  int coordinate = h.coordinate, fld = h.fld, symm = h.symm;
  long long m = h.m, n = h.n, nz = h.nz;
  unsigned long long want = h.want;

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
        if (pr <= 0) {
          rc = pr < 0 ? MPE_ERANGE : MPE_EFORMAT;
          goto out;
        }
      }
      if (!at_end(s) || i < 1 || i > m || j < 1 || j > n)
        goto out;
      if (symm != S_GENERAL && i < j)
        goto out;   /* only the lower triangle may be given */
      if (symm == S_SKEW && i == j)
        goto out;
      if ((rc = push_entry(&c, (int)i - 1, (int)j - 1, v, symm)) != MPE_OK)
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
      if (pr <= 0) {
        rc = pr < 0 ? MPE_ERANGE : MPE_EFORMAT;
        goto out;
      }
      if (v != 0.0) {
        if ((rc = push_entry(&c, (int)i, (int)j, v, symm)) != MPE_OK)
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
  close_reader(&rd);
  return rc;
}
