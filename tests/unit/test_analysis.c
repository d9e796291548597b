/* SPDX-License-Identifier: MIT */
/*
 * test_analysis.c - unit tests of the analysis helpers in the library:
 * coverage sweep, the computation/communication overlap sweep,
 * distributions and quantile sketch, tables (to an output and to a sink),
 * kernel classification, the JSON tokenizer's strictness and the window
 * of cpu_ops the op tables keep.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "analysis/opsum.h"
#include "analysis/pyrepr.h"
#include "ev.h"
#include "json/json_bytes.h"
#include "unit.h"

static void test_cover(void)
{
	struct ev_cover c;
	ev_cover_init(&c);
	ev_cover_add(&c, 0, 0, 100);   /* A [0,100) */
	ev_cover_add(&c, 1, 50, 150);  /* B [50,150) */
	ev_cover_add(&c, 0, 60, 70);   /* nested A */
	ev_cover_add(&c, 2, 150, 150); /* zero length, touching */
	ev_cover_add(&c, 1, 200, 210); /* after a gap */
	ev_cover_add(&c, 0, 210, 220); /* touching B */
	ev_cover_finish(&c);
	CHECK(ev_cover_measure(&c, 1, 0) == 110);  /* |A| */
	CHECK(ev_cover_measure(&c, 2, 0) == 110);  /* |B| */
	CHECK(ev_cover_measure(&c, 2, 1) == 60);   /* |B - A| */
	CHECK(ev_cover_measure(&c, 3, 0) == 50);   /* |A n B| */
	CHECK(ev_cover_measure(&c, 0, 0) == 170);  /* |A u B| */
	CHECK(ev_cover_measure(&c, 4, 0) == 0);
	CHECK(c.first == 0 && c.last == 220);
	/* Nothing added: nothing measured. */
	ev_cover_init(&c);
	ev_cover_finish(&c);
	CHECK(ev_cover_measure(&c, 0, 0) == 0 && !c.started);
}

/* What the overlap sweep emitted, in order. */
struct overlap_seen {
	struct ev_overlap_kernel k[4];
	int n;
};

static int overlap_emit(void *ctx, const struct ev_overlap_kernel *k)
{
	struct overlap_seen *seen = ctx;
	if (seen->n < 4)
		seen->k[seen->n] = *k;
	seen->n++;
	return EV_OK;
}

static struct ev_rec kernel(ev_strtab *st, uint32_t rank, uint32_t stream, int64_t ts, int64_t dur, const char *name)
{
	struct ev_rec r;
	ev_rec_init(&r);
	r.type = EV_KERNEL;
	r.rank = rank;
	r.stream = stream;
	r.ts = ts;
	r.dur = dur;
	CHECK(ev_strtab_intern(st, name, strlen(name), &r.name) == EV_OK);
	return r;
}

static void test_overlap(void)
{
	static const char gemm[] = "ampere_sgemm_128x64_nn", nccl[] = "ncclDevKernel_AllReduce_Sum_f32_RING_LL";
	ev_strtab *st = ev_strtab_new();
	struct overlap_seen seen = { .n = 0 };
	struct ev_overlap_opts o = { EV_RULES_TRACELENS, 1u << EV_KC_GEMM, 0 };
	ev_overlap *ov = NULL;
	CHECK(st && ev_overlap_new(&ov, st, &o, overlap_emit, &seen) == EV_OK);
	if (!ov) {
		ev_strtab_free(st);
		return;
	}
	/* Rank 0: a GEMM [0,100) under two communication kernels, [20,50)
	 * (its allreduce record follows) and [40,140); rank 1: a GEMM [5,15)
	 * alone.  The elementwise kernel at 200 closes rank 0's GEMM. */
	struct ev_rec r[6];
	r[0] = kernel(st, 0, 7, 0, 100, gemm);
	r[1] = kernel(st, 1, 7, 5, 10, gemm);
	r[2] = kernel(st, 0, 8, 20, 30, nccl);
	ev_rec_init(&r[3]);
	r[3].type = EV_COLL;
	r[3].op = EV_OP_ALLREDUCE;
	r[3].stream = 8;
	r[3].ts = 20;
	r[4] = kernel(st, 0, 8, 40, 100, nccl);
	r[5] = kernel(st, 0, 7, 200, 10, "elementwise_kernel");
	for (int i = 0; i < 6; i++)
		CHECK(ev_overlap_add(ov, &r[i]) == EV_OK);
	/* Rank 1's GEMM closed first (the stream passed 15 at 20), alone. */
	CHECK(seen.n == 2 && seen.k[0].rec.rank == 1 && seen.k[0].count == 0 && seen.k[0].union_ns == 0);
	CHECK(ev_overlap_finish(ov) == EV_OK && seen.n == 2);
	const struct ev_overlap_kernel *k = &seen.k[1];
	uint64_t allreduce, nccl_id;
	CHECK(ev_strtab_intern(st, "allreduce", 9, &allreduce) == EV_OK);
	CHECK(ev_strtab_intern(st, nccl, strlen(nccl), &nccl_id) == EV_OK);
	/* Two overlaps, 30 and 60 ns, 80 ns together: the first named by its
	 * collective, the second (no record after it) by its kernel. */
	CHECK(k->rec.rank == 0 && k->end == 100 && k->count == 2);
	CHECK(k->best == 60 && k->best_name == nccl_id && k->union_ns == 80);
	CHECK(k->nnames == 2 && k->names[0] == allreduce && k->names[1] == nccl_id && !k->more);
	/* Per rank: communication [20,140) = 120 ns, 80 of it under the GEMM. */
	size_t n;
	const struct ev_overlap_rank *t = ev_overlap_ranks(ov, &n);
	CHECK(n == 2 && t[0].rank == 0 && t[1].rank == 1);
	CHECK(t[0].comm_ns == 120 && t[0].hidden_ns == 80 && fabs(t[0].overlap_pct - 200.0 / 3) < 1e-9);
	CHECK(t[0].kernels == 1 && t[0].overlapped == 1 && t[1].kernels == 1 && t[1].overlapped == 0);
	CHECK(t[1].comm_ns == 0 && t[1].overlap_pct == 0);
	struct ev_overlap_counts c = ev_overlap_counts(ov);
	CHECK(c.kernels == 5 && c.comm == 2 && c.selected == 2);
	ev_overlap_free(ov);
	/* --kernel-names: the first overlap keeps its kernel's name. */
	struct overlap_seen seen2 = { .n = 0 };
	o.kernel_names = 1;
	CHECK(ev_overlap_new(&ov, st, &o, overlap_emit, &seen2) == EV_OK);
	for (int i = 0; ov && i < 6; i++)
		CHECK(ev_overlap_add(ov, &r[i]) == EV_OK);
	CHECK(ov && ev_overlap_finish(ov) == EV_OK);
	CHECK(seen2.n == 2 && seen2.k[1].nnames == 1 && seen2.k[1].names[0] == nccl_id);
	ev_overlap_free(ov);
	ev_strtab_free(st);
}

