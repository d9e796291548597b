/* SPDX-License-Identifier: MIT */
/*
 * flows.c - flow arrows between slices: a runtime call to the kernel it
 * launched, a send to its receive, a p2p send to its receive, and each
 * collective chained across its ranks.  Both ends of an arrow are written
 * together once both are known, with an id unique in the whole trace;
 * viewers sort the events, so arrows need not be in time order in the file.
 * What waits for a partner is bounded: a fixed table of launches, a
 * bounded count of message ends, and the collective matcher's limits.
 */
#include <stdlib.h>
#include <string.h>

#include "perfetto_int.h"

/* A collective's slice (pid, tid) rides in the matcher's 64-bit data. */
#define EP_PID_BITS 24
#define EP_TID_BITS 40
#define MAX_OPEN_COLLS (1u << 16)

/* The latest instant of slice e not after t, or e's start (strictly inside
 * the slice, so that the viewer binds the end to it). */
static int64_t inside(const struct pf_ep *e, int64_t t)
{
	int64_t last = e->end > e->ts ? e->end - 1 : e->ts;
	return t < e->ts ? e->ts : t > last ? last : t;
}

/* A flow from slice `from` to slice `to`, drawn in time order: it leaves
 * `from` at its start and lands in `to` at the same instant, or at to's
 * start if that is later.  When `to` ended before `from` started (clocks
 * not aligned), the arrow goes from to's end to from's start instead and
 * is counted. */
void pf_flow_pair(ev_perfetto *p, int kind, const char *name, const struct pf_ep *from, const struct pf_ep *to)
{
	static const char *const cats[] = { "launch", "message", "p2p", "collective", "critical_path", "pattern" };
	struct pf_buf *b = &p->ob;
	uint64_t id = ++p->flow_id;
	int64_t t_from = from->ts, t_to = inside(to, t_from);
	const struct pf_ep *first = from, *second = to;
	if (t_to < t_from) {
		first = to, second = from;
		int64_t t = t_to;
		t_to = t_from;
		t_from = t;
		p->reversed[kind]++;
	}
	p->flows[kind]++;
	for (int end = 0; end < 2; end++) {
		const struct pf_ep *e = end ? second : first;
		pf_event(p, end ? "f" : "s", e->pid, e->tid);
		if (end)
			pf_puts(b, ",\"bp\":\"e\"");
		pf_kv_u64(b, "id", id);
		pf_kv_str(b, "cat", cats[kind]);
		pf_kv_str(b, "name", name);
		pf_puts(b, ",\"ts\":");
		pf_us(b, pf_rel_ts(p, end ? t_to : t_from));
		pf_puts(b, "}");
	}
}

/* Runtime calls by (rank, correlation id) in a fixed table: a newer call
 * takes an older one's slot, so the table never grows. */
static struct pf_launch *launch_slot(ev_perfetto *p, const struct ev_rec *r, uint64_t *key)
{
	*key = ((uint64_t)r->rank << 32 | r->id) + 1;
	return &p->launch[(r->id + (uint64_t)r->rank * 40503u) & (PF_LAUNCH_SLOTS - 1)];
}

static void flow_launch_api(ev_perfetto *p, const struct ev_rec *r, const struct pf_ep *e)
{
	uint64_t key;
	if (!r->id)
		return;
	struct pf_launch *l = launch_slot(p, r, &key);
	l->key = key;
	l->ep = *e;
}

static void flow_launch_kernel(ev_perfetto *p, const struct ev_rec *r, const struct pf_ep *e)
{
	uint64_t key;
	if (!r->id || (r->flags & EV_F_UNLINKED))
		return;
	struct pf_launch *l = launch_slot(p, r, &key);
	if (l->key == key && l->ep.ts <= e->ts)
		pf_flow_pair(p, EV_PERFETTO_LAUNCH, "launch", &l->ep, e);
}

/* A mark of a kernel-patterns instance (flag synth, id the instance, aux
 * its place: 0 the op's, then its GPU events'): the op's mark is
 * remembered in a fixed table by (src, rank, id), and an arrow goes from
 * it to each GPU event's mark, so the instance's op and GPU events are
 * linked (each mark binds to the slice it sits in). */
