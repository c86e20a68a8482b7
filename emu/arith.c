/* Correctly rounded FP16/BF16 arithmetic. Every operation first forms a
   binary64 value that is either the exact result or its round-to-odd
   rounding to 53 bits, then rounds it once with the reference rounding
   (mpei_round_ref). Rounding to odd at 53 bits followed by any rounding to
   p <= 51 bits equals the direct rounding of the exact value (Boldo and
   Melquiond, IEEE TC 2008), and it keeps more than p + 32 bits, so the
   stochastic modes see the same 32-bit fraction as the exact value; tininess
   and inexactness are preserved too.
   Exactness of the binary64 steps: operands have at most 11 significant bits
   and exponents in [-133, 127], so products are exact and no binary64 step
   overflows or underflows; sums use TwoSum, quotients and square roots the
   exact FMA remainder. */
#include "config.h"
#include <math.h>
#include "mpei.h"
#include "mpemu/arith.h"
#include "arith_ro.h"

enum { K_FP16 = 0, K_BF16 = 1 };

static const uint16_t canonical_nan[2] = { 0x7e00u, 0x7fc0u };

static int is_nan16(uint16_t h, int k)
{
  return k == K_FP16 ? (h & 0x7c00u) == 0x7c00u && (h & 0x03ffu)
                     : (h & 0x7f80u) == 0x7f80u && (h & 0x007fu);
}

static int is_snan16(uint16_t h, int k)
{
  return is_nan16(h, k) && !(h & (k == K_FP16 ? 0x0200u : 0x0040u));
}

static double value16(uint16_t h, int k)
{
  if (k == K_BF16)
    return mpei_u2f((uint32_t)h << 16);
  unsigned e = (h >> 10) & 31u, m = h & 0x3ffu;
  double v;
  if (e == 0)
    v = m * 0x1p-24;
  else if (e == 31)
    v = m ? NAN : INFINITY;
  else
    v = mpei_u2d(((uint64_t)(e - 15 + 1023) << 52) | ((uint64_t)m << 42));
  return (h & 0x8000u) ? -v : v;
}

/* v is a value of the format (already rounded) or NaN */
static uint16_t encode16(double v, int k)
{
  if (isnan(v))
    return canonical_nan[k];
  if (k == K_BF16)
    return (uint16_t)(mpei_f2u((float)v) >> 16);
  uint16_t s = signbit(v) ? 0x8000u : 0;
  double a = fabs(v);
  if (isinf(a))
    return s | 0x7c00u;
  if (a < 0x1p-14)
    return s | (uint16_t)(a * 0x1p24);
  uint64_t u = mpei_d2u(a);
  int e = (int)(u >> 52) - 1023;
  return s | (uint16_t)((e + 15) << 10) | (uint16_t)((u >> 42) & 0x3ffu);
}

static const struct mpe_format *format16(int k)
{
  return mpe_format_of(k == K_FP16 ? MPE_FP16 : MPE_BF16);
}

typedef struct { int k; mpe_round r; uint32_t rnd; } op_ctx;

static op_ctx begin(int k, mpe_round r)
{
  op_ctx c;
  c.k = k;
  c.r = (unsigned)r < MPE_NROUND ? r : MPE_RNE;
  /* one word per stochastic call, whatever the operands, so streams stay aligned */
  c.rnd = (c.r == MPE_SR || c.r == MPE_SR_EQ) ? mpei_thread_sr_word() : 0;
  return c;
}

static uint16_t finish(const op_ctx *c, double v)
{
  unsigned fl = 0;
  double res = mpei_round_ref(v, 0, format16(c->k), c->r, 0, 0, c->rnd, &fl);
  mpei_flags |= fl;
  return encode16(res, c->k);
}

static uint16_t invalid(const op_ctx *c)
{
  mpei_flags |= MPE_FLAG_INVALID;
  return canonical_nan[c->k];
}

/* NaN operands: invalid when any of them signals */
static uint16_t nan_result(const op_ctx *c, int snan)
{
  if (snan)
    mpei_flags |= MPE_FLAG_INVALID;
  return canonical_nan[c->k];
}

static uint16_t add16(uint16_t a, uint16_t b, int k, mpe_round r)
{
  op_ctx c = begin(k, r);
  if (is_nan16(a, k) || is_nan16(b, k))
    return nan_result(&c, is_snan16(a, k) || is_snan16(b, k));
  double x = value16(a, k), y = value16(b, k);
  if (isinf(x) && isinf(y) && (x > 0) != (y > 0))
    return invalid(&c);
  double s = (isinf(x) || isinf(y)) ? x + y : mpei_ro_sum(x, y);
  return finish(&c, mpei_zero_sum_sign(s, x, y, c.r));
}

