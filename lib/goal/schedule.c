/* SPDX-License-Identifier: MIT */
/*
 * schedule.c - the ev_goal builder: per-rank state, the id window, checks
 * and the text and binary encodings of each op as it is completed.
 *
 * An op is completed when the next record of its rank arrives (its DEP
 * records follow it).  Its dependencies are then resolved from input op ids
 * to GOAL labels (node indices: a folded zero-length calc stands for its one
 * dependency or for nothing), checked, and the op is appended to its rank's
 * spool: a text line and its requires lines, or in binary a 39-byte node
 * whose successor lists are complete only when it leaves the window.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "goal_int.h"

/* ---- errors --------------------------------------------------------- */

int goal_fail(struct ev_goal *g, int status, uint64_t recno, const char *fmt, ...)
{
	char msg[512];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	g->err.status = status;
	g->err.in_output = 0;
	snprintf(g->err.msg, sizeof g->err.msg, "%s: record %llu: %s", g->fname ? g->fname : "input",
	         (unsigned long long)recno, msg);
	return status;
}

int goal_io_fail(struct ev_goal *g, const char *path)
{
	int e = errno ? errno : EIO;
	g->err.status = EV_ERR_IO;
	g->err.in_output = 0;
	snprintf(g->err.msg, sizeof g->err.msg, "%s: %s", path ? path : "spool", strerror(e));
	return EV_ERR_IO;
}

int goal_nomem(struct ev_goal *g)
{
	g->err.status = EV_ERR_NOMEM;
	g->err.in_output = 0;
	snprintf(g->err.msg, sizeof g->err.msg, "out of memory");
	return EV_ERR_NOMEM;
}

/* ---- set-up ---------------------------------------------------------- */

void ev_goal_opts_init(struct ev_goal_opts *o)
{
	memset(o, 0, sizeof *o);
	o->check = 1;
	o->window = 4096;
}

int ev_goal_new(ev_goal **out, const struct ev_goal_opts *o)
{
	*out = NULL;
	ev_goal *g = calloc(1, sizeof *g);
	if (!g)
		return EV_ERR_NOMEM;
	*out = g;
	g->o = *o;
	g->estimate = o->estimate;
	if (o->ranks)
		g->sel = *o->ranks;
	g->o.ranks = NULL;
	g->ep.free = NONE32;
	g->sf.fd = -1;
	goal_arena_init(&g->arena);
	g->mt.a = &g->arena;
	ev_map_init(&g->lanes);
	uint32_t w = 2;
	while (w < o->window && w < EV_GOAL_MAX_WINDOW)
		w *= 2;
	g->o.window = w;
	g->want_window = w;
	g->pages = calloc(EV_GOAL_MAX_RANKS / RANK_PAGE, sizeof *g->pages);
	if (!g->pages)
		return goal_nomem(g);
	const char *base = o->spool_parent && *o->spool_parent ? o->spool_parent : "/tmp";
	if (spoolfile_open(&g->sf, base)) {
		int e = errno;
		g->err.status = EV_ERR_IO;
		snprintf(g->err.msg, sizeof g->err.msg, "%s: cannot make a spool file: %s", base, strerror(e));
		return EV_ERR_IO;
	}
	return EV_OK;
}

void ev_goal_source(ev_goal *g, const char *name) { g->fname = name; }

const struct ev_goal_error *ev_goal_error(const ev_goal *g) { return &g->err; }

void ev_goal_free(ev_goal *g)
{
	if (!g)
		return;
	goal_drain_end(g);
	/* Windows, successor slots, spool buffers, the edge pool and the
	 * matching table go with the arena. */
	for (uint32_t r = 0; r < g->nr; r++) {
		struct rankst *rs = goal_rank(g, r);
		if (!rs)
			continue;
		free(rs->deps);
		free(rs->g_succ);
		free(rs);
	}
	if (g->pages)
		for (uint32_t i = 0; i < EV_GOAL_MAX_RANKS / RANK_PAGE; i++)
			free(g->pages[i]);
	free(g->pages);
	mt_free(&g->mt);
	goal_arena_release(&g->arena);
	ev_map_free(&g->lanes);
	spoolfile_close(&g->sf);
	free(g);
}

static struct rankst *new_rank(struct ev_goal *g, uint32_t rank)
{
	struct rankst ***page = &g->pages[rank / RANK_PAGE];
	if (!*page && !(*page = calloc(RANK_PAGE, sizeof **page)))
		return NULL;
	struct rankst *rs = calloc(1, sizeof *rs);
	if (!rs)
		return NULL;
	(*page)[rank % RANK_PAGE] = rs;
	if (rank >= g->nr)
		g->nr = rank + 1;
	rs->rank = rank;
	rs->emit = ev_goal_ranks_has(&g->sel, rank);
	rs->wcap = 1024 < g->o.window ? 1024 : g->o.window;
	rs->map = goal_arena_alloc(&g->arena, rs->wcap * sizeof *rs->map, 1);
	if (!rs->map)
		return NULL;
	if (g->o.binary && !(rs->ns = goal_arena_alloc(&g->arena, rs->wcap * sizeof *rs->ns, 0)))
		return NULL;
	if (!rs->emit)
		return rs;
	/* Big buffers mean few writes; many ranks get smaller ones. */
	size_t big = g->nr > 4096 ? 4096 : g->nr > 256 ? 16384 : 1 << 16;
	if (g->o.binary) {
		if (spool_init(&rs->nodes, &g->sf, &g->arena, big) || spool_init(&rs->cnt, &g->sf, &g->arena, big / 4) ||
		    spool_init(&rs->succ, &g->sf, &g->arena, big / 2) ||
		    spool_init(&rs->roots, &g->sf, &g->arena, 4096))
			return NULL;
	} else {
		if (spool_init(&rs->text, &g->sf, &g->arena, big))
			return NULL;
		char head[48];
		int n = snprintf(head, sizeof head, "rank %u {\n", rank);
		if (spool_put(&rs->text, head, (size_t)n))
			return NULL;
	}
	return rs;
}

