/* SPDX-License-Identifier: MIT */
/*
 * xlsx_xml.c - the workbook's XML, written through one buffer into the
 * current zip member, and the cells' "A1" references.  See xlsx_int.h.
 */
#include "xlsx_int.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

void xlsx_flush(ev_xlsx *x)
{
	if (x->xlen && x->st == EV_OK)
		x->st = ev_zip_write(x->zip, x->xb, x->xlen);
	x->xlen = 0;
}

void xlsx_put(ev_xlsx *x, const char *s, size_t n)
{
	if (x->xlen + n > XB_CAP) {
		xlsx_flush(x);
		if (n > XB_CAP) {
			if (x->st == EV_OK)
				x->st = ev_zip_write(x->zip, s, n);
			return;
		}
	}
	memcpy(x->xb + x->xlen, s, n);
	x->xlen += n;
}

void xlsx_str(ev_xlsx *x, const char *s)
{
	xlsx_put(x, s, strlen(s));
}

void xlsx_fmt(ev_xlsx *x, const char *fmt, ...)
{
	char b[512];
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(b, sizeof b, fmt, ap);
	va_end(ap);
	if (n >= (int)sizeof b)
		x->st = EV_ERR_LIMIT;
	else if (n > 0)
		xlsx_put(x, b, (size_t)n);
}

/* Text as XML character data; attr: inside an attribute value.  Control
 * characters XML cannot hold are written as Excel's _xHHHH_ escapes. */
void xlsx_text(ev_xlsx *x, const char *s, int attr)
{
	const char *run = s;
	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;
		const char *rep;
		char esc[8];
		if (c == '&')
			rep = "&amp;";
		else if (c == '<')
			rep = "&lt;";
		else if (c == '>')
			rep = "&gt;";
		else if (c == '"' && attr)
			rep = "&quot;";
		else if (c < 0x20 && c != '\t' && c != '\n') {
			snprintf(esc, sizeof esc, "_x%04X_", c);
			rep = esc;
		} else
			continue;
		xlsx_put(x, run, (size_t)(s - run));
		xlsx_str(x, rep);
		run = s + 1;
	}
	xlsx_put(x, run, (size_t)(s - run));
}

int xlsx_member(ev_xlsx *x, const char *name)
{
	xlsx_flush(x);
	if (x->st == EV_OK)
		x->st = ev_zip_begin(x->zip, name);
	return x->st;
}

/* "A1"-style reference of (row, col), both from 0; "$A$1" with abs. */
void xlsx_ref(char *b, size_t col, uint32_t row, int abs)
{
	char letters[4];
	int n = 0;
	col++;
	while (col) {
		letters[n++] = (char)('A' + (col - 1) % 26);
		col = (col - 1) / 26;
	}
	char *p = b;
	if (abs)
		*p++ = '$';
	while (n)
		*p++ = letters[--n];
	if (abs)
		*p++ = '$';
	sprintf(p, "%u", row + 1);
}

void xlsx_cell_ref(char *b, size_t col, uint32_t row)
{
	xlsx_ref(b, col, row, 0);
}

