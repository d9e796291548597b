/* SPDX-License-Identifier: MIT */
/*
 * ev/nccl_sched.h - the NCCL schedule model: how NCCL (and RCCL) turn one
 * collective or send/recv into wire messages (docs/nccl-model.md).
 *
 *   latency table   per-primitive costs measured by NPKit (npkit2lat output)
 *   NPKit summaries the JSON NPKit writes, turned into that table
 *   tuning          presets, NCCL's cost model, the algorithm/protocol
 *                   chooser, channels, threads, chunk sizes, channel split
 *   topology        rings, trees, p2p parts and channels
 *   scheduler       the expansion of a stream's COLL/P2P records into
 *                   SEND/RECV/CALC/DEP records, given to a sink
 *   flows           a sink that writes NCCL_GP-style JSONL flow lines
 *
 * Like the rest of the library this never prints: errors come back as
 * status codes with a message (ev_nccl_sched_errmsg), warnings through the
 * sink's warn callback, once per kind, with counts in the stats.
 */
#ifndef EV_NCCL_SCHED_H
#define EV_NCCL_SCHED_H

#include <stddef.h>
#include <stdint.h>

#include "ev/stream.h"

#define EV_NCCL_MAXCH 64           /* NCCL's MAXCHANNELS */
#define EV_NCCL_NCOLL 14           /* enum ev_coll values */
#define EV_NCCL_MAX_RANK 1048575u  /* largest global rank accepted (tags hold 20 bits) */
#define EV_NCCL_MAX_COMM_RANKS 65536u /* largest communicator expanded */
#define EV_NCCL_DEFAULT_MAX_MESSAGES 4194304ull /* per record and rank, see --max-messages */

/* A record was skipped (params.lenient): the message says why. */
#define EV_NCCL_SKIPPED 1

/* Channel split of a NCCL version: <= 2.19 interleaved, 2.20-2.21
 * contiguous per channel, >= 2.22 continuous byte distribution. */
enum ev_nccl_regime { EV_NCCL_REG_AUTO = 0, EV_NCCL_REG_A = 1, EV_NCCL_REG_B = 2, EV_NCCL_REG_C = 3 };
/* 0 and sets *reg from "2.20.5"; -1 when not a version. */
int ev_nccl_parse_version(const char *v, enum ev_nccl_regime *reg);

/* What a CALC between two operations of a chain stands for. */
enum ev_nccl_compute { EV_NCCL_COMP_GAPS = 0, EV_NCCL_COMP_KERNELS = 1, EV_NCCL_COMP_NONE = 2 };

/* ------------------------------------------------------------------ */
/* Presets: what NCCL's tuning model needs and a trace does not show.  */

enum ev_nccl_arch { EV_NCCL_VOLTA, EV_NCCL_AMPERE, EV_NCCL_HOPPER, EV_NCCL_BLACKWELL };

/* RCCL's own cost tables for one GPU architecture (a row of its
 * rcclTuningModel, docs/nccl-model.md section 14).  Indices: algorithm
 * [ring, tree], protocol [LL, LL128, SIMPLE], link [xGMI, PCI, network]. */
#define EV_RCCL_NCORR 27 /* correction factors, by log2(bytes / 64), the last for all above */
struct ev_rccl_tables {
	double base_lat[2][3];        /* us */
	double hw_lat[3][2][3];       /* us per hop */
	double bw_ratio[2][2][3];     /* [up to 2 nodes, more][algo][proto], scales the bus bandwidth */
	double tree_corr[3][EV_RCCL_NCORR]; /* scales tree bandwidth, any node count */
	double ring_corr[3][EV_RCCL_NCORR]; /* scales ring bandwidth across nodes */
	int no_tree_simple_1node;     /* single node: TREE/SIMPLE not a candidate */
	double ring_ll_rooted_1node;  /* single node: ring LL Broadcast/Reduce bandwidth factor (0: none) */
};

