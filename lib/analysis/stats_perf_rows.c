/* SPDX-License-Identifier: MIT */
/*
 * stats_perf_rows.c - ev-stats perf's sheet: TraceLens's columns (the
 * --by keys, name, the param: columns in the order they first come in the
 * trace file, Compute Spec, kernel_details, the first instance's
 * arguments, process and thread, then the numbers) and a row per group,
 * largest kernel time first, ties by UID_first.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/pyrepr.h"
#include "analysis/stats_perf.h"

static int cmp_pcol(const void *pa, const void *pb, void *ctx)
{
	const struct ev_stats *s = ctx;
	const struct pcol *a = pa, *b = pb;
	int c = perf_file_cmp(s->meta, &a->at, &b->at);
	if (c)
		return c;
	return a->pos < b->pos ? -1 : a->pos > b->pos;
}

static int cmp_rows(const struct ev_stats *s, size_t a, size_t b)
{
	const struct gkey *ka = GROUP_KEY(&s->g, a), *kb = GROUP_KEY(&s->g, b);
	const struct pgroup *ga = GROUP_VAL(&s->g, a), *gb = GROUP_VAL(&s->g, b);
	if (ka->sg != kb->sg)
		return ka->sg < kb->sg ? -1 : 1;
	if (ka->rank != kb->rank)
		return ka->rank < kb->rank ? -1 : 1;
	if (ga->us.sum != gb->us.sum)
		return ga->us.sum > gb->us.sum ? -1 : 1;
	/* TraceLens breaks ties by UID_first. */
	if (perf_uid_known(ga) && perf_uid_known(gb))
		return ga->uid < gb->uid ? -1 : ga->uid > gb->uid;
	return perf_file_cmp(s->meta, &ga->first, &gb->first);
}

