/* SPDX-License-Identifier: MIT */
/*
 * counters.c - the counter tracks acelyzer draws from an AIU trace, as
 * counter records of the converter's third pass (records in time order):
 *
 * ConcurrentPreps (acelyzer's prep_queue, cmpt_collection.py): per rank,
 * the number of Cmpt Prep events running, one sample at every time one
 * starts or ends (equal times one sample, the count after them).
 *
 * Power (mW) (acelyzer's power_ts4, power.py): per rank, the args.Power
 * charge accumulator of the device events other than Prep that last more
 * than 100 ns, in the order of their TS4: between two readings P_a, P_b
 * (the 32-bit difference) over the time dt between their TS4,
 * 12 V x dP / 512 / dt[us] in W, written at the first reading; a reading
 * of 0 starts over (the first) or is skipped (the second), one at the same
 * time as the one before is skipped, and above 100 W is written as 0
 * (acelyzer's rules).  acelyzer writes Watts as a float; a counter record
 * holds an integer, so the series is in mW.
 *
 * Memory per rank: the end times of its Prep events still running.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "flex/counters_int.h"

void fc_init(struct fc *f)
{
	memset(f, 0, sizeof *f);
	ev_map_init(&f->ix);
	ev_vec_init(&f->v, sizeof(struct fc_rank));
}

void fc_free(struct fc *f)
{
	struct fc_rank *r = f->v.data;
	for (size_t i = 0; i < f->v.len; i++)
		free(r[i].ends);
	ev_map_free(&f->ix);
	ev_vec_free(&f->v);
}

static struct fc_rank *rank_of(struct fc *f, uint32_t rank)
{
	uint64_t *ix = ev_map_get(&f->ix, (uint64_t)rank + 1);
	if (ix)
		return (struct fc_rank *)f->v.data + (*ix - 1);
	struct fc_rank *r = ev_vec_push(&f->v);
	if (!r || ev_map_put(&f->ix, (uint64_t)rank + 1, f->v.len))
		return NULL;
	r->rank = rank;
	return r;
}

static int sample(struct fc *f, ev_sorter *out, uint32_t rank, uint16_t src, uint64_t name, int64_t ts, uint64_t v)
{
	struct ev_rec c;
	ev_rec_init(&c);
	c.type = EV_COUNTER;
	c.rank = rank;
	c.src = src;
	c.ts = ts;
	c.name = name;
	c.bytes = v;
	(void)f;
	return ev_sorter_add(out, &c);
}

/* The prep count changes at t to v: one sample per distinct time, written
 * when a later time comes. */
static int prep_at(struct fc *f, ev_sorter *out, struct fc_rank *r, int64_t t, uint64_t v)
{
	if (r->have_pend && r->pend_t == t) {
		r->pend_v = v;
		return EV_OK;
	}
	if (r->have_pend) {
		int rc = sample(f, out, r->rank, r->src, f->prep_name, r->pend_t, r->pend_v);
		if (rc != EV_OK)
			return rc;
		f->n_prep++;
	}
	r->pend_t = t;
	r->pend_v = v;
	r->have_pend = 1;
	return EV_OK;
}

/* The Preps that ended at or before t leave the count. */
static int prep_ends(struct fc *f, ev_sorter *out, struct fc_rank *r, int64_t t)
{
	while (r->nends && r->ends[0] <= t) {
		int64_t e = r->ends[0];
		size_t k = 0;
		while (k < r->nends && r->ends[k] == e)
			k++;
		memmove(r->ends, r->ends + k, (r->nends - k) * sizeof *r->ends);
		r->nends -= k;
		int rc = prep_at(f, out, r, e, r->nends);
		if (rc != EV_OK)
			return rc;
	}
	return EV_OK;
}

int fc_prep(struct fc *f, ev_sorter *out, const struct ev_rec *p)
{
	struct fc_rank *r = rank_of(f, p->rank);
	if (!r)
		return EV_ERR_NOMEM;
	r->src = p->src;
	int rc = prep_ends(f, out, r, p->ts);
	if (rc != EV_OK)
		return rc;
	if (r->nends == r->cap) {
		size_t cap = r->cap ? 2 * r->cap : 8;
		int64_t *e = realloc(r->ends, cap * sizeof *e);
		if (!e)
			return EV_ERR_NOMEM;
		r->ends = e;
		r->cap = cap;
	}
	/* Sorted insert: few Preps run at once. */
	int64_t end = ev_rec_end(p);
	size_t i = r->nends;
	while (i > 0 && r->ends[i - 1] > end) {
		r->ends[i] = r->ends[i - 1];
		i--;
	}
	r->ends[i] = end;
	r->nends++;
	return prep_at(f, out, r, p->ts, r->nends);
}

int fc_power(struct fc *f, ev_sorter *out, const struct ev_rec *p, uint64_t c4, uint64_t soc_khz)
{
	struct fc_rank *r = rank_of(f, p->rank);
	if (!r)
		return EV_ERR_NOMEM;
	uint64_t pb = p->bytes;
	if (!r->have_prev || r->prev_p == 0) {
		r->have_prev = 1;
		r->prev_ts = p->ts, r->prev_p = pb, r->prev_c4 = c4, r->prev_src = p->src;
		return EV_OK;
	}
	if (pb == 0 || p->ts == r->prev_ts)
		return EV_OK;
	double dp = r->prev_p < pb ? (double)(pb - r->prev_p) : 4294967296.0 + (double)pb - (double)r->prev_p;
	/* dt between the two TS4: from the cycles within one input (acelyzer's
	 * device clock), else from the times. */
	double dt_us = p->src == r->prev_src && c4 > r->prev_c4 ? (double)(c4 - r->prev_c4) * 1000.0 / (double)soc_khz
	                                                          : (double)(p->ts - r->prev_ts) / 1000.0;
	double w = dt_us > 0 ? 12.0 * dp / 512.0 / dt_us : -1;
	if (!(w >= 0) || w > 100) {
		f->n_power_bad++;
		w = 0;
	}
	int rc = sample(f, out, r->rank, r->prev_src, f->power_name, r->prev_ts, (uint64_t)llround(w * 1000));
	if (rc != EV_OK)
		return rc;
	f->n_power++;
	r->prev_ts = p->ts, r->prev_p = pb, r->prev_c4 = c4, r->prev_src = p->src;
	return EV_OK;
}

int fc_finish(struct fc *f, ev_sorter *out)
{
	struct fc_rank *r = f->v.data;
	for (size_t i = 0; i < f->v.len; i++) {
		int rc = prep_ends(f, out, &r[i], INT64_MAX);
		if (rc == EV_OK && r[i].have_pend) {
			rc = sample(f, out, r[i].rank, r[i].src, f->prep_name, r[i].pend_t, r[i].pend_v);
			f->n_prep++;
			r[i].have_pend = 0;
		}
		if (rc != EV_OK)
			return rc;
	}
	return EV_OK;
}
