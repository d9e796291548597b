/* SPDX-License-Identifier: MIT */
/*
 * slices.c - one record as its trace event: the track it belongs to, its
 * name, its args; then the flows and counters it feeds.  Kernels, copies,
 * collectives and p2p go on their GPU stream, send/recv on their NCCL
 * channel, calc on its schedule lane, api calls, ranges and marks on their
 * CPU thread (GPU-user ranges on the stream), counters on the CPU process;
 * dep, chan, overlap and tsx records only describe other records.
 */
#include <stdio.h>
#include <string.h>

#include "perfetto_int.h"

/* ts + dur, saturating at INT64_MAX.  Any dur above INT64_MAX saturates,
 * also from a negative ts where ev_rec_end() would not: the timelines
 * written so far keep their bytes. */
static int64_t rec_end(const struct ev_rec *r)
{
	int64_t e;
	if (r->dur > (uint64_t)INT64_MAX || __builtin_add_overflow(r->ts, (int64_t)r->dur, &e))
		return INT64_MAX;
	return e;
}

/* Where r goes: 1 with *gpu, *kind and *id set for a slice or mark, 0 for
 * a counter sample, -1 for a record with no event of its own. */
static int where(const struct ev_rec *r, int *gpu, int *kind, uint32_t *id)
{
	*id = r->stream;
	switch (r->type) {
	case EV_KERNEL: case EV_MEMCPY: case EV_MEMSET: case EV_COLL: case EV_P2P:
		*gpu = 1, *kind = PF_STREAM;
		return 1;
	case EV_RANGE: case EV_MARK:
		*gpu = r->op == EV_RG_GPU_USER, *kind = *gpu ? PF_STREAM : PF_THREAD;
		return 1;
	case EV_API:
		*gpu = 0, *kind = PF_THREAD;
		return 1;
	case EV_SEND: case EV_RECV:
		*gpu = 1, *kind = PF_CHANNEL, *id = r->channel;
		return 1;
	case EV_CALC:
		*gpu = 1, *kind = PF_LANE;
		return 1;
	case EV_COUNTER:
		return 0;
	default:
		return -1;
	}
}

/* A counter record: one sample of its series on the rank's CPU process. */
static void counter_event(ev_perfetto *p, const struct ev_rec *r)
{
	struct pf_buf *b = &p->ob;
	pf_get_proc(p, r->rank, 0);
	size_t n;
	const char *nm = ev_strtab_get(p->st, r->name, &n);
	pf_event(p, "C", pf_pid(p, r->rank, 0), 0);
	pf_key(b, "name");
	pf_jstr(b, nm ? nm : "counter", nm ? n : 7);
	pf_puts(b, ",\"ts\":");
	pf_us(b, pf_rel_ts(p, r->ts));
	pf_puts(b, ",\"args\":{\"value\":");
	pf_u64(b, r->bytes);
	pf_puts(b, "}}");
}

/* The slice's name into p->name: the record's, else a word for what it is;
 * collectives and messages are named by what they do. */
static void slice_name(ev_perfetto *p, const struct ev_rec *r, const char *opw)
{
	struct pf_buf *n = &p->name;
	n->len = 0;
	if (p->o.rank_prefix) {
		pf_puts(n, "[R");
		pf_u64(n, r->rank);
		pf_puts(n, "] ");
	}
	size_t nlen;
	const char *nm = ev_strtab_get(p->st, r->name, &nlen);
	if (r->type == EV_COLL || r->type == EV_P2P) {
		pf_puts(n, opw ? opw : "collective");
	} else if (r->type == EV_SEND || r->type == EV_RECV) {
		pf_puts(n, r->type == EV_SEND ? "send to " : "recv from ");
		pf_i64(n, r->peer);
	} else if (nm && nlen) {
		pf_put(n, nm, nlen);
	} else {
		pf_puts(n, ev_type_name(r->type));
		if (opw && r->type != EV_MEMSET) {
			pf_put(n, " ", 1);
			pf_puts(n, opw);
		}
	}
}

/* A name from a table, "?" for a value the table does not know. */
static void kv_name(struct pf_buf *b, const char *key, const char *name)
{
	pf_kv_str(b, key, name ? name : "?");
}

