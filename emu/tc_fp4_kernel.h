/* The block-scaled FP4 kernel (kind::mxf4, kind::mxf4nvf4), one source for
   every SIMD width: included by tc_avx2.c (VW = 8) and tc_avx512.c (VW = 16)
   after tc_kernel.h (its vector types, pow2d and round_pd), with MR4 (rows per
   call) and TC_TRUNC_PS (binary32 lanes truncated toward zero) defined. The
   panels and the tile: emu/tc_fp4.h. The model: emu/tc_scaled.c, whose
   portable engine is this kernel's oracle.

   Per instruction and output:
     sums   S_g, the sum of group g's G products, by an fma chain in binary32:
            FP4 values are multiples of 1/2 below 6, so with G <= 16 every
            partial sum is a multiple of 1/4 below 2^10, exact in any order;
     E_max  the largest of zexp, e_c (c != 0: max(floor(log2|c|), -126)) and
            e_g = e_sa + e_sb over the groups with a non-zero product (the AND
            of the two masks; a zero scale's mask is 0);
     cuts   the group's value S_g * m_sa * m_sb (a multiple of 1/4 below 2^17,
            exact) times 2^(e_g - 6 + F - E_max), and c's 24-bit significand
            times 2^(e_c - 23 + F - E_max), each truncated toward zero in
            binary32 (exact: a scaled value at or above 1 keeps all its bits,
            being at most 24 bits long; one below 1 truncates to 0 however it
            was rounded, so a scale below 2^-126 is raised to 2^-126);
     end    the cuts summed in binary64 (integers below 2^53: the caller's
            bound), times 2^(E_max - F) (exact), rounded once to binary32 in
            kp->mode (round_pd), a zero result +0. A NaN scale of the
            instruction or a NaN c gives the NaN 0x7fffffff, else an infinite
            c gives itself (FP4 elements are finite). */

static inline __attribute__((always_inline)) vf32 fp4_pow2f(vi32 k)   /* 2^k, k in [-126, 127] */
{
  return (vf32)((vu32)(k + 127) << 23);
}

static inline __attribute__((always_inline)) vi32 fp4_min0(vi32 x)   /* min(x, 0) */
{
  return x & (x >> 31);
}

static inline __attribute__((always_inline)) float fp4_i2f(int32_t x)
{
  float f;
  memcpy(&f, &x, sizeof f);
  return f;
}

/* The group sums of one group over the tile, ws[r*W + j] for G k-steps: the
   fma-chain kernel (tc_kernel.h) from zeros, whose tile this one is. */
_Static_assert((int)MR4 == (int)MRF && (int)MPEI_TC_FP4_NV == (int)NRF, "the FP4 tile is the fma kernel's");
static inline __attribute__((always_inline)) void fp4_sums(const float *a, const float *b, float *ws, int G)
{
  memset(ws, 0, sizeof(float) * MR4 * MPEI_TC_FP4_NV * VW);
  fma_kernel(a, b, ws, MPEI_TC_FP4_NV * VW, G);
}

/* The end of one instruction for one vector of outputs: cv the accumulators,
   ws their group sums (group g at ws + g*MR4*W), ai row r's fields of group 0,
   bi the vector's fields of group 0. */
