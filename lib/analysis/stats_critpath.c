/* SPDX-License-Identifier: MIT */
/*
 * stats_critpath.c - HTA's critical path of one rank
 * (critical_path_analysis): a graph whose nodes are the starts and ends
 * of the CPU ops, runtime calls and GPU events of one iteration window,
 * whose edges are HTA's (an op's own span, nesting on its thread, the CUDA
 * runtime lock, launch delay, kernel-to-kernel delay, GPU->CPU and GPU->GPU
 * synchronisation), and the longest path through it, as networkx's
 * dag_longest_path finds it (the same topological order, the same ties).
 *
 * The window is the --instance'th range whose name contains --annotation
 * (HTA's substring match over every event name, ProfilerStep by default;
 * an empty --annotation takes the whole trace): CPU events that start in
 * it, GPU events whose launching call does, cuda_sync events (kineto2ev
 * keeps their correlation and CUDA event in id, peer and aux).
 *
 * Across ranks (--table=cross, cross-summary; beyond HTA): the ranks'
 * graphs joined at each collective, whose end on every rank waits for the
 * last rank to arrive, so the path crosses to the rank that gated it.
 *
 * Memory: a rank's window is held (its events, 56 bytes each), and so are
 * the launches still waiting for their GPU event when it opens (at most
 * CP_PENDING) and the GPU events that finish the window's launches after
 * it; before the window and once those are in, records pass through.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/hta_rank.h"
#include "analysis/stats_impl.h"

#define CP_PENDING 65536u    /* launches before the window waiting for their GPU event */
#define CP_TAIL (1u << 20)   /* records after the window read for its launches' GPU events */
#define KK_DELAY_US 1500     /* HTA's KERNEL_KERNEL_DELAY_THRESHOLD_US */

enum { T_SUMMARY, T_PATH, T_CROSS, T_CROSS_SUMMARY };
enum ekind { E_RANGE, E_OP, E_API, E_GPU, E_SYNC };
enum esync { S_NONE, S_STREAM, S_EVENT, S_CONTEXT, S_WAIT };
enum etype { ET_OP, ET_DEP, ET_LAUNCH, ET_KK, ET_SYNC, ET_ARRIVE, ET_COLL };
static const char *const etype_name[] = { "operator", "dependency", "kernel_launch_delay", "kernel_kernel_delay",
	                                  "sync_dependency", "collective_arrival", "collective" };
enum bound { B_NONE, B_CPU, B_COMPUTE, B_COMM, B_KK, B_LAUNCH, NBOUND };
static const char *const bound_name[NBOUND] = { "dependency", "cpu_bound", "gpu_compute_bound",
	                                        "gpu_communication_bound", "gpu_kernel_kernel_overhead",
	                                        "gpu_kernel_launch_overhead" };

struct cpev {
	int64_t ts, end;      /* HTA's microseconds */
	uint64_t name;
	uint32_t thr;         /* thread (CPU) or stream (GPU) */
	uint32_t corr;        /* api, GPU event, sync: correlation */
	uint32_t wait_corr;   /* sync: its cudaEventRecord's correlation */
	int32_t wait_stream;  /* sync: the stream that event was recorded on, -1 */
	int32_t mate;         /* the correlated event, -1 */
	uint8_t kind, sync, launch, lock, blocking, record, streamwait, pre;
};

/* A path segment: an edge of the longest path. */
struct seg {
	int64_t ts;
	int64_t dur;
	uint64_t name;
	uint32_t sg, rank;
	uint8_t type, bound;
};

/* A collective kernel of a rank's window: its (communicator, seq) and
 * its times in the stream's ns, for the path across ranks. */
struct cinfo { uint64_t comm; uint32_t seq, kind; int32_t ev; uint32_t rank; int64_t ts_ns, end_ns; };

struct crank {
	struct hta_rank h;
	int64_t last_ts;      /* ns: the order check */
	int state;            /* 0 before the window, 1 in it, 2 after it, 3 done */
	uint32_t seen;        /* annotation instances seen */
	int64_t wstart, wend;
	uint64_t tail;        /* records read after the window */
	uint64_t open;        /* window launches without their GPU event yet */
	struct ev_vec ev;     /* struct cpev: the window */
	struct ev_vec pend;   /* struct cpev: launches before it */
	struct ev_map pidx;   /* corr -> pend position + 1 */
	struct ev_map wlaunch;/* corr -> 1 open, 2 closed */
	struct ev_vec path;   /* struct seg, after finish */
	struct ev_vec colls;  /* struct cinfo */
	int64_t gpu_ts;       /* ns, stream and index of the last GPU event kept */
	uint32_t gpu_stream;
	int32_t gpu_ev;
	int64_t total[NBOUND];
	uint64_t nseg[NBOUND];
	int failed;           /* the graph had a cycle or a negative span */
	uint64_t dropped_pending;
};

struct critpath {
	struct ev_vec ranks; /* struct crank */
	struct ev_map idx;
	struct ev_map match; /* name id -> 1 no, 2 yes (contains the annotation) */
	uint64_t no_window, cycles, pend_dropped, tail_cut;
	struct ev_vec cross; /* struct seg: the path across ranks, per source group */
};

int ev_stats_opts_instance(struct ev_stats_opts *o, const char *arg)
{
	char buf[64];
	uint32_t lo, hi;
	const char *colon = strchr(arg, ':');
	size_t n = colon ? (size_t)(colon - arg) : strlen(arg);
	if (n >= sizeof buf)
		return EV_ERR_ARG;
	memcpy(buf, arg, n);
	buf[n] = 0;
	if (ev_parse_u32(buf, &lo) != EV_OK || (colon ? ev_parse_u32(colon + 1, &hi) : (hi = lo, EV_OK)) != EV_OK ||
	    hi < lo || hi == UINT32_MAX)
		return EV_ERR_ARG;
	o->cp_inst_lo = lo;
	o->cp_inst_hi = hi;
	return EV_OK;
}

static const char *annotation(const struct ev_stats *s)
{
	return s->o.cp_annotation ? s->o.cp_annotation : "ProfilerStep";
}

static int cp_init(struct ev_stats *s)
{
	struct critpath *st = s->state;
	ev_vec_init(&st->ranks, sizeof(struct crank));
	ev_vec_init(&st->cross, sizeof(struct seg));
	ev_map_init(&st->idx);
	ev_map_init(&st->match);
	return EV_OK;
}

static int names_match(struct ev_stats *s, uint64_t name)
{
	struct critpath *st = s->state;
	if (!name)
		return 0;
	uint64_t *m = ev_map_get(&st->match, name);
	if (m)
		return *m == 2;
	int yes = strstr(str_of(s, name), annotation(s)) != NULL;
	return ev_map_put(&st->match, name, yes ? 2 : 1) == EV_OK ? yes : -1;
}

static enum esync sync_kind(const char *n)
{
	return !strcmp(n, "Stream Sync") ? S_STREAM : !strcmp(n, "Event Sync") ? S_EVENT
	       : !strcmp(n, "Context Sync") ? S_CONTEXT : !strcmp(n, "Stream Wait Event") ? S_WAIT : S_NONE;
}

static int is_gpu_event(const struct ev_rec *r)
{
	/* A coll or p2p record repeats its NCCL kernel (docs/FORMAT.md). */
	return r->type == EV_KERNEL || r->type == EV_MEMCPY || r->type == EV_MEMSET;
}