struct ev_nccl_preset {
	const char *name;
	const char *vendor;        /* "nvidia" or "amd" */
	enum ev_nccl_arch arch;    /* row of the bandwidth tables */
	int nvlink;                /* intra-node links are NVLink/xGMI (else PCI) */
	unsigned search_ch;        /* topology-search channels; comm channels = 2x (cap 64) */
	double bw_intra, bw_inter; /* GB/s per channel */
	int ll128;                 /* LL128 enabled by default */
	unsigned p2p_per_peer_intra, p2p_per_peer_inter;
	unsigned p2p_nchannels;    /* p2p channels of a communicator (NCCL p2pnChannels) */
	const struct ev_rccl_tables *rccl; /* RCCL's cost model instead of NCCL's (NULL: NCCL's) */
};
size_t ev_nccl_npresets(void);
const struct ev_nccl_preset *ev_nccl_preset_at(size_t i);
const struct ev_nccl_preset *ev_nccl_preset_find(const char *name); /* case-insensitive; NULL */
/* The preset for a device description ("NVIDIA H100 80GB HBM3",
 * "AMD Instinct MI300X", "gfx90a", "sm_80"...), or NULL. */
const struct ev_nccl_preset *ev_nccl_preset_for_device(const char *desc);
/* How that choice is named in messages: "device", or what stands in for a
 * device whose own tuning is not modelled, said in the source text of its rule. */
const char *ev_nccl_preset_device_source(const char *desc);

/* ------------------------------------------------------------------ */
/* Latency table.                                                      */

enum ev_nccl_prim { EV_NCCL_P_SEND, EV_NCCL_P_RECV, EV_NCCL_P_RRS, EV_NCCL_P_RRCS, EV_NCCL_P_RCS, EV_NCCL_P_RRC,
	EV_NCCL_NPRIM };
const char *ev_nccl_prim_name(enum ev_nccl_prim p); /* NPKit's name without prefix */

typedef struct ev_nccl_lat ev_nccl_lat;
/* Load an npkit2lat table.  EV_OK; EV_ERR_IO (errno set); EV_ERR_FORMAT or
 * EV_ERR_LIMIT with a message ("line 3: bad row") in err; EV_ERR_NOMEM. */
int ev_nccl_lat_load(ev_nccl_lat **L, const char *path, char *err, size_t errlen);
/* An empty table to fill with ev_nccl_lat_add (then ev_nccl_lat_seal). */
ev_nccl_lat *ev_nccl_lat_new(void);
int ev_nccl_lat_add(ev_nccl_lat *L, enum ev_nccl_prim p, unsigned proto, uint64_t size, double mean_ns);
/* Sort, check duplicates.  EV_OK or EV_ERR_FORMAT (message in err). */
int ev_nccl_lat_seal(ev_nccl_lat *L, char *err, size_t errlen);
/* Cost in ns of a primitive on bytes: linear between tabulated sizes,
 * the first mean below, the slope of the last two beyond; LL128 falls
 * back to LL; unmeasured composites are reduce + copy.  0 without a table. */
double ev_nccl_lat_cost(const ev_nccl_lat *L, enum ev_nccl_prim p, unsigned proto, uint64_t bytes);
void ev_nccl_lat_free(ev_nccl_lat *L);

/* ------------------------------------------------------------------ */
/* NPKit summaries -> latency rows (npkit2lat).                        */

/* The longest time a sample may be, in ns: 2^53 (104 days), past which a
 * double no longer holds every integer; larger values are no primitive's
 * time but a corrupt or foreign file. */
#define EV_NPKIT_MAX_NS 9007199254740992.0

struct ev_npkit_row {
	const char *prim;       /* event name without the NPKIT_EVENT_(GPU_) prefix (shared by its rows) */
	unsigned proto;
	uint64_t size, n;
	double mean, p10, p50, p90, min, max;
};
typedef struct ev_npkit ev_npkit;
ev_npkit *ev_npkit_new(void);
void ev_npkit_free(ev_npkit *t);
/* Protocol from a file name (*LL128*, *Simple*, a word LL), 0 if none. */
unsigned ev_npkit_proto_from_name(const char *path);
const char *ev_npkit_strip_prefix(const char *event);
/* Add every event of one summary file (max_object: largest event object).
 * EV_OK; EV_ERR_IO (errno); EV_ERR_FORMAT/EV_ERR_LIMIT with the message in
 * err; EV_ERR_NOMEM.  nevents receives the events read. */
