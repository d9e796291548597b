/* SPDX-License-Identifier: MIT */
/*
 * perf_gemm.c - TraceLens's GEMM sheet: aten::mm, addmm, bmm, baddbmm and
 * _scaled_mm (and the two ops TraceLens models as _scaled_mm), their
 * parameters B, M, N, K, bias, stride_A, stride_B, dtype_A_B and transpose
 * (from the first kernel name that tells it: Tensile's Cxxx_Axxx_Bxxx or
 * cuBLAS's nvjet...NT), FLOPs 2MNK (+MN with bias) per batch and bytes
 * MK + KN + MN (+N with bias) elements per batch; TraceLens's rules, as its
 * PerfModel (perf_model.py) states them.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "analysis/perf.h"
#include "analysis/pyrepr.h"
#include "ev/stream.h"

/* ---- signatures ---- */

/* The end of the JSON value at p (a string, a list or a scalar). */
static const char *skip_value(const char *p)
{
	if (*p == '"') {
		for (p++; *p && *p != '"'; p++)
			if (*p == '\\' && p[1])
				p++;
		return *p ? p + 1 : p;
	}
	if (*p == '[') {
		for (p++; *p && *p != ']';)
			p = *p == ',' || *p == ' ' ? p + 1 : skip_value(p);
		return *p ? p + 1 : p;
	}
	while (*p && *p != ',' && *p != ']' && *p != ' ')
		p++;
	return p;
}

static const char *field_list(const char *sig, const char *field)
{
	char key[32];
	snprintf(key, sizeof key, " %s=[", field);
	const char *at = strstr(sig, key);
	return at ? at + strlen(key) - 1 : NULL;
}

long perf_sig_items(const char *sig, const char *field)
{
	const char *p = field_list(sig, field);
	if (!p)
		return -1;
	long n = 0;
	for (p++; *p && *p != ']';) {
		if (*p == ',' || *p == ' ') {
			p++;
			continue;
		}
		n++;
		p = skip_value(p);
	}
	return n;
}

const char *perf_sig_item(const char *sig, const char *field, size_t i)
{
	const char *p = field_list(sig, field);
	if (!p)
		return NULL;
	size_t n = 0;
	for (p++; *p && *p != ']';) {
		if (*p == ',' || *p == ' ') {
			p++;
			continue;
		}
		if (n++ == i)
			return p;
		p = skip_value(p);
	}
	return NULL;
}

/* A quoted type name at p into b, unquoted. */
int perf_type_name(const char *p, char *b, size_t n)
{
	size_t w = 0;
	if (!p || *p != '"')
		return -1;
	for (p++; *p && *p != '"' && w + 1 < n; p++) {
		if (*p == '\\' && p[1])
			p++;
		b[w++] = *p;
	}
	b[w] = '\0';
	return *p == '"' ? 0 : -1;
}

/* ---- dtypes (TraceLens's name2bpe and torch_dtype_map, case-blind) ---- */

struct dtname { const char *name; int bytes; const char *prec; };
static const struct dtname dtypes[] = {
	{ "double", 8, "fp64" }, { "long int", 8, NULL }, { "float", 4, "fp32" }, { "scalar", 4, NULL },
	{ "int", 4, NULL }, { "c10::half", 2, "fp16" }, { "c10::bfloat16", 2, "bf16" },
	{ "c10::float8_e4m3fnuz", 1, "fp8" }, { "c10::float8_e4m3fn", 1, "fp8" }, { "c10::float8_e5m2", 1, NULL },
	{ "c10::float8_e8m0fnu", 1, NULL }, { "unsigned char", 1, "fp8" }, { "signed char", 1, NULL },
	{ "fp8", 1, "fp8" }, { "c10::float4_e2m1fn_x2", 1, "fp4" }, { "fp4", 1, "fp4" }, { "mxfp4", 0, "fp4" },
};

static const struct dtname *dtype_of(const char *name)
{
	for (size_t i = 0; i < sizeof dtypes / sizeof dtypes[0]; i++)
		if (!strcasecmp(dtypes[i].name, name))
			return &dtypes[i];
	return NULL;
}

int perf_dtype_bytes(const char *name)
{
	const struct dtname *d = dtype_of(name);
	return d ? d->bytes : 0;
}

