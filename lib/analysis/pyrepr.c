/* SPDX-License-Identifier: MIT */
/*
 * pyrepr.c - Python's text of values (pyrepr.h).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/pyrepr.h"
#include "ev/numtext.h"

void pyt_put(struct pytext *t, const char *s, size_t n)
{
	if (t->oom)
		return;
	if (t->n + n + 1 > t->cap) {
		size_t cap = t->cap ? t->cap : 256;
		while (cap < t->n + n + 1)
			cap *= 2;
		char *np = realloc(t->p, cap);
		if (!np) {
			t->oom = 1;
			return;
		}
		t->p = np;
		t->cap = cap;
	}
	memcpy(t->p + t->n, s, n);
	t->n += n;
	t->p[t->n] = '\0';
}

void pyt_puts(struct pytext *t, const char *s)
{
	pyt_put(t, s, strlen(s));
}

const char *pyt_str(const struct pytext *t)
{
	return t->p && t->n ? t->p : "";
}

/* Python's escape of the character c inside quotes q, or NULL. */
static const char *py_escape(char c, char q)
{
	switch (c) {
	case '\\': return "\\\\";
	case '\n': return "\\n";
	case '\t': return "\\t";
	case '\r': return "\\r";
	case '\'': return q == '\'' ? "\\'" : NULL;
	case '"': return q == '"' ? "\\\"" : NULL;
	default: return NULL;
	}
}

/* Single quotes, or double ones when the text holds a single quote and no
 * double one, as Python chooses.  Runs of plain characters go in one put. */
const char *py_string(struct pytext *t, const char *p)
{
	int sq = 0, dq = 0;
	const char *e = p;
	for (; *e && *e != '"'; e++) {
		if (*e == '\\' && e[1]) {
			e++;
			dq |= *e == '"';
		}
		sq |= *e == '\'';
	}
	char q = sq && !dq ? '"' : '\'';
	pyt_put(t, &q, 1);
	while (p < e) {
		size_t span = strcspn(p, "\\\n\t\r'\"");
		if (span > (size_t)(e - p))
			span = (size_t)(e - p);
		pyt_put(t, p, span);
		if ((p += span) >= e)
			break;
		char c = *p++;
		if (c == '\\' && p < e) {
			c = *p++;
			c = c == 'n' ? '\n' : c == 't' ? '\t' : c == 'r' ? '\r' : c;
		}
		const char *x = py_escape(c, q);
		if (x)
			pyt_puts(t, x);
		else
			pyt_put(t, &c, 1);
	}
	pyt_put(t, &q, 1);
	return *e ? e + 1 : e;
}

void py_text(struct pytext *t, const char *s, size_t n)
{
	const char *end = s + n;
	char q = memchr(s, '\'', n) && !memchr(s, '"', n) ? '"' : '\'';
	pyt_put(t, &q, 1);
	while (s < end) {
		const char *p = s;
		while (p < end && !py_escape(*p, q))
			p++;
		pyt_put(t, s, (size_t)(p - s));
		if (p == end)
			break;
		pyt_puts(t, py_escape(*p, q));
		s = p + 1;
	}
	pyt_put(t, &q, 1);
}

static const char *value(struct pytext *t, const char *p, int tuples, int depth)
{
	if (*p == '"')
		return py_string(t, p + 1);
	if (*p == '[' && depth < 64) {
		size_t items = 0;
		pyt_puts(t, tuples ? "(" : "[");
		for (p++; *p && *p != ']';) {
			if (*p == ',' || *p == ' ') {
				p++;
				continue;
			}
			if (items++)
				pyt_puts(t, ", ");
			p = value(t, p, tuples, depth + 1);
		}
		pyt_puts(t, !tuples ? "]" : items == 1 ? ",)" : ")");
		return *p ? p + 1 : p;
	}
	const char *e = p;
	while (*e && *e != ',' && *e != ']' && *e != ' ')
		e++;
	if (e - p == 4 && !strncmp(p, "true", 4))
		pyt_puts(t, "True");
	else if (e - p == 5 && !strncmp(p, "false", 5))
		pyt_puts(t, "False");
	else if (e - p == 4 && !strncmp(p, "null", 4))
		pyt_puts(t, "None");
	else
		pyt_put(t, p, (size_t)(e - p));
	return e;
}

const char *py_value(struct pytext *t, const char *p, int tuples)
{
	return value(t, p, tuples, 0);
}

void py_float(struct pytext *t, double v)
{
	char out[64];
	if (isnan(v)) {
		pyt_puts(t, "nan");
		return;
	}
	if (isinf(v)) {
		pyt_puts(t, v < 0 ? "-inf" : "inf");
		return;
	}
	/* The fewest significant digits that read back to v. */
	char digits[24];
	int exp10 = 0;
	size_t nd = 1;
	if (v == 0)
		strcpy(digits, "0");
	else
		nd = (size_t)ev_num_shortest(v, digits, &exp10);
	size_t w = 0;
	if (v < 0 || (v == 0 && signbit(v)))
		out[w++] = '-';
	if (exp10 >= -4 && exp10 < 16) {
		if (exp10 < 0) {
			out[w++] = '0';
			out[w++] = '.';
			for (int i = -1; i > exp10; i--)
				out[w++] = '0';
			for (size_t i = 0; i < nd; i++)
				out[w++] = digits[i];
		} else {
			for (int i = 0; i <= exp10; i++)
				out[w++] = (size_t)i < nd ? digits[i] : '0';
			out[w++] = '.';
			if ((size_t)exp10 + 1 >= nd)
				out[w++] = '0';
			for (size_t i = (size_t)exp10 + 1; i < nd; i++)
				out[w++] = digits[i];
		}
		out[w] = '\0';
	} else {
		out[w++] = digits[0];
		if (nd > 1) {
			out[w++] = '.';
			for (size_t i = 1; i < nd; i++)
				out[w++] = digits[i];
		}
		snprintf(out + w, sizeof out - w, "e%c%02d", exp10 < 0 ? '-' : '+', exp10 < 0 ? -exp10 : exp10);
	}
	pyt_puts(t, out);
}
