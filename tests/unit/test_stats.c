/* SPDX-License-Identifier: MIT */
/*
 * test_stats.c - unit tests of the stats library (include/ev/stats.h):
 * the (comm, seq) collective matcher, saturating time arithmetic, the GEMM
 * model, the analyses driven record by record, the registry, an analysis
 * defined here run through the same driver, and compare's pairing.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ev.h"
#include "unit.h"

/* ---- collmatch ---- */

struct seen {
	int n, complete, incomplete;
	uint32_t last_seen, last_expect;
	uint64_t last_seq, order[64];
	int64_t tsum;
};

static int on_done(void *ctx, const struct ev_coll_done *d)
{
	struct seen *s = ctx;
	if (s->n < 64)
		s->order[s->n] = d->key.seq;
	s->n++;
	s->complete += d->complete;
	s->incomplete += !d->complete;
	s->last_seen = d->seen;
	s->last_expect = d->expect;
	s->last_seq = d->key.seq;
	for (uint32_t i = 0; i < d->seen; i++)
		s->tsum += d->arr[i].ts;
	return EV_OK;
}

static struct ev_rec coll(uint32_t rank, int64_t ts, uint64_t dur)
{
	struct ev_rec r;
	ev_rec_init(&r);
	r.type = EV_COLL;
	r.op = EV_OP_ALLREDUCE;
	r.rank = rank;
	r.ts = ts;
	r.dur = dur;
	return r;
}

static void test_collmatch_complete(void)
{
	struct seen s = { 0 };
	ev_collmatch *m = NULL;
	CHECK(ev_collmatch_new(&m, NULL, on_done, &s) == EV_OK);
	struct ev_coll_key k = { 0, 7, 1, 0 };
	struct ev_coll_arrival prev;
	struct ev_rec r = coll(2, 100, 10);
	CHECK(ev_collmatch_add(m, &k, 3, &r, 42, &prev) == EV_OK);
	CHECK(prev.rank == UINT32_MAX && s.n == 0);
	/* Another collective in between, and another group with the same key. */
	struct ev_coll_key k2 = { 0, 7, 2, 0 }, k3 = { 1, 7, 1, 0 };
	r = coll(0, 105, 1);
	CHECK(ev_collmatch_add(m, &k2, 3, &r, 0, NULL) == EV_OK);
	CHECK(ev_collmatch_add(m, &k3, 3, &r, 0, NULL) == EV_OK);
	r = coll(0, 110, 10);
	CHECK(ev_collmatch_add(m, &k, 3, &r, 43, &prev) == EV_OK);
	CHECK(prev.rank == 2 && prev.ts == 100 && prev.data == 42);
	r = coll(1, 120, 10);
	CHECK(ev_collmatch_add(m, &k, 3, &r, 44, NULL) == EV_OK);
	CHECK(s.n == 1 && s.complete == 1 && s.last_seen == 3 && s.last_seq == 1 && s.tsum == 330);
	/* The key is free again: the next arrival opens a new collective. */
	r = coll(1, 130, 10);
	CHECK(ev_collmatch_add(m, &k, 3, &r, 0, &prev) == EV_OK && prev.rank == UINT32_MAX);
	CHECK(ev_collmatch_flush(m) == EV_OK);
	struct ev_collmatch_counts c;
	ev_collmatch_get_counts(m, &c);
	CHECK(c.complete == 1 && c.flushed == 3 && c.evicted == 0 && c.unsized == 0 && c.open_peak == 3);
	/* Flushed oldest first: k2, k3, then the reopened k. */
	CHECK(s.n == 4 && s.order[1] == 2 && s.order[2] == 1 && s.order[3] == 1);
	ev_collmatch_free(m);
}

