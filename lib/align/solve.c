/* SPDX-License-Identifier: MIT */
/*
 * solve.c - anchors of every rank (pass 1 of a two-pass alignment) and the
 * fit of every rank against the reference rank of its configuration,
 * through other ranks where it shares no anchor with the reference.
 */
#include <stdlib.h>
#include <string.h>

#include "ev/align.h"
#include "ev/stream.h"

/* One anchor: an instant of one rank that other ranks saw too. */
struct anchor {
	uint64_t key;   /* what the instant is (same on every rank that saw it) */
	uint64_t grp;   /* kernel anchors: hash of (config, stream, name) */
	int64_t t;      /* the instant on the rank's clock */
	uint32_t ri;    /* index of the (config, rank) */
	uint32_t kind;
};

struct rank_state {
	struct ev_align_rank res;
	size_t kept[EV_ANCHOR_KINDS];
	int done;
};

struct ev_align {
	struct ev_align_opts o;
	struct rank_state *rk;
	size_t nrk, caprk;
	struct ev_map ix;        /* (config, rank) + 1 -> index + 1 */
	struct ev_map kcount;    /* hash(grp, rank) -> kernels seen */
	struct ev_vec anchors;
	unsigned level[EV_ANCHOR_KINDS];
	size_t *order;           /* results in (config, rank) order */
	size_t last;             /* lookup cache */
};

void ev_align_opts_default(struct ev_align_opts *o)
{
	memset(o, 0, sizeof *o);
	o->mode = EV_ALIGN_OFFSET;
	o->ref_rank = -1;
	o->min_drift_span = 1000000000;  /* 1 s */
	o->warn_residual = 10000;        /* 10 us */
	o->anchors_per_rank = EV_ALIGN_ANCHORS_PER_RANK;
}

int ev_align_new(ev_align **out, const struct ev_align_opts *o)
{
	ev_align *a = calloc(1, sizeof *a);
	*out = NULL;
	if (!a)
		return EV_ERR_NOMEM;
	a->o = *o;
	if (!a->o.anchors_per_rank)
		a->o.anchors_per_rank = EV_ALIGN_ANCHORS_PER_RANK;
	ev_map_init(&a->ix);
	ev_map_init(&a->kcount);
	ev_vec_init(&a->anchors, sizeof(struct anchor));
	*out = a;
	return EV_OK;
}

void ev_align_free(ev_align *a)
{
	if (!a)
		return;
	free(a->rk);
	ev_map_free(&a->ix);
	ev_map_free(&a->kcount);
	ev_vec_free(&a->anchors);
	free(a->order);
	free(a);
}

static uint64_t ix_key(uint32_t config, uint32_t rank) { return ((uint64_t)config << 32 | rank) + 1; }

static uint64_t hash_words(const uint64_t *w, size_t n)
{
	unsigned char b[64];
	for (size_t i = 0; i < n && i < 8; i++)
		ev_put64(b + 8 * i, w[i]);
	uint64_t h = ev_hash64(b, 8 * (n < 8 ? n : 8));
	return h ? h : 1;
}

static struct rank_state *rank_get(ev_align *a, uint32_t config, uint32_t rank)
{
	if (a->nrk && a->rk[a->last].res.config == config && a->rk[a->last].res.rank == rank)
		return &a->rk[a->last];
	uint64_t *p = ev_map_get(&a->ix, ix_key(config, rank));
	if (p) {
		a->last = (size_t)*p - 1;
		return &a->rk[a->last];
	}
	if (a->nrk == a->caprk) {
		size_t n = a->caprk ? a->caprk * 2 : 16;
		struct rank_state *nr = realloc(a->rk, n * sizeof *nr);
		if (!nr)
			return NULL;
		a->rk = nr;
		a->caprk = n;
	}
	struct rank_state *s = &a->rk[a->nrk];
	memset(s, 0, sizeof *s);
	s->res.config = config;
	s->res.rank = rank;
	s->res.first_ts = INT64_MAX;
	s->res.state = EV_UNALIGNED;
	if (ev_map_put(&a->ix, ix_key(config, rank), a->nrk + 1))
		return NULL;
	a->last = a->nrk++;
	return s;
}

