/* SPDX-License-Identifier: MIT */
/*
 * ev/table.h - result tables (lib/stream/table.c): rows of named columns as
 * TSV, CSV, JSON or Markdown streamed to an ev_output, or as rows of text
 * cells handed to a sink.  Every module that prints a table (analysis,
 * align, flex) writes through this one, so a number reads the same in all.
 */
#ifndef EV_TABLE_H
#define EV_TABLE_H

#include "ev/stream.h"

enum ev_table_fmt { EV_TABLE_TSV, EV_TABLE_CSV, EV_TABLE_JSON, EV_TABLE_MD };
typedef struct ev_table ev_table;
int ev_table_open(ev_table **t, ev_output *out, enum ev_table_fmt fmt, const char *const *cols, size_t ncols) EV_RESULT_USED;

/* A sink takes the table instead of an ev_output: its header once, then
 * each row as ncols cells of the text the TSV would hold, unescaped.  The
 * table calls nothing but these functions, so a sink can live in a module
 * above this one without the table depending on it: the workbook writer
 * (ev/xlsx.h, ev_table_open_xlsx) is such a sink.  A non-zero return of
 * either function becomes the table's error. */
struct ev_table_sink {
	int (*header)(void *ctx, const char *name, const char *const *cols, size_t ncols);
	int (*row)(void *ctx, const char *const *cells, size_t ncols);
	void *ctx;
	/* May be NULL, else called instead of row: num[c] is 1 when cell c
	 * is ev_table_f64's text of a finite double (the shortest "%g" that
	 * reads back), so the sink need not parse it again. */
	int (*row_num)(void *ctx, const char *const *cells, const unsigned char *num, size_t ncols);
};
/* The table into a sink; name is the sink's (a sheet's name, ...). */
int ev_table_open_sink(ev_table **t, const struct ev_table_sink *sink, const char *name, const char *const *cols,
                       size_t ncols) EV_RESULT_USED;

/* Cells in column order; a row ends after the last column. */
int ev_table_str(ev_table *t, const char *s) EV_RESULT_USED;
int ev_table_u64(ev_table *t, uint64_t v) EV_RESULT_USED;
int ev_table_i64(ev_table *t, int64_t v) EV_RESULT_USED;
int ev_table_f64(ev_table *t, double v) EV_RESULT_USED; /* %.17g-exact shortest form; NaN -> empty/null */
int ev_table_null(ev_table *t) EV_RESULT_USED;
/* v as printf's "%.*f" writes it, for columns with a fixed number of
 * decimals (a small negative keeps its sign: "-0.000"); NaN and infinities
 * as ev_table_null. */
int ev_table_fixed(ev_table *t, double v, int decimals) EV_RESULT_USED;
/* In TSV, s as it is: a tab, newline or backslash in it is not escaped, for
 * a table that keeps the bytes of the names it was given (its rows read
 * back only if no name holds one).  Other formats quote as ev_table_str. */
int ev_table_str_raw(ev_table *t, const char *s) EV_RESULT_USED;
/* Finish (JSON closes its array).  Does not close the output. */
int ev_table_close(ev_table *t) EV_RESULT_USED;

#endif /* EV_TABLE_H */
