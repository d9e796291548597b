/* SPDX-License-Identifier: MIT */
/*
 * expand.c - one collective or send/recv of one rank into the messages NCCL
 * posts: channel by channel, loop by loop, ring step by ring step and slice
 * by slice (docs/nccl-model.md).  Every rank computes its part of a
 * collective from the same parameters, so the SEND of one rank and the
 * RECV of its peer agree on size and tag without seeing each other.
 */
#include <string.h>

#include "nccl/sched_int.h"

/* ------------------------------------------------------------------ */
/* Rings and trees.                                                    */

/* Ring order of a channel: from #ring (channel mod the number given) or
 * comm rank order.  -1 if me is not in the ring. */
int sched_ring_of(struct ev_nccl_sched *s, struct cur *c, unsigned ch, const int32_t **order, int *pos)
{
	struct comm_st *cm = c->comm;
	*pos = -1;
	if (cm->nrings) {
		const struct ev_ring_info *ri = ev_meta_ring(s->meta, cm->id, ch % cm->nrings);
		if (!ri || ri->n != cm->n)
			return -1;
		*order = ri->order;
		for (uint32_t i = 0; i < ri->n; i++)
			if (ri->order[i] == (int32_t)c->me)
				*pos = (int)i;
		return *pos < 0 ? -1 : 0;
	}
	*order = cm->ranks;
	*pos = c->mc;
	return 0;
}

/* Tree links of me on a channel: #tree lines, else NCCL's double binary
 * tree across nodes with a chain inside each node. */
int sched_tree_of(struct ev_nccl_sched *s, struct cur *c, unsigned ch, struct tnode *t)
{
	struct comm_st *cm = c->comm;
	t->up = -1;
	t->down[0] = t->down[1] = t->down[2] = -1;
	if (cm->ntrees) {
		const struct ev_tree_info *ti = ev_meta_tree(s->meta, cm->id, ch % cm->ntrees);
		for (size_t i = 0; ti && i < ti->n; i++)
			if (ti->nodes[i].rank == (int32_t)c->me) {
				t->up = ti->nodes[i].up;
				memcpy(t->down, ti->nodes[i].down, sizeof t->down);
				return 0;
			}
		return -1;
	}
	int di = 0;
	if (cm->loc_next[c->mc] >= 0)
		t->down[di++] = cm->loc_next[c->mc];
	if (cm->loc_prev[c->mc] >= 0) {
		t->up = cm->loc_prev[c->mc];
		return 0;
	}
	/* A node head: links of the inter-node tree (tree 1 for the second half of the channels). */
	int u, d0, d1, r = cm->node_ix[c->mc], nn = (int)cm->nheads;
	int second = c->pl.nch >= 2 && ch >= c->pl.nch / 2;
	if (second) {
		int rr = nn % 2 == 0 ? nn - 1 - r : (r - 1 + nn) % nn;
		ev_nccl_btree(nn, rr, &u, &d0, &d1);
		if (nn % 2 == 0) {
			u = u < 0 ? -1 : nn - 1 - u;
			d0 = d0 < 0 ? -1 : nn - 1 - d0;
			d1 = d1 < 0 ? -1 : nn - 1 - d1;
		} else {
			u = u < 0 ? -1 : (u + 1) % nn;
			d0 = d0 < 0 ? -1 : (d0 + 1) % nn;
			d1 = d1 < 0 ? -1 : (d1 + 1) % nn;
		}
	} else {
		ev_nccl_btree(nn, r, &u, &d0, &d1);
	}
	t->up = u < 0 ? -1 : cm->heads[u];
	if (d0 >= 0 && di < 3)
		t->down[di++] = cm->heads[d0];
	if (d1 >= 0 && di < 3)
		t->down[di++] = cm->heads[d1];
	return 0;
}

/* ------------------------------------------------------------------ */
/* Loops of a channel.                                                 */

/* A loop of a channel: nelem(chunk) = clamp(limit - (base + chunk*stride), 0, cc). */
struct loop { uint64_t base, stride, cc, limit; };

static uint64_t nelem_of(const struct loop *l, uint64_t chunk)
{
	uint64_t at = l->base + chunk * l->stride;
	if (at >= l->limit)
		return 0;
	return umin(l->cc, l->limit - at);
}

struct loopit {
	int ar;                 /* AllReduce: n chunks per loop */
	enum ev_nccl_regime reg;
	uint64_t n, off, cnt, cc0, lcc;
	unsigned bid, nch;
	uint64_t size, chunk_elems, min_chunk, simple_round;
	int simple;
	uint64_t pos;
	uint64_t align;         /* 2.22+ last-loop alignment (16 bytes in elements) */
};

