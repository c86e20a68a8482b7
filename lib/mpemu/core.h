/* mpemu — core definitions shared by every module: export macro, error
   codes, sticky numerical flags, the type and rounding-mode enums. */
#ifndef MPEMU_CORE_H
#define MPEMU_CORE_H

#include <stddef.h>
#include <stdint.h>

#if defined(_WIN32)
#  define MPE_API __declspec(dllexport)
#elif defined(__GNUC__)
#  define MPE_API __attribute__((visibility("default")))
#else
#  define MPE_API
#endif

#ifdef __cplusplus
extern "C" {
#endif

/* Error codes: functions that can fail return 0 or one of these. */
enum {
  MPE_OK = 0,
  MPE_EINVAL = 1,   /* invalid argument (NULL pointer, bad size, bad option) */
  MPE_ENOMEM = 2,   /* out of memory */
  MPE_EUNSUP = 3,   /* not supported / not implemented for these arguments */
  MPE_ERANGE = 4,   /* value out of range (NaN or inf where a finite value is needed) */
  MPE_EIO = 5,      /* input/output error */
  MPE_EFORMAT = 6,  /* malformed file or data */
  MPE_EDEVICE = 7,  /* no usable GPU device */
  MPE_ENOTFOUND = 8,/* unknown name (format, model, tensor) */
  MPE_ECONVERGE = 9 /* an iteration did not converge */
};
#define MPE_NERRORS 10

/* Constructors follow one convention. A function that makes an object
   (mpe_<module>_create, _alloc, _custom, _open) returns MPE_OK or an error code
   and hands the object back through its first argument, the address of the
   caller's pointer:
       mpe_range *r;
       int rc = mpe_range_create(&r, formats, 2, NULL);
       if (rc) ... mpe_strerror(rc) says why; r is NULL ...
   MPE_EINVAL is a bad argument (a NULL first argument included) and MPE_ENOMEM
   no memory, so the two can be told apart; a few say more (a file's MPE_EIO or
   MPE_EFORMAT, an unknown name's MPE_ENOTFOUND). On every failure the pointer
   is set to NULL (unless the first argument is NULL itself), so the matching
   destructor (_free, or mpe_io_close), which ignores NULL, may always be called.
   The constructors that return the object or NULL (mpe_range_alloc,
   mpe_range_alloc_targets, mpe_scaler_alloc, mpe_delayed_alloc) are deprecated
   wrappers of mpe_range_create, mpe_range_create_targets, mpe_scaler_create and
   mpe_delayed_create, kept for programs already written against them. */

/* The message for an error code ("unknown error" for codes outside the list). */
MPE_API const char *mpe_strerror(int code);

/* Sticky numerical flags (SoftFloat/MPFR style). They are per thread:
   array functions that run on several threads merge the flags of their
   workers into the calling thread's flags before returning. */
enum {
  MPE_FLAG_INEXACT   = 1u << 0,
  MPE_FLAG_UNDERFLOW = 1u << 1, /* tiny (after rounding, unbounded exponent) and inexact */
  MPE_FLAG_OVERFLOW  = 1u << 2,
  MPE_FLAG_INVALID   = 1u << 3, /* signalling NaN input, invalid operation, NaN made from a number */
  MPE_FLAG_SATURATED = 1u << 4, /* an overflow (or inf) was clamped to the largest finite value */
  MPE_FLAG_FLUSHED   = 1u << 5, /* a subnormal result was flushed to zero */
  MPE_FLAG_DIVBYZERO = 1u << 6
};
MPE_API unsigned mpe_flags_get(void);
MPE_API void mpe_flags_clear(unsigned mask);
MPE_API void mpe_flags_raise(unsigned mask);
/* Returns the flags and clears them. */
MPE_API unsigned mpe_flags_test_clear(unsigned mask);

/* Number formats known by name: one row each of <mpemu/formats.def>, with the
   number the row gives (MPE_FP64 = 0, MPE_FP32, MPE_TF32, MPE_FP16, MPE_BF16,
   MPE_E4M3, MPE_E5M2 = 6, then the OCP MX formats from 12 on); and the integer
   types of the integer tensor cores (see mpe_tc_int(3) and mpe_quant(3)).
   Values are never renumbered. MPE_INT4/MPE_UINT4 values are held one per byte
   (int8_t/uint8_t). */
typedef enum {
#define MPE_FORMAT(type, value, ...) type = value,
#include "mpemu/formats.def"
#undef MPE_FORMAT
  MPE_INT8 = 7, /* int8_t,  -128..127 */
  MPE_UINT8,  /* uint8_t, 0..255 */
  MPE_INT4,   /* int8_t holding -8..7 */
  MPE_UINT4,  /* uint8_t holding 0..15 */
  MPE_INT32   /* int32_t: the accumulator and output of the integer tensor cores */
} mpe_type;

typedef enum {
  MPE_RNE,   /* nearest, ties to even            */
  MPE_RNA,   /* nearest, ties away from zero     */
  MPE_RZ,    /* toward zero                      */
  MPE_RU,    /* toward +inf                      */
  MPE_RD,    /* toward -inf                      */
  MPE_RO,    /* round to odd                     */
  MPE_SR,    /* stochastic, P(up) proportional to distance */
  MPE_SR_EQ  /* stochastic, P(up) = 1/2          */
} mpe_round;
#define MPE_NROUND 8

/* "rne", "rna", "rz", "ru", "rd", "ro", "sr", "sr_eq" and back; NULL / -1 when unknown. */
MPE_API const char *mpe_round_name(mpe_round r);
MPE_API int mpe_round_lookup(const char *name);
MPE_API const char *mpe_type_name(mpe_type t);

MPE_API const char *mpe_version_string(void);

/* CPU features the dispatcher found, as a space-separated list ("avx2 avx512f ..."). */
MPE_API const char *mpe_cpu_features(void);
/* Restrict the SIMD level used by the array kernels (for tests and benchmarks):
   0 portable reference, 1 AVX2, 2 AVX-512; larger than the CPU has is clamped.
   Returns the level in force. -1 restores automatic choice. */
MPE_API int mpe_simd_level_set(int level);
/* The SIMD level in force (0, 1 or 2, as above), for code built on the library
   (libmpemu-analysis picks its kernels with it). */
MPE_API int mpe_simd_level(void);
/* Size the calling thread's OpenMP teams (omp_set_num_threads) to the cores
   that other processes leave free now, from the run queue of /proc/loadavg,
   and return that size (at least 1). When OMP_NUM_THREADS or OMP_DYNAMIC is
   set, changes nothing and returns omp_get_max_threads(). See mpe_threads_fit(3). */
MPE_API int mpe_threads_fit(void);

#ifdef __cplusplus
}
#endif
#endif
