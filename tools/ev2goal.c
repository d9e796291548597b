/* SPDX-License-Identifier: MIT */
/*
 * ev2goal - write GOAL schedules (LogGOPSim text or binary) from an ev stream
 *
 * The front end of lib/goal (include/ev/goal.h): options, the input loop,
 * messages and --stats.  The schedule itself (spooling per rank, the id
 * window, the checks, both encodings, joining parts) is the library's.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ev.h"
#include "ev/goal.h"

struct opts {
	struct ev_cli cli;
	struct ev_goal_opts g;
	struct ev_goal_ranks sel; /* --ranks */
	int stats;
	const char *stats_file;
	const char *per_rank_dir;
	int concat, delete_parts;
	const char *join_dir;
	const char *tmpdir;
	char **inputs;
	int ninputs;
};

static void usage(FILE *f)
{
	fputs(
"Usage: ev2goal [options] [FILE...]\n"
"       ev2goal --join=DIR [-o FILE] [--binary] [--delete-parts]\n"
"Write a GOAL schedule for LogGOPSim from an ev stream of SEND, RECV and CALC\n"
"records with DEP edges (coll-expand output): `num_ranks N`, then one\n"
"`rank r { ... }` block per rank in order, every label defined before a\n"
"requires line names it.  FILE defaults to standard input; several FILEs are\n"
"read as one stream; gzip input is detected.  Other record types are ignored.\n"
"\n"
"Output:\n"
"  -o, --output=FILE      write to FILE (via a temporary name) [stdout]\n"
"  -b, --binary           write LogGOPSim's binary schedule (txt2bin's layout,\n"
"                         for LogGOPSim -f) instead of text\n"
"  -p, --per-rank=DIR     write the rank parts DIR/rank_<r>.goal (.bin with\n"
"                         --binary) instead of one schedule\n"
"  -c, --concat           with --per-rank: also join the parts into -o\n"
"  -r, --delete-parts     after joining, delete the parts (implies --concat)\n"
"      --join=DIR         only join the parts rank_0 .. rank_<N-1> in DIR into\n"
"                         -o with the num_ranks header (or binary header);\n"
"                         each part is checked first (grammar, labels,\n"
"                         peers below N, a complete block or section)\n"
"      --ranks=LIST       emit only these ranks (e.g. 0-7,12, or K%N: the ranks\n"
"                         r with r mod N = K), for parallel workers writing\n"
"                         parts into one --per-rank DIR\n"
"      --num-ranks=N      num_ranks of the schedule [max rank or peer + 1]\n"
"\n"
"Lanes and NICs:\n"
"      --cpu=MODE         dense: lanes (record stream = channel + stream\n"
"                         offset) numbered 0, 1, ... in order of first\n"
"                         appearance, the same on every rank; lane: the\n"
"                         record's stream as is [dense]\n"
"      --nic=POLICY       0: every op on NIC 0 (ATLAHS); channel[:N]: NIC =\n"
"                         channel (mod N); rail[:N]: NIC = the rank's GPU\n"
"                         index inside its node (mod N) [0]\n"
"      --ranks-per-node=N node of a rank for --nic=rail [#rank node=/host=]\n"
"\n"
"Checks and reports:\n"
"      --no-check         skip the send/recv matching check\n"
"      --keep-sync        keep every zero-length CALC (by default one with at\n"
"                         most one dependency is folded into its dependents)\n"
"  -s, --stats[=FILE]     print counts (ops by type, lines against an\n"
"                         ATLAHS-style emitter, bytes per rank, message-size\n"
"                         histogram) to FILE [standard error]\n"
"  -w, --window=N         ops per rank kept for dependencies to refer to; the\n"
"                         window grows to twice the longest dependency seen\n"
"                         [4096]\n"
"  -T, --tmpdir=DIR       where rank parts are spooled [$TMPDIR or /tmp]\n"
"  -f, --force            write binary output to a terminal\n"
"  -q, --quiet            no warnings\n"
EV_CLI_HELP_HV
"\n"
"Always checked (exit 1, naming the record): op ids increasing per rank, a\n"
"DEP right after its op, no dependency on an undefined or later op, cpu and\n"
"nic below 256.  Unless --no-check: every send has a recv with the same\n"
"(source, destination, tag, size), in the same FIFO order.\n"
"\n"
EV_CLI_HELP_EXIT("bad or truncated input, unmatched message, dangling\n"
"     dependency, field out of range, write error")
"\n"
"Example:\n"
"  nsys2ev run/*.sqlite | coll-expand --lat lat.tsv --only-comm | ev2goal -s -o job.goal\n"
"  ev2goal --binary -o job.bin sched.ev && LogGOPSim -f job.bin\n",
	f);
}


