/* SPDX-License-Identifier: MIT */
/*
 * xlsx.c - tables into an Excel workbook (SpreadsheetML in a zip), row by
 * row.  See include/ev/xlsx.h.
 *
 * Each sheet's XML is deflated into the output as its rows come (zip.c), so
 * memory does not grow with rows and nothing goes through a temporary file
 * but the output's own.  Strings are inline (no shared-string table, which
 * would have to be held whole until the end); the parts that name every
 * sheet (workbook, content types, relationships) are written last, which
 * the format allows: readers find parts through the zip's directory.
 */
#include "ev/xlsx.h"
#include "ev/stream.h"
#include "ev/table.h"
#include "zip.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

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
	long long created;
	struct sheet *sh;       /* every sheet so far, the current one last */
	size_t nsh, shcap;
	enum ev_xlsx_kind *kind; /* per column of the current sheet */
	size_t kcap;
	char *xb;               /* XML waiting for the zip */
	size_t xlen;
	unsigned long truncated;
	char *cut;              /* buffer for a cell cut to EV_XLSX_MAX_CELL */
	int st;                 /* first error of an xb_* write */
	char err[256];
};

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


/* --- XML into the current zip member, through a buffer ----------------- */

static void xb_flush(ev_xlsx *x)
{
	if (x->xlen && x->st == EV_OK)
		x->st = ev_zip_write(x->zip, x->xb, x->xlen);
	x->xlen = 0;
}

static void xb_put(ev_xlsx *x, const char *s, size_t n)
{
	if (x->xlen + n > XB_CAP) {
		xb_flush(x);
		if (n > XB_CAP) {
			if (x->st == EV_OK)
				x->st = ev_zip_write(x->zip, s, n);
			return;
		}
	}
	memcpy(x->xb + x->xlen, s, n);
	x->xlen += n;
}

static void xb_str(ev_xlsx *x, const char *s)
{
	xb_put(x, s, strlen(s));
}

static void xb_fmt(ev_xlsx *x, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void xb_fmt(ev_xlsx *x, const char *fmt, ...)
{
	char b[512];
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(b, sizeof b, fmt, ap);
	va_end(ap);
	if (n >= (int)sizeof b)
		x->st = EV_ERR_LIMIT;
	else if (n > 0)
		xb_put(x, b, (size_t)n);
}

/* Text as XML character data; attr: inside an attribute value.  Control
 * characters XML cannot hold are written as Excel's _xHHHH_ escapes. */
static void xb_text(ev_xlsx *x, const char *s, int attr)
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
		xb_put(x, run, (size_t)(s - run));
		xb_str(x, rep);
		run = s + 1;
	}
	xb_put(x, run, (size_t)(s - run));
}

static int member(ev_xlsx *x, const char *name)
{
	xb_flush(x);
	if (x->st == EV_OK)
		x->st = ev_zip_begin(x->zip, name);
	return x->st;
}

/* --- cell references and numbers ---------------------------------------- */

/* "A1"-style reference of (row, col), both from 0; "$A$1" with abs. */
static void ref_of(char *b, size_t col, uint32_t row, int abs)
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

