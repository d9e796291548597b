/* SPDX-License-Identifier: MIT */
/*
 * ev-stats - the summaries of TraceLens, HTA, aorta and acelyzer in one
 * streaming pass over an ev stream: GPU timeline, kernel statistics,
 * categories, op (GEMM) statistics, cross-rank collectives, variance across
 * configurations and comparisons between sources.
 *
 * A front end: options, messages and the input loop.  The analyses are in
 * lib/analysis (include/ev/stats.h); memory grows with groups (names,
 * ranks, sources), not with events.
 */
#include <getopt.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ev.h"

/* The subcommands: the analyses of ev_stats_registry (their names, help,
 * options, tables and sheets come from their rows), then compare, which
 * runs one of them (--what) and compares its sources. */
static const char compare_name[] = "compare";
static const char *const compare_options[] = { "what", "threshold", "rank-mean", "exact-limit", NULL };
static const char compare_help[] = "the first source is the baseline; each other source is\n"
                                   "compared with it (--what); ranks pair by position";
/* report: the tables of TraceLens's perf report in one pass (lib/analysis/report.c). */
static const char report_name[] = "report";
static const char report_help[] = "every table of TraceLens's perf report in one pass:\n"
                                  "a workbook (--xlsx -o FILE) or a file per table (-o DIR);\n"
                                  "FILEs may be PyTorch profiler (Kineto) JSON, converted\n"
                                  "here as kineto2ev converts them (--flow-links with\n"
                                  "--tracelens)";

struct opts {
	struct ev_cli cli;
	const struct ev_stats_analysis *sub;  /* the subcommand's analysis; NULL: compare */
	const struct ev_stats_analysis *what; /* the analysis run: sub, or compare's --what */
	const char *table;           /* --table's word */
	enum ev_table_fmt fmt;
	struct ev_stats_opts so;
	int by_given;
	double threshold;            /* compare: percent */
	int rank_mean;               /* compare: --rank-mean */
	int xlsx;                    /* --xlsx: a workbook, the table as one sheet */
	int report;                  /* the report subcommand */
	int json;                    /* report: its inputs are Kineto JSON */
	int threads;                 /* report: --threads, 0 the default */
	uint64_t given;              /* bit per option code (subcommand checks) */
	char **inputs;
	int ninputs;
};

static const char *sub_name(const struct opts *o)
{
	return o->sub ? o->sub->name : o->report ? report_name : compare_name;
}

/* A subcommand's --help entry: its name, then its description's lines
 * one under the other from column 16. */
static void usage_sub(FILE *f, const char *name, const char *help)
{
	fprintf(f, "  %-12s ", name);
	for (const char *p = help;;) {
		const char *e = strchr(p, '\n');
		int len = e ? (int)(e - p) : (int)strlen(p);
		fprintf(f, "%.*s\n", len, p);
		if (!e)
			break;
		p = e + 1;
		fputs("               ", f);
	}
}

