/* SPDX-License-Identifier: MIT */
/*
 * acealign.c - acelyzer's default rank alignment, mp_sync_tight_v1
 * (pipeline/mp_sync_tight.py), for flex2ev --align=acelyzer.
 *
 * acelyzer does not shift whole ranks: it puts every device event on one
 * aligned device clock.  Each rank's device clock (the TS counters at the
 * SoC frequency) gets a shift, solved on the CollGroups of the lowest
 * rank (only those named AllReduce when there are any) on the premise that
 * an RDMA send has landed when it ends, TS5(send) = TS2(recv):
 *  - tree (the lowest rank's first group has an event named
 *    ...AllReduce_all_reduce...): ranks in order, the lowest is the
 *    sender; chain: in reverse order, the highest is;
 *  - with more than two ranks, the receivers after the first are moved so
 *    that their latest TS2 of a group equals the first receiver's.  acelyzer
 *    means the group whose receivers agree best (least mean square error),
 *    but its error is one number over all groups, so it always takes the
 *    first group: so does this;
 *  - per group, the first receiver's latest TS2 minus the sender's latest
 *    TS5; the smallest of these moves the receivers back (tree) or the
 *    sender forward (chain);
 *  - the aligned device clock meets host time at the event of the lowest
 *    rank with the latest TS5 (tree; TS2 for chain) in that group: host
 *    offset = its end in host time minus that counter's time.
 * A device event then starts at its instruction's first counter (DmaI TS1,
 * Prep TS2, Exec TS3, DmaO TS4, others TS1) + shift + offset; its
 * duration stays.  Host (CPU) events are not moved.
 *
 * The counters are unwrapped across 2^32 per rank by host time: an event
 * whose host-minus-device offset is k wrap periods from that of the rank's
 * first device event gains k x 2^32 (acelyzer counts wraps from host time
 * too, in its overflow correction).
 *
 * Memory: per rank and per (rank, CollGroup).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "flex/acealign_int.h"

void fa_init(struct fa *a)
{
	memset(a, 0, sizeof *a);
	ev_map_init(&a->rank_ix);
	ev_map_init(&a->group_ix);
	ev_vec_init(&a->ranks, sizeof(struct fa_rank));
	ev_vec_init(&a->groups, sizeof(struct fa_group));
}

void fa_free(struct fa *a)
{
	ev_map_free(&a->rank_ix);
	ev_map_free(&a->group_ix);
	ev_vec_free(&a->ranks);
	ev_vec_free(&a->groups);
}

const struct fa_rank *fa_rank_of(const struct fa *a, uint32_t rank)
{
	uint64_t *ix = ev_map_get(&a->rank_ix, (uint64_t)rank + 1);
	return ix ? (const struct fa_rank *)a->ranks.data + (*ix - 1) : NULL;
}

static uint64_t group_key(uint32_t rank, uint64_t group)
{
	unsigned char k[12];
	ev_put32(k, rank);
	ev_put64(k + 4, group);
	uint64_t h = ev_hash64(k, sizeof k);
	return h ? h : 1;
}

static struct fa_group *group_of(const struct fa *a, uint32_t rank, uint64_t group)
{
	uint64_t *ix = ev_map_get(&a->group_ix, group_key(rank, group));
	return ix ? (struct fa_group *)a->groups.data + (*ix - 1) : NULL;
}

/* Cycles (possibly below 0 after unwrapping) to ns, within +-INT64_MAX. */
static int64_t sns(__int128 cycles, uint64_t khz)
{
	if (cycles > INT64_MAX)
		cycles = INT64_MAX;
	if (cycles < -INT64_MAX)
		cycles = -INT64_MAX;
	uint64_t m = cycles < 0 ? (uint64_t)-cycles : (uint64_t)cycles;
	uint64_t ns = ev_flex_cycles_ns(m, khz);
	if (ns > INT64_MAX)
		ns = INT64_MAX;
	return cycles < 0 ? -(int64_t)ns : (int64_t)ns;
}

