/* SPDX-License-Identifier: MIT */
/*
 * convert.c - Flex events to ev records, in two streaming passes over an
 * external sorter, with memory per open B event, per (rank, thread), per
 * (rank, CollGroup) and per job - never per event.
 *
 * Pass 1 (reading): B/E pairs become complete events (paired per input,
 * pid, tid and name, the innermost open B first), device events get their
 * device-time interval, each event its first-pass class; records go to
 * sorter 1 with the class and sync tag parked in aux and sig.
 * Pass 2 (sorter 1 in time order): the job-window refinement of DMA classes
 * (protocol signal vs data), the final sig text, --overlap=drop, and the
 * per-rank collective spans (coll records); everything goes to sorter 2,
 * which the writer drains.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "ev/flex.h"
#include "ev/stream.h"
#include "flex/acealign_int.h"
#include "flex/commseq_int.h"
#include "flex/counters_int.h"
#include "flex/freq_int.h"

/* Pass-1 aux: class + 1 in the low byte, then marks. */
#define AUX_MCAST (1u << 8)  /* a MultiCast (final broadcast) send */
#define AUX_FINAL (1u << 9)  /* a receive of the final broadcast */
#define AUX_DEVICE (1u << 10) /* a device event (TS1..TS5) */
#define AUX_POWER (1u << 11)  /* a power reading (counter record until pass 3) */
#define AUX_PEER (1u << 12)   /* --comm-summarize-seq: args.Peer + 1 parked in step */
#define MAX_DEPTH 64

struct open_b {
	uint64_t key;
	int64_t below;           /* slot index + 1 of the B under this one, 0 none */
	int64_t ts;
	uint16_t src;
	struct ev_flex_event ev; /* strings replaced by ids below */
	uint64_t group_id, sync_id;
};

struct window { int64_t first, last; };
struct span { int64_t start, end, final_end; uint64_t bytes; uint32_t seq; int open, done; uint32_t rank; uint64_t comm; };
struct lane { int64_t ends[MAX_DEPTH]; int depth; };
struct comm_info { uint64_t id; uint64_t mask; int large; };
/* --flex-ts-fix: the host ranges of a job's AIU Roundtrip and device events. */
struct job { uint16_t src; uint32_t rank; int64_t cpu0, cpu1, aiu0, aiu1; int have_cpu, have_aiu; int64_t offset; };
/* An unmatched end of a send/recv pair in time order. */
struct pending { int64_t end; int side; /* 0 none, 1 send, 2 recv */ };
/* The tightest send->recv pair seen between two ranks: recv end - send end. */
struct edge { uint32_t from, to; int64_t min_diff; uint64_t pairs; };

struct ev_flex_conv {
	struct ev_flex_opts o;
	ev_strtab *st;
	ev_sorter *s1, *s2, *s3;
	struct ev_map jobs_ix;     /* (src, rank) -> index + 1: --flex-ts-fix ranges */
	struct ev_vec jobs;        /* struct job */
	struct ev_map pend_ix;     /* (comm, sender, receiver) -> index + 1 */
	struct ev_vec pend;        /* struct pending */
	struct ev_map edge_ix;     /* (sender, receiver) -> index + 1 */
	struct ev_vec edges;       /* struct edge */
	struct ev_flex_align *align; /* per rank, in c->ranks order */
	struct ev_flex_counts n;
	struct ev_map open_ix;     /* (src, pid, tid, name) -> top slot + 1 */
	struct ev_vec slots;       /* struct open_b */
	int64_t free_slot;         /* slot + 1 of a free slot chain, 0 none */
	struct ev_map streams;     /* (rank, tid) -> stream */
	struct ev_map next_stream; /* rank + 1 -> next stream number */
	struct ev_map windows_ix;  /* (src, rank) -> index + 1 */
	struct ev_vec windows;
	struct ev_map comm_ix;     /* comm id -> index + 1 */
	struct ev_vec comms;       /* struct comm_info */
	struct ev_map span_ix;     /* (rank, comm) -> index + 1 */
	struct ev_vec spans;
	struct ev_map lane_ix;     /* (rank, stream) -> index + 1 */
	struct ev_vec lanes;
	struct ev_map rank_seen;   /* rank + 1 -> 1 */
	struct ev_map p2p_seq;     /* (rank, comm, peer, direction) -> next seq */
	struct fq freq;            /* clock detection per (input, rank) */
	struct fc ctr;             /* counter tracks: ConcurrentPreps, Power (mW) */
	struct fa ace;             /* --align=acelyzer */
	struct cs cs;              /* --comm-summarize-seq */
	uint64_t ace_moved;
	struct ev_map ideal;       /* kernel name id -> ideal ns + 2, 1 not in the tables */
	struct ev_rec tsx;         /* pass 3: the tsx record waiting for its kernel */
	uint64_t pt_name;          /* string id of the PT Active series */
	int have_tsx;
	uint32_t *ranks;
	size_t nranks;
	char *buf;
	size_t cap;
	int err;
};

void ev_flex_opts_init(struct ev_flex_opts *o)
{
	memset(o, 0, sizeof *o);
	o->soc_khz = 1000000;
	o->tighten = 1;
	o->rank = -1;
	o->colls = 1;
	o->align = EV_FLEX_ALIGN_P2P;
	o->core_khz = 1100000;
	o->comm_seq_window = 1000000;
	o->comm_seq_max = 4096;
}

static uint64_t hkey(uint64_t a, uint64_t b, uint64_t c, uint64_t d)
{
	unsigned char k[32];
	ev_put64(k, a);
	ev_put64(k + 8, b);
	ev_put64(k + 16, c);
	ev_put64(k + 24, d);
	uint64_t h = ev_hash64(k, sizeof k);
	return h ? h : 1;
}

int ev_flex_conv_new(ev_flex_conv **out, const struct ev_flex_opts *o, ev_strtab *st)
{
	ev_flex_conv *c = calloc(1, sizeof *c);
	*out = NULL;
	if (!c)
		return EV_ERR_NOMEM;
	c->o = *o;
	c->st = st;
	ev_map_init(&c->open_ix);
	ev_map_init(&c->streams);
	ev_map_init(&c->next_stream);
	ev_map_init(&c->windows_ix);
	ev_map_init(&c->comm_ix);
	ev_map_init(&c->span_ix);
	ev_map_init(&c->lane_ix);
	ev_map_init(&c->rank_seen);
	ev_map_init(&c->p2p_seq);
	ev_vec_init(&c->slots, sizeof(struct open_b));
	ev_vec_init(&c->windows, sizeof(struct window));
	ev_vec_init(&c->comms, sizeof(struct comm_info));
	ev_vec_init(&c->spans, sizeof(struct span));
	ev_vec_init(&c->lanes, sizeof(struct lane));
	ev_map_init(&c->jobs_ix);
	ev_map_init(&c->pend_ix);
	ev_map_init(&c->edge_ix);
	ev_vec_init(&c->jobs, sizeof(struct job));
	ev_vec_init(&c->pend, sizeof(struct pending));
	ev_vec_init(&c->edges, sizeof(struct edge));
	fq_init(&c->freq);
	fc_init(&c->ctr);
	fa_init(&c->ace);
	cs_init(&c->cs, o->comm_seq_window, o->comm_seq_max);
	ev_map_init(&c->ideal);
	uint64_t budget = o->sort_bytes ? o->sort_bytes : (16u << 20);
	int rc = ev_sorter_open(&c->s1, budget, NULL);
	if (rc == EV_OK)
		rc = ev_sorter_open(&c->s2, budget, NULL);
	if (rc == EV_OK)
		rc = ev_sorter_open(&c->s3, budget, NULL);
	if (rc != EV_OK) {
		ev_flex_conv_free(c);
		return rc;
	}
	*out = c;
	return EV_OK;
}