const char *perf_dtype_precision(const char *name)
{
	const struct dtname *d = dtype_of(name);
	return d ? d->prec : NULL;
}

/* ---- transpose, from a kernel name (TraceLens's gemm_name_parser) ---- */

static int axis3(const char *p, char x)
{
	return p[0] == x && p[1] >= 'a' && p[1] <= 'z' && p[2] >= 'a' && p[2] <= 'z' && p[3] >= 'a' && p[3] <= 'z';
}

/* "(True, False)" for a name that tells the layouts; 0 when it tells
 * nothing, -1 for an nvjet name too short to read (TraceLens fails). */
static int transpose(const char *name, char *b, size_t n)
{
	int tensile = 0;
	for (const char *p = strchr(name, 'C'); p && !tensile; p = strchr(p + 1, 'C'))
		tensile = axis3(p, 'C') && p[4] == '_' && axis3(p + 5, 'A') && p[9] == '_' && axis3(p + 10, 'B');
	if (tensile) {
		const char *a = strstr(name, "_Ailk_") ? "False" : strstr(name, "_Alik_") ? "True" : "None";
		const char *bb = strstr(name, "_Bljk_") ? "False" : strstr(name, "_Bjlk_") ? "True" : "None";
		snprintf(b, n, "(%s, %s)", a, bb);
		return 1;
	}
	if (!strncmp(name, "nvjet", 5)) {
		const char *u = strrchr(name, '_');
		u = u ? u + 1 : name;
		if (!u[0] || !u[1])
			return -1;
		snprintf(b, n, "(%s, %s)", u[0] == 'T' ? "True" : "False", u[1] == 'T' ? "True" : "False");
		return 1;
	}
	return 0;
}

/* ---- the model ---- */

enum gemm_kind { MM, ADDMM, SCALED_MM, BMM, BADDBMM };

static const char *const gemm_ops[] = { "aten::mm", "aten::addmm", "aten::_scaled_mm", "trtllm::cublas_scaled_mm",
	                                "bitsandbytes::int8_linear_matmul", "aten::bmm", "aten::baddbmm", NULL };
static const enum gemm_kind gemm_kinds[] = { MM, ADDMM, SCALED_MM, SCALED_MM, SCALED_MM, BMM, BADDBMM };

static const char *const gemm_unmodelled[] = {
	"tex_ts::te_gemm_ts", "vllm::gemm_with_dynamic_quant", "_Linear_yfwd_mm", "_LinearBackward_xgrad_mm",
	"_LinearBackward_wgrad_mm", "_LayerNormLinear_yfwd_mm", "_LayerNormLinearBackward_xgrad_mm",
	"_LayerNormLinearBackward_wgrad_mm", "primus_turbo_cpp_extension::hipblaslt_gemm_fp8",
	"primus_turbo::hipblaslt_gemm_fp8", "primus_turbo_cpp_extension::hipblaslt_gemm_fp4",
	"primus_turbo::hipblaslt_gemm_fp4", "aiter::gemm_a4w4", "aiter::_gemm_a4w4_asm", NULL,
};

/* tuple(Input Strides[i]) as Python prints it; None without strides. */
int perf_stride_param(struct perf_model *m, const char *name, const char *sig, size_t i)
{
	if (perf_sig_items(sig, "strides") < 0)
		return perf_param(m, name, "None");
	return perf_list_param(m, name, sig, "strides", i);
}

int perf_list_param(struct perf_model *m, const char *name, const char *sig, const char *field, size_t i)
{
	const char *p = perf_sig_item(sig, field, i);
	if (!p || (*p != '[' && *p != '"'))
		return EV_ERR_FORMAT;
	struct pytext t = { 0 };
	py_value(&t, p, 1);
	int rc = t.oom ? EV_ERR_NOMEM : perf_param(m, name, "%s", pyt_str(&t));
	free(t.p);
	return rc;
}