/* Report a library failure; returns the exit status. */
static int goal_error(const struct opts *o, const struct ev_goal_error *e, const char *output)
{
	if (e->in_output)
		return ev_cli_file_error(&o->cli, output, e->status);
	return ev_cli_error(&o->cli, "%s", e->msg[0] ? e->msg : ev_strerror(e->status));
}

/* Join the parts in dir into -o; with remove_parts, delete them after. */
static int join(const struct opts *o, const char *dir, int remove_parts, uint32_t expect)
{
	ev_output *out;
	struct ev_goal_error err = { 0 };
	uint32_t n = 0;
	int rc = ev_output_open(&out, o->cli.output);
	if (rc)
		return ev_cli_file_error(&o->cli, o->cli.output, rc);
	if ((rc = ev_goal_join(dir, o->g.binary, expect, out, &n, &err))) {
		ev_output_abort(out);
		return goal_error(o, &err, o->cli.output);
	}
	if ((rc = ev_output_close(out)))
		return ev_cli_file_error(&o->cli, o->cli.output, rc);
	char path[4096];
	for (uint32_t r = 0; remove_parts && r < n; r++)
		if (!ev_goal_part_name(path, sizeof path, dir, r, o->g.binary))
			unlink(path);
	return 0;
}

/* The --stats summary: totals as "name<TAB>value" lines, then the tables
 * of sends per rank and of message sizes. */
static int write_stats(ev_output *out, const ev_goal *g)
{
	static const char *const rank_cols[] = { "rank", "sends", "recvs", "calcs", "bytes_sent" };
	static const char *const size_cols[] = { "min_bytes", "max_bytes", "count" };
	struct ev_goal_stats s;
	ev_table *t = NULL;
	ev_goal_get_stats(g, &s);
	uint64_t a = s.lines_atlahs_style, l = s.lines < a ? s.lines : a;
#define U(x) (unsigned long long)(x)
	int rc = ev_output_printf(out, "# ev2goal summary\nranks\t%u\n"
	                          "ops\t%llu\nsend\t%llu\nrecv\t%llu\ncalc\t%llu\n"
	                          "requires\t%llu\nirequires\t%llu\nbytes_sent\t%llu\n"
	                          "lanes\t%u\nmax_cpu\t%u\nmax_nic\t%u\n"
	                          "folded_zero_calcs\t%llu\nduplicate_deps\t%llu\nopen_messages_max\t%llu\n"
	                          "ignored_records\t%llu\nlines\t%llu\nlines_atlahs_style\t%llu\n"
	                          "lines_saved_pct\t%.1f\n\n# bytes sent per rank\n",
	                          s.ranks, U(s.ops), U(s.send), U(s.recv), U(s.calc), U(s.requires), U(s.irequires),
	                          U(s.bytes_sent), s.lanes, s.max_cpu, s.max_nic, U(s.folded_zero_calcs),
	                          U(s.duplicate_deps), U(s.open_messages_max), U(s.ignored_records), U(s.lines),
	                          U(s.lines_atlahs_style), a ? 100.0 * (double)(a - l) / (double)a : 0.0);
#undef U
	rc = rc ? rc : ev_table_open(&t, out, EV_TABLE_TSV, rank_cols, 5);
	for (uint32_t r = 0; r < s.ranks && !rc; r++) {
		struct ev_goal_rank_stats rs;
		ev_goal_get_rank_stats(g, r, &rs);
		rc = ev_table_u64(t, r);
		rc = rc ? rc : ev_table_u64(t, rs.sends);
		rc = rc ? rc : ev_table_u64(t, rs.recvs);
		rc = rc ? rc : ev_table_u64(t, rs.calcs);
		rc = rc ? rc : ev_table_u64(t, rs.bytes_sent);
	}
	int crc = ev_table_close(t);
	t = NULL;
	rc = rc ? rc : crc;
	rc = rc ? rc : ev_output_printf(out, "\n# message sizes (sends)\n");
	rc = rc ? rc : ev_table_open(&t, out, EV_TABLE_TSV, size_cols, 3);
	for (unsigned b = 0; b < 66 && !rc; b++) {
		if (!s.hist[b])
			continue;
		uint64_t lo = b ? 1ull << (b - 1) : 0, hi = b == 0 ? 0 : b >= 64 ? UINT64_MAX : (1ull << b) - 1;
		rc = ev_table_u64(t, lo);
		rc = rc ? rc : ev_table_u64(t, hi);
		rc = rc ? rc : ev_table_u64(t, s.hist[b]);
	}
	crc = ev_table_close(t);
	return rc ? rc : crc;
}

