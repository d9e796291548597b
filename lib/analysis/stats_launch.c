/* SPDX-License-Identifier: MIT */
/*
 * stats_launch.c - HTA's CUDA kernel launch statistics
 * (get_cuda_kernel_launch_stats): every GPU event launched by
 * cudaLaunchKernel, cudaLaunchKernelExC or MTIA's runFunction (and, unless
 * --no-memory-events, cudaMemcpyAsync and cudaMemsetAsync), matched to its
 * call by correlation id, with the call's duration (cpu_duration), the GPU
 * event's (gpu_duration) and the launch delay: GPU start minus the call's
 * end, clipped at 0.  HTA's outlier lists: short GPU kernels (gpu_duration
 * < cpu_duration, with cpu_duration <= --runtime-cutoff), runtime outliers
 * (cpu_duration > --runtime-cutoff) and launch delay outliers (launch_delay
 * > --launch-delay-cutoff).
 *
 * Tables: summary (per rank, each duration's distribution and its outlier
 * count, HTA's last-step filter applied), events (HTA's table: one row per
 * launch, streamed as each GPU event comes) and outliers (the three lists,
 * streamed).  A streamed row cannot be taken back when a later
 * ProfilerStep turns out to be the last, so those rows carry the call's
 * step (ProfilerStep starts before it); HTA leaves out the highest step
 * when the trace has two or more step names.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/hta_rank.h"
#include "analysis/stats_impl.h"

enum { M_CPU, M_GPU, M_DELAY, NMET };
enum { T_SUMMARY, T_EVENTS, T_OUTLIERS };
static const char *const met_name[NMET] = { "cpu_duration", "gpu_duration", "launch_delay" };
static const char *const list_name[NMET] = { "runtime_outlier", "short_gpu_kernel", "launch_delay_outlier" };

/* Per rank in three parts (hta_rank.h): [0] both states, [1] state 0
 * since the latest step start, [2] state 1. */
struct lrank {
	struct hta_rank h;
	struct ev_dist d[NMET][3];  /* us */
	uint64_t outliers[NMET][3]; /* runtime, short GPU kernels, launch delay */
};

struct launch {
	struct ev_vec ranks; /* struct lrank */
	struct ev_map idx;
};

static int64_t runtime_cutoff(const struct ev_stats *s)
{
	return s->o.hta_set & 2 ? s->o.hta_runtime_us : 50;
}

static int64_t delay_cutoff(const struct ev_stats *s)
{
	return s->o.hta_set & 4 ? s->o.hta_launch_us : 100;
}

/* A step start (HTA_STEP_FORK or SWITCH), or the end (act 0: the answer
 * into part 0). */
static int step(struct ev_stats *s, struct lrank *lr, int act)
{
	int into = act == HTA_STEP_FORK ? 1 : act == HTA_STEP_SWITCH ? 2 : 1 + hta_rank_filtered(&lr->h), rc = EV_OK;
	for (int m = 0; m < NMET; m++) {
		lr->outliers[m][0] += lr->outliers[m][into];
		lr->outliers[m][1] = lr->outliers[m][2] = 0;
		if (!rc)
			rc = act == HTA_STEP_FORK     ? hta_dist3_fork(lr->d[m], &s->pool)
			     : act == HTA_STEP_SWITCH ? hta_dist3_switch(lr->d[m], &s->pool)
			                              : hta_dist3_final(lr->d[m], into == 2, &s->pool);
	}
	return rc;
}

static int launch_init(struct ev_stats *s)
{
	struct launch *st = s->state;
	ev_vec_init(&st->ranks, sizeof(struct lrank));
	ev_map_init(&st->idx);
	return EV_OK;
}

