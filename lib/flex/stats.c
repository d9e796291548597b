/* SPDX-License-Identifier: MIT */
/*
 * stats.c - the ev_flex_stats object behind flex-stats: what every table
 * keeps per rank, the record dispatch to the chosen table (the other
 * tables keep nothing), and its rows at the end with ranks ascending.
 * The tables themselves are stats_<table>.c.
 */
#include <stdlib.h>
#include <string.h>

#include "flex/stats_int.h"

const char *const ev_flex_table_names[EV_FLEX_NTABLES + 1] = {
	"summary", "categories", "stats", "active", "colls", "classes", "ts_analysis", "iterations", "power", NULL,
};

const char *const *ev_flex_table_cols(enum ev_flex_table t, size_t *n)
{
	/* ts_analysis: acelyzer's own column names, in its order. */
	static const char *const ts_cols[] = {
		"Calls", "TS2-1_Mean", "TS2-1_Median", "TS2-1_Min", "TS2-1_Max", "TS2-1_StDev", "TS3-2_Mean",
		"TS3-2_Median", "TS3-2_Min", "TS3-2_Max", "TS3-2_StDev", "TS4-3_Mean", "TS4-3_Median", "TS4-3_Min",
		"TS4-3_Max", "TS4-3_StDev", "TS5-4_Mean", "TS5-4_Median", "TS5-4_Min", "TS5-4_Max", "TS5-4_StDev",
		"pid", "Name",
	};
	if (t == EV_FLEX_TS_ANALYSIS) {
		*n = sizeof ts_cols / sizeof *ts_cols;
		return ts_cols;
	}
	static const char *const cols[EV_FLEX_NTABLES][12] = {
		[EV_FLEX_SUMMARY] = { "rank", "name", "calls", "total_us", "mean_us", "median_us", "min_us", "max_us",
		                      "stdev_us", "percent" },
		/* acelyzer's own names (times in us). */
		[EV_FLEX_CATEGORIES] = { "Pid", "Phase", "Category", "Kernel_Time", "Frac_Time", "Calls",
		                         "Ideal_Time", "Ideal_Cyc", "Frac_Ideal", "PT_Util" },
		/* acelyzer's own names: its stats_v2 metrics comp_duration,
		 * comp_active and comm_active. */
		[EV_FLEX_STATS] = { "pid", "elapsed_time", "comp_active_atime", "comm_active_atime",
		                    "comp_active_atime_perc", "comm_active_atime_perc" },
		[EV_FLEX_ACTIVE] = { "rank", "kernel_time_us", "elapsed_time_us", "start_us", "end_us", "active_pct" },
		[EV_FLEX_COLLS] = { "collective", "seq", "kind", "nranks", "ranks_seen", "bytes", "coll_data_bytes",
		                    "start_us", "end_us", "span_us", "bandwidth_gbps" },
		[EV_FLEX_CLASSES] = { "rank", "class", "events", "total_us" },
		/* acelyzer's ITSTATS names (pid, avg_iteration_time in us,
		 * iterations), then the word's length and the breaks. */
		[EV_FLEX_ITERATIONS] = { "pid", "avg_iteration_time", "iterations", "kernels_per_iteration",
		                         "restarts" },
		/* acelyzer's --power-stats line, per rank: its names, W and us. */
		[EV_FLEX_POWER] = { "pid", "period", "min_non_zero", "max", "mean_non_zero", "median_non_zero",
		                    "avg_total", "dur_total", "dur_non_zero" },
	};
	size_t k = 0;
	if ((unsigned)t >= EV_FLEX_NTABLES) {
		*n = 0;
		return cols[0];
	}
	while (k < 12 && cols[t][k])
		k++;
	*n = k;
	return cols[t];
}

uint64_t fs_key(uint64_t a, uint64_t b)
{
	unsigned char k[16];
	ev_put64(k, a);
	ev_put64(k + 8, b);
	uint64_t h = ev_hash64(k, sizeof k);
	return h ? h : 1;
}

