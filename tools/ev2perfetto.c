/* SPDX-License-Identifier: MIT */
/*
 * ev2perfetto - write an ev stream as one multi-rank Chrome trace-event JSON timeline with flows
 *
 * One pass over a time-ordered stream.  Every record becomes its event as
 * soon as it is read; what is kept is bounded by what is open at one moment
 * (slices nesting on a track, counter intervals, flow ends waiting for their
 * partner) and by the distinct ranks, streams and connections, never by the
 * number of events.  Process and thread metadata are written when a track
 * is first used.  Flow events are written when both ends are known; viewers
 * sort the trace, so they need not be in time order in the file.
 */
#include <getopt.h>
#include <sys/stat.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "ev.h"

enum layout { LAYOUT_RANK, LAYOUT_AORTA };

struct opts {
	struct ev_cli cli;
	enum layout layout;
	int gzip, rank_prefix, absolute, no_flows, no_counters, verbose;
	uint64_t max_pending;
	uint64_t max_events;   /* --max-events: refuse or stop beyond this */
	char **inputs;
	int ninputs;
};

static void usage(FILE *f)
{
	fputs(
"Usage: ev2perfetto [options] [FILE...]\n"
"Write ev streams as one Chrome trace-event JSON timeline for Perfetto\n"
"(ui.perfetto.dev) or chrome://tracing: one GPU and one CPU process per rank,\n"
"one thread per GPU stream, CPU thread and NCCL channel, flow arrows and\n"
"counter tracks.  FILE defaults to standard input; several FILEs are read one\n"
"after the other and together must be in time order (merge rank streams with\n"
"ev-merge first).  Memory does not grow with the number of events.\n"
"\n"
"Events: kernels, memcpy, memset, collectives (nested in their kernel), p2p,\n"
"send/recv messages and schedule calc on NCCL channel / lane threads, ranges\n"
"and runtime calls on CPU threads, marks as instants, counters.  Args carry\n"
"bytes, comm, seq, algo, proto, dtype, op signature and more.\n"
"\n"
"Flows (ids unique in the whole trace): runtime call -> kernel it launched,\n"
"send -> matching recv (per comm, channel and rank pair, in order), p2p send\n"
"-> recv, and each collective chained across ranks (same comm and seq).\n"
"Counters per rank: 'comm in flight' (bytes of running collectives and p2p),\n"
"'wire in flight' (bytes of running sends), 'kernels' (running kernels).\n"
"\n"
"Options:\n"
"  -o, --output=FILE      write to FILE (via a temporary name) [stdout]\n"
"  -z, --gzip             gzip the output (Perfetto opens .json.gz)\n"
"      --layout=L         process ids: rank (GPU 2*rank, CPU 2*rank+1) or aorta\n"
"                         (GPU 1000*rank, CPU 1000*rank+500) [rank]\n"
"      --rank-prefix      prefix event names with the rank, e.g. [R3]\n"
"      --time=T           relative (0 = first record) or absolute (the\n"
"                         stream's origin, e.g. Unix time) [relative]\n"
"      --no-flows         leave out flow arrows\n"
"      --no-counters      leave out counter tracks\n"
"      --max-pending=N    flow ends kept waiting for their partner; more are\n"
"                         dropped with a warning [1000000]\n"
"      --max-events=N     largest timeline written, in trace events (about\n"
"                         150 bytes of JSON each); inputs that are files are\n"
"                         counted first and refused with the estimate, a pipe\n"
"                         stops with an error at the limit; 0 = no limit\n"
"                         [20000000]\n"
"  -v, --verbose          print counts on stderr\n"
"  -q, --quiet            no progress or warnings\n"
"  -f, --force            write gzip output (-z) to a terminal\n"
"  -h, --help             show this help and exit\n"
"  -V, --version          show version and exit\n"
"\n"
"Slices that overlap on one stream without nesting go to an extra track of\n"
"that stream ('stream 7 #2'), so every track nests properly.\n"
"\n"
"Flows go forward in time: an arrow leaves its first slice at that slice's\n"
"start and lands in the second at the same instant, or at the second's start\n"
"if that is later (a send -> recv arrow lands when the send started if the\n"
"receive was already posted, else when the receive was posted).  If the\n"
"second slice ended before the first started (clocks not aligned), the\n"
"arrow is drawn backwards from the second's end to the first's start, and\n"
"a warning counts them.\n"
"\n"
"Exit status:\n"
"  0  success\n"
"  1  data or I/O error (bad, truncated or unordered input, write error)\n"
"  2  usage error\n"
"\n"
"Example:\n"
"  kineto2ev run/torch_profiler/rank*/*.json.gz | ev2perfetto -z -o run.json.gz\n",
	f);
}

/* ---- text building ---------------------------------------------------- */

/* A growable byte buffer; grows geometrically, so a long run makes no
 * allocation per event.  An allocation failure sets oom and drops text. */
struct sbuf { char *p; size_t len, cap; int oom; };

static int sb_reserve(struct sbuf *b, size_t n)
{
	if (b->cap - b->len >= n)
		return 1;
	size_t ncap = b->cap ? b->cap : 4096;
	while (ncap - b->len < n)
		ncap *= 2;
	char *np = realloc(b->p, ncap);
	if (!np) {
		b->oom = 1;
		return 0;
	}
	b->p = np;
	b->cap = ncap;
	return 1;
}

static void sb_put(struct sbuf *b, const char *s, size_t n)
{
	if (!sb_reserve(b, n))
		return;
	memcpy(b->p + b->len, s, n);
	b->len += n;
}

static void sb_puts(struct sbuf *b, const char *s) { sb_put(b, s, strlen(s)); }

static void sb_u64(struct sbuf *b, uint64_t v)
{
	char tmp[24];
	int n = 0;
	do {
		tmp[n++] = (char)('0' + v % 10);
		v /= 10;
	} while (v);
	if (!sb_reserve(b, (size_t)n))
		return;
	while (n)
		b->p[b->len++] = tmp[--n];
}

static void sb_i64(struct sbuf *b, int64_t v)
{
	if (v < 0) {
		sb_put(b, "-", 1);
		sb_u64(b, (uint64_t)0 - (uint64_t)v);
	} else {
		sb_u64(b, (uint64_t)v);
	}
}

/* Nanoseconds as microseconds with exactly three decimals, from integers:
 * no rounding, whatever the magnitude. */
static void sb_us(struct sbuf *b, int64_t ns)
{
	uint64_t a = ns < 0 ? (uint64_t)0 - (uint64_t)ns : (uint64_t)ns;
	if (ns < 0)
		sb_put(b, "-", 1);
	sb_u64(b, a / 1000);
	char frac[4] = { '.', (char)('0' + a % 1000 / 100), (char)('0' + a % 100 / 10), (char)('0' + a % 10) };
	sb_put(b, frac, 4);
}

