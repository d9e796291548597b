/* SPDX-License-Identifier: MIT */
/*
 * stats_perf_window.c - ev-stats perf's op instances and their GPU
 * events, in constant memory: per thread the ops of the category open on
 * it, a window of the ops under them (launchers) whose GPU events count
 * for them, a window of the ops no event has joined yet (pending), a
 * backward sheet's forward ops until their backward op comes, and the open
 * instances, each closed (stats_perf_groups.c) once its events are a
 * second old.  stats_perf.c says how an instance is made.
 */
#include <stdlib.h>
#include <string.h>

#include "analysis/stats_perf.h"

/* 2: an op of the category, 3: one it has no model for, 1: neither. */
static unsigned sig_kind(struct perf *p, const char *sig)
{
	size_t n = opsum_name_len(sig);
	for (const char *const *o = p->cat->ops; *o; o++)
		if (strlen(*o) == n && !strncmp(sig, *o, n))
			return 2;
	for (const char *const *o = p->cat->unmodelled; o && *o; o++)
		if (strlen(*o) == n && !strncmp(sig, *o, n))
			return 3;
	return 1;
}

/* Instances whose events ended a second before the stream's position are
 * closed (an op's kernels run together), all at the end. */
#define INST_WINDOW_NS 1000000000LL
#define INST_MAX 65536

int perf_sweep(ev_stats *s, int all)
{
	struct perf *p = s->state;
	size_t w = 0;
	int rc = EV_OK;
	for (size_t i = 0; i < p->n; i++) {
		struct pinst *in = &p->inst[i];
		int expired = p->now > INT64_MIN + INST_WINDOW_NS && in->end < p->now - INST_WINDOW_NS;
		if (all || expired || (p->n >= INST_MAX && i < p->n / 2)) {
			rc = rc ? rc : perf_inst_close(s, in);
			continue;
		}
		p->inst[w++] = *in;
	}
	p->n = w;
	ev_map_free(&p->idx);
	ev_map_init(&p->idx);
	for (size_t i = 0; !rc && i < p->n; i++)
		rc = ev_map_put(&p->idx, ev_hash64(&p->inst[i].key, sizeof p->inst[i].key) | 1, i + 1);
	return rc;
}

/* The kind of a signature (sig_kind), cached by string id. */
int perf_kind_of(ev_stats *s, uint64_t sig, unsigned *kd)
{
	struct perf *p = s->state;
	uint64_t *kind = ev_map_get(&p->sigcat, sig | 1);
	if (kind) {
		*kd = (unsigned)*kind;
		return EV_OK;
	}
	*kd = sig_kind(p, str_of(s, sig));
	return ev_map_put(&p->sigcat, sig | 1, *kd);
}

/* Launchers are kept as cpu_ops are (opsum_window_prune). */
#define LAUNCH_WINDOW_NS OPSUM_WINDOW_NS

static int la_prune(struct perf *p)
{
	static const struct opsum_window w = { sizeof(struct launcher), offsetof(struct launcher, rank),
		offsetof(struct launcher, src), offsetof(struct launcher, id), offsetof(struct launcher, end) };
	return opsum_window_prune(&w, p->la, &p->nla, p->now, &p->evicted, &p->laidx);
}

static int la_add(struct perf *p, const struct ev_rec *r, uint32_t id, int64_t end, const struct tstack *t);



