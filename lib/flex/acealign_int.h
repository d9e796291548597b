/* SPDX-License-Identifier: MIT */
/*
 * acealign_int.h - acelyzer's rank alignment (mp_sync_tight_v1), the
 * converter's --align=acelyzer (lib/flex/acealign.c).  Private to lib/flex.
 */
#ifndef EV_FLEX_ACEALIGN_INT_H
#define EV_FLEX_ACEALIGN_INT_H

#include "ev/flex.h"
#include "ev/stream.h"

struct fa_rank {
	uint32_t rank;
	int64_t anchor;   /* host placement minus device time of the rank's first device event */
	int64_t shift;    /* the solved device clock shift (acelyzer's dts_shifts) */
	uint32_t ngroups; /* CollGroups seen, for their order */
};
/* Per (rank, CollGroup): the latest TS2 and TS5 on the device clock, and
 * the events that have them (their end in host time, their input). */
struct fa_group {
	uint32_t rank, order;
	uint64_t group;
	int reduce_name;  /* an event named ...AllReduce_all_reduce... */
	int64_t max2, max5, end2, end5;
	uint16_t src2, src5;
};
struct fa {
	struct ev_map rank_ix, group_ix;
	struct ev_vec ranks, groups;
	/* fa_solve's answer */
	int done, tree;
	const char *why;          /* why not done, with why_rank / why_group */
	uint32_t why_rank, ref_rank;
	uint64_t why_group, ref_group;
	uint16_t ref_src;
	int64_t ref_offset;       /* host time minus aligned device time */
};

/* Sums and differences of times taken from the input wrap instead of
 * overflowing (no undefined behaviour on hostile counters); on any trace
 * whose times fit they are exact. */
static inline int64_t fa_add(int64_t a, int64_t b) { return (int64_t)((uint64_t)a + (uint64_t)b); }
static inline int64_t fa_sub(int64_t a, int64_t b) { return (int64_t)((uint64_t)a - (uint64_t)b); }

void fa_init(struct fa *a);
void fa_free(struct fa *a);
/* A device event of rank with counters cy (TS1..TS5, corrected within the
 * event) placed at host_ts (its instruction interval's start, as the
 * converter places it): dev = its counters on the rank's device clock in
 * ns, unwrapped across 2^32 by the host time. */
int fa_place(struct fa *a, uint32_t rank, const uint64_t cy[5], int start_ix, int64_t host_ts, uint64_t soc_khz,
             int64_t dev[5]);
/* The same event, of CollGroup group: its device TS2 and TS5 and its
 * (tightened) end in host time. */
int fa_note_group(struct fa *a, uint32_t rank, uint16_t src, uint64_t group, int reduce_name, const int64_t dev[5],
                  int64_t host_end);
/* After every event: acelyzer's shifts for those of ranks[0..n) (ascending)
 * that have device events; done set, or why not.  EV_OK or EV_ERR_NOMEM. */
int fa_solve(struct fa *a, const uint32_t *ranks, size_t n, const ev_strtab *st);
/* Once solved: what to subtract from (device time + anchor) of rank's
 * events to have acelyzer's placement; 0 when not solved or unknown rank. */
int64_t fa_offset(const struct fa *a, uint32_t rank);
const struct fa_rank *fa_rank_of(const struct fa *a, uint32_t rank);

#endif /* EV_FLEX_ACEALIGN_INT_H */
