/* SPDX-License-Identifier: MIT */
/*
 * ev_reader.c - pull reader of ev streams: unescapes record lines, checks
 * segment structure (#ev ... #end), string definitions and versions, and
 * hands text lines to the metadata store.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "ev/stream.h"
#include "internal.h"

#define MAX_RECSIZE 65536

struct ev_reader {
	ev_input *in;
	ev_strtab *st;
	ev_meta *meta;
	int own_st, own_meta;
	int skip_text, raw_text, lazy;
	int in_segment, err;
	unsigned minor;
	unsigned reserved;             /* flag bits this segment's version leaves zero */
	size_t recsize;
	uint32_t segments;
	uint64_t seg_records, recno, lineno;
	uint32_t stamp;                /* this segment's: the strings it defined first */
	struct ev_map defined;         /* the others it defined (ev_strtab_define_in) */
	uint64_t cache[EV_ID_CACHE];            /* ids known defined (ev_id_cached) */
	unsigned char *recbuf;         /* unescaped record when escapes occur */
	const unsigned char *raw;      /* last record's bytes */
	const char *line;              /* last record's escaped line */
	size_t line_len;
	const char *text;
	size_t text_len;
	char *scratch;                 /* #str unescaping */
	size_t scratch_cap;
	char *header;                  /* current #ev line, NUL-separated fields */
	size_t header_len;
	char detail[512];
};

int ev_reader_from_input(ev_reader **out, ev_input *in, ev_strtab *st, ev_meta *meta)
{
	ev_reader *r = calloc(1, sizeof *r);
	*out = NULL;
	if (!r)
		return EV_ERR_NOMEM;
	r->in = in;
	r->st = st;
	r->meta = meta;
	if (!st) {
		r->st = ev_strtab_new();
		r->own_st = 1;
	}
	if (!meta) {
		r->meta = ev_meta_new();
		r->own_meta = 1;
	}
	r->recbuf = malloc(MAX_RECSIZE);
	ev_map_init(&r->defined);
	if (!r->st || !r->meta || !r->recbuf) {
		r->in = NULL; /* the caller still owns in on failure */
		ev_reader_close(r);
		return EV_ERR_NOMEM;
	}
	*out = r;
	return EV_OK;
}

int ev_reader_open(ev_reader **out, const char *path, ev_strtab *st, ev_meta *meta)
{
	ev_input *in;
	int rc = ev_input_open(&in, path);
	*out = NULL;
	if (rc)
		return rc;
	rc = ev_reader_from_input(out, in, st, meta);
	if (rc)
		ev_input_close(in);
	return rc;
}

static int fail(ev_reader *r, int status, const char *fmt, ...) EV_PRINTF(3, 4);
static int fail(ev_reader *r, int status, const char *fmt, ...)
{
	char msg[400];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	if (r->lineno)
		snprintf(r->detail, sizeof r->detail, "line %llu: %s", (unsigned long long)r->lineno, msg);
	else
		snprintf(r->detail, sizeof r->detail, "%s", msg);
	r->err = status;
	return status;
}

static int fail_rec(ev_reader *r, int status, const char *msg)
{
	snprintf(r->detail, sizeof r->detail, "record %llu (line %llu): %s",
	         (unsigned long long)r->recno + 1, (unsigned long long)r->lineno, msg);
	r->err = status;
	return status;
}

/* A new segment: none of its strings are defined yet.  Most are new to
 * the table and carry the segment's stamp there, so that the set of ids
 * kept here holds only strings another segment or reader defined first:
 * one set per reader of every distinct name would grow with names such as
 * ProfilerStep#N, one per iteration. */
static void reset_defined(ev_reader *r)
{
	r->stamp = ev_strtab_new_stamp(r->st);
	if (r->defined.cap) {
		memset(r->defined.keys, 0, r->defined.cap * sizeof *r->defined.keys);
		r->defined.len = 0;
	}
	memset(r->cache, 0, sizeof r->cache);
}

