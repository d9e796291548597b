/* SPDX-License-Identifier: MIT */
/*
 * sched.c - the scheduler's bookkeeping: the stream of records in, chains
 * of operations per rank and CUDA stream, communicators (members, nodes,
 * tag index, the per-seq size check), the CALC between operations, and
 * every output record out through the sink.  expand.c turns one operation
 * into messages.
 *
 * Memory grows with ranks, streams, communicators, channels and distinct
 * chooser decisions, never with the number of records.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ev/stream.h"
#include "nccl/sched_int.h"

/* ------------------------------------------------------------------ */
/* Messages.                                                           */

int sched_fail(struct ev_nccl_sched *s, int status, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(s->err, sizeof s->err, fmt, ap);
	va_end(ap);
	s->err_recno = s->pend_recno;
	return status;
}

void sched_warn(struct ev_nccl_sched *s, int kind, const char *fmt, ...)
{
	if (s->warned[kind]++ || !s->sink.warn)
		return;
	char buf[512];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(buf, sizeof buf, fmt, ap);
	va_end(ap);
	s->sink.warn(s->sink.ctx, buf);
}

const char *ev_nccl_sched_errmsg(const struct ev_nccl_sched *s) { return s->err; }
uint64_t ev_nccl_sched_err_recno(const struct ev_nccl_sched *s) { return s->err_recno; }
const struct ev_nccl_stats *ev_nccl_sched_stats(const struct ev_nccl_sched *s) { return &s->stats; }

void ev_nccl_params_default(struct ev_nccl_params *p)
{
	memset(p, 0, sizeof *p);
	ev_nccl_masks_default(&p->masks);
	p->trace_params = 1;
	p->intra_bw = 300.0;
	p->compute = EV_NCCL_COMP_GAPS;
	p->max_messages = EV_NCCL_DEFAULT_MAX_MESSAGES;
}

/* ------------------------------------------------------------------ */
/* Ranks, nodes, chains.                                               */

static struct rank_st *rank_find(struct ev_nccl_sched *s, uint32_t r)
{
	uint64_t *ix = ev_map_get(&s->rank_ix, (uint64_t)r + 1);
	return ix ? s->ranks[*ix - 1] : NULL;
}

/* Sparse: a rank costs memory only when it appears. */
static struct rank_st *rank_get(struct ev_nccl_sched *s, uint32_t r)
{
	struct rank_st *rk = rank_find(s, r);
	if (rk)
		return rk;
	if (s->nranks == s->rcap) {
		size_t nc = s->rcap ? 2 * s->rcap : 16;
		struct rank_st **p = realloc(s->ranks, nc * sizeof *p);
		if (!p)
			return NULL;
		s->ranks = p;
		s->rcap = nc;
	}
	if (!(rk = calloc(1, sizeof *rk)))
		return NULL;
	if (ev_map_put(&s->rank_ix, (uint64_t)r + 1, s->nranks + 1)) {
		free(rk);
		return NULL;
	}
	rk->rank = r;
	s->ranks[s->nranks++] = rk;
	return rk;
}

int sched_node_of(struct ev_nccl_sched *s, uint32_t r)
{
	if (s->p.ranks_per_node)
		return (int)(r / s->p.ranks_per_node);
	struct rank_st *rk = rank_get(s, r);
	if (!rk)
		return -1;
	if (rk->node_known)
		return rk->node;
	rk->node_known = 1;
	rk->node = -1;
	const struct ev_rank_info *ri = ev_meta_rank(s->meta, r);
	const char *name = ri ? ev_kv_get(ri->kv, ri->nkv, "node") : NULL;
	if (!name && ri)
		name = ev_kv_get(ri->kv, ri->nkv, "host");
	/* No host named: a process that saw N GPUs (kineto2ev's local_gpus,
	 * from deviceProperties) ran on a node of N, ranks in order. */
	const char *lg = !name && ri ? ev_kv_get(ri->kv, ri->nkv, "local_gpus") : NULL;
	int64_t per;
	if (lg && ev_parse_i64(lg, &per) == EV_OK && per > 0 && per <= 65536) {
		sched_warn(s, W_NODES, "ranks placed on nodes of %lld GPUs (rank / %lld), the GPUs each process saw "
		           "(deviceProperties); --ranks-per-node or #rank host= decides otherwise", (long long)per,
		           (long long)per);
		return rk->node = (int)(r / (uint64_t)per);
	}
	if (!name)
		return -1;
	for (size_t i = 0; i < s->nnodes; i++)
		if (strcmp(s->nodes[i], name) == 0)
			return rk->node = (int)i;
	char **nn = realloc(s->nodes, (s->nnodes + 1) * sizeof *nn);
	if (!nn)
		return -1;
	s->nodes = nn;
	if (!(nn[s->nnodes] = strdup(name)))
		return -1;
	return rk->node = (int)s->nnodes++;
}

int sched_same_node(struct ev_nccl_sched *s, int32_t a, int32_t b)
{
	if (a < 0 || b < 0)
		return 0;
	int na = sched_node_of(s, (uint32_t)a);
	return na >= 0 && na == sched_node_of(s, (uint32_t)b);
}

