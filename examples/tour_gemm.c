/* The README's tensor-core tour: an FP16 GEMM on the H100 model against the
   exact dot product rounded once, and one of Fasi et al.'s hand vectors.
   Build: cc tour_gemm.c $(pkg-config --cflags --libs mpemu) -lm */
#include <math.h>
#include <stdio.h>
#include <mpemu.h>

enum { M = 64, N = 64, K = 256 };

int main(void)
{
  static uint16_t A[M * K], B[K * N];
  static float C[M * N], E[M * N];
  const int m = M, n = N, k = K, lda = K, ldb = N, ldc = N;
  for (int i = 0; i < M * K; i++)
    A[i] = mpe_fp32_to_fp16(sinf((float)i), MPE_RNE);
  for (int i = 0; i < K * N; i++)
    B[i] = mpe_fp32_to_fp16(cosf((float)i) / 16, MPE_RNE);

  const mpe_tc_model *h100 = mpe_tc_model_get("h100", MPE_FP16);   /* FP16 in, FP32 out */
  int rc = mpe_gemm(h100, MPE_ROW_MAJOR, MPE_NO_TRANS, MPE_NO_TRANS, m, n, k,
                    1.0f, A, MPE_FP16, lda, B, MPE_FP16, ldb, 0.0f, C, MPE_FP32, ldc);
  if (!rc)
    rc = mpe_gemm(mpe_tc_model_get("exact", MPE_FP16), MPE_ROW_MAJOR, MPE_NO_TRANS, MPE_NO_TRANS, m, n, k,
                  1.0f, A, MPE_FP16, lda, B, MPE_FP16, ldb, 0.0f, E, MPE_FP32, ldc);
  if (rc) {
    fprintf(stderr, "tour_gemm: %s\n", mpe_strerror(rc));
    return 1;
  }
  int differ = 0;
  double diff = 0, big = 0;
  for (int i = 0; i < M * N; i++) {
    differ += C[i] != E[i];
    diff = fmax(diff, fabs((double)C[i] - E[i]));
    big = fmax(big, fabs(E[i]));
  }
  const double worst = diff / big;
  printf("h100 FP16 GEMM %dx%dx%d: %d of %d outputs differ from the exact dot product rounded once,\n"
         "by at most %.2g of the largest output\n", M, N, K, differ, M * N, worst);

  /* a = [1, 1], b = [2, 3*2^-24], c = 0: the block sum 2 + 3*2^-24 is rounded
     toward zero to binary32, so 2 (the exact sum rounded to nearest would be 2 + 2^-22) */
  const float a2[2] = { 1, 1 }, b2[2] = { 2, 0x3p-24f }, c0 = 0;
  float d = 0;
  rc = mpe_mma(h100, 1, 1, 2, a2, MPE_FP32, 2, b2, MPE_FP32, 1, &c0, 1, &d, MPE_FP32, 1);
  printf("h100: [1, 1] . [2, 3*2^-24] = %.10g (the exact sum is %.10g)\n", d, 2 + 0x3p-24);
  return rc || d != 2.0f || worst > 1e-5;
}
