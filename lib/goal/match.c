/* SPDX-License-Identifier: MIT */
/*
 * match.c - the FIFO send/receive matching table of the GOAL check: per
 * (source, destination, tag) a queue of message sizes waiting for their
 * other side.  An entry is removed when it balances, so the table holds only
 * messages in flight (coll-expand's time order keeps that small).
 */
#include <stdlib.h>

#include "goal_int.h"

static uint64_t mhash(const struct mkey *k)
{
	uint64_t h = (uint64_t)k->src * 0x9E3779B97F4A7C15ull ^ (uint64_t)k->dst * 0xC2B2AE3D27D4EB4Full ^
	             (uint64_t)k->tag * 0x165667B19E3779F9ull;
	h ^= h >> 29;
	h *= 0xBF58476D1CE4E5B9ull;
	return h ^ (h >> 32);
}

static int mgrow(struct mtable *t)
{
	size_t ncap = t->cap ? t->cap * 2 : 1024;
	struct mslot *ns = calloc(ncap, sizeof *ns);
	if (!ns)
		return -1;
	for (size_t i = 0; i < t->cap; i++) {
		if (!t->s[i].used)
			continue;
		size_t j = mhash(&t->s[i].k) & (ncap - 1);
		while (ns[j].used)
			j = (j + 1) & (ncap - 1);
		ns[j] = t->s[i];
	}
	free(t->s);
	t->s = ns;
	t->cap = ncap;
	return 0;
}

struct mslot *mt_find(struct mtable *t, const struct mkey *k, int create)
{
	if (create && (t->len + 1) * 4 > t->cap * 3 && mgrow(t))
		return NULL;
	if (!t->cap)
		return NULL;
	size_t j = mhash(k) & (t->cap - 1);
	while (t->s[j].used) {
		if (t->s[j].k.src == k->src && t->s[j].k.dst == k->dst && t->s[j].k.tag == k->tag)
			return &t->s[j];
		j = (j + 1) & (t->cap - 1);
	}
	if (!create)
		return NULL;
	memset(&t->s[j], 0, sizeof t->s[j]);
	t->s[j].used = 1;
	t->s[j].k = *k;
	t->s[j].cap = 2;
	t->len++;
	return &t->s[j];
}

/* Remove slot e by backward-shift deletion (no tombstones). */
void mt_remove(struct mtable *t, struct mslot *e)
{
	size_t i = (size_t)(e - t->s);
	free(t->s[i].q);
	t->s[i].q = NULL;
	t->s[i].used = 0;
	t->len--;
	size_t j = i;
	for (;;) {
		j = (j + 1) & (t->cap - 1);
		if (!t->s[j].used)
			return;
		size_t h = mhash(&t->s[j].k) & (t->cap - 1);
		/* Can the entry at j move to the hole at i? */
		if ((j > i && (h <= i || h > j)) || (j < i && (h <= i && h > j))) {
			t->s[i] = t->s[j];
			t->s[j].used = 0;
			t->s[j].q = NULL;
			i = j;
		}
	}
}

static uint64_t *mq(struct mslot *e) { return e->q ? e->q : e->inl; }

int mt_push(struct mslot *e, uint64_t size)
{
	if (e->n == e->cap) {
		uint32_t ncap = e->cap * 2;
		uint64_t *nq = malloc(ncap * sizeof *nq);
		if (!nq)
			return -1;
		uint64_t *old = mq(e);
		for (uint32_t i = 0; i < e->n; i++)
			nq[i] = old[(e->head + i) % e->cap];
		free(e->q);
		e->q = nq;
		e->head = 0;
		e->cap = ncap;
	}
	mq(e)[(e->head + e->n) % e->cap] = size;
	e->n++;
	return 0;
}

uint64_t mt_pop(struct mslot *e)
{
	uint64_t v = mq(e)[e->head];
	e->head = (e->head + 1) % e->cap;
	e->n--;
	return v;
}

const struct mslot *mt_oldest(const struct mtable *t)
{
	const struct mslot *w = NULL;
	for (size_t i = 0; i < t->cap; i++)
		if (t->s[i].used && (!w || t->s[i].first_rec < w->first_rec))
			w = &t->s[i];
	return w;
}

void mt_free(struct mtable *t)
{
	for (size_t i = 0; i < t->cap; i++)
		if (t->s[i].used)
			free(t->s[i].q);
	free(t->s);
	memset(t, 0, sizeof *t);
}
