/* SPDX-License-Identifier: MIT */
/*
 * ev-stats - the summaries of TraceLens, HTA, aorta and acelyzer in one
 * streaming pass over an ev stream: GPU timeline, kernel statistics,
 * categories, op (GEMM) statistics, cross-rank collectives, variance across
 * configurations and comparisons between sources.
 *
 * Every analysis keeps one accumulator per group (distinct names, ranks,
 * sources), never per event; the only exception in size is the exact
 * quantile store, which is bounded by --exact-limit (see lib/analysis/dist.c).
 */
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ev.h"

enum sub { SUB_TIMELINE, SUB_KERNELS, SUB_CATEGORIES, SUB_OPS, SUB_COLL, SUB_VARIANCE, SUB_COMPARE };
static const char *const sub_names[] = { "timeline", "kernels", "categories", "ops", "coll", "variance", "compare" };

enum by_field { BY_SRC, BY_RANK, BY_STREAM, BY_SRCKEY };
#define MAX_BY 8

enum coll_table { CT_SUMMARY, CT_EACH, CT_STRAGGLERS };

struct opts {
	struct ev_cli cli;
	enum sub sub, what;          /* what: the analysis compared by `compare` */
	enum ev_table_fmt fmt;
	enum ev_rules rules;
	int by[MAX_BY];
	const char *by_key[MAX_BY]; /* #src key names for BY_SRCKEY */
	int nby, by_given;
	int unlinked, no_hta, float_us;
	int key_name;                /* variance: --key=name */
	unsigned class_mask;         /* variance/ops: kernel classes (bit per ev_kclass) */
	int class_given;
	uint64_t top;
	double threshold;            /* compare: percent */
	enum coll_table coll_table;
	uint64_t exact_limit;
	char **inputs;
	int ninputs;
};

static void usage(FILE *f)
{
	fputs(
"Usage: ev-stats SUBCOMMAND [options] [FILE...]\n"
"Summaries of an ev stream in one streaming pass.  FILE defaults to standard\n"
"input; several FILEs are read as one stream.  Records of one group (one\n"
"rank of one source) must be in time order, as every evkit converter and\n"
"ev-merge write them.\n"
"\n"
"Subcommands:\n"
"  timeline     per rank: TraceLens's GPU timeline rows (computation,\n"
"               exposed_comm, exposed_memcpy, busy, idle, total, total_comm,\n"
"               total_memcpy) in ms and percent, then HTA's temporal breakdown\n"
"               (hta_idle, hta_compute, hta_non_compute, hta_kernel)\n"
"  kernels      per kernel name: count, sum, mean, median, min, max, std, p90,\n"
"               p99 (microseconds) and share of kernel time\n"
"  categories   time per kernel class (gemm, comm, attention, ...)\n"
"  ops          per launching op signature: instances, kernel busy time per\n"
"               instance; GFLOPs, data moved and TFLOP/s for GEMMs with shapes\n"
"  coll         collectives matched across ranks by (communicator, seq):\n"
"               latency (fastest rank), skews, waits, algbw and busbw\n"
"  variance     per GEMM signature across sources and ranks: min, max,\n"
"               range (aorta's \"variance\"), std, CV, p50, p99\n"
"  compare      the first source is the baseline; each other source is\n"
"               compared with it (--what)\n"
"\n"
"Options:\n"
"      --by=LIST          group by: rank, src, stream, or keys of #src lines\n"
"                         (threads, channels, ...) [timeline: src,rank;\n"
"                         coll, variance: src; others: none]\n"
"      --rules=SET        classes: tracelens, tracelens-2025, hta [tracelens]\n"
"      --include-unlinked timeline: keep GPU events without a launching call\n"
"                         (TraceLens --include_unlinked_kernels; aorta's runs)\n"
"      --no-hta           timeline: leave out HTA's rows\n"
"      --tracelens-float  timeline: compute in microsecond doubles as TraceLens\n"
"                         does (its rounding included), not in exact ns\n"
"      --class=LIST       ops, variance: kernel classes [gemm]; 'all' for all\n"
"      --key=name|sig     variance: key instances by kernel name or by the\n"
"                         launching op signature [sig, name when none]\n"
"      --top=K            variance: the K widest ranges per group [all]\n"
"      --table=T          coll: summary, each (one row per collective,\n"
"                         streamed) or stragglers [summary]\n"
"      --what=A           compare: timeline, kernels, coll or ops [timeline]\n"
"      --threshold=PCT    compare: changes within PCT percent are Similar [1]\n"
"      --exact-limit=N    keep up to N samples in all for exact quantiles;\n"
"                         past it quantiles come from a sketch within 0.5%%\n"
"                         [16000000]\n"
"      --csv, --json, --md  output format [TSV]\n"
"  -o, --output=FILE      write to FILE (via a temporary name) [stdout]\n"
"  -q, --quiet            no warnings\n"
"  -h, --help             show this help and exit\n"
"  -V, --version          show version and exit\n"
"\n"
"Units: times in the column's unit (_us, _ms); bandwidths in GB/s where\n"
"GB = 2^30 bytes, as TraceLens computes them; percentages 0-100.  compare\n"
"prints diff = test - base and pct = 100 * diff / base for every metric, and\n"
"status Better/Worse/Similar from the metric's direction (times: lower is\n"
"better; bandwidths: higher is better).  See docs/ev-stats.md.\n"
"\n"
"Exit status:\n"
"  0  success\n"
"  1  data or I/O error (malformed, truncated or unordered input)\n"
"  2  usage error\n"
"\n"
"Example:\n"
"  kineto2ev rank*/trace.json.gz | ev-stats timeline --include-unlinked\n", f);
}

/* ------------------------------------------------------------------ */
/* Groups: a key tuple -> slot, kept in first-seen order.               */

struct gkey {
	uint32_t sg;     /* source group: src, or the #src key tuple's index */
	uint32_t rank;
	uint32_t stream;
	uint32_t pad;
	uint64_t k1, k2; /* analysis keys (name, sig, comm, ...) */
};

struct groups {
	struct ev_map idx; /* hash -> slot + 1 */
	struct ev_vec keys; /* struct gkey */
	struct ev_vec vals; /* analysis-specific */
};

static void groups_init(struct groups *g, size_t elem)
{
	ev_map_init(&g->idx);
	ev_vec_init(&g->keys, sizeof(struct gkey));
	ev_vec_init(&g->vals, elem);
}

static void groups_free(struct groups *g)
{
	ev_map_free(&g->idx);
	ev_vec_free(&g->keys);
	ev_vec_free(&g->vals);
}

/* A cheap mix of the key fields (collisions are resolved by comparing). */
static uint64_t gkey_hash(const struct gkey *k)
{
	uint64_t h = (uint64_t)k->sg * 0x9E3779B97F4A7C15ULL ^ (uint64_t)k->rank * 0xC2B2AE3D27D4EB4FULL ^
	             (uint64_t)k->stream * 0x165667B19E3779F9ULL ^ k->k1 * 0xD6E8FEB86659FD93ULL ^
	             k->k2 * 0xFF51AFD7ED558CCDULL;
	h ^= h >> 32;
	h *= 0xC4CEB9FE1A85EC53ULL;
	return h ^ (h >> 29);
}

/* The slot of key (created zeroed when new), or NULL on out of memory. */
static void *group_get(struct groups *g, const struct gkey *k, size_t *index)
{
	uint64_t h = gkey_hash(k);
	for (;; h++) {
		if (h == 0)
			continue;
		uint64_t *slot = ev_map_get(&g->idx, h);
		if (!slot)
			break;
		struct gkey *have = (struct gkey *)g->keys.data + (*slot - 1);
		if (memcmp(have, k, sizeof *k) == 0) {
			if (index)
				*index = *slot - 1;
			return (char *)g->vals.data + (*slot - 1) * g->vals.elem;
		}
	}
	struct gkey *nk = ev_vec_push(&g->keys);
	void *nv = nk ? ev_vec_push(&g->vals) : NULL;
	if (!nv || ev_map_put(&g->idx, h, g->keys.len) != EV_OK)
		return NULL;
	*nk = *k;
	if (index)
		*index = g->keys.len - 1;
	return nv;
}

#define GROUP_KEY(g, i) ((struct gkey *)(g)->keys.data + (i))
#define GROUP_VAL(g, i) ((void *)((char *)(g)->vals.data + (i) * (g)->vals.elem))

/* ------------------------------------------------------------------ */
/* Result rows: every aggregate table is built in memory (its size grows  */
/* with groups only), so that compare can join tables of two sources.    */

enum dir { D_NONE = 0, D_LOWER = -1, D_HIGHER = 1 };

struct colspec { const char *name; int numeric; int dir; };

struct rowset {
	struct colspec *keys, *vals;
	size_t nkeys, nvals;
	struct ev_vec rows; /* struct row */
};
struct row { char **key; double *val; uint32_t sg; };

static int rowset_init(struct rowset *rs, const struct colspec *keys, size_t nkeys, const struct colspec *vals, size_t nvals)
{
	memset(rs, 0, sizeof *rs);
	rs->keys = malloc((nkeys + 1) * sizeof *rs->keys);
	rs->vals = malloc((nvals + 1) * sizeof *rs->vals);
	if (!rs->keys || !rs->vals)
		return EV_ERR_NOMEM;
	memcpy(rs->keys, keys, nkeys * sizeof *keys);
	memcpy(rs->vals, vals, nvals * sizeof *vals);
	rs->nkeys = nkeys;
	rs->nvals = nvals;
	ev_vec_init(&rs->rows, sizeof(struct row));
	return EV_OK;
}

static struct row *rowset_add(struct rowset *rs, uint32_t sg)
{
	struct row *r = ev_vec_push(&rs->rows);
	if (!r)
		return NULL;
	r->sg = sg;
	r->key = calloc(rs->nkeys + 1, sizeof *r->key);
	r->val = calloc(rs->nvals + 1, sizeof *r->val);
	if (!r->key || !r->val)
		return NULL;
	return r;
}

static int row_key(struct row *r, size_t i, const char *s)
{
	r->key[i] = strdup(s ? s : "");
	return r->key[i] ? EV_OK : EV_ERR_NOMEM;
}

static int row_keyu(struct row *r, size_t i, uint64_t v)
{
	char b[24];
	snprintf(b, sizeof b, "%llu", (unsigned long long)v);
	return row_key(r, i, b);
}

