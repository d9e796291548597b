/* SPDX-License-Identifier: MIT */
/*
 * feed.c - every record of an ev_reader into an ev_goal.
 *
 * Reading and decoding the stream costs about as much as building the
 * schedule, so with a second core the two overlap: a reader thread fills
 * batches of ops, each with the DEPs that follow it, while the caller's
 * thread adds the previous ones.  Memory is a fixed ring of batches.  The
 * reader thread alone touches the reader (and the strtab and metadata it
 * fills); the builder reads metadata only for --nic=rail, so that case
 * stays on one thread, as does any platform where the thread cannot start.
 */
#include <pthread.h>
#if defined(__SSE2__) && defined(__x86_64__)
#include <emmintrin.h>
#endif
#include <stdatomic.h>
#include <stddef.h>
#include <stdlib.h>
#include <time.h>

#include "goal_int.h"

/* The first records are added on the caller's thread. */
#define FIRST 2048
/* A batch is a buffer of items: an op with the DEP records that follow it
 * (coll-expand writes them right after their op), or a DEP alone.  Two
 * thirds of a schedule's records are DEPs of 8 bytes' worth: handing items
 * instead of decoded records (96 bytes each) moves 3.2 times fewer bytes
 * between the cores, and the builder makes one call per op. */
#define BATCH_BYTES ((size_t)256 << 10)
#define NBATCH 8 /* 2 MiB: one huge page */


struct batch {
	_Alignas(64) unsigned char *buf; /* BATCH_BYTES; a cache line each */
	size_t len;
	uint64_t last;      /* record number of the last record read into it */
	uint64_t ignored;   /* records of other types */
	int rc;             /* ev_read's status after the last record (0: more may follow) */
};

struct ring {
	pthread_mutex_t mu;
	pthread_cond_t cv;
	struct batch b[NBATCH];
	unsigned char *mem; /* the batches' buffers */
	int big;            /* mem is an ev_big_reserve */
	_Atomic uint64_t filled; /* batches produced so far (stored under mu) */
	uint64_t used;           /* and consumed */
	int spin;                /* the builder may spin (the input is a file) */
	long spin_ns;            /* how long it spins before it sleeps */
	int stop;              /* the consumer gave up */
	int reader_waits;      /* the reader sleeps until the ring is half empty */
	int builder_waits;     /* the builder sleeps until a batch is filled */
	_Alignas(64) ev_reader *r; /* the reader thread's own, a line apart */
	uint64_t recno;        /* the reader thread's record count */
};

/* Copy n bytes (a multiple of 8, dst 8-aligned) around the caches: the
 * batch was read last by the builder's core, and a plain store would wait
 * for each line to come back from there. */
static void stream_copy(unsigned char *dst, const unsigned char *src, size_t n)
{
#if defined(__SSE2__) && defined(__x86_64__)
	for (size_t i = 0; i < n; i += 8) {
		long long v;
		memcpy(&v, src + i, 8);
		_mm_stream_si64((long long *)(void *)(dst + i), v);
	}
#else
	memcpy(dst, src, n);
#endif
}

#define STAGE 4096

/* Read records into b until it has no room for another item.  An item is
 * put together in a local stage (its DEPs are appended as they come) and
 * copied out when the next one starts.  The counts live in locals until
 * the end: b's fields share cache lines with the batch the builder is
 * reading. */
static void fill(struct ring *q, struct batch *b)
{
	_Alignas(64) unsigned char stage[STAGE];
	struct goal_item *cur = NULL; /* the staged item, while DEPs can follow it */
	struct ev_rec rec;
	unsigned char *buf = b->buf;
	size_t len = 0, slen = 0;
	uint64_t recno = q->recno, ignored = 0;
	int rc = 0;
	while (BATCH_BYTES - len - slen >= sizeof(struct goal_item)) {
		if ((rc = ev_read(q->r, &rec)) <= 0)
			break;
		recno++;
		struct goal_item *it = (struct goal_item *)(void *)stage;
		switch (rec.type) {
		case EV_SEND:
		case EV_RECV:
		case EV_CALC:
			stream_copy(buf + len, stage, slen);
			len += slen;
			it->recno = recno;
			goal_op_of(&it->op, &rec);
			it->ndeps = 0;
			it->pad = 0;
			slen = sizeof *it;
			cur = it;
			break;
		case EV_DEP:
			if (cur && cur->op.rank == rec.rank && cur->op.id == rec.id && slen + sizeof(struct dep) <= STAGE) {
				struct dep *d = (struct dep *)(void *)(stage + slen);
				d->target = rec.aux;
				d->ireq = (rec.flags & EV_F_IREQ) != 0;
				cur->ndeps++;
				slen += sizeof *d;
				break;
			}
			/* Not after its op (or past the stage): the builder checks it
			 * alone. */
			stream_copy(buf + len, stage, slen);
			len += slen;
			it->recno = recno;
			memset(&it->op, 0, sizeof it->op);
			it->op.type = EV_DEP;
			it->op.rank = rec.rank;
			it->op.id = rec.id;
			it->op.aux = rec.aux;
			it->op.op = (rec.flags & EV_F_IREQ) != 0;
			it->ndeps = 0;
			it->pad = 0;
			slen = sizeof *it;
			cur = NULL;
			break;
		default:
			ignored++;
			break;
		}
	}
	stream_copy(buf + len, stage, slen);
	len += slen;
#if defined(__SSE2__) && defined(__x86_64__)
	_mm_sfence(); /* the streamed bytes are visible before the batch is published */
#endif
	q->recno = recno;
	b->len = len;
	b->last = recno;
	b->ignored = ignored;
	b->rc = rc < 0 ? rc : rc == 0 ? 1 : 0; /* 1: the end */
}

