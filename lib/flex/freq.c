/* SPDX-License-Identifier: MIT */
/*
 * freq.c - the SoC clock the cycle counters tick at, detected from the
 * data as acelyzer does (normalize.py, frequency_stats): per rank, every
 * 'Cmpt Exec' kernel gives (TS4 - TS3) / host duration, and the gap of its
 * TS3 to the previous kernel's TS3 over the gap of their host starts (the
 * duration estimate when the starts are equal).  Per input, min and max
 * over its ranks and the mean of the ranks' means.  Memory per (input,
 * rank).
 */
#include <string.h>

#include "flex/freq_int.h"

void fq_init(struct fq *q)
{
	ev_map_init(&q->ix);
	ev_vec_init(&q->v, sizeof(struct fq_rank));
}

void fq_free(struct fq *q)
{
	ev_map_free(&q->ix);
	ev_vec_free(&q->v);
}

static void stat_add(struct fq_stat *s, double f)
{
	if (!s->n || f < s->min)
		s->min = f;
	if (!s->n || f > s->max)
		s->max = f;
	s->n++;
	s->mean += (f - s->mean) / (double)s->n;
}

int fq_note(struct fq *q, uint16_t src, uint32_t rank, int64_t host_ts, uint64_t host_dur, uint64_t c3,
            uint64_t c4)
{
	unsigned char k[8];
	ev_put32(k, src);
	ev_put32(k + 4, rank);
	uint64_t key = ev_hash64(k, sizeof k), *ix = ev_map_get(&q->ix, key ? key : 1);
	struct fq_rank *r;
	if (ix) {
		r = (struct fq_rank *)q->v.data + (*ix - 1);
	} else {
		r = ev_vec_push(&q->v);
		if (!r || ev_map_put(&q->ix, key ? key : 1, q->v.len))
			return EV_ERR_NOMEM;
		r->src = src;
		r->rank = rank;
	}
	if (!host_dur) {
		/* acelyzer divides by zero here; such a kernel tells nothing. */
		r->no_dur++;
		return EV_OK;
	}
	/* cycles per us = MHz; host times are ns. */
	double fd = (double)(int64_t)(c4 - c3) * 1000.0 / (double)host_dur, fi = fd;
	if (r->have_prev) {
		if (host_ts > r->prev_ts)
			fi = (double)(int64_t)(c3 - r->prev_c3) * 1000.0 / (double)(host_ts - r->prev_ts);
		else
			r->zero_gap++;
	}
	r->have_prev = 1;
	r->prev_c3 = c3;
	r->prev_ts = host_ts;
	stat_add(&r->dur, fd);
	stat_add(&r->gap, fi);
	return EV_OK;
}

static void merge(struct fq_stat *into, uint64_t *nranks, const struct fq_stat *s)
{
	if (!s->n)
		return;
	if (!*nranks || s->min < into->min)
		into->min = s->min;
	if (!*nranks || s->max > into->max)
		into->max = s->max;
	into->n += s->n;
	into->mean += (s->mean - into->mean) / (double)(*nranks + 1);
}

int fq_get(const struct fq *q, uint16_t src, struct ev_flex_freq *f)
{
	const struct fq_rank *r = q->v.data;
	uint64_t nd = 0, ng = 0;
	struct fq_stat d, g;
	memset(f, 0, sizeof *f);
	memset(&d, 0, sizeof d);
	memset(&g, 0, sizeof g);
	for (size_t i = 0; i < q->v.len; i++) {
		if (r[i].src != src)
			continue;
		f->no_dur += r[i].no_dur;
		f->zero_gap += r[i].zero_gap;
		if (!r[i].dur.n)
			continue;
		merge(&d, &nd, &r[i].dur);
		nd++;
		merge(&g, &ng, &r[i].gap);
		ng++;
	}
	f->kernels = d.n;
	f->ranks = nd;
	f->dur_min = d.min, f->dur_mean = d.mean, f->dur_max = d.max;
	f->gap_min = g.min, f->gap_mean = g.mean, f->gap_max = g.max;
	return nd ? 1 : 0;
}
