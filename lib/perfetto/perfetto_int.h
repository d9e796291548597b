/* SPDX-License-Identifier: MIT */
/*
 * perfetto_int.h - what the files of lib/perfetto/ share: the JSON text
 * buffer, the output, tracks, counters, flow state and the ev_perfetto
 * itself.  Not installed.
 */
#ifndef EV_PERFETTO_INT_H
#define EV_PERFETTO_INT_H

#include <string.h>
#include <zlib.h>

#include "ev/perfetto.h"
#include "ev/stats.h"
#include "ev/stream.h"

/* ---- emit.c: JSON text and the output ---------------------------------- */

/* A growable byte buffer; grows geometrically, so a long run makes no
 * allocation per event.  An allocation failure sets oom and drops text. */
struct pf_buf { char *p; size_t len, cap; int oom; };

/* Room for n more bytes: 1, or 0 with oom set (the slow path of pf_room). */
int pf_grow(struct pf_buf *b, size_t n);

/* The puts are inline: an event is a few dozen of them, and a literal's
 * length is then known where it is written. */
static inline int pf_room(struct pf_buf *b, size_t n)
{
	return b->cap - b->len >= n || pf_grow(b, n);
}
static inline void pf_put(struct pf_buf *b, const char *s, size_t n)
{
	if (!pf_room(b, n))
		return;
	memcpy(b->p + b->len, s, n);
	b->len += n;
}
static inline void pf_puts(struct pf_buf *b, const char *s)
{
	pf_put(b, s, strlen(s));
}
static inline void pf_u64(struct pf_buf *b, uint64_t v)
{
	if (pf_room(b, 20))
		b->len = (size_t)(ev_put_dec(b->p + b->len, v) - b->p);
}
void pf_i64(struct pf_buf *b, int64_t v);
void pf_us(struct pf_buf *b, int64_t ns);             /* ns as us, three decimals */
void pf_jstr(struct pf_buf *b, const char *s, size_t n); /* a quoted JSON string */
void pf_key(struct pf_buf *b, const char *key);       /* ,"key": */
void pf_kv_u64(struct pf_buf *b, const char *key, uint64_t v);
void pf_kv_str(struct pf_buf *b, const char *key, const char *s);
/* An AIU kernel r's stage counters TS1..TS5 as acelyzer's args (decimal
 * text), from the tsx record x right before it (have: one was read). */
void pf_tsx_args(struct pf_buf *b, const struct ev_rec *x, int have, const struct ev_rec *r);

/* The caller's output, plain or through deflate. */
struct pf_out {
	ev_output *out;
	int gz, zinit;
	z_stream z;
	uint64_t raw_bytes; /* JSON bytes before compression */
};

/* ---- tracks.c: processes, tracks and lanes ------------------------------ */

/* What a track holds, which decides its name and id range. */
enum pf_kind { PF_STREAM, PF_THREAD, PF_CHANNEL, PF_LANE, PF_CRITICAL };

struct pf_span { int64_t ts, end; };

/* One track: a thread of a process.  Lane > 0 holds slices that overlap
 * lane 0's without nesting. */
struct pf_track {
	uint32_t rank, id;
	uint8_t gpu, kind, lane;
	int64_t pid, tid;
	struct pf_span *stk; /* slices open on it, innermost last */
	uint32_t depth, cap;
};

/* ---- counters.c: counter tracks over intervals -------------------------- */

struct pf_hent { int64_t end; uint64_t delta; };
/* A counter over intervals: a min-heap of the running intervals' ends, and
 * the last sample held back until the next one has another time (only the
 * final value at one instant is written). */
struct pf_counter {
	struct pf_hent *h;
	size_t n, cap;
	uint64_t value, pend_val;
	int64_t pend_ts;
	int have_pend;
};
enum { PF_C_COMM, PF_C_WIRE, PF_C_KERNELS, PF_NCOUNTERS };

/* A series of HTA's counters (queue length of a stream, bandwidth of a
 * kind of copy) of a rank, its last value held until time moves on. */
struct pf_series {
	uint32_t rank, id;
	int what;             /* enum ev_stats_series */
	int have;
	int64_t ts;
	double v;
	char name[40];
};

/* A rank: its two processes and its counters. */
struct pf_proc {
	uint32_t rank;
	uint8_t named[2];     /* [0] CPU, [1] GPU metadata written */
	uint32_t alt_next[2]; /* next spare tid */
	struct pf_counter cnt[PF_NCOUNTERS];
};

/* ---- flows.c ------------------------------------------------------------ */

/* One end of a flow: the slice it binds to. */
struct pf_ep { int64_t ts, end, pid, tid; };

/* A connection (comm, channel, sender -> receiver): its first unmatched
 * ends, all of one side, in order, in a ring. */
