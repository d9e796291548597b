/* SPDX-License-Identifier: MIT */
/*
 * commseq.c - --comm-summarize-seq: acelyzer's --comm_summarize_seq
 * (CommunicationGroupContext) on the converter's last pass, in time order.
 *
 * A slice whose name contains "SenRdma" and a request id (the digits of the
 * first '_' or '-' followed by a digit) joins the group of its (input, rank,
 * request id); a group becomes one slice from its earliest start to its
 * latest end, named by the longest common prefix of its members' names,
 * with the union of their args.Peer in sig (" peers=a,b").  The other
 * fields are those of the member that starts last, the one acelyzer keeps.
 *
 * acelyzer holds every group until the end of its input.  Here a group
 * closes when the stream passes its end plus the window (any later member
 * would start after that: none does in time order), or, when the table of
 * open groups is full, the oldest closes early (counted).  The result is
 * acelyzer's whenever each member of a request starts no later than the
 * window after the end of the members before it, and no more than the
 * table's bound of requests overlap.  Memory: the open groups only.
 */
#include <stdlib.h>
#include <string.h>

#include "flex/commseq_int.h"

void cs_init(struct cs *s, int64_t window, size_t max)
{
	memset(s, 0, sizeof *s);
	s->window = window;
	s->max = max ? max : 1;
	ev_vec_init(&s->g, sizeof(struct cs_group));
}

void cs_free(struct cs *s)
{
	ev_vec_free(&s->g);
	free(s->buf);
	s->buf = NULL;
}

static int grow(struct cs *s, size_t n)
{
	if (n <= s->cap)
		return EV_OK;
	char *b = realloc(s->buf, n);
	if (!b)
		return EV_ERR_NOMEM;
	s->buf = b;
	s->cap = n;
	return EV_OK;
}

static int64_t deadline(const struct cs *s, const struct cs_group *g)
{
	return g->end + g->off + s->window;
}

/* The group's slice to out; a group of one member is written unchanged. */
static int emit(struct cs *s, ev_strtab *st, ev_sorter *out, const struct cs_group *g)
{
	struct ev_rec r = g->kept;
	int rc;
	if (g->members > 1) {
		size_t nl = 0, sl = 0;
		const char *name = ev_strtab_get(st, g->first_name, &nl);
		const char *sig = r.sig ? ev_strtab_get(st, r.sig, &sl) : NULL;
		if ((rc = ev_strtab_intern(st, name ? name : "", name ? g->lcp : 0, &r.name)) != EV_OK)
			return rc;
		if ((rc = grow(s, sl + 8 + (size_t)g->npeers * 12)) != EV_OK)
			return rc;
		size_t n = 0;
		if (sig)
			memcpy(s->buf, sig, sl);
		n = sig ? sl : 0;
		for (int i = 0; i < g->npeers; i++)
			n += (size_t)snprintf(s->buf + n, s->cap - n, "%s%d", i ? "," : (n ? " peers=" : "peers="),
			                      (int)g->peers[i]);
		if ((rc = ev_strtab_intern(st, s->buf, n, &r.sig)) != EV_OK)
			return rc;
		r.ts = g->start;
		r.dur = (uint64_t)(g->end - g->start);
		s->merged++;
		s->absorbed += g->members;
	}
	return ev_sorter_add(out, &r);
}

static int close_at(struct cs *s, ev_strtab *st, ev_sorter *out, size_t i)
{
	struct cs_group *g = s->g.data;
	int rc = emit(s, st, out, &g[i]);
	g[i] = g[s->g.len - 1];
	s->g.len--;
	return rc;
}

static void recompute(struct cs *s)
{
	const struct cs_group *g = s->g.data;
	s->next_close = INT64_MAX;
	for (size_t i = 0; i < s->g.len; i++)
		if (deadline(s, &g[i]) < s->next_close)
			s->next_close = deadline(s, &g[i]);
}

int cs_tick(struct cs *s, ev_strtab *st, ev_sorter *out, int64_t t)
{
	if (!s->g.len || t <= s->next_close)
		return EV_OK;
	for (size_t i = 0; i < s->g.len;) {
		int rc;
		if (deadline(s, (struct cs_group *)s->g.data + i) < t) {
			if ((rc = close_at(s, st, out, i)) != EV_OK)
				return rc;
		} else {
			i++;
		}
	}
	recompute(s);
	return EV_OK;
}

