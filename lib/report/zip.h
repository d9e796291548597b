/* SPDX-License-Identifier: MIT */
/*
 * zip.h - a zip archive written front to back into an ev_output (a pipe
 * will do): each member deflated as it is written, its CRC and sizes in a
 * data descriptor after it, the central directory at the end.  Memory is
 * the deflate state, one buffer and one directory entry per member.
 * Archives and members stay under 4 GiB (no zip64): EV_ERR_LIMIT past it.
 */
#ifndef EV_REPORT_ZIP_H
#define EV_REPORT_ZIP_H

#include <stddef.h>
#include <stdint.h>

#include "ev/stream.h"

typedef struct ev_zip ev_zip;

/* An archive into out (not owned); dos_time/dos_date stamp every member.
 * out NULL: members apart, deflated into memory without headers or a
 * directory, for ev_zip_take to add to an archive (on another thread,
 * each member's deflating then runs beside the archive's). */
int ev_zip_open(ev_zip **z, ev_output *out, uint16_t dos_time, uint16_t dos_date) EV_RESULT_USED;
/* Start a member (ends the one before, if any). */
int ev_zip_begin(ev_zip *z, const char *name) EV_RESULT_USED;
/* Bytes of the current member. */
int ev_zip_write(ev_zip *z, const void *p, size_t n) EV_RESULT_USED;
/* Members so far (the current one included). */
size_t ev_zip_members(const ev_zip *z);
/* Member i of from (members apart, i ended: ev_zip_finish ends the last)
 * as a new member named name of z, its deflated bytes copied as they are. */
int ev_zip_take(ev_zip *z, ev_zip *from, size_t i, const char *name) EV_RESULT_USED;
/* End the current member, write the directory; out stays open. */
int ev_zip_finish(ev_zip *z) EV_RESULT_USED;
void ev_zip_free(ev_zip *z);

/* Unix seconds as a zip (MS-DOS) local time and date, in UTC. */
void ev_zip_dos_time(long long t, uint16_t *dos_time, uint16_t *dos_date);

#endif
