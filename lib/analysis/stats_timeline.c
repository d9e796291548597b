/* SPDX-License-Identifier: MIT */
/*
 * stats_timeline.c - TraceLens's GPU timeline and HTA's temporal breakdown
 * per group, by the one-pass interval sweep of cover.c.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/stats_impl.h"
#include "ev/hta.h"

struct tl { /* per group */
	struct ev_cover tl;     /* classes: comp, comm, memcpy */
	int64_t last_ts, t0;
	int started;
	uint32_t hta;           /* index + 1 of its rank's HTA accumulator */
};

struct timeline {
	struct ev_map bucket_cache;     /* name id ^ type -> bucket + 2 */
	/* HTA's breakdown per (source group, rank), as HTA keeps events
	 * (lib/analysis/hta.c) */
	struct ev_vec htas;             /* struct ev_hta */
	struct ev_hta_result *results;  /* per accumulator, after finish */
	struct ev_map hta_idx;          /* (sg, rank) -> index + 1 */
	uint32_t hta_src, hta_rank, hta_last; /* the last (src, rank) looked up: index + 1 (0: none) */
	/* the last record's group, and the last source's time base */
	int last_ok, base_ok;
	uint32_t last_src, last_rank, last_stream, base_src;
	size_t last_index;
	int64_t base_ns;
};

/* The time base of a source's original clock (#src base_ns=, written by
 * kineto2ev for traces with baseTimeNanoseconds), else 0. */
static int64_t src_base(const struct ev_stats *s, uint32_t src)
{
	const struct ev_src_info *si = ev_meta_src(s->meta, src);
	const char *v = si ? ev_kv_get(si->kv, si->nkv, "base_ns") : NULL;
	int64_t b;
	return v && ev_parse_i64(v, &b) == EV_OK ? b : 0;
}

/* The HTA accumulator of a record's rank (and source group). */
static struct ev_hta *hta_of(struct ev_stats *s, const struct ev_rec *r, uint32_t *index)
{
	struct timeline *tm = s->state;
	/* CPU records come here one by one, mostly of one (src, rank) in a row. */
	if (tm->hta_last && r->src == tm->hta_src && r->rank == tm->hta_rank) {
		*index = tm->hta_last;
		return (struct ev_hta *)tm->htas.data + (tm->hta_last - 1);
	}
	uint32_t sg;
	if (src_group(s, r->src, &sg) != EV_OK)
		return NULL;
	uint64_t key = ((uint64_t)sg << 32 | r->rank) + 1;
	uint64_t *at = ev_map_get(&tm->hta_idx, key);
	struct ev_hta *h;
	if (at) {
		*index = (uint32_t)*at;
		h = (struct ev_hta *)tm->htas.data + (*at - 1);
	} else {
		if (!(h = ev_vec_push(&tm->htas)))
			return NULL;
		ev_hta_init(h);
		h->json_base_ns = src_base(s, r->src);
		*index = (uint32_t)tm->htas.len;
		if (ev_map_put(&tm->hta_idx, key, tm->htas.len) != EV_OK)
			return NULL;
	}
	tm->hta_src = r->src;
	tm->hta_rank = r->rank;
	tm->hta_last = *index;
	return h;
}

/* CPU-side records HTA looks at: runtime calls (the launches), ProfilerStep
 * ranges, and the fact that there are CPU events at all. */
static int hta_cpu(struct ev_stats *s, const struct ev_rec *r)
{
	uint32_t idx;
	struct ev_hta *h;
	switch (r->type) {
	case EV_API:
		if (!(h = hta_of(s, r, &idx)))
			return EV_ERR_NOMEM;
		return ev_hta_launch(h, r->id, r->ts);
	case EV_RANGE:
		if (!(h = hta_of(s, r, &idx)))
			return EV_ERR_NOMEM;
		if (r->op == EV_RG_STEP)
			ev_hta_step(h, r->ts, r->name);
		else
			ev_hta_cpu_event(h);
		return EV_OK;
	default:
		return EV_OK;
	}
}

static int timeline_init(struct ev_stats *s)
{
	struct timeline *tm = s->state;
	ev_map_init(&tm->bucket_cache);
	ev_vec_init(&tm->htas, sizeof(struct ev_hta));
	ev_map_init(&tm->hta_idx);
	return EV_OK;
}

