/* SPDX-License-Identifier: MIT */
/*
 * ev2perfetto - write an ev stream as one multi-rank Chrome trace-event JSON timeline with flows
 *
 * The front end of lib/perfetto (include/ev/perfetto.h): options, the size
 * estimate, the input loop and the messages.  The timeline itself (tracks
 * and lanes, flows, counters, the JSON and its gzip) is the library's.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <errno.h>
#include <sys/stat.h>

#include "ev.h"

struct opts {
	struct ev_cli cli;
	struct ev_perfetto_opts p;
	int verbose;
	int cp_window;   /* --annotation or --instance given */
	char **inputs; /* none: standard input */
	int ninputs;
	ev_perfetto *tl; /* the timeline being written, to out */
	ev_output *out;
	int tb;          /* --tb: one PyTorch profiler trace per rank into -o DIR */
	ev_tb *tbw;
	ev_output **tb_out; /* its files, one per rank, in order of first use */
	size_t ntb, captb;
};

static void usage(FILE *f)
{
	fputs(
"Usage: ev2perfetto [options] [FILE...]\n"
"Write ev streams as one Chrome trace-event JSON timeline for Perfetto\n"
"(ui.perfetto.dev) or chrome://tracing: one GPU and one CPU process per rank,\n"
"one thread per GPU stream, CPU thread and NCCL channel, flow arrows and\n"
"counter tracks.  FILE defaults to standard input; several FILEs are read one\n"
"after the other and together must be in time order (merge rank streams with\n"
"ev-merge first).  Memory does not grow with the number of events (but for\n"
"--critical-path, which holds its window).\n"
"\n"
"Events: kernels, memcpy, memset, collectives (nested in their kernel), p2p,\n"
"send/recv messages and schedule calc on NCCL channel / lane threads, ranges\n"
"and runtime calls on CPU threads, marks as instants, counters.  Args carry\n"
"bytes, comm, seq, algo, proto, dtype, op signature and more.\n"
"\n"
"Flows (ids unique in the whole trace): runtime call -> kernel it launched,\n"
"send -> matching recv (per comm, channel and rank pair, in order), p2p send\n"
"-> recv, and each collective chained across ranks (same comm and seq).\n"
"Counters per rank: 'comm in flight' (bytes of running collectives and p2p),\n"
"'wire in flight' (bytes of running sends), 'kernels' (running kernels);\n"
"with --counters, HTA's queue length per stream and memory bandwidth.\n"
"\n"
"Options:\n"
"  -o, --output=FILE      write to FILE (via a temporary name) [stdout]\n"
"  -z, --gzip             gzip the output (Perfetto opens .json.gz)\n"
"      --layout=L         process ids: rank (GPU 2*rank, CPU 2*rank+1) or aorta\n"
"                         (GPU 1000*rank, CPU 1000*rank+500) [rank]\n"
"      --rank-prefix      prefix event names with the rank, e.g. [R3]\n"
"      --time=T           relative (0 = first record) or absolute (the\n"
"                         stream's origin, e.g. Unix time) [relative]\n"
"      --no-flows         leave out flow arrows\n"
"      --no-counters      leave out counter tracks\n"
"      --counters=LIST    add HTA's counter tracks (comma list, or all): queue\n"
"                         (launched GPU events not started, per stream, as\n"
"                         ev-stats queue) and membw (GB/s of the memcpy and\n"
"                         memset running, per kind, as ev-stats membw); every\n"
"                         event counts (no last-step filter)\n"
"      --critical-path=P  draw HTA's critical path (as ev-stats critpath): a\n"
"                         'critical path' track on each rank's GPU and CPU\n"
"                         process, a slice per segment on the side of its\n"
"                         event, arrows from each segment to the next; P is\n"
"                         rank (each rank's own path) or cross (one path\n"
"                         across the ranks, through each collective's last\n"
"                         arrival).  Holds the window's events until the end\n"
"      --annotation=TEXT, --instance=N[:M]  the critical path's window, as\n"
"                         ev-stats critpath's [ProfilerStep, 0]\n"
"      --max-pending=N    flow ends kept waiting for their partner; more are\n"
"                         dropped with a warning [1000000]\n"
"      --max-events=N     largest timeline written, in trace events (about\n"
"                         150 bytes of JSON each); inputs that are files are\n"
"                         counted first and refused with the estimate, a pipe\n"
"                         stops with an error at the limit; 0 = no limit\n"
"                         [20000000]\n"
"  -v, --verbose          print counts on stderr\n"
"  -q, --quiet            no progress or warnings\n"
"  -f, --force            write gzip output (-z) to a terminal\n"
"      --tb               write the PyTorch profiler's layout for TensorBoard's\n"
"                         profiler plugin instead: one Kineto trace per rank,\n"
"                         -o DIR/<host>_<rank>.pt.trace.json (worker_<rank>\n"
"                         without a host), with deviceProperties and\n"
"                         distributedInfo; -o DIR is required (made if absent)\n"
EV_CLI_HELP_HV
"\n"
"Slices that overlap on one stream without nesting go to an extra track of\n"
"that stream ('stream 7 #2'), so every track nests properly.\n"
"\n"
"Flows go forward in time: an arrow leaves its first slice at that slice's\n"
"start and lands in the second at the same instant, or at the second's start\n"
"if that is later (a send -> recv arrow lands when the send started if the\n"
"receive was already posted, else when the receive was posted).  If the\n"
"second slice ended before the first started (clocks not aligned), the\n"
"arrow is drawn backwards from the second's end to the first's start, and\n"
"a warning counts them.\n"
"\n"
EV_CLI_HELP_EXIT("bad, truncated or unordered input, write error")
"\n"
"Example:\n"
"  kineto2ev run/torch_profiler/rank*/*.json.gz | ev2perfetto -z -o run.json.gz\n",
	f);
}

