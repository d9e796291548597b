/* SPDX-License-Identifier: MIT */
/*
 * report.c - the per-rank report: the tables of TraceLens's perf report
 * that ev-stats makes (and the collectives one by one), all from one pass
 * over the stream.  Each table is an ev_stats of its own, fed every record;
 * the report adds no numbers of its own, so each table equals the one
 * `ev-stats ANALYSIS` prints with the same options.
 */
#include <errno.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "analysis/perf.h"
#include "analysis/stats_impl.h"
#include "ev/worker.h"
#include "ev/xlsx.h"

/* A TraceLens column: its name and the analysis's column it shows (NULL:
 * one evkit does not compute, left empty and said once; "?NAME": written
 * only when the analysis has column NAME, which TraceLens too has only
 * for some traces).  A name ending
 * in '*' stands for every column of the analysis named so ("param: *":
 * the model's parameters, which differ per trace), in the analysis's
 * order. */
struct tlcol { const char *tl, *ev; };

/* The tables in the workbook's order: analysis, --table, and grouped by
 * rank or pooled over the stream; in TraceLens's layout, its columns in
 * its order.  Each analysis with its defaults otherwise (ops: every
 * kernel class). */
struct report_table {
	const char *analysis;
	unsigned table;
	int by_rank;
	const struct tlcol *cols;
	int omit_empty;   /* no sheet when it has no rows */
	int part;         /* with two threads, the worker's (1) or the caller's
	                     (evkit's tables: one thread, as two were no faster) */
};
static const struct report_table tables[] = {
	{ "timeline", 0, 1, NULL, 0, 0 },
	{ "kernels", 0, 1, NULL, 0, 0 },
	{ "categories", 0, 1, NULL, 0, 0 },
	{ "ops", 0, 1, NULL, 0, 0 },
	{ "ops-summary", 0, 1, NULL, 0, 0 },
	{ "ops-category", 0, 1, NULL, 0, 0 },
	{ "coll", EV_COLL_SUMMARY, 0, NULL, 0, 0 },
	{ "coll", EV_COLL_EACH, 0, NULL, 0, 0 },
	{ "short", EV_SHORT_SUMMARY, 1, NULL, 0, 0 },
	{ "short", EV_SHORT_HISTOGRAM, 0, NULL, 0, 0 },
};
#define NTABLES (sizeof tables / sizeof tables[0])

/* TraceLens's generate_perf_report_pytorch layout (tests/expected/tracelens):
 * its sheets in its order, its column names, order and units.  The
 * analyses' other columns follow TraceLens's; rank only when the stream
 * holds more than one. */
static const struct tlcol tl_timeline[] = { { "type", "type" }, { "time ms", "time_ms" }, { "percent", "percent" }, { 0, 0 } };
static const struct tlcol tl_opcat[] = {
	{ "op category", "op category" }, { "Count", "Count" },
	{ "total_direct_kernel_time_ms", "total_direct_kernel_time_ms" }, { "Percentage (%)", "Percentage (%)" },
	{ "Cumulative Percentage (%)", "Cumulative Percentage (%)" }, { 0, 0 },
};
static const struct tlcol tl_opsum[] = {
	{ "name", "name" }, { "total_direct_kernel_time_sum", "total_direct_kernel_time_sum" },
	{ "total_subtree_kernel_time_sum", "total_subtree_kernel_time_sum" },
	{ "total_direct_kernel_time_ms", "total_direct_kernel_time_ms" },
	{ "total_subtree_kernel_time_ms", "total_subtree_kernel_time_ms" }, { "Count", "Count" }, { "Categories", "Categories" },
	{ "Percentage (%)", "Percentage (%)" }, { "Cumulative Percentage (%)", "Cumulative Percentage (%)" }, { 0, 0 },
};
static const struct tlcol tl_kernels[] = {
	{ "Parent op category", "Parent op category" }, { "Parent cpu_op", "Parent cpu_op" },
	{ "Kernel name", "Kernel name" }, { "Kernel stream", "Kernel stream" },
	{ "Kernel duration (µs)_sum", "Kernel duration (µs)_sum" }, { "Kernel duration (µs)_count", "Kernel duration (µs)_count" },
	{ "Kernel duration (µs)_mean", "Kernel duration (µs)_mean" }, { "Kernel duration (µs)_min", "Kernel duration (µs)_min" },
	{ "Kernel duration (µs)_max", "Kernel duration (µs)_max" },
	{ "Percent of kernels time (%)", "Percent of kernels time (%)" },
	{ "Percent of total time (%)", "Percent of total time (%)" }, { 0, 0 },
};
static const struct tlcol tl_args[] = {
	{ "name", "name" }, { "op category", "op category" }, { "process_name", "process_name" },
	{ "process_label", "process_label" }, { "thread_name", "thread_name" }, { "Input Dims", "Input Dims" }, { "Input type", "Input type" },
	{ "Input Strides", "Input Strides" }, { "Concrete Inputs", "Concrete Inputs" },
	{ "operation_count", "operation_count" },
	{ "total_direct_kernel_time_mean", "total_direct_kernel_time_mean" }, { "total_subtree_kernel_time_mean", "total_subtree_kernel_time_mean" },
	{ "total_direct_kernel_time_median", "total_direct_kernel_time_median" },
	{ "total_subtree_kernel_time_median", "total_subtree_kernel_time_median" },
	{ "total_direct_kernel_time_std", "total_direct_kernel_time_std" }, { "total_subtree_kernel_time_std", "total_subtree_kernel_time_std" },
	{ "total_direct_kernel_time_min", "total_direct_kernel_time_min" }, { "total_subtree_kernel_time_min", "total_subtree_kernel_time_min" },
	{ "total_direct_kernel_time_max", "total_direct_kernel_time_max" }, { "total_subtree_kernel_time_max", "total_subtree_kernel_time_max" },
	{ "total_direct_kernel_time_sum", "total_direct_kernel_time_sum" }, { "total_subtree_kernel_time_sum", "total_subtree_kernel_time_sum" },
	{ "ex_UID", "ex_UID" }, { "kernel_details_summary", "kernel_details_summary" },
	{ "trunc_kernel_details", "trunc_kernel_details" },
	{ "Percentage (%)", "Percentage (%)" }, { "Cumulative Percentage (%)", "Cumulative Percentage (%)" }, { 0, 0 },
};
/* A perf-model sheet (stats_perf.c, perf.h): the same columns for every
 * category, its parameters where "param: *" is. */
