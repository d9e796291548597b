/* SPDX-License-Identifier: MIT */
/*
 * fuzz_rocprof.c - the rocprofv3 conversion (lib/rocprof: the nested walk
 * of the document, names, records, the sorter and the time-ordered linking
 * and writing) on arbitrary bytes, through the library's entry points.
 */
#include "fuzz.h"

#include "ev.h"
#include "ev/rocprof.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *path = fuzz_input_file(data, size, "1_results.json");
	struct ev_rocprof_opts o;
	memset(&o, 0, sizeof o);
	o.rules = (enum ev_rules)(size % 3);
	o.names = (enum ev_rp_names)((size / 3) % 3);
	o.no_api = (size & 8) != 0;
	o.sort_bytes = 1u << 20;
	o.max_object = 1u << 16;
	o.link_window = 1024;
	o.max_markers = 4;
	ev_rocprof *r;
	ev_input *in;
	if (ev_rocprof_new(&r, &o, 1) != EV_OK)
		abort();
	ev_rocprof_file(r, 0)->path = path;
	if (ev_input_open(&in, path) != EV_OK)
		abort();
	char err[512];
	int rc = ev_rocprof_read(r, 0, in, err, sizeof err);
	ev_input_close(in);
	if (rc == EV_OK) {
		ev_writer *w;
		if (ev_writer_open(&w, fuzz_path(1, "out.ev"), ev_rocprof_strtab(r)) == EV_OK) {
			if (ev_rocprof_write(r, w) == EV_OK) {
				int closed = ev_writer_close(w);
				(void)closed;
			} else
				ev_writer_abort(w);
		}
	} else if (!err[0]) {
		abort(); /* every failure names its cause */
	}
	ev_rocprof_free(r);
	return 0;
}
