/* SPDX-License-Identifier: MIT */
/*
 * arena.c - the builder's arrays (id windows, successor slots, the edge
 * pool, spool buffers, the matching table) out of a few large chunks.
 *
 * Why not malloc: these arrays are tens of MiB at 64 ranks, and glibc
 * gives every large block a mapping of its own, backed one 4 KiB page at a
 * time and unmapped again when the block is freed (the windows and the
 * edge pool double, so most of them are).  Every first touch of a page is
 * a fault, and where faults are dear they were a third of the builder
 * thread (docs/ev2goal.md).
 *
 * Here chunks come from ev_big_reserve (transparent huge pages advised, so
 * one fault backs 2 MiB), blocks are powers of two, and a freed block goes
 * on a free list of its size to be used again.  A block of 1 MiB or more
 * (the edge pool, the spool read buffer) gets a reservation of its own,
 * unmapped when it is freed.  Freed blocks of 128 KiB or more (glibc's
 * own threshold for giving memory back) are handed back to the kernel but
 * for their first page, since the windows of all ranks grow together and
 * seldom ask for a freed size again, but only once IDLE_BUDGET bytes of
 * them wait on the lists: handing back part of a huge page splits it, and
 * when the 64 windows of the bench's input were handed back as they grew,
 * the huge pages around them were split and the windows and spool buffers
 * there took faults and TLB misses for the rest of the run.
 * So memory is what the arrays need plus the rounding and at most
 * IDLE_BUDGET of freed blocks, and grows with ranks and the window, never
 * with the input.  Where reservations fail (a `ulimit -v`, strict
 * overcommit) blocks come from malloc, kept on a list so that the release
 * frees them too.
 */
#include <stdint.h>
#include <stdlib.h>
#include <sys/mman.h>

#include "goal_int.h"

#define MIN_CLASS 6 /* 64 bytes */
#define FIRST_CHUNK ((size_t)2 << 20)
#define MAX_CHUNK ((size_t)32 << 20)
#define DEDICATED ((size_t)1 << 20)   /* blocks of their own from this size */
#define GIVE_BACK ((size_t)128 << 10) /* freed blocks handed back from this size */
#define IDLE_BUDGET ((size_t)16 << 20)  /* ... once this many bytes of them wait */
#define PAGE ((size_t)4096)
/* A malloc'ed block has this header in front: the list of such blocks. */
#define MHDR 64

struct goal_mblock { struct goal_mblock *next, *prev; };
/* A block on a free list; clean: all but its first page was handed back,
 * so only that page needs clearing to hand out zeros. */
struct goal_free { struct goal_free *next; int clean; };

static unsigned size_class(size_t bytes)
{
	unsigned c = MIN_CLASS;
	while (((size_t)1 << c) < bytes)
		c++;
	return c;
}

void goal_arena_init(struct goal_arena *a)
{
	memset(a, 0, sizeof *a);
	a->next_chunk = FIRST_CHUNK;
}

