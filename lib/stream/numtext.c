/* SPDX-License-Identifier: MIT */
/*
 * numtext.c - the shortest text of a double (ev/numtext.h).
 *
 * printf and strtod are the slow part of writing large tables, so the
 * numbers most tables hold are done in integer arithmetic, exactly, and
 * only the others (below 1e-4, from 1e15) go through libc.
 */
#include <float.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ev/numtext.h"

typedef unsigned __int128 u128;

static const double p10d[] = { 1, 10, 100, 1e3, 1e4, 1e5, 1e6 };
static const uint64_t p10u[] = { 1ULL, 10ULL, 100ULL, 1000ULL, 10000ULL, 100000ULL, 1000000ULL, 10000000ULL,
	                         100000000ULL, 1000000000ULL, 10000000000ULL, 100000000000ULL, 1000000000000ULL,
	                         10000000000000ULL, 100000000000000ULL, 1000000000000000ULL, 10000000000000000ULL,
	                         100000000000000000ULL, 1000000000000000000ULL, 10000000000000000000ULL };

static u128 p10q(int k)
{
	return k <= 19 ? (u128)p10u[k] : (u128)p10u[19] * p10u[k - 19];
}

/* The decimal m / 10^k nearest to |v| as ev_num_decimal defines it: k
 * the smallest that fits, or -1.  With m < 1e15 < 2^50 an ulp of |v| is
 * under half of 10^-k, so no other decimal of k or fewer places reads back
 * to v: the decimal is the only short one, and the shortest. */
static int decimal_of(double v, uint64_t *m)
{
	double a = fabs(v);
	if (!(a >= 1e-4 && a < 1e15))
		return -1;
	for (int k = 0; k <= 6; k++) {
		double x = a * p10d[k];
		if (x >= 1e15)
			return -1;
		*m = (uint64_t)(x + 0.5);
		if ((double)*m / p10d[k] == a)
			return k;
	}
	return -1;
}

/* The decimal digits of m, most significant first, into d; their count. */
static int digits_of(uint64_t m, char *d)
{
	char r[24];
	int n = 0;
	do {
		r[n++] = (char)('0' + m % 10);
		m /= 10;
	} while (m);
	for (int i = 0; i < n; i++)
		d[i] = r[n - 1 - i];
	d[n] = '\0';
	return n;
}

size_t ev_num_decimal(double v, char *b)
{
	uint64_t m;
	int k = decimal_of(v, &m);
	if (k < 0)
		return 0;
	char d[24];
	int n = digits_of(m, d);
	while (k > 0 && d[n - 1] == '0')
		n--, k--;
	size_t w = 0;
	if (v < 0)
		b[w++] = '-';
	if (n <= k) { /* 0.000ddd */
		b[w++] = '0';
		b[w++] = '.';
		for (int i = n; i < k; i++)
			b[w++] = '0';
		memcpy(b + w, d, (size_t)n);
		w += (size_t)n;
	} else {
		memcpy(b + w, d, (size_t)(n - k));
		w += (size_t)(n - k);
		if (k) {
			b[w++] = '.';
			memcpy(b + w, d + n - k, (size_t)k);
			w += (size_t)k;
		}
	}
	b[w] = '\0';
	return w;
}

/* For 1e-4 <= |v| < 1e15: of p = 15, 16, 17 significant digits, the first
 * whose correct rounding of v reads back to v, as printf's "%.*e" and
 * strtod would find it, in exact integer arithmetic.  With v = M 2^E
 * (2^52 <= M < 2^53) and k = p - 1 - X decimals (X = v's power of ten),
 * v 10^k = N / 2^s for N = M 10^k, s = -E; the rounding q of that reads
 * back iff q 2^s lies within half an ulp (10^k in these units) of N, ties
 * going to an even M.  (Below a power of two the next double is nearer,
 * but in this range a power of two is a decimal of at most 15 digits,
 * which reads back exactly.)  The bounds keep N and q 2^s under 2^125.  Its digits, trimmed, and X into *exp10; 0 when
 * v is out of range. */
