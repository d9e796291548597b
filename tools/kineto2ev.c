/* SPDX-License-Identifier: MIT */
/*
 * kineto2ev - convert PyTorch profiler (Kineto) and Chrome trace JSON to ev
 *
 * A front end over lib/kineto (include/ev/kineto.h): options, inputs,
 * messages.  The library reads each event in one pass, sorts the records
 * in bounded memory and links GPU events to their ops while writing.
 */
#include <ctype.h>
#include <regex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <strings.h>

#include "ev.h"
#include "ev/kineto.h"
#include "ev/nccl.h"


struct opts {
	struct ev_cli cli;
	enum ev_rules rules;
	int python, no_api, verbose, clip, flow_links, threads;
	int64_t rank;          /* --rank, -1 none */
	uint64_t sort_bytes;
	uint64_t max_object;
	int max_tokens;
	uint32_t link_window;
	char **inputs;
	int ninputs;
};

struct state {
	struct opts *o;
	ev_kineto *k;
	struct ev_json_tok *toks;
};

static void usage(FILE *f)
{
	fputs(
"Usage: kineto2ev [options] FILE...\n"
"Convert PyTorch profiler (Kineto) traces and Chrome trace-event JSON\n"
"(.json or .json.gz, an object with traceEvents or a bare array) to one ev\n"
"stream in time order.  Each file is a source (#src); its rank comes from\n"
"distributedInfo, else from the path (rank3, rank_3, rank-3, worker3), else\n"
"from --rank.\n"
"\n"
"Events: kernels (class by --rules), memcpy, memset, runtime and driver calls,\n"
"cpu_op / user annotations / python functions as ranges, instants as marks,\n"
"counters, B/E pairs.  NCCL kernels with collective arguments also give a\n"
"coll (or p2p) record with kind, bytes, dtype, communicator and seq; without\n"
"them (PyTorch <= 2.1) the record is inferred from the kernel name and the\n"
"nccl:* annotation around the launch, in one default group (said on stderr).\n"
"GPU events are linked to the innermost cpu_op open around their runtime\n"
"call on its thread (else by External id).\n"
"\n"
"Options:\n"
"  -o, --output=FILE      write to FILE (via a temporary name) [stdout]\n"
"      --rules=SET        kernel classes: tracelens (nccl|rccl|cross_device_reduce,\n"
"                         any case; rocclr copies are memcpy), tracelens-2025\n"
"                         (case-sensitive 'nccl'), hta [tracelens]\n"
"      --python           keep python_function events (numerous)\n"
"      --no-api           leave out runtime and driver calls\n"
"      --rank=N           rank of a single input without rank information\n"
"      --clip             cut a kernel that runs past the start of the next\n"
"                         kernel on its stream at that start (flag clipped), as\n"
"                         Perfetto draws it (TraceLens issue #669)\n"
"      --flow-links       TraceLens's linking: flag GPU events without an ac2g\n"
"                         flow pair to their call (noflow), and give backward\n"
"                         ops their forward op from fwdbwd flows, for ev-stats\n"
"                         report --tracelens (flow_links=ac2g,fwdbwd on #src)\n"
"  -S, --buffer-size=SIZE memory for time ordering before spilling sorted runs\n"
"                         to $TMPDIR [16M]\n"
"      --max-object=SIZE  largest single JSON event accepted [16M]\n"
"      --max-tokens=N     most JSON keys and values in one event [1000000]\n"
"      --link-window=N    runtime calls, ops and fwdbwd flows remembered while\n"
"                         linking [65536]\n"
"      --threads=N        1, or 2: a plain (not gzip) file of 4 MiB or more is\n"
"                         read in two halves, the second on a thread of its\n"
"                         own; the output is the same [2 on two cores or more]\n"
"  -f, --force            write binary output to a terminal\n"
"  -v, --verbose          print per-file counts on stderr: events, kernels,\n"
"                         collectives (inferred), skipped, and how GPU events\n"
"                         were linked (call stack, External id, none), and\n"
"                         where a second half was read on its own thread\n"
"  -q, --quiet            no progress or warnings\n"
EV_CLI_HELP_HV
"\n"
"Time stamps (microseconds with a fraction) become integer nanoseconds\n"
"exactly, from the decimal text; with baseTimeNanoseconds, ts = base + ts*1000.\n"
"A base that is not an integer from 0 to 2^63-1 ns, or that pushes a time\n"
"past 2^63-1 ns, is an error.\n"
"\n"
EV_CLI_HELP_EXIT("invalid or truncated JSON, a bad baseTimeNanoseconds,\n"
"     write error")
"\n"
"Example:\n"
"  kineto2ev run/torch_profiler/rank*/*.json.gz | ev-view --type=coll -c rank,ts,bytes,seq\n",
	f);
}