static void rowset_free(struct rowset *rs)
{
	for (size_t i = 0; i < rs->rows.len; i++) {
		struct row *r = (struct row *)rs->rows.data + i;
		for (size_t k = 0; r->key && k < rs->nkeys; k++)
			free(r->key[k]);
		free(r->key);
		free(r->val);
	}
	ev_vec_free(&rs->rows);
	free(rs->keys);
	free(rs->vals);
}

static int cell_key(ev_table *t, const struct colspec *c, const char *s)
{
	if (c->numeric && *s) {
		int64_t v;
		if (ev_parse_i64(s, &v) == EV_OK)
			return ev_table_i64(t, v);
	}
	return ev_table_str(t, s);
}

static int rowset_print(const struct rowset *rs, ev_output *out, enum ev_table_fmt fmt)
{
	size_t n = rs->nkeys + rs->nvals;
	const char **cols = malloc((n + 1) * sizeof *cols);
	ev_table *t = NULL;
	int rc;
	if (!cols)
		return EV_ERR_NOMEM;
	for (size_t i = 0; i < rs->nkeys; i++)
		cols[i] = rs->keys[i].name;
	for (size_t i = 0; i < rs->nvals; i++)
		cols[rs->nkeys + i] = rs->vals[i].name;
	rc = ev_table_open(&t, out, fmt, cols, n);
	for (size_t i = 0; !rc && i < rs->rows.len; i++) {
		const struct row *r = (const struct row *)rs->rows.data + i;
		for (size_t k = 0; !rc && k < rs->nkeys; k++)
			rc = cell_key(t, &rs->keys[k], r->key[k]);
		for (size_t k = 0; !rc && k < rs->nvals; k++)
			rc = ev_table_f64(t, r->val[k]);
	}
	int rc2 = ev_table_close(t);
	free(cols);
	return rc ? rc : rc2;
}

/* ------------------------------------------------------------------ */
/* State shared by the analyses.                                        */

struct srcgrp { char *keys; uint32_t first_src; };

struct kstat { /* kernels, categories, variance, ops */
	struct ev_dist d;
	uint64_t name;          /* a kernel name of the group (variance/ops) */
	unsigned kclass;
	uint32_t min_rank, max_rank;
	uint32_t min_src, max_src;
	double gflop, mbytes;   /* ops: per instance, 0 unknown */
	struct ev_dist tflops, tbs;
};

struct tl { /* timeline per group */
	struct ev_cover tl;     /* classes: comp, comm, memcpy */
	struct ev_cover hta;    /* classes: all GPU events, HTA computation */
	int64_t last_ts, t0;
	int started;
};

struct copen { /* a collective not yet seen on every rank */
	struct gkey key;        /* sg, comm (k1), seq (k2) */
	uint32_t expect, seen, cap;
	uint8_t op, dtype;
	uint64_t bytes;
	uint32_t *rank;
	int64_t *ts, *end;
	uint64_t *dur;
	int live;
};

struct cstat { /* coll summary per (sg, op, dtype, bytes) */
	struct ev_dist lat, sskew, eskew, algbw, busbw;
	uint64_t nranks;
	double total_lat_us;
};

struct strag { uint64_t colls, last, first; double wait_us, dur_us; };

struct inst { /* ops: an open op instance */
	struct gkey key;        /* sg, rank, k1 = instance, k2 = sig */
	int64_t start, end;     /* current merged kernel interval */
	uint64_t busy;          /* merged time before it */
	uint64_t name;
	unsigned kclass;
	int live;
};

struct state {
	struct opts *o;
	ev_strtab *st;
	ev_meta *meta;
	struct ev_dist_pool pool;
	struct ev_vec srcgrps;          /* struct srcgrp */
	struct ev_map src_sg;           /* src + 1 -> sg + 1 */
	struct ev_map class_cache;      /* name id -> class + 1 (under --rules) */
	struct ev_map bucket_cache;     /* name id ^ type -> bucket + 2 */
	struct groups g;                /* the analysis's accumulators */
	struct groups aux;              /* coll: per-rank stragglers */
	/* coll */
	struct ev_map open_idx;         /* hash(sg, comm, seq) -> open slot + 1 */
	struct copen *open;
	size_t nopen, capopen;
	uint64_t incomplete;
	ev_table *each;
	/* ops */
	struct ev_map inst_idx;
	struct inst *inst;
	size_t ninst, capinst;
	int64_t now;
	uint64_t nrec;
	/* timeline: the last record's group, and the last source's time base */
	int last_ok, base_ok;
	uint32_t last_src, last_rank, last_stream, base_src;
	size_t last_index;
	int64_t base_ns;
};

/* The source group of a record's src: the src itself with --by src, the
 * tuple of the --by #src keys otherwise (sources with equal keys pool). */
static int src_group(struct state *s, uint32_t src, uint32_t *sg)
{
	uint64_t *have = ev_map_get(&s->src_sg, (uint64_t)src + 1);
	if (have) {
		*sg = (uint32_t)(*have - 1);
		return EV_OK;
	}
	const struct opts *o = s->o;
	char buf[4096];
	size_t n = 0;
	int keyed = 0;
	const struct ev_src_info *si = ev_meta_src(s->meta, src);
	for (int i = 0; i < o->nby; i++) {
		const char *v = NULL;
		char num[16];
		if (o->by[i] == BY_SRC) {
			snprintf(num, sizeof num, "%u", src);
			v = num;
		} else if (o->by[i] == BY_SRCKEY) {
			v = si ? ev_kv_get(si->kv, si->nkv, o->by_key[i]) : NULL;
			if (!v && si && !strcmp(o->by_key[i], "label"))
				v = si->label;
			if (!v && si && !strcmp(o->by_key[i], "file"))
				v = si->file;
		} else {
			continue;
		}
		keyed = 1;
		n += (size_t)snprintf(buf + n, n < sizeof buf ? sizeof buf - n : 0, "%s%c", v ? v : "", 0x1f);
		if (n >= sizeof buf)
			n = sizeof buf - 1;
	}
	if (!keyed)
		n = 0;
	buf[n] = '\0';
	size_t i;
	for (i = 0; i < s->srcgrps.len; i++)
		if (!strcmp(((struct srcgrp *)s->srcgrps.data)[i].keys, buf))
			break;
	if (i == s->srcgrps.len) {
		struct srcgrp *g = ev_vec_push(&s->srcgrps);
		if (!g || !(g->keys = strdup(buf)))
			return EV_ERR_NOMEM;
		g->first_src = src;
	}
	*sg = (uint32_t)i;
	return ev_map_put(&s->src_sg, (uint64_t)src + 1, i + 1);
}

static int has_by(const struct opts *o, int f)
{
	for (int i = 0; i < o->nby; i++)
		if (o->by[i] == f)
			return 1;
	return 0;
}

static int base_key(struct state *s, const struct ev_rec *r, struct gkey *k)
{
	memset(k, 0, sizeof *k);
	int rc = src_group(s, r->src, &k->sg);
	if (has_by(s->o, BY_RANK))
		k->rank = r->rank;
	if (has_by(s->o, BY_STREAM))
		k->stream = r->stream;
	return rc;
}

static const char *str_of(struct state *s, uint64_t id)
{
	const char *t = ev_strtab_get(s->st, id, NULL);
	return t ? t : "";
}

/* Class of a GPU event under --rules (kernels by name; memcpy/memset by type). */
static unsigned class_of(struct state *s, const struct ev_rec *r)
{
	if (r->type == EV_MEMCPY)
		return EV_KC_MEMCPY;
	if (r->type == EV_MEMSET)
		return EV_KC_MEMSET;
	uint64_t *c = r->name ? ev_map_get(&s->class_cache, r->name) : NULL;
	if (c)
		return (unsigned)(*c - 1);
	unsigned k = ev_kernel_class(s->o->rules, str_of(s, r->name));
	if (r->name && ev_map_put(&s->class_cache, r->name, k + 1) != EV_OK)
		return k;
	return k;
}

static int is_gpu(const struct ev_rec *r)
{
	return r->type == EV_KERNEL || r->type == EV_MEMCPY || r->type == EV_MEMSET;
}

/* Key columns of the --by fields, for a group. */
static void by_colspecs(const struct opts *o, struct colspec *c, size_t *n)
{
	for (int i = 0; i < o->nby; i++) {
		switch (o->by[i]) {
		case BY_SRC: c[(*n)++] = (struct colspec){ "src", 0, 0 }; break;
		case BY_RANK: c[(*n)++] = (struct colspec){ "rank", 1, 0 }; break;
		case BY_STREAM: c[(*n)++] = (struct colspec){ "stream", 1, 0 }; break;
		default: c[(*n)++] = (struct colspec){ o->by_key[i], 0, 0 }; break;
		}
	}
}

static int by_keys(struct state *s, struct row *r, const struct gkey *k, size_t *n)
{
	const struct opts *o = s->o;
	const struct srcgrp *g = (const struct srcgrp *)s->srcgrps.data + k->sg;
	const char *p = g->keys;
	int rc = EV_OK;
	for (int i = 0; i < o->nby && !rc; i++) {
		if (o->by[i] == BY_RANK) {
			rc = row_keyu(r, (*n)++, k->rank);
		} else if (o->by[i] == BY_STREAM) {
			rc = row_keyu(r, (*n)++, k->stream);
		} else {
			/* Fields of the source tuple, in --by order. */
			const char *e = strchr(p, 0x1f);
			size_t len = e ? (size_t)(e - p) : strlen(p);
			char v[1024];
			if (len >= sizeof v)
				len = sizeof v - 1;
			memcpy(v, p, len);
			v[len] = '\0';
			if (o->by[i] == BY_SRC) {
				uint32_t src = (uint32_t)strtoul(v, NULL, 10);
				const struct ev_src_info *si = ev_meta_src(s->meta, src);
				if (si && si->label && *si->label)
					snprintf(v, sizeof v, "%s", si->label);
			}
			rc = row_key(r, (*n)++, v);
			p = e ? e + 1 : p + len;
		}
	}
	return rc;
}

/* A new row of rs for group key k, its --by key columns filled; *n is
 * the next key column.  EV_OK or an error (then *out may be NULL). */
static int group_row(struct state *s, struct rowset *rs, const struct gkey *k, struct row **out, size_t *n)
{
	*n = 0;
	*out = rowset_add(rs, k->sg);
	return *out ? by_keys(s, *out, k, n) : EV_ERR_NOMEM;
}

/* ------------------------------------------------------------------ */
/* timeline                                                             */

/* The time base of a source's original clock (#src base_ns=, written by
 * kineto2ev for traces with baseTimeNanoseconds), else 0. */
