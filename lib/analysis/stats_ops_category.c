/* SPDX-License-Identifier: MIT */
/*
 * stats_ops_category.c - TraceLens's ops_summary_by_category: per op
 * category (TraceLens's, lib/analysis/op_category.c), its op instances,
 * their direct kernel time in ms, share and running share, largest first.
 * The op instances are ops_summary's (stats_ops_summary.c).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/opsum.h"

struct catrow { size_t first; uint64_t count; double us; };

static int same_part(const struct ev_stats *s, size_t a, size_t b)
{
	const struct gkey *ka = GROUP_KEY(&s->g, a), *kb = GROUP_KEY(&s->g, b);
	return ka->sg == kb->sg && ka->rank == kb->rank;
}

static int cmp_cat(const struct ev_stats *s, size_t a, size_t b)
{
	return strcmp(((const struct opsum_group *)GROUP_VAL(&s->g, a))->cat,
	              ((const struct opsum_group *)GROUP_VAL(&s->g, b))->cat);
}

/* Within a (source group, rank): largest time first, ties by category. */
static int cmp_rows(const void *pa, const void *pb, void *ctx)
{
	const struct ev_stats *s = ctx;
	const struct catrow *a = pa, *b = pb;
	const struct gkey *ka = GROUP_KEY(&s->g, a->first), *kb = GROUP_KEY(&s->g, b->first);
	if (ka->sg != kb->sg)
		return ka->sg < kb->sg ? -1 : 1;
	if (ka->rank != kb->rank)
		return ka->rank < kb->rank ? -1 : 1;
	if (a->us != b->us)
		return a->us > b->us ? -1 : 1;
	return cmp_cat(s, a->first, b->first);
}

static int ops_category_rows(ev_stats *s, struct ev_rowset *rs)
{
	struct ev_colspec keys[EV_STATS_MAX_BY + 1];
	size_t nk = 0;
	by_colspecs(&s->o, keys, &nk);
	keys[nk++] = (struct ev_colspec){ "op category", 0, 0 };
	static const struct ev_colspec vals[] = {
		{ "Count", 0, EV_DIR_NONE },
		{ "total_direct_kernel_time_ms", 0, EV_DIR_LOWER },
		{ "Percentage (%)", 0, EV_DIR_NONE },
		{ "Cumulative Percentage (%)", 0, EV_DIR_NONE },
	};
	int rc = ev_rowset_init(rs, keys, nk, vals, sizeof vals / sizeof vals[0]);
	size_t *ord = sorted_slots(s, cmp_cat, &rc);
	struct catrow *cr = rc ? NULL : calloc(s->g.keys.len + 1, sizeof *cr);
	if (!rc && !cr)
		rc = EV_ERR_NOMEM;
	size_t m = 0;
	for (size_t j = 0; !rc && j < s->g.keys.len; j++) {
		const struct opsum_group *g = GROUP_VAL(&s->g, ord[j]);
		if (!(j && same_part(s, ord[j - 1], ord[j]) && cmp_cat(s, ord[j - 1], ord[j]) == 0))
			cr[m++].first = ord[j];
		cr[m - 1].count += g->count;
		cr[m - 1].us += g->direct_us;
	}
	if (!rc)
		qsort_r(cr, m, sizeof *cr, cmp_rows, s);
	for (size_t i = 0; !rc && i < m;) {
		size_t e = i;
		double total = 0, cum = 0;
		/* TraceLens sums the rows' ms, then shares each. */
		while (e < m && same_part(s, cr[i].first, cr[e].first))
			total += cr[e++].us / 1000.0;
		for (; !rc && i < e; i++) {
			struct ev_row *r;
			size_t n;
			if ((rc = group_row(s, rs, GROUP_KEY(&s->g, cr[i].first), &r, &n)) != EV_OK)
				break;
			rc = ev_row_key(r, n, ((const struct opsum_group *)GROUP_VAL(&s->g, cr[i].first))->cat);
			double ms = cr[i].us / 1000.0, pct = total > 0 ? ms / total * 100.0 : NAN;
			cum += pct;
			r->val[0] = (double)cr[i].count;
			r->val[1] = ms;
			r->val[2] = pct;
			r->val[3] = cum;
		}
	}
	free(cr);
	free(ord);
	return rc;
}

static const char *const ops_category_options[] = { "tracelens-float", NULL };

const struct ev_stats_analysis ev_stats_analysis_ops_category = {
	.name = "ops-category",
	.sheet = "ops_summary_by_category",
	.help = "TraceLens's ops_summary_by_category: per op category, its op\n"
	        "instances, their direct kernel time (ms), share and running\n"
	        "share, largest first",
	.options = ops_category_options,
	.state_size = sizeof(struct opsum),
	.group_size = sizeof(struct opsum_group),
	.init = opsum_init,
	.rec = opsum_rec,
	.finish = opsum_finish,
	.rows = ops_category_rows,
	.free = opsum_free,
	.explain = opsum_explain,
};
