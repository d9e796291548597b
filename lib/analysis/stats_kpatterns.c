/* SPDX-License-Identifier: MIT */
/*
 * stats_kpatterns.c - HTA's frequent CUDA kernel sequences
 * (get_frequent_cuda_kernel_sequences): for the shallowest CPU ops whose
 * name contains --operator, the op's name followed by the GPU events its
 * subtree launched, in start order, joined by '|'; per distinct sequence
 * the number of ops, the sum of their GPU events' durations and of the
 * ops' own durations (HTA's whole microseconds), most frequent first.
 *
 * HTA's rules, as its CallGraph makes them:
 * - A thread's CPU events nest by HTA's event order: at one time closes
 *   come before opens when both events last, a zero-length event opens
 *   inside what closes then; opens of one time longest first.  A close
 *   pops whatever is on top, so only how many closes precede an open
 *   matters.  depth 0 is the top level.
 * - GPU events hang under the runtime call with their correlation id, one
 *   level deeper, also when the call comes after the GPU event in the
 *   stream (one time, the GPU stream's id lower than the thread's).
 * - The backward thread's top-level ops hang under the main thread's
 *   ProfilerStep that encloses them (the thread that has ProfilerStep
 *   being main, a thread with an autograd:: op backward).
 * - Candidates are every event whose name contains the text, GPU events
 *   included; the shallowest depth of any candidate is the one reported,
 *   and of its ops those with at least --min-pattern-len GPU events.
 * - A sequence is counted whole, not as sliding n-grams.
 * - HTA's last-step filter: with two or more ProfilerStep names, ops that
 *   start in the last step are left out (hta_rank.h).
 *
 * Streaming: an op is held from its start until its thread has closed it
 * and KP_WINDOW runtime calls of its rank have passed since its last
 * launch (a launch whose GPU event has not come by then has none); ops
 * deeper than the shallowest candidate seen are not held.  Memory grows
 * with open ops and distinct sequences; the kernels held in all are
 * bounded by KP_MAX_IDS, past which ops are left out and the tool says so.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/hta_rank.h"
#include "analysis/stats_impl.h"

#define KP_WINDOW 65536u
#define KP_MAX_IDS (1u << 24)
#define KP_SCAN 1024u
#define KP_DEFAULT_LEN 3u
#define KP_NODEPTH INT32_MAX
#define KP_MAX_PEND 65536u

struct kern { uint64_t name; int64_t dur_us; };
/* Where a GPU event of an instance starts (--annotate's marks). */
struct kat { int64_t ts; uint32_t stream; uint16_t src; };

/* An op instance being collected. */
struct inst {
	uint64_t name, last_call;
	int64_t ts_us, dur_us, ts_ns;
	int32_t depth, parent;
	uint32_t gen, parent_gen, tid;
	uint16_t src;
	int live, closed;
	struct ev_vec k;  /* struct kern */
	struct ev_vec at; /* struct kat, one a kern, with --annotate */
};

/* A frame of a thread's stack: the op, and the innermost instance at or
 * below it (cand, -1 none). */
struct frame { int64_t ts_us, end_us; int32_t depth, own, cand; uint32_t cand_gen, own_gen; int step; };
struct closing { int64_t t; int nz; };
struct opening { uint64_t name, seq; int64_t ts_us, end_us, ts_ns; uint32_t corr, tid; uint16_t src; int api; };

struct thread {
	uint32_t tid;
	int main, autograd, bwd_annot;
	struct ev_vec stack;  /* struct frame */
	struct ev_vec heap;   /* struct closing, min-heap on (t, nonzero first) */
	struct ev_vec buf;    /* struct opening of one microsecond */
	int64_t buf_us;
};

/* A call's place in the ring: its correlation, the instance it counts for. */
struct call { uint32_t corr; int32_t cand; uint32_t gen; int32_t depth; int64_t ts_us; };

struct prank {
	struct hta_rank h;
	struct ev_vec threads; /* struct thread */
	struct ev_map tidx;
	int32_t main_thread;   /* index + 1 */
	struct call *ring;     /* KP_WINDOW */
	uint64_t calls, seq, scanned;
	struct ev_map cidx;    /* corr + 1 -> position + 1 */
	int32_t min_c, min_p;  /* shallowest candidate: kept, in the latest step */
	int unlinked_match;
	struct ev_vec insts;   /* struct inst */
	struct ev_vec freel;   /* int32_t */
	struct ev_vec pend;    /* struct ev_rec: GPU events of this ns whose call has not come */
	uint32_t commits;      /* commit()s so far */
	uint32_t marked;       /* instances sent to the annotation */
};

/* A distinct sequence of a rank: counts kept [0] and in the latest step [1]. */
struct pat {
	uint32_t rank_ix;
	int32_t depth;
	uint64_t name, off, len, count[2];
	int64_t gpu[2], cpu[2];
};

