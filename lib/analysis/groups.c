/* SPDX-License-Identifier: MIT */
/*
 * groups.c - the accumulator table of the stats analyses: a fixed-size
 * key tuple hashed to a slot, slots kept in first-seen order so that
 * results come out in a stable order.
 */
#include <string.h>

#include "analysis/stats_impl.h"

void groups_init(struct groups *g, size_t elem)
{
	ev_map_init(&g->idx);
	ev_vec_init(&g->keys, sizeof(struct gkey));
	ev_vec_init(&g->vals, elem);
}

void groups_free(struct groups *g)
{
	ev_map_free(&g->idx);
	ev_vec_free(&g->keys);
	ev_vec_free(&g->vals);
}

/* A cheap mix of the key fields (collisions are resolved by comparing). */
static uint64_t gkey_hash(const struct gkey *k)
{
	uint64_t h = (uint64_t)k->sg * 0x9E3779B97F4A7C15ULL ^ (uint64_t)k->rank * 0xC2B2AE3D27D4EB4FULL ^
	             (uint64_t)k->stream * 0x165667B19E3779F9ULL ^ k->k1 * 0xD6E8FEB86659FD93ULL ^
	             k->k2 * 0xFF51AFD7ED558CCDULL;
	h ^= h >> 32;
	h *= 0xC4CEB9FE1A85EC53ULL;
	return h ^ (h >> 29);
}

void *group_get(struct groups *g, const struct gkey *k, size_t *index)
{
	uint64_t h = gkey_hash(k);
	/* Distinct keys with one hash take the next free hash value. */
	for (;; h++) {
		if (h == 0)
			continue;
		uint64_t *slot = ev_map_get(&g->idx, h);
		if (!slot)
			break;
		struct gkey *have = (struct gkey *)g->keys.data + (*slot - 1);
		if (memcmp(have, k, sizeof *k) == 0) {
			if (index)
				*index = *slot - 1;
			return (char *)g->vals.data + (*slot - 1) * g->vals.elem;
		}
	}
	struct gkey *nk = ev_vec_push(&g->keys);
	void *nv = nk ? ev_vec_push(&g->vals) : NULL;
	if (!nv || ev_map_put(&g->idx, h, g->keys.len) != EV_OK)
		return NULL;
	*nk = *k;
	if (index)
		*index = g->keys.len - 1;
	return nv;
}
