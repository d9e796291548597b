/* SPDX-License-Identifier: MIT */
/*
 * test_sort.c - the external sorter (lib/stream/ev_sort.c) called directly:
 * many more runs than are merged at once (several merge passes), order and
 * stable ties kept, every run file removed; an empty sort.  The k-way heap
 * it merges runs with (lib/stream/ev_kmerge.c): sorted sources, ties by
 * source or by arrival number, empty sources.
 */
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ev.h"
#include "unit.h"

struct sink { int64_t last_ts; uint32_t last_seq; uint64_t n, bad; };

static int check_order(void *ctx, struct ev_rec *r)
{
	struct sink *s = ctx;
	/* Equal ts: added in seq order, so seq (the insertion order here) must
	 * not go down.  */
	if (s->n && (r->ts < s->last_ts || (r->ts == s->last_ts && r->id < s->last_seq)))
		s->bad++;
	s->last_ts = r->ts;
	s->last_seq = r->id;
	s->n++;
	return 0;
}

static int files_in(const char *dir)
{
	DIR *d = opendir(dir);
	int n = 0;
	struct dirent *e;
	if (!d)
		return -1;
	while ((e = readdir(d)))
		n += e->d_name[0] != '.';
	closedir(d);
	return n;
}

static void test_many_runs(void)
{
	char dir[] = "/tmp/evkit-test-sort.XXXXXX";
	CHECK(mkdtemp(dir) != NULL);
	ev_sorter *s;
	/* The smallest buffer holds 1024 records: 300 runs, more than 16 * 16,
	 * so runs are merged in three levels. */
	CHECK(ev_sorter_open(&s, 0, dir) == EV_OK);
	const uint64_t n = 1024 * 300;
	uint64_t x = 12345;
	for (uint64_t i = 0; i < n; i++) {
		struct ev_rec r;
		ev_rec_init(&r);
		x = x * 6364136223846793005ULL + 1442695040888963407ULL;
		r.ts = (int64_t)(x >> 50); /* many equal times */
		r.id = (uint32_t)i;
		if (ev_sorter_add(s, &r) != EV_OK) {
			CHECK(0);
			break;
		}
	}
	CHECK(ev_sorter_runs(s) >= 299);
	CHECK(files_in(dir) <= 3 * 15 + 1);
	struct sink k = { 0, 0, 0, 0 };
	CHECK(ev_sorter_finish(s, NULL, check_order, &k) == EV_OK);
	CHECK(k.n == n);
	CHECK(k.bad == 0);
	ev_sorter_close(s);
	CHECK(files_in(dir) == 0);
	rmdir(dir);
}

static void test_empty(void)
{
	ev_sorter *s;
	struct sink k = { 0, 0, 0, 0 };
	CHECK(ev_sorter_open(&s, 1 << 20, NULL) == EV_OK);
	CHECK(ev_sorter_finish(s, NULL, check_order, &k) == EV_OK);
	CHECK(k.n == 0);
	ev_sorter_close(s);
}

/* A run file cut short (here: inside an item) is an I/O error that names
 * the file, and closing still removes every run. */
static void test_truncated_run(void)
{
	char dir[] = "/tmp/evkit-test-sort.XXXXXX";
	CHECK(mkdtemp(dir) != NULL);
	ev_sorter *s;
	CHECK(ev_sorter_open(&s, 0, dir) == EV_OK);
	for (uint32_t i = 0; i < 3000; i++) {
		struct ev_rec r;
		ev_rec_init(&r);
		r.ts = (int64_t)((i * 7919u) % 3000u);
		r.id = i;
		CHECK(ev_sorter_add(s, &r) == EV_OK);
	}
	CHECK(ev_sorter_runs(s) == 2);
	/* Both runs' files to 1000 bytes, not a whole number of items. */
	DIR *d = opendir(dir);
	struct dirent *e;
	char path[4096];
	while (d && (e = readdir(d)))
		if (e->d_name[0] != '.') {
			snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
			CHECK(truncate(path, 1000) == 0);
		}
	if (d)
		closedir(d);
	struct sink k = { 0, 0, 0, 0 };
	CHECK(ev_sorter_finish(s, NULL, check_order, &k) == EV_ERR_IO);
	CHECK(k.n < 3000);
	CHECK(strncmp(ev_sorter_errpath(s), dir, strlen(dir)) == 0);
	ev_sorter_close(s);
	CHECK(files_in(dir) == 0);
	rmdir(dir);
}

