# man/: mpemu(3) overview and a page per function family
dist_man_MANS += man/man3/mpemu.3 man/man3/mpe_round_f32.3 man/man3/mpe_fp32_to_fp16.3 \
	man/man3/mpe_format_lookup.3 man/man3/mpe_flags_get.3 man/man3/mpe_strerror.3
