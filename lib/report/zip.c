/* SPDX-License-Identifier: MIT */
/*
 * zip.c - a zip archive written in one pass.  See zip.h.
 *
 * A member's local header says "sizes follow" (flag bit 3) and a data
 * descriptor after its data gives the CRC-32 and both sizes, so nothing is
 * ever seeked back to: the output may be a pipe.  The central directory
 * repeats them; readers (Excel, LibreOffice, Python's zipfile) go by it.
 * Deflate is ISA-L's level 1, its fastest that still finds repeats: a
 * workbook's XML is mostly repeats, and its writing time is what a user
 * waits on after the tables are done.
 */
#include "zip.h"

#include <isa-l/crc.h>
#include <isa-l/igzip_lib.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define ZIP_BUF 65536u
#define ZIP_MAX 0xFFFFFFFFu

struct zentry {
	char *name;
	uint32_t crc, csize, usize, offset;
};

struct ev_zip {
	ev_output *out;         /* NULL: members kept in mem, without headers */
	unsigned char *mem;
	size_t mcap;
	uint64_t at;            /* bytes written to out */
	uint16_t dtime, ddate;
	struct isal_zstream s;
	uint8_t *level_buf;
	unsigned char *in, *obuf;
	size_t nin;             /* bytes waiting in in */
	int open;               /* a member is being written */
	uint32_t crc;
	uint64_t usize, csize;
	struct zentry *e;
	size_t ne, ecap;
};

static void put16(unsigned char *p, unsigned v)
{
	p[0] = (unsigned char)v;
	p[1] = (unsigned char)(v >> 8);
}

static void put32(unsigned char *p, uint32_t v)
{
	put16(p, v & 0xFFFF);
	put16(p + 2, v >> 16);
}

static int out_write(ev_zip *z, const void *p, size_t n)
{
	if (z->at + n > ZIP_MAX)
		return EV_ERR_LIMIT;
	if (!z->out) {
		if (z->at + n > z->mcap) {
			size_t cap = z->mcap ? z->mcap : ZIP_BUF;
			while (cap < z->at + n)
				cap *= 2;
			unsigned char *m = realloc(z->mem, cap);
			if (!m)
				return EV_ERR_NOMEM;
			z->mem = m;
			z->mcap = cap;
		}
		memcpy(z->mem + z->at, p, n);
		z->at += n;
		return EV_OK;
	}
	z->at += n;
	return ev_output_write(z->out, p, n);
}

void ev_zip_dos_time(long long t, uint16_t *dos_time, uint16_t *dos_date)
{
	struct tm tm;
	time_t tt = (time_t)t;
	if (t < 315532800 || !gmtime_r(&tt, &tm)) { /* before 1980: the format's first day */
		*dos_time = 0;
		*dos_date = (0 << 9) | (1 << 5) | 1;
		return;
	}
	if (tm.tm_year > 207) /* after 2107: its last */
		tm.tm_year = 207;
	*dos_time = (uint16_t)((tm.tm_hour << 11) | (tm.tm_min << 5) | (tm.tm_sec / 2));
	*dos_date = (uint16_t)(((tm.tm_year - 80) << 9) | ((tm.tm_mon + 1) << 5) | tm.tm_mday);
}

int ev_zip_open(ev_zip **zp, ev_output *out, uint16_t dos_time, uint16_t dos_date)
{
	ev_zip *z = calloc(1, sizeof *z);
	*zp = z;
	if (!z)
		return EV_ERR_NOMEM;
	z->out = out;
	z->dtime = dos_time;
	z->ddate = dos_date;
	z->level_buf = malloc(ISAL_DEF_LVL1_DEFAULT);
	z->in = malloc(ZIP_BUF);
	z->obuf = malloc(ZIP_BUF);
	if (!z->level_buf || !z->in || !z->obuf)
		return EV_ERR_NOMEM;
	return EV_OK;
}

/* Deflate what waits in in; with last, to the end of the member. */
static int deflate_some(ev_zip *z, int last)
{
	z->s.next_in = z->in;
	z->s.avail_in = (uint32_t)z->nin;
	z->s.end_of_stream = (uint16_t)last;
	for (;;) {
		z->s.next_out = z->obuf;
		z->s.avail_out = ZIP_BUF;
		if (isal_deflate(&z->s) != COMP_OK)
			return EV_ERR_FORMAT;
		size_t n = ZIP_BUF - z->s.avail_out;
		int rc;
		z->csize += n;
		if (n && (rc = out_write(z, z->obuf, n)) != EV_OK)
			return rc;
		if (last ? z->s.internal_state.state == ZSTATE_END : z->s.avail_in == 0)
			break;
	}
	z->nin = 0;
	return EV_OK;
}

static int end_member(ev_zip *z)
{
	unsigned char d[16];
	int rc;
	if (!z->open)
		return EV_OK;
	z->open = 0;
	if ((rc = deflate_some(z, 1)) != EV_OK)
		return rc;
	if (z->usize > ZIP_MAX || z->csize > ZIP_MAX)
		return EV_ERR_LIMIT;
	struct zentry *e = &z->e[z->ne - 1];
	e->crc = z->crc;
	e->csize = (uint32_t)z->csize;
	e->usize = (uint32_t)z->usize;
	if (!z->out)
		return EV_OK;
	put32(d, 0x08074b50);
	put32(d + 4, e->crc);
	put32(d + 8, e->csize);
	put32(d + 12, e->usize);
	return out_write(z, d, sizeof d);
}

/* A new entry for name at the current offset, and (with an output) its
 * local header; the entry's CRC and sizes come when it ends. */
