/* SPDX-License-Identifier: MIT */
/*
 * flex-stats - acelyzer's tables from a flex2ev stream, as real CSV
 *
 * One streaming pass over the records; memory per (rank, kernel name),
 * per (rank, category), per rank and per open collective, never per event
 * (medians are exact while the samples fit --max-samples, then from a
 * sketch within 0.5%).
 */
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ev.h"
#include "ev/flex.h"

enum table { T_SUMMARY, T_CATEGORIES, T_STATS, T_ACTIVE, T_COLLS, T_CLASSES };

struct opts {
	struct ev_cli cli;
	enum table table;
	const char *logs[64];
	int nlogs;
	uint64_t core_khz;
	uint64_t max_samples;
	char **inputs;
	int ninputs;
};

static void usage(FILE *f)
{
	fputs(
"Usage: flex-stats TABLE [options] [FILE...]\n"
"acelyzer's tables from an ev stream written by flex2ev (any order for\n"
"summary/categories/classes; time order for colls), as comma-separated CSV with\n"
"one header row, ranks ascending.  Times in microseconds.\n"
"\n"
"TABLE:\n"
"  summary      acelyzer's _summary.csv: per rank, every kernel ('Cmpt Exec')\n"
"               with numbers in its name replaced by [N]: rank,name,calls,\n"
"               total_us,mean_us,median_us,min_us,max_us,stdev_us,percent\n"
"               (percent of the rank's kernel time), largest first\n"
"  categories   acelyzer's _categories.csv: per rank and compiler category\n"
"               (from -c logs): rank,phase,category,kernel_time_us,frac_time,\n"
"               calls,ideal_time_us,ideal_cycles,frac_ideal,pt_util; StcdpHbm\n"
"               and other always present, then a Total row\n"
"  stats        acelyzer's _stats_summary.csv: rank,elapsed_time_us,\n"
"               comp_active_time_us,comm_active_time_us,comp_active_pct,\n"
"               comm_active_pct (compute = kernels, comm = collective spans)\n"
"  active       acelyzer's _active.csv: rank,kernel_time_us,elapsed_time_us,\n"
"               start_us,end_us,active_pct (first kernel start to last end)\n"
"  colls        one row per collective, across its ranks: collective,seq,kind,\n"
"               nranks,ranks_seen,bytes,coll_data_bytes,start_us,end_us,\n"
"               span_us,bandwidth_gbps (coll_data_bytes = 2(N-1) x bytes, as\n"
"               acelyzer's Coll_Bandwidth)\n"
"  classes      rank,class,events,total_us: acelyzer's event classes\n"
"\n"
"Options:\n"
"  -o, --output=FILE      write to FILE (via a temporary name) [stdout]\n"
"  -c, --compiler-log=LOG a compiler log with Perf Summary tables (repeatable;\n"
"                         the first definition of a kernel wins)\n"
"      --freq=SOC[:CORE]  clocks in MHz; CORE converts ideal cycles [1000:1100]\n"
"      --max-samples=N    durations kept exactly for medians [8000000]\n"
"  -q, --quiet            no warnings\n"
"  -h, --help             show this help and exit\n"
"  -V, --version          show version and exit\n"
"\n"
"Exit status:\n"
"  0  success\n"
"  1  data or I/O error (bad stream, unreadable log, no records for the table)\n"
"  2  usage error\n"
"\n"
"Example:\n"
"  flex2ev job.json | flex-stats categories -c compile.log\n",
	f);
}

struct kstat { uint32_t rank; uint64_t name; uint64_t sum_ns; struct ev_dist d; };
struct cstat { uint32_t rank; int cat; double time, ideal; uint64_t calls; };
struct rstat {
	uint32_t rank; int have, have_k; int64_t first, last, kfirst, klast;
	double comp, comm, ktime;
};
struct coll_open { uint64_t comm; uint32_t seq, nranks, seen; uint64_t bytes; int64_t start, end; unsigned kind; };

