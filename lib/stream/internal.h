/* SPDX-License-Identifier: MIT */
/*
 * internal.h - what the stream module's files share and nothing else sees.
 */
#ifndef EV_STREAM_INTERNAL_H
#define EV_STREAM_INTERNAL_H

#include <stdint.h>
#include <sys/types.h>
#if defined(__SSE2__)
#include <emmintrin.h>
#endif

/* Is (dev, ino) the file that an open ev_output will replace? */
int ev_output_replaces(dev_t dev, ino_t ino);

/* The reader's ids known defined and the writer's ids already emitted, in
 * front of their hash maps: a cache of two ways a set, the newer first.
 * Ids are content hashes, so their low bits pick the set.  With one way,
 * 500 names cycling through 4096 slots missed on 12% of records (the names
 * that shared a slot evicted each other): ev_map_get was 4% of an ev-view
 * stage. */
#define EV_ID_CACHE 4096 /* slots: 2048 sets of two */
static inline int ev_id_cached(const uint64_t *cache, uint64_t id)
{
	const uint64_t *set = cache + ((size_t)id & (EV_ID_CACHE - 2));
	return set[0] == id || set[1] == id;
}
static inline void ev_id_cache_put(uint64_t *cache, uint64_t id)
{
	uint64_t *set = cache + ((size_t)id & (EV_ID_CACHE - 2));
	set[1] = set[0];
	set[0] = id;
}

/* The bytes of a record line that an escape concerns, LF and backslash,
 * among p[0..16).  The reader asks whether a line has any
 * (ev_input_plain_line: the compares of a line ORed, one mask at the end),
 * the writer where they are (ev_write). */
#if defined(__SSE2__)
static inline __m128i ev_escape_cmp16(const unsigned char *p)
{
	__m128i v = _mm_loadu_si128((const __m128i *)(const void *)p);
	return _mm_or_si128(_mm_cmpeq_epi8(v, _mm_set1_epi8('\n')), _mm_cmpeq_epi8(v, _mm_set1_epi8('\\')));
}
#endif

/* Bit i for p[i]: sixteen bytes at one look where SSE2 is there (every
 * x86-64), a byte at a time elsewhere. */
static inline unsigned ev_escape_mask16(const unsigned char *p)
{
#if defined(__SSE2__)
	return (unsigned)_mm_movemask_epi8(ev_escape_cmp16(p));
#else
	unsigned m = 0;
	for (unsigned i = 0; i < 16; i++)
		m |= (unsigned)(p[i] == '\n' || p[i] == '\\') << i;
	return m;
#endif
}

#endif
