/* The README's first tour: formats and rounding. Every result is checked
   against what the README says of it; exit status 0 when all hold.
   Build: cc tour_round.c $(pkg-config --cflags --libs mpemu) */
#include <stdio.h>
#include <mpemu.h>

int main(void)
{
  float x[4] = { 0.1f, -3.3f, 1e-3f, 300.0f }, y[4], lo[4], hi[4];
  size_t n = 4;
  uint16_t h = mpe_fp32_to_fp16(0.1f, MPE_RNE);                  /* 0x2e66 */
  uint16_t b = mpe_fp64_to_bf16(1 + 0x1p-8 + 0x1p-40, MPE_RNE);  /* 1.0078125: one rounding */
  mpe_round_opts o = { .round = MPE_SR, .seed = 42 };
  mpe_round_f32(y, x, n, mpe_format_lookup("e4m3"), &o);         /* stochastic, thread-count independent */
  uint16_t s = mpe_fp16_fma(h, h, h, MPE_RNE);                    /* one rounding, always */

  int bad = 0;
  printf("fp16(0.1)              = 0x%04x (%.10g)\n", h, mpe_fp16_to_fp32(h));
  bad |= h != 0x2e66;
  printf("bf16(1 + 2^-8 + 2^-40) = %.10g\n", mpe_bf16_to_fp32(b));
  bad |= mpe_bf16_to_fp32(b) != 1.0078125f;
  /* each stochastic result is one of the two E4M3 neighbours of x */
  mpe_round_opts down = { .round = MPE_RD }, up = { .round = MPE_RU };
  mpe_round_f32(lo, x, n, mpe_format_lookup("e4m3"), &down);
  mpe_round_f32(hi, x, n, mpe_format_lookup("e4m3"), &up);
  for (size_t i = 0; i < n; i++) {
    printf("e4m3 SR(%-6g)          = %-10g (neighbours %g, %g)\n", x[i], y[i], lo[i], hi[i]);
    bad |= y[i] != lo[i] && y[i] != hi[i];
  }
  /* fma: h*h + h is exact in binary64 (11-bit operands), so one rounding of it is the answer */
  const double hf = mpe_fp16_to_fp64(h);
  printf("fp16 fma(h, h, h)      = 0x%04x (%.10g)\n", s, mpe_fp16_to_fp32(s));
  bad |= s != mpe_fp64_to_fp16(hf * hf + hf, MPE_RNE);
  if (bad)
    fprintf(stderr, "tour_round: a result differs from the README\n");
  return bad;
}
