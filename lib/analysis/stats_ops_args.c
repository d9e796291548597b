/* SPDX-License-Identifier: MIT */
/*
 * stats_ops_args.c - TraceLens's ops_unique_args: per launching op name,
 * category and arguments (Input Dims, Input type, Input Strides, Concrete
 * Inputs, printed as Python prints the tuples TraceLens groups by; and
 * process and thread names when the stream names threads), the op
 * instances' direct kernel time: count, mean, median, std, min, max, sum,
 * share and running share, largest sum first, ties by ex_UID (without
 * UIDs by first occurrence);
 * the same of their subtree kernel time, TraceLens's kernel_details
 * summary of their direct GPU events (and its truncated form), and its
 * ex_UID (the first instance's op's UID) when the stream carries UIDs.  The op
 * instances are ops_summary's (stats_ops_summary.c).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/opsum.h"
#include "analysis/pyrepr.h"

static int cmp_rows(const void *pa, const void *pb, void *ctx)
{
	const struct ev_stats *s = ctx;
	size_t a = *(const size_t *)pa, b = *(const size_t *)pb;
	const struct gkey *ka = GROUP_KEY(&s->g, a), *kb = GROUP_KEY(&s->g, b);
	const struct opsum_group *ga = GROUP_VAL(&s->g, a), *gb = GROUP_VAL(&s->g, b);
	if (ka->sg != kb->sg)
		return ka->sg < kb->sg ? -1 : 1;
	if (ka->rank != kb->rank)
		return ka->rank < kb->rank ? -1 : 1;
	if (ga->direct_us != gb->direct_us)
		return ga->direct_us > gb->direct_us ? -1 : 1;
	/* TraceLens breaks ties by ex_UID. */
	if (ga->uid >= 0 && !ga->no_uid && gb->uid >= 0 && !gb->no_uid)
		return ga->uid < gb->uid ? -1 : ga->uid > gb->uid;
	return ga->first < gb->first ? -1 : ga->first > gb->first;
}

