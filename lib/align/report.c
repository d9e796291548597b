/* SPDX-License-Identifier: MIT */
/*
 * report.c - the alignment report: what was fitted for every rank, as notes
 * and as a TSV table, and warnings for what alignment could not do.
 */
#include <stdio.h>
#include <string.h>

#include "ev/align.h"
#include "ev/stream.h"
#include "ev/table.h"

/* A time in ns in the unit that reads best. */
static void fmt_ns(char *buf, size_t n, double v)
{
	double a = v < 0 ? -v : v;
	if (a >= 1e9)
		snprintf(buf, n, "%.6f s", v / 1e9);
	else if (a >= 1e6)
		snprintf(buf, n, "%.3f ms", v / 1e6);
	else if (a >= 1e3)
		snprintf(buf, n, "%.3f us", v / 1e3);
	else
		snprintf(buf, n, "%.0f ns", v);
}

static const char *state_name(enum ev_align_state s)
{
	switch (s) {
	case EV_ALIGNED_REF: return "reference";
	case EV_ALIGNED: return "aligned";
	case EV_ALIGNED_START: return "start";
	case EV_UNALIGNED: return "unaligned";
	}
	return "?";
}

static const char *const report_cols[] = {
	"config", "rank", "state", "via", "offset_ns", "drift_ppm", "t0_ns", "anchors_coll", "anchors_p2p",
	"anchors_kernel", "used_coll", "used_p2p", "used_kernel", "outliers", "resid_median_ns", "resid_max_ns",
	"span_ns", "note",
};

/* One rank's row.  The configuration name keeps its bytes (a tab from an
 * escaped #src value stays a tab), and drift and residuals keep the fixed
 * decimals readers of the report have always seen. */
static int table_row(ev_table *t, const char *cname, const struct ev_align_rank *r, const char *note)
{
	const struct ev_align_fit *f = &r->fit;
	int rc = ev_table_str_raw(t, cname);
	rc = rc ? rc : ev_table_u64(t, r->rank);
	rc = rc ? rc : ev_table_str(t, state_name(r->state));
	rc = rc ? rc : ev_table_u64(t, r->via);
	rc = rc ? rc : ev_table_i64(t, f->offset);
	rc = rc ? rc : ev_table_fixed(t, f->drift * 1e6, 6);
	rc = rc ? rc : ev_table_i64(t, f->t0);
	for (int k = 0; k < EV_ANCHOR_KINDS; k++)
		rc = rc ? rc : ev_table_u64(t, r->anchors[k]);
	for (int k = 0; k < EV_ANCHOR_KINDS; k++)
		rc = rc ? rc : ev_table_u64(t, r->used[k]);
	rc = rc ? rc : ev_table_u64(t, f->outliers);
	rc = rc ? rc : ev_table_fixed(t, f->resid_med, 0);
	rc = rc ? rc : ev_table_fixed(t, f->resid_max, 0);
	rc = rc ? rc : ev_table_u64(t, f->span);
	return rc ? rc : ev_table_str(t, note);
}

/* The note on one rank. */
static void say_rank(const struct ev_align_report *rep, const struct ev_align_rank *r, const char *note)
{
	const struct ev_align_fit *f = &r->fit;
	char off[32], med[32], mx[32];
	fmt_ns(off, sizeof off, (double)f->offset);
	fmt_ns(med, sizeof med, f->resid_med);
	fmt_ns(mx, sizeof mx, f->resid_max);
	if (r->state == EV_ALIGNED)
		ev_say(&rep->say, EV_SAY_NOTE,
		       "align:   rank %u: offset %s, drift %+.3f ppm, via rank %u, anchors %llu coll %llu p2p %llu kernel (%zu outliers), residual median %s max %s; %s",
		       r->rank, off, f->drift * 1e6, r->via, (unsigned long long)r->used[0], (unsigned long long)r->used[1],
		       (unsigned long long)r->used[2], f->outliers, med, mx, note);
	else if (r->state == EV_ALIGNED_START)
		ev_say(&rep->say, EV_SAY_NOTE, "align:   rank %u: first event at %lld ns moved to 0", r->rank,
		       (long long)f->offset);
	else
		ev_say(&rep->say, EV_SAY_NOTE, "align:   rank %u: %s", r->rank,
		       r->state == EV_ALIGNED_REF ? "reference" : "left on its own clock");
}

/* What a configuration's ranks add up to, for its warnings. */
struct cfg_sum {
	uint64_t anchors[EV_ANCHOR_KINDS];
	size_t ranks, unaligned, doubtful, nodrift[EV_DRIFT_IMPLAUSIBLE + 1];
};

