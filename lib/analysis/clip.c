/* SPDX-License-Identifier: MIT */
/*
 * clip.c - cut kernels that overrun the next kernel on their stream.
 *
 * Records pass through a FIFO in their order.  A kernel enters held: it
 * may still be cut when the next kernel of its (rank, stream) arrives.  It
 * is released then, or as soon as a record starts at or after its end
 * (nothing later can overlap it).  The FIFO is written from the front
 * while the front is released, so order never changes; only held kernels'
 * durations do.
 */
#include <stdlib.h>
#include <string.h>

#include "ev/analysis.h"
#include "ev/stream.h"

struct slot { struct ev_rec rec; int held; };

struct ev_clipper {
	ev_writer *w;
	struct slot *q;            /* ring buffer */
	size_t head, len, cap;
	struct ev_map last;        /* (rank, stream) -> absolute index + 1 of its held kernel */
	uint64_t base;             /* absolute index of q[head] */
	uint64_t clipped;
	int64_t min_held_end;      /* earliest end among held kernels */
};

int ev_clipper_open(ev_clipper **cp, ev_writer *w)
{
	ev_clipper *c = calloc(1, sizeof *c);
	*cp = c;
	if (!c)
		return EV_ERR_NOMEM;
	c->w = w;
	ev_map_init(&c->last);
	c->min_held_end = INT64_MAX;
	return EV_OK;
}

static struct slot *at(ev_clipper *c, uint64_t abs)
{
	return &c->q[(c->head + (size_t)(abs - c->base)) % c->cap];
}

static int grow(ev_clipper *c)
{
	size_t cap = c->cap ? 2 * c->cap : 256;
	struct slot *nq = malloc(cap * sizeof *nq);
	if (!nq)
		return EV_ERR_NOMEM;
	for (size_t i = 0; i < c->len; i++)
		nq[i] = c->q[(c->head + i) % c->cap];
	free(c->q);
	c->q = nq;
	c->cap = cap;
	c->head = 0;
	return EV_OK;
}

static uint64_t stream_key(const struct ev_rec *r)
{
	return ((uint64_t)r->rank << 32 | r->stream) ^ 0x5bd1e9955bd1e995ULL;
}

/* Release held kernels that ended by t; write the released front. */
static int drain(ev_clipper *c, int64_t t, int all)
{
	if (all || t >= c->min_held_end) {
		int64_t next = INT64_MAX;
		for (size_t i = 0; i < c->len; i++) {
			struct slot *s = &c->q[(c->head + i) % c->cap];
			if (!s->held)
				continue;
			if (all || ev_rec_end(&s->rec) <= t)
				s->held = 0;
			else if (ev_rec_end(&s->rec) < next)
				next = ev_rec_end(&s->rec);
		}
		c->min_held_end = next;
	}
	while (c->len && !c->q[c->head].held) {
		struct slot *s = &c->q[c->head];
		if (s->rec.type == EV_KERNEL) {
			uint64_t *p = ev_map_get(&c->last, stream_key(&s->rec));
			if (p && *p == c->base + 1)
				*p = 0; /* no longer held */
		}
		int rc = ev_write(c->w, &s->rec);
		if (rc)
			return rc;
		c->head = (c->head + 1) % c->cap;
		c->len--;
		c->base++;
	}
	return EV_OK;
}

int ev_clipper_add(ev_clipper *c, const struct ev_rec *r)
{
	int rc = drain(c, r->ts, 0);
	if (rc)
		return rc;
	if (c->len == 0 && r->type != EV_KERNEL)
		return ev_write(c->w, r);
	if (r->type == EV_KERNEL) {
		uint64_t key = stream_key(r);
		uint64_t *p = ev_map_get(&c->last, key);
		if (p && *p) {
			struct slot *prev = at(c, *p - 1);
			if (prev->held && ev_rec_end(&prev->rec) > r->ts) {
				prev->rec.dur = (uint64_t)(r->ts - prev->rec.ts);
				prev->rec.flags |= EV_F_CLIPPED;
				c->clipped++;
			}
			prev->held = 0;
		}
	}
	if (c->len == c->cap && (rc = grow(c)) != EV_OK)
		return rc;
	struct slot *s = &c->q[(c->head + c->len) % c->cap];
	uint64_t abs = c->base + c->len;
	c->len++;
	s->rec = *r;
	s->held = r->type == EV_KERNEL && r->dur > 0;
	if (s->held) {
		if ((rc = ev_map_put(&c->last, stream_key(r), abs + 1)) != EV_OK)
			return rc;
		if (ev_rec_end(r) < c->min_held_end)
			c->min_held_end = ev_rec_end(r);
	}
	return drain(c, r->ts, 0);
}

int ev_clipper_finish(ev_clipper *c)
{
	return drain(c, 0, 1);
}

uint64_t ev_clipper_clipped(const ev_clipper *c)
{
	return c->clipped;
}

void ev_clipper_free(ev_clipper *c)
{
	if (!c)
		return;
	ev_map_free(&c->last);
	free(c->q);
	free(c);
}