void ev_flex_conv_free(ev_flex_conv *c)
{
	if (!c)
		return;
	ev_map_free(&c->open_ix);
	ev_map_free(&c->streams);
	ev_map_free(&c->next_stream);
	ev_map_free(&c->windows_ix);
	ev_map_free(&c->comm_ix);
	ev_map_free(&c->span_ix);
	ev_map_free(&c->lane_ix);
	ev_map_free(&c->rank_seen);
	ev_map_free(&c->p2p_seq);
	ev_vec_free(&c->slots);
	ev_vec_free(&c->windows);
	ev_vec_free(&c->comms);
	ev_vec_free(&c->spans);
	ev_vec_free(&c->lanes);
	if (c->s1)
		ev_sorter_close(c->s1);
	if (c->s2)
		ev_sorter_close(c->s2);
	if (c->s3)
		ev_sorter_close(c->s3);
	ev_map_free(&c->jobs_ix);
	ev_map_free(&c->pend_ix);
	ev_map_free(&c->edge_ix);
	ev_vec_free(&c->jobs);
	ev_vec_free(&c->pend);
	ev_vec_free(&c->edges);
	fq_free(&c->freq);
	fc_free(&c->ctr);
	fa_free(&c->ace);
	cs_free(&c->cs);
	ev_map_free(&c->ideal);
	free(c->align);
	free(c->ranks);
	free(c->buf);
	free(c);
}

const struct ev_flex_counts *ev_flex_conv_counts(const ev_flex_conv *c) { return &c->n; }
size_t ev_flex_conv_nranks(const ev_flex_conv *c) { return c->nranks; }
int ev_flex_conv_freq(const ev_flex_conv *c, uint16_t src, struct ev_flex_freq *f) { return fq_get(&c->freq, src, f); }
uint32_t ev_flex_conv_rank(const ev_flex_conv *c, size_t i) { return c->ranks[i]; }

static int intern(ev_flex_conv *c, const char *s, size_t n, uint64_t *id)
{
	*id = 0;
	if (!s || !n)
		return EV_OK;
	return ev_strtab_intern(c->st, s, n, id);
}

static int note_rank(ev_flex_conv *c, uint32_t rank)
{
	if (ev_map_get(&c->rank_seen, (uint64_t)rank + 1))
		return EV_OK;
	if (ev_map_put(&c->rank_seen, (uint64_t)rank + 1, 1))
		return EV_ERR_NOMEM;
	uint32_t *r = realloc(c->ranks, (c->nranks + 1) * sizeof *r);
	if (!r)
		return EV_ERR_NOMEM;
	c->ranks = r;
	size_t i = c->nranks++;
	while (i > 0 && r[i - 1] > rank) {
		r[i] = r[i - 1];
		i--;
	}
	r[i] = rank;
	return EV_OK;
}

/* Dense stream numbers per rank from 1, in order of first appearance
 * (stream 0 carries the collective spans). */
static int stream_of(ev_flex_conv *c, uint32_t rank, uint64_t tid, uint32_t *stream)
{
	uint64_t k = hkey(rank, tid, 0x5354, 0);
	uint64_t *v = ev_map_get(&c->streams, k);
	if (v) {
		*stream = (uint32_t)*v;
		return EV_OK;
	}
	uint64_t *nx = ev_map_get(&c->next_stream, (uint64_t)rank + 1);
	uint64_t s = nx ? *nx : 1;
	if (ev_map_put(&c->next_stream, (uint64_t)rank + 1, s + 1) || ev_map_put(&c->streams, k, s))
		return EV_ERR_NOMEM;
	*stream = (uint32_t)s;
	return EV_OK;
}

static int comm_note(ev_flex_conv *c, uint64_t comm, uint32_t rank, const struct ev_flex_event *e)
{
	uint64_t *ix = ev_map_get(&c->comm_ix, comm);
	struct comm_info *ci;
	if (ix) {
		ci = (struct comm_info *)c->comms.data + (*ix - 1);
	} else {
		ci = ev_vec_push(&c->comms);
		if (!ci || ev_map_put(&c->comm_ix, comm, c->comms.len))
			return EV_ERR_NOMEM;
		ci->id = comm;
	}
	if (rank < 64)
		ci->mask |= 1ull << rank;
	else
		ci->large = 1;
	for (int i = 0; i < e->npeers; i++) {
		if (e->peers[i] >= 0 && e->peers[i] < 64)
			ci->mask |= 1ull << e->peers[i];
		else
			ci->large = 1;
	}
	return EV_OK;
}

static unsigned comm_nranks(const ev_flex_conv *c, uint64_t comm)
{
	uint64_t *ix = ev_map_get(&c->comm_ix, comm);
	if (!ix)
		return 0;
	const struct comm_info *ci = (const struct comm_info *)c->comms.data + (*ix - 1);
	return ci->large ? 0 : (unsigned)__builtin_popcountll(ci->mask);
}

static int window_note(ev_flex_conv *c, uint16_t src, uint32_t rank, int64_t ts)
{
	uint64_t k = hkey(src, rank, 0x574E, 0);
	uint64_t *ix = ev_map_get(&c->windows_ix, k);
	struct window *w;
	if (ix) {
		w = (struct window *)c->windows.data + (*ix - 1);
	} else {
		w = ev_vec_push(&c->windows);
		if (!w || ev_map_put(&c->windows_ix, k, c->windows.len))
			return EV_ERR_NOMEM;
		w->first = w->last = ts;
	}
	if (ts < w->first)
		w->first = ts;
	if (ts > w->last)
		w->last = ts;
	return EV_OK;
}

static int job_note(ev_flex_conv *c, uint16_t src, uint32_t rank, int device, int64_t ts, uint64_t dur)
{
	uint64_t k = hkey(src, rank, 0x4A42, 0);
	uint64_t *ix = ev_map_get(&c->jobs_ix, k);
	struct job *j;
	if (ix) {
		j = (struct job *)c->jobs.data + (*ix - 1);
	} else {
		j = ev_vec_push(&c->jobs);
		if (!j || ev_map_put(&c->jobs_ix, k, c->jobs.len))
			return EV_ERR_NOMEM;
		j->src = src;
		j->rank = rank;
	}
	int64_t end = ts + (int64_t)dur;
	if (device) {
		if (!j->have_aiu || ts < j->aiu0)
			j->aiu0 = ts;
		if (!j->have_aiu || end > j->aiu1)
			j->aiu1 = end;
		j->have_aiu = 1;
	} else {
		if (!j->have_cpu || ts < j->cpu0)
			j->cpu0 = ts;
		if (!j->have_cpu || end > j->cpu1)
			j->cpu1 = end;
		j->have_cpu = 1;
	}
	return EV_OK;
}

