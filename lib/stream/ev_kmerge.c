/* SPDX-License-Identifier: MIT */
/*
 * ev_kmerge.c - the k-way merge heap: which of k sorted sources holds the
 * next record.  The sorter merges its runs with it and ev-merge its inputs.
 */
#include <stdlib.h>

#include "ev/stream.h"

/* Stream order, then the caller's tie number: no two slots compare equal
 * when ties are distinct, so any heap gives the same merge. */
static inline int slot_less(const struct ev_kmerge_slot *a, const struct ev_kmerge_slot *b)
{
	int c = ev_rec_order_cmp(a->rec, b->rec);
	return c ? c < 0 : a->tie < b->tie;
}

static void sift_up(struct ev_kmerge *h, size_t i)
{
	struct ev_kmerge_slot s = h->v[i];
	while (i > 0) {
		size_t p = (i - 1) / 2;
		if (!slot_less(&s, &h->v[p]))
			break;
		h->v[i] = h->v[p];
		i = p;
	}
	h->v[i] = s;
}

static void sift_down(struct ev_kmerge *h, size_t i)
{
	struct ev_kmerge_slot s = h->v[i];
	for (;;) {
		size_t l = 2 * i + 1, m = l;
		if (l >= h->n)
			break;
		if (l + 1 < h->n && slot_less(&h->v[l + 1], &h->v[l]))
			m = l + 1;
		if (!slot_less(&h->v[m], &s))
			break;
		h->v[i] = h->v[m];
		i = m;
	}
	h->v[i] = s;
}

int ev_kmerge_init(struct ev_kmerge *h, size_t k)
{
	h->n = 0;
	h->cap = k;
	h->v = malloc((k ? k : 1) * sizeof *h->v);
	return h->v ? EV_OK : EV_ERR_NOMEM;
}

void ev_kmerge_free(struct ev_kmerge *h)
{
	free(h->v);
	h->v = NULL;
	h->n = h->cap = 0;
}

int ev_kmerge_add(struct ev_kmerge *h, size_t src, const struct ev_rec *rec, uint64_t tie)
{
	if (h->n >= h->cap)
		return EV_ERR_ARG;
	h->v[h->n].rec = rec;
	h->v[h->n].tie = tie;
	h->v[h->n].src = src;
	sift_up(h, h->n++);
	return EV_OK;
}

void ev_kmerge_next(struct ev_kmerge *h, uint64_t tie)
{
	h->v[0].tie = tie;
	sift_down(h, 0);
}

void ev_kmerge_drop(struct ev_kmerge *h)
{
	if (h->n == 0)
		return;
	h->v[0] = h->v[--h->n];
	if (h->n)
		sift_down(h, 0);
}
