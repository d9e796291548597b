/* SPDX-License-Identifier: MIT */
/*
 * fuzz_npkit.c - the NPKit summary reader, the table writer and the latency
 * table reader of the NCCL model (lib/nccl) on arbitrary bytes: the bytes as
 * a summary file, the written table read back, and the bytes as a table.
 */
#include "fuzz.h"

#include "ev.h"
#include "ev/nccl_sched.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *in = fuzz_input_file(data, size, "npkit_data_summary_Simple.json");
	const char *tab = fuzz_path(1, "lat.tsv");
	char err[512];
	size_t nev = 0;
	ev_npkit *t = ev_npkit_new();
	if (!t)
		abort();
	int rc = ev_npkit_read(t, in, ev_npkit_proto_from_name(in), 1u << 16, &nev, err, sizeof err);
	if (rc > 0)
		abort();
	/* Half the inputs need the default primitives, as npkit2lat does. */
	if (rc == EV_OK && nev > 0 && (size % 2 == 0 || (ev_npkit_has(t, 0, "RECV_REDUCE_SEND") &&
	                                                 ev_npkit_has(t, 0, "DIRECT_RECV_COPY_SEND")))) {
		ev_output *out;
		if (ev_output_open(&out, tab) == EV_OK) {
			if (ev_npkit_write(t, out) == EV_OK && ev_output_close(out) == EV_OK) {
				ev_nccl_lat *L;
				/* A table npkit2lat wrote either loads or lacks the rows coll-expand needs. */
				if (ev_nccl_lat_load(&L, tab, err, sizeof err) == EV_OK) {
					if (ev_nccl_lat_cost(L, EV_NCCL_P_RRS, EV_PROTO_SIMPLE, 4096) < 0)
						abort();
					ev_nccl_lat_free(L);
				}
			} else {
				ev_output_abort(out);
			}
		}
	}
	ev_npkit_free(t);
	/* The same bytes as a latency table. */
	ev_nccl_lat *L2;
	if (ev_nccl_lat_load(&L2, in, err, sizeof err) == EV_OK) {
		for (unsigned p = 0; p < EV_NCCL_NPRIM; p++)
			if (ev_nccl_lat_cost(L2, (enum ev_nccl_prim)p, EV_PROTO_LL128, 1u << 20) < 0)
				abort();
		ev_nccl_lat_free(L2);
	}
	return 0;
}
