/* SPDX-License-Identifier: MIT */
/*
 * ev_output.c - buffered output to standard output or to a file that is
 * written under a temporary name and renamed into place only on success,
 * so an interrupted or failed run never leaves a partial result behind.
 *
 * To a regular file the bytes go in whole blocks of OUT_BUF at offsets
 * that are multiples of it, so that the page cache can hold the file in
 * large folios, and the next tool reads it back faster (docs/ev2goal.md).
 * A record that crosses a block boundary goes into the buffer's slack, and
 * the few bytes past the boundary move to the front after the block is
 * written.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ev/stream.h"
#include "internal.h"

#define OUT_BUF (1u << 18)
#define OUT_SLACK (1u << 16) /* past a block boundary: the largest reservation that may cross it */
#define TEMP_BLOCK 256

/* Temp names still open, for removal from a signal handler.  Blocks of
 * slots are only ever added, each fully initialised before it is linked,
 * and never freed while the process runs, so the handler can walk them at
 * any moment; there is no limit but memory. */
struct temp_block {
	char *volatile path[TEMP_BLOCK];
	struct temp_block *volatile next;
};
static struct temp_block first_block;

int ev_temp_register(char *path)
{
	int base = 0;
	for (struct temp_block *b = &first_block;; b = b->next, base += TEMP_BLOCK) {
		for (int i = 0; i < TEMP_BLOCK; i++)
			if (!b->path[i]) {
				b->path[i] = path;
				return base + i;
			}
		if (!b->next) {
			if (base > INT_MAX - 2 * TEMP_BLOCK)
				return -1;
			struct temp_block *nb = calloc(1, sizeof *nb);
			if (!nb)
				return -1;
			b->next = nb;
		}
	}
}

void ev_temp_unregister(int slot)
{
	if (slot < 0)
		return;
	struct temp_block *b = &first_block;
	for (; b && slot >= TEMP_BLOCK; slot -= TEMP_BLOCK)
		b = b->next;
	if (b)
		b->path[slot] = NULL;
}

void ev_output_abort_all_signal(void)
{
	for (struct temp_block *b = &first_block; b; b = b->next)
		for (int i = 0; i < TEMP_BLOCK; i++) {
			char *p = b->path[i];
			if (p)
				unlink(p);
		}
}

/* Outputs open now, for the same-file check of inputs opened later. */
static struct ev_output *open_outputs;

int ev_output_replaces(dev_t dev, ino_t ino)
{
	for (const struct ev_output *o = open_outputs; o; o = o->next_open)
		if (o->replaces && o->dev == dev && o->ino == ino)
			return o->replaces;
	return EV_OK;
}

static void forget_open(struct ev_output *o)
{
	for (struct ev_output **p = &open_outputs; *p; p = &(*p)->next_open)
		if (*p == o) {
			*p = o->next_open;
			return;
		}
}

static int open_temp(ev_output *o, const char *path, const struct stat *old)
{
	const char *slash = strrchr(path, '/');
	size_t dirlen = slash ? (size_t)(slash - path) + 1 : 0;
	const char *base = slash ? slash + 1 : path;
	/* ".<base>.XXXXXX" must still fit a file name (NAME_MAX): a long base
	 * is shortened in the temp name only. */
	size_t blen = strlen(base);
	if (blen > NAME_MAX - 8)
		blen = NAME_MAX - 8;
	size_t n = dirlen + blen + 16;
	o->tmp = malloc(n);
	if (!o->tmp)
		return EV_ERR_NOMEM;
	snprintf(o->tmp, n, "%.*s.%.*s.XXXXXX", (int)dirlen, path, (int)blen, base);
	o->fd = mkostemp(o->tmp, O_CLOEXEC);
	if (o->fd < 0)
		return EV_ERR_IO;
	o->temp_slot = ev_temp_register(o->tmp);
	/* mkstemp makes 0600: a replaced file keeps its mode, a new one gets
	 * the usual mode. */
	if (old) {
		fchmod(o->fd, old->st_mode & 07777);
	} else {
		mode_t mask = umask(0);
		umask(mask);
		fchmod(o->fd, 0666 & ~mask);
	}
	return EV_OK;
}

