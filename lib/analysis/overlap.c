/* SPDX-License-Identifier: MIT */
/*
 * overlap.c - which communication ran under each compute kernel.
 *
 * One sweep per rank over a time-ordered stream.  A compute kernel stays
 * open until the stream passes its end; every communication kernel that
 * starts before then is intersected with it, and communication kernels
 * still running when it starts are intersected on arrival.  Overlaps of one
 * kernel arrive in start order, so their union is merged on the fly.
 * Memory holds only the intervals open at one instant.
 */
#include <stdlib.h>
#include <string.h>

#include "ev/stats.h"

struct comp { /* an open compute kernel */
	struct ev_overlap_kernel k;
	uint64_t seq;           /* open order, for ties in the close heap */
	int64_t cur_s, cur_e;   /* current merged overlap interval */
	uint64_t uni;           /* merged overlap before it */
};

struct comm { int64_t s, e; uint64_t name; };

struct rankstate {
	struct ev_overlap_rank tot;
	struct comp *open;
	size_t nopen, capopen;
	struct comm *act;
	size_t nact, capact;
	struct ev_cover cov;    /* classes: computation, communication */
	int64_t t0;
};

/* The close heap: every open compute kernel by (end, rank index, open
 * order), so that closing costs O(log open) and never visits idle ranks. */
struct hent { int64_t end; uint32_t ri; uint64_t seq; };

struct ev_overlap {
	struct ev_overlap_opts o;
	ev_strtab *st;
	int (*emit)(void *ctx, const struct ev_overlap_kernel *k);
	void *ctx;
	struct rankstate *ranks;
	size_t nranks;
	struct ev_overlap_rank *tot;  /* after finish: per rank, sorted */
	struct ev_map rank_idx;     /* rank + 1 -> index + 1 */
	struct ev_map comm_cache;   /* name -> is comm + 1 */
	struct ev_map class_cache;  /* name -> class + 1 */
	struct ev_rec pending;      /* a communication kernel awaiting its collective */
	int have_pending;
	struct hent *heap;
	size_t nheap, capheap;
	uint64_t nseq;
	struct ev_overlap_counts n;
};

int ev_overlap_new(ev_overlap **ovp, ev_strtab *st, const struct ev_overlap_opts *o,
                   int (*emit)(void *ctx, const struct ev_overlap_kernel *k), void *ctx)
{
	ev_overlap *ov = calloc(1, sizeof *ov);
	*ovp = ov;
	if (!ov)
		return EV_ERR_NOMEM;
	ov->o = *o;
	ov->st = st;
	ov->emit = emit;
	ov->ctx = ctx;
	ev_map_init(&ov->rank_idx);
	ev_map_init(&ov->comm_cache);
	ev_map_init(&ov->class_cache);
	return EV_OK;
}

void ev_overlap_free(ev_overlap *ov)
{
	if (!ov)
		return;
	for (size_t i = 0; i < ov->nranks; i++) {
		free(ov->ranks[i].open);
		free(ov->ranks[i].act);
	}
	free(ov->ranks);
	free(ov->tot);
	free(ov->heap);
	ev_map_free(&ov->rank_idx);
	ev_map_free(&ov->comm_cache);
	ev_map_free(&ov->class_cache);
	free(ov);
}

static const char *str_of(const ev_overlap *ov, uint64_t id)
{
	const char *t = ev_strtab_get(ov->st, id, NULL);
	return t ? t : "";
}

static int cached(struct ev_map *m, uint64_t key, unsigned *v)
{
	uint64_t *c = key ? ev_map_get(m, key) : NULL;
	if (!c)
		return 0;
	*v = (unsigned)(*c - 1);
	return 1;
}

static int is_comm(ev_overlap *ov, const struct ev_rec *r)
{
	unsigned v;
	if (r->type != EV_KERNEL)
		return 0;
	if (cached(&ov->comm_cache, r->name, &v))
		return (int)v;
	v = (unsigned)ev_is_comm_name(ov->o.rules, str_of(ov, r->name));
	if (r->name && ev_map_put(&ov->comm_cache, r->name, v + 1) != EV_OK)
		return -1;
	return (int)v;
}

static int kclass(ev_overlap *ov, const struct ev_rec *r, unsigned *k)
{
	if (cached(&ov->class_cache, r->name, k))
		return EV_OK;
	*k = ev_kernel_class(ov->o.rules, str_of(ov, r->name));
	return r->name ? ev_map_put(&ov->class_cache, r->name, *k + 1) : EV_OK;
}

static struct rankstate *rank_of(ev_overlap *ov, uint32_t src, uint32_t rank)
{
	uint64_t key = ((uint64_t)src << 32 | rank) + 1;
	uint64_t *i = ev_map_get(&ov->rank_idx, key);
	if (i)
		return &ov->ranks[*i - 1];
	struct rankstate *nr = realloc(ov->ranks, (ov->nranks + 1) * sizeof *nr);
	if (!nr)
		return NULL;
	ov->ranks = nr;
	struct rankstate *r = &ov->ranks[ov->nranks++];
	memset(r, 0, sizeof *r);
	r->tot.rank = rank;
	r->tot.src = src;
	ev_cover_init(&r->cov);
	if (ev_map_put(&ov->rank_idx, key, ov->nranks) != EV_OK)
		return NULL;
	return r;
}

