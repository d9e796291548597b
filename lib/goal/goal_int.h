/* SPDX-License-Identifier: MIT */
/*
 * goal_int.h - what the files of lib/goal/ share: spool files, the message
 * matching table and the per-rank state of an ev_goal.  Not installed.
 */
#ifndef EV_GOAL_INT_H
#define EV_GOAL_INT_H

#include <stdarg.h>
#include <string.h>

#include "ev/goal.h"

#define NONE32 0xFFFFFFFFu

/* Little-endian fields as single loads and stores (ev_put32 writes byte by
 * byte; these are on the path of every node and edge). */
static inline void le_put32(unsigned char *p, uint32_t v)
{
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
	v = __builtin_bswap32(v);
#endif
	memcpy(p, &v, 4);
}
static inline void le_put64(unsigned char *p, uint64_t v)
{
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
	v = __builtin_bswap64(v);
#endif
	memcpy(p, &v, 8);
}
static inline uint32_t le_get32(const unsigned char *p)
{
	uint32_t v;
	memcpy(&v, p, 4);
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
	v = __builtin_bswap32(v);
#endif
	return v;
}
#define MAX_NODES ((1u << 29) - 1)

/* ---- arena.c: the builder's arrays ------------------------------------ */

/* Blocks of powers of two out of chunks reserved with huge pages advised;
 * freed blocks are kept by size and used again (arena.c says why). */
struct goal_chunk { unsigned char *base; size_t size; int dedicated; };
struct goal_free;
struct goal_mblock;
struct goal_arena {
	struct goal_chunk *chunks;  /* every reservation, sorted by address */
	size_t nchunks, capchunks;
	unsigned char *cur;         /* the unused rest of the newest chunk */
	size_t left, next_chunk;
	struct goal_free *free[64]; /* freed blocks by log2 of their size */
	size_t idle;                /* bytes of freed blocks still backed (of GIVE_BACK or more) */
	struct goal_mblock *mallocd; /* blocks from malloc (reservations failed) */
	int no_reserve;
};
void goal_arena_init(struct goal_arena *a);
/* A block of at least `bytes` (zero-filled when zero is set), or NULL. */
void *goal_arena_alloc(struct goal_arena *a, size_t bytes, int zero);
/* Give back a block with the size it was asked with. */
void goal_arena_free(struct goal_arena *a, void *p, size_t bytes);
/* Every block at once. */
void goal_arena_release(struct goal_arena *a);

/* ---- spool.c: rank parts in one unnamed file ---------------------------- */

/* Every spool of a builder shares one temporary file, unlinked as soon as it
 * is made (nothing to clean up after a signal, one inode whatever the number
 * of ranks).  A spool fills its buffer and writes it as a block; each block
 * has a slot of the spool's size (header and buffer), aligned to that size,
 * and the slot of a spool's next block is taken when a block is written:
 * its header already holds where the next one goes.  A spool costs a few
 * words of memory, not a list of its blocks, and a block is one write and
 * one read. */
struct spoolfile {
	int fd;
	uint64_t end;  /* bytes in the file, slots taken included */
	char *name;    /* for messages: where it was made */
};
#define SPOOL_HDR 16   /* block header: next slot (8), payload length (4), 0 (4) */
#define SPOOL_NONE UINT64_MAX

struct spool {
	struct spoolfile *f;
	struct goal_arena *a; /* where buf comes from */
	unsigned char *buf;   /* cap bytes, the block header's room before it */
	size_t len, cap;
	uint64_t first;       /* offset of its first block */
	uint64_t next;        /* the slot its next block goes to */
	uint64_t bytes;       /* payload written to the file so far */
};

/* Reading a spool's blocks back in order. */
struct spool_iter {
	uint64_t off;  /* the next block */
	uint64_t left; /* payload bytes still to read */
};

