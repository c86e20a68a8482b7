/* The ring all-reduce of mpe_allreduce(3), for real: every MPI rank holds its
   own gradient shard, the chunks travel between ranks as MPI point-to-point
   messages (reduce-scatter, then all-gather), and each rank adds the partial
   it receives to its own values with mpe_ew_add in the chosen format and
   rounding mode. Rank 0 then gathers the shards, runs the emulation
   (mpe_allreduce_f32) and checks that the bits are the same on every rank.

     mpirun -np 3 examples/allreduce_mpi --format bf16 --n 100000
     mpirun -np 2 examples/allreduce_mpi --format e4m3 --scale 1024 --round sr

   Prints one JSON line on rank 0; exit status 0 when the bits agree, 1 when
   not, 2 for bad options. --compare tree|naive checks against another
   algorithm's emulation instead (a control: it should differ). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <mpi.h>
#include <gsl/gsl_randist.h>
#include <gsl/gsl_rng.h>
#include <mpemu.h>

/* the ring on this rank: x holds this rank's n cast values and receives the sum */
static int ring_allreduce(float *x, size_t n, const mpe_allreduce_opts *o, MPI_Comm comm)
{
  int rank, size;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);
  size_t N = (size_t)size, r = (size_t)rank;
  size_t big = n / N + 1;
  float *tmp = malloc(big * sizeof *tmp);
  if (!tmp)
    return MPE_ENOMEM;
  int next = (rank + 1) % size, prev = (rank + size - 1) % size, rc = MPE_OK;
  const mpe_format *f = o->format ? o->format : mpe_format_of(MPE_FP32);
  /* reduce-scatter: at step s send chunk (r - s) mod N, receive chunk (r - s - 1) mod N
     and add this rank's own values to the partial received */
  for (size_t s = 0; s + 1 < N && !rc; s++) {
    size_t sc = (r + N - s % N) % N, rcv = (r + 2 * N - s % N - 1) % N, sb, se, rb, re;
    mpe_allreduce_chunk(n, N, sc, &sb, &se);
    mpe_allreduce_chunk(n, N, rcv, &rb, &re);
    MPI_Sendrecv(x + sb, (int)(se - sb), MPI_FLOAT, next, 0, tmp, (int)(re - rb), MPI_FLOAT, prev, 0,
                 comm, MPI_STATUS_IGNORE);
    mpe_round_opts ro = o->round;
    ro.offset = o->round.offset + (uint64_t)(N + r) * n + rb;   /* the stream mpe_allreduce(3) names */
    rc = mpe_ew_add(x + rb, tmp, x + rb, re - rb, f, &ro);
  }
  /* all-gather: at step s send chunk (r + 1 - s) mod N, receive chunk (r - s) mod N */
  for (size_t s = 0; s + 1 < N && !rc; s++) {
    size_t sc = (r + 1 + N - s % N) % N, rcv = (r + N - s % N) % N, sb, se, rb, re;
    mpe_allreduce_chunk(n, N, sc, &sb, &se);
    mpe_allreduce_chunk(n, N, rcv, &rb, &re);
    MPI_Sendrecv(x + sb, (int)(se - sb), MPI_FLOAT, next, 1, x + rb, (int)(re - rb), MPI_FLOAT, prev, 1,
                 comm, MPI_STATUS_IGNORE);
  }
  free(tmp);
  return rc;
}

static int usage(int rank)
{
  if (rank == 0)
    fprintf(stderr, "usage: allreduce_mpi [--format F] [--round MODE] [--scale S] [--n N]\n"
                    "                     [--sigma S] [--seed S] [--compare ring|tree|naive]\n");
  return 2;
}

