/* SPDX-License-Identifier: MIT */
/*
 * stats_short.c - TraceLens's short-kernel study: kernels shorter than a
 * threshold (10 us by default), summed per launching op signature and
 * kernel name with their share of the trace's GPU time, and a histogram of
 * their durations in equal bins between the shortest and the longest, as
 * numpy.histogram draws them.
 *
 * The histogram needs the minimum and maximum before any value can be
 * binned; instead of keeping the values it counts them per nanosecond below
 * the threshold (threshold_ns counters, bounded by EV_SHORT_MAX_NS), which
 * is exact: every duration is a whole number of nanoseconds.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/stats_impl.h"

struct shorts {
	uint64_t *hist;                 /* kernels per duration in ns */
	int64_t first, last;            /* the GPU span */
	int any;
};

static uint64_t threshold_ns(const struct ev_stats *s)
{
	return s->o.short_ns ? s->o.short_ns : EV_SHORT_DEFAULT_NS;
}

static int short_rec(struct ev_stats *s, const struct ev_rec *r)
{
	if (!is_gpu(r))
		return EV_OK;
	struct shorts *sh = s->state;
	/* The trace's GPU span, the denominator of TraceLens's percentage: its
	 * GPU timeline's total time, which leaves out GPU events without a
	 * launching call unless --include-unlinked (as ev-stats timeline). */
	if (!(r->flags & EV_F_UNLINKED) || s->o.unlinked) {
		int64_t end = ev_rec_end(r);
		if (!sh->any || r->ts < sh->first)
			sh->first = r->ts;
		if (!sh->any || end > sh->last)
			sh->last = end;
		sh->any = 1;
	}
	uint64_t lim = threshold_ns(s);
	if (r->type != EV_KERNEL || r->dur >= lim)
		return EV_OK;
	s->n.selected++;
	if (!sh->hist) {
		sh->hist = calloc(lim, sizeof *sh->hist);
		if (!sh->hist)
			return EV_ERR_NOMEM;
	}
	sh->hist[r->dur]++;
	struct gkey k;
	int rc = base_key(s, r, &k);
	k.k1 = r->sig;
	k.k2 = r->name;
	struct kstat *ks = rc ? NULL : kstat_get(&s->g, &k, r->name, EV_KC_OTHER);
	if (!ks)
		return EV_ERR_NOMEM;
	return ev_dist_add(&ks->d, &s->pool, (double)r->dur / 1e3, r->ts);
}

static int cmp_sum_desc(const struct ev_stats *s, size_t ia, size_t ib)
{
	double sa = ((struct kstat *)GROUP_VAL(&s->g, ia))->d.sum, sb = ((struct kstat *)GROUP_VAL(&s->g, ib))->d.sum;
	return sa != sb ? (sa > sb ? -1 : 1) : 0;
}

static int summary_rows(struct ev_stats *s, struct ev_rowset *rs)
{
	struct ev_colspec keys[EV_STATS_MAX_BY + 2];
	size_t nk = 0;
	by_colspecs(&s->o, keys, &nk);
	keys[nk++] = (struct ev_colspec){ "op", 0, 0 };
	keys[nk++] = (struct ev_colspec){ "name", 0, 0 };
	static const struct ev_colspec vals[] = {
		{ "sum_us", 0, EV_DIR_LOWER }, { "count", 0, EV_DIR_NONE }, { "mean_us", 0, EV_DIR_LOWER },
		{ "percent_of_total_time", 0, EV_DIR_NONE },
	};
	int rc = ev_rowset_init(rs, keys, nk, vals, 4);
	size_t *ord = sorted_slots(s, cmp_sum_desc, &rc);
	const struct shorts *sh = s->state;
	double total_us = sh->any ? ((double)sh->last - (double)sh->first) / 1e3 : 0;
	struct ev_row *row;
	size_t n;
	struct kstat *ks;
	for (size_t j = 0; (ks = kstat_row(s, rs, ord, j, &row, &n, &rc)) != NULL; j++) {
		const struct gkey *gk = GROUP_KEY(&s->g, ord[j]);
		rc = ev_row_key(row, n++, gk->k1 ? str_of(s, gk->k1) : "");
		if (!rc)
			rc = ev_row_key(row, n, str_of(s, ks->name));
		row->val[0] = ks->d.sum;
		row->val[1] = (double)ks->d.n;
		row->val[2] = ks->d.mean;
		row->val[3] = total_us > 0 ? 100 * ks->d.sum / total_us : 0;
	}
	free(ord);
	return rc;
}

/* numpy's edges (linspace): lo + i * step, step = (hi - lo) / nbins, the
 * last one hi itself. */