static void intersect(struct comp *c, int64_t s, int64_t e, uint64_t name)
{
	struct ev_overlap_kernel *k = &c->k;
	int64_t ks = k->rec.ts, ke = k->end;
	int64_t a = s > ks ? s : ks, b = e < ke ? e : ke;
	if (b <= a)
		return;
	uint64_t ov = ev_span(a, b);
	k->count++;
	if (ov > k->best) {
		k->best = ov;
		k->best_name = name;
	}
	uint32_t i;
	for (i = 0; i < k->nnames && k->names[i] != name; i++)
		;
	if (i == k->nnames) {
		if (k->nnames < EV_OVERLAP_NAMES)
			k->names[k->nnames++] = name;
		else
			k->more = 1;
	}
	/* Overlaps arrive in start order: merge into the running union. */
	if (c->cur_e <= c->cur_s) {
		c->cur_s = a;
		c->cur_e = b;
	} else if (a > c->cur_e) {
		c->uni += ev_span(c->cur_s, c->cur_e);
		c->cur_s = a;
		c->cur_e = b;
	} else if (b > c->cur_e) {
		c->cur_e = b;
	}
}

static int hent_less(const struct hent *x, const struct hent *y)
{
	if (x->end != y->end)
		return x->end < y->end;
	if (x->ri != y->ri)
		return x->ri < y->ri;
	return x->seq < y->seq;
}

static int heap_push(ev_overlap *ov, struct hent e)
{
	if (ov->nheap == ov->capheap) {
		size_t cap = ov->capheap ? 2 * ov->capheap : 64;
		struct hent *nh = realloc(ov->heap, cap * sizeof *nh);
		if (!nh)
			return EV_ERR_NOMEM;
		ov->heap = nh;
		ov->capheap = cap;
	}
	size_t i = ov->nheap++;
	while (i > 0 && hent_less(&e, &ov->heap[(i - 1) / 2])) {
		ov->heap[i] = ov->heap[(i - 1) / 2];
		i = (i - 1) / 2;
	}
	ov->heap[i] = e;
	return EV_OK;
}

static struct hent heap_pop(ev_overlap *ov)
{
	struct hent top = ov->heap[0], e = ov->heap[--ov->nheap];
	size_t i = 0, n = ov->nheap;
	for (;;) {
		size_t c = 2 * i + 1;
		if (c >= n)
			break;
		if (c + 1 < n && hent_less(&ov->heap[c + 1], &ov->heap[c]))
			c++;
		if (!hent_less(&ov->heap[c], &e))
			break;
		ov->heap[i] = ov->heap[c];
		i = c;
	}
	if (n)
		ov->heap[i] = e;
	return top;
}

/* Close every compute kernel that ended at or before t (all: every one), in
 * end order (ties: rank first seen, then open order), so that what the
 * caller writes for them keeps time order. */
static int close_until(ev_overlap *ov, int64_t t, int all)
{
	int rc = EV_OK;
	while (!rc && ov->nheap && (all || ov->heap[0].end <= t)) {
		struct hent e = heap_pop(ov);
		struct rankstate *rs = &ov->ranks[e.ri];
		size_t i;
		for (i = 0; i < rs->nopen && rs->open[i].seq != e.seq; i++)
			;
		if (i == rs->nopen)
			continue; /* cannot happen: every open kernel is in the heap once */
		struct comp c = rs->open[i];
		rs->open[i] = rs->open[--rs->nopen];
		rs->tot.overlapped += c.k.count > 0;
		c.k.union_ns = c.uni + ev_span(c.cur_s, c.cur_e);
		rc = ov->emit(ov->ctx, &c.k);
	}
	return rc;
}

/* Forget the communication kernels of a rank that ended by t: they cannot
 * overlap anything that starts at t or later. */
static void prune_act(struct rankstate *rs, int64_t t)
{
	size_t w = 0;
	for (size_t i = 0; i < rs->nact; i++)
		if (rs->act[i].e > t)
			rs->act[w++] = rs->act[i];
	rs->nact = w;
}

/* A communication kernel meets the compute kernels open on its rank. */
static int add_comm(struct rankstate *rs, const struct ev_rec *r, int64_t now)
{
	int64_t end = ev_rec_end(r);
	prune_act(rs, now);
	for (size_t i = 0; i < rs->nopen; i++)
		intersect(&rs->open[i], r->ts, end, r->name);
	if (rs->nact == rs->capact) {
		size_t cap = rs->capact ? 2 * rs->capact : 16;
		struct comm *na = realloc(rs->act, cap * sizeof *na);
		if (!na)
			return EV_ERR_NOMEM;
		rs->act = na;
		rs->capact = cap;
	}
	rs->act[rs->nact++] = (struct comm){ r->ts, end, r->name };
	return EV_OK;
}

/* The held communication kernel, named by the collective record that
 * follows it (same rank, stream and start) unless kernel_names. */
