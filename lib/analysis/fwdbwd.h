/* SPDX-License-Identifier: MIT */
/*
 * fwdbwd.h - a backward op and the forward op it is the backward of, as
 * TraceLens links them (TraceToTree.link_all_fwd_bwd_events): the
 * backward op is the `autograd::engine::evaluate_function: ...` op of
 * the autograd node, and its kernels are those of its subtree.  The
 * stream carries the link on the node's own cpu_op range (step = the
 * forward op's External id, written by kineto2ev --flow-links from the
 * trace's fwdbwd flows, docs/FORMAT.md); fb_range finds the
 * evaluate_function op around it.  For ev-stats' backward perf sheets
 * and TraceLens's is_sole_bwd.  Private to lib/analysis.
 */
#ifndef EV_FWDBWD_H
#define EV_FWDBWD_H

#include <stddef.h>
#include <stdint.h>

#include "ev/stream.h"

#define FB_DEPTH 8 /* evaluate_function ops open around one op */

/* An evaluate_function op open on a thread. */
struct fb_wrap { uint32_t id; int64_t end; };
struct fb_thread { uint32_t rank, thread; uint16_t src; uint32_t n; struct fb_wrap w[FB_DEPTH]; };

/* The state: per thread, its open evaluate_function ops (memory grows
 * with the threads only). */
struct fb_links {
	struct fb_thread *th;
	size_t n, cap;
	uint64_t deep;     /* evaluate_function ops nested past FB_DEPTH: not seen */
	uint64_t linked;   /* links found */
};

/* A link: the forward op (its External id, on rank and src of the
 * backward op), and the backward op TraceLens takes: the innermost
 * evaluate_function op open around the linked range (itself when it is
 * one; the range itself when none is open), its id and end. */
struct fb_link { uint32_t fwd, bwd; int64_t bwd_end; };

/* Whether a source's ranges carry fwdbwd links: its #src line's
 * flow_links= names fwdbwd (kineto2ev --flow-links). */
int fb_source_linked(const ev_meta *m, uint16_t src);

/* Feed each cpu_op range r, named name, in stream order.  1 with *l when
 * r carries a link, 0 when it does not, EV_ERR_NOMEM (negative) when out
 * of memory. */
int fb_range(struct fb_links *L, const struct ev_rec *r, const char *name, struct fb_link *l);
void fb_free(struct fb_links *L);

#endif /* EV_FWDBWD_H */
