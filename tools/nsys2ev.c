/* SPDX-License-Identifier: MIT */
/*
 * nsys2ev - convert Nsight Systems SQLite exports to one ev stream
 *
 * The front end: options, inputs (files, directories, gzip), the output
 * and what is said on stderr.  Reading the exports, matching NCCL calls to
 * kernels, communicators and ranks live in lib/nsys (ev/nsys.h).
 */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ev.h"
#include "ev/nsys.h"

struct opts {
	struct ev_cli cli;
	struct ev_nsys_opts ns;
	int verbose;
	struct ev_map seen;   /* hashes of warnings already said */
	uint64_t repeated;
	char *steps;          /* --steps' NAME */
};

static void usage(FILE *f)
{
	fputs(
"Usage: nsys2ev [options] FILE|DIR...\n"
"Convert Nsight Systems SQLite exports (nsys export --type sqlite; .sqlite or\n"
".sqlite.gz, directories searched for them) to one ev stream in time order.\n"
"Every GPU process is a rank; all files are merged by time.\n"
"\n"
"Records: every kernel, memcpy and memset; NVTX ranges and marks; runtime and\n"
"driver calls with --api; for every NCCL operation a coll or p2p record on the\n"
"GPU timeline (its kernel's start and duration) with kind, bytes, dtype, redop,\n"
"root or peer, communicator, seq, algo, proto, channels and threads.  With the\n"
"annotated NCCL of the ATLAHS toolchain also chunkSteps, sliceSteps, stepSize\n"
"and one chan record per channel.  #rank, #comm, #ring and #tree lines\n"
"describe the job.\n"
"\n"
"Options:\n"
"  -o, --output=FILE      write to FILE (via a temporary name) [stdout]\n"
"      --api              also write runtime and driver API calls\n"
"      --node-regex=RE    node name from the file path: the first group of the\n"
"                         POSIX extended RE (default: nid(\\d+), then\n"
"                         profile_<job>_<node>_<rank>.sqlite, then the host)\n"
"      --rank-map=FILE    fix ranks: lines 'NODE PID RANK' (NODE may also be\n"
"                         the file's host name or base name); '#' comments\n"
"      --nccl-log=FILE    NCCL_DEBUG=INFO output of the run (INIT,COLL): sizes,\n"
"                         communicators and rings for exports without NCCL\n"
"                         payloads\n"
"      --window=T0:T1     keep only records from T0 to T1 (ns, the output's\n"
"                         time base; either side may be empty); 'all' keeps\n"
"                         everything, ignoring the profiling marks\n"
"      --steps=NAME[:FROM-TO]  keep only NVTX ranges named NAME... number FROM\n"
"                         to TO (from 0, per process; default all of them)\n"
"  -f, --force            write binary output to a terminal\n"
"  -v, --verbose          per-file and per-rank counts on stderr: rows,\n"
"                         NCCL operations matched by correlation id, by the\n"
"                         time fallback, and unmatched\n"
"  -q, --quiet            no progress or warnings\n"
EV_CLI_HELP_HV
"\n"
"Window: by default, a GPU process with 'nsys profiling start' / 'nsys\n"
"profiling stopped' marks keeps only what lies between them (what is cut is\n"
"counted on stderr).  NCCL operations are kept or cut by their call's time.\n"
"\n"
"Ranks: a GPU's rank in the largest communicator that covers it; GPUs in no\n"
"communicator follow in (node, pid) order.  Time: UTC ns (origin=unix) when\n"
"every file has TARGET_INFO_SESSION_START_TIME, else the trace clock.\n"
"\n"
EV_CLI_HELP_EXIT("not SQLite, not an nsys export, truncated or\n"
"     corrupt database, unreadable marker, write error")
"\n"
"Example:\n"
"  nsys2ev run/*.sqlite | ev-view --type=coll -c rank,ts,dur,op,bytes,seq\n",
	f);
}

/* Warnings from the library: each distinct sentence once. */
static void warn(void *ctx, const char *msg)
{
	struct opts *o = ctx;
	uint64_t h = ev_hash64(msg, strlen(msg));
	if (ev_map_get(&o->seen, h ? h : 1)) {
		o->repeated++;
		return;
	}
	if (ev_map_put(&o->seen, h ? h : 1, 1) != EV_OK)
		o->repeated += 0; /* out of memory: the sentence may be said again */
	ev_cli_warn(&o->cli, "%s", msg);
}

