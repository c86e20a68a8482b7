# man/: every manual page: mpemu(3) overview, mpanalyze(1), mpe-gpucheck(1), and a
# page per function family (aliases are .so pages)
dist_man_MANS += man/man3/mpemu.3 \
	man/man3/mpe_round_f32.3 man/man3/mpe_round_f64.3 man/man3/mpe_round_scalar.3 \
	man/man3/mpe_fp32_to_fp16.3 man/man3/mpe_fp64_to_fp16.3 man/man3/mpe_fp16_to_fp32.3 \
	man/man3/mpe_fp16_to_fp64.3 man/man3/mpe_fp32_to_bf16.3 man/man3/mpe_fp64_to_bf16.3 \
	man/man3/mpe_bf16_to_fp32.3 man/man3/mpe_fp32_to_tf32.3 man/man3/mpe_fp32_to_e4m3.3 \
	man/man3/mpe_fp32_to_e5m2.3 man/man3/mpe_e4m3_to_fp32.3 man/man3/mpe_e5m2_to_fp32.3 \
	man/man3/mpe_fp32_to_e4m3fnuz.3 man/man3/mpe_fp32_to_e5m2fnuz.3 man/man3/mpe_e4m3fnuz_to_fp32.3 \
	man/man3/mpe_e5m2fnuz_to_fp32.3 \
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

# tensor cores, mpe_mma / mpe_gemm, 2:4 sparsity
dist_man_MANS += man/man3/mpe_mma.3 man/man3/mpe_gemm.3 man/man3/mpe_tc_model_get.3 \
	man/man3/mpe_tc_model_params.3 man/man3/mpe_tc_model_name.3 man/man3/mpe_tc_model_name_at.3 man/man3/mpe_tc_model_custom.3 \
	man/man3/mpe_tc_model_free.3 man/man3/mpe_prune_2_4.3 man/man3/mpe_sparse_compress.3 \
	man/man3/mpe_sparse_decompress.3 man/man3/mpe_sparse_kept.3 man/man3/mpe_sparse_meta_words.3 \
	man/man3/mpe_gemm_sp.3 man/man3/mpe_mma_scaled.3 man/man3/mpe_gemm_scaled.3 \
	man/man3/mpe_mma_cd.3

# the hardware path of the CPU models
dist_man_MANS += man/man3/mpe_cpu_gemm.3 man/man3/mpe_cpu_mma.3

# integer tensor cores and quantisation
dist_man_MANS += man/man3/mpe_tc_int.3 man/man3/mpe_quant_params.3 man/man3/mpe_quant_encode.3 \
	man/man3/mpe_quant_decode.3 man/man3/mpe_quant_range.3

# scalar FP16/BF16 arithmetic, element-wise functions, 16-bit fixed point (.so aliases point at the family page)
dist_man_MANS += \
	man/man3/mpe_fp16_add.3 \
	man/man3/mpe_fp16_sub.3 \
	man/man3/mpe_fp16_mul.3 \
	man/man3/mpe_fp16_div.3 \
	man/man3/mpe_fp16_sqrt.3 \
	man/man3/mpe_fp16_fma.3 \
	man/man3/mpe_bf16_add.3 \
	man/man3/mpe_bf16_sub.3 \
	man/man3/mpe_bf16_mul.3 \
	man/man3/mpe_bf16_div.3 \
	man/man3/mpe_bf16_sqrt.3 \
	man/man3/mpe_bf16_fma.3 \
	man/man3/mpe_ew_exp.3 \
	man/man3/mpe_ew_add.3 \
	man/man3/mpe_ew_sub.3 \
	man/man3/mpe_ew_mul.3 \
	man/man3/mpe_ew_div.3 \
	man/man3/mpe_ew_fma.3 \
	man/man3/mpe_ew_scale.3 \
	man/man3/mpe_ew_sqrt.3 \
	man/man3/mpe_ew_recip.3 \
	man/man3/mpe_ew_log.3 \
	man/man3/mpe_ew_tanh.3 \
	man/man3/mpe_ew_sigmoid.3 \
	man/man3/mpe_ew_softmax.3 \
	man/man3/mpe_fx16_encode.3 \
	man/man3/mpe_fx16_decode.3 \
	man/man3/mpe_fp32_to_q16.3 \
	man/man3/mpe_q16_to_fp32.3

