/* SPDX-License-Identifier: MIT */
/*
 * ev_input.c - buffered byte input from a file or standard input, with
 * gzip detected by its magic bytes and inflated on the fly (several gzip
 * members in a row are read as one stream).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ev/stream.h"
#include "internal.h"

#define CHUNK (1u << 18)
static size_t default_chunk = CHUNK;

void ev_input_set_default_buffer(size_t bytes)
{
	default_chunk = bytes < (64u << 10) ? (64u << 10) : bytes > (16u << 20) ? (16u << 20) : bytes;
}

static long read_fd(int fd, unsigned char *dst, size_t n)
{
	for (;;) {
		ssize_t got = read(fd, dst, n);
		if (got >= 0)
			return (long)got;
		if (errno != EINTR)
			return EV_ERR_IO;
	}
}

static int start_gzip(ev_input *in)
{
	/* The bytes already read belong to the compressed stream. */
	in->raw = malloc(in->chunk);
	if (!in->raw)
		return EV_ERR_NOMEM;
	memcpy(in->raw, in->buf + in->start, in->end - in->start);
	in->raw_pos = 0;
	in->raw_end = in->end - in->start;
	in->raw_read = in->raw_end;
	in->start = in->end = 0;
	isal_inflate_init(&in->z);
	in->z.crc_flag = ISAL_GZIP;
	in->gzip = 1;
	return EV_OK;
}

/* The first read: enough for the magic bytes and a format sniff, not a
 * whole chunk, which a reader that stops early (or reads straight into its
 * own buffer, ev_input_read) would never use. */
#define FIRST_READ ((size_t)64 << 10)
/* ev_input_read asks for at least this much: read it straight into the
 * caller's buffer (plain input, nothing buffered), saving a copy. */
#define DIRECT_MIN ((size_t)64 << 10)

static int sniff(ev_input *in)
{
	size_t first = in->cap < FIRST_READ ? in->cap : FIRST_READ;
	/* Read until two bytes are known or the input ends. */
	while (in->end < 2 && !in->eof) {
		long got = read_fd(in->fd, in->buf + in->end, first - in->end);
		if (got < 0)
			return got;
		if (got == 0)
			in->eof = 1;
		in->end += (size_t)got;
	}
	if (in->end >= 2 && in->buf[0] == 0x1f && in->buf[1] == 0x8b) {
		int rc = start_gzip(in);
		if (rc)
			return rc;
		in->raw_eof = in->eof;
		in->eof = 0;
	}
	return EV_OK;
}

int ev_input_fdopen(ev_input **out, int fd, int own, const char *name)
{
	*out = NULL;
	/* Remembered so that no output of this process can replace it. */
	int same = ev_files_note_input(fd);
	if (same != EV_OK)
		return same;
	ev_input *in = calloc(1, sizeof *in);
	if (!in)
		return EV_ERR_NOMEM;
	in->fd = fd;
	in->own = own;
	struct stat st;
	if (fstat(fd, &st) == 0 && S_ISFIFO(st.st_mode))
		(void)fcntl(fd, F_SETPIPE_SZ, 1 << 20); /* the writer's side may not have */
	in->chunk = default_chunk;
	in->cap = in->chunk;
	in->line_limit = EV_LINE_MAX;
	in->buf = malloc(in->cap);
	in->name = strdup(name ? name : "input");
	if (!in->buf || !in->name) {
		ev_input_close(in);
		return EV_ERR_NOMEM;
	}
	int rc = sniff(in);
	if (rc) {
		int e = errno;
		ev_input_close(in);
		errno = e;
		return rc;
	}
	*out = in;
	return EV_OK;
}

int ev_input_open(ev_input **out, const char *path)
{
	int fd;
	*out = NULL;
	if (strcmp(path, "-") == 0)
		return ev_input_fdopen(out, STDIN_FILENO, 0, "standard input");
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return EV_ERR_IO;
	int rc = ev_input_fdopen(out, fd, 1, path);
	if (rc) {
		int e = errno;
		close(fd);
		errno = e;
	}
	return rc;
}

/* Compressed bytes consumed so far (where a gzip problem lies). */
static uint64_t raw_at(const ev_input *in)
{
	return in->raw_read - (in->raw_end - in->raw_pos);
}