struct kp {
	struct ev_vec ranks; /* struct prank */
	struct ev_map ridx;
	struct ev_vec pats;  /* struct pat */
	struct ev_map pidx;  /* hash -> index + 1 (chained by probing the hash + i) */
	struct ev_vec ids;   /* uint64_t: the patterns' kernel names */
	uint64_t held, dropped, nesting, link_other;
	/* --annotate: the instances' marks, sorted on disk until the
	 * patterns' places are known; their strings; each pattern's place
	 * among its rank's first K (0 none) */
	ev_sorter *sort;
	ev_writer *w;
	ev_strtab *ast;
	uint32_t *place;
	int werr;
};

#define KP_ANNOT_TOP 5u              /* HTA's top_k */
#define KP_ANNOT_BUDGET (64u << 20)  /* the sorter's memory before runs on disk */

static const char *op_text(const ev_stats *s)
{
	return s->o.kp_operator ? s->o.kp_operator : "";
}

static int matches(const ev_stats *s, uint64_t name)
{
	return *op_text(s) && strstr(str_of(s, name), op_text(s)) != NULL;
}

static int kp_init(ev_stats *s)
{
	struct kp *k = s->state;
	ev_vec_init(&k->ranks, sizeof(struct prank));
	ev_map_init(&k->ridx);
	ev_vec_init(&k->pats, sizeof(struct pat));
	ev_map_init(&k->pidx);
	ev_vec_init(&k->ids, sizeof(uint64_t));
	if (!s->o.annotate)
		return EV_OK;
	/* opened now, so that an unwritable FILE fails before the input is read */
	s->errpath = s->o.annotate;
	if (!(k->ast = ev_strtab_new()))
		return EV_ERR_NOMEM;
	int rc = ev_writer_open(&k->w, s->o.annotate, k->ast);
	rc = rc ? rc : ev_sorter_open(&k->sort, KP_ANNOT_BUDGET, NULL);
	if (!rc)
		s->errpath = NULL;
	return rc;
}

static struct thread *thread_of(struct prank *p, uint32_t tid)
{
	uint64_t *at = ev_map_get(&p->tidx, (uint64_t)tid + 1);
	if (at)
		return (struct thread *)p->threads.data + (*at - 1);
	struct thread *t = ev_vec_push(&p->threads);
	if (!t || ev_map_put(&p->tidx, (uint64_t)tid + 1, p->threads.len) != EV_OK)
		return NULL;
	t->tid = tid;
	ev_vec_init(&t->stack, sizeof(struct frame));
	ev_vec_init(&t->heap, sizeof(struct closing));
	ev_vec_init(&t->buf, sizeof(struct opening));
	return t;
}

static int heap_less(const struct closing *a, const struct closing *b)
{
	return a->t < b->t || (a->t == b->t && a->nz > b->nz);
}

static int heap_push(struct ev_vec *h, struct closing c)
{
	struct closing *slot = ev_vec_push(h);
	if (!slot)
		return EV_ERR_NOMEM;
	struct closing *a = h->data;
	size_t i = h->len - 1;
	while (i && heap_less(&c, &a[(i - 1) / 2])) {
		a[i] = a[(i - 1) / 2];
		i = (i - 1) / 2;
	}
	a[i] = c;
	return EV_OK;
}

static void heap_pop(struct ev_vec *h)
{
	struct closing *a = h->data, last = a[--h->len];
	size_t i = 0, n = h->len;
	for (;;) {
		size_t c = 2 * i + 1;
		if (c >= n)
			break;
		if (c + 1 < n && heap_less(&a[c + 1], &a[c]))
			c++;
		if (!heap_less(&a[c], &last))
			break;
		a[i] = a[c];
		i = c;
	}
	if (n)
		a[i] = last;
}

static struct inst *inst_at(struct prank *p, int32_t i, uint32_t gen)
{
	if (i < 0)
		return NULL;
	struct inst *in = (struct inst *)p->insts.data + i;
	return in->live && in->gen == gen ? in : NULL;
}

/* A close pops the top of the stack, whichever op it is (HTA's stack). */
static void pop_frame(struct prank *p, struct thread *t)
{
	if (!t->stack.len)
		return;
	struct frame *f = (struct frame *)t->stack.data + --t->stack.len;
	struct inst *in = inst_at(p, f->own, f->own_gen);
	if (in)
		in->closed = 1;
}

/* Closes that come before an open at us (of a lasting event when nz). */
static void close_until(struct prank *p, struct thread *t, int64_t us, int nz)
{
	while (t->heap.len) {
		const struct closing *c = t->heap.data;
		if (!(c->t < us || (c->t == us && nz && c->nz)))
			break;
		heap_pop(&t->heap);
		pop_frame(p, t);
	}
}

