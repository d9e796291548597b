/* SPDX-License-Identifier: MIT */
/*
 * stats_queue.c - HTA's queue length summary (get_queue_length_summary):
 * per rank and GPU stream, the launched-but-not-started GPU events.  HTA's
 * time series steps +1 at each launch call (cudaLaunchKernel, cuLaunchKernel,
 * hipLaunchKernel, cuda/hip Memcpy/MemsetAsync, ...) whose GPU event is in
 * the trace, and -1 when that event starts on its stream; the summary is
 * the count, mean, std, min, quartiles and max of the series' values, one
 * value per step.
 *
 * Streaming: a call's stream is known only when its GPU event comes, so
 * steps wait in a time-ordered queue until every call before them has its
 * event; a call still without one after QUEUE_HOLD later steps, or at the
 * end, has none (HTA counts only calls whose event is in the trace) and is
 * dropped, counted.  The values are counted per distinct value, so the
 * quartiles are exact in memory that grows with the longest queue.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/hta_rank.h"
#include "analysis/stats_impl.h"

#define QUEUE_HOLD (1u << 20)
#define VAL_BIAS (1ull << 40) /* ev_map keys are non-zero: value + bias */

enum { I_CALL, I_KERNEL, I_FORK, I_SWITCH };

struct qitem {
	int64_t ts;       /* us */
	uint32_t corr, stream;
	uint8_t kind, mask, resolved;
};

/* The values in three parts (hta_rank.h: [0] both states, [1] state 0
 * since the latest step start, [2] state 1), the length per state. */
struct qacc {
	uint64_t n;
	double s1, s2;
	struct ev_map hist; /* value + VAL_BIAS -> samples */
};

struct qstream {
	uint32_t stream;
	int64_t len[2];
	struct qacc a[3];
};

struct qrank {
	struct hta_rank h;
	struct qitem *q;    /* ring of cap (a power of two) items, positions lo..hi */
	uint64_t lo, hi;
	size_t cap;
	struct ev_map pending; /* corr + 1 -> position + 1 of its unresolved call */
	struct ev_vec streams; /* struct qstream */
};

struct queue {
	struct ev_vec ranks;
	struct ev_map idx;
	uint64_t held_out; /* calls given up while QUEUE_HOLD steps waited for their GPU event */
};

static void streams_free(struct ev_vec *v)
{
	for (size_t i = 0; i < v->len; i++)
		for (int k = 0; k < 3; k++)
			ev_map_free(&((struct qstream *)v->data)[i].a[k].hist);
	ev_vec_free(v);
}

/* d takes src's values; src is emptied. */
static int acc_merge(struct qacc *d, struct qacc *src)
{
	d->n += src->n;
	d->s1 += src->s1;
	d->s2 += src->s2;
	for (size_t j = 0; j < src->hist.cap; j++) {
		uint64_t key = src->hist.keys[j], *c;
		if (!key)
			continue;
		if ((c = ev_map_get(&d->hist, key)) != NULL)
			*c += src->hist.vals[j];
		else if (ev_map_put(&d->hist, key, src->hist.vals[j]) != EV_OK)
			return EV_ERR_NOMEM;
	}
	ev_map_free(&src->hist);
	memset(src, 0, sizeof *src);
	ev_map_init(&src->hist);
	return EV_OK;
}

static void acc_clear(struct qacc *a)
{
	ev_map_free(&a->hist);
	memset(a, 0, sizeof *a);
	ev_map_init(&a->hist);
}

/* A step start (I_FORK: state 1 becomes state 0; I_SWITCH: the reverse),
 * or the end (kind -1 - filtered: the answer into part 0). */
static int fork_streams(struct ev_vec *v, int kind)
{
	int rc = EV_OK;
	for (size_t i = 0; !rc && i < v->len; i++) {
		struct qstream *q = (struct qstream *)v->data + i;
		if (kind == I_FORK || kind == I_SWITCH) {
			int from = kind == I_FORK ? 0 : 1;
			q->len[1 - from] = q->len[from];
			acc_clear(&q->a[2 - from]);
			rc = acc_merge(&q->a[0], &q->a[1 + from]);
		} else {
			int f = -1 - kind;
			acc_clear(&q->a[2 - f]);
			rc = acc_merge(&q->a[0], &q->a[1 + f]);
		}
	}
	return rc;
}