static int flush_pending(ev_overlap *ov, const struct ev_rec *next)
{
	if (!ov->have_pending)
		return EV_OK;
	struct ev_rec *p = &ov->pending;
	ov->have_pending = 0;
	if (next && !ov->o.kernel_names && (next->type == EV_COLL || next->type == EV_P2P) && next->src == p->src &&
	    next->rank == p->rank && next->stream == p->stream && next->ts == p->ts) {
		const char *kind = ev_coll_name(next->op);
		if (kind && ev_strtab_intern(ov->st, kind, strlen(kind), &p->name) != EV_OK)
			return EV_ERR_NOMEM;
	}
	struct rankstate *rs = rank_of(ov, p->src, p->rank);
	return rs ? add_comm(rs, p, next ? next->ts : p->ts) : EV_ERR_NOMEM;
}

/* A compute kernel of a reported class opens on its rank. */
static int open_comp(ev_overlap *ov, struct rankstate *rs, const struct ev_rec *r)
{
	if (rs->nopen == rs->capopen) {
		size_t cap = rs->capopen ? 2 * rs->capopen : 16;
		struct comp *no = realloc(rs->open, cap * sizeof *no);
		if (!no)
			return EV_ERR_NOMEM;
		rs->open = no;
		rs->capopen = cap;
	}
	struct comp *c = &rs->open[rs->nopen++];
	memset(c, 0, sizeof *c);
	c->k.rec = *r;
	c->k.end = ev_rec_end(r);
	c->seq = ov->nseq++;
	int rc = heap_push(ov, (struct hent){ c->k.end, (uint32_t)(rs - ov->ranks), c->seq });
	if (rc != EV_OK)
		return rc;
	prune_act(rs, r->ts);
	for (size_t i = 0; i < rs->nact; i++)
		intersect(c, rs->act[i].s, rs->act[i].e, rs->act[i].name);
	return EV_OK;
}

int ev_overlap_add(ev_overlap *ov, const struct ev_rec *r)
{
	int rc = flush_pending(ov, r);
	if (rc)
		return rc;
	if ((rc = close_until(ov, r->ts, 0)) != EV_OK)
		return rc;
	if (r->type != EV_KERNEL)
		return EV_OK;
	struct rankstate *rs = rank_of(ov, r->src, r->rank);
	if (!rs)
		return EV_ERR_NOMEM;
	int comm = is_comm(ov, r);
	if (comm < 0)
		return EV_ERR_NOMEM;
	if (!rs->cov.started)
		rs->t0 = r->ts;
	double a = (double)ev_span(rs->t0, r->ts);
	double z = a + (double)ev_span(r->ts, ev_rec_end(r)); /* saturated end */
	ov->n.kernels++;
	ov->n.comm += comm > 0;
	if (comm)
		ev_cover_add(&rs->cov, 1, a, z);
	else if (ov->o.rules != EV_RULES_HTA || ev_hta_kind(str_of(ov, r->name)) == EV_HTA_COMPUTATION)
		ev_cover_add(&rs->cov, 0, a, z);
	if (comm) {
		/* Held until the next record: it may be the collective's. */
		ov->pending = *r;
		ov->have_pending = 1;
		return EV_OK;
	}
	unsigned k;
	if ((rc = kclass(ov, r, &k)) != EV_OK)
		return rc;
	if (!(ov->o.class_mask & (1u << k)))
		return EV_OK;
	rs->tot.kernels++;
	ov->n.selected++;
	return open_comp(ov, rs, r);
}

static int cmp_rank(const void *a, const void *b)
{
	const struct ev_overlap_rank *x = a, *y = b;
	if (x->src != y->src)
		return x->src < y->src ? -1 : 1;
	return x->rank < y->rank ? -1 : x->rank > y->rank;
}

int ev_overlap_finish(ev_overlap *ov)
{
	int rc = flush_pending(ov, NULL);
	if (rc == EV_OK)
		rc = close_until(ov, 0, 1);
	if (rc != EV_OK)
		return rc;
	free(ov->tot);
	if (!(ov->tot = malloc((ov->nranks ? ov->nranks : 1) * sizeof *ov->tot)))
		return EV_ERR_NOMEM;
	for (size_t i = 0; i < ov->nranks; i++) {
		struct rankstate *rs = &ov->ranks[i];
		struct ev_overlap_rank *t = &ov->tot[i];
		ev_cover_finish(&rs->cov);
		*t = rs->tot;
		t->comm_ns = ev_cover_measure(&rs->cov, 2, 0);
		t->hidden_ns = ev_cover_measure(&rs->cov, 3, 0);
		t->overlap_pct = t->comm_ns > 0 ? 100.0 * t->hidden_ns / t->comm_ns : 0;
	}
	if (ov->nranks > 1)
		qsort(ov->tot, ov->nranks, sizeof *ov->tot, cmp_rank);
	return EV_OK;
}

const struct ev_overlap_rank *ev_overlap_ranks(const ev_overlap *ov, size_t *n)
{
	*n = ov->tot ? ov->nranks : 0;
	return ov->tot;
}

struct ev_overlap_counts ev_overlap_counts(const ev_overlap *ov)
{
	return ov->n;
}
