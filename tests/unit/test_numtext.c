/* SPDX-License-Identifier: MIT */
/*
 * test_numtext.c - the shortest text of a double (ev/numtext.h) against
 * libc's: printf at each precision, read back with strtod.
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ev/numtext.h"
#include "unit.h"

/* "%.*g" at the first precision of 15..17 that reads back. */
static void want_text(double v, char *b, size_t bsz)
{
	for (int prec = 15; prec <= 17; prec++) {
		snprintf(b, bsz, "%.*g", prec, v);
		if (strtod(b, NULL) == v)
			return;
	}
}

/* The fewest digits that read back, by trying every precision. */
static int want_digits(double v, char *d, int *exp10)
{
	char b[48];
	int prec = 0;
	for (; prec < 16; prec++) {
		snprintf(b, sizeof b, "%.*e", prec, v);
		if (strtod(b, NULL) == v)
			break;
	}
	if (prec == 16)
		snprintf(b, sizeof b, "%.16e", v);
	char *e = strchr(b, 'e');
	*exp10 = atoi(e + 1);
	int n = 0;
	for (char *q = b; q < e; q++)
		if (*q >= '0' && *q <= '9')
			d[n++] = *q;
	while (n > 1 && d[n - 1] == '0')
		n--;
	d[n] = '\0';
	return n;
}

static uint64_t rng = 88172645463325252ULL;
static uint64_t next(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

static int bad;
static void check_one(double v)
{
	char got[48], want[48], gd[24], wd[24];
	int gx, wx;
	ev_num_text(v, got, sizeof got, 0);
	want_text(v, want, sizeof want);
	if (strcmp(got, want) != 0 && bad++ < 5)
		fprintf(stderr, "text of %.17g: %s, want %s\n", v, got, want);
	int gn = ev_num_shortest(v, gd, &gx), wn = want_digits(v, wd, &wx);
	/* A power of two may read back from a shorter text on its narrow
	 * side than its nearest rounding: libc's trial finds neither. */
	if ((gn != wn || gx != wx || strcmp(gd, wd) != 0) && bad++ < 5)
		fprintf(stderr, "digits of %.17g: %s e%d, want %s e%d\n", v, gd, gx, wd, wx);
}

/* Random doubles of every shape in and around the integer path's range
 * (1e-4 to 2^53): bit patterns, quotients, decimals, powers of two and
 * their neighbours, values halfway between decimals. */
static void test_against_libc(void)
{
	bad = 0;
	for (int i = 0; i < 300000; i++) {
		uint64_t x = next();
		double v;
		switch (i % 7) {
		case 0: { /* exponent between 2^-16 and 2^52 */
			uint64_t bits = (x & 0x000FFFFFFFFFFFFFULL) | ((uint64_t)(1023 - 16 + (int)((x >> 52) % 70)) << 52);
			memcpy(&v, &bits, sizeof v);
			break;
		}
		case 1: v = (double)(int64_t)(x % 2000000000000ULL) / 7.0; break;
		case 2: v = (double)(x % 1000000000000000ULL) / pow(10, (double)((x >> 50) % 20)); break;
		case 3: v = ldexp(1.0, (int)(x % 70) - 16); break;
		case 4: v = nextafter(ldexp(1.0, (int)(x % 70) - 16), (x >> 40) & 1 ? 0 : INFINITY); break;
		case 5: v = ((double)(x % 100000000000000ULL) + 0.5) / 1e6; break;
		default: v = 1.7e15 + (double)(x % 100000000000ULL) / 1e3; break; /* epoch us */
		}
		if (x >> 63)
			v = -v;
		check_one(v);
	}
	static const double fixed[] = { 1e-4, 9.9999999999999991e-05, 1e15, 999999999999999.9, 999999999999999.4,
		                        0.1, 0.3, 2.0 / 3, 9007199254740991.0, 9007199254740992.0, 4503599627370496.0, 2e15, 1e-3, 123456789012345.6, 5e-324, 1e300, 4194304 };
	for (size_t i = 0; i < sizeof fixed / sizeof *fixed; i++)
		check_one(fixed[i]);
	CHECK(bad == 0);
}

int main(void)
{
	RUN(test_against_libc);
	return unit_report("test_numtext");
}
