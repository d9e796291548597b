/* SPDX-License-Identifier: MIT */
/*
 * json_bytes.h - finding the ends of the runs that make up most of a
 * trace's bytes: a JSON string's plain bytes, and the whitespace between
 * tokens (pretty-printed Kineto traces indent every member), and a value's
 * text without that whitespace.  Shared by the readers that find values
 * (json_scan.c), that walk an event (kineto_event.c) and that key an
 * operator by its shapes (kineto_read.c).  Sixteen bytes are looked at a
 * step where SSE2 is there (every x86-64), eight elsewhere; a byte at a
 * time only for the last few.
 */
#ifndef EV_JSON_BYTES_H
#define EV_JSON_BYTES_H

#include <stdint.h>
#include <string.h>
#if defined(__SSE2__)
#include <emmintrin.h>
#endif

/* The bytes of v (in memory order) that are '"' or '\\', each as its top
 * bit.  A bit can also be set by a borrow, but only above a byte that
 * matched, so the lowest bit set is always the first match. */
static inline uint64_t ev_json_quote_or_backslash(uint64_t v)
{
	const uint64_t ones = 0x0101010101010101ULL, tops = 0x8080808080808080ULL;
	uint64_t q = v ^ (ones * '"'), b = v ^ (ones * '\\');
	return (((q - ones) & ~q) | ((b - ones) & ~b)) & tops;
}

/* The first '"' or '\\' in [p, end), or end.  Kernel names run to hundreds
 * of bytes, keys to a few: both end within the first step or two. */
