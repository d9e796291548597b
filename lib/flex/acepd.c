/* SPDX-License-Identifier: MIT */
/*
 * acepd.c - acelyzer's _categories.txt: the categories table as pandas
 * 1.5's DataFrame.to_string(index=False) writes it (rcu_utilization.py
 * prints its sorted frame so).  The rules, from pandas' io/formats:
 *  - every column right-justified to its widest cell, header included;
 *    columns joined by one blank;
 *  - a numeric column's header gets one leading blank, a text column's
 *    none; values have no leading blank (index=False);
 *  - integers as "%d";
 *  - floats as "%.6f" (display.precision 6), then trailing zeros cut from
 *    every value of the column while all of them end in '0', keeping one
 *    digit after the point; "%.6e" (untrimmed) instead when a value is
 *    non-zero below 1e-6, or above 1e6 with a "%.6f" cell over 12
 *    characters; NaN as "NaN";
 *  - no rows: "Empty DataFrame", the columns, "Index: []".
 * Which columns are integers follows acelyzer: Frac_Time, Frac_Ideal and
 * PT_Util hold Python's int 0 where their divisor is 0, so a column of
 * only those is int64 (Frac_Ideal with no ideal time at all; Frac_Time
 * and PT_Util with no kernel time), else float64.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "flex/acepd_int.h"

/* kind: 'i' integer, 's' text, 'f' float, 'z' float unless every value of
 * column ref (a field index) is 0, then integer. */
struct pcol {
	const char *col;
	char kind;
	int ref;
};

static const struct pcol cat_cols[] = {
	{ "Pid", 'i', 0 },         { "Phase", 's', 0 }, { "Category", 's', 0 },   { "Kernel_Time", 'f', 0 },
	{ "Frac_Time", 'z', 4 },   { "Calls", 'i', 0 }, { "Ideal_Time", 'f', 0 }, { "Ideal_Cyc", 'i', 0 },
	{ "Frac_Ideal", 'z', 8 },  { "PT_Util", 'z', 4 },
};
#define NCOLS (sizeof cat_cols / sizeof *cat_cols)

int acepd_header(struct ev_flex_acetext *a, const char *const *cols, size_t ncols)
{
	for (size_t i = 0; i < NCOLS; i++) {
		size_t c = 0;
		while (c < ncols && strcmp(cols[c], cat_cols[i].col))
			c++;
		if (c == ncols)
			return EV_ERR_ARG;
		a->ix[i] = c;
	}
	return EV_OK;
}

static int put(struct ev_flex_acetext *a, const char *s)
{
	size_t n = strlen(s) + 1;
	if (a->len + n > a->cap) {
		size_t cap = a->cap ? a->cap * 2 : 4096;
		while (cap < a->len + n)
			cap *= 2;
		char *p = realloc(a->cells, cap);
		if (!p)
			return EV_ERR_NOMEM;
		a->cells = p;
		a->cap = cap;
	}
	memcpy(a->cells + a->len, s, n);
	a->len += n;
	return EV_OK;
}

int acepd_row(struct ev_flex_acetext *a, const char *const *cells)
{
	int rc = EV_OK;
	for (size_t i = 0; i < NCOLS && !rc; i++)
		rc = put(a, cells[a->ix[i]]);
	a->nrows += !rc;
	return rc;
}

/* pandas' "number with decimal": [blanks][sign]digits '.' digits*. */
static int has_point(const char *s)
{
	if (*s == '+' || *s == '-')
		s++;
	if (*s < '0' || *s > '9')
		return 0;
	while (*s >= '0' && *s <= '9')
		s++;
	if (*s++ != '.')
		return 0;
	while (*s >= '0' && *s <= '9')
		s++;
	return !*s;
}

/* pandas' _trim_zeros_float over a column's cells (each 32 bytes). */
static void trim_zeros(char (*v)[32], size_t n)
{
	for (;;) {
		size_t nums = 0, zeros = 0;
		for (size_t i = 0; i < n; i++)
			if (has_point(v[i])) {
				nums++;
				zeros += v[i][strlen(v[i]) - 1] == '0';
			}
		if (!nums || zeros < nums)
			break;
		for (size_t i = 0; i < n; i++)
			if (has_point(v[i]))
				v[i][strlen(v[i]) - 1] = '\0';
	}
	for (size_t i = 0; i < n; i++) {
		size_t l = strlen(v[i]);
		if (has_point(v[i]) && v[i][l - 1] == '.')
			memcpy(v[i] + l, "0", 2);
	}
}

