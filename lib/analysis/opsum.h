/* SPDX-License-Identifier: MIT */
/*
 * opsum.h - what stats_ops_summary.c shares with stats_ops_category.c: the
 * op instances (TraceLens's kernel launchers) and their direct kernel time,
 * accumulated per (signature, op category).  Private to lib/analysis.
 */
#ifndef EV_OPSUM_H
#define EV_OPSUM_H

#include "analysis/stats_impl.h"

#include <stddef.h>

/* A kernel position of a group's op instances (TraceLens's kernel_details:
 * the instances' i-th GPU event, by start): its name, stream, durations. */
struct perf_kpos { uint64_t name; uint32_t stream; struct ev_dist d; };
struct pytext;
/* TraceLens's kernel_details summary (_summarize_kernel_stats: per
 * position count, sum, mean, median, std, min, max, as numpy computes
 * them; positions by sum, then name) of nk positions into full, and its
 * trunc_kernel_details (names cut at 64 characters, mean to 2 decimals)
 * into trunc; a position past the exact-sample budget counts in
 * *sketched.  kernel_details.c. */
int perf_kernel_details(ev_stats *s, struct perf_kpos *pos, uint32_t nk, uint64_t *sketched, struct pytext *full,
                        struct pytext *trunc);
#define OPSUM_MAXK 32 /* GPU events of one instance kept for kernel_details */

/* A group: launches of one signature whose op fell in one category. */
struct opsum_group {
	uint64_t count;     /* op instances */
	double direct_us;   /* the sum of their direct kernel time */
	double subtree_us;  /* the sum of their subtree kernel time */
	const char *cat;    /* the op category (a static string) */
	struct ev_dist d;   /* their direct kernel times (us) */
	struct ev_dist sd;  /* their subtree kernel times (us) */
	int64_t first;      /* the first instance's start */
	uint32_t rank;      /* and its rank and thread + 1 (0 unknown), */
	uint64_t thread;    /* when grouped by names (ops-args) */
	int64_t uid;        /* TraceLens's ex_UID (ops-args): the UID of the instance whose
	                     * op started first (ties: the lesser UID), -1 none yet */
	int64_t uid_ts;     /* and that op's start */
	uint64_t no_uid;    /* instances whose op's UID is not known */
	struct perf_kpos *k; /* kernel_details: the first instance's events */
	uint32_t nk;
	uint64_t skipped;   /* instances with another number of events */
};

/* The busy time of a set of GPU events (TraceLens's GPUEventAnalyser
 * busy_time): their intervals merged in start order. */
struct busy {
	int64_t start, end;     /* current merged interval, ns */
	uint64_t busy;          /* merged ns before it */
	double fa, fz, fbusy;   /* the same in TraceLens's microsecond doubles */
	int on;                 /* has an event */
};
/* GPU event r (of TraceLens's times a and z, when float_us) into b, and
 * b's busy time in us (TraceLens's doubles when float_us). */
void opsum_busy_add(const ev_stats *s, struct busy *b, const struct ev_rec *r, double a, double z);
double opsum_busy_us(const ev_stats *s, const struct busy *b);

/* The analyses' state: the open instances. */
struct oinst { /* an open op instance */
	struct gkey key;        /* sg, rank, k1 = instance, k2 = sig */
	int64_t first;          /* its first event's start, ns */
	int64_t end;            /* its last event's end, ns */
	struct busy direct;     /* the GPU events the op launches itself */
	struct busy subtree;    /* and those its child ops launch (TraceLens's subtree) */
	const char *cat;
	uint64_t thread;        /* its op's thread + 1, 0 unknown */
	int64_t uid, op_ts;     /* its op's UID (tl_uid, -1 unknown) and start (ops-args) */
	uint32_t nk, more;      /* direct events kept, and past OPSUM_MAXK */
	uint32_t kl;            /* their list in opsum.kl + 1, 0 none yet */
};
/* The direct events of an instance that launches some: a list apart, as
 * most instances (the ops around a launcher) have none. */
struct oklist {
	uint64_t kname[OPSUM_MAXK];
	uint32_t kstream[OPSUM_MAXK];
	double kdur[OPSUM_MAXK]; /* us */
	uint32_t next;           /* free: the next free list + 1 */
};

/* A cpu_op seen on a thread: its parent (the cpu_op open around it), so
 * that a GPU event counts for every op of its launcher's subtree. */
struct opnode { uint32_t rank, id, parent; uint16_t src; uint64_t sig; int64_t end; };
/* A thread's open cpu_ops. */
#define OPSUM_DEPTH 64
struct othread { uint32_t rank, thread; uint16_t src; uint32_t n; uint32_t id[OPSUM_DEPTH]; int64_t end[OPSUM_DEPTH]; };