static int fw_put(struct perf_bwd *b, uint64_t key, uint64_t sig, uint64_t thread, int64_t uid)
{
	if (b->nfw == FW_MAX) {
		size_t half = b->nfw / 2;
		b->fw_evicted += half;
		memmove(b->fw, b->fw + half, (b->nfw - half) * sizeof *b->fw);
		b->nfw -= half;
		ev_map_free(&b->fwidx);
		ev_map_init(&b->fwidx);
		for (size_t i = 0; i < b->nfw; i++)
			if (ev_map_put(&b->fwidx, b->fw[i].key, i + 1))
				return EV_ERR_NOMEM;
	}
	if (b->nfw == b->capfw) {
		size_t cap = b->capfw ? 2 * b->capfw : 64;
		struct fwop *nf = realloc(b->fw, cap * sizeof *nf);
		if (!nf)
			return EV_ERR_NOMEM;
		b->fw = nf;
		b->capfw = cap;
	}
	b->fw[b->nfw++] = (struct fwop){ key, sig, thread, uid };
	return ev_map_put(&b->fwidx, key, b->nfw);
}

/* A backward sheet: a forward op of the category (kd 2) is remembered; a
 * range linked to one of them (fwdbwd.h) gives 1, with the ancestor it
 * stands for in *a (the forward op's id, signature and thread, the
 * backward op's end) and the backward op's id in *op; 0 otherwise. */
static int bwd_link(ev_stats *s, const struct ev_rec *r, unsigned kd, struct anc *a, uint32_t *op)
{
	struct perf *p = s->state;
	struct perf_bwd *b = &p->bwd;
	int rc;
	if (kd == 2) {
		if (b->src_checked != (int32_t)r->src) {
			b->src_checked = r->src;
			b->src_linked = fb_source_linked(s->meta, r->src);
		}
		b->unlinked_ops += !b->src_linked;
		if (r->id && (rc = fw_put(b, opsum_op_key(r->rank, r->src, r->id), r->sig, (uint64_t)r->stream + 1, tl_uid(r))) != EV_OK)
			return rc;
	}
	struct fb_link l;
	if ((rc = fb_range(&b->fb, r, str_of(s, r->name), &l)) <= 0)
		return rc;
	uint64_t key = opsum_op_key(r->rank, r->src, l.fwd);
	uint64_t *i = ev_map_get(&b->fwidx, key);
	if (!i || b->fw[*i - 1].key != key)
		return 0;
	const struct fwop *f = &b->fw[*i - 1];
	*a = (struct anc){ l.fwd, f->sig, l.bwd_end, f->thread, f->uid };
	*op = l.bwd;
	return 1;
}

/* The key of op `id` (signature sig) of record r's source and rank. */
static int op_key(ev_stats *s, const struct ev_rec *r, uint64_t id, uint64_t sig, struct gkey *key)
{
	memset(key, 0, sizeof *key);
	key->rank = r->rank;
	key->k1 = id;
	key->k2 = sig;
	return src_group(s, r->src, &key->sg);
}



/* Pending ops no event joined are instances without kernel time (they
 * launched nothing, or the trace left their events unlinked), all at the
 * end; those an event joined are dropped. */
int perf_pend_prune(ev_stats *s, int all)
{
	struct perf *p = s->state;
	int64_t cut = p->now > INT64_MIN + LAUNCH_WINDOW_NS ? p->now - LAUNCH_WINDOW_NS : INT64_MIN;
	size_t w = 0;
	int rc = EV_OK;
	for (size_t i = 0; i < p->npd; i++) {
		const struct ppend *e = &p->pd[i];
		if (e->used)
			continue;
		int forced = !all && e->end >= cut && p->npd >= PEND_MAX && i < p->npd / 2;
		if (all || e->end < cut || forced) {
			struct pinst in;
			memset(&in, 0, sizeof in);
			in.key = e->key;
			in.at = e->at;
			p->early += forced;
			rc = rc ? rc : perf_inst_close(s, &in);
			continue;
		}
		p->pd[w++] = *e;
	}
	p->npd = w;
	ev_map_free(&p->pdidx);
	ev_map_init(&p->pdidx);
	for (size_t i = 0; !rc && i < p->npd; i++)
		rc = ev_map_put(&p->pdidx, ev_hash64(&p->pd[i].key, sizeof p->pd[i].key) | 1, i + 1);
	return rc;
}

