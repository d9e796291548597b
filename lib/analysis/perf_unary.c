/* SPDX-License-Identifier: MIT */
/*
 * perf_unary.c - TraceLens's UnaryElementwise sheet: aten::copy(_),
 * clamp_min(_), clamp_max(_), sigmoid, rsqrt, silu, neg, pow, and the
 * replication pads and nearest upsamplings it models the same way.
 * Parameters op_shape (Input Dims[0]; the output's shape for a pad or an
 * upsampling), dtype_in_out and stride_input, stride_output (Input type and
 * Input Strides [0], and [1] when Input Dims[1] is a non-empty tensor, else
 * None); FLOPs one per element, bytes the input's elements at its size
 * plus the output's at its own (the input's when None).  TraceLens's rules,
 * as its PerfModel (perf_model.py) states them.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/perf.h"
#include "ev/stream.h"

enum unary_kind { ELEMENTWISE, PAD, UPSAMPLE };

static const char *const unary_ops[] = {
	"aten::copy", "aten::copy_", "aten::clamp_min", "aten::clamp_min_", "aten::clamp_max", "aten::clamp_max_",
	"aten::sigmoid", "aten::rsqrt", "aten::silu", "aten::neg", "aten::pow", "aten::replication_pad1d",
	"aten::replication_pad2d", "aten::replication_pad3d", "aten::upsample_nearest1d", "aten::upsample_nearest2d",
	"aten::upsample_nearest3d", NULL,
};

static const char *const unary_unmodelled[] = {
	"primus_turbo_cpp_extension::quantize_fp8_tensorwise", "primus_turbo::quantize_fp8_tensorwise",
	"primus_turbo_cpp_extension::quantize_mxfp4_dual", "primus_turbo::quantize_mxfp4_dual",
	"primus::quantize_mxfp4_dual", "aiter::silu_and_mul", "_C::silu_and_mul", "sgl_kernel::silu_and_mul",
	"aiter::gelu_and_mul", "aiter::gelu_tanh_and_mul", NULL,
};

#define MAXD 16

/* The integers of a Concrete Inputs string "[a, b]" (a pad's or an
 * output size) into v; their number, -1 when not that. */
static int int_list_text(const char *item, long long *v, int max)
{
	if (!item || item[0] != '"' || item[1] != '[')
		return -1;
	int n = 0;
	const char *p = item + 2;
	for (;;) {
		while (*p == ' ')
			p++;
		if (*p == ']' && n == 0)
			break;
		char *e;
		long long x = strtoll(p, &e, 10);
		if (e == p || n == max)
			return -1;
		v[n++] = x;
		for (p = e; *p == ' '; p++)
			;
		if (*p == ']')
			break;
		if (*p++ != ',')
			return -1;
	}
	return p[1] == '"' ? n : -1;
}

/* The output shape of a pad or an upsampling (TraceLens's), from the
 * input's; -1 when Concrete Inputs does not tell it. */
static int out_shape(enum unary_kind kind, const char *sig, const long long *in, int nin, long long *out)
{
	long long c[MAXD];
	int nc = int_list_text(perf_sig_item(sig, "concrete", 1), c, MAXD);
	if (nc < 0)
		return -1;
	if (kind == PAD) {
		/* Pairs innermost first: pair i widens dimension nin-1-i. */
		if (nc == 0)
			return -1; /* TraceLens's int('') fails */
		memcpy(out, in, (size_t)nin * sizeof *out);
		for (int i = 0; i < nc / 2; i++) {
			if (nin - 1 - i < 0)
				return -1;
			out[nin - 1 - i] += c[2 * i] + c[2 * i + 1];
		}
		return nin;
	}
	int n = nin < 2 ? nin : 2;
	if (n + nc > MAXD)
		return -1;
	memcpy(out, in, (size_t)n * sizeof *out);
	memcpy(out + n, c, (size_t)nc * sizeof *out);
	return n + nc;
}