static void test_dist_exact(void)
{
	struct ev_dist_pool pool = { 100, 0, 0 };
	struct ev_dist d;
	ev_dist_init(&d);
	for (int i = 5; i >= 1; i--)
		CHECK(ev_dist_add(&d, &pool, i, 10 * i) == EV_OK);
	CHECK(d.n == 5 && d.sum == 15 && d.mean == 3 && d.min == 1 && d.max == 5);
	CHECK(d.min_ts == 10 && d.max_ts == 50);
	CHECK(fabs(ev_dist_std(&d) - sqrt(2.5)) < 1e-12);
	CHECK(ev_dist_quantile(&d, 0.5) == 3);
	CHECK(fabs(ev_dist_quantile(&d, 0.9) - 4.6) < 1e-12);
	CHECK(ev_dist_quantile(&d, 0) == 1 && ev_dist_quantile(&d, 1) == 5);
	CHECK(pool.used == 5 && pool.sketched == 0);
	ev_dist_free(&d);
	ev_dist_init(&d);
	CHECK(isnan(ev_dist_quantile(&d, 0.5)) && ev_dist_std(&d) == 0);
	/* Moments only: exact moments and extremes, no sample, no quantile. */
	for (int i = 1; i <= 5; i++)
		ev_dist_add_moments(&d, i, 10 * i);
	CHECK(d.n == 5 && d.sum == 15 && d.mean == 3 && fabs(ev_dist_std(&d) - sqrt(2.5)) < 1e-12);
	CHECK(d.min == 1 && d.max == 5 && d.max_ts == 50 && d.v == NULL && d.len == 0);
	CHECK(isnan(ev_dist_quantile(&d, 0.5)) && ev_dist_quantile(&d, 1) == 5);
	ev_dist_free(&d);
}

static void test_dist_sketch(void)
{
	struct ev_dist_pool pool = { 10, 0, 0 };
	struct ev_dist d;
	ev_dist_init(&d);
	for (int i = 1; i <= 100000; i++)
		CHECK(ev_dist_add(&d, &pool, i, i) == EV_OK);
	CHECK(d.sketch && pool.sketched == 1 && pool.used == 0);
	/* Every quantile within the stated relative error of the exact one. */
	static const double qs[] = { 0.01, 0.1, 0.5, 0.9, 0.99, 0.999 };
	for (size_t k = 0; k < sizeof qs / sizeof qs[0]; k++) {
		double exact = 1 + qs[k] * 99999, got = ev_dist_quantile(&d, qs[k]);
		CHECK(fabs(got - exact) <= exact * EV_DIST_SKETCH_ERR + 1);
	}
	CHECK(d.min == 1 && d.max == 100000 && d.n == 100000);
	ev_dist_free(&d);
}

