/* SPDX-License-Identifier: MIT */
/*
 * internal.h - what the stream module's files share and nothing else sees.
 */
#ifndef EV_STREAM_INTERNAL_H
#define EV_STREAM_INTERNAL_H

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/types.h>
#include <isa-l/igzip_lib.h>
#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include "ev/stream.h"

/* Is (dev, ino) the file that an open ev_output will replace
 * (EV_ERR_SAMEFILE) or write in place as standard output (EV_ERR_SAMEOUT)?
 * EV_OK when neither. */
int ev_output_replaces(dev_t dev, ino_t ino);
/* Is fd a regular file that this process reads?  EV_ERR_SAMEOUT or EV_OK. */
int ev_files_check_output_fd(int fd);

/* fmt with ap, formatted and handed to put(ctx, text, len): on the stack
 * when short, else in a temporary allocation.  Returns put's status, or
 * EV_ERR_ARG / EV_ERR_NOMEM. */
int ev_vformat(int (*put)(void *ctx, const char *text, size_t len), void *ctx, const char *fmt, va_list ap);

/* The reader's ids known defined and the writer's ids already emitted, in
 * front of their hash maps: a cache of two ways a set, the newer first.
 * Ids are content hashes, so their low bits pick the set; two ways keep
 * names that share a slot from evicting each other on every record. */
#define EV_ID_CACHE 4096 /* slots: 2048 sets of two */
static inline int ev_id_cached(const uint64_t *cache, uint64_t id)
{
	const uint64_t *set = cache + ((size_t)id & (EV_ID_CACHE - 2));
	return set[0] == id || set[1] == id;
}
static inline void ev_id_cache_put(uint64_t *cache, uint64_t id)
{
	uint64_t *set = cache + ((size_t)id & (EV_ID_CACHE - 2));
	set[1] = set[0];
	set[0] = id;
}

/* The bytes of a record line that an escape concerns, LF and backslash,
 * among p[0..16).  The reader asks whether a line has any
 * (ev_input_plain_line: the compares of a line ORed, one mask at the end),
 * the writer where they are (ev_write). */
#if defined(__SSE2__)
static inline __m128i ev_escape_cmp16(const unsigned char *p)
{
	__m128i v = _mm_loadu_si128((const __m128i *)(const void *)p);
	return _mm_or_si128(_mm_cmpeq_epi8(v, _mm_set1_epi8('\n')), _mm_cmpeq_epi8(v, _mm_set1_epi8('\\')));
}
#endif

/* Bit i for p[i]: sixteen bytes at one look where SSE2 is there (every
 * x86-64), a byte at a time elsewhere. */
static inline unsigned ev_escape_mask16(const unsigned char *p)
{
#if defined(__SSE2__)
	return (unsigned)_mm_movemask_epi8(ev_escape_cmp16(p));
#else
	unsigned m = 0;
	for (unsigned i = 0; i < 16; i++)
		m |= (unsigned)(p[i] == '\n' || p[i] == '\\') << i;
	return m;
#endif
}

/* ---- the per-record paths, inline ----------------------------------- */

/* The input and output buffers are seen here so that the reader and the
 * writer can take a record line without a call: on a pass-through stage
 * (ev-view --ev) the calls and checks around the 96 bytes cost more than
 * the bytes. */
struct ev_input {
	int fd, own, gzip;
	char *name;
	/* Decompressed (or plain) bytes: [start, end) are unread. */
	unsigned char *buf;
	size_t start, end, cap, scan, chunk;
	int eof;          /* no more bytes will come into buf */
	int err;          /* sticky error status */
	/* Compressed bytes waiting for inflate. */
	unsigned char *raw;
	size_t raw_pos, raw_end;
	int raw_eof, member_done;
	uint64_t raw_read;  /* compressed bytes read from fd so far */
	char gzdetail[192]; /* what went wrong in the gzip layer ("" if nothing) */
	struct inflate_state z; /* ISA-L's inflate: about twice zlib's speed */
	size_t line_limit;
	uint64_t offset, lineno;
};