/* One streamed row: the launch, or the list it is on. */
static int stream_row(struct ev_stats *s, const struct lrank *lr, const char *list, const struct hta_call *c,
                      const struct ev_rec *r, const int64_t *v)
{
	ev_table *t = s->o.stream;
	char b[16];
	const struct srcgrp *g = (const struct srcgrp *)s->srcgrps.data + lr->h.sg;
	int rc = ev_table_str(t, src_label(s, g->first_src, b, sizeof b));
	rc = rc ? rc : ev_table_u64(t, lr->h.rank);
	if (list)
		rc = rc ? rc : ev_table_str(t, list);
	rc = rc ? rc : ev_table_u64(t, c->corr);
	rc = rc ? rc : ev_table_u64(t, c->step);
	rc = rc ? rc : ev_table_str(t, str_of(s, c->name));
	rc = rc ? rc : ev_table_str(t, str_of(s, r->name));
	for (int m = 0; m < NMET; m++)
		rc = rc ? rc : ev_table_i64(t, v[m]);
	s->n.streamed += rc == EV_OK;
	return rc;
}

static int launch_rec(struct ev_stats *s, const struct ev_rec *r)
{
	struct launch *st = s->state;
	int fresh;
	struct lrank *lr = hta_rank_of(s, &st->ranks, &st->idx, r, &fresh);
	if (!lr)
		return EV_ERR_NOMEM;
	if (!is_gpu(r)) {
		int act = hta_rank_cpu(s, &lr->h, r, NULL);
		return act > 0 ? step(s, lr, act) : act; /* a step forks or switches */
	}
	const struct hta_call *c = hta_rank_call(&lr->h, r->id);
	if (!c || !(c->kind == HTA_CALL_KERNEL || (c->kind == HTA_CALL_MEMORY && !s->o.hta_no_memory)))
		return EV_OK;
	s->n.selected++;
	int64_t ts, end, v[NMET];
	hta_us(lr->h.json_base_ns, r->ts, ev_rec_end(r), &ts, &end);
	v[M_CPU] = c->dur_us;
	v[M_GPU] = end - ts;
	v[M_DELAY] = ts - c->ts_us - c->dur_us;
	if (v[M_DELAY] < 0)
		v[M_DELAY] = 0;
	int out[NMET] = {
		v[M_CPU] > runtime_cutoff(s),
		v[M_CPU] <= runtime_cutoff(s) && v[M_GPU] < v[M_CPU],
		v[M_DELAY] > delay_cutoff(s),
	};
	int rc = EV_OK;
	if (s->o.table == T_EVENTS)
		rc = stream_row(s, lr, NULL, c, r, v);
	for (int m = 0; !rc && s->o.table == T_OUTLIERS && m < NMET; m++)
		if (out[m])
			rc = stream_row(s, lr, list_name[m], c, r, v);
	unsigned mask = hta_rank_route(&lr->h, c);
	for (int k = 0; !rc && k < 2; k++) {
		if (!(mask & (1u << k)))
			continue;
		for (int m = 0; !rc && m < NMET; m++) {
			lr->outliers[m][1 + k] += (uint64_t)out[m];
			rc = ev_dist_add(&lr->d[m][1 + k], &s->pool, (double)v[m], r->ts);
		}
	}
	return rc;
}

static int launch_finish(struct ev_stats *s)
{
	struct launch *st = s->state;
	int rc = EV_OK;
	for (size_t i = 0; !rc && i < st->ranks.len; i++) {
		struct lrank *lr = (struct lrank *)st->ranks.data + i;
		rc = step(s, lr, 0);
		s->n.one_instance += NMET * (lr->d[0][0].n == 1);
	}
	return rc;
}

