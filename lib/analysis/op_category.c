/* SPDX-License-Identifier: MIT */
/*
 * op_category.c - TraceLens's op categories, from the name of the cpu_op
 * that launched a kernel (not from the kernel's name, which is what the
 * kernel class in classify.c is for).  An op outside the tables falls
 * back on its first kernel's name the way TraceLens does.  Analysis owns
 * it, beside the kernel classes: ev-stats asks for it, no converter does.
 */
#include <string.h>

#include "ev/analysis.h"

struct cat_rule { const char *name; const char *category; };

/* Exact op names. */
static const struct cat_rule exact[] = {
	{ "aten::mm", "GEMM" }, { "aten::addmm", "GEMM" }, { "aten::_scaled_mm", "GEMM" },
	{ "aten::bmm", "GEMM" }, { "aten::baddbmm", "GEMM" }, { "aten::_addmm_activation", "GEMM" },
	{ "aten::convolution", "CONV_fwd" }, { "aten::_convolution", "CONV_fwd" },
	{ "aten::cudnn_convolution", "CONV_fwd" }, { "aten::miopen_convolution", "CONV_fwd" },
	{ "aten::cudnn_convolution_transpose", "CONV_fwd" }, { "aten::convolution_backward", "CONV_bwd" },
	{ "aten::cudnn_convolution_backward", "CONV_bwd" }, { "aten::miopen_convolution_backward", "CONV_bwd" },
	{ "aten::_scaled_dot_product_flash_attention", "SDPA_fwd" },
	{ "aten::_scaled_dot_product_efficient_attention", "SDPA_fwd" },
	{ "aten::_scaled_dot_product_cudnn_attention", "SDPA_fwd" },
	/* aten::_flash_attention_forward/backward are not TraceLens's SDPA: "other". */
	{ "aten::_efficient_attention_forward", "SDPA_fwd" },
	{ "flash_attn::_flash_attn_forward", "SDPA_fwd" }, { "flash_attn::_flash_attn_varlen_forward", "SDPA_fwd" },
	{ "aten::_scaled_dot_product_flash_attention_backward", "SDPA_bwd" },
	{ "aten::_scaled_dot_product_efficient_attention_backward", "SDPA_bwd" },
	{ "aten::_scaled_dot_product_cudnn_attention_backward", "SDPA_bwd" },
	{ "aten::_efficient_attention_backward", "SDPA_bwd" },
	{ "flash_attn::_flash_attn_backward", "SDPA_bwd" }, { "flash_attn::_flash_attn_varlen_backward", "SDPA_bwd" },
	{ "aten::native_layer_norm", "NORM_fwd" }, { "aten::native_batch_norm", "NORM_fwd" },
	{ "aten::cudnn_batch_norm", "NORM_fwd" }, { "aten::miopen_batch_norm", "NORM_fwd" },
	{ "aten::native_group_norm", "NORM_fwd" }, { "aten::_fused_rms_norm", "NORM_fwd" },
	{ "aten::_batch_norm_impl_index", "NORM_fwd" }, { "aten::rms_norm", "NORM_fwd" },
	{ "aten::native_layer_norm_backward", "NORM_bwd" }, { "aten::native_batch_norm_backward", "NORM_bwd" },
	{ "aten::cudnn_batch_norm_backward", "NORM_bwd" }, { "aten::miopen_batch_norm_backward", "NORM_bwd" },
	{ "aten::native_group_norm_backward", "NORM_bwd" }, { "aten::_fused_rms_norm_backward", "NORM_bwd" },
	{ "aten::sum", "reduce" }, { "aten::mean", "reduce" }, { "aten::amax", "reduce" }, { "aten::amin", "reduce" },
	{ "aten::max", "reduce" }, { "aten::min", "reduce" }, { "aten::argmax", "reduce" }, { "aten::argmin", "reduce" },
	{ "aten::var", "reduce" }, { "aten::std", "reduce" }, { "aten::norm", "reduce" }, { "aten::linalg_vector_norm", "reduce" },
	{ "aten::_softmax", "reduce" }, { "aten::_log_softmax", "reduce" }, { "aten::_softmax_backward_data", "reduce" },
	{ "aten::add", "elementwise" }, { "aten::add_", "elementwise" }, { "aten::mul", "elementwise" },
	{ "aten::mul_", "elementwise" }, { "aten::sub", "elementwise" }, { "aten::sub_", "elementwise" },
	{ "aten::div", "elementwise" }, { "aten::div_", "elementwise" }, { "aten::copy_", "elementwise" },
	{ "aten::fill_", "elementwise" }, { "aten::zero_", "elementwise" }, { "aten::relu", "elementwise" },
	{ "aten::relu_", "elementwise" }, { "aten::gelu", "elementwise" }, { "aten::silu", "elementwise" },
	{ "aten::sigmoid", "elementwise" }, { "aten::tanh", "elementwise" }, { "aten::exp", "elementwise" },
	{ "aten::where", "elementwise" }, { "aten::clamp", "elementwise" }, { "aten::pow", "elementwise" },
	{ "aten::threshold_backward", "elementwise" }, { "aten::gelu_backward", "elementwise" },
	{ "aten::silu_backward", "elementwise" }, { "aten::addcmul_", "elementwise" }, { "aten::addcdiv_", "elementwise" },
	{ "aten::neg", "elementwise" }, { "aten::rsqrt", "elementwise" }, { "aten::sqrt", "elementwise" },
	{ "aten::_foreach_add_", "multi_tensor_apply" }, { "aten::_foreach_mul_", "multi_tensor_apply" },
	{ "aten::_fused_adam_", "multi_tensor_apply" }, { "aten::_fused_adamw_", "multi_tensor_apply" },
	{ "Memcpy", "memcpy" }, { "Memset", "memcpy" },
	/* TraceLens's InferenceAttention (its inference perf models and their
	 * category-only ops): the paged and varlen attention of vLLM, SGLang
	 * and aiter, and the KV-cache writes and metadata around them. */
	{ "vllm::unified_attention_with_output", "InferenceAttention" },
	{ "vllm::gdn_attention_core", "InferenceAttention" },
	{ "aiter::mha_varlen_fwd", "InferenceAttention" }, { "aiter::fmha_v3_varlen_fwd", "InferenceAttention" },
	{ "aiter::mha_batch_prefill", "InferenceAttention" }, { "aiter::pa_decode_gluon", "InferenceAttention" },
	{ "aiter::pa_sparse_prefill_opus_fwd", "InferenceAttention" },
	{ "aiter::linear_attention_with_output_base", "InferenceAttention" },
	{ "aiter::get_mla_metadata_v1", "InferenceAttention" }, { "aiter::indexer_score_topk", "InferenceAttention" },
	{ "sglang_profiler::attention_paged_attention_ragged", "InferenceAttention" },
	{ "sglang_profiler::tilelang_kernel_tilelang_sparse_fwd", "InferenceAttention" },
	{ "sglang::store_cache", "InferenceAttention" },
	{ "_C_cache_ops::reshape_and_cache_flash", "InferenceAttention" },
	{ "_C_cache_ops::concat_and_cache_mla", "InferenceAttention" },
	{ "pseudo_mla_decode_fwd", "InferenceAttention" }, { "pseudo_mla_prefill_fwd", "InferenceAttention" },
};

/* Prefixes. */
static const struct cat_rule prefix[] = {
	{ "triton", "triton" }, { "record_param_comms", "record_param_comms" }, { "nccl:", "NCCL" },
	{ "c10d::", "NCCL" }, { "aten::_foreach_", "multi_tensor_apply" }, { "Memcpy ", "memcpy" },
	{ "Memset ", "memcpy" },
};

const char *ev_op_category(const char *op, const char *kernel)
{
	if (op && *op) {
		for (size_t i = 0; i < sizeof exact / sizeof exact[0]; i++)
			if (strcmp(op, exact[i].name) == 0)
				return exact[i].category;
		for (size_t i = 0; i < sizeof prefix / sizeof prefix[0]; i++)
			if (strncmp(op, prefix[i].name, strlen(prefix[i].name)) == 0)
				return prefix[i].category;
	}
	/* TraceLens's fallback: the first kernel's name. */
	if (kernel && strncmp(kernel, "void at::native", 15) == 0) {
		if (strstr(kernel, "elementwise"))
			return "elementwise";
		if (strstr(kernel, "reduce"))
			return "reduce";
		if (strstr(kernel, "multi_tensor_apply"))
			return "multi_tensor_apply";
	}
	return "other";
}
