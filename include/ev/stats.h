/* SPDX-License-Identifier: MIT */
/*
 * ev/stats.h - the analyses behind ev-stats and ev-overlap: grouped
 * accumulators over a time-ordered record stream (GPU timeline, kernel
 * statistics, categories, op/GEMM statistics, cross-rank collectives,
 * variance), their result tables and the comparison of two sources; the
 * one (communicator, seq) collective matcher; GEMM roofline numbers from an
 * op signature; and overflow-safe time arithmetic.
 *
 * Memory grows with groups (distinct names, signatures, ranks, sources,
 * collective kinds and sizes), never with the number of records: open
 * collectives and op instances are bounded windows, and exact quantiles
 * fall back to a sketch past a sample budget (ev/analysis.h, ev_dist).
 */
#ifndef EV_STATS_H
#define EV_STATS_H

#include "ev/analysis.h"

/* ------------------------------------------------------------------ */
/* Time arithmetic that cannot overflow.                                 */

/* Ends are ev_rec_end(): ts + dur saturated at INT64_MAX, so a
 * format-legal record with an extreme ts or dur never yields an end before
 * its start. */
/* b - a for a <= b as an exact unsigned count of ns (0 when b < a). */
static inline uint64_t ev_span(int64_t a, int64_t b)
{
	return b > a ? (uint64_t)b - (uint64_t)a : 0;
}

/* ------------------------------------------------------------------ */
/* The (communicator, seq) collective matcher (lib/analysis/collmatch.c). */

/* The same collective carries the same (comm, seq) on every rank of its
 * communicator.  The matcher collects the arrivals of each collective
 * (one record per rank) and hands the collective to a callback once all
 * ranks of the communicator have arrived.  Bounded: at most max_open
 * collectives and max_held arrivals are held; beyond either, the oldest
 * open collective (first arrival earliest in input order) is released
 * incomplete.  Storage per collective is what arrived (sparse): a
 * communicator of 10^6 ranks costs nothing until its ranks arrive.
 * Hashed: O(1) per record.  No allocation per record once warm (slots
 * and their arrival arrays are reused). */
typedef struct ev_collmatch ev_collmatch;

/* What identifies a collective.  group: the caller's partition (one
 * configuration of a sweep, ...); kind: the caller's sub-key (e.g. coll
 * vs p2p record type), 0 when not needed. */
struct ev_coll_key { uint64_t group, comm, seq; uint32_t kind; };

struct ev_coll_arrival {
	uint32_t rank;
	int64_t ts, end;     /* end = ev_rec_end() */
	uint64_t dur;
	uint64_t data;       /* the caller's, as passed to ev_collmatch_add */
};

/* A collective handed to the callback.  arr[0..seen) in arrival order,
 * valid during the call only. */
struct ev_coll_done {
	struct ev_coll_key key;
	struct ev_rec first;     /* the first arrival's record (op, dtype, bytes...) */
	uint32_t expect;         /* ranks of the communicator, 0 unknown */
	uint32_t seen;
	int complete;            /* 1: expect ranks arrived; 0: released incomplete */
	const struct ev_coll_arrival *arr;
};
/* Called once per collective; must not call back into the matcher.  A
 * non-zero return is passed up by the add/flush call that released it. */
typedef int (*ev_coll_done_fn)(void *ctx, const struct ev_coll_done *d);

#define EV_COLLMATCH_MAX_OPEN 65536u     /* default open collectives */
#define EV_COLLMATCH_MAX_HELD 4194304u   /* default arrivals held (32 B each) */
struct ev_collmatch_limits { size_t max_open, max_held; }; /* 0: defaults */

struct ev_collmatch_counts {
	uint64_t complete;   /* released with every rank */
	uint64_t evicted;    /* released incomplete because a bound was reached */
	uint64_t flushed;    /* released incomplete by ev_collmatch_flush */
	uint64_t unsized;    /* of those incomplete: communicator size unknown */
	size_t open_peak;    /* most collectives open at once */
};

int ev_collmatch_new(ev_collmatch **m, const struct ev_collmatch_limits *lim, ev_coll_done_fn fn,
                     void *ctx) EV_RESULT_USED;
/* One arrival.  expect = communicator size (0 unknown: the collective is
 * released only by a bound or by flush).  If prev is not NULL it receives
 * the previous arrival of the same collective (prev->rank = UINT32_MAX when
 * this is the first).  Returns EV_OK, EV_ERR_NOMEM or the callback's
 * status. */
