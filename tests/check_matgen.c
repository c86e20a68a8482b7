/* Test matrices: randsvd reaches its target condition number and singular
   value distribution (LAPACK SVD), Hilbert, Laplacians (dense = CSR, spectrum),
   diagonally dominant; the Matrix Market reader on good and malformed files. */
#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <unistd.h>
#include <sys/resource.h>
#include <lapacke.h>
#include "testsupport.h"

static int cmp_desc(const void *a, const void *b)
{
  double x = *(const double *)a, y = *(const double *)b;
  return (x < y) - (x > y);
}

/* singular values, descending */
static void svd(int n, const double *A, double *s)
{
  double *w = malloc((size_t)n * n * sizeof *w);
  memcpy(w, A, (size_t)n * n * sizeof *w);
  ck_assert_int_eq(LAPACKE_dgesdd(LAPACK_COL_MAJOR, 'N', n, n, w, n, s, NULL, 1, NULL, 1), 0);
  free(w);
}

START_TEST(test_randsvd_modes)
{
  const int n = 40;
  const double kappa = 1e6;
  int mode = _i + 1;
  double *A = malloc((size_t)n * n * sizeof *A), s[40], want[40];
  ck_assert_int_eq(mpe_mat_randsvd(A, n, n, kappa, mode, ts_seed() + (uint64_t)mode), MPE_OK);
  svd(n, A, s);
  ck_assert_msg(fabs(s[0] / s[n - 1] - kappa) <= 1e-6 * kappa, "mode %d: kappa %.17g", mode, s[0] / s[n - 1]);
  for (int i = 0; i < n; i++) {
    double t = (double)i / (n - 1);
    switch (mode) {
    case 1: want[i] = i == 0 ? 1.0 : 1.0 / kappa; break;
    case 2: want[i] = i == n - 1 ? 1.0 / kappa : 1.0; break;
    case 3: want[i] = pow(kappa, -t); break;
    case 4: want[i] = 1.0 - t * (1.0 - 1.0 / kappa); break;
    default: want[i] = s[i]; break;
    }
  }
  qsort(want, n, sizeof *want, cmp_desc);
  for (int i = 0; i < n; i++)
    ck_assert_msg(fabs(s[i] - want[i]) <= 1e-12, "mode %d sigma_%d %.17g want %.17g", mode, i, s[i], want[i]);
  if (mode == 5) {   /* log-uniform: all inside [1/kappa, 1], end points pinned, not all equal */
    ck_assert(fabs(s[0] - 1.0) <= 1e-12 && fabs(s[n - 1] - 1.0 / kappa) <= 1e-15);
    int distinct = 0;
    for (int i = 1; i < n; i++)
      distinct += fabs(s[i] - s[i - 1]) > 1e-3 * s[i];
    ck_assert_int_ge(distinct, n / 2);
  }
  free(A);
}
END_TEST

START_TEST(test_randsvd_seed_errors)
{
  const int n = 12, lda = 15;
  double A[15 * 12], B[15 * 12];
  for (int i = 0; i < lda * n; i++)
    A[i] = B[i] = -7.0;
  ck_assert_int_eq(mpe_mat_randsvd(A, n, lda, 100, 3, 42), MPE_OK);
  ck_assert_int_eq(mpe_mat_randsvd(B, n, lda, 100, 3, 42), MPE_OK);
  ck_assert(memcmp(A, B, sizeof A) == 0);
  ck_assert(A[n] == -7.0);   /* rows beyond n in each column untouched */
  ck_assert_int_eq(mpe_mat_randsvd(B, n, lda, 100, 3, 43), MPE_OK);
  ck_assert(memcmp(A, B, sizeof A) != 0);
  memcpy(B, A, sizeof A);
  ck_assert_int_eq(mpe_mat_randsvd(B, n, lda, 0.5, 3, 1), MPE_EINVAL);
  ck_assert_int_eq(mpe_mat_randsvd(B, n, lda, NAN, 3, 1), MPE_EINVAL);
  ck_assert_int_eq(mpe_mat_randsvd(B, n, lda, INFINITY, 3, 1), MPE_EINVAL);
  ck_assert_int_eq(mpe_mat_randsvd(B, n, lda, 10, 0, 1), MPE_EINVAL);
  ck_assert_int_eq(mpe_mat_randsvd(B, n, lda, 10, 6, 1), MPE_EINVAL);
  ck_assert_int_eq(mpe_mat_randsvd(B, n, n - 1, 10, 1, 1), MPE_EINVAL);
  ck_assert_int_eq(mpe_mat_randsvd(B, 0, lda, 10, 1, 1), MPE_EINVAL);
  ck_assert_int_eq(mpe_mat_randsvd(NULL, n, lda, 10, 1, 1), MPE_EINVAL);
  ck_assert(memcmp(A, B, sizeof A) == 0);
}
END_TEST

