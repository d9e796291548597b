/* SPDX-License-Identifier: MIT */
/*
 * tb.c - an ev stream as the PyTorch profiler's (Kineto's) trace files, one
 * per rank, in the layout TensorBoard's profiler plugin (torch_tb_profiler)
 * loads.  The rules the plugin's loader holds a file to, which decide what
 * is written here (tests/tb-layout.py checks them on the output):
 *   - every X event has a string cat (trace.py lowers it) and every event a
 *     name (data.py scans names for 'Record Window End');
 *   - the category picks the event's role (trace.py EventTypeMap): kernel,
 *     gpu_memcpy, gpu_memset, cuda_runtime, cpu_op, user_annotation,
 *     gpu_user_annotation, python_function; others are ignored;
 *   - a GPU event's args.device is its GPU id, which indexes
 *     deviceProperties and must be below 64 (gpu_metrics_parser.py), and
 *     equals its pid (else the parser warns), so pid = device;
 *   - an op's tid is an integer (event_parser.py int(tid));
 *   - nccl:<collective> ops with distinct "external id"s are the
 *     communication the distributed view compares across workers.
 * One rank's events go to its own output, each file's JSON text gathered in
 * a buffer of its own; memory grows with ranks and streams only.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "perfetto_int.h"

#define TB_FLUSH_AT (1u << 16) /* a rank's text written once this much gathered */
#define TB_MAX_DEVICE 63       /* the plugin's MAX_GPU_PER_NODE - 1 */
#define TB_CPU_PID 1000000     /* a rank's CPU pid when #rank has no pid= */
#define TB_CHANNEL_TID 0x40000000
#define TB_LANE_TID 0x50000000

struct tb_rank {
	uint32_t rank, device;
	int64_t cpu_pid;
	ev_output *out;
	struct pf_buf b;
	int first_event, cpu_named, have_t;
	int64_t t0, t1;    /* first start and last end of its events */
	uint64_t next_ext; /* external ids of its collective spans */
};

struct ev_tb {
	struct ev_perfetto_opts o;
	const ev_strtab *st;
	const ev_meta *meta;
	ev_tb_open_fn open;
	void *ctx;
	struct ev_vec ranks; /* struct tb_rank */
	struct ev_map rank_ix, thread_ix;
	int64_t base;
	int have_base;
	struct ev_order order;
	struct ev_rec tsx;
	int have_tsx;
	struct pf_buf name;
	uint64_t records, events, skipped, dev_guessed;
	struct ev_perfetto_error err;
};

static int tb_fail(ev_tb *t, int status, const char *msg)
{
	t->err.status = status;
	t->err.in_output = 0;
	snprintf(t->err.msg, sizeof t->err.msg, "%s", msg);
	return status;
}

void ev_tb_worker(const ev_meta *meta, uint32_t rank, char *buf, size_t n)
{
	const struct ev_rank_info *ri = ev_meta_rank(meta, rank);
	const char *host = ri ? ev_kv_get(ri->kv, ri->nkv, "host") : NULL;
	if (!host && ri)
		host = ev_kv_get(ri->kv, ri->nkv, "node");
	if (!host || !*host) {
		snprintf(buf, n, "worker_%u", rank);
		return;
	}
	/* The plugin splits "<node>_<number>" for its distributed view; dots
	 * would read as a span number, so only letters, digits and '-' stay. */
	size_t i = 0;
	for (; host[i] && i + 1 < n && i < 200; i++) {
		char c = host[i];
		int ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-';
		buf[i] = ok ? c : '_';
	}
	snprintf(buf + i, n - i, "_%u", rank);
}

/* The GPU index of a #rank device= value: a number, or the digits it ends
 * with (flex2ev's "aiu3"); -1 when there are none or it is above 63. */
