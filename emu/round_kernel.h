/* The binary32 array-rounding kernel, written once with GCC vector extensions.
   Included by round_avx2.c (VW = 8) and round_avx512.c (VW = 16), each compiled
   with its own -m flags; the portable oracle is mpei_round_ref (round_ref.c).

   Each lane works on the magnitude bits a of x: with Eeff = max(E, 1) the
   significand M (implicit bit included) is rounded by dropping
   d = 24 - p + max(0, emin_b - Eeff) low bits, and the result is rebuilt as
   ((Eeff - 1) << 23) + (R << d); a carry moves into the exponent field on its
   own. Needs p <= 24 and emin >= -126 (the caller checks). */
#include <stdint.h>
#include <string.h>

typedef uint32_t vu __attribute__((vector_size(VW * 4)));
typedef int32_t vi __attribute__((vector_size(VW * 4)));

#define SPLAT(v) ((vu){} + (uint32_t)(v))
#define SPLATI(v) ((vi){} + (int32_t)(v))
#define SEL(m, a, b) ((((vu)(m)) & (a)) | (~((vu)(m)) & (b)))

/* Philox4x32-10 on VW counters at once; returns word w of each block. */
static inline __attribute__((always_inline)) vu philox_lanes(vu ctr_lo, vu ctr_hi, uint64_t key, vu word)
{
  typedef uint64_t vq __attribute__((vector_size(VW * 4)));
  vu c0 = ctr_lo, c1 = ctr_hi, c2 = SPLAT(0), c3 = SPLAT(0);
  uint32_t k0 = (uint32_t)key, k1 = (uint32_t)(key >> 32);
  for (int r = 0; r < 10; r++) {
    /* 32x32->64 products on the even and odd lanes */
    vq e0 = (vq)c0 & 0xffffffffu, o0 = (vq)c0 >> 32;
    vq e2 = (vq)c2 & 0xffffffffu, o2 = (vq)c2 >> 32;
    vq pe0 = e0 * 0xD2511F53u, po0 = o0 * 0xD2511F53u;
    vq pe2 = e2 * 0xCD9E8D57u, po2 = o2 * 0xCD9E8D57u;
    vu lo0 = (vu)(pe0 & 0xffffffffu) | (vu)(po0 << 32);
    vu hi0 = (vu)(pe0 >> 32) | (vu)(po0 & 0xffffffff00000000u);
    vu lo2 = (vu)(pe2 & 0xffffffffu) | (vu)(po2 << 32);
    vu hi2 = (vu)(pe2 >> 32) | (vu)(po2 & 0xffffffff00000000u);
    vu n0 = hi2 ^ c1 ^ k0;
    vu n2 = hi0 ^ c3 ^ k1;
    c0 = n0; c1 = lo2; c2 = n2; c3 = lo0;
    k0 += 0x9E3779B9u;
    k1 += 0xBB67AE85u;
  }
  vi w = (vi)word;
  return SEL(w == 0, c0, SEL(w == 1, c1, SEL(w == 2, c2, c3)));
}

typedef struct { vu inexact, underflow, overflow, invalid, saturated, flushed; } flagacc;

