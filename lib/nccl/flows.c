/* SPDX-License-Identifier: MIT */
/*
 * flows.c - the messages of a schedule as the NCCL_GP flow extractor lays
 * them out: one "step" line per network message and one "proxy" line per
 * (operation, channel) of a rank, with NCCL's pattern, protocol and stage
 * names.  Each line is a tab-separated sort key, then the JSON object:
 *
 *   steps|proxy  rank  opCount  comm  p2p  channel  step  dir  peer  {...}
 *
 * so that a plain sort puts every rank's lines in the extractor's order
 * (nccl-flows splits them into per-rank files).  Unlike the extractor, a
 * step line is a message NCCL really posts (one per slice, 0-byte slices
 * included) with the wire bytes it carries, and its stage comes from the
 * schedule.  "stage" uses the extractor's words (reduce-scatter/allgather
 * for RING_TWICE, else ring); "evkitStage" the finer label.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ev/nccl.h"
#include "ev/nccl_sched.h"
#include "nccl/util.h"

/* One message of the operation being expanded. */
struct fmsg {
	uint16_t channel, flags;
	uint8_t dir;            /* 0 send, 1 recv */
	uint8_t proto;
	int32_t peer;
	uint64_t bytes;
	uint32_t k;             /* index on its connection (channel, dir, peer) */
	uint32_t algstep;
};

/* Aggregate of one channel of a proxy line. */
struct agg {
	unsigned channel;
	uint64_t nsends, nrecvs, sb, rb, maxb, nsteps;
	int32_t prev, next;
	uint64_t first_send_key, first_recv_key;
};

/* A rank's proxy lines waiting for the next operation with another key
 * (a grouped send and recv share seq and comm: one line, SEND_RECV). */
struct pending {
	uint32_t rank;
	int used;
	struct ev_rec op;       /* first message's fields: seq, comm, dtype, ... */
	unsigned algo, proto;
	int p2p, guessed;
	uint32_t ss, cs, step_size;
	unsigned coll;
	struct agg ch[EV_NCCL_MAXCH];
	uint64_t chmask;
};

struct ev_nccl_flows {
	ev_output *out;
	struct fmsg *m;
	size_t n, cap;
	uint32_t *ord;          /* scratch: messages by connection */
	size_t ocap;
	struct ev_map rank_ix;  /* rank + 1 -> index + 1 into pend */
	struct pending **pend;
	size_t npend;
	char line[2048];
};

int ev_nccl_flows_new(ev_nccl_flows **f, ev_output *out)
{
	*f = calloc(1, sizeof **f);
	if (!*f)
		return EV_ERR_NOMEM;
	(*f)->out = out;
	ev_map_init(&(*f)->rank_ix);
	return EV_OK;
}

void ev_nccl_flows_free(ev_nccl_flows *f)
{
	if (!f)
		return;
	for (size_t i = 0; i < f->npend; i++)
		free(f->pend[i]);
	free(f->pend);
	free(f->m);
	free(f->ord);
	ev_map_free(&f->rank_ix);
	free(f);
}

static int is_p2p_op(unsigned op) { return op == EV_OP_SEND || op == EV_OP_RECV; }

/* NCCL's pattern names (proxyOp->pattern) for what expand.c produced. */
static const char *pattern(unsigned algo, unsigned op, int dir)
{
	if (is_p2p_op(op) || algo == 0)
		return dir ? "RECV" : "SEND";
	if (algo == EV_ALGO_RING)
		return op == EV_OP_ALLREDUCE ? "RING_TWICE" : op == EV_OP_BROADCAST ? "PIPELINE_FROM" :
		       op == EV_OP_REDUCE ? "PIPELINE_TO" : "RING";
	if (algo == EV_ALGO_TREE)
		return op == EV_OP_ALLREDUCE ? "TREE_UP_DOWN" : op == EV_OP_BROADCAST ? "TREE_DOWN" : "TREE_UP";
	if (algo == EV_ALGO_PAT)
		return op == EV_OP_ALLGATHER ? "PAT_DOWN" : "PAT_UP";
	return "OTHER";
}

