/* SPDX-License-Identifier: MIT */
/*
 * stats_int.h - what lib/flex/stats*.c share: the ev_flex_stats object,
 * its accumulators and each table's hooks.  Private to lib/flex; the API
 * is include/ev/flex.h.
 */
#ifndef EV_FLEX_STATS_INT_H
#define EV_FLEX_STATS_INT_H

#include "ev/flex.h"
#include "ev/stats.h"
#include "ev/stream.h"
#include "ev/table.h"
#include "flex/iterdet_int.h"

/* Per rank: every table needs its rank list; stats and active its times. */
struct fs_rank {
	uint32_t rank;
	int have_k, have_c;    /* a 'Cmpt Exec' kernel; a coll record */
	int64_t kfirst, klast; /* span of the 'Cmpt Exec' kernels */
	int64_t cfirst;        /* start of the first coll record */
	unsigned ph_first, ph_cur; /* categories: phase + 1 of its first and latest table kernel, 0 none */
	double ktime, comm;    /* ns in kernels and in collective spans */
};

/* Per (rank, normalised kernel name): summary. */
struct fs_kernel {
	uint32_t rank;
	uint64_t name;   /* string id of the normalised name */
	uint64_t order;  /* first seen: acelyzer's order among equal totals */
	uint64_t sum_ns; /* exact, so that the mean rounds as acelyzer's exact mean */
	struct ev_dist d;
};

/* Per (rank, normalised kernel name): ts_analysis, the four stage gaps. */
struct fs_ts {
	uint32_t rank;
	uint64_t name;      /* string id of the normalised name */
	uint64_t order;     /* first seen: acelyzer's order among equal totals */
	uint64_t sum_ns;    /* kernel time: the row order */
	uint64_t sum[4];    /* cycles, exact: the means */
	struct ev_dist d[4];
};

/* categories: 'other' kernels of a rank before any kernel of the logs,
 * whose phase is not known yet. */
enum { FS_PHASE_PENDING = EV_FLEX_NPHASES };

/* Per (rank, phase, category) or (rank, class): categories, classes. */
struct fs_group {
	uint32_t rank;
	unsigned cat;    /* category index or enum ev_flex_class */
	unsigned phase;  /* categories: enum ev_flex_phase, or FS_PHASE_PENDING */
	double time, ideal; /* us */
	uint64_t calls;
};

struct ev_flex_stats {
	struct ev_flex_stats_opts o;
	ev_strtab *st;
	ev_table *t;
	struct ev_flex_stats_counts n;
	struct ev_map rix; struct ev_vec rs;  /* rank + 1 -> struct fs_rank */
	struct ev_map kix; struct ev_vec ks;  /* fs_key(rank, name) -> struct fs_kernel */
	struct ev_map gix; struct ev_vec gs;  /* fs_key(rank, cat + 1) -> struct fs_group */
	struct ev_dist_pool pool;             /* summary */
	char *nbuf; size_t ncap;              /* summary: a normalised name */
	const char **cats; size_t ncats;      /* categories: 0 StcdpHbm, 1 other, then the logs' */
	unsigned *kcat;                       /* categories: category of each compiler kernel */
	unsigned ph_none;                     /* categories: phase of a rank no table kernel ran on */
	struct ev_map catcache;               /* categories: name id -> see stats_categories.c */
	ev_collmatch *cm;                     /* colls */
	struct ev_map tix; struct ev_vec ts;  /* ts_analysis: fs_key(rank, name) -> struct fs_ts */
	struct ev_rec tsx; int have_tsx;      /* ts_analysis: the tsx record before a kernel */
	struct ev_map iix; struct ev_vec its; /* iterations: rank + 1 -> struct fs_iter */
	struct ev_map pwix; struct ev_vec pws; /* power: rank + 1 -> struct fs_power */
	struct ev_map phix; struct ev_vec phs; /* power: fs_key(2 rank + kind, mW + 1) -> struct fs_phist */
	uint64_t power_id;                    /* power: string id of 'Power (mW)', 0 not met */
};