static inline __attribute__((always_inline)) vu round_lanes(vu u, const mpei_plan32 *pl, const int mode,
                                                           vu rnd, flagacc *fa)
{
  const vu a = u & 0x7fffffffu, s = u & 0x80000000u;
  const vi E = (vi)(a >> 23);
  const vi Eeff = E - (E == 0);
  vi dsub = SPLATI(pl->eminb) - Eeff;
  dsub &= dsub > 0;
  const vi dt = SPLATI(pl->dbase) + dsub;
  const vi d = (vi)SEL(dt > 25, SPLAT(25), (vu)dt);
  const vu M = (a & 0x7fffffu) | ((vu)(E != 0) & 0x800000u);
  const vu one_d = SPLAT(1) << (vu)d;
  const vu t = M >> (vu)d, rem = M & (one_d - 1), half = one_d >> 1;
  const vu inex = (vu)(rem != 0);
  const vi neg = (vi)s != 0;
  vu up;
  switch (mode) {
  case MPE_RNE: up = inex & (vu)((rem > half) | ((rem == half) & ((t & 1) != 0))); break;
  case MPE_RNA: up = inex & (vu)(rem >= half); break;
  case MPE_RZ: up = SPLAT(0); break;
  case MPE_RU: up = inex & ~(vu)neg; break;
  case MPE_RD: up = inex & (vu)neg; break;
  case MPE_RO: up = inex & (vu)((t & 1) == 0); break;
  case MPE_SR: {
    vi sh_l = 32 - dt, sh_r = dt - 32;
    sh_l = (vi)SEL(sh_l > 31, SPLAT(31), (vu)sh_l);
    sh_r = (vi)SEL(sh_r > 31, SPLAT(31), (vu)sh_r);
    vu T = SEL(dt <= 32, rem << (vu)(sh_l & (sh_l > 0)), M >> (vu)(sh_r & (sh_r > 0)));
    up = inex & (vu)(rnd < T);
    break;
  }
  default: /* MPE_SR_EQ */
    up = inex & (vu)((vi)rnd < 0);
    break;
  }
  const vu R = t - up;   /* up is 0 or all ones */
  vu res = SEL(dt >= 24, SEL(R != 0, SPLAT(pl->minsub_bits), SPLAT(0)),
               ((vu)(Eeff - 1) << 23) + (R << (vu)d));

  const vi spec = (vi)(a >= 0x7f800000u);
  const vi nan = (vi)(a > 0x7f800000u);
  const vi ovf = (vi)(res > pl->max_bits) & ~spec;
  vu to_max;
  switch (mode) {
  case MPE_RZ: case MPE_RO: to_max = SPLAT(~0u); break;
  case MPE_RU: to_max = (vu)neg; break;
  case MPE_RD: to_max = ~(vu)neg; break;
  default: to_max = SPLAT(0); break;
  }
  if (pl->saturate)
    to_max = SPLAT(~0u);
  res = SEL(ovf, SEL(to_max, SPLAT(pl->max_bits), SPLAT(pl->ovf_bits)), res);
  res = SEL(spec, SEL(nan, SPLAT(0x7fc00000u), SPLAT(pl->inf_bits)), res);
  vu fl = SPLAT(0);
  if (pl->flush) {
    fl = (vu)((res != 0) & (res < pl->minnorm_bits));
    res &= ~fl;
  }
  /* flags */
  const vu fin = ~(vu)spec;
  const vu tinyb = SEL(neg, SPLAT(pl->tiny_neg), SPLAT(pl->tiny_pos));
  fa->inexact |= (fin & inex) | (vu)ovf | fl;
  fa->underflow |= (fin & inex & (vu)(a < tinyb)) | fl;
  fa->overflow |= (vu)ovf;
  fa->flushed |= fl;
  const vu isinf = (vu)(spec & ~nan);
  if (pl->saturate)
    fa->saturated |= (vu)ovf | isinf;
  fa->invalid |= (vu)nan & (vu)((a & 0x400000u) == 0);
  if (!pl->has_inf && !pl->saturate)
    fa->invalid |= isinf;
  return res | s;
}

static inline unsigned flags_of(const flagacc *fa)
{
  unsigned f = 0;
  vu z = SPLAT(0);
#define ANY(v) (memcmp(&(v), &z, sizeof z) != 0)
  if (ANY(fa->inexact)) f |= MPE_FLAG_INEXACT;
  if (ANY(fa->underflow)) f |= MPE_FLAG_UNDERFLOW;
  if (ANY(fa->overflow)) f |= MPE_FLAG_OVERFLOW;
  if (ANY(fa->invalid)) f |= MPE_FLAG_INVALID;
  if (ANY(fa->saturated)) f |= MPE_FLAG_SATURATED;
  if (ANY(fa->flushed)) f |= MPE_FLAG_FLUSHED;
#undef ANY
  return f;
}

