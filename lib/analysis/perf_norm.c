/* SPDX-License-Identifier: MIT */
/*
 * perf_norm.c - TraceLens's Normalization sheet: batch norm (aten's
 * batch_norm, native_, miopen_, cudnn_), its backward, and layer norm,
 * forward and backward on one sheet as TraceLens has it.  Parameters
 * op_shape, dtype_in_out, stride_input, stride_output, num_channels,
 * has_bias, is_affine, is_training (and output_mask for a backward);
 * FLOPs and bytes by TraceLens's Normalization formulas (per channel
 * statistics, then a multiply-add per element; activations read and
 * written once, the per-channel tensors once each).  TraceLens's rules, as
 * its Normalization PerfModel classes (perf_model.py) state them, quirks
 * kept: a dimension is "not None" when present (an absent tensor is [] in
 * a trace, so is_affine is always True), is_training is the truth of the
 * concrete text (non-empty, "False" included).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/perf.h"
#include "analysis/pyrepr.h"
#include "ev/stream.h"

enum norm_kind { BN, BN_BWD_NATIVE, BN_BWD_LIB, LN };

static const char *const norm_ops[] = {
	"aten::batch_norm", "aten::native_batch_norm", "aten::miopen_batch_norm", "aten::cudnn_batch_norm",
	"aten::batch_norm_backward", "aten::native_batch_norm_backward", "aten::miopen_batch_norm_backward",
	"aten::cudnn_batch_norm_backward", "aten::layer_norm", "aten::native_layer_norm", "aten::miopen_layer_norm",
	"aten::cudnn_layer_norm", NULL,
};
static const enum norm_kind norm_kinds[] = { BN, BN, BN, BN, BN_BWD_NATIVE, BN_BWD_NATIVE, BN_BWD_LIB, BN_BWD_LIB,
	                                     LN, LN, LN, LN };

/* Ops TraceLens puts on its Normalization sheet through models evkit lacks. */
static const char *const norm_unmodelled[] = {
	"aten::group_norm", "aten::native_group_norm", "aten::miopen_group_norm", "aten::cudnn_group_norm",
	"aten::instance_norm", "aten::native_instance_norm", "aten::miopen_instance_norm", "aten::cudnn_instance_norm",
	"aten::_fused_rms_norm", "aten::layer_norm_backward", "aten::native_layer_norm_backward",
	"aten::miopen_layer_norm_backward", "aten::cudnn_layer_norm_backward", "aten::group_norm_backward",
	"aten::native_group_norm_backward", "aten::miopen_group_norm_backward", "aten::cudnn_group_norm_backward",
	"aten::instance_norm_backward", "aten::native_instance_norm_backward", "aten::miopen_instance_norm_backward",
	"aten::cudnn_instance_norm_backward", "aten::rms_norm_backward", "aten::native_rms_norm_backward",
	"aten::miopen_rms_norm_backward", "aten::cudnn_rms_norm_backward", "aten::_fused_rms_norm_backward",
	"primus::fused_ln_modulate", "primus::fused_ln_modulate_backward", NULL,
};

/* TraceLens's Compute Spec of a vector op of precision prec. */
static const char *vector_spec(const char *prec)
{
	static const char *const specs[][2] = { { "fp32", "vector_fp32" }, { "fp64", "vector_fp64" },
		                                { "fp16", "vector_fp16" }, { "bf16", "vector_bf16" },
		                                { "fp8", "vector_fp8" },   { "fp4", "vector_fp4" } };
	for (size_t i = 0; prec && i < sizeof specs / sizeof specs[0]; i++)
		if (!strcmp(prec, specs[i][0]))
			return specs[i][1];
	return "";
}

/* Python's `dims[i] is not None`: present and not a JSON null; -1 when
 * absent (TraceLens's IndexError). */
static int not_none(const char *sig, size_t i)
{
	const char *p = perf_sig_item(sig, "dims", i);
	return !p ? -1 : strncmp(p, "null", 4) != 0;
}

/* The product of the integers of a Python list text "[512, 4]", -1 when
 * not one. */
static long long list_prod(const char *s)
{
	long long prod = 1;
	int n = 0;
	if (*s != '[')
		return -1;
	for (s++; *s && *s != ']';) {
		if (*s == ',' || *s == ' ') {
			s++;
			continue;
		}
		char *e;
		long long x = strtoll(s, &e, 10);
		if (e == s)
			return -1;
		prod *= x;
		n++;
		s = e;
	}
	return *s == ']' ? prod : -1;
}