/* What ISA-L's inflate status means, for the message. */
static const char *inflate_error(int rc)
{
	switch (rc) {
	case ISAL_INVALID_BLOCK: return "invalid deflate block";
	case ISAL_INVALID_SYMBOL: return "invalid code";
	case ISAL_INVALID_LOOKBACK: return "invalid distance too far back";
	case ISAL_INVALID_WRAPPER: return "invalid gzip header";
	case ISAL_UNSUPPORTED_METHOD: return "unknown compression method";
	case ISAL_INCORRECT_CHECKSUM: return "checksum or length mismatch";
	default: return "inflate error";
	}
}

/* Inflate into buf[end..cap).  Returns bytes produced, 0 at the end. */
static long inflate_some(ev_input *in)
{
	for (;;) {
		if (in->raw_pos == in->raw_end && !in->raw_eof) {
			long got = read_fd(in->fd, in->raw, in->chunk);
			if (got < 0)
				return got;
			in->raw_pos = 0;
			in->raw_end = (size_t)got;
			in->raw_read += (uint64_t)got;
			if (got == 0)
				in->raw_eof = 1;
		}
		if (in->member_done) {
			if (in->raw_pos == in->raw_end) {
				if (in->raw_eof)
					return 0;
				continue;
			}
			/* Another member must follow; anything else is damage. */
			if (in->raw[in->raw_pos] != 0x1f) {
				snprintf(in->gzdetail, sizeof in->gzdetail,
				         "gzip: bytes after the end of the compressed data at compressed byte %llu are not gzip data "
				         "(two files concatenated?)", (unsigned long long)raw_at(in));
				return EV_ERR_GZIP;
			}
			isal_inflate_reset(&in->z);
			in->z.crc_flag = ISAL_GZIP;
			in->member_done = 0;
		}
		if (in->raw_pos == in->raw_end && in->raw_eof) {
			snprintf(in->gzdetail, sizeof in->gzdetail,
			         "gzip: the file ends inside the compressed data, after %llu compressed bytes (%llu bytes "
			         "decompressed): truncated (an interrupted copy or download?)", (unsigned long long)raw_at(in),
			         (unsigned long long)(in->offset + (in->end - in->start)));
			/* The member did not finish.  EV_ERR_GZIP, not EV_ERR_TRUNCATED,
			 * which readers take for a last line without its newline. */
			return EV_ERR_GZIP;
		}
		in->z.next_in = in->raw + in->raw_pos;
		in->z.avail_in = (uint32_t)(in->raw_end - in->raw_pos);
		in->z.next_out = in->buf + in->end;
		in->z.avail_out = (uint32_t)(in->cap - in->end);
		int zr = isal_inflate(&in->z);
		size_t produced = (in->cap - in->end) - in->z.avail_out;
		in->raw_pos = in->raw_end - in->z.avail_in;
		if (zr < 0) {
			snprintf(in->gzdetail, sizeof in->gzdetail, "gzip: corrupt compressed data near compressed byte %llu (%s)",
			         (unsigned long long)raw_at(in), inflate_error(zr));
			return EV_ERR_GZIP;
		}
		if (in->z.block_state == ISAL_BLOCK_FINISH)
			in->member_done = 1;
		if (produced)
			return (long)produced;
	}
}

const char *ev_input_gzip_error(const ev_input *in)
{
	return in && in->gzdetail[0] ? in->gzdetail : NULL;
}

/* Append more bytes at buf[end].  Returns > 0, 0 at the end, or < 0. */
static long fill(ev_input *in)
{
	if (in->err)
		return in->err;
	if (in->eof)
		return 0;
	long got = in->gzip ? inflate_some(in) : read_fd(in->fd, in->buf + in->end, in->cap - in->end);
	if (got < 0) {
		in->err = (int)got;
		return got;
	}
	if (got == 0)
		in->eof = 1;
	in->end += (size_t)got;
	return got;
}

long ev_input_read(ev_input *in, void *dst, size_t n)
{
	if (in->start == in->end) {
		in->start = in->end = in->scan = 0;
		if (!in->gzip && n >= DIRECT_MIN && !in->eof && !in->err) {
			long got = read_fd(in->fd, dst, n);
			if (got < 0)
				in->err = (int)got;
			else if (got == 0)
				in->eof = 1;
			else
				in->offset += (uint64_t)got;
			return got;
		}
		long got = fill(in);
		if (got <= 0)
			return got;
	}
	size_t avail = in->end - in->start;
	if (avail > n)
		avail = n;
	memcpy(dst, in->buf + in->start, avail);
	in->start += avail;
	in->offset += avail;
	return (long)avail;
}

