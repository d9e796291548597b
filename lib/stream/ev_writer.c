/* SPDX-License-Identifier: MIT */
/*
 * ev_writer.c - writes ev streams: segment header, #str definitions before
 * first use, escaped records, deduplicated metadata and the #end count.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ev/stream.h"
#include "internal.h"

#define STR_PREFIX 22 /* "#str " + 16 hex digits + ' ' */

struct ev_writer {
	ev_output *out;
	ev_strtab *st;
	char *hdr_kv;          /* " key=val key=val" after "#ev 1.0 96" */
	size_t hdr_len;
	int in_segment, started;
	uint64_t seg_records, total;
	struct ev_map emitted; /* string ids defined in this segment */
	struct ev_map texts;   /* hashes of metadata lines already written */
	uint64_t cache[EV_ID_CACHE];    /* ids emitted in this segment (ev_id_cached) */
	char *esc;             /* escaping scratch */
	size_t esc_cap;
};

int ev_writer_open(ev_writer **out, const char *path, ev_strtab *st)
{
	ev_writer *w = calloc(1, sizeof *w);
	*out = NULL;
	if (!w)
		return EV_ERR_NOMEM;
	w->st = st;
	ev_map_init(&w->emitted);
	ev_map_init(&w->texts);
	int rc = ev_output_open(&w->out, path);
	if (rc) {
		free(w);
		return rc;
	}
	rc = ev_writer_header(w, "clock", "ns");
	if (rc) {
		ev_writer_abort(w);
		return rc;
	}
	*out = w;
	return EV_OK;
}

int ev_writer_header(ev_writer *w, const char *key, const char *val)
{
	if (w->in_segment)
		return EV_ERR_ARG;
	size_t klen = strlen(key), vlen = strlen(val);
	if (!klen || strpbrk(key, " \t\n=") || strpbrk(val, " \t\n"))
		return EV_ERR_ARG;
	/* Replace an existing key, else append. */
	char *buf = malloc(w->hdr_len + klen + vlen + 3);
	if (!buf)
		return EV_ERR_NOMEM;
	size_t o = 0;
	for (size_t i = 0; i < w->hdr_len;) {
		size_t j = i + 1;
		while (j < w->hdr_len && w->hdr_kv[j] != ' ')
			j++;
		const char *f = w->hdr_kv + i + 1;
		if (!((size_t)(j - i - 1) > klen && f[klen] == '=' && memcmp(f, key, klen) == 0)) {
			memcpy(buf + o, w->hdr_kv + i, j - i);
			o += j - i;
		}
		i = j;
	}
	o += (size_t)sprintf(buf + o, " %s=%s", key, val);
	free(w->hdr_kv);
	w->hdr_kv = buf;
	w->hdr_len = o;
	return EV_OK;
}

static void reset_emitted(ev_writer *w)
{
	if (w->emitted.cap) {
		memset(w->emitted.keys, 0, w->emitted.cap * sizeof *w->emitted.keys);
		w->emitted.len = 0;
	}
	memset(w->cache, 0, sizeof w->cache);
}

/* A segment's "#ev M.m SIZE" line, this writer's version, with rest (the
 * header's keys, from ' ' on) after it; the segment starts afresh.  The
 * writer's own header and a copied one (ev_write_line_raw) both come
 * here, so their bytes cannot drift apart. */
static int header_line(ev_writer *w, const char *rest, size_t len)
{
	int rc = ev_output_printf(w->out, "#ev %d.%d %d", EV_FORMAT_MAJOR, EV_FORMAT_MINOR, EV_RECORD_SIZE);
	if (!rc && len)
		rc = ev_output_write(w->out, rest, len);
	if (!rc)
		rc = ev_output_putc(w->out, '\n');
	w->in_segment = 1;
	w->started = 1;
	w->seg_records = 0;
	reset_emitted(w);
	return rc;
}

