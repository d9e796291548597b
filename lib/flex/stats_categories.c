/* SPDX-License-Identifier: MIT */
/*
 * stats_categories.c - acelyzer's _categories.csv: per rank and compiler
 * category (the kernel's opCat in the compiler logs, else 'other'), the
 * kernel time, calls and ideal time from the logs' ideal cycles at the
 * core clock.  StcdpHbm and other are always listed, the logs' categories
 * after them; an ideal time longer than the observed one is not counted
 * (acelyzer's rule).  acelyzer gives each job the phase of the table it
 * matched; here a kernel takes its own table's phase, and one missing
 * from the logs the phase of its rank's latest kernel that was there
 * (before any: its first one's; none at all: the logs' phase when they
 * have one, as acelyzer's only table), so that a rank has one section of
 * rows per phase.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "flex/stats_int.h"

static int cat_index(ev_flex_stats *s, const char *name)
{
	for (size_t i = 0; i < s->ncats; i++)
		if (!strcmp(s->cats[i], name))
			return (int)i;
	s->cats[s->ncats] = name;
	return (int)s->ncats++;
}

/* The category list, in first-seen order of the logs, and each compiler
 * kernel's index in it. */
int fs_categories_init(ev_flex_stats *s)
{
	size_t nk = s->o.cl ? s->o.cl->n : 0;
	s->cats = malloc((nk + 2) * sizeof *s->cats);
	s->kcat = malloc((nk ? nk : 1) * sizeof *s->kcat);
	if (!s->cats || !s->kcat)
		return EV_ERR_NOMEM;
	cat_index(s, "StcdpHbm");
	cat_index(s, "other");
	s->ph_none = nk ? (unsigned)s->o.cl->k[0].phase : EV_FLEX_PHASE_UNKN;
	for (size_t i = 0; i < nk; i++) {
		s->kcat[i] = (unsigned)cat_index(s, s->o.cl->k[i].category);
		if ((unsigned)s->o.cl->k[i].phase != s->ph_none)
			s->ph_none = EV_FLEX_PHASE_UNKN;
	}
	return EV_OK;
}

/* The kernel's duration in us: acelyzer's is its TS3 -> TS4 cycles at the
 * SoC clock, unrounded, so that one from the held tsx record when the
 * record's duration is that interval at --freq's SoC clock (the stream
 * was converted at it); else the record's whole ns. */
static double kernel_us(const ev_flex_stats *s, const struct ev_rec *r)
{
	const struct ev_rec *t = &s->tsx;
	uint64_t khz = s->o.soc_khz;
	if (khz && s->have_tsx && t->rank == r->rank && t->stream == r->stream && t->ts == r->ts &&
	    ev_flex_cycles_ns(t->step_size, khz) == r->dur)
		return (double)t->step_size * 1000.0 / (double)khz;
	return (double)r->dur / 1000.0;
}

int fs_categories_add(ev_flex_stats *s, const struct ev_rec *r, const char *name, size_t len)
{
	const struct ev_flex_complog *cl = s->o.cl;
	/* Each kernel name is looked up once: the cache holds category + 1
	 * and, above bit 32, the compiler kernel's index + 1 (0: not there). */
	uint64_t *cc = ev_map_get(&s->catcache, r->name);
	uint64_t ci;
	if (cc) {
		ci = *cc;
	} else {
		const struct ev_flex_kernel_info *ki = cl ? ev_flex_complog_find(cl, name, len) : NULL;
		ci = ki ? (uint64_t)s->kcat[ki - cl->k] + 1 : 2;
		if (ki)
			ci |= (uint64_t)(ki - cl->k + 1) << 32;
		if (ev_map_put(&s->catcache, r->name, ci))
			return EV_ERR_NOMEM;
	}
	const struct ev_flex_kernel_info *ki = ci >> 32 ? &cl->k[(ci >> 32) - 1] : NULL;
	if (!ki)
		s->n.missing++;
	double ideal = ki ? (double)ki->ideal * 1000.0 / (double)s->o.core_khz : 0.0; /* us */
	double dur = kernel_us(s, r);
	if (ideal > dur) {
		ideal = 0;
		s->n.ideal_clipped++;
	}
	unsigned cat = (unsigned)(ci & 0xFFFFFFFF) - 1;
	struct fs_rank *rs = fs_rank(s, r->rank);
	if (!rs)
		return EV_ERR_NOMEM;
	unsigned ph = FS_PHASE_PENDING;
	if (ki) {
		ph = (unsigned)ki->phase;
		rs->ph_cur = ph + 1;
		if (!rs->ph_first)
			rs->ph_first = ph + 1;
	} else if (rs->ph_cur) {
		ph = rs->ph_cur - 1;
	}
	int fresh;
	struct fs_group *c = fs_slot(&s->gix, &s->gs, fs_key(r->rank, (uint64_t)ph * s->ncats + cat + 1), &fresh);
	if (!c)
		return EV_ERR_NOMEM;
	if (fresh) {
		c->rank = r->rank;
		c->cat = cat;
		c->phase = ph;
	}
	c->time += dur;
	c->ideal += ideal;
	c->calls++;
	return EV_OK;
}