/* ---- the size estimate ------------------------------------------------ */

static int count_events(void *ctx, ev_reader *r, struct ev_rec *rec)
{
	(void)r;
	*(uint64_t *)ctx += ev_perfetto_events_max(rec);
	return EV_OK;
}

/* Before writing: the trace events the inputs would give, when they are
 * files that could exceed --max-events (size / 97 bytes per record line,
 * 10x that for gzip, bounds the record count; only then are they counted).
 * A pipe is counted by the library while writing.  Returns the exit status. */
static int estimate(struct opts *o)
{
	uint64_t bound = 0, events = 0;
	for (int i = 0; i < o->ninputs; i++) {
		struct stat sb;
		if (strcmp(o->inputs[i], "-") == 0 || stat(o->inputs[i], &sb) != 0 || !S_ISREG(sb.st_mode))
			return 0;
		bound += (uint64_t)sb.st_size / 97 * 2 * 10;
	}
	if (bound <= o->p.max_events)
		return 0;
	const struct ev_filter f = { EV_FILTER_SKIP_TEXT | EV_FILTER_LAZY, NULL, NULL, count_events, NULL, NULL };
	int status = ev_filter_run(&o->cli, o->inputs, (size_t)o->ninputs, NULL, NULL, &f, &events);
	o->cli.filter_records = 0; /* the progress of the real pass starts again */
	if (status || events <= o->p.max_events)
		return status;
	return ev_cli_error(&o->cli, "the timeline would have about %llu trace events (~%llu MB of JSON), more than "
	                    "--max-events=%llu: filter the stream first (ev-view --rank, --type, --from/--to) or raise "
	                    "--max-events", (unsigned long long)events, (unsigned long long)(events * 150 >> 20),
	                    (unsigned long long)o->p.max_events);
}

/* ---- the timeline ------------------------------------------------------ */

/* The library's failure, while reading r (NULL: after the last record);
 * returns the exit status. */