/* The record as an event of the graph; 0 when the graph has no use for it. */
static int make_ev(struct ev_stats *s, struct crank *cr, const struct ev_rec *r, struct cpev *e)
{
	memset(e, 0, sizeof *e);
	e->mate = -1;
	e->wait_stream = -1;
	hta_us(cr->h.json_base_ns, r->ts, ev_rec_end(r), &e->ts, &e->end);
	e->name = r->name;
	e->thr = r->stream;
	if (is_gpu_event(r)) {
		e->kind = E_GPU;
		e->corr = r->id;
		return 1;
	}
	const char *n = str_of(s, r->name);
	if (r->type == EV_API) {
		static const char *const lock[] = { "cudaHostAlloc", "cudaLaunchKernel", "cudaMemcpyAsync" };
		static const char *const blocking[] = { "cudaDeviceSynchronize", "cudaStreamSynchronize", "cudaEventQuery",
			                                "cudaEventSynchronize", "cudaMemcpy", "cudaMemcpyAsync" };
		e->kind = E_API;
		e->corr = r->id;
		e->launch = hta_launch_kind(n) != HTA_CALL_OTHER;
		for (size_t i = 0; i < sizeof lock / sizeof lock[0]; i++)
			e->lock |= !strcmp(n, lock[i]);
		for (size_t i = 0; i < sizeof blocking / sizeof blocking[0]; i++)
			e->blocking |= !strcmp(n, blocking[i]);
		e->record = !strcmp(n, "cudaEventRecord");
		e->streamwait = !strcmp(n, "cudaStreamWaitEvent");
		return 1;
	}
	if (r->type != EV_RANGE || r->op == EV_RG_GPU_USER)
		return 0;
	if ((e->sync = (uint8_t)sync_kind(n)) != S_NONE) {
		e->kind = E_SYNC;
		e->corr = r->id;
		e->wait_corr = r->aux;
		e->wait_stream = r->peer;
		return 1;
	}
	e->kind = r->op == EV_RG_CPU_OP ? E_OP : E_RANGE;
	return 1;
}

static int push_ev(struct ev_vec *v, const struct cpev *e);

/* Keep a window event; a GPU event is remembered for the coll record
 * that may follow it. */
static int keep(struct crank *cr, const struct ev_rec *r, const struct cpev *e)
{
	if (e->kind == E_GPU) {
		cr->gpu_ev = (int32_t)cr->ev.len;
		cr->gpu_ts = r->ts;
		cr->gpu_stream = r->stream;
	}
	return push_ev(&cr->ev, e);
}

static int push_ev(struct ev_vec *v, const struct cpev *e)
{
	struct cpev *p = ev_vec_push(v);
	if (!p)
		return EV_ERR_NOMEM;
	*p = *e;
	return EV_OK;
}

/* Before the window: launches wait for their GPU event (they count in the
 * queue length of the window's first launches). */
static int before(struct critpath *st, struct crank *cr, const struct cpev *e)
{
	if (e->kind == E_API && e->launch && e->corr) {
		if (cr->pend.len >= CP_PENDING) { /* forget the older half */
			struct cpev *p = cr->pend.data;
			size_t keep = cr->pend.len / 2, from = cr->pend.len - keep;
			memmove(p, p + from, keep * sizeof *p);
			cr->pend.len = keep;
			cr->dropped_pending += from;
			st->pend_dropped += from;
			ev_map_free(&cr->pidx);
			ev_map_init(&cr->pidx);
			for (size_t i = 0; i < keep; i++)
				if (p[i].corr && ev_map_put(&cr->pidx, p[i].corr, i + 1) != EV_OK)
					return EV_ERR_NOMEM;
		}
		if (push_ev(&cr->pend, e) != EV_OK || ev_map_put(&cr->pidx, e->corr, cr->pend.len) != EV_OK)
			return EV_ERR_NOMEM;
	} else if (e->kind == E_GPU && e->corr) {
		uint64_t *at = ev_map_get(&cr->pidx, e->corr);
		if (at && *at)
			((struct cpev *)cr->pend.data)[*at - 1].corr = 0; /* started: no longer queued */
	}
	return EV_OK;
}

static int open_window(struct crank *cr, int64_t ts, int64_t end)
{
	cr->state = 1;
	cr->wstart = ts;
	cr->wend = end;
	const struct cpev *p = cr->pend.data;
	for (size_t i = 0; i < cr->pend.len; i++)
		if (p[i].corr) {
			struct cpev e = p[i];
			e.pre = 1;
			if (push_ev(&cr->ev, &e) != EV_OK)
				return EV_ERR_NOMEM;
		}
	ev_vec_free(&cr->pend);
	ev_map_free(&cr->pidx);
	return EV_OK;
}

static int cp_rec(struct ev_stats *s, const struct ev_rec *r)
{
	struct critpath *st = s->state;
	int fresh;
	struct crank *cr = hta_rank_of(s, &st->ranks, &st->idx, r, &fresh);
	if (!cr)
		return EV_ERR_NOMEM;
	if (fresh) {
		cr->last_ts = INT64_MIN;
		ev_vec_init(&cr->ev, sizeof(struct cpev));
		ev_vec_init(&cr->pend, sizeof(struct cpev));
		ev_vec_init(&cr->path, sizeof(struct seg));
		ev_vec_init(&cr->colls, sizeof(struct cinfo));
		cr->gpu_ev = -1;
		ev_map_init(&cr->pidx);
		ev_map_init(&cr->wlaunch);
		if (!*annotation(s) && open_window(cr, INT64_MIN, INT64_MAX) != EV_OK)
			return EV_ERR_NOMEM;
	}
	if (r->ts < cr->last_ts) {
		s->order_last = cr->last_ts;
		return EV_ERR_ORDER;
	}
	cr->last_ts = r->ts;
	if (cr->state == 3)
		return EV_OK;
	if ((r->type == EV_COLL || r->type == EV_P2P) && cr->state > 0) {
		/* The collective of the NCCL kernel just before it. */
		if (cr->gpu_ev < 0 || cr->gpu_ts != r->ts || cr->gpu_stream != r->stream)
			return EV_OK;
		struct cinfo *c = ev_vec_push(&cr->colls);
		if (!c)
			return EV_ERR_NOMEM;
		*c = (struct cinfo){ r->comm, r->seq, (uint32_t)r->type << 8 | r->op, cr->gpu_ev, r->rank, r->ts,
			             ev_rec_end(r) };
		return EV_OK;
	}
	struct cpev e;
	int m = 0;
	if ((r->type == EV_RANGE || r->type == EV_MARK) && *annotation(s) && cr->seen <= s->o.cp_inst_hi &&
	    (m = names_match(s, r->name)) < 0)
		return EV_ERR_NOMEM;
	if (m) {
		/* Every event of the name counts, the GPU's copy of an
		 * annotation too, in time order (HTA's instance_id). */
		int64_t ts, end;
		uint32_t i = cr->seen++;
		hta_us(cr->h.json_base_ns, r->ts, ev_rec_end(r), &ts, &end);
		if (i == s->o.cp_inst_lo && cr->state == 0 && open_window(cr, ts, end) != EV_OK)
			return EV_ERR_NOMEM;
		else if (i > s->o.cp_inst_lo && i <= s->o.cp_inst_hi && end > cr->wend)
			cr->wend = end;
	}
	if (!make_ev(s, cr, r, &e))
		return EV_OK;
	if (cr->state == 0)
		return before(st, cr, &e);
	if (cr->state == 1 && *annotation(s) && cr->seen > s->o.cp_inst_hi && e.ts > cr->wend)
		cr->state = 2;
	if (cr->state == 2) {
		/* After the window only what finishes its launches matters;
		 * once they have their GPU events, nothing more. */
		if (!cr->open || ++cr->tail > CP_TAIL) {
			st->tail_cut += cr->open != 0;
			cr->state = 3;
			return EV_OK;
		}
		if (e.kind == E_GPU && e.corr) {
			uint64_t *w = ev_map_get(&cr->wlaunch, e.corr);
			if (w && *w == 1) {
				*w = 2;
				cr->open--;
			}
		}
		if (e.kind != E_GPU && e.kind != E_SYNC && !(e.kind == E_API && e.launch))
			return EV_OK;
		return keep(cr, r, &e);
	}
	if (e.kind == E_API && e.launch && e.corr && ev_map_get(&cr->wlaunch, e.corr) == NULL) {
		if (ev_map_put(&cr->wlaunch, e.corr, 1) != EV_OK)
			return EV_ERR_NOMEM;
		cr->open++;
	} else if (e.kind == E_GPU && e.corr) {
		uint64_t *w = ev_map_get(&cr->wlaunch, e.corr);
		if (w && *w == 1) {
			*w = 2;
			cr->open--;
		}
	}
	return keep(cr, r, &e);
}