int main(int argc, char **argv)
{
  MPI_Init(&argc, &argv);
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  const char *fname = "fp32", *mname = "rne", *cname = "ring";
  double scale = 1, sigma = 1e-3;
  unsigned long n = 10007, seed = 1;
  for (int a = 1; a < argc; a++) {
    const char *v = a + 1 < argc ? argv[a + 1] : NULL;
    char *e = NULL;
    if (!v)
      goto bad;
    if (!strcmp(argv[a], "--format"))
      fname = v;
    else if (!strcmp(argv[a], "--round"))
      mname = v;
    else if (!strcmp(argv[a], "--compare"))
      cname = v;
    else if (!strcmp(argv[a], "--scale") && ((scale = strtod(v, &e)), *e == 0) && scale > 0 && isfinite(scale))
      ;
    else if (!strcmp(argv[a], "--sigma") && ((sigma = strtod(v, &e)), *e == 0) && sigma > 0)
      ;
    else if (!strcmp(argv[a], "--n") && ((n = strtoul(v, &e, 10)), *e == 0) && n > 0 && n < (1ul << 28))
      ;
    else if (!strcmp(argv[a], "--seed") && ((seed = strtoul(v, &e, 10)), *e == 0))
      ;
    else
      goto bad;
    a++;
  }
  mpe_allreduce_opts o;
  memset(&o, 0, sizeof o);
  o.algo = MPE_ALLREDUCE_RING;
  o.format = mpe_format_lookup(fname);
  int mode = mpe_round_lookup(mname);
  int cmp_algo = mpe_allreduce_algo_lookup(cname);
  if (!o.format || mpe_format_precision(o.format) > 24 || mode < 0 || cmp_algo < 0)
    goto bad;
  o.round.round = (mpe_round)mode;
  o.round.seed = seed;
  o.scale = (float)scale;

  /* this rank's shard: N(0, sigma) from its own stream */
  float *g = malloc(n * sizeof *g), *x = malloc(n * sizeof *x);
  gsl_rng *rng = gsl_rng_alloc(gsl_rng_mt19937);
  if (!g || !x || !rng)
    MPI_Abort(MPI_COMM_WORLD, 1);
  gsl_rng_set(rng, seed * 1000003ul + (unsigned long)rank);
  for (size_t i = 0; i < n; i++)
    g[i] = (float)gsl_ran_gaussian(rng, sigma);
  gsl_rng_free(rng);

  /* cast (stream offset + rank*n + i), the ring, unscale */
  mpe_round_opts cr = o.round;
  cr.offset = o.round.offset + (uint64_t)rank * n;
  double t0 = MPI_Wtime();
  int rc = mpe_ew_scale(x, o.scale, g, n, o.format, &cr);
  if (!rc)
    rc = ring_allreduce(x, n, &o, MPI_COMM_WORLD);
  for (size_t i = 0; !rc && i < n; i++)
    x[i] = (float)((double)x[i] * (1.0 / (double)o.scale));
  double wall = MPI_Wtime() - t0;
  if (rc)
    MPI_Abort(MPI_COMM_WORLD, 1);

  /* rank 0: the shards and every rank's result; the emulation; bits compared */
  float *all_g = NULL, *all_x = NULL;
  if (rank == 0) {
    all_g = malloc((size_t)size * n * sizeof *all_g);
    all_x = malloc((size_t)size * n * sizeof *all_x);
    if (!all_g || !all_x)
      MPI_Abort(MPI_COMM_WORLD, 1);
  }
  MPI_Gather(g, (int)n, MPI_FLOAT, all_g, (int)n, MPI_FLOAT, 0, MPI_COMM_WORLD);
  MPI_Gather(x, (int)n, MPI_FLOAT, all_x, (int)n, MPI_FLOAT, 0, MPI_COMM_WORLD);
  int status = 0;
  if (rank == 0) {
    const float **in = malloc((size_t)size * sizeof *in);
    float *emu = malloc(n * sizeof *emu);
    if (!in || !emu)
      MPI_Abort(MPI_COMM_WORLD, 1);
    for (int w = 0; w < size; w++)
      in[w] = all_g + (size_t)w * n;
    mpe_allreduce_stats st;
    mpe_allreduce_opts eo = o;
    eo.algo = (mpe_allreduce_algo)cmp_algo;   /* a control: another order must not match */
    if (mpe_allreduce_f32(emu, in, (size_t)size, n, &eo, &st))
      MPI_Abort(MPI_COMM_WORLD, 1);
    size_t differ = 0, ranks_differ = 0;
    for (int w = 0; w < size; w++) {
      if (memcmp(all_x + (size_t)w * n, all_x, n * sizeof *emu))
        ranks_differ++;
    }
    for (size_t i = 0; i < n; i++)
      differ += memcmp(&emu[i], &all_x[i], sizeof *emu) != 0;
    printf("{\"ranks\": %d, \"n\": %lu, \"format\": \"%s\", \"round\": \"%s\", \"scale\": %g, \"emulated\": \"%s\", "
           "\"bits_differ_from_emulation\": %zu, \"ranks_disagreeing\": %zu, \"not_rounded\": %llu, "
           "\"max_ulps\": %.6g, \"max_rel_err\": %.6g, \"rms_err\": %.6g, \"wall_s\": %.6f}\n",
           size, n, mpe_format_name(o.format), mpe_round_name(o.round.round), scale, cname, differ, ranks_differ,
           (unsigned long long)st.not_rounded, st.max_ulps, st.max_rel_err, st.rms_err, wall);
    status = differ || ranks_differ;
    free(in);
    free(emu);
  }
  MPI_Bcast(&status, 1, MPI_INT, 0, MPI_COMM_WORLD);
  free(g);
  free(x);
  free(all_g);
  free(all_x);
  MPI_Finalize();
  return status;
bad:
  usage(rank);
  MPI_Finalize();
  return 2;
}
