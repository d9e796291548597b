/* SPDX-License-Identifier: MIT */
/*
 * test_hta.c - the streaming HTA breakdown against a brute-force one over
 * random traces: with two or more ProfilerSteps HTA keeps a GPU event only
 * when its launch is in the trace and started before the last step, with
 * fewer it keeps every GPU event; the brute force filters the whole event
 * list that way and measures unions on a fine grid.
 */
#include <stdlib.h>
#include <string.h>

#include "ev.h"
#include "ev/hta.h"
#include "unit.h"

enum { N = 300, SPAN = 4000 };

struct gpu { int64_t ts, end, launch; int kind, linked; uint32_t corr; };

static uint64_t seed = 88172645463325252ull;
static uint64_t rnd(void)
{
	seed ^= seed << 13;
	seed ^= seed >> 7;
	seed ^= seed << 17;
	return seed;
}

static int cmp_gpu(const void *a, const void *b)
{
	const struct gpu *x = a, *y = b;
	return (x->ts > y->ts) - (x->ts < y->ts);
}

/* Brute force on a 1-ns grid; filter: HTA's step filter applies. */
static void brute(const struct gpu *g, size_t n, int64_t last_step, int filter, struct ev_hta_result *r)
{
	static unsigned char cov[SPAN * 3];
	memset(cov, 0, sizeof cov);
	memset(r, 0, sizeof *r);
	int64_t first = -1, last = -1;
	for (size_t i = 0; i < n; i++) {
		if (filter && (!g[i].linked || g[i].launch >= last_step))
			continue;
		if (first < 0 || g[i].ts < first)
			first = g[i].ts;
		if (g[i].end > last)
			last = g[i].end;
		unsigned bit = g[i].kind == EV_HTA_COMPUTATION ? 1 : g[i].kind == EV_HTA_COMMUNICATION ? 2 : 4;
		for (int64_t t = g[i].ts; t < g[i].end; t++)
			cov[t] |= (unsigned char)bit;
	}
	double busy = 0;
	for (int t = 0; t < SPAN * 3; t++) {
		busy += cov[t] != 0;
		r->compute_time += (cov[t] & 1) != 0;
		r->comm_time += (cov[t] & 2) != 0;
		r->comm_comp_overlap += (cov[t] & 3) == 3;
	}
	r->kernel_time = first < 0 ? 0 : (double)(last - first);
	r->idle_time = r->kernel_time - busy;
	r->non_compute_time = r->kernel_time - r->compute_time - r->idle_time;
}

static void one_trace(int with_steps)
{
	static struct gpu g[N];
	/* Steps start between events too: nothing must end at a step start. */
	int64_t steps[4] = { 501, 1499, 2503, 3301 };
	int nsteps = with_steps ? 1 + (int)(rnd() % 4) : 0;
	for (int i = 0; i < N; i++) {
		g[i].launch = (int64_t)(rnd() % SPAN);
		g[i].ts = g[i].launch + (int64_t)(rnd() % 300);
		g[i].end = g[i].ts + 1 + (int64_t)(rnd() % 200);
		g[i].kind = (int)(rnd() % 3);
		g[i].linked = rnd() % 10 != 0;
		g[i].corr = (uint32_t)i + 1;
	}
	qsort(g, N, sizeof g[0], cmp_gpu);
	struct ev_hta h;
	ev_hta_init(&h);
	h.round_us = 0;
	/* Launches and steps are fed in time order with the GPU events, as a
	 * stream carries them: merge by time. */
	int si = 0;
	int64_t last_step = nsteps ? steps[nsteps - 1] : 0;
	for (int64_t t = 0; t < SPAN * 3; t++) {
		while (si < nsteps && steps[si] == t) {
			ev_hta_step(&h, steps[si], (uint64_t)si + 100);
			si++;
		}
		for (int i = 0; i < N; i++)
			if (g[i].launch == t && g[i].linked)
				CHECK(ev_hta_launch(&h, g[i].corr, t) == EV_OK);
		for (int i = 0; i < N; i++)
			if (g[i].ts == t)
				ev_hta_gpu(&h, g[i].ts, g[i].end, g[i].kind, g[i].corr);
	}
	struct ev_hta_result a, b;
	ev_hta_finish(&h, &a);
	ev_hta_free(&h);
	brute(g, N, last_step, nsteps >= 2, &b);
	CHECK(a.no_steps == (nsteps == 0) && a.one_step == (nsteps == 1));
	if (nsteps < 2)
		CHECK(a.kept == N); /* every event, launched or not */
	CHECK(a.kernel_time == b.kernel_time);
	CHECK(a.idle_time == b.idle_time);
	CHECK(a.compute_time == b.compute_time);
	CHECK(a.non_compute_time == b.non_compute_time);
	CHECK(a.comm_time == b.comm_time);
	CHECK(a.comm_comp_overlap == b.comm_comp_overlap);
	if (a.kernel_time != b.kernel_time || a.idle_time != b.idle_time || a.compute_time != b.compute_time)
		fprintf(stderr, "  steps %d: kernel %.0f/%.0f idle %.0f/%.0f compute %.0f/%.0f\n", nsteps, a.kernel_time,
		        b.kernel_time, a.idle_time, b.idle_time, a.compute_time, b.compute_time);
}

