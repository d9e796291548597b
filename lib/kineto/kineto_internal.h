/* SPDX-License-Identifier: MIT */
/*
 * kineto_internal.h - state shared by the files of lib/kineto.
 */
#ifndef EV_KINETO_INTERNAL_H
#define EV_KINETO_INTERNAL_H

#include "ev/kineto.h"
#include "ev/nccl.h"
#include "kineto/kineto_window.h"

/* A record flag used only inside the conversion (cleared before writing):
 * a coll/p2p record to be completed from its kernel's name and the nccl:*
 * annotation around its launch (traces without collective arguments). */
#define KINETO_F_INFER (1u << 15)
/* A flow event (Kineto's ac2g, call to GPU event, or fwdbwd, forward op
 * to backward op), a record of the conversion only (never written; a type
 * no stream has): op 's' or 'f' (ac2g), 'S' or 'F' (fwdbwd), id the
 * flow's id, comm the (pid, tid) key of its end. */
#define KINETO_T_FLOW 0xFEu
/* An nccl:* annotation range carries its collective (aux), bytes and dtype
 * to the writer, which clears them before writing. */

/* The key of a pair (input, id), (rank, stream)... in the link windows and
 * maps: never written out, so it need not be ev_hash64 (the format's string
 * hash, which cost a tenth of kineto2ev's time here).  Each step is a
 * bijection of 64 bits, so pairs with the same b never collide and others
 * collide as two random values do; 0 is kept for empty slots. */
static inline uint64_t kineto_key2(uint64_t a, uint64_t b)
{
	uint64_t h = b * 0x9E3779B97F4A7C15ULL;
	h ^= h >> 32;
	h = (h * 0xD6E8FEB86659FD93ULL) ^ a;
	h ^= h >> 32;
	h *= 0xD6E8FEB86659FD93ULL;
	h ^= h >> 32;
	return h ? h : 1;
}

/* Per distinct name: kernel class, copy kind, NCCL decode, annotation. */
struct kname_info {
	uint8_t kclass, copy, is_nccl, step, nvtx_coll, graph;
	struct ev_nccl_kname kn;
};

/* An op open on a thread while writing (time order). */
struct open_op { int64_t start, end; uint64_t sig; uint32_t ext; uint32_t coll; uint64_t bytes; uint32_t dtype; };
/* A thread's open ops, and the forward op (External id, 0 none) of a
 * fwdbwd 'f' end waiting for the backward op that starts at bwd_ts. */
struct opstack { struct ev_vec ops; int64_t bwd_ts; uint32_t bwd_fwd; };

/* B/E pairing while reading: open begins per (input, pid, tid). */
struct open_range { uint64_t key; int64_t ts; uint64_t name; uint32_t stream; int32_t file; int64_t below; };

/* Kineto's process and thread names (ph "M" events), per input: kind 0
 * process_name, 1 process_labels (their tid 0), 2 thread_name; the last
 * one read wins, as in the trace's reader's dict. */
struct kname_meta { int32_t file; uint32_t pid, tid; uint8_t kind; char *text; };
/* A CPU thread with records: the process it ran in (its first one), and
 * the place of its first cpu_op in its file (UINT64_MAX none). */
struct kthread { int32_t file; uint32_t tid, pid; uint64_t first_op; };

/* An E event of a second half with no B there (kineto_halves.c): its key,
 * and its record before pairing, to be paired on the first half's stacks
 * where at records of that half have been added. */
struct kdefer { size_t at; uint64_t key; struct ev_rec r; };

