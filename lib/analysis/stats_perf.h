/* SPDX-License-Identifier: MIT */
/*
 * stats_perf.h - what the files of ev-stats perf (TraceLens's perf-model
 * sheets, perf.h) share: the op instances being gathered, the groups they
 * go to, and the analysis's state.  Private to lib/analysis.
 *
 * stats_perf.c is the analysis's row and reads the records;
 * stats_perf_window.c gathers each op instance's GPU events (the ops open
 * on each thread, their launchers, the ops still waiting for an event,
 * the backward links); stats_perf_groups.c puts a finished instance,
 * modelled, into its group; stats_perf_rows.c writes the sheet
 * (kernel_details from kernel_details.c).
 */
#ifndef EV_STATS_PERF_H
#define EV_STATS_PERF_H

#include <stdint.h>

#include "analysis/fwdbwd.h"
#include "analysis/opsum.h"
#include "analysis/perf.h"

#define PERF_MAXK 32 /* GPU events of one instance */
#define PERF_DEPTH 8 /* ops of the category open around one op */

/* Forward ops of a backward sheet are kept until their backward op comes
 * (the whole forward pass), at most FW_MAX: past that the oldest half
 * goes, counted. */
#define FW_MAX 65536

/* Pending ops are kept as long as launchers (a minute after their op
 * ended), at most PEND_MAX: past that the oldest half is closed, counted
 * (a GPU event of theirs coming later makes a second instance). */
#define PEND_MAX 262144

/* Where an op comes in the trace file: its UID (its index there, -1
 * unknown); without, its thread's place (thread + 1, 0 unknown: last),
 * then its start, then the stream's order. */
struct forder { uint32_t rank; uint64_t thread; int64_t ts; uint64_t seq; int64_t uid; };

struct pinst {
	struct gkey key;        /* sg, rank, k1 = instance, k2 = sig */
	struct forder at;       /* the op's place (or its first event's) */
	int64_t start, end;
	uint64_t busy;          /* ns merged before [start, end) */
	double fa, fz, fbusy;   /* the same in TraceLens's microsecond doubles */
	uint32_t nk, more;      /* events kept, and past PERF_MAXK */
	uint64_t kname[PERF_MAXK];
	uint32_t kstream[PERF_MAXK];
	double kdur[PERF_MAXK]; /* us */
};

struct pgroup {
	uint64_t count;
	struct forder first;    /* the first instance's place in the file */
	uint64_t sig;           /* its signature */
	int64_t uid;            /* UID_first: the least UID of its instances' ops */
	uint64_t no_uid;        /* instances whose op's UID is not known */
	char *pvals;            /* its parameter values, '\x1f'-joined */
	const char *pname[PERF_MAXP];
	size_t np;
	double gflop, mbytes, fpb;
	const char *spec;
	struct ev_dist us, tbs, tflops;
	struct perf_kpos *k;    /* the first instance's events: name, stream, durations */
	uint32_t nk;
	uint64_t skipped;       /* instances of another number of events */
	uint64_t empty;         /* instances without one (skipped when nk > 0) */
};

/* An op of the category that no GPU event has joined yet (compact: most
 * never get one, or get it soon). */
struct ppend { struct gkey key; struct forder at; int64_t end; int used; };

/* An op of the category open on a thread, or enclosing a launcher. */
struct anc { uint32_t id; uint64_t sig; int64_t end; uint64_t thread; /* + 1 */ int64_t uid; };
/* A thread's open ops of the category. */
struct tstack { uint32_t rank, thread; uint16_t src; uint32_t n; struct anc a[PERF_DEPTH]; };
/* An op under (or being) an op of the category: the ops its GPU events
 * count for. */
struct launcher { uint32_t rank, id; uint16_t src; uint32_t n; int64_t end; struct anc a[PERF_DEPTH]; };

/* A backward sheet: the forward-backward links, and a window of the
 * forward ops of the category (key, signature, thread + 1) until their
 * backward op comes. */
struct fwop { uint64_t key, sig, thread; int64_t uid; };
struct perf_bwd {
	struct fb_links fb;
	struct fwop *fw;
	size_t nfw, capfw;
	struct ev_map fwidx;    /* key -> index + 1 */
	uint64_t fw_evicted;    /* forward ops that left the window */
	int32_t src_checked;    /* the last source whose #src was read, -1 none */
	int src_linked;         /* and whether it has fwdbwd links */
	uint64_t unlinked_ops;  /* forward ops of the category in sources without */
};

/* A parameter column: its name and where it first came (TraceLens's
 * columns are the union of its rows' keys in row order). */
struct pcol { const char *name; struct forder at; size_t pos; };

struct perf {
	const struct perf_category *cat;
	struct ev_map idx;      /* hash of an instance's key -> index + 1 */
	struct ev_map sigcat;   /* sig id -> 1 + (op modelled), 3 unmodelled */
	struct pinst *inst;
	size_t n, cap;
	int64_t now;
	struct tl_clock clock;
	struct pcol cols[2 * PERF_MAXP];
	size_t ncols;
	char colname[2 * PERF_MAXP][48]; /* "param: NAME", the rows' column names */
	uint64_t failed, unmodelled, over, sketched, early, seq;
	char failed_op[128], unmodelled_op[128];
	struct tstack *th;      /* per thread (distinct threads) */
	size_t nth, capth;
	struct ppend *pd;       /* a window of ops of the category without events */
	size_t npd, cappd;
	struct ev_map pdidx;    /* hash of a pending op's key -> index + 1 */
	struct launcher *la;    /* a window of ops under ops of the category */
	size_t nla, capla;
	struct ev_map laidx;    /* hash of rank, src, id -> index + 1 */
	uint64_t evicted, deep;
	struct perf_bwd bwd;    /* a backward sheet's links (perf_bwd) */
	int any_uid;            /* an op has its UID: the stream carries them */
	uint64_t no_uid;        /* groups without */
};

/* stats_perf_groups.c */
/* Whether op a comes before op b in the trace file (< 0), after (> 0). */
int perf_file_cmp(const ev_meta *m, const struct forder *a, const struct forder *b);
/* An instance is done: modelled, into its group. */
int perf_inst_close(ev_stats *s, const struct pinst *in);
/* Whether group g has its UID_first. */
int perf_uid_known(const struct pgroup *g);

/* stats_perf_window.c */
/* The kind of a signature, cached: 2 an op of the category, 3 one it has
 * no model for, 1 neither. */
int perf_kind_of(ev_stats *s, uint64_t sig, unsigned *kd);
/* Instances whose events ended a second ago (all: every one) closed. */
int perf_sweep(ev_stats *s, int all);
/* Pending ops past the window (all: every one) closed without kernel
 * time. */
int perf_pend_prune(ev_stats *s, int all);
/* A cpu_op range: the ops of the category its GPU events count for. */
int perf_range_rec(ev_stats *s, const struct ev_rec *r);
/* GPU event r into the instance of op `id`. */
int perf_inst_add(ev_stats *s, const struct ev_rec *r, uint64_t id, uint64_t sig, uint64_t thread, int64_t uid);

/* stats_perf_rows.c */
/* The sheet's rows, largest kernel time first. */
int perf_rows(ev_stats *s, struct ev_rowset *rs);

#endif /* EV_STATS_PERF_H */
