/* SPDX-License-Identifier: MIT */
/*
 * ev/flex.h - IBM AIU runtime ("Flex") traces: dialect detection, the event
 * classes acelyzer derives, the conversion of Flex events into ev records
 * (lib/flex/convert.c) and the compiler "Perf Summary" tables used for
 * kernel categories (lib/flex/complog.c), and acelyzer's tables over a
 * flex2ev stream (lib/flex/stats*.c, the library of flex-stats).
 * docs/flex2ev.md describes the mapping; ../shared/notes/hta-acelyzer.md
 * sections 7-12 the reference tool.
 */
#ifndef EV_FLEX_H
#define EV_FLEX_H

#include "ev/analysis.h"
#include "ev/json.h"
#include "ev/stream.h"
#include "ev/table.h"

/* ------------------------------------------------------------------ */
/* Dialect detection (lib/flex/sniff.c).                                */

enum ev_dialect {
	EV_DIALECT_UNKNOWN = 0, /* JSON of some other kind */
	EV_DIALECT_FLEX,        /* AIU runtime events: TS1..TS5 counters or Flex names */
	EV_DIALECT_KINETO,      /* PyTorch profiler trace: use kineto2ev */
	EV_DIALECT_META_ONLY,   /* only "M" metadata events */
	EV_DIALECT_EMPTY,       /* no events at all */
	EV_DIALECT_PROCESSED,   /* output of acelyzer or ev2perfetto: already processed */
	EV_DIALECT_ROCPROF,     /* rocprofv3 JSON (rocprofiler-sdk-tool): use rocprof2ev */
};
const char *ev_dialect_name(enum ev_dialect d); /* "flex", "kineto", ... */

/* Evidence gathered from top-level members and events, one at a time. */
struct ev_flex_sniff {
	uint64_t events, meta, flex_counters, flex_names, collgroup, kineto_cats, dur_events;
	int kineto_top;    /* deviceProperties / schemaVersion / distributedInfo */
	int processed_top; /* otherData.Application "Acelyzer" or producer ev2perfetto */
	int rocprof_top;   /* rocprofiler-sdk-tool: rocprofv3's JSON */
	char top_key[32];  /* the first top-level key seen (for the message) */
	char ph_seen[16];  /* distinct ph letters seen */
	char cat_seen[48]; /* first cat value seen */
	char name_seen[48];/* first non-metadata name seen */
};
void ev_flex_sniff_init(struct ev_flex_sniff *s);
/* A top-level member of an object document: key and its JSON value text. */
void ev_flex_sniff_top(struct ev_flex_sniff *s, const char *key, size_t klen, const char *val, size_t vlen);
/* One event: the object at token i of text. */
void ev_flex_sniff_event(struct ev_flex_sniff *s, const char *text, const struct ev_json_tok *t, int i);
enum ev_dialect ev_flex_sniff_verdict(const struct ev_flex_sniff *s);
/* For ev_json_want: every top-level member but rocprofv3's (whose one
 * value is the whole trace, scanned past uncopied: its key decides). */
int ev_flex_sniff_want(void *ctx, const char *key, size_t len);
/* The tool named by a top-level otherData value that marks a processed
 * view of another trace ("ev2perfetto" or "Acelyzer"), or NULL. */
const char *ev_processed_producer(const char *val, size_t vlen);
/* One line naming what was seen ("45 events, ph B/E/X, cat CatA, ..."). */
void ev_flex_sniff_describe(const struct ev_flex_sniff *s, char *buf, size_t n);
/* Read the first max_events events of a file (gzip or plain JSON, object
 * with traceEvents or a bare array) and decide.  Once PyTorch categories
 * decide, the rest of the file is still scanned (without tokenizing) for a
 * processed-trace marker at its end, unless flags has EV_SNIFF_FLEX_ONLY:
 * then the read stops there, because a file so decided is not Flex.  For
 * kineto2ev: a file whose verdict is EV_DIALECT_FLEX belongs to flex2ev.
 * what (may be NULL) receives the describe line.  EV_OK, or a read/parse
 * status. */
