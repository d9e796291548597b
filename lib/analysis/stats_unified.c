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
 * numbering is kept for the first SYN_MAX of them (syn_number).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/opsum.h"
#include "analysis/perf.h"
#include "analysis/pyrepr.h"
#include "analysis/unified.h"

#define UNI_MAXK OPSUM_MAXK
#define UNI_DEPTH OPSUM_DEPTH
#define CALL_BIT ((uint64_t)1 << 40) /* an instance of a runtime call, not an op */

static const struct perf_category *const categories[] = {
#define PERF_ROW(n, sheet) &perf_category_##n,
	PERF_CATEGORIES(PERF_ROW)
#undef PERF_ROW
};
/* Those TraceLens picks by a prefix of the op's name. */
static const struct perf_category *const matchers[] = {
#define PERF_ROW(n) &perf_category_##n,
	PERF_MATCHERS(PERF_ROW)
#undef PERF_ROW
};

/* A cpu_op seen: its parent, for the tree; what a row of it needs. */
struct unode { uint32_t rank, id, parent, thread; uint16_t src; uint8_t pm; uint64_t sig; int64_t ts, end, uid; };
/* A runtime call made outside any op: its duration and thread. */
struct ucall { uint64_t key; int64_t dur; uint32_t thread; };

/* An op (or call) with GPU events in its subtree. */
struct uinst {
	struct gkey key;        /* sg, rank, k1 = op id (CALL_BIT + correlation for a call), k2 = src */
	uint64_t sig;           /* the op's signature (a call's name) */
	uint32_t parent, root;  /* parent op id (0 none); the topmost op found above */
	uint64_t thread;        /* + 1, 0 unknown */
	int64_t ts, dur;        /* the op's start, its CPU time (ns, -1 unknown) */
	int64_t end;            /* its GPU events' latest end */
	int64_t uid;            /* its op's TraceLens UID (tl_uid), -1 unknown */
	uint8_t pm, direct, comm, desc_pm;
	struct busy sub;        /* its subtree's GPU events */
	uint32_t nk, more, dmore;
	uint32_t dmask, cmask;  /* events it launched itself; communication kernels */
	uint64_t kfirst;        /* its first own non-communication event's name */
	uint64_t kname[UNI_MAXK];
	uint32_t kstream[UNI_MAXK];
	double kdur[UNI_MAXK];  /* us */
	double kbusy[UNI_MAXK]; /* its busy time alone: us, TraceLens's doubles when float_us */
	uint32_t kuid[UNI_MAXK]; /* its trace event's index + 1 (gpu_uid1), 0 unknown */
};

/* A GPU event made a synthetic op: where TraceLens numbers it. */
struct usyn {
	uint64_t parent;        /* orphan: its call (rank << 32 | correlation); else 0 */
	uint32_t uid1;          /* its trace event's index + 1 */
	uint32_t first;         /* the uid1 its place is sorted by (syn_number) */
	uint32_t grp;           /* its row's group */
	uint16_t src;
	uint8_t orphan;         /* launched by a call outside any op */
};

/* A row: instances of one name, category, names and arguments. */
struct ugroup {
	uint64_t count;
	uint64_t sig;           /* the op's signature (name and arguments) */
	uint64_t kname;         /* a synthetic op's GPU event, 0 else */
	const char *cat;
	uint32_t rank;
	uint64_t thread;
	int oclass;             /* TraceLens's collection order: 0 ops, 1 calls' events, 2 ops' events */
	int64_t ots;
	double uid;             /* the first instance's TraceLens UID, NAN unknown */
	uint16_t usrc;          /* that instance's source */
	int pm, metrics;
	double gflop, mbytes, fpb;
	const char *spec;
	char *params;           /* perf_params, NULL none */
	struct ev_dist dur, kt, tbs, tflops;
	struct perf_kpos *k;
	uint32_t nk;
	uint64_t skipped;
};