struct ev_kineto {
	struct ev_kineto_opts o;
	ev_strtab *st;
	ev_sorter *sorter;
	ev_clipper *clipper;
	ev_writer *w;
	const struct ev_kineto_sink *sink; /* ev_kineto_feed's, instead of w */
	struct ev_kineto_file *files;
	int nfiles;
	int absolute_ts;
	/* name id -> index + 1 into name_info */
	struct ev_map names;
	struct ev_vec name_info;
	/* writing: op stacks per (input, tid) and per (input, tid, annotations) */
	struct ev_map opstack_of;
	struct ev_vec opstacks;
	struct kwin calls;  /* (input, correlation) -> launching op */
	struct kwin ops;    /* (input, External id) -> op */
	struct kwin flows;  /* (input, flow id) -> ac2g ends seen: how 1 's', 2 'f'; sig = the 'f' end's (pid, tid) */
	struct kwin fwdbwd; /* (input, fwdbwd flow id) -> its 's' end's op (External id in op) */
	struct ev_map seq;     /* (rank, comm) -> next seq */
	struct ev_map overrun; /* (rank, stream) -> last kernel end */
	uint64_t overruns;
	/* reading: B/E stacks */
	struct ev_map stacks;
	struct ev_vec stack_store;
	int64_t free_slot;
	uint64_t open_b;       /* begins waiting for their end */
	struct ev_vec comm_lines; /* char* #comm / #meta lines, written before records */
	struct ev_map comm_seen;
	uint64_t default_comm; /* the inferred default process group */
	int64_t default_nranks;
	char *scratch;
	size_t scratch_cap;
	/* process and thread names, and the CPU threads of the records */
	struct ev_map meta_of;    /* (input, pid, tid, kind) -> index + 1 */
	struct ev_vec meta_names; /* struct kname_meta */
	struct ev_map thread_of;  /* (input, tid) -> index + 1 */
	struct ev_vec threads;    /* struct kthread */
	uint64_t last_thread;     /* key of the last thread noted */
	/* A second half's conversion (kineto_halves.c): records kept in the
	 * order they come, not sorted, and E events without their B kept. */
	int collect;
	struct ev_vec recs;       /* struct ev_rec */
	struct ev_vec defer;      /* struct kdefer */
};

char *kineto_scratch(ev_kineto *k, size_t n);
/* kineto_read.c: one scanned event of input fidx to records; a B's range
 * opened, an E's closed (1: no B open, -1 out of memory). */
int kineto_process(ev_kineto *k, int fidx, struct ev_kevent *e, uint64_t offset, char *err, size_t errn);
int kineto_open_range(ev_kineto *k, int fidx, uint64_t key, const struct ev_rec *r);
int kineto_close_range(ev_kineto *k, int fidx, uint64_t key, struct ev_rec *r);
const struct kname_info *kineto_name_info(ev_kineto *k, uint64_t name);
int kineto_comm_line(ev_kineto *k, const char *line);
/* kineto_halves.c: a big plain file's second half read on a thread of
 * its own, from *from (an event's first byte, a guess), or none (*h NULL:
 * small, not a plain file, one thread, no seam found). */
struct khalf;
int kineto_half_start(ev_kineto *k, int fidx, const ev_input *in, struct khalf **h, uint64_t *from);
/* The first half met an element of traceEvents at *from: the second
 * half's conversion added to k, and where the first half goes on: *stop,
 * an element's first byte (*elem 1; the seam itself when the second half
 * did nothing or failed) or the array's ']' (*elem 0). */
int kineto_half_join(ev_kineto *k, int fidx, struct khalf *h, uint64_t *stop, int *elem);
/* Stopped and dropped (the guess was wrong, or the reading ended); NULL:
 * nothing. */
void kineto_half_drop(struct khalf *h);
/* kineto_meta.c: counters ("C" events) and distributedInfo. */
int kineto_counters(ev_kineto *k, int fidx, const struct ev_kspan *args, const struct ev_rec *r);
int kineto_distributed_info(ev_kineto *k, int fidx, const char *text, size_t len);
/* A ph "M" event: process_name, process_labels, thread_name kept. */
int kineto_metadata_event(ev_kineto *k, int fidx, const struct ev_kevent *e, uint32_t pid, uint32_t tid);
/* A name of kind (as in struct kname_meta) read: the last one read of
 * (input, pid, tid, kind) wins.  text is taken (freed on error). */
int kineto_meta_put(ev_kineto *k, int fidx, uint32_t pid, uint32_t tid, int kind, char *text);
/* A CPU thread's records: the process it ran in, for its #thread line. */
int kineto_note_thread(ev_kineto *k, int fidx, uint32_t pid, uint32_t tid, int is_op);
/* A metadata line of the output, to the writer or the sink. */
int kineto_text(ev_kineto *k, const char *line, size_t len);
int kineto_textf(ev_kineto *k, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* The #process and #thread lines. */
int kineto_write_names(ev_kineto *k);
/* deviceProperties: how many GPUs the process saw, and their names. */
int kineto_device_properties(ev_kineto *k, int fidx, const char *text, size_t len);

#endif
