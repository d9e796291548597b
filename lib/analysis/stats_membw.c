/* SPDX-License-Identifier: MIT */
/*
 * stats_membw.c - HTA's memory bandwidth summary (get_memory_bw_summary):
 * per rank and kind of copy (Memcpy DtoH, HtoD, DtoD, ..., Memset) the
 * bandwidth in use, HTA's time series: +bandwidth when a memcpy or memset
 * starts, -bandwidth when it ends (a 0 us event lasting 1 us), summed in
 * time order; the summary is the count, mean, std, min, quartiles and max
 * of the series' positive values.
 *
 * HTA takes a GPU event as memory by its name (Memcpy..., Memset...,
 * dma...; hipMemcpy... is communication to HTA), the kind from the name's
 * first 11 characters, and the bandwidth from the trace's "memory bandwidth
 * (GB/s)": kineto2ev keeps it as the measured duration (aux = bytes / GB/s
 * in ns, exact), so bytes / aux is the trace's number; without it, bytes /
 * dur (counted on stderr: the trace's duration is rounded).
 *
 * Streaming: each kind keeps its running sum and a heap of the ends still
 * to come (bounded by the copies running at once).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/hta_rank.h"
#include "analysis/stats_impl.h"

#define MAX_KINDS 16

struct pend { int64_t end; uint64_t seq; double bw; };

/* A kind's running sum and pending ends per state (its cursor), its
 * values in three parts (hta_rank.h). */
struct mcursor {
	double sum;
	struct pend *heap;
	size_t n, cap;
};

struct mkind {
	char name[16];
	struct mcursor c[2];
	struct ev_dist d[3];
};

struct mrank {
	struct hta_rank h;
	struct mkind k[MAX_KINDS];
	unsigned nk;
};

struct membw {
	struct ev_vec ranks;
	struct ev_map idx;
	uint64_t seq;
	uint64_t from_dur; /* copies without the trace's bandwidth: bytes / dur */
};

static int pend_less(const struct pend *a, const struct pend *b)
{
	return a->end != b->end ? a->end < b->end : a->seq < b->seq;
}

static int heap_push(struct mcursor *k, const struct pend *p)
{
	if (k->n == k->cap) {
		size_t cap = k->cap ? 2 * k->cap : 16;
		struct pend *n = realloc(k->heap, cap * sizeof *n);
		if (!n)
			return EV_ERR_NOMEM;
		k->heap = n;
		k->cap = cap;
	}
	size_t i = k->n++;
	k->heap[i] = *p;
	while (i && pend_less(&k->heap[i], &k->heap[(i - 1) / 2])) {
		struct pend t = k->heap[i];
		k->heap[i] = k->heap[(i - 1) / 2];
		k->heap[(i - 1) / 2] = t;
		i = (i - 1) / 2;
	}
	return EV_OK;
}

static struct pend heap_pop(struct mcursor *k)
{
	struct pend top = k->heap[0];
	k->heap[0] = k->heap[--k->n];
	for (size_t i = 0;;) {
		size_t l = 2 * i + 1, r = l + 1, m = i;
		if (l < k->n && pend_less(&k->heap[l], &k->heap[m]))
			m = l;
		if (r < k->n && pend_less(&k->heap[r], &k->heap[m]))
			m = r;
		if (m == i)
			break;
		struct pend t = k->heap[i];
		k->heap[i] = k->heap[m];
		k->heap[m] = t;
		i = m;
	}
	return top;
}

/* One step of the series in state j: the running sum, a value when
 * positive. */
static int add(struct ev_stats *s, struct mrank *mr, unsigned ki, int j, double bw, int64_t ts)
{
	struct mkind *k = &mr->k[ki];
	k->c[j].sum += bw;
	if (s->o.sample && j == 0)
		s->o.sample(s->o.sample_ctx, EV_SERIES_MEMBW, mr->h.rank, ki, k->name, mr->h.json_base_ns + ts * 1000,
		            k->c[0].sum);
	return k->c[j].sum > 0 ? ev_dist_add(&k->d[1 + j], &s->pool, k->c[j].sum, ts) : EV_OK;
}

/* The ends before t in state j (all with t = INT64_MAX). */
static int ends_before(struct ev_stats *s, struct mrank *mr, unsigned ki, int j, int64_t t)
{
	struct mkind *k = &mr->k[ki];
	int rc = EV_OK;
	while (!rc && k->c[j].n && k->c[j].heap[0].end < t) {
		struct pend p = heap_pop(&k->c[j]);
		rc = add(s, mr, ki, j, -p.bw, p.end);
	}
	return rc;
}

/* A step start (HTA_STEP_FORK: state 1 becomes state 0; SWITCH: the
 * reverse). */
