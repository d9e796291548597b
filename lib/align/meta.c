/* SPDX-License-Identifier: MIT */
/*
 * meta.c - the alignment's result as #meta lines of the output stream, so
 * that later tools can tell aligned times and undo or check them.
 */
#include <stdio.h>
#include <string.h>

#include "ev/align.h"
#include "ev/stream.h"

int ev_align_write_meta(const ev_align *a, const struct ev_align_cfgs *c, ev_writer *w)
{
	int rc = EV_OK;
	uint32_t ncfg = c ? c->n : 0;
	for (size_t k = 0; k < ev_align_count(a) && !rc; k++) {
		const struct ev_align_rank *r = ev_align_at(a, k);
		if (r->state == EV_UNALIGNED)
			continue; /* consumers read a missing rank as "not aligned" */
		char pre[32] = "";
		if (ncfg > 1)
			snprintf(pre, sizeof pre, "cfg%u.", r->config);
		rc = ev_write_textf(w, "#meta align.%srank%u.offset_ns=%lld align.%srank%u.drift_ppm=%.6f align.%srank%u.t0_ns=%lld",
		                    pre, r->rank, (long long)r->fit.offset, pre, r->rank, r->fit.drift * 1e6, pre, r->rank,
		                    (long long)r->fit.t0);
	}
	/* A configuration's keys in one #meta value: escaped, spaces as commas. */
	for (uint32_t i = 0; ncfg > 1 && i < ncfg && !rc; i++) {
		char esc[8192];
		ev_text_escape(c->names[i], strlen(c->names[i]), esc, sizeof esc);
		for (char *p = esc; *p; p++)
			if (*p == ' ')
				*p = ',';
		rc = ev_write_textf(w, "#meta align.cfg%u=%s", i, esc);
	}
	if (!rc)
		rc = ev_write_textf(w, "#meta align.mode=%s", ev_align_mode_name(ev_align_options(a)->mode));
	return rc;
}