static void usage(FILE *f)
{
	fputs(
"Usage: ev-stats SUBCOMMAND [options] [FILE...]\n"
"Summaries of an ev stream in one streaming pass.  FILE defaults to standard\n"
"input; several FILEs are read as one stream.  Records of one group (one\n"
"rank of one source) must be in time order, as every evkit converter and\n"
"ev-merge write them.\n"
"\n"
"Subcommands:\n", f);
	for (size_t i = 0; ev_stats_registry[i]; i++)
		usage_sub(f, ev_stats_registry[i]->name, ev_stats_registry[i]->help);
	usage_sub(f, compare_name, compare_help);
	usage_sub(f, report_name, report_help);
	fputs(
"\n"
"Options:\n"
"      --by=LIST          group by: rank, src, stream, config (the sources of\n"
"                         one run: same label and #src keys apart from a\n"
"                         rank's file, rank, host, pid, ..., and input= unless\n"
"                         two inputs give one rank), or keys of #src lines (threads,\n"
"                         channels, ...) [timeline: src,rank; coll: config;\n"
"                         variance, compare: src; others: none]\n"
"      --rules=SET        classes: tracelens, tracelens-2025, hta [tracelens]\n"
"      --include-unlinked timeline: keep GPU events without a launching call\n"
"                         (TraceLens --include_unlinked_kernels; aorta's runs)\n"
"      --no-hta           timeline: leave out HTA's rows\n"
"      --tracelens-float  timeline, ops-*, kernel-ops: compute in microsecond\n"
"                         doubles as TraceLens does (its rounding included),\n"
"                         not in exact ns\n"
"      --class=LIST       ops, variance: kernel classes, 'all' for all\n"
"                         [ops: all; variance: gemm]\n"
"      --key=name|sig     variance: key instances by kernel name or by the\n"
"                         launching op signature [sig, name when none]\n"
"      --top=K            variance: the K widest ranges per group [all];\n"
"                         kdist: HTA's num_kernels [10]; kernel-patterns: rows\n"
"      --operator=TEXT, --min-pattern-len=N, --sort=count|gpu|cpu\n"
"                         kernel-patterns: ops named ...TEXT..., N kernels [3]\n"
"      --annotate=FILE    kernel-patterns: an ev stream of marks on the\n"
"                         instances of each rank's first --top patterns [5]\n"
"      --duration-ratio=R kdist: HTA's duration_ratio, 0 to 1 [0.8]\n"
"      --table=T          coll: summary, each (one row per collective,\n"
"                         streamed) or stragglers [summary]; short:\n"
"                         summary or histogram; idle: breakdown or intervals;\n"
"                         launch: summary, events or outliers (streamed);\n"
"                         critpath: summary, path, cross, cross-summary;\n"
"                         kdist: kernels or ranks\n"
"      --consecutive-kernel-delay=US  idle: gaps under US are kernel_wait [30]\n"
"      --runtime-cutoff=US, --launch-delay-cutoff=US  launch: HTA's outlier\n"
"                         thresholds [50, 100]\n"
"      --no-memory-events launch: kernel launches only, not cudaMemcpyAsync\n"
"                         and cudaMemsetAsync; kdist: no MEMORY kernels\n"
"      --annotation=TEXT, --instance=N[:M]  critpath: the window, ranges\n"
"                         N..M named ...TEXT... ('' all) [ProfilerStep, 0]\n"
"      --short-us=N       short: the threshold in microseconds, 1 to 1000 [10]\n"
"      --bins=N           short: histogram bins, 1 to 100000 [100]\n"
"      --max-open=N       coll: collectives held open at once; past it the\n"
"                         oldest is released incomplete [65536]\n"
"      --what=A           compare: timeline, kernels, coll or ops [timeline]\n"
"      --threshold=PCT    compare: changes within PCT percent are Similar [1]\n"
"      --rank-mean        compare: each run's mean over its ranks, not rank by rank\n"
"      --max-names=N      kernels: names with a row of their own, the first\n"
"                         seen; the others share one row '(other names)',\n"
"                         said on stderr; 0 for no limit [1000000]\n"
"      --exact-limit=N    keep up to N samples in all for exact quantiles;\n"
"                         past it quantiles come from a sketch within 0.5%\n"
"                         [262144]\n"
"      --csv, --json, --md  output format [TSV]\n"
"      --xlsx             an Excel workbook (with -o FILE): the table as one\n"
"                         sheet named as in TraceLens's reports (gpu_timeline,\n"
"                         kernel_summary, ops_unique_args, coll_analysis,\n"
"                         short_kernels_summary, ...; HTA's function names for\n"
"                         idle, launch, queue, membw, kdist;\n"
"                         frequent_cuda_kernel_sequences for kernel-patterns),\n"
"                         frozen header, filters; compare's status coloured\n"
"                         Better/Worse\n"
"      --tracelens        report: TraceLens's sheets, column names, order, units\n"
"                         rows and links (those evkit has; docs/ev-stats.md)\n"
"      --threads=N        report --tracelens: its tables on 1 or 2 threads [2]\n"
"  -o, --output=FILE      write to FILE (via a temporary name) [stdout];\n"
"                         report: a directory, a file per table named by\n"
"                         its sheet (with --xlsx a workbook)\n"
"  -q, --quiet            no warnings\n"
EV_CLI_HELP_HV
"\n"
"Options a subcommand does not use are usage errors.\n"
"\n"
"Units: times in the column's unit (_us, _ms); bandwidths in GB/s where\n"
"GB = 2^30 bytes, as TraceLens computes them; percentages 0-100.  compare\n"
"prints diff = test - base and pct = 100 * diff / base for every metric, and\n"
"status Better/Worse/Similar from the metric's direction (times: lower is\n"
"better; bandwidths: higher is better), base_count and test_count (instances),\n"
"and only-baseline/only-test rows with their side's numbers.  An empty\n"
"result is explained on stderr.  See docs/ev-stats.md.\n"
"\n"
EV_CLI_HELP_EXIT("malformed, truncated or unordered input")
"\n"
"Example:\n"
"  kineto2ev rank*/trace.json.gz | ev-stats timeline --include-unlinked\n", f);
}

/* ------------------------------------------------------------------ */

struct loop { struct opts *o; ev_stats *s; ev_report *rep; };

/* Memory ran out making the table: it grows with the input's names. */
static int input_oom(const struct opts *o)
{
	return ev_cli_error(&o->cli, "%s%s: out of memory making the table (--max-names bounds a kernels table)",
	                    o->ninputs ? o->inputs[0] : "standard input", o->ninputs > 1 ? " and the other inputs" : "");
}