/* ------------------------------------------------------------------ */
/* The graph. */

struct node { int64_t ts; int32_t ev; uint8_t start; };
struct edge { uint32_t u, v; int64_t w; int32_t attr; uint8_t type, dead; };

struct graph {
	struct cpev *e;
	size_t ne;
	struct node *nodes;
	size_t nn;
	int32_t *snode, *enode;   /* event -> its start and end node, -1 */
	int8_t *in;               /* event is in the window (has nodes or takes part) */
	struct ev_vec edges;      /* struct edge, in insertion order */
	struct ev_map eidx;       /* (u, v) -> edge + 1 */
	const uint32_t *rank_of;  /* event -> rank (across ranks), else NULL: rank */
	uint32_t sg, rank;
};

static int add_edge(struct graph *g, int32_t u, int32_t v, int type, int zero, int32_t attr)
{
	if (u < 0 || v < 0 || u == v)
		return EV_OK;
	int64_t w = type == ET_DEP || type == ET_SYNC || zero ? 0 : g->nodes[v].ts - g->nodes[u].ts;
	uint64_t key = ((uint64_t)(uint32_t)u << 32 | (uint32_t)v) + 1;
	uint64_t *at = ev_map_get(&g->eidx, key);
	struct edge *ed;
	if (at) { /* networkx keeps the edge's place and takes the new data */
		ed = (struct edge *)g->edges.data + (*at - 1);
	} else {
		if (!(ed = ev_vec_push(&g->edges)) || ev_map_put(&g->eidx, key, g->edges.len) != EV_OK)
			return EV_ERR_NOMEM;
		ed->attr = -2;
	}
	ed->u = (uint32_t)u;
	ed->v = (uint32_t)v;
	ed->w = w;
	ed->type = (uint8_t)type;
	if (type == ET_OP || type == ET_KK) {
		/* HTA's attribution: a span from a start is its event's, one
		 * into an end is that event's, one from an end to a start is
		 * the parent's; a kernel-kernel gap is the earlier kernel's. */
		const struct node *a = &g->nodes[u], *b = &g->nodes[v];
		ed->attr = type == ET_KK ? a->ev : a->start ? a->ev : !b->start ? b->ev : attr;
	}
	return EV_OK;
}

static int cmp_node(const void *pa, const void *pb)
{
	const struct node *a = pa, *b = pb;
	if (a->ts != b->ts)
		return a->ts < b->ts ? -1 : 1;
	if (a->ev != b->ev)
		return a->ev < b->ev ? -1 : 1;
	return b->start - a->start;
}

/* The runtime lock: cudaLaunchKernel, cudaMemcpyAsync and cudaHostAlloc
 * take one lock, so their ends chain in time order across threads. */
static int lock_edges(struct graph *g)
{
	struct ev_vec starts;
	ev_vec_init(&starts, sizeof(int32_t));
	int32_t last = -1;
	int rc = EV_OK;
	for (size_t i = 0; !rc && i < g->nn; i++) {
		const struct node *n = &g->nodes[i];
		if (!g->e[n->ev].lock)
			continue;
		if (n->start) {
			int32_t *p = ev_vec_push(&starts);
			if (!p)
				rc = EV_ERR_NOMEM;
			else
				*p = (int32_t)i;
		} else {
			while (!rc && starts.len) {
				int32_t p = ((int32_t *)starts.data)[--starts.len];
				rc = add_edge(g, p, (int32_t)i, g->nodes[p].ev == n->ev ? ET_OP : ET_DEP, 0, n->ev);
			}
			if (!rc && last >= 0 && !g->nodes[last].start)
				rc = add_edge(g, last, (int32_t)i, ET_DEP, 0, -1);
		}
		last = (int32_t)i;
	}
	ev_vec_free(&starts);
	return rc;
}

static int shares_lock(const struct graph *g, int32_t a, int32_t b)
{
	return g->e[g->nodes[a].ev].lock && g->e[g->nodes[b].ev].lock && (g->nodes[a].start || !g->nodes[b].start);
}

/* A thread's call stack, as HTA's CallStackGraph orders starts and ends. */
struct sev { int64_t t, dur; int32_t ev; int8_t start; };

static int cmp_sev(const void *pa, const void *pb)
{
	const struct sev *x = pa, *y = pb;
	if (x->ev == y->ev)
		return x->start ? -1 : 1;
	if (x->t != y->t)
		return x->t < y->t ? -1 : 1;
	if (x->start == y->start) {
		if (x->dur == y->dur)
			return x->start ? (x->ev < y->ev ? -1 : 1) : (x->ev < y->ev ? 1 : -1);
		return x->start ? (x->dur < y->dur ? 1 : -1) : (x->dur < y->dur ? -1 : 1);
	}
	return x->start ? 1 : -1;
}

struct walk { int32_t last, parent; int depth; };

static int enter_exit(struct graph *g, struct walk *w, int32_t ev, int32_t parent, int enter)
{
	int32_t n = enter ? g->snode[ev] : g->enode[ev];
	if (g->snode[ev] < 0 || g->enode[ev] < 0)
		return EV_OK;
	int rc = EV_OK;
	if (w->last >= 0 && !shares_lock(g, w->last, n))
		rc = add_edge(g, w->last, n, enter && w->depth == 0 ? ET_DEP : ET_OP, !enter && g->e[ev].blocking,
		              w->parent);
	w->last = n;
	w->parent = parent;
	w->depth += enter ? 1 : -1;
	return rc;
}

/* One thread: its events (CPU ranges, ops and calls of the window) nested
 * by time, walked depth first; edges between consecutive nodes. */
static int thread_edges(struct graph *g, const int32_t *evs, size_t n)
{
	struct sev *sv = malloc(2 * n * sizeof *sv + 1);
	int32_t *stack = malloc(n * sizeof *stack + 1), *parent = malloc(n * sizeof *parent + 1);
	int32_t *first = malloc(n * sizeof *first + 1), *next = malloc(n * sizeof *next + 1);
	int32_t *lastc = malloc(n * sizeof *lastc + 1);
	int rc = sv && stack && parent && first && next && lastc ? EV_OK : EV_ERR_NOMEM;
	for (size_t i = 0; !rc && i < n; i++) {
		const struct cpev *e = &g->e[evs[i]];
		sv[2 * i] = (struct sev){ e->ts, e->end - e->ts, (int32_t)i, 1 };
		sv[2 * i + 1] = (struct sev){ e->end, e->end - e->ts, (int32_t)i, 0 };
		first[i] = next[i] = lastc[i] = -1;
	}
	/* cmp_sev compares local indices, which follow event order. */
	if (!rc)
		qsort(sv, 2 * n, sizeof *sv, cmp_sev);
	int32_t top = 0, rfirst = -1, rlast = -1;
	for (size_t i = 0; !rc && i < 2 * n; i++) {
		int32_t k = sv[i].ev;
		if (sv[i].start) {
			int32_t p = top ? stack[top - 1] : -1;
			parent[k] = p;
			int32_t *f = p >= 0 ? &first[p] : &rfirst, *l = p >= 0 ? &lastc[p] : &rlast;
			if (*l >= 0)
				next[*l] = k;
			else
				*f = k;
			*l = k;
			stack[top++] = k;
		} else if (top) {
			top--;
		}
	}
	/* Depth first, without recursion: enter a node, its children, exit. */
	struct walk w = { -1, -1, 0 };
	int32_t cur = rfirst;
	while (!rc && cur >= 0) {
		int32_t pe = parent[cur] >= 0 ? evs[parent[cur]] : -1;
		rc = enter_exit(g, &w, evs[cur], pe, 1);
		if (first[cur] >= 0) {
			cur = first[cur];
			continue;
		}
		for (;;) {
			int32_t pe2 = parent[cur] >= 0 ? evs[parent[cur]] : -1;
			if (!rc)
				rc = enter_exit(g, &w, evs[cur], pe2, 0);
			if (next[cur] >= 0) {
				cur = next[cur];
				break;
			}
			cur = parent[cur];
			if (cur < 0)
				break;
		}
	}
	free(sv);
	free(stack);
	free(parent);
	free(first);
	free(next);
	free(lastc);
	return rc;
}

