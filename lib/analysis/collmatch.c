/* SPDX-License-Identifier: MIT */
/*
 * collmatch.c - match the records of one collective across the ranks of
 * its communicator by (group, comm, seq, kind), in bounded memory.
 *
 * Open collectives live in a slot pool (reused through a free list, so a
 * warm matcher allocates nothing per record), found through an open-
 * addressing hash table with backward-shift deletion (no tombstones, no
 * scan for free slots), and chained in a list in creation order so that
 * the oldest can be released first when a bound is reached.
 */
#include <stdlib.h>
#include <string.h>

#include "ev/stats.h"
#include "ev/stream.h"

#define NIL UINT32_MAX

struct slot {
	struct ev_coll_key key;
	struct ev_rec first;
	uint64_t hash;
	uint32_t expect, seen, cap;
	uint32_t prev, next;        /* creation-order list; next = free list when unused */
	struct ev_coll_arrival *arr;
};

struct ev_collmatch {
	struct slot *slot;
	uint32_t nslot, capslot;
	uint32_t free_head;
	uint32_t oldest, newest;    /* creation-order list */
	size_t open, held;
	uint32_t *tab;              /* hash table of slot indices, NIL empty */
	size_t tabcap;              /* power of two */
	size_t max_open, max_held;
	ev_coll_done_fn fn;
	void *ctx;
	struct ev_collmatch_counts counts;
};

static uint64_t key_hash(const struct ev_coll_key *k)
{
	uint64_t h = k->group * 0x9E3779B97F4A7C15ULL ^ k->comm * 0xC2B2AE3D27D4EB4FULL ^ k->seq * 0x165667B19E3779F9ULL ^
	             (uint64_t)k->kind * 0xD6E8FEB86659FD93ULL;
	h ^= h >> 33;
	h *= 0xFF51AFD7ED558CCDULL;
	h ^= h >> 33;
	return h;
}

static int key_eq(const struct ev_coll_key *a, const struct ev_coll_key *b)
{
	return a->group == b->group && a->comm == b->comm && a->seq == b->seq && a->kind == b->kind;
}

int ev_collmatch_new(ev_collmatch **mp, const struct ev_collmatch_limits *lim, ev_coll_done_fn fn, void *ctx)
{
	ev_collmatch *m = calloc(1, sizeof *m);
	*mp = m;
	if (!m)
		return EV_ERR_NOMEM;
	m->max_open = lim && lim->max_open ? lim->max_open : EV_COLLMATCH_MAX_OPEN;
	m->max_held = lim && lim->max_held ? lim->max_held : EV_COLLMATCH_MAX_HELD;
	if (m->max_open > NIL / 2)
		m->max_open = NIL / 2;
	m->fn = fn;
	m->ctx = ctx;
	m->free_head = m->oldest = m->newest = NIL;
	m->tabcap = 64;
	m->tab = malloc(m->tabcap * sizeof *m->tab);
	if (!m->tab)
		return EV_ERR_NOMEM;
	memset(m->tab, 0xff, m->tabcap * sizeof *m->tab);
	return EV_OK;
}

/* Table position of key k, or of the empty cell where it would go. */
static size_t tab_find(const ev_collmatch *m, const struct ev_coll_key *k, uint64_t h, int *found)
{
	size_t mask = m->tabcap - 1, i = (size_t)h & mask;
	for (;; i = (i + 1) & mask) {
		uint32_t s = m->tab[i];
		if (s == NIL) {
			*found = 0;
			return i;
		}
		if (m->slot[s].hash == h && key_eq(&m->slot[s].key, k)) {
			*found = 1;
			return i;
		}
	}
}

static int tab_grow(ev_collmatch *m)
{
	size_t cap = m->tabcap * 2;
	uint32_t *t = malloc(cap * sizeof *t);
	if (!t)
		return EV_ERR_NOMEM;
	memset(t, 0xff, cap * sizeof *t);
	for (size_t i = 0; i < m->tabcap; i++) {
		uint32_t s = m->tab[i];
		if (s == NIL)
			continue;
		size_t j = (size_t)m->slot[s].hash & (cap - 1);
		while (t[j] != NIL)
			j = (j + 1) & (cap - 1);
		t[j] = s;
	}
	free(m->tab);
	m->tab = t;
	m->tabcap = cap;
	return EV_OK;
}

/* Remove table cell i, moving later cells of the probe run back so that
 * every key stays reachable from its home cell. */
static void tab_delete(ev_collmatch *m, size_t i)
{
	size_t mask = m->tabcap - 1, j = i;
	for (;;) {
		j = (j + 1) & mask;
		uint32_t s = m->tab[j];
		if (s == NIL)
			break;
		size_t home = (size_t)m->slot[s].hash & mask;
		/* Move j to i unless home lies cyclically in (i, j]. */
		int stays = i <= j ? (home > i && home <= j) : (home > i || home <= j);
		if (!stays) {
			m->tab[i] = s;
			i = j;
		}
	}
	m->tab[i] = NIL;
}

