/* SPDX-License-Identifier: MIT */
/*
 * stats_kdist.c - HTA's kernel breakdown per rank (get_gpu_kernel_breakdown's
 * kernel table) and its distribution across ranks.
 *
 * HTA, per rank and kernel type (COMPUTATION, COMMUNICATION and, by
 * default, MEMORY; OTHER never), groups the GPU events it keeps by name:
 * sum, max, min, mean and std of their microseconds.  With more than
 * num_kernels (--top, 10) names it sorts them by sum, longest first, and
 * puts into "others" every name past the first num_kernels or whose running
 * sum exceeds the duration_ratio (--duration-ratio, 0.8) quantile of the
 * running sums; it then groups the names once more over their sums, so a
 * kept name's sum, max, min and mean are all its sum (std 0), and "others"
 * holds the sum, max, min, mean and std of its names' sums.  We give these
 * numbers as HTA returns them, with the instances and their true mean
 * beside them.  --table=ranks puts each kept name's true mean on every rank
 * side by side (HTA's per-rank bar charts), with the slowest rank.
 *
 * Which events and microseconds are HTA's: hta_rank.h (its rounding and
 * its last-step filter, kept as three parts).  Memory grows with names and
 * ranks.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/hta_rank.h"
#include "analysis/stats_impl.h"

#define DEFAULT_TOP 10u
#define DEFAULT_RATIO 0.8

/* Moments of durations in whole us: count, sum, min, max, and Welford's
 * mean and m2 for the std. */
struct kacc {
	uint64_t n;
	int64_t sum, min, max;
	double mean, m2;
};

struct kname {
	uint64_t name;
	int kind;
	struct kacc a[3]; /* hta_rank.h's three parts */
};

struct krank {
	struct hta_rank h;
	struct ev_vec names; /* struct kname */
	struct ev_map idx;   /* name id + 1 -> index + 1 */
};

/* A row of HTA's kernel table. */
struct krow {
	uint32_t sg, rank;
	int kind;
	const char *name;  /* NULL: "others" */
	double sum, max, min, std, mean;
	uint64_t n;        /* instances */
	double inst_mean;  /* their mean */
};

struct kdist {
	struct ev_vec ranks; /* struct krank */
	struct ev_map idx;
	char (*colnames)[32]; /* --table=ranks: the per-rank columns' names */
};

static void acc_add(struct kacc *a, int64_t x)
{
	if (!a->n || x < a->min)
		a->min = x;
	if (!a->n || x > a->max)
		a->max = x;
	a->n++;
	a->sum += x;
	double d = (double)x - a->mean;
	a->mean += d / (double)a->n;
	a->m2 += d * ((double)x - a->mean);
}

/* d takes s's samples (Chan's merge); s is emptied. */
static void acc_merge(struct kacc *d, struct kacc *s)
{
	if (s->n) {
		if (!d->n) {
			*d = *s;
		} else {
			double n = (double)(d->n + s->n), delta = s->mean - d->mean;
			d->m2 += s->m2 + delta * delta * (double)d->n * (double)s->n / n;
			d->mean += delta * (double)s->n / n;
			d->n += s->n;
			d->sum += s->sum;
			d->min = s->min < d->min ? s->min : d->min;
			d->max = s->max > d->max ? s->max : d->max;
		}
	}
	memset(s, 0, sizeof *s);
}

/* Every name of a rank: at a step (HTA_STEP_FORK, HTA_STEP_SWITCH) or at the
 * end (-1 - filtered), as hta_dist3_* do for distributions. */
static void parts(struct krank *kr, int act)
{
	int keep = act == HTA_STEP_FORK || act == -1 ? 1 : 2;
	for (size_t i = 0; i < kr->names.len; i++) {
		struct kname *k = (struct kname *)kr->names.data + i;
		memset(&k->a[3 - keep], 0, sizeof k->a[0]);
		acc_merge(&k->a[0], &k->a[keep]);
	}
}

static int kdist_init(struct ev_stats *s)
{
	struct kdist *st = s->state;
	ev_vec_init(&st->ranks, sizeof(struct krank));
	ev_map_init(&st->idx);
	return EV_OK;
}