/* A quoted JSON string. */
static void sb_jstr(struct sbuf *b, const char *s, size_t n)
{
	if (!sb_reserve(b, 6 * n + 3))
		return;
	b->len += ev_json_escape(s, n, b->p + b->len, b->cap - b->len);
}

/* ,"key": */
static void sb_key(struct sbuf *b, const char *key)
{
	sb_put(b, ",\"", 2);
	sb_puts(b, key);
	sb_put(b, "\":", 2);
}

static void sb_kv_u64(struct sbuf *b, const char *key, uint64_t v)
{
	sb_key(b, key);
	sb_u64(b, v);
}

static void sb_kv_str(struct sbuf *b, const char *key, const char *s)
{
	sb_key(b, key);
	sb_jstr(b, s, strlen(s));
}

/* ---- output: plain or gzip ------------------------------------------- */

struct jout {
	ev_output *out;
	int gz, zinit;
	z_stream z;
	uint64_t raw_bytes;
};

static int jout_deflate(struct jout *j, const char *data, size_t n, int flush)
{
	j->z.next_in = (Bytef *)(uintptr_t)data;
	j->z.avail_in = (uInt)n;
	for (;;) {
		char *p = ev_output_reserve(j->out, 1 << 16);
		if (!p)
			return ev_output_flush(j->out) ? ev_output_flush(j->out) : EV_ERR_NOMEM;
		j->z.next_out = (Bytef *)p;
		j->z.avail_out = 1 << 16;
		int zr = deflate(&j->z, flush);
		ev_output_commit(j->out, (1 << 16) - j->z.avail_out);
		if (zr == Z_STREAM_END)
			return EV_OK;
		if (zr != Z_OK && zr != Z_BUF_ERROR)
			return EV_ERR_NOMEM;
		if (flush == Z_NO_FLUSH && j->z.avail_in == 0 && j->z.avail_out != 0)
			return EV_OK;
	}
}

static int jout_write(struct jout *j, const char *data, size_t n)
{
	j->raw_bytes += n;
	if (!j->gz)
		return ev_output_write(j->out, data, n);
	return jout_deflate(j, data, n, Z_NO_FLUSH);
}

/* ---- state ------------------------------------------------------------ */

enum kind { K_STREAM, K_THREAD, K_CHANNEL, K_LANE };
static const char *const kind_words[] = { "stream", "thread", "NCCL channel", "lane" };

#define MAX_LANES 8
#define MAX_DEPTH 256
#define ALT_TID 0x60000000u

struct span { int64_t ts, end; };

/* One track: a thread of a process.  Lane > 0 holds slices that overlap
 * lane 0's without nesting. */
struct track {
	uint32_t rank, id;
	uint8_t gpu, kind, lane;
	int64_t pid, tid;
	struct span *stk;
	uint32_t depth, cap;
};

/* Counter over intervals: samples when intervals start and end. */
struct hent { int64_t end; uint64_t delta; };
struct counter {
	struct hent *h;
	size_t n, cap;
	uint64_t value, pend_val;
	int64_t pend_ts;
	int have_pend;
};
enum { C_COMM, C_WIRE, C_KERNELS, NCOUNTERS };
static const char *const counter_names[NCOUNTERS] = { "comm in flight", "wire in flight", "kernels" };
static const char *const counter_keys[NCOUNTERS] = { "bytes", "bytes", "running" };

struct proc {
	uint32_t rank;
	uint8_t named[2];      /* [0] CPU, [1] GPU metadata written */
	uint32_t alt_next[2];  /* next spare tid */
	struct counter cnt[NCOUNTERS];
};

/* One end of a flow: the slice it binds to. */
struct ep { int64_t ts, end, pid, tid; };

/* A connection (comm, channel, sender -> receiver): its first unmatched
 * ends, all of one side, in order.  Messages on a connection arrive in the
 * order they were sent, so the k-th send matches the k-th receive. */
struct conn {
	int side; /* 1 sends waiting, 2 receives waiting */
	struct ep *q;
	uint32_t head, len, cap;
};

/* Collectives waiting for more ranks: an open-addressing table with
 * deletion (key -> ring slot) and a ring that evicts the oldest. */
#define LAUNCH_SLOTS (1u << 16)
struct launch { uint64_t key; struct ep ep; };

struct state {
	struct opts *o;
	ev_strtab *st;
	ev_meta *meta;
	struct jout jo;
	struct sbuf ob;        /* events not yet written */
	struct sbuf name;      /* scratch for an event's name */
	struct sbuf tname;     /* scratch for process and thread names */
	int64_t base;
	int have_base;
	uint64_t nevents;
	int first_event;
	struct ev_map track_ix, proc_ix, conn_ix;
	struct ev_vec tracks, procs, conns;
	struct launch *launch;
	ev_collmatch *colls;   /* open collectives, for the chain of flows */
	uint64_t flow_id;
	uint64_t pending, dropped, evicted;
	uint64_t flows[4], reversed[4], lanes_made, clipped, skipped, unmatched;
	struct ev_order order;
};

/* ---- output of events -------------------------------------------------- */

static int flush_out(struct state *s, int force)
{
	if (s->ob.oom)
		return EV_ERR_NOMEM;
	if (!force && s->ob.len < (1u << 18))
		return EV_OK;
	int rc = jout_write(&s->jo, s->ob.p, s->ob.len);
	s->ob.len = 0;
	return rc;
}

/* Start an event object: separator, phase, pid, tid. */
static void ev_begin(struct state *s, const char *ph, int64_t pid, int64_t tid)
{
	struct sbuf *b = &s->ob;
	sb_puts(b, s->first_event ? "\n{\"ph\":\"" : ",\n{\"ph\":\"");
	s->first_event = 0;
	sb_puts(b, ph);
	sb_puts(b, "\",\"pid\":");
	sb_i64(b, pid);
	sb_puts(b, ",\"tid\":");
	sb_i64(b, tid);
	s->nevents++;
}

/* Differences in two's complement: format-legal extreme times wrap instead
 * of overflowing (ts >= base in an ordered stream). */
static int64_t rel_ts(const struct state *s, int64_t ts)
{
	return s->o->absolute ? ts : (int64_t)((uint64_t)ts - (uint64_t)s->base);
}

/* ts + dur, saturating at INT64_MAX. */
static int64_t rec_end(const struct ev_rec *r)
{
	int64_t e;
	if (r->dur > (uint64_t)INT64_MAX || __builtin_add_overflow(r->ts, (int64_t)r->dur, &e))
		return INT64_MAX;
	return e;
}

