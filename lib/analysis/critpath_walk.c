/* SPDX-License-Identifier: MIT */
/*
 * critpath_walk.c - the longest path through a critical-path graph, as
 * networkx's dag_longest_path finds it, as path segments with their bound.
 */
#include <stdlib.h>
#include <string.h>

#include "analysis/critpath_int.h"

static int comm_name(const char *n)
{
	return !strncmp(n, "nccl", 4) || !strncmp(n, "hip", 3) || !strncmp(n, "hccl", 4) || strstr(n, "ncclKernel");
}

/* networkx's dag_longest_path: Kahn's generations in node order, each
 * node's best predecessor the first of the largest in edge order.  The
 * path's segments go to out; *cycle is set when the graph has one. */
int cp_longest_path(struct ev_stats *s, struct graph *g, struct ev_vec *out, int *cycle)
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
			int32_t at = g->nodes[x->type == ET_ARRIVE ? x->u : x->v].ev;
			p->rank = g->rank_of ? g->rank_of[at] : g->rank;
			/* Drawn on the event it is attributed to, else the one it
			 * leads to (an arrival: the arriving kernel). */
			const struct cpev *de = ae ? ae : &g->e[at];
			p->thr = de->thr;
			p->gpu = de->kind == E_GPU;
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

void cp_tally(struct crank *cr)
{
	const struct seg *p = cr->path.data;
	for (size_t i = 0; i < cr->path.len; i++) {
		cr->total[p[i].bound] += p[i].dur; /* HTA sums the edges' own weights */
		cr->nseg[p[i].bound]++;
	}
}
