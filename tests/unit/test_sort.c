/* SPDX-License-Identifier: MIT */
/*
 * test_sort.c - the external sorter (lib/stream/ev_sort.c) called directly:
 * many more runs than are merged at once (several merge passes), order and
 * stable ties kept, every run file removed; an empty sort.
 */
#include <dirent.h>
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

int main(void)
{
	RUN(test_many_runs);
	RUN(test_empty);
	printf("test_sort: %d checks\n%d passed, %d failed\n", checks, tests_passed, tests_failed);
	return tests_failed != 0;
}
