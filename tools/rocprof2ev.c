/* SPDX-License-Identifier: MIT */
/*
 * rocprof2ev - convert rocprofv3 JSON (*_results.json) to ev
 *
 * A front end over lib/rocprof (include/ev/rocprof.h): options, inputs,
 * messages.  The library walks the document down to its record arrays in
 * bounded memory, sorts the records and links GPU events to their HIP
 * calls while writing.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ev.h"
#include "ev/rocprof.h"

struct opts {
	struct ev_cli cli;
	struct ev_rocprof_opts ro;
	int verbose;
	uint64_t sort_bytes, max_object;
};

static void usage(FILE *f)
{
	fputs(
"Usage: rocprof2ev [options] FILE...\n"
"Convert rocprofv3 JSON output (rocprofv3 --output-format json: the\n"
"*_results.json of one process, .json or .json.gz) to one ev stream in time\n"
"order.  Each file is a source (#src, with the process's init_ns and\n"
"fini_ns); each GPU agent used is a rank, numbered by its index on the node\n"
"(#rank R device=R gpu=PRODUCT arch=GFX).\n"
"\n"
"Records: kernel dispatches (kernel, class by --rules, grid and workgroup\n"
"sizes), memory copies (memcpy, direction and bytes), HIP API calls (api,\n"
"on the rank of the lowest GPU the process used) and ROCTx markers (mark\n"
"for roctxMark, range for push/pop and start/stop, named by their message).\n"
"A kernel or copy whose HIP call (same correlation id) is not in the trace is\n"
"flagged unlinked when HIP calls were traced.  Other record arrays (hsa_api,\n"
"rccl_api, memory_allocation, ...) are not converted and are named on stderr.\n"
"\n"
"Options:\n"
"  -o, --output=FILE      write to FILE (via a temporary name) [stdout]\n"
"      --rules=SET        kernel classes: tracelens, tracelens-2025, hta\n"
"                         [tracelens]\n"
"      --names=WHICH      kernel names: truncated (as TraceLens groups them),\n"
"                         formatted (demangled, with template arguments) or\n"
"                         mangled [truncated]\n"
"      --no-api           leave out HIP API calls\n"
"  -S, --buffer-size=SIZE memory for time ordering before spilling sorted runs\n"
"                         to $TMPDIR [16M]\n"
"      --max-object=SIZE  largest single JSON record accepted [16M]\n"
"      --link-window=N    HIP calls remembered while linking GPU events to\n"
"                         them [65536]\n"
"      --max-markers=N    ROCTx messages remembered [4194304]\n"
"  -f, --force            write binary output to a terminal\n"
"  -v, --verbose          print per-file counts on stderr\n"
"  -q, --quiet            no progress or warnings\n"
EV_CLI_HELP_HV
"\n"
"Time stamps are rocprofiler-sdk's nanoseconds (origin=trace).\n"
"\n"
EV_CLI_HELP_EXIT("not rocprofv3 JSON, invalid or truncated JSON, write error")
"\n"
"Example:\n"
"  rocprof2ev run/908_results.json | ev-stats kernels\n",
	f);
}

static int read_file(struct opts *o, ev_rocprof *rp, int i)
{
	struct ev_rocprof_file *fi = ev_rocprof_file(rp, i);
	ev_input *in;
	char err[512];
	int rc = ev_input_open(&in, fi->path);
	if (rc)
		return ev_cli_input_error(&o->cli, fi->path, rc);
	rc = ev_rocprof_read(rp, i, in, err, sizeof err);
	ev_input_close(in);
	if (rc == EV_ERR_IO && *ev_rocprof_errpath(rp))
		return ev_cli_error(&o->cli, "%s: cannot write a sort run: I/O error", ev_rocprof_errpath(rp));
	if (rc == EV_ERR_NOMEM)
		return ev_cli_error(&o->cli, "out of memory");
	if (rc)
		return ev_cli_error(&o->cli, "%s: %s", fi->path, *err ? err : ev_strerror(rc));
	if (fi->kernels + fi->copies + fi->api + fi->markers == 0)
		ev_cli_warn(&o->cli, "%s: no kernel dispatches, memory copies, HIP calls or markers%s%s", fi->path,
		            fi->not_converted[0] ? "; not converted: " : "", fi->not_converted);
	return 0;
}

/* Two inputs may not put records on one rank: ranks are GPU indices on a
 * node, so inputs from two nodes (or two processes on one GPU) collide. */
