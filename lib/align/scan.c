/* SPDX-License-Identifier: MIT */
/*
 * scan.c - pass 1 of an alignment: every input read once, each record's
 * anchors handed to ev_align under its clock, then every rank fitted.
 * Which configuration a source belongs to is the caller's: it sees the
 * #src lines and answers for each source.
 */
#include <string.h>

#include "ev/align.h"
#include "ev/stream.h"

static int scan_one(struct ev_align_scan *s, size_t i, ev_strtab *st, ev_meta *meta)
{
	ev_reader *r;
	int rc = ev_reader_open(&r, s->paths[i], st, meta), status = EV_OK;
	if (rc != EV_OK) {
		ev_say_file(&s->say, strcmp(s->names[i], "-") ? s->names[i] : "standard input", rc);
		return rc;
	}
	struct ev_rec rec;
	uint32_t last_src = UINT32_MAX, cfg = 0, cfg0 = 0, rank0 = 0;
	int clocks = 0;
	while ((rc = ev_read(r, &rec)) == EV_REC || rc == EV_TEXT) {
		if (rc == EV_TEXT) {
			const char *line;
			size_t len;
			ev_reader_text(r, &line, &len);
			if (len >= 5 && memcmp(line, "#src ", 5) == 0) {
				if ((status = s->src_line(s->ctx, i, r, line, len)) != EV_OK)
					break;
				last_src = UINT32_MAX; /* the source may have a new configuration */
			}
			continue;
		}
		if (!s->al)
			break; /* the header is read */
		if (!s->header_seen) {
			/* What the times mean, for the report of unaligned ranks. */
			const char *org = ev_reader_header(r, "origin"), *prod = ev_reader_header(r, "producer");
			snprintf(s->origin, sizeof s->origin, "%s", org ? org : "");
			snprintf(s->producer, sizeof s->producer, "%s", prod ? prod : "");
			s->header_seen = 1;
		}
		if (rec.src != last_src) {
			if ((status = s->config_of(s->ctx, i, rec.src, &cfg)) != EV_OK)
				break;
			last_src = rec.src;
		}
		uint32_t rank = s->rank_is_input ? (uint32_t)i : rec.rank;
		if (!clocks) {
			cfg0 = cfg;
			rank0 = rank;
			clocks = 1;
		} else if (cfg != cfg0 || rank != rank0) {
			s->several_clocks = 1;
		}
		if ((status = ev_align_add(s->al, cfg, rank, &rec)) != EV_OK) {
			ev_say(&s->say, EV_SAY_ERROR, "out of memory");
			break;
		}
	}
	if (status == EV_OK && rc < 0) {
		ev_say_reader(&s->say, r, rc);
		status = rc;
	}
	ev_reader_close(r);
	return status;
}

int ev_align_scan_run(struct ev_align_scan *s)
{
	int status = EV_OK;
	ev_strtab *st = ev_strtab_new();
	ev_meta *meta = ev_meta_new();
	if (!st || !meta) {
		ev_say(&s->say, EV_SAY_ERROR, "out of memory");
		status = EV_ERR_NOMEM;
		goto out;
	}
	for (size_t i = 0; i < s->n && status == EV_OK; i++)
		status = scan_one(s, i, st, meta);
	if (!s->al)
		goto out;
	/* The ranks a configuration should have. */
	for (size_t k = 0; k < ev_meta_nrank(meta); k++) {
		const struct ev_rank_info *ri = ev_meta_rank_at(meta, k);
		const char *ws = ev_kv_get(ri->kv, ri->nkv, "world_size");
		uint32_t v;
		if (ws && ev_parse_u32(ws, &v) == 0 && v > s->world_size && v <= (1u << 24))
			s->world_size = v;
	}
	if (status == EV_OK && (status = ev_align_solve(s->al)) != EV_OK)
		ev_say(&s->say, EV_SAY_ERROR, "out of memory");
out:
	ev_strtab_free(st);
	ev_meta_free(meta);
	return status;
}
