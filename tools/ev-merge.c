/* SPDX-License-Identifier: MIT */
/*
 * ev-merge - k-way time merge of ev streams, with sources, external sort and clock alignment
 *
 * The front end of lib/merge (include/ev/merge.h): options, the inputs as
 * LABEL=INPUT, the output and its messages.  The merge itself (sources, the
 * k-way heap, the external sorter, the alignment's first pass and report)
 * is the library's.
 */
#include <regex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ev.h"
#include "ev/merge.h"

struct opts {
	struct ev_cli cli;
	struct ev_merge_opts m;
	char **keys;           /* --src-keys */
	size_t nkeys;
	const char *src_regex;
	regex_t re;
	int have_re;
	char **cfg_keys;       /* --config-keys */
	size_t ncfg_keys;
	char **inputs;
	int ninputs;
};

static void usage(FILE *f)
{
	fputs(
"Usage: ev-merge [options] [LABEL=]INPUT...\n"
"Merge ev streams into one stream in time order (ts, rank, stream, seq; ties\n"
"by input order).  Every source of every input becomes a source of the\n"
"output ('#src N ...', src = N in its records), keeping all its keys; an\n"
"input without #src lines is one source (label=LABEL file=INPUT).  Strings\n"
"and metadata of all inputs appear once.  INPUT may be '-' (once).\n"
"\n"
"Options:\n"
"  -o, --output=FILE      write to FILE (via a temporary name) [stdout]\n"
"  -k, --src-keys=LIST    names for the groups of --src-regex, e.g. threads,channels\n"
"  -x, --src-regex=RE     POSIX extended RE matched against each input path;\n"
"                         its groups become key=value on its #src lines\n"
"  -R, --rank-from-src    set each record's rank to its input's index (one\n"
"                         file per rank); #rank lines are renumbered likewise\n"
"  -s, --sort             accept inputs out of time order: external merge sort\n"
"  -S, --buffer-size=SIZE memory for --sort, e.g. 64M [256M]; sorted runs go\n"
"                         to $TMPDIR and are removed on every exit\n"
"  -a, --align=MODE       clock alignment of ranks, per configuration: none,\n"
"                         start (each rank's first event at 0), coll (offset\n"
"                         per rank from anchors: collective ends, p2p pairs,\n"
"                         NCCL kernels), coll-drift (offset and drift) [none]\n"
"      --ref-rank=R       reference rank of each configuration [lowest rank]\n"
"      --report=FILE      write the alignment report as TSV to FILE\n"
"      --config-keys=LIST #src keys that identify a configuration [all but\n"
"                         file, input, rank, base_ns, host, node, pid,\n"
"                         device, gpu, nsys, schema, nccl, init_ns, fini_ns]\n"
"      --drift-min-span=T anchors must span T for a drift to be fitted [1s]\n"
"      --warn-residual=T  warn when a rank's median residual exceeds T [10us]\n"
"  -f, --force            write binary output to a terminal\n"
"  -q, --quiet            no progress, warnings or alignment report\n"
EV_CLI_HELP_HV
"\n"
"Alignment reads the inputs twice (a pipe is spooled to a temporary file);\n"
"inputs holding several ranks go through the external sorter, so the output\n"
"is in time order.  A rank's clock is t_rank = t_ref + O + D*(t_ref - t0);\n"
"its times become t0 + (t - O - t0)/(1 + D).  The report (stderr, --report)\n"
"gives per rank O, D, anchors used and residuals; the output keeps\n"
"'#meta align.rank<R>.offset_ns=O align.rank<R>.drift_ppm=D align.rank<R>.t0_ns=T'.\n"
"\n"
EV_CLI_HELP_EXIT("bad, truncated or out-of-order input, write error")
"\n"
"Example:\n"
"  ev-merge -k threads,channels -x '([0-9]+)thread/nccl_([0-9]+)channels' \\\n"
"      sweep/*/*/rank*.ev | ev-stats variance\n",
	f);
}

static void progress(void *cli, uint64_t records)
{
	ev_cli_progress(cli, records, 0);
}

/* A comma list appended to *list; with keys, names that can be #src keys.
 * Returns 0 to go on, else the exit status. */
