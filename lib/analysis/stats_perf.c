/* SPDX-License-Identifier: MIT */
/*
 * stats_perf.c - TraceLens's perf-model sheets (GEMM, ...): the op
 * instances of a category's ops (perf.h), grouped by op name and the
 * model's parameters; per group the first instance's GFLOPS, data moved,
 * FLOPS/Byte, Compute Spec and arguments, the instances' TB/s, TFLOPS/s
 * and kernel time (mean, median, std, min, max, sum), their count, and
 * per kernel position TraceLens's kernel_details summary (the Python text
 * of its list of dicts); largest kernel time first.  --table picks the
 * category.
 *
 * An instance is an op of the category and the GPU events of its subtree,
 * as TraceLens aggregates them: the stream links an event to the innermost
 * op that launched it (sig, step), and the cpu_op ranges (nested on their
 * thread) tell which ops of the category enclose that one
 * (aten::layer_norm around aten::native_layer_norm, aten::convolution
 * around aten::miopen_convolution), so the event counts for each.  A
 * stream without ranges gives each op the events it launches itself.  The
 * instance's kernel time is the union of its events (TraceLens's busy
 * time).
 *
 * Every instance of the category's ops is a row's sample, as TraceLens
 * models every event of the op names: an op's cpu_op range waits for a
 * GPU event of its subtree (pending), and one that launched nothing (a CPU
 * copy, or whose kernels the trace left unlinked) counts with no kernel
 * time.  A group's "first"
 * instance is the first in the trace file, which Kineto writes thread by
 * thread (the #thread lines' order), each in time order: its arguments,
 * process and thread names are the row's *_first, and it breaks ties of
 * kernel time (TraceLens's UID_first).
 *
 * This file is the analysis's row: its setup, the records' way in, its
 * messages; stats_perf.h names the files of the rest.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/stats_perf.h"

static const struct perf_category *const categories[] = {
#define PERF_ROW(n, sheet) &perf_category_##n,
	PERF_CATEGORIES(PERF_ROW)
#undef PERF_ROW
};

static int perf_init(ev_stats *s)
{
	struct perf *p = s->state;
	if (s->o.table >= sizeof categories / sizeof categories[0])
		return EV_ERR_ARG;
	p->cat = categories[s->o.table];
	ev_map_init(&p->idx);
	ev_map_init(&p->sigcat);
	ev_map_init(&p->laidx);
	ev_map_init(&p->bwd.fwidx);
	p->bwd.src_checked = -1;
	ev_map_init(&p->pdidx);
	return EV_OK;
}

static int perf_rec(ev_stats *s, const struct ev_rec *r)
{
	struct perf *p = s->state;
	if (r->type == EV_RANGE && r->op == EV_RG_CPU_OP)
		return perf_range_rec(s, r);
	if (!is_gpu(r) || !r->sig || (r->flags & EV_F_UNLINKED) || class_of(s, r) == EV_KC_COMM)
		return EV_OK;
	unsigned kd;
	int rc;
	if ((rc = perf_kind_of(s, r->sig, &kd)) != EV_OK)
		return rc;
	if (kd == 3 && !p->unmodelled++) {
		const char *sig = str_of(s, r->sig);
		snprintf(p->unmodelled_op, sizeof p->unmodelled_op, "%.*s", (int)opsum_name_len(sig), sig);
	}
	uint64_t *li = r->step ? ev_map_get(&p->laidx, opsum_op_key(r->rank, r->src, r->step)) : NULL;
	const struct launcher *l = li ? &p->la[*li - 1] : NULL;
	if (l && (l->rank != r->rank || l->src != r->src || l->id != r->step))
		l = NULL;
	if (!l && (kd != 2 || p->cat->bwd))
		return EV_OK;
	s->n.selected++;
	p->now = r->ts;
	if (!l)
		return perf_inst_add(s, r, r->step ? r->step : ((uint64_t)1 << 40) + r->id, r->sig, 0, -1);
	/* Copied: adding may prune the launchers. */
	struct launcher lc = *l;
	for (uint32_t i = 0; !rc && i < lc.n; i++)
		rc = perf_inst_add(s, r, lc.a[i].id, lc.a[i].sig, lc.a[i].thread, lc.a[i].uid);
	return rc;
}

static int perf_finish(ev_stats *s)
{
	struct perf *p = s->state;
	int rc = perf_sweep(s, 1);
	if (!rc)
		rc = perf_pend_prune(s, 1);
	for (size_t i = 0; i < s->g.keys.len; i++) {
		const struct pgroup *g = GROUP_VAL(&s->g, i);
		p->any_uid |= g->uid >= 0;
		p->no_uid += !perf_uid_known(g);
	}
	return rc;
}

static void perf_free(ev_stats *s)
{
	struct perf *p = s->state;
	for (size_t i = 0; i < s->g.keys.len; i++) {
		struct pgroup *g = GROUP_VAL(&s->g, i);
		ev_dist_free(&g->us);
		ev_dist_free(&g->tbs);
		ev_dist_free(&g->tflops);
		for (uint32_t j = 0; g->k && j < g->nk; j++)
			ev_dist_free(&g->k[j].d);
		free(g->k);
		free(g->pvals);
	}
	free(p->inst);
	free(p->th);
	free(p->la);
	free(p->pd);
	ev_map_free(&p->pdidx);
	ev_map_free(&p->idx);
	ev_map_free(&p->sigcat);
	ev_map_free(&p->laidx);
	fb_free(&p->bwd.fb);
	free(p->bwd.fw);
	ev_map_free(&p->bwd.fwidx);
}

