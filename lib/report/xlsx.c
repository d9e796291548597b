/* SPDX-License-Identifier: MIT */
/*
 * xlsx.c - tables into an Excel workbook with libxlsxwriter, row by row in
 * its constant_memory mode.  See include/ev/xlsx.h.
 */
#include "ev/xlsx.h"
#include "ev/stream.h"
#include "ev/table.h"

#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <unistd.h>

#include <xlsxwriter.h>

struct ev_xlsx {
	lxw_workbook *wb;
	lxw_worksheet *ws;      /* current sheet, NULL before the first */
	ev_output *out;         /* the final file (temp name, symlinks, stdout) */
	char *tmp;              /* libxlsxwriter's file, copied to out at close */
	int temp_slot;
	lxw_format *f_header, *f_time, *f_pct, *f_ratio, *f_better, *f_worse;
	enum ev_xlsx_kind *kind; /* per column of the current sheet */
	size_t ncols, kcap;
	lxw_row_t nrows;        /* data rows written to the current sheet */
	unsigned long truncated;
	char *cut;              /* buffer for a cell cut to EV_XLSX_MAX_CELL */
	char err[256];
};

/*
 * libxlsxwriter is loaded when the first workbook is opened, not at the
 * start of every program that can write one.  It brings minizip and
 * libcrypto, whose loading is a noticeable share of a short ev-stats run,
 * paid on every call of a sweep script that never asks for --xlsx.
 */
#ifndef EV_LXW_SONAME
#define EV_LXW_SONAME "libxlsxwriter.so"
#endif
/* Every libxlsxwriter function used here, once: the table below and its
 * lookup are both made from this list. */
#define LXW_FUNCTIONS(X)                                                                                     \
	X(workbook_new_opt) X(workbook_set_properties) X(workbook_add_format) X(workbook_add_worksheet)        \
	X(workbook_validate_sheet_name) X(workbook_close) X(format_set_num_format) X(format_set_bg_color)     \
	X(format_set_font_color) X(format_set_bold) X(worksheet_conditional_format_range)                    \
	X(worksheet_autofilter) X(worksheet_set_column) X(worksheet_freeze_panes) X(worksheet_write_string)  \
	X(worksheet_write_number) X(lxw_strerror)
#define LXW_FIELD(f) __typeof__(&f) f;
static struct {
	LXW_FUNCTIONS(LXW_FIELD)
} lxw;
#undef LXW_FIELD
static int lxw_loaded;

/* Look up one function; a cast from dlsym's object pointer is not C, a copy
 * of its bytes is what POSIX promises to work. */
static int lxw_sym(void *lib, const char *name, void *fn, size_t size)
{
	void *p = dlsym(lib, name);
	if (!p || size != sizeof p)
		return -1;
	memcpy(fn, &p, sizeof p);
	return 0;
}

static int lxw_load(char *err, size_t errlen)
{
	if (lxw_loaded)
		return EV_OK;
	const char *names[] = { EV_LXW_SONAME, "libxlsxwriter.so" };
	void *lib = NULL;
	for (size_t i = 0; i < sizeof names / sizeof *names && !lib; i++)
		lib = dlopen(names[i], RTLD_NOW | RTLD_LOCAL);
	if (!lib) {
		const char *why = dlerror();
		snprintf(err, errlen, "Excel output needs libxlsxwriter (%s), which cannot be loaded: %s", EV_LXW_SONAME,
		         why ? why : "not found");
		return EV_ERR_IO;
	}
	const char *missing = NULL;
#define LXW_GET(f) if (!missing && lxw_sym(lib, #f, &lxw.f, sizeof lxw.f)) missing = #f;
	LXW_FUNCTIONS(LXW_GET)
#undef LXW_GET
	if (missing) {
		snprintf(err, errlen, "the libxlsxwriter found (%s) has no %s(): too old?", EV_LXW_SONAME, missing);
		dlclose(lib);
		return EV_ERR_IO;
	}
	lxw_loaded = 1; /* and the library stays loaded */
	return EV_OK;
}

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

static lxw_format *number_format(lxw_workbook *wb, const char *fmt)
{
	lxw_format *f = lxw.workbook_add_format(wb);
	if (f)
		lxw.format_set_num_format(f, fmt);
	return f;
}