/* The file to replace: a symlink's target (so the link stays a link), else
 * path itself.  Returns a malloc'd string or NULL. */
static char *target_of(const char *path)
{
	struct stat lst;
	if (lstat(path, &lst) == 0 && S_ISLNK(lst.st_mode)) {
		char *real = realpath(path, NULL);
		if (real)
			return real;
		/* A dangling link: create the file it names. */
		char link[PATH_MAX];
		ssize_t n = readlink(path, link, sizeof link - 1);
		if (n > 0) {
			link[n] = '\0';
			const char *slash = strrchr(path, '/');
			size_t dirlen = link[0] == '/' || !slash ? 0 : (size_t)(slash - path) + 1;
			char *t = malloc(dirlen + (size_t)n + 1);
			if (t)
				snprintf(t, dirlen + (size_t)n + 1, "%.*s%s", (int)dirlen, path, link);
			return t;
		}
	}
	return strdup(path);
}

/* Does path (/dev/stdout, /dev/fd/1, /proc/self/fd/1, or the file's own
 * name) lead to the regular file standard output writes?  Then standard
 * output is written in place, where it stands (`>>` appends): a file
 * renamed over it would leave the shell's descriptor on the old file and
 * lose what the redirection holds. */
static int names_stdout(const char *path)
{
	struct stat ps, os;
	int e = errno;
	int same = stat(path, &ps) == 0 && S_ISREG(ps.st_mode) && fstat(STDOUT_FILENO, &os) == 0 &&
	           ps.st_dev == os.st_dev && ps.st_ino == os.st_ino;
	errno = e;
	return same;
}

int ev_output_open(ev_output **out, const char *path)
{
	ev_output *o = calloc(1, sizeof *o);
	struct stat st;
	int rc = EV_OK;
	*out = NULL;
	if (!o)
		return EV_ERR_NOMEM;
	o->fd = -1;
	o->temp_slot = -1;
	o->cap = o->alloc = OUT_BUF;
	o->buf = malloc(OUT_BUF + OUT_SLACK);
	if (!o->buf) {
		rc = EV_ERR_NOMEM;
		goto fail;
	}
	if (!path || strcmp(path, "-") == 0 || names_stdout(path)) {
		o->fd = STDOUT_FILENO;
		o->keep_fd = 1;
		o->name = strdup(path && strcmp(path, "-") != 0 ? path : "standard output");
		/* `tool x >> x`: standard output is one of the inputs, read
		 * already or to be read later; either way, refused before a byte
		 * is written. */
		if ((rc = ev_files_check_output_fd(o->fd)) != EV_OK) {
			errno = 0;
			goto fail;
		}
		if (fstat(o->fd, &st) == 0 && S_ISREG(st.st_mode)) {
			o->replaces = EV_ERR_SAMEOUT;
			o->dev = st.st_dev;
			o->ino = st.st_ino;
			o->next_open = open_outputs;
			open_outputs = o;
		}
	} else {
		o->path = target_of(path);
		o->name = strdup(path);
		if (!o->path || !o->name) {
			rc = EV_ERR_NOMEM;
			goto fail;
		}
		if ((rc = ev_files_check_output(o->path)) != EV_OK) {
			errno = 0;
			goto fail;
		}
		/* A pipe or terminal reached through /dev/fd/N or /proc/self/fd/N
		 * has no name to resolve (its link reads "pipe:[N]"): the path
		 * itself is what to open. */
		int exists = stat(o->path, &st) == 0 || (stat(path, &st) == 0 && !S_ISREG(st.st_mode));
		if (exists && !S_ISREG(st.st_mode)) {
			/* Devices and FIFOs (/dev/null, /dev/full) cannot be renamed over. */
			o->direct = 1;
			o->fd = open(path, O_WRONLY | O_CLOEXEC);
			if (o->fd < 0) {
				rc = EV_ERR_IO;
				goto fail;
			}
		} else if ((rc = open_temp(o, o->path, exists ? &st : NULL)) != EV_OK) {
			goto fail;
		} else if (exists) {
			o->replaces = EV_ERR_SAMEFILE;
			o->dev = st.st_dev;
			o->ino = st.st_ino;
			o->next_open = open_outputs;
			open_outputs = o;
		}
	}
	if (!o->name) {
		rc = EV_ERR_NOMEM;
		goto fail;
	}
	if (fstat(o->fd, &st) == 0 && S_ISFIFO(st.st_mode))
		(void)fcntl(o->fd, F_SETPIPE_SZ, 1 << 20); /* fewer context switches */
	if (fstat(o->fd, &st) == 0 && S_ISREG(st.st_mode)) {
		/* Where the writes start (standard output may be open at any
		 * offset, or for appending). */
		off_t at = (fcntl(o->fd, F_GETFL) & O_APPEND) ? st.st_size : lseek(o->fd, 0, SEEK_CUR);
		if (at >= 0) {
			o->block = OUT_BUF;
			o->alloc = OUT_BUF + OUT_SLACK;
			o->pos = (uint64_t)at;
			o->cap = OUT_BUF - (size_t)(o->pos % OUT_BUF);
		}
	}
	*out = o;
	return EV_OK;
fail:;
	int e = errno;
	ev_output_abort(o);
	errno = e;
	return rc;
}

