/* SPDX-License-Identifier: MIT */
/*
 * stats_kernel_ops.c - TraceLens's kernel_summary: kernels per (launching
 * op's category, launching op, kernel name, stream) with the sum, count,
 * mean, min and max of their durations in microseconds, their share of
 * all kernels' time and of the GPU timeline's total time, largest first.
 *
 * As TraceLens: kernels only (not copies or sets), every one of them (a
 * kernel without a launching call has an empty op and category); a
 * kernel whose call ran outside any op has the call for op and the
 * category "runtime" ("graph" for a graph launch); the total time is the
 * span of the GPU events the timeline counts (linked ones unless
 * --include-unlinked), in TraceLens's microsecond doubles with
 * --tracelens-float.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/opsum.h"

struct kgroup {
	uint64_t count;
	double sum, min, max; /* us */
	const char *cat;      /* static, or NULL: no launching op */
};

struct span { double first, last; int started; };

struct kops {
	struct ev_map spans;  /* (sg, rank) + 1 -> index + 1 into span */
	struct ev_vec span;   /* struct span */
	uint32_t base_src;
	int base_ok;
	int64_t base_ns;
};

static int kops_init(ev_stats *s)
{
	struct kops *k = s->state;
	ev_map_init(&k->spans);
	ev_vec_init(&k->span, sizeof(struct span));
	return EV_OK;
}

/* A GPU event's start and end: TraceLens's microsecond doubles (relative
 * to the trace's baseTimeNanoseconds, #src base_ns=) or exact ns. */
static void times(ev_stats *s, const struct ev_rec *r, double *a, double *z)
{
	struct kops *k = s->state;
	if (!s->o.float_us) {
		*a = (double)r->ts;
		*z = *a + (double)ev_span(r->ts, ev_rec_end(r));
		return;
	}
	if (!k->base_ok || k->base_src != r->src) {
		const struct ev_src_info *si = ev_meta_src(s->meta, r->src);
		const char *v = si ? ev_kv_get(si->kv, si->nkv, "base_ns") : NULL;
		if (!v || ev_parse_i64(v, &k->base_ns) != EV_OK)
			k->base_ns = 0;
		k->base_src = r->src;
		k->base_ok = 1;
	}
	int64_t rel;
	if (__builtin_sub_overflow(r->ts, k->base_ns, &rel))
		rel = r->ts;
	*a = (double)(rel / 1000) + (double)(rel % 1000) / 1000.0;
	*z = *a + (double)r->dur / 1000.0;
}

/* The timeline's span of a (source group, rank): first start, last end. */
static int add_span(ev_stats *s, const struct ev_rec *r, uint32_t sg)
{
	struct kops *k = s->state;
	uint32_t rank = has_by(&s->o, EV_BY_RANK) ? r->rank : 0; /* ranks pooled: their span */
	uint64_t key = (((uint64_t)sg << 32) | rank) + 1;
	uint64_t *at = ev_map_get(&k->spans, key);
	struct span *sp;
	if (at) {
		sp = (struct span *)k->span.data + (*at - 1);
	} else {
		if (!(sp = ev_vec_push(&k->span)) || ev_map_put(&k->spans, key, k->span.len) != EV_OK)
			return EV_ERR_NOMEM;
		memset(sp, 0, sizeof *sp);
	}
	double a, z;
	times(s, r, &a, &z);
	if (!sp->started || a < sp->first)
		sp->first = a;
	if (!sp->started || z > sp->last)
		sp->last = z;
	sp->started = 1;
	return EV_OK;
}

/* TraceLens's category of a kernel's launcher: the op's (op_category.c),
 * or for a runtime call outside any op "graph" or "runtime". */
static const char *launcher_category(ev_stats *s, const struct ev_rec *r, const char *sig, size_t n)
{
	char name[256];
	if (n >= sizeof name)
		n = sizeof name - 1;
	memcpy(name, sig, n);
	name[n] = '\0';
	if (r->step == 0) {
		for (char *p = name; *p; p++)
			*p = (char)(*p >= 'A' && *p <= 'Z' ? *p - 'A' + 'a' : *p);
		return strstr(name, "cudagraph") || strstr(name, "graphlaunch") ? "graph" : "runtime";
	}
	return opsum_category(name, str_of(s, r->name));
}