static int timeline_error(const struct opts *o, const ev_reader *r)
{
	const struct ev_perfetto_error *e = ev_perfetto_error(o->tl);
	const struct ev_cli *cli = &o->cli;
	int rc = e->status;
	if (rc == EV_ERR_NOMEM)
		return ev_cli_error(cli, "out of memory");
	if (e->in_output && rc != EV_ERR_PIPE && rc != EV_ERR_IO)
		return ev_cli_error(cli, "%s: %s", ev_output_name(o->out), ev_strerror(rc));
	if (e->in_output) /* ev_output_flush restores the errno of the failed write */
		return ev_cli_file_error(cli, cli->output, (rc = ev_output_flush(o->out)) ? rc : EV_ERR_IO);
	if (!r)
		return ev_cli_error(cli, "%s", e->msg);
	const char *name = ev_reader_name(r);
	unsigned long long recno = ev_reader_recno(r);
	if (rc == EV_ERR_LIMIT)
		return ev_cli_error(cli, "%s: record %llu: more than --max-events=%llu trace events; stopped (filter the "
		                    "stream with ev-view, or raise --max-events)", name, recno,
		                    (unsigned long long)o->p.max_events);
	/* Out of order: e->msg has ev_order_text's words. */
	return ev_cli_error(cli, "%s: record %llu: %s", name, recno, e->msg);
}

static int add_record(void *ctx, ev_reader *r, struct ev_rec *rec)
{
	struct opts *o = ctx;
	if (ev_perfetto_add(o->tl, rec) == EV_OK)
		return EV_OK;
	timeline_error(o, r);
	return EV_FILTER_REPORTED;
}

/* Warnings, and the counts for -v, after a complete timeline. */
static void report(struct opts *o)
{
	struct ev_perfetto_stats s;
	ev_perfetto_get_stats(o->tl, &s);
#define U(x) (unsigned long long)(x)
	if (s.dropped)
		ev_cli_warn(&o->cli, "%llu flow ends dropped: more than --max-pending=%llu waiting for their partner",
		            U(s.dropped), U(o->p.max_pending));
	if (s.reversed[EV_PERFETTO_MESSAGE] + s.reversed[EV_PERFETTO_P2P])
		ev_cli_warn(&o->cli, "%llu message and %llu p2p flows: the receive ended before its send started (clocks not "
		            "aligned? see ev-merge --align); drawn from the receive to the send",
		            U(s.reversed[EV_PERFETTO_MESSAGE]), U(s.reversed[EV_PERFETTO_P2P]));
	struct ev_say say = { ev_cli_say, &o->cli };
	ev_perfetto_say_notes(o->tl, &say);
	if (s.clipped)
		ev_cli_warn(&o->cli, "%llu slices clipped: more than %d overlapping slices on one stream", U(s.clipped),
		            EV_PERFETTO_MAX_LANES);
	if (o->verbose && !o->cli.quiet)
		ev_cli_note(&o->cli,
		            "%llu records, %llu trace events, %llu flows (%llu launch, %llu message, %llu p2p, "
		            "%llu collective, %llu critical path, %llu pattern), %llu message ends and %llu collectives without a partner, "
		            "%llu extra lanes, %llu records skipped, %llu critical path segments, %llu bytes of JSON",
		            U(s.records), U(s.events), U(s.flows), U(s.flows_by_kind[EV_PERFETTO_LAUNCH]),
		            U(s.flows_by_kind[EV_PERFETTO_MESSAGE]), U(s.flows_by_kind[EV_PERFETTO_P2P]),
		            U(s.flows_by_kind[EV_PERFETTO_COLLECTIVE]), U(s.flows_by_kind[EV_PERFETTO_CRITICAL]),
		            U(s.flows_by_kind[EV_PERFETTO_PATTERN]),
		            U(s.unmatched), U(s.incomplete), U(s.lanes), U(s.skipped), U(s.cp_segments), U(s.json_bytes));
#undef U
}

