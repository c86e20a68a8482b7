/* Core: error strings, sticky flags, version, names, format descriptors. */
#include <math.h>
#include <stdlib.h>
#include "testsupport.h"

START_TEST(test_strerror)
{
  for (int c = 0; c < MPE_NERRORS; c++) {
    ck_assert_ptr_nonnull(mpe_strerror(c));
    ck_assert_str_ne(mpe_strerror(c), "unknown error");
  }
  ck_assert_str_eq(mpe_strerror(-1), "unknown error");
  ck_assert_str_eq(mpe_strerror(MPE_NERRORS), "unknown error");
  ck_assert_str_eq(mpe_strerror(MPE_OK), "success");
}
END_TEST

START_TEST(test_flags)
{
  mpe_flags_clear(~0u);
  ck_assert_uint_eq(mpe_flags_get(), 0);
  mpe_flags_raise(MPE_FLAG_INEXACT | MPE_FLAG_OVERFLOW);
  ck_assert_uint_eq(mpe_flags_get(), MPE_FLAG_INEXACT | MPE_FLAG_OVERFLOW);
  ck_assert_uint_eq(mpe_flags_test_clear(MPE_FLAG_OVERFLOW), MPE_FLAG_OVERFLOW);
  ck_assert_uint_eq(mpe_flags_get(), MPE_FLAG_INEXACT);
  mpe_flags_clear(~0u);
  /* a conversion raises them */
  (void)mpe_fp32_to_fp16(1e6f, MPE_RNE);
  ck_assert_uint_eq(mpe_flags_get(), MPE_FLAG_OVERFLOW | MPE_FLAG_INEXACT);
  mpe_flags_clear(~0u);
  (void)mpe_fp32_to_fp16(0x1p-30f, MPE_RNE);
  ck_assert_uint_eq(mpe_flags_get(), MPE_FLAG_UNDERFLOW | MPE_FLAG_INEXACT);
  mpe_flags_clear(~0u);
  (void)mpe_fp32_to_fp16(1.0f, MPE_RNE);
  ck_assert_uint_eq(mpe_flags_get(), 0);
  (void)mpe_fp32_to_e4m3(INFINITY, MPE_RNE, 1);
  ck_assert_uint_eq(mpe_flags_get(), MPE_FLAG_SATURATED);
  mpe_flags_clear(~0u);
  (void)mpe_fp32_to_fp16(ts_u2f(0x7f800001u), MPE_RNE);  /* signalling NaN */
  ck_assert_uint_eq(mpe_flags_get(), MPE_FLAG_INVALID);
  mpe_flags_clear(~0u);
}
END_TEST

START_TEST(test_version_names)
{
  ck_assert_str_eq(mpe_version_string(), MPE_VERSION_STRING);
  for (int r = 0; r < MPE_NROUND; r++)
    ck_assert_int_eq(mpe_round_lookup(mpe_round_name((mpe_round)r)), r);
  ck_assert_int_eq(mpe_round_lookup("nope"), -1);
  ck_assert_int_eq(mpe_round_lookup(NULL), -1);
  ck_assert_ptr_null(mpe_round_name((mpe_round)99));
  ck_assert_str_eq(mpe_type_name(MPE_E4M3), "e4m3");
  ck_assert_ptr_nonnull(mpe_cpu_features());
  /* mpe_simd_level reports the level in force without changing it */
  int top = mpe_simd_level_set(-1);
  ck_assert_int_eq(mpe_simd_level(), top);
  ck_assert_int_eq(mpe_simd_level_set(0), 0);
  ck_assert_int_eq(mpe_simd_level(), 0);
  ck_assert_int_eq(mpe_simd_level(), 0);
  ck_assert_int_eq(mpe_simd_level_set(99), top);   /* clamped to the CPU's */
  ck_assert_int_eq(mpe_simd_level(), top);
  mpe_simd_level_set(-1);
}
END_TEST

