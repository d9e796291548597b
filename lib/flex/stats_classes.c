/* SPDX-License-Identifier: MIT */
/*
 * stats_classes.c - per rank and acelyzer event class (the first word of
 * a flex2ev record's sig; OTHER when there is none), the events and their
 * time, classes in acelyzer's order.  Collective spans are flex2ev's, not
 * acelyzer events, so they are not counted.
 */
#include <math.h>
#include <string.h>

#include "flex/stats_int.h"

int fs_classes_add(ev_flex_stats *s, const struct ev_rec *r)
{
	size_t sl = 0;
	const char *sig = ev_strtab_get(s->st, r->sig, &sl);
	unsigned cls = EV_FC_OTHER;
	size_t w = sig ? strcspn(sig, " ") : 0;
	if (!sig || ev_flex_class_parse(sig, w < sl ? w : sl, &cls) != EV_OK)
		cls = EV_FC_OTHER;
	int fresh;
	struct fs_group *c = fs_slot(&s->gix, &s->gs, fs_key(r->rank, (uint64_t)cls + 1), &fresh);
	if (!c)
		return EV_ERR_NOMEM;
	if (fresh) {
		c->rank = r->rank;
		c->cat = cls;
	}
	c->calls++;
	c->time += (double)r->dur / 1000.0;
	return EV_OK;
}

int fs_classes_write(ev_flex_stats *s, const uint32_t *ranks)
{
	int rc = EV_OK;
	for (size_t i = 0; i < s->rs.len && !rc; i++)
		for (unsigned c = 0; c < EV_FC_COUNT && !rc; c++) {
			uint64_t *ix = ev_map_get(&s->gix, fs_key(ranks[i], (uint64_t)c + 1));
			if (!ix)
				continue;
			const struct fs_group *g = (const struct fs_group *)s->gs.data + (*ix - 1);
			if ((rc = ev_table_u64(s->t, ranks[i])) || (rc = ev_table_str(s->t, ev_flex_class_name(c))) ||
			    (rc = ev_table_u64(s->t, g->calls)) || (rc = ev_table_f64(s->t, round(g->time * 1000) / 1000)))
				break;
		}
	return rc;
}
