/* SPDX-License-Identifier: MIT */
/*
 * match.c - NCCL calls waiting for their kernels.  Per GPU process, calls
 * wait in a bounded ring of operations grouped into launch units (an
 * ungrouped call, or everything between a thread's outermost group start
 * and end); a launch inside a unit's window gives it correlation ids; an
 * NCCL kernel takes the unit with its id, else (no runtime table, launch
 * on another thread) the oldest compatible unit that saw no launch.
 * Annotated coll_info / coll_kernel / p2p_kernel markers attach to the
 * pending operations they describe.
 */
#include <stdlib.h>
#include <string.h>

#include "internal.h"

static struct thr *thr_get(struct gpu *g, uint32_t tid)
{
	for (size_t i = 0; i < g->nthr; i++)
		if (g->thr[i].tid == tid)
			return &g->thr[i];
	struct thr *n = realloc(g->thr, (g->nthr + 1) * sizeof *n);
	if (!n)
		return NULL;
	g->thr = n;
	memset(&n[g->nthr], 0, sizeof *n);
	n[g->nthr].tid = tid;
	return &n[g->nthr++];
}

static int gpu_queues(struct gpu *g)
{
	if (g->ops)
		return 0;
	g->ops = calloc(OPCAP, sizeof *g->ops);
	g->units = calloc(UNITCAP, sizeof *g->units);
	g->next_unit = 1;
	return g->ops && g->units ? 0 : EV_ERR_NOMEM;
}

static struct unit *unit_get(struct gpu *g, uint64_t id)
{
	if (!id || g->unit_tail == g->unit_head)
		return NULL;
	uint64_t first = g->units[g->unit_head % UNITCAP].id;
	if (id < first || id - first >= g->unit_tail - g->unit_head)
		return NULL;
	struct unit *u = &g->units[(g->unit_head + (id - first)) % UNITCAP];
	return u->id == id ? u : NULL;
}

/* Pop emitted ops and finished units from the queue heads. */
static void gpu_tidy(struct gpu *g)
{
	while (g->op_head < g->op_tail && g->ops[g->op_head % OPCAP].emitted)
		g->op_head++;
	while (g->unit_head < g->unit_tail) {
		struct unit *u = &g->units[g->unit_head % UNITCAP];
		if (u->nops || !u->closed)
			break;
		g->unit_head++;
	}
}

/* An operation is finished (written, cut or given up): its channel array
 * goes back to the GPU's free list, so memory stays at the number of
 * operations pending at once, not the number seen. */
static void op_done(struct gpu *g, struct op *p)
{
	p->emitted = 1;
	if (!p->chans)
		return;
	if (g->nchan_free == g->capchan_free) {
		size_t cap = g->capchan_free ? 2 * g->capchan_free : 16;
		struct chan **n = realloc(g->chan_free, cap * sizeof *n);
		if (!n) {
			free(p->chans);
			p->chans = NULL;
			return;
		}
		g->chan_free = n;
		g->capchan_free = cap;
	}
	g->chan_free[g->nchan_free++] = p->chans;
	p->chans = NULL;
}

void nsys_gpu_release(struct gpu *g)
{
	for (size_t i = 0; g->ops && i < OPCAP; i++)
		free(g->ops[i].chans);
	for (size_t i = 0; i < g->nchan_free; i++)
		free(g->chan_free[i]);
	free(g->chan_free);
	free(g->ops);
	free(g->units);
	free(g->thr);
	ev_map_free(&g->ptr_stream);
	ev_map_free(&g->stream_ptr);
}

static void drop_oldest_unit(struct gpu *g)
{
	struct unit *u = &g->units[g->unit_head % UNITCAP];
	for (uint64_t i = g->op_head; i < g->op_tail; i++) {
		struct op *p = &g->ops[i % OPCAP];
		if (p->unit == u->id && !p->emitted) {
			op_done(g, p);
			g->unmatched_ops++;
		}
	}
	g->unit_head++;
	gpu_tidy(g);
}

