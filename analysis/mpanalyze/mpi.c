/* mpanalyze under mpirun: MPI is started only when a launcher set the
   environment (so a plain `mpanalyze` never touches MPI). The range report
   (cmd_range.c), refine --cond-sweep's points (cmd_refine.c) and the scale
   replay's steps (cmd_scale.c) are shared out among the ranks; every other
   command runs on rank 0 alone. Without MPI at build time these are
   single-process stand-ins. */
#include <config.h>
#include <stdlib.h>
#include "mpanalyze.h"

int mpa_err_local = 0;

#ifdef MPA_HAVE_MPI
#include <mpi.h>

static int started, rank, size = 1;

void mpa_mpi_init(int *argc, char ***argv)
{
  if (!getenv("OMPI_COMM_WORLD_SIZE") && !getenv("PMI_SIZE") && !getenv("PMIX_RANK"))
    return;
  if (MPI_Init(argc, argv) != MPI_SUCCESS)
    return;
  started = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
}

void mpa_mpi_finalize(void)
{
  if (started)
    MPI_Finalize();
  started = 0;
}

int mpa_mpi_rank(void) { return rank; }
int mpa_mpi_size(void) { return size; }

int mpa_mpi_max(int v)
{
  int out = v;
  if (started && size > 1)
    MPI_Allreduce(&v, &out, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  return out;
}

int mpa_mpi_sum_int(int *v, size_t n)
{
  if (started && size > 1 && n > 0 &&
      (n > INT32_MAX || MPI_Allreduce(MPI_IN_PLACE, v, (int)n, MPI_INT, MPI_SUM, MPI_COMM_WORLD) != MPI_SUCCESS))
    return -1;
  return 0;
}

int mpa_mpi_sum_double(double *v, size_t n)
{
  if (started && size > 1 && n > 0 &&
      (n > INT32_MAX || MPI_Allreduce(MPI_IN_PLACE, v, (int)n, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD) != MPI_SUCCESS))
    return -1;
  return 0;
}

int mpa_mpi_send(const void *buf, size_t len, int to, int tag)
{
  uint64_t n = len;
  if (MPI_Send(&n, 1, MPI_UINT64_T, to, tag, MPI_COMM_WORLD) != MPI_SUCCESS)
    return -1;
  for (size_t off = 0; off < len;) {   /* counts are int: pieces of at most 1 GiB */
    size_t k = len - off < (1u << 30) ? len - off : (1u << 30);
    if (MPI_Send((const char *)buf + off, (int)k, MPI_BYTE, to, tag, MPI_COMM_WORLD) != MPI_SUCCESS)
      return -1;
    off += k;
  }
  return 0;
}

int mpa_mpi_recv(void **buf, size_t *len, int from, int tag)
{
  uint64_t n;
  if (MPI_Recv(&n, 1, MPI_UINT64_T, from, tag, MPI_COMM_WORLD, MPI_STATUS_IGNORE) != MPI_SUCCESS)
    return -1;
  char *b = malloc(n ? (size_t)n : 1);
  if (!b)
    return -1;
  for (size_t off = 0; off < n;) {
    size_t k = n - off < (1u << 30) ? (size_t)n - off : (1u << 30);
    if (MPI_Recv(b + off, (int)k, MPI_BYTE, from, tag, MPI_COMM_WORLD, MPI_STATUS_IGNORE) != MPI_SUCCESS) {
      free(b);
      return -1;
    }
    off += k;
  }
  *buf = b;
  *len = (size_t)n;
  return 0;
}
#else
void mpa_mpi_init(int *argc, char ***argv) { (void)argc; (void)argv; }
void mpa_mpi_finalize(void) {}
int mpa_mpi_rank(void) { return 0; }
int mpa_mpi_size(void) { return 1; }
int mpa_mpi_max(int v) { return v; }
int mpa_mpi_sum_int(int *v, size_t n) { (void)v; (void)n; return 0; }
int mpa_mpi_sum_double(double *v, size_t n) { (void)v; (void)n; return 0; }
int mpa_mpi_send(const void *buf, size_t len, int to, int tag) { (void)buf; (void)len; (void)to; (void)tag; return -1; }
int mpa_mpi_recv(void **buf, size_t *len, int from, int tag) { (void)buf; (void)len; (void)from; (void)tag; return -1; }
#endif
