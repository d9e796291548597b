/* SPDX-License-Identifier: MIT */
/*
 * flex2ev - convert IBM AIU runtime ("Flex") trace JSON to ev
 *
 * A thin front end over lib/flex: each file is read one event at a time,
 * its dialect decided on evidence (ev_flex_sniff_*), and the events go
 * through the library's two-pass converter into one time-ordered stream.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ev.h"
#include "ev/flex.h"

struct opts {
	struct ev_cli cli;
	struct ev_flex_opts f;
	uint64_t max_object;
	int verbose, sniff, freq_given;
	const char *logs[64];
	int nlogs;
	struct ev_flex_complog cl;
	char **inputs;
	int ninputs;
};

static void usage(FILE *f)
{
	fputs(
"Usage: flex2ev [options] FILE...\n"
"Convert IBM AIU runtime (\"Flex\") trace JSON (.json or .json.gz, a bare array\n"
"or an object with traceEvents) to one ev stream in time order, as acelyzer\n"
"reads it: B/E pairs become slices, the rank is the event's pid, device events\n"
"(with TS1..TS5 cycle counters) get their device-time interval, every event its\n"
"acelyzer class (in the record's sig), sends and receives of a CollGroup become\n"
"p2p records (ev2perfetto draws them as send -> recv flows) and each rank's part\n"
"of a collective a coll record.\n"
"\n"
"Records: Cmpt Exec -> kernel; Cmpt Prep and other device events -> range\n"
"gpu_user; DmaI/DmaO -> memcpy htod/dtoh with bytes; CollGroup sends\n"
"(SingleCast, MultiCast XSEG) and receives (WDone Barrier) -> p2p send/recv\n"
"with peer, comm = the CollGroup's string id; CPU events -> range other;\n"
"Launch*ControlBlock -> api (correlation); instants -> mark.  A kernel with\n"
"TS1..TS5 has a tsx record right before it (the counters; flex-stats\n"
"ts_analysis, ev2perfetto's args).  Counter records, as acelyzer's counter\n"
"tracks: ConcurrentPreps (Cmpt Prep events running), Power (mW) (from the\n"
"devices' args.Power charge readings at TS4) and, with -c, PT Active.\n"
"\n"
"Options:\n"
"  -o, --output=FILE      write to FILE (via a temporary name) [stdout]\n"
"      --freq=SOC[:CORE]  SoC clock of the cycle counters in MHz (acelyzer's\n"
"                         --freq; CORE: of the compiler's ideal cycles)\n"
"                         [1000.0:1100.0]; the SoC clock\n"
"                         is also estimated from the kernels (acelyzer's way):\n"
"                         10% or more apart, a warning says which --freq to use\n"
"      --no-tighten       keep host times; by default a device event's slice is\n"
"                         its instruction's device interval ending at the host\n"
"                         end (acelyzer's tighten_hts_by_instr_type)\n"
"      --drop-prep        leave out Cmpt Prep events (acelyzer's default without\n"
"                         --keep_prep; here they are kept unless asked)\n"
"  -c, --compiler-log=LOG a compiler log with Perf Summary tables (repeatable;\n"
"                         the first definition of a kernel wins): a\n"
"                         'PT Active (0.01%)' counter, each kernel's ideal time\n"
"                         over its duration while it runs (acelyzer's rcu_util)\n"
"  -O, --overlap=MODE     slices that overlap without nesting on one thread:\n"
"                         tid (keep; ev2perfetto moves them to an extra lane),\n"
"                         drop (leave them out, counted) [tid]\n"
"      --no-colls         no per-rank collective spans (coll records)\n"
"      --strip-ids        take request ids out of communication event names\n"
"                         (SenRdmaSend_82227 [sync=..] -> SenRdmaSend [sync=..],\n"
"                         the id in the record's id), as acelyzer's\n"
"                         remove_ids_from_name: one string per kind, not per\n"
"                         request, for long traces\n"
"      --comm-summarize-seq  acelyzer's --comm_summarize_seq: per rank, the\n"
"                         slices with SenRdma in the name that share a request\n"
"                         id (the first _NNN or -NNN) become one, from the\n"
"                         earliest start to the latest end, named by the\n"
"                         names' longest common prefix, the union of their\n"
"                         args.Peer in sig (peers=0,1,2); a request closes\n"
"                         when the stream passes its end plus the window\n"
"      --comm-seq-window=US  that window in microseconds [1000]\n"
"      --comm-seq-max=N   requests open at once at most; past it the oldest\n"
"                         closes early (counted on stderr) [4096]\n"
"  -a, --align=MODE       rank clocks: p2p (each rank shifted so that a receive\n"
"                         ends when its send ends, acelyzer's premise TS5(send)\n"
"                         = TS2(recv); the offsets on stderr and as #meta\n"
"                         align.* lines), acelyzer (acelyzer's default\n"
"                         mp_sync_tight_v1: each device event on the aligned\n"
"                         device clock, host events unmoved; for acelyzer's\n"
"                         numbers), none [p2p]\n"
"      --flex-ts-fix      move a job's device events into its AIU Roundtrip when\n"
"                         they lie outside it (acelyzer's --flex_ts_fix)\n"
"      --rank=N           put every event of a single input on rank N\n"
"                         (default: the event's pid, as acelyzer does)\n"
"      --sniff            only decide each FILE's dialect from its first 1000\n"
"                         events: print FILE, flex|kineto|metadata-only|empty|\n"
"                         processed|unknown and what was seen, tab-separated\n"
"  -S, --buffer-size=SIZE memory of each of the three time-ordering passes;\n"
"                         past it sorted runs spill to $TMPDIR [16M]\n"
"      --max-object=SIZE  largest single JSON event accepted [16M]\n"
"  -f, --force            write binary output to a terminal\n"
"  -v, --verbose          counts on stderr: events by phase and class, pairs,\n"
"                         unmatched, p2p, collectives, ranks\n"
"  -q, --quiet            no warnings\n"
EV_CLI_HELP_HV
"\n"
"A file that is not Flex is refused with one line naming what was seen\n"
"(a PyTorch profiler trace: use kineto2ev; rocprofv3 JSON: use rocprof2ev;\n"
"only metadata events; acelyzer or ev2perfetto output).\n"
"\n"
EV_CLI_HELP_EXIT("not a Flex trace, invalid JSON, write error")
"\n"
"Example:\n"
"  flex2ev allreduce_tp4.json | ev2perfetto -o tp4.json\n",
	f);
}

static int parse_freq(const char *s, uint64_t *khz, uint64_t *core_khz)
{
	char buf[64];
	size_t n = strcspn(s, ":");
	if (n == 0 || n >= sizeof buf)
		return -1;
	memcpy(buf, s, n);
	buf[n] = '\0';
	int64_t v;
	if (ev_parse_decimal_scaled(buf, n, 3, &v) || v <= 0)
		return -1;
	*khz = (uint64_t)v;
	if (s[n] == ':') {
		int64_t core;
		if (ev_parse_decimal_scaled(s + n + 1, strlen(s + n + 1), 3, &core) || core <= 0)
			return -1;
		*core_khz = (uint64_t)core;
	}
	return 0;
}

static void progress(void *ctx, uint64_t events, uint64_t bytes)
{
	ev_cli_progress(ctx, events, bytes);
}

/* Read one file into the converter.  Returns an exit code. */
static int read_file(struct opts *o, ev_flex_reader *rd, ev_flex_conv *conv, uint16_t src)
{
	const char *path = o->inputs[src];
	struct ev_flex_read res;
	int rc = ev_flex_read_file(rd, conv, src, path, (size_t)o->max_object, progress, &o->cli, &res);
	if (rc == EV_OK)
		return 0;
	unsigned long long rec = (unsigned long long)res.record;
	const struct ev_flex_sniff *sn = &res.sniff;
	char what[512];
	switch (res.error) {
	case EV_FLEX_RE_OPEN:
		return ev_cli_input_error(&o->cli, path, rc);
	case EV_FLEX_RE_JSON:
		if (rec)
			return ev_cli_error(&o->cli, "%s: record %llu: invalid JSON", path, rec);
		return ev_cli_error(&o->cli, "%s: %s", path, res.detail);
	case EV_FLEX_RE_TOKENS:
		return ev_cli_error(&o->cli, "%s: record %llu: too many JSON tokens in one event", path, rec);
	case EV_FLEX_RE_EVENT:
		if (rc == EV_ERR_RANGE)
			return ev_cli_error(&o->cli, "%s: record %llu: ts or dur out of range (microseconds beyond 2^63 ns)", path, rec);
		return ev_cli_error(&o->cli, "%s: record %llu: bad event (ts, dur or a string)", path, rec);
	case EV_FLEX_RE_CONVERT:
		if (rc == EV_ERR_RANGE)
			return ev_cli_error(&o->cli, "%s: record %llu: pid %lld is not a rank (use --rank)", path, rec,
			                    (long long)res.pid);
		return ev_cli_file_error(&o->cli, path, rc);
	default:
		break;
	}
	switch (res.dialect) {
	case EV_DIALECT_PROCESSED:
		return ev_cli_error(&o->cli, "%s: this is already processed output (acelyzer or ev2perfetto otherData), not a Flex trace",
		                    path);
	case EV_DIALECT_KINETO:
		if (res.key[0])
			return ev_cli_error(&o->cli, "%s: this is a PyTorch profiler trace (top-level \"%s\"): use kineto2ev", path,
			                    res.key);
		return ev_cli_error(&o->cli, "%s: record %llu: this is a PyTorch profiler trace (cat \"%s\"): use kineto2ev",
		                    path, rec, sn->cat_seen);
	case EV_DIALECT_ROCPROF:
		return ev_cli_error(&o->cli, "%s: this is rocprofv3 JSON (top-level \"rocprofiler-sdk-tool\"): use rocprof2ev", path);
	case EV_DIALECT_META_ONLY:
		return ev_cli_error(&o->cli, "%s: only metadata events (%llu \"M\" events, no trace events): nothing to convert",
		                    path, (unsigned long long)sn->meta);
	case EV_DIALECT_EMPTY:
		return ev_cli_error(&o->cli, "%s: no events: nothing to convert", path);
	default:
		ev_flex_sniff_describe(sn, what, sizeof what);
		return ev_cli_error(&o->cli, "%s: not a Flex trace (no TS1..TS5 device counters, Flex instruction names or CollGroup): %s",
		                    path, what);
	}
}

