/* SPDX-License-Identifier: MIT */
/*
 * stats_impl.h - what the stats*.c files share: the group table, the
 * kernel accumulator and the ev_stats object.  Private to
 * lib/analysis; the API is include/ev/stats.h.
 */
#ifndef EV_STATS_IMPL_H
#define EV_STATS_IMPL_H

#include "ev/stats.h"
#include "ev/align.h"

/* ---- groups: a key tuple -> accumulator slot, in first-seen order ---- */

struct gkey {
	uint32_t sg;     /* source group: src, or the tuple of --by #src keys */
	uint32_t rank;
	uint32_t stream;
	uint32_t pad;
	uint64_t k1, k2; /* analysis keys (name, sig, comm, ...) */
};

struct groups {
	struct ev_map idx;  /* hash -> slot + 1 */
	struct ev_vec keys; /* struct gkey */
	struct ev_vec vals; /* analysis-specific */
};

void groups_init(struct groups *g, size_t elem);
void groups_free(struct groups *g);
/* The slot of key (created zeroed when new), or NULL on out of memory. */
void *group_get(struct groups *g, const struct gkey *k, size_t *index);
#define GROUP_KEY(g, i) ((struct gkey *)(g)->keys.data + (i))
#define GROUP_VAL(g, i) ((void *)((char *)(g)->vals.data + (i) * (g)->vals.elem))

/* ---- accumulators ---- */

struct kstat { /* kernels, categories, variance, ops, short */
	struct ev_dist d;
	uint64_t name;          /* a kernel name of the group */
	unsigned kclass;
	uint32_t min_rank, max_rank;
	uint32_t min_src, max_src;
};

/* ops' accumulator: a kstat (first, so that the kstat helpers take it)
 * and the GEMM numbers only ops has; kept apart so that a table with a
 * group per kernel name holds no more than it uses. */
struct opstat {
	struct kstat k;
	double gflop, mbytes;   /* per instance, 0 unknown */
	struct ev_dist tflops, tbs;
};

/* The kstat of key k, created with its first kernel's name and class
 * (every kernel analysis names a group so); NULL when out of memory.
 * Inline: called per record. */
static inline struct kstat *kstat_get(struct groups *g, const struct gkey *k, uint64_t name, unsigned kclass)
{
	struct kstat *ks = group_get(g, k, NULL);
	if (ks && ks->d.n == 0) {
		ks->name = name;
		ks->kclass = kclass;
	}
	return ks;
}

struct srcgrp { char *keys; uint32_t first_src; };

/* What every analysis shares.  An analysis's own state is s->state, a
 * struct of its file (ev_stats_analysis.state_size), so that adding one
 * touches nothing here. */
struct ev_stats {
	struct ev_stats_opts o;
	const struct ev_stats_analysis *a; /* o.analysis */
	void *state;                    /* a->state_size bytes, zeroed */
	const ev_strtab *st;
	const ev_meta *meta;
	struct ev_dist_pool pool;
	struct ev_vec srcgrps;          /* struct srcgrp */
	struct ev_map srcgrp_idx;       /* hash of the key tuple -> sg + 1 */
	struct ev_map src_sg;           /* src + 1 -> sg + 1 */
	size_t input_cfg_nsrc;          /* #src lines when input_cfg was decided */
	int input_cfg;                  /* ev_align_input_is_config() of meta */
	struct ev_map class_cache;      /* name id -> class + 1 (under rules) */
	struct groups g;                /* the analysis's accumulators (a->group_size each) */
	struct ev_stats_counts n;
	int64_t order_last;             /* EV_ERR_ORDER: the group's last ts */
	const char *errpath;            /* ev_stats_errpath */
};

/* ---- shared helpers (stats.c) ---- */
int src_group(struct ev_stats *s, uint32_t src, uint32_t *sg);
int has_by(const struct ev_stats_opts *o, int f);
int base_key(struct ev_stats *s, const struct ev_rec *r, struct gkey *k);
const char *str_of(const struct ev_stats *s, uint64_t id);
unsigned class_of(struct ev_stats *s, const struct ev_rec *r);
int is_gpu(const struct ev_rec *r);
const char *class_name(unsigned kc);
const char *src_label(const struct ev_stats *s, uint32_t src, char *buf, size_t n);
void by_colspecs(const struct ev_stats_opts *o, struct ev_colspec *c, size_t *n);
/* A new row of rs for group key k, its --by key columns filled; *n is
 * the next key column. */
int group_row(struct ev_stats *s, struct ev_rowset *rs, const struct gkey *k, struct ev_row **out, size_t *n);
/* Slots of s->g sorted by (sg, rank, stream) then cmp; the caller frees.
 * Nothing when *rc is already an error (NULL back), and *rc set when out
 * of memory, so that a rows function checks once. */
size_t *sorted_slots(struct ev_stats *s, int (*cmp)(const struct ev_stats *, size_t, size_t), int *rc);
/* pandas' statistic of a column's values in d: which 0 mean, 1 median,
 * 2 std (NaN for one value, as pandas' sample std), 3 min, 4 max, 5 sum;
 * NaN without values. */
double pandas_stat(struct ev_dist *d, int which);

/* A kstat rows function's loop step, for j = 0, 1, ...: a new row of rs
 * for slot ord[j] (--by keys filled, *n the next key column) and that
 * slot's kstat.  NULL after the last slot, when *rc is already an error
 * (a cell the caller failed to fill), or with *rc set when the row cannot
 * be made. */
struct kstat *kstat_row(struct ev_stats *s, struct ev_rowset *rs, const size_t *ord, size_t j, struct ev_row **r,
                        size_t *n, int *rc);
/* Free the distributions of s->g's slots, all struct kstat. */
void kstat_free_groups(struct ev_stats *s);
/* Names of the kernel classes in mask, comma-separated, in buf. */
const char *class_list(unsigned mask, char *buf, size_t n);

/* A key cell: numeric columns print as integers when they parse as one. */
int rowset_cell_key(ev_table *t, const struct ev_colspec *c, const char *s);

#endif /* EV_STATS_IMPL_H */
