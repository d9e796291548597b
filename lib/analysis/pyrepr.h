/* SPDX-License-Identifier: MIT */
/*
 * pyrepr.h - Python's text of values, as TraceLens's pandas tables print
 * them: a growing text, the str() of a JSON value (lists as lists or as
 * tuples), repr() of a string and of a float.  Private to lib/analysis.
 */
#ifndef EV_PYREPR_H
#define EV_PYREPR_H

#include <stddef.h>

/* A growing text; oom is set (and the text kept as it was) when out of
 * memory, so that a caller checks once. */
struct pytext { char *p; size_t n, cap; int oom; };

void pyt_put(struct pytext *t, const char *s, size_t n);
void pyt_puts(struct pytext *t, const char *s);
/* The text as it is ("" when empty). */
const char *pyt_str(const struct pytext *t);

/* The JSON value at p as Python's str() of it, lists as tuples when
 * tuples (as TraceLens groups its arguments) else as lists; returns the
 * end of the value. */
const char *py_value(struct pytext *t, const char *p, int tuples);
/* The JSON string after its opening quote at p as Python's repr() of it;
 * returns the end. */
const char *py_string(struct pytext *t, const char *p);
/* Python's repr() of the n bytes of text at s. */
void py_text(struct pytext *t, const char *s, size_t n);
/* Python's repr() of a float: the shortest digits that read back to v,
 * fixed from 1e-4 to 1e16 (with ".0" when whole), else d.ddde+XX; "nan",
 * "inf". */
void py_float(struct pytext *t, double v);

#endif /* EV_PYREPR_H */