/* ---- number formatting ---------------------------------------------- */

/* Decimal digits of v at p; returns the end.  Two digits per step, each
 * put in its place: the length is counted first, as a copy of a length
 * known only at run time is a call to memcpy for every number. */
static inline char *put_u64(char *p, uint64_t v)
{
	static const char dd[] = "00010203040506070809101112131415161718192021222324252627282930313233343536373839"
	                         "40414243444546474849505152535455565758596061626364656667686970717273747576777879"
	                         "8081828384858687888990919293949596979899";
	static const uint64_t p10[20] = { 1ull, 10ull, 100ull, 1000ull, 10000ull, 100000ull, 1000000ull, 10000000ull,
		                          100000000ull, 1000000000ull, 10000000000ull, 100000000000ull,
		                          1000000000000ull, 10000000000000ull, 100000000000000ull,
		                          1000000000000000ull, 10000000000000000ull, 100000000000000000ull,
		                          1000000000000000000ull, 10000000000000000000ull };
	if (v < 10) {
		*p = (char)('0' + v);
		return p + 1;
	}
	/* floor(log10(v)) from the bit length (1233 / 4096 ~ log10(2)),
	 * one too high at most: then the comparison takes it back. */
	unsigned t = ((unsigned)(64 - __builtin_clzll(v)) * 1233) >> 12;
	size_t n = t + (v >= p10[t]);
	char *e = p + n, *q = e;
	while (v >= 100) {
		unsigned d = (unsigned)(v % 100) * 2;
		v /= 100;
		*--q = dd[d + 1];
		*--q = dd[d];
	}
	if (v >= 10) {
		*--q = dd[v * 2 + 1];
		*--q = dd[v * 2];
	} else {
		*--q = (char)('0' + v);
	}
	return e;
}

#define PUT_LIT(p, s) (memcpy((p), (s), sizeof(s) - 1), (p) + sizeof(s) - 1)

/* ---- the id window ---------------------------------------------------- */

/* Grow the window of a rank to nc slots (a larger power of two). */
static int window_grow(struct ev_goal *g, struct rankst *rs, uint32_t nc)
{
	uint32_t *nm = goal_arena_alloc(&g->arena, nc * sizeof *nm, 1);
	struct nslot *nn = NULL;
	if (!nm)
		return -1;
	if (g->o.binary && !(nn = goal_arena_alloc(&g->arena, nc * sizeof *nn, 0))) {
		goal_arena_free(&g->arena, nm, nc * sizeof *nm);
		return -1;
	}
	if (rs->have_id)
		for (uint64_t id = rs->first_id; id <= rs->last_id; id++)
			nm[id & (nc - 1)] = rs->map[id & (rs->wcap - 1)];
	if (nn)
		for (uint32_t n = rs->node_lo; n < rs->next_node; n++)
			nn[n & (nc - 1)] = rs->ns[n & (rs->wcap - 1)];
	goal_arena_free(&g->arena, rs->map, rs->wcap * sizeof *rs->map);
	if (rs->ns)
		goal_arena_free(&g->arena, rs->ns, rs->wcap * sizeof *rs->ns);
	rs->map = nm;
	rs->ns = nn;
	rs->wcap = nc;
	return 0;
}

static int edge_add(struct ev_goal *g, struct nslot *n, uint32_t succ, int ireq)
{
	struct edgepool *p = &g->ep;
	uint32_t e;
	if (p->free != NONE32) {
		e = p->free;
		p->free = p->e[e].next;
	} else {
		if (p->len == p->cap) {
			if (p->cap > UINT32_MAX / 2)
				return -1;
			uint32_t nc = p->cap ? p->cap * 2 : 4096;
			struct edge *a = goal_arena_alloc(&g->arena, nc * sizeof *a, 0);
			if (!a)
				return -1;
			if (p->len)
				memcpy(a, p->e, p->len * sizeof *a);
			goal_arena_free(&g->arena, p->e, p->cap * sizeof *a);
			p->e = a;
			p->cap = nc;
		}
		e = p->len++;
	}
	/* Pushed at the head, counted: the list is newest first, and
	 * edge_drain writes it back to front. */
	uint32_t *h = ireq ? &n->ih : &n->rh;
	p->e[e].succ = succ;
	p->e[e].next = *h;
	*h = e;
	if (ireq)
		n->ni++;
	else
		n->nr++;
	return 0;
}

