/* mpemu — range analysis of tensors for target formats.
   Feed the values of one tensor in any number of pieces; ask, for each
   target format, what round-to-nearest-even would do to them: how many
   underflow to zero, land in the subnormal range or overflow, the error
   introduced, and the static loss scale to use. One pass, memory fixed at
   allocation whatever the number of values. */
#ifndef MPEMU_RANGE_H
#define MPEMU_RANGE_H
#include "mpemu/core.h"
#include "mpemu/format.h"
#ifdef __cplusplus
extern "C" {
#endif

typedef struct mpe_range mpe_range;

typedef struct {
  int margin;          /* bits of head room for the recommended scale: S*max|x| <= max_finite*2^-margin (0..4096) */
} mpe_range_opts;      /* zeroed or NULL: margin 0 */

/* An accumulator in *r for nformats (1..64) target formats (built-in or custom),
   following the constructor convention of <mpemu/core.h>: MPE_EINVAL for a NULL r
   or formats, a NULL or unsigned (E8M0) format, nformats outside 1..64 or a
   margin outside 0..4096;
   MPE_ENOMEM; on failure *r is NULL. */
MPE_API int mpe_range_create(mpe_range **r, const mpe_format *const *formats, size_t nformats,
                             const mpe_range_opts *o);
/* Deprecated (use mpe_range_create, which tells a bad argument from no memory):
   the accumulator, or NULL on either. */
MPE_API mpe_range *mpe_range_alloc(const mpe_format *const *formats, size_t nformats, const mpe_range_opts *o);

/* Targets other than floating-point formats: 16-bit fixed point (mpe_fx16_encode(3)).
   MPE_TARGET_Q16: value = q*2^-F (F = frac_bits), q an int16_t, round to nearest
     even, saturating (mpe_fp32_to_q16). underflow: non-zero x with q = 0, i.e.
     |x| <= 2^(-F-1); overflow: x saturated, x*2^F >= 32767.5 or < -32768.5 (the
     tie at -32768.5 goes to -32768); no subnormals (underflow_flush = underflow);
     error: of the exact value q*2^-F; recommended scale: the largest S = 2^k with
     S*max|x| <= 32767*2^-F*2^-margin.
   MPE_TARGET_FX16: QUDA's block-normalised format, mpe_fx16_encode with MPE_RNE on
     blocks of `block` consecutive values (blocks run across calls; the last,
     incomplete block counts as a shorter one whenever statistics are read).
     underflow: non-zero x whose decoded value q*scale is 0 (q = 0: small next to
     its block's max; or a block max below about 2^-134, whose scale is 0 in
     binary32); no subnormals; no overflow except binary64 inputs beyond binary32's
     range; error: of the decoded binary32 value; no recommended scale (has_scale
     = 0, underflow_at_scale = underflow: the block scale absorbs a power of two).
     Non-finite inputs, and binary64 inputs beyond binary32's range, enter their
     block as 0; other binary64 inputs are rounded to binary32 (RNE) first. */
typedef enum { MPE_TARGET_FLOAT = 0, MPE_TARGET_Q16 = 1, MPE_TARGET_FX16 = 2 } mpe_target_kind;
#define MPE_RANGE_FX16_MAXBLOCK ((size_t)1 << 20)
#define MPE_RANGE_SCALE_MAX_LOG2 127   /* the largest recommended loss scale: 2^127, binary32's largest power of two */
#define MPE_RANGE_SCALE_MIN_LOG2 (-149) /* the smallest: 2^-149, binary32's smallest power of two (a subnormal) */
typedef struct {
  mpe_target_kind kind;
  const mpe_format *format;  /* MPE_TARGET_FLOAT */
  int frac_bits;             /* MPE_TARGET_Q16: -512..512 */
  size_t block;              /* MPE_TARGET_FX16: 1..MPE_RANGE_FX16_MAXBLOCK */
} mpe_range_target;

/* As mpe_range_create, with any mix of targets (1..64). MPE_EINVAL also for a
   NULL format, frac_bits or block out of range, an unknown kind; MPE_ENOMEM; on
   failure *r is NULL. */
MPE_API int mpe_range_create_targets(mpe_range **r, const mpe_range_target *targets, size_t ntargets,
                                     const mpe_range_opts *o);
/* Deprecated (use mpe_range_create_targets): the accumulator, or NULL on bad
   arguments or no memory. */
MPE_API mpe_range *mpe_range_alloc_targets(const mpe_range_target *targets, size_t ntargets,
                                           const mpe_range_opts *o);
/* The description of target k (formats given to mpe_range_create are MPE_TARGET_FLOAT). */
MPE_API int mpe_range_target_get(const mpe_range *r, size_t k, mpe_range_target *t);
/* Add everything src has seen to dst, as if dst had been fed src's values too
   (src's open fx16 block is counted as a short block; dst's stays open). The
   targets must be the same in kind, format and frac_bits (fx16 block lengths may
   differ) and the margins equal, else MPE_EINVAL and dst is unchanged. dst != src. */
MPE_API int mpe_range_merge(mpe_range *dst, const mpe_range *src);
MPE_API void mpe_range_free(mpe_range *r);       /* NULL is ignored */
/* The accumulated state of r as bytes (for another process to merge, e.g. over
   MPI; same machine type at both ends). buf NULL: *len gets the size needed;
   MPE_ERANGE when cap is smaller. mpe_range_merge_packed(dst, ...) is
   mpe_range_merge(dst, the packed accumulator): same targets and margin, else
   MPE_EINVAL and dst unchanged. */
MPE_API int mpe_range_pack(const mpe_range *r, void *buf, size_t cap, size_t *len);
MPE_API int mpe_range_merge_packed(mpe_range *dst, const void *buf, size_t len);
MPE_API size_t mpe_range_nformats(const mpe_range *r);

/* Add n values (binary32 or binary64). MPE_EINVAL for NULL with n > 0. */
MPE_API int mpe_range_add_f32(mpe_range *r, const float *x, size_t n);
MPE_API int mpe_range_add_f64(mpe_range *r, const double *x, size_t n);
/* Add npieces consecutive pieces of x, len[i] values each: the same results, bit
   for bit, as one mpe_range_add_f32/_f64 call per piece (the statistics are summed
   over blocks counted from the start of each call, so the split of the values into
   calls shows in the last bits of the error sums), but the binary32 pieces are
   shared out among the threads together: a reader that gets values in small reads
   can keep their split and still hand over batches large enough for every core.
   Inside an OpenMP parallel region (a team no larger than at allocation), the blocks
   of a call become tasks of that team: the same bits.
   MPE_EINVAL for NULL r, NULL len with npieces > 0, or NULL x with a piece > 0. */
MPE_API int mpe_range_add_f32_pieces(mpe_range *r, const float *x, const size_t *len, size_t npieces);
MPE_API int mpe_range_add_f64_pieces(mpe_range *r, const double *x, const size_t *len, size_t npieces);

typedef struct {
  uint64_t count;            /* values seen */
  uint64_t zeros;            /* exact ±0 */
  uint64_t nan, inf;         /* non-finite inputs (nonfinite = nan + inf) */
  double max_abs;            /* largest finite |x| (0 when none) */
  double min_abs_nonzero;    /* smallest non-zero finite |x| (0 when none) */
} mpe_range_summary;

typedef struct {
  /* round to nearest even, subnormals kept, no saturation: */
  uint64_t underflow;        /* non-zero finite x rounding to ±0 */
  uint64_t subnormal;        /* x whose rounded value is non-zero and below the smallest normal */
  uint64_t overflow;         /* finite x rounding to ±inf (NaN for formats without inf, like E4M3) */
  uint64_t underflow_flush;  /* non-zero finite x that become ±0 when subnormal results are flushed */
  double rel_error;          /* ||round(x)-x||_2 / ||x||_2 over finite x that do not overflow (0 when none) */
  double max_rel_error;      /* max |round(x)-x|/|x| over the same x, x != 0 */
  /* (round(x): the format's value; Q16: q*2^-F exactly; FX16: the decoded binary32 q*scale) */
  /* the recommended static loss scale S = 2^scale_log2: the largest power of two with
     S*max_abs <= max_finite*2^-margin, but from 2^-149 to 2^127 (a loss scale is a
     binary32 number: scale_capped is 1 when a bound moved it); has_scale is 0 when no non-zero
     finite value was seen */
  int has_scale;
  int scale_log2;
  uint64_t underflow_at_scale;       /* non-zero finite x with S*x rounding to ±0 */
  uint64_t underflow_at_scale_flush; /* ... or to a subnormal, i.e. with subnormals flushed */
  int scale_capped;          /* 1: S would be above 2^127 or below 2^-149, binary32's powers of two */
} mpe_range_stats;

MPE_API int mpe_range_summary_get(const mpe_range *r, mpe_range_summary *s);
/* Statistics for format k (in the order given to mpe_range_alloc). */
MPE_API int mpe_range_stats_get(const mpe_range *r, size_t k, mpe_range_stats *s);

/* What scaling every value by 2^e before rounding to format k would do:
   the underflow counts as above, and *overflows = 1 if some finite value
   would overflow (0 otherwise). Any argument but r may be NULL. Q16 targets:
   underflow_flush = underflow. FX16 targets: MPE_EUNSUP (no scale applies). */
MPE_API int mpe_range_at_scale(const mpe_range *r, size_t k, int e, uint64_t *underflow,
                               uint64_t *underflow_flush, int *overflows);

/* Binade histogram: counts[i] = number of non-zero finite x with floor(log2|x|) = *first + i.
   k < 0: over the binades of the data (from the smallest to the largest seen; *n = 0 when
   there are none; *below = *above = 0). k >= 0: over format k's binades, from its smallest
   subnormal (emin - p + 1) to emax; values below and above that go to *below / *above.
   Q16 targets: from binade -F (2^-F, the smallest non-zero value) to 14 - F.
   FX16 targets: binades relative to the block's max m, floor(log2|x|) - floor(log2 m),
   from -16 to 0 (17 bins); *below counts the non-zero finite x further below, *above is 0.
   *n receives the number of bins; if cap < *n nothing is written and MPE_ERANGE is returned.
   below and above may be NULL. */
MPE_API int mpe_range_histogram(const mpe_range *r, int k, int *first, uint64_t *counts, size_t cap,
                                size_t *n, uint64_t *below, uint64_t *above);

#ifdef __cplusplus
}
#endif
#endif
