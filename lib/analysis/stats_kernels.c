/* SPDX-License-Identifier: MIT */
/*
 * stats_kernels.c - per kernel name and per kernel class statistics, and
 * aorta's GEMM variance (per signature across sources and ranks).
 */
#include <stdlib.h>
#include <string.h>

#include "analysis/stats_impl.h"

int kernels_rec(struct ev_stats *s, const struct ev_rec *r, int by_class)
{
	if (!is_gpu(r))
		return EV_OK;
	struct gkey k;
	int rc = base_key(s, r, &k);
	unsigned kc = class_of(s, r);
	if (by_class)
		k.k1 = kc + 1;
	else
		k.k1 = r->name;
	struct kstat *ks = rc ? NULL : group_get(&s->g, &k, NULL);
	if (!ks)
		return EV_ERR_NOMEM;
	if (ks->d.n == 0) {
		ks->name = r->name;
		ks->kclass = kc;
	}
	return ev_dist_add(&ks->d, &s->pool, (double)r->dur / 1e3, r->ts);
}

/* Total kernel time of each --by group (for percentages), in one pass:
 * tot[i] is the total of slot i's group.  Sums are taken in slot order, so
 * every group's total is the same double whichever row asks. */
static double *group_totals(struct ev_stats *s)
{
	size_t n = s->g.keys.len;
	double *sum = calloc(n + 1, sizeof *sum), *tot = calloc(n + 1, sizeof *tot);
	size_t *first = malloc((n + 1) * sizeof *first);
	struct groups by;
	groups_init(&by, sizeof(size_t));
	for (size_t i = 0; sum && tot && first && i < n; i++) {
		struct gkey k = *GROUP_KEY(&s->g, i);
		k.k1 = k.k2 = 0;
		size_t *f = group_get(&by, &k, NULL);
		if (!f) {
			free(tot);
			tot = NULL;
			break;
		}
		if (*f == 0)
			*f = i + 1;
		first[i] = *f - 1;
		sum[*f - 1] += ((struct kstat *)GROUP_VAL(&s->g, i))->d.sum;
	}
	for (size_t i = 0; sum && tot && first && i < n; i++)
		tot[i] = sum[first[i]];
	groups_free(&by);
	free(sum);
	free(first);
	return tot;
}

static int cmp_sum_desc(const struct ev_stats *s, size_t ia, size_t ib)
{
	double sa = ((struct kstat *)GROUP_VAL(&s->g, ia))->d.sum, sb = ((struct kstat *)GROUP_VAL(&s->g, ib))->d.sum;
	return sa != sb ? (sa > sb ? -1 : 1) : 0;
}

int kernels_rows(struct ev_stats *s, struct ev_rowset *rs, int by_class)
{
	struct ev_colspec keys[EV_STATS_MAX_BY + 2];
	size_t nk = 0;
	by_colspecs(&s->o, keys, &nk);
	if (!by_class)
		keys[nk++] = (struct ev_colspec){ "name", 0, 0 };
	keys[nk++] = (struct ev_colspec){ "class", 0, 0 };
	static const struct ev_colspec kvals[] = {
		{ "count", 0, EV_DIR_NONE }, { "sum_us", 0, EV_DIR_LOWER }, { "mean_us", 0, EV_DIR_LOWER }, { "median_us", 0, EV_DIR_LOWER },
		{ "min_us", 0, EV_DIR_LOWER }, { "max_us", 0, EV_DIR_LOWER }, { "std_us", 0, EV_DIR_NONE }, { "p90_us", 0, EV_DIR_LOWER },
		{ "p99_us", 0, EV_DIR_LOWER }, { "percent", 0, EV_DIR_NONE },
	};
	static const struct ev_colspec cvals[] = {
		{ "count", 0, EV_DIR_NONE }, { "sum_us", 0, EV_DIR_LOWER }, { "mean_us", 0, EV_DIR_LOWER }, { "percent", 0, EV_DIR_NONE },
	};
	int rc = by_class ? ev_rowset_init(rs, keys, nk, cvals, 4) : ev_rowset_init(rs, keys, nk, kvals, 10);
	size_t *ord = rc ? NULL : sorted_slots(s, cmp_sum_desc);
	double *tot = rc ? NULL : group_totals(s);
	if (!rc && !tot)
		rc = EV_ERR_NOMEM;
	if (!rc && !ord)
		rc = EV_ERR_NOMEM;
	for (size_t j = 0; !rc && j < s->g.keys.len; j++) {
		size_t i = ord[j];
		struct kstat *ks = GROUP_VAL(&s->g, i);
		struct ev_row *r;
		size_t n;
		if ((rc = group_row(s, rs, GROUP_KEY(&s->g, i), &r, &n)) != EV_OK)
			break;
		if (!by_class)
			rc = ev_row_key(r, n++, str_of(s, ks->name));
		if (!rc)
			rc = ev_row_key(r, n, class_name(ks->kclass));
		double gt = tot[i];
		double *v = r->val;
		v[0] = (double)ks->d.n;
		v[1] = ks->d.sum;
		v[2] = ks->d.mean;
		if (by_class) {
			v[3] = gt > 0 ? 100 * ks->d.sum / gt : 0;
			continue;
		}
		v[3] = ev_dist_quantile(&ks->d, 0.5);
		v[4] = ks->d.min;
		v[5] = ks->d.max;
		v[6] = ev_dist_std(&ks->d);
		v[7] = ev_dist_quantile(&ks->d, 0.9);
		v[8] = ev_dist_quantile(&ks->d, 0.99);
		v[9] = gt > 0 ? 100 * ks->d.sum / gt : 0;
	}
	free(ord);
	free(tot);
	return rc;
}

/* ------------------------------------------------------------------ */
/* variance                                                             */

/* ev_gemm_layout of a kernel name, cached per name. */
static unsigned layout_of(struct ev_stats *s, uint64_t name)
{
	uint64_t *have = ev_map_get(&s->layout_cache, name);
	if (have)
		return (unsigned)(*have - 1);
	unsigned l = ev_gemm_layout(str_of(s, name));
	if (ev_map_put(&s->layout_cache, name, (uint64_t)l + 1) != EV_OK)
		return l; /* a cache: no room only costs the parse again */
	return l;
}

int variance_rec(struct ev_stats *s, const struct ev_rec *r)
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
	struct kstat *ks = rc ? NULL : group_get(&s->g, &k, NULL);
	if (!ks)
		return EV_ERR_NOMEM;
	if (ks->d.n == 0) {
		ks->name = r->name;
		ks->kclass = kc;
	}
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

int variance_rows(struct ev_stats *s, struct ev_rowset *rs)
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
	size_t *ord = rc ? NULL : sorted_slots(s, cmp_range_desc);
	if (!rc && !ord)
		rc = EV_ERR_NOMEM;
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