struct state {
	struct opts *o;
	ev_strtab *st;
	struct ev_dist_pool pool;
	struct ev_map kix; struct ev_vec ks;     /* (rank, normalised name) */
	struct ev_map cix; struct ev_vec cs;     /* (rank, category) */
	struct ev_map rix; struct ev_vec rs;     /* rank */
	struct ev_map oix; struct ev_vec os;     /* (comm, seq) */
	struct ev_map catcache;                  /* kernel name id -> category index + 1 (0: other) */
	uint64_t clsn[EV_FC_COUNT]; /* scratch */
	struct ev_flex_complog cl;
	char **cats; size_t ncats;               /* 0 StcdpHbm, 1 other, then the logs' categories */
	ev_table *t;
	uint64_t records, kernels, missing, ideal_clipped, colls_incomplete;
	char *nbuf; size_t ncap;
};

static uint64_t key2(uint64_t a, uint64_t b)
{
	unsigned char k[16];
	ev_put64(k, a);
	ev_put64(k + 8, b);
	uint64_t h = ev_hash64(k, sizeof k);
	return h ? h : 1;
}

static void *slot(struct ev_map *m, struct ev_vec *v, uint64_t key, int *fresh)
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

static struct rstat *rank_of(struct state *s, uint32_t rank)
{
	int fresh;
	struct rstat *r = slot(&s->rix, &s->rs, (uint64_t)rank + 1, &fresh);
	if (r && fresh)
		r->rank = rank;
	return r;
}

static int add_cat(struct state *s, const char *name)
{
	for (size_t i = 0; i < s->ncats; i++)
		if (!strcmp(s->cats[i], name))
			return (int)i;
	char **c = realloc(s->cats, (s->ncats + 1) * sizeof *c);
	if (!c)
		return -1;
	s->cats = c;
	if (!(c[s->ncats] = strdup(name)))
		return -1;
	return (int)s->ncats++;
}

static double us(double ns) { return ns / 1000.0; }

static int is_exec(const char *n, size_t len)
{
	return len >= 9 && memmem(n, len, "Cmpt Exec", 9) != NULL;
}

static int on_kernel(struct state *s, const struct ev_rec *r, const char *n, size_t len)
{
	int fresh;
	struct rstat *rs = rank_of(s, r->rank);
	if (!rs)
		return EV_ERR_NOMEM;
	if (!is_exec(n, len))
		return EV_OK;
	s->kernels++;
	rs->comp += (double)r->dur;
	rs->ktime += (double)r->dur;
	if (!rs->have_k || r->ts < rs->kfirst)
		rs->kfirst = r->ts;
	if (!rs->have_k || ev_rec_end(r) > rs->klast)
		rs->klast = ev_rec_end(r);
	rs->have_k = 1;
	if (s->o->table == T_SUMMARY) {
		if (len * 4 + 8 > s->ncap) {
			char *b = realloc(s->nbuf, len * 4 + 8);
			if (!b)
				return EV_ERR_NOMEM;
			s->nbuf = b;
			s->ncap = len * 4 + 8;
		}
		size_t nl = ev_flex_norm_name(n, len, s->nbuf);
		uint64_t id;
		int rc = ev_strtab_intern(s->st, s->nbuf, nl, &id);
		if (rc != EV_OK)
			return rc;
		struct kstat *k = slot(&s->kix, &s->ks, key2(r->rank, id), &fresh);
		if (!k)
			return EV_ERR_NOMEM;
		if (fresh) {
			k->rank = r->rank;
			k->name = id;
			ev_dist_init(&k->d);
		}
		k->sum_ns += r->dur; /* exact: the mean of integer ns rounds as acelyzer's exact mean does */
		return ev_dist_add(&k->d, &s->pool, (double)r->dur / 1000.0, r->ts);
	}
	if (s->o->table == T_CATEGORIES) {
		uint64_t *cc = ev_map_get(&s->catcache, r->name);
		uint64_t ci;
		const struct ev_flex_kernel_info *ki = NULL;
		if (cc) {
			ci = *cc;
		} else {
			ki = ev_flex_complog_find(&s->cl, n, len);
			int c = ki ? add_cat(s, ki->category) : 1;
			if (c < 0)
				return EV_ERR_NOMEM;
			ci = (uint64_t)c + 1;
			if (ki)
				ci |= (uint64_t)(ki - s->cl.k + 1) << 32;
			if (ev_map_put(&s->catcache, r->name, ci))
				return EV_ERR_NOMEM;
		}
		int cat = (int)(ci & 0xFFFFFFFF) - 1;
		if (ci >> 32)
			ki = &s->cl.k[(ci >> 32) - 1];
		else
			s->missing++;
		double ideal = ki ? (double)ki->ideal * 1000.0 / (double)s->o->core_khz : 0.0; /* us */
		double dur = (double)r->dur / 1000.0;
		if (ideal > dur) { /* an ideal longer than observed is not counted (acelyzer) */
			ideal = 0;
			s->ideal_clipped++;
		}
		struct cstat *c = slot(&s->cix, &s->cs, key2(r->rank, (uint64_t)cat + 1), &fresh);
		if (!c)
			return EV_ERR_NOMEM;
		if (fresh) {
			c->rank = r->rank;
			c->cat = cat;
		}
		c->time += dur;
		c->ideal += ideal;
		c->calls++;
	}
	return EV_OK;
}

