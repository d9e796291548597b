/* SPDX-License-Identifier: MIT */
/*
 * json_bytes.h - finding the end of a JSON string's run of plain bytes,
 * shared by the readers that find values (json_scan.c) and that walk an
 * event (kineto_event.c).  Strings are most of a trace's bytes and many
 * are short keys, where two memchr calls (quote, then backslash) cost more
 * than the bytes: eight bytes are looked at a time, for both at once.
 */
#ifndef EV_JSON_BYTES_H
#define EV_JSON_BYTES_H

#include <stdint.h>
#include <string.h>

/* The bytes of v (in memory order) that are '"' or '\\', each as its top
 * bit.  A bit can also be set by a borrow, but only above a byte that
 * matched, so the lowest bit set is always the first match. */
static inline uint64_t ev_json_quote_or_backslash(uint64_t v)
{
	const uint64_t ones = 0x0101010101010101ULL, tops = 0x8080808080808080ULL;
	uint64_t q = v ^ (ones * '"'), b = v ^ (ones * '\\');
	return (((q - ones) & ~q) | ((b - ones) & ~b)) & tops;
}

/* The first '"' or '\\' in [p, end), or end. */
static inline const char *ev_json_str_stop(const char *p, const char *end)
{
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
	while (end - p >= 8) {
		uint64_t v;
		memcpy(&v, p, sizeof v);
		uint64_t m = ev_json_quote_or_backslash(v);
		if (m)
			return p + (__builtin_ctzll(m) >> 3);
		p += 8;
	}
#endif
	while (p < end && *p != '"' && *p != '\\')
		p++;
	return p;
}

#endif
