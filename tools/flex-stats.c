/* SPDX-License-Identifier: MIT */
/*
 * flex-stats - acelyzer's tables from a flex2ev stream, as real CSV: the
 * command line over ev_flex_stats (lib/flex/stats*.c), which makes the one
 * streaming pass and writes the rows.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ev.h"
#include "ev/flex.h"

struct opts {
	struct ev_cli cli;
	struct ev_flex_stats_opts fs;
	const char *logs[64];
	int nlogs;
	int acetext; /* --acelyzer-text */
};

static void usage(FILE *f)
{
	fputs(
"Usage: flex-stats TABLE [options] [FILE...]\n"
"acelyzer's tables from an ev stream written by flex2ev (any order for\n"
"summary/categories/classes; time order for colls, iterations, power), as\n"
"comma-separated CSV with one header row, ranks ascending.  Times in microseconds.\n"
"\n"
"TABLE:\n"
"  summary      acelyzer's _summary.csv: per rank, every kernel ('Cmpt Exec')\n"
"               with numbers in its name replaced by [N]: rank,name,calls,\n"
"               total_us,mean_us,median_us,min_us,max_us,stdev_us,percent\n"
"               (percent of the rank's kernel time), largest first\n"
"  categories   acelyzer's _categories.csv, its column names: per rank, phase\n"
"               (TTFT/ITL from PREFILL/DECODING lines in the logs, else UNKN)\n"
"               and compiler category (from -c logs): Pid,Phase,Category,\n"
"               Kernel_Time,Frac_Time,Calls,Ideal_Time,Ideal_Cyc,Frac_Ideal,\n"
"               PT_Util (times in us); StcdpHbm and other always present;\n"
"               rows by kernel time, Total's before equal ones, as acelyzer\n"
"  stats        acelyzer's _stats_summary.csv, its column names: pid,\n"
"               elapsed_time (first kernel start to last kernel end),\n"
"               comp_active_atime (kernels), comm_active_atime (collective\n"
"               spans; empty without any), comp_active_atime_perc,\n"
"               comm_active_atime_perc (fractions 0-1 of elapsed_time); rows\n"
"               by the rank's first kernel start, as acelyzer\n"
"  active       acelyzer's _active.csv: rank,kernel_time_us,elapsed_time_us,\n"
"               start_us,end_us,active_pct (first kernel start to last end)\n"
"  colls        one row per collective, across its ranks: collective,seq,kind,\n"
"               nranks,ranks_seen,bytes,coll_data_bytes,start_us,end_us,\n"
"               span_us,bandwidth_gbps (coll_data_bytes = 2(N-1) x bytes, as\n"
"               acelyzer's Coll_Bandwidth)\n"
"  classes      rank,class,events,total_us: acelyzer's event classes\n"
"  ts_analysis  acelyzer's _ts_analysis.csv: per rank and kernel name, the\n"
"               TS2-1 .. TS5-4 stage gaps in cycles\n"
"  iterations   acelyzer's ITSTATS line, its names: pid,avg_iteration_time\n"
"               (us),iterations, then kernels_per_iteration,restarts: per\n"
"               rank, the kernel sequence that repeats (acelyzer's\n"
"               detection: the kernels so far end in one word twice after\n"
"               a prefix under a third), each later repetition an interval\n"
"               from the one before; a broken repetition restarts and is\n"
"               not counted\n"
"  power        acelyzer's --power-stats: per rank, the time between 'Power (mW)'\n"
"               samples, at the value of the sample before, split into time\n"
"               with a kernel running and without: pid,period,min_non_zero,\n"
"               max,mean_non_zero,median_non_zero,avg_total (W, weighted by\n"
"               time),dur_total,dur_non_zero (us)\n"
"\n"
"Options:\n"
"  -o, --output=FILE      write to FILE (via a temporary name) [stdout]\n"
"  -c, --compiler-log=LOG a compiler log with Perf Summary tables (repeatable;\n"
"                         the first definition of a kernel wins)\n"
"      --freq=SOC[:CORE]  clocks in MHz; CORE converts ideal cycles [1000:1100]\n"
"      --max-samples=N    values kept exactly for medians (summary, ts_analysis),\n"
"                         then a sketch within 0.5% [262144]\n"
"      --iter-window=N    iterations: kernels per rank searched for the\n"
"                         repeating word, then given up (said) [16384]\n"
"      --acelyzer-text    summary, active, ts_analysis: acelyzer's own files\n"
"                         byte for byte: its column names, order and printf\n"
"                         formats, TAB- and blank-separated, padded;\n"
"                         categories: its _categories.txt (pandas' text)\n"
"  -q, --quiet            no warnings\n"
EV_CLI_HELP_HV
"\n"
EV_CLI_HELP_EXIT("bad stream, unreadable log, no records for the table")
"\n"
"Example:\n"
"  flex2ev job.json | flex-stats categories -c compile.log\n",
	f);
}

