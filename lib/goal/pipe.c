/* SPDX-License-Identifier: MIT */
/*
 * pipe.c - records handed to an ev_goal built on a thread of its own.
 *
 * A caller that makes the records (coll-expand expanding collectives)
 * and the builder that adds them each take a large share of the time:
 * with a second core the two overlap.  The caller packs each op with the DEPs
 * that follow it into items (feed.c's format) in the batches of a fixed
 * ring; the builder thread adds each batch once it is handed over.  The
 * builder thread alone touches the ev_goal from ev_goal_pipe_start until
 * ev_goal_pipe_sync or ev_goal_pipe_end returns.  Only --nic=rail stays on
 * one thread: its builder reads the metadata the caller's reader fills.
 */
#include <pthread.h>
#include <stdlib.h>

#include "goal_int.h"

#define PIPE_BATCH ((size_t)256 << 10)
#define PIPE_NBATCH 8 /* 2 MiB */

struct pbatch {
	size_t len;
	uint64_t ignored; /* records of other types */
};

struct ev_goal_pipe {
	ev_goal *g;
	pthread_t th;
	pthread_mutex_t mu;
	pthread_cond_t cv;      /* both sides sleep on it */
	unsigned char *mem;     /* PIPE_NBATCH buffers of PIPE_BATCH bytes */
	struct pbatch b[PIPE_NBATCH];
	/* Under mu. */
	uint64_t filled;        /* batches handed over */
	uint64_t used;          /* and added */
	int done;               /* no batch follows the last handed over */
	int stop;               /* the caller gave up: add no more */
	int status;             /* the builder's first failure, EV_OK */
	int caller_waits, builder_waits;
	/* The caller's side. */
	unsigned char *buf;     /* batch `filled`'s buffer */
	size_t len;
	uint64_t ignored;
	struct goal_item *cur;  /* the last item, while DEPs can follow it */
	int failed;             /* the builder's failure, as last seen here */
};

static void *builder_main(void *arg)
{
	struct ev_goal_pipe *p = arg;
	for (uint64_t i = 0;; i++) {
		pthread_mutex_lock(&p->mu);
		while (p->filled <= i && !p->done && !p->stop) {
			p->builder_waits = 1;
			pthread_cond_wait(&p->cv, &p->mu);
			p->builder_waits = 0;
		}
		int quit = p->stop || p->filled <= i;
		pthread_mutex_unlock(&p->mu);
		if (quit)
			return NULL;
		const struct pbatch *b = &p->b[i % PIPE_NBATCH];
		uint64_t recno = 0;
		int rc = goal_add_items(p->g, p->mem + (i % PIPE_NBATCH) * PIPE_BATCH, b->len, &recno);
		if (!rc)
			p->g->ignored += b->ignored;
		pthread_mutex_lock(&p->mu);
		p->used = i + 1;
		if (rc)
			p->status = rc;
		if (p->caller_waits)
			pthread_cond_signal(&p->cv);
		pthread_mutex_unlock(&p->mu);
		if (rc)
			return NULL;
	}
}

int ev_goal_pipe_start(ev_goal *g, ev_goal_pipe **pp)
{
	*pp = NULL;
	if (g->finished)
		return EV_ERR_ARG;
	if (g->o.nic == EV_GOAL_NIC_RAIL)
		return EV_OK;
	struct ev_goal_pipe *p = calloc(1, sizeof *p);
	if (!p)
		return EV_OK;
	p->g = g;
	if (!(p->mem = malloc(PIPE_NBATCH * PIPE_BATCH)))
		goto no_thread;
	if (pthread_mutex_init(&p->mu, NULL))
		goto no_thread;
	if (pthread_cond_init(&p->cv, NULL)) {
		pthread_mutex_destroy(&p->mu);
		goto no_thread;
	}
	if (pthread_create(&p->th, NULL, builder_main, p)) {
		pthread_cond_destroy(&p->cv);
		pthread_mutex_destroy(&p->mu);
		goto no_thread;
	}
	p->buf = p->mem;
	*pp = p;
	return EV_OK;
no_thread:
	/* The caller adds the records itself. */
	free(p->mem);
	free(p);
	return EV_OK;
}

/* Hand the current batch over (if it holds anything) and take the next
 * buffer, waiting while every buffer is the builder's.  The builder's
 * status. */