struct unified {
	struct tl_clock clock;
	int64_t now;
	struct othread *th;     /* open cpu_ops per thread (opsum_thread) */
	size_t nth, capth;
	struct unode *node;
	size_t nnode, capnode;
	struct ev_map nodeidx;
	struct ucall *call;
	size_t ncall;
	struct ev_map callidx;
	struct uinst *inst;
	size_t n, cap;
	struct ev_map idx;
	struct ev_map sigpm;    /* sig id -> 1 + has a perf model */
	int metrics;            /* a row has a model's numbers */
	uint64_t evicted, deep, more, dmore, nocall, window, nomodel, failed, noargs, sketched;
	char nomodel_op[128], failed_op[128], noargs_op[128];
	const char *noargs_why; /* the first such op's category's noargs */
	struct usyn *syn;       /* the synthetic ops' GPU events, at most SYN_MAX */
	size_t nsyn, capsyn;
	uint64_t synlost;       /* those past SYN_MAX */
	unsigned synwhy;        /* SYN_NOUID, SYN_DMORE: why a source's are not numbered */
	uint64_t synbad[65536 / 64]; /* by source: its synthetic ops not numbered */
};

static int unified_init(ev_stats *s)
{
	struct unified *u = s->state;
	ev_map_init(&u->nodeidx);
	ev_map_init(&u->callidx);
	ev_map_init(&u->idx);
	ev_map_init(&u->sigpm);
	return EV_OK;
}

/* TraceLens's UID of a row's instance (ex_UID): an op's is its event's
 * index in the trace (kineto2ev's, tl_uid); a synthetic op's (j >= 0: the
 * instance's GPU event j) TraceLens numbers after the trace's last event,
 * which is known only once every synthetic op is (syn_number): NAN here. */
static double unified_uid(const struct uinst *in, int j)
{
	return j < 0 && in->uid >= 0 ? (double)in->uid : NAN;
}

/* A GPU event's own index in its trace's traceEvents + 1, 0 unknown:
 * kineto2ev writes it in step_size (docs/FORMAT.md section 5). */
static uint32_t gpu_uid1(const struct ev_rec *r)
{
	return is_gpu(r) ? r->step_size : 0;
}

/* An op's name out of its signature, in b. */
static const char *op_name(const char *sig, char *b, size_t n)
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
	*pm = unified_model_category(op_name(str_of(s, sig), b, sizeof b)) != NULL;
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

/* The model's numbers of a taken op with a perf model, 1 when it has
 * them; the failure counted when evkit has no model or the model cannot
 * read the op. */
static int model_of(ev_stats *s, const struct uinst *in, struct perf_model *m, int *got)
{
	struct unified *u = s->state;
	const char *sig = str_of(s, in->sig);
	size_t nl = opsum_name_len(sig);
	const struct perf_category *cat = NULL;
	*got = 0;
	for (size_t c = 0; c < sizeof categories / sizeof categories[0] && !cat; c++)
		for (const char *const *o = categories[c]->ops; *o && !cat; o++)
			if (strlen(*o) == nl && !strncmp(sig, *o, nl))
				cat = categories[c];
	for (size_t c = 0; c < sizeof matchers / sizeof matchers[0] && !cat; c++)
		for (const char *const *o = matchers[c]->ops; *o && !cat; o++)
			if (strlen(*o) <= nl && !strncmp(sig, *o, strlen(*o)))
				cat = matchers[c];
	if (!cat) {
		if (!u->nomodel++)
			op_name(sig, u->nomodel_op, sizeof u->nomodel_op);
		return EV_OK;
	}
	const char *names[UNI_MAXK];
	for (uint32_t i = 0; i < in->nk; i++)
		names[i] = str_of(s, in->kname[i]);
	struct perf_inst pi = { sig, names, in->nk };
	memset(m, 0, sizeof *m);
	int rc = cat->model(&pi, m);
	if (rc == PERF_NOARGS) {
		/* One category says so today; a second would be counted with it. */
		if (!u->noargs++) {
			op_name(sig, u->noargs_op, sizeof u->noargs_op);
			u->noargs_why = cat->noargs;
		}
		return EV_OK;
	}
	if (rc == EV_ERR_FORMAT || rc == EV_ERR_ARG) {
		if (!u->failed++)
			op_name(sig, u->failed_op, sizeof u->failed_op);
		return EV_OK;
	}
	*got = rc == EV_OK;
	return rc;
}