static int filter_rec(void *ctx, ev_reader *r, struct ev_rec *rec)
{
	(void)r;
	return ev_flex_stats_add(ctx, rec);
}

static int report_iterations(const struct ev_cli *cli, const struct ev_flex_stats_counts *n)
{
	unsigned long long k = n->kernels;
	if (n->no_counters == k)
		return ev_cli_error(cli, "none of the %llu kernels has TS1..TS5 counters (tsx records): no iterations table", k);
	if (n->no_counters)
		ev_cli_warn(cli, "%llu kernel(s) without TS1..TS5 counters: not in the kernel sequence (acelyzer's rule)",
		            (unsigned long long)n->no_counters);
	if (n->unordered)
		return ev_cli_error(cli, "%llu kernel(s) start before their rank's kernel before: iterations needs "
		                    "the stream in time order, as flex2ev writes it", (unsigned long long)n->unordered);
	if (n->iter_gave_up)
		ev_cli_warn(cli, "%llu rank(s) without a repeating kernel sequence in their first --iter-window "
		            "kernels: their fields are empty (raise --iter-window)", (unsigned long long)n->iter_gave_up);
	return 0;
}

static int report_power(const struct ev_cli *cli, const struct ev_flex_stats_counts *n)
{
	if (n->power_samples < 2)
		return ev_cli_error(cli, "%llu 'Power (mW)' counter sample(s) in %llu records: a period needs two; no power "
		                    "table (flex2ev writes them from the device events' Power)",
		                    (unsigned long long)n->power_samples, (unsigned long long)n->records);
	if (n->unordered)
		return ev_cli_error(cli, "%llu record(s) start before their rank's record before: power needs the "
		                    "stream in time order, as flex2ev writes it", (unsigned long long)n->unordered);
	if (!n->kernels)
		ev_cli_warn(cli, "no 'Cmpt Exec' kernels: all the time is 'without kernels'");
	return 0;
}

/* Never an empty table without a word; then what was left out or is
 * approximate.  Returns the exit status. */
static int report(const struct opts *o, const struct ev_flex_stats_counts *n)
{
	const struct ev_cli *cli = &o->cli;
	enum ev_flex_table t = o->fs.table;
	unsigned long long records = n->records;
	if (!records)
		return ev_cli_error(cli, "no records in the input: nothing to tabulate");
	if ((t == EV_FLEX_SUMMARY || t == EV_FLEX_CATEGORIES || t == EV_FLEX_ACTIVE || t == EV_FLEX_TS_ANALYSIS ||
	     t == EV_FLEX_ITERATIONS) &&
	    !n->kernels)
		return ev_cli_error(cli, "no 'Cmpt Exec' kernels in %llu records: no %s table (is this a flex2ev stream?)",
		                    records, ev_flex_table_names[t]);
	if (t == EV_FLEX_STATS && !n->kernels && !n->colls)
		return ev_cli_error(cli, "no 'Cmpt Exec' kernels and no collective spans in %llu records: no stats table",
		                    records);
	if (t == EV_FLEX_COLLS && !n->colls)
		ev_cli_warn(cli, "no collective spans (coll records) in %llu records: the table is empty", records);
	if (t == EV_FLEX_CATEGORIES) {
		if (!o->nlogs)
			ev_cli_warn(cli, "no compiler log (-c): every kernel is in category 'other'");
		else if (n->missing)
			ev_cli_warn(cli, "%llu kernel(s) not in the compiler tables: counted as 'other'",
			            (unsigned long long)n->missing);
		if (n->ideal_clipped)
			ev_cli_warn(cli, "%llu kernel(s) ran shorter than their ideal time: ideal not counted (check --freq)",
			            (unsigned long long)n->ideal_clipped);
	}
	if (t == EV_FLEX_TS_ANALYSIS && n->no_counters == n->kernels)
		return ev_cli_error(cli, "none of the %llu kernels has TS1..TS5 counters (tsx records): no ts_analysis table",
		                    (unsigned long long)n->kernels);
	if (t == EV_FLEX_TS_ANALYSIS && n->no_counters)
		ev_cli_warn(cli, "%llu kernel(s) without TS1..TS5 counters: not in the table", (unsigned long long)n->no_counters);
	if (t == EV_FLEX_ITERATIONS)
		return report_iterations(cli, n);
	if (t == EV_FLEX_POWER)
		return report_power(cli, n);
	if (t == EV_FLEX_COLLS && n->colls_incomplete)
		ev_cli_warn(cli, "%llu collective(s) not seen on all their ranks", (unsigned long long)n->colls_incomplete);
	if (n->colls_evicted)
		ev_cli_warn(cli, "%llu collective(s) written before the end: too many open at once",
		            (unsigned long long)n->colls_evicted);
	if (n->sketched)
		ev_cli_warn(cli, "more than --max-samples values: %llu median(s) are within 0.5%%",
		            (unsigned long long)n->sketched);
	return 0;
}