static int64_t src_base(struct state *s, uint32_t src)
{
	const struct ev_src_info *si = ev_meta_src(s->meta, src);
	const char *v = si ? ev_kv_get(si->kv, si->nkv, "base_ns") : NULL;
	int64_t b;
	return v && ev_parse_i64(v, &b) == EV_OK ? b : 0;
}

static int timeline_rec(struct state *s, const struct ev_rec *r)
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
		int b = ev_timeline_bucket(s->o->rules, r->type, name);
		int hc = ev_hta_kind(name) == EV_HTA_COMPUTATION && r->type == EV_KERNEL;
		cls = (uint64_t)(b + 2) | (uint64_t)hc << 8;
		if (ev_map_put(&s->bucket_cache, ck, cls) != EV_OK)
			return EV_ERR_NOMEM;
	}
	double a, z;
	if (s->o->float_us) {
		/* TraceLens's arithmetic: ts and dur parsed from the JSON text as
		 * microsecond doubles (relative to baseTimeNanoseconds when the
		 * trace had one), end = ts + dur rounded. */
		if (!s->base_ok || s->base_src != r->src) {
			s->base_ns = src_base(s, r->src);
			s->base_src = r->src;
			s->base_ok = 1;
		}
		int64_t rel = r->ts - s->base_ns;
		int64_t q = rel / 1000, m = rel % 1000;
		a = (double)q + (double)m / 1000.0;
		z = a + (double)r->dur / 1000.0;
	} else {
		/* Exact: ns offsets from the group's first event fit a double
		 * exactly for 104 days. */
		a = (double)(r->ts - t->t0);
		z = a + (double)r->dur;
	}
	/* HTA counts every GPU event, linked or not. */
	ev_cover_add(&t->hta, 0, a, z);
	if (cls >> 8)
		ev_cover_add(&t->hta, 1, a, z);
	if ((r->flags & EV_F_UNLINKED) && !s->o->unlinked)
		return EV_OK;
	int b = (int)(cls & 0xff) - 2;
	if (b >= 0)
		ev_cover_add(&t->tl, (unsigned)b, a, z);
	return EV_OK;
}

static int timeline_rows(struct state *s, struct rowset *rs)
{
	struct colspec keys[MAX_BY + 1];
	size_t nk = 0;
	by_colspecs(s->o, keys, &nk);
	keys[nk++] = (struct colspec){ "type", 0, 0 };
	static const struct colspec vals[] = { { "time_ms", 0, D_LOWER }, { "percent", 0, D_NONE } };
	int rc = rowset_init(rs, keys, nk, vals, 2);
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
		double to_ms = s->o->float_us ? 1e3 : 1e6;
		double hidle = kt - hbusy;
		struct { const char *type; double ns, base; } v[] = {
			{ "computation_time", comp, total }, { "exposed_comm_time", xcomm, total },
			{ "exposed_memcpy_time", xmem, total }, { "busy_time", busy, total },
			{ "idle_time", total - busy, total }, { "total_time", total, total },
			{ "total_comm_time", tcomm, total }, { "total_memcpy_time", tmem, total },
			{ "hta_idle_time", hidle, kt }, { "hta_compute_time", hcomp, kt },
			{ "hta_non_compute_time", kt - hcomp - hidle, kt }, { "hta_kernel_time", kt, kt },
		};
		size_t nv = s->o->no_hta ? 8 : sizeof v / sizeof v[0];
		for (size_t j = 0; !rc && j < nv; j++) {
			struct row *r;
			size_t n;
			if ((rc = group_row(s, rs, GROUP_KEY(&s->g, i), &r, &n)) != EV_OK)
				return rc;
			rc = row_key(r, n, v[j].type);
			r->val[0] = v[j].ns / to_ms;
			r->val[1] = v[j].base > 0 ? 100.0 * v[j].ns / v[j].base : 0.0;
		}
	}
	return rc;
}

/* ------------------------------------------------------------------ */
/* kernels, categories                                                  */

static int kernels_rec(struct state *s, const struct ev_rec *r, int by_class)
{
	if (!is_gpu(r))
		return EV_OK;
	struct gkey k;
	int rc = base_key(s, r, &k);
	unsigned kc = class_of(s, r);
	if (by_class)
		k.k1 = kc + 1;
	else
		k.k1 = r->name;
	struct kstat *ks = rc ? NULL : group_get(&s->g, &k, NULL);
	if (!ks)
		return EV_ERR_NOMEM;
	if (ks->d.n == 0) {
		ks->name = r->name;
		ks->kclass = kc;
	}
	return ev_dist_add(&ks->d, &s->pool, (double)r->dur / 1e3, r->ts);
}

/* Total kernel time of the --by group of slot i (for percentages). */
static double group_total(struct state *s, size_t i)
{
	const struct gkey *ki = GROUP_KEY(&s->g, i);
	double sum = 0;
	for (size_t j = 0; j < s->g.keys.len; j++) {
		const struct gkey *kj = GROUP_KEY(&s->g, j);
		if (kj->sg == ki->sg && kj->rank == ki->rank && kj->stream == ki->stream)
			sum += ((struct kstat *)GROUP_VAL(&s->g, j))->d.sum;
	}
	return sum;
}

/* qsort has no context argument in C11. */
static struct state *sort_state;

static int cmp_sum_desc(const void *a, const void *b)
{
	struct state *s = sort_state;
	size_t ia = *(const size_t *)a, ib = *(const size_t *)b;
	const struct gkey *ka = GROUP_KEY(&s->g, ia), *kb = GROUP_KEY(&s->g, ib);
	if (ka->sg != kb->sg)
		return ka->sg < kb->sg ? -1 : 1;
	if (ka->rank != kb->rank)
		return ka->rank < kb->rank ? -1 : 1;
	if (ka->stream != kb->stream)
		return ka->stream < kb->stream ? -1 : 1;
	double sa = ((struct kstat *)GROUP_VAL(&s->g, ia))->d.sum, sb = ((struct kstat *)GROUP_VAL(&s->g, ib))->d.sum;
	if (sa != sb)
		return sa > sb ? -1 : 1;
	return ia < ib ? -1 : ia > ib;
}

static size_t *sorted_slots(struct state *s)
{
	size_t *ord = malloc((s->g.keys.len + 1) * sizeof *ord);
	if (!ord)
		return NULL;
	for (size_t i = 0; i < s->g.keys.len; i++)
		ord[i] = i;
	sort_state = s;
	qsort(ord, s->g.keys.len, sizeof *ord, cmp_sum_desc);
	return ord;
}

static const char *class_name(unsigned kc)
{
	const char *n = ev_kclass_name(kc);
	return n ? n : "other";
}

static int kernels_rows(struct state *s, struct rowset *rs, int by_class)
{
	struct colspec keys[MAX_BY + 2];
	size_t nk = 0;
	by_colspecs(s->o, keys, &nk);
	if (!by_class)
		keys[nk++] = (struct colspec){ "name", 0, 0 };
	keys[nk++] = (struct colspec){ "class", 0, 0 };
	static const struct colspec kvals[] = {
		{ "count", 0, D_NONE }, { "sum_us", 0, D_LOWER }, { "mean_us", 0, D_LOWER }, { "median_us", 0, D_LOWER },
		{ "min_us", 0, D_LOWER }, { "max_us", 0, D_LOWER }, { "std_us", 0, D_NONE }, { "p90_us", 0, D_LOWER },
		{ "p99_us", 0, D_LOWER }, { "percent", 0, D_NONE },
	};
	static const struct colspec cvals[] = {
		{ "count", 0, D_NONE }, { "sum_us", 0, D_LOWER }, { "mean_us", 0, D_LOWER }, { "percent", 0, D_NONE },
	};
	int rc = by_class ? rowset_init(rs, keys, nk, cvals, 4) : rowset_init(rs, keys, nk, kvals, 10);
	size_t *ord = rc ? NULL : sorted_slots(s);
	if (!rc && !ord)
		rc = EV_ERR_NOMEM;
	for (size_t j = 0; !rc && j < s->g.keys.len; j++) {
		size_t i = ord[j];
		struct kstat *ks = GROUP_VAL(&s->g, i);
		struct row *r;
		size_t n;
		if ((rc = group_row(s, rs, GROUP_KEY(&s->g, i), &r, &n)) != EV_OK)
			break;
		if (!by_class)
			rc = row_key(r, n++, str_of(s, ks->name));
		if (!rc)
			rc = row_key(r, n, class_name(ks->kclass));
		double tot = group_total(s, i);
		double *v = r->val;
		v[0] = (double)ks->d.n;
		v[1] = ks->d.sum;
		v[2] = ks->d.mean;
		if (by_class) {
			v[3] = tot > 0 ? 100 * ks->d.sum / tot : 0;
			continue;
		}
		v[3] = ev_dist_quantile(&ks->d, 0.5);
		v[4] = ks->d.min;
		v[5] = ks->d.max;
		v[6] = ev_dist_std(&ks->d);
		v[7] = ev_dist_quantile(&ks->d, 0.9);
		v[8] = ev_dist_quantile(&ks->d, 0.99);
		v[9] = tot > 0 ? 100 * ks->d.sum / tot : 0;
	}
	free(ord);
	return rc;
}

/* ------------------------------------------------------------------ */
/* variance                                                             */

static int variance_rec(struct state *s, const struct ev_rec *r)
{
	if (r->type != EV_KERNEL)
		return EV_OK;
	unsigned kc = class_of(s, r);
	if (!(s->o->class_mask & (1u << kc)))
		return EV_OK;
	struct gkey k;
	int rc = base_key(s, r, &k);
	k.k1 = (!s->o->key_name && r->sig) ? r->sig : r->name;
	k.k2 = (!s->o->key_name && r->sig) ? 1 : 0;
	struct kstat *ks = rc ? NULL : group_get(&s->g, &k, NULL);
	if (!ks)
		return EV_ERR_NOMEM;
	if (ks->d.n == 0) {
		ks->name = r->name;
		ks->kclass = kc;
	}
	double us = (double)r->dur / 1e3;
	if (ks->d.n == 0 || us < ks->d.min) {
		ks->min_rank = r->rank;
		ks->min_src = r->src;
	}
	if (ks->d.n == 0 || us > ks->d.max) {
		ks->max_rank = r->rank;
		ks->max_src = r->src;
	}
	return ev_dist_add(&ks->d, &s->pool, us, r->ts);
}

