/* SPDX-License-Identifier: MIT */
/*
 * report.c - the per-rank report: the tables of TraceLens's perf report
 * that ev-stats makes (and the collectives one by one), all from one pass
 * over the stream.  Each table is an ev_stats of its own, fed every record;
 * the report adds no numbers of its own, so each table equals the one
 * `ev-stats ANALYSIS` prints with the same options.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "analysis/stats_impl.h"
#include "ev/xlsx.h"

/* The tables in the workbook's order: analysis, --table, and grouped by
 * rank or pooled over the stream.  Each analysis with its defaults
 * otherwise (ops: every kernel class). */
static const struct report_table {
	const char *analysis;
	unsigned table;
	int by_rank;
} tables[] = {
	{ "timeline", 0, 1 },
	{ "kernels", 0, 1 },
	{ "categories", 0, 1 },
	{ "ops", 0, 1 },
	{ "coll", EV_COLL_SUMMARY, 0 },
	{ "coll", EV_COLL_EACH, 0 },
	{ "short", EV_SHORT_SUMMARY, 1 },
	{ "short", EV_SHORT_HISTOGRAM, 0 },
};
#define NTABLES (sizeof tables / sizeof tables[0])

struct ev_report {
	struct ev_report_out out;
	size_t n;
	struct {
		const struct ev_stats_analysis *a;
		unsigned table;
		ev_stats *s;
		ev_output *file;  /* a streamed table's file */
		ev_table *stream; /* and its sink */
	} t[NTABLES];
	int64_t order_last;
	char path[4096];      /* the file an error concerns */
};

size_t ev_report_tables(void)
{
	return NTABLES;
}

const char *ev_report_table_sheet(size_t i)
{
	const struct ev_stats_analysis *a = i < NTABLES ? ev_stats_find(tables[i].analysis) : NULL;
	return a ? ev_stats_sheet(a, tables[i].table) : NULL;
}

const char *const *ev_report_table_stream_cols(size_t i)
{
	const struct ev_stats_analysis *a = i < NTABLES ? ev_stats_find(tables[i].analysis) : NULL;
	return a && a->tables ? a->tables[tables[i].table].stream_cols : NULL;
}

/* DIR/SHEET.EXT of a table, in r->path. */
static const char *table_path(ev_report *r, const char *sheet)
{
	static const char *const ext[] = { [EV_TABLE_TSV] = "tsv", [EV_TABLE_CSV] = "csv", [EV_TABLE_JSON] = "json",
		                           [EV_TABLE_MD] = "md" };
	snprintf(r->path, sizeof r->path, "%s/%s.%s", r->out.dir, sheet, ext[r->out.fmt]);
	return r->path;
}

int ev_report_new(ev_report **rp, const struct ev_stats_opts *base, const struct ev_report_out *out, ev_strtab *st,
                  ev_meta *meta)
{
	ev_report *r = calloc(1, sizeof *r);
	*rp = r;
	if (!r)
		return EV_ERR_NOMEM;
	r->out = *out;
	snprintf(r->path, sizeof r->path, "%s", out->x ? out->x_path : out->dir);
	if (!out->x && mkdir(out->dir, 0777) != 0 && errno != EEXIST)
		return EV_ERR_IO;
	for (size_t i = 0; i < NTABLES; i++) {
		struct ev_stats_opts o = *base;
		o.analysis = ev_stats_find(tables[i].analysis);
		if (!o.analysis)
			return EV_ERR_ARG;
		o.table = tables[i].table;
		const char *const *cols = ev_report_table_stream_cols(i);
		if (cols && out->x)
			continue; /* rows written as they come: not in a workbook */
		int rc = EV_OK;
		size_t nc = 0;
		while (cols && cols[nc])
			nc++;
		if (cols && (rc = ev_output_open(&r->t[r->n].file, table_path(r, ev_report_table_sheet(i)))) == EV_OK)
			rc = ev_table_open(&r->t[r->n].stream, r->t[r->n].file, out->fmt, cols, nc);
		o.stream = r->t[r->n].stream;
		memset(o.by, 0, sizeof o.by);
		memset(o.by_key, 0, sizeof o.by_key);
		o.nby = 0;
		if (tables[i].by_rank)
			o.by[o.nby++] = EV_BY_RANK;
		r->t[r->n].a = o.analysis;
		r->t[r->n].table = o.table;
		rc = rc ? rc : ev_stats_new(&r->t[r->n].s, &o, st, meta);
		r->n++;
		if (rc)
			return rc;
	}
	return EV_OK;
}