static int device_index(const char *dev)
{
	if (!dev)
		return -1;
	size_t n = strlen(dev), i = n;
	while (i > 0 && dev[i - 1] >= '0' && dev[i - 1] <= '9')
		i--;
	if (i == n || n - i > 2)
		return -1;
	int v = atoi(dev + i);
	return v <= TB_MAX_DEVICE ? v : -1;
}

static int64_t rel(const ev_tb *t, int64_t ts)
{
	return t->o.absolute ? ts : (int64_t)((uint64_t)ts - (uint64_t)t->base);
}

/* Start an event object in rank k's text. */
static void tb_event(ev_tb *t, struct tb_rank *k, const char *ph, int64_t pid, int64_t tid)
{
	struct pf_buf *b = &k->b;
	pf_puts(b, k->first_event ? "\n{\"ph\":\"" : ",\n{\"ph\":\"");
	k->first_event = 0;
	pf_puts(b, ph);
	pf_puts(b, "\",\"pid\":");
	pf_i64(b, pid);
	pf_puts(b, ",\"tid\":");
	pf_i64(b, tid);
	t->events++;
}

static void tb_meta(ev_tb *t, struct tb_rank *k, const char *what, int64_t pid, int64_t tid, const char *name,
                    int64_t sort)
{
	struct pf_buf *b = &k->b;
	tb_event(t, k, "M", pid, tid);
	pf_kv_str(b, "name", what);
	pf_puts(b, ",\"ts\":0.000,\"args\":{");
	if (name) {
		pf_puts(b, "\"name\":");
		pf_jstr(b, name, strlen(name));
	} else {
		pf_puts(b, "\"sort_index\":");
		pf_i64(b, sort);
	}
	pf_puts(b, "}}");
}

static int tb_write(struct tb_rank *k, int force)
{
	if (k->b.oom)
		return EV_ERR_NOMEM;
	if (!force && k->b.len < TB_FLUSH_AT)
		return EV_OK;
	int rc = ev_output_write(k->out, k->b.p, k->b.len);
	k->b.len = 0;
	return rc;
}

/* Rank r's state; its file opened and begun on first use. */
static struct tb_rank *get_rank(ev_tb *t, uint32_t r, int *rc)
{
	uint64_t *ix = ev_map_get(&t->rank_ix, (uint64_t)r + 1);
	if (ix)
		return (struct tb_rank *)t->ranks.data + (*ix - 1);
	struct tb_rank *k = ev_vec_push(&t->ranks);
	if (!k || ev_map_put(&t->rank_ix, (uint64_t)r + 1, t->ranks.len) != EV_OK) {
		*rc = EV_ERR_NOMEM;
		return NULL;
	}
	k->rank = r;
	k->first_event = 1;
	const struct ev_rank_info *ri = ev_meta_rank(t->meta, r);
	int d = device_index(ri ? ev_kv_get(ri->kv, ri->nkv, "device") : NULL);
	if (d < 0) {
		t->dev_guessed++;
		d = r <= TB_MAX_DEVICE ? (int)r : 0;
	}
	k->device = (uint32_t)d;
	const char *pid = ri ? ev_kv_get(ri->kv, ri->nkv, "pid") : NULL;
	uint64_t v;
	k->cpu_pid = pid && ev_parse_u64(pid, &v) == 0 && v < (1u << 30) ? (int64_t)v : TB_CPU_PID + r;
	char worker[256];
	ev_tb_worker(t->meta, r, worker, sizeof worker);
	if ((*rc = t->open(t->ctx, r, worker, &k->out)) != EV_OK) {
		t->err.status = *rc;
		t->err.in_output = 1;
		snprintf(t->err.msg, sizeof t->err.msg, "%s", worker);
		return NULL;
	}
	pf_puts(&k->b, "{\"schemaVersion\":1,\"traceEvents\":[");
	char nm[48];
	snprintf(nm, sizeof nm, "GPU %u", k->device);
	tb_meta(t, k, "process_name", k->device, 0, nm, 0);
	tb_meta(t, k, "process_sort_index", k->device, 0, NULL, 5000000 + (int64_t)k->device);
	return k;
}