/* Sort n shuffled records with the given budget and check the order. */
static void sort_some(uint64_t budget, uint64_t n)
{
	ev_sorter *s;
	CHECK(ev_sorter_open(&s, budget, NULL) == EV_OK);
	uint64_t x = 99;
	for (uint64_t i = 0; i < n; i++) {
		struct ev_rec r;
		ev_rec_init(&r);
		x = x * 6364136223846793005ULL + 1442695040888963407ULL;
		r.ts = (int64_t)(x >> 44);
		r.id = (uint32_t)i;
		if (ev_sorter_add(s, &r) != EV_OK) {
			CHECK(0);
			break;
		}
	}
	struct sink k = { 0, 0, 0, 0 };
	CHECK(ev_sorter_runs(s) == 0); /* all in memory */
	CHECK(ev_sorter_finish(s, NULL, check_order, &k) == EV_OK);
	CHECK(k.n == n && k.bad == 0);
	ev_sorter_close(s);
}

struct full { struct ev_rec last; uint64_t n, bad; };

/* (ts, rank, stream, seq) never goes down, and equal keys keep the order
 * they were added in (id). */
static int check_full_order(void *ctx, struct ev_rec *r)
{
	struct full *f = ctx;
	const struct ev_rec *a = &f->last;
	if (f->n) {
		int c = a->ts != r->ts ? (a->ts < r->ts ? -1 : 1)
		      : a->rank != r->rank ? (a->rank < r->rank ? -1 : 1)
		      : a->stream != r->stream ? (a->stream < r->stream ? -1 : 1)
		      : a->seq != r->seq ? (a->seq < r->seq ? -1 : 1)
		      : (a->id < r->id ? -1 : 1);
		f->bad += c > 0;
	}
	f->last = *r;
	f->n++;
	return 0;
}

/* The order in memory and through spilled runs: times negative and
 * positive, spread over few bits or all 64 (every radix pass), stretches
 * of equal times both short and long (more than the 16 put in order by
 * insertion), whose records differ in rank, stream and seq or not at all. */
static void test_full_order(void)
{
	static const unsigned spreads[] = { 0, 3, 12, 40, 64 };
	for (size_t sp = 0; sp < sizeof spreads / sizeof spreads[0]; sp++)
		for (int spill = 0; spill < 2; spill++) {
			ev_sorter *s;
			CHECK(ev_sorter_open(&s, spill ? 0 : 64u << 20, NULL) == EV_OK);
			uint64_t x = 7 + sp, n = 5000;
			for (uint64_t i = 0; i < n; i++) {
				struct ev_rec r;
				ev_rec_init(&r);
				x = x * 6364136223846793005ULL + 1442695040888963407ULL;
				uint64_t t = spreads[sp] == 64 ? x : spreads[sp] ? (x >> 20) & ((1ULL << spreads[sp]) - 1) : 0;
				r.ts = (int64_t)t - (spreads[sp] < 64 ? (int64_t)1 << (spreads[sp] ? spreads[sp] - 1 : 0) : 0);
				r.rank = (uint32_t)(x >> 61);
				r.stream = (uint32_t)(x >> 59) & 1;
				r.seq = (uint32_t)(x >> 57) & 1;
				r.id = (uint32_t)i;
				if (ev_sorter_add(s, &r) != EV_OK) {
					CHECK(0);
					break;
				}
			}
			CHECK(spill ? ev_sorter_runs(s) > 1 : ev_sorter_runs(s) == 0);
			struct full f;
			memset(&f, 0, sizeof f);
			CHECK(ev_sorter_finish(s, NULL, check_full_order, &f) == EV_OK);
			CHECK(f.n == n && f.bad == 0);
			ev_sorter_close(s);
		}
}

/* The buffer is one reservation of the budget; where the address space
 * cannot be had (here: a budget of 4 EiB) it grows by realloc instead. */
static void test_reserved_and_grown(void)
{
	sort_some(256u << 20, 100000);
	sort_some(1ULL << 62, 100000);
}

/* ev_big_reserve: aligned to a huge page, zero, writable to its end; NULL
 * for what no address space holds. */
static void test_big_reserve(void)
{
	size_t n = (3u << 20) + 5;
	unsigned char *p = ev_big_reserve(n);
	CHECK(p != NULL);
	if (p) {
		CHECK(((uintptr_t)p & ((2u << 20) - 1)) == 0);
		CHECK(p[0] == 0 && p[n - 1] == 0 && p[n / 2] == 0);
		p[0] = 1;
		p[n - 1] = 2;
		CHECK(p[0] == 1 && p[n - 1] == 2);
		ev_big_release(p, n);
	}
	CHECK(ev_big_reserve(0) == NULL);
	CHECK(ev_big_reserve(SIZE_MAX - 4096) == NULL);
	CHECK(ev_big_reserve((size_t)1 << 62) == NULL);
}


/* ---- the k-way heap -------------------------------------------------- */

/* k sorted sources merged through the heap, ties by source index as
 * ev-merge gives them: the order must be a stable sort of the sources
 * concatenated in source order (a record's id is its place there). */
