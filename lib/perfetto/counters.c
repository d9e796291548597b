/* SPDX-License-Identifier: MIT */
/*
 * counters.c - counter tracks over intervals, per rank on its GPU process:
 * bytes of the collectives and p2p calls running, bytes of the send
 * messages running, kernels running.  An interval adds its amount at its
 * start and takes it back at its end; the ends still to come wait in a
 * min-heap, so memory is what runs at one instant.  A sample is held back
 * until time moves on, so that one instant gives one sample (its final
 * value).
 *
 * HTA's counters (o.hta_counters) come from ev-stats queue and membw,
 * whose series are handed out through their sample hook as they are made:
 * the queue length of each stream and the bandwidth of each kind of copy,
 * with the same one-sample-per-instant rule.
 */
#include <math.h>
#include <stdio.h>
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

/* ---- HTA's counters ------------------------------------------------------ */

static const char *const hta_names[] = { "queue", "membw" };
static const char *const hta_tracks[] = { "queue length ", "memory bandwidth " };
static const char *const hta_keys[] = { "length", "GBps" };

static void hta_write(ev_perfetto *p, const struct pf_series *e)
{
	struct pf_buf *b = &p->ob;
	char track[64], num[32];
	snprintf(track, sizeof track, "%s%s", hta_tracks[e->what], e->name);
	/* JSON has no NaN: a bandwidth without bytes is 0 (HTA drops it).
	 * The fewest digits, 15 to 17, that read back as the value. */
	double v = isfinite(e->v) ? e->v : 0.0;
	for (int digits = 15; digits <= 17; digits++) {
		snprintf(num, sizeof num, "%.*g", digits, v);
		if (strtod(num, NULL) == v)
			break;
	}
	pf_event(p, "C", pf_pid(p, e->rank, 1), 0);
	pf_kv_str(b, "name", track);
	pf_puts(b, ",\"ts\":");
	pf_us(b, pf_rel_ts(p, e->ts));
	pf_puts(b, ",\"args\":{\"");
	pf_puts(b, hta_keys[e->what]);
	pf_puts(b, "\":");
	pf_puts(b, num);
	pf_puts(b, "}}");
}

/* ev_stats_sample_fn: a step of a series; the held value is written when
 * the step is at another instant. */
static void hta_sample(void *ctx, enum ev_stats_series what, uint32_t rank, uint32_t id, const char *name, int64_t ts,
                       double v)
{
	ev_perfetto *p = ctx;
	uint64_t key = ((uint64_t)rank << 32 | (uint64_t)id << 1 | (unsigned)what) + 1;
	uint64_t *ix = ev_map_get(&p->series_ix, key);
	struct pf_series *e;
	if (ix) {
		e = (struct pf_series *)p->series.data + (*ix - 1);
	} else {
		if (!pf_get_proc(p, rank, 1))
			return; /* ob.oom set */
		if (!(e = ev_vec_push(&p->series)) || ev_map_put(&p->series_ix, key, p->series.len) != EV_OK) {
			p->ob.oom = 1;
			return;
		}
		memset(e, 0, sizeof *e);
		e->rank = rank;
		e->id = id;
		e->what = (int)what;
		snprintf(e->name, sizeof e->name, "%s", name);
	}
	if (e->have && e->ts != ts)
		hta_write(p, e);
	e->have = 1;
	e->ts = ts;
	e->v = v;
}

int pf_hta_init(ev_perfetto *p)
{
	ev_vec_init(&p->series, sizeof(struct pf_series));
	ev_map_init(&p->series_ix);
	for (int i = 0; i < 2; i++) {
		if (!(p->o.hta_counters & (1u << i)))
			continue;
		struct ev_stats_opts so;
		memset(&so, 0, sizeof so);
		so.analysis = ev_stats_find(hta_names[i]);
		so.sample = hta_sample;
		so.sample_ctx = p;
		int rc = so.analysis ? ev_stats_new(&p->hta[i], &so, p->st, p->meta) : EV_ERR_ARG;
		if (rc != EV_OK)
			return rc;
	}
	return EV_OK;
}

int pf_hta_add(ev_perfetto *p, const struct ev_rec *r)
{
	for (int i = 0; i < 2; i++) {
		int rc = p->hta[i] ? ev_stats_add(p->hta[i], r) : EV_OK;
		if (rc != EV_OK)
			return rc;
	}
	return p->ob.oom ? EV_ERR_NOMEM : EV_OK;
}

/* The series' ends (the queue's held steps, the copies still running),
 * then every held value. */
int pf_hta_finish(ev_perfetto *p)
{
	for (int i = 0; i < 2; i++) {
		int rc = p->hta[i] ? ev_stats_finish(p->hta[i]) : EV_OK;
		if (rc != EV_OK)
			return rc;
	}
	for (size_t i = 0; i < p->series.len; i++) {
		struct pf_series *e = (struct pf_series *)p->series.data + i;
		if (e->have)
			hta_write(p, e);
		e->have = 0;
	}
	return p->ob.oom ? EV_ERR_NOMEM : EV_OK;
}

void ev_perfetto_say_notes(ev_perfetto *p, const struct ev_say *say)
{
	/* The analyses' own warnings: what their tables' notes say of
	 * quantiles and empty cells is not about a timeline. */
	char note[512];
	for (int i = 0; i < 2; i++) {
		const struct ev_stats_analysis *a = ev_stats_find(hta_names[i]);
		for (unsigned k = 0; p->hta[i] && a->warning && a->warning(p->hta[i], k, note, sizeof note); k++)
			ev_say(say, EV_SAY_WARN, "--counters=%s: %s", hta_names[i], note);
	}
	const struct ev_stats_analysis *a = ev_stats_find("critpath");
	for (unsigned k = 0; p->cp && a->warning && a->warning(p->cp, k, note, sizeof note); k++)
		ev_say(say, EV_SAY_WARN, "--critical-path: %s", note);
}

void pf_hta_free(ev_perfetto *p)
{
	for (int i = 0; i < 2; i++)
		ev_stats_free(p->hta[i]);
	ev_vec_free(&p->series);
	ev_map_free(&p->series_ix);
}
