/* SPDX-License-Identifier: MIT */
/*
 * worker.c - a second thread for one job at a time (ev/worker.h).  Each
 * start is a generation: the caller bumps it, the worker wakes on it, runs
 * the job and marks it done; both wait on one condition.
 */
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>

#include "ev/stream.h"
#include "ev/worker.h"

struct ev_worker {
	void (*fn)(void *ctx);
	void *ctx;
	pthread_t th;
	pthread_mutex_t mu;
	pthread_cond_t cv;
	uint64_t gen, done; /* under mu: runs started, and finished */
	int quit;
};

static void *worker_main(void *arg)
{
	ev_worker *w = arg;
	uint64_t seen = 0;
	pthread_mutex_lock(&w->mu);
	for (;;) {
		while (w->gen == seen && !w->quit)
			pthread_cond_wait(&w->cv, &w->mu);
		if (w->gen == seen)
			break;
		seen = w->gen;
		pthread_mutex_unlock(&w->mu);
		w->fn(w->ctx);
		pthread_mutex_lock(&w->mu);
		w->done = seen;
		pthread_cond_broadcast(&w->cv);
	}
	pthread_mutex_unlock(&w->mu);
	return NULL;
}

int ev_worker_new(ev_worker **wp, void (*fn)(void *ctx), void *ctx)
{
	ev_worker *w = calloc(1, sizeof *w);
	*wp = NULL;
	if (!w)
		return EV_ERR_NOMEM;
	w->fn = fn;
	w->ctx = ctx;
	if (pthread_mutex_init(&w->mu, NULL)) {
		free(w);
		return EV_ERR_IO;
	}
	if (pthread_cond_init(&w->cv, NULL)) {
		pthread_mutex_destroy(&w->mu);
		free(w);
		return EV_ERR_IO;
	}
	if (pthread_create(&w->th, NULL, worker_main, w)) {
		pthread_cond_destroy(&w->cv);
		pthread_mutex_destroy(&w->mu);
		free(w);
		return EV_ERR_IO;
	}
	*wp = w;
	return EV_OK;
}

void ev_worker_start(ev_worker *w)
{
	pthread_mutex_lock(&w->mu);
	w->gen++;
	pthread_cond_broadcast(&w->cv);
	pthread_mutex_unlock(&w->mu);
}

void ev_worker_wait(ev_worker *w)
{
	pthread_mutex_lock(&w->mu);
	while (w->done != w->gen)
		pthread_cond_wait(&w->cv, &w->mu);
	pthread_mutex_unlock(&w->mu);
}

void ev_worker_free(ev_worker *w)
{
	if (!w)
		return;
	pthread_mutex_lock(&w->mu);
	w->quit = 1;
	pthread_cond_broadcast(&w->cv);
	pthread_mutex_unlock(&w->mu);
	pthread_join(w->th, NULL);
	pthread_cond_destroy(&w->cv);
	pthread_mutex_destroy(&w->mu);
	free(w);
}