/* A write that failed (errno set): sticky, a closed pipe told apart. */
static int write_failed(ev_output *o)
{
	o->saved_errno = errno;
	o->err = errno == EPIPE ? EV_ERR_PIPE : EV_ERR_IO;
	return o->err;
}

/* Everything in the buffer. */
static int flush_buf(ev_output *o)
{
	if (o->err)
		return o->err;
	int rc = ev_write_all(o->fd, o->buf, o->len);
	o->pos += o->len;
	o->len = 0;
	if (o->block)
		o->cap = o->block - (size_t)(o->pos % o->block);
	return rc ? write_failed(o) : EV_OK;
}

/* Block mode, len >= cap: the bytes up to each block boundary, the rest
 * (the part of a reservation past the boundary) moved to the front; then
 * len < cap. */
static int flush_block(ev_output *o)
{
	if (o->err)
		return o->err;
	size_t w = 0;
	while (o->len - w >= o->cap) {
		if (ev_write_all(o->fd, o->buf + w, o->cap))
			return write_failed(o);
		w += o->cap;
		o->pos += o->cap;
		o->cap = o->block;
	}
	memmove(o->buf, o->buf + w, o->len - w);
	o->len -= w;
	return EV_OK;
}

int ev_output_flush(ev_output *o)
{
	int rc = flush_buf(o);
	if (rc)
		errno = o->saved_errno;
	return rc;
}

char *ev_output_reserve(ev_output *o, size_t n)
{
	if (o->len + n <= o->cap)
		return o->buf + o->len;
	if (o->block) {
		if (o->len >= o->cap && flush_block(o))
			return NULL;
		/* Across the boundary, into the slack. */
		if (o->len + n <= o->alloc)
			return o->buf + o->len;
	}
	/* Larger than the slack: everything out, the buffer grown if need be
	 * (the next block is shorter and the file aligned again). */
	if (flush_buf(o))
		return NULL;
	if (n > o->alloc) {
		char *nb = realloc(o->buf, n);
		if (!nb) {
			o->err = EV_ERR_NOMEM;
			return NULL;
		}
		o->buf = nb;
		o->alloc = n;
		if (!o->block)
			o->cap = n;
	}
	return o->buf + o->len;
}

void ev_output_commit(ev_output *o, size_t used) { o->len += used; }