static const struct tlcol tl_perf[] = {
	{ "name", "name" }, { "param: *", "param: *" }, { "GFLOPS_first", "GFLOPS_first" },
	{ "Data Moved (MB)_first", "Data Moved (MB)_first" }, { "FLOPS/Byte_first", "FLOPS/Byte_first" },
	{ "TB/s_mean", "TB/s_mean" }, { "TB/s_median", "TB/s_median" }, { "TB/s_std", "TB/s_std" },
	{ "TB/s_min", "TB/s_min" }, { "TB/s_max", "TB/s_max" }, { "TFLOPS/s_mean", "TFLOPS/s_mean" },
	{ "TFLOPS/s_median", "TFLOPS/s_median" }, { "TFLOPS/s_std", "TFLOPS/s_std" },
	{ "TFLOPS/s_min", "TFLOPS/s_min" }, { "TFLOPS/s_max", "TFLOPS/s_max" },
	{ "process_name_first", "process_name" }, { "process_label_first", "process_label" },
	{ "thread_name_first", "thread_name" },
	{ "Compute Spec", "Compute Spec" },
	{ "kernel_details__summarize_kernel_stats", "kernel_details__summarize_kernel_stats" },
	{ "trunc_kernel_details", "trunc_kernel_details" }, { "Input Dims_first", "Input Dims_first" },
	{ "Input type_first", "Input type_first" }, { "Input Strides_first", "Input Strides_first" },
	{ "Concrete Inputs_first", "Concrete Inputs_first" },
	{ "Kernel Time (µs)_mean", "Kernel Time (µs)_mean" }, { "Kernel Time (µs)_median", "Kernel Time (µs)_median" },
	{ "Kernel Time (µs)_std", "Kernel Time (µs)_std" }, { "Kernel Time (µs)_min", "Kernel Time (µs)_min" },
	{ "Kernel Time (µs)_max", "Kernel Time (µs)_max" }, { "Kernel Time (µs)_sum", "Kernel Time (µs)_sum" },
	{ "name_count", "name_count" }, { "UID_first", "UID_first" }, { 0, 0 },
};
/* unified_perf_summary (unified_rows.c): "?" marks a model's column,
 * which TraceLens has only when a row has a model's numbers. */
