/* SPDX-License-Identifier: MIT */
/* Unit tests for lib/report/xlsx.c: column kinds, numbers, sheet names, and
 * a workbook written and checked as a zip file. */
#include "ev.h"
#include "ev/xlsx.h"
#include "unit.h"

#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static void test_kinds(void)
{
	CHECK(ev_xlsx_col_kind("status") == EV_XLSX_STATUS);
	CHECK(ev_xlsx_col_kind("improvement_pct") == EV_XLSX_IMPROVEMENT);
	CHECK(ev_xlsx_col_kind("percent_change_latency") == EV_XLSX_IMPROVEMENT);
	CHECK(ev_xlsx_col_kind("pct") == EV_XLSX_PCT);
	CHECK(ev_xlsx_col_kind("base_percent") == EV_XLSX_PCT);
	CHECK(ev_xlsx_col_kind("Percentage (%)") == EV_XLSX_PCT);
	CHECK(ev_xlsx_col_kind("time_diff_us") == EV_XLSX_TIME);
	CHECK(ev_xlsx_col_kind("time ms") == EV_XLSX_TIME);
	CHECK(ev_xlsx_col_kind("ratio") == EV_XLSX_RATIO);
	CHECK(ev_xlsx_col_kind("cv") == EV_XLSX_RATIO);
	CHECK(ev_xlsx_col_kind("kernel_name") == EV_XLSX_GENERAL);
	CHECK(ev_xlsx_col_kind("bytes") == EV_XLSX_GENERAL);
}

static void test_numbers(void)
{
	double v;
	CHECK(ev_xlsx_parse_number("12", &v) && v == 12);
	CHECK(ev_xlsx_parse_number("-0.5", &v) && v == -0.5);
	CHECK(ev_xlsx_parse_number("1e-3", &v) && v == 1e-3);
	CHECK(ev_xlsx_parse_number("27.298999999999978", &v) && v == 27.298999999999978);
	CHECK(!ev_xlsx_parse_number("", &v));
	CHECK(!ev_xlsx_parse_number("nan", &v));
	CHECK(!ev_xlsx_parse_number("inf", &v));
	CHECK(!ev_xlsx_parse_number("0x10", &v));
	CHECK(!ev_xlsx_parse_number("12 us", &v));
	CHECK(!ev_xlsx_parse_number("1.2.3", &v));
	CHECK(!ev_xlsx_parse_number("-", &v));
	CHECK(!ev_xlsx_parse_number("1e999", &v));
	/* Integers beyond 15 significant digits go to text cells, exact. */
	CHECK(ev_xlsx_long_integer("1765217845926542330"));
	CHECK(ev_xlsx_long_integer("-1234567890123456"));
	CHECK(!ev_xlsx_long_integer("123456789012345"));
	CHECK(!ev_xlsx_long_integer("0000000000000000001"));
	CHECK(!ev_xlsx_long_integer("1765217845926.542330"));
	CHECK(!ev_xlsx_long_integer("1e18"));
	CHECK(!ev_xlsx_long_integer(""));
}

/* The shortest "%G" text that reads back as the value: a cell's number
 * text, for every decimal shape: signs, leading and trailing zeros, bare
 * points, small and large values, more digits than a double holds,
 * exponents. */
static void shortest(double v, char *b, size_t bsz)
{
	for (int prec = 15; prec <= 17; prec++) {
		snprintf(b, bsz, "%.*G", prec, v);
		if (strtod(b, NULL) == v)
			return;
	}
}

static void test_number_text(void)
{
	static const char *const fixed[] = { "2.000", "-0.0", "0", "-0", "+5", ".5", "5.", "007", "0.0001",
		"0.00001", "0.000123456789012345", "123456789012345", "999999999999999.9",
		"27.298999999999978", "1e-3", "1E+20", "-1.5e300", "4194304", "0.10", "100", "-.000", "00.0100" };
	char b[40], want[40];
	double v;
	for (size_t i = 0; i < sizeof fixed / sizeof *fixed; i++) {
		CHECK(ev_xlsx_parse_number(fixed[i], &v));
		shortest(v, want, sizeof want);
		CHECK(ev_xlsx_number_text(fixed[i], v, b, sizeof b) == strlen(want));
		if (strcmp(b, want) != 0)
			fprintf(stderr, "number text of %s: %s, want %s\n", fixed[i], b, want);
		CHECK(strcmp(b, want) == 0);
	}
	unsigned long long seed = 42;
	int bad = 0;
	for (int n = 0; n < 200000; n++) {
		char s[40];
		size_t o = 0;
		seed = seed * 6364136223846793005ULL + 1442695040888963407ULL;
		unsigned long long r = seed >> 11;
		if (r % 3 == 0)
			s[o++] = '-';
		int nint = (int)(r / 3 % 19), nfrac = (int)(r / 57 % 19);
		for (int k = 0; k < nint; k++) {
			seed = seed * 6364136223846793005ULL + 1442695040888963407ULL;
			s[o++] = (char)('0' + (seed >> 33) % ((r >> 20) % 2 ? 10 : 2));
		}
		if (nfrac || !nint)
			s[o++] = '.';
		for (int k = 0; k < nfrac; k++) {
			seed = seed * 6364136223846793005ULL + 1442695040888963407ULL;
			s[o++] = (char)('0' + (seed >> 33) % ((r >> 21) % 2 ? 10 : 2));
		}
		if (o == 0 || (o == 1 && (s[0] == '.' || s[0] == '-')))
			s[o++] = '0';
		s[o] = '\0';
		if (!ev_xlsx_parse_number(s, &v))
			continue;
		shortest(v, want, sizeof want);
		ev_xlsx_number_text(s, v, b, sizeof b);
		if (strcmp(b, want) != 0 && bad++ < 5)
			fprintf(stderr, "number text of %s: %s, want %s\n", s, b, want);
	}
	CHECK(bad == 0);
}

