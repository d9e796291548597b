/* SPDX-License-Identifier: MIT */
/*
 * stats_ops_summary.c - TraceLens's ops_summary: per launching op name,
 * its instances (kernel launchers), the sum of their direct kernel time
 * (the union of each instance's kernels), its share and the running share
 * down the table, largest first; and the sum of their subtree kernel time
 * (the union of the kernels of the op and of every op under it, as
 * TraceLens, from the cpu_op ranges nested on their thread; without
 * ranges, the op's own).  The op instances are also the input of
 * ops_summary_by_category (stats_ops_category.c), through opsum.h.
 *
 * TraceLens leaves communication kernels and GPU events without a
 * launching call out of its launchers; so does this table.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/opsum.h"
#include "analysis/pyrepr.h"


size_t opsum_name_len(const char *sig)
{
	const char *sp = strstr(sig, " dims=");
	return sp ? (size_t)(sp - sig) : strlen(sig);
}

int opsum_sig_field(const char *sig, const char *field, int tuples, struct pytext *t)
{
	char key[32];
	snprintf(key, sizeof key, " %s=", field);
	t->n = 0;
	pyt_puts(t, "");
	const char *at = strstr(sig + opsum_name_len(sig), key);
	if (at)
		py_value(t, at + strlen(key), tuples);
	return t->oom ? EV_ERR_NOMEM : EV_OK;
}

int opsum_init(ev_stats *s)
{
	struct opsum *o = s->state;
	ev_map_init(&o->idx);
	ev_map_init(&o->nodeidx);
	ev_map_init(&o->opthread);
	return EV_OK;
}

/* ops-args groups by TraceLens's process and thread names too (its
 * ops_unique_args does), when the stream names threads. */
int opsum_init_names(ev_stats *s)
{
	struct opsum *o = s->state;
	o->want_names = 1;
	return opsum_init(s);
}

/* The threads of the last OPTHREAD_MAX cpu_ops: a kernel is launched soon
 * after its op starts.  Past that the older half is let go. */
#define OPTHREAD_MAX 262144


/* A runtime call's key: a kernel launched outside any op has the call as
 * its op (TraceLens's leaf), found by its correlation id. */
static uint64_t call_key(uint32_t rank, uint16_t src, uint32_t id)
{
	return opsum_op_key(rank, src, id) ^ 0x5A5A5A5A5A5A5A5AULL;
}

/* An op (cpu_op range or runtime call) noted: its thread, UID and start. */
static int note_op(struct opsum *o, const struct ev_rec *r)
{
	if (!r->id)
		return EV_OK;
	if (!o->recent && !(o->recent = malloc(OPTHREAD_MAX * sizeof *o->recent)))
		return EV_ERR_NOMEM;
	if (o->nrecent == OPTHREAD_MAX) {
		size_t half = OPTHREAD_MAX / 2;
		memmove(o->recent, o->recent + half, (OPTHREAD_MAX - half) * sizeof *o->recent);
		o->nrecent -= half;
		ev_map_free(&o->opthread);
		ev_map_init(&o->opthread);
		for (size_t i = 0; i < o->nrecent; i++)
			if (ev_map_put(&o->opthread, o->recent[i].key, i + 1) != EV_OK)
				return EV_ERR_NOMEM;
	}
	uint64_t key = r->type == EV_API ? call_key(r->rank, r->src, r->id) : opsum_op_key(r->rank, r->src, r->id);
	key = key ? key : 1;
	o->recent[o->nrecent++] = (struct opthr){ key, (uint64_t)r->stream + 1, tl_uid(r), r->ts };
	return ev_map_put(&o->opthread, key, o->nrecent);
}

/* The op noted under key, NULL when not among the recent ones. */
static const struct opthr *noted_op(const struct opsum *o, uint64_t key)
{
	key = key ? key : 1;
	const uint64_t *i = ev_map_get(&o->opthread, key);
	return i && o->recent[*i - 1].key == key ? &o->recent[*i - 1] : NULL;
}

double opsum_busy_us(const ev_stats *s, const struct busy *b)
{
	return s->o.float_us ? b->fbusy + (b->fz - b->fa) : (double)(b->busy + ev_span(b->start, b->end)) / 1e3;
}

