/* SPDX-License-Identifier: MIT */
/*
 * ev-xlsx - TSV or CSV tables into one Excel workbook, a sheet per table.
 *
 * A thin front end over lib/report/xlsx.c: reads each table record by
 * record (header first) and streams its rows into the sheet, so memory
 * does not grow with the tables.
 */
#include "ev.h"
#include "ev/xlsx.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <time.h>

static void usage(FILE *f)
{
	fputs(
"Usage: ev-xlsx [options] [-o OUT.xlsx] [SHEET=]TABLE.tsv...\n"
"Write TSV or CSV tables (first line = header, as ev-stats, flex-stats and\n"
"the pipelines write them) into one Excel workbook, a sheet per table, in\n"
"the given order: bold frozen header with filters, number formats by\n"
"column name (times 0.000, percents 0.00, ratios 0.0000), a column named\n"
"'status' coloured Better green / Worse red, columns named improvement*\n"
"or percent_change* on a red-white-green scale centred at 0.  Cells that\n"
"are decimal numbers (blanks around them are padding) become numbers\n"
"(full precision), the rest text.  Rows are streamed: memory does not grow\n"
"with the number of rows.\n"
"\n"
"A TABLE named *.csv is CSV (RFC 4180: fields in double quotes may hold\n"
"commas, quotes doubled, line breaks), unless its header has TABs and no\n"
"comma: then it is TSV padded with blanks, as acelyzer's _summary.csv,\n"
"_active.csv and _ts_analysis.csv (said on stderr; the blanks around every\n"
"cell are dropped); *.tsv is TSV; any other (and '-') is CSV when its\n"
"header has commas and no TAB (said on stderr), else TSV.\n"
"\n"
"SHEET is the sheet name [the file's base name without .tsv or .csv];\n"
"Excel allows 31 characters and none of []:*?/\\, so longer or odd names\n"
"are cut or changed (with a warning).  TABLE may be '-' (standard input,\n"
"once).\n"
"The workbook's creation time is $SOURCE_DATE_EPOCH, else the newest\n"
"table's modification time: the same tables give the same bytes.\n"
"\n"
"Options:\n"
"  -o, --output=FILE      the workbook, written under a temporary name and\n"
"                         renamed; never onto an input [stdout, not a\n"
"                         terminal]\n"
"  -f, --force            write the workbook to a terminal\n"
"  -q, --quiet            no warnings\n"
EV_CLI_HELP_HV
"\n"
EV_CLI_HELP_EXIT("a row with the wrong number of fields, more rows\n"
"     than a sheet holds, a write error")
"\n"
"Example:\n"
"  ev-stats kernels -o kernels.tsv run.ev && ev-xlsx -o report.xlsx kernels.tsv\n",
	      f);
}

/* Split line (no newline) on TABs in place; returns the field count or
 * (size_t)-1 when more than max. */
static size_t split_tabs(char *line, const char **fields, size_t max)
{
	size_t n = 0;
	char *p = line;
	for (;;) {
		if (n == max)
			return (size_t)-1;
		fields[n++] = p;
		char *t = strchr(p, '\t');
		if (!t)
			break;
		*t = '\0';
		p = t + 1;
	}
	return n;
}

/* Split one CSV record (RFC 4180; no final line break) in place: the
 * unquoted text of each field is written over the record.  Returns the
 * field count, (size_t)-1 when more than max, (size_t)-2 with *why set
 * when the quoting is malformed. */
static size_t split_csv(char *rec, const char **fields, size_t max, const char **why)
{
	size_t n = 0;
	char *r = rec, *w = rec;
	for (;;) {
		if (n == max)
			return (size_t)-1;
		fields[n++] = w;
		if (*r == '"') {
			for (r++;; r++) {
				if (*r == '\0') {
					*why = "a quoted field is not closed";
					return (size_t)-2;
				}
				if (*r == '"' && r[1] == '"')
					*w++ = *r++;
				else if (*r == '"')
					break;
				else
					*w++ = *r;
			}
			r++;
			if (*r != ',' && *r != '\0') {
				*why = "text after a closing quote (a quote inside a field is doubled: \"\")";
				return (size_t)-2;
			}
		} else {
			while (*r != ',' && *r != '\0') {
				if (*r == '"') {
					*why = "a quote inside an unquoted field (quote the field, doubling the quote)";
					return (size_t)-2;
				}
				*w++ = *r++;
			}
		}
		if (*r == '\0')
			break;
		*w++ = '\0';
		r++;
	}
	*w = '\0';
	return n;
}