static int kdist_rec(struct ev_stats *s, const struct ev_rec *r)
{
	struct kdist *st = s->state;
	int fresh;
	struct krank *kr = hta_rank_of(s, &st->ranks, &st->idx, r, &fresh);
	if (!kr)
		return EV_ERR_NOMEM;
	if (fresh) {
		ev_vec_init(&kr->names, sizeof(struct kname));
		ev_map_init(&kr->idx);
	}
	if (!is_gpu(r)) {
		int act = hta_rank_cpu(s, &kr->h, r, NULL);
		if (act > 0) /* a step forks or switches */
			parts(kr, act);
		return act < 0 ? act : EV_OK;
	}
	uint64_t *at = ev_map_get(&kr->idx, r->name + 1);
	struct kname *k;
	if (at) {
		k = (struct kname *)kr->names.data + (*at - 1);
	} else {
		int kind = ev_hta_kind(str_of(s, r->name));
		if (kind == EV_HTA_OTHER || (kind == EV_HTA_MEMORY && s->o.hta_no_memory))
			return EV_OK;
		if (!(k = ev_vec_push(&kr->names)) || ev_map_put(&kr->idx, r->name + 1, kr->names.len) != EV_OK)
			return EV_ERR_NOMEM;
		memset(k, 0, sizeof *k);
		k->name = r->name;
		k->kind = kind;
	}
	unsigned mask = hta_rank_route(&kr->h, hta_rank_call(&kr->h, r->id));
	if (!mask)
		return EV_OK;
	s->n.selected++;
	int64_t ts, end;
	hta_us(kr->h.json_base_ns, r->ts, ev_rec_end(r), &ts, &end);
	for (int j = 0; j < 2; j++)
		if (mask & (1u << j))
			acc_add(&k->a[1 + j], end - ts);
	return EV_OK;
}

static int kdist_finish(struct ev_stats *s)
{
	struct kdist *st = s->state;
	for (size_t i = 0; i < st->ranks.len; i++) {
		struct krank *kr = (struct krank *)st->ranks.data + i;
		parts(kr, -1 - hta_rank_filtered(&kr->h));
	}
	return EV_OK;
}

/* HTA's order: sum, longest first; ties by name (its groupby's order,
 * which its sort keeps).  arg: the ev_stats, for the names. */
static int cmp_sum(const void *a, const void *b, void *arg)
{
	const struct kname *x = *(const struct kname *const *)a, *y = *(const struct kname *const *)b;
	if (x->a[0].sum != y->a[0].sum)
		return x->a[0].sum > y->a[0].sum ? -1 : 1;
	return strcmp(str_of(arg, x->name), str_of(arg, y->name));
}

static int cmp_i64(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
	return x < y ? -1 : x > y;
}

static double sample_std(double m2, uint64_t n)
{
	return n > 1 ? sqrt(fmax(0, m2 / (double)(n - 1))) : 0; /* HTA fills NaN with 0 */
}