static int flow_pattern(ev_perfetto *p, const struct ev_rec *r, const struct pf_ep *e)
{
	if (!(r->flags & EV_F_SYNTH) || !r->id)
		return EV_OK;
	if (!p->pmark && !(p->pmark = calloc(PF_LAUNCH_SLOTS, sizeof *p->pmark)))
		return EV_ERR_NOMEM;
	uint64_t key = (((uint64_t)r->src << 48) ^ ((uint64_t)r->rank << 32) ^ r->id) + 1;
	struct pf_launch *l = &p->pmark[(key * 0x9E3779B97F4A7C15ull) >> 48];
	if (r->aux == 0) {
		l->key = key;
		l->ep = *e;
	} else if (l->key == key) {
		pf_flow_pair(p, EV_PERFETTO_PATTERN, "pattern", &l->ep, e);
	}
	return EV_OK;
}

/* The connection (kind, comm, channel, from -> to), made on first use. */
static struct pf_conn *get_conn(ev_perfetto *p, int kind, uint64_t comm, uint32_t channel, uint32_t from, uint32_t to)
{
	unsigned char k[21];
	ev_put64(k, comm);
	ev_put32(k + 8, channel);
	ev_put32(k + 12, from);
	ev_put32(k + 16, to);
	k[20] = (unsigned char)kind;
	uint64_t key = ev_hash64(k, sizeof k);
	key = key ? key : 1;
	uint64_t *ix = ev_map_get(&p->conn_ix, key);
	if (ix)
		return (struct pf_conn *)p->conns.data + (*ix - 1);
	struct pf_conn *c = ev_vec_push(&p->conns);
	if (!c || ev_map_put(&p->conn_ix, key, p->conns.len))
		return NULL;
	return c;
}

/* Append e to c's ring, doubling it when full.  EV_OK or EV_ERR_NOMEM. */
static int conn_push(struct pf_conn *c, const struct pf_ep *e)
{
	if (c->len == c->cap) {
		uint32_t ncap = c->cap ? c->cap * 2 : 4;
		struct pf_ep *nq = malloc(ncap * sizeof *nq);
		if (!nq)
			return EV_ERR_NOMEM;
		for (uint32_t i = 0; i < c->len; i++)
			nq[i] = c->q[(c->head + i) % c->cap];
		free(c->q);
		c->q = nq;
		c->cap = ncap;
		c->head = 0;
	}
	c->q[(c->head + c->len) % c->cap] = *e;
	c->len++;
	return EV_OK;
}

/* One end of a message on a connection; side 1: it sends, 2: it receives.
 * Messages on a connection arrive in the order they were sent, so the k-th
 * send matches the k-th receive, whichever comes first. */
static void flow_message(ev_perfetto *p, int kind, uint64_t comm, uint32_t channel, uint32_t from, uint32_t to,
                         int side, const struct pf_ep *e, const char *name)
{
	struct pf_conn *c = get_conn(p, kind, comm, channel, from, to);
	if (!c) {
		p->ob.oom = 1;
		return;
	}
	if (c->len && c->side != side) {
		struct pf_ep *other = &c->q[c->head];
		c->head = (c->head + 1) % c->cap;
		c->len--;
		p->pending--;
		pf_flow_pair(p, kind, name, side == 1 ? e : other, side == 1 ? other : e);
		return;
	}
	if (p->pending >= p->o.max_pending) {
		p->dropped++;
		return;
	}
	if (conn_push(c, e) != EV_OK) {
		p->ob.oom = 1;
		return;
	}
	c->side = side;
	p->pending++;
}

/* Nothing to do when the matcher lets a collective go: its chain was drawn
 * arrival by arrival. */
static int coll_released(void *ctx, const struct ev_coll_done *d)
{
	(void)ctx;
	(void)d;
	return EV_OK;
}

/* A collective's arrival: an arrow from the previous rank's arrival of the
 * same (comm, seq, kind), which the matcher keeps. */
