/* SPDX-License-Identifier: MIT */
/*
 * db.c - opening an export defensively (header and size checked first,
 * gzip copied to a temporary file, every SQLite feature a crafted file
 * could abuse turned off), schema look-ups, queries and typed columns.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "internal.h"

#ifndef EV_NSYS_CACHE_KIB
#define EV_NSYS_CACHE_KIB "2000"
#endif

const char *const nsys_cur_table[NCUR] = {
	"CUPTI_ACTIVITY_KIND_KERNEL", "CUPTI_ACTIVITY_KIND_MEMCPY", "CUPTI_ACTIVITY_KIND_MEMSET",
	"NVTX_EVENTS", "CUPTI_ACTIVITY_KIND_RUNTIME",
};

/* Copy a gzip-compressed input to a temporary file SQLite can open. */
static int gunzip_to_temp(struct ev_nsys *s, struct file *f, ev_input *in, const unsigned char *head, long nhead)
{
	const char *dir = getenv("TMPDIR");
	size_t n = strlen(dir && *dir ? dir : "/tmp") + 32;
	f->dbpath = malloc(n);
	if (!f->dbpath)
		return nsys_nomem(s);
	snprintf(f->dbpath, n, "%s/nsys2ev.XXXXXX", dir && *dir ? dir : "/tmp");
	int fd = mkstemp(f->dbpath);
	if (fd < 0) {
		int e = errno;
		nsys_fail(s, EV_ERR_IO, "%s: cannot create a temporary file: %s", f->dbpath, strerror(e));
		free(f->dbpath);
		f->dbpath = NULL;
		return EV_ERR_IO;
	}
	f->temp_slot = ev_temp_register(f->dbpath);
	FILE *out = fdopen(fd, "wb");
	if (!out) {
		close(fd);
		return nsys_fail(s, EV_ERR_IO, "%s: %s", f->dbpath, strerror(errno));
	}
	int status = 0, wfail = nhead > 0 && fwrite(head, 1, (size_t)nhead, out) != (size_t)nhead;
	char *buf = malloc(1 << 16);
	long r = 0;
	while (!wfail && buf && (r = ev_input_read(in, buf, 1 << 16)) > 0)
		wfail = fwrite(buf, 1, (size_t)r, out) != (size_t)r;
	free(buf);
	wfail |= fclose(out) != 0;
	if (!buf)
		status = nsys_nomem(s);
	else if (wfail)
		status = nsys_fail(s, EV_ERR_IO, "%s: cannot write a temporary copy: %s", f->dbpath, strerror(errno));
	else if (r < 0)
		status = nsys_fail(s, (int)r, "%s: %s", f->path, r == EV_ERR_IO ? strerror(errno) : ev_strerror((int)r));
	return status;
}

void nsys_db_close(struct file *f)
{
	for (int k = 0; k < NCUR; k++) {
		sqlite3_finalize(f->cur[k]);
		f->cur[k] = NULL;
	}
	sqlite3_finalize(f->str_stmt);
	f->str_stmt = NULL;
	if (f->db)
		sqlite3_close(f->db);
	f->db = NULL;
	if (f->dbpath && f->dbpath != f->path) {
		unlink(f->dbpath);
		if (f->temp_slot >= 0)
			ev_temp_unregister(f->temp_slot);
		free(f->dbpath);
	}
	f->dbpath = NULL;
	free(f->schemas);
	f->schemas = NULL;
}

/* Read-only use with everything a crafted file could abuse turned off,
 * then a quick structural check that turns a damaged file into one clear
 * error before any output. */
int nsys_db_configure(struct ev_nsys *s, struct file *f)
{
	sqlite3_db_config(f->db, SQLITE_DBCONFIG_DEFENSIVE, 1, (int *)NULL);
	sqlite3_db_config(f->db, SQLITE_DBCONFIG_TRUSTED_SCHEMA, 0, (int *)NULL);
	sqlite3_db_config(f->db, SQLITE_DBCONFIG_ENABLE_LOAD_EXTENSION, 0, (int *)NULL);
	sqlite3_db_config(f->db, SQLITE_DBCONFIG_ENABLE_TRIGGER, 0, (int *)NULL);
#ifdef SQLITE_DBCONFIG_ENABLE_VIEW
	sqlite3_db_config(f->db, SQLITE_DBCONFIG_ENABLE_VIEW, 0, (int *)NULL);
#endif
	sqlite3_limit(f->db, SQLITE_LIMIT_LENGTH, 256 << 20);
	/* Each ORDER BY cursor sorts in at most cache_size of memory, then
	 * spills to temporary files: a fixed budget per table and file keeps
	 * memory flat whatever the export's size. */
	sqlite3_exec(f->db, "PRAGMA cache_size = -" EV_NSYS_CACHE_KIB, NULL, NULL, NULL);
	sqlite3_stmt *st = NULL;
	int rc = sqlite3_prepare_v2(f->db, "SELECT count(*) FROM sqlite_master", -1, &st, NULL);
	if (rc == SQLITE_OK)
		rc = sqlite3_step(st);
	sqlite3_finalize(st);
	if (rc != SQLITE_ROW)
		return nsys_fail(s, EV_ERR_FORMAT, "%s: not a readable SQLite database: %s", f->path, sqlite3_errmsg(f->db));
	return 0;
}

