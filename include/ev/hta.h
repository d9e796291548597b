/* SPDX-License-Identifier: MIT */
/*
 * ev/hta.h - HTA's temporal breakdown and communication/computation
 * overlap, reproduced in one streaming pass in constant memory.
 *
 * HTA (Holistic Trace Analysis) does not count every GPU event.  Before any
 * analysis it keeps a GPU event only when its launching runtime call is in
 * the trace and started before the last ProfilerStep began (unless the trace
 * has no CPU events at all, when it keeps every GPU event).  So events whose
 * launch is not in the trace, and everything launched during the last step,
 * are left out.  A stream cannot know which step is the last until it ends,
 * so this accumulator keeps, from the start of the latest step on, a
 * snapshot of the coverage before that start and a second coverage of what
 * was launched before it; when a later step starts, the snapshot moves on.
 * docs/ev-stats.md states where evkit's own default differs and why.
 */
#ifndef EV_HTA_H
#define EV_HTA_H

#include "ev/analysis.h"
#include "ev/stream.h"

struct ev_hta_result {
	double kernel_time;      /* last kept GPU event end - first start, ns */
	double idle_time;        /* kernel time not covered by any kept event */
	double compute_time;     /* union of COMPUTATION events */
	double non_compute_time; /* kernel time - compute - idle */
	double comm_time;        /* union of COMMUNICATION events */
	double comm_comp_overlap;/* |comm ∩ comp| */
	uint64_t kept, dropped_unlaunched, dropped_last_step;
	int no_cpu_events;       /* no runtime call seen: every GPU event kept, as HTA does */
	int no_steps;            /* no ProfilerStep: HTA keeps nothing; the result covers every launched event */
};

struct ev_hta {
	int round_us;            /* HTA's rounding: start up, end down to whole µs (set after init; default on) */
	int64_t base;            /* ns subtracted from every time (exact doubles) */
	int have_base;
	int have_step, any_cpu;
	int64_t step_start;      /* start of the latest ProfilerStep */
	struct ev_cover launched; /* GPU events with a launching call in the trace */
	struct ev_cover all;      /* every GPU event (for traces without CPU events) */
	struct ev_cover before;   /* `launched` as it stood at step_start, advanced to it */
	struct ev_cover after;    /* from step_start on: events launched before it */
	struct ev_map launch;     /* correlation id + 1 -> launch time (ns, biased) */
	int64_t newest_launch;
	uint64_t kept_before, kept_after_total, dropped_unlaunched, dropped_last;
	uint64_t launched_total;
};

/* HTA rounds every event inward to whole microseconds (start up, end
 * down) before it measures anything, so that ns-resolution events do not
 * overlap; round_us (on after init) does the same, off gives exact ns. */
void ev_hta_init(struct ev_hta *h);
/* A runtime/driver call with its correlation id (the launch of a GPU event). */
int ev_hta_launch(struct ev_hta *h, uint32_t correlation, int64_t ts) EV_RESULT_USED;
/* Any other CPU event (an op, an annotation): the trace has CPU events. */
void ev_hta_cpu_event(struct ev_hta *h);
/* The start of a ProfilerStep range. */
void ev_hta_step(struct ev_hta *h, int64_t ts);
/* A GPU event (kernel, memcpy, memset) in time order: kind is HTA's
 * (ev_hta_kind), correlation its launch's id (0: none). */
void ev_hta_gpu(struct ev_hta *h, int64_t ts, int64_t end, int kind, uint32_t correlation);
void ev_hta_finish(struct ev_hta *h, struct ev_hta_result *out);
void ev_hta_free(struct ev_hta *h);

#endif /* EV_HTA_H */
