/* SPDX-License-Identifier: MIT */
/*
 * ev/nsys.h - Nsight Systems SQLite exports (nsys export --type sqlite) read
 * as one ev stream: defensive opening, schema detection, NCCL payload
 * decoding, NCCL calls matched to their kernels, communicators, rings and
 * trees, the profiled window.  docs/nsys2ev.md describes what is written.
 *
 * Use: ev_nsys_new, then ev_nsys_add_file (or ev_nsys_add_db) per input,
 * ev_nsys_prepare once (global ranks, synthesized communicators, window),
 * ev_nsys_write into an open writer, ev_nsys_free.  Every function returns
 * EV_OK or a negative EV_ERR_* status; every failure but EV_ERR_PIPE leaves
 * a message in ev_nsys_errmsg() ("FILE: what", no program name).  Nothing
 * here prints: warnings go to the callback, counted and deduplicated per
 * file (a kind of problem is reported once per file with its count and the
 * first row it was seen in).
 */
#ifndef EV_NSYS_H
#define EV_NSYS_H

#include <sqlite3.h>

#include "ev/stream.h"

typedef struct ev_nsys ev_nsys;

/* What to keep in time: the profiled window. */
enum ev_nsys_window {
	EV_NSYS_WIN_MARKS = 0, /* between the "nsys profiling start/stopped" marks when a GPU has them */
	EV_NSYS_WIN_ALL = 1,   /* everything, marks ignored */
};

struct ev_nsys_opts {
	int api;                /* also write runtime/driver calls (api records) */
	const char *node_regex; /* node name from the path: first group of this POSIX ERE */
	const char *rank_map;   /* file of "NODE PID RANK" lines fixing ranks */
	const char *nccl_log;   /* NCCL_DEBUG=INFO output: sizes, communicators, rings, trees */
	int window;             /* enum ev_nsys_window */
	int have_range;         /* keep only [t0, t1] (output time base, ns) */
	int64_t t0, t1;
	const char *steps;      /* keep the NVTX ranges starting with this name... */
	int64_t step_from, step_to; /* ...numbered from 0 per GPU, this inclusive range */
	/* Warnings, one finished sentence each ("FILE: ..."), never NULL text. */
	void (*warn)(void *ctx, const char *msg);
	void *ctx;
};

/* Counts a front end may print (-v). */
struct ev_nsys_file_stats {
	const char *path, *node;
	uint64_t rows[5];       /* kernel, memcpy, memset, NVTX, runtime rows read */
	uint64_t skipped_nopid; /* rows of processes without GPU work */
	uint64_t skipped_bad;   /* NCCL markers not understood or not placed */
	uint64_t cut_before, cut_after; /* records outside the profiled window */
};
struct ev_nsys_gpu_stats {
	int64_t rank, device;
	uint32_t pid;
	uint64_t matched, fallback, unmatched, kernels_alone;
};

int ev_nsys_new(ev_nsys **ns, const struct ev_nsys_opts *opts) EV_RESULT_USED;
/* Open an export (.sqlite, or gzip-compressed: copied to a temporary file
 * first) read-only and defensively, check it is one, and read what it
 * holds: time base, host, GPU processes, communicators, payload schemas. */
int ev_nsys_add_file(ev_nsys *ns, const char *path) EV_RESULT_USED;
/* The same for a database the caller opened (in memory, for tests and
 * fuzzing); ns takes it over and closes it.  name is used in messages. */
int ev_nsys_add_db(ev_nsys *ns, sqlite3 *db, const char *name) EV_RESULT_USED;
/* After the last input: topology markers, communicators without init
 * markers, global ranks, the time base and the window; cursors ready. */
int ev_nsys_prepare(ev_nsys *ns) EV_RESULT_USED;
/* Header keys, #src/#rank/#comm/#ring/#tree lines and every record in time
 * order.  progress (may be NULL) is called every 65,536 rows. */
int ev_nsys_write(ev_nsys *ns, ev_writer *w, void (*progress)(void *ctx, uint64_t records), void *ctx) EV_RESULT_USED;
/* After ev_nsys_write: warnings for what was left out (unmatched calls,
 * markers, cut records) through the callback. */
void ev_nsys_finish(ev_nsys *ns);
const char *ev_nsys_errmsg(const ev_nsys *ns);
/* The string table the records' names are in (open the writer on it). */
ev_strtab *ev_nsys_strtab(ev_nsys *ns);
size_t ev_nsys_nfiles(const ev_nsys *ns);
size_t ev_nsys_ngpus(const ev_nsys *ns);
void ev_nsys_file_stats(const ev_nsys *ns, size_t i, struct ev_nsys_file_stats *st);
void ev_nsys_gpu_stats(const ev_nsys *ns, size_t i, struct ev_nsys_gpu_stats *st);
void ev_nsys_free(ev_nsys *ns);

/* ---- pieces with unit tests of their own ---------------------------- */

/* Number after the word `key` in an annotated-NCCL marker ("... data_size
 * 4096, ..."): decimal, negative or 0x hex; "(nil)" reads 0.  0 if found. */
int ev_nsys_marker_num(const char *text, const char *key, int64_t *v);

/* One line of an NCCL_DEBUG=INFO log. */
enum ev_nsys_log_kind {
	EV_NSYS_LOG_NONE = 0,
	EV_NSYS_LOG_COLL,  /* "AllReduce: opCount 3 sendbuff ... count N datatype D op O root R comm 0x.. [nranks N] stream 0x.." */
	EV_NSYS_LOG_INIT,  /* "comm 0x.. rank R nranks N cudaDev D ... commId 0x.. - Init COMPLETE" */
	EV_NSYS_LOG_RING,  /* "Channel 00/02 : 0 1 2 3" */
	EV_NSYS_LOG_TREE,  /* "Trees [0] 1/-1/-1->0->-1 [1] ..." */
	EV_NSYS_LOG_CHANNELS, /* "2 coll channels, ..., 2 p2p channels, 2 p2p channels per peer" */
};
struct ev_nsys_log_line {
	unsigned kind;
	char host[64];       /* "host:pid:tid" prefix parts, when present */
	int64_t pid, tid;
	unsigned coll;       /* enum ev_coll */
	uint64_t op_count, count, comm;
	unsigned dtype, redop; /* enum ev_dtype, enum ev_redop */
	int64_t root, rank, nranks, device, stream;
	uint64_t comm_id;
	int64_t channel, nchannels, p2p_channels;
	const char *rest;    /* ring order / tree text after the header */
};
/* Parse one line (without its newline).  Returns the kind, 0 for lines of
 * no interest. */
unsigned ev_nsys_log_parse(const char *line, struct ev_nsys_log_line *out);

#endif /* EV_NSYS_H */
