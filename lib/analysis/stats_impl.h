/* SPDX-License-Identifier: MIT */
/*
 * stats_impl.h - what the stats*.c files share: the group table, the
 * accumulators of each analysis and the ev_stats object.  Private to
 * lib/analysis; the API is include/ev/stats.h.
 */
#ifndef EV_STATS_IMPL_H
#define EV_STATS_IMPL_H

#include "ev.h"
#include "ev/align.h"
#include "ev/hta.h"

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

struct kstat { /* kernels, categories, variance, ops */
	struct ev_dist d;
	uint64_t name;          /* a kernel name of the group */
	unsigned kclass;
	uint32_t min_rank, max_rank;
	uint32_t min_src, max_src;
	double gflop, mbytes;   /* ops: per instance, 0 unknown */
	struct ev_dist tflops, tbs;
	uint32_t total;         /* kernels: index + 1 of the --by group's total */
};

struct tl { /* timeline per group */
	struct ev_cover tl;     /* classes: comp, comm, memcpy */
	int64_t last_ts, t0;
	int started;
	uint32_t hta;           /* index + 1 of its rank's HTA accumulator */
};

/* Mean and max only (the skews need no quantiles, so no samples): the
 * same running-mean arithmetic as ev_dist, so the numbers are identical. */
struct moments { uint64_t n; double mean, max; };

struct cstat { /* coll summary per (sg, op, dtype, bytes) */
	struct ev_dist lat, algbw, busbw;
	struct moments sskew, eskew;
	uint64_t nranks;
	double total_lat_us;
};

struct strag { uint64_t colls, last, first; double wait_us, dur_us; };

struct inst { /* ops: an open op instance */
	struct gkey key;        /* sg, rank, k1 = instance, k2 = sig */
	int64_t start, end;     /* current merged kernel interval */
	uint64_t busy;          /* merged time before it */
	uint64_t name;
	unsigned kclass;
	int live;
};

struct srcgrp { char *keys; uint32_t first_src; };

struct ev_stats {
	struct ev_stats_opts o;
	ev_strtab *st;
	ev_meta *meta;
	struct ev_dist_pool pool;
	struct ev_vec srcgrps;          /* struct srcgrp */
	struct ev_map srcgrp_idx;       /* hash of the key tuple -> sg + 1 */
	struct ev_map src_sg;           /* src + 1 -> sg + 1 */
	size_t input_cfg_nsrc;          /* #src lines when input_cfg was decided */
	int input_cfg;                  /* ev_align_input_is_config() of meta */
	uint64_t *short_hist;           /* short: kernels per duration in ns */
	int64_t short_first, short_last; /* short: the GPU span */
	int short_any;
	struct ev_map class_cache;      /* name id -> class + 1 (under rules) */
	struct ev_map bucket_cache;     /* name id ^ type -> bucket + 2 */
	struct ev_map layout_cache;     /* variance: name id -> ev_gemm_layout + 1 */
	struct groups g;                /* the analysis's accumulators */
	struct groups aux;              /* coll: per-rank stragglers */
	struct ev_stats_counts n;
	/* coll */
	ev_collmatch *cm;
	/* ops */
	struct ev_map inst_idx;
	struct inst *inst;
	size_t ninst, capinst;
	int64_t now;
	/* timeline: HTA's breakdown per (source group, rank), as HTA keeps
	 * events (lib/analysis/hta.c) */
	struct ev_vec htas;             /* struct ev_hta */
	struct ev_map hta_idx;          /* (sg, rank) -> index + 1 */
	uint32_t hta_src, hta_rank, hta_last; /* the last (src, rank) looked up: index + 1 (0: none) */
	/* timeline: the last record's group, and the last source's time base */
	int last_ok, base_ok;
	uint32_t last_src, last_rank, last_stream, base_src;
	size_t last_index;
	int64_t base_ns;
};

/* ---- shared helpers (stats.c) ---- */
int src_group(struct ev_stats *s, uint32_t src, uint32_t *sg);
int has_by(const struct ev_stats_opts *o, int f);
int base_key(struct ev_stats *s, const struct ev_rec *r, struct gkey *k);
int short_rec(struct ev_stats *s, const struct ev_rec *r);
int short_rows(struct ev_stats *s, struct ev_rowset *rs);
const char *str_of(const struct ev_stats *s, uint64_t id);
unsigned class_of(struct ev_stats *s, const struct ev_rec *r);
int is_gpu(const struct ev_rec *r);
const char *class_name(unsigned kc);
const char *src_label(const struct ev_stats *s, uint32_t src, char *buf, size_t n);
void by_colspecs(const struct ev_stats_opts *o, struct ev_colspec *c, size_t *n);
/* A new row of rs for group key k, its --by key columns filled; *n is
 * the next key column. */
int group_row(struct ev_stats *s, struct ev_rowset *rs, const struct gkey *k, struct ev_row **out, size_t *n);
/* Slots of s->g sorted by (sg, rank, stream) then cmp; the caller frees. */
size_t *sorted_slots(struct ev_stats *s, int (*cmp)(const struct ev_stats *, size_t, size_t));

/* ---- the analyses ---- */
int timeline_rec(struct ev_stats *s, const struct ev_rec *r);
int timeline_rows(struct ev_stats *s, struct ev_rowset *rs);
int kernels_rec(struct ev_stats *s, const struct ev_rec *r, int by_class);
int kernels_rows(struct ev_stats *s, struct ev_rowset *rs, int by_class);
int variance_rec(struct ev_stats *s, const struct ev_rec *r);
int variance_rows(struct ev_stats *s, struct ev_rowset *rs);
int ops_rec(struct ev_stats *s, const struct ev_rec *r);
int ops_finish(struct ev_stats *s);
int ops_rows(struct ev_stats *s, struct ev_rowset *rs);
int coll_open(struct ev_stats *s);
int coll_rec(struct ev_stats *s, const struct ev_rec *r);
int coll_finish(struct ev_stats *s);
int coll_rows(struct ev_stats *s, struct ev_rowset *rs);

/* A key cell: numeric columns print as integers when they parse as one. */
int rowset_cell_key(ev_table *t, const struct ev_colspec *c, const char *s);

#endif /* EV_STATS_IMPL_H */
