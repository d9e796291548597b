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
};

/* The analyses' state: the open instances. */
struct oinst { /* an open op instance */
	struct gkey key;        /* sg, rank, k1 = instance, k2 = sig */
	int64_t first;          /* its first event's start, ns */
	int64_t start, end;     /* current merged interval, ns */
	uint64_t busy;          /* merged ns before it */
	double fa, fz, fbusy;   /* the same in TraceLens's microsecond doubles */
	const char *cat;
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
};

int opsum_init(ev_stats *s);
int opsum_rec(ev_stats *s, const struct ev_rec *r);
int opsum_finish(ev_stats *s);
void opsum_free(ev_stats *s);
int opsum_explain(const struct ev_stats_opts *o, const struct ev_stats_counts *c, char *buf, size_t n);
/* TraceLens's category of an op (generate_perf_report_pytorch's): the
 * op_category.c one, but its NCCL and memcpy, which TraceLens's PyTorch
 * report does not have (its c10d:: ops are "other"). */
const char *opsum_category(const char *op, const char *kernel);
/* The op's name in a signature ("aten::mm dims=..."): its length. */
size_t opsum_name_len(const char *sig);

#endif /* EV_OPSUM_H */
