/* SPDX-License-Identifier: MIT */
/*
 * test_flex_align.c - lib/flex/acealign.c, acelyzer's mp_sync_tight_v1:
 * three ranks worked by hand (the AllReduce groups only, the receivers on
 * the first group, the smallest receive-minus-send over the groups, the
 * reference event), counters unwrapped by host time, and what cannot be
 * aligned.
 */
#include <string.h>

#include "ev.h"
#include "flex/acealign_int.h"
#include "unit.h"

#define KHZ 1000000u /* 1000 MHz: a cycle is a ns */

/* rank's anchor is host - device = A(rank) = 10000 * (rank + 1). */
static int64_t anchor(uint32_t rank)
{
	return 10000 * ((int64_t)rank + 1);
}

/* A CollGroup event of rank with latest TS2 ts2 and TS5 ts5, ending at
 * host time end. */
static void ev(struct fa *a, uint32_t rank, uint64_t group, int reduce, uint64_t ts2, uint64_t ts5, int64_t end)
{
	uint64_t cy[5] = { ts2, ts2, ts2, ts2, ts5 };
	int64_t dev[5];
	CHECK(fa_place(a, rank, cy, 0, (int64_t)ts2 + anchor(rank), KHZ, dev) == EV_OK);
	CHECK(dev[1] == (int64_t)ts2 && dev[4] == (int64_t)ts5);
	CHECK(fa_note_group(a, rank, 0, group, reduce, dev, end) == EV_OK);
}

static void test_three_ranks(void)
{
	ev_strtab *st = ev_strtab_new();
	uint64_t h, g, k;
	CHECK(ev_strtab_intern(st, "Other_h", 7, &h) == EV_OK);
	CHECK(ev_strtab_intern(st, "AllReduce_g", 11, &g) == EV_OK);
	CHECK(ev_strtab_intern(st, "AllReduce_k", 11, &k) == EV_OK);
	struct fa a;
	fa_init(&a);
	/* Rank 0 has Other_h first: left out, as there are AllReduce groups
	 * (taken, it would make the order chain and move everything). */
	ev(&a, 0, h, 0, 5, 10, 500);
	ev(&a, 0, g, 1, 50, 100, 1100);
	ev(&a, 0, k, 0, 60, 400, 1500);
	ev(&a, 1, h, 0, 5000, 5000, 0);
	ev(&a, 1, g, 0, 1000, 1001, 0);
	ev(&a, 1, k, 0, 1150, 1151, 0);
	ev(&a, 2, h, 0, 9000, 9000, 0);
	ev(&a, 2, g, 0, 3000, 3001, 0);
	ev(&a, 2, k, 0, 3100, 3101, 0);
	uint32_t ranks[] = { 0, 1, 2 };
	CHECK(fa_solve(&a, ranks, 3, st) == EV_OK);
	CHECK(a.done && a.tree);
	/* Receivers on the first group g: rank 2 by 3000 - 1000 = 2000.  Then
	 * receive minus send per group: g 1000 - 100 = 900, k 1150 - 400 = 750:
	 * k, every receiver back by 750.  Host time meets rank 0's latest TS5
	 * of k: 1500 - 400 = 1100. */
	CHECK(fa_rank_of(&a, 0)->shift == 0);
	CHECK(fa_rank_of(&a, 1)->shift == -750);
	CHECK(fa_rank_of(&a, 2)->shift == -2750);
	CHECK(a.ref_group == k && a.ref_rank == 0 && a.ref_offset == 1100);
	/* A device time t of rank r lands at t + shift + 1100, the converter
	 * subtracting fa_offset from t + anchor. */
	CHECK(fa_offset(&a, 2) == anchor(2) + 2750 - 1100);
	/* Rank 1 lacks AllReduce_k: nothing aligned, and why. */
	struct fa b;
	fa_init(&b);
	ev(&b, 0, g, 1, 50, 100, 1100);
	ev(&b, 0, k, 0, 60, 400, 1500);
	ev(&b, 1, g, 0, 1000, 1001, 0);
	CHECK(fa_solve(&b, ranks, 3, st) == EV_OK); /* rank 2 has no device events: not counted */
	CHECK(!b.done && b.why && b.why_rank == 1 && b.why_group == k);
	CHECK(fa_offset(&b, 1) == 0);
	CHECK(fa_solve(&b, ranks, 1, st) == EV_OK && !b.done);
	fa_free(&a);
	fa_free(&b);
	ev_strtab_free(st);
}

static void test_unwrap(void)
{
	struct fa a;
	fa_init(&a);
	int64_t dev[5], wrap = INT64_C(1) << 32;
	uint64_t cy[5] = { 100, 200, 300, 400, 500 };
	CHECK(fa_place(&a, 3, cy, 2, 7000, KHZ, dev) == EV_OK); /* anchor 7000 - 300 */
	CHECK(dev[0] == 100 && dev[4] == 500);
	/* The same counters 2^32 ns of host time later: one wrap. */
	CHECK(fa_place(&a, 3, cy, 2, 7000 + wrap, KHZ, dev) == EV_OK);
	CHECK(dev[0] == 100 + wrap && dev[4] == 500 + wrap);
	/* Host jitter far below a wrap period: none. */
	CHECK(fa_place(&a, 3, cy, 2, 7000 + 123456, KHZ, dev) == EV_OK);
	CHECK(dev[2] == 300);
	/* Earlier than the anchor by a wrap period: back below 0. */
	CHECK(fa_place(&a, 3, cy, 2, 7000 - wrap, KHZ, dev) == EV_OK);
	CHECK(dev[0] == 100 - wrap);
	CHECK(fa_rank_of(&a, 3)->anchor == 6700);
	fa_free(&a);
}

int main(void)
{
	RUN(test_three_ranks);
	RUN(test_unwrap);
	return unit_report("test_flex_align");
}