/* One step of stream's series in state k, at time ts (us). */
static int step(struct ev_stats *s, struct qrank *qr, int k, uint32_t stream, int delta, int64_t ts)
{
	struct ev_vec *v = &qr->streams;
	struct qstream *a = v->data, *q = NULL;
	for (size_t i = v->len; i-- > 0;)
		if (a[i].stream == stream) {
			q = &a[i];
			break;
		}
	if (!q) {
		if (!(q = ev_vec_push(v)))
			return EV_ERR_NOMEM;
		q->stream = stream;
		for (int j = 0; j < 3; j++)
			ev_map_init(&q->a[j].hist);
	}
	q->len[k] += delta;
	if (s->o.sample && k == 0) {
		char name[24];
		snprintf(name, sizeof name, "stream %u", (unsigned)stream);
		s->o.sample(s->o.sample_ctx, EV_SERIES_QUEUE, qr->h.rank, stream, name, qr->h.json_base_ns + ts * 1000,
		            (double)q->len[0]);
	}
	struct qacc *acc = &q->a[1 + k];
	double x = (double)q->len[k];
	acc->n++;
	acc->s1 += x;
	acc->s2 += x * x;
	uint64_t key = (uint64_t)q->len[k] + VAL_BIAS, *c = ev_map_get(&acc->hist, key);
	if (c) {
		(*c)++;
		return EV_OK;
	}
	return ev_map_put(&acc->hist, key, 1);
}

static struct qitem *item(struct qrank *qr, uint64_t pos)
{
	return &qr->q[pos & (qr->cap - 1)];
}

static int push(struct qrank *qr, const struct qitem *it)
{
	if (qr->hi - qr->lo == qr->cap) {
		size_t cap = qr->cap ? 2 * qr->cap : 256;
		struct qitem *n = malloc(cap * sizeof *n);
		if (!n)
			return EV_ERR_NOMEM;
		for (uint64_t p = qr->lo; p < qr->hi; p++)
			n[p & (cap - 1)] = *item(qr, p);
		free(qr->q);
		qr->q = n;
		qr->cap = cap;
	}
	*item(qr, qr->hi++) = *it;
	return EV_OK;
}

/* Apply the steps at the head of the queue that nothing earlier waits
 * for and that no call can still come before: those before microsecond
 * now (a call of microsecond now may still come, and goes before the
 * starts of that microsecond).  With force, everything: a call still
 * unresolved at the head has no GPU event. */
static int drain(struct ev_stats *s, struct qrank *qr, int64_t now, int force)
{
	struct queue *st = s->state;
	int rc = EV_OK;
	while (!rc && qr->lo < qr->hi) {
		struct qitem *it = item(qr, qr->lo);
		if (!force && it->ts >= now)
			break;
		if (it->kind == I_CALL && !it->resolved) {
			if (!force && qr->hi - qr->lo <= QUEUE_HOLD)
				break;
			st->held_out += !force;
			uint64_t *p = ev_map_get(&qr->pending, (uint64_t)it->corr + 1);
			if (p && *p == qr->lo + 1)
				*p = 0; /* stale: the call is gone */
		} else if (it->kind == I_FORK || it->kind == I_SWITCH) {
			rc = fork_streams(&qr->streams, it->kind);
		} else {
			for (int k = 0; !rc && k < 2; k++)
				if (it->mask & (1u << k))
					rc = step(s, qr, k, it->stream, it->kind == I_CALL ? 1 : -1, it->ts);
		}
		qr->lo++;
	}
	return rc;
}

static int queue_init(struct ev_stats *s)
{
	struct queue *st = s->state;
	ev_vec_init(&st->ranks, sizeof(struct qrank));
	ev_map_init(&st->idx);
	return EV_OK;
}

