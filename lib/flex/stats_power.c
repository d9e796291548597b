/* SPDX-License-Identifier: MIT */
/*
 * stats_power.c - acelyzer's --power-stats (power_stats.py): per rank, the
 * time between consecutive 'Power (mW)' counter samples, each period at
 * the value of the sample that opens it (the last sample opens none), cut
 * into the time some 'Cmpt Exec' kernel runs (overlapping kernels merged)
 * and the rest.  For each of the two: the smallest non-zero and the
 * largest value, the time-weighted mean of the non-zero time, its
 * time-weighted median, the time-weighted mean over all time, and the two
 * durations.
 *
 * Streaming: the records of a rank arrive in time order, so when one
 * arrives at t every kernel starting before t is known and the time from
 * the last record to t splits exactly into kernel and other time.  That
 * time is held until the next sample closes the period (after the last
 * sample it is dropped, as acelyzer's).  The medians keep the time per
 * distinct mW value: at most 100001 values (acelyzer's samples above 100 W
 * are 0), never the number of samples.
 */
#include <stdlib.h>
#include <string.h>

#include "flex/stats_int.h"

static struct fs_power *power_of(ev_flex_stats *s, uint32_t rank)
{
	int fresh;
	struct fs_power *p = fs_slot(&s->pwix, &s->pws, (uint64_t)rank + 1, &fresh);
	if (p && fresh)
		p->rank = rank;
	return p;
}

/* Account the time from the rank's last record to now; 0 when now is
 * before it (the record is out of order). */
static int advance(struct fs_power *p, int64_t now)
{
	if (!p->started) {
		p->started = 1;
		p->cur = now;
		return 1;
	}
	if (now < p->cur)
		return 0;
	if (p->have_p) {
		int64_t a = p->cur;
		if (p->have_k && p->me > a) {
			int64_t b = p->me < now ? p->me : now;
			p->pend[0] += (uint64_t)(b - a);
			a = b;
		}
		p->pend[1] += (uint64_t)(now - a);
	}
	p->cur = now;
	return 1;
}

/* dur ns at mw into class c of rank p. */
static int commit(ev_flex_stats *s, struct fs_power *p, unsigned c, uint64_t mw, uint64_t dur)
{
	struct fs_pclass *k = &p->c[c];
	if (!dur)
		return EV_OK;
	if (!k->have || mw > k->max)
		k->max = mw;
	k->have = 1;
	k->dur += dur;
	k->wsum += (double)mw * (double)dur;
	if (!mw)
		return EV_OK;
	if (!k->nz_dur || mw < k->min_nz)
		k->min_nz = mw;
	k->nz_dur += dur;
	int fresh;
	struct fs_phist *h = fs_slot(&s->phix, &s->phs, fs_key((uint64_t)p->rank * 2 + c, mw + 1), &fresh);
	if (!h)
		return EV_ERR_NOMEM;
	if (fresh) {
		h->rank = p->rank;
		h->cls = c;
		h->mw = mw;
	}
	h->dur += dur;
	return EV_OK;
}

int fs_power_sample(ev_flex_stats *s, const struct ev_rec *r)
{
	struct fs_power *p = power_of(s, r->rank);
	if (!p)
		return EV_ERR_NOMEM;
	s->n.power_samples++;
	if (!advance(p, r->ts)) {
		s->n.unordered++;
		return EV_OK;
	}
	int rc;
	if (p->have_p && ((rc = commit(s, p, 0, p->mw, p->pend[0])) != EV_OK ||
	                  (rc = commit(s, p, 1, p->mw, p->pend[1])) != EV_OK))
		return rc;
	p->have_p = 1;
	p->mw = r->bytes;
	p->pend[0] = p->pend[1] = 0;
	return EV_OK;
}

