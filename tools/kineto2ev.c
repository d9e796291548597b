/* SPDX-License-Identifier: MIT */
/*
 * kineto2ev - convert PyTorch profiler (Kineto) and Chrome trace JSON to ev
 *
 * The JSON is read one event at a time (json_scan + jsmn), so memory does
 * not grow with the file: what grows are the link tables (one entry per
 * cpu_op and runtime call, to name each kernel's launching op) and the
 * external sort's bounded buffer, which puts the events in time order.
 * Links, ranks, base times and collective ordinals are resolved when the
 * sorted records are written, after every file has been read, so it does
 * not matter where in a file an event or `distributedInfo` appears.
 */
#include <ctype.h>
#include <getopt.h>
#include <regex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "ev.h"
#include "ev/nccl.h"


struct opts {
	struct ev_cli cli;
	enum ev_rules rules;
	int python, no_api, verbose, clip;
	int64_t rank;          /* --rank, -1 none */
	uint64_t sort_bytes;
	uint64_t max_object;
	int max_tokens;
	char **inputs;
	int ninputs;
};

/* What is known about one input file once it has been read. */
struct file_info {
	const char *path;
	int64_t base_ns;       /* baseTimeNanoseconds, 0 if none */
	int have_base;
	int64_t rank;          /* -1 until known */
	int64_t world;
	int64_t pid;
	int64_t device;
	uint64_t events, kernels, colls, unlinked, skipped;
};

struct state {
	struct opts *o;
	ev_strtab *st;
	ev_sorter *sorter;
	ev_clipper *clipper;    /* --clip */
	struct file_info *files;
	int nfiles, cur;
	/* Link tables, keyed by (file, id): External id -> op signature string,
	 * correlation -> External id of the runtime call (+1 so 0 means "none"). */
	struct ev_map op_sig, corr_ext;
	struct ev_map seq;     /* (rank, comm) -> next seq */
	struct ev_map overrun; /* (rank, stream) -> last kernel end */
	uint64_t overruns;
	/* B/E pairing: (file, pid, tid) -> stack of open begins. */
	struct ev_map stacks;
	struct ev_vec stack_store; /* of struct open_range */
	int64_t free_slot;         /* first free stack_store slot, -1 none */
	struct ev_vec comm_lines;  /* char* #comm lines, written before records */
	struct ev_map comm_seen;
	struct ev_json_tok *toks;
	char *scratch;
	size_t scratch_cap;
	int absolute_ts;       /* some input has absolute (epoch) time stamps */
};

struct open_range { uint64_t key; int64_t ts; uint64_t name; uint32_t stream; int64_t below; };

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
"coll (or p2p) record with kind, bytes, dtype, communicator and seq.\n"
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
"  -S, --buffer-size=SIZE memory for time ordering before spilling sorted runs\n"
"                         to $TMPDIR [256M]\n"
"      --max-object=SIZE  largest single JSON event accepted [16M]\n"
"      --max-tokens=N     most JSON tokens in one event [1000000]\n"
"  -f, --force            write binary output to a terminal\n"
"  -v, --verbose          print per-file counts (events, kernels, links,\n"
"                         collectives, skipped) on stderr\n"
"  -q, --quiet            no progress or warnings\n"
"  -h, --help             show this help and exit\n"
"  -V, --version          show version and exit\n"
"\n"
"Time stamps (microseconds with a fraction) become integer nanoseconds\n"
"exactly, from the decimal text; with baseTimeNanoseconds, ts = base + ts*1000.\n"
"\n"
"Exit status:\n"
"  0  success\n"
"  1  data or I/O error (invalid or truncated JSON, write error)\n"
"  2  usage error\n"
"\n"
"Example:\n"
"  kineto2ev run/torch_profiler/rank*/*.json.gz | ev-view --type=coll -c rank,ts,bytes,seq\n",
	f);
}

/* ---- small helpers -------------------------------------------------- */

static uint64_t key2(uint64_t a, uint64_t b)
{
	unsigned char buf[16];
	ev_put64(buf, a);
	ev_put64(buf + 8, b);
	uint64_t h = ev_hash64(buf, sizeof buf);
	return h ? h : 1;
}

static char *scratch(struct state *s, size_t n)
{
	if (n > s->scratch_cap) {
		char *p = realloc(s->scratch, n);
		if (!p)
			return NULL;
		s->scratch = p;
		s->scratch_cap = n;
	}
	return s->scratch;
}

/* Text of string token i, unescaped, interned; 0 on failure. */
static int intern_tok(struct state *s, const char *text, const struct ev_json_tok *t, int i, uint64_t *id)
{
	size_t cap = (size_t)(t[i].end - t[i].start) + 1;
	char *buf = scratch(s, cap);
	if (!buf)
		return EV_ERR_NOMEM;
	size_t n;
	if (t[i].type == EV_JT_STRING) {
		n = ev_json_str(text, t, i, buf);
		if (n == (size_t)-1)
			return EV_ERR_FORMAT;
	} else {
		n = cap - 1;
		memcpy(buf, text + t[i].start, n);
	}
	return ev_strtab_intern(s->st, buf, n, id);
}

/* Integer value of a primitive or numeric string token (ids, pids). */
static int tok_i64(const char *text, const struct ev_json_tok *t, int i, int64_t *v)
{
	char buf[32];
	int n = t[i].end - t[i].start;
	if (t[i].type != EV_JT_PRIMITIVE && t[i].type != EV_JT_STRING)
		return -1;
	if (n <= 0 || n >= (int)sizeof buf)
		return -1;
	memcpy(buf, text + t[i].start, (size_t)n);
	buf[n] = '\0';
	if (ev_parse_i64(buf, v) == 0)
		return 0;
	double d;
	if (ev_parse_double(buf, &d) == 0 && d >= -9.2e18 && d <= 9.2e18) {
		*v = (int64_t)d;
		return 0;
	}
	return -1;
}

/* pid/tid may be numbers or names; names get a stable 31-bit number. */
static uint32_t tok_id32(const char *text, const struct ev_json_tok *t, int i)
{
	int64_t v;
	if (i < 0)
		return 0;
	if (tok_i64(text, t, i, &v) == 0)
		return (uint32_t)v;
	return (uint32_t)(ev_hash64(text + t[i].start, (size_t)(t[i].end - t[i].start)) & 0x7FFFFFFF);
}