/* Turn a list around (newest first becomes oldest first). */
static uint32_t edge_reverse(struct ev_goal *g, uint32_t h)
{
	uint32_t prev = NONE32;
	while (h != NONE32) {
		uint32_t nx = g->ep.e[h].next;
		g->ep.e[h].next = prev;
		prev = h;
		h = nx;
	}
	return prev;
}

/* Append one successor list (n entries, newest first) after its node, in
 * the order the edges were added, and free its edges. */
static int edge_drain(struct ev_goal *g, struct rankst *rs, uint32_t h, uint32_t n)
{
	struct edgepool *p = &g->ep;
	uint32_t head, tail = NONE32;
	if (!n)
		return 0;
	if ((size_t)n * 4 <= rs->succ.cap) {
		/* The common case: the whole list in the buffer, back to front. */
		unsigned char *b = spool_room(&rs->succ, 4 * (size_t)n);
		if (!b)
			return -1;
		head = h;
		for (uint32_t i = n; i-- > 0;) {
			le_put32(b + 4 * i, p->e[h].succ);
			tail = h;
			h = p->e[h].next;
		}
		rs->succ.len += 4 * (size_t)n;
	} else {
		/* Longer than a buffer: turned around, then written in pieces. */
		head = h = edge_reverse(g, h);
		for (uint32_t left = n; left;) {
			uint32_t k = left < rs->succ.cap / 4 ? left : (uint32_t)(rs->succ.cap / 4);
			unsigned char *b = spool_room(&rs->succ, 4 * (size_t)k);
			if (!b)
				return -1;
			for (uint32_t i = 0; i < k; i++) {
				le_put32(b + 4 * i, p->e[h].succ);
				tail = h;
				h = p->e[h].next;
			}
			rs->succ.len += 4 * (size_t)k;
			left -= k;
		}
	}
	/* The whole list onto the free list at once. */
	p->e[tail].next = p->free;
	p->free = head;
	return 0;
}

/* Binary: the oldest node leaves the window; its successor lists are final:
 * their lengths go to the counts spool, the lists to the appendix. */
static int node_finish(struct ev_goal *g, struct rankst *rs)
{
	struct nslot *sl = &rs->ns[rs->node_lo & (rs->wcap - 1)];
	rs->node_lo++;
	if (!rs->emit)
		return 0;
	unsigned char *p = spool_room(&rs->cnt, 8);
	if (!p)
		return -1;
	le_put32(p, sl->nr);
	le_put32(p + 4, sl->ni);
	rs->cnt.len += 8;
	/* Most nodes have no irequires successors, many no successors at all. */
	return (sl->nr && edge_drain(g, rs, sl->rh, sl->nr)) || (sl->ni && edge_drain(g, rs, sl->ih, sl->ni)) ? -1 : 0;
}

/* Drop the oldest id of the window (finishing its node in binary mode). */
static int window_evict(struct ev_goal *g, struct rankst *rs)
{
	uint32_t v = rs->map[rs->first_id & (rs->wcap - 1)];
	rs->map[rs->first_id & (rs->wcap - 1)] = K_UNDEF;
	rs->first_id++;
	if (g->o.binary && (v & K_MASK) == K_REAL) {
		if ((v & K_IDX) != rs->node_lo)
			return -2;
		return node_finish(g, rs);
	}
	return 0;
}

/* Make room for id in the window (ids strictly increase).  0, or -1 out
 * of memory (a larger window), -2 out of step, -3 a spool write failed
 * (errno). */
static int window_advance(struct ev_goal *g, struct rankst *rs, uint32_t id)
{
	int rc;
	if (!rs->have_id) {
		rs->first_id = rs->last_id = rs->min_id = id;
		rs->have_id = 1;
		rs->map[id & (rs->wcap - 1)] = K_UNDEF;
		return 0;
	}
	/* The window covers twice the longest dependency seen so far (at least
	 * --window ops): coll-expand's dependencies reach back at most to the
	 * start of the collective, and that distance grows one op at a time. */
	if ((uint64_t)id - rs->first_id + 1 > rs->wcap && rs->wcap < g->want_window) {
		/* A full window that may grow goes straight to what it may
		 * need: a rank that fills its window keeps doing so, and each
		 * step on the way would leave a block behind in the arena. */
		if (window_grow(g, rs, g->want_window))
			return -1;
	}
	if ((uint64_t)id - rs->last_id >= rs->wcap) {
		/* A jump past the whole window: everything in it leaves. */
		while (rs->first_id <= rs->last_id)
			if ((rc = window_evict(g, rs)))
				return rc == -1 ? -3 : rc;
		rs->first_id = id - rs->wcap + 1;
	} else {
		while ((uint64_t)id - rs->first_id + 1 > rs->wcap)
			if ((rc = window_evict(g, rs)))
				return rc == -1 ? -3 : rc;
	}
	/* Ids skipped over stay undefined (evicted slots are cleared). */
	rs->map[id & (rs->wcap - 1)] = K_UNDEF;
	rs->last_id = id;
	return 0;
}

/* ---- lanes and NICs ------------------------------------------------- */