static int cmp_range_desc(const void *a, const void *b)
{
	struct state *s = sort_state;
	size_t ia = *(const size_t *)a, ib = *(const size_t *)b;
	const struct gkey *ka = GROUP_KEY(&s->g, ia), *kb = GROUP_KEY(&s->g, ib);
	if (ka->sg != kb->sg)
		return ka->sg < kb->sg ? -1 : 1;
	if (ka->rank != kb->rank)
		return ka->rank < kb->rank ? -1 : 1;
	if (ka->stream != kb->stream)
		return ka->stream < kb->stream ? -1 : 1;
	const struct kstat *x = GROUP_VAL(&s->g, ia), *y = GROUP_VAL(&s->g, ib);
	double ra = x->d.max - x->d.min, rb = y->d.max - y->d.min;
	if (ra != rb)
		return ra > rb ? -1 : 1;
	return ia < ib ? -1 : ia > ib;
}

static const char *src_label(struct state *s, uint32_t src, char *buf, size_t n)
{
	const struct ev_src_info *si = ev_meta_src(s->meta, src);
	if (si && si->label && *si->label)
		return si->label;
	snprintf(buf, n, "%u", src);
	return buf;
}

static int variance_rows(struct state *s, struct rowset *rs)
{
	struct colspec keys[MAX_BY + 8];
	size_t nk = 0;
	by_colspecs(s->o, keys, &nk);
	keys[nk++] = (struct colspec){ "key", 0, 0 };
	keys[nk++] = (struct colspec){ "name", 0, 0 };
	keys[nk++] = (struct colspec){ "min_src", 0, 0 };
	keys[nk++] = (struct colspec){ "min_rank", 1, 0 };
	keys[nk++] = (struct colspec){ "max_src", 0, 0 };
	keys[nk++] = (struct colspec){ "max_rank", 1, 0 };
	/* Time stamps are int64 ns: as text they stay exact (a double would not). */
	keys[nk++] = (struct colspec){ "min_ts", 1, 0 };
	keys[nk++] = (struct colspec){ "max_ts", 1, 0 };
	static const struct colspec vals[] = {
		{ "count", 0, 0 }, { "min_us", 0, D_LOWER }, { "max_us", 0, D_LOWER }, { "range_us", 0, D_LOWER },
		{ "mean_us", 0, D_LOWER }, { "std_us", 0, D_LOWER }, { "cv", 0, D_LOWER }, { "p50_us", 0, D_LOWER },
		{ "p99_us", 0, D_LOWER },
	};
	int rc = rowset_init(rs, keys, nk, vals, sizeof vals / sizeof vals[0]);
	size_t *ord = malloc((s->g.keys.len + 1) * sizeof *ord);
	if (!rc && !ord)
		rc = EV_ERR_NOMEM;
	for (size_t i = 0; !rc && i < s->g.keys.len; i++)
		ord[i] = i;
	sort_state = s;
	if (!rc)
		qsort(ord, s->g.keys.len, sizeof *ord, cmp_range_desc);
	uint64_t in_group = 0;
	for (size_t j = 0; !rc && j < s->g.keys.len; j++) {
		size_t i = ord[j];
		const struct gkey *k = GROUP_KEY(&s->g, i);
		if (j > 0) {
			const struct gkey *p = GROUP_KEY(&s->g, ord[j - 1]);
			if (p->sg != k->sg || p->rank != k->rank || p->stream != k->stream)
				in_group = 0;
		}
		if (s->o->top && in_group >= s->o->top)
			continue;
		in_group++;
		struct kstat *ks = GROUP_VAL(&s->g, i);
		struct row *r;
		size_t n;
		char b1[16], b2[16];
		if ((rc = group_row(s, rs, k, &r, &n)) != EV_OK)
			break;
		rc = row_key(r, n++, str_of(s, k->k1));
		rc = rc ? rc : row_key(r, n++, str_of(s, ks->name));
		rc = rc ? rc : row_key(r, n++, src_label(s, ks->min_src, b1, sizeof b1));
		rc = rc ? rc : row_keyu(r, n++, ks->min_rank);
		rc = rc ? rc : row_key(r, n++, src_label(s, ks->max_src, b2, sizeof b2));
		rc = rc ? rc : row_keyu(r, n++, ks->max_rank);
		char tsb[24];
		snprintf(tsb, sizeof tsb, "%lld", (long long)ks->d.min_ts);
		rc = rc ? rc : row_key(r, n++, tsb);
		snprintf(tsb, sizeof tsb, "%lld", (long long)ks->d.max_ts);
		rc = rc ? rc : row_key(r, n++, tsb);
		double *v = r->val;
		v[0] = (double)ks->d.n;
		v[1] = ks->d.min;
		v[2] = ks->d.max;
		v[3] = ks->d.max - ks->d.min;
		v[4] = ks->d.mean;
		v[5] = ev_dist_std(&ks->d);
		v[6] = ks->d.mean > 0 ? v[5] / ks->d.mean : 0;
		v[7] = ev_dist_quantile(&ks->d, 0.5);
		v[8] = ev_dist_quantile(&ks->d, 0.99);
	}
	free(ord);
	return rc;
}

/* ------------------------------------------------------------------ */
/* ops: op instances (rank, External id) and GEMM roofline numbers       */

/* Parse "[[a,b],[c,d]]" style dims of a signature into up to 4 shapes of
 * up to 4 dims.  Returns the number of shapes. */
static int parse_dims(const char *p, int64_t dims[4][4], int nd[4])
{
	int ns = 0;
	if (*p != '[')
		return 0;
	p++;
	while (*p && *p != ']' && ns < 4) {
		if (*p == ',') {
			p++;
			continue;
		}
		if (*p != '[')
			return ns;
		p++;
		nd[ns] = 0;
		while (*p && *p != ']') {
			char *e;
			long long v = strtoll(p, &e, 10);
			if (e == p)
				return ns;
			if (nd[ns] < 4)
				dims[ns][nd[ns]++] = v;
			p = e;
			if (*p == ',')
				p++;
		}
		if (*p == ']')
			p++;
		ns++;
	}
	return ns;
}

static double type_bytes(const char *types, int index)
{
	/* types=["c10::BFloat16","c10::BFloat16"]: the index-th quoted word. */
	const char *p = types;
	for (int i = 0; p && i <= index; i++) {
		p = strchr(p, '"');
		if (!p)
			return 0;
		const char *e = strchr(p + 1, '"');
		if (!e)
			return 0;
		if (i == index) {
			size_t n = (size_t)(e - p - 1);
			if (n >= 5 && !strncmp(e - 5, "Float", 5) && (n < 7 || strncmp(e - 7, "BFloat", 6)))
				return 4; /* c10::Float? rare */
			if (memmem(p, n + 1, "BFloat16", 8) || memmem(p, n + 1, "Half", 4))
				return 2;
			if (memmem(p, n + 1, "double", 6) || memmem(p, n + 1, "Double", 6))
				return 8;
			if (memmem(p, n + 1, "float", 5))
				return 4;
			if (memmem(p, n + 1, "Float8", 6) || memmem(p, n + 1, "fp8", 3))
				return 1;
			return 0;
		}
		p = e + 1;
	}
	return 0;
}

/* TraceLens's GEMM formulas from an op signature "aten::mm dims=[...]
 * types=[...] ...": FLOPs = 2MNK(B) (+MN if bias), bytes = MK+KN+MN (+N). */
static void gemm_model(const char *sig, double *gflop, double *mbytes)
{
	*gflop = *mbytes = 0;
	const char *sp = strchr(sig, ' ');
	size_t oplen = sp ? (size_t)(sp - sig) : strlen(sig);
	const char *d = strstr(sig, " dims=");
	const char *t = strstr(sig, " types=");
	if (!d)
		return;
	int64_t dims[4][4] = { { 0 } };
	int nd[4] = { 0 };
	int ns = parse_dims(d + 6, dims, nd);
	double M = 0, N = 0, K = 0, B = 1, bias = 0;
	int ia = 0, ib = 1;
#define OPIS(x) (oplen == strlen(x) && !strncmp(sig, x, oplen))
	if ((OPIS("aten::mm") || OPIS("aten::matmul")) && ns >= 2 && nd[0] == 2 && nd[1] == 2) {
		M = (double)dims[0][0]; K = (double)dims[0][1]; N = (double)dims[1][1];
	} else if (OPIS("aten::addmm") && ns >= 3 && nd[1] == 2 && nd[2] == 2) {
		M = (double)dims[1][0]; K = (double)dims[1][1]; N = (double)dims[2][1];
		bias = 1; ia = 1; ib = 2;
	} else if ((OPIS("aten::bmm") || OPIS("aten::baddbmm")) && ns >= 2) {
		int o = OPIS("aten::baddbmm") ? 1 : 0;
		if (ns < 2 + o || nd[o] != 3 || nd[o + 1] != 3)
			return;
		B = (double)dims[o][0]; M = (double)dims[o][1]; K = (double)dims[o][2]; N = (double)dims[o + 1][2];
		bias = o; ia = o; ib = o + 1;
	} else if (OPIS("aten::linear") && ns >= 2 && nd[0] >= 2 && nd[1] == 2) {
		M = 1;
		for (int i = 0; i + 1 < nd[0]; i++)
			M *= (double)dims[0][i];
		K = (double)dims[0][nd[0] - 1]; N = (double)dims[1][0];
		bias = ns >= 3 && nd[2] == 1;
	} else {
		return;
	}
#undef OPIS
	double flop = 2 * M * N * K * B + (bias ? M * N * B : 0);
	double ba = t ? type_bytes(t, ia) : 0, bb = t ? type_bytes(t, ib) : 0;
	if (ba == 0 || bb == 0)
		ba = bb = 0;
	*gflop = flop / 1e9;
	if (ba > 0)
		*mbytes = (B * (M * K * ba + K * N * bb + M * N * ba) + (bias ? N * ba : 0)) / (1024.0 * 1024.0);
}

static int inst_close(struct state *s, struct inst *in)
{
	struct gkey k;
	memset(&k, 0, sizeof k);
	k.sg = in->key.sg;
	k.rank = has_by(s->o, BY_RANK) ? in->key.rank : 0;
	k.k1 = in->key.k2; /* the signature */
	struct kstat *ks = group_get(&s->g, &k, NULL);
	if (!ks)
		return EV_ERR_NOMEM;
	if (ks->d.n == 0) {
		ks->name = in->name;
		ks->kclass = in->kclass;
		gemm_model(str_of(s, in->key.k2), &ks->gflop, &ks->mbytes);
	}
	uint64_t busy = in->busy + (uint64_t)(in->end - in->start);
	double us = (double)busy / 1e3;
	int rc = ev_dist_add(&ks->d, &s->pool, us, in->start);
	if (!rc && ks->gflop > 0 && us > 0)
		rc = ev_dist_add(&ks->tflops, &s->pool, ks->gflop / 1e3 / (us / 1e6), in->start);
	if (!rc && ks->mbytes > 0 && us > 0)
		rc = ev_dist_add(&ks->tbs, &s->pool, ks->mbytes * 1048576.0 / 1e12 / (us / 1e6), in->start);
	in->live = 0;
	return rc;
}

