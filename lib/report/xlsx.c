/* SPDX-License-Identifier: MIT */
/*
 * xlsx.c - tables into an Excel workbook (SpreadsheetML in a zip), row by
 * row.  See include/ev/xlsx.h.
 *
 * Each sheet's XML is deflated into the output as its rows come (zip.c,
 * through xlsx_xml.c's buffer), so memory does not grow with rows and
 * nothing goes through a temporary file but the output's own.  Strings are inline (no shared-string table, which
 * would have to be held whole until the end); the parts that name every
 * sheet (workbook, content types, relationships: xlsx_parts.c) are written
 * last, which the format allows: readers find parts through the zip's
 * directory.
 */
#include "ev/numtext.h"
#include "ev/xlsx.h"
#include "ev/stream.h"
#include "ev/table.h"
#include "xlsx_int.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

static int ends_with(const char *s, const char *suffix)
{
	size_t n = strlen(s), m = strlen(suffix);
	return n >= m && strcasecmp(s + n - m, suffix) == 0;
}

enum ev_xlsx_kind ev_xlsx_col_kind(const char *name)
{
	if (strcasecmp(name, "status") == 0)
		return EV_XLSX_STATUS;
	if (strncasecmp(name, "improvement", 11) == 0 || strncasecmp(name, "percent_change", 14) == 0)
		return EV_XLSX_IMPROVEMENT;
	if (ends_with(name, "pct") || strcasestr(name, "percent") || strstr(name, "(%)"))
		return EV_XLSX_PCT;
	if (ends_with(name, "_us") || ends_with(name, "_ms") || ends_with(name, "_ns") || strcasecmp(name, "time ms") == 0 ||
	    strncasecmp(name, "dur", 3) == 0 || strstr(name, "(\xc2\xb5s)") || strstr(name, "(us)"))
		return EV_XLSX_TIME;
	if (strncasecmp(name, "ratio", 5) == 0 || strcasecmp(name, "cv") == 0)
		return EV_XLSX_RATIO;
	return EV_XLSX_GENERAL;
}

int ev_xlsx_parse_number(const char *s, double *v)
{
	const char *p;
	char *end;
	int digits = 0;
	if (!*s)
		return 0;
	/* Decimal syntax only: no hex, inf, nan or blanks, which strtod takes. */
	for (p = s; *p; p++) {
		if (*p >= '0' && *p <= '9')
			digits = 1;
		else if (!strchr("+-.eE", *p))
			return 0;
	}
	if (!digits)
		return 0;
	errno = 0;
	double d = strtod(s, &end);
	if (*end || !isfinite(d) || errno == ERANGE)
		return 0;
	*v = d;
	return 1;
}

void ev_xlsx_sheet_name(const char *in, char *out, size_t outsz)
{
	size_t o = 0, chars = 0;
	const unsigned char *p = (const unsigned char *)in;
	while (*p == '\'')
		p++;
	while (*p && chars < EV_XLSX_SHEET_NAME_MAX) {
		size_t len = 1;
		if (*p >= 0xC0)
			len = *p >= 0xF0 ? 4 : *p >= 0xE0 ? 3 : 2;
		for (size_t i = 1; i < len; i++)
			if ((p[i] & 0xC0) != 0x80)
				len = 1; /* broken sequence: one byte, replaced below */
		if (o + len + 1 > outsz)
			break;
		if (len == 1) {
			unsigned char c = *p;
			out[o++] = (c < 0x20 || c == 0x7F || c >= 0x80 || strchr("[]:*?/\\", c)) ? '_' : (char)c;
		} else {
			memcpy(out + o, p, len);
			o += len;
		}
		p += len;
		chars++;
	}
	while (o > 0 && out[o - 1] == '\'')
		o--;
	if (o == 0 && outsz > 5) {
		memcpy(out, "Sheet", 5);
		o = 5;
	}
	if (outsz)
		out[o < outsz ? o : outsz - 1] = '\0';
}


/* s cut to EV_XLSX_MAX_CELL bytes at a UTF-8 character boundary (bytes >=
 * characters, so the cell limit holds). */
