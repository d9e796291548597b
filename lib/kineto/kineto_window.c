/* SPDX-License-Identifier: MIT */
/*
 * kineto_window.c - FIFO-bounded hash (see kineto_window.h): open
 * addressing with linear probing over ring positions; the oldest entry is
 * evicted (backward-shift deletion) when the ring is full.
 */
#include <stdlib.h>

#include "ev/stream.h"
#include "kineto/kineto_window.h"

static uint32_t slot_of(const struct kwin *w, uint64_t key)
{
	key ^= key >> 33;
	key *= 0xff51afd7ed558ccdULL;
	key ^= key >> 33;
	return (uint32_t)key & w->imask;
}

/* Index slots before the first doubling: 16 KiB. */
#define KWIN_FIRST_INDEX 4096u

void kwin_init(struct kwin *w, uint32_t cap)
{
	uint32_t c = 1024;
	while (c < cap && c < (1u << 30))
		c <<= 1;
	w->ring = NULL;
	w->index = NULL;
	w->head = 0;
	w->cap = c;
	w->imax = 2 * c - 1;
	w->imask = w->imax < KWIN_FIRST_INDEX - 1 ? w->imax : KWIN_FIRST_INDEX - 1;
	w->evicted = 0;
}

void kwin_free(struct kwin *w)
{
	free(w->ring);
	free(w->index);
	w->ring = NULL;
	w->index = NULL;
}

/* The ring is written in order, so only as much of it as the trace has
 * links is ever touched; the index starts at KWIN_FIRST_INDEX slots and
 * grows (grow_index).  Neither is reserved with huge pages: a huge page is
 * zeroed whole at its first touch, 2 MiB for a few hundred links. */
static int kwin_alloc(struct kwin *w)
{
	w->ring = malloc((size_t)w->cap * sizeof *w->ring);
	w->index = calloc((size_t)w->imask + 1, sizeof *w->index);
	if (!w->ring || !w->index) {
		kwin_free(w);
		return EV_ERR_NOMEM;
	}
	return EV_OK;
}

/* Remove the index slot that points at ring position pos, if any. */
static void unindex(struct kwin *w, uint32_t pos)
{
	uint32_t i = slot_of(w, w->ring[pos].key);
	while (w->index[i] && w->index[i] != pos + 1)
		i = (i + 1) & w->imask;
	if (!w->index[i])
		return; /* shadowed by a newer entry with the same key */
	/* Backward shift: move later entries of the cluster into the hole. */
	uint32_t hole = i, j = i;
	for (;;) {
		j = (j + 1) & w->imask;
		if (!w->index[j])
			break;
		uint32_t home = slot_of(w, w->ring[w->index[j] - 1].key);
		/* j's entry may move to hole when home is not in (hole, j]. */
		int between = hole <= j ? (home > hole && home <= j) : (home > hole || home <= j);
		if (!between) {
			w->index[hole] = w->index[j];
			hole = j;
		}
	}
	w->index[hole] = 0;
}

/* Index the entry at ring position pos (a newer entry of the same key
 * takes over its slot). */
static void index_pos(struct kwin *w, uint32_t pos)
{
	uint64_t key = w->ring[pos].key;
	uint32_t i = slot_of(w, key);
	while (w->index[i] && w->ring[w->index[i] - 1].key != key)
		i = (i + 1) & w->imask;
	w->index[i] = pos + 1;
}

/* Double the index and index the live entries again, oldest first, so
 * that a key put twice ends on its newer entry as before. */
static int grow_index(struct kwin *w)
{
	uint32_t *bigger = calloc(((size_t)w->imask + 1) * 2, sizeof *bigger);
	if (!bigger)
		return EV_ERR_NOMEM;
	free(w->index);
	w->index = bigger;
	w->imask = w->imask * 2 + 1;
	uint64_t live = w->head < w->cap ? w->head : w->cap;
	for (uint64_t n = w->head - live; n < w->head; n++)
		index_pos(w, (uint32_t)(n & (w->cap - 1)));
	return EV_OK;
}

int kwin_put(struct kwin *w, uint64_t key, const struct kwin_ent *e)
{
	if (!w->ring && kwin_alloc(w) != EV_OK)
		return EV_ERR_NOMEM;
	/* At most half full after this put: short probes. */
	uint64_t live = w->head < w->cap ? w->head + 1 : w->cap;
	while (w->imask < w->imax && live * 2 > (uint64_t)w->imask + 1)
		if (grow_index(w) != EV_OK)
			return EV_ERR_NOMEM;
	uint32_t pos = (uint32_t)(w->head & (w->cap - 1));
	if (w->head >= w->cap) {
		unindex(w, pos);
		w->evicted++;
	}
	w->ring[pos] = *e;
	w->ring[pos].key = key;
	w->head++;
	index_pos(w, pos);
	return EV_OK;
}

const struct kwin_ent *kwin_get(const struct kwin *w, uint64_t key)
{
	if (!w->index)
		return NULL;
	uint32_t i = slot_of(w, key);
	while (w->index[i]) {
		const struct kwin_ent *e = &w->ring[w->index[i] - 1];
		if (e->key == key)
			return e;
		i = (i + 1) & w->imask;
	}
	return NULL;
}