/* The args of a collective, p2p call, send or receive. */
static void args_coll(struct pf_buf *b, const struct ev_rec *r, const ev_strtab *st)
{
	char comm[24];
	/* As text: a 64-bit id does not survive JSON readers' doubles. */
	snprintf(comm, sizeof comm, "%llu", (unsigned long long)r->comm);
	pf_kv_u64(b, "bytes", r->bytes);
	pf_kv_str(b, "comm", comm);
	pf_kv_u64(b, "seq", r->seq);
	if (r->peer >= 0)
		pf_kv_u64(b, r->type == EV_COLL ? "root" : "peer", (uint64_t)r->peer);
	if (r->algo)
		kv_name(b, "algo", ev_algo_name(r->algo));
	if (r->proto)
		kv_name(b, "proto", ev_proto_name(r->proto));
	if (r->dtype)
		kv_name(b, "dtype", ev_dtype_name(r->dtype));
	if (r->redop)
		kv_name(b, "redop", ev_redop_name(r->redop));
	if (r->type == EV_COLL || r->type == EV_P2P) {
		const struct { const char *key; uint64_t v; } tun[] = {
			{ "nranks", r->aux }, { "channels", r->channel }, { "nthreads", r->nthreads },
			{ "chunk_steps", r->chunk_steps }, { "slice_steps", r->slice_steps }, { "step_size", r->step_size },
		};
		for (size_t i = 0; i < sizeof tun / sizeof tun[0]; i++)
			if (tun[i].v)
				pf_kv_u64(b, tun[i].key, tun[i].v);
		size_t n;
		const char *k = ev_strtab_get(st, r->name, &n);
		if (k && n) {
			pf_key(b, "kernel");
			pf_jstr(b, k, n);
		}
	} else {
		pf_kv_u64(b, "channel", r->channel);
		pf_kv_u64(b, "step", r->step);
		if (r->aux)
			pf_kv_u64(b, "tag", r->aux);
		const char *op = ev_coll_name(r->op);
		if (op)
			pf_kv_str(b, "collective", op);
	}
}

void pf_tsx_args(struct pf_buf *b, const struct ev_rec *x, int have, const struct ev_rec *r)
{
	if (!have || x->rank != r->rank || x->stream != r->stream || x->ts != r->ts)
		return;
	static const char *const key[5] = { "TS1", "TS2", "TS3", "TS4", "TS5" };
	const uint64_t gap[4] = { x->step, x->aux, x->step_size, x->id };
	uint64_t v = x->bytes;
	char num[24];
	for (int i = 0; i < 5; i++) {
		if (i)
			v += gap[i - 1];
		snprintf(num, sizeof num, "%llu", (unsigned long long)v);
		pf_kv_str(b, key[i], num);
	}
}

/* acelyzer's pt_active (rcu_utilization.py): the kernel's ideal time,
 * ideal cycles at the core clock, over its duration (its TS3 -> TS4
 * cycles at the SoC clock when the record has them, as acelyzer's), as
 * the unrounded fraction, with "core used": true; from the ideal record
 * before it. */
static void args_ideal(ev_perfetto *p, const struct ev_rec *r)
{
	const struct ev_rec *x = &p->ideal;
	if (!p->have_ideal || x->rank != r->rank || x->stream != r->stream || x->ts != r->ts || !x->aux || !r->dur ||
	    !x->bytes)
		return;
	double ideal_us = (double)x->bytes / ((double)x->aux / 1000.0);
	double dur_us = x->step && x->id ? (double)x->step / ((double)x->id / 1000.0) : (double)r->dur / 1000.0;
	char num[32];
	snprintf(num, sizeof num, "%.17g", ideal_us / dur_us);
	pf_key(&p->ob, "pt_active");
	pf_puts(&p->ob, num);
	pf_key(&p->ob, "core used");
	pf_puts(&p->ob, "true");
}

/* The args every record type has of its own. */
static void args_type(ev_perfetto *p, const struct ev_rec *r, const char *opw)
{
	struct pf_buf *b = &p->ob;
	switch (r->type) {
	case EV_KERNEL:
		pf_kv_str(b, "class", opw ? opw : "other");
		pf_kv_u64(b, "stream", r->stream);
		if (r->id)
			pf_kv_u64(b, "correlation", r->id);
		if (r->aux)
			pf_kv_u64(b, "grid", r->aux);
		if (r->nthreads)
			pf_kv_u64(b, "block", r->nthreads);
		pf_tsx_args(&p->ob, &p->tsx, p->have_tsx, r);
		args_ideal(p, r);
		break;
	case EV_MEMCPY: case EV_MEMSET:
		pf_kv_u64(b, "bytes", r->bytes);
		if (r->type == EV_MEMCPY)
			pf_kv_str(b, "kind", opw ? opw : "unknown");
		if (r->id)
			pf_kv_u64(b, "correlation", r->id);
		break;
	case EV_COLL: case EV_P2P: case EV_SEND: case EV_RECV:
		args_coll(b, r, p->st);
		break;
	case EV_API:
		if (r->id)
			pf_kv_u64(b, "correlation", r->id);
		break;
	case EV_RANGE: case EV_MARK:
		if (r->id)
			pf_kv_u64(b, "id", r->id);
		break;
	case EV_CALC:
		if (r->bytes)
			pf_kv_u64(b, "bytes", r->bytes);
		pf_kv_u64(b, "id", r->id);
		break;
	default:
		break;
	}
}

