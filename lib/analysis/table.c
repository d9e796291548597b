/* SPDX-License-Identifier: MIT */
/*
 * table.c - result tables as TSV, CSV, JSON or Markdown.  Rows stream out
 * as they are produced; numbers print in the shortest form that reads back
 * to the same double, so tables can be compared exactly.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ev.h"

struct ev_table {
	ev_output *out;
	enum ev_table_fmt fmt;
	const char *const *cols;
	size_t ncols, col;
	uint64_t rows;
	int err;
};

static int put(ev_table *t, const char *s, size_t n)
{
	if (!t->err)
		t->err = ev_output_write(t->out, s, n);
	return t->err;
}

static int puts_(ev_table *t, const char *s)
{
	return put(t, s, strlen(s));
}

/* Text cell, quoted per format. */
static int text(ev_table *t, const char *s)
{
	size_t n = strlen(s);
	switch (t->fmt) {
	case EV_TABLE_JSON: {
		char *buf = malloc(6 * n + 3);
		if (!buf)
			return t->err = EV_ERR_NOMEM;
		put(t, buf, ev_json_escape(s, n, buf, 6 * n + 3));
		free(buf);
		return t->err;
	}
	case EV_TABLE_CSV:
		if (strpbrk(s, ",\"\r\n")) {
			puts_(t, "\"");
			for (const char *p = s; *p; p++) {
				put(t, p, 1);
				if (*p == '"')
					put(t, "\"", 1);
			}
			return puts_(t, "\"");
		}
		return put(t, s, n);
	case EV_TABLE_MD:
		for (const char *p = s; *p; p++) {
			if (*p == '|')
				puts_(t, "\\|");
			else if (*p == '\n' || *p == '\t')
				puts_(t, " ");
			else
				put(t, p, 1);
		}
		return t->err;
	case EV_TABLE_TSV:
	default:
		for (const char *p = s; *p; p++) {
			if (*p == '\t')
				puts_(t, "\\t");
			else if (*p == '\n')
				puts_(t, "\\n");
			else if (*p == '\\')
				puts_(t, "\\\\");
			else
				put(t, p, 1);
		}
		return t->err;
	}
}

int ev_table_open(ev_table **tp, ev_output *out, enum ev_table_fmt fmt, const char *const *cols, size_t ncols)
{
	ev_table *t = calloc(1, sizeof *t);
	*tp = t;
	if (!t)
		return EV_ERR_NOMEM;
	t->out = out;
	t->fmt = fmt;
	t->cols = cols;
	t->ncols = ncols;
	if (fmt == EV_TABLE_JSON)
		return puts_(t, "[");
	for (size_t i = 0; i < ncols; i++) {
		if (fmt == EV_TABLE_MD)
			puts_(t, i ? " | " : "| ");
		else if (i)
			puts_(t, fmt == EV_TABLE_CSV ? "," : "\t");
		text(t, cols[i]);
	}
	if (fmt == EV_TABLE_MD) {
		puts_(t, " |\n");
		for (size_t i = 0; i < ncols; i++)
			puts_(t, "|---");
		puts_(t, "|\n");
	} else {
		puts_(t, "\n");
	}
	return t->err;
}

/* Separator before a cell, and row start. */
static int before(ev_table *t)
{
	if (t->fmt == EV_TABLE_JSON) {
		if (t->col == 0)
			puts_(t, t->rows ? ",\n{" : "\n{");
		else
			puts_(t, ",");
		text(t, t->cols[t->col]);
		return puts_(t, ":");
	}
	if (t->fmt == EV_TABLE_MD)
		return puts_(t, t->col ? " | " : "| ");
	if (t->col)
		return puts_(t, t->fmt == EV_TABLE_CSV ? "," : "\t");
	return t->err;
}

static int after(ev_table *t)
{
	if (++t->col == t->ncols) {
		t->col = 0;
		t->rows++;
		if (t->fmt == EV_TABLE_JSON)
			return puts_(t, "}");
		return puts_(t, t->fmt == EV_TABLE_MD ? " |\n" : "\n");
	}
	return t->err;
}

int ev_table_str(ev_table *t, const char *s)
{
	before(t);
	text(t, s ? s : "");
	return after(t);
}

int ev_table_u64(ev_table *t, uint64_t v)
{
	char b[32];
	snprintf(b, sizeof b, "%llu", (unsigned long long)v);
	before(t);
	puts_(t, b);
	return after(t);
}

int ev_table_i64(ev_table *t, int64_t v)
{
	char b[32];
	snprintf(b, sizeof b, "%lld", (long long)v);
	before(t);
	puts_(t, b);
	return after(t);
}

int ev_table_null(ev_table *t)
{
	before(t);
	if (t->fmt == EV_TABLE_JSON)
		puts_(t, "null");
	return after(t);
}

int ev_table_f64(ev_table *t, double v)
{
	char b[40];
	if (!isfinite(v))
		return ev_table_null(t);
	if (v == 0)
		v = 0; /* no "-0" */
	for (int prec = 15; prec <= 17; prec++) {
		snprintf(b, sizeof b, "%.*g", prec, v);
		if (strtod(b, NULL) == v)
			break;
	}
	before(t);
	puts_(t, b);
	return after(t);
}

int ev_table_close(ev_table *t)
{
	if (!t)
		return EV_OK;
	int rc = t->err;
	if (!rc && t->col)
		rc = EV_ERR_ARG; /* a row left unfinished */
	if (!rc && t->fmt == EV_TABLE_JSON)
		rc = ev_output_write(t->out, t->rows ? "\n]\n" : "]\n", t->rows ? 3 : 2);
	free(t);
	return rc;
}