/* Instances whose kernels ended more than a second before now are done:
 * an op's kernels are launched together, and keeping every instance open
 * to the end would grow with the trace. */
#define INST_WINDOW_NS 1000000000LL

static int ops_sweep(struct state *s, int all)
{
	size_t w = 0;
	int rc = EV_OK;
	for (size_t i = 0; i < s->ninst; i++) {
		struct inst *in = &s->inst[i];
		if (!rc && (all || in->end + INST_WINDOW_NS < s->now)) {
			rc = inst_close(s, in);
			continue;
		}
		s->inst[w++] = *in;
	}
	s->ninst = w;
	ev_map_free(&s->inst_idx);
	ev_map_init(&s->inst_idx);
	for (size_t i = 0; !rc && i < s->ninst; i++)
		rc = ev_map_put(&s->inst_idx, ev_hash64(&s->inst[i].key, sizeof s->inst[i].key) | 1, i + 1);
	return rc;
}

static int ops_rec(struct state *s, const struct ev_rec *r)
{
	if (!is_gpu(r) || !r->sig)
		return EV_OK;
	unsigned kc = class_of(s, r);
	if (s->o->class_given && !(s->o->class_mask & (1u << kc)))
		return EV_OK;
	s->now = r->ts;
	struct inst key;
	memset(&key, 0, sizeof key);
	int rc = src_group(s, r->src, &key.key.sg);
	if (rc)
		return rc;
	key.key.rank = r->rank;
	key.key.k1 = r->step ? r->step : ((uint64_t)1 << 40) + r->id; /* no instance id: each kernel alone */
	key.key.k2 = r->sig;
	uint64_t h = ev_hash64(&key.key, sizeof key.key) | 1;
	uint64_t *slot = ev_map_get(&s->inst_idx, h);
	struct inst *in = slot ? &s->inst[*slot - 1] : NULL;
	if (in && memcmp(&in->key, &key.key, sizeof key.key) != 0)
		in = NULL; /* hash clash: treat as a new instance */
	int64_t end = ev_rec_end(r);
	if (in) {
		if (r->ts > in->end) {
			in->busy += (uint64_t)(in->end - in->start);
			in->start = r->ts;
			in->end = end;
		} else if (end > in->end) {
			in->end = end;
		}
		return EV_OK;
	}
	if (s->ninst == s->capinst) {
		if (s->ninst > 4096 && (rc = ops_sweep(s, 0)) != EV_OK)
			return rc;
		if (s->ninst == s->capinst) {
			size_t cap = s->capinst ? 2 * s->capinst : 256;
			struct inst *ni = realloc(s->inst, cap * sizeof *ni);
			if (!ni)
				return EV_ERR_NOMEM;
			s->inst = ni;
			s->capinst = cap;
		}
	}
	in = &s->inst[s->ninst++];
	*in = key;
	in->start = r->ts;
	in->end = end;
	in->name = r->name;
	in->kclass = kc;
	in->live = 1;
	return ev_map_put(&s->inst_idx, h, s->ninst);
}

static int ops_rows(struct state *s, struct rowset *rs)
{
	int rc = ops_sweep(s, 1);
	struct colspec keys[MAX_BY + 3];
	size_t nk = 0;
	by_colspecs(s->o, keys, &nk);
	keys[nk++] = (struct colspec){ "sig", 0, 0 };
	keys[nk++] = (struct colspec){ "kernel", 0, 0 };
	keys[nk++] = (struct colspec){ "class", 0, 0 };
	static const struct colspec vals[] = {
		{ "count", 0, 0 }, { "kernel_time_sum_us", 0, D_LOWER }, { "kernel_time_mean_us", 0, D_LOWER },
		{ "kernel_time_median_us", 0, D_LOWER }, { "kernel_time_std_us", 0, D_NONE },
		{ "kernel_time_min_us", 0, D_LOWER }, { "kernel_time_max_us", 0, D_LOWER }, { "gflops", 0, D_NONE },
		{ "data_moved_mb", 0, D_NONE }, { "flops_per_byte", 0, D_NONE }, { "tflops_s_mean", 0, D_HIGHER },
		{ "tflops_s_median", 0, D_HIGHER }, { "tb_s_mean", 0, D_HIGHER },
	};
	if (!rc)
		rc = rowset_init(rs, keys, nk, vals, sizeof vals / sizeof vals[0]);
	size_t *ord = rc ? NULL : sorted_slots(s);
	if (!rc && !ord)
		rc = EV_ERR_NOMEM;
	for (size_t j = 0; !rc && j < s->g.keys.len; j++) {
		size_t i = ord[j];
		struct kstat *ks = GROUP_VAL(&s->g, i);
		struct row *r;
		size_t n;
		if ((rc = group_row(s, rs, GROUP_KEY(&s->g, i), &r, &n)) != EV_OK)
			break;
		rc = row_key(r, n++, str_of(s, GROUP_KEY(&s->g, i)->k1));
		rc = rc ? rc : row_key(r, n++, str_of(s, ks->name));
		rc = rc ? rc : row_key(r, n++, class_name(ks->kclass));
		double *v = r->val;
		v[0] = (double)ks->d.n;
		v[1] = ks->d.sum;
		v[2] = ks->d.mean;
		v[3] = ev_dist_quantile(&ks->d, 0.5);
		v[4] = ev_dist_std(&ks->d);
		v[5] = ks->d.min;
		v[6] = ks->d.max;
		v[7] = ks->gflop > 0 ? ks->gflop : NAN;
		v[8] = ks->mbytes > 0 ? ks->mbytes : NAN;
		v[9] = ks->gflop > 0 && ks->mbytes > 0 ? ks->gflop * 1e9 / (ks->mbytes * 1048576.0) : NAN;
		v[10] = ks->tflops.n ? ks->tflops.mean : NAN;
		v[11] = ks->tflops.n ? ev_dist_quantile(&ks->tflops, 0.5) : NAN;
		v[12] = ks->tbs.n ? ks->tbs.mean : NAN;
	}
	free(ord);
	return rc;
}

/* ------------------------------------------------------------------ */
/* coll: match (source, communicator, seq) across ranks                 */

static double busbw_factor(unsigned op, double n)
{
	switch (op) {
	case EV_OP_ALLREDUCE: return n > 0 ? 2 * (n - 1) / n : 1;
	case EV_OP_REDUCESCATTER:
	case EV_OP_ALLGATHER:
	case EV_OP_ALLTOALL:
	case EV_OP_ALLTOALLV: return n > 0 ? (n - 1) / n : 1;
	default: return 1;
	}
}

static const char *const each_cols[] = {
	"src", "comm", "seq", "coll", "dtype", "bytes", "nranks", "seen", "ts", "latency_us", "start_skew_us",
	"end_skew_us", "avg_wait_us", "first_rank", "last_rank", "algbw_GBps", "busbw_GBps",
};

static int coll_done(struct state *s, struct copen *c)
{
	int64_t tmin = INT64_MAX, tmax = INT64_MIN, emin = INT64_MAX, emax = INT64_MIN;
	uint64_t lat = UINT64_MAX;
	uint32_t first = 0, last = 0;
	for (uint32_t i = 0; i < c->seen; i++) {
		if (c->ts[i] < tmin) { tmin = c->ts[i]; first = c->rank[i]; }
		if (c->ts[i] > tmax) { tmax = c->ts[i]; last = c->rank[i]; }
		if (c->end[i] < emin) emin = c->end[i];
		if (c->end[i] > emax) emax = c->end[i];
		if (c->dur[i] < lat) lat = c->dur[i];
	}
	double wait = 0;
	for (uint32_t i = 0; i < c->seen; i++)
		wait += (double)(tmax - c->ts[i]);
	double avg_wait_us = wait / c->seen / 1e3;
	double lat_us = (double)lat / 1e3;
	double algbw = lat > 0 ? ((double)c->bytes / 1073741824.0) / ((double)lat / 1e9) : NAN;
	double n = (double)(c->expect ? c->expect : c->seen);
	double busbw = algbw * busbw_factor(c->op, n);
	int rc = EV_OK;
	if (c->seen < c->expect)
		s->incomplete++;
	/* Stragglers per rank. */
	for (uint32_t i = 0; i < c->seen && !rc; i++) {
		struct gkey k;
		memset(&k, 0, sizeof k);
		k.sg = c->key.sg;
		k.rank = c->rank[i];
		struct strag *st = group_get(&s->aux, &k, NULL);
		if (!st)
			return EV_ERR_NOMEM;
		st->colls++;
		st->last += c->ts[i] == tmax;
		st->first += c->ts[i] == tmin;
		st->wait_us += (double)(tmax - c->ts[i]) / 1e3;
		st->dur_us += (double)c->dur[i] / 1e3;
	}
	if (s->o->coll_table == CT_EACH) {
		ev_table *t = s->each;
		char b[16];
		rc = ev_table_str(t, src_label(s, ((struct srcgrp *)s->srcgrps.data)[c->key.sg].first_src, b, sizeof b));
		char comm[20];
		snprintf(comm, sizeof comm, "%016llx", (unsigned long long)c->key.k1);
		rc = rc ? rc : ev_table_str(t, comm);
		rc = rc ? rc : ev_table_u64(t, c->key.k2);
		rc = rc ? rc : ev_table_str(t, ev_coll_name(c->op) ? ev_coll_name(c->op) : "unknown");
		rc = rc ? rc : ev_table_str(t, ev_dtype_name(c->dtype) ? ev_dtype_name(c->dtype) : "unknown");
		rc = rc ? rc : ev_table_u64(t, c->bytes);
		rc = rc ? rc : ev_table_u64(t, c->expect);
		rc = rc ? rc : ev_table_u64(t, c->seen);
		rc = rc ? rc : ev_table_i64(t, tmin);
		rc = rc ? rc : ev_table_f64(t, lat_us);
		rc = rc ? rc : ev_table_f64(t, (double)(tmax - tmin) / 1e3);
		rc = rc ? rc : ev_table_f64(t, (double)(emax - emin) / 1e3);
		rc = rc ? rc : ev_table_f64(t, avg_wait_us);
		rc = rc ? rc : ev_table_u64(t, first);
		rc = rc ? rc : ev_table_u64(t, last);
		rc = rc ? rc : ev_table_f64(t, algbw);
		rc = rc ? rc : ev_table_f64(t, busbw);
	} else {
		struct gkey k;
		memset(&k, 0, sizeof k);
		k.sg = c->key.sg;
		k.k1 = c->bytes;
		k.k2 = (uint64_t)c->op << 8 | c->dtype;
		struct cstat *cs = group_get(&s->g, &k, NULL);
		if (!cs)
			return EV_ERR_NOMEM;
		cs->nranks = (uint64_t)n;
		cs->total_lat_us += lat_us;
		rc = ev_dist_add(&cs->lat, &s->pool, lat_us, tmin);
		rc = rc ? rc : ev_dist_add(&cs->sskew, &s->pool, (double)(tmax - tmin) / 1e3, tmin);
		rc = rc ? rc : ev_dist_add(&cs->eskew, &s->pool, (double)(emax - emin) / 1e3, tmin);
		if (!rc && isfinite(algbw)) {
			rc = ev_dist_add(&cs->algbw, &s->pool, algbw, tmin);
			rc = rc ? rc : ev_dist_add(&cs->busbw, &s->pool, busbw, tmin);
		}
	}
	c->live = 0;
	return rc;
}

