/* SPDX-License-Identifier: MIT */
/*
 * stats_coll.c - collectives matched across the ranks of a source group by
 * (communicator, seq) through collmatch.c, with TraceLens NcclAnalyser's
 * per-collective numbers: latency (the fastest rank's duration), start and
 * end skew, waits, algbw and busbw; summarised per (kind, dtype, bytes), or
 * one row per collective, or per rank (stragglers).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/stats_impl.h"

/* Mean and max only (the skews need no quantiles, so no samples): the
 * same running-mean arithmetic as ev_dist, so the numbers are identical. */
struct moments { uint64_t n; double mean, max; };

struct cstat { /* summary per (sg, op, dtype, bytes) */
	struct ev_dist lat, algbw, busbw;
	struct moments sskew, eskew;
	uint64_t nranks;
	double total_lat_us;
};

struct strag { uint64_t colls, last, first, last_tied, first_tied; double wait_us, dur_us; };

struct coll {
	ev_collmatch *cm;
	struct groups aux;              /* per-rank stragglers: struct strag */
};

static double busbw_factor(unsigned op, double n)
{
	switch (op) {
	case EV_OP_ALLREDUCE: return n > 0 ? 2 * (n - 1) / n : 1;
	case EV_OP_REDUCESCATTER:
	case EV_OP_ALLGATHER:
	case EV_OP_ALLTOALL:
	case EV_OP_ALLTOALLV: return n > 0 ? (n - 1) / n : 1;
	default: return 1;
	}
}

static int each_row(struct ev_stats *s, const struct ev_coll_done *c, int64_t tmin, double lat_us, double sskew,
                    double eskew, double avg_wait_us, uint32_t first, uint32_t last, double algbw, double busbw)
{
	ev_table *t = s->o.stream;
	char b[16], comm[20];
	const struct srcgrp *g = (const struct srcgrp *)s->srcgrps.data + c->key.group;
	const char *cn = ev_coll_name(c->first.op), *dn = ev_dtype_name(c->first.dtype);
	int rc = ev_table_str(t, src_label(s, g->first_src, b, sizeof b));
	snprintf(comm, sizeof comm, "%016llx", (unsigned long long)c->key.comm);
	rc = rc ? rc : ev_table_str(t, comm);
	rc = rc ? rc : ev_table_u64(t, c->key.seq);
	rc = rc ? rc : ev_table_str(t, cn ? cn : "unknown");
	rc = rc ? rc : ev_table_str(t, dn ? dn : "unknown");
	rc = rc ? rc : ev_table_u64(t, c->first.bytes);
	rc = rc ? rc : ev_table_u64(t, c->expect);
	rc = rc ? rc : ev_table_u64(t, c->seen);
	rc = rc ? rc : ev_table_i64(t, tmin);
	rc = rc ? rc : ev_table_f64(t, lat_us);
	rc = rc ? rc : ev_table_f64(t, sskew);
	rc = rc ? rc : ev_table_f64(t, eskew);
	rc = rc ? rc : ev_table_f64(t, avg_wait_us);
	rc = rc ? rc : ev_table_u64(t, first);
	rc = rc ? rc : ev_table_u64(t, last);
	rc = rc ? rc : ev_table_f64(t, algbw);
	rc = rc ? rc : ev_table_f64(t, busbw);
	s->n.streamed += rc == EV_OK;
	return rc;
}

static void moments_add(struct moments *m, double x)
{
	m->n++;
	m->mean += (x - m->mean) / (double)m->n;
	if (m->n == 1 || x > m->max)
		m->max = x;
}

