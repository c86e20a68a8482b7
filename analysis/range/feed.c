/* The feed pipeline of the range reports: a tensor read from a file into
   range accumulators, the next batch read while one is analysed
   (mpe_range_feed(3)). */
#include "config.h"
#ifdef _OPENMP
#include <omp.h>
#endif
#include <math.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "mpei.h"
#include "mpemu/report.h"



/* Reading and analysing overlap: while the range accumulators take one batch
   of values, the next is read into a second buffer. Both run in one OpenMP team:
   the read is a task, and the accumulators share a batch's blocks out as tasks
   too (mpe_range_add_f32_pieces inside a parallel region), so each thread reads
   or analyses as work comes, and no thread waits spinning for another team's.
   Each read asks for FEED_VALUES values, as mpanalyze always has, and a batch
   keeps the split of its reads, so the reports are bit for bit those of one
   library call per read. */
#define FEED_VALUES (1u << 16)
#define BATCH_READS 16                  /* a batch: up to 2^20 values, when reads are whole */
#define BATCH_VALUES ((size_t)BATCH_READS * FEED_VALUES)
#define MAX_PIECES 4096                 /* more reads than this (a small --chunk) end a batch early */

struct batch {
  void *v;                              /* values: float or double (value_type) */
  size_t vcap, pcap;                    /* room for values and for pieces */
  size_t n, np;
  size_t *len;                          /* the pieces: one per read */
  uint64_t done;                        /* mpe_io_bytes_done after this batch */
  int rc;                               /* a read error: mpe_io_message says it */
  int last;                             /* the tensor (or the part asked for) ends with this batch */
  uint64_t *want;                       /* values still to read in the part; UINT64_MAX: to the end */
};

/* read the next batch of the selected tensor into b */
static void fill(mpe_io *f, size_t es, struct batch *b)
{
  b->n = b->np = 0;
  b->rc = 0;
  b->last = 0;
  while (b->n + FEED_VALUES <= b->vcap && b->np < b->pcap) {
    size_t n, ask = *b->want < FEED_VALUES ? (size_t)*b->want : FEED_VALUES;
    if (ask == 0) {   /* a part ends here, without a read past it */
      b->last = 1;
      break;
    }
    if ((b->rc = mpe_io_read(f, (char *)b->v + b->n * es, ask, &n)))
      break;
    if (n == 0) {
      b->last = 1;
      break;
    }
    if (*b->want != UINT64_MAX)
      *b->want -= n;
    b->len[b->np++] = n;
    b->n += n;
  }
  b->done = mpe_io_bytes_done(f);
}

/* one batch into the accumulators */
static void feed_take(const struct batch *b, int f64, mpe_range **r, size_t nr, double scale, double *amax, double *sbuf)
{
  if (amax) {   /* max |x|, NaN as soon as one NaN is seen (as a GPU amax reduction would) */
    double m = *amax;
    for (size_t k = 0; k < b->n; k++) {
      double a = fabs(f64 ? ((double *)b->v)[k] : (double)((float *)b->v)[k]);
      if (isnan(a) || a > m)
        m = isnan(m) ? m : a;
    }
    *amax = m;
  }
  if (scale != 1.0) {
    for (size_t k = 0; k < b->n; k++)
      sbuf[k] = (f64 ? ((double *)b->v)[k] : (double)((float *)b->v)[k]) * scale;
    for (size_t k = 0; k < nr; k++)
      mpe_range_add_f64_pieces(r[k], sbuf, b->len, b->np);
  } else {
    for (size_t k = 0; k < nr; k++) {
      if (f64)
        mpe_range_add_f64_pieces(r[k], b->v, b->len, b->np);
      else
        mpe_range_add_f32_pieces(r[k], b->v, b->len, b->np);
    }
  }
}

/* batches b[0] (read) and b[1] in turn: the next one is read in a task while the
   current one is analysed; returns the batch that failed to read, or NULL */
