/* SPDX-License-Identifier: MIT */
/*
 * sort_f64.c - doubles sorted in place, ascending.
 *
 * glibc's qsort is a merge sort that first allocates a copy of the whole
 * array: sorting an exact quantile store of N samples briefly takes 2N,
 * which made ev-stats' peak memory grow past its sample budget at the
 * moment it printed.  This is an introsort: quicksort on a median-of-three
 * pivot, heapsort past 2 log2(n) levels (so no input is quadratic),
 * insertion sort for short ranges, and recursion only into the smaller
 * side (so the stack stays O(log n)).  NaNs end up somewhere; the order of
 * the other values is still ascending only when there are none.
 */
#include "ev/stream.h"

static void swap2(double *a, double *b)
{
	double t = *a;
	*a = *b;
	*b = t;
}

static void insertion(double *v, size_t n)
{
	for (size_t i = 1; i < n; i++) {
		double x = v[i];
		size_t j = i;
		while (j > 0 && x < v[j - 1]) {
			v[j] = v[j - 1];
			j--;
		}
		v[j] = x;
	}
}

static void sift_down(double *v, size_t root, size_t n)
{
	for (;;) {
		size_t c = 2 * root + 1;
		if (c >= n)
			return;
		if (c + 1 < n && v[c] < v[c + 1])
			c++;
		if (!(v[root] < v[c]))
			return;
		swap2(&v[root], &v[c]);
		root = c;
	}
}

static void heap_sort(double *v, size_t n)
{
	for (size_t i = n / 2; i-- > 0;)
		sift_down(v, i, n);
	for (size_t end = n; end > 1; end--) {
		swap2(&v[0], &v[end - 1]);
		sift_down(v, 0, end - 1);
	}
}

static void intro(double *v, size_t n, unsigned depth)
{
	while (n > 16) {
		if (depth == 0) {
			heap_sort(v, n);
			return;
		}
		depth--;
		/* Median of three: v[0] <= v[m] <= v[n-1], so both scans below
		 * stop inside the range before the first swap. */
		size_t m = n / 2;
		if (v[m] < v[0])
			swap2(&v[m], &v[0]);
		if (v[n - 1] < v[0])
			swap2(&v[n - 1], &v[0]);
		if (v[n - 1] < v[m])
			swap2(&v[n - 1], &v[m]);
		double p = v[m];
		/* Hoare's partition: afterwards v[0..j] <= p <= v[j+1..n), and
		 * with the pivot taken below the last index, j < n - 1. */
		size_t i = 0, j = n - 1;
		for (;;) {
			while (v[i] < p)
				i++;
			while (p < v[j])
				j--;
			if (i >= j)
				break;
			swap2(&v[i], &v[j]);
			i++;
			j--;
		}
		size_t left = j + 1;
		if (left < n - left) {
			intro(v, left, depth);
			v += left;
			n -= left;
		} else {
			intro(v + left, n - left, depth);
			n = left;
		}
	}
	insertion(v, n);
}

void ev_sort_f64(double *v, size_t n)
{
	unsigned depth = 0;
	for (size_t k = n; k > 1; k >>= 1)
		depth += 2;
	if (n > 1)
		intro(v, n, depth);
}
