/* SPDX-License-Identifier: MIT */
/*
 * perf_triton.c - TraceLens's model of torch.compile's Triton kernels
 * (triton_poi_*, triton_red_*, triton_per_*: pointwise, reduction,
 * persistent reduction), from the launching op's own args (its "V2",
 * PerfModel/triton_compiled_perf_model.py, TraceLens 171dd74).
 *
 * The fused ATen ops come from the kernel's name: "triton_poi_fused_"
 * NAMES "_" DIGITS, NAMES the ops' names joined by '_' and cut where
 * TraceLens's op registry has names (perf_triton_ops.c), the longest name
 * first from the end.  The integers of Concrete Inputs are the sizes: a
 * reduction's last two are xnumel and rnumel, else the last is xnumel
 * (rnumel 1).  FLOPs: the sum of each fused op's FLOPs per element
 * (0 for ops not in its table) times xnumel * rnumel.  Bytes: every
 * tensor argument (a non-empty Input Dims whose type is not "Scalar"),
 * its elements at its c10 dtype's size (0 unknown), plus, for a
 * pointwise kernel, one more write of xnumel elements at the first
 * tensor's size (an output that reuses an input buffer).  Compute Spec
 * "vector_" and the first sized tensor's dtype, lowercase.  Parameters
 * fused_ops ("aten.mul, aten.silu"), xnumel, rnumel.
 *
 * Without Concrete Inputs, Input Dims and Input type TraceLens reads the
 * Inductor wrappers in the profiled machine's cache directory ("V1");
 * evkit does not, and says so (PERF_NOARGS).
 */
#include <ctype.h>
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/perf.h"
#include "ev/stream.h"

static const char *const triton_prefixes[] = { "triton_poi_", "triton_red_", "triton_per_", NULL };

#define MAXTOK 256 /* '_'-separated words of a kernel name's ops */
#define MAXD 16

/* TraceLens's FLOPs per element of an op fused in a kernel. */
static const struct { const char *op; int flops; } op_flops[] = {
	{ "add", 1 }, { "sub", 1 }, { "mul", 1 }, { "div", 1 }, { "pow", 2 }, { "sqrt", 2 },
	{ "rsqrt", 2 }, { "exp", 4 }, { "log", 4 }, { "sigmoid", 4 }, { "tanh", 4 }, { "relu", 1 },
	{ "silu", 4 }, { "gelu", 8 }, { "mean", 1 }, { "sum", 1 }, { "var", 2 }, { "abs", 1 },
	{ "neg", 1 }, { "reciprocal", 2 }, { "ne", 1 }, { "eq", 1 }, { "lt", 1 }, { "gt", 1 },
};

/* Its bytes per element of a c10 dtype, and the spec it names. */
static const struct { const char *type; int bytes; const char *spec; } c10_types[] = {
	{ "c10::BFloat16", 2, "vector_bfloat16" }, { "c10::Half", 2, "vector_half" },
	{ "c10::Float", 4, "vector_float" },       { "c10::Double", 8, "vector_double" },
	{ "c10::Byte", 1, "vector_byte" },         { "c10::Char", 1, "vector_char" },
	{ "c10::Int", 4, "vector_int" },           { "c10::Long", 8, "vector_long" },
};

static int flops_of(const char *op, size_t n)
{
	for (size_t i = 0; i < sizeof op_flops / sizeof op_flops[0]; i++)
		if (strlen(op_flops[i].op) == n && !strncmp(op, op_flops[i].op, n))
			return op_flops[i].flops;
	return 0;
}

/* The fused ops of a kernel's name as "aten.a, aten.b" into b, their
 * FLOPs per element into *fpe; "" when the name does not tell them
 * (TraceLens's empty list).  EV_ERR_FORMAT when b is too small. */
static int fused_ops(const char *name, size_t len, char *b, size_t bn, long long *fpe)
{
	*fpe = 0;
	b[0] = '\0';
	const size_t pre = strlen("triton_poi_fused_");
	if (len <= pre || strncmp(name + 11, "fused_", 6))
		return EV_OK;
	/* NAMES "_" DIGITS: the last '_' with only digits after it. */
	size_t u = len;
	while (u > pre && isdigit((unsigned char)name[u - 1]))
		u--;
	if (u == len || u <= pre + 1 || name[u - 1] != '_')
		return EV_OK;
	const char *ops = name + pre;
	size_t on = u - 1 - pre;
	/* Words: start[k], end[k] in ops; a name runs from a word's start to
	 * a later word's end. */
	size_t start[MAXTOK], end[MAXTOK], n = 0;
	for (size_t i = 0;; i++) {
		if (n == MAXTOK)
			return EV_ERR_FORMAT;
		start[n] = i;
		while (i < on && ops[i] != '_')
			i++;
		end[n++] = i;
		if (i == on)
			break;
	}
	/* reach[i]: the first i words cut into registry names. */
	unsigned char reach[MAXTOK + 1] = { 1 };
	for (size_t i = 1; i <= n; i++)
		for (size_t j = 0; j < i && !reach[i]; j++)
			reach[i] = reach[j] && perf_triton_known_op(ops + start[j], end[i - 1] - start[j]);
	if (!reach[n])
		return EV_OK;
	/* From the end, the longest name (the first word furthest back). */
	size_t cut[MAXTOK + 1], nc = 0;
	for (size_t pos = n; pos > 0;) {
		size_t j = 0;
		while (!(reach[j] && perf_triton_known_op(ops + start[j], end[pos - 1] - start[j])))
			j++;
		cut[nc++] = pos;
		pos = j;
	}
	size_t w = 0;
	for (size_t k = nc; k-- > 0;) {
		size_t to = cut[k], from = k + 1 < nc ? cut[k + 1] : 0;
		const char *op = ops + start[from];
		size_t ol = end[to - 1] - start[from];
		*fpe += flops_of(op, ol);
		if (w + (w ? 2 : 0) + 5 + ol >= bn)
			return EV_ERR_FORMAT;
		w += (size_t)snprintf(b + w, bn - w, "%saten.%.*s", w ? ", " : "", (int)ol, op);
	}
	return EV_OK;
}