/* A free list of direct events for an instance: its index + 1, 0 no memory. */
static uint32_t klist_get(struct opsum *o)
{
	uint32_t i = o->klfree;
	if (i) {
		o->klfree = o->kl[i - 1].next;
		return i;
	}
	if (o->nkl == o->capkl) {
		size_t cap = o->capkl ? 2 * o->capkl : 64;
		struct oklist *nl = cap <= UINT32_MAX ? realloc(o->kl, cap * sizeof *nl) : NULL;
		if (!nl)
			return 0;
		o->kl = nl;
		o->capkl = cap;
	}
	return (uint32_t)++o->nkl;
}

static void klist_put(struct opsum *o, uint32_t i)
{
	if (i) {
		o->kl[i - 1].next = o->klfree;
		o->klfree = i;
	}
}

/* An instance is done: its direct and subtree time into its (signature,
 * category); an op that launched nothing itself is no launcher. */
static int inst_close(ev_stats *s, const struct oinst *in)
{
	struct opsum *o = s->state;
	if (!in->direct.on)
		return EV_OK;
	const struct oklist *kl = in->nk ? &o->kl[in->kl - 1] : NULL;
	struct gkey k;
	memset(&k, 0, sizeof k);
	k.sg = in->key.sg;
	k.rank = has_by(&s->o, EV_BY_RANK) ? in->key.rank : 0;
	k.k1 = in->key.k2;
	k.k2 = (uint64_t)(uintptr_t)in->cat;
	struct opsum_group *g;
	if (o->by_names) {
		/* TraceLens groups by the names, not the thread: two threads
		 * of one name are one group. */
		const char *nm[3];
		tl_names(s->meta, in->key.rank, in->thread, nm);
		s->n.no_thread += !in->thread;
		uint64_t h = 0;
		for (int i = 0; i < 3; i++)
			h = (h ^ ev_hash64(nm[i], strlen(nm[i]))) * 0x9E3779B97F4A7C15ULL;
		k.k2 ^= h;
	}
	g = group_get(&s->g, &k, NULL);
	if (!g)
		return EV_ERR_NOMEM;
	double us = opsum_busy_us(s, &in->direct), sus = opsum_busy_us(s, &in->subtree);
	if (g->count == 0) {
		g->k = calloc(in->nk ? in->nk : 1, sizeof *g->k);
		if (!g->k)
			return EV_ERR_NOMEM;
		g->nk = in->nk;
		for (uint32_t i = 0; i < in->nk; i++) {
			g->k[i].name = kl->kname[i];
			g->k[i].stream = kl->kstream[i];
		}
	}
	if (g->count == 0)
		g->uid = -1;
	if (g->count == 0 || in->first < g->first) {
		g->first = in->first;
		g->rank = in->key.rank;
		g->thread = in->thread;
	}
	/* TraceLens's ex_UID: its launchers are in the order of their start
	 * (a stable sort of them in the order of their first GPU event in the
	 * trace file, for which the lesser UID stands), the group's first. */
	if (in->uid < 0)
		g->no_uid++;
	else if (g->uid < 0 || in->op_ts < g->uid_ts || (in->op_ts == g->uid_ts && in->uid < g->uid)) {
		g->uid = in->uid;
		g->uid_ts = in->op_ts;
	}
	g->cat = in->cat;
	g->count++;
	g->direct_us += us;
	g->subtree_us += sus;
	o->more += in->more != 0;
	int rc = ev_dist_add(&g->d, &s->pool, us, in->first);
	rc = rc ? rc : ev_dist_add(&g->sd, &s->pool, sus, in->first);
	if (in->nk != g->nk) {
		g->skipped++;
		return rc;
	}
	for (uint32_t i = 0; !rc && i < in->nk; i++)
		rc = ev_dist_add(&g->k[i].d, &s->pool, kl->kdur[i], in->first);
	return rc;
}

/* An op's kernels run together: an instance whose kernels ended more than
 * a second before the stream's position is closed, and past INST_MAX
 * open ones the half that ended first, so memory stays bounded. */