static int pat_add(ev_stats *s, struct prank *p, const struct inst *in, size_t *pix, int *partp)
{
	struct kp *k = s->state;
	const struct kern *kv = in->k.data;
	uint32_t rix = (uint32_t)(p - (struct prank *)k->ranks.data);
	uint64_t h = ev_hash64(&in->name, sizeof in->name) ^ ((uint64_t)rix << 40) ^ (uint64_t)(uint32_t)in->depth;
	for (size_t i = 0; i < in->k.len; i++)
		h = (h ^ kv[i].name) * 0x100000001b3ull;
	int64_t gpu = 0;
	for (size_t i = 0; i < in->k.len; i++)
		gpu += kv[i].dur_us;
	int part = hta_rank_filtered(&p->h) && in->ts_us >= p->h.step_us;
	struct pat *pt = NULL;
	for (uint64_t probe = 0;; probe++) {
		uint64_t key = (h + probe) | 1;
		uint64_t *at = ev_map_get(&k->pidx, key);
		if (!at) {
			size_t off = k->ids.len;
			for (size_t i = 0; i < in->k.len; i++) {
				uint64_t *id = ev_vec_push(&k->ids);
				if (!id)
					return EV_ERR_NOMEM;
				*id = kv[i].name;
			}
			pt = ev_vec_push(&k->pats);
			if (!pt || ev_map_put(&k->pidx, key, k->pats.len) != EV_OK)
				return EV_ERR_NOMEM;
			*pt = (struct pat){ .rank_ix = rix, .depth = in->depth, .name = in->name, .off = off, .len = in->k.len };
			break;
		}
		pt = (struct pat *)k->pats.data + (*at - 1);
		const uint64_t *ids = (const uint64_t *)k->ids.data + pt->off;
		int same = pt->rank_ix == rix && pt->depth == in->depth && pt->name == in->name && pt->len == in->k.len;
		for (size_t i = 0; same && i < in->k.len; i++)
			same = ids[i] == kv[i].name;
		if (same)
			break;
	}
	pt->count[part]++;
	pt->gpu[part] += gpu;
	pt->cpu[part] += in->dur_us;
	*pix = (size_t)(pt - (struct pat *)k->pats.data);
	*partp = part;
	return EV_OK;
}

/* The marks of an instance counted for pattern pix, into the sorter until
 * the patterns' places are known: a mark at the op's start on its thread,
 * then one at each GPU event's start on its stream; id the instance, aux
 * the mark's place in it, bytes its GPU events.  Held in comm (pattern +
 * 1), channel (counted in the latest step: it counts if a commit follows)
 * and step (the rank's commits then) until written. */
static int annot_add(ev_stats *s, struct prank *p, const struct inst *in, size_t pix, int part)
{
	struct kp *k = s->state;
	const struct kat *a = in->at.data;
	const struct kern *kn = in->k.data;
	uint32_t id = ++p->marked;
	for (size_t i = 0; i <= in->at.len; i++) {
		struct ev_rec r;
		memset(&r, 0, sizeof r);
		r.type = EV_MARK;
		r.op = i ? EV_RG_GPU_USER : EV_RG_USER;
		r.flags = EV_F_SYNTH;
		r.rank = p->h.rank;
		r.stream = i ? a[i - 1].stream : in->tid;
		r.src = i ? a[i - 1].src : in->src;
		r.ts = i ? a[i - 1].ts : in->ts_ns;
		r.sig = i ? kn[i - 1].name : in->name;
		r.peer = -1;
		r.id = id;
		r.aux = (uint32_t)i;
		r.bytes = in->at.len;
		r.comm = pix + 1;
		r.channel = (uint16_t)part;
		r.step = p->commits;
		int rc = ev_sorter_add(k->sort, &r);
		if (rc)
			return rc;
	}
	return EV_OK;
}

/* The instance is complete: into its sequence's counts, its slot freed. */
static int finalize(ev_stats *s, struct prank *p, int32_t i)
{
	struct kp *k = s->state;
	struct inst *in = (struct inst *)p->insts.data + i;
	uint32_t min_len = s->o.kp_min_len ? s->o.kp_min_len : KP_DEFAULT_LEN;
	int rc = EV_OK;
	if (in->k.len >= min_len && (in->depth <= p->min_c || in->depth <= p->min_p)) {
		size_t pix;
		int part;
		rc = pat_add(s, p, in, &pix, &part);
		if (!rc && k->sort)
			rc = annot_add(s, p, in, pix, part);
	}
	k->held -= in->k.len;
	in->k.len = 0;
	in->at.len = 0;
	in->live = 0;
	in->gen++;
	int32_t *f = ev_vec_push(&p->freel);
	if (!f)
		return EV_ERR_NOMEM;
	*f = i;
	return rc;
}

/* Instances closed on their thread whose launches are past the window. */
static int sweep(ev_stats *s, struct prank *p, int all)
{
	int rc = EV_OK;
	for (size_t i = 0; !rc && i < p->insts.len; i++) {
		struct inst *in = (struct inst *)p->insts.data + i;
		if (in->live && (all || (in->closed && p->calls - in->last_call >= KP_WINDOW)))
			rc = finalize(s, p, (int32_t)i);
	}
	return rc;
}

/* The latest step's counts are kept: a later step has begun (or the
 * filter does not apply). */
static void commit(struct kp *k, struct prank *p)
{
	uint32_t rix = (uint32_t)(p - (struct prank *)k->ranks.data);
	for (size_t i = 0; i < k->pats.len; i++) {
		struct pat *pt = (struct pat *)k->pats.data + i;
		if (pt->rank_ix != rix)
			continue;
		pt->count[0] += pt->count[1];
		pt->gpu[0] += pt->gpu[1];
		pt->cpu[0] += pt->cpu[1];
		pt->count[1] = 0;
		pt->gpu[1] = pt->cpu[1] = 0;
	}
	if (p->min_p < p->min_c)
		p->min_c = p->min_p;
	p->min_p = KP_NODEPTH;
	p->commits++;
}