static int begin_segment(ev_writer *w) { return header_line(w, w->hdr_kv, w->hdr_len); }

static int ensure_escape(ev_writer *w, size_t n)
{
	if (n <= w->esc_cap)
		return EV_OK;
	char *e = realloc(w->esc, n);
	if (!e)
		return EV_ERR_NOMEM;
	w->esc = e;
	w->esc_cap = n;
	return EV_OK;
}

static int emit_str(ev_writer *w, uint64_t id)
{
	size_t len;
	const char *text;
	if (id == 0 || ev_id_cached(w->cache, id))
		return EV_OK;
	if (ev_map_get(&w->emitted, id)) {
		ev_id_cache_put(w->cache, id);
		return EV_OK;
	}
	text = ev_strtab_get(w->st, id, &len);
	if (!text)
		return EV_ERR_NOSTR;
	/* "#str " + 16 hex digits + ' ' + the escaped text: never longer
	 * than a reader takes (the text alone may tell before escaping). */
	if (len > EV_LINE_MAX - STR_PREFIX)
		return EV_ERR_LIMIT;
	int rc = ensure_escape(w, 2 * len + 1);
	if (rc)
		return rc;
	size_t elen = ev_text_escape(text, len, w->esc, w->esc_cap);
	if (elen > EV_LINE_MAX - STR_PREFIX)
		return EV_ERR_LIMIT;
	rc = ev_output_printf(w->out, "#str %016llx ", (unsigned long long)id);
	if (!rc)
		rc = ev_output_write(w->out, w->esc, elen);
	if (!rc)
		rc = ev_output_putc(w->out, '\n');
	if (!rc)
		rc = ev_map_put(&w->emitted, id, 1);
	if (!rc)
		ev_id_cache_put(w->cache, id);
	return rc;
}

/* The bytes of a record that need escaping ('\\' and LF): bit i of
 * bits[i / 64] for raw[i].  Sixteen bytes a step where SSE2 is there; the
 * masks are gathered in two registers, not ORed into memory one after the
 * other (a chain of loads and stores as long as the record). */
_Static_assert(EV_RECORD_SIZE % 16 == 0 && EV_RECORD_SIZE <= 128, "escape_bits covers a record in two words");
static inline void escape_bits(const unsigned char raw[EV_RECORD_SIZE], uint64_t bits[2])
{
	uint64_t lo = 0, hi = 0;
	for (size_t i = 0; i < EV_RECORD_SIZE && i < 64; i += 16)
		lo |= (uint64_t)ev_escape_mask16(raw + i) << i;
	for (size_t i = 64; i < EV_RECORD_SIZE; i += 16)
		hi |= (uint64_t)ev_escape_mask16(raw + i) << (i - 64);
	bits[0] = lo;
	bits[1] = hi;
}

/* raw escaped into p (room for twice its bytes); returns the length.
 * The runs between bytes to escape are copied whole. */
static size_t escape_record(unsigned char *p, const unsigned char raw[EV_RECORD_SIZE], const uint64_t bits[2])
{
	size_t o = 0, i = 0;
	for (int k = 0; k < 2; k++) {
		for (uint64_t b = bits[k]; b; b &= b - 1) {
			size_t j = (size_t)k * 64 + (size_t)__builtin_ctzll(b);
			memcpy(p + o, raw + i, j - i);
			o += j - i;
			p[o++] = '\\';
			p[o++] = raw[j] == '\n' ? 'n' : '\\';
			i = j + 1;
		}
	}
	memcpy(p + o, raw + i, EV_RECORD_SIZE - i);
	return o + EV_RECORD_SIZE - i;
}