/* HTA's rows of one rank and kind into out (grown as needed). */
static int rank_rows(struct ev_stats *s, struct krank *kr, int kind, struct ev_vec *out)
{
	uint64_t top = s->o.top ? s->o.top : DEFAULT_TOP;
	size_t n = 0;
	for (size_t i = 0; i < kr->names.len; i++) {
		struct kname *k = (struct kname *)kr->names.data + i;
		n += k->kind == kind && k->a[0].n;
	}
	if (!n)
		return EV_OK;
	struct kname **v = malloc(n * sizeof *v);
	int64_t *cum = malloc(2 * n * sizeof *cum); /* the running sums, then sorted */
	if (!v || !cum) {
		free(v);
		free(cum);
		return EV_ERR_NOMEM;
	}
	n = 0;
	for (size_t i = 0; i < kr->names.len; i++) {
		struct kname *k = (struct kname *)kr->names.data + i;
		if (k->kind == kind && k->a[0].n)
			v[n++] = k;
	}
	qsort_r(v, n, sizeof *v, cmp_sum, s);
	/* The running sums' duration_ratio quantile (numpy's linear one). */
	double q = INFINITY;
	int64_t c = 0;
	for (size_t i = 0; i < n; i++)
		cum[n + i] = cum[i] = c += v[i]->a[0].sum;
	if (n > top) {
		int64_t *sorted = cum + n;
		qsort(sorted, n, sizeof *sorted, cmp_i64);
		double ratio = s->o.hta_set & EV_HTA_SET_RATIO ? s->o.hta_ratio : DEFAULT_RATIO;
		double pos = ratio * (double)(n - 1);
		size_t lo = (size_t)pos, hi = lo + 1 < n ? lo + 1 : lo;
		q = (double)sorted[lo] + ((double)sorted[hi] - (double)sorted[lo]) * (pos - (double)lo);
	}
	struct krow others = { .sg = kr->h.sg, .rank = kr->h.rank, .kind = kind };
	struct kacc osum = { 0 }; /* the moments of the others' sums */
	int rc = EV_OK;
	for (size_t i = 0; !rc && i < n; i++) {
		struct kacc *a = &v[i]->a[0];
		if (n > top && (i >= top || (double)cum[i] > q)) {
			acc_add(&osum, a->sum);
			others.n += a->n;
			continue;
		}
		struct krow *row = ev_vec_push(out);
		if (!row) {
			rc = EV_ERR_NOMEM;
			break;
		}
		*row = (struct krow){ .sg = kr->h.sg, .rank = kr->h.rank, .kind = kind, .name = str_of(s, v[i]->name),
		                      .n = a->n, .inst_mean = (double)a->sum / (double)a->n };
		row->sum = (double)a->sum;
		if (n > top) { /* HTA's second grouping, over the sums */
			row->max = row->min = row->mean = row->sum;
			row->std = 0;
		} else {
			row->max = (double)a->max;
			row->min = (double)a->min;
			row->mean = (double)a->sum / (double)a->n; /* as pandas: sum / n */
			row->std = sample_std(a->m2, a->n);
		}
	}
	if (!rc && osum.n) {
		struct krow *row = ev_vec_push(out);
		if (!row) {
			rc = EV_ERR_NOMEM;
		} else {
			others.sum = (double)osum.sum;
			others.max = (double)osum.max;
			others.min = (double)osum.min;
			others.mean = (double)osum.sum / (double)osum.n;
			others.std = sample_std(osum.m2, osum.n);
			others.inst_mean = others.sum / (double)others.n;
			*row = others;
		}
	}
	free(v);
	free(cum);
	return rc;
}

static const char *row_name(const struct krow *r)
{
	return r->name ? r->name : "others";
}

/* HTA's order: kernel type, name, rank. */
static int cmp_row(const void *a, const void *b)
{
	const struct krow *x = a, *y = b;
	int c;
	if (x->sg != y->sg)
		return x->sg < y->sg ? -1 : 1;
	if ((c = strcmp(ev_hta_kind_name(x->kind), ev_hta_kind_name(y->kind))) != 0)
		return c;
	if ((c = strcmp(row_name(x), row_name(y))) != 0)
		return c;
	return x->rank < y->rank ? -1 : x->rank > y->rank;
}

/* Every row of HTA's table, sorted. */
static int all_rows(struct ev_stats *s, struct ev_vec *out)
{
	struct kdist *st = s->state;
	int rc = EV_OK;
	for (size_t i = 0; !rc && i < st->ranks.len; i++)
		for (int kind = 0; !rc && kind < EV_HTA_OTHER; kind++)
			rc = rank_rows(s, (struct krank *)st->ranks.data + i, kind, out);
	if (out->len)
		qsort(out->data, out->len, sizeof(struct krow), cmp_row);
	return rc;
}