static struct chain *chain_get(struct ev_nccl_sched *s, struct rank_st *rk, uint32_t stream)
{
	uint32_t key = s->p.merge_streams ? 0 : stream;
	for (size_t i = 0; i < rk->nchains; i++)
		if (rk->chains[i].key == key)
			return &rk->chains[i];
	struct chain *p = realloc(rk->chains, (rk->nchains + 1) * sizeof *p);
	if (!p)
		return NULL;
	rk->chains = p;
	struct chain *c = &p[rk->nchains];
	memset(c, 0, sizeof *c);
	c->key = key;
	c->lane_base = (uint32_t)rk->nchains * EV_NCCL_MAXCH;
	c->kernel_ns = rk->kernel_ns; /* compute before the chain's first op */
	rk->nchains++;
	return c;
}

int sched_tail_add(struct chain *c, uint32_t id)
{
	if (c->ntails == c->tcap) {
		size_t nc = c->tcap ? 2 * c->tcap : 16;
		uint32_t *p = realloc(c->tails, nc * sizeof *p);
		if (!p)
			return EV_ERR_NOMEM;
		c->tails = p;
		c->tcap = nc;
	}
	c->tails[c->ntails++] = id;
	return EV_OK;
}

/* ------------------------------------------------------------------ */
/* Communicators.                                                      */

/* Tag index of a communicator: its position by id among the stream's
 * communicators, so that tags depend on what the trace holds, not on the
 * order of its files; a later communicator takes the next free index. */
static int comm_tag_index(struct ev_nccl_sched *s, uint64_t id, uint32_t *idx)
{
	uint32_t below = 0;
	for (size_t i = 0; i < ev_meta_ncomm(s->meta); i++)
		if (ev_meta_comm_at(s->meta, i)->id < id)
			below++;
	for (uint32_t k = 0; k < 1024; k++) {
		uint32_t cand = (below + k) & 0x3FF;
		if (!ev_map_get(&s->tag_used, (uint64_t)cand + 1)) {
			*idx = cand;
			return ev_map_put(&s->tag_used, (uint64_t)cand + 1, 1);
		}
	}
	*idx = below & 0x3FF; /* more than 1024 communicators: indices repeat */
	return EV_OK;
}

static void comm_free(struct comm_st *c)
{
	if (!c)
		return;
	free(c->ranks);
	free(c->win);
	free(c->loc_prev);
	free(c->loc_next);
	free(c->node_ix);
	free(c->heads);
	ev_map_free(&c->pos);
	free(c);
}

/* Nodes of the members: count, per node the first member (tree heads),
 * per member its neighbours on the same node (tree chains). */
static int comm_nodes(struct ev_nccl_sched *s, struct comm_st *c)
{
	struct ev_map node_first; /* node key -> node index + 1 */
	ev_map_init(&node_first);
	c->loc_prev = malloc(c->n * sizeof *c->loc_prev);
	c->loc_next = malloc(c->n * sizeof *c->loc_next);
	c->node_ix = malloc(c->n * sizeof *c->node_ix);
	c->heads = malloc(c->n * sizeof *c->heads);
	int32_t *last = malloc(c->n * sizeof *last); /* per node: last member seen (comm rank) */
	int rc = EV_OK;
	if (!c->loc_prev || !c->loc_next || !c->node_ix || !c->heads || !last)
		rc = EV_ERR_NOMEM;
	uint32_t known = 0, unknown = 0;
	for (uint32_t i = 0; i < c->n && !rc; i++) {
		int32_t g = c->ranks[i];
		int nd = g >= 0 ? sched_node_of(s, (uint32_t)g) : -1;
		/* an unknown node is a node of its own */
		uint64_t key = nd >= 0 ? (uint64_t)nd + 1 : (1ull << 40) + i;
		if (nd >= 0 && !ev_map_get(&node_first, key))
			known++;
		else if (nd < 0)
			unknown++;
		uint64_t *ix = ev_map_get(&node_first, key);
		uint32_t k;
		if (!ix) {
			k = c->nheads++;
			c->heads[k] = g;
			last[k] = -1;
			if ((rc = ev_map_put(&node_first, key, (uint64_t)k + 1)) != EV_OK)
				break;
		} else {
			k = (uint32_t)*ix - 1;
		}
		c->node_ix[i] = (int32_t)k;
		c->loc_prev[i] = last[k] >= 0 ? c->ranks[last[k]] : -1;
		c->loc_next[i] = -1;
		if (last[k] >= 0)
			c->loc_next[last[k]] = g;
		last[k] = (int32_t)i;
	}
	c->nnodes = known + unknown;
	free(last);
	ev_map_free(&node_first);
	return rc;
}

static struct comm_st *comm_find(struct ev_nccl_sched *s, uint64_t id)
{
	uint64_t *ix = id ? ev_map_get(&s->comm_ix, id) : NULL;
	if (id ? ix != NULL : s->comm0_ix != 0)
		return s->comms[(id ? *ix : (uint64_t)s->comm0_ix) - 1];
	return NULL;
}