/* Check the SQLite header and size, then open read-only. */
int nsys_db_open_path(struct ev_nsys *s, struct file *f)
{
	ev_input *in;
	unsigned char head[100];
	int rc = ev_input_open(&in, f->path);
	f->temp_slot = -1;
	if (rc)
		return nsys_fail(s, EV_ERR_IO, "%s: %s", f->path, strerror(errno));
	long got = 0, r;
	while (got < (long)sizeof head && (r = ev_input_read(in, head + got, sizeof head - (size_t)got)) > 0)
		got += r;
	if (got >= 0 && ev_input_is_gzip(in)) {
		int st = gunzip_to_temp(s, f, in, head, got);
		ev_input_close(in);
		if (st)
			return st;
	} else {
		ev_input_close(in);
		f->dbpath = f->path;
	}
	if (got == 0)
		return nsys_fail(s, EV_ERR_FORMAT, "%s: empty file, not an SQLite database", f->path);
	if (got < 100 || memcmp(head, "SQLite format 3", 16) != 0)
		return nsys_fail(s, EV_ERR_FORMAT, "%s: not an SQLite database (nsys export --type sqlite)", f->path);
	struct stat sb;
	if (stat(f->dbpath, &sb) != 0)
		return nsys_fail(s, EV_ERR_IO, "%s: %s", f->path, strerror(errno));
	uint32_t psize = (uint32_t)head[16] << 8 | head[17];
	if (psize == 1)
		psize = 65536;
	uint32_t pages = (uint32_t)head[28] << 24 | (uint32_t)head[29] << 16 | (uint32_t)head[30] << 8 | head[31];
	int count_valid = memcmp(head + 24, head + 92, 4) == 0 && pages > 0;
	if (count_valid && (uint64_t)sb.st_size < (uint64_t)psize * pages)
		return nsys_fail(s, EV_ERR_FORMAT, "%s: truncated SQLite database (%lld of %llu bytes)", f->path,
		                 (long long)sb.st_size, (unsigned long long)psize * pages);
	rc = sqlite3_open_v2(f->dbpath, &f->db, SQLITE_OPEN_READONLY | SQLITE_OPEN_NOMUTEX, NULL);
	if (rc != SQLITE_OK)
		return nsys_fail(s, EV_ERR_FORMAT, "%s: cannot open: %s", f->path,
		                 f->db ? sqlite3_errmsg(f->db) : sqlite3_errstr(rc));
	return nsys_db_configure(s, f);
}

int nsys_table_exists(struct file *f, const char *table)
{
	sqlite3_stmt *st;
	int yes = 0;
	if (sqlite3_prepare_v2(f->db, "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?", -1, &st, NULL) != SQLITE_OK)
		return 0;
	sqlite3_bind_text(st, 1, table, -1, SQLITE_STATIC);
	yes = sqlite3_step(st) == SQLITE_ROW;
	sqlite3_finalize(st);
	return yes;
}

int nsys_column_exists(struct file *f, const char *table, const char *col)
{
	sqlite3_stmt *st;
	int yes = 0;
	if (sqlite3_prepare_v2(f->db, "SELECT 1 FROM pragma_table_info(?) WHERE name = ?", -1, &st, NULL) != SQLITE_OK)
		return 0;
	sqlite3_bind_text(st, 1, table, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 2, col, -1, SQLITE_STATIC);
	yes = sqlite3_step(st) == SQLITE_ROW;
	sqlite3_finalize(st);
	return yes;
}

/* "col" if the column exists, else alt or "NULL", appended to a SELECT list. */
void nsys_add_col(char *sql, size_t cap, struct file *f, const char *table, const char *col, const char *alt)
{
	size_t n = strlen(sql);
	snprintf(sql + n, cap - n, "%s%s", n && sql[n - 1] != ' ' ? ", " : "",
	         nsys_column_exists(f, table, col) ? col : alt ? alt : "NULL");
}

int nsys_sql_error(struct ev_nsys *s, struct file *f, const char *what)
{
	return nsys_fail(s, EV_ERR_FORMAT, "%s: %s: %s", f->path, what, sqlite3_errmsg(f->db));
}

