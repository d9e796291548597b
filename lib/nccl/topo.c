/* SPDX-License-Identifier: MIT */
/*
 * topo.c - who talks to whom: NCCL's binary tree over nodes, and how a
 * send/recv is cut into per-channel parts and chunks (docs/nccl-model.md,
 * "Trees" and "Send/Recv").  Rings and the per-node tree chains need the
 * communicator's members and live with the scheduler.
 */
#include <string.h>

#include "ev/nccl_sched.h"
#include "nccl/util.h"

void ev_nccl_btree(int n, int r, int *up, int *d0, int *d1)
{
	int bit;
	for (bit = 1; bit < n; bit <<= 1)
		if (bit & r)
			break;
	if (r == 0) {
		*up = -1;
		*d0 = -1;
		*d1 = n > 1 ? bit >> 1 : -1;
		return;
	}
	int u = (r ^ bit) | (bit << 1);
	if (u >= n)
		u = r ^ bit;
	*up = u;
	int low = bit >> 1;
	*d0 = low == 0 ? -1 : r - low;
	int d = low == 0 ? -1 : r + low;
	while (d >= n) {
		low >>= 1;
		d = low == 0 ? -1 : r + low;
	}
	*d1 = d;
}

static unsigned bitrev(unsigned v, int bits)
{
	unsigned r = 0;
	for (int i = 0; i < bits; i++)
		if (v & (1u << i))
			r |= 1u << (bits - 1 - i);
	return r;
}

void ev_nccl_p2p_plan(struct ev_nccl_p2p *pp, const struct ev_nccl_preset *pr, uint64_t bytes, int is_send,
                      uint32_t me, uint32_t peer, uint32_t n, uint32_t nnodes, int intra, unsigned p2p_nch)
{
	memset(pp, 0, sizeof *pp);
	unsigned comm_ch = pr->search_ch * 2 > EV_NCCL_MAXCH ? EV_NCCL_MAXCH : pr->search_ch * 2;
	if (pr->p2p_nchannels)
		comm_ch = pr->p2p_nchannels;
	if (p2p_nch)
		comm_ch = p2p_nch > EV_NCCL_MAXCH ? EV_NCCL_MAXCH : p2p_nch;
	uint64_t p2pn = pow2_up(comm_ch);
	if (p2pn > EV_NCCL_MAXCH)
		p2pn = EV_NCCL_MAXCH;
	uint64_t chunk = nnodes > 1 ? 128 * KiB : (pr->nvlink ? 512 * KiB : 128 * KiB);
	uint64_t cmax = intra ? pr->p2p_per_peer_intra : pr->p2p_per_peer_inter;
	cmax = umin(pow2_up(cmax), p2pn);
	uint64_t cmin = cmax;
	while (cmin * n > p2pn && cmin > 1)
		cmin /= 2;
	uint64_t min_part = nnodes > 1 ? chunk / 2 : chunk / 8, max_part = nnodes > 1 ? chunk : chunk * 32;
	uint64_t nch = umax(1, umin(cmin, div_up(bytes, min_part)));
	uint64_t part = umax(min_part, div_up(bytes, nch));
	while (part > max_part && nch <= cmax / 2) {
		nch *= 2;
		part = div_up(bytes, nch);
	}
	uint64_t P = align_up(div_up(bytes, nch), 4 * KiB);
	int ll = intra && bytes <= nch * 16384;
	pp->proto = ll ? EV_PROTO_LL : EV_PROTO_SIMPLE;
	uint64_t step_chunk = ll ? 32 * KiB : chunk;
	/* A round's base channel from the rank distance (an approximation of
	 * ncclP2pChannelBaseForRound; both sides compute the same). */
	uint32_t delta = is_send ? (peer + n - me) % n : (me + n - peer) % n;
	int bits = ilog2(p2pn);
	unsigned base = bitrev(delta % (unsigned)p2pn, bits);
	for (uint64_t pi = 0; pi < nch; pi++) {
		uint64_t lo = umin(sat_mul(pi, P), bytes), hi = umin(sat_mul(pi + 1, P), bytes);
		if (hi == lo && !(bytes == 0 && pi == 0))
			continue;
		struct ev_nccl_p2p_part *p = &pp->part[pp->nparts++];
		p->channel = (unsigned)((base + pi) & (p2pn - 1));
		p->bytes = hi - lo;
		p->chunk = step_chunk;
	}
}