static const char *fit_cell(ev_xlsx *x, const char *s)
{
	size_t n = strlen(s);
	if (n <= EV_XLSX_MAX_CELL)
		return s;
	n = EV_XLSX_MAX_CELL;
	while (n > 0 && ((unsigned char)s[n] & 0xC0) == 0x80)
		n--;
	memcpy(x->cut, s, n);
	x->cut[n] = '\0';
	x->truncated++;
	return x->cut;
}

/* An integer of more than 15 significant digits (an epoch time in ns) is
 * written as a text cell holding its exact digits: an xlsx number is a
 * double, exact to 2^53 only, and Excel shows 15 digits of any number, so
 * 1765217845926542330 would read back as 1.765217845926542e+18. */
int ev_xlsx_long_integer(const char *s)
{
	size_t sig = 0;
	if (*s == '-' || *s == '+')
		s++;
	while (*s == '0')
		s++;
	for (; *s; s++, sig++)
		if (*s < '0' || *s > '9')
			return 0;
	return sig > 15;
}


/* A decimal of at most 15 significant digits (most cells) reads back as
 * its own double, so it is already its shortest text once leading zeros,
 * trailing fraction zeros and a bare point are dropped, as "%.15G" would:
 * the text of s when it is such a decimal ([+-]digits[.digits], a digit
 * at least, not below 1e-4), else 0.  Other texts go through the double. */
static size_t plain_decimal(const char *s, char *b)
{
	const char *p = s, *dot = NULL;
	int sig = 0, lead = 1, intdigits = 0, fzeros = 0, digits = 0;
	size_t o = 0;
	if (*p == '-' || *p == '+')
		p++;
	for (const char *q = p; *q; q++) {
		if (*q == '.') {
			if (dot)
				return 0;
			dot = q;
			continue;
		}
		if (*q < '0' || *q > '9')
			return 0;
		digits = 1;
		if (lead && *q == '0') {
			if (dot)
				fzeros++;
			continue;
		}
		lead = 0;
		sig++;
		if (!dot)
			intdigits++;
	}
	/* %G goes to an exponent below 1e-4. */
	if (!digits || sig > 15 || (sig && !intdigits && fzeros > 3))
		return 0;
	if (*s == '-')
		b[o++] = '-';
	const char *end = p + strlen(p);
	if (dot) {
		while (end > dot + 1 && end[-1] == '0')
			end--;
		if (end == dot + 1)
			end = dot;
	}
	const char *i = p;
	while (i < (dot ? dot : end) - 1 && *i == '0')
		i++;
	if (i == (dot ? dot : end)) /* ".5": no integer digits */
		b[o++] = '0';
	memcpy(b + o, i, (size_t)(end - i));
	o += (size_t)(end - i);
	b[o] = '\0';
	return o;
}

size_t ev_xlsx_number_text(const char *s, double v, char *b, size_t bsz)
{
	size_t n = plain_decimal(s, b);
	return n ? n : ev_num_text(v, b, bsz, 1);
}

/* --- sheets ------------------------------------------------------------- */

static int xf_of(enum ev_xlsx_kind k)
{
	switch (k) {
	case EV_XLSX_TIME: return XF_TIME;
	case EV_XLSX_PCT:
	case EV_XLSX_IMPROVEMENT: return XF_PCT;
	case EV_XLSX_RATIO: return XF_RATIO;
	default: return XF_GENERAL;
	}
}

/* A sheet name Excel takes: 1 to 31 characters, none of []:*?/\, no
 * apostrophe first or last, unlike every other sheet's (case aside). */
static const char *bad_sheet_name(const ev_xlsx *x, const char *name)
{
	size_t chars = 0;
	if (!*name)
		return "an empty name";
	for (const unsigned char *p = (const unsigned char *)name; *p; p++) {
		if ((*p & 0xC0) != 0x80)
			chars++;
		if (strchr("[]:*?/\\", *p))
			return "the name has one of []:*?/\\";
	}
	if (chars > EV_XLSX_SHEET_NAME_MAX)
		return "the name is longer than 31 characters";
	if (name[0] == '\'' || name[strlen(name) - 1] == '\'')
		return "the name starts or ends with an apostrophe";
	for (size_t i = 0; i < x->nsh; i++)
		if (strcasecmp(x->sh[i].name, name) == 0)
			return "the name is already in use";
	return NULL;
}