static int queue_rec(struct ev_stats *s, const struct ev_rec *r)
{
	struct queue *st = s->state;
	int fresh;
	struct qrank *qr = hta_rank_of(s, &st->ranks, &st->idx, r, &fresh);
	if (!qr)
		return EV_ERR_NOMEM;
	if (fresh) {
		ev_map_init(&qr->pending);
		ev_vec_init(&qr->streams, sizeof(struct qstream));
	}
	struct qitem it = { 0 };
	int rc;
	if (!is_gpu(r)) {
		const struct hta_call *c;
		int act = hta_rank_cpu(s, &qr->h, r, &c);
		if (act < 0)
			return act;
		if (act == HTA_STEP_FORK || act == HTA_STEP_SWITCH) {
			it.kind = act == HTA_STEP_FORK ? I_FORK : I_SWITCH;
			return push(qr, &it);
		}
		if (!c || c->kind == HTA_CALL_OTHER)
			return EV_OK;
		it.ts = c->ts_us;
		it.corr = c->corr;
		it.kind = I_CALL;
		if ((rc = push(qr, &it)) != EV_OK)
			return rc;
		/* HTA orders its steps by time, launches before starts at the
		 * same microsecond (its concatenation order, which a stable sort
		 * keeps): move the call before the starts of its microsecond. */
		uint64_t at = qr->hi - 1;
		while (at > qr->lo && item(qr, at - 1)->kind == I_KERNEL && item(qr, at - 1)->ts == it.ts) {
			*item(qr, at) = *item(qr, at - 1);
			*item(qr, --at) = it;
		}
		rc = ev_map_put(&qr->pending, (uint64_t)c->corr + 1, at + 1);
		return rc ? rc : drain(s, qr, c->ts_us, 0);
	}
	int64_t ts, end;
	hta_us(qr->h.json_base_ns, r->ts, ev_rec_end(r), &ts, &end);
	uint64_t *p = r->id ? ev_map_get(&qr->pending, (uint64_t)r->id + 1) : NULL;
	if (!p || !*p || *p - 1 < qr->lo)
		return drain(s, qr, ts, 0);
	struct qitem *call = item(qr, *p - 1);
	*p = 0;
	if (call->resolved || call->corr != r->id)
		return drain(s, qr, ts, 0);
	s->n.selected++;
	call->stream = r->stream;
	call->mask = (uint8_t)hta_rank_route_ts(&qr->h, call->ts);
	call->resolved = 1;
	it = (struct qitem){ .ts = ts, .corr = r->id, .stream = r->stream, .kind = I_KERNEL, .mask = call->mask,
	                     .resolved = 1 };
	rc = push(qr, &it);
	/* Keep the map to the calls still waiting: rebuild it when the
	 * resolved ones (value 0) outnumber them. */
	if (!rc && qr->pending.len > 4096 && qr->pending.len > 4 * (qr->hi - qr->lo)) {
		struct ev_map keep;
		ev_map_init(&keep);
		for (uint64_t q = qr->lo; !rc && q < qr->hi; q++)
			if (item(qr, q)->kind == I_CALL && !item(qr, q)->resolved)
				rc = ev_map_put(&keep, (uint64_t)item(qr, q)->corr + 1, q + 1);
		ev_map_free(&qr->pending);
		qr->pending = keep;
	}
	return rc ? rc : drain(s, qr, ts, 0);
}

static int queue_finish(struct ev_stats *s)
{
	struct queue *st = s->state;
	int rc = EV_OK;
	for (size_t i = 0; !rc && i < st->ranks.len; i++) {
		struct qrank *qr = (struct qrank *)st->ranks.data + i;
		rc = drain(s, qr, 0, 1);
		rc = rc ? rc : fork_streams(&qr->streams, -1 - hta_rank_filtered(&qr->h));
	}
	return rc;
}

struct vc { int64_t v; uint64_t n; };

static int cmp_vc(const void *a, const void *b)
{
	int64_t x = ((const struct vc *)a)->v, y = ((const struct vc *)b)->v;
	return x < y ? -1 : x > y;
}

/* The i-th smallest of the counted values (sorted). */
static double value_at(const struct vc *v, size_t nv, uint64_t i)
{
	uint64_t seen = 0;
	for (size_t k = 0; k < nv; k++) {
		seen += v[k].n;
		if (i < seen)
			return (double)v[k].v;
	}
	return nv ? (double)v[nv - 1].v : NAN;
}

/* numpy's linear quantile over the counted values. */
static double hist_quantile(const struct vc *v, size_t nv, uint64_t n, double q)
{
	double pos = q * (double)(n - 1);
	uint64_t lo = (uint64_t)pos;
	double a = value_at(v, nv, lo), b = value_at(v, nv, lo + 1 < n ? lo + 1 : lo);
	return a + (b - a) * (pos - (double)lo);
}

static int cmp_stream(const void *a, const void *b)
{
	uint32_t x = ((const struct qstream *)a)->stream, y = ((const struct qstream *)b)->stream;
	return x < y ? -1 : x > y;
}

