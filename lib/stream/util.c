/* SPDX-License-Identifier: MIT */
/*
 * util.c - status strings, strict number parsing, growable arrays and an
 * integer hash map: small mechanics every tool shares.
 */
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "ev/stream.h"
#include "internal.h"

/* Would x * 10 + d pass UINT64_MAX?  Compares with constants: the
 * (UINT64_MAX - d) / 10 it replaces was a multiply per digit, and digit
 * loops are a tenth of kineto2ev's instructions. */
static inline int mul10_add_overflows(uint64_t x, unsigned d)
{
	return x >= UINT64_MAX / 10 && (x > UINT64_MAX / 10 || d > UINT64_MAX % 10);
}

const char *ev_strerror(int status)
{
	switch (status) {
	case EV_OK: return "success";
	case EV_REC: return "record";
	case EV_TEXT: return "text line";
	case EV_ERR_IO: return "input/output error";
	case EV_ERR_NOMEM: return "out of memory";
	case EV_ERR_FORMAT: return "malformed stream";
	case EV_ERR_TRUNCATED: return "truncated stream";
	case EV_ERR_VERSION: return "unsupported format version";
	case EV_ERR_NOSTR: return "undefined string id";
	case EV_ERR_RANGE: return "value out of range";
	case EV_ERR_ORDER: return "records out of time order";
	case EV_ERR_LIMIT: return "size limit exceeded";
	case EV_ERR_PIPE: return "broken pipe";
	case EV_ERR_ARG: return "invalid argument";
	case EV_ERR_GZIP: return "corrupt gzip data";
	case EV_ERR_COLLISION: return "string id collision";
	case EV_ERR_SAMEFILE: return "is also an input: refusing to overwrite an input";
	case EV_ERR_SAMEOUT: return "input file is output file (standard output): refusing to read what is being written";
	default: return "unknown error";
	}
}

int ev_parse_u64(const char *s, uint64_t *v)
{
	uint64_t x = 0;
	if (!s || !*s)
		return EV_ERR_ARG;
	for (const char *p = s; *p; p++) {
		if (*p < '0' || *p > '9')
			return EV_ERR_ARG;
		unsigned d = (unsigned)(*p - '0');
		if (mul10_add_overflows(x, d))
			return EV_ERR_RANGE;
		x = x * 10 + d;
	}
	*v = x;
	return EV_OK;
}

int ev_parse_i64(const char *s, int64_t *v)
{
	uint64_t x;
	int neg = s && *s == '-';
	int rc = ev_parse_u64(neg ? s + 1 : s, &x);
	if (rc)
		return rc;
	if (neg) {
		if (x > (uint64_t)INT64_MAX + 1)
			return EV_ERR_RANGE;
		*v = x == (uint64_t)INT64_MAX + 1 ? INT64_MIN : -(int64_t)x;
	} else {
		if (x > INT64_MAX)
			return EV_ERR_RANGE;
		*v = (int64_t)x;
	}
	return EV_OK;
}

int ev_parse_u32(const char *s, uint32_t *v)
{
	uint64_t x;
	int rc = ev_parse_u64(s, &x);
	if (rc)
		return rc;
	if (x > UINT32_MAX)
		return EV_ERR_RANGE;
	*v = (uint32_t)x;
	return EV_OK;
}

int ev_parse_i32(const char *s, int32_t *v)
{
	int64_t x;
	int rc = ev_parse_i64(s, &x);
	if (rc)
		return rc;
	if (x < INT32_MIN || x > INT32_MAX)
		return EV_ERR_RANGE;
	*v = (int32_t)x;
	return EV_OK;
}

int ev_parse_double(const char *s, double *v)
{
	char *end;
	if (!s || !*s)
		return EV_ERR_ARG;
	errno = 0;
	double x = strtod(s, &end);
	if (*end || end == s)
		return EV_ERR_ARG;
	if (errno == ERANGE || !isfinite(x))
		return EV_ERR_RANGE;
	*v = x;
	return EV_OK;
}

int ev_write_all(int fd, const void *p, size_t n)
{
	const unsigned char *b = p;
	while (n) {
		ssize_t k = write(fd, b, n);
		if (k < 0) {
			if (errno == EINTR)
				continue;
			return EV_ERR_IO;
		}
		b += k;
		n -= (size_t)k;
	}
	return EV_OK;
}

int ev_parse_size(const char *s, uint64_t *v)
{
	char num[32];
	size_t len = s ? strlen(s) : 0;
	unsigned shift = 0;
	if (len == 0 || len >= sizeof num)
		return EV_ERR_ARG;
	memcpy(num, s, len + 1);
	switch (num[len - 1]) {
	case 'k': case 'K': shift = 10; break;
	case 'm': case 'M': shift = 20; break;
	case 'g': case 'G': shift = 30; break;
	case 't': case 'T': shift = 40; break;
	default: break;
	}
	if (shift)
		num[len - 1] = '\0';
	uint64_t x;
	int rc = ev_parse_u64(num, &x);
	if (rc)
		return rc;
	if (shift && x > (UINT64_MAX >> shift))
		return EV_ERR_RANGE;
	*v = x << shift;
	return EV_OK;
}

