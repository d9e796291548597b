/* SPDX-License-Identifier: MIT */
/*
 * iterdet_int.h - acelyzer's iteration detection (iteration_detect.py) on
 * one rank's kernel sequence: the kernels' names in start order, until the
 * sequence ends in the same word twice (after a short prefix), then each
 * later repetition of that word is one iteration.  Private to lib/flex.
 */
#ifndef EV_FLEX_ITERDET_INT_H
#define EV_FLEX_ITERDET_INT_H

#include <stddef.h>
#include <stdint.h>

/* acelyzer's min_run_len: no word is looked for in fewer than 2 x 5 kernels. */
enum { FS_ITER_MIN_RUN = 5 };

struct fs_iterdet {
	size_t window;        /* kernels kept while looking for the word */
	int state;            /* 0 looking, 1 found, 2 gave up (window full) */
	int restarted;        /* the iteration being collected began after a skip */
	uint64_t *name;       /* looking: every kernel; found: the collected kernels */
	int64_t *ts;
	size_t len, cap;
	uint64_t *ref;        /* the iteration's word, rlen kernels */
	size_t rlen;
	int64_t prev;         /* start of the last iteration */
	int64_t sum;          /* ns over the counted intervals */
	uint64_t iterations;  /* intervals counted */
	uint64_t skips;       /* times the sequence broke and was picked up again */
};

void fs_iterdet_init(struct fs_iterdet *d, size_t window);
/* The next kernel of the rank: its name (any id, equal names equal ids)
 * and start.  EV_OK or EV_ERR_NOMEM. */
int fs_iterdet_add(struct fs_iterdet *d, uint64_t name, int64_t ts);
/* Mean interval in ns (0 with no iteration), as acelyzer's avg_time. */
double fs_iterdet_mean(const struct fs_iterdet *d);
void fs_iterdet_free(struct fs_iterdet *d);

#endif /* EV_FLEX_ITERDET_INT_H */