/* Microseconds (decimal text) to integer nanoseconds, exactly. */
static int tok_us_to_ns(const char *text, const struct ev_json_tok *t, int i, int64_t *ns)
{
	if (i < 0 || t[i].type != EV_JT_PRIMITIVE)
		return -1;
	const char *p = text + t[i].start;
	size_t n = (size_t)(t[i].end - t[i].start);
	if (ev_parse_decimal_scaled(p, n, 3, ns) == 0)
		return 0;
	/* Exponent notation: go through double (rare in traces). */
	char buf[64];
	double d;
	if (n >= sizeof buf)
		return -1;
	memcpy(buf, p, n);
	buf[n] = '\0';
	if (ev_parse_double(buf, &d) || d * 1000.0 > 9.2e18 || d * 1000.0 < -9.2e18)
		return -1;
	*ns = (int64_t)(d * 1000.0 + (d >= 0 ? 0.5 : -0.5));
	return 0;
}

/* ---- one event ------------------------------------------------------ */

static int add(struct state *s, struct ev_rec *r)
{
	r->src = (uint16_t)s->cur;
	r->rank = (uint32_t)s->cur; /* replaced by the file's rank on output */
	int rc = ev_sorter_add(s->sorter, r);
	return rc;
}

/* cpu_op signature: name and the shape arguments, compact JSON. */
static int op_signature(struct state *s, const char *text, const struct ev_json_tok *t, int ev, int args, uint64_t *id)
{
	static const char *const keys[] = { "Input Dims", "Input type", "Input Strides", "Concrete Inputs" };
	static const char *const short_keys[] = { "dims", "types", "strides", "concrete" };
	int ni = ev_json_get(text, t, ev, "name");
	size_t cap = 64 + (size_t)(ni >= 0 ? t[ni].end - t[ni].start : 0);
	for (size_t k = 0; k < 4; k++) {
		int v = args >= 0 ? ev_json_get(text, t, args, keys[k]) : -1;
		if (v >= 0)
			cap += (size_t)(t[v].end - t[v].start) + 16;
	}
	char *buf = scratch(s, cap + (size_t)(ni >= 0 ? t[ni].end - t[ni].start : 0) + 1);
	if (!buf)
		return EV_ERR_NOMEM;
	size_t o = 0;
	if (ni >= 0) {
		size_t n = ev_json_str(text, t, ni, buf);
		if (n == (size_t)-1)
			return EV_ERR_FORMAT;
		o = n;
	}
	for (size_t k = 0; k < 4; k++) {
		int v = args >= 0 ? ev_json_get(text, t, args, keys[k]) : -1;
		if (v < 0)
			continue;
		o += (size_t)sprintf(buf + o, " %s=", short_keys[k]);
		for (int c = t[v].start; c < t[v].end; c++)
			if (text[c] != ' ' && text[c] != '\n' && text[c] != '\t' && text[c] != '\r')
				buf[o++] = text[c];
	}
	return ev_strtab_intern(s->st, buf, o, id);
}

static int comm_line(struct state *s, uint64_t comm, const char *text, const struct ev_json_tok *t, int args,
                     int64_t group)
{
	if (ev_map_get(&s->comm_seen, comm ? comm : 1))
		return EV_OK;
	if (ev_map_put(&s->comm_seen, comm ? comm : 1, 1))
		return EV_ERR_NOMEM;
	char line[8192], tmp[4096], esc[8192];
	size_t o = (size_t)snprintf(line, sizeof line, "#comm %llu nranks=%lld", (unsigned long long)comm, (long long)group);
	int v = ev_json_get(text, t, args, "Process Group Ranks");
	if (v >= 0 && t[v].end - t[v].start < (int)sizeof tmp) {
		/* "[0, 1, 2]" (a string) or [0, 1, 2]: keep the digits. */
		size_t n = 0, count = 0;
		int in_num = 0;
		for (int c = t[v].start; c < t[v].end; c++) {
			char ch = text[c];
			if ((ch >= '0' && ch <= '9') || ch == '-') {
				if (!in_num && n)
					tmp[n++] = ',';
				if (!in_num)
					count++;
				tmp[n++] = ch;
				in_num = 1;
			} else {
				in_num = 0;
			}
		}
		tmp[n] = '\0';
		if (n && (int64_t)count == group)
			o += (size_t)snprintf(line + o, sizeof line - o, " ranks=%s", tmp);
	}
	static const char *const names[] = { "Process Group Name", "Process Group Description" };
	static const char *const keys[] = { "name", "desc" };
	for (int k = 0; k < 2; k++) {
		v = ev_json_get(text, t, args, names[k]);
		if (v < 0 || t[v].type != EV_JT_STRING || t[v].end - t[v].start >= (int)sizeof tmp)
			continue;
		size_t n = ev_json_str(text, t, v, tmp);
		if (n == (size_t)-1 || n == 0)
			continue;
		for (size_t i = 0; i < n; i++)
			if (tmp[i] == ' ')
				tmp[i] = '_';
		ev_text_escape(tmp, n, esc, sizeof esc);
		o += (size_t)snprintf(line + o, sizeof line - o, " %s=%s", keys[k], esc);
	}
	if (o >= sizeof line)
		return EV_OK;
	char *copy = strdup(line);
	char **slot = copy ? ev_vec_push(&s->comm_lines) : NULL;
	if (!slot) {
		free(copy);
		return EV_ERR_NOMEM;
	}
	*slot = copy;
	return EV_OK;
}