/* What follows the finished sheet's rows: its filter and colours, which
 * need its last row. */
static int finish_sheet(ev_xlsx *x)
{
	char a[16], z[16];
	if (!x->open)
		return EV_OK;
	x->open = 0;
	struct sheet *s = &x->sh[x->nsh - 1];
	xlsx_str(x, "</sheetData>");
	if (s->nrows > 0) {
		int prio = 1;
		xlsx_cell_ref(a, 0, 0);
		xlsx_cell_ref(z, s->ncols - 1, s->nrows);
		xlsx_fmt(x, "<autoFilter ref=\"%s:%s\"/>", a, z);
		for (size_t c = 0; c < s->ncols; c++) {
			xlsx_cell_ref(a, c, 1);
			xlsx_cell_ref(z, c, s->nrows);
			if (x->kind[c] == EV_XLSX_STATUS) {
				static const char *const word[] = { "Better", "Worse" };
				xlsx_fmt(x, "<conditionalFormatting sqref=\"%s:%s\">", a, z);
				for (int w = 0; w < 2; w++)
					xlsx_fmt(x, "<cfRule type=\"beginsWith\" dxfId=\"%d\" priority=\"%d\" operator=\"beginsWith\" "
					          "text=\"%s\"><formula>LEFT(%s,%zu)=\"%s\"</formula></cfRule>",
					       w ? DXF_WORSE : DXF_BETTER, prio++, word[w], a, strlen(word[w]), word[w]);
				xlsx_str(x, "</conditionalFormatting>");
			} else if (x->kind[c] == EV_XLSX_IMPROVEMENT) {
				/* aorta's scale: red at the minimum, white at 0, green at the maximum. */
				xlsx_fmt(x, "<conditionalFormatting sqref=\"%s:%s\"><cfRule type=\"colorScale\" priority=\"%d\">"
				          "<colorScale><cfvo type=\"min\" val=\"0\"/><cfvo type=\"num\" val=\"0\"/>"
				          "<cfvo type=\"max\" val=\"0\"/><color rgb=\"FFF8696B\"/><color rgb=\"FFFFFFFF\"/>"
				          "<color rgb=\"FF63BE7B\"/></colorScale></cfRule></conditionalFormatting>",
				       a, z, prio++);
			}
		}
	}
	xlsx_str(x, "<pageMargins left=\"0.7\" right=\"0.7\" top=\"0.75\" bottom=\"0.75\" header=\"0.3\" footer=\"0.3\"/>"
	          "</worksheet>");
	return x->st;
}