/* The communicator of id; NULL with *rc = EV_OK when it has no #comm line
 * with ranks, else NULL with the failure status. */
static struct comm_st *comm_get(struct ev_nccl_sched *s, uint64_t id, int *rc)
{
	*rc = EV_OK;
	struct comm_st *c = comm_find(s, id);
	if (c)
		return c;
	const struct ev_comm_info *ci = ev_meta_comm(s->meta, id);
	if (!ci || ci->nranks == 0 || !ci->ranks)
		return NULL;
	if (ci->nranks > EV_NCCL_MAX_COMM_RANKS) {
		*rc = sched_fail(s, EV_ERR_LIMIT, "communicator %llu has %u ranks; more than %u are not expanded",
		                 (unsigned long long)id, ci->nranks, EV_NCCL_MAX_COMM_RANKS);
		return NULL;
	}
	for (uint32_t i = 0; i < ci->nranks; i++)
		if (ci->ranks[i] > (int32_t)EV_NCCL_MAX_RANK) {
			*rc = sched_fail(s, EV_ERR_LIMIT, "communicator %llu lists rank %d; ranks above %u are not expanded",
			                 (unsigned long long)id, ci->ranks[i], EV_NCCL_MAX_RANK);
			return NULL;
		}
	*rc = EV_ERR_NOMEM;
	struct comm_st **nc = realloc(s->comms, (s->ncomms + 1) * sizeof *nc);
	if (!nc)
		return NULL;
	s->comms = nc;
	if (!(c = calloc(1, sizeof *c)))
		return NULL;
	ev_map_init(&c->pos);
	c->id = id;
	c->n = ci->nranks;
	if (!(c->ranks = malloc(c->n * sizeof *c->ranks)) || comm_tag_index(s, id, &c->idx)) {
		comm_free(c);
		return NULL;
	}
	for (uint32_t i = 0; i < c->n; i++) {
		c->ranks[i] = ci->ranks[i];
		if (ci->ranks[i] >= 0 && ev_map_put(&c->pos, (uint64_t)ci->ranks[i] + 1, i)) {
			comm_free(c);
			return NULL;
		}
	}
	if (comm_nodes(s, c)) {
		comm_free(c);
		return NULL;
	}
	const char *p2p = ev_kv_get(ci->kv, ci->nkv, "p2p_channels");
	uint32_t v;
	if (p2p && !ev_parse_u32(p2p, &v) && v > 0 && v <= EV_NCCL_MAXCH)
		c->p2p_nch = v;
	while (ev_meta_ring(s->meta, id, c->nrings))
		c->nrings++;
	for (uint32_t ch = 0; ch < c->nrings && !c->bad_ring; ch++) {
		const struct ev_ring_info *ri = ev_meta_ring(s->meta, id, ch);
		for (uint32_t i = 0; i < ri->n && !c->bad_ring; i++)
			if (ri->order[i] < 0 || !ev_map_get(&c->pos, (uint64_t)ri->order[i] + 1)) {
				c->bad_ring = ch + 1;
				c->bad_rank = ri->order[i];
			}
	}
	while (ev_meta_tree(s->meta, id, c->ntrees))
		c->ntrees++;
	s->comms[s->ncomms++] = c;
	if (id) {
		if (ev_map_put(&s->comm_ix, id, s->ncomms))
			return NULL;
	} else {
		s->comm0_ix = (int)s->ncomms;
	}
	*rc = EV_OK;
	return c;
}

int sched_comm_rank(const struct comm_st *c, uint32_t g)
{
	uint64_t *p = ev_map_get(&c->pos, (uint64_t)g + 1);
	return p ? (int)*p : -1;
}

/* Check that every rank calls collective seq with the same size.  Returns
 * 0, or 1 with *other set to a conflicting earlier size. */
static int comm_check(struct ev_nccl_sched *s, struct comm_st *c, uint32_t seq, uint32_t op, uint64_t bytes,
                      uint64_t *other)
{
	if (!c->wcap) {
		c->wcap = 64;
		c->win = calloc(c->wcap, sizeof *c->win);
		if (!c->win)
			return -1;
		c->win_base = seq;
	}
	if (seq < c->win_base)
		return 0; /* already complete (or evicted) */
	if (seq - c->win_base >= 65536) {
		/* A jump far beyond the window: what it still holds was never
		 * completed on every rank.  Forget it at once, not one by one. */
		for (uint32_t i = 0; i < c->wcap; i++)
			c->lost += c->win[i].used;
		memset(c->win, 0, c->wcap * sizeof *c->win);
		sched_warn(s, W_SEQ_JUMP, "communicator %llu: collective seq jumps from %llu to %u; the size check restarts there",
		           (unsigned long long)c->id, (unsigned long long)c->win_base, seq);
		c->win_base = seq;
	}
	while (seq - c->win_base >= c->wcap) {
		if (c->wcap < 65536) {
			struct win *nw = calloc(c->wcap * 2, sizeof *nw);
			if (!nw)
				return -1;
			for (uint32_t i = 0; i < c->wcap; i++)
				nw[(c->win_base + i) % (c->wcap * 2)] = c->win[(c->win_base + i) % c->wcap];
			free(c->win);
			c->win = nw;
			c->wcap *= 2;
		} else {
			/* Some rank never showed this one (partial trace): forget it. */
			c->lost += c->win[c->win_base % c->wcap].used;
			memset(&c->win[c->win_base % c->wcap], 0, sizeof *c->win);
			c->win_base++;
		}
	}
	struct win *e = &c->win[seq % c->wcap];
	if (e->used && (e->bytes != bytes || e->op != op)) {
		*other = e->bytes;
		return 1;
	}
	e->used = 1;
	e->bytes = bytes;
	e->op = op;
	if (++e->seen >= c->n) {
		memset(e, 0, sizeof *e);
		while (c->win_base <= seq && !c->win[c->win_base % c->wcap].used)
			c->win_base++;
	}
	return 0;
}

