/* SPDX-License-Identifier: MIT */
/*
 * unified_groups.c - an instance of unified_perf_summary as a row of its
 * group (stats_unified.c decides which): the group's key (name, category,
 * process and thread names, arguments), its first instance's TraceLens
 * UID, CPU and kernel time, and for an op with a perf model evkit has
 * (perf.h) the model's numbers and perf_params.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/perf.h"
#include "analysis/pyrepr.h"
#include "analysis/unified.h"

static const struct perf_category *const categories[] = {
#define PERF_ROW(n, sheet) &perf_category_##n,
	PERF_CATEGORIES(PERF_ROW)
#undef PERF_ROW
};
/* Those TraceLens picks by a prefix of the op's name. */
static const struct perf_category *const matchers[] = {
#define PERF_ROW(n) &perf_category_##n,
	PERF_MATCHERS(PERF_ROW)
#undef PERF_ROW
};

/* TraceLens's UID of a row's instance (ex_UID): an op's is its event's
 * index in the trace (kineto2ev's, tl_uid); a synthetic op's (j >= 0: the
 * instance's GPU event j) TraceLens numbers after the trace's last event,
 * which is known only once every synthetic op is (syn_number): NAN here. */
static double unified_uid(const struct uinst *in, int j)
{
	return j < 0 && in->uid >= 0 ? (double)in->uid : NAN;
}

/* The model's numbers of a taken op with a perf model, 1 when it has
 * them; the failure counted when evkit has no model or the model cannot
 * read the op. */
static int model_of(ev_stats *s, const struct uinst *in, struct perf_model *m, int *got)
{
	struct unified *u = s->state;
	const char *sig = str_of(s, in->sig);
	size_t nl = opsum_name_len(sig);
	const struct perf_category *cat = NULL;
	*got = 0;
	for (size_t c = 0; c < sizeof categories / sizeof categories[0] && !cat; c++)
		for (const char *const *o = categories[c]->ops; *o && !cat; o++)
			if (strlen(*o) == nl && !strncmp(sig, *o, nl))
				cat = categories[c];
	for (size_t c = 0; c < sizeof matchers / sizeof matchers[0] && !cat; c++)
		for (const char *const *o = matchers[c]->ops; *o && !cat; o++)
			if (strlen(*o) <= nl && !strncmp(sig, *o, strlen(*o)))
				cat = matchers[c];
	if (!cat) {
		if (!u->nomodel++)
			unified_op_name(sig, u->nomodel_op, sizeof u->nomodel_op);
		return EV_OK;
	}
	const char *names[UNI_MAXK];
	for (uint32_t i = 0; i < in->nk; i++)
		names[i] = str_of(s, in->kname[i]);
	struct perf_inst pi = { sig, names, in->nk };
	memset(m, 0, sizeof *m);
	int rc = cat->model(&pi, m);
	if (rc == PERF_NOARGS) {
		/* One category says so today; a second would be counted with it. */
		if (!u->noargs++) {
			unified_op_name(sig, u->noargs_op, sizeof u->noargs_op);
			u->noargs_why = cat->noargs;
		}
		return EV_OK;
	}
	if (rc == EV_ERR_FORMAT || rc == EV_ERR_ARG) {
		if (!u->failed++)
			unified_op_name(sig, u->failed_op, sizeof u->failed_op);
		return EV_OK;
	}
	*got = rc == EV_OK;
	return rc;
}

/* A parameter value as Python's repr() in a dict: the model keeps
 * pandas' str() of it, which is the repr but for a string. */
static void param_repr(struct pytext *t, const char *v)
{
	char *end;
	if (*v == '(' || *v == '[' || *v == '{' || !strcmp(v, "True") || !strcmp(v, "False") || !strcmp(v, "None") ||
	    (*v && (strtod(v, &end), *end == '\0'))) {
		pyt_puts(t, v);
		return;
	}
	pyt_puts(t, "'");
	for (const char *c = v; *c; c++) {
		if (*c == '\'' || *c == '\\')
			pyt_puts(t, "\\");
		pyt_put(t, c, 1);
	}
	pyt_puts(t, "'");
}

/* Instance in as a row: taken whole (j < 0), or its own event j as a
 * synthetic op. */