static int perf_warning(ev_stats *s, unsigned i, char *buf, size_t n)
{
	struct perf *p = s->state;
	uint64_t skipped = 0;
	for (size_t j = 0; j < s->g.keys.len; j++) {
		const struct pgroup *g = GROUP_VAL(&s->g, j);
		skipped += g->skipped + (g->nk ? g->empty : 0);
	}
	const char *sheet = p->cat->sheet;
	unsigned k = 0;
	if (p->unmodelled && i == k++)
		snprintf(buf, n, "%llu GPU event(s) of ops TraceLens puts on its %s sheet that evkit has no model for "
		         "(first: %s): left out", (unsigned long long)p->unmodelled, sheet, p->unmodelled_op);
	else if (p->failed && i == k++)
		snprintf(buf, n, "%llu %s op instance(s) whose arguments the model cannot read (first: %s): left out, "
		         "as TraceLens leaves them", (unsigned long long)p->failed, sheet, p->failed_op);
	else if (skipped && i == k++)
		snprintf(buf, n, "%llu op instance(s) with another number of GPU events (none included) than their "
		         "group's first with some: not in kernel_details (as TraceLens)", (unsigned long long)skipped);
	else if (p->over && i == k++)
		snprintf(buf, n, "%llu op instance(s) with more than %d GPU events: the others not in kernel_details "
		         "nor in the transpose parameter", (unsigned long long)p->over, PERF_MAXK);
	else if (p->early && i == k++)
		snprintf(buf, n, "%llu %s op(s) closed without kernel time, past %d waiting for their GPU events: "
		         "one whose events came later counts as two instances", (unsigned long long)p->early, sheet, PEND_MAX);
	else if (p->evicted && i == k++)
		snprintf(buf, n, "%llu op(s) under %s ops left the op-tree window before their GPU events came: "
		         "those events count only for the op that launched them", (unsigned long long)p->evicted, sheet);
	else if (p->deep && i == k++)
		snprintf(buf, n, "%llu %s op(s) nested more than %d deep in others: their subtree's GPU events count "
		         "only for the op that launched them", (unsigned long long)p->deep, sheet, PERF_DEPTH);
	else if (p->bwd.unlinked_ops && i == k++)
		snprintf(buf, n, "%llu op(s) of the %s sheet in sources without forward-backward links (#src without "
		         "flow_links=...fwdbwd): their backward is not known; convert with kineto2ev --flow-links",
		         (unsigned long long)p->bwd.unlinked_ops, sheet);
	else if (p->bwd.fw_evicted && i == k++)
		snprintf(buf, n, "%llu forward op(s) of the %s sheet left the window of the last %d before their "
		         "backward op came: not in the sheet", (unsigned long long)p->bwd.fw_evicted, sheet, FW_MAX);
	else if (p->bwd.fb.deep && i == k++)
		snprintf(buf, n, "%llu autograd::engine::evaluate_function op(s) nested more than %d deep: the ops "
		         "linked inside them are taken for the backward op", (unsigned long long)p->bwd.fb.deep, FB_DEPTH);
	else if (p->cat->note && s->g.keys.len && i == k++)
		snprintf(buf, n, "%s", p->cat->note);
	else if (p->sketched && i == k++)
		snprintf(buf, n, "%llu kernel_details position(s) past the exact-sample budget: their sum, mean, "
		         "median and std are approximate", (unsigned long long)p->sketched);
	else if (p->any_uid && p->no_uid && i == k++)
		snprintf(buf, n, "%llu row(s) with an op instance whose op's UID (TraceLens's event index) is not "
		         "known (its cpu_op range not in the stream or past the op window): UID_first left empty",
		         (unsigned long long)p->no_uid);
	else
		return 0;
	return 1;
}

static int perf_explain(const struct ev_stats_opts *o, const struct ev_stats_counts *c, char *buf, size_t n)
{
	const char *sheet = o->table < sizeof categories / sizeof categories[0] ? categories[o->table]->sheet : "?";
	if (!c->gpu)
		return 0;
	snprintf(buf, n, "no GPU event launched by an op of TraceLens's %s sheet among %llu: empty table", sheet,
	         (unsigned long long)c->gpu);
	return 1;
}

static const struct ev_stats_subtable perf_tables[] = {
#define PERF_TABLE(nm, sheet) { #nm, #sheet, NULL },
	PERF_CATEGORIES(PERF_TABLE)
#undef PERF_TABLE
	{ NULL, NULL, NULL },
};

static const char *const perf_options[] = { "table", "tracelens-float", "exact-limit", NULL };

const struct ev_stats_analysis ev_stats_analysis_perf = {
	.name = "perf",
	.sheet = "GEMM",
	.help = "TraceLens's perf-model sheets (--table gemm, sdpa_fwd,\n"
	        "conv_fwd, conv_bwd, binary, unary, norm, reduce, reduce_bwd:\n"
	        "its GEMM, SDPA_fwd, CONV_fwd, CONV_bwd, BinaryElementwise,\n"
	        "UnaryElementwise, Normalization, Reduce_fwd, Reduce_bwd sheets): per op\n"
	        "name and model parameters, GFLOPS, data moved, TB/s,\n"
	        "TFLOPS/s, kernel time and per-kernel stats",
	.options = perf_options,
	.tables = perf_tables,
	.state_size = sizeof(struct perf),
	.group_size = sizeof(struct pgroup),
	.init = perf_init,
	.rec = perf_rec,
	.finish = perf_finish,
	.rows = perf_rows,
	.free = perf_free,
	.explain = perf_explain,
	.warning = perf_warning,
};