/* A complete event (host ts/dur known): classify and add its record. */
/* --strip-ids: acelyzer's remove_ids_from_name for communication events
 * (CollGroup, not Prep/Exec):
 * the first "_<digits>" followed by ' ', '_' or '-' becomes a space (not in
 * "Recv_<peer>_" names, where the number is the peer); the number is
 * returned (0 if none).  out has room for n + 1 bytes. */
static uint32_t strip_id(const char *s, size_t n, char *out, size_t *len)
{
	memcpy(out, s, n);
	*len = n;
	if (memmem(s, n, "Recv_", 5))
		return 0;
	for (size_t i = 0; i + 2 < n; i++) {
		if (s[i] != '_' || s[i + 1] < '0' || s[i + 1] > '9')
			continue;
		size_t j = i + 1;
		uint64_t v = 0;
		while (j < n && s[j] >= '0' && s[j] <= '9') {
			v = v * 10 + (uint64_t)(s[j] - '0');
			j++;
		}
		if (j >= n || (s[j] != ' ' && s[j] != '_' && s[j] != '-'))
			continue;
		out[i] = ' ';
		memcpy(out + i + 1, s + j + 1, n - j - 1);
		*len = i + 1 + (n - j - 1);
		return v > UINT32_MAX ? UINT32_MAX : (uint32_t)v;
	}
	return 0;
}

static int ensure_buf(ev_flex_conv *c, size_t n);

/* --align=acelyzer: a device record keeps its host placement until pass 2,
 * when the alignment is known; the way to its place on the aligned device
 * clock (device time + the rank's anchor - host placement) rides in fields
 * the converter's records do not use before pass 3 (seq, channel,
 * nthreads), cleared in pass 2. */
static void park(struct ev_rec *r, int64_t d)
{
	uint64_t u = (uint64_t)d;
	r->seq = (uint32_t)u;
	r->channel = (uint16_t)(u >> 32);
	r->nthreads = (uint16_t)(u >> 48);
}

static int64_t unpark(struct ev_rec *r)
{
	uint64_t u = (uint64_t)r->seq | (uint64_t)r->channel << 32 | (uint64_t)r->nthreads << 48;
	r->seq = 0;
	r->channel = 0;
	r->nthreads = 0;
	return (int64_t)u;
}

/* A kernel's TS1..TS5: the clock detection's sample, and a tsx record put
 * before the kernel k (same rank, stream, ts: the sorters keep the two
 * together).  Pass 1 parks TS3 - TS2 in comm, since aux holds the class
 * until pass 3.  Stages that go backwards or are 2^32 cycles apart do not
 * fit the record's 32-bit gaps: counted, no record. */
static int kernel_counters(ev_flex_conv *c, uint16_t src, const struct ev_flex_event *e, const struct ev_rec *k,
                           int64_t host_ts, uint64_t host_dur)
{
	uint64_t cy[5];
	ev_flex_counters(e, cy);
	int rc = fq_note(&c->freq, src, k->rank, host_ts, host_dur, cy[2], cy[3]);
	if (rc != EV_OK)
		return rc;
	for (int i = 1; i < 5; i++)
		if (cy[i] < cy[i - 1] || cy[i] - cy[i - 1] > UINT32_MAX) {
			c->n.tsx_bad++;
			return EV_OK;
		}
	struct ev_rec t;
	ev_rec_init(&t);
	t.type = EV_TSX;
	t.rank = k->rank;
	t.stream = k->stream;
	t.src = k->src;
	t.ts = k->ts;
	t.bytes = cy[0];
	t.step = (uint32_t)(cy[1] - cy[0]);
	t.comm = cy[2] - cy[1];
	t.step_size = (uint32_t)(cy[3] - cy[2]);
	t.id = (uint32_t)(cy[4] - cy[3]);
	t.aux = (k->aux & AUX_DEVICE) | (EV_FC_OTHER + 1);
	t.seq = k->seq; /* the kernel's parked way to its aligned place */
	t.channel = k->channel;
	t.nthreads = k->nthreads;
	return ev_sorter_add(c->s1, &t);
}

/* A device event's args.Power, read at its TS4 (acelyzer's power_ts4):
 * a counter record for pass 3 at the TS4 time, with the event's device
 * interval ending at the host end as for its slice.  Pass 1 parks the TS4
 * cycles in comm. */
static int power_reading(ev_flex_conv *c, const struct ev_flex_event *e, const struct ev_rec *k, int64_t host_ts,
                         uint64_t host_dur, const int64_t *dev, int64_t anchor)
{
	uint64_t cy[5];
	ev_flex_counters(e, cy);
	int op = ev_flex_instr(e->name, e->name_len);
	/* The event's reference counter and its time: the end of its
	 * instruction's interval at the host end, else TS1 at the host start. */
	uint64_t ref = op >= 0 ? cy[op + 1] : cy[0];
	int64_t at = op >= 0 ? host_ts + (int64_t)host_dur : host_ts;
	struct ev_rec p;
	ev_rec_init(&p);
	p.type = EV_COUNTER;
	p.rank = k->rank;
	p.src = k->src;
	p.stream = k->stream;
	p.ts = cy[3] >= ref ? at + (int64_t)ev_flex_cycles_ns(cy[3] - ref, c->o.soc_khz)
	                    : at - (int64_t)ev_flex_cycles_ns(ref - cy[3], c->o.soc_khz);
	p.bytes = e->power;
	p.comm = cy[3];
	if (dev)
		park(&p, fa_sub(fa_add(dev[3], anchor), p.ts));
	p.aux = AUX_POWER | AUX_DEVICE | (EV_FC_OTHER + 1);
	return ev_sorter_add(c->s1, &p);
}

