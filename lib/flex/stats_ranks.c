/* SPDX-License-Identifier: MIT */
/*
 * stats_ranks.c - the per-rank tables: acelyzer's _stats_summary.csv
 * (its stats_v2 metrics: elapsed time from the first 'Cmpt Exec' start
 * to the last one's end, the time in those kernels and in collective
 * spans, each as a fraction of the elapsed time) and _active.csv (kernel
 * time within that same span, in percent; ranks without kernels have no
 * row).
 */
#include <math.h>
#include <stdlib.h>

#include "flex/stats_int.h"

/* Percent of el, to 0.01 as acelyzer rounds it. */
static double pct(double part, double el)
{
	return el > 0 ? round(part / el * 10000) / 100 : 0;
}

/* acelyzer merges its metrics by pid: a metric a rank never saw is an
 * empty field (no kernel: no elapsed or compute time; no collective: no
 * comm time), and so is a fraction of an empty field. */
static int opt_f64(ev_table *t, int have, double v)
{
	return have ? ev_table_f64(t, v) : ev_table_null(t);
}

static int stats_row(ev_table *t, const struct fs_rank *r)
{
	double el = (double)(r->klast - r->kfirst);
	int k = r->have_k, c = r->have_c;
	int rc;
	if ((rc = ev_table_u64(t, r->rank)) || (rc = opt_f64(t, k, fs_us(el))) ||
	    (rc = opt_f64(t, k, fs_us(r->ktime))) || (rc = opt_f64(t, c, fs_us(r->comm))) ||
	    (rc = opt_f64(t, k && el > 0, r->ktime / el)) || (rc = opt_f64(t, k && c && el > 0, r->comm / el)))
		return rc;
	return EV_OK;
}

static int active_row(ev_table *t, const struct fs_rank *r)
{
	double el = (double)(r->klast - r->kfirst);
	int rc;
	if ((rc = ev_table_u64(t, r->rank)) || (rc = ev_table_f64(t, fs_us(r->ktime))) ||
	    (rc = ev_table_f64(t, fs_us(el))) || (rc = ev_table_f64(t, fs_us((double)r->kfirst))) ||
	    (rc = ev_table_f64(t, fs_us((double)r->klast))) || (rc = ev_table_f64(t, pct(r->ktime, el))))
		return rc;
	return EV_OK;
}

/* acelyzer's row order: pids as its time-sorted events first show them,
 * by the first kernel's start, then ranks with collectives only, by the
 * first collective's start; equal starts by rank. */
static int cmp_first(const void *a, const void *b)
{
	const struct fs_rank *x = *(const struct fs_rank *const *)a, *y = *(const struct fs_rank *const *)b;
	if (x->have_k != y->have_k)
		return x->have_k ? -1 : 1;
	int64_t tx = x->have_k ? x->kfirst : x->cfirst, ty = y->have_k ? y->kfirst : y->cfirst;
	if (tx != ty)
		return tx < ty ? -1 : 1;
	return x->rank < y->rank ? -1 : x->rank > y->rank;
}

static int stats_write(ev_flex_stats *s)
{
	size_t n = 0;
	const struct fs_rank **v = malloc((s->rs.len ? s->rs.len : 1) * sizeof *v);
	int rc = EV_OK;
	if (!v)
		return EV_ERR_NOMEM;
	for (size_t i = 0; i < s->rs.len; i++) {
		const struct fs_rank *r = (const struct fs_rank *)s->rs.data + i;
		if (r->have_k || r->have_c)
			v[n++] = r;
	}
	qsort(v, n, sizeof *v, cmp_first);
	for (size_t i = 0; i < n && !rc; i++)
		rc = stats_row(s->t, v[i]);
	free(v);
	return rc;
}

int fs_ranks_write(ev_flex_stats *s, const uint32_t *ranks)
{
	if (s->o.table == EV_FLEX_STATS)
		return stats_write(s);
	int rc = EV_OK;
	for (size_t i = 0; i < s->rs.len && !rc; i++) {
		const struct fs_rank *r = fs_rank(s, ranks[i]);
		if (r->have_k)
			rc = active_row(s->t, r);
	}
	return rc;
}
