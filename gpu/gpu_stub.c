/* The GPU path of a library built without CUDA: every mpe_gpu_* that can fail
   answers MPE_EUNSUP and writes nothing, whatever its arguments. */
#include "config.h"
#include "mpei.h"
#include "mpemu/gpu.h"

int mpe_gpu_device_count(int *count) { (void)count; return MPE_EUNSUP; }
int mpe_gpu_info_get(int device, mpe_gpu_info *info) { (void)device; (void)info; return MPE_EUNSUP; }
int mpe_gpu_device_set(int device) { (void)device; return MPE_EUNSUP; }
int mpe_gpu_model(const mpe_tc_model **model, mpe_type in) { (void)model; (void)in; return MPE_EUNSUP; }

int mpe_gpu_round_f32(float *y, const float *x, size_t n, const mpe_format *f, const mpe_round_opts *o)
{
  (void)y; (void)x; (void)n; (void)f; (void)o;
  return MPE_EUNSUP;
}

int mpe_gpu_mma(const mpe_tc_model *model, int m, int n, int k,
                const void *A, mpe_type atype, int lda, const void *B, mpe_type btype, int ldb,
                const void *C, int ldc, void *D, mpe_type dtype, int ldd)
{
  (void)model; (void)m; (void)n; (void)k; (void)A; (void)atype; (void)lda; (void)B; (void)btype;
  (void)ldb; (void)C; (void)ldc; (void)D; (void)dtype; (void)ldd;
  return MPE_EUNSUP;
}

int mpe_gpu_gemm(mpe_gpu_path path, const mpe_tc_model *model, mpe_layout layout, mpe_trans ta,
                 mpe_trans tb, int m, int n, int k, float alpha,
                 const void *A, mpe_type atype, int lda, const void *B, mpe_type btype, int ldb,
                 float beta, void *C, mpe_type ctype, int ldc)
{
  (void)path; (void)model; (void)layout; (void)ta; (void)tb; (void)m; (void)n; (void)k; (void)alpha;
  (void)A; (void)atype; (void)lda; (void)B; (void)btype; (void)ldb; (void)beta; (void)C;
  (void)ctype; (void)ldc;
  return MPE_EUNSUP;
}