static int check_ranks(struct opts *o, ev_rocprof *rp, int n)
{
	for (int i = 0; i < n; i++)
		for (int j = 0; j < i; j++) {
			const struct ev_rocprof_file *a = ev_rocprof_file(rp, j), *b = ev_rocprof_file(rp, i);
			for (int x = 0; x < a->ngpus; x++)
				for (int y = 0; y < b->ngpus; y++)
					if (a->gpus[x].used && b->gpus[y].used && a->gpus[x].rank == b->gpus[y].rank)
						return ev_cli_error(&o->cli, "%s and %s both use GPU %u (rank %u): convert them separately",
						                    a->path, b->path, a->gpus[x].rank, a->gpus[x].rank);
		}
	return 0;
}

/* Counted warnings: what the conversion clamped, dropped or could not link. */
static void file_warnings(struct opts *o, const struct ev_rocprof_file *fi)
{
	static const char *const what[] = {
		"kernels whose kernel_id has no kernel symbol: named kernel_id_N (or kernel_id_unknown)",
		"GPU events on an agent missing from \"agents\": put on rank 0",
		"records that end before they start: dur 0",
		"stream, thread or correlation ids beyond 32 bits: low 32 bits kept",
		"markers without a message: named by their ROCTx call",
		"ROCTx messages beyond --max-markers: not kept",
	};
	const uint64_t n[] = { fi->no_symbol, fi->no_agent, fi->neg_dur, fi->big_field, fi->unnamed_markers, fi->lost_markers };
	for (size_t k = 0; k < sizeof n / sizeof n[0]; k++)
		if (n[k])
			ev_cli_warn(&o->cli, "%s: %llu %s", fi->path, (unsigned long long)n[k], what[k]);
	if (fi->not_converted[0])
		ev_cli_warn(&o->cli, "%s: record arrays not converted: %s", fi->path, fi->not_converted);
	if (fi->api && fi->unlinked)
		ev_cli_warn(&o->cli, "%s: %llu of %llu kernels and copies have no HIP call with their correlation id: flagged unlinked",
		            fi->path, (unsigned long long)fi->unlinked, (unsigned long long)(fi->linked + fi->unlinked));
	if (!fi->api && fi->kernels + fi->copies && !o->cli.quiet)
		ev_cli_note(&o->cli, "%s: no HIP API calls traced (rocprofv3 --hip-trace): kernels are not linked to calls", fi->path);
	if (o->verbose && !o->cli.quiet)
		ev_cli_note(&o->cli, "%s: pid %lld, %d GPU agents, host rank %u: %llu kernels, %llu copies, %llu HIP calls, "
		            "%llu markers; %llu GPU events linked to their call, %llu not", fi->path, (long long)fi->pid, fi->ngpus,
		            fi->host_rank, (unsigned long long)fi->kernels, (unsigned long long)fi->copies,
		            (unsigned long long)fi->api, (unsigned long long)fi->markers, (unsigned long long)fi->linked,
		            (unsigned long long)fi->unlinked);
}

