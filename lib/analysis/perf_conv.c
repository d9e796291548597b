/* SPDX-License-Identifier: MIT */
/*
 * perf_conv.c - TraceLens's CONV_fwd and CONV_bwd sheets:
 * aten::convolution and aten::convolution_backward, their parameters
 * convNd, input_shape, filter_shape, dtype_input_weight, input_stride,
 * weight_stride, bias, stride, padding, dilation, transposed_conv,
 * output_padding and groups (from Input Dims and Concrete Inputs); the
 * output shape from them; FLOPs 2·prod(filter[1:]) per output element (+1
 * with bias), the backward's the input and weight gradients'; bytes input,
 * filter and output once each in the input's element size (the backward:
 * twice, one per gradient).  TraceLens's rules, as its CONV PerfModel
 * classes (perf_model.py) state them, quirks kept: the forward's bias is
 * True only for a call of three inputs (aten::convolution has nine), the
 * backward's is the Python value of `dims[3] and len(dims[3]) > 0` (`[]`
 * for no bias sizes).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/perf.h"
#include "analysis/pyrepr.h"
#include "ev/stream.h"

#define CONV_MAXD 8

static const char *const conv_fwd_ops[] = { "aten::convolution", NULL };
static const char *const conv_bwd_ops[] = { "aten::convolution_backward", NULL };
static const char *const conv_fwd_unmodelled[] = { "ConvBias_", "ConvBiasReLU_", NULL };
static const char *const conv_bwd_unmodelled[] = { "ConvBias_Backward", "ConvBiasReLU_Backward", NULL };

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

/* A tuple argument (Concrete Inputs[i], "[1, 1]") into v, `dflt` in each of
 * nd places when empty, a single value repeated nd times (TraceLens's
 * str_to_tuple and broadcast); its length, -1 when unreadable. */
static int tuple_arg(const char *sig, size_t i, int nd, long long dflt, long long *v)
{
	char txt[PERF_PVAL];
	if (perf_type_name(perf_sig_item(sig, "concrete", i), txt, sizeof txt))
		return -1;
	if (!txt[0]) {
		for (int k = 0; k < nd; k++)
			v[k] = dflt;
		return nd;
	}
	int n = 0;
	const char *p = txt + 1;
	size_t len = strlen(txt);
	if (len < 2)
		return -1;
	txt[len - 1] = '\0';
	while (*p) {
		char *e;
		long long x = strtoll(p, &e, 10);
		if (e == p || n == CONV_MAXD)
			return -1;
		v[n++] = x;
		while (*e == ' ')
			e++;
		if (*e && *e != ',')
			return -1;
		p = *e ? e + 1 : e;
	}
	if (n == 1)
		for (int k = 1; k < nd; k++)
			v[k] = v[0];
	return n == 1 ? nd : n;
}

/* Python's str() of a tuple of n integers. */
static void tuple_text(char *b, size_t sz, const long long *v, int n)
{
	size_t w = (size_t)snprintf(b, sz, "(");
	for (int i = 0; i < n && w < sz; i++)
		w += (size_t)snprintf(b + w, sz - w, "%s%lld", i ? ", " : "", v[i]);
	if (w < sz)
		snprintf(b + w, sz - w, "%s)", n == 1 ? "," : "");
}

static double prod(const long long *v, int n)
{
	double p = 1;
	for (int i = 0; i < n; i++)
		p *= (double)v[i];
	return p;
}

/* TraceLens's CONV.flops_func: 2·prod(w[1:]) per element of out (of x
 * for a transposed one), + prod(out) with bias. */
static double conv_flops(const long long *x, const long long *w, const long long *out, int n, int bias, int tr)
{
	double fpe = 2 * prod(w + 1, n - 1);
	return (tr ? prod(x, n) : prod(out, n)) * fpe + (bias ? prod(out, n) : 0);
}