static void *reader_main(void *arg)
{
	struct ring *q = arg;
	for (uint64_t i = 0;; i++) {
		pthread_mutex_lock(&q->mu);
		if (i - q->used >= NBATCH && !q->stop) {
			/* A full ring: sleep until half of it is free, not until the
			 * next batch is, so the builder wakes this thread once per
			 * NBATCH / 2 batches (a wake-up is a system call on its side). */
			q->reader_waits = 1;
			while (i - q->used > NBATCH / 2 && !q->stop)
				pthread_cond_wait(&q->cv, &q->mu);
			q->reader_waits = 0;
		}
		int stop = q->stop;
		pthread_mutex_unlock(&q->mu);
		if (stop)
			return NULL;
		struct batch *b = &q->b[i % NBATCH];
		fill(q, b);
		pthread_mutex_lock(&q->mu);
		atomic_store_explicit(&q->filled, i + 1, memory_order_release);
		if (q->builder_waits)
			pthread_cond_broadcast(&q->cv);
		pthread_mutex_unlock(&q->mu);
		if (b->rc)
			return NULL;
	}
}

/* The builder spins a while before it sleeps: a wake-up costs the waking
 * thread a system call and, on virtual machines, the sleeper's core a halt
 * and an interrupt to leave it (a twentieth of the reader thread's time on
 * the 2-core guest of docs/bench-results.md, on the critical path), while
 * the builder, a little faster than the reader, mostly waits a fraction of
 * a batch.  Not when the input is a pipe: there the reader waits on the
 * process upstream, and a spinning builder would take that process's core
 * (the piped rows of bench/ev2goal.sh took a tenth longer).  After a wait
 * longer than the limit (a file on a slow disk) the budget halves; after a
 * shorter one it is whole again. */
#define SPIN_MAX_NS 250000L
#define SPIN_MIN_NS 2000L

static long elapsed_ns(const struct timespec *t0)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (long)(t.tv_sec - t0->tv_sec) * 1000000000L + (t.tv_nsec - t0->tv_nsec);
}

/* 1 once batch i is filled, 0 when the budget ran out first. */
static int spin_for_batch(struct ring *q, uint64_t i, const struct timespec *t0)
{
	if (!q->spin || q->spin_ns < SPIN_MIN_NS)
		return 0;
	for (unsigned k = 1;; k++) {
		if (atomic_load_explicit(&q->filled, memory_order_acquire) > i)
			return 1;
#if defined(__SSE2__) && defined(__x86_64__)
		_mm_pause();
#endif
		if (!(k & 63) && elapsed_ns(t0) > q->spin_ns)
			return 0;
	}
}

/* Wait (spinning, then sleeping) until batch i is filled. */
static void wait_for_batch(struct ring *q, uint64_t i)
{
	struct timespec t0;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	if (spin_for_batch(q, i, &t0))
		return;
	pthread_mutex_lock(&q->mu);
	if (atomic_load_explicit(&q->filled, memory_order_relaxed) <= i) {
		q->builder_waits = 1;
		while (atomic_load_explicit(&q->filled, memory_order_relaxed) <= i)
			pthread_cond_wait(&q->cv, &q->mu);
		q->builder_waits = 0;
	}
	pthread_mutex_unlock(&q->mu);
	if (q->spin)
		q->spin_ns = elapsed_ns(&t0) < SPIN_MAX_NS ? SPIN_MAX_NS : q->spin_ns / 2;
}

int goal_add_items(ev_goal *g, const unsigned char *buf, size_t len, uint64_t *recno)
{
	size_t off = 0;
	while (off < len) {
		const struct goal_item *it = (const struct goal_item *)(const void *)(buf + off);
		const struct dep *d = (const struct dep *)(const void *)(it + 1);
		int rc = it->op.type == EV_DEP
		                 ? goal_add_dep(g, it->op.rank, it->op.id, it->op.aux, it->op.op, it->recno)
		                 : goal_add_op(g, &it->op, d, it->ndeps, it->recno);
		if (rc) {
			*recno = it->recno;
			return rc;
		}
		off += sizeof *it + it->ndeps * sizeof *d;
	}
	return EV_OK;
}

