/* The range-analysis kernels, written once with GCC vector extensions and
   included by range_avx2.c (VW = 8) and range_avx512.c (VW = 16), each compiled
   with its own -m flags; RK_LOW/RK_HIGH take the halves of a vector. The
   portable oracle is in range.c; the results are the same bits:
   - counts: |x| bit patterns against the target's thresholds;
   - sums of (round(x)-x)^2 and x^2: element i in lane i % 16, folded by mpei_rfold
     (the squares are exact: round(x)-x has at most 24 significant bits);
   - the largest |round(x)-x|/|x|: per lane the best pair (ad, ax), compared by
     cross products ad*bx > bd*ax (exact: 24-bit factors), one division per lane
     at the end; division rounds monotonically, so this is the max of the quotients.
   Needs VW, RK_LOW, RK_HIGH and RK_NAME(stem) (the entry points' names). */
#include <stdint.h>
#include <string.h>

/* VW binary32 lanes per vector (8: AVX2, 16: AVX-512), VW/2 binary64 lanes;
   an iteration takes 16 values as NV = 16/VW float vectors, 2*NV double halves */
#define RK_NV (16 / VW)
typedef float rk_vf __attribute__((vector_size(VW * 4)));
typedef uint32_t rk_vu __attribute__((vector_size(VW * 4)));
typedef int32_t rk_vi __attribute__((vector_size(VW * 4)));
typedef float rk_hf __attribute__((vector_size(VW * 2)));
typedef int32_t rk_hi __attribute__((vector_size(VW * 2)));
typedef double rk_vd __attribute__((vector_size(VW * 4)));
typedef int64_t rk_vl __attribute__((vector_size(VW * 4)));
typedef uint16_t rk_vs __attribute__((vector_size(VW * 2)));

#define RK_SPLATU(v) ((rk_vu){} + (uint32_t)(v))
#define RK_SPLATD(v) ((rk_vd){} + (double)(v))
#define RK_SELU(m, a, b) ((((rk_vu)(m)) & (a)) | (~((rk_vu)(m)) & (b)))
#define RK_SELD(m, a, b) ((rk_vd)((((rk_vl)(m)) & (rk_vl)(a)) | (~((rk_vl)(m)) & (rk_vl)(b))))

/* 16 values from p into NV vectors; the tail padded with zeros (which count nowhere) */
static inline __attribute__((always_inline)) void rk_load(rk_vf *v, const float *p, size_t left)
{
  if (left >= 16) {
    memcpy(v, p, 64);
  } else {
    float t[16] = { 0 };
    memcpy(t, p, left * sizeof *p);
    memcpy(v, t, 64);
  }
}

/* q: 0 for a float target (y given), 1 for Q16 (rounded here), 2 for a float
   target rounded here (on magnitudes: |y|-|x| has the size of y-x) */
static inline __attribute__((always_inline)) void rk_core(const float *x, const float *y, size_t n,
                                                         const mpei_rthr32 *t, mpei_rblk *o, const int q)
{
  const rk_vu U = RK_SPLATU(t->u), S = RK_SPLATU(t->s), OP = RK_SPLATU(t->opos), ON = RK_SPLATU(t->oneg);
  const rk_vd TF = RK_SPLATD(t->two_f), TMF = RK_SPLATD(t->two_mf), MAGIC = RK_SPLATD(0x1.8p52);
  const rk_vd ONE = RK_SPLATD(1.0);
  const uint32_t dsh = t->dsh, hm1 = dsh ? (1u << dsh >> 1) - 1 : 0, lsb = dsh ? 1 : 0;
  const rk_vu MNB = RK_SPLATU(t->mnb), LOW = RK_SPLATU((1u << dsh) - 1);
  const rk_vf C = (rk_vf){} + t->c;
  rk_vu cu = { 0 }, cs = { 0 }, co = { 0 };
  rk_vd e2[2 * RK_NV], x2[2 * RK_NV], bd[2 * RK_NV], bx[2 * RK_NV];
#pragma GCC unroll 4
  for (int h = 0; h < 2 * RK_NV; h++) {
    e2[h] = x2[h] = bd[h] = (rk_vd){ 0 };
    bx[h] = ONE;
  }
  for (size_t i = 0; i < n; i += 16) {
    rk_vf xv[RK_NV], yv[RK_NV];
    rk_load(xv, x + i, n - i);
    if (q == 0)
      rk_load(yv, y + i, n - i);
#pragma GCC unroll 2
    for (int h = 0; h < RK_NV; h++) {
      rk_vu u = (rk_vu)xv[h], a = u & 0x7fffffffu;
      rk_vi neg = (rk_vi)u < 0;
      rk_vi fin = (rk_vi)((a - 1u) < 0x7f7fffffu);                /* non-zero and finite */
      rk_vi ov = fin & (rk_vi)(a >= RK_SELU(neg, ON, OP));
      rk_vi ok = fin & ~ov;
      co -= (rk_vu)ov;
      cu -= (rk_vu)(ok & (rk_vi)(a <= U));
      cs -= (rk_vu)(ok & (rk_vi)(a > U) & (rk_vi)(a <= S));
      if (q == 2) {
        rk_vf ax = (rk_vf)a;
        rk_vu yn = (a + hm1 + ((a >> dsh) & lsb)) & ~LOW;
        rk_vu ys = (rk_vu)((ax + C) - C);
        xv[h] = ax;
        yv[h] = (rk_vf)RK_SELU(a >= MNB, yn, ys);
      }
#pragma GCC unroll 2
      for (int half = 0; half < 2; half++) {
        int j = 2 * h + half;
        rk_hf xh = half ? RK_HIGH(xv[h]) : RK_LOW(xv[h]);
        rk_hi okh = half ? RK_HIGH(ok) : RK_LOW(ok);
        rk_vd xd = __builtin_convertvector(xh, rk_vd), yd;
        if (q == 1) {
          rk_vd v = xd * TF;
          yd = ((v + MAGIC) - MAGIC) * TMF;   /* round to nearest even: |v| < 2^51 on every lane that counts */
        } else {
          rk_hf yh = half ? RK_HIGH(yv[h]) : RK_LOW(yv[h]);
          yd = __builtin_convertvector(yh, rk_vd);
        }
        rk_vl okl = __builtin_convertvector(okh, rk_vl);
        rk_vd d = (rk_vd)((rk_vl)(yd - xd) & okl), xs = (rk_vd)((rk_vl)xd & okl);
        e2[j] += d * d;
        x2[j] += xs * xs;
        rk_vd ad = (rk_vd)((rk_vl)d & 0x7fffffffffffffffll);
        rk_vd ax = RK_SELD(okl, (rk_vd)((rk_vl)xd & 0x7fffffffffffffffll), ONE);
        rk_vl better = ad * bx[j] > bd[j] * ax;
        bd[j] = RK_SELD(better, ad, bd[j]);
        bx[j] = RK_SELD(better, ax, bx[j]);
      }
    }
  }
  double le[16], lx[16], m = o->maxrel;
  uint64_t su = 0, ss = 0, so = 0;
  for (int l = 0; l < VW; l++) {
    su += cu[l];
    ss += cs[l];
    so += co[l];
  }
  for (int j = 0; j < 2 * RK_NV; j++)
    for (int l = 0; l < VW / 2; l++) {   /* lane j*VW/2 + l holds the elements i = that mod 16 */
      le[j * VW / 2 + l] = e2[j][l];
      lx[j * VW / 2 + l] = x2[j][l];
      if (bd[j][l] > 0) {
        double rel = bd[j][l] / bx[j][l];
        if (rel > m)
          m = rel;
      }
    }
  o->underflow = su;
  o->subnormal = ss;
  o->overflow = so;
  o->e2 = mpei_rfold(le);
  o->x2 = mpei_rfold(lx);
  o->maxrel = m;
}