/* The warnings of one configuration. */
static void warn_config(const ev_align *a, const struct ev_align_report *rep, uint32_t cfg, const char *cname,
                        const struct cfg_sum *c)
{
	const struct ev_align_opts *o = ev_align_options(a);
	const struct ev_say *say = &rep->say;
	if (o->mode >= EV_ALIGN_OFFSET) {
		if (c->anchors[EV_ANCHOR_COLL] + c->anchors[EV_ANCHOR_P2P] == 0 && c->ranks > 1)
			ev_say(say, EV_SAY_WARN, "configuration %s: no coll or p2p records with a communicator; %s", cname,
			       c->anchors[EV_ANCHOR_KERNEL] ? "aligned by NCCL kernels matched by (stream, ordinal, name)"
			                                    : "and no NCCL kernels either: nothing to align by");
		if (c->unaligned && c->unaligned == c->ranks - 1) {
			if (!strcmp(rep->origin ? rep->origin : "", "unix"))
				ev_say(say, EV_SAY_WARN,
				       "configuration %s: no rank could be aligned; times stay on each trace's own UTC clock (origin=unix%s)",
				       cname,
				       !strcmp(rep->producer ? rep->producer : "", "nsys2ev") ? ": the nsys session start in UTC" : "");
			else
				ev_say(say, EV_SAY_WARN, "configuration %s: no rank could be aligned; times left as they are", cname);
		} else if (c->unaligned) {
			ev_say(say, EV_SAY_WARN,
			       "configuration %s: %zu rank(s) share no anchor with an aligned rank and stay on their own clock",
			       cname, c->unaligned);
		}
		if (c->doubtful)
			ev_say(say, EV_SAY_WARN,
			       "configuration %s: %zu rank(s) with a median residual above %llu ns: their alignment is doubtful (see the report)",
			       cname, c->doubtful, (unsigned long long)o->warn_residual);
		for (int d = EV_DRIFT_SHORT_SPAN; d <= EV_DRIFT_IMPLAUSIBLE; d++)
			if (c->nodrift[d])
				ev_say(say, EV_SAY_WARN, "configuration %s: %zu rank(s) %s%s", cname, c->nodrift[d],
				       ev_drift_note_text((enum ev_drift_note)d),
				       d == EV_DRIFT_SHORT_SPAN ? " (--drift-min-span)" : "");
	}
	/* Ranks of world_size that never appeared (the list is cut short). */
	if (rep->world_size && rep->world_size <= 65536 && !rep->rank_is_input) {
		char miss[256];
		size_t ml = 0, nm = 0;
		for (uint32_t rk = 0; rk < rep->world_size; rk++)
			if (!ev_align_get(a, cfg, rk)) {
				if (ml < sizeof miss - 16)
					ml += (size_t)snprintf(miss + ml, sizeof miss - ml, "%s%u", nm ? "," : "", rk);
				nm++;
			}
		if (nm)
			ev_say(say, EV_SAY_WARN, "configuration %s: %zu of world_size %u rank(s) missing: %s%s", cname, nm,
			       rep->world_size, miss, ml >= sizeof miss - 16 ? ",..." : "");
	}
}

int ev_align_report_write(const ev_align *a, const struct ev_align_report *rep)
{
	const struct ev_align_opts *o = ev_align_options(a);
	ev_table *t = NULL;
	int rc = EV_OK;
	if (rep->tsv)
		rc = ev_table_open(&t, rep->tsv, EV_TABLE_TSV, report_cols, sizeof report_cols / sizeof *report_cols);
	size_t n = ev_align_count(a);
	/* Results come in (configuration, rank) order: a configuration is a
	 * stretch [k, e), summed first for its heading note. */
	for (size_t k = 0, e; k < n; k = e) {
		uint32_t cfg = ev_align_at(a, k)->config;
		struct cfg_sum c;
		memset(&c, 0, sizeof c);
		for (e = k; e < n && ev_align_at(a, e)->config == cfg; e++)
			for (int x = 0; x < EV_ANCHOR_KINDS; x++)
				c.anchors[x] += ev_align_at(a, e)->anchors[x];
		c.ranks = e - k;
		const char *name = rep->cfgs && cfg < rep->cfgs->n ? rep->cfgs->names[cfg] : "";
		const char *cname = *name ? name : "(single)";
		ev_say(&rep->say, EV_SAY_NOTE, "align %s: configuration %s: %zu ranks, anchors coll %llu, p2p %llu, kernel %llu",
		       ev_align_mode_name(o->mode), cname, c.ranks, (unsigned long long)c.anchors[EV_ANCHOR_COLL],
		       (unsigned long long)c.anchors[EV_ANCHOR_P2P], (unsigned long long)c.anchors[EV_ANCHOR_KERNEL]);
		for (size_t x = k; x < e; x++) {
			const struct ev_align_rank *r = ev_align_at(a, x);
			const char *note = r->state == EV_ALIGNED ? ev_drift_note_text(r->fit.drift_note)
			                   : r->state == EV_UNALIGNED ? "no anchor shared with an aligned rank" : "";
			say_rank(rep, r, note);
			if (t && !rc)
				rc = table_row(t, cname, r, note);
			c.unaligned += r->state == EV_UNALIGNED;
			c.doubtful += r->state == EV_ALIGNED && r->fit.resid_med > (double)o->warn_residual;
			if (r->state == EV_ALIGNED && o->mode == EV_ALIGN_DRIFT && r->fit.drift_note <= EV_DRIFT_IMPLAUSIBLE)
				c.nodrift[r->fit.drift_note]++;
		}
		warn_config(a, rep, cfg, cname, &c);
	}
	int crc = ev_table_close(t);
	return rc ? rc : crc;
}