static uint32_t comm_nranks(struct state *s, const struct ev_rec *r)
{
	if (r->aux)
		return r->aux;
	const struct ev_comm_info *ci = ev_meta_comm(s->meta, r->comm);
	return ci ? ci->nranks : 0;
}

static int coll_rec(struct state *s, const struct ev_rec *r)
{
	if (r->type != EV_COLL)
		return EV_OK;
	struct gkey k;
	memset(&k, 0, sizeof k);
	int rc = src_group(s, r->src, &k.sg);
	if (rc)
		return rc;
	k.k1 = r->comm;
	k.k2 = r->seq;
	uint64_t h = ev_hash64(&k, sizeof k) | 1;
	uint64_t *slot = ev_map_get(&s->open_idx, h);
	struct copen *c = slot && *slot != UINT64_MAX ? &s->open[*slot - 1] : NULL;
	if (c && (!c->live || memcmp(&c->key, &k, sizeof k) != 0))
		c = NULL;
	if (!c) {
		size_t i;
		for (i = 0; i < s->nopen && s->open[i].live; i++)
			;
		if (i == s->nopen) {
			if (s->nopen == s->capopen) {
				size_t cap = s->capopen ? 2 * s->capopen : 64;
				struct copen *no = realloc(s->open, cap * sizeof *no);
				if (!no)
					return EV_ERR_NOMEM;
				memset(no + s->capopen, 0, (cap - s->capopen) * sizeof *no);
				s->open = no;
				s->capopen = cap;
			}
			s->nopen++;
		}
		c = &s->open[i];
		uint32_t expect = comm_nranks(s, r);
		uint32_t cap = expect ? expect : 64;
		/* Slots are reused, so these grow only with the widest comm. */
		if (c->cap < cap) {
			free(c->rank); free(c->ts); free(c->end); free(c->dur);
			c->rank = malloc(cap * sizeof *c->rank);
			c->ts = malloc(cap * sizeof *c->ts);
			c->end = malloc(cap * sizeof *c->end);
			c->dur = malloc(cap * sizeof *c->dur);
			if (!c->rank || !c->ts || !c->end || !c->dur)
				return EV_ERR_NOMEM;
			c->cap = cap;
		}
		c->key = k;
		c->expect = expect ? expect : cap;
		c->seen = 0;
		c->op = r->op;
		c->dtype = r->dtype;
		c->bytes = r->bytes;
		c->live = 1;
		if ((rc = ev_map_put(&s->open_idx, h, (uint64_t)(c - s->open) + 1)) != EV_OK)
			return rc;
	}
	if (c->seen < c->expect) {
		c->rank[c->seen] = r->rank;
		c->ts[c->seen] = r->ts;
		c->end[c->seen] = ev_rec_end(r);
		c->dur[c->seen] = r->dur;
		c->seen++;
	}
	if (c->seen == c->expect && comm_nranks(s, r)) {
		rc = coll_done(s, c);
		/* Drop the index entry so the slot can be reused. */
		if (!rc)
			rc = ev_map_put(&s->open_idx, h, UINT64_MAX);
	}
	return rc;
}

static int coll_flush(struct state *s)
{
	int rc = EV_OK;
	for (size_t i = 0; i < s->nopen && !rc; i++)
		if (s->open[i].live)
			rc = coll_done(s, &s->open[i]);
	return rc;
}

static const struct groups *sort_aux;

static int cmp_src_rank(const void *a, const void *b)
{
	const struct gkey *x = GROUP_KEY(sort_aux, *(const size_t *)a), *y = GROUP_KEY(sort_aux, *(const size_t *)b);
	if (x->sg != y->sg)
		return x->sg < y->sg ? -1 : 1;
	return x->rank < y->rank ? -1 : x->rank > y->rank;
}

static int coll_rows(struct state *s, struct rowset *rs)
{
	struct colspec keys[MAX_BY + 4];
	size_t nk = 0;
	by_colspecs(s->o, keys, &nk);
	if (s->o->coll_table == CT_STRAGGLERS) {
		keys[nk++] = (struct colspec){ "rank", 1, 0 };
		static const struct colspec vals[] = {
			{ "collectives", 0, 0 }, { "times_last", 0, D_LOWER }, { "times_first", 0, D_NONE },
			{ "pct_last", 0, D_LOWER }, { "total_wait_us", 0, D_NONE }, { "mean_wait_us", 0, D_NONE },
			{ "total_coll_dur_us", 0, D_LOWER },
		};
		int rc = rowset_init(rs, keys, nk, vals, sizeof vals / sizeof vals[0]);
		size_t *ord = malloc((s->aux.keys.len + 1) * sizeof *ord);
		if (!ord)
			return EV_ERR_NOMEM;
		for (size_t i = 0; i < s->aux.keys.len; i++)
			ord[i] = i;
		sort_aux = &s->aux;
		qsort(ord, s->aux.keys.len, sizeof *ord, cmp_src_rank);
		for (size_t j = 0; !rc && j < s->aux.keys.len; j++) {
			size_t i = ord[j];
			const struct gkey *k = GROUP_KEY(&s->aux, i);
			const struct strag *st = GROUP_VAL(&s->aux, i);
			struct row *r;
			size_t n;
			struct gkey gk = *k;
			gk.rank = 0; /* the rank is this table's own key column */
			if ((rc = group_row(s, rs, &gk, &r, &n)) != EV_OK)
				break;
			rc = row_keyu(r, n, k->rank);
			r->val[0] = (double)st->colls;
			r->val[1] = (double)st->last;
			r->val[2] = (double)st->first;
			r->val[3] = st->colls ? 100.0 * (double)st->last / (double)st->colls : 0;
			r->val[4] = st->wait_us;
			r->val[5] = st->colls ? st->wait_us / (double)st->colls : 0;
			r->val[6] = st->dur_us;
		}
		free(ord);
		return rc;
	}
	keys[nk++] = (struct colspec){ "coll", 0, 0 };
	keys[nk++] = (struct colspec){ "dtype", 0, 0 };
	keys[nk++] = (struct colspec){ "bytes", 1, 0 };
	static const struct colspec vals[] = {
		{ "nranks", 0, 0 }, { "count", 0, 0 }, { "latency_mean_us", 0, D_LOWER },
		{ "latency_median_us", 0, D_LOWER }, { "latency_min_us", 0, D_LOWER }, { "latency_max_us", 0, D_LOWER },
		{ "start_skew_mean_us", 0, D_LOWER }, { "start_skew_max_us", 0, D_LOWER },
		{ "end_skew_mean_us", 0, D_LOWER }, { "end_skew_max_us", 0, D_LOWER }, { "algbw_mean_GBps", 0, D_HIGHER },
		{ "algbw_median_GBps", 0, D_HIGHER }, { "busbw_mean_GBps", 0, D_HIGHER },
		{ "busbw_median_GBps", 0, D_HIGHER }, { "total_latency_ms", 0, D_LOWER },
	};
	int rc = rowset_init(rs, keys, nk, vals, sizeof vals / sizeof vals[0]);
	for (size_t i = 0; !rc && i < s->g.keys.len; i++) {
		const struct gkey *k = GROUP_KEY(&s->g, i);
		struct cstat *cs = GROUP_VAL(&s->g, i);
		struct row *r;
		size_t n;
		if ((rc = group_row(s, rs, k, &r, &n)) != EV_OK)
			return rc;
		const char *cn = ev_coll_name((unsigned)(k->k2 >> 8)), *dn = ev_dtype_name((unsigned)(k->k2 & 0xff));
		rc = rc ? rc : row_key(r, n++, cn ? cn : "unknown");
		rc = rc ? rc : row_key(r, n++, dn ? dn : "unknown");
		rc = rc ? rc : row_keyu(r, n++, k->k1);
		double *v = r->val;
		v[0] = (double)cs->nranks;
		v[1] = (double)cs->lat.n;
		v[2] = cs->lat.mean;
		v[3] = ev_dist_quantile(&cs->lat, 0.5);
		v[4] = cs->lat.min;
		v[5] = cs->lat.max;
		v[6] = cs->sskew.mean;
		v[7] = cs->sskew.max;
		v[8] = cs->eskew.mean;
		v[9] = cs->eskew.max;
		v[10] = cs->algbw.n ? cs->algbw.mean : NAN;
		v[11] = cs->algbw.n ? ev_dist_quantile(&cs->algbw, 0.5) : NAN;
		v[12] = cs->busbw.n ? cs->busbw.mean : NAN;
		v[13] = cs->busbw.n ? ev_dist_quantile(&cs->busbw, 0.5) : NAN;
		v[14] = cs->total_lat_us / 1e3;
	}
	return rc;
}

/* ------------------------------------------------------------------ */
/* compare: join the rows of each source with the baseline's            */

static int same_keys(const struct rowset *rs, const struct row *a, const struct row *b, size_t skip)
{
	for (size_t k = 0; k < rs->nkeys; k++)
		if (k != skip && strcmp(a->key[k], b->key[k]) != 0)
			return 0;
	return 1;
}

