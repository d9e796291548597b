/* SPDX-License-Identifier: MIT */
/*
 * coll-expand - expand NCCL collectives (COLL/P2P records) into the wire
 * messages NCCL sends (SEND/RECV), local time (CALC) and dependencies (DEP).
 *
 * The model lives in the library (include/ev/nccl_sched.h, lib/nccl/,
 * docs/nccl-model.md); this is its front end: options, the input loop,
 * pass-through of other records, and the messages the library hands back.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ev.h"
#include "ev/nccl_sched.h"

enum format { FMT_EV, FMT_FLOWS, FMT_GOAL };

struct opts {
	struct ev_cli cli;
	struct ev_nccl_params p;
	const char *lat_path;
	int only_comm;
	enum format format;
	struct ev_cli_goal go; /* --format=goal: ev2goal's schedule options */
	char **inputs;
	int ninputs;
};

static void usage(FILE *f)
{
	fputs(
"Usage: coll-expand [options] [FILE...]\n"
"Expand the NCCL collectives of an ev stream (COLL and P2P records, with\n"
"#comm, #ring, #tree and #rank metadata) into the messages NCCL sends: per\n"
"rank SEND, RECV and CALC records with dense op ids and DEP records, per\n"
"channel, loop, ring step and slice.  Other records pass through.  FILE\n"
"defaults to standard input; several FILEs are read as one stream, which\n"
"must be in time order (ev-merge).\n"
"\n"
"Options:\n"
"  -o, --output=FILE      write to FILE (via a temporary name) [stdout]\n"
"  -l, --lat=FILE         latency table from npkit2lat: CALC records for the\n"
"                         reduction and copy of every received slice\n"
"      --nccl-version=V   NCCL version whose channel split to follow: <= 2.19\n"
"                         interleaved, 2.20-2.21 contiguous, >= 2.22 byte\n"
"                         distribution [#meta nccl_version, else 2.22]\n"
"  -a, --algo=LIST        allowed algorithms, NCCL_ALGO syntax (ring,tree;\n"
"                         ^tree; allreduce:tree); forces the algorithm when\n"
"                         the trace does not give one [all]\n"
"  -p, --proto=LIST       allowed protocols, NCCL_PROTO syntax (ll,ll128,simple)\n"
"      --nchannels=N      channels per collective when the trace has none\n"
"      --nthreads=N       threads per block when the trace has none\n"
"      --trace-params=no  ignore algo/proto/channels/threads in the records\n"
"      --preset=NAME      system for the tuning model: h100, a100, b200, pcie,\n"
"                         mi300x, mi350x, mi250 [from the device named in\n"
"                         #rank/#meta gpu=, device_name= or arch=; else h100]\n"
"      --ranks-per-node=N ranks r and s share a node when r/N == s/N [from\n"
"                         #rank node= or host=; unknown: every rank its own node]\n"
"      --intra=MODE       intra-node messages: calc (0-byte handshake + CALC\n"
"                         intra of bytes/bandwidth on both sides, as ATLAHS) or\n"
"                         send (real SEND/RECV flagged intra) [calc]\n"
"      --intra-bw=GBPS    bandwidth of intra-node CALC [300]\n"
"      --compute=MODE     CALC between operations of a stream: gaps (idle time\n"
"                         between NCCL kernels, ATLAHS), kernels (time of the\n"
"                         compute kernels of the rank in between), none [gaps]\n"
"      --lead-in          also a CALC before a stream's first operation,\n"
"                         from the rank's first record (NCCL init, warm-up);\n"
"                         by default every stream starts at its first operation\n"
"      --sends=MODE       a channel's send k waits for: fifo (send k-1 posted,\n"
"                         GOAL irequires, and a free slot of NCCL's 8-step FIFO)\n"
"                         or serial (send k-1 delivered, the earlier model)\n"
"                         [fifo]\n"
"      --merge-streams    one chain per rank instead of one per CUDA stream\n"
"      --only-comm        drop records other than the expansion\n"
"      --keep-coll        also keep the COLL/P2P/CHAN records\n"
"      --lenient          skip (and count) collectives with an unknown\n"
"                         communicator, missing ring ranks or inconsistent sizes\n"
"      --max-messages=N   refuse an operation that would expand into more than\n"
"                         N messages on one rank [4194304]\n"
"      --jitter=SEED      1% Gaussian noise on CALC costs, seeded\n"
"      --format=FMT       ev (the schedule), flows (one JSON line per message\n"
"                         and per operation and channel, for nccl-flows) or\n"
"                         goal (the schedule as GOAL for LogGOPSim, written\n"
"                         as `coll-expand | ev2goal` would, without the ev\n"
"                         stream between them) [ev]\n"
"\n"
"With --format=goal, ev2goal's schedule options (see ev2goal --help):\n"
"  -b, --binary, --cpu=MODE, --nic=POLICY, --num-ranks=N, --no-check,\n"
"  --keep-sync, -s, --stats[=FILE], -w, --window=N, -T, --tmpdir=DIR;\n"
"  --ranks-per-node also gives --nic=rail its nodes.\n"
"  -f, --force            write binary output to a terminal\n"
"  -q, --quiet            no warnings\n"
EV_CLI_HELP_HV
"\n"
"Tags: a SEND and its RECV carry the same aux (tag) = communicator index (10\n"
"bits; communicators numbered by id) | channel (6 bits) | message counter of\n"
"that (sender, receiver, comm, channel) (16 bits), so tags are < 2^32, FIFO\n"
"order per key is preserved and the order of the input files does not matter.\n"
"\n"
"Every algorithm and protocol the tuning model had to choose is listed on\n"
"stderr at the end (deduplicated, with counts), as are collectives seen on\n"
"fewer ranks than their communicator has and members with no records.\n"
"\n"
EV_CLI_HELP_EXIT("bad or truncated input, unknown communicator,\n"
"     inconsistent collective, an operation over --max-messages, write error")
"\n"
"Example:\n"
"  npkit2lat -o lat.tsv npkit_data_summary_*.json\n"
"  kineto2ev rank*/trace.json.gz | coll-expand --lat lat.tsv --only-comm | ev2goal -o job.goal\n",
	f);
}