/* ------------------------------------------------------------------ */
/* Output records.                                                     */

static double jitter(struct ev_nccl_sched *s, double v)
{
	if (!s->p.have_jitter || v <= 0)
		return v;
	/* xorshift64*, Box-Muller */
	double u[2];
	for (int i = 0; i < 2; i++) {
		s->rng ^= s->rng >> 12;
		s->rng ^= s->rng << 25;
		s->rng ^= s->rng >> 27;
		u[i] = ((double)((s->rng * 0x2545F4914F6CDD1Dull) >> 11) + 0.5) / 9007199254740992.0;
	}
	double z = sqrt(-2.0 * log(u[0])) * cos(6.283185307179586 * u[1]);
	double r = v * (1.0 + 0.01 * z);
	return r > 0 ? r : 0;
}

static int put_rec(struct ev_nccl_sched *s, struct cur *c, struct ev_rec *r, uint32_t *id)
{
	r->id = c->rk->next_id++;
	if (id)
		*id = r->id;
	return s->sink.emit(s->sink.ctx, r);
}

static int put_dep(struct ev_nccl_sched *s, struct cur *c, uint32_t lane, uint32_t id, uint32_t on, int ireq)
{
	struct ev_rec d = c->dep;
	d.stream = lane;
	d.id = id;
	d.aux = on;
	if (ireq)
		d.flags |= EV_F_IREQ;
	s->stats.deps++;
	return s->sink.emit(s->sink.ctx, &d);
}

int sched_put_calc(struct ev_nccl_sched *s, struct cur *c, unsigned kind, uint32_t lane, uint64_t bytes, double ns,
                   const uint32_t *deps, int ndeps, uint16_t ch, uint32_t *id)
{
	struct ev_rec r = c->base;
	r.type = EV_CALC;
	r.op = (uint8_t)kind;
	r.flags = EV_F_SYNTH;
	r.stream = lane;
	r.bytes = bytes;
	double v = jitter(s, ns);
	r.dur = v < 9.2e18 ? (uint64_t)llround(v) : (uint64_t)INT64_MAX;
	r.peer = -1;
	r.channel = ch;
	/* Callers may pass the same variable as dependency and output id
	 * (a chain: "after this, then this"): read the dependency first. */
	uint32_t first = ndeps > 0 ? deps[0] : 0;
	int rc = put_rec(s, c, &r, id);
	for (int i = 0; i < ndeps && !rc; i++)
		rc = put_dep(s, c, lane, *id, i == 0 ? first : deps[i], 0);
	s->stats.calcs++;
	return rc;
}

/* Tag counter of (dir, src, dst, comm, channel). */
static uint64_t *tag_ctr(struct ev_nccl_sched *s, int dir, uint32_t src, uint32_t dst, uint32_t comm_idx, unsigned ch)
{
	uint64_t key = 1ull << 63 | (uint64_t)dir << 62 | ((uint64_t)src & 0xFFFFF) << 42 |
	               ((uint64_t)dst & 0xFFFFF) << 22 | ((uint64_t)comm_idx & 0xFFFF) << 6 | (ch & 63);
	uint64_t *v = ev_map_get(&s->tagc, key);
	if (!v) {
		if (ev_map_put(&s->tagc, key, 0))
			return NULL;
		v = ev_map_get(&s->tagc, key);
	}
	return v;
}

static uint32_t make_tag(uint32_t comm_idx, unsigned ch, uint32_t ctr)
{
	return (comm_idx & 0x3FF) << 22 | (uint32_t)(ch & 63) << 16 | (ctr & 0xFFFF);
}

/* One message in one direction.  For an intra-node message in calc mode:
 * a 0-byte message plus a CALC intra on this side (returned in *after). */
