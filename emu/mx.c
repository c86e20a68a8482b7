/* Block-scaled arrays (OCP MX v1.0 and NVFP4): quantise binary32 values to
   element codes and per-block scale codes, and back. The element roundings
   are the reference rounding (mpei_round_ref) of the element format. */
#include <math.h>
#include <strings.h>
#include "mpei.h"
#include "mpemu/mx.h"

static const struct {
  const char *name, *alias;
  int block, elem, scale;
} kinds[MPE_NMX] = {
  [MPE_MXFP8_E4M3] = { "mxfp8_e4m3", "mxfp8", 32, MPE_E4M3, MPE_E8M0 },
  [MPE_MXFP8_E5M2] = { "mxfp8_e5m2", "", 32, MPE_E5M2, MPE_E8M0 },
  [MPE_MXFP6_E2M3] = { "mxfp6_e2m3", "mxfp6", 32, MPE_E2M3, MPE_E8M0 },
  [MPE_MXFP6_E3M2] = { "mxfp6_e3m2", "", 32, MPE_E3M2, MPE_E8M0 },
  [MPE_MXFP4] = { "mxfp4", "", 32, MPE_E2M1, MPE_E8M0 },
  [MPE_MXINT8] = { "mxint8", "", 32, MPE_INT8, MPE_E8M0 },
  [MPE_NVFP4] = { "nvfp4", "", 16, MPE_E2M1, MPE_E4M3 },
};

static int kind_ok(mpe_mx_kind k) { return (unsigned)k < MPE_NMX; }
int mpe_mx_block(mpe_mx_kind k) { return kind_ok(k) ? kinds[k].block : 0; }
int mpe_mx_element_type(mpe_mx_kind k) { return kind_ok(k) ? kinds[k].elem : -1; }
int mpe_mx_scale_type(mpe_mx_kind k) { return kind_ok(k) ? kinds[k].scale : -1; }
const char *mpe_mx_name(mpe_mx_kind k) { return kind_ok(k) ? kinds[k].name : NULL; }

int mpe_mx_lookup(const char *name)
{
  if (!name)
    return -1;
  for (int i = 0; i < MPE_NMX; i++)
    if (!strcasecmp(name, kinds[i].name) || (kinds[i].alias[0] && !strcasecmp(name, kinds[i].alias)))
      return i;
  return -1;
}

static int check(const void *a, const void *b, const void *c, size_t n, mpe_mx_kind k)
{
  if (!kind_ok(k) || (n > 0 && (!a || !b || !c)) || !mpei_count_ok(n, sizeof(float)))
    return MPE_EINVAL;
  if (k == MPE_MXINT8)
    return MPE_EUNSUP;
  return MPE_OK;
}

int mpe_mx_quantize_f32(uint8_t *elem, uint8_t *scale, const float *x, size_t n, mpe_mx_kind k,
                        const mpe_round_opts *o)
{
  MPEI_FENV_GUARD();
  int rc = check(elem, scale, x, n, k);
  if (rc)
    return rc;
  if (o && (unsigned)o->round >= MPE_NROUND)
    return MPE_EINVAL;
  const mpe_round_opts d = { MPE_RNE, 0, 1, 0, 0 };
  const mpe_round r = o ? o->round : d.round;
  const uint64_t seed = o ? o->seed : 0, offset = o ? o->offset : 0;
  const int sr = r == MPE_SR || r == MPE_SR_EQ;
  const struct mpe_format *ef = mpe_format_of((mpe_type)kinds[k].elem);
  const struct mpe_format *sf = mpe_format_of((mpe_type)kinds[k].scale);
  const size_t B = (size_t)kinds[k].block;
  unsigned fl = 0;
  for (size_t b0 = 0; b0 < n; b0 += B) {
    size_t m = n - b0 < B ? n - b0 : B;
    const float *xb = x + b0;
    uint8_t *eb = elem + b0;
    double amax = 0;
    int special = 0;
    for (size_t i = 0; i < m; i++) {
      double a = fabs((double)xb[i]);
      if (!isfinite(a))
        special = 1;
      else if (a > amax)
        amax = a;
    }
    double sv;   /* the scale's value; 0: the block's elements are zero */
    if (special) {   /* the NaN scale: the block's values are lost, finite ones too */
      scale[b0 / B] = (uint8_t)mpei_encode(NAN, sf);
      for (size_t i = 0; i < m; i++)
        eb[i] = 0;
      fl |= MPE_FLAG_INVALID;
      continue;
    }
    if (sf->special == MPEI_SP_E8M0) {
      /* OCP MX v1.0: X = 2^(floor(log2(amax)) - emax_elem), within E8M0's range */
      int s = amax > 0 ? ilogb(amax) - ef->emax : -127;
      s = s < -127 ? -127 : s > 127 ? 127 : s;
      scale[b0 / B] = (uint8_t)(s + 127);
      sv = ldexp(1.0, s);
    } else {
      /* NVFP4: amax / 6 rounded to E4M3. The binary64 quotient is on the same
         side of every E4M3 midpoint as the exact one (a midpoint m has at most
         5 significant bits; amax = 6m exactly or |amax - 6m| >= ulp(amax)), so
         rounding it once more is the exact rounding of amax / 6. */
      unsigned sfl = 0;
      sv = mpei_round_ref(amax / 6.0, 0, sf, MPE_RNE, 0, 1, 0, &sfl);
      scale[b0 / B] = (uint8_t)mpei_encode(sv, sf);
    }
    for (size_t i = 0; i < m; i++) {
      if (sv == 0) {   /* the scale rounded to 0 (NVFP4): non-zero values underflow to 0 */
        eb[i] = (uint8_t)mpei_encode(copysign(0.0, xb[i]), ef);
        if (xb[i] != 0)
          fl |= MPE_FLAG_INEXACT | MPE_FLAG_UNDERFLOW;
        continue;
      }
      /* x / sv: exact for a power-of-two scale; for an E4M3 scale the binary64
         quotient decides every E2M1 rounding as the exact one does (as above:
         x and m * sv have at most 24 + 7 significant bits) */
      double q = (double)xb[i] / sv;
      uint32_t rnd = sr ? mpei_sr_word(seed, offset + b0 + i) : 0;
      double v = mpei_round_ref(q, 0, ef, r, 0, 1, rnd, &fl);
      eb[i] = (uint8_t)mpei_encode(v, ef);
    }
  }
  mpei_flags |= fl;
  return MPE_OK;
}

int mpe_mx_dequantize_f32(float *y, const uint8_t *elem, const uint8_t *scale, size_t n, mpe_mx_kind k)
{
  MPEI_FENV_GUARD();
  int rc = check(y, elem, scale, n, k);
  if (rc)
    return rc;
  const struct mpe_format *ef = mpe_format_of((mpe_type)kinds[k].elem);
  const struct mpe_format *sf = mpe_format_of((mpe_type)kinds[k].scale);
  const size_t B = (size_t)kinds[k].block;
  const uint32_t mask = (1u << ef->bits) - 1;
  for (size_t i = 0; i < n; i++) {
    double sv = mpei_decode(scale[i / B], sf);
    y[i] = (float)(mpei_decode(elem[i] & mask, ef) * sv);
  }
  return MPE_OK;
}