#define EV_SNIFF_FLEX_ONLY 1u
int ev_flex_sniff_file(const char *path, uint64_t max_events, unsigned flags, enum ev_dialect *d, char *what,
                       size_t n) EV_RESULT_USED;

/* ------------------------------------------------------------------ */
/* Event classes: acelyzer's EventClass, in its order (lib/flex/classify.c). */

enum ev_flex_class {
	EV_FC_OTHER = 0, EV_FC_COMPUTE_PREP, EV_FC_COMPUTE_EXEC, EV_FC_DATA_IN, EV_FC_DATA_OUT,
	EV_FC_SEN_DATA_CONVERT, EV_FC_MAIU_BARRIER, EV_FC_MAIU_WIREUP, EV_FC_ROUNDTRIP_FLEX,
	EV_FC_ROUNDTRIP_AIU, EV_FC_MAIU_PROTOCOL_SERIAL, EV_FC_HDMA_WAIT_DATA, EV_FC_HDMA_WAIT_ACK,
	EV_FC_HDMA_SIGNAL_DATA, EV_FC_HDMA_SIGNAL_ACK, EV_FC_HDMA_MONITOR_NOTICE, EV_FC_HDMA_SEND_DATA,
	EV_FC_HDMA_RECV_DATA, EV_FC_P2PRDMA_SEND_DATA, EV_FC_P2PRDMA_RECV_DATA, EV_FC_PROTOCOL_SEND_DATA,
	EV_FC_PROTOCOL_RECV_DATA, EV_FC_PROTOCOL_SIGNAL_DATA, EV_FC_PROTOCOL_SIGNAL_ACK,
	EV_FC_COUNT
};
/* acelyzer's name of a class ("COMPUTE_EXEC", "MAIU_P2PRDMA_PROTOCOL_SEND_DATA"). */
const char *ev_flex_class_name(unsigned c);
/* Parse a class name (the first word of a record's sig); EV_OK or EV_ERR_ARG. */
int ev_flex_class_parse(const char *s, size_t n, unsigned *c);
/* First-pass class from the event name and whether it has a CollGroup. */
unsigned ev_flex_classify(const char *name, size_t n, int collective);
/* Second pass: a DATA_IN/DATA_OUT event inside its job's compute window is
 * a protocol signal when it moves exactly 128 bytes, else data. */
unsigned ev_flex_refine(unsigned cls, int have_bytes, uint64_t bytes);

/* Instruction type from the name: 0 DmaI, 1 Cmpt Prep, 2 Cmpt Exec, 3 DmaO,
 * -1 none (acelyzer's op id: its interval is TS[k+1] -> TS[k+2]). */
int ev_flex_instr(const char *name, size_t n);

/* ------------------------------------------------------------------ */
/* One Flex event as parsed from its JSON object (lib/flex/event.c).    */

enum { EV_FLEX_MAX_PEERS = 64 };
enum ev_flex_ctype { /* args.Type */
	EV_FT_NONE = 0, EV_FT_DONE, EV_FT_MCAST, EV_FT_SEND, EV_FT_BCLIST,
};
struct ev_flex_event {
	char ph;                  /* 'B', 'E', 'X', 'M', 'i', 'C', ... (0 if absent) */
	const char *name; size_t name_len;      /* unescaped, in the caller's buffer */
	const char *cat; size_t cat_len;
	const char *group; size_t group_len;    /* args.CollGroup, NULL if none */
	const char *sync; size_t sync_len;      /* the [sync=...] part of the name */
	int64_t pid; int have_pid;
	uint64_t tid;
	int64_t ts; int have_ts;  /* ns */
	uint64_t dur; int have_dur;
	uint64_t cyc[5]; int have_cyc; /* TS1..TS5 (hex or decimal strings) */
	uint64_t bytes; int have_bytes;
	uint32_t correlation;
	uint64_t power; int have_power; /* args.Power: the device's charge accumulator (32 bits) */
	int ctype;                /* enum ev_flex_ctype */
	int npeers;               /* args.Peer / args.Peers, or from RdmaRecv_<peer>_ names */
	int32_t peers[EV_FLEX_MAX_PEERS];
	int32_t peer_arg; int have_peer_arg; /* args.Peer alone (acelyzer's --comm_summarize_seq reads it) */
};
/* Parse the object at token i.  buf (capacity >= 2 * len + 64) holds the
 * unescaped strings.  EV_OK, EV_ERR_FORMAT (not an object, bad ts/escape),
 * EV_ERR_RANGE (a ts or dur in microseconds that does not fit 64-bit ns). */