/* A thread_name event the first time (pid, tid) of rank k is used. */
static int name_thread(ev_tb *t, struct tb_rank *k, int64_t pid, int64_t tid, const char *word, uint64_t id)
{
	uint64_t key = ev_hash64(&(int64_t[3]){ (int64_t)k->rank, pid, tid }, 3 * sizeof(int64_t));
	key = key ? key : 1;
	if (ev_map_get(&t->thread_ix, key))
		return EV_OK;
	if (ev_map_put(&t->thread_ix, key, 1) != EV_OK)
		return EV_ERR_NOMEM;
	if (!k->cpu_named && pid == k->cpu_pid) {
		char nm[48];
		k->cpu_named = 1;
		snprintf(nm, sizeof nm, "rank %u CPU", k->rank);
		tb_meta(t, k, "process_name", pid, 0, nm, 0);
	}
	char nm[64];
	snprintf(nm, sizeof nm, "%s %llu", word, (unsigned long long)id);
	tb_meta(t, k, "thread_name", pid, tid, nm, 0);
	tb_meta(t, k, "thread_sort_index", pid, tid, NULL, tid);
	return EV_OK;
}

/* The Kineto category of r, or NULL for a counter (written as one). */
static const char *category(const struct ev_rec *r)
{
	switch (r->type) {
	case EV_KERNEL: return "kernel";
	case EV_MEMCPY: return "gpu_memcpy";
	case EV_MEMSET: return "gpu_memset";
	case EV_API: return "cuda_runtime";
	case EV_RANGE: case EV_MARK:
		switch (r->op) {
		case EV_RG_CPU_OP: case EV_RG_NCCL: return "cpu_op";
		case EV_RG_GPU_USER: return "gpu_user_annotation";
		case EV_RG_PYTHON: return "python_function";
		case EV_RG_USER: case EV_RG_NVTX: case EV_RG_STEP: return "user_annotation";
		default: return "other"; /* the plugin leaves unknown categories out */
		}
	default: return "gpu_user_annotation"; /* coll, p2p, send, recv, calc */
	}
}

/* Kineto's name of a collective, as record_param_comms writes it. */
static const char *nccl_name(unsigned op)
{
	static const char *const names[] = { "", "all_reduce", "all_gather", "reduce_scatter", "broadcast", "reduce",
	                                     "all_to_all", "send", "recv", "barrier", "gather", "scatter",
	                                     "all_to_allv", "sendrecv" };
	return op < sizeof names / sizeof names[0] && op ? names[op] : NULL;
}

