/* Exact sums of binary32 values in a two's-complement fixed-point
   accumulator (bit 0 weighs 2^-149, the smallest binary32 subnormal).
   binary32 magnitudes stay below 2^128, so a value fills bits 0..276; six
   64-bit limbs leave 107 bits of headroom: far more than the 2^40 additions a
   caller could make. Shared by the all-reduce and reduction-order studies
   (libmpemu-analysis and libmpemu-solvers; header-only, names mpai_). */
#ifndef MPE_EXACTSUM_H
#define MPE_EXACTSUM_H
#include <math.h>
#include <stdint.h>
#include <string.h>

#define MPAI_XS_LIMBS 6
typedef struct { uint64_t l[MPAI_XS_LIMBS]; } mpai_xsum;

static inline void mpai_xs_zero(mpai_xsum *a) { memset(a, 0, sizeof *a); }

/* a += x (neg = 0) or a -= x (neg = 1); x finite */
static inline void mpai_xs_add(mpai_xsum *a, float x, int neg)
{
  uint32_t b;
  memcpy(&b, &x, 4);
  uint32_t e = (b >> 23) & 0xff, m = b & 0x7fffff;
  if (e == 0 && m == 0)
    return;
  unsigned pos = 0;
  if (e) {
    m |= 0x800000u;
    pos = e - 1;          /* x = m * 2^(e - 150) = m * 2^(e - 1) * 2^-149 */
  }
  if (b >> 31)
    neg = !neg;
  unsigned idx = pos / 64, sh = pos % 64;
  unsigned __int128 v = (unsigned __int128)m << sh;
  uint64_t part[2] = { (uint64_t)v, (uint64_t)(v >> 64) };
  if (!neg) {
    unsigned carry = 0;
    for (unsigned k = idx; k < MPAI_XS_LIMBS; k++) {
      uint64_t add = k - idx < 2 ? part[k - idx] : 0;
      unsigned __int128 s = (unsigned __int128)a->l[k] + add + carry;
      a->l[k] = (uint64_t)s;
      carry = (unsigned)(s >> 64);
      if (k - idx >= 1 && !carry)
        break;
    }
  } else {
    unsigned borrow = 0;
    for (unsigned k = idx; k < MPAI_XS_LIMBS; k++) {
      uint64_t sub = k - idx < 2 ? part[k - idx] : 0;
      uint64_t old = a->l[k];
      uint64_t r = old - sub - borrow;
      borrow = (old < sub) || (old - sub < (uint64_t)borrow);
      a->l[k] = r;
      if (k - idx >= 1 && !borrow)
        break;
    }
  }
}

static inline int mpai_xs_is_zero(const mpai_xsum *a)
{
  for (int k = 0; k < MPAI_XS_LIMBS; k++)
    if (a->l[k])
      return 0;
  return 1;
}

/* The value as a binary64, rounded to nearest even (odd = 0) or to odd
   (odd = 1; then a second rounding to at most 51 bits is correct in any mode). */
static inline double mpai_xs_to_double(const mpai_xsum *a0, int odd)
{
  mpai_xsum a = *a0;
  int neg = (int)(a.l[MPAI_XS_LIMBS - 1] >> 63);
  if (neg) {                       /* two's complement negation */
    unsigned carry = 1;
    for (int k = 0; k < MPAI_XS_LIMBS; k++) {
      unsigned __int128 s = (unsigned __int128)(~a.l[k]) + carry;
      a.l[k] = (uint64_t)s;
      carry = (unsigned)(s >> 64);
    }
  }
  int top = -1;
  for (int k = MPAI_XS_LIMBS - 1; k >= 0 && top < 0; k--)
    if (a.l[k])
      top = 64 * k + 63 - __builtin_clzll(a.l[k]);
  if (top < 0)
    return 0.0;
  uint64_t mant;
  int lo = top - 52;               /* lowest kept bit */
  if (lo <= 0) {
    mant = a.l[0];                 /* top < 53: the integer fits */
    lo = 0;
  } else {
    /* bits lo .. lo+52 */
    unsigned k = (unsigned)lo / 64, sh = (unsigned)lo % 64;
    unsigned __int128 w = a.l[k];
    if (k + 1 < MPAI_XS_LIMBS)
      w |= (unsigned __int128)a.l[k + 1] << 64;
    mant = (uint64_t)(w >> sh) & ((1ull << 53) - 1);
    /* round bit lo-1, sticky below */
    unsigned rb = (unsigned)lo - 1;
    int round = (int)((a.l[rb / 64] >> (rb % 64)) & 1);
    int sticky = (a.l[rb / 64] & ((1ull << (rb % 64)) - 1)) != 0;
    for (unsigned j = 0; j < rb / 64 && !sticky; j++)
      sticky = a.l[j] != 0;
    if (odd) {
      if (round || sticky)
        mant |= 1;
    } else if (round && (sticky || (mant & 1))) {
      mant++;
    }
  }
  double v = ldexp((double)mant, lo - 149);
  return neg ? -v : v;
}
#endif