/* Python's int() of a Concrete Inputs item, 1 when it is one: a string of
 * an integer (blanks around, a sign, '_' between digits), a number
 * (truncated) or a boolean. */
static int concrete_int(const char *p, long long *v)
{
	if (!strncmp(p, "true", 4) || !strncmp(p, "false", 5)) {
		*v = *p == 't';
		return 1;
	}
	if (*p != '"') {
		char *e;
		double d = strtod(p, &e);
		if (e == p || (*e && *e != ',' && *e != ']' && *e != ' ') || !(fabs(d) < 9.2e18))
			return 0;
		*v = (long long)d;
		return 1;
	}
	p++;
	while (*p == ' ' || *p == '\t')
		p++;
	int neg = *p == '-';
	p += *p == '-' || *p == '+';
	if (!isdigit((unsigned char)*p))
		return 0;
	unsigned long long x = 0;
	for (; isdigit((unsigned char)*p) || (*p == '_' && isdigit((unsigned char)p[1])); p++) {
		if (*p == '_')
			continue;
		if (x > (ULLONG_MAX - 9) / 10)
			return 0;
		x = x * 10 + (unsigned)(*p - '0');
	}
	while (*p == ' ' || *p == '\t')
		p++;
	if (*p != '"' || x > (unsigned long long)LLONG_MAX)
		return 0;
	*v = neg ? -(long long)x : (long long)x;
	return 1;
}

/* a * b + c into *r; 0 when it overflows. */
static int mul_add(long long a, long long b, long long c, long long *r)
{
	if (a < 0 || b < 0 || c < 0 || (b && a > (LLONG_MAX - c) / b))
		return 0;
	*r = a * b + c;
	return 1;
}

static int triton_model(const struct perf_inst *in, struct perf_model *m)
{
	const char *sig = in->sig;
	size_t len = strcspn(sig, " ");
	long nc = perf_sig_items(sig, "concrete"), nd = perf_sig_items(sig, "dims"), nt = perf_sig_items(sig, "types");
	if (nc < 1 || nd < 1 || nt < 1)
		return PERF_NOARGS;
	int reduction = !strncmp(sig, "triton_red_", 11) || !strncmp(sig, "triton_per_", 11);
	long long last[2] = { 0, 0 }, x;
	long ns = 0;
	for (long i = 0; i < nc; i++)
		if (concrete_int(perf_sig_item(sig, "concrete", (size_t)i), &x)) {
			last[0] = last[1];
			last[1] = x;
			ns++;
		}
	if (!ns)
		return PERF_NOARGS; /* TraceLens's V2 has no sizes: V1 */
	long long xnumel = reduction && ns >= 2 ? last[0] : last[1], rnumel = reduction && ns >= 2 ? last[1] : 1;

	long long bytes = 0, first = -1, shape[MAXD], elems;
	const char *spec = NULL;
	for (long i = 0; i < nd && i < nt; i++) {
		const char *d = perf_sig_item(sig, "dims", (size_t)i), *t = perf_sig_item(sig, "types", (size_t)i);
		char type[64];
		int named = perf_type_name(t, type, sizeof type) == 0;
		if (named && !strcmp(type, "Scalar"))
			continue;
		if (!perf_truthy_list(d)) {
			if (*d == '[' || !strncmp(d, "null", 4))
				continue;
			return EV_ERR_FORMAT; /* a dims Python cannot take the product of */
		}
		if (perf_shape(d, shape, MAXD, &elems) < 0)
			return EV_ERR_FORMAT;
		int b = 0;
		for (size_t k = 0; named && k < sizeof c10_types / sizeof c10_types[0]; k++)
			if (!strcmp(type, c10_types[k].type)) {
				b = c10_types[k].bytes;
				spec = spec ? spec : c10_types[k].spec;
			}
		first = first < 0 ? b : first;
		if (!mul_add(elems, b, bytes, &bytes))
			return EV_ERR_FORMAT;
	}
	if (!strncmp(sig, "triton_poi_", 11) && first >= 0 && !mul_add(first, xnumel, bytes, &bytes))
		return EV_ERR_FORMAT;

	char ops[PERF_PVAL];
	long long fpe, total, flops;
	int rc = fused_ops(sig, len, ops, sizeof ops, &fpe);
	if (rc)
		return rc;
	if (!mul_add(xnumel, rnumel, 0, &total) || !mul_add(fpe, total, 0, &flops))
		return EV_ERR_FORMAT;
	m->np = 0;
	rc = perf_param(m, "fused_ops", "%s", ops);
	rc = rc ? rc : perf_param(m, "xnumel", "%lld", xnumel);
	rc = rc ? rc : perf_param(m, "rnumel", "%lld", rnumel);
	if (rc)
		return rc;
	m->flops = (double)flops;
	m->bytes = (double)bytes;
	m->spec = spec ? spec : "";
	return EV_OK;
}

const struct perf_category perf_category_triton = {
	.sheet = "triton",
	.ops = triton_prefixes,
	.model = triton_model,
	.noargs = "TraceLens's Triton model reads Concrete Inputs, Input Dims and Input type from the trace, "
	          "and without them the Inductor cache directory of the machine it runs on, which evkit does "
	          "not read (TraceLens leaves the op's row out when the cache has no wrapper of its kernel)",
};