static int flow_coll(ev_perfetto *p, const struct ev_rec *r, const struct pf_ep *e, const char *name)
{
	uint32_t nranks = r->aux;
	if (!nranks) {
		const struct ev_comm_info *ci = ev_meta_comm(p->meta, r->comm);
		nranks = ci ? ci->nranks : 0;
	}
	if (nranks == 1)
		return EV_OK;
	if (e->pid < 0 || e->pid >= (1LL << EP_PID_BITS) || e->tid < 0 || e->tid >= (1LL << EP_TID_BITS)) {
		p->dropped++;
		return EV_OK;
	}
	struct ev_coll_key k = { 0, r->comm, r->seq, (uint32_t)r->type << 8 | r->op };
	struct ev_coll_arrival prev;
	uint64_t data = (uint64_t)e->pid << EP_TID_BITS | (uint64_t)e->tid;
	int rc = ev_collmatch_add(p->colls, &k, nranks, r, data, &prev);
	if (rc != EV_OK)
		return rc;
	if (prev.rank != UINT32_MAX) {
		struct pf_ep last = { prev.ts, prev.end, (int64_t)(prev.data >> EP_TID_BITS),
		                      (int64_t)(prev.data & ((1ULL << EP_TID_BITS) - 1)) };
		pf_flow_pair(p, EV_PERFETTO_COLLECTIVE, name, &last, e);
	}
	return EV_OK;
}

/* The flows record r, whose slice is e, starts or completes.  opw: the
 * name of its op.  EV_OK or the matcher's status; out of memory otherwise
 * sets ob.oom. */
int pf_flows_add(ev_perfetto *p, const struct ev_rec *r, const struct pf_ep *e, const char *opw)
{
	int snd;
	switch (r->type) {
	case EV_API:
		flow_launch_api(p, r, e);
		break;
	case EV_KERNEL: case EV_MEMCPY: case EV_MEMSET:
		flow_launch_kernel(p, r, e);
		break;
	case EV_SEND: case EV_RECV:
		if (r->peer < 0)
			break;
		snd = r->type == EV_SEND;
		flow_message(p, EV_PERFETTO_MESSAGE, r->comm, r->channel, snd ? r->rank : (uint32_t)r->peer,
		             snd ? (uint32_t)r->peer : r->rank, snd ? 1 : 2, e, "message");
		break;
	case EV_P2P:
		if (r->peer < 0 || (r->op != EV_OP_SEND && r->op != EV_OP_RECV))
			break;
		snd = r->op == EV_OP_SEND;
		flow_message(p, EV_PERFETTO_P2P, r->comm, 0, snd ? r->rank : (uint32_t)r->peer,
		             snd ? (uint32_t)r->peer : r->rank, snd ? 1 : 2, e, "p2p");
		break;
	case EV_COLL:
		return flow_coll(p, r, e, opw ? opw : "collective");
	case EV_MARK:
		return flow_pattern(p, r, e);
	default:
		break;
	}
	return EV_OK;
}

int pf_flows_init(ev_perfetto *p)
{
	ev_vec_init(&p->conns, sizeof(struct pf_conn));
	ev_map_init(&p->conn_ix);
	p->launch = calloc(PF_LAUNCH_SLOTS, sizeof *p->launch);
	struct ev_collmatch_limits lim = { MAX_OPEN_COLLS, 0 };
	if (!p->launch || ev_collmatch_new(&p->colls, &lim, coll_released, p) != EV_OK)
		return EV_ERR_NOMEM;
	return EV_OK;
}

/* Count what never found its partner: message ends still waiting, and
 * collectives still open (released now) that never saw all their ranks. */
int pf_flows_finish(ev_perfetto *p)
{
	for (size_t i = 0; i < p->conns.len; i++)
		p->unmatched += ((struct pf_conn *)p->conns.data)[i].len;
	if (ev_collmatch_flush(p->colls) != EV_OK)
		return EV_ERR_NOMEM;
	struct ev_collmatch_counts cc;
	ev_collmatch_get_counts(p->colls, &cc);
	p->evicted += cc.evicted + cc.flushed;
	return EV_OK;
}

void pf_flows_free(ev_perfetto *p)
{
	for (size_t i = 0; i < p->conns.len; i++)
		free(((struct pf_conn *)p->conns.data)[i].q);
	ev_vec_free(&p->conns);
	ev_map_free(&p->conn_ix);
	free(p->launch);
	free(p->pmark);
	ev_collmatch_free(p->colls);
}
