/* SPDX-License-Identifier: MIT */
/*
 * kineto_window.h - a hash table that remembers the last N entries put in
 * (FIFO eviction), for links that are looked up shortly after they are
 * made: correlation id -> launching op, External id -> op.  Memory is fixed
 * by N, whatever the size of the trace.
 */
#ifndef EV_KINETO_WINDOW_H
#define EV_KINETO_WINDOW_H

#include <stdint.h>

struct kwin_ent {
	uint64_t key;
	uint64_t sig;   /* the op's signature string id */
	uint64_t bytes; /* an nccl:* annotation around the call: its size, */
	uint32_t op;    /* the op's External id (0 none) */
	uint8_t how;    /* caller's tag */
	uint8_t coll;   /* the annotation's collective (0 none) */
	uint8_t dtype;  /* and element type */
	uint8_t graph;  /* the call is a graph launch */
};

struct kwin {
	struct kwin_ent *ring;
	uint32_t *index;     /* ring position + 1, 0 = empty slot */
	uint64_t head;       /* entries put so far */
	uint32_t cap, imask; /* cap: ring size (power of two); imask: index size - 1 */
	uint32_t imax;       /* the index's largest mask (2 cap - 1): it starts small
	                      * and doubles while it is over half full, so a trace
	                      * with few links keeps its index in the cache */
	uint64_t evicted;
};

void kwin_init(struct kwin *w, uint32_t cap);
void kwin_free(struct kwin *w);
/* EV_OK or EV_ERR_NOMEM; an older entry with the same key is shadowed. */
int kwin_put(struct kwin *w, uint64_t key, const struct kwin_ent *e);
const struct kwin_ent *kwin_get(const struct kwin *w, uint64_t key);

#endif