int sched_put_msg(struct ev_nccl_sched *s, struct cur *c, int is_send, int32_t peer, unsigned ch, uint32_t lane,
                  uint64_t data, uint16_t flags, uint32_t step, const uint32_t *deps, int ndeps, unsigned ireq,
                  uint32_t *id, uint32_t *after)
{
	if (s->msg_budget == 0)
		return sched_fail(s, EV_ERR_LIMIT, "more messages than the limit of %llu for one operation (--max-messages)",
		                  (unsigned long long)s->p.max_messages);
	s->msg_budget--;
	uint32_t src = is_send ? c->me : (uint32_t)peer, dst = is_send ? (uint32_t)peer : c->me;
	uint64_t *ctr = tag_ctr(s, is_send, src, dst, c->comm->idx, ch);
	if (!ctr)
		return EV_ERR_NOMEM;
	uint32_t tag = make_tag(c->comm->idx, ch, (uint32_t)(*ctr)++);
	/* a channel talks to the same peer message after message */
	if (peer != c->last_peer) {
		c->last_peer = peer;
		c->last_intra = sched_same_node(s, (int32_t)c->me, peer);
	}
	int intra = c->last_intra;
	struct ev_rec r = c->base;
	r.type = is_send ? EV_SEND : EV_RECV;
	r.proto = (uint8_t)c->pl.proto;
	r.flags = (uint16_t)(flags | EV_F_SYNTH | (intra ? EV_F_INTRA : 0));
	r.stream = lane;
	r.peer = peer;
	r.channel = (uint16_t)ch;
	r.step = step;
	r.aux = tag;
	uint64_t wire = ev_nccl_wire_bytes(c->pl.proto, data);
	r.bytes = intra && !s->p.intra_send ? 0 : wire;
	int rc = put_rec(s, c, &r, id);
	for (int i = 0; i < ndeps && !rc; i++)
		rc = put_dep(s, c, lane, *id, deps[i], (int)(ireq >> i & 1u));
	if (is_send)
		s->stats.sends++;
	else
		s->stats.recvs++;
	if (!rc && s->sink.message) {
		struct ev_rec m = r;
		m.bytes = wire;
		rc = s->sink.message(s->sink.ctx, &m, &c->pl);
	}
	*after = *id;
	if (!rc && intra && !s->p.intra_send)
		rc = sched_put_calc(s, c, EV_CALC_INTRA, lane, data, (double)data / s->p.intra_bw, id, 1, (uint16_t)ch,
		                    after);
	return rc;
}

void sched_sendq_init(const struct ev_nccl_sched *s, struct sendq *q, unsigned steps_per_msg)
{
	memset(q, 0, sizeof *q);
	unsigned w = SCHED_FIFO_STEPS / (steps_per_msg ? steps_per_msg : 1);
	q->w = s->p.send_delivered || w < 1 ? 1 : w;
}

int sched_sendq_deps(const struct sendq *q, uint32_t *d, int k, unsigned *ireq)
{
	if (q->has_last) {
		if (q->w > 1)
			*ireq |= 1u << k;
		d[k++] = q->last;
	}
	if (q->w > 1 && q->nsent >= q->w)
		d[k++] = q->win[(q->nsent - q->w) % SCHED_FIFO_STEPS];
	return k;
}

void sched_sendq_push(struct sendq *q, uint32_t send, uint32_t after)
{
	q->last = after;
	q->has_last = 1;
	q->win[q->nsent++ % SCHED_FIFO_STEPS] = send;
}

/* ------------------------------------------------------------------ */
/* Operations on a chain.                                              */

/* Before an op on a chain: join the previous group's tails, then the
 * compute since the previous op.  A chain's schedule starts at its first
 * operation: what came before it (NCCL init, warm-up) is left out unless
 * lead_in asks for it. */
static int begin_op(struct ev_nccl_sched *s, struct cur *c, const struct ev_rec *r)
{
	struct chain *ch = c->ch;
	int rc;
	int same_group = ch->have_prev && r->ts == ch->group_ts && (r->flags & EV_F_GROUP || r->type == EV_P2P);
	if (same_group) {
		c->has_start = ch->have_start;
		c->start = ch->start;
		return 0;
	}
	uint32_t lane = ch->lane_base;
	uint32_t join = 0;
	int has_join = 0;
	if (ch->ntails == 1) {
		join = ch->tails[0];
		has_join = 1;
	} else if (ch->ntails > 1) {
		if ((rc = sched_put_calc(s, c, EV_CALC_SYNC, lane, 0, 0, ch->tails, (int)ch->ntails, 0, &join)))
			return rc;
		has_join = 1;
	} else if (ch->have_start) {
		join = ch->start;
		has_join = 1;
	}
	ch->ntails = 0;
	double cost = 0;
	unsigned kind = EV_CALC_GAP;
	if (ch->have_prev || s->p.lead_in) {
		int64_t from = ch->have_prev ? ch->prev_end : c->rk->first_ts;
		uint64_t gap = r->ts > from ? (uint64_t)r->ts - (uint64_t)from : 0;
		if (s->p.compute == EV_NCCL_COMP_GAPS)
			cost = (double)gap;
		else if (s->p.compute == EV_NCCL_COMP_KERNELS) {
			cost = (double)(ch->kernel_ns < gap ? ch->kernel_ns : gap);
			kind = EV_CALC_KERNEL;
		}
	} else if (s->p.compute != EV_NCCL_COMP_NONE && r->ts > c->rk->first_ts) {
		s->stats.lead_in_dropped++;
	}
	if (cost > 0) {
		uint32_t id;
		if ((rc = sched_put_calc(s, c, kind, lane, 0, cost, &join, has_join, 0, &id)))
			return rc;
		join = id;
		has_join = 1;
	}
	ch->kernel_ns = 0;
	ch->have_start = has_join;
	ch->start = join;
	ch->group_ts = r->ts;
	c->has_start = has_join;
	c->start = join;
	return 0;
}