static int loop_next(struct loopit *it, struct loop *l)
{
	if (it->reg != EV_NCCL_REG_A) {
		if (it->pos >= it->cnt)
			return 0;
		uint64_t rem = it->cnt - it->pos;
		if (it->ar) {
			uint64_t lc = it->n * it->cc0;
			uint64_t cc = it->cc0;
			if (rem < lc)
				cc = it->reg == EV_NCCL_REG_B && it->lcc ? it->lcc : align_up(div_up(rem, it->n), it->align);
			l->base = 0;
			l->stride = cc;
			l->cc = cc;
			l->limit = rem;
			it->pos = sat_add(it->pos, lc);
		} else {
			l->base = 0;
			l->stride = 0;
			l->cc = it->cc0;
			l->limit = rem;
			it->pos = sat_add(it->pos, it->cc0);
		}
		return 1;
	}
	/* <= 2.19: every channel walks the whole grid loop. */
	if (it->pos >= it->size)
		return 0;
	uint64_t go = it->pos, rem = it->size - go;
	uint64_t per = it->ar ? (uint64_t)it->nch * it->n : it->nch;
	uint64_t rcs;
	if (it->simple)
		rcs = align_up(umin(it->chunk_elems, div_up(rem, per)), it->simple_round);
	else
		rcs = umin(it->chunk_elems, div_up(rem, per * it->min_chunk) * it->min_chunk);
	if (rcs == 0)
		rcs = 1;
	if (it->ar && it->simple) {
		l->base = go + (uint64_t)it->bid * it->n * rcs;
		l->stride = rcs;
	} else if (it->ar) {
		l->base = go + (uint64_t)it->bid * rcs;
		l->stride = (uint64_t)it->nch * rcs;
	} else {
		l->base = go + (uint64_t)it->bid * rcs;
		l->stride = 0;
	}
	l->cc = rcs;
	l->limit = it->size;
	it->pos = sat_add(it->pos, per * it->chunk_elems);
	return 1;
}

static void loop_init(struct ev_nccl_sched *s, struct cur *c, struct loopit *it, const struct ev_nccl_part *p,
                      unsigned bid, int ar)
{
	memset(it, 0, sizeof *it);
	it->ar = ar;
	it->reg = s->nchan ? EV_NCCL_REG_B : s->regime;
	it->n = c->comm->n;
	it->align = umax(1, 16 / c->pl.T);
	if (it->reg != EV_NCCL_REG_A) {
		it->off = p->off;
		it->cnt = p->cnt;
		it->cc0 = p->cc ? p->cc : 1;
		it->lcc = p->lcc;
		return;
	}
	it->bid = bid;
	it->nch = c->pl.nch;
	it->size = c->pl.count;
	it->chunk_elems = umax(1, c->pl.chunk_bytes / c->pl.T);
	it->simple = c->pl.proto == EV_PROTO_SIMPLE;
	unsigned nt = c->pl.nthreads ? c->pl.nthreads :
	              (c->pl.proto == EV_PROTO_LL128 ? 640 : c->pl.proto == EV_PROTO_LL ? 512 : 544);
	it->simple_round = umax(1, (uint64_t)(nt > 32 ? nt - 32 : nt) * 8 / c->pl.T);
	it->min_chunk = c->pl.proto == EV_PROTO_LL ? umax(1, (uint64_t)nt * 8 / c->pl.T)
	                                           : umax(1, (uint64_t)nt * (60 / c->pl.T) / 2);
}

/* ------------------------------------------------------------------ */
/* Expansion per algorithm.  Each returns EV_OK or a status; tails of   */
/* every channel are added to the chain.                                */

struct chx {
	uint32_t lane;
	struct sendq q;
	uint32_t step;
};

/* The tails a ring or pipeline channel leaves for what follows: its last
 * send (the queue's), then its last receive when it had one. */
static int chx_tails(struct cur *c, const struct chx *x, int has_last_recv, uint32_t last_recv)
{
	int rc = x->q.has_last ? sched_tail_add(c->ch, x->q.last) : 0;
	if (!rc && has_last_recv)
		rc = sched_tail_add(c->ch, last_recv);
	return rc;
}

/* Dependencies of a send: the previous sends of the channel (program
 * order, FIFO slots; see struct sendq) and the data it forwards, else the
 * channel start. */
static int ndeps_of(uint32_t *d, unsigned *ireq, const struct chx *x, const struct cur *c, int has_data,
                    uint32_t data)
{
	*ireq = 0;
	int k = sched_sendq_deps(&x->q, d, 0, ireq);
	if (has_data)
		d[k++] = data;
	else if (!x->q.has_last && c->has_start)
		d[k++] = c->start;
	return k;
}