static int step(struct ev_stats *s, struct mrank *mr, int act)
{
	int from = act == HTA_STEP_FORK ? 0 : 1, rc = EV_OK;
	for (unsigned i = 0; !rc && i < mr->nk; i++) {
		struct mkind *k = &mr->k[i];
		struct mcursor *d = &k->c[1 - from], *o = &k->c[from];
		if (o->n > d->cap) {
			struct pend *h = realloc(d->heap, o->n * sizeof *h);
			if (!h)
				return EV_ERR_NOMEM;
			d->heap = h;
			d->cap = o->n;
		}
		if (o->n)
			memcpy(d->heap, o->heap, o->n * sizeof *d->heap);
		d->n = o->n;
		d->sum = o->sum;
		rc = act == HTA_STEP_FORK ? hta_dist3_fork(k->d, &s->pool) : hta_dist3_switch(k->d, &s->pool);
	}
	return rc;
}

/* HTA's kind of a GPU event by its name, or NULL when HTA does not take it
 * as a memory event (utils.get_kernel_type, get_memory_kernel_type). */
static const char *kind_of(const char *name, char *buf, size_t n)
{
	if (!strncmp(name, "nccl", 4) || !strncmp(name, "hip", 3) || !strncmp(name, "hccl", 4) ||
	    strstr(name, "ncclKernel"))
		return NULL;
	if (!strncmp(name, "Memset", 6))
		return "Memset";
	if (!strncmp(name, "Memcpy", 6)) {
		snprintf(buf, n, "%.11s", name);
		return buf;
	}
	return !strncmp(name, "dma", 3) ? "Memcpy Unknown" : NULL;
}

static int membw_init(struct ev_stats *s)
{
	struct membw *st = s->state;
	ev_vec_init(&st->ranks, sizeof(struct mrank));
	ev_map_init(&st->idx);
	return EV_OK;
}

static int membw_rec(struct ev_stats *s, const struct ev_rec *r)
{
	struct membw *st = s->state;
	int fresh;
	struct mrank *mr = hta_rank_of(s, &st->ranks, &st->idx, r, &fresh);
	if (!mr)
		return EV_ERR_NOMEM;
	if (!is_gpu(r)) {
		int act = hta_rank_cpu(s, &mr->h, r, NULL);
		return act > 0 ? step(s, mr, act) : act; /* a step forks or switches */
	}
	char buf[16];
	const char *kind = kind_of(str_of(s, r->name), buf, sizeof buf);
	if (!kind)
		return EV_OK;
	unsigned mask = hta_rank_route(&mr->h, hta_rank_call(&mr->h, r->id));
	if (!mask)
		return EV_OK;
	s->n.selected++;
	double bw;
	if (r->aux && r->type != EV_KERNEL) {
		bw = (double)r->bytes / (double)r->aux;
	} else {
		/* No bytes: HTA has no bandwidth either (NaN, never positive). */
		bw = r->dur ? (double)r->bytes / (double)r->dur : 0;
		st->from_dur += r->bytes != 0;
	}
	int64_t ts, end;
	hta_us(mr->h.json_base_ns, r->ts, ev_rec_end(r), &ts, &end);
	if (end == ts)
		end = ts + 1; /* HTA: a 0 us event lasts 1 us */
	struct pend p = { end, st->seq++, bw };
	unsigned i = 0;
	while (i < mr->nk && strcmp(mr->k[i].name, kind))
		i++;
	if (i == mr->nk) {
		if (mr->nk == MAX_KINDS)
			return EV_OK; /* HTA's kinds are a handful: the 11-character prefixes of copy names */
		snprintf(mr->k[mr->nk++].name, sizeof mr->k[0].name, "%s", kind);
	}
	struct mkind *k = &mr->k[i];
	for (int j = 0; j < 2; j++) {
		if (!(mask & (1u << j)))
			continue;
		int rc = heap_push(&k->c[j], &p);
		rc = rc ? rc : ends_before(s, mr, i, j, ts);
		rc = rc ? rc : add(s, mr, i, j, bw, ts);
		if (rc)
			return rc;
	}
	return EV_OK;
}

static int membw_finish(struct ev_stats *s)
{
	struct membw *st = s->state;
	int rc = EV_OK;
	for (size_t i = 0; i < st->ranks.len; i++) {
		struct mrank *mr = (struct mrank *)st->ranks.data + i;
		for (unsigned k = 0; !rc && k < mr->nk; k++) {
			rc = ends_before(s, mr, k, 0, INT64_MAX);
			rc = rc ? rc : ends_before(s, mr, k, 1, INT64_MAX);
			rc = rc ? rc : hta_dist3_final(mr->k[k].d, hta_rank_filtered(&mr->h), &s->pool);
			s->n.one_instance += mr->k[k].d[0].n == 1;
		}
	}
	return rc;
}