static int kept_at_level(uint64_t key, unsigned level) { return level == 0 || (key >> (64 - level)) == 0; }

/* Too many anchors of one kind on a rank: keep half of the keys, the same
 * half on every rank. */
static void thin(ev_align *a, unsigned kind)
{
	a->level[kind]++;
	struct anchor *v = a->anchors.data;
	size_t k = 0;
	for (size_t i = 0; i < a->nrk; i++)
		a->rk[i].kept[kind] = 0;
	for (size_t i = 0; i < a->anchors.len; i++) {
		if (v[i].kind == kind && !kept_at_level(v[i].key, a->level[kind]))
			continue;
		v[k++] = v[i];
		if (v[i].kind == kind)
			a->rk[v[i].ri].kept[kind]++;
	}
	a->anchors.len = k;
}

static int add_anchor(ev_align *a, struct rank_state *s, unsigned kind, uint64_t key, uint64_t grp, int64_t t)
{
	s->res.anchors[kind]++;
	if (!kept_at_level(key, a->level[kind]))
		return EV_OK;
	struct anchor *an = ev_vec_push(&a->anchors);
	if (!an)
		return EV_ERR_NOMEM;
	an->key = key;
	an->grp = grp;
	an->t = t;
	an->ri = (uint32_t)(s - a->rk);
	an->kind = kind;
	if (++s->kept[kind] >= a->o.anchors_per_rank)
		while (s->kept[kind] >= a->o.anchors_per_rank && a->level[kind] < 63)
			thin(a, kind);
	return EV_OK;
}

static int64_t rec_end(const struct ev_rec *r)
{
	int64_t e;
	if (r->dur > (uint64_t)INT64_MAX || __builtin_add_overflow(r->ts, (int64_t)r->dur, &e))
		return INT64_MAX;
	return e;
}

int ev_align_add(ev_align *a, uint32_t config, uint32_t rank, const struct ev_rec *r)
{
	struct rank_state *s = rank_get(a, config, rank);
	if (!s)
		return EV_ERR_NOMEM;
	s->res.events++;
	if (r->ts < s->res.first_ts)
		s->res.first_ts = r->ts;
	if (a->o.mode < EV_ALIGN_OFFSET)
		return EV_OK;
	if (r->type == EV_COLL && r->comm) {
		uint64_t w[4] = { EV_ANCHOR_COLL, config, r->comm, r->seq };
		return add_anchor(a, s, EV_ANCHOR_COLL, hash_words(w, 4), 0, rec_end(r));
	}
	if (r->type == EV_P2P && r->comm && r->peer >= 0 && (r->op == EV_OP_SEND || r->op == EV_OP_RECV)) {
		uint64_t from = r->op == EV_OP_SEND ? rank : (uint32_t)r->peer;
		uint64_t to = r->op == EV_OP_SEND ? (uint32_t)r->peer : rank;
		uint64_t w[6] = { EV_ANCHOR_P2P, config, r->comm, from, to, r->seq };
		return add_anchor(a, s, EV_ANCHOR_P2P, hash_words(w, 6), 0, rec_end(r));
	}
	if (r->type == EV_KERNEL && r->op == EV_KC_COMM && r->name) {
		/* Stream ids differ between ranks (7 on one, 15 on another): number
		 * the streams that run this kernel name in order of first use. */
		uint64_t sw[5] = { 0x5354, config, rank, r->name, r->stream }, *j = ev_map_get(&a->kcount, hash_words(sw, 5));
		uint64_t lane;
		if (j) {
			lane = *j - 1;
		} else {
			uint64_t nw[4] = { 0x4e58, config, rank, r->name }, nk = hash_words(nw, 4), *next = ev_map_get(&a->kcount, nk);
			lane = next ? *next : 0;
			if (ev_map_put(&a->kcount, nk, lane + 1) || ev_map_put(&a->kcount, hash_words(sw, 5), lane + 1))
				return EV_ERR_NOMEM;
		}
		uint64_t g[4] = { EV_ANCHOR_KERNEL, config, r->name, lane };
		uint64_t grp = hash_words(g, 4);
		uint64_t c[2] = { grp, rank };
		uint64_t ck = hash_words(c, 2), *cnt = ev_map_get(&a->kcount, ck);
		uint64_t ordinal = cnt ? *cnt : 0;
		if (ev_map_put(&a->kcount, ck, ordinal + 1))
			return EV_ERR_NOMEM;
		uint64_t w[2] = { grp, ordinal };
		return add_anchor(a, s, EV_ANCHOR_KERNEL, hash_words(w, 2), grp, rec_end(r));
	}
	return EV_OK;
}