static int is_p2p_pattern(const char *pat) { return strcmp(pat, "SEND") == 0 || strcmp(pat, "RECV") == 0; }

static const char *fine_stage(unsigned flags, unsigned op, const char *pat)
{
	if (flags & EV_F_PHASE_RS)
		return "reduce-scatter";
	if (flags & EV_F_PHASE_AG)
		return "allgather";
	if (flags & EV_F_TREE_UP)
		return "tree-up";
	if (flags & EV_F_TREE_DOWN)
		return "tree-down";
	if (is_p2p_pattern(pat))
		return "p2p";
	if (op == EV_OP_BROADCAST)
		return "broadcast";
	if (op == EV_OP_REDUCE)
		return "reduce";
	return "ring";
}

static const char *proto_name(unsigned p)
{
	const char *t = ev_nccl_proto_text(p);
	return t ? t : "UNKNOWN";
}

static void upper(char *dst, const char *src, size_t n)
{
	size_t i = 0;
	for (; src && src[i] && i + 1 < n; i++)
		dst[i] = (char)(src[i] >= 'a' && src[i] <= 'z' ? src[i] - 32 : src[i]);
	dst[i] = '\0';
}

/* ncclDataType_t and ncclRedOp_t as NCCL records them for the proxy: avg
 * and premulsum reduce as sum on the wire; no reduction carries sum. */
static int nccl_dtype(unsigned d) { return d ? (int)d - 1 : -1; }
static int nccl_redop(unsigned r) { return r == EV_RED_PROD ? 1 : r == EV_RED_MAX ? 2 : r == EV_RED_MIN ? 3 : 0; }

static uint64_t chunk_size(unsigned proto, uint64_t step, uint64_t cs)
{
	if (proto == EV_PROTO_LL)
		return step * cs / 2;
	if (proto == EV_PROTO_LL128)
		return step * cs / 16 * 15;
	return step * cs;
}

int ev_nccl_flows_message(ev_nccl_flows *f, const struct ev_rec *r, const struct ev_nccl_plan *pl)
{
	(void)pl; /* the operation's plan is read once, at op_done */
	if (f->n == f->cap) {
		size_t nc = f->cap ? 2 * f->cap : 1024;
		struct fmsg *p = realloc(f->m, nc * sizeof *p);
		if (!p)
			return EV_ERR_NOMEM;
		f->m = p;
		f->cap = nc;
	}
	struct fmsg *m = &f->m[f->n];
	m->channel = r->channel;
	m->flags = r->flags;
	m->dir = r->type == EV_RECV;
	m->proto = r->proto;
	m->peer = r->peer;
	m->bytes = r->bytes;
	m->algstep = r->step;
	m->k = 0;
	f->n++;
	return EV_OK;
}

static struct pending *pending_of(ev_nccl_flows *f, uint32_t rank)
{
	uint64_t *ix = ev_map_get(&f->rank_ix, (uint64_t)rank + 1);
	if (ix)
		return f->pend[*ix - 1];
	struct pending **np = realloc(f->pend, (f->npend + 1) * sizeof *np);
	if (!np)
		return NULL;
	f->pend = np;
	struct pending *p = calloc(1, sizeof *p);
	if (!p)
		return NULL;
	if (ev_map_put(&f->rank_ix, (uint64_t)rank + 1, f->npend + 1)) {
		free(p);
		return NULL;
	}
	p->rank = rank;
	f->pend[f->npend++] = p;
	return p;
}