static uint64_t unit_new(struct gpu *g, uint32_t tid, int64_t start, int64_t end, int closed)
{
	if (g->unit_tail - g->unit_head == UNITCAP)
		drop_oldest_unit(g);
	struct unit *u = &g->units[g->unit_tail % UNITCAP];
	memset(u, 0, sizeof *u);
	u->id = g->next_unit++;
	u->tid = tid;
	u->start = start;
	u->end = end;
	u->closed = closed;
	g->unit_tail++;
	return u->id;
}

static struct op *op_new(struct ev_nsys *s, struct gpu *g)
{
	if (g->op_tail - g->op_head == OPCAP) {
		struct op *old = &g->ops[g->op_head % OPCAP];
		if (!old->emitted) {
			op_done(g, old);
			g->unmatched_ops++;
			struct unit *u = unit_get(g, old->unit);
			if (u && u->nops)
				u->nops--;
		}
		g->op_head++;
		gpu_tidy(g);
	}
	struct op *p = &g->ops[g->op_tail % OPCAP];
	if (p->chans) /* a slot given up at the end of the queue */
		op_done(g, p);
	memset(p, 0, sizeof *p);
	p->peer = -1;
	g->op_tail++;
	(void)s;
	return p;
}

static unsigned dtype_from_size(uint32_t ts)
{
	switch (ts) {
	case 1: return EV_DT_INT8;
	case 2: return EV_DT_FLOAT16;
	case 4: return EV_DT_FLOAT32;
	case 8: return EV_DT_FLOAT64;
	default: return EV_DT_UNKNOWN;
	}
}

static uint32_t next_seq(struct ev_nsys *s, uint64_t rank, uint64_t comm, uint64_t what)
{
	uint64_t key = nsys_key3(rank, comm, what);
	uint64_t *v = ev_map_get(&s->seq, key);
	uint32_t seq = v ? (uint32_t)*v : 0;
	if (ev_map_put(&s->seq, key, (uint64_t)seq + 1))
		return UINT32_MAX;
	return seq;
}

/* An NCCL API call: one op, in the thread's open group or in a unit of its own. */
int nsys_add_call(struct ev_nsys *s, struct gpu *g, uint32_t tid, int64_t start, int64_t end, const struct call *c)
{
	struct thr *th = thr_get(g, tid);
	if (!th || gpu_queues(g))
		return EV_ERR_NOMEM;
	uint64_t unit;
	struct unit *u;
	if (th->depth > 0 && (u = unit_get(g, th->group_unit)) != NULL) {
		unit = th->group_unit;
	} else {
		unit = unit_new(g, tid, start, end, 1);
		u = unit_get(g, unit);
	}
	struct op *p = op_new(s, g);
	u = unit_get(g, unit);
	if (!u) { /* dropped by op_new's overflow handling */
		p->emitted = 1;
		g->unmatched_ops++;
		return 0;
	}
	u->nops++;
	u->total++;
	p->unit = unit;
	int64_t off = s->files[g->file].offset;
	if (__builtin_add_overflow(start, off, &p->call_ts))
		p->call_ts = off > 0 ? INT64_MAX : INT64_MIN;
	p->kind = (uint8_t)c->kind;
	p->p2p = (uint8_t)c->p2p;
	p->name = c->name;
	p->comm = (c->have & HC_COMM) ? (uint64_t)c->comm : 0;
	p->bytes = (c->have & HC_BYTES) && c->bytes > 0 ? (uint64_t)c->bytes : 0;
	p->elems = (c->have & HC_ELEMS) != 0;
	p->type_size = (c->have & HC_TS) && c->type_size > 0 && c->type_size < 256 ? (uint32_t)c->type_size : 0;
	p->redop = (c->have & HC_REDOP) ? (uint8_t)ev_nccl_redop_code(c->redop) : 0;
	if (c->p2p)
		p->peer = (c->have & HC_PEER) ? (int32_t)c->peer : -1;
	else if ((c->have & HC_ROOT) && (c->kind == EV_OP_BROADCAST || c->kind == EV_OP_REDUCE))
		p->peer = (int32_t)c->root;
	p->stream_ptr = (c->have & HC_STREAM) ? (uint64_t)c->stream : 0;
	uint64_t comm = nsys_comm_id_of(s, g->file, g->pid, p->comm);
	p->seq = next_seq(s, (uint64_t)g->rank, comm,
	                  p->p2p ? ((uint64_t)(uint32_t)p->peer << 8 | p->kind) : 0xC011ull << 40);
	return 0;
}