static int run(struct opts *o, char **inputs, int ninputs)
{
	if (o->nlogs && o->fs.table != EV_FLEX_CATEGORIES)
		return ev_cli_usage_error(&o->cli, "-c applies to the categories table");
	if (o->acetext && !ev_flex_acetext_has(o->fs.table))
		return ev_cli_usage_error(&o->cli, "--acelyzer-text applies to summary, active, ts_analysis and "
		                          "categories (acelyzer writes its other tables as CSV)");
	struct ev_flex_complog cl = { NULL, 0, 0, 0, 0 };
	struct ev_flex_acetext at;
	memset(&at, 0, sizeof at);
	ev_strtab *st = ev_strtab_new();
	ev_output *out = NULL;
	ev_table *t = NULL;
	ev_flex_stats *fs = NULL;
	int rc = EV_OK, ex = st ? 0 : ev_cli_error(&o->cli, "out of memory");
	for (int i = 0; i < o->nlogs && !ex; i++)
		if ((rc = ev_flex_complog_read(&cl, o->logs[i])) == EV_ERR_FORMAT)
			ex = ev_cli_error(&o->cli, "%s: no compiler \"Perf Summary / Ideal/Total Cycles\" table found", o->logs[i]);
		else if (rc != EV_OK)
			ex = ev_cli_input_error(&o->cli, o->logs[i], rc);
	if (ex)
		goto done;
	size_t ncols;
	const char *const *cols = ev_flex_table_cols(o->fs.table, &ncols);
	struct ev_table_sink sink;
	if ((rc = ev_output_open(&out, o->cli.output)) == EV_OK)
		rc = o->acetext ? ev_flex_acetext_sink(&at, o->fs.table, out, &sink) : EV_OK;
	if (rc == EV_OK)
		rc = o->acetext ? ev_table_open_sink(&t, &sink, ev_flex_table_names[o->fs.table], cols, ncols)
		                : ev_table_open(&t, out, EV_TABLE_CSV, cols, ncols);
	if (rc != EV_OK) {
		ex = ev_cli_file_error(&o->cli, o->cli.output, rc);
		goto done;
	}
	o->fs.cl = &cl;
	if (ev_flex_stats_new(&fs, &o->fs, st, t) != EV_OK) {
		ex = ev_cli_error(&o->cli, "out of memory");
		goto done;
	}
	struct ev_filter flt = { .flags = EV_FILTER_SKIP_TEXT, .rec = filter_rec };
	if ((ex = ev_filter_run(&o->cli, inputs, (size_t)ninputs, st, NULL, &flt, fs)) != 0)
		goto done;
	rc = ev_flex_stats_finish(fs);
	int crc = ev_table_close(t);
	t = NULL;
	if (rc == EV_OK)
		rc = crc;
	if (rc == EV_OK && o->acetext)
		rc = ev_flex_acetext_end(&at);
	if (rc != EV_OK) {
		ex = ev_cli_file_error(&o->cli, o->cli.output, rc);
	} else {
		struct ev_flex_stats_counts n;
		ev_flex_stats_get_counts(fs, &n);
		ex = report(o, &n);
	}
done:
	if (t && ev_table_close(t) != EV_OK && !ex)
		ex = 1;
	if (out) {
		if (ex)
			ev_output_abort(out);
		else if ((rc = ev_output_close(out)) != EV_OK)
			ex = ev_cli_file_error(&o->cli, o->cli.output, rc);
	}
	ev_flex_acetext_free(&at);
	ev_flex_stats_free(fs);
	ev_flex_complog_free(&cl);
	ev_strtab_free(st);
	return ex;
}