static void test_collmatch_bounds(void)
{
	struct seen s = { 0 };
	ev_collmatch *m = NULL;
	struct ev_collmatch_limits lim = { 4, 0 };
	CHECK(ev_collmatch_new(&m, &lim, on_done, &s) == EV_OK);
	/* 100 collectives that never complete: at most 4 are open. */
	for (uint64_t i = 0; i < 100; i++) {
		struct ev_coll_key k = { 0, 9, i, 0 };
		struct ev_rec r = coll(0, (int64_t)i, 1);
		CHECK(ev_collmatch_add(m, &k, 2, &r, 0, NULL) == EV_OK);
	}
	struct ev_collmatch_counts c;
	ev_collmatch_get_counts(m, &c);
	CHECK(c.evicted == 96 && c.open_peak == 4 && s.order[0] == 0 && s.order[1] == 1);
	/* Size unknown: released only by flush, counted. */
	struct ev_coll_key k = { 0, 10, 0, 0 };
	struct ev_rec r = coll(0, 200, 1);
	CHECK(ev_collmatch_add(m, &k, 0, &r, 0, NULL) == EV_OK);
	CHECK(ev_collmatch_flush(m) == EV_OK);
	ev_collmatch_get_counts(m, &c);
	CHECK(c.evicted == 97 && c.flushed == 4 && c.unsized == 1 && s.incomplete == 101 && s.complete == 0);
	ev_collmatch_free(m);
	/* A held-arrivals bound releases the oldest even when few are open. */
	memset(&s, 0, sizeof s);
	struct ev_collmatch_limits lim2 = { 0, 10 };
	CHECK(ev_collmatch_new(&m, &lim2, on_done, &s) == EV_OK);
	for (uint32_t i = 0; i < 12; i++) {
		struct ev_coll_key kk = { 0, 11, i / 6, 0 };
		r = coll(i % 6, i, 1);
		CHECK(ev_collmatch_add(m, &kk, 1000000, &r, 0, NULL) == EV_OK);
	}
	ev_collmatch_get_counts(m, &c);
	CHECK(c.evicted == 1 && s.last_seen == 6 && s.last_expect == 1000000);
	ev_collmatch_free(m);
}

/* Many interleaved keys completing out of order exercise the hash
 * table's growth and backward-shift deletion. */
static void test_collmatch_many(void)
{
	struct seen s = { 0 };
	ev_collmatch *m = NULL;
	CHECK(ev_collmatch_new(&m, NULL, on_done, &s) == EV_OK);
	const uint64_t n = 5000;
	for (uint32_t rank = 0; rank < 4; rank++)
		for (uint64_t i = 0; i < n; i++) {
			uint64_t seq = rank % 2 ? n - 1 - i : i;
			struct ev_coll_key k = { seq % 3, 1 + seq % 5, seq, 0 };
			struct ev_rec r = coll(rank, 1, 1);
			if (ev_collmatch_add(m, &k, 4, &r, 0, NULL) != EV_OK)
				failures++;
		}
	CHECK(ev_collmatch_flush(m) == EV_OK);
	struct ev_collmatch_counts c;
	ev_collmatch_get_counts(m, &c);
	CHECK(c.complete == n && c.flushed == 0 && s.incomplete == 0);
	ev_collmatch_free(m);
}

/* ---- time arithmetic, GEMM model ---- */

static void test_time_sat(void)
{
	struct ev_rec r;
	ev_rec_init(&r);
	r.ts = 100;
	r.dur = 5;
	CHECK(ev_rec_end(&r) == 105);
	r.ts = INT64_MAX - 3;
	r.dur = 10;
	CHECK(ev_rec_end(&r) == INT64_MAX);
	r.dur = UINT64_MAX;
	CHECK(ev_rec_end(&r) == INT64_MAX);
	r.ts = INT64_MIN;
	r.dur = UINT64_MAX;
	CHECK(ev_rec_end(&r) == INT64_MAX);
	r.dur = (uint64_t)INT64_MAX + 10;
	CHECK(ev_rec_end(&r) == 9);
	r.ts = -5;
	r.dur = 3;
	CHECK(ev_rec_end(&r) == -2);
	CHECK(ev_span(INT64_MIN, INT64_MAX) == UINT64_MAX);
	CHECK(ev_span(5, 3) == 0 && ev_span(-3, 4) == 7);
}