/* ---- solve ------------------------------------------------------------ */

static int cmp_anchor(const void *pa, const void *pb)
{
	const struct anchor *x = pa, *y = pb;
	if (x->key != y->key)
		return x->key < y->key ? -1 : 1;
	return (x->ri > y->ri) - (x->ri < y->ri);
}

static const ev_align *sort_ctx;
static int cmp_order(const void *pa, const void *pb)
{
	const struct ev_align_rank *x = &sort_ctx->rk[*(const size_t *)pa].res, *y = &sort_ctx->rk[*(const size_t *)pb].res;
	if (x->config != y->config)
		return x->config < y->config ? -1 : 1;
	return (x->rank > y->rank) - (x->rank < y->rank);
}

static uint64_t kernels_of(const ev_align *a, uint64_t grp, uint32_t rank)
{
	uint64_t c[2] = { grp, rank }, *p = ev_map_get(&a->kcount, hash_words(c, 2));
	return p ? *p : 0;
}

struct solver {
	ev_align *a;
	struct anchor *v;
	size_t n;
	uint32_t *gstart;  /* per anchor: first anchor of its key group */
	uint32_t *pivot;   /* per group start: the aligned anchor to measure against */
	size_t *first;     /* per rank: its anchors in byrank[first[i] .. first[i + 1]) */
	uint32_t *byrank;
	int64_t *tref, *d;
	uint32_t *partner, *pidx;
	double *scratch;
};

/* Align rank i against the pivots of its groups, with anchors of the kinds
 * in mask.  1 if it was aligned. */
static int align_rank(struct solver *sv, size_t i, unsigned mask)
{
	ev_align *a = sv->a;
	struct rank_state *s = &a->rk[i];
	size_t m = 0;
	uint64_t used[EV_ANCHOR_KINDS] = { 0 };
	for (size_t k = sv->first[i]; k < sv->first[i + 1]; k++) {
		uint32_t p = sv->byrank[k];
		const struct anchor *an = &sv->v[p];
		if (!(mask & 1u << an->kind))
			continue;
		uint32_t piv = sv->pivot[sv->gstart[p]];
		if (piv == UINT32_MAX || sv->v[piv].ri == i)
			continue;
		const struct rank_state *q = &a->rk[sv->v[piv].ri];
		if (an->kind == EV_ANCHOR_KERNEL && kernels_of(a, an->grp, s->res.rank) != kernels_of(a, an->grp, q->res.rank))
			continue; /* ordinals would not match */
		if (an->t == INT64_MAX || sv->v[piv].t == INT64_MAX)
			continue;
		int64_t tr = ev_align_apply_fit(&q->res.fit, sv->v[piv].t);
		sv->tref[m] = tr;
		sv->d[m] = (int64_t)((uint64_t)an->t - (uint64_t)tr);
		sv->partner[m] = q->res.rank;
		sv->pidx[m] = sv->v[piv].ri;
		used[an->kind]++;
		m++;
	}
	if (m == 0)
		return 0;
	if (ev_align_fit(sv->tref, sv->d, m, a->o.mode, a->o.min_drift_span, sv->scratch, &s->res.fit) != EV_OK)
		return 0;
	memcpy(s->res.used, used, sizeof used);
	/* The partner named in the report: the reference when it took part. */
	uint32_t best = sv->partner[0];
	for (size_t x = 0; x < m; x++)
		if (a->rk[sv->pidx[x]].res.state == EV_ALIGNED_REF) {
			best = sv->partner[x];
			break;
		}
	s->res.via = best;
	s->res.state = EV_ALIGNED;
	s->done = 1;
	/* Its anchors can now serve groups nobody aligned has yet. */
	for (size_t k = sv->first[i]; k < sv->first[i + 1]; k++) {
		uint32_t p = sv->byrank[k];
		if (sv->pivot[sv->gstart[p]] == UINT32_MAX)
			sv->pivot[sv->gstart[p]] = p;
	}
	return 1;
}