int ev_npkit_read(ev_npkit *t, const char *path, unsigned proto, uint64_t max_object, size_t *nevents, char *err,
                  size_t errlen);
/* Add one event's {"<bytes>": [ns, ...]} object (for tests and fuzzers). */
int ev_npkit_add_event(ev_npkit *t, unsigned proto, const char *event, const char *text, size_t len, char *err,
                       size_t errlen);
/* Does any row added since row `first` have primitive prim? */
int ev_npkit_has(const ev_npkit *t, size_t first, const char *prim);
size_t ev_npkit_count(const ev_npkit *t);
/* What the rows added since `first` say about their unit.  Read as ns,
 * the fastest primitive at the largest size moves size / mean bytes per
 * ns (= GB/s), and the smallest mean is a primitive's shortest time.  The
 * rule: microseconds when that bandwidth passes EV_NPKIT_US_GBPS (no GPU
 * primitive moves a TB/s) or the smallest mean is below EV_NPKIT_US_MIN_NS
 * (none finishes in under 10 ns); else nanoseconds.  Real summaries in ns
 * give at most 95 GB/s and at least 91 ns; the same in us at least 15,000
 * GB/s and at most 0.9 ns. */
#define EV_NPKIT_US_GBPS 1000.0
#define EV_NPKIT_US_MIN_NS 10.0
struct ev_npkit_unit {
	int us;                 /* 1: the rule says microseconds */
	int known;              /* 0: no row with a mean above 0 (taken as ns) */
	const char *prim;       /* the fastest primitive at the largest size */
	uint64_t size;          /* the largest size */
	double gbps;            /* size / its mean, the mean read as ns */
	double min_mean;        /* the smallest mean above 0, read as ns */
};
void ev_npkit_guess_unit(const ev_npkit *t, size_t first, struct ev_npkit_unit *u);
/* Multiply the times of the rows added since `first` by f (1000: us to
 * ns).  EV_OK, or EV_ERR_RANGE with the message in err when a time would
 * pass EV_NPKIT_MAX_NS. */
int ev_npkit_scale(ev_npkit *t, size_t first, double f, char *err, size_t errlen);
/* Sort (protocol, primitive, size) and write the TSV table. */
int ev_npkit_write(ev_npkit *t, ev_output *out);

/* ------------------------------------------------------------------ */
/* Tuning: algorithm, protocol, channels, threads, chunking.           */

uint64_t ev_nccl_wire_bytes(unsigned proto, uint64_t data);
/* NCCL's estimated time (us) of (algo, proto) for nbytes (section 14 of the model). */
double ev_nccl_model_time(const struct ev_nccl_preset *pr, unsigned coll, unsigned algo, unsigned proto,
                          uint64_t nbytes, uint32_t nranks, uint32_t nnodes);

/* What the schedule of one collective on one rank needs. */
struct ev_nccl_plan {
	unsigned coll;          /* enum ev_coll */
	uint32_t nranks, nnodes;
	uint64_t T;             /* element size used for chunking */
	uint64_t count;         /* elements (per rank for AllGather/ReduceScatter) */
	uint64_t nbytes;        /* NCCL's nBytes for tuning */
	unsigned algo, proto;   /* in: from the trace (0 = unknown); out: used */
	unsigned nch, nthreads; /* likewise */
	int guessed_algo, guessed_proto; /* out: the chooser picked them */
	uint64_t step_size;     /* buffer step, wire bytes */
	unsigned chunk_steps, slice_steps;
	uint64_t chunk_bytes;   /* data bytes per chunk */
};

/* Allowed algorithms and protocols per collective (bit = enum value). */
struct ev_nccl_masks {
	uint32_t algo[EV_NCCL_NCOLL], proto[EV_NCCL_NCOLL];
	int algo_given, proto_given;
};
void ev_nccl_masks_default(struct ev_nccl_masks *m);
/* NCCL_ALGO / NCCL_PROTO syntax: "ring,tree;allreduce:tree", "^LL128". 0 or -1. */
int ev_nccl_parse_algos(const char *arg, struct ev_nccl_masks *m);
int ev_nccl_parse_protos(const char *arg, struct ev_nccl_masks *m);