/* An odd number of quotes: the record goes on past this line break. */
static int open_quote(const char *s, size_t len)
{
	size_t q = 0;
	for (size_t i = 0; i < len; i++)
		q += s[i] == '"';
	return (int)(q & 1);
}

static void chomp(char *line, ssize_t *len)
{
	while (*len > 0 && (line[*len - 1] == '\n' || line[*len - 1] == '\r'))
		line[--*len] = '\0';
}

enum fmt { FMT_GUESS, FMT_TSV, FMT_CSV };

/* The format a file name says: .csv, .tsv (any case), else a guess. */
static enum fmt fmt_of_name(const char *file)
{
	size_t l = strlen(file);
	if (l > 4 && !strcasecmp(file + l - 4, ".csv"))
		return FMT_CSV;
	if (l > 4 && !strcasecmp(file + l - 4, ".tsv"))
		return FMT_TSV;
	return FMT_GUESS;
}

/* CSV: the record of len bytes in *buf goes on with the lines after it
 * while a quote is open.  Returns its length, -1 when out of memory. */
static ssize_t join_quoted(FILE *f, ssize_t len, char **buf, size_t *cap, char **line, size_t *lcap,
                           unsigned long *lines)
{
	size_t have = (size_t)len;
	while (open_quote(*buf, have)) {
		ssize_t more = getline(line, lcap, f);
		if (more < 0)
			break;
		++*lines;
		if (have + (size_t)more + 1 > *cap) {
			char *b = realloc(*buf, have + (size_t)more + 1);
			if (!b)
				return -1;
			*buf = b;
			*cap = have + (size_t)more + 1;
		}
		memcpy(*buf + have, *line, (size_t)more + 1);
		have += (size_t)more;
	}
	return (ssize_t)have;
}

/* One record of f into *buf (CSV: lines joined while a quote is open).
 * Returns its length, -1 at the end of the input; *lines counts the
 * lines read. */
static ssize_t read_record(FILE *f, enum fmt fmt, char **buf, size_t *cap, char **line, size_t *lcap,
                           unsigned long *lines)
{
	ssize_t len = getline(buf, cap, f);
	if (len < 0)
		return -1;
	++*lines;
	return fmt == FMT_CSV ? join_quoted(f, len, buf, cap, line, lcap, lines) : len;
}

/* Blanks around a cell are padding when it is a number (" 12.500" is
 * 12.5), and around every cell of acelyzer's padded text (all): the cell
 * is cut to what is inside them, in place. */
static const char *unpad(char *cell, int all)
{
	char *s = cell, *e = cell + strlen(cell);
	double v;
	while (*s == ' ')
		s++;
	while (e > s && e[-1] == ' ')
		e--;
	if (s == cell && !*e)
		return cell;
	char keep = *e;
	*e = '\0';
	if (all || ev_xlsx_parse_number(s, &v))
		return s;
	*e = keep;
	return cell;
}

/* The format of a table from its header line: a .csv whose header has TABs
 * and no comma is TSV (acelyzer's _summary/_active/_ts_analysis.csv, TAB-
 * separated padded text; *padded set), said; a guess says CSV when there
 * are commas and no TAB, said. */
static enum fmt fmt_of_header(struct ev_cli *cli, const char *disp, enum fmt fmt, const char *h, int *padded)
{
	int tab = strchr(h, '\t') != NULL, comma = strchr(h, ',') != NULL;
	if (fmt == FMT_CSV && tab && !comma) {
		*padded = 1;
		ev_cli_warn(cli, "%s: read as TSV (its header has TABs and no comma, as acelyzer's padded text)", disp);
		return FMT_TSV;
	}
	if (fmt != FMT_GUESS)
		return fmt;
	if (comma && !tab) {
		ev_cli_warn(cli, "%s: read as CSV (its header has commas and no TAB; name it .csv or .tsv to say)", disp);
		return FMT_CSV;
	}
	return FMT_TSV;
}

