/* SPDX-License-Identifier: MIT */
/*
 * npkit2lat - turn NPKit per-primitive timing summaries into a latency table
 *
 * Input: NPKit summary JSON, {"<event>": {"<bytes>": [ns, ...], ...}, ...},
 * one file per protocol.  Output: one TSV row per (primitive, protocol,
 * size) with sample count, mean and order statistics, sorted, so the same
 * inputs always give the same bytes.  coll-expand --lat reads this table.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ev.h"
#include "ev/nccl_sched.h"

struct opts {
	struct ev_cli cli;
	unsigned proto;         /* --proto, 0 = infer from each file name */
	char **require;         /* events that must be present */
	size_t nrequire;
	int given_require;      /* --require, else the default two */
	uint64_t max_object;
	int unit;               /* --unit: UNIT_AUTO, UNIT_NS or UNIT_US */
};

enum { UNIT_AUTO, UNIT_NS, UNIT_US };

static const char *const default_required[] = { "RECV_REDUCE_SEND", "DIRECT_RECV_COPY_SEND" };

static void usage(FILE *f)
{
	fputs(
"Usage: npkit2lat [options] FILE...\n"
"Read NPKit per-primitive timing summaries (JSON objects of the form\n"
"{\"NPKIT_EVENT_GPU_<PRIM>\": {\"<bytes>\": [ns, ...], ...}, ...}, one file per\n"
"protocol) and write a latency table as TSV with the columns\n"
"  primitive proto size_bytes n mean_ns p10 p50 p90 min max\n"
"sorted by protocol, primitive and size.  coll-expand --lat reads it.\n"
"\n"
"Options:\n"
"  -o, --output=FILE      write to FILE (via a temporary name) [stdout]\n"
"  -p, --proto=PROTO      protocol of every input: ll, ll128 or simple [inferred\n"
"                         from each file name: *LL128*, *LL*, *Simple*]\n"
"  -r, --require=LIST     primitives every input must have\n"
"                         [RECV_REDUCE_SEND,DIRECT_RECV_COPY_SEND]; 'none' for none\n"
"  -u, --unit=UNIT        unit of the samples: ns, us (scaled to ns) or auto:\n"
"                         inferred per file, and said on stderr [auto]\n"
"      --max-object=SIZE  largest single event object accepted [64M]\n"
"  -q, --quiet            no warnings\n"
EV_CLI_HELP_HV
"\n"
"Statistics: mean is the arithmetic mean (one decimal); p10, p50 and p90 are\n"
"nearest-rank percentiles of the sorted samples.  Samples must be numbers from\n"
"0 to 2^53 (104 days in ns).  The same (primitive, protocol, size) in two\n"
"inputs is an error.\n"
"\n"
"Unit: NPKit summaries are in ns, older nccl_goal_generator ones in us.  With\n"
"--unit=auto a file is taken as us when, read as ns, the fastest primitive at\n"
"its largest size would move more than 1000 GB/s, or its smallest mean would\n"
"be under 10 ns; else as ns.  Either way stderr says which, and why (-q: not).\n"
"\n"
EV_CLI_HELP_EXIT("invalid or truncated JSON, missing events,\n"
"     non-numeric, infinite or over-2^53 samples, write error")
"\n"
"Example:\n"
"  npkit2lat -o lat.tsv npkit_data_summary_Simple.json npkit_data_summary_LL.json\n"
"  coll-expand --lat lat.tsv run.ev | ev2goal -o run.goal\n",
	f);
}

/* The unit of the rows of one file (from `first`): as --unit says, else
 * inferred and said; microseconds are scaled to ns. */
static int settle_unit(struct opts *o, ev_npkit *t, size_t first, const char *path)
{
	int us = o->unit == UNIT_US;
	if (o->unit == UNIT_AUTO) {
		struct ev_npkit_unit u;
		ev_npkit_guess_unit(t, first, &u);
		us = u.us;
		if (!u.known)
			ev_cli_warn(&o->cli, "%s: every mean is 0: samples taken as ns (--unit sets it)", path);
		else if (us)
			ev_cli_warn(&o->cli, "%s: samples taken as microseconds and scaled to ns: read as ns, %s would "
			            "move %llu bytes at %.4g GB/s and the shortest mean would be %.4g ns (--unit=ns keeps "
			            "them as they are)", path, u.prim, (unsigned long long)u.size, u.gbps, u.min_mean);
		else if (!o->cli.quiet)
			ev_cli_note(&o->cli, "%s: samples taken as nanoseconds: %s moves %llu bytes at %.4g GB/s, the "
			            "shortest mean is %.4g ns (--unit=us if they are microseconds)", path, u.prim,
			            (unsigned long long)u.size, u.gbps, u.min_mean);
	}
	char err[512];
	if (us && ev_npkit_scale(t, first, 1000, err, sizeof err) != EV_OK)
		return ev_cli_error(&o->cli, "%s: %s", path, err);
	return 0;
}

