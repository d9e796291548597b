/* SPDX-License-Identifier: MIT */
/*
 * table.c - result tables as TSV, CSV, JSON or Markdown, or as rows of
 * text cells for a sink (ev_table_open_sink: an Excel sheet, ...).  Rows
 * stream out as they are produced; numbers print in the shortest form that
 * reads back to the same double, so tables can be compared exactly (a sink
 * gets the same text).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ev/numtext.h"
#include "ev/table.h"

struct ev_table {
	ev_output *out;
	struct ev_table_sink sink; /* used instead of out when to_sink */
	int to_sink;
	enum ev_table_fmt fmt;
	const char *const *cols;
	size_t ncols, col;
	uint64_t rows;
	int err;
	char **cell;             /* sink: the row's cells as text */
	size_t *cell_len, *cell_cap;
	unsigned char *num;      /* sink: the cell is ev_table_f64's number */
};

/* sink: append to the current cell. */
static int cell_put(ev_table *t, const char *s, size_t n)
{
	size_t c = t->col;
	if (t->cell_len[c] + n + 1 > t->cell_cap[c]) {
		size_t cap = t->cell_cap[c] ? t->cell_cap[c] : 32;
		while (cap < t->cell_len[c] + n + 1)
			cap *= 2;
		char *nc = realloc(t->cell[c], cap);
		if (!nc)
			return t->err = EV_ERR_NOMEM;
		t->cell[c] = nc;
		t->cell_cap[c] = cap;
	}
	memcpy(t->cell[c] + t->cell_len[c], s, n);
	t->cell_len[c] += n;
	t->cell[c][t->cell_len[c]] = '\0';
	return EV_OK;
}

static int put(ev_table *t, const char *s, size_t n)
{
	if (t->err)
		return t->err;
	if (t->to_sink)
		return cell_put(t, s, n);
	return t->err = ev_output_write(t->out, s, n);
}

static int puts_(ev_table *t, const char *s)
{
	return put(t, s, strlen(s));
}

/* Text cell, quoted per format. */
static int text(ev_table *t, const char *s)
{
	size_t n = strlen(s);
	if (t->to_sink)
		return put(t, s, n);
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
		/* Plain spans in one write each; escapes between them. */
		for (const char *p = s;;) {
			size_t span = strcspn(p, "\t\n\\");
			if (span)
				put(t, p, span);
			p += span;
			if (!*p)
				break;
			puts_(t, *p == '\t' ? "\\t" : *p == '\n' ? "\\n" : "\\\\");
			p++;
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

int ev_table_open_sink(ev_table **tp, const struct ev_table_sink *sink, const char *name, const char *const *cols,
                       size_t ncols)
{
	ev_table *t = calloc(1, sizeof *t);
	*tp = t;
	if (!t)
		return EV_ERR_NOMEM;
	t->sink = *sink;
	t->to_sink = 1;
	t->cols = cols;
	t->ncols = ncols;
	t->cell = calloc(ncols ? ncols : 1, sizeof *t->cell);
	t->cell_len = calloc(ncols ? ncols : 1, sizeof *t->cell_len);
	t->cell_cap = calloc(ncols ? ncols : 1, sizeof *t->cell_cap);
	t->num = calloc(ncols ? ncols : 1, 1);
	if (!t->cell || !t->cell_len || !t->cell_cap || !t->num)
		return t->err = EV_ERR_NOMEM;
	return t->err = t->sink.header(t->sink.ctx, name, cols, ncols);
}

/* Separator before a cell, and row start. */
static int before(ev_table *t)
{
	if (t->to_sink) {
		t->cell_len[t->col] = 0;
		t->num[t->col] = 0;
		return cell_put(t, "", 0);
	}
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
	if (t->to_sink && t->col + 1 == t->ncols && !t->err)
		t->err = t->sink.row_num ? t->sink.row_num(t->sink.ctx, (const char *const *)t->cell, t->num, t->ncols)
		                         : t->sink.row(t->sink.ctx, (const char *const *)t->cell, t->ncols);
	if (++t->col == t->ncols) {
		t->col = 0;
		t->rows++;
		if (t->to_sink)
			return t->err;
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

/* Decimal digits of v, right-aligned in b[0..32); returns the start. */
static char *digits(uint64_t v, char b[32])
{
	char *p = b + 31;
	*p = '\0';
	do {
		*--p = (char)('0' + v % 10);
		v /= 10;
	} while (v);
	return p;
}

int ev_table_u64(ev_table *t, uint64_t v)
{
	char b[32];
	before(t);
	puts_(t, digits(v, b));
	return after(t);
}

int ev_table_i64(ev_table *t, int64_t v)
{
	char b[32];
	char *p = digits(v < 0 ? (uint64_t)0 - (uint64_t)v : (uint64_t)v, b);
	if (v < 0)
		*--p = '-';
	before(t);
	puts_(t, p);
	return after(t);
}

int ev_table_null(ev_table *t)
{
	before(t);
	if (!t->to_sink && t->fmt == EV_TABLE_JSON)
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
	ev_num_text(v, b, sizeof b, 0);
	before(t);
	puts_(t, b);
	if (t->to_sink)
		t->num[t->col] = 1;
	return after(t);
}

int ev_table_fixed(ev_table *t, double v, int decimals)
{
	char b[400]; /* 309 digits of DBL_MAX, a sign, a point and the decimals */
	if (!isfinite(v))
		return ev_table_null(t);
	if (decimals < 0)
		decimals = 0;
	if (decimals > 60)
		decimals = 60;
	snprintf(b, sizeof b, "%.*f", decimals, v);
	before(t);
	puts_(t, b);
	return after(t);
}

int ev_table_str_raw(ev_table *t, const char *s)
{
	if (t->to_sink || t->fmt != EV_TABLE_TSV)
		return ev_table_str(t, s);
	before(t);
	puts_(t, s ? s : "");
	return after(t);
}

int ev_table_close(ev_table *t)
{
	if (!t)
		return EV_OK;
	int rc = t->err;
	if (!rc && t->col)
		rc = EV_ERR_ARG; /* a row left unfinished */
	if (!rc && !t->to_sink && t->fmt == EV_TABLE_JSON)
		rc = ev_output_write(t->out, t->rows ? "\n]\n" : "]\n", t->rows ? 3 : 2);
	for (size_t i = 0; t->cell && i < t->ncols; i++)
		free(t->cell[i]);
	free(t->cell);
	free(t->num);
	free(t->cell_len);
	free(t->cell_cap);
	free(t);
	return rc;
}