/* Steps per message of a ring or pipeline channel: a SIMPLE slice, else one. */
static unsigned msg_steps(const struct cur *c, int sliced)
{
	if (c->pl.proto != EV_PROTO_SIMPLE)
		return 1;
	return sliced ? c->pl.slice_steps : c->pl.chunk_steps;
}

/* Recv-side dependency for ops that only wait for the channel start. */
static int start_deps(uint32_t *d, const struct cur *c)
{
	if (c->has_start) {
		d[0] = c->start;
		return 1;
	}
	return 0;
}

static double lat_cost(struct ev_nccl_sched *s, enum ev_nccl_prim prim, unsigned proto, uint64_t bytes)
{
	return ev_nccl_lat_cost(s->lat, prim, proto, bytes);
}

/* Ring AllReduce, AllGather, ReduceScatter on one channel. */
static int ring_channel(struct ev_nccl_sched *s, struct cur *c, const struct ev_nccl_part *p, unsigned bid)
{
	struct chx x = { .lane = c->lane0 + bid };
	sched_sendq_init(s, &x.q, msg_steps(c, 1));
	const int32_t *order;
	int pos;
	if (sched_ring_of(s, c, bid, &order, &pos))
		return 1; /* reported by the caller */
	uint32_t n = c->comm->n;
	int32_t next = order[(pos + 1) % n], prev = order[(pos + n - 1) % n];
	int ar = c->pl.coll == EV_OP_ALLREDUCE;
	uint32_t nsteps = ar ? 2 * (n - 1) : n - 1;
	uint64_t T = c->pl.T;
	struct loopit it;
	struct loop l;
	loop_init(s, c, &it, p, bid, ar);
	uint32_t avail[2] = { 0, 0 };
	int have_avail = 0, rc = 0;
	uint32_t last_recv = 0;
	int has_last_recv = 0;
	while (loop_next(&it, &l)) {
		for (uint32_t k = 0; k < nsteps; k++) {
			uint64_t se, re;
			if (ar) {
				se = nelem_of(&l, (uint64_t)((pos + 2 * n - 1 - (k % n)) % n));
				re = nelem_of(&l, (uint64_t)((pos + 2 * n - 2 - (k % n)) % n));
			} else {
				se = re = nelem_of(&l, 0);
			}
			uint16_t fl = ar ? (k <= n - 2 ? EV_F_PHASE_RS : EV_F_PHASE_AG) :
			              c->pl.coll == EV_OP_REDUCESCATTER ? EV_F_PHASE_RS : EV_F_PHASE_AG;
			uint64_t ssl[2], rsl[2];
			int nsl = ev_nccl_slices(&c->pl, se, ssl);
			ev_nccl_slices(&c->pl, re, rsl);
			for (int sl = 0; sl < nsl; sl++) {
				uint32_t d[3], id, after;
				unsigned ireq;
				int nd = ndeps_of(d, &ireq, &x, c, k > 0 && have_avail, avail[sl]);
				rc = sched_put_msg(s, c, 1, next, bid, x.lane, ssl[sl] * T, fl, x.step, d, nd, ireq, &id, &after);
				if (rc)
					return rc;
				sched_sendq_push(&x.q, id, after);
			}
			/* Receive what prev sent at this step, then reduce/copy it. */
			int prim = ar ? (k < n - 2 ? EV_NCCL_P_RRS : k == n - 2 ? EV_NCCL_P_RRCS
			                                         : k < nsteps - 1 ? EV_NCCL_P_RCS : -1)
			              : c->pl.coll == EV_OP_REDUCESCATTER ? (k < n - 2 ? EV_NCCL_P_RRS : EV_NCCL_P_RRC)
			                                                  : (k < n - 2 ? EV_NCCL_P_RCS : -1);
			for (int sl = 0; sl < nsl; sl++) {
				uint32_t d[1], id, after;
				int nd = start_deps(d, c);
				rc = sched_put_msg(s, c, 0, prev, bid, x.lane, rsl[sl] * T, fl, x.step, d, nd, 0, &id, &after);
				if (rc)
					return rc;
				uint32_t out = after;
				double cost = prim >= 0 ? lat_cost(s, (enum ev_nccl_prim)prim, c->pl.proto, rsl[sl] * T) : 0;
				if (cost > 0) {
					unsigned kind = prim == EV_NCCL_P_RCS ? EV_CALC_COPY : EV_CALC_REDUCE;
					rc = sched_put_calc(s, c, kind, x.lane, rsl[sl] * T, cost, &after, 1, (uint16_t)bid, &out);
					if (rc)
						return rc;
				}
				avail[sl] = out;
				last_recv = out;
				has_last_recv = 1;
			}
			have_avail = 1;
			x.step++;
		}
	}
	return chx_tails(c, &x, has_last_recv, last_recv);
}