/* One summary file into the table; the library parses, this reports. */
static int read_file(struct opts *o, ev_npkit *t, const char *path)
{
	unsigned proto = o->proto ? o->proto : ev_npkit_proto_from_name(path);
	if (!proto)
		return ev_cli_error(&o->cli, "%s: cannot tell the protocol from the file name; use --proto", path);
	size_t first = ev_npkit_count(t), events = 0;
	char err[512] = "";
	int rc = ev_npkit_read(t, path, proto, o->max_object, &events, err, sizeof err);
	if (rc == EV_ERR_IO)
		return ev_cli_input_error(&o->cli, path, rc);
	if (rc == EV_ERR_NOMEM)
		return ev_cli_error(&o->cli, "out of memory");
	if (rc)
		return ev_cli_error(&o->cli, "%s: %s", path, err);
	if (events == 0)
		return ev_cli_error(&o->cli, "%s: no NPKit events", path);
	for (size_t q = 0; q < o->nrequire; q++)
		if (!ev_npkit_has(t, first, o->require[q]))
			return ev_cli_error(&o->cli, "%s: missing event NPKIT_EVENT_GPU_%s (see --require)", path,
			                    o->require[q]);
	return settle_unit(o, t, first, path);
}

static int write_table(struct opts *o, ev_npkit *t)
{
	ev_output *out;
	int rc = ev_output_open(&out, o->cli.output);
	if (rc)
		return ev_cli_file_error(&o->cli, o->cli.output, rc);
	if ((rc = ev_npkit_write(t, out)) != EV_OK) {
		ev_output_abort(out);
		return rc == EV_ERR_NOMEM ? ev_cli_error(&o->cli, "out of memory") : ev_cli_file_error(&o->cli, o->cli.output, rc);
	}
	if ((rc = ev_output_close(out)) != EV_OK)
		return ev_cli_file_error(&o->cli, o->cli.output, rc);
	return 0;
}

/* Forget the required primitives (a later --require replaces them). */
static void clear_required(struct opts *o)
{
	for (size_t i = 0; i < o->nrequire; i++)
		free(o->require[i]);
	o->nrequire = 0;
}

/* One more required primitive, its NPKIT_EVENT_(GPU_) prefix optional. */
static int add_required(struct opts *o, const char *prim)
{
	char **nr = realloc(o->require, (o->nrequire + 1) * sizeof *nr);
	if (!nr)
		return -1;
	o->require = nr;
	if (!(nr[o->nrequire] = strdup(ev_npkit_strip_prefix(prim))))
		return -1;
	o->nrequire++;
	return 0;
}

static int run(struct opts *o, char **inputs, int ninputs)
{
	static char *stdin_only[] = { (char *)"-" };
	for (size_t i = 0; !o->given_require && i < 2; i++)
		if (add_required(o, default_required[i]))
			return ev_cli_error(&o->cli, "out of memory");
	if (ninputs == 0) {
		inputs = stdin_only;
		ninputs = 1;
	}
	int status = 0;
	ev_npkit *t = ev_npkit_new();
	if (!t)
		return ev_cli_error(&o->cli, "out of memory");
	for (int i = 0; i < ninputs && !status; i++)
		status = read_file(o, t, inputs[i]);
	if (!status)
		status = write_table(o, t);
	ev_npkit_free(t);
	return status;
}

/* --require: a comma list of primitives, or 'none'. */
static int parse_require(struct opts *o, const char *arg)
{
	clear_required(o);
	o->given_require = 1;
	if (strcmp(arg, "none") == 0)
		return 0;
	char *copy = strdup(arg), *save = NULL;
	if (!copy)
		return -1;
	for (char *tok = strtok_r(copy, ",", &save); tok; tok = strtok_r(NULL, ",", &save))
		if (add_required(o, tok)) {
			free(copy);
			return -1;
		}
	free(copy);
	return o->nrequire ? 0 : -1;
}

enum { OPT_MAX_OBJECT = 256 };

static const struct option longopts[] = {
	EV_CLI_COMMON_LONG,
	{ "proto", required_argument, NULL, 'p' },
	{ "require", required_argument, NULL, 'r' },
	{ "max-object", required_argument, NULL, OPT_MAX_OBJECT },
	{ "unit", required_argument, NULL, 'u' },
	{ NULL, 0, NULL, 0 },
};

static int on_opt(void *ctx, int code, const char *arg)
{
	struct opts *o = ctx;
	switch (code) {
	case 'p':
		if (ev_proto_parse(arg, &o->proto) || o->proto == 0 || o->proto >= EV_PROTO_COUNT)
			return ev_cli_usage_error(&o->cli, "--proto: expected ll, ll128 or simple, got '%s'", arg);
		break;
	case 'r':
		if (parse_require(o, arg))
			return ev_cli_usage_error(&o->cli, "--require: expected a list of primitives or 'none'");
		break;
	case 'u': {
		static const char *const units[] = { "auto", "ns", "us", NULL }; /* in UNIT_* order */
		unsigned w;
		int rc = ev_cli_word(&o->cli, "--unit", arg, units, &w);
		o->unit = (int)w;
		return rc;
	}
	case OPT_MAX_OBJECT:
		if (ev_parse_size(arg, &o->max_object) || o->max_object == 0)
			return ev_cli_usage_error(&o->cli, "--max-object: not a size: '%s'", arg);
		break;
	}
	return 0;
}

static const struct ev_cli_opts options = { "p:r:u:", longopts, on_opt, usage };

int main(int argc, char **argv)
{
	struct opts o;
	int first;
	memset(&o, 0, sizeof o);
	ev_cli_init(&o.cli, "npkit2lat");
	o.max_object = 64u << 20;
	int status = ev_cli_getopt(&o.cli, argc, argv, &options, &o, &first);
	if (status == EV_CLI_RUN)
		status = run(&o, argv + first, argc - first);
	clear_required(&o);
	free(o.require);
	return ev_cli_finish(&o.cli, status);
}