static int coll_row(struct state *s, const struct coll_open *c)
{
	int rc;
	size_t gl = 0;
	const char *g = ev_strtab_get(s->st, c->comm, &gl);
	char name[512];
	snprintf(name, sizeof name, "%.*s", (int)gl, g ? g : "");
	uint64_t np = c->nranks ? c->nranks : c->seen;
	uint64_t data = np > 1 ? 2 * (np - 1) * c->bytes : 0;
	double span = (double)(c->end - c->start);
	if (c->nranks && c->seen < c->nranks)
		s->colls_incomplete++;
	if ((rc = ev_table_str(s->t, name)) || (rc = ev_table_u64(s->t, c->seq)) ||
	    (rc = ev_table_str(s->t, ev_coll_name(c->kind) ? ev_coll_name(c->kind) : "unknown")) ||
	    (rc = ev_table_u64(s->t, c->nranks)) || (rc = ev_table_u64(s->t, c->seen)) ||
	    (rc = ev_table_u64(s->t, c->bytes)) || (rc = ev_table_u64(s->t, data)) ||
	    (rc = ev_table_f64(s->t, us((double)c->start))) || (rc = ev_table_f64(s->t, us((double)c->end))) ||
	    (rc = ev_table_f64(s->t, us(span))) ||
	    (rc = ev_table_f64(s->t, span > 0 ? round((double)data / span * 1000.0) / 1000.0 : 0)))
		return rc;
	return EV_OK;
}

static int on_coll(struct state *s, const struct ev_rec *r)
{
	struct rstat *rs = rank_of(s, r->rank);
	if (!rs)
		return EV_ERR_NOMEM;
	rs->comm += (double)r->dur;
	if (s->o->table != T_COLLS)
		return EV_OK;
	int fresh;
	struct coll_open *c = slot(&s->oix, &s->os, key2(r->comm, r->seq), &fresh);
	if (!c)
		return EV_ERR_NOMEM;
	if (fresh || !c->comm) {
		memset(c, 0, sizeof *c);
		c->comm = r->comm;
		c->seq = r->seq;
		c->nranks = r->aux;
		c->kind = r->op;
		c->start = r->ts;
		c->end = ev_rec_end(r);
	}
	c->seen++;
	if (r->ts < c->start)
		c->start = r->ts;
	if (ev_rec_end(r) > c->end)
		c->end = ev_rec_end(r);
	if (r->bytes > c->bytes)
		c->bytes = r->bytes;
	if (c->nranks && c->seen >= c->nranks) {
		int rc = coll_row(s, c);
		c->comm = 0; /* the slot is reused by the next instance */
		return rc;
	}
	return EV_OK;
}

