/* SPDX-License-Identifier: MIT */
/*
 * acepd_int.h - the categories table as pandas' to_string (acepd.c), the
 * second layout of acelyzer's text sink (acetext.c): its rows are held
 * until the table ends, as pandas sizes each column by its widest cell.
 */
#ifndef EV_FLEX_ACEPD_INT_H
#define EV_FLEX_ACEPD_INT_H

#include "ev/flex.h"

/* Where each of acelyzer's columns is among the table's. */
int acepd_header(struct ev_flex_acetext *a, const char *const *cols, size_t ncols);
/* Hold one row's cells. */
int acepd_row(struct ev_flex_acetext *a, const char *const *cells);
/* Write the held rows (or pandas' empty frame) to a->out. */
int acepd_end(struct ev_flex_acetext *a);

#endif /* EV_FLEX_ACEPD_INT_H */
