/* SPDX-License-Identifier: MIT */
/*
 * stats_idle.c - HTA's idle time breakdown (get_idle_time_breakdown): per
 * rank and GPU stream, the gap before each kernel (memcpy, memset) since
 * the previous one on its stream ended, put in one of three categories:
 * host_wait when the kernel's launching call started after the previous
 * kernel ended (the CPU was late), kernel_wait when the gap is below
 * --consecutive-kernel-delay (30 us: back-to-back launch overhead), other
 * otherwise.  The first kernel of a stream has no gap and counts as other.
 * --table=intervals gives HTA's interval statistics of each category
 * (show_idle_interval_stats).
 *
 * Streaming: each stream keeps the previous kernel's end and per category
 * a sum and a distribution; HTA's microseconds, its launches and its
 * last-step filter come from hta_rank.h (two states per rank).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/hta_rank.h"
#include "analysis/stats_impl.h"

enum { HOST_WAIT, KERNEL_WAIT, OTHER, NCAT };
static const char *const cat_name[NCAT] = { "host_wait", "kernel_wait", "other" };

struct icat {
	uint64_t kernels;   /* kernels in the category (the first one with no gap included) */
	double sum;         /* us */
};

/* A stream: its cursor per state, its counts in three parts (hta_rank.h:
 * [0] both states, [1] state 0 since the latest step start, [2] state 1). */
struct istream {
	uint32_t stream;
	int have_prev[2];
	int64_t prev_end[2];      /* us */
	struct icat c[3][NCAT];
	struct ev_dist d[NCAT][3]; /* the gaps, us */
};

struct irank {
	struct hta_rank h;
	struct ev_vec streams; /* struct istream */
};

struct idle {
	struct ev_vec ranks; /* struct irank */
	struct ev_map idx;
};

static int64_t delay_us(const struct ev_stats *s)
{
	return s->o.hta_set & 1 ? s->o.hta_delay_us : 30;
}

/* A step start: HTA_STEP_FORK (state 1 becomes state 0) or SWITCH (state
 * 0 becomes state 1); the parts of the state that became the other move
 * into the common part. */
static int step(struct ev_stats *s, struct irank *ir, int act)
{
	int from = act == HTA_STEP_FORK ? 0 : 1, rc = EV_OK;
	for (size_t i = 0; i < ir->streams.len; i++) {
		struct istream *is = (struct istream *)ir->streams.data + i;
		is->have_prev[1 - from] = is->have_prev[from];
		is->prev_end[1 - from] = is->prev_end[from];
		for (int c = 0; c < NCAT; c++) {
			is->c[0][c].kernels += is->c[1 + from][c].kernels;
			is->c[0][c].sum += is->c[1 + from][c].sum;
			memset(&is->c[1][c], 0, sizeof is->c[1][c]);
			memset(&is->c[2][c], 0, sizeof is->c[2][c]);
			if (!rc)
				rc = act == HTA_STEP_FORK ? hta_dist3_fork(is->d[c], &s->pool)
				                          : hta_dist3_switch(is->d[c], &s->pool);
		}
	}
	return rc;
}

static struct istream *stream_of(struct ev_vec *v, uint32_t stream)
{
	struct istream *a = v->data;
	for (size_t i = v->len; i-- > 0;)
		if (a[i].stream == stream)
			return &a[i];
	struct istream *n = ev_vec_push(v);
	if (n)
		n->stream = stream;
	return n;
}

static int idle_init(struct ev_stats *s)
{
	struct idle *st = s->state;
	ev_vec_init(&st->ranks, sizeof(struct irank));
	ev_map_init(&st->idx);
	return EV_OK;
}

/* The gap before a GPU event in state k. */
static int gap(struct ev_stats *s, struct istream *is, int k, const struct hta_call *call, int64_t ts, int64_t end)
{
	int rc = EV_OK;
	if (!is->have_prev[k]) {
		is->c[1 + k][OTHER].kernels++;
	} else {
		int64_t g = ts - is->prev_end[k];
		int c = call && call->ts_us > is->prev_end[k] ? HOST_WAIT : g < delay_us(s) ? KERNEL_WAIT : OTHER;
		is->c[1 + k][c].kernels++;
		is->c[1 + k][c].sum += (double)g;
		rc = ev_dist_add(&is->d[c][1 + k], &s->pool, (double)g, ts);
	}
	is->have_prev[k] = 1;
	is->prev_end[k] = end;
	return rc;
}