START_TEST(test_hilbert_dominant)
{
  const int n = 30;
  double A[30 * 30];
  ck_assert_int_eq(mpe_mat_hilbert(A, n, n), MPE_OK);
  ck_assert(A[0] == 1.0 && A[1] == 0.5 && A[n] == 0.5 && A[(n - 1) * n + n - 1] == 1.0 / (2 * n - 1));
  ck_assert_int_eq(mpe_mat_hilbert(A, n, n - 1), MPE_EINVAL);
  ck_assert_int_eq(mpe_mat_dominant(A, n, n, ts_seed()), MPE_OK);
  for (int i = 0; i < n; i++) {
    double off = 0.0;
    for (int j = 0; j < n; j++)
      if (j != i) {
        ck_assert(fabs(A[j * n + i]) < 1.0);
        off += fabs(A[j * n + i]);
      }
    ck_assert(A[i * n + i] >= off + 1);   /* 1 + |a_ii| on top of the row's sum */
    ck_assert(A[i * n + i] < off + 2);
  }
  /* n = 1 is the bare 1 + |a_11|, never 0 whatever the seed's sign */
  for (uint64_t s = 1; s <= 64; s++) {
    ck_assert_int_eq(mpe_mat_dominant(A, 1, 1, s), MPE_OK);
    ck_assert(A[0] >= 1.0 && A[0] < 2.0);
  }
  ck_assert_int_eq(mpe_mat_dominant(NULL, n, n, 1), MPE_EINVAL);
}
END_TEST

START_TEST(test_laplace)
{
  static const int dims[][2] = { { 1, 20 }, { 2, 6 }, { 3, 4 } };
  for (int c = 0; c < 3; c++) {
    int dim = dims[c][0], m = dims[c][1], n = 1;
    for (int d = 0; d < dim; d++)
      n *= m;
    double *D = malloc((size_t)n * n * sizeof *D), *E = malloc((size_t)n * n * sizeof *E), *w = malloc((size_t)n * sizeof *w);
    ck_assert_int_eq(mpe_mat_laplace(D, dim, m, n), MPE_OK);
    mpe_csr *L;
    ck_assert_int_eq(mpe_csr_laplace(&L, dim, m), MPE_OK);
    ck_assert_int_eq(L->nrows, n);
    ck_assert_uint_eq(L->nnz, (size_t)n + 2 * (size_t)dim * (m - 1) * (n / m));
    for (int i = 0; i < n; i++)
      for (size_t p = L->rowptr[i] + 1; p < L->rowptr[i + 1]; p++)
        ck_assert_int_lt(L->col[p - 1], L->col[p]);
    ck_assert_int_eq(mpe_csr_to_dense(E, n, L), MPE_OK);
    ck_assert(memcmp(D, E, (size_t)n * n * sizeof *D) == 0);
    /* eigenvalues: sums over dimensions of 2 - 2cos(k pi/(m+1)) */
    ck_assert_int_eq(LAPACKE_dsyev(LAPACK_COL_MAJOR, 'N', 'L', n, E, n, w), 0);
    double lmin = dim * (2 - 2 * cos(M_PI / (m + 1))), lmax = dim * (2 - 2 * cos(m * M_PI / (m + 1)));
    ck_assert(fabs(w[0] - lmin) < 1e-12 && fabs(w[n - 1] - lmax) < 1e-12);
    mpe_csr_free(L);
    free(D);
    free(E);
    free(w);
  }
  double A[4];
  mpe_csr *L = (mpe_csr *)0x1;
  ck_assert_int_eq(mpe_mat_laplace(A, 4, 2, 16), MPE_EINVAL);
  ck_assert_int_eq(mpe_mat_laplace(A, 0, 2, 16), MPE_EINVAL);
  ck_assert_int_eq(mpe_mat_laplace(A, 2, 2, 3), MPE_EINVAL);
  ck_assert_int_eq(mpe_csr_laplace(&L, 3, 0), MPE_EINVAL);
  ck_assert_int_eq(mpe_csr_laplace(&L, 3, 100000), MPE_EINVAL);   /* order overflows an int */
  ck_assert_ptr_null(L);   /* NULL after an error (the constructor convention, mpemu/core.h) */
  ck_assert_int_eq(mpe_csr_alloc(NULL, 2, 2, 1), MPE_EINVAL);
  L = (mpe_csr *)0x1;
  ck_assert_int_eq(mpe_csr_alloc(&L, 0, 2, 1), MPE_EINVAL);
  ck_assert_ptr_null(L);
  mpe_csr_free(NULL);
}
END_TEST