static int kops_rec(ev_stats *s, const struct ev_rec *r)
{
	if (!is_gpu(r))
		return EV_OK;
	uint32_t sg;
	int rc = src_group(s, r->src, &sg);
	if (rc)
		return rc;
	if ((!(r->flags & EV_F_UNLINKED) || s->o.unlinked) && (rc = add_span(s, r, sg)) != EV_OK)
		return rc;
	if (r->type != EV_KERNEL)
		return EV_OK;
	s->n.selected++;
	struct gkey k;
	memset(&k, 0, sizeof k);
	k.sg = sg;
	k.rank = has_by(&s->o, EV_BY_RANK) ? r->rank : 0;
	k.stream = r->stream;
	int linked = r->sig && !(r->flags & EV_F_UNLINKED);
	k.k1 = linked ? r->sig : 0;
	k.k2 = r->name;
	struct kgroup *g = group_get(&s->g, &k, NULL);
	if (!g)
		return EV_ERR_NOMEM;
	double us = (double)r->dur / 1000.0;
	if (g->count == 0) {
		g->min = g->max = us;
		if (linked) {
			const char *sig = str_of(s, r->sig);
			g->cat = launcher_category(s, r, sig, opsum_name_len(sig));
		}
	}
	g->count++;
	g->sum += us;
	g->min = us < g->min ? us : g->min;
	g->max = us > g->max ? us : g->max;
	return EV_OK;
}

/* ---- the table ---- */

struct krow { size_t first; uint64_t count; double sum, min, max; };

static int same_part(const struct ev_stats *s, size_t a, size_t b)
{
	const struct gkey *ka = GROUP_KEY(&s->g, a), *kb = GROUP_KEY(&s->g, b);
	return ka->sg == kb->sg && ka->rank == kb->rank;
}

/* pandas' group order: category, op name, kernel name, stream ascending,
 * a kernel without an op last. */
static int cmp_key(const struct ev_stats *s, size_t a, size_t b)
{
	const struct gkey *ka = GROUP_KEY(&s->g, a), *kb = GROUP_KEY(&s->g, b);
	const struct kgroup *ga = GROUP_VAL(&s->g, a), *gb = GROUP_VAL(&s->g, b);
	if (!ga->cat != !gb->cat)
		return ga->cat ? -1 : 1;
	int c = ga->cat ? strcmp(ga->cat, gb->cat) : 0;
	if (c)
		return c;
	if (ga->cat) {
		const char *sa = str_of(s, ka->k1), *sb = str_of(s, kb->k1);
		size_t na = opsum_name_len(sa), nb = opsum_name_len(sb);
		if ((c = strncmp(sa, sb, na < nb ? na : nb)) != 0 || na != nb)
			return c ? c : na < nb ? -1 : 1;
	}
	if ((c = strcmp(str_of(s, ka->k2), str_of(s, kb->k2))) != 0)
		return c;
	return ka->stream < kb->stream ? -1 : ka->stream > kb->stream;
}

static int cmp_rows(const void *pa, const void *pb, void *ctx)
{
	const struct ev_stats *s = ctx;
	const struct krow *a = pa, *b = pb;
	const struct gkey *ka = GROUP_KEY(&s->g, a->first), *kb = GROUP_KEY(&s->g, b->first);
	if (ka->sg != kb->sg)
		return ka->sg < kb->sg ? -1 : 1;
	if (ka->rank != kb->rank)
		return ka->rank < kb->rank ? -1 : 1;
	if (a->sum != b->sum)
		return a->sum > b->sum ? -1 : 1;
	return cmp_key(s, a->first, b->first);
}

static double total_us(ev_stats *s, const struct gkey *k)
{
	struct kops *ko = s->state;
	double t = 0;
	uint64_t *at = ev_map_get(&ko->spans, (((uint64_t)k->sg << 32) | k->rank) + 1);
	if (at) {
		const struct span *sp = (const struct span *)ko->span.data + (*at - 1);
		t = sp->last - sp->first;
	}
	return s->o.float_us ? t : t / 1e3;
}