/* Fill algo/proto (those still 0), channels and threads.  NULL or the
 * reason nothing can be chosen. */
const char *ev_nccl_choose(struct ev_nccl_plan *pl, const struct ev_nccl_preset *pr, const struct ev_nccl_masks *m,
                           enum ev_nccl_regime reg, unsigned nchannels_opt, unsigned nthreads_opt);
/* Step size, chunk/slice steps and chunk bytes (step_size/chunk_steps/
 * slice_steps already set are kept: trace values). */
void ev_nccl_chunking(struct ev_nccl_plan *pl, enum ev_nccl_regime reg);

/* One channel's part of a collective, in elements. */
struct ev_nccl_part { uint64_t off, cnt, cc, lcc; };
/* Parts for regimes B and C; returns the number of channels with work. */
unsigned ev_nccl_split(const struct ev_nccl_plan *pl, enum ev_nccl_regime reg, struct ev_nccl_part pt[EV_NCCL_MAXCH]);
/* Slices of a ring step of nelem elements (SIMPLE: 2, else 1). */
int ev_nccl_slices(const struct ev_nccl_plan *pl, uint64_t nelem, uint64_t out[2]);

/* NCCL's binary tree over n nodes (ncclGetBtree): links of node r. */
void ev_nccl_btree(int n, int r, int *up, int *d0, int *d1);

/* A send/recv split into parts, one per channel (section 11). */
struct ev_nccl_p2p_part { unsigned channel; uint64_t bytes, chunk; };
struct ev_nccl_p2p {
	unsigned nparts, proto;
	struct ev_nccl_p2p_part part[EV_NCCL_MAXCH];
};
/* bytes between comm ranks me and peer of an n-rank communicator spread
 * over nnodes; intra = same node; p2p_nch = the communicator's p2p
 * channels (0: the preset's). */
void ev_nccl_p2p_plan(struct ev_nccl_p2p *pp, const struct ev_nccl_preset *pr, uint64_t bytes, int is_send,
                      uint32_t me, uint32_t peer, uint32_t n, uint32_t nnodes, int intra, unsigned p2p_nch);

/* ------------------------------------------------------------------ */
/* Scheduler.                                                          */

struct ev_nccl_params {
	enum ev_nccl_regime regime;   /* AUTO: #meta nccl_version, else >= 2.22 */
	struct ev_nccl_masks masks;
	unsigned nchannels, nthreads; /* when the trace has none (0: model) */
	int trace_params;             /* use algo/proto/channels/threads of the records */
	const struct ev_nccl_preset *preset; /* NULL: from device properties, else h100 */
	unsigned ranks_per_node;      /* 0: from #rank node=/host= */
	int intra_send;               /* intra-node messages as real SEND/RECV */
	double intra_bw;              /* bytes per ns of intra-node CALCs */
	enum ev_nccl_compute compute;
	int lead_in;                  /* also the compute before a chain's first op */
	int send_delivered;           /* a channel's send waits for the previous one's
	                                 delivery (old model); default: its posting,
	                                 within NCCL's FIFO of NCCL_STEPS slots */
	int merge_streams;            /* one chain per rank */
	int keep_coll;                /* also emit the COLL/P2P/CHAN records */
	int lenient;                  /* skip bad records (EV_NCCL_SKIPPED) */
	int have_jitter;
	uint64_t seed;
	uint64_t max_messages;        /* per record and rank (0: default) */
};
void ev_nccl_params_default(struct ev_nccl_params *p);

/* Where the schedule goes.  emit receives every output record (its
 * status stops the expansion and is returned); warn, if set, receives
 * each kind of warning once (counts: ev_nccl_sched_stats). */