/* Broadcast (pipeline from the root) and Reduce (pipeline to the root). */
static int pipe_channel(struct ev_nccl_sched *s, struct cur *c, const struct ev_nccl_part *p, unsigned bid,
                        int32_t root)
{
	struct chx x = { .lane = c->lane0 + bid };
	sched_sendq_init(s, &x.q, msg_steps(c, 0));
	const int32_t *order;
	int pos;
	if (sched_ring_of(s, c, bid, &order, &pos))
		return 1;
	uint32_t n = c->comm->n;
	int32_t next = order[(pos + 1) % n], prev = order[(pos + n - 1) % n];
	int bc = c->pl.coll == EV_OP_BROADCAST;
	int i_root = (int32_t)c->me == root;
	int do_recv, do_send, prim;
	if (bc) {
		do_send = next != root;
		do_recv = !i_root;
		prim = do_send && do_recv ? EV_NCCL_P_RCS : -1;
	} else {
		do_send = !i_root;
		do_recv = prev != root;
		prim = i_root ? EV_NCCL_P_RRC : do_recv ? EV_NCCL_P_RRS : -1;
	}
	if (n == 1)
		return 0;
	uint64_t T = c->pl.T;
	struct loopit it;
	struct loop l;
	loop_init(s, c, &it, p, bid, 0);
	int rc;
	uint32_t last_recv = 0;
	int has_last_recv = 0;
	while (loop_next(&it, &l)) {
		uint64_t ne = nelem_of(&l, 0);
		uint32_t data = 0;
		int has_data = 0;
		if (do_recv) {
			uint32_t d[1], id, after;
			int nd = start_deps(d, c);
			if ((rc = sched_put_msg(s, c, 0, prev, bid, x.lane, ne * T, 0, x.step, d, nd, 0, &id, &after)))
				return rc;
			double cost = prim >= 0 ? lat_cost(s, (enum ev_nccl_prim)prim, c->pl.proto, ne * T) : 0;
			if (cost > 0 && (rc = sched_put_calc(s, c, prim == EV_NCCL_P_RCS ? EV_CALC_COPY : EV_CALC_REDUCE, x.lane,
			                                     ne * T, cost, &after, 1, (uint16_t)bid, &after)))
				return rc;
			data = after;
			has_data = 1;
			last_recv = after;
			has_last_recv = 1;
		}
		if (do_send) {
			uint32_t d[3], id, after;
			unsigned ireq;
			int nd = ndeps_of(d, &ireq, &x, c, has_data, data);
			if ((rc = sched_put_msg(s, c, 1, next, bid, x.lane, ne * T, 0, x.step, d, nd, ireq, &id, &after)))
				return rc;
			sched_sendq_push(&x.q, id, after);
		}
		x.step++;
	}
	return chx_tails(c, &x, has_last_recv, last_recv);
}

