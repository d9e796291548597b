/* SPDX-License-Identifier: MIT */
/*
 * acetext.c - acelyzer's text layout of the summary, active and
 * ts_analysis tables: a table sink that takes flex-stats' rows by column
 * name and prints them in acelyzer's column order with its printf formats
 * (pipeline/stats.py), so that the file is byte for byte acelyzer's;
 * and the categories table as pandas prints it (acepd.c).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "flex/acepd_int.h"

/* One printed field: the separator before it, the table column it shows,
 * and how: 'f' a number with width and decimals, 'd' an integer with
 * width, 's' the text as it is. */
struct field {
	const char *sep, *col;
	char kind;
	int width, prec;
};

#define F83(c) { "\t ", c, 'f', 8, 3 }
#define TS_GAP(g) F83(g "_Mean"), F83(g "_Median"), F83(g "_Min"), F83(g "_Max"), F83(g "_StDev")

static const struct field summary_fields[] = {
	{ "", "percent", 'f', 5, 2 }, { "\t  ", "total_us", 'f', 9, 3 }, { "\t ", "calls", 'd', 5, 0 },
	F83("mean_us"), F83("median_us"), F83("min_us"), F83("max_us"), F83("stdev_us"),
	{ "\t ", "rank", 'd', 4, 0 }, { "\t ", "name", 's', 0, 0 },
};
static const struct field active_fields[] = {
	{ "", "kernel_time_us", 'f', 9, 3 }, { "\t  ", "elapsed_time_us", 'f', 9, 3 },
	{ "\t  ", "start_us", 'f', 9, 3 },   { "\t ", "end_us", 'f', 9, 3 },
	{ "\t ", "active_pct", 'f', 5, 2 },  { "\t ", "rank", 'd', 4, 0 },
};
static const struct field ts_fields[] = {
	{ " ", "Calls", 'd', 5, 0 }, TS_GAP("TS2-1"), TS_GAP("TS3-2"), TS_GAP("TS4-3"), TS_GAP("TS5-4"),
	{ "\t ", "pid", 'd', 4, 0 }, { "\t ", "Name", 's', 0, 0 },
};

struct layout {
	const char *header; /* acelyzer's header line, its blanks included */
	const struct field *f;
	size_t n;
};

static const struct layout *layout_of(enum ev_flex_table t)
{
	static const struct layout summary = {
		"Time  \t Total Time\t Calls\t    Mean  \t  Median  \t    Min    \t   Max   \t   StDev  \t  pid\t Name \n",
		summary_fields, sizeof summary_fields / sizeof *summary_fields,
	};
	static const struct layout active = {
		"Total Kernel Time  \t  Elapsed Time\t  Start Time\t         End Time  \t Active percentage  \t   pid \n",
		active_fields, sizeof active_fields / sizeof *active_fields,
	};
	static const struct layout ts = {
		"Calls  \t TS2-1_Mean   \tTS2-1_Median  \tTS2-1_Min    \tTS2-1_Max   \tTS2-1_StDev  "
		"\tTS3-2_Mean   \tTS3-2_Median  \tTS3-2_Min    \tTS3-2_Max   \tTS3-2_StDev  "
		"\tTS4-3_Mean   \tTS4-3_Median  \tTS4-3_Min    \tTS4-3_Max   \tTS4-3_StDev  "
		"\tTS5-4_Mean   \tTS5-4_Median  \tTS5-4_Min    \tTS5-4_Max   \tTS5-4_StDev  \tpid\t Name \n",
		ts_fields, sizeof ts_fields / sizeof *ts_fields,
	};
	switch (t) {
	case EV_FLEX_SUMMARY: return &summary;
	case EV_FLEX_ACTIVE: return &active;
	case EV_FLEX_TS_ANALYSIS: return &ts;
	default: return NULL;
	}
}

int ev_flex_acetext_has(enum ev_flex_table t)
{
	return t == EV_FLEX_CATEGORIES || layout_of(t) != NULL;
}

/* The header: where each field's column is, then acelyzer's line. */
static int header(void *ctx, const char *name, const char *const *cols, size_t ncols)
{
	struct ev_flex_acetext *a = ctx;
	const struct layout *l = layout_of(a->table);
	(void)name;
	if (a->table == EV_FLEX_CATEGORIES)
		return acepd_header(a, cols, ncols);
	for (size_t i = 0; i < l->n; i++) {
		size_t c = 0;
		while (c < ncols && strcmp(cols[c], l->f[i].col))
			c++;
		if (c == ncols)
			return EV_ERR_ARG;
		a->ix[i] = c;
	}
	return ev_output_write(a->out, l->header, strlen(l->header));
}

/* A number cell; empty (no value) is NaN, which acelyzer prints "nan". */
static int number(const char *s, double *v)
{
	char *end;
	if (!*s) {
		*v = NAN;
		return EV_OK;
	}
	*v = strtod(s, &end);
	return *end ? EV_ERR_FORMAT : EV_OK;
}

static int row(void *ctx, const char *const *cells, size_t ncols)
{
	struct ev_flex_acetext *a = ctx;
	const struct layout *l = layout_of(a->table);
	int rc = EV_OK;
	(void)ncols;
	if (a->table == EV_FLEX_CATEGORIES)
		return acepd_row(a, cells);
	for (size_t i = 0; i < l->n && !rc; i++) {
		const struct field *f = &l->f[i];
		const char *s = cells[a->ix[i]];
		double v;
		char *end;
		long long d;
		switch (f->kind) {
		case 'f':
			if ((rc = number(s, &v)) == EV_OK)
				rc = ev_output_printf(a->out, "%s%*.*f", f->sep, f->width, f->prec, v);
			break;
		case 'd':
			d = strtoll(s, &end, 10);
			rc = !*s || *end ? EV_ERR_FORMAT : ev_output_printf(a->out, "%s%*lld", f->sep, f->width, d);
			break;
		default:
			rc = ev_output_printf(a->out, "%s%s", f->sep, s);
			break;
		}
	}
	return rc ? rc : ev_output_putc(a->out, '\n');
}

int ev_flex_acetext_sink(struct ev_flex_acetext *a, enum ev_flex_table t, ev_output *out,
                         struct ev_table_sink *sink)
{
	if (!ev_flex_acetext_has(t) || (layout_of(t) && layout_of(t)->n > sizeof a->ix / sizeof *a->ix))
		return EV_ERR_ARG;
	memset(a, 0, sizeof *a);
	a->table = t;
	a->out = out;
	sink->header = header;
	sink->row = row;
	sink->ctx = a;
	sink->row_num = NULL;
	return EV_OK;
}

int ev_flex_acetext_end(struct ev_flex_acetext *a)
{
	int rc = a->table == EV_FLEX_CATEGORIES ? acepd_end(a) : EV_OK;
	ev_flex_acetext_free(a);
	return rc;
}

void ev_flex_acetext_free(struct ev_flex_acetext *a)
{
	free(a->cells);
	a->cells = NULL;
	a->len = a->cap = a->nrows = 0;
}
