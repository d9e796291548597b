/* SPDX-License-Identifier: MIT */
/*
 * ev/goal.h - GOAL schedules for the LogGOPSim simulator (lib/goal/).
 *
 * An ev_goal turns the SEND, RECV and CALC records of a schedule (with the
 * DEP edges that follow each op, as coll-expand writes them) into GOAL:
 * the text grammar (`num_ranks N`, one `rank r { ... }` block per rank) or
 * txt2bin's binary layout (docs/ev2goal.md describes both).  On the way it
 * checks what LogGOPSim would otherwise trip over: op ids increasing per
 * rank, dependencies only on earlier defined ops, cpu and nic within their
 * 8-bit fields, and (optionally) that every send has a receive with the same
 * (source, destination, tag, size) in the same FIFO order.
 *
 * Memory grows with ranks, lanes and messages in flight, never with the
 * number of ops: each rank's part is spooled to one unnamed temporary file
 * as the records arrive, and an op's id is remembered only inside a sliding
 * window of recent ops.
 *
 * Like the rest of the library, nothing here prints or exits: functions
 * return EV_OK or a negative EV_ERR_* status, and the message for the
 * caller is in a struct ev_goal_error.
 */
#ifndef EV_GOAL_H
#define EV_GOAL_H

#include "ev/stream.h"

#define EV_GOAL_MAGIC 4223u         /* first 8 bytes of a binary schedule */
#define EV_GOAL_NODE_BYTES 39       /* one op in the binary layout */
#define EV_GOAL_MAX_RANKS (1u << 20) /* ranks and peers must be below this */
#define EV_GOAL_MAX_WINDOW (1u << 28)

/* What went wrong, for the caller's message. */
struct ev_goal_error {
	int status;    /* the EV_ERR_* code returned */
	int in_output; /* 1: writing the caller's ev_output failed; status is its
	                  code and msg is empty (the caller names its output) */
	char msg[768]; /* "FILE: record N: message", "FILE: line N: message",
	                  "PATH: strerror" or a plain message */
};

/* --ranks: a list of ranges ("0-7,12") or a residue class ("K%N"). */
struct ev_goal_range { uint32_t lo, hi; };
struct ev_goal_ranks {
	struct ev_goal_range *r;
	size_t n;
	uint32_t k, mod; /* mod != 0: the ranks r with r % mod == k */
};
/* Parse arg into *s (zeroed first).  EV_OK, EV_ERR_ARG, EV_ERR_NOMEM. */
int ev_goal_ranks_parse(struct ev_goal_ranks *s, const char *arg);
/* 1 if rank r is selected (an empty selection selects every rank). */
int ev_goal_ranks_has(const struct ev_goal_ranks *s, uint32_t r);
int ev_goal_ranks_empty(const struct ev_goal_ranks *s);
void ev_goal_ranks_free(struct ev_goal_ranks *s);

/* NIC of a send or receive. */
enum ev_goal_nic {
	EV_GOAL_NIC_ZERO,    /* every op on NIC 0 (ATLAHS) */
	EV_GOAL_NIC_CHANNEL, /* the record's channel */
	EV_GOAL_NIC_RAIL,    /* the rank's GPU index inside its node */
};
/* cpu of an op, from the record's stream (its lane). */
enum ev_goal_cpu {
	EV_GOAL_CPU_DENSE, /* lanes numbered 0, 1, ... in order of appearance */
	EV_GOAL_CPU_LANE,  /* the stream as is */
};

struct ev_goal_opts {
	int binary;               /* txt2bin's layout instead of text */
	int check;                /* FIFO send/recv matching [1] */
	int keep_sync;            /* keep zero-length calcs [0: fold them] */
	enum ev_goal_nic nic;
	uint32_t nic_mod;         /* NIC modulo this, 0: none */
	enum ev_goal_cpu cpu;
	uint32_t num_ranks;       /* 0: the largest rank or peer + 1 */
	uint32_t ranks_per_node;  /* for EV_GOAL_NIC_RAIL; 0: from meta */
	uint32_t window;          /* ops per rank dependencies may reach back [4096] */
	const char *spool_parent; /* the (unnamed) spool file is made there */
	const struct ev_goal_ranks *ranks; /* emit only these (NULL: all) */
	const ev_meta *meta;      /* #rank host/node for EV_GOAL_NIC_RAIL */
	int estimate;             /* count lines_atlahs_style (costs time) */
};
void ev_goal_opts_init(struct ev_goal_opts *o);

typedef struct ev_goal ev_goal;

/* Make a schedule builder and its spool file.  *g is set whenever
 * memory allows, also on failure (read its error, then ev_goal_free). */