static inline __attribute__((always_inline)) vu random_lanes(const mpei_plan32 *pl, uint64_t idx0, const int mode)
{
  if (mode != MPE_SR && mode != MPE_SR_EQ)
    return SPLAT(0);
  vu lane;
  for (int j = 0; j < VW; j++)
    lane[j] = (uint32_t)j;
  /* element index i = idx0 + j; counter i/4, word i%4 (idx0 + j may carry past 2^32) */
  uint64_t i0 = idx0;
  vu lo = SPLAT((uint32_t)i0) + lane;
  vu carry = (vu)(lo < SPLAT((uint32_t)i0));
  vu hi = SPLAT((uint32_t)(i0 >> 32)) - carry;
  vu ctr_lo = (lo >> 2) | (hi << 30), ctr_hi = hi >> 2;
  return philox_lanes(ctr_lo, ctr_hi, pl->seed, lo & 3);
}

static inline __attribute__((always_inline)) unsigned kernel_body(float *y, const float *x, size_t n,
                                                                  const mpei_plan32 *pl, uint64_t base,
                                                                  const int mode)
{
  flagacc fa = { SPLAT(0), SPLAT(0), SPLAT(0), SPLAT(0), SPLAT(0), SPLAT(0) };
  size_t i = 0;
  /* streaming stores for large out-of-place arrays, as memcpy does */
  int stream = n * 4 >= STREAM_BYTES && y != x;
  if (stream) {
    while (i < n && ((uintptr_t)(y + i) & (VW * 4 - 1))) {
      vu u = SPLAT(0);
      memcpy(&u, x + i, 4);
      vu r = round_lanes(u, pl, mode, random_lanes(pl, base + i, mode), &fa);
      memcpy(y + i, &r, 4);
      i++;
    }
    for (; i + VW <= n; i += VW) {
      vu u;
      memcpy(&u, x + i, sizeof u);
      vu r = round_lanes(u, pl, mode, random_lanes(pl, base + i, mode), &fa);
      STREAM_STORE(y + i, r);
    }
    STREAM_FENCE();
  } else {
    for (; i + VW <= n; i += VW) {
      vu u;
      memcpy(&u, x + i, sizeof u);
      vu r = round_lanes(u, pl, mode, random_lanes(pl, base + i, mode), &fa);
      memcpy(y + i, &r, sizeof r);
    }
  }
  if (i < n) {
    vu u = SPLAT(0);
    memcpy(&u, x + i, (n - i) * 4);
    flagacc tail = { SPLAT(0), SPLAT(0), SPLAT(0), SPLAT(0), SPLAT(0), SPLAT(0) };
    vu r = round_lanes(u, pl, mode, random_lanes(pl, base + i, mode), &tail);
    /* lanes past n held +0, which raises nothing */
    memcpy(y + i, &r, (n - i) * 4);
    fa.inexact |= tail.inexact; fa.underflow |= tail.underflow; fa.overflow |= tail.overflow;
    fa.invalid |= tail.invalid; fa.saturated |= tail.saturated; fa.flushed |= tail.flushed;
  }
  return flags_of(&fa);
}

static unsigned kernel_entry(float *y, const float *x, size_t n, const mpei_plan32 *pl, uint64_t base)
{
  switch (pl->mode) {
  case MPE_RNE: return kernel_body(y, x, n, pl, base, MPE_RNE);
  case MPE_RNA: return kernel_body(y, x, n, pl, base, MPE_RNA);
  case MPE_RZ: return kernel_body(y, x, n, pl, base, MPE_RZ);
  case MPE_RU: return kernel_body(y, x, n, pl, base, MPE_RU);
  case MPE_RD: return kernel_body(y, x, n, pl, base, MPE_RD);
  case MPE_RO: return kernel_body(y, x, n, pl, base, MPE_RO);
  case MPE_SR: return kernel_body(y, x, n, pl, base, MPE_SR);
  default: return kernel_body(y, x, n, pl, base, MPE_SR_EQ);
  }
}