static int timeline_rec(struct ev_stats *s, const struct ev_rec *r)
{
	if (!is_gpu(r))
		return s->o.no_hta ? EV_OK : hta_cpu(s, r);
	struct timeline *tm = s->state;
	struct tl *t;
	/* Consecutive records mostly belong to the same group. */
	if (tm->last_ok && r->src == tm->last_src && r->rank == tm->last_rank && r->stream == tm->last_stream) {
		t = GROUP_VAL(&s->g, tm->last_index);
	} else {
		struct gkey k;
		int rc = base_key(s, r, &k);
		t = rc ? NULL : group_get(&s->g, &k, &tm->last_index);
		if (!t)
			return EV_ERR_NOMEM;
		tm->last_ok = 1;
		tm->last_src = r->src;
		tm->last_rank = r->rank;
		tm->last_stream = r->stream;
	}
	if (t->started && r->ts < t->last_ts) {
		s->order_last = t->last_ts;
		return EV_ERR_ORDER;
	}
	if (!t->started) {
		ev_cover_init(&t->tl);
		t->started = 1;
		t->t0 = r->ts;
	}
	t->last_ts = r->ts;
	/* Bucket and HTA kind, once per (name, type). */
	uint64_t ck = (r->name ^ ((uint64_t)r->type << 56)) | 1;
	uint64_t *c = ev_map_get(&tm->bucket_cache, ck);
	uint64_t cls;
	if (c) {
		cls = *c;
	} else {
		const char *name = str_of(s, r->name);
		int b = ev_timeline_bucket(s->o.rules, r->type, name);
		cls = (uint64_t)(b + 2) | (uint64_t)ev_hta_kind(name) << 8;
		if (ev_map_put(&tm->bucket_cache, ck, cls) != EV_OK)
			return EV_ERR_NOMEM;
	}
	double a, z;
	if (s->o.float_us) {
		/* TraceLens's arithmetic: ts and dur parsed from the JSON text as
		 * microsecond doubles (relative to baseTimeNanoseconds when the
		 * trace had one), end = ts + dur rounded. */
		if (!tm->base_ok || tm->base_src != r->src) {
			tm->base_ns = src_base(s, r->src);
			tm->base_src = r->src;
			tm->base_ok = 1;
		}
		int64_t rel;
		if (__builtin_sub_overflow(r->ts, tm->base_ns, &rel))
			rel = r->ts; /* a hostile base: keep the stream's own zero */
		int64_t q = rel / 1000, m = rel % 1000;
		a = (double)q + (double)m / 1000.0;
		z = a + (double)r->dur / 1000.0;
	} else {
		/* Exact: ns offsets from the group's first event fit a double
		 * exactly for 104 days. */
		a = (double)ev_span(t->t0, r->ts);
		z = a + (double)ev_span(r->ts, ev_rec_end(r)); /* saturated: never before a */
	}
	if (!s->o.no_hta) {
		/* HTA keeps what it keeps (ev/hta.h), on its own clock. */
		struct ev_hta *h = t->hta ? (struct ev_hta *)tm->htas.data + (t->hta - 1) : hta_of(s, r, &t->hta);
		if (!h)
			return EV_ERR_NOMEM;
		ev_hta_gpu(h, r->ts, ev_rec_end(r), (int)(cls >> 8), r->id);
	}
	if ((r->flags & EV_F_UNLINKED) && !s->o.unlinked)
		return EV_OK;
	int b = (int)(cls & 0xff) - 2;
	if (b >= 0)
		ev_cover_add(&t->tl, (unsigned)b, a, z);
	return EV_OK;
}

/* End of input: HTA's result of every rank, once, and what the tool is to
 * say about them: ranks whose HTA rows keep every GPU event because they
 * have fewer than two ProfilerSteps, and ranks without communication,
 * whose overlap percentage is left empty (HTA's is NaN).  Counted over the
 * ranks that have a row (a rank of CPU records only has none). */
static int timeline_finish(struct ev_stats *s)
{
	struct timeline *tm = s->state;
	size_t n = tm->htas.len;
	if (s->o.no_hta || n == 0)
		return EV_OK;
	unsigned char *shown = calloc(n, 1);
	tm->results = calloc(n, sizeof *tm->results);
	if (!shown || !tm->results) {
		free(shown);
		return EV_ERR_NOMEM;
	}
	for (size_t i = 0; i < n; i++)
		ev_hta_finish((struct ev_hta *)tm->htas.data + i, &tm->results[i]);
	for (size_t i = 0; i < s->g.keys.len; i++) {
		const struct tl *t = GROUP_VAL(&s->g, i);
		if (!t->hta || shown[t->hta - 1])
			continue;
		shown[t->hta - 1] = 1;
		const struct ev_hta_result *hr = &tm->results[t->hta - 1];
		s->n.hta_one_step += hr->one_step != 0;
		s->n.hta_no_step += hr->no_steps != 0;
		s->n.hta_pruned += hr->dropped_pruned;
		s->n.no_comm += hr->comm_time == 0;
	}
	free(shown);
	return EV_OK;
}