static int lane_cpu(struct ev_goal *g, uint32_t lane, uint32_t *cpu)
{
	if (g->o.cpu == EV_GOAL_CPU_LANE) {
		*cpu = lane;
		return 0;
	}
	if (lane < LANE_DENSE) {
		if (!g->lane_cpu[lane])
			g->lane_cpu[lane] = ++g->nlanes;
		*cpu = g->lane_cpu[lane] - 1;
		return 0;
	}
	uint64_t *v = ev_map_get(&g->lanes, (uint64_t)lane + 1);
	if (v) {
		*cpu = (uint32_t)*v;
		return 0;
	}
	*cpu = g->nlanes++;
	return ev_map_put(&g->lanes, (uint64_t)lane + 1, *cpu) ? -1 : 0;
}

static const char *rank_node(const ev_meta *m, uint32_t r)
{
	const struct ev_rank_info *ri = m ? ev_meta_rank(m, r) : NULL;
	if (!ri)
		return NULL;
	const char *v = ev_kv_get(ri->kv, ri->nkv, "node");
	return v ? v : ev_kv_get(ri->kv, ri->nkv, "host");
}

/* GPU index of rank r inside its node: ranks of the node in rank order. */
static int rail_of(struct ev_goal *g, struct rankst *rs, uint32_t *rail)
{
	if (rs->rail_known) {
		*rail = rs->rail;
		return 0;
	}
	uint32_t r = rs->rank;
	if (g->o.ranks_per_node) {
		rs->rail = r % g->o.ranks_per_node;
	} else {
		const char *node = rank_node(g->o.meta, r);
		if (!node)
			return -1;
		uint32_t k = 0;
		for (size_t i = 0; i < ev_meta_nrank(g->o.meta); i++) {
			const struct ev_rank_info *ri = ev_meta_rank_at(g->o.meta, i);
			const char *n2 = ri->rank < r ? rank_node(g->o.meta, ri->rank) : NULL;
			if (n2 && strcmp(n2, node) == 0)
				k++;
		}
		rs->rail = k;
	}
	rs->rail_known = 1;
	*rail = rs->rail;
	return 0;
}

/* ---- ATLAHS-style line estimate --------------------------------------- */

/* ATLAHS wraps the ops of every (collective, channel, step) in a parallel
 * group: two `calc 0` sentinels, a requires from each group root to the
 * start sentinel and from the end sentinel to each group tail.  Counted per
 * group of consecutive ops with the same key; input deps count as written. */
static void group_close(struct rankst *rs)
{
	if (!rs->g_open)
		return;
	uint32_t tails = 0;
	for (uint32_t i = 0; i < rs->g_n && i < rs->g_cap; i++)
		tails += !rs->g_succ[i];
	rs->atlahs_extra += 2 + rs->g_roots + tails;
	rs->g_open = 0;
}

static int group_op(struct rankst *rs, const struct goal_op *op, const struct dep *deps, size_t nd)
{
	int grouped = op->type != EV_CALC || op->op == EV_CALC_REDUCE || op->op == EV_CALC_COPY ||
	              op->op == EV_CALC_INTRA;
	if (!grouped) {
		group_close(rs);
		return 0;
	}
	uint32_t step = op->type == EV_CALC ? rs->g_step : op->step;
	if (!rs->g_open || rs->g_comm != op->comm || rs->g_seq != op->seq || rs->g_chan != op->channel ||
	    rs->g_step != step) {
		group_close(rs);
		rs->g_open = 1;
		rs->g_comm = op->comm;
		rs->g_seq = op->seq;
		rs->g_chan = op->channel;
		rs->g_step = step;
		rs->g_first = op->id;
		rs->g_n = 0;
		rs->g_roots = 0;
	}
	uint32_t i = op->id - rs->g_first;
	if (i >= (1u << 20)) /* absurdly large group: stop tracking its tails */
		return 0;
	if (i >= rs->g_cap) {
		size_t nc = rs->g_cap ? rs->g_cap * 2 : 256;
		while (nc <= i)
			nc *= 2;
		unsigned char *ng = realloc(rs->g_succ, nc);
		if (!ng)
			return -1;
		rs->g_succ = ng;
		rs->g_cap = nc;
	}
	while (rs->g_n <= i)
		rs->g_succ[rs->g_n++] = 0;
	int in_group = 0;
	for (size_t k = 0; k < nd; k++)
		if (deps[k].target >= rs->g_first && deps[k].target - rs->g_first < rs->g_n) {
			rs->g_succ[deps[k].target - rs->g_first] = 1;
			in_group = 1;
		}
	if (!in_group)
		rs->g_roots++;
	return 0;
}

/* ---- ops ------------------------------------------------------------- */

static const char *type_word(unsigned t)
{
	return t == EV_SEND ? "send" : t == EV_RECV ? "recv" : "calc";
}

