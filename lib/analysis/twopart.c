/* SPDX-License-Identifier: MIT */
/*
 * twopart.c - one job in two parts on two threads (twopart.h).  Each run
 * is a generation: the caller bumps it and does part 0, the worker wakes
 * on it, does part 1 and marks it done.  Both wait on one condition.
 */
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>

#include "analysis/twopart.h"
#include "ev/stream.h"

struct twopart {
	void (*fn)(void *ctx, int part);
	void *ctx;
	pthread_t th;
	pthread_mutex_t mu;
	pthread_cond_t cv;
	uint64_t gen, done; /* under mu: runs asked for, and finished by the worker */
	int quit;
};

static void *worker(void *arg)
{
	struct twopart *t = arg;
	uint64_t seen = 0;
	pthread_mutex_lock(&t->mu);
	for (;;) {
		while (t->gen == seen && !t->quit)
			pthread_cond_wait(&t->cv, &t->mu);
		if (t->gen == seen)
			break;
		seen = t->gen;
		pthread_mutex_unlock(&t->mu);
		t->fn(t->ctx, 1);
		pthread_mutex_lock(&t->mu);
		t->done = seen;
		pthread_cond_broadcast(&t->cv);
	}
	pthread_mutex_unlock(&t->mu);
	return NULL;
}

int twopart_new(struct twopart **tp, void (*fn)(void *ctx, int part), void *ctx)
{
	struct twopart *t = calloc(1, sizeof *t);
	*tp = NULL;
	if (!t)
		return EV_ERR_NOMEM;
	t->fn = fn;
	t->ctx = ctx;
	if (pthread_mutex_init(&t->mu, NULL)) {
		free(t);
		return EV_ERR_IO;
	}
	if (pthread_cond_init(&t->cv, NULL)) {
		pthread_mutex_destroy(&t->mu);
		free(t);
		return EV_ERR_IO;
	}
	if (pthread_create(&t->th, NULL, worker, t)) {
		pthread_cond_destroy(&t->cv);
		pthread_mutex_destroy(&t->mu);
		free(t);
		return EV_ERR_IO;
	}
	*tp = t;
	return EV_OK;
}

void twopart_run(struct twopart *t)
{
	pthread_mutex_lock(&t->mu);
	uint64_t g = ++t->gen;
	pthread_cond_broadcast(&t->cv);
	pthread_mutex_unlock(&t->mu);
	t->fn(t->ctx, 0);
	pthread_mutex_lock(&t->mu);
	while (t->done != g)
		pthread_cond_wait(&t->cv, &t->mu);
	pthread_mutex_unlock(&t->mu);
}

void twopart_free(struct twopart *t)
{
	if (!t)
		return;
	pthread_mutex_lock(&t->mu);
	t->quit = 1;
	pthread_cond_broadcast(&t->cv);
	pthread_mutex_unlock(&t->mu);
	pthread_join(t->th, NULL);
	pthread_cond_destroy(&t->cv);
	pthread_mutex_destroy(&t->mu);
	free(t);
}
