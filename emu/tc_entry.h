/* The entry points of the tensor-core kernels, written once: included at the
   end of tc_avx2.c and tc_avx512.c, after the kernel headers, with TC_ISA the
   instruction set's suffix (avx2, avx512); each names mpei_tc_<kernel>_<TC_ISA>
   (declared in tc_impl.h and tc_fp4.h, listed in isa.c's table). */
#define TC_ENTRY_(k, isa) mpei_tc_##k##_##isa
#define TC_ENTRY2_(k, isa) TC_ENTRY_(k, isa)
#define TC_ENTRY(k) TC_ENTRY2_(k, TC_ISA)

void TC_ENTRY(blk)(const float *av, const int32_t *ae, const float *bv, const int32_t *be, float *c,
                   long ldc, const mpei_tc_kp *kp)
{
  blk_kernel(av, ae, bv, be, c, ldc, kp);
}

void TC_ENTRY(blkw)(const float *av, const int32_t *ae, const float *bv, const int32_t *be, float *c,
                    long ldc, const mpei_tc_kp *kp)
{
  blk_kernel_wide(av, ae, bv, be, c, ldc, kp);
}

void TC_ENTRY(fma)(const float *av, const float *bv, float *c, long ldc, int K)
{
  fma_kernel(av, bv, c, ldc, K);
}

void TC_ENTRY(epilogue)(float *c, const float *v, int n, float alpha, float beta, int use_ab)
{
  epilogue_row_body(c, v, n, alpha, beta, use_ab);
}

void TC_ENTRY(epilogue16)(uint16_t *c, const float *v, int n, float alpha, float beta, int use_ab)
{
  epilogue_row16_body(c, v, n, alpha, beta, use_ab);
}

void TC_ENTRY(blk_sp)(const float *av, const int32_t *ae, const int32_t *ax, const float *bv,
                      const int32_t *be, long bpitch, float *c, long ldc, const mpei_tc_kp *kp)
{
  blk_sp_kernel(av, ae, ax, bv, be, bpitch, c, ldc, kp);
}

void TC_ENTRY(blkw_sp)(const float *av, const int32_t *ae, const int32_t *ax, const float *bv,
                       const int32_t *be, long bpitch, float *c, long ldc, const mpei_tc_kp *kp)
{
  blk_sp_kernel_wide(av, ae, ax, bv, be, bpitch, c, ldc, kp);
}

void TC_ENTRY(fma_sp)(const float *av, const int32_t *ax, const float *bv, float *c, long ldc, int K)
{
  fma_sp_kernel(av, ax, bv, c, ldc, K);
}

void TC_ENTRY(dec16)(const uint16_t *src, int bf16, float *dst, int n)
{
  pack_dec16(src, bf16, dst, n);
}

int TC_ENTRY(pack_exp)(const float *v, int32_t *e, size_t n, int pin, int lo, int hi)
{
  return pack_exp(v, e, n, pin, lo, hi);
}

void TC_ENTRY(fp4)(const float *av, const int32_t *ai, const float *bv, const int32_t *bi, float *c, long ldc,
                   float *ws, const mpei_tc_fp4_kp *kp)
{
  fp4_kernel(av, ai, bv, bi, c, ldc, ws, kp);
}