static void end_op(struct cur *c, const struct ev_rec *r)
{
	struct chain *ch = c->ch;
	int64_t end = ev_rec_end(r); /* saturated */
	if (!ch->have_prev || end > ch->prev_end)
		ch->prev_end = end;
	ch->have_prev = 1;
}

/* A data error on the pending record: skipped when lenient. */
static int bad(struct ev_nccl_sched *s, int status)
{
	if (s->p.lenient && status == EV_ERR_FORMAT) {
		s->stats.skipped++;
		return EV_NCCL_SKIPPED;
	}
	return status;
}

static const struct ev_nccl_preset *pick_preset(struct ev_nccl_sched *s)
{
	static const char *const keys[] = { "gpu", "device_name", "gpu_name", "arch", "gcn_arch", "name" };
	if (s->p.preset) {
		s->stats.preset_source = "option";
		return s->p.preset;
	}
	for (size_t k = 0; k < sizeof keys / sizeof keys[0]; k++) {
		const char *desc = ev_meta_get(s->meta, keys[k]);
		const struct ev_nccl_preset *pr = ev_nccl_preset_for_device(desc);
		for (size_t i = 0; !pr && i < ev_meta_nrank(s->meta); i++) {
			const struct ev_rank_info *ri = ev_meta_rank_at(s->meta, i);
			desc = ev_kv_get(ri->kv, ri->nkv, keys[k]);
			pr = ev_nccl_preset_for_device(desc);
		}
		if (pr) {
			s->stats.preset_source = ev_nccl_preset_device_source(desc);
			return pr;
		}
	}
	s->stats.preset_source = "default";
	return ev_nccl_preset_find("h100");
}

void sched_note_decision(struct ev_nccl_sched *s, const struct cur *c)
{
	const struct ev_nccl_plan *pl = &c->pl;
	if (!pl->guessed_algo && !pl->guessed_proto)
		return;
	s->stats.guessed++;
	for (size_t i = 0; i < s->ndec; i++) {
		struct decision *d = &s->dec[i];
		if (d->coll == pl->coll && d->algo == pl->algo && d->proto == pl->proto && d->nranks == pl->nranks &&
		    d->nnodes == pl->nnodes && d->guessed_algo == pl->guessed_algo && d->guessed_proto == pl->guessed_proto) {
			d->minb = umin(d->minb, pl->nbytes);
			d->maxb = umax(d->maxb, pl->nbytes);
			d->count++;
			return;
		}
	}
	struct decision *nd = realloc(s->dec, (s->ndec + 1) * sizeof *nd);
	if (!nd)
		return; /* the count above still says it */
	s->dec = nd;
	nd[s->ndec++] = (struct decision){ pl->coll, pl->algo, pl->proto, pl->nranks, pl->nnodes, pl->guessed_algo,
		                           pl->guessed_proto, pl->nbytes, pl->nbytes, 1 };
}

const char *ev_nccl_sched_decision(const struct ev_nccl_sched *s, size_t i, uint64_t *count)
{
	if (i >= s->ndec)
		return NULL;
	const struct decision *d = &s->dec[i];
	char *buf = (char *)s->decbuf;
	const char *cn = ev_coll_name(d->coll);
	const char *what = d->guessed_algo && d->guessed_proto ? "algorithm and protocol" :
	                   d->guessed_algo ? "algorithm" : "protocol";
	if (d->minb == d->maxb)
		snprintf(buf, sizeof s->decbuf, "%s of %llu bytes on %u ranks, %u node(s): %s/%s (%s chosen, preset %s)",
		         cn ? cn : "collective", (unsigned long long)d->minb, d->nranks, d->nnodes, ev_algo_name(d->algo),
		         ev_proto_name(d->proto), what, s->stats.preset ? s->stats.preset : "?");
	else
		snprintf(buf, sizeof s->decbuf,
		         "%s of %llu-%llu bytes on %u ranks, %u node(s): %s/%s (%s chosen, preset %s)",
		         cn ? cn : "collective", (unsigned long long)d->minb, (unsigned long long)d->maxb, d->nranks,
		         d->nnodes, ev_algo_name(d->algo), ev_proto_name(d->proto), what,
		         s->stats.preset ? s->stats.preset : "?");
	if (count)
		*count = d->count;
	return buf;
}