static void test_random_traces(void)
{
	for (int k = 0; k < 200; k++)
		one_trace(1);
	one_trace(0);
}

/* One step seen as several ranges (one per thread, or repeated): one
 * name is one step, and HTA keeps every GPU event, launched or not. */
static void test_one_step_name(void)
{
	struct ev_hta h;
	struct ev_hta_result r;
	ev_hta_init(&h);
	h.round_us = 0;
	ev_hta_step(&h, 0, 42);
	CHECK(ev_hta_launch(&h, 1, 10) == EV_OK);
	ev_hta_step(&h, 20, 42);
	ev_hta_gpu(&h, 100, 200, EV_HTA_COMPUTATION, 1);
	ev_hta_gpu(&h, 300, 400, EV_HTA_COMMUNICATION, 0); /* no launch in the trace */
	ev_hta_finish(&h, &r);
	ev_hta_free(&h);
	CHECK(r.one_step && !r.no_steps && r.kept == 2);
	CHECK(r.kernel_time == 300 && r.compute_time == 100 && r.comm_time == 100 && r.idle_time == 100);
	/* A second name is a second step: the last one's launches are dropped. */
	ev_hta_init(&h);
	h.round_us = 0;
	ev_hta_step(&h, 0, 42);
	CHECK(ev_hta_launch(&h, 1, 10) == EV_OK);
	ev_hta_step(&h, 20, 43);
	CHECK(ev_hta_launch(&h, 2, 30) == EV_OK);
	ev_hta_gpu(&h, 100, 200, EV_HTA_COMPUTATION, 1);
	ev_hta_gpu(&h, 300, 400, EV_HTA_COMPUTATION, 2);
	ev_hta_finish(&h, &r);
	ev_hta_free(&h);
	CHECK(!r.one_step && r.kept == 1 && r.dropped_last_step == 1 && r.kernel_time == 100);
}

static void test_no_cpu_events(void)
{
	struct ev_hta h;
	struct ev_hta_result r;
	ev_hta_init(&h);
	ev_hta_gpu(&h, 100000, 200000, EV_HTA_COMPUTATION, 0);
	ev_hta_gpu(&h, 150000, 300000, EV_HTA_COMMUNICATION, 0);
	ev_hta_gpu(&h, 400000, 450000, EV_HTA_MEMORY, 0);
	ev_hta_finish(&h, &r);
	ev_hta_free(&h);
	CHECK(r.no_cpu_events);
	CHECK(r.kernel_time == 350000 && r.idle_time == 100000 && r.compute_time == 100000);
	CHECK(r.comm_time == 150000 && r.comm_comp_overlap == 50000);
}

