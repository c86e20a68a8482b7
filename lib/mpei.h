/* Internal declarations shared by the modules of libmpemu (not installed). */
#ifndef MPEI_H
#define MPEI_H
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include "mpemu/core.h"
#include "mpemu/format.h"
#include "mpei_fenv.h"   /* MPEI_FENV_GUARD: the library's floating-point environment */

#define MPEI_HIDDEN __attribute__((visibility("hidden")))
/* Internals libmpemu-analysis needs from libmpemu (the format table behind
   formats.def): exported, but declared only here, not in <mpemu.h>; they are
   private to the two libraries of one release, not API. */
#define MPEI_SHARED __attribute__((visibility("default")))

/* ---- flags: thread-local sticky word */
MPEI_HIDDEN extern _Thread_local unsigned mpei_flags;

/* ---- counts: whether n elements of esize bytes can form one object (no
   array is larger than PTRDIFF_MAX bytes); a larger count is the caller's
   error, refused before any size is computed from it */
static inline int mpei_count_ok(size_t n, size_t esize) { return n <= (size_t)PTRDIFF_MAX / esize; }

/* ---- bit casts */
static inline uint32_t mpei_f2u(float f) { uint32_t u; memcpy(&u, &f, 4); return u; }
static inline float mpei_u2f(uint32_t u) { float f; memcpy(&f, &u, 4); return f; }
static inline uint64_t mpei_d2u(double f) { uint64_t u; memcpy(&u, &f, 8); return u; }
static inline double mpei_u2d(uint64_t u) { double f; memcpy(&f, &u, 8); return f; }

/* ---- format descriptor (one row of lib/mpemu/formats.def, or a custom format) */
/* how NaN and infinity are encoded: the `special` column of formats.def */
enum { MPEI_SP_IEEE, MPEI_SP_FN, MPEI_SP_FINITE, MPEI_SP_E8M0, MPEI_SP_FNUZ };
struct mpe_format {
  const char *name;
  int type;          /* mpe_type, or -1 for a custom format */
  int p;             /* precision, counting the implicit bit */
  int emin, emax;    /* normal exponent range */
  int ebits;         /* exponent field width of the storage encoding (0: none) */
  int bits;          /* storage width in bits (0: none) */
  int special;       /* MPEI_SP_*: IEEE (inf and NaN), FN (NaN only), FINITE (neither), E8M0,
                        FNUZ (one NaN code, no inf, no -0) */
  int has_inf;       /* 0: overflow without saturation gives NaN (FN, FNUZ), or saturates (FINITE) */
  double maxv;       /* largest finite */
  double minnorm;    /* 2^emin */
  double minsub;     /* 2^(emin-p+1) */
  int custom;        /* allocated by mpe_format_custom */
  const char *aliases;  /* '|'-separated further names ("" for none) */
  const char *npy, *st, *pt, *ptstorage;   /* file dtype names (NULL: none) */
  char namebuf[48];
};
/* The rows of formats.def, in order (n of them), with their limits filled in. */
MPEI_SHARED const struct mpe_format *mpei_format_table(size_t *n);
/* Storage bytes of a built-in format when a file can hold it (an npy or a
   safetensors name), else 0. */
MPEI_SHARED size_t mpei_format_file_bytes(const struct mpe_format *f);
/* The format whose name or one of whose aliases is `name` (case-insensitive). */
MPEI_SHARED const struct mpe_format *mpei_format_named(const char *name, size_t len);

/* ---- Philox4x32-10: mpei_sr_word(seed, index), the word of stochastic element index */
#include "mpei_philox.h"
/* ---- the rounding decision over any lane type: MPEI_ROUND_UP, _TO_MAX, _CARRY */
#include "mpei_round_core.h"
/* The next word of the calling thread's scalar stream (mpe_seed). */
MPEI_HIDDEN uint32_t mpei_thread_sr_word(void);