/* A failure of the analysis: memory, or the file it names (else the output). */
static int stats_error(const struct opts *o, const ev_stats *s, int rc)
{
	const char *path = ev_stats_errpath(s);
	return rc == EV_ERR_NOMEM ? input_oom(o) : ev_cli_file_error(&o->cli, path ? path : o->cli.output, rc);
}

/* A record's failure (record n of name), or one the report held (read
 * `back` before). */
static int rec_failed(struct loop *lp, const char *name, uint64_t n, int64_t ts, int rc)
{
	n -= lp->rep ? ev_report_failed_at(lp->rep, &ts) : 0;
	if (rc == EV_OK || rc == EV_ERR_PIPE)
		return rc;
	if (rc == EV_ERR_ORDER)
		ev_cli_order_error(&lp->o->cli, name, n, ts, lp->rep ? ev_report_order_last(lp->rep) : ev_stats_order_last(lp->s));
	else if (rc == EV_ERR_NOMEM) /* the groups grow with the input's names */
		ev_cli_error(&lp->o->cli, "%s: record %llu: out of memory holding the table's groups (--max-names bounds a "
		             "kernels table)", name, (unsigned long long)n);
	else /* the streamed table's output failed */
		ev_cli_file_error(&lp->o->cli, lp->o->cli.output, rc);
	return EV_FILTER_REPORTED;
}

/* One record into the analysis (or every table of the report).  Order is
 * checked per group by the analysis (a stream may interleave ranks and
 * sources). */
static int on_rec(void *ctx, ev_reader *r, struct ev_rec *rec)
{
	struct loop *lp = ctx;
	int rc = lp->rep ? ev_report_add(lp->rep, rec) : ev_stats_add(lp->s, rec);
	return rc == EV_OK ? rc : rec_failed(lp, ev_reader_name(r), ev_reader_recno(r), rec->ts, rc);
}

/* The end of an input: the report's records held go to its tables. */
static int on_end(void *ctx, ev_reader *r, size_t i)
{
	int rc = ev_report_flush(((struct loop *)ctx)->rep);
	(void)i;
	return rc == EV_OK ? rc : rec_failed(ctx, ev_reader_name(r), ev_reader_recno(r), 0, rc);
}

/* Kineto JSON inputs, converted in this process as kineto2ev converts
 * them (--flow-links for TraceLens's layout): the stream's metadata lines
 * to meta, its records to the report, with nothing written between. */
struct feed { ev_meta *meta; ev_report *rep; uint64_t n; int64_t ts; };
static int feed_text(void *ctx, const char *line, size_t len) { return ev_meta_add_line(((struct feed *)ctx)->meta, line, len); }
static int feed_rec(void *ctx, const struct ev_rec *r)
{
	struct feed *f = ctx;
	f->n++;
	f->ts = r->ts;
	return ev_report_add(f->rep, r);
}
static int report_kineto(struct opts *o, struct loop *lp, ev_kineto *k, ev_meta *meta)
{
	struct feed fd = { meta, lp->rep, 0, 0 };
	const struct ev_kineto_sink sink = { &fd, feed_text, feed_rec };
	int rc = ev_kineto_feed(k, &sink);
	rc = rc ? rc : ev_report_flush(lp->rep);
	if (rc == EV_ERR_NOMEM || rc == EV_ERR_ORDER)
		return rec_failed(lp, o->inputs[0], fd.n, fd.ts, rc) ? 1 : 0;
	return rc ? ev_cli_file_error(&o->cli, rc == EV_ERR_IO ? ev_kineto_errpath(k) : o->inputs[0], rc) : 0;
}

/* The report: one pass, every table into the workbook x or the
 * directory -o. */
static int run_report(struct opts *o, ev_strtab *st, ev_meta *meta, ev_xlsx *x)
{
	struct ev_say say = { ev_cli_say, &o->cli };
	struct ev_report_out ro = { o->cli.output, x, o->cli.output, o->fmt, &say };
	ev_report *rep = NULL;
	ev_kineto *k = NULL;
	int threads = o->threads ? o->threads : sysconf(_SC_NPROCESSORS_ONLN) >= 2 ? 2 : 1;
	struct ev_kineto_opts ko = { o->so.rules, 0, 0, 0, 16u << 20, 16u << 20, NULL, 0, 1000000, o->so.tracelens, threads };
	int status = 0, rc = EV_OK;
	if (o->json && ev_kineto_new(&k, &ko, o->ninputs) != EV_OK)
		return ev_cli_error(&o->cli, "out of memory");
	for (int i = 0; k && i < o->ninputs && !status; i++) {
		ev_kineto_file(k, i)->path = o->inputs[i];
		status = ev_cli_kineto_read(&o->cli, k, i);
		status = status ? status : ev_cli_kineto_rank(&o->cli, k, i, o->ninputs, -1);
	}
	status = status || !k ? status : ev_cli_kineto_unique(&o->cli, k, o->ninputs);
	if (!status && (rc = ev_report_new(&rep, &o->so, &ro, k ? ev_kineto_strtab(k) : st, meta)) == EV_OK)
		rc = ev_report_threads(rep, threads);
	struct loop lp = { o, NULL, rep };
	struct ev_filter f = { EV_FILTER_SKIP_TEXT, NULL, NULL, on_rec, on_end, NULL };
	if (status || rc)
		status = status ? status : ev_cli_file_error(&o->cli, rep ? ev_report_path(rep) : o->cli.output, rc);
	else if ((status = k ? report_kineto(o, &lp, k, meta)
	                     : ev_filter_run(&o->cli, o->inputs, (size_t)o->ninputs, st, meta, &f, &lp)) == 0) {
		if (k)
			ev_cli_kineto_say(&o->cli, k, o->ninputs, &ko, 0);
		if ((rc = ev_report_close(rep)) != EV_OK)
			status = ev_cli_file_error(&o->cli, ev_report_path(rep), rc);
	}
	ev_report_free(rep);
	ev_kineto_free(k);
	return status;
}