static int idle_rec(struct ev_stats *s, const struct ev_rec *r)
{
	struct idle *st = s->state;
	int fresh;
	struct irank *ir = hta_rank_of(s, &st->ranks, &st->idx, r, &fresh);
	if (!ir)
		return EV_ERR_NOMEM;
	if (fresh)
		ev_vec_init(&ir->streams, sizeof(struct istream));
	if (!is_gpu(r)) {
		int act = hta_rank_cpu(s, &ir->h, r, NULL);
		return act > 0 ? step(s, ir, act) : act; /* a step forks or switches */
	}
	const struct hta_call *call = hta_rank_call(&ir->h, r->id);
	unsigned mask = hta_rank_route(&ir->h, call);
	if (!mask)
		return EV_OK;
	int64_t ts, end;
	hta_us(ir->h.json_base_ns, r->ts, ev_rec_end(r), &ts, &end);
	s->n.selected++;
	struct istream *is = stream_of(&ir->streams, r->stream);
	if (!is)
		return EV_ERR_NOMEM;
	for (int k = 0; k < 2; k++) {
		int rc = mask & (1u << k) ? gap(s, is, k, call, ts, end) : EV_OK;
		if (rc)
			return rc;
	}
	return EV_OK;
}

/* The answer into the common part: state 1 when HTA's filter applies. */
static int idle_finish(struct ev_stats *s)
{
	struct idle *st = s->state;
	int rc = EV_OK;
	for (size_t i = 0; i < st->ranks.len; i++) {
		struct irank *ir = (struct irank *)st->ranks.data + i;
		int f = hta_rank_filtered(&ir->h);
		for (size_t j = 0; j < ir->streams.len; j++) {
			struct istream *is = (struct istream *)ir->streams.data + j;
			for (int c = 0; c < NCAT; c++) {
				is->c[0][c].kernels += is->c[1 + f][c].kernels;
				is->c[0][c].sum += is->c[1 + f][c].sum;
				if (!rc)
					rc = hta_dist3_final(is->d[c], f, &s->pool);
				s->n.one_instance += s->o.table == 1 && is->d[c][0].n == 1;
			}
		}
	}
	return rc;
}

static int cmp_u32(const void *a, const void *b)
{
	uint32_t x = ((const struct istream *)a)->stream, y = ((const struct istream *)b)->stream;
	return x < y ? -1 : x > y;
}