/* A parameter value as Python's repr() in a dict: the model keeps
 * pandas' str() of it, which is the repr but for a string. */
static void param_repr(struct pytext *t, const char *v)
{
	char *end;
	if (*v == '(' || *v == '[' || *v == '{' || !strcmp(v, "True") || !strcmp(v, "False") || !strcmp(v, "None") ||
	    (*v && (strtod(v, &end), *end == '\0'))) {
		pyt_puts(t, v);
		return;
	}
	pyt_puts(t, "'");
	for (const char *c = v; *c; c++) {
		if (*c == '\'' || *c == '\\')
			pyt_puts(t, "\\");
		pyt_put(t, c, 1);
	}
	pyt_puts(t, "'");
}

/* ---- TraceLens's numbers of the synthetic ops ---- */

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
enum { SYN_NOUID = 1, SYN_DMORE = 2 };

static void syn_bad(struct unified *u, uint16_t src, unsigned why)
{
	u->synbad[src / 64] |= (uint64_t)1 << (src % 64);
	u->synwhy |= why;
}

static int syn_is_bad(const struct unified *u, uint16_t src)
{
	return (int)(u->synbad[src / 64] >> (src % 64) & 1);
}

static int syn_note(struct unified *u, const struct uinst *in, int j, size_t grp)
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

static void syn_number(ev_stats *s)
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

/* Instance in as a row: taken whole (j < 0), or its own event j as a
 * synthetic op. */
