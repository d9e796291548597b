/* SPDX-License-Identifier: MIT */
/*
 * commseq_int.h - --comm-summarize-seq (lib/flex/commseq.c): acelyzer's
 * --comm_summarize_seq, each request's SenRdma slices of a job merged into
 * one.  Private to lib/flex.
 */
#ifndef EV_FLEX_COMMSEQ_INT_H
#define EV_FLEX_COMMSEQ_INT_H

#include "ev/flex.h"

enum { CS_MAX_PEERS = 64 };

/* One open request: (src, rank, request id) and its members so far. */
struct cs_group {
	uint64_t key;
	uint64_t opened;        /* order of opening: the oldest is closed first */
	uint64_t first_name;    /* string id of its first member's name */
	size_t lcp;             /* bytes of first_name every member shares */
	int64_t start, end;     /* output time */
	int64_t off;            /* the rank's clock offset: order time = output time + off */
	uint32_t members;
	struct ev_rec kept;     /* the member that starts last (acelyzer keeps it) */
	int npeers;
	int32_t peers[CS_MAX_PEERS]; /* union of the members' args.Peer, ascending */
};

struct cs {
	int64_t window;         /* ns past a group's end before it closes */
	size_t max;             /* open groups at most */
	struct ev_vec g;        /* struct cs_group, open ones */
	int64_t next_close;     /* lowest order time at which a group may close */
	uint64_t opened;
	uint64_t merged;        /* slices written for groups of two or more */
	uint64_t absorbed;      /* member slices in those */
	uint64_t early;         /* groups closed early: the table was full */
	uint64_t peers_lost;    /* peers past CS_MAX_PEERS of a group */
	char *buf;
	size_t cap;
};

void cs_init(struct cs *s, int64_t window, size_t max);
void cs_free(struct cs *s);
/* The stream reached order time t (time order of the converter's last
 * pass): groups whose end + window lies before t are written to out. */
int cs_tick(struct cs *s, ev_strtab *st, ev_sorter *out, int64_t t);
/* A finished record r (output time, the rank's offset off subtracted from
 * its order time), with its member args.Peer (-1 none): *taken = 1 when r is
 * a SenRdma slice with a request id, now in its group; 0: write it as is. */
int cs_add(struct cs *s, ev_strtab *st, ev_sorter *out, uint16_t src, const struct ev_rec *r, int64_t off,
           int32_t peer, int *taken);
/* End of input: every group still open to out. */
int cs_finish(struct cs *s, ev_strtab *st, ev_sorter *out);

#endif