static void meta_event(struct state *s, const char *what, int64_t pid, int64_t tid, const char *name, int64_t sort)
{
	struct sbuf *b = &s->ob;
	ev_begin(s, "M", pid, tid);
	sb_kv_str(b, "name", what);
	if (name) {
		sb_puts(b, ",\"args\":{\"name\":");
		sb_jstr(b, name, strlen(name));
	} else {
		sb_puts(b, ",\"args\":{\"sort_index\":");
		sb_i64(b, sort);
	}
	sb_puts(b, "}}");
}

static int64_t proc_pid(const struct state *s, uint32_t rank, int gpu)
{
	if (s->o->layout == LAYOUT_AORTA)
		return (int64_t)rank * 1000 + (gpu ? 0 : 500);
	return (int64_t)rank * 2 + (gpu ? 0 : 1);
}

static struct proc *get_proc(struct state *s, uint32_t rank, int gpu)
{
	uint64_t *ix = ev_map_get(&s->proc_ix, (uint64_t)rank + 1);
	struct proc *p;
	if (ix) {
		p = (struct proc *)s->procs.data + (*ix - 1);
	} else {
		p = ev_vec_push(&s->procs);
		if (!p || ev_map_put(&s->proc_ix, (uint64_t)rank + 1, s->procs.len)) {
			s->ob.oom = 1;
			return NULL;
		}
		p->rank = rank;
	}
	if (!p->named[gpu]) {
		p->named[gpu] = 1;
		/* "rank 3 GPU (device 3, host h1)" from the #rank line, if any. */
		const struct ev_rank_info *ri = ev_meta_rank(s->meta, rank);
		const char *dev = ri ? ev_kv_get(ri->kv, ri->nkv, gpu ? "device" : "pid") : NULL;
		const char *host = ri ? ev_kv_get(ri->kv, ri->nkv, "host") : NULL;
		if (!host && ri)
			host = ev_kv_get(ri->kv, ri->nkv, "node");
		struct sbuf *n = &s->tname;
		n->len = 0;
		sb_puts(n, "rank ");
		sb_u64(n, rank);
		sb_puts(n, gpu ? " GPU" : " CPU");
		if (dev || host) {
			sb_puts(n, " (");
			if (dev) {
				sb_puts(n, gpu ? "device " : "pid ");
				sb_puts(n, dev);
			}
			if (host) {
				sb_puts(n, dev ? ", " : "");
				sb_puts(n, host);
			}
			sb_puts(n, ")");
		}
		sb_put(n, "", 1);
		if (n->oom) {
			s->ob.oom = 1;
			return NULL;
		}
		int64_t pid = proc_pid(s, rank, gpu);
		meta_event(s, "process_name", pid, 0, n->p, 0);
		meta_event(s, "process_sort_index", pid, 0, NULL, pid);
	}
	return p;
}

static uint64_t key_of(const void *data, size_t n)
{
	uint64_t h = ev_hash64(data, n);
	return h ? h : 1;
}

static struct track *get_track(struct state *s, uint32_t rank, int gpu, int kind, uint32_t id, int lane)
{
	unsigned char k[12];
	ev_put32(k, rank);
	ev_put32(k + 4, id);
	k[8] = (unsigned char)gpu;
	k[9] = (unsigned char)kind;
	k[10] = (unsigned char)lane;
	k[11] = 0;
	uint64_t key = key_of(k, sizeof k);
	uint64_t *ix = ev_map_get(&s->track_ix, key);
	if (ix)
		return (struct track *)s->tracks.data + (*ix - 1);
	struct proc *p = get_proc(s, rank, gpu);
	if (!p)
		return NULL;
	struct track *t = ev_vec_push(&s->tracks);
	if (!t || ev_map_put(&s->track_ix, key, s->tracks.len)) {
		s->ob.oom = 1;
		return NULL;
	}
	t->rank = rank;
	t->id = id;
	t->gpu = (uint8_t)gpu;
	t->kind = (uint8_t)kind;
	t->lane = (uint8_t)lane;
	t->pid = proc_pid(s, rank, gpu);
	/* Lane 0 of a stream or thread keeps its own id; channels, schedule
	 * lanes and extra lanes get ids from ranges real ids do not reach. */
	if (lane == 0 && (kind == K_STREAM || kind == K_THREAD) && id < 0x40000000u)
		t->tid = id;
	else if (lane == 0 && kind == K_CHANNEL)
		t->tid = 0x40000000 + (int64_t)id;
	else if (lane == 0 && kind == K_LANE && id < 0x10000000u)
		t->tid = 0x50000000 + (int64_t)id;
	else
		t->tid = ALT_TID + p->alt_next[gpu]++;
	if (lane)
		s->lanes_made++;
	struct sbuf *n = &s->tname;
	n->len = 0;
	sb_puts(n, kind_words[kind]);
	sb_put(n, " ", 1);
	sb_u64(n, id);
	if (lane) {
		sb_puts(n, " #");
		sb_u64(n, (uint64_t)lane + 1);
	}
	sb_put(n, "", 1);
	if (n->oom) {
		s->ob.oom = 1;
		return NULL;
	}
	int64_t sort = kind == K_CHANNEL ? 0x2000000 + (int64_t)(id & 0xFFFF) * 16 :
	               kind == K_LANE ? 0x3000000 + (int64_t)(id & 0xFFFF) * 16 :
	               (int64_t)(id < 0x100000u ? id : 0xFFFFFu) * 16;
	meta_event(s, "thread_name", t->pid, t->tid, n->p, 0);
	meta_event(s, "thread_sort_index", t->pid, t->tid, NULL, sort + lane);
	return t;
}

/* The track on which [ts, end) nests: lane 0 of the stream, or the first
 * extra lane where it does; when none does, lane 0 with the slice clipped
 * to its enclosing slice (*end changes). */
static struct track *place(struct state *s, uint32_t rank, int gpu, int kind, uint32_t id, int64_t ts, int64_t *end)
{
	struct track *t0 = NULL;
	for (int lane = 0; lane < MAX_LANES; lane++) {
		struct track *t = get_track(s, rank, gpu, kind, id, lane);
		if (!t)
			return NULL;
		while (t->depth && t->stk[t->depth - 1].end <= ts)
			t->depth--;
		if (lane == 0)
			t0 = t;
		if (t->depth && t->stk[t->depth - 1].end < *end)
			continue;
		if (t->depth == MAX_DEPTH)
			continue;
		if (t->depth == t->cap) {
			uint32_t ncap = t->cap ? t->cap * 2 : 8;
			struct span *ns = realloc(t->stk, ncap * sizeof *ns);
			if (!ns) {
				s->ob.oom = 1;
				return NULL;
			}
			t->stk = ns;
			t->cap = ncap;
		}
		t->stk[t->depth].ts = ts;
		t->stk[t->depth].end = *end;
		t->depth++;
		/* A track re-fetched above may have moved: return by index. */
		return t;
	}
	/* Every lane is taken: clip on lane 0 (already popped to ts). */
	t0 = get_track(s, rank, gpu, kind, id, 0);
	if (t0 && t0->depth)
		*end = t0->stk[t0->depth - 1].end;
	s->clipped++;
	return t0;
}