static int parse_header(ev_reader *r, const char *line, size_t len)
{
	char *buf = malloc(len + 1);
	if (!buf)
		return fail(r, EV_ERR_NOMEM, "out of memory");
	memcpy(buf, line, len);
	buf[len] = '\0';
	/* "#ev M.m SIZE k=v ..." */
	char *save = NULL, *kw = strtok_r(buf, " \t", &save);
	char *ver = strtok_r(NULL, " \t", &save), *size = strtok_r(NULL, " \t", &save);
	uint32_t major, minor, rs;
	char *dot = ver ? strchr(ver, '.') : NULL;
	int ok = kw && ver && size && dot;
	if (ok) {
		*dot = '\0';
		ok = !ev_parse_u32(ver, &major) && !ev_parse_u32(dot + 1, &minor) && !ev_parse_u32(size, &rs);
	}
	if (!ok) {
		free(buf);
		return fail(r, EV_ERR_FORMAT, "malformed #ev header");
	}
	if (major != EV_FORMAT_MAJOR) {
		free(buf);
		return fail(r, EV_ERR_VERSION, "format version %u.%u is not supported (this reader knows %d.x)",
		            major, minor, EV_FORMAT_MAJOR);
	}
	if (rs < EV_RECORD_SIZE || rs > MAX_RECSIZE || (minor <= EV_FORMAT_MINOR && rs != EV_RECORD_SIZE)) {
		free(buf);
		return fail(r, EV_ERR_FORMAT, "record size %u is invalid for version %u.%u", rs, major, minor);
	}
	r->minor = minor;
	/* A newer minor may define more flags: only this reader's own
	 * versions are checked, each against the bits it had. */
	r->reserved = minor > EV_FORMAT_MINOR ? 0u
	              : ~(unsigned)(minor == 0 ? EV_F_KNOWN_MASK_1_0 : EV_F_KNOWN_MASK) & 0xFFFFu;
	r->recsize = rs;
	/* Keep "k=v" fields for ev_reader_header, NUL-separated. */
	free(r->header);
	r->header = NULL;
	r->header_len = 0;
	char *rest = strtok_r(NULL, "", &save);
	if (rest) {
		size_t n = strlen(rest);
		r->header = malloc(n + 2);
		if (!r->header) {
			free(buf);
			return fail(r, EV_ERR_NOMEM, "out of memory");
		}
		size_t o = 0;
		for (size_t i = 0; i < n; i++)
			r->header[o++] = (rest[i] == ' ' || rest[i] == '\t') ? '\0' : rest[i];
		r->header[o++] = '\0';
		r->header_len = o;
	}
	free(buf);
	return EV_OK;
}

const char *ev_reader_header(const ev_reader *r, const char *key)
{
	size_t klen = strlen(key);
	for (size_t i = 0; i < r->header_len;) {
		const char *f = r->header + i;
		size_t n = strlen(f);
		if (n > klen && f[klen] == '=' && memcmp(f, key, klen) == 0)
			return f + klen + 1;
		i += n + 1;
	}
	return NULL;
}

static int parse_end(ev_reader *r, const char *line, size_t len)
{
	char num[32];
	uint64_t count;
	if (len < 6 || len - 5 >= sizeof num || line[4] != ' ')
		return fail(r, EV_ERR_FORMAT, "malformed #end line");
	memcpy(num, line + 5, len - 5);
	num[len - 5] = '\0';
	if (ev_parse_u64(num, &count))
		return fail(r, EV_ERR_FORMAT, "malformed #end line");
	if (count != r->seg_records)
		return fail(r, EV_ERR_TRUNCATED, "#end says %llu records but the segment has %llu",
		            (unsigned long long)count, (unsigned long long)r->seg_records);
	r->in_segment = 0;
	reset_defined(r);
	return EV_OK;
}

static int hexval(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	return -1;
}

static int parse_str(ev_reader *r, const char *line, size_t len)
{
	uint64_t id = 0;
	if (len < 5 + 16 + 1 || line[4] != ' ' || line[21] != ' ')
		return fail(r, EV_ERR_FORMAT, "malformed #str line");
	for (int i = 0; i < 16; i++) {
		int v = hexval(line[5 + i]);
		if (v < 0)
			return fail(r, EV_ERR_FORMAT, "malformed #str id");
		id = id << 4 | (uint64_t)v;
	}
	size_t tlen = len - 22;
	if (tlen + 1 > r->scratch_cap) {
		size_t cap = tlen + 1 > 4096 ? tlen + 1 : 4096;
		char *s = realloc(r->scratch, cap);
		if (!s)
			return fail(r, EV_ERR_NOMEM, "out of memory");
		r->scratch = s;
		r->scratch_cap = cap;
	}
	memcpy(r->scratch, line + 22, tlen);
	tlen = ev_text_unescape(r->scratch, tlen);
	if (tlen == (size_t)-1)
		return fail(r, EV_ERR_FORMAT, "bad escape in #str text");
	int fresh, rc = ev_strtab_define_in(r->st, id, r->scratch, tlen, r->stamp, &fresh);
	if (rc == EV_ERR_FORMAT)
		return fail(r, rc, "#str id %016llx is not the hash of its text", (unsigned long long)id);
	if (rc == EV_ERR_COLLISION)
		return fail(r, rc, "#str id %016llx already names another text", (unsigned long long)id);
	if (rc)
		return fail(r, rc, "%s", ev_strerror(rc));
	if (!(fresh && r->stamp) && ev_map_put(&r->defined, id, 1))
		return fail(r, EV_ERR_NOMEM, "out of memory");
	return EV_OK;
}