/* Integer value of a primitive or numeric string token. */
static int tok_i64(const char *text, const struct ev_json_tok *t, int i, int64_t *v)
{
	if (t[i].type != EV_JT_PRIMITIVE && t[i].type != EV_JT_STRING)
		return -1;
	struct ev_kspan sp = { .p = text + t[i].start, .n = (uint32_t)(t[i].end - t[i].start),
	                       .type = t[i].type == EV_JT_STRING ? '"' : 'n' };
	return ev_kspan_i64(&sp, v);
}

/* ---- NCCL flow-extractor JSONL (NCCL_GP) ------------------------------ */

static int tok_text(const char *text, const struct ev_json_tok *t, int v, char *buf, size_t n)
{
	if (v < 0 || t[v].end - t[v].start >= (int)n)
		return -1;
	if (t[v].type == EV_JT_STRING)
		return ev_json_str(text, t, v, buf) == (size_t)-1 ? -1 : 0;
	memcpy(buf, text + t[v].start, (size_t)(t[v].end - t[v].start));
	buf[t[v].end - t[v].start] = '\0';
	return 0;
}

static int is_flow_jsonl(const char *path)
{
	const char *b = strrchr(path, '/');
	b = b ? b + 1 : path;
	return strstr(b, "flow_steps_rank") != NULL || strstr(b, ".jsonl") != NULL;
}

/* One SEND or RECV per buffer step, in file order (the extractor writes no
 * times: ts is 0, seq is opCount).  bytes are what the extractor recorded,
 * the slice capacity rather than the bytes sent (see docs/kineto2ev.md). */
static int read_flow_jsonl(struct state *s, int i)
{
	struct opts *o = s->o;
	struct ev_kineto_file *fi = ev_kineto_file(s->k, i);
	ev_input *in;
	int rc = ev_input_open(&in, fi->path);
	if (rc)
		return ev_cli_input_error(&o->cli, fi->path, rc);
	const char *line;
	size_t len;
	int status = 0;
	while ((rc = ev_input_line(in, &line, &len)) == EV_REC || rc == EV_ERR_TRUNCATED) {
		uint64_t lineno = ev_input_lineno(in);
		if (rc == EV_ERR_TRUNCATED) {
			status = ev_cli_error(&o->cli, "%s: line %llu: truncated (no newline at the end)", ev_cli_input_name(fi->path),
			                      (unsigned long long)lineno);
			break;
		}
		size_t k = 0;
		while (k < len && (line[k] == ' ' || line[k] == '\t' || line[k] == '\r'))
			k++;
		if (k == len)
			continue;
		const char *text = line;
		int n = ev_json_tokenize(text, len, s->toks, s->o->max_tokens);
		if (n <= 0 || s->toks[0].type != EV_JT_OBJECT) {
			status = ev_cli_error(&o->cli, "%s: line %llu: not a JSON object", ev_cli_input_name(fi->path), (unsigned long long)lineno);
			break;
		}
		if (ev_json_get(text, s->toks, 0, "nsteps") >= 0 && ev_json_get(text, s->toks, 0, "step") < 0) {
			/* proxy_flow lines describe proxy ops, not messages. */
			fi->skipped++;
			continue;
		}
		char opv[16] = "", buf[64];
		struct ev_rec r;
		ev_rec_init(&r);
		int64_t x;
		int v, miss = 0;
		if (tok_text(text, s->toks, ev_json_get(text, s->toks, 0, "op"), opv, sizeof opv) != 0)
			miss = 1;
		r.type = !strcasecmp(opv, "SEND") ? EV_SEND : !strcasecmp(opv, "RECV") ? EV_RECV : 0;
#define NUM(key, dst)                                                                               \
	do {                                                                                        \
		if ((v = ev_json_get(text, s->toks, 0, key)) < 0 || tok_i64(text, s->toks, v, &x) != 0 || x < 0) \
			miss = 1;                                                                   \
		else                                                                                \
			dst = x;                                                                    \
	} while (0)
		int64_t rank = 0, peer = 0, opc = 0, ch = 0, step = 0, bytes = 0;
		NUM("opCount", opc);
		NUM("rank", rank);
		NUM("channel", ch);
		NUM("step", step);
		NUM("peer", peer);
		NUM("bytes", bytes);
#undef NUM
		if (miss || !r.type || rank > INT32_MAX || peer > INT32_MAX || ch > 65535 || opc > UINT32_MAX ||
		    step > UINT32_MAX) {
			status = ev_cli_error(&o->cli,
			                      "%s: line %llu: a flow step needs op SEND/RECV and non-negative opCount, rank, channel, step, peer, bytes",
			                      ev_cli_input_name(fi->path), (unsigned long long)lineno);
			break;
		}
		if (fi->rank < 0)
			fi->rank = rank;
		r.peer = (int32_t)peer;
		r.seq = (uint32_t)opc;
		r.channel = (uint16_t)ch;
		r.step = (uint32_t)step;
		r.bytes = (uint64_t)bytes;
		r.id = (uint32_t)fi->events;
		if (tok_text(text, s->toks, ev_json_get(text, s->toks, 0, "pattern"), buf, sizeof buf) == 0)
			ev_nccl_pattern_word(buf, &r);
		if (tok_text(text, s->toks, ev_json_get(text, s->toks, 0, "protocol"), buf, sizeof buf) == 0)
			r.proto = (uint8_t)ev_nccl_proto_setting(buf);
		if (tok_text(text, s->toks, ev_json_get(text, s->toks, 0, "stage"), buf, sizeof buf) == 0)
			r.flags = (uint16_t)ev_nccl_stage_word(buf);
		fi->events++;
		if ((rc = ev_kineto_add(s->k, i, &r)) != EV_OK) {
			status = ev_cli_error(&o->cli, "%s: %s", ev_cli_input_name(fi->path), ev_strerror(rc));
			break;
		}
	}
	if (!status && rc < 0 && rc != EV_ERR_TRUNCATED)
		status = ev_cli_file_error(&o->cli, ev_cli_input_name(fi->path), rc);
	if (!status && fi->events == 0)
		status = ev_cli_error(&o->cli, "%s: no flow steps (proxy_flow files hold proxy ops: give flow_steps_rank<r>.jsonl)",
		                      ev_cli_input_name(fi->path));
	ev_input_close(in);
	return status;
}