/* ---- counters ---------------------------------------------------------- */

static void counter_sample(struct state *s, struct counter *c, int which, uint32_t rank, int64_t ts, uint64_t v)
{
	if (c->have_pend && c->pend_ts != ts) {
		struct sbuf *b = &s->ob;
		ev_begin(s, "C", proc_pid(s, rank, 1), 0);
		sb_kv_str(b, "name", counter_names[which]);
		sb_puts(b, ",\"ts\":");
		sb_us(b, rel_ts(s, c->pend_ts));
		sb_puts(b, ",\"args\":{\"");
		sb_puts(b, counter_keys[which]);
		sb_puts(b, "\":");
		sb_u64(b, c->pend_val);
		sb_puts(b, "}}");
	}
	c->have_pend = 1;
	c->pend_ts = ts;
	c->pend_val = v;
}

static void heap_pop(struct counter *c)
{
	c->h[0] = c->h[--c->n];
	size_t i = 0;
	for (;;) {
		size_t l = 2 * i + 1, r = l + 1, m = i;
		if (l < c->n && c->h[l].end < c->h[m].end)
			m = l;
		if (r < c->n && c->h[r].end < c->h[m].end)
			m = r;
		if (m == i)
			break;
		struct hent x = c->h[i];
		c->h[i] = c->h[m];
		c->h[m] = x;
		i = m;
	}
}

/* Apply the ends up to ts (all of them when ts is INT64_MAX). */
static void counter_advance(struct state *s, struct counter *c, int which, uint32_t rank, int64_t ts)
{
	while (c->n && c->h[0].end <= ts) {
		int64_t e = c->h[0].end;
		c->value -= c->h[0].delta;
		heap_pop(c);
		counter_sample(s, c, which, rank, e, c->value);
	}
}

static void counter_add(struct state *s, struct proc *p, int which, int64_t ts, int64_t end, uint64_t delta)
{
	struct counter *c = &p->cnt[which];
	counter_advance(s, c, which, p->rank, ts);
	if (end <= ts)
		return;
	if (c->n == c->cap) {
		size_t ncap = c->cap ? c->cap * 2 : 16;
		struct hent *nh = realloc(c->h, ncap * sizeof *nh);
		if (!nh) {
			s->ob.oom = 1;
			return;
		}
		c->h = nh;
		c->cap = ncap;
	}
	size_t i = c->n++;
	c->h[i].end = end;
	c->h[i].delta = delta;
	while (i && c->h[(i - 1) / 2].end > c->h[i].end) {
		struct hent x = c->h[i];
		c->h[i] = c->h[(i - 1) / 2];
		c->h[(i - 1) / 2] = x;
		i = (i - 1) / 2;
	}
	c->value += delta;
	counter_sample(s, c, which, p->rank, ts, c->value);
}

static void counters_finish(struct state *s)
{
	for (size_t i = 0; i < s->procs.len; i++) {
		struct proc *p = (struct proc *)s->procs.data + i;
		for (int k = 0; k < NCOUNTERS; k++) {
			struct counter *c = &p->cnt[k];
			counter_advance(s, c, k, p->rank, INT64_MAX);
			if (c->have_pend) {
				/* Flush the last sample by moving past it. */
				int64_t t = c->pend_ts;
				counter_sample(s, c, k, p->rank, t == INT64_MAX ? t - 1 : t + 1, c->value);
				c->have_pend = 0;
			}
		}
	}
}

/* ---- flows ------------------------------------------------------------- */

/* The latest instant of slice e not after t, or e's start. */
static int64_t inside(const struct ep *e, int64_t t)
{
	int64_t last = e->end > e->ts ? e->end - 1 : e->ts; /* strictly inside, for the binding */
	return t < e->ts ? e->ts : t > last ? last : t;
}

/* A flow from slice `from` to slice `to`, drawn in time order: it leaves
 * `from` at its start and lands in `to` at the same instant, or at to's
 * start if that is later.  When `to` ended before `from` started (clocks
 * not aligned), the arrow goes from to's end to from's start instead and
 * is counted. */
static void flow_pair(struct state *s, int kind, const char *name, const struct ep *from, const struct ep *to)
{
	static const char *const cats[] = { "launch", "message", "p2p", "collective" };
	struct sbuf *b = &s->ob;
	uint64_t id = ++s->flow_id;
	int64_t t_from = from->ts, t_to = inside(to, t_from);
	const struct ep *first = from, *second = to;
	if (t_to < t_from) {
		first = to, second = from;
		int64_t t = t_to;
		t_to = t_from;
		t_from = t;
		s->reversed[kind]++;
	}
	s->flows[kind]++;
	for (int end = 0; end < 2; end++) {
		const struct ep *e = end ? second : first;
		ev_begin(s, end ? "f" : "s", e->pid, e->tid);
		if (end)
			sb_puts(b, ",\"bp\":\"e\"");
		sb_kv_u64(b, "id", id);
		sb_kv_str(b, "cat", cats[kind]);
		sb_kv_str(b, "name", name);
		sb_puts(b, ",\"ts\":");
		sb_us(b, rel_ts(s, end ? t_to : t_from));
		sb_puts(b, "}");
	}
}

static void flow_launch_api(struct state *s, const struct ev_rec *r, const struct ep *e)
{
	if (!r->id)
		return;
	uint64_t key = ((uint64_t)r->rank << 32 | r->id) + 1;
	struct launch *l = &s->launch[(r->id + (uint64_t)r->rank * 40503u) & (LAUNCH_SLOTS - 1)];
	l->key = key;
	l->ep = *e;
}

static void flow_launch_kernel(struct state *s, const struct ev_rec *r, const struct ep *e)
{
	if (!r->id || (r->flags & EV_F_UNLINKED))
		return;
	uint64_t key = ((uint64_t)r->rank << 32 | r->id) + 1;
	struct launch *l = &s->launch[(r->id + (uint64_t)r->rank * 40503u) & (LAUNCH_SLOTS - 1)];
	if (l->key == key && l->ep.ts <= e->ts)
		flow_pair(s, 0, "launch", &l->ep, e);
}

