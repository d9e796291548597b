/* SPDX-License-Identifier: MIT */
/*
 * hta_rank.c - HTA's per-rank view shared by ev-stats idle, launch, queue
 * and membw: its microseconds, its launches, its last-step filter (see
 * hta_rank.h).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/hta_rank.h"
#include "analysis/stats_impl.h"

#define RING_MIN 256u

void hta_us(int64_t json_base_ns, int64_t ts, int64_t end, int64_t *ts_us, int64_t *end_us)
{
	/* As HTA computes it: the JSON's microseconds as doubles (relative to
	 * baseTimeNanoseconds; the decimal value N/1000 for N ns, whose nearest
	 * double long double division gives), end = ts + dur in doubles, then
	 * ceil and floor. */
	int64_t n;
	if (!__builtin_sub_overflow(ts, json_base_ns, &n) && end >= ts) {
		double a = (double)((long double)n / 1000.0L);
		double d = (double)(((long double)end - (long double)ts) / 1000.0L);
		double c = ceil(a), f = floor(a + d);
		if (fabs(c) < 9e15 && fabs(f) < 9e15) {
			*ts_us = (int64_t)c;
			*end_us = (int64_t)f;
			return;
		}
	}
	*ts_us = ts / 1000 + (ts % 1000 > 0);
	*end_us = end / 1000 - (end % 1000 < 0);
}

unsigned hta_launch_kind(const char *name)
{
	/* HTA's lists: get_cuda_kernel_launch_stats takes the first two kinds,
	 * the queue length every one (TraceSymbolTable's launch mask). */
	static const struct { const char *name; unsigned kind; } names[] = {
		{ "cudaLaunchKernel", HTA_CALL_KERNEL },
		{ "cudaLaunchKernelExC", HTA_CALL_KERNEL },
		{ "runFunction - job_prep_and_submit_for_execution", HTA_CALL_KERNEL },
		{ "cudaMemcpyAsync", HTA_CALL_MEMORY },
		{ "cudaMemsetAsync", HTA_CALL_MEMORY },
		{ "cuLaunchKernel", HTA_CALL_QUEUE_ONLY },
		{ "cuLaunchKernelEx", HTA_CALL_QUEUE_ONLY },
		{ "hipLaunchKernel", HTA_CALL_QUEUE_ONLY },
		{ "hipExtModuleLaunchKernel", HTA_CALL_QUEUE_ONLY },
		{ "hipMemsetAsync", HTA_CALL_QUEUE_ONLY },
		{ "hipMemcpyAsync", HTA_CALL_QUEUE_ONLY },
		{ "hipMemcpyWithStream", HTA_CALL_QUEUE_ONLY },
	};
	for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
		if (!strcmp(name, names[i].name))
			return names[i].kind;
	return HTA_CALL_OTHER;
}

/* The time base of a source's original clock (#src base_ns=), else 0. */
static int64_t src_base(const struct ev_stats *s, uint32_t src)
{
	const struct ev_src_info *si = ev_meta_src(s->meta, src);
	const char *v = si ? ev_kv_get(si->kv, si->nkv, "base_ns") : NULL;
	int64_t b;
	return v && ev_parse_i64(v, &b) == EV_OK ? b : 0;
}

void *hta_rank_of(ev_stats *s, struct ev_vec *ranks, struct ev_map *idx, const struct ev_rec *r, int *fresh)
{
	uint32_t sg;
	*fresh = 0;
	if (src_group(s, r->src, &sg) != EV_OK)
		return NULL;
	uint64_t key = ((uint64_t)sg << 32 | r->rank) + 1;
	uint64_t *at = ev_map_get(idx, key);
	if (at)
		return (char *)ranks->data + (*at - 1) * ranks->elem;
	struct hta_rank *h = ev_vec_push(ranks);
	if (!h || ev_map_put(idx, key, ranks->len) != EV_OK)
		return NULL;
	h->sg = sg;
	h->rank = r->rank;
	h->json_base_ns = src_base(s, r->src);
	h->keep_all = s->o.sample != NULL;
	ev_map_init(&h->idx);
	*fresh = 1;
	return h;
}

void hta_rank_free(struct hta_rank *h)
{
	free(h->ring);
	ev_map_free(&h->idx);
}

/* The ring's size while it holds n calls: a power of two from RING_MIN
 * up to the window. */
static size_t cap_for(uint64_t n)
{
	size_t c = RING_MIN;
	while (c < HTA_CALL_WINDOW && c < n)
		c *= 2;
	return c;
}

/* Remember a call: the ring grows by doubling up to the window (positions
 * are absolute, so entries move to pos % new size), then the oldest goes;
 * the index is rebuilt from the ring when stale keys fill it. */