static int timeline_rows(struct ev_stats *s, struct ev_rowset *rs)
{
	struct ev_colspec keys[EV_STATS_MAX_BY + 1];
	size_t nk = 0;
	by_colspecs(&s->o, keys, &nk);
	keys[nk++] = (struct ev_colspec){ "type", 0, 0 };
	static const struct ev_colspec vals[] = { { "time_ms", 0, EV_DIR_LOWER }, { "percent", 0, EV_DIR_NONE } };
	int rc = ev_rowset_init(rs, keys, nk, vals, 2);
	struct timeline *tm = s->state;
	if (!rc && !tm->results)
		rc = timeline_finish(s); /* a caller that did not finish */
	for (size_t i = 0; !rc && i < s->g.keys.len; i++) {
		struct tl *t = GROUP_VAL(&s->g, i);
		ev_cover_finish(&t->tl);
		const struct ev_cover *c = &t->tl;
		enum { COMP = 1, COMM = 2, MEM = 4 };
		double total = c->started ? c->last - c->first : 0;
		double comp = ev_cover_measure(c, COMP, 0);
		double tcomm = ev_cover_measure(c, COMM, 0);
		double xcomm = ev_cover_measure(c, COMM, COMP);
		double tmem = ev_cover_measure(c, MEM, 0);
		double xmem = ev_cover_measure(c, MEM, COMP | COMM);
		double busy = ev_cover_measure(c, 0, 0);
		/* HTA's numbers are its rank's, in ns (µs with --tracelens-float). */
		struct ev_hta_result hr;
		memset(&hr, 0, sizeof hr);
		if (t->hta && tm->results)
			hr = tm->results[t->hta - 1];
		double to_ms = s->o.float_us ? 1e3 : 1e6, hscale = s->o.float_us ? 1e-3 : 1.0;
		double kt = hr.kernel_time * hscale, hidle = hr.idle_time * hscale, hcomp = hr.compute_time * hscale;
		double hcomm = hr.comm_time * hscale, hover = hr.comm_comp_overlap * hscale;
		struct { const char *type; double ns, base; } v[] = {
			{ "computation_time", comp, total }, { "exposed_comm_time", xcomm, total },
			{ "exposed_memcpy_time", xmem, total }, { "busy_time", busy, total },
			{ "idle_time", total - busy, total }, { "total_time", total, total },
			{ "total_comm_time", tcomm, total }, { "total_memcpy_time", tmem, total },
			{ "hta_idle_time", hidle, kt }, { "hta_compute_time", hcomp, kt },
			{ "hta_non_compute_time", kt - hcomp - hidle, kt }, { "hta_kernel_time", kt, kt },
			{ "hta_comm_comp_overlap_time", hover, hcomm },
		};
		enum { OVERLAP_ROW = 12 };
		_Static_assert(sizeof v / sizeof v[0] == OVERLAP_ROW + 1, "the overlap row is the last");
		size_t nv = s->o.no_hta ? 8 : sizeof v / sizeof v[0];
		for (size_t j = 0; !rc && j < nv; j++) {
			struct ev_row *r;
			size_t n;
			if ((rc = group_row(s, rs, GROUP_KEY(&s->g, i), &r, &n)) != EV_OK)
				return rc;
			rc = ev_row_key(r, n, v[j].type);
			r->val[0] = v[j].ns / to_ms;
			r->val[1] = v[j].base > 0 ? 100.0 * v[j].ns / v[j].base : 0.0;
			/* Overlap is a share of communication: without any, it is
			 * undefined (HTA: NaN), not 0 %; the cell is left empty. */
			if (j == OVERLAP_ROW && !(v[j].base > 0))
				r->val[1] = NAN;
		}
	}
	return rc;
}

static void timeline_free(struct ev_stats *s)
{
	struct timeline *tm = s->state;
	for (size_t i = 0; i < tm->htas.len; i++)
		ev_hta_free((struct ev_hta *)tm->htas.data + i);
	ev_vec_free(&tm->htas);
	free(tm->results);
	ev_map_free(&tm->hta_idx);
	ev_map_free(&tm->bucket_cache);
}

static const char *const timeline_options[] = { "include-unlinked", "no-hta", "tracelens-float", NULL };

const struct ev_stats_analysis ev_stats_analysis_timeline = {
	.name = "timeline",
	.sheet = "gpu_timeline",
	.help = "per rank: TraceLens's GPU timeline rows (computation,\n"
	        "exposed_comm, exposed_memcpy, busy, idle, total, total_comm,\n"
	        "total_memcpy) in ms and percent, then HTA's temporal breakdown\n"
	        "(hta_idle, hta_compute, hta_non_compute, hta_kernel)",
	.options = timeline_options,
	.default_by = "src,rank",
	.comparable = 1,
	.state_size = sizeof(struct timeline),
	.group_size = sizeof(struct tl),
	.init = timeline_init,
	.rec = timeline_rec,
	.finish = timeline_finish,
	.rows = timeline_rows,
	.free = timeline_free,
};