static int run(struct opts *o)
{
	const struct ev_stats_analysis *what = o->what;
	int status = 0, rc;
	ev_strtab *st = ev_strtab_new();
	ev_meta *meta = ev_meta_new();
	ev_stats *s = NULL;
	ev_output *out = NULL;
	ev_xlsx *x = NULL;
	ev_table *each = NULL;
	struct ev_rowset rs;
	memset(&rs, 0, sizeof rs);
	if (!st || !meta) {
		status = ev_cli_error(&o->cli, "out of memory");
		goto done;
	}
	if (o->xlsx) {
		if (ev_cli_check_binary_out(&o->cli)) {
			status = 1;
			goto done;
		}
		long long created = ev_cli_created(ev_cli_newest(o->inputs, (size_t)o->ninputs));
		if ((rc = ev_xlsx_open(&x, o->cli.output, created)) != EV_OK) {
			status = ev_cli_error(&o->cli, "%s: %s", o->cli.output, x ? ev_xlsx_error(x) : ev_strerror(rc));
			goto done;
		}
	} else if (!o->report && (rc = ev_output_open(&out, o->cli.output)) != EV_OK) {
		status = ev_cli_file_error(&o->cli, o->cli.output, rc);
		goto done;
	}
	if (o->report) {
		if ((status = run_report(o, st, meta, x)) != 0)
			goto done;
		goto close;
	}
	o->so.analysis = what;
	/* A streamed table is written as the analysis goes, not from rows. */
	const struct ev_stats_subtable *tb = what->tables ? &what->tables[o->so.table] : NULL;
	if (tb && tb->stream_cols) {
		size_t nc = 0;
		while (tb->stream_cols[nc])
			nc++;
		rc = x ? ev_table_open_xlsx(&each, x, tb->sheet, tb->stream_cols, nc)
		       : ev_table_open(&each, out, o->fmt, tb->stream_cols, nc);
		if (rc != EV_OK) {
			status = ev_cli_file_error(&o->cli, o->cli.output, rc);
			goto done;
		}
		o->so.stream = each;
	}
	if ((rc = ev_stats_new(&s, &o->so, st, meta)) != EV_OK) {
		status = rc == EV_ERR_NOMEM ? ev_cli_error(&o->cli, "out of memory") : stats_error(o, s, rc);
		goto done;
	}
	struct loop lp = { o, s, NULL };
	struct ev_filter f = { EV_FILTER_SKIP_TEXT, NULL, NULL, on_rec, NULL, NULL };
	status = ev_filter_run(&o->cli, o->inputs, (size_t)o->ninputs, st, meta, &f, &lp);
	if (status)
		goto done;
	if ((rc = ev_stats_finish(s)) != EV_OK) {
		status = stats_error(o, s, rc);
		goto done;
	}
	struct ev_stats_counts c;
	ev_stats_get_counts(s, &c);
	struct ev_say say = { ev_cli_say, &o->cli };
	ev_stats_say_notes(s, &say);
	if (each) {
		rc = ev_table_close(each);
		each = NULL;
		if (!rc && c.streamed == 0)
			ev_stats_say_empty(s, sub_name(o), &say);
	} else if ((rc = ev_stats_rows(s, &rs)) == EV_OK) {
		if (rs.rows.len == 0)
			ev_stats_say_empty(s, sub_name(o), &say);
		if (!o->sub) {
			struct ev_compare_opts co = { o->threshold, o->fmt, x, compare_name, o->rank_mean };
			struct ev_compare_counts cc;
			rc = ev_stats_compare(s, &rs, &co, out, &cc);
			if (!rc && rs.rows.len && !cc.tests && !o->cli.quiet)
				ev_cli_warn(&o->cli, "compare: only one source in the input; nothing to compare");
		} else if (x) {
			rc = ev_rowset_print_xlsx(&rs, x, ev_stats_sheet(what, o->so.table));
		} else {
			rc = ev_rowset_print(&rs, out, o->fmt);
		}
	}
	if (rc) {
		status = rc == EV_ERR_NOMEM ? input_oom(o) : ev_cli_file_error(&o->cli, o->cli.output, rc);
		goto done;
	}
close:
	if (x) {
		char err[256];
		rc = ev_xlsx_close(x, err, sizeof err);
		x = NULL;
		if (rc)
			status = ev_cli_error(&o->cli, "%s: %s", o->cli.output, err);
	} else if (out) {
		rc = ev_output_close(out);
		out = NULL;
		if (rc)
			status = ev_cli_file_error(&o->cli, o->cli.output, rc);
	}
done:
	if (each) {
		int ignored = ev_table_close(each); /* already failing */
		(void)ignored;
	}
	if (out)
		ev_output_abort(out);
	if (x)
		ev_xlsx_abort(x);
	ev_rowset_free(&rs);
	ev_stats_free(s);
	ev_meta_free(meta);
	ev_strtab_free(st);
	return status;
}