int fa_place(struct fa *a, uint32_t rank, const uint64_t cy[5], int start_ix, int64_t host_ts, uint64_t soc_khz,
             int64_t dev[5])
{
	uint64_t *ix = ev_map_get(&a->rank_ix, (uint64_t)rank + 1);
	struct fa_rank *r;
	int64_t o = fa_sub(host_ts, sns(cy[start_ix], soc_khz));
	if (ix) {
		r = (struct fa_rank *)a->ranks.data + (*ix - 1);
	} else {
		r = ev_vec_push(&a->ranks);
		if (!r || ev_map_put(&a->rank_ix, (uint64_t)rank + 1, a->ranks.len))
			return EV_ERR_NOMEM;
		r->rank = rank;
		r->anchor = o;
	}
	int64_t span = sns(INT64_C(1) << 32, soc_khz);
	double k = span > 0 ? nearbyint(((double)o - (double)r->anchor) / (double)span) : 0;
	if (fabs(k) > 1e6) /* no trace wraps a million times: leave it to the host times */
		k = 0;
	for (int i = 0; i < 5; i++)
		dev[i] = sns((__int128)cy[i] + (__int128)(int64_t)k * (INT64_C(1) << 32), soc_khz);
	return EV_OK;
}

int fa_note_group(struct fa *a, uint32_t rank, uint16_t src, uint64_t group, int reduce_name, const int64_t dev[5],
                  int64_t host_end)
{
	struct fa_group *g = group_of(a, rank, group);
	if (!g) {
		uint64_t *rix = ev_map_get(&a->rank_ix, (uint64_t)rank + 1);
		if (!rix)
			return EV_ERR_ARG;
		struct fa_rank *r = (struct fa_rank *)a->ranks.data + (*rix - 1);
		g = ev_vec_push(&a->groups);
		if (!g || ev_map_put(&a->group_ix, group_key(rank, group), a->groups.len))
			return EV_ERR_NOMEM;
		g->rank = rank;
		g->group = group;
		g->order = r->ngroups++;
		g->max2 = dev[1];
		g->max5 = dev[4];
		g->end2 = g->end5 = host_end;
		g->src2 = g->src5 = src;
	}
	g->reduce_name |= reduce_name;
	/* Equal counters: the later event, as acelyzer's stable sort. */
	if (dev[1] >= g->max2) {
		g->max2 = dev[1];
		g->end2 = host_end;
		g->src2 = src;
	}
	if (dev[4] >= g->max5) {
		g->max5 = dev[4];
		g->end5 = host_end;
		g->src5 = src;
	}
	return EV_OK;
}

static int allreduce_group(const ev_strtab *st, uint64_t id)
{
	size_t n = 0;
	const char *s = ev_strtab_get(st, id, &n);
	return s && memmem(s, n, "AllReduce", 9) != NULL;
}

static struct fa_rank *rank_at(struct fa *a, uint32_t rank)
{
	uint64_t *ix = ev_map_get(&a->rank_ix, (uint64_t)rank + 1);
	return ix ? (struct fa_rank *)a->ranks.data + (*ix - 1) : NULL;
}

static int by_order(const void *x, const void *y)
{
	const struct fa_group *a = *(const struct fa_group *const *)x, *b = *(const struct fa_group *const *)y;
	return (a->order > b->order) - (a->order < b->order);
}