/* The timeline of the inputs to -o; returns the exit status. */
static int write_timeline(struct opts *o, ev_strtab *st, ev_meta *meta)
{
	int status, rc = ev_output_open(&o->out, o->cli.output);
	if (rc != EV_OK)
		return ev_cli_file_error(&o->cli, o->cli.output, rc);
	/* Order is the library's check: it holds across the inputs, where
	 * EV_FILTER_ORDER would check each input alone. */
	const struct ev_filter f = { 0, NULL, NULL, add_record, NULL, NULL };
	/* gzip is binary: not onto a terminal, however it is named. */
	if (o->p.gzip && !o->cli.force && ev_output_is_tty(o->out))
		status = ev_cli_error(&o->cli, "refusing to write gzip output to a terminal; use -o FILE or a pipe (-f to force)");
	else if (ev_perfetto_new(&o->tl, &o->p, st, meta, o->out) != EV_OK)
		status = ev_cli_error(&o->cli, "out of memory");
	else if ((status = ev_filter_run(&o->cli, o->inputs, (size_t)o->ninputs, st, meta, &f, o)) == 0 &&
	         ev_perfetto_finish(o->tl) != EV_OK)
		status = timeline_error(o, NULL);
	if (status == 0) {
		rc = ev_output_close(o->out);
		o->out = NULL;
		if (rc)
			status = ev_cli_file_error(&o->cli, o->cli.output, rc);
		else
			report(o);
	}
	ev_output_abort(o->out);
	ev_perfetto_free(o->tl);
	return status;
}

/* ---- --tb: one Kineto trace per rank ------------------------------------ */

/* The library asks for rank's file: DIR/<worker>.pt.trace.json. */
static int tb_open(void *ctx, uint32_t rank, const char *worker, ev_output **out)
{
	struct opts *o = ctx;
	(void)rank;
	if (o->ntb == o->captb) {
		size_t n = o->captb ? 2 * o->captb : 16;
		ev_output **p = realloc(o->tb_out, n * sizeof *p);
		if (!p)
			return EV_ERR_NOMEM;
		o->tb_out = p;
		o->captb = n;
	}
	char path[4096];
	if ((size_t)snprintf(path, sizeof path, "%s/%s.pt.trace.json", o->cli.output, worker) >= sizeof path)
		return EV_ERR_ARG;
	int rc = ev_output_open(out, path);
	if (rc == EV_OK)
		o->tb_out[o->ntb++] = *out;
	return rc;
}

static int tb_error(const struct opts *o, const ev_reader *r)
{
	const struct ev_perfetto_error *e = ev_tb_error(o->tbw);
	const struct ev_cli *cli = &o->cli;
	if (e->status == EV_ERR_NOMEM)
		return ev_cli_error(cli, "out of memory");
	if (e->in_output)
		return ev_cli_error(cli, "%s/%s.pt.trace.json: %s", cli->output, e->msg, ev_strerror(e->status));
	if (!r)
		return ev_cli_error(cli, "%s", e->msg);
	return ev_cli_error(cli, "%s: record %llu: %s", ev_reader_name(r), (unsigned long long)ev_reader_recno(r),
	                    e->msg);
}

static int tb_add(void *ctx, ev_reader *r, struct ev_rec *rec)
{
	struct opts *o = ctx;
	if (ev_tb_add(o->tbw, rec) == EV_OK)
		return EV_OK;
	tb_error(o, r);
	return EV_FILTER_REPORTED;
}