static int on_record(struct state *s, const struct ev_rec *r)
{
	s->records++;
	struct rstat *rs = rank_of(s, r->rank);
	if (!rs)
		return EV_ERR_NOMEM;
	if (r->type != EV_COUNTER && r->type != EV_DEP && r->type != EV_CHAN) {
		if (!rs->have || r->ts < rs->first)
			rs->first = r->ts;
		if (!rs->have || ev_rec_end(r) > rs->last)
			rs->last = ev_rec_end(r);
		rs->have = 1;
	}
	size_t len = 0;
	const char *n = ev_strtab_get(s->st, r->name, &len);
	if (!n)
		n = "";
	if (s->o->table == T_CLASSES && r->type != EV_COLL) {
		size_t sl = 0;
		const char *sig = ev_strtab_get(s->st, r->sig, &sl);
		unsigned cls = EV_FC_OTHER;
		size_t w = sig ? strcspn(sig, " ") : 0;
		if (!sig || ev_flex_class_parse(sig, w < sl ? w : sl, &cls) != EV_OK)
			cls = EV_FC_OTHER;
		int fresh;
		struct cstat *c = slot(&s->cix, &s->cs, key2(r->rank, (uint64_t)cls + 1), &fresh);
		if (!c)
			return EV_ERR_NOMEM;
		if (fresh) {
			c->rank = r->rank;
			c->cat = (int)cls;
		}
		c->calls++;
		c->time += (double)r->dur / 1000.0;
	}
	if (r->type == EV_KERNEL)
		return on_kernel(s, r, n, len);
	if (r->type == EV_COLL)
		return on_coll(s, r);
	return EV_OK;
}

static int filter_rec(void *ctx, ev_reader *r, struct ev_rec *rec)
{
	(void)r;
	return on_record(ctx, rec);
}

static int cmp_rank_u32(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
	return x < y ? -1 : x > y;
}

/* Sorted list of the ranks seen. */
static uint32_t *ranks_sorted(struct state *s)
{
	uint32_t *r = malloc((s->rs.len ? s->rs.len : 1) * sizeof *r);
	if (!r)
		return NULL;
	for (size_t i = 0; i < s->rs.len; i++)
		r[i] = ((struct rstat *)s->rs.data)[i].rank;
	qsort(r, s->rs.len, sizeof *r, cmp_rank_u32);
	return r;
}

static struct kstat **g_sort_ks;
static int cmp_k(const void *a, const void *b)
{
	const struct kstat *x = *(struct kstat *const *)a, *y = *(struct kstat *const *)b;
	(void)g_sort_ks;
	if (x->rank != y->rank)
		return x->rank < y->rank ? -1 : 1;
	if (x->sum_ns != y->sum_ns)
		return x->sum_ns > y->sum_ns ? -1 : 1;
	return 0;
}

static int write_summary(struct state *s)
{
	size_t n = s->ks.len;
	struct kstat **v = malloc((n ? n : 1) * sizeof *v);
	int rc = EV_OK;
	if (!v)
		return EV_ERR_NOMEM;
	for (size_t i = 0; i < n; i++)
		v[i] = (struct kstat *)s->ks.data + i;
	qsort(v, n, sizeof *v, cmp_k);
	for (size_t i = 0; i < n && !rc; i++) {
		struct kstat *k = v[i];
		struct rstat *rs = rank_of(s, k->rank);
		double tot = rs->ktime / 1000.0;
		const char *nm = ev_strtab_get(s->st, k->name, NULL);
		double std = ev_dist_std(&k->d);
		if ((rc = ev_table_u64(s->t, k->rank)) || (rc = ev_table_str(s->t, nm ? nm : "")) ||
		    (rc = ev_table_u64(s->t, k->d.n)) || (rc = ev_table_f64(s->t, (double)k->sum_ns / 1000.0)) ||
		    (rc = ev_table_f64(s->t, round((double)k->sum_ns / (double)k->d.n) / 1000.0)) ||
		    (rc = ev_table_f64(s->t, round(ev_dist_quantile(&k->d, 0.5) * 1000) / 1000)) ||
		    (rc = ev_table_f64(s->t, k->d.min)) || (rc = ev_table_f64(s->t, k->d.max)) ||
		    (rc = ev_table_f64(s->t, round(std * 1000) / 1000)) ||
		    (rc = ev_table_f64(s->t, tot > 0 ? round((double)k->sum_ns / 1000.0 / tot * 10000) / 100 : 0)))
			break;
	}
	free(v);
	return rc;
}

