/* SPDX-License-Identifier: MIT */
/*
 * fwdbwd.c - backward ops and their forward op (fwdbwd.h).
 */
#include <stdlib.h>
#include <string.h>

#include "analysis/fwdbwd.h"

static const char wrapper[] = "autograd::engine::evaluate_function:";

int fb_source_linked(const ev_meta *m, uint16_t src)
{
	const struct ev_src_info *si = m ? ev_meta_src(m, src) : NULL;
	const char *v = si ? ev_kv_get(si->kv, si->nkv, "flow_links") : NULL;
	if (!v)
		return 0;
	/* A comma-separated list of flow kinds. */
	for (const char *p = v; *p; p += *p == ',') {
		size_t n = strcspn(p, ",");
		if (n == 6 && !memcmp(p, "fwdbwd", 6))
			return 1;
		p += n;
	}
	return 0;
}

static struct fb_thread *thread_of(struct fb_links *L, const struct ev_rec *r)
{
	for (size_t i = 0; i < L->n; i++)
		if (L->th[i].rank == r->rank && L->th[i].thread == r->stream && L->th[i].src == r->src)
			return &L->th[i];
	if (L->n == L->cap) {
		size_t cap = L->cap ? 2 * L->cap : 8;
		struct fb_thread *nt = realloc(L->th, cap * sizeof *nt);
		if (!nt)
			return NULL;
		L->th = nt;
		L->cap = cap;
	}
	struct fb_thread *t = &L->th[L->n++];
	memset(t, 0, sizeof *t);
	t->rank = r->rank;
	t->thread = r->stream;
	t->src = r->src;
	return t;
}

int fb_range(struct fb_links *L, const struct ev_rec *r, const char *name, struct fb_link *l)
{
	int is_wrapper = name && !strncmp(name, wrapper, sizeof wrapper - 1);
	if (!is_wrapper && !r->step)
		return 0; /* (the stack is popped lazily, by the next that counts) */
	struct fb_thread *t = thread_of(L, r);
	if (!t)
		return EV_ERR_NOMEM;
	/* Ops that ended at or before r's start are no longer open. */
	while (t->n && t->w[t->n - 1].end <= r->ts)
		t->n--;
	if (is_wrapper) {
		if (t->n == FB_DEPTH)
			L->deep++;
		else
			t->w[t->n++] = (struct fb_wrap){ r->id, ev_rec_end(r) };
	}
	if (!r->step)
		return 0;
	l->fwd = r->step;
	if (t->n) {
		l->bwd = t->w[t->n - 1].id;
		l->bwd_end = t->w[t->n - 1].end;
	} else {
		l->bwd = r->id;
		l->bwd_end = ev_rec_end(r);
	}
	L->linked++;
	return 1;
}

void fb_free(struct fb_links *L)
{
	free(L->th);
	memset(L, 0, sizeof *L);
}