int ev_flex_event_parse(const char *text, const struct ev_json_tok *t, int i, char *buf, size_t cap,
                        struct ev_flex_event *e) EV_RESULT_USED;

/* Device time of an event from its cycle counters: 32-bit overflow
 * corrected (a counter below its predecessor gains 2^32, acelyzer's OVC),
 * converted with soc_khz (SoC clock in kHz) and anchored at the host end
 * time as acelyzer's tighten_hts_by_instr_type does: the interval of the
 * instruction type (DmaI TS1-2, Prep TS2-3, Exec TS3-4, DmaO TS4-5) ends at
 * the host end; other device events keep the host start and last TS1-5.
 * Returns 1 if the counters overflowed (corrected), 0 otherwise. */
int ev_flex_device_time(const struct ev_flex_event *e, int64_t host_ts, uint64_t host_dur, uint64_t soc_khz,
                        int64_t *ts, uint64_t *dur);
/* The counters TS1..TS5 of e with ev_flex_device_time's overflow
 * correction into c; 1 if a counter wrapped (corrected), 0 otherwise. */
int ev_flex_counters(const struct ev_flex_event *e, uint64_t c[5]);
/* Cycles to ns at soc_khz, rounded. */
uint64_t ev_flex_cycles_ns(uint64_t cycles, uint64_t soc_khz);

/* ------------------------------------------------------------------ */
/* The converter: Flex events in, records into a sorter (lib/flex/convert.c). */

enum ev_flex_overlap { EV_FLEX_OV_TID = 0, EV_FLEX_OV_DROP = 1, EV_FLEX_OV_KEEP = 2 };
/* Rank clocks: none; p2p shifts whole ranks so that a receive ends with its
 * send; acelyzer puts each device event on acelyzer's aligned device clock
 * (its mp_sync_tight_v1; host events stay). */
enum ev_flex_align_mode { EV_FLEX_ALIGN_NONE = 0, EV_FLEX_ALIGN_P2P = 1, EV_FLEX_ALIGN_ACELYZER = 2 };
struct ev_flex_opts {
	uint64_t soc_khz;      /* --freq SoC part, kHz [1000000 = 1000 MHz] */
	int tighten;           /* device-time tightening (default 1) */
	int drop_prep;         /* leave out Cmpt Prep events */
	int overlap;           /* enum ev_flex_overlap: what --overlap asked for */
	int64_t rank;          /* every event of the input on this rank, -1: its pid */
	int colls;             /* build per-rank collective spans (coll records) */
	uint64_t sort_bytes;   /* memory of each of the three sorters [16M] */
	int ts_fix;            /* --flex-ts-fix: move a job's device events into its AIU Roundtrip */
	int align;             /* enum ev_flex_align_mode [EV_FLEX_ALIGN_P2P] */
	int strip_ids;         /* request ids out of communication event names, into id */
	const struct ev_flex_complog *cl; /* compiler tables for the PT Active counter, NULL none */
	uint64_t core_khz;     /* core clock of their ideal cycles, kHz [1100000] */
	int comm_seq;          /* --comm-summarize-seq: a request's SenRdma slices as one */
	int64_t comm_seq_window; /* ns after a request's end before it closes [1000000] */
	size_t comm_seq_max;   /* requests open at most [4096] */
};
void ev_flex_opts_init(struct ev_flex_opts *o);

