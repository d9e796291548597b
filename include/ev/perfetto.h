/* SPDX-License-Identifier: MIT */
/*
 * ev/perfetto.h - an ev stream as one multi-rank Chrome trace-event JSON
 * timeline, which Perfetto and chrome://tracing open (lib/perfetto/).
 *
 * An ev_perfetto writes each record as its event the moment it is added:
 * processes per rank (GPU and CPU), threads per stream, CPU thread, NCCL
 * channel and schedule lane, extra lanes where slices overlap without
 * nesting, flow arrows (launch, message, p2p, collective chains) and
 * counter tracks.  docs/ev2perfetto.md describes the output.
 *
 * Records must come in time order.  Memory grows with the distinct ranks,
 * streams and connections and with what is open at one moment (slices
 * nesting on a track, counter intervals, flow ends waiting for their
 * partner), never with the number of events.
 *
 * Like the rest of the library, nothing here prints or exits: functions
 * return EV_OK or a negative EV_ERR_* status, and the message for the
 * caller is in a struct ev_perfetto_error.
 */
#ifndef EV_PERFETTO_H
#define EV_PERFETTO_H

#include "ev/stream.h"

/* otherData.producer of every timeline: readers of trace JSON (kineto2ev,
 * flex2ev) recognise a timeline of ours by it. */
#define EV_PERFETTO_PRODUCER "ev2perfetto (evkit) " EV_VERSION_STRING
#define EV_PERFETTO_MAX_LANES 8 /* tracks per stream; beyond, slices are clipped */

/* Process ids of a rank's GPU and CPU processes. */
enum ev_perfetto_layout {
	EV_PERFETTO_LAYOUT_RANK,  /* GPU 2*rank, CPU 2*rank+1 */
	EV_PERFETTO_LAYOUT_AORTA, /* GPU 1000*rank, CPU 1000*rank+500 */
};

struct ev_perfetto_opts {
	enum ev_perfetto_layout layout;
	int gzip;             /* gzip the JSON */
	int rank_prefix;      /* "[R3] " before every slice name */
	int absolute;         /* times as in the stream, not from the first record */
	int no_flows;         /* leave out flow arrows */
	int no_counters;      /* leave out the counter tracks (counter records stay) */
	unsigned hta_counters; /* HTA's counter tracks, EV_PERFETTO_HTA_* bits */
	uint64_t max_pending; /* flow ends waiting for their partner; more are
	                         dropped and counted [1000000] */
	uint64_t max_events;  /* ev_perfetto_add fails with EV_ERR_LIMIT past
	                         this many trace events; 0: no limit [0] */
	int critical_path;    /* EV_PERFETTO_CP_*: HTA's critical path drawn */
	const char *cp_annotation; /* its window, as ev-stats critpath's */
	uint32_t cp_inst_lo, cp_inst_hi;
};
/* The critical path (ev-stats critpath, lib/analysis) as a "critical path"
 * track on each rank's GPU and CPU process, a slice per segment, joined by
 * flow arrows: each rank's own path (HTA's), or one path across the ranks
 * (--table=cross).  The window's events are held until the end, where the
 * path is written. */
enum { EV_PERFETTO_CP_NONE, EV_PERFETTO_CP_RANK, EV_PERFETTO_CP_CROSS };
/* HTA's time series as counter tracks on a rank's GPU process, every event
 * counted (HTA's last-step filter off): queue length per stream
 * (get_queue_length_time_series) and memory bandwidth per kind of copy
 * (get_memory_bw_time_series), made by ev-stats queue and membw. */
enum { EV_PERFETTO_HTA_QUEUE = 1, EV_PERFETTO_HTA_MEMBW = 2 };
void ev_perfetto_opts_init(struct ev_perfetto_opts *o);

/* What went wrong, for the caller's message. */
struct ev_perfetto_error {
	int status;    /* the EV_ERR_* code returned */
	int in_output; /* 1: writing the caller's ev_output failed; status is its
	                  code and msg is empty (the caller names its output) */
	char msg[256]; /* EV_ERR_ORDER: ev_order_text's words;
	                  EV_ERR_LIMIT: "more than N trace events";
	                  EV_ERR_NOMEM: "out of memory" */
};

typedef struct ev_perfetto ev_perfetto;

/* A timeline written to out (not closed here).  Names come from st, and
 * process names from meta's #rank lines and communicator sizes from its
 * #comm lines, as they are when each is first needed (the reader filling
 * them may run ahead).  EV_OK, or EV_ERR_NOMEM with *p NULL. */
int ev_perfetto_new(ev_perfetto **p, const struct ev_perfetto_opts *o, const ev_strtab *st, const ev_meta *meta,
                    ev_output *out);
/* One record, in time order: its events are written (the output is flushed
 * in large blocks).  After a failure the timeline is unusable: free it. */