/* acelyzer's clock check of one input: its estimates from the kernels
 * (ev_flex_conv_freq) against --freq, with acelyzer's tolerance (10% off,
 * or estimates 10% apart).  Estimates that disagree recommend nothing;
 * otherwise the interval estimate is the recommendation, the steadier one
 * (host starts far apart, where a duration may be a few ns). */
static void check_freq(const struct opts *o, const ev_flex_conv *conv, uint16_t src)
{
	struct ev_flex_freq f;
	if (!ev_flex_conv_freq(conv, src, &f) || !(f.gap_mean > 0) || !(f.dur_mean > 0))
		return;
	const char *path = o->inputs[src];
	double soc = (double)o->f.soc_khz / 1000.0;
	double ratio = round(soc / f.gap_mean * 1000) / 1000, dratio = round(soc / f.dur_mean * 1000) / 1000;
	double spread = round((f.gap_max - f.gap_min) / f.gap_mean * 1000) / 1000;
	double dspread = round((f.dur_max - f.dur_min) / f.dur_mean * 1000) / 1000;
	char est[256], zero[96] = "";
	if (f.zero_gap)
		snprintf(zero, sizeof zero, "; %llu kernel(s) start with the one before: their duration's estimate",
		         (unsigned long long)f.zero_gap);
	snprintf(est, sizeof est, "min/mean/max over %llu kernel(s) of %llu rank(s): by interval %.2f/%.2f/%.2f, by duration %.2f/%.2f/%.2f%s",
	         (unsigned long long)f.kernels, (unsigned long long)f.ranks, f.gap_min, f.gap_mean, f.gap_max, f.dur_min,
	         f.dur_mean, f.dur_max, zero);
	if (spread > 0.1 || dspread > 0.1)
		ev_cli_warn(&o->cli, "%s: the clock estimates spread over more than 10%% (rel_range %.3f by interval, %.3f by "
		            "duration; %s): no --freq to recommend; check the trace's time stamps", path, spread, dspread, est);
	else if (fabs(1.0 - ratio) > 0.1 || fabs(1.0 - dratio) > 0.1)
		ev_cli_warn(&o->cli, "%s: the cycle counters tick at %.2f MHz, not at the %s %g MHz "
		            "(input_soc_freq/detected=%.3f; %s): use --freq=%.2f",
		            path, f.gap_mean, o->freq_given ? "--freq of" : "default --freq of", soc, ratio, est, f.gap_mean);
	else if (o->verbose)
		fprintf(stderr, "flex2ev: %s: clock %.2f MHz (%s)\n", path, f.gap_mean, est);
}