/* Tree AllReduce: per chunk reduce up to the root, broadcast down. */
static int tree_channel(struct ev_nccl_sched *s, struct cur *c, const struct ev_nccl_part *p, unsigned bid)
{
	struct chx x = { .lane = c->lane0 + bid };
	struct tnode t;
	if (sched_tree_of(s, c, bid, &t))
		return 1;
	struct loopit it;
	struct loop l;
	loop_init(s, c, &it, p, bid, 0);
	int rc;
	unsigned proto = c->pl.proto;
	/* sends up to the parent, and down to each child, in program order */
	struct sendq qu, qd[3];
	sched_sendq_init(s, &qu, msg_steps(c, 0));
	for (int k = 0; k < 3; k++)
		sched_sendq_init(s, &qd[k], msg_steps(c, 0));
	uint32_t last_down_send = 0, last_down_recv = 0;
	int has_dsend = 0, has_drecv = 0;
	while (loop_next(&it, &l)) {
		uint64_t ne = nelem_of(&l, 0), b = ne * c->pl.T;
		uint32_t got[3];
		int ngot = 0;
		for (int k = 0; k < 3; k++) {
			if (t.down[k] < 0)
				continue;
			uint32_t d[1], id, after;
			int nd = start_deps(d, c);
			if ((rc = sched_put_msg(s, c, 0, t.down[k], bid, x.lane, b, EV_F_TREE_UP, x.step, d, nd, 0, &id, &after)))
				return rc;
			double cost = lat_cost(s, t.up < 0 ? EV_NCCL_P_RRCS : EV_NCCL_P_RRS, proto, b);
			if (cost > 0 &&
			    (rc = sched_put_calc(s, c, EV_CALC_REDUCE, x.lane, b, cost, &after, 1, (uint16_t)bid, &after)))
				return rc;
			got[ngot++] = after;
		}
		uint32_t down_src[3];
		int ndown_src = 0;
		if (t.up >= 0) {
			/* Up: after every child's contribution. */
			uint32_t d[5], id, after;
			unsigned ireq = 0;
			int nd = sched_sendq_deps(&qu, d, 0, &ireq);
			for (int k = 0; k < ngot; k++)
				d[nd++] = got[k];
			if (!ngot && !qu.has_last && c->has_start)
				d[nd++] = c->start;
			if ((rc = sched_put_msg(s, c, 1, t.up, bid, x.lane, b, EV_F_TREE_UP, x.step, d, nd, ireq, &id, &after)))
				return rc;
			sched_sendq_push(&qu, id, after);
			/* Down: receive the result from up. */
			int ns = start_deps(d, c);
			if ((rc = sched_put_msg(s, c, 0, t.up, bid, x.lane, b, EV_F_TREE_DOWN, x.step, d, ns, 0, &id, &after)))
				return rc;
			int has_child = t.down[0] >= 0 || t.down[1] >= 0 || t.down[2] >= 0;
			double cost = has_child ? lat_cost(s, EV_NCCL_P_RCS, proto, b) : 0;
			if (cost > 0 &&
			    (rc = sched_put_calc(s, c, EV_CALC_COPY, x.lane, b, cost, &after, 1, (uint16_t)bid, &after)))
				return rc;
			last_down_recv = after;
			has_drecv = 1;
			down_src[ndown_src++] = after;
		} else {
			for (int k = 0; k < ngot; k++)
				down_src[ndown_src++] = got[k];
		}
		for (int k = 0; k < 3; k++) {
			if (t.down[k] < 0)
				continue;
			uint32_t d[5], id, after;
			unsigned ireq = 0;
			int nd = sched_sendq_deps(&qd[k], d, 0, &ireq);
			for (int q = 0; q < ndown_src; q++)
				d[nd++] = down_src[q];
			if (!ndown_src && !qd[k].has_last && c->has_start)
				d[nd++] = c->start;
			if ((rc = sched_put_msg(s, c, 1, t.down[k], bid, x.lane, b, EV_F_TREE_DOWN, x.step, d, nd, ireq, &id,
			                        &after)))
				return rc;
			sched_sendq_push(&qd[k], id, after);
			last_down_send = after;
			has_dsend = 1;
		}
		x.step++;
	}
	if (qu.has_last && (rc = sched_tail_add(c->ch, qu.last)))
		return rc;
	if (has_dsend && (rc = sched_tail_add(c->ch, last_down_send)))
		return rc;
	if (has_drecv && (rc = sched_tail_add(c->ch, last_down_recv)))
		return rc;
	return 0;
}

/* ------------------------------------------------------------------ */
/* Send/recv.                                                          */

/* Messages of one direction of a p2p: per part, one per chunk. */
static uint64_t p2p_count(const struct ev_nccl_p2p *pp)
{
	uint64_t m = 0;
	for (unsigned i = 0; i < pp->nparts; i++)
		m = sat_add(m, pp->part[i].bytes ? div_up(pp->part[i].bytes, pp->part[i].chunk) : 1);
	return m;
}

/* The parts of one direction: as the trace's chan records say (annotated
 * NCCL: per-part bytes, chunk size, channel), else NCCL's p2p model. */
static int p2p_parts(struct ev_nccl_sched *s, struct cur *c, const struct ev_rec *r, int is_send, int32_t peer,
                     uint64_t bytes, int use_chan, struct ev_nccl_p2p *pp)
{
	struct comm_st *cm = c->comm;
	int pc = sched_comm_rank(cm, (uint32_t)peer);
	if (pc < 0)
		return 2;
	int intra = sched_same_node(s, (int32_t)c->me, peer);
	unsigned p2p_nch = cm->p2p_nch;
	if (!p2p_nch && s->p.trace_params && r->channel && !(use_chan && s->nchan))
		p2p_nch = r->channel; /* the channels the kernel ran on */
	ev_nccl_p2p_plan(pp, s->preset, bytes, is_send, (uint32_t)c->mc, (uint32_t)pc, cm->n, cm->nnodes, intra, p2p_nch);
	if (!use_chan || !s->nchan)
		return 0;
	/* Recorded parts: chunk from the record (aux), else the model's. */
	uint64_t model_chunk = pp->nparts ? pp->part[0].chunk : 128 * KiB;
	uint64_t sum = 0;
	pp->nparts = 0;
	for (unsigned i = 0; i < s->nchan && pp->nparts < EV_NCCL_MAXCH; i++) {
		const struct ev_rec *ch = &s->chan[i];
		struct ev_nccl_p2p_part *p = &pp->part[pp->nparts++];
		p->channel = ch->channel % EV_NCCL_MAXCH;
		p->bytes = ch->bytes;
		p->chunk = ch->aux ? ch->aux : model_chunk;
		sum = sat_add(sum, ch->bytes);
	}
	if (r->proto && s->p.trace_params)
		pp->proto = r->proto;
	if (sum != bytes)
		return 3;
	s->stats.p2p_recorded++;
	return 0;
}