int ev_write(ev_writer *w, const struct ev_rec *rec)
{
	unsigned char raw[EV_RECORD_SIZE];
	int rc;
	if (rec->type == 0 || rec->type > EV_TYPE_MAX || rec->type == 0x0A || rec->type == 0x0D)
		return EV_ERR_ARG;
	if (rec->flags & ~(unsigned)EV_F_KNOWN_MASK)
		return EV_ERR_RANGE; /* reserved bits of this version must be zero */
	if (!w->in_segment && (rc = begin_segment(w)) != EV_OK)
		return rc;
	if ((rc = emit_str(w, rec->name)) != EV_OK || (rc = emit_str(w, rec->sig)) != EV_OK)
		return rc;
	/* Encoded in place: a record without a byte to escape is then done,
	 * one with some is copied out and written back escaped. */
	unsigned char *p = (unsigned char *)ev_output_reserve(w->out, 2 * EV_RECORD_SIZE + 1);
	if (!p) {
		rc = ev_output_flush(w->out);
		return rc ? rc : EV_ERR_NOMEM;
	}
	ev_rec_encode(rec, p);
	uint64_t bits[2];
	escape_bits(p, bits);
	size_t o = EV_RECORD_SIZE;
	if (bits[0] | bits[1]) {
		memcpy(raw, p, EV_RECORD_SIZE);
		o = escape_record(p, raw, bits);
	}
	p[o++] = '\n';
	ev_output_commit(w->out, o);
	w->seg_records++;
	w->total++;
	return EV_OK;
}

int ev_write_escaped(ev_writer *w, const struct ev_rec *rec, const char *line, size_t len)
{
	int rc;
	if (!line)
		return ev_write(w, rec);
	if (!w->in_segment && (rc = begin_segment(w)) != EV_OK)
		return rc;
	/* Strings already written are the rule: checked here, not in a call. */
	if ((rec->name && !ev_id_cached(w->cache, rec->name) && (rc = emit_str(w, rec->name)) != EV_OK) ||
	    (rec->sig && !ev_id_cached(w->cache, rec->sig) && (rc = emit_str(w, rec->sig)) != EV_OK))
		return rc;
	char *p = ev_output_room(w->out, len + 1);
	if (!p) {
		rc = ev_output_flush(w->out);
		return rc ? rc : EV_ERR_NOMEM;
	}
	if (len == EV_RECORD_SIZE)
		memcpy(p, line, EV_RECORD_SIZE); /* a fixed size: a few moves, no call */
	else
		memcpy(p, line, len);
	p[len] = '\n';
	ev_output_used(w->out, len + 1);
	w->seg_records++;
	w->total++;
	return EV_OK;
}

int ev_write_run(ev_writer *w, const char *span, size_t len, uint64_t n)
{
	int rc;
	if (!w->in_segment && (rc = begin_segment(w)) != EV_OK)
		return rc;
	if ((rc = ev_output_write(w->out, span, len)) != EV_OK)
		return rc;
	w->seg_records += n;
	w->total += n;
	return EV_OK;
}

static int is_kw(const char *line, size_t len, const char *kw)
{
	size_t k = strlen(kw);
	/* As the reader sees them: the keyword alone or followed by a space. */
	return len >= k && memcmp(line, kw, k) == 0 && (len == k || line[k] == ' ');
}

int ev_write_text(ev_writer *w, const char *line, size_t len)
{
	int rc;
	if (len < 1 || line[0] != '#' || memchr(line, '\n', len) ||
	    is_kw(line, len, "#ev") || is_kw(line, len, "#str") || is_kw(line, len, "#end"))
		return EV_ERR_ARG;
	if (len > EV_LINE_MAX)
		return EV_ERR_LIMIT;
	uint64_t h = ev_hash64(line, len);
	if (ev_map_get(&w->texts, h))
		return EV_OK;
	if ((rc = ev_map_put(&w->texts, h, 1)) != EV_OK)
		return rc;
	if (!w->in_segment && (rc = begin_segment(w)) != EV_OK)
		return rc;
	rc = ev_output_write(w->out, line, len);
	return rc ? rc : ev_output_putc(w->out, '\n');
}

static int put_text(void *ctx, const char *text, size_t len)
{
	return ev_write_text(ctx, text, len);
}