static int remember(struct hta_rank *h, const struct hta_call *c)
{
	size_t cap = h->ring ? cap_for(h->head) : 0, want = cap_for(h->head + 1);
	if (want > cap) {
		struct hta_call *nr = calloc(want, sizeof *nr);
		if (!nr)
			return EV_ERR_NOMEM;
		for (uint64_t p = 0; h->ring && p < h->head; p++)
			nr[p % want] = h->ring[p % cap];
		free(h->ring);
		h->ring = nr;
		cap = want;
	}
	h->ring[h->head % cap] = *c;
	if (h->idx.len >= 2 * cap + 1024) {
		struct ev_map keep;
		ev_map_init(&keep);
		uint64_t from = h->head >= cap ? h->head - cap + 1 : 0;
		for (uint64_t p = from; p < h->head; p++)
			if (ev_map_put(&keep, (uint64_t)h->ring[p % cap].corr + 1, p + 1) != EV_OK) {
				ev_map_free(&keep);
				return EV_ERR_NOMEM;
			}
		ev_map_free(&h->idx);
		h->idx = keep;
	}
	if (ev_map_put(&h->idx, (uint64_t)c->corr + 1, h->head + 1) != EV_OK)
		return EV_ERR_NOMEM;
	h->head++;
	return EV_OK;
}

const struct hta_call *hta_rank_call(const struct hta_rank *h, uint32_t corr)
{
	if (!corr || !h->ring)
		return NULL;
	const uint64_t *at = ev_map_get(&h->idx, (uint64_t)corr + 1);
	if (!at)
		return NULL;
	uint64_t pos = *at - 1;
	size_t cap = cap_for(h->head);
	if (pos + cap < h->head)
		return NULL;
	const struct hta_call *c = &h->ring[pos % cap];
	return c->corr == corr ? c : NULL;
}

int hta_rank_cpu(ev_stats *s, struct hta_rank *h, const struct ev_rec *r, const struct hta_call **call)
{
	const struct hta_call *unused;
	if (!call)
		call = &unused;
	*call = NULL;
	if (r->type == EV_RANGE && r->op == EV_RG_GPU_USER)
		return HTA_STEP_NONE; /* on a GPU stream: not a CPU event to HTA */
	if (r->type != EV_API && r->type != EV_RANGE && r->type != EV_MARK)
		return HTA_STEP_NONE;
	h->any_cpu = 1;
	int64_t ts_us, end_us;
	hta_us(h->json_base_ns, r->ts, ev_rec_end(r), &ts_us, &end_us);
	if (r->type == EV_RANGE && r->op == EV_RG_STEP) {
		h->steps++;
		unsigned before = h->step_names;
		if (h->step_names == 0) {
			h->step_name = r->name;
			h->step_names = 1;
		} else if (r->name != h->step_name) {
			h->step_names = 2;
		}
		if (h->step_names < 2 || h->keep_all)
			return HTA_STEP_NONE;
		int later = before < 2 || ts_us > h->step_us;
		if (later)
			h->step_us = ts_us;
		return before < 2 ? HTA_STEP_SWITCH : later ? HTA_STEP_FORK : HTA_STEP_NONE;
	}
	if (r->type != EV_API || !r->id)
		return HTA_STEP_NONE;
	struct hta_call c = { .corr = r->id, .step = h->steps, .ts_us = ts_us, .dur_us = end_us - ts_us,
	                      .name = r->name };
	c.kind = hta_launch_kind(str_of(s, r->name));
	int rc = remember(h, &c);
	if (rc)
		return rc;
	*call = hta_rank_call(h, r->id);
	return HTA_STEP_NONE;
}

unsigned hta_rank_route(const struct hta_rank *h, const struct hta_call *c)
{
	if (h->keep_all)
		return 1u;
	if (!c)
		return h->step_names < 2 ? 1u : 0u;
	return hta_rank_route_ts(h, c->ts_us);
}

unsigned hta_rank_route_ts(const struct hta_rank *h, int64_t call_us)
{
	if (h->keep_all)
		return 1u;
	return h->step_names < 2 || call_us < h->step_us ? 3u : 1u;
}

int hta_rank_filtered(const struct hta_rank *h)
{
	return h->step_names >= 2 && !h->keep_all;
}

int hta_dist3_fork(struct ev_dist *d, struct ev_dist_pool *pool)
{
	ev_dist_release(&d[2], pool);
	return ev_dist_merge(&d[0], &d[1], pool);
}

int hta_dist3_switch(struct ev_dist *d, struct ev_dist_pool *pool)
{
	ev_dist_release(&d[1], pool);
	return ev_dist_merge(&d[0], &d[2], pool);
}

int hta_dist3_final(struct ev_dist *d, int filtered, struct ev_dist_pool *pool)
{
	ev_dist_release(&d[filtered ? 1 : 2], pool);
	return ev_dist_merge(&d[0], &d[filtered ? 2 : 1], pool);
}