int ev_collmatch_add(ev_collmatch *m, const struct ev_coll_key *k, uint32_t expect, const struct ev_rec *r,
                     uint64_t data, struct ev_coll_arrival *prev) EV_RESULT_USED;
/* Release every open collective (incomplete), oldest first. */
int ev_collmatch_flush(ev_collmatch *m) EV_RESULT_USED;
void ev_collmatch_get_counts(const ev_collmatch *m, struct ev_collmatch_counts *c);
void ev_collmatch_free(ev_collmatch *m);

/* ------------------------------------------------------------------ */
/* GEMM roofline numbers from an op signature (lib/analysis/gemm.c).     */

/* TraceLens's formulas from a kineto2ev signature "aten::mm dims=[[M,K],
 * [K,N]] types=[...] ...": GFLOPs = 2MNK·B (+ MN·B with bias), data moved
 * in MiB = B(MK·a + KN·b + MN·a) (+ N·a with bias), a and b the element
 * sizes.  Ops: aten::mm, aten::matmul (2-D), aten::addmm, aten::bmm,
 * aten::baddbmm, aten::linear.  0 where unknown. */
void ev_gemm_model(const char *sig, double *gflop, double *mbytes);
/* A GEMM kernel's operand layout as TraceLens reads it from the kernel name
 * (its "transpose" parameter, part of a GEMM's identity in its GEMM sheet):
 * Tensile names (C???_A???_B???: Ailk/Alik, Bljk/Bjlk) and cuBLAS nvjet
 * names (..._NT).  0 when the name says nothing; else 1 + 3 * a + b with
 * a, b = 0 unknown, 1 as stored, 2 transposed. */
unsigned ev_gemm_layout(const char *name);

/* ------------------------------------------------------------------ */
/* Result tables: rows of string keys and double values (lib/analysis/rowset.c). */

enum ev_dir { EV_DIR_NONE = 0, EV_DIR_LOWER = -1, EV_DIR_HIGHER = 1 }; /* which way is better */
struct ev_colspec { const char *name; int numeric; int dir; };
struct ev_row { char **key; double *val; uint32_t sg; };
struct ev_rowset {
	struct ev_colspec *keys, *vals;
	size_t nkeys, nvals;
	struct ev_vec rows; /* struct ev_row */
};
int ev_rowset_init(struct ev_rowset *rs, const struct ev_colspec *keys, size_t nkeys, const struct ev_colspec *vals,
                   size_t nvals) EV_RESULT_USED;
/* A new row of source group sg, keys NULL and values 0 (NULL on ENOMEM). */
struct ev_row *ev_rowset_add(struct ev_rowset *rs, uint32_t sg);
int ev_row_key(struct ev_row *r, size_t i, const char *s) EV_RESULT_USED;
int ev_row_keyu(struct ev_row *r, size_t i, uint64_t v) EV_RESULT_USED;
int ev_rowset_print(const struct ev_rowset *rs, ev_output *out, enum ev_table_fmt fmt) EV_RESULT_USED;
/* The same as a new sheet of a workbook. */
int ev_rowset_print_xlsx(const struct ev_rowset *rs, struct ev_xlsx *x, const char *sheet) EV_RESULT_USED;
void ev_rowset_free(struct ev_rowset *rs);

/* ------------------------------------------------------------------ */
/* The analyses (lib/analysis/stats*.c).                                 */

/* short: kernels below short_ns (TraceLens's short-kernel study). */
enum ev_short_table { EV_SHORT_SUMMARY, EV_SHORT_HISTOGRAM }; /* short's tables[] */
#define EV_SHORT_DEFAULT_NS 10000u  /* TraceLens's 10 us */
#define EV_SHORT_MAX_NS 1000000u    /* counted per ns: 8 MB at most */
#define EV_SHORT_DEFAULT_BINS 100u
enum ev_stats_by { EV_BY_SRC, EV_BY_RANK, EV_BY_STREAM, EV_BY_SRCKEY, EV_BY_CONFIG };
enum ev_coll_table { EV_COLL_SUMMARY, EV_COLL_EACH, EV_COLL_STRAGGLERS }; /* coll's tables[] */
#define EV_STATS_MAX_BY 8

struct ev_stats_analysis;

/* What a time series is of: a stream's queue length or a kind of copy's
 * bandwidth. */