static int emit(ev_flex_conv *c, uint16_t src, const struct ev_flex_event *e, int64_t ts, uint64_t dur,
                uint64_t group_id, uint64_t sync_id)
{
	uint64_t name_id;
	uint32_t reqid = 0;
	int instr = ev_flex_instr(e->name, e->name_len);
	if (c->o.strip_ids && group_id && instr != 1 && instr != 2) { /* not kernels: their names are kept */
		size_t nl;
		int src_rc = ensure_buf(c, e->name_len + 1);
		if (src_rc != EV_OK)
			return src_rc;
		reqid = strip_id(e->name, e->name_len, c->buf, &nl);
		if ((src_rc = intern(c, c->buf, nl, &name_id)) != EV_OK)
			return src_rc;
		if (reqid)
			c->n.stripped++;
	} else {
		int irc = intern(c, e->name, e->name_len, &name_id);
		if (irc != EV_OK)
			return irc;
	}
	int64_t r64 = c->o.rank >= 0 ? c->o.rank : e->pid;
	if (r64 < 0 || r64 > (int64_t)UINT32_MAX - 1)
		return EV_ERR_RANGE;
	uint32_t rank = (uint32_t)r64;
	int rc;
	if ((rc = note_rank(c, rank)) != EV_OK)
		return rc;
	unsigned cls = ev_flex_classify(e->name, e->name_len, group_id != 0);
	struct ev_rec r;
	ev_rec_init(&r);
	r.rank = rank;
	r.src = src;
	r.name = name_id;
	r.sig = sync_id;
	r.ts = ts;
	r.dur = dur;
	if (e->have_cyc) {
		c->n.device++;
		if (c->o.tighten && ev_flex_device_time(e, ts, dur, c->o.soc_khz, &r.ts, &r.dur))
			c->n.ovc++;
	} else {
		c->n.cpu++;
	}
	if (!r.dur)
		c->n.zero_dur++;
	if ((rc = stream_of(c, rank, e->tid, &r.stream)) != EV_OK)
		return rc;
	int64_t dev[5], anchor = 0;
	int ace = c->o.align == EV_FLEX_ALIGN_ACELYZER && e->have_cyc;
	if (ace) {
		/* acelyzer places a device event at its instruction's first
		 * counter (TS1 when it is no instruction). */
		uint64_t cy[5];
		ev_flex_counters(e, cy);
		int first = instr >= 0 ? instr : 0;
		if ((rc = fa_place(&c->ace, rank, cy, first, r.ts, c->o.soc_khz, dev)) != EV_OK)
			return rc;
		anchor = fa_rank_of(&c->ace, rank)->anchor;
		park(&r, fa_sub(fa_add(dev[first], anchor), r.ts));
		if (group_id && (rc = fa_note_group(&c->ace, rank, src, group_id,
		                                    memmem(e->name, e->name_len, "AllReduce_all_reduce", 20) != NULL, dev,
		                                    ev_rec_end(&r))) != EV_OK)
			return rc;
	}
	if (e->have_cyc && e->have_power && r.dur > 100 && !memmem(e->name, e->name_len, " Prep", 5) &&
	    (rc = power_reading(c, e, &r, ts, dur, ace ? dev : NULL, anchor)) != EV_OK)
		return rc;
	r.aux = cls + 1;
	if (e->have_cyc)
		r.aux |= AUX_DEVICE;
	if (c->o.ts_fix && (e->have_cyc || cls == EV_FC_ROUNDTRIP_AIU) && (rc = job_note(c, src, rank, e->have_cyc, ts, dur)) != EV_OK)
		return rc;
	if (group_id) {
		r.comm = group_id;
		if ((rc = comm_note(c, group_id, rank, e)) != EV_OK)
			return rc;
		if (e->ctype == EV_FT_MCAST)
			r.aux |= AUX_MCAST;
		if (e->ctype == EV_FT_DONE && e->sync && memmem(e->sync, e->sync_len, "_r0x", 4))
			r.aux |= AUX_FINAL;
	}
	if (e->have_bytes)
		r.bytes = e->bytes;
	r.id = e->correlation ? e->correlation : reqid;
	if (cls == EV_FC_COMPUTE_EXEC) {
		r.type = EV_KERNEL;
		if ((rc = window_note(c, src, rank, r.ts)) != EV_OK)
			return rc;
		if (e->have_cyc && (rc = kernel_counters(c, src, e, &r, ts, dur)) != EV_OK)
			return rc;
	} else if (group_id && (e->ctype == EV_FT_SEND || e->ctype == EV_FT_DONE) && e->npeers >= 1) {
		r.type = EV_P2P;
		r.op = e->ctype == EV_FT_SEND ? EV_OP_SEND : EV_OP_RECV;
		r.peer = e->peers[0];
		if (e->ctype == EV_FT_SEND)
			c->n.p2p_send++;
		else
			c->n.p2p_recv++;
	} else if (cls == EV_FC_COMPUTE_PREP || (e->have_cyc && ev_flex_instr(e->name, e->name_len) < 0)) {
		r.type = EV_RANGE;
		r.op = EV_RG_GPU_USER;
	} else if (ev_flex_instr(e->name, e->name_len) == 0) {
		r.type = EV_MEMCPY;
		r.op = EV_CP_HTOD;
	} else if (ev_flex_instr(e->name, e->name_len) == 3) {
		r.type = EV_MEMCPY;
		r.op = EV_CP_DTOH;
	} else if (strstr(e->name, "Launch") && strstr(e->name, "ControlBlock")) {
		r.type = EV_API;
		r.op = EV_API_RUNTIME;
	} else {
		r.type = EV_RANGE;
		r.op = EV_RG_OTHER;
	}
	if (c->o.comm_seq && e->have_peer_arg) {
		r.aux |= AUX_PEER;
		r.step = (uint32_t)e->peer_arg + 1;
	}
	return ev_sorter_add(c->s1, &r);
}

static int ensure_buf(ev_flex_conv *c, size_t n)
{
	if (n <= c->cap)
		return EV_OK;
	char *b = realloc(c->buf, n);
	if (!b)
		return EV_ERR_NOMEM;
	c->buf = b;
	c->cap = n;
	return EV_OK;
}