static inline int id_defined(ev_reader *r, uint64_t id)
{
	if (id == 0 || ev_id_cached(r->cache, id))
		return 1;
	if (!(r->stamp && ev_strtab_stamp(r->st, id) == r->stamp) && !ev_map_get(&r->defined, id))
		return 0;
	ev_id_cache_put(r->cache, id);
	return 1;
}

/* The end of reading a record whose bytes are at r->raw. */
static inline __attribute__((always_inline)) int take_record(ev_reader *r, struct ev_rec *rec)
{
	if (r->lazy) {
		/* Only what validation and re-emitting strings need. */
		rec->type = r->raw[0];
		rec->flags = ev_le16(r->raw + 6);
		rec->name = ev_le64(r->raw + 40);
		rec->sig = ev_le64(r->raw + 48);
	} else {
		ev_rec_decode(r->raw, rec);
	}
	if (rec->flags & r->reserved)
		return fail_rec(r, EV_ERR_FORMAT, "reserved flag bits are set");
	if (!id_defined(r, rec->name) || !id_defined(r, rec->sig))
		return fail_rec(r, EV_ERR_NOSTR, "names a string id with no #str before it in its segment");
	r->seg_records++;
	r->recno++;
	return EV_REC;
}

/* plain: the line is known to hold no backslash (ev_input_plain_line). */
static int read_record(ev_reader *r, const char *line, size_t len, int plain, struct ev_rec *rec)
{
	const unsigned char *p = (const unsigned char *)line;
	if (!r->in_segment)
		return fail(r, EV_ERR_FORMAT, "record outside a segment (no #ev header before it)");
	const unsigned char *bs = plain ? NULL : memchr(p, '\\', len);
	if (!bs && len == r->recsize) {
		r->raw = p; /* the common case: nothing to unescape */
	} else {
		/* Copy the runs between escapes; escapes are rare. */
		const unsigned char *s = p, *e = p + len;
		size_t o = 0;
		for (;;) {
			size_t run = (size_t)((bs ? bs : e) - s);
			if (o + run > r->recsize)
				return fail_rec(r, EV_ERR_FORMAT, "record longer than the header's record size");
			memcpy(r->recbuf + o, s, run);
			o += run;
			if (!bs)
				break;
			if (bs + 1 == e)
				return fail_rec(r, EV_ERR_FORMAT, "record ends in an unfinished escape");
			if (bs[1] != 'n' && bs[1] != '\\')
				return fail_rec(r, EV_ERR_FORMAT, "invalid escape in record");
			if (o == r->recsize)
				return fail_rec(r, EV_ERR_FORMAT, "record longer than the header's record size");
			r->recbuf[o++] = bs[1] == 'n' ? '\n' : '\\';
			s = bs + 2;
			bs = memchr(s, '\\', (size_t)(e - s));
		}
		if (o != r->recsize) {
			char msg[96];
			snprintf(msg, sizeof msg, "record size %zu, expected %zu", o, r->recsize);
			return fail_rec(r, EV_ERR_FORMAT, msg);
		}
		r->raw = r->recbuf;
	}
	r->line = line;
	r->line_len = len;
	return take_record(r, rec);
}

/* The first line of something that is not an ev stream: say what it looks
 * like and which converter reads it, rather than "empty line". */
static int not_ev(ev_reader *r, const char *line, size_t len)
{
	const char *gz = ev_input_is_gzip(r->in) ? "gzip-compressed " : "";
	if (ev_looks_json(line, len))
		return fail(r, EV_ERR_FORMAT, "not an ev stream (looks like %sJSON: convert a PyTorch profiler trace with kineto2ev)", gz);
	if (len >= 15 && memcmp(line, "SQLite format 3", 15) == 0)
		return fail(r, EV_ERR_FORMAT, "not an ev stream (%sSQLite database: convert an Nsight Systems export with nsys2ev)", gz);
	if (len >= 4 && memcmp(line, "GOAL", 4) == 0)
		return fail(r, EV_ERR_FORMAT, "not an ev stream (looks like %sGOAL text)", gz);
	return fail(r, EV_ERR_FORMAT, "not an ev stream (%sinput does not start with an #ev header)", gz);
}