int ev_xlsx_sheet(ev_xlsx *x, const char *name, const char *const *cols, size_t ncols)
{
	char part[48], ref[16];
	const char *why;
	int st;
	if (!x || !x->zip || ncols == 0 || ncols > EV_XLSX_MAX_COLS)
		return EV_ERR_ARG;
	if ((why = bad_sheet_name(x, name))) {
		snprintf(x->err, sizeof x->err, "sheet '%s': %s", name, why);
		return EV_ERR_ARG;
	}
	if ((st = finish_sheet(x)) != EV_OK)
		return st;
	if (x->nsh == x->shcap) {
		size_t cap = x->shcap ? 2 * x->shcap : 16;
		struct sheet *sh = realloc(x->sh, cap * sizeof *sh);
		if (!sh)
			return EV_ERR_NOMEM;
		x->sh = sh;
		x->shcap = cap;
	}
	if (ncols > x->kcap) {
		enum ev_xlsx_kind *k = realloc(x->kind, ncols * sizeof *k);
		if (!k)
			return EV_ERR_NOMEM;
		x->kind = k;
		x->kcap = ncols;
	}
	struct sheet *s = &x->sh[x->nsh];
	if (!(s->name = strdup(name)))
		return EV_ERR_NOMEM;
	s->ncols = ncols;
	s->nrows = 0;
	x->nsh++;
	x->open = 1;
	snprintf(part, sizeof part, "xl/worksheets/sheet%zu.xml", x->nsh);
	if ((st = xlsx_member(x, part)) != EV_OK)
		return st;
	xlsx_str(x, "<?xml version=\"1.0\" encoding=\"UTF-8\" standalone=\"yes\"?>\n"
	          "<worksheet xmlns=\"http://schemas.openxmlformats.org/spreadsheetml/2006/main\" "
	          "xmlns:r=\"http://schemas.openxmlformats.org/officeDocument/2006/relationships\">");
	/* The header row frozen; the first sheet the one shown. */
	xlsx_fmt(x, "<sheetViews><sheetView %sworkbookViewId=\"0\"><pane ySplit=\"1\" topLeftCell=\"A2\" "
	          "activePane=\"bottomLeft\" state=\"frozen\"/><selection pane=\"bottomLeft\"/></sheetView></sheetViews>",
	       x->nsh == 1 && (!x->apart || x->first) ? "tabSelected=\"1\" " : "");
	xlsx_str(x, "<sheetFormatPr defaultRowHeight=\"15\"/><cols>");
	for (size_t c = 0; c < ncols; c++) {
		size_t w = strlen(cols[c]) + 3;
		x->kind[c] = ev_xlsx_col_kind(cols[c]);
		if (strstr(cols[c], "name") || strcasecmp(cols[c], "metric") == 0)
			w = w < 40 ? 40 : w;
		w = w < 8 ? 8 : w > 60 ? 60 : w;
		/* Excel's width of w characters of 7 pixels with 5 of padding. */
		double width = floor(((double)w * 7 + 5) / 7 * 256) / 256;
		xlsx_fmt(x, "<col min=\"%zu\" max=\"%zu\" width=\"%.10g\" customWidth=\"1\"", c + 1, c + 1, width);
		if (xf_of(x->kind[c]) != XF_GENERAL)
			xlsx_fmt(x, " style=\"%d\"", xf_of(x->kind[c]));
		xlsx_str(x, "/>");
	}
	xlsx_str(x, "</cols><sheetData><row r=\"1\">");
	for (size_t c = 0; c < ncols; c++) {
		xlsx_cell_ref(ref, c, 0);
		xlsx_fmt(x, "<c r=\"%s\" s=\"%d\" t=\"inlineStr\"><is><t%s>", ref, XF_HEADER,
		       cols[c][0] == ' ' || (cols[c][0] && cols[c][strlen(cols[c]) - 1] == ' ') ? " xml:space=\"preserve\"" : "");
		xlsx_text(x, fit_cell(x, cols[c]), 0);
		xlsx_str(x, "</t></is></c>");
	}
	xlsx_str(x, "</row>");
	return x->st;
}

/* A row; num[c] (num may be NULL): field c is the shortest "%g" text of a
 * finite double (ev_table_f64's), already the cell's number text but for
 * the case of its exponent's 'e'. */
static int row_cells(ev_xlsx *x, const char *const *fields, const unsigned char *num, size_t n)
{
	char ref[16], text[40];
	if (!x || !x->open || n != x->sh[x->nsh - 1].ncols)
		return EV_ERR_ARG;
	struct sheet *s = &x->sh[x->nsh - 1];
	if (s->nrows + 1 >= EV_XLSX_MAX_ROWS) {
		snprintf(x->err, sizeof x->err, "more than %u rows in one sheet (the format's limit)", EV_XLSX_MAX_ROWS - 1);
		return EV_ERR_LIMIT;
	}
	uint32_t row = ++s->nrows;
	xlsx_fmt(x, "<row r=\"%u\">", row + 1);
	for (size_t c = 0; c < n; c++) {
		const char *f = fields[c];
		double v;
		if (!f[0])
			continue;
		int xf = xf_of(x->kind[c]);
		xlsx_cell_ref(ref, c, row);
		xlsx_str(x, "<c r=\"");
		xlsx_str(x, ref);
		if (xf != XF_GENERAL)
			xlsx_fmt(x, "\" s=\"%d", xf);
		/* A number: ev_table_f64's text is already the cell's (with 'E'),
		 * a plain decimal's is taken as it is, others' through their
		 * double; an integer past 15 digits is text (ev_xlsx_long_integer). */
		size_t nlen = 0;
		if (x->kind[c] != EV_XLSX_STATUS && !ev_xlsx_long_integer(f)) {
			if (num && num[c] && (nlen = strlen(f)) < sizeof text) {
				memcpy(text, f, nlen + 1);
				char *e = strchr(text, 'e');
				if (e)
					*e = 'E';
			} else if (!(nlen = plain_decimal(f, text)) && ev_xlsx_parse_number(f, &v)) {
				nlen = ev_xlsx_number_text(f, v, text, sizeof text);
			}
		}
		if (nlen) {
			xlsx_str(x, "\"><v>");
			xlsx_put(x, text, nlen);
			xlsx_str(x, "</v></c>");
		} else {
			f = fit_cell(x, f);
			xlsx_str(x, (f[0] == ' ' || f[strlen(f) - 1] == ' ') ? "\" t=\"inlineStr\"><is><t xml:space=\"preserve\">"
			                                                   : "\" t=\"inlineStr\"><is><t>");
			xlsx_text(x, f, 0);
			xlsx_str(x, "</t></is></c>");
		}
	}
	xlsx_str(x, "</row>");
	return x->st;
}

