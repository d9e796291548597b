/* SPDX-License-Identifier: MIT */
/*
 * stats_timeline.c - TraceLens's GPU timeline and HTA's temporal breakdown
 * per group, by the one-pass interval sweep of cover.c.
 */
#include <stdlib.h>
#include <string.h>

#include "analysis/stats_impl.h"

/* The time base of a source's original clock (#src base_ns=, written by
 * kineto2ev for traces with baseTimeNanoseconds), else 0. */
static int64_t src_base(const struct ev_stats *s, uint32_t src)
{
	const struct ev_src_info *si = ev_meta_src(s->meta, src);
	const char *v = si ? ev_kv_get(si->kv, si->nkv, "base_ns") : NULL;
	int64_t b;
	return v && ev_parse_i64(v, &b) == EV_OK ? b : 0;
}

int timeline_rec(struct ev_stats *s, const struct ev_rec *r)
{
	if (!is_gpu(r))
		return EV_OK;
	struct tl *t;
	/* Consecutive records mostly belong to the same group. */
	if (s->last_ok && r->src == s->last_src && r->rank == s->last_rank && r->stream == s->last_stream) {
		t = GROUP_VAL(&s->g, s->last_index);
	} else {
		struct gkey k;
		int rc = base_key(s, r, &k);
		t = rc ? NULL : group_get(&s->g, &k, &s->last_index);
		if (!t)
			return EV_ERR_NOMEM;
		s->last_ok = 1;
		s->last_src = r->src;
		s->last_rank = r->rank;
		s->last_stream = r->stream;
	}
	if (t->started && r->ts < t->last_ts)
		return EV_ERR_ORDER;
	if (!t->started) {
		ev_cover_init(&t->tl);
		ev_cover_init(&t->hta);
		t->started = 1;
		t->t0 = r->ts;
	}
	t->last_ts = r->ts;
	/* Bucket and HTA kind, once per (name, type). */
	uint64_t ck = (r->name ^ ((uint64_t)r->type << 56)) | 1;
	uint64_t *c = ev_map_get(&s->bucket_cache, ck);
	uint64_t cls;
	if (c) {
		cls = *c;
	} else {
		const char *name = str_of(s, r->name);
		int b = ev_timeline_bucket(s->o.rules, r->type, name);
		int hc = ev_hta_kind(name) == EV_HTA_COMPUTATION && r->type == EV_KERNEL;
		cls = (uint64_t)(b + 2) | (uint64_t)hc << 8;
		if (ev_map_put(&s->bucket_cache, ck, cls) != EV_OK)
			return EV_ERR_NOMEM;
	}
	double a, z;
	if (s->o.float_us) {
		/* TraceLens's arithmetic: ts and dur parsed from the JSON text as
		 * microsecond doubles (relative to baseTimeNanoseconds when the
		 * trace had one), end = ts + dur rounded. */
		if (!s->base_ok || s->base_src != r->src) {
			s->base_ns = src_base(s, r->src);
			s->base_src = r->src;
			s->base_ok = 1;
		}
		int64_t rel;
		if (__builtin_sub_overflow(r->ts, s->base_ns, &rel))
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
	/* HTA counts every GPU event, linked or not. */
	ev_cover_add(&t->hta, 0, a, z);
	if (cls >> 8)
		ev_cover_add(&t->hta, 1, a, z);
	if ((r->flags & EV_F_UNLINKED) && !s->o.unlinked)
		return EV_OK;
	int b = (int)(cls & 0xff) - 2;
	if (b >= 0)
		ev_cover_add(&t->tl, (unsigned)b, a, z);
	return EV_OK;
}

int timeline_rows(struct ev_stats *s, struct ev_rowset *rs)
{
	struct ev_colspec keys[EV_STATS_MAX_BY + 1];
	size_t nk = 0;
	by_colspecs(&s->o, keys, &nk);
	keys[nk++] = (struct ev_colspec){ "type", 0, 0 };
	static const struct ev_colspec vals[] = { { "time_ms", 0, EV_DIR_LOWER }, { "percent", 0, EV_DIR_NONE } };
	int rc = ev_rowset_init(rs, keys, nk, vals, 2);
	for (size_t i = 0; !rc && i < s->g.keys.len; i++) {
		struct tl *t = GROUP_VAL(&s->g, i);
		ev_cover_finish(&t->tl);
		ev_cover_finish(&t->hta);
		const struct ev_cover *c = &t->tl;
		enum { COMP = 1, COMM = 2, MEM = 4 };
		double total = c->started ? c->last - c->first : 0;
		double comp = ev_cover_measure(c, COMP, 0);
		double tcomm = ev_cover_measure(c, COMM, 0);
		double xcomm = ev_cover_measure(c, COMM, COMP);
		double tmem = ev_cover_measure(c, MEM, 0);
		double xmem = ev_cover_measure(c, MEM, COMP | COMM);
		double busy = ev_cover_measure(c, 0, 0);
		const struct ev_cover *h = &t->hta;
		double kt = h->started ? h->last - h->first : 0;
		double hbusy = ev_cover_measure(h, 1, 0);
		double hcomp = ev_cover_measure(h, 2, 0);
		double to_ms = s->o.float_us ? 1e3 : 1e6;
		double hidle = kt - hbusy;
		struct { const char *type; double ns, base; } v[] = {
			{ "computation_time", comp, total }, { "exposed_comm_time", xcomm, total },
			{ "exposed_memcpy_time", xmem, total }, { "busy_time", busy, total },
			{ "idle_time", total - busy, total }, { "total_time", total, total },
			{ "total_comm_time", tcomm, total }, { "total_memcpy_time", tmem, total },
			{ "hta_idle_time", hidle, kt }, { "hta_compute_time", hcomp, kt },
			{ "hta_non_compute_time", kt - hcomp - hidle, kt }, { "hta_kernel_time", kt, kt },
		};
		size_t nv = s->o.no_hta ? 8 : sizeof v / sizeof v[0];
		for (size_t j = 0; !rc && j < nv; j++) {
			struct ev_row *r;
			size_t n;
			if ((rc = group_row(s, rs, GROUP_KEY(&s->g, i), &r, &n)) != EV_OK)
				return rc;
			rc = ev_row_key(r, n, v[j].type);
			r->val[0] = v[j].ns / to_ms;
			r->val[1] = v[j].base > 0 ? 100.0 * v[j].ns / v[j].base : 0.0;
		}
	}
	return rc;
}