int spoolfile_open(struct spoolfile *f, const char *dir);
void spoolfile_close(struct spoolfile *f);
/* slot: bytes of each block in the file, a power of two of at least
 * 2 * SPOOL_HDR; the buffer holds slot - SPOOL_HDR bytes (cap).  It comes
 * from a and goes with it (goal_arena_release). */
int spool_init(struct spool *s, struct spoolfile *f, struct goal_arena *a, size_t slot);
int spool_flush(struct spool *s);
/* The last write: a spool that never reached the file stays in memory;
 * else the rest is written as its last block. */
int spool_finish(struct spool *s);
static inline int spool_in_memory(const struct spool *s) { return s->bytes == 0; }
/* Append n bytes (n is at most a line or a node, far below the buffer). */
static inline int spool_put(struct spool *s, const void *p, size_t n)
{
	if (s->len + n > s->cap && spool_flush(s))
		return -1;
	memcpy(s->buf + s->len, p, n);
	s->len += n;
	return 0;
}
/* Space for n more bytes at s->buf + s->len (flushing first if needed). */
static inline unsigned char *spool_room(struct spool *s, size_t n)
{
	if (s->len + n > s->cap && spool_flush(s))
		return NULL;
	return s->buf + s->len;
}
/* A spool's blocks in order: spool_iter_start, then each call of
 * spool_next_block reads the next block's payload into buf (cap >= the
 * spool's buffer size) and returns its length, 0 after the last, -1 on a
 * read error (errno). */
void spool_iter_start(const struct spool *s, struct spool_iter *it);
long spool_next_block(const struct spool *s, struct spool_iter *it, unsigned char *buf, size_t cap);
/* Copy a whole spool (memory or file) to out: 0, or -1 with *werr = the
 * ev_output status (0 for a read error, errno set). */
int spool_copy(const struct spool *s, ev_output *out, int *werr, unsigned char *buf, size_t cap);
/* Copy a whole file to out.  -1 with *werr = 0 on a read error (errno set),
 * -1 with *werr = the ev_output status on a write error. */
int goal_copy_file(const char *path, ev_output *out, int *werr, unsigned char *buf, size_t cap);
#define GOAL_IOBUF (1u << 20)

/* ---- match.c: open messages per (source, destination, tag) ------------- */

struct mkey { uint32_t src, dst, tag; };
/* A slot is 32 bytes, two to a cache line: most keys carry one message at
 * a time, whose size is kept inline; longer queues live in a side FIFO. */
#define MT_SENDS (1u << 31) /* the queue holds sends (else receives) */
#define MT_FIFO (1u << 30)  /* u.q is allocated */
#define MT_COUNT (MT_FIFO - 1)
struct mfifo { uint32_t head, cap; uint64_t v[]; };
struct mslot {
	struct mkey k;
	uint32_t n;            /* flags | queued messages; 0: a free slot */
	union { uint64_t one; struct mfifo *q; } u;
	uint64_t first_rec;    /* record number of the op that opened the queue */
};
struct mtable { struct mslot *s; size_t cap, len; uint64_t open_max; struct goal_arena *a; };

static inline uint32_t mt_count(const struct mslot *e) { return e->n & MT_COUNT; }
static inline int mt_sends(const struct mslot *e) { return (e->n & MT_SENDS) != 0; }
/* The slot of k, made (empty, n = 0 until the first push) when create is set;
 * NULL when absent or out of memory. */
struct mslot *mt_find(struct mtable *t, const struct mkey *k, int create);
void mt_remove(struct mtable *t, struct mslot *e);
int mt_push(struct mslot *e, uint64_t size, int sends);
uint64_t mt_pop(struct mslot *e);
/* The oldest unmatched entry, or NULL when everything balanced. */
const struct mslot *mt_oldest(const struct mtable *t);
void mt_free(struct mtable *t);

/* ---- schedule.c: per-rank state -------------------------------------- */

/* Id window entry: kind in the top 3 bits, node index below. */
#define K_UNDEF 0u
#define K_REAL (1u << 29)
#define K_ALIAS (2u << 29)
#define K_NONE (3u << 29)
#define K_MASK (3u << 29)
#define K_IDX ((1u << 29) - 1)