static char *data_path(const char *name)
{
  static char buf[4096];
  const char *src = getenv("MPE_SRCDIR");
  snprintf(buf, sizeof buf, "%s/tests/data/%s", src ? src : MPE_SRCDIR, name);
  return buf;
}

static void dense_of(const char *file, int m, int n, const double *want)
{
  mpe_csr *A = NULL;
  ck_assert_int_eq(mpe_mtx_read(&A, data_path(file)), MPE_OK);
  ck_assert_int_eq(A->nrows, m);
  ck_assert_int_eq(A->ncols, n);
  double *D = malloc((size_t)m * n * sizeof *D);
  ck_assert_int_eq(mpe_csr_to_dense(D, m, A), MPE_OK);
  for (int i = 0; i < m * n; i++)
    ck_assert_msg(D[i] == want[i], "%s entry %d: %g want %g", file, i, D[i], want[i]);
  size_t nz = 0;
  for (int i = 0; i < m * n; i++)
    nz += want[i] != 0;
  ck_assert_uint_eq(A->nnz, nz);
  mpe_csr_free(A);
  free(D);
}

START_TEST(test_mtx_good)
{
  /* column-major expectations */
  static const double general[] = { 1.5, 0, 7, 0, 0, 0, 0, 4, 0, -1, 0, -2.5 };
  static const double sym[] = { 4, -1, 0, 0, -1, 4, -1, 0, 0, -1, 4, -1, 0, 0, -1, 4 };
  static const double skew[] = { 0, 5, -2, -5, 0, 0, 2, 0, 0 };
  static const double pattern[] = { 1, 1, 0, 1 };
  static const double array[] = { 1, 2, 0, 3, 0, -4 };
  static const double array_sym[] = { 2, -1, 0, -1, 2, -1, 0, -1, 2 };
  dense_of("general.mtx", 3, 4, general);
  dense_of("symmetric.mtx", 4, 4, sym);
  dense_of("skew.mtx", 3, 3, skew);
  dense_of("pattern.mtx", 2, 2, pattern);
  dense_of("array.mtx", 3, 2, array);
  dense_of("array_sym.mtx", 3, 3, array_sym);
}
END_TEST

