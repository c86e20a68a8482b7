/* Fast path placeholder replaced below. */
#include "config.h"
#include "tc_impl.h"
int mpei_tc_run_fast(const struct mpe_tc_model *m, int M, int N, int K, const mpei_tc_opnd *a,
                     const mpei_tc_opnd *b, const mpei_tc_opnd *c, int out16, float *acc);
int mpei_tc_run_fast(const struct mpe_tc_model *m, int M, int N, int K, const mpei_tc_opnd *a,
                     const mpei_tc_opnd *b, const mpei_tc_opnd *c, int out16, float *acc)
{
  (void)m; (void)M; (void)N; (void)K; (void)a; (void)b; (void)c; (void)out16; (void)acc;
  return MPE_EUNSUP;
}