int perf_rows(ev_stats *s, struct ev_rowset *rs)
{
	struct perf *p = s->state;
	struct ev_colspec keys[EV_STATS_MAX_BY + 2 * PERF_MAXP + 12];
	size_t nk = 0;
	by_colspecs(&s->o, keys, &nk);
	size_t key0 = nk;
	keys[nk++] = (struct ev_colspec){ "name", 0, 0 };
	qsort_r(p->cols, p->ncols, sizeof p->cols[0], cmp_pcol, s);
	for (size_t i = 0; i < p->ncols; i++) {
		snprintf(p->colname[i], sizeof p->colname[i], "param: %s", p->cols[i].name);
		keys[nk++] = (struct ev_colspec){ p->colname[i], 0, 0 };
	}
	static const char *const tail[] = { "Compute Spec", "kernel_details__summarize_kernel_stats", "trunc_kernel_details",
		                             "Input Dims_first", "Input type_first", "Input Strides_first",
		                             "Concrete Inputs_first" };
	for (size_t i = 0; i < 7; i++)
		keys[nk++] = (struct ev_colspec){ tail[i], 0, 0 };
	/* The first instance's process and thread, when the stream names
	 * threads (#thread lines). */
	int named = ev_meta_nthread(s->meta) > 0;
	static const char *const namecols[] = { "process_name", "process_label", "thread_name" };
	for (size_t i = 0; named && i < 3; i++)
		keys[nk++] = (struct ev_colspec){ namecols[i], 0, 0 };
	static const struct ev_colspec vals[] = {
		{ "GFLOPS_first", 0, EV_DIR_NONE }, { "Data Moved (MB)_first", 0, EV_DIR_NONE },
		{ "FLOPS/Byte_first", 0, EV_DIR_NONE }, { "TB/s_mean", 0, EV_DIR_HIGHER }, { "TB/s_median", 0, EV_DIR_HIGHER },
		{ "TB/s_std", 0, EV_DIR_NONE }, { "TB/s_min", 0, EV_DIR_HIGHER }, { "TB/s_max", 0, EV_DIR_HIGHER },
		{ "TFLOPS/s_mean", 0, EV_DIR_HIGHER }, { "TFLOPS/s_median", 0, EV_DIR_HIGHER },
		{ "TFLOPS/s_std", 0, EV_DIR_NONE }, { "TFLOPS/s_min", 0, EV_DIR_HIGHER },
		{ "TFLOPS/s_max", 0, EV_DIR_HIGHER }, { "Kernel Time (µs)_mean", 0, EV_DIR_LOWER },
		{ "Kernel Time (µs)_median", 0, EV_DIR_LOWER }, { "Kernel Time (µs)_std", 0, EV_DIR_NONE },
		{ "Kernel Time (µs)_min", 0, EV_DIR_LOWER }, { "Kernel Time (µs)_max", 0, EV_DIR_LOWER },
		{ "Kernel Time (µs)_sum", 0, EV_DIR_LOWER }, { "name_count", 0, EV_DIR_NONE },
		{ "UID_first", 0, EV_DIR_NONE },
	};
	/* UID_first only when the stream carries TraceLens's UIDs. */
	int rc = ev_rowset_init(rs, keys, nk, vals, sizeof vals / sizeof vals[0] - !p->any_uid);
	size_t m = s->g.keys.len, *ord = sorted_slots(s, cmp_rows, &rc);
	struct pytext t = { 0 }, t2 = { 0 };
	for (size_t i = 0; !rc && i < m; i++) {
		const struct gkey *gk = GROUP_KEY(&s->g, ord[i]);
		struct pgroup *g = GROUP_VAL(&s->g, ord[i]);
		/* The first instance in the trace file (perf_file_cmp): the least
		 * UID, when known. */
		int uk = perf_uid_known(g);
		const char *sig = str_of(s, g->sig);
		struct ev_row *r;
		size_t n;
		if ((rc = group_row(s, rs, gk, &r, &n)) != EV_OK)
			break;
		t.n = 0;
		pyt_put(&t, sig, opsum_name_len(sig));
		rc = t.oom ? EV_ERR_NOMEM : ev_row_key(r, key0, pyt_str(&t));
		/* Each parameter column: the group's value, "nan" (pandas' str
		 * of a missing one) when its model has none. */
		for (size_t c = 0; !rc && c < p->ncols; c++) {
			const char *v = "nan";
			size_t vl = 3;
			const char *at = g->pvals;
			for (size_t j = 0; j < g->np; j++) {
				size_t l = strcspn(at, "\x1f");
				if (!strcmp(g->pname[j], p->cols[c].name)) {
					v = at;
					vl = l;
				}
				at += l + (at[l] != '\0');
			}
			t.n = 0;
			pyt_put(&t, v, vl);
			rc = t.oom ? EV_ERR_NOMEM : ev_row_key(r, key0 + 1 + c, pyt_str(&t));
		}
		size_t kc = key0 + 1 + p->ncols;
		rc = rc ? rc : ev_row_key(r, kc, g->spec);
		rc = rc ? rc : perf_kernel_details(s, g->k, g->nk, &p->sketched, &t, &t2);
		rc = rc ? rc : ev_row_key(r, kc + 1, g->nk ? pyt_str(&t) : "[]");
		rc = rc ? rc : ev_row_key(r, kc + 2, g->nk ? pyt_str(&t2) : NULL);
		/* The *_first columns keep the JSON's lists (not tuples). */
		static const char *const fields[] = { "dims", "types", "strides", "concrete" };
		for (size_t f = 0; !rc && f < 4; f++)
			if ((rc = opsum_sig_field(sig, fields[f], 0, &t)) == EV_OK)
				rc = ev_row_key(r, kc + 3 + f, pyt_str(&t));
		const char *names[3];
		tl_names(s->meta, g->first.rank, g->first.thread, names);
		for (size_t f = 0; !rc && named && f < 3; f++)
			rc = ev_row_key(r, kc + 7 + f, names[f]);
		double *v = r->val;
		v[0] = g->gflop;
		v[1] = g->mbytes;
		v[2] = g->fpb;
		for (int j = 0; j < 5; j++) {
			v[3 + j] = pandas_stat(&g->tbs, j);
			v[8 + j] = pandas_stat(&g->tflops, j);
			v[13 + j] = pandas_stat(&g->us, j);
		}
		v[18] = g->us.sum;
		v[19] = (double)g->count;
		if (p->any_uid)
			v[20] = uk ? (double)g->uid : NAN;
		(void)n;
	}
	free(t.p);
	free(t2.p);
	free(ord);
	return rc;
}