void *fs_slot(struct ev_map *m, struct ev_vec *v, uint64_t key, int *fresh)
{
	uint64_t *ix = ev_map_get(m, key);
	*fresh = 0;
	if (ix)
		return (char *)v->data + (*ix - 1) * v->elem;
	void *p = ev_vec_push(v);
	if (!p || ev_map_put(m, key, v->len))
		return NULL;
	*fresh = 1;
	return p;
}

struct fs_rank *fs_rank(ev_flex_stats *s, uint32_t rank)
{
	int fresh;
	struct fs_rank *r = fs_slot(&s->rix, &s->rs, (uint64_t)rank + 1, &fresh);
	if (r && fresh)
		r->rank = rank;
	return r;
}

int ev_flex_stats_new(ev_flex_stats **sp, const struct ev_flex_stats_opts *o, ev_strtab *st, ev_table *out)
{
	ev_flex_stats *s = calloc(1, sizeof *s);
	*sp = s;
	if (!s)
		return EV_ERR_NOMEM;
	s->o = *o;
	s->st = st;
	s->t = out;
	s->pool.budget = o->max_samples;
	ev_map_init(&s->rix);
	ev_vec_init(&s->rs, sizeof(struct fs_rank));
	ev_map_init(&s->kix);
	ev_vec_init(&s->ks, sizeof(struct fs_kernel));
	ev_map_init(&s->gix);
	ev_vec_init(&s->gs, sizeof(struct fs_group));
	ev_map_init(&s->tix);
	ev_vec_init(&s->ts, sizeof(struct fs_ts));
	ev_map_init(&s->catcache);
	ev_map_init(&s->iix);
	ev_vec_init(&s->its, sizeof(struct fs_iter));
	ev_map_init(&s->pwix);
	ev_vec_init(&s->pws, sizeof(struct fs_power));
	ev_map_init(&s->phix);
	ev_vec_init(&s->phs, sizeof(struct fs_phist));
	if (o->table == EV_FLEX_CATEGORIES)
		return fs_categories_init(s);
	if (o->table == EV_FLEX_COLLS)
		return fs_colls_init(s);
	return EV_OK;
}

static int is_exec(const char *n, size_t len)
{
	return len >= 9 && memmem(n, len, "Cmpt Exec", 9) != NULL;
}

/* flex2ev's Power counter track (the id is remembered once seen). */
static int is_power(ev_flex_stats *s, const struct ev_rec *r)
{
	if (s->power_id)
		return r->name == s->power_id;
	size_t len = 0;
	const char *n = ev_strtab_get(s->st, r->name, &len);
	if (!n || len != 10 || memcmp(n, "Power (mW)", 10))
		return 0;
	s->power_id = r->name;
	return 1;
}

/* A 'Cmpt Exec' kernel: compute time of its rank, then its table. */
static int add_kernel(ev_flex_stats *s, struct fs_rank *rs, const struct ev_rec *r)
{
	size_t len = 0;
	const char *n = ev_strtab_get(s->st, r->name, &len);
	if (!n)
		n = "";
	if (!is_exec(n, len))
		return EV_OK;
	s->n.kernels++;
	rs->ktime += (double)r->dur;
	if (!rs->have_k || r->ts < rs->kfirst)
		rs->kfirst = r->ts;
	if (!rs->have_k || ev_rec_end(r) > rs->klast)
		rs->klast = ev_rec_end(r);
	rs->have_k = 1;
	if (s->o.table == EV_FLEX_SUMMARY)
		return fs_summary_add(s, r, n, len);
	if (s->o.table == EV_FLEX_CATEGORIES)
		return fs_categories_add(s, r, n, len);
	if (s->o.table == EV_FLEX_TS_ANALYSIS)
		return fs_ts_add(s, r, n, len);
	if (s->o.table == EV_FLEX_ITERATIONS)
		return fs_iter_add(s, r, n, len);
	if (s->o.table == EV_FLEX_POWER)
		return fs_power_kernel(s, r);
	return EV_OK;
}

