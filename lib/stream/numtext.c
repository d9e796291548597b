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

/* For 1e-4 <= |v| < 2^53: of p = 15, 16, 17 significant digits, the first
 * whose correct rounding of v reads back to v, as printf's "%.*e" and
 * strtod would find it, in exact integer arithmetic.  With v = M 2^-s
 * (2^52 <= M < 2^53, 0 <= s <= 66) and k = p - 1 - X decimals (X = v's
 * power of ten, -4..15, so -1 <= k <= 20), v 10^k = N / D for N = M 10^k
 * and D = 2^s (k < 0: N = M, D = 2^s 10^-k).  The rounding q of N / D
 * reads back iff |q D - N| is under half an ulp, which is 10^k (k < 0: 1)
 * in these units, ties going to an even M.  (Below a power of two the next
 * double is nearer, but here a power of two is an exact decimal of at
 * most 16 digits and its 15-digit rounding is many ulps away.)  N and q D
 * stay under 2^125.  Its digits, trimmed, into d, X into *exp10 and p
 * into *prec; 0 when v is out of range. */
static int shortest_exact(double v, char *d, int *exp10, int *prec)
{
	double a = fabs(v);
	if (!(a >= 1e-4 && a < 9007199254740992.0))
		return 0;
	int e2;
	double fr = frexp(a, &e2);
	uint64_t M = (uint64_t)ldexp(fr, 53);
	int s = 53 - e2;
	int X = (int)floor(log10(a));
	for (int p = 15; p <= 17; p++) {
		u128 N, D, q, r;
		int k;
		for (;;) {
			k = p - 1 - X;
			N = (u128)M * p10q(k > 0 ? k : 0);
			D = ((u128)1 << s) * p10q(k < 0 ? -k : 0);
			q = k < 0 ? N / D : N >> s;
			if (q >= p10u[p])
				X++;
			else if (q < p10u[p - 1])
				X--;
			else
				break;
		}
		r = N - q * D;
		if (2 * r > D || (2 * r == D && (q & 1)))
			q++;
		u128 qd = q * D, dist = qd > N ? qd - N : N - qd, ulp = p10q(k > 0 ? k : 0);
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
			*prec = p;
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
	if ((n = shortest_exact(v, d, exp10, &k)) > 0)
		return n;
	return shortest_libc(v, d, exp10);
}

size_t ev_num_text(double v, char *b, size_t bsz, int upper)
{
	char d[24];
	int x, n, p;
	size_t w = 0;
	if (bsz < 32)
		return 0;
	if ((w = ev_num_decimal(v, b)) > 0)
		return w;
	/* "%.*g" prints without exponent from 1e-4 to below 10^p. */
	if ((n = shortest_exact(v, d, &x, &p)) > 0 && x < p) {
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