static int launch_rows(struct ev_stats *s, struct ev_rowset *rs)
{
	struct launch *st = s->state;
	struct ev_colspec keys[EV_STATS_MAX_BY + 2];
	size_t nk = 0;
	by_colspecs(&s->o, keys, &nk);
	/* rank (and stream) are key columns of their own unless --by has them */
	int own_rank = !has_by(&s->o, EV_BY_RANK);
	if (own_rank)
		keys[nk++] = (struct ev_colspec){ "rank", 1, 0 };
	keys[nk++] = (struct ev_colspec){ "metric", 0, 0 };
	static const struct ev_colspec vals[] = {
		{ "count", 0, 0 }, { "mean_us", 0, EV_DIR_LOWER }, { "std_us", 0, 0 }, { "min_us", 0, 0 },
		{ "p25_us", 0, 0 }, { "p50_us", 0, 0 }, { "p75_us", 0, 0 }, { "max_us", 0, 0 },
		{ "outliers", 0, EV_DIR_LOWER },
	};
	int rc = ev_rowset_init(rs, keys, nk, vals, 9);
	for (size_t i = 0; !rc && i < st->ranks.len; i++) {
		struct lrank *lr = (struct lrank *)st->ranks.data + i;
		if (!lr->d[0][0].n)
			continue;
		for (int m = 0; !rc && m < NMET; m++) {
			struct gkey k = { .sg = lr->h.sg, .rank = lr->h.rank };
			struct ev_row *row;
			size_t n;
			rc = group_row(s, rs, &k, &row, &n);
			if (own_rank && !rc)
				rc = ev_row_keyu(row, n++, lr->h.rank);
			rc = rc ? rc : ev_row_key(row, n, met_name[m]);
			if (rc)
				break;
			struct ev_dist *d = &lr->d[m][0];
			row->val[0] = (double)d->n;
			row->val[1] = d->mean;
			row->val[2] = d->n > 1 ? ev_dist_std(d) : NAN;
			row->val[3] = d->min;
			row->val[4] = ev_dist_quantile(d, 0.25);
			row->val[5] = ev_dist_quantile(d, 0.5);
			row->val[6] = ev_dist_quantile(d, 0.75);
			row->val[7] = d->max;
			row->val[8] = (double)lr->outliers[m][0];
		}
	}
	return rc;
}

static void launch_free(struct ev_stats *s)
{
	struct launch *st = s->state;
	for (size_t i = 0; i < st->ranks.len; i++) {
		struct lrank *lr = (struct lrank *)st->ranks.data + i;
		for (int k = 0; k < 3; k++)
			for (int m = 0; m < NMET; m++)
				ev_dist_release(&lr->d[m][k], &s->pool);
		hta_rank_free(&lr->h);
	}
	ev_vec_free(&st->ranks);
	ev_map_free(&st->idx);
}

static int launch_explain(const struct ev_stats_opts *o, const struct ev_stats_counts *c, char *buf, size_t n)
{
	if (!c->gpu)
		return 0;
	if (c->selected && o->table == T_OUTLIERS)
		snprintf(buf, n, "no outlier among %llu launches: empty table", (unsigned long long)c->selected);
	else
		snprintf(buf, n,
		         "no GPU event among %llu has its launching cudaLaunchKernel, cudaLaunchKernelExC%s in the "
		         "stream (HTA's launch calls; kineto2ev --no-api leaves calls out): empty table",
		         (unsigned long long)c->gpu, o->hta_no_memory ? "" : ", cudaMemcpyAsync or cudaMemsetAsync");
	return 1;
}

static const char *const launch_options[] = { "table", "runtime-cutoff", "launch-delay-cutoff", "no-memory-events",
	                                      "exact-limit", NULL };

static const char *const event_cols[] = { "src", "rank", "correlation", "step", "call", "name",
	                                  "cpu_duration_us", "gpu_duration_us", "launch_delay_us", NULL };
static const char *const outlier_cols[] = { "src", "rank", "list", "correlation", "step", "call", "name",
	                                    "cpu_duration_us", "gpu_duration_us", "launch_delay_us", NULL };

static const struct ev_stats_subtable launch_tables[] = {
	{ "summary", "get_cuda_kernel_launch_stats", NULL },
	{ "events", "cuda_kernel_launch_events", event_cols },
	{ "outliers", "cuda_kernel_launch_outliers", outlier_cols },
	{ NULL, NULL, NULL },
};

const struct ev_stats_analysis ev_stats_analysis_launch = {
	.name = "launch",
	.sheet = "get_cuda_kernel_launch_stats",
	.help = "HTA's CUDA kernel launch statistics: per rank the launch\n"
	        "call's duration, the GPU event's and the launch delay, with\n"
	        "counts of HTA's outliers (--runtime-cutoff, --launch-delay-\n"
	        "cutoff); --table=events lists every launch, --table=outliers\n"
	        "the short GPU kernels, runtime and launch delay outliers",
	.options = launch_options,
	.tables = launch_tables,
	.default_by = "config",
	.state_size = sizeof(struct launch),
	.init = launch_init,
	.rec = launch_rec,
	.finish = launch_finish,
	.rows = launch_rows,
	.free = launch_free,
	.explain = launch_explain,
};
