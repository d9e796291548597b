/* SPDX-License-Identifier: MIT */
/*
 * twopart.h - one job in two parts on two threads (twopart.c): the caller
 * runs part 0 while a worker thread runs part 1, and waits for both.
 */
#ifndef EV_TWOPART_H
#define EV_TWOPART_H

struct twopart;
/* A worker for fn(ctx, 1); EV_ERR_NOMEM, or EV_ERR_IO when no thread can
 * be made (the caller then runs both parts itself). */
int twopart_new(struct twopart **t, void (*fn)(void *ctx, int part), void *ctx);
/* fn(ctx, 0) here and fn(ctx, 1) on the worker; returns when both are
 * done.  What fn reads and writes is the caller's until then. */
void twopart_run(struct twopart *t);
/* Stops and joins the worker (NULL: nothing). */
void twopart_free(struct twopart *t);

#endif /* EV_TWOPART_H */