int cs_finish(struct cs *s, ev_strtab *st, ev_sorter *out)
{
	while (s->g.len) {
		int rc = close_at(s, st, out, s->g.len - 1);
		if (rc != EV_OK)
			return rc;
	}
	return EV_OK;
}

/* The request id of a SenRdma name: the key of (src, rank, its digits
 * without leading zeros, as acelyzer's int()), 0 when it has none. */
static uint64_t request_key(const char *n, size_t len, uint16_t src, uint32_t rank)
{
	if (!memmem(n, len, "SenRdma", 7))
		return 0;
	for (size_t i = 0; i + 1 < len; i++) {
		if ((n[i] != '_' && n[i] != '-') || n[i + 1] < '0' || n[i + 1] > '9')
			continue;
		size_t j = i + 1;
		while (j + 1 < len && n[j] == '0' && n[j + 1] >= '0' && n[j + 1] <= '9')
			j++;
		size_t k = j;
		while (k < len && n[k] >= '0' && n[k] <= '9')
			k++;
		unsigned char b[8 + 64];
		size_t d = k - j < 64 ? k - j : 64;
		ev_put64(b, (uint64_t)src << 32 | rank);
		memcpy(b + 8, n + j, d);
		uint64_t h = ev_hash64(b, 8 + d);
		return h ? h : 1;
	}
	return 0;
}

static void add_peer(struct cs *s, struct cs_group *g, int32_t p)
{
	int i = 0;
	while (i < g->npeers && g->peers[i] < p)
		i++;
	if (i < g->npeers && g->peers[i] == p)
		return;
	if (g->npeers == CS_MAX_PEERS) {
		s->peers_lost++;
		return;
	}
	memmove(g->peers + i + 1, g->peers + i, (size_t)(g->npeers - i) * sizeof *g->peers);
	g->peers[i] = p;
	g->npeers++;
}

int cs_add(struct cs *s, ev_strtab *st, ev_sorter *out, uint16_t src, const struct ev_rec *r, int64_t off,
           int32_t peer, int *taken)
{
	size_t nl = 0;
	*taken = 0;
	const char *name = r->name ? ev_strtab_get(st, r->name, &nl) : NULL;
	uint64_t key = name ? request_key(name, nl, src, r->rank) : 0;
	if (!key)
		return EV_OK;
	*taken = 1;
	struct cs_group *g = s->g.data;
	size_t i = 0;
	while (i < s->g.len && g[i].key != key)
		i++;
	int rc;
	if (i == s->g.len) {
		if (s->g.len >= s->max) {
			size_t old = 0;
			for (size_t j = 1; j < s->g.len; j++)
				if (g[j].opened < g[old].opened)
					old = j;
			if ((rc = close_at(s, st, out, old)) != EV_OK)
				return rc;
			s->early++;
			recompute(s);
		}
		struct cs_group *n = ev_vec_push(&s->g);
		if (!n)
			return EV_ERR_NOMEM;
		n->key = key;
		n->opened = s->opened++;
		n->first_name = r->name;
		n->lcp = nl;
		n->start = r->ts;
		n->end = ev_rec_end(r);
		n->off = off;
		g = s->g.data;
		i = s->g.len - 1;
		if (s->g.len == 1 || deadline(s, n) < s->next_close)
			s->next_close = deadline(s, n);
	} else {
		/* The shared prefix with the group's first name. */
		size_t fl = 0, k = 0;
		const char *first = ev_strtab_get(st, g[i].first_name, &fl);
		size_t lim = g[i].lcp < nl ? g[i].lcp : nl;
		while (first && k < lim && first[k] == name[k])
			k++;
		g[i].lcp = k;
		if (r->ts < g[i].start)
			g[i].start = r->ts;
		if (ev_rec_end(r) > g[i].end)
			g[i].end = ev_rec_end(r);
	}
	g[i].members++;
	g[i].kept = *r;
	if (peer >= 0)
		add_peer(s, &g[i], peer);
	return EV_OK;
}
