/* SPDX-License-Identifier: MIT */
/*
 * counters_int.h - the converter's counter tracks (lib/flex/counters.c):
 * ConcurrentPreps and Power (mW).  Private to lib/flex.
 */
#ifndef EV_FLEX_COUNTERS_INT_H
#define EV_FLEX_COUNTERS_INT_H

#include "ev/flex.h"

struct fc_rank {
	uint32_t rank;
	uint16_t src;
	int64_t *ends;        /* end times of the Preps running, ascending */
	size_t nends, cap;
	int64_t pend_t;       /* the sample not yet written (its time may recur) */
	uint64_t pend_v;
	int have_pend;
	int have_prev;        /* the previous power reading */
	int64_t prev_ts;
	uint64_t prev_p, prev_c4;
	uint16_t prev_src;
};
struct fc {
	struct ev_map ix;     /* rank + 1 -> index + 1 */
	struct ev_vec v;      /* struct fc_rank */
	uint64_t prep_name, power_name; /* string ids of the series */
	uint64_t n_prep, n_power, n_power_bad;
};

void fc_init(struct fc *f);
void fc_free(struct fc *f);
/* A Cmpt Prep record, in time order per rank: its samples to out. */
int fc_prep(struct fc *f, ev_sorter *out, const struct ev_rec *p);
/* A power reading (bytes = args.Power, ts = its TS4 time), in time order
 * per rank, with its TS4 cycles: the sample of the reading before it. */
int fc_power(struct fc *f, ev_sorter *out, const struct ev_rec *p, uint64_t c4, uint64_t soc_khz);
/* The Prep samples still pending. */
int fc_finish(struct fc *f, ev_sorter *out);

#endif /* EV_FLEX_COUNTERS_INT_H */