int ev_flex_conv_event(ev_flex_conv *c, uint16_t src, const struct ev_flex_event *e)
{
	int rc;
	uint64_t name_hash, group_id, sync_id;
	c->n.objects++;
	switch (e->ph) {
	case 'M': c->n.meta++; return EV_OK;
	case 'C': c->n.counters++; return EV_OK;
	case 'i': case 'I': case 'n': c->n.instants++; break;
	case 'B': c->n.begins++; break;
	case 'E': c->n.ends++; break;
	case 'X': c->n.completes++; break;
	default: c->n.other_ph++; return EV_OK;
	}
	if (!e->have_ts) {
		c->n.no_ts++;
		return EV_OK;
	}
	/* Names are interned when a slice is written (after --strip-ids), so a
	 * B waiting for its E costs no string. */
	name_hash = e->name_len ? ev_hash64(e->name, e->name_len) : 1;
	if ((rc = intern(c, e->group, e->group_len, &group_id)) != EV_OK ||
	    (rc = intern(c, e->sync, e->sync_len, &sync_id)) != EV_OK)
		return rc;
	if (e->ph == 'X') {
		if (e->have_dur < 0) {
			c->n.reversed++;
			return EV_OK;
		}
		return emit(c, src, e, e->ts, e->dur, group_id, sync_id);
	}
	if (e->ph == 'i' || e->ph == 'I' || e->ph == 'n') {
		int64_t r64 = c->o.rank >= 0 ? c->o.rank : e->pid;
		if (r64 < 0 || r64 > (int64_t)UINT32_MAX - 1)
			return EV_ERR_RANGE;
		struct ev_rec r;
		ev_rec_init(&r);
		r.type = EV_MARK;
		r.op = EV_RG_OTHER;
		r.rank = (uint32_t)r64;
		r.src = src;
		r.ts = e->ts;
		r.aux = EV_FC_OTHER + 1;
		if ((rc = intern(c, e->name, e->name_len, &r.name)) != EV_OK)
			return rc;
		if ((rc = note_rank(c, r.rank)) != EV_OK || (rc = stream_of(c, r.rank, e->tid, &r.stream)) != EV_OK)
			return rc;
		return ev_sorter_add(c->s1, &r);
	}
	uint64_t key = hkey(src, (uint64_t)e->pid, e->tid, name_hash);
	uint64_t *top = ev_map_get(&c->open_ix, key);
	if (e->ph == 'B') {
		struct open_b *b;
		int64_t slot;
		if (c->free_slot) {
			slot = c->free_slot - 1;
			b = (struct open_b *)c->slots.data + slot;
			c->free_slot = b->below;
		} else {
			b = ev_vec_push(&c->slots);
			if (!b)
				return EV_ERR_NOMEM;
			slot = (int64_t)c->slots.len - 1;
		}
		b->key = key;
		b->below = top ? (int64_t)*top : 0;
		b->ts = e->ts;
		b->src = src;
		b->ev = *e;
		b->ev.name = b->ev.group = b->ev.sync = b->ev.cat = NULL;
		b->group_id = group_id;
		b->sync_id = sync_id;
		return ev_map_put(&c->open_ix, key, (uint64_t)slot + 1);
	}
	/* E: close the innermost open B of the same input, pid, tid and name. */
	if (!top || !*top) {
		c->n.unmatched_e++;
		return EV_OK;
	}
	int64_t slot = (int64_t)*top - 1;
	struct open_b *b = (struct open_b *)c->slots.data + slot;
	*top = (uint64_t)b->below;
	b->key = 0;
	b->below = c->free_slot;
	c->free_slot = slot + 1;
	if (e->ts < b->ts) {
		c->n.reversed++;
		return EV_OK;
	}
	c->n.pairs++;
	/* Flex repeats the arguments on E, not always with the same values (the
	 * TP4 sample's rank 1 E has another TS4): B's win, as in acelyzer. */
	struct ev_flex_event m = b->ev;
	m.name = e->name;
	m.name_len = e->name_len;
	m.cat = e->cat;
	m.cat_len = e->cat_len;
	m.sync = e->sync;
	m.sync_len = e->sync_len;
	if (!m.have_cyc && e->have_cyc) {
		memcpy(m.cyc, e->cyc, sizeof m.cyc);
		m.have_cyc = 1;
	}
	if (!m.have_bytes && e->have_bytes) {
		m.bytes = e->bytes;
		m.have_bytes = 1;
	}
	if (!m.ctype)
		m.ctype = e->ctype;
	if (!m.npeers) {
		m.npeers = e->npeers;
		memcpy(m.peers, e->peers, sizeof m.peers);
	}
	if (!m.correlation)
		m.correlation = e->correlation;
	if (!m.have_peer_arg) {
		m.peer_arg = e->peer_arg;
		m.have_peer_arg = e->have_peer_arg;
	}
	if (b->group_id)
		group_id = b->group_id;
	if (group_id) {
		size_t gl;
		m.group = ev_strtab_get(c->st, group_id, &gl);
		m.group_len = gl;
	}
	return emit(c, src, &m, b->ts, (uint64_t)(e->ts - b->ts), group_id, b->sync_id ? b->sync_id : sync_id);
}

void ev_flex_conv_end_source(ev_flex_conv *c, uint16_t src)
{
	struct open_b *s = c->slots.data;
	for (size_t i = 0; i < c->slots.len; i++) {
		if (!s[i].key || s[i].src != src)
			continue;
		uint64_t *top = ev_map_get(&c->open_ix, s[i].key);
		if (top)
			*top = 0;
		s[i].key = 0;
		s[i].below = c->free_slot;
		c->free_slot = (int64_t)i + 1;
		c->n.unmatched_b++;
	}
}

/* ---- pass 2 ------------------------------------------------------------ */

static unsigned coll_kind(const char *g, size_t n)
{
	static const struct { const char *p; unsigned op; } k[] = {
		{ "AllReduce", EV_OP_ALLREDUCE }, { "AllGather", EV_OP_ALLGATHER },
		{ "ReduceScatter", EV_OP_REDUCESCATTER }, { "Broadcast", EV_OP_BROADCAST },
		{ "AllToAll", EV_OP_ALLTOALL }, { "Reduce", EV_OP_REDUCE }, { "Gather", EV_OP_GATHER },
		{ "Scatter", EV_OP_SCATTER },
	};
	for (size_t i = 0; i < sizeof k / sizeof *k; i++) {
		size_t m = strlen(k[i].p);
		if (n >= m && strncasecmp(g, k[i].p, m) == 0)
			return k[i].op;
	}
	return EV_OP_UNKNOWN;
}

static int span_emit(ev_flex_conv *c, struct span *sp)
{
	struct ev_rec r;
	size_t gl = 0;
	const char *g = ev_strtab_get(c->st, sp->comm, &gl);
	ev_rec_init(&r);
	r.type = EV_COLL;
	r.op = (uint8_t)coll_kind(g ? g : "", gl);
	r.flags = EV_F_SYNTH;
	r.rank = sp->rank;
	r.stream = 0;
	r.ts = sp->start;
	r.dur = (uint64_t)(sp->end - sp->start);
	r.bytes = sp->bytes;
	r.comm = sp->comm;
	r.seq = sp->seq;
	r.name = sp->comm;
	r.aux = comm_nranks(c, sp->comm);
	sp->open = 0;
	c->n.colls++;
	if (!sp->done)
		c->n.open_colls++;
	return ev_sorter_add(c->s3, &r);
}

static int span_note(ev_flex_conv *c, const struct ev_rec *r, unsigned marks)
{
	uint64_t k = hkey(r->rank, r->comm, 0x5350, 0);
	uint64_t *ix = ev_map_get(&c->span_ix, k);
	struct span *sp;
	int rc;
	if (ix) {
		sp = (struct span *)c->spans.data + (*ix - 1);
	} else {
		sp = ev_vec_push(&c->spans);
		if (!sp || ev_map_put(&c->span_ix, k, c->spans.len))
			return EV_ERR_NOMEM;
		sp->rank = r->rank;
		sp->comm = r->comm;
	}
	/* A receive is posted early and sorts by its start: the span is over
	 * once its final event has ended, not when that event starts. */
	if (sp->open && sp->done && r->ts >= sp->final_end && (rc = span_emit(c, sp)) != EV_OK)
		return rc;
	if (!sp->open) {
		sp->open = 1;
		sp->done = 0;
		sp->start = r->ts;
		sp->end = ev_rec_end(r);
		sp->bytes = 0;
		sp->seq++;
	}
	if (ev_rec_end(r) > sp->end)
		sp->end = ev_rec_end(r);
	if (r->bytes > sp->bytes)
		sp->bytes = r->bytes;
	/* The chain AllReduce ends on a rank with the final broadcast: its
	 * MultiCast send on the last rank, its receive on the others. */
	if (marks & (AUX_MCAST | AUX_FINAL)) {
		if (!sp->done || ev_rec_end(r) > sp->final_end)
			sp->final_end = ev_rec_end(r);
		sp->done = 1;
	}
	return EV_OK;
}