static void report(const struct opts *o, const ev_flex_conv *conv)
{
	const struct ev_flex_counts *n = ev_flex_conv_counts(conv);
	if (n->unmatched_b || n->unmatched_e)
		ev_cli_warn(&o->cli, "%llu B event(s) without their E and %llu E event(s) without their B: left out",
		            (unsigned long long)n->unmatched_b, (unsigned long long)n->unmatched_e);
	if (n->reversed)
		ev_cli_warn(&o->cli, "%llu event(s) ending before they begin: left out", (unsigned long long)n->reversed);
	if (n->no_ts)
		ev_cli_warn(&o->cli, "%llu event(s) without ts: left out", (unsigned long long)n->no_ts);
	if (n->zero_dur)
		ev_cli_warn(&o->cli, "%llu slice(s) of zero duration", (unsigned long long)n->zero_dur);
	if (n->ovc)
		ev_cli_warn(&o->cli, "%llu device event(s) with a 32-bit cycle counter overflow (corrected)",
		            (unsigned long long)n->ovc);
	if (n->dropped_overlap)
		ev_cli_warn(&o->cli, "--overlap=drop: %llu slice(s) overlapping without nesting left out",
		            (unsigned long long)n->dropped_overlap);
	if (n->tsx_bad)
		ev_cli_warn(&o->cli, "%llu kernel(s) whose TS1..TS5 go backwards or lie 2^32 cycles apart: no tsx record "
		            "(not in flex-stats ts_analysis)", (unsigned long long)n->tsx_bad);
	if (n->power_bad)
		ev_cli_warn(&o->cli, "%llu Power sample(s) above 100 W (or from readings going backwards): written as 0 "
		            "(acelyzer's rule)", (unsigned long long)n->power_bad);
	if (n->pt_missing)
		ev_cli_warn(&o->cli, "%llu kernel(s) not in the compiler tables (-c): no PT Active sample", (unsigned long long)n->pt_missing);
	if (n->pt_over)
		ev_cli_warn(&o->cli, "%llu kernel(s) ran shorter than their ideal time: PT Active 101%% (acelyzer's rule; check --freq)",
		            (unsigned long long)n->pt_over);
	if (n->comm_early)
		ev_cli_warn(&o->cli, "--comm-summarize-seq: %llu request(s) closed early: more than %zu open at once "
		            "(--comm-seq-max); a later slice of one becomes a slice of its own",
		            (unsigned long long)n->comm_early, o->f.comm_seq_max);
	if (n->comm_peers_lost)
		ev_cli_warn(&o->cli, "--comm-summarize-seq: %llu peer(s) past 64 in one request: left out of its peers list",
		            (unsigned long long)n->comm_peers_lost);
	if (n->dropped_prep)
		ev_cli_warn(&o->cli, "--drop-prep: %llu Cmpt Prep event(s) left out", (unsigned long long)n->dropped_prep);
	if (n->open_colls)
		ev_cli_warn(&o->cli, "%llu collective span(s) without their final broadcast (ended at their last event)",
		            (unsigned long long)n->open_colls);
	if (n->ts_fix_jobs)
		ev_cli_warn(&o->cli, "--flex-ts-fix: %llu job(s) had device events outside their AIU Roundtrip: moved",
		            (unsigned long long)n->ts_fix_jobs);
	if (n->ts_fix_wide)
		ev_cli_warn(&o->cli, "--flex-ts-fix: %llu job(s) have a device range wider than their AIU Roundtrip: left as they are",
		            (unsigned long long)n->ts_fix_wide);
	size_t nr = ev_flex_conv_nranks(conv);
	for (size_t i = 0; o->f.align == EV_FLEX_ALIGN_P2P && nr > 1 && i < nr; i++) {
		const struct ev_flex_align *a = ev_flex_conv_align(conv, i);
		if (!a->aligned)
			ev_cli_warn(&o->cli, "rank %u shares no send/recv pair with the ranks aligned to rank %u: clock not aligned",
			            a->rank, ev_flex_conv_rank(conv, 0));
		else if (!o->cli.quiet && i > 0)
			fprintf(stderr, "flex2ev: rank %u clock offset %+.3f us (to rank %u, %llu pair(s), %s)\n", a->rank,
			        (double)a->offset_ns / 1e3, a->via, (unsigned long long)a->pairs,
			        a->symmetric ? "both directions" : "receive ends with its send");
	}
	if (!o->verbose)
		return;
	fprintf(stderr, "flex2ev: %llu objects: %llu B, %llu E, %llu X, %llu metadata, %llu instants, %llu counters, %llu other\n",
	        (unsigned long long)n->objects, (unsigned long long)n->begins, (unsigned long long)n->ends,
	        (unsigned long long)n->completes, (unsigned long long)n->meta, (unsigned long long)n->instants,
	        (unsigned long long)n->counters, (unsigned long long)n->other_ph);
	fprintf(stderr, "flex2ev: %llu B/E pairs, %llu unmatched B, %llu unmatched E, %llu reversed; %llu device, %llu CPU\n",
	        (unsigned long long)n->pairs, (unsigned long long)n->unmatched_b, (unsigned long long)n->unmatched_e,
	        (unsigned long long)n->reversed, (unsigned long long)n->device, (unsigned long long)n->cpu);
	for (unsigned c = 0; c < EV_FC_COUNT; c++)
		if (n->cls[c])
			fprintf(stderr, "flex2ev: class %s %llu\n", ev_flex_class_name(c), (unsigned long long)n->cls[c]);
	if (o->f.comm_seq)
		fprintf(stderr, "flex2ev: --comm-summarize-seq: %llu slice(s) of %llu SenRdma slices\n",
		        (unsigned long long)n->comm_merged, (unsigned long long)n->comm_absorbed);
	if (n->stripped)
		fprintf(stderr, "flex2ev: --strip-ids: %llu request id(s) taken out of names\n", (unsigned long long)n->stripped);
	fprintf(stderr, "flex2ev: %llu records, %llu p2p sends, %llu p2p receives, %llu collective spans, %zu rank(s)\n",
	        (unsigned long long)n->records, (unsigned long long)n->p2p_send, (unsigned long long)n->p2p_recv,
	        (unsigned long long)n->colls, ev_flex_conv_nranks(conv));
	fprintf(stderr, "flex2ev: %llu tsx records (TS1..TS5 of a kernel), %llu ConcurrentPreps, %llu Power (mW) and %llu PT Active samples\n",
	        (unsigned long long)n->tsx, (unsigned long long)n->prep_samples, (unsigned long long)n->power_samples,
	        (unsigned long long)n->pt_samples);
}