/* sci: "%.6e", else "%.6f". */
static void fmt_floats(const double *x, char (*v)[32], size_t n, int sci)
{
	for (size_t i = 0; i < n; i++)
		if (isnan(x[i]))
			memcpy(v[i], "NaN", 4);
		else if (sci)
			snprintf(v[i], sizeof v[i], "%.6e", x[i]);
		else
			snprintf(v[i], sizeof v[i], "%.6f", x[i]);
	trim_zeros(v, n);
}

/* A float column as pandas formats it. */
static void float_col(const double *x, char (*v)[32], size_t n)
{
	int large = 0, small = 0;
	size_t maxlen = 0;
	fmt_floats(x, v, n, 0);
	for (size_t i = 0; i < n; i++) {
		double m = fabs(x[i]);
		large |= m > 1e6;
		small |= m > 0 && m < 1e-6;
		if (strlen(v[i]) > maxlen)
			maxlen = strlen(v[i]);
	}
	if (small || (large && maxlen > 12))
		fmt_floats(x, v, n, 1);
}

static double num(const char *s)
{
	char *end;
	double d = *s ? strtod(s, &end) : NAN;
	return *s && *end ? NAN : d;
}

/* Whether every value of field f is 0. */
static int all_zero(const char *const *row0, size_t nrows, size_t f)
{
	for (size_t r = 0; r < nrows; r++)
		if (num(row0[r * NCOLS + f]) != 0)
			return 0;
	return 1;
}

static int empty_frame(ev_output *out)
{
	int rc = ev_output_printf(out, "Empty DataFrame\nColumns: [");
	for (size_t i = 0; i < NCOLS && !rc; i++)
		rc = ev_output_printf(out, "%s%s", i ? ", " : "", cat_cols[i].col);
	return rc ? rc : ev_output_printf(out, "]\nIndex: []\n");
}

/* Each column's cells as text (numbers formatted into txt, text as it
 * is), then the lines. */
static int write_rows(struct ev_flex_acetext *a, const char **cell, char (*txt)[32], double *x)
{
	size_t n = a->nrows, width[NCOLS];
	char kind[NCOLS];
	const char *p = a->cells;
	for (size_t i = 0; i < n * NCOLS; i++, p += strlen(p) + 1)
		cell[i] = p;
	for (size_t f = 0; f < NCOLS; f++) {
		const struct pcol *c = &cat_cols[f];
		kind[f] = c->kind == 'z' ? (all_zero(cell, n, (size_t)c->ref) ? 'i' : 'f') : c->kind;
	}
	for (size_t f = 0; f < NCOLS; f++) {
		width[f] = strlen(cat_cols[f].col) + (kind[f] != 's');
		for (size_t r = 0; r < n; r++)
			x[r] = num(cell[r * NCOLS + f]);
		if (kind[f] == 'f')
			float_col(x, txt + f * n, n);
		for (size_t r = 0; r < n; r++) {
			const char **c = &cell[r * NCOLS + f];
			if (kind[f] == 'i' && isnan(x[r]))
				memcpy(txt[f * n + r], "NaN", 4);
			else if (kind[f] == 'i')
				snprintf(txt[f * n + r], sizeof *txt, "%.0f", x[r]);
			if (kind[f] != 's')
				*c = txt[f * n + r];
			if (strlen(*c) > width[f])
				width[f] = strlen(*c);
		}
	}
	/* A numeric header's leading blank is within its width. */
	int rc = EV_OK;
	for (size_t f = 0; f < NCOLS && !rc; f++)
		rc = ev_output_printf(a->out, "%s%*s", f ? " " : "", (int)width[f], cat_cols[f].col);
	rc = rc ? rc : ev_output_putc(a->out, '\n');
	for (size_t r = 0; r < n && !rc; r++) {
		for (size_t f = 0; f < NCOLS && !rc; f++)
			rc = ev_output_printf(a->out, "%s%*s", f ? " " : "", (int)width[f], cell[r * NCOLS + f]);
		rc = rc ? rc : ev_output_putc(a->out, '\n');
	}
	return rc;
}

int acepd_end(struct ev_flex_acetext *a)
{
	if (!a->nrows)
		return empty_frame(a->out);
	size_t n = a->nrows;
	const char **cell = malloc(n * NCOLS * sizeof *cell);
	char(*txt)[32] = malloc(n * NCOLS * sizeof *txt);
	double *x = malloc(n * sizeof *x);
	int rc = cell && txt && x ? write_rows(a, cell, txt, x) : EV_ERR_NOMEM;
	free(cell);
	free(txt);
	free(x);
	return rc;
}
