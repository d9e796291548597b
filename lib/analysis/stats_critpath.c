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
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/critpath_int.h"

#define CP_PENDING 65536u    /* launches before the window waiting for their GPU event */
#define CP_TAIL (1u << 20)   /* records after the window read for its launches' GPU events */

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

const char *cp_annotation(const struct ev_stats *s)
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
	int yes = strstr(str_of(s, name), cp_annotation(s)) != NULL;
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
		if (!*cp_annotation(s) && open_window(cr, INT64_MIN, INT64_MAX) != EV_OK)
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
	if ((r->type == EV_RANGE || r->type == EV_MARK) && *cp_annotation(s) && cr->seen <= s->o.cp_inst_hi &&
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
	if (cr->state == 1 && *cp_annotation(s) && cr->seen > s->o.cp_inst_hi && e.ts > cr->wend)
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
		rc = cp_build_graph(s, cr, &g);
		if (!rc)
			rc = cp_longest_path(s, &g, &cr->path, &cycle);
		cp_graph_free(&g);
		cp_tally(cr);
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
			rc = cp_cross_path(s, cr->h.sg, &cycle);
			st->cycles += (uint64_t)cycle;
		}
	}
	s->n.selected += st->cross.len;
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
	const char *a = cp_annotation(s);
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
	        "through each collective's last arrival; ev2perfetto\n"
	        "--critical-path draws either on the timeline",
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
