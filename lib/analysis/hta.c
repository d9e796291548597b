/* SPDX-License-Identifier: MIT */
/*
 * hta.c - HTA's temporal breakdown and comm/comp overlap in one pass (see
 * ev/hta.h for what HTA keeps and why this needs two coverages).
 *
 * Cover classes: 0 computation, 1 communication, 2 memory and other.  A GPU
 * event runs after its launch, so everything launched during the latest
 * step [step_start, ...) executes at or after step_start: the coverage of
 * the events HTA keeps, were this step the last, is `before` (everything
 * launched, up to step_start) plus `after` (from step_start on, only what
 * was launched before step_start, seeded with the parts of earlier events
 * that run past step_start).
 */
#include <math.h>
#include <string.h>

#include "ev/analysis.h"
#include "ev/hta.h"
#include "ev/stream.h"

enum { C_COMP = 0, C_COMM = 1, C_OTHER = 2 };
/* Launches wait in a map for their GPU events.  A launch older than the
 * newest by twice the longest launch-to-start delay seen (at least a
 * second, at most a minute) is let go: its event would start later than
 * any has.  The map is pruned when it has doubled since the last pruning,
 * so it holds about twice the launches of that window, whatever the
 * trace's length.  Correlation ids grow, so an event that finds no launch
 * but has an id at or below the highest let go is counted as pruned, not
 * as launched outside the trace. */
#define LAUNCH_WINDOW_MIN_NS 1000000000LL
#define LAUNCH_WINDOW_MAX_NS 60000000000LL
#define LAUNCH_PRUNE_MIN (1u << 14)

void ev_hta_init(struct ev_hta *h)
{
	memset(h, 0, sizeof *h);
	ev_cover_init(&h->launched);
	ev_cover_init(&h->all);
	ev_cover_init(&h->before);
	ev_cover_init(&h->after);
	ev_map_init(&h->launch);
	h->prune_at = LAUNCH_PRUNE_MIN;
	h->round_us = 1;
}

static int64_t floor_us(int64_t t)
{
	int64_t r = t % 1000;
	return r < 0 ? t - r - 1000 : t - r;
}

static int64_t ceil_us(int64_t t)
{
	int64_t f = floor_us(t);
	return f == t ? t : f + 1000;
}

static double rel(struct ev_hta *h, int64_t t)
{
	if (!h->have_base) {
		h->base = t;
		h->have_base = 1;
	}
	/* In long double: format-legal times far apart overflow int64. */
	return (double)((long double)t - (long double)h->base);
}

static unsigned cls(int kind)
{
	return kind == EV_HTA_COMPUTATION ? C_COMP : kind == EV_HTA_COMMUNICATION ? C_COMM : C_OTHER;
}

/* Let go of the launches too old to match (above). */
static int prune(struct ev_hta *h)
{
	int64_t window = 2 * h->max_delay;
	window = window < LAUNCH_WINDOW_MIN_NS ? LAUNCH_WINDOW_MIN_NS
	         : window > LAUNCH_WINDOW_MAX_NS ? LAUNCH_WINDOW_MAX_NS : window;
	struct ev_map keep;
	ev_map_init(&keep);
	for (size_t i = 0; i < h->launch.cap; i++) {
		uint64_t k = h->launch.keys[i];
		if (!k)
			continue;
		if ((int64_t)h->launch.vals[i] < h->newest_launch - window) {
			if (k > h->pruned_corr)
				h->pruned_corr = k;
			continue;
		}
		if (ev_map_put(&keep, k, h->launch.vals[i]) != EV_OK) {
			ev_map_free(&keep);
			return EV_ERR_NOMEM;
		}
	}
	ev_map_free(&h->launch);
	h->launch = keep;
	h->prune_at = 2 * keep.len > LAUNCH_PRUNE_MIN ? 2 * keep.len : LAUNCH_PRUNE_MIN;
	return EV_OK;
}

int ev_hta_launch(struct ev_hta *h, uint32_t correlation, int64_t ts)
{
	h->any_cpu = 1;
	if (correlation == 0)
		return EV_OK;
	if (ts > h->newest_launch || h->launch.len == 0)
		h->newest_launch = ts;
	if (h->launch.len >= h->prune_at) {
		int rc = prune(h);
		if (rc != EV_OK)
			return rc;
	}
	return ev_map_put(&h->launch, (uint64_t)correlation + 1, (uint64_t)ts);
}

void ev_hta_cpu_event(struct ev_hta *h)
{
	h->any_cpu = 1;
}

void ev_hta_step(struct ev_hta *h, int64_t ts, uint64_t name)
{
	if (h->step_names == 0) {
		h->step_name = name;
		h->step_names = 1;
	} else if (name != h->step_name) {
		h->step_names = 2;
	}
	double t = rel(h, ts);
	/* What was launched so far is kept if this is not the last step. */
	h->before = h->launched;
	/* Account up to t only; the sentinel must not move the span's ends. */
	double first = h->before.first, last = h->before.last;
	int started = h->before.started;
	ev_cover_add(&h->before, EV_COVER_MAX, t, t);
	h->before.started = started;
	h->before.first = first;
	h->before.last = last;
	ev_cover_init(&h->after);
	for (unsigned c = 0; c < 3; c++)
		if (h->launched.started && h->launched.end[c] > t)
			ev_cover_add(&h->after, c, t, h->launched.end[c]);
	h->kept_after_total = 0;
	h->step_start = ts;
	h->have_step = 1;
}