/* --overlap=drop: a slice that starts inside another on its lane and ends
 * after it cannot nest; drop it as acelyzer's -O drop does. */
static int lane_keep(ev_flex_conv *c, const struct ev_rec *r)
{
	uint64_t k = hkey(r->rank, r->stream, 0x4C4E, 0);
	uint64_t *ix = ev_map_get(&c->lane_ix, k);
	struct lane *l;
	if (ix) {
		l = (struct lane *)c->lanes.data + (*ix - 1);
	} else {
		l = ev_vec_push(&c->lanes);
		if (!l || ev_map_put(&c->lane_ix, k, c->lanes.len)) {
			c->err = EV_ERR_NOMEM;
			return 0;
		}
	}
	while (l->depth && l->ends[l->depth - 1] <= r->ts)
		l->depth--;
	if (l->depth && l->ends[l->depth - 1] < ev_rec_end(r))
		return 0;
	if (l->depth == MAX_DEPTH)
		return 0;
	l->ends[l->depth++] = ev_rec_end(r);
	return 1;
}

/* Pass 2: the --flex-ts-fix job offsets, the refined DMA classes and the
 * tightest send -> recv pair between every two ranks. */
/* --align=acelyzer: a device record at its place on the aligned device
 * clock, from its host placement (before --flex-ts-fix: acelyzer places
 * device events by their counters alone); the rest as they are. */
static int ace_add(ev_flex_conv *c, struct ev_rec *r, int64_t host)
{
	int64_t d = unpark(r);
	if (c->ace.done && (r->aux & AUX_DEVICE)) {
		r->ts = fa_sub(fa_add(host, d), fa_offset(&c->ace, r->rank));
		c->ace_moved += r->type != EV_TSX && !(r->aux & AUX_POWER);
	}
	return ev_sorter_add(c->s2, r);
}

static int pass2(void *ctx, struct ev_rec *r)
{
	ev_flex_conv *c = ctx;
	unsigned cls = (r->aux & 0xFF) - 1;
	int64_t host = r->ts;
	if (c->o.ts_fix && (r->aux & AUX_DEVICE)) {
		uint64_t *ix = ev_map_get(&c->jobs_ix, hkey(r->src, r->rank, 0x4A42, 0));
		if (ix)
			r->ts += ((struct job *)c->jobs.data)[*ix - 1].offset;
	}
	if (r->type == EV_TSX || (r->aux & AUX_POWER))
		return ace_add(c, r, host);
	if (cls == EV_FC_DATA_IN || cls == EV_FC_DATA_OUT) {
		uint64_t *ix = ev_map_get(&c->windows_ix, hkey(r->src, r->rank, 0x574E, 0));
		if (ix) {
			const struct window *w = (const struct window *)c->windows.data + (*ix - 1);
			if (r->ts > w->first && r->ts < w->last)
				r->aux = (r->aux & ~0xFFu) | (ev_flex_refine(cls, 1, r->bytes) + 1);
		}
	}
	if (r->type == EV_P2P && r->peer >= 0) {
		int send = r->op == EV_OP_SEND;
		uint32_t a = send ? r->rank : (uint32_t)r->peer, b = send ? (uint32_t)r->peer : r->rank;
		uint64_t k = hkey(r->comm, a, b, 0x5032);
		uint64_t *ix = ev_map_get(&c->pend_ix, k);
		struct pending *p;
		if (ix) {
			p = (struct pending *)c->pend.data + (*ix - 1);
		} else {
			p = ev_vec_push(&c->pend);
			if (!p || ev_map_put(&c->pend_ix, k, c->pend.len))
				return EV_ERR_NOMEM;
		}
		if (p->side && p->side != (send ? 1 : 2)) {
			int64_t diff = send ? p->end - ev_rec_end(r) : ev_rec_end(r) - p->end;
			uint64_t ek = hkey(a, b, 0x4544, 0);
			uint64_t *ei = ev_map_get(&c->edge_ix, ek);
			struct edge *e;
			if (ei) {
				e = (struct edge *)c->edges.data + (*ei - 1);
			} else {
				e = ev_vec_push(&c->edges);
				if (!e || ev_map_put(&c->edge_ix, ek, c->edges.len))
					return EV_ERR_NOMEM;
				e->from = a;
				e->to = b;
				e->min_diff = diff;
			}
			if (diff < e->min_diff)
				e->min_diff = diff;
			e->pairs++;
			p->side = 0;
		} else {
			p->side = send ? 1 : 2;
			p->end = ev_rec_end(r);
		}
	}
	return ace_add(c, r, host);
}

static struct ev_flex_align *align_of(ev_flex_conv *c, uint32_t rank)
{
	for (size_t i = 0; i < c->nranks; i++)
		if (c->align[i].rank == rank)
			return &c->align[i];
	return NULL;
}

static const struct edge *edge_find(const ev_flex_conv *c, uint32_t a, uint32_t b)
{
	uint64_t *ix = ev_map_get(&c->edge_ix, hkey(a, b, 0x4544, 0));
	return ix ? (const struct edge *)c->edges.data + (*ix - 1) : NULL;
}

/* Rank offsets from the pairs: a receive completes when its send has
 * landed (acelyzer's premise TS5(send) = TS2(recv)), so off(b) - off(a) =
 * recv end - send end for the tightest pair; with pairs both ways the
 * symmetric estimate (d_ab - d_ba) / 2 cancels the transfer latency.  From
 * the lowest rank, outwards over the pairs. */
static void align_ranks(ev_flex_conv *c)
{
	for (size_t i = 0; i < c->nranks; i++) {
		c->align[i].rank = c->ranks[i];
		c->align[i].via = c->ranks[i];
	}
	if (!c->nranks || c->o.align != EV_FLEX_ALIGN_P2P)
		return;
	c->align[0].aligned = 1;
	for (int changed = 1; changed;) {
		changed = 0;
		const struct edge *e = c->edges.data;
		for (size_t i = 0; i < c->edges.len; i++) {
			struct ev_flex_align *fa = align_of(c, e[i].from), *ta = align_of(c, e[i].to);
			if (!fa || !ta || fa->aligned == ta->aligned)
				continue;
			const struct edge *back = edge_find(c, e[i].to, e[i].from);
			int64_t d = back ? (e[i].min_diff - back->min_diff) / 2 : e[i].min_diff;
			struct ev_flex_align *known = fa->aligned ? fa : ta, *x = fa->aligned ? ta : fa;
			x->offset_ns = fa->aligned ? known->offset_ns + d : known->offset_ns - d;
			x->aligned = 1;
			x->via = known->rank;
			x->symmetric = back != NULL;
			x->pairs = e[i].pairs + (back ? back->pairs : 0);
			changed = 1;
		}
	}
}

/* acelyzer's rcu_util counter for kernel k: its ideal time from the
 * compiler tables over its duration, from its start to its end (kernels
 * not in the tables, or of no duration: none); above 100%, 101%, as
 * acelyzer writes it.  The ideal time of a name is looked up once. */