int ev_align_solve(ev_align *a)
{
	int rc = EV_OK;
	free(a->order);
	a->order = malloc((a->nrk ? a->nrk : 1) * sizeof *a->order);
	if (!a->order)
		return EV_ERR_NOMEM;
	for (size_t i = 0; i < a->nrk; i++)
		a->order[i] = i;
	sort_ctx = a;
	if (a->nrk > 1)
		qsort(a->order, a->nrk, sizeof *a->order, cmp_order);
	if (a->o.mode == EV_ALIGN_START) {
		for (size_t i = 0; i < a->nrk; i++) {
			struct ev_align_rank *r = &a->rk[i].res;
			r->state = EV_ALIGNED_START;
			r->fit.offset = r->first_ts;
			r->fit.drift_note = EV_DRIFT_NOT_ASKED;
		}
		return EV_OK;
	}
	if (a->o.mode < EV_ALIGN_OFFSET)
		return EV_OK;
	/* The reference rank of each configuration. */
	for (size_t k = 0; k < a->nrk;) {
		size_t e = k;
		uint32_t cfg = a->rk[a->order[k]].res.config;
		while (e < a->nrk && a->rk[a->order[e]].res.config == cfg)
			e++;
		size_t ref = a->order[k]; /* the lowest rank */
		for (size_t x = k; x < e; x++)
			if (a->o.ref_rank >= 0 && a->rk[a->order[x]].res.rank == (uint64_t)a->o.ref_rank)
				ref = a->order[x];
		a->rk[ref].res.state = EV_ALIGNED_REF;
		a->rk[ref].res.via = a->rk[ref].res.rank;
		a->rk[ref].done = 1;
		k = e;
	}
	struct solver sv;
	memset(&sv, 0, sizeof sv);
	sv.a = a;
	sv.v = a->anchors.data;
	sv.n = a->anchors.len;
	if (sv.n > UINT32_MAX - 1)
		return EV_ERR_RANGE;
	size_t nn = sv.n ? sv.n : 1;
	size_t maxr = 0;
	sv.gstart = malloc(nn * sizeof *sv.gstart);
	sv.pivot = malloc(nn * sizeof *sv.pivot);
	sv.byrank = malloc(nn * sizeof *sv.byrank);
	sv.first = calloc(a->nrk + 1, sizeof *sv.first);
	if (!sv.gstart || !sv.pivot || !sv.byrank || !sv.first) {
		rc = EV_ERR_NOMEM;
		goto out;
	}
	if (sv.n > 1)
		qsort(sv.v, sv.n, sizeof *sv.v, cmp_anchor);
	for (size_t p = 0; p < sv.n; p++) {
		sv.gstart[p] = p > 0 && sv.v[p].key == sv.v[p - 1].key ? sv.gstart[p - 1] : (uint32_t)p;
		sv.pivot[p] = UINT32_MAX;
		sv.first[sv.v[p].ri + 1]++;
	}
	for (size_t i = 0; i < a->nrk; i++) {
		if (sv.first[i + 1] > maxr)
			maxr = sv.first[i + 1];
		sv.first[i + 1] += sv.first[i];
	}
	{
		size_t *fill = calloc(a->nrk + 1, sizeof *fill);
		if (!fill) {
			rc = EV_ERR_NOMEM;
			goto out;
		}
		for (size_t p = 0; p < sv.n; p++) {
			uint32_t ri = sv.v[p].ri;
			sv.byrank[sv.first[ri] + fill[ri]++] = (uint32_t)p;
		}
		free(fill);
	}
	/* Reference ranks are the first pivots. */
	for (size_t p = 0; p < sv.n; p++)
		if (a->rk[sv.v[p].ri].res.state == EV_ALIGNED_REF && sv.pivot[sv.gstart[p]] == UINT32_MAX)
			sv.pivot[sv.gstart[p]] = (uint32_t)p;
	size_t mr = maxr ? maxr : 1;
	sv.tref = malloc(mr * sizeof *sv.tref);
	sv.d = malloc(mr * sizeof *sv.d);
	sv.partner = malloc(mr * sizeof *sv.partner);
	sv.pidx = malloc(mr * sizeof *sv.pidx);
	sv.scratch = malloc(5 * mr * sizeof *sv.scratch);
	if (!sv.tref || !sv.d || !sv.partner || !sv.pidx || !sv.scratch) {
		rc = EV_ERR_NOMEM;
		goto out;
	}
	/* Rounds in rank order: collectives and p2p first; NCCL kernel ordinals
	 * only for ranks the communication records cannot reach. */
	const unsigned comm_mask = 1u << EV_ANCHOR_COLL | 1u << EV_ANCHOR_P2P;
	for (;;) {
		int progress = 0;
		for (size_t k = 0; k < a->nrk; k++)
			if (!a->rk[a->order[k]].done)
				progress |= align_rank(&sv, a->order[k], comm_mask);
		if (progress)
			continue;
		for (size_t k = 0; k < a->nrk; k++)
			if (!a->rk[a->order[k]].done)
				progress |= align_rank(&sv, a->order[k], 1u << EV_ANCHOR_KERNEL);
		if (!progress)
			break;
	}
out:
	free(sv.gstart);
	free(sv.pivot);
	free(sv.byrank);
	free(sv.first);
	free(sv.tref);
	free(sv.d);
	free(sv.partner);
	free(sv.pidx);
	free(sv.scratch);
	return rc;
}