START_TEST(test_format_table)
{
  static const struct { const char *name; int p, emin, emax; double maxv, minsub; int inf; } want[] = {
    { "fp64", 53, -1022, 1023, 0x1.fffffffffffffp+1023, 0x1p-1074, 1 },
    { "fp32", 24, -126, 127, 0x1.fffffep+127, 0x1p-149, 1 },
    { "tf32", 11, -126, 127, 0x1.ffcp+127, 0x1p-136, 1 },
    { "fp16", 11, -14, 15, 65504, 0x1p-24, 1 },
    { "bf16", 8, -126, 127, 0x1.fep+127, 0x1p-133, 1 },
    { "e4m3", 4, -6, 8, 448, 0x1p-9, 0 },
    { "e5m2", 3, -14, 15, 57344, 0x1p-16, 1 },
  };
  for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) {
    const mpe_format *f = mpe_format_lookup(want[i].name);
    ck_assert_ptr_nonnull(f);
    ck_assert_ptr_eq(f, mpe_format_of((mpe_type)i));
    ck_assert_int_eq(mpe_format_precision(f), want[i].p);
    ck_assert_int_eq(mpe_format_emin(f), want[i].emin);
    ck_assert_int_eq(mpe_format_emax(f), want[i].emax);
    ck_assert(mpe_format_max(f) == want[i].maxv);
    ck_assert(mpe_format_min_subnormal(f) == want[i].minsub);
    ck_assert(mpe_format_min_normal(f) == ldexp(1.0, want[i].emin));
    ck_assert_int_eq(mpe_format_has_inf(f), want[i].inf);
    ck_assert_str_eq(mpe_format_name(f), want[i].name);
  }
  ck_assert_ptr_eq(mpe_format_lookup("Half"), mpe_format_of(MPE_FP16));
  ck_assert_ptr_eq(mpe_format_lookup("bfloat16"), mpe_format_of(MPE_BF16));
  ck_assert_ptr_eq(mpe_format_lookup("binary16"), mpe_format_of(MPE_FP16));
  ck_assert_ptr_null(mpe_format_lookup("fp12"));
  ck_assert_ptr_null(mpe_format_lookup(NULL));
  ck_assert_ptr_null(mpe_format_lookup(""));
}
END_TEST

START_TEST(test_format_custom)
{
  mpe_format *f = (mpe_format *)0x1;
  ck_assert_int_eq(mpe_format_custom(&f, 1, -14, 15), MPE_EINVAL);
  ck_assert_int_eq(mpe_format_custom(&f, 54, -14, 15), MPE_EINVAL);
  ck_assert_int_eq(mpe_format_custom(&f, 11, 15, 15), MPE_EINVAL);
  ck_assert_int_eq(mpe_format_custom(&f, 11, 16, 15), MPE_EINVAL);
  ck_assert_int_eq(mpe_format_custom(NULL, 11, -14, 15), MPE_EINVAL);
  ck_assert_ptr_null(f);   /* NULL after an error (the constructor convention, mpemu/core.h) */
  ck_assert_int_eq(mpe_format_custom(&f, 11, -14, 15), MPE_OK);
  ck_assert(mpe_format_max(f) == 65504);
  ck_assert(mpe_format_min_subnormal(f) == 0x1p-24);
  ck_assert_int_eq(mpe_format_precision(f), 11);
  mpe_format_free(f);
  ck_assert_int_eq(mpe_format_custom(&f, 53, -1022, 1023), MPE_OK);
  ck_assert(mpe_format_max(f) == 0x1.fffffffffffffp+1023);
  mpe_format_free(f);
  ck_assert_int_eq(mpe_format_custom(&f, 2, -3, 3), MPE_OK);
  ck_assert(mpe_format_max(f) == 12);   /* 1.1b * 2^3 */
  mpe_format_free(f);
  mpe_format_free(NULL);
  mpe_format_free((mpe_format *)mpe_format_of(MPE_FP16));   /* built-ins are ignored */
  ck_assert_ptr_nonnull(mpe_format_of(MPE_FP16));
}
END_TEST

int main(void)
{
  Suite *s = suite_create("core");
  TCase *tc = tcase_create("core");
  tcase_add_test(tc, test_strerror);
  tcase_add_test(tc, test_flags);
  tcase_add_test(tc, test_version_names);
  tcase_add_test(tc, test_format_table);
  tcase_add_test(tc, test_format_custom);
  suite_add_tcase(s, tc);
  return ts_run(s);
}