static int is_header(const char *line, size_t len)
{
	return len >= 3 && memcmp(line, "#ev", 3) == 0 && (len == 3 || line[3] == ' ');
}

int ev_read(ev_reader *r, struct ev_rec *rec)
{
	const char *line;
	size_t len;
	int rc;
	if (r->err)
		return r->err;
	if (r->in_segment && r->recsize == EV_RECORD_SIZE) {
		/* Most lines are records of the current size with nothing
		 * escaped: taken without a call. */
		const unsigned char *p = ev_input_plain_record(r->in);
		if (p) {
			r->lineno = r->in->lineno;
			r->raw = p;
			r->line = (const char *)p;
			r->line_len = EV_RECORD_SIZE;
			return take_record(r, rec);
		}
		size_t elen;
		if ((p = ev_input_escaped_record(r->in, r->recbuf, &elen)) != NULL) {
			r->lineno = r->in->lineno;
			r->raw = r->recbuf;
			r->line = (const char *)p;
			r->line_len = elen;
			return take_record(r, rec);
		}
	}
	for (;;) {
		/* Records of another size with nothing escaped (a record of
		 * this size was tried above, on the same bytes). */
		int plain = r->in_segment && r->recsize != EV_RECORD_SIZE &&
		            (line = ev_input_plain_line(r->in, r->recsize)) != NULL;
		if (plain) {
			len = r->recsize;
			rc = EV_REC;
		} else {
			rc = ev_input_line(r->in, &line, &len);
		}
		r->lineno = ev_input_lineno(r->in);
		if (r->segments == 0 && (rc == EV_REC || rc == EV_ERR_TRUNCATED) && !is_header(line, len)) {
			/* Blank lines before the first content: look further (JSON may
			 * start with a newline) before naming what the input is. */
			size_t k = 0;
			while (k < len && (line[k] == ' ' || line[k] == '\t' || line[k] == '\r'))
				k++;
			if (k == len && rc == EV_REC && r->lineno < 64)
				continue;
			return not_ev(r, line, len);
		}
		if (rc == EV_EOF) {
			if (r->in_segment)
				return fail(r, EV_ERR_TRUNCATED, "truncated: stream ends without #end after record %llu",
				            (unsigned long long)r->recno);
			if (r->segments == 0)
				return fail(r, EV_ERR_FORMAT, "empty input: no #ev header");
			return EV_EOF;
		}
		if (rc == EV_ERR_GZIP && ev_input_gzip_error(r->in))
			return fail(r, rc, "%s", ev_input_gzip_error(r->in));
		if (rc == EV_ERR_TRUNCATED)
			return fail(r, EV_ERR_TRUNCATED, "truncated: last line has no newline (after record %llu)",
			            (unsigned long long)r->recno);
		if (rc == EV_ERR_LIMIT)
			return fail(r, rc, "line longer than the limit of %zu bytes", ev_input_line_limit(r->in));
		if (rc == EV_ERR_IO)
			return fail(r, rc, "read error: %s", strerror(errno));
		if (rc < 0)
			return fail(r, rc, "%s", ev_strerror(rc));
		if (len == 0)
			return fail(r, EV_ERR_FORMAT, "empty line");
		unsigned char c = (unsigned char)line[0];
		if (c >= 0x01 && c <= 0x1F && c != 0x0D)
			return read_record(r, line, len, plain, rec);
		if (c != '#')
			return fail(r, EV_ERR_FORMAT, "not a record or text line (first byte 0x%02x)", c);
		int structural = 1;
		if (len >= 3 && memcmp(line, "#ev", 3) == 0 && (len == 3 || line[3] == ' ')) {
			if (r->in_segment)
				return fail(r, EV_ERR_TRUNCATED, "segment %u has no #end before the next #ev", r->segments);
			if ((rc = parse_header(r, line, len)) != EV_OK)
				return rc;
			r->in_segment = 1;
			r->segments++;
			r->seg_records = 0;
			reset_defined(r);
		} else if (!r->in_segment) {
			return fail(r, EV_ERR_FORMAT, "text line outside a segment (no #ev header before it)");
		} else if (len >= 4 && memcmp(line, "#end", 4) == 0 && (len == 4 || line[4] == ' ')) {
			if ((rc = parse_end(r, line, len)) != EV_OK)
				return rc;
		} else if (len >= 4 && memcmp(line, "#str", 4) == 0 && (len == 4 || line[4] == ' ')) {
			if ((rc = parse_str(r, line, len)) != EV_OK)
				return rc;
		} else {
			structural = 0;
			rc = ev_meta_add_line_at(r->meta, line, len, ev_input_name(r->in), r->lineno);
			if (rc == EV_ERR_NOMEM)
				return fail(r, rc, "out of memory");
			if (rc && ev_meta_conflict(r->meta))
				return fail(r, rc, "%.*s%s: conflicts with %s", (int)(len > 120 ? 120 : len), line,
				            len > 120 ? "..." : "", ev_meta_conflict(r->meta));
			if (rc)
				return fail(r, rc, "malformed metadata line");
		}
		if (r->raw_text || (!structural && !r->skip_text)) {
			r->text = line;
			r->text_len = len;
			return EV_TEXT;
		}
	}
}