static int gemm_model(const struct perf_inst *in, struct perf_model *m)
{
	const char *sig = in->sig;
	size_t oplen = strcspn(sig, " ");
	size_t op = 0;
	while (gemm_ops[op] && !(strlen(gemm_ops[op]) == oplen && !strncmp(sig, gemm_ops[op], oplen)))
		op++;
	if (!gemm_ops[op])
		return EV_ERR_ARG;
	enum gemm_kind kind = gemm_kinds[op];
	int batched = kind == BMM || kind == BADDBMM;
	size_t ia = kind == ADDMM || kind == BADDBMM ? 1 : 0; /* A's input; B's is next */
	long long a[8], b[8], B = 1, M, N, K;
	int na = perf_shape(perf_sig_item(sig, "dims", ia), a, 8, NULL), nb = perf_shape(perf_sig_item(sig, "dims", ia + 1), b, 8, NULL);
	if (batched) {
		if (na != 3 || nb != 3)
			return EV_ERR_FORMAT;
		B = a[0], M = a[1], K = a[2], N = b[2];
	} else {
		if (na < 2 || nb < 2)
			return EV_ERR_FORMAT;
		M = a[0], K = a[1], N = b[1];
	}
	int bias = kind == ADDMM || kind == BADDBMM || (kind == SCALED_MM && perf_sig_items(sig, "dims") == 3);
	char ta[64], tb[64];
	if (perf_type_name(perf_sig_item(sig, "types", ia), ta, sizeof ta) ||
	    perf_type_name(perf_sig_item(sig, "types", ia + 1), tb, sizeof tb))
		return EV_ERR_FORMAT;
	struct pytext rta = { 0 }, rtb = { 0 };
	py_string(&rta, perf_sig_item(sig, "types", ia) + 1);
	py_string(&rtb, perf_sig_item(sig, "types", ia + 1) + 1);
	int rc = rta.oom || rtb.oom ? EV_ERR_NOMEM : EV_OK;
	m->np = 0;
	if (!rc && batched)
		rc = perf_param(m, "B", "%lld", B);
	rc = rc ? rc : perf_param(m, "M", "%lld", M);
	rc = rc ? rc : perf_param(m, "N", "%lld", N);
	rc = rc ? rc : perf_param(m, "K", "%lld", K);
	rc = rc ? rc : perf_param(m, "bias", "%s", bias ? "True" : "False");
	rc = rc ? rc : perf_stride_param(m, "stride_A", sig, ia);
	rc = rc ? rc : perf_stride_param(m, "stride_B", sig, ia + 1);
	rc = rc ? rc : perf_param(m, "dtype_A_B", "(%s, %s)", pyt_str(&rta), pyt_str(&rtb));
	free(rta.p);
	free(rtb.p);
	if (!rc && !batched)
		rc = perf_param(m, "B", "1");
	for (size_t k = 0; !rc && k < in->nk; k++) {
		char tr[32];
		int t = transpose(in->kernels[k], tr, sizeof tr);
		if (t < 0)
			rc = EV_ERR_FORMAT;
		else if (t > 0) {
			rc = perf_param(m, "transpose", "%s", tr);
			break;
		}
	}
	if (rc)
		return rc;
	/* FLOPs and bytes as TraceLens's integers, then a double. */
	double per = 2.0 * (double)(M * N * K) + (bias ? (double)(M * N) : 0);
	m->flops = (double)B * per;
	int ea = perf_dtype_bytes(ta), eb = perf_dtype_bytes(tb), eo = ea;
	if (kind == SCALED_MM) {
		if (!ea || !eb)
			return EV_ERR_FORMAT; /* TraceLens asserts both sizes known */
		eo = ea == 1 ? 2 : ea == 2 || ea == 4 ? ea : 0;
	}
	if (ea && eo)
		m->bytes = (double)B * (double)(M * K * ea + K * N * ea + M * N * eo + (bias ? N * ea : 0));
	else
		m->bytes = NAN;
	const char *prec = perf_dtype_precision(ta);
	m->spec = !prec ? "" : !strcmp(prec, "fp32") ? "matrix_fp32" : !strcmp(prec, "fp64") ? "matrix_fp64"
	        : !strcmp(prec, "fp16") ? "matrix_fp16" : !strcmp(prec, "bf16") ? "matrix_bf16"
	        : !strcmp(prec, "fp8") ? "matrix_fp8" : "matrix_fp4";
	return EV_OK;
}

const struct perf_category perf_category_gemm = {
	.sheet = "GEMM",
	.ops = gemm_ops,
	.unmodelled = gemm_unmodelled,
	.model = gemm_model,
};
