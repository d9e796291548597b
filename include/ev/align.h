/* SPDX-License-Identifier: MIT */
/*
 * ev/align.h - clock alignment of the ranks of a multi-rank trace.
 *
 * Each rank's clock is modelled as t_rank = t_ref + O + D * (t_ref - t0):
 * an offset O at the reference time t0 and a linear drift D (dimensionless,
 * 1e-6 = 1 ppm) against a reference rank.  A rank time maps back with
 *     t_ref = t0 + (t_rank - O - t0) / (1 + D).
 *
 * The model is fitted from anchors: instants that two ranks saw at the same
 * true time.
 *   coll    the end of one collective (same communicator and seq) on every
 *           rank that took part;
 *   p2p     the end of the k-th send a->b and of the k-th receive b<-a
 *           (same communicator and seq);
 *   kernel  the end of the k-th NCCL kernel with the same name on the j-th
 *           stream that runs that name (streams numbered in order of first
 *           use, as stream ids differ between ranks), used only where the
 *           two ranks ran as many such kernels (so ordinals match) and only
 *           for ranks that no coll or p2p anchor reaches.
 * Anchors are kept per configuration (a caller-given id, one per set of
 * sweep settings): configurations are never aligned against each other.
 *
 * Memory: bounded per rank and anchor kind (EV_ALIGN_ANCHORS_PER_RANK);
 * beyond it anchors are thinned by a hash of their key, the same keys on
 * every rank, so the kept anchors still span the whole trace.  Tables grow
 * with ranks, configurations and distinct (stream, kernel name), never
 * with the number of events.
 */
#ifndef EV_ALIGN_H
#define EV_ALIGN_H

#include <stddef.h>
#include <stdint.h>

#include "ev/stream.h"

enum ev_align_mode {
	EV_ALIGN_NONE = 0,
	EV_ALIGN_START = 1, /* each rank's first event at 0 */
	EV_ALIGN_OFFSET = 2, /* offset per rank from anchors ("coll") */
	EV_ALIGN_DRIFT = 3, /* offset and drift where the anchors allow ("coll-drift") */
};

enum ev_anchor_kind { EV_ANCHOR_COLL = 0, EV_ANCHOR_P2P = 1, EV_ANCHOR_KERNEL = 2, EV_ANCHOR_KINDS = 3 };

#define EV_ALIGN_ANCHORS_PER_RANK 4096 /* per rank and kind, before thinning */

struct ev_align_opts {
	enum ev_align_mode mode;
	int64_t ref_rank;        /* -1: the lowest rank of each configuration */
	uint64_t min_drift_span; /* ns the anchors must span before a drift is fitted */
	uint64_t warn_residual;  /* ns: a larger median residual is worth a warning */
	size_t anchors_per_rank; /* 0: EV_ALIGN_ANCHORS_PER_RANK */
};
void ev_align_opts_default(struct ev_align_opts *o);

/* What happened to one rank. */
enum ev_align_state {
	EV_ALIGNED_REF = 0,      /* the reference rank of its configuration */
	EV_ALIGNED = 1,          /* fitted from anchors */
	EV_ALIGNED_START = 2,    /* --align=start: first event at 0 */
	EV_UNALIGNED = 3,        /* no anchor shared with an aligned rank: left as is */
};

/* Why a drift was not applied (mode EV_ALIGN_DRIFT). */
enum ev_drift_note {
	EV_DRIFT_FITTED = 0,
	EV_DRIFT_NOT_ASKED = 1,
	EV_DRIFT_SHORT_SPAN = 2, /* anchors span less than min_drift_span */
	EV_DRIFT_FEW = 3,        /* fewer than 8 anchors */
	EV_DRIFT_NOISE = 4,      /* fitted slope within 3 standard errors of 0 */
	EV_DRIFT_IMPLAUSIBLE = 5, /* |D| > EV_ALIGN_MAX_DRIFT: no real oscillator drifts so */
};
#define EV_ALIGN_MAX_DRIFT 200e-6

/* A fitted clock model and its quality. */
struct ev_align_fit {
	int64_t offset;     /* O, ns at t0 */
	int64_t t0;         /* reference time of O (ns, reference clock) */
	double drift;       /* D */
	double drift_se;    /* standard error of D (0 when not fitted) */
	enum ev_drift_note drift_note;
	size_t used;        /* anchors used */
	size_t outliers;    /* anchors left out as outliers */
	double resid_med;   /* median |residual| of the used anchors, ns */
	double resid_max;   /* largest |residual| of the used anchors, ns */
	uint64_t span;      /* ns between the first and last anchor used */
};