static const struct tlcol tl_unified[] = {
	{ "name", "name" }, { "op category", "op category" }, { "process_name", "process_name" },
	{ "process_label", "process_label" }, { "thread_name", "thread_name" }, { "Input Dims", "Input Dims" },
	{ "Input type", "Input type" }, { "Input Strides", "Input Strides" }, { "Concrete Inputs", "Concrete Inputs" },
	{ "ex_UID", "ex_UID" }, { "operation_count", "operation_count" }, { "total_duration_us", "total_duration_us" },
	{ "mean_duration_us", "mean_duration_us" }, { "std_duration_us", "std_duration_us" }, { "GFLOPS", "?GFLOPS" },
	{ "Data Moved (MB)", "?Data Moved (MB)" }, { "FLOPS/Byte", "?FLOPS/Byte" }, { "Compute Spec", "?Compute Spec" },
	{ "TB/s_mean", "?TB/s_mean" }, { "TB/s_std", "?TB/s_std" }, { "TFLOPS/s_mean", "?TFLOPS/s_mean" },
	{ "TFLOPS/s_std", "?TFLOPS/s_std" }, { "Kernel Time (µs)_mean", "Kernel Time (µs)_mean" },
	{ "Kernel Time (µs)_std", "Kernel Time (µs)_std" }, { "Kernel Time (µs)_sum", "Kernel Time (µs)_sum" },
	{ "duration_us_median", "duration_us_median" }, { "duration_us_min", "duration_us_min" },
	{ "duration_us_max", "duration_us_max" }, { "TB/s_median", "?TB/s_median" }, { "TB/s_min", "?TB/s_min" },
	{ "TB/s_max", "?TB/s_max" }, { "TFLOPS/s_median", "?TFLOPS/s_median" }, { "TFLOPS/s_min", "?TFLOPS/s_min" },
	{ "TFLOPS/s_max", "?TFLOPS/s_max" }, { "Kernel Time (µs)_median", "Kernel Time (µs)_median" },
	{ "Kernel Time (µs)_min", "Kernel Time (µs)_min" }, { "Kernel Time (µs)_max", "Kernel Time (µs)_max" },
	{ "kernel_details_summary", "kernel_details_summary" }, { "trunc_kernel_details", "trunc_kernel_details" },
	{ "perf_params", "perf_params" }, { "has_perf_model", "has_perf_model" },
	{ "Percentage (%)", "Percentage (%)" }, { "Cumulative Percentage (%)", "Cumulative Percentage (%)" }, { 0, 0 },
};
/* The short-kernel study (TraceLens's --short_kernel_study) and
 * coll_analysis (only when the trace has collectives, as TraceLens): the
 * analyses name their columns as TraceLens does. */
static const struct tlcol tl_short_sum[] = {
	{ "Parent cpu_op", "Parent cpu_op" }, { "Input dims", "Input dims" }, { "Input strides", "Input strides" },
	{ "Concrete Inputs", "Concrete Inputs" }, { "Kernel name", "Kernel name" },
	{ "Short Kernel duration (µs) sum", "Short Kernel duration (µs) sum" },
	{ "Short Kernel count", "Short Kernel count" },
	{ "Short Kernel duration (µs) mean", "Short Kernel duration (µs) mean" },
	{ "Short Kernel duration (µs) percent of total time", "Short Kernel duration (µs) percent of total time" },
	{ 0, 0 },
};
static const struct tlcol tl_coll[] = {
	{ "rank", "rank" }, { "Process Group Name", "Process Group Name" }, { "Process Group Ranks", "Process Group Ranks" },
	{ "Collective name", "Collective name" }, { "Group size", "Group size" }, { "dtype", "dtype" },
	{ "In msg nelems", "In msg nelems" }, { "Out msg nelems", "Out msg nelems" },
	{ "In split size", "In split size" }, { "Out split size", "Out split size" }, { "stream", "stream" },
	{ "In msg size (MB)_first", "In msg size (MB)_first" }, { "Out msg size (MB)_first", "Out msg size (MB)_first" },
	{ "dur_sum", "dur_sum" }, { "dur_mean", "dur_mean" }, { "dur_std", "dur_std" }, { "dur_min", "dur_min" },
	{ "dur_max", "dur_max" }, { "operation_count", "operation_count" }, { 0, 0 },
};
static const struct tlcol tl_short_hist[] = { { "bin_start", "bin_start" }, { "bin_end", "bin_end" }, { "count", "count" }, { 0, 0 } };
/* TraceLens writes a perf-model sheet only when it has rows (omit_empty),
 * in the order of its op-to-model map: GEMM, SDPA, CONV, ..., the
 * elementwise ones, Normalization, Reduce. */
static const struct report_table tl_tables[] = {
	{ "timeline", 0, 1, tl_timeline, 0, 0 },
	{ "ops-category", 0, 1, tl_opcat, 0, 0 },
	{ "ops-summary", 0, 1, tl_opsum, 0, 0 },
	{ "ops-args", 0, 1, tl_args, 0, 1 },
	{ "unified", 0, 1, tl_unified, 1, 1 },
	{ "perf", PERF_gemm, 1, tl_perf, 1, 0 },
	{ "perf", PERF_sdpa_fwd, 1, tl_perf, 1, 0 },
	{ "perf", PERF_conv_fwd, 1, tl_perf, 1, 0 },
	{ "perf", PERF_conv_bwd, 1, tl_perf, 1, 0 },
	{ "perf", PERF_binary, 1, tl_perf, 1, 0 },
	{ "perf", PERF_unary, 1, tl_perf, 1, 0 },
	{ "perf", PERF_norm, 1, tl_perf, 1, 0 },
	{ "perf", PERF_reduce, 1, tl_perf, 1, 0 },
	{ "perf", PERF_reduce_bwd, 1, tl_perf, 1, 0 },
	{ "kernel-ops", 0, 1, tl_kernels, 0, 0 },
	{ "short", EV_SHORT_HISTOGRAM, 0, tl_short_hist, 0, 0 },
	{ "short", EV_SHORT_SUMMARY, 1, tl_short_sum, 0, 0 },
	{ "coll", EV_COLL_SUMMARY, 1, tl_coll, 1, 0 },
};
#define NTL (sizeof tl_tables / sizeof tl_tables[0])
#define MAXT (NTABLES > NTL ? NTABLES : NTL)

