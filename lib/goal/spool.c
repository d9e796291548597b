/* SPDX-License-Identifier: MIT */
/*
 * spool.c - the rank parts of a GOAL schedule while it is being built.
 *
 * All spools of a builder append blocks to one temporary file that is
 * unlinked the moment it is made: a signal or a crash leaves nothing
 * behind, and the cost does not depend on the number of ranks (making a
 * file per rank part took a fifth of the run time on a busy ext4).  Each
 * spool buffers its bytes and appends them as one block when the buffer is
 * full; the block headers chain a spool's blocks forward, so reading a part
 * back follows the chain, and a spool's memory is its buffer and two
 * offsets.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "goal_int.h"

static int pwrite_all(int fd, const void *buf, size_t n, uint64_t off)
{
	const char *p = buf;
	while (n) {
		ssize_t w = pwrite(fd, p, n, (off_t)off);
		if (w < 0) {
			if (errno == EINTR)
				continue;
			return -1;
		}
		p += w;
		n -= (size_t)w;
		off += (uint64_t)w;
	}
	return 0;
}

static int pread_all(int fd, void *buf, size_t n, uint64_t off)
{
	char *p = buf;
	while (n) {
		ssize_t r = pread(fd, p, n, (off_t)off);
		if (r < 0) {
			if (errno == EINTR)
				continue;
			return -1;
		}
		if (r == 0) {
			errno = EIO; /* the spool is shorter than its chain says */
			return -1;
		}
		p += r;
		n -= (size_t)r;
		off += (uint64_t)r;
	}
	return 0;
}

int spoolfile_open(struct spoolfile *f, const char *dir)
{
	size_t n = strlen(dir) + 32;
	f->fd = -1;
	f->end = 0;
	if (!(f->name = malloc(n)))
		return -1;
	snprintf(f->name, n, "%s/.ev2goal.XXXXXX", dir);
	f->fd = mkostemp(f->name, O_CLOEXEC);
	if (f->fd < 0)
		return -1;
	/* Unnamed from now on: it goes away with the descriptor. */
	unlink(f->name);
	return 0;
}

void spoolfile_close(struct spoolfile *f)
{
	if (f->fd >= 0)
		close(f->fd);
	f->fd = -1;
	free(f->name);
	f->name = NULL;
}

int spool_init(struct spool *s, struct spoolfile *f, struct goal_arena *a, size_t cap)
{
	memset(s, 0, sizeof *s);
	s->f = f;
	s->a = a;
	s->first = s->last = SPOOL_NONE;
	s->cap = cap;
	s->buf = goal_arena_alloc(a, cap, 0);
	return s->buf ? 0 : -1;
}

int spool_flush(struct spool *s)
{
	if (!s->len)
		return 0;
	struct spoolfile *f = s->f;
	uint64_t at = f->end;
	unsigned char h[SPOOL_HDR];
	memset(h, 0, sizeof h);
	le_put64(h, SPOOL_NONE);
	le_put32(h + 8, (uint32_t)s->len);
	if (pwrite_all(f->fd, h, SPOOL_HDR, at) || pwrite_all(f->fd, s->buf, s->len, at + SPOOL_HDR))
		return -1;
	/* Link the previous block to this one. */
	if (s->last != SPOOL_NONE) {
		unsigned char nx[8];
		le_put64(nx, at);
		if (pwrite_all(f->fd, nx, 8, s->last))
			return -1;
	} else {
		s->first = at;
	}
	s->last = at;
	f->end = at + SPOOL_HDR + s->len;
	s->bytes += s->len;
	s->len = 0;
	return 0;
}

int spool_finish(struct spool *s)
{
	return spool_in_memory(s) ? 0 : spool_flush(s);
}

long spool_next_block(const struct spool *s, uint64_t *off, unsigned char *buf, size_t cap)
{
	if (*off == SPOOL_NONE)
		return 0;
	unsigned char h[SPOOL_HDR];
	if (pread_all(s->f->fd, h, SPOOL_HDR, *off))
		return -1;
	uint64_t next = (uint64_t)le_get32(h) | (uint64_t)le_get32(h + 4) << 32;
	uint32_t len = le_get32(h + 8);
	if (len > cap || pread_all(s->f->fd, buf, len, *off + SPOOL_HDR)) {
		if (len > cap)
			errno = EIO;
		return -1;
	}
	*off = next;
	return (long)len;
}

int spool_copy(const struct spool *s, ev_output *out, int *werr, unsigned char *buf, size_t cap)
{
	*werr = 0;
	if (spool_in_memory(s))
		return s->len && (*werr = ev_output_write(out, s->buf, s->len)) ? -1 : 0;
	uint64_t off = s->first;
	for (;;) {
		long n = spool_next_block(s, &off, buf, cap);
		if (n < 0)
			return -1;
		if (n == 0)
			return 0;
		if ((*werr = ev_output_write(out, buf, (size_t)n)))
			return -1;
	}
}

int goal_copy_file(const char *path, ev_output *out, int *werr, unsigned char *buf, size_t cap)
{
	*werr = 0;
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	for (;;) {
		ssize_t n = read(fd, buf, cap);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			int e = errno;
			close(fd);
			errno = e;
			return -1;
		}
		if (n == 0)
			break;
		int rc = ev_output_write(out, buf, (size_t)n);
		if (rc) {
			*werr = rc;
			close(fd);
			return -1;
		}
	}
	close(fd);
	return 0;
}
