/* SPDX-License-Identifier: MIT */
/*
 * ev/kineto.h - PyTorch profiler (Kineto) traces to ev records: the event
 * scanner, the mapping of Kineto categories to record types, links from GPU
 * events to the op that launched them, collectives, and the time-ordered
 * output.  kineto2ev is a front end over this module.
 */
#ifndef EV_KINETO_H
#define EV_KINETO_H

#include "ev/analysis.h"
#include "ev/json.h"
#include "ev/stream.h"

/* ------------------------------------------------------------------ */
/* One event in one pass (lib/kineto/kineto_event.c).                  */

/* The members of an event that the conversion reads: top-level ones and,
 * inside "args", the argument keys.  Found while the event's JSON is
 * validated, in a single walk over its text. */
enum ev_kfield {
	EV_KF_PH, EV_KF_CAT, EV_KF_NAME, EV_KF_TS, EV_KF_DUR, EV_KF_PID, EV_KF_TID, EV_KF_ID, EV_KF_ARGS,
	EV_KA_STREAM, EV_KA_CORRELATION, EV_KA_EXTERNAL_ID, EV_KA_BYTES, EV_KA_DEVICE, EV_KA_BLOCK,
	EV_KA_GRID, EV_KA_COLL_NAME, EV_KA_IN_NELEMS, EV_KA_OUT_NELEMS, EV_KA_GROUP_SIZE, EV_KA_DTYPE,
	EV_KA_PG_NAME, EV_KA_PG_RANKS, EV_KA_PG_DESC, EV_KA_INPUT_DIMS, EV_KA_INPUT_TYPE,
	EV_KA_INPUT_STRIDES, EV_KA_CONCRETE, EV_KA_MEM_BW, EV_KA_WAIT_STREAM, EV_KA_WAIT_CORR, EV_KF_COUNT
};
/* A member's value: type 0 when absent (its other fields are then not
 * set: read none of them without a type); '"' a string (p..p+n is the raw
 * text between the quotes, escapes not undone); 'n' a number; 'l' true,
 * false or null; '{' or '[' a container (its whole text).
 *
 * A number the scanner kept may also carry its integer part, read while
 * its digits were found: when num has EV_KNUM_INT, iv is the value of its
 * first ilen bytes (sign and at most 18 digits); EV_KNUM_FRAC and
 * EV_KNUM_EXP say what follows them.  A span made any other way has num 0
 * and is read from its text. */
enum { EV_KNUM_INT = 1, EV_KNUM_FRAC = 2, EV_KNUM_EXP = 4 };
struct ev_kspan {
	const char *p;
	uint32_t n;
	char type;
	uint8_t num, ilen;
	int64_t iv;
};
struct ev_kevent {
	struct ev_kspan f[EV_KF_COUNT];
	int is_object; /* 0: the value is valid JSON but not an object */
};
/* Scan one event's JSON text.  EV_OK; EV_ERR_FORMAT for invalid JSON
 * (strict: separators, escapes, literals, one value); EV_ERR_LIMIT when
 * nested deeper than EV_JSON_MAX_DEPTH; EV_ERR_RANGE with more than
 * max_tokens keys and values (0: no limit).  A repeated key keeps its
 * first value. */
int ev_kineto_scan_event(const char *text, size_t len, uint32_t max_tokens, struct ev_kevent *e) EV_RESULT_USED;
/* Mark the members from index `from` on absent (type 0). */
void ev_kevent_clear(struct ev_kevent *e, int from);
/* The same for the value at the start of text (leading whitespace
 * allowed): *used is the bytes up to its end; what follows is not looked at. */
int ev_kineto_scan_prefix(const char *text, size_t len, uint32_t max_tokens, struct ev_kevent *e,
                          size_t *used) EV_RESULT_USED;
/* Integer value of a number or numeric string (a fraction is truncated). */
int ev_kspan_i64(const struct ev_kspan *s, int64_t *v);
/* Microseconds written in decimal to integer nanoseconds, exactly.
 * Returns 0, EV_ERR_FORMAT (not a number) or EV_ERR_RANGE (a number whose
 * nanoseconds do not fit 64 bits). */
int ev_kspan_us_to_ns(const struct ev_kspan *s, int64_t *ns);
/* Unescaped text of a string (or the raw text of another value) into
 * out[cap]; the length, or (size_t)-1 on a bad escape or too long. */
size_t ev_kspan_text(const struct ev_kspan *s, char *out, size_t cap);
/* Does the span equal text exactly (raw)? */
int ev_kspan_eq(const struct ev_kspan *s, const char *text);

/* ------------------------------------------------------------------ */
/* Conversion (lib/kineto/kineto_conv.c).                               */

struct ev_kineto_opts {
	enum ev_rules rules;
	int python;            /* keep python_function events */
	int no_api;            /* leave runtime and driver calls out of the output */
	int clip;              /* cut same-stream overruns (ev_clipper) */
	uint64_t sort_bytes;   /* external sort budget */
	size_t max_object;     /* largest single JSON value */
	const char *tmpdir;    /* NULL: $TMPDIR or /tmp */
	uint32_t link_window;  /* runtime calls and ops remembered for linking; 0 = 65536 */
	uint32_t max_tokens;   /* most keys and values in one event; 0 = no limit */
	int flow_links;        /* read ac2g flows and flag GPU events no flow pair joins
	                        * to their call (noflow), for TraceLens's links */
	int threads;           /* 2: a plain file of 4 MiB or more is read in two
	                        * halves, the second on a thread (same output) */
};

