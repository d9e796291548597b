/* SPDX-License-Identifier: MIT */
/*
 * ev_files.c - inputs are sacred: the files this process reads, by device
 * and inode, and the files its open outputs will replace, so that
 * `tool -o x x` (or through a symlink, or `tool -o x < x`) fails before
 * anything is written instead of renaming the result over the trace, and
 * `tool x >> x` fails instead of reading its own output without end.
 * Memory grows with the number of distinct files, not with their size.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "ev/stream.h"
#include "internal.h"

/* The change time tells a file from a later one that got the same inode
 * number after the first was deleted (a long-running process, a fuzzer,
 * spool files read back and removed). */
struct file_id { dev_t dev; ino_t ino; struct timespec ctime; };

static struct file_id *inputs;
static size_t n_inputs, cap_inputs;

static int known_input(const struct stat *st)
{
	for (size_t i = 0; i < n_inputs; i++)
		if (inputs[i].dev == st->st_dev && inputs[i].ino == st->st_ino &&
		    inputs[i].ctime.tv_sec == st->st_ctim.tv_sec && inputs[i].ctime.tv_nsec == st->st_ctim.tv_nsec)
			return 1;
	return 0;
}

static int add_input(const struct stat *st)
{
	/* Pipes, terminals and devices cannot be overwritten by a rename. */
	if (!S_ISREG(st->st_mode) || known_input(st))
		return EV_OK;
	if (n_inputs == cap_inputs) {
		size_t nc = cap_inputs ? cap_inputs * 2 : 16;
		struct file_id *ni = realloc(inputs, nc * sizeof *ni);
		if (!ni)
			return EV_ERR_NOMEM;
		inputs = ni;
		cap_inputs = nc;
	}
	inputs[n_inputs].dev = st->st_dev;
	inputs[n_inputs].ino = st->st_ino;
	inputs[n_inputs].ctime = st->st_ctim;
	n_inputs++;
	return EV_OK;
}

int ev_files_note_input(int fd)
{
	struct stat st;
	if (fstat(fd, &st) != 0)
		return EV_OK; /* nothing to protect that we can name */
	int same = ev_output_replaces(st.st_dev, st.st_ino);
	return same ? same : add_input(&st);
}

int ev_files_note_input_path(const char *path)
{
	struct stat st;
	if (!path || strcmp(path, "-") == 0 || stat(path, &st) != 0)
		return EV_OK;
	int same = ev_output_replaces(st.st_dev, st.st_ino);
	return same ? same : add_input(&st);
}

int ev_files_check_output(const char *path)
{
	struct stat st;
	int e = errno;
	if (!path || strcmp(path, "-") == 0 || stat(path, &st) != 0) {
		errno = e;
		return EV_OK; /* a new file cannot be an input */
	}
	return S_ISREG(st.st_mode) && known_input(&st) ? EV_ERR_SAMEFILE : EV_OK;
}

int ev_files_check_output_fd(int fd)
{
	struct stat st;
	int e = errno;
	if (fstat(fd, &st) != 0) {
		errno = e;
		return EV_OK; /* a closed descriptor: the write reports it */
	}
	return S_ISREG(st.st_mode) && known_input(&st) ? EV_ERR_SAMEOUT : EV_OK;
}