/* One table into one sheet. */
static int add_table(struct ev_cli *cli, ev_xlsx *x, const char *sheet, const char *file)
{
	FILE *f = strcmp(file, "-") == 0 ? stdin : fopen(file, "r");
	const char *disp = ev_cli_input_name(file);
	char *rec = NULL, *line = NULL;
	size_t cap = 0, lcap = 0, ncols = 0, n;
	ssize_t len;
	unsigned long lineno = 0, first, records = 0;
	const char **fields = NULL;
	const char *why = NULL;
	enum fmt fmt = strcmp(file, "-") == 0 ? FMT_GUESS : fmt_of_name(file);
	int st = 0, padded = 0;
	if (!f)
		return ev_cli_error(cli, "%s: %s", disp, strerror(errno));
	fields = malloc(EV_XLSX_MAX_COLS * sizeof *fields);
	if (!fields) {
		st = ev_cli_error(cli, "out of memory");
		goto done;
	}
	for (;;) {
		first = lineno + 1;
		errno = 0;
		/* The header's first line decides the format; a CSV header goes
		 * on while a quote is open. */
		if ((len = read_record(f, records ? fmt : FMT_TSV, &rec, &cap, &line, &lcap, &lineno)) < 0)
			break;
		if (!records++) {
			enum fmt given = fmt;
			fmt = fmt_of_header(cli, disp, fmt, rec, &padded);
			if (fmt == FMT_CSV && given == FMT_GUESS && open_quote(rec, (size_t)len)) {
				st = ev_cli_error(cli, "%s: line 1: a line break inside the header", disp);
				goto done;
			}
			if (fmt == FMT_CSV && (len = join_quoted(f, len, &rec, &cap, &line, &lcap, &lineno)) < 0)
				break;
		}
		chomp(rec, &len);
		n = fmt == FMT_CSV ? split_csv(rec, fields, EV_XLSX_MAX_COLS, &why) : split_tabs(rec, fields, EV_XLSX_MAX_COLS);
		if (n == (size_t)-2) {
			st = ev_cli_error(cli, "%s: line %lu: not CSV: %s", disp, first, why);
			goto done;
		}
		if (n == (size_t)-1) {
			st = ev_cli_error(cli, "%s: line %lu: more than %u columns", disp, first, EV_XLSX_MAX_COLS);
			goto done;
		}
		for (size_t i = 0; i < n; i++)
			fields[i] = unpad((char *)fields[i], padded);
		if (records == 1) {
			ncols = n;
			if (fmt == FMT_TSV && n == 1 && strchr(fields[0], ','))
				ev_cli_warn(cli, "%s: one column, its header has commas: if the table is CSV, name it .csv",
				            disp);
			if (ev_xlsx_sheet(x, sheet, fields, n) != EV_OK) {
				st = ev_cli_error(cli, "%s: %s", disp, ev_xlsx_error(x));
				goto done;
			}
			continue;
		}
		if (n != ncols) {
			st = ev_cli_error(cli, "%s: line %lu: %zu fields, the header has %zu", disp, first, n, ncols);
			goto done;
		}
		int r = ev_xlsx_row(x, fields, n);
		if (r != EV_OK) {
			st = ev_cli_error(cli, "%s: line %lu: %s", disp, first, ev_xlsx_error(x));
			goto done;
		}
	}
	if (ferror(f) || errno == ENOMEM) {
		st = ev_cli_error(cli, "%s: %s", disp, strerror(errno ? errno : EIO));
		goto done;
	}
	if (records == 0)
		st = ev_cli_error(cli, "%s: empty: no header line", disp);
done:
	free(fields);
	free(rec);
	free(line);
	if (f != stdin)
		fclose(f);
	return st;
}