static void see_candidate(struct prank *p, int32_t depth, int64_t ts_us)
{
	int32_t *m = hta_rank_filtered(&p->h) && ts_us >= p->h.step_us ? &p->min_p : &p->min_c;
	if (depth < *m)
		*m = depth;
}

static int new_inst(ev_stats *s, struct prank *p, const struct opening *o, int32_t depth, int32_t parent,
                    uint32_t pgen, int32_t *ix, uint32_t *gen)
{
	struct kp *k = s->state;
	struct inst *in;
	if (p->freel.len) {
		*ix = ((int32_t *)p->freel.data)[--p->freel.len];
		in = (struct inst *)p->insts.data + *ix;
	} else {
		if (!(in = ev_vec_push(&p->insts)))
			return EV_ERR_NOMEM;
		*ix = (int32_t)(p->insts.len - 1);
		ev_vec_init(&in->k, sizeof(struct kern));
		ev_vec_init(&in->at, sizeof(struct kat));
	}
	(void)k;
	in->name = o->name;
	in->ts_us = o->ts_us;
	in->ts_ns = o->ts_ns;
	in->tid = o->tid;
	in->src = o->src;
	in->dur_us = o->end_us - o->ts_us;
	in->depth = depth;
	in->parent = parent;
	in->parent_gen = pgen;
	in->last_call = p->calls;
	in->closed = 0;
	in->live = 1;
	*gen = in->gen;
	return EV_OK;
}

/* The main thread's frame that encloses o, for a top-level op of a
 * backward thread: its innermost "## backward ##", else (when the main
 * thread has had none) its ProfilerStep; NULL none. */
static const struct frame *link_parent(struct prank *p, const struct thread *t, const struct opening *o)
{
	if (!p->main_thread || t->main || !t->autograd)
		return NULL;
	const struct thread *m = (const struct thread *)p->threads.data + (p->main_thread - 1);
	for (int want = 2; want >= 1 + m->bwd_annot; want--)
		for (size_t i = m->stack.len; i-- > 0;) {
			const struct frame *f = (const struct frame *)m->stack.data + i;
			if (f->step == want && f->ts_us <= o->ts_us && o->end_us <= f->end_us)
				return f;
		}
	return NULL;
}

static int put_call(struct prank *p, uint32_t corr, int32_t cand, uint32_t gen, int32_t depth, int64_t ts_us)
{
	if (!p->ring && !(p->ring = calloc(KP_WINDOW, sizeof *p->ring)))
		return EV_ERR_NOMEM;
	p->ring[p->calls % KP_WINDOW] = (struct call){ corr, cand, gen, depth, ts_us };
	if (p->cidx.len >= 2 * KP_WINDOW + 1024) { /* drop the keys of calls gone from the ring */
		struct ev_map keep;
		ev_map_init(&keep);
		uint64_t from = p->calls >= KP_WINDOW ? p->calls - KP_WINDOW + 1 : 0;
		for (uint64_t q = from; q < p->calls; q++)
			if (ev_map_put(&keep, (uint64_t)p->ring[q % KP_WINDOW].corr + 1, q + 1) != EV_OK) {
				ev_map_free(&keep);
				return EV_ERR_NOMEM;
			}
		ev_map_free(&p->cidx);
		p->cidx = keep;
	}
	if (ev_map_put(&p->cidx, (uint64_t)corr + 1, p->calls + 1) != EV_OK)
		return EV_ERR_NOMEM;
	p->calls++;
	return EV_OK;
}

static const struct call *get_call(const struct prank *p, uint32_t corr)
{
	const uint64_t *at = corr && p->ring ? ev_map_get(&p->cidx, (uint64_t)corr + 1) : NULL;
	if (!at || *at - 1 + KP_WINDOW < p->calls)
		return NULL;
	const struct call *c = &p->ring[(*at - 1) % KP_WINDOW];
	return c->corr == corr ? c : NULL;
}

/* One CPU event opens on its thread. */
static int flush(ev_stats *s, struct prank *p, struct thread *t);