/* ------------------------------------------------------------------ */
/* Sinks.                                                              */

struct run {
	struct opts *o;
	ev_writer *w;
	ev_output *out;              /* --format=flows */
	ev_nccl_flows *flows;
	ev_goal *goal;               /* --format=goal */
	ev_goal_pipe *pipe;          /* goal built on a thread of its own, or NULL */
	uint64_t nout;               /* records handed to goal */
	int goal_failed;             /* goal refused one: its error is the message */
	char goal_src[4096];         /* "FILE (expanded)", goal's name for its input */
	const char *fname;
	int skipped_said;
};

static int emit_ev(void *ctx, const struct ev_rec *r)
{
	struct run *x = ctx;
	return ev_write(x->w, r);
}

/* Every record ev2goal would read from the stream, numbered as there. */
static int emit_goal(void *ctx, const struct ev_rec *r)
{
	struct run *x = ctx;
	++x->nout;
	int rc = x->pipe ? ev_goal_pipe_add(x->pipe, r, x->nout) : ev_goal_add(x->goal, r, x->nout);
	x->goal_failed = rc != EV_OK;
	return rc;
}

/* Before a message: the builder has added every record handed to it, so
 * that its failure on an earlier record is the one told (as on one
 * thread, where the expansion stops there). */
static void goal_sync(struct run *x)
{
	if (x->pipe && !x->goal_failed && ev_goal_pipe_sync(x->pipe))
		x->goal_failed = 1;
}

static int emit_none(void *ctx, const struct ev_rec *r)
{
	(void)ctx;
	(void)r;
	return EV_OK;
}

static int flows_message(void *ctx, const struct ev_rec *r, const struct ev_nccl_plan *pl)
{
	struct run *x = ctx;
	return ev_nccl_flows_message(x->flows, r, pl);
}

static int flows_op_done(void *ctx, const struct ev_rec *op, const struct ev_nccl_plan *pl)
{
	struct run *x = ctx;
	return ev_nccl_flows_op_done(x->flows, op, pl);
}

