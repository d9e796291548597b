/* SPDX-License-Identifier: MIT */
/*
 * stats_perf_groups.c - ev-stats perf's groups: a finished op instance,
 * modelled by its category (perf.h), goes to the group of its op name and
 * parameter values, which keeps the first instance's numbers, the
 * instances' TB/s, TFLOPS/s and kernel time, and its kernel_details
 * positions; the trace-file order that picks a group's first instance and
 * UID_first.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/stats_perf.h"

/* Whether op a comes before op b in the trace file (< 0), after (> 0).
 * TraceLens's *_first and UID_first are those of a group's first event
 * in the file: the lesser UID (the index there) when both are known;
 * else, as Kineto writes each thread's ops together, each thread's in
 * time order, the threads' order (their #thread lines') decides, then the
 * time (a thread without a #thread line: last). */
int perf_file_cmp(const ev_meta *m, const struct forder *a, const struct forder *b)
{
	if (a->uid >= 0 && b->uid >= 0)
		return a->uid < b->uid ? -1 : a->uid > b->uid;
	const struct ev_thread_info *ta = a->thread ? ev_meta_thread(m, a->rank, (uint32_t)(a->thread - 1)) : NULL;
	const struct ev_thread_info *tb = b->thread ? ev_meta_thread(m, b->rank, (uint32_t)(b->thread - 1)) : NULL;
	if (!ta != !tb)
		return ta ? -1 : 1;
	if (ta && ta->order != tb->order)
		return ta->order < tb->order ? -1 : 1;
	if (a->ts != b->ts)
		return a->ts < b->ts ? -1 : 1;
	return a->seq < b->seq ? -1 : a->seq > b->seq;
}

static void add_col(ev_stats *s, const char *name, const struct forder *at, size_t pos)
{
	struct perf *p = s->state;
	for (size_t i = 0; i < p->ncols; i++)
		if (!strcmp(p->cols[i].name, name)) {
			int c = perf_file_cmp(s->meta, at, &p->cols[i].at);
			if (c < 0 || (c == 0 && pos < p->cols[i].pos)) {
				p->cols[i].at = *at;
				p->cols[i].pos = pos;
			}
			return;
		}
	if (p->ncols < sizeof p->cols / sizeof p->cols[0])
		p->cols[p->ncols++] = (struct pcol){ name, *at, pos };
}

/* An instance is done: modelled, into its group. */
int perf_inst_close(ev_stats *s, const struct pinst *in)
{
	struct perf *p = s->state;
	const char *names[PERF_MAXK];
	for (uint32_t i = 0; i < in->nk; i++)
		names[i] = str_of(s, in->kname[i]);
	const char *sig = str_of(s, in->key.k2);
	struct perf_inst pi = { sig, names, in->nk };
	struct perf_model m;
	memset(&m, 0, sizeof m);
	int rc = p->cat->model(&pi, &m);
	if (rc == EV_ERR_FORMAT || rc == EV_ERR_ARG) {
		if (!p->failed++)
			snprintf(p->failed_op, sizeof p->failed_op, "%.*s", (int)opsum_name_len(sig), sig);
		return EV_OK;
	}
	if (rc)
		return rc;
	p->over += in->more != 0;
	/* The group: op name and parameter values. */
	char key[PERF_MAXP * (PERF_PVAL + 40) + 256];
	size_t w = (size_t)snprintf(key, sizeof key, "%.*s", (int)opsum_name_len(sig), sig);
	size_t vat = w;
	for (size_t i = 0; i < m.np && w < sizeof key; i++)
		w += (size_t)snprintf(key + w, sizeof key - w, "\x1f%s=%s", m.pname[i], m.pval[i]);
	if (w >= sizeof key)
		return EV_ERR_RANGE;
	struct gkey k;
	memset(&k, 0, sizeof k);
	k.sg = in->key.sg;
	k.rank = has_by(&s->o, EV_BY_RANK) ? in->key.rank : 0;
	k.k1 = ev_hash64(key, w);
	k.k2 = ev_hash64(key, vat) ^ (uint64_t)w;
	struct pgroup *g = group_get(&s->g, &k, NULL);
	if (!g)
		return EV_ERR_NOMEM;
	for (size_t i = 0; i < m.np; i++)
		add_col(s, m.pname[i], &in->at, i);
	double us = !in->nk ? 0
	          : s->o.float_us ? in->fbusy + (in->fz - in->fa)
	                          : (double)(in->busy + ev_span(in->start, in->end)) / 1e3;
	double gflop = m.flops / 1e9;
	if (g->count == 0) {
		size_t vn = 0;
		g->pvals = malloc(m.np * PERF_PVAL + 1);
		if (!g->pvals)
			return EV_ERR_NOMEM;
		for (size_t i = 0; i < m.np; i++) {
			vn += (size_t)sprintf(g->pvals + vn, "%s%s", i ? "\x1f" : "", m.pval[i]);
			g->pname[i] = m.pname[i];
		}
		g->pvals[vn] = '\0';
		g->np = m.np;
		g->gflop = gflop;
		g->mbytes = m.bytes / (1024.0 * 1024.0);
		g->fpb = m.bytes > 0 ? gflop * 1e9 / m.bytes : NAN;
		g->spec = m.spec;
		g->first = in->at;
		g->sig = in->key.k2;
		g->uid = -1;
	} else if (perf_file_cmp(s->meta, &in->at, &g->first) < 0) {
		g->first = in->at;
		g->sig = in->key.k2;
	}
	g->count++;
	int64_t ts = in->at.ts;
	rc = ev_dist_add(&g->us, &s->pool, us, ts);
	if (!rc && us > 0)
		rc = ev_dist_add(&g->tflops, &s->pool, gflop / 1e3 / (us / 1e6), ts);
	if (!rc && us > 0 && isfinite(m.bytes))
		rc = ev_dist_add(&g->tbs, &s->pool, m.bytes / 1e12 / (us / 1e6), ts);
	/* kernel_details: the positions of the first instance with events
	 * (TraceLens's template is the first non-empty list); the others of
	 * another number of events, those without any included, are left
	 * out. */
	if (!rc && !g->k && in->nk) {
		g->nk = in->nk;
		g->k = calloc(in->nk, sizeof *g->k);
		if (!g->k)
			return EV_ERR_NOMEM;
		for (uint32_t i = 0; i < in->nk; i++) {
			g->k[i].name = in->kname[i];
			g->k[i].stream = in->kstream[i];
		}
	}
	if (in->at.uid < 0)
		g->no_uid++;
	else if (g->uid < 0 || in->at.uid < g->uid)
		g->uid = in->at.uid;
	if (!in->nk)
		g->empty++;
	if (rc || !in->nk)
		return rc;
	if (in->nk != g->nk) {
		g->skipped++;
		return rc;
	}
	for (uint32_t i = 0; !rc && i < in->nk; i++)
		rc = ev_dist_add(&g->k[i].d, &s->pool, in->kdur[i], ts);
	return rc;
}

/* Whether group g has its UID_first: every instance's op's UID known. */
int perf_uid_known(const struct pgroup *g)
{
	return g->uid >= 0 && !g->no_uid;
}