# block-scaled MX arrays
dist_man_MANS += man/man3/mpe_mx_quantize_f32.3 man/man3/mpe_mx_dequantize_f32.3

# the GPU path and mpe-gpucheck
dist_man_MANS += man/man3/mpe_gpu.3 man/man1/mpe-gpucheck.1 \
	man/man3/mpe_gpu_round_f32.3 man/man3/mpe_gpu_mma.3 man/man3/mpe_gpu_gemm.3 \
	man/man3/mpe_gpu_device_count.3 man/man3/mpe_gpu_info_get.3 man/man3/mpe_gpu_device_set.3 \
	man/man3/mpe_gpu_model.3 man/man3/mpe_gpu_path_name.3 man/man3/mpe_gpu_arch_model.3

# mpanalyze, readers, range analysis, loss scalers
dist_man_MANS += man/man1/mpanalyze.1 man/man3/mpe_delayed_alloc.3 man/man3/mpe_delayed_create.3 man/man3/mpe_delayed_update.3 man/man3/mpe_io_close.3 man/man3/mpe_io_info.3 man/man3/mpe_io_open.3 man/man3/mpe_io_read.3 man/man3/mpe_io_seek.3 man/man3/mpe_io_select.3 man/man3/mpe_io_skipped_info.3 man/man3/mpe_io_write_npy.3 man/man3/mpe_io_write_safetensors.3 man/man3/mpe_range_add_f32.3 man/man3/mpe_range_add_f32_pieces.3 man/man3/mpe_range_alloc.3 man/man3/mpe_range_alloc_targets.3 man/man3/mpe_range_create.3 man/man3/mpe_range_create_targets.3 man/man3/mpe_range_merge.3 man/man3/mpe_range_target_get.3 man/man3/mpe_range_at_scale.3 man/man3/mpe_range_free.3 man/man3/mpe_range_histogram.3 man/man3/mpe_range_stats_get.3 man/man3/mpe_scaler_alloc.3 man/man3/mpe_scaler_create.3 man/man3/mpe_scaler_free.3 man/man3/mpe_scaler_params_preset.3 man/man3/mpe_scaler_update.3

# refinement, CG, test matrices, sparse matrices
dist_man_MANS += man/man3/mpe_ir_solve.3 man/man3/mpe_ir_opts_init.3 man/man3/mpe_ir_solve_cusolver.3 man/man3/mpe_gpu_ir_solve.3 \
	man/man3/mpe_ir_lu.3 man/man3/mpe_ir_lu_solve.3 man/man3/mpe_ir_default_block.3 \
	man/man3/mpe_cg_solve.3 man/man3/mpe_cg_opts_init.3 man/man3/mpe_cg_apply.3 \
	man/man3/mpe_cg_op_order.3 man/man3/mpe_mat_randsvd.3 man/man3/mpe_mat_hilbert.3 \
	man/man3/mpe_mat_laplace.3 man/man3/mpe_mat_dominant.3 man/man3/mpe_csr_alloc.3 \
	man/man3/mpe_csr_free.3 man/man3/mpe_csr_laplace.3 man/man3/mpe_csr_to_dense.3 \
	man/man3/mpe_mtx_read.3 \
	man/man3/mpe_mtx_size.3