/* --stats to standard error, or to FILE opened and written in place as
 * fopen would (a terminal, a log or a FIFO named by the user stays one). */
static int print_stats(const struct opts *o, const ev_goal *g)
{
	int to_file = o->stats_file && strcmp(o->stats_file, "-") != 0;
	int fd = to_file ? open(o->stats_file, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0666) : STDERR_FILENO;
	if (fd < 0)
		return ev_cli_error(&o->cli, "%s: %s", o->stats_file, strerror(errno));
	ev_output *out;
	int rc = ev_output_fdopen(&out, fd, to_file ? o->stats_file : "standard error");
	if (rc == EV_OK) {
		rc = write_stats(out, g);
		int crc = ev_output_close(out);
		rc = rc ? rc : crc;
	}
	int e = errno;
	if (to_file && close(fd) != 0 && rc == EV_OK) {
		e = errno;
		rc = EV_ERR_IO;
	}
	if (rc == EV_ERR_NOMEM)
		return ev_cli_error(&o->cli, "out of memory");
	if (!to_file || rc == EV_OK)
		return 0; /* standard error: there is nowhere to say that it failed */
	return ev_cli_error(&o->cli, "%s: %s", o->stats_file, strerror(e));
}

static void progress(void *ctx, uint64_t records)
{
	ev_cli_progress(ctx, records, 0);
}

static int read_input(struct opts *o, ev_goal *g, const char *path, ev_strtab *st, ev_meta *meta)
{
	uint64_t recno = 0; /* messages name the record in its own file */
	ev_reader *r;
	int rc = ev_reader_open(&r, path, st, meta), rrc = 0;
	if (rc)
		return ev_cli_input_error(&o->cli, path, rc);
	ev_reader_skip_text(r, 1);
	ev_goal_source(g, ev_reader_name(r));
	int status = 0;
	if (ev_goal_feed(g, r, &recno, &rrc, progress, &o->cli))
		status = rrc ? ev_cli_reader_error(&o->cli, r, rrc) : goal_error(o, ev_goal_error(g), o->cli.output);
	ev_reader_close(r);
	return status;
}

/* Write the whole schedule to -o. */
static int write_schedule(const struct opts *o, ev_goal *g)
{
	ev_output *out;
	int rc = ev_output_open(&out, o->cli.output);
	if (rc)
		return ev_cli_file_error(&o->cli, o->cli.output, rc);
	if (ev_goal_write(g, out)) {
		ev_output_abort(out);
		return goal_error(o, ev_goal_error(g), o->cli.output);
	}
	if ((rc = ev_output_close(out)))
		return ev_cli_file_error(&o->cli, o->cli.output, rc);
	return 0;
}