/* Run a query and call fn for each row; SQLite errors are data errors. */
int nsys_query_rows(struct ev_nsys *s, struct file *f, const char *sql, const char *what,
                    int (*fn)(struct ev_nsys *, struct file *, sqlite3_stmt *, void *), void *ctx)
{
	sqlite3_stmt *st;
	if (sqlite3_prepare_v2(f->db, sql, -1, &st, NULL) != SQLITE_OK)
		return nsys_sql_error(s, f, what);
	int rc, status = 0;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW)
		if ((status = fn(s, f, st, ctx)) != 0)
			break;
	if (!status && rc != SQLITE_DONE)
		status = nsys_sql_error(s, f, what);
	sqlite3_finalize(st);
	return status;
}

const char *nsys_col_text(sqlite3_stmt *st, int i)
{
	const unsigned char *t = sqlite3_column_text(st, i);
	return t ? (const char *)t : NULL;
}

/* An integer column: NULL reads 0 (optional columns), a whole real number
 * its value; text, blobs and fractions are counted (kind k) and read 0.
 * Returns 0 when the value is usable, 1 when it was coerced. */
int nsys_col_int(struct ev_nsys *s, struct file *f, sqlite3_stmt *st, int i, enum nsys_warn_kind k, const char *table,
                 uint64_t row, int64_t *v)
{
	switch (sqlite3_column_type(st, i)) {
	case SQLITE_INTEGER:
		*v = sqlite3_column_int64(st, i);
		return 0;
	case SQLITE_NULL:
		*v = 0;
		return 0;
	case SQLITE_FLOAT: {
		double d = sqlite3_column_double(st, i);
		if (d >= -9.2e18 && d <= 9.2e18 && d == (double)(int64_t)d) {
			*v = (int64_t)d;
			return 0;
		}
		break;
	}
	default:
		break;
	}
	*v = 0;
	nsys_note(s, f, k, table, row);
	return 1;
}

/* ev string id of StringIds(id) in file f, cached.  An id the table does
 * not hold reads as the empty name and is counted. */
int nsys_str_of(struct ev_nsys *s, struct file *f, int fi, int64_t sid, uint64_t *out, uint64_t row, const char *table)
{
	uint64_t key = nsys_key3((uint64_t)fi, (uint64_t)sid, 0x737472);
	uint64_t *v = ev_map_get(&s->strs, key);
	if (v) {
		*out = *v;
		return 0;
	}
	if (!f->str_stmt &&
	    sqlite3_prepare_v2(f->db, "SELECT value FROM StringIds WHERE id = ?", -1, &f->str_stmt, NULL) != SQLITE_OK)
		return nsys_sql_error(s, f, "StringIds");
	sqlite3_reset(f->str_stmt);
	sqlite3_bind_int64(f->str_stmt, 1, sid);
	int rc = sqlite3_step(f->str_stmt);
	const char *t = "";
	size_t n = 0;
	if (rc == SQLITE_ROW) {
		t = nsys_col_text(f->str_stmt, 0);
		n = t ? (size_t)sqlite3_column_bytes(f->str_stmt, 0) : 0;
		if (!t)
			t = "";
	} else if (rc != SQLITE_DONE) {
		return nsys_sql_error(s, f, "StringIds");
	} else {
		nsys_note(s, f, W_NO_STRING, table, row);
	}
	if (nsys_intern(s, t, n, out) != EV_OK || ev_map_put(&s->strs, key, *out))
		return nsys_nomem(s);
	return 0;
}

/* Blob bytes of a column: a BLOB, or hex text as some front ends write it. */
const unsigned char *nsys_col_blob(struct ev_nsys *s, sqlite3_stmt *st, int i, size_t *n)
{
	int type = sqlite3_column_type(st, i);
	if (type == SQLITE_BLOB) {
		*n = (size_t)sqlite3_column_bytes(st, i);
		return sqlite3_column_blob(st, i);
	}
	if (type != SQLITE_TEXT)
		return NULL;
	const char *t = nsys_col_text(st, i);
	size_t len = (size_t)sqlite3_column_bytes(st, i);
	if (!t || len < 64 || len % 2)
		return NULL;
	if (len / 2 > s->blobcap) {
		unsigned char *nb = realloc(s->blob, len / 2);
		if (!nb)
			return NULL;
		s->blob = nb;
		s->blobcap = len / 2;
	}
	for (size_t k = 0; k < len; k += 2) {
		int hi = t[k], lo = t[k + 1];
		hi = hi >= '0' && hi <= '9' ? hi - '0' : hi >= 'a' && hi <= 'f' ? hi - 'a' + 10 : hi >= 'A' && hi <= 'F' ? hi - 'A' + 10 : -1;
		lo = lo >= '0' && lo <= '9' ? lo - '0' : lo >= 'a' && lo <= 'f' ? lo - 'a' + 10 : lo >= 'A' && lo <= 'F' ? lo - 'A' + 10 : -1;
		if (hi < 0 || lo < 0)
			return NULL;
		s->blob[k / 2] = (unsigned char)(hi << 4 | lo);
	}
	*n = len / 2;
	return s->blob;
}
