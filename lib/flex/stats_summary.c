/* SPDX-License-Identifier: MIT */
/*
 * stats_summary.c - acelyzer's _summary.csv: per rank, every 'Cmpt Exec'
 * kernel under its name with numbers replaced by [N] (ev_flex_norm_name),
 * its calls and duration statistics and its share of the rank's kernel
 * time, largest total first.
 */
#include <math.h>
#include <stdlib.h>

#include "flex/stats_int.h"

int fs_norm_name(ev_flex_stats *s, const char *name, size_t len, uint64_t *id)
{
	/* ev_flex_norm_name writes at most 2n + 1 bytes: room to spare. */
	if (len * 4 + 8 > s->ncap) {
		char *b = realloc(s->nbuf, len * 4 + 8);
		if (!b)
			return EV_ERR_NOMEM;
		s->nbuf = b;
		s->ncap = len * 4 + 8;
	}
	size_t nl = ev_flex_norm_name(name, len, s->nbuf);
	return ev_strtab_intern(s->st, s->nbuf, nl, id);
}

int fs_summary_add(ev_flex_stats *s, const struct ev_rec *r, const char *name, size_t len)
{
	uint64_t id;
	int fresh, rc = fs_norm_name(s, name, len, &id);
	if (rc != EV_OK)
		return rc;
	struct fs_kernel *k = fs_slot(&s->kix, &s->ks, fs_key(r->rank, id), &fresh);
	if (!k)
		return EV_ERR_NOMEM;
	if (fresh) {
		k->rank = r->rank;
		k->name = id;
		k->order = s->ks.len;
		ev_dist_init(&k->d);
	}
	k->sum_ns += r->dur;
	return ev_dist_add(&k->d, &s->pool, (double)r->dur / 1000.0, r->ts);
}

/* Rank ascending, then total time descending, then first seen (acelyzer
 * sorts its names, kept in order of appearance, stably by total time). */
static int cmp_kernel(const void *a, const void *b)
{
	const struct fs_kernel *x = *(struct fs_kernel *const *)a, *y = *(struct fs_kernel *const *)b;
	if (x->rank != y->rank)
		return x->rank < y->rank ? -1 : 1;
	if (x->sum_ns != y->sum_ns)
		return x->sum_ns > y->sum_ns ? -1 : 1;
	return x->order < y->order ? -1 : x->order > y->order;
}

static int row(ev_flex_stats *s, struct fs_kernel *k)
{
	ev_table *t = s->t;
	double tot = fs_us(fs_rank(s, k->rank)->ktime);
	const char *nm = ev_strtab_get(s->st, k->name, NULL);
	double sum = (double)k->sum_ns;
	int rc;
	/* acelyzer rounds mean, median and stdev to the ns, percent to 0.01. */
	if ((rc = ev_table_u64(t, k->rank)) || (rc = ev_table_str(t, nm ? nm : "")) ||
	    (rc = ev_table_u64(t, k->d.n)) || (rc = ev_table_f64(t, sum / 1000.0)) ||
	    (rc = ev_table_f64(t, round(sum / (double)k->d.n) / 1000.0)) ||
	    (rc = ev_table_f64(t, round(ev_dist_quantile(&k->d, 0.5) * 1000) / 1000)) ||
	    (rc = ev_table_f64(t, k->d.min)) || (rc = ev_table_f64(t, k->d.max)) ||
	    (rc = ev_table_f64(t, round(ev_dist_std(&k->d) * 1000) / 1000)) ||
	    (rc = ev_table_f64(t, tot > 0 ? round(sum / 1000.0 / tot * 10000) / 100 : 0)))
		return rc;
	return EV_OK;
}

int fs_summary_write(ev_flex_stats *s)
{
	size_t n = s->ks.len;
	struct fs_kernel **v = malloc((n ? n : 1) * sizeof *v);
	int rc = EV_OK;
	if (!v)
		return EV_ERR_NOMEM;
	for (size_t i = 0; i < n; i++)
		v[i] = (struct fs_kernel *)s->ks.data + i;
	qsort(v, n, sizeof *v, cmp_kernel);
	for (size_t i = 0; i < n && !rc; i++)
		rc = row(s, v[i]);
	free(v);
	return rc;
}

void fs_summary_free(ev_flex_stats *s)
{
	for (size_t i = 0; i < s->ks.len; i++)
		ev_dist_free(&((struct fs_kernel *)s->ks.data)[i].d);
	free(s->nbuf);
}