int ev_report_add(ev_report *r, const struct ev_rec *rec)
{
	for (size_t k = 0; k < r->n; k++) {
		int rc = ev_stats_add(r->t[k].s, rec);
		if (rc == EV_ERR_ORDER)
			r->order_last = ev_stats_order_last(r->t[k].s);
		if (rc)
			return rc;
	}
	return EV_OK;
}

int64_t ev_report_order_last(const ev_report *r)
{
	return r->order_last;
}

/* A table's messages name it: "sheet: ...". */
struct named { const struct ev_say *say; const char *name; };

static void say_named(void *ctx, enum ev_say_kind kind, const char *text)
{
	const struct named *n = ctx;
	ev_say(n->say, kind, "%s: %s", n->name, text);
}

/* Table k, done: its notes, its rows into the workbook or its own file, or
 * its sink closed, and why it is empty. */
static int close_table(ev_report *r, size_t k)
{
	ev_stats *s = r->t[k].s;
	const char *sheet = ev_stats_sheet(r->t[k].a, r->t[k].table);
	struct named nm = { r->out.say, sheet };
	struct ev_say say = { say_named, &nm };
	struct ev_stats_counts c;
	struct ev_rowset rs;
	ev_output *file = NULL;
	int rc;
	ev_stats_get_counts(s, &c);
	/* An analysis's notes once, with its first table. */
	size_t first = 0;
	while (r->t[first].a != r->t[k].a)
		first++;
	if (first == k)
		ev_stats_say_notes(s, &say);
	if (r->t[k].stream) {
		if (c.streamed == 0)
			ev_stats_say_empty(s, sheet, &say);
		table_path(r, sheet);
		rc = ev_table_close(r->t[k].stream);
		r->t[k].stream = NULL;
		rc = rc ? rc : ev_output_close(r->t[k].file);
		r->t[k].file = rc ? r->t[k].file : NULL;
		return rc;
	}
	memset(&rs, 0, sizeof rs);
	if ((rc = ev_stats_rows(s, &rs)) == EV_OK && rs.rows.len == 0)
		ev_stats_say_empty(s, sheet, &say);
	if (r->out.x) {
		snprintf(r->path, sizeof r->path, "%s", r->out.x_path);
		rc = rc ? rc : ev_rowset_print_xlsx(&rs, r->out.x, sheet);
	} else if (!rc && (rc = ev_output_open(&file, table_path(r, sheet))) == EV_OK &&
	           (rc = ev_rowset_print(&rs, file, r->out.fmt)) == EV_OK) {
		rc = ev_output_close(file);
		file = NULL;
	}
	ev_output_abort(file);
	ev_rowset_free(&rs);
	return rc;
}

int ev_report_close(ev_report *r)
{
	int rc = EV_OK;
	for (size_t k = 0; !rc && k < r->n; k++)
		rc = ev_stats_finish(r->t[k].s);
	for (size_t k = 0; !rc && k < r->n; k++)
		rc = close_table(r, k);
	return rc;
}

const char *ev_report_path(const ev_report *r)
{
	return r->path;
}

void ev_report_free(ev_report *r)
{
	if (!r)
		return;
	for (size_t k = 0; k < r->n; k++) {
		if (r->t[k].stream) {
			int ignored = ev_table_close(r->t[k].stream); /* already failing */
			(void)ignored;
		}
		ev_output_abort(r->t[k].file);
		ev_stats_free(r->t[k].s);
	}
	free(r);
}