int ev_read_run(ev_reader *r, struct ev_rec *rec, size_t max, const char **span, size_t *len, uint64_t *n)
{
	*n = 0;
	if (r->err || !r->in_segment || r->recsize != EV_RECORD_SIZE || !max)
		return ev_read(r, rec);
	ev_input *in = r->in;
	const unsigned char *start = in->buf + in->start;
	uint64_t k = 0;
	while (k < max) {
		size_t elen = EV_RECORD_SIZE;
		const unsigned char *p = ev_input_plain_record(in), *raw = p;
		if (!p && !(p = ev_input_escaped_record(in, r->recbuf, &elen)))
			break;
		if (!raw)
			raw = r->recbuf;
		unsigned flags = ev_le16(raw + 6);
		if ((flags & r->reserved) ||
		    !id_defined(r, ev_le64(raw + 40)) || !id_defined(r, ev_le64(raw + 48))) {
			/* Left for ev_read, which says what is wrong. */
			in->start -= elen + 1;
			in->scan = in->start;
			in->offset -= elen + 1;
			in->lineno--;
			break;
		}
		r->raw = raw;
		r->line = (const char *)p;
		r->line_len = elen;
		k++;
	}
	if (!k)
		return ev_read(r, rec);
	r->lineno = in->lineno;
	r->seg_records += k;
	r->recno += k;
	*span = (const char *)start;
	*len = (size_t)(in->buf + in->start - start);
	*n = k;
	return EV_REC;
}

void ev_reader_skip_text(ev_reader *r, int skip) { r->skip_text = skip; }
void ev_reader_lazy_decode(ev_reader *r, int lazy) { r->lazy = lazy; }
void ev_reader_raw_text(ev_reader *r, int raw) { r->raw_text = raw; }
void ev_reader_text(const ev_reader *r, const char **line, size_t *len)
{
	*line = r->text;
	*len = r->text_len;
}
void ev_reader_record_line(const ev_reader *r, const char **line, size_t *len)
{
	*line = r->recsize == EV_RECORD_SIZE ? r->line : NULL;
	*len = r->line_len;
}
const unsigned char *ev_reader_raw(const ev_reader *r) { return r->raw; }
size_t ev_reader_recsize(const ev_reader *r) { return r->recsize; }
ev_strtab *ev_reader_strtab(const ev_reader *r) { return r->st; }
ev_meta *ev_reader_meta(const ev_reader *r) { return r->meta; }
uint64_t ev_reader_recno(const ev_reader *r) { return r->recno; }
uint64_t ev_reader_lineno(const ev_reader *r) { return r->lineno; }
uint32_t ev_reader_segments(const ev_reader *r) { return r->segments; }
const char *ev_reader_name(const ev_reader *r) { return ev_input_name(r->in); }
const char *ev_reader_errdetail(const ev_reader *r) { return r->detail; }

int ev_reader_from_file(const ev_reader *r)
{
	struct stat st;
	return fstat(r->in->fd, &st) == 0 && S_ISREG(st.st_mode);
}

int ev_reader_close(ev_reader *r)
{
	int rc = EV_OK;
	if (!r)
		return EV_OK;
	if (r->in)
		rc = ev_input_close(r->in);
	if (r->own_st)
		ev_strtab_free(r->st);
	if (r->own_meta)
		ev_meta_free(r->meta);
	ev_map_free(&r->defined);
	free(r->recbuf);
	free(r->scratch);
	free(r->header);
	free(r);
	return rc;
}