static inline const char *ev_json_str_stop(const char *p, const char *end)
{
#if defined(__SSE2__)
	const __m128i quote = _mm_set1_epi8('"'), bslash = _mm_set1_epi8('\\');
	while (end - p >= 16) {
		__m128i v = _mm_loadu_si128((const __m128i *)(const void *)p);
		unsigned m = (unsigned)_mm_movemask_epi8(_mm_or_si128(_mm_cmpeq_epi8(v, quote), _mm_cmpeq_epi8(v, bslash)));
		if (m)
			return p + __builtin_ctz(m);
		p += 16;
	}
#endif
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

static inline int ev_json_is_ws(char c)
{
	return c == ' ' || c == '\n' || c == '\t' || c == '\r';
}

#if defined(__SSE2__)
/* One bit per byte of v that is JSON whitespace. */
static inline unsigned ev_json_ws16(__m128i v)
{
	__m128i ws = _mm_or_si128(_mm_or_si128(_mm_cmpeq_epi8(v, _mm_set1_epi8(' ')), _mm_cmpeq_epi8(v, _mm_set1_epi8('\n'))),
	                          _mm_or_si128(_mm_cmpeq_epi8(v, _mm_set1_epi8('\t')), _mm_cmpeq_epi8(v, _mm_set1_epi8('\r'))));
	return (unsigned)_mm_movemask_epi8(ws);
}
#endif

/* The first byte in [p, end) that is not JSON whitespace, or end.  Most
 * gaps are empty or one space (after ':' and ','): a compare or two decides
 * those, as every byte a token can start with is above ' '.  Longer runs
 * (a newline and an indentation) go sixteen bytes a step. */
static inline const char *ev_json_skip_ws(const char *p, const char *end)
{
	if (p < end && (unsigned char)*p > ' ')
		return p;
	if (end - p >= 2 && *p == ' ' && (unsigned char)p[1] > ' ')
		return p + 1;
#if defined(__SSE2__)
	while (end - p >= 16) {
		__m128i v = _mm_loadu_si128((const __m128i *)(const void *)p);
		unsigned m = ~ev_json_ws16(v) & 0xFFFFu;
		if (m)
			return p + __builtin_ctz(m);
		p += 16;
	}
#endif
	while (p < end && ev_json_is_ws(*p))
		p++;
	return p;
}

#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
/* The bytes of v (in memory order) that are not decimal digits, each as
 * its top bit: the lowest bit set is the first byte that ends a run of
 * digits.  A byte is a digit when its high nibble is 3 and adding 6 to its
 * low nibble does not carry: x is zero in exactly the digit bytes, and the
 * top bit of every other byte is set (no sum crosses a byte). */
static inline uint64_t ev_json_nondigits(uint64_t v)
{
	const uint64_t ones = 0x0101010101010101ULL, tops = 0x8080808080808080ULL;
	uint64_t x = ((v & (ones * 0xF0)) ^ (ones * 0x30)) | (((v & (ones * 0x0F)) + ones * 0x06) & (ones * 0x10));
	return (((x & ~tops) + ~tops) | x) & tops;
}

/* The value of eight digit bytes (in memory order, the first the most
 * significant; leading zero bytes count as zeros).  Adjacent lanes are
 * combined three times, each time into lanes twice as wide: digit pairs
 * (0-99) in 16 bits, groups of four (0-9999) in 32, then all eight.  No
 * product leaves its lane before the mask drops what is not kept. */
static inline uint64_t ev_json_eight_digits(uint64_t v)
{
	v &= 0x0F0F0F0F0F0F0F0FULL;
	v = (v * 10 + (v >> 8)) & 0x00FF00FF00FF00FFULL;
	v = (v * 100 + (v >> 16)) & 0x0000FFFF0000FFFFULL;
	return (v * 10000 + (v >> 32)) & 0xFFFFFFFFULL;
}
#endif

/* The first byte in [p, end) that is not a decimal digit, or end: eight
 * bytes a step.  Timestamps are 13 to 20 digits. */
static inline const char *ev_json_digits_end(const char *p, const char *end)
{
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
	while (end - p >= 8) {
		uint64_t v;
		memcpy(&v, p, sizeof v);
		uint64_t bad = ev_json_nondigits(v);
		if (bad)
			return p + (__builtin_ctzll(bad) >> 3);
		p += 8;
	}
#endif
	while (p < end && (unsigned char)(*p - '0') < 10)
		p++;
	return p;
}

/* The same, and *value gets the digits' value, exact up to 19 digits
 * (modulo 2^64 beyond: the caller counts them).  Converting while the
 * digits are found saves reading a timestamp or an id a second time. */
static inline const char *ev_json_digits_value(const char *p, const char *end, uint64_t *value)
{
	uint64_t x = 0;
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
	static const uint64_t pow10[9] = { 1, 10, 100, 1000, 10000, 100000, 1000000, 10000000, 100000000 };
	while (end - p >= 8) {
		uint64_t v;
		memcpy(&v, p, sizeof v);
		uint64_t bad = ev_json_nondigits(v);
		unsigned k = bad ? (unsigned)__builtin_ctzll(bad) >> 3 : 8;
		if (k == 0)
			break;
		/* The k digits to the top bytes, zeros below them. */
		x = x * pow10[k] + ev_json_eight_digits(v << (8 * (8 - k)));
		p += k;
		if (k < 8) {
			*value = x;
			return p;
		}
	}
#endif
	while (p < end && (unsigned char)(*p - '0') < 10)
		x = x * 10 + (uint64_t)(*p++ - '0');
	*value = x;
	return p;
}

/* [p, end) without its whitespace bytes, into out; the bytes written.
 * Strings lose theirs too: callers compact a value's text into a key.
 * Sixteen bytes are stored a step and the output moves past the ones
 * before the next whitespace, so out needs room for end - p bytes only
 * (the output never gets ahead of the input). */
static inline size_t ev_json_strip_ws(const char *p, const char *end, char *out)
{
	char *o = out;
#if defined(__SSE2__)
	while (end - p >= 16) {
		__m128i v = _mm_loadu_si128((const __m128i *)(const void *)p);
		unsigned m = ev_json_ws16(v);
		_mm_storeu_si128((__m128i *)(void *)o, v);
		if (!m) {
			o += 16;
			p += 16;
			continue;
		}
		/* Keep the bytes before the first whitespace; go on at the
		 * first byte after it that is not whitespace, or sixteen on. */
		unsigned k = (unsigned)__builtin_ctz(m), after = (~m & 0xFFFFu) >> k;
		o += k;
		p += after ? k + (unsigned)__builtin_ctz(after) : 16;
	}
#endif
	for (; p < end; p++)
		if (!ev_json_is_ws(*p))
			*o++ = *p;
	return (size_t)(o - out);
}

#endif
