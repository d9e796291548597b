/* SPDX-License-Identifier: MIT */
/*
 * timeline.c - the ev_perfetto object: set-up, records in time order, the
 * closing JSON, counts.  The text of the events is the other files' work
 * (slices.c, tracks.c, flows.c, counters.c, emit.c).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "perfetto_int.h"

void ev_perfetto_opts_init(struct ev_perfetto_opts *o)
{
	memset(o, 0, sizeof *o);
	o->layout = EV_PERFETTO_LAYOUT_RANK;
	o->max_pending = 1000000;
}

int ev_perfetto_new(ev_perfetto **pp, const struct ev_perfetto_opts *o, const ev_strtab *st, const ev_meta *meta,
                    ev_output *out)
{
	ev_perfetto *p = calloc(1, sizeof *p);
	*pp = NULL;
	if (!p)
		return EV_ERR_NOMEM;
	p->o = *o;
	p->st = st;
	p->meta = meta;
	p->first_event = 1;
	ev_vec_init(&p->tracks, sizeof(struct pf_track));
	ev_vec_init(&p->procs, sizeof(struct pf_proc));
	ev_map_init(&p->track_ix);
	ev_map_init(&p->proc_ix);
	if (pf_flows_init(p) != EV_OK || pf_out_init(p, out) != EV_OK || pf_hta_init(p) != EV_OK ||
	    pf_cp_init(p) != EV_OK) {
		ev_perfetto_free(p);
		return EV_ERR_NOMEM;
	}
	pf_puts(&p->ob, "{\"traceEvents\":[");
	*pp = p;
	return EV_OK;
}

/* A status of the event writers as the caller's error. */
static int fail_status(ev_perfetto *p, int rc)
{
	if (p->err.status == rc)
		return rc; /* already described (an output failure) */
	if (rc == EV_ERR_NOMEM)
		return pf_fail(p, rc, "out of memory");
	return pf_fail(p, rc, "%s", ev_strerror(rc));
}

int ev_perfetto_add(ev_perfetto *p, const struct ev_rec *r)
{
	if (p->err.status)
		return p->err.status;
	int64_t last = p->order.last_ts;
	if (ev_order_check(&p->order, r->ts) != EV_OK) {
		char why[128];
		ev_order_text(why, sizeof why, r->ts, last);
		return pf_fail(p, EV_ERR_ORDER, "%s", why);
	}
	if (!p->have_base) {
		p->base = r->ts;
		p->have_base = 1;
	}
	/* A tsx record describes the kernel right after it: held for it. */
	if (r->type == EV_TSX) {
		p->tsx = *r;
		p->have_tsx = 1;
		p->records++;
		return EV_OK;
	}
	/* So does an ideal record, before the kernel's tsx. */
	if (r->type == EV_IDEAL) {
		p->ideal = *r;
		p->have_ideal = 1;
		p->records++;
		return EV_OK;
	}
	int rc = pf_record(p, r);
	p->have_tsx = 0;
	p->have_ideal = 0;
	if (rc == EV_OK)
		rc = pf_hta_add(p, r);
	if (rc == EV_OK)
		rc = pf_cp_add(p, r);
	if (rc == EV_OK)
		rc = pf_flush(p, 0);
	if (rc != EV_OK)
		return fail_status(p, rc);
	p->records++;
	if (p->o.max_events && p->nevents > p->o.max_events)
		return pf_fail(p, EV_ERR_LIMIT, "more than %llu trace events", (unsigned long long)p->o.max_events);
	return EV_OK;
}

int ev_perfetto_finish(ev_perfetto *p)
{
	if (p->err.status)
		return p->err.status;
	pf_counters_finish(p);
	int rc = pf_hta_finish(p);
	if (rc == EV_OK)
		rc = pf_cp_finish(p);
	if (rc != EV_OK)
		return fail_status(p, rc);
	if (pf_flows_finish(p) != EV_OK)
		return pf_fail(p, EV_ERR_NOMEM, "out of memory");
	struct pf_buf *b = &p->ob;
	pf_puts(b, "\n],\n\"displayTimeUnit\":\"ns\",\n\"otherData\":{\"producer\":\"" EV_PERFETTO_PRODUCER "\"");
	pf_kv_str(b, "time", p->o.absolute ? "absolute" : "relative");
	/* As text: JSON readers take numbers as doubles, which lose nanoseconds. */
	char base[24];
	snprintf(base, sizeof base, "%lld", (long long)(p->o.absolute ? 0 : p->base));
	pf_kv_str(b, "ts_base_ns", base);
	pf_kv_u64(b, "records", p->records);
	pf_kv_u64(b, "flows", p->flow_id);
	pf_puts(b, "}}\n");
	return pf_out_finish(p);
}

const struct ev_perfetto_error *ev_perfetto_error(const ev_perfetto *p)
{
	return &p->err;
}

void ev_perfetto_get_stats(const ev_perfetto *p, struct ev_perfetto_stats *st)
{
	memset(st, 0, sizeof *st);
	st->records = p->records;
	st->events = p->nevents;
	st->json_bytes = p->jo.raw_bytes;
	st->flows = p->flow_id;
	memcpy(st->flows_by_kind, p->flows, sizeof st->flows_by_kind);
	memcpy(st->reversed, p->reversed, sizeof st->reversed);
	st->unmatched = p->unmatched;
	st->incomplete = p->evicted;
	st->dropped = p->dropped;
	st->lanes = p->lanes_made;
	st->clipped = p->clipped;
	st->skipped = p->skipped;
	st->cp_segments = p->cp_segments;
}

unsigned ev_perfetto_events_max(const struct ev_rec *r)
{
	switch (r->type) {
	case EV_DEP: case EV_CHAN: case EV_OVERLAP: case EV_TSX: case EV_IDEAL:
		return 0;
	case EV_COUNTER: case EV_MARK:
		return 1;
	default:
		return 2;
	}
}

void ev_perfetto_free(ev_perfetto *p)
{
	if (!p)
		return;
	pf_out_end(p);
	pf_tracks_free(p);
	pf_flows_free(p);
	pf_hta_free(p);
	pf_cp_free(p);
	free(p->ob.p);
	free(p->name.p);
	free(p->tname.p);
	free(p);
}