static int add_row(ev_stats *s, const struct uinst *in, int j)
{
	struct unified *u = s->state;
	const char *sig = str_of(s, in->sig);
	char name[1024], b[512];
	const char *cat;
	const char *kfirst = in->kfirst ? str_of(s, in->kfirst) : NULL;
	if (j >= 0) {
		snprintf(name, sizeof name, "%.*s->%s (Synthetic Op)", (int)opsum_name_len(sig), sig,
		         str_of(s, in->kname[j]));
		cat = opsum_category(name, kfirst);
	} else {
		cat = unified_model_category(op_name(sig, b, sizeof b));
		cat = in->pm && cat ? cat : opsum_category(b, kfirst);
	}
	const char *nm[3];
	int named = tl_names(s->meta, in->key.rank, in->thread, nm), rc0;
	struct gkey k;
	memset(&k, 0, sizeof k);
	k.sg = in->key.sg;
	k.rank = has_by(&s->o, EV_BY_RANK) ? in->key.rank : 0;
	k.k1 = in->sig;
	k.k2 = ev_hash64(cat, strlen(cat)) ^ (j >= 0 ? in->kname[j] * 0x9E3779B97F4A7C15ULL : 0);
	for (int i = 0; named && i < 3; i++)
		k.k2 = (k.k2 ^ ev_hash64(nm[i], strlen(nm[i]))) * 0x9E3779B97F4A7C15ULL;
	size_t gi;
	struct ugroup *g = group_get(&s->g, &k, &gi);
	if (!g)
		return EV_ERR_NOMEM;
	if (j >= 0 && (rc0 = syn_note(u, in, j, gi)) != EV_OK)
		return rc0;
	double kt = j >= 0 ? in->kbusy[j] : opsum_busy_us(s, &in->sub);
	struct perf_model m;
	int got = 0, rc = EV_OK;
	if (j < 0 && in->pm && (rc = model_of(s, in, &m, &got)) != EV_OK)
		return rc;
	int oclass = j < 0 ? 0 : in->key.k1 >= CALL_BIT ? 1 : 2;
	if (g->count == 0) {
		g->sig = in->sig;
		g->kname = j >= 0 ? in->kname[j] : 0;
		g->cat = cat;
		g->rank = in->key.rank;
		g->thread = in->thread;
		g->pm = j < 0 && in->pm;
		g->oclass = oclass;
		g->ots = in->ts;
		g->uid = unified_uid(in, j);
		g->usrc = (uint16_t)in->key.k2;
		g->nk = j >= 0 ? 1 : in->nk;
		g->k = calloc(g->nk ? g->nk : 1, sizeof *g->k);
		if (!g->k)
			return EV_ERR_NOMEM;
		for (uint32_t i = 0; i < g->nk; i++) {
			g->k[i].name = in->kname[j >= 0 ? (uint32_t)j : i];
			g->k[i].stream = in->kstream[j >= 0 ? (uint32_t)j : i];
		}
	} else if (oclass < g->oclass || (oclass == g->oclass && in->ts < g->ots)) {
		g->oclass = oclass;
		g->ots = in->ts;
		g->uid = unified_uid(in, j);
		g->usrc = (uint16_t)in->key.k2;
	}
	g->count++;
	u->more += j < 0 && in->more;
	double gflop = got ? m.flops / 1e9 : NAN;
	if (got && !g->metrics) {
		g->metrics = u->metrics = 1;
		g->gflop = gflop;
		g->mbytes = isfinite(m.bytes) ? m.bytes / (1024.0 * 1024.0) : NAN;
		g->fpb = isfinite(m.bytes) && m.bytes > 0 ? m.flops / m.bytes : NAN;
		g->spec = m.spec ? m.spec : "";
	}
	if (got && m.np && !g->params) {
		struct pytext t = { 0 };
		pyt_puts(&t, "{");
		for (size_t i = 0; i < m.np; i++) {
			pyt_puts(&t, i ? ", '" : "'");
			pyt_puts(&t, m.pname[i]);
			pyt_puts(&t, "': ");
			param_repr(&t, m.pval[i]);
		}
		pyt_puts(&t, "}");
		if (t.oom) {
			free(t.p);
			return EV_ERR_NOMEM;
		}
		g->params = t.p;
	}
	if (in->dur >= 0)
		rc = ev_dist_add(&g->dur, &s->pool, (double)in->dur / 1000.0, in->ts);
	rc = rc ? rc : ev_dist_add(&g->kt, &s->pool, kt, in->ts);
	if (!rc && got && kt > 0)
		rc = ev_dist_add(&g->tflops, &s->pool, gflop / 1e3 / (kt / 1e6), in->ts);
	if (!rc && got && kt > 0 && isfinite(m.bytes))
		rc = ev_dist_add(&g->tbs, &s->pool, m.bytes / 1e12 / (kt / 1e6), in->ts);
	uint32_t nk = j >= 0 ? 1 : in->nk;
	if (rc || nk != g->nk) {
		g->skipped += !rc;
		return rc;
	}
	for (uint32_t i = 0; !rc && i < nk; i++)
		rc = ev_dist_add(&g->k[i].d, &s->pool, in->kdur[j >= 0 ? (uint32_t)j : i], in->ts);
	return rc;
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
		return add_row(s, in, -1);
	if (!in->direct || (top && state_of(top) == ST_TAKE))
		return EV_OK;
	for (uint32_t j = 0; !rc && j < in->nk; j++)
		if ((in->dmask >> j & 1) && !(in->cmask >> j & 1))
			rc = add_row(s, in, (int)j);
	u->dmore += in->dmore;
	if (in->dmore)
		syn_bad(u, (uint16_t)in->key.k2, SYN_DMORE);
	return rc;
}

/* A tree's instances close together, when its root's GPU events ended a
 * second before the stream's position (all at the end); past INST_MAX
 * open ones, the half that ended first, counted. */
#define INST_WINDOW_NS 1000000000LL
#define INST_MAX 65536

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

/* ---- the table ---- */

static int cmp_rows(const void *pa, const void *pb, void *ctx)
{
	const struct ev_stats *s = ctx;
	size_t a = *(const size_t *)pa, b = *(const size_t *)pb;
	const struct gkey *ka = GROUP_KEY(&s->g, a), *kb = GROUP_KEY(&s->g, b);
	const struct ugroup *ga = GROUP_VAL(&s->g, a), *gb = GROUP_VAL(&s->g, b);
	if (ka->sg != kb->sg)
		return ka->sg < kb->sg ? -1 : 1;
	if (ka->rank != kb->rank)
		return ka->rank < kb->rank ? -1 : 1;
	if (ga->kt.sum != gb->kt.sum)
		return ga->kt.sum > gb->kt.sum ? -1 : 1;
	/* Ties by TraceLens's ex_UID; without it, its collection order. */
	if (!isnan(ga->uid) && !isnan(gb->uid) && ga->uid != gb->uid)
		return ga->uid < gb->uid ? -1 : 1;
	if (ga->oclass != gb->oclass)
		return ga->oclass < gb->oclass ? -1 : 1;
	return ga->ots < gb->ots ? -1 : ga->ots > gb->ots;
}

