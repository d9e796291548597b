/* SPDX-License-Identifier: MIT */
/*
 * npkit2lat - turn NPKit per-primitive timing summaries into a latency table
 *
 * Input: NPKit summary JSON, {"<event>": {"<bytes>": [ns, ...], ...}, ...},
 * one file per protocol.  Output: one TSV row per (primitive, protocol,
 * size) with sample count, mean and order statistics, sorted, so the same
 * inputs always give the same bytes.  coll-expand --lat reads this table.
 */
#include <ctype.h>
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "ev.h"

struct opts {
	struct ev_cli cli;
	unsigned proto;         /* --proto, 0 = infer from each file name */
	char **require;         /* events that must be present */
	size_t nrequire;
	int no_require;
	uint64_t max_object;
	char **inputs;
	int ninputs;
};

struct row {
	char *prim;             /* event name without the NPKIT_EVENT_(GPU_) prefix */
	unsigned proto;
	uint64_t size;
	uint64_t n;
	double mean, p10, p50, p90, min, max;
};

struct table {
	struct row *rows;
	size_t n, cap;
	double *samples;        /* scratch for one size's samples */
	size_t scap;
	struct ev_json_tok *toks;
	int ntoks;
};

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
"      --max-object=SIZE  largest single event object accepted [64M]\n"
"  -q, --quiet            no warnings\n"
"  -h, --help             show this help and exit\n"
"  -V, --version          show version and exit\n"
"\n"
"Statistics: mean is the arithmetic mean (one decimal); p10, p50 and p90 are\n"
"nearest-rank percentiles of the sorted samples.  Samples must be numbers >= 0.\n"
"The same (primitive, protocol, size) in two inputs is an error.\n"
"\n"
"Exit status:\n"
"  0  success\n"
"  1  data or I/O error (invalid or truncated JSON, missing events,\n"
"     non-numeric samples, write error)\n"
"  2  usage error\n"
"\n"
"Example:\n"
"  npkit2lat -o lat.tsv npkit_data_summary_Simple.json npkit_data_summary_LL.json\n"
"  coll-expand --lat lat.tsv run.ev | ev2goal -o run.goal\n",
	f);
}

/* Protocol from a file name: LL128 before LL, case-insensitive. */
static unsigned proto_from_name(const char *path)
{
	const char *base = strrchr(path, '/');
	base = base ? base + 1 : path;
	size_t n = strlen(base);
	char *low = malloc(n + 1);
	unsigned p = 0;
	if (!low)
		return 0;
	for (size_t i = 0; i <= n; i++)
		low[i] = (char)tolower((unsigned char)base[i]);
	if (strstr(low, "ll128"))
		p = EV_PROTO_LL128;
	else if (strstr(low, "simple"))
		p = EV_PROTO_SIMPLE;
	else {
		/* "LL" as a word of the name: _LL. or -LL_ etc. */
		for (const char *s = strstr(low, "ll"); s; s = strstr(s + 1, "ll")) {
			int before = s == low || !isalpha((unsigned char)s[-1]);
			int after = !isalnum((unsigned char)s[2]);
			if (before && after) {
				p = EV_PROTO_LL;
				break;
			}
		}
	}
	free(low);
	return p;
}