static int flush_pending(ev_nccl_flows *f, struct pending *p)
{
	if (!p->used)
		return EV_OK;
	p->used = 0;
	int rc = EV_OK;
	for (unsigned c = 0; c < EV_NCCL_MAXCH && !rc; c++) {
		if (!(p->chmask & (1ull << c)))
			continue;
		struct agg *a = &p->ch[c];
		const char *pat = pattern(p->algo, p->coll, a->nsends ? 0 : 1);
		const char *cn = ev_coll_name(p->coll) ? ev_coll_name(p->coll) : "unknown";
		if (is_p2p_pattern(pat) && a->nsends && a->nrecvs) {
			pat = "SEND_RECV";
			cn = "sendrecv";
		}
		int ring = strncmp(pat, "RING", 4) == 0 || strncmp(pat, "PIPELINE", 8) == 0;
		uint64_t chunk = chunk_size(p->proto, p->step_size, p->cs);
		if (chunk == 0)
			chunk = a->maxb;
		uint64_t nbytes = p->step_size ? (uint64_t)p->step_size * p->ss : a->maxb;
		char algo[32];
		if (p->algo)
			upper(algo, ev_algo_name(p->algo), sizeof algo);
		else
			strcpy(algo, "P2P");
		rc = ev_output_printf(
			f->out,
			"proxy\t%u\t%u\t%llu\t%d\t%u\t0\t0\t0\t{\"opCount\":%u,\"comm\":\"%llu\",\"rank\":%u,\"channel\":%u,"
			"\"nsteps\":%llu,\"nbytes\":%llu,\"chunkSize\":%llu,\"sliceSteps\":%u,\"chunkSteps\":%u,\"dtype\":%d,"
			"\"redOp\":%d,\"pattern\":\"%s\",\"protocol\":\"%s\",\"ringPrev\":%d,\"ringNext\":%d,"
			"\"collective\":\"%s\",\"algorithm\":\"%s\",\"nsends\":%llu,\"nrecvs\":%llu,\"sendBytes\":%llu,"
			"\"recvBytes\":%llu,\"algoSource\":\"%s\"}\n",
			p->rank, p->op.seq, (unsigned long long)p->op.comm, p->p2p, c, p->op.seq, (unsigned long long)p->op.comm,
			p->rank, c, (unsigned long long)a->nsteps, (unsigned long long)nbytes, (unsigned long long)chunk, p->ss,
			p->cs, nccl_dtype(p->op.dtype), nccl_redop(p->op.redop), pat, proto_name(p->proto),
			ring ? a->prev : -1, ring ? a->next : -1, cn, algo, (unsigned long long)a->nsends,
			(unsigned long long)a->nrecvs, (unsigned long long)a->sb, (unsigned long long)a->rb,
			p->guessed ? "model" : "trace");
	}
	p->chmask = 0;
	return rc;
}

/* Connection index k of every message: its position among the messages of
 * the same (channel, direction, peer), in the order they were posted. */
static const struct fmsg *sort_base;
static int cmp_conn(const void *a, const void *b)
{
	const struct fmsg *x = &sort_base[*(const uint32_t *)a], *y = &sort_base[*(const uint32_t *)b];
	if (x->channel != y->channel)
		return x->channel < y->channel ? -1 : 1;
	if (x->dir != y->dir)
		return x->dir < y->dir ? -1 : 1;
	if (x->peer != y->peer)
		return x->peer < y->peer ? -1 : 1;
	return *(const uint32_t *)a < *(const uint32_t *)b ? -1 : 1;
}

static int number(ev_nccl_flows *f)
{
	if (f->n > f->ocap) {
		uint32_t *o = realloc(f->ord, f->cap * sizeof *o);
		if (!o)
			return EV_ERR_NOMEM;
		f->ord = o;
		f->ocap = f->cap;
	}
	for (size_t i = 0; i < f->n; i++)
		f->ord[i] = (uint32_t)i;
	sort_base = f->m;
	qsort(f->ord, f->n, sizeof *f->ord, cmp_conn);
	for (size_t i = 0; i < f->n; i++) {
		struct fmsg *m = &f->m[f->ord[i]];
		const struct fmsg *prev = i ? &f->m[f->ord[i - 1]] : NULL;
		m->k = prev && prev->channel == m->channel && prev->dir == m->dir && prev->peer == m->peer ? prev->k + 1 : 0;
	}
	return EV_OK;
}

