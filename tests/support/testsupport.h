/* Shared helpers for the Check suites: bit comparison, the MPFR oracle,
   conformance-file access, and a seed from MPE_CHECK_SEED. */
#ifndef MPE_TESTSUPPORT_H
#define MPE_TESTSUPPORT_H
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <check.h>
/* A passing assertion costs a comparison. Check's own ck_assert_msg (which every
   ck_assert_* expands to) records the file and line of each passing assertion for
   its crash reports, a write to a side file each time: in the suites' per-element
   loops that was most of their run time. A failing assertion reports as before. */
#undef ck_assert_msg
#define ck_assert_msg(expr, ...) \
  ((expr) ? (void)0 : _ck_assert_failed(__FILE__, __LINE__, "Assertion '" #expr "' failed", ##__VA_ARGS__))
#include <mpfr.h>
#include <mpemu.h>

/* Conformance data (README.md, "Conformance data"; tests/conformance/README.md).
   ts_conf_open("testfloat/f16_add_rmin.txt.gz") looks under $MPE_CONFORMANCE_DIR
   first (the full sets), then under tests/conformance in the source tree; each
   name is also tried with ".gz" added or removed. Files are read through zlib,
   compressed or not; nothing runs a shell. NULL when the file is missing or
   MPE_CONFORMANCE_DIR is not a folder: the first miss of a run prints one line. */
typedef struct ts_conf ts_conf;
ts_conf *ts_conf_open(const char *rel);
/* The words of the next line (hex for base 16, binary strings for base 2) into
   w[0..max-1]: returns their number (0 for a blank line), -1 at the end of the
   file, -2 for a line that is too long, holds more than max words, a word too
   wide for 64 bits or a character outside the base, and once for a read error
   (a truncated or corrupt .gz), after which the file ends. */
int ts_conf_words(ts_conf *f, int base, uint64_t *w, int max);
long ts_conf_lineno(const ts_conf *f);   /* the line last read, from 1 */
void ts_conf_close(ts_conf *f);
/* A whole file of rows of 32-bit words (the tensor-core data: base 16 for hex
   words, 2 for binary strings), its first max_rows non-blank lines (0: all),
   every line with the same number of words: *out gets rows x *per_line words
   (malloc'd; the caller frees it; NULL on failure). Returns the number of
   rows; -1 when the file is missing (as ts_conf_open), -2 for a malformed
   file (a bad line, a ragged one, a word wider than 32 bits, a read error),
   reported on stderr with its line. */
int ts_conf_rows(const char *rel, int base, int max_rows, uint32_t **out, int *per_line);
/* A conformance test adds what it checked to the closing line ts_run prints:
   "<program>: conformance: F files, V vectors, M mismatches (data from ...)". */
void ts_conf_tally(long vectors, long mismatches);

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

/* MPE_CHECK_SUBSET=N (a whole number, at least 1; unset: 1) thins the bulk of
   the long deterministic sweeps (conformance files, exhaustive and random
   inputs) to every Nth vector; boundary and edge cases, every SIMD level and
   every code path are kept, and each such test prints how many vectors it
   compared. An unreadable value runs the full sets and says so. Printed once
   when not 1. */
unsigned ts_subset(void);
/* whether the i-th vector of such a sweep is compared (i % N == 0) */
static inline int ts_in_subset(unsigned long i) { return i % ts_subset() == 0; }

/* ---- the MPFR oracle */

/* A binary format as plain numbers: precision p (with the implicit bit; at
   most 53), normal exponents emin..emax (subnormals below 2^emin, on the
   quantum 2^(emin-p+1)), largest finite value maxv (below the top of the
   binade for formats such as E4M3), infinities or not (then an overflow in
   a mode that does not go toward zero gives NaN, as in E4M3's encoding). */
typedef struct {
  int p, emin, emax;
  double maxv;
  int has_inf;
} ts_fmt;
ts_fmt ts_fmt_of(const mpe_format *f);
ts_fmt ts_fmt_type(mpe_type t);
/* The integers as a format (quantum 1 below 2^53, binary64 above): rounding
   to it rounds to an integer. Its flags other than inexact mean nothing. */
ts_fmt ts_fmt_int(void);

/* v rounded to f under a deterministic mode (RNE, RNA, RZ, RU, RD, RO), once,
   on the format's grid with MPFR arithmetic; for RNE, RZ, RU and RD the result
   is also checked against MPFR's own rounding (mpfr_check_range and
   mpfr_subnormalize in the format's exponent range). v is the exact value, or
   stands for it: any value strictly between the same two numbers of p + 1
   bits at the format's rounding point (a truncation with a sticky bit) gives
   the same answer.
   Overflow (v rounded with an unbounded exponent is beyond maxv): sat != 0
   gives +-maxv (the saturating conversions, OCP MX FP6 and FP4); otherwise
   IEEE 754: RZ, RO and the directed mode toward zero give +-maxv, the others
   +-inf, or NaN when f has no infinities. +-inf gives +-inf (NaN without
   infinities, +-maxv under sat), NaN gives NaN, a zero keeps its sign, and a
   non-zero value that rounds to zero gives a zero of its sign.
   *flags (may be NULL): MPE_FLAG_INEXACT when the result is not v,
   MPE_FLAG_UNDERFLOW when also tiny after rounding (v rounded to p bits with
   an unbounded exponent is below 2^emin: the library's rule, mpemu(3)),
   MPE_FLAG_OVERFLOW (with INEXACT) on overflow. Returns binary64. */
double ts_round_mpfr(mpfr_srcptr v, const ts_fmt *f, mpe_round r, int sat, unsigned *flags);
/* The same for a binary64 x, no flags, IEEE overflow; NaN, +-inf and zeros are
   returned unchanged (whatever the format). */
double ts_round_mpfr_d(double x, const ts_fmt *f, mpe_round r);
/* ts_round_mpfr_d with the format spelled out (kept for the suites' callers). */
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