/* Every rank's trace into the directory -o; returns the exit status. */
static int write_tb(struct opts *o, ev_strtab *st, ev_meta *meta)
{
	const char *dir = o->cli.output;
	if (mkdir(dir, 0777) != 0 && errno != EEXIST)
		return ev_cli_error(&o->cli, "%s: %s", dir, strerror(errno));
	const struct ev_filter f = { 0, NULL, NULL, tb_add, NULL, NULL };
	int status;
	if (ev_tb_new(&o->tbw, &o->p, st, meta, tb_open, o) != EV_OK)
		status = ev_cli_error(&o->cli, "out of memory");
	else if ((status = ev_filter_run(&o->cli, o->inputs, (size_t)o->ninputs, st, meta, &f, o)) == 0 &&
	         ev_tb_finish(o->tbw) != EV_OK)
		status = tb_error(o, NULL);
	for (size_t i = 0; i < o->ntb; i++) {
		if (status == 0) {
			char name[4096];
			snprintf(name, sizeof name, "%s", ev_output_name(o->tb_out[i]));
			int rc = ev_output_close(o->tb_out[i]);
			if (rc)
				status = ev_cli_file_error(&o->cli, name, rc);
		} else {
			ev_output_abort(o->tb_out[i]);
		}
	}
	struct ev_tb_stats s = { 0 };
	if (o->tbw)
		ev_tb_get_stats(o->tbw, &s);
	if (status == 0 && s.ranks == 0)
		ev_cli_warn(&o->cli, "no records: no trace written to %s", dir);
	if (status == 0 && s.dev_guessed)
		ev_cli_warn(&o->cli, "%llu rank(s) without a device number 0..63 in #rank device=: GPU id = the rank "
		            "(0 above 63)", (unsigned long long)s.dev_guessed);
	if (status == 0 && o->verbose && !o->cli.quiet)
		ev_cli_note(&o->cli, "%llu records, %llu trace events in %llu rank file(s), %llu records skipped",
		            (unsigned long long)s.records, (unsigned long long)s.events, (unsigned long long)s.ranks,
		            (unsigned long long)s.skipped);
	ev_tb_free(o->tbw);
	free(o->tb_out);
	return status;
}

static int run(struct opts *o)
{
	ev_strtab *st = ev_strtab_new();
	ev_meta *meta = ev_meta_new();
	int status = 0;
	if (o->cp_window && !o->p.critical_path)
		status = ev_cli_usage_error(&o->cli, "--annotation and --instance choose the window of --critical-path");
	else if (!st || !meta)
		status = ev_cli_error(&o->cli, "out of memory");
	else if (o->tb && (!o->cli.output || strcmp(o->cli.output, "-") == 0))
		status = ev_cli_usage_error(&o->cli, "--tb writes one file per rank: give the directory with -o DIR");
	else if (o->tb && o->p.critical_path)
		status = ev_cli_usage_error(&o->cli, "--critical-path draws on the Perfetto timeline, not in --tb's traces");
	else if (o->tb && o->p.gzip)
		status = ev_cli_usage_error(&o->cli, "--tb writes plain .pt.trace.json files; gzip them afterwards");
	else if (!o->p.max_events || (status = estimate(o)) == 0)
		status = o->tb ? write_tb(o, st, meta) : write_timeline(o, st, meta);
	ev_meta_free(meta);
	ev_strtab_free(st);
	return status;
}

enum { OPT_LAYOUT = 256, OPT_RANK_PREFIX, OPT_TIME, OPT_NO_FLOWS, OPT_NO_COUNTERS, OPT_COUNTERS, OPT_MAX_PENDING, OPT_MAX_EVENTS,
       OPT_CRITICAL_PATH, OPT_ANNOTATION, OPT_INSTANCE, OPT_TB };

static const struct option longopts[] = {
	EV_CLI_COMMON_LONG,
	{ "gzip", no_argument, NULL, 'z' },
	{ "layout", required_argument, NULL, OPT_LAYOUT },
	{ "rank-prefix", no_argument, NULL, OPT_RANK_PREFIX },
	{ "time", required_argument, NULL, OPT_TIME },
	{ "no-flows", no_argument, NULL, OPT_NO_FLOWS },
	{ "no-counters", no_argument, NULL, OPT_NO_COUNTERS },
	{ "counters", required_argument, NULL, OPT_COUNTERS },
	{ "max-pending", required_argument, NULL, OPT_MAX_PENDING },
	{ "max-events", required_argument, NULL, OPT_MAX_EVENTS },
	{ "critical-path", required_argument, NULL, OPT_CRITICAL_PATH },
	{ "annotation", required_argument, NULL, OPT_ANNOTATION },
	{ "instance", required_argument, NULL, OPT_INSTANCE },
	{ "verbose", no_argument, NULL, 'v' },
	{ "tb", no_argument, NULL, OPT_TB },
	{ NULL, 0, NULL, 0 },
};