/* side 1: this end sends, 2: it receives. */
static void flow_message(struct state *s, int kind, uint64_t comm, uint32_t channel, uint32_t from, uint32_t to,
                         int side, const struct ep *e, const char *name)
{
	unsigned char k[21];
	ev_put64(k, comm);
	ev_put32(k + 8, channel);
	ev_put32(k + 12, from);
	ev_put32(k + 16, to);
	k[20] = (unsigned char)kind;
	uint64_t key = key_of(k, sizeof k);
	uint64_t *ix = ev_map_get(&s->conn_ix, key);
	struct conn *c;
	if (ix) {
		c = (struct conn *)s->conns.data + (*ix - 1);
	} else {
		c = ev_vec_push(&s->conns);
		if (!c || ev_map_put(&s->conn_ix, key, s->conns.len)) {
			s->ob.oom = 1;
			return;
		}
	}
	if (c->len && c->side != side) {
		struct ep *other = &c->q[c->head];
		c->head = (c->head + 1) % c->cap;
		c->len--;
		s->pending--;
		flow_pair(s, kind, name, side == 1 ? e : other, side == 1 ? other : e);
		return;
	}
	if (s->pending >= s->o->max_pending) {
		s->dropped++;
		return;
	}
	if (c->len == c->cap) {
		uint32_t ncap = c->cap ? c->cap * 2 : 4;
		struct ep *nq = malloc(ncap * sizeof *nq);
		if (!nq) {
			s->ob.oom = 1;
			return;
		}
		for (uint32_t i = 0; i < c->len; i++)
			nq[i] = c->q[(c->head + i) % c->cap];
		free(c->q);
		c->q = nq;
		c->cap = ncap;
		c->head = 0;
	}
	c->q[(c->head + c->len) % c->cap] = *e;
	c->len++;
	c->side = side;
	s->pending++;
}

/* Open-addressing table of open collectives, linear probing with
 * backward-shift deletion so that it never fills with dead entries. */
/* Collective flows chain the ranks of one collective in arrival order:
 * the library's (comm, seq) matcher keeps each collective's previous
 * arrival, whose slice (pid, tid) rides in the arrival's data. */
#define EP_PID_BITS 24
#define EP_TID_BITS 40

static int coll_released(void *ctx, const struct ev_coll_done *d)
{
	(void)ctx;
	(void)d;
	return EV_OK;
}

static int flow_coll(struct state *s, const struct ev_rec *r, const struct ep *e, const char *name)
{
	uint32_t nranks = r->aux;
	if (!nranks) {
		const struct ev_comm_info *ci = ev_meta_comm(s->meta, r->comm);
		nranks = ci ? ci->nranks : 0;
	}
	if (nranks == 1)
		return EV_OK;
	if (e->pid < 0 || e->pid >= (1LL << EP_PID_BITS) || e->tid < 0 || e->tid >= (1LL << EP_TID_BITS)) {
		s->dropped++;
		return EV_OK;
	}
	struct ev_coll_key k = { 0, r->comm, r->seq, (uint32_t)r->type << 8 | r->op };
	struct ev_coll_arrival prev;
	uint64_t data = (uint64_t)e->pid << EP_TID_BITS | (uint64_t)e->tid;
	int rc = ev_collmatch_add(s->colls, &k, nranks, r, data, &prev);
	if (rc != EV_OK)
		return rc;
	if (prev.rank != UINT32_MAX) {
		struct ep last = { prev.ts, prev.end, (int64_t)(prev.data >> EP_TID_BITS),
		                   (int64_t)(prev.data & ((1ULL << EP_TID_BITS) - 1)) };
		flow_pair(s, 3, name, &last, e);
	}
	return EV_OK;
}

/* ---- one record -------------------------------------------------------- */

static void args_flags(struct sbuf *b, unsigned flags)
{
	if (!flags)
		return;
	char fl[160];
	ev_flags_format(flags, fl, sizeof fl);
	sb_kv_str(b, "flags", fl);
}

static void args_coll(struct sbuf *b, const struct ev_rec *r, const ev_strtab *st)
{
	char comm[24];
	snprintf(comm, sizeof comm, "%llu", (unsigned long long)r->comm);
	sb_kv_u64(b, "bytes", r->bytes);
	sb_kv_str(b, "comm", comm);
	sb_kv_u64(b, "seq", r->seq);
	if (r->peer >= 0)
		sb_kv_u64(b, r->type == EV_COLL ? "root" : "peer", (uint64_t)r->peer);
	if (r->algo)
		sb_kv_str(b, "algo", ev_algo_name(r->algo) ? ev_algo_name(r->algo) : "?");
	if (r->proto)
		sb_kv_str(b, "proto", ev_proto_name(r->proto) ? ev_proto_name(r->proto) : "?");
	if (r->dtype)
		sb_kv_str(b, "dtype", ev_dtype_name(r->dtype) ? ev_dtype_name(r->dtype) : "?");
	if (r->redop)
		sb_kv_str(b, "redop", ev_redop_name(r->redop) ? ev_redop_name(r->redop) : "?");
	if (r->type == EV_COLL || r->type == EV_P2P) {
		if (r->aux)
			sb_kv_u64(b, "nranks", r->aux);
		if (r->channel)
			sb_kv_u64(b, "channels", r->channel);
		if (r->nthreads)
			sb_kv_u64(b, "nthreads", r->nthreads);
		if (r->chunk_steps)
			sb_kv_u64(b, "chunk_steps", r->chunk_steps);
		if (r->slice_steps)
			sb_kv_u64(b, "slice_steps", r->slice_steps);
		if (r->step_size)
			sb_kv_u64(b, "step_size", r->step_size);
		size_t n;
		const char *k = ev_strtab_get(st, r->name, &n);
		if (k && n) {
			sb_key(b, "kernel");
			sb_jstr(b, k, n);
		}
	} else {
		sb_kv_u64(b, "channel", r->channel);
		sb_kv_u64(b, "step", r->step);
		if (r->aux)
			sb_kv_u64(b, "tag", r->aux);
		const char *op = ev_coll_name(r->op);
		if (op)
			sb_kv_str(b, "collective", op);
	}
}