enum ev_stats_series { EV_SERIES_QUEUE, EV_SERIES_MEMBW };
/* A step of a time series: series `id` (the stream; the kind's number in
 * its rank) of `rank`, named `name` ("stream 7", "Memcpy HtoD"), is v
 * (queue length; GB/s) from ts (ns of the stream: HTA's whole
 * microseconds) on.  Several steps may share one ts: the last is the
 * value from then on. */
typedef void (*ev_stats_sample_fn)(void *ctx, enum ev_stats_series what, uint32_t rank, uint32_t id,
                                   const char *name, int64_t ts, double v);

#define EV_HTA_SET_RATIO 8u /* ev_stats_opts.hta_set: hta_ratio given */

struct ev_stats_opts {
	const struct ev_stats_analysis *analysis; /* what to run: a registry row or the caller's own */
	enum ev_rules rules;
	int by[EV_STATS_MAX_BY];           /* enum ev_stats_by */
	const char *by_key[EV_STATS_MAX_BY]; /* #src key names for EV_BY_SRCKEY */
	char by_key_text[EV_STATS_MAX_BY][64]; /* their text when ev_stats_opts_by set them */
	int nby;
	int unlinked, no_hta, float_us;    /* timeline */
	int tracelens;                     /* report: TraceLens's sheets, columns and row order */
	int key_name;                      /* variance: key by kernel name */
	unsigned class_mask;               /* ops, variance: kernel classes */
	int class_given;
	uint64_t top;                      /* variance: K widest per group, 0 all */
	unsigned table;                    /* --table: index into analysis->tables */
	uint64_t exact_limit;              /* exact quantile samples in all */
	uint64_t max_names;                /* kernels: names with a row of their own (the
	                                      first seen); the others share the row
	                                      EV_STATS_OTHER_NAMES.  0: no limit */
	struct ev_collmatch_limits coll_limits;
	ev_table *stream;                  /* a table with stream_cols: rows go here */
	uint64_t short_ns;                 /* short: threshold, 0 = EV_SHORT_DEFAULT_NS */
	uint64_t short_bins;               /* short: histogram bins, 0 = default */
	/* HTA's thresholds in whole microseconds, each used when its bit of
	 * hta_set is on (1 delay, 2 runtime, 4 launch delay, 8 kdist's ratio), else HTA's
	 * default: idle's consecutive_kernel_delay (30), launch's
	 * runtime_cutoff (50) and launch_delay_cutoff (100). */
	int64_t hta_delay_us, hta_runtime_us, hta_launch_us;
	double hta_ratio;                  /* kdist: duration_ratio (0.8), bit EV_HTA_SET_RATIO */
	unsigned hta_set;
	int hta_no_memory;                 /* launch: leave out cudaMemcpyAsync/cudaMemsetAsync;
	                                      kdist: leave out MEMORY kernels */
	/* queue, membw: HTA's time series (get_queue_length_time_series,
	 * get_memory_bw_time_series) handed out as it is made, one call per
	 * step of a series, in each series' time order.  With a sample hook
	 * the last-step filter is off: the series cover every event, as a
	 * timeline shows them.  NULL: none. */
	ev_stats_sample_fn sample;
	void *sample_ctx;
	/* critpath: the window is instances cp_inst_lo..cp_inst_hi (from 0) of
	 * the ranges whose name contains cp_annotation (NULL: ProfilerStep;
	 * "": the whole trace). */
	const char *cp_annotation;
	uint32_t cp_inst_lo, cp_inst_hi;
	/* kernel-patterns: the ops whose name contains kp_operator, patterns
	 * of at least kp_min_len kernels (0: HTA's 3), sorted by kp_sort
	 * (enum ev_kp_sort); top (0: all) the rows kept. */
	const char *kp_operator;
	uint32_t kp_min_len;
	unsigned kp_sort;
	/* kernel-patterns: an ev stream of marks on the instances of each
	 * rank's first top (0: HTA's 5) patterns is written to this path
	 * (NULL: none), opened by ev_stats_new and closed by finish. */
	const char *annotate;
};
enum ev_kp_sort { EV_KP_SORT_COUNT, EV_KP_SORT_GPU, EV_KP_SORT_CPU };

/* --by's comma list into o->by: rank, src, stream, config, or else the
 * name of a #src key, whose text o keeps (by_key points into it).  EV_OK,
 * or EV_ERR_ARG for more than EV_STATS_MAX_BY fields, an empty one or a
 * key name of 64 bytes or more. */