#define INST_WINDOW_NS 1000000000LL
#define INST_MAX 65536

static int cmp_i64(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
	return x < y ? -1 : x > y;
}

int opsum_half_end(const void *items, size_t n, size_t size, size_t end, int64_t *cut)
{
	const unsigned char *a = items;
	int64_t *ends = malloc((n ? n : 1) * sizeof *ends);
	if (!ends)
		return EV_ERR_NOMEM;
	for (size_t i = 0; i < n; i++)
		memcpy(&ends[i], a + i * size + end, sizeof ends[i]);
	qsort(ends, n, sizeof *ends, cmp_i64);
	*cut = n ? ends[n / 2] : INT64_MIN;
	free(ends);
	return EV_OK;
}

static int sweep(ev_stats *s, int all)
{
	struct opsum *o = s->state;
	int64_t cut = INT64_MIN;
	int rc = EV_OK;
	if (!all && o->n >= INST_MAX &&
	    (rc = opsum_half_end(o->inst, o->n, sizeof *o->inst, offsetof(struct oinst, end), &cut)) != EV_OK)
		return rc;
	size_t w = 0;
	for (size_t i = 0; i < o->n; i++) {
		struct oinst *in = &o->inst[i];
		int expired = o->now > INT64_MIN + INST_WINDOW_NS && in->end < o->now - INST_WINDOW_NS;
		if (all || expired || in->end <= cut) {
			s->n.ops_window += !all && !expired;
			rc = rc ? rc : inst_close(s, in);
			klist_put(o, in->kl);
			continue;
		}
		o->inst[w++] = *in;
	}
	o->n = w;
	ev_map_free(&o->idx);
	ev_map_init(&o->idx);
	for (size_t i = 0; !rc && i < o->n; i++)
		rc = ev_map_put(&o->idx, ev_hash64(&o->inst[i].key, sizeof o->inst[i].key) | 1, i + 1);
	return rc;
}

void tl_float_times(struct tl_clock *c, const ev_meta *meta, const struct ev_rec *r, double *a, double *z)
{
	if (!c->ok || c->src != r->src) {
		const struct ev_src_info *si = ev_meta_src(meta, r->src);
		const char *v = si ? ev_kv_get(si->kv, si->nkv, "base_ns") : NULL;
		if (!v || ev_parse_i64(v, &c->base_ns) != EV_OK)
			c->base_ns = 0;
		c->src = r->src;
		c->ok = 1;
	}
	int64_t rel;
	if (__builtin_sub_overflow(r->ts, c->base_ns, &rel))
		rel = r->ts;
	*a = (double)(rel / 1000) + (double)(rel % 1000) / 1000.0;
	*z = *a + (double)r->dur / 1000.0;
}

int tl_names(const ev_meta *m, uint32_t rank, uint64_t tid1, const char *out[3])
{
	out[0] = out[1] = out[2] = NULL;
	if (!m || ev_meta_nthread(m) == 0)
		return 0;
	const struct ev_thread_info *t = tid1 ? ev_meta_thread(m, rank, (uint32_t)(tid1 - 1)) : NULL;
	const struct ev_process_info *p = t ? ev_meta_process(m, rank, t->pid) : NULL;
	out[0] = p && p->name ? p->name : "Unknown";
	out[1] = p && p->labels ? p->labels : "Unknown";
	out[2] = t && t->name ? t->name : "Unknown";
	return 1;
}

const char *opsum_category(const char *op, const char *kernel)
{
	const char *c = ev_op_category(op, kernel);
	return !strcmp(c, "NCCL") || !strcmp(c, "memcpy") ? "other" : c;
}

/* The op's category: by its name, else its first kernel's. */
static const char *category(ev_stats *s, const struct ev_rec *r)
{
	const char *sig = str_of(s, r->sig);
	char name[256];
	size_t n = opsum_name_len(sig);
	if (n >= sizeof name)
		n = sizeof name - 1;
	memcpy(name, sig, n);
	name[n] = '\0';
	return opsum_category(name, str_of(s, r->name));
}