int ev_xlsx_row(ev_xlsx *x, const char *const *fields, size_t n)
{
	return row_cells(x, fields, NULL, n);
}

unsigned long ev_xlsx_truncated(const ev_xlsx *x)
{
	return x ? x->truncated : 0;
}

const char *ev_xlsx_error(const ev_xlsx *x)
{
	return x ? x->err : "";
}

/* The workbook as a table's sink: the table's header starts a sheet, each
 * of its rows is a row of that sheet. */
static int sink_header(void *x, const char *sheet, const char *const *cols, size_t ncols)
{
	return ev_xlsx_sheet(x, sheet, cols, ncols);
}

static int sink_row(void *x, const char *const *cells, size_t ncols)
{
	return ev_xlsx_row(x, cells, ncols);
}

static int sink_row_num(void *x, const char *const *cells, const unsigned char *num, size_t ncols)
{
	return row_cells(x, cells, num, ncols);
}

int ev_table_open_xlsx(ev_table **t, ev_xlsx *x, const char *sheet, const char *const *cols, size_t ncols)
{
	const struct ev_table_sink sink = { sink_header, sink_row, x, sink_row_num };
	return ev_table_open_sink(t, &sink, sheet, cols, ncols);
}

/* --- the workbook ------------------------------------------------------- */

int ev_xlsx_open(ev_xlsx **xp, const char *path, long long created)
{
	ev_xlsx *x;
	uint16_t dt, dd;
	int st;
	*xp = NULL;
	x = calloc(1, sizeof *x);
	if (!x)
		return EV_ERR_NOMEM;
	*xp = x;
	x->created = created > 0 ? created : (long long)time(NULL);
	x->xb = malloc(XB_CAP);
	x->cut = malloc(EV_XLSX_MAX_CELL + 1);
	if (!x->xb || !x->cut)
		return EV_ERR_NOMEM;
	/* The output refuses an input, resolves symlinks, and is written
	 * under a temporary name (or to stdout) by the library. */
	st = ev_output_open(&x->out, path);
	if (st != EV_OK) {
		x->out = NULL;
		snprintf(x->err, sizeof x->err, "%s", ev_strerror(st));
		return st;
	}
	ev_zip_dos_time(x->created, &dt, &dd);
	return ev_zip_open(&x->zip, x->out, dt, dd);
}

int ev_xlsx_open_apart(ev_xlsx **xp, int first)
{
	ev_xlsx *x = calloc(1, sizeof *x);
	*xp = x;
	if (!x)
		return EV_ERR_NOMEM;
	x->apart = 1;
	x->first = first;
	x->xb = malloc(XB_CAP);
	x->cut = malloc(EV_XLSX_MAX_CELL + 1);
	if (!x->xb || !x->cut)
		return EV_ERR_NOMEM;
	return ev_zip_open(&x->zip, NULL, 0, 0);
}