static int add_rec(ev_flex_stats *s, const struct ev_rec *r)
{
	s->n.records++;
	struct fs_rank *rs = fs_rank(s, r->rank);
	if (!rs)
		return EV_ERR_NOMEM;
	int rc;
	if (s->o.table == EV_FLEX_CLASSES && r->type != EV_COLL && r->type != EV_COUNTER &&
	    (rc = fs_classes_add(s, r)) != EV_OK)
		return rc;
	if (r->type == EV_KERNEL)
		return add_kernel(s, rs, r);
	if (r->type == EV_COUNTER && s->o.table == EV_FLEX_POWER && is_power(s, r))
		return fs_power_sample(s, r);
	if (r->type == EV_COLL) {
		s->n.colls++;
		rs->comm += (double)r->dur;
		if (!rs->have_c || r->ts < rs->cfirst)
			rs->cfirst = r->ts;
		rs->have_c = 1;
		if (s->o.table == EV_FLEX_COLLS)
			return fs_colls_add(s, r);
	}
	return EV_OK;
}

int ev_flex_stats_add(ev_flex_stats *s, const struct ev_rec *r)
{
	/* A tsx record describes the kernel right after it: held for that
	 * record, no record of its own. */
	if (r->type == EV_TSX) {
		fs_ts_hold(s, r);
		return EV_OK;
	}
	/* An ideal record sits before a kernel's tsx: no table uses it (the
	 * categories table reads the compiler logs itself). */
	if (r->type == EV_IDEAL)
		return EV_OK;
	int rc = add_rec(s, r);
	s->have_tsx = 0;
	return rc;
}

static int cmp_u32(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
	return x < y ? -1 : x > y;
}

int ev_flex_stats_finish(ev_flex_stats *s)
{
	if (s->o.table == EV_FLEX_COLLS)
		return fs_colls_finish(s);
	if (s->o.table == EV_FLEX_SUMMARY)
		return fs_summary_write(s);
	if (s->o.table == EV_FLEX_TS_ANALYSIS)
		return fs_ts_write(s);
	uint32_t *ranks = malloc((s->rs.len ? s->rs.len : 1) * sizeof *ranks);
	if (!ranks)
		return EV_ERR_NOMEM;
	for (size_t i = 0; i < s->rs.len; i++)
		ranks[i] = ((struct fs_rank *)s->rs.data)[i].rank;
	qsort(ranks, s->rs.len, sizeof *ranks, cmp_u32);
	int rc = s->o.table == EV_FLEX_CATEGORIES ? fs_categories_write(s, ranks) :
	         s->o.table == EV_FLEX_CLASSES ? fs_classes_write(s, ranks) :
	         s->o.table == EV_FLEX_ITERATIONS ? fs_iter_write(s, ranks) :
	         s->o.table == EV_FLEX_POWER ? fs_power_write(s, ranks) : fs_ranks_write(s, ranks);
	free(ranks);
	return rc;
}

void ev_flex_stats_get_counts(const ev_flex_stats *s, struct ev_flex_stats_counts *c)
{
	*c = s->n;
	c->sketched = s->pool.sketched;
}

void ev_flex_stats_free(ev_flex_stats *s)
{
	if (!s)
		return;
	fs_summary_free(s);
	fs_ts_free(s);
	fs_categories_free(s);
	fs_iter_free(s);
	fs_power_free(s);
	ev_collmatch_free(s->cm);
	ev_map_free(&s->rix);
	ev_vec_free(&s->rs);
	ev_map_free(&s->kix);
	ev_vec_free(&s->ks);
	ev_map_free(&s->gix);
	ev_vec_free(&s->gs);
	ev_map_free(&s->tix);
	ev_vec_free(&s->ts);
	free(s);
}
