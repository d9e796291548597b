/* SPDX-License-Identifier: MIT */
/*
 * internal.h - what the lib/nsys files share: the reader's state (inputs,
 * GPU processes, communicators, pending NCCL operations) and the helpers
 * that report errors and warnings without printing.
 */
#ifndef EV_NSYS_INTERNAL_H
#define EV_NSYS_INTERNAL_H

#include <regex.h>
#include <sqlite3.h>

#include "ev/analysis.h"
#include "ev/nccl.h"
#include "ev/nsys.h"
#include "ev/stream.h"

enum cur_kind { CUR_KERNEL, CUR_MEMCPY, CUR_MEMSET, CUR_NVTX, CUR_RUNTIME, NCUR };
extern const char *const nsys_cur_table[NCUR];

/* Payload schema entries we decode (NVTX_PAYLOAD_SCHEMA_ENTRIES), by name. */
enum pf { PF_COMM, PF_SIZE, PF_PEER, PF_ROOT, PF_REDOP, PF_NRANKS, PF_RANK, PF_DEVICE, NPF };
struct schema {
	int64_t domain, id;
	uint64_t size;
	int16_t off[NPF]; /* -1 = absent */
	uint8_t width[NPF];
};

/* Kinds of per-file warnings: each is said once per file, with a count. */
enum nsys_warn_kind {
	W_BAD_TIME,   /* a start/end that is not an integer */
	W_BAD_END,    /* end before start */
	W_SAT_TIME,   /* a time that overflows with the UTC shift */
	W_NO_STRING,  /* a string id StringIds does not hold */
	W_BAD_UTC,    /* utcEpochNs/systemClockNs not integers */
	W_BAD_INT,    /* other numbers that are not integers (ids, sizes) */
	W_BAD_STREAM, /* a streamId outside 0..2^32-1 */
	NWARN
};

struct file {
	char *path;        /* as given (for messages) */
	char *dbpath;      /* the file SQLite opens (a temp copy for gzip input) */
	int temp_slot;
	sqlite3 *db;
	int64_t offset;    /* added to every time stamp */
	int have_utc, normalized;
	char host[128], node[128];
	char version[64], schema_ver[32];
	int annotated;     /* annotated-NCCL markers present */
	int has_blobs;     /* exported with --include-blobs=true */
	int has_schemas;   /* NCCL payload schemas present */
	int64_t nccl_domain; /* -1 unknown */
	int has_runtime_launch;
	sqlite3_stmt *cur[NCUR];
	sqlite3_stmt *str_stmt;
	struct schema *schemas;
	size_t nschemas;
	uint64_t rows[NCUR];
	uint64_t skipped_nopid, skipped_bad;
	uint64_t cut_before, cut_after;
	uint64_t nccl_calls, nccl_nosize; /* stock calls, those without a size */
	uint64_t algo_hint, proto_threads;  /* ops whose algo/proto come from the kernel's name/threads */
	uint64_t torch_sized, torch_untyped; /* calls sized from PyTorch shapes; of those, no element type */
	uint64_t warn_count[NWARN], warn_row[NWARN];
	const char *warn_table[NWARN];
};

/* One NCCL operation from its API call, waiting for its kernel. */
struct chan { uint64_t a, b, c, d; };
struct op {
	uint64_t unit;
	uint8_t kind, p2p, redop, algo, proto, chunk_steps, slice_steps, have_info, emitted, elems;
	uint16_t nthreads;
	uint32_t type_size, step_size, seq;
	int32_t peer;       /* comm rank of root or peer, -1 */
	uint64_t comm;      /* commHash as called */
	uint64_t bytes;     /* data_size as called */
	uint64_t stream_ptr;
	uint64_t name;      /* API function name string id */
	uint64_t chan_sum;  /* sum of workCount of channel marks */
	int64_t call_ts;    /* the call's start, output time base (window test) */
	uint32_t nchan;
	struct chan *chans; /* MAXCH entries from the GPU's free list while pending */
};
#define MAXCH 64
#define OPCAP 4096
#define UNITCAP 512
#define NCORR 8

struct unit {
	uint64_t id;
	int64_t start, end; /* launch window (raw trace ns) */
	uint32_t tid;
	int closed;         /* window known (API range or group end seen) */
	uint32_t ncorr;
	uint64_t corr[NCORR];
	uint32_t nops, total; /* ops not yet written, ops in all */
};

struct thr {
	uint32_t tid;
	int depth;
	uint64_t group_unit;
	int group_open;
	/* The thread's last PyTorch collective range with shapes. */
	int64_t torch_start, torch_end;
	uint64_t torch_numel;
	unsigned torch_kind;
};

