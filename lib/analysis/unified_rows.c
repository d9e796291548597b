/* SPDX-License-Identifier: MIT */
/*
 * unified_rows.c - the table of unified_perf_summary: its groups as rows,
 * by source and rank, largest kernel time first, with TraceLens's key and
 * value columns (the model's only when a row has a model's numbers).
 */
#include <math.h>
#include <stdlib.h>

#include "analysis/pyrepr.h"
#include "analysis/unified.h"

static int cmp_rows(const struct ev_stats *s, size_t a, size_t b)
{
	const struct gkey *ka = GROUP_KEY(&s->g, a), *kb = GROUP_KEY(&s->g, b);
	const struct ugroup *ga = GROUP_VAL(&s->g, a), *gb = GROUP_VAL(&s->g, b);
	if (ka->sg != kb->sg)
		return ka->sg < kb->sg ? -1 : 1;
	if (ka->rank != kb->rank)
		return ka->rank < kb->rank ? -1 : 1;
	if (ga->kt.sum != gb->kt.sum)
		return ga->kt.sum > gb->kt.sum ? -1 : 1;
	/* Ties by TraceLens's ex_UID; without it, its collection order. */
	if (!isnan(ga->uid) && !isnan(gb->uid) && ga->uid != gb->uid)
		return ga->uid < gb->uid ? -1 : 1;
	if (ga->oclass != gb->oclass)
		return ga->oclass < gb->oclass ? -1 : 1;
	return ga->ots < gb->ots ? -1 : ga->ots > gb->ots;
}

/* The value columns: name, and which statistic of which distribution
 * (dist: 0 duration, 1 kernel time, 2 TB/s, 3 TFLOPS/s; stat as pandas_stat(),
 * 5 sum; or -1 for the others, filled by name), and whether it is a
 * model's (left out when no row has a model's numbers, as TraceLens's
 * columns are those its rows have). */
static const struct vcol { const char *name; int dist, which, model; } vcols[] = {
	{ "ex_UID", -1, 0, 0 }, { "operation_count", -1, 0, 0 },
	{ "total_duration_us", 0, 5, 0 }, { "mean_duration_us", 0, 0, 0 }, { "std_duration_us", 0, 2, 0 },
	{ "GFLOPS", -1, 0, 1 }, { "Data Moved (MB)", -1, 0, 1 }, { "FLOPS/Byte", -1, 0, 1 },
	{ "TB/s_mean", 2, 0, 1 }, { "TB/s_std", 2, 2, 1 }, { "TFLOPS/s_mean", 3, 0, 1 }, { "TFLOPS/s_std", 3, 2, 1 },
	{ "Kernel Time (µs)_mean", 1, 0, 0 }, { "Kernel Time (µs)_std", 1, 2, 0 }, { "Kernel Time (µs)_sum", 1, 5, 0 },
	{ "duration_us_median", 0, 1, 0 }, { "duration_us_min", 0, 3, 0 }, { "duration_us_max", 0, 4, 0 },
	{ "TB/s_median", 2, 1, 1 }, { "TB/s_min", 2, 3, 1 }, { "TB/s_max", 2, 4, 1 },
	{ "TFLOPS/s_median", 3, 1, 1 }, { "TFLOPS/s_min", 3, 3, 1 }, { "TFLOPS/s_max", 3, 4, 1 },
	{ "Kernel Time (µs)_median", 1, 1, 0 }, { "Kernel Time (µs)_min", 1, 3, 0 }, { "Kernel Time (µs)_max", 1, 4, 0 },
	{ "Percentage (%)", -1, 0, 0 }, { "Cumulative Percentage (%)", -1, 0, 0 },
};
#define NVCOLS (sizeof vcols / sizeof vcols[0])