/* --align=acelyzer: the shifts, or why the device events keep their host
 * times. */
static void report_ace(const struct opts *o, const ev_flex_conv *conv, const ev_strtab *st)
{
	struct ev_flex_ace a;
	size_t nr = ev_flex_conv_nranks(conv), gl = 0;
	if (o->f.align != EV_FLEX_ALIGN_ACELYZER || nr < 2)
		return;
	ev_flex_conv_ace(conv, &a);
	if (!a.done) {
		const char *g = a.why_group ? ev_strtab_get(st, a.why_group, &gl) : NULL;
		ev_cli_warn(&o->cli, "--align=acelyzer: rank %u: %s%s%.*s: device events keep their host times "
		            "(acelyzer leaves them, or stops)", a.why_rank, a.why, g ? " " : "", (int)gl, g ? g : "");
		return;
	}
	if (o->cli.quiet)
		return;
	const char *g = ev_strtab_get(st, a.ref_group, &gl);
	fprintf(stderr, "flex2ev: acelyzer's alignment (mp_sync_tight_v1, %s order): %llu device record(s) on the "
	        "aligned device clock, which meets host time at rank %u's last %s of CollGroup %.*s (offset %.3f us)\n",
	        a.tree ? "tree" : "chain", (unsigned long long)a.moved, a.ref_rank, a.tree ? "TS5" : "TS2", (int)gl,
	        g ? g : "", (double)a.ref_offset_ns / 1e3);
	for (size_t i = 0; i < nr; i++) {
		const struct ev_flex_align *al = ev_flex_conv_align(conv, i);
		if (al->aligned)
			fprintf(stderr, "flex2ev: rank %u device clock shift %+.3f us\n", al->rank, (double)al->shift_ns / 1e3);
	}
}