/* pandas' statistics of a column: NaN without values, std NaN for one. */
static double stat(struct ev_dist *d, int which)
{
	if (d->n == 0)
		return NAN;
	switch (which) {
	case 0: return d->mean;
	case 1: return ev_dist_quantile(d, 0.5);
	case 2: return d->n > 1 ? ev_dist_std(d) : NAN;
	case 3: return d->min;
	case 4: return d->max;
	default: return d->sum;
	}
}

/* The value columns: name, and which statistic of which distribution
 * (dist: 0 duration, 1 kernel time, 2 TB/s, 3 TFLOPS/s; stat as stat(),
 * 5 sum; or -1 for the others, filled by name), and whether it is a
 * model's (left out when no row has a model's numbers, as TraceLens's
 * columns are those its rows have). */
static const struct vcol { const char *name; int dist, which, model; } vcols[] = {
	{ "ex_UID", -1, 0, 0 }, { "operation_count", -1, 0, 0 },
	{ "total_duration_us", 0, 5, 0 }, { "mean_duration_us", 0, 0, 0 }, { "std_duration_us", 0, 2, 0 },
	{ "GFLOPS", -1, 0, 1 }, { "Data Moved (MB)", -1, 0, 1 }, { "FLOPS/Byte", -1, 0, 1 },
	{ "TB/s_mean", 2, 0, 1 }, { "TB/s_std", 2, 2, 1 }, { "TFLOPS/s_mean", 3, 0, 1 }, { "TFLOPS/s_std", 3, 2, 1 },
	{ "Kernel Time (µs)_mean", 1, 0, 0 }, { "Kernel Time (µs)_std", 1, 2, 0 }, { "Kernel Time (µs)_sum", 1, 5, 0 },
	{ "duration_us_median", 0, 1, 0 }, { "duration_us_min", 0, 3, 0 }, { "duration_us_max", 0, 4, 0 },
	{ "TB/s_median", 2, 1, 1 }, { "TB/s_min", 2, 3, 1 }, { "TB/s_max", 2, 4, 1 },
	{ "TFLOPS/s_median", 3, 1, 1 }, { "TFLOPS/s_min", 3, 3, 1 }, { "TFLOPS/s_max", 3, 4, 1 },
	{ "Kernel Time (µs)_median", 1, 1, 0 }, { "Kernel Time (µs)_min", 1, 3, 0 }, { "Kernel Time (µs)_max", 1, 4, 0 },
	{ "Percentage (%)", -1, 0, 0 }, { "Cumulative Percentage (%)", -1, 0, 0 },
};
#define NVCOLS (sizeof vcols / sizeof vcols[0])