static struct batch *stream(mpe_io *f, size_t es, struct batch *bb, int f64, const mpe_range_feed_opts *o,
                            mpe_range **r, size_t nr, double scale, double *amax, double *sbuf)
{
  struct batch *bad = NULL;
  fill(f, es, &bb[0]);
  for (int k = 0;; k ^= 1) {
    struct batch *b = &bb[k], *next = &bb[k ^ 1];
    if (b->rc) {
      bad = b;
      break;
    }
    int more = !b->last;
    if (more) {
#ifdef _OPENMP
#pragma omp task default(none) firstprivate(f, es, next)
#endif
      fill(f, es, next);
    }
    feed_take(b, f64, r, nr, scale, amax, sbuf);
    if (o->progress)
      o->progress(o->ctx, b->done, mpe_io_bytes_total(f));
#ifdef _OPENMP
#pragma omp taskwait
#endif
    if (!more)
      break;
  }
  return bad;
}

static double small[FEED_VALUES];
static size_t small_len[1];
static atomic_flag small_busy = ATOMIC_FLAG_INIT;

int mpe_range_feed(mpe_range **r, size_t nr, mpe_io *f, size_t i, uint64_t count, const mpe_range_feed_opts *opts,
                   char *msg, size_t msglen)
{
  static const mpe_range_feed_opts none;
  const mpe_range_feed_opts *o = opts ? opts : &none;
  const double scale = o->scale == 0 ? 1.0 : o->scale;
  double *amax = o->amax;
  if (!f || !r || (msglen && !msg))
    return MPE_EINVAL;
  if (msglen)
    msg[0] = '\0';
  mpe_io_tensor t;
  mpe_io_info(f, i, &t);
  int f64 = t.value_type == MPE_FP64;
  size_t es = f64 ? sizeof(double) : sizeof(float);
  uint64_t want = count, n = count < t.count ? count : t.count;
  /* more than one batch: two of them, read and analysed at once (the counts of
     text files are known once they are opened) */
  int big = n > FEED_VALUES, two = n > BATCH_VALUES, rc = 0;
  struct batch bb[2];
  memset(bb, 0, sizeof bb);
  bb[0].want = bb[1].want = &want;
  double *sbuf = NULL;
  /* a tensor of one read takes the static buffer when no other call holds it
     (200,000 tiny tensors: no allocation each) */
  const int own = !big && !atomic_flag_test_and_set(&small_busy);
  for (int k = 0; k < 2; k++) {
    struct batch *b = &bb[k];
    b->vcap = big ? BATCH_VALUES : FEED_VALUES;
    b->pcap = big ? MAX_PIECES : 1;
    b->v = own ? (void *)small : k == 0 || two ? malloc(b->vcap * es) : NULL;
    b->len = own ? small_len : k == 0 || two ? malloc(b->pcap * sizeof *b->len) : NULL;
    if ((k == 0 || two) && (!b->v || !b->len))
      rc = 1;
  }
  if (scale != 1.0 && !rc && !(sbuf = malloc(bb[0].vcap * sizeof *sbuf)))
    rc = 1;
  if (rc) {
    rc = MPE_ENOMEM;
    goto out;
  }
  struct batch *bad = NULL;
  if (!two) {
    /* one batch at a time, here */
    for (;;) {
      fill(f, es, &bb[0]);
      if (bb[0].rc) {
        bad = &bb[0];
        break;
      }
      feed_take(&bb[0], f64, r, nr, scale, amax, sbuf);
      if (o->progress)
        o->progress(o->ctx, bb[0].done, mpe_io_bytes_total(f));
      if (bb[0].last)
        break;
    }
  } else {
#ifdef _OPENMP
    /* a team as large as the machine has cores to spare now (on a machine busy
       with other work a second thread mostly waits, spinning, for the first to
       be scheduled: it made the run slower than one thread) */
    const int nt = mpe_threads_fit();
#pragma omp parallel num_threads(nt) default(none) shared(bad, f, es, bb, f64, o, r, nr, scale, amax, sbuf)
#pragma omp single
#endif
    bad = stream(f, es, bb, f64, o, r, nr, scale, amax, sbuf);
  }
  if (bad) {
    rc = bad->rc;
    if (msglen)
      snprintf(msg, msglen, "%s", mpe_io_message(f));
  } else if (want != UINT64_MAX && want > 0) {
    rc = MPE_EFORMAT;
    if (msglen)
      snprintf(msg, msglen, "the data end early (the file changed while it was read?)");
  }
out:
  for (int k = 0; k < 2 && !own; k++) {
    free(bb[k].v);
    free(bb[k].len);
  }
  if (own)
    atomic_flag_clear(&small_busy);
  free(sbuf);
  return rc;
}