int nsys_group_mark(struct gpu *g, uint32_t tid, int64_t start, int64_t end, int is_start)
{
	struct thr *th = thr_get(g, tid);
	if (!th || gpu_queues(g))
		return EV_ERR_NOMEM;
	if (is_start) {
		if (th->depth++ == 0)
			th->group_unit = unit_new(g, tid, start, end, 0);
		return 0;
	}
	if (th->depth == 0)
		return 0;
	if (--th->depth == 0) {
		struct unit *u = unit_get(g, th->group_unit);
		if (u) {
			u->start = start;
			u->end = end;
			u->closed = 1;
		}
		th->group_unit = 0;
		gpu_tidy(g);
	}
	return 0;
}

/* coll_info marker: the oldest pending collective with the same kind,
 * communicator and size, else the oldest one without its info. */
void nsys_coll_info(struct gpu *g, const char *t, uint64_t *bad)
{
	int64_t type, root, redop, algo, proto, hash, size, ts, cs, ss, step;
	if (ev_nsys_marker_num(t, "collType", &type) || ev_nsys_marker_num(t, "algo", &algo) || ev_nsys_marker_num(t, "proto", &proto) ||
	    ev_nsys_marker_num(t, "commHash", &hash) || ev_nsys_marker_num(t, "data_size", &size)) {
		(*bad)++;
		return;
	}
	struct op *best = NULL;
	for (int pass = 0; pass < 2 && !best; pass++)
		for (uint64_t i = g->op_head; g->ops && i < g->op_tail; i++) {
			struct op *p = &g->ops[i % OPCAP];
			if (p->emitted || p->p2p || p->have_info)
				continue;
			if (pass == 0 && (p->kind != ev_nccl_func_code(type) || p->comm != (uint64_t)hash || p->bytes != (uint64_t)size))
				continue;
			best = p;
			break;
		}
	if (!best) {
		(*bad)++;
		return;
	}
	best->have_info = 1;
	best->algo = (uint8_t)ev_nccl_algo_code(algo);
	best->proto = (uint8_t)ev_nccl_proto_code(proto);
	if (!ev_nsys_marker_num(t, "redOp", &redop))
		best->redop = (uint8_t)ev_nccl_redop_code(redop);
	if (!ev_nsys_marker_num(t, "root", &root) && (best->kind == EV_OP_BROADCAST || best->kind == EV_OP_REDUCE))
		best->peer = (int32_t)root;
	if (!ev_nsys_marker_num(t, "type_size", &ts) && ts > 0 && ts < 256)
		best->type_size = (uint32_t)ts;
	if (!ev_nsys_marker_num(t, "chunkSteps", &cs) && cs > 0 && cs < 256)
		best->chunk_steps = (uint8_t)cs;
	if (!ev_nsys_marker_num(t, "sliceSteps", &ss) && ss > 0 && ss < 256)
		best->slice_steps = (uint8_t)ss;
	if (!ev_nsys_marker_num(t, "stepSize", &step) && step > 0 && step <= UINT32_MAX)
		best->step_size = (uint32_t)step;
}

static int add_chan(struct gpu *g, struct op *p, uint64_t a, uint64_t b, uint64_t c, uint64_t d)
{
	if (!p->chans && g->nchan_free)
		p->chans = g->chan_free[--g->nchan_free];
	if (!p->chans && !(p->chans = malloc(MAXCH * sizeof *p->chans)))
		return EV_ERR_NOMEM;
	if (p->nchan < MAXCH)
		p->chans[p->nchan++] = (struct chan){ a, b, c, d };
	p->chan_sum += a;
	return 0;
}

/* coll_kernel marker (one per channel): the oldest collective whose element
 * count it names and whose channels do not cover that count yet. */