/* Binary: a node still in the window: its successor lists (requires and
 * irequires), newest edge first, and their lengths. */
struct nslot { uint32_t rh, ih, nr, ni; };

struct dep { uint32_t target; int ireq; };

/* An op as the builder keeps it: the fields of its record that a schedule
 * uses, 48 bytes instead of the record's 96 (feed.c hands these from its
 * reader thread to the builder). */
struct goal_op {
	uint64_t size; /* bytes of a send or recv, dur of a calc */
	uint64_t comm; /* comm, seq, step and op: the ATLAHS-style estimate */
	uint32_t rank, id, stream, aux, seq, step;
	int32_t peer;
	uint16_t channel;
	uint8_t type, op;
};
static inline void goal_op_of(struct goal_op *o, const struct ev_rec *r)
{
	o->size = r->type == EV_CALC ? r->dur : r->bytes;
	o->comm = r->comm;
	o->rank = r->rank;
	o->id = r->id;
	o->stream = r->stream;
	o->aux = r->aux;
	o->seq = r->seq;
	o->step = r->step;
	o->peer = r->peer;
	o->channel = r->channel;
	o->type = r->type;
	o->op = r->op;
}

/* An op with the DEP records that follow it, as handed between threads
 * (feed.c, pipe.c): the item, then ndeps struct dep.  Two thirds of a
 * schedule's records are DEPs of 8 bytes' worth: items move 3.2 times
 * fewer bytes than decoded records, and the builder makes one call per op. */
struct goal_item {
	uint64_t recno;     /* record number of the op (or of the DEP alone) */
	struct goal_op op;  /* a DEP alone: type EV_DEP, rank, id, aux = its
	                     * target, op = 1 for an irequires */
	uint32_t ndeps;     /* struct dep entries right after the item */
	uint32_t pad;
};
/* feed.c: add the items of buf[0, len); on failure *recno is the failing
 * record (the builder's status is returned, g->err set). */
int goal_add_items(ev_goal *g, const unsigned char *buf, size_t len, uint64_t *recno);

struct rankst {
	uint32_t rank;
	int emit;
	/* text: the rank block.  Binary: nodes gets the first 23 bytes of each
	 * node as it is defined; when the node leaves the window, cnt gets its
	 * two successor counts and succ its successors, so that succ is the
	 * section's appendix as it stands (the 39-byte nodes are put together
	 * from nodes and cnt at the end); roots, the nodes without
	 * dependencies.  A spool becomes a file only when it outgrows its
	 * buffer. */
	struct spool text, nodes, cnt, succ, roots;
	/* Id window: ids (last_id - wcap, last_id] live in map[id & (wcap-1)]. */
	uint32_t *map;
	uint32_t wcap;
	uint32_t first_id, last_id; /* first id still in the window */
	uint32_t min_id;            /* first id of the rank */
	int have_id;
	/* Binary: successor lists of nodes [node_lo, next_node). */
	struct nslot *ns;
	uint32_t node_lo, next_node;
	uint64_t nroots, nedges, app_run;
	/* The op being collected (its DEP records follow it). */
	int pending;
	struct goal_op pend;
	uint64_t pend_recno;
	struct dep *deps;
	size_t ndeps, capdeps;
	/* Stats. */
	uint64_t nsend, nrecv, ncalc, nreq, nireq, bytes_sent, elided, dups;
	uint64_t in_ops, in_deps;
	int rail_known;
	uint32_t rail;
	/* ATLAHS-style estimate: the current group of ops. */
	int g_open;
	uint64_t g_comm;
	uint32_t g_seq, g_chan, g_step, g_first;
	uint32_t g_n, g_roots;
	unsigned char *g_succ;
	size_t g_cap;
	uint64_t atlahs_extra;
};

/* Successor lists: an edge's target and the next edge of its list side by
 * side, one cache line for both as lists are walked. */