int ev_input_line(ev_input *in, const char **line, size_t *len)
{
	for (;;) {
		if (in->scan < in->start)
			in->scan = in->start;
		unsigned char *nl = memchr(in->buf + in->scan, '\n', in->end - in->scan);
		if (nl) {
			size_t n = (size_t)(nl - (in->buf + in->start));
			if (n > in->line_limit) {
				/* The same limit whether the line came in one read (a
				 * file) or in many (a pipe); the error names this line. */
				in->lineno++;
				return EV_ERR_LIMIT;
			}
			*line = (const char *)in->buf + in->start;
			*len = n;
			ev_input_consume(in, n);
			return EV_REC;
		}
		in->scan = in->end;
		if (in->end - in->start > in->line_limit) {
			in->lineno++;
			return EV_ERR_LIMIT;
		}
		if (in->eof || in->err) {
			if (in->err)
				return in->err;
			if (in->start == in->end)
				return EV_EOF;
			*line = (const char *)in->buf + in->start;
			*len = in->end - in->start;
			in->offset += *len;
			in->start = in->end;
			in->lineno++;
			return EV_ERR_TRUNCATED;
		}
		/* Make room: move the partial line to the front, grow if full. */
		if (in->start > 0) {
			memmove(in->buf, in->buf + in->start, in->end - in->start);
			in->end -= in->start;
			in->scan -= in->start;
			in->start = 0;
		}
		if (in->end == in->cap) {
			size_t ncap = in->cap * 2;
			unsigned char *nb = realloc(in->buf, ncap);
			if (!nb)
				return EV_ERR_NOMEM;
			in->buf = nb;
			in->cap = ncap;
		}
		long got = fill(in);
		if (got < 0)
			return (int)got;
	}
}

/* Does p[0..n) hold neither '\n' nor '\\'?  Sixteen bytes a step for both
 * where SSE2 is there (every x86-64), libc's memchr for each elsewhere. */
static int plain_run(const unsigned char *p, size_t n)
{
#if defined(__SSE2__)
	size_t i = 0;
	__m128i hit = _mm_setzero_si128();
	for (; i + 16 <= n; i += 16)
		hit = _mm_or_si128(hit, ev_escape_cmp16(p + i));
	if (_mm_movemask_epi8(hit))
		return 0;
	for (; i < n; i++)
		if (p[i] == '\n' || p[i] == '\\')
			return 0;
	return 1;
#else
	return !memchr(p, '\n', n) && !memchr(p, '\\', n);
#endif
}

const char *ev_input_plain_line(ev_input *in, size_t n)
{
	if (in->end - in->start <= n || n > in->line_limit)
		return NULL;
	const unsigned char *p = in->buf + in->start;
	if (p[n] != '\n' || !plain_run(p, n))
		return NULL;
	ev_input_consume(in, n);
	return (const char *)p;
}

void ev_input_set_line_limit(ev_input *in, size_t max) { in->line_limit = max; }
size_t ev_input_line_limit(const ev_input *in) { return in->line_limit; }
int ev_input_is_gzip(const ev_input *in) { return in->gzip; }
uint64_t ev_input_offset(const ev_input *in) { return in->offset; }

int64_t ev_input_file_size(const ev_input *in)
{
	struct stat st;
	if (in->gzip || fstat(in->fd, &st) != 0 || !S_ISREG(st.st_mode))
		return -1;
	return (int64_t)st.st_size;
}

long ev_input_pread(const ev_input *in, void *dst, size_t n, uint64_t offset)
{
	if (ev_input_file_size(in) < 0)
		return EV_ERR_ARG;
	for (;;) {
		ssize_t got = pread(in->fd, dst, n, (off_t)offset);
		if (got >= 0)
			return (long)got;
		if (errno != EINTR)
			return EV_ERR_IO;
	}
}

int ev_input_seek(ev_input *in, uint64_t offset)
{
	if (ev_input_file_size(in) < 0)
		return EV_ERR_ARG;
	if (lseek(in->fd, (off_t)offset, SEEK_SET) < 0)
		return EV_ERR_IO;
	in->start = in->end = in->scan = 0;
	in->eof = 0;
	in->err = 0;
	in->offset = offset;
	return EV_OK;
}
uint64_t ev_input_lineno(const ev_input *in) { return in->lineno; }
const char *ev_input_name(const ev_input *in) { return in->name; }

int ev_input_close(ev_input *in)
{
	int rc = EV_OK;
	if (!in)
		return EV_OK;

	if (in->own && in->fd >= 0 && close(in->fd) != 0)
		rc = EV_ERR_IO;
	free(in->raw);
	free(in->buf);
	free(in->name);
	free(in);
	return rc;
}
