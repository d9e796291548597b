/* SPDX-License-Identifier: MIT */
/*
 * nccl/sched_int.h - the scheduler's state, shared by its files (private to
 * lib/nccl): sched.c (streams, chains, communicators, records) and
 * expand.c (one collective or send/recv on one rank).
 */
#ifndef EV_NCCL_SCHED_INT_H
#define EV_NCCL_SCHED_INT_H

#include <stdarg.h>

#include "ev/nccl_sched.h"
#include "nccl/util.h"

/* One chain of operations: a CUDA stream of a rank (or the whole rank). */
struct chain {
	uint32_t key;          /* CUDA stream */
	uint32_t lane_base;    /* first schedule lane of this chain */
	int have_prev;
	int64_t prev_end;      /* end of the last op (observed) */
	int64_t group_ts;      /* ts of the current group */
	uint32_t start;        /* op the current group's heads wait for */
	int have_start;
	uint32_t *tails;       /* ops the next group must wait for */
	size_t ntails, tcap;
	uint64_t kernel_ns;    /* compute kernel time since prev_end */
};

struct rank_st {
	uint32_t rank;
	int used;              /* a record of this rank was read */
	uint32_t next_id;
	int64_t first_ts;
	struct chain *chains;
	size_t nchains;
	int node;              /* node index, -1 unknown */
	int node_known;
	uint64_t kernel_ns;    /* compute kernel time seen on this rank */
};

/* A communicator as needed for expansion. */
struct comm_st {
	uint64_t id;
	uint32_t idx;          /* tag index: by id among the stream's communicators */
	uint32_t n;
	int32_t *ranks;        /* comm rank -> global */
	struct ev_map pos;     /* global rank + 1 -> comm rank */
	uint32_t nnodes;
	int32_t *loc_prev, *loc_next; /* previous/next member on the same node, -1 */
	int32_t *node_ix;      /* node of each member, in order of first member */
	int32_t *heads;        /* first member of each node */
	uint32_t nheads;
	uint32_t nrings;       /* channels with a #ring line (0..nrings-1) */
	uint32_t bad_ring;     /* channel + 1 of a ring naming a non-member */
	int32_t bad_rank;
	uint32_t ntrees;
	unsigned p2p_nch;      /* #comm p2p_channels=, 0 unknown */
	/* consistency window: seq -> (bytes, seen) */
	uint64_t win_base;
	struct win { uint64_t bytes; uint32_t seen; uint32_t op; int used; } *win;
	uint32_t wcap;
	uint64_t lost;         /* collectives dropped from the window (seq jumps) */
};

struct decision {
	unsigned coll, algo, proto;
	uint32_t nranks, nnodes;
	int guessed_algo, guessed_proto;
	uint64_t minb, maxb, count;
};

struct ev_nccl_sched {
	struct ev_nccl_params p;
	const ev_meta *meta;
	const ev_nccl_lat *lat;
	struct ev_nccl_sink sink;
	const struct ev_nccl_preset *preset;
	enum ev_nccl_regime regime;
	struct ev_map rank_ix;      /* global rank + 1 -> index + 1 into ranks */
	struct rank_st **ranks;
	size_t nranks, rcap;
	struct comm_st **comms;
	size_t ncomms;
	struct ev_map comm_ix;      /* comm id -> index + 1 (id 0 kept apart) */
	int comm0_ix;               /* index + 1 of comm id 0 */
	struct ev_map tag_used;     /* tag index + 1 already given */
	struct ev_map tagc;         /* (dir, src, dst, comm, ch) -> counter */
	char **nodes;               /* node names, index = node id */
	size_t nnodes;
	uint64_t rng;
	struct ev_nccl_stats stats;
	uint64_t warned[16];
	struct decision *dec;
	size_t ndec;
	char decbuf[256];
	/* the pending COLL/P2P and its CHAN records */
	struct ev_rec pend;
	int have_pend;
	uint64_t pend_recno;
	struct ev_rec chan[EV_NCCL_MAXCH];
	unsigned nchan;
	uint64_t chan_dropped;
	int64_t last_ts;
	int started;
	char err[512];
	uint64_t err_recno;
	uint64_t msg_budget;        /* messages left for the record being expanded */
};