static double r4(double x) { return round(x * 10000) / 10000; }

static int cat_row(struct state *s, uint32_t rank, const char *cat, double time, double tot, uint64_t calls,
                   double ideal, double ideal_tot)
{
	int rc;
	uint64_t icyc = (uint64_t)llround(ideal * (double)s->o->core_khz / 1000.0);
	if ((rc = ev_table_u64(s->t, rank)) || (rc = ev_table_str(s->t, "UNKN")) || (rc = ev_table_str(s->t, cat)) ||
	    (rc = ev_table_f64(s->t, round(time * 1000) / 1000)) || (rc = ev_table_f64(s->t, tot > 0 ? r4(time / tot) : 0)) ||
	    (rc = ev_table_u64(s->t, calls)) || (rc = ev_table_f64(s->t, r4(ideal))) || (rc = ev_table_u64(s->t, icyc)) ||
	    (rc = ev_table_f64(s->t, ideal_tot > 0 ? r4(ideal / ideal_tot) : 0)) ||
	    (rc = ev_table_f64(s->t, time > 0 ? r4(ideal / time) : 0)))
		return rc;
	return EV_OK;
}

static int write_categories(struct state *s, const uint32_t *ranks)
{
	int rc = EV_OK;
	size_t nc = s->ncats;
	struct { double time, ideal; uint64_t calls; size_t order; } *row = calloc(nc ? nc : 1, sizeof *row);
	size_t *ord = malloc((nc ? nc : 1) * sizeof *ord);
	if (!row || !ord) {
		free(row);
		free(ord);
		return EV_ERR_NOMEM;
	}
	for (size_t ri = 0; ri < s->rs.len && !rc; ri++) {
		uint32_t rank = ranks[ri];
		double tot = 0, itot = 0;
		uint64_t calls = 0;
		memset(row, 0, nc * sizeof *row);
		for (size_t i = 0; i < s->cs.len; i++) {
			struct cstat *c = (struct cstat *)s->cs.data + i;
			if (c->rank != rank)
				continue;
			row[c->cat].time = c->time;
			row[c->cat].ideal = c->ideal;
			row[c->cat].calls = c->calls;
			tot += c->time;
			itot += c->ideal;
			calls += c->calls;
		}
		if (!calls)
			continue; /* a rank without kernels has no category table */
		/* acelyzer's order: kernel time ascending, ties in first-seen order. */
		for (size_t i = 0; i < nc; i++) {
			size_t j = i;
			while (j > 0 && row[ord[j - 1]].time > row[i].time) {
				ord[j] = ord[j - 1];
				j--;
			}
			ord[j] = i;
		}
		for (size_t i = 0; i < nc && !rc; i++)
			rc = cat_row(s, rank, s->cats[ord[i]], row[ord[i]].time, tot, row[ord[i]].calls, row[ord[i]].ideal, itot);
		if (!rc)
			rc = cat_row(s, rank, "Total", tot, tot, calls, itot, itot);
	}
	free(row);
	free(ord);
	return rc;
}

static int write_ranks(struct state *s, const uint32_t *ranks)
{
	int rc = EV_OK;
	for (size_t i = 0; i < s->rs.len && !rc; i++) {
		struct rstat *r = rank_of(s, ranks[i]);
		if (s->o->table == T_STATS) {
			double el = (double)(r->last - r->first);
			if ((rc = ev_table_u64(s->t, r->rank)) || (rc = ev_table_f64(s->t, us(el))) ||
			    (rc = ev_table_f64(s->t, us(r->comp))) || (rc = ev_table_f64(s->t, us(r->comm))) ||
			    (rc = ev_table_f64(s->t, el > 0 ? round(r->comp / el * 10000) / 100 : 0)) ||
			    (rc = ev_table_f64(s->t, el > 0 ? round(r->comm / el * 10000) / 100 : 0)))
				break;
		} else if (r->have_k) {
			double el = (double)(r->klast - r->kfirst);
			if ((rc = ev_table_u64(s->t, r->rank)) || (rc = ev_table_f64(s->t, us(r->ktime))) ||
			    (rc = ev_table_f64(s->t, us(el))) || (rc = ev_table_f64(s->t, us((double)r->kfirst))) ||
			    (rc = ev_table_f64(s->t, us((double)r->klast))) ||
			    (rc = ev_table_f64(s->t, el > 0 ? round(r->ktime / el * 10000) / 100 : 0)))
				break;
		}
	}
	return rc;
}

