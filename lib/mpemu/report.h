/* mpemu — the range report over tensor files: what `mpanalyze range` prints,
   as a library call. Every tensor of a list of files (or those named) is read
   and analysed for a list of targets (mpe_range(3)), with per-file sums when
   there are several files; the report is JSON or text. In libmpemu-analysis:
   link with `pkg-config --libs mpemu-analysis`. See mpe_report_run(3). */
#ifndef MPEMU_REPORT_H
#define MPEMU_REPORT_H
#include <stdio.h>
#include "mpemu/core.h"
#include "mpemu/io.h"
#include "mpemu/range.h"
#ifdef __cplusplus
extern "C" {
#endif

/* ---- reading a tensor into accumulators */

typedef struct {
  double scale;          /* every value is multiplied by it (binary64) first; 0 means 1 */
  double *amax;          /* NULL, or max |x| so far, updated (NaN once a NaN is seen) */
  /* NULL, or called after every batch with the bytes read of the file and its size */
  void (*progress)(void *ctx, uint64_t done, uint64_t total);
  void *ctx;
} mpe_range_feed_opts;

/* Read up to count values (UINT64_MAX: to the end) of tensor i of f, selected
   (mpe_io_select, then maybe mpe_io_seek), into each of the nr accumulators r[], reading
   the next batch while one is analysed (an OpenMP team as large as the cores
   other processes leave free, unless OMP_NUM_THREADS or OMP_DYNAMIC is set).
   The statistics are bit for bit those of one mpe_range_add_* call per read of
   65536 values. 0; MPE_EINVAL for a NULL f or r; MPE_ENOMEM; a reader's code
   (msg, when msglen > 0, holds mpe_io_message(f)); MPE_EFORMAT when fewer
   than count values come (msg: "the data end early ..."). */
MPE_API int mpe_range_feed(mpe_range **r, size_t nr, mpe_io *f, size_t i, uint64_t count,
                           const mpe_range_feed_opts *o, char *msg, size_t msglen);

/* ---- --dtype NAME=TYPE rules against the members of the inputs */

#define MPE_REPORT_MAX_RULES 64
typedef struct {
  unsigned char used[MPE_REPORT_MAX_RULES];    /* 1: names a member; 2: one of them has TYPE's width */
  char example[MPE_REPORT_MAX_RULES][200];     /* the first member a rule names */
} mpe_report_rule_use;

/* Note which rules of io name a member of f (zero u first; call for every
   input opened); then mpe_report_rules_check: MPE_ENOTFOUND with a message in
   msg for a rule that names no member, or a glob whose members all have
   another width than its type (it would read none of them); else 0. */
MPE_API void mpe_report_rules_mark(mpe_io *f, const mpe_io_opts *io, mpe_report_rule_use *u);
MPE_API int mpe_report_rules_check(const mpe_io_opts *io, const mpe_report_rule_use *u, char *msg, size_t msglen);

/* ---- the report */

typedef struct mpe_report mpe_report;

/* Several processes sharing one report (mpirun): part u of the work goes to
   rank u mod size, rank 0 merges in file order, so the report is the one of a
   single process bit for bit. NULL: one process. */
typedef struct {
  int size, rank;
  int (*max)(void *ctx, int v);                                  /* the largest v of all ranks, on every rank */
  int (*send)(void *ctx, const void *buf, size_t len, int to);   /* 0 or not */
  int (*recv)(void *ctx, void **buf, size_t *len, int from);     /* *buf from malloc; 0 or not */
  void *ctx;
} mpe_report_comm;

typedef struct {
  const char *formats;          /* NULL: "fp16,bf16,e4m3,e5m2"; also q<F>, q16.<F>, fx16, int8 */
  long fx_block;                /* fx16 block; 0: the contiguous dimension, at most 65536 */
  int margin;                   /* head room of the recommended scales, 0..1000 bits */
  const char *const *tensors;   /* names or globs of the tensors to analyse; ntensors 0: all */
  size_t ntensors;
  const mpe_io_opts *io;        /* the readers' options; NULL: the defaults */
  int per_layer;                /* several files: every tensor's report too, not only the per-file sums */
  int json;                     /* the report is JSON (mpanalyze --json); 0: text */
  uint64_t part_values;         /* a long tensor's part; 0: $MPE_RANGE_CHUNK, else 2^22 values */
  void (*progress)(void *ctx, const char *path, uint64_t done, uint64_t total);   /* NULL or per batch */
  void *progress_ctx;
  const mpe_report_comm *comm;  /* NULL: one process */
  const char *who;              /* names the options in their errors (mpanalyze: "range"); NULL: nothing */
  uint64_t max_values;          /* the most values read over every tensor (0: no limit): a tensor that
                                   would pass it stops the run before it is read, MPE_ERANGE */
} mpe_report_opts;

/* What went wrong: "WHERE: MSG" (where may be empty) */
typedef struct {
  char where[4096];             /* a file, a folder, or opts->who */
  char msg[512];
  int fail;                     /* 1: not the input's fault (no memory, the ranks' link) */
  int local;                    /* under mpirun: a rank other than 0 should say it itself */
  int out_failed;               /* mpe_report_write: writing `out` failed (ferror(out)) */
} mpe_report_error;

/* Analyse every tensor of the npaths files (or those opts->tensors names); the
   report in *r (constructor convention of <mpemu/core.h>). 0; MPE_EINVAL
   (bad options, no files), MPE_ENOTFOUND (a name matches no tensor, no
   floating-point tensor at all), a reader's code, MPE_ENOMEM, MPE_EIO (a
   scratch file, another rank); err (may be NULL) says why. Nothing is
   printed. Under mpirun the ranks other than 0 return 0 and an empty report. */
MPE_API int mpe_report_run(mpe_report **r, const char *const *paths, size_t npaths, const mpe_report_opts *opts,
                           mpe_report_error *err);
/* The report (JSON or text, as opts->json said) to out; 0 or MPE_EIO, MPE_ENOMEM. */
MPE_API int mpe_report_write(const mpe_report *r, FILE *out, mpe_report_error *err);
/* The same into *text (from malloc, NUL-terminated; free it with free(3)). */
MPE_API int mpe_report_string(const mpe_report *r, char **text, mpe_report_error *err);
MPE_API void mpe_report_free(mpe_report *r);

/* What a plot of the report needs: the targets with their limits (binades of
   the smallest subnormal, smallest normal, largest finite; has_limits 0 for
   fx16), the per-file shares of values that underflow, turn subnormal,
   overflow (files > 1: shares[(k * 3 + c) * nfiles + file], c = 0, 1, 2), and
   the binade histogram of the one tensor, or else of all of them. Pointers
   into r. */
#define MPE_REPORT_MAX_TARGETS 16
typedef struct {
  const char *name;
  int has_limits, min_subnormal, min_normal, max_finite;
} mpe_report_target_info;
typedef struct {
  size_t ntargets;
  mpe_report_target_info target[MPE_REPORT_MAX_TARGETS];
  size_t ntensors, nfiles;
  const double *shares;
  const char *hist_name;
  int hist_first;
  const uint64_t *hist;
  size_t hist_n;
} mpe_report_summary;
MPE_API int mpe_report_summary_get(const mpe_report *r, mpe_report_summary *s);

/* One accumulator's report as a JSON object (what mpe_report_run's JSON holds
   for a tensor, with "name": ""), for the n targets it was made with (names[k]
   their keys, at most 23 bytes each), margin as it was made with, into *text
   (from malloc; free(3)). 0, MPE_EINVAL, MPE_ENOMEM. */
MPE_API int mpe_report_range_json(const mpe_range *r, const mpe_range_target *targets, const char *const *names,
                                  size_t n, int margin, char **text);

/* str with control characters and invalid UTF-8 as \xNN, cut to fit n bytes
   (names come from files: no terminal escapes); returns buf. */
MPE_API const char *mpe_report_escape(char *buf, size_t n, const char *str);

#ifdef __cplusplus
}
#endif
#endif