struct pf_conn {
	int side; /* 1 sends waiting, 2 receives waiting */
	struct pf_ep *q;
	uint32_t head, len, cap;
};

/* A runtime call remembered for the kernel it launched. */
#define PF_LAUNCH_SLOTS (1u << 16)
struct pf_launch { uint64_t key; struct pf_ep ep; };

/* ---- the timeline ------------------------------------------------------- */

struct ev_perfetto {
	struct ev_perfetto_opts o;
	const ev_strtab *st;
	const ev_meta *meta;
	struct pf_out jo;
	struct pf_buf ob;    /* events not yet written */
	struct pf_buf name;  /* scratch for an event's name */
	struct pf_buf tname; /* scratch for process and thread names */
	int64_t base;        /* time zero of relative times */
	int have_base, first_event;
	struct ev_order order;
	uint64_t records, nevents;
	struct ev_map track_ix, proc_ix, conn_ix;
	struct ev_vec tracks, procs, conns; /* struct pf_track, pf_proc, pf_conn */
	struct pf_launch *launch;           /* PF_LAUNCH_SLOTS */
	struct pf_launch *pmark;            /* PF_LAUNCH_SLOTS: pattern instances' op marks, made on first use */
	ev_collmatch *colls;                /* open collectives, for their chains */
	uint64_t flow_id, pending, dropped, evicted, unmatched;
	uint64_t flows[EV_PERFETTO_NFLOWS], reversed[EV_PERFETTO_NFLOWS];
	uint64_t lanes_made, clipped, skipped;
	struct ev_perfetto_error err;
	struct ev_rec tsx;   /* an AIU kernel's TS1..TS5, for the record after it */
	int have_tsx;
	struct ev_rec ideal; /* an AIU kernel's ideal cycles, for the kernel after it */
	int have_ideal;
	ev_stats *hta[2];    /* HTA's queue and membw analyses (o.hta_counters) */
	struct ev_vec series; /* struct pf_series */
	struct ev_map series_ix;
	ev_stats *cp;        /* the critical path's analysis (o.critical_path) */
	uint64_t cp_segments;
};

/* emit.c */
int pf_out_init(ev_perfetto *p, ev_output *out);
int pf_out_finish(ev_perfetto *p);
void pf_out_end(ev_perfetto *p);
int pf_flush(ev_perfetto *p, int force);
int pf_fail(ev_perfetto *p, int status, const char *fmt, ...) EV_PRINTF(3, 4);
int pf_out_fail(ev_perfetto *p, int status);
void pf_event(ev_perfetto *p, const char *ph, int64_t pid, int64_t tid);
void pf_meta_event(ev_perfetto *p, const char *what, int64_t pid, int64_t tid, const char *name, int64_t sort);
int64_t pf_rel_ts(const ev_perfetto *p, int64_t ts);

/* tracks.c */
int64_t pf_pid(const ev_perfetto *p, uint32_t rank, int gpu);
struct pf_proc *pf_get_proc(ev_perfetto *p, uint32_t rank, int gpu);
struct pf_track *pf_get_track(ev_perfetto *p, uint32_t rank, int gpu, int kind, uint32_t id, int lane);
struct pf_track *pf_place(ev_perfetto *p, uint32_t rank, int gpu, int kind, uint32_t id, int64_t ts, int64_t *end);
void pf_tracks_free(ev_perfetto *p);

/* counters.c */
void pf_counter_add(ev_perfetto *p, struct pf_proc *pr, int which, int64_t ts, int64_t end, uint64_t delta);
void pf_counters_finish(ev_perfetto *p);
int pf_hta_init(ev_perfetto *p);
int pf_hta_add(ev_perfetto *p, const struct ev_rec *r);
int pf_hta_finish(ev_perfetto *p);
void pf_hta_free(ev_perfetto *p);

/* flows.c */
int pf_flows_init(ev_perfetto *p);
/* A flow of kind (EV_PERFETTO_*) from slice `from` to slice `to`. */
void pf_flow_pair(ev_perfetto *p, int kind, const char *name, const struct pf_ep *from, const struct pf_ep *to);
int pf_flows_add(ev_perfetto *p, const struct ev_rec *r, const struct pf_ep *e, const char *opw);
int pf_flows_finish(ev_perfetto *p);
void pf_flows_free(ev_perfetto *p);

/* critpath.c */
int pf_cp_init(ev_perfetto *p);
int pf_cp_add(ev_perfetto *p, const struct ev_rec *r);
int pf_cp_finish(ev_perfetto *p);
void pf_cp_free(ev_perfetto *p);

/* slices.c */
int pf_record(ev_perfetto *p, const struct ev_rec *r);

#endif /* EV_PERFETTO_INT_H */