/* ------------------------------------------------------------------ */
/* Options.                                                             */

enum optcode {
	O_BY = 1, O_RULES, O_UNLINKED, O_NO_HTA, O_CLASS, O_KEY, O_TOP, O_TABLE, O_WHAT, O_THRESHOLD, O_RANK_MEAN, O_EXACT, O_CSV,
	O_JSON, O_MD, O_TSV, O_FLOAT, O_MAX_OPEN, O_SHORT_US, O_BINS, O_MAX_NAMES, O_DELAY, O_RUNTIME, O_LDELAY, O_NO_MEM,
	O_TL, O_ANNOT, O_INSTANCE, O_RATIO, O_OPERATOR, O_MINLEN, O_SORT, O_ANNOTATE, O_XLSX, /* O_XLSX last: check_options goes up to it */
	O_THREADS,
};

#define MAX_WORDS 32

static const struct option longopts[] = {
	EV_CLI_COMMON_LONG,
	{ "by", required_argument, NULL, O_BY },
	{ "rules", required_argument, NULL, O_RULES },
	{ "include-unlinked", no_argument, NULL, O_UNLINKED },
	{ "no-hta", no_argument, NULL, O_NO_HTA },
	{ "class", required_argument, NULL, O_CLASS },
	{ "key", required_argument, NULL, O_KEY },
	{ "top", required_argument, NULL, O_TOP },
	{ "table", required_argument, NULL, O_TABLE },
	{ "what", required_argument, NULL, O_WHAT },
	{ "threshold", required_argument, NULL, O_THRESHOLD },
	{ "rank-mean", no_argument, NULL, O_RANK_MEAN },
	{ "exact-limit", required_argument, NULL, O_EXACT },
	{ "csv", no_argument, NULL, O_CSV },
	{ "json", no_argument, NULL, O_JSON },
	{ "md", no_argument, NULL, O_MD },
	{ "tsv", no_argument, NULL, O_TSV },
	{ "tracelens-float", no_argument, NULL, O_FLOAT },
	{ "max-open", required_argument, NULL, O_MAX_OPEN },
	{ "short-us", required_argument, NULL, O_SHORT_US },
	{ "bins", required_argument, NULL, O_BINS },
	{ "max-names", required_argument, NULL, O_MAX_NAMES },
	{ "consecutive-kernel-delay", required_argument, NULL, O_DELAY },
	{ "runtime-cutoff", required_argument, NULL, O_RUNTIME },
	{ "launch-delay-cutoff", required_argument, NULL, O_LDELAY },
	{ "no-memory-events", no_argument, NULL, O_NO_MEM },
	{ "tracelens", no_argument, NULL, O_TL },
	{ "xlsx", no_argument, NULL, O_XLSX },
	{ "threads", required_argument, NULL, O_THREADS },
	{ "annotation", required_argument, NULL, O_ANNOT },
	{ "instance", required_argument, NULL, O_INSTANCE },
	{ "duration-ratio", required_argument, NULL, O_RATIO },
	{ "operator", required_argument, NULL, O_OPERATOR },
	{ "min-pattern-len", required_argument, NULL, O_MINLEN },
	{ "sort", required_argument, NULL, O_SORT },
	{ "annotate", required_argument, NULL, O_ANNOTATE },
	{ NULL, 0, NULL, 0 },
};

/* Every option given must apply to the subcommand (or, for compare, to
 * compare or to the analysis it compares).  0 or the usage exit code. */