int nsys_coll_kernel(struct gpu *g, const char *t, uint64_t *bad)
{
	int64_t warps, count, chunk, work, last, off;
	if (ev_nsys_marker_num(t, "nWarps", &warps) || ev_nsys_marker_num(t, "count", &count) || ev_nsys_marker_num(t, "chunkCount", &chunk) ||
	    ev_nsys_marker_num(t, "workCount", &work) || ev_nsys_marker_num(t, "lastChunkCount", &last) || ev_nsys_marker_num(t, "workOffset", &off) ||
	    count < 0 || chunk < 0 || work < 0 || last < 0 || off < 0) {
		(*bad)++;
		return 0;
	}
	struct op *best = NULL, *last_info = NULL;
	for (uint64_t i = g->op_head; g->ops && i < g->op_tail; i++) {
		struct op *p = &g->ops[i % OPCAP];
		if (p->emitted || p->p2p)
			continue;
		if (p->have_info)
			last_info = p;
		uint64_t elems = p->type_size ? p->bytes / p->type_size : p->bytes;
		if ((elems == (uint64_t)count || p->bytes == (uint64_t)count) && p->chan_sum < (uint64_t)count) {
			best = p;
			break;
		}
	}
	if (!best)
		best = last_info;
	if (!best) {
		(*bad)++;
		return 0;
	}
	if (warps > 0 && warps * 32 <= UINT16_MAX)
		best->nthreads = (uint16_t)(warps * 32);
	return add_chan(g, best, (uint64_t)work, (uint64_t)off, (uint64_t)chunk, (uint64_t)last);
}

/* p2p_kernel marker (one per channel part of a send or receive). */
int nsys_p2p_kernel(struct gpu *g, const char *t, uint64_t *bad)
{
	int64_t bytes, warps, type, peer, proto, chunk = 0;
	if (ev_nsys_marker_num(t, "Bytes", &bytes) || ev_nsys_marker_num(t, "p2pType", &type) || ev_nsys_marker_num(t, "peer", &peer) ||
	    ev_nsys_marker_num(t, "proto", &proto) || bytes < 0 || (type != 1 && type != 2)) {
		(*bad)++;
		return 0;
	}
	unsigned kind = type == 1 ? EV_OP_SEND : EV_OP_RECV;
	struct op *best = NULL;
	for (uint64_t i = g->op_head; g->ops && i < g->op_tail; i++) {
		struct op *p = &g->ops[i % OPCAP];
		if (p->emitted || !p->p2p || p->kind != kind || p->peer != peer)
			continue;
		if (p->chan_sum < p->bytes || (p->bytes == 0 && p->nchan == 0)) {
			best = p;
			break;
		}
	}
	if (!best) {
		(*bad)++;
		return 0;
	}
	best->proto = (uint8_t)ev_nccl_proto_code(proto);
	if (!ev_nsys_marker_num(t, "nWarps", &warps) && warps > 0 && warps * 32 <= UINT16_MAX)
		best->nthreads = (uint16_t)(warps * 32);
	if (!ev_nsys_marker_num(t, "chunkSize", &chunk) && chunk > 0 && chunk <= UINT32_MAX)
		best->step_size = (uint32_t)chunk;
	return add_chan(g, best, (uint64_t)bytes, 0, chunk > 0 ? (uint64_t)chunk : 0, 0);
}

/* Per kernel name: class and NCCL facts, computed once per distinct name
 * (the cache holds an index into a table of distinct names). */
int nsys_kinfo_of(struct ev_nsys *s, uint64_t name, struct kinfo *ki)
{
	uint64_t *v = ev_map_get(&s->kinfo, name ? name : 1);
	if (v) {
		*ki = ((const struct kinfo *)s->kinfos.data)[*v - 1];
		return 0;
	}
	const char *t = ev_strtab_get(s->st, name, NULL);
	if (!t)
		t = "";
	memset(ki, 0, sizeof *ki);
	/* One vocabulary for every converter (lib/nccl/names.c, lib/analysis/classify.c). */
	ki->kclass = (uint8_t)ev_kernel_class(EV_RULES_TRACELENS, t);
	ki->nccl = (uint8_t)ev_nccl_kernel_decode(t, &ki->kn);
	if (ki->nccl)
		ki->kclass = EV_KC_COMM;
	struct kinfo *slot = ev_vec_push(&s->kinfos);
	if (!slot)
		return EV_ERR_NOMEM;
	*slot = *ki;
	return ev_map_put(&s->kinfo, name ? name : 1, s->kinfos.len);
}