static int cmp_f64(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

/* ev_sort_f64 gives qsort's order on the shapes that trip up a quicksort:
 * short, random, few distinct values, sorted, reversed, all equal, organ
 * pipe, and the low and high halves interleaved. */
/* Merging: the union's moments, extremes and quantiles, exact while both
 * are, through the sketch otherwise; the source is emptied and the pool
 * counts each exact sample once. */
static void test_dist_merge(void)
{
	struct ev_dist_pool pool = { 1000, 0, 0 };
	struct ev_dist a, b, e;
	ev_dist_init(&a);
	ev_dist_init(&b);
	ev_dist_init(&e);
	CHECK(ev_dist_merge(&a, &b, &pool) == EV_OK && a.n == 0);
	for (int i = 1; i <= 9; i++)
		CHECK(ev_dist_add(i % 2 ? &a : &b, &pool, i, i) == EV_OK);
	CHECK(ev_dist_merge(&a, &b, &pool) == EV_OK);
	CHECK(a.n == 9 && b.n == 0 && b.v == NULL && pool.used == 9);
	CHECK(fabs(a.mean - 5) < 1e-12 && fabs(ev_dist_std(&a) - sqrt(7.5)) < 1e-12);
	CHECK(a.min == 1 && a.max == 9 && a.max_ts == 9 && ev_dist_quantile(&a, 0.25) == 3);
	/* Into an empty one: moved. */
	CHECK(ev_dist_merge(&e, &a, &pool) == EV_OK && e.n == 9 && a.n == 0 && pool.used == 9);
	/* A sketch and an exact one. */
	struct ev_dist_pool small = { 4, 0, 0 };
	struct ev_dist s, x;
	ev_dist_init(&s);
	ev_dist_init(&x);
	for (int i = 1; i <= 100; i++)
		CHECK(ev_dist_add(&s, &small, i, i) == EV_OK);
	CHECK(s.sketch);
	ev_dist_init(&x);
	small.used = 0;
	CHECK(ev_dist_add(&x, &small, 1000, 5) == EV_OK && !x.sketch);
	CHECK(ev_dist_merge(&s, &x, &small) == EV_OK && s.n == 101 && s.max == 1000 && small.used == 0);
	CHECK(fabs(ev_dist_quantile(&s, 0.5) - 51) <= 51 * EV_DIST_SKETCH_ERR);
	ev_dist_release(&s, &small);
	ev_dist_release(&e, &pool);
	CHECK(pool.used == 0);
}

#if defined(__SANITIZE_ADDRESS__)
#define UNIT_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define UNIT_ASAN 1
#endif
#endif

#ifndef UNIT_ASAN
/* A /proc/self/status figure in kB ("VmRSS:"), -1 when not there. */
static long status_kb(const char *key)
{
	FILE *f = fopen("/proc/self/status", "r");
	char line[256];
	long kb = -1;
	while (f && fgets(line, sizeof line, f))
		if (!strncmp(line, key, strlen(key)))
			kb = atol(line + strlen(key));
	if (f)
		fclose(f);
	return kb;
}

/* How much a child process's peak RSS grows (kB) while adding adds
 * samples to groups distributions sharing a budget, each sample's group
 * drawn at random as kernels of a trace interleave; -1 when unknown. */
static long dist_fill_kb(unsigned groups, uint64_t budget, uint64_t adds)
{
	int fd[2];
	long kb = -1;
	if (pipe(fd))
		return -1;
	pid_t p = fork();
	if (p == 0) {
		close(fd[0]);
		long start = status_kb("VmRSS:");
		struct ev_dist_pool pool = { budget, 0, 0 };
		struct ev_dist *d = calloc(groups, sizeof *d);
		uint32_t x = 12345;
		int rc = d ? EV_OK : EV_ERR_NOMEM;
		for (uint64_t i = 0; !rc && i < adds; i++) {
			x = x * 1103515245u + 12345u;
			rc = ev_dist_add(&d[(x >> 8) % groups], &pool, 1 + (x >> 16) % 1000, (int64_t)i);
		}
		if (!rc && start > 0)
			kb = status_kb("VmHWM:") - start;
		_exit(write(fd[1], &kb, sizeof kb) == sizeof kb ? 0 : 1);
	}
	close(fd[1]);
	if (p < 0 || read(fd[0], &kb, sizeof kb) != sizeof kb)
		kb = -1;
	close(fd[0]);
	if (p > 0)
		waitpid(p, NULL, 0);
	return kb;
}
#endif

/* Memory grows with groups, never with samples: once the exact budget has
 * filled, ten times the samples (distributions moving to the sketch,
 * others growing into the room they leave) keep the peak within 1.2x.
 * Not under ASan, whose allocator keeps freed memory aside. */
static void test_dist_rss_flat(void)
{
#ifdef UNIT_ASAN
	printf("test_dist_rss_flat: skipped under AddressSanitizer\n");
#else
	long kb1 = dist_fill_kb(96, 65536, 200000), kb10 = dist_fill_kb(96, 65536, 2000000);
	CHECK(kb1 > 0 && kb10 > 0);
	CHECK(kb10 <= kb1 + kb1 / 5);
	if (kb10 > kb1 + kb1 / 5)
		fprintf(stderr, "test_dist_rss_flat: peak RSS grew %ld kB at 1x, %ld kB at 10x\n", kb1, kb10);
#endif
}

static void test_sort_f64(void)
{
	static const size_t sizes[] = { 0, 1, 2, 3, 16, 17, 33, 1000, 100000 };
	double *a = malloc(100000 * sizeof *a), *b = malloc(100000 * sizeof *b);
	CHECK(a && b);
	if (!a || !b) {
		free(a);
		free(b);
		return;
	}
	uint64_t x = 88172645463325252ull;
	for (size_t si = 0; si < sizeof sizes / sizeof sizes[0]; si++) {
		size_t n = sizes[si];
		for (int shape = 0; shape < 6; shape++) {
			for (size_t i = 0; i < n; i++) {
				x ^= x << 13, x ^= x >> 7, x ^= x << 17;
				double r = (double)(x >> 11) / 9007199254740992.0;
				a[i] = shape == 0 ? r : shape == 1 ? (double)(x % 7) : shape == 2 ? (double)i
				     : shape == 3 ? (double)(n - i) : shape == 4 ? 2.5 : (double)(i < n / 2 ? i : n - i);
			}
			memcpy(b, a, n * sizeof *a);
			ev_sort_f64(a, n);
			qsort(b, n, sizeof *b, cmp_f64);
			CHECK(n == 0 || memcmp(a, b, n * sizeof *a) == 0);
		}
	}
	/* Low and high halves interleaved. */
	size_t n = 100000;
	for (size_t i = 0; i < n; i++)
		a[i] = (double)(i % 2 ? n / 2 + i / 2 : i / 2);
	memcpy(b, a, n * sizeof *a);
	ev_sort_f64(a, n);
	qsort(b, n, sizeof *b, cmp_f64);
	CHECK(memcmp(a, b, n * sizeof *a) == 0);
	free(a);
	free(b);
}

static char *table_text(enum ev_table_fmt fmt)
{
	static const char *const cols[] = { "name", "n", "x" };
	char path[] = "/tmp/ev-table-XXXXXX";
	int fd = mkstemp(path);
	ev_output *out = NULL;
	ev_table *t = NULL;
	if (fd < 0 || ev_output_open(&out, path) || ev_table_open(&t, out, fmt, cols, 3))
		return NULL;
	int rc = ev_table_str(t, "a,\"b\"\t|c");
	rc = rc ? rc : ev_table_u64(t, 7);
	rc = rc ? rc : ev_table_f64(t, 0.1);
	rc = rc ? rc : ev_table_str(t, "z");
	rc = rc ? rc : ev_table_i64(t, -2);
	rc = rc ? rc : ev_table_f64(t, NAN);
	rc = rc ? rc : ev_table_close(t);
	rc = rc ? rc : ev_output_close(out);
	static char buf[512];
	unit_read_back(path, fd, buf, sizeof buf);
	return rc ? NULL : buf;
}

static void test_table(void)
{
	const char *s = table_text(EV_TABLE_TSV);
	CHECK(s && strcmp(s, "name\tn\tx\na,\"b\"\\t|c\t7\t0.1\nz\t-2\t\n") == 0);
	s = table_text(EV_TABLE_CSV);
	CHECK(s && strcmp(s, "name,n,x\n\"a,\"\"b\"\"\t|c\",7,0.1\nz,-2,\n") == 0);
	s = table_text(EV_TABLE_JSON);
	CHECK(s && strcmp(s, "[\n{\"name\":\"a,\\\"b\\\"\\t|c\",\"n\":7,\"x\":0.1},\n{\"name\":\"z\",\"n\":-2,\"x\":null}\n]\n") == 0);
	s = table_text(EV_TABLE_MD);
	CHECK(s && strcmp(s, "| name | n | x |\n|---|---|---|\n| a,\"b\" \\|c | 7 | 0.1 |\n| z | -2 |  |\n") == 0);
}

/* A sink gets the header once, then each row as the TSV's cells
 * unescaped; its error becomes the table's. */
struct sink_log { char text[256]; size_t len; int rows, fail_at; };

static void sink_put(struct sink_log *l, const char *const *cells, size_t n)
{
	for (size_t i = 0; i < n; i++)
		l->len += (size_t)snprintf(l->text + l->len, sizeof l->text - l->len, "%s%s", i ? "|" : "", cells[i]);
	l->len += (size_t)snprintf(l->text + l->len, sizeof l->text - l->len, ";");
}

static int sink_header(void *ctx, const char *name, const char *const *cols, size_t n)
{
	struct sink_log *l = ctx;
	l->len += (size_t)snprintf(l->text + l->len, sizeof l->text - l->len, "%s:", name);
	sink_put(l, cols, n);
	return EV_OK;
}

static int sink_row(void *ctx, const char *const *cells, size_t n)
{
	struct sink_log *l = ctx;
	if (++l->rows == l->fail_at)
		return EV_ERR_LIMIT;
	sink_put(l, cells, n);
	return EV_OK;
}

/* row_num: the row with '#' after each cell ev_table_f64 wrote. */
static int sink_row_num(void *ctx, const char *const *cells, const unsigned char *num, size_t n)
{
	struct sink_log *l = ctx;
	for (size_t i = 0; i < n; i++)
		l->len += (size_t)snprintf(l->text + l->len, sizeof l->text - l->len, "%s%s%s", i ? "|" : "", cells[i],
		                           num[i] ? "#" : "");
	l->len += (size_t)snprintf(l->text + l->len, sizeof l->text - l->len, ";");
	return EV_OK;
}

static void test_table_sink(void)
{
	static const char *const cols[] = { "name", "n", "x" };
	struct sink_log l = { .fail_at = 0 };
	const struct ev_table_sink sink = { sink_header, sink_row, &l, NULL };
	ev_table *t = NULL;
	CHECK(ev_table_open_sink(&t, &sink, "sheet", cols, 3) == EV_OK);
	CHECK(ev_table_str(t, "a\tb") == EV_OK && ev_table_u64(t, 7) == EV_OK && ev_table_f64(t, 0.1) == EV_OK);
	CHECK(ev_table_str_raw(t, "z") == EV_OK && ev_table_i64(t, -2) == EV_OK && ev_table_f64(t, NAN) == EV_OK);
	CHECK(ev_table_close(t) == EV_OK);
	CHECK(strcmp(l.text, "sheet:name|n|x;a\tb|7|0.1;z|-2|;") == 0); /* the tab unescaped */

	/* A sink with row_num learns which cells are ev_table_f64's numbers
	 * (not a NaN's empty cell, not integers or text). */
	struct sink_log ln = { .fail_at = 0 };
	const struct ev_table_sink numsink = { sink_header, sink_row, &ln, sink_row_num };
	CHECK(ev_table_open_sink(&t, &numsink, "s", cols, 3) == EV_OK);
	CHECK(ev_table_str(t, "1.5") == EV_OK && ev_table_u64(t, 7) == EV_OK && ev_table_f64(t, 1e20) == EV_OK);
	CHECK(ev_table_f64(t, NAN) == EV_OK && ev_table_f64(t, 0.30000000000000004) == EV_OK && ev_table_i64(t, -2) == EV_OK);
	CHECK(ev_table_close(t) == EV_OK);
	CHECK(strcmp(ln.text, "s:name|n|x;1.5|7|1e+20#;|0.30000000000000004#|-2;") == 0);

	struct sink_log bad = { .fail_at = 1 };
	const struct ev_table_sink failing = { sink_header, sink_row, &bad, NULL };
	CHECK(ev_table_open_sink(&t, &failing, "s", cols, 1) == EV_OK);
	CHECK(ev_table_str(t, "x") == EV_ERR_LIMIT && ev_table_str(t, "y") == EV_ERR_LIMIT);
	CHECK(ev_table_close(t) == EV_ERR_LIMIT);
}

static void test_classify(void)
{
	CHECK(ev_kernel_class(EV_RULES_TRACELENS, "ncclDevKernel_Generic_1") == EV_KC_COMM);
	CHECK(ev_kernel_class(EV_RULES_TRACELENS, "RCCL_thing") == EV_KC_COMM);
	/* TraceLens's words anywhere, in any case; a near miss is not one. */
	CHECK(ev_is_comm_name(EV_RULES_TRACELENS, "void at::ops::kernel<NcCl, 4>"));
	CHECK(ev_is_comm_name(EV_RULES_TRACELENS, "x_CROSS_DEVICE_REDUCE"));
	CHECK(ev_is_comm_name(EV_RULES_TRACELENS, "nnnnccl"));
	CHECK(!ev_is_comm_name(EV_RULES_TRACELENS, "nccrcc_cross_device_reduc"));
	CHECK(!ev_is_comm_name(EV_RULES_TRACELENS, "N\x0e\x03\x03l"));
	CHECK(ev_kernel_class(EV_RULES_TRACELENS_2025, "RCCL_thing") != EV_KC_COMM);
	CHECK(ev_kernel_class(EV_RULES_TRACELENS, "Cijk_Ailk_Bljk_HHS_BH_MT128") == EV_KC_GEMM);
	CHECK(ev_timeline_bucket(EV_RULES_TRACELENS, EV_KERNEL, "__amd_rocclr_copyBuffer.kd") == EV_BUCKET_MEMCPY);
	CHECK(ev_timeline_bucket(EV_RULES_TRACELENS, EV_KERNEL, "__amd_rocclr_copyBufferX") == EV_BUCKET_COMP);
	CHECK(ev_timeline_bucket(EV_RULES_TRACELENS_2025, EV_KERNEL, "__amd_rocclr_copyBuffer") == EV_BUCKET_COMP);
	CHECK(ev_timeline_bucket(EV_RULES_TRACELENS, EV_MEMSET, "Memset (Device)") == EV_BUCKET_COMP);
	CHECK(ev_timeline_bucket(EV_RULES_TRACELENS, EV_RANGE, "x") == EV_BUCKET_NONE);
	/* HTA's quirks: hipMemcpyAsync is communication, Stream Wait Event other. */
	CHECK(ev_hta_kind("hipMemcpyAsync") == EV_HTA_COMMUNICATION);
	CHECK(ev_hta_kind("rccl_kernel") == EV_HTA_COMPUTATION);
	CHECK(ev_hta_kind("Stream Wait Event") == EV_HTA_OTHER);
	CHECK(ev_hta_kind("Memcpy DtoH (Device -> Pinned)") == EV_HTA_MEMORY);
	CHECK(ev_hta_kind("void foo_kernel<float>()") == EV_HTA_COMPUTATION);
	unsigned m;
	CHECK(ev_kclass_list_parse("gemm,attention", &m) == EV_OK && m == (1u << EV_KC_GEMM | 1u << EV_KC_ATTENTION));
	CHECK(ev_kclass_list_parse("all", &m) == EV_OK && m == ~0u);
	CHECK(ev_kclass_list_parse("gemm,,comm", &m) == EV_ERR_ARG);
	CHECK(ev_kclass_list_parse("gemm,nope", &m) == EV_ERR_ARG && ev_kclass_list_parse("", &m) == EV_ERR_ARG);
	enum ev_rules r;
	CHECK(ev_rules_parse("hta", &r) == EV_OK && r == EV_RULES_HTA);
	CHECK(ev_rules_parse("HTA", &r) == EV_ERR_ARG);
}

static void test_json_strict(void)
{
	struct ev_json_tok t[64];
	static const char *const bad[] = { "[1,]", "[1 2]", "{\"a\":1,}", "{,}", "[,1]", "{\"a\" 1}", "[1]x", "" };
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
		CHECK(ev_json_tokenize(bad[i], strlen(bad[i]), t, 64) < 0);
	const char *good = " {\"a\" : [1, {\"b\":\"x,]\"}] , \"c\":null} ";
	CHECK(ev_json_tokenize(good, strlen(good), t, 64) == 9);
	/* Nesting past the depth limit is refused, not recursed into. */
	static struct ev_json_tok many[700];
	char deep[1200];
	memset(deep, '[', 600);
	memset(deep + 600, ']', 600);
	CHECK(ev_json_tokenize(deep, 1200, many, 700) == EV_ERR_LIMIT);
	CHECK(ev_json_tokenize(deep + 400, 400, many, 700) == 200);
}

/* The eight-bytes-at-a-time search for a string's quote or backslash gives
 * the first one at every offset and alignment, near bytes that differ from
 * '"' (0x22) and '\\' (0x5C) by one bit or a borrow, and high bytes. */
static void test_json_str_stop(void)
{
	static const char fill[] = { 'a', '!', '#', '[', ']', '\x7f', '\x80', '\xdc', '\xa2', '\x01', ' ' };
	char buf[64];
	for (size_t f = 0; f < sizeof fill; f++)
		for (size_t off = 0; off < 4; off++)
			for (size_t len = 0; len + off <= 40; len++)
				for (size_t at = 0; at <= len; at++)
					for (int which = 0; which < 3; which++) {
						memset(buf, fill[f], sizeof buf);
						if (at < len) {
							buf[off + at] = which == 0 ? '"' : '\\';
							if (which == 2 && at + 1 < len)
								buf[off + at + 1] = '"'; /* a quote right after */
						}
						const char *p = buf + off, *end = p + len;
						CHECK(ev_json_str_stop(p, end) == p + at);
					}
}

/* ev_json_skip_ws and ev_json_digits_end stop at the first byte outside
 * their class, for every one of the 256 byte values as that byte, at every
 * offset and run length (the runs are looked at 16 or 8 bytes a step). */
static void test_json_runs(void)
{
	static const char ws[] = " \n\t\r", digits[] = "0123456789";
	char buf[64];
	for (int stop = 0; stop < 256; stop++) {
		int is_ws = stop == ' ' || stop == '\n' || stop == '\t' || stop == '\r';
		int is_digit = stop >= '0' && stop <= '9';
		for (size_t off = 0; off < 4; off++)
			for (size_t len = 0; len + off <= 40; len++)
				for (size_t at = 0; at <= len; at++) {
					const char *p = buf + off, *end = p + len;
					for (size_t i = 0; i < sizeof buf; i++)
						buf[i] = ws[(i * 5 + at) % 4];
					if (at < len)
						buf[off + at] = (char)stop;
					CHECK(ev_json_skip_ws(p, end) == p + (is_ws ? len : at));
					for (size_t i = 0; i < sizeof buf; i++)
						buf[i] = digits[(i * 7 + at) % 10];
					if (at < len)
						buf[off + at] = (char)stop;
					CHECK(ev_json_digits_end(p, end) == p + (is_digit ? len : at));
				}
	}
}

/* ev_json_digits_value against a byte loop: the same end as
 * ev_json_digits_end and the value modulo 2^64, for every run length to
 * 30 digits (the first eight-byte step ends at each place, and runs pass
 * 18, 19 and 20 digits), every start offset and stop byte, with the text
 * ending at the run or going on. */
static void test_json_digits_value(void)
{
	static const char stops[] = ".e,}x/:\\"; /* and the NUL that ends it */
	char buf[48];
	uint64_t x = 0x9E3779B97F4A7C15ULL;
	for (size_t off = 0; off < 4; off++)
		for (size_t len = 0; len <= 30; len++)
			for (size_t s = 0; s < sizeof stops; s++) {
				for (size_t i = 0; i < sizeof buf; i++) {
					x ^= x << 13, x ^= x >> 7, x ^= x << 17;
					buf[i] = (char)('0' + x % 10);
				}
				buf[off + len] = stops[s];
				const char *p = buf + off;
				uint64_t want = 0, got = 1;
				for (size_t i = 0; i < len; i++)
					want = want * 10 + (uint64_t)(p[i] - '0');
				CHECK(ev_json_digits_value(p, p + len + 1, &got) == p + len && got == want);
				CHECK(ev_json_digits_value(p, p + len, &got) == p + len && got == want);
			}
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
	/* The eight-digit step on its own: every count of leading zeros. */
	for (int k = 0; k <= 8; k++) {
		char d[9] = "00000000";
		memcpy(d + 8 - k, "98765432" + 8 - k, (size_t)k);
		uint64_t v;
		memcpy(&v, d, 8);
		static const uint64_t want[] = { 0, 2, 32, 432, 5432, 65432, 765432, 8765432, 98765432 };
		CHECK(ev_json_eight_digits(v) == want[k]);
	}
#endif
}

/* ev_json_strip_ws against a byte loop: text of whitespace and other
 * bytes mixed at random, every length to 80 and every start offset, with
 * canaries right after the end - p bytes the output may use. */
static void test_json_strip_ws(void)
{
	static const char ws[] = " \n\t\r", other[] = "[]0\"a,\x1f\x80\x0b";
	char in[96], out[96 + 16], want[96];
	uint64_t x = 88172645463325252ULL;
	int bad = 0;
	for (int round = 0; round < 40; round++)
		for (size_t off = 0; off < 4; off++)
			for (size_t len = 0; len + off <= 80; len++) {
				/* Runs of each kind, of random lengths; the rate of
				 * whitespace changes with the round. */
				for (size_t i = 0; i < sizeof in; i++) {
					x ^= x << 13;
					x ^= x >> 7;
					x ^= x << 17;
					int space = (int)(x % 8) < round % 8;
					in[i] = space ? ws[(x >> 8) % 4] : other[(x >> 8) % (sizeof other - 1)];
				}
				size_t n = 0;
				for (size_t i = off; i < off + len; i++)
					if (!ev_json_is_ws(in[i]))
						want[n++] = in[i];
				memset(out, '#', sizeof out);
				size_t got = ev_json_strip_ws(in + off, in + off + len, out);
				if (got != n || memcmp(out, want, n))
					bad++;
				for (size_t i = len; i < sizeof out; i++)
					if (out[i] != '#')
						bad++;
			}
	CHECK(bad == 0);
}

/* ev_table_f64 prints the shortest of %.15g, %.16g, %.17g that reads back
 * to the same double, whether it takes the decimal fast path or not. */
static void test_table_f64_exact(void)
{
	static const char *const cols[] = { "x" };
	char path[] = "/tmp/ev-f64-XXXXXX";
	int fd = mkstemp(path);
	ev_output *out = NULL;
	ev_table *t = NULL;
	CHECK(fd >= 0 && ev_output_open(&out, path) == EV_OK && ev_table_open(&t, out, EV_TABLE_TSV, cols, 1) == EV_OK);
	enum { N = 200000 };
	static double v[N];
	uint64_t x = 88172645463325252ULL;
	for (int i = 0; i < N; i++) {
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		int64_t m = (int64_t)(x % 2000000000000ULL) - 1000000000000LL;
		switch (i % 8) {
		case 0: v[i] = (double)m / 1e3; break;               /* us from ns */
		case 1: v[i] = (double)(m % 100000000) / 1e6; break;  /* ms from ns */
		case 2: v[i] = (double)m / 7.0; break;               /* no short decimal */
		case 3: v[i] = (double)(m % 1000) / 1e6; break;       /* around 1e-4 */
		case 4: v[i] = (double)m * 1e4; break;               /* past 1e15 */
		case 5: v[i] = (double)(x % 1000000) / 1e6 + 0.5; break;
		case 6: v[i] = (double)m; break;
		default: v[i] = ((double)(x >> 11) / 9007199254740992.0) * 100; break;
		}
		if (ev_table_f64(t, v[i]) != EV_OK)
			failures++;
	}
	CHECK(ev_table_close(t) == EV_OK && ev_output_close(out) == EV_OK);
	FILE *f = fopen(path, "r");
	char line[64], want[40];
	int bad = 0;
	CHECK(f && fgets(line, sizeof line, f) && !strcmp(line, "x\n"));
	for (int i = 0; f && i < N; i++) {
		if (!fgets(line, sizeof line, f)) {
			bad++;
			break;
		}
		line[strcspn(line, "\n")] = '\0';
		double w = v[i] == 0 ? 0 : v[i];
		for (int prec = 15; prec <= 17; prec++) {
			snprintf(want, sizeof want, "%.*g", prec, w);
			if (strtod(want, NULL) == w)
				break;
		}
		if (strcmp(line, want) != 0 && bad++ < 5)
			fprintf(stderr, "f64: %s, want %s\n", line, want);
	}
	CHECK(bad == 0);
	if (f)
		fclose(f);
	remove(path);
	close(fd);
}

static void test_gemm_layout(void)
{
	/* TraceLens's "transpose" from kernel names: Tensile and nvjet. */
	CHECK(ev_gemm_layout("Cijk_Alik_Bljk_SB_MT128x128x32_MI32x32x1x2") == 1 + 3 * 2 + 1);
	CHECK(ev_gemm_layout("Custom_Cijk_Ailk_Bjlk_BBS_BH_Bias") == 1 + 3 * 1 + 2);
	CHECK(ev_gemm_layout("Cabc_Adef_Bghi_gemm0") == 1);
	CHECK(ev_gemm_layout("nvjet_tst_128x64_64x4_1x2_h_bz_coopA_NT") == 1 + 3 * 1 + 2);
	CHECK(ev_gemm_layout("ampere_sgemm_128x64_nn") == 0);
	CHECK(ev_gemm_layout("Cij_Alik") == 0 && ev_gemm_layout("") == 0 && ev_gemm_layout(NULL) == 0);
}

/* The op window: ops that ended a minute before now leave, the others
 * stay in order and are found by key; past OPSUM_WINDOW_MAX the oldest
 * half leaves too, counted. */
struct wop { uint32_t id; int64_t end; uint16_t src; uint32_t rank; };

static void test_op_window(void)
{
	static const struct opsum_window w = { sizeof(struct wop), offsetof(struct wop, rank), offsetof(struct wop, src),
		offsetof(struct wop, id), offsetof(struct wop, end) };
	struct ev_map idx;
	uint64_t evicted = 0;
	size_t n = 5;
	struct wop *a = calloc(OPSUM_WINDOW_MAX, sizeof *a);
	CHECK(a != NULL);
	if (!a)
		return;
	ev_map_init(&idx);
	int64_t now = 100 * OPSUM_WINDOW_NS;
	for (size_t i = 0; i < n; i++) /* ends 2, 1, 0, 1, 2 minutes before now */
		a[i] = (struct wop){ (uint32_t)i + 1, now - (int64_t)(i < 3 ? 2 - i : i - 2) * OPSUM_WINDOW_NS - 1, 3, 7 };
	a[2].end = now; /* id 3: still open */
	CHECK(opsum_window_prune(&w, a, &n, now, &evicted, &idx) == EV_OK);
	CHECK(n == 1 && a[0].id == 3 && evicted == 0);
	uint64_t *at = ev_map_get(&idx, opsum_op_key(7, 3, 3));
	CHECK(at && *at == 1);
	CHECK(ev_map_get(&idx, opsum_op_key(7, 3, 1)) == NULL);
	/* Full: the older half goes whatever its end, counted. */
	n = OPSUM_WINDOW_MAX;
	for (size_t i = 0; i < n; i++)
		a[i] = (struct wop){ (uint32_t)i + 1, now, 0, 0 };
	CHECK(opsum_window_prune(&w, a, &n, now, &evicted, &idx) == EV_OK);
	CHECK(n == OPSUM_WINDOW_MAX / 2 && evicted == OPSUM_WINDOW_MAX / 2);
	CHECK(a[0].id == OPSUM_WINDOW_MAX / 2 + 1);
	at = ev_map_get(&idx, opsum_op_key(0, 0, OPSUM_WINDOW_MAX));
	CHECK(at && *at == OPSUM_WINDOW_MAX / 2);
	ev_map_free(&idx);
	free(a);
}

/* The end by which half the open instances have ended (a full window
 * closes those first), and a thread's open ops: a new thread is added,
 * ops that ended by the record's start are popped. */
static void test_op_half_and_thread(void)
{
	struct wop items[5] = { { 1, 50, 0, 0 }, { 2, 10, 0, 0 }, { 3, 40, 0, 0 }, { 4, 20, 0, 0 }, { 5, 30, 0, 0 } };
	int64_t cut = 0;
	CHECK(opsum_half_end(items, 5, sizeof items[0], offsetof(struct wop, end), &cut) == EV_OK && cut == 30);
	CHECK(opsum_half_end(items, 0, sizeof items[0], offsetof(struct wop, end), &cut) == EV_OK && cut == INT64_MIN);
	struct othread *th = NULL, *t = NULL;
	size_t nth = 0, cap = 0;
	struct ev_rec r;
	ev_rec_init(&r);
	r.rank = 1;
	r.stream = 7;
	r.ts = 100;
	CHECK(opsum_thread(&th, &nth, &cap, &r, &t) == EV_OK && nth == 1 && t && t->n == 0 && t->thread == 7);
	t->id[0] = 11, t->end[0] = 500;
	t->id[1] = 12, t->end[1] = 200;
	t->n = 2;
	r.ts = 200; /* op 12 ended at 200: popped, op 11 still open */
	CHECK(opsum_thread(&th, &nth, &cap, &r, &t) == EV_OK && nth == 1 && t->n == 1 && t->id[0] == 11);
	r.stream = 8;
	CHECK(opsum_thread(&th, &nth, &cap, &r, &t) == EV_OK && nth == 2 && t->n == 0 && t->thread == 8);
	free(th);
}

/* Python's repr() of strings (raw, and JSON-escaped as the stream holds
 * them) and floats; the expected texts are Python 3.11's. */
static void test_pyrepr(void)
{
	static const char *const raw[][2] = {
		{ "plain", "'plain'" },
		{ "it's", "\"it's\"" },
		{ "say \"hi\"", "'say \"hi\"'" },
		{ "both ' and \"", "'both \\' and \"'" },
		{ "tab\tnew\nline\\back\rcr", "'tab\\tnew\\nline\\\\back\\rcr'" },
	};
	/* The same texts as JSON strings after their opening quote. */
	static const char *const json[] = { "plain\"", "it's\"", "say \\\"hi\\\"\"", "both ' and \\\"\"",
		                            "tab\\tnew\\nline\\\\back\\rcr\", 1" };
	for (size_t i = 0; i < sizeof raw / sizeof *raw; i++) {
		struct pytext a = { 0 }, b = { 0 };
		py_text(&a, raw[i][0], strlen(raw[i][0]));
		const char *end = py_string(&b, json[i]);
		CHECK(strcmp(pyt_str(&a), raw[i][1]) == 0);
		CHECK(strcmp(pyt_str(&b), raw[i][1]) == 0);
		CHECK(end[-1] == '"');
		free(a.p);
		free(b.p);
	}
	static const struct { double v; const char *want; } fl[] = {
		{ 0.0, "0.0" }, { -0.0, "-0.0" }, { 12.345, "12.345" }, { 1e-05, "1e-05" }, { 0.0001, "0.0001" },
		{ 1e16, "1e+16" }, { 1234567890123456.8, "1234567890123456.8" }, { 31.025999999999996, "31.025999999999996" },
		{ 5e-324, "5e-324" }, { 2.0, "2.0" }, { -3.5e300, "-3.5e+300" }, { 1.7e15 + 0.25, "1700000000000000.2" },
	};
	for (size_t i = 0; i < sizeof fl / sizeof *fl; i++) {
		struct pytext t = { 0 };
		py_float(&t, fl[i].v);
		if (strcmp(pyt_str(&t), fl[i].want) != 0)
			fprintf(stderr, "repr of %.17g: %s, want %s\n", fl[i].v, pyt_str(&t), fl[i].want);
		CHECK(strcmp(pyt_str(&t), fl[i].want) == 0);
		free(t.p);
	}
}

/* ops_summary and ops_summary_by_category gather one state (the report
 * feeds it once); ops-args splits its groups by names, kernels is another
 * analysis: neither shares. */
static void test_same_state(void)
{
	const struct ev_stats_analysis *sum = ev_stats_find("ops-summary"), *cat = ev_stats_find("ops-category"),
	                               *args = ev_stats_find("ops-args"), *kern = ev_stats_find("kernels");
	CHECK(sum && cat && args && kern);
	CHECK(ev_stats_same_state(sum, cat) && ev_stats_same_state(cat, sum));
	CHECK(!ev_stats_same_state(sum, args) && !ev_stats_same_state(sum, kern));
	struct ev_stats_opts o;
	memset(&o, 0, sizeof o);
	o.analysis = sum;
	ev_stats *s = NULL;
	struct ev_rowset rs;
	CHECK(ev_stats_new(&s, &o, NULL, NULL) == EV_OK && ev_stats_finish(s) == EV_OK);
	CHECK(ev_stats_rows_of(s, cat, &rs) == EV_OK);
	ev_rowset_free(&rs);
	CHECK(ev_stats_rows_of(s, kern, &rs) == EV_ERR_ARG);
	ev_stats_free(s);
}

int main(void)
{
	RUN(test_gemm_layout);
	RUN(test_table_f64_exact);
	RUN(test_pyrepr);
	RUN(test_same_state);
	RUN(test_cover);
	RUN(test_overlap);
	RUN(test_dist_exact);
	RUN(test_dist_sketch);
	RUN(test_dist_merge);
	RUN(test_dist_rss_flat);
	RUN(test_sort_f64);
	RUN(test_table);
	RUN(test_table_sink);
	RUN(test_classify);
	RUN(test_json_strict);
	RUN(test_json_str_stop);
	RUN(test_json_runs);
	RUN(test_json_strip_ws);
	RUN(test_json_digits_value);
	RUN(test_op_window);
	RUN(test_op_half_and_thread);
	return unit_report("test_analysis");
}
