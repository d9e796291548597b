/* SPDX-License-Identifier: MIT */
/*
 * unified_synuid.c - the ex_UID of unified_perf_summary's synthetic ops:
 * their places in TraceLens's numbering, noted as their rows are made
 * (unified_groups.c) and numbered once the stream has ended.
 */
#include <math.h>
#include <stdlib.h>

#include "analysis/unified.h"

/* TraceLens numbers its synthetic ops from the trace's event count N on:
 * first the GPU events launched outside any op, grouped by their runtime
 * call, the calls in the order of their first such event in the file, each
 * call's events in file order; then those under an op, in file order.  A
 * row's ex_UID is its first member's, the smallest.  That needs every
 * synthetic op's place in the file: the first SYN_MAX are kept; past them,
 * or with a source's events not numbered (another producer, an older
 * kineto2ev, an op's events past UNI_MAXK left out), the cells stay empty,
 * said. */
#define SYN_MAX (1u << 20)

void syn_bad(struct unified *u, uint16_t src, unsigned why)
{
	u->synbad[src / 64] |= (uint64_t)1 << (src % 64);
	u->synwhy |= why;
}

static int syn_is_bad(const struct unified *u, uint16_t src)
{
	return (int)(u->synbad[src / 64] >> (src % 64) & 1);
}

int syn_note(struct unified *u, const struct uinst *in, int j, size_t grp)
{
	uint16_t src = (uint16_t)in->key.k2;
	if (!in->kuid[j]) {
		syn_bad(u, src, SYN_NOUID);
		return EV_OK;
	}
	if (u->nsyn == SYN_MAX || grp > UINT32_MAX) {
		u->synlost++;
		return EV_OK;
	}
	if (u->nsyn == u->capsyn) {
		size_t cap = u->capsyn ? 2 * u->capsyn : 1024;
		struct usyn *ns = realloc(u->syn, (cap < SYN_MAX ? cap : SYN_MAX) * sizeof *ns);
		if (!ns)
			return EV_ERR_NOMEM;
		u->syn = ns;
		u->capsyn = cap < SYN_MAX ? cap : SYN_MAX;
	}
	int orphan = in->key.k1 >= CALL_BIT;
	uint64_t call = orphan ? (uint64_t)in->key.rank << 32 | (uint32_t)(in->key.k1 - CALL_BIT) : 0;
	u->syn[u->nsyn++] = (struct usyn){ call, in->kuid[j], in->kuid[j], (uint32_t)grp, src, (uint8_t)orphan };
	return EV_OK;
}

/* By source, orphans first, then by the key given (0: their call, 1: the
 * place sorted by), then file order. */
static int syn_cmp(const struct usyn *a, const struct usyn *b, int by_first)
{
	if (a->src != b->src)
		return a->src < b->src ? -1 : 1;
	if (a->orphan != b->orphan)
		return a->orphan > b->orphan ? -1 : 1;
	uint64_t ka = by_first ? a->first : a->parent, kb = by_first ? b->first : b->parent;
	if (ka != kb)
		return ka < kb ? -1 : 1;
	return a->uid1 < b->uid1 ? -1 : a->uid1 > b->uid1;
}

static int syn_by_call(const void *a, const void *b)
{
	return syn_cmp(a, b, 0);
}

static int syn_by_place(const void *a, const void *b)
{
	return syn_cmp(a, b, 1);
}

/* The trace's event count of a source (#src trace_events=), 0 unknown. */
static uint64_t trace_events(const ev_meta *m, uint16_t src)
{
	const struct ev_src_info *si = m ? ev_meta_src(m, src) : NULL;
	const char *v = si ? ev_kv_get(si->kv, si->nkv, "trace_events") : NULL;
	char *end;
	unsigned long long n = v && *v >= '0' && *v <= '9' ? strtoull(v, &end, 10) : 0;
	return v && n && !*end && n <= UINT32_MAX ? (uint64_t)n : 0;
}

void syn_number(ev_stats *s)
{
	struct unified *u = s->state;
	if (!u->nsyn || u->synlost)
		return;
	/* An orphan's call's place: its first event's. */
	qsort(u->syn, u->nsyn, sizeof *u->syn, syn_by_call);
	for (size_t i = 1; i < u->nsyn; i++) {
		const struct usyn *p = &u->syn[i - 1];
		struct usyn *c = &u->syn[i];
		if (c->orphan && p->orphan && c->src == p->src && c->parent == p->parent)
			c->first = p->first;
	}
	qsort(u->syn, u->nsyn, sizeof *u->syn, syn_by_place);
	uint64_t n = 0, pos = 0;
	for (size_t i = 0; i < u->nsyn; i++) {
		const struct usyn *y = &u->syn[i];
		if (!i || y->src != u->syn[i - 1].src) {
			pos = 0;
			if (!(n = trace_events(s->meta, y->src)))
				syn_bad(u, y->src, SYN_NOUID);
		}
		double uid = (double)(n + pos++);
		struct ugroup *g = GROUP_VAL(&s->g, y->grp);
		if (n && !syn_is_bad(u, y->src) && g->usrc == y->src && (isnan(g->uid) || uid < g->uid))
			g->uid = uid;
	}
}