static uint16_t mul16(uint16_t a, uint16_t b, int k, mpe_round r)
{
  op_ctx c = begin(k, r);
  if (is_nan16(a, k) || is_nan16(b, k))
    return nan_result(&c, is_snan16(a, k) || is_snan16(b, k));
  double x = value16(a, k), y = value16(b, k);
  if ((isinf(x) && y == 0) || (x == 0 && isinf(y)))
    return invalid(&c);
  return finish(&c, x * y);   /* exact */
}

static uint16_t div16(uint16_t a, uint16_t b, int k, mpe_round r)
{
  op_ctx c = begin(k, r);
  if (is_nan16(a, k) || is_nan16(b, k))
    return nan_result(&c, is_snan16(a, k) || is_snan16(b, k));
  double x = value16(a, k), y = value16(b, k);
  if ((x == 0 && y == 0) || (isinf(x) && isinf(y)))
    return invalid(&c);
  if (y == 0 && isfinite(x))
    mpei_flags |= MPE_FLAG_DIVBYZERO;
  double q = x / y;
  if (isfinite(q) && q != 0) {
    double rem = fma(-q, y, x);   /* exact remainder x - q*y */
    q = mpei_ro_adjust(q, y > 0 ? rem : -rem);
  }
  return finish(&c, q);
}

static uint16_t sqrt16(uint16_t a, int k, mpe_round r)
{
  op_ctx c = begin(k, r);
  if (is_nan16(a, k))
    return nan_result(&c, is_snan16(a, k));
  double x = value16(a, k);
  if (x < 0)
    return invalid(&c);
  double s = sqrt(x);   /* sqrt(-0) = -0 */
  if (isfinite(s) && s != 0)
    s = mpei_ro_adjust(s, fma(-s, s, x));   /* exact remainder x - s*s */
  return finish(&c, s);
}

static uint16_t fma16(uint16_t a, uint16_t b, uint16_t cc, int k, mpe_round r)
{
  op_ctx c = begin(k, r);
  double x = value16(a, k), y = value16(b, k), z = value16(cc, k);
  int inf_times_zero = (isinf(x) && y == 0) || (x == 0 && isinf(y));
  if (is_nan16(a, k) || is_nan16(b, k) || is_nan16(cc, k)) {
    int snan = is_snan16(a, k) || is_snan16(b, k) || is_snan16(cc, k);
    /* 0*inf is invalid even when c is a quiet NaN (x86 and SoftFloat agree) */
    return nan_result(&c, snan || (inf_times_zero && !is_nan16(a, k) && !is_nan16(b, k)));
  }
  if (inf_times_zero)
    return invalid(&c);
  double p = x * y;   /* exact */
  if (isinf(p) && isinf(z) && (p > 0) != (z > 0))
    return invalid(&c);
  double s = (isinf(p) || isinf(z)) ? p + z : mpei_ro_sum(p, z);
  return finish(&c, mpei_zero_sum_sign(s, p, z, c.r));
}

/* The public calls, one set per format (mpe_fp16_add ... mpe_fp16_fma, mpe_bf16_add ...
   mpe_bf16_fma): each runs its operation under the library's environment, the
   arguments entering and the result leaving through the fences of mpei_fenv.h. */
#define FENCED(ret, name, params, args, expr) \
  ret name params                             \
  {                                           \
    MPEI_FENV_GUARD();                        \
    MPEI_FENV_IN args;                        \
    MPEI_FENV_RETURN(expr);                   \
  }
#define ARITH16(pfx, kind)                                                                                  \
  FENCED(uint16_t, mpe_##pfx##_add, (uint16_t a, uint16_t b, mpe_round r), (a, b), add16(a, b, kind, r))   \
  FENCED(uint16_t, mpe_##pfx##_sub, (uint16_t a, uint16_t b, mpe_round r), (a, b),                         \
         add16(a, b ^ 0x8000u, kind, r))                                                                    \
  FENCED(uint16_t, mpe_##pfx##_mul, (uint16_t a, uint16_t b, mpe_round r), (a, b), mul16(a, b, kind, r))   \
  FENCED(uint16_t, mpe_##pfx##_div, (uint16_t a, uint16_t b, mpe_round r), (a, b), div16(a, b, kind, r))   \
  FENCED(uint16_t, mpe_##pfx##_sqrt, (uint16_t a, mpe_round r), (a), sqrt16(a, kind, r))                   \
  FENCED(uint16_t, mpe_##pfx##_fma, (uint16_t a, uint16_t b, uint16_t c, mpe_round r), (a, b, c),          \
         fma16(a, b, c, kind, r))

ARITH16(fp16, K_FP16)
ARITH16(bf16, K_BF16)