int unified_add_row(ev_stats *s, const struct uinst *in, int j)
{
	struct unified *u = s->state;
	const char *sig = str_of(s, in->sig);
	char name[1024], b[512];
	const char *cat;
	const char *kfirst = in->kfirst ? str_of(s, in->kfirst) : NULL;
	if (j >= 0) {
		snprintf(name, sizeof name, "%.*s->%s (Synthetic Op)", (int)opsum_name_len(sig), sig,
		         str_of(s, in->kname[j]));
		cat = opsum_category(name, kfirst);
	} else {
		cat = unified_model_category(unified_op_name(sig, b, sizeof b));
		cat = in->pm && cat ? cat : opsum_category(b, kfirst);
	}
	const char *nm[3];
	int named = tl_names(s->meta, in->key.rank, in->thread, nm), rc0;
	struct gkey k;
	memset(&k, 0, sizeof k);
	k.sg = in->key.sg;
	k.rank = has_by(&s->o, EV_BY_RANK) ? in->key.rank : 0;
	k.k1 = in->sig;
	k.k2 = ev_hash64(cat, strlen(cat)) ^ (j >= 0 ? in->kname[j] * 0x9E3779B97F4A7C15ULL : 0);
	for (int i = 0; named && i < 3; i++)
		k.k2 = (k.k2 ^ ev_hash64(nm[i], strlen(nm[i]))) * 0x9E3779B97F4A7C15ULL;
	size_t gi;
	struct ugroup *g = group_get(&s->g, &k, &gi);
	if (!g)
		return EV_ERR_NOMEM;
	if (j >= 0 && (rc0 = syn_note(u, in, j, gi)) != EV_OK)
		return rc0;
	double kt = j >= 0 ? in->kbusy[j] : opsum_busy_us(s, &in->sub);
	struct perf_model m;
	int got = 0, rc = EV_OK;
	if (j < 0 && in->pm && (rc = model_of(s, in, &m, &got)) != EV_OK)
		return rc;
	int oclass = j < 0 ? 0 : in->key.k1 >= CALL_BIT ? 1 : 2;
	if (g->count == 0) {
		g->sig = in->sig;
		g->kname = j >= 0 ? in->kname[j] : 0;
		g->cat = cat;
		g->rank = in->key.rank;
		g->thread = in->thread;
		g->pm = j < 0 && in->pm;
		g->oclass = oclass;
		g->ots = in->ts;
		g->uid = unified_uid(in, j);
		g->usrc = (uint16_t)in->key.k2;
		g->nk = j >= 0 ? 1 : in->nk;
		g->k = calloc(g->nk ? g->nk : 1, sizeof *g->k);
		if (!g->k)
			return EV_ERR_NOMEM;
		for (uint32_t i = 0; i < g->nk; i++) {
			g->k[i].name = in->kname[j >= 0 ? (uint32_t)j : i];
			g->k[i].stream = in->kstream[j >= 0 ? (uint32_t)j : i];
		}
	} else if (oclass < g->oclass || (oclass == g->oclass && in->ts < g->ots)) {
		g->oclass = oclass;
		g->ots = in->ts;
		g->uid = unified_uid(in, j);
		g->usrc = (uint16_t)in->key.k2;
	}
	g->count++;
	u->more += j < 0 && in->more;
	double gflop = got ? m.flops / 1e9 : NAN;
	if (got && !g->metrics) {
		g->metrics = u->metrics = 1;
		g->gflop = gflop;
		g->mbytes = isfinite(m.bytes) ? m.bytes / (1024.0 * 1024.0) : NAN;
		g->fpb = isfinite(m.bytes) && m.bytes > 0 ? m.flops / m.bytes : NAN;
		g->spec = m.spec ? m.spec : "";
	}
	if (got && m.np && !g->params) {
		struct pytext t = { 0 };
		pyt_puts(&t, "{");
		for (size_t i = 0; i < m.np; i++) {
			pyt_puts(&t, i ? ", '" : "'");
			pyt_puts(&t, m.pname[i]);
			pyt_puts(&t, "': ");
			param_repr(&t, m.pval[i]);
		}
		pyt_puts(&t, "}");
		if (t.oom) {
			free(t.p);
			return EV_ERR_NOMEM;
		}
		g->params = t.p;
	}
	if (in->dur >= 0)
		rc = ev_dist_add(&g->dur, &s->pool, (double)in->dur / 1000.0, in->ts);
	rc = rc ? rc : ev_dist_add(&g->kt, &s->pool, kt, in->ts);
	if (!rc && got && kt > 0)
		rc = ev_dist_add(&g->tflops, &s->pool, gflop / 1e3 / (kt / 1e6), in->ts);
	if (!rc && got && kt > 0 && isfinite(m.bytes))
		rc = ev_dist_add(&g->tbs, &s->pool, m.bytes / 1e12 / (kt / 1e6), in->ts);
	uint32_t nk = j >= 0 ? 1 : in->nk;
	if (rc || nk != g->nk) {
		g->skipped += !rc;
		return rc;
	}
	for (uint32_t i = 0; !rc && i < nk; i++)
		rc = ev_dist_add(&g->k[i].d, &s->pool, in->kdur[j >= 0 ? (uint32_t)j : i], in->ts);
	return rc;
}
