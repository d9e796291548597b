/* SPDX-License-Identifier: MIT */
/*
 * fuzz_kineto.c - the Kineto conversion (lib/kineto: document scanning,
 * the one-pass event scanner, the event mapping, B/E pairs, collective
 * inference, the sorter and the time-ordered linking and writing) on
 * arbitrary bytes, through the library's entry points.
 */
#include "fuzz.h"

#include "ev.h"
#include "ev/kineto.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *path = fuzz_input_file(data, size, "rank1.json");
	struct ev_kineto_opts o;
	memset(&o, 0, sizeof o);
	o.rules = (enum ev_rules)(size % 3);
	o.python = 1;
	o.clip = (size & 4) != 0;
	o.no_api = (size & 8) != 0;
	o.sort_bytes = 1u << 20;
	o.max_object = 1u << 16;
	o.max_tokens = 4096;
	o.link_window = 1024;
	ev_kineto *k;
	ev_input *in;
	if (ev_kineto_new(&k, &o, 1) != EV_OK)
		abort();
	ev_kineto_file(k, 0)->path = path;
	if (ev_input_open(&in, path) != EV_OK)
		abort();
	char err[512];
	int rc = ev_kineto_read(k, 0, in, err, sizeof err);
	ev_input_close(in);
	if (rc == EV_OK) {
		/* The scanner's view of a single event must agree on validity
		 * with itself at any token limit. */
		struct ev_kevent e;
		int scanned = ev_kineto_scan_event((const char *)data, size, 16, &e);
		(void)scanned;
		if (ev_kineto_file(k, 0)->rank < 0)
			ev_kineto_file(k, 0)->rank = 1;
		ev_writer *w;
		if (ev_writer_open(&w, fuzz_path(1, "out.ev"), ev_kineto_strtab(k)) == EV_OK) {
			if (ev_kineto_write(k, w) == EV_OK) {
				int closed = ev_writer_close(w);
				(void)closed;
			} else
				ev_writer_abort(w);
		}
	} else if (!err[0]) {
		abort(); /* every failure names its cause */
	}
	ev_kineto_free(k);
	return 0;
}