static int conv_model(const struct perf_inst *in, struct perf_model *m, int bwd)
{
	const char *sig = in->sig;
	size_t ix = bwd ? 1 : 0; /* the input's argument; the filter's is next */
	size_t ic = bwd ? 4 : 3; /* stride's concrete input; padding, ... follow */
	long long x[CONV_MAXD], w[CONV_MAXD], out[CONV_MAXD];
	int n = perf_shape(perf_sig_item(sig, "dims", ix), x, CONV_MAXD, NULL);
	int nw = perf_shape(perf_sig_item(sig, "dims", ix + 1), w, CONV_MAXD, NULL);
	if (n < 3 || n > 5 || nw < 2)
		return EV_ERR_FORMAT;
	int nd = n - 2;
	long long st[CONV_MAXD], pad[CONV_MAXD], dil[CONV_MAXD], opad[CONV_MAXD];
	if (tuple_arg(sig, ic, nd, 1, st) < nd || tuple_arg(sig, ic + 1, nd, 0, pad) < nd ||
	    tuple_arg(sig, ic + 2, nd, 1, dil) < nd || tuple_arg(sig, ic + 4, nd, 0, opad) < nd || nw < nd + 2)
		return EV_ERR_FORMAT;
	char trs[16], grs[32], ta[64], tb[64];
	if (perf_type_name(perf_sig_item(sig, "concrete", ic + 3), trs, sizeof trs) ||
	    perf_type_name(perf_sig_item(sig, "concrete", ic + 5), grs, sizeof grs))
		return EV_ERR_FORMAT;
	if (strcmp(trs, "True") && strcmp(trs, "False"))
		return EV_ERR_FORMAT;
	int tr = !strcmp(trs, "True");
	char *e;
	long long groups = strtoll(grs, &e, 10);
	if (e == grs || *e)
		return EV_ERR_FORMAT;
	if (perf_type_name(perf_sig_item(sig, "types", ix), ta, sizeof ta) ||
	    perf_type_name(perf_sig_item(sig, "types", ix + 1), tb, sizeof tb) || strcmp(ta, tb))
		return EV_ERR_FORMAT; /* TraceLens refuses mixed input and weight types */
	/* Bias: forward, a call of three inputs; backward, the Python value
	 * of `dims[3] and len(dims[3]) > 0`. */
	const char *biastxt;
	int bias;
	if (!bwd) {
		bias = perf_sig_items(sig, "dims") == 3;
		biastxt = bias ? "True" : "False";
	} else if (perf_sig_items(sig, "dims") <= 3) {
		bias = 0;
		biastxt = "False";
	} else {
		const char *d3 = perf_sig_item(sig, "dims", 3);
		if (!strncmp(d3, "null", 4)) {
			bias = 0;
			biastxt = "None";
		} else {
			bias = d3[0] == '[' && d3[1] != ']';
			biastxt = bias ? "True" : "[]";
		}
	}
	/* The output shape: (N, filters) + each spatial dimension. */
	out[0] = x[0];
	out[1] = tr ? w[1] : w[0];
	for (int i = 0; i < nd; i++) {
		long long xi = x[2 + i], k = w[2 + i];
		if (!tr) {
			if (!st[i])
				return EV_ERR_FORMAT;
			out[2 + i] = (long long)((double)(xi + 2 * pad[i] - dil[i] * (k - 1) - 1) / (double)st[i] + 1);
		} else
			out[2 + i] = (xi - 1) * st[i] - 2 * pad[i] + dil[i] * (k - 1) + opad[i] + 1;
	}
	char b[PERF_PVAL];
	struct pytext ra = { 0 }, rb = { 0 };
	py_value(&ra, perf_sig_item(sig, "types", ix), 1);
	py_value(&rb, perf_sig_item(sig, "types", ix + 1), 1);
	int rc = ra.oom || rb.oom ? EV_ERR_NOMEM : EV_OK;
	m->np = 0;
	rc = rc ? rc : perf_param(m, "convNd", "conv%dd", nd);
	rc = rc ? rc : perf_list_param(m, "input_shape", sig, "dims", ix);
	rc = rc ? rc : perf_list_param(m, "filter_shape", sig, "dims", ix + 1);
	rc = rc ? rc : perf_param(m, "dtype_input_weight", "(%s, %s)", pyt_str(&ra), pyt_str(&rb));
	rc = rc ? rc : perf_stride_param(m, "input_stride", sig, ix);
	rc = rc ? rc : perf_stride_param(m, "weight_stride", sig, ix + 1);
	rc = rc ? rc : perf_param(m, "bias", "%s", biastxt);
	tuple_text(b, sizeof b, st, nd);
	rc = rc ? rc : perf_param(m, "stride", "%s", b);
	tuple_text(b, sizeof b, pad, nd);
	rc = rc ? rc : perf_param(m, "padding", "%s", b);
	tuple_text(b, sizeof b, dil, nd);
	rc = rc ? rc : perf_param(m, "dilation", "%s", b);
	rc = rc ? rc : perf_param(m, "transposed_conv", "%s", tr ? "True" : "False");
	tuple_text(b, sizeof b, opad, nd);
	rc = rc ? rc : perf_param(m, "output_padding", "%s", b);
	rc = rc ? rc : perf_param(m, "groups", "%lld", groups);
	free(ra.p);
	free(rb.p);
	if (rc)
		return rc;
	double px = prod(x, n), pw = prod(w, n), po = prod(out, n);
	int bpe = perf_dtype_bytes(ta);
	if (!bwd) {
		m->flops = conv_flops(x, w, out, n, bias, tr);
		m->bytes = bpe ? (px + pw + (bias ? (double)out[1] : 0) + po) * bpe : NAN;
	} else {
		/* The input gradient (a convolution of the output gradient,
		 * transposed the other way) and the weight gradient (of the
		 * batch-transposed input and output), and the bias's. */
		long long tx[CONV_MAXD], to[CONV_MAXD], tw[CONV_MAXD];
		memcpy(tx, x, sizeof tx);
		memcpy(to, out, sizeof to);
		memcpy(tw, w, sizeof tw);
		tx[0] = x[1], tx[1] = x[0];
		to[0] = out[1], to[1] = out[0];
		tw[0] = w[1], tw[1] = w[0];
		double fin = conv_flops(out, w, x, n, 0, !tr);
		double fw = tr ? conv_flops(to, tx, tw, n, 0, 0) : conv_flops(tx, to, tw, n, 0, 0);
		m->flops = fin + fw + (bias ? po : 0);
		m->bytes = bpe ? 2 * (po + pw + px) * bpe + (bias ? po + (double)out[1] : 0) : NAN;
	}
	m->spec = matrix_spec(perf_dtype_precision(ta));
	return EV_OK;
}

static int conv_fwd_model(const struct perf_inst *in, struct perf_model *m)
{
	return conv_model(in, m, 0);
}

static int conv_bwd_model(const struct perf_inst *in, struct perf_model *m)
{
	return conv_model(in, m, 1);
}

const struct perf_category perf_category_conv_fwd = {
	.sheet = "CONV_fwd",
	.ops = conv_fwd_ops,
	.unmodelled = conv_fwd_unmodelled,
	.model = conv_fwd_model,
};

const struct perf_category perf_category_conv_bwd = {
	.sheet = "CONV_bwd",
	.ops = conv_bwd_ops,
	.unmodelled = conv_bwd_unmodelled,
	.model = conv_bwd_model,
};