int opsum_window_prune(const struct opsum_window *w, void *items, size_t *n, int64_t now, uint64_t *evicted,
                       struct ev_map *idx)
{
	unsigned char *a = items;
	size_t kept = 0;
	int64_t cut = now > INT64_MIN + OPSUM_WINDOW_NS ? now - OPSUM_WINDOW_NS : INT64_MIN;
	for (size_t i = 0; i < *n; i++) {
		const unsigned char *it = a + i * w->size;
		int64_t end;
		memcpy(&end, it + w->end, sizeof end);
		int old = end < cut;
		if (!old && *n >= OPSUM_WINDOW_MAX && i < *n / 2) {
			(*evicted)++;
			old = 1;
		}
		if (!old && kept != i)
			memcpy(a + kept * w->size, it, w->size);
		kept += !old;
	}
	*n = kept;
	ev_map_free(idx);
	ev_map_init(idx);
	int rc = EV_OK;
	for (size_t i = 0; !rc && i < kept; i++) {
		const unsigned char *it = a + i * w->size;
		uint32_t rank, id;
		uint16_t src;
		memcpy(&rank, it + w->rank, sizeof rank);
		memcpy(&src, it + w->src, sizeof src);
		memcpy(&id, it + w->id, sizeof id);
		rc = ev_map_put(idx, opsum_op_key(rank, src, id), i + 1);
	}
	return rc;
}

static int node_prune(struct opsum *o)
{
	static const struct opsum_window w = { sizeof(struct opnode), offsetof(struct opnode, rank),
		offsetof(struct opnode, src), offsetof(struct opnode, id), offsetof(struct opnode, end) };
	return opsum_window_prune(&w, o->node, &o->nnode, o->now, &o->evicted, &o->nodeidx);
}

static const struct opnode *node_of(const struct opsum *o, uint32_t rank, uint16_t src, uint32_t id)
{
	uint64_t *i = id ? ev_map_get(&o->nodeidx, opsum_op_key(rank, src, id)) : NULL;
	const struct opnode *n = i ? &o->node[*i - 1] : NULL;
	return n && n->rank == rank && n->src == src && n->id == id ? n : NULL;
}

/* A cpu_op range: its parent is the innermost op still open on its
 * thread (the ranges of a thread nest). */
int opsum_thread(struct othread **th, size_t *nth, size_t *capth, const struct ev_rec *r, struct othread **out)
{
	struct othread *t = NULL;
	for (size_t i = 0; i < *nth && !t; i++)
		if ((*th)[i].rank == r->rank && (*th)[i].thread == r->stream && (*th)[i].src == r->src)
			t = &(*th)[i];
	if (!t) {
		if (*nth == *capth) {
			size_t cap = *capth ? 2 * *capth : 8;
			struct othread *nt = realloc(*th, cap * sizeof *nt);
			if (!nt)
				return EV_ERR_NOMEM;
			*th = nt;
			*capth = cap;
		}
		t = &(*th)[(*nth)++];
		memset(t, 0, sizeof *t);
		t->rank = r->rank;
		t->thread = r->stream;
		t->src = r->src;
	}
	while (t->n && t->end[t->n - 1] <= r->ts)
		t->n--;
	*out = t;
	return EV_OK;
}

static int range_rec(ev_stats *s, const struct ev_rec *r)
{
	struct opsum *o = s->state;
	struct othread *t;
	int rc = opsum_thread(&o->th, &o->nth, &o->capth, r, &t);
	if (rc)
		return rc;
	int64_t end = ev_rec_end(r);
	uint32_t parent = t->n ? t->id[t->n - 1] : 0;
	if (t->n < OPSUM_DEPTH) {
		t->id[t->n] = r->id;
		t->end[t->n++] = end;
	} else {
		o->deep++;
	}
	o->now = r->ts;
	if (o->nnode == o->capnode) {
		if (o->nnode >= 4096 && (rc = node_prune(o)) != EV_OK)
			return rc;
		if (o->nnode == o->capnode) {
			size_t cap = o->capnode ? 2 * o->capnode : 256;
			struct opnode *nn = realloc(o->node, cap * sizeof *nn);
			if (!nn)
				return EV_ERR_NOMEM;
			o->node = nn;
			o->capnode = cap;
		}
	}
	o->node[o->nnode++] = (struct opnode){ r->rank, r->id, parent, r->src, r->sig, end };
	return ev_map_put(&o->nodeidx, opsum_op_key(r->rank, r->src, r->id), o->nnode);
}

