/* SPDX-License-Identifier: MIT */
/*
 * stats_variance.c - aorta's GEMM variance: per GEMM (op signature and
 * operand layout, or kernel name) across sources and ranks, the spread of
 * its kernel times and where the fastest and slowest ran.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/stats_impl.h"

struct variance {
	struct ev_map layout_cache;     /* name id -> ev_gemm_layout + 1 */
};

/* ev_gemm_layout of a kernel name, cached per name. */
static unsigned layout_of(struct ev_stats *s, uint64_t name)
{
	struct variance *v = s->state;
	uint64_t *have = ev_map_get(&v->layout_cache, name);
	if (have)
		return (unsigned)(*have - 1);
	unsigned l = ev_gemm_layout(str_of(s, name));
	if (ev_map_put(&v->layout_cache, name, (uint64_t)l + 1) != EV_OK)
		return l; /* a cache: no room only costs the parse again */
	return l;
}

static int variance_init(struct ev_stats *s)
{
	struct variance *v = s->state;
	ev_map_init(&v->layout_cache);
	return EV_OK;
}

static int variance_rec(struct ev_stats *s, const struct ev_rec *r)
{
	if (r->type != EV_KERNEL)
		return EV_OK;
	unsigned kc = class_of(s, r);
	if (!(s->o.class_mask & (1u << kc)))
		return EV_OK;
	s->n.selected++;
	struct gkey k;
	int rc = base_key(s, r, &k);
	/* By signature, one GEMM is (op signature, operand layout), TraceLens's
	 * GEMM sheet rows and so aorta's table: the layout ("transpose") comes
	 * from the kernel's name, so one signature run by kernels of two
	 * layouts is two GEMMs.  The row's kernel name is its first
	 * instance's, as TraceLens shows it. */
	k.k1 = (!s->o.key_name && r->sig) ? r->sig : r->name;
	k.k2 = (!s->o.key_name && r->sig) ? 1 + (uint64_t)layout_of(s, r->name) : 0;
	struct kstat *ks = rc ? NULL : kstat_get(&s->g, &k, r->name, kc);
	if (!ks)
		return EV_ERR_NOMEM;
	double us = (double)r->dur / 1e3;
	if (ks->d.n == 0 || us < ks->d.min) {
		ks->min_rank = r->rank;
		ks->min_src = r->src;
	}
	if (ks->d.n == 0 || us > ks->d.max) {
		ks->max_rank = r->rank;
		ks->max_src = r->src;
	}
	return ev_dist_add(&ks->d, &s->pool, us, r->ts);
}

static int cmp_range_desc(const struct ev_stats *s, size_t ia, size_t ib)
{
	const struct kstat *x = GROUP_VAL(&s->g, ia), *y = GROUP_VAL(&s->g, ib);
	double ra = x->d.max - x->d.min, rb = y->d.max - y->d.min;
	return ra != rb ? (ra > rb ? -1 : 1) : 0;
}