static double np_edge(double lo, double hi, size_t nbins, size_t i)
{
	return i == nbins ? hi : (double)i * ((hi - lo) / (double)nbins) + lo;
}

/* numpy.histogram's bin of x among nbins equal bins on [lo, hi] (numpy
 * 1.24): (x - lo) * (nbins / (hi - lo)) truncated, then corrected against
 * the edges as numpy corrects it, so that a value on an edge lands where
 * numpy puts it. */
static size_t np_bin(double x, double lo, double hi, size_t nbins)
{
	double f = (x - lo) * ((double)nbins / (hi - lo));
	size_t i = f <= 0 ? 0 : (size_t)f;
	if (i >= nbins)
		i = nbins - 1;
	if (x < np_edge(lo, hi, nbins, i) && i > 0)
		i--;
	if (i + 1 < nbins && x >= np_edge(lo, hi, nbins, i + 1))
		i++;
	return i;
}

static int histogram_rows(struct ev_stats *s, struct ev_rowset *rs)
{
	static const struct ev_colspec vals[] = {
		{ "bin_start_us", 0, EV_DIR_NONE }, { "bin_end_us", 0, EV_DIR_NONE }, { "count", 0, EV_DIR_NONE },
	};
	const uint64_t *hist = ((const struct shorts *)s->state)->hist;
	int rc = ev_rowset_init(rs, NULL, 0, vals, 3);
	if (rc || !hist)
		return rc;
	uint64_t lim = threshold_ns(s), lo_ns = lim, hi_ns = 0;
	for (uint64_t v = 0; v < lim; v++)
		if (hist[v]) {
			if (v < lo_ns)
				lo_ns = v;
			hi_ns = v;
		}
	size_t nbins = s->o.short_bins ? (size_t)s->o.short_bins : EV_SHORT_DEFAULT_BINS;
	double lo = (double)lo_ns / 1e3, hi = (double)hi_ns / 1e3;
	if (lo == hi) { /* numpy widens an empty range by 0.5 each side */
		lo -= 0.5;
		hi += 0.5;
	}
	uint64_t *count = calloc(nbins, sizeof *count);
	if (!count)
		return EV_ERR_NOMEM;
	for (uint64_t v = lo_ns; v <= hi_ns; v++)
		if (hist[v])
			count[np_bin((double)v / 1e3, lo, hi, nbins)] += hist[v];
	for (size_t i = 0; !rc && i < nbins; i++) {
		struct ev_row *row = ev_rowset_add(rs, 0);
		if (!row) {
			rc = EV_ERR_NOMEM;
			break;
		}
		row->val[0] = np_edge(lo, hi, nbins, i);
		row->val[1] = np_edge(lo, hi, nbins, i + 1);
		row->val[2] = (double)count[i];
	}
	free(count);
	return rc;
}

static int short_rows(struct ev_stats *s, struct ev_rowset *rs)
{
	return s->o.table == EV_SHORT_HISTOGRAM ? histogram_rows(s, rs) : summary_rows(s, rs);
}

static void short_free(struct ev_stats *s)
{
	kstat_free_groups(s);
	free(((struct shorts *)s->state)->hist);
}

static int short_explain(const struct ev_stats_opts *o, const struct ev_stats_counts *c, char *buf, size_t n)
{
	if (!c->kernels)
		return 0;
	snprintf(buf, n, "no kernel shorter than %llu us among %llu kernels: empty table (see --short-us)",
	         (unsigned long long)(o->short_ns ? o->short_ns : EV_SHORT_DEFAULT_NS) / 1000,
	         (unsigned long long)c->kernels);
	return 1;
}

static const char *const short_options[] = { "include-unlinked", "table", "short-us", "bins", "exact-limit", NULL };

/* In the order of enum ev_short_table. */
static const struct ev_stats_subtable short_tables[] = {
	{ "summary", "short_kernels_summary", NULL },
	{ "histogram", "short_kernel_histogram", NULL },
	{ NULL, NULL, NULL },
};

const struct ev_stats_analysis ev_stats_analysis_short = {
	.name = "short",
	.sheet = "short_kernels_summary",
	.help = "TraceLens's short-kernel study: kernels under --short-us per\n"
	        "launching op and kernel name (sum, count, mean, share of the\n"
	        "GPU span), or with --table=histogram their durations in\n"
	        "--bins equal bins between the shortest and the longest",
	.options = short_options,
	.tables = short_tables,
	.state_size = sizeof(struct shorts),
	.group_size = sizeof(struct kstat),
	.rec = short_rec,
	.rows = short_rows,
	.free = short_free,
	.explain = short_explain,
};