enum { OPT_FREQ = 256, OPT_MAX_SAMPLES, OPT_ITER_WINDOW, OPT_ACETEXT };

static const struct option longopts[] = {
	EV_CLI_COMMON_LONG,
	{ "compiler-log", required_argument, NULL, 'c' },
	{ "freq", required_argument, NULL, OPT_FREQ },
	{ "max-samples", required_argument, NULL, OPT_MAX_SAMPLES },
	{ "iter-window", required_argument, NULL, OPT_ITER_WINDOW },
	{ "acelyzer-text", no_argument, NULL, OPT_ACETEXT },
	{ NULL, 0, NULL, 0 },
};

static int on_opt(void *ctx, int code, const char *arg)
{
	struct opts *o = ctx;
	const char *core;
	int64_t v;
	switch (code) {
	case 'c':
		if (o->nlogs == 64)
			return ev_cli_usage_error(&o->cli, "at most 64 compiler logs");
		o->logs[o->nlogs++] = arg;
		break;
	case OPT_FREQ:
		core = strchr(arg, ':');
		if (!core || ev_parse_decimal_scaled(core + 1, strlen(core + 1), 3, &v) || v <= 0)
			return ev_cli_usage_error(&o->cli, "--freq: expected SOC:CORE in MHz (e.g. 1000:1100), got '%s'", arg);
		o->fs.core_khz = (uint64_t)v;
		if (ev_parse_decimal_scaled(arg, (size_t)(core - arg), 3, &v) || v <= 0)
			return ev_cli_usage_error(&o->cli, "--freq: expected SOC:CORE in MHz (e.g. 1000:1100), got '%s'", arg);
		o->fs.soc_khz = (uint64_t)v;
		break;
	case OPT_MAX_SAMPLES:
		if (ev_parse_u64(arg, &o->fs.max_samples))
			return ev_cli_usage_error(&o->cli, "--max-samples: not a number: '%s'", arg);
		break;
	case OPT_ACETEXT:
		o->acetext = 1;
		break;
	case OPT_ITER_WINDOW:
		if (ev_parse_u64(arg, &o->fs.iter_window) || o->fs.iter_window < 2 * 5)
			return ev_cli_usage_error(&o->cli, "--iter-window: expected a number of kernels >= 10, got '%s'", arg);
		break;
	}
	return 0;
}

/* The options before TABLE (the scan stops at it), then those after it:
 * they may follow TABLE and the files. */
static const struct ev_cli_opts before_table = { "+c:", longopts, on_opt, usage };
static const struct ev_cli_opts after_table = { "c:", longopts, on_opt, usage };

/* TABLE, the first operand.  Returns EV_CLI_RUN or the exit status. */
static int choose_table(struct opts *o, char **words, int n)
{
	unsigned t;
	if (n == 0)
		return ev_cli_usage_error(&o->cli, "no TABLE given (summary, categories, stats, active, colls, classes, ts_analysis, iterations, power)");
	int rc = ev_cli_word(&o->cli, "TABLE", words[0], ev_flex_table_names, &t);
	if (rc)
		return rc;
	o->fs.table = (enum ev_flex_table)t;
	return EV_CLI_RUN;
}

int main(int argc, char **argv)
{
	struct opts o;
	int first, more = 0;
	memset(&o, 0, sizeof o);
	ev_cli_init(&o.cli, "flex-stats");
	o.fs.core_khz = 1100000;
	o.fs.soc_khz = 1000000;
	o.fs.max_samples = 262144;
	o.fs.iter_window = 16384;
	int status = ev_cli_getopt(&o.cli, argc, argv, &before_table, &o, &first);
	if (status == EV_CLI_RUN)
		status = choose_table(&o, argv + first, argc - first);
	/* The second scan has TABLE for its argv[0]. */
	if (status == EV_CLI_RUN)
		status = ev_cli_getopt(&o.cli, argc - first, argv + first, &after_table, &o, &more);
	if (status == EV_CLI_RUN)
		status = run(&o, argv + first + more, argc - first - more);
	return ev_cli_finish(&o.cli, status);
}
