# man/: mpemu(3) overview and a page per function family (aliases are .so pages)
dist_man_MANS += man/man3/mpemu.3 \
	man/man3/mpe_round_f32.3 man/man3/mpe_round_f64.3 man/man3/mpe_round_scalar.3 \
	man/man3/mpe_fp32_to_fp16.3 man/man3/mpe_fp64_to_fp16.3 man/man3/mpe_fp16_to_fp32.3 \
	man/man3/mpe_fp16_to_fp64.3 man/man3/mpe_fp32_to_bf16.3 man/man3/mpe_fp64_to_bf16.3 \
	man/man3/mpe_bf16_to_fp32.3 man/man3/mpe_fp32_to_tf32.3 man/man3/mpe_fp32_to_e4m3.3 \
	man/man3/mpe_fp32_to_e5m2.3 man/man3/mpe_e4m3_to_fp32.3 man/man3/mpe_e5m2_to_fp32.3 \
	man/man3/mpe_seed.3 \
	man/man3/mpe_format_lookup.3 man/man3/mpe_format_of.3 man/man3/mpe_format_custom.3 \
	man/man3/mpe_format_free.3 man/man3/mpe_format_name.3 man/man3/mpe_format_precision.3 \
	man/man3/mpe_format_emin.3 man/man3/mpe_format_emax.3 man/man3/mpe_format_max.3 \
	man/man3/mpe_format_min_normal.3 man/man3/mpe_format_min_subnormal.3 \
	man/man3/mpe_format_has_inf.3 man/man3/mpe_format_unit_roundoff.3 \
	man/man3/mpe_format_has_nan.3 man/man3/mpe_format_is_signed.3 \
	man/man3/mpe_flags_get.3 man/man3/mpe_flags_clear.3 man/man3/mpe_flags_raise.3 \
	man/man3/mpe_flags_test_clear.3 man/man3/mpe_simd_level_set.3 man/man3/mpe_simd_level.3 man/man3/mpe_cpu_features.3 \
	man/man3/mpe_strerror.3 man/man3/mpe_version_string.3 man/man3/mpe_round_name.3 \
	man/man3/mpe_round_lookup.3 man/man3/mpe_type_name.3

TESTS += tests/check_man.sh
EXTRA_DIST += tests/check_man.sh