static int p2p_emit(struct ev_nccl_sched *s, struct cur *c, int is_send, int32_t peer, const struct ev_nccl_p2p *pp)
{
	unsigned saved = c->pl.proto;
	int rc = 0;
	c->pl.proto = pp->proto;
	for (unsigned i = 0; i < pp->nparts && !rc; i++) {
		const struct ev_nccl_p2p_part *p = &pp->part[i];
		unsigned ch = p->channel;
		uint32_t lane = c->lane0 + ch;
		uint64_t nsteps = p->bytes ? div_up(p->bytes, p->chunk) : 1;
		uint32_t last = 0;
		int has_last = 0;
		/* sends as the FIFO lets them go (one step per chunk); receives in order */
		struct sendq q;
		sched_sendq_init(s, &q, 1);
		for (uint64_t k = 0; k < nsteps && !rc; k++) {
			uint64_t b = p->bytes ? umin(p->chunk, p->bytes - k * p->chunk) : 0;
			uint32_t d[2], id, after;
			unsigned ireq = 0;
			int nd;
			if (is_send)
				nd = q.has_last ? sched_sendq_deps(&q, d, 0, &ireq) : start_deps(d, c);
			else
				nd = has_last ? (d[0] = last, 1) : start_deps(d, c);
			rc = sched_put_msg(s, c, is_send, peer, ch, lane, b, 0, (uint32_t)k, d, nd, ireq, &id, &after);
			if (is_send)
				sched_sendq_push(&q, id, after);
			last = after;
			has_last = 1;
		}
		if (!rc && has_last)
			rc = sched_tail_add(c->ch, last);
	}
	c->pl.proto = saved;
	return rc;
}

int sched_p2p(struct ev_nccl_sched *s, struct cur *c, const struct ev_rec *r)
{
	s->stats.p2ps++;
	c->pl.coll = r->op;
	c->pl.algo = 0;
	c->pl.proto = EV_PROTO_SIMPLE;
	c->pl.step_size = 512 * KiB;
	c->pl.nranks = c->comm->n;
	c->pl.nnodes = c->comm->nnodes;
	c->pl.nbytes = r->bytes;
	c->pl.T = 1;
	c->base.algo = 0;
	if (r->peer < 0)
		return sched_fail(s, EV_ERR_FORMAT, "%s without a %s (peer -1): the peer's export or the NCCL markers "
		                  "naming it are missing",
		                  r->op == EV_OP_RECV ? "recv" : "send", r->op == EV_OP_RECV ? "source" : "destination");
	if ((uint32_t)r->peer > EV_NCCL_MAX_RANK)
		return sched_fail(s, EV_ERR_LIMIT, "peer %d is above the largest rank expanded (%u)", r->peer,
		                  EV_NCCL_MAX_RANK);
	struct ev_nccl_p2p pp;
	int is_send = r->op != EV_OP_RECV;
	int k = p2p_parts(s, c, r, is_send, r->peer, r->bytes, 1, &pp);
	if (k == 2)
		return sched_fail(s, EV_ERR_FORMAT, "peer %d is not a member of communicator %llu", r->peer,
		                  (unsigned long long)r->comm);
	if (k == 3)
		return sched_fail(s, EV_ERR_FORMAT, "the chan records of this %s add up to a different size than its %llu bytes",
		                  is_send ? "send" : "recv", (unsigned long long)r->bytes);
	if (p2p_count(&pp) > s->msg_budget)
		return sched_fail(s, EV_ERR_LIMIT,
		                  "a %s of %llu bytes would expand into %llu messages, more than the limit of %llu "
		                  "(--max-messages)",
		                  is_send ? "send" : "recv", (unsigned long long)r->bytes, (unsigned long long)p2p_count(&pp),
		                  (unsigned long long)s->p.max_messages);
	return p2p_emit(s, c, is_send, r->peer, &pp);
}