static void test_gemm_model(void)
{
	double g, mb;
	ev_gemm_model("aten::mm dims=[[1024,90112],[90112,4608]] types=[\"c10::BFloat16\",\"c10::BFloat16\"]", &g, &mb);
	CHECK(fabs(g - 2.0 * 1024 * 90112 * 4608 / 1e9) < 1e-9);
	CHECK(fabs(mb - (1024.0 * 90112 * 2 + 90112.0 * 4608 * 2 + 1024.0 * 4608 * 2) / 1048576) < 1e-9);
	ev_gemm_model("aten::addmm dims=[[4608],[8,16],[16,4608]] types=[\"float\",\"float\",\"float\"]", &g, &mb);
	CHECK(fabs(g - (2.0 * 8 * 4608 * 16 + 8.0 * 4608) / 1e9) < 1e-15);
	ev_gemm_model("aten::bmm dims=[[4,8,16],[4,16,32]]", &g, &mb);
	CHECK(fabs(g - 2.0 * 4 * 8 * 16 * 32 / 1e9) < 1e-15 && mb == 0);
	ev_gemm_model("aten::add dims=[[4],[4]]", &g, &mb);
	CHECK(g == 0 && mb == 0);
	ev_gemm_model("aten::mm", &g, &mb);
	CHECK(g == 0 && mb == 0);
}

/* ---- the analyses ---- */

struct env { ev_strtab *st; ev_meta *meta; ev_stats *s; };

static int env_open(struct env *e, struct ev_stats_opts *o, const char *const *meta)
{
	e->st = ev_strtab_new();
	e->meta = ev_meta_new();
	for (size_t i = 0; meta && meta[i]; i++)
		if (ev_meta_add_line(e->meta, meta[i], strlen(meta[i])) != EV_OK)
			return -1;
	if (!o->exact_limit)
		o->exact_limit = 1000;
	return ev_stats_new(&e->s, o, e->st, e->meta);
}

static void env_close(struct env *e)
{
	ev_stats_free(e->s);
	ev_meta_free(e->meta);
	ev_strtab_free(e->st);
}

static uint64_t intern(struct env *e, const char *s)
{
	uint64_t id = 0;
	if (ev_strtab_intern(e->st, s, strlen(s), &id) != EV_OK)
		failures++;
	return id;
}

static struct ev_rec kernel(struct env *e, uint16_t src, uint32_t rank, int64_t ts, uint64_t dur, const char *name)
{
	struct ev_rec r;
	ev_rec_init(&r);
	r.type = EV_KERNEL;
	r.src = src;
	r.rank = rank;
	r.ts = ts;
	r.dur = dur;
	r.name = intern(e, name);
	return r;
}

static const struct ev_row *row(const struct ev_rowset *rs, size_t i)
{
	return i < rs->rows.len ? (const struct ev_row *)rs->rows.data + i : NULL;
}

static void test_stats_kernels(void)
{
	struct env e;
	struct ev_stats_opts o = { 0 };
	o.analysis = ev_stats_find("kernels");
	o.by[0] = EV_BY_RANK;
	o.nby = 1;
	CHECK(env_open(&e, &o, NULL) == EV_OK);
	/* Rank 0: a 3 us + 1 us, b 4 us; rank 1: b 2 us. */
	struct ev_rec r[] = { kernel(&e, 0, 0, 0, 3000, "a"), kernel(&e, 0, 1, 0, 2000, "b"),
		              kernel(&e, 0, 0, 5000, 4000, "b"), kernel(&e, 0, 0, 9000, 1000, "a") };
	for (size_t i = 0; i < 4; i++)
		CHECK(ev_stats_add(e.s, &r[i]) == EV_OK);
	CHECK(ev_stats_finish(e.s) == EV_OK);
	struct ev_rowset rs;
	CHECK(ev_stats_rows(e.s, &rs) == EV_OK);
	CHECK(rs.rows.len == 3 && rs.nkeys == 3 && !strcmp(rs.keys[0].name, "rank"));
	/* Rank 0 largest sum first, percent of its rank's kernel time. */
	const struct ev_row *a = row(&rs, 0), *b = row(&rs, 1), *c = row(&rs, 2);
	CHECK(a && !strcmp(a->key[0], "0") && !strcmp(a->key[1], "a") && a->val[1] == 4 && a->val[9] == 50);
	CHECK(b && !strcmp(b->key[1], "b") && b->val[1] == 4 && b->val[9] == 50);
	CHECK(c && !strcmp(c->key[0], "1") && c->val[9] == 100 && c->val[0] == 1);
	struct ev_stats_counts n;
	ev_stats_get_counts(e.s, &n);
	CHECK(n.records == 4 && n.gpu == 4 && n.kernels == 4 && n.with_sig == 0);
	ev_rowset_free(&rs);
	env_close(&e);
}

