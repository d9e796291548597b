/* SPDX-License-Identifier: MIT */
/*
 * fit.c - the clock model of one rank against the reference clock:
 * t_rank = t_ref + O + D * (t_ref - t0), fitted robustly from anchor pairs,
 * and its inverse applied without losing nanoseconds on Unix-epoch times.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "ev/align.h"
#include "ev/stream.h"

static int cmp_double(const void *pa, const void *pb)
{
	double a = *(const double *)pa, b = *(const double *)pb;
	return (a > b) - (a < b);
}

/* Median of v[0..n) (reorders v). */
static double median(double *v, size_t n)
{
	if (n == 0)
		return 0;
	qsort(v, n, sizeof *v, cmp_double);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/* Differences of int64 times as doubles, without signed overflow. */
static double diff(int64_t a, int64_t b)
{
	return (double)(int64_t)((uint64_t)a - (uint64_t)b);
}

int ev_align_fit(const int64_t *tref, const int64_t *d, size_t n, enum ev_align_mode mode, uint64_t min_span,
                 double *scratch, struct ev_align_fit *out)
{
	memset(out, 0, sizeof *out);
	out->drift_note = mode == EV_ALIGN_DRIFT ? EV_DRIFT_FEW : EV_DRIFT_NOT_ASKED;
	if (n == 0)
		return EV_ERR_ARG;
	double *x = scratch, *y = scratch + n, *tmp = scratch + 2 * n;
	/* t0: the median anchor time, so that O is well conditioned. */
	int64_t tmin = tref[0], tmax = tref[0];
	for (size_t i = 1; i < n; i++) {
		if (tref[i] < tmin)
			tmin = tref[i];
		if (tref[i] > tmax)
			tmax = tref[i];
	}
	for (size_t i = 0; i < n; i++)
		tmp[i] = diff(tref[i], tmin);
	int64_t t0 = tmin + (int64_t)llround(median(tmp, n));
	/* x: time from t0; y: d relative to the median d (keeps doubles exact). */
	for (size_t i = 0; i < n; i++)
		tmp[i] = (double)d[i];
	double dmed = median(tmp, n);
	int64_t dref = (int64_t)llround(dmed);
	for (size_t i = 0; i < n; i++) {
		x[i] = diff(tref[i], t0);
		y[i] = diff(d[i], dref);
	}
	/* Robust start: the line through the medians of the two halves in time
	 * (a drift of 50 ppm over 10 minutes moves d by 30 ms, so a constant
	 * would call half of the anchors outliers). */
	double a0 = 0, b0 = 0;
	if (mode == EV_ALIGN_DRIFT && n >= 8) {
		/* The median x is ~0 by the choice of t0: split there.  Early
		 * halves fill xs/ys from the front, late halves from the back. */
		double *xs = scratch + 3 * n, *ys = scratch + 4 * n;
		size_t lo = 0, hi = 0;
		for (size_t i = 0; i < n; i++) {
			if (x[i] < 0) {
				xs[lo] = x[i];
				ys[lo++] = y[i];
			} else {
				hi++;
				xs[n - hi] = x[i];
				ys[n - hi] = y[i];
			}
		}
		if (lo > 0 && hi > 0) {
			double xl = median(xs, lo), xh = median(xs + n - hi, hi);
			double yl = median(ys, lo), yh = median(ys + n - hi, hi);
			if (xh > xl) {
				b0 = (yh - yl) / (xh - xl);
				a0 = yl - b0 * xl;
			}
		}
	}
	for (size_t i = 0; i < n; i++)
		tmp[i] = fabs(y[i] - (a0 + b0 * x[i]));
	double mad = median(tmp, n);
	double lim = 5 * 1.4826 * mad + 100; /* + 100 ns: exact data has MAD 0 */
	/* Least squares on the inliers. */
	double sx = 0, sy = 0, sxx = 0, sxy = 0;
	size_t m = 0;
	double xmin = 0, xmax = 0;
	for (size_t i = 0; i < n; i++) {
		if (fabs(y[i] - (a0 + b0 * x[i])) > lim)
			continue;
		if (m == 0 || x[i] < xmin)
			xmin = x[i];
		if (m == 0 || x[i] > xmax)
			xmax = x[i];
		sx += x[i];
		sy += y[i];
		m++;
	}
	double mx = sx / (double)m, my = sy / (double)m;
	for (size_t i = 0; i < n; i++) {
		if (fabs(y[i] - (a0 + b0 * x[i])) > lim)
			continue;
		sxx += (x[i] - mx) * (x[i] - mx);
		sxy += (x[i] - mx) * (y[i] - my);
	}
	out->used = m;
	out->outliers = n - m;
	out->span = (uint64_t)(xmax - xmin);
	double a = my, b = 0;
	if (mode == EV_ALIGN_DRIFT) {
		if (m < 8) {
			out->drift_note = EV_DRIFT_FEW;
		} else if ((double)min_span > xmax - xmin) {
			out->drift_note = EV_DRIFT_SHORT_SPAN;
		} else if (sxx > 0) {
			double slope = sxy / sxx, icpt = my - slope * mx, ss = 0;
			for (size_t i = 0; i < n; i++) {
				if (fabs(y[i] - (a0 + b0 * x[i])) > lim)
					continue;
				double r = y[i] - (icpt + slope * x[i]);
				ss += r * r;
			}
			double se = sqrt(ss / (double)(m - 2) / sxx);
			out->drift_se = se;
			/* Significant, or so exact that noise cannot explain it. */
			if (fabs(slope) > EV_ALIGN_MAX_DRIFT) {
				out->drift_note = EV_DRIFT_IMPLAUSIBLE;
			} else if (fabs(slope) > 3 * se && fabs(slope) * (xmax - xmin) >= 1) {
				a = icpt;
				b = slope;
				out->drift_note = EV_DRIFT_FITTED;
			} else {
				out->drift_note = EV_DRIFT_NOISE;
			}
		}
	}
	/* Residuals of the final model over the anchors used. */
	size_t k = 0;
	for (size_t i = 0; i < n; i++) {
		if (fabs(y[i] - (a0 + b0 * x[i])) > lim)
			continue;
		tmp[k++] = fabs(y[i] - (a + b * x[i]));
	}
	out->resid_med = median(tmp, k);
	out->resid_max = k ? tmp[k - 1] : 0;
	out->t0 = t0;
	out->offset = dref + (int64_t)llround(a);
	out->drift = b;
	return EV_OK;
}

int64_t ev_align_apply_fit(const struct ev_align_fit *f, int64_t t)
{
	/* u = t - O - t0 as an exact integer where it fits, then the drift
	 * as a small double correction: u / (1 + D) = u - u * D / (1 + D). */
	int64_t u;
	if (__builtin_sub_overflow(t, f->offset, &u) || __builtin_sub_overflow(u, f->t0, &u))
		return t < 0 ? INT64_MIN : INT64_MAX;
	double c = f->drift != 0 ? (double)u * f->drift / (1 + f->drift) : 0;
	int64_t r;
	if (__builtin_sub_overflow(u, (int64_t)llround(c), &r) || __builtin_add_overflow(r, f->t0, &r))
		return t < 0 ? INT64_MIN : INT64_MAX;
	return r;
}

const char *ev_drift_note_text(enum ev_drift_note n)
{
	switch (n) {
	case EV_DRIFT_FITTED: return "drift fitted";
	case EV_DRIFT_NOT_ASKED: return "offset only";
	case EV_DRIFT_SHORT_SPAN: return "offset only: anchors span too short a time for a drift";
	case EV_DRIFT_FEW: return "offset only: fewer than 8 anchors for a drift";
	case EV_DRIFT_NOISE: return "offset only: fitted drift not significant";
	case EV_DRIFT_IMPLAUSIBLE: return "offset only: fitted drift above 200 ppm, beyond any real clock";
	}
	return "?";
}
