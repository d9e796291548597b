/* SPDX-License-Identifier: MIT */
/*
 * spool.c - standard input copied to a temporary file, so that alignment
 * can read it twice.  The file is registered for removal on a signal and
 * removed when the merge is freed.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "merge_int.h"

int merge_spool_stdin(ev_merge *m, struct merge_in *in)
{
	const char *dir = getenv("TMPDIR");
	const char *tmp = dir && *dir ? dir : "/tmp";
	char *path = malloc(4096);
	if (!path) {
		ev_say(&m->o.say, EV_SAY_ERROR, "out of memory");
		return EV_ERR_NOMEM;
	}
	snprintf(path, 4096, "%s/ev-merge-spool.XXXXXX", tmp);
	int fd = mkstemp(path);
	if (fd < 0) {
		int e = errno;
		free(path);
		ev_say(&m->o.say, EV_SAY_ERROR, "cannot create a spool file in %s: %s", tmp, strerror(e));
		return EV_ERR_IO;
	}
	in->spool = path;
	in->spool_slot = ev_temp_register(path);
	ev_input *src;
	int rc = ev_input_fdopen(&src, STDIN_FILENO, 0, "standard input");
	if (rc) {
		close(fd);
		ev_say_file(&m->o.say, "standard input", rc);
		return rc;
	}
	char buf[1 << 16];
	long got;
	while ((got = ev_input_read(src, buf, sizeof buf)) > 0)
		if (write(fd, buf, (size_t)got) != got) {
			int e = errno;
			ev_input_close(src);
			close(fd);
			ev_say(&m->o.say, EV_SAY_ERROR, "%s: %s", path, strerror(e));
			return EV_ERR_IO;
		}
	ev_input_close(src);
	if (close(fd) != 0 || got < 0) {
		ev_say(&m->o.say, EV_SAY_ERROR, "standard input: %s", got < 0 ? ev_strerror((int)got) : strerror(errno));
		return got < 0 ? (int)got : EV_ERR_IO;
	}
	return EV_OK;
}

void merge_spool_remove(struct merge_in *in)
{
	if (!in->spool)
		return;
	unlink(in->spool);
	ev_temp_unregister(in->spool_slot);
	free(in->spool);
	in->spool = NULL;
}
