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
 * is exact: every duration is a whole number of nanoseconds.  The summary
 * shows sums, counts and means, no quantile, so no duration is kept
 * either: memory grows with (op, kernel name) pairs only.
 *
 * In TraceLens's layout (report --tracelens) the summary is TraceLens's
 * own: per launching op name, Input Dims, Input Strides and Concrete
 * Inputs (not types: TraceLens does not group by them) and kernel name,
 * printed as Python prints the tuples; kernels without an op, or whose
 * op lacks one of those arguments, are left out as pandas' groupby leaves
 * out a missing key (and said); shares of the timeline's total time in
 * TraceLens's microsecond doubles.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/opsum.h"
#include "analysis/pyrepr.h"

struct shorts {
	uint64_t *hist;                 /* kernels per duration in ns */
	int64_t first, last;            /* the GPU span */
	double ffirst, flast;           /* the same in TraceLens's microsecond doubles */
	int any;
	struct tl_clock clock;
	uint64_t no_op, no_args;        /* TraceLens's layout: kernels left out */
};

/* A group: kernel stats (struct kstat first, as the shared helpers read
 * it) and the first kernel's start, TraceLens's order among ties (its
 * groupby keeps the order of first appearance). */
struct sstat { struct kstat k; int64_t first; };

/* The arguments TraceLens groups a short kernel by, in the order of its
 * columns after the op name. */
static const char *const tl_fields[] = { " dims=", " strides=", " concrete=" };

/* The argument field of a signature, NULL when the op had none (or null). */
static const char *sig_field(const char *sig, const char *key)
{
	const char *at = strstr(sig + opsum_name_len(sig), key);
	if (!at)
		return NULL;
	at += strlen(key);
	return strncmp(at, "null", 4) ? at : NULL;
}

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
		double fa, fz;
		tl_float_times(&sh->clock, s->meta, r, &fa, &fz);
		if (!sh->any || r->ts < sh->first)
			sh->first = r->ts;
		if (!sh->any || end > sh->last)
			sh->last = end;
		if (!sh->any || fa < sh->ffirst)
			sh->ffirst = fa;
		if (!sh->any || fz > sh->flast)
			sh->flast = fz;
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
	/* TraceLens's parent cpu_op: none for a kernel without a call or
	 * launched outside any op (step 0). */
	if (s->o.tracelens && ((r->flags & EV_F_UNLINKED) || r->step == 0))
		k.k1 = 0;
	k.k2 = r->name;
	struct kstat *ks = rc ? NULL : kstat_get(&s->g, &k, r->name, EV_KC_OTHER);
	if (!ks)
		return EV_ERR_NOMEM;
	struct sstat *ss = (struct sstat *)ks;
	if (ks->d.n == 0 || r->ts < ss->first)
		ss->first = r->ts;
	ev_dist_add_moments(&ks->d, (double)r->dur / 1e3, r->ts);
	return EV_OK;
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

/* A row of TraceLens's summary: groups whose signatures differ only in
 * what TraceLens does not group by (types) are one row. */
struct tlrow {
	uint32_t sg, rank;
	char *key;         /* op name, then the Python texts of its arguments, '\x1f' between */
	const char *kname;
	uint64_t n;
	double sum;
	int64_t first;
};

static int cmp_tl_key(const void *pa, const void *pb)
{
	const struct tlrow *a = pa, *b = pb;
	if (a->sg != b->sg)
		return a->sg < b->sg ? -1 : 1;
	if (a->rank != b->rank)
		return a->rank < b->rank ? -1 : 1;
	int c = strcmp(a->key, b->key);
	return c ? c : strcmp(a->kname, b->kname);
}

/* TraceLens's order: largest sum first, then count, mean (and share)
 * ascending, then first appearance; the keys last. */