static int pt_active(ev_flex_conv *c, const struct ev_rec *k, const struct ev_rec *tsx)
{
	uint64_t *v = ev_map_get(&c->ideal, k->name), ideal;
	if (!v) {
		size_t n = 0;
		const char *nm = ev_strtab_get(c->st, k->name, &n);
		const struct ev_flex_kernel_info *ki = nm ? ev_flex_complog_find(c->o.cl, nm, n) : NULL;
		if (ev_map_put(&c->ideal, k->name, ki ? ki->ideal + 2 : 1))
			return EV_ERR_NOMEM;
		v = ev_map_get(&c->ideal, k->name);
	}
	c->n.pt_missing += *v == 1;
	uint64_t cycles = *v > 1 ? *v - 2 : 0;
	ideal = ev_flex_cycles_ns(cycles, c->o.core_khz);
	if (!ideal || !k->dur)
		return EV_OK;
	/* The exact cycles and clock for the kernel's pt_active, before its
	 * tsx: same rank, stream, ts and seq, so it stays in front of it. */
	struct ev_rec x;
	ev_rec_init(&x);
	x.type = EV_IDEAL;
	x.rank = k->rank;
	x.stream = k->stream;
	x.src = k->src;
	x.ts = k->ts;
	x.seq = k->seq;
	x.channel = k->channel;
	x.bytes = cycles;
	x.aux = (uint32_t)c->o.core_khz;
	/* The duration as acelyzer divides by it: the Exec interval TS3 -> TS4
	 * in SoC cycles, when the kernel's duration is that interval. */
	if (tsx && c->o.soc_khz <= UINT32_MAX && ev_flex_cycles_ns(tsx->step_size, c->o.soc_khz) == k->dur) {
		x.step = tsx->step_size;
		x.id = (uint32_t)c->o.soc_khz;
	}
	int rc;
	if ((rc = ev_sorter_add(c->s3, &x)) != EV_OK)
		return rc;
	c->n.ideal++;
	if (!c->pt_name && (rc = ev_strtab_intern(c->st, "PT Active (0.01%)", 17, &c->pt_name)) != EV_OK)
		return rc;
	uint64_t bp = ideal > k->dur ? 10100 : (uint64_t)llround((double)ideal / (double)k->dur * 10000.0);
	c->n.pt_over += ideal > k->dur;
	struct ev_rec p;
	ev_rec_init(&p);
	p.type = EV_COUNTER;
	p.rank = k->rank;
	p.src = k->src;
	p.name = c->pt_name;
	p.ts = k->ts;
	p.bytes = bp;
	if ((rc = ev_sorter_add(c->s3, &p)) != EV_OK)
		return rc;
	p.ts = ev_rec_end(k);
	p.bytes = 0;
	c->n.pt_samples += 2;
	return ev_sorter_add(c->s3, &p);
}

/* Pass 3: rank offsets, overlap drop, class counts, spans, seq, sig text. */
static int pass3(void *ctx, struct ev_rec *r)
{
	ev_flex_conv *c = ctx;
	int rc;
	unsigned cls = (r->aux & 0xFF) - 1, marks = r->aux & ~0xFFu;
	if (cls >= EV_FC_COUNT)
		cls = EV_FC_OTHER;
	/* --comm-summarize-seq: the stream is in time order before the rank
	 * offsets; requests it has passed are over. */
	if (c->o.comm_seq && (rc = cs_tick(&c->cs, c->st, c->s3, r->ts)) != EV_OK)
		return rc;
	int32_t peer = -1;
	if (marks & AUX_PEER) {
		peer = (int32_t)(r->step - 1);
		r->step = 0;
	}
	const struct ev_flex_align *al = align_of(c, r->rank);
	int64_t off = al && al->aligned ? al->offset_ns : 0;
	r->ts -= off;
	if (r->aux & AUX_POWER) {
		if (!c->ctr.power_name && (rc = ev_strtab_intern(c->st, "Power (mW)", 10, &c->ctr.power_name)) != EV_OK)
			return rc;
		return fc_power(&c->ctr, c->s3, r, r->comm, c->o.soc_khz);
	}
	if (cls == EV_FC_COMPUTE_PREP && r->type == EV_RANGE) {
		if (!c->ctr.prep_name && (rc = ev_strtab_intern(c->st, "ConcurrentPreps", 15, &c->ctr.prep_name)) != EV_OK)
			return rc;
		if ((rc = fc_prep(&c->ctr, c->s3, r)) != EV_OK)
			return rc;
		if (c->o.drop_prep) {
			c->n.dropped_prep++;
			c->have_tsx = 0;
			return EV_OK;
		}
	}
	/* A tsx waits for its kernel: written only right before it, so that a
	 * kernel left out takes its counters with it. */
	int tsx = c->have_tsx;
	c->have_tsx = 0;
	if (r->type == EV_TSX) {
		c->tsx = *r;
		c->tsx.aux = (uint32_t)r->comm;
		c->tsx.comm = 0;
		c->have_tsx = 1;
		return EV_OK;
	}
	if (c->o.overlap == EV_FLEX_OV_DROP && !lane_keep(c, r)) {
		if (c->err)
			return c->err;
		c->n.dropped_overlap++;
		return EV_OK;
	}
	tsx = tsx && r->type == EV_KERNEL && c->tsx.rank == r->rank && c->tsx.stream == r->stream && c->tsx.ts == r->ts;
	if (r->type == EV_KERNEL && c->o.cl && (rc = pt_active(c, r, tsx ? &c->tsx : NULL)) != EV_OK)
		return rc;
	if (tsx) {
		if ((rc = ev_sorter_add(c->s3, &c->tsx)) != EV_OK)
			return rc;
		c->n.tsx++;
	}
	c->n.cls[cls]++;
	if (r->comm && c->o.colls && (rc = span_note(c, r, marks)) != EV_OK)
		return rc;
	/* sig: the class, then the sync tag of communication events. */
	const char *cn = ev_flex_class_name(cls);
	size_t sl = 0;
	const char *sync = r->sig ? ev_strtab_get(c->st, r->sig, &sl) : NULL;
	if ((rc = ensure_buf(c, strlen(cn) + sl + 8)) != EV_OK)
		return rc;
	size_t n = (size_t)snprintf(c->buf, c->cap, "%s", cn);
	if (sync) {
		memcpy(c->buf + n, " sync=", 6);
		memcpy(c->buf + n + 6, sync, sl);
		n += 6 + sl;
	}
	if ((rc = ev_strtab_intern(c->st, c->buf, n, &r->sig)) != EV_OK)
		return rc;
	r->aux = r->type == EV_P2P ? comm_nranks(c, r->comm) : 0;
	if (r->type == EV_P2P) {
		/* The k-th send a->b and the k-th receive b<-a share a seq. */
		uint32_t a = r->op == EV_OP_SEND ? r->rank : (uint32_t)r->peer;
		uint32_t b = r->op == EV_OP_SEND ? (uint32_t)r->peer : r->rank;
		uint64_t k = hkey(a, b, r->comm, r->op);
		uint64_t *v = ev_map_get(&c->p2p_seq, k);
		r->seq = v ? (uint32_t)*v : 0;
		if (ev_map_put(&c->p2p_seq, k, (uint64_t)r->seq + 1))
			return EV_ERR_NOMEM;
	} else {
		r->comm = 0;
	}
	c->n.records++;
	if (c->o.comm_seq) {
		int taken;
		if ((rc = cs_add(&c->cs, c->st, c->s3, r->src, r, off, peer, &taken)) != EV_OK || taken)
			return rc;
	}
	return ev_sorter_add(c->s3, r);
}