int ev_stats_opts_by(struct ev_stats_opts *o, const char *list) EV_RESULT_USED;

/* --instance's "N" or "N:M" (M >= N) into o->cp_inst_lo and cp_inst_hi.
 * EV_OK or EV_ERR_ARG. */
int ev_stats_opts_instance(struct ev_stats_opts *o, const char *arg) EV_RESULT_USED;

/* Source groups: --by src, a #src key, or "config" make sources into
 * groups.  config = sources with the same label and the same #src keys
 * apart from those that name one process's own file
 * (ev_align_per_rank_key): the ranks of one run. */
int ev_stats_is_process_key(const char *key);

/* What an analysis saw, to say why a table is empty or partial. */
struct ev_stats_counts {
	uint64_t records, gpu, kernels, with_sig, selected, coll;
	uint64_t coll_incomplete, coll_evicted, coll_unsized;
	uint64_t coll_mismatch;  /* arrivals whose kind or size differ from the rank before at one (comm, seq) */
	uint64_t sketched;   /* distributions moved to the sketch */
	uint64_t ops_window; /* op instances closed by the window, not the end */
	uint64_t no_thread;  /* op instances whose op's cpu_op (its thread) was not found: names "Unknown" */
	uint64_t streamed;   /* rows written to opts.stream */
	/* Cells left empty, or numbers that follow a convention, so that the
	 * tool says why once (set by finish; counted per rank or row). */
	uint64_t hta_one_step;  /* timeline: ranks with one ProfilerStep: HTA keeps every GPU event */
	uint64_t hta_no_step;   /* timeline: ranks with CPU events, no ProfilerStep: the same */
	uint64_t hta_pruned;    /* timeline: GPU events whose launch was let go as too old to match */
	uint64_t no_comm;       /* timeline: ranks without communication: overlap percent empty */
	uint64_t one_instance;  /* kernels, ops: rows of one instance: std empty */
	uint64_t folded_kernels; /* kernels: kernels of names past max_names */
	uint64_t folded_names;   /* kernels: those names, estimated (within 0.1% to 10^7) */
};
/* The name cell of the row of the names past max_names. */
#define EV_STATS_OTHER_NAMES "(other names)"

typedef struct ev_stats ev_stats;

/* One of an analysis's tables (--table=NAME); the first is the default. */
struct ev_stats_subtable {
	const char *name;                /* the --table word */
	const char *sheet;               /* its --xlsx sheet */
	const char *const *stream_cols;  /* NULL: rows() gives it; else its
	                                  * columns (NULL-terminated), the rows
	                                  * going to opts.stream as they come */
};

/* An analysis: one row of ev_stats_registry, defined in the analysis's own
 * file, is all ev-stats and the driver below know of it.  The callbacks
 * get the ev_stats object; state_size bytes of zeroed state are theirs
 * (ev_stats_state), group_size bytes per group are the accumulators of
 * lib/analysis's group table (stats_impl.h). */
struct ev_stats_analysis {
	const char *name;                /* the ev-stats subcommand */
	const char *sheet;               /* --xlsx sheet (TraceLens's name where it has one) */
	const char *help;                /* --help description: '\n'-separated lines of at
	                                  * most 62 columns (ev-stats indents them by 15) */
	const char *const *options;      /* ev-stats long options it takes besides those
	                                  * every analysis takes (NULL-terminated) */
	const struct ev_stats_subtable *tables; /* --table choices ({NULL}-terminated), or NULL */
	const char *default_by;          /* --by when none is given, NULL for none */
	int comparable;                  /* ev-stats compare --what= accepts it */
	size_t state_size, group_size;
	int (*init)(ev_stats *s);        /* NULL: the zeroed state will do */
	int (*rec)(ev_stats *s, const struct ev_rec *r);
	int (*finish)(ev_stats *s);      /* end of input; NULL: nothing is open */
	int (*rows)(ev_stats *s, struct ev_rowset *rs); /* rs is zeroed */
	void (*free)(ev_stats *s);       /* what the state and groups own; NULL: nothing */
	/* Why the table is empty, when its own reason: 1 with the message in
	 * buf, else 0 (ev-stats then says there were no GPU events). */
	int (*explain)(const struct ev_stats_opts *o, const struct ev_stats_counts *c, char *buf, size_t n);
	/* After finish: its i-th warning (what it dropped, guessed or
	 * approximated) in buf, 1; 0 when there are no more.  NULL: none. */
	int (*warning)(ev_stats *s, unsigned i, char *buf, size_t n);
};