static int cmp_tl_rows(const void *pa, const void *pb)
{
	const struct tlrow *a = pa, *b = pb;
	if (a->sg != b->sg || a->rank != b->rank)
		return cmp_tl_key(pa, pb);
	if (a->sum != b->sum)
		return a->sum > b->sum ? -1 : 1;
	if (a->n != b->n)
		return a->n < b->n ? -1 : 1;
	double ma = a->sum / (double)a->n, mb = b->sum / (double)b->n;
	if (ma != mb)
		return ma < mb ? -1 : 1;
	if (a->first != b->first)
		return a->first < b->first ? -1 : 1;
	return cmp_tl_key(pa, pb);
}

/* The key of a signature (op name, Python texts of the arguments TraceLens
 * groups by), or NULL in *key when the op lacks one. */
static int tl_key(const char *sig, char **key)
{
	struct pytext t = { 0 };
	*key = NULL;
	for (size_t f = 0; f < sizeof tl_fields / sizeof tl_fields[0]; f++)
		if (!sig_field(sig, tl_fields[f]))
			return EV_OK;
	pyt_put(&t, sig, opsum_name_len(sig));
	for (size_t f = 0; f < sizeof tl_fields / sizeof tl_fields[0]; f++) {
		pyt_puts(&t, "\x1f");
		py_value(&t, sig_field(sig, tl_fields[f]), 1);
	}
	if (t.oom) {
		free(t.p);
		return EV_ERR_NOMEM;
	}
	*key = t.p ? t.p : strdup("");
	return *key ? EV_OK : EV_ERR_NOMEM;
}

/* The kernels TraceLens leaves out of its summary, counted (finish) by
 * either table: the report says an analysis's notes with its first. */
static int short_finish(struct ev_stats *s)
{
	struct shorts *sh = s->state;
	if (!s->o.tracelens)
		return EV_OK;
	for (size_t i = 0; i < s->g.keys.len; i++) {
		const struct gkey *gk = GROUP_KEY(&s->g, i);
		uint64_t n = ((struct kstat *)GROUP_VAL(&s->g, i))->d.n;
		if (!gk->k1) {
			sh->no_op += n;
			continue;
		}
		const char *sig = str_of(s, gk->k1);
		for (size_t f = 0; f < sizeof tl_fields / sizeof tl_fields[0]; f++)
			if (!sig_field(sig, tl_fields[f])) {
				sh->no_args += n;
				break;
			}
	}
	return EV_OK;
}

static int short_warning(struct ev_stats *s, unsigned i, char *buf, size_t n)
{
	const struct shorts *sh = s->state;
	if (sh->no_op && i-- == 0) {
		snprintf(buf, n, "%llu short kernels without a launching op left out of short_kernels_summary "
		         "(TraceLens has no parent cpu_op for them: pandas' groupby drops them)", (unsigned long long)sh->no_op);
		return 1;
	}
	if (sh->no_args && i == 0) {
		snprintf(buf, n, "%llu short kernels of ops without Input Dims, Input Strides or Concrete Inputs left "
		         "out of short_kernels_summary (as TraceLens's groupby drops them)", (unsigned long long)sh->no_args);
		return 1;
	}
	return 0;
}