/* Grouped send/recv collectives: equal shares per peer. */
static int sched_grouped(struct ev_nccl_sched *s, struct cur *c, const struct ev_rec *r)
{
	uint32_t n = c->comm->n;
	if (c->pl.coll == EV_OP_ALLTOALLV)
		sched_warn(s, W_ALLTOALLV, "alltoallv is expanded as equal shares per peer (sizes per peer are not in the trace)");
	uint64_t share = n ? r->bytes / n : 0;
	int32_t root = r->peer;
	uint64_t total = 0;
	/* First the whole size, then the messages. */
	for (int pass = 0; pass < 2; pass++) {
		for (uint32_t i = 0; i < n; i++) {
			int32_t g = c->comm->ranks[i];
			if (g == (int32_t)c->me || g < 0)
				continue;
			unsigned coll = c->pl.coll;
			int snd = coll == EV_OP_GATHER ? g == root : coll == EV_OP_SCATTER ? (int32_t)c->me == root : 1;
			int rcv = coll == EV_OP_GATHER ? (int32_t)c->me == root : coll == EV_OP_SCATTER ? g == root : 1;
			for (int dir = 1; dir >= 0; dir--) {
				if (dir ? !snd : !rcv)
					continue;
				struct ev_nccl_p2p pp;
				if (p2p_parts(s, c, r, dir, g, share, 0, &pp) == 2)
					return sched_fail(s, EV_ERR_FORMAT, "bad peer");
				if (pass == 0) {
					total = sat_add(total, p2p_count(&pp));
					continue;
				}
				int rc = p2p_emit(s, c, dir, g, &pp);
				if (rc)
					return rc;
			}
		}
		if (pass == 0 && total > s->msg_budget)
			return sched_fail(s, EV_ERR_LIMIT,
			                  "%s of %llu bytes on %u ranks would expand into %llu messages, more than the limit of "
			                  "%llu (--max-messages)",
			                  ev_coll_name(c->pl.coll), (unsigned long long)r->bytes, n, (unsigned long long)total,
			                  (unsigned long long)s->p.max_messages);
	}
	return EV_OK;
}

/* Messages one rank posts for a collective, estimated before writing any. */
static uint64_t estimate(const struct cur *c, const struct ev_nccl_part *pt, unsigned nparts)
{
	const struct ev_nccl_plan *pl = &c->pl;
	uint64_t n = c->comm->n, total = 0;
	int ar = pl->coll == EV_OP_ALLREDUCE;
	uint64_t per_loop = pl->algo == EV_ALGO_TREE ? 8 :
	                    pl->coll == EV_OP_BROADCAST || pl->coll == EV_OP_REDUCE ? 2 :
	                    sat_mul(ar ? 2 * (n - 1) : n - 1, 4);
	for (unsigned b = 0; b < nparts; b++) {
		uint64_t cnt = pt ? pt[b].cnt : div_up(pl->count, pl->nch);
		uint64_t cc = pt && pt[b].cc ? pt[b].cc : umax(1, pl->chunk_bytes / pl->T);
		uint64_t loops = umax(1, div_up(cnt, sat_mul(cc, ar && pl->algo != EV_ALGO_TREE ? n : 1)));
		total = sat_add(total, sat_mul(loops, per_loop));
	}
	return total;
}