struct ev_nccl_sink {
	int (*emit)(void *ctx, const struct ev_rec *r);
	void (*warn)(void *ctx, const char *msg);
	/* optional: every message (bytes = wire bytes, also for intra-node
	 * handshakes) with its operation's plan, for flow writers */
	int (*message)(void *ctx, const struct ev_rec *r, const struct ev_nccl_plan *pl);
	/* optional: an operation's expansion on one rank is complete */
	int (*op_done)(void *ctx, const struct ev_rec *op, const struct ev_nccl_plan *pl);
	void *ctx;
};

struct ev_nccl_stats {
	uint64_t colls, p2ps, sends, recvs, calcs, deps, skipped, dropped_deps, approx;
	uint64_t guessed;             /* operations whose algo or proto was chosen */
	uint64_t partial;             /* collectives seen on fewer ranks than their comm */
	uint64_t lead_in_dropped;     /* chains whose compute before the first op was left out */
	uint64_t p2p_recorded;        /* p2p ops split as their chan records say */
	const char *preset;           /* the preset used */
	const char *preset_source;    /* "option", "device", "default" */
};

typedef struct ev_nccl_sched ev_nccl_sched;
/* meta: the metadata store the stream's reader fills (outlives s); lat
 * may be NULL.  EV_OK or EV_ERR_NOMEM. */
int ev_nccl_sched_new(ev_nccl_sched **s, const struct ev_nccl_params *p, const ev_meta *meta, const ev_nccl_lat *lat,
                      const struct ev_nccl_sink *sink);
/* Feed the next record of the stream (time order; recno for messages).
 * *pass = 1 when the caller should pass it through (not COLL/P2P/CHAN/DEP).
 * Returns EV_OK, EV_NCCL_SKIPPED (lenient), EV_ERR_ORDER, EV_ERR_FORMAT or
 * EV_ERR_LIMIT (ev_nccl_sched_errmsg, ev_nccl_sched_err_recno),
 * EV_ERR_NOMEM, or the emit callback's status. */
int ev_nccl_sched_feed(ev_nccl_sched *s, const struct ev_rec *r, uint64_t recno, int *pass);
/* Expand the pending operation (at the end of the stream). */
int ev_nccl_sched_flush(ev_nccl_sched *s);
const char *ev_nccl_sched_errmsg(const ev_nccl_sched *s);
uint64_t ev_nccl_sched_err_recno(const ev_nccl_sched *s);
/* Counters; partial is computed by ev_nccl_sched_finish. */
const struct ev_nccl_stats *ev_nccl_sched_stats(const ev_nccl_sched *s);
void ev_nccl_sched_finish(ev_nccl_sched *s);
/* Chooser decisions so far: line i as "allreduce 1048576 B on 8 ranks -> ring/ll"
 * with a count; NULL past the end. */
const char *ev_nccl_sched_decision(const ev_nccl_sched *s, size_t i, uint64_t *count);
/* Communicator i (0..): members that never appeared in the stream (what a
 * missing export looks like) as "communicator ID (N ranks): no records of
 * rank 5, 7" in buf; returns how many, -1 past the last communicator. */
int ev_nccl_sched_absent(const ev_nccl_sched *s, size_t i, char *buf, size_t n);
void ev_nccl_sched_free(ev_nccl_sched *s);

/* ------------------------------------------------------------------ */
/* Flows: NCCL_GP-style JSONL (nccl-flows).                            */

typedef struct ev_nccl_flows ev_nccl_flows;
/* A sink writing one JSON line per message ("kind":"step") and one per
 * (operation, channel) ("kind":"proxy") to out. */
int ev_nccl_flows_new(ev_nccl_flows **f, ev_output *out);
/* Forward the sink's message and op_done callbacks here. */
int ev_nccl_flows_message(ev_nccl_flows *f, const struct ev_rec *r, const struct ev_nccl_plan *pl);
int ev_nccl_flows_op_done(ev_nccl_flows *f, const struct ev_rec *op, const struct ev_nccl_plan *pl);
/* Write what is still pending (at the end of the stream). */
int ev_nccl_flows_close(ev_nccl_flows *f);
void ev_nccl_flows_free(ev_nccl_flows *f);

#endif /* EV_NCCL_SCHED_H */
