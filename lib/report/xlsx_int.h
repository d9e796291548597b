/* SPDX-License-Identifier: MIT */
/*
 * xlsx_int.h - what the parts of lib/report's workbook writer share: the
 * workbook's state, the XML buffer every part is written through
 * (xlsx_xml.c) and the package parts written at the end (xlsx_parts.c).
 * Private to lib/report.
 */
#ifndef EV_REPORT_XLSX_INT_H
#define EV_REPORT_XLSX_INT_H

#include <stddef.h>
#include <stdint.h>

#include "ev/xlsx.h"
#include "zip.h"

/* Cell styles (cellXfs in styles.xml), by column kind. */
enum { XF_GENERAL, XF_HEADER, XF_TIME, XF_PCT, XF_RATIO };
/* Conditional formats (dxfs): Excel's Good and Bad. */
enum { DXF_BETTER, DXF_WORSE };

#define XB_CAP 65536u

struct sheet {
	char *name;
	size_t ncols;
	uint32_t nrows;
};

struct ev_xlsx {
	ev_output *out;
	ev_zip *zip;
	int apart;              /* sheets kept for ev_xlsx_adopt (no output) */
	int first;              /* apart: its first sheet is the workbook's first */
	int open;               /* the last sheet's rows may still come */
	long long created;
	struct sheet *sh;       /* every sheet so far, the current one last */
	size_t nsh, shcap;
	enum ev_xlsx_kind *kind; /* per column of the current sheet */
	size_t kcap;
	char *xb;               /* XML waiting for the zip */
	size_t xlen;
	unsigned long truncated;
	char *cut;              /* buffer for a cell cut to EV_XLSX_MAX_CELL */
	int st;                 /* first error of an xlsx_* write */
	char err[256];
};

/* XML into the current zip member, through x->xb; the first error is kept
 * in x->st, which every later call leaves alone. */
void xlsx_flush(ev_xlsx *x);
void xlsx_put(ev_xlsx *x, const char *s, size_t n);
void xlsx_str(ev_xlsx *x, const char *s);
void xlsx_fmt(ev_xlsx *x, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Text as XML character data; attr: inside an attribute value. */
void xlsx_text(ev_xlsx *x, const char *s, int attr);
/* End the current zip member, start the one named. */
int xlsx_member(ev_xlsx *x, const char *name);
/* "A1"-style reference of (row, col), both from 0; "$A$1" with abs. */
void xlsx_ref(char *b, size_t col, uint32_t row, int abs);
void xlsx_cell_ref(char *b, size_t col, uint32_t row);
/* The parts that name every sheet, and the fixed ones, after the last
 * sheet. */
int xlsx_write_parts(ev_xlsx *x);

#endif