/* GPU event r into busy time b. */
void opsum_busy_add(const ev_stats *s, struct busy *b, const struct ev_rec *r, double a, double z)
{
	int64_t end = ev_rec_end(r);
	if (!b->on) {
		*b = (struct busy){ r->ts, end, 0, a, z, 0, 1 };
		return;
	}
	/* TraceLens merges intervals sorted by start: a start past the
	 * merged end opens a new interval. */
	if (s->o.float_us ? a > b->fz : r->ts > b->end) {
		b->busy += ev_span(b->start, b->end);
		b->fbusy += b->fz - b->fa;
		b->start = r->ts;
		b->fa = a;
	}
	if (end > b->end)
		b->end = end;
	if (z > b->fz)
		b->fz = z;
}

/* The instance of op k1 with signature sig, for GPU event r. */
static int inst_get(ev_stats *s, const struct ev_rec *r, uint64_t k1, uint64_t sig, struct oinst **out)
{
	struct opsum *o = s->state;
	struct gkey key;
	memset(&key, 0, sizeof key);
	int rc = src_group(s, r->src, &key.sg);
	if (rc)
		return rc;
	key.rank = r->rank;
	key.k1 = k1;
	key.k2 = sig;
	uint64_t h = ev_hash64(&key, sizeof key) | 1;
	uint64_t *slot = ev_map_get(&o->idx, h);
	struct oinst *in = slot ? &o->inst[*slot - 1] : NULL;
	if (in && memcmp(&in->key, &key, sizeof key) == 0) {
		*out = in;
		return EV_OK;
	}
	if (o->n == o->cap) {
		if (o->n > 4096 && (rc = sweep(s, 0)) != EV_OK)
			return rc;
		if (o->n == o->cap || (o->n > o->cap / 2 && o->cap < INST_MAX)) {
			size_t cap = o->cap ? 2 * o->cap : 256;
			struct oinst *ni = realloc(o->inst, cap * sizeof *ni);
			if (!ni)
				return EV_ERR_NOMEM;
			o->inst = ni;
			o->cap = cap;
		}
	}
	in = &o->inst[o->n++];
	memset(in, 0, sizeof *in);
	in->key = key;
	in->first = r->ts;
	in->uid = -1;
	if (o->want_names) {
		/* Its op's thread, UID and start: the cpu_op's, or for a kernel
		 * launched outside any op its runtime call's. */
		const struct opthr *op = noted_op(o, k1 < ((uint64_t)1 << 40) ? opsum_op_key(r->rank, r->src, (uint32_t)k1)
		                                                            : call_key(r->rank, r->src, r->id));
		in->thread = op && o->by_names ? op->thread : 0;
		in->uid = op ? op->uid : -1;
		in->op_ts = op ? op->ts : 0;
	}
	*out = in;
	return ev_map_put(&o->idx, h, o->n);
}

/* A GPU event counts for the op that launched it (direct, but for
 * communication kernels, which TraceLens's launchers leave out) and for
 * it and every op around it (subtree: TraceLens propagates each GPU event
 * to all its cpu_op ancestors). */