/* A table per kernel name holds a group per name: no more state than it
 * uses (ops' GEMM numbers are ops' own), and past max_names the other
 * names share one row, counted. */
static void test_stats_kernels_fold(void)
{
	CHECK(ev_stats_find("kernels")->group_size <= 176);
	CHECK(ev_stats_find("categories")->group_size <= 176);
	struct env e;
	struct ev_stats_opts o = { 0 };
	o.analysis = ev_stats_find("kernels");
	o.max_names = 2;
	CHECK(env_open(&e, &o, NULL) == EV_OK);
	struct ev_rec r[] = { kernel(&e, 0, 0, 0, 1000, "a"), kernel(&e, 0, 0, 1000, 3000, "b"),
		              kernel(&e, 0, 0, 4000, 4000, "c"), kernel(&e, 0, 0, 8000, 8000, "d"),
		              kernel(&e, 0, 0, 16000, 1000, "a"), kernel(&e, 0, 0, 17000, 16000, "c") };
	for (size_t i = 0; i < 6; i++)
		CHECK(ev_stats_add(e.s, &r[i]) == EV_OK);
	CHECK(ev_stats_finish(e.s) == EV_OK);
	struct ev_rowset rs;
	CHECK(ev_stats_rows(e.s, &rs) == EV_OK);
	CHECK(rs.rows.len == 3);
	const struct ev_row *x = row(&rs, 0), *a = row(&rs, 2), *b = row(&rs, 1);
	CHECK(x && !strcmp(x->key[0], "(other names)") && x->val[0] == 3 && x->val[1] == 28);
	CHECK(a && !strcmp(a->key[0], "a") && a->val[0] == 2);
	CHECK(b && !strcmp(b->key[0], "b") && b->val[0] == 1);
	struct ev_stats_counts n;
	ev_stats_get_counts(e.s, &n);
	CHECK(n.folded_kernels == 3 && n.folded_names == 2);
	ev_rowset_free(&rs);
	env_close(&e);
}

static void test_stats_timeline_order(void)
{
	struct env e;
	struct ev_stats_opts o = { 0 };
	o.analysis = ev_stats_find("timeline");
	o.no_hta = 1;
	CHECK(env_open(&e, &o, NULL) == EV_OK);
	struct ev_rec a = kernel(&e, 0, 0, 1000, 500, "k"), b = kernel(&e, 0, 0, 900, 10, "k");
	CHECK(ev_stats_add(e.s, &a) == EV_OK);
	CHECK(ev_stats_add(e.s, &b) == EV_ERR_ORDER);
	env_close(&e);
}

/* coll by configuration: the rank files of one run pool; labelled runs do not. */
static void test_stats_coll_config(void)
{
	static const char *const meta[] = {
		"#src 0 file=r0/trace.json rank=0 base_ns=5", "#src 1 file=r1/trace.json rank=1 base_ns=5",
		"#src 2 label=test file=t0.json rank=0", "#src 3 label=test file=t1.json rank=1",
		"#comm 3 nranks=2 ranks=0,1", NULL,
	};
	CHECK(ev_stats_is_process_key("host") && ev_stats_is_process_key("file") && !ev_stats_is_process_key("threads"));
	struct env e;
	struct ev_stats_opts o = { 0 };
	o.analysis = ev_stats_find("coll");
	o.by[0] = EV_BY_CONFIG;
	o.nby = 1;
	CHECK(env_open(&e, &o, meta) == EV_OK);
	for (uint16_t src = 0; src < 4; src++)
		for (uint32_t seq = 0; seq < 3; seq++) {
			struct ev_rec r = coll(src % 2, 1000 * seq + src, 100);
			r.src = src;
			r.comm = 3;
			r.seq = seq;
			r.bytes = 1024;
			CHECK(ev_stats_add(e.s, &r) == EV_OK);
		}
	CHECK(ev_stats_finish(e.s) == EV_OK);
	struct ev_rowset rs;
	CHECK(ev_stats_rows(e.s, &rs) == EV_OK);
	CHECK(rs.rows.len == 2 && ev_stats_nsrcgroups(e.s) == 2);
	const struct ev_row *a = row(&rs, 0), *b = row(&rs, 1);
	CHECK(a && !strcmp(a->key[0], "*") && a->val[0] == 2 && a->val[1] == 3 && a->val[6] == 0.001);
	CHECK(b && !strcmp(b->key[0], "test") && b->val[1] == 3);
	struct ev_stats_counts n;
	ev_stats_get_counts(e.s, &n);
	CHECK(n.coll == 12 && n.coll_incomplete == 0);
	ev_rowset_free(&rs);
	env_close(&e);
}

