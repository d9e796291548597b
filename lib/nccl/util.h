/* SPDX-License-Identifier: MIT */
/*
 * nccl/util.h - integer helpers of the NCCL model (private to lib/nccl):
 * NCCL's divUp/alignUp, and saturating products so that absurd sizes read
 * from a trace cannot wrap around into small ones.
 */
#ifndef EV_NCCL_UTIL_H
#define EV_NCCL_UTIL_H

#include <stdint.h>

#define KiB 1024ull
#define MiB (1024ull * 1024ull)

static inline uint64_t div_up(uint64_t a, uint64_t b) { return b ? a / b + (a % b != 0) : 0; }
static inline uint64_t align_up(uint64_t a, uint64_t b) { return b ? div_up(a, b) * b : a; }
static inline uint64_t umin(uint64_t a, uint64_t b) { return a < b ? a : b; }
static inline uint64_t umax(uint64_t a, uint64_t b) { return a > b ? a : b; }
static inline int ilog2(uint64_t v) { int l = 0; while (v > 1) { v >>= 1; l++; } return l; }
static inline uint64_t pow2_up(uint64_t v)
{
	uint64_t p = 1;
	while (p < v && p < (1ull << 63))
		p <<= 1;
	return p;
}
/* a * b, or UINT64_MAX when it does not fit. */
static inline uint64_t sat_mul(uint64_t a, uint64_t b)
{
	return b && a > UINT64_MAX / b ? UINT64_MAX : a * b;
}
static inline uint64_t sat_add(uint64_t a, uint64_t b) { return a > UINT64_MAX - b ? UINT64_MAX : a + b; }

#endif /* EV_NCCL_UTIL_H */