static const char *strip_prefix(const char *s)
{
	if (strncmp(s, "NPKIT_EVENT_GPU_", 16) == 0)
		return s + 16;
	if (strncmp(s, "NPKIT_EVENT_", 12) == 0)
		return s + 12;
	return s;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

/* Nearest-rank percentile of sorted v[0..n). */
static double pct(const double *v, size_t n, unsigned p)
{
	size_t k = (size_t)((p * (uint64_t)n + 99) / 100);
	if (k == 0)
		k = 1;
	return v[k - 1];
}

static int tokenize(struct table *t, const char *text, size_t len)
{
	for (;;) {
		int n = ev_json_tokenize(text, len, t->toks, t->ntoks);
		if (n != EV_ERR_LIMIT)
			return n;
		int nn = t->ntoks * 4;
		struct ev_json_tok *nt = realloc(t->toks, (size_t)nn * sizeof *nt);
		if (!nt)
			return EV_ERR_NOMEM;
		t->toks = nt;
		t->ntoks = nn;
	}
}

static struct row *new_row(struct table *t)
{
	if (t->n == t->cap) {
		size_t nc = t->cap ? 2 * t->cap : 64;
		struct row *nr = realloc(t->rows, nc * sizeof *nr);
		if (!nr)
			return NULL;
		t->rows = nr;
		t->cap = nc;
	}
	struct row *r = &t->rows[t->n++];
	memset(r, 0, sizeof *r);
	return r;
}

/* One top-level member: an event name and its {size: [samples]} object. */
static int one_event(struct opts *o, struct table *t, const char *path, unsigned proto, const char *key,
                     const char *text, size_t len)
{
	int n = tokenize(t, text, len);
	if (n == EV_ERR_NOMEM)
		return ev_cli_error(&o->cli, "out of memory");
	if (n < 0)
		return ev_cli_error(&o->cli, "%s: event %s: invalid JSON", path, key);
	const struct ev_json_tok *tk = t->toks;
	if (tk[0].type != EV_JT_OBJECT)
		return ev_cli_error(&o->cli, "%s: event %s: expected an object of sizes", path, key);
	if (tk[0].size == 0)
		return ev_cli_error(&o->cli, "%s: event %s: no sizes", path, key);
	const char *prim = strip_prefix(key);
	int i = 1;
	for (int m = 0; m < tk[0].size; m++) {
		char buf[64];
		int kl = tk[i].end - tk[i].start;
		uint64_t size;
		if (kl <= 0 || kl >= (int)sizeof buf)
			return ev_cli_error(&o->cli, "%s: event %s: bad size key", path, key);
		memcpy(buf, text + tk[i].start, (size_t)kl);
		buf[kl] = '\0';
		if (ev_parse_u64(buf, &size))
			return ev_cli_error(&o->cli, "%s: event %s: size key '%s' is not a byte count", path, key, buf);
		int v = i + 1;
		if (tk[v].type != EV_JT_ARRAY)
			return ev_cli_error(&o->cli, "%s: event %s: size %s: expected an array of samples", path, key, buf);
		if (tk[v].size == 0)
			return ev_cli_error(&o->cli, "%s: event %s: size %s: no samples", path, key, buf);
		size_t ns = (size_t)tk[v].size;
		if (ns > t->scap) {
			double *s = realloc(t->samples, ns * sizeof *s);
			if (!s)
				return ev_cli_error(&o->cli, "out of memory");
			t->samples = s;
			t->scap = ns;
		}
		double sum = 0;
		for (size_t k = 0; k < ns; k++) {
			const struct ev_json_tok *e = &tk[v + 1 + k];
			char num[64];
			int el = e->end - e->start;
			double x;
			if (e->type != EV_JT_PRIMITIVE || el <= 0 || el >= (int)sizeof num)
				return ev_cli_error(&o->cli, "%s: event %s: size %s: sample %zu is not a number", path, key,
				                    buf, k + 1);
			memcpy(num, text + e->start, (size_t)el);
			num[el] = '\0';
			if (ev_parse_double(num, &x) || x < 0)
				return ev_cli_error(&o->cli, "%s: event %s: size %s: sample %zu is not a number >= 0: '%s'",
				                    path, key, buf, k + 1, num);
			t->samples[k] = x;
			sum += x;
		}
		qsort(t->samples, ns, sizeof *t->samples, cmp_double);
		for (size_t k = 0; k < t->n; k++)
			if (t->rows[k].proto == proto && t->rows[k].size == size && strcmp(t->rows[k].prim, prim) == 0)
				return ev_cli_error(&o->cli, "%s: event %s: size %s for protocol %s given twice", path, key,
				                    buf, ev_proto_name(proto));
		struct row *r = new_row(t);
		if (!r || !(r->prim = strdup(prim)))
			return ev_cli_error(&o->cli, "out of memory");
		r->proto = proto;
		r->size = size;
		r->n = ns;
		r->mean = sum / (double)ns;
		r->min = t->samples[0];
		r->max = t->samples[ns - 1];
		r->p10 = pct(t->samples, ns, 10);
		r->p50 = pct(t->samples, ns, 50);
		r->p90 = pct(t->samples, ns, 90);
		i = ev_json_skip(tk, v);
	}
	return 0;
}

static int read_file(struct opts *o, struct table *t, const char *path)
{
	unsigned proto = o->proto ? o->proto : proto_from_name(path);
	if (!proto)
		return ev_cli_error(&o->cli, "%s: cannot tell the protocol from the file name; use --proto", path);
	ev_input *in;
	ev_json *j;
	int rc = ev_input_open(&in, path);
	if (rc)
		return ev_cli_file_error(&o->cli, path, rc);
	if ((rc = ev_json_open(&j, in, "\x01no-array", (size_t)o->max_object)) != EV_OK) {
		ev_input_close(in);
		return ev_cli_error(&o->cli, "out of memory");
	}
	size_t first = t->n;
	int status = 0, events = 0;
	struct ev_json_item it;
	while ((rc = ev_json_next(j, &it)) > 0) {
		if (it.kind != EV_JSON_TOP) {
			status = ev_cli_error(&o->cli, "%s: not an NPKit summary (a JSON array)", path);
			break;
		}
		char *key = strndup(it.key, it.key_len);
		if (!key) {
			status = ev_cli_error(&o->cli, "out of memory");
			break;
		}
		status = one_event(o, t, path, proto, key, it.text, it.len);
		free(key);
		if (status)
			break;
		events++;
	}
	if (!status && rc < 0) {
		const char *d = ev_json_errdetail(j);
		status = rc == EV_ERR_IO ? ev_cli_file_error(&o->cli, path, rc) : ev_cli_error(&o->cli, "%s: %s", path, d);
	}
	if (!status && events == 0)
		status = ev_cli_error(&o->cli, "%s: no NPKit events", path);
	for (size_t q = 0; !status && q < o->nrequire; q++) {
		int found = 0;
		for (size_t k = first; k < t->n && !found; k++)
			found = strcmp(t->rows[k].prim, o->require[q]) == 0;
		if (!found)
			status = ev_cli_error(&o->cli, "%s: missing event NPKIT_EVENT_GPU_%s (see --require)", path,
			                      o->require[q]);
	}
	ev_json_close(j);
	ev_input_close(in);
	return status;
}

static int cmp_row(const void *a, const void *b)
{
	const struct row *x = a, *y = b;
	if (x->proto != y->proto)
		return x->proto < y->proto ? -1 : 1;
	int c = strcmp(x->prim, y->prim);
	if (c)
		return c;
	return x->size < y->size ? -1 : x->size > y->size;
}

/* Integral values as integers, others with enough digits to round-trip. */
static const char *num(char *buf, size_t n, double x)
{
	if (x == floor(x) && x < 9e15)
		snprintf(buf, n, "%.0f", x);
	else
		snprintf(buf, n, "%.17g", x);
	return buf;
}

static int write_table(struct opts *o, struct table *t)
{
	ev_output *out;
	int rc = ev_output_open(&out, o->cli.output);
	if (rc)
		return ev_cli_file_error(&o->cli, o->cli.output, rc);
	qsort(t->rows, t->n, sizeof *t->rows, cmp_row);
	rc = ev_output_printf(out, "primitive\tproto\tsize_bytes\tn\tmean_ns\tp10\tp50\tp90\tmin\tmax\n");
	for (size_t i = 0; i < t->n && !rc; i++) {
		const struct row *r = &t->rows[i];
		char b[5][32];
		rc = ev_output_printf(out, "%s\t%s\t%llu\t%llu\t%.1f\t%s\t%s\t%s\t%s\t%s\n", r->prim,
		                      ev_proto_name(r->proto), (unsigned long long)r->size, (unsigned long long)r->n,
		                      r->mean, num(b[0], 32, r->p10), num(b[1], 32, r->p50), num(b[2], 32, r->p90),
		                      num(b[3], 32, r->min), num(b[4], 32, r->max));
	}
	if (rc) {
		ev_output_abort(out);
		return ev_cli_file_error(&o->cli, o->cli.output, rc);
	}
	if ((rc = ev_output_close(out)) != EV_OK)
		return ev_cli_file_error(&o->cli, o->cli.output, rc);
	return 0;
}

static int run(struct opts *o)
{
	struct table t;
	int status = 0;
	memset(&t, 0, sizeof t);
	t.ntoks = 4096;
	t.toks = malloc((size_t)t.ntoks * sizeof *t.toks);
	if (!t.toks)
		return ev_cli_error(&o->cli, "out of memory");
	for (int i = 0; i < o->ninputs && !status; i++)
		status = read_file(o, &t, o->inputs[i]);
	if (!status)
		status = write_table(o, &t);
	for (size_t i = 0; i < t.n; i++)
		free(t.rows[i].prim);
	free(t.rows);
	free(t.samples);
	free(t.toks);
	return status;
}

static int parse_require(struct opts *o, const char *arg)
{
	if (strcmp(arg, "none") == 0) {
		o->nrequire = 0;
		o->no_require = 1;
		return 0;
	}
	char *copy = strdup(arg), *save = NULL;
	if (!copy)
		return -1;
	o->nrequire = 0;
	for (char *tok = strtok_r(copy, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		char **nr = realloc(o->require, (o->nrequire + 1) * sizeof *nr);
		if (!nr) {
			free(copy);
			return -1;
		}
		o->require = nr;
		if (!(nr[o->nrequire] = strdup(strip_prefix(tok)))) {
			free(copy);
			return -1;
		}
		o->nrequire++;
	}
	free(copy);
	return o->nrequire ? 0 : -1;
}

int main(int argc, char **argv)
{
	static const struct option longopts[] = {
		EV_CLI_COMMON_LONG,
		{ "proto", required_argument, NULL, 'p' },
		{ "require", required_argument, NULL, 'r' },
		{ "max-object", required_argument, NULL, 1 },
		{ NULL, 0, NULL, 0 },
	};
	struct opts o;
	int c, status;
	int given_require = 0;
	memset(&o, 0, sizeof o);
	ev_cli_init(&o.cli, "npkit2lat");
	ev_cli_cleanup_on_signal(NULL);
	o.max_object = 64u << 20;
	while ((c = getopt_long(argc, argv, EV_CLI_COMMON_SHORT "p:r:", longopts, NULL)) != -1) {
		switch (ev_cli_common(&o.cli, c, optarg)) {
		case EV_CLI_HANDLED: continue;
		case EV_CLI_WANT_HELP: usage(stdout); return ev_cli_finish(&o.cli, 0);
		case EV_CLI_DONE: return ev_cli_finish(&o.cli, 0);
		default: break;
		}
		switch (c) {
		case 'p':
			if (ev_proto_parse(optarg, &o.proto) || o.proto == 0 || o.proto > EV_PROTO_SIMPLE)
				return ev_cli_usage_error(&o.cli, "--proto: expected ll, ll128 or simple, got '%s'", optarg);
			break;
		case 'r':
			if (parse_require(&o, optarg))
				return ev_cli_usage_error(&o.cli, "--require: expected a list of primitives or 'none'");
			given_require = 1;
			break;
		case 1:
			if (ev_parse_size(optarg, &o.max_object) || o.max_object == 0)
				return ev_cli_usage_error(&o.cli, "--max-object: not a size: '%s'", optarg);
			break;
		default:
			return ev_cli_try_help(&o.cli);
		}
	}
	if (!given_require) {
		o.require = malloc(sizeof default_required);
		if (!o.require)
			return ev_cli_finish(&o.cli, ev_cli_error(&o.cli, "out of memory"));
		for (size_t i = 0; i < 2; i++)
			o.require[i] = strdup(default_required[i]);
		o.nrequire = 2;
		if (!o.require[0] || !o.require[1])
			return ev_cli_finish(&o.cli, ev_cli_error(&o.cli, "out of memory"));
	}
	static char *stdin_only[] = { (char *)"-" };
	o.inputs = optind < argc ? argv + optind : stdin_only;
	o.ninputs = optind < argc ? argc - optind : 1;
	status = run(&o);
	for (size_t i = 0; i < o.nrequire; i++)
		free(o.require[i]);
	free(o.require);
	return ev_cli_finish(&o.cli, status);
}