static int shape_param(struct perf_model *m, const char *name, const long long *v, int n)
{
	char b[PERF_PVAL];
	size_t w = 0;
	b[w++] = '(';
	for (int i = 0; i < n && w < sizeof b; i++)
		w += (size_t)snprintf(b + w, sizeof b - w, "%s%lld", i ? ", " : "", v[i]);
	if (w + 3 > sizeof b)
		return EV_ERR_FORMAT;
	snprintf(b + w, sizeof b - w, "%s", n == 1 ? ",)" : ")");
	return perf_param(m, name, "%s", b);
}

static int unary_model(const struct perf_inst *in, struct perf_model *m)
{
	const char *sig = in->sig;
	enum unary_kind kind = !strncmp(sig, "aten::replication_pad", 21) ? PAD
	                     : !strncmp(sig, "aten::upsample_nearest", 22) ? UPSAMPLE : ELEMENTWISE;
	long long shp[MAXD], outs[MAXD], nin, nout;
	int ns = perf_shape(perf_sig_item(sig, "dims", 0), shp, MAXD, &nin);
	char tin[64], rin[96], tout[64], rout[96];
	if (ns < 0 || perf_type(perf_sig_item(sig, "types", 0), tin, sizeof tin, rin, sizeof rin) ||
	    perf_sig_items(sig, "strides") < 0)
		return EV_ERR_FORMAT;
	int has_out = kind == ELEMENTWISE && perf_truthy_list(perf_sig_item(sig, "dims", 1));
	if (has_out && perf_type(perf_sig_item(sig, "types", 1), tout, sizeof tout, rout, sizeof rout))
		return EV_ERR_FORMAT;
	int no = ns;
	nout = nin;
	if (kind != ELEMENTWISE) {
		if ((no = out_shape(kind, sig, shp, ns, outs)) < 0)
			return EV_ERR_FORMAT;
		nout = 1;
		for (int i = 0; i < no; i++)
			nout *= outs[i];
	}
	int rc = EV_OK;
	m->np = 0;
	if (kind != ELEMENTWISE) {
		rc = shape_param(m, "input_shape", shp, ns);
		rc = rc ? rc : shape_param(m, "output_shape", outs, no);
		if (!rc && kind == PAD) {
			/* padding: the list of ints, as Python prints a list. */
			char b[PERF_PVAL];
			long long c[MAXD];
			int nc = int_list_text(perf_sig_item(sig, "concrete", 1), c, MAXD);
			size_t w = 0;
			b[w++] = '[';
			for (int i = 0; i < nc && w < sizeof b; i++)
				w += (size_t)snprintf(b + w, sizeof b - w, "%s%lld", i ? ", " : "", c[i]);
			rc = w + 2 > sizeof b ? EV_ERR_FORMAT : perf_param(m, "padding", "%.*s]", (int)w, b);
		}
	}
	rc = rc ? rc : shape_param(m, "op_shape", kind == ELEMENTWISE ? shp : outs, no);
	if (kind == ELEMENTWISE)
		rc = rc ? rc : perf_param(m, "dtype_in_out", "(%s, %s)", rin, has_out ? rout : "None");
	else
		rc = rc ? rc : perf_param(m, "dtype_in_out", "(%s, %s)", rin, rin);
	rc = rc ? rc : perf_tuple(m, "stride_input", perf_sig_item(sig, "strides", 0));
	if (has_out)
		rc = rc ? rc : perf_tuple(m, "stride_output", perf_sig_item(sig, "strides", 1));
	else
		rc = rc ? rc : perf_param(m, "stride_output", "None");
	if (rc)
		return rc;
	int bin = perf_dtype_bytes(tin), bout = has_out ? perf_dtype_bytes(tout) : bin;
	m->flops = (double)(kind == ELEMENTWISE ? nin : nout);
	if (bin && bout)
		m->bytes = (double)(nin * bin + nout * bout);
	else if (kind != ELEMENTWISE)
		return EV_ERR_FORMAT; /* a pad's or an upsampling's bytes() fails on None */
	else
		m->bytes = NAN;
	m->spec = perf_vector_spec(tin);
	return EV_OK;
}

const struct perf_category perf_category_unary = {
	.sheet = "UnaryElementwise",
	.ops = unary_ops,
	.unmodelled = unary_unmodelled,
	.model = unary_model,
};
