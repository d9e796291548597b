/* SPDX-License-Identifier: MIT */
/*
 * critpath_rows.c - the tables of ev-stats critpath: the path's segments
 * (path, cross) and their sums by bound (summary, cross-summary).
 */
#include <math.h>

#include "analysis/critpath_int.h"

const char *const cp_etype_name[] = { "operator", "dependency", "kernel_launch_delay", "kernel_kernel_delay",
	                              "sync_dependency", "collective_arrival", "collective" };
const char *const cp_bound_name[NBOUND] = { "dependency", "cpu_bound", "gpu_compute_bound",
	                                    "gpu_communication_bound", "gpu_kernel_kernel_overhead",
	                                    "gpu_kernel_launch_overhead" };

/* One row: the --by keys, then rank and the table's own keys. */
static int seg_row(struct ev_stats *s, struct ev_rowset *rs, uint32_t sg, uint32_t rank, struct ev_row **row, size_t *n)
{
	struct gkey k = { .sg = sg, .rank = rank };
	int rc = group_row(s, rs, &k, row, n);
	if (!rc && !has_by(&s->o, EV_BY_RANK))
		rc = ev_row_keyu(*row, (*n)++, rank);
	return rc;
}

static int path_rows(struct ev_stats *s, struct ev_rowset *rs, const struct seg *sg, size_t n)
{
	int rc = EV_OK;
	for (size_t j = 0; !rc && j < n; j++) {
		struct ev_row *row;
		size_t k;
		if ((rc = seg_row(s, rs, sg[j].sg, sg[j].rank, &row, &k)) != EV_OK)
			break;
		rc = ev_row_keyu(row, k++, j);
		rc = rc ? rc : ev_row_key(row, k++, cp_etype_name[sg[j].type]);
		rc = rc ? rc : ev_row_key(row, k++, sg[j].bound == B_NONE ? "" : cp_bound_name[sg[j].bound]);
		rc = rc ? rc : ev_row_key(row, k, str_of(s, sg[j].name));
		row->val[0] = (double)sg[j].ts;
		row->val[1] = (double)sg[j].dur;
	}
	return rc;
}

static int sum_rows(struct ev_stats *s, struct ev_rowset *rs, uint32_t sg, uint32_t rank, const int64_t *total,
                    const uint64_t *nseg, int64_t all)
{
	int rc = EV_OK;
	for (int b = 0; !rc && b < NBOUND; b++) {
		if (!nseg[b])
			continue;
		struct ev_row *row;
		size_t k;
		if ((rc = seg_row(s, rs, sg, rank, &row, &k)) != EV_OK)
			break;
		rc = ev_row_key(row, k, cp_bound_name[b]);
		row->val[0] = (double)total[b];
		row->val[1] = all ? (double)total[b] / (double)all * 100.0 : NAN; /* HTA's order of operations */
	}
	return rc;
}

/* The path across ranks by rank and bound, in percent of the whole path. */
static int cross_sum_rows(struct ev_stats *s, struct ev_rowset *rs)
{
	struct critpath *st = s->state;
	const struct seg *p = st->cross.data;
	int rc = EV_OK;
	for (size_t i = 0; !rc && i < st->cross.len;) {
		size_t j = i;
		int64_t all = 0;
		while (j < st->cross.len && p[j].sg == p[i].sg)
			all += p[j++].dur;
		/* Ranks in the order the path first reaches them. */
		for (size_t a = i; !rc && a < j; a++) {
			int seen = 0;
			for (size_t b = i; b < a && !seen; b++)
				seen = p[b].rank == p[a].rank;
			if (seen)
				continue;
			int64_t total[NBOUND] = { 0 };
			uint64_t nseg[NBOUND] = { 0 };
			for (size_t b = a; b < j; b++)
				if (p[b].rank == p[a].rank) {
					total[p[b].bound] += p[b].dur;
					nseg[p[b].bound]++;
				}
			rc = sum_rows(s, rs, p[a].sg, p[a].rank, total, nseg, all);
		}
		i = j;
	}
	return rc;
}

int cp_rows(struct ev_stats *s, struct ev_rowset *rs)
{
	struct critpath *st = s->state;
	struct ev_colspec keys[EV_STATS_MAX_BY + 5];
	size_t nk = 0;
	by_colspecs(&s->o, keys, &nk);
	int path = s->o.table == T_PATH || s->o.table == T_CROSS;
	if (!has_by(&s->o, EV_BY_RANK))
		keys[nk++] = (struct ev_colspec){ "rank", 1, 0 };
	if (path) {
		keys[nk++] = (struct ev_colspec){ "seq", 1, 0 };
		keys[nk++] = (struct ev_colspec){ "type", 0, 0 };
	}
	keys[nk++] = (struct ev_colspec){ "bound_by", 0, 0 };
	if (path)
		keys[nk++] = (struct ev_colspec){ "name", 0, 0 };
	static const struct ev_colspec pvals[] = { { "start_us", 0, 0 }, { "duration_us", 0, EV_DIR_LOWER } };
	static const struct ev_colspec svals[] = { { "duration_us", 0, EV_DIR_LOWER }, { "percent", 0, 0 } };
	int rc = ev_rowset_init(rs, keys, nk, path ? pvals : svals, 2);
	if (rc)
		return rc;
	if (s->o.table == T_CROSS)
		return path_rows(s, rs, st->cross.data, st->cross.len);
	if (s->o.table == T_CROSS_SUMMARY)
		return cross_sum_rows(s, rs);
	for (size_t i = 0; !rc && i < st->ranks.len; i++) {
		const struct crank *cr = (struct crank *)st->ranks.data + i;
		if (path) {
			rc = path_rows(s, rs, cr->path.data, cr->path.len);
			continue;
		}
		int64_t all = 0;
		for (int b = 0; b < NBOUND; b++)
			all += cr->total[b];
		rc = sum_rows(s, rs, cr->h.sg, cr->h.rank, cr->total, cr->nseg, all);
	}
	return rc;
}