static int kops_rows(ev_stats *s, struct ev_rowset *rs)
{
	struct ev_colspec keys[EV_STATS_MAX_BY + 4];
	size_t nk = 0;
	by_colspecs(&s->o, keys, &nk);
	keys[nk++] = (struct ev_colspec){ "Parent op category", 0, 0 };
	keys[nk++] = (struct ev_colspec){ "Parent cpu_op", 0, 0 };
	keys[nk++] = (struct ev_colspec){ "Kernel name", 0, 0 };
	keys[nk++] = (struct ev_colspec){ "Kernel stream", 1, 0 };
	static const struct ev_colspec vals[] = {
		{ "Kernel duration (µs)_sum", 0, EV_DIR_LOWER },   { "Kernel duration (µs)_count", 0, EV_DIR_NONE },
		{ "Kernel duration (µs)_mean", 0, EV_DIR_LOWER },  { "Kernel duration (µs)_min", 0, EV_DIR_LOWER },
		{ "Kernel duration (µs)_max", 0, EV_DIR_LOWER },   { "Percent of kernels time (%)", 0, EV_DIR_NONE },
		{ "Percent of total time (%)", 0, EV_DIR_NONE },
	};
	int rc = ev_rowset_init(rs, keys, nk, vals, sizeof vals / sizeof vals[0]);
	size_t *ord = sorted_slots(s, cmp_key, &rc);
	struct krow *kr = rc ? NULL : calloc(s->g.keys.len + 1, sizeof *kr);
	if (!rc && !kr)
		rc = EV_ERR_NOMEM;
	size_t m = 0;
	for (size_t j = 0; !rc && j < s->g.keys.len; j++) {
		const struct kgroup *g = GROUP_VAL(&s->g, ord[j]);
		/* Signatures of one op name are one row. */
		if (!(j && same_part(s, ord[j - 1], ord[j]) && cmp_key(s, ord[j - 1], ord[j]) == 0)) {
			kr[m].first = ord[j];
			kr[m].min = g->min;
			kr[m++].max = g->max;
		}
		struct krow *w = &kr[m - 1];
		w->count += g->count;
		w->sum += g->sum;
		w->min = g->min < w->min ? g->min : w->min;
		w->max = g->max > w->max ? g->max : w->max;
	}
	if (!rc)
		qsort_r(kr, m, sizeof *kr, cmp_rows, s);
	for (size_t i = 0; !rc && i < m;) {
		size_t e = i;
		double all = 0;
		while (e < m && same_part(s, kr[i].first, kr[e].first))
			all += kr[e++].sum;
		double total = total_us(s, GROUP_KEY(&s->g, kr[i].first));
		for (; !rc && i < e; i++) {
			const struct gkey *gk = GROUP_KEY(&s->g, kr[i].first);
			const struct kgroup *g = GROUP_VAL(&s->g, kr[i].first);
			struct ev_row *r;
			size_t n;
			if ((rc = group_row(s, rs, gk, &r, &n)) != EV_OK)
				break;
			char op[1024] = "";
			if (g->cat) {
				const char *sig = str_of(s, gk->k1);
				snprintf(op, sizeof op, "%.*s", (int)opsum_name_len(sig), sig);
			}
			rc = ev_row_key(r, n, g->cat ? g->cat : "");
			rc = rc ? rc : ev_row_key(r, n + 1, op);
			rc = rc ? rc : ev_row_key(r, n + 2, str_of(s, gk->k2));
			rc = rc ? rc : ev_row_keyu(r, n + 3, gk->stream);
			r->val[0] = kr[i].sum;
			r->val[1] = (double)kr[i].count;
			r->val[2] = kr[i].sum / (double)kr[i].count;
			r->val[3] = kr[i].min;
			r->val[4] = kr[i].max;
			r->val[5] = all > 0 ? kr[i].sum / all * 100.0 : NAN;
			r->val[6] = total > 0 ? kr[i].sum / total * 100.0 : NAN;
		}
	}
	free(kr);
	free(ord);
	return rc;
}

static void kops_free(ev_stats *s)
{
	struct kops *k = s->state;
	ev_map_free(&k->spans);
	ev_vec_free(&k->span);
}

static const char *const kops_options[] = { "tracelens-float", "include-unlinked", NULL };

const struct ev_stats_analysis ev_stats_analysis_kernel_ops = {
	.name = "kernel-ops",
	.sheet = "kernel_summary",
	.help = "TraceLens's kernel_summary: kernels per launching op's\n"
	        "category, op, kernel name and stream: sum, count, mean, min,\n"
	        "max (us), share of kernel time and of the GPU timeline's span",
	.options = kops_options,
	.state_size = sizeof(struct kops),
	.group_size = sizeof(struct kgroup),
	.init = kops_init,
	.rec = kops_rec,
	.rows = kops_rows,
	.free = kops_free,
};
