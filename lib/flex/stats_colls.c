/* SPDX-License-Identifier: MIT */
/*
 * stats_colls.c - one row per collective across its ranks: the coll
 * records of one (communicator, seq) matched by the library's matcher
 * (ev_collmatch), a row written when the communicator's last rank
 * arrives (aux ranks), the rest at the end, oldest first.  Data moved is
 * acelyzer's Coll_Bandwidth: 2(N-1) x bytes, N the communicator's ranks
 * (else the ranks seen), bytes the largest of the ranks' messages.
 */
#include <math.h>
#include <stdio.h>

#include "flex/stats_int.h"

static int row(void *ctx, const struct ev_coll_done *d)
{
	ev_flex_stats *s = ctx;
	ev_table *t = s->t;
	uint64_t bytes = 0;
	int64_t start = d->arr[0].ts, end = d->arr[0].end;
	for (uint32_t i = 0; i < d->seen; i++) {
		const struct ev_coll_arrival *a = &d->arr[i];
		if (a->data > bytes)
			bytes = a->data;
		if (a->ts < start)
			start = a->ts;
		if (a->end > end)
			end = a->end;
	}
	if (d->expect && !d->complete)
		s->n.colls_incomplete++;
	/* The communicator's name, cut to 511 bytes: a row's size has a bound. */
	size_t gl = 0;
	const char *g = ev_strtab_get(s->st, d->key.comm, &gl);
	char name[512];
	snprintf(name, sizeof name, "%.*s", (int)gl, g ? g : "");
	uint64_t np = d->expect ? d->expect : d->seen;
	uint64_t data = np > 1 ? 2 * (np - 1) * bytes : 0;
	double span = (double)(end - start);
	const char *kind = ev_coll_name(d->first.op);
	int rc;
	if ((rc = ev_table_str(t, name)) || (rc = ev_table_u64(t, d->key.seq)) ||
	    (rc = ev_table_str(t, kind ? kind : "unknown")) || (rc = ev_table_u64(t, d->expect)) ||
	    (rc = ev_table_u64(t, d->seen)) || (rc = ev_table_u64(t, bytes)) || (rc = ev_table_u64(t, data)) ||
	    (rc = ev_table_f64(t, fs_us((double)start))) || (rc = ev_table_f64(t, fs_us((double)end))) ||
	    (rc = ev_table_f64(t, fs_us(span))) ||
	    (rc = ev_table_f64(t, span > 0 ? round((double)data / span * 1000.0) / 1000.0 : 0)))
		return rc;
	return EV_OK;
}

int fs_colls_init(ev_flex_stats *s)
{
	return ev_collmatch_new(&s->cm, NULL, row, s);
}

int fs_colls_add(ev_flex_stats *s, const struct ev_rec *r)
{
	/* Communicator 0 is none: such a record cannot be matched across
	 * ranks and makes a row only when it says it is alone (aux 1). */
	if (!r->comm && r->aux != 1)
		return EV_OK;
	struct ev_coll_key k = { 0, r->comm, r->seq, 0 };
	return ev_collmatch_add(s->cm, &k, r->aux, r, r->bytes, NULL);
}

int fs_colls_finish(ev_flex_stats *s)
{
	int rc = ev_collmatch_flush(s->cm);
	struct ev_collmatch_counts c;
	ev_collmatch_get_counts(s->cm, &c);
	s->n.colls_evicted = c.evicted;
	return rc;
}
