/* SPDX-License-Identifier: MIT */
/*
 * match.c - the FIFO send/receive matching table of the GOAL check: per
 * (source, destination, tag) a queue of message sizes waiting for their
 * other side.  An entry is removed when it balances, so the table holds only
 * messages in flight (coll-expand's time order keeps that small).  Open
 * addressing with linear probing and backward-shift deletion; a slot is in
 * use while its queue is not empty.
 */
#include <stdlib.h>

#include "goal_int.h"

static inline size_t mhash(const struct mkey *k, size_t mask)
{
	uint64_t h = ((uint64_t)k->src << 32 | k->dst) * 0x9E3779B97F4A7C15ull;
	h ^= (uint64_t)k->tag * 0xC2B2AE3D27D4EB4Full;
	return (size_t)(h ^ (h >> 31)) & mask;
}

static inline int used(const struct mslot *e) { return e->n != 0; }

static int mgrow(struct mtable *t)
{
	size_t ncap = t->cap ? t->cap * 2 : 1024;
	struct mslot *ns = goal_arena_alloc(t->a, ncap * sizeof *ns, 1);
	if (!ns)
		return -1;
	for (size_t i = 0; i < t->cap; i++) {
		if (!used(&t->s[i]))
			continue;
		size_t j = mhash(&t->s[i].k, ncap - 1);
		while (used(&ns[j]))
			j = (j + 1) & (ncap - 1);
		ns[j] = t->s[i];
	}
	goal_arena_free(t->a, t->s, t->cap * sizeof *t->s);
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
	size_t j = mhash(k, t->cap - 1);
	while (used(&t->s[j])) {
		struct mslot *e = &t->s[j];
		if (e->k.tag == k->tag && e->k.src == k->src && e->k.dst == k->dst)
			return e;
		j = (j + 1) & (t->cap - 1);
	}
	if (!create)
		return NULL;
	/* Left free (n == 0) until mt_push counts it in. */
	t->s[j].k = *k;
	return &t->s[j];
}

/* Remove slot e by backward-shift deletion (no tombstones). */
void mt_remove(struct mtable *t, struct mslot *e)
{
	size_t i = (size_t)(e - t->s);
	if (e->n & MT_FIFO)
		free(e->u.q);
	e->n = 0;
	t->len--;
	size_t j = i;
	for (;;) {
		j = (j + 1) & (t->cap - 1);
		if (!used(&t->s[j]))
			return;
		size_t h = mhash(&t->s[j].k, t->cap - 1);
		/* Can the entry at j move to the hole at i? */
		if ((j > i && (h <= i || h > j)) || (j < i && (h <= i && h > j))) {
			t->s[i] = t->s[j];
			t->s[j].n = 0;
			i = j;
		}
	}
}

int mt_push(struct mslot *e, uint64_t size, int sends)
{
	uint32_t c = mt_count(e);
	if (c == MT_COUNT)
		return -1;
	if (c == 0 && !(e->n & MT_FIFO)) {
		e->n = (sends ? MT_SENDS : 0) | 1;
		e->u.one = size;
		return 0;
	}
	if (!(e->n & MT_FIFO)) {
		/* A second message in flight: move to a side FIFO. */
		struct mfifo *q = malloc(sizeof *q + 4 * sizeof q->v[0]);
		if (!q)
			return -1;
		q->head = 0;
		q->cap = 4;
		q->v[0] = e->u.one;
		e->u.q = q;
		e->n |= MT_FIFO;
	}
	struct mfifo *q = e->u.q;
	if (c == q->cap) {
		uint32_t ncap = q->cap * 2;
		struct mfifo *nq = malloc(sizeof *nq + ncap * sizeof nq->v[0]);
		if (!nq)
			return -1;
		for (uint32_t i = 0; i < c; i++)
			nq->v[i] = q->v[(q->head + i) % q->cap];
		nq->head = 0;
		nq->cap = ncap;
		free(q);
		e->u.q = q = nq;
	}
	q->v[(q->head + c) % q->cap] = size;
	if (c == 0)
		e->n = (e->n & MT_FIFO) | (sends ? MT_SENDS : 0);
	e->n++;
	return 0;
}

uint64_t mt_pop(struct mslot *e)
{
	e->n--;
	if (!(e->n & MT_FIFO))
		return e->u.one;
	struct mfifo *q = e->u.q;
	uint64_t v = q->v[q->head];
	q->head = (q->head + 1) % q->cap;
	return v;
}

const struct mslot *mt_oldest(const struct mtable *t)
{
	const struct mslot *w = NULL;
	for (size_t i = 0; i < t->cap; i++)
		if (used(&t->s[i]) && (!w || t->s[i].first_rec < w->first_rec))
			w = &t->s[i];
	return w;
}

void mt_free(struct mtable *t)
{
	for (size_t i = 0; i < t->cap; i++)
		if (t->s[i].n & MT_FIFO)
			free(t->s[i].u.q);
	if (t->s)
		goal_arena_free(t->a, t->s, t->cap * sizeof *t->s);
	struct goal_arena *a = t->a;
	memset(t, 0, sizeof *t);
	t->a = a;
}
