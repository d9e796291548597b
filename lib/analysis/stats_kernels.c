/* SPDX-License-Identifier: MIT */
/*
 * stats_kernels.c - per kernel name and per kernel class statistics: the
 * kernels and categories analyses.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/stats_impl.h"

/* The group key of the names past max_names (a name id is a string's
 * hash: this one is not expected to be a name's). */
#define OTHER_KEY UINT64_MAX
/* Folded names are counted in a fixed bitmap (linear counting: n is
 * about -m ln(share of bits clear)), not remembered one by one. */
#define FOLD_BITS (1u << 22)

struct kernels {
	struct ev_map names; /* name -> 1: the names with a row of their own */
	uint64_t nnames;
	uint64_t *fold_map;  /* FOLD_BITS bits, on the first folded kernel */
};

/* The key of r's name: its own, or OTHER_KEY when it is past max_names. */
static int name_key(struct ev_stats *s, const struct ev_rec *r, uint64_t *key)
{
	struct kernels *st = s->state;
	uint64_t m = r->name ? r->name : 1; /* (a map key is never 0) */
	*key = r->name;
	if (!s->o.max_names || ev_map_get(&st->names, m))
		return EV_OK;
	if (st->nnames < s->o.max_names) {
		st->nnames++;
		return ev_map_put(&st->names, m, 1);
	}
	if (!st->fold_map && !(st->fold_map = calloc(FOLD_BITS / 64, sizeof *st->fold_map)))
		return EV_ERR_NOMEM;
	uint32_t b = (uint32_t)((r->name * 0x9E3779B97F4A7C15ull) >> 42);
	st->fold_map[b / 64] |= 1ull << (b % 64);
	s->n.folded_kernels++;
	*key = OTHER_KEY;
	return EV_OK;
}

static int kernels_rec(struct ev_stats *s, const struct ev_rec *r, int by_class)
{
	if (!is_gpu(r))
		return EV_OK;
	struct gkey k;
	int rc = base_key(s, r, &k);
	unsigned kc = class_of(s, r);
	if (by_class)
		k.k1 = kc + 1;
	else if (!rc)
		rc = name_key(s, r, &k.k1);
	struct kstat *ks = rc ? NULL : kstat_get(&s->g, &k, r->name, kc);
	if (!ks)
		return rc ? rc : EV_ERR_NOMEM;
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

static int kernels_rows(struct ev_stats *s, struct ev_rowset *rs, int by_class)
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
	size_t *ord = sorted_slots(s, cmp_sum_desc, &rc);
	double *tot = rc ? NULL : group_totals(s);
	if (!rc && !tot)
		rc = EV_ERR_NOMEM;
	struct ev_row *r;
	size_t n;
	struct kstat *ks;
	for (size_t j = 0; (ks = kstat_row(s, rs, ord, j, &r, &n, &rc)) != NULL; j++) {
		int other = !by_class && GROUP_KEY(&s->g, ord[j])->k1 == OTHER_KEY;
		if (!by_class)
			rc = ev_row_key(r, n++, other ? EV_STATS_OTHER_NAMES : str_of(s, ks->name));
		if (!rc)
			rc = ev_row_key(r, n, other ? "(mixed)" : class_name(ks->kclass));
		double gt = tot[ord[j]];
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
		v[6] = ks->d.n > 1 ? ev_dist_std(&ks->d) : NAN; /* one kernel: no sample std (pandas: NaN) */
		v[7] = ev_dist_quantile(&ks->d, 0.9);
		v[8] = ev_dist_quantile(&ks->d, 0.99);
		v[9] = gt > 0 ? 100 * ks->d.sum / gt : 0;
	}
	free(ord);
	free(tot);
	return rc;
}

static int by_name_rec(struct ev_stats *s, const struct ev_rec *r)
{
	return kernels_rec(s, r, 0);
}

static int by_name_rows(struct ev_stats *s, struct ev_rowset *rs)
{
	return kernels_rows(s, rs, 0);
}

/* End of input: count the names seen once, whose std is left empty, and
 * estimate the names folded past max_names. */
static int by_name_finish(struct ev_stats *s)
{
	struct kernels *st = s->state;
	for (size_t i = 0; i < s->g.keys.len; i++)
		s->n.one_instance += ((struct kstat *)GROUP_VAL(&s->g, i))->d.n < 2;
	if (st->fold_map) {
		uint64_t set = 0;
		for (size_t i = 0; i < FOLD_BITS / 64; i++)
			set += (uint64_t)__builtin_popcountll(st->fold_map[i]);
		/* every bit set: at least that many (the estimate is unbounded) */
		double m = FOLD_BITS;
		s->n.folded_names = set == FOLD_BITS ? FOLD_BITS : (uint64_t)llround(-m * log1p(-(double)set / m));
	}
	return EV_OK;
}

static void by_name_free(struct ev_stats *s)
{
	struct kernels *st = s->state;
	kstat_free_groups(s);
	ev_map_free(&st->names);
	free(st->fold_map);
}

static int by_class_rec(struct ev_stats *s, const struct ev_rec *r)
{
	return kernels_rec(s, r, 1);
}

static int by_class_rows(struct ev_stats *s, struct ev_rowset *rs)
{
	return kernels_rows(s, rs, 1);
}

static const char *const kernels_options[] = { "exact-limit", "max-names", NULL };
static const char *const categories_options[] = { "exact-limit", NULL };

const struct ev_stats_analysis ev_stats_analysis_kernels = {
	.name = "kernels",
	.sheet = "kernel_summary",
	.help = "per kernel name: count, sum, mean, median, min, max, std, p90,\n"
	        "p99 (microseconds) and share of kernel time",
	.options = kernels_options,
	.comparable = 1,
	.state_size = sizeof(struct kernels),
	.group_size = sizeof(struct kstat),
	.rec = by_name_rec,
	.finish = by_name_finish,
	.rows = by_name_rows,
	.free = by_name_free,
};

const struct ev_stats_analysis ev_stats_analysis_categories = {
	.name = "categories",
	.sheet = "kernel_summary_by_category",
	.help = "time per kernel class (gemm, comm, attention, ...)",
	.options = categories_options,
	.group_size = sizeof(struct kstat),
	.rec = by_class_rec,
	.rows = by_class_rows,
	.free = kstat_free_groups,
};