int unified_rows(ev_stats *s, struct ev_rowset *rs)
{
	struct unified *u = s->state;
	int named = ev_meta_nthread(s->meta) > 0;
	struct ev_colspec keys[EV_STATS_MAX_BY + 16], vals[NVCOLS];
	size_t nk = 0, nv = 0, vi[NVCOLS];
	by_colspecs(&s->o, keys, &nk);
	static const char *const kcols[] = { "name", "op category", "process_name", "process_label", "thread_name",
		                             "Input Dims", "Input type", "Input Strides", "Concrete Inputs",
		                             "Compute Spec", "kernel_details_summary", "trunc_kernel_details",
		                             "perf_params", "has_perf_model" };
	for (size_t i = 0; i < sizeof kcols / sizeof kcols[0]; i++)
		if ((named || i < 2 || i > 4) && (u->metrics || i != 9))
			keys[nk++] = (struct ev_colspec){ kcols[i], 0, 0 };
	for (size_t i = 0; i < NVCOLS; i++) {
		vi[i] = nv;
		if (u->metrics || !vcols[i].model)
			vals[nv++] = (struct ev_colspec){ vcols[i].name, 0, EV_DIR_NONE };
	}
	int rc = ev_rowset_init(rs, keys, nk, vals, nv);
	size_t m = s->g.keys.len, *ord = sorted_slots(s, cmp_rows, &rc);
	struct pytext t = { 0 }, t2 = { 0 };
	static const char *const fields[] = { "dims", "types", "strides", "concrete" };
	for (size_t i = 0; !rc && i < m;) {
		size_t e = i;
		double total = 0, cum = 0;
		const struct gkey *k0 = GROUP_KEY(&s->g, ord[i]);
		while (e < m && GROUP_KEY(&s->g, ord[e])->sg == k0->sg && GROUP_KEY(&s->g, ord[e])->rank == k0->rank)
			total += ((struct ugroup *)GROUP_VAL(&s->g, ord[e++]))->kt.sum;
		for (; !rc && i < e; i++) {
			const struct gkey *gk = GROUP_KEY(&s->g, ord[i]);
			struct ugroup *g = GROUP_VAL(&s->g, ord[i]);
			const char *sig = str_of(s, g->sig);
			struct ev_row *r;
			size_t n;
			if ((rc = group_row(s, rs, gk, &r, &n)) != EV_OK)
				break;
			t.n = 0;
			pyt_put(&t, sig, opsum_name_len(sig));
			if (g->kname) {
				pyt_puts(&t, "->");
				pyt_puts(&t, str_of(s, g->kname));
				pyt_puts(&t, " (Synthetic Op)");
			}
			rc = t.oom ? EV_ERR_NOMEM : ev_row_key(r, n++, pyt_str(&t));
			rc = rc ? rc : ev_row_key(r, n++, g->cat);
			const char *nm[3];
			tl_names(s->meta, g->rank, g->thread, nm);
			for (size_t f = 0; !rc && named && f < 3; f++)
				rc = ev_row_key(r, n++, nm[f]);
			for (size_t f = 0; !rc && f < 4; f++)
				if ((rc = opsum_sig_field(sig, fields[f], 1, &t)) == EV_OK)
					rc = ev_row_key(r, n++, pyt_str(&t));
			if (!rc && u->metrics)
				rc = ev_row_key(r, n++, g->metrics ? g->spec : NULL);
			rc = rc ? rc : perf_kernel_details(s, g->k, g->nk, &u->sketched, &t, &t2);
			rc = rc ? rc : ev_row_key(r, n++, pyt_str(&t));
			rc = rc ? rc : ev_row_key(r, n++, pyt_str(&t2));
			rc = rc ? rc : ev_row_key(r, n++, g->params);
			rc = rc ? rc : ev_row_key(r, n++, g->pm ? "True" : "False");
			struct ev_dist *d[4] = { &g->dur, &g->kt, &g->tbs, &g->tflops };
			double pct = total > 0 ? g->kt.sum / total * 100.0 : NAN;
			cum += pct;
			for (size_t c = 0; c < NVCOLS; c++) {
				if (!u->metrics && vcols[c].model)
					continue;
				double v = vcols[c].dist >= 0 ? pandas_stat(d[vcols[c].dist], vcols[c].which) : NAN;
				if (c == 0)
					v = g->uid;
				else if (c == 1)
					v = (double)g->count;
				else if (c >= 5 && c <= 7 && g->metrics)
					v = c == 5 ? g->gflop : c == 6 ? g->mbytes : g->fpb;
				else if (c == NVCOLS - 2)
					v = pct;
				else if (c == NVCOLS - 1)
					v = cum;
				r->val[vi[c]] = v;
			}
		}
	}
	free(t.p);
	free(t2.p);
	free(ord);
	return rc;
}