static int name_list(struct opts *o, const char *arg, char ***list, size_t *n, int keys)
{
	char *copy = strdup(arg), *save = NULL;
	int status = copy ? 0 : ev_cli_error(&o->cli, "out of memory");
	for (char *t = copy ? strtok_r(copy, ",", &save) : NULL; t; t = strtok_r(NULL, ",", &save)) {
		if (keys && (!*t || strpbrk(t, " \t="))) {
			status = ev_cli_usage_error(&o->cli, "--src-keys: bad key name '%s'", t);
			break;
		}
		char **nl = realloc(*list, (*n + 1) * sizeof *nl);
		if (!nl || !(nl[*n] = strdup(t))) {
			*list = nl ? nl : *list;
			status = ev_cli_error(&o->cli, "out of memory");
			break;
		}
		*list = nl;
		(*n)++;
	}
	free(copy);
	return status;
}

static void free_names(char **list, size_t n)
{
	for (size_t k = 0; k < n; k++)
		free(list[k]);
	free(list);
}

/* --drift-min-span, --warn-residual: a time with an optional unit, in ns.
 * Returns 0 to go on, else the exit status. */
static int parse_time(struct opts *o, const char *option, const char *arg, uint64_t *ns)
{
	char *end;
	double v = strtod(arg, &end);
	double unit = !strcmp(end, "s") ? 1e9 : !strcmp(end, "ms") ? 1e6 : !strcmp(end, "us") ? 1e3
	              : !strcmp(end, "ns") || !*end ? 1 : -1;
	if (end == arg || unit < 0 || !(v >= 0) || v * unit > 1e18)
		return ev_cli_usage_error(&o->cli, "--%s: expected a time like 500ms, 2s or 10us, got '%s'", option, arg);
	*ns = (uint64_t)(v * unit);
	return 0;
}

/* What the options say together: the regex and its keys, --report.
 * Returns EV_CLI_RUN, else the exit status. */
static int check_args(struct opts *o)
{
	if (o->src_regex) {
		int e = regcomp(&o->re, o->src_regex, REG_EXTENDED);
		o->have_re = e == 0;
		if (e) {
			char msg[128];
			regerror(e, &o->re, msg, sizeof msg);
			return ev_cli_usage_error(&o->cli, "--src-regex: %s", msg);
		}
		if (o->nkeys == 0)
			return ev_cli_usage_error(&o->cli, "--src-regex needs --src-keys to name its groups");
		if (o->nkeys > o->re.re_nsub || o->nkeys > 9)
			return ev_cli_usage_error(&o->cli, "--src-keys names %zu keys but --src-regex has %zu groups", o->nkeys,
			                          (size_t)o->re.re_nsub);
		o->m.re = &o->re;
	} else if (o->nkeys) {
		return ev_cli_usage_error(&o->cli, "--src-keys needs --src-regex");
	}
	if (o->m.report && o->m.align.mode == EV_ALIGN_NONE)
		return ev_cli_usage_error(&o->cli, "--report needs --align");
	o->m.keys = (const char *const *)o->keys;
	o->m.nkeys = o->nkeys;
	o->m.cfg_keys = (const char *const *)o->cfg_keys;
	o->m.ncfg_keys = o->ncfg_keys;
	return EV_CLI_RUN;
}

enum { OPT_REF_RANK = 256, OPT_REPORT, OPT_CONFIG_KEYS, OPT_DRIFT_MIN_SPAN, OPT_WARN_RESIDUAL };

static const struct option longopts[] = {
	EV_CLI_COMMON_LONG,
	{ "src-keys", required_argument, NULL, 'k' },
	{ "src-regex", required_argument, NULL, 'x' },
	{ "rank-from-src", no_argument, NULL, 'R' },
	{ "sort", no_argument, NULL, 's' },
	{ "buffer-size", required_argument, NULL, 'S' },
	{ "align", required_argument, NULL, 'a' },
	{ "ref-rank", required_argument, NULL, OPT_REF_RANK },
	{ "report", required_argument, NULL, OPT_REPORT },
	{ "config-keys", required_argument, NULL, OPT_CONFIG_KEYS },
	{ "drift-min-span", required_argument, NULL, OPT_DRIFT_MIN_SPAN },
	{ "warn-residual", required_argument, NULL, OPT_WARN_RESIDUAL },
	{ NULL, 0, NULL, 0 },
};