void ev_hta_gpu(struct ev_hta *h, int64_t ts, int64_t end, int kind, uint32_t correlation)
{
	if (h->round_us) {
		/* As HTA computes it: the JSON's µs as doubles (at 1.7e15 µs a
		 * double steps by 0.25 µs), end = ts + dur in doubles, then ceil
		 * and floor.  The decimal µs value is N/1000 for N ns; long double
		 * division gives its nearest double. */
		int64_t n;
		if (!__builtin_sub_overflow(ts, h->json_base_ns, &n) && end >= ts) {
			double a = (double)((long double)n / 1000.0L);
			double d = (double)(((long double)end - (long double)ts) / 1000.0L);
			double c = ceil(a), f = floor(a + d);
			if (fabs(c) < 9e15 && fabs(f) < 9e15) {
				ts = (int64_t)c * 1000 + h->json_base_ns;
				end = (int64_t)f * 1000 + h->json_base_ns;
			}
		} else {
			ts = ceil_us(ts);
			end = floor_us(end);
		}
		if (end < ts)
			end = ts;
	}
	double s = rel(h, ts), e = rel(h, end);
	unsigned c = cls(kind);
	ev_cover_add(&h->all, c, s, e);
	h->all_total++;
	uint64_t *launch = correlation ? ev_map_get(&h->launch, (uint64_t)correlation + 1) : NULL;
	if (!launch) {
		if (correlation && (uint64_t)correlation + 1 <= h->pruned_corr)
			h->dropped_pruned++;
		else
			h->dropped_unlaunched++;
		return;
	}
	int64_t lt = (int64_t)*launch;
	int64_t delay;
	if (!__builtin_sub_overflow(ts, lt, &delay) && delay > h->max_delay)
		h->max_delay = delay;
	h->launched_total++;
	ev_cover_add(&h->launched, c, s, e);
	if (h->have_step && lt < h->step_start) {
		ev_cover_add(&h->after, c, s, e);
		h->kept_after_total++;
	} else if (h->have_step) {
		h->dropped_last++;
	}
}

static void fill(struct ev_hta_result *out, const struct ev_cover *u, double first, double last)
{
	const unsigned all = 1u << C_COMP | 1u << C_COMM | 1u << C_OTHER;
	double busy = 0;
	for (unsigned m = 1; m < (1u << EV_COVER_MAX); m++)
		if (m & all)
			busy += u->time[m];
	out->kernel_time = last > first ? last - first : 0;
	out->idle_time = out->kernel_time - busy;
	out->compute_time = ev_cover_measure(u, 1u << C_COMP, 0);
	out->comm_time = ev_cover_measure(u, 1u << C_COMM, 0);
	out->comm_comp_overlap = ev_cover_measure(u, 1u << C_COMP | 1u << C_COMM, 0);
	out->non_compute_time = out->kernel_time - out->compute_time - out->idle_time;
}

void ev_hta_finish(struct ev_hta *h, struct ev_hta_result *out)
{
	memset(out, 0, sizeof *out);
	out->dropped_unlaunched = h->dropped_unlaunched;
	out->dropped_pruned = h->dropped_pruned;
	if (!h->any_cpu || h->step_names < 2) {
		/* No CPU events, or fewer than two ProfilerSteps: HTA skips its
		 * filter and keeps every GPU event, launched in the trace or not. */
		ev_cover_finish(&h->all);
		fill(out, &h->all, h->all.first, h->all.last);
		out->no_cpu_events = !h->any_cpu;
		out->no_steps = h->any_cpu && h->step_names == 0;
		out->one_step = h->any_cpu && h->step_names == 1;
		out->dropped_unlaunched = out->dropped_pruned = 0;
		out->kept = h->all_total;
		return;
	}
	/* Coverage before the last step's start plus what ran after it of the
	 * events launched before it: the time table of two disjoint spans adds. */
	struct ev_cover u = h->before;
	ev_cover_finish(&h->after);
	for (unsigned m = 0; m < (1u << EV_COVER_MAX); m++)
		u.time[m] += h->after.time[m];
	double first = h->before.started ? h->before.first : h->after.first;
	double last = h->before.started ? h->before.last : h->after.last;
	if (h->after.started && h->after.last > last)
		last = h->after.last;
	/* Nothing launched before the last step: HTA keeps nothing. */
	if (!h->before.started && !h->after.started)
		first = last = 0;
	fill(out, &u, first, last);
	out->kept = h->launched_total - h->dropped_last;
	out->dropped_last_step = h->dropped_last;
}

void ev_hta_free(struct ev_hta *h)
{
	ev_map_free(&h->launch);
}