static int run(struct opts *o, char **inputs, int n)
{
	ev_rocprof *rp = NULL;
	ev_writer *w = NULL;
	int status = 0, rc;
	o->ro.sort_bytes = o->sort_bytes;
	o->ro.max_object = (size_t)o->max_object;
	if (ev_rocprof_new(&rp, &o->ro, n) != EV_OK)
		return ev_cli_error(&o->cli, "out of memory");
	for (int i = 0; i < n && !status; i++) {
		ev_rocprof_file(rp, i)->path = inputs[i];
		status = read_file(o, rp, i);
	}
	if (!status)
		status = check_ranks(o, rp, n);
	if (!status && ev_cli_check_binary_out(&o->cli))
		status = 1;
	if (!status && (rc = ev_writer_open(&w, o->cli.output, ev_rocprof_strtab(rp))) != EV_OK)
		status = ev_cli_file_error(&o->cli, o->cli.output, rc);
	if (!status && (rc = ev_rocprof_write(rp, w)) != EV_OK)
		status = rc == EV_ERR_IO && *ev_rocprof_errpath(rp) && !ev_output_flush(ev_writer_output(w))
		                 ? ev_cli_error(&o->cli, "%s: cannot read or write a sort run", ev_rocprof_errpath(rp))
		                 : ev_cli_file_error(&o->cli, o->cli.output, rc);
	if (!status)
		status = ev_cli_close_writer(&o->cli, &w);
	for (int i = 0; i < n && !status; i++)
		file_warnings(o, ev_rocprof_file(rp, i));
	ev_writer_abort(w);
	ev_rocprof_free(rp);
	return status;
}

enum { OPT_RULES = 256, OPT_NAMES, OPT_NO_API, OPT_MAX_OBJECT, OPT_LINK_WINDOW, OPT_MAX_MARKERS };

static const struct option longopts[] = {
	EV_CLI_COMMON_LONG,
	{ "rules", required_argument, NULL, OPT_RULES },
	{ "names", required_argument, NULL, OPT_NAMES },
	{ "no-api", no_argument, NULL, OPT_NO_API },
	{ "buffer-size", required_argument, NULL, 'S' },
	{ "max-object", required_argument, NULL, OPT_MAX_OBJECT },
	{ "link-window", required_argument, NULL, OPT_LINK_WINDOW },
	{ "max-markers", required_argument, NULL, OPT_MAX_MARKERS },
	{ "verbose", no_argument, NULL, 'v' },
	{ NULL, 0, NULL, 0 },
};

static int on_opt(void *ctx, int code, const char *arg)
{
	struct opts *o = ctx;
	uint64_t v;
	switch (code) {
	case OPT_NAMES:
		if (ev_rp_names_parse(arg, &o->ro.names) != EV_OK)
			return ev_cli_usage_error(&o->cli, "--names: expected truncated, formatted or mangled, got '%s'", arg);
		break;
	case OPT_RULES:
		return ev_cli_rules(&o->cli, arg, &o->ro.rules);
	case 'v': o->verbose = 1; break;
	case OPT_NO_API: o->ro.no_api = 1; break;
	case 'S':
		return ev_cli_buffer_size(&o->cli, arg, &o->sort_bytes);
	case OPT_MAX_OBJECT:
		return ev_cli_max_object(&o->cli, arg, &o->max_object);
	case OPT_LINK_WINDOW:
		if (ev_parse_u64(arg, &v) || v < 1024 || v > (1u << 26))
			return ev_cli_usage_error(&o->cli, "--link-window: expected 1024 to 67108864, got '%s'", arg);
		o->ro.link_window = (uint32_t)v;
		break;
	case OPT_MAX_MARKERS:
		if (ev_parse_u64(arg, &v) || v < 1 || v > (1u << 28))
			return ev_cli_usage_error(&o->cli, "--max-markers: expected 1 to 268435456, got '%s'", arg);
		o->ro.max_markers = (uint32_t)v;
		break;
	}
	return 0;
}

static const struct ev_cli_opts options = { "S:v", longopts, on_opt, usage };

int main(int argc, char **argv)
{
	struct opts o;
	int first;
	memset(&o, 0, sizeof o);
	ev_cli_init(&o.cli, "rocprof2ev");
	o.sort_bytes = 16u << 20;
	o.max_object = 16u << 20;
	int status = ev_cli_getopt(&o.cli, argc, argv, &options, &o, &first);
	if (status == EV_CLI_RUN && (status = ev_cli_converter_inputs(&o.cli, argc - first, -1)) == 0)
		status = run(&o, argv + first, argc - first);
	return ev_cli_finish(&o.cli, status);
}