static void test_sheet_names(void)
{
	char out[4 * EV_XLSX_SHEET_NAME_MAX + 1];
	ev_xlsx_sheet_name("gpu_timeline", out, sizeof out);
	CHECK(strcmp(out, "gpu_timeline") == 0);
	ev_xlsx_sheet_name("a[b]:c*d?e/f\\g", out, sizeof out);
	CHECK(strcmp(out, "a_b__c_d_e_f_g") == 0);
	ev_xlsx_sheet_name("top5_gemm_kernels_time_variance_with_timestamps", out, sizeof out);
	CHECK(strlen(out) == 31);
	ev_xlsx_sheet_name("'quoted'", out, sizeof out);
	CHECK(strcmp(out, "quoted") == 0);
	ev_xlsx_sheet_name("", out, sizeof out);
	CHECK(strcmp(out, "Sheet") == 0);
	/* 31 characters of two bytes each stay whole characters. */
	ev_xlsx_sheet_name("\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9"
			   "\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9"
			   "\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9"
			   "\xc3\xa9\xc3\xa9\xc3\xa9",
			   out, sizeof out);
	CHECK(strlen(out) == 62);
}

static void test_workbook(void)
{
	char dir[] = "/tmp/ev-xlsx-unit.XXXXXX", path[64], err[256];
	const char *cols[] = { "name", "time_ms", "status" };
	const char *row1[] = { "gemm", "1.5", "Better" };
	const char *row2[] = { "comm", "", "Worse" };
	const char *bad[] = { "x", "1" };
	ev_xlsx *x;
	struct stat sb;
	unsigned char magic[4] = { 0 };
	FILE *f;
	CHECK(mkdtemp(dir) != NULL);
	snprintf(path, sizeof path, "%s/t.xlsx", dir);
	CHECK(ev_xlsx_open(&x, path, 1700000000) == EV_OK);
	CHECK(ev_xlsx_row(x, row1, 3) == EV_ERR_ARG); /* no sheet yet */
	CHECK(ev_xlsx_sheet(x, "one", cols, 3) == EV_OK);
	CHECK(ev_xlsx_row(x, row1, 3) == EV_OK);
	CHECK(ev_xlsx_row(x, row2, 3) == EV_OK);
	CHECK(ev_xlsx_row(x, bad, 2) == EV_ERR_ARG);
	CHECK(ev_xlsx_sheet(x, "one", cols, 3) == EV_ERR_ARG); /* duplicate name */
	CHECK(strstr(ev_xlsx_error(x), "one") != NULL);
	CHECK(ev_xlsx_sheet(x, "two", cols, 3) == EV_OK);
	CHECK(stat(path, &sb) != 0); /* nothing at the final name before close */
	CHECK(ev_xlsx_close(x, err, sizeof err) == EV_OK);
	f = fopen(path, "rb");
	CHECK(f != NULL);
	if (f) {
		CHECK(fread(magic, 1, 4, f) == 4);
		fclose(f);
	}
	CHECK(memcmp(magic, "PK\x03\x04", 4) == 0); /* a zip container */
	unlink(path);
	/* An aborted workbook leaves nothing. */
	CHECK(ev_xlsx_open(&x, path, 0) == EV_OK);
	CHECK(ev_xlsx_sheet(x, "s", cols, 3) == EV_OK);
	ev_xlsx_abort(x);
	CHECK(rmdir(dir) == 0); /* empty: no temporary file left */
}

/* A sheet of n rows, long enough that its XML is deflated in several
 * steps (the buffers are 64 KiB). */