struct gpu {
	int file;
	uint32_t pid;
	int64_t device;
	int64_t rank;
	uint64_t kernels;
	int64_t max_grid;
	/* The profiled window in output time; win_lo > INT64_MIN when cut. */
	int64_t win_lo, win_hi;
	int64_t mark_start, mark_stop; /* "nsys profiling" marks, raw; 0 = none */
	int64_t step_lo, step_hi;      /* --steps window, raw; step_n ranges seen */
	uint64_t step_n;
	/* pending ops, absolute counters into a ring of OPCAP */
	struct op *ops;
	uint64_t op_head, op_tail;
	struct unit *units;
	uint64_t unit_head, unit_tail, next_unit;
	struct thr *thr;
	size_t nthr;
	struct chan **chan_free; /* channel arrays of emitted ops, for reuse */
	size_t nchan_free, capchan_free;
	uint64_t recent_corr[64];
	unsigned recent_pos;
	struct ev_map ptr_stream;  /* stream pointer -> streamId + 1 */
	struct ev_map stream_ptr;  /* streamId + 1 -> stream pointer */
	uint64_t matched, fallback, unmatched_ops, kernels_alone;
};

struct comm {
	uint64_t id;
	uint32_t nranks;
	int *gpu_of;          /* comm rank -> gpu index, -1 */
	int synthesized;
	int from_log;         /* membership from an NCCL_DEBUG log */
	int32_t *ring_next;   /* [MAXCH][nranks], -2 unknown */
	int32_t *tree;        /* [MAXCH][nranks][4] up,d0,d1,d2; -2 unknown */
	uint32_t nch_ring, nch_tree;
};

struct usage { uint64_t hash; int gpu; };

struct ev_nsys {
	struct ev_nsys_opts o;
	char err[1024];
	ev_strtab *st;
	ev_writer *w;
	struct file *files;
	int nfiles, capfiles;
	struct gpu *gpus;
	size_t ngpus, capgpus;
	struct ev_map gpu_idx;    /* (file, pid) -> index + 1 */
	struct comm *comms;
	size_t ncomms, capcomms;
	struct ev_map comm_idx;   /* comm id -> index + 1 */
	struct ev_map comm_alias; /* (file, pid, commHash) -> comm id */
	struct ev_map comm_rank;  /* (file, pid, comm id) -> comm rank + 1 */
	struct ev_map strs;       /* (file, StringIds id) -> ev string id */
	struct ev_map seq;        /* (rank, comm, kind...) -> next seq */
	struct ev_map kinfo;      /* kernel name id -> kinfos index + 1 */
	struct ev_vec kinfos;     /* of struct kinfo, one per distinct kernel name */
	struct ev_vec usage;      /* of struct usage: comms seen only in calls */
	struct ev_map usage_seen;
	struct ev_vec logops;     /* of struct logop: calls from --nccl-log */
	struct ev_map logidx;     /* (pid, kind, ordinal) -> logops index + 1 */
	struct ev_map logseen;    /* (pid, kind) -> calls of the export matched so far */
	regex_t node_re;
	int have_node_re;
	int prepared, all_utc;
	uint64_t nsynth;
	char *buf;
	size_t bufcap;
	unsigned char *blob;
	size_t blobcap;
	/* The row being converted, for a write the output refuses (a string
	 * over the line limit): at_row 0 outside the time merge. */
	int at_file, at_kind;
	uint64_t at_row;
};

/* report.c */
int nsys_fail(struct ev_nsys *s, int status, const char *fmt, ...) EV_PRINTF(3, 4);
int nsys_nomem(struct ev_nsys *s);
void nsys_warn(struct ev_nsys *s, const char *fmt, ...) EV_PRINTF(2, 3);
void nsys_note(struct ev_nsys *s, struct file *f, enum nsys_warn_kind k, const char *table, uint64_t row);
void nsys_notes_flush(struct ev_nsys *s);
int nsys_write_status(struct ev_nsys *s, int rc);
uint64_t nsys_key3(uint64_t a, uint64_t b, uint64_t c);
int nsys_intern(struct ev_nsys *s, const char *text, size_t len, uint64_t *id);
uint32_t nsys_pid_of(int64_t global);

/* db.c */
int nsys_db_open_path(struct ev_nsys *s, struct file *f);
int nsys_db_configure(struct ev_nsys *s, struct file *f);
void nsys_db_close(struct file *f);
int nsys_table_exists(struct file *f, const char *table);
int nsys_column_exists(struct file *f, const char *table, const char *col);
void nsys_add_col(char *sql, size_t cap, struct file *f, const char *table, const char *col, const char *alt);
int nsys_sql_error(struct ev_nsys *s, struct file *f, const char *what);
int nsys_query_rows(struct ev_nsys *s, struct file *f, const char *sql, const char *what,
                    int (*fn)(struct ev_nsys *, struct file *, sqlite3_stmt *, void *), void *ctx);
