/* A short tour of mpemu's formats: limits, and one value under each rounding mode.
   Build: cc tour.c $(pkg-config --cflags --libs mpemu) */
#include <math.h>
#include <stdio.h>
#include <mpemu.h>

int main(void)
{
  static const mpe_type types[] = { MPE_FP32, MPE_TF32, MPE_FP16, MPE_BF16, MPE_E4M3, MPE_E5M2 };
  printf("mpemu %s on a CPU with: %s\n\n", mpe_version_string(), mpe_cpu_features());
  printf("%-6s %3s %6s %6s %14s %14s %14s %10s\n", "format", "p", "emin", "emax", "max finite",
         "min normal", "min subnormal", "u = 2^-p");
  for (size_t i = 0; i < sizeof types / sizeof types[0]; i++) {
    const mpe_format *f = mpe_format_of(types[i]);
    printf("%-6s %3d %6d %6d %14.6g %14.6g %14.6g %10.3g\n", mpe_format_name(f),
           mpe_format_precision(f), mpe_format_emin(f), mpe_format_emax(f), mpe_format_max(f),
           mpe_format_min_normal(f), mpe_format_min_subnormal(f), mpe_format_unit_roundoff(f));
  }

  static const double xs[] = { 1.0 / 3.0, -2.7182818284590452, 65519.0, 70000.0, 3e-8, 1 + 0x1p-8 + 0x1p-40 };
  printf("\nOne value in each format under each rounding mode (binary64 input, one rounding):\n");
  for (size_t k = 0; k < sizeof xs / sizeof xs[0]; k++) {
    printf("\nx = %.17g\n%-6s", xs[k], "");
    for (int r = 0; r < MPE_NROUND; r++)
      printf(" %13s", mpe_round_name((mpe_round)r));
    printf("\n");
    for (size_t i = 1; i < sizeof types / sizeof types[0]; i++) {
      const mpe_format *f = mpe_format_of(types[i]);
      printf("%-6s", mpe_format_name(f));
      for (int r = 0; r < MPE_NROUND; r++) {
        mpe_round_opts o = { (mpe_round)r, 0, 0, 2026, 0 };
        printf(" %13.7g", mpe_round_scalar(xs[k], f, &o));
      }
      printf("\n");
    }
  }
  printf("\nNotes: FP16 overflows at 65520 under RNE (65519 -> 65504, 70000 -> inf);\n"
         "E4M3 has no infinity, so overflow gives NaN unless saturating;\n"
         "1 + 2^-8 + 2^-40 rounds to BF16 1.0078125 in one step (via binary32 it would be 1).\n");
  return 0;
}
