/* SPDX-License-Identifier: MIT */
/*
 * critpath_graph.c - a rank's critical-path graph (ev-stats critpath): the
 * window's events joined to their correlated calls, the events HTA counts
 * in the window, their start and end nodes in time order, and the edges
 * (the runtime lock's here; the call stacks' in critpath_stack.c, the GPU's
 * in critpath_kernel.c).
 */
#include <stdlib.h>
#include <string.h>

#include "analysis/critpath_int.h"

int cp_add_edge(struct graph *g, int32_t u, int32_t v, int type, int zero, int32_t attr)
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
				rc = cp_add_edge(g, p, (int32_t)i, g->nodes[p].ev == n->ev ? ET_OP : ET_DEP, 0, n->ev);
			}
			if (!rc && last >= 0 && !g->nodes[last].start)
				rc = cp_add_edge(g, last, (int32_t)i, ET_DEP, 0, -1);
		}
		last = (int32_t)i;
	}
	ev_vec_free(&starts);
	return rc;
}

void cp_graph_free(struct graph *g)
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
int cp_build_graph(struct ev_stats *s, struct crank *cr, struct graph *g)
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
	if (!rc && !*cp_annotation(s)) { /* the whole trace */
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
		rc = cp_stack_edges(s, g);
	if (!rc)
		rc = cp_kernel_edges(g, &corr_api);
	ev_map_free(&corr_api);
	ev_map_free(&corr_gpu);
	return rc;
}
