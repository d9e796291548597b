/* SPDX-License-Identifier: MIT */
/*
 * drain.c - the end of a binary schedule: the nodes still in each rank's id
 * window are finished (their successor lists written to the spool) before
 * that rank's section can be assembled.  The windows hold up to twice the
 * longest dependency, which on coll-expand's schedules is about half of all
 * ops, so this step and the assembly each cost about a tenth of ev2goal's
 * run; once the input is read the reader thread is gone and a core is idle.
 * A thread drains the ranks in order while the caller writes the sections
 * of those already drained.
 *
 * The drain owns every window, spool writer and the edge pool from
 * goal_drain_start until it is done; the caller waits for a rank before it
 * reads that rank's spools (reading the file at other offsets while the
 * drain writes is safe: every block has a slot of its own).
 */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>

#include "goal_int.h"

/* Fewer nodes than this in all windows together are drained at once on
 * the caller's thread: less than a thread's start-up. */
#define DRAIN_THREAD_MIN 16384

struct goal_drain {
	pthread_t th;
	pthread_mutex_t mu;
	pthread_cond_t cv;
	uint32_t done;     /* ranks drained (in rank order) */
	int waiting;       /* the caller sleeps on cv */
	int stop;          /* the caller gave up: end after this rank */
	int rc;            /* goal_drain_rank's failure, 0 */
	int err;           /* its errno */
	uint32_t failed;   /* the rank it failed on */
};

/* A drain failure as the builder's error. */
static int drain_fail(struct ev_goal *g, struct rankst *rs, int rc, int err)
{
	if (rc == -2)
		return goal_fail(g, EV_ERR_FORMAT, rs->pend_recno, "rank %u: internal error: window out of step", rs->rank);
	errno = err;
	return goal_io_fail(g, g->sf.name);
}

static void *drain_main(void *arg)
{
	struct ev_goal *g = arg;
	struct goal_drain *d = g->drain;
	for (uint32_t r = 0; r < g->nr; r++) {
		struct rankst *rs = goal_rank(g, r);
		int rc = rs ? goal_drain_rank(g, rs) : 0, err = errno;
		pthread_mutex_lock(&d->mu);
		if (rc) {
			d->rc = rc;
			d->err = err;
			d->failed = r;
		} else {
			d->done = r + 1;
		}
		int stop = d->stop || rc;
		if (d->waiting)
			pthread_cond_signal(&d->cv);
		pthread_mutex_unlock(&d->mu);
		if (stop)
			break;
	}
	return NULL;
}

int goal_drain_start(struct ev_goal *g)
{
	uint64_t left = 0;
	for (uint32_t r = 0; r < g->nr; r++) {
		const struct rankst *rs = goal_rank(g, r);
		if (rs && rs->have_id)
			left += (uint64_t)rs->last_id - rs->first_id + 1;
	}
	if (left >= DRAIN_THREAD_MIN && (g->drain = calloc(1, sizeof *g->drain)) != NULL) {
		struct goal_drain *d = g->drain;
		if (pthread_mutex_init(&d->mu, NULL) == 0) {
			if (pthread_cond_init(&d->cv, NULL) == 0) {
				if (pthread_create(&d->th, NULL, drain_main, g) == 0)
					return EV_OK;
				pthread_cond_destroy(&d->cv);
			}
			pthread_mutex_destroy(&d->mu);
		}
		free(d);
		g->drain = NULL;
	}
	/* Few nodes, or no thread: all of it here. */
	for (uint32_t r = 0; r < g->nr; r++) {
		struct rankst *rs = goal_rank(g, r);
		int rc = rs ? goal_drain_rank(g, rs) : 0;
		if (rc)
			return drain_fail(g, rs, rc, errno);
	}
	return EV_OK;
}

int goal_drain_wait(struct ev_goal *g, uint32_t rank)
{
	struct goal_drain *d = g->drain;
	if (!d)
		return EV_OK;
	pthread_mutex_lock(&d->mu);
	while (d->done <= rank && d->done < g->nr && !d->rc) {
		d->waiting = 1;
		pthread_cond_wait(&d->cv, &d->mu);
		d->waiting = 0;
	}
	int rc = d->done <= rank && d->done < g->nr ? d->rc : 0;
	int err = d->err;
	uint32_t failed = d->failed;
	pthread_mutex_unlock(&d->mu);
	return rc ? drain_fail(g, goal_rank(g, failed), rc, err) : EV_OK;
}

void goal_drain_end(struct ev_goal *g)
{
	struct goal_drain *d = g->drain;
	if (!d)
		return;
	pthread_mutex_lock(&d->mu);
	d->stop = 1;
	pthread_mutex_unlock(&d->mu);
	pthread_join(d->th, NULL);
	pthread_cond_destroy(&d->cv);
	pthread_mutex_destroy(&d->mu);
	free(d);
	g->drain = NULL;
}
