/* SPDX-License-Identifier: MIT */
/*
 * fuzz_nsys.c - the Nsight Systems reader (ev/nsys.h) on arbitrary bytes
 * taken as an SQLite database in memory (sqlite3_deserialize): schema
 * detection, payload decoding, NCCL matching, ranks and the write, with
 * the options the input's first byte picks.  Statuses must be EV_OK or
 * negative with a message; anything else aborts.
 */
#include "fuzz.h"

#include <sqlite3.h>

#include "ev.h"
#include "ev/nsys.h"

static void quiet(void *ctx, const char *msg)
{
	(void)ctx;
	if (!msg || !*msg)
		abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	sqlite3 *db = NULL;
	(void)fuzz_input_file; /* fuzz.h's file helper: not needed in memory */
	if (sqlite3_open(":memory:", &db) != SQLITE_OK) {
		sqlite3_close(db);
		return 0;
	}
	unsigned char *copy = sqlite3_malloc64(size ? size : 1);
	if (!copy) {
		sqlite3_close(db);
		return 0;
	}
	if (size)
		memcpy(copy, data, size);
	if (sqlite3_deserialize(db, "main", copy, (sqlite3_int64)size, (sqlite3_int64)size,
	                        SQLITE_DESERIALIZE_FREEONCLOSE | SQLITE_DESERIALIZE_READONLY) != SQLITE_OK) {
		sqlite3_close(db);
		return 0;
	}
	uint8_t pick = size > 200 ? data[199] : 0;
	struct ev_nsys_opts o = { .warn = quiet };
	o.api = pick & 1;
	o.window = (pick & 2) ? EV_NSYS_WIN_ALL : EV_NSYS_WIN_MARKS;
	if (pick & 4) {
		o.have_range = 1;
		o.t0 = 100;
		o.t1 = 1000000;
	}
	if (pick & 8) {
		o.steps = "step";
		o.step_from = 0;
		o.step_to = 1;
	}
	ev_nsys *ns = NULL;
	ev_writer *w = NULL;
	int rc = ev_nsys_new(&ns, &o);
	if (!rc)
		rc = ev_nsys_add_db(ns, db, "fuzz.sqlite");
	else
		sqlite3_close(db);
	if (!rc)
		rc = ev_nsys_prepare(ns);
	if (!rc && (rc = ev_writer_open(&w, fuzz_path(1, "out.ev"), ev_nsys_strtab(ns))) == EV_OK) {
		rc = ev_nsys_write(ns, w, NULL, NULL);
		if (rc) {
			ev_writer_abort(w);
		} else {
			rc = ev_writer_close(w);
			ev_nsys_finish(ns);
		}
	}
	if (rc > 0 || (rc < 0 && !*ev_nsys_errmsg(ns)))
		abort();
	ev_nsys_free(ns);
	return 0;
}
