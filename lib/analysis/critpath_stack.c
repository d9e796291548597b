/* SPDX-License-Identifier: MIT */
/*
 * critpath_stack.c - the CPU edges of a critical-path graph: each thread's
 * ops and runtime calls nested by time, as HTA's CallStackGraph orders
 * them, walked depth first; the backward thread merged into the forward one.
 */
#include <stdlib.h>
#include <string.h>

#include "analysis/critpath_int.h"

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
		rc = cp_add_edge(g, w->last, n, enter && w->depth == 0 ? ET_DEP : ET_OP, !enter && g->e[ev].blocking,
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

int cp_stack_edges(struct ev_stats *s, struct graph *g)
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