/* --flex-ts-fix: a job whose device events lie outside its AIU Roundtrip
 * range moves them so that the first starts with the roundtrip; a job whose
 * device range is wider than the roundtrip is left alone (acelyzer does the
 * same, with a warning). */
static void job_offsets(ev_flex_conv *c)
{
	struct job *j = c->jobs.data;
	for (size_t i = 0; i < c->jobs.len; i++) {
		if (!j[i].have_cpu || !j[i].have_aiu || (j[i].cpu0 <= j[i].aiu0 && j[i].cpu1 >= j[i].aiu1))
			continue;
		if (j[i].cpu1 - j[i].cpu0 < j[i].aiu1 - j[i].aiu0) {
			c->n.ts_fix_wide++;
			continue;
		}
		j[i].offset = j[i].cpu0 - j[i].aiu0;
		c->n.ts_fix_jobs++;
	}
}

int ev_flex_conv_finish(ev_flex_conv *c, ev_writer *w)
{
	int rc;
	free(c->align);
	c->align = calloc(c->nranks ? c->nranks : 1, sizeof *c->align);
	if (!c->align)
		return EV_ERR_NOMEM;
	job_offsets(c);
	if (c->o.align == EV_FLEX_ALIGN_ACELYZER) {
		if ((rc = fa_solve(&c->ace, c->ranks, c->nranks, c->st)) != EV_OK)
			return rc;
		uint64_t *ix = c->ace.done && c->o.ts_fix
		                   ? ev_map_get(&c->jobs_ix, hkey(c->ace.ref_src, c->ace.ref_rank, 0x4A42, 0))
		                   : NULL;
		if (ix) /* the reference event's host end as --flex-ts-fix moved it */
			c->ace.ref_offset = fa_add(c->ace.ref_offset, ((struct job *)c->jobs.data)[*ix - 1].offset);
		for (size_t i = 0; i < c->nranks; i++) {
			const struct fa_rank *fr = fa_rank_of(&c->ace, c->ranks[i]);
			c->align[i].rank = c->ranks[i];
			c->align[i].aligned = c->ace.done && fr;
			c->align[i].shift_ns = c->align[i].aligned ? fr->shift : 0;
		}
	}
	/* (An empty sorter is not finished: ev_sorter_finish would qsort a NULL
	 * array, which UBSan reports.) */
	if (ev_sorter_count(c->s1) && (rc = ev_sorter_finish(c->s1, NULL, pass2, c)) != EV_OK)
		return rc;
	align_ranks(c);
	if (ev_sorter_count(c->s2) && (rc = ev_sorter_finish(c->s2, NULL, pass3, c)) != EV_OK)
		return rc;
	if ((rc = cs_finish(&c->cs, c->st, c->s3)) != EV_OK || (rc = fc_finish(&c->ctr, c->s3)) != EV_OK)
		return rc;
	c->n.records -= c->cs.absorbed - c->cs.merged;
	c->n.comm_merged = c->cs.merged;
	c->n.comm_absorbed = c->cs.absorbed;
	c->n.comm_early = c->cs.early;
	c->n.comm_peers_lost = c->cs.peers_lost;
	c->n.prep_samples = c->ctr.n_prep;
	c->n.power_samples = c->ctr.n_power;
	c->n.power_bad = c->ctr.n_power_bad;
	struct span *sp = c->spans.data;
	for (size_t i = 0; i < c->spans.len; i++)
		if (sp[i].open && (rc = span_emit(c, &sp[i])) != EV_OK)
			return rc;
	for (size_t i = 0; i < c->nranks; i++)
		if ((rc = ev_write_textf(w, "#rank %u device=aiu%u", c->ranks[i], c->ranks[i])) != EV_OK)
			return rc;
	if (c->ace.done && (rc = ev_write_textf(w, "#meta acelyzer.align=mp_sync_tight_v1 acelyzer.ref_offset_ns=%lld",
	                                        (long long)c->ace.ref_offset)) != EV_OK)
		return rc;
	for (size_t i = 0; c->ace.done && i < c->nranks; i++)
		if (c->align[i].aligned &&
		    (rc = ev_write_textf(w, "#meta acelyzer.rank%u.device_shift_ns=%lld", c->align[i].rank,
		                         (long long)c->align[i].shift_ns)) != EV_OK)
			return rc;
	for (size_t i = 0; c->o.align == EV_FLEX_ALIGN_P2P && c->nranks > 1 && i < c->nranks; i++)
		if (c->align[i].aligned &&
		    (rc = ev_write_textf(w, "#meta align.rank%u.offset_ns=%lld align.rank%u.drift_ppm=0 align.rank%u.t0_ns=0",
		                         c->align[i].rank, (long long)c->align[i].offset_ns, c->align[i].rank,
		                         c->align[i].rank)) != EV_OK)
			return rc;
	const struct comm_info *ci = c->comms.data;
	for (size_t i = 0; i < c->comms.len; i++) {
		if (ci[i].large)
			continue;
		char list[64 * 4], *p = list;
		for (unsigned r = 0; r < 64; r++)
			if (ci[i].mask >> r & 1)
				p += snprintf(p, sizeof list - (size_t)(p - list), "%s%u", p == list ? "" : ",", r);
		size_t gl = 0;
		const char *g = ev_strtab_get(c->st, ci[i].id, &gl);
		if ((rc = ev_write_textf(w, "#comm %llu nranks=%d ranks=%s name=%.*s", (unsigned long long)ci[i].id,
		                         __builtin_popcountll(ci[i].mask), list, (int)gl, g ? g : "")) != EV_OK)
			return rc;
	}
	return ev_sorter_count(c->s3) ? ev_sorter_finish(c->s3, w, NULL, NULL) : EV_OK;
}

const struct ev_flex_align *ev_flex_conv_align(const ev_flex_conv *c, size_t i)
{
	return c->align && i < c->nranks ? &c->align[i] : NULL;
}

void ev_flex_conv_ace(const ev_flex_conv *c, struct ev_flex_ace *out)
{
	memset(out, 0, sizeof *out);
	out->done = c->ace.done;
	out->tree = c->ace.tree;
	out->why = c->ace.why;
	out->why_rank = c->ace.why_rank;
	out->why_group = c->ace.why_group;
	out->ref_rank = c->ace.ref_rank;
	out->ref_group = c->ace.ref_group;
	out->ref_offset_ns = c->ace.ref_offset;
	out->moved = c->ace_moved;
}