/* One COLL/P2P record on its rank. */
static int expand(struct ev_nccl_sched *s, const struct ev_rec *r)
{
	struct cur c;
	int rc;
	memset(&c, 0, sizeof c);
	c.last_peer = -2;
	s->err[0] = '\0';
	s->msg_budget = s->p.max_messages ? s->p.max_messages : EV_NCCL_DEFAULT_MAX_MESSAGES;
	if (r->rank > EV_NCCL_MAX_RANK)
		return sched_fail(s, EV_ERR_LIMIT, "rank %u is above the largest rank expanded (%u)", r->rank,
		                  EV_NCCL_MAX_RANK);
	if (r->algo >= EV_ALGO_COUNT)
		return bad(s, sched_fail(s, EV_ERR_FORMAT, "unknown algorithm %u", r->algo));
	if (r->proto >= EV_PROTO_COUNT)
		return bad(s, sched_fail(s, EV_ERR_FORMAT, "unknown protocol %u", r->proto));
	if (!s->preset) {
		s->preset = pick_preset(s);
		s->stats.preset = s->preset->name;
	}
	c.me = r->rank;
	c.comm = comm_get(s, r->comm, &rc);
	if (rc)
		return rc;
	if (!c.comm)
		return bad(s, sched_fail(s, EV_ERR_FORMAT, "communicator %llu has no #comm line with ranks",
		                         (unsigned long long)r->comm));
	if (!(c.rk = rank_get(s, r->rank)) || !(c.ch = chain_get(s, c.rk, r->stream)))
		return EV_ERR_NOMEM;
	if (c.comm->bad_ring)
		return bad(s, sched_fail(s, EV_ERR_FORMAT,
		                         "the ring of communicator %llu channel %u lists rank %d, which is not a member",
		                         (unsigned long long)r->comm, c.comm->bad_ring - 1, c.comm->bad_rank));
	c.mc = sched_comm_rank(c.comm, r->rank);
	if (c.mc < 0)
		return bad(s, sched_fail(s, EV_ERR_FORMAT, "rank %u is not a member of communicator %llu", r->rank,
		                         (unsigned long long)r->comm));
	if (r->type == EV_COLL) {
		uint64_t other;
		int k = comm_check(s, c.comm, r->seq, r->op, r->bytes, &other);
		if (k < 0)
			return EV_ERR_NOMEM;
		if (k)
			return bad(s, sched_fail(s, EV_ERR_FORMAT,
			                         "%s seq %u on communicator %llu has %llu bytes on rank %u but %llu on another rank",
			                         ev_coll_name(r->op) ? ev_coll_name(r->op) : "collective", r->seq,
			                         (unsigned long long)r->comm, (unsigned long long)r->bytes, r->rank,
			                         (unsigned long long)other));
	}
	/* Template of every output record. */
	ev_rec_init(&c.base);
	c.base.op = r->op;
	c.base.dtype = r->dtype;
	c.base.redop = r->redop;
	c.base.rank = r->rank;
	c.base.ts = r->ts;
	c.base.comm = r->comm;
	c.base.seq = r->seq;
	c.base.src = r->src;
	ev_rec_init(&c.dep);
	c.dep.type = EV_DEP;
	c.dep.rank = r->rank;
	c.dep.ts = r->ts;
	c.dep.seq = r->seq;
	c.dep.comm = r->comm;
	c.dep.src = r->src;
	if ((rc = begin_op(s, &c, r)))
		return rc;
	c.lane0 = c.ch->lane_base;
	if (r->type == EV_P2P || r->op == EV_OP_SEND || r->op == EV_OP_RECV)
		rc = sched_p2p(s, &c, r);
	else
		rc = sched_coll(s, &c, r);
	if (rc)
		return bad(s, rc);
	end_op(&c, r);
	if (s->sink.op_done)
		rc = s->sink.op_done(s->sink.ctx, r, &c.pl);
	return rc;
}

static int flush_pending(struct ev_nccl_sched *s)
{
	if (!s->have_pend)
		return EV_OK;
	s->have_pend = 0;
	int rc = expand(s, &s->pend), kept = EV_OK;
	/* a record skipped (lenient) is still kept, as it was read */
	if ((rc == EV_OK || rc == EV_NCCL_SKIPPED) && s->p.keep_coll) {
		kept = s->sink.emit(s->sink.ctx, &s->pend);
		for (unsigned i = 0; i < s->nchan && !kept; i++)
			kept = s->sink.emit(s->sink.ctx, &s->chan[i]);
	}
	s->nchan = 0;
	return kept ? kept : rc;
}

int ev_nccl_sched_flush(struct ev_nccl_sched *s)
{
	return flush_pending(s);
}

