/* Shared helpers for the Check suites: bit comparison, the MPFR oracle,
   conformance-file access, and a seed from MPE_CHECK_SEED. */
#ifndef MPE_TESTSUPPORT_H
#define MPE_TESTSUPPORT_H
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <check.h>
#include <mpemu.h>

/* The folder ../shared/conformance relative to the project root (MPE_SRCDIR),
   or $MPE_CONFORMANCE_DIR. NULL (and a note on stderr) if it is missing. */
const char *ts_conformance_dir(void);
/* Open conformance file `rel` (relative to that folder); gzip files are read
   through zcat. Returns NULL if missing. Close with ts_close. */
FILE *ts_open_conformance(const char *rel);
void ts_close(FILE *f);

/* TestFloat 3e files: the six rounding-mode suffixes of their names
   (near_even near_maxMag minMag max min odd), the matching mpemu modes, and a
   TestFloat flag byte (0x10 invalid ... 0x01 inexact) as MPE_FLAG_* bits. */
extern const char *const ts_tf_modes[6];
extern const mpe_round ts_tf_round[6];
unsigned ts_tf_flags(unsigned byte);

/* Call fn(path, ctx) for every file of the source-tree folder `reldir` (relative
   to $MPE_SRCDIR) whose name starts with `prefix` ("" for all; dot files are
   skipped). Returns the number of files; a missing folder gives 0. */
size_t ts_each_file(const char *reldir, const char *prefix, void (*fn)(const char *path, void *ctx), void *ctx);

/* Seed for random tests: $MPE_CHECK_SEED, else a fixed default; printed once. */
uint64_t ts_seed(void);
/* splitmix64 stream */
uint64_t ts_rand64(uint64_t *state);
/* MPE_CHECK_EXPENSIVE set to a non-zero value */
int ts_expensive(void);

/* MPFR oracle: x rounded to a format of precision p, exponent range emin..emax
   (IEEE-style, subnormals kept) under a deterministic mode (RNE, RNA, RZ, RU,
   RD, RO). Overflow follows IEEE 754 (RZ gives max finite). Returns binary64. */
double ts_mpfr_round(double x, int p, int emin, int emax, double maxv, int has_inf, mpe_round r);

static inline uint32_t ts_f2u(float f) { uint32_t u; memcpy(&u, &f, 4); return u; }
static inline float ts_u2f(uint32_t u) { float f; memcpy(&f, &u, 4); return f; }
static inline uint64_t ts_d2u(double f) { uint64_t u; memcpy(&u, &f, 8); return u; }
static inline double ts_u2d(uint64_t u) { double f; memcpy(&f, &u, 8); return f; }

/* Same value and sign, NaN matching NaN (any payload). */
int ts_same_f64(double a, double b);

/* Run a suite with CK_NORMAL output; returns the process exit status. */
int ts_run(Suite *s);
#endif