/* The collective being expanded on one rank. */
struct cur {
	struct ev_rec base;     /* template for every output record */
	struct ev_rec dep;      /* template for DEP records */
	struct rank_st *rk;
	struct chain *ch;
	struct comm_st *comm;
	uint32_t me;            /* global rank */
	int mc;                 /* comm rank */
	struct ev_nccl_plan pl;
	uint32_t lane0;
	int has_start;
	uint32_t start;
	int32_t last_peer;      /* one-entry cache of the peer's node test (-2: empty) */
	int last_intra;
};

/* Warning kinds (each reported once through the sink). */
enum { W_ALLTOALLV, W_NOT_EXPANDED, W_APPROX, W_GUESS, W_SEQ_JUMP, W_CHAN_ALONE, W_PRESET, W_LEAD_IN, W_NODES };

/* sched.c */
int sched_fail(struct ev_nccl_sched *s, int status, const char *fmt, ...) EV_PRINTF(3, 4);
void sched_warn(struct ev_nccl_sched *s, int kind, const char *fmt, ...) EV_PRINTF(3, 4);
int sched_node_of(struct ev_nccl_sched *s, uint32_t r);
int sched_same_node(struct ev_nccl_sched *s, int32_t a, int32_t b);
int sched_comm_rank(const struct comm_st *c, uint32_t g);
int sched_tail_add(struct chain *c, uint32_t id);
int sched_put_calc(struct ev_nccl_sched *s, struct cur *c, unsigned kind, uint32_t lane, uint64_t bytes, double ns,
                   const uint32_t *deps, int ndeps, uint16_t ch, uint32_t *id);
int sched_put_msg(struct ev_nccl_sched *s, struct cur *c, int is_send, int32_t peer, unsigned ch, uint32_t lane,
                  uint64_t data, uint16_t flags, uint32_t step, const uint32_t *deps, int ndeps, unsigned ireq,
                  uint32_t *id, uint32_t *after);

/* NCCL's FIFO depth per connection (NCCL_STEPS). */
#define SCHED_FIFO_STEPS 8

/* The sends of one connection (a channel's peer) in program order.  NCCL
 * posts send k once send k-1 is posted and a FIFO slot is free: send k
 * irequires send k-1 and requires send k-w, the send whose slot it reuses
 * (under LogGOPSim's rendezvous a send ends when its receive completes,
 * i.e. when the slot is consumed).  w = NCCL_STEPS / steps per message. */
struct sendq {
	uint32_t last;          /* op to start after: the last send (or its intra CALC) */
	int has_last;
	unsigned w;             /* messages in flight; 1 = wait for delivery */
	uint32_t nsent;
	uint32_t win[SCHED_FIFO_STEPS];
};

void sched_sendq_init(const struct ev_nccl_sched *s, struct sendq *q, unsigned steps_per_msg);
/* Appends the queue's dependencies (at most 2) to d[k..] and their
 * irequires bits (bit i = d[i]) to *ireq; returns the new count. */
int sched_sendq_deps(const struct sendq *q, uint32_t *d, int k, unsigned *ireq);
void sched_sendq_push(struct sendq *q, uint32_t send, uint32_t after);

void sched_note_decision(struct ev_nccl_sched *s, const struct cur *c);

/* expand.c */
int sched_ring_of(struct ev_nccl_sched *s, struct cur *c, unsigned ch, const int32_t **order, int *pos);
struct tnode { int32_t up, down[3]; };
int sched_tree_of(struct ev_nccl_sched *s, struct cur *c, unsigned ch, struct tnode *t);
int sched_coll(struct ev_nccl_sched *s, struct cur *c, const struct ev_rec *r);
int sched_p2p(struct ev_nccl_sched *s, struct cur *c, const struct ev_rec *r);

#endif /* EV_NCCL_SCHED_INT_H */