struct ev_report {
	struct ev_report_out out;
	size_t n;
	struct {
		const struct ev_stats_analysis *a;
		unsigned table;
		ev_stats *s;      /* its own, or an earlier table's (shared) */
		int shared;       /* s is table owner's, which keeps the same state */
		size_t owner;
		ev_output *file;  /* a streamed table's file */
		ev_table *stream; /* and its sink */
		const struct tlcol *cols;
		int omit_empty;
		int part;
		struct ev_rowset rs; /* with two threads: its rows, made ahead */
		int rs_rc, have_rs;
		struct ev_xlsx *apart; /* and its sheet, written apart (sheet_apart), */
		int apart_rc;
		size_t apart_rows;     /* its rows (rs freed then), */
		char apart_empty[512]; /* and TraceLens's columns left empty */
	} t[MAXT];
	/* Two threads (ev_report_threads): records are held in a batch, then
	 * the caller's tables and the worker's each take it; the caller goes
	 * on filling the other batch while the worker ends its part. */
	ev_worker *tp;
	int closing;          /* the parts finish their tables and make rows */
	atomic_size_t next_close; /* the next table a part takes then */
	struct ev_rec *batch; /* two of REPORT_BATCH records */
	size_t nbatch;        /* in the one being filled, cur */
	int cur;
	const struct ev_rec *wbatch; /* the one the parts take, of nwork */
	size_t nwork;
	int working;          /* the worker's part of it not yet waited for */
	struct { size_t at, k; int rc; } fail[2]; /* each part's first failure */
	uint64_t back;        /* records read after the one that failed */
	int64_t fail_ts;      /* its time */
	int64_t order_last;
	int tracelens;        /* TraceLens's links: GPU events flagged noflow have no call */
	uint64_t noflow;      /* how many were so left unlinked */
	const ev_meta *meta;
	int corr_only;        /* a linked GPU event of a source whose flows were not checked */
	int have_checked;     /* and the last source seen whose were (#src flow_links=) */
	uint32_t checked_src;
	char path[4096];      /* the file an error concerns */
};

int ev_report_takes_option(const char *name, int tracelens)
{
	const struct report_table *list = tracelens ? tl_tables : tables;
	size_t n = tracelens ? NTL : NTABLES;
	for (size_t i = 0; i < n; i++) {
		const struct ev_stats_analysis *a = ev_stats_find(list[i].analysis);
		if (a && ev_stats_listed(a->options, name))
			return 1;
	}
	return 0;
}

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
	r->tracelens = base->tracelens;
	r->meta = meta;
	const struct report_table *list = base->tracelens ? tl_tables : tables;
	size_t nlist = base->tracelens ? NTL : NTABLES;
	snprintf(r->path, sizeof r->path, "%s", out->x ? out->x_path : out->dir);
	if (!out->x && mkdir(out->dir, 0777) != 0 && errno != EEXIST)
		return EV_ERR_IO;
	for (size_t i = 0; i < nlist; i++) {
		struct ev_stats_opts o = *base;
		o.analysis = ev_stats_find(list[i].analysis);
		if (!o.analysis)
			return EV_ERR_ARG;
		o.table = list[i].table;
		if (list[i].cols) {
			/* TraceLens's numbers: its microsecond doubles, its rows only. */
			o.float_us = 1;
			o.no_hta = 1;
		}
		const char *const *cols = o.analysis->tables ? o.analysis->tables[o.table].stream_cols : NULL;
		if (cols && out->x)
			continue; /* rows written as they come: not in a workbook */
		int rc = EV_OK;
		size_t nc = 0;
		while (cols && cols[nc])
			nc++;
		if (cols && (rc = ev_output_open(&r->t[r->n].file, table_path(r, ev_stats_sheet(o.analysis, o.table)))) == EV_OK)
			rc = ev_table_open(&r->t[r->n].stream, r->t[r->n].file, out->fmt, cols, nc);
		o.stream = r->t[r->n].stream;
		memset(o.by, 0, sizeof o.by);
		memset(o.by_key, 0, sizeof o.by_key);
		o.nby = 0;
		if (list[i].by_rank)
			o.by[o.nby++] = EV_BY_RANK;
		r->t[r->n].cols = list[i].cols;
		r->t[r->n].omit_empty = list[i].omit_empty;
		r->t[r->n].part = list[i].part;
		r->t[r->n].a = o.analysis;
		r->t[r->n].table = o.table;
		/* ops_summary and ops_summary_by_category are two tables of one
		 * state: it is gathered once. */
		for (size_t j = 0; !cols && j < r->n && !r->t[r->n].shared; j++)
			if (!r->t[j].shared && !r->t[j].stream && ev_stats_same_state(r->t[j].a, o.analysis) &&
			    r->t[j].table == o.table && !memcmp(ev_stats_options(r->t[j].s)->by, o.by, sizeof o.by) &&
			    ev_stats_options(r->t[j].s)->float_us == o.float_us) {
				r->t[r->n].shared = 1;
				r->t[r->n].owner = j;
				r->t[r->n].s = r->t[j].s;
			}
		if (!r->t[r->n].shared)
			rc = rc ? rc : ev_stats_new(&r->t[r->n].s, &o, st, meta);
		r->n++;
		if (rc)
			return rc;
	}
	return EV_OK;
}