static int check_match(struct ev_goal *g, const struct goal_op *op, uint64_t recno)
{
	struct mkey k;
	int is_send = op->type == EV_SEND;
	k.src = is_send ? op->rank : (uint32_t)op->peer;
	k.dst = is_send ? (uint32_t)op->peer : op->rank;
	k.tag = op->aux;
	struct mslot *e = mt_find(&g->mt, &k, 1);
	if (!e)
		return goal_nomem(g);
	uint32_t c = mt_count(e);
	if (c && mt_sends(e) != is_send) {
		uint64_t other = mt_pop(e);
		if (other != op->size)
			return goal_fail(g, EV_ERR_FORMAT, recno,
			                 "rank %u %s of %llu bytes %s rank %d tag %u is matched (FIFO) by a %s of %llu bytes",
			                 op->rank, type_word(op->type), (unsigned long long)op->size,
			                 is_send ? "to" : "from", op->peer, op->aux, is_send ? "recv" : "send",
			                 (unsigned long long)other);
		if (c == 1)
			mt_remove(&g->mt, e);
		return 0;
	}
	if (!c) {
		/* A new key: a slot whose queue drains is removed at once. */
		e->first_rec = recno;
		g->mt.len++;
	}
	if (c == MT_COUNT)
		return goal_fail(g, EV_ERR_RANGE, recno, "rank %u: more than %u messages in flight from rank %u to rank %u tag %u",
		                 op->rank, MT_COUNT, k.src, k.dst, k.tag);
	if (mt_push(e, op->size, is_send))
		return goal_nomem(g);
	if (g->mt.len > g->mt.open_max)
		g->mt.open_max = g->mt.len;
	return 0;
}

static int emit_text(struct rankst *rs, const struct goal_op *op, uint32_t node, uint32_t cpu, uint32_t nic,
                     const struct dep *deps, size_t nd)
{
	/* The op line is at most ~130 bytes, a requires line ~40. */
	char *p0 = (char *)spool_room(&rs->text, 160);
	if (!p0)
		return -1;
	char *p = p0;
	*p++ = 'l';
	p = put_u64(p, node);
	if (op->type == EV_CALC) {
		p = PUT_LIT(p, ": calc ");
		p = put_u64(p, op->size);
		p = PUT_LIT(p, " cpu ");
		p = put_u64(p, cpu);
	} else {
		if (op->type == EV_SEND) {
			p = PUT_LIT(p, ": send ");
			p = put_u64(p, op->size);
			p = PUT_LIT(p, "b to ");
		} else {
			p = PUT_LIT(p, ": recv ");
			p = put_u64(p, op->size);
			p = PUT_LIT(p, "b from ");
		}
		if (op->peer < 0)
			p = PUT_LIT(p, "-1");
		else
			p = put_u64(p, (uint32_t)op->peer);
		p = PUT_LIT(p, " tag ");
		p = put_u64(p, op->aux);
		p = PUT_LIT(p, " cpu ");
		p = put_u64(p, cpu);
		p = PUT_LIT(p, " nic ");
		p = put_u64(p, nic);
	}
	*p++ = '\n';
	rs->text.len += (size_t)(p - p0);
	for (size_t i = 0; i < nd; i++) {
		p0 = p = (char *)spool_room(&rs->text, 48);
		if (!p)
			return -1;
		*p++ = 'l';
		p = put_u64(p, node);
		if (deps[i].ireq)
			p = PUT_LIT(p, " irequires l");
		else
			p = PUT_LIT(p, " requires l");
		p = put_u64(p, deps[i].target);
		*p++ = '\n';
		rs->text.len += (size_t)(p - p0);
	}
	return 0;
}

static int emit_binary(struct ev_goal *g, struct rankst *rs, const struct goal_op *op, uint32_t node,
                       uint32_t cpu, uint32_t nic, const struct dep *deps, size_t nd)
{
	struct nslot *sl = &rs->ns[node & (rs->wcap - 1)];
	sl->rh = sl->ih = NONE32;
	sl->nr = sl->ni = 0;
	rs->nedges += nd;
	if (!rs->emit)
		return 0;
	for (size_t i = 0; i < nd; i++) {
		struct nslot *ps = &rs->ns[deps[i].target & (rs->wcap - 1)];
		if (edge_add(g, ps, node, deps[i].ireq))
			return -1;
	}
	unsigned char *b = spool_room(&rs->nodes, 23);
	if (!b)
		return -1;
	le_put32(b, (uint32_t)nd);
	b[4] = op->type == EV_SEND ? 1 : op->type == EV_RECV ? 2 : 3;
	le_put32(b + 5, op->type == EV_CALC ? 0 : op->peer < 0 ? NONE32 : (uint32_t)op->peer);
	le_put64(b + 9, op->size);
	le_put32(b + 17, op->type == EV_CALC ? 0 : op->aux);
	b[21] = (unsigned char)cpu;
	b[22] = (unsigned char)nic;
	rs->nodes.len += 23;
	if (!nd) {
		unsigned char r[4];
		le_put32(r, node);
		if (spool_put(&rs->roots, r, 4))
			return -1;
		rs->nroots++;
	}
	return 0;
}

static int window_error(struct ev_goal *g, uint64_t recno, const struct goal_op *op, uint32_t t, uint32_t wcap)
{
	return goal_fail(g, EV_ERR_RANGE, recno,
	                 "rank %u op %u depends on op %u, %u ops back, which left the window of %u ops; raise --window",
	                 op->rank, op->id, t, op->id - t, wcap);
}

/* Resolve input ids to node indices and drop duplicates (a requires beats
 * an irequires of the same op).  Returns the count left, or < 0. */