struct ev_flex_counts {
	uint64_t objects, begins, ends, completes, pairs, meta, instants, counters, other_ph;
	uint64_t unmatched_b, unmatched_e, reversed, zero_dur, no_ts, ovc, dropped_prep, dropped_overlap;
	uint64_t device, cpu, records, p2p_send, p2p_recv, colls, open_colls, ts_fix_jobs, ts_fix_wide, stripped;
	uint64_t tsx;     /* tsx records written (TS1..TS5 of a kernel) */
	uint64_t prep_samples;  /* ConcurrentPreps counter samples */
	uint64_t power_samples; /* Power (mW) counter samples */
	uint64_t power_bad;     /* of which above 100 W: written as 0 (acelyzer's rule) */
	uint64_t pt_samples;    /* PT Active (0.01%) counter samples */
	uint64_t ideal;         /* ideal records (a kernel's exact ideal cycles, for pt_active) */
	uint64_t pt_over;       /* kernels shorter than their ideal time: 101% (acelyzer's rule) */
	uint64_t pt_missing;    /* kernels not in the compiler tables: no sample */
	uint64_t tsx_bad; /* kernels whose stages go backwards or span 2^32 cycles: no tsx record */
	uint64_t comm_merged, comm_absorbed; /* --comm-summarize-seq: slices of 2+ members, their members */
	uint64_t comm_early;      /* requests closed early: more than comm_seq_max open */
	uint64_t comm_peers_lost; /* peers past 64 of one request, left out of its list */
	uint64_t cls[EV_FC_COUNT];
};

typedef struct ev_flex_conv ev_flex_conv;
int ev_flex_conv_new(ev_flex_conv **c, const struct ev_flex_opts *o, ev_strtab *st) EV_RESULT_USED;
void ev_flex_conv_free(ev_flex_conv *c);
/* Feed one event of input source src.  Completed events become records in
 * the converter's first sorter.  EV_OK or an error (EV_ERR_NOMEM, I/O of the
 * sorter, EV_ERR_RANGE for a rank or stream that does not fit). */
int ev_flex_conv_event(ev_flex_conv *c, uint16_t src, const struct ev_flex_event *e) EV_RESULT_USED;
/* End of a source: B events still open are counted as unmatched. */
void ev_flex_conv_end_source(ev_flex_conv *c, uint16_t src);
/* After every input: second-pass classes, collective spans, overlap drop;
 * #comm lines and the records, in time order, to w. */
int ev_flex_conv_finish(ev_flex_conv *c, ev_writer *w) EV_RESULT_USED;
const struct ev_flex_counts *ev_flex_conv_counts(const ev_flex_conv *c);
/* Clock alignment of rank i (in ev_flex_conv_rank order) after finish:
 * aligned (the lowest rank is the reference), offset_ns subtracted from its
 * times, the rank it was aligned to, whether pairs both ways were used. */
struct ev_flex_align { uint32_t rank; int aligned; int64_t offset_ns; uint32_t via; int symmetric; uint64_t pairs; int64_t shift_ns; };
const struct ev_flex_align *ev_flex_conv_align(const ev_flex_conv *c, size_t i);
/* --align=acelyzer after finish: done (each rank's device clock shift in
 * its ev_flex_align.shift_ns, aligned set) or why not (a static text about
 * why_rank and, when non-zero, the CollGroup string id why_group); tree
 * (the lowest rank sends first) or chain; the reference event's rank and
 * CollGroup, and the aligned device clock's offset to host time; the
 * device records moved. */