/* Fit the model to n pairs: tref[i] the anchor's time on the reference
 * clock, d[i] = t_rank - tref.  Robust: a line through the medians of the
 * two time halves, anchors beyond 5 MADs of it left out, then least squares
 * on the rest.  A drift is kept only when mode is EV_ALIGN_DRIFT, at least
 * 8 anchors span min_span ns and the slope is significant.  scratch holds
 * 5 * n doubles.  EV_OK, EV_ERR_ARG for n == 0. */
int ev_align_fit(const int64_t *tref, const int64_t *d, size_t n, enum ev_align_mode mode, uint64_t min_span,
                 double *scratch, struct ev_align_fit *out) EV_RESULT_USED;

/* Map a rank time to the reference clock, overflow-safe (saturates). */
int64_t ev_align_apply_fit(const struct ev_align_fit *f, int64_t t);

/* The result for one (configuration, rank). */
struct ev_align_rank {
	uint32_t config, rank;
	enum ev_align_state state;
	uint32_t via;            /* the rank it was aligned against */
	int64_t first_ts;        /* earliest event seen */
	uint64_t events;
	uint64_t anchors[EV_ANCHOR_KINDS]; /* anchors seen (before thinning) */
	uint64_t used[EV_ANCHOR_KINDS];    /* anchors matched and used in the fit */
	struct ev_align_fit fit;
};

typedef struct ev_align ev_align;
int ev_align_new(ev_align **a, const struct ev_align_opts *o) EV_RESULT_USED;
void ev_align_free(ev_align *a);
/* Pass 1: every record of the trace, with its configuration id and its
 * (possibly renumbered) rank.  Any order. */
int ev_align_add(ev_align *a, uint32_t config, uint32_t rank, const struct ev_rec *r) EV_RESULT_USED;
/* Fit every rank.  EV_OK or EV_ERR_NOMEM. */
int ev_align_solve(ev_align *a) EV_RESULT_USED;
/* Results, in (configuration, rank) order after ev_align_solve. */
size_t ev_align_count(const ev_align *a);
const struct ev_align_rank *ev_align_at(const ev_align *a, size_t i);
/* NULL when the rank was never seen in that configuration. */
const struct ev_align_rank *ev_align_get(const ev_align *a, uint32_t config, uint32_t rank);
/* Corrected time of a record of (config, rank); unchanged when unknown or
 * unaligned. */
int64_t ev_align_apply(const ev_align *a, uint32_t config, uint32_t rank, int64_t ts);
/* Correct a record of (config, rank) in place: ts, and for timed types
 * (kernel, memcpy, memset, coll, p2p, range, api) the duration, which a
 * drifting clock stretches too.  Detail records (chan, dep) keep their dur,
 * which is not a time. */
void ev_align_apply_rec(const ev_align *a, uint32_t config, uint32_t rank, struct ev_rec *r);
/* Anchor thinning level reached (0: every anchor kept). */
unsigned ev_align_thinning(const ev_align *a, enum ev_anchor_kind k);
/* The options a was made with (anchors_per_rank filled in). */
const struct ev_align_opts *ev_align_options(const ev_align *a);
const char *ev_anchor_kind_name(enum ev_anchor_kind k);
const char *ev_drift_note_text(enum ev_drift_note n);
/* "none", "start", "coll" or "coll-drift": the --align word of a mode. */
const char *ev_align_mode_name(enum ev_align_mode m);

/* ------------------------------------------------------------------ */
/* Configurations: which #src keys name a configuration.               */

/* Keys that describe one rank's file rather than its configuration
 * (file, input, rank, local_rank, base_ns, host, hostname, node, pid, tid,
 * device, gpu, nsys, schema, nccl, init_ns, fini_ns): 1 if key is one of
 * them. */
int ev_align_per_rank_key(const char *key);
/* Canonical name of the configuration of a source: its key=value pairs,
 * per-rank keys left out (or, with keys/nkeys != 0, only those keys),
 * sorted by key, separated by spaces ("" for none).  Writes at
 * most cap bytes (NUL-terminated) and returns the full length. */
size_t ev_align_config_name(const struct ev_src_info *src, const char *const *keys, size_t nkeys, char *buf,
                            size_t cap);