START_TEST(test_mtx_bad)
{
  static const struct { const char *file; int rc; } cases[] = {
    { "bad_sizeline.mtx", MPE_EFORMAT }, { "bad_banner.mtx", MPE_EFORMAT },
    { "bad_symmetry.mtx", MPE_EFORMAT }, { "bad_index.mtx", MPE_EFORMAT },
    { "bad_index0.mtx", MPE_EFORMAT }, { "bad_truncated.mtx", MPE_EFORMAT },
    { "bad_extra.mtx", MPE_EFORMAT }, { "bad_value.mtx", MPE_EFORMAT },
    { "bad_tokens.mtx", MPE_EFORMAT }, { "bad_upper.mtx", MPE_EFORMAT },
    { "bad_huge.mtx", MPE_EFORMAT }, { "bad_negative.mtx", MPE_EFORMAT },
    { "bad_array_short.mtx", MPE_EFORMAT }, { "bad_symrect.mtx", MPE_EFORMAT },
    { "bad_binary.mtx", MPE_EFORMAT }, { "bad_empty.mtx", MPE_EFORMAT },
    { "complex.mtx", MPE_EUNSUP }, { "nan.mtx", MPE_ERANGE },
    { "no_such_file.mtx", MPE_EIO },
  };
  for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
    mpe_csr *A = (mpe_csr *)0x1;
    int rc = mpe_mtx_read(&A, data_path(cases[k].file));
    ck_assert_msg(rc == cases[k].rc, "%s: %d (%s), want %d", cases[k].file, rc, mpe_strerror(rc), cases[k].rc);
    ck_assert_ptr_null(A);   /* the constructor convention: NULL on failure */
  }
  mpe_csr *A = (mpe_csr *)0x1;
  ck_assert_int_eq(mpe_mtx_read(&A, data_path("")), MPE_EIO);   /* a directory */
  ck_assert_ptr_null(A);
  ck_assert_int_eq(mpe_mtx_read(NULL, data_path("general.mtx")), MPE_EINVAL);
  A = (mpe_csr *)0x1;
  ck_assert_int_eq(mpe_mtx_read(&A, NULL), MPE_EINVAL);
  ck_assert_ptr_null(A);
}
END_TEST

/* Files whose size line asks for more than the file holds (issue 14): refused
   before anything is allocated, with the sizes still reported by
   mpe_mtx_size; duplicates whose sum overflows are caught after summing. */
START_TEST(test_mtx_hostile)
{
  static const struct { const char *file; int rc; int n; } cases[] = {
    { "hostile/mtx_rows_2g.mtx", MPE_EUNSUP, 2147483646 },   /* 76 bytes, was ~34 GB */
    { "hostile/mtx_rows_1e8.mtx", MPE_EUNSUP, 100000000 },   /* was killed by the OOM killer */
    { "hostile/mtx_dup_overflow.mtx", MPE_ERANGE, 2 },        /* 1.7e308 twice */
  };
  for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
    mpe_csr *A = (mpe_csr *)0x1;
    int rc = mpe_mtx_read(&A, data_path(cases[k].file));
    ck_assert_msg(rc == cases[k].rc, "%s: %d (%s), want %d", cases[k].file, rc, mpe_strerror(rc), cases[k].rc);
    ck_assert_ptr_null(A);   /* the constructor convention: NULL on failure */
    int m = 0, n = 0;
    size_t e = 0;
    rc = mpe_mtx_size(data_path(cases[k].file), &m, &n, &e);
    ck_assert_int_eq(rc, cases[k].rc == MPE_EUNSUP ? MPE_EUNSUP : MPE_OK);
    ck_assert_int_eq(m, cases[k].n);
    ck_assert_int_eq(n, cases[k].n);
    ck_assert_uint_eq(e, cases[k].n == 2 ? 3 : 1);
  }
  struct rusage ru;
  ck_assert_int_eq(getrusage(RUSAGE_SELF, &ru), 0);
  ck_assert_msg(ru.ru_maxrss < 100 * 1024, "peak RSS %ld KiB", ru.ru_maxrss);
  /* order 20000, one entry: reads (20001 row pointers), and mpe_mtx_size says so first */
  int m = 0, n = 0;
  size_t e = 0;
  ck_assert_int_eq(mpe_mtx_size(data_path("hostile/mtx_order20000.mtx"), &m, &n, &e), MPE_OK);
  ck_assert(m == 20000 && n == 20000 && e == 1);
  mpe_csr *A = NULL;
  ck_assert_int_eq(mpe_mtx_read(&A, data_path("hostile/mtx_order20000.mtx")), MPE_OK);
  ck_assert(A->nrows == 20000 && A->nnz == 1);
  mpe_csr_free(A);
  ck_assert_int_eq(mpe_mtx_size(data_path("symmetric.mtx"), &m, &n, NULL), MPE_EINVAL);
  ck_assert_int_eq(mpe_mtx_size(data_path("no_such_file.mtx"), &m, &n, &e), MPE_EIO);
  ck_assert_int_eq(mpe_mtx_size(data_path("bad_banner.mtx"), &m, &n, &e), MPE_EFORMAT);
}
END_TEST