/* An event of a thread, to sort the window's CPU events by thread. */
struct tkey { uint32_t thr; int32_t ev; };

static int cmp_thr(const void *pa, const void *pb)
{
	const struct tkey *a = pa, *b = pb;
	if (a->thr != b->thr)
		return a->thr < b->thr ? -1 : 1;
	return a->ev < b->ev ? -1 : a->ev > b->ev;
}

/* HTA merges the backward thread into the forward one: the single thread
 * of CPU ops and annotations named ...forward..., and ...autograd.... */
static uint32_t unique_thread(struct ev_stats *s, const struct graph *g, const char *word, int *found)
{
	uint32_t t = 0;
	int n = 0;
	for (size_t i = 0; i < g->ne && n < 2; i++) {
		const struct cpev *e = &g->e[i];
		if (!g->in[i] || (e->kind != E_OP && e->kind != E_RANGE) || !strstr(str_of(s, e->name), word))
			continue;
		if (n == 0 || e->thr != t)
			n++;
		if (n == 1)
			t = e->thr;
	}
	*found = n == 1;
	return t;
}

static int stack_edges(struct ev_stats *s, struct graph *g)
{
	int ff, bf;
	uint32_t fwd = unique_thread(s, g, "forward", &ff), bwd = unique_thread(s, g, "autograd", &bf);
	struct tkey *tk = malloc(g->ne * sizeof *tk + 1);
	int32_t *list = malloc(g->ne * sizeof *list + 1);
	int rc = tk && list ? EV_OK : EV_ERR_NOMEM;
	size_t n = 0;
	for (size_t i = 0; !rc && i < g->ne; i++) {
		struct cpev *e = &g->e[i];
		if (!g->in[i] || (e->kind != E_OP && e->kind != E_RANGE && e->kind != E_API))
			continue;
		if (ff && bf && fwd != bwd && e->thr == bwd)
			e->thr = fwd;
		tk[n++] = (struct tkey){ e->thr, (int32_t)i };
	}
	if (!rc) {
		qsort(tk, n, sizeof *tk, cmp_thr);
		for (size_t i = 0; i < n; i++)
			list[i] = tk[i].ev;
	}
	for (size_t i = 0; !rc && i < n;) {
		size_t j = i;
		while (j < n && tk[j].thr == tk[i].thr)
			j++;
		rc = thread_edges(g, list + i, j - i);
		i = j;
	}
	free(tk);
	free(list);
	return rc;
}

/* HTA's queue length of each launch and GPU event: per stream +1 at a
 * launch call, -1 when its GPU event starts, in time order. */
struct qent { int64_t ts; uint32_t stream; int32_t ev; int8_t d; };

static int cmp_q(const void *pa, const void *pb)
{
	const struct qent *a = pa, *b = pb;
	if (a->stream != b->stream)
		return a->stream < b->stream ? -1 : 1;
	if (a->ts != b->ts)
		return a->ts < b->ts ? -1 : 1;
	if (a->d != b->d)
		return a->d > b->d ? -1 : 1;
	return a->ev < b->ev ? -1 : a->ev > b->ev;
}

static int queue_lengths(struct graph *g, int64_t *q)
{
	struct qent *v = malloc(2 * g->ne * sizeof *v + 1);
	if (!v)
		return EV_ERR_NOMEM;
	size_t n = 0;
	for (size_t i = 0; i < g->ne; i++) {
		q[i] = INT64_MIN;
		const struct cpev *e = &g->e[i];
		if (e->kind != E_API || !e->launch || e->mate < 0)
			continue;
		const struct cpev *k = &g->e[e->mate];
		v[n++] = (struct qent){ e->ts, k->thr, (int32_t)i, 1 };
		v[n++] = (struct qent){ k->ts, k->thr, e->mate, -1 };
	}
	qsort(v, n, sizeof *v, cmp_q);
	int64_t len = 0;
	for (size_t i = 0; i < n; i++) {
		if (i == 0 || v[i].stream != v[i - 1].stream)
			len = 0;
		len += v[i].d;
		q[v[i].ev] = len;
	}
	free(v);
	return EV_OK;
}

/* The launch calls by the stream of their GPU event, in time order, for
 * HTA's previous launch (before a cudaEventRecord, on the recorded
 * stream) and next launch (after a cudaStreamWaitEvent, on its thread
 * and the waiting stream); and each recorded CUDA event's stream. */
struct lkey { uint32_t stream; int32_t ev; int64_t ts; };

struct launches {
	const struct cpev *e;
	struct lkey *ix;     /* launch calls by (their GPU event's stream, ts, index) */
	size_t n;
	struct ev_map rstream; /* cudaEventRecord correlation -> stream + 1 */
};

static int cmp_launch(const void *pa, const void *pb)
{
	const struct lkey *a = pa, *b = pb;
	if (a->stream != b->stream)
		return a->stream < b->stream ? -1 : 1;
	if (a->ts != b->ts)
		return a->ts < b->ts ? -1 : 1;
	return a->ev < b->ev ? -1 : a->ev > b->ev;
}

static int launches_init(struct launches *L, const struct graph *g)
{
	memset(L, 0, sizeof *L);
	L->e = g->e;
	ev_map_init(&L->rstream);
	if (!(L->ix = malloc(g->ne * sizeof *L->ix + 1)))
		return EV_ERR_NOMEM;
	for (size_t i = 0; i < g->ne; i++) {
		const struct cpev *e = &g->e[i];
		if (e->kind == E_API && e->launch && e->mate >= 0)
			L->ix[L->n++] = (struct lkey){ g->e[e->mate].thr, (int32_t)i, e->ts };
		if (e->kind == E_SYNC && e->wait_stream >= 0 && e->wait_corr && !ev_map_get(&L->rstream, e->wait_corr) &&
		    ev_map_put(&L->rstream, e->wait_corr, (uint64_t)e->wait_stream + 1) != EV_OK)
			return EV_ERR_NOMEM;
	}
	qsort(L->ix, L->n, sizeof *L->ix, cmp_launch);
	return EV_OK;
}

static void launches_free(struct launches *L)
{
	free(L->ix);
	ev_map_free(&L->rstream);
}