/* The registry: every row complete, names unique, found by name, and the
 * --table indices of include/ev/stats.h in its tables' order. */
static void test_stats_registry(void)
{
	size_t n = 0;
	for (; ev_stats_registry[n]; n++) {
		const struct ev_stats_analysis *a = ev_stats_registry[n];
		CHECK(a->name && a->sheet && a->help && a->rec && a->rows && ev_stats_find(a->name) == a);
		for (size_t j = 0; j < n; j++)
			CHECK(strcmp(ev_stats_registry[j]->name, a->name) != 0);
		CHECK(!a->tables || !strcmp(ev_stats_sheet(a, 0), a->sheet));
	}
	CHECK(n == 20 && ev_stats_find("compare") == NULL && ev_stats_find("") == NULL);
	/* Excel takes sheet names of at most 31 characters. */
	for (size_t i = 0; ev_stats_registry[i]; i++)
		for (unsigned t = 0; ev_stats_registry[i]->tables && ev_stats_registry[i]->tables[t].name; t++)
			CHECK(strlen(ev_stats_sheet(ev_stats_registry[i], t)) <= 31);
	CHECK(!strcmp(ev_stats_sheet(ev_stats_find("idle"), 0), "get_idle_time_breakdown"));
	CHECK(!strcmp(ev_stats_find("queue")->sheet, "get_queue_length_summary"));
	const struct ev_stats_analysis *c = ev_stats_find("coll"), *sh = ev_stats_find("short");
	CHECK(c && !strcmp(c->tables[EV_COLL_EACH].name, "each") && c->tables[EV_COLL_EACH].stream_cols);
	CHECK(c && !strcmp(ev_stats_sheet(c, EV_COLL_STRAGGLERS), "coll_stragglers"));
	CHECK(sh && !strcmp(sh->tables[EV_SHORT_HISTOGRAM].name, "histogram"));
	CHECK(!strcmp(ev_stats_sheet(ev_stats_find("kernels"), 0), "kernel_summary"));
	CHECK(!strcmp(ev_stats_sheet(ev_stats_find("perf"), 0), "GEMM"));
}

/* A table defined in this file, not in the registry: records per type.
 * The driver takes its row like any other; it sees only include/ev. */
struct per_type { uint64_t n[EV_TYPE_MAX + 1]; int finished; };
static int per_type_frees;

static int per_type_rec(ev_stats *s, const struct ev_rec *r)
{
	struct per_type *p = ev_stats_state(s);
	p->n[r->type & EV_TYPE_MAX]++;
	return EV_OK;
}

static int per_type_finish(ev_stats *s)
{
	struct per_type *p = ev_stats_state(s);
	p->finished = 1;
	return EV_OK;
}

static int per_type_rows(ev_stats *s, struct ev_rowset *rs)
{
	static const struct ev_colspec keys[] = { { "type", 0, 0 } };
	static const struct ev_colspec vals[] = { { "records", 0, EV_DIR_NONE } };
	const struct per_type *p = ev_stats_state(s);
	int rc = ev_rowset_init(rs, keys, 1, vals, 1);
	for (unsigned t = 0; !rc && t <= EV_TYPE_MAX; t++) {
		if (!p->n[t])
			continue;
		struct ev_row *row = ev_rowset_add(rs, 0);
		if (!row)
			return EV_ERR_NOMEM;
		rc = ev_row_key(row, 0, ev_type_name(t));
		row->val[0] = (double)p->n[t];
	}
	return rc;
}