static int on_opt(void *ctx, int code, const char *arg)
{
	static const char *const modes[] = { "none", "start", "coll", "coll-drift", NULL }; /* enum ev_align_mode */
	struct opts *o = ctx;
	int32_t r;
	int k;
	switch (code) {
	case 'k': return name_list(o, arg, &o->keys, &o->nkeys, 1);
	case 'x': o->src_regex = arg; break;
	case 'R': o->m.rank_from_src = 1; break;
	case 's': o->m.sort = 1; break;
	case 'S':
		if (ev_parse_size(arg, &o->m.sort_bytes) || o->m.sort_bytes < (1u << 20))
			return ev_cli_usage_error(&o->cli, "--buffer-size: expected a size of at least 1M, like 64M, got '%s'",
			                          arg);
		break;
	case 'a':
		if ((k = ev_cli_word_find(modes, arg)) < 0)
			return ev_cli_usage_error(&o->cli, "--align: expected none, start, coll or coll-drift, got '%s'", arg);
		o->m.align.mode = (enum ev_align_mode)k;
		break;
	case OPT_REF_RANK:
		if (ev_parse_i32(arg, &r) || r < 0)
			return ev_cli_usage_error(&o->cli, "--ref-rank: not a rank: '%s'", arg);
		o->m.align.ref_rank = r;
		break;
	case OPT_REPORT: o->m.report = arg; break;
	case OPT_CONFIG_KEYS: return name_list(o, arg, &o->cfg_keys, &o->ncfg_keys, 0);
	case OPT_DRIFT_MIN_SPAN: return parse_time(o, "drift-min-span", arg, &o->m.align.min_drift_span);
	case OPT_WARN_RESIDUAL: return parse_time(o, "warn-residual", arg, &o->m.align.warn_residual);
	}
	return 0;
}

static const struct ev_cli_opts options = { "k:x:RsS:a:", longopts, on_opt, usage };

/* What the options say together, and the inputs.  Returns EV_CLI_RUN or
 * the exit status. */
static int setup(struct opts *o, char **inputs, int ninputs)
{
	static char *stdin_only[] = { (char *)"-" };
	int status = check_args(o);
	if (status != EV_CLI_RUN)
		return status;
	o->inputs = ninputs ? inputs : stdin_only;
	o->ninputs = ninputs ? ninputs : 1;
	if (o->ninputs > 65535)
		return ev_cli_usage_error(&o->cli, "at most 65535 inputs");
	return EV_CLI_RUN;
}

/* The merge over the library: inputs, alignment, then the output. */
static int merge(struct opts *o, struct ev_merge_input *in)
{
	int status = 0, rc, stdin_used = 0;
	for (int i = 0; i < o->ninputs; i++) {
		char *arg = o->inputs[i], *eq = strchr(arg, '=');
		/* LABEL=INPUT, unless the whole argument is an existing file. */
		if (eq && eq != arg && access(arg, F_OK) != 0) {
			*eq = '\0';
			in[i].label = arg;
			in[i].path = eq + 1;
		} else {
			in[i].path = arg;
		}
		if (strcmp(in[i].path, "-") == 0 && stdin_used++)
			return ev_cli_usage_error(&o->cli, "standard input ('-') can be given only once");
	}
	ev_merge *m = NULL;
	ev_writer *w = NULL;
	if (ev_merge_new(&m, &o->m, in, (size_t)o->ninputs) != EV_OK || ev_merge_align(m) != EV_OK ||
	    ev_cli_check_binary_out(&o->cli))
		status = 1;
	else if ((rc = ev_writer_open(&w, o->cli.output, ev_merge_strtab(m))) != EV_OK)
		status = ev_cli_file_error(&o->cli, o->cli.output, rc);
	else if (ev_merge_write(m, w, o->cli.output) != EV_OK)
		status = 1;
	if (!status)
		status = ev_cli_close_writer(&o->cli, &w);
	ev_writer_abort(w);
	ev_merge_free(m);
	return status;
}

static int run(struct opts *o)
{
	struct ev_merge_input *in = calloc((size_t)o->ninputs, sizeof *in);
	int status = in ? merge(o, in) : ev_cli_error(&o->cli, "out of memory");
	free(in);
	return status;
}

int main(int argc, char **argv)
{
	struct opts o;
	int first;
	memset(&o, 0, sizeof o);
	ev_cli_init(&o.cli, "ev-merge");
	o.m.sort_bytes = 256u << 20;
	ev_align_opts_default(&o.m.align);
	o.m.align.mode = EV_ALIGN_NONE;
	o.m.say = (struct ev_say){ ev_cli_say, &o.cli };
	o.m.progress = progress;
	o.m.progress_ctx = &o.cli;
	int status = ev_cli_getopt(&o.cli, argc, argv, &options, &o, &first);
	if (status == EV_CLI_RUN)
		status = setup(&o, argv + first, argc - first);
	if (status == EV_CLI_RUN)
		status = run(&o);
	if (o.have_re)
		regfree(&o.re);
	free_names(o.keys, o.nkeys);
	free_names(o.cfg_keys, o.ncfg_keys);
	return ev_cli_finish(&o.cli, status);
}
