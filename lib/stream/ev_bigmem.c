/* SPDX-License-Identifier: MIT */
/*
 * ev_bigmem.c - large work buffers (the external sorter's) reserved whole
 * and backed by the kernel only where they are touched.
 *
 * Why not malloc and realloc: a buffer that grows by realloc is copied at
 * each step, and every 4 KiB page of it costs a page fault at first touch
 * (docs/kineto2ev.md).  A reservation never moves, and with transparent
 * huge pages advised one fault backs 2 MiB.  Memory use is unchanged: pages
 * that are never touched are never backed.  The price is that a huge page
 * is zeroed whole at its first touch: worth it for a buffer that fills in
 * order (a sort buffer), not for a few hundred KiB touched here and there
 * (kineto2ev's link windows use malloc, kineto_window.c).
 */
#include <stdint.h>
#include <sys/mman.h>
#include <unistd.h>

#include "ev/stream.h"

#define HUGE_PAGE ((size_t)2 << 20)

void *ev_big_reserve(size_t bytes)
{
	if (bytes == 0 || bytes > SIZE_MAX - HUGE_PAGE)
		return NULL;
	size_t n = (bytes + HUGE_PAGE - 1) & ~(HUGE_PAGE - 1);
	/* One huge page more than asked, so that an aligned start is inside. */
	char *raw = mmap(NULL, n + HUGE_PAGE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (raw == MAP_FAILED)
		return NULL;
	char *p = (char *)(((uintptr_t)raw + HUGE_PAGE - 1) & ~(uintptr_t)(HUGE_PAGE - 1));
	if (p > raw)
		(void)munmap(raw, (size_t)(p - raw));
	if (p + n < raw + n + HUGE_PAGE)
		(void)munmap(p + n, (size_t)(raw + n + HUGE_PAGE - (p + n)));
#ifdef MADV_HUGEPAGE
	/* Advice only: where huge pages are off, pages stay 4 KiB. */
	(void)madvise(p, n, MADV_HUGEPAGE);
#endif
	return p;
}

void ev_big_release(void *p, size_t bytes)
{
	if (!p)
		return;
	size_t n = (bytes + HUGE_PAGE - 1) & ~(HUGE_PAGE - 1);
	(void)munmap(p, n);
}
