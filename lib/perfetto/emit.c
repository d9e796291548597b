/* SPDX-License-Identifier: MIT */
/*
 * emit.c - the JSON emitter: text built into a growable buffer, the
 * opening of each trace event, metadata events, and the buffer written to
 * the caller's output in large blocks, plain or through deflate.  Errors are
 * recorded in the ev_perfetto for the caller's message.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "perfetto_int.h"

/* Events are written once this much text has gathered: few large writes. */
#define FLUSH_AT (1u << 18)
/* Room reserved in the output for each deflate call. */
#define ZCHUNK (1u << 16)

/* ---- errors ------------------------------------------------------------ */

int pf_fail(ev_perfetto *p, int status, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(p->err.msg, sizeof p->err.msg, fmt, ap);
	va_end(ap);
	p->err.status = status;
	p->err.in_output = 0;
	return status;
}

int pf_out_fail(ev_perfetto *p, int status)
{
	p->err.status = status;
	p->err.in_output = 1;
	p->err.msg[0] = '\0';
	return status;
}

/* ---- text --------------------------------------------------------------- */

int pf_grow(struct pf_buf *b, size_t n)
{
	if (b->cap - b->len >= n)
		return 1;
	size_t ncap = b->cap ? b->cap : 4096;
	while (ncap - b->len < n)
		ncap *= 2;
	char *np = realloc(b->p, ncap);
	if (!np) {
		b->oom = 1;
		return 0;
	}
	b->p = np;
	b->cap = ncap;
	return 1;
}

void pf_i64(struct pf_buf *b, int64_t v)
{
	if (v < 0) {
		pf_put(b, "-", 1);
		pf_u64(b, (uint64_t)0 - (uint64_t)v);
	} else {
		pf_u64(b, (uint64_t)v);
	}
}

/* Nanoseconds as microseconds with exactly three decimals, from integers:
 * no rounding, whatever the magnitude. */
void pf_us(struct pf_buf *b, int64_t ns)
{
	uint64_t a = ns < 0 ? (uint64_t)0 - (uint64_t)ns : (uint64_t)ns;
	if (ns < 0)
		pf_put(b, "-", 1);
	pf_u64(b, a / 1000);
	char frac[4] = { '.', (char)('0' + a % 1000 / 100), (char)('0' + a % 100 / 10), (char)('0' + a % 10) };
	pf_put(b, frac, 4);
}

void pf_jstr(struct pf_buf *b, const char *s, size_t n)
{
	if (!pf_room(b, 6 * n + 3))
		return;
	b->len += ev_json_escape(s, n, b->p + b->len, b->cap - b->len);
}

void pf_key(struct pf_buf *b, const char *key)
{
	pf_put(b, ",\"", 2);
	pf_puts(b, key);
	pf_put(b, "\":", 2);
}

void pf_kv_u64(struct pf_buf *b, const char *key, uint64_t v)
{
	pf_key(b, key);
	pf_u64(b, v);
}

void pf_kv_str(struct pf_buf *b, const char *key, const char *s)
{
	pf_key(b, key);
	pf_jstr(b, s, strlen(s));
}

/* ---- events -------------------------------------------------------------- */

/* Differences in two's complement: format-legal extreme times wrap instead
 * of overflowing (ts >= base in an ordered stream). */
int64_t pf_rel_ts(const ev_perfetto *p, int64_t ts)
{
	return p->o.absolute ? ts : (int64_t)((uint64_t)ts - (uint64_t)p->base);
}

/* Start an event object: separator, phase, pid, tid. */
void pf_event(ev_perfetto *p, const char *ph, int64_t pid, int64_t tid)
{
	struct pf_buf *b = &p->ob;
	pf_puts(b, p->first_event ? "\n{\"ph\":\"" : ",\n{\"ph\":\"");
	p->first_event = 0;
	pf_puts(b, ph);
	pf_puts(b, "\",\"pid\":");
	pf_i64(b, pid);
	pf_puts(b, ",\"tid\":");
	pf_i64(b, tid);
	p->nevents++;
}

/* A metadata event: a name (process_name, thread_name) or, with name
 * NULL, a sort index. */
void pf_meta_event(ev_perfetto *p, const char *what, int64_t pid, int64_t tid, const char *name, int64_t sort)
{
	struct pf_buf *b = &p->ob;
	pf_event(p, "M", pid, tid);
	pf_kv_str(b, "name", what);
	if (name) {
		pf_puts(b, ",\"args\":{\"name\":");
		pf_jstr(b, name, strlen(name));
	} else {
		pf_puts(b, ",\"args\":{\"sort_index\":");
		pf_i64(b, sort);
	}
	pf_puts(b, "}}");
}

/* ---- output -------------------------------------------------------------- */

int pf_out_init(ev_perfetto *p, ev_output *out)
{
	struct pf_out *j = &p->jo;
	j->out = out;
	if (!p->o.gzip)
		return EV_OK;
	j->gz = 1;
	/* windowBits 15 + 16: a gzip header and trailer around the deflate data. */
	if (deflateInit2(&j->z, Z_DEFAULT_COMPRESSION, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK)
		return EV_ERR_NOMEM;
	j->zinit = 1;
	return EV_OK;
}

/* n bytes through deflate straight into the output's buffer. */
static int deflate_out(struct pf_out *j, const char *data, size_t n, int flush)
{
	j->z.next_in = (Bytef *)(uintptr_t)data;
	j->z.avail_in = (uInt)n;
	for (;;) {
		char *o = ev_output_reserve(j->out, ZCHUNK);
		if (!o) {
			int rc = ev_output_flush(j->out);
			return rc ? rc : EV_ERR_NOMEM;
		}
		j->z.next_out = (Bytef *)o;
		j->z.avail_out = ZCHUNK;
		int zr = deflate(&j->z, flush);
		ev_output_commit(j->out, ZCHUNK - j->z.avail_out);
		if (zr == Z_STREAM_END)
			return EV_OK;
		if (zr != Z_OK && zr != Z_BUF_ERROR)
			return EV_ERR_NOMEM;
		if (flush == Z_NO_FLUSH && j->z.avail_in == 0 && j->z.avail_out != 0)
			return EV_OK;
	}
}

/* The gathered events out once there are enough of them (or force). */
int pf_flush(ev_perfetto *p, int force)
{
	if (p->ob.oom)
		return pf_fail(p, EV_ERR_NOMEM, "out of memory");
	if (!force && p->ob.len < FLUSH_AT)
		return EV_OK;
	struct pf_out *j = &p->jo;
	j->raw_bytes += p->ob.len;
	int rc = j->gz ? deflate_out(j, p->ob.p, p->ob.len, Z_NO_FLUSH) : ev_output_write(j->out, p->ob.p, p->ob.len);
	p->ob.len = 0;
	return rc ? pf_out_fail(p, rc) : EV_OK;
}

/* Everything out, and the gzip stream ended. */
int pf_out_finish(ev_perfetto *p)
{
	int rc = pf_flush(p, 1);
	if (rc == EV_OK && p->jo.gz && (rc = deflate_out(&p->jo, "", 0, Z_FINISH)) != EV_OK)
		return pf_out_fail(p, rc);
	return rc;
}

void pf_out_end(ev_perfetto *p)
{
	if (p->jo.zinit)
		deflateEnd(&p->jo.z);
	p->jo.zinit = 0;
}