/* Whether a linked GPU event's source had its ac2g flows checked
 * (kineto2ev --flow-links writes #src flow_links=): without, noflow was
 * never set and its link to its call may be by correlation only. */
static void check_flows(ev_report *r, const struct ev_rec *rec)
{
	if (r->corr_only || (rec->flags & EV_F_UNLINKED) ||
	    (rec->type != EV_KERNEL && rec->type != EV_MEMCPY && rec->type != EV_MEMSET) ||
	    (r->have_checked && rec->src == r->checked_src))
		return;
	const struct ev_src_info *si = r->meta ? ev_meta_src(r->meta, rec->src) : NULL;
	if (si && ev_kv_get(si->kv, si->nkv, "flow_links")) {
		r->have_checked = 1;
		r->checked_src = rec->src;
	} else {
		r->corr_only = 1;
	}
}

/* A batch of records, then the tables of a part take it. */
#define REPORT_BATCH 4096

static void write_apart(ev_report *r, size_t k);

/* At the end, the tables finished and their rows made (and their sheets
 * written apart) for close_table to write in the workbook's order: each
 * thread takes the next table not yet taken, in the tables' order (the
 * large ones come early, so the two threads end together), a table with
 * the tables that share its state; a thread stops at its first failure. */
static void close_part(ev_report *r, int part)
{
	for (;;) {
		size_t k = atomic_fetch_add(&r->next_close, 1);
		while (k < r->n && r->t[k].shared)
			k = atomic_fetch_add(&r->next_close, 1); /* (done with its owner) */
		if (k >= r->n)
			return;
		int rc = ev_stats_finish(r->t[k].s);
		for (size_t j = k; !rc && j < r->n; j++) {
			if (j != k && (!r->t[j].shared || r->t[j].owner != k))
				continue;
			if (!r->t[j].stream) {
				r->t[j].rs_rc = ev_stats_rows_of(r->t[j].s, r->t[j].a, &r->t[j].rs);
				r->t[j].have_rs = 1;
				write_apart(r, j);
			}
		}
		if (rc) {
			r->fail[part].k = k;
			r->fail[part].rc = rc;
			return;
		}
	}
}

static void run_part(ev_report *r, int part);

/* The worker's part, and both with the caller's. */
static void worker_part(void *ctx)
{
	run_part(ctx, 1);
}

static void run_parts(ev_report *r)
{
	ev_worker_start(r->tp);
	run_part(r, 0);
	ev_worker_wait(r->tp);
}

static void run_part(ev_report *r, int part)
{
	r->fail[part].rc = EV_OK;
	if (r->closing) {
		close_part(r, part);
		return;
	}
	for (size_t i = 0; i < r->nwork; i++)
		for (size_t k = 0; k < r->n; k++) {
			if (r->t[k].shared || r->t[k].part != part)
				continue;
			int rc = ev_stats_add(r->t[k].s, &r->wbatch[i]);
			if (rc) {
				r->fail[part].at = i;
				r->fail[part].k = k;
				r->fail[part].rc = rc;
				return;
			}
		}
}

int ev_report_threads(ev_report *r, int n)
{
	size_t k = 0;
	while (k < r->n && r->t[k].part == 0)
		k++;
	if (n < 2 || r->tp || k == r->n) /* one thread, or nothing for a second */
		return EV_OK;
	if (!(r->batch = malloc(2 * REPORT_BATCH * sizeof *r->batch)))
		return EV_ERR_NOMEM;
	int rc = ev_worker_new(&r->tp, worker_part, r);
	if (rc == EV_ERR_IO) { /* no thread: one, as before */
		free(r->batch);
		r->batch = NULL;
		return EV_OK;
	}
	return rc;
}

/* The failure of record at (of n read) in table k: what the caller says. */
static int failed(ev_report *r, size_t at, size_t n, size_t k, int64_t ts, int rc)
{
	r->back = n - 1 - at;
	r->fail_ts = ts;
	if (rc == EV_ERR_ORDER)
		r->order_last = ev_stats_order_last(r->t[k].s);
	return rc;
}

/* The worker's part of the batch before done; its failure, with `extra`
 * records read since that batch, is the one to say. */
static int worker_done(ev_report *r, size_t extra)
{
	if (!r->working)
		return EV_OK;
	ev_worker_wait(r->tp);
	r->working = 0;
	if (!r->fail[1].rc)
		return EV_OK;
	return failed(r, r->fail[1].at, r->nwork + extra, r->fail[1].k, r->wbatch[r->fail[1].at].ts, r->fail[1].rc);
}