static int tl_summary_rows(struct ev_stats *s, struct ev_rowset *rs)
{
	struct ev_colspec keys[EV_STATS_MAX_BY + 5];
	size_t nk = 0;
	by_colspecs(&s->o, keys, &nk);
	static const char *const names[] = { "Parent cpu_op", "Input dims", "Input strides", "Concrete Inputs",
		                             "Kernel name" };
	for (size_t i = 0; i < 5; i++)
		keys[nk++] = (struct ev_colspec){ names[i], 0, 0 };
	static const struct ev_colspec vals[] = {
		{ "Short Kernel duration (µs) sum", 0, EV_DIR_LOWER },
		{ "Short Kernel count", 0, EV_DIR_NONE },
		{ "Short Kernel duration (µs) mean", 0, EV_DIR_LOWER },
		{ "Short Kernel duration (µs) percent of total time", 0, EV_DIR_NONE },
	};
	int rc = ev_rowset_init(rs, keys, nk, vals, 4);
	size_t m = s->g.keys.len, nr = 0;
	struct tlrow *tr = rc ? NULL : calloc(m + 1, sizeof *tr);
	if (!rc && !tr)
		rc = EV_ERR_NOMEM;
	for (size_t i = 0; !rc && i < m; i++) {
		const struct gkey *gk = GROUP_KEY(&s->g, i);
		const struct kstat *ks = GROUP_VAL(&s->g, i);
		if (!gk->k1 || (rc = tl_key(str_of(s, gk->k1), &tr[nr].key)) != EV_OK || !tr[nr].key)
			continue;
		tr[nr].sg = gk->sg;
		tr[nr].rank = gk->rank;
		tr[nr].kname = str_of(s, gk->k2);
		tr[nr].n = ks->d.n;
		tr[nr].first = ((const struct sstat *)ks)->first;
		tr[nr++].sum = ks->d.sum;
	}
	/* One row per TraceLens key. */
	size_t nm = 0;
	if (!rc && nr)
		qsort(tr, nr, sizeof *tr, cmp_tl_key);
	for (size_t i = 0; !rc && i < nr; i++) {
		if (nm && !cmp_tl_key(&tr[nm - 1], &tr[i])) {
			tr[nm - 1].n += tr[i].n;
			tr[nm - 1].sum += tr[i].sum;
			if (tr[i].first < tr[nm - 1].first)
				tr[nm - 1].first = tr[i].first;
			free(tr[i].key);
			tr[i].key = NULL;
			continue;
		}
		tr[nm++] = tr[i];
		if (nm - 1 != i)
			tr[i].key = NULL;
	}
	if (!rc && nm)
		qsort(tr, nm, sizeof *tr, cmp_tl_rows);
	const struct shorts *sh = s->state;
	double total_us = !sh->any ? 0 : s->o.float_us ? sh->flast - sh->ffirst : ((double)sh->last - (double)sh->first) / 1e3;
	for (size_t j = 0; !rc && j < nm; j++) {
		struct gkey gk = { .sg = tr[j].sg, .rank = tr[j].rank };
		struct ev_row *row;
		size_t n;
		if ((rc = group_row(s, rs, &gk, &row, &n)) != EV_OK)
			break;
		char *p = tr[j].key;
		for (size_t c = 0; !rc && c < 4; c++) {
			char *e = strchr(p, '\x1f');
			if (e)
				*e = '\0';
			rc = ev_row_key(row, n++, p);
			p = e ? e + 1 : p + strlen(p);
		}
		rc = rc ? rc : ev_row_key(row, n, tr[j].kname);
		row->val[0] = tr[j].sum;
		row->val[1] = (double)tr[j].n;
		row->val[2] = tr[j].sum / (double)tr[j].n;
		row->val[3] = total_us > 0 ? tr[j].sum / total_us * 100 : NAN;
	}
	for (size_t i = 0; tr && i < nr; i++)
		free(tr[i].key);
	free(tr);
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
	static const struct ev_colspec tl_vals[] = { /* TraceLens's names */
		{ "bin_start", 0, EV_DIR_NONE }, { "bin_end", 0, EV_DIR_NONE }, { "count", 0, EV_DIR_NONE },
	};
	const uint64_t *hist = ((const struct shorts *)s->state)->hist;
	int rc = ev_rowset_init(rs, NULL, 0, s->o.tracelens ? tl_vals : vals, 3);
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
	if (s->o.table == EV_SHORT_HISTOGRAM)
		return histogram_rows(s, rs);
	return s->o.tracelens ? tl_summary_rows(s, rs) : summary_rows(s, rs);
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

static const char *const short_options[] = { "include-unlinked", "table", "short-us", "bins", NULL };

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
	.group_size = sizeof(struct sstat),
	.rec = short_rec,
	.finish = short_finish,
	.rows = short_rows,
	.free = short_free,
	.warning = short_warning,
	.explain = short_explain,
};