static void per_type_free(ev_stats *s)
{
	(void)s;
	per_type_frees++;
}

static const struct ev_stats_analysis per_type = {
	.name = "per-type",
	.sheet = "records_per_type",
	.help = "records per record type",
	.state_size = sizeof(struct per_type),
	.rec = per_type_rec,
	.finish = per_type_finish,
	.rows = per_type_rows,
	.free = per_type_free,
};

/* The rows of rs as TSV text (static buffer), or NULL. */
static const char *rowset_text(const struct ev_rowset *rs)
{
	static char buf[4096];
	char path[] = "/tmp/ev-rowset-XXXXXX";
	int fd = mkstemp(path);
	ev_output *out = NULL;
	if (fd < 0 || ev_output_open(&out, path) != EV_OK)
		return NULL;
	int rc = ev_rowset_print(rs, out, EV_TABLE_TSV);
	rc = rc ? rc : ev_output_close(out);
	unit_read_back(path, fd, buf, sizeof buf);
	return rc ? NULL : buf;
}

static void test_stats_own_analysis(void)
{
	struct env e;
	struct ev_stats_opts o = { 0 };
	o.analysis = &per_type;
	CHECK(env_open(&e, &o, NULL) == EV_OK);
	struct ev_rec r[] = { kernel(&e, 0, 0, 0, 10, "a"), coll(0, 5, 1), kernel(&e, 0, 1, 1, 10, "b"),
		              coll(1, 6, 1), kernel(&e, 0, 0, 20, 10, "a") };
	r[1].bytes = 8;
	struct ev_rec m;
	ev_rec_init(&m);
	m.type = EV_MEMCPY;
	for (size_t i = 0; i < sizeof r / sizeof r[0]; i++)
		CHECK(ev_stats_add(e.s, &r[i]) == EV_OK);
	CHECK(ev_stats_add(e.s, &m) == EV_OK);
	const struct per_type *p = ev_stats_state(e.s);
	CHECK(p && p->n[EV_KERNEL] == 3 && p->n[EV_COLL] == 2 && p->n[EV_MEMCPY] == 1 && !p->finished);
	CHECK(ev_stats_finish(e.s) == EV_OK && p->finished);
	struct ev_rowset rs;
	CHECK(ev_stats_rows(e.s, &rs) == EV_OK);
	CHECK(rs.rows.len == 3 && rs.nkeys == 1 && rs.nvals == 1);
	const char *t = rowset_text(&rs);
	CHECK(t && !strcmp(t, "type\trecords\nkernel\t3\nmemcpy\t1\ncoll\t2\n"));
	/* The driver's own counts come with any analysis. */
	struct ev_stats_counts n;
	ev_stats_get_counts(e.s, &n);
	CHECK(n.records == 6 && n.gpu == 4 && n.kernels == 3);
	CHECK(ev_stats_options(e.s)->analysis == &per_type && !strcmp(ev_stats_sheet(&per_type, 0), "records_per_type"));
	CHECK(!strcmp(ev_stats_str(e.s, r[0].name), "a"));
	ev_rowset_free(&rs);
	CHECK(per_type_frees == 0);
	env_close(&e);
	CHECK(per_type_frees == 1);
}

static char *compare_text(struct env *e, const struct ev_rowset *rs, struct ev_compare_counts *cc)
{
	char path[] = "/tmp/ev-compare-XXXXXX";
	int fd = mkstemp(path);
	ev_output *out = NULL;
	struct ev_compare_opts co = { .threshold = 1.0, .fmt = EV_TABLE_TSV };
	if (fd < 0 || ev_output_open(&out, path) != EV_OK)
		return NULL;
	int rc = ev_stats_compare(e->s, rs, &co, out, cc);
	rc = rc ? rc : ev_output_close(out);
	static char buf[4096];
	unit_read_back(path, fd, buf, sizeof buf);
	return rc ? NULL : buf;
}

/* HTA's launches are remembered in a window of the last 65,536 calls of a
 * rank, grown as calls come: a kernel finds its call inside the window,
 * across the growth, and not once the call has left it. */
