/* SPDX-License-Identifier: MIT */
/*
 * perf_args.c - model helpers the vector categories (perf_unary.c,
 * perf_binary.c, perf_reduce.c) share: a parameter as Python prints it,
 * an argument's shape, tuple and type name, read from an op signature as
 * TraceLens reads its event's args.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/perf.h"
#include "analysis/pyrepr.h"
#include "ev/stream.h"

int perf_param(struct perf_model *m, const char *name, const char *fmt, ...)
{
	if (m->np == PERF_MAXP)
		return EV_ERR_FORMAT;
	va_list ap;
	va_start(ap, fmt);
	int w = vsnprintf(m->pval[m->np], PERF_PVAL, fmt, ap);
	va_end(ap);
	if (w < 0 || w >= PERF_PVAL)
		return EV_ERR_FORMAT;
	m->pname[m->np++] = name;
	return EV_OK;
}

int perf_shape(const char *p, long long *v, int max, long long *prod)
{
	int n = 0;
	long long x = 1;
	if (!p || *p != '[')
		return -1;
	for (p++; *p && *p != ']';) {
		if (*p == ',' || *p == ' ') {
			p++;
			continue;
		}
		char *e;
		long long d = strtoll(p, &e, 10);
		if (e == p || n == max || *e == '.' || *e == 'e' || *e == 'E')
			return -1;
		v[n++] = d;
		x *= d;
		p = e;
	}
	if (prod)
		*prod = x;
	return n;
}

int perf_tuple(struct perf_model *m, const char *name, const char *item)
{
	if (!item || *item != '[')
		return EV_ERR_FORMAT; /* tuple() of a missing or scalar argument fails */
	/* tuple(list): the outer brackets as a tuple's, the items as str()
	 * prints them (an inner list stays a list). */
	struct pytext t = { 0 };
	size_t items = 0;
	pyt_puts(&t, "(");
	for (const char *p = item + 1; *p && *p != ']';) {
		if (*p == ',' || *p == ' ') {
			p++;
			continue;
		}
		if (items++)
			pyt_puts(&t, ", ");
		p = py_value(&t, p, 0);
	}
	pyt_puts(&t, items == 1 ? ",)" : ")");
	int rc = t.oom ? EV_ERR_NOMEM : perf_param(m, name, "%s", pyt_str(&t));
	free(t.p);
	return rc;
}

int perf_type(const char *item, char *name, size_t n, char *repr, size_t rn)
{
	size_t w = 0;
	if (!item || *item != '"')
		return -1;
	const char *p;
	for (p = item + 1; *p && *p != '"' && w + 1 < n; p++) {
		if (*p == '\\' && p[1])
			p++;
		name[w++] = *p;
	}
	name[w] = '\0';
	if (*p != '"')
		return -1;
	struct pytext t = { 0 };
	py_string(&t, item + 1);
	int rc = t.oom || t.n >= rn ? -1 : 0;
	if (!rc)
		memcpy(repr, pyt_str(&t), t.n + 1);
	free(t.p);
	return rc;
}

int perf_truthy_list(const char *item)
{
	if (!item || *item != '[')
		return 0;
	for (const char *p = item + 1; *p && *p != ']'; p++)
		if (*p != ' ')
			return 1;
	return 0;
}

const char *perf_vector_spec(const char *dtype)
{
	static const char *const specs[] = { "vector_fp64", "vector_fp32", "vector_fp16", "vector_bf16",
		                             "vector_fp8", "vector_fp4" };
	static const char *const precs[] = { "fp64", "fp32", "fp16", "bf16", "fp8", "fp4" };
	const char *prec = dtype && *dtype ? perf_dtype_precision(dtype) : NULL;
	for (size_t i = 0; prec && i < sizeof precs / sizeof precs[0]; i++)
		if (!strcmp(prec, precs[i]))
			return specs[i];
	return "";
}