int ev_output_write(ev_output *o, const void *data, size_t n)
{
	if (o->err)
		return o->err;
	if (o->len + n <= o->cap) {
		memcpy(o->buf + o->len, data, n);
		o->len += n;
		return EV_OK;
	}
	if (!o->block) {
		if (flush_buf(o))
			return o->err;
		if (n >= o->cap) {
			/* Large writes bypass the buffer. */
			return ev_write_all(o->fd, data, n) ? write_failed(o) : EV_OK;
		}
		memcpy(o->buf, data, n);
		o->len = n;
		return EV_OK;
	}
	/* Block mode: the buffer up to each boundary; whole blocks straight
	 * from data once the buffer is empty at a boundary. */
	const char *d = data;
	while (n) {
		if (o->len >= o->cap && flush_block(o))
			return o->err;
		if (o->len == 0 && o->cap == o->block && n >= o->block) {
			size_t w = n - n % o->block;
			if (ev_write_all(o->fd, d, w))
				return write_failed(o);
			o->pos += w;
			d += w;
			n -= w;
			continue;
		}
		size_t k = o->cap - o->len < n ? o->cap - o->len : n;
		memcpy(o->buf + o->len, d, k);
		o->len += k;
		d += k;
		n -= k;
	}
	return EV_OK;
}

int ev_output_putc(ev_output *o, int c)
{
	if (o->len + 1 > o->cap && !ev_output_reserve(o, 1))
		return o->err ? o->err : EV_ERR_NOMEM;
	o->buf[o->len++] = (char)c;
	return EV_OK;
}

static int put_bytes(void *ctx, const char *text, size_t len)
{
	return ev_output_write(ctx, text, len);
}

int ev_output_printf(ev_output *o, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	int rc = ev_vformat(put_bytes, o, fmt, ap);
	va_end(ap);
	return rc;
}

int ev_output_is_tty(const ev_output *o) { return isatty(o->fd); }
const char *ev_output_name(const ev_output *o) { return o->name; }

static void release(ev_output *o)
{
	forget_open(o);
	ev_temp_unregister(o->temp_slot);
	free(o->tmp);
	free(o->path);
	free(o->name);
	free(o->buf);
	free(o);
}

int ev_output_fdopen(ev_output **out, int fd, const char *name)
{
	ev_output *o = calloc(1, sizeof *o);
	*out = NULL;
	if (!o)
		return EV_ERR_NOMEM;
	o->fd = fd;
	o->keep_fd = 1;
	o->temp_slot = -1;
	o->cap = o->alloc = OUT_BUF;
	o->buf = malloc(OUT_BUF + OUT_SLACK);
	o->name = strdup(name);
	if (!o->buf || !o->name) {
		release(o);
		return EV_ERR_NOMEM;
	}
	*out = o;
	return EV_OK;
}

int ev_output_close(ev_output *o)
{
	int rc = flush_buf(o);
	int e = o->saved_errno;
	if (o->keep_fd) {
		/* ev_cli_finish closes stdout and reports delayed errors; any
		 * other kept descriptor is the caller's to close. */
	} else {
		if (close(o->fd) != 0 && rc == EV_OK) {
			e = errno;
			rc = EV_ERR_IO;
		}
		o->fd = -1;
		if (o->tmp) {
			if (rc == EV_OK && rename(o->tmp, o->path) != 0) {
				e = errno;
				rc = EV_ERR_IO;
			}
			if (rc != EV_OK)
				unlink(o->tmp);
		}
	}
	release(o);
	errno = e;
	return rc;
}

void ev_output_abort(ev_output *o)
{
	if (!o)
		return;
	if (!o->keep_fd && o->fd >= 0)
		close(o->fd);
	if (o->tmp && o->fd >= 0)
		unlink(o->tmp);
	else if (o->tmp && o->temp_slot >= 0)
		unlink(o->tmp);
	release(o);
}
