/* SPDX-License-Identifier: MIT */
/*
 * critpath_segs.c - ev-stats critpath's path handed out segment by segment,
 * with the times in the stream's ns and the track its event is on, for a
 * timeline (ev2perfetto --critical-path).
 */
#include <stddef.h>
#include <string.h>

#include "analysis/critpath_int.h"

/* A segment's rank: its baseTimeNanoseconds, which HTA's microseconds count from. */
static const struct crank *rank_of(const struct critpath *st, uint32_t sg, uint32_t rank)
{
	const struct crank *cr = st->ranks.data;
	for (size_t i = 0; i < st->ranks.len; i++)
		if (cr[i].h.sg == sg && cr[i].h.rank == rank)
			return &cr[i];
	return NULL;
}

int ev_stats_critpath_seg(ev_stats *s, size_t i, struct ev_critpath_seg *seg)
{
	if (s->o.analysis != &ev_stats_analysis_critpath || (s->o.table != T_PATH && s->o.table != T_CROSS))
		return 0;
	const struct critpath *st = s->state;
	const struct seg *p = NULL;
	size_t seq = 0;
	if (s->o.table == T_CROSS) {
		if (i >= st->cross.len)
			return 0;
		p = (const struct seg *)st->cross.data + i;
		while (seq < i && p[-(ptrdiff_t)seq - 1].sg == p->sg)
			seq++;
	} else {
		const struct crank *cr = st->ranks.data;
		for (size_t k = 0; k < st->ranks.len && !p; k++) {
			if (i < cr[k].path.len)
				p = (const struct seg *)cr[k].path.data + i;
			else
				i -= cr[k].path.len;
		}
		if (!p)
			return 0;
		seq = i;
	}
	const struct crank *cr = rank_of(st, p->sg, p->rank);
	int64_t base = cr ? cr->h.json_base_ns : 0;
	memset(seg, 0, sizeof *seg);
	seg->seq = (uint32_t)seq;
	seg->sg = p->sg;
	seg->rank = p->rank;
	seg->track = p->thr;
	seg->gpu = p->gpu;
	seg->ts = base + p->ts * 1000;
	seg->dur_us = p->dur;
	seg->type = cp_etype_name[p->type];
	seg->bound = p->bound == B_NONE ? "" : cp_bound_name[p->bound];
	seg->name = str_of(s, p->name);
	return 1;
}