static int queue_rows(struct ev_stats *s, struct ev_rowset *rs)
{
	struct queue *st = s->state;
	struct ev_colspec keys[EV_STATS_MAX_BY + 2];
	size_t nk = 0;
	by_colspecs(&s->o, keys, &nk);
	/* rank (and stream) are key columns of their own unless --by has them */
	int own_rank = !has_by(&s->o, EV_BY_RANK), own_stream = !has_by(&s->o, EV_BY_STREAM);
	if (own_rank)
		keys[nk++] = (struct ev_colspec){ "rank", 1, 0 };
	if (own_stream)
		keys[nk++] = (struct ev_colspec){ "stream", 1, 0 };
	static const struct ev_colspec vals[] = {
		{ "count", 0, 0 }, { "mean", 0, EV_DIR_LOWER }, { "std", 0, 0 }, { "min", 0, 0 },
		{ "p25", 0, 0 },   { "p50", 0, 0 },              { "p75", 0, 0 }, { "max", 0, EV_DIR_LOWER },
	};
	int rc = ev_rowset_init(rs, keys, nk, vals, 8);
	for (size_t i = 0; !rc && i < st->ranks.len; i++) {
		struct qrank *qr = (struct qrank *)st->ranks.data + i;
		struct ev_vec *v = &qr->streams;
		if (v->len)
			qsort(v->data, v->len, sizeof(struct qstream), cmp_stream);
		for (size_t j = 0; !rc && j < v->len; j++) {
			struct qacc *q = &((struct qstream *)v->data + j)->a[0];
			uint32_t stream = ((struct qstream *)v->data + j)->stream;
			if (!q->n)
				continue;
			struct vc *vs = malloc((q->hist.len + 1) * sizeof *vs);
			if (!vs)
				return EV_ERR_NOMEM;
			size_t nv = 0;
			for (size_t h = 0; h < q->hist.cap; h++)
				if (q->hist.keys[h])
					vs[nv++] = (struct vc){ (int64_t)(q->hist.keys[h] - VAL_BIAS), q->hist.vals[h] };
			qsort(vs, nv, sizeof *vs, cmp_vc);
			struct gkey k = { .sg = qr->h.sg, .rank = qr->h.rank, .stream = stream };
			struct ev_row *row;
			size_t n;
			rc = group_row(s, rs, &k, &row, &n);
			if (own_rank && !rc)
				rc = ev_row_keyu(row, n++, qr->h.rank);
			if (own_stream && !rc)
				rc = ev_row_keyu(row, n, stream);
			if (!rc) {
				double nn = (double)q->n, mean = q->s1 / nn;
				row->val[0] = nn;
				row->val[1] = mean;
				row->val[2] = q->n > 1 ? sqrt(fmax(0, (q->s2 - q->s1 * mean) / (nn - 1))) : NAN;
				row->val[3] = (double)vs[0].v;
				row->val[4] = hist_quantile(vs, nv, q->n, 0.25);
				row->val[5] = hist_quantile(vs, nv, q->n, 0.5);
				row->val[6] = hist_quantile(vs, nv, q->n, 0.75);
				row->val[7] = (double)vs[nv - 1].v;
			}
			free(vs);
		}
	}
	return rc;
}

static void queue_free(struct ev_stats *s)
{
	struct queue *st = s->state;
	for (size_t i = 0; i < st->ranks.len; i++) {
		struct qrank *qr = (struct qrank *)st->ranks.data + i;
		streams_free(&qr->streams);
		ev_map_free(&qr->pending);
		free(qr->q);
		hta_rank_free(&qr->h);
	}
	ev_vec_free(&st->ranks);
	ev_map_free(&st->idx);
}

static int queue_explain(const struct ev_stats_opts *o, const struct ev_stats_counts *c, char *buf, size_t n)
{
	(void)o;
	if (!c->gpu)
		return 0;
	snprintf(buf, n,
	         "no GPU event among %llu has its launch call (cudaLaunchKernel, hipLaunchKernel, cuLaunchKernel, "
	         "Memcpy/MemsetAsync, ...) in the stream: empty table",
	         (unsigned long long)c->gpu);
	return 1;
}

static int queue_warning(ev_stats *s, unsigned i, char *buf, size_t n)
{
	const struct queue *st = s->state;
	if (i > 0 || !st->held_out)
		return 0;
	snprintf(buf, n,
	         "%llu launch calls had no GPU event within %u later steps and were left out of the queue length (HTA "
	         "would count a much later event)",
	         (unsigned long long)st->held_out, QUEUE_HOLD);
	return 1;
}

static const char *const queue_options[] = { NULL };

const struct ev_stats_analysis ev_stats_analysis_queue = {
	.name = "queue",
	.sheet = "get_queue_length_summary",
	.help = "HTA's queue length summary: per rank and GPU stream the\n"
	        "launched-but-not-started GPU events, +1 at each launch call\n"
	        "and -1 when its event starts: count, mean, std, min,\n"
	        "quartiles and max of the series",
	.options = queue_options,
	.default_by = "config",
	.state_size = sizeof(struct queue),
	.init = queue_init,
	.rec = queue_rec,
	.finish = queue_finish,
	.rows = queue_rows,
	.free = queue_free,
	.explain = queue_explain,
	.warning = queue_warning,
};