/* The batch being filled to both parts: the worker's part left running
 * (waited for at the next batch), the caller's done here.  Failures are
 * said as one thread feeding the tables in their order meets them: the
 * worker's in an earlier batch first, then the first record (and table)
 * of this one. */
static int dispatch(ev_report *r)
{
	size_t n = r->nbatch;
	const struct ev_rec *b = r->batch + (size_t)r->cur * REPORT_BATCH;
	int rc = worker_done(r, n);
	if (rc)
		return rc;
	r->wbatch = b;
	r->nwork = n;
	r->fail[0].rc = r->fail[1].rc = EV_OK;
	ev_worker_start(r->tp);
	r->working = 1;
	run_part(r, 0);
	r->cur ^= 1;
	r->nbatch = 0;
	if (!r->fail[0].rc)
		return EV_OK;
	ev_worker_wait(r->tp);
	r->working = 0;
	int p = r->fail[1].rc && (r->fail[1].at < r->fail[0].at ||
	                          (r->fail[1].at == r->fail[0].at && r->fail[1].k < r->fail[0].k));
	return failed(r, r->fail[p].at, n, r->fail[p].k, b[r->fail[p].at].ts, r->fail[p].rc);
}

int ev_report_flush(ev_report *r)
{
	if (!r->tp)
		return EV_OK;
	int rc = r->nbatch ? dispatch(r) : EV_OK;
	return rc ? rc : worker_done(r, 0);
}

int ev_report_add(ev_report *r, const struct ev_rec *rec)
{
	struct ev_rec tl;
	if (r->tracelens)
		check_flows(r, rec);
	if (r->tracelens && (rec->flags & (EV_F_NOFLOW | EV_F_UNLINKED)) == EV_F_NOFLOW &&
	    (rec->type == EV_KERNEL || rec->type == EV_MEMCPY || rec->type == EV_MEMSET)) {
		/* TraceLens joins a GPU event to its call only through an ac2g
		 * flow (a graph launch's by correlation: kineto2ev does not flag
		 * those), so one joined by correlation id alone has no call and
		 * no op in its sheets. */
		tl = *rec;
		tl.flags |= EV_F_UNLINKED;
		rec = &tl;
		r->noflow++;
	}
	if (r->tp) {
		r->batch[(size_t)r->cur * REPORT_BATCH + r->nbatch++] = *rec;
		return r->nbatch == REPORT_BATCH ? dispatch(r) : EV_OK;
	}
	for (size_t k = 0; k < r->n; k++) {
		if (r->t[k].shared)
			continue;
		int rc = ev_stats_add(r->t[k].s, rec);
		if (rc)
			return failed(r, 0, 1, k, rec->ts, rc);
	}
	return EV_OK;
}