static void cell_ref(char *b, size_t col, uint32_t row)
{
	ref_of(b, col, row, 0);
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
	if (n)
		return n;
	for (int prec = 15;; prec++) {
		n = (size_t)snprintf(b, bsz, "%.*G", prec, v);
		if (prec == 17 || strtod(b, NULL) == v)
			return n;
	}
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
	if (x->nsh == 0)
		return EV_OK;
	struct sheet *s = &x->sh[x->nsh - 1];
	xb_str(x, "</sheetData>");
	if (s->nrows > 0) {
		int prio = 1;
		cell_ref(a, 0, 0);
		cell_ref(z, s->ncols - 1, s->nrows);
		xb_fmt(x, "<autoFilter ref=\"%s:%s\"/>", a, z);
		for (size_t c = 0; c < s->ncols; c++) {
			cell_ref(a, c, 1);
			cell_ref(z, c, s->nrows);
			if (x->kind[c] == EV_XLSX_STATUS) {
				static const char *const word[] = { "Better", "Worse" };
				xb_fmt(x, "<conditionalFormatting sqref=\"%s:%s\">", a, z);
				for (int w = 0; w < 2; w++)
					xb_fmt(x, "<cfRule type=\"beginsWith\" dxfId=\"%d\" priority=\"%d\" operator=\"beginsWith\" "
					          "text=\"%s\"><formula>LEFT(%s,%zu)=\"%s\"</formula></cfRule>",
					       w ? DXF_WORSE : DXF_BETTER, prio++, word[w], a, strlen(word[w]), word[w]);
				xb_str(x, "</conditionalFormatting>");
			} else if (x->kind[c] == EV_XLSX_IMPROVEMENT) {
				/* aorta's scale: red at the minimum, white at 0, green at the maximum. */
				xb_fmt(x, "<conditionalFormatting sqref=\"%s:%s\"><cfRule type=\"colorScale\" priority=\"%d\">"
				          "<colorScale><cfvo type=\"min\" val=\"0\"/><cfvo type=\"num\" val=\"0\"/>"
				          "<cfvo type=\"max\" val=\"0\"/><color rgb=\"FFF8696B\"/><color rgb=\"FFFFFFFF\"/>"
				          "<color rgb=\"FF63BE7B\"/></colorScale></cfRule></conditionalFormatting>",
				       a, z, prio++);
			}
		}
	}
	xb_str(x, "<pageMargins left=\"0.7\" right=\"0.7\" top=\"0.75\" bottom=\"0.75\" header=\"0.3\" footer=\"0.3\"/>"
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
	snprintf(part, sizeof part, "xl/worksheets/sheet%zu.xml", x->nsh);
	if ((st = member(x, part)) != EV_OK)
		return st;
	xb_str(x, "<?xml version=\"1.0\" encoding=\"UTF-8\" standalone=\"yes\"?>\n"
	          "<worksheet xmlns=\"http://schemas.openxmlformats.org/spreadsheetml/2006/main\" "
	          "xmlns:r=\"http://schemas.openxmlformats.org/officeDocument/2006/relationships\">");
	/* The header row frozen; the first sheet the one shown. */
	xb_fmt(x, "<sheetViews><sheetView %sworkbookViewId=\"0\"><pane ySplit=\"1\" topLeftCell=\"A2\" "
	          "activePane=\"bottomLeft\" state=\"frozen\"/><selection pane=\"bottomLeft\"/></sheetView></sheetViews>",
	       x->nsh == 1 ? "tabSelected=\"1\" " : "");
	xb_str(x, "<sheetFormatPr defaultRowHeight=\"15\"/><cols>");
	for (size_t c = 0; c < ncols; c++) {
		size_t w = strlen(cols[c]) + 3;
		x->kind[c] = ev_xlsx_col_kind(cols[c]);
		if (strstr(cols[c], "name") || strcasecmp(cols[c], "metric") == 0)
			w = w < 40 ? 40 : w;
		w = w < 8 ? 8 : w > 60 ? 60 : w;
		/* Excel's width of w characters of 7 pixels with 5 of padding. */
		double width = floor(((double)w * 7 + 5) / 7 * 256) / 256;
		xb_fmt(x, "<col min=\"%zu\" max=\"%zu\" width=\"%.10g\" customWidth=\"1\"", c + 1, c + 1, width);
		if (xf_of(x->kind[c]) != XF_GENERAL)
			xb_fmt(x, " style=\"%d\"", xf_of(x->kind[c]));
		xb_str(x, "/>");
	}
	xb_str(x, "</cols><sheetData><row r=\"1\">");
	for (size_t c = 0; c < ncols; c++) {
		cell_ref(ref, c, 0);
		xb_fmt(x, "<c r=\"%s\" s=\"%d\" t=\"inlineStr\"><is><t%s>", ref, XF_HEADER,
		       cols[c][0] == ' ' || (cols[c][0] && cols[c][strlen(cols[c]) - 1] == ' ') ? " xml:space=\"preserve\"" : "");
		xb_text(x, fit_cell(x, cols[c]), 0);
		xb_str(x, "</t></is></c>");
	}
	xb_str(x, "</row>");
	return x->st;
}

int ev_xlsx_row(ev_xlsx *x, const char *const *fields, size_t n)
{
	char ref[16], num[40];
	if (!x || x->nsh == 0 || n != x->sh[x->nsh - 1].ncols)
		return EV_ERR_ARG;
	struct sheet *s = &x->sh[x->nsh - 1];
	if (s->nrows + 1 >= EV_XLSX_MAX_ROWS) {
		snprintf(x->err, sizeof x->err, "more than %u rows in one sheet (the format's limit)", EV_XLSX_MAX_ROWS - 1);
		return EV_ERR_LIMIT;
	}
	uint32_t row = ++s->nrows;
	xb_fmt(x, "<row r=\"%u\">", row + 1);
	for (size_t c = 0; c < n; c++) {
		const char *f = fields[c];
		double v;
		if (!f[0])
			continue;
		int xf = xf_of(x->kind[c]);
		cell_ref(ref, c, row);
		xb_str(x, "<c r=\"");
		xb_str(x, ref);
		if (xf != XF_GENERAL)
			xb_fmt(x, "\" s=\"%d", xf);
		/* A number: a plain decimal's text is taken as it is, others'
		 * through their double. */
		size_t nlen = 0;
		if (x->kind[c] != EV_XLSX_STATUS && !(nlen = plain_decimal(f, num)) && !ev_xlsx_long_integer(f) &&
		    ev_xlsx_parse_number(f, &v))
			nlen = ev_xlsx_number_text(f, v, num, sizeof num);
		if (nlen) {
			xb_str(x, "\"><v>");
			xb_put(x, num, nlen);
			xb_str(x, "</v></c>");
		} else {
			f = fit_cell(x, f);
			xb_str(x, (f[0] == ' ' || f[strlen(f) - 1] == ' ') ? "\" t=\"inlineStr\"><is><t xml:space=\"preserve\">"
			                                                   : "\" t=\"inlineStr\"><is><t>");
			xb_text(x, f, 0);
			xb_str(x, "</t></is></c>");
		}
	}
	xb_str(x, "</row>");
	return x->st;
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

int ev_table_open_xlsx(ev_table **t, ev_xlsx *x, const char *sheet, const char *const *cols, size_t ncols)
{
	const struct ev_table_sink sink = { sink_header, sink_row, x };
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

static const char styles_xml[] =
	"<?xml version=\"1.0\" encoding=\"UTF-8\" standalone=\"yes\"?>\n"
	"<styleSheet xmlns=\"http://schemas.openxmlformats.org/spreadsheetml/2006/main\">"
	"<numFmts count=\"2\"><numFmt numFmtId=\"164\" formatCode=\"0.000\"/>"
	"<numFmt numFmtId=\"165\" formatCode=\"0.0000\"/></numFmts>"
	"<fonts count=\"2\"><font><sz val=\"11\"/><color theme=\"1\"/><name val=\"Calibri\"/><family val=\"2\"/></font>"
	"<font><b/><sz val=\"11\"/><color theme=\"1\"/><name val=\"Calibri\"/><family val=\"2\"/></font></fonts>"
	"<fills count=\"3\"><fill><patternFill patternType=\"none\"/></fill><fill><patternFill patternType=\"gray125\"/></fill>"
	"<fill><patternFill patternType=\"solid\"><fgColor rgb=\"FFD9E1F2\"/><bgColor indexed=\"64\"/></patternFill></fill></fills>"
	"<borders count=\"1\"><border><left/><right/><top/><bottom/><diagonal/></border></borders>"
	"<cellStyleXfs count=\"1\"><xf numFmtId=\"0\" fontId=\"0\" fillId=\"0\" borderId=\"0\"/></cellStyleXfs>"
	"<cellXfs count=\"5\"><xf numFmtId=\"0\" fontId=\"0\" fillId=\"0\" borderId=\"0\" xfId=\"0\"/>"
	"<xf numFmtId=\"0\" fontId=\"1\" fillId=\"2\" borderId=\"0\" xfId=\"0\" applyFont=\"1\" applyFill=\"1\"/>"
	"<xf numFmtId=\"164\" fontId=\"0\" fillId=\"0\" borderId=\"0\" xfId=\"0\" applyNumberFormat=\"1\"/>"
	"<xf numFmtId=\"2\" fontId=\"0\" fillId=\"0\" borderId=\"0\" xfId=\"0\" applyNumberFormat=\"1\"/>"
	"<xf numFmtId=\"165\" fontId=\"0\" fillId=\"0\" borderId=\"0\" xfId=\"0\" applyNumberFormat=\"1\"/></cellXfs>"
	"<cellStyles count=\"1\"><cellStyle name=\"Normal\" xfId=\"0\" builtinId=\"0\"/></cellStyles>"
	"<dxfs count=\"2\"><dxf><font><color rgb=\"FF006100\"/></font><fill><patternFill><bgColor rgb=\"FFC6EFCE\"/>"
	"</patternFill></fill></dxf><dxf><font><color rgb=\"FF9C0006\"/></font><fill><patternFill>"
	"<bgColor rgb=\"FFFFC7CE\"/></patternFill></fill></dxf></dxfs>"
	"<tableStyles count=\"0\" defaultTableStyle=\"TableStyleMedium9\" defaultPivotStyle=\"PivotStyleLight16\"/>"
	"</styleSheet>";

#define XML_HEAD "<?xml version=\"1.0\" encoding=\"UTF-8\" standalone=\"yes\"?>\n"
#define REL_NS "http://schemas.openxmlformats.org/package/2006/relationships"
#define DOC_REL "http://schemas.openxmlformats.org/officeDocument/2006/relationships"
#define CT_OOX "application/vnd.openxmlformats-officedocument."

/* The parts that name every sheet, and the fixed ones. */
static int write_parts(ev_xlsx *x)
{
	char when[32], a[20], z[20];
	struct tm tm;
	time_t t = (time_t)x->created;
	if (!gmtime_r(&t, &tm) || !strftime(when, sizeof when, "%Y-%m-%dT%H:%M:%SZ", &tm))
		snprintf(when, sizeof when, "1980-01-01T00:00:00Z");

	member(x, "xl/workbook.xml");
	xb_str(x, XML_HEAD "<workbook xmlns=\"http://schemas.openxmlformats.org/spreadsheetml/2006/main\" "
	          "xmlns:r=\"" DOC_REL "\"><workbookPr/><bookViews><workbookView/></bookViews><sheets>");
	for (size_t i = 0; i < x->nsh; i++) {
		xb_str(x, "<sheet name=\"");
		xb_text(x, x->sh[i].name, 1);
		xb_fmt(x, "\" sheetId=\"%zu\" r:id=\"rId%zu\"/>", i + 1, i + 1);
	}
	xb_str(x, "</sheets>");
	/* Excel keeps a sheet's filter range as a hidden name. */
	int names = 0;
	for (size_t i = 0; i < x->nsh; i++) {
		if (x->sh[i].nrows == 0)
			continue;
		if (!names++)
			xb_str(x, "<definedNames>");
		ref_of(a, 0, 0, 1);
		ref_of(z, x->sh[i].ncols - 1, x->sh[i].nrows, 1);
		xb_fmt(x, "<definedName name=\"_xlnm._FilterDatabase\" localSheetId=\"%zu\" hidden=\"1\">'", i);
		/* In a formula an apostrophe of the name is doubled. */
		for (const char *p = x->sh[i].name; *p; p++) {
			const char one[2] = { *p, 0 };
			xb_text(x, *p == '\'' ? "''" : one, 0);
		}
		xb_fmt(x, "'!%s:%s</definedName>", a, z);
	}
	if (names)
		xb_str(x, "</definedNames>");
	xb_str(x, "<calcPr calcId=\"124519\" fullCalcOnLoad=\"1\"/></workbook>");

	member(x, "xl/_rels/workbook.xml.rels");
	xb_str(x, XML_HEAD "<Relationships xmlns=\"" REL_NS "\">");
	for (size_t i = 0; i < x->nsh; i++)
		xb_fmt(x, "<Relationship Id=\"rId%zu\" Type=\"" DOC_REL "/worksheet\" Target=\"worksheets/sheet%zu.xml\"/>",
		       i + 1, i + 1);
	xb_fmt(x, "<Relationship Id=\"rId%zu\" Type=\"" DOC_REL "/styles\" Target=\"styles.xml\"/></Relationships>",
	       x->nsh + 1);

	member(x, "xl/styles.xml");
	xb_str(x, styles_xml);

	member(x, "docProps/app.xml");
	xb_str(x, XML_HEAD "<Properties xmlns=\"http://schemas.openxmlformats.org/officeDocument/2006/extended-properties\">"
	          "<Application>evkit</Application></Properties>");

	member(x, "docProps/core.xml");
	xb_fmt(x, XML_HEAD "<cp:coreProperties xmlns:cp=\"http://schemas.openxmlformats.org/package/2006/metadata/"
	          "core-properties\" xmlns:dc=\"http://purl.org/dc/elements/1.1/\" xmlns:dcterms=\"http://purl.org/dc/"
	          "terms/\" xmlns:xsi=\"http://www.w3.org/2001/XMLSchema-instance\">");
	xb_fmt(x, "<dcterms:created xsi:type=\"dcterms:W3CDTF\">%s</dcterms:created>"
	          "<dcterms:modified xsi:type=\"dcterms:W3CDTF\">%s</dcterms:modified></cp:coreProperties>",
	       when, when);

	member(x, "_rels/.rels");
	xb_str(x, XML_HEAD "<Relationships xmlns=\"" REL_NS "\">"
	          "<Relationship Id=\"rId1\" Type=\"" DOC_REL "/officeDocument\" Target=\"xl/workbook.xml\"/>"
	          "<Relationship Id=\"rId2\" Type=\"" REL_NS "/metadata/core-properties\" Target=\"docProps/core.xml\"/>"
	          "<Relationship Id=\"rId3\" Type=\"" DOC_REL "/extended-properties\" Target=\"docProps/app.xml\"/>"
	          "</Relationships>");

	member(x, "[Content_Types].xml");
	xb_str(x, XML_HEAD "<Types xmlns=\"http://schemas.openxmlformats.org/package/2006/content-types\">"
	          "<Default Extension=\"rels\" ContentType=\"application/vnd.openxmlformats-package.relationships+xml\"/>"
	          "<Default Extension=\"xml\" ContentType=\"application/xml\"/>"
	          "<Override PartName=\"/docProps/app.xml\" ContentType=\"" CT_OOX "extended-properties+xml\"/>"
	          "<Override PartName=\"/docProps/core.xml\" ContentType=\"application/vnd.openxmlformats-package."
	          "core-properties+xml\"/>"
	          "<Override PartName=\"/xl/styles.xml\" ContentType=\"" CT_OOX "spreadsheetml.styles+xml\"/>"
	          "<Override PartName=\"/xl/workbook.xml\" ContentType=\"" CT_OOX "spreadsheetml.sheet.main+xml\"/>");
	for (size_t i = 0; i < x->nsh; i++)
		xb_fmt(x, "<Override PartName=\"/xl/worksheets/sheet%zu.xml\" ContentType=\"" CT_OOX
		          "spreadsheetml.worksheet+xml\"/>", i + 1);
	xb_str(x, "</Types>");
	xb_flush(x);
	return x->st;
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
	if ((st = finish_sheet(x)) == EV_OK && (st = write_parts(x)) == EV_OK)
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