static void warn_cb(void *ctx, const char *msg)
{
	struct run *x = ctx;
	goal_sync(x);
	if (x->goal_failed)
		return; /* past the builder's failure: one thread would not be here */
	ev_cli_warn(&x->o->cli, "%s: %s", x->fname ? x->fname : "input", msg);
}

/* A status from the library: a data error with its message, a write
 * error on the output, or memory. */
static int report(struct run *x, ev_nccl_sched *s, int rc)
{
	struct opts *o = x->o;
	const char *msg = ev_nccl_sched_errmsg(s);
	if (rc == EV_NCCL_SKIPPED && x->skipped_said && !x->goal_failed)
		return 0; /* said once: no message, no wait for the builder */
	goal_sync(x);
	if (x->goal_failed)
		return ev_cli_goal_error(&o->cli, ev_goal_error(x->goal), o->cli.output);
	if (rc == EV_NCCL_SKIPPED) {
		if (!x->skipped_said++)
			ev_cli_warn(&o->cli, "%s: record %llu: %s (skipped; --lenient)", x->fname,
			            (unsigned long long)ev_nccl_sched_err_recno(s), msg);
		return 0;
	}
	if (rc == EV_ERR_NOMEM)
		return ev_cli_error(&o->cli, "out of memory");
	if (msg[0] && (rc == EV_ERR_FORMAT || rc == EV_ERR_LIMIT || rc == EV_ERR_ORDER))
		return ev_cli_error(&o->cli, "%s: record %llu: %s", x->fname, (unsigned long long)ev_nccl_sched_err_recno(s),
		                    msg);
	return ev_cli_file_error(&o->cli, o->cli.output, rc);
}

/* The driver's callbacks (ev_filter_run). */
struct loop {
	struct run *x;
	ev_nccl_sched *s;
	int header;
};

/* Output headers come from the first input's #ev line, read with its
 * first item. */
static int start_output(struct loop *l, ev_reader *r)
{
	if (l->header || !l->x->w)
		return EV_OK;
	l->header = 1;
	const char *origin = ev_reader_header(r, "origin");
	int rc = EV_OK;
	if (origin)
		rc = ev_writer_header(l->x->w, "origin", origin);
	if (!rc)
		rc = ev_writer_header(l->x->w, "producer", "coll-expand");
	return rc;
}

static int out_error(struct loop *l, int rc)
{
	ev_cli_file_error(&l->x->o->cli, l->x->o->cli.output, rc);
	return EV_FILTER_REPORTED;
}

static int on_begin(void *ctx, ev_reader *r, size_t i)
{
	struct loop *l = ctx;
	(void)i;
	l->x->fname = ev_reader_name(r);
	return EV_OK;
}

/* Metadata passes through (ev_write_text drops duplicates). */
static int on_text(void *ctx, ev_reader *r, const char *line, size_t len)
{
	struct loop *l = ctx;
	int rc = start_output(l, r);
	if (!rc && l->x->w)
		rc = ev_write_text(l->x->w, line, len);
	return rc ? out_error(l, rc) : EV_OK;
}

static int on_rec(void *ctx, ev_reader *r, struct ev_rec *rec)
{
	struct loop *l = ctx;
	struct run *x = l->x;
	int pass, rc = start_output(l, r);
	if (rc)
		return out_error(l, rc);
	rc = ev_nccl_sched_feed(l->s, rec, ev_reader_recno(r), &pass);
	if (rc && report(x, l->s, rc))
		return EV_FILTER_REPORTED;
	if (!pass || x->o->only_comm)
		return EV_OK;
	if (x->goal)
		return emit_goal(x, rec) ? (report(x, l->s, EV_ERR_FORMAT), EV_FILTER_REPORTED) : EV_OK;
	if (!x->w)
		return EV_OK;
	const char *line;
	size_t len;
	ev_reader_record_line(r, &line, &len);
	rc = line ? ev_write_escaped(x->w, rec, line, len) : ev_write(x->w, rec);
	return rc ? out_error(l, rc) : EV_OK;
}