/* r's slice (instant for a mark) or counter sample in its rank's file. */
static int tb_record(ev_tb *t, const struct ev_rec *r)
{
	int rc = EV_OK;
	struct tb_rank *k = get_rank(t, r->rank, &rc);
	if (!k)
		return rc;
	int gpu = r->type == EV_KERNEL || r->type == EV_MEMCPY || r->type == EV_MEMSET || r->type == EV_COLL ||
	          r->type == EV_P2P || r->type == EV_SEND || r->type == EV_RECV || r->type == EV_CALC ||
	          ((r->type == EV_RANGE || r->type == EV_MARK) && r->op == EV_RG_GPU_USER);
	int64_t pid = gpu ? (int64_t)k->device : k->cpu_pid;
	int64_t tid = r->stream;
	const char *word = gpu ? "stream" : "thread";
	uint64_t id = r->stream;
	if (r->type == EV_SEND || r->type == EV_RECV)
		tid = TB_CHANNEL_TID + (int64_t)r->channel, word = "NCCL channel", id = r->channel;
	else if (r->type == EV_CALC)
		tid = TB_LANE_TID + (int64_t)r->stream, word = "lane";
	if (r->type == EV_COUNTER)
		pid = k->cpu_pid, tid = 0;
	if ((rc = name_thread(t, k, pid, tid, word, id)) != EV_OK)
		return rc;
	struct pf_buf *b = &k->b;
	size_t nlen;
	const char *nm = ev_strtab_get(t->st, r->name, &nlen);
	if (r->type == EV_COUNTER) {
		tb_event(t, k, "C", pid, tid);
		pf_key(b, "name");
		pf_jstr(b, nm ? nm : "counter", nm ? nlen : 7);
		pf_puts(b, ",\"ts\":");
		pf_us(b, rel(t, r->ts));
		pf_puts(b, ",\"args\":{\"value\":");
		pf_u64(b, r->bytes);
		pf_puts(b, "}}");
		return tb_write(k, 0);
	}
	const char *opw = ev_op_name(r->type, r->op);
	int span = r->type == EV_COLL && (r->flags & EV_F_SYNTH) && nccl_name(r->op);
	struct pf_buf *n = &t->name;
	n->len = 0;
	if (span) {
		pf_puts(n, "nccl:");
		pf_puts(n, nccl_name(r->op));
	} else if (r->type == EV_COLL || r->type == EV_P2P) {
		pf_puts(n, opw ? opw : "collective");
	} else if (r->type == EV_SEND || r->type == EV_RECV) {
		pf_puts(n, r->type == EV_SEND ? "send to " : "recv from ");
		pf_i64(n, r->peer);
	} else if (nm && nlen) {
		pf_put(n, nm, nlen);
	} else {
		pf_puts(n, ev_type_name(r->type));
	}
	int mark = r->type == EV_MARK;
	uint64_t dur = r->dur > (uint64_t)INT64_MAX ? (uint64_t)INT64_MAX : r->dur;
	tb_event(t, k, mark ? "i" : "X", pid, tid);
	pf_key(b, "name");
	pf_jstr(b, n->p, n->len);
	pf_kv_str(b, "cat", category(r));
	pf_puts(b, ",\"ts\":");
	pf_us(b, rel(t, r->ts));
	if (mark) {
		pf_puts(b, ",\"s\":\"t\"");
	} else {
		pf_puts(b, ",\"dur\":");
		pf_us(b, (int64_t)dur);
	}
	pf_puts(b, ",\"args\":{\"rank\":");
	pf_u64(b, r->rank);
	if (gpu) {
		pf_kv_u64(b, "device", k->device);
		pf_kv_u64(b, "stream", r->stream);
	}
	if (r->id && (r->type == EV_KERNEL || r->type == EV_MEMCPY || r->type == EV_MEMSET || r->type == EV_API))
		pf_kv_u64(b, "correlation", r->id);
	if (span)
		pf_kv_u64(b, "external id", ++k->next_ext);
	if (r->type == EV_KERNEL)
		pf_kv_str(b, "class", opw ? opw : "other");
	if (r->bytes && r->type != EV_KERNEL)
		pf_kv_u64(b, "bytes", r->bytes);
	if (r->type == EV_MEMCPY)
		pf_kv_str(b, "kind", opw ? opw : "unknown");
	if (r->type == EV_COLL || r->type == EV_P2P || r->type == EV_SEND || r->type == EV_RECV) {
		char comm[24];
		snprintf(comm, sizeof comm, "%llu", (unsigned long long)r->comm);
		pf_kv_str(b, "comm", comm);
		pf_kv_u64(b, "seq", r->seq);
		if (r->peer >= 0)
			pf_kv_u64(b, r->type == EV_COLL ? "root" : "peer", (uint64_t)r->peer);
	}
	if (r->type == EV_KERNEL)
		pf_tsx_args(b, &t->tsx, t->have_tsx, r);
	size_t siglen;
	const char *sig = ev_strtab_get(t->st, r->sig, &siglen);
	if (sig && siglen) {
		pf_key(b, "op");
		pf_jstr(b, sig, siglen);
	}
	if (r->flags) {
		char fl[160];
		ev_flags_format(r->flags, fl, sizeof fl);
		pf_kv_str(b, "flags", fl);
	}
	pf_puts(b, "}}");
	int64_t end = r->ts + (int64_t)dur < r->ts ? INT64_MAX : r->ts + (int64_t)dur;
	if (!k->have_t) /* records come in time order */
		k->t0 = r->ts, k->t1 = end, k->have_t = 1;
	if (end > k->t1)
		k->t1 = end;
	if (n->oom)
		return EV_ERR_NOMEM;
	return tb_write(k, 0);
}