static double r4(double x) { return round(x * 10000) / 10000; }

static int row(ev_flex_stats *s, uint32_t rank, unsigned ph, const char *cat, double time, double tot,
               uint64_t calls, double ideal, double ideal_tot)
{
	ev_table *t = s->t;
	uint64_t icyc = (uint64_t)llround(ideal * (double)s->o.core_khz / 1000.0);
	int rc;
	if ((rc = ev_table_u64(t, rank)) || (rc = ev_table_str(t, ev_flex_phase_names[ph])) ||
	    (rc = ev_table_str(t, cat)) || (rc = ev_table_f64(t, time)) ||
	    (rc = ev_table_f64(t, tot > 0 ? r4(time / tot) : 0)) || (rc = ev_table_u64(t, calls)) ||
	    (rc = ev_table_f64(t, r4(ideal))) || (rc = ev_table_u64(t, icyc)) ||
	    (rc = ev_table_f64(t, ideal_tot > 0 ? r4(ideal / ideal_tot) : 0)) ||
	    (rc = ev_table_f64(t, time > 0 ? r4(ideal / time) : 0)))
		return rc;
	return EV_OK;
}

struct cat_row { double time, ideal; uint64_t calls; };

/* One (rank, phase) section, in acelyzer's order: kernel time ascending,
 * ties in the order acelyzer's table holds them (Total, then the
 * categories: a stable insertion sort).  Row 0 is Total, row i + 1
 * category i.  with_pending: the rank's 'other' kernels of unknown phase
 * belong here.  A section without kernels has no rows. */
static int section(ev_flex_stats *s, uint32_t rank, unsigned ph, int with_pending, struct cat_row *rows,
                   size_t *ord)
{
	size_t nr = s->ncats + 1;
	memset(rows, 0, nr * sizeof *rows);
	for (size_t i = 0; i < s->gs.len; i++) {
		const struct fs_group *c = (const struct fs_group *)s->gs.data + i;
		if (c->rank != rank || (c->phase != ph && !(with_pending && c->phase == FS_PHASE_PENDING)))
			continue;
		struct cat_row *x = &rows[c->cat + 1];
		x->time += c->time;
		x->ideal += c->ideal;
		x->calls += c->calls;
		rows[0].time += c->time;
		rows[0].ideal += c->ideal;
		rows[0].calls += c->calls;
	}
	if (!rows[0].calls)
		return EV_OK;
	for (size_t i = 0; i < nr; i++) {
		size_t j = i;
		while (j > 0 && rows[ord[j - 1]].time > rows[i].time) {
			ord[j] = ord[j - 1];
			j--;
		}
		ord[j] = i;
	}
	int rc = EV_OK;
	for (size_t i = 0; i < nr && !rc; i++) {
		const struct cat_row *c = &rows[ord[i]];
		rc = row(s, rank, ph, ord[i] ? s->cats[ord[i] - 1] : "Total", c->time, rows[0].time, c->calls, c->ideal,
		         rows[0].ideal);
	}
	return rc;
}

/* A rank's sections in acelyzer's phase order (ITL, TTFT, UNKN). */
static int rank_rows(ev_flex_stats *s, uint32_t rank, struct cat_row *rows, size_t *ord)
{
	const struct fs_rank *r = fs_rank(s, rank);
	unsigned pend = r->ph_first ? r->ph_first - 1 : s->ph_none;
	int rc = EV_OK;
	for (unsigned ph = 0; ph < EV_FLEX_NPHASES && !rc; ph++)
		rc = section(s, rank, ph, ph == pend, rows, ord);
	return rc;
}

int fs_categories_write(ev_flex_stats *s, const uint32_t *ranks)
{
	size_t nr = s->ncats + 1;
	struct cat_row *row_of = malloc(nr * sizeof *row_of);
	size_t *ord = malloc(nr * sizeof *ord);
	int rc = row_of && ord ? EV_OK : EV_ERR_NOMEM;
	for (size_t i = 0; i < s->rs.len && !rc; i++)
		rc = rank_rows(s, ranks[i], row_of, ord);
	free(row_of);
	free(ord);
	return rc;
}

void fs_categories_free(ev_flex_stats *s)
{
	free(s->cats);
	free(s->kcat);
	ev_map_free(&s->catcache);
}
