/* Teaching lab: the harmonic series sum_{k=1}^{n} 1/k in FP16, BF16 and FP32,
   each addition rounded to nearest-even (RNE) or stochastically (SR).
   With RNE the sum stagnates as soon as 1/k drops below half an ulp of the
   partial sum; stochastic rounding keeps adding 1/k in expectation and the
   sum keeps tracking ln(n) + 0.5772.

   usage: harmonic [n [seed]]      (default n = 4000000, seed = 1) */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <mpemu.h>

enum { FP16, BF16, FP32, NFMT };
static const char *const names[NFMT] = { "fp16", "bf16", "fp32" };

typedef struct {
  uint16_t h;     /* FP16/BF16 partial sum (bits) */
  float f;        /* FP32 partial sum */
  long stuck_at;  /* first k whose addition changed nothing (0: never) */
} sum_state;

static double value(int fmt, const sum_state *s)
{
  return fmt == FP16 ? mpe_fp16_to_fp32(s->h) : fmt == BF16 ? mpe_bf16_to_fp32(s->h) : s->f;
}

/* s += 1/k, the term first rounded to the format (RNE), the sum with mode r */
static void add_term(int fmt, sum_state *s, long k, mpe_round r, uint64_t seed)
{
  float term = 1.0f / (float)k;
  double before = value(fmt, s);
  if (fmt == FP16) {
    s->h = mpe_fp16_add(s->h, mpe_fp32_to_fp16(term, MPE_RNE), r);
  } else if (fmt == BF16) {
    s->h = mpe_bf16_add(s->h, mpe_fp32_to_bf16(term, MPE_RNE), r);
  } else if (r == MPE_RNE) {
    s->f += term;
  } else {
    /* binary32 + binary32 is exact in binary64 here; round it once, stochastically */
    mpe_round_opts o = { r, 0, 0, seed, (uint64_t)k };
    s->f = (float)mpe_round_scalar((double)s->f + term, mpe_format_of(MPE_FP32), &o);
  }
  if (value(fmt, s) == before && !s->stuck_at)
    s->stuck_at = k;
}

int main(int argc, char **argv)
{
  long n = argc > 1 ? atol(argv[1]) : 4000000;
  uint64_t seed = argc > 2 ? strtoull(argv[2], NULL, 0) : 1;
  if (n < 1) {
    fprintf(stderr, "usage: harmonic [n [seed]]\n");
    return 2;
  }
  mpe_seed(seed);   /* the FP16/BF16 scalar SR stream */
  sum_state rne[NFMT] = { { 0 } }, sr[NFMT] = { { 0 } };
  double exact = 0;
  printf("%10s %12s", "n", "exact");
  for (int f = 0; f < NFMT; f++)
    printf("  %9s-rne %9s-sr", names[f], names[f]);
  printf("\n");
  long next = 10;
  for (long k = 1; k <= n; k++) {
    exact += 1.0 / (double)k;
    for (int f = 0; f < NFMT; f++) {
      add_term(f, &rne[f], k, MPE_RNE, seed);
      add_term(f, &sr[f], k, MPE_SR, seed);
    }
    if (k == next || k == n) {
      printf("%10ld %12.6f", k, exact);
      for (int f = 0; f < NFMT; f++)
        printf("  %13.6f %12.6f", value(f, &rne[f]), value(f, &sr[f]));
      printf("\n");
      if (k == next)
        next *= 10;
    }
  }
  printf("\nRNE stagnation (first k whose term changed nothing):\n");
  for (int f = 0; f < NFMT; f++) {
    if (rne[f].stuck_at)
      printf("  %s: k = %ld, sum stuck at %.7g (H_k is about %.7g)\n", names[f], rne[f].stuck_at,
             value(f, &rne[f]), log((double)rne[f].stuck_at) + 0.5772156649);
    else
      printf("  %s: no stagnation up to n = %ld\n", names[f], n);
  }
  printf("relative error at n = %ld:\n", n);
  for (int f = 0; f < NFMT; f++)
    printf("  %s: RNE %.2e   SR %.2e\n", names[f], fabs(value(f, &rne[f]) - exact) / exact,
           fabs(value(f, &sr[f]) - exact) / exact);
  return 0;
}