static int shortest_exact(double v, char *d, int *exp10)
{
	double a = fabs(v);
	if (!(a >= 1e-4 && a < 1e15))
		return 0;
	int e2;
	double fr = frexp(a, &e2);
	uint64_t M = (uint64_t)ldexp(fr, 53);
	int s = 53 - e2; /* 3 <= s <= 66 */
	int X = (int)floor(log10(a));
	for (int p = 15; p <= 17; p++) {
		u128 N, q, r, half;
		int k;
		for (;;) {
			k = p - 1 - X;
			N = (u128)M * p10q(k);
			q = N >> s;
			if (q >= p10u[p])
				X++;
			else if (q < p10u[p - 1])
				X--;
			else
				break;
		}
		r = N - (q << s);
		half = (u128)1 << (s - 1);
		if (r > half || (r == half && (q & 1)))
			q++;
		u128 qs = q << s, dist = qs > N ? qs - N : N - qs, ulp = p10q(k);
		if (2 * dist < ulp || (2 * dist == ulp && !(M & 1)) || p == 17) {
			int x = X, n;
			if (q == p10u[p]) { /* rounded up to the next power of ten */
				q = p10u[p - 1];
				x++;
			}
			n = digits_of((uint64_t)q, d);
			while (n > 1 && d[n - 1] == '0')
				d[--n] = '\0';
			*exp10 = x;
			return n;
		}
	}
	return 0;
}

/* Out of shortest_exact's range: the first of 15, 16 and 17 digits that
 * reads back, through libc.  When p digits read back, every shorter text
 * that does is that p-digit rounding without its trailing zeros (v lies
 * closer to it than half a unit in the p-th digit), so the first, trimmed,
 * is the shortest and, being a correct rounding, the nearest.  Subnormals
 * hold fewer digits: every precision is tried. */
static int shortest_libc(double v, char *d, int *exp10)
{
	char b[40];
	for (int prec = fabs(v) < DBL_MIN ? 0 : 14; prec <= 16; prec++) {
		snprintf(b, sizeof b, "%.*e", prec, v);
		if (prec == 16 || strtod(b, NULL) == v)
			break;
	}
	const char *e = strchr(b, 'e');
	*exp10 = atoi(e + 1);
	int n = 0;
	for (const char *q = b; q < e; q++)
		if (*q >= '0' && *q <= '9')
			d[n++] = *q;
	while (n > 1 && d[n - 1] == '0')
		n--;
	d[n] = '\0';
	return n;
}

int ev_num_shortest(double v, char *d, int *exp10)
{
	uint64_t m;
	int k = decimal_of(v, &m), n;
	if (k >= 0) {
		n = digits_of(m, d);
		*exp10 = n - 1 - k;
		while (n > 1 && d[n - 1] == '0')
			d[--n] = '\0';
		return n;
	}
	if ((n = shortest_exact(v, d, exp10)) > 0)
		return n;
	return shortest_libc(v, d, exp10);
}

size_t ev_num_text(double v, char *b, size_t bsz, int upper)
{
	char d[24];
	int x, n;
	size_t w = 0;
	if (bsz < 32)
		return 0;
	if ((w = ev_num_decimal(v, b)) > 0)
		return w;
	/* In range, p >= 15 > X: "%.*g" prints the digits without exponent. */
	if ((n = shortest_exact(v, d, &x)) > 0 && x < 15) {
		if (v < 0)
			b[w++] = '-';
		if (x < 0) {
			b[w++] = '0';
			b[w++] = '.';
			for (int i = -1; i > x; i--)
				b[w++] = '0';
			memcpy(b + w, d, (size_t)n);
			w += (size_t)n;
		} else {
			for (int i = 0; i <= x; i++)
				b[w++] = i < n ? d[i] : '0';
			if (n > x + 1) {
				b[w++] = '.';
				memcpy(b + w, d + x + 1, (size_t)(n - x - 1));
				w += (size_t)(n - x - 1);
			}
		}
		b[w] = '\0';
		return w;
	}
	for (int prec = 15;; prec++) {
		w = (size_t)snprintf(b, bsz, upper ? "%.*G" : "%.*g", prec, v);
		if (prec == 17 || strtod(b, NULL) == v)
			return w;
	}
}