/* The last operation of an input is expanded before the next input. */
static int on_end(void *ctx, ev_reader *r, size_t i)
{
	struct loop *l = ctx;
	(void)r;
	(void)i;
	int rc = ev_nccl_sched_flush(l->s);
	return rc && report(l->x, l->s, rc) ? EV_FILTER_REPORTED : EV_OK;
}

/* What was inferred, once, at the end. */
static void summary(struct run *x, ev_nccl_sched *s)
{
	struct opts *o = x->o;
	const struct ev_nccl_stats *st = ev_nccl_sched_stats(s);
	uint64_t n;
	const char *line;
	for (size_t i = 0; (line = ev_nccl_sched_decision(s, i, &n)) != NULL; i++)
		ev_cli_warn(&o->cli, "chose %s [%llu operation%s]", line, (unsigned long long)n, n == 1 ? "" : "s");
	if (st->partial)
		ev_cli_warn(&o->cli, "%llu collectives were seen on fewer ranks than their communicator has "
		            "(a partial trace?): their messages have no partner", (unsigned long long)st->partial);
	char buf[1024];
	int k;
	for (size_t i = 0; (k = ev_nccl_sched_absent(s, i, buf, sizeof buf)) >= 0; i++)
		if (k > 0)
			ev_cli_warn(&o->cli, "%s (a missing export or trace file?)", buf);
	if (st->skipped)
		ev_cli_warn(&o->cli, "%llu collectives skipped (--lenient)", (unsigned long long)st->skipped);
	if (st->lead_in_dropped)
		ev_cli_warn(&o->cli, "%llu stream(s) start at their first operation: the time before it is left out "
		            "(--lead-in keeps it)", (unsigned long long)st->lead_in_dropped);
}

/* --format=goal: the builder ev2goal would feed from the stream. */
static int start_goal(struct opts *o, struct run *x, const ev_meta *meta)
{
	if (o->go.g.binary && ev_cli_check_binary_out(&o->cli))
		return 1;
	if (o->p.ranks_per_node)
		o->go.g.ranks_per_node = o->p.ranks_per_node;
	ev_cli_goal_setup(&o->go, meta);
	if (ev_goal_new(&x->goal, &o->go.g))
		return x->goal ? ev_cli_goal_error(&o->cli, ev_goal_error(x->goal), o->cli.output)
		               : ev_cli_error(&o->cli, "out of memory");
	snprintf(x->goal_src, sizeof x->goal_src, "%s (expanded)",
	         o->ninputs == 1 ? o->inputs[0] : o->ninputs ? "input" : "standard input");
	ev_goal_source(x->goal, x->goal_src);
	ev_goal_pipe_start(x->goal, &x->pipe);
	return 0;
}

/* After the last operation: check and write the schedule, then --stats. */
static int finish_goal(struct opts *o, struct run *x)
{
	if (ev_goal_finish(x->goal))
		return ev_cli_goal_error(&o->cli, ev_goal_error(x->goal), o->cli.output);
	int status = ev_cli_goal_write(&o->cli, x->goal);
	return status ? status : ev_cli_goal_stats(&o->cli, &o->go, x->goal);
}