static lxw_format *colour_format(lxw_workbook *wb, lxw_color_t bg, lxw_color_t fg)
{
	lxw_format *f = lxw.workbook_add_format(wb);
	if (f) {
		lxw.format_set_bg_color(f, bg);
		lxw.format_set_font_color(f, fg);
	}
	return f;
}

int ev_xlsx_open(ev_xlsx **xp, const char *path, long long created)
{
	ev_xlsx *x;
	const char *dir = getenv("TMPDIR");
	int fd, st;
	*xp = NULL;
	x = calloc(1, sizeof *x);
	if (!x)
		return EV_ERR_NOMEM;
	x->temp_slot = -1;
	*xp = x;
	errno = 0;
	if ((st = lxw_load(x->err, sizeof x->err)) != EV_OK)
		return st;
	/* The output first: it refuses an input, resolves symlinks, and is
	 * written under a temporary name (or to stdout) by the library. */
	st = ev_output_open(&x->out, path);
	if (st != EV_OK) {
		x->out = NULL;
		snprintf(x->err, sizeof x->err, "%s", ev_strerror(st));
		return st;
	}
	if (!dir || !*dir)
		dir = "/tmp";
	x->tmp = malloc(strlen(dir) + 32);
	x->cut = malloc(EV_XLSX_MAX_CELL + 1);
	if (!x->tmp || !x->cut)
		return EV_ERR_NOMEM;
	/* libxlsxwriter writes a file by name (a zip at close): a private
	 * temporary one, copied into the output at the end. */
	sprintf(x->tmp, "%s/ev-xlsx.XXXXXX", dir);
	fd = mkstemp(x->tmp);
	if (fd < 0) {
		snprintf(x->err, sizeof x->err, "cannot create a temporary file in %s: %s", dir, strerror(errno));
		free(x->tmp);
		x->tmp = NULL;
		return EV_ERR_IO;
	}
	close(fd);
	x->temp_slot = ev_temp_register(x->tmp);
	lxw_workbook_options opt = { .constant_memory = LXW_TRUE, .tmpdir = (char *)dir };
	x->wb = lxw.workbook_new_opt(x->tmp, &opt);
	if (!x->wb) {
		snprintf(x->err, sizeof x->err, "libxlsxwriter could not create the workbook");
		return EV_ERR_IO;
	}
	/* A fixed creation time (the caller's) makes reruns byte-identical. */
	lxw_doc_properties props = { .created = (time_t)created };
	if (created > 0 && lxw.workbook_set_properties(x->wb, &props) != LXW_NO_ERROR) {
		snprintf(x->err, sizeof x->err, "libxlsxwriter could not set the document properties");
		return EV_ERR_NOMEM;
	}
	x->f_header = lxw.workbook_add_format(x->wb);
	if (x->f_header) {
		lxw.format_set_bold(x->f_header);
		lxw.format_set_bg_color(x->f_header, 0xD9E1F2);
	}
	x->f_time = number_format(x->wb, "0.000");
	x->f_pct = number_format(x->wb, "0.00");
	x->f_ratio = number_format(x->wb, "0.0000");
	/* Excel's own "Good" and "Bad" cell styles. */
	x->f_better = colour_format(x->wb, 0xC6EFCE, 0x006100);
	x->f_worse = colour_format(x->wb, 0xFFC7CE, 0x9C0006);
	if (!x->f_header || !x->f_time || !x->f_pct || !x->f_ratio || !x->f_better || !x->f_worse)
		return EV_ERR_NOMEM;
	return EV_OK;
}

static int lxw_status(ev_xlsx *x, lxw_error e, const char *what)
{
	if (e == LXW_NO_ERROR)
		return EV_OK;
	snprintf(x->err, sizeof x->err, "%s: %s", what, lxw.lxw_strerror(e));
	return e == LXW_ERROR_MEMORY_MALLOC_FAILED ? EV_ERR_NOMEM : EV_ERR_IO;
}