static int on_opt(void *ctx, int code, const char *arg)
{
	static const char *const layouts[] = { "rank", "aorta", NULL }; /* EV_PERFETTO_LAYOUT_* */
	static const char *const times[] = { "relative", "absolute", NULL };
	static const char *const hta[] = { "queue", "membw", NULL }; /* EV_PERFETTO_HTA_* bits */
	static const char *const paths[] = { "rank", "cross", NULL }; /* EV_PERFETTO_CP_* - 1 */
	struct opts *o = ctx;
	struct ev_stats_opts so;
	int w;
	switch (code) {
	case 'z': o->p.gzip = 1; break;
	case 'v': o->verbose = 1; break;
	case OPT_LAYOUT:
		if ((w = ev_cli_word_find(layouts, arg)) < 0)
			return ev_cli_usage_error(&o->cli, "--layout: expected rank or aorta, got '%s'", arg);
		o->p.layout = w ? EV_PERFETTO_LAYOUT_AORTA : EV_PERFETTO_LAYOUT_RANK;
		break;
	case OPT_RANK_PREFIX: o->p.rank_prefix = 1; break;
	case OPT_TIME:
		if ((w = ev_cli_word_find(times, arg)) < 0)
			return ev_cli_usage_error(&o->cli, "--time: expected relative or absolute, got '%s'", arg);
		o->p.absolute = w;
		break;
	case OPT_NO_FLOWS: o->p.no_flows = 1; break;
	case OPT_TB: o->tb = 1; break;
	case OPT_NO_COUNTERS: o->p.no_counters = 1; break;
	case OPT_COUNTERS: return ev_cli_word_list(&o->cli, "--counters", arg, hta, &o->p.hta_counters);
	case OPT_MAX_PENDING:
		if (ev_parse_u64(arg, &o->p.max_pending) || o->p.max_pending > 1000000000u)
			return ev_cli_usage_error(&o->cli, "--max-pending: expected 0 to 1000000000, got '%s'", arg);
		break;
	case OPT_CRITICAL_PATH:
		if ((w = ev_cli_word_find(paths, arg)) < 0)
			return ev_cli_usage_error(&o->cli, "--critical-path: expected rank or cross, got '%s'", arg);
		o->p.critical_path = w + 1;
		break;
	case OPT_ANNOTATION: o->p.cp_annotation = arg, o->cp_window = 1; break;
	case OPT_INSTANCE:
		if (ev_stats_opts_instance(&so, arg) != EV_OK)
			return ev_cli_usage_error(&o->cli, "--instance: expected N or N:M (M >= N), got '%s'", arg);
		o->p.cp_inst_lo = so.cp_inst_lo;
		o->p.cp_inst_hi = so.cp_inst_hi;
		o->cp_window = 1;
		break;
	case OPT_MAX_EVENTS:
		if (ev_parse_u64(arg, &o->p.max_events))
			return ev_cli_usage_error(&o->cli, "--max-events: expected a number of events, got '%s'", arg);
		break;
	}
	return 0;
}

static const struct ev_cli_opts options = { "zv", longopts, on_opt, usage };

int main(int argc, char **argv)
{
	struct opts o;
	int first;
	memset(&o, 0, sizeof o);
	ev_cli_init(&o.cli, "ev2perfetto");
	ev_perfetto_opts_init(&o.p);
	o.p.max_events = 20000000;
	int status = ev_cli_getopt(&o.cli, argc, argv, &options, &o, &first);
	if (status == EV_CLI_RUN) {
		o.inputs = argv + first;
		o.ninputs = argc - first;
		status = run(&o);
	}
	return ev_cli_finish(&o.cli, status);
}
