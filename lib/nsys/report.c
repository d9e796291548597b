/* SPDX-License-Identifier: MIT */
/*
 * report.c - errors and warnings of the nsys reader without printing: the
 * first error's message is kept for ev_nsys_errmsg(); warnings go to the
 * caller's callback; per-row problems are counted per file and kind and
 * said once, with the count and the first row, when the pass ends.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "internal.h"

int nsys_fail(struct ev_nsys *s, int status, const char *fmt, ...)
{
	if (!s->err[0]) {
		va_list ap;
		va_start(ap, fmt);
		vsnprintf(s->err, sizeof s->err, fmt, ap);
		va_end(ap);
	}
	return status ? status : EV_ERR_FORMAT;
}

int nsys_nomem(struct ev_nsys *s)
{
	return nsys_fail(s, EV_ERR_NOMEM, "out of memory");
}

void nsys_warn(struct ev_nsys *s, const char *fmt, ...)
{
	char msg[1024];
	va_list ap;
	if (!s->o.warn)
		return;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	s->o.warn(s->o.ctx, msg);
}

/* A failed write: the message names the output as the tools do. */
int nsys_write_status(struct ev_nsys *s, int rc)
{
	if (rc == EV_OK || rc == EV_ERR_PIPE)
		return rc;
	if (rc == EV_ERR_NOMEM)
		return nsys_nomem(s);
	/* Only a string can pass the line limit: the export's, named where
	 * it was met. */
	if (rc == EV_ERR_LIMIT && s->at_row)
		return nsys_fail(s, rc, "%s: %s: row %llu: a string longer than an ev line may be (%zu bytes, "
		                 "the readers' limit): refusing to write what readers reject",
		                 s->files[s->at_file].path, nsys_cur_table[s->at_kind], (unsigned long long)s->at_row,
		                 (size_t)EV_LINE_MAX);
	if (rc == EV_ERR_LIMIT)
		return nsys_fail(s, rc, "a string of the export is longer than an ev line may be (%zu bytes, the "
		                 "readers' limit): refusing to write what readers reject", (size_t)EV_LINE_MAX);
	const char *name = s->w ? ev_output_name(ev_writer_output(s->w)) : "output";
	if (rc == EV_ERR_IO && errno)
		return nsys_fail(s, rc, "%s: %s", name, strerror(errno));
	return nsys_fail(s, rc, "%s: %s", name, ev_strerror(rc));
}

void nsys_note(struct ev_nsys *s, struct file *f, enum nsys_warn_kind k, const char *table, uint64_t row)
{
	(void)s;
	if (f->warn_count[k]++ == 0) {
		f->warn_row[k] = row;
		f->warn_table[k] = table;
	}
}

void nsys_notes_flush(struct ev_nsys *s)
{
	static const char *const what[NWARN] = {
		[W_BAD_TIME] = "start is not an integer; row left out (it cannot be placed in time)",
		[W_BAD_END] = "end is not an integer or before start; duration 0",
		[W_SAT_TIME] = "start overflows with the UTC offset; row left out",
		[W_NO_STRING] = "string id not in StringIds; empty name",
		[W_BAD_UTC] = "utcEpochNs or systemClockNs is not an integer or not a plausible UTC time; the trace clock is used",
		[W_BAD_INT] = "a number is not an integer (id, size, grid or pid); read as 0",
		[W_BAD_STREAM] = "streamId is outside 0..2^32-1; stream 0",
	};
	for (int i = 0; i < s->nfiles; i++) {
		struct file *f = &s->files[i];
		for (int k = 0; k < NWARN; k++) {
			if (!f->warn_count[k])
				continue;
			if (f->warn_row[k])
				nsys_warn(s, "%s: %s: %llu row%s: %s (first: row %llu)", f->path, f->warn_table[k],
				          (unsigned long long)f->warn_count[k], f->warn_count[k] == 1 ? "" : "s", what[k],
				          (unsigned long long)f->warn_row[k]);
			else
				nsys_warn(s, "%s: %s: %s", f->path, f->warn_table[k], what[k]);
			f->warn_count[k] = 0;
		}
	}
}

uint64_t nsys_key3(uint64_t a, uint64_t b, uint64_t c)
{
	unsigned char buf[24];
	ev_put64(buf, a);
	ev_put64(buf + 8, b);
	ev_put64(buf + 16, c);
	uint64_t h = ev_hash64(buf, sizeof buf);
	return h ? h : 1;
}

int nsys_intern(struct ev_nsys *s, const char *text, size_t len, uint64_t *id)
{
	return ev_strtab_intern(s->st, text, len, id);
}

uint32_t nsys_pid_of(int64_t global)
{
	return (uint32_t)(((uint64_t)global >> 24) & 0xFFFFFF);
}