/* Colours and filters of the finished sheet: they need its last row. */
static int finish_sheet(ev_xlsx *x)
{
	if (!x->ws || x->nrows == 0)
		return EV_OK;
	for (size_t c = 0; c < x->ncols; c++) {
		lxw_error e = LXW_NO_ERROR;
		if (x->kind[c] == EV_XLSX_STATUS) {
			lxw_conditional_format better = { .type = LXW_CONDITIONAL_TYPE_TEXT,
				.criteria = LXW_CONDITIONAL_CRITERIA_TEXT_BEGINS_WITH,
				.value_string = (char *)"Better", .format = x->f_better };
			lxw_conditional_format worse = { .type = LXW_CONDITIONAL_TYPE_TEXT,
				.criteria = LXW_CONDITIONAL_CRITERIA_TEXT_BEGINS_WITH,
				.value_string = (char *)"Worse", .format = x->f_worse };
			e = lxw.worksheet_conditional_format_range(x->ws, 1, (lxw_col_t)c, x->nrows, (lxw_col_t)c, &better);
			if (e == LXW_NO_ERROR)
				e = lxw.worksheet_conditional_format_range(x->ws, 1, (lxw_col_t)c, x->nrows, (lxw_col_t)c, &worse);
		} else if (x->kind[c] == EV_XLSX_IMPROVEMENT) {
			/* aorta's scale: red at the minimum, white at 0, green at the maximum. */
			lxw_conditional_format scale = { .type = LXW_CONDITIONAL_3_COLOR_SCALE,
				.min_color = 0xF8696B, .mid_rule_type = LXW_CONDITIONAL_RULE_TYPE_NUMBER,
				.mid_value = 0, .mid_color = 0xFFFFFF, .max_color = 0x63BE7B };
			e = lxw.worksheet_conditional_format_range(x->ws, 1, (lxw_col_t)c, x->nrows, (lxw_col_t)c, &scale);
		}
		if (e != LXW_NO_ERROR)
			return lxw_status(x, e, "conditional format");
	}
	return lxw_status(x, lxw.worksheet_autofilter(x->ws, 0, 0, x->nrows, (lxw_col_t)(x->ncols - 1)), "filter");
}

static lxw_format *kind_format(const ev_xlsx *x, enum ev_xlsx_kind k)
{
	switch (k) {
	case EV_XLSX_TIME: return x->f_time;
	case EV_XLSX_PCT:
	case EV_XLSX_IMPROVEMENT: return x->f_pct;
	case EV_XLSX_RATIO: return x->f_ratio;
	default: return NULL;
	}
}

