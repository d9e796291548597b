/* SPDX-License-Identifier: MIT */
/*
 * counters.c - counter tracks over intervals, per rank on its GPU process:
 * bytes of the collectives and p2p calls running, bytes of the send
 * messages running, kernels running.  An interval adds its amount at its
 * start and takes it back at its end; the ends still to come wait in a
 * min-heap, so memory is what runs at one instant.  A sample is held back
 * until time moves on, so that one instant gives one sample (its final
 * value).
 */
#include <stdlib.h>

#include "perfetto_int.h"

static const char *const counter_names[PF_NCOUNTERS] = { "comm in flight", "wire in flight", "kernels" };
static const char *const counter_keys[PF_NCOUNTERS] = { "bytes", "bytes", "running" };

/* The value v from ts on: the held sample is written if it is for an
 * earlier instant, and v is held instead. */
static void sample(ev_perfetto *p, struct pf_counter *c, int which, uint32_t rank, int64_t ts, uint64_t v)
{
	if (c->have_pend && c->pend_ts != ts) {
		struct pf_buf *b = &p->ob;
		pf_event(p, "C", pf_pid(p, rank, 1), 0);
		pf_kv_str(b, "name", counter_names[which]);
		pf_puts(b, ",\"ts\":");
		pf_us(b, pf_rel_ts(p, c->pend_ts));
		pf_puts(b, ",\"args\":{\"");
		pf_puts(b, counter_keys[which]);
		pf_puts(b, "\":");
		pf_u64(b, c->pend_val);
		pf_puts(b, "}}");
	}
	c->have_pend = 1;
	c->pend_ts = ts;
	c->pend_val = v;
}

static void heap_pop(struct pf_counter *c)
{
	c->h[0] = c->h[--c->n];
	size_t i = 0;
	for (;;) {
		size_t l = 2 * i + 1, r = l + 1, m = i;
		if (l < c->n && c->h[l].end < c->h[m].end)
			m = l;
		if (r < c->n && c->h[r].end < c->h[m].end)
			m = r;
		if (m == i)
			break;
		struct pf_hent x = c->h[i];
		c->h[i] = c->h[m];
		c->h[m] = x;
		i = m;
	}
}

static int heap_push(struct pf_counter *c, int64_t end, uint64_t delta)
{
	if (c->n == c->cap) {
		size_t ncap = c->cap ? c->cap * 2 : 16;
		struct pf_hent *nh = realloc(c->h, ncap * sizeof *nh);
		if (!nh)
			return EV_ERR_NOMEM;
		c->h = nh;
		c->cap = ncap;
	}
	size_t i = c->n++;
	c->h[i].end = end;
	c->h[i].delta = delta;
	while (i && c->h[(i - 1) / 2].end > c->h[i].end) {
		struct pf_hent x = c->h[i];
		c->h[i] = c->h[(i - 1) / 2];
		c->h[(i - 1) / 2] = x;
		i = (i - 1) / 2;
	}
	return EV_OK;
}

/* Apply the ends up to ts (all of them when ts is INT64_MAX). */
static void advance(ev_perfetto *p, struct pf_counter *c, int which, uint32_t rank, int64_t ts)
{
	while (c->n && c->h[0].end <= ts) {
		int64_t e = c->h[0].end;
		c->value -= c->h[0].delta;
		heap_pop(c);
		sample(p, c, which, rank, e, c->value);
	}
}

/* delta on counter `which` of pr during [ts, end).  Out of memory sets
 * ob.oom (the caller's next flush reports it). */
void pf_counter_add(ev_perfetto *p, struct pf_proc *pr, int which, int64_t ts, int64_t end, uint64_t delta)
{
	struct pf_counter *c = &pr->cnt[which];
	advance(p, c, which, pr->rank, ts);
	if (end <= ts)
		return;
	if (heap_push(c, end, delta) != EV_OK) {
		p->ob.oom = 1;
		return;
	}
	c->value += delta;
	sample(p, c, which, pr->rank, ts, c->value);
}

/* Every interval ended and every held sample written. */
void pf_counters_finish(ev_perfetto *p)
{
	for (size_t i = 0; i < p->procs.len; i++) {
		struct pf_proc *pr = (struct pf_proc *)p->procs.data + i;
		for (int k = 0; k < PF_NCOUNTERS; k++) {
			struct pf_counter *c = &pr->cnt[k];
			advance(p, c, k, pr->rank, INT64_MAX);
			if (c->have_pend) {
				/* Written by moving past it. */
				int64_t t = c->pend_ts;
				sample(p, c, k, pr->rank, t == INT64_MAX ? t - 1 : t + 1, c->value);
				c->have_pend = 0;
			}
		}
	}
}