static int run(struct opts *o)
{
	if (o->format == FMT_FLOWS && (o->p.keep_coll || o->only_comm))
		return ev_cli_usage_error(&o->cli, "--format=flows writes messages only (no --keep-coll or --only-comm)");
	if (o->go.given && o->format != FMT_GOAL)
		return ev_cli_usage_error(&o->cli, "--binary, --nic, --cpu, --stats and the other GOAL options need --format=goal");
	if (o->format == FMT_GOAL && o->p.keep_coll)
		return ev_cli_usage_error(&o->cli, "--format=goal writes the schedule only (no --keep-coll)");
	if (o->format == FMT_FLOWS)
		o->p.intra_send = 1; /* flows carry real bytes for every message */
	struct run x = { .o = o };
	ev_strtab *st = ev_strtab_new();
	ev_meta *meta = ev_meta_new();
	ev_nccl_lat *lat = NULL;
	ev_nccl_sched *s = NULL;
	int status = 0, rc;
	if (!st || !meta) {
		status = ev_cli_error(&o->cli, "out of memory");
		goto done;
	}
	if (o->lat_path) {
		char err[512] = "";
		rc = ev_nccl_lat_load(&lat, o->lat_path, err, sizeof err);
		if (rc == EV_ERR_IO) {
			status = ev_cli_input_error(&o->cli, o->lat_path, rc);
			goto done;
		}
		if (rc) {
			status = rc == EV_ERR_NOMEM ? ev_cli_error(&o->cli, "out of memory")
			                            : ev_cli_error(&o->cli, "%s: %s", o->lat_path, err);
			goto done;
		}
	}
	struct ev_nccl_sink sink = { .emit = emit_ev, .warn = warn_cb, .ctx = &x };
	if (o->format == FMT_FLOWS) {
		if ((rc = ev_output_open(&x.out, o->cli.output)) != EV_OK) {
			status = ev_cli_file_error(&o->cli, o->cli.output, rc);
			goto done;
		}
		if (ev_nccl_flows_new(&x.flows, x.out)) {
			status = ev_cli_error(&o->cli, "out of memory");
			goto done;
		}
		sink.emit = emit_none;
		sink.message = flows_message;
		sink.op_done = flows_op_done;
	} else if (o->format == FMT_GOAL) {
		if ((status = start_goal(o, &x, meta)) != 0)
			goto done;
		sink.emit = emit_goal;
	} else {
		if (ev_cli_check_binary_out(&o->cli)) {
			status = 1;
			goto done;
		}
		if ((rc = ev_writer_open(&x.w, o->cli.output, st)) != EV_OK) {
			status = ev_cli_file_error(&o->cli, o->cli.output, rc);
			goto done;
		}
	}
	if ((rc = ev_nccl_sched_new(&s, &o->p, meta, lat, &sink)) != EV_OK) {
		status = ev_cli_error(&o->cli, "out of memory");
		goto done;
	}
	struct loop l = { .x = &x, .s = s };
	const struct ev_filter f = { .flags = EV_FILTER_ORDER, .begin = on_begin, .text = on_text, .rec = on_rec,
		                     .end = on_end };
	status = ev_filter_run(&o->cli, o->inputs, (size_t)o->ninputs, st, meta, &f, &l);
	if (!status && x.pipe) {
		rc = ev_goal_pipe_end(x.pipe);
		x.pipe = NULL;
		if (rc)
			status = ev_cli_goal_error(&o->cli, ev_goal_error(x.goal), o->cli.output);
	}
	if (!status) {
		ev_nccl_sched_finish(s);
		ev_cli_progress_done(&o->cli);
		if (x.goal) {
			/* What was inferred comes first: it explains a schedule
			 * that fails its checks (a partial trace). */
			summary(&x, s);
			status = finish_goal(o, &x);
		} else {
			if (x.w) {
				rc = ev_writer_close(x.w);
				x.w = NULL;
			} else if ((rc = ev_nccl_flows_close(x.flows)) == EV_OK) {
				rc = ev_output_close(x.out);
				x.out = NULL;
			}
			if (rc)
				status = ev_cli_file_error(&o->cli, o->cli.output, rc);
			else
				summary(&x, s); /* not when the reader went away */
		}
	}
done:
	ev_writer_abort(x.w);
	ev_output_abort(x.out);
	ev_nccl_flows_free(x.flows);
	ev_goal_pipe_free(x.pipe);
	ev_goal_free(x.goal);
	ev_nccl_sched_free(s);
	ev_nccl_lat_free(lat);
	ev_meta_free(meta);
	ev_strtab_free(st);
	return status;
}

enum {
	OPT_NCCL_VERSION = 256, OPT_NCHANNELS, OPT_NTHREADS, OPT_PRESET, OPT_RANKS_PER_NODE, OPT_INTRA, OPT_INTRA_BW,
	OPT_COMPUTE, OPT_MERGE_STREAMS, OPT_ONLY_COMM, OPT_KEEP_COLL, OPT_LENIENT, OPT_JITTER, OPT_TRACE_PARAMS,
	OPT_LEAD_IN, OPT_MAX_MESSAGES, OPT_FORMAT, OPT_SENDS
};

