/* Measuring the K order of a GEMM with probes (used by mpe-gpucheck on the
   cuBLAS paths, and tested in tests/check_gpu.c on the CPU models).

   A probe is one row of A against a column of ones: +X at k = p, -X at
   k = p + 1, s at k = q, zeros elsewhere, with s far below the alignment
   quantum of X (s < 2^(e(X) - F)). The pair cancels exactly once both are
   summed; s survives only if it is added after that, in a later block. So the
   result is s when q's block comes after the blocks of p and p + 1, and 0 when
   it comes before or with them. Over all p < k - 1 and q this shows the block
   boundaries and their order. */
#ifndef MPE_KORDER_H
#define MPE_KORDER_H
#include <mpemu.h>

/* C (m x n, row-major, float) = A (m x k row-major) * B (k x n row-major),
   alpha = 1, beta = 0; the values are exact in the input format. 0 or MPE_E*. */
typedef int (*mpek_gemm_fn)(void *ctx, int m, int n, int k, const float *A, const float *B, float *C);

enum {
  MPEK_ASCENDING,   /* blocks of `block` consecutive k, summed in ascending order */
  MPEK_ONE_BLOCK,   /* no boundary seen below k: one block (or truncation at the end only) */
  MPEK_EXACT,       /* no truncation seen at all: s always survives */
  MPEK_UNEVEN,      /* ascending, but the boundaries are not multiples of one length */
  MPEK_OTHER,       /* not ascending (split K, slices reduced at the end, ...) */
  MPEK_IRREGULAR    /* some probe gave neither 0 nor s */
};

typedef struct {
  int k, verdict, block;
  long probes, after, odd;
  int bad_p, bad_q;             /* first probe against ascending order (MPEK_OTHER) */
} mpek_result;

/* Probe shape m x n x k (k >= 4; m rows of probes per call). */
int mpek_probe(mpek_gemm_fn gemm, void *ctx, mpe_type in, int m, int n, int k, mpek_result *res);
/* One line in words. */
void mpek_describe(const mpek_result *r, char *buf, size_t len);
#endif
