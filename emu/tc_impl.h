/* Internal declarations of the tensor-core module (emu/tc_*.c). */
#ifndef MPEI_TC_IMPL_H
#define MPEI_TC_IMPL_H
#include "mpei.h"
#include "mpemu/tc.h"

struct mpe_tc_model {
  const char *name;
  mpe_tc_params p;
  int custom;
};

/* The format a block result is rounded to: binary32 or binary16. */
typedef struct { int p, emin, emax; mpe_round mode; int result_bits; } mpei_tc_out;
MPEI_HIDDEN void mpei_tc_out_of(const struct mpe_tc_model *m, int out16, mpei_tc_out *o);

/* Round mag * 2^exp (plus a sticky bit below mag when sticky != 0) to p bits,
   normal exponents emin..emax, mode r; overflow gives inf. */
MPEI_HIDDEN double mpei_tc_round(int neg, uint64_t mag, int exp, int sticky, int p, int emin, int emax,
                                 mpe_round r);

/* The portable engine, the oracle of every fast path: one output
   d = sum_k a[k] b[k*bstride] + c under the model. a, b hold exact input-format
   values (inf/NaN allowed), c an exact value of the output format. The result
   is an exact value of the output format (NaN: any NaN). */
MPEI_HIDDEN double mpei_tc_dot(const struct mpe_tc_model *m, const double *a, const double *b,
                               long bstride, int k, double c, int out16);

/* Convert one operand element to its exact input-format value (double). */
MPEI_HIDDEN double mpei_tc_load(const struct mpe_tc_model *m, const void *base, mpe_type t, size_t idx);

/* Operand view: element (i, l) at index i*rs + l*cs. */
typedef struct { const void *p; mpe_type t; long rs, cs; } mpei_tc_opnd;

/* The shared driver of mpe_mma and mpe_gemm: acc[i*n + j] receives the value of
   output (i, j) of the chained-block computation (exact output-format values,
   held in binary32). c == NULL (or c->p == NULL) means an accumulator starting at zero.
   Returns 0 or MPE_ENOMEM. */
MPEI_HIDDEN int mpei_tc_run(const struct mpe_tc_model *m, int M, int N, int K, const mpei_tc_opnd *a,
                            const mpei_tc_opnd *b, const mpei_tc_opnd *c, int out16, float *acc);

/* binary16 bits of an exact binary16 value (NaN -> 0x7fff) and back. */
MPEI_HIDDEN uint16_t mpei_tc_h_bits(double v);
MPEI_HIDDEN float mpei_tc_f_canon(double v);   /* NaN -> 0x7fffffff */
#endif