/* Per rank: iterations, the detector over its kernels in start order. */
struct fs_iter {
	uint32_t rank;
	int have;       /* a kernel seen: last is its start */
	int64_t last;
	struct fs_iterdet d;
};

/* power: one of the two kinds of time (with kernels, without). */
struct fs_pclass {
	int have;              /* some time counted */
	uint64_t min_nz, max;  /* mW */
	uint64_t dur, nz_dur;  /* ns: all, at a non-zero value */
	double wsum;           /* mW x ns */
};

/* Per rank: power, the sweep over its samples and kernels in time order. */
struct fs_power {
	uint32_t rank;
	int started, have_p, have_k;
	int64_t cur;       /* time accounted up to */
	int64_t me;        /* end of the merged kernels that began last */
	uint64_t mw;       /* the value of the open period */
	uint64_t pend[2];  /* ns of the open period with kernels, without */
	struct fs_pclass c[2];
};

/* power: ns per (rank, kind, mW value), for the medians. */
struct fs_phist {
	uint32_t rank;
	unsigned cls;
	uint64_t mw, dur;
};

/* The ev_map key of a pair (rank, name or category): a hash, never 0. */
uint64_t fs_key(uint64_t a, uint64_t b);
/* The element of key in v (a new zeroed one, *fresh = 1, when absent);
 * NULL when out of memory. */
void *fs_slot(struct ev_map *m, struct ev_vec *v, uint64_t key, int *fresh);
struct fs_rank *fs_rank(ev_flex_stats *s, uint32_t rank);

/* The tables: set-up, one record, the rows at the end, clean-up. */
int fs_summary_add(ev_flex_stats *s, const struct ev_rec *r, const char *name, size_t len);
int fs_summary_write(ev_flex_stats *s);
void fs_summary_free(ev_flex_stats *s);

/* The id of name with numbers as [N] (acelyzer's), interned. */
int fs_norm_name(ev_flex_stats *s, const char *name, size_t len, uint64_t *id);

void fs_ts_hold(ev_flex_stats *s, const struct ev_rec *r);
int fs_ts_add(ev_flex_stats *s, const struct ev_rec *r, const char *name, size_t len);
int fs_ts_write(ev_flex_stats *s);
/* Whether the held tsx record belongs to kernel r (its TS1..TS5). */
int fs_ts_held(const ev_flex_stats *s, const struct ev_rec *r);

int fs_iter_add(ev_flex_stats *s, const struct ev_rec *r, const char *name, size_t len);
int fs_iter_write(ev_flex_stats *s, const uint32_t *ranks);
void fs_iter_free(ev_flex_stats *s);
void fs_ts_free(ev_flex_stats *s);

int fs_power_sample(ev_flex_stats *s, const struct ev_rec *r);
int fs_power_kernel(ev_flex_stats *s, const struct ev_rec *r);
int fs_power_write(ev_flex_stats *s, const uint32_t *ranks);
void fs_power_free(ev_flex_stats *s);

int fs_categories_init(ev_flex_stats *s);
int fs_categories_add(ev_flex_stats *s, const struct ev_rec *r, const char *name, size_t len);
int fs_categories_write(ev_flex_stats *s, const uint32_t *ranks);
void fs_categories_free(ev_flex_stats *s);

int fs_ranks_write(ev_flex_stats *s, const uint32_t *ranks); /* stats and active */

int fs_classes_add(ev_flex_stats *s, const struct ev_rec *r);
int fs_classes_write(ev_flex_stats *s, const uint32_t *ranks);

int fs_colls_init(ev_flex_stats *s);
int fs_colls_add(ev_flex_stats *s, const struct ev_rec *r);
int fs_colls_finish(ev_flex_stats *s);

/* ns as us, the unit of every table. */
static inline double fs_us(double ns) { return ns / 1000.0; }

#endif /* EV_FLEX_STATS_INT_H */