static int run(struct opts *o)
{
	ev_strtab *st = ev_strtab_new();
	ev_flex_conv *conv = NULL;
	ev_flex_reader *rd = NULL;
	ev_writer *w = NULL;
	int ex = 0, rc;
	for (int i = 0; i < o->nlogs && !ex; i++)
		if ((rc = ev_flex_complog_read(&o->cl, o->logs[i])) == EV_ERR_FORMAT)
			ex = ev_cli_error(&o->cli, "%s: no compiler \"Perf Summary / Ideal/Total Cycles\" table found", o->logs[i]);
		else if (rc != EV_OK)
			ex = ev_cli_input_error(&o->cli, o->logs[i], rc);
	if (ex)
		goto out;
	o->f.cl = o->nlogs ? &o->cl : NULL;
	if (!st || ev_flex_reader_new(&rd) != EV_OK || (rc = ev_flex_conv_new(&conv, &o->f, st)) != EV_OK) {
		ex = ev_cli_error(&o->cli, "out of memory");
		goto out;
	}
	for (int i = 0; i < o->ninputs && !ex; i++)
		ex = read_file(o, rd, conv, (uint16_t)i);
	ev_cli_progress_done(&o->cli);
	for (int i = 0; i < o->ninputs && !ex; i++)
		check_freq(o, conv, (uint16_t)i);
	if (ex)
		goto out;
	if ((rc = ev_writer_open(&w, o->cli.output, st)) != EV_OK) {
		ex = ev_cli_file_error(&o->cli, o->cli.output, rc);
		goto out;
	}
	if ((rc = ev_writer_header(w, "origin", "trace")) != EV_OK || (rc = ev_writer_header(w, "producer", "flex2ev")) != EV_OK)
		goto werr;
	for (int i = 0; i < o->ninputs; i++)
		if ((rc = ev_write_textf(w, "#src %d file=%s dialect=flex", i, o->inputs[i])) != EV_OK)
			goto werr;
	if ((rc = ev_write_textf(w, "#meta flex.freq_khz=%llu flex.tighten=%d flex.overlap=%s",
	                         (unsigned long long)o->f.soc_khz, o->f.tighten,
	                         o->f.overlap == EV_FLEX_OV_DROP ? "drop" : "tid")) != EV_OK)
		goto werr;
	if ((rc = ev_flex_conv_finish(conv, w)) != EV_OK)
		goto werr;
	report(o, conv);
	report_ace(o, conv, st);
	if (!ev_flex_conv_counts(conv)->records) {
		/* Everything was left out (unmatched, reversed, without ts): no
		 * empty stream that looks like a result. */
		ex = ev_cli_error(&o->cli, "no slices or marks in the input: nothing converted (see the counts above)");
		goto out;
	}
	rc = ev_writer_close(w);
	w = NULL;
	if (rc != EV_OK)
		ex = ev_cli_file_error(&o->cli, o->cli.output, rc);
	goto out;
werr:
	ex = ev_cli_file_error(&o->cli, o->cli.output, rc);
out:
	if (w)
		ev_writer_abort(w);
	ev_flex_conv_free(conv);
	ev_flex_reader_free(rd);
	ev_strtab_free(st);
	ev_flex_complog_free(&o->cl);
	return ex;
}

