/* SPDX-License-Identifier: MIT */
/*
 * ev_say.c - messages handed to the caller: the library prints nothing, so
 * an error, a warning or a note is formatted here and given to the caller's
 * function as it arises.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ev/stream.h"

void ev_say(const struct ev_say *s, enum ev_say_kind kind, const char *fmt, ...)
{
	if (!s || !s->fn)
		return;
	/* Messages quote paths and #src lines of any length: one longer than
	 * the buffer is formatted again in memory of its size, not cut. */
	char buf[2048], *text = buf;
	va_list ap, aq;
	va_start(ap, fmt);
	va_copy(aq, ap);
	int n = vsnprintf(buf, sizeof buf, fmt, ap);
	if (n >= (int)sizeof buf && (text = malloc((size_t)n + 1)) != NULL)
		vsnprintf(text, (size_t)n + 1, fmt, aq);
	va_end(aq);
	va_end(ap);
	s->fn(s->ctx, kind, text ? text : buf);
	if (text != buf)
		free(text);
}

void ev_say_file(const struct ev_say *s, const char *name, int status)
{
	/* errno first: formatting must not be what it reports. */
	int e = errno;
	if (status == EV_ERR_PIPE)
		return;
	if (status == EV_ERR_IO && e)
		ev_say(s, EV_SAY_ERROR, "%s: %s", name, strerror(e));
	else
		ev_say(s, EV_SAY_ERROR, "%s: %s", name, ev_strerror(status));
}

void ev_say_reader(const struct ev_say *s, const ev_reader *r, int status)
{
	if (status == EV_ERR_PIPE)
		return;
	const char *d = ev_reader_errdetail(r);
	ev_say(s, EV_SAY_ERROR, "%s: %s", ev_reader_name(r), d && *d ? d : ev_strerror(status));
}