/* NCCL arguments of a kernel -> a coll/p2p record after its kernel. */
static int nccl_record(struct state *s, const char *text, const struct ev_json_tok *t, int args, const struct ev_rec *k,
                       const char *kname)
{
	int cn = ev_json_get(text, t, args, "Collective name");
	if (cn < 0)
		return EV_OK;
	char buf[256];
	if (t[cn].end - t[cn].start >= (int)sizeof buf || ev_json_str(text, t, cn, buf) == (size_t)-1)
		return EV_OK;
	struct ev_rec r = *k;
	r.type = EV_COLL;
	r.op = (uint8_t)ev_torch_coll(buf);
	if (r.op == EV_OP_SEND || r.op == EV_OP_RECV)
		r.type = EV_P2P;
	r.flags = 0;
	int64_t nin = 0, nout = 0, group = 0;
	int v;
	if ((v = ev_json_get(text, t, args, "In msg nelems")) >= 0)
		tok_i64(text, t, v, &nin);
	if ((v = ev_json_get(text, t, args, "Out msg nelems")) >= 0)
		tok_i64(text, t, v, &nout);
	if ((v = ev_json_get(text, t, args, "Group size")) >= 0)
		tok_i64(text, t, v, &group);
	if ((v = ev_json_get(text, t, args, "dtype")) >= 0 && t[v].end - t[v].start < (int)sizeof buf &&
	    ev_json_str(text, t, v, buf) != (size_t)-1)
		r.dtype = (uint8_t)ev_torch_dtype(buf);
	unsigned esize = ev_dtype_size(r.dtype);
	/* All-gather's message is its output; others are sized by the input. */
	int64_t nel = r.op == EV_OP_ALLGATHER ? nout : nin;
	r.bytes = nel > 0 ? (uint64_t)nel * (esize ? esize : 1) : 0;
	r.aux = group > 0 ? (uint32_t)group : 0;
	r.redop = r.op == EV_OP_ALLREDUCE || r.op == EV_OP_REDUCE || r.op == EV_OP_REDUCESCATTER ? EV_RED_SUM : 0;
	/* A communicator id from the process group's name (stable across ranks). */
	uint64_t comm = 0;
	if ((v = ev_json_get(text, t, args, "Process Group Name")) >= 0)
		comm = ev_hash64(text + t[v].start, (size_t)(t[v].end - t[v].start));
	else if ((v = ev_json_get(text, t, args, "Process Group Ranks")) >= 0)
		comm = ev_hash64(text + t[v].start, (size_t)(t[v].end - t[v].start));
	r.comm = comm;
	struct ev_nccl_kname kn;
	if (ev_nccl_kernel_decode(kname, &kn))
		(void)ev_nccl_kname_apply(&kn, &r);
	r.id = k->id;
	r.step = 0; /* the kernel's External id stays on the kernel record */
	int rc = comm_line(s, comm, text, t, args, group);
	if (rc)
		return rc;
	s->files[s->cur].colls++;
	return add(s, &r);
}

static int kernel_event(struct state *s, const char *text, const struct ev_json_tok *t, int ev, int args,
                        struct ev_rec *r, const char *cat)
{
	int v;
	int64_t x;
	uint64_t nid = r->name;
	const char *name = ev_strtab_get(s->st, nid, NULL);
	if (strcmp(cat, "gpu_memcpy") == 0) {
		r->type = EV_MEMCPY;
		r->op = strstr(name, "HtoD") ? EV_CP_HTOD : strstr(name, "DtoH") ? EV_CP_DTOH :
		        strstr(name, "DtoD") ? EV_CP_DTOD : strstr(name, "HtoH") ? EV_CP_HTOH :
		        strstr(name, "PtoP") ? EV_CP_PTOP : EV_CP_UNKNOWN;
	} else if (strcmp(cat, "gpu_memset") == 0) {
		r->type = EV_MEMSET;
	} else {
		r->type = EV_KERNEL;
		r->op = (uint8_t)ev_kernel_class(s->o->rules, name);
	}
	if (args >= 0) {
		if ((v = ev_json_get(text, t, args, "stream")) >= 0 && tok_i64(text, t, v, &x) == 0)
			r->stream = (uint32_t)x;
		if ((v = ev_json_get(text, t, args, "correlation")) >= 0 && tok_i64(text, t, v, &x) == 0)
			r->id = (uint32_t)x;
		if ((v = ev_json_get(text, t, args, "External id")) >= 0 && tok_i64(text, t, v, &x) == 0)
			r->step = (uint32_t)x; /* resolved to a signature on output */
		if ((v = ev_json_get(text, t, args, "bytes")) >= 0 && tok_i64(text, t, v, &x) == 0 && x > 0)
			r->bytes = (uint64_t)x;
		if ((v = ev_json_get(text, t, args, "device")) >= 0 && tok_i64(text, t, v, &x) == 0)
			s->files[s->cur].device = x;
		if ((v = ev_json_get(text, t, args, "block")) >= 0 && t[v].type == EV_JT_ARRAY && t[v].size > 0 &&
		    tok_i64(text, t, v + 1, &x) == 0 && x > 0 && x < 65536)
			r->nthreads = (uint16_t)x;
		if ((v = ev_json_get(text, t, args, "grid")) >= 0 && t[v].type == EV_JT_ARRAY && t[v].size > 0) {
			uint64_t g = 1;
			for (int k = 0; k < t[v].size && k < 3; k++)
				if (tok_i64(text, t, v + 1 + k, &x) == 0 && x > 0)
					g *= (uint64_t)x;
			r->aux = g > UINT32_MAX ? UINT32_MAX : (uint32_t)g;
		}
	}
	if (r->type != EV_KERNEL)
		return add(s, r);
	s->files[s->cur].kernels++;
	int rc = add(s, r);
	if (rc == EV_OK && r->op == EV_KC_COMM && args >= 0) {
		struct ev_rec k = *r;
		rc = nccl_record(s, text, t, args, &k, name);
	}
	(void)ev;
	return rc;
}

/* B/E pairs: each (file, pid, tid) has a stack of open ranges, linked
 * through `below`; closed slots go on a free list, so memory is bounded by
 * the open ranges at any moment, not by the number of events. */
static int open_range(struct state *s, uint64_t key, const struct ev_rec *r)
{
	struct open_range *o;
	uint64_t idx;
	if (s->free_slot >= 0) {
		idx = (uint64_t)s->free_slot;
		o = (struct open_range *)s->stack_store.data + idx;
		s->free_slot = o->below;
	} else {
		o = ev_vec_push(&s->stack_store);
		if (!o)
			return EV_ERR_NOMEM;
		idx = s->stack_store.len - 1;
	}
	uint64_t *top = ev_map_get(&s->stacks, key);
	o->key = key;
	o->ts = r->ts;
	o->name = r->name;
	o->stream = r->stream;
	o->below = top && *top ? (int64_t)(*top - 1) : -1;
	return ev_map_put(&s->stacks, key, idx + 1);
}