int nsys_str_of(struct ev_nsys *s, struct file *f, int fi, int64_t sid, uint64_t *out, uint64_t row, const char *table);
const char *nsys_col_text(sqlite3_stmt *st, int i);
const unsigned char *nsys_col_blob(struct ev_nsys *s, sqlite3_stmt *st, int i, size_t *n);
int nsys_col_int(struct ev_nsys *s, struct file *f, sqlite3_stmt *st, int i, enum nsys_warn_kind k, const char *table,
                 uint64_t row, int64_t *v);

/* payload.c */
int nsys_row_entry(struct ev_nsys *s, struct file *f, sqlite3_stmt *st, void *ctx);
int nsys_decode_payload(const struct file *f, const unsigned char *b, size_t n, int64_t vals[NPF], unsigned *mask);

/* markers.c: annotated NCCL */
int nsys_parse_chain(const char *p, int64_t *v, int n);
int nsys_row_pid(sqlite3_stmt *st, int col, const char *text, uint32_t *pid);

/* comm.c */
struct gpu *nsys_gpu_find(struct ev_nsys *s, int file, uint32_t pid);
struct gpu *nsys_gpu_add(struct ev_nsys *s, int file, uint32_t pid);
struct comm *nsys_comm_find(struct ev_nsys *s, uint64_t id);
struct comm *nsys_comm_add(struct ev_nsys *s, uint64_t id, uint32_t nranks);
uint64_t nsys_comm_id_of(struct ev_nsys *s, int file, uint32_t pid, uint64_t hash);
int32_t nsys_comm_global(struct ev_nsys *s, uint64_t id, int64_t r);
int nsys_row_comm_info(struct ev_nsys *s, struct file *f, sqlite3_stmt *st, void *ctx);
int nsys_row_init_payload(struct ev_nsys *s, struct file *f, sqlite3_stmt *st, void *ctx);
int nsys_row_topo(struct ev_nsys *s, struct file *f, sqlite3_stmt *st, void *ctx);
void nsys_node_from_path(struct ev_nsys *s, struct file *f, int fi);
int nsys_synthesize(struct ev_nsys *s);
int nsys_assign_ranks(struct ev_nsys *s);
int nsys_check_members(struct ev_nsys *s);
int nsys_write_meta(struct ev_nsys *s);

/* scan.c: first pass */
int nsys_pass1(struct ev_nsys *s, int fi);
int nsys_pass1_topology(struct ev_nsys *s, int fi);
int nsys_windows(struct ev_nsys *s);

/* match.c: NCCL calls to kernels */
struct call {
	unsigned kind;
	int p2p;
	int64_t comm, bytes, type_size, redop, root, peer, stream;
	unsigned have; /* bit per field present */
	uint64_t name;
};
enum { HC_COMM = 1, HC_BYTES = 2, HC_TS = 4, HC_REDOP = 8, HC_ROOT = 16, HC_PEER = 32, HC_STREAM = 64,
       HC_ELEMS = 128 /* bytes holds an element count (PyTorch shapes) */ };
int nsys_torch_range(struct gpu *g, uint32_t tid, int64_t start, int64_t end, const char *text);
int nsys_torch_fill(struct gpu *g, uint32_t tid, int64_t start, struct call *c);
/* Per kernel name: its class and what the NCCL vocabulary decodes. */
struct kinfo { uint8_t kclass, nccl; struct ev_nccl_kname kn; };
int nsys_add_call(struct ev_nsys *s, struct gpu *g, uint32_t tid, int64_t start, int64_t end, const struct call *c);
int nsys_group_mark(struct gpu *g, uint32_t tid, int64_t start, int64_t end, int is_start);
void nsys_coll_info(struct gpu *g, const char *t, uint64_t *bad);
int nsys_coll_kernel(struct gpu *g, const char *t, uint64_t *bad);
int nsys_p2p_kernel(struct gpu *g, const char *t, uint64_t *bad);
int nsys_kinfo_of(struct ev_nsys *s, uint64_t name, struct kinfo *ki);
int nsys_nccl_kernel(struct ev_nsys *s, struct gpu *g, const struct ev_rec *k, int64_t raw_start, const struct kinfo *ki);
void nsys_note_launch(struct gpu *g, uint32_t tid, int64_t start, uint64_t corr);
void nsys_gpu_release(struct gpu *g);
int nsys_in_window(struct ev_nsys *s, struct gpu *g, int64_t ts);

/* merge.c: second pass */
int nsys_prepare_cursors(struct ev_nsys *s, struct file *f, int has_nccl);
int nsys_pass2(struct ev_nsys *s, void (*progress)(void *, uint64_t), void *ctx);
int64_t nsys_shift_time(struct ev_nsys *s, struct file *f, int64_t t, uint64_t row, const char *table);

/* ncclog.c */
int nsys_read_nccl_log(struct ev_nsys *s);
int nsys_log_fill(struct ev_nsys *s, struct gpu *g, struct call *c);

#endif