/* 1 when the input= key separates configurations in m: two sources that
 * agree on every run key (and label) give the same rank from different
 * inputs, so each input is a run, not one rank's file of a run. */
int ev_align_input_is_config(const ev_meta *m);

/* Configuration ids (lib/align/cfgs.c): configuration names to the ids
 * ev_align takes, 0, 1, ... in order of first sight, at most 65535.  Names
 * are told apart by their 64-bit hash. */
struct ev_align_cfgs { char **names; uint32_t n; struct ev_map ix; };
void ev_align_cfgs_init(struct ev_align_cfgs *c);
/* The id of name, a new one the first time.  EV_OK, EV_ERR_LIMIT or
 * EV_ERR_NOMEM. */
int ev_align_cfgs_id(struct ev_align_cfgs *c, const char *name, uint32_t *id) EV_RESULT_USED;
/* Forget every name; c is empty and ready for use again. */
void ev_align_cfgs_free(struct ev_align_cfgs *c);

/* ------------------------------------------------------------------ */
/* Pass 1 over ev streams (lib/align/scan.c).                          */

/* Every input read once, in turn: each record's anchors go to al under its
 * clock, the configuration the caller's sources give it and its rank; then
 * every rank is fitted (ev_align_solve).  Memory: ev_align's, plus the
 * strings and metadata of the inputs. */
struct ev_align_scan {
	/* Set by the caller. */
	ev_align *al;               /* NULL: only each input's header, the #src lines
	                               before its first record */
	const char *const *paths;   /* the files read */
	const char *const *names;   /* how messages name them ("-": standard input) */
	size_t n;
	int rank_is_input;          /* a record's rank is its input's index */
	/* A #src line of input i, read by r.  EV_OK, or a status it has said. */
	int (*src_line)(void *ctx, size_t i, ev_reader *r, const char *line, size_t len);
	/* The configuration of source src of input i, asked for a record whose
	 * source differs from the previous record's of its input or that
	 * follows a #src line.  EV_OK, or a status it has said. */
	int (*config_of)(void *ctx, size_t i, uint32_t src, uint32_t *config);
	void *ctx;
	struct ev_say say;
	/* Found by the scan (with al). */
	int several_clocks;         /* an input holds more than one (configuration,
	                               rank): its corrected records need a sort */
	int header_seen;            /* origin and producer are taken */
	char origin[32], producer[32]; /* header keys of the first input read up
	                                  to a record ("" when absent) */
	uint32_t world_size;        /* largest world_size of the #rank lines; 0: none */
};
/* EV_OK, or a status said through s->say. */
int ev_align_scan_run(struct ev_align_scan *s) EV_RESULT_USED;

/* ------------------------------------------------------------------ */
/* The report (lib/align/report.c) and the result as metadata           */
/* (lib/align/meta.c).                                                  */

/* After ev_align_solve, through say: per configuration a note with its
 * ranks and anchors, per rank a note with its fit, and warnings for what
 * alignment could not do (no coll or p2p records, ranks left on their own
 * clock, doubtful residuals, drifts not fitted, ranks of world_size
 * missing).  With tsv, one row per rank through ev_table (columns in
 * docs/ev-merge.md).  Bounded: nothing is kept but a configuration's
 * counts. */
struct ev_align_report {
	const struct ev_align_cfgs *cfgs; /* names of the configuration ids */
	const char *origin, *producer;    /* of the inputs (ev_align_scan) */
	uint32_t world_size;              /* ranks a configuration should have; 0: unknown */
	int rank_is_input;                /* ranks are input numbers: none is missing */
	ev_output *tsv;                   /* NULL: no table */
	struct ev_say say;
};
/* EV_OK, or the table's write status (not said: the caller names its file). */
int ev_align_report_write(const ev_align *a, const struct ev_align_report *r) EV_RESULT_USED;

/* "#meta align.rank<R>.offset_ns=O align.rank<R>.drift_ppm=D
 * align.rank<R>.t0_ns=T" per rank not left unaligned (with several
 * configurations "align.cfg<k>.rank<R>..." and "#meta align.cfg<k>=<keys>"),
 * then "#meta align.mode=".  EV_OK or the writer's status. */
int ev_align_write_meta(const ev_align *a, const struct ev_align_cfgs *c, ev_writer *w) EV_RESULT_USED;

#endif /* EV_ALIGN_H */