int ev_tb_new(ev_tb **tp, const struct ev_perfetto_opts *o, const ev_strtab *st, const ev_meta *meta,
              ev_tb_open_fn open, void *ctx)
{
	ev_tb *t = calloc(1, sizeof *t);
	*tp = t;
	if (!t)
		return EV_ERR_NOMEM;
	t->o = *o;
	t->st = st;
	t->meta = meta;
	t->open = open;
	t->ctx = ctx;
	ev_vec_init(&t->ranks, sizeof(struct tb_rank));
	ev_map_init(&t->rank_ix);
	ev_map_init(&t->thread_ix);
	return EV_OK;
}

int ev_tb_add(ev_tb *t, const struct ev_rec *r)
{
	if (t->err.status)
		return t->err.status;
	int64_t last = t->order.last_ts;
	if (ev_order_check(&t->order, r->ts) != EV_OK) {
		char why[128];
		ev_order_text(why, sizeof why, r->ts, last);
		return tb_fail(t, EV_ERR_ORDER, why);
	}
	if (!t->have_base) {
		t->base = r->ts;
		t->have_base = 1;
	}
	t->records++;
	if (r->type == EV_TSX) { /* the kernel right after it carries it */
		t->tsx = *r;
		t->have_tsx = 1;
		return EV_OK;
	}
	if (r->type == EV_DEP || r->type == EV_CHAN || r->type == EV_OVERLAP || r->type == EV_IDEAL) {
		t->skipped++;
		return EV_OK;
	}
	int rc = tb_record(t, r);
	t->have_tsx = 0;
	if (rc != EV_OK && !t->err.status) {
		if (rc == EV_ERR_NOMEM)
			return tb_fail(t, rc, "out of memory");
		t->err.status = rc;
		t->err.in_output = 1;
		struct tb_rank *k = (struct tb_rank *)t->ranks.data + (t->ranks.len - 1);
		ev_tb_worker(t->meta, k->rank, t->err.msg, sizeof t->err.msg);
		return rc;
	}
	if (rc == EV_OK && t->o.max_events && t->events > t->o.max_events) {
		char m[64];
		snprintf(m, sizeof m, "more than %llu trace events", (unsigned long long)t->o.max_events);
		return tb_fail(t, EV_ERR_LIMIT, m);
	}
	return rc;
}

/* Rank k's closing JSON: the profiler's span event, then the keys the
 * plugin reads besides traceEvents. */