static long resolve_deps(struct ev_goal *g, struct rankst *rs, const struct goal_op *op, uint64_t recno)
{
	struct dep *d = rs->deps;
	size_t nd = rs->ndeps, k = 0;
	for (size_t i = 0; i < nd; i++) {
		uint32_t t = d[i].target;
		if (t >= op->id)
			return goal_fail(g, EV_ERR_FORMAT, recno, "rank %u op %u depends on op %u, which is not earlier",
			                 op->rank, op->id, t);
		if (op->id - t > g->max_dist) {
			g->max_dist = op->id - t;
			while (g->want_window < 2 * g->max_dist && g->want_window < EV_GOAL_MAX_WINDOW)
				g->want_window *= 2;
		}
		if (t < rs->min_id)
			return goal_fail(g, EV_ERR_FORMAT, recno,
			                 "rank %u op %u depends on op %u, which is not defined (dangling dependency)",
			                 op->rank, op->id, t);
		if (t < rs->first_id)
			return window_error(g, recno, op, t, rs->wcap);
		uint32_t v = rs->map[t & (rs->wcap - 1)];
		int ireq = d[i].ireq;
		switch (v & K_MASK) {
		case K_UNDEF:
			return goal_fail(g, EV_ERR_FORMAT, recno,
			                 "rank %u op %u depends on op %u, which is not defined (dangling dependency)",
			                 op->rank, op->id, t);
		case K_NONE:
			continue;
		case K_ALIAS:
			/* A folded zero-length calc ended when its dependency ended. */
			ireq = 0;
			break;
		default:
			break;
		}
		if ((v & K_IDX) < rs->node_lo && g->o.binary)
			return window_error(g, recno, op, t, rs->wcap);
		/* A duplicate is merged as it is found, and d[k] is written once
		 * and whole: written by halves and then read back whole, it waited
		 * on store forwarding (a tenth of flush_op's samples). */
		uint32_t node = v & K_IDX;
		size_t j = 0;
		while (j < k && d[j].target != node)
			j++;
		if (j < k) {
			if (!ireq)
				d[j].ireq = 0;
			rs->dups++;
			continue;
		}
		d[k++] = (struct dep){ node, ireq };
	}
	return (long)k;
}

/* The pending op of a rank has all its DEPs: resolve, check, write. */
static int flush_op(struct ev_goal *g, struct rankst *rs)
{
	if (!rs->pending)
		return 0;
	rs->pending = 0;
	const struct goal_op *op = &rs->pend;
	uint64_t recno = rs->pend_recno;
	struct dep *d = rs->deps;
	if (g->estimate && group_op(rs, op, d, rs->ndeps))
		return goal_nomem(g);
	long rn = resolve_deps(g, rs, op, recno);
	if (rn < 0)
		return (int)rn;
	size_t nd = (size_t)rn;
	uint32_t slot = op->id & (rs->wcap - 1);
	if (op->type == EV_CALC && op->size == 0 && !g->o.keep_sync && nd <= 1 && (nd == 0 || !d[0].ireq)) {
		rs->map[slot] = nd ? (K_ALIAS | d[0].target) : K_NONE;
		rs->elided++;
		return 0;
	}
	if (rs->next_node >= MAX_NODES)
		return goal_fail(g, EV_ERR_RANGE, recno, "rank %u has more than %u ops", op->rank, MAX_NODES);
	uint32_t node = rs->next_node++;
	rs->map[slot] = K_REAL | node;
	/* Lane, NIC, widths. */
	uint32_t cpu, nic = 0;
	if (lane_cpu(g, op->stream, &cpu))
		return goal_nomem(g);
	if (op->type != EV_CALC) {
		if (g->o.nic == EV_GOAL_NIC_CHANNEL)
			nic = op->channel;
		else if (g->o.nic == EV_GOAL_NIC_RAIL && rail_of(g, rs, &nic))
			return goal_fail(g, EV_ERR_FORMAT, recno,
			                 "--nic=rail: rank %u has no node (#rank node= or host=); give --ranks-per-node",
			                 op->rank);
		if (g->o.nic_mod)
			nic %= g->o.nic_mod;
	}
	if (cpu > 255)
		return goal_fail(g, EV_ERR_RANGE, recno,
		                 "rank %u op %u (%s): cpu %u does not fit GOAL's 8-bit cpu field (lane %u)", op->rank,
		                 op->id, type_word(op->type), cpu, op->stream);
	if (nic > 255)
		return goal_fail(g, EV_ERR_RANGE, recno,
		                 "rank %u op %u (%s): nic %u does not fit GOAL's 8-bit nic field; use --nic=channel:N",
		                 op->rank, op->id, type_word(op->type), nic);
	if (op->type != EV_CALC) {
		if (op->peer < 0 && op->type == EV_SEND)
			return goal_fail(g, EV_ERR_FORMAT, recno, "rank %u op %u: send without a destination (peer -1)",
			                 op->rank, op->id);
		if (op->peer >= 0) {
			if (g->o.num_ranks && (uint32_t)op->peer >= g->o.num_ranks)
				return goal_fail(g, EV_ERR_RANGE, recno, "rank %u op %u: peer %d is not below --num-ranks=%u",
				                 op->rank, op->id, op->peer, g->o.num_ranks);
			if ((uint32_t)op->peer >= EV_GOAL_MAX_RANKS)
				return goal_fail(g, EV_ERR_RANGE, recno, "rank %u op %u: peer %d is not below the limit of %u ranks",
				                 op->rank, op->id, op->peer, EV_GOAL_MAX_RANKS);
			if ((uint32_t)op->peer + 1 > g->max_peer_plus1)
				g->max_peer_plus1 = (uint32_t)op->peer + 1;
		}
		if (g->o.check) {
			if (op->peer < 0)
				return goal_fail(g, EV_ERR_FORMAT, recno,
				                 "rank %u op %u: recv from any source (-1) cannot be checked; use --no-check",
				                 op->rank, op->id);
			int rc = check_match(g, op, recno);
			if (rc)
				return rc;
		}
	}
	if (cpu > g->max_cpu)
		g->max_cpu = (uint8_t)cpu;
	if (nic > g->max_nic)
		g->max_nic = (uint8_t)nic;
	if (op->type == EV_SEND) {
		rs->nsend++;
		rs->bytes_sent += op->size;
		g->hist[op->size ? 64 - __builtin_clzll(op->size) : 0]++;
	} else if (op->type == EV_RECV) {
		rs->nrecv++;
	} else {
		rs->ncalc++;
	}
	for (size_t i = 0; i < nd; i++)
		rs->nireq += (uint64_t)d[i].ireq;
	rs->nreq += nd;
	int rc = 0;
	if (g->o.binary)
		rc = emit_binary(g, rs, op, node, cpu, nic, d, nd);
	else if (rs->emit)
		rc = emit_text(rs, op, node, cpu, nic, d, nd);
	if (rc)
		return goal_io_fail(g, g->sf.name);
	return 0;
}

