/* SPDX-License-Identifier: MIT */
/*
 * dist.c - streaming distributions for summaries: exact moments, min and
 * max always; exact quantiles while the samples of all distributions fit a
 * shared budget; past it, a distribution moves to a logarithmic histogram
 * whose buckets are (1 +- EV_DIST_SKETCH_ERR) wide, so every quantile it
 * reports is within that relative error of a true sample at that rank.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "ev/analysis.h"
#include "ev/stream.h"

/* gamma = (1+e)/(1-e): bucket i holds (gamma^(i-1), gamma^i], represented
 * by 2 gamma^i / (gamma + 1), at most e away from anything in it. */
static double log_gamma(void)
{
	static _Thread_local double lg; /* per thread: the report feeds tables on two */
	if (lg == 0)
		lg = log((1 + EV_DIST_SKETCH_ERR) / (1 - EV_DIST_SKETCH_ERR));
	return lg;
}

/* Exact stores of a page or more live in their own mapping: growing one
 * (mremap) never copies through a second buffer, and freeing one (when its
 * distribution moves to the sketch) returns its memory to the system at
 * once.  Only the first few samples of a distribution are in malloc's
 * heap: a store that grew there and then left would leave a hole the heap
 * keeps, and over a long input, as distributions fill, move out and are
 * given up for the sketch, those holes rather than the budget would set
 * the peak.  So the peak is the budget and a page or so per distribution,
 * reached as soon as the budget first fills.  When no mapping can be made
 * (the system's limit on mappings), a store stays in the heap. */
#define STORE_MAP_BYTES 4096u
/* The first store: small, as most groups of a table per name (kernels
 * seen once or twice) never need more. */
#define FIRST_CAP 2u

static void store_free(struct ev_dist *d)
{
	if (d->mapped)
		munmap(d->v, d->cap * sizeof(double));
	else
		free(d->v);
	d->v = NULL;
	d->len = d->cap = 0;
	d->mapped = 0;
}

static int store_grow(struct ev_dist *d, size_t cap)
{
	size_t bytes = cap * sizeof(double);
	double *nv = NULL;
	if (d->mapped) {
		nv = mremap(d->v, d->cap * sizeof *nv, bytes, MREMAP_MAYMOVE);
		if (nv == MAP_FAILED)
			return EV_ERR_NOMEM;
	} else if (bytes >= STORE_MAP_BYTES) {
		void *m = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (m != MAP_FAILED) {
			nv = m;
			if (d->len)
				memcpy(nv, d->v, d->len * sizeof *nv);
			free(d->v);
			d->mapped = 1;
		}
	}
	if (!nv)
		nv = realloc(d->v, bytes);
	if (!nv)
		return EV_ERR_NOMEM;
	d->v = nv;
	d->cap = cap;
	return EV_OK;
}

void ev_dist_init(struct ev_dist *d)
{
	memset(d, 0, sizeof *d);
}

static int sketch_add(struct ev_dist *d, double x)
{
	if (!(x > 0)) {
		d->zeros++;
		return EV_OK;
	}
	int32_t i = (int32_t)ceil(log(x) / log_gamma());
	if (!d->bucket) {
		d->bucket = calloc(1, sizeof *d->bucket);
		if (!d->bucket)
			return EV_ERR_NOMEM;
		d->bmin = d->bmax = i;
	} else if (i < d->bmin || i > d->bmax) {
		int32_t lo = i < d->bmin ? i : d->bmin, hi = i > d->bmax ? i : d->bmax;
		uint32_t *nb = calloc((size_t)(hi - lo + 1), sizeof *nb);
		if (!nb)
			return EV_ERR_NOMEM;
		memcpy(nb + (d->bmin - lo), d->bucket, (size_t)(d->bmax - d->bmin + 1) * sizeof *nb);
		free(d->bucket);
		d->bucket = nb;
		d->bmin = lo;
		d->bmax = hi;
	}
	d->bucket[i - d->bmin]++;
	return EV_OK;
}

static int to_sketch(struct ev_dist *d, struct ev_dist_pool *pool)
{
	d->sketch = 1;
	pool->sketched++;
	for (size_t k = 0; k < d->len; k++)
		if (sketch_add(d, d->v[k]) != EV_OK)
			return EV_ERR_NOMEM;
	pool->used -= d->len;
	store_free(d);
	return EV_OK;
}

void ev_dist_add_moments(struct ev_dist *d, double x, int64_t ts)
{
	d->n++;
	d->sum += x;
	double delta = x - d->mean;
	d->mean += delta / (double)d->n;
	d->m2 += delta * (x - d->mean);
	if (d->n == 1 || x < d->min) {
		d->min = x;
		d->min_ts = ts;
	}
	if (d->n == 1 || x > d->max) {
		d->max = x;
		d->max_ts = ts;
	}
}