static int check_options(struct opts *o)
{
	for (int code = O_BY; code < O_XLSX; code++) {
		if (!(o->given & (UINT64_C(1) << code)))
			continue;
		const char *opt = "";
		for (const struct option *p = longopts; p->name; p++)
			if (p->val == code)
				opt = p->name;
		if (!(ev_stats_option_scoped(opt) || ev_stats_listed(compare_options, opt)) ||
		    ev_stats_listed(o->what->options, opt) || (!o->sub && ev_stats_listed(compare_options, opt)))
			continue;
		char name[32], subs[128];
		size_t n = ev_stats_option_users(opt, subs, sizeof subs);
		snprintf(name, sizeof name, "--%s", opt);
		if (ev_stats_listed(compare_options, opt))
			snprintf(subs + (n < sizeof subs ? n : sizeof subs), n < sizeof subs ? sizeof subs - n : 0, "%s%s",
			         n ? ", " : "", compare_name);
		char sub[48];
		snprintf(sub, sizeof sub, "%s%s%s", sub_name(o), o->sub ? "" : " --what=", o->sub ? "" : o->what->name);
		return ev_cli_not_for(&o->cli, sub, name, subs);
	}
	if (o->table) {
		/* The word was checked against the subcommand's tables (or the
		 * first analysis's); the index is the analysis's that runs. */
		const char *words[MAX_WORDS];
		return ev_cli_word(&o->cli, "--table", o->table, ev_stats_table_words(o->what, words, MAX_WORDS), &o->so.table);
	}
	return 0;
}

static int parse_option(struct opts *o, int c, const char *arg)
{
	struct ev_stats_opts *so = &o->so;
	int rc;
	if (c > 0 && c < 64)
		o->given |= UINT64_C(1) << c;
	switch (c) {
	case O_BY:
		if (ev_stats_opts_by(so, arg))
			return ev_cli_usage_error(&o->cli, "--by: expected at most %d fields of under 64 bytes, got '%s'",
			                          EV_STATS_MAX_BY, arg);
		o->by_given = 1;
		break;
	case O_RULES:
		return ev_cli_rules(&o->cli, arg, &so->rules);
	case O_UNLINKED: so->unlinked = 1; break;
	case O_NO_HTA: so->no_hta = 1; break;
	case O_CLASS:
		if (ev_kclass_list_parse(arg, &so->class_mask) != EV_OK)
			return ev_cli_usage_error(&o->cli, "--class: unknown kernel class in '%s'", arg);
		so->class_given = 1;
		break;
	case O_KEY: {
		static const char *const words[] = { "sig", "name", NULL };
		unsigned w;
		if ((rc = ev_cli_word(&o->cli, "--key", arg, words, &w)) != 0)
			return rc;
		so->key_name = w == 1;
		break;
	}
	case O_TOP:
		if (ev_parse_u64(arg, &so->top) != EV_OK || so->top == 0)
			return ev_cli_usage_error(&o->cli, "--top: expected a positive count, got '%s'", arg);
		break;
	case O_TABLE: {
		const char *words[MAX_WORDS];
		unsigned w;
		if ((rc = ev_cli_word(&o->cli, "--table", arg, ev_stats_table_words(o->sub && o->sub->tables ? o->sub : NULL, words, MAX_WORDS), &w)) != 0)
			return rc;
		o->table = arg;
		break;
	}
	case O_SHORT_US: {
		uint64_t us;
		if (ev_parse_u64(arg, &us) != EV_OK || us == 0 || us > EV_SHORT_MAX_NS / 1000)
			return ev_cli_usage_error(&o->cli, "--short-us: expected 1 to %u, got '%s'", EV_SHORT_MAX_NS / 1000, arg);
		so->short_ns = us * 1000;
		break;
	}
	case O_BINS:
		if (ev_parse_u64(arg, &so->short_bins) != EV_OK || so->short_bins == 0 || so->short_bins > 100000)
			return ev_cli_usage_error(&o->cli, "--bins: expected 1 to 100000, got '%s'", arg);
		break;
	case O_DELAY: case O_RUNTIME: case O_LDELAY: {
		static const char *const names[] = { "consecutive-kernel-delay", "runtime-cutoff", "launch-delay-cutoff" };
		int64_t *dst = c == O_DELAY ? &so->hta_delay_us : c == O_RUNTIME ? &so->hta_runtime_us : &so->hta_launch_us;
		if (ev_parse_i64(arg, dst) != EV_OK || *dst < 0 || *dst > 1000000000)
			return ev_cli_usage_error(&o->cli, "--%s: expected 0 to 1000000000 us, got '%s'", names[c - O_DELAY], arg);
		so->hta_set |= 1u << (c - O_DELAY);
		break;
	}
	case O_NO_MEM: so->hta_no_memory = 1; break;
	case O_ANNOT: so->cp_annotation = arg; break;
	case O_INSTANCE:
		if (ev_stats_opts_instance(so, arg))
			return ev_cli_usage_error(&o->cli, "--instance: expected N or N:M (M >= N), got '%s'", arg);
		break;
	case O_RATIO:
		if (ev_parse_double(arg, &so->hta_ratio) != EV_OK || !(so->hta_ratio >= 0 && so->hta_ratio <= 1))
			return ev_cli_usage_error(&o->cli, "--duration-ratio: expected 0 to 1, got '%s'", arg);
		so->hta_set |= EV_HTA_SET_RATIO;
		break;
	case O_XLSX: o->xlsx = 1; break;
	case O_THREADS:
		if (strcmp(arg, "1") && strcmp(arg, "2"))
			return ev_cli_usage_error(&o->cli, "--threads: expected 1 or 2, got '%s'", arg);
		o->threads = *arg - '0';
		break;
	case O_OPERATOR: so->kp_operator = arg; break;
	case O_ANNOTATE: so->annotate = arg; break;
	case O_MINLEN: {
		uint64_t v;
		if (ev_parse_u64(arg, &v) != EV_OK || v == 0 || v > UINT32_MAX)
			return ev_cli_usage_error(&o->cli, "--min-pattern-len: expected a positive count, got '%s'", arg);
		so->kp_min_len = (uint32_t)v;
		break;
	}
	case O_SORT: {
		static const char *const words[] = { "count", "gpu", "cpu", NULL };
		return ev_cli_word(&o->cli, "--sort", arg, words, &so->kp_sort);
	}
	case O_WHAT: {
		/* The comparable analyses, in registry order. */
		const char *words[MAX_WORDS];
		const struct ev_stats_analysis *rows[MAX_WORDS];
		size_t n = 0;
		for (size_t i = 0; ev_stats_registry[i] && n + 1 < MAX_WORDS; i++)
			if (ev_stats_registry[i]->comparable) {
				rows[n] = ev_stats_registry[i];
				words[n++] = ev_stats_registry[i]->name;
			}
		words[n] = NULL;
		unsigned w;
		if ((rc = ev_cli_word(&o->cli, "--what", arg, words, &w)) != 0)
			return rc;
		o->what = rows[w];
		break;
	}
	case O_THRESHOLD:
		if (ev_parse_double(arg, &o->threshold) != EV_OK || !(o->threshold >= 0))
			return ev_cli_usage_error(&o->cli, "--threshold: expected a percentage, got '%s'", arg);
		break;
	case O_RANK_MEAN:
		o->rank_mean = 1;
		break;
	case O_EXACT:
	case O_MAX_NAMES:
		if (ev_parse_u64(arg, c == O_EXACT ? &so->exact_limit : &so->max_names) != EV_OK)
			return ev_cli_usage_error(&o->cli, "--%s: expected a count, got '%s'", c == O_EXACT ? "exact-limit" : "max-names", arg);
		break;
	case O_MAX_OPEN: {
		uint64_t v;
		if (ev_parse_u64(arg, &v) != EV_OK || v == 0 || v > 1u << 24)
			return ev_cli_usage_error(&o->cli, "--max-open: expected a count from 1 to 16777216, got '%s'", arg);
		so->coll_limits.max_open = (size_t)v;
		break;
	}
	case O_CSV: o->fmt = EV_TABLE_CSV; break;
	case O_JSON: o->fmt = EV_TABLE_JSON; break;
	case O_MD: o->fmt = EV_TABLE_MD; break;
	case O_TSV: o->fmt = EV_TABLE_TSV; break;
	case O_FLOAT: so->float_us = 1; break;
	case O_TL: so->tracelens = 1; break;
	default: return ev_cli_try_help(&o->cli);
	}
	return 0;
}

