/* SPDX-License-Identifier: MIT */
/*
 * spool.c - the rank parts of a GOAL schedule while it is being built.
 *
 * All spools of a builder write blocks to one temporary file that is
 * unlinked the moment it is made: a signal or a crash leaves nothing
 * behind, and the cost does not depend on the number of ranks (a file per
 * rank part costs a file system's metadata work per rank).  Each
 * spool buffers its bytes and writes them as one block when the buffer is
 * full.  A block's slot in the file is the buffer's size and the header of
 * each block names the slot taken for the next one: reading a part back
 * follows the chain, a spool's memory is its buffer and two offsets, and a
 * block costs one write and one read (header and payload together; a chain
 * patched when the next block was written cost three writes and two
 * reads).  A spool's last slot is taken but never written: a hole.
 *
 * A slot is a power of two, starts at a multiple of its size and is
 * written whole, header and buffer in one piece: the page cache can then
 * hold it in one large folio instead of 4 KiB pages, which writes, reads
 * back and frees faster (docs/ev2goal.md); a slot of a buffer plus a
 * header would never be aligned.  The holes between slots of different
 * sizes cost neither memory nor disk.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/uio.h>
#include <unistd.h>

#include "goal_int.h"

/* n bytes at off; a short transfer (a signal, a full disk on the way)
 * goes on from where it stopped. */
static int pwrite_all(int fd, const unsigned char *p, size_t n, uint64_t off)
{
	size_t done = 0;
	while (done < n) {
		ssize_t w = pwrite(fd, p + done, n - done, (off_t)(off + done));
		if (w < 0) {
			if (errno == EINTR)
				continue;
			return -1;
		}
		done += (size_t)w;
	}
	return 0;
}

/* At least `need` bytes of the header and up to cap bytes of payload at
 * off; returns the bytes read past the header. */
static long pread2(int fd, unsigned char *h, unsigned char *p, size_t cap, size_t need, uint64_t off)
{
	size_t done = 0;
	while (done < need) {
		struct iovec v[2];
		int nv = 0;
		if (done < SPOOL_HDR) {
			v[nv].iov_base = h + done;
			v[nv++].iov_len = SPOOL_HDR - done;
			v[nv].iov_base = p;
			v[nv++].iov_len = cap;
		} else {
			v[nv].iov_base = p + (done - SPOOL_HDR);
			v[nv++].iov_len = cap - (done - SPOOL_HDR);
		}
		ssize_t r = preadv(fd, v, nv, (off_t)(off + done));
		if (r < 0) {
			if (errno == EINTR)
				continue;
			return -1;
		}
		if (r == 0) {
			errno = EIO; /* the spool is shorter than its chain says */
			return -1;
		}
		done += (size_t)r;
		if (done >= SPOOL_HDR && need == SPOOL_HDR) {
			/* The header is in: now the payload it announces. */
			uint32_t len = le_get32(h + 8);
			if (len > cap) {
				errno = EIO;
				return -1;
			}
			need = SPOOL_HDR + len;
		}
	}
	return (long)(done - SPOOL_HDR);
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

int spool_init(struct spool *s, struct spoolfile *f, struct goal_arena *a, size_t slot)
{
	memset(s, 0, sizeof *s);
	if (slot < 2 * SPOOL_HDR || (slot & (slot - 1))) {
		errno = EINVAL;
		return -1;
	}
	s->f = f;
	s->a = a;
	s->first = s->next = SPOOL_NONE;
	s->cap = slot - SPOOL_HDR;
	/* Zeroed: the end of a slot past a block's payload is written too. */
	unsigned char *m = goal_arena_alloc(a, slot, 1);
	if (!m)
		return -1;
	s->buf = m + SPOOL_HDR;
	return 0;
}

/* A slot for a block of this spool: the first multiple of its size at or
 * after the end of the file. */
static uint64_t take_slot(struct spool *s)
{
	uint64_t slot = SPOOL_HDR + s->cap;
	uint64_t at = (s->f->end + slot - 1) & ~(slot - 1);
	s->f->end = at + slot;
	return at;
}

int spool_flush(struct spool *s)
{
	if (!s->len)
		return 0;
	uint64_t at = s->next != SPOOL_NONE ? s->next : take_slot(s);
	uint64_t next = take_slot(s);
	unsigned char *h = s->buf - SPOOL_HDR;
	le_put64(h, next);
	le_put32(h + 8, (uint32_t)s->len);
	le_put32(h + 12, 0);
	/* The whole slot, whatever the payload's length (see above). */
	if (pwrite_all(s->f->fd, h, SPOOL_HDR + s->cap, at))
		return -1;
	if (s->first == SPOOL_NONE)
		s->first = at;
	s->next = next;
	s->bytes += s->len;
	s->len = 0;
	return 0;
}

int spool_finish(struct spool *s)
{
	return spool_in_memory(s) ? 0 : spool_flush(s);
}

void spool_iter_start(const struct spool *s, struct spool_iter *it)
{
	it->off = s->first;
	it->left = s->bytes;
}

long spool_next_block(const struct spool *s, struct spool_iter *it, unsigned char *buf, size_t cap)
{
	if (!it->left)
		return 0;
	unsigned char h[SPOOL_HDR];
	/* A full block but for the last: read a whole slot at once. */
	size_t want = it->left < s->cap ? (size_t)it->left : s->cap;
	if (want > cap) {
		errno = EIO;
		return -1;
	}
	long n = pread2(s->f->fd, h, buf, want, SPOOL_HDR, it->off);
	if (n < 0)
		return -1;
	uint32_t len = le_get32(h + 8);
	if (len == 0 || len > it->left || (size_t)n < len) {
		errno = EIO;
		return -1;
	}
	it->off = (uint64_t)le_get32(h) | (uint64_t)le_get32(h + 4) << 32;
	it->left -= len;
	return (long)len;
}

int spool_copy(const struct spool *s, ev_output *out, int *werr, unsigned char *buf, size_t cap)
{
	*werr = 0;
	if (spool_in_memory(s))
		return s->len && (*werr = ev_output_write(out, s->buf, s->len)) ? -1 : 0;
	struct spool_iter it;
	spool_iter_start(s, &it);
	for (;;) {
		long n = spool_next_block(s, &it, buf, cap);
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