static int compare_print(struct state *s, const struct rowset *rs, ev_output *out)
{
	/* The source column is the first key (compare forces --by src first). */
	size_t nk = rs->nkeys;
	const char **cols = malloc((nk + 9) * sizeof *cols);
	if (!cols)
		return EV_ERR_NOMEM;
	size_t n = 0;
	cols[n++] = "baseline";
	cols[n++] = "test";
	for (size_t k = 1; k < nk; k++)
		cols[n++] = rs->keys[k].name;
	cols[n++] = "metric";
	cols[n++] = "base";
	cols[n++] = "value";
	cols[n++] = "diff";
	cols[n++] = "pct";
	cols[n++] = "status";
	ev_table *t = NULL;
	int rc = ev_table_open(&t, out, s->o->fmt, cols, n);
	const struct row *rows = rs->rows.data;
	/* The baseline is the lowest source number (the first input of
	 * ev-merge), whichever source's records came first in time. */
	const struct srcgrp *sgs = s->srcgrps.data;
	uint32_t base_sg = 0, max_sg = 0;
	for (size_t i = 0; i < s->srcgrps.len; i++)
		if (sgs[i].first_src < sgs[base_sg].first_src)
			base_sg = (uint32_t)i;
	for (size_t i = 0; i < rs->rows.len; i++)
		if (rows[i].sg > max_sg)
			max_sg = rows[i].sg;
	if (rs->rows.len && s->srcgrps.len < 2 && !s->o->cli.quiet)
		ev_cli_warn(&s->o->cli, "compare: only one source in the input; nothing to compare");
	/* Tests in source order. */
	uint32_t *order = malloc((max_sg + 1) * sizeof *order);
	if (!order) {
		free(cols);
		return EV_ERR_NOMEM;
	}
	for (uint32_t k = 0; k <= max_sg; k++)
		order[k] = k;
	for (uint32_t a = 1; a <= max_sg; a++) /* insertion sort: few sources */
		for (uint32_t b = a; b > 0 && sgs[order[b]].first_src < sgs[order[b - 1]].first_src; b--) {
			uint32_t x = order[b];
			order[b] = order[b - 1];
			order[b - 1] = x;
		}
	for (uint32_t oi = 0; !rc && oi <= max_sg; oi++) {
		uint32_t sg = order[oi];
		if (sg == base_sg)
			continue;
		const char *blabel = NULL, *tlabel = NULL;
		/* Rows of the baseline, matched or only in the baseline. */
		for (size_t i = 0; !rc && i < rs->rows.len; i++) {
			const struct row *b = &rows[i];
			if (b->sg != base_sg)
				continue;
			blabel = b->key[0];
			const struct row *m = NULL;
			for (size_t j = 0; j < rs->rows.len; j++)
				if (rows[j].sg == sg && same_keys(rs, b, &rows[j], 0)) {
					m = &rows[j];
					break;
				}
			for (size_t j = 0; j < rs->rows.len && !tlabel; j++)
				if (rows[j].sg == sg)
					tlabel = rows[j].key[0];
			if (!tlabel)
				break;
			for (size_t v = 0; !rc && v < rs->nvals; v++) {
				if (rs->vals[v].dir == D_NONE && m)
					continue;
				if (m == NULL && v > 0)
					break;
				rc = ev_table_str(t, b->key[0]);
				rc = rc ? rc : ev_table_str(t, tlabel);
				for (size_t k = 1; !rc && k < nk; k++)
					rc = cell_key(t, &rs->keys[k], b->key[k]);
				if (!m) {
					rc = rc ? rc : ev_table_str(t, "");
					rc = rc ? rc : ev_table_null(t);
					rc = rc ? rc : ev_table_null(t);
					rc = rc ? rc : ev_table_null(t);
					rc = rc ? rc : ev_table_null(t);
					rc = rc ? rc : ev_table_str(t, "only-baseline");
					break;
				}
				double bv = b->val[v], tv = m->val[v], diff = tv - bv;
				double pct = bv != 0 ? 100 * diff / bv : NAN;
				const char *status = "Similar";
				if (isfinite(pct) && fabs(pct) > s->o->threshold)
					status = (pct < 0) == (rs->vals[v].dir == D_LOWER) ? "Better" : "Worse";
				else if (!isfinite(pct) && diff != 0)
					status = (diff < 0) == (rs->vals[v].dir == D_LOWER) ? "Better" : "Worse";
				rc = rc ? rc : ev_table_str(t, rs->vals[v].name);
				rc = rc ? rc : ev_table_f64(t, bv);
				rc = rc ? rc : ev_table_f64(t, tv);
				rc = rc ? rc : ev_table_f64(t, diff);
				rc = rc ? rc : ev_table_f64(t, pct);
				rc = rc ? rc : ev_table_str(t, status);
			}
		}
		/* Rows only in the test source. */
		for (size_t j = 0; !rc && j < rs->rows.len; j++) {
			const struct row *m = &rows[j];
			if (m->sg != sg)
				continue;
			int found = 0;
			for (size_t i = 0; i < rs->rows.len && !found; i++)
				found = rows[i].sg == base_sg && same_keys(rs, &rows[i], m, 0);
			if (found)
				continue;
			rc = ev_table_str(t, blabel ? blabel : "");
			rc = rc ? rc : ev_table_str(t, m->key[0]);
			for (size_t k = 1; !rc && k < nk; k++)
				rc = cell_key(t, &rs->keys[k], m->key[k]);
			rc = rc ? rc : ev_table_str(t, "");
			for (int z = 0; z < 4 && !rc; z++)
				rc = ev_table_null(t);
			rc = rc ? rc : ev_table_str(t, "only-test");
		}
	}
	int rc2 = ev_table_close(t);
	free(order);
	free(cols);
	return rc ? rc : rc2;
}

/* ------------------------------------------------------------------ */

static int dispatch(struct state *s, enum sub what, const struct ev_rec *r)
{
	switch (what) {
	case SUB_TIMELINE: return timeline_rec(s, r);
	case SUB_KERNELS: return kernels_rec(s, r, 0);
	case SUB_CATEGORIES: return kernels_rec(s, r, 1);
	case SUB_OPS: return ops_rec(s, r);
	case SUB_COLL: return coll_rec(s, r);
	case SUB_VARIANCE: return variance_rec(s, r);
	default: return EV_OK;
	}
}

static int build_rows(struct state *s, enum sub what, struct rowset *rs)
{
	switch (what) {
	case SUB_TIMELINE: return timeline_rows(s, rs);
	case SUB_KERNELS: return kernels_rows(s, rs, 0);
	case SUB_CATEGORIES: return kernels_rows(s, rs, 1);
	case SUB_OPS: return ops_rows(s, rs);
	case SUB_COLL: return coll_rows(s, rs);
	case SUB_VARIANCE: return variance_rows(s, rs);
	default: return EV_ERR_ARG;
	}
}

static void state_free(struct state *s)
{
	for (size_t i = 0; i < s->g.keys.len; i++) {
		struct kstat *ks;
		struct cstat *cs;
		switch (s->o->sub == SUB_COMPARE ? s->o->what : s->o->sub) {
		case SUB_KERNELS: case SUB_CATEGORIES: case SUB_OPS: case SUB_VARIANCE:
			ks = GROUP_VAL(&s->g, i);
			ev_dist_free(&ks->d);
			ev_dist_free(&ks->tflops);
			ev_dist_free(&ks->tbs);
			break;
		case SUB_COLL:
			cs = GROUP_VAL(&s->g, i);
			ev_dist_free(&cs->lat); ev_dist_free(&cs->sskew); ev_dist_free(&cs->eskew);
			ev_dist_free(&cs->algbw); ev_dist_free(&cs->busbw);
			break;
		default:
			break;
		}
	}
	groups_free(&s->g);
	groups_free(&s->aux);
	for (size_t i = 0; i < s->nopen; i++) {
		free(s->open[i].rank); free(s->open[i].ts); free(s->open[i].end); free(s->open[i].dur);
	}
	free(s->open);
	free(s->inst);
	ev_map_free(&s->open_idx);
	ev_map_free(&s->inst_idx);
	ev_map_free(&s->src_sg);
	ev_map_free(&s->class_cache);
	ev_map_free(&s->bucket_cache);
	for (size_t i = 0; i < s->srcgrps.len; i++)
		free(((struct srcgrp *)s->srcgrps.data)[i].keys);
	ev_vec_free(&s->srcgrps);
	ev_meta_free(s->meta);
	ev_strtab_free(s->st);
}

static size_t val_size(enum sub what)
{
	switch (what) {
	case SUB_TIMELINE: return sizeof(struct tl);
	case SUB_COLL: return sizeof(struct cstat);
	default: return sizeof(struct kstat);
	}
}