static int run(struct opts *o)
{
	struct state s;
	int status = 0, rc;
	ev_writer *w = NULL;
	memset(&s, 0, sizeof s);
	s.o = o;
	struct ev_kineto_opts ko = { o->rules, o->python, o->no_api, o->clip, o->sort_bytes, (size_t)o->max_object, NULL, o->link_window,
	                             (uint32_t)o->max_tokens, o->flow_links,
	                             o->threads ? o->threads : sysconf(_SC_NPROCESSORS_ONLN) >= 2 ? 2 : 1 };
	s.toks = malloc((size_t)o->max_tokens * sizeof *s.toks);
	if (!s.toks || ev_kineto_new(&s.k, &ko, o->ninputs) != EV_OK) {
		status = ev_cli_error(&o->cli, "out of memory");
		goto done;
	}
	for (int i = 0; i < o->ninputs && !status; i++) {
		ev_kineto_file(s.k, i)->path = o->inputs[i];
		status = is_flow_jsonl(o->inputs[i]) ? read_flow_jsonl(&s, i) : ev_cli_kineto_read(&o->cli, s.k, i);
		status = status ? status : ev_cli_kineto_rank(&o->cli, s.k, i, o->ninputs, o->rank);
	}
	status = status ? status : ev_cli_kineto_unique(&o->cli, s.k, o->ninputs);
	if (status)
		goto done;
	if (ev_cli_check_binary_out(&o->cli)) {
		status = 1;
		goto done;
	}
	if ((rc = ev_writer_open(&w, o->cli.output, ev_kineto_strtab(s.k))) != EV_OK) {
		status = ev_cli_file_error(&o->cli, o->cli.output, rc);
		goto done;
	}
	rc = ev_kineto_write(s.k, w);
	if (rc) {
		status = rc == EV_ERR_IO && *ev_kineto_errpath(s.k) && !ev_output_flush(ev_writer_output(w))
		                 ? ev_cli_error(&o->cli, "%s: cannot read or write a sort run", ev_kineto_errpath(s.k))
		                 : ev_cli_file_error(&o->cli, o->cli.output, rc);
		goto done;
	}
	ev_cli_progress_done(&o->cli);
	rc = ev_writer_close(w);
	w = NULL;
	if (rc) {
		status = ev_cli_file_error(&o->cli, o->cli.output, rc);
		goto done;
	}
	ev_cli_kineto_say(&o->cli, s.k, o->ninputs, &ko, o->verbose);
done:
	ev_writer_abort(w);
	ev_kineto_free(s.k);
	free(s.toks);
	return status;
}