static int unified_rows(ev_stats *s, struct ev_rowset *rs)
{
	struct unified *u = s->state;
	int named = ev_meta_nthread(s->meta) > 0;
	struct ev_colspec keys[EV_STATS_MAX_BY + 16], vals[NVCOLS];
	size_t nk = 0, nv = 0, vi[NVCOLS];
	by_colspecs(&s->o, keys, &nk);
	static const char *const kcols[] = { "name", "op category", "process_name", "process_label", "thread_name",
		                             "Input Dims", "Input type", "Input Strides", "Concrete Inputs",
		                             "Compute Spec", "kernel_details_summary", "trunc_kernel_details",
		                             "perf_params", "has_perf_model" };
	for (size_t i = 0; i < sizeof kcols / sizeof kcols[0]; i++)
		if ((named || i < 2 || i > 4) && (u->metrics || i != 9))
			keys[nk++] = (struct ev_colspec){ kcols[i], 0, 0 };
	for (size_t i = 0; i < NVCOLS; i++) {
		vi[i] = nv;
		if (u->metrics || !vcols[i].model)
			vals[nv++] = (struct ev_colspec){ vcols[i].name, 0, EV_DIR_NONE };
	}
	int rc = ev_rowset_init(rs, keys, nk, vals, nv);
	size_t m = s->g.keys.len;
	size_t *ord = rc ? NULL : malloc((m + 1) * sizeof *ord);
	if (!rc && !ord)
		rc = EV_ERR_NOMEM;
	for (size_t i = 0; !rc && i < m; i++)
		ord[i] = i;
	if (!rc)
		qsort_r(ord, m, sizeof *ord, cmp_rows, s);
	struct pytext t = { 0 }, t2 = { 0 };
	static const char *const fields[] = { "dims", "types", "strides", "concrete" };
	for (size_t i = 0; !rc && i < m;) {
		size_t e = i;
		double total = 0, cum = 0;
		const struct gkey *k0 = GROUP_KEY(&s->g, ord[i]);
		while (e < m && GROUP_KEY(&s->g, ord[e])->sg == k0->sg && GROUP_KEY(&s->g, ord[e])->rank == k0->rank)
			total += ((struct ugroup *)GROUP_VAL(&s->g, ord[e++]))->kt.sum;
		for (; !rc && i < e; i++) {
			const struct gkey *gk = GROUP_KEY(&s->g, ord[i]);
			struct ugroup *g = GROUP_VAL(&s->g, ord[i]);
			const char *sig = str_of(s, g->sig);
			struct ev_row *r;
			size_t n;
			if ((rc = group_row(s, rs, gk, &r, &n)) != EV_OK)
				break;
			t.n = 0;
			pyt_put(&t, sig, opsum_name_len(sig));
			if (g->kname) {
				pyt_puts(&t, "->");
				pyt_puts(&t, str_of(s, g->kname));
				pyt_puts(&t, " (Synthetic Op)");
			}
			rc = t.oom ? EV_ERR_NOMEM : ev_row_key(r, n++, pyt_str(&t));
			rc = rc ? rc : ev_row_key(r, n++, g->cat);
			const char *nm[3];
			tl_names(s->meta, g->rank, g->thread, nm);
			for (size_t f = 0; !rc && named && f < 3; f++)
				rc = ev_row_key(r, n++, nm[f]);
			for (size_t f = 0; !rc && f < 4; f++)
				if ((rc = opsum_sig_field(sig, fields[f], 1, &t)) == EV_OK)
					rc = ev_row_key(r, n++, pyt_str(&t));
			if (!rc && u->metrics)
				rc = ev_row_key(r, n++, g->metrics ? g->spec : NULL);
			rc = rc ? rc : perf_kernel_details(s, g->k, g->nk, &u->sketched, &t, &t2);
			rc = rc ? rc : ev_row_key(r, n++, pyt_str(&t));
			rc = rc ? rc : ev_row_key(r, n++, pyt_str(&t2));
			rc = rc ? rc : ev_row_key(r, n++, g->params);
			rc = rc ? rc : ev_row_key(r, n++, g->pm ? "True" : "False");
			struct ev_dist *d[4] = { &g->dur, &g->kt, &g->tbs, &g->tflops };
			double pct = total > 0 ? g->kt.sum / total * 100.0 : NAN;
			cum += pct;
			for (size_t c = 0; c < NVCOLS; c++) {
				if (!u->metrics && vcols[c].model)
					continue;
				double v = vcols[c].dist >= 0 ? stat(d[vcols[c].dist], vcols[c].which) : NAN;
				if (c == 0)
					v = g->uid;
				else if (c == 1)
					v = (double)g->count;
				else if (c >= 5 && c <= 7 && g->metrics)
					v = c == 5 ? g->gflop : c == 6 ? g->mbytes : g->fpb;
				else if (c == NVCOLS - 2)
					v = pct;
				else if (c == NVCOLS - 1)
					v = cum;
				r->val[vi[c]] = v;
			}
		}
	}
	free(t.p);
	free(t2.p);
	free(ord);
	return rc;
}