/* TraceLens's times: ts and dur parsed as microsecond doubles, relative
 * to baseTimeNanoseconds when the trace had one (#src base_ns=); the base
 * of the last source looked up is kept. */
struct tl_clock { uint32_t src; int ok; int64_t base_ns; };
void tl_float_times(struct tl_clock *c, const ev_meta *meta, const struct ev_rec *r, double *a, double *z);

struct opsum {
	struct ev_map idx;      /* hash of an instance's key -> index + 1 */
	struct oinst *inst;
	size_t n, cap;
	struct oklist *kl;      /* instances' direct events, reused when closed */
	size_t nkl, capkl;
	uint32_t klfree;        /* first free list + 1 */
	int64_t now;
	struct tl_clock clock;
	/* ops-args: groups split by process and thread names, and the
	 * threads, UIDs and starts of recent ops (rank, src, External id, or
	 * a runtime call's correlation -> index + 1 in recent) */
	int want_names, by_names;
	struct ev_map opthread;
	struct opthr { uint64_t key, thread; int64_t uid, ts; } *recent;
	size_t nrecent;
	struct othread *th;     /* per thread (distinct threads) */
	size_t nth, capth;
	struct opnode *node;    /* a window of cpu_ops */
	size_t nnode, capnode;
	struct ev_map nodeidx;  /* hash of rank, src, id -> index + 1 */
	uint64_t evicted, deep, more, skipped, sketched, no_uid;
	int any_uid;            /* an op has its UID: the stream carries them */
};

int opsum_init(ev_stats *s);
int opsum_init_names(ev_stats *s);
int opsum_rec(ev_stats *s, const struct ev_rec *r);
int opsum_finish(ev_stats *s);
void opsum_free(ev_stats *s);
/* The subtree window's and (ops-args) kernel_details' approximations,
 * said. */
extern const struct ev_stats_analysis ev_stats_analysis_ops_args;
int opsum_warning(ev_stats *s, unsigned i, char *buf, size_t n);
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
/* The argument field ("dims", ...) of a signature as Python's str() of it
 * into t, lists as tuples when tuples, "" when the op had none. */
struct pytext;
int opsum_sig_field(const char *sig, const char *field, int tuples, struct pytext *t);
/* TraceLens's UID of an op record, a cpu_op range or a runtime call (the
 * launcher of GPU events outside any op): the event's index in its trace's
 * traceEvents array, which kineto2ev writes as aux = index + 1
 * (docs/FORMAT.md); -1 when the record carries none (another producer, an
 * older stream) or is of another kind. */
static inline int64_t tl_uid(const struct ev_rec *r)
{
	if (!r->aux || !((r->type == EV_RANGE && r->op == EV_RG_CPU_OP) || r->type == EV_API))
		return -1;
	return (int64_t)r->aux - 1;
}
/* A cpu_op's (or runtime call's) key in the maps: rank, source and id. */
static inline uint64_t opsum_op_key(uint32_t rank, uint16_t src, uint32_t id)
{
	uint64_t k[2] = { ((uint64_t)rank << 16) | src, id };
	return ev_hash64(k, sizeof k) | 1;
}

/* A window of cpu_ops (or launchers) kept for the GPU events that come
 * after them, looked up by opsum_op_key: the items an array holds, with
 * where each keeps its rank, source, id and end (offsetof). */
struct opsum_window {
	size_t size, rank, src, id, end;
};
/* Ops are kept while they ended less than a minute before `now` (an op's
 * kernels run soon after it), at most OPSUM_WINDOW_MAX: past that the
 * oldest half goes, added to *evicted.  An op's parents end after it, so
 * they stay as long as it does. */
#define OPSUM_WINDOW_NS 60000000000LL
#define OPSUM_WINDOW_MAX 262144
/* Drop what left the window from items[0 .. *n) and index the rest in idx
 * (key -> index + 1). */
int opsum_window_prune(const struct opsum_window *w, void *items, size_t *n, int64_t now, uint64_t *evicted,
                       struct ev_map *idx);
/* r's thread among th[0 .. *nth) (added when new), its ops that ended
 * before r popped: the cpu_ops still open around r. */
int opsum_thread(struct othread **th, size_t *nth, size_t *capth, const struct ev_rec *r, struct othread **out);
/* The end by which half of n open instances (items of size bytes, an
 * int64_t end at offset end) have ended, in *cut: a full window closes
 * those first. */
int opsum_half_end(const void *items, size_t n, size_t size, size_t end, int64_t *cut);

#endif /* EV_OPSUM_H */