static void list_unlink(ev_collmatch *m, uint32_t s)
{
	struct slot *p = &m->slot[s];
	if (p->prev != NIL)
		m->slot[p->prev].next = p->next;
	else
		m->oldest = p->next;
	if (p->next != NIL)
		m->slot[p->next].prev = p->prev;
	else
		m->newest = p->prev;
}

/* Hand slot s to the callback, then return it to the free list. */
static int release(ev_collmatch *m, uint32_t s, int why)
{
	struct slot *p = &m->slot[s];
	int found;
	size_t pos = tab_find(m, &p->key, p->hash, &found);
	if (found)
		tab_delete(m, pos);
	list_unlink(m, s);
	struct ev_coll_done d;
	d.key = p->key;
	d.first = p->first;
	d.expect = p->expect;
	d.seen = p->seen;
	d.complete = why == 0;
	d.arr = p->arr;
	if (why == 0)
		m->counts.complete++;
	else if (why == 1)
		m->counts.evicted++;
	else
		m->counts.flushed++;
	if (why != 0 && p->expect == 0)
		m->counts.unsized++;
	m->open--;
	m->held -= p->seen;
	int rc = m->fn ? m->fn(m->ctx, &d) : EV_OK;
	p->seen = 0;
	p->next = m->free_head;
	m->free_head = s;
	return rc;
}

static int new_slot(ev_collmatch *m, uint32_t *out)
{
	if (m->free_head != NIL) {
		*out = m->free_head;
		m->free_head = m->slot[*out].next;
		return EV_OK;
	}
	if (m->nslot == m->capslot) {
		uint32_t cap = m->capslot ? 2 * m->capslot : 64;
		struct slot *ns = realloc(m->slot, (size_t)cap * sizeof *ns);
		if (!ns)
			return EV_ERR_NOMEM;
		memset(ns + m->capslot, 0, (size_t)(cap - m->capslot) * sizeof *ns);
		m->slot = ns;
		m->capslot = cap;
	}
	*out = m->nslot++;
	return EV_OK;
}

int ev_collmatch_add(ev_collmatch *m, const struct ev_coll_key *k, uint32_t expect, const struct ev_rec *r,
                     uint64_t data, struct ev_coll_arrival *prev)
{
	uint64_t h = key_hash(k);
	int found, rc;
	size_t pos = tab_find(m, k, h, &found);
	uint32_t s;
	if (prev)
		prev->rank = UINT32_MAX;
	if (found) {
		s = m->tab[pos];
	} else {
		/* Make room first: the oldest open collectives go, incomplete. */
		while (m->open >= m->max_open && m->oldest != NIL)
			if ((rc = release(m, m->oldest, 1)) != EV_OK)
				return rc;
		if ((m->open + 1) * 2 > m->tabcap) {
			if ((rc = tab_grow(m)) != EV_OK)
				return rc;
		}
		if ((rc = new_slot(m, &s)) != EV_OK)
			return rc;
		pos = tab_find(m, k, h, &found);
		struct slot *p = &m->slot[s];
		p->key = *k;
		p->hash = h;
		p->first = *r;
		p->expect = expect;
		p->seen = 0;
		p->prev = m->newest;
		p->next = NIL;
		if (m->newest != NIL)
			m->slot[m->newest].next = s;
		else
			m->oldest = s;
		m->newest = s;
		m->tab[pos] = s;
		m->open++;
		if (m->open > m->counts.open_peak)
			m->counts.open_peak = m->open;
	}
	struct slot *p = &m->slot[s];
	if (p->seen == p->cap) {
		uint32_t cap = p->cap ? 2 * p->cap : 8;
		struct ev_coll_arrival *na = realloc(p->arr, (size_t)cap * sizeof *na);
		if (!na)
			return EV_ERR_NOMEM;
		p->arr = na;
		p->cap = cap;
	}
	if (prev && p->seen)
		*prev = p->arr[p->seen - 1];
	struct ev_coll_arrival *a = &p->arr[p->seen++];
	a->rank = r->rank;
	a->ts = r->ts;
	a->end = ev_rec_end(r);
	a->dur = r->dur;
	a->data = data;
	m->held++;
	if (p->expect && p->seen >= p->expect)
		return release(m, s, 0);
	/* Too many arrivals held: release the oldest (possibly this one). */
	while (m->held > m->max_held && m->oldest != NIL)
		if ((rc = release(m, m->oldest, 1)) != EV_OK)
			return rc;
	return EV_OK;
}

int ev_collmatch_flush(ev_collmatch *m)
{
	int rc = EV_OK;
	while (!rc && m->oldest != NIL)
		rc = release(m, m->oldest, 2);
	return rc;
}

void ev_collmatch_get_counts(const ev_collmatch *m, struct ev_collmatch_counts *c)
{
	*c = m->counts;
}

void ev_collmatch_free(ev_collmatch *m)
{
	if (!m)
		return;
	for (uint32_t i = 0; i < m->nslot; i++)
		free(m->slot[i].arr);
	free(m->slot);
	free(m->tab);
	free(m);
}