static int close_range(struct state *s, uint64_t key, struct ev_rec *r)
{
	uint64_t *top = ev_map_get(&s->stacks, key);
	if (!top || *top == 0)
		return 1; /* an E without its B: counted as skipped */
	uint64_t idx = *top - 1;
	struct open_range *o = (struct open_range *)s->stack_store.data + idx;
	r->type = EV_RANGE;
	r->op = EV_RG_OTHER;
	r->name = o->name;
	r->dur = r->ts >= o->ts ? (uint64_t)(r->ts - o->ts) : 0;
	r->ts = o->ts;
	r->stream = o->stream;
	*top = o->below >= 0 ? (uint64_t)o->below + 1 : 0;
	o->below = s->free_slot;
	s->free_slot = (int64_t)idx;
	return add(s, r) ? -1 : 0;
}

static int one_event(struct state *s, const char *text, size_t len, uint64_t offset, char *err, size_t errn)
{
	struct file_info *fi = &s->files[s->cur];
	int n = ev_json_tokenize(text, len, s->toks, s->o->max_tokens);
	if (n == EV_ERR_LIMIT) {
		snprintf(err, errn, "byte %llu: event has more than %d JSON tokens (--max-tokens)", (unsigned long long)offset,
		         s->o->max_tokens);
		return EV_ERR_LIMIT;
	}
	if (n < 0) {
		snprintf(err, errn, "byte %llu: invalid JSON in an event", (unsigned long long)offset);
		return EV_ERR_FORMAT;
	}
	const struct ev_json_tok *t = s->toks;
	if (t[0].type != EV_JT_OBJECT) {
		fi->skipped++;
		return EV_OK;
	}
	fi->events++;
	int ph = ev_json_get(text, t, 0, "ph"), cat = ev_json_get(text, t, 0, "cat");
	int nm = ev_json_get(text, t, 0, "name"), ts = ev_json_get(text, t, 0, "ts");
	int dur = ev_json_get(text, t, 0, "dur"), args = ev_json_get(text, t, 0, "args");
	int pid = ev_json_get(text, t, 0, "pid"), tid = ev_json_get(text, t, 0, "tid");
	char phc = ph >= 0 && t[ph].end > t[ph].start ? text[t[ph].start] : '?';
	char catbuf[64] = "";
	if (cat >= 0 && t[cat].type == EV_JT_STRING && t[cat].end - t[cat].start < (int)sizeof catbuf)
		ev_json_str(text, t, cat, catbuf);
	if (args >= 0 && t[args].type != EV_JT_OBJECT)
		args = -1;
	if (phc == 'M' || phc == 's' || phc == 'f' || phc == 't' || phc == 'P' || phc == 'N' || phc == 'O' || phc == 'D') {
		if (phc == 'M' && args >= 0 && nm >= 0 && ev_json_eq(text, t, nm, "process_name")) {
			/* Nothing to keep yet; process names are the tools' own labels. */
		}
		return EV_OK;
	}
	struct ev_rec r;
	ev_rec_init(&r);
	if (ts < 0 || tok_us_to_ns(text, t, ts, &r.ts) != 0) {
		snprintf(err, errn, "byte %llu: event without a numeric ts", (unsigned long long)offset);
		return EV_ERR_FORMAT;
	}
	if (r.ts > 1000000000000000000LL)
		s->absolute_ts = 1;
	if (dur >= 0) {
		int64_t d;
		if (tok_us_to_ns(text, t, dur, &d) != 0) {
			snprintf(err, errn, "byte %llu: dur is not a number", (unsigned long long)offset);
			return EV_ERR_FORMAT;
		}
		r.dur = d > 0 ? (uint64_t)d : 0;
	}
	if (nm >= 0 && (t[nm].type == EV_JT_STRING || t[nm].type == EV_JT_PRIMITIVE)) {
		int rc = intern_tok(s, text, t, nm, &r.name);
		if (rc) {
			snprintf(err, errn, "byte %llu: %s in the event name", (unsigned long long)offset,
			         rc == EV_ERR_COLLISION ? "string id collision" : "bad escape");
			return EV_ERR_FORMAT;
		}
	}
	uint32_t tidv = tok_id32(text, t, tid), pidv = tok_id32(text, t, pid);
	r.stream = tidv;
	int64_t x;
	if (pid >= 0 && tok_i64(text, t, pid, &x) == 0 && fi->pid < 0 && strcmp(catbuf, "cpu_op") == 0)
		fi->pid = x;
	if (phc == 'X') {
		if (!strcmp(catbuf, "kernel") || !strcmp(catbuf, "gpu_memcpy") || !strcmp(catbuf, "gpu_memset"))
			return kernel_event(s, text, t, 0, args, &r, catbuf);
		if (!strcmp(catbuf, "cuda_runtime") || !strcmp(catbuf, "cuda_driver")) {
			if (s->o->no_api)
				return EV_OK;
			r.type = EV_API;
			r.op = !strcmp(catbuf, "cuda_driver") ? EV_API_DRIVER : EV_API_RUNTIME;
			int64_t corr = -1, ext = -1;
			int v;
			if (args >= 0 && (v = ev_json_get(text, t, args, "correlation")) >= 0 && tok_i64(text, t, v, &corr) == 0)
				r.id = (uint32_t)corr;
			if (args >= 0 && (v = ev_json_get(text, t, args, "External id")) >= 0)
				tok_i64(text, t, v, &ext);
			if (corr >= 0 && ev_map_put(&s->corr_ext, key2((uint64_t)s->cur, (uint64_t)corr), (uint64_t)(ext + 2)))
				return EV_ERR_NOMEM;
			return add(s, &r);
		}
		r.type = EV_RANGE;
		if (!strcmp(catbuf, "cpu_op")) {
			r.op = EV_RG_CPU_OP;
			int v = args >= 0 ? ev_json_get(text, t, args, "External id") : -1;
			int rc = op_signature(s, text, t, 0, args, &r.sig);
			if (rc)
				return rc;
			if (v >= 0 && tok_i64(text, t, v, &x) == 0) {
				r.id = (uint32_t)x;
				if (ev_map_put(&s->op_sig, key2((uint64_t)s->cur, (uint64_t)x), r.sig))
					return EV_ERR_NOMEM;
			}
		} else if (!strcmp(catbuf, "user_annotation")) {
			r.op = strncmp(ev_strtab_get(s->st, r.name, NULL), "ProfilerStep", 12) == 0 ? EV_RG_STEP : EV_RG_USER;
		} else if (!strcmp(catbuf, "gpu_user_annotation")) {
			r.op = EV_RG_GPU_USER;
		} else if (!strcmp(catbuf, "python_function")) {
			if (!s->o->python)
				return EV_OK;
			r.op = EV_RG_PYTHON;
		} else {
			r.op = EV_RG_OTHER;
		}
		return add(s, &r);
	}
	if (phc == 'i' || phc == 'I' || phc == 'R' || phc == 'n') {
		r.type = EV_MARK;
		r.op = EV_RG_OTHER;
		r.dur = 0;
		return add(s, &r);
	}
	if (phc == 'B' || phc == 'E') {
		uint64_t key = key2(((uint64_t)s->cur << 32) | pidv, tidv);
		if (phc == 'B')
			return open_range(s, key, &r);
		int rc = close_range(s, key, &r);
		if (rc > 0)
			fi->skipped++;
		return rc < 0 ? EV_ERR_NOMEM : EV_OK;
	}
	if (phc == 'C' && args >= 0) {
		/* One counter sample per numeric argument: name.key = value. */
		int k = args + 1;
		const char *base = ev_strtab_get(s->st, r.name, NULL);
		for (int m = 0; m < t[args].size; m++) {
			int64_t val;
			if (tok_i64(text, t, k + 1, &val) == 0 && val >= 0) {
				char kb[256];
				if (t[k].end - t[k].start < 200 && ev_json_str(text, t, k, kb) != (size_t)-1) {
					char nb[512];
					int nn = snprintf(nb, sizeof nb, "%s.%s", base ? base : "", kb);
					struct ev_rec c = r;
					c.type = EV_COUNTER;
					c.op = 0;
					c.bytes = (uint64_t)val;
					c.dur = 0;
					if (nn > 0 && (size_t)nn < sizeof nb && ev_strtab_intern(s->st, nb, (size_t)nn, &c.name) == EV_OK) {
						int rc = add(s, &c);
						if (rc)
							return rc;
					}
				}
			}
			k = ev_json_skip(t, k + 1);
		}
		return EV_OK;
	}
	fi->skipped++;
	return EV_OK;
}