/* One collective, complete or released incomplete. */
static int coll_done(void *ctx, const struct ev_coll_done *c)
{
	struct ev_stats *s = ctx;
	struct coll *cl = s->state;
	const struct ev_coll_arrival *a = c->arr;
	int64_t tmin = INT64_MAX, tmax = INT64_MIN, emin = INT64_MAX, emax = INT64_MIN;
	uint64_t lat = UINT64_MAX;
	for (uint32_t i = 0; i < c->seen; i++) {
		if (a[i].ts < tmin) tmin = a[i].ts;
		if (a[i].ts > tmax) tmax = a[i].ts;
		if (a[i].end < emin) emin = a[i].end;
		if (a[i].end > emax) emax = a[i].end;
		if (a[i].dur < lat) lat = a[i].dur;
	}
	/* One first and one last rank per collective, as TraceLens picks one:
	 * among ranks that start at the same earliest (latest) time, the
	 * lowest rank, whatever order they arrived in.  How many tied is
	 * counted apart (nfirst, nlast). */
	uint32_t first = UINT32_MAX, last = UINT32_MAX, nfirst = 0, nlast = 0;
	for (uint32_t i = 0; i < c->seen; i++) {
		if (a[i].ts == tmin) {
			nfirst++;
			if (a[i].rank < first) first = a[i].rank;
		}
		if (a[i].ts == tmax) {
			nlast++;
			if (a[i].rank < last) last = a[i].rank;
		}
	}
	double wait = 0;
	for (uint32_t i = 0; i < c->seen; i++)
		wait += (double)ev_span(a[i].ts, tmax);
	double avg_wait_us = wait / c->seen / 1e3;
	double lat_us = (double)lat / 1e3;
	double algbw = lat > 0 ? ((double)c->first.bytes / 1073741824.0) / ((double)lat / 1e9) : NAN;
	double n = (double)(c->expect ? c->expect : c->seen);
	double busbw = algbw * busbw_factor(c->first.op, n);
	double sskew = (double)ev_span(tmin, tmax) / 1e3, eskew = (double)ev_span(emin, emax) / 1e3;
	int rc = EV_OK;
	if (!c->complete)
		s->n.coll_incomplete++;
	/* Stragglers per rank. */
	for (uint32_t i = 0; i < c->seen && !rc; i++) {
		struct gkey k;
		memset(&k, 0, sizeof k);
		k.sg = (uint32_t)c->key.group;
		k.rank = a[i].rank;
		struct strag *st = group_get(&cl->aux, &k, NULL);
		if (!st)
			return EV_ERR_NOMEM;
		st->colls++;
		st->last += a[i].rank == last;
		st->first += a[i].rank == first;
		st->last_tied += a[i].ts == tmax && nlast > 1;
		st->first_tied += a[i].ts == tmin && nfirst > 1;
		st->wait_us += (double)ev_span(a[i].ts, tmax) / 1e3;
		st->dur_us += (double)a[i].dur / 1e3;
	}
	if (s->o.table == EV_COLL_EACH)
		return each_row(s, c, tmin, lat_us, sskew, eskew, avg_wait_us, first, last, algbw, busbw);
	struct gkey k;
	memset(&k, 0, sizeof k);
	k.sg = (uint32_t)c->key.group;
	k.k1 = c->first.bytes;
	k.k2 = (uint64_t)c->first.op << 8 | c->first.dtype;
	struct cstat *cs = group_get(&s->g, &k, NULL);
	if (!cs)
		return EV_ERR_NOMEM;
	cs->nranks = (uint64_t)n;
	cs->total_lat_us += lat_us;
	rc = ev_dist_add(&cs->lat, &s->pool, lat_us, tmin);
	moments_add(&cs->sskew, sskew);
	moments_add(&cs->eskew, eskew);
	if (!rc && isfinite(algbw)) {
		rc = ev_dist_add(&cs->algbw, &s->pool, algbw, tmin);
		rc = rc ? rc : ev_dist_add(&cs->busbw, &s->pool, busbw, tmin);
	}
	return rc;
}

static int coll_init(struct ev_stats *s)
{
	struct coll *cl = s->state;
	groups_init(&cl->aux, sizeof(struct strag));
	return ev_collmatch_new(&cl->cm, &s->o.coll_limits, coll_done, s);
}

/* Ranks of the record's communicator: the record's aux, else #comm. */
static uint32_t comm_nranks(const struct ev_stats *s, const struct ev_rec *r)
{
	if (r->aux)
		return r->aux;
	const struct ev_comm_info *ci = ev_meta_comm(s->meta, r->comm);
	return ci ? ci->nranks : 0;
}

static int coll_rec(struct ev_stats *s, const struct ev_rec *r)
{
	struct coll *cl = s->state;
	if (r->type != EV_COLL)
		return EV_OK;
	s->n.coll++;
	uint32_t sg;
	int rc = src_group(s, r->src, &sg);
	if (rc)
		return rc;
	struct ev_coll_key k = { sg, r->comm, r->seq, 0 };
	/* The ranks of one collective agree on its kind and, but for
	 * all-to-all (whose per-rank sizes may differ), its size: when they
	 * do not, the ranks' traces do not hold the same collectives (cut or
	 * sampled traces, a missed launch), and the pairing by seq is wrong. */
	uint64_t what = (uint64_t)r->op << 56 | (r->op == EV_OP_ALLTOALL ? 0 : r->bytes & ((1ULL << 56) - 1));
	struct ev_coll_arrival prev;
	rc = ev_collmatch_add(cl->cm, &k, comm_nranks(s, r), r, what, &prev);
	if (rc == EV_OK && prev.rank != UINT32_MAX && prev.data != what)
		s->n.coll_mismatch++;
	return rc;
}