static int one_record(struct state *s, const struct ev_rec *r)
{
	struct sbuf *b = &s->ob;
	int gpu, kind;
	uint32_t id = r->stream;
	switch (r->type) {
	case EV_KERNEL: case EV_MEMCPY: case EV_MEMSET: case EV_COLL: case EV_P2P:
		gpu = 1, kind = K_STREAM;
		break;
	case EV_RANGE: case EV_MARK:
		gpu = r->op == EV_RG_GPU_USER, kind = gpu ? K_STREAM : K_THREAD;
		break;
	case EV_API:
		gpu = 0, kind = K_THREAD;
		break;
	case EV_SEND: case EV_RECV:
		gpu = 1, kind = K_CHANNEL, id = r->channel;
		break;
	case EV_CALC:
		gpu = 1, kind = K_LANE;
		break;
	case EV_COUNTER: {
		get_proc(s, r->rank, 0);
		size_t n;
		const char *nm = ev_strtab_get(s->st, r->name, &n);
		ev_begin(s, "C", proc_pid(s, r->rank, 0), 0);
		sb_key(b, "name");
		sb_jstr(b, nm ? nm : "counter", nm ? n : 7);
		sb_puts(b, ",\"ts\":");
		sb_us(b, rel_ts(s, r->ts));
		sb_puts(b, ",\"args\":{\"value\":");
		sb_u64(b, r->bytes);
		sb_puts(b, "}}");
		return EV_OK;
	}
	default:
		/* dep, chan, overlap: details of other records, not slices. */
		s->skipped++;
		return EV_OK;
	}

	/* The name: the record's, else a word for what it is. */
	struct sbuf *n = &s->name;
	n->len = 0;
	if (s->o->rank_prefix) {
		sb_puts(n, "[R");
		sb_u64(n, r->rank);
		sb_puts(n, "] ");
	}
	size_t nlen;
	const char *nm = ev_strtab_get(s->st, r->name, &nlen);
	const char *opw = ev_op_name(r->type, r->op);
	if (r->type == EV_COLL || r->type == EV_P2P) {
		sb_puts(n, opw ? opw : "collective");
	} else if (r->type == EV_SEND || r->type == EV_RECV) {
		sb_puts(n, r->type == EV_SEND ? "send to " : "recv from ");
		sb_i64(n, r->peer);
	} else if (nm && nlen) {
		sb_put(n, nm, nlen);
	} else {
		sb_puts(n, ev_type_name(r->type));
		if (opw && r->type != EV_MEMSET) {
			sb_put(n, " ", 1);
			sb_puts(n, opw);
		}
	}
	if (n->oom)
		return EV_ERR_NOMEM;

	int64_t end = rec_end(r);
	if (r->type == EV_MARK)
		end = r->ts;
	struct track *t = r->type == EV_MARK ? get_track(s, r->rank, gpu, kind, id, 0)
	                                     : place(s, r->rank, gpu, kind, id, r->ts, &end);
	if (!t)
		return EV_ERR_NOMEM;
	int64_t pid = t->pid, tid = t->tid;
	ev_begin(s, r->type == EV_MARK ? "i" : "X", pid, tid);
	sb_key(b, "name");
	sb_jstr(b, n->p, n->len);
	sb_kv_str(b, "cat", r->type == EV_RANGE || r->type == EV_MARK ? (opw ? opw : "range") : ev_type_name(r->type));
	sb_puts(b, ",\"ts\":");
	sb_us(b, rel_ts(s, r->ts));
	if (r->type == EV_MARK) {
		sb_puts(b, ",\"s\":\"t\"");
	} else {
		sb_puts(b, ",\"dur\":");
		sb_us(b, (int64_t)((uint64_t)end - (uint64_t)r->ts));
	}
	sb_puts(b, ",\"args\":{\"rank\":");
	sb_u64(b, r->rank);
	size_t siglen;
	const char *sig = ev_strtab_get(s->st, r->sig, &siglen);
	switch (r->type) {
	case EV_KERNEL:
		sb_kv_str(b, "class", opw ? opw : "other");
		sb_kv_u64(b, "stream", r->stream);
		if (r->id)
			sb_kv_u64(b, "correlation", r->id);
		if (r->aux)
			sb_kv_u64(b, "grid", r->aux);
		if (r->nthreads)
			sb_kv_u64(b, "block", r->nthreads);
		break;
	case EV_MEMCPY: case EV_MEMSET:
		sb_kv_u64(b, "bytes", r->bytes);
		if (r->type == EV_MEMCPY)
			sb_kv_str(b, "kind", opw ? opw : "unknown");
		if (r->id)
			sb_kv_u64(b, "correlation", r->id);
		break;
	case EV_COLL: case EV_P2P: case EV_SEND: case EV_RECV:
		args_coll(b, r, s->st);
		break;
	case EV_API:
		if (r->id)
			sb_kv_u64(b, "correlation", r->id);
		break;
	case EV_RANGE: case EV_MARK:
		if (r->id)
			sb_kv_u64(b, "id", r->id);
		break;
	case EV_CALC:
		if (r->bytes)
			sb_kv_u64(b, "bytes", r->bytes);
		sb_kv_u64(b, "id", r->id);
		break;
	default:
		break;
	}
	if (sig && siglen) {
		sb_key(b, "op");
		sb_jstr(b, sig, siglen);
	}
	if (end != rec_end(r) && r->type != EV_MARK)
		sb_kv_u64(b, "clipped_from_ns", r->dur);
	args_flags(b, r->flags);
	sb_puts(b, "}}");

	struct ep e = { r->ts, end, pid, tid };
	if (!s->o->no_flows) {
		switch (r->type) {
		case EV_API:
			flow_launch_api(s, r, &e);
			break;
		case EV_KERNEL: case EV_MEMCPY: case EV_MEMSET:
			flow_launch_kernel(s, r, &e);
			break;
		case EV_SEND: case EV_RECV:
			if (r->peer >= 0) {
				int snd = r->type == EV_SEND;
				flow_message(s, 1, r->comm, r->channel, snd ? r->rank : (uint32_t)r->peer,
				             snd ? (uint32_t)r->peer : r->rank, snd ? 1 : 2, &e, "message");
			}
			break;
		case EV_P2P:
			if (r->peer >= 0 && (r->op == EV_OP_SEND || r->op == EV_OP_RECV)) {
				int snd = r->op == EV_OP_SEND;
				flow_message(s, 2, r->comm, 0, snd ? r->rank : (uint32_t)r->peer, snd ? (uint32_t)r->peer : r->rank,
				             snd ? 1 : 2, &e, "p2p");
			}
			break;
		case EV_COLL: {
			int rc = flow_coll(s, r, &e, opw ? opw : "collective");
			if (rc != EV_OK)
				return rc;
			break;
		}
		default:
			break;
		}
	}
	if (!s->o->no_counters) {
		int which = r->type == EV_KERNEL ? C_KERNELS : r->type == EV_COLL || r->type == EV_P2P ? C_COMM :
		            r->type == EV_SEND ? C_WIRE : -1;
		if (which >= 0) {
			struct proc *p = get_proc(s, r->rank, 1);
			if (!p)
				return EV_ERR_NOMEM;
			counter_add(s, p, which, r->ts, rec_end(r), which == C_KERNELS ? 1 : r->bytes);
		}
	}
	return b->oom ? EV_ERR_NOMEM : EV_OK;
}

/* ---- run --------------------------------------------------------------- */

static int out_error(struct state *s, int rc)
{
	if (rc == EV_ERR_NOMEM)
		return ev_cli_error(&s->o->cli, "out of memory");
	if (rc != EV_ERR_PIPE && rc != EV_ERR_IO)
		return ev_cli_error(&s->o->cli, "%s: %s", ev_output_name(s->jo.out), ev_strerror(rc));
	/* ev_output_flush restores the errno of the failed write. */
	rc = ev_output_flush(s->jo.out);
	return ev_cli_file_error(&s->o->cli, s->o->cli.output, rc ? rc : EV_ERR_IO);
}