/* --sniff: the dialect of each input, one line each. */
static int sniff(struct opts *o)
{
	int ex = 0;
	for (int i = 0; i < o->ninputs; i++) {
		enum ev_dialect d;
		char what[512];
		int rc = ev_flex_sniff_file(o->inputs[i], 1000, 0, &d, what, sizeof what);
		if (rc != EV_OK) {
			ex = ev_cli_error(&o->cli, "%s: %s", o->inputs[i], ev_strerror(rc));
			continue;
		}
		printf("%s\t%s\t%s\n", o->inputs[i], ev_dialect_name(d), what);
	}
	return ex;
}

enum {
	OPT_FREQ = 256, OPT_NO_TIGHTEN, OPT_DROP_PREP, OPT_NO_COLLS, OPT_RANK, OPT_MAX_OBJECT, OPT_FLEX_TS_FIX,
	OPT_SNIFF, OPT_STRIP_IDS, OPT_COMM_SEQ, OPT_COMM_SEQ_WINDOW, OPT_COMM_SEQ_MAX
};

static const struct option longopts[] = {
	EV_CLI_COMMON_LONG,
	{ "freq", required_argument, NULL, OPT_FREQ },
	{ "no-tighten", no_argument, NULL, OPT_NO_TIGHTEN },
	{ "drop-prep", no_argument, NULL, OPT_DROP_PREP },
	{ "overlap", required_argument, NULL, 'O' },
	{ "no-colls", no_argument, NULL, OPT_NO_COLLS },
	{ "align", required_argument, NULL, 'a' },
	{ "flex-ts-fix", no_argument, NULL, OPT_FLEX_TS_FIX },
	{ "sniff", no_argument, NULL, OPT_SNIFF },
	{ "strip-ids", no_argument, NULL, OPT_STRIP_IDS },
	{ "comm-summarize-seq", no_argument, NULL, OPT_COMM_SEQ },
	{ "comm-seq-window", required_argument, NULL, OPT_COMM_SEQ_WINDOW },
	{ "comm-seq-max", required_argument, NULL, OPT_COMM_SEQ_MAX },
	{ "compiler-log", required_argument, NULL, 'c' },
	{ "rank", required_argument, NULL, OPT_RANK },
	{ "buffer-size", required_argument, NULL, 'S' },
	{ "max-object", required_argument, NULL, OPT_MAX_OBJECT },
	{ "verbose", no_argument, NULL, 'v' },
	{ NULL, 0, NULL, 0 },
};