int opsum_rec(ev_stats *s, const struct ev_rec *r)
{
	struct opsum *o = s->state;
	int rc;
	if (o->want_names == 1) /* the stream's lines are read by its first record */
		o->want_names = 2, o->by_names = s->meta && ev_meta_nthread(s->meta) > 0;
	if (o->want_names && ((r->type == EV_RANGE && r->op == EV_RG_CPU_OP) || r->type == EV_API) &&
	    (o->by_names || tl_uid(r) >= 0) && (rc = note_op(o, r)) != EV_OK)
		return rc;
	if (r->type == EV_RANGE && r->op == EV_RG_CPU_OP)
		return range_rec(s, r);
	if (!is_gpu(r) || !r->sig || (r->flags & EV_F_UNLINKED))
		return EV_OK;
	int comm = class_of(s, r) == EV_KC_COMM;
	s->n.selected += !comm;
	o->now = r->ts;
	double a = 0, z = 0;
	if (s->o.float_us)
		tl_float_times(&o->clock, s->meta, r, &a, &z);
	int64_t end = ev_rec_end(r);
	struct oinst *in;
	rc = inst_get(s, r, r->step ? r->step : ((uint64_t)1 << 40) + r->id, r->sig, &in);
	if (rc)
		return rc;
	if (!comm) {
		if (!in->direct.on)
			in->cat = category(s, r);
		opsum_busy_add(s, &in->direct, r, a, z);
		if (in->nk < OPSUM_MAXK) {
			if (!in->kl && !(in->kl = klist_get(o)))
				return EV_ERR_NOMEM;
			struct oklist *kl = &o->kl[in->kl - 1];
			kl->kname[in->nk] = r->name;
			kl->kstream[in->nk] = r->stream;
			kl->kdur[in->nk++] = (double)r->dur / 1000.0;
		} else {
			in->more++;
		}
	}
	opsum_busy_add(s, &in->subtree, r, a, z);
	if (end > in->end)
		in->end = end;
	/* The ops around the launcher, through the parents of its node. */
	const struct opnode *nd = node_of(o, r->rank, r->src, r->step);
	for (unsigned depth = 0; nd && nd->parent && depth < OPSUM_DEPTH; depth++) {
		const struct opnode *up = node_of(o, r->rank, r->src, nd->parent);
		if (!up)
			break;
		/* Copied: adding an instance may sweep. */
		struct opnode u = *up;
		if ((rc = inst_get(s, r, u.id, u.sig, &in)) != EV_OK)
			return rc;
		opsum_busy_add(s, &in->subtree, r, a, z);
		if (end > in->end)
			in->end = end;
		nd = node_of(o, r->rank, r->src, u.id);
	}
	return EV_OK;
}

int opsum_finish(ev_stats *s)
{
	struct opsum *o = s->state;
	int rc = sweep(s, 1);
	/* ex_UID (ops-args) is a column when the stream carries UIDs; a
	 * group with an instance whose op's is not known has none. */
	for (size_t i = 0; o->want_names && i < s->g.keys.len; i++) {
		const struct opsum_group *g = GROUP_VAL(&s->g, i);
		o->any_uid |= g->uid >= 0;
		o->no_uid += g->uid < 0 || g->no_uid;
	}
	return rc;
}

void opsum_free(ev_stats *s)
{
	struct opsum *o = s->state;
	for (size_t i = 0; i < s->g.keys.len; i++) {
		struct opsum_group *g = GROUP_VAL(&s->g, i);
		ev_dist_free(&g->d);
		ev_dist_free(&g->sd);
		for (uint32_t j = 0; g->k && j < g->nk; j++)
			ev_dist_free(&g->k[j].d);
		free(g->k);
	}
	free(o->inst);
	free(o->kl);
	free(o->th);
	free(o->node);
	ev_map_free(&o->idx);
	ev_map_free(&o->nodeidx);
	free(o->recent);
	ev_map_free(&o->opthread);
}

