/* SPDX-License-Identifier: MIT */
/*
 * critpath_kernel.c - the GPU edges of a critical-path graph: each
 * kernel's span, its launch delay or the kernel-to-kernel gap before it
 * (by HTA's queue lengths), and the GPU->CPU and GPU->GPU sync edges.
 */
#include <stdlib.h>
#include <string.h>

#include "analysis/critpath_int.h"

#define KK_DELAY_US 1500     /* HTA's KERNEL_KERNEL_DELAY_THRESHOLD_US */

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
int cp_kernel_edges(struct graph *g, const struct ev_map *corr_api)
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
					rc = cp_add_edge(g, g->enode[src], g->enode[e->mate], ET_SYNC, 0, -1);
				}
				continue;
			}
			if (e->mate < 0)
				continue;
			for (size_t k = 0; !rc && k < streams.len; k++) {
				uint32_t sm = ((uint32_t *)streams.data)[k];
				uint64_t *ln = ev_map_get(&lastk, (uint64_t)sm + 1);
				if (ln && (e->sync == S_CONTEXT || sm == e->thr))
					rc = cp_add_edge(g, (int32_t)(*ln - 1), g->enode[e->mate], ET_SYNC, 0, -1);
			}
			continue;
		}
		int32_t sn = g->snode[i], en = g->enode[i];
		if (sn < 0 || en < 0)
			continue;
		if ((rc = cp_add_edge(g, sn, en, ET_OP, 0, -1)) != EV_OK)
			break;
		int32_t src = ksync[i], src_end = -1;
		if (src >= 0) {
			src_end = g->enode[src];
			if (src_end >= 0 && (rc = cp_add_edge(g, src_end, sn, ET_SYNC, 0, -1)) != EV_OK)
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
			rc = cp_add_edge(g, g->snode[e->mate], sn, ET_LAUNCH, 0, -1);
		} else if (last >= 0 && g->nodes[sn].ts - g->nodes[last].ts < KK_DELAY_US &&
		           (src < 0 || g->nodes[src_end].ts < g->nodes[last].ts)) {
			rc = cp_add_edge(g, last, sn, ET_KK, 0, -1);
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
