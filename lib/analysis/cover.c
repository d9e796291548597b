/* SPDX-License-Identifier: MIT */
/*
 * cover.c - union algebra of interval classes in one streaming pass.
 *
 * Intervals arrive sorted by start.  When one starts at t, no later
 * interval can cover time before t, so [frontier, t) is final: each class
 * k covers exactly [frontier, min(t, end[k])) of it, because every interval
 * seen so far started at or before the frontier.  Cutting that span at the
 * classes' ends gives the length of every combination of classes, which is
 * all TraceLens's and HTA's timeline metrics need (|A - B|, |A u B|, ...).
 */
#include <string.h>

#include "ev/analysis.h"
#include "ev/stream.h"

void ev_cover_init(struct ev_cover *c)
{
	memset(c, 0, sizeof *c);
}

/* Account [c->frontier, t). */
static void advance(struct ev_cover *c, double t)
{
	while (c->frontier < t) {
		unsigned mask = 0;
		double next = t;
		for (unsigned k = 0; k < EV_COVER_MAX; k++) {
			if (c->end[k] > c->frontier) {
				mask |= 1u << k;
				if (c->end[k] < next)
					next = c->end[k];
			}
		}
		if (!mask) {
			c->frontier = t; /* a gap: nothing covered */
			return;
		}
		c->time[mask] += next - c->frontier;
		c->frontier = next;
	}
}

void ev_cover_add(struct ev_cover *c, unsigned k, double ts, double end)
{
	if (end < ts)
		end = ts;
	if (!c->started) {
		c->started = 1;
		c->frontier = c->first = ts;
		c->last = end;
		for (unsigned i = 0; i < EV_COVER_MAX; i++)
			c->end[i] = ts;
	}
	if (ts > c->frontier)
		advance(c, ts);
	if (k < EV_COVER_MAX && end > c->end[k])
		c->end[k] = end;
	if (end > c->last)
		c->last = end;
}

void ev_cover_finish(struct ev_cover *c)
{
	if (c->started)
		advance(c, c->last);
}

double ev_cover_measure(const struct ev_cover *c, unsigned want, unsigned avoid)
{
	double sum = 0;
	for (unsigned m = 1; m < (1u << EV_COVER_MAX); m++)
		if ((m & want) == want && !(m & avoid))
			sum += c->time[m];
	return sum;
}