uint64_t ev_report_failed_at(const ev_report *r, int64_t *ts)
{
	*ts = r->fail_ts;
	return r->back;
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

/* The column of rs called name: 1 + index of a key, -(1 + index) of a
 * value, 0 when it has none. */
static long column_of(const struct ev_rowset *rs, const char *name)
{
	for (size_t i = 0; i < rs->nkeys; i++)
		if (!strcmp(rs->keys[i].name, name))
			return (long)i + 1;
	for (size_t i = 0; i < rs->nvals; i++)
		if (!strcmp(rs->vals[i].name, name))
			return -(long)i - 1;
	return 0;
}

/* Whether every row of rs has the same cell in key column i. */
static int one_value(const struct ev_rowset *rs, size_t i)
{
	const struct ev_row *r = (const struct ev_row *)rs->rows.data;
	for (size_t j = 1; j < rs->rows.len; j++)
		if (strcmp(r[j].key[i] ? r[j].key[i] : "", r[0].key[i] ? r[0].key[i] : ""))
			return 0;
	return 1;
}

#define TL_MAXCOLS 64

/* rs in TraceLens's layout: its columns (cols) first, then the analysis's
 * others, but rank when the table has one rank (a TraceLens report is one
 * rank's).  empty: TraceLens's columns evkit has no values for. */
struct tl_layout {
	const char *names[TL_MAXCOLS];
	long at[TL_MAXCOLS]; /* key column + 1, -(value column + 1), 0 empty */
	size_t n;
	char empty[512];
};

static int tl_layout(const struct ev_rowset *rs, const struct tlcol *cols, struct tl_layout *l)
{
	unsigned char used[TL_MAXCOLS];
	size_t n = 0, ne = 0;
	l->empty[0] = '\0';
	if (rs->nkeys + rs->nvals > TL_MAXCOLS)
		return EV_ERR_ARG;
	memset(used, 0, sizeof used);
	for (size_t c = 0; cols[c].tl && n < TL_MAXCOLS; c++) {
		size_t wl = strlen(cols[c].tl);
		if (wl && cols[c].tl[wl - 1] == '*') {
			for (size_t i = 0; i < rs->nkeys && n < TL_MAXCOLS; i++)
				if (!strncmp(rs->keys[i].name, cols[c].tl, wl - 1)) {
					l->names[n] = rs->keys[i].name;
					l->at[n++] = (long)i + 1;
					used[i] = 1;
				}
			continue;
		}
		const char *ev = cols[c].ev;
		if (ev && *ev == '?' && !column_of(rs, ++ev))
			continue; /* a column the analysis has only for some inputs */
		l->names[n] = cols[c].tl;
		l->at[n] = ev ? column_of(rs, ev) : 0;
		if (l->at[n] > 0)
			used[l->at[n] - 1] = 1;
		else if (l->at[n] < 0)
			used[rs->nkeys - (size_t)l->at[n] - 1] = 1;
		else
			ne += (size_t)snprintf(l->empty + ne, ne < sizeof l->empty ? sizeof l->empty - ne : 0, "%s%s",
			                       ne ? ", " : "", cols[c].tl);
		n++;
	}
	for (size_t i = 0; i < rs->nkeys + rs->nvals && n < TL_MAXCOLS; i++) {
		const char *name = i < rs->nkeys ? rs->keys[i].name : rs->vals[i - rs->nkeys].name;
		if (used[i] || (i < rs->nkeys && !strcmp(name, "rank") && one_value(rs, i)))
			continue;
		l->names[n] = name;
		l->at[n++] = i < rs->nkeys ? (long)i + 1 : -(long)(i - rs->nkeys) - 1;
	}
	l->n = n;
	return EV_OK;
}

/* TraceLens's columns left empty (a layout's empty), said when the table
 * has rows. */
static void tl_say_empty(const char *empty, size_t rows, const struct ev_say *say)
{
	if (empty[0] && rows)
		ev_say(say, EV_SAY_WARN, "%s left empty: not in evkit's stream (TraceLens's op tree, thread names, event ids)",
		       empty);
}

/* rs laid out by l, to out in fmt, or (x not NULL) to a new sheet. */
static int tl_write(const struct ev_rowset *rs, const struct tl_layout *l, ev_output *out, enum ev_table_fmt fmt,
                    struct ev_xlsx *x, const char *sheet)
{
	ev_table *t = NULL;
	int rc = x ? ev_table_open_xlsx(&t, x, sheet, l->names, l->n) : ev_table_open(&t, out, fmt, l->names, l->n);
	for (size_t j = 0; !rc && j < rs->rows.len; j++) {
		const struct ev_row *r = (const struct ev_row *)rs->rows.data + j;
		for (size_t c = 0; !rc && c < l->n; c++)
			rc = l->at[c] > 0   ? rowset_cell_key(t, &rs->keys[l->at[c] - 1], r->key[l->at[c] - 1])
			     : l->at[c] < 0 ? ev_table_f64(t, r->val[-l->at[c] - 1])
			                    : ev_table_null(t);
	}
	int rc2 = t ? ev_table_close(t) : EV_OK;
	return rc ? rc : rc2;
}

static int print_tl(const struct ev_rowset *rs, const struct tlcol *cols, ev_output *out, enum ev_table_fmt fmt,
                    struct ev_xlsx *x, const char *sheet, const struct ev_say *say)
{
	struct tl_layout l;
	int rc = tl_layout(rs, cols, &l);
	if (rc)
		return rc;
	tl_say_empty(l.empty, rs->rows.len, say);
	return tl_write(rs, &l, out, fmt, x, sheet);
}

/* Whether table k's sheet can be written apart (ev_xlsx_open_apart) while
 * the tables before it are still being made, and whether it is then the
 * workbook's first: not when a sheet before it may or may not come (an
 * empty perf-model sheet is left out), which decides that. */
static int sheet_apart(const ev_report *r, size_t k, int *first)
{
	int some = 0, maybe = 0;
	if (!r->out.x || r->t[k].stream)
		return 0;
	for (size_t j = 0; j < k; j++)
		if (!r->t[j].stream) {
			some |= !r->t[j].omit_empty;
			maybe |= r->t[j].omit_empty;
		}
	*first = !some;
	return some || (!maybe && !r->t[k].omit_empty);
}

/* With two threads, each part writes its tables' sheets apart as their
 * rows are made, and close_table adds them to the workbook in order: the
 * sheets' XML and deflating then run on both cores, not after the rows on
 * one. */
static void write_apart(ev_report *r, size_t k)
{
	int first;
	const struct ev_rowset *rs = &r->t[k].rs;
	if (r->t[k].rs_rc || !sheet_apart(r, k, &first) || (r->t[k].omit_empty && rs->rows.len == 0))
		return;
	const char *sheet = ev_stats_sheet(r->t[k].a, r->t[k].table);
	struct tl_layout l;
	int rc = ev_xlsx_open_apart(&r->t[k].apart, first);
	if (!rc && r->t[k].cols)
		rc = tl_layout(rs, r->t[k].cols, &l);
	if (!rc)
		rc = r->t[k].cols ? tl_write(rs, &l, NULL, EV_TABLE_TSV, r->t[k].apart, sheet)
		                  : ev_rowset_print_xlsx(rs, r->t[k].apart, sheet);
	r->t[k].apart_rc = rc = rc ? rc : ev_xlsx_finish_apart(r->t[k].apart);
	if (rc)
		return;
	/* What close_table says of it, and its rows freed here too. */
	r->t[k].apart_rows = rs->rows.len;
	snprintf(r->t[k].apart_empty, sizeof r->t[k].apart_empty, "%s", r->t[k].cols ? l.empty : "");
	ev_rowset_free(&r->t[k].rs);
	r->t[k].have_rs = 0;
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
	/* An analysis's notes once, with its first table; a perf-model sheet's
	 * (omit_empty) with each, as each is a category of its own. */
	size_t first = 0;
	while (r->t[first].a != r->t[k].a)
		first++;
	if (first == k || r->t[k].omit_empty)
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
	if (r->t[k].apart && !r->t[k].apart_rc) {
		/* Written apart: its messages here, in the tables' order (one
		 * that failed is written here, to fail as one thread would). */
		if (r->t[k].apart_rows == 0 && !r->t[k].omit_empty)
			ev_stats_say_empty(s, sheet, &say);
		tl_say_empty(r->t[k].apart_empty, r->t[k].apart_rows, &say);
		snprintf(r->path, sizeof r->path, "%s", r->out.x_path);
		rc = ev_xlsx_adopt(r->out.x, r->t[k].apart);
		r->t[k].apart = NULL; /* freed by adopting */
		return rc;
	}
	memset(&rs, 0, sizeof rs);
	if (r->t[k].have_rs) {
		rs = r->t[k].rs;
		rc = r->t[k].rs_rc;
		r->t[k].have_rs = 0;
	} else {
		rc = ev_stats_rows_of(s, r->t[k].a, &rs);
	}
	/* A perf-model sheet without rows is left out, as TraceLens leaves it
	 * (the trace has none of its ops): not a surprise worth a warning. */
	if (rc == EV_OK && rs.rows.len == 0 && !r->t[k].omit_empty)
		ev_stats_say_empty(s, sheet, &say);
	if (!rc && rs.rows.len == 0 && r->t[k].omit_empty) {
		ev_rowset_free(&rs);
		return EV_OK;
	}
	if (r->out.x) {
		snprintf(r->path, sizeof r->path, "%s", r->out.x_path);
		rc = rc ? rc : r->t[k].cols ? print_tl(&rs, r->t[k].cols, NULL, EV_TABLE_TSV, r->out.x, sheet, &say)
		                            : ev_rowset_print_xlsx(&rs, r->out.x, sheet);
	} else if (!rc && (rc = ev_output_open(&file, table_path(r, sheet))) == EV_OK &&
	           (rc = r->t[k].cols ? print_tl(&rs, r->t[k].cols, file, r->out.fmt, NULL, NULL, &say)
	                              : ev_rowset_print(&rs, file, r->out.fmt)) == EV_OK) {
		rc = ev_output_close(file);
		file = NULL;
	}
	ev_output_abort(file);
	ev_rowset_free(&rs);
	return rc;
}

int ev_report_close(ev_report *r)
{
	int rc = ev_report_flush(r);
	if (r->noflow)
		ev_say(r->out.say, EV_SAY_WARN,
		       "%llu GPU events joined to their call by correlation id only (no ac2g flow) left without a call "
		       "or op, as TraceLens leaves them",
		       (unsigned long long)r->noflow);
	if (r->corr_only)
		ev_say(r->out.say, EV_SAY_WARN,
		       "GPU events were joined to their call by correlation id (the stream was converted without "
		       "kineto2ev --flow-links); TraceLens joins them only through ac2g flows: convert with "
		       "kineto2ev --flow-links for TraceLens's numbers");
	if (!rc && r->tp) {
		/* Both parts finish their tables and make their rows at once;
		 * the failure of the first table, as one thread would meet it. */
		r->closing = 1;
		atomic_store(&r->next_close, 0);
		run_parts(r);
		int p = r->fail[1].rc && (!r->fail[0].rc || r->fail[1].k < r->fail[0].k);
		rc = r->fail[p].rc;
		ev_worker_free(r->tp);
		r->tp = NULL;
	} else {
		for (size_t k = 0; !rc && k < r->n; k++)
			rc = r->t[k].shared ? EV_OK : ev_stats_finish(r->t[k].s);
	}
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
	ev_worker_free(r->tp);
	free(r->batch);
	for (size_t k = 0; k < r->n; k++) {
		if (r->t[k].stream) {
			int ignored = ev_table_close(r->t[k].stream); /* already failing */
			(void)ignored;
		}
		if (r->t[k].have_rs)
			ev_rowset_free(&r->t[k].rs);
		ev_xlsx_abort(r->t[k].apart);
		ev_output_abort(r->t[k].file);
		if (!r->t[k].shared)
			ev_stats_free(r->t[k].s);
	}
	free(r);
}