struct ev_output {
	int fd, keep_fd, direct, err, saved_errno; /* keep_fd: the caller's (stdout, ev_output_fdopen) */
	char *path, *tmp, *name;
	/* buf[0, len) waits to be written.  A reservation that ends within
	 * cap is taken without a call.  To a regular file (block != 0) cap is
	 * where the next block boundary of the file falls in buf, and len may
	 * pass it by less than the reservation that crossed it (alloc holds
	 * the slack); elsewhere cap = alloc. */
	char *buf;
	size_t len, cap, alloc;
	size_t block;      /* regular file: written in blocks of this size ... */
	uint64_t pos;      /* ... aligned to it; the file offset of buf[0] */
	int temp_slot;
	/* dev/ino name an existing file that the rename replaces
	 * (EV_ERR_SAMEFILE) or that standard output writes (EV_ERR_SAMEOUT);
	 * 0 for neither. */
	int replaces;
	dev_t dev;
	ino_t ino;
	struct ev_output *next_open;
};

/* The line of n bytes at the front of the buffer is read: past it and its
 * LF. */
static inline void ev_input_consume(struct ev_input *in, size_t n)
{
	in->start += n + 1;
	in->scan = in->start;
	in->offset += n + 1;
	in->lineno++;
}

/* The next line when it is a record of EV_RECORD_SIZE bytes with nothing
 * escaped in it (the common case: about four lines in five), consumed; else
 * NULL and nothing consumed (the caller takes the general way). */
static inline const unsigned char *ev_input_plain_record(struct ev_input *in)
{
	if (in->end - in->start <= EV_RECORD_SIZE || EV_RECORD_SIZE > in->line_limit)
		return NULL;
	const unsigned char *p = in->buf + in->start;
	unsigned c = p[0];
	if (p[EV_RECORD_SIZE] != '\n' || c == 0 || c > 0x1F || c == 0x0D)
		return NULL;
#if defined(__SSE2__)
	_Static_assert(EV_RECORD_SIZE == 96, "six blocks of sixteen");
	__m128i hit = _mm_or_si128(_mm_or_si128(ev_escape_cmp16(p), ev_escape_cmp16(p + 16)),
	                           _mm_or_si128(ev_escape_cmp16(p + 32), ev_escape_cmp16(p + 48)));
	hit = _mm_or_si128(hit, _mm_or_si128(ev_escape_cmp16(p + 64), ev_escape_cmp16(p + 80)));
	if (_mm_movemask_epi8(hit))
		return NULL;
#else
	if (memchr(p, '\n', EV_RECORD_SIZE) || memchr(p, '\\', EV_RECORD_SIZE))
		return NULL;
#endif
	ev_input_consume(in, EV_RECORD_SIZE);
	return p;
}

/* The next line when it is a record of EV_RECORD_SIZE bytes with escapes
 * in it (a record's bytes are binary: about one line in five has an LF or a
 * backslash), unescaped into dst (EV_RECORD_SIZE + 16 bytes) and consumed,
 * its length in *len; else NULL and nothing consumed (errors too: the
 * general way says what is wrong).  Sixteen bytes at a look, the plain run
 * before each escape copied whole. */
static inline const unsigned char *ev_input_escaped_record(struct ev_input *in, unsigned char *dst, size_t *len)
{
	/* A whole line of the longest kind (every byte escaped) and a block
	 * past it in the buffer, else the general way. */
	enum { NEED = 2 * EV_RECORD_SIZE + 32 };
	if (in->end - in->start < NEED || NEED > in->line_limit)
		return NULL;
	const unsigned char *p = in->buf + in->start;
	unsigned c = p[0];
	if (c == 0 || c > 0x1F || c == 0x0D)
		return NULL;
	size_t i = 0, o = 0;
	for (;;) {
		unsigned m = ev_escape_mask16(p + i);
		size_t take = m ? (size_t)__builtin_ctz(m) : 16;
		if (take > EV_RECORD_SIZE - o)
			take = EV_RECORD_SIZE - o;
		memcpy(dst + o, p + i, 16);
		o += take;
		i += take;
		if (o == EV_RECORD_SIZE)
			break;
		if (take < 16) {
			/* p[i] is an LF (the line ends short) or an escape. */
			if (p[i] != '\\' || (p[i + 1] != 'n' && p[i + 1] != '\\'))
				return NULL;
			dst[o++] = p[i + 1] == 'n' ? '\n' : '\\';
			i += 2;
			if (o == EV_RECORD_SIZE)
				break;
		}
	}
	if (p[i] != '\n')
		return NULL;
	*len = i;
	ev_input_consume(in, i);
	return p;
}

/* ev_output_reserve and ev_output_commit without a call when the buffer
 * has room. */
static inline char *ev_output_room(struct ev_output *o, size_t n)
{
	return o->len + n <= o->cap ? o->buf + o->len : ev_output_reserve(o, n);
}
static inline void ev_output_used(struct ev_output *o, size_t n) { o->len += n; }

#endif