static int run(struct opts *o)
{
	struct state s;
	int status = 0, rc = EV_OK;
	enum sub what = o->sub == SUB_COMPARE ? o->what : o->sub;
	memset(&s, 0, sizeof s);
	s.o = o;
	s.pool.budget = o->exact_limit;
	s.st = ev_strtab_new();
	s.meta = ev_meta_new();
	groups_init(&s.g, val_size(what));
	groups_init(&s.aux, sizeof(struct strag));
	ev_vec_init(&s.srcgrps, sizeof(struct srcgrp));
	ev_map_init(&s.src_sg);
	ev_map_init(&s.class_cache);
	ev_map_init(&s.bucket_cache);
	ev_map_init(&s.open_idx);
	ev_map_init(&s.inst_idx);
	ev_output *out = NULL;
	if (!s.st || !s.meta) {
		status = ev_cli_error(&o->cli, "out of memory");
		goto done;
	}
	if ((rc = ev_output_open(&out, o->cli.output)) != EV_OK) {
		status = ev_cli_file_error(&o->cli, o->cli.output, rc);
		goto done;
	}
	if (what == SUB_COLL && o->coll_table == CT_EACH &&
	    (rc = ev_table_open(&s.each, out, o->fmt, each_cols, sizeof each_cols / sizeof each_cols[0])) != EV_OK) {
		status = ev_cli_file_error(&o->cli, o->cli.output, rc);
		goto done;
	}
	for (int i = 0; i < o->ninputs && !status; i++) {
		ev_reader *r = NULL;
		struct ev_rec rec;
		if ((rc = ev_reader_open(&r, o->inputs[i], s.st, s.meta)) != EV_OK) {
			status = ev_cli_file_error(&o->cli, o->inputs[i], rc);
			break;
		}
		ev_reader_skip_text(r, 1);
		while ((rc = ev_read(r, &rec)) == EV_REC) {
			rc = dispatch(&s, what, &rec);
			if (rc == EV_ERR_ORDER) {
				status = ev_cli_error(&o->cli, "%s: record %llu: out of order (rank %u, ts %lld); sort with ev-merge --sort",
				                      ev_reader_name(r), (unsigned long long)ev_reader_recno(r), rec.rank,
				                      (long long)rec.ts);
				break;
			}
			if (rc < 0) {
				status = rc == EV_ERR_PIPE ? 1 : ev_cli_file_error(&o->cli, o->cli.output, rc);
				break;
			}
			s.nrec++;
		}
		if (!status && rc < 0)
			status = ev_cli_reader_error(&o->cli, r, rc);
		ev_reader_close(r);
	}
	if (status)
		goto done;
	if (what == SUB_COLL && (rc = coll_flush(&s)) != EV_OK) {
		status = ev_cli_file_error(&o->cli, o->cli.output, rc);
		goto done;
	}
	if (s.incomplete && !o->cli.quiet)
		ev_cli_warn(&o->cli, "%llu collectives were not seen on every rank of their communicator",
		            (unsigned long long)s.incomplete);
	if (s.pool.sketched && !o->cli.quiet)
		ev_cli_warn(&o->cli, "quantiles of the largest groups come from a sketch (within %.1f%%): over --exact-limit",
		            EV_DIST_SKETCH_ERR * 100);
	if (what == SUB_COLL && o->coll_table == CT_EACH) {
		rc = ev_table_close(s.each);
		s.each = NULL;
	} else {
		struct rowset rs;
		memset(&rs, 0, sizeof rs);
		rc = build_rows(&s, what, &rs);
		if (!rc)
			rc = o->sub == SUB_COMPARE ? compare_print(&s, &rs, out) : rowset_print(&rs, out, o->fmt);
		rowset_free(&rs);
	}
	if (rc) {
		status = ev_cli_file_error(&o->cli, o->cli.output, rc);
		goto done;
	}
	rc = ev_output_close(out);
	out = NULL;
	if (rc)
		status = ev_cli_file_error(&o->cli, o->cli.output, rc);
done:
	if (s.each) {
		int ignored = ev_table_close(s.each); /* already failing */
		(void)ignored;
	}
	if (out)
		ev_output_abort(out);
	state_free(&s);
	return status;
}

/* ------------------------------------------------------------------ */

/* --by key names, kept until exit (the options refer to them). */
static char *by_key_store[4 * MAX_BY];
static size_t nby_key_store;

static void free_by_keys(void)
{
	for (size_t i = 0; i < nby_key_store; i++)
		free(by_key_store[i]);
	nby_key_store = 0;
}

static int parse_by(struct opts *o, const char *arg)
{
	char *copy = strdup(arg), *save = NULL;
	if (!copy)
		return -1;
	o->nby = 0;
	for (char *w = strtok_r(copy, ",", &save); w; w = strtok_r(NULL, ",", &save)) {
		if (o->nby == MAX_BY) {
			free(copy);
			return -1;
		}
		if (!strcmp(w, "src")) {
			o->by[o->nby++] = BY_SRC;
		} else if (!strcmp(w, "rank")) {
			o->by[o->nby++] = BY_RANK;
		} else if (!strcmp(w, "stream")) {
			o->by[o->nby++] = BY_STREAM;
		} else {
			if (nby_key_store == sizeof by_key_store / sizeof by_key_store[0] ||
			    !(by_key_store[nby_key_store] = strdup(w))) {
				free(copy);
				return -1;
			}
			o->by_key[o->nby] = by_key_store[nby_key_store++];
			o->by[o->nby++] = BY_SRCKEY;
		}
	}
	free(copy);
	return 0;
}

int main(int argc, char **argv)
{
	static const struct option longopts[] = {
		EV_CLI_COMMON_LONG,
		{ "by", required_argument, NULL, 1 },
		{ "rules", required_argument, NULL, 2 },
		{ "include-unlinked", no_argument, NULL, 3 },
		{ "no-hta", no_argument, NULL, 4 },
		{ "class", required_argument, NULL, 5 },
		{ "key", required_argument, NULL, 6 },
		{ "top", required_argument, NULL, 7 },
		{ "table", required_argument, NULL, 8 },
		{ "what", required_argument, NULL, 9 },
		{ "threshold", required_argument, NULL, 10 },
		{ "exact-limit", required_argument, NULL, 11 },
		{ "csv", no_argument, NULL, 12 },
		{ "json", no_argument, NULL, 13 },
		{ "md", no_argument, NULL, 14 },
		{ "tsv", no_argument, NULL, 15 },
		{ "tracelens-float", no_argument, NULL, 16 },
		{ NULL, 0, NULL, 0 },
	};
	struct opts o;
	int c;
	memset(&o, 0, sizeof o);
	ev_cli_init(&o.cli, "ev-stats");
	atexit(free_by_keys);
	o.class_mask = 1u << EV_KC_GEMM;
	o.threshold = 1.0;
	o.exact_limit = 16000000;
	o.what = SUB_TIMELINE;
	while ((c = getopt_long(argc, argv, "+" EV_CLI_COMMON_SHORT, longopts, NULL)) != -1) {
		switch (ev_cli_common(&o.cli, c, optarg)) {
		case EV_CLI_HANDLED: continue;
		case EV_CLI_WANT_HELP: usage(stdout); return ev_cli_finish(&o.cli, 0);
		case EV_CLI_DONE: return ev_cli_finish(&o.cli, 0);
		default: break;
		}
		return ev_cli_try_help(&o.cli);
	}
	if (optind >= argc)
		return ev_cli_usage_error(&o.cli, "missing subcommand (timeline, kernels, categories, ops, coll, variance, compare)");
	const char *subname = argv[optind];
	/* The subcommand's options may follow its files: restart GNU getopt
	 * (optind 0) on the words after the subcommand, permuting again. */
	argc -= optind;
	argv += optind;
	optind = 0;
	size_t nsub = sizeof sub_names / sizeof sub_names[0], k;
	for (k = 0; k < nsub && strcmp(subname, sub_names[k]); k++)
		;
	if (k == nsub)
		return ev_cli_usage_error(&o.cli, "unknown subcommand '%s'", subname);
	o.sub = (enum sub)k;
	while ((c = getopt_long(argc, argv, EV_CLI_COMMON_SHORT, longopts, NULL)) != -1) {
		switch (ev_cli_common(&o.cli, c, optarg)) {
		case EV_CLI_HANDLED: continue;
		case EV_CLI_WANT_HELP: usage(stdout); return ev_cli_finish(&o.cli, 0);
		case EV_CLI_DONE: return ev_cli_finish(&o.cli, 0);
		default: break;
		}
		switch (c) {
		case 1:
			if (parse_by(&o, optarg))
				return ev_cli_usage_error(&o.cli, "--by: at most %d fields, got '%s'", MAX_BY, optarg);
			o.by_given = 1;
			break;
		case 2:
			if (ev_rules_parse(optarg, &o.rules) != EV_OK)
				return ev_cli_usage_error(&o.cli, "--rules: expected tracelens, tracelens-2025 or hta, got '%s'", optarg);
			break;
		case 3: o.unlinked = 1; break;
		case 4: o.no_hta = 1; break;
		case 5:
			if (ev_kclass_list_parse(optarg, &o.class_mask) != EV_OK)
				return ev_cli_usage_error(&o.cli, "--class: unknown kernel class in '%s'", optarg);
			o.class_given = 1;
			break;
		case 6:
			if (!strcmp(optarg, "name")) o.key_name = 1;
			else if (!strcmp(optarg, "sig")) o.key_name = 0;
			else return ev_cli_usage_error(&o.cli, "--key: expected name or sig, got '%s'", optarg);
			break;
		case 7:
			if (ev_parse_u64(optarg, &o.top) != EV_OK || o.top == 0)
				return ev_cli_usage_error(&o.cli, "--top: expected a positive count, got '%s'", optarg);
			break;
		case 8:
			if (!strcmp(optarg, "summary")) o.coll_table = CT_SUMMARY;
			else if (!strcmp(optarg, "each")) o.coll_table = CT_EACH;
			else if (!strcmp(optarg, "stragglers")) o.coll_table = CT_STRAGGLERS;
			else return ev_cli_usage_error(&o.cli, "--table: expected summary, each or stragglers, got '%s'", optarg);
			break;
		case 9: {
			size_t w;
			for (w = 0; w < SUB_VARIANCE && strcmp(optarg, sub_names[w]); w++)
				;
			if (w == SUB_VARIANCE || w == SUB_CATEGORIES)
				return ev_cli_usage_error(&o.cli, "--what: expected timeline, kernels, ops or coll, got '%s'", optarg);
			o.what = (enum sub)w;
			break;
		}
		case 10:
			if (ev_parse_double(optarg, &o.threshold) != EV_OK || o.threshold < 0)
				return ev_cli_usage_error(&o.cli, "--threshold: expected a percentage, got '%s'", optarg);
			break;
		case 11:
			if (ev_parse_u64(optarg, &o.exact_limit) != EV_OK)
				return ev_cli_usage_error(&o.cli, "--exact-limit: expected a count, got '%s'", optarg);
			break;
		case 12: o.fmt = EV_TABLE_CSV; break;
		case 13: o.fmt = EV_TABLE_JSON; break;
		case 14: o.fmt = EV_TABLE_MD; break;
		case 15: o.fmt = EV_TABLE_TSV; break;
		case 16: o.float_us = 1; break;
		default: return ev_cli_try_help(&o.cli);
		}
	}
	enum sub what = o.sub == SUB_COMPARE ? o.what : o.sub;
	if (!o.by_given) {
		if (what == SUB_TIMELINE)
			parse_by(&o, "src,rank");
		else if (what == SUB_COLL || what == SUB_VARIANCE || o.sub == SUB_COMPARE)
			parse_by(&o, "src");
	}
	if (o.sub == SUB_COMPARE && (o.nby == 0 || o.by[0] != BY_SRC)) {
		/* Sources are what compare compares: src is always the first key. */
		memmove(o.by + 1, o.by, (size_t)(MAX_BY - 1) * sizeof o.by[0]);
		memmove(o.by_key + 1, o.by_key, (size_t)(MAX_BY - 1) * sizeof o.by_key[0]);
		o.by[0] = BY_SRC;
		if (o.nby < MAX_BY)
			o.nby++;
	}
	static char *stdin_only[] = { (char *)"-" };
	o.inputs = optind < argc ? argv + optind : stdin_only;
	o.ninputs = optind < argc ? argc - optind : 1;
	return ev_cli_finish(&o.cli, run(&o));
}
