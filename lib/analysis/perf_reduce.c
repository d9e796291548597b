/* SPDX-License-Identifier: MIT */
/*
 * perf_reduce.c - TraceLens's Reduce_fwd and Reduce_bwd sheets: aten::sum,
 * mean, max, min, norm, linalg_norm, std, var, logsumexp, cumsum, cumprod,
 * amin, amax.
 * Parameters num_input_elems (of Input Dims[0]), num_output_elems (the
 * same for cumsum and cumprod; else the input's shape without, or with 1
 * at, the reduced dims when Concrete Inputs gives them as JSON values, 1
 * otherwise: a trace's Concrete Inputs are strings, which TraceLens skips),
 * dtype_in_out (Input type[0] and None: kineto writes no Output type) and
 * reduce_type (mean, max, min or norm when the op's name holds it, else
 * sum); FLOPs one per input element, bytes the input's and the output's
 * elements at the input's size.  TraceLens's rules, as its PerfModel
 * (perf_model.py) states them.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/perf.h"
#include "ev/stream.h"

static const char *const reduce_ops[] = {
	"aten::sum", "aten::mean", "aten::max", "aten::min", "aten::norm", "aten::linalg_norm", "aten::std",
	"aten::var", "aten::logsumexp", "aten::cumsum", "aten::cumprod", "aten::amin", "aten::amax", NULL,
};

#define MAXD 16

static int is_bool(const char *p)
{
	return !strncmp(p, "true", 4) || !strncmp(p, "false", 5);
}

/* A JSON number or a numeric string as Python's int() reads it, into *v;
 * -1 when it does not read. */
static int as_int(const char *p, long long *v)
{
	char *e;
	if (*p == '"') {
		*v = strtoll(p + 1, &e, 10);
		return e != p + 1 && *e == '"' ? 0 : -1;
	}
	if (is_bool(p)) {
		*v = *p == 't';
		return 0;
	}
	double d = strtod(p, &e);
	if (e == p)
		return -1;
	*v = (long long)d; /* int() truncates a float */
	return 0;
}

/* TraceLens's reading of the reduced dims from Concrete Inputs[1:]: the
 * last bool is keepdim; the last other value that is an int or a list of
 * ints is dim (strings and nulls skipped).  The number of dims, -1 none. */
static int reduce_dims(const char *sig, long long *dim, int max, int *keepdim)
{
	long n = perf_sig_items(sig, "concrete");
	long kidx = -1;
	*keepdim = 0;
	for (long i = n - 1; i >= 1 && kidx < 0; i--) {
		const char *v = perf_sig_item(sig, "concrete", (size_t)i);
		if (v && is_bool(v)) {
			*keepdim = *v == 't';
			kidx = i;
		}
	}
	for (long i = n - 1; i >= 1; i--) {
		const char *v = perf_sig_item(sig, "concrete", (size_t)i);
		if (i == kidx || !v || *v == '"' || !strncmp(v, "null", 4))
			continue;
		if (*v == '[') {
			int nd = 0, ok = 1;
			for (const char *p = v + 1; *p && *p != ']' && ok;) {
				if (*p == ',' || *p == ' ') {
					p++;
					continue;
				}
				ok = nd < max && *p != '[' && as_int(p, &dim[nd++]) == 0;
				if (*p == '"') {
					for (p++; *p && *p != '"'; p++)
						if (*p == '\\' && p[1])
							p++;
					p += *p != '\0';
				}
				while (*p && *p != ',' && *p != ']')
					p++;
			}
			if (ok)
				return nd;
			continue;
		}
		if (!is_bool(v) && strspn(v, "-0123456789") > 0 && !strchr(".eE", v[strspn(v, "-0123456789")])) {
			dim[0] = strtoll(v, NULL, 10);
			return 1;
		}
	}
	return -1;
}

static int reduce_model(const struct perf_inst *in, struct perf_model *m)
{
	const char *sig = in->sig;
	size_t oplen = strcspn(sig, " ");
	const char *d0 = perf_sig_item(sig, "dims", 0);
	m->np = 0;
	if (!d0 || !strncmp(d0, "null", 4)) {
		/* No input: TraceLens's empty parameters, no reduce_type. */
		int rc = perf_param(m, "num_input_elems", "0");
		rc = rc ? rc : perf_param(m, "num_output_elems", "0");
		rc = rc ? rc : perf_param(m, "dtype_in_out", "(None, None)");
		m->flops = 0;
		m->bytes = NAN;
		m->spec = "";
		return rc;
	}
	long long shp[MAXD], nin, dim[MAXD], nout = 1;
	int ns = perf_shape(d0, shp, MAXD, &nin);
	if (ns < 0)
		return EV_ERR_FORMAT;
	char t[64] = "", r[96] = "None";
	const char *t0 = perf_sig_item(sig, "types", 0);
	if (t0 && perf_type(t0, t, sizeof t, r, sizeof r))
		return EV_ERR_FORMAT;
	int keepdim, nd = reduce_dims(sig, dim, MAXD, &keepdim);
	char name[64];
	snprintf(name, sizeof name, "%.*s", (int)oplen, sig);
	if (strstr(name, "cumsum") || strstr(name, "cumprod"))
		nout = nin;
	else if (nd > 0) {
		/* Drop (or set to 1) each reduced dim, the highest first. */
		long long out[MAXD];
		int no = ns;
		memcpy(out, shp, sizeof out);
		for (int i = 0; i < nd; i++)
			if (dim[i] < 0)
				dim[i] += ns;
		for (int k = 0; k < nd; k++) {
			int hi = k;
			for (int j = k + 1; j < nd; j++)
				if (dim[j] > dim[hi])
					hi = j;
			long long d = dim[hi];
			dim[hi] = dim[k];
			dim[k] = d;
			if (d < 0 || d >= no)
				continue;
			if (keepdim)
				out[d] = 1;
			else {
				memmove(out + d, out + d + 1, (size_t)(no - d - 1) * sizeof *out);
				no--;
			}
		}
		for (int i = 0; i < no; i++)
			nout *= out[i];
	}
	const char *type = strstr(name, "mean") ? "mean" : strstr(name, "max") ? "max" : strstr(name, "min") ? "min"
	                 : strstr(name, "norm") ? "norm" : "sum";
	int rc = perf_param(m, "num_input_elems", "%lld", nin);
	rc = rc ? rc : perf_param(m, "num_output_elems", "%lld", nout);
	rc = rc ? rc : perf_param(m, "dtype_in_out", "(%s, None)", r);
	rc = rc ? rc : perf_param(m, "reduce_type", "%s", type);
	int b = *t ? perf_dtype_bytes(t) : 0;
	m->flops = (double)nin;
	m->bytes = b ? (double)(nin * b + nout * b) : NAN;
	m->spec = perf_vector_spec(t);
	return rc;
}

const struct perf_category perf_category_reduce = {
	.sheet = "Reduce_fwd",
	.ops = reduce_ops,
	.unmodelled = NULL,
	.model = reduce_model,
	.note = NULL,
};

/* Reduce_bwd: TraceLens's Reduce model gives the backward the forward's
 * FLOPs (one per input element) and bytes (grad_output read, grad_input
 * written: the same elements at the same sizes). */
const struct perf_category perf_category_reduce_bwd = {
	.sheet = "Reduce_bwd",
	.ops = reduce_ops,
	.unmodelled = NULL,
	.model = reduce_model,
	.note = NULL,
	.bwd = 1,
};
