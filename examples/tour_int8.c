/* The README's integer tour: INT8 quantisation and an INT8 GEMM on the A100
   model, checked against the same sum in exact integers.
   Build: cc tour_int8.c $(pkg-config --cflags --libs mpemu) -lm */
#include <math.h>
#include <stdio.h>
#include <mpemu.h>

int main(void)
{
  static float W[64 * 256], X[256 * 32];
  static int8_t qw[64 * 256], qx[256 * 32];
  static int32_t acc[64 * 32];
  for (int i = 0; i < 64 * 256; i++)
    W[i] = 0.5f + 0.5f * sinf(0.37f * (float)i);
  for (int i = 0; i < 256 * 32; i++)
    X[i] = 1 + cosf(0.11f * (float)i);

  float sw[64], sx;  int32_t zw[64], zx;                       /* per-row weights, per-tensor input */
  mpe_quant_params(sw, zw, W, 64, 256, MPE_QUANT_ROWS, MPE_INT8, 1);     /* scale = max|w| / 127 */
  mpe_quant_encode(qw, W, 64, 256, MPE_QUANT_ROWS, MPE_INT8, sw, zw, NULL);
  mpe_quant_params(&sx, &zx, X, 256, 32, MPE_QUANT_TENSOR, MPE_INT8, 1);
  mpe_quant_encode(qx, X, 256, 32, MPE_QUANT_TENSOR, MPE_INT8, &sx, &zx, NULL);
  int rc = mpe_gemm(mpe_tc_model_get("a100", MPE_INT8), MPE_ROW_MAJOR, MPE_NO_TRANS, MPE_NO_TRANS, 64, 32, 256,
                    1.0f, qw, MPE_INT8, 256, qx, MPE_INT8, 32, 0.0f, acc, MPE_INT32, 32);  /* int32_t acc */
  if (rc) {
    fprintf(stderr, "tour_int8: %s\n", mpe_strerror(rc));
    return 1;
  }
  int wrong = 0;
  double err = 0, big = 0;
  for (int i = 0; i < 64; i++)
    for (int j = 0; j < 32; j++) {
      long long s = 0;
      double ref = 0;
      for (int p = 0; p < 256; p++) {
        s += (long long)qw[i * 256 + p] * qx[p * 32 + j];
        ref += (double)W[i * 256 + p] * X[p * 32 + j];
      }
      wrong += s != acc[i * 32 + j];
      double deq = (double)acc[i * 32 + j] * sw[i] * sx;   /* back to real units */
      err = fmax(err, fabs(deq - ref));
      big = fmax(big, fabs(ref));
    }
  printf("a100 INT8 GEMM 64x32x256: %d of 2048 int32 outputs differ from exact integer sums\n", wrong);
  printf("dequantised against the binary64 product: largest error %.3g of the largest output\n", err / big);
  return wrong != 0;
}