/* Room for n dependencies of the pending op. */
static int deps_room(struct rankst *rs, size_t n)
{
	if (rs->ndeps + n <= rs->capdeps)
		return 0;
	size_t nc = rs->capdeps ? rs->capdeps : 16;
	while (nc < rs->ndeps + n)
		nc *= 2;
	struct dep *nd = realloc(rs->deps, nc * sizeof *nd);
	if (!nd)
		return -1;
	rs->deps = nd;
	rs->capdeps = nc;
	return 0;
}

int goal_add_op(struct ev_goal *g, const struct goal_op *op, const struct dep *deps, size_t nd, uint64_t recno)
{
	struct rankst *rs = goal_rank(g, op->rank);
	if (!rs) {
		if (op->rank >= EV_GOAL_MAX_RANKS)
			return goal_fail(g, EV_ERR_RANGE, recno, "rank %u is not below the limit of %u ranks", op->rank,
			                 EV_GOAL_MAX_RANKS);
		if (g->o.num_ranks && op->rank >= g->o.num_ranks)
			return goal_fail(g, EV_ERR_RANGE, recno, "rank %u is not below --num-ranks=%u", op->rank,
			                 g->o.num_ranks);
		errno = 0;
		if (!(rs = new_rank(g, op->rank)))
			return errno && errno != ENOMEM ? goal_io_fail(g, g->sf.name) : goal_nomem(g);
	}
	int rc = flush_op(g, rs);
	if (rc)
		return rc;
	if (rs->have_id && op->id <= rs->last_id)
		return goal_fail(g, EV_ERR_FORMAT, recno,
		                 "rank %u: op id %u after op %u (op ids must increase per rank, as coll-expand writes them)",
		                 op->rank, op->id, rs->last_id);
	rc = window_advance(g, rs, op->id);
	if (rc == -2)
		return goal_fail(g, EV_ERR_FORMAT, recno, "rank %u: internal error: window out of step", op->rank);
	if (rc)
		return rc == -3 ? goal_io_fail(g, g->sf.name) : goal_nomem(g);
	rs->pending = 1;
	rs->pend = *op;
	rs->pend_recno = recno;
	rs->ndeps = 0;
	rs->in_ops++;
	if (nd) {
		if (deps_room(rs, nd))
			return goal_nomem(g);
		/* One or two, as a rule: no call. */
		for (size_t i = 0; i < nd; i++)
			rs->deps[i] = deps[i];
		rs->ndeps = nd;
		rs->in_deps += nd;
	}
	return 0;
}

int goal_add_dep(struct ev_goal *g, uint32_t rank, uint32_t id, uint32_t target, int ireq, uint64_t recno)
{
	struct rankst *rs = goal_rank(g, rank);
	if (!rs || !rs->pending || rs->pend.id != id)
		return goal_fail(g, EV_ERR_FORMAT, recno, "rank %u: dep of op %u does not follow that op", rank, id);
	if (deps_room(rs, 1))
		return goal_nomem(g);
	rs->deps[rs->ndeps].target = target;
	rs->deps[rs->ndeps].ireq = ireq;
	rs->ndeps++;
	rs->in_deps++;
	return 0;
}