static int open_one(ev_stats *s, struct prank *p, struct thread *t, const struct opening *o)
{
	int64_t dur = o->end_us - o->ts_us;
	close_until(p, t, o->ts_us, dur != 0);
	if (dur < 0) /* HTA's close of a sub-microsecond event sorts before its open */
		pop_frame(p, t);
	struct frame f = { .ts_us = o->ts_us, .end_us = o->end_us, .own = -1, .cand = -1 };
	/* HTA hangs backward ops under "## backward ##" when the main
	 * thread has one, else under ProfilerStep */
	f.step = !strncmp(str_of(s, o->name), "ProfilerStep#", 13) ? 1 : !strncmp(str_of(s, o->name), "## backward ##", 14) ? 2 : 0;
	t->bwd_annot |= f.step == 2;
	if (t->stack.len) {
		const struct frame *top = (const struct frame *)t->stack.data + t->stack.len - 1;
		f.depth = top->depth + 1;
		f.cand = top->own >= 0 ? top->own : top->cand;
		f.cand_gen = top->own >= 0 ? top->own_gen : top->cand_gen;
	} else {
		/* the main thread's opens up to now, so that its step is there */
		struct thread *m = p->main_thread ? (struct thread *)p->threads.data + (p->main_thread - 1) : NULL;
		int rc = m && m != t && m->buf.len ? flush(s, p, m) : EV_OK;
		if (rc)
			return rc;
		const struct frame *a = link_parent(p, t, o);
		if (a) {
			f.depth = a->depth + 1;
			f.cand = a->own >= 0 ? a->own : a->cand;
			f.cand_gen = a->own >= 0 ? a->own_gen : a->cand_gen;
		}
	}
	int rc = EV_OK;
	if (matches(s, o->name)) {
		see_candidate(p, f.depth, o->ts_us);
		if (f.depth <= p->min_c || f.depth <= p->min_p)
			rc = new_inst(s, p, o, f.depth, f.cand, f.cand_gen, &f.own, &f.own_gen);
	}
	if (!rc && o->api && o->corr) {
		rc = put_call(p, o->corr, f.own >= 0 ? f.own : f.cand, f.own >= 0 ? f.own_gen : f.cand_gen, f.depth,
		              o->ts_us);
		for (struct inst *in = inst_at(p, f.own >= 0 ? f.own : f.cand, f.own >= 0 ? f.own_gen : f.cand_gen); in;
		     in = inst_at(p, in->parent, in->parent_gen))
			in->last_call = p->calls;
	}
	struct frame *slot = rc ? NULL : ev_vec_push(&t->stack);
	if (!rc && !slot)
		rc = EV_ERR_NOMEM;
	if (!rc) {
		*slot = f;
		if (dur >= 0)
			rc = heap_push(&t->heap, (struct closing){ o->end_us, dur != 0 });
	}
	if (!rc && p->calls - p->scanned >= KP_SCAN) {
		p->scanned = p->calls;
		rc = sweep(s, p, 0);
	}
	return rc;
}