/* distributedInfo: rank, world size, NCCL version. */
static int top_member(struct state *s, const struct ev_json_item *it)
{
	struct file_info *fi = &s->files[s->cur];
	if (it->key_len == 19 && memcmp(it->key, "baseTimeNanoseconds", 19) == 0) {
		int64_t v;
		char buf[32];
		if (it->len < sizeof buf) {
			memcpy(buf, it->text, it->len);
			buf[it->len] = '\0';
			if (ev_parse_i64(buf, &v) == 0) {
				fi->base_ns = v;
				fi->have_base = 1;
			}
		}
		return EV_OK;
	}
	if (it->key_len == 15 && memcmp(it->key, "distributedInfo", 15) == 0) {
		int n = ev_json_tokenize(it->text, it->len, s->toks, s->o->max_tokens);
		if (n <= 0 || s->toks[0].type != EV_JT_OBJECT)
			return EV_OK;
		int v;
		int64_t x;
		if ((v = ev_json_get(it->text, s->toks, 0, "rank")) >= 0 && tok_i64(it->text, s->toks, v, &x) == 0)
			fi->rank = x;
		if ((v = ev_json_get(it->text, s->toks, 0, "world_size")) >= 0 && tok_i64(it->text, s->toks, v, &x) == 0)
			fi->world = x;
		char ver[64];
		if ((v = ev_json_get(it->text, s->toks, 0, "nccl_version")) >= 0 && s->toks[v].type == EV_JT_STRING &&
		    s->toks[v].end - s->toks[v].start < (int)sizeof ver && ev_json_str(it->text, s->toks, v, ver) != (size_t)-1) {
			char line[128];
			snprintf(line, sizeof line, "#meta nccl_version=%s", ver);
			char *copy = strdup(line);
			char **slot = copy ? ev_vec_push(&s->comm_lines) : NULL;
			if (!slot) {
				free(copy);
				return EV_ERR_NOMEM;
			}
			*slot = copy;
		}
	}
	return EV_OK;
}