static int new_entry(ev_zip *z, const char *name)
{
	unsigned char h[30];
	size_t len = strlen(name);
	int rc;
	if (len > 0xFFFF)
		return EV_ERR_ARG;
	if (z->ne == z->ecap) {
		size_t cap = z->ecap ? 2 * z->ecap : 16;
		struct zentry *e = realloc(z->e, cap * sizeof *e);
		if (!e)
			return EV_ERR_NOMEM;
		z->e = e;
		z->ecap = cap;
	}
	struct zentry *e = &z->e[z->ne];
	memset(e, 0, sizeof *e);
	if (!(e->name = strdup(name)))
		return EV_ERR_NOMEM;
	e->offset = (uint32_t)z->at;
	z->ne++;
	if (!z->out)
		return EV_OK;
	put32(h, 0x04034b50);
	put16(h + 4, 20);     /* version needed: 2.0, deflate */
	put16(h + 6, 1 << 3); /* CRC and sizes in the data descriptor */
	put16(h + 8, 8);      /* deflate */
	put16(h + 10, z->dtime);
	put16(h + 12, z->ddate);
	memset(h + 14, 0, 12); /* CRC, sizes: after the data */
	put16(h + 26, (unsigned)len);
	put16(h + 28, 0);
	if ((rc = out_write(z, h, sizeof h)) != EV_OK || (rc = out_write(z, name, len)) != EV_OK)
		return rc;
	return EV_OK;
}

int ev_zip_begin(ev_zip *z, const char *name)
{
	int rc;
	if ((rc = end_member(z)) != EV_OK || (rc = new_entry(z, name)) != EV_OK)
		return rc;
	isal_deflate_init(&z->s);
	z->s.level = 1;
	z->s.level_buf = z->level_buf;
	z->s.level_buf_size = ISAL_DEF_LVL1_DEFAULT;
	z->s.gzip_flag = IGZIP_DEFLATE;
	z->crc = 0;
	z->usize = z->csize = 0;
	z->nin = 0;
	z->open = 1;
	return EV_OK;
}

size_t ev_zip_members(const ev_zip *z)
{
	return z->ne;
}

int ev_zip_take(ev_zip *z, ev_zip *from, size_t i, const char *name)
{
	unsigned char d[16];
	int rc;
	if (!z->out || from->out || i >= from->ne || (i + 1 == from->ne && from->open))
		return EV_ERR_ARG;
	const struct zentry *f = &from->e[i];
	if ((rc = end_member(z)) != EV_OK || (rc = new_entry(z, name)) != EV_OK ||
	    (rc = out_write(z, from->mem + f->offset, f->csize)) != EV_OK)
		return rc;
	struct zentry *e = &z->e[z->ne - 1];
	e->crc = f->crc;
	e->csize = f->csize;
	e->usize = f->usize;
	put32(d, 0x08074b50);
	put32(d + 4, e->crc);
	put32(d + 8, e->csize);
	put32(d + 12, e->usize);
	return out_write(z, d, sizeof d);
}

int ev_zip_write(ev_zip *z, const void *p, size_t n)
{
	const unsigned char *b = p;
	if (!z->open)
		return EV_ERR_ARG;
	z->crc = crc32_gzip_refl(z->crc, b, n);
	z->usize += n;
	while (n) {
		size_t k = ZIP_BUF - z->nin;
		if (k > n)
			k = n;
		memcpy(z->in + z->nin, b, k);
		z->nin += k;
		b += k;
		n -= k;
		int rc;
		if (z->nin == ZIP_BUF && (rc = deflate_some(z, 0)) != EV_OK)
			return rc;
	}
	return EV_OK;
}

int ev_zip_finish(ev_zip *z)
{
	unsigned char h[46];
	uint64_t start;
	int rc;
	if ((rc = end_member(z)) != EV_OK)
		return rc;
	if (!z->out)
		return EV_OK; /* members apart: no directory */
	start = z->at;
	for (size_t i = 0; i < z->ne; i++) {
		const struct zentry *e = &z->e[i];
		size_t len = strlen(e->name);
		put32(h, 0x02014b50);
		put16(h + 4, 20); /* made by: MS-DOS attributes, 2.0 */
		put16(h + 6, 20);
		put16(h + 8, 1 << 3);
		put16(h + 10, 8);
		put16(h + 12, z->dtime);
		put16(h + 14, z->ddate);
		put32(h + 16, e->crc);
		put32(h + 20, e->csize);
		put32(h + 24, e->usize);
		put16(h + 28, (unsigned)len);
		memset(h + 30, 0, 12); /* extra, comment, disk, attributes */
		put32(h + 42, e->offset);
		if ((rc = out_write(z, h, sizeof h)) != EV_OK || (rc = out_write(z, e->name, len)) != EV_OK)
			return rc;
	}
	if (z->ne > 0xFFFF)
		return EV_ERR_LIMIT;
	unsigned char end[22];
	put32(end, 0x06054b50);
	put16(end + 4, 0);
	put16(end + 6, 0);
	put16(end + 8, (unsigned)z->ne);
	put16(end + 10, (unsigned)z->ne);
	put32(end + 12, (uint32_t)(z->at - start));
	put32(end + 16, (uint32_t)start);
	put16(end + 20, 0);
	return out_write(z, end, sizeof end);
}

void ev_zip_free(ev_zip *z)
{
	if (!z)
		return;
	for (size_t i = 0; i < z->ne; i++)
		free(z->e[i].name);
	free(z->e);
	free(z->level_buf);
	free(z->in);
	free(z->obuf);
	free(z->mem);
	free(z);
}
