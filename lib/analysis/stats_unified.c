/* SPDX-License-Identifier: MIT */
/*
 * stats_unified.c - TraceLens's unified_perf_summary: every GPU event once,
 * under the op TraceLens's collect_unified_perf_events gives it, those ops
 * grouped by name, category, process and thread names and arguments.
 *
 * Which op: down the cpu_op tree from each root, the first op that has a
 * perf model (unified_ops.c) takes its whole subtree; an op with a
 * descendant that has one and GPU work is passed through; else an op that
 * launches GPU work itself takes its subtree, unless a communication
 * kernel is in it (then neither it nor anything under it is taken).  A
 * GPU event no op took (but communication kernels) is a row of its own,
 * "OP->KERNEL (Synthetic Op)", OP its launching op with that op's
 * arguments and CPU time, or its runtime call when no op is open around
 * the call.  Per row the ops' CPU time (duration_us), their kernel time
 * (the union of their GPU events), and for an op with a model evkit has
 * (perf.h) GFLOPS, data moved, TB/s and TFLOPS/s; kernel_details; largest
 * kernel time first.
 *
 * Streaming: the tree's properties (who has GPU work, a modelled
 * descendant, a communication kernel) are known only when its GPU events
 * have come, so each op with GPU events in its subtree is an open
 * instance holding them as TraceLens's numbers (busy time, the first
 * OPSUM_MAXK events); a tree is decided when the GPU events of its root
 * have ended a second before the stream's position, and its rows go into
 * the groups.  Memory grows with the open instances (bounded) and the
 * groups, not with the events; a synthetic op's place in TraceLens's
 * numbering is kept for the first SYN_MAX of them (unified_synuid.c).
 *
 * This file is the op tree, the instances and TraceLens's walk over them,
 * and the analysis; an instance's row goes into its group in
 * unified_groups.c, the table is unified_rows.c, its messages
 * unified_warning.c.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/unified.h"

/* A cpu_op seen: its parent, for the tree; what a row of it needs. */
struct unode { uint32_t rank, id, parent, thread; uint16_t src; uint8_t pm; uint64_t sig; int64_t ts, end, uid; };
/* A runtime call made outside any op: its duration and thread. */
struct ucall { uint64_t key; int64_t dur; uint32_t thread; };

static int unified_init(ev_stats *s)
{
	struct unified *u = s->state;
	ev_map_init(&u->nodeidx);
	ev_map_init(&u->callidx);
	ev_map_init(&u->idx);
	ev_map_init(&u->sigpm);
	return EV_OK;
}

/* A GPU event's own index in its trace's traceEvents + 1, 0 unknown:
 * kineto2ev writes it in step_size (docs/FORMAT.md section 5). */
static uint32_t gpu_uid1(const struct ev_rec *r)
{
	return is_gpu(r) ? r->step_size : 0;
}

/* An op's name out of its signature, in b. */
const char *unified_op_name(const char *sig, char *b, size_t n)
{
	snprintf(b, n, "%.*s", (int)opsum_name_len(sig), sig);
	return b;
}

static int has_model(ev_stats *s, uint64_t sig, uint8_t *pm)
{
	struct unified *u = s->state;
	uint64_t *v = ev_map_get(&u->sigpm, sig | 1);
	if (v) {
		*pm = (uint8_t)(*v - 1);
		return EV_OK;
	}
	char b[512];
	*pm = unified_model_category(unified_op_name(str_of(s, sig), b, sizeof b)) != NULL;
	return ev_map_put(&u->sigpm, sig | 1, 1u + *pm);
}

/* ---- the cpu_op tree and the runtime calls outside it ---- */

/* cpu_ops are kept as ops-summary keeps them (opsum_window_prune); the
 * runtime calls outside any op, the last CALL_MAX. */
#define CALL_MAX 262144

static int node_prune(struct unified *u)
{
	static const struct opsum_window w = { sizeof(struct unode), offsetof(struct unode, rank),
		offsetof(struct unode, src), offsetof(struct unode, id), offsetof(struct unode, end) };
	return opsum_window_prune(&w, u->node, &u->nnode, u->now, &u->evicted, &u->nodeidx);
}

static const struct unode *node_of(const struct unified *u, uint32_t rank, uint16_t src, uint32_t id)
{
	uint64_t *i = id ? ev_map_get(&u->nodeidx, opsum_op_key(rank, src, id)) : NULL;
	const struct unode *n = i ? &u->node[*i - 1] : NULL;
	return n && n->rank == rank && n->src == src && n->id == id ? n : NULL;
}

