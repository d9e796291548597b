/* SPDX-License-Identifier: MIT */
/*
 * feed.c - every record of an ev_reader into an ev_goal.
 *
 * Reading and decoding the stream costs about as much as building the
 * schedule, so with a second core the two overlap: a reader thread fills
 * batches of decoded records while the caller's thread adds the previous
 * ones.  Memory is a fixed ring of batches.  The reader thread alone
 * touches the reader (and the strtab and metadata it fills); the builder
 * reads metadata only for --nic=rail, so that case stays on one thread, as
 * does any platform where the thread cannot start.
 */
#include <pthread.h>
#include <stddef.h>
#include <stdlib.h>

#include "goal_int.h"

#define BATCH 2048
#define NBATCH 6

struct batch {
	struct ev_rec rec[BATCH];
	size_t n;
	int rc; /* ev_read's status after the last record (0: more may follow) */
};

struct ring {
	pthread_mutex_t mu;
	pthread_cond_t cv;
	struct batch b[NBATCH];
	uint64_t filled, used; /* batches produced and consumed so far */
	int stop;              /* the consumer gave up */
	ev_reader *r;
};

static void *reader_main(void *arg)
{
	struct ring *q = arg;
	for (uint64_t i = 0;; i++) {
		pthread_mutex_lock(&q->mu);
		while (i - q->used >= NBATCH && !q->stop)
			pthread_cond_wait(&q->cv, &q->mu);
		int stop = q->stop;
		pthread_mutex_unlock(&q->mu);
		if (stop)
			return NULL;
		struct batch *b = &q->b[i % NBATCH];
		int rc = 0;
		b->n = 0;
		while (b->n < BATCH && (rc = ev_read(q->r, &b->rec[b->n])) > 0)
			b->n++;
		b->rc = rc > 0 ? 0 : rc == 0 ? 1 : rc; /* 1: the end */
		pthread_mutex_lock(&q->mu);
		q->filled = i + 1;
		pthread_cond_broadcast(&q->cv);
		pthread_mutex_unlock(&q->mu);
		if (b->rc)
			return NULL;
	}
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
	for (int i = 0; i < BATCH; i++) {
		if ((rc = ev_read(r, &rec)) <= 0) {
			*reader_rc = rc;
			return rc;
		}
		if ((rc = ev_goal_add(g, &rec, ++*recno)))
			return rc;
	}
	struct ring *q = malloc(sizeof *q);
	if (!q)
		return feed_plain(g, r, recno, reader_rc, progress, ctx);
	memset(q, 0, offsetof(struct ring, b));
	q->filled = q->used = 0;
	q->stop = 0;
	q->r = r;
	pthread_t th;
	if (pthread_mutex_init(&q->mu, NULL)) {
		free(q);
		return feed_plain(g, r, recno, reader_rc, progress, ctx);
	}
	if (pthread_cond_init(&q->cv, NULL)) {
		pthread_mutex_destroy(&q->mu);
		free(q);
		return feed_plain(g, r, recno, reader_rc, progress, ctx);
	}
	if (pthread_create(&th, NULL, reader_main, q)) {
		pthread_cond_destroy(&q->cv);
		pthread_mutex_destroy(&q->mu);
		free(q);
		return feed_plain(g, r, recno, reader_rc, progress, ctx);
	}
	int status = EV_OK;
	for (uint64_t i = 0;; i++) {
		pthread_mutex_lock(&q->mu);
		while (q->filled <= i)
			pthread_cond_wait(&q->cv, &q->mu);
		pthread_mutex_unlock(&q->mu);
		struct batch *b = &q->b[i % NBATCH];
		for (size_t k = 0; k < b->n && !status; k++) {
			status = ev_goal_add(g, &b->rec[k], ++*recno);
			if (progress && (*recno & 0xFFFF) == 0)
				progress(ctx, *recno);
		}
		int end = b->rc;
		pthread_mutex_lock(&q->mu);
		q->used = i + 1;
		if (status)
			q->stop = 1;
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
	free(q);
	return status;
}