# update studies and the training engine
dist_man_MANS += man/man3/mpe_update_study.3 man/man3/mpe_update_alloc.3 man/man3/mpe_update_free.3 \
	man/man3/mpe_update_step.3 man/man3/mpe_update_weights.3 man/man3/mpe_update_reference.3 \
	man/man3/mpe_update_stats_get.3 man/man3/mpe_update_is_lost.3 \
	man/man3/mpe_update_strategy_name.3 man/man3/mpe_update_strategy_lookup.3
dist_man_MANS += man/man3/mpe_train.3

# memory arithmetic, all-reduce, reduction order
dist_man_MANS += man/man3/mpe_memory_estimate.3 man/man3/mpe_memory_activations.3 \
	man/man3/mpe_allreduce.3 man/man3/mpe_allreduce_f32.3 man/man3/mpe_allreduce_error.3 \
	man/man3/mpe_allreduce_chunk.3 man/man3/mpe_order_study.3 man/man3/mpe_range_pack.3 \
	man/man3/mpe_range_merge_packed.3

# the range report over files (mpe_report_run and its aliases)
dist_man_MANS += man/man3/mpe_report_run.3 man/man3/mpe_report_write.3 man/man3/mpe_report_string.3 man/man3/mpe_report_free.3 man/man3/mpe_report_summary_get.3 man/man3/mpe_report_range_json.3 man/man3/mpe_report_rules_mark.3 man/man3/mpe_report_rules_check.3 man/man3/mpe_report_escape.3 man/man3/mpe_range_feed.3
dist_man_MANS += man/man3/mpe_allreduce_algo_lookup.3 \
	man/man3/mpe_allreduce_algo_name.3 \
	man/man3/mpe_delayed_free.3 \
	man/man3/mpe_delayed_scale.3 \
	man/man3/mpe_io_bytes_done.3 \
	man/man3/mpe_io_bytes_total.3 \
	man/man3/mpe_io_count.3 \
	man/man3/mpe_io_dtype_lookup.3 \
	man/man3/mpe_io_dtype_size.3 \
	man/man3/mpe_io_find.3 \
	man/man3/mpe_io_kind_name.3 \
	man/man3/mpe_io_kind_of.3 \
	man/man3/mpe_io_message.3 \
	man/man3/mpe_io_skipped.3 \
	man/man3/mpe_io_write_npz.3 \
	man/man3/mpe_memory_optimizer_lookup.3 \
	man/man3/mpe_memory_optimizer_name.3 \
	man/man3/mpe_memory_precision_lookup.3 \
	man/man3/mpe_memory_precision_name.3 \
	man/man3/mpe_mx_block.3 \
	man/man3/mpe_mx_element_type.3 \
	man/man3/mpe_mx_lookup.3 \
	man/man3/mpe_mx_name.3 \
	man/man3/mpe_mx_scale_type.3 \
	man/man3/mpe_range_add_f64.3 \
	man/man3/mpe_range_add_f64_pieces.3 \
	man/man3/mpe_range_nformats.3 \
	man/man3/mpe_range_summary_get.3 \
	man/man3/mpe_scaler_scale.3 \
	man/man3/mpe_scaler_skipped.3 \
	man/man3/mpe_scaler_steps.3 \
	man/man3/mpe_tc_model_custom_sized.3 \
	man/man3/mpe_tc_model_params_sized.3 \
	man/man3/mpe_threads_fit.3 \
	man/man3/mpe_train_backward.3 \
	man/man3/mpe_train_forward.3 \
	man/man3/mpe_train_grad.3 \
	man/man3/mpe_train_level_lookup.3 \
	man/man3/mpe_train_level_name.3 \
	man/man3/mpe_train_loss_scale.3 \
	man/man3/mpe_train_net_alloc.3 \
	man/man3/mpe_train_net_free.3 \
	man/man3/mpe_train_randn.3 \
	man/man3/mpe_train_set_weights.3 \
	man/man3/mpe_train_spirals.3 \
	man/man3/mpe_train_step.3 \
	man/man3/mpe_train_update.3 \
	man/man3/mpe_train_weights.3
