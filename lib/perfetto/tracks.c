/* SPDX-License-Identifier: MIT */
/*
 * tracks.c - processes, tracks and lanes.  Every rank has a GPU and a CPU
 * process; every stream, CPU thread, NCCL channel and schedule lane is a
 * track (a thread) of one of them.  Process and thread metadata events are
 * written when a process or track is first used.  A slice that would
 * overlap its track's open slice without nesting inside it goes to an
 * extra lane of the same stream, so that every track nests properly, as the
 * viewers require.
 */
#include <stdlib.h>
#include <string.h>

#include "perfetto_int.h"

#define MAX_DEPTH 256 /* slices open on one track; deeper ones take another lane */
/* Thread ids of each kind: real stream and thread ids stay below the
 * channel range, and spare tids (extra lanes, ids out of range) come last. */
#define CHANNEL_TID 0x40000000
#define LANE_TID 0x50000000
#define ALT_TID 0x60000000u
#define CRITICAL_TID 0x7F000000 /* the critical path's track, one per process */

static const char *const kind_words[] = { "stream", "thread", "NCCL channel", "lane", "critical path" };

int64_t pf_pid(const ev_perfetto *p, uint32_t rank, int gpu)
{
	if (p->o.layout == EV_PERFETTO_LAYOUT_AORTA)
		return (int64_t)rank * 1000 + (gpu ? 0 : 500);
	return (int64_t)rank * 2 + (gpu ? 0 : 1);
}

static uint64_t key_of(const void *data, size_t n)
{
	uint64_t h = ev_hash64(data, n);
	return h ? h : 1;
}

/* "rank 3 GPU (device 3, host h1)" from the #rank line, if any; written
 * with the process's sort index. */
static int name_proc(ev_perfetto *p, uint32_t rank, int gpu)
{
	const struct ev_rank_info *ri = ev_meta_rank(p->meta, rank);
	const char *dev = ri ? ev_kv_get(ri->kv, ri->nkv, gpu ? "device" : "pid") : NULL;
	const char *host = ri ? ev_kv_get(ri->kv, ri->nkv, "host") : NULL;
	if (!host && ri)
		host = ev_kv_get(ri->kv, ri->nkv, "node");
	struct pf_buf *n = &p->tname;
	n->len = 0;
	pf_puts(n, "rank ");
	pf_u64(n, rank);
	pf_puts(n, gpu ? " GPU" : " CPU");
	if (dev || host) {
		pf_puts(n, " (");
		if (dev) {
			pf_puts(n, gpu ? "device " : "pid ");
			pf_puts(n, dev);
		}
		if (host) {
			pf_puts(n, dev ? ", " : "");
			pf_puts(n, host);
		}
		pf_puts(n, ")");
	}
	pf_put(n, "", 1);
	if (n->oom)
		return EV_ERR_NOMEM;
	int64_t pid = pf_pid(p, rank, gpu);
	pf_meta_event(p, "process_name", pid, 0, n->p, 0);
	pf_meta_event(p, "process_sort_index", pid, 0, NULL, pid);
	return EV_OK;
}

/* The rank's state, its GPU or CPU process named on first use.  NULL (and
 * ob.oom set) when out of memory. */
struct pf_proc *pf_get_proc(ev_perfetto *p, uint32_t rank, int gpu)
{
	uint64_t *ix = ev_map_get(&p->proc_ix, (uint64_t)rank + 1);
	struct pf_proc *pr;
	if (ix) {
		pr = (struct pf_proc *)p->procs.data + (*ix - 1);
	} else {
		pr = ev_vec_push(&p->procs);
		if (!pr || ev_map_put(&p->proc_ix, (uint64_t)rank + 1, p->procs.len)) {
			p->ob.oom = 1;
			return NULL;
		}
		pr->rank = rank;
	}
	if (!pr->named[gpu]) {
		pr->named[gpu] = 1;
		if (name_proc(p, rank, gpu) != EV_OK) {
			p->ob.oom = 1;
			return NULL;
		}
	}
	return pr;
}

/* Lane 0 of a stream or thread keeps its own id; channels, schedule lanes
 * and extra lanes get ids from ranges real ids do not reach. */
static int64_t tid_of(struct pf_proc *pr, int gpu, int kind, uint32_t id, int lane)
{
	if (lane == 0 && (kind == PF_STREAM || kind == PF_THREAD) && id < (uint32_t)CHANNEL_TID)
		return id;
	if (lane == 0 && kind == PF_CHANNEL)
		return CHANNEL_TID + (int64_t)id;
	if (lane == 0 && kind == PF_LANE && id < 0x10000000u)
		return LANE_TID + (int64_t)id;
	if (lane == 0 && kind == PF_CRITICAL)
		return CRITICAL_TID;
	return ALT_TID + pr->alt_next[gpu]++;
}

