/* SPDX-License-Identifier: MIT */
/*
 * stats_coll.c - collectives matched across the ranks of a source group by
 * (communicator, seq) through collmatch.c, with TraceLens NcclAnalyser's
 * per-collective numbers: latency (the fastest rank's duration), start and
 * end skew, waits, algbw and busbw; summarised per (kind, dtype, bytes), or
 * one row per collective, or per rank (stragglers).
 *
 * In TraceLens's layout (report --tracelens) the summary is TraceLens's
 * coll_analysis instead: no matching, each rank's collective kernels per
 * (process group name and ranks, collective, group size, dtype, in and
 * out elements, split sizes, stream), their durations' sum, mean, std,
 * min, max and count, message sizes in MB (2^20 bytes), largest sum
 * first.
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
	uint64_t split_said, split_empty; /* TraceLens's layout: collectives whose split sizes are "[]", empty */
	uint64_t unknown;               /* and those left out: arguments unknown */
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

/* TraceLens's coll_analysis: a rank's collective kernels per group; pad
 * holds the dtype and the communicator's size, k2 the bytes and kind. */
static int tl_rec(struct ev_stats *s, const struct ev_rec *r, uint32_t sg)
{
	struct gkey k;
	memset(&k, 0, sizeof k);
	k.sg = sg;
	k.rank = has_by(&s->o, EV_BY_RANK) ? r->rank : 0;
	k.stream = r->stream;
	k.pad = (r->dtype & 0xff) | comm_nranks(s, r) << 8;
	k.k1 = r->comm;
	k.k2 = (uint64_t)r->op << 56 | (r->bytes & ((1ULL << 56) - 1));
	struct cstat *cs = group_get(&s->g, &k, NULL);
	if (!cs)
		return EV_ERR_NOMEM;
	cs->total_lat_us += (double)r->dur / 1e3;
	return ev_dist_add(&cs->lat, &s->pool, (double)r->dur / 1e3, r->ts);
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
	if (s->o.tracelens)
		return tl_rec(s, r, sg);
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

/* The process group's ranks as Python prints TraceLens's "[0, 1, ...]". */
static void pg_ranks(const struct ev_comm_info *ci, char *buf, size_t n)
{
	size_t o = 0;
	buf[0] = '\0';
	if (!ci || !ci->ranks)
		return;
	for (uint32_t i = 0; i < ci->nranks; i++)
		if (ci->ranks[i] < 0) {
			buf[0] = '\0';
			return;
		}
	o += (size_t)snprintf(buf, n, "[");
	for (uint32_t i = 0; i < ci->nranks && o < n; i++)
		o += (size_t)snprintf(buf + o, n - o, "%s%d", i ? ", " : "", ci->ranks[i]);
	if (o < n)
		snprintf(buf + o, n - o, "]");
	if (o >= n)
		buf[0] = '\0'; /* too long to print whole: left empty */
}

/* Whether TraceLens has every key of a group: its kernels carried the
 * collective's arguments (process group ranks, size, element type and
 * count); pandas' groupby drops a row missing one. */
static int tl_known(const struct ev_stats *s, const struct gkey *k)
{
	char ranks[4096];
	pg_ranks(ev_meta_comm(s->meta, k->k1), ranks, sizeof ranks);
	return ranks[0] && (k->pad >> 8) && ev_dtype_size(k->pad & 0xff) && (k->k2 & ((1ULL << 56) - 1));
}

static int coll_finish(struct ev_stats *s)
{
	struct coll *cl = s->state;
	for (size_t i = 0; s->o.tracelens && i < s->g.keys.len; i++) {
		unsigned op = (unsigned)(GROUP_KEY(&s->g, i)->k2 >> 56);
		uint64_t n = ((const struct cstat *)GROUP_VAL(&s->g, i))->lat.n;
		if (!tl_known(s, GROUP_KEY(&s->g, i)))
			cl->unknown += n;
		else if (op == EV_OP_ALLTOALL || op == EV_OP_ALLTOALLV)
			cl->split_empty += n;
		else
			cl->split_said += n;
	}
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

/* PyTorch's ScalarType name of a dtype, as TraceLens prints it. */
static const char *torch_dtype(unsigned dt)
{
	switch (dt) {
	case EV_DT_INT8: return "Char";
	case EV_DT_UINT8: return "Byte";
	case EV_DT_INT16: return "Short";
	case EV_DT_INT32: return "Int";
	case EV_DT_INT64: return "Long";
	case EV_DT_UINT16: return "UInt16";
	case EV_DT_UINT32: return "UInt32";
	case EV_DT_UINT64: return "UInt64";
	case EV_DT_FLOAT16: return "Half";
	case EV_DT_FLOAT32: return "Float";
	case EV_DT_FLOAT64: return "Double";
	case EV_DT_BFLOAT16: return "BFloat16";
	case EV_DT_FP8E4M3: return "Float8_e4m3fn";
	case EV_DT_FP8E5M2: return "Float8_e5m2";
	case EV_DT_COMPLEX32: return "ComplexHalf";
	case EV_DT_COMPLEX64: return "ComplexFloat";
	case EV_DT_COMPLEX128: return "ComplexDouble";
	default: return NULL;
	}
}

/* TraceLens's MB of n elements: only for the dtypes its table has. */
static double tl_mb(unsigned dt, double n)
{
	switch (dt) {
	case EV_DT_FLOAT32: case EV_DT_INT32: case EV_DT_INT64: case EV_DT_BFLOAT16: case EV_DT_UINT8:
	case EV_DT_FLOAT64: case EV_DT_FLOAT16: case EV_DT_INT16:
		return n * ev_dtype_size(dt) / 1048576.0;
	default: return NAN;
	}
}

static int cmp_tl_sum(const void *pa, const void *pb, void *ctx)
{
	const struct groups *g = ctx;
	size_t a = *(const size_t *)pa, b = *(const size_t *)pb;
	const struct gkey *ka = GROUP_KEY(g, a), *kb = GROUP_KEY(g, b);
	if (ka->sg != kb->sg)
		return ka->sg < kb->sg ? -1 : 1;
	if (ka->rank != kb->rank)
		return ka->rank < kb->rank ? -1 : 1;
	double sa = ((const struct cstat *)GROUP_VAL(g, a))->total_lat_us;
	double sb = ((const struct cstat *)GROUP_VAL(g, b))->total_lat_us;
	if (sa != sb)
		return sa > sb ? -1 : 1;
	return a < b ? -1 : a > b;
}

static int tl_rows(struct ev_stats *s, struct ev_rowset *rs, struct ev_colspec *keys, size_t nk)
{
	static const char *const names[] = { "Process Group Name", "Process Group Ranks", "Collective name",
		                             "Group size", "dtype", "In msg nelems", "Out msg nelems",
		                             "In split size", "Out split size", "stream" };
	static const int numeric[] = { 0, 0, 0, 1, 0, 1, 1, 0, 0, 1 };
	for (size_t i = 0; i < 10; i++)
		keys[nk++] = (struct ev_colspec){ names[i], numeric[i], 0 };
	static const struct ev_colspec vals[] = {
		{ "In msg size (MB)_first", 0, EV_DIR_NONE }, { "Out msg size (MB)_first", 0, EV_DIR_NONE },
		{ "dur_sum", 0, EV_DIR_LOWER }, { "dur_mean", 0, EV_DIR_LOWER }, { "dur_std", 0, EV_DIR_NONE },
		{ "dur_min", 0, EV_DIR_LOWER }, { "dur_max", 0, EV_DIR_LOWER }, { "operation_count", 0, EV_DIR_NONE },
	};
	int rc = ev_rowset_init(rs, keys, nk, vals, sizeof vals / sizeof vals[0]);
	size_t m = s->g.keys.len;
	size_t *ord = rc ? NULL : malloc((m + 1) * sizeof *ord);
	if (!rc && !ord)
		rc = EV_ERR_NOMEM;
	for (size_t i = 0; !rc && i < m; i++)
		ord[i] = i;
	if (!rc)
		qsort_r(ord, m, sizeof *ord, cmp_tl_sum, &s->g);
	for (size_t j = 0; !rc && j < m; j++) {
		const struct gkey *k = GROUP_KEY(&s->g, ord[j]);
		struct cstat *cs = GROUP_VAL(&s->g, ord[j]);
		struct ev_row *r;
		size_t n;
		if (!tl_known(s, k))
			continue;
		if ((rc = group_row(s, rs, k, &r, &n)) != EV_OK)
			break;
		unsigned op = (unsigned)(k->k2 >> 56), dt = k->pad & 0xff, size = ev_dtype_size(dt);
		uint64_t bytes = k->k2 & ((1ULL << 56) - 1), nranks = k->pad >> 8;
		const struct ev_comm_info *ci = ev_meta_comm(s->meta, k->k1);
		const char *pgname = ci ? ev_kv_get(ci->kv, ci->nkv, "name") : NULL;
		char ranks[4096];
		pg_ranks(ci, ranks, sizeof ranks);
		/* bytes is the larger buffer: allgather's output, reduce-scatter's
		 * input, each rank's share the other. */
		double nel = size ? (double)(bytes / size) : NAN, in = nel, out = nel;
		if (op == EV_OP_ALLGATHER && nranks)
			in = nel / (double)nranks;
		if (op == EV_OP_REDUCESCATTER && nranks)
			out = nel / (double)nranks;
		const char *cn = ev_coll_name(op), *dn = torch_dtype(dt);
		int a2a = op == EV_OP_ALLTOALL || op == EV_OP_ALLTOALLV;
		rc = ev_row_key(r, n++, pgname ? pgname : "");
		rc = rc ? rc : ev_row_key(r, n++, ranks);
		rc = rc ? rc : ev_row_key(r, n++, cn ? cn : "");
		rc = rc ? rc : nranks ? ev_row_keyu(r, n++, nranks) : ev_row_key(r, n++, "");
		rc = rc ? rc : ev_row_key(r, n++, dn ? dn : "");
		rc = rc ? rc : size ? ev_row_keyu(r, n++, (uint64_t)in) : ev_row_key(r, n++, "");
		rc = rc ? rc : size ? ev_row_keyu(r, n++, (uint64_t)out) : ev_row_key(r, n++, "");
		rc = rc ? rc : ev_row_key(r, n++, a2a ? "" : "[]");
		rc = rc ? rc : ev_row_key(r, n++, a2a ? "" : "[]");
		rc = rc ? rc : ev_row_keyu(r, n, k->stream);
		double *v = r->val;
		v[0] = size ? tl_mb(dt, in) : NAN;
		v[1] = size ? tl_mb(dt, out) : NAN;
		v[2] = cs->total_lat_us;
		v[3] = cs->lat.mean;
		v[4] = cs->lat.n > 1 ? ev_dist_std(&cs->lat) : NAN; /* pandas' sample std */
		v[5] = cs->lat.min;
		v[6] = cs->lat.max;
		v[7] = (double)cs->lat.n;
	}
	free(ord);
	return rc;
}

static int coll_rows(struct ev_stats *s, struct ev_rowset *rs)
{
	struct ev_colspec keys[EV_STATS_MAX_BY + 10];
	size_t nk = 0;
	by_colspecs(&s->o, keys, &nk);
	if (s->o.table == EV_COLL_STRAGGLERS)
		return stragglers_rows(s, rs, keys, nk);
	if (s->o.tracelens && s->o.table == EV_COLL_SUMMARY)
		return tl_rows(s, rs, keys, nk);
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

/* What TraceLens's layout prints that the stream does not hold. */
static int coll_warning(struct ev_stats *s, unsigned i, char *buf, size_t n)
{
	const struct coll *cl = s->state;
	if (cl->unknown && i-- == 0) {
		snprintf(buf, n, "%llu collectives without their process group's ranks, size, dtype or message size left "
		         "out (TraceLens's groupby drops a kernel without the collective's arguments)",
		         (unsigned long long)cl->unknown);
		return 1;
	}
	if (cl->split_said && i-- == 0) {
		snprintf(buf, n, "In split size, Out split size: '[]' for %llu collectives, PyTorch's value but for "
		         "all-to-all (the stream does not keep them)", (unsigned long long)cl->split_said);
		return 1;
	}
	if (cl->split_empty && i == 0) {
		snprintf(buf, n, "In split size, Out split size left empty for %llu all-to-all collectives (the stream "
		         "does not keep them)", (unsigned long long)cl->split_empty);
		return 1;
	}
	return 0;
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
	.warning = coll_warning,
};