static int idle_rows(struct ev_stats *s, struct ev_rowset *rs)
{
	struct idle *st = s->state;
	int stats = s->o.table == 1;
	struct ev_colspec keys[EV_STATS_MAX_BY + 3];
	size_t nk = 0;
	by_colspecs(&s->o, keys, &nk);
	/* rank (and stream) are key columns of their own unless --by has them */
	int own_rank = !has_by(&s->o, EV_BY_RANK), own_stream = !has_by(&s->o, EV_BY_STREAM);
	if (own_rank)
		keys[nk++] = (struct ev_colspec){ "rank", 1, 0 };
	if (own_stream)
		keys[nk++] = (struct ev_colspec){ "stream", 1, 0 };
	keys[nk++] = (struct ev_colspec){ "idle_category", 0, 0 };
	static const struct ev_colspec bvals[] = { { "idle_time_us", 0, EV_DIR_LOWER }, { "idle_time_ratio", 0, 0 } };
	static const struct ev_colspec svals[] = {
		{ "count", 0, 0 }, { "mean_us", 0, EV_DIR_LOWER }, { "std_us", 0, 0 }, { "min_us", 0, 0 },
		{ "p25_us", 0, 0 }, { "p50_us", 0, 0 }, { "p75_us", 0, 0 }, { "max_us", 0, 0 },
	};
	int rc = stats ? ev_rowset_init(rs, keys, nk, svals, 8) : ev_rowset_init(rs, keys, nk, bvals, 2);
	for (size_t i = 0; !rc && i < st->ranks.len; i++) {
		struct irank *ir = (struct irank *)st->ranks.data + i;
		struct ev_vec *v = &ir->streams;
		if (v->len)
			qsort(v->data, v->len, sizeof(struct istream), cmp_u32);
		for (size_t j = 0; !rc && j < v->len; j++) {
			struct istream *is = (struct istream *)v->data + j;
			double total = 0;
			for (int c = 0; c < NCAT; c++)
				total += is->c[0][c].sum;
			for (int c = 0; !rc && c < NCAT; c++) {
				struct icat *ic = &is->c[0][c];
				if (!ic->kernels)
					continue;
				struct gkey k = { .sg = ir->h.sg, .rank = ir->h.rank, .stream = is->stream };
				struct ev_row *row;
				size_t n;
				rc = group_row(s, rs, &k, &row, &n);
				if (own_rank && !rc)
					rc = ev_row_keyu(row, n++, ir->h.rank);
				if (own_stream && !rc)
					rc = ev_row_keyu(row, n++, is->stream);
				rc = rc ? rc : ev_row_key(row, n, cat_name[c]);
				if (rc)
					break;
				if (!stats) {
					row->val[0] = ic->sum;
					row->val[1] = total != 0 ? ic->sum / total : NAN;
					continue;
				}
				struct ev_dist *d = &is->d[c][0];
				row->val[0] = (double)d->n;
				row->val[1] = d->n ? d->mean : NAN;
				row->val[2] = d->n > 1 ? ev_dist_std(d) : NAN;
				row->val[3] = d->n ? d->min : NAN;
				row->val[4] = ev_dist_quantile(d, 0.25);
				row->val[5] = ev_dist_quantile(d, 0.5);
				row->val[6] = ev_dist_quantile(d, 0.75);
				row->val[7] = d->n ? d->max : NAN;
			}
		}
	}
	return rc;
}

static void idle_free(struct ev_stats *s)
{
	struct idle *st = s->state;
	for (size_t i = 0; i < st->ranks.len; i++) {
		struct irank *ir = (struct irank *)st->ranks.data + i;
		for (size_t j = 0; j < ir->streams.len; j++)
			for (int c = 0; c < NCAT; c++)
				for (int k = 0; k < 3; k++)
					ev_dist_release(&((struct istream *)ir->streams.data)[j].d[c][k], &s->pool);
		ev_vec_free(&ir->streams);
		hta_rank_free(&ir->h);
	}
	ev_vec_free(&st->ranks);
	ev_map_free(&st->idx);
}

static int idle_explain(const struct ev_stats_opts *o, const struct ev_stats_counts *c, char *buf, size_t n)
{
	(void)o;
	if (!c->gpu || c->selected)
		return 0;
	snprintf(buf, n, "none of %llu GPU events is kept by HTA's last-ProfilerStep filter: empty table",
	         (unsigned long long)c->gpu);
	return 1;
}

static const char *const idle_options[] = { "table", "consecutive-kernel-delay", "exact-limit", NULL };

static const struct ev_stats_subtable idle_tables[] = {
	{ "breakdown", "get_idle_time_breakdown", NULL },
	{ "intervals", "idle_interval_stats", NULL },
	{ NULL, NULL, NULL },
};

const struct ev_stats_analysis ev_stats_analysis_idle = {
	.name = "idle",
	.sheet = "get_idle_time_breakdown",
	.help = "HTA's idle time breakdown: per rank and GPU stream the gaps\n"
	        "between kernels as host_wait (launched after the previous\n"
	        "kernel ended), kernel_wait (gap under --consecutive-kernel-\n"
	        "delay) and other, with their share; --table=intervals gives\n"
	        "the gaps' count, mean, std, min, quartiles and max",
	.options = idle_options,
	.tables = idle_tables,
	.default_by = "config",
	.state_size = sizeof(struct idle),
	.init = idle_init,
	.rec = idle_rec,
	.finish = idle_finish,
	.rows = idle_rows,
	.free = idle_free,
	.explain = idle_explain,
};