static int parse_option_cb(void *ctx, int code, const char *arg)
{
	return parse_option(ctx, code, arg);
}

/* Before the subcommand only the common options are taken ('+': the
 * subcommand's name ends them); after it, every option, also after files. */
static const struct ev_cli_opts before_sub = { "+", longopts, NULL, usage };
static const struct ev_cli_opts after_sub = { "", longopts, parse_option_cb, usage };

static void init_opts(struct opts *o)
{
	memset(o, 0, sizeof *o);
	ev_cli_init(&o->cli, "ev-stats");
	/* variance's default classes; ops reads the mask only when --class
	 * is given (class_given) and otherwise reports every class. */
	o->so.class_mask = 1u << EV_KC_GEMM;
	o->so.exact_limit = 262144;
	o->so.max_names = 1000000;
	o->so.coll_limits.max_open = EV_COLLMATCH_MAX_OPEN;
	o->threshold = 1.0;
	for (size_t i = 0; ev_stats_registry[i] && !o->what; i++)
		if (ev_stats_registry[i]->comparable)
			o->what = ev_stats_registry[i]; /* compare's default --what: the first it can compare */
}

/* The subcommand named by words[0], or the usage error. */
static int choose_sub(struct opts *o, char **words, int n)
{
	if (n <= 0) {
		char subs[512];
		size_t k = 0;
		for (size_t i = 0; ev_stats_registry[i] && k < sizeof subs; i++)
			k += (size_t)snprintf(subs + k, sizeof subs - k, "%s, ", ev_stats_registry[i]->name);
		if (k < sizeof subs)
			snprintf(subs + k, sizeof subs - k, "%s, %s", compare_name, report_name);
		return ev_cli_usage_error(&o->cli, "missing subcommand (%s)", subs);
	}
	o->report = !strcmp(words[0], report_name);
	if (!o->report && strcmp(words[0], compare_name) && !(o->sub = ev_stats_find(words[0])))
		return ev_cli_usage_error(&o->cli, "unknown subcommand '%s'", words[0]);
	return EV_CLI_RUN;
}