size_t ev_align_count(const ev_align *a) { return a->nrk; }

const struct ev_align_rank *ev_align_at(const ev_align *a, size_t i)
{
	if (i >= a->nrk)
		return NULL;
	return &a->rk[a->order ? a->order[i] : i].res;
}

const struct ev_align_rank *ev_align_get(const ev_align *a, uint32_t config, uint32_t rank)
{
	uint64_t *p = ev_map_get(&a->ix, ix_key(config, rank));
	return p ? &a->rk[*p - 1].res : NULL;
}

int64_t ev_align_apply(const ev_align *a, uint32_t config, uint32_t rank, int64_t ts)
{
	const struct ev_align_rank *r = ev_align_get(a, config, rank);
	if (!r || r->state == EV_UNALIGNED || r->state == EV_ALIGNED_REF)
		return ts;
	return ev_align_apply_fit(&r->fit, ts);
}

void ev_align_apply_rec(const ev_align *a, uint32_t config, uint32_t rank, struct ev_rec *r)
{
	const struct ev_align_rank *ar = ev_align_get(a, config, rank);
	if (!ar || ar->state == EV_UNALIGNED || ar->state == EV_ALIGNED_REF)
		return;
	int64_t ts = ev_align_apply_fit(&ar->fit, r->ts);
	/* A drifting clock also stretches durations: map the end too, for the
	 * types whose dur is a time on the rank's clock. */
	int timed = r->type == EV_KERNEL || r->type == EV_MEMCPY || r->type == EV_MEMSET || r->type == EV_COLL ||
	            r->type == EV_P2P || r->type == EV_RANGE || r->type == EV_API;
	if (ar->fit.drift != 0 && timed && r->dur > 0 && r->dur <= (uint64_t)INT64_MAX) {
		int64_t end = rec_end(r);
		if (end != INT64_MAX) {
			int64_t e2 = ev_align_apply_fit(&ar->fit, end);
			if (e2 >= ts)
				r->dur = (uint64_t)e2 - (uint64_t)ts;
		}
	}
	r->ts = ts;
}

unsigned ev_align_thinning(const ev_align *a, enum ev_anchor_kind k) { return a->level[k]; }

const struct ev_align_opts *ev_align_options(const ev_align *a) { return &a->o; }

const char *ev_align_mode_name(enum ev_align_mode m)
{
	switch (m) {
	case EV_ALIGN_START: return "start";
	case EV_ALIGN_OFFSET: return "coll";
	case EV_ALIGN_DRIFT: return "coll-drift";
	default: return "none";
	}
}

const char *ev_anchor_kind_name(enum ev_anchor_kind k)
{
	switch (k) {
	case EV_ANCHOR_COLL: return "coll";
	case EV_ANCHOR_P2P: return "p2p";
	case EV_ANCHOR_KERNEL: return "kernel";
	default: return "?";
	}
}
