/* SPDX-License-Identifier: MIT */
/*
 * unified.h - what the files of TraceLens's unified_perf_summary share.
 * Private to lib/analysis.
 *
 * stats_unified.c walks the op tree and is the analysis; unified_ops.c
 * says which ops TraceLens has a perf model for; unified_groups.c makes
 * an instance a row of its group; unified_synuid.c numbers the synthetic
 * ops as TraceLens does; unified_rows.c writes the table and
 * unified_warning.c its messages.
 */
#ifndef EV_UNIFIED_H
#define EV_UNIFIED_H

#include "analysis/opsum.h"

#define UNI_MAXK OPSUM_MAXK
#define UNI_DEPTH OPSUM_DEPTH
#define CALL_BIT ((uint64_t)1 << 40) /* an instance of a runtime call, not an op */

/* Past INST_MAX open instances, the half that ended first is decided
 * (stats_unified.c, sweep). */
#define INST_MAX 65536
/* Why a source's synthetic ops are not numbered (struct unified, synwhy). */
enum { SYN_NOUID = 1, SYN_DMORE = 2 };

/* An op (or call) with GPU events in its subtree. */
struct uinst {
	struct gkey key;        /* sg, rank, k1 = op id (CALL_BIT + correlation for a call), k2 = src */
	uint64_t sig;           /* the op's signature (a call's name) */
	uint32_t parent, root;  /* parent op id (0 none); the topmost op found above */
	uint64_t thread;        /* + 1, 0 unknown */
	int64_t ts, dur;        /* the op's start, its CPU time (ns, -1 unknown) */
	int64_t end;            /* its GPU events' latest end */
	int64_t uid;            /* its op's TraceLens UID (tl_uid), -1 unknown */
	uint8_t pm, direct, comm, desc_pm;
	struct busy sub;        /* its subtree's GPU events */
	uint32_t nk, more, dmore;
	uint32_t dmask, cmask;  /* events it launched itself; communication kernels */
	uint64_t kfirst;        /* its first own non-communication event's name */
	uint64_t kname[UNI_MAXK];
	uint32_t kstream[UNI_MAXK];
	double kdur[UNI_MAXK];  /* us */
	double kbusy[UNI_MAXK]; /* its busy time alone: us, TraceLens's doubles when float_us */
	uint32_t kuid[UNI_MAXK]; /* its trace event's index + 1 (gpu_uid1), 0 unknown */
};

/* A GPU event made a synthetic op: where TraceLens numbers it. */
struct usyn {
	uint64_t parent;        /* orphan: its call (rank << 32 | correlation); else 0 */
	uint32_t uid1;          /* its trace event's index + 1 */
	uint32_t first;         /* the uid1 its place is sorted by (syn_number) */
	uint32_t grp;           /* its row's group */
	uint16_t src;
	uint8_t orphan;         /* launched by a call outside any op */
};

/* A row: instances of one name, category, names and arguments. */
struct ugroup {
	uint64_t count;
	uint64_t sig;           /* the op's signature (name and arguments) */
	uint64_t kname;         /* a synthetic op's GPU event, 0 else */
	const char *cat;
	uint32_t rank;
	uint64_t thread;
	int oclass;             /* TraceLens's collection order: 0 ops, 1 calls' events, 2 ops' events */
	int64_t ots;
	double uid;             /* the first instance's TraceLens UID, NAN unknown */
	uint16_t usrc;          /* that instance's source */
	int pm, metrics;
	double gflop, mbytes, fpb;
	const char *spec;
	char *params;           /* perf_params, NULL none */
	struct ev_dist dur, kt, tbs, tflops;
	struct perf_kpos *k;
	uint32_t nk;
	uint64_t skipped;
};

struct unified {
	struct tl_clock clock;
	int64_t now;
	struct othread *th;     /* open cpu_ops per thread (opsum_thread) */
	size_t nth, capth;
	struct unode *node;
	size_t nnode, capnode;
	struct ev_map nodeidx;
	struct ucall *call;
	size_t ncall;
	struct ev_map callidx;
	struct uinst *inst;
	size_t n, cap;
	struct ev_map idx;
	struct ev_map sigpm;    /* sig id -> 1 + has a perf model */
	int metrics;            /* a row has a model's numbers */
	uint64_t evicted, deep, more, dmore, nocall, window, nomodel, failed, noargs, sketched;
	char nomodel_op[128], failed_op[128], noargs_op[128];
	const char *noargs_why; /* the first such op's category's noargs */
	struct usyn *syn;       /* the synthetic ops' GPU events, at most SYN_MAX */
	size_t nsyn, capsyn;
	uint64_t synlost;       /* those past SYN_MAX */
	unsigned synwhy;        /* SYN_NOUID, SYN_DMORE: why a source's are not numbered */
	uint64_t synbad[65536 / 64]; /* by source: its synthetic ops not numbered */
};

/* The op category TraceLens's registry gives an op it has a perf model
 * for, NULL when it has none for op `name`. */
const char *unified_model_category(const char *name);

/* An op's name out of its signature, in b (n bytes); b. */
const char *unified_op_name(const char *sig, char *b, size_t n);

/* Instance in as a row of its group: taken whole (j < 0), or its own GPU
 * event j as a synthetic op.  EV_OK, or an EV_ERR_* status. */
int unified_add_row(ev_stats *s, const struct uinst *in, int j);

/* The synthetic op of instance in's GPU event j, of group grp: its place
 * in TraceLens's numbering kept.  EV_OK, or EV_ERR_NOMEM. */
int syn_note(struct unified *u, const struct uinst *in, int j, size_t grp);
/* Source src's synthetic ops not numbered, for reason why (SYN_*). */
void syn_bad(struct unified *u, uint16_t src, unsigned why);
/* Once every synthetic op is known: their rows' ex_UID. */
void syn_number(ev_stats *s);

/* The analysis's rows and warnings (struct ev_stats_analysis). */
int unified_rows(ev_stats *s, struct ev_rowset *rs);
int unified_warning(ev_stats *s, unsigned i, char *buf, size_t n);

#endif /* EV_UNIFIED_H */