/* Algorithm, protocol, type and reduction the kernel's name and launch
 * geometry give where the call did not (ev_nccl_kname_apply), counted when
 * they are inferences rather than facts. */
static void apply_kname(struct ev_nsys *s, struct gpu *g, const struct kinfo *ki, struct ev_rec *r)
{
	unsigned had_proto = r->proto;
	unsigned hints = ev_nccl_kname_apply(&ki->kn, r);
	struct file *f = &s->files[g->file];
	if (hints & EV_NCCL_K_ALGO)
		f->algo_hint++;
	if (!had_proto && r->proto && !(ki->kn.known & EV_NCCL_K_PROTO))
		f->proto_threads++;
}

static int kind_fits(unsigned kernel, const struct op *p)
{
	if (kernel == EV_OP_UNKNOWN)
		return 1;
	if (kernel == EV_OP_SENDRECV)
		return p->p2p || p->kind == EV_OP_ALLTOALL || p->kind == EV_OP_GATHER || p->kind == EV_OP_SCATTER;
	return !p->p2p;
}

static int stream_fits(struct gpu *g, const struct op *p, uint32_t stream)
{
	if (!p->stream_ptr)
		return 1;
	uint64_t *sv = ev_map_get(&g->ptr_stream, p->stream_ptr);
	if (sv)
		return *sv == (uint64_t)stream + 1;
	uint64_t *pv = ev_map_get(&g->stream_ptr, (uint64_t)stream + 1);
	return !pv || *pv == p->stream_ptr;
}

static int emit_op(struct ev_nsys *s, struct gpu *g, struct op *p, const struct ev_rec *k, const struct kinfo *ki,
                   int group, int fallback)
{
	struct ev_rec r;
	ev_rec_init(&r);
	uint64_t comm = nsys_comm_id_of(s, g->file, g->pid, p->comm);
	struct comm *c = nsys_comm_find(s, comm);
	r.type = p->p2p ? EV_P2P : EV_COLL;
	r.op = p->kind;
	r.rank = k->rank;
	r.stream = k->stream;
	r.ts = k->ts;
	r.dur = k->dur;
	r.src = k->src;
	r.bytes = p->bytes;
	if (c && (p->kind == EV_OP_ALLGATHER || p->kind == EV_OP_REDUCESCATTER))
		r.bytes = p->bytes * c->nranks; /* the call names the smaller buffer */
	int same = ki->kn.coll == p->kind || (ki->kn.coll == EV_OP_SENDRECV && p->p2p);
	if (p->elems) {
		/* PyTorch shapes count the first tensor's elements: AllGather's
		 * input (one rank's share), ReduceScatter's input (all of it);
		 * bytes need the kernel's type. */
		unsigned ts = same && ki->kn.coll != EV_OP_SENDRECV ? ev_dtype_size(ki->kn.dtype) : 0;
		uint64_t el = p->bytes;
		if (c && p->kind == EV_OP_ALLGATHER && __builtin_mul_overflow(el, (uint64_t)c->nranks, &el))
			el = 0;
		r.bytes = ts && !__builtin_mul_overflow(el, (uint64_t)ts, &el) ? el : 0;
		if (!ts)
			s->files[g->file].torch_untyped++;
	}
	r.dtype = same && ki->kn.dtype && ki->kn.coll != EV_OP_SENDRECV ? ki->kn.dtype : (uint8_t)dtype_from_size(p->type_size);
	if ((p->kind == EV_OP_ALLGATHER || p->kind == EV_OP_BROADCAST || p->p2p) && p->type_size <= 1)
		r.dtype = p->type_size == 1 ? EV_DT_INT8 : r.dtype;
	if (!r.dtype && (p->p2p || p->kind == EV_OP_ALLGATHER || p->kind == EV_OP_BROADCAST))
		r.dtype = EV_DT_INT8; /* sizes in bytes */
	if (p->kind == EV_OP_ALLREDUCE || p->kind == EV_OP_REDUCE || p->kind == EV_OP_REDUCESCATTER)
		r.redop = p->redop;
	r.comm = comm;
	r.seq = p->seq;
	r.peer = p->peer >= 0 ? nsys_comm_global(s, comm, p->peer) : -1;
	r.id = k->id;
	r.channel = (uint16_t)(p->nchan ? p->nchan : k->aux);
	r.nthreads = k->nthreads ? k->nthreads : p->nthreads;
	r.algo = p->have_info ? p->algo : 0;
	r.proto = p->proto;
	r.chunk_steps = p->chunk_steps;
	r.slice_steps = p->slice_steps;
	r.step_size = p->step_size;
	r.aux = c ? c->nranks : 0;
	if (same)
		apply_kname(s, g, ki, &r);
	r.name = k->name;
	r.sig = p->name;
	r.flags = (uint16_t)((group ? EV_F_GROUP : 0) | (fallback ? EV_F_FALLBACK : 0));
	/* A call inside the profiled window is kept with its kernel, wherever
	 * the kernel runs. */
	int keep = nsys_in_window(s, g, p->call_ts);
	int rc = keep ? nsys_write_status(s, ev_write(s->w, &r)) : 0;
	for (uint32_t i = 0; keep && i < p->nchan && !rc; i++) {
		struct ev_rec ch = r;
		ch.type = EV_CHAN;
		ch.flags = 0;
		ch.peer = -1;
		ch.channel = (uint16_t)i;
		ch.bytes = p->chans[i].a;
		ch.dur = p->chans[i].b;
		ch.aux = (uint32_t)p->chans[i].c;
		ch.step = (uint32_t)p->chans[i].d;
		ch.name = ch.sig = 0;
		ch.algo = ch.proto = ch.redop = 0;
		ch.chunk_steps = ch.slice_steps = 0;
		ch.step_size = 0;
		ch.nthreads = 0;
		rc = nsys_write_status(s, ev_write(s->w, &ch));
	}
	op_done(g, p);
	if (fallback)
		g->fallback++;
	else
		g->matched++;
	return rc;
}

