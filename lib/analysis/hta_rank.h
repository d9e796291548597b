/* SPDX-License-Identifier: MIT */
/*
 * hta_rank.h - what HTA's per-rank analyses (ev-stats idle, launch, queue,
 * membw) share: HTA's view of time, its launches and its last-step filter,
 * per (source group, rank).  Private to lib/analysis.
 *
 * Time.  HTA reads ts and dur as microsecond doubles and, in a trace with
 * fractional times, rounds every event inward (start up, end down, dur =
 * end - start, which can be -1 for a sub-microsecond event); it then
 * compares and subtracts these whole microseconds.  hta_us() does the same.
 *
 * Launches.  A GPU event's launching call is the runtime call with its
 * correlation id; calls wait in a window of the last HTA_CALL_WINDOW calls
 * of their rank (a call whose GPU event has not come by then has none).
 *
 * The last-step filter.  With two or more distinct ProfilerStep names HTA
 * keeps only the CPU events that start before the last step starts and the
 * GPU events those launched; otherwise it keeps everything.  Which step is
 * the last is known only at the end, so an analysis keeps two states: state
 * 0 is "no step will follow" and state 1 "the latest step is the last".
 * Before the second step name, state 0 takes every GPU event and state 1
 * those with a launch; at each later step start state 1 becomes state 0
 * (hta_rank_cpu says when), and from then on state 1 takes only what was
 * launched before that start.  The answer is state 1 when the filter
 * applies (hta_rank_filtered), else state 0.
 *
 * Without copies: what the two states count is kept as three parts, [0]
 * what both hold (everything up to the latest step start), [1] what state
 * 0 added since and [2] what state 1 added since; at a step start [1] moves
 * into [0] and [2] is dropped, so each event is moved once.  Only the
 * analyses' cursors (a stream's last end, a queue's length) are per state
 * and copied.
 *
 * With a sample hook (ev_stats_opts.sample) the series go to a timeline,
 * which shows every event: the filter is off, everything goes to state 0
 * and no step forks.
 */
#ifndef EV_HTA_RANK_H
#define EV_HTA_RANK_H

#include "ev/stats.h"

#define HTA_CALL_WINDOW 65536u

struct hta_call {
	uint32_t corr;
	uint32_t step;        /* step starts seen before the call */
	int64_t ts_us, dur_us;/* HTA's microseconds */
	uint64_t name;
	unsigned kind;        /* enum hta_launch_kind of its name */
};

/* What a call's name is to HTA: a kernel launch, a memory launch
 * (cudaMemcpyAsync, cudaMemsetAsync), a launch only its queue length counts
 * (cuLaunchKernel, hipLaunchKernel, ...), or nothing HTA counts. */
enum hta_launch_kind { HTA_CALL_OTHER = 0, HTA_CALL_KERNEL, HTA_CALL_MEMORY, HTA_CALL_QUEUE_ONLY };

struct hta_rank {
	uint32_t sg, rank;
	int64_t json_base_ns;
	int any_cpu;
	int keep_all;         /* a sample hook: no last-step filter (state 0 only) */
	unsigned step_names;  /* distinct ProfilerStep names: 0, 1, 2 = two or more */
	uint64_t step_name;
	uint32_t steps;       /* step starts seen */
	int64_t step_us;      /* the latest step's start (filtered mode) */
	struct hta_call *ring;
	uint64_t head;        /* calls put so far */
	struct ev_map idx;    /* corr + 1 -> head at put + 1 */
};

/* HTA's whole microseconds of [ts, end) (ns of the stream, json_base_ns
 * the trace's baseTimeNanoseconds). */
void hta_us(int64_t json_base_ns, int64_t ts, int64_t end, int64_t *ts_us, int64_t *end_us);
/* The kind of a runtime call's name. */
unsigned hta_launch_kind(const char *name);

/* The hta_rank of a record's (source group, rank), created as needed in
 * ranks (struct hta_rank of elem bytes at the start of a larger struct);
 * *fresh says it was new.  NULL when out of memory. */
void *hta_rank_of(ev_stats *s, struct ev_vec *ranks, struct ev_map *idx, const struct ev_rec *r, int *fresh);
void hta_rank_free(struct hta_rank *h);

enum hta_step_action { HTA_STEP_NONE, HTA_STEP_FORK, HTA_STEP_SWITCH };
/* A CPU-side record (api, range, mark): remembers calls and steps.  Returns
 * HTA_STEP_FORK when state 1 must now become a copy of state 0,
 * HTA_STEP_SWITCH (the second step name: the filter applies from now on)
 * when state 0 must become a copy of state 1, else HTA_STEP_NONE or an
 * error status (> 0 is never returned for errors: they are EV_ERR_*,
 * negative); *call is the call remembered (NULL for others; call may be
 * NULL). */
int hta_rank_cpu(ev_stats *s, struct hta_rank *h, const struct ev_rec *r, const struct hta_call **call);
/* The launching call of a GPU event (NULL: not in the window). */
const struct hta_call *hta_rank_call(const struct hta_rank *h, uint32_t corr);
/* Which states a GPU event with launching call c (NULL none) goes to:
 * bit 0 state 0, bit 1 state 1. */
unsigned hta_rank_route(const struct hta_rank *h, const struct hta_call *c);
/* The same for a GPU event whose call started at call_us. */
unsigned hta_rank_route_ts(const struct hta_rank *h, int64_t call_us);
/* Whether HTA's last-step filter applies: the answer is state 1. */
int hta_rank_filtered(const struct hta_rank *h);

/* The three parts of a distribution (above): at HTA_STEP_FORK, at
 * HTA_STEP_SWITCH, and at the end (the answer in d[0]). */
int hta_dist3_fork(struct ev_dist *d, struct ev_dist_pool *pool) EV_RESULT_USED;
int hta_dist3_switch(struct ev_dist *d, struct ev_dist_pool *pool) EV_RESULT_USED;
int hta_dist3_final(struct ev_dist *d, int filtered, struct ev_dist_pool *pool) EV_RESULT_USED;

#endif /* EV_HTA_RANK_H */