static int unified_warning(ev_stats *s, unsigned i, char *buf, size_t n)
{
	struct unified *u = s->state;
	uint64_t skipped = 0, nouid = 0, synth = 0;
	for (size_t j = 0; j < s->g.keys.len; j++) {
		const struct ugroup *g = GROUP_VAL(&s->g, j);
		skipped += g->skipped;
		synth += isnan(g->uid) && g->kname;
		nouid += isnan(g->uid) && !g->kname;
	}
	unsigned k = 0;
	if (nouid && i == k++)
		snprintf(buf, n, "ex_UID left empty on %llu op row(s): TraceLens's index of the op's event in the trace "
		         "is not in the stream (ties of kernel time come in TraceLens's order of collection, ops by "
		         "start)", (unsigned long long)nouid);
	else if (synth && i == k++)
		snprintf(buf, n, "ex_UID left empty on %llu synthetic op row(s): TraceLens numbers them after the "
		         "trace's last event, in the file order of every such GPU event; %s", (unsigned long long)synth,
		         u->synlost ? "evkit keeps the places of the first 1048576 only"
		         : u->synwhy & SYN_NOUID ? "the stream has not that order or the trace's event count (kineto2ev "
		                                   "writes them: a GPU event's step_size, #src trace_events=)"
		                                 : "GPU events past the first of their op that evkit keeps were left out");
	else if (u->nomodel && i == k++)
		snprintf(buf, n, "%llu op instance(s) TraceLens has a perf model for that evkit has not (first: %s): "
		         "GFLOPS, data moved, TB/s, TFLOPS/s and perf_params left empty", (unsigned long long)u->nomodel,
		         u->nomodel_op);
	else if (u->noargs && i == k++)
		snprintf(buf, n, "%llu op instance(s) without the args their perf model reads (first: %s): GFLOPS, "
		         "data moved, TB/s, TFLOPS/s and perf_params left empty%s%s", (unsigned long long)u->noargs,
		         u->noargs_op, u->noargs_why ? "; " : "", u->noargs_why ? u->noargs_why : "");
	else if (u->failed && i == k++)
		snprintf(buf, n, "%llu op instance(s) whose arguments their perf model cannot read (first: %s): its "
		         "numbers left empty", (unsigned long long)u->failed, u->failed_op);
	else if (u->evicted && i == k++)
		snprintf(buf, n, "%llu op(s) left the op-tree window before their GPU events came: those events count "
		         "for the op that launched them only", (unsigned long long)u->evicted);
	else if (u->deep && i == k++)
		snprintf(buf, n, "%llu op(s) nested more than %d deep: the ops above them not seen", (unsigned long long)u->deep,
		         UNI_DEPTH);
	else if (u->window && i == k++)
		snprintf(buf, n, "%llu op instance(s) decided before their tree's GPU events ended (more than %d open): "
		         "their row may differ", (unsigned long long)u->window, INST_MAX);
	else if (u->nocall && i == k++)
		snprintf(buf, n, "%llu GPU event(s) launched outside any op whose runtime call was not found: their "
		         "synthetic op's duration and thread unknown", (unsigned long long)u->nocall);
	else if (u->dmore && i == k++)
		snprintf(buf, n, "%llu GPU event(s) past the first %d of their op, which TraceLens makes synthetic ops of: "
		         "left out", (unsigned long long)u->dmore, UNI_MAXK);
	else if (skipped && i == k++)
		snprintf(buf, n, "%llu op instance(s) with another number of GPU events than their group's first: "
		         "not in kernel_details_summary (as TraceLens)", (unsigned long long)skipped);
	else if (u->more && i == k++)
		snprintf(buf, n, "%llu op instance(s) with more than %d GPU events: the others not in "
		         "kernel_details_summary", (unsigned long long)u->more, UNI_MAXK);
	else if (u->sketched && i == k++)
		snprintf(buf, n, "%llu kernel_details position(s) past the exact-sample budget: their sum, mean, "
		         "median and std are approximate", (unsigned long long)u->sketched);
	else
		return 0;
	return 1;
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