int ev_write_textf(ev_writer *w, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	int rc = ev_vformat(put_text, w, fmt, ap);
	va_end(ap);
	return rc;
}

int ev_writer_end_segment(ev_writer *w)
{
	if (!w->in_segment)
		return EV_OK;
	w->in_segment = 0;
	return ev_output_printf(w->out, "#end %llu\n", (unsigned long long)w->seg_records);
}

/* "#ev M.m SIZE rest": keep rest, but write this writer's version. */
static int raw_header(ev_writer *w, const char *line, size_t len)
{
	int rc = ev_writer_end_segment(w);
	if (rc)
		return rc;
	const char *p = line + 3, *end = line + len;
	unsigned major = 0;
	while (p < end && (*p == ' ' || *p == '\t'))
		p++;
	if (p == end || *p < '0' || *p > '9')
		return EV_ERR_FORMAT;
	while (p < end && *p >= '0' && *p <= '9')
		major = major * 10 + (unsigned)(*p++ - '0');
	if (major != EV_FORMAT_MAJOR)
		return EV_ERR_VERSION;
	/* Skip ".minor" and the size field. */
	while (p < end && *p != ' ' && *p != '\t')
		p++;
	while (p < end && (*p == ' ' || *p == '\t'))
		p++;
	while (p < end && *p != ' ' && *p != '\t')
		p++;
	return header_line(w, p, (size_t)(end - p));
}

int ev_write_line_raw(ev_writer *w, const char *line, size_t len)
{
	int rc;
	if (len < 2 || line[0] != '#' || memchr(line, '\n', len))
		return EV_ERR_ARG;
	if (len > EV_LINE_MAX)
		return EV_ERR_LIMIT;
	if (is_kw(line, len, "#ev"))
		return raw_header(w, line, len);
	if (is_kw(line, len, "#end"))
		return ev_writer_end_segment(w);
	if (!w->in_segment && (rc = begin_segment(w)) != EV_OK)
		return rc;
	if (is_kw(line, len, "#str")) {
		uint64_t id = 0;
		if (len < 22 || line[21] != ' ')
			return EV_ERR_FORMAT;
		for (int i = 5; i < 21; i++) {
			char c = line[i];
			int v = c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
			if (v < 0)
				return EV_ERR_FORMAT;
			id = id << 4 | (uint64_t)v;
		}
		if ((rc = ensure_escape(w, len)) != EV_OK)
			return rc;
		memcpy(w->esc, line + 22, len - 22);
		size_t tlen = ev_text_unescape(w->esc, len - 22);
		if (tlen == (size_t)-1)
			return EV_ERR_FORMAT;
		if ((rc = ev_strtab_define(w->st, id, w->esc, tlen)) != EV_OK)
			return rc;
		if (ev_map_get(&w->emitted, id))
			return EV_OK;
		if ((rc = ev_map_put(&w->emitted, id, 1)) != EV_OK)
			return rc;
	}
	rc = ev_output_write(w->out, line, len);
	return rc ? rc : ev_output_putc(w->out, '\n');
}

uint64_t ev_writer_count(const ev_writer *w) { return w->total; }
ev_output *ev_writer_output(ev_writer *w) { return w->out; }

static void release(ev_writer *w)
{
	ev_map_free(&w->emitted);
	ev_map_free(&w->texts);
	free(w->hdr_kv);
	free(w->esc);
	free(w);
}

int ev_writer_close(ev_writer *w)
{
	int rc = EV_OK;
	if (!w->started)
		rc = begin_segment(w);
	if (!rc)
		rc = ev_writer_end_segment(w);
	if (rc) {
		ev_output_abort(w->out);
		release(w);
		return rc;
	}
	rc = ev_output_close(w->out);
	release(w);
	return rc;
}

void ev_writer_abort(ev_writer *w)
{
	if (!w)
		return;
	ev_output_abort(w->out);
	release(w);
}