static int range_rec(ev_stats *s, const struct ev_rec *r)
{
	struct unified *u = s->state;
	struct othread *t;
	uint8_t pm = 0;
	int rc = opsum_thread(&u->th, &u->nth, &u->capth, r, &t);
	if (!rc && r->sig)
		rc = has_model(s, r->sig, &pm);
	if (rc)
		return rc;
	int64_t end = ev_rec_end(r);
	uint32_t parent = t->n ? t->id[t->n - 1] : 0;
	if (t->n < UNI_DEPTH) {
		t->id[t->n] = r->id;
		t->end[t->n++] = end;
	} else {
		u->deep++;
	}
	u->now = r->ts;
	if (u->nnode == u->capnode) {
		if (u->nnode >= 4096 && (rc = node_prune(u)) != EV_OK)
			return rc;
		if (u->nnode == u->capnode) {
			size_t cap = u->capnode ? 2 * u->capnode : 256;
			struct unode *nn = realloc(u->node, cap * sizeof *nn);
			if (!nn)
				return EV_ERR_NOMEM;
			u->node = nn;
			u->capnode = cap;
		}
	}
	u->node[u->nnode++] = (struct unode){ r->rank, r->id, parent, r->stream, r->src, pm, r->sig, r->ts, end, tl_uid(r) };
	return ev_map_put(&u->nodeidx, opsum_op_key(r->rank, r->src, r->id), u->nnode);
}

static uint64_t call_key(uint32_t rank, uint16_t src, uint32_t id)
{
	return opsum_op_key(rank, src, id) ^ 0x3C3C3C3C3C3C3C3CULL;
}

/* A runtime call with no cpu_op open on its thread: the launcher of its
 * GPU events (TraceLens's synthetic op is named after it). */
static int api_rec(ev_stats *s, const struct ev_rec *r)
{
	struct unified *u = s->state;
	struct othread *t;
	int rc = opsum_thread(&u->th, &u->nth, &u->capth, r, &t);
	if (rc || t->n || !r->id)
		return rc;
	if (!u->call && !(u->call = malloc(CALL_MAX * sizeof *u->call)))
		return EV_ERR_NOMEM;
	if (u->ncall == CALL_MAX) {
		size_t half = CALL_MAX / 2;
		memmove(u->call, u->call + half, (CALL_MAX - half) * sizeof *u->call);
		u->ncall -= half;
		ev_map_free(&u->callidx);
		ev_map_init(&u->callidx);
		for (size_t i = 0; i < u->ncall; i++)
			if ((rc = ev_map_put(&u->callidx, u->call[i].key, i + 1)) != EV_OK)
				return rc;
	}
	u->call[u->ncall++] = (struct ucall){ call_key(r->rank, r->src, r->id), (int64_t)r->dur, r->stream };
	return ev_map_put(&u->callidx, u->call[u->ncall - 1].key, u->ncall);
}

/* ---- a tree decided: its rows into the groups ---- */

enum { ST_PASS, ST_TAKE, ST_DROP };

/* An instance's own part of TraceLens's walk: its op has a model (taken),
 * a descendant has one (passed through), it launches GPU work (taken, but
 * dropped with a communication kernel under it), else passed through.  A
 * call is no op: its events are left to the synthetic rows. */
static int state_of(const struct uinst *in)
{
	if (in->key.k1 >= CALL_BIT)
		return ST_PASS;
	if (in->pm)
		return ST_TAKE;
	if (in->desc_pm || !in->direct)
		return ST_PASS;
	return in->comm ? ST_DROP : ST_TAKE;
}

static struct uinst *inst_find(struct unified *u, const struct gkey *k)
{
	uint64_t *slot = ev_map_get(&u->idx, ev_hash64(k, sizeof *k) | 1);
	struct uinst *in = slot ? &u->inst[*slot - 1] : NULL;
	return in && !memcmp(&in->key, k, sizeof *k) ? in : NULL;
}

/* Instance i closes: its row if TraceLens's walk takes it, its own events'
 * synthetic rows if the walk takes neither it nor an op above it. */
static int resolve(ev_stats *s, size_t i)
{
	struct unified *u = s->state;
	const struct uinst *in = &u->inst[i];
	const struct uinst *top = NULL, *x = in;
	for (unsigned d = 0; x && d <= UNI_DEPTH; d++) {
		if (state_of(x) != ST_PASS)
			top = x;
		if (!x->parent)
			break;
		struct gkey k = x->key;
		k.k1 = x->parent;
		x = inst_find(u, &k);
	}
	int rc = EV_OK;
	if (top == in && state_of(in) == ST_TAKE)
		return unified_add_row(s, in, -1);
	if (!in->direct || (top && state_of(top) == ST_TAKE))
		return EV_OK;
	for (uint32_t j = 0; !rc && j < in->nk; j++)
		if ((in->dmask >> j & 1) && !(in->cmask >> j & 1))
			rc = unified_add_row(s, in, (int)j);
	u->dmore += in->dmore;
	if (in->dmore)
		syn_bad(u, (uint16_t)in->key.k2, SYN_DMORE);
	return rc;
}