static int coll_finish(struct ev_stats *s)
{
	struct coll *cl = s->state;
	int rc = ev_collmatch_flush(cl->cm);
	struct ev_collmatch_counts c;
	ev_collmatch_get_counts(cl->cm, &c);
	s->n.coll_evicted = c.evicted;
	s->n.coll_unsized = c.unsized;
	return rc;
}

static int cmp_src_rank(const void *a, const void *b, void *arg)
{
	const struct groups *aux = arg;
	const struct gkey *x = GROUP_KEY(aux, *(const size_t *)a), *y = GROUP_KEY(aux, *(const size_t *)b);
	if (x->sg != y->sg)
		return x->sg < y->sg ? -1 : 1;
	return x->rank < y->rank ? -1 : x->rank > y->rank;
}

static int stragglers_rows(struct ev_stats *s, struct ev_rowset *rs, struct ev_colspec *keys, size_t nk)
{
	struct groups *aux = &((struct coll *)s->state)->aux;
	keys[nk++] = (struct ev_colspec){ "rank", 1, 0 };
	static const struct ev_colspec vals[] = {
		{ "collectives", 0, 0 }, { "times_last", 0, EV_DIR_LOWER }, { "times_first", 0, EV_DIR_NONE },
		{ "times_last_tied", 0, EV_DIR_NONE }, { "times_first_tied", 0, EV_DIR_NONE }, { "pct_last", 0, EV_DIR_LOWER }, { "total_wait_us", 0, EV_DIR_NONE }, { "mean_wait_us", 0, EV_DIR_NONE },
		{ "total_coll_dur_us", 0, EV_DIR_LOWER },
	};
	int rc = ev_rowset_init(rs, keys, nk, vals, sizeof vals / sizeof vals[0]);
	size_t *ord = malloc((aux->keys.len + 1) * sizeof *ord);
	if (!ord)
		return EV_ERR_NOMEM;
	for (size_t i = 0; i < aux->keys.len; i++)
		ord[i] = i;
	qsort_r(ord, aux->keys.len, sizeof *ord, cmp_src_rank, aux);
	for (size_t j = 0; !rc && j < aux->keys.len; j++) {
		size_t i = ord[j];
		const struct gkey *k = GROUP_KEY(aux, i);
		const struct strag *st = GROUP_VAL(aux, i);
		struct ev_row *r;
		size_t n;
		struct gkey gk = *k;
		gk.rank = 0; /* the rank is this table's own key column */
		if ((rc = group_row(s, rs, &gk, &r, &n)) != EV_OK)
			break;
		rc = ev_row_keyu(r, n, k->rank);
		r->val[0] = (double)st->colls;
		r->val[1] = (double)st->last;
		r->val[2] = (double)st->first;
		r->val[3] = (double)st->last_tied;
		r->val[4] = (double)st->first_tied;
		r->val[5] = st->colls ? 100.0 * (double)st->last / (double)st->colls : 0;
		r->val[6] = st->wait_us;
		r->val[7] = st->colls ? st->wait_us / (double)st->colls : 0;
		r->val[8] = st->dur_us;
	}
	free(ord);
	return rc;
}