enum {
	OPT_RULES = 256, OPT_PYTHON, OPT_NO_API, OPT_RANK, OPT_MAX_OBJECT, OPT_MAX_TOKENS, OPT_CLIP, OPT_LINK_WINDOW,
	OPT_FLOW_LINKS, OPT_THREADS
};

static const struct option longopts[] = {
	EV_CLI_COMMON_LONG,
	{ "rules", required_argument, NULL, OPT_RULES },
	{ "python", no_argument, NULL, OPT_PYTHON },
	{ "no-api", no_argument, NULL, OPT_NO_API },
	{ "rank", required_argument, NULL, OPT_RANK },
	{ "buffer-size", required_argument, NULL, 'S' },
	{ "max-object", required_argument, NULL, OPT_MAX_OBJECT },
	{ "max-tokens", required_argument, NULL, OPT_MAX_TOKENS },
	{ "verbose", no_argument, NULL, 'v' },
	{ "clip", no_argument, NULL, OPT_CLIP },
	{ "link-window", required_argument, NULL, OPT_LINK_WINDOW },
	{ "flow-links", no_argument, NULL, OPT_FLOW_LINKS },
	{ "threads", required_argument, NULL, OPT_THREADS },
	{ NULL, 0, NULL, 0 },
};

static int on_opt(void *ctx, int code, const char *arg)
{
	struct opts *o = ctx;
	uint64_t v;
	switch (code) {
	case OPT_RULES:
		return ev_cli_rules(&o->cli, arg, &o->rules);
	case 'v': o->verbose = 1; break;
	case OPT_PYTHON: o->python = 1; break;
	case OPT_NO_API: o->no_api = 1; break;
	case OPT_CLIP: o->clip = 1; break;
	case OPT_FLOW_LINKS: o->flow_links = 1; break;
	case OPT_RANK:
		if (ev_parse_u64(arg, &v) || v > UINT32_MAX)
			return ev_cli_usage_error(&o->cli, "--rank: not a rank: '%s'", arg);
		o->rank = (int64_t)v;
		break;
	case 'S':
		return ev_cli_buffer_size(&o->cli, arg, &o->sort_bytes);
	case OPT_MAX_OBJECT:
		return ev_cli_max_object(&o->cli, arg, &o->max_object);
	case OPT_LINK_WINDOW:
		if (ev_parse_u64(arg, &v) || v < 1024 || v > (1u << 26))
			return ev_cli_usage_error(&o->cli, "--link-window: expected 1024 to 67108864, got '%s'", arg);
		o->link_window = (uint32_t)v;
		break;
	case OPT_THREADS:
		if ((arg[0] != '1' && arg[0] != '2') || arg[1])
			return ev_cli_usage_error(&o->cli, "--threads: expected 1 or 2, got '%s'", arg);
		o->threads = arg[0] - '0';
		break;
	case OPT_MAX_TOKENS:
		if (ev_parse_u64(arg, &v) || v < 16 || v > 100000000)
			return ev_cli_usage_error(&o->cli, "--max-tokens: expected 16 to 100000000, got '%s'", arg);
		o->max_tokens = (int)v;
		break;
	}
	return 0;
}

static const struct ev_cli_opts options = { "S:v", longopts, on_opt, usage };

/* The inputs, then the stream.  Returns the exit status. */
static int convert(struct opts *o, char **inputs, int ninputs)
{
	int rc = ev_cli_converter_inputs(&o->cli, ninputs, o->rank);
	if (rc)
		return rc;
	o->inputs = inputs;
	o->ninputs = ninputs;
	return ev_cli_note_inputs(&o->cli, inputs, (size_t)ninputs) ? 1 : run(o);
}

int main(int argc, char **argv)
{
	struct opts o;
	int first;
	memset(&o, 0, sizeof o);
	ev_cli_init(&o.cli, "kineto2ev");
	o.rank = -1;
	o.sort_bytes = 16u << 20;
	o.max_object = 16u << 20;
	o.max_tokens = 1000000;
	int status = ev_cli_getopt(&o.cli, argc, argv, &options, &o, &first);
	if (status == EV_CLI_RUN)
		status = convert(&o, argv + first, argc - first);
	return ev_cli_finish(&o.cli, status);
}