/* A tree's instances close together, when its root's GPU events ended a
 * second before the stream's position (all at the end); past INST_MAX
 * open ones, the half that ended first, counted. */
#define INST_WINDOW_NS 1000000000LL

static int sweep(ev_stats *s, int all)
{
	struct unified *u = s->state;
	int64_t cut = INT64_MIN;
	int64_t old = u->now > INT64_MIN + INST_WINDOW_NS ? u->now - INST_WINDOW_NS : INT64_MIN;
	unsigned char *closing = calloc(u->n + 1, 1);
	if (!closing)
		return EV_ERR_NOMEM;
	if (!all && u->n >= INST_MAX &&
	    opsum_half_end(u->inst, u->n, sizeof *u->inst, offsetof(struct uinst, end), &cut) != EV_OK) {
		free(closing);
		return EV_ERR_NOMEM;
	}
	for (size_t i = 0; i < u->n; i++) {
		struct gkey k = u->inst[i].key;
		k.k1 = u->inst[i].root;
		const struct uinst *root = u->inst[i].root ? inst_find(u, &k) : NULL;
		int expired = (root ? root->end : u->inst[i].end) < old;
		closing[i] = all || expired || u->inst[i].end <= cut;
		u->window += closing[i] && !all && !expired;
	}
	int rc = EV_OK;
	for (size_t i = 0; !rc && i < u->n; i++)
		if (closing[i])
			rc = resolve(s, i);
	size_t w = 0;
	for (size_t i = 0; i < u->n; i++)
		if (!closing[i])
			u->inst[w++] = u->inst[i];
	u->n = w;
	free(closing);
	ev_map_free(&u->idx);
	ev_map_init(&u->idx);
	for (size_t i = 0; !rc && i < u->n; i++)
		rc = ev_map_put(&u->idx, ev_hash64(&u->inst[i].key, sizeof u->inst[i].key) | 1, i + 1);
	return rc;
}

/* ---- GPU events into the instances ---- */

/* The instance of key k, made from node nd (or a call, nd NULL) when new;
 * its index.  The caller made room. */
static int inst_get(ev_stats *s, const struct gkey *k, const struct unode *nd, const struct ev_rec *r, size_t *at)
{
	struct unified *u = s->state;
	struct uinst *in = inst_find(u, k);
	if (in) {
		*at = (size_t)(in - u->inst);
		return EV_OK;
	}
	in = &u->inst[u->n++];
	memset(in, 0, sizeof *in);
	in->key = *k;
	in->dur = -1;
	in->ts = r->ts;
	in->end = INT64_MIN;
	in->uid = -1;
	if (nd) {
		in->uid = nd->uid;
		in->sig = nd->sig;
		in->parent = nd->parent;
		in->thread = (uint64_t)nd->thread + 1;
		in->ts = nd->ts;
		in->dur = nd->end - nd->ts;
		in->pm = nd->pm;
	} else if (k->k1 >= CALL_BIT) {
		in->sig = r->sig;
		uint64_t *c = ev_map_get(&u->callidx, call_key(r->rank, r->src, r->id));
		const struct ucall *cl = c ? &u->call[*c - 1] : NULL;
		if (cl && cl->key == call_key(r->rank, r->src, r->id)) {
			in->dur = cl->dur;
			in->thread = (uint64_t)cl->thread + 1;
		} else {
			u->nocall++;
		}
	} else {
		/* Its op left the window: no parent, CPU time or thread. */
		in->sig = r->sig;
		u->evicted++;
		int rc = has_model(s, r->sig, &in->pm);
		if (rc)
			return rc;
	}
	*at = u->n - 1;
	return ev_map_put(&u->idx, ev_hash64(k, sizeof *k) | 1, u->n);
}

static void add_event(ev_stats *s, struct uinst *in, const struct ev_rec *r, double a, double z, int own, int comm)
{
	opsum_busy_add(s, &in->sub, r, a, z);
	int64_t end = ev_rec_end(r);
	if (end > in->end)
		in->end = end;
	in->comm |= (uint8_t)comm;
	if (own) {
		in->direct = 1;
		if (!comm && !in->kfirst)
			in->kfirst = r->name;
	}
	if (in->nk == UNI_MAXK) {
		in->more++;
		in->dmore += own && !comm;
		return;
	}
	in->dmask |= (uint32_t)own << in->nk;
	in->cmask |= (uint32_t)comm << in->nk;
	in->kname[in->nk] = r->name;
	in->kstream[in->nk] = r->stream;
	in->kuid[in->nk] = gpu_uid1(r);
	in->kbusy[in->nk] = s->o.float_us ? z - a : (double)ev_span(r->ts, end) / 1e3;
	in->kdur[in->nk++] = (double)r->dur / 1000.0;
}