static int rank_from_path(const char *path, int64_t *rank)
{
	regex_t re;
	regmatch_t m[2];
	if (regcomp(&re, "(rank|rank_|rank-|worker)([0-9]+)", REG_EXTENDED | REG_ICASE))
		return -1;
	int rc = -1;
	const char *p = path;
	/* The last match in the path counts: directories come first. */
	regmatch_t mm[3];
	while (regexec(&re, p, 3, mm, 0) == 0) {
		char buf[24];
		int len = (int)(mm[2].rm_eo - mm[2].rm_so);
		if (len < (int)sizeof buf) {
			memcpy(buf, p + mm[2].rm_so, (size_t)len);
			buf[len] = '\0';
			if (ev_parse_i64(buf, rank) == 0)
				rc = 0;
		}
		p += mm[0].rm_eo;
	}
	(void)m;
	regfree(&re);
	return rc;
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

/* NCCL's pattern (name or enum number in 2.18) -> collective and algorithm. */
static void flow_pattern(const char *p, struct ev_rec *r)
{
	static const struct { const char *name; unsigned op, algo; } map[] = {
		{ "Ring", EV_OP_UNKNOWN, EV_ALGO_RING }, { "RingTwice", EV_OP_ALLREDUCE, EV_ALGO_RING },
		{ "PipelineFrom", EV_OP_BROADCAST, EV_ALGO_RING }, { "PipelineTo", EV_OP_REDUCE, EV_ALGO_RING },
		{ "TreeUp", EV_OP_REDUCE, EV_ALGO_TREE }, { "TreeDown", EV_OP_BROADCAST, EV_ALGO_TREE },
		{ "TreeUpDown", EV_OP_ALLREDUCE, EV_ALGO_TREE }, { "CollnetChain", EV_OP_ALLREDUCE, EV_ALGO_COLLNET_CHAIN },
		{ "CollnetDirect", EV_OP_ALLREDUCE, EV_ALGO_COLLNET_DIRECT }, { "Nvls", EV_OP_ALLREDUCE, EV_ALGO_NVLS },
		{ "NvlsTree", EV_OP_ALLREDUCE, EV_ALGO_NVLS_TREE }, { "Send", EV_OP_SEND, EV_ALGO_UNKNOWN },
		{ "Recv", EV_OP_RECV, EV_ALGO_UNKNOWN },
	};
	char n[32];
	size_t k = 0;
	/* "ncclPatternRingTwice", "RING_TWICE", "RingTwice" all compare equal. */
	if (strncmp(p, "ncclPattern", 11) == 0)
		p += 11;
	for (; *p && k + 1 < sizeof n; p++)
		if (*p != '_')
			n[k++] = (char)tolower((unsigned char)*p);
	n[k] = '\0';
	int64_t num;
	int isnum = ev_parse_i64(n, &num) == 0;
	for (size_t i = 0; i < sizeof map / sizeof map[0]; i++) {
		char m[32];
		size_t j = 0;
		for (const char *q = map[i].name; *q; q++)
			m[j++] = (char)tolower((unsigned char)*q);
		m[j] = '\0';
		if ((isnum && num == (int64_t)i) || (!isnum && strcmp(n, m) == 0)) {
			r->op = (uint8_t)map[i].op;
			r->algo = (uint8_t)map[i].algo;
			return;
		}
	}
}

static unsigned flow_proto(const char *p)
{
	/* NCCL numbers them LL 0, LL128 1, SIMPLE 2. */
	if (!strcasecmp(p, "LL") || !strcmp(p, "0"))
		return EV_PROTO_LL;
	if (!strcasecmp(p, "LL128") || !strcmp(p, "1"))
		return EV_PROTO_LL128;
	if (!strcasecmp(p, "SIMPLE") || !strcmp(p, "2"))
		return EV_PROTO_SIMPLE;
	return EV_PROTO_UNKNOWN;
}

static unsigned flow_stage(const char *st)
{
	char l[64];
	size_t k = 0;
	for (; *st && k + 1 < sizeof l; st++)
		l[k++] = (char)tolower((unsigned char)*st);
	l[k] = '\0';
	if (strstr(l, "scatter") || strstr(l, "reduce") || !strcmp(l, "rs"))
		return EV_F_PHASE_RS;
	if (strstr(l, "gather") || !strcmp(l, "ag"))
		return EV_F_PHASE_AG;
	if (strstr(l, "up"))
		return EV_F_TREE_UP;
	if (strstr(l, "down"))
		return EV_F_TREE_DOWN;
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
	struct file_info *fi = &s->files[i];
	ev_input *in;
	int rc = ev_input_open(&in, fi->path);
	if (rc)
		return ev_cli_file_error(&o->cli, fi->path, rc);
	s->cur = i;
	const char *line;
	size_t len;
	int status = 0;
	while ((rc = ev_input_line(in, &line, &len)) == EV_REC || rc == EV_ERR_TRUNCATED) {
		uint64_t lineno = ev_input_lineno(in);
		if (rc == EV_ERR_TRUNCATED) {
			status = ev_cli_error(&o->cli, "%s: line %llu: truncated (no newline at the end)", fi->path,
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
			status = ev_cli_error(&o->cli, "%s: line %llu: not a JSON object", fi->path, (unsigned long long)lineno);
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
			                      fi->path, (unsigned long long)lineno);
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
			flow_pattern(buf, &r);
		if (tok_text(text, s->toks, ev_json_get(text, s->toks, 0, "protocol"), buf, sizeof buf) == 0)
			r.proto = (uint8_t)flow_proto(buf);
		if (tok_text(text, s->toks, ev_json_get(text, s->toks, 0, "stage"), buf, sizeof buf) == 0)
			r.flags = (uint16_t)flow_stage(buf);
		fi->events++;
		if ((rc = add(s, &r)) != EV_OK) {
			status = ev_cli_error(&o->cli, "%s: %s", fi->path, ev_strerror(rc));
			break;
		}
	}
	if (!status && rc < 0 && rc != EV_ERR_TRUNCATED)
		status = ev_cli_file_error(&o->cli, fi->path, rc);
	if (!status && fi->events == 0)
		status = ev_cli_error(&o->cli, "%s: no flow steps (proxy_flow files hold proxy ops: give flow_steps_rank<r>.jsonl)",
		                      fi->path);
	ev_input_close(in);
	return status;
}

static int read_file(struct state *s, int i)
{
	struct opts *o = s->o;
	struct file_info *fi = &s->files[i];
	ev_input *in;
	ev_json *j;
	int rc = ev_input_open(&in, fi->path);
	if (rc)
		return ev_cli_file_error(&o->cli, fi->path, rc);
	if ((rc = ev_json_open(&j, in, "traceEvents", (size_t)o->max_object)) != EV_OK) {
		ev_input_close(in);
		return ev_cli_error(&o->cli, "out of memory");
	}
	s->cur = i;
	struct ev_json_item it;
	char err[256];
	int status = 0;
	uint64_t n = 0;
	while ((rc = ev_json_next(j, &it)) > 0) {
		if (it.kind == EV_JSON_TOP) {
			if ((rc = top_member(s, &it)) != EV_OK) {
				status = ev_cli_error(&o->cli, "out of memory");
				break;
			}
			continue;
		}
		rc = one_event(s, it.text, it.len, it.offset, err, sizeof err);
		if (rc == EV_ERR_FORMAT || rc == EV_ERR_LIMIT) {
			status = ev_cli_error(&o->cli, "%s: %s", fi->path, err);
			break;
		}
		if (rc == EV_ERR_IO) {
			status = ev_cli_error(&o->cli, "%s: cannot write a sort run: %s", ev_sorter_errpath(s->sorter), "I/O error");
			break;
		}
		if (rc) {
			status = ev_cli_error(&o->cli, "%s: %s", fi->path, ev_strerror(rc));
			break;
		}
		if ((++n & 0x3FFF) == 0)
			ev_cli_progress(&o->cli, n, ev_input_offset(in));
	}
	if (!status && rc < 0)
		status = ev_cli_error(&o->cli, "%s: %s", fi->path, ev_json_errdetail(j));
	if (!status && fi->events == 0 && fi->skipped == 0)
		status = ev_cli_error(&o->cli, "%s: no trace events", fi->path);
	ev_json_close(j);
	ev_input_close(in);
	return status;
}

static int fix_record(void *ctx, struct ev_rec *r);

/* --clip: the sorter's records go through the clipper to the writer. */
static int fix_and_clip(void *ctx, struct ev_rec *r)
{
	struct state *s = ctx;
	int rc = fix_record(ctx, r);
	return rc ? rc : ev_clipper_add(s->clipper, r);
}

/* Applied to each record in time order, just before it is written. */
static int fix_record(void *ctx, struct ev_rec *r)
{
	struct state *s = ctx;
	const struct file_info *fi = &s->files[r->src];
	uint64_t file = r->src;
	r->rank = (uint32_t)fi->rank;
	if (fi->have_base)
		r->ts += fi->base_ns;
	if (r->type == EV_KERNEL || r->type == EV_MEMCPY || r->type == EV_MEMSET) {
		/* The launching op: kernel -> runtime call (correlation) -> its
		 * External id -> the cpu_op; else the kernel's own External id. */
		uint64_t *ext = ev_map_get(&s->corr_ext, key2(file, r->id));
		uint64_t *sig = NULL;
		uint32_t op = 0;
		if (ext && *ext >= 2 && (sig = ev_map_get(&s->op_sig, key2(file, *ext - 2))) != NULL)
			op = (uint32_t)(*ext - 2);
		if (!sig && r->step && (sig = ev_map_get(&s->op_sig, key2(file, r->step))) != NULL)
			op = r->step;
		if (sig)
			r->sig = *sig;
		if (!ext) {
			r->flags |= EV_F_UNLINKED;
			s->files[r->src].unlinked++;
		}
		r->step = op; /* the launching op instance (its External id) */
		if (r->type == EV_KERNEL) {
			/* Same-stream overruns (a kernel ending after the next starts). */
			uint64_t key = key2(((uint64_t)r->rank << 32) | 1, r->stream);
			uint64_t *last = ev_map_get(&s->overrun, key);
			if (last && (int64_t)*last > r->ts)
				s->overruns++;
			if (ev_map_put(&s->overrun, key, (uint64_t)ev_rec_end(r)))
				return EV_ERR_NOMEM;
		}
	} else if (r->type == EV_COLL || r->type == EV_P2P) {
		uint64_t key = key2(((uint64_t)r->rank << 1) | (r->type == EV_P2P), r->comm);
		uint64_t *next = ev_map_get(&s->seq, key);
		r->seq = next ? (uint32_t)*next : 0;
		if (ev_map_put(&s->seq, key, (uint64_t)r->seq + 1))
			return EV_ERR_NOMEM;
		uint64_t *ext = ev_map_get(&s->corr_ext, key2(file, r->id));
		uint64_t *sig = ext && *ext >= 2 ? ev_map_get(&s->op_sig, key2(file, *ext - 2)) : NULL;
		if (sig)
			r->sig = *sig;
	}
	return EV_OK;
}

static int run(struct opts *o)
{
	struct state s;
	int status = 0, rc;
	ev_writer *w = NULL;
	memset(&s, 0, sizeof s);
	s.o = o;
	s.st = ev_strtab_new();
	s.files = calloc((size_t)o->ninputs, sizeof *s.files);
	s.toks = malloc((size_t)o->max_tokens * sizeof *s.toks);
	ev_map_init(&s.op_sig);
	ev_map_init(&s.corr_ext);
	ev_map_init(&s.seq);
	ev_map_init(&s.overrun);
	ev_map_init(&s.stacks);
	ev_map_init(&s.comm_seen);
	ev_vec_init(&s.stack_store, sizeof(struct open_range));
	ev_vec_init(&s.comm_lines, sizeof(char *));
	s.nfiles = o->ninputs;
	s.free_slot = -1;
	if (!s.st || !s.files || !s.toks || ev_sorter_open(&s.sorter, o->sort_bytes, NULL) != EV_OK) {
		status = ev_cli_error(&o->cli, "out of memory");
		goto done;
	}
	for (int i = 0; i < o->ninputs && !status; i++) {
		struct file_info *fi = &s.files[i];
		fi->path = o->inputs[i];
		fi->rank = -1;
		fi->pid = -1;
		fi->device = -1;
		status = is_flow_jsonl(s.files[i].path) ? read_flow_jsonl(&s, i) : read_file(&s, i);
		if (status)
			break;
		if (fi->rank < 0 && rank_from_path(fi->path, &fi->rank) != 0) {
			if (o->rank >= 0 && o->ninputs == 1) {
				fi->rank = o->rank;
			} else {
				fi->rank = i;
				ev_cli_warn(&o->cli, "%s: no rank in distributedInfo or the path; using %d (set --rank)", fi->path, i);
			}
		}
		if (fi->have_base)
			s.absolute_ts = 1;
	}
	if (status)
		goto done;
	for (int i = 0; i < o->ninputs; i++)
		for (int k = 0; k < i; k++)
			if (s.files[i].rank == s.files[k].rank) {
				status = ev_cli_error(&o->cli, "%s and %s are both rank %lld; convert them separately or give ranks in the paths",
				                      s.files[k].path, s.files[i].path, (long long)s.files[i].rank);
				goto done;
			}
	if (ev_cli_check_binary_out(&o->cli)) {
		status = 1;
		goto done;
	}
	if ((rc = ev_writer_open(&w, o->cli.output, s.st)) != EV_OK) {
		status = ev_cli_file_error(&o->cli, o->cli.output, rc);
		goto done;
	}
	rc = ev_writer_header(w, "origin", s.absolute_ts ? "unix" : "trace");
	if (!rc)
		rc = ev_writer_header(w, "producer", "kineto2ev");
	for (int i = 0; i < o->ninputs && !rc; i++) {
		struct file_info *fi = &s.files[i];
		char esc[8192];
		ev_text_escape(fi->path, strlen(fi->path), esc, sizeof esc);
		for (char *p = esc; *p; p++)
			if (*p == ' ')
				*p = '_';
		if (fi->have_base)
			rc = ev_write_textf(w, "#src %d file=%s rank=%lld base_ns=%lld", i, esc, (long long)fi->rank,
			                    (long long)fi->base_ns);
		else
			rc = ev_write_textf(w, "#src %d file=%s rank=%lld", i, esc, (long long)fi->rank);
		if (!rc) {
			char extra[128] = "";
			size_t n = 0;
			if (fi->pid >= 0)
				n += (size_t)snprintf(extra + n, sizeof extra - n, " pid=%lld", (long long)fi->pid);
			if (fi->device >= 0)
				n += (size_t)snprintf(extra + n, sizeof extra - n, " device=%lld", (long long)fi->device);
			if (fi->world > 0)
				snprintf(extra + n, sizeof extra - n, " world_size=%lld", (long long)fi->world);
			rc = ev_write_textf(w, "#rank %lld%s", (long long)fi->rank, extra);
		}
	}
	for (size_t k = 0; k < s.comm_lines.len && !rc; k++) {
		const char *line = ((char **)s.comm_lines.data)[k];
		rc = ev_write_text(w, line, strlen(line));
	}
	if (!rc && o->clip) {
		rc = ev_clipper_open(&s.clipper, w);
		if (!rc)
			rc = ev_sorter_finish(s.sorter, NULL, fix_and_clip, &s);
		if (!rc)
			rc = ev_clipper_finish(s.clipper);
	} else if (!rc) {
		rc = ev_sorter_finish(s.sorter, w, fix_record, &s);
	}
	if (rc) {
		status = rc == EV_ERR_IO && *ev_sorter_errpath(s.sorter) && !ev_output_flush(ev_writer_output(w))
		                 ? ev_cli_error(&o->cli, "%s: cannot read or write a sort run", ev_sorter_errpath(s.sorter))
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
	if (o->verbose && !o->cli.quiet) {
		for (int i = 0; i < o->ninputs; i++) {
			const struct file_info *fi = &s.files[i];
			fprintf(stderr, "kineto2ev: %s: rank %lld: %llu events, %llu kernels (%llu without a launching call), %llu collectives, %llu skipped\n",
			        fi->path, (long long)fi->rank, (unsigned long long)fi->events, (unsigned long long)fi->kernels,
			        (unsigned long long)fi->unlinked, (unsigned long long)fi->colls, (unsigned long long)fi->skipped);
		}
	}
	if (s.overruns && o->clip)
		ev_cli_warn(&o->cli, "%llu kernels overran the next kernel on their stream: clipped to its start",
		            (unsigned long long)ev_clipper_clipped(s.clipper));
	else if (s.overruns)
		ev_cli_warn(&o->cli, "%llu kernels start before the previous kernel on their stream ends (overruns; --clip cuts them)",
		            (unsigned long long)s.overruns);
done:
	ev_clipper_free(s.clipper);
	ev_writer_abort(w);
	ev_sorter_close(s.sorter);
	for (size_t k = 0; k < s.comm_lines.len; k++)
		free(((char **)s.comm_lines.data)[k]);
	ev_vec_free(&s.comm_lines);
	ev_vec_free(&s.stack_store);
	ev_map_free(&s.op_sig);
	ev_map_free(&s.corr_ext);
	ev_map_free(&s.seq);
	ev_map_free(&s.overrun);
	ev_map_free(&s.stacks);
	ev_map_free(&s.comm_seen);
	free(s.toks);
	free(s.scratch);
	free(s.files);
	ev_strtab_free(s.st);
	return status;
}

int main(int argc, char **argv)
{
	static const struct option longopts[] = {
		EV_CLI_COMMON_LONG,
		{ "rules", required_argument, NULL, 1 },
		{ "python", no_argument, NULL, 2 },
		{ "no-api", no_argument, NULL, 3 },
		{ "rank", required_argument, NULL, 4 },
		{ "buffer-size", required_argument, NULL, 'S' },
		{ "max-object", required_argument, NULL, 5 },
		{ "max-tokens", required_argument, NULL, 6 },
		{ "verbose", no_argument, NULL, 'v' },
		{ "clip", no_argument, NULL, 7 },
		{ NULL, 0, NULL, 0 },
	};
	struct opts o;
	int c;
	memset(&o, 0, sizeof o);
	ev_cli_init(&o.cli, "kineto2ev");
	o.rank = -1;
	o.sort_bytes = 256u << 20;
	o.max_object = 16u << 20;
	o.max_tokens = 1000000;
	while ((c = getopt_long(argc, argv, EV_CLI_COMMON_SHORT "S:v", longopts, NULL)) != -1) {
		switch (ev_cli_common(&o.cli, c, optarg)) {
		case EV_CLI_HANDLED: continue;
		case EV_CLI_WANT_HELP: usage(stdout); return ev_cli_finish(&o.cli, 0);
		case EV_CLI_DONE: return ev_cli_finish(&o.cli, 0);
		default: break;
		}
		uint64_t v;
		switch (c) {
		case 1:
			if (ev_rules_parse(optarg, &o.rules) != EV_OK)
				return ev_cli_usage_error(&o.cli, "--rules: expected tracelens, tracelens-2025 or hta, got '%s'", optarg);
			break;
		case 'v': o.verbose = 1; break;
		case 2: o.python = 1; break;
		case 3: o.no_api = 1; break;
		case 7: o.clip = 1; break;
		case 4:
			if (ev_parse_u64(optarg, &v) || v > UINT32_MAX)
				return ev_cli_usage_error(&o.cli, "--rank: not a rank: '%s'", optarg);
			o.rank = (int64_t)v;
			break;
		case 'S':
			if (ev_parse_size(optarg, &o.sort_bytes) || o.sort_bytes < (1u << 20))
				return ev_cli_usage_error(&o.cli, "--buffer-size: expected a size of at least 1M, got '%s'", optarg);
			break;
		case 5:
			if (ev_parse_size(optarg, &o.max_object) || o.max_object < 1024 || o.max_object > (1ull << 31))
				return ev_cli_usage_error(&o.cli, "--max-object: expected a size from 1K to 2G, got '%s'", optarg);
			break;
		case 6:
			if (ev_parse_u64(optarg, &v) || v < 16 || v > 100000000)
				return ev_cli_usage_error(&o.cli, "--max-tokens: expected 16 to 100000000, got '%s'", optarg);
			o.max_tokens = (int)v;
			break;
		default:
			return ev_cli_try_help(&o.cli);
		}
	}
	if (optind >= argc)
		return ev_cli_usage_error(&o.cli, "no input file");
	if (o.rank >= 0 && argc - optind != 1)
		return ev_cli_usage_error(&o.cli, "--rank applies to a single input");
	o.inputs = argv + optind;
	o.ninputs = argc - optind;
	if (o.ninputs > 65535)
		return ev_cli_usage_error(&o.cli, "at most 65535 inputs");
	ev_cli_cleanup_on_signal(NULL);
	return ev_cli_finish(&o.cli, run(&o));
}
