/* SPDX-License-Identifier: MIT */
/*
 * critpath_cross.c - the critical path across the ranks of a source group
 * (ev-stats critpath --table=cross): the ranks' graphs joined at each
 * collective's last arrival.
 */
#include <stdlib.h>
#include <string.h>

#include "analysis/critpath_int.h"

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
int cp_cross_path(struct ev_stats *s, uint32_t sg, int *cycle)
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
		if ((rc = cp_build_graph(s, cr, &g)) == EV_OK) {
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
		cp_graph_free(&g);
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
		rc = cp_longest_path(s, &u, &st->cross, cycle);
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