int ev_xlsx_sheet(ev_xlsx *x, const char *name, const char *const *cols, size_t ncols)
{
	int st;
	lxw_error e;
	if (!x || !x->wb || ncols == 0 || ncols > EV_XLSX_MAX_COLS)
		return EV_ERR_ARG;
	if ((st = finish_sheet(x)) != EV_OK)
		return st;
	e = lxw.workbook_validate_sheet_name(x->wb, name);
	if (e != LXW_NO_ERROR) {
		snprintf(x->err, sizeof x->err, "sheet '%s': %s", name, lxw.lxw_strerror(e));
		return EV_ERR_ARG;
	}
	x->ws = lxw.workbook_add_worksheet(x->wb, name);
	if (!x->ws) {
		snprintf(x->err, sizeof x->err, "sheet '%s': could not be added", name);
		return EV_ERR_NOMEM;
	}
	if (ncols > x->kcap) {
		enum ev_xlsx_kind *k = realloc(x->kind, ncols * sizeof *k);
		if (!k)
			return EV_ERR_NOMEM;
		x->kind = k;
		x->kcap = ncols;
	}
	x->ncols = ncols;
	x->nrows = 0;
	/* Widths and formats first: constant_memory mode writes the column
	 * settings before the rows. */
	for (size_t c = 0; c < ncols; c++) {
		size_t w = strlen(cols[c]) + 3;
		x->kind[c] = ev_xlsx_col_kind(cols[c]);
		if (strstr(cols[c], "name") || strcasecmp(cols[c], "metric") == 0)
			w = w < 40 ? 40 : w;
		w = w < 8 ? 8 : w > 60 ? 60 : w;
		e = lxw.worksheet_set_column(x->ws, (lxw_col_t)c, (lxw_col_t)c, (double)w, kind_format(x, x->kind[c]));
		if (e != LXW_NO_ERROR)
			return lxw_status(x, e, "column");
	}
	lxw.worksheet_freeze_panes(x->ws, 1, 0);
	for (size_t c = 0; c < ncols; c++) {
		e = lxw.worksheet_write_string(x->ws, 0, (lxw_col_t)c, cols[c], x->f_header);
		if (e != LXW_NO_ERROR)
			return lxw_status(x, e, "header");
	}
	return EV_OK;
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

int ev_xlsx_row(ev_xlsx *x, const char *const *fields, size_t n)
{
	lxw_row_t row;
	if (!x || !x->ws || n != x->ncols)
		return EV_ERR_ARG;
	if (x->nrows + 1 >= EV_XLSX_MAX_ROWS) {
		snprintf(x->err, sizeof x->err, "more than %u rows in one sheet (the format's limit)", EV_XLSX_MAX_ROWS - 1);
		return EV_ERR_LIMIT;
	}
	row = ++x->nrows;
	for (size_t c = 0; c < n; c++) {
		double v;
		lxw_error e;
		if (!fields[c][0])
			continue;
		if (x->kind[c] != EV_XLSX_STATUS && !ev_xlsx_long_integer(fields[c]) && ev_xlsx_parse_number(fields[c], &v))
			e = lxw.worksheet_write_number(x->ws, row, (lxw_col_t)c, v, kind_format(x, x->kind[c]));
		else
			e = lxw.worksheet_write_string(x->ws, row, (lxw_col_t)c, fit_cell(x, fields[c]), NULL);
		if (e != LXW_NO_ERROR)
			return lxw_status(x, e, "cell");
	}
	return EV_OK;
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

static int close_workbook(ev_xlsx *x);

/* The finished workbook into the output, then the output closed (renamed
 * into place).  The private file is unlinked first: nothing of it is left
 * whatever happens next. */
static int copy_out(ev_xlsx *x)
{
	char buf[65536];
	ssize_t n;
	int st = EV_OK, fd = open(x->tmp, O_RDONLY);
	if (fd < 0) {
		snprintf(x->err, sizeof x->err, "%s: %s", x->tmp, strerror(errno));
		return EV_ERR_IO;
	}
	unlink(x->tmp);
	while ((n = read(fd, buf, sizeof buf)) > 0)
		if ((st = ev_output_write(x->out, buf, (size_t)n)) != EV_OK)
			break;
	if (n < 0 && st == EV_OK) {
		snprintf(x->err, sizeof x->err, "reading the workbook back: %s", strerror(errno));
		st = EV_ERR_IO;
	}
	close(fd);
	if (st == EV_OK) {
		st = ev_output_close(x->out);
		x->out = NULL;
	}
	if (st != EV_OK && !x->err[0])
		snprintf(x->err, sizeof x->err, "%s", ev_strerror(st));
	return st;
}

static void release(ev_xlsx *x)
{
	if (x->temp_slot >= 0)
		ev_temp_unregister(x->temp_slot);
	free(x->kind);
	free(x->cut);
	free(x->tmp);
	free(x);
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

static int close_workbook(ev_xlsx *x)
{
	int st;
	lxw_error e;
	if (!x)
		return EV_ERR_ARG;
	st = finish_sheet(x);
	if (st != EV_OK || !x->ws) {
		if (!x->ws)
			snprintf(x->err, sizeof x->err, "no sheet");
		return st != EV_OK ? st : EV_ERR_ARG;
	}
	e = lxw.workbook_close(x->wb);
	x->wb = NULL;
	if (e != LXW_NO_ERROR)
		return lxw_status(x, e, "writing the workbook");
	return copy_out(x);
}

void ev_xlsx_abort(ev_xlsx *x)
{
	if (!x)
		return;
	if (x->wb) {
		/* Freed by closing; the file it writes is removed below. */
		(void)lxw.workbook_close(x->wb);
		x->wb = NULL;
	}
	if (x->tmp)
		unlink(x->tmp);
	ev_output_abort(x->out);
	x->out = NULL;
	release(x);
}