static int gpu_rec(ev_stats *s, const struct ev_rec *r)
{
	struct unified *u = s->state;
	int rc;
	u->now = r->ts;
	s->n.selected++;
	if (u->n + UNI_DEPTH + 1 > u->cap) {
		if (u->n > 4096 && (rc = sweep(s, 0)) != EV_OK)
			return rc;
		while (u->n + UNI_DEPTH + 1 > u->cap) {
			size_t cap = u->cap ? 2 * u->cap : 256;
			struct uinst *ni = realloc(u->inst, cap * sizeof *ni);
			if (!ni)
				return EV_ERR_NOMEM;
			u->inst = ni;
			u->cap = cap;
		}
	}
	int comm = class_of(s, r) == EV_KC_COMM;
	double a = 0, z = 0;
	if (s->o.float_us)
		tl_float_times(&u->clock, s->meta, r, &a, &z);
	struct gkey k;
	memset(&k, 0, sizeof k);
	if ((rc = src_group(s, r->src, &k.sg)) != EV_OK)
		return rc;
	k.rank = r->rank;
	k.k2 = r->src;
	k.k1 = r->step ? r->step : CALL_BIT + r->id;
	const struct unode *nd = r->step ? node_of(u, r->rank, r->src, r->step) : NULL;
	size_t chain[UNI_DEPTH + 1], nc = 0, at;
	if ((rc = inst_get(s, &k, nd, r, &at)) != EV_OK)
		return rc;
	add_event(s, &u->inst[at], r, a, z, 1, comm);
	chain[nc++] = at;
	/* The ops around the launcher: each takes the event into its subtree,
	 * and learns whether an op below it has a model. */
	uint8_t below_pm = u->inst[at].pm;
	uint32_t root = (uint32_t)(k.k1 < CALL_BIT ? k.k1 : 0);
	for (uint32_t parent = nd ? nd->parent : 0; parent && nc <= UNI_DEPTH;) {
		const struct unode *up = node_of(u, r->rank, r->src, parent);
		if (!up)
			break;
		struct unode upc = *up;
		k.k1 = upc.id;
		if ((rc = inst_get(s, &k, &upc, r, &at)) != EV_OK)
			return rc;
		struct uinst *in = &u->inst[at];
		add_event(s, in, r, a, z, 0, comm);
		in->desc_pm |= below_pm;
		below_pm |= in->pm;
		root = upc.id;
		chain[nc++] = at;
		parent = upc.parent;
	}
	for (size_t i = 0; i < nc; i++)
		u->inst[chain[i]].root = root;
	return EV_OK;
}

static int unified_rec(ev_stats *s, const struct ev_rec *r)
{
	if (r->type == EV_RANGE && r->op == EV_RG_CPU_OP)
		return range_rec(s, r);
	if (r->type == EV_API)
		return api_rec(s, r);
	if (!is_gpu(r) || !r->sig || (r->flags & EV_F_UNLINKED))
		return EV_OK;
	return gpu_rec(s, r);
}

static int unified_finish(ev_stats *s)
{
	int rc = sweep(s, 1);
	if (!rc)
		syn_number(s);
	return rc;
}

static void unified_free(ev_stats *s)
{
	struct unified *u = s->state;
	for (size_t i = 0; i < s->g.keys.len; i++) {
		struct ugroup *g = GROUP_VAL(&s->g, i);
		ev_dist_free(&g->dur);
		ev_dist_free(&g->kt);
		ev_dist_free(&g->tbs);
		ev_dist_free(&g->tflops);
		for (uint32_t j = 0; g->k && j < g->nk; j++)
			ev_dist_free(&g->k[j].d);
		free(g->k);
		free(g->params);
	}
	free(u->th);
	free(u->node);
	free(u->call);
	free(u->inst);
	free(u->syn);
	ev_map_free(&u->nodeidx);
	ev_map_free(&u->callidx);
	ev_map_free(&u->idx);
	ev_map_free(&u->sigpm);
}

static const char *const unified_options[] = { "tracelens-float", "exact-limit", NULL };

const struct ev_stats_analysis ev_stats_analysis_unified = {
	.name = "unified",
	.sheet = "unified_perf_summary",
	.help = "TraceLens's unified_perf_summary: every GPU event once, under\n"
	        "the op with a perf model over it, else the op launching it\n"
	        "(synthetic ops for the rest); per op name, category and\n"
	        "arguments: CPU time, kernel time, GFLOPS, TB/s, TFLOPS/s",
	.options = unified_options,
	.state_size = sizeof(struct unified),
	.group_size = sizeof(struct ugroup),
	.init = unified_init,
	.rec = unified_rec,
	.finish = unified_finish,
	.rows = unified_rows,
	.free = unified_free,
	.explain = opsum_explain,
	.warning = unified_warning,
};