struct edge { uint32_t succ, next; };
struct edgepool { struct edge *e; uint32_t cap, len, free; };

struct goal_drain;

#define RANK_PAGE 1024u
#define LANE_DENSE 4096u

struct ev_goal {
	struct ev_goal_opts o;
	int estimate;             /* keep the ATLAHS-style line estimate */
	struct ev_goal_ranks sel; /* copy of *o.ranks (not owned) */
	struct ev_goal_error err;
	const char *fname;        /* current input, for messages */
	/* Ranks: a sparse two-level table, pages of RANK_PAGE pointers. */
	struct rankst ***pages;
	uint32_t nr;              /* largest rank seen + 1 */
	uint32_t max_peer_plus1;
	uint32_t nranks;          /* final num_ranks */
	struct mtable mt;
	uint32_t lane_cpu[LANE_DENSE]; /* --cpu=dense: lane -> cpu + 1 (0 unseen) */
	struct ev_map lanes;      /* the same for lanes >= LANE_DENSE: lane + 1 -> cpu */
	uint32_t nlanes;
	uint8_t max_cpu, max_nic;
	struct edgepool ep;
	struct goal_arena arena;  /* windows, edges, spool buffers, matching */
	struct spoolfile sf;      /* where every spool goes */
	unsigned char *iobuf;     /* GOAL_IOBUF bytes for reading spools back */
	uint64_t ignored;
	uint64_t hist[66];
	uint64_t max_dist;        /* longest dependency seen (ops back) */
	uint32_t want_window;     /* --window doubled until it covers 2 max_dist */
	int finished;
	struct goal_drain *drain; /* the thread finishing the windows, while it runs */
};

static inline struct rankst *goal_rank(const struct ev_goal *g, uint32_t r)
{
	if (r >= g->nr)
		return NULL;
	struct rankst **p = g->pages[r / RANK_PAGE];
	return p ? p[r % RANK_PAGE] : NULL;
}

int goal_fail(struct ev_goal *g, int status, uint64_t recno, const char *fmt, ...) EV_PRINTF(4, 5);
int goal_io_fail(struct ev_goal *g, const char *path);
int goal_nomem(struct ev_goal *g);
/* schedule.c: an op (SEND, RECV or CALC) record number recno, with the nd
 * DEP records that follow it (they are records recno + 1 ...); a DEP alone
 * (of the last op of its rank). */
int goal_add_op(struct ev_goal *g, const struct goal_op *op, const struct dep *deps, size_t nd, uint64_t recno);
int goal_add_dep(struct ev_goal *g, uint32_t rank, uint32_t id, uint32_t target, int ireq, uint64_t recno);
/* schedule.c: finish every node still in a rank's window (binary) and
 * write out its spools: 0, -1 on a spool write error (errno), -2 when the
 * window is out of step (an internal error). */
int goal_drain_rank(struct ev_goal *g, struct rankst *rs);
/* drain.c: goal_drain_rank for every rank, in rank order, on a thread of
 * its own when the windows hold many nodes (else here and now).  From the
 * start until goal_drain_wait(g, last rank) that thread alone touches the
 * ranks' windows, spools and the edge pool; the caller may read the ranks
 * it has waited for.  Each returns EV_OK or the status of the drain's
 * first failure (g->err set). */
int goal_drain_start(struct ev_goal *g);
int goal_drain_wait(struct ev_goal *g, uint32_t rank);
/* Stop the thread (if it still runs) and wait for it. */
void goal_drain_end(struct ev_goal *g);
/* assemble.c: one rank's binary section to out. */
int goal_write_section(struct ev_goal *g, struct rankst *rs, ev_output *out);
/* join.c: the binary file header and jump table. */
int goal_write_bin_header(ev_output *out, uint32_t nranks, uint8_t max_cpu, uint8_t max_nic,
                          const uint64_t *sizes);

#endif /* EV_GOAL_INT_H */