/* An NCCL kernel: find the ops it runs (by correlation id, else the oldest
 * compatible unit whose launch was not seen) and write them at its time. */
int nsys_nccl_kernel(struct ev_nsys *s, struct gpu *g, const struct ev_rec *k, int64_t raw_start, const struct kinfo *ki)
{
	struct unit *u = NULL;
	int fallback = 0;
	for (uint64_t i = g->unit_head; g->units && i < g->unit_tail && !u; i++) {
		struct unit *x = &g->units[i % UNITCAP];
		for (uint32_t j = 0; j < x->ncorr; j++)
			if (x->corr[j] == k->id && k->id) {
				u = x;
				break;
			}
	}
	if (!u) {
		for (unsigned j = 0; j < 64; j++)
			if (k->id && g->recent_corr[j] == k->id)
				return 0; /* another kernel of an op set already written */
	}
	if (!u) {
		for (uint64_t i = g->unit_head; g->units && i < g->unit_tail && !u; i++) {
			struct unit *x = &g->units[i % UNITCAP];
			if (!x->closed || x->ncorr || !x->nops || x->start > raw_start)
				continue;
			for (uint64_t q = g->op_head; q < g->op_tail; q++) {
				struct op *p = &g->ops[q % OPCAP];
				if (p->unit == x->id && !p->emitted && kind_fits(ki->kn.coll, p) && stream_fits(g, p, k->stream)) {
					u = x;
					fallback = 1;
					break;
				}
			}
		}
	}
	if (!u) {
		/* No API call known: a collective from the kernel alone. */
		struct ev_rec r = *k;
		r.type = EV_COLL;
		r.op = ki->kn.coll;
		r.dtype = 0;
		r.algo = r.proto = 0;
		r.nthreads = k->nthreads;
		apply_kname(s, g, ki, &r);
		r.channel = (uint16_t)k->aux;
		r.aux = 0;
		r.flags = EV_F_UNLINKED;
		r.seq = next_seq(s, k->rank, 0, 0xC011ull << 40);
		g->kernels_alone++;
		return nsys_in_window(s, g, r.ts) ? nsys_write_status(s, ev_write(s->w, &r)) : 0;
	}
	int group = u->total > 1;
	int rc = 0, any = 0;
	for (uint64_t q = g->op_head; q < g->op_tail && !rc; q++) {
		struct op *p = &g->ops[q % OPCAP];
		if (p->unit != u->id || p->emitted || !stream_fits(g, p, k->stream))
			continue;
		if (p->stream_ptr && !ev_map_get(&g->ptr_stream, p->stream_ptr)) {
			if (ev_map_put(&g->ptr_stream, p->stream_ptr, (uint64_t)k->stream + 1) ||
			    ev_map_put(&g->stream_ptr, (uint64_t)k->stream + 1, p->stream_ptr))
				return nsys_nomem(s);
		}
		rc = emit_op(s, g, p, k, ki, group, fallback);
		u->nops--;
		any = 1;
	}
	if (!any)
		g->kernels_alone++;
	if (u->ncorr < NCORR && k->id) {
		int have = 0;
		for (uint32_t j = 0; j < u->ncorr; j++)
			have |= u->corr[j] == k->id;
		if (!have)
			u->corr[u->ncorr++] = k->id;
	}
	g->recent_corr[g->recent_pos++ % 64] = k->id;
	gpu_tidy(g);
	return rc;
}