int ev_parse_decimal_scaled(const char *s, size_t len, unsigned scale, int64_t *v)
{
	size_t i = 0;
	int neg = 0, digits = 0;
	uint64_t x = 0;
	if (len > 0 && (s[0] == '-' || s[0] == '+')) {
		neg = s[0] == '-';
		i = 1;
	}
	/* x < 10^digits: below 18 digits no step can overflow, and every
	 * timestamp of a trace (16 to 20 digits) is checked only at its end. */
	for (; i < len && (unsigned)(s[i] - '0') < 10; i++, digits++) {
		unsigned d = (unsigned)(s[i] - '0');
		if (digits >= 18 && mul10_add_overflows(x, d))
			return EV_ERR_RANGE;
		x = x * 10 + d;
	}
	unsigned used = 0;
	int round_up = 0;
	if (i < len && s[i] == '.') {
		for (i++; i < len && (unsigned)(s[i] - '0') < 10; i++, digits++) {
			unsigned d = (unsigned)(s[i] - '0');
			if (used < scale) {
				if (digits >= 18 && mul10_add_overflows(x, d))
					return EV_ERR_RANGE;
				x = x * 10 + d;
				used++;
			} else if (used == scale) {
				round_up = d >= 5;
				used++; /* digits after the first dropped one do not matter */
			}
		}
	}
	if (i != len || digits == 0)
		return EV_ERR_ARG;
	for (; used < scale; used++) {
		if (x > UINT64_MAX / 10)
			return EV_ERR_RANGE;
		x *= 10;
	}
	x += (uint64_t)round_up;
	if (x > (uint64_t)INT64_MAX)
		return EV_ERR_RANGE;
	*v = neg ? -(int64_t)x : (int64_t)x;
	return EV_OK;
}

uint64_t ev_now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

int ev_errf(char *err, size_t n, int rc, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	if (err && n)
		vsnprintf(err, n, fmt, ap);
	va_end(ap);
	return rc;
}

void ev_vec_init(struct ev_vec *v, size_t elem)
{
	v->data = NULL;
	v->len = v->cap = 0;
	v->elem = elem;
}

void *ev_vec_push(struct ev_vec *v)
{
	if (v->len == v->cap) {
		size_t ncap = v->cap ? v->cap * 2 : 16;
		void *nd = realloc(v->data, ncap * v->elem);
		if (!nd)
			return NULL;
		v->data = nd;
		v->cap = ncap;
	}
	void *p = (char *)v->data + v->len * v->elem;
	memset(p, 0, v->elem);
	v->len++;
	return p;
}

void ev_vec_free(struct ev_vec *v)
{
	free(v->data);
	v->data = NULL;
	v->len = v->cap = 0;
}

void ev_map_init(struct ev_map *m)
{
	m->keys = m->vals = NULL;
	m->cap = m->len = 0;
}

static inline size_t map_hash(uint64_t k)
{
	k ^= k >> 33;
	k *= 0xFF51AFD7ED558CCDULL;
	k ^= k >> 33;
	return (size_t)k;
}

static size_t map_find(const struct ev_map *m, uint64_t key)
{
	size_t mask = m->cap - 1, i = map_hash(key) & mask;
	while (m->keys[i] && m->keys[i] != key)
		i = (i + 1) & mask;
	return i;
}

int ev_map_put(struct ev_map *m, uint64_t key, uint64_t val)
{
	if (key == 0)
		return EV_ERR_ARG;
	if ((m->len + 1) * 4 > m->cap * 3) {
		size_t ncap = m->cap ? m->cap * 2 : 64;
		/* Keys zeroed by writing, not calloc: a large calloc is fresh
		 * zero pages that the probes below would map read-only, and each
		 * first store then faults again and (with two threads) interrupts
		 * the other core to flush its TLB.  A value is read only under a
		 * key, so it needs no zeros. */
		uint64_t *nk = ncap <= SIZE_MAX / sizeof *nk ? malloc(ncap * sizeof *nk) : NULL;
		uint64_t *nv = nk ? malloc(ncap * sizeof *nv) : NULL;
		if (!nk || !nv) {
			free(nk);
			free(nv);
			return EV_ERR_NOMEM;
		}
		memset(nk, 0, ncap * sizeof *nk);
		struct ev_map old = *m;
		m->keys = nk;
		m->vals = nv;
		m->cap = ncap;
		for (size_t i = 0; i < old.cap; i++)
			if (old.keys[i]) {
				size_t j = map_find(m, old.keys[i]);
				m->keys[j] = old.keys[i];
				m->vals[j] = old.vals[i];
			}
		free(old.keys);
		free(old.vals);
	}
	size_t i = map_find(m, key);
	if (!m->keys[i]) {
		m->keys[i] = key;
		m->len++;
	}
	m->vals[i] = val;
	return EV_OK;
}

uint64_t *ev_map_get(const struct ev_map *m, uint64_t key)
{
	if (!m->cap || key == 0)
		return NULL;
	size_t i = map_find(m, key);
	return m->keys[i] ? &m->vals[i] : NULL;
}

void ev_map_free(struct ev_map *m)
{
	free(m->keys);
	free(m->vals);
	ev_map_init(m);
}

/* The words of docs/FORMAT.md §7, in one place: every tool and library
 * part that meets a record out of time order says it so. */
int ev_order_text(char *buf, size_t n, int64_t ts, int64_t last)
{
	return snprintf(buf, n, "out of order (ts %" PRId64 " after %" PRId64 "); sort with ev-merge --sort", ts, last);
}

int ev_vformat(int (*put)(void *ctx, const char *text, size_t len), void *ctx, const char *fmt, va_list ap)
{
	char small[1024];
	va_list again;
	va_copy(again, ap);
	int n = vsnprintf(small, sizeof small, fmt, ap);
	char *p = small;
	int rc = EV_OK;
	if (n < 0)
		rc = EV_ERR_ARG;
	else if ((size_t)n >= sizeof small && (p = malloc((size_t)n + 1)) == NULL)
		rc = EV_ERR_NOMEM;
	if (!rc && p != small)
		vsnprintf(p, (size_t)n + 1, fmt, again);
	va_end(again);
	if (!rc)
		rc = put(ctx, p, (size_t)n);
	if (p != small)
		free(p);
	return rc;
}