int ev_goal_add(ev_goal *g, const struct ev_rec *rec, uint64_t recno)
{
	if (g->finished)
		return EV_ERR_ARG;
	switch (rec->type) {
	case EV_SEND:
	case EV_RECV:
	case EV_CALC: {
		struct goal_op op;
		goal_op_of(&op, rec);
		return goal_add_op(g, &op, NULL, 0, recno);
	}
	case EV_DEP:
		return goal_add_dep(g, rec->rank, rec->id, rec->aux, (rec->flags & EV_F_IREQ) != 0, recno);
	default:
		g->ignored++;
		return EV_OK;
	}
}

/* ---- the end ------------------------------------------------------- */

static int finish_rank(struct ev_goal *g, struct rankst *rs)
{
	int rc = flush_op(g, rs);
	if (rc)
		return rc;
	group_close(rs);
	if (!g->o.binary && rs->emit) {
		if (spool_put(&rs->text, "}\n", 2) || spool_finish(&rs->text))
			return goal_io_fail(g, g->sf.name);
	}
	return 0;
}

int goal_drain_rank(struct ev_goal *g, struct rankst *rs)
{
	while (rs->have_id && rs->first_id <= rs->last_id) {
		errno = 0;
		int e = window_evict(g, rs);
		if (e)
			return e;
		if (rs->first_id == 0)
			break; /* wrapped past UINT32_MAX */
	}
	if (rs->emit && (spool_finish(&rs->nodes) || spool_finish(&rs->cnt) || spool_finish(&rs->succ) ||
	                 spool_finish(&rs->roots)))
		return -1;
	return 0;
}

int ev_goal_finish(ev_goal *g)
{
	if (g->finished)
		return EV_ERR_ARG;
	g->finished = 1;
	for (uint32_t r = 0; r < g->nr; r++) {
		struct rankst *rs = goal_rank(g, r);
		int rc = rs ? finish_rank(g, rs) : 0;
		if (rc)
			return rc;
	}
	if (g->o.check && g->mt.len) {
		/* Report the oldest unmatched message. */
		const struct mslot *w = mt_oldest(&g->mt);
		int snd = mt_sends(w);
		return goal_fail(g, EV_ERR_FORMAT, w->first_rec,
		                 "rank %u: %s %s rank %u tag %u has no matching %s (%zu keys unmatched; --no-check skips this)",
		                 snd ? w->k.src : w->k.dst, snd ? "send" : "recv", snd ? "to" : "from",
		                 snd ? w->k.dst : w->k.src, w->k.tag, snd ? "recv" : "send", g->mt.len);
	}
	g->nranks = g->o.num_ranks ? g->o.num_ranks : g->nr > g->max_peer_plus1 ? g->nr : g->max_peer_plus1;
	if (!g->nranks) {
		g->err.status = EV_ERR_FORMAT;
		snprintf(g->err.msg, sizeof g->err.msg, "%s: no send, recv or calc records: nothing to schedule",
		         g->fname ? g->fname : "input");
		return EV_ERR_FORMAT;
	}
	/* Binary: the nodes still in the windows are finished (drain.c), on
	 * a thread of their own when there are many, while the sections of the
	 * ranks already drained are written. */
	return g->o.binary ? goal_drain_start(g) : EV_OK;
}

uint32_t ev_goal_nranks(const ev_goal *g) { return g->nranks; }

/* ---- counts --------------------------------------------------------- */

void ev_goal_get_stats(const ev_goal *g, struct ev_goal_stats *st)
{
	memset(st, 0, sizeof *st);
	uint64_t in_ops = 0, in_deps = 0, extra = 0;
	for (uint32_t r = 0; r < g->nr; r++) {
		const struct rankst *rs = goal_rank(g, r);
		if (!rs)
			continue;
		st->send += rs->nsend;
		st->recv += rs->nrecv;
		st->calc += rs->ncalc;
		st->requires += rs->nreq - rs->nireq;
		st->irequires += rs->nireq;
		st->folded_zero_calcs += rs->elided;
		st->duplicate_deps += rs->dups;
		in_ops += rs->in_ops;
		in_deps += rs->in_deps;
		extra += rs->atlahs_extra;
		st->bytes_sent += rs->bytes_sent;
	}
	st->ranks = g->nranks;
	st->ops = st->send + st->recv + st->calc;
	st->lines = 1 + 2 * (uint64_t)g->nranks + st->ops + st->requires + st->irequires;
	st->lines_atlahs_style = 1 + 2 * (uint64_t)g->nranks + in_ops + in_deps + extra;
	st->lanes = g->o.cpu == EV_GOAL_CPU_DENSE ? g->nlanes : (unsigned)g->max_cpu + 1;
	st->max_cpu = g->max_cpu;
	st->max_nic = g->max_nic;
	st->open_messages_max = g->mt.open_max;
	st->ignored_records = g->ignored;
	memcpy(st->hist, g->hist, sizeof st->hist);
}

void ev_goal_get_rank_stats(const ev_goal *g, uint32_t rank, struct ev_goal_rank_stats *st)
{
	const struct rankst *rs = goal_rank(g, rank);
	memset(st, 0, sizeof *st);
	if (!rs)
		return;
	st->sends = rs->nsend;
	st->recvs = rs->nrecv;
	st->calcs = rs->ncalc;
	st->bytes_sent = rs->bytes_sent;
}