static int solve(struct fa *a, const uint32_t *ranks, size_t n, const ev_strtab *st)
{
	if (n < 2) {
		a->why = "fewer than two ranks with device events";
		return EV_OK;
	}
	/* The lowest rank's groups in the order it has them, only those named
	 * AllReduce when there are any. */
	struct fa_group *g = a->groups.data;
	size_t ng = 0, nreduce = 0;
	for (size_t i = 0; i < a->groups.len; i++)
		if (g[i].rank == ranks[0]) {
			ng++;
			nreduce += allreduce_group(st, g[i].group);
		}
	if (!ng) {
		a->why = "no CollGroup events";
		a->why_rank = ranks[0];
		return EV_OK;
	}
	const struct fa_group **kept = malloc((nreduce ? nreduce : ng) * sizeof *kept);
	if (!kept)
		return EV_ERR_NOMEM;
	size_t nk = 0;
	for (size_t i = 0; i < a->groups.len; i++)
		if (g[i].rank == ranks[0] && (!nreduce || allreduce_group(st, g[i].group)))
			kept[nk++] = &g[i];
	qsort(kept, nk, sizeof *kept, by_order);
	for (size_t k = 0; k < nk; k++)
		for (size_t r = 0; r < n; r++)
			if (!group_of(a, ranks[r], kept[k]->group)) {
				a->why = "no events of a CollGroup";
				a->why_rank = ranks[r];
				a->why_group = kept[k]->group;
				free(kept);
				return EV_OK;
			}
	a->tree = kept[0]->reduce_name;
	/* P(i): the rank at position i of acelyzer's order, the sender first. */
#define P(i) (ranks[a->tree ? (i) : n - 1 - (i)])
	for (size_t r = 0; r < n; r++)
		rank_at(a, ranks[r])->shift = 0;
	if (n > 2) {
		int64_t base = group_of(a, P(1), kept[0]->group)->max2;
		for (size_t i = 2; i < n; i++)
			rank_at(a, P(i))->shift = fa_sub(rank_at(a, P(i))->shift, fa_sub(group_of(a, P(i), kept[0]->group)->max2, base));
	}
	/* The smallest (first receiver's TS2 - sender's TS5) over the groups,
	 * the first of equal ones. */
	size_t best = 0;
	int64_t d = 0;
	for (size_t k = 0; k < nk; k++) {
		int64_t x = fa_sub(group_of(a, P(1), kept[k]->group)->max2, group_of(a, P(0), kept[k]->group)->max5);
		if (k == 0 || x < d) {
			best = k;
			d = x;
		}
	}
	if (a->tree)
		for (size_t i = 1; i < n; i++)
			rank_at(a, P(i))->shift = fa_sub(rank_at(a, P(i))->shift, d);
	else
		rank_at(a, P(0))->shift = fa_add(rank_at(a, P(0))->shift, d);
#undef P
	/* Host time meets the device clock at the lowest rank's event with
	 * the latest TS5 (tree) or TS2 (chain) of that group, unshifted. */
	const struct fa_group *ref = kept[best];
	a->ref_rank = ranks[0];
	a->ref_group = ref->group;
	a->ref_src = a->tree ? ref->src5 : ref->src2;
	a->ref_offset = a->tree ? fa_sub(ref->end5, ref->max5) : fa_sub(ref->end2, ref->max2);
	a->done = 1;
	free(kept);
	return EV_OK;
}

int fa_solve(struct fa *a, const uint32_t *all, size_t nall, const ev_strtab *st)
{
	a->done = 0;
	a->why = NULL;
	/* The ranks with device events (CPU-only ranks have nothing to move). */
	uint32_t *ranks = malloc((nall ? nall : 1) * sizeof *ranks);
	if (!ranks)
		return EV_ERR_NOMEM;
	size_t n = 0;
	for (size_t i = 0; i < nall; i++)
		if (fa_rank_of(a, all[i]))
			ranks[n++] = all[i];
	int rc = solve(a, ranks, n, st);
	free(ranks);
	return rc;
}

int64_t fa_offset(const struct fa *a, uint32_t rank)
{
	const struct fa_rank *r = fa_rank_of(a, rank);
	if (!a->done || !r)
		return 0;
	return fa_sub(fa_sub(r->anchor, r->shift), a->ref_offset);
}
