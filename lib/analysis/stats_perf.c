/* SPDX-License-Identifier: MIT */
/*
 * stats_perf.c - TraceLens's perf-model sheets (GEMM, ...): the op
 * instances of a category's ops (perf.h), grouped by op name and the
 * model's parameters; per group the first instance's GFLOPS, data moved,
 * FLOPS/Byte, Compute Spec and arguments, the instances' TB/s, TFLOPS/s
 * and kernel time (mean, median, std, min, max, sum), their count, and
 * per kernel position TraceLens's kernel_details summary (the Python text
 * of its list of dicts); largest kernel time first.  --table picks the
 * category.
 *
 * An instance is an op of the category and the GPU events of its subtree,
 * as TraceLens aggregates them: the stream links an event to the innermost
 * op that launched it (sig, step), and the cpu_op ranges (nested on their
 * thread) tell which ops of the category enclose that one
 * (aten::layer_norm around aten::native_layer_norm, aten::convolution
 * around aten::miopen_convolution), so the event counts for each.  A
 * stream without ranges gives each op the events it launches itself.  The
 * instance's kernel time is the union of its events (TraceLens's busy
 * time).
 *
 * Every instance of the category's ops is a row's sample, as TraceLens
 * models every event of the op names: an op's cpu_op range waits for a
 * GPU event of its subtree (pending), and one that launched nothing (a CPU
 * copy, or whose kernels the trace left unlinked) counts with no kernel
 * time.  A group's "first"
 * instance is the first in the trace file, which Kineto writes thread by
 * thread (the #thread lines' order), each in time order: its arguments,
 * process and thread names are the row's *_first, and it breaks ties of
 * kernel time (TraceLens's UID_first).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/fwdbwd.h"
#include "analysis/opsum.h"
#include "analysis/perf.h"
#include "analysis/pyrepr.h"

#define PERF_MAXK 32 /* GPU events of one instance */
#define PERF_DEPTH 8 /* ops of the category open around one op */

static const struct perf_category *const categories[] = {
#define PERF_ROW(n, sheet) &perf_category_##n,
	PERF_CATEGORIES(PERF_ROW)
#undef PERF_ROW
};

/* Where an op comes in the trace file: its UID (its index there, -1
 * unknown); without, its thread's place (thread + 1, 0 unknown: last),
 * then its start, then the stream's order. */
struct forder { uint32_t rank; uint64_t thread; int64_t ts; uint64_t seq; int64_t uid; };

struct pinst {
	struct gkey key;        /* sg, rank, k1 = instance, k2 = sig */
	struct forder at;       /* the op's place (or its first event's) */
	int64_t start, end;
	uint64_t busy;          /* ns merged before [start, end) */
	double fa, fz, fbusy;   /* the same in TraceLens's microsecond doubles */
	uint32_t nk, more;      /* events kept, and past PERF_MAXK */
	uint64_t kname[PERF_MAXK];
	uint32_t kstream[PERF_MAXK];
	double kdur[PERF_MAXK]; /* us */
};

struct pgroup {
	uint64_t count;
	struct forder first;    /* the first instance's place in the file */
	uint64_t sig;           /* its signature */
	int64_t uid;            /* UID_first: the least UID of its instances' ops */
	uint64_t no_uid;        /* instances whose op's UID is not known */
	char *pvals;            /* its parameter values, '\x1f'-joined */
	const char *pname[PERF_MAXP];
	size_t np;
	double gflop, mbytes, fpb;
	const char *spec;
	struct ev_dist us, tbs, tflops;
	struct perf_kpos *k;    /* the first instance's events: name, stream, durations */
	uint32_t nk;
	uint64_t skipped;       /* instances of another number of events */
	uint64_t empty;         /* instances without one (skipped when nk > 0) */
};

/* An op of the category that no GPU event has joined yet (compact: most
 * never get one, or get it soon). */
struct ppend { struct gkey key; struct forder at; int64_t end; int used; };

/* An op of the category open on a thread, or enclosing a launcher. */
struct anc { uint32_t id; uint64_t sig; int64_t end; uint64_t thread; /* + 1 */ int64_t uid; };
/* A thread's open ops of the category. */
struct tstack { uint32_t rank, thread; uint16_t src; uint32_t n; struct anc a[PERF_DEPTH]; };
/* An op under (or being) an op of the category: the ops its GPU events
 * count for. */
struct launcher { uint32_t rank, id; uint16_t src; uint32_t n; int64_t end; struct anc a[PERF_DEPTH]; };

/* A backward sheet: the forward-backward links, and a window of the
 * forward ops of the category (key, signature, thread + 1) until their
 * backward op comes. */
