/* SPDX-License-Identifier: MIT */
/*
 * ev/xlsx.h - tables into an Excel workbook (lib/report/xlsx.c, SpreadsheetML
 * in a zip written by lib/report/zip.c), the way TraceLens and aorta users open them: one sheet per
 * table, a bold frozen header row with filters, number formats by column,
 * Better/Worse coloured.  Rows are streamed: each sheet is deflated into
 * the output as its rows come, and memory does not grow with their number.
 *
 * Column kinds come from the header names (ev_xlsx_col_kind):
 *   status                 text; "Better" green, "Worse" red
 *   improvement*, percent_change*  3-colour scale: red below 0, white at
 *                          0, green above (positive = the test is better)
 *   *pct, *percent*, "Percentage (%)"  number format 0.00
 *   *_us, *_ms, *_ns, time ms, dur*    number format 0.000
 *   ratio*, cv             number format 0.0000
 *   anything else          General
 * A cell is written as a number when its whole text is a finite decimal
 * number (ev_xlsx_parse_number), else as a string; empty cells stay blank.
 * An integer of more than 15 significant digits (ev_xlsx_long_integer: an
 * epoch time in ns) is written as a string of its exact digits: a number
 * cell is a double, and Excel shows 15 digits.
 */
#ifndef EV_XLSX_H
#define EV_XLSX_H

#include <stddef.h>

#include "ev/stream.h"
#include "ev/table.h"

enum ev_xlsx_kind {
	EV_XLSX_GENERAL = 0,
	EV_XLSX_TIME,
	EV_XLSX_PCT,
	EV_XLSX_RATIO,
	EV_XLSX_STATUS,
	EV_XLSX_IMPROVEMENT,
};

/* Limits of the file format. */
#define EV_XLSX_MAX_ROWS 1048576u
#define EV_XLSX_MAX_COLS 16384u
#define EV_XLSX_MAX_CELL 32767u /* characters in one cell */
#define EV_XLSX_SHEET_NAME_MAX 31u

/* The kind of a column, from its header name. */
enum ev_xlsx_kind ev_xlsx_col_kind(const char *name);

/* 1 when s is a whole finite decimal number ("12", "-0.5", "1e-3"), with
 * its value in *v; 0 otherwise ("", "nan", "0x10", "1.2.3", "12 us"). */
int ev_xlsx_parse_number(const char *s, double *v);

/* 1 when s is an integer ([+-]digits) of more than 15 significant digits,
 * which an xlsx number cell cannot hold exactly. */
int ev_xlsx_long_integer(const char *s);

/* The text of a number cell for s, whose value v ev_xlsx_parse_number
 * gave: the shortest of "%.15G", "%.16G", "%.17G" that reads back as v
 * (a reader then sees 2 for "2.000", 0.001 for "1e-3", and v exactly).
 * b holds bsz >= 32 bytes; returns the length. */
size_t ev_xlsx_number_text(const char *s, double v, char *b, size_t bsz);

/* A valid sheet name from any text: the characters []:*?/\ and control
 * characters become '_', leading/trailing apostrophes are dropped, at most
 * 31 characters (UTF-8 sequences kept whole), "Sheet" when nothing is
 * left.  out must hold 4 * 31 + 1 bytes. */
void ev_xlsx_sheet_name(const char *in, char *out, size_t outsz);

typedef struct ev_xlsx ev_xlsx;

/* Create the workbook for path ("-" = stdout), an ev_output: written under
 * a temporary name next to it and renamed by ev_xlsx_close, through a
 * symlink to its target (keeping its mode), refused (EV_ERR_SAMEFILE) when
 * it is an input of this process; nothing else is written (the sheets are
 * deflated into the output as their rows come).  created
 * (Unix seconds, > 0) is the document's creation time: the same inputs
 * then give the same bytes.  On error *x is set for ev_xlsx_error; free it
 * with ev_xlsx_abort. */
int ev_xlsx_open(ev_xlsx **x, const char *path, long long created) EV_RESULT_USED;
/* Start a sheet: the header row (ncols names, 1 .. EV_XLSX_MAX_COLS).
 * The sheet name must be unique in the workbook (EV_ERR_ARG otherwise;
 * ev_xlsx_error says why). */
int ev_xlsx_sheet(ev_xlsx *x, const char *name, const char *const *cols, size_t ncols) EV_RESULT_USED;
/* One data row of the current sheet: exactly the header's number of
 * fields.  EV_ERR_LIMIT past EV_XLSX_MAX_ROWS. */
int ev_xlsx_row(ev_xlsx *x, const char *const *fields, size_t n) EV_RESULT_USED;
/* Cells cut to EV_XLSX_MAX_CELL characters so far. */
unsigned long ev_xlsx_truncated(const ev_xlsx *x);
/* Finish the last sheet, write the output and close it, free x (also on
 * error: the temporary files are removed and the reason copied to err). */
int ev_xlsx_close(ev_xlsx *x, char *err, size_t errsz) EV_RESULT_USED;
/* Give up: remove the temporary file, free x. */
void ev_xlsx_abort(ev_xlsx *x);
/* Detail of the last error ("" if none). */
const char *ev_xlsx_error(const ev_xlsx *x);

/* Sheets written apart from the workbook, then added to it in order: a
 * writer with no output (ev_xlsx_sheet, rows and tables as usual) whose
 * sheets are deflated into memory, so that several can be written at
 * once, each on its own thread.  first: its first sheet will be the
 * workbook's first (the one shown).  Free it with ev_xlsx_abort unless
 * adopted. */
int ev_xlsx_open_apart(ev_xlsx **x, int first) EV_RESULT_USED;
/* End apart's last sheet (its last rows deflated), on its own thread;
 * ev_xlsx_adopt does it otherwise. */
int ev_xlsx_finish_apart(ev_xlsx *apart) EV_RESULT_USED;
/* Add apart's sheets (ev_xlsx_open_apart) to x after its own, their
 * deflated bytes copied as they are, and free apart (also on error).
 * EV_ERR_ARG when a name is already x's, or apart's first flag does not
 * match x's sheets so far (ev_xlsx_error says which). */
int ev_xlsx_adopt(ev_xlsx *x, ev_xlsx *apart) EV_RESULT_USED;

/* A table (ev/table.h) as a new sheet of the workbook: the workbook is the
 * table's sink, its cells get the text the TSV would hold, numbers stored
 * as numbers. */
int ev_table_open_xlsx(ev_table **t, ev_xlsx *x, const char *sheet, const char *const *cols,
                       size_t ncols) EV_RESULT_USED;

#endif