static int tb_close_rank(ev_tb *t, struct tb_rank *k, size_t world)
{
	struct pf_buf *b = &k->b;
	/* Kineto's span of the whole profile, which the plugin takes as the
	 * range of its GPU utilization timeline. */
	if (k->have_t) {
		pf_puts(b, ",\n{\"ph\":\"X\",\"pid\":\"Spans\",\"tid\":\"PyTorch Profiler\","
		           "\"name\":\"PyTorch Profiler (0)\",\"cat\":\"Trace\",\"ts\":");
		pf_us(b, rel(t, k->t0));
		pf_puts(b, ",\"dur\":");
		pf_us(b, (int64_t)((uint64_t)k->t1 - (uint64_t)k->t0));
		pf_puts(b, ",\"args\":{\"Op count\":0}}");
		t->events++;
	}
	pf_puts(b, "\n],\n\"deviceProperties\":[");
	/* Indexed by device: the indices below the rank's own device are
	 * devices of its node that this trace knows nothing of. */
	const struct ev_rank_info *ri = ev_meta_rank(t->meta, k->rank);
	const char *gname = ri ? ev_kv_get(ri->kv, ri->nkv, "gpu") : NULL;
	const char *dev = ri ? ev_kv_get(ri->kv, ri->nkv, "device") : NULL;
	for (uint32_t i = 0; i <= k->device; i++) {
		pf_puts(b, i ? ",{\"id\":" : "{\"id\":");
		pf_u64(b, i);
		if (i == k->device && (gname || dev))
			pf_kv_str(b, "name", gname ? gname : dev);
		pf_puts(b, "}");
	}
	pf_puts(b, "],\n\"distributedInfo\":{\"rank\":");
	pf_u64(b, k->rank);
	pf_kv_u64(b, "world_size", world);
	pf_puts(b, "},\n\"displayTimeUnit\":\"ms\",\n\"traceName\":");
	char worker[256];
	ev_tb_worker(t->meta, k->rank, worker, sizeof worker);
	pf_jstr(b, worker, strlen(worker));
	if (!t->o.absolute && t->base >= 0) {
		/* ts are relative to this: readers (kineto2ev) add it back. */
		pf_puts(b, ",\n\"baseTimeNanoseconds\":");
		pf_i64(b, t->base);
	}
	/* Not "ev2perfetto": this is a Kineto trace, which kineto2ev reads
	 * back; it refuses the Perfetto view by that word. */
	pf_puts(b, ",\n\"otherData\":{\"producer\":\"evkit " EV_VERSION_STRING " (Kineto layout for TensorBoard)\"}}\n");
	int rc = tb_write(k, 1);
	return rc == EV_OK ? ev_output_flush(k->out) : rc;
}

int ev_tb_finish(ev_tb *t)
{
	if (t->err.status)
		return t->err.status;
	/* World size: past the highest rank the stream names or uses. */
	size_t world = 0;
	for (size_t i = 0; i < ev_meta_nrank(t->meta); i++)
		if (ev_meta_rank_at(t->meta, i)->rank >= world)
			world = (size_t)ev_meta_rank_at(t->meta, i)->rank + 1;
	for (size_t i = 0; i < t->ranks.len; i++)
		if (((struct tb_rank *)t->ranks.data)[i].rank >= world)
			world = (size_t)((struct tb_rank *)t->ranks.data)[i].rank + 1;
	for (size_t i = 0; i < t->ranks.len; i++) {
		struct tb_rank *k = (struct tb_rank *)t->ranks.data + i;
		int rc = tb_close_rank(t, k, world);
		if (rc != EV_OK) {
			if (rc == EV_ERR_NOMEM)
				return tb_fail(t, rc, "out of memory");
			t->err.status = rc;
			t->err.in_output = 1;
			ev_tb_worker(t->meta, k->rank, t->err.msg, sizeof t->err.msg);
			return rc;
		}
	}
	return EV_OK;
}

const struct ev_perfetto_error *ev_tb_error(const ev_tb *t)
{
	return &t->err;
}

void ev_tb_get_stats(const ev_tb *t, struct ev_tb_stats *st)
{
	memset(st, 0, sizeof *st);
	st->records = t->records;
	st->events = t->events;
	st->ranks = t->ranks.len;
	st->skipped = t->skipped;
	st->dev_guessed = t->dev_guessed;
}

void ev_tb_free(ev_tb *t)
{
	if (!t)
		return;
	for (size_t i = 0; i < t->ranks.len; i++)
		free(((struct tb_rank *)t->ranks.data)[i].b.p);
	ev_vec_free(&t->ranks);
	ev_map_free(&t->rank_ix);
	ev_map_free(&t->thread_ix);
	free(t->name.p);
	free(t);
}