static int write_classes(struct state *s, const uint32_t *ranks)
{
	int rc = EV_OK;
	for (size_t ri = 0; ri < s->rs.len && !rc; ri++)
		for (unsigned c = 0; c < EV_FC_COUNT && !rc; c++) {
			uint64_t *ix = ev_map_get(&s->cix, key2(ranks[ri], (uint64_t)c + 1));
			if (!ix)
				continue;
			struct cstat *cs = (struct cstat *)s->cs.data + (*ix - 1);
			if ((rc = ev_table_u64(s->t, ranks[ri])) || (rc = ev_table_str(s->t, ev_flex_class_name(c))) ||
			    (rc = ev_table_u64(s->t, cs->calls)) || (rc = ev_table_f64(s->t, round(cs->time * 1000) / 1000)))
				break;
		}
	return rc;
}

static int run(struct opts *o)
{
	static const char *const cols[][12] = {
		[T_SUMMARY] = { "rank", "name", "calls", "total_us", "mean_us", "median_us", "min_us", "max_us", "stdev_us", "percent" },
		[T_CATEGORIES] = { "rank", "phase", "category", "kernel_time_us", "frac_time", "calls", "ideal_time_us",
		                   "ideal_cycles", "frac_ideal", "pt_util" },
		[T_STATS] = { "rank", "elapsed_time_us", "comp_active_time_us", "comm_active_time_us", "comp_active_pct",
		              "comm_active_pct" },
		[T_ACTIVE] = { "rank", "kernel_time_us", "elapsed_time_us", "start_us", "end_us", "active_pct" },
		[T_COLLS] = { "collective", "seq", "kind", "nranks", "ranks_seen", "bytes", "coll_data_bytes", "start_us",
		              "end_us", "span_us", "bandwidth_gbps" },
		[T_CLASSES] = { "rank", "class", "events", "total_us" },
	};
	struct state s;
	ev_output *out = NULL;
	int rc, ex = 0;
	memset(&s, 0, sizeof s);
	s.o = o;
	s.st = ev_strtab_new();
	s.pool.budget = o->max_samples;
	ev_map_init(&s.kix); ev_vec_init(&s.ks, sizeof(struct kstat));
	ev_map_init(&s.cix); ev_vec_init(&s.cs, sizeof(struct cstat));
	ev_map_init(&s.rix); ev_vec_init(&s.rs, sizeof(struct rstat));
	ev_map_init(&s.oix); ev_vec_init(&s.os, sizeof(struct coll_open));
	ev_map_init(&s.catcache);
	if (!s.st || add_cat(&s, "StcdpHbm") != 0 || add_cat(&s, "other") != 1) {
		ex = ev_cli_error(&o->cli, "out of memory");
		goto done;
	}
	for (int i = 0; i < o->nlogs; i++) {
		rc = ev_flex_complog_read(&s.cl, o->logs[i]);
		if (rc == EV_ERR_FORMAT) {
			ex = ev_cli_error(&o->cli, "%s: no compiler \"Perf Summary / Ideal/Total Cycles\" table found", o->logs[i]);
			goto done;
		}
		if (rc != EV_OK) {
			ex = ev_cli_input_error(&o->cli, o->logs[i], rc);
			goto done;
		}
	}
	for (size_t i = 0; i < s.cl.n; i++)
		if (add_cat(&s, s.cl.k[i].category) < 0) {
			ex = ev_cli_error(&o->cli, "out of memory");
			goto done;
		}
	if ((rc = ev_output_open(&out, o->cli.output)) != EV_OK) {
		ex = ev_cli_file_error(&o->cli, o->cli.output, rc);
		goto done;
	}
	size_t ncols = 0;
	while (ncols < 12 && cols[o->table][ncols])
		ncols++;
	if ((rc = ev_table_open(&s.t, out, EV_TABLE_CSV, cols[o->table], ncols)) != EV_OK) {
		ex = ev_cli_file_error(&o->cli, o->cli.output, rc);
		goto done;
	}
	struct ev_filter flt = { .flags = EV_FILTER_SKIP_TEXT, .rec = filter_rec };
	if ((ex = ev_filter_run(&o->cli, o->inputs, (size_t)o->ninputs, s.st, NULL, &flt, &s)) != 0)
		goto done;
	uint32_t *ranks = ranks_sorted(&s);
	if (!ranks) {
		ex = ev_cli_error(&o->cli, "out of memory");
		goto done;
	}
	switch (o->table) {
	case T_SUMMARY: rc = write_summary(&s); break;
	case T_CATEGORIES: rc = write_categories(&s, ranks); break;
	case T_STATS: case T_ACTIVE: rc = write_ranks(&s, ranks); break;
	case T_CLASSES: rc = write_classes(&s, ranks); break;
	case T_COLLS: {
		/* Collectives not seen on all their ranks: their rows now. */
		struct coll_open *c = s.os.data;
		for (size_t i = 0; i < s.os.len && !rc; i++)
			if (c[i].comm)
				rc = coll_row(&s, &c[i]);
		break;
	}
	}
	free(ranks);
	if (rc == EV_OK)
		rc = ev_table_close(s.t);
	s.t = NULL;
	if (rc != EV_OK) {
		ex = ev_cli_file_error(&o->cli, o->cli.output, rc);
		goto done;
	}
	/* Never an empty table without a word. */
	if (!s.records)
		ex = ev_cli_error(&o->cli, "no records in the input: nothing to tabulate");
	else if ((o->table == T_SUMMARY || o->table == T_CATEGORIES || o->table == T_ACTIVE) && !s.kernels)
		ex = ev_cli_error(&o->cli, "no 'Cmpt Exec' kernels in %llu records: no %s table (is this a flex2ev stream?)",
		                  (unsigned long long)s.records, o->table == T_SUMMARY ? "summary" :
		                  o->table == T_ACTIVE ? "active" : "categories");
	else if (o->table == T_COLLS && !s.os.len)
		ev_cli_warn(&o->cli, "no collective spans (coll records) in %llu records: the table is empty",
		            (unsigned long long)s.records);
	if (!ex && o->table == T_CATEGORIES) {
		if (!o->nlogs)
			ev_cli_warn(&o->cli, "no compiler log (-c): every kernel is in category 'other'");
		else if (s.missing)
			ev_cli_warn(&o->cli, "%llu kernel(s) not in the compiler tables: counted as 'other'",
			            (unsigned long long)s.missing);
		if (s.ideal_clipped)
			ev_cli_warn(&o->cli, "%llu kernel(s) ran shorter than their ideal time: ideal not counted (check --freq)",
			            (unsigned long long)s.ideal_clipped);
	}
	if (!ex && o->table == T_COLLS && s.colls_incomplete)
		ev_cli_warn(&o->cli, "%llu collective(s) not seen on all their ranks", (unsigned long long)s.colls_incomplete);
	if (!ex && s.pool.sketched)
		ev_cli_warn(&o->cli, "more than --max-samples durations: medians of %llu kernel name(s) are within 0.5%%",
		            (unsigned long long)s.pool.sketched);
done:
	if (s.t && ev_table_close(s.t) != EV_OK && !ex)
		ex = 1;
	if (out) {
		if (ex)
			ev_output_abort(out);
		else if ((rc = ev_output_close(out)) != EV_OK)
			ex = ev_cli_file_error(&o->cli, o->cli.output, rc);
	}
	for (size_t i = 0; i < s.ks.len; i++)
		ev_dist_free(&((struct kstat *)s.ks.data)[i].d);
	ev_map_free(&s.kix); ev_vec_free(&s.ks);
	ev_map_free(&s.cix); ev_vec_free(&s.cs);
	ev_map_free(&s.rix); ev_vec_free(&s.rs);
	ev_map_free(&s.oix); ev_vec_free(&s.os);
	ev_map_free(&s.catcache);
	for (size_t i = 0; i < s.ncats; i++)
		free(s.cats[i]);
	free(s.cats);
	free(s.nbuf);
	ev_flex_complog_free(&s.cl);
	ev_strtab_free(s.st);
	return ex;
}