static int membw_warning(ev_stats *s, unsigned i, char *buf, size_t n)
{
	const struct membw *st = s->state;
	if (i > 0 || !st->from_dur)
		return 0;
	snprintf(buf, n,
	         "%llu memcpy/memset events have no exact bandwidth from the trace (no \"memory bandwidth (GB/s)\", or "
	         "converted by an older kineto2ev): bytes / duration used, which differs from HTA's where the trace's "
	         "duration is rounded",
	         (unsigned long long)st->from_dur);
	return 1;
}

static int cmp_kind(const void *a, const void *b)
{
	return strcmp(((const struct mkind *)a)->name, ((const struct mkind *)b)->name);
}

static int membw_rows(struct ev_stats *s, struct ev_rowset *rs)
{
	struct membw *st = s->state;
	struct ev_colspec keys[EV_STATS_MAX_BY + 2];
	size_t nk = 0;
	by_colspecs(&s->o, keys, &nk);
	/* rank (and stream) are key columns of their own unless --by has them */
	int own_rank = !has_by(&s->o, EV_BY_RANK);
	if (own_rank)
		keys[nk++] = (struct ev_colspec){ "rank", 1, 0 };
	keys[nk++] = (struct ev_colspec){ "name", 0, 0 };
	static const struct ev_colspec vals[] = {
		{ "count", 0, 0 },      { "mean_GBps", 0, EV_DIR_HIGHER }, { "std_GBps", 0, 0 },
		{ "min_GBps", 0, 0 },   { "p25_GBps", 0, 0 },              { "p50_GBps", 0, 0 },
		{ "p75_GBps", 0, 0 },   { "max_GBps", 0, EV_DIR_HIGHER },
	};
	int rc = ev_rowset_init(rs, keys, nk, vals, 8);
	for (size_t i = 0; !rc && i < st->ranks.len; i++) {
		struct mrank *mr = (struct mrank *)st->ranks.data + i;
		qsort(mr->k, mr->nk, sizeof mr->k[0], cmp_kind);
		for (unsigned j = 0; !rc && j < mr->nk; j++) {
			struct ev_dist *d = &mr->k[j].d[0];
			if (!d->n)
				continue;
			struct gkey k = { .sg = mr->h.sg, .rank = mr->h.rank };
			struct ev_row *row;
			size_t n;
			rc = group_row(s, rs, &k, &row, &n);
			if (own_rank && !rc)
				rc = ev_row_keyu(row, n++, mr->h.rank);
			rc = rc ? rc : ev_row_key(row, n, mr->k[j].name);
			if (rc)
				break;
			row->val[0] = (double)d->n;
			row->val[1] = d->mean;
			row->val[2] = d->n > 1 ? ev_dist_std(d) : NAN;
			row->val[3] = d->min;
			row->val[4] = ev_dist_quantile(d, 0.25);
			row->val[5] = ev_dist_quantile(d, 0.5);
			row->val[6] = ev_dist_quantile(d, 0.75);
			row->val[7] = d->max;
		}
	}
	return rc;
}

static void membw_free(struct ev_stats *s)
{
	struct membw *st = s->state;
	for (size_t i = 0; i < st->ranks.len; i++) {
		struct mrank *mr = (struct mrank *)st->ranks.data + i;
		for (unsigned k = 0; k < mr->nk; k++) {
			free(mr->k[k].c[0].heap);
			free(mr->k[k].c[1].heap);
			for (int j = 0; j < 3; j++)
				ev_dist_release(&mr->k[k].d[j], &s->pool);
		}
		hta_rank_free(&mr->h);
	}
	ev_vec_free(&st->ranks);
	ev_map_free(&st->idx);
}

static int membw_explain(const struct ev_stats_opts *o, const struct ev_stats_counts *c, char *buf, size_t n)
{
	(void)o;
	if (!c->gpu)
		return 0;
	if (c->selected)
		snprintf(buf, n, "none of %llu memcpy/memset events has a positive bandwidth (no bytes in the trace): "
		         "empty table, as HTA's", (unsigned long long)c->selected);
	else
		snprintf(buf, n, "no memcpy or memset among %llu GPU events (HTA: names Memcpy*, Memset*, dma*): "
		         "empty table", (unsigned long long)c->gpu);
	return 1;
}

static const char *const membw_options[] = { "exact-limit", NULL };

const struct ev_stats_analysis ev_stats_analysis_membw = {
	.name = "membw",
	.sheet = "get_memory_bw_summary",
	.help = "HTA's memory bandwidth summary: per rank and kind of copy\n"
	        "(Memcpy DtoH, HtoD, DtoD, Memset) the bandwidth in use over\n"
	        "time, +GB/s at each start and -GB/s at each end: count,\n"
	        "mean, std, min, quartiles and max of its positive values",
	.options = membw_options,
	.default_by = "config",
	.state_size = sizeof(struct membw),
	.init = membw_init,
	.rec = membw_rec,
	.finish = membw_finish,
	.rows = membw_rows,
	.free = membw_free,
	.explain = membw_explain,
	.warning = membw_warning,
};