/* Index of the chunk holding p, or of the first chunk after p. */
static size_t chunk_search(const struct goal_arena *a, const unsigned char *p)
{
	size_t lo = 0, hi = a->nchunks;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (a->chunks[mid].base + a->chunks[mid].size <= p)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

static unsigned char *reserve(struct goal_arena *a, size_t size, int dedicated)
{
	if (a->nchunks == a->capchunks) {
		size_t nc = a->capchunks ? a->capchunks * 2 : 16;
		struct goal_chunk *n = realloc(a->chunks, nc * sizeof *n);
		if (!n)
			return NULL;
		a->chunks = n;
		a->capchunks = nc;
	}
	unsigned char *p = ev_big_reserve(size);
	if (!p)
		return NULL;
	size_t i = chunk_search(a, p);
	memmove(a->chunks + i + 1, a->chunks + i, (a->nchunks - i) * sizeof *a->chunks);
	a->chunks[i].base = p;
	a->chunks[i].size = size;
	a->chunks[i].dedicated = dedicated;
	a->nchunks++;
	return p;
}

static void *from_malloc(struct goal_arena *a, size_t n, int zero)
{
	if (n > SIZE_MAX - MHDR)
		return NULL;
	struct goal_mblock *b = zero ? calloc(1, MHDR + n) : malloc(MHDR + n);
	if (!b)
		return NULL;
	b->prev = NULL;
	b->next = a->mallocd;
	if (b->next)
		b->next->prev = b;
	a->mallocd = b;
	return (unsigned char *)b + MHDR;
}

void *goal_arena_alloc(struct goal_arena *a, size_t bytes, int zero)
{
	if (bytes > SIZE_MAX / 4)
		return NULL;
	unsigned k = size_class(bytes ? bytes : 1);
	size_t n = (size_t)1 << k;
	struct goal_free *f = a->free[k];
	if (f) {
		a->free[k] = f->next;
		if (!f->clean && n >= GIVE_BACK)
			a->idle -= n;
		if (zero)
			memset(f, 0, f->clean ? PAGE : n);
		return f;
	}
	if (a->no_reserve)
		return from_malloc(a, n, zero);
	if (n >= DEDICATED) {
		/* Untouched reserved memory reads as zero. */
		unsigned char *p = reserve(a, n, 1);
		return p ? p : from_malloc(a, n, zero);
	}
	/* Blocks start at a multiple of their size up to a page, so that a
	 * block of a page or more covers whole pages. */
	size_t align = n < PAGE ? n : PAGE, gap = (size_t)(-(uintptr_t)a->cur & (align - 1));
	if (a->left < gap + n) {
		/* The rest of the current chunk stays untouched (never backed). */
		unsigned char *p = reserve(a, a->next_chunk, 0);
		if (!p) {
			a->no_reserve = 1;
			return from_malloc(a, n, zero);
		}
		a->cur = p;
		a->left = a->next_chunk;
		if (a->next_chunk < MAX_CHUNK)
			a->next_chunk *= 2;
		gap = 0;
	}
	a->cur += gap;
	a->left -= gap;
	/* Cut in order and never handed back to the chunk: not written since
	 * it was reserved, so zero. */
	void *p = a->cur;
	a->cur += n;
	a->left -= n;
	return p;
}

void goal_arena_free(struct goal_arena *a, void *p, size_t bytes)
{
	if (!p)
		return;
	size_t i = chunk_search(a, p);
	if (i == a->nchunks || (unsigned char *)p < a->chunks[i].base) {
		struct goal_mblock *b = (struct goal_mblock *)(void *)((unsigned char *)p - MHDR);
		if (b->prev)
			b->prev->next = b->next;
		else
			a->mallocd = b->next;
		if (b->next)
			b->next->prev = b->prev;
		free(b);
		return;
	}
	if (a->chunks[i].dedicated) {
		ev_big_release(a->chunks[i].base, a->chunks[i].size);
		memmove(a->chunks + i, a->chunks + i + 1, (a->nchunks - i - 1) * sizeof *a->chunks);
		a->nchunks--;
		return;
	}
	unsigned k = size_class(bytes ? bytes : 1);
	size_t n = (size_t)1 << k;
	struct goal_free *f = p;
	f->next = a->free[k];
	f->clean = 0;
	a->free[k] = f;
	if (n < GIVE_BACK)
		return;
#ifdef MADV_DONTNEED
	/* The rest reads as zero and is backed again where it is touched; the
	 * first page keeps the list's link. */
	if (a->idle + n > IDLE_BUDGET && madvise((unsigned char *)p + PAGE, n - PAGE, MADV_DONTNEED) == 0) {
		f->clean = 1;
		return;
	}
#endif
	a->idle += n;
}

void goal_arena_release(struct goal_arena *a)
{
	for (size_t i = 0; i < a->nchunks; i++)
		ev_big_release(a->chunks[i].base, a->chunks[i].size);
	free(a->chunks);
	for (struct goal_mblock *b = a->mallocd; b;) {
		struct goal_mblock *nx = b->next;
		free(b);
		b = nx;
	}
	goal_arena_init(a);
}
