/* SPDX-License-Identifier: MIT */
/*
 * fuzz_stats.c - the stats library (include/ev/stats.h) on arbitrary ev
 * streams: every analysis of the registry with several groupings and each
 * of its tables, coll with a tiny open-collective bound (so releases
 * happen), and compare, all through library calls.  Records the reader accepts must never make an analysis
 * fail other than with EV_ERR_ORDER.
 */
#include "fuzz.h"

#include "ev.h"

#define MAX_RECS 4096

/* The records of the input, read once; every analysis then runs on them. */
static struct ev_rec recs[MAX_RECS];
static size_t nrecs;

static void run_one(ev_strtab *st, ev_meta *meta, ev_output *out, const struct ev_stats_opts *so, int compare)
{
	ev_stats *s = NULL;
	struct ev_rowset rs;
	memset(&rs, 0, sizeof rs);
	struct ev_stats_opts o = *so;
	ev_table *each = NULL;
	static const char *const cols[] = { "a", "b", "c", "d", "e", "f", "g", "h", "i", "j", "k", "l", "m", "n", "o",
		                            "p", "q" };
	const struct ev_stats_subtable *tb = o.analysis->tables ? &o.analysis->tables[o.table] : NULL;
	if (tb && tb->stream_cols) {
		size_t nc = 0;
		while (tb->stream_cols[nc])
			nc++;
		if (nc > sizeof cols / sizeof cols[0] || ev_table_open(&each, out, EV_TABLE_JSON, cols, nc) != EV_OK)
			abort();
		o.stream = each;
	}
	if (ev_stats_new(&s, &o, st, meta) != EV_OK)
		abort();
	int bad = 0;
	for (size_t i = 0; i < nrecs && !bad; i++) {
		int rc = ev_stats_add(s, &recs[i]);
		if (rc == EV_ERR_ORDER)
			bad = 1;
		else if (rc != EV_OK)
			abort(); /* an accepted record must not break an analysis */
	}
	if (!bad && ev_stats_finish(s) == EV_OK && ev_stats_rows(s, &rs) == EV_OK) {
		if (compare && rs.nkeys && !strcmp(rs.keys[0].name, "src")) {
			struct ev_compare_opts co = { .threshold = 1.0, .fmt = EV_TABLE_CSV };
			struct ev_compare_counts cc;
			if (ev_stats_compare(s, &rs, &co, out, &cc) != EV_OK)
				abort();
		} else if (ev_rowset_print(&rs, out, EV_TABLE_MD) != EV_OK) {
			abort();
		}
	}
	if (each && ev_table_close(each) != EV_OK && !bad)
		abort();
	ev_rowset_free(&rs);
	ev_stats_free(s);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *in = fuzz_input_file(data, size, "in.ev");
	ev_strtab *st = ev_strtab_new();
	ev_meta *meta = ev_meta_new();
	ev_reader *r = NULL;
	if (!st || !meta || ev_reader_open(&r, in, st, meta) != EV_OK)
		abort();
	ev_reader_skip_text(r, 1);
	nrecs = 0;
	while (nrecs < MAX_RECS && ev_read(r, &recs[nrecs]) == EV_REC)
		nrecs++;
	ev_reader_close(r);
	ev_output *out = NULL;
	if (ev_output_open(&out, "/dev/null") != EV_OK)
		abort();
	struct ev_stats_opts o;
	memset(&o, 0, sizeof o);
	o.exact_limit = 16; /* sketches too */
	o.class_mask = ~0u;
	o.coll_limits.max_open = 2;
	o.coll_limits.max_held = 5;
	static const int bys[][3] = { { EV_BY_SRC, EV_BY_RANK, -1 }, { EV_BY_CONFIG, -1, -1 }, { EV_BY_STREAM, -1, -1 } };
	for (size_t a = 0; ev_stats_registry[a]; a++) {
		o.analysis = ev_stats_registry[a];
		size_t ntables = 0;
		while (o.analysis->tables && o.analysis->tables[ntables].name)
			ntables++;
		for (size_t b = 0; b < sizeof bys / sizeof bys[0]; b++) {
			o.nby = 0;
			for (int k = 0; k < 3 && bys[b][k] >= 0; k++)
				o.by[o.nby++] = bys[b][k];
			o.float_us = (int)b == 1;
			o.top = b;
			o.table = ntables ? (unsigned)(b % ntables) : 0; /* every table of coll and short */
			run_one(st, meta, out, &o, 0);
			if (o.by[0] == EV_BY_SRC)
				run_one(st, meta, out, &o, 1); /* compared when its first key is src */
		}
	}
	ev_output_abort(out);
	ev_meta_free(meta);
	ev_strtab_free(st);
	return 0;
}
