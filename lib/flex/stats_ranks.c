/* SPDX-License-Identifier: MIT */
/*
 * stats_ranks.c - the per-rank tables: acelyzer's _stats_summary.csv
 * (elapsed time from the first record's start to the last end, the share
 * in kernels and in collective spans) and _active.csv (kernel time within
 * the span from the first kernel's start to the last kernel's end; ranks
 * without kernels have no row).
 */
#include <math.h>

#include "flex/stats_int.h"

/* Percent of el, to 0.01 as acelyzer rounds it. */
static double pct(double part, double el)
{
	return el > 0 ? round(part / el * 10000) / 100 : 0;
}

static int stats_row(ev_table *t, const struct fs_rank *r)
{
	double el = (double)(r->last - r->first);
	int rc;
	if ((rc = ev_table_u64(t, r->rank)) || (rc = ev_table_f64(t, fs_us(el))) ||
	    (rc = ev_table_f64(t, fs_us(r->ktime))) || (rc = ev_table_f64(t, fs_us(r->comm))) ||
	    (rc = ev_table_f64(t, pct(r->ktime, el))) || (rc = ev_table_f64(t, pct(r->comm, el))))
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

int fs_ranks_write(ev_flex_stats *s, const uint32_t *ranks)
{
	int rc = EV_OK;
	for (size_t i = 0; i < s->rs.len && !rc; i++) {
		const struct fs_rank *r = fs_rank(s, ranks[i]);
		if (s->o.table == EV_FLEX_STATS)
			rc = stats_row(s->t, r);
		else if (r->have_k)
			rc = active_row(s->t, r);
	}
	return rc;
}