static int cmp_opening(const void *a, const void *b)
{
	const struct opening *x = a, *y = b;
	int64_t dx = x->end_us - x->ts_us, dy = y->end_us - y->ts_us;
	if (dx != dy)
		return dx > dy ? -1 : 1;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

/* The opens of one microsecond of a thread, in HTA's order. */
static int flush(ev_stats *s, struct prank *p, struct thread *t)
{
	int rc = EV_OK;
	if (t->buf.len > 1)
		qsort(t->buf.data, t->buf.len, sizeof(struct opening), cmp_opening);
	for (size_t i = 0; !rc && i < t->buf.len; i++)
		rc = open_one(s, p, t, (const struct opening *)t->buf.data + i);
	t->buf.len = 0;
	return rc;
}

static int flush_all(ev_stats *s, struct prank *p)
{
	int rc = EV_OK;
	for (size_t i = 0; !rc && i < p->threads.len; i++)
		rc = flush(s, p, (struct thread *)p->threads.data + i);
	return rc;
}

static int is_sync_name(const char *n)
{
	return !strcmp(n, "Stream Wait Event") || !strcmp(n, "Stream Sync") || !strcmp(n, "Event Sync") ||
	       !strcmp(n, "Context Sync");
}

/* A GPU event whose call has come (c), or that has none (c NULL). */
static int gpu_linked(ev_stats *s, struct prank *p, const struct ev_rec *r, const struct call *c)
{
	struct kp *k = s->state;
	if (matches(s, r->name)) {
		if (c)
			see_candidate(p, c->depth + 1, c->ts_us);
		else
			p->unlinked_match = 1;
	}
	if (!c)
		return EV_OK;
	int64_t ts, end;
	hta_us(p->h.json_base_ns, r->ts, ev_rec_end(r), &ts, &end);
	for (struct inst *in = inst_at(p, c->cand, c->gen); in; in = inst_at(p, in->parent, in->parent_gen)) {
		if (k->held >= KP_MAX_IDS) {
			k->dropped++;
			return EV_OK;
		}
		struct kern *kn = ev_vec_push(&in->k);
		if (!kn)
			return EV_ERR_NOMEM;
		*kn = (struct kern){ r->name, end - ts };
		k->held++;
		struct kat *a = k->sort ? ev_vec_push(&in->at) : NULL;
		if (k->sort && !a)
			return EV_ERR_NOMEM;
		if (a)
			*a = (struct kat){ r->ts, r->stream, r->src };
	}
	return EV_OK;
}

/* The GPU events held for their calls: a call comes later in the stream
 * than its GPU event when both have one time (a Stream Wait Event sorts
 * on its stream, below the thread's id), so the call is looked for until
 * the stream passes that time. */
static int settle_pending(ev_stats *s, struct prank *p)
{
	int rc = p->pend.len ? flush_all(s, p) : EV_OK;
	for (size_t i = 0; !rc && i < p->pend.len; i++) {
		const struct ev_rec *r = (const struct ev_rec *)p->pend.data + i;
		rc = gpu_linked(s, p, r, get_call(p, r->id));
	}
	p->pend.len = 0;
	return rc;
}

static int gpu_event(ev_stats *s, struct prank *p, const struct ev_rec *r)
{
	int rc = flush_all(s, p);
	if (rc)
		return rc;
	const struct call *c = get_call(p, r->id);
	if (!c && r->id && p->pend.len < KP_MAX_PEND) {
		struct ev_rec *slot = ev_vec_push(&p->pend);
		if (!slot)
			return EV_ERR_NOMEM;
		*slot = *r;
		return EV_OK;
	}
	return gpu_linked(s, p, r, c);
}

static int kp_rec(ev_stats *s, const struct ev_rec *r)
{
	struct kp *k = s->state;
	int fresh;
	struct prank *p = hta_rank_of(s, &k->ranks, &k->ridx, r, &fresh);
	if (!p)
		return EV_ERR_NOMEM;
	if (fresh) {
		ev_vec_init(&p->threads, sizeof(struct thread));
		ev_map_init(&p->tidx);
		ev_map_init(&p->cidx);
		ev_vec_init(&p->insts, sizeof(struct inst));
		ev_vec_init(&p->freel, sizeof(int32_t));
		ev_vec_init(&p->pend, sizeof(struct ev_rec));
		p->min_c = p->min_p = KP_NODEPTH;
	}
	if (p->pend.len && r->ts > ((const struct ev_rec *)p->pend.data)->ts) {
		int rc = settle_pending(s, p);
		if (rc)
			return rc;
	}
	int sync = r->type == EV_RANGE && r->op == EV_RG_OTHER && is_sync_name(str_of(s, r->name));
	if (is_gpu(r) || (sync && r->stream > 0))
		return gpu_event(s, p, r);
	if (sync || r->type == EV_MARK)
		return EV_OK;
	int act = hta_rank_cpu(s, &p->h, r, NULL);
	if (act < 0)
		return act;
	if (act == HTA_STEP_FORK)
		commit(k, p);
	if (r->type != EV_API && !(r->type == EV_RANGE && r->op != EV_RG_GPU_USER))
		return EV_OK;
	struct thread *t = thread_of(p, r->stream);
	if (!t)
		return EV_ERR_NOMEM;
	const char *name = str_of(s, r->name);
	if (r->type == EV_RANGE && r->op == EV_RG_STEP && !t->main) {
		t->main = 1;
		if (!p->main_thread)
			p->main_thread = (int32_t)(t - (struct thread *)p->threads.data) + 1;
		else if (p->main_thread != (int32_t)(t - (struct thread *)p->threads.data) + 1)
			k->link_other++;
	}
	if (strstr(name, "autograd::"))
		t->autograd = 1;
	struct opening o = { .name = r->name, .seq = p->seq++, .ts_ns = r->ts, .corr = r->id, .tid = r->stream,
	                     .src = r->src, .api = r->type == EV_API };
	hta_us(p->h.json_base_ns, r->ts, ev_rec_end(r), &o.ts_us, &o.end_us);
	int rc = EV_OK;
	if (t->buf.len && o.ts_us != t->buf_us)
		rc = flush(s, p, t);
	struct opening *slot = rc ? NULL : ev_vec_push(&t->buf);
	if (!slot)
		return rc ? rc : EV_ERR_NOMEM;
	*slot = o;
	t->buf_us = o.ts_us;
	return EV_OK;
}

static int annot_write(ev_stats *s);

static int kp_finish(ev_stats *s)
{
	struct kp *k = s->state;
	int rc = EV_OK;
	for (size_t i = 0; !rc && i < k->ranks.len; i++) {
		struct prank *p = (struct prank *)k->ranks.data + i;
		rc = flush_all(s, p);
		rc = rc ? rc : settle_pending(s, p);
		for (size_t j = 0; !rc && j < p->threads.len; j++) {
			struct thread *t = (struct thread *)p->threads.data + j;
			while (t->stack.len)
				pop_frame(p, t);
		}
		rc = rc ? rc : sweep(s, p, 1);
		if (!rc && !hta_rank_filtered(&p->h)) {
			commit(k, p);
			if (p->unlinked_match)
				p->min_c = -1; /* HTA's depth of a GPU event without its call */
		}
	}
	return rc ? rc : annot_write(s);
}

struct prow { const struct pat *pt; const char *text; uint32_t sg, rank; };

static unsigned sort_key;

static int cmp_prow(const void *a, const void *b)
{
	const struct prow *x = a, *y = b;
	if (x->sg != y->sg)
		return x->sg < y->sg ? -1 : 1;
	if (x->rank != y->rank)
		return x->rank < y->rank ? -1 : 1;
	int64_t vx = sort_key == EV_KP_SORT_GPU ? x->pt->gpu[0] : sort_key == EV_KP_SORT_CPU ? x->pt->cpu[0] : 0;
	int64_t vy = sort_key == EV_KP_SORT_GPU ? y->pt->gpu[0] : sort_key == EV_KP_SORT_CPU ? y->pt->cpu[0] : 0;
	if (vx != vy)
		return vx > vy ? -1 : 1;
	if (x->pt->count[0] != y->pt->count[0])
		return x->pt->count[0] > y->pt->count[0] ? -1 : 1;
	return strcmp(x->text, y->text);
}

/* The pattern's text: the op's name and its kernels', '|' between. */
static char *pattern_text(const ev_stats *s, const struct kp *k, const struct pat *pt)
{
	const uint64_t *ids = (const uint64_t *)k->ids.data + pt->off;
	size_t n = strlen(str_of(s, pt->name)) + 1;
	for (size_t i = 0; i < pt->len; i++)
		n += strlen(str_of(s, ids[i])) + 1;
	char *t = malloc(n), *w = t;
	if (!t)
		return NULL;
	w += sprintf(w, "%s", str_of(s, pt->name));
	for (size_t i = 0; i < pt->len; i++)
		w += sprintf(w, "|%s", str_of(s, ids[i]));
	return t;
}

static void free_rows(struct prow *rows, size_t n)
{
	for (size_t i = 0; rows && i < n; i++)
		free((char *)rows[i].text);
	free(rows);
}

/* The table's rows in its order, a rank's together (*n of them); NULL
 * with *rc set when out of memory. */
static struct prow *sorted_rows(ev_stats *s, size_t *n, int *rc)
{
	struct kp *k = s->state;
	struct prow *rows = calloc(k->pats.len + 1, sizeof *rows);
	*n = 0;
	if (!rows) {
		*rc = EV_ERR_NOMEM;
		return NULL;
	}
	for (size_t i = 0; i < k->pats.len; i++) {
		const struct pat *pt = (const struct pat *)k->pats.data + i;
		const struct prank *p = (const struct prank *)k->ranks.data + pt->rank_ix;
		if (!pt->count[0] || pt->depth != p->min_c)
			continue;
		rows[*n] = (struct prow){ pt, pattern_text(s, k, pt), p->h.sg, p->h.rank };
		if (!rows[(*n)++].text) {
			free_rows(rows, *n);
			*rc = EV_ERR_NOMEM;
			return NULL;
		}
	}
	sort_key = s->o.kp_sort;
	qsort(rows, *n, sizeof *rows, cmp_prow);
	return rows;
}

/* A mark from the sorter, written when its pattern is among its rank's
 * first K and its instance counted (the table's count), named after the
 * pattern's place and count. */
static int annot_fix(void *ctx, struct ev_rec *r)
{
	ev_stats *s = ctx;
	struct kp *k = s->state;
	size_t pix = (size_t)r->comm - 1;
	const struct pat *pt = (const struct pat *)k->pats.data + pix;
	const struct prank *p = (const struct prank *)k->ranks.data + pt->rank_ix;
	if (!k->place[pix] || (r->channel && r->step >= p->commits))
		return EV_OK;
	char name[64];
	snprintf(name, sizeof name, "pattern %u: %llux", k->place[pix], (unsigned long long)pt->count[0]);
	const char *sig = str_of(s, r->sig);
	int rc = ev_strtab_intern(k->ast, name, strlen(name), &r->name);
	rc = rc ? rc : ev_strtab_intern(k->ast, sig, strlen(sig), &r->sig);
	r->comm = 0;
	r->channel = 0;
	r->step = 0;
	if (!rc && (rc = ev_write(k->w, r)) != EV_OK)
		k->werr = 1;
	return rc;
}

/* --annotate: the places of each rank's first K patterns, then the marks
 * of their instances in time order, and the file renamed into place. */
static int annot_write(ev_stats *s)
{
	struct kp *k = s->state;
	if (!k->w)
		return EV_OK;
	int rc = EV_OK;
	size_t n = 0;
	struct prow *rows = sorted_rows(s, &n, &rc);
	if (!rows || !(k->place = calloc(k->pats.len + 1, sizeof *k->place))) {
		free_rows(rows, n);
		return EV_ERR_NOMEM;
	}
	uint64_t top = s->o.top ? s->o.top : KP_ANNOT_TOP, kept = 0;
	for (size_t i = 0; i < n; i++) {
		if (i && (rows[i].sg != rows[i - 1].sg || rows[i].rank != rows[i - 1].rank))
			kept = 0;
		if (kept < top)
			k->place[rows[i].pt - (const struct pat *)k->pats.data] = (uint32_t)++kept;
	}
	free_rows(rows, n);
	rc = ev_writer_header(k->w, "producer", "ev-stats");
	rc = rc ? rc : ev_sorter_finish(k->sort, NULL, annot_fix, s);
	if (rc) {
		const char *run = ev_sorter_errpath(k->sort);
		s->errpath = !k->werr && rc == EV_ERR_IO && run ? run : s->o.annotate;
		return rc;
	}
	rc = ev_writer_close(k->w);
	k->w = NULL;
	if (rc)
		s->errpath = s->o.annotate;
	return rc;
}

static int kp_rows(ev_stats *s, struct ev_rowset *rs)
{
	struct ev_colspec keys[EV_STATS_MAX_BY + 2];
	size_t nk = 0;
	by_colspecs(&s->o, keys, &nk);
	int own_rank = !has_by(&s->o, EV_BY_RANK);
	if (own_rank)
		keys[nk++] = (struct ev_colspec){ "rank", 1, 0 };
	keys[nk++] = (struct ev_colspec){ "pattern", 0, 0 };
	static const struct ev_colspec vals[] = {
		{ "count", 0, EV_DIR_NONE }, { "GPU kernel duration (us)", 0, EV_DIR_LOWER },
		{ "CPU op duration (us)", 0, EV_DIR_LOWER },
	};
	int rc = ev_rowset_init(rs, keys, nk, vals, 3);
	size_t n = 0;
	struct prow *rows = rc ? NULL : sorted_rows(s, &n, &rc);
	uint64_t kept = 0;
	for (size_t i = 0; !rc && i < n; i++) {
		if (i && (rows[i].sg != rows[i - 1].sg || rows[i].rank != rows[i - 1].rank))
			kept = 0;
		if (s->o.top && kept++ >= s->o.top)
			continue;
		struct gkey g = { .sg = rows[i].sg, .rank = rows[i].rank };
		struct ev_row *row;
		size_t c;
		rc = group_row(s, rs, &g, &row, &c);
		if (own_rank && !rc)
			rc = ev_row_keyu(row, c++, rows[i].rank);
		rc = rc ? rc : ev_row_key(row, c, rows[i].text);
		if (rc)
			break;
		row->val[0] = (double)rows[i].pt->count[0];
		row->val[1] = (double)rows[i].pt->gpu[0];
		row->val[2] = (double)rows[i].pt->cpu[0];
	}
	free_rows(rows, n);
	return rc;
}

static void kp_free(ev_stats *s)
{
	struct kp *k = s->state;
	for (size_t i = 0; i < k->ranks.len; i++) {
		struct prank *p = (struct prank *)k->ranks.data + i;
		for (size_t j = 0; j < p->threads.len; j++) {
			struct thread *t = (struct thread *)p->threads.data + j;
			ev_vec_free(&t->stack);
			ev_vec_free(&t->heap);
			ev_vec_free(&t->buf);
		}
		for (size_t j = 0; j < p->insts.len; j++) {
			ev_vec_free(&((struct inst *)p->insts.data + j)->k);
			ev_vec_free(&((struct inst *)p->insts.data + j)->at);
		}
		ev_vec_free(&p->threads);
		ev_vec_free(&p->insts);
		ev_vec_free(&p->freel);
		ev_vec_free(&p->pend);
		ev_map_free(&p->tidx);
		ev_map_free(&p->cidx);
		free(p->ring);
		hta_rank_free(&p->h);
	}
	ev_vec_free(&k->ranks);
	ev_map_free(&k->ridx);
	ev_vec_free(&k->pats);
	ev_map_free(&k->pidx);
	ev_vec_free(&k->ids);
	ev_writer_abort(k->w);
	ev_sorter_close(k->sort);
	ev_strtab_free(k->ast);
	free(k->place);
}

static int kp_explain(const struct ev_stats_opts *o, const struct ev_stats_counts *c, char *buf, size_t n)
{
	(void)c;
	if (!o->kp_operator || !*o->kp_operator)
		snprintf(buf, n, "--operator=TEXT is required: the ops whose name contains TEXT");
	else
		snprintf(buf, n, "no op whose name contains '%s' launched %u or more GPU events at the shallowest depth "
		         "such ops have (HTA's rule): empty table", o->kp_operator,
		         o->kp_min_len ? o->kp_min_len : KP_DEFAULT_LEN);
	return 1;
}

static int kp_warning(ev_stats *s, unsigned i, char *buf, size_t n)
{
	struct kp *k = s->state;
	if (k->dropped && i-- == 0) {
		snprintf(buf, n, "%llu GPU events left out of their ops' sequences: more than %u held at once",
		         (unsigned long long)k->dropped, KP_MAX_IDS);
		return 1;
	}
	if (k->link_other && i == 0) {
		snprintf(buf, n, "ProfilerStep on more than one thread of a rank: HTA then links no backward thread; "
		         "backward ops were hung under the first");
		return 1;
	}
	return 0;
}

static const char *const kp_options[] = { "operator", "min-pattern-len", "top", "sort", "annotate", NULL };

const struct ev_stats_analysis ev_stats_analysis_kpatterns = {
	.name = "kernel-patterns",
	.sheet = "frequent_cuda_kernel_sequences", /* HTA's function name, cut to Excel's 31 */
	.help = "HTA's frequent CUDA kernel sequences: for the shallowest ops\n"
	        "whose name contains --operator, each op's name and the GPU\n"
	        "events it launched; per sequence its count and the GPU and\n"
	        "CPU time (us), most frequent first",
	.options = kp_options,
	.state_size = sizeof(struct kp),
	.init = kp_init,
	.rec = kp_rec,
	.finish = kp_finish,
	.rows = kp_rows,
	.free = kp_free,
	.explain = kp_explain,
	.warning = kp_warning,
};
