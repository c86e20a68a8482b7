/* mpemu — format descriptors and array rounding. */
#ifndef MPEMU_FORMAT_H
#define MPEMU_FORMAT_H
#include "mpemu/core.h"
#ifdef __cplusplus
extern "C" {
#endif

typedef struct mpe_format mpe_format;            /* opaque, immutable */

MPE_API const mpe_format *mpe_format_of(mpe_type t);
/* A name or alias of a row of <mpemu/formats.def> (case-insensitive): "fp16"|"binary16"|"half",
   "bf16"|"bfloat16", "tf32", "e4m3", "e5m2", "fp32"|"binary32"|"single", "fp64"|"binary64"|"double",
   and the other names and aliases listed there; NULL if unknown. */
MPE_API const mpe_format *mpe_format_lookup(const char *name);
/* A custom format with `precision` significant bits (counting the implicit bit,
   2..53) and normal exponents emin..emax (emin < emax, emin >= -16382,
   emax <= 16383); subnormals, inf and NaN as in IEEE 754. On failure *f is NULL
   (the constructor convention of <mpemu/core.h>). */
MPE_API int  mpe_format_custom(mpe_format **f, int precision, int emin, int emax);
MPE_API void mpe_format_free(mpe_format *f);   /* NULL and built-in formats are ignored */

/* Facts about a format. */
MPE_API const char *mpe_format_name(const mpe_format *f);
MPE_API int    mpe_format_precision(const mpe_format *f);
MPE_API int    mpe_format_emin(const mpe_format *f);
MPE_API int    mpe_format_emax(const mpe_format *f);
MPE_API double mpe_format_max(const mpe_format *f);           /* largest finite */
MPE_API double mpe_format_min_normal(const mpe_format *f);
MPE_API double mpe_format_min_subnormal(const mpe_format *f);
MPE_API int    mpe_format_has_inf(const mpe_format *f);
/* 0 for the formats with no NaN encoding (OCP FP6, FP4: rounding to them always
   saturates, a NaN input stays NaN in the binary32/64 result but has no code). */
MPE_API int    mpe_format_has_nan(const mpe_format *f);
/* 0 for unsigned formats (E8M0: positive powers of two only). */
MPE_API int    mpe_format_is_signed(const mpe_format *f);
MPE_API double mpe_format_unit_roundoff(const mpe_format *f);   /* 2^-p */

typedef struct {
  mpe_round round;     /* default MPE_RNE */
  int      flush_subnormals; /* 0 keep (default), 1 flush to signed zero */
  int      saturate;   /* 1: overflow gives ±max finite; 0: ±inf, or NaN where the format has no inf */
  uint64_t seed;       /* stochastic modes: element i uses the counter-based stream (seed, offset + i) */
  uint64_t offset;
} mpe_round_opts;      /* a zeroed struct means the defaults; NULL means the defaults */

/* Round n values to format f, results kept in binary32 / binary64. y may equal x
   (in place); partial overlap is not allowed. mpe_round_f32 needs a format of at
   most 24 bits of precision (MPE_EINVAL otherwise). Results do not depend on the
   number of threads or the SIMD level, stochastic modes included. Returns
   MPE_EINVAL (nothing written) for NULL pointers with n > 0, a NULL format or a
   rounding mode out of range. */
MPE_API int mpe_round_f32(float  *y, const float  *x, size_t n, const mpe_format *f, const mpe_round_opts *o);
MPE_API int mpe_round_f64(double *y, const double *x, size_t n, const mpe_format *f, const mpe_round_opts *o);

/* One value, same rules as the arrays (element index = o->offset). */
MPE_API double mpe_round_scalar(double x, const mpe_format *f, const mpe_round_opts *o);

#ifdef __cplusplus
}
#endif
#endif