static const struct option longopts[] = {
	EV_CLI_COMMON_LONG,
	EV_CLI_GOAL_LONG,
	{ "lat", required_argument, NULL, 'l' },
	{ "algo", required_argument, NULL, 'a' },
	{ "proto", required_argument, NULL, 'p' },
	{ "nccl-version", required_argument, NULL, OPT_NCCL_VERSION },
	{ "nchannels", required_argument, NULL, OPT_NCHANNELS },
	{ "nthreads", required_argument, NULL, OPT_NTHREADS },
	{ "preset", required_argument, NULL, OPT_PRESET },
	{ "ranks-per-node", required_argument, NULL, OPT_RANKS_PER_NODE },
	{ "intra", required_argument, NULL, OPT_INTRA },
	{ "intra-bw", required_argument, NULL, OPT_INTRA_BW },
	{ "compute", required_argument, NULL, OPT_COMPUTE },
	{ "lead-in", no_argument, NULL, OPT_LEAD_IN },
	{ "sends", required_argument, NULL, OPT_SENDS },
	{ "merge-streams", no_argument, NULL, OPT_MERGE_STREAMS },
	{ "only-comm", no_argument, NULL, OPT_ONLY_COMM },
	{ "keep-coll", no_argument, NULL, OPT_KEEP_COLL },
	{ "lenient", no_argument, NULL, OPT_LENIENT },
	{ "max-messages", required_argument, NULL, OPT_MAX_MESSAGES },
	{ "jitter", required_argument, NULL, OPT_JITTER },
	{ "trace-params", required_argument, NULL, OPT_TRACE_PARAMS },
	{ "format", required_argument, NULL, OPT_FORMAT },
	{ NULL, 0, NULL, 0 },
};

/* The options whose value is a word: each word's index is the setting. */
static int word_opt(struct opts *o, int code, const char *arg)
{
	static const char *const intra[] = { "calc", "send", NULL };
	static const char *const compute[] = { "gaps", "kernels", "none", NULL }; /* EV_NCCL_COMP_* */
	static const char *const sends[] = { "fifo", "serial", NULL };
	static const char *const yes_no[] = { "no", "yes", NULL };
	static const char *const formats[] = { "ev", "flows", "goal", NULL }; /* enum format */
	int w;
	switch (code) {
	case OPT_INTRA:
		if ((w = ev_cli_word_find(intra, arg)) < 0)
			return ev_cli_usage_error(&o->cli, "--intra: expected calc or send, got '%s'", arg);
		o->p.intra_send = w;
		break;
	case OPT_COMPUTE:
		if ((w = ev_cli_word_find(compute, arg)) < 0)
			return ev_cli_usage_error(&o->cli, "--compute: expected gaps, kernels or none, got '%s'", arg);
		o->p.compute = w == 0 ? EV_NCCL_COMP_GAPS : w == 1 ? EV_NCCL_COMP_KERNELS : EV_NCCL_COMP_NONE;
		break;
	case OPT_SENDS:
		if ((w = ev_cli_word_find(sends, arg)) < 0)
			return ev_cli_usage_error(&o->cli, "--sends: expected fifo or serial, got '%s'", arg);
		o->p.send_delivered = w;
		break;
	case OPT_TRACE_PARAMS:
		if ((w = ev_cli_word_find(yes_no, arg)) < 0)
			return ev_cli_usage_error(&o->cli, "--trace-params: expected yes or no, got '%s'", arg);
		o->p.trace_params = w;
		break;
	case OPT_FORMAT:
		if ((w = ev_cli_word_find(formats, arg)) < 0)
			return ev_cli_usage_error(&o->cli, "--format: expected ev, flows or goal, got '%s'", arg);
		o->format = (enum format)w;
		break;
	}
	return 0;
}