static void progress(void *ctx, uint64_t records)
{
	ev_cli_progress(ctx, records, 0);
}

static void verbose_counts(struct opts *o, ev_nsys *ns)
{
	if (!o->verbose || o->cli.quiet)
		return;
	for (size_t i = 0; i < ev_nsys_nfiles(ns); i++) {
		struct ev_nsys_file_stats f;
		ev_nsys_file_stats(ns, i, &f);
		ev_cli_note(&o->cli, "%s: node %s: %llu kernels, %llu memcpy, %llu memset, %llu NVTX, %llu runtime rows; "
		        "%llu rows of processes without GPU work skipped, %llu markers not understood",
		        f.path, f.node, (unsigned long long)f.rows[0], (unsigned long long)f.rows[1],
		        (unsigned long long)f.rows[2], (unsigned long long)f.rows[3], (unsigned long long)f.rows[4],
		        (unsigned long long)f.skipped_nopid, (unsigned long long)f.skipped_bad);
	}
	uint64_t nopid = 0;
	for (size_t i = 0; i < ev_nsys_nfiles(ns); i++) {
		struct ev_nsys_file_stats f;
		ev_nsys_file_stats(ns, i, &f);
		nopid += f.skipped_nopid;
	}
	for (size_t k = 0; k < ev_nsys_ngpus(ns); k++) {
		struct ev_nsys_gpu_stats g;
		ev_nsys_gpu_stats(ns, k, &g);
		ev_cli_note(&o->cli, "rank %lld (pid %u, device %lld): NCCL operations: %llu matched by correlation id, "
		        "%llu by time fallback, %llu unmatched; %llu NCCL kernels without a call",
		        (long long)g.rank, g.pid, (long long)g.device, (unsigned long long)g.matched,
		        (unsigned long long)g.fallback, (unsigned long long)g.unmatched, (unsigned long long)g.kernels_alone);
	}
	if (nopid)
		ev_cli_warn(&o->cli, "%llu rows of processes without GPU work were skipped", (unsigned long long)nopid);
}

static int run(struct opts *o, char **inputs, size_t n)
{
	ev_nsys *ns = NULL;
	ev_writer *w = NULL;
	int rc = ev_nsys_new(&ns, &o->ns);
	for (size_t i = 0; i < n && !rc; i++)
		rc = ev_nsys_add_file(ns, inputs[i]);
	if (!rc)
		rc = ev_nsys_prepare(ns);
	if (rc)
		goto fail;
	if (ev_cli_check_binary_out(&o->cli)) {
		ev_nsys_free(ns);
		return 1;
	}
	if ((rc = ev_writer_open(&w, o->cli.output, ev_nsys_strtab(ns))) != EV_OK) {
		ev_nsys_free(ns);
		return ev_cli_file_error(&o->cli, o->cli.output, rc);
	}
	rc = ev_nsys_write(ns, w, o->cli.progress ? progress : NULL, &o->cli);
	if (!rc) {
		ev_cli_progress_done(&o->cli);
		rc = ev_writer_close(w);
		w = NULL;
		if (rc) {
			ev_nsys_free(ns);
			return ev_cli_file_error(&o->cli, o->cli.output, rc);
		}
		verbose_counts(o, ns);
		ev_nsys_finish(ns);
		ev_nsys_free(ns);
		return 0;
	}
fail:
	ev_writer_abort(w);
	if (rc != EV_ERR_PIPE)
		ev_cli_error(&o->cli, "%s", ns ? ev_nsys_errmsg(ns) : "out of memory");
	ev_nsys_free(ns);
	return 1;
}

/* ---- inputs: files and directories ------------------------------------ */

