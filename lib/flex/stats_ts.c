/* SPDX-License-Identifier: MIT */
/*
 * stats_ts.c - acelyzer's _ts_analysis.csv: per rank and normalised
 * 'Cmpt Exec' name (as the summary), the gaps between the AIU's stage
 * counters TS2-TS1, TS3-TS2, TS4-TS3, TS5-TS4 of its kernels, in cycles:
 * mean, median, min, max and standard deviation of each, and the calls;
 * the rows in the summary's order.  The counters come from the tsx record
 * flex2ev writes right before each kernel.
 */
#include <math.h>
#include <stdlib.h>

#include "flex/stats_int.h"

/* A tsx record: held for the kernel that follows it. */
void fs_ts_hold(ev_flex_stats *s, const struct ev_rec *r)
{
	s->tsx = *r;
	s->have_tsx = 1;
}

/* The held counters, if they belong to kernel r (same rank, stream, ts). */
static int held_for(const ev_flex_stats *s, const struct ev_rec *r, uint64_t gap[4])
{
	const struct ev_rec *t = &s->tsx;
	if (!s->have_tsx || t->rank != r->rank || t->stream != r->stream || t->ts != r->ts)
		return 0;
	gap[0] = t->step;
	gap[1] = t->aux;
	gap[2] = t->step_size;
	gap[3] = t->id;
	return 1;
}

int fs_ts_held(const ev_flex_stats *s, const struct ev_rec *r)
{
	uint64_t gap[4];
	return held_for(s, r, gap);
}

int fs_ts_add(ev_flex_stats *s, const struct ev_rec *r, const char *name, size_t len)
{
	uint64_t gap[4];
	if (!held_for(s, r, gap)) {
		s->n.no_counters++;
		return EV_OK;
	}
	int fresh;
	uint64_t id;
	int rc = fs_norm_name(s, name, len, &id);
	if (rc != EV_OK)
		return rc;
	struct fs_ts *k = fs_slot(&s->tix, &s->ts, fs_key(r->rank, id), &fresh);
	if (!k)
		return EV_ERR_NOMEM;
	if (fresh) {
		k->rank = r->rank;
		k->name = id;
		k->order = s->ts.len;
		for (int i = 0; i < 4; i++)
			ev_dist_init(&k->d[i]);
	}
	k->sum_ns += r->dur;
	for (int i = 0; i < 4; i++) {
		k->sum[i] += gap[i];
		if ((rc = ev_dist_add(&k->d[i], &s->pool, (double)gap[i], r->ts)) != EV_OK)
			return rc;
	}
	return EV_OK;
}

/* Rank ascending, then kernel time descending, then first seen (acelyzer
 * sorts its names, kept in order of appearance, stably by total time). */
static int cmp_ts(const void *a, const void *b)
{
	const struct fs_ts *x = *(struct fs_ts *const *)a, *y = *(struct fs_ts *const *)b;
	if (x->rank != y->rank)
		return x->rank < y->rank ? -1 : 1;
	if (x->sum_ns != y->sum_ns)
		return x->sum_ns > y->sum_ns ? -1 : 1;
	return x->order < y->order ? -1 : x->order > y->order;
}

/* acelyzer rounds mean, median and stdev to 0.001 cycles and prints every
 * number with 3 decimals. */
static double r3(double x)
{
	return round(x * 1000) / 1000;
}

static int row(ev_flex_stats *s, struct fs_ts *k)
{
	ev_table *t = s->t;
	const char *nm = ev_strtab_get(s->st, k->name, NULL);
	uint64_t n = k->d[0].n;
	int rc = ev_table_u64(t, n);
	for (int i = 0; i < 4 && !rc; i++) {
		struct ev_dist *d = &k->d[i];
		if ((rc = ev_table_f64(t, r3((double)k->sum[i] / (double)n))) ||
		    (rc = ev_table_f64(t, r3(ev_dist_quantile(d, 0.5)))) || (rc = ev_table_f64(t, r3(d->min))) ||
		    (rc = ev_table_f64(t, r3(d->max))) || (rc = ev_table_f64(t, r3(ev_dist_std(d)))))
			return rc;
	}
	if (rc || (rc = ev_table_u64(t, k->rank)) || (rc = ev_table_str(t, nm ? nm : "")))
		return rc;
	return EV_OK;
}

int fs_ts_write(ev_flex_stats *s)
{
	size_t n = s->ts.len;
	struct fs_ts **v = malloc((n ? n : 1) * sizeof *v);
	int rc = EV_OK;
	if (!v)
		return EV_ERR_NOMEM;
	for (size_t i = 0; i < n; i++)
		v[i] = (struct fs_ts *)s->ts.data + i;
	qsort(v, n, sizeof *v, cmp_ts);
	for (size_t i = 0; i < n && !rc; i++)
		rc = row(s, v[i]);
	free(v);
	return rc;
}

void fs_ts_free(ev_flex_stats *s)
{
	for (size_t i = 0; i < s->ts.len; i++)
		for (int j = 0; j < 4; j++)
			ev_dist_free(&((struct fs_ts *)s->ts.data)[i].d[j]);
}
