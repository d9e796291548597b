/* SPDX-License-Identifier: MIT */
/*
 * freq_int.h - the converter's clock detection (lib/flex/freq.c).  Private
 * to lib/flex; the API is ev_flex_conv_freq in include/ev/flex.h.
 */
#ifndef EV_FLEX_FREQ_INT_H
#define EV_FLEX_FREQ_INT_H

#include "ev/flex.h"

struct fq_stat { double min, max, mean; uint64_t n; };
struct fq_rank {
	uint16_t src;
	uint32_t rank;
	struct fq_stat dur, gap; /* MHz by kernel duration, by kernel interval */
	uint64_t prev_c3;        /* the previous kernel's TS3 and host start */
	int64_t prev_ts;
	int have_prev;
	uint64_t zero_gap, no_dur;
};
struct fq { struct ev_map ix; struct ev_vec v; };

void fq_init(struct fq *q);
void fq_free(struct fq *q);
/* One 'Cmpt Exec' kernel of input src on rank: host start and duration
 * (ns), its TS3 and TS4 (overflow corrected). */
int fq_note(struct fq *q, uint16_t src, uint32_t rank, int64_t host_ts, uint64_t host_dur, uint64_t c3, uint64_t c4);
/* The estimates of input src into f; 1 if it had a kernel to go by. */
int fq_get(const struct fq *q, uint16_t src, struct ev_flex_freq *f);

#endif /* EV_FLEX_FREQ_INT_H */
