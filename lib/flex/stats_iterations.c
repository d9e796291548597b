/* SPDX-License-Identifier: MIT */
/*
 * stats_iterations.c - acelyzer's iteration statistics (its log line
 * "ITSTATS: [pid] avg_iteration_time=…, iterations=…"): per rank, the
 * 'Cmpt Exec' kernels with TS1..TS5 counters (acelyzer's rule) in start
 * order go through the detector of iterdet.c; the row is its mean
 * interval in us and the intervals counted, with the word's length and
 * the times the sequence broke.  Needs each rank's kernels in time order,
 * as flex2ev writes them; a kernel starting before the one before is
 * counted and left out.
 */
#include <stdlib.h>

#include "flex/stats_int.h"

int fs_iter_add(ev_flex_stats *s, const struct ev_rec *r, const char *name, size_t len)
{
	if (!fs_ts_held(s, r)) {
		s->n.no_counters++;
		return EV_OK;
	}
	int fresh;
	struct fs_iter *it = fs_slot(&s->iix, &s->its, (uint64_t)r->rank + 1, &fresh);
	if (!it)
		return EV_ERR_NOMEM;
	if (fresh) {
		it->rank = r->rank;
		fs_iterdet_init(&it->d, s->o.iter_window ? s->o.iter_window : 16384);
	}
	if (it->have && r->ts < it->last) {
		s->n.unordered++;
		return EV_OK;
	}
	it->have = 1;
	it->last = r->ts;
	/* The text decides, not the id: equal names, one id. */
	uint64_t id;
	int rc = ev_strtab_intern(s->st, name, len, &id);
	if (rc != EV_OK)
		return rc;
	int was = it->d.state;
	if ((rc = fs_iterdet_add(&it->d, id, r->ts)) != EV_OK)
		return rc;
	if (was != 2 && it->d.state == 2)
		s->n.iter_gave_up++;
	return EV_OK;
}

static int row(ev_table *t, const struct fs_iter *it)
{
	const struct fs_iterdet *d = &it->d;
	int rc, known = d->state != 2;
	if ((rc = ev_table_u64(t, it->rank)) ||
	    (rc = known ? ev_table_f64(t, fs_us(fs_iterdet_mean(d))) : ev_table_null(t)) ||
	    (rc = known ? ev_table_u64(t, d->iterations) : ev_table_null(t)) ||
	    (rc = known ? ev_table_u64(t, d->rlen) : ev_table_null(t)) ||
	    (rc = known ? ev_table_u64(t, d->skips) : ev_table_null(t)))
		return rc;
	return EV_OK;
}

int fs_iter_write(ev_flex_stats *s, const uint32_t *ranks)
{
	int rc = EV_OK;
	for (size_t i = 0; i < s->rs.len && rc == EV_OK; i++) {
		uint64_t *ix = ev_map_get(&s->iix, (uint64_t)ranks[i] + 1);
		if (ix)
			rc = row(s->t, (const struct fs_iter *)s->its.data + (*ix - 1));
	}
	return rc;
}

void fs_iter_free(ev_flex_stats *s)
{
	for (size_t i = 0; i < s->its.len; i++)
		fs_iterdet_free(&((struct fs_iter *)s->its.data)[i].d);
	ev_map_free(&s->iix);
	ev_vec_free(&s->its);
}