struct fwop { uint64_t key, sig, thread; int64_t uid; };
struct perf_bwd {
	struct fb_links fb;
	struct fwop *fw;
	size_t nfw, capfw;
	struct ev_map fwidx;    /* key -> index + 1 */
	uint64_t fw_evicted;    /* forward ops that left the window */
	int32_t src_checked;    /* the last source whose #src was read, -1 none */
	int src_linked;         /* and whether it has fwdbwd links */
	uint64_t unlinked_ops;  /* forward ops of the category in sources without */
};

/* A parameter column: its name and where it first came (TraceLens's
 * columns are the union of its rows' keys in row order). */
struct pcol { const char *name; struct forder at; size_t pos; };

struct perf {
	const struct perf_category *cat;
	struct ev_map idx;      /* hash of an instance's key -> index + 1 */
	struct ev_map sigcat;   /* sig id -> 1 + (op modelled), 3 unmodelled */
	struct pinst *inst;
	size_t n, cap;
	int64_t now;
	struct tl_clock clock;
	struct pcol cols[2 * PERF_MAXP];
	size_t ncols;
	char colname[2 * PERF_MAXP][48]; /* "param: NAME", the rows' column names */
	uint64_t failed, unmodelled, over, sketched, early, seq;
	char failed_op[128], unmodelled_op[128];
	struct tstack *th;      /* per thread (distinct threads) */
	size_t nth, capth;
	struct ppend *pd;       /* a window of ops of the category without events */
	size_t npd, cappd;
	struct ev_map pdidx;    /* hash of a pending op's key -> index + 1 */
	struct launcher *la;    /* a window of ops under ops of the category */
	size_t nla, capla;
	struct ev_map laidx;    /* hash of rank, src, id -> index + 1 */
	uint64_t evicted, deep;
	struct perf_bwd bwd;    /* a backward sheet's links (perf_bwd) */
	int any_uid;            /* an op has its UID: the stream carries them */
	uint64_t no_uid;        /* groups without */
};

static int perf_init(ev_stats *s)
{
	struct perf *p = s->state;
	if (s->o.table >= sizeof categories / sizeof categories[0])
		return EV_ERR_ARG;
	p->cat = categories[s->o.table];
	ev_map_init(&p->idx);
	ev_map_init(&p->sigcat);
	ev_map_init(&p->laidx);
	ev_map_init(&p->bwd.fwidx);
	p->bwd.src_checked = -1;
	ev_map_init(&p->pdidx);
	return EV_OK;
}

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

/* Whether op a comes before op b in the trace file (< 0), after (> 0).
 * TraceLens's *_first and UID_first are those of a group's first event
 * in the file: the lesser UID (the index there) when both are known;
 * else, as Kineto writes each thread's ops together, each thread's in
 * time order, the threads' order (their #thread lines') decides, then the
 * time (a thread without a #thread line: last). */
static int file_cmp(const ev_meta *m, const struct forder *a, const struct forder *b)
{
	if (a->uid >= 0 && b->uid >= 0)
		return a->uid < b->uid ? -1 : a->uid > b->uid;
	const struct ev_thread_info *ta = a->thread ? ev_meta_thread(m, a->rank, (uint32_t)(a->thread - 1)) : NULL;
	const struct ev_thread_info *tb = b->thread ? ev_meta_thread(m, b->rank, (uint32_t)(b->thread - 1)) : NULL;
	if (!ta != !tb)
		return ta ? -1 : 1;
	if (ta && ta->order != tb->order)
		return ta->order < tb->order ? -1 : 1;
	if (a->ts != b->ts)
		return a->ts < b->ts ? -1 : 1;
	return a->seq < b->seq ? -1 : a->seq > b->seq;
}

static void add_col(ev_stats *s, const char *name, const struct forder *at, size_t pos)
{
	struct perf *p = s->state;
	for (size_t i = 0; i < p->ncols; i++)
		if (!strcmp(p->cols[i].name, name)) {
			int c = file_cmp(s->meta, at, &p->cols[i].at);
			if (c < 0 || (c == 0 && pos < p->cols[i].pos)) {
				p->cols[i].at = *at;
				p->cols[i].pos = pos;
			}
			return;
		}
	if (p->ncols < sizeof p->cols / sizeof p->cols[0])
		p->cols[p->ncols++] = (struct pcol){ name, *at, pos };
}