#define KSRC 7
#define KLEN 300

static void kmerge_sources(unsigned seed, size_t *len, struct ev_rec src[KSRC][KLEN])
{
	uint64_t x = seed, id = 0;
	for (size_t k = 0; k < KSRC; k++) {
		int64_t ts = 0;
		uint32_t rank = 0;
		/* Source 3 is empty; the others of different lengths. */
		len[k] = k == 3 ? 0 : KLEN - 37 * k;
		for (size_t i = 0; i < len[k]; i++) {
			x = x * 6364136223846793005ULL + 1442695040888963407ULL;
			int64_t step = (int64_t)((x >> 60) & 3); /* many equal times, within and across sources */
			/* Each source in the stream's order: at an equal time the
			 * rank does not go down. */
			rank = step ? (uint32_t)(x >> 59) & 1 : rank | ((uint32_t)(x >> 59) & 1);
			ts += step;
			ev_rec_init(&src[k][i]);
			src[k][i].ts = ts;
			src[k][i].rank = rank;
			src[k][i].stream = 0;
			src[k][i].seq = 0;
			src[k][i].id = (uint32_t)id++;
		}
	}
}

/* The order a stable sort gives: earlier in the concatenation wins ties. */
static int stable_before(const struct ev_rec *a, const struct ev_rec *b)
{
	int c = ev_rec_order_cmp(a, b);
	return c ? c < 0 : a->id < b->id;
}

static void test_kmerge_sources(void)
{
	static struct ev_rec src[KSRC][KLEN];
	size_t len[KSRC], pos[KSRC] = { 0 }, total = 0, out = 0, bad = 0;
	struct ev_rec cur[KSRC], last;
	kmerge_sources(11, len, src);
	struct ev_kmerge h;
	CHECK(ev_kmerge_init(&h, KSRC) == EV_OK);
	for (size_t k = 0; k < KSRC; k++) {
		total += len[k];
		if (len[k]) {
			cur[k] = src[k][0];
			CHECK(ev_kmerge_add(&h, k, &cur[k], k) == EV_OK);
		}
	}
	CHECK(h.n == KSRC - 1);
	while (h.n > 0) {
		size_t k = ev_kmerge_top(&h);
		if (out && !stable_before(&last, &cur[k]))
			bad++;
		last = cur[k];
		out++;
		if (++pos[k] < len[k]) {
			cur[k] = src[k][pos[k]];
			ev_kmerge_next(&h, k);
		} else {
			ev_kmerge_drop(&h);
		}
	}
	CHECK(out == total && bad == 0);
	ev_kmerge_free(&h);
	/* Full: a source too many is refused. */
	struct ev_rec r;
	ev_rec_init(&r);
	CHECK(ev_kmerge_init(&h, 1) == EV_OK);
	CHECK(ev_kmerge_add(&h, 0, &r, 0) == EV_OK);
	CHECK(ev_kmerge_add(&h, 1, &r, 1) == EV_ERR_ARG);
	ev_kmerge_free(&h);
}

/* Records with one key everywhere: the tie numbers alone decide, here
 * arrival numbers as the sorter gives them (interleaved across sources). */
static void test_kmerge_ties(void)
{
	struct ev_rec cur[3];
	uint64_t next[3] = { 0, 1, 2 }, seen = 0, bad = 0, n = 0;
	struct ev_kmerge h;
	CHECK(ev_kmerge_init(&h, 3) == EV_OK);
	for (size_t k = 0; k < 3; k++) {
		ev_rec_init(&cur[k]);
		cur[k].ts = 42;
		CHECK(ev_kmerge_add(&h, k, &cur[k], next[k]) == EV_OK);
	}
	/* Source k holds arrivals k, k + 3, k + 6, ... below 30. */
	while (h.n > 0) {
		size_t k = ev_kmerge_top(&h);
		bad += next[k] != seen;
		seen++;
		n++;
		next[k] += 3;
		if (next[k] < 30)
			ev_kmerge_next(&h, next[k]);
		else
			ev_kmerge_drop(&h);
	}
	CHECK(n == 30 && bad == 0);
	ev_kmerge_free(&h);
	/* No sources at all. */
	CHECK(ev_kmerge_init(&h, 0) == EV_OK);
	CHECK(h.n == 0);
	ev_kmerge_drop(&h);
	CHECK(h.n == 0);
	ev_kmerge_free(&h);
}

int main(void)
{
	RUN(test_many_runs);
	RUN(test_empty);
	RUN(test_truncated_run);
	RUN(test_full_order);
	RUN(test_reserved_and_grown);
	RUN(test_big_reserve);
	RUN(test_kmerge_sources);
	RUN(test_kmerge_ties);
	return unit_report("test_sort");
}
