/* SPDX-License-Identifier: MIT */
/*
 * fuzz_flex.c - lib/flex on arbitrary bytes: a file read into the converter
 * (dialect evidence, event parsing, B/E pairing, classes, device time), the
 * three time-ordering passes, alignment and spans, written as an ev stream
 * that must read back.  Options vary with the input size so that every
 * path runs.  Calls the library only (no tool source).
 */
#include "fuzz.h"

#include "ev.h"
#include "ev/flex.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *path = fuzz_input_file(data, size, "in.json");
	const char *out = fuzz_path(1, "out.ev");
	ev_strtab *st = ev_strtab_new();
	ev_flex_reader *rd;
	ev_flex_conv *c;
	struct ev_flex_opts o;
	ev_flex_opts_init(&o);
	o.sort_bytes = 1u << 20;
	o.overlap = (size & 1) ? EV_FLEX_OV_DROP : EV_FLEX_OV_TID;
	o.ts_fix = (size >> 1) & 1;
	o.strip_ids = (size >> 2) & 1;
	o.drop_prep = (size >> 3) & 1;
	o.soc_khz = (size >> 4) & 1 ? 1000000 : 733333;
	o.align = (int)((size >> 5) % 3); /* none, p2p, acelyzer */
	if (!st || ev_flex_reader_new(&rd) != EV_OK)
		abort();
	if (ev_flex_conv_new(&c, &o, st) != EV_OK)
		abort();
	struct ev_flex_read res;
	int rc = ev_flex_read_file(rd, c, 0, path, 1 << 16, NULL, NULL, &res);
	if (rc == EV_OK) {
		ev_writer *w;
		if (ev_writer_open(&w, out, st) != EV_OK)
			abort();
		rc = ev_flex_conv_finish(c, w);
		if (rc == EV_OK) {
			if (ev_writer_close(w) != EV_OK)
				abort();
			/* What was written reads back, in time order. */
			ev_reader *r;
			struct ev_rec rec;
			struct ev_order ord = { 0, 0, 0 };
			if (ev_reader_open(&r, out, NULL, NULL) != EV_OK)
				abort();
			ev_reader_skip_text(r, 1);
			while ((rc = ev_read(r, &rec)) == EV_REC)
				if (ev_order_check(&ord, rec.ts) != EV_OK)
					abort();
			if (rc != EV_EOF)
				abort();
			(void)ev_reader_close(r);
			unlink(out);
		} else {
			ev_writer_abort(w);
		}
	} else if (res.error == EV_FLEX_RE_NONE) {
		abort(); /* a failure always says what */
	}
	ev_flex_conv_free(c);
	ev_flex_reader_free(rd);
	ev_strtab_free(st);
	return 0;
}