/* An instance is done: modelled, into its group. */
static int inst_close(ev_stats *s, const struct pinst *in)
{
	struct perf *p = s->state;
	const char *names[PERF_MAXK];
	for (uint32_t i = 0; i < in->nk; i++)
		names[i] = str_of(s, in->kname[i]);
	const char *sig = str_of(s, in->key.k2);
	struct perf_inst pi = { sig, names, in->nk };
	struct perf_model m;
	memset(&m, 0, sizeof m);
	int rc = p->cat->model(&pi, &m);
	if (rc == EV_ERR_FORMAT || rc == EV_ERR_ARG) {
		if (!p->failed++)
			snprintf(p->failed_op, sizeof p->failed_op, "%.*s", (int)opsum_name_len(sig), sig);
		return EV_OK;
	}
	if (rc)
		return rc;
	p->over += in->more != 0;
	/* The group: op name and parameter values. */
	char key[PERF_MAXP * (PERF_PVAL + 40) + 256];
	size_t w = (size_t)snprintf(key, sizeof key, "%.*s", (int)opsum_name_len(sig), sig);
	size_t vat = w;
	for (size_t i = 0; i < m.np && w < sizeof key; i++)
		w += (size_t)snprintf(key + w, sizeof key - w, "\x1f%s=%s", m.pname[i], m.pval[i]);
	if (w >= sizeof key)
		return EV_ERR_RANGE;
	struct gkey k;
	memset(&k, 0, sizeof k);
	k.sg = in->key.sg;
	k.rank = has_by(&s->o, EV_BY_RANK) ? in->key.rank : 0;
	k.k1 = ev_hash64(key, w);
	k.k2 = ev_hash64(key, vat) ^ (uint64_t)w;
	struct pgroup *g = group_get(&s->g, &k, NULL);
	if (!g)
		return EV_ERR_NOMEM;
	for (size_t i = 0; i < m.np; i++)
		add_col(s, m.pname[i], &in->at, i);
	double us = !in->nk ? 0
	          : s->o.float_us ? in->fbusy + (in->fz - in->fa)
	                          : (double)(in->busy + ev_span(in->start, in->end)) / 1e3;
	double gflop = m.flops / 1e9;
	if (g->count == 0) {
		size_t vn = 0;
		g->pvals = malloc(m.np * PERF_PVAL + 1);
		if (!g->pvals)
			return EV_ERR_NOMEM;
		for (size_t i = 0; i < m.np; i++) {
			vn += (size_t)sprintf(g->pvals + vn, "%s%s", i ? "\x1f" : "", m.pval[i]);
			g->pname[i] = m.pname[i];
		}
		g->pvals[vn] = '\0';
		g->np = m.np;
		g->gflop = gflop;
		g->mbytes = m.bytes / (1024.0 * 1024.0);
		g->fpb = m.bytes > 0 ? gflop * 1e9 / m.bytes : NAN;
		g->spec = m.spec;
		g->first = in->at;
		g->sig = in->key.k2;
		g->uid = -1;
	} else if (file_cmp(s->meta, &in->at, &g->first) < 0) {
		g->first = in->at;
		g->sig = in->key.k2;
	}
	g->count++;
	int64_t ts = in->at.ts;
	rc = ev_dist_add(&g->us, &s->pool, us, ts);
	if (!rc && us > 0)
		rc = ev_dist_add(&g->tflops, &s->pool, gflop / 1e3 / (us / 1e6), ts);
	if (!rc && us > 0 && isfinite(m.bytes))
		rc = ev_dist_add(&g->tbs, &s->pool, m.bytes / 1e12 / (us / 1e6), ts);
	/* kernel_details: the positions of the first instance with events
	 * (TraceLens's template is the first non-empty list); the others of
	 * another number of events, those without any included, are left
	 * out. */
	if (!rc && !g->k && in->nk) {
		g->nk = in->nk;
		g->k = calloc(in->nk, sizeof *g->k);
		if (!g->k)
			return EV_ERR_NOMEM;
		for (uint32_t i = 0; i < in->nk; i++) {
			g->k[i].name = in->kname[i];
			g->k[i].stream = in->kstream[i];
		}
	}
	if (in->at.uid < 0)
		g->no_uid++;
	else if (g->uid < 0 || in->at.uid < g->uid)
		g->uid = in->at.uid;
	if (!in->nk)
		g->empty++;
	if (rc || !in->nk)
		return rc;
	if (in->nk != g->nk) {
		g->skipped++;
		return rc;
	}
	for (uint32_t i = 0; !rc && i < in->nk; i++)
		rc = ev_dist_add(&g->k[i].d, &s->pool, in->kdur[i], ts);
	return rc;
}

/* Instances whose events ended a second before the stream's position are
 * closed (an op's kernels run together), all at the end. */
#define INST_WINDOW_NS 1000000000LL
#define INST_MAX 65536