int ev_perfetto_add(ev_perfetto *p, const struct ev_rec *r);
/* After the last record: the counters' last samples, the closing JSON and
 * the end of the gzip stream.  out is flushed, not closed. */
int ev_perfetto_finish(ev_perfetto *p);
const struct ev_perfetto_error *ev_perfetto_error(const ev_perfetto *p);
void ev_perfetto_free(ev_perfetto *p);

/* Counts, final after ev_perfetto_finish. */
enum { EV_PERFETTO_LAUNCH, EV_PERFETTO_MESSAGE, EV_PERFETTO_P2P, EV_PERFETTO_COLLECTIVE, EV_PERFETTO_CRITICAL,
       EV_PERFETTO_PATTERN, EV_PERFETTO_NFLOWS };
struct ev_perfetto_stats {
	uint64_t records;     /* records added */
	uint64_t events;      /* trace events written */
	uint64_t json_bytes;  /* JSON text, before gzip */
	uint64_t flows;       /* flow arrows, all kinds */
	uint64_t flows_by_kind[EV_PERFETTO_NFLOWS];
	uint64_t reversed[EV_PERFETTO_NFLOWS]; /* drawn backwards (second ended first) */
	uint64_t unmatched;   /* message ends that never met their partner */
	uint64_t incomplete;  /* collectives that never saw all their ranks */
	uint64_t dropped;     /* flow ends dropped: over max_pending, or a
	                         collective on a pid or tid too large to carry */
	uint64_t lanes;       /* extra tracks made for overlapping slices */
	uint64_t clipped;     /* slices clipped: every lane was taken */
	uint64_t skipped;     /* records with no event of their own (dep, chan, overlap) */
	uint64_t cp_segments; /* critical path segments drawn */
};
void ev_perfetto_get_stats(const ev_perfetto *p, struct ev_perfetto_stats *st);
/* After ev_perfetto_finish: what HTA's counters and critical path left out
 * or guessed (ev-stats queue's, membw's and critpath's warnings), each said
 * once through say. */
void ev_perfetto_say_notes(ev_perfetto *p, const struct ev_say *say);

/* The most trace events one record can give (a slice and a flow end), for
 * a size estimate before writing; the record needs only its type. */
unsigned ev_perfetto_events_max(const struct ev_rec *r);

/* ---- The PyTorch profiler's layout, for TensorBoard (lib/perfetto/tb.c) --
 *
 * One Kineto-style trace per rank, the layout torch_tb_profiler (kineto's
 * tb_plugin) loads: {"schemaVersion":1,"traceEvents":[...],
 * "deviceProperties":[...],"distributedInfo":{...},...}.  GPU events on
 * pid = the rank's device index with args.device equal to it (the plugin
 * indexes deviceProperties by it), tid = stream; CPU events on the rank's
 * process.  Kineto's categories: kernel, gpu_memcpy, gpu_memset,
 * cuda_runtime, cpu_op, user_annotation, gpu_user_annotation,
 * python_function; a flex2ev collective span (flag synth) is a
 * gpu_user_annotation named nccl:<collective> with an "external id", which
 * the plugin counts as communication.  docs/ev2perfetto.md has the table.
 *
 * Records must come in time order; memory grows with the ranks and their
 * streams, not with the events.  A rank's output is asked for through
 * open() when its first record comes, named by its worker name
 * ("<host>_<rank>", else "worker_<rank>"); the caller closes them. */
typedef struct ev_tb ev_tb;
/* Give *out for rank's file (worker: its worker name, the file's name
 * without ".pt.trace.json").  EV_OK or an EV_ERR_* the call passes on. */
typedef int (*ev_tb_open_fn)(void *ctx, uint32_t rank, const char *worker, ev_output **out);
struct ev_tb_stats {
	uint64_t records, events, ranks;
	uint64_t skipped;     /* records with no event of their own */
	uint64_t dev_guessed; /* ranks whose device index is not a number 0..63
	                         in #rank device=: the rank number, else 0, used */
};
/* o: only absolute and max_events are read. */
int ev_tb_new(ev_tb **t, const struct ev_perfetto_opts *o, const ev_strtab *st, const ev_meta *meta,
              ev_tb_open_fn open, void *ctx);
int ev_tb_add(ev_tb *t, const struct ev_rec *r);
/* Every rank's closing JSON; the outputs are flushed, not closed. */
int ev_tb_finish(ev_tb *t);
const struct ev_perfetto_error *ev_tb_error(const ev_tb *t);
void ev_tb_get_stats(const ev_tb *t, struct ev_tb_stats *st);
void ev_tb_free(ev_tb *t);
/* The worker name of rank into buf: "<host>_<rank>" from #rank host= (or
 * node=), characters other than [A-Za-z0-9-] as '_', else "worker_<rank>". */
void ev_tb_worker(const ev_meta *meta, uint32_t rank, char *buf, size_t n);

#endif /* EV_PERFETTO_H */