int opsum_warning(ev_stats *s, unsigned i, char *buf, size_t n)
{
	struct opsum *o = s->state;
	uint64_t skipped = 0;
	for (size_t j = 0; j < s->g.keys.len; j++)
		skipped += ((struct opsum_group *)GROUP_VAL(&s->g, j))->skipped;
	unsigned k = 0;
	if (o->evicted && i == k++)
		snprintf(buf, n, "%llu op(s) left the op-tree window before their GPU events came: those events count "
		         "only for the ops still held in subtree times", (unsigned long long)o->evicted);
	else if (o->deep && i == k++)
		snprintf(buf, n, "%llu op(s) nested more than %d deep: their GPU events count only for the ops up to "
		         "that depth in subtree times", (unsigned long long)o->deep, OPSUM_DEPTH);
	else if (s->o.analysis == &ev_stats_analysis_ops_args && skipped && i == k++)
		snprintf(buf, n, "%llu op instance(s) with another number of GPU events than their group's first: "
		         "not in kernel_details_summary (as TraceLens)", (unsigned long long)skipped);
	else if (s->o.analysis == &ev_stats_analysis_ops_args && o->more && i == k++)
		snprintf(buf, n, "%llu op instance(s) with more than %d GPU events: the others not in "
		         "kernel_details_summary", (unsigned long long)o->more, OPSUM_MAXK);
	else if (s->o.analysis == &ev_stats_analysis_ops_args && o->any_uid && o->no_uid && i == k++)
		snprintf(buf, n, "%llu row(s) with an op instance whose op's UID (TraceLens's event index) is not "
		         "known (its cpu_op range or runtime call not in the stream, or past the window of %d): "
		         "ex_UID left empty", (unsigned long long)o->no_uid, OPTHREAD_MAX);
	else if (s->o.analysis == &ev_stats_analysis_ops_args && o->sketched && i == k++)
		snprintf(buf, n, "%llu kernel_details position(s) past the exact-sample budget: their sum, mean, "
		         "median and std are approximate", (unsigned long long)o->sketched);
	else
		return 0;
	return 1;
}

int opsum_explain(const struct ev_stats_opts *o, const struct ev_stats_counts *c, char *buf, size_t n)
{
	(void)o;
	if (c->gpu && !c->with_sig)
		snprintf(buf, n, "none of the %llu GPU events is linked to a launching op (no sig): empty table",
		         (unsigned long long)c->gpu);
	else if (c->gpu)
		snprintf(buf, n, "no linked non-communication GPU event among %llu with an op: empty table",
		         (unsigned long long)c->with_sig);
	return c->gpu != 0;
}

/* ---- the table ---- */

struct namerow { size_t first; uint64_t count; double us, sus; const char *last; char cats[256]; };

/* Slots by (group,) op name, then category. */
static int cmp_name(const struct ev_stats *s, size_t a, size_t b)
{
	const char *sa = str_of(s, GROUP_KEY(&s->g, a)->k1), *sb = str_of(s, GROUP_KEY(&s->g, b)->k1);
	size_t na = opsum_name_len(sa), nb = opsum_name_len(sb);
	int c = strncmp(sa, sb, na < nb ? na : nb);
	if (c || na != nb)
		return c ? c : na < nb ? -1 : 1;
	const struct opsum_group *ga = GROUP_VAL(&s->g, a), *gb = GROUP_VAL(&s->g, b);
	return strcmp(ga->cat, gb->cat);
}

/* Within a (source group, rank): largest direct time first; ties by name,
 * pandas' group order. */
static int cmp_rows(const void *pa, const void *pb, void *ctx)
{
	const struct ev_stats *sort_s = ctx;
	const struct namerow *a = pa, *b = pb;
	const struct gkey *ka = GROUP_KEY(&sort_s->g, a->first), *kb = GROUP_KEY(&sort_s->g, b->first);
	if (ka->sg != kb->sg)
		return ka->sg < kb->sg ? -1 : 1;
	if (ka->rank != kb->rank)
		return ka->rank < kb->rank ? -1 : 1;
	if (a->us != b->us)
		return a->us > b->us ? -1 : 1;
	return cmp_name(sort_s, a->first, b->first);
}

static int same_part(const struct ev_stats *s, size_t a, size_t b)
{
	const struct gkey *ka = GROUP_KEY(&s->g, a), *kb = GROUP_KEY(&s->g, b);
	return ka->sg == kb->sg && ka->rank == kb->rank;
}