static int sweep(ev_stats *s, int all)
{
	struct perf *p = s->state;
	size_t w = 0;
	int rc = EV_OK;
	for (size_t i = 0; i < p->n; i++) {
		struct pinst *in = &p->inst[i];
		int expired = p->now > INT64_MIN + INST_WINDOW_NS && in->end < p->now - INST_WINDOW_NS;
		if (all || expired || (p->n >= INST_MAX && i < p->n / 2)) {
			rc = rc ? rc : inst_close(s, in);
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
static int kind_of(ev_stats *s, uint64_t sig, unsigned *kd)
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

/* Forward ops of a backward sheet are kept until their backward op comes
 * (the whole forward pass), at most FW_MAX: past that the oldest half
 * goes, counted. */
#define FW_MAX 65536

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

/* Pending ops are kept as long as launchers (a minute after their op
 * ended), at most PEND_MAX: past that the oldest half is closed, counted
 * (a GPU event of theirs coming later makes a second instance). */
#define PEND_MAX 262144

/* Pending ops no event joined are instances without kernel time (they
 * launched nothing, or the trace left their events unlinked), all at the
 * end; those an event joined are dropped. */
static int pend_prune(ev_stats *s, int all)
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
			rc = rc ? rc : inst_close(s, &in);
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
		if (p->npd >= 4096 && (rc = pend_prune(s, 0)) != EV_OK)
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
static int range_rec(ev_stats *s, const struct ev_rec *r)
{
	struct perf *p = s->state;
	unsigned kd = 1;
	int rc;
	if (r->sig && (rc = kind_of(s, r->sig, &kd)) != EV_OK)
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
static int inst_add(ev_stats *s, const struct ev_rec *r, uint64_t id, uint64_t sig, uint64_t thread, int64_t uid)
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
			if (p->n > 4096 && (rc = sweep(s, 0)) != EV_OK)
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

static int perf_rec(ev_stats *s, const struct ev_rec *r)
{
	struct perf *p = s->state;
	if (r->type == EV_RANGE && r->op == EV_RG_CPU_OP)
		return range_rec(s, r);
	if (!is_gpu(r) || !r->sig || (r->flags & EV_F_UNLINKED) || class_of(s, r) == EV_KC_COMM)
		return EV_OK;
	unsigned kd;
	int rc;
	if ((rc = kind_of(s, r->sig, &kd)) != EV_OK)
		return rc;
	if (kd == 3 && !p->unmodelled++) {
		const char *sig = str_of(s, r->sig);
		snprintf(p->unmodelled_op, sizeof p->unmodelled_op, "%.*s", (int)opsum_name_len(sig), sig);
	}
	uint64_t *li = r->step ? ev_map_get(&p->laidx, opsum_op_key(r->rank, r->src, r->step)) : NULL;
	const struct launcher *l = li ? &p->la[*li - 1] : NULL;
	if (l && (l->rank != r->rank || l->src != r->src || l->id != r->step))
		l = NULL;
	if (!l && (kd != 2 || p->cat->bwd))
		return EV_OK;
	s->n.selected++;
	p->now = r->ts;
	if (!l)
		return inst_add(s, r, r->step ? r->step : ((uint64_t)1 << 40) + r->id, r->sig, 0, -1);
	/* Copied: adding may prune the launchers. */
	struct launcher lc = *l;
	for (uint32_t i = 0; !rc && i < lc.n; i++)
		rc = inst_add(s, r, lc.a[i].id, lc.a[i].sig, lc.a[i].thread, lc.a[i].uid);
	return rc;
}

/* Whether group g has its UID_first: every instance's op's UID known. */
static int uid_known(const struct pgroup *g)
{
	return g->uid >= 0 && !g->no_uid;
}

static int perf_finish(ev_stats *s)
{
	struct perf *p = s->state;
	int rc = sweep(s, 1);
	if (!rc)
		rc = pend_prune(s, 1);
	for (size_t i = 0; i < s->g.keys.len; i++) {
		const struct pgroup *g = GROUP_VAL(&s->g, i);
		p->any_uid |= g->uid >= 0;
		p->no_uid += !uid_known(g);
	}
	return rc;
}

static void perf_free(ev_stats *s)
{
	struct perf *p = s->state;
	for (size_t i = 0; i < s->g.keys.len; i++) {
		struct pgroup *g = GROUP_VAL(&s->g, i);
		ev_dist_free(&g->us);
		ev_dist_free(&g->tbs);
		ev_dist_free(&g->tflops);
		for (uint32_t j = 0; g->k && j < g->nk; j++)
			ev_dist_free(&g->k[j].d);
		free(g->k);
		free(g->pvals);
	}
	free(p->inst);
	free(p->th);
	free(p->la);
	free(p->pd);
	ev_map_free(&p->pdidx);
	ev_map_free(&p->idx);
	ev_map_free(&p->sigcat);
	ev_map_free(&p->laidx);
	fb_free(&p->bwd.fb);
	free(p->bwd.fw);
	ev_map_free(&p->bwd.fwidx);
}

/* ---- numpy's sums, for the kernel_details text to be numpy's ---- */

/* np.add.reduce of a float64 array: pairwise in blocks of 8 up to 128. */
static double np_sum(const double *a, size_t n)
{
	if (n < 8) {
		double r = 0.;
		for (size_t i = 0; i < n; i++)
			r += a[i];
		return r;
	}
	if (n <= 128) {
		double r[8];
		size_t i;
		for (i = 0; i < 8; i++)
			r[i] = a[i];
		for (i = 8; i < n - n % 8; i += 8)
			for (size_t j = 0; j < 8; j++)
				r[j] += a[i + j];
		double res = ((r[0] + r[1]) + (r[2] + r[3])) + ((r[4] + r[5]) + (r[6] + r[7]));
		for (; i < n; i++)
			res += a[i];
		return res;
	}
	size_t n2 = n / 2;
	n2 -= n2 % 8;
	return np_sum(a, n2) + np_sum(a + n2, n - n2);
}

static int cmp_f64(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

struct kstats { const char *name; uint32_t stream; uint64_t n; double sum, mean, median, std, min, max; };

/* A kernel position's numbers as numpy computes them from its samples
 * (the distribution's stored ones; a sketched one gives its own). */
static int kpos_stats(struct ev_dist *d, struct kstats *k, uint64_t *sketched)
{
	k->n = d->n;
	k->min = d->min;
	k->max = d->max;
	if (d->sketch || d->len != d->n) {
		++*sketched;
		k->sum = d->sum;
		k->mean = d->mean;
		k->median = ev_dist_quantile(d, 0.5);
		k->std = d->n > 1 ? ev_dist_std(d) * sqrt((double)(d->n - 1) / (double)d->n) : 0;
		return EV_OK;
	}
	size_t n = d->len;
	double *v = malloc((n ? n : 1) * sizeof *v);
	if (!v)
		return EV_ERR_NOMEM;
	k->sum = np_sum(d->v, n);
	k->mean = k->sum / (double)n;
	for (size_t i = 0; i < n; i++)
		v[i] = (d->v[i] - k->mean) * (d->v[i] - k->mean);
	k->std = sqrt(np_sum(v, n) / (double)n);
	memcpy(v, d->v, n * sizeof *v);
	qsort(v, n, sizeof *v, cmp_f64);
	k->median = n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2.0;
	free(v);
	return EV_OK;
}

static int cmp_kstats(const void *pa, const void *pb)
{
	const struct kstats *a = pa, *b = pb;
	if (a->sum != b->sum)
		return a->sum < b->sum ? -1 : 1;
	return strcmp(a->name, b->name);
}

static void np_float(struct pytext *t, const char *key, double v)
{
	pyt_puts(t, key);
	pyt_puts(t, "np.float64(");
	py_float(t, v);
	pyt_puts(t, ")");
}

int perf_kernel_details(ev_stats *s, struct perf_kpos *pos, uint32_t nk, uint64_t *sketched, struct pytext *full,
                        struct pytext *trunc)
{
	struct kstats *k = calloc(nk ? nk : 1, sizeof *k);
	int rc = k ? EV_OK : EV_ERR_NOMEM;
	for (uint32_t i = 0; !rc && i < nk; i++) {
		k[i].name = str_of(s, pos[i].name);
		k[i].stream = pos[i].stream;
		rc = kpos_stats(&pos[i].d, &k[i], sketched);
	}
	if (rc) {
		free(k);
		return rc;
	}
	qsort(k, nk, sizeof *k, cmp_kstats);
	full->n = trunc->n = 0;
	pyt_puts(full, "[");
	pyt_puts(trunc, "[");
	for (uint32_t i = 0; i < nk; i++) {
		char b[64];
		const char *sep = i ? ", " : "";
		pyt_puts(full, sep);
		pyt_puts(trunc, sep);
		pyt_puts(full, "{'name': ");
		pyt_puts(trunc, "{'name': ");
		/* TraceLens's truncated name: 64 bytes and "...". */
		const char *nm = k[i].name;
		size_t len = strlen(nm);
		char cut[64 + 4];
		py_text(full, nm, len);
		if (len > 64) {
			memcpy(cut, nm, 64);
			memcpy(cut + 64, "...", 4);
			py_text(trunc, cut, 67);
		} else {
			py_text(trunc, nm, len);
		}
		snprintf(b, sizeof b, ", 'stream': %u", k[i].stream);
		pyt_puts(full, b);
		pyt_puts(trunc, b);
		snprintf(b, sizeof b, ", 'count': %llu", (unsigned long long)k[i].n);
		pyt_puts(full, b);
		np_float(full, ", 'total_duration_us': ", k[i].sum);
		np_float(full, ", 'mean_duration_us': ", k[i].mean);
		np_float(full, ", 'median_duration_us': ", k[i].median);
		np_float(full, ", 'std_dev_duration_us': ", k[i].std);
		np_float(full, ", 'min_duration_us': ", k[i].min);
		np_float(full, ", 'max_duration_us': ", k[i].max);
		np_float(trunc, ", 'mean_duration_us': ", rint(k[i].mean * 100) / 100);
		pyt_puts(full, "}");
		pyt_puts(trunc, "}");
	}
	pyt_puts(full, "]");
	pyt_puts(trunc, "]");
	free(k);
	return rc ? rc : full->oom || trunc->oom ? EV_ERR_NOMEM : EV_OK;
}

/* ---- the table ---- */

static int cmp_pcol(const void *pa, const void *pb, void *ctx)
{
	const struct ev_stats *s = ctx;
	const struct pcol *a = pa, *b = pb;
	int c = file_cmp(s->meta, &a->at, &b->at);
	if (c)
		return c;
	return a->pos < b->pos ? -1 : a->pos > b->pos;
}

static int cmp_rows(const void *pa, const void *pb, void *ctx)
{
	const struct ev_stats *s = ctx;
	size_t a = *(const size_t *)pa, b = *(const size_t *)pb;
	const struct gkey *ka = GROUP_KEY(&s->g, a), *kb = GROUP_KEY(&s->g, b);
	const struct pgroup *ga = GROUP_VAL(&s->g, a), *gb = GROUP_VAL(&s->g, b);
	if (ka->sg != kb->sg)
		return ka->sg < kb->sg ? -1 : 1;
	if (ka->rank != kb->rank)
		return ka->rank < kb->rank ? -1 : 1;
	if (ga->us.sum != gb->us.sum)
		return ga->us.sum > gb->us.sum ? -1 : 1;
	/* TraceLens breaks ties by UID_first. */
	if (uid_known(ga) && uid_known(gb))
		return ga->uid < gb->uid ? -1 : ga->uid > gb->uid;
	return file_cmp(s->meta, &ga->first, &gb->first);
}

static double stat_or_nan(struct ev_dist *d, int which)
{
	if (d->n == 0)
		return NAN;
	switch (which) {
	case 0: return d->mean;
	case 1: return ev_dist_quantile(d, 0.5);
	case 2: return d->n > 1 ? ev_dist_std(d) : NAN;
	case 3: return d->min;
	default: return d->max;
	}
}

static int perf_rows(ev_stats *s, struct ev_rowset *rs)
{
	struct perf *p = s->state;
	struct ev_colspec keys[EV_STATS_MAX_BY + 2 * PERF_MAXP + 12];
	size_t nk = 0;
	by_colspecs(&s->o, keys, &nk);
	size_t key0 = nk;
	keys[nk++] = (struct ev_colspec){ "name", 0, 0 };
	qsort_r(p->cols, p->ncols, sizeof p->cols[0], cmp_pcol, s);
	for (size_t i = 0; i < p->ncols; i++) {
		snprintf(p->colname[i], sizeof p->colname[i], "param: %s", p->cols[i].name);
		keys[nk++] = (struct ev_colspec){ p->colname[i], 0, 0 };
	}
	static const char *const tail[] = { "Compute Spec", "kernel_details__summarize_kernel_stats", "trunc_kernel_details",
		                             "Input Dims_first", "Input type_first", "Input Strides_first",
		                             "Concrete Inputs_first" };
	for (size_t i = 0; i < 7; i++)
		keys[nk++] = (struct ev_colspec){ tail[i], 0, 0 };
	/* The first instance's process and thread, when the stream names
	 * threads (#thread lines). */
	int named = ev_meta_nthread(s->meta) > 0;
	static const char *const namecols[] = { "process_name", "process_label", "thread_name" };
	for (size_t i = 0; named && i < 3; i++)
		keys[nk++] = (struct ev_colspec){ namecols[i], 0, 0 };
	static const struct ev_colspec vals[] = {
		{ "GFLOPS_first", 0, EV_DIR_NONE }, { "Data Moved (MB)_first", 0, EV_DIR_NONE },
		{ "FLOPS/Byte_first", 0, EV_DIR_NONE }, { "TB/s_mean", 0, EV_DIR_HIGHER }, { "TB/s_median", 0, EV_DIR_HIGHER },
		{ "TB/s_std", 0, EV_DIR_NONE }, { "TB/s_min", 0, EV_DIR_HIGHER }, { "TB/s_max", 0, EV_DIR_HIGHER },
		{ "TFLOPS/s_mean", 0, EV_DIR_HIGHER }, { "TFLOPS/s_median", 0, EV_DIR_HIGHER },
		{ "TFLOPS/s_std", 0, EV_DIR_NONE }, { "TFLOPS/s_min", 0, EV_DIR_HIGHER },
		{ "TFLOPS/s_max", 0, EV_DIR_HIGHER }, { "Kernel Time (µs)_mean", 0, EV_DIR_LOWER },
		{ "Kernel Time (µs)_median", 0, EV_DIR_LOWER }, { "Kernel Time (µs)_std", 0, EV_DIR_NONE },
		{ "Kernel Time (µs)_min", 0, EV_DIR_LOWER }, { "Kernel Time (µs)_max", 0, EV_DIR_LOWER },
		{ "Kernel Time (µs)_sum", 0, EV_DIR_LOWER }, { "name_count", 0, EV_DIR_NONE },
		{ "UID_first", 0, EV_DIR_NONE },
	};
	/* UID_first only when the stream carries TraceLens's UIDs. */
	int rc = ev_rowset_init(rs, keys, nk, vals, sizeof vals / sizeof vals[0] - !p->any_uid);
	size_t m = s->g.keys.len;
	size_t *ord = rc ? NULL : malloc((m + 1) * sizeof *ord);
	if (!rc && !ord)
		rc = EV_ERR_NOMEM;
	for (size_t i = 0; !rc && i < m; i++)
		ord[i] = i;
	if (!rc)
		qsort_r(ord, m, sizeof *ord, cmp_rows, s);
	struct pytext t = { 0 }, t2 = { 0 };
	for (size_t i = 0; !rc && i < m; i++) {
		const struct gkey *gk = GROUP_KEY(&s->g, ord[i]);
		struct pgroup *g = GROUP_VAL(&s->g, ord[i]);
		/* The first instance in the trace file (file_cmp): the least
		 * UID, when known. */
		int uk = uid_known(g);
		const char *sig = str_of(s, g->sig);
		struct ev_row *r;
		size_t n;
		if ((rc = group_row(s, rs, gk, &r, &n)) != EV_OK)
			break;
		t.n = 0;
		pyt_put(&t, sig, opsum_name_len(sig));
		rc = t.oom ? EV_ERR_NOMEM : ev_row_key(r, key0, pyt_str(&t));
		/* Each parameter column: the group's value, "nan" (pandas' str
		 * of a missing one) when its model has none. */
		for (size_t c = 0; !rc && c < p->ncols; c++) {
			const char *v = "nan";
			size_t vl = 3;
			const char *at = g->pvals;
			for (size_t j = 0; j < g->np; j++) {
				size_t l = strcspn(at, "\x1f");
				if (!strcmp(g->pname[j], p->cols[c].name)) {
					v = at;
					vl = l;
				}
				at += l + (at[l] != '\0');
			}
			t.n = 0;
			pyt_put(&t, v, vl);
			rc = t.oom ? EV_ERR_NOMEM : ev_row_key(r, key0 + 1 + c, pyt_str(&t));
		}
		size_t kc = key0 + 1 + p->ncols;
		rc = rc ? rc : ev_row_key(r, kc, g->spec);
		rc = rc ? rc : perf_kernel_details(s, g->k, g->nk, &p->sketched, &t, &t2);
		rc = rc ? rc : ev_row_key(r, kc + 1, g->nk ? pyt_str(&t) : "[]");
		rc = rc ? rc : ev_row_key(r, kc + 2, g->nk ? pyt_str(&t2) : NULL);
		/* The *_first columns keep the JSON's lists (not tuples). */
		static const char *const fields[] = { "dims", "types", "strides", "concrete" };
		for (size_t f = 0; !rc && f < 4; f++)
			if ((rc = opsum_sig_field(sig, fields[f], 0, &t)) == EV_OK)
				rc = ev_row_key(r, kc + 3 + f, pyt_str(&t));
		const char *names[3];
		tl_names(s->meta, g->first.rank, g->first.thread, names);
		for (size_t f = 0; !rc && named && f < 3; f++)
			rc = ev_row_key(r, kc + 7 + f, names[f]);
		double *v = r->val;
		v[0] = g->gflop;
		v[1] = g->mbytes;
		v[2] = g->fpb;
		for (int j = 0; j < 5; j++) {
			v[3 + j] = stat_or_nan(&g->tbs, j);
			v[8 + j] = stat_or_nan(&g->tflops, j);
			v[13 + j] = stat_or_nan(&g->us, j);
		}
		v[18] = g->us.sum;
		v[19] = (double)g->count;
		if (p->any_uid)
			v[20] = uk ? (double)g->uid : NAN;
		(void)n;
	}
	free(t.p);
	free(t2.p);
	free(ord);
	return rc;
}

static int perf_warning(ev_stats *s, unsigned i, char *buf, size_t n)
{
	struct perf *p = s->state;
	uint64_t skipped = 0;
	for (size_t j = 0; j < s->g.keys.len; j++) {
		const struct pgroup *g = GROUP_VAL(&s->g, j);
		skipped += g->skipped + (g->nk ? g->empty : 0);
	}
	const char *sheet = p->cat->sheet;
	unsigned k = 0;
	if (p->unmodelled && i == k++)
		snprintf(buf, n, "%llu GPU event(s) of ops TraceLens puts on its %s sheet that evkit has no model for "
		         "(first: %s): left out", (unsigned long long)p->unmodelled, sheet, p->unmodelled_op);
	else if (p->failed && i == k++)
		snprintf(buf, n, "%llu %s op instance(s) whose arguments the model cannot read (first: %s): left out, "
		         "as TraceLens leaves them", (unsigned long long)p->failed, sheet, p->failed_op);
	else if (skipped && i == k++)
		snprintf(buf, n, "%llu op instance(s) with another number of GPU events (none included) than their "
		         "group's first with some: not in kernel_details (as TraceLens)", (unsigned long long)skipped);
	else if (p->over && i == k++)
		snprintf(buf, n, "%llu op instance(s) with more than %d GPU events: the others not in kernel_details "
		         "nor in the transpose parameter", (unsigned long long)p->over, PERF_MAXK);
	else if (p->early && i == k++)
		snprintf(buf, n, "%llu %s op(s) closed without kernel time, past %d waiting for their GPU events: "
		         "one whose events came later counts as two instances", (unsigned long long)p->early, sheet, PEND_MAX);
	else if (p->evicted && i == k++)
		snprintf(buf, n, "%llu op(s) under %s ops left the op-tree window before their GPU events came: "
		         "those events count only for the op that launched them", (unsigned long long)p->evicted, sheet);
	else if (p->deep && i == k++)
		snprintf(buf, n, "%llu %s op(s) nested more than %d deep in others: their subtree's GPU events count "
		         "only for the op that launched them", (unsigned long long)p->deep, sheet, PERF_DEPTH);
	else if (p->bwd.unlinked_ops && i == k++)
		snprintf(buf, n, "%llu op(s) of the %s sheet in sources without forward-backward links (#src without "
		         "flow_links=...fwdbwd): their backward is not known; convert with kineto2ev --flow-links",
		         (unsigned long long)p->bwd.unlinked_ops, sheet);
	else if (p->bwd.fw_evicted && i == k++)
		snprintf(buf, n, "%llu forward op(s) of the %s sheet left the window of the last %d before their "
		         "backward op came: not in the sheet", (unsigned long long)p->bwd.fw_evicted, sheet, FW_MAX);
	else if (p->bwd.fb.deep && i == k++)
		snprintf(buf, n, "%llu autograd::engine::evaluate_function op(s) nested more than %d deep: the ops "
		         "linked inside them are taken for the backward op", (unsigned long long)p->bwd.fb.deep, FB_DEPTH);
	else if (p->cat->note && s->g.keys.len && i == k++)
		snprintf(buf, n, "%s", p->cat->note);
	else if (p->sketched && i == k++)
		snprintf(buf, n, "%llu kernel_details position(s) past the exact-sample budget: their sum, mean, "
		         "median and std are approximate", (unsigned long long)p->sketched);
	else if (p->any_uid && p->no_uid && i == k++)
		snprintf(buf, n, "%llu row(s) with an op instance whose op's UID (TraceLens's event index) is not "
		         "known (its cpu_op range not in the stream or past the op window): UID_first left empty",
		         (unsigned long long)p->no_uid);
	else
		return 0;
	return 1;
}

static int perf_explain(const struct ev_stats_opts *o, const struct ev_stats_counts *c, char *buf, size_t n)
{
	const char *sheet = o->table < sizeof categories / sizeof categories[0] ? categories[o->table]->sheet : "?";
	if (!c->gpu)
		return 0;
	snprintf(buf, n, "no GPU event launched by an op of TraceLens's %s sheet among %llu: empty table", sheet,
	         (unsigned long long)c->gpu);
	return 1;
}

static const struct ev_stats_subtable perf_tables[] = {
#define PERF_TABLE(nm, sheet) { #nm, #sheet, NULL },
	PERF_CATEGORIES(PERF_TABLE)
#undef PERF_TABLE
	{ NULL, NULL, NULL },
};

static const char *const perf_options[] = { "table", "tracelens-float", "exact-limit", NULL };

const struct ev_stats_analysis ev_stats_analysis_perf = {
	.name = "perf",
	.sheet = "GEMM",
	.help = "TraceLens's perf-model sheets (--table gemm, sdpa_fwd,\n"
	        "conv_fwd, conv_bwd, binary, unary, norm, reduce, reduce_bwd:\n"
	        "its GEMM, SDPA_fwd, CONV_fwd, CONV_bwd, BinaryElementwise,\n"
	        "UnaryElementwise, Normalization, Reduce_fwd, Reduce_bwd sheets): per op\n"
	        "name and model parameters, GFLOPS, data moved, TB/s,\n"
	        "TFLOPS/s, kernel time and per-kernel stats",
	.options = perf_options,
	.tables = perf_tables,
	.state_size = sizeof(struct perf),
	.group_size = sizeof(struct pgroup),
	.init = perf_init,
	.rec = perf_rec,
	.finish = perf_finish,
	.rows = perf_rows,
	.free = perf_free,
	.explain = perf_explain,
	.warning = perf_warning,
};