static int run(struct opts *o)
{
	if (o->join_dir)
		return join(o, o->join_dir, o->delete_parts, 0);
	if (ev_cli_note_inputs(&o->cli, o->inputs, (size_t)o->ninputs) ||
	    (o->g.binary && !o->per_rank_dir && ev_cli_check_binary_out(&o->cli)))
		return 1;
	const char *base = o->tmpdir ? o->tmpdir : getenv("TMPDIR");
	if (o->per_rank_dir && mkdir(o->per_rank_dir, 0777) && errno != EEXIST)
		return ev_cli_error(&o->cli, "%s: %s", o->per_rank_dir, strerror(errno));
	ev_strtab *st = ev_strtab_new();
	ev_meta *meta = ev_meta_new();
	ev_goal *g = NULL;
	int status = 0;
	o->g.spool_parent = base && *base ? base : "/tmp";
	o->g.ranks = &o->sel;
	o->g.meta = meta;
	o->g.estimate = o->stats;
	if (!st || !meta) {
		status = ev_cli_error(&o->cli, "out of memory");
		goto out;
	}
	if (ev_goal_new(&g, &o->g)) {
		status = g ? goal_error(o, ev_goal_error(g), o->cli.output) : ev_cli_error(&o->cli, "out of memory");
		goto out;
	}
	for (int i = 0; i < o->ninputs && !status; i++)
		status = read_input(o, g, o->inputs[i], st, meta);
	ev_cli_progress_done(&o->cli);
	if (status)
		goto out;
	ev_goal_source(g, o->ninputs == 1 ? o->inputs[0] : "input");
	if (ev_goal_finish(g)) {
		status = goal_error(o, ev_goal_error(g), o->cli.output);
		goto out;
	}
	if (o->per_rank_dir) {
		if (ev_goal_write_parts(g, o->per_rank_dir))
			status = goal_error(o, ev_goal_error(g), o->cli.output);
		else if (o->concat)
			status = join(o, o->per_rank_dir, o->delete_parts, ev_goal_nranks(g));
	} else {
		status = write_schedule(o, g);
	}
	if (!status && o->stats)
		status = print_stats(o, g);
out:
	ev_goal_free(g);
	ev_meta_free(meta);
	ev_strtab_free(st);
	return status;
}

/* "0", "channel", "channel:4", "rail", "rail:8" */
static int parse_nic(struct ev_goal_opts *g, const char *s)
{
	const char *colon = strchr(s, ':');
	size_t len = colon ? (size_t)(colon - s) : strlen(s);
	if (len == 1 && s[0] == '0' && !colon)
		g->nic = EV_GOAL_NIC_ZERO;
	else if (len == 7 && !strncmp(s, "channel", 7))
		g->nic = EV_GOAL_NIC_CHANNEL;
	else if (len == 4 && !strncmp(s, "rail", 4))
		g->nic = EV_GOAL_NIC_RAIL;
	else
		return -1;
	g->nic_mod = 0;
	if (colon && (ev_parse_u32(colon + 1, &g->nic_mod) || g->nic_mod == 0 || g->nic_mod > 256))
		return -1;
	return 0;
}

enum {
	OPT_JOIN = 256, OPT_RANKS, OPT_NUM_RANKS, OPT_CPU, OPT_NIC, OPT_RANKS_PER_NODE, OPT_NO_CHECK, OPT_KEEP_SYNC
};

static const struct option longopts[] = {
	EV_CLI_COMMON_LONG,
	{ "binary", no_argument, NULL, 'b' },
	{ "per-rank", required_argument, NULL, 'p' },
	{ "concat", no_argument, NULL, 'c' },
	{ "delete-parts", no_argument, NULL, 'r' },
	{ "join", required_argument, NULL, OPT_JOIN },
	{ "ranks", required_argument, NULL, OPT_RANKS },
	{ "num-ranks", required_argument, NULL, OPT_NUM_RANKS },
	{ "cpu", required_argument, NULL, OPT_CPU },
	{ "nic", required_argument, NULL, OPT_NIC },
	{ "ranks-per-node", required_argument, NULL, OPT_RANKS_PER_NODE },
	{ "no-check", no_argument, NULL, OPT_NO_CHECK },
	{ "keep-sync", no_argument, NULL, OPT_KEEP_SYNC },
	{ "stats", optional_argument, NULL, 's' },
	{ "window", required_argument, NULL, 'w' },
	{ "tmpdir", required_argument, NULL, 'T' },
	{ NULL, 0, NULL, 0 },
};