/* "stream 7", "stream 7 #2" for lane 1, sorted by kind, then id, then lane. */
static int name_track(ev_perfetto *p, const struct pf_track *t)
{
	struct pf_buf *n = &p->tname;
	n->len = 0;
	pf_puts(n, kind_words[t->kind]);
	if (t->kind != PF_CRITICAL) { /* one a process: no number */
		pf_put(n, " ", 1);
		pf_u64(n, t->id);
	}
	if (t->lane) {
		pf_puts(n, " #");
		pf_u64(n, (uint64_t)t->lane + 1);
	}
	pf_put(n, "", 1);
	if (n->oom)
		return EV_ERR_NOMEM;
	uint32_t id = t->id;
	/* The critical path first, above the streams or threads it crosses. */
	int64_t sort = t->kind == PF_CRITICAL ? -16 : t->kind == PF_CHANNEL ? 0x2000000 + (int64_t)(id & 0xFFFF) * 16 :
	               t->kind == PF_LANE ? 0x3000000 + (int64_t)(id & 0xFFFF) * 16 :
	               (int64_t)(id < 0x100000u ? id : 0xFFFFFu) * 16;
	pf_meta_event(p, "thread_name", t->pid, t->tid, n->p, 0);
	pf_meta_event(p, "thread_sort_index", t->pid, t->tid, NULL, sort + t->lane);
	return EV_OK;
}

/* The track of (rank, process, kind, id, lane), made and named on first
 * use.  NULL (and ob.oom set) when out of memory.  The pointer is valid
 * until the next track is made. */
struct pf_track *pf_get_track(ev_perfetto *p, uint32_t rank, int gpu, int kind, uint32_t id, int lane)
{
	unsigned char k[12];
	ev_put32(k, rank);
	ev_put32(k + 4, id);
	k[8] = (unsigned char)gpu;
	k[9] = (unsigned char)kind;
	k[10] = (unsigned char)lane;
	k[11] = 0;
	uint64_t key = key_of(k, sizeof k);
	uint64_t *ix = ev_map_get(&p->track_ix, key);
	if (ix)
		return (struct pf_track *)p->tracks.data + (*ix - 1);
	struct pf_proc *pr = pf_get_proc(p, rank, gpu);
	if (!pr)
		return NULL;
	struct pf_track *t = ev_vec_push(&p->tracks);
	if (!t || ev_map_put(&p->track_ix, key, p->tracks.len)) {
		p->ob.oom = 1;
		return NULL;
	}
	t->rank = rank;
	t->id = id;
	t->gpu = (uint8_t)gpu;
	t->kind = (uint8_t)kind;
	t->lane = (uint8_t)lane;
	t->pid = pf_pid(p, rank, gpu);
	t->tid = tid_of(pr, gpu, kind, id, lane);
	if (lane)
		p->lanes_made++;
	if (name_track(p, t) != EV_OK) {
		p->ob.oom = 1;
		return NULL;
	}
	return t;
}

/* Open [ts, end) on t if it nests there: 1 placed, 0 not, -1 out of memory. */
static int push_span(struct pf_track *t, int64_t ts, int64_t end)
{
	if (t->depth && t->stk[t->depth - 1].end < end)
		return 0;
	if (t->depth == MAX_DEPTH)
		return 0;
	if (t->depth == t->cap) {
		uint32_t ncap = t->cap ? t->cap * 2 : 8;
		struct pf_span *ns = realloc(t->stk, ncap * sizeof *ns);
		if (!ns)
			return -1;
		t->stk = ns;
		t->cap = ncap;
	}
	t->stk[t->depth].ts = ts;
	t->stk[t->depth].end = end;
	t->depth++;
	return 1;
}

/* The track on which [ts, end) nests: lane 0 of the stream, or the first
 * extra lane where it does; when none does, lane 0 with the slice clipped
 * to its enclosing slice (*end changes). */
struct pf_track *pf_place(ev_perfetto *p, uint32_t rank, int gpu, int kind, uint32_t id, int64_t ts, int64_t *end)
{
	for (int lane = 0; lane < EV_PERFETTO_MAX_LANES; lane++) {
		struct pf_track *t = pf_get_track(p, rank, gpu, kind, id, lane);
		if (!t)
			return NULL;
		/* Slices that ended by ts are closed. */
		while (t->depth && t->stk[t->depth - 1].end <= ts)
			t->depth--;
		int rc = push_span(t, ts, *end);
		if (rc < 0) {
			p->ob.oom = 1;
			return NULL;
		}
		if (rc)
			return t;
	}
	/* Every lane is taken: clip on lane 0 (already popped to ts).  Fetched
	 * again: making the lanes above may have moved it. */
	struct pf_track *t0 = pf_get_track(p, rank, gpu, kind, id, 0);
	if (t0 && t0->depth)
		*end = t0->stk[t0->depth - 1].end;
	p->clipped++;
	return t0;
}

void pf_tracks_free(ev_perfetto *p)
{
	for (size_t i = 0; i < p->tracks.len; i++)
		free(((struct pf_track *)p->tracks.data)[i].stk);
	for (size_t i = 0; i < p->procs.len; i++)
		for (int k = 0; k < PF_NCOUNTERS; k++)
			free(((struct pf_proc *)p->procs.data)[i].cnt[k].h);
	ev_vec_free(&p->tracks);
	ev_vec_free(&p->procs);
	ev_map_free(&p->track_ix);
	ev_map_free(&p->proc_ix);
}