/* ---- reference rounding: the oracle every fast path is checked against.
   x is rounded to f under mode r; snan tells whether x came from a signalling NaN;
   rnd is the random word for the stochastic modes. Flags are OR-ed into *flags. */
/* |a| (finite, >= 0) rounded at quantum 2^qe: the multiple count (an integer
   held in binary64); *inexact set when a was not a multiple. neg: the sign of
   the value. The one scalar rounding decision of emu/ (round_ref.c). */
MPEI_HIDDEN double mpei_round_count(double a, int qe, int neg, mpe_round r, uint32_t rnd, int *inexact);
MPEI_HIDDEN double mpei_round_ref(double x, int snan, const struct mpe_format *f, mpe_round r,
                                  int flush, int saturate, uint32_t rnd, unsigned *flags);
/* Encode a value of f (already rounded) into f's storage bits, and back. */
MPEI_HIDDEN uint32_t mpei_encode(double v, const struct mpe_format *f);
MPEI_SHARED double mpei_decode(uint32_t bits, const struct mpe_format *f);

/* ---- CPU dispatch */
enum { MPEI_SIMD_NONE = 0, MPEI_SIMD_AVX2 = 1, MPEI_SIMD_AVX512 = 2, MPEI_SIMD_N };
MPEI_HIDDEN int mpei_simd_level(void);
/* the CPU's features (lib/cpu.c, read once), each usable by this process but
   AMX, which Linux grants on request (emu/tc_cpu.c); AVX512 is F, BW, DQ and VL */
enum {
  MPEI_CPU_FMA = 1 << 0, MPEI_CPU_F16C = 1 << 1, MPEI_CPU_AVX2 = 1 << 2, MPEI_CPU_BMI2 = 1 << 3,
  MPEI_CPU_AVX512 = 1 << 4, MPEI_CPU_AVX512BF16 = 1 << 5, MPEI_CPU_AVX512VNNI = 1 << 6,
  MPEI_CPU_AVXVNNI = 1 << 7, MPEI_CPU_AMX_TILE = 1 << 8, MPEI_CPU_AMX_BF16 = 1 << 9,
  MPEI_CPU_AMX_FP16 = 1 << 10, MPEI_CPU_AMX_INT8 = 1 << 11
};
MPEI_HIDDEN unsigned mpei_cpu_features(void);
/* A module's kernel table is an array of rows indexed by SIMD level, each row
   a struct whose first member is its name (const char *name). The portable
   row, [MPEI_SIMD_NONE], is always built; MPEI_ISA_ROWS(ROW) expands to the
   rows of the instruction sets this build has, each ROW(isa, ISA) from the
   kernels' suffix (avx2) and macro prefix (AVX2); MPEI_ISA_PICK gives the row
   of a level, the portable one where that level has none. The tables:
   emu/isa.c (libmpemu), analysis/range/range.c (libmpemu-analysis). */
#ifdef HAVE_X86_SIMD
#define MPEI_ISA_ROWS(ROW) [MPEI_SIMD_AVX2] = ROW(avx2, AVX2), [MPEI_SIMD_AVX512] = ROW(avx512, AVX512)
#else
#define MPEI_ISA_ROWS(ROW)
#endif
#define MPEI_ISA_PICK(table, level) ((table)[(level)].name ? &(table)[(level)] : &(table)[MPEI_SIMD_NONE])



/* ---- array rounding of binary32 values: the plan of the rounding core */
typedef mpei_round_plan mpei_plan32;

/* Kernel: y[i] = round(x[i]) for i < n, element index base + i; returns flags. */
typedef unsigned (*mpei_kernel32)(float *y, const float *x, size_t n, const mpei_plan32 *pl, uint64_t base);
#ifdef HAVE_X86_SIMD
MPEI_HIDDEN unsigned mpei_round32_avx2(float *y, const float *x, size_t n, const mpei_plan32 *pl, uint64_t base);
MPEI_HIDDEN unsigned mpei_round32_avx512(float *y, const float *x, size_t n, const mpei_plan32 *pl, uint64_t base);
#endif

#endif
