/* K-order probes: see korder.h. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "korder.h"

/* X and s for an input type: both exact in it, s below 2^(e(X) - 31). */
static void probe_values(mpe_type in, float *X, float *s)
{
  switch (in) {
  case MPE_E4M3: *X = 0x1p8f; *s = 0x1p-6f; break;        /* 14 binades: enough for F = 13 */
  case MPE_FP16: case MPE_E5M2: *X = 0x1p15f; *s = 0x1p-14f; break;
  default: *X = 0x1p60f; *s = 0x1p-60f; break;            /* bf16, tf32 */
  }
}

int mpek_probe(mpek_gemm_fn gemm, void *ctx, mpe_type in, int m, int n, int k, mpek_result *res)
{
  if (!gemm || !res || m < 1 || n < 1 || k < 4)
    return MPE_EINVAL;
  float X, s;
  probe_values(in, &X, &s);
  int npairs = k - 1;
  long total = (long)npairs * (k - 2);
  /* r[p*k + q]: 0 not after, 1 after, 2 neither; -1 for q in the pair */
  signed char *r = malloc((size_t)npairs * k);
  float *A = malloc(sizeof(float) * (size_t)m * k);
  float *B = malloc(sizeof(float) * (size_t)k * n);
  float *C = malloc(sizeof(float) * (size_t)m * n);
  int *pp = malloc(sizeof(int) * (size_t)m * 2);
  if (!r || !A || !B || !C || !pp) {
    free(r); free(A); free(B); free(C); free(pp);
    return MPE_ENOMEM;
  }
  memset(r, -1, (size_t)npairs * k);
  for (long t = 0; t < (long)k * n; t++)
    B[t] = 1.0f;
  long next = 0;
  int err = MPE_OK;
  while (next < total && !err) {
    int rows = 0;
    memset(A, 0, sizeof(float) * (size_t)m * k);
    for (; rows < m && next < total; rows++, next++) {
      int p = (int)(next / (k - 2)), qi = (int)(next % (k - 2));
      int q = qi < p ? qi : qi + 2;
      float *a = A + (size_t)rows * k;
      a[p] = X;
      a[p + 1] = -X;
      a[q] = s;
      pp[2 * rows] = p;
      pp[2 * rows + 1] = q;
    }
    err = gemm(ctx, m, n, k, A, B, C);
    for (int i = 0; i < rows && !err; i++) {
      float v = C[(size_t)i * n];
      r[(size_t)pp[2 * i] * k + pp[2 * i + 1]] = v == s ? 1 : v == 0.0f ? 0 : 2;
    }
  }
  free(A); free(B); free(C); free(pp);
  if (err) {
    free(r);
    return err;
  }

  memset(res, 0, sizeof *res);
  res->k = k;
  res->probes = total;
  res->bad_p = res->bad_q = -1;
  for (int p = 0; p < npairs; p++)
    for (int q = 0; q < k; q++) {
      int v = r[(size_t)p * k + q];
      if (v == 1) res->after++;
      if (v == 2) res->odd++;
    }
  if (res->odd) {
    res->verdict = MPEK_IRREGULAR;
  } else if (res->after == total) {
    res->verdict = MPEK_EXACT;
  } else {
    /* ascending: for each pair a threshold T(p) with "after" exactly when q >= T(p) */
    int *T = malloc(sizeof(int) * (size_t)npairs);
    int ok = T != NULL;
    for (int p = 0; ok && p < npairs; p++) {
      int t = k;
      for (int q = p + 2; q < k; q++)
        if (r[(size_t)p * k + q] == 1) { t = q; break; }
      T[p] = t;
      for (int q = 0; q < k && ok; q++) {
        int v = r[(size_t)p * k + q];
        if (v < 0)
          continue;
        if (v != (q >= t)) {
          res->verdict = MPEK_OTHER;
          res->bad_p = p;
          res->bad_q = q;
          ok = 0;
        }
      }
    }
    if (ok) {
      if (T[0] >= k) {
        res->verdict = MPEK_ONE_BLOCK;
        res->block = k;
      } else {
        /* blocks of L: T(p) = min(k, (floor((p+1)/L) + 1) * L); try L = T(0) and 1 */
        int cands[2] = { T[0], 1 }, found = 0;
        for (int c = 0; c < 2 && !found; c++) {
          int L = cands[c], good = 1;
          for (int p = 0; p < npairs && good; p++) {
            int want = ((p + 1) / L + 1) * L;
            if (want > k) want = k;
            good = T[p] == want;
          }
          if (good) {
            found = 1;
            res->verdict = MPEK_ASCENDING;
            res->block = L;
          }
        }
        if (!found)
          res->verdict = MPEK_UNEVEN;
      }
    }
    free(T);
  }
  free(r);
  return MPE_OK;
}

void mpek_describe(const mpek_result *r, char *buf, size_t len)
{
  switch (r->verdict) {
  case MPEK_ASCENDING:
    snprintf(buf, len, "ascending k in blocks of %d (K=%d, %ld probes)", r->block, r->k, r->probes);
    break;
  case MPEK_ONE_BLOCK:
    snprintf(buf, len, "one block: no boundary below K=%d (%ld probes)", r->k, r->probes);
    break;
  case MPEK_EXACT:
    snprintf(buf, len, "no truncation seen: the probes cannot show the order (K=%d)", r->k);
    break;
  case MPEK_UNEVEN:
    snprintf(buf, len, "ascending, boundaries not of one length (K=%d)", r->k);
    break;
  case MPEK_OTHER:
    snprintf(buf, len, "not ascending: k=%d is summed after the pair at k=%d,%d (K=%d)", r->bad_q,
             r->bad_p, r->bad_p + 1, r->k);
    break;
  default:
    snprintf(buf, len, "irregular: %ld of %ld probes gave neither 0 nor s (K=%d)", r->odd, r->probes, r->k);
    break;
  }
}