static int read_input(struct state *s, const char *path, uint64_t *nrec)
{
	struct opts *o = s->o;
	ev_reader *r;
	int rc = ev_reader_open(&r, path, s->st, s->meta);
	if (rc)
		return ev_cli_input_error(&o->cli, path, rc);
	struct ev_rec rec;
	int status = 0;
	while ((rc = ev_read(r, &rec)) != EV_EOF) {
		if (rc == EV_TEXT)
			continue;
		if (rc < 0) {
			status = ev_cli_reader_error(&o->cli, r, rc);
			break;
		}
		int64_t last = s->order.last_ts;
		if (ev_order_check(&s->order, rec.ts) != EV_OK) {
			status = ev_cli_error(&o->cli, "%s: record %llu: out of order (ts %lld after %lld); sort with ev-merge --sort",
			                      ev_reader_name(r), (unsigned long long)ev_reader_recno(r), (long long)rec.ts,
			                      (long long)last);
			break;
		}
		if (!s->have_base) {
			s->base = rec.ts;
			s->have_base = 1;
		}
		if ((rc = one_record(s, &rec)) == EV_OK)
			rc = flush_out(s, 0);
		if (!rc && o->max_events && s->nevents > o->max_events) {
			status = ev_cli_error(&o->cli, "%s: record %llu: more than --max-events=%llu trace events; stopped "
			                      "(filter the stream with ev-view, or raise --max-events)",
			                      ev_reader_name(r), (unsigned long long)ev_reader_recno(r),
			                      (unsigned long long)o->max_events);
			break;
		}
		if (rc) {
			status = out_error(s, rc);
			break;
		}
		if ((++*nrec & 0xFFFF) == 0)
			ev_cli_progress(&o->cli, *nrec, s->jo.raw_bytes);
	}
	int crc = ev_reader_close(r);
	if (!status && crc < 0)
		status = ev_cli_input_error(&o->cli, path, crc);
	return status;
}

static void free_state(struct state *s)
{
	for (size_t i = 0; i < s->tracks.len; i++)
		free(((struct track *)s->tracks.data)[i].stk);
	for (size_t i = 0; i < s->procs.len; i++)
		for (int k = 0; k < NCOUNTERS; k++)
			free(((struct proc *)s->procs.data)[i].cnt[k].h);
	for (size_t i = 0; i < s->conns.len; i++)
		free(((struct conn *)s->conns.data)[i].q);
	ev_vec_free(&s->tracks);
	ev_vec_free(&s->procs);
	ev_vec_free(&s->conns);
	ev_map_free(&s->track_ix);
	ev_map_free(&s->proc_ix);
	ev_map_free(&s->conn_ix);
	free(s->launch);
	ev_collmatch_free(s->colls);
	free(s->ob.p);
	free(s->name.p);
	free(s->tname.p);
	ev_strtab_free(s->st);
	ev_meta_free(s->meta);
}

/* Before writing: the trace events the inputs would give, when they are
 * files that could exceed --max-events (size / 97 bytes per record line,
 * 10x that for gzip, bounds the record count; only then are they counted).
 * Each record gives at most one slice and one flow end. */
static int estimate(struct opts *o)
{
	uint64_t bound = 0;
	for (int i = 0; i < o->ninputs; i++) {
		struct stat sb;
		if (strcmp(o->inputs[i], "-") == 0 || stat(o->inputs[i], &sb) != 0 || !S_ISREG(sb.st_mode))
			return 0; /* a pipe: counted while writing */
		bound += (uint64_t)sb.st_size / 97 * 2 * 10;
	}
	if (bound <= o->max_events)
		return 0;
	uint64_t events = 0;
	for (int i = 0; i < o->ninputs; i++) {
		ev_reader *r;
		int rc = ev_reader_open(&r, o->inputs[i], NULL, NULL);
		if (rc)
			return ev_cli_input_error(&o->cli, o->inputs[i], rc);
		ev_reader_skip_text(r, 1);
		ev_reader_lazy_decode(r, 1);
		struct ev_rec rec;
		while ((rc = ev_read(r, &rec)) == EV_REC)
			if (rec.type != EV_DEP && rec.type != EV_CHAN && rec.type != EV_OVERLAP)
				events += rec.type == EV_COUNTER || rec.type == EV_MARK ? 1 : 2;
		if (rc < 0) {
			int st = ev_cli_reader_error(&o->cli, r, rc);
			ev_reader_close(r);
			return st;
		}
		ev_reader_close(r);
	}
	if (events <= o->max_events)
		return 0;
	return ev_cli_error(&o->cli, "the timeline would have about %llu trace events (~%llu MB of JSON), more than "
	                    "--max-events=%llu: filter the stream first (ev-view --rank, --type, --from/--to) or raise "
	                    "--max-events", (unsigned long long)events, (unsigned long long)(events * 150 >> 20),
	                    (unsigned long long)o->max_events);
}

