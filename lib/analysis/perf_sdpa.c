/* SPDX-License-Identifier: MIT */
/*
 * perf_sdpa.c - TraceLens's SDPA_fwd sheet: aten's
 * _scaled_dot_product_flash_attention, _efficient_attention and
 * _cudnn_attention, their parameters B, N_Q, H_Q, N_KV, H_KV, d_h_qk, d_h_v
 * (query, key and value as [B, H, N, d]), dropout, causal, flash_impl and
 * dtype_A_B; FLOPs 2·B·H_Q·N_Q·N_KV·(d_h_qk + d_h_v), halved when causal;
 * bytes Q, K, V read and O written, two bytes an element whatever the
 * type (TraceLens's SDPA.bytes default).  TraceLens's rules, as its SDPA
 * PerfModel classes (perf_model.py) state them.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "analysis/perf.h"
#include "analysis/pyrepr.h"
#include "ev/stream.h"

static const char *const sdpa_ops[] = { "aten::_scaled_dot_product_flash_attention",
	                                "aten::_scaled_dot_product_efficient_attention",
	                                "aten::_scaled_dot_product_cudnn_attention", NULL };

/* Ops TraceLens puts on its SDPA_fwd sheet through models evkit lacks. */
static const char *const sdpa_unmodelled[] = {
	"FlashAttnFunc", "flash_attn::_flash_attn_forward", "flash_attn::_flash_attn_backward",
	"flash_attn::_flash_attn_varlen_forward", "aiter::_flash_attn_forward", "aiter::_flash_attn_backward",
	"aiter::wrapper_fmha_v3_fwd", "aiter::wrapper_fmha_v3_bwd", "aiter::mha_fwd", "aiter::fmha_v3_fwd",
	"aiter::mha_bwd", "flash_attn_3::fwd", "vllm::unified_attention_with_output", "EvoformerAttention", NULL,
};

/* Python's float(s), 0.0 when empty, "None" or not a number
 * (TraceLens's optional_float). */
static double optional_float(const char *s)
{
	char *e;
	double v = strtod(s, &e);
	while (*e == ' ')
		e++;
	return e == s || *e || !strcmp(s, "None") ? 0.0 : v;
}

/* TraceLens's Compute Spec of a matrix op of precision prec. */
static const char *matrix_spec(const char *prec)
{
	static const char *const specs[][2] = { { "fp32", "matrix_fp32" }, { "fp64", "matrix_fp64" },
		                                { "fp16", "matrix_fp16" }, { "bf16", "matrix_bf16" },
		                                { "fp8", "matrix_fp8" },   { "fp4", "matrix_fp4" } };
	for (size_t i = 0; prec && i < sizeof specs / sizeof specs[0]; i++)
		if (!strcmp(prec, specs[i][0]))
			return specs[i][1];
	return "";
}

static int sdpa_model(const struct perf_inst *in, struct perf_model *m)
{
	const char *sig = in->sig;
	size_t oplen = strcspn(sig, " ");
	int flash = oplen == strlen(sdpa_ops[0]) && !strncmp(sig, sdpa_ops[0], oplen);
	/* dropout_p and is_causal: 3, 4 for flash; 5, 6 past attn_bias and
	 * compute_log_sumexp for the others. */
	size_t idrop = flash ? 3 : 5;
	long long q[8], k[8], v[8];
	if (perf_shape(perf_sig_item(sig, "dims", 0), q, 8, NULL) < 4 || perf_shape(perf_sig_item(sig, "dims", 1), k, 8, NULL) < 4 ||
	    perf_shape(perf_sig_item(sig, "dims", 2), v, 8, NULL) < 4)
		return EV_ERR_FORMAT;
	/* TraceLens's extract_sdpa_cfg refuses mismatched shapes. */
	if (q[0] != k[0] || q[0] != v[0] || k[1] != v[1] || k[2] != v[2] || q[3] != k[3])
		return EV_ERR_FORMAT;
	long long B = q[0], HQ = q[1], NQ = q[2], HKV = k[1], NKV = k[2], dqk = q[3], dv = v[3];
	char drop[64], causal[64];
	if (perf_type_name(perf_sig_item(sig, "concrete", idrop), drop, sizeof drop) ||
	    perf_type_name(perf_sig_item(sig, "concrete", idrop + 1), causal, sizeof causal))
		return EV_ERR_FORMAT;
	int is_causal = !strcasecmp(causal, "true");
	if (is_causal && NQ != NKV)
		return EV_ERR_FORMAT;
	char ta[64];
	if (perf_type_name(perf_sig_item(sig, "types", 0), ta, sizeof ta) ||
	    !perf_sig_item(sig, "types", 1))
		return EV_ERR_FORMAT;
	struct pytext ra = { 0 }, rb = { 0 }, rd = { 0 };
	py_value(&ra, perf_sig_item(sig, "types", 0), 1);
	py_value(&rb, perf_sig_item(sig, "types", 1), 1);
	py_float(&rd, optional_float(drop));
	int rc = ra.oom || rb.oom || rd.oom ? EV_ERR_NOMEM : EV_OK;
	m->np = 0;
	rc = rc ? rc : perf_param(m, "B", "%lld", B);
	rc = rc ? rc : perf_param(m, "N_Q", "%lld", NQ);
	rc = rc ? rc : perf_param(m, "H_Q", "%lld", HQ);
	rc = rc ? rc : perf_param(m, "N_KV", "%lld", NKV);
	rc = rc ? rc : perf_param(m, "H_KV", "%lld", HKV);
	rc = rc ? rc : perf_param(m, "d_h_qk", "%lld", dqk);
	rc = rc ? rc : perf_param(m, "d_h_v", "%lld", dv);
	rc = rc ? rc : perf_param(m, "dropout", "%s", pyt_str(&rd));
	rc = rc ? rc : perf_param(m, "causal", "%s", is_causal ? "True" : "False");
	rc = rc ? rc : perf_param(m, "flash_impl", "%s", flash ? "True" : "False");
	rc = rc ? rc : perf_param(m, "dtype_A_B", "(%s, %s)", pyt_str(&ra), pyt_str(&rb));
	free(ra.p);
	free(rb.p);
	free(rd.p);
	if (rc)
		return rc;
	double f = (double)(B * HQ * (2 * NQ * NKV * dqk)) + (double)(B * HQ * (2 * NQ * dv * NKV));
	m->flops = is_causal ? f / 2 : f;
	m->bytes = 2.0 * (double)(B * NQ * HQ * dqk + B * NKV * HKV * dqk + B * NKV * HKV * dv + B * NQ * HQ * dv);
	m->spec = matrix_spec(perf_dtype_precision(ta));
	return EV_OK;
}

const struct perf_category perf_category_sdpa_fwd = {
	.sheet = "SDPA_fwd",
	.ops = sdpa_ops,
	.unmodelled = sdpa_unmodelled,
	.model = sdpa_model,
};