int ev_nccl_flows_op_done(ev_nccl_flows *f, const struct ev_rec *op, const struct ev_nccl_plan *pl)
{
	if (f->n == 0)
		return EV_OK;
	struct pending *p = pending_of(f, op->rank);
	if (!p)
		return EV_ERR_NOMEM;
	int p2p = is_p2p_op(op->op);
	if (p->used && (p->op.seq != op->seq || p->op.comm != op->comm || p->p2p != p2p || !p2p)) {
		int rc = flush_pending(f, p);
		if (rc)
			return rc;
	}
	unsigned algo = p2p ? 0 : pl->algo;
	unsigned ss, cs;
	ss = pl->slice_steps && !p2p && algo ? pl->slice_steps : 1;
	cs = pl->chunk_steps && !p2p && algo ? pl->chunk_steps : 1;
	if (!p->used) {
		p->used = 1;
		p->op = *op;
		p->coll = op->op;
		p->algo = algo;
		p->p2p = p2p;
		p->guessed = pl->guessed_algo || pl->guessed_proto;
		p->ss = ss;
		p->cs = cs;
		p->step_size = p2p || !algo ? 0 : (uint32_t)pl->step_size;
		p->proto = f->m[0].proto;
	}
	int rc = number(f);
	for (size_t i = 0; i < f->n && !rc; i++) {
		const struct fmsg *m = &f->m[i];
		unsigned c = m->channel % EV_NCCL_MAXCH;
		struct agg *a = &p->ch[c];
		if (!(p->chmask & (1ull << c))) {
			memset(a, 0, sizeof *a);
			a->prev = a->next = -1;
			a->channel = c;
			p->chmask |= 1ull << c;
		}
		uint64_t step = (uint64_t)m->k * ss;
		if (m->dir == 0) {
			a->nsends++;
			a->sb += m->bytes;
			if (a->next < 0 || step < a->first_send_key) {
				a->next = m->peer;
				a->first_send_key = step;
			}
		} else {
			a->nrecvs++;
			a->rb += m->bytes;
			if (a->prev < 0 || step < a->first_recv_key) {
				a->prev = m->peer;
				a->first_recv_key = step;
			}
		}
		a->maxb = umax(a->maxb, m->bytes);
		a->nsteps = umax(a->nsteps, step + ss);
		const char *pat = pattern(algo, op->op, m->dir);
		const char *fine = fine_stage(m->flags, op->op, pat);
		const char *seed = strcmp(pat, "RING_TWICE") == 0 ? fine : "ring";
		char an[32];
		if (algo)
			upper(an, ev_algo_name(algo), sizeof an);
		else
			strcpy(an, "P2P");
		rc = ev_output_printf(
			f->out,
			"steps\t%u\t%u\t%llu\t%d\t%u\t%llu\t%u\t%d\t{\"opCount\":%u,\"comm\":\"%llu\",\"rank\":%u,\"channel\":%u,"
			"\"step\":%llu,\"op\":\"%s\",\"peer\":%d,\"bytes\":%llu,\"pattern\":\"%s\",\"protocol\":\"%s\","
			"\"stage\":\"%s\",\"evkitStage\":\"%s\",\"algorithm\":\"%s\",\"collective\":\"%s\",\"algStep\":%u}\n",
			op->rank, op->seq, (unsigned long long)op->comm, p2p, c, (unsigned long long)step, m->dir, m->peer,
			op->seq, (unsigned long long)op->comm, op->rank, c, (unsigned long long)step, m->dir ? "RECV" : "SEND",
			m->peer, (unsigned long long)m->bytes, pat, proto_name(m->proto), seed, fine,
			an, ev_coll_name(op->op) ? ev_coll_name(op->op) : "unknown", m->algstep);
	}
	f->n = 0;
	if (!rc && !p2p)
		rc = flush_pending(f, p);
	return rc;
}

int ev_nccl_flows_close(ev_nccl_flows *f)
{
	int rc = EV_OK;
	for (size_t i = 0; i < f->npend && !rc; i++)
		rc = flush_pending(f, f->pend[i]);
	return rc;
}