static int run(struct opts *o)
{
	struct state s;
	int status = 0, rc;
	uint64_t nrec = 0;
	memset(&s, 0, sizeof s);
	s.o = o;
	s.first_event = 1;
	s.st = ev_strtab_new();
	s.meta = ev_meta_new();
	s.launch = calloc(LAUNCH_SLOTS, sizeof *s.launch);
	struct ev_collmatch_limits lim = { 1u << 16, 0 };
	int mrc = ev_collmatch_new(&s.colls, &lim, coll_released, &s);
	ev_vec_init(&s.tracks, sizeof(struct track));
	ev_vec_init(&s.procs, sizeof(struct proc));
	ev_vec_init(&s.conns, sizeof(struct conn));
	ev_map_init(&s.track_ix);
	ev_map_init(&s.proc_ix);
	ev_map_init(&s.conn_ix);
	if (!s.st || !s.meta || !s.launch || mrc != EV_OK) {
		status = ev_cli_error(&o->cli, "out of memory");
		goto done;
	}
	if (o->max_events && (status = estimate(o)) != 0)
		goto done;
	if ((rc = ev_output_open(&s.jo.out, o->cli.output)) != EV_OK) {
		status = ev_cli_file_error(&o->cli, o->cli.output, rc);
		goto done;
	}
	/* gzip is binary: not onto a terminal, however it is named. */
	if (o->gzip && !o->cli.force && ev_output_is_tty(s.jo.out)) {
		status = ev_cli_error(&o->cli, "refusing to write gzip output to a terminal; use -o FILE or a pipe (-f to force)");
		goto done;
	}
	if (o->gzip) {
		s.jo.gz = 1;
		if (deflateInit2(&s.jo.z, Z_DEFAULT_COMPRESSION, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK) {
			status = ev_cli_error(&o->cli, "out of memory");
			goto done;
		}
		s.jo.zinit = 1;
	}
	sb_puts(&s.ob, "{\"traceEvents\":[");
	for (int i = 0; i < o->ninputs && !status; i++)
		status = read_input(&s, o->inputs[i], &nrec);
	if (status)
		goto done;
	counters_finish(&s);
	/* Flow ends still waiting have no partner in this trace. */
	for (size_t i = 0; i < s.conns.len; i++)
		s.unmatched += ((struct conn *)s.conns.data)[i].len;
	/* Collectives still open never saw all their ranks. */
	struct ev_collmatch_counts cc;
	if (ev_collmatch_flush(s.colls) != EV_OK) {
		status = ev_cli_error(&o->cli, "out of memory");
		goto done;
	}
	ev_collmatch_get_counts(s.colls, &cc);
	s.evicted += cc.evicted + cc.flushed;
	struct sbuf *b = &s.ob;
	sb_puts(b, "\n],\n\"displayTimeUnit\":\"ns\",\n\"otherData\":{\"producer\":\"ev2perfetto (evkit) " EV_VERSION_STRING "\"");
	sb_kv_str(b, "time", o->absolute ? "absolute" : "relative");
	char base[24];
	snprintf(base, sizeof base, "%lld", (long long)(o->absolute ? 0 : s.base));
	sb_kv_str(b, "ts_base_ns", base);
	sb_kv_u64(b, "records", nrec);
	sb_kv_u64(b, "flows", s.flow_id);
	sb_puts(b, "}}\n");
	if ((rc = flush_out(&s, 1)) == EV_OK && s.jo.gz)
		rc = jout_deflate(&s.jo, "", 0, Z_FINISH);
	if (rc) {
		status = out_error(&s, rc);
		goto done;
	}
	ev_cli_progress_done(&o->cli);
	rc = ev_output_close(s.jo.out);
	s.jo.out = NULL;
	if (rc) {
		status = ev_cli_file_error(&o->cli, o->cli.output, rc);
		goto done;
	}
	if (s.dropped)
		ev_cli_warn(&o->cli, "%llu flow ends dropped: more than --max-pending=%llu waiting for their partner",
		            (unsigned long long)s.dropped, (unsigned long long)o->max_pending);
	if (s.reversed[1] + s.reversed[2])
		ev_cli_warn(&o->cli, "%llu message and %llu p2p flows: the receive ended before its send started (clocks not "
		            "aligned? see ev-merge --align); drawn from the receive to the send",
		            (unsigned long long)s.reversed[1], (unsigned long long)s.reversed[2]);
	if (s.clipped)
		ev_cli_warn(&o->cli, "%llu slices clipped: more than %d overlapping slices on one stream",
		            (unsigned long long)s.clipped, MAX_LANES);
	if (o->verbose && !o->cli.quiet)
		ev_cli_note(&o->cli,
		        "%llu records, %llu trace events, %llu flows (%llu launch, %llu message, %llu p2p, "
		        "%llu collective), %llu message ends and %llu collectives without a partner, %llu extra lanes, "
		        "%llu records skipped, %llu bytes of JSON",
		        (unsigned long long)nrec, (unsigned long long)s.nevents, (unsigned long long)s.flow_id,
		        (unsigned long long)s.flows[0], (unsigned long long)s.flows[1], (unsigned long long)s.flows[2],
		        (unsigned long long)s.flows[3], (unsigned long long)s.unmatched, (unsigned long long)s.evicted,
		        (unsigned long long)s.lanes_made, (unsigned long long)s.skipped, (unsigned long long)s.jo.raw_bytes);
done:
	if (s.jo.zinit)
		deflateEnd(&s.jo.z);
	ev_output_abort(s.jo.out);
	free_state(&s);
	return status;
}

int main(int argc, char **argv)
{
	static const struct option longopts[] = {
		EV_CLI_COMMON_LONG,
		{ "gzip", no_argument, NULL, 'z' },
		{ "layout", required_argument, NULL, 1 },
		{ "rank-prefix", no_argument, NULL, 2 },
		{ "time", required_argument, NULL, 3 },
		{ "no-flows", no_argument, NULL, 4 },
		{ "no-counters", no_argument, NULL, 5 },
		{ "max-pending", required_argument, NULL, 6 },
		{ "max-events", required_argument, NULL, 9 },
		{ "verbose", no_argument, NULL, 'v' },
		{ NULL, 0, NULL, 0 },
	};
	struct opts o;
	int c;
	memset(&o, 0, sizeof o);
	ev_cli_init(&o.cli, "ev2perfetto");
	o.max_pending = 1000000;
	o.max_events = 20000000;
	while ((c = getopt_long(argc, argv, EV_CLI_COMMON_SHORT "zv", longopts, NULL)) != -1) {
		switch (ev_cli_common(&o.cli, c, optarg)) {
		case EV_CLI_HANDLED: continue;
		case EV_CLI_WANT_HELP: usage(stdout); return ev_cli_finish(&o.cli, 0);
		case EV_CLI_DONE: return ev_cli_finish(&o.cli, 0);
		default: break;
		}
		switch (c) {
		case 'z': o.gzip = 1; break;
		case 'v': o.verbose = 1; break;
		case 1:
			if (!strcmp(optarg, "rank")) o.layout = LAYOUT_RANK;
			else if (!strcmp(optarg, "aorta")) o.layout = LAYOUT_AORTA;
			else return ev_cli_usage_error(&o.cli, "--layout: expected rank or aorta, got '%s'", optarg);
			break;
		case 2: o.rank_prefix = 1; break;
		case 3:
			if (!strcmp(optarg, "relative")) o.absolute = 0;
			else if (!strcmp(optarg, "absolute")) o.absolute = 1;
			else return ev_cli_usage_error(&o.cli, "--time: expected relative or absolute, got '%s'", optarg);
			break;
		case 4: o.no_flows = 1; break;
		case 5: o.no_counters = 1; break;
		case 6:
			if (ev_parse_u64(optarg, &o.max_pending) || o.max_pending > 1000000000u)
				return ev_cli_usage_error(&o.cli, "--max-pending: expected 0 to 1000000000, got '%s'", optarg);
			break;
		case 9:
			if (ev_parse_u64(optarg, &o.max_events))
				return ev_cli_usage_error(&o.cli, "--max-events: expected a number of events, got '%s'", optarg);
			break;
		default:
			return ev_cli_try_help(&o.cli);
		}
	}
	static char *stdin_only[] = { (char *)"-" };
	o.inputs = optind < argc ? argv + optind : stdin_only;
	o.ninputs = optind < argc ? argc - optind : 1;
	ev_cli_cleanup_on_signal(NULL);
	return ev_cli_finish(&o.cli, run(&o));
}