void RK_NAME(float)(const float *x, const float *y, size_t n, const mpei_rthr32 *t, mpei_rblk *o)
{
  rk_core(x, y, n, t, o, 0);
}

void RK_NAME(q)(const float *x, size_t n, const mpei_rthr32 *t, mpei_rblk *o)
{
  rk_core(x, NULL, n, t, o, 1);
}

void RK_NAME(fused)(const float *x, size_t n, const mpei_rthr32 *t, mpei_rblk *o)
{
  rk_core(x, NULL, n, t, o, 2);
}

void RK_NAME(keys)(const float *x, size_t n, const mpei_rkeys *k, uint16_t *key, uint32_t *mn, uint32_t *mxp,
                   uint32_t *mxn)
{
  rk_vu vmn = RK_SPLATU(0xffffffffu), vp = { 0 }, vn = { 0 };
  const rk_vu NC = RK_SPLATU((uint32_t)k->ncat), TOP = RK_SPLATU((uint32_t)k->ncat - 1);
  for (size_t i = 0; i < n; i += 16) {
    rk_vf xv[RK_NV];
    rk_load(xv, x + i, n - i);
    uint16_t kk[16];
#pragma GCC unroll 2
    for (int h = 0; h < RK_NV; h++) {
      rk_vu u = (rk_vu)xv[h], a = u & 0x7fffffffu, fr = u & 0x7fffffu;
      rk_vi ok = (rk_vi)((a - 1u) < 0x7f7fffffu), neg = (rk_vi)u < 0;
      rk_vu lo = RK_SELU(ok, a, RK_SPLATU(0xffffffffu));
      rk_vu hp = RK_SELU(ok & ~neg, a, RK_SPLATU(0)), hn = RK_SELU(ok & neg, a, RK_SPLATU(0));
      vmn = RK_SELU(lo < vmn, lo, vmn);
      vp = RK_SELU(hp > vp, hp, vp);
      vn = RK_SELU(hn > vn, hn, vn);
      rk_vu c = { 0 };
      for (int j = 0; j < k->nthr; j++)
        c -= (rk_vu)(fr >= RK_SPLATU(k->fthr[j]));
      c = RK_SELU(fr == 0, TOP, c);
      rk_vs kv = __builtin_convertvector((a >> 23) * NC + c, rk_vs);
      memcpy(kk + h * VW, &kv, sizeof kv);
    }
    memcpy(key + i, kk, (n - i < 16 ? n - i : 16) * sizeof *key);
  }
  uint32_t a = *mn, b = *mxp, c = *mxn;
  for (int l = 0; l < VW; l++) {
    if (vmn[l] < a) a = vmn[l];
    if (vp[l] > b) b = vp[l];
    if (vn[l] > c) c = vn[l];
  }
  *mn = a;
  *mxp = b;
  *mxn = c;
}