/* The first launch on stream with ts >= t (or > t when after_eq is 0). */
static size_t launch_lower(const struct launches *L, uint32_t stream, int64_t t, int after_eq)
{
	size_t lo = 0, hi = L->n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		const struct lkey *x = &L->ix[mid];
		if (x->stream < stream || (x->stream == stream && (after_eq ? x->ts < t : x->ts <= t)))
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

static int32_t near_launch(const struct launches *L, int32_t call, uint32_t stream, int after)
{
	const struct cpev *c = &L->e[call];
	if (!after) { /* the last launch at or before the call */
		size_t k = launch_lower(L, stream, c->ts, 0);
		return k > 0 && L->ix[k - 1].stream == stream ? L->ix[k - 1].ev : -1;
	}
	for (size_t k = launch_lower(L, stream, c->ts, 1); k < L->n && L->ix[k].stream == stream; k++)
		if (L->e[L->ix[k].ev].thr == c->thr)
			return L->ix[k].ev;
	return -1;
}

/* The GPU event that a sync waits on (Event Sync, Stream Wait Event): the
 * last launch on the recorded stream before the cudaEventRecord. */
static int32_t sync_source(const struct launches *L, const struct cpev *e, const struct ev_map *corr_api)
{
	if (!e->wait_corr)
		return -1;
	uint64_t *rec = ev_map_get(corr_api, e->wait_corr), *st = ev_map_get(&L->rstream, e->wait_corr);
	if (!rec || !st || !L->e[*rec - 1].record)
		return -1;
	int32_t l = near_launch(L, (int32_t)(*rec - 1), (uint32_t)(*st - 1), 0);
	return l >= 0 ? L->e[l].mate : -1;
}

struct kord { int64_t key; int32_t ev; };

static int cmp_kord(const void *pa, const void *pb)
{
	const struct kord *a = pa, *b = pb;
	if (a->key != b->key)
		return a->key < b->key ? -1 : 1;
	return a->ev < b->ev ? -1 : a->ev > b->ev;
}

/* Kernels in start order (syncs at their end): launch delay, kernel-kernel
 * delay and sync edges. */
static int kernel_edges(struct graph *g, const struct ev_map *corr_api)
{
	int64_t *q = malloc(g->ne * sizeof *q + 1);
	int32_t *ksync = malloc(g->ne * sizeof *ksync + 1);
	struct kord *ko = malloc(g->ne * sizeof *ko + 1);
	struct ev_map lastk; /* stream + 1 -> end node + 1 */
	ev_map_init(&lastk);
	struct ev_vec streams;
	ev_vec_init(&streams, sizeof(uint32_t));
	struct launches L;
	int rc = launches_init(&L, g);
	rc = rc ? rc : q && ksync && ko ? queue_lengths(g, q) : EV_ERR_NOMEM;
	size_t nk = 0;
	for (size_t i = 0; !rc && i < g->ne; i++) {
		ksync[i] = -1;
		const struct cpev *e = &g->e[i];
		if (!g->in[i] || (e->kind != E_GPU && e->kind != E_SYNC))
			continue;
		ko[nk++] = (struct kord){ e->kind == E_SYNC ? e->end : e->ts, (int32_t)i };
	}
	if (!rc)
		qsort(ko, nk, sizeof *ko, cmp_kord);
	for (size_t j = 0; !rc && j < nk; j++) {
		int32_t i = ko[j].ev;
		const struct cpev *e = &g->e[i];
		if (e->kind == E_SYNC) {
			if (e->sync == S_EVENT || e->sync == S_WAIT) {
				int32_t src = sync_source(&L, e, corr_api);
				if (src < 0 || e->mate < 0)
					continue;
				if (e->sync == S_WAIT) {
					int32_t l = near_launch(&L, e->mate, e->thr, 1);
					if (l >= 0 && g->e[l].mate >= 0)
						ksync[g->e[l].mate] = src;
				} else if (g->enode[src] >= 0) {
					rc = add_edge(g, g->enode[src], g->enode[e->mate], ET_SYNC, 0, -1);
				}
				continue;
			}
			if (e->mate < 0)
				continue;
			for (size_t k = 0; !rc && k < streams.len; k++) {
				uint32_t sm = ((uint32_t *)streams.data)[k];
				uint64_t *ln = ev_map_get(&lastk, (uint64_t)sm + 1);
				if (ln && (e->sync == S_CONTEXT || sm == e->thr))
					rc = add_edge(g, (int32_t)(*ln - 1), g->enode[e->mate], ET_SYNC, 0, -1);
			}
			continue;
		}
		int32_t sn = g->snode[i], en = g->enode[i];
		if (sn < 0 || en < 0)
			continue;
		if ((rc = add_edge(g, sn, en, ET_OP, 0, -1)) != EV_OK)
			break;
		int32_t src = ksync[i], src_end = -1;
		if (src >= 0) {
			src_end = g->enode[src];
			if (src_end >= 0 && (rc = add_edge(g, src_end, sn, ET_SYNC, 0, -1)) != EV_OK)
				break;
			if (src_end < 0)
				src = -1;
			ksync[i] = -1;
		}
		uint64_t *ln = ev_map_get(&lastk, (uint64_t)e->thr + 1);
		int32_t last = ln ? (int32_t)(*ln - 1) : -1;
		const struct cpev *call = e->mate >= 0 ? &g->e[e->mate] : NULL;
		if (call && e->mate >= 0 && q[e->mate] == 1 && q[i] == 0 && (last < 0 || g->nodes[last].ts < call->ts) &&
		    (src < 0 || g->nodes[src_end].ts < call->ts) && g->snode[e->mate] >= 0) {
			rc = add_edge(g, g->snode[e->mate], sn, ET_LAUNCH, 0, -1);
		} else if (last >= 0 && g->nodes[sn].ts - g->nodes[last].ts < KK_DELAY_US &&
		           (src < 0 || g->nodes[src_end].ts < g->nodes[last].ts)) {
			rc = add_edge(g, last, sn, ET_KK, 0, -1);
		}
		if (!rc && !ln) {
			uint32_t *p = ev_vec_push(&streams);
			if (!p)
				rc = EV_ERR_NOMEM;
			else
				*p = e->thr;
		}
		if (!rc)
			rc = ev_map_put(&lastk, (uint64_t)e->thr + 1, (uint64_t)en + 1);
	}
	launches_free(&L);
	free(q);
	free(ksync);
	free(ko);
	ev_map_free(&lastk);
	ev_vec_free(&streams);
	return rc;
}

static int comm_name(const char *n)
{
	return !strncmp(n, "nccl", 4) || !strncmp(n, "hip", 3) || !strncmp(n, "hccl", 4) || strstr(n, "ncclKernel");
}

/* networkx's dag_longest_path: Kahn's generations in node order, each
 * node's best predecessor the first of the largest in edge order.  The
 * path's segments go to out; *cycle is set when the graph has one. */
static int longest_path(struct ev_stats *s, struct graph *g, struct ev_vec *out, int *cycle)
{
	size_t nn = g->nn, ne = g->edges.len;
	const struct edge *ed = g->edges.data;
	uint32_t *indeg = calloc(nn + 1, sizeof *indeg), *soff = calloc(nn + 2, sizeof *soff);
	uint32_t *poff = calloc(nn + 2, sizeof *poff), *sl = malloc(ne * sizeof *sl + 1), *pl = malloc(ne * sizeof *pl + 1);
	uint32_t *order = malloc(nn * sizeof *order + 1), *fill = calloc(nn + 1, sizeof *fill);
	int64_t *dist = malloc(nn * sizeof *dist + 1);
	int32_t *from = malloc(nn * sizeof *from + 1), *via = malloc(nn * sizeof *via + 1);
	int rc = indeg && soff && poff && sl && pl && order && fill && dist && from && via ? EV_OK : EV_ERR_NOMEM;
	size_t no = 0;
	if (!rc) {
		for (size_t i = 0; i < ne; i++) {
			if (ed[i].dead) /* a span a collective across ranks replaced */
				continue;
			soff[ed[i].u + 1]++;
			poff[ed[i].v + 1]++;
			indeg[ed[i].v]++;
		}
		for (size_t i = 0; i < nn; i++) {
			soff[i + 1] += soff[i];
			poff[i + 1] += poff[i];
		}
		for (size_t i = 0; i < ne; i++)
			if (!ed[i].dead)
				sl[soff[ed[i].u] + fill[ed[i].u]++] = (uint32_t)i;
		memset(fill, 0, (nn + 1) * sizeof *fill);
		for (size_t i = 0; i < ne; i++)
			if (!ed[i].dead)
				pl[poff[ed[i].v] + fill[ed[i].v]++] = (uint32_t)i;
		size_t head = 0;
		for (size_t i = 0; i < nn; i++)
			if (!indeg[i])
				order[no++] = (uint32_t)i;
		while (head < no) { /* generations: a FIFO keeps their order */
			uint32_t u = order[head++];
			for (uint32_t k = soff[u]; k < soff[u + 1]; k++)
				if (--indeg[ed[sl[k]].v] == 0)
					order[no++] = ed[sl[k]].v;
		}
		if (no < nn)
			*cycle = 1;
	}
	for (size_t j = 0; !rc && no == nn && j < nn; j++) {
		uint32_t v = order[j];
		int64_t best = 0;
		int32_t bu = -1, be = -1;
		for (uint32_t k = poff[v]; k < poff[v + 1]; k++) {
			const struct edge *x = &ed[pl[k]];
			int64_t d = dist[x->u] + (x->w < 0 ? 0 : x->w); /* HTA's validation zeroes negative weights */
			if (bu < 0 || d > best) {
				best = d;
				bu = (int32_t)x->u;
				be = (int32_t)pl[k];
			}
		}
		if (bu < 0 || best < 0) {
			best = 0;
			bu = -1;
		}
		dist[v] = best;
		from[v] = bu;
		via[v] = be;
	}
	if (!rc && no == nn && nn) {
		uint32_t end = order[0];
		for (size_t j = 1; j < nn; j++)
			if (dist[order[j]] > dist[end])
				end = order[j];
		size_t len = 0, base = out->len;
		for (int32_t v = (int32_t)end; from[v] >= 0; v = from[v])
			len++;
		for (size_t k = 0; k < len && !rc; k++)
			if (!ev_vec_push(out))
				rc = EV_ERR_NOMEM;
		size_t k = base + len;
		for (int32_t v = (int32_t)end; !rc && from[v] >= 0; v = from[v]) {
			const struct edge *x = &ed[via[v]];
			struct seg *p = (struct seg *)out->data + --k;
			const struct cpev *ae = x->attr >= 0 ? &g->e[x->attr] : NULL;
			p->ts = g->nodes[x->u].ts;
			p->dur = x->w;
			p->type = x->type;
			p->name = ae ? ae->name : 0;
			p->sg = g->sg;
			p->rank = g->rank_of ? g->rank_of[g->nodes[x->type == ET_ARRIVE ? x->u : x->v].ev] : g->rank;
			if (x->type == ET_KK)
				p->bound = B_KK;
			else if (x->type == ET_LAUNCH)
				p->bound = B_LAUNCH;
			else if (x->type == ET_COLL)
				p->bound = B_COMM;
			else if ((x->type != ET_OP && x->type != ET_ARRIVE) || !ae)
				p->bound = B_NONE;
			else if (ae->kind != E_GPU)
				p->bound = B_CPU;
			else
				p->bound = comm_name(str_of(s, p->name)) ? B_COMM : B_COMPUTE;
			if (x->type == ET_ARRIVE)
				p->bound = B_NONE;
		}
	}
	free(indeg);
	free(soff);
	free(poff);
	free(sl);
	free(pl);
	free(order);
	free(fill);
	free(dist);
	free(from);
	free(via);
	return rc;
}

static void graph_free(struct graph *g)
{
	free(g->snode);
	free(g->enode);
	free(g->in);
	free(g->nodes);
	ev_vec_free(&g->edges);
	ev_map_free(&g->eidx);
	memset(g, 0, sizeof *g);
}

/* A rank's graph: its window's events, their nodes in time order, HTA's
 * edges. */
static int build_graph(struct ev_stats *s, struct crank *cr, struct graph *g)
{
	memset(g, 0, sizeof *g);
	g->e = cr->ev.data;
	g->ne = cr->ev.len;
	g->sg = cr->h.sg;
	g->rank = cr->h.rank;
	ev_vec_init(&g->edges, sizeof(struct edge));
	ev_map_init(&g->eidx);
	struct ev_map corr_api, corr_gpu;
	ev_map_init(&corr_api);
	ev_map_init(&corr_gpu);
	g->snode = malloc(g->ne * sizeof *g->snode + 1);
	g->enode = malloc(g->ne * sizeof *g->enode + 1);
	g->in = calloc(g->ne + 1, 1);
	g->nodes = malloc(2 * g->ne * sizeof *g->nodes + 1);
	int rc = g->snode && g->enode && g->in && g->nodes ? EV_OK : EV_ERR_NOMEM;
	int64_t ws = cr->wstart, we = cr->wend;
	if (!rc && !*annotation(s)) { /* the whole trace */
		ws = INT64_MAX;
		we = INT64_MIN;
		for (size_t i = 0; i < g->ne; i++) {
			ws = g->e[i].ts < ws ? g->e[i].ts : ws;
			we = g->e[i].end > we ? g->e[i].end : we;
		}
	}
	/* Correlation: a call and its GPU event (or cuda_sync event). */
	for (size_t i = 0; !rc && i < g->ne; i++) {
		struct cpev *e = &g->e[i];
		g->snode[i] = g->enode[i] = -1;
		if (!e->corr || (e->kind != E_API && e->kind != E_GPU && e->kind != E_SYNC))
			continue;
		struct ev_map *m = e->kind == E_API ? &corr_api : &corr_gpu;
		if (!ev_map_get(m, e->corr))
			rc = ev_map_put(m, e->corr, i + 1);
	}
	for (size_t i = 0; !rc && i < g->ne; i++) {
		struct cpev *e = &g->e[i];
		if (!e->corr || (e->kind != E_API && e->kind != E_GPU && e->kind != E_SYNC))
			continue;
		uint64_t *m = ev_map_get(e->kind == E_API ? &corr_gpu : &corr_api, e->corr);
		if (m)
			e->mate = (int32_t)(*m - 1);
	}
	/* The window: CPU events that start in it, GPU events whose call
	 * does, every Stream Wait Event (as HTA). */
	for (size_t i = 0; !rc && i < g->ne; i++) {
		const struct cpev *e = &g->e[i];
		if (e->kind == E_GPU || (e->kind == E_SYNC && (e->sync == S_STREAM || e->sync == S_WAIT))) {
			const struct cpev *c = e->mate >= 0 ? &g->e[e->mate] : NULL;
			g->in[i] = (c && !c->pre && c->ts >= ws && c->ts <= we && c->end > c->ts) || e->sync == S_WAIT;
		} else {
			g->in[i] = !e->pre && e->ts >= ws && e->ts <= we && e->end > e->ts;
		}
	}
	for (size_t i = 0; !rc && i < g->ne; i++) {
		const struct cpev *e = &g->e[i];
		if (!g->in[i] || !(e->kind == E_OP || e->kind == E_API || (e->kind == E_GPU && e->mate >= 0)))
			continue;
		g->nodes[g->nn++] = (struct node){ e->ts, (int32_t)i, 1 };
		g->nodes[g->nn++] = (struct node){ e->end, (int32_t)i, 0 };
	}
	if (!rc) {
		qsort(g->nodes, g->nn, sizeof *g->nodes, cmp_node);
		for (size_t i = 0; i < g->nn; i++)
			(g->nodes[i].start ? g->snode : g->enode)[g->nodes[i].ev] = (int32_t)i;
		rc = lock_edges(g);
	}
	if (!rc)
		rc = stack_edges(s, g);
	if (!rc)
		rc = kernel_edges(g, &corr_api);
	ev_map_free(&corr_api);
	ev_map_free(&corr_gpu);
	return rc;
}

static void tally(struct crank *cr)
{
	const struct seg *p = cr->path.data;
	for (size_t i = 0; i < cr->path.len; i++) {
		cr->total[p[i].bound] += p[i].dur; /* HTA sums the edges' own weights */
		cr->nseg[p[i].bound]++;
	}
}

static int cmp_cinfo(const void *pa, const void *pb)
{
	const struct cinfo *a = pa, *b = pb;
	if (a->comm != b->comm)
		return a->comm < b->comm ? -1 : 1;
	if (a->kind != b->kind)
		return a->kind < b->kind ? -1 : 1;
	if (a->seq != b->seq)
		return a->seq < b->seq ? -1 : 1;
	return a->rank < b->rank ? -1 : a->rank > b->rank;
}

/* The ranks of source group sg as one graph: each rank's, and for every
 * collective seen on two ranks or more a node where the last rank
 * arrives: each rank's kernel start leads to it, and it leads to each
 * rank's kernel end by the time from the last arrival to that end (the
 * wait before it is nobody's work), in place of the kernel's own span. */
static int cross_path(struct ev_stats *s, uint32_t sg, int *cycle)
{
	struct critpath *st = s->state;
	struct graph u;
	memset(&u, 0, sizeof u);
	ev_vec_init(&u.edges, sizeof(struct edge));
	ev_map_init(&u.eidx);
	u.sg = sg;
	size_t ne = 0, nn = 0, nc = 0;
	for (size_t i = 0; i < st->ranks.len; i++) {
		const struct crank *cr = (struct crank *)st->ranks.data + i;
		if (cr->h.sg == sg && cr->state) {
			ne += cr->ev.len;
			nc += cr->colls.len;
		}
	}
	struct cpev *ev = malloc(ne * sizeof *ev + 1);
	uint32_t *rank_of = malloc(ne * sizeof *rank_of + 1);
	struct cinfo *ci = malloc(nc * sizeof *ci + 1);
	u.nodes = malloc((2 * ne + nc) * sizeof *u.nodes + 1);
	int rc = ev && rank_of && ci && u.nodes ? EV_OK : EV_ERR_NOMEM;
	int32_t *snode = malloc(ne * sizeof *snode + 1), *enode = malloc(ne * sizeof *enode + 1);
	rc = rc ? rc : snode && enode ? EV_OK : EV_ERR_NOMEM;
	size_t eb = 0, ci_n = 0;
	for (size_t i = 0; !rc && i < st->ranks.len; i++) {
		struct crank *cr = (struct crank *)st->ranks.data + i;
		if (cr->h.sg != sg || !cr->state)
			continue;
		struct graph g;
		if ((rc = build_graph(s, cr, &g)) == EV_OK) {
			memcpy(ev + eb, g.e, g.ne * sizeof *ev);
			for (size_t k = 0; k < g.ne; k++) {
				rank_of[eb + k] = cr->h.rank;
				snode[eb + k] = g.snode[k] >= 0 ? g.snode[k] + (int32_t)nn : -1;
				enode[eb + k] = g.enode[k] >= 0 ? g.enode[k] + (int32_t)nn : -1;
			}
			for (size_t k = 0; k < g.nn; k++) {
				u.nodes[nn + k] = g.nodes[k];
				u.nodes[nn + k].ev += (int32_t)eb;
			}
			const struct edge *x = g.edges.data;
			for (size_t k = 0; !rc && k < g.edges.len; k++) {
				struct edge *y = ev_vec_push(&u.edges);
				if (!y) {
					rc = EV_ERR_NOMEM;
					break;
				}
				*y = x[k];
				y->u += (uint32_t)nn;
				y->v += (uint32_t)nn;
				if (y->attr >= 0)
					y->attr += (int32_t)eb;
				/* A collective kernel's own span: replaced below. */
				y->dead = y->type == ET_OP && y->attr >= 0 && snode[y->attr] == (int32_t)y->u &&
				          enode[y->attr] == (int32_t)y->v;
			}
			const struct cinfo *c = cr->colls.data;
			for (size_t k = 0; k < cr->colls.len; k++) {
				ci[ci_n] = c[k];
				ci[ci_n++].ev += (int32_t)eb;
			}
			nn += g.nn;
			eb += g.ne;
		}
		graph_free(&g);
	}
	/* Spans of kernels that are not collectives across ranks stay. */
	int8_t *coll = calloc(eb + 1, 1);
	rc = rc ? rc : coll ? EV_OK : EV_ERR_NOMEM;
	if (!rc)
		qsort(ci, ci_n, sizeof *ci, cmp_cinfo);
	for (size_t i = 0; !rc && i < ci_n;) {
		size_t j = i, last = i;
		while (j < ci_n && ci[j].comm == ci[i].comm && ci[j].kind == ci[i].kind && ci[j].seq == ci[i].seq)
			j++;
		for (size_t k = i; k < j; k++)
			if (ci[k].ts_ns > ci[last].ts_ns)
				last = k;
		int ok = j - i >= 2 && snode[ci[last].ev] >= 0;
		for (size_t k = i; ok && k < j; k++)
			ok = snode[ci[k].ev] >= 0 && enode[ci[k].ev] >= 0;
		if (ok) {
			int32_t a = (int32_t)nn;
			u.nodes[nn++] = (struct node){ u.nodes[snode[ci[last].ev]].ts, ci[last].ev, 1 };
			for (size_t k = i; !rc && k < j; k++) {
				coll[ci[k].ev] = 1;
				struct edge *y = ev_vec_push(&u.edges);
				if (!y) {
					rc = EV_ERR_NOMEM;
					break;
				}
				*y = (struct edge){ (uint32_t)snode[ci[k].ev], (uint32_t)a, 0, ci[k].ev, ET_ARRIVE, 0 };
			}
			for (size_t k = i; !rc && k < j; k++) {
				struct edge *y = ev_vec_push(&u.edges);
				if (!y) {
					rc = EV_ERR_NOMEM;
					break;
				}
				int64_t w = ci[k].end_ns > ci[last].ts_ns ? (ci[k].end_ns - ci[last].ts_ns + 500) / 1000 : 0;
				*y = (struct edge){ (uint32_t)a, (uint32_t)enode[ci[k].ev], w, ci[k].ev, ET_COLL, 0 };
			}
		}
		i = j;
	}
	struct edge *x = u.edges.data;
	for (size_t k = 0; !rc && k < u.edges.len; k++)
		if (x[k].dead && !coll[x[k].attr])
			x[k].dead = 0;
	u.e = ev;
	u.ne = eb;
	u.nn = nn;
	u.rank_of = rank_of;
	if (!rc)
		rc = longest_path(s, &u, &st->cross, cycle);
	free(coll);
	free(ev);
	free(rank_of);
	free(ci);
	free(snode);
	free(enode);
	free(u.nodes);
	ev_vec_free(&u.edges);
	ev_map_free(&u.eidx);
	return rc;
}

static int cp_finish(struct ev_stats *s)
{
	struct critpath *st = s->state;
	int rc = EV_OK, cross = s->o.table == T_CROSS || s->o.table == T_CROSS_SUMMARY;
	for (size_t i = 0; !rc && i < st->ranks.len; i++) {
		struct crank *cr = (struct crank *)st->ranks.data + i;
		if (cr->state == 0) {
			st->no_window++;
			continue;
		}
		if (cross)
			continue;
		struct graph g;
		int cycle = 0;
		rc = build_graph(s, cr, &g);
		if (!rc)
			rc = longest_path(s, &g, &cr->path, &cycle);
		graph_free(&g);
		tally(cr);
		st->cycles += (uint64_t)cycle;
		s->n.selected += cr->path.len;
		ev_vec_free(&cr->ev);
	}
	/* Across ranks: one path per source group. */
	for (size_t i = 0; cross && !rc && i < st->ranks.len; i++) {
		const struct crank *cr = (struct crank *)st->ranks.data + i;
		int first = cr->state != 0, cycle = 0;
		for (size_t k = 0; first && k < i; k++)
			first = ((struct crank *)st->ranks.data)[k].h.sg != cr->h.sg || !((struct crank *)st->ranks.data)[k].state;
		if (first) {
			rc = cross_path(s, cr->h.sg, &cycle);
			st->cycles += (uint64_t)cycle;
		}
	}
	s->n.selected += st->cross.len;
	return rc;
}

/* One row: the --by keys, then rank and the table's own keys. */
static int seg_row(struct ev_stats *s, struct ev_rowset *rs, uint32_t sg, uint32_t rank, struct ev_row **row, size_t *n)
{
	struct gkey k = { .sg = sg, .rank = rank };
	int rc = group_row(s, rs, &k, row, n);
	if (!rc && !has_by(&s->o, EV_BY_RANK))
		rc = ev_row_keyu(*row, (*n)++, rank);
	return rc;
}

static int path_rows(struct ev_stats *s, struct ev_rowset *rs, const struct seg *sg, size_t n)
{
	int rc = EV_OK;
	for (size_t j = 0; !rc && j < n; j++) {
		struct ev_row *row;
		size_t k;
		if ((rc = seg_row(s, rs, sg[j].sg, sg[j].rank, &row, &k)) != EV_OK)
			break;
		rc = ev_row_keyu(row, k++, j);
		rc = rc ? rc : ev_row_key(row, k++, etype_name[sg[j].type]);
		rc = rc ? rc : ev_row_key(row, k++, sg[j].bound == B_NONE ? "" : bound_name[sg[j].bound]);
		rc = rc ? rc : ev_row_key(row, k, str_of(s, sg[j].name));
		row->val[0] = (double)sg[j].ts;
		row->val[1] = (double)sg[j].dur;
	}
	return rc;
}

static int sum_rows(struct ev_stats *s, struct ev_rowset *rs, uint32_t sg, uint32_t rank, const int64_t *total,
                    const uint64_t *nseg, int64_t all)
{
	int rc = EV_OK;
	for (int b = 0; !rc && b < NBOUND; b++) {
		if (!nseg[b])
			continue;
		struct ev_row *row;
		size_t k;
		if ((rc = seg_row(s, rs, sg, rank, &row, &k)) != EV_OK)
			break;
		rc = ev_row_key(row, k, bound_name[b]);
		row->val[0] = (double)total[b];
		row->val[1] = all ? (double)total[b] / (double)all * 100.0 : NAN; /* HTA's order of operations */
	}
	return rc;
}

/* The path across ranks by rank and bound, in percent of the whole path. */
static int cross_sum_rows(struct ev_stats *s, struct ev_rowset *rs)
{
	struct critpath *st = s->state;
	const struct seg *p = st->cross.data;
	int rc = EV_OK;
	for (size_t i = 0; !rc && i < st->cross.len;) {
		size_t j = i;
		int64_t all = 0;
		while (j < st->cross.len && p[j].sg == p[i].sg)
			all += p[j++].dur;
		/* Ranks in the order the path first reaches them. */
		for (size_t a = i; !rc && a < j; a++) {
			int seen = 0;
			for (size_t b = i; b < a && !seen; b++)
				seen = p[b].rank == p[a].rank;
			if (seen)
				continue;
			int64_t total[NBOUND] = { 0 };
			uint64_t nseg[NBOUND] = { 0 };
			for (size_t b = a; b < j; b++)
				if (p[b].rank == p[a].rank) {
					total[p[b].bound] += p[b].dur;
					nseg[p[b].bound]++;
				}
			rc = sum_rows(s, rs, p[a].sg, p[a].rank, total, nseg, all);
		}
		i = j;
	}
	return rc;
}

static int cp_rows(struct ev_stats *s, struct ev_rowset *rs)
{
	struct critpath *st = s->state;
	struct ev_colspec keys[EV_STATS_MAX_BY + 5];
	size_t nk = 0;
	by_colspecs(&s->o, keys, &nk);
	int path = s->o.table == T_PATH || s->o.table == T_CROSS;
	if (!has_by(&s->o, EV_BY_RANK))
		keys[nk++] = (struct ev_colspec){ "rank", 1, 0 };
	if (path) {
		keys[nk++] = (struct ev_colspec){ "seq", 1, 0 };
		keys[nk++] = (struct ev_colspec){ "type", 0, 0 };
	}
	keys[nk++] = (struct ev_colspec){ "bound_by", 0, 0 };
	if (path)
		keys[nk++] = (struct ev_colspec){ "name", 0, 0 };
	static const struct ev_colspec pvals[] = { { "start_us", 0, 0 }, { "duration_us", 0, EV_DIR_LOWER } };
	static const struct ev_colspec svals[] = { { "duration_us", 0, EV_DIR_LOWER }, { "percent", 0, 0 } };
	int rc = ev_rowset_init(rs, keys, nk, path ? pvals : svals, 2);
	if (rc)
		return rc;
	if (s->o.table == T_CROSS)
		return path_rows(s, rs, st->cross.data, st->cross.len);
	if (s->o.table == T_CROSS_SUMMARY)
		return cross_sum_rows(s, rs);
	for (size_t i = 0; !rc && i < st->ranks.len; i++) {
		const struct crank *cr = (struct crank *)st->ranks.data + i;
		if (path) {
			rc = path_rows(s, rs, cr->path.data, cr->path.len);
			continue;
		}
		int64_t all = 0;
		for (int b = 0; b < NBOUND; b++)
			all += cr->total[b];
		rc = sum_rows(s, rs, cr->h.sg, cr->h.rank, cr->total, cr->nseg, all);
	}
	return rc;
}

static void cp_free(struct ev_stats *s)
{
	struct critpath *st = s->state;
	for (size_t i = 0; i < st->ranks.len; i++) {
		struct crank *cr = (struct crank *)st->ranks.data + i;
		ev_vec_free(&cr->ev);
		ev_vec_free(&cr->pend);
		ev_vec_free(&cr->path);
		ev_vec_free(&cr->colls);
		ev_map_free(&cr->pidx);
		ev_map_free(&cr->wlaunch);
		hta_rank_free(&cr->h);
	}
	ev_vec_free(&st->ranks);
	ev_vec_free(&st->cross);
	ev_map_free(&st->idx);
	ev_map_free(&st->match);
}

static int cp_explain(const struct ev_stats_opts *o, const struct ev_stats_counts *c, char *buf, size_t n)
{
	(void)o;
	if (!c->records)
		return 0;
	snprintf(buf, n, "no critical path among %llu records (see the warnings): empty table",
	         (unsigned long long)c->records);
	return 1;
}

static int cp_warning(ev_stats *s, unsigned i, char *buf, size_t n)
{
	struct critpath *st = s->state;
	const char *a = annotation(s);
	uint64_t v[] = { st->no_window, st->cycles, st->pend_dropped, st->tail_cut };
	for (unsigned k = 0, seen = 0; k < sizeof v / sizeof v[0]; k++) {
		if (!v[k] || seen++ != i)
			continue;
		if (k == 0)
			snprintf(buf, n, "%llu rank(s) without instance %u of a range named like '%s': no path for them",
			         (unsigned long long)v[k], s->o.cp_inst_lo, a);
		else if (k == 1)
			snprintf(buf, n, "%llu rank(s) whose graph has a cycle: no path for them (HTA fails the same way)",
			         (unsigned long long)v[k]);
		else if (k == 2)
			snprintf(buf, n, "%llu launch calls before the window forgotten (over %u waiting for their GPU event): "
			         "queue lengths at the window's start may be low", (unsigned long long)v[k], CP_PENDING);
		else
			snprintf(buf, n, "%llu rank(s) with window launches whose GPU event did not come within %u records "
			         "after the window: left out", (unsigned long long)v[k], CP_TAIL);
		return 1;
	}
	return 0;
}

static const char *const cp_options[] = { "table", "annotation", "instance", NULL };

static const struct ev_stats_subtable cp_tables[] = {
	{ "summary", "critical_path_summary", NULL },
	{ "path", "critical_path_breakdown", NULL },
	{ "cross", "critical_path_cross", NULL },
	{ "cross-summary", "critical_path_cross_summary", NULL },
	{ NULL, NULL, NULL },
};

const struct ev_stats_analysis ev_stats_analysis_critpath = {
	.name = "critpath",
	.sheet = "critical_path_summary",
	.help = "HTA's critical path of each rank over one iteration\n"
	        "(--annotation, --instance): the share of each bound\n"
	        "(cpu, gpu compute, communication, launch and kernel-kernel\n"
	        "overhead); --table=path lists the path's segments in order;\n"
	        "--table=cross and cross-summary: one path across the ranks,\n"
	        "through each collective's last arrival",
	.options = cp_options,
	.tables = cp_tables,
	.default_by = NULL,
	.state_size = sizeof(struct critpath),
	.init = cp_init,
	.rec = cp_rec,
	.finish = cp_finish,
	.rows = cp_rows,
	.free = cp_free,
	.explain = cp_explain,
	.warning = cp_warning,
};