static int coll_rows(struct ev_stats *s, struct ev_rowset *rs)
{
	struct ev_colspec keys[EV_STATS_MAX_BY + 4];
	size_t nk = 0;
	by_colspecs(&s->o, keys, &nk);
	if (s->o.table == EV_COLL_STRAGGLERS)
		return stragglers_rows(s, rs, keys, nk);
	keys[nk++] = (struct ev_colspec){ "coll", 0, 0 };
	keys[nk++] = (struct ev_colspec){ "dtype", 0, 0 };
	keys[nk++] = (struct ev_colspec){ "bytes", 1, 0 };
	static const struct ev_colspec vals[] = {
		{ "nranks", 0, 0 }, { "count", 0, 0 }, { "latency_mean_us", 0, EV_DIR_LOWER },
		{ "latency_median_us", 0, EV_DIR_LOWER }, { "latency_min_us", 0, EV_DIR_LOWER },
		{ "latency_max_us", 0, EV_DIR_LOWER }, { "start_skew_mean_us", 0, EV_DIR_LOWER },
		{ "start_skew_max_us", 0, EV_DIR_LOWER }, { "end_skew_mean_us", 0, EV_DIR_LOWER },
		{ "end_skew_max_us", 0, EV_DIR_LOWER }, { "algbw_mean_GBps", 0, EV_DIR_HIGHER },
		{ "algbw_median_GBps", 0, EV_DIR_HIGHER }, { "busbw_mean_GBps", 0, EV_DIR_HIGHER },
		{ "busbw_median_GBps", 0, EV_DIR_HIGHER }, { "total_latency_ms", 0, EV_DIR_LOWER },
	};
	int rc = ev_rowset_init(rs, keys, nk, vals, sizeof vals / sizeof vals[0]);
	for (size_t i = 0; !rc && i < s->g.keys.len; i++) {
		const struct gkey *k = GROUP_KEY(&s->g, i);
		struct cstat *cs = GROUP_VAL(&s->g, i);
		struct ev_row *r;
		size_t n;
		if ((rc = group_row(s, rs, k, &r, &n)) != EV_OK)
			return rc;
		const char *cn = ev_coll_name((unsigned)(k->k2 >> 8)), *dn = ev_dtype_name((unsigned)(k->k2 & 0xff));
		rc = rc ? rc : ev_row_key(r, n++, cn ? cn : "unknown");
		rc = rc ? rc : ev_row_key(r, n++, dn ? dn : "unknown");
		rc = rc ? rc : ev_row_keyu(r, n++, k->k1);
		double *v = r->val;
		v[0] = (double)cs->nranks;
		v[1] = (double)cs->lat.n;
		v[2] = cs->lat.mean;
		v[3] = ev_dist_quantile(&cs->lat, 0.5);
		v[4] = cs->lat.min;
		v[5] = cs->lat.max;
		v[6] = cs->sskew.mean;
		v[7] = cs->sskew.max;
		v[8] = cs->eskew.mean;
		v[9] = cs->eskew.max;
		v[10] = cs->algbw.n ? cs->algbw.mean : NAN;
		v[11] = cs->algbw.n ? ev_dist_quantile(&cs->algbw, 0.5) : NAN;
		v[12] = cs->busbw.n ? cs->busbw.mean : NAN;
		v[13] = cs->busbw.n ? ev_dist_quantile(&cs->busbw, 0.5) : NAN;
		v[14] = cs->total_lat_us / 1e3;
	}
	return rc;
}

static void coll_free(struct ev_stats *s)
{
	struct coll *cl = s->state;
	for (size_t i = 0; i < s->g.keys.len; i++) {
		struct cstat *cs = GROUP_VAL(&s->g, i);
		ev_dist_free(&cs->lat);
		ev_dist_free(&cs->algbw);
		ev_dist_free(&cs->busbw);
	}
	groups_free(&cl->aux);
	ev_collmatch_free(cl->cm);
}

static int coll_explain(const struct ev_stats_opts *o, const struct ev_stats_counts *c, char *buf, size_t n)
{
	(void)o;
	snprintf(buf, n, "no coll records among %llu records: empty table (no collectives were traced or converted)",
	         (unsigned long long)c->records);
	return 1;
}

static const char *const coll_options[] = { "table", "max-open", "exact-limit", NULL };

/* The columns of --table=each, in each_row's order. */
static const char *const each_cols[] = {
	"src", "comm", "seq", "coll", "dtype", "bytes", "nranks", "seen", "ts", "latency_us", "start_skew_us",
	"end_skew_us", "avg_wait_us", "first_rank", "last_rank", "algbw_GBps", "busbw_GBps", NULL,
};

/* In the order of enum ev_coll_table. */
static const struct ev_stats_subtable coll_tables[] = {
	{ "summary", "coll_analysis", NULL },
	{ "each", "coll_each", each_cols },
	{ "stragglers", "coll_stragglers", NULL },
	{ NULL, NULL, NULL },
};

const struct ev_stats_analysis ev_stats_analysis_coll = {
	.name = "coll",
	.sheet = "coll_analysis",
	.help = "collectives matched across the ranks of each run by\n"
	        "(communicator, seq): latency (fastest rank), skews, waits,\n"
	        "algbw and busbw",
	.options = coll_options,
	.tables = coll_tables,
	.default_by = "config", /* the ranks of one run; each rank's file is a source */
	.comparable = 1,
	.state_size = sizeof(struct coll),
	.group_size = sizeof(struct cstat),
	.init = coll_init,
	.rec = coll_rec,
	.finish = coll_finish,
	.rows = coll_rows,
	.free = coll_free,
	.explain = coll_explain,
};