/* Cpu_op range r of an op of the category: pending until a GPU event of
 * its subtree comes. */
static int pend_add(ev_stats *s, const struct ev_rec *r)
{
	struct perf *p = s->state;
	struct gkey key;
	int rc = op_key(s, r, r->id, r->sig, &key);
	if (rc)
		return rc;
	if (p->npd == p->cappd) {
		if (p->npd >= 4096 && (rc = perf_pend_prune(s, 0)) != EV_OK)
			return rc;
		/* Grown when full, or (below PEND_MAX) when the prune left it
		 * over 3/4 full, so that it is not pruned at every op. */
		if (p->npd == p->cappd || (p->npd >= p->cappd - p->cappd / 4 && p->cappd < PEND_MAX)) {
			size_t cap = p->cappd ? 2 * p->cappd : 64;
			struct ppend *np = realloc(p->pd, cap * sizeof *np);
			if (!np)
				return EV_ERR_NOMEM;
			p->pd = np;
			p->cappd = cap;
		}
	}
	p->pd[p->npd++] =
		(struct ppend){ key, { r->rank, (uint64_t)r->stream + 1, r->ts, p->seq++, tl_uid(r) }, ev_rec_end(r), 0 };
	return ev_map_put(&p->pdidx, ev_hash64(&key, sizeof key) | 1, p->npd);
}

/* A cpu_op range: the ops of the category open on its thread (and itself,
 * if one) are those its GPU events count for. */
int perf_range_rec(ev_stats *s, const struct ev_rec *r)
{
	struct perf *p = s->state;
	unsigned kd = 1;
	int rc;
	if (r->sig && (rc = perf_kind_of(s, r->sig, &kd)) != EV_OK)
		return rc;
	/* A backward sheet's op is the backward op linked to a forward op of
	 * the category: it stands for that op, on the backward's thread. */
	struct anc bwd;
	uint32_t bwd_op = 0;
	if (p->cat->bwd) {
		if ((rc = bwd_link(s, r, kd, &bwd, &bwd_op)) < 0)
			return rc;
		kd = rc ? 2 : 1;
	}
	struct tstack *t = NULL;
	for (size_t i = 0; i < p->nth && !t; i++)
		if (p->th[i].rank == r->rank && p->th[i].thread == r->stream && p->th[i].src == r->src)
			t = &p->th[i];
	if (!t && kd != 2)
		return EV_OK;
	if (!t) {
		if (p->nth == p->capth) {
			size_t cap = p->capth ? 2 * p->capth : 8;
			struct tstack *nt = realloc(p->th, cap * sizeof *nt);
			if (!nt)
				return EV_ERR_NOMEM;
			p->th = nt;
			p->capth = cap;
		}
		t = &p->th[p->nth++];
		memset(t, 0, sizeof *t);
		t->rank = r->rank;
		t->thread = r->stream;
		t->src = r->src;
	}
	while (t->n && t->a[t->n - 1].end <= r->ts)
		t->n--;
	int64_t end = ev_rec_end(r);
	if (kd == 2) {
		/* An instance, whether it launches anything or not (a backward
		 * sheet's: only when its backward op launches, docs/ev-stats.md). */
		p->now = r->ts;
		if (!p->cat->bwd && (rc = pend_add(s, r)) != EV_OK)
			return rc;
		if (t->n == PERF_DEPTH) {
			p->deep++;
			return EV_OK;
		}
		t->a[t->n++] = p->cat->bwd ? bwd : (struct anc){ r->id, r->sig, end, (uint64_t)r->stream + 1, tl_uid(r) };
		/* The evaluate_function op around the linked node launches for
		 * it too. */
		if (p->cat->bwd && bwd_op != r->id && (rc = la_add(p, r, bwd_op, bwd.end, t)) != EV_OK)
			return rc;
	}
	if (!t->n)
		return EV_OK;
	p->now = r->ts;
	return la_add(p, r, r->id, end, t);
}

