/* SPDX-License-Identifier: MIT */
/*
 * ev/worker.h - a second thread for one job at a time (lib/stream/worker.c):
 * the caller starts fn(ctx) on it, goes on with its own part, and waits.
 * What fn reads and writes is the worker's from the start to the wait.
 */
#ifndef EV_WORKER_H
#define EV_WORKER_H

typedef struct ev_worker ev_worker;
/* A worker thread for fn; EV_ERR_NOMEM, or EV_ERR_IO when no thread can be
 * made (the caller then does the work itself). */
int ev_worker_new(ev_worker **w, void (*fn)(void *ctx), void *ctx);
/* fn(ctx) on the worker, once; the caller must wait before starting again. */
void ev_worker_start(ev_worker *w);
/* Until that run of fn has returned (at once if none was started). */
void ev_worker_wait(ev_worker *w);
/* Stops and joins the thread (NULL: nothing). */
void ev_worker_free(ev_worker *w);

#endif /* EV_WORKER_H */