int fs_power_kernel(ev_flex_stats *s, const struct ev_rec *r)
{
	if (!r->dur)
		return EV_OK; /* acelyzer's rule: a kernel of no time covers none */
	struct fs_power *p = power_of(s, r->rank);
	if (!p)
		return EV_ERR_NOMEM;
	if (!advance(p, r->ts)) {
		s->n.unordered++;
		return EV_OK;
	}
	/* Kernels arrive by start: the merged interval grows or a new one
	 * begins (touching ones merge, as acelyzer's). */
	int64_t end = ev_rec_end(r);
	if (p->have_k && r->ts <= p->me) {
		if (end > p->me)
			p->me = end;
	} else {
		p->me = end;
	}
	p->have_k = 1;
	return EV_OK;
}

static int cmp_hist(const void *a, const void *b)
{
	const struct fs_phist *x = a, *y = b;
	if (x->rank != y->rank)
		return x->rank < y->rank ? -1 : 1;
	if (x->cls != y->cls)
		return x->cls < y->cls ? -1 : 1;
	return x->mw < y->mw ? -1 : x->mw > y->mw;
}

/* The time-weighted median of the non-zero values: the first value, in
 * ascending order, at which the time so far reaches half (acelyzer's). */
static uint64_t median(const struct fs_phist *h, size_t n, uint64_t nz_dur)
{
	uint64_t cum = 0;
	for (size_t i = 0; i < n; i++) {
		cum += h[i].dur;
		if (2 * cum >= nz_dur)
			return h[i].mw;
	}
	return 0;
}

static int row(ev_table *t, uint32_t rank, unsigned c, const struct fs_pclass *k, const struct fs_phist *h, size_t nh)
{
	static const char *const label[2] = { "with kernels", "without kernels" };
	int rc;
	if ((rc = ev_table_u64(t, rank)) || (rc = ev_table_str(t, label[c])))
		return rc;
	if (!k->have) { /* acelyzer: "No data" */
		for (int i = 0; i < 7 && !rc; i++)
			rc = ev_table_null(t);
		return rc;
	}
	double nz = (double)k->nz_dur;
	if ((rc = ev_table_f64(t, (double)k->min_nz / 1000)) || (rc = ev_table_f64(t, (double)k->max / 1000)) ||
	    (rc = ev_table_f64(t, nz > 0 ? k->wsum / nz / 1000 : 0)) ||
	    (rc = ev_table_f64(t, (double)median(h, nh, k->nz_dur) / 1000)) ||
	    (rc = ev_table_f64(t, k->wsum / (double)k->dur / 1000)) || (rc = ev_table_f64(t, fs_us((double)k->dur))) ||
	    (rc = ev_table_f64(t, fs_us(nz))))
		return rc;
	return EV_OK;
}

int fs_power_write(ev_flex_stats *s, const uint32_t *ranks)
{
	struct fs_phist *h = s->phs.data;
	size_t nh = s->phs.len, at = 0;
	int rc = EV_OK;
	if (nh)
		qsort(h, nh, sizeof *h, cmp_hist);
	for (size_t i = 0; i < s->rs.len && rc == EV_OK; i++) {
		uint64_t *ix = ev_map_get(&s->pwix, (uint64_t)ranks[i] + 1);
		if (!ix)
			continue;
		const struct fs_power *p = (const struct fs_power *)s->pws.data + (*ix - 1);
		if (!p->have_p)
			continue; /* kernels, no samples: nothing to weigh */
		for (unsigned c = 0; c < 2 && rc == EV_OK; c++) {
			while (at < nh && (h[at].rank < p->rank || (h[at].rank == p->rank && h[at].cls < c)))
				at++;
			size_t n = 0;
			while (at + n < nh && h[at + n].rank == p->rank && h[at + n].cls == c)
				n++;
			rc = row(s->t, p->rank, c, &p->c[c], h + at, n);
			at += n;
		}
	}
	return rc;
}

void fs_power_free(ev_flex_stats *s)
{
	ev_map_free(&s->pwix);
	ev_vec_free(&s->pws);
	ev_map_free(&s->phix);
	ev_vec_free(&s->phs);
}