int sched_coll(struct ev_nccl_sched *s, struct cur *c, const struct ev_rec *r)
{
	uint32_t n = c->comm->n;
	struct ev_nccl_plan *pl = &c->pl;
	unsigned dts = ev_dtype_size(r->dtype);
	pl->coll = r->op;
	pl->T = dts ? dts : 1;
	pl->nranks = n;
	pl->nnodes = c->comm->nnodes;
	s->stats.colls++;
	switch (pl->coll) {
	case EV_OP_ALLTOALL: case EV_OP_ALLTOALLV: case EV_OP_GATHER: case EV_OP_SCATTER:
		pl->proto = EV_PROTO_SIMPLE;
		return sched_grouped(s, c, r);
	case EV_OP_ALLREDUCE: case EV_OP_ALLGATHER: case EV_OP_REDUCESCATTER: case EV_OP_BROADCAST: case EV_OP_REDUCE:
		break;
	default:
		sched_warn(s, W_NOT_EXPANDED, "%s collectives are not expanded (no messages written)",
		           ev_coll_name(pl->coll) ? ev_coll_name(pl->coll) : "unknown");
		return EV_OK;
	}
	/* Sizes: AllGather and Broadcast are moved as bytes, like NCCL. */
	if (pl->coll == EV_OP_ALLGATHER || pl->coll == EV_OP_BROADCAST)
		pl->T = 1;
	int per_rank = pl->coll == EV_OP_ALLGATHER || pl->coll == EV_OP_REDUCESCATTER;
	pl->count = per_rank ? r->bytes / n / pl->T : r->bytes / pl->T;
	pl->nbytes = r->bytes;
	if (s->p.trace_params) {
		pl->algo = r->algo;
		pl->proto = r->proto;
		pl->nch = r->channel;
		pl->nthreads = r->nthreads;
	}
	const char *why = ev_nccl_choose(pl, s->preset, &s->p.masks, s->regime, s->p.nchannels, s->p.nthreads);
	if (why)
		return sched_fail(s, EV_ERR_FORMAT, "%s", why);
	if (pl->guessed_algo || pl->guessed_proto)
		sched_warn(s, W_GUESS,
		           "the trace does not say which algorithm or protocol some collectives used: NCCL's tuning model "
		           "chooses them (preset %s, %s); the summary lists every choice",
		           s->preset->name, s->stats.preset_source);
	if (pl->algo != EV_ALGO_RING && pl->algo != EV_ALGO_TREE) {
		sched_warn(s, W_APPROX, "algorithm %s is approximated by %s", ev_algo_name(pl->algo),
		           pl->coll == EV_OP_ALLREDUCE && pl->algo == EV_ALGO_NVLS_TREE ? "tree" : "ring");
		s->stats.approx++;
		pl->algo = pl->coll == EV_OP_ALLREDUCE && pl->algo == EV_ALGO_NVLS_TREE ? EV_ALGO_TREE : EV_ALGO_RING;
	}
	if (pl->algo == EV_ALGO_TREE && pl->coll != EV_OP_ALLREDUCE)
		pl->algo = EV_ALGO_RING;
	if (s->p.trace_params) {
		pl->step_size = r->step_size;
		pl->chunk_steps = r->chunk_steps;
		pl->slice_steps = r->slice_steps;
	}
	ev_nccl_chunking(pl, s->regime);
	sched_note_decision(s, c);
	c->base.algo = (uint8_t)pl->algo;
	c->base.proto = (uint8_t)pl->proto;
	c->base.chunk_steps = (uint8_t)pl->chunk_steps;
	c->base.slice_steps = (uint8_t)pl->slice_steps;
	c->base.step_size = (uint32_t)pl->step_size;
	if (n == 1 || pl->count == 0)
		return EV_OK;
	struct ev_nccl_part pt[EV_NCCL_MAXCH];
	unsigned nparts;
	if (s->nchan) {
		uint64_t cc0 = umax(1, pl->chunk_bytes / pl->T);
		nparts = 0;
		for (unsigned i = 0; i < s->nchan && nparts < EV_NCCL_MAXCH; i++) {
			const struct ev_rec *ch = &s->chan[i];
			pt[nparts].off = ch->dur;
			pt[nparts].cnt = ch->bytes;
			pt[nparts].cc = ch->aux ? ch->aux : cc0;
			pt[nparts].lcc = ch->step;
			nparts++;
		}
	} else if (s->regime == EV_NCCL_REG_A) {
		nparts = pl->nch;
		memset(pt, 0, sizeof pt);
	} else {
		nparts = ev_nccl_split(pl, s->regime, pt);
	}
	uint64_t est = estimate(c, s->regime == EV_NCCL_REG_A && !s->nchan ? NULL : pt, nparts);
	if (est > s->msg_budget)
		return sched_fail(s, EV_ERR_LIMIT,
		                  "%s of %llu bytes on %u ranks would expand into about %llu messages on rank %u, more than "
		                  "the limit of %llu (--max-messages)",
		                  ev_coll_name(pl->coll), (unsigned long long)r->bytes, n, (unsigned long long)est, c->me,
		                  (unsigned long long)s->p.max_messages);
	int32_t root = r->peer >= 0 ? r->peer : c->comm->ranks[0];
	const char *shape = pl->algo == EV_ALGO_TREE ? "tree" : "ring";
	for (unsigned b = 0; b < nparts; b++) {
		/* Check every channel first, so an error leaves no half expansion. */
		unsigned bid = s->nchan ? s->chan[b].channel % EV_NCCL_MAXCH : b;
		const int32_t *order;
		int pos;
		struct tnode tn;
		if (pl->algo == EV_ALGO_TREE ? sched_tree_of(s, c, bid, &tn) : sched_ring_of(s, c, bid, &order, &pos))
			return sched_fail(s, EV_ERR_FORMAT, "rank %u is missing from the %s of communicator %llu channel %u",
			                  c->me, shape, (unsigned long long)r->comm, bid);
	}
	for (unsigned b = 0; b < nparts; b++) {
		unsigned bid = s->nchan ? s->chan[b].channel % EV_NCCL_MAXCH : b;
		int rc;
		if (pl->algo == EV_ALGO_TREE)
			rc = tree_channel(s, c, &pt[b], bid);
		else if (pl->coll == EV_OP_BROADCAST || pl->coll == EV_OP_REDUCE)
			rc = pipe_channel(s, c, &pt[b], bid, root);
		else
			rc = ring_channel(s, c, &pt[b], bid);
		if (rc == 1)
			return sched_fail(s, EV_ERR_FORMAT, "rank %u is missing from the %s of communicator %llu channel %u",
			                  c->me, shape, (unsigned long long)r->comm, bid);
		if (rc)
			return rc;
	}
	return EV_OK;
}
