/* SPDX-License-Identifier: MIT */
/*
 * ev/hta.h - HTA's temporal breakdown and communication/computation
 * overlap, reproduced in one streaming pass in constant memory.
 *
 * HTA (Holistic Trace Analysis) does not count every GPU event.  Before any
 * analysis it keeps a GPU event only when its launching runtime call is in
 * the trace and started before the last ProfilerStep began.  It filters so
 * only when the trace has two or more ProfilerSteps and CPU events: with
 * one step, none, or no CPU events it keeps every GPU event ("All trace
 * events will be preserved", HTA since January 2026).  So events whose
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
	uint64_t dropped_pruned; /* GPU events whose launch was let go as too old to match */
	int no_cpu_events;       /* no runtime call seen: every GPU event kept, as HTA does */
	int no_steps;            /* CPU events but no ProfilerStep: every GPU event kept, as HTA does */
	int one_step;            /* one ProfilerStep: every GPU event kept, as HTA does */
};

struct ev_hta {
	int round_us;            /* HTA's arithmetic (below; set after init; default on) */
	int64_t json_base_ns;    /* the trace's baseTimeNanoseconds (#src base_ns=), 0 none */
	int64_t base;            /* ns subtracted from every time (exact doubles) */
	int have_base;
	int have_step, any_cpu;
	int64_t step_start;      /* start of the latest ProfilerStep */
	uint64_t step_name;      /* the first ProfilerStep's name (string id) */
	unsigned step_names;     /* distinct ProfilerStep names: 0, 1, 2 = two or more */
	struct ev_cover launched; /* GPU events with a launching call in the trace */
	struct ev_cover all;      /* every GPU event (for traces without CPU events) */
	struct ev_cover before;   /* `launched` as it stood at step_start, advanced to it */
	struct ev_cover after;    /* from step_start on: events launched before it */
	struct ev_map launch;     /* correlation id + 1 -> launch time (ns, biased) */
	int64_t newest_launch;
	int64_t max_delay;        /* longest launch-to-start seen, ns */
	size_t prune_at;          /* launch map size that starts the next pruning */
	uint64_t pruned_corr;     /* highest correlation id let go + 1, 0 none */
	uint64_t dropped_pruned;
	uint64_t kept_before, kept_after_total, dropped_unlaunched, dropped_last;
	uint64_t launched_total, all_total;
};

/* HTA's arithmetic: ts and dur are the JSON's microseconds as doubles
 * (relative to baseTimeNanoseconds), end = ts + dur in doubles, and every
 * event is rounded inward to whole microseconds (start up, end down) before
 * anything is measured, so that ns-resolution events do not overlap.
 * round_us (on after init) does the same; off gives exact ns. */
void ev_hta_init(struct ev_hta *h);
/* A runtime/driver call with its correlation id (the launch of a GPU event). */
int ev_hta_launch(struct ev_hta *h, uint32_t correlation, int64_t ts) EV_RESULT_USED;
/* Any other CPU event (an op, an annotation): the trace has CPU events. */
void ev_hta_cpu_event(struct ev_hta *h);
/* The start of a ProfilerStep range; name tells steps apart (HTA counts
 * distinct ProfilerStep names: a step's ranges on several threads are one
 * step).  HTA counts the names of every rank it loads; the ranks of a run
 * step together, so each rank's own names are counted here. */
void ev_hta_step(struct ev_hta *h, int64_t ts, uint64_t name);
/* A GPU event (kernel, memcpy, memset) in time order: kind is HTA's
 * (ev_hta_kind), correlation its launch's id (0: none). */
void ev_hta_gpu(struct ev_hta *h, int64_t ts, int64_t end, int kind, uint32_t correlation);
void ev_hta_finish(struct ev_hta *h, struct ev_hta_result *out);
void ev_hta_free(struct ev_hta *h);

#endif /* EV_HTA_H */