/* The slice (an instant for a mark) of r on track t, ending at end (which
 * placing may have clipped). */
static void slice_event(ev_perfetto *p, const struct ev_rec *r, const struct pf_track *t, int64_t end, const char *opw)
{
	struct pf_buf *b = &p->ob;
	int mark = r->type == EV_MARK;
	pf_event(p, mark ? "i" : "X", t->pid, t->tid);
	pf_key(b, "name");
	pf_jstr(b, p->name.p, p->name.len);
	pf_kv_str(b, "cat", r->type == EV_RANGE || mark ? (opw ? opw : "range") : ev_type_name(r->type));
	pf_puts(b, ",\"ts\":");
	pf_us(b, pf_rel_ts(p, r->ts));
	if (mark) {
		pf_puts(b, ",\"s\":\"t\"");
	} else {
		pf_puts(b, ",\"dur\":");
		pf_us(b, (int64_t)((uint64_t)end - (uint64_t)r->ts));
	}
	pf_puts(b, ",\"args\":{\"rank\":");
	pf_u64(b, r->rank);
	args_type(p, r, opw);
	size_t siglen;
	const char *sig = ev_strtab_get(p->st, r->sig, &siglen);
	if (sig && siglen) {
		pf_key(b, "op");
		pf_jstr(b, sig, siglen);
	}
	if (!mark && end != rec_end(r))
		pf_kv_u64(b, "clipped_from_ns", r->dur);
	if (r->flags) {
		char fl[160];
		ev_flags_format(r->flags, fl, sizeof fl);
		pf_kv_str(b, "flags", fl);
	}
	pf_puts(b, "}}");
}

/* The counter a record's interval feeds, or -1. */
static int counter_of(const struct ev_rec *r)
{
	if (r->type == EV_KERNEL)
		return PF_C_KERNELS;
	if (r->type == EV_COLL || r->type == EV_P2P)
		return PF_C_COMM;
	return r->type == EV_SEND ? PF_C_WIRE : -1;
}

/* Every event of one record into p->ob.  EV_OK or EV_ERR_NOMEM (also when
 * ob.oom was set on the way). */
int pf_record(ev_perfetto *p, const struct ev_rec *r)
{
	int gpu = 0, kind = 0;
	uint32_t id;
	int w = where(r, &gpu, &kind, &id);
	if (w < 0) {
		p->skipped++;
		return EV_OK;
	}
	if (w == 0) {
		counter_event(p, r);
		return EV_OK;
	}
	const char *opw = ev_op_name(r->type, r->op);
	slice_name(p, r, opw);
	if (p->name.oom)
		return EV_ERR_NOMEM;
	int64_t end = r->type == EV_MARK ? r->ts : rec_end(r);
	struct pf_track *t = r->type == EV_MARK ? pf_get_track(p, r->rank, gpu, kind, id, 0)
	                                        : pf_place(p, r->rank, gpu, kind, id, r->ts, &end);
	if (!t)
		return EV_ERR_NOMEM;
	slice_event(p, r, t, end, opw);
	struct pf_ep e = { r->ts, end, t->pid, t->tid };
	if (!p->o.no_flows) {
		int rc = pf_flows_add(p, r, &e, opw);
		if (rc != EV_OK)
			return rc;
	}
	int which = p->o.no_counters ? -1 : counter_of(r);
	if (which >= 0) {
		struct pf_proc *pr = pf_get_proc(p, r->rank, 1);
		if (!pr)
			return EV_ERR_NOMEM;
		pf_counter_add(p, pr, which, r->ts, rec_end(r), which == PF_C_KERNELS ? 1 : r->bytes);
	}
	return p->ob.oom ? EV_ERR_NOMEM : EV_OK;
}