/* Every analysis ev-stats runs, in its --help order, NULL-terminated. */
extern const struct ev_stats_analysis *const ev_stats_registry[];
/* The registry row called name, or NULL. */
const struct ev_stats_analysis *ev_stats_find(const char *name);
/* The --xlsx sheet of table (an index into a->tables) of a. */
const char *ev_stats_sheet(const struct ev_stats_analysis *a, unsigned table);

/* Options and the registry, for a front end's checks.  Whether list
 * (NULL-terminated, may be NULL) holds name. */
int ev_stats_listed(const char *const *list, const char *name);
/* Whether some analysis lists the option name (an option none lists
 * applies to every one). */
int ev_stats_option_scoped(const char *name);
/* The names of the analyses that list option name, ", " between, in buf
 * (cut to n); the length they need. */
size_t ev_stats_option_users(const char *name, char *buf, size_t n);
/* a's --table words in words[max] (max >= 1), NULL-terminated; a NULL:
 * the first analysis that has tables (where a word is checked before the
 * subcommand is known). */
const char *const *ev_stats_table_words(const struct ev_stats_analysis *a, const char **words, size_t max);

/* The driver.  o->analysis is any row, in the registry or not (a row
 * without rec or rows is EV_ERR_ARG); st and meta are the reader's (names
 * and #src/#comm lines). */
int ev_stats_new(ev_stats **s, const struct ev_stats_opts *o, const ev_strtab *st, const ev_meta *meta) EV_RESULT_USED;
/* One record.  EV_ERR_ORDER when a group's records go back in time. */
int ev_stats_add(ev_stats *s, const struct ev_rec *r) EV_RESULT_USED;
/* After EV_ERR_ORDER: the time of the group's record that r went back from. */
int64_t ev_stats_order_last(const ev_stats *s);
/* End of input: release what is open (collectives, op instances). */
int ev_stats_finish(ev_stats *s) EV_RESULT_USED;
/* The result table (after finish).  rs is initialised by the call. */
int ev_stats_rows(ev_stats *s, struct ev_rowset *rs) EV_RESULT_USED;
/* Whether analyses a and b keep the same state from the same records (one
 * gathers what the other tables), so that one ev_stats serves both. */
int ev_stats_same_state(const struct ev_stats_analysis *a, const struct ev_stats_analysis *b);
/* The table of analysis a over s, whose analysis keeps a's state
 * (ev_stats_same_state), after finish; EV_ERR_ARG if it does not. */
int ev_stats_rows_of(ev_stats *s, const struct ev_stats_analysis *a, struct ev_rowset *rs) EV_RESULT_USED;
/* The file behind the last I/O error of ev_stats_new or finish (an
 * analysis's own output, such as annotate, or its temporary files); NULL:
 * the table's output. */
const char *ev_stats_errpath(const ev_stats *s);
void ev_stats_get_counts(const ev_stats *s, struct ev_stats_counts *c);
/* After finish: what the reader must know of the result (collectives not
 * seen on every rank, sketched quantiles, empty cells...), each said once
 * through say as a warning.  NULL say: nothing. */
void ev_stats_say_notes(ev_stats *s, const struct ev_say *say);
/* Why the table called name has no rows, through say. */
void ev_stats_say_empty(const ev_stats *s, const char *name, const struct ev_say *say);
/* Number of source groups seen. */
size_t ev_stats_nsrcgroups(const ev_stats *s);
void ev_stats_free(ev_stats *s);

/* For an analysis's callbacks: its state (state_size bytes), the options,
 * and the text of a string id of the input. */
void *ev_stats_state(ev_stats *s);
const struct ev_stats_opts *ev_stats_options(const ev_stats *s);
const char *ev_stats_str(const ev_stats *s, uint64_t id);

/* critpath's path for a timeline (lib/analysis/critpath_segs.c): after
 * ev_stats_finish of a critpath run with --table=path (each rank's path
 * in turn) or cross (one path per source group), segment i of its rows,
 * in order, with where it is drawn.  1, or 0 past the last segment (or
 * for another analysis or table). */
