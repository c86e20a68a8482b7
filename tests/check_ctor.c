/* The constructor convention (<mpemu/core.h>, mpemu(3)): every function that
   makes an object returns MPE_OK or an error code and hands the object back
   through its first argument; a bad argument is MPE_EINVAL (a NULL first
   argument included), and after any failure the caller's pointer is NULL.
   Each pointer starts at a non-NULL junk address, so a constructor that
   leaves it alone on failure fails here; each destructor takes NULL. */
#include <stdlib.h>
#include "testsupport.h"

static char junk;
#define JUNK(T) ((T *)(void *)&junk)

/* rc must be MPE_EINVAL and *pp NULL */
#define ASSERT_EINVAL_NULL(call, p) do { \
    ck_assert_int_eq((call), MPE_EINVAL); \
    ck_assert_ptr_null(p); \
  } while (0)

START_TEST(test_range_scaler_delayed)
{
  const mpe_format *f = mpe_format_lookup("fp16");
  mpe_range *r = JUNK(mpe_range);
  ASSERT_EINVAL_NULL(mpe_range_create(&r, &f, 0, NULL), r);
  ck_assert_int_eq(mpe_range_create(NULL, &f, 1, NULL), MPE_EINVAL);
  ck_assert_int_eq(mpe_range_create(&r, &f, 1, NULL), MPE_OK);
  ck_assert_ptr_nonnull(r);
  mpe_range_free(r);
  mpe_range_target t = { MPE_TARGET_FX16, NULL, 0, 0 };   /* block 0 */
  r = JUNK(mpe_range);
  ASSERT_EINVAL_NULL(mpe_range_create_targets(&r, &t, 1, NULL), r);
  mpe_range_free(NULL);

  mpe_scaler_params p;
  ck_assert_int_eq(mpe_scaler_params_preset(&p, "pytorch"), MPE_OK);
  p.backoff_factor = 0;
  mpe_scaler *s = JUNK(mpe_scaler);
  ASSERT_EINVAL_NULL(mpe_scaler_create(&s, &p), s);
  ck_assert_int_eq(mpe_scaler_create(NULL, &p), MPE_EINVAL);
  mpe_scaler_free(NULL);

  mpe_delayed_params dp = { NULL, 16, -1, 0 };
  mpe_delayed *d = JUNK(mpe_delayed);
  ASSERT_EINVAL_NULL(mpe_delayed_create(&d, &dp), d);
  dp.margin = 0;
  ck_assert_int_eq(mpe_delayed_create(&d, &dp), MPE_OK);
  ck_assert_ptr_nonnull(d);
  mpe_delayed_free(d);
  mpe_delayed_free(NULL);
}
END_TEST

START_TEST(test_format_tc_csr)
{
  mpe_format *f = JUNK(mpe_format);
  ASSERT_EINVAL_NULL(mpe_format_custom(&f, 1, -14, 15), f);   /* precision below 2 */
  ck_assert_int_eq(mpe_format_custom(NULL, 11, -14, 15), MPE_EINVAL);
  ck_assert_int_eq(mpe_format_custom(&f, 11, -14, 15), MPE_OK);
  ck_assert_ptr_nonnull(f);
  mpe_format_free(f);
  mpe_format_free(NULL);

  mpe_tc_params p;
  ck_assert_int_eq(mpe_tc_model_params(mpe_tc_model_get("h100", MPE_FP16), &p), MPE_OK);
  p.block = 0;
  mpe_tc_model *m = JUNK(mpe_tc_model);
  ASSERT_EINVAL_NULL(mpe_tc_model_custom(&m, &p), m);
  m = JUNK(mpe_tc_model);
  ASSERT_EINVAL_NULL(mpe_tc_model_custom_sized(&m, &p, 1), m);   /* smaller than any layout */
  mpe_tc_model_free(NULL);

  mpe_csr *A = JUNK(mpe_csr);
  ASSERT_EINVAL_NULL(mpe_csr_alloc(&A, 0, 3, 4), A);
  A = JUNK(mpe_csr);
  ASSERT_EINVAL_NULL(mpe_csr_laplace(&A, 4, 3), A);   /* no 4-D Laplacian */
  ck_assert_int_eq(mpe_csr_laplace(&A, 1, 3), MPE_OK);
  ck_assert_ptr_nonnull(A);
  mpe_csr_free(A);
  mpe_csr_free(NULL);
}
END_TEST

START_TEST(test_update_train_io)
{
  const double w0[2] = { 1, 2 };
  const mpe_format *bf = mpe_format_lookup("bf16");
  mpe_update *u = JUNK(mpe_update);
  ASSERT_EINVAL_NULL(mpe_update_alloc(&u, (mpe_update_strategy)99, w0, 2, bf, NULL), u);
  u = JUNK(mpe_update);
  ASSERT_EINVAL_NULL(mpe_update_alloc(&u, MPE_UPDATE_LOW, w0, 2, NULL, NULL), u);
  ck_assert_int_eq(mpe_update_alloc(&u, MPE_UPDATE_LOW, w0, 2, bf, NULL), MPE_OK);
  ck_assert_ptr_nonnull(u);
  mpe_update_free(u);
  mpe_update_free(NULL);

  mpe_train_arch arch = { .nlayers = 1, .sizes = { 2, 1 }, .batch = 0 };   /* batch 0 */
  mpe_train_policy pol = { .level = MPE_TRAIN_O1, .low = MPE_FP16, .model = "a100" };
  mpe_train_optim opt = { .kind = MPE_TRAIN_SGD, .lr = 0.1f };
  mpe_train_net *net = JUNK(mpe_train_net);
  ASSERT_EINVAL_NULL(mpe_train_net_alloc(&net, &arch, &pol, &opt), net);
  arch.batch = 4;
  pol.init_scale = 1e300;   /* inf in the pytorch preset's binary32 scale */
  net = JUNK(mpe_train_net);
  ASSERT_EINVAL_NULL(mpe_train_net_alloc(&net, &arch, &pol, &opt), net);
  pol.init_scale = 0;
  ck_assert_int_eq(mpe_train_net_alloc(&net, &arch, &pol, &opt), MPE_OK);
  ck_assert_ptr_nonnull(net);
  mpe_train_net_free(net);
  mpe_train_net_free(NULL);

  mpe_io_opts o = { .ndim = -1 };
  mpe_io *io = JUNK(mpe_io);
  ASSERT_EINVAL_NULL(mpe_io_open(&io, "whatever.npy", &o, NULL, 0), io);
  ck_assert_int_eq(mpe_io_open(NULL, "whatever.npy", NULL, NULL, 0), MPE_EINVAL);
  io = JUNK(mpe_io);
  ASSERT_EINVAL_NULL(mpe_io_open(&io, NULL, NULL, NULL, 0), io);   /* no path */
  mpe_csr *A = JUNK(mpe_csr);
  ASSERT_EINVAL_NULL(mpe_mtx_read(&A, NULL), A);
  mpe_io_close(NULL);
}
END_TEST

int main(void)
{
  Suite *s = suite_create("ctor");
  TCase *tc = tcase_create("convention");
  tcase_add_test(tc, test_range_scaler_delayed);
  tcase_add_test(tc, test_format_tc_csr);
  tcase_add_test(tc, test_update_train_io);
  suite_add_tcase(s, tc);
  return ts_run(s);
}
