/* SPDX-License-Identifier: MIT */
/*
 * spool.c - append-only spool files for the rank parts of a GOAL schedule:
 * a buffer per file, written in large blocks; only so many descriptors are
 * kept open at once, since a schedule may have more ranks than the process
 * may open files.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <unistd.h>

#include "goal_int.h"

static int open_fds, max_open_fds = 256;

void spool_fd_budget(void)
{
	struct rlimit rl;
	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY && rl.rlim_cur > 64)
		max_open_fds = (int)(rl.rlim_cur - 32) < 1024 ? (int)(rl.rlim_cur - 32) : 1024;
}

int goal_write_all(int fd, const void *buf, size_t n)
{
	const char *p = buf;
	while (n) {
		ssize_t w = write(fd, p, n);
		if (w < 0) {
			if (errno == EINTR)
				continue;
			return -1;
		}
		p += w;
		n -= (size_t)w;
	}
	return 0;
}

int spool_flush(struct spool *s)
{
	if (!s->len)
		return 0;
	if (s->fd < 0) {
		s->fd = open(s->path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
		if (s->fd < 0)
			return -1;
		open_fds++;
	}
	if (goal_write_all(s->fd, s->buf, s->len))
		return -1;
	s->bytes += s->len;
	s->len = 0;
	/* Many ranks: keep only so many descriptors open. */
	if (open_fds > max_open_fds) {
		close(s->fd);
		s->fd = -1;
		open_fds--;
	}
	return 0;
}

int spool_close(struct spool *s)
{
	int rc = spool_flush(s);
	if (s->fd >= 0) {
		if (close(s->fd) && !rc)
			rc = -1;
		s->fd = -1;
		open_fds--;
	}
	return rc;
}

int spool_finish(struct spool *s)
{
	if (spool_in_memory(s) && s->fd < 0)
		return 0;
	return spool_close(s);
}

int spool_init(struct spool *s, const char *dir, const char *name, uint32_t rank, size_t cap)
{
	memset(s, 0, sizeof *s);
	s->fd = -1;
	size_t n = strlen(dir) + strlen(name) + 32;
	s->path = malloc(n);
	s->buf = malloc(cap);
	if (!s->path || !s->buf)
		return -1;
	snprintf(s->path, n, "%s/%s%u", dir, name, rank);
	s->cap = cap;
	return 0;
}

void spool_free(struct spool *s, int remove)
{
	if (s->fd >= 0) {
		close(s->fd);
		open_fds--;
		s->fd = -1;
	}
	if (remove && s->path)
		unlink(s->path);
	free(s->path);
	free(s->buf);
	s->path = NULL;
	s->buf = NULL;
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