/* Ops `id` (on r's rank and source, ending at end) launches for the ops
 * of the category open on t. */
static int la_add(struct perf *p, const struct ev_rec *r, uint32_t id, int64_t end, const struct tstack *t)
{
	int rc;
	if (p->nla == p->capla) {
		if (p->nla >= 4096 && (rc = la_prune(p)) != EV_OK)
			return rc;
		if (p->nla == p->capla) {
			size_t cap = p->capla ? 2 * p->capla : 64;
			struct launcher *nl = realloc(p->la, cap * sizeof *nl);
			if (!nl)
				return EV_ERR_NOMEM;
			p->la = nl;
			p->capla = cap;
		}
	}
	struct launcher *l = &p->la[p->nla++];
	l->rank = r->rank;
	l->src = r->src;
	l->id = id;
	l->end = end;
	l->n = t->n;
	memcpy(l->a, t->a, t->n * sizeof t->a[0]);
	return ev_map_put(&p->laidx, opsum_op_key(r->rank, r->src, id), p->nla);
}

/* GPU event r into the instance of op `id` with signature sig, run on
 * thread - 1 (0 unknown), of UID uid (-1 unknown). */
int perf_inst_add(ev_stats *s, const struct ev_rec *r, uint64_t id, uint64_t sig, uint64_t thread, int64_t uid)
{
	struct perf *p = s->state;
	struct gkey key;
	int rc = op_key(s, r, id, sig, &key);
	if (rc)
		return rc;
	double a = 0, z = 0;
	tl_float_times(&p->clock, s->meta, r, &a, &z);
	int64_t end = ev_rec_end(r);
	uint64_t h = ev_hash64(&key, sizeof key) | 1;
	uint64_t *slot = ev_map_get(&p->idx, h);
	struct pinst *in = slot ? &p->inst[*slot - 1] : NULL;
	if (!in || memcmp(&in->key, &key, sizeof key)) {
		if (p->n == p->cap) {
			if (p->n > 4096 && (rc = perf_sweep(s, 0)) != EV_OK)
				return rc;
			if (p->n == p->cap) {
				size_t cap = p->cap ? 2 * p->cap : 64;
				struct pinst *ni = realloc(p->inst, cap * sizeof *ni);
				if (!ni)
					return EV_ERR_NOMEM;
				p->inst = ni;
				p->cap = cap;
			}
		}
		in = &p->inst[p->n++];
		memset(in, 0, sizeof *in);
		in->key = key;
		/* Its place: its op's, when pending (the op's range came). */
		uint64_t *ps = ev_map_get(&p->pdidx, h);
		struct ppend *e = ps ? &p->pd[*ps - 1] : NULL;
		if (e && !e->used && !memcmp(&e->key, &key, sizeof key)) {
			e->used = 1;
			in->at = e->at;
		} else {
			in->at = (struct forder){ r->rank, thread, r->ts, p->seq++, uid };
		}
		in->start = r->ts;
		in->end = end;
		in->fa = a;
		in->fz = z;
		if ((rc = ev_map_put(&p->idx, h, p->n)) != EV_OK)
			return rc;
	} else {
		/* TraceLens merges intervals sorted by start: a start past the
		 * merged end opens a new interval. */
		if (s->o.float_us ? a > in->fz : r->ts > in->end) {
			in->busy += ev_span(in->start, in->end);
			in->fbusy += in->fz - in->fa;
			in->start = r->ts;
			in->fa = a;
		}
		if (end > in->end)
			in->end = end;
		if (z > in->fz)
			in->fz = z;
	}
	if (in->nk == PERF_MAXK) {
		in->more++;
		return EV_OK;
	}
	in->kname[in->nk] = r->name;
	in->kstream[in->nk] = r->stream;
	in->kdur[in->nk++] = (double)r->dur / 1000.0;
	return EV_OK;
}