static int ops_summary_rows(ev_stats *s, struct ev_rowset *rs)
{
	int rc = EV_OK;
	struct ev_colspec keys[EV_STATS_MAX_BY + 2];
	size_t nk = 0;
	by_colspecs(&s->o, keys, &nk);
	keys[nk++] = (struct ev_colspec){ "name", 0, 0 };
	keys[nk++] = (struct ev_colspec){ "Categories", 0, 0 };
	static const struct ev_colspec vals[] = {
		{ "total_direct_kernel_time_sum", 0, EV_DIR_LOWER }, { "total_direct_kernel_time_ms", 0, EV_DIR_LOWER },
		{ "Count", 0, EV_DIR_NONE }, { "Percentage (%)", 0, EV_DIR_NONE },
		{ "Cumulative Percentage (%)", 0, EV_DIR_NONE }, { "total_subtree_kernel_time_sum", 0, EV_DIR_LOWER },
		{ "total_subtree_kernel_time_ms", 0, EV_DIR_LOWER },
	};
	rc = ev_rowset_init(rs, keys, nk, vals, sizeof vals / sizeof vals[0]);
	size_t *ord = sorted_slots(s, cmp_name, &rc);
	struct namerow *nr = rc ? NULL : calloc(s->g.keys.len + 1, sizeof *nr);
	if (!rc && !nr)
		rc = EV_ERR_NOMEM;
	size_t m = 0;
	for (size_t j = 0; !rc && j < s->g.keys.len; j++) {
		const struct opsum_group *g = GROUP_VAL(&s->g, ord[j]);
		const char *pb = str_of(s, GROUP_KEY(&s->g, ord[j])->k1);
		const char *pa = j ? str_of(s, GROUP_KEY(&s->g, ord[j - 1])->k1) : NULL;
		size_t nb = opsum_name_len(pb);
		if (!(j && same_part(s, ord[j - 1], ord[j]) && opsum_name_len(pa) == nb && !strncmp(pa, pb, nb)))
			nr[m++].first = ord[j];
		struct namerow *w = &nr[m - 1];
		w->count += g->count;
		w->us += g->direct_us;
		w->sus += g->subtree_us;
		/* Categories as TraceLens prints its sorted set, ['a', 'b']: the
		 * slots of a name come in category order. */
		if (g->cat != w->last && strcmp(g->cat, w->last ? w->last : "")) {
			size_t l = strlen(w->cats);
			size_t at = l ? l - 1 : 0;
			snprintf(w->cats + at, sizeof w->cats - at, "%s'%s']", l ? ", " : "[", g->cat);
			w->last = g->cat;
		}
	}
	if (!rc)
		qsort_r(nr, m, sizeof *nr, cmp_rows, s);
	for (size_t i = 0; !rc && i < m;) {
		size_t e = i;
		double total = 0, cum = 0;
		while (e < m && same_part(s, nr[i].first, nr[e].first))
			total += nr[e++].us;
		for (; !rc && i < e; i++) {
			struct ev_row *r;
			size_t n;
			const char *sig = str_of(s, GROUP_KEY(&s->g, nr[i].first)->k1);
			char name[1024];
			snprintf(name, sizeof name, "%.*s", (int)opsum_name_len(sig), sig);
			if ((rc = group_row(s, rs, GROUP_KEY(&s->g, nr[i].first), &r, &n)) != EV_OK)
				break;
			rc = ev_row_key(r, n, name);
			rc = rc ? rc : ev_row_key(r, n + 1, nr[i].cats);
			double pct = total > 0 ? nr[i].us / total * 100.0 : NAN;
			cum += pct;
			r->val[0] = nr[i].us;
			r->val[1] = nr[i].us / 1000.0;
			r->val[2] = (double)nr[i].count;
			r->val[3] = pct;
			r->val[4] = cum;
			r->val[5] = nr[i].sus;
			r->val[6] = nr[i].sus / 1000.0;
		}
	}
	free(nr);
	free(ord);
	return rc;
}

static const char *const ops_summary_options[] = { "tracelens-float", NULL };

const struct ev_stats_analysis ev_stats_analysis_ops_summary = {
	.name = "ops-summary",
	.sheet = "ops_summary",
	.help = "TraceLens's ops_summary: per launching op name, its instances,\n"
	        "their direct kernel time (sum in us, ms), share and running\n"
	        "share, largest first, and their subtree kernel time",
	.options = ops_summary_options,
	.comparable = 0,
	.state_size = sizeof(struct opsum),
	.group_size = sizeof(struct opsum_group),
	.init = opsum_init,
	.rec = opsum_rec,
	.finish = opsum_finish,
	.rows = ops_summary_rows,
	.free = opsum_free,
	.explain = opsum_explain,
	.warning = opsum_warning,
};