static int ops_args_rows(ev_stats *s, struct ev_rowset *rs)
{
	struct ev_colspec keys[EV_STATS_MAX_BY + 11];
	size_t nk = 0;
	by_colspecs(&s->o, keys, &nk);
	static const char *const fields[] = { "dims", "types", "strides", "concrete" };
	keys[nk++] = (struct ev_colspec){ "name", 0, 0 };
	keys[nk++] = (struct ev_colspec){ "op category", 0, 0 };
	/* TraceLens's process and thread names, when the stream has them. */
	struct opsum *o = s->state;
	if (o->by_names) {
		keys[nk++] = (struct ev_colspec){ "process_name", 0, 0 };
		keys[nk++] = (struct ev_colspec){ "process_label", 0, 0 };
		keys[nk++] = (struct ev_colspec){ "thread_name", 0, 0 };
	}
	keys[nk++] = (struct ev_colspec){ "Input Dims", 0, 0 };
	keys[nk++] = (struct ev_colspec){ "Input type", 0, 0 };
	keys[nk++] = (struct ev_colspec){ "Input Strides", 0, 0 };
	keys[nk++] = (struct ev_colspec){ "Concrete Inputs", 0, 0 };
	keys[nk++] = (struct ev_colspec){ "kernel_details_summary", 0, 0 };
	keys[nk++] = (struct ev_colspec){ "trunc_kernel_details", 0, 0 };
	static const struct ev_colspec vals[] = {
		{ "operation_count", 0, EV_DIR_NONE },
		{ "total_direct_kernel_time_mean", 0, EV_DIR_LOWER },
		{ "total_direct_kernel_time_median", 0, EV_DIR_LOWER },
		{ "total_direct_kernel_time_std", 0, EV_DIR_NONE },
		{ "total_direct_kernel_time_min", 0, EV_DIR_LOWER },
		{ "total_direct_kernel_time_max", 0, EV_DIR_LOWER },
		{ "total_direct_kernel_time_sum", 0, EV_DIR_LOWER },
		{ "Percentage (%)", 0, EV_DIR_NONE },
		{ "Cumulative Percentage (%)", 0, EV_DIR_NONE },
		{ "total_subtree_kernel_time_mean", 0, EV_DIR_LOWER },
		{ "total_subtree_kernel_time_median", 0, EV_DIR_LOWER },
		{ "total_subtree_kernel_time_std", 0, EV_DIR_NONE },
		{ "total_subtree_kernel_time_min", 0, EV_DIR_LOWER },
		{ "total_subtree_kernel_time_max", 0, EV_DIR_LOWER },
		{ "total_subtree_kernel_time_sum", 0, EV_DIR_LOWER },
		{ "ex_UID", 0, EV_DIR_NONE },
	};
	/* ex_UID only when the stream carries TraceLens's UIDs. */
	size_t nv = sizeof vals / sizeof vals[0] - !o->any_uid;
	int rc = ev_rowset_init(rs, keys, nk, vals, nv);
	size_t m = s->g.keys.len;
	size_t *ord = rc ? NULL : malloc((m + 1) * sizeof *ord);
	if (!rc && !ord)
		rc = EV_ERR_NOMEM;
	for (size_t i = 0; !rc && i < m; i++)
		ord[i] = i;
	if (!rc)
		qsort_r(ord, m, sizeof *ord, cmp_rows, s);
	struct pytext t = { 0 }, t2 = { 0 };
	for (size_t i = 0; !rc && i < m;) {
		size_t e = i;
		double total = 0, cum = 0;
		const struct gkey *k0 = GROUP_KEY(&s->g, ord[i]);
		while (e < m && GROUP_KEY(&s->g, ord[e])->sg == k0->sg && GROUP_KEY(&s->g, ord[e])->rank == k0->rank)
			total += ((struct opsum_group *)GROUP_VAL(&s->g, ord[e++]))->direct_us;
		for (; !rc && i < e; i++) {
			const struct gkey *gk = GROUP_KEY(&s->g, ord[i]);
			struct opsum_group *g = GROUP_VAL(&s->g, ord[i]);
			const char *sig = str_of(s, gk->k1);
			struct ev_row *r;
			size_t n;
			if ((rc = group_row(s, rs, gk, &r, &n)) != EV_OK)
				break;
			t.n = 0;
			pyt_put(&t, sig, opsum_name_len(sig));
			rc = t.oom ? EV_ERR_NOMEM : ev_row_key(r, n++, t.p);
			rc = rc ? rc : ev_row_key(r, n++, g->cat);
			const char *nm[3];
			tl_names(s->meta, g->rank, g->thread, nm);
			for (size_t f = 0; !rc && o->by_names && f < 3; f++)
				rc = ev_row_key(r, n++, nm[f]);
			for (size_t f = 0; !rc && f < 4; f++)
				if ((rc = opsum_sig_field(sig, fields[f], 1, &t)) == EV_OK)
					rc = ev_row_key(r, n++, t.p);
			rc = rc ? rc : perf_kernel_details(s, g->k, g->nk, &o->sketched, &t, &t2);
			rc = rc ? rc : ev_row_key(r, n++, pyt_str(&t));
			rc = rc ? rc : ev_row_key(r, n++, pyt_str(&t2));
			double pct = total > 0 ? g->direct_us / total * 100.0 : NAN;
			cum += pct;
			double *v = r->val;
			v[0] = (double)g->count;
			v[1] = g->d.mean;
			v[2] = ev_dist_quantile(&g->d, 0.5);
			v[3] = g->d.n > 1 ? ev_dist_std(&g->d) : NAN; /* pandas' sample std: NaN for one */
			v[4] = g->d.min;
			v[5] = g->d.max;
			v[6] = g->direct_us;
			v[7] = pct;
			v[8] = cum;
			v[9] = g->sd.mean;
			v[10] = ev_dist_quantile(&g->sd, 0.5);
			v[11] = g->sd.n > 1 ? ev_dist_std(&g->sd) : NAN;
			v[12] = g->sd.min;
			v[13] = g->sd.max;
			v[14] = g->subtree_us;
			if (o->any_uid)
				v[15] = g->uid >= 0 && !g->no_uid ? (double)g->uid : NAN;
		}
	}
	free(t.p);
	free(t2.p);
	free(ord);
	return rc;
}

static const char *const ops_args_options[] = { "tracelens-float", "exact-limit", NULL };

const struct ev_stats_analysis ev_stats_analysis_ops_args = {
	.name = "ops-args",
	.sheet = "ops_unique_args",
	.help = "TraceLens's ops_unique_args: per launching op name, category\n"
	        "and arguments, its instances' direct kernel time (us): mean,\n"
	        "median, std, min, max, sum, share and running share; the\n"
	        "same of their subtree kernel time; TraceLens's kernel_details",
	.options = ops_args_options,
	.state_size = sizeof(struct opsum),
	.group_size = sizeof(struct opsum_group),
	.init = opsum_init_names,
	.rec = opsum_rec,
	.finish = opsum_finish,
	.rows = ops_args_rows,
	.free = opsum_free,
	.explain = opsum_explain,
	.warning = opsum_warning,
};