struct ev_flex_ace {
	int done, tree;
	const char *why;
	uint32_t why_rank, ref_rank;
	uint64_t why_group, ref_group, moved;
	int64_t ref_offset_ns;
};
void ev_flex_conv_ace(const ev_flex_conv *c, struct ev_flex_ace *out);
/* The SoC clock detected from the data of input src, acelyzer's way
 * (lib/flex/freq.c): per rank, each 'Cmpt Exec' kernel's TS4 - TS3 over
 * its host duration, and its TS3 minus the previous kernel's TS3 over the
 * gap of their host starts (the duration estimate when the starts are
 * equal: zero_gap); min and max over the ranks, mean = mean of the ranks'
 * means, in MHz.  Returns 1 if the input had such a kernel, else 0. */
struct ev_flex_freq {
	uint64_t kernels, ranks, zero_gap, no_dur;
	double dur_min, dur_mean, dur_max, gap_min, gap_mean, gap_max;
};
int ev_flex_conv_freq(const ev_flex_conv *c, uint16_t src, struct ev_flex_freq *f);
/* Number of distinct ranks seen, and the i-th (ascending). */
size_t ev_flex_conv_nranks(const ev_flex_conv *c);
uint32_t ev_flex_conv_rank(const ev_flex_conv *c, size_t i);

/* ------------------------------------------------------------------ */
/* One file into the converter (lib/flex/read.c).                       */

enum ev_flex_read_error {
	EV_FLEX_RE_NONE = 0,
	EV_FLEX_RE_OPEN,     /* the file could not be opened or read */
	EV_FLEX_RE_JSON,     /* invalid or truncated JSON (detail, record) */
	EV_FLEX_RE_TOKENS,   /* an event with more JSON tokens than allowed (record) */
	EV_FLEX_RE_EVENT,    /* a bad ts, dur or string in an event (record) */
	EV_FLEX_RE_CONVERT,  /* the converter refused the event (status; pid for EV_ERR_RANGE) */
	EV_FLEX_RE_DIALECT,  /* not Flex: see dialect, key (top-level) or record (first PyTorch event) */
};
struct ev_flex_read {
	enum ev_flex_read_error error;
	enum ev_dialect dialect;
	struct ev_flex_sniff sniff;
	uint64_t events;  /* events read */
	uint64_t record;  /* 1-based event of the error, 0 none */
	int64_t pid;      /* EV_FLEX_RE_CONVERT with EV_ERR_RANGE */
	char key[64];     /* the top-level key that decided the dialect */
	char detail[256]; /* the JSON scanner's message */
};
typedef struct ev_flex_reader ev_flex_reader; /* token and string buffers */
int ev_flex_reader_new(ev_flex_reader **r) EV_RESULT_USED;
void ev_flex_reader_free(ev_flex_reader *r);
/* Read path (plain or gzip; "-" stdin) into c as source src.  EV_OK when
 * the file is Flex and every event was converted; otherwise a status with
 * res->error telling what (EV_ERR_FORMAT with EV_FLEX_RE_DIALECT when it is
 * not Flex: res->dialect and the evidence in res->sniff).  progress, if
 * not NULL, is called every 65536 events. */
int ev_flex_read_file(ev_flex_reader *rd, ev_flex_conv *c, uint16_t src, const char *path, size_t max_object,
                      void (*progress)(void *ctx, uint64_t events, uint64_t bytes), void *ctx,
                      struct ev_flex_read *res) EV_RESULT_USED;

/* ------------------------------------------------------------------ */
/* Compiler logs: "Perf Summary / Ideal/Total Cycles" tables (lib/flex/complog.c). */

/* The phase a table was compiled for, from the last "DECODING" or
 * "PREFILL" line (alone on its indented line) before it in its log:
 * acelyzer's ITL and TTFT, UNKN without one; in acelyzer's row order. */