/* A launch inside an NCCL call or group end: note its correlation id on
 * the newest unit of this thread whose window holds it. */
void nsys_note_launch(struct gpu *g, uint32_t tid, int64_t start, uint64_t corr)
{
	for (uint64_t i = g->unit_tail; i > g->unit_head; i--) {
		struct unit *u = &g->units[(i - 1) % UNITCAP];
		if (u->tid != tid || !u->closed || !u->nops || start < u->start || start > u->end)
			continue;
		if (u->ncorr < NCORR && corr)
			u->corr[u->ncorr++] = corr;
		break;
	}
}

/* PyTorch's collective ranges with shapes (nsys profile
 * --pytorch=autograd-shapes-nvtx): "nccl:all_reduce, op_id = 7, sizes =
 * [[1024, 16]], ...".  The element count of the first tensor is kept per
 * thread for the NCCL call made inside the range. */
int nsys_torch_range(struct gpu *g, uint32_t tid, int64_t start, int64_t end, const char *text)
{
	char name[48];
	const char *comma = strchr(text, ',');
	size_t n = comma ? (size_t)(comma - text) : strlen(text);
	const char *sz = strstr(text, "sizes = [[");
	if (!sz || n >= sizeof name)
		return 0;
	memcpy(name, text, n);
	name[n] = '\0';
	unsigned kind = ev_torch_coll(name);
	if (kind == EV_OP_UNKNOWN)
		return 0;
	uint64_t numel = 1;
	const char *p = sz + 10;
	while (*p != ']') {
		char *stop;
		unsigned long long d = strtoull(p, &stop, 10);
		if (stop == p || __builtin_mul_overflow(numel, (uint64_t)d, &numel))
			return 0;
		p = stop;
		if (*p == ',' && p[1] == ' ')
			p += 2;
		else if (*p != ']')
			return 0;
	}
	struct thr *th = thr_get(g, tid);
	if (!th)
		return EV_ERR_NOMEM;
	th->torch_start = start;
	th->torch_end = end;
	th->torch_numel = numel;
	th->torch_kind = kind;
	return 0;
}

/* A stock call without payload values inside such a range on its thread:
 * its element count, for the kinds whose NCCL buffer is the first tensor
 * (AllReduce, AllGather's input, ReduceScatter's input, Broadcast,
 * Reduce).  1 when filled. */
int nsys_torch_fill(struct gpu *g, uint32_t tid, int64_t start, struct call *c)
{
	for (size_t i = 0; i < g->nthr; i++) {
		struct thr *th = &g->thr[i];
		if (th->tid != tid)
			continue;
		if (!th->torch_kind || start < th->torch_start || start > th->torch_end || th->torch_kind != c->kind ||
		    (c->kind != EV_OP_ALLREDUCE && c->kind != EV_OP_ALLGATHER && c->kind != EV_OP_REDUCESCATTER &&
		     c->kind != EV_OP_BROADCAST && c->kind != EV_OP_REDUCE) || th->torch_numel > INT64_MAX)
			return 0;
		c->bytes = (int64_t)th->torch_numel;
		c->have |= HC_BYTES | HC_ELEMS;
		return 1;
	}
	return 0;
}
