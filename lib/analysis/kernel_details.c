/* SPDX-License-Identifier: MIT */
/*
 * kernel_details.c - TraceLens's kernel_details text (opsum.h): per
 * kernel position of a group's op instances the count, sum, mean, median,
 * std, min and max, as numpy computes them, printed as Python prints its
 * list of dicts.  The perf-model sheets, ops_unique_args and
 * unified_perf_summary write it.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/opsum.h"
#include "analysis/pyrepr.h"

/* np.add.reduce of a float64 array: pairwise in blocks of 8 up to 128. */
static double np_sum(const double *a, size_t n)
{
	if (n < 8) {
		double r = 0.;
		for (size_t i = 0; i < n; i++)
			r += a[i];
		return r;
	}
	if (n <= 128) {
		double r[8];
		size_t i;
		for (i = 0; i < 8; i++)
			r[i] = a[i];
		for (i = 8; i < n - n % 8; i += 8)
			for (size_t j = 0; j < 8; j++)
				r[j] += a[i + j];
		double res = ((r[0] + r[1]) + (r[2] + r[3])) + ((r[4] + r[5]) + (r[6] + r[7]));
		for (; i < n; i++)
			res += a[i];
		return res;
	}
	size_t n2 = n / 2;
	n2 -= n2 % 8;
	return np_sum(a, n2) + np_sum(a + n2, n - n2);
}

static int cmp_f64(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

struct kstats { const char *name; uint32_t stream; uint64_t n; double sum, mean, median, std, min, max; };

/* A kernel position's numbers as numpy computes them from its samples
 * (the distribution's stored ones; a sketched one gives its own). */
static int kpos_stats(struct ev_dist *d, struct kstats *k, uint64_t *sketched)
{
	k->n = d->n;
	k->min = d->min;
	k->max = d->max;
	if (d->sketch || d->len != d->n) {
		++*sketched;
		k->sum = d->sum;
		k->mean = d->mean;
		k->median = ev_dist_quantile(d, 0.5);
		k->std = d->n > 1 ? ev_dist_std(d) * sqrt((double)(d->n - 1) / (double)d->n) : 0;
		return EV_OK;
	}
	size_t n = d->len;
	double *v = malloc((n ? n : 1) * sizeof *v);
	if (!v)
		return EV_ERR_NOMEM;
	k->sum = np_sum(d->v, n);
	k->mean = k->sum / (double)n;
	for (size_t i = 0; i < n; i++)
		v[i] = (d->v[i] - k->mean) * (d->v[i] - k->mean);
	k->std = sqrt(np_sum(v, n) / (double)n);
	memcpy(v, d->v, n * sizeof *v);
	qsort(v, n, sizeof *v, cmp_f64);
	k->median = n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2.0;
	free(v);
	return EV_OK;
}

static int cmp_kstats(const void *pa, const void *pb)
{
	const struct kstats *a = pa, *b = pb;
	if (a->sum != b->sum)
		return a->sum < b->sum ? -1 : 1;
	return strcmp(a->name, b->name);
}

static void np_float(struct pytext *t, const char *key, double v)
{
	pyt_puts(t, key);
	pyt_puts(t, "np.float64(");
	py_float(t, v);
	pyt_puts(t, ")");
}

int perf_kernel_details(ev_stats *s, struct perf_kpos *pos, uint32_t nk, uint64_t *sketched, struct pytext *full,
                        struct pytext *trunc)
{
	struct kstats *k = calloc(nk ? nk : 1, sizeof *k);
	int rc = k ? EV_OK : EV_ERR_NOMEM;
	for (uint32_t i = 0; !rc && i < nk; i++) {
		k[i].name = str_of(s, pos[i].name);
		k[i].stream = pos[i].stream;
		rc = kpos_stats(&pos[i].d, &k[i], sketched);
	}
	if (rc) {
		free(k);
		return rc;
	}
	qsort(k, nk, sizeof *k, cmp_kstats);
	full->n = trunc->n = 0;
	pyt_puts(full, "[");
	pyt_puts(trunc, "[");
	for (uint32_t i = 0; i < nk; i++) {
		char b[64];
		const char *sep = i ? ", " : "";
		pyt_puts(full, sep);
		pyt_puts(trunc, sep);
		pyt_puts(full, "{'name': ");
		pyt_puts(trunc, "{'name': ");
		/* TraceLens's truncated name: 64 bytes and "...". */
		const char *nm = k[i].name;
		size_t len = strlen(nm);
		char cut[64 + 4];
		py_text(full, nm, len);
		if (len > 64) {
			memcpy(cut, nm, 64);
			memcpy(cut + 64, "...", 4);
			py_text(trunc, cut, 67);
		} else {
			py_text(trunc, nm, len);
		}
		snprintf(b, sizeof b, ", 'stream': %u", k[i].stream);
		pyt_puts(full, b);
		pyt_puts(trunc, b);
		snprintf(b, sizeof b, ", 'count': %llu", (unsigned long long)k[i].n);
		pyt_puts(full, b);
		np_float(full, ", 'total_duration_us': ", k[i].sum);
		np_float(full, ", 'mean_duration_us': ", k[i].mean);
		np_float(full, ", 'median_duration_us': ", k[i].median);
		np_float(full, ", 'std_dev_duration_us': ", k[i].std);
		np_float(full, ", 'min_duration_us': ", k[i].min);
		np_float(full, ", 'max_duration_us': ", k[i].max);
		np_float(trunc, ", 'mean_duration_us': ", rint(k[i].mean * 100) / 100);
		pyt_puts(full, "}");
		pyt_puts(trunc, "}");
	}
	pyt_puts(full, "]");
	pyt_puts(trunc, "]");
	free(k);
	return rc ? rc : full->oom || trunc->oom ? EV_ERR_NOMEM : EV_OK;
}
