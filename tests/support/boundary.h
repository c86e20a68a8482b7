/* Boundary-case generator and exact references for the Check suites.

   The generator follows TestFloat's habit: values are not uniform random
   numbers but the places where rounding code goes wrong. For a target format
   (the one a kernel rounds to) and a source format (the one the values are
   stored in: binary32, binary64, or the target itself for tensor-core inputs)
   it draws, deterministically from a seed (ts_seed(), i.e. MPE_CHECK_SEED):
   - exponents at and around the target's and the source's emin, emax and
     subnormal edges (and around 1);
   - significands with long runs of ones and zeros, single bits at the ends,
     alternating bits, random bits;
   - ties and near-ties (one source ulp either side) at the target's rounding
     position, in normal and subnormal binades, and at the overflow threshold;
   - +-0, +-inf, quiet and signalling NaNs with payloads (when allowed);
   - the maximum magnitudes of both formats;
   - vectors with alternating signs, equal entries, near-cancelling pairs.
   Every value returned is exactly representable in the source format.

   The references are exact: GMP integers and MPFR, written from the manual
   pages (mpemu(3), mpe_round_f32(3), mpe_tc_model_get(3), mpe_mma(3),
   mpe_gemm(3)), never from the library's own kernels. */
#ifndef MPE_BOUNDARY_H
#define MPE_BOUNDARY_H
#include <stddef.h>
#include <stdint.h>
#include <gmp.h>
#include <mpemu.h>
#include "testsupport.h"   /* ts_fmt */

/* 1 when x (finite) is exactly representable in g (subnormals included). */
int ts_fmt_fits(const ts_fmt *g, double x);

typedef struct {
  ts_fmt tgt, src;
  uint64_t state;
  int elo, ehi;    /* binade exponents the values may take (ts_bgen_window) */
  int specials;    /* 1: +-inf and NaNs may be drawn (default 1) */
  int nexp, nmax;
  int exps[48];    /* boundary binades, inside the window */
  double maxima[32];/* maximum magnitudes and overflow / underflow thresholds */
} ts_bgen;

/* target: the format rounded to; source: the format holding the values
   (NULL: the target itself). Formats must lie inside binary64's range. */
void ts_bgen_init(ts_bgen *g, const mpe_format *target, const mpe_format *source, uint64_t seed);
void ts_bgen_init_fmt(ts_bgen *g, ts_fmt target, ts_fmt source, uint64_t seed);
/* Keep finite non-zero values to binades elo..ehi (|x| in [2^elo, 2^(ehi+1))). */
void ts_bgen_window(ts_bgen *g, int elo, int ehi);
/* The fixed list of structured cases (every boundary exponent with every
   significand pattern and both signs, every tie and near-tie, the maxima,
   the specials); returns the count written (at most cap). */
size_t ts_bgen_table(const ts_bgen *g, double *out, size_t cap);
/* One drawn case. */
double ts_bgen_next(ts_bgen *g);
/* The same for a binary32 source, with NaN payloads and signalling NaNs kept
   as binary32 bit patterns. */
float ts_bgen_next_f32(ts_bgen *g);
/* n values x[0], x[stride], ... in one of the vector styles (independent cases,
   all equal, alternating signs of one value, all-ones significands, maximum
   magnitudes, near-cancelling pairs, sparse, subnormal only); returns the style. */
int ts_bgen_vector(ts_bgen *g, double *x, size_t n, size_t stride);
#define TS_BGEN_NSTYLES 8
const char *ts_bgen_style_name(int style);

/* ---- exact references */

/* S * 2^X rounded to format g under a deterministic mode (RNE, RNA, RZ, RU,
   RD, RO). Overflow: ovf_inf != 0 gives +-inf in every mode (the tensor-core
   rule); otherwise IEEE 754 (nearest and away-from-zero modes give inf or NaN
   when the format has no inf, modes toward zero give +-max). A non-zero value
   that rounds to zero gives a zero of its sign; S == 0 gives +0. *inexact (may
   be NULL) tells whether rounding changed the value. */
double ts_round_z(const mpz_t S, long X, const ts_fmt *g, mpe_round r, int ovf_inf, int *inexact);
/* x (binary64, exact) rounded to g, same rules, IEEE overflow. */
double ts_round_d(double x, const ts_fmt *g, mpe_round r);

/* Philox4x32-10 (Salmon et al., SC11; cuRAND's generator): block at 128-bit
   counter ctr under key. */
void ts_philox4x32(uint32_t out[4], const uint32_t ctr[4], const uint32_t key[2]);

/* One output of a tensor-core model, from its documented parameters:
   d = a[0]b[0] + ... + a[K-1]b[K-1] + c through blocks of L products (or the
   exact / fma-chain references). a and b are read with strides sa and sb and
   hold values of the model's input format (NaN and inf allowed); c is a value
   of the output format. out is MPE_FP32 or MPE_FP16. Returns the binary32 or
   binary16 value as a double (NaN for NaN). Where the pages are silent the
   oracle reads them so: result_bits counts fraction bits at the result's binary32
   exponent clamped at -126 (a subnormal's field), and a non-zero block sum cut
   or rounded to zero keeps its sign. */
double ts_tc_oracle(const mpe_tc_params *p, int K, const double *a, size_t sa, const double *b,
                    size_t sb, double c, mpe_type out);
/* Input rule of a model for binary32 operands: x rounded to the input format
   with p->input_round; FP8 saturates (inf and overflow give +-max), NaN stays. */
double ts_tc_input(const mpe_tc_params *p, float x);
#endif
