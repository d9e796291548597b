/* SPDX-License-Identifier: MIT */
/*
 * ev2goal - write GOAL schedules (LogGOPSim text or binary) from an ev stream
 *
 * The front end of lib/goal (include/ev/goal.h): options, the input loop,
 * messages and --stats.  The schedule itself (spooling per rank, the id
 * window, the checks, both encodings, joining parts) is the library's.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ev.h"
#include "ev/goal.h"

struct opts {
	struct ev_cli cli;
	struct ev_cli_goal go;   /* the schedule options, shared with coll-expand */
	struct ev_goal_ranks sel; /* --ranks */
	const char *per_rank_dir;
	int concat, delete_parts;
	const char *join_dir;
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


/* Join the parts in dir into -o; with remove_parts, delete them after. */
static int join(const struct opts *o, const char *dir, int remove_parts, uint32_t expect)
{
	ev_output *out;
	struct ev_goal_error err = { 0 };
	uint32_t n = 0;
	int rc = ev_output_open(&out, o->cli.output);
	if (rc)
		return ev_cli_file_error(&o->cli, o->cli.output, rc);
	if ((rc = ev_goal_join(dir, o->go.g.binary, expect, out, &n, &err))) {
		ev_output_abort(out);
		return ev_cli_goal_error(&o->cli, &err, o->cli.output);
	}
	if ((rc = ev_output_close(out)))
		return ev_cli_file_error(&o->cli, o->cli.output, rc);
	char path[4096];
	for (uint32_t r = 0; remove_parts && r < n; r++)
		if (!ev_goal_part_name(path, sizeof path, dir, r, o->go.g.binary))
			unlink(path);
	return 0;
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
		status = rrc ? ev_cli_reader_error(&o->cli, r, rrc) : ev_cli_goal_error(&o->cli, ev_goal_error(g), o->cli.output);
	ev_reader_close(r);
	return status;
}

static int run(struct opts *o)
{
	if (o->join_dir)
		return join(o, o->join_dir, o->delete_parts, 0);
	if (ev_cli_note_inputs(&o->cli, o->inputs, (size_t)o->ninputs) ||
	    (o->go.g.binary && !o->per_rank_dir && ev_cli_check_binary_out(&o->cli)))
		return 1;
	if (o->per_rank_dir && mkdir(o->per_rank_dir, 0777) && errno != EEXIST)
		return ev_cli_error(&o->cli, "%s: %s", o->per_rank_dir, strerror(errno));
	ev_strtab *st = ev_strtab_new();
	ev_meta *meta = ev_meta_new();
	ev_goal *g = NULL;
	int status = 0;
	ev_cli_goal_setup(&o->go, meta);
	o->go.g.ranks = &o->sel;
	if (!st || !meta) {
		status = ev_cli_error(&o->cli, "out of memory");
		goto out;
	}
	if (ev_goal_new(&g, &o->go.g)) {
		status = g ? ev_cli_goal_error(&o->cli, ev_goal_error(g), o->cli.output) : ev_cli_error(&o->cli, "out of memory");
		goto out;
	}
	for (int i = 0; i < o->ninputs && !status; i++)
		status = read_input(o, g, o->inputs[i], st, meta);
	ev_cli_progress_done(&o->cli);
	if (status)
		goto out;
	ev_goal_source(g, o->ninputs == 1 ? o->inputs[0] : "input");
	if (ev_goal_finish(g)) {
		status = ev_cli_goal_error(&o->cli, ev_goal_error(g), o->cli.output);
		goto out;
	}
	if (o->per_rank_dir) {
		if (ev_goal_write_parts(g, o->per_rank_dir))
			status = ev_cli_goal_error(&o->cli, ev_goal_error(g), o->cli.output);
		else if (o->concat)
			status = join(o, o->per_rank_dir, o->delete_parts, ev_goal_nranks(g));
	} else {
		status = ev_cli_goal_write(&o->cli, g);
	}
	if (!status)
		status = ev_cli_goal_stats(&o->cli, &o->go, g);
out:
	ev_goal_free(g);
	ev_meta_free(meta);
	ev_strtab_free(st);
	return status;
}

enum {
	OPT_JOIN = 256, OPT_RANKS, OPT_RANKS_PER_NODE
};

static const struct option longopts[] = {
	EV_CLI_COMMON_LONG,
	EV_CLI_GOAL_LONG,
	{ "per-rank", required_argument, NULL, 'p' },
	{ "concat", no_argument, NULL, 'c' },
	{ "delete-parts", no_argument, NULL, 'r' },
	{ "join", required_argument, NULL, OPT_JOIN },
	{ "ranks", required_argument, NULL, OPT_RANKS },
	{ "ranks-per-node", required_argument, NULL, OPT_RANKS_PER_NODE },
	{ NULL, 0, NULL, 0 },
};

static int on_opt(void *ctx, int code, const char *arg)
{
	struct opts *o = ctx;
	int rc;
	if (ev_cli_goal_opt(&o->cli, &o->go, code, arg, &rc))
		return rc;
	switch (code) {
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
	case OPT_RANKS_PER_NODE:
		if (ev_parse_u32(arg, &o->go.g.ranks_per_node) || !o->go.g.ranks_per_node)
			return ev_cli_usage_error(&o->cli, "--ranks-per-node: expected a positive number, got '%s'", arg);
		break;
	}
	return 0;
}

static const struct ev_cli_opts options = { EV_CLI_GOAL_SHORT "p:cr", longopts, on_opt, usage };

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
	ev_cli_goal_init(&o.go);
	int status = ev_cli_getopt(&o.cli, argc, argv, &options, &o, &first);
	if (status == EV_CLI_RUN)
		status = setup(&o, argv + first, argc - first);
	if (status == EV_CLI_RUN)
		status = run(&o); /* ev_cli_init removes -o's temp file on a signal; the spool has no name */
	ev_goal_ranks_free(&o.sel);
	return ev_cli_finish(&o.cli, status);
}
