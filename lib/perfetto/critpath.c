/* SPDX-License-Identifier: MIT */
/*
 * critpath.c - HTA's critical path on the timeline (--critical-path):
 * ev-stats critpath reads the records as they are written, and at the end
 * its path is drawn as a "critical path" track of each rank's GPU and CPU
 * process, one slice a segment on the side of the event the segment
 * belongs to, in order, each joined to the next by a flow arrow (across
 * ranks too).  HTA's overlaid trace marks the events themselves; a slice
 * already written cannot be marked, so the path gets its own tracks, each
 * slice naming the stream or thread of its event.
 */
#include <string.h>

#include "perfetto_int.h"

int pf_cp_init(ev_perfetto *p)
{
	if (p->o.critical_path == EV_PERFETTO_CP_NONE)
		return EV_OK;
	struct ev_stats_opts so;
	memset(&so, 0, sizeof so);
	so.analysis = ev_stats_find("critpath");
	if (!so.analysis)
		return EV_ERR_ARG;
	/* The tables whose segments ev_stats_critpath_seg hands out. */
	const char *want = p->o.critical_path == EV_PERFETTO_CP_CROSS ? "cross" : "path";
	for (unsigned i = 0; so.analysis->tables && so.analysis->tables[i].name; i++)
		if (!strcmp(so.analysis->tables[i].name, want))
			so.table = i;
	so.cp_annotation = p->o.cp_annotation;
	so.cp_inst_lo = p->o.cp_inst_lo;
	so.cp_inst_hi = p->o.cp_inst_hi;
	return ev_stats_new(&p->cp, &so, p->st, p->meta);
}

int pf_cp_add(ev_perfetto *p, const struct ev_rec *r)
{
	return p->cp ? ev_stats_add(p->cp, r) : EV_OK;
}

/* A segment's slice on its process's critical path track. */
static int segment(ev_perfetto *p, const struct ev_critpath_seg *g, struct pf_ep *ep)
{
	int64_t dur = g->dur_us > 0 ? g->dur_us * 1000 : 0; /* HTA's inward rounding can give -1 us */
	int64_t end = g->ts + dur;
	struct pf_track *t = pf_place(p, g->rank, g->gpu, PF_CRITICAL, 0, g->ts, &end);
	if (!t)
		return EV_ERR_NOMEM;
	*ep = (struct pf_ep){ g->ts, end, t->pid, t->tid };
	struct pf_buf *n = &p->name, *b = &p->ob;
	n->len = 0;
	if (p->o.rank_prefix) {
		pf_puts(n, "[R");
		pf_u64(n, g->rank);
		pf_puts(n, "] ");
	}
	pf_puts(n, *g->name ? g->name : g->type);
	pf_event(p, "X", t->pid, t->tid);
	pf_key(b, "name");
	pf_jstr(b, n->p, n->len);
	pf_kv_str(b, "cat", "critical_path");
	pf_puts(b, ",\"ts\":");
	pf_us(b, pf_rel_ts(p, g->ts));
	pf_puts(b, ",\"dur\":");
	pf_us(b, end - g->ts);
	pf_puts(b, ",\"args\":{\"seq\":");
	pf_u64(b, g->seq);
	pf_kv_str(b, "type", g->type);
	pf_kv_str(b, "bound_by", *g->bound ? g->bound : "dependency");
	pf_key(b, "duration_us");
	pf_i64(b, g->dur_us);
	/* Where its event is: the track HTA's overlay would mark. */
	pf_key(b, "event_on");
	pf_puts(b, g->gpu ? "\"stream " : "\"thread ");
	pf_u64(b, g->track);
	pf_puts(b, "\"}}");
	p->cp_segments++;
	return n->oom || b->oom ? EV_ERR_NOMEM : EV_OK;
}

int pf_cp_finish(ev_perfetto *p)
{
	if (!p->cp)
		return EV_OK;
	int rc = ev_stats_finish(p->cp);
	struct ev_critpath_seg g;
	struct pf_ep prev = { 0, 0, 0, 0 }, cur;
	for (size_t i = 0; rc == EV_OK && ev_stats_critpath_seg(p->cp, i, &g); i++) {
		rc = segment(p, &g, &cur);
		if (rc == EV_OK && g.seq > 0 && !p->o.no_flows)
			pf_flow_pair(p, EV_PERFETTO_CRITICAL, "critical_path", &prev, &cur);
		prev = cur;
		if (rc == EV_OK)
			rc = pf_flush(p, 0);
	}
	return rc == EV_OK && p->ob.oom ? EV_ERR_NOMEM : rc;
}

void pf_cp_free(ev_perfetto *p)
{
	ev_stats_free(p->cp);
	p->cp = NULL;
}
