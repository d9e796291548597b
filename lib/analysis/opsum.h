/* SPDX-License-Identifier: MIT */
/*
 * opsum.h - what stats_ops_summary.c shares with stats_ops_category.c: the
 * op instances (TraceLens's kernel launchers) and their direct kernel time,
 * accumulated per (signature, op category).  Private to lib/analysis.
 */
#ifndef EV_OPSUM_H
#define EV_OPSUM_H

#include "analysis/stats_impl.h"

/* A group: launches of one signature whose op fell in one category. */
struct opsum_group {
	uint64_t count;     /* op instances */
	double direct_us;   /* the sum of their direct kernel time */
	const char *cat;    /* the op category (a static string) */
	struct ev_dist d;   /* their direct kernel times (us) */
	int64_t first;      /* the first instance's start */
	uint32_t rank;      /* and its rank and thread + 1 (0 unknown), */
	uint64_t thread;    /* when grouped by names (ops-args) */
};

/* The analyses' state: the open instances. */
struct oinst { /* an open op instance */
	struct gkey key;        /* sg, rank, k1 = instance, k2 = sig */
	int64_t first;          /* its first event's start, ns */
	int64_t start, end;     /* current merged interval, ns */
	uint64_t busy;          /* merged ns before it */
	double fa, fz, fbusy;   /* the same in TraceLens's microsecond doubles */
	const char *cat;
	uint64_t thread;        /* its op's thread + 1, 0 unknown */
};

/* TraceLens's times: ts and dur parsed as microsecond doubles, relative
 * to baseTimeNanoseconds when the trace had one (#src base_ns=); the base
 * of the last source looked up is kept. */
struct tl_clock { uint32_t src; int ok; int64_t base_ns; };
void tl_float_times(struct tl_clock *c, const ev_meta *meta, const struct ev_rec *r, double *a, double *z);

struct opsum {
	struct ev_map idx;      /* hash of an instance's key -> index + 1 */
	struct oinst *inst;
	size_t n, cap;
	int64_t now;
	struct tl_clock clock;
	/* ops-args: groups split by process and thread names, and the
	 * threads of recent ops (rank, src, External id -> thread + 1) */
	int want_names, by_names;
	struct ev_map opthread;
	struct opthr { uint64_t key, thread; } *recent;
	size_t nrecent;
};

int opsum_init(ev_stats *s);
int opsum_init_names(ev_stats *s);
int opsum_rec(ev_stats *s, const struct ev_rec *r);
int opsum_finish(ev_stats *s);
void opsum_free(ev_stats *s);
int opsum_explain(const struct ev_stats_opts *o, const struct ev_stats_counts *c, char *buf, size_t n);
/* TraceLens's category of an op (generate_perf_report_pytorch's): the
 * op_category.c one, but its NCCL and memcpy, which TraceLens's PyTorch
 * report does not have (its c10d:: ops are "other"). */
const char *opsum_category(const char *op, const char *kernel);
/* TraceLens's process_name, process_label and thread_name of an op run
 * on thread tid1 - 1 of rank (its pid and tid): the names of the stream's
 * #thread and #process lines, "Unknown" (TraceLens's word) for one the
 * trace did not give, or all three when the op's thread is not known
 * (tid1 0).  0 and NULLs when the stream has no #thread line (another
 * producer, an older stream): then nothing is known, not "Unknown". */
int tl_names(const ev_meta *m, uint32_t rank, uint64_t tid1, const char *out[3]);
/* The op's name in a signature ("aten::mm dims=..."): its length. */
size_t opsum_name_len(const char *sig);

#endif /* EV_OPSUM_H */