static int path_cmp(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static int sqlite_name(const char *n)
{
	size_t l = strlen(n);
	return (l > 7 && !strcmp(n + l - 7, ".sqlite")) || (l > 10 && !strcmp(n + l - 10, ".sqlite.gz"));
}

/* Append the .sqlite(.gz) files under dir, recursively, sorted. */
static int scan_dir(struct ev_cli *cli, const char *dir, struct ev_vec *out, int depth)
{
	DIR *d = opendir(dir);
	if (!d)
		return ev_cli_error(cli, "%s: %s", dir, strerror(errno));
	struct ev_vec names;
	ev_vec_init(&names, sizeof(char *));
	struct dirent *e;
	int status = 0;
	while (!status && (e = readdir(d)) != NULL) {
		if (e->d_name[0] == '.')
			continue;
		size_t n = strlen(dir) + strlen(e->d_name) + 2;
		char *p = malloc(n), **slot = p ? ev_vec_push(&names) : NULL;
		if (!slot) {
			free(p);
			status = ev_cli_error(cli, "out of memory");
			break;
		}
		snprintf(p, n, "%s/%s", dir, e->d_name);
		*slot = p;
	}
	closedir(d);
	if (names.len)
		qsort(names.data, names.len, sizeof(char *), path_cmp);
	for (size_t i = 0; i < names.len; i++) {
		char *p = ((char **)names.data)[i];
		struct stat sb;
		if (!status && stat(p, &sb) == 0) {
			if (S_ISDIR(sb.st_mode) && depth < 16) {
				status = scan_dir(cli, p, out, depth + 1);
			} else if (S_ISREG(sb.st_mode) && sqlite_name(p)) {
				char **slot = ev_vec_push(out);
				if (!slot) {
					status = ev_cli_error(cli, "out of memory");
				} else {
					*slot = p;
					continue;
				}
			}
		}
		free(p);
	}
	ev_vec_free(&names);
	return status;
}


/* "T0:T1" in ns, either side may be empty. */
static int parse_window(struct opts *o, const char *arg)
{
	if (!strcmp(arg, "all")) {
		o->ns.window = EV_NSYS_WIN_ALL;
		return 0;
	}
	const char *colon = strchr(arg, ':');
	char *end;
	if (!colon)
		return -1;
	o->ns.have_range = 1;
	o->ns.t0 = INT64_MIN;
	o->ns.t1 = INT64_MAX;
	errno = 0;
	if (colon != arg) {
		o->ns.t0 = strtoll(arg, &end, 10);
		if (end != colon || errno)
			return -1;
	}
	if (colon[1]) {
		o->ns.t1 = strtoll(colon + 1, &end, 10);
		if (*end || errno)
			return -1;
	}
	return o->ns.t0 <= o->ns.t1 ? 0 : -1;
}

/* "NAME[:FROM-TO]" (FROM-TO or a single N); NAME is kept in a copy.
 * Returns 0, -1 when malformed, EV_ERR_NOMEM. */
static int parse_steps(struct opts *o, const char *arg)
{
	const char *colon = strrchr(arg, ':');
	o->ns.step_from = 0;
	o->ns.step_to = INT64_MAX;
	if (!colon && !*arg)
		return -1;
	if (colon) {
		char *end;
		errno = 0;
		long long a = strtoll(colon + 1, &end, 10), b = a;
		if (end == colon + 1 || a < 0)
			return -1;
		if (*end == '-') {
			char *e2;
			b = strtoll(end + 1, &e2, 10);
			if (e2 == end + 1 || *e2)
				return -1;
		} else if (*end) {
			return -1;
		}
		if (errno || b < a || colon == arg)
			return -1;
		o->ns.step_from = a;
		o->ns.step_to = b;
	}
	free(o->steps);
	if (!(o->steps = strndup(arg, colon ? (size_t)(colon - arg) : strlen(arg))))
		return EV_ERR_NOMEM;
	o->ns.steps = o->steps;
	return 0;
}

enum { OPT_API = 256, OPT_NODE_REGEX, OPT_RANK_MAP, OPT_NCCL_LOG, OPT_WINDOW, OPT_STEPS };

static const struct option longopts[] = {
	EV_CLI_COMMON_LONG,
	{ "api", no_argument, NULL, OPT_API },
	{ "node-regex", required_argument, NULL, OPT_NODE_REGEX },
	{ "rank-map", required_argument, NULL, OPT_RANK_MAP },
	{ "nccl-log", required_argument, NULL, OPT_NCCL_LOG },
	{ "window", required_argument, NULL, OPT_WINDOW },
	{ "steps", required_argument, NULL, OPT_STEPS },
	{ "verbose", no_argument, NULL, 'v' },
	{ NULL, 0, NULL, 0 },
};

static int on_opt(void *ctx, int code, const char *arg)
{
	struct opts *o = ctx;
	int rc;
	switch (code) {
	case OPT_API: o->ns.api = 1; break;
	case OPT_NODE_REGEX: o->ns.node_regex = arg; break;
	case OPT_RANK_MAP: o->ns.rank_map = arg; break;
	case OPT_NCCL_LOG: o->ns.nccl_log = arg; break;
	case OPT_WINDOW:
		if (parse_window(o, arg))
			return ev_cli_usage_error(&o->cli, "--window: expected T0:T1 in ns (T0 <= T1) or 'all', not '%s'", arg);
		break;
	case OPT_STEPS:
		if ((rc = parse_steps(o, arg)) == EV_ERR_NOMEM)
			return ev_cli_error(&o->cli, "out of memory");
		if (rc)
			return ev_cli_usage_error(&o->cli, "--steps: expected NAME or NAME:FROM-TO, not '%s'", arg);
		break;
	case 'v': o->verbose = 1; break;
	}
	return 0;
}

static const struct ev_cli_opts options = { "v", longopts, on_opt, usage };

/* The exports named by args, directories searched, into inputs (copies). */
static int expand_inputs(struct opts *o, char **args, int n, struct ev_vec *inputs)
{
	if (n == 0) {
		if (isatty(STDIN_FILENO)) {
			fputs("Usage: nsys2ev [options] FILE|DIR...  (nsys2ev --help for more)\n", stderr);
			return 2;
		}
		return ev_cli_usage_error(&o->cli, "no input file (SQLite needs a file, not standard input)");
	}
	for (int i = 0; i < n; i++) {
		struct stat sb;
		/* SQLite opens a file by name: a stream cannot be read. */
		if (strcmp(args[i], "-") == 0)
			return ev_cli_usage_error(&o->cli, "-: nsys2ev reads SQLite files (nsys export --type sqlite), not "
			                          "standard input; name the export file");
		if (stat(args[i], &sb) != 0)
			return ev_cli_error(&o->cli, "%s: %s", args[i], strerror(errno));
		if (S_ISDIR(sb.st_mode)) {
			/* A directory without exports is an error. */
			size_t before = inputs->len;
			int status = scan_dir(&o->cli, args[i], inputs, 0);
			if (!status && inputs->len == before)
				status = ev_cli_error(&o->cli, "%s: directory holds no .sqlite or .sqlite.gz files", args[i]);
			if (status)
				return status;
			continue;
		}
		char *copy = strdup(args[i]), **slot = copy ? ev_vec_push(inputs) : NULL;
		if (!slot) {
			free(copy);
			return ev_cli_error(&o->cli, "out of memory");
		}
		*slot = copy;
	}
	if (inputs->len > 65535)
		return ev_cli_usage_error(&o->cli, "at most 65535 inputs");
	return 0;
}

/* The inputs, the stream, then a word on warnings not repeated. */
static int convert(struct opts *o, char **args, int n)
{
	struct ev_vec inputs;
	ev_vec_init(&inputs, sizeof(char *));
	if (o->cli.quiet)
		o->ns.warn = NULL;
	int status = expand_inputs(o, args, n, &inputs);
	if (!status)
		status = ev_cli_note_inputs(&o->cli, inputs.data, inputs.len);
	if (!status)
		status = run(o, inputs.data, inputs.len);
	if (!status && o->repeated && o->verbose && !o->cli.quiet)
		ev_cli_warn(&o->cli, "%llu repeated warnings not shown again", (unsigned long long)o->repeated);
	for (size_t i = 0; i < inputs.len; i++)
		free(((char **)inputs.data)[i]);
	ev_vec_free(&inputs);
	return status;
}

int main(int argc, char **argv)
{
	struct opts o;
	int first;
	memset(&o, 0, sizeof o);
	ev_cli_init(&o.cli, "nsys2ev");
	ev_map_init(&o.seen);
	o.ns.warn = warn;
	o.ns.ctx = &o;
	int status = ev_cli_getopt(&o.cli, argc, argv, &options, &o, &first);
	if (status == EV_CLI_RUN)
		status = convert(&o, argv + first, argc - first);
	free(o.steps);
	ev_map_free(&o.seen);
	return ev_cli_finish(&o.cli, status);
}
