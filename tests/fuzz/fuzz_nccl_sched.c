/* SPDX-License-Identifier: MIT */
/*
 * fuzz_nccl_sched.c - the NCCL schedule model (lib/nccl) on arbitrary ev
 * streams: every record fed to the scheduler as coll-expand does, the
 * schedule counted by a sink, flow lines written to a scratch file.  The
 * message bound is small so that each input stays fast; a status other
 * than the documented ones aborts.
 */
#include "fuzz.h"

#include "ev.h"
#include "ev/nccl_sched.h"

static int count(void *ctx, const struct ev_rec *r)
{
	(void)r;
	(*(uint64_t *)ctx)++;
	return EV_OK;
}

static int documented(int rc)
{
	return rc == EV_OK || rc == EV_NCCL_SKIPPED || rc == EV_ERR_FORMAT || rc == EV_ERR_LIMIT || rc == EV_ERR_ORDER;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *in = fuzz_input_file(data, size, "sched.ev");
	ev_strtab *st = ev_strtab_new();
	ev_meta *meta = ev_meta_new();
	ev_reader *r = NULL;
	ev_nccl_sched *s = NULL;
	uint64_t n = 0;
	if (!st || !meta)
		abort();
	struct ev_nccl_params p;
	ev_nccl_params_default(&p);
	p.max_messages = 1u << 14;
	p.lenient = size % 2;        /* half the inputs skip bad records */
	p.compute = (enum ev_nccl_compute)(size % 3);
	p.lead_in = size % 5 == 0;
	struct ev_nccl_sink sink = { .emit = count, .ctx = &n };
	if (ev_nccl_sched_new(&s, &p, meta, NULL, &sink) != EV_OK)
		abort();
	if (ev_reader_open(&r, in, st, meta) == EV_OK) {
		struct ev_rec rec;
		int rc = EV_OK, pass;
		while (ev_read(r, &rec) > 0) {
			rc = ev_nccl_sched_feed(s, &rec, ev_reader_recno(r), &pass);
			if (!documented(rc))
				abort();
			if (rc != EV_OK && rc != EV_NCCL_SKIPPED)
				break;
		}
		if (rc == EV_OK || rc == EV_NCCL_SKIPPED) {
			rc = ev_nccl_sched_flush(s);
			if (!documented(rc))
				abort();
		}
		ev_nccl_sched_finish(s);
		char buf[256];
		for (size_t i = 0; ev_nccl_sched_absent(s, i, buf, sizeof buf) >= 0; i++)
			;
		for (size_t i = 0; ev_nccl_sched_decision(s, i, NULL); i++)
			;
		ev_reader_close(r);
	}
	ev_nccl_sched_free(s);
	ev_meta_free(meta);
	ev_strtab_free(st);
	return 0;
}