static int on_opt(void *ctx, int code, const char *arg)
{
	struct opts *o = ctx;
	uint32_t u;
	uint64_t v;
	double gbps;
	int status;
	if (ev_cli_goal_opt(&o->cli, &o->go, code, arg, &status))
		return status;
	switch (code) {
	case 'l': o->lat_path = arg; break;
	case 'a':
		if (ev_nccl_parse_algos(arg, &o->p.masks))
			return ev_cli_usage_error(&o->cli, "--algo: expected a list like ring,tree or ^tree, got '%s'", arg);
		break;
	case 'p':
		if (ev_nccl_parse_protos(arg, &o->p.masks))
			return ev_cli_usage_error(&o->cli, "--proto: expected a list like ll,ll128,simple, got '%s'", arg);
		break;
	case OPT_NCCL_VERSION:
		if (ev_nccl_parse_version(arg, &o->p.regime))
			return ev_cli_usage_error(&o->cli, "--nccl-version: expected a version like 2.22.3, got '%s'", arg);
		break;
	case OPT_NCHANNELS:
		if (ev_parse_u32(arg, &u) || u == 0 || u > EV_NCCL_MAXCH)
			return ev_cli_usage_error(&o->cli, "--nchannels: expected 1..64, got '%s'", arg);
		o->p.nchannels = u;
		break;
	case OPT_NTHREADS:
		if (ev_parse_u32(arg, &u) || u == 0 || u > 1024)
			return ev_cli_usage_error(&o->cli, "--nthreads: expected 1..1024, got '%s'", arg);
		o->p.nthreads = u;
		break;
	case OPT_PRESET:
		/* "auto" picks by the trace; the library knows the systems. */
		if (strcmp(arg, "auto") == 0)
			o->p.preset = NULL;
		else if (!(o->p.preset = ev_nccl_preset_find(arg)))
			return ev_cli_usage_error(&o->cli,
			                          "--preset: unknown system '%s' (h100, a100, b200, pcie, mi300x, mi350x, mi250, auto)",
			                          arg);
		break;
	case OPT_RANKS_PER_NODE:
		if (ev_parse_u32(arg, &u) || u == 0)
			return ev_cli_usage_error(&o->cli, "--ranks-per-node: expected a positive number, got '%s'", arg);
		o->p.ranks_per_node = u;
		break;
	case OPT_INTRA_BW:
		if (ev_parse_double(arg, &gbps) || gbps <= 0)
			return ev_cli_usage_error(&o->cli, "--intra-bw: expected GB/s > 0, got '%s'", arg);
		o->p.intra_bw = gbps;
		break;
	case OPT_LEAD_IN: o->p.lead_in = 1; break;
	case OPT_MERGE_STREAMS: o->p.merge_streams = 1; break;
	case OPT_ONLY_COMM: o->only_comm = 1; break;
	case OPT_KEEP_COLL: o->p.keep_coll = 1; break;
	case OPT_LENIENT: o->p.lenient = 1; break;
	case OPT_MAX_MESSAGES:
		if (ev_parse_u64(arg, &v) || v == 0)
			return ev_cli_usage_error(&o->cli, "--max-messages: expected a positive number, got '%s'", arg);
		o->p.max_messages = v;
		break;
	case OPT_JITTER:
		if (ev_parse_u64(arg, &o->p.seed))
			return ev_cli_usage_error(&o->cli, "--jitter: expected a seed (unsigned number), got '%s'", arg);
		o->p.have_jitter = 1;
		break;
	default:
		return word_opt(o, code, arg);
	}
	return 0;
}

static const struct ev_cli_opts options = { EV_CLI_GOAL_SHORT "l:a:p:", longopts, on_opt, usage };

int main(int argc, char **argv)
{
	struct opts o;
	int first;
	memset(&o, 0, sizeof o);
	ev_cli_init(&o.cli, "coll-expand");
	ev_nccl_params_default(&o.p);
	ev_cli_goal_init(&o.go);
	int status = ev_cli_getopt(&o.cli, argc, argv, &options, &o, &first);
	if (status == EV_CLI_RUN) {
		o.inputs = argv + first;
		o.ninputs = argc - first; /* none: standard input */
		status = run(&o);
	}
	return ev_cli_finish(&o.cli, status);
}