/* Add the items of b; on failure *recno is the failing record. */
static int add_batch(ev_goal *g, const struct batch *b, uint64_t *recno)
{
	int rc = goal_add_items(g, b->buf, b->len, recno);
	if (rc)
		return rc;
	g->ignored += b->ignored;
	*recno = b->last;
	return EV_OK;
}

static void ring_free(struct ring *q)
{
	if (q->big)
		ev_big_release(q->mem, NBATCH * BATCH_BYTES);
	else
		free(q->mem);
	free(q);
}

static int feed_plain(ev_goal *g, ev_reader *r, uint64_t *recno, int *reader_rc, void (*progress)(void *, uint64_t),
                      void *ctx)
{
	struct ev_rec rec;
	int rc;
	while ((rc = ev_read(r, &rec)) > 0) {
		if ((rc = ev_goal_add(g, &rec, ++*recno)))
			return rc;
		if (progress && (*recno & 0xFFFF) == 0)
			progress(ctx, *recno);
	}
	*reader_rc = rc;
	return rc;
}

int ev_goal_feed(ev_goal *g, ev_reader *r, uint64_t *recno, int *reader_rc, void (*progress)(void *, uint64_t),
                 void *ctx)
{
	*reader_rc = 0;
	if (g->o.nic == EV_GOAL_NIC_RAIL)
		return feed_plain(g, r, recno, reader_rc, progress, ctx);
	/* The first records on this thread: a small input is done before a
	 * thread would have started. */
	struct ev_rec rec;
	int rc;
	for (int i = 0; i < FIRST; i++) {
		if ((rc = ev_read(r, &rec)) <= 0) {
			*reader_rc = rc;
			return rc;
		}
		if ((rc = ev_goal_add(g, &rec, ++*recno)))
			return rc;
	}
	/* Its members keep to cache lines of their own: aligned as they ask. */
	size_t qsize = (sizeof(struct ring) + 63) & ~(size_t)63;
	struct ring *q = aligned_alloc(64, qsize);
	if (!q)
		return feed_plain(g, r, recno, reader_rc, progress, ctx);
	memset(q, 0, qsize);
	q->mem = ev_big_reserve(NBATCH * BATCH_BYTES);
	q->big = q->mem != NULL;
	if (!q->mem && !(q->mem = malloc(NBATCH * BATCH_BYTES))) {
		free(q);
		return feed_plain(g, r, recno, reader_rc, progress, ctx);
	}
	for (int i = 0; i < NBATCH; i++)
		q->b[i].buf = q->mem + (size_t)i * BATCH_BYTES;
	q->r = r;
	q->recno = *recno;
	q->spin = ev_reader_from_file(r);
	q->spin_ns = SPIN_MAX_NS;
	pthread_t th;
	if (pthread_mutex_init(&q->mu, NULL)) {
		ring_free(q);
		return feed_plain(g, r, recno, reader_rc, progress, ctx);
	}
	if (pthread_cond_init(&q->cv, NULL)) {
		pthread_mutex_destroy(&q->mu);
		ring_free(q);
		return feed_plain(g, r, recno, reader_rc, progress, ctx);
	}
	if (pthread_create(&th, NULL, reader_main, q)) {
		pthread_cond_destroy(&q->cv);
		pthread_mutex_destroy(&q->mu);
		ring_free(q);
		return feed_plain(g, r, recno, reader_rc, progress, ctx);
	}
	int status = EV_OK;
	for (uint64_t i = 0;; i++) {
		if (atomic_load_explicit(&q->filled, memory_order_acquire) <= i)
			wait_for_batch(q, i);
		struct batch *b = &q->b[i % NBATCH];
		uint64_t before = *recno;
		status = add_batch(g, b, recno);
		if (progress && !status && (before >> 16) != (*recno >> 16))
			progress(ctx, *recno);
		int end = b->rc;
		pthread_mutex_lock(&q->mu);
		q->used = i + 1;
		if (status)
			q->stop = 1;
		if (q->reader_waits && (status || atomic_load_explicit(&q->filled, memory_order_relaxed) - q->used <= NBATCH / 2))
			pthread_cond_broadcast(&q->cv);
		pthread_mutex_unlock(&q->mu);
		if (status)
			break;
		if (end) {
			if (end < 0)
				status = *reader_rc = end;
			break;
		}
	}
	pthread_join(th, NULL);
	pthread_cond_destroy(&q->cv);
	pthread_mutex_destroy(&q->mu);
	ring_free(q);
	return status;
}