/* Random corruptions of a good file never crash and either parse or give EFORMAT/ERANGE. */
START_TEST(test_mtx_fuzz)
{
  FILE *f = fopen(data_path("symmetric.mtx"), "rb");
  ck_assert_ptr_nonnull(f);
  char good[4096];
  size_t len = fread(good, 1, sizeof good, f);
  fclose(f);
  char path[] = "/tmp/mpemu_mtx_fuzzXXXXXX";
  int fd = mkstemp(path);
  ck_assert_int_ge(fd, 0);
  close(fd);
  uint64_t st = ts_seed();
  static const char alphabet[] = "0123456789 -+.eE%\n\t x9";
  int parsed = 0;
  for (int t = 0; t < 400; t++) {
    char buf[4096];
    memcpy(buf, good, len);
    size_t l = len;
    int edits = 1 + (int)(ts_rand64(&st) % 4);
    for (int e = 0; e < edits; e++) {
      size_t pos = ts_rand64(&st) % l;
      switch (ts_rand64(&st) % 3) {
      case 0: buf[pos] = alphabet[ts_rand64(&st) % (sizeof alphabet - 1)]; break;
      case 1: l = pos + 1; break;   /* truncate */
      default: buf[pos] = (char)(ts_rand64(&st) & 0xff); break;
      }
    }
    f = fopen(path, "wb");
    fwrite(buf, 1, l, f);
    fclose(f);
    mpe_csr *A = NULL;
    int rc = mpe_mtx_read(&A, path);
    ck_assert_msg(rc == MPE_OK || rc == MPE_EFORMAT || rc == MPE_ERANGE || rc == MPE_EUNSUP, "rc %d", rc);
    if (rc == MPE_OK) {
      parsed++;
      ck_assert(A->rowptr[A->nrows] == A->nnz);
      mpe_csr_free(A);
    }
  }
  remove(path);
  ck_assert_int_gt(parsed, 0);
}
END_TEST

/* The libFuzzer corpus of tests/fuzz/run.sh mtx (and any crash it kept):
   every file is read without a crash, and a file that reads is a valid CSR. */
static void read_corpus_file(const char *path, void *ctx)
{
  size_t *ok = ctx;
  mpe_csr *A = NULL;
  int rc = mpe_mtx_read(&A, path);
  ck_assert_msg(rc == MPE_OK || rc == MPE_EFORMAT || rc == MPE_ERANGE || rc == MPE_EUNSUP || rc == MPE_ENOMEM,
                "%s: rc %d", path, rc);
  if (rc == MPE_OK) {
    (*ok)++;
    ck_assert(A->rowptr[0] == 0 && A->rowptr[A->nrows] == A->nnz);
    for (size_t k = 0; k < A->nnz; k++)
      ck_assert(A->col[k] >= 0 && A->col[k] < A->ncols);
    mpe_csr_free(A);
  }
}

START_TEST(test_mtx_corpus)
{
  size_t ok = 0;
  size_t files = ts_each_file("tests/fuzz/corpus/mtx", "", read_corpus_file, &ok) +
                 ts_each_file("tests/fuzz/crashes", "mtx-", read_corpus_file, &ok);
  ck_assert_msg(files > 0, "no Matrix Market fuzz corpus under tests/fuzz");
  printf("mtx fuzz corpus: %zu files read, %zu valid matrices\n", files, ok);
}
END_TEST

int main(void)
{
  Suite *s = suite_create("matgen");
  TCase *tc = tcase_create("randsvd");
  tcase_add_loop_test(tc, test_randsvd_modes, 0, 5);
  tcase_add_test(tc, test_randsvd_seed_errors);
  suite_add_tcase(s, tc);
  tc = tcase_create("structured");
  tcase_add_test(tc, test_hilbert_dominant);
  tcase_add_test(tc, test_laplace);
  suite_add_tcase(s, tc);
  tc = tcase_create("matrix-market");
  tcase_add_test(tc, test_mtx_good);
  tcase_add_test(tc, test_mtx_bad);
  tcase_add_test(tc, test_mtx_hostile);
  tcase_add_test(tc, test_mtx_fuzz);
  tcase_add_test(tc, test_mtx_corpus);
  suite_add_tcase(s, tc);
  return ts_run(s);
}