static inline __attribute__((always_inline)) vf32 fp4_end(vf32 cv, const float *ws, const int32_t *ai,
                                                       const int32_t *bi, const mpei_tc_fp4_kp *kp)
{
  enum { W = MPEI_TC_FP4_NV * VW };
  const int F = kp->F, ngl = kp->ngl;
  const vi32 zexp = SPLAT(vi32, kp->zexp);
  const vu32 cb = (vu32)cv, ca = cb & 0x7fffffffu;
  const vi32 eb = (vi32)(ca >> 23);
  const vi32 ec = MPEI_MAX_EPI32(eb - 127, SPLAT(vi32, -126));
  const vi32 cnz = (vi32)(ca != 0u);
  vi32 emax = MPEI_MAX_EPI32(zexp, (cnz & ec) | (~cnz & zexp));
  vi32 nan = (vi32)(ca > 0x7f800000u);
  for (int g = 0; g < ngl; g++) {
    const int32_t *ag = ai + (size_t)g * 4 * MR4, *bg = bi + (size_t)g * 4 * W;
    const vi32 e = load_vi32(bg + MPEI_FP4_E * W) + ag[MPEI_FP4_E * MR4];
    const vi32 nz = (vi32)((load_vi32(bg + MPEI_FP4_NZ * W) & ag[MPEI_FP4_NZ * MR4]) != 0);
    emax = MPEI_MAX_EPI32(emax, (nz & e) | (~nz & zexp));
    nan |= load_vi32(bg + MPEI_FP4_NAN * W) | ag[MPEI_FP4_NAN * MR4];
  }
  /* c's significand with its sign, cut */
  const vi32 mc = (vi32)(ca & 0x7fffffu) | ((vi32)(eb != 0) & 0x800000);
  const vf32 mcf = (vf32)((vu32)__builtin_convertvector(mc, vf32) | (cb & 0x80000000u));
  const vi32 kc = MPEI_MAX_EPI32(fp4_min0(ec - emax) + (F - 23), SPLAT(vi32, -126));
  const vf32 tc = TC_TRUNC_PS(mcf * fp4_pow2f(kc));
  vf64 slo = __builtin_convertvector(MPEI_HALF_LO(tc), vf64), shi = __builtin_convertvector(MPEI_HALF_HI(tc), vf64);
  for (int g = 0; g < ngl; g++) {
    const int32_t *ag = ai + (size_t)g * 4 * MR4, *bg = bi + (size_t)g * 4 * W;
    const vi32 e = load_vi32(bg + MPEI_FP4_E * W) + ag[MPEI_FP4_E * MR4];
    const vf32 gm = load_vf32(ws + (size_t)g * MR4 * W) * ((vf32)load_vi32(bg + MPEI_FP4_SM * W) * fp4_i2f(ag[MPEI_FP4_SM * MR4]));
    const vi32 k = MPEI_MAX_EPI32(fp4_min0(e - emax) + (F - 6), SPLAT(vi32, -126));
    const vf32 t = TC_TRUNC_PS(gm * fp4_pow2f(k));
    slo += __builtin_convertvector(MPEI_HALF_LO(t), vf64);
    shi += __builtin_convertvector(MPEI_HALF_HI(t), vf64);
  }
  const vi64 elo = __builtin_convertvector(MPEI_HALF_LO(emax), vi64), ehi = __builtin_convertvector(MPEI_HALF_HI(emax), vi64);
  vf64 rlo = round_pd(slo * pow2d(elo - F), 24, -126, 127, kp->mode);
  vf64 rhi = round_pd(shi * pow2d(ehi - F), 24, -126, 127, kp->mode);
  rlo = (vf64)SEL(vi64, (vi64)(rlo == 0), SPLAT(vi64, 0), (vi64)rlo);   /* a zero result is +0 */
  rhi = (vf64)SEL(vi64, (vi64)(rhi == 0), SPLAT(vi64, 0), (vi64)rhi);
  const vf32 r = MPEI_JOIN(__builtin_convertvector(rlo, hf32), __builtin_convertvector(rhi, hf32));
  const vi32 cnf = (vi32)(ca >= 0x7f800000u);
  const vu32 out = SEL(vu32, cnf, cb, (vu32)r);
  return (vf32)SEL(vu32, nan, (vu32)SPLAT(vi32, 0x7fffffff), out);
}

static void fp4_kernel(const float *av, const int32_t *ai, const float *bv, const int32_t *bi, float *c, long ldc,
                       float *ws, const mpei_tc_fp4_kp *kp)
{
  enum { W = MPEI_TC_FP4_NV * VW };
  const int G = kp->G, ngl = kp->ngl;
  for (int blk = 0; blk < kp->nblk; blk++) {
    const size_t g0 = (size_t)blk * ngl;
    for (int g = 0; g < ngl; g++)
      fp4_sums(av + (g0 + g) * G * MR4, bv + (g0 + g) * G * W, ws + (size_t)g * MR4 * W, G);
    for (int r = 0; r < MR4; r++)
#pragma GCC unroll 4
      for (int h = 0; h < MPEI_TC_FP4_NV; h++) {
        float *cp = c + r * ldc + h * VW;
        const vf32 res = fp4_end(load_vf32(cp), ws + (size_t)r * W + h * VW, ai + g0 * 4 * MR4 + r,
                               bi + g0 * 4 * W + h * VW, kp);
        memcpy(cp, &res, sizeof res);
      }
  }
}
