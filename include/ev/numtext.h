/* SPDX-License-Identifier: MIT */
/*
 * ev/numtext.h - the shortest text of a double (lib/stream/numtext.c), for
 * every writer that prints numbers: tables, workbooks, Python reprs.
 */
#ifndef EV_NUMTEXT_H
#define EV_NUMTEXT_H

#include <stddef.h>

/* When v is the double nearest to a decimal m / 10^k (k <= 6, m < 1e15,
 * 1e-4 <= |v| < 1e15) -- most table numbers, durations in us from integer
 * ns -- that decimal in plain notation ("-12.5", "3") into b (>= 24 bytes)
 * and its length; 0 for any other v.  It is what "%.15g" prints, without
 * calling printf or strtod. */
size_t ev_num_decimal(double v, char *b);

/* The fewest significant digits that read back to v (finite, non-zero),
 * and of equally short ones the nearest to v, as Python's repr and
 * JavaScript choose them: the digits, no sign or point, into d (>= 18
 * bytes, NUL-terminated), their count returned, and the power of ten of
 * the first in *exp10 (v ~ 0.d * 10^(exp10 + 1)). */
int ev_num_shortest(double v, char *d, int *exp10);

/* The text printf's "%.*g" (upper: "%.*G") gives v (finite) at the first
 * precision of 15, 16 and 17 that reads back to v -- the shortest such
 * text in %g's notation -- into b (bsz >= 32); its length. */
size_t ev_num_text(double v, char *b, size_t bsz, int upper);

#endif /* EV_NUMTEXT_H */