static void test_hta_launch_window(void)
{
	struct ev_stats_opts o = { .analysis = ev_stats_find("launch") };
	struct env e;
	CHECK(env_open(&e, &o, NULL) == EV_OK);
	uint64_t launch = intern(&e, "cudaLaunchKernel");
	const uint32_t ncalls = 70000;
	for (uint32_t i = 1; i <= ncalls; i++) {
		struct ev_rec r;
		ev_rec_init(&r);
		r.type = EV_API;
		r.stream = 1;
		r.ts = (int64_t)i * 1000;
		r.dur = 1000;
		r.name = launch;
		r.id = i;
		CHECK(ev_stats_add(e.s, &r) == EV_OK);
	}
	/* Calls 1..4464 have left the window; 4465..70000 are in it. */
	const uint32_t corr[] = { 1, 4464, 4465, 300, 60000, ncalls };
	for (size_t i = 0; i < sizeof corr / sizeof corr[0]; i++) {
		struct ev_rec k = kernel(&e, 0, 0, (int64_t)(ncalls + 10 + i) * 1000, 2000, "k");
		k.id = corr[i];
		CHECK(ev_stats_add(e.s, &k) == EV_OK);
	}
	CHECK(ev_stats_finish(e.s) == EV_OK);
	struct ev_stats_counts n;
	ev_stats_get_counts(e.s, &n);
	CHECK(n.selected == 3);
	struct ev_rowset rs;
	CHECK(ev_stats_rows(e.s, &rs) == EV_OK && rs.rows.len == 3);
	const struct ev_row *cpu = rs.rows.data;
	CHECK(cpu && !strcmp(cpu->key[1], "cpu_duration") && cpu->val[0] == 3 && cpu->val[1] == 1);
	ev_rowset_free(&rs);
	env_close(&e);
}

static void test_compare_pairs_ranks_by_position(void)
{
	static const char *const meta[] = { "#src 0 label=base", "#src 1 label=new", NULL };
	struct env e;
	struct ev_stats_opts o = { 0 };
	o.analysis = ev_stats_find("kernels");
	o.by[0] = EV_BY_SRC;
	o.by[1] = EV_BY_RANK;
	o.nby = 2;
	CHECK(env_open(&e, &o, meta) == EV_OK);
	/* Base: rank 3 runs k 100 us. New: rank 1 runs k 80 us and only_new. */
	struct ev_rec r[] = { kernel(&e, 0, 3, 0, 100000, "k"), kernel(&e, 1, 1, 0, 80000, "k"),
		              kernel(&e, 1, 1, 200000, 5000, "only_new") };
	for (size_t i = 0; i < 3; i++)
		CHECK(ev_stats_add(e.s, &r[i]) == EV_OK);
	CHECK(ev_stats_finish(e.s) == EV_OK);
	struct ev_rowset rs;
	CHECK(ev_stats_rows(e.s, &rs) == EV_OK);
	struct ev_compare_counts cc;
	const char *t = compare_text(&e, &rs, &cc);
	CHECK(t != NULL);
	CHECK(cc.tests == 1 && cc.matched == 1 && cc.only_base == 0 && cc.only_test == 1);
	CHECK(t && strstr(t, "baseline\ttest\trank\ttest_rank\tname\tclass\tmetric\tbase\tvalue\tdiff\tpct\tstatus\t"
	                     "base_count\ttest_count\n"));
	CHECK(t && strstr(t, "base\tnew\t3\t1\tk\tother\tsum_us\t100\t80\t-20\t-20\tBetter\t1\t1\n"));
	CHECK(t && strstr(t, "base\tnew\t\t1\tonly_new\tother\tsum_us\t\t5\t\t\tonly-test\t\t1\n"));
	ev_rowset_free(&rs);
	env_close(&e);
}

int main(void)
{
	RUN(test_collmatch_complete);
	RUN(test_collmatch_bounds);
	RUN(test_collmatch_many);
	RUN(test_time_sat);
	RUN(test_gemm_model);
	RUN(test_stats_kernels);
	RUN(test_stats_kernels_fold);
	RUN(test_stats_timeline_order);
	RUN(test_stats_coll_config);
	RUN(test_stats_registry);
	RUN(test_stats_own_analysis);
	RUN(test_hta_launch_window);
	RUN(test_compare_pairs_ranks_by_position);
	return unit_report("test_stats");
}