static int kernel_rows(struct ev_stats *s, struct ev_rowset *rs, const struct ev_vec *v)
{
	struct ev_colspec keys[EV_STATS_MAX_BY + 3];
	size_t nk = 0;
	by_colspecs(&s->o, keys, &nk);
	int own_rank = !has_by(&s->o, EV_BY_RANK);
	keys[nk++] = (struct ev_colspec){ "kernel_type", 0, 0 };
	keys[nk++] = (struct ev_colspec){ "name", 0, 0 };
	if (own_rank)
		keys[nk++] = (struct ev_colspec){ "rank", 1, 0 };
	static const struct ev_colspec vals[] = {
		{ "sum_us", 0, EV_DIR_LOWER }, { "max_us", 0, 0 }, { "min_us", 0, 0 },     { "stddev_us", 0, 0 },
		{ "mean_us", 0, EV_DIR_LOWER }, { "count", 0, 0 }, { "instance_mean_us", 0, EV_DIR_LOWER },
	};
	int rc = ev_rowset_init(rs, keys, nk, vals, 7);
	for (size_t i = 0; !rc && i < v->len; i++) {
		const struct krow *k = (const struct krow *)v->data + i;
		struct gkey g = { .sg = k->sg, .rank = k->rank };
		struct ev_row *row;
		size_t n;
		rc = group_row(s, rs, &g, &row, &n);
		rc = rc ? rc : ev_row_key(row, n++, ev_hta_kind_name(k->kind));
		rc = rc ? rc : ev_row_key(row, n++, row_name(k));
		if (own_rank && !rc)
			rc = ev_row_keyu(row, n, k->rank);
		if (rc)
			break;
		double x[] = { k->sum, k->max, k->min, k->std, k->mean, (double)k->n, k->inst_mean };
		memcpy(row->val, x, sizeof x);
	}
	return rc;
}

static int cmp_u32(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
	return x < y ? -1 : x > y;
}

#define RANKS_FIXED 5

/* --table=ranks: a row per (source group, kind, kept name), the mean of its
 * instances on every rank side by side (empty where the rank has not kept
 * it).  Not HTA's mean column: for a rank with more than --top names that
 * is the kernel's sum, which would set a sum beside other ranks' means. */
static int ranks_rows(struct ev_stats *s, struct ev_rowset *rs, const struct ev_vec *v)
{
	struct kdist *st = s->state;
	uint32_t *rk = malloc((v->len + 1) * sizeof *rk);
	if (!rk)
		return EV_ERR_NOMEM;
	size_t nr = 0;
	for (size_t i = 0; i < v->len; i++)
		rk[nr++] = ((const struct krow *)v->data)[i].rank;
	if (nr)
		qsort(rk, nr, sizeof *rk, cmp_u32);
	size_t u = 0;
	for (size_t i = 0; i < nr; i++)
		if (!u || rk[u - 1] != rk[i])
			rk[u++] = rk[i];
	struct ev_colspec keys[EV_STATS_MAX_BY + 2], *vals = malloc((u + RANKS_FIXED) * sizeof *vals);
	free(st->colnames);
	st->colnames = malloc((u + 1) * sizeof *st->colnames);
	if (!vals || !st->colnames) {
		free(rk);
		free(vals);
		return EV_ERR_NOMEM;
	}
	size_t nk = 0;
	by_colspecs(&s->o, keys, &nk);
	keys[nk++] = (struct ev_colspec){ "kernel_type", 0, 0 };
	keys[nk++] = (struct ev_colspec){ "name", 0, 0 };
	vals[0] = (struct ev_colspec){ "ranks", 0, 0 };
	vals[1] = (struct ev_colspec){ "slowest_rank", 1, 0 };
	vals[2] = (struct ev_colspec){ "max_mean_us", 0, EV_DIR_LOWER };
	vals[3] = (struct ev_colspec){ "min_mean_us", 0, 0 };
	vals[4] = (struct ev_colspec){ "max_over_min", 0, EV_DIR_LOWER };
	for (size_t j = 0; j < u; j++) {
		snprintf(st->colnames[j], sizeof st->colnames[0], "rank%u_mean_us", (unsigned)rk[j]);
		vals[RANKS_FIXED + j] = (struct ev_colspec){ st->colnames[j], 0, EV_DIR_LOWER };
	}
	int rc = ev_rowset_init(rs, keys, nk, vals, RANKS_FIXED + u);
	free(vals);
	const struct krow *k = v->data;
	for (size_t i = 0; !rc && i < v->len;) {
		size_t e = i;
		while (e < v->len && k[e].sg == k[i].sg && k[e].kind == k[i].kind && !strcmp(row_name(&k[e]), row_name(&k[i])))
			e++;
		if (!k[i].name) { /* HTA draws no bars for "others" */
			i = e;
			continue;
		}
		struct gkey g = { .sg = k[i].sg };
		struct ev_row *row;
		size_t n;
		rc = group_row(s, rs, &g, &row, &n);
		rc = rc ? rc : ev_row_key(row, n++, ev_hta_kind_name(k[i].kind));
		rc = rc ? rc : ev_row_key(row, n, k[i].name);
		if (rc)
			break;
		for (size_t j = 0; j < u; j++)
			row->val[RANKS_FIXED + j] = NAN;
		size_t hi = i, lo = i;
		for (size_t j = i; j < e; j++) {
			size_t c = 0;
			while (rk[c] != k[j].rank)
				c++;
			row->val[RANKS_FIXED + c] = k[j].inst_mean;
			hi = k[j].inst_mean > k[hi].inst_mean ? j : hi;
			lo = k[j].inst_mean < k[lo].inst_mean ? j : lo;
		}
		row->val[0] = (double)(e - i);
		row->val[1] = (double)k[hi].rank;
		row->val[2] = k[hi].inst_mean;
		row->val[3] = k[lo].inst_mean;
		row->val[4] = k[lo].inst_mean > 0 ? k[hi].inst_mean / k[lo].inst_mean : NAN;
		i = e;
	}
	free(rk);
	return rc;
}