int ev_dist_add(struct ev_dist *d, struct ev_dist_pool *pool, double x, int64_t ts)
{
	ev_dist_add_moments(d, x, ts);
	if (!d->sketch && pool->used >= pool->budget) {
		int rc = to_sketch(d, pool);
		if (rc)
			return rc;
	}
	if (d->sketch)
		return sketch_add(d, x);
	if (d->len == d->cap) {
		/* Double, but not past what the budget still allows: the exact
		 * store then never holds much more than the budget. */
		size_t cap = d->cap ? 2 * d->cap : FIRST_CAP;
		uint64_t room = pool->budget > pool->used ? pool->budget - pool->used : 0;
		if (cap - d->len > room)
			cap = d->len + (room > FIRST_CAP ? (size_t)room : FIRST_CAP);
		int rc = store_grow(d, cap);
		if (rc)
			return rc;
	}
	d->v[d->len++] = x;
	d->sorted = 0;
	pool->used++;
	return EV_OK;
}

double ev_dist_std(const struct ev_dist *d)
{
	return d->n < 2 ? 0.0 : sqrt(d->m2 / (double)(d->n - 1));
}

double ev_dist_quantile(struct ev_dist *d, double q)
{
	if (d->n == 0)
		return NAN;
	if (q <= 0)
		return d->min;
	if (q >= 1)
		return d->max;
	if (!d->sketch) {
		if (!d->len)
			return NAN; /* moments only: no sample kept */
		if (!d->sorted) {
			ev_sort_f64(d->v, d->len);
			d->sorted = 1;
		}
		double pos = q * (double)(d->len - 1);
		size_t lo = (size_t)pos;
		if (lo + 1 >= d->len)
			return d->v[d->len - 1];
		return d->v[lo] + (d->v[lo + 1] - d->v[lo]) * (pos - (double)lo);
	}
	double rank = q * (double)(d->n - 1);
	uint64_t seen = d->zeros;
	if ((double)seen > rank)
		return d->min;
	for (int32_t i = d->bmin; d->bucket && i <= d->bmax; i++) {
		seen += d->bucket[i - d->bmin];
		if ((double)seen > rank) {
			double g = exp(log_gamma());
			double v = 2 * exp(log_gamma() * i) / (g + 1);
			return v < d->min ? d->min : v > d->max ? d->max : v;
		}
	}
	return d->max;
}

void ev_dist_free(struct ev_dist *d)
{
	store_free(d);
	free(d->bucket);
	memset(d, 0, sizeof *d);
}

void ev_dist_release(struct ev_dist *d, struct ev_dist_pool *pool)
{
	if (!d->sketch)
		pool->used -= d->len < pool->used ? d->len : pool->used;
	ev_dist_free(d);
}

int ev_dist_merge(struct ev_dist *d, struct ev_dist *src, struct ev_dist_pool *pool)
{
	if (!src->n) {
		ev_dist_release(src, pool);
		return EV_OK;
	}
	if (!d->n) {
		ev_dist_release(d, pool);
		*d = *src;
		ev_dist_init(src);
		return EV_OK;
	}
	/* Moments of the union (Chan et al.), extremes with their stamps. */
	double na = (double)d->n, nb = (double)src->n, n = na + nb, delta = src->mean - d->mean;
	d->mean += delta * nb / n;
	d->m2 += src->m2 + delta * delta * na * nb / n;
	d->sum += src->sum;
	d->n += src->n;
	if (src->min < d->min) {
		d->min = src->min;
		d->min_ts = src->min_ts;
	}
	if (src->max > d->max) {
		d->max = src->max;
		d->max_ts = src->max_ts;
	}
	int rc = EV_OK;
	if (!d->sketch && !src->sketch) {
		if (d->len + src->len > d->cap)
			rc = store_grow(d, d->len + src->len);
		if (!rc) {
			memcpy(d->v + d->len, src->v, src->len * sizeof *d->v);
			d->len += src->len;
			d->sorted = 0;
			pool->used += src->len; /* given back by the release below */
		}
	} else {
		if (!d->sketch)
			rc = to_sketch(d, pool);
		for (size_t k = 0; !rc && !src->sketch && k < src->len; k++)
			rc = sketch_add(d, src->v[k]);
		if (!rc && src->sketch) {
			d->zeros += src->zeros;
			for (int32_t i = src->bmin; !rc && src->bucket && i <= src->bmax; i++)
				for (uint32_t c = src->bucket[i - src->bmin]; !rc && c; c--)
					rc = sketch_add(d, exp(log_gamma() * i) * 0.999999);
		}
	}
	ev_dist_release(src, pool);
	return rc;
}