static int variance_rows(struct ev_stats *s, struct ev_rowset *rs)
{
	struct ev_colspec keys[EV_STATS_MAX_BY + 8];
	size_t nk = 0;
	by_colspecs(&s->o, keys, &nk);
	keys[nk++] = (struct ev_colspec){ "key", 0, 0 };
	keys[nk++] = (struct ev_colspec){ "name", 0, 0 };
	keys[nk++] = (struct ev_colspec){ "min_src", 0, 0 };
	keys[nk++] = (struct ev_colspec){ "min_rank", 1, 0 };
	keys[nk++] = (struct ev_colspec){ "max_src", 0, 0 };
	keys[nk++] = (struct ev_colspec){ "max_rank", 1, 0 };
	/* Time stamps are int64 ns: as text they stay exact (a double would not). */
	keys[nk++] = (struct ev_colspec){ "min_ts", 1, 0 };
	keys[nk++] = (struct ev_colspec){ "max_ts", 1, 0 };
	static const struct ev_colspec vals[] = {
		{ "count", 0, 0 }, { "min_us", 0, EV_DIR_LOWER }, { "max_us", 0, EV_DIR_LOWER }, { "range_us", 0, EV_DIR_LOWER },
		{ "mean_us", 0, EV_DIR_LOWER }, { "std_us", 0, EV_DIR_LOWER }, { "cv", 0, EV_DIR_LOWER }, { "p50_us", 0, EV_DIR_LOWER },
		{ "p99_us", 0, EV_DIR_LOWER },
	};
	int rc = ev_rowset_init(rs, keys, nk, vals, sizeof vals / sizeof vals[0]);
	size_t *ord = sorted_slots(s, cmp_range_desc, &rc);
	uint64_t in_group = 0;
	for (size_t j = 0; !rc && j < s->g.keys.len; j++) {
		size_t i = ord[j];
		const struct gkey *k = GROUP_KEY(&s->g, i);
		if (j > 0) {
			const struct gkey *p = GROUP_KEY(&s->g, ord[j - 1]);
			if (p->sg != k->sg || p->rank != k->rank || p->stream != k->stream)
				in_group = 0;
		}
		if (s->o.top && in_group >= s->o.top)
			continue;
		in_group++;
		struct kstat *ks = GROUP_VAL(&s->g, i);
		struct ev_row *r;
		size_t n;
		char b1[16], b2[16];
		if ((rc = group_row(s, rs, k, &r, &n)) != EV_OK)
			break;
		rc = ev_row_key(r, n++, str_of(s, k->k1));
		rc = rc ? rc : ev_row_key(r, n++, str_of(s, ks->name));
		rc = rc ? rc : ev_row_key(r, n++, src_label(s, ks->min_src, b1, sizeof b1));
		rc = rc ? rc : ev_row_keyu(r, n++, ks->min_rank);
		rc = rc ? rc : ev_row_key(r, n++, src_label(s, ks->max_src, b2, sizeof b2));
		rc = rc ? rc : ev_row_keyu(r, n++, ks->max_rank);
		char tsb[24];
		snprintf(tsb, sizeof tsb, "%lld", (long long)ks->d.min_ts);
		rc = rc ? rc : ev_row_key(r, n++, tsb);
		snprintf(tsb, sizeof tsb, "%lld", (long long)ks->d.max_ts);
		rc = rc ? rc : ev_row_key(r, n++, tsb);
		double *v = r->val;
		v[0] = (double)ks->d.n;
		v[1] = ks->d.min;
		v[2] = ks->d.max;
		v[3] = ks->d.max - ks->d.min;
		v[4] = ks->d.mean;
		v[5] = ev_dist_std(&ks->d);
		v[6] = ks->d.mean > 0 ? v[5] / ks->d.mean : 0;
		v[7] = ev_dist_quantile(&ks->d, 0.5);
		v[8] = ev_dist_quantile(&ks->d, 0.99);
	}
	free(ord);
	return rc;
}

static void variance_free(struct ev_stats *s)
{
	struct variance *v = s->state;
	kstat_free_groups(s);
	ev_map_free(&v->layout_cache);
}

static int variance_explain(const struct ev_stats_opts *o, const struct ev_stats_counts *c, char *buf, size_t n)
{
	char cl[256];
	if (!c->kernels)
		return 0;
	snprintf(buf, n, "no kernel of class %s among %llu kernels: empty table (try --class=all)",
	         class_list(o->class_mask, cl, sizeof cl), (unsigned long long)c->kernels);
	return 1;
}

static const char *const variance_options[] = { "class", "key", "top", "exact-limit", NULL };

const struct ev_stats_analysis ev_stats_analysis_variance = {
	.name = "variance",
	.sheet = "gemm_variance",
	.help = "per GEMM signature across sources and ranks: min, max,\n"
	        "range (aorta's \"variance\"), std, CV, p50, p99",
	.options = variance_options,
	.default_by = "src",
	.state_size = sizeof(struct variance),
	.group_size = sizeof(struct kstat),
	.init = variance_init,
	.rec = variance_rec,
	.rows = variance_rows,
	.free = variance_free,
	.explain = variance_explain,
};