static const struct option longopts[] = {
	EV_CLI_COMMON_LONG,
	{ "compiler-log", required_argument, NULL, 'c' },
	{ "freq", required_argument, NULL, 1 },
	{ "max-samples", required_argument, NULL, 2 },
	{ NULL, 0, NULL, 0 },
};

/* Options until the first non-option word (with "+") or all of them;
 * -1 to go on, else the exit status (0 after --help or --version). */
static int take_options(struct opts *o, int argc, char **argv, const char *shortopts)
{
	int c;
	while ((c = getopt_long(argc, argv, shortopts, longopts, NULL)) != -1) {
		switch (ev_cli_common(&o->cli, c, optarg)) {
		case EV_CLI_HANDLED: continue;
		case EV_CLI_WANT_HELP: usage(stdout); return ev_cli_finish(&o->cli, 0);
		case EV_CLI_DONE: return ev_cli_finish(&o->cli, 0);
		default: break;
		}
		switch (c) {
		case 'c':
			if (o->nlogs == 64)
				return ev_cli_usage_error(&o->cli, "at most 64 compiler logs");
			o->logs[o->nlogs++] = optarg;
			break;
		case 1: {
			const char *core = strchr(optarg, ':');
			int64_t v;
			if (!core || ev_parse_decimal_scaled(core + 1, strlen(core + 1), 3, &v) || v <= 0)
				return ev_cli_usage_error(&o->cli, "--freq: expected SOC:CORE in MHz (e.g. 1000:1100), got '%s'", optarg);
			o->core_khz = (uint64_t)v;
			break;
		}
		case 2:
			if (ev_parse_u64(optarg, &o->max_samples))
				return ev_cli_usage_error(&o->cli, "--max-samples: not a number: '%s'", optarg);
			break;
		default:
			return ev_cli_try_help(&o->cli);
		}
	}
	return -1;
}