static int fill(ev_xlsx *x, const char *name, int n)
{
	const char *cols[] = { "name", "time_ms", "status" };
	char nm[32], t[32];
	const char *row[] = { nm, t, "Better" };
	int rc = ev_xlsx_sheet(x, name, cols, 3);
	for (int i = 0; !rc && i < n; i++) {
		snprintf(nm, sizeof nm, "kernel_%d_%s", i * 7919 % 1000, name);
		snprintf(t, sizeof t, "%d.%03d", i % 97, i % 1000);
		rc = ev_xlsx_row(x, row, 3);
	}
	return rc;
}

static long file_bytes(const char *path, unsigned char *buf, size_t cap)
{
	FILE *f = fopen(path, "rb");
	if (!f)
		return -1;
	size_t n = fread(buf, 1, cap, f);
	fclose(f);
	return n < cap ? (long)n : -1;
}

/* Sheets written apart and adopted make the very bytes of a workbook
 * written in one go. */
static void test_apart(void)
{
	char dir[] = "/tmp/ev-xlsx-unit.XXXXXX", one[64], two[64], err[256];
	static unsigned char a[1 << 20], b[1 << 20];
	ev_xlsx *x, *p, *q;
	CHECK(mkdtemp(dir) != NULL);
	snprintf(one, sizeof one, "%s/one.xlsx", dir);
	snprintf(two, sizeof two, "%s/two.xlsx", dir);
	CHECK(ev_xlsx_open(&x, one, 1700000000) == EV_OK);
	CHECK(fill(x, "first", 10) == EV_OK);
	CHECK(fill(x, "big", 6000) == EV_OK);
	CHECK(fill(x, "small", 3) == EV_OK);
	CHECK(fill(x, "last", 5) == EV_OK);
	CHECK(ev_xlsx_close(x, err, sizeof err) == EV_OK);

	CHECK(ev_xlsx_open(&x, two, 1700000000) == EV_OK);
	CHECK(ev_xlsx_open_apart(&p, 1) == EV_OK);
	CHECK(fill(p, "first", 10) == EV_OK);
	CHECK(ev_xlsx_open_apart(&q, 0) == EV_OK);
	CHECK(fill(q, "big", 6000) == EV_OK);
	CHECK(fill(q, "small", 3) == EV_OK);
	CHECK(ev_xlsx_finish_apart(q) == EV_OK);
	CHECK(ev_xlsx_adopt(x, p) == EV_OK); /* finished by adopting */
	CHECK(ev_xlsx_adopt(x, q) == EV_OK);
	CHECK(fill(x, "last", 5) == EV_OK); /* and a sheet of its own after them */
	CHECK(ev_xlsx_close(x, err, sizeof err) == EV_OK);
	long na = file_bytes(one, a, sizeof a), nb = file_bytes(two, b, sizeof b);
	CHECK(na > 0 && na == nb && memcmp(a, b, (size_t)na) == 0);

	/* A name the workbook has, or a first sheet out of place, is refused. */
	CHECK(ev_xlsx_open(&x, two, 1700000000) == EV_OK);
	CHECK(ev_xlsx_open_apart(&p, 0) == EV_OK);
	CHECK(fill(p, "a", 1) == EV_OK);
	CHECK(ev_xlsx_adopt(x, p) == EV_ERR_ARG); /* not written as the first */
	CHECK(strstr(ev_xlsx_error(x), "'a'") != NULL);
	ev_xlsx_abort(x);
	CHECK(ev_xlsx_open(&x, two, 1700000000) == EV_OK);
	CHECK(fill(x, "a", 1) == EV_OK);
	CHECK(ev_xlsx_open_apart(&p, 1) == EV_OK);
	CHECK(fill(p, "b", 1) == EV_OK);
	CHECK(ev_xlsx_adopt(x, p) == EV_ERR_ARG); /* written as the first */
	ev_xlsx_abort(x);
	CHECK(ev_xlsx_open(&x, two, 1700000000) == EV_OK);
	CHECK(fill(x, "a", 1) == EV_OK);
	CHECK(ev_xlsx_open_apart(&p, 0) == EV_OK);
	CHECK(fill(p, "A", 1) == EV_OK);
	CHECK(ev_xlsx_adopt(x, p) == EV_ERR_ARG);
	CHECK(strstr(ev_xlsx_error(x), "already in use") != NULL);
	ev_xlsx_abort(x);
	CHECK(ev_xlsx_finish_apart(NULL) == EV_ERR_ARG);
	unlink(one);
	unlink(two);
	CHECK(rmdir(dir) == 0);
}

int main(void)
{
	RUN(test_kinds);
	RUN(test_numbers);
	RUN(test_number_text);
	RUN(test_sheet_names);
	RUN(test_workbook);
	RUN(test_apart);
	return unit_report("test_xlsx");
}