static int kdist_rows(struct ev_stats *s, struct ev_rowset *rs)
{
	struct ev_vec v;
	ev_vec_init(&v, sizeof(struct krow));
	int rc = all_rows(s, &v);
	if (!rc)
		rc = s->o.table == 1 ? ranks_rows(s, rs, &v) : kernel_rows(s, rs, &v);
	ev_vec_free(&v);
	return rc;
}

static void kdist_free(struct ev_stats *s)
{
	struct kdist *st = s->state;
	for (size_t i = 0; i < st->ranks.len; i++) {
		struct krank *kr = (struct krank *)st->ranks.data + i;
		ev_vec_free(&kr->names);
		ev_map_free(&kr->idx);
		hta_rank_free(&kr->h);
	}
	ev_vec_free(&st->ranks);
	ev_map_free(&st->idx);
	free(st->colnames);
}

static int kdist_explain(const struct ev_stats_opts *o, const struct ev_stats_counts *c, char *buf, size_t n)
{
	if (!c->gpu)
		return 0;
	snprintf(buf, n, "none of %llu GPU events is a kernel HTA breaks down (COMPUTATION, COMMUNICATION%s) among "
	         "those it keeps: empty table", (unsigned long long)c->gpu, o->hta_no_memory ? "" : ", MEMORY");
	return 1;
}

static const char *const kdist_options[] = { "table", "top", "duration-ratio", "no-memory-events", NULL };

static const struct ev_stats_subtable kdist_tables[] = {
	{ "kernels", "get_gpu_kernel_breakdown", NULL },
	{ "ranks", "kernel_distribution_by_rank", NULL },
	{ NULL, NULL, NULL },
};

const struct ev_stats_analysis ev_stats_analysis_kdist = {
	.name = "kdist",
	.sheet = "get_gpu_kernel_breakdown",
	.help = "HTA's kernel breakdown: per kernel type, rank and name the\n"
	        "sum, max, min, std and mean us of the --top (10) longest\n"
	        "kernels and 'others' (HTA's numbers, see docs), with their\n"
	        "count; --table=ranks puts each kernel's mean on every rank\n"
	        "side by side, with the slowest rank",
	.options = kdist_options,
	.tables = kdist_tables,
	.default_by = "config",
	.state_size = sizeof(struct kdist),
	.init = kdist_init,
	.rec = kdist_rec,
	.finish = kdist_finish,
	.rows = kdist_rows,
	.free = kdist_free,
	.explain = kdist_explain,
};