/* --overlap: acelyzer's async modes are named, and refused, apart from
 * words that are no mode at all. */
static int parse_overlap(struct opts *o, const char *arg)
{
	static const char *const modes[] = { "tid", "drop", NULL };
	static const char *const refused[] = { "async", "warn", "shift", NULL };
	int w = ev_cli_word_find(modes, arg);
	if (w >= 0) {
		o->f.overlap = w ? EV_FLEX_OV_DROP : EV_FLEX_OV_TID;
		return 0;
	}
	if (ev_cli_word_find(refused, arg) >= 0)
		return ev_cli_usage_error(&o->cli, "--overlap=%s: not supported (acelyzer's async is deprecated and incomplete); use tid or drop", arg);
	return ev_cli_usage_error(&o->cli, "--overlap: expected tid or drop, got '%s'", arg);
}

static int on_opt(void *ctx, int code, const char *arg)
{
	static const char *const aligns[] = { "none", "p2p", "acelyzer", NULL };
	struct opts *o = ctx;
	uint64_t v;
	double d;
	int w;
	switch (code) {
	case OPT_FREQ:
		if (parse_freq(arg, &o->f.soc_khz, &o->f.core_khz))
			return ev_cli_usage_error(&o->cli, "--freq: expected SOC[:CORE] in MHz (e.g. 1000.0:1100.0), got '%s'", arg);
		o->freq_given = 1;
		break;
	case OPT_NO_TIGHTEN: o->f.tighten = 0; break;
	case OPT_DROP_PREP: o->f.drop_prep = 1; break;
	case OPT_NO_COLLS: o->f.colls = 0; break;
	case OPT_FLEX_TS_FIX: o->f.ts_fix = 1; break;
	case OPT_SNIFF: o->sniff = 1; break;
	case OPT_STRIP_IDS: o->f.strip_ids = 1; break;
	case OPT_COMM_SEQ: o->f.comm_seq = 1; break;
	case OPT_COMM_SEQ_WINDOW:
		if (ev_parse_double(arg, &d) || d < 0 || d > 9e12)
			return ev_cli_usage_error(&o->cli, "--comm-seq-window: expected microseconds >= 0, got '%s'", arg);
		o->f.comm_seq_window = (int64_t)(d * 1000.0 + 0.5);
		break;
	case OPT_COMM_SEQ_MAX:
		if (ev_parse_u64(arg, &v) || v < 1 || v > (1u << 24))
			return ev_cli_usage_error(&o->cli, "--comm-seq-max: expected 1 to 16777216, got '%s'", arg);
		o->f.comm_seq_max = (size_t)v;
		break;
	case 'c':
		if (o->nlogs == 64)
			return ev_cli_usage_error(&o->cli, "at most 64 compiler logs");
		o->logs[o->nlogs++] = arg;
		break;
	case 'a':
		if ((w = ev_cli_word_find(aligns, arg)) < 0)
			return ev_cli_usage_error(&o->cli, "--align: expected p2p, acelyzer or none, got '%s'", arg);
		o->f.align = w;
		break;
	case 'O': return parse_overlap(o, arg);
	case OPT_RANK:
		if (ev_parse_u64(arg, &v) || v >= UINT32_MAX)
			return ev_cli_usage_error(&o->cli, "--rank: not a rank: '%s'", arg);
		o->f.rank = (int64_t)v;
		break;
	case 'S':
		return ev_cli_buffer_size(&o->cli, arg, &o->f.sort_bytes);
	case OPT_MAX_OBJECT:
		return ev_cli_max_object(&o->cli, arg, &o->max_object);
	case 'v': o->verbose = 1; break;
	}
	return 0;
}