int ev_goal_new(ev_goal **g, const struct ev_goal_opts *o);
/* Name of the input the following records come from (for messages). */
void ev_goal_source(ev_goal *g, const char *name);
/* One record, recno its number in the source.  Types other than SEND, RECV,
 * CALC and DEP are counted and ignored. */
int ev_goal_add(ev_goal *g, const struct ev_rec *rec, uint64_t recno);
/* Every record of r into g, numbered on from *recno (updated).  EV_OK at
 * the end of r; else the builder's failure (see ev_goal_error), or the
 * reader's, in which case *reader_rc is its status (for the caller's
 * message about r).  progress, if not NULL, gets the record count about
 * every 65536 records.  With a second core, reading and decoding run on a
 * thread of their own (not for --nic=rail, which reads r's metadata). */
int ev_goal_feed(ev_goal *g, ev_reader *r, uint64_t *recno, int *reader_rc, void (*progress)(void *, uint64_t),
                 void *ctx);
/* Records handed to g from the caller's thread while g is built on a
 * thread of its own, so that making the records and building overlap on
 * two cores.  ev_goal_pipe_start sets *p to NULL when no thread could start
 * (or for --nic=rail, whose builder reads the caller's metadata): the
 * caller then uses ev_goal_add.  While a pipe runs, g is the builder
 * thread's: read its error or anything else only after ev_goal_pipe_sync
 * or ev_goal_pipe_end. */
typedef struct ev_goal_pipe ev_goal_pipe;
int ev_goal_pipe_start(ev_goal *g, ev_goal_pipe **p);
/* As ev_goal_add; a failure of the builder is returned once seen (it may
 * come from a record handed over earlier: ev_goal_error tells which). */
int ev_goal_pipe_add(ev_goal_pipe *p, const struct ev_rec *rec, uint64_t recno);
/* Wait until the builder added every record handed over: EV_OK or its
 * failure. */
int ev_goal_pipe_sync(ev_goal_pipe *p);
/* ev_goal_pipe_sync, then stop the thread and free p (NULL: EV_OK). */
int ev_goal_pipe_end(ev_goal_pipe *p);
/* Stop the thread without adding what is left, and free p (NULL-safe). */
void ev_goal_pipe_free(ev_goal_pipe *p);
/* After the last record: complete every rank, check that no message is left
 * unmatched, fix num_ranks. */
int ev_goal_finish(ev_goal *g);
/* num_ranks of the schedule (after ev_goal_finish). */
uint32_t ev_goal_nranks(const ev_goal *g);
/* The whole schedule to out (after ev_goal_finish; not closed here). */
int ev_goal_write(ev_goal *g, ev_output *out);
/* The selected ranks' parts as dir/rank_<r>.goal (.bin) (after finish). */
int ev_goal_write_parts(ev_goal *g, const char *dir);
const struct ev_goal_error *ev_goal_error(const ev_goal *g);
/* Free everything (the spool file has no name: nothing is left on disk,
 * also when the process is killed). */
void ev_goal_free(ev_goal *g);

/* Counts for --stats. */
struct ev_goal_stats {
	uint32_t ranks, lanes, max_cpu, max_nic;
	uint64_t ops, send, recv, calc, requires, irequires, bytes_sent;
	uint64_t folded_zero_calcs, duplicate_deps, open_messages_max, ignored_records;
	uint64_t lines;              /* lines of the text form */
	uint64_t lines_atlahs_style; /* lines ATLAHS's emitter would write
	                                (0 unless opts.estimate) */
	uint64_t hist[66];           /* sends by bit length of their size */
};
struct ev_goal_rank_stats { uint64_t sends, recvs, calcs, bytes_sent; };
void ev_goal_get_stats(const ev_goal *g, struct ev_goal_stats *st);
void ev_goal_get_rank_stats(const ev_goal *g, uint32_t rank, struct ev_goal_rank_stats *st);

/* Join the parts rank_0 .. rank_<N-1> (.goal, or .bin when binary) in dir
 * into one schedule on out.  expect != 0: exactly that many parts; else as
 * many as there are, and a part after a gap is an error.  Every part is
 * checked (the grammar ev2goal writes, rank order, labels, peers below N,
 * field widths; binary: section layout) before a byte of it is copied;
 * *nparts receives N. */
int ev_goal_join(const char *dir, int binary, uint32_t expect, ev_output *out, uint32_t *nparts,
                 struct ev_goal_error *err);
/* Name of a part: dir/rank_<r>.goal or .bin.  EV_OK or EV_ERR_RANGE when
 * it does not fit n bytes. */
int ev_goal_part_name(char *buf, size_t n, const char *dir, uint32_t r, int binary);

#endif /* EV_GOAL_H */