/* What the options leave to the subcommand: its grouping when --by is not
 * given, and compare's sources as the first key.  0 or the usage error. */
static int settle_options(struct opts *o)
{
	int rc;
	if (o->report) {
		/* Each table has its own grouping and --table: those options,
		 * and compare's, do not apply. */
		for (const struct option *p = longopts; p->name; p++)
			if (p->val < 64 && (o->given & (UINT64_C(1) << p->val)) &&
			    (p->val == O_BY || p->val == O_TABLE || ev_stats_listed(compare_options, p->name) ||
			     !strcmp(p->name, "class") || !strcmp(p->name, "key") || !strcmp(p->name, "top")))
				return ev_cli_usage_error(&o->cli, "report: --%s does not apply (each table has its own)", p->name);
		for (const struct option *p = longopts; p->name; p++)
			if (p->val < 64 && (o->given & (UINT64_C(1) << p->val)) && ev_stats_option_scoped(p->name) &&
			    !ev_report_takes_option(p->name, o->so.tracelens))
				return ev_cli_usage_error(&o->cli, "report%s: --%s does not apply (no table of it takes it)",
				                          o->so.tracelens ? " --tracelens" : "", p->name);
		if (!strcmp(o->cli.output, "-"))
			return ev_cli_usage_error(&o->cli, "report: -o DIR is required (-o FILE with --xlsx)");
		return 0;
	}
	if (o->sub)
		o->what = o->sub;
	if (o->so.tracelens || o->threads)
		return ev_cli_not_for(&o->cli, sub_name(o), o->threads ? "--threads" : "--tracelens", report_name);
	if ((rc = check_options(o)) != 0)
		return rc;
	if (!o->by_given) {
		/* The analysis's default; compare compares sources, so its
		 * grouping begins with src: an analysis default that does is
		 * kept, any other becomes src. */
		const char *by = o->what->default_by;
		if (!o->sub && !(by && !strncmp(by, "src", 3) && (by[3] == '\0' || by[3] == ',')))
			by = "src";
		if (by && ev_stats_opts_by(&o->so, by) != EV_OK)
			return ev_cli_error(&o->cli, "%s: bad default grouping '%s'", o->what->name, by);
	}
	struct ev_stats_opts *so = &o->so;
	if (!o->sub && (so->nby == 0 || so->by[0] != EV_BY_SRC)) {
		/* Sources are what compare compares: src is always the first key. */
		memmove(so->by + 1, so->by, (size_t)(EV_STATS_MAX_BY - 1) * sizeof so->by[0]);
		memmove(so->by_key + 1, so->by_key, (size_t)(EV_STATS_MAX_BY - 1) * sizeof so->by_key[0]);
		so->by[0] = EV_BY_SRC;
		if (so->nby < EV_STATS_MAX_BY)
			so->nby++;
	}
	return 0;
}

/* report's inputs: ev streams, or Kineto JSON files (converted here);
 * not some of each. */
static int json_inputs(struct opts *o)
{
	int n = 0;
	for (int i = 0; i < o->ninputs; i++)
		n += ev_cli_is_json(o->inputs[i]);
	if (n && n < o->ninputs)
		return ev_cli_usage_error(&o->cli, "report: Kineto JSON and ev streams mixed: convert the JSON with "
		                          "kineto2ev first");
	o->json = n > 0;
	return 0;
}

int main(int argc, char **argv)
{
	struct opts o;
	int first = 0, more = 0;
	init_opts(&o);
	int status = ev_cli_getopt(&o.cli, argc, argv, &before_sub, &o, &first);
	if (status == EV_CLI_RUN)
		status = choose_sub(&o, argv + first, argc - first);
	/* The second scan has the subcommand for its argv[0]. */
	if (status == EV_CLI_RUN)
		status = ev_cli_getopt(&o.cli, argc - first, argv + first, &after_sub, &o, &more);
	if (status == EV_CLI_RUN && (status = settle_options(&o)) == 0) {
		o.inputs = argv + first + more;
		o.ninputs = argc - first - more;
		status = o.report ? json_inputs(&o) : 0;
		status = status ? status : run(&o);
	}
	return ev_cli_finish(&o.cli, status);
}