int main(int argc, char **argv)
{
	static const char *const tables[] = { "summary", "categories", "stats", "active", "colls", "classes", NULL };
	struct opts o;
	int rc;
	memset(&o, 0, sizeof o);
	ev_cli_init(&o.cli, "flex-stats");
	o.core_khz = 1100000;
	o.max_samples = 8000000;
	if ((rc = take_options(&o, argc, argv, "+" EV_CLI_COMMON_SHORT "c:")) >= 0)
		return rc;
	if (optind >= argc)
		return ev_cli_usage_error(&o.cli, "no TABLE given (summary, categories, stats, active, colls, classes)");
	unsigned t;
	if (ev_cli_word(&o.cli, "TABLE", argv[optind], tables, &t))
		return 2;
	o.table = (enum table)t;
	/* Options may follow TABLE and the files: scan again from TABLE on
	 * (optind 0 re-initialises GNU getopt, which permutes). */
	int sargc = argc - optind;
	char **sargv = argv + optind;
	optind = 0;
	if ((rc = take_options(&o, sargc, sargv, EV_CLI_COMMON_SHORT "c:")) >= 0)
		return rc;
	if (o.nlogs && o.table != T_CATEGORIES)
		return ev_cli_usage_error(&o.cli, "-c applies to the categories table");
	o.inputs = sargv + optind;
	o.ninputs = sargc - optind;
	ev_cli_cleanup_on_signal(NULL);
	return ev_cli_finish(&o.cli, run(&o));
}
