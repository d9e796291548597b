/* SPDX-License-Identifier: MIT */
/*
 * goal.c - the GOAL schedule options and --stats report, shared by ev2goal
 * and coll-expand --format=goal, so that both take the same words for the
 * same schedule and print the same summary.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ev/tool.h"

void ev_cli_goal_init(struct ev_cli_goal *o)
{
	memset(o, 0, sizeof *o);
	ev_goal_opts_init(&o->g);
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

int ev_cli_goal_opt(const struct ev_cli *cli, struct ev_cli_goal *o, int code, const char *arg, int *status)
{
	static const char *const cpus[] = { "dense", "lane", NULL };
	int rc;
	uint32_t w;
	*status = 0;
	switch (code) {
	case 'b': o->g.binary = 1; break;
	case EV_CLI_GOAL_NUM_RANKS:
		if (ev_parse_u32(arg, &o->g.num_ranks) || !o->g.num_ranks || o->g.num_ranks > EV_GOAL_MAX_RANKS)
			*status = ev_cli_usage_error(cli, "--num-ranks: expected 1..%u, got '%s'", EV_GOAL_MAX_RANKS, arg);
		break;
	case EV_CLI_GOAL_CPU:
		if ((rc = ev_cli_word_find(cpus, arg)) < 0)
			*status = ev_cli_usage_error(cli, "--cpu: expected dense or lane, got '%s'", arg);
		else
			o->g.cpu = rc ? EV_GOAL_CPU_LANE : EV_GOAL_CPU_DENSE;
		break;
	case EV_CLI_GOAL_NIC:
		if (parse_nic(&o->g, arg))
			*status = ev_cli_usage_error(cli, "--nic: expected 0, channel[:N] or rail[:N] (N 1..256), got '%s'",
			                             arg);
		break;
	case EV_CLI_GOAL_NO_CHECK: o->g.check = 0; break;
	case EV_CLI_GOAL_KEEP_SYNC: o->g.keep_sync = 1; break;
	case 's':
		o->stats = 1;
		o->stats_file = arg;
		break;
	case 'w':
		if (ev_parse_u32(arg, &w) || w < 2 || w > EV_GOAL_MAX_WINDOW)
			*status = ev_cli_usage_error(cli, "--window: expected 2..%u ops, got '%s'", EV_GOAL_MAX_WINDOW, arg);
		else
			o->g.window = w; /* rounded up to a power of two by the library */
		break;
	case 'T': o->tmpdir = arg; break;
	default:
		return 0;
	}
	o->given = 1;
	return 1;
}

void ev_cli_goal_setup(struct ev_cli_goal *o, const ev_meta *meta)
{
	const char *base = o->tmpdir ? o->tmpdir : getenv("TMPDIR");
	o->g.spool_parent = base && *base ? base : "/tmp";
	o->g.meta = meta;
	o->g.estimate = o->stats;
}

int ev_cli_goal_error(const struct ev_cli *cli, const struct ev_goal_error *e, const char *output)
{
	if (e->in_output)
		return ev_cli_file_error(cli, output, e->status);
	return ev_cli_error(cli, "%s", e->msg[0] ? e->msg : ev_strerror(e->status));
}

int ev_cli_goal_write(const struct ev_cli *cli, ev_goal *g)
{
	ev_output *out;
	int rc = ev_output_open(&out, cli->output);
	if (rc)
		return ev_cli_file_error(cli, cli->output, rc);
	if (ev_goal_write(g, out)) {
		ev_output_abort(out);
		return ev_cli_goal_error(cli, ev_goal_error(g), cli->output);
	}
	if ((rc = ev_output_close(out)))
		return ev_cli_file_error(cli, cli->output, rc);
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

/* To standard error, or to FILE opened and written in place as fopen
 * would (a terminal, a log or a FIFO named by the user stays one). */
int ev_cli_goal_stats(const struct ev_cli *cli, const struct ev_cli_goal *o, const ev_goal *g)
{
	if (!o->stats)
		return 0;
	int to_file = o->stats_file && strcmp(o->stats_file, "-") != 0;
	int fd = to_file ? open(o->stats_file, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0666) : STDERR_FILENO;
	if (fd < 0)
		return ev_cli_error(cli, "%s: %s", o->stats_file, strerror(errno));
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
		return ev_cli_error(cli, "out of memory");
	if (!to_file || rc == EV_OK)
		return 0; /* standard error: there is nowhere to say that it failed */
	return ev_cli_error(cli, "%s: %s", o->stats_file, strerror(e));
}