struct ev_critpath_seg {
	uint32_t seq;         /* its place in its path, from 0: 0 starts a path */
	uint32_t sg, rank;
	uint32_t track;       /* the CPU thread or GPU stream of its event */
	int gpu;              /* that event is a GPU event */
	int64_t ts;           /* start, ns of the stream (HTA's whole microseconds) */
	int64_t dur_us;       /* HTA's weight: duration_us of the table */
	const char *type, *bound, *name; /* the table's type, bound_by ("" for
	                         dependency) and name ("" none) */
};
int ev_stats_critpath_seg(ev_stats *s, size_t i, struct ev_critpath_seg *seg);

/* ------------------------------------------------------------------ */
/* compare (lib/analysis/compare.c)                                      */

/* Join the rows of every source group with the baseline's (the group of
 * the lowest source number) and write baseline, test, <keys>, metric,
 * base, value, diff, pct, status, base_count, test_count.  The first key
 * column of rs must be the source.  When a key column is "rank", ranks
 * pair by position: the i-th lowest rank of a test with the i-th lowest of
 * the baseline (a rank with itself when both sides have the same ranks),
 * and a test_rank column follows rank.  Rows on one side only print every
 * metric with that side's value and status only-baseline / only-test.
 * Linear in rows (hashed join). */
/* xlsx not NULL: the table goes to a new sheet of that workbook instead
 * of out (status coloured Better/Worse there). */
/* rank_mean: each side's rows reduced to their mean over ranks first (the
 * rank key dropped), so that runs compare as wholes. */
struct ev_compare_opts { double threshold; enum ev_table_fmt fmt; struct ev_xlsx *xlsx; const char *sheet; int rank_mean; };
struct ev_compare_counts { uint64_t matched, only_base, only_test, tests; };
int ev_stats_compare(ev_stats *s, const struct ev_rowset *rs, const struct ev_compare_opts *o, ev_output *out,
                     struct ev_compare_counts *c) EV_RESULT_USED;

/* ------------------------------------------------------------------ */
/* The per-rank report (lib/analysis/report.c): the tables of TraceLens's
 * perf report that the analyses make, from one pass.  Its tables, i = 0
 * .. ev_report_tables() - 1: each one's sheet, and its columns when its
 * rows are written as they come, else NULL. */
/* Whether an option an analysis scopes (ev_stats_option_scoped) applies to
 * one of the report's tables (of the TraceLens layout when tracelens). */
int ev_report_takes_option(const char *name, int tracelens);
size_t ev_report_tables(void);
const char *ev_report_table_sheet(size_t i);
const char *const *ev_report_table_stream_cols(size_t i);
typedef struct ev_report ev_report;
/* Where the tables go: a workbook (x, written to x_path), a sheet per table
 * but the streamed ones; else a file per table, DIR/SHEET.EXT in fmt,
 * DIR made when missing.  say: each table's notes and empty-table reason,
 * as "sheet: ..." warnings. */
struct ev_report_out {
	const char *dir;
	struct ev_xlsx *x;
	const char *x_path;
	enum ev_table_fmt fmt;
	const struct ev_say *say;
};
/* base: the options every table shares (rules, timeline's, limits); its
 * analysis, table, grouping and stream are the report's.  The streamed
 * tables' files are opened here.  On error *r may be set (ev_report_path
 * names the file): free it. */
int ev_report_new(ev_report **r, const struct ev_stats_opts *base, const struct ev_report_out *out,
                  ev_strtab *st, ev_meta *meta) EV_RESULT_USED;
/* With n >= 2, the tables are fed on two threads (the caller's and a
 * worker's), a batch of records at a time; before the first record.  No
 * thread to be had: one, as with n = 1. */
int ev_report_threads(ev_report *r, int n) EV_RESULT_USED;
/* One record into every table; EV_ERR_ORDER as ev_stats_add.  With two
 * threads the record may only be held, and a failure is of an earlier
 * one: ev_report_failed_at. */
int ev_report_add(ev_report *r, const struct ev_rec *rec) EV_RESULT_USED;
/* The records held fed to the tables (at the end of each input), with
 * ev_report_add's failures. */
int ev_report_flush(ev_report *r) EV_RESULT_USED;
/* After a failure: how many records were read after the one that failed,
 * and its time in *ts. */
uint64_t ev_report_failed_at(const ev_report *r, int64_t *ts);
int64_t ev_report_order_last(const ev_report *r);
/* End of input: every table finished, said, written and closed. */
int ev_report_close(ev_report *r) EV_RESULT_USED;
/* The file the last error concerns. */
const char *ev_report_path(const ev_report *r);
/* Frees r; the files of tables not closed are removed. */
void ev_report_free(ev_report *r);

#endif /* EV_STATS_H */