static int norm_model(const struct perf_inst *in, struct perf_model *m)
{
	const char *sig = in->sig;
	size_t oplen = strcspn(sig, " ");
	size_t op = 0;
	while (norm_ops[op] && !(strlen(norm_ops[op]) == oplen && !strncmp(sig, norm_ops[op], oplen)))
		op++;
	if (!norm_ops[op])
		return EV_ERR_ARG;
	enum norm_kind kind = norm_kinds[op];
	size_t ix = kind == BN_BWD_NATIVE ? 1 : 0; /* the input's argument */
	long long shp[16];
	int nd = perf_shape(perf_sig_item(sig, "dims", ix), shp, 16, NULL);
	if (nd < 0 || perf_sig_items(sig, "strides") < 0)
		return EV_ERR_FORMAT;
	int affine = not_none(sig, 2), bias = 1, training = 1, mask = kind == BN_BWD_NATIVE || kind == BN_BWD_LIB;
	long long C;
	char txt[PERF_PVAL];
	if (kind == LN) {
		if (perf_type_name(perf_sig_item(sig, "concrete", 1), txt, sizeof txt) || (C = list_prod(txt)) < 0)
			return EV_ERR_FORMAT;
		bias = not_none(sig, 3);
	} else {
		if (nd < 2)
			return EV_ERR_FORMAT;
		C = shp[1];
		if (kind != BN_BWD_LIB) {
			if (perf_type_name(perf_sig_item(sig, "concrete", kind == BN ? 5 : 7), txt, sizeof txt))
				return EV_ERR_FORMAT;
			training = txt[0] != '\0';
		} else
			training = 0;
		if (kind == BN_BWD_NATIVE && not_none(sig, 0) < 0)
			return EV_ERR_FORMAT;
	}
	if (affine < 0 || bias < 0)
		return EV_ERR_FORMAT;
	char dtype[64];
	if (perf_type_name(perf_sig_item(sig, "types", ix), dtype, sizeof dtype))
		return EV_ERR_FORMAT;
	long long N = 1;
	for (int i = 0; i < nd; i++)
		N *= shp[i];
	int bpe = perf_dtype_bytes(dtype);
	if (!bpe)
		return EV_ERR_FORMAT; /* TraceLens's bytes fail on a type without a size */
	struct pytext ty = { 0 };
	py_value(&ty, perf_sig_item(sig, "types", ix), 1);
	int rc = ty.oom ? EV_ERR_NOMEM : EV_OK;
	m->np = 0;
	rc = rc ? rc : perf_list_param(m, "op_shape", sig, "dims", ix);
	rc = rc ? rc : perf_param(m, "dtype_in_out", "(%s, None)", pyt_str(&ty));
	rc = rc ? rc : perf_list_param(m, "stride_input", sig, "strides", ix);
	rc = rc ? rc : perf_param(m, "stride_output", "None");
	rc = rc ? rc : perf_param(m, "num_channels", "%lld", C);
	rc = rc ? rc : perf_param(m, "has_bias", "%s", bias ? "True" : "False");
	rc = rc ? rc : perf_param(m, "is_affine", "%s", affine ? "True" : "False");
	rc = rc ? rc : perf_param(m, "is_training", "%s", training ? "True" : "False");
	if (mask)
		rc = rc ? rc : perf_param(m, "output_mask", "[True]");
	free(ty.p);
	if (rc)
		return rc;
	double n = (double)N, c = (double)C, b = bpe;
	if (!mask) {
		/* 1/std and the affine terms per channel, the statistics per
		 * element when training, then a multiply-add per element. */
		m->flops = (double)(C * 3 + (training ? N * 3 : 0) + C * 3 + 2 * N);
		int w = 2 + (affine ? 1 + bias : 0) + (training ? 2 : 0);
		m->bytes = n * b + n * b + w * c * b;
	} else {
		/* output_mask [True]: the input gradient is computed. */
		double epc = n / c, fpc = (training ? 0 : 3) + 4 * epc;
		fpc += training ? 5 * epc : 0;
		m->flops = c * fpc;
		m->bytes = n * b + n * b * (training ? 2 : 1) + (training ? c * b : 0) +
		           (affine ? c * b + (training ? c * b * (bias ? 2 : 1) : 0) : 0);
	}
	m->spec = vector_spec(perf_dtype_precision(dtype));
	return EV_OK;
}

const struct perf_category perf_category_norm = {
	.sheet = "Normalization",
	.ops = norm_ops,
	.unmodelled = norm_unmodelled,
	.model = norm_model,
};