enum ev_flex_phase { EV_FLEX_PHASE_ITL, EV_FLEX_PHASE_TTFT, EV_FLEX_PHASE_UNKN, EV_FLEX_NPHASES };
extern const char *const ev_flex_phase_names[EV_FLEX_NPHASES]; /* "ITL", "TTFT", "UNKN" */

struct ev_flex_kernel_info {
	char *kernel;   /* name as the trace shows it, before the first "-op" part */
	char *category; /* the opCat... word without "opCat" ("Conv_fp16", "Bmm_fp16") */
	uint64_t ideal; /* ideal cycles */
	enum ev_flex_phase phase; /* of its table */
};
struct ev_flex_complog {
	struct ev_flex_kernel_info *k;
	size_t n, cap;
	uint64_t tables; /* Perf Summary tables read */
	uint64_t total;  /* sum of the tables' Total lines */
};
/* Read every Perf Summary table of a log file into cl (appending).
 * EV_OK, EV_ERR_IO, EV_ERR_NOMEM, EV_ERR_FORMAT (no table found). */
int ev_flex_complog_read(struct ev_flex_complog *cl, const char *path) EV_RESULT_USED;
/* Lookup by kernel name as the trace has it, after removing " Cmpt Exec";
 * NULL if missing. */
const struct ev_flex_kernel_info *ev_flex_complog_find(const struct ev_flex_complog *cl, const char *name, size_t n);
void ev_flex_complog_free(struct ev_flex_complog *cl);

/* acelyzer's summary name normalisation: every "_<digits>" or "-<digits>"
 * becomes "_[N]".  Returns the length written to out (capacity >= 2n+1). */
size_t ev_flex_norm_name(const char *name, size_t n, char *out);

/* ------------------------------------------------------------------ */
/* acelyzer's tables from a flex2ev stream (lib/flex/stats*.c).         */

/* One pass over the records in any order (colls: time order, for its
 * collectives to complete as they happen; iterations: time order per rank,
 * the kernels' sequence).  Memory per rank, per (rank,
 * kernel name), per (rank, category or class) and per open collective,
 * never per record: medians are exact while the durations fit
 * max_samples, then from a sketch (ev_dist); open collectives are bounded
 * by the matcher (ev/stats.h, the oldest released incomplete). */
enum ev_flex_table {
	EV_FLEX_SUMMARY,    /* _summary.csv: per rank and normalised 'Cmpt Exec' name */
	EV_FLEX_CATEGORIES, /* _categories.csv: per rank and compiler category */
	EV_FLEX_STATS,      /* _stats_summary.csv: per rank, compute and comm time */
	EV_FLEX_ACTIVE,     /* _active.csv: per rank, kernel time in its kernel span */
	EV_FLEX_COLLS,      /* one row per collective across its ranks */
	EV_FLEX_CLASSES,    /* per rank and acelyzer event class */
	EV_FLEX_TS_ANALYSIS,/* _ts_analysis.csv: per rank and normalised 'Cmpt Exec' name, TS gaps */
	EV_FLEX_ITERATIONS, /* acelyzer's ITSTATS: per rank, repeating kernel sequence and its period */
	EV_FLEX_POWER,      /* acelyzer's --power-stats: per rank, Power with and without kernels */
	EV_FLEX_NTABLES
};
/* The tables' names in enum order, NULL-terminated ("summary", ...). */
extern const char *const ev_flex_table_names[EV_FLEX_NTABLES + 1];
/* The header of table t; *n receives its number of columns. */
const char *const *ev_flex_table_cols(enum ev_flex_table t, size_t *n);