int ev_nccl_sched_feed(struct ev_nccl_sched *s, const struct ev_rec *rec, uint64_t recno, int *pass)
{
	*pass = 0;
	if (s->regime == EV_NCCL_REG_AUTO) {
		/* Metadata comes before the first record. */
		const char *v = ev_meta_get(s->meta, "nccl_version");
		if (!v || ev_nccl_parse_version(v, &s->regime))
			s->regime = EV_NCCL_REG_C;
	}
	if (s->started && rec->ts < s->last_ts) {
		s->pend_recno = recno;
		char why[128];
		ev_order_text(why, sizeof why, rec->ts, s->last_ts);
		return sched_fail(s, EV_ERR_ORDER, "%s", why);
	}
	s->started = 1;
	s->last_ts = rec->ts;
	if (rec->type == EV_CHAN && s->have_pend && rec->rank == s->pend.rank && rec->seq == s->pend.seq &&
	    rec->comm == s->pend.comm && rec->ts == s->pend.ts) {
		if (s->nchan < EV_NCCL_MAXCH)
			s->chan[s->nchan++] = *rec;
		return EV_OK;
	}
	int rc = flush_pending(s), done = EV_OK;
	if (rc == EV_NCCL_SKIPPED)
		done = rc;
	else if (rc)
		return rc;
	struct rank_st *rk = rank_get(s, rec->rank);
	if (!rk)
		return EV_ERR_NOMEM;
	if (!rk->used) {
		rk->used = 1;
		rk->first_ts = rec->ts;
	}
	if (rec->type == EV_COLL || rec->type == EV_P2P) {
		s->pend = *rec;
		s->have_pend = 1;
		s->pend_recno = recno;
		s->nchan = 0;
		return done;
	}
	if (rec->type == EV_CHAN) {
		s->chan_dropped++;
		sched_warn(s, W_CHAN_ALONE, "chan records without their coll/p2p are dropped");
		return done;
	}
	if (rec->type == EV_DEP) {
		s->stats.dropped_deps++;
		return done;
	}
	if (rec->type == EV_KERNEL && rec->op != EV_KC_COMM && s->p.compute == EV_NCCL_COMP_KERNELS) {
		rk->kernel_ns = sat_add(rk->kernel_ns, rec->dur);
		int64_t end = ev_rec_end(rec); /* saturated */
		for (size_t i = 0; i < rk->nchains; i++) {
			struct chain *ch = &rk->chains[i];
			int64_t from = ch->have_prev && ch->prev_end > rec->ts ? ch->prev_end : rec->ts;
			if (end > from)
				ch->kernel_ns = sat_add(ch->kernel_ns, (uint64_t)end - (uint64_t)from);
		}
	}
	*pass = 1;
	return done;
}

void ev_nccl_sched_finish(struct ev_nccl_sched *s)
{
	uint64_t partial = 0;
	for (size_t i = 0; i < s->ncomms; i++) {
		partial += s->comms[i]->lost;
		for (uint32_t k = 0; k < s->comms[i]->wcap; k++)
			partial += s->comms[i]->win[k].used;
	}
	s->stats.partial = partial;
}

/* Members of communicators that never appear in the stream: what a
 * missing export looks like.  Writes "comm ID: ranks a, b" into buf. */
int ev_nccl_sched_absent(const struct ev_nccl_sched *s, size_t i, char *buf, size_t n)
{
	if (i >= s->ncomms)
		return -1;
	const struct comm_st *c = s->comms[i];
	size_t o = (size_t)snprintf(buf, n, "communicator %llu (%u ranks): no records of rank", (unsigned long long)c->id,
	                            c->n);
	int missing = 0;
	for (uint32_t k = 0; k < c->n && o < n; k++) {
		const struct rank_st *rk = c->ranks[k] >= 0 ? rank_find((struct ev_nccl_sched *)s, (uint32_t)c->ranks[k]) : NULL;
		if (rk && rk->used)
			continue;
		o += (size_t)snprintf(buf + o, n - o, "%s %d", missing ? "," : "", c->ranks[k]);
		missing++;
	}
	return missing;
}

int ev_nccl_sched_new(struct ev_nccl_sched **out, const struct ev_nccl_params *p, const ev_meta *meta,
                      const ev_nccl_lat *lat, const struct ev_nccl_sink *sink)
{
	struct ev_nccl_sched *s = calloc(1, sizeof *s);
	*out = NULL;
	if (!s)
		return EV_ERR_NOMEM;
	if (!sink || !sink->emit || !meta || !p || !(p->intra_bw > 0)) {
		free(s);
		return EV_ERR_ARG;
	}
	s->p = *p;
	s->meta = meta;
	s->lat = lat;
	s->sink = *sink;
	s->regime = p->regime;
	s->rng = p->seed * 0x9E3779B97F4A7C15ull + 0x1234567;
	if (!s->rng)
		s->rng = 1;
	ev_map_init(&s->rank_ix);
	ev_map_init(&s->comm_ix);
	ev_map_init(&s->tag_used);
	ev_map_init(&s->tagc);
	s->last_ts = INT64_MIN;
	*out = s;
	return EV_OK;
}

void ev_nccl_sched_free(struct ev_nccl_sched *s)
{
	if (!s)
		return;
	for (size_t i = 0; i < s->ncomms; i++)
		comm_free(s->comms[i]);
	free(s->comms);
	for (size_t i = 0; i < s->nranks; i++) {
		for (size_t k = 0; k < s->ranks[i]->nchains; k++)
			free(s->ranks[i]->chains[k].tails);
		free(s->ranks[i]->chains);
		free(s->ranks[i]);
	}
	free(s->ranks);
	for (size_t i = 0; i < s->nnodes; i++)
		free(s->nodes[i]);
	free(s->nodes);
	free(s->dec);
	ev_map_free(&s->rank_ix);
	ev_map_free(&s->comm_ix);
	ev_map_free(&s->tag_used);
	ev_map_free(&s->tagc);
	free(s);
}
