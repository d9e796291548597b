/* SPDX-License-Identifier: MIT */
/*
 * critpath_int.h - what the files of ev-stats critpath share: the window's
 * events, the path's segments, the ranks' state, the graph.  Private to
 * lib/analysis.
 *
 * stats_critpath.c reads the records into each rank's window and is the
 * analysis's row; critpath_graph.c, critpath_stack.c and critpath_kernel.c
 * build a rank's graph, critpath_walk.c finds its longest path,
 * critpath_cross.c joins the ranks' graphs, critpath_rows.c writes the
 * tables.
 */
#ifndef EV_CRITPATH_INT_H
#define EV_CRITPATH_INT_H

#include "analysis/hta_rank.h"
#include "analysis/stats_impl.h"

enum { T_SUMMARY, T_PATH, T_CROSS, T_CROSS_SUMMARY };
enum ekind { E_RANGE, E_OP, E_API, E_GPU, E_SYNC };
enum esync { S_NONE, S_STREAM, S_EVENT, S_CONTEXT, S_WAIT };
enum etype { ET_OP, ET_DEP, ET_LAUNCH, ET_KK, ET_SYNC, ET_ARRIVE, ET_COLL };
enum bound { B_NONE, B_CPU, B_COMPUTE, B_COMM, B_KK, B_LAUNCH, NBOUND };
/* HTA's names: edge types without their critical_path_ prefix, bounds
 * (dependency for the bound HTA leaves empty). */
extern const char *const cp_etype_name[];
extern const char *const cp_bound_name[NBOUND];

struct cpev {
	int64_t ts, end;      /* HTA's microseconds */
	uint64_t name;
	uint32_t thr;         /* thread (CPU) or stream (GPU) */
	uint32_t corr;        /* api, GPU event, sync: correlation */
	uint32_t wait_corr;   /* sync: its cudaEventRecord's correlation */
	int32_t wait_stream;  /* sync: the stream that event was recorded on, -1 */
	int32_t mate;         /* the correlated event, -1 */
	uint8_t kind, sync, launch, lock, blocking, record, streamwait, pre;
};

/* A path segment: an edge of the longest path. */
struct seg {
	int64_t ts;
	int64_t dur;
	uint64_t name;
	uint32_t sg, rank;
	uint32_t thr;         /* the thread or stream of the event it is drawn on */
	uint8_t type, bound;
	uint8_t gpu;          /* that event is the GPU's */
};

/* A collective kernel of a rank's window: its (communicator, seq) and
 * its times in the stream's ns, for the path across ranks. */
struct cinfo { uint64_t comm; uint32_t seq, kind; int32_t ev; uint32_t rank; int64_t ts_ns, end_ns; };

struct crank {
	struct hta_rank h;
	int64_t last_ts;      /* ns: the order check */
	int state;            /* 0 before the window, 1 in it, 2 after it, 3 done */
	uint32_t seen;        /* annotation instances seen */
	int64_t wstart, wend;
	uint64_t tail;        /* records read after the window */
	uint64_t open;        /* window launches without their GPU event yet */
	struct ev_vec ev;     /* struct cpev: the window */
	struct ev_vec pend;   /* struct cpev: launches before it */
	struct ev_map pidx;   /* corr -> pend position + 1 */
	struct ev_map wlaunch;/* corr -> 1 open, 2 closed */
	struct ev_vec path;   /* struct seg, after finish */
	struct ev_vec colls;  /* struct cinfo */
	int64_t gpu_ts;       /* ns, stream and index of the last GPU event kept */
	uint32_t gpu_stream;
	int32_t gpu_ev;
	int64_t total[NBOUND];
	uint64_t nseg[NBOUND];
	int failed;           /* the graph had a cycle or a negative span */
	uint64_t dropped_pending;
};

struct critpath {
	struct ev_vec ranks; /* struct crank */
	struct ev_map idx;
	struct ev_map match; /* name id -> 1 no, 2 yes (contains the annotation) */
	uint64_t no_window, cycles, pend_dropped, tail_cut;
	struct ev_vec cross; /* struct seg: the path across ranks, per source group */
};

struct node { int64_t ts; int32_t ev; uint8_t start; };
struct edge { uint32_t u, v; int64_t w; int32_t attr; uint8_t type, dead; };

struct graph {
	struct cpev *e;
	size_t ne;
	struct node *nodes;
	size_t nn;
	int32_t *snode, *enode;   /* event -> its start and end node, -1 */
	int8_t *in;               /* event is in the window (has nodes or takes part) */
	struct ev_vec edges;      /* struct edge, in insertion order */
	struct ev_map eidx;       /* (u, v) -> edge + 1 */
	const uint32_t *rank_of;  /* event -> rank (across ranks), else NULL: rank */
	uint32_t sg, rank;
};

extern const struct ev_stats_analysis ev_stats_analysis_critpath;

/* The window's annotation: --annotation, ProfilerStep by default. */
const char *cp_annotation(const struct ev_stats *s);
/* A rank's graph (free it with cp_graph_free, also after a failure). */
int cp_build_graph(struct ev_stats *s, struct crank *cr, struct graph *g);
void cp_graph_free(struct graph *g);
/* An edge u -> v of type (ET_*), weighed by the nodes' times unless zero
 * (or a dependency or sync edge); attr: the parent an op span between two
 * children goes to.  A repeated edge keeps its place and takes the new data. */
int cp_add_edge(struct graph *g, int32_t u, int32_t v, int type, int zero, int32_t attr);
int cp_stack_edges(struct ev_stats *s, struct graph *g);
int cp_kernel_edges(struct graph *g, const struct ev_map *corr_api);
/* The longest path's segments, appended to out (struct seg); *cycle set
 * when the graph has one. */
int cp_longest_path(struct ev_stats *s, struct graph *g, struct ev_vec *out, int *cycle);
/* A rank's path summed by bound. */
void cp_tally(struct crank *cr);
/* The path across the ranks of source group sg, into critpath.cross. */
int cp_cross_path(struct ev_stats *s, uint32_t sg, int *cycle);
int cp_rows(struct ev_stats *s, struct ev_rowset *rs);

#endif /* EV_CRITPATH_INT_H */