static int on_opt(void *ctx, int code, const char *arg)
{
	static const char *const cpus[] = { "dense", "lane", NULL };
	struct opts *o = ctx;
	int rc;
	uint32_t w;
	switch (code) {
	case 'b': o->g.binary = 1; break;
	case 'p': o->per_rank_dir = arg; break;
	case 'c': o->concat = 1; break;
	case 'r': o->delete_parts = o->concat = 1; break;
	case OPT_JOIN: o->join_dir = arg; break;
	case OPT_RANKS:
		ev_goal_ranks_free(&o->sel);
		if ((rc = ev_goal_ranks_parse(&o->sel, arg)) == EV_ERR_NOMEM)
			return ev_cli_error(&o->cli, "out of memory");
		if (rc && strchr(arg, '%'))
			return ev_cli_usage_error(&o->cli, "--ranks: expected K%%N with K < N, got '%s'", arg);
		if (rc)
			return ev_cli_usage_error(&o->cli, "--ranks: expected a list like 0,2,4-7, got '%s'", arg);
		break;
	case OPT_NUM_RANKS:
		if (ev_parse_u32(arg, &o->g.num_ranks) || !o->g.num_ranks || o->g.num_ranks > EV_GOAL_MAX_RANKS)
			return ev_cli_usage_error(&o->cli, "--num-ranks: expected 1..%u, got '%s'", EV_GOAL_MAX_RANKS, arg);
		break;
	case OPT_CPU:
		if ((rc = ev_cli_word_find(cpus, arg)) < 0)
			return ev_cli_usage_error(&o->cli, "--cpu: expected dense or lane, got '%s'", arg);
		o->g.cpu = rc ? EV_GOAL_CPU_LANE : EV_GOAL_CPU_DENSE;
		break;
	case OPT_NIC:
		if (parse_nic(&o->g, arg))
			return ev_cli_usage_error(&o->cli, "--nic: expected 0, channel[:N] or rail[:N] (N 1..256), got '%s'", arg);
		break;
	case OPT_RANKS_PER_NODE:
		if (ev_parse_u32(arg, &o->g.ranks_per_node) || !o->g.ranks_per_node)
			return ev_cli_usage_error(&o->cli, "--ranks-per-node: expected a positive number, got '%s'", arg);
		break;
	case OPT_NO_CHECK: o->g.check = 0; break;
	case OPT_KEEP_SYNC: o->g.keep_sync = 1; break;
	case 's':
		o->stats = 1;
		o->stats_file = arg;
		break;
	case 'w':
		if (ev_parse_u32(arg, &w) || w < 2 || w > EV_GOAL_MAX_WINDOW)
			return ev_cli_usage_error(&o->cli, "--window: expected 2..%u ops, got '%s'", EV_GOAL_MAX_WINDOW, arg);
		o->g.window = w; /* rounded up to a power of two by the library */
		break;
	case 'T': o->tmpdir = arg; break;
	}
	return 0;
}

static const struct ev_cli_opts options = { "bp:crs::w:T:", longopts, on_opt, usage };

/* What the options say together, and the inputs.  Returns EV_CLI_RUN or
 * the exit status. */
static int setup(struct opts *o, char **inputs, int ninputs)
{
	static char *stdin_only[] = { (char *)"-" };
	int some = !ev_goal_ranks_empty(&o->sel);
	if (o->concat && !o->per_rank_dir && !o->join_dir)
		return ev_cli_usage_error(&o->cli, "--concat and --delete-parts need --per-rank=DIR");
	if (o->join_dir && (o->per_rank_dir || ninputs))
		return ev_cli_usage_error(&o->cli, "--join reads the parts in DIR: it takes no FILE and no --per-rank");
	if (some && !o->per_rank_dir)
		return ev_cli_usage_error(&o->cli, "--ranks writes some rank parts: it needs --per-rank=DIR");
	if (some && o->concat)
		return ev_cli_usage_error(&o->cli, "--ranks writes only some parts: join them with --join once every worker is done");
	o->inputs = ninputs ? inputs : stdin_only;
	o->ninputs = ninputs ? ninputs : 1;
	return EV_CLI_RUN;
}

int main(int argc, char **argv)
{
	struct opts o;
	int first;
	memset(&o, 0, sizeof o);
	ev_cli_init(&o.cli, "ev2goal");
	ev_goal_opts_init(&o.g);
	int status = ev_cli_getopt(&o.cli, argc, argv, &options, &o, &first);
	if (status == EV_CLI_RUN)
		status = setup(&o, argv + first, argc - first);
	if (status == EV_CLI_RUN)
		status = run(&o); /* ev_cli_init removes -o's temp file on a signal; the spool has no name */
	ev_goal_ranks_free(&o.sel);
	return ev_cli_finish(&o.cli, status);
}