static int hand_over(struct ev_goal_pipe *p, int empty_too)
{
	int st;
	pthread_mutex_lock(&p->mu);
	if (p->len || empty_too) {
		p->b[p->filled % PIPE_NBATCH] = (struct pbatch){ p->len, p->ignored };
		p->filled++;
		if (p->builder_waits)
			pthread_cond_signal(&p->cv);
	}
	/* A full ring: sleep until half of it is free, so that the builder
	 * wakes this thread once per PIPE_NBATCH / 2 batches. */
	if (p->filled - p->used >= PIPE_NBATCH && !p->status) {
		while (p->filled - p->used > PIPE_NBATCH / 2 && !p->status) {
			p->caller_waits = 1;
			pthread_cond_wait(&p->cv, &p->mu);
			p->caller_waits = 0;
		}
	}
	st = p->status;
	pthread_mutex_unlock(&p->mu);
	p->buf = p->mem + (p->filled % PIPE_NBATCH) * PIPE_BATCH;
	p->len = 0;
	p->ignored = 0;
	p->cur = NULL;
	p->failed = st;
	return st;
}

/* The next item of the batch (the batch handed over first when full), its
 * op for the caller to fill. */
static int new_item(ev_goal_pipe *p, uint64_t recno, struct goal_item **out)
{
	if (PIPE_BATCH - p->len < sizeof **out) {
		int st = hand_over(p, 0);
		if (st)
			return st;
	}
	struct goal_item *it = (struct goal_item *)(void *)(p->buf + p->len);
	it->recno = recno;
	it->ndeps = 0;
	it->pad = 0;
	p->len += sizeof *it;
	*out = it;
	return EV_OK;
}

int ev_goal_pipe_add(ev_goal_pipe *p, const struct ev_rec *rec, uint64_t recno)
{
	if (p->failed)
		return p->failed;
	struct goal_item *it;
	int st;
	switch (rec->type) {
	case EV_SEND:
	case EV_RECV:
	case EV_CALC:
		if ((st = new_item(p, recno, &it)) != EV_OK)
			return st;
		goal_op_of(&it->op, rec);
		p->cur = it;
		return EV_OK;
	case EV_DEP:
		it = p->cur;
		if (it && it->op.rank == rec->rank && it->op.id == rec->id && PIPE_BATCH - p->len >= sizeof(struct dep)) {
			struct dep *d = (struct dep *)(void *)(p->buf + p->len);
			d->target = rec->aux;
			d->ireq = (rec->flags & EV_F_IREQ) != 0;
			it->ndeps++;
			p->len += sizeof *d;
			return EV_OK;
		}
		/* Not right after its op (or no room left): the builder checks
		 * it alone. */
		if ((st = new_item(p, recno, &it)) != EV_OK)
			return st;
		memset(&it->op, 0, sizeof it->op);
		it->op.type = EV_DEP;
		it->op.rank = rec->rank;
		it->op.id = rec->id;
		it->op.aux = rec->aux;
		it->op.op = (rec->flags & EV_F_IREQ) != 0;
		p->cur = NULL;
		return EV_OK;
	default:
		p->ignored++;
		return EV_OK;
	}
}

int ev_goal_pipe_sync(ev_goal_pipe *p)
{
	if (p->failed)
		return p->failed;
	if (hand_over(p, 0))
		return p->failed;
	pthread_mutex_lock(&p->mu);
	while (p->used < p->filled && !p->status) {
		p->caller_waits = 1;
		pthread_cond_wait(&p->cv, &p->mu);
		p->caller_waits = 0;
	}
	int st = p->status;
	pthread_mutex_unlock(&p->mu);
	p->failed = st;
	return st;
}

/* Stop the builder (after the batches handed over when done is set) and
 * free the pipe. */
static void pipe_close(ev_goal_pipe *p, int stop)
{
	pthread_mutex_lock(&p->mu);
	p->done = 1;
	p->stop = stop;
	pthread_cond_signal(&p->cv);
	pthread_mutex_unlock(&p->mu);
	pthread_join(p->th, NULL);
	pthread_cond_destroy(&p->cv);
	pthread_mutex_destroy(&p->mu);
	free(p->mem);
	free(p);
}

int ev_goal_pipe_end(ev_goal_pipe *p)
{
	if (!p)
		return EV_OK;
	int st = ev_goal_pipe_sync(p);
	pipe_close(p, 0);
	return st;
}

void ev_goal_pipe_free(ev_goal_pipe *p)
{
	if (p)
		pipe_close(p, 1);
}