/* The sheet name of "SHEET=FILE" or FILE; *file points at the file. */
static void sheet_of(const char *arg, const char **file, char *name, size_t namesz, char *given, size_t givensz)
{
	const char *eq = strchr(arg, '=');
	struct stat sb;
	if (eq && eq != arg && stat(arg, &sb) != 0) {
		snprintf(given, givensz, "%.*s", (int)(eq - arg), arg);
		*file = eq + 1;
	} else {
		const char *slash = strrchr(arg, '/');
		snprintf(given, givensz, "%s", slash ? slash + 1 : arg);
		size_t l = strlen(given);
		if (l > 4 && (!strcasecmp(given + l - 4, ".tsv") || !strcasecmp(given + l - 4, ".csv")))
			given[l - 4] = '\0';
		*file = arg;
	}
	ev_xlsx_sheet_name(given, name, namesz);
}

/* The workbook from tables[0..n). */
static int run(struct ev_cli *cli, char **tables, int n)
{
	int st = 0, stdin_used = 0;
	if (n == 0)
		return ev_cli_usage_error(cli, "no table given");
	/* The inputs are noted first, so that the output refuses any of them
	 * (same file, symlinks followed); the creation time is the newest. */
	long long created = 0;
	for (int i = 0; i < n; i++) {
		const char *file;
		char name[4 * EV_XLSX_SHEET_NAME_MAX + 1], given[4096];
		struct stat sb;
		sheet_of(tables[i], &file, name, sizeof name, given, sizeof given);
		if (strcmp(file, "-") == 0) {
			if (stdin_used++)
				return ev_cli_usage_error(cli, "standard input ('-') given twice");
			created = -1;
		} else if (stat(file, &sb) == 0) {
			if (ev_files_note_input_path(file) != EV_OK)
				return ev_cli_error(cli, "out of memory");
			if (created >= 0 && (long long)sb.st_mtime > created)
				created = (long long)sb.st_mtime;
		}
	}
	created = ev_cli_created(created);
	if (ev_cli_check_binary_out(cli))
		return 1;
	ev_xlsx *x;
	int r = ev_xlsx_open(&x, cli->output, created);
	if (r != EV_OK) {
		st = ev_cli_error(cli, "%s: %s", strcmp(cli->output, "-") ? cli->output : "standard output", ev_xlsx_error(x));
		ev_xlsx_abort(x);
		return st;
	}
	for (int i = 0; i < n && st == 0; i++) {
		const char *file;
		char name[4 * EV_XLSX_SHEET_NAME_MAX + 1], given[4096];
		sheet_of(tables[i], &file, name, sizeof name, given, sizeof given);
		if (strcmp(name, given) != 0)
			ev_cli_warn(cli, "%s: sheet name '%s' is '%s' in the workbook (Excel's limits)", file, given, name);
		st = add_table(cli, x, name, file);
	}
	if (st != 0) {
		ev_xlsx_abort(x);
		return st;
	}
	unsigned long cut = ev_xlsx_truncated(x);
	char err[256];
	r = ev_xlsx_close(x, err, sizeof err);
	if (r == EV_ERR_PIPE)
		return 1;
	if (r != EV_OK)
		return ev_cli_error(cli, "%s: %s", strcmp(cli->output, "-") ? cli->output : "standard output",
		                    err[0] ? err : ev_strerror(r));
	if (cut)
		ev_cli_warn(cli, "%s: %lu cell(s) longer than %u characters were cut (Excel's cell limit)", cli->output, cut,
		            EV_XLSX_MAX_CELL);
	return 0;
}

static const struct option longopts[] = {
	EV_CLI_COMMON_LONG,
	{ NULL, 0, NULL, 0 },
};

static const struct ev_cli_opts options = { "", longopts, NULL, usage };

int main(int argc, char **argv)
{
	struct ev_cli cli;
	int first;
	ev_cli_init(&cli, "ev-xlsx");
	int status = ev_cli_getopt(&cli, argc, argv, &options, NULL, &first);
	if (status == EV_CLI_RUN)
		status = run(&cli, argv + first, argc - first);
	return ev_cli_finish(&cli, status);
}