int ev_xlsx_finish_apart(ev_xlsx *x)
{
	int st;
	if (!x || !x->apart)
		return EV_ERR_ARG;
	if (x->st != EV_OK || !x->open)
		return x->st;
	if ((st = finish_sheet(x)) == EV_OK) {
		xlsx_flush(x);
		st = x->st;
	}
	if (st == EV_OK)
		st = ev_zip_finish(x->zip); /* ends its last member */
	return x->st = st;
}

int ev_xlsx_adopt(ev_xlsx *x, ev_xlsx *apart)
{
	int st = EV_OK;
	const char *why;
	if (!x || x->apart || !x->zip || !apart || !apart->apart)
		st = EV_ERR_ARG;
	else if (apart->st != EV_OK)
		st = apart->st;
	else if (apart->nsh && apart->first != (x->nsh == 0)) {
		snprintf(x->err, sizeof x->err, "sheet '%s' was written as %s the first", apart->sh[0].name,
		         apart->first ? "" : "not");
		st = EV_ERR_ARG;
	}
	if (st == EV_OK)
		st = ev_xlsx_finish_apart(apart);
	if (st == EV_OK && (st = finish_sheet(x)) == EV_OK) {
		xlsx_flush(x);
		st = x->st;
	}
	for (size_t i = 0; st == EV_OK && i < apart->nsh; i++) {
		char part[48];
		if ((why = bad_sheet_name(x, apart->sh[i].name))) {
			snprintf(x->err, sizeof x->err, "sheet '%s': %s", apart->sh[i].name, why);
			st = EV_ERR_ARG;
			break;
		}
		if (x->nsh == x->shcap) {
			size_t cap = x->shcap ? 2 * x->shcap : 16;
			struct sheet *sh = realloc(x->sh, cap * sizeof *sh);
			if (!sh) {
				st = EV_ERR_NOMEM;
				break;
			}
			x->sh = sh;
			x->shcap = cap;
		}
		snprintf(part, sizeof part, "xl/worksheets/sheet%zu.xml", x->nsh + 1);
		if ((st = ev_zip_take(x->zip, apart->zip, i, part)) != EV_OK)
			break;
		x->sh[x->nsh++] = apart->sh[i];
		apart->sh[i].name = NULL; /* now x's */
	}
	if (st != EV_OK && apart && apart->err[0] && !x->err[0])
		snprintf(x->err, sizeof x->err, "%s", apart->err);
	if (st == EV_OK)
		x->truncated += apart->truncated;
	if (apart)
		ev_xlsx_abort(apart);
	x->st = x->st ? x->st : st;
	return st;
}

static void release(ev_xlsx *x)
{
	for (size_t i = 0; i < x->nsh; i++)
		free(x->sh[i].name);
	free(x->sh);
	ev_zip_free(x->zip);
	free(x->kind);
	free(x->xb);
	free(x->cut);
	free(x);
}

static int close_workbook(ev_xlsx *x)
{
	int st;
	if (!x || !x->zip)
		return EV_ERR_ARG;
	if (x->nsh == 0) {
		snprintf(x->err, sizeof x->err, "no sheet");
		return EV_ERR_ARG;
	}
	if ((st = finish_sheet(x)) == EV_OK && (st = xlsx_write_parts(x)) == EV_OK)
		st = ev_zip_finish(x->zip);
	if (st == EV_ERR_LIMIT && !x->err[0])
		snprintf(x->err, sizeof x->err, "the workbook is larger than 4 GiB (the zip format's limit without zip64)");
	if (st == EV_OK) {
		st = ev_output_close(x->out);
		x->out = NULL;
	}
	if (st != EV_OK && !x->err[0])
		snprintf(x->err, sizeof x->err, "%s", ev_strerror(st));
	return st;
}

int ev_xlsx_close(ev_xlsx *x, char *err, size_t errsz)
{
	int st = close_workbook(x);
	if (err && errsz)
		snprintf(err, errsz, "%s", x ? x->err : "");
	if (st != EV_OK)
		ev_xlsx_abort(x);
	else
		release(x);
	return st;
}

void ev_xlsx_abort(ev_xlsx *x)
{
	if (!x)
		return;
	ev_output_abort(x->out);
	x->out = NULL;
	release(x);
}