struct ev_flex_stats_opts {
	enum ev_flex_table table;
	uint64_t core_khz;                /* categories: core clock of the ideal cycles */
	uint64_t soc_khz;                 /* categories: SoC clock of the stage counters [1000000] */
	uint64_t max_samples;             /* summary: durations kept exactly for medians */
	const struct ev_flex_complog *cl; /* categories: compiler tables, NULL none; kept by the caller */
	uint64_t iter_window;             /* iterations: kernels per rank searched for the word [16384] */
};
/* What the pass saw, for the caller to say why a table is empty or partial. */
struct ev_flex_stats_counts {
	uint64_t records;          /* records added */
	uint64_t kernels;          /* 'Cmpt Exec' kernels among them */
	uint64_t missing;          /* categories: kernels not in the compiler tables ('other') */
	uint64_t ideal_clipped;    /* categories: kernels shorter than their ideal time (ideal not counted) */
	uint64_t colls;            /* coll records */
	uint64_t colls_incomplete; /* colls: rows of collectives not seen on all their ranks */
	uint64_t colls_evicted;    /* colls: released before the end by the matcher's bounds */
	uint64_t sketched;         /* summary, ts_analysis: distributions whose median is from the sketch */
	uint64_t no_counters;      /* ts_analysis, iterations: kernels without a tsx record (no TS1..TS5) */
	uint64_t iter_gave_up;     /* iterations: ranks with no word within iter_window kernels */
	uint64_t unordered;        /* iterations, power: records starting before the rank's record before */
	uint64_t power_samples;    /* power: 'Power (mW)' counter samples */
};
typedef struct ev_flex_stats ev_flex_stats;
/* Rows go to out, a table the caller opened with ev_flex_table_cols' header
 * and closes after finish.  st is the reader's string table (summary adds
 * the normalised names to it). */
int ev_flex_stats_new(ev_flex_stats **s, const struct ev_flex_stats_opts *o, ev_strtab *st,
                      ev_table *out) EV_RESULT_USED;
/* One record.  colls: a collective's row is written when its last rank
 * arrives.  EV_OK, EV_ERR_NOMEM or the table's write status. */
int ev_flex_stats_add(ev_flex_stats *s, const struct ev_rec *r) EV_RESULT_USED;
/* End of input: every row of the table (colls: the incomplete collectives'). */
int ev_flex_stats_finish(ev_flex_stats *s) EV_RESULT_USED;
void ev_flex_stats_get_counts(const ev_flex_stats *s, struct ev_flex_stats_counts *c);
void ev_flex_stats_free(ev_flex_stats *s);

/* acelyzer's own text of the summary, active and ts_analysis tables (its
 * pipeline/stats.py writes them, named *.csv): its fixed header line, then
 * per row its columns in its order, blank-padded fixed-width numbers and
 * the name, separated by TABs and blanks as it prints them.  A table sink
 * (ev/table.h): the table's rows, opened with ev_flex_table_cols' header,
 * go to out in that layout, each cell found by its column name. */
struct ev_flex_acetext {
	enum ev_flex_table table;
	ev_output *out;
	size_t ix[24]; /* the table's column of each of acelyzer's fields */
	char *cells;   /* categories: the rows' cells, each NUL-ended, in field order */
	size_t len, cap, nrows;
};
/* The categories table (acelyzer's _categories.txt) is pandas'
 * DataFrame.to_string(index=False), whose columns are as wide as their
 * widest cell: its rows are held (ranks x phases x categories of them)
 * and written by ev_flex_acetext_end. */
/* Whether acelyzer writes table t as such text. */
int ev_flex_acetext_has(enum ev_flex_table t);
/* Fill sink to write table t into out through a; a must outlive the
 * table.  EV_ERR_ARG when acelyzer has no such text of t. */
int ev_flex_acetext_sink(struct ev_flex_acetext *a, enum ev_flex_table t, ev_output *out,
                         struct ev_table_sink *sink) EV_RESULT_USED;
/* After the table is closed: write what a holds (the categories table),
 * then free it as ev_flex_acetext_free. */
int ev_flex_acetext_end(struct ev_flex_acetext *a) EV_RESULT_USED;
/* Free what a holds, writing nothing. */
void ev_flex_acetext_free(struct ev_flex_acetext *a);

#endif /* EV_FLEX_H */