/* What is known about one input once it has been read, and what the
 * conversion had to infer, drop or clamp there (the front end reports it). */
struct ev_kineto_file {
	const char *path;
	int64_t base_ns;       /* baseTimeNanoseconds */
	int have_base;
	int64_t last_end;      /* latest end of its events before the base (0 none) */
	int64_t rank;          /* -1 until known */
	int64_t world, pid, device;
	uint64_t events, kernels, gpu_events, colls, inferred_colls, skipped;
	/* Elements of traceEvents read so far, whatever they are (metadata,
	 * flows, non-objects): the next one's index, which TraceLens takes
	 * as the event's UID. */
	uint64_t elements;
	/* How each GPU event (kernel, memcpy, memset) found its op: through its
	 * runtime call and the innermost cpu_op open around that call on its
	 * thread; by its own External id; through a call outside any op; not
	 * at all (no runtime call and no op with its External id). */
	uint64_t linked_stack, linked_ext, linked_call_only, unlinked;
	/* Of those with a runtime call, how many no ac2g flow pair joins to it
	 * (flagged noflow: TraceLens leaves them without a call). */
	uint64_t noflow;
	/* fwdbwd flows (--flow-links): backward ops given their forward op's
	 * External id (range aux); flows whose forward op was not in the link
	 * window (or had no 's' end), and ends that bound to no op. */
	uint64_t fwdbwd_linked, fwdbwd_lost, fwdbwd_unbound;
	/* Counted warnings. */
	uint64_t neg_dur, big_stream, unmatched_b, unmatched_e, no_group_size;
	uint64_t inferred_no_size; /* inferred collectives without an nccl:* annotation */
	char nccl_version[32];
	/* deviceProperties: the GPUs the process saw, and their names by id
	 * (ids 0..15; spaces as '_', for a #rank value). */
	int ngpus;
	char gpu_name[16][48];
	/* The byte where a second half read on a thread of its own began, and
	 * where it ended (0, 0: read in one). */
	uint64_t half_from, half_to;
	const char *dialect;   /* non-NULL: a JSON trace that is not Kineto */
	const char *processed; /* non-NULL: the tool whose processed view this is */
};

typedef struct ev_kineto ev_kineto;
int ev_kineto_new(ev_kineto **k, const struct ev_kineto_opts *o, int nfiles) EV_RESULT_USED;
void ev_kineto_free(ev_kineto *k);
struct ev_kineto_file *ev_kineto_file(ev_kineto *k, int i);
ev_strtab *ev_kineto_strtab(ev_kineto *k);
/* Read input i (a Kineto JSON document) from in.  EV_OK, or an error with
 * a message in err ("byte N: ..."): EV_ERR_FORMAT, EV_ERR_LIMIT,
 * EV_ERR_TRUNCATED, EV_ERR_IO (a sort run: see ev_kineto_errpath),
 * EV_ERR_NOMEM. */
int ev_kineto_read(ev_kineto *k, int i, ev_input *in, char *err, size_t errn) EV_RESULT_USED;
/* One event of input i given as JSON text (what ev_kineto_read does per
 * element of traceEvents); offset is for messages. */
int ev_kineto_event(ev_kineto *k, int i, const char *text, size_t len, uint64_t offset, char *err,
                    size_t errn) EV_RESULT_USED;
/* A top-level member of input i's document (distributedInfo,
 * baseTimeNanoseconds, deviceProperties, ...).  EV_ERR_RANGE with a message
 * in err for a baseTimeNanoseconds that is not a time in ns from 0 to 2^63-1. */
int ev_kineto_top(ev_kineto *k, int i, const char *key, size_t key_len, const char *text, size_t len, char *err,
                  size_t errn) EV_RESULT_USED;
/* Add a ready record from input i (other dialects of the same run). */
int ev_kineto_add(ev_kineto *k, int i, struct ev_rec *r) EV_RESULT_USED;
/* Write the headers, #src/#rank/#comm lines and every record in time
 * order, linking GPU events to their ops on the way. */
int ev_kineto_write(ev_kineto *k, ev_writer *w) EV_RESULT_USED;
/* The same metadata lines (#src, #rank, #comm, #meta, #process, #thread,
 * without the #ev header and #str lines: the records' strings are
 * ev_kineto_strtab's) and records, in the same order, handed to a caller
 * in the same process instead of written: a reader of the stream gets
 * nothing more.  Not with clip (EV_ERR_ARG). */
struct ev_kineto_sink {
	void *ctx;
	int (*text)(void *ctx, const char *line, size_t len);
	int (*rec)(void *ctx, const struct ev_rec *r);
};
int ev_kineto_feed(ev_kineto *k, const struct ev_kineto_sink *sink) EV_RESULT_USED;
const char *ev_kineto_errpath(const ev_kineto *k);
uint64_t ev_kineto_overruns(const ev_kineto *k);
uint64_t ev_kineto_clipped(const ev_kineto *k);

/* Rank from a path: rank3, rank_3, rank-3 or worker3 in any directory or
 * the file name.  0 and *rank set; 1 none; 2 ambiguous (different numbers). */
int ev_kineto_rank_from_path(const char *path, int64_t *rank);

#endif /* EV_KINETO_H */