static const struct ev_cli_opts options = { "a:c:O:S:v", longopts, on_opt, usage };

/* The inputs, then the stream (or --sniff's lines).  Returns the exit
 * status. */
static int convert(struct opts *o, char **inputs, int ninputs)
{
	int rc = ev_cli_converter_inputs(&o->cli, ninputs, o->f.rank);
	if (rc)
		return rc;
	if (o->f.align == EV_FLEX_ALIGN_ACELYZER && !o->f.tighten)
		return ev_cli_usage_error(&o->cli, "--align=acelyzer places device events by their instruction's interval, "
		                          "which --no-tighten turns off");
	o->inputs = inputs;
	o->ninputs = ninputs;
	if (o->sniff)
		return sniff(o);
	if (ev_cli_note_inputs(&o->cli, inputs, (size_t)ninputs) || ev_cli_check_binary_out(&o->cli))
		return 1;
	return run(o);
}

int main(int argc, char **argv)
{
	struct opts o;
	int first;
	memset(&o, 0, sizeof o);
	ev_cli_init(&o.cli, "flex2ev");
	ev_flex_opts_init(&o.f);
	o.max_object = 16u << 20;
	int status = ev_cli_getopt(&o.cli, argc, argv, &options, &o, &first);
	if (status == EV_CLI_RUN)
		status = convert(&o, argv + first, argc - first);
	return ev_cli_finish(&o.cli, status);
}