static void test_rounding(void)
{
	/* ns events shrink inward to whole µs, as HTA's parser does. */
	struct ev_hta h;
	struct ev_hta_result r;
	ev_hta_init(&h);
	ev_hta_gpu(&h, -2500, -900, EV_HTA_MEMORY, 0);      /* -> [-2000, -1000) */
	ev_hta_gpu(&h, 1500, 4700, EV_HTA_COMPUTATION, 0);  /* -> [2000, 4000) */
	ev_hta_gpu(&h, 4900, 5300, EV_HTA_COMPUTATION, 0);  /* -> [5000, 5000) */
	ev_hta_finish(&h, &r);
	ev_hta_free(&h);
	CHECK(r.compute_time == 2000);
	CHECK(r.kernel_time == 7000 && r.idle_time == 4000);
}

static void test_launch_window(void)
{
	/* Runtime calls without GPU events do not grow memory without bound. */
	struct ev_hta h;
	ev_hta_init(&h);
	for (uint32_t i = 1; i <= 3000000; i++)
		if (ev_hta_launch(&h, i, (int64_t)i * 1000000) != EV_OK)
			break;
	CHECK(h.launch.len < (1u << 21));
	ev_hta_free(&h);

	/* Launches every 100 us, each kernel 20 us later: the map holds about
	 * twice the launches of a second (the window's least), not the
	 * million of the trace, and every kernel still finds its launch. */
	struct ev_hta_result r;
	ev_hta_init(&h);
	ev_hta_cpu_event(&h);
	ev_hta_step(&h, 0, 1); /* two steps: HTA's filter applies */
	ev_hta_step(&h, 1, 2);
	size_t most = 0;
	for (uint32_t i = 1; i <= 1000000; i++) {
		int64_t t = (int64_t)i * 100000;
		CHECK(ev_hta_launch(&h, i, t) == EV_OK);
		ev_hta_gpu(&h, t + 20000, t + 50000, EV_HTA_COMPUTATION, i);
		most = h.launch.len > most ? h.launch.len : most;
	}
	CHECK(most <= 4 * 10000 + (1u << 14));
	/* A kernel of a launch let go is counted as such, not as unlaunched;
	 * one of a launch the trace never had is unlaunched. */
	ev_hta_gpu(&h, (int64_t)1000001 * 100000, (int64_t)1000001 * 100000 + 10, EV_HTA_COMPUTATION, 5);
	ev_hta_gpu(&h, (int64_t)1000001 * 100000, (int64_t)1000001 * 100000 + 10, EV_HTA_COMPUTATION, 2000000);
	ev_hta_finish(&h, &r);
	CHECK(r.dropped_pruned == 1 && r.dropped_unlaunched == 1);
	ev_hta_free(&h);
}

static void test_extreme_times(void)
{
	/* Format-legal times at the ends of int64 (a fuzz finding: the
	 * differences overflowed); with and without the µs rounding. */
	for (int round = 0; round < 2; round++) {
		struct ev_hta h;
		struct ev_hta_result r;
		ev_hta_init(&h);
		h.round_us = round;
		ev_hta_gpu(&h, -259801405812283944LL, INT64_MAX, EV_HTA_COMPUTATION, 0);
		ev_hta_gpu(&h, INT64_MIN, INT64_MIN + 1000, EV_HTA_COMMUNICATION, 0);
		ev_hta_gpu(&h, INT64_MAX - 10, INT64_MAX, EV_HTA_MEMORY, 0);
		ev_hta_finish(&h, &r);
		ev_hta_free(&h);
		CHECK(r.kernel_time > 0);
	}
}

int main(void)
{
	RUN(test_extreme_times);
	RUN(test_random_traces);
	RUN(test_no_cpu_events);
	RUN(test_one_step_name);
	RUN(test_launch_window);
	RUN(test_rounding);
	return unit_report("test_hta");
}
