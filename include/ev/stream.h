/* SPDX-License-Identifier: MIT */
/*
 * ev/stream.h - the ev stream: status codes, the record and its vocabulary,
 * strings, byte input/output, metadata, reader, writer, external sorter and
 * the small utilities they share.  docs/FORMAT.md specifies the format; this
 * header and that document change together.
 */
#ifndef EV_STREAM_H
#define EV_STREAM_H

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#define EV_VERSION_STRING "0.1.0" /* evkit release */
#define EV_FORMAT_MAJOR 1
#define EV_FORMAT_MINOR 1
#define EV_RECORD_SIZE 96 /* bytes of a v1.0 record, type byte included */

#if defined(__GNUC__)
#define EV_RESULT_USED __attribute__((warn_unused_result))
#define EV_PRINTF(a, b) __attribute__((format(printf, a, b)))
#else
#define EV_RESULT_USED
#define EV_PRINTF(a, b)
#endif


/* ------------------------------------------------------------------ */
/* Status codes.  Zero and positive values are successes.             */

enum ev_status {
	EV_OK = 0,
	EV_EOF = 0,          /* ev_read: no more items (same value as EV_OK) */
	EV_REC = 1,          /* ev_read: a record was read */
	EV_TEXT = 2,         /* ev_read: a metadata text line was read */
	EV_ERR_IO = -1,      /* read/write/open failed; errno is kept */
	EV_ERR_NOMEM = -2,
	EV_ERR_FORMAT = -3,  /* malformed line, bad escape, wrong record size */
	EV_ERR_TRUNCATED = -4, /* no #end, or last line without newline */
	EV_ERR_VERSION = -5, /* unknown major version */
	EV_ERR_NOSTR = -6,   /* record names a string id that was not defined */
	EV_ERR_RANGE = -7,   /* a value does not fit its field */
	EV_ERR_ORDER = -8,   /* records out of time order (see ev_order_check) */
	EV_ERR_LIMIT = -9,   /* a line or object exceeds a configured limit */
	EV_ERR_PIPE = -10,   /* output reader went away (EPIPE): exit quietly */
	EV_ERR_ARG = -11,    /* invalid argument to a library call */
	EV_ERR_GZIP = -12,   /* corrupt or truncated gzip data */
	EV_ERR_COLLISION = -13, /* two texts with one string id */
	EV_ERR_SAMEFILE = -14, /* an output is the same file as an input */
	EV_ERR_SAMEOUT = -15,  /* standard output is a regular file that is also an input */
};

/* A static English description of a status ("truncated stream", ...). */
const char *ev_strerror(int status);
/* A record out of time order, in the one wording of docs/FORMAT.md §7:
 * "out of order (ts T after U); sort with ev-merge --sort" into buf.  ts is
 * the record's time, last the time before it.  Returns snprintf's count. */
int ev_order_text(char *buf, size_t n, int64_t ts, int64_t last);

/* ------------------------------------------------------------------ */
/* The record.  Decoded form; the encoded form is EV_RECORD_SIZE bytes, */
/* little-endian, fields at the offsets given in docs/FORMAT.md.        */

/* Record types (byte 0).  0x0A and 0x0D are never used: a record line
 * must not start with a newline or carriage return.  Numbers are permanent. */
enum ev_type {
	EV_KERNEL = 0x01,  /* GPU kernel; op = enum ev_kclass */
	EV_MEMCPY = 0x02,  /* op = enum ev_copy */
	EV_MEMSET = 0x03,
	EV_COLL = 0x04,    /* one rank's part of a collective call */
	EV_P2P = 0x05,     /* one rank's send or receive call; op = EV_OP_SEND/RECV */
	EV_SEND = 0x06,    /* one wire message sent (schedule) */
	EV_RECV = 0x07,    /* one wire message received (schedule) */
	EV_CALC = 0x08,    /* local time in a schedule; op = enum ev_calc */
	EV_RANGE = 0x09,   /* NVTX range, cpu_op, annotation; op = enum ev_range */
	EV_API = 0x0B,     /* CUDA/HIP runtime or driver call */
	EV_MARK = 0x0C,    /* instant; op = enum ev_range */
	EV_DEP = 0x0E,     /* dependency edge of the preceding op (see FORMAT.md) */
	EV_COUNTER = 0x0F, /* counter sample: bytes = value, name = series */
	EV_CHAN = 0x10,    /* one channel's work of the preceding COLL */
	EV_OVERLAP = 0x11, /* overlap of a compute kernel with communication */
	EV_TSX = 0x12,     /* AIU stage counters TS1..TS5 of the KERNEL after it */
	EV_IDEAL = 0x13,   /* compiler ideal cycles of the KERNEL after it (and its tsx) */
	EV_TYPE_MAX = 0x1F,
};

/* KERNEL op: kernel class. */
enum ev_kclass {
	EV_KC_OTHER = 0, EV_KC_GEMM = 1, EV_KC_COMM = 2, EV_KC_ATTENTION = 3,
	EV_KC_ELEMENTWISE = 4, EV_KC_REDUCE = 5, EV_KC_MEMSET = 6, EV_KC_MEMCPY = 7,
	EV_KC_CONV = 8,
};

/* COLL / P2P / SEND / RECV op: collective kind (also the kind a SEND/RECV
 * was expanded from). */
enum ev_coll {
	EV_OP_UNKNOWN = 0, EV_OP_ALLREDUCE = 1, EV_OP_ALLGATHER = 2,
	EV_OP_REDUCESCATTER = 3, EV_OP_BROADCAST = 4, EV_OP_REDUCE = 5,
	EV_OP_ALLTOALL = 6, EV_OP_SEND = 7, EV_OP_RECV = 8, EV_OP_BARRIER = 9,
	EV_OP_GATHER = 10, EV_OP_SCATTER = 11, EV_OP_ALLTOALLV = 12,
	EV_OP_SENDRECV = 13,
};

/* MEMCPY op. */
enum ev_copy {
	EV_CP_UNKNOWN = 0, EV_CP_HTOD = 1, EV_CP_DTOH = 2, EV_CP_DTOD = 3,
	EV_CP_HTOH = 4, EV_CP_PTOP = 5,
};

/* CALC op: what the local time stands for. */
enum ev_calc {
	EV_CALC_GAP = 0,      /* time between communication ops (ATLAHS style) */
	EV_CALC_KERNEL = 1,   /* compute kernels' own time */
	EV_CALC_REDUCE = 2,   /* reduction of a received slice */
	EV_CALC_COPY = 3,     /* local copy of a slice */
	EV_CALC_INTRA = 4,    /* intra-node transfer modelled as local time */
	EV_CALC_SYNC = 5,     /* zero-length join point */
};

/* RANGE / MARK op: where the range came from. */
enum ev_range {
	EV_RG_NVTX = 0, EV_RG_CPU_OP = 1, EV_RG_USER = 2, EV_RG_GPU_USER = 3,
	EV_RG_PYTHON = 4, EV_RG_NCCL = 5, EV_RG_STEP = 6, EV_RG_OTHER = 7,
};

/* API op. */
enum ev_api { EV_API_RUNTIME = 0, EV_API_DRIVER = 1 };

/* NCCL's algorithms and protocols.  A new one takes the next value, just
 * before the count, which bounds everything that lists them (the names
 * here, NCCL's spellings in lib/nccl/names.c, the schedule model's
 * checks): a table left without the new value fails to compile. */
enum ev_algo {
	EV_ALGO_UNKNOWN = 0, EV_ALGO_RING = 1, EV_ALGO_TREE = 2, EV_ALGO_NVLS = 3,
	EV_ALGO_NVLS_TREE = 4, EV_ALGO_COLLNET_DIRECT = 5, EV_ALGO_COLLNET_CHAIN = 6,
	EV_ALGO_PAT = 7,
	EV_ALGO_COUNT /* values, unknown included */
};

enum ev_proto {
	EV_PROTO_UNKNOWN = 0, EV_PROTO_LL = 1, EV_PROTO_LL128 = 2, EV_PROTO_SIMPLE = 3,
	EV_PROTO_COUNT /* values, unknown included */
};

/* Element types, NCCL's order shifted by one so that 0 means unknown;
 * then the PyTorch element types NCCL has no code for (a collective or an
 * op of them still has a size: ev_dtype_size). */
enum ev_dtype {
	EV_DT_UNKNOWN = 0, EV_DT_INT8 = 1, EV_DT_UINT8 = 2, EV_DT_INT32 = 3,
	EV_DT_UINT32 = 4, EV_DT_INT64 = 5, EV_DT_UINT64 = 6, EV_DT_FLOAT16 = 7,
	EV_DT_FLOAT32 = 8, EV_DT_FLOAT64 = 9, EV_DT_BFLOAT16 = 10,
	EV_DT_FP8E4M3 = 11, EV_DT_FP8E5M2 = 12,
	EV_DT_INT16 = 13, EV_DT_UINT16 = 14, EV_DT_COMPLEX32 = 15, EV_DT_COMPLEX64 = 16,
	EV_DT_COMPLEX128 = 17, EV_DT_FP8E8M0 = 18, EV_DT_FP4E2M1X2 = 19,
};

enum ev_redop {
	EV_RED_UNKNOWN = 0, EV_RED_SUM = 1, EV_RED_PROD = 2, EV_RED_MAX = 3,
	EV_RED_MIN = 4, EV_RED_AVG = 5, EV_RED_PREMULSUM = 6, EV_RED_NONE = 7,
};

/* flags (16 bits).  Bits not listed are reserved and written as zero. */
enum ev_flag {
	EV_F_INTRA = 1u << 0,     /* message stays inside a node */
	EV_F_PHASE_RS = 1u << 1,  /* ring AllReduce reduce-scatter phase */
	EV_F_PHASE_AG = 1u << 2,  /* ring AllReduce all-gather phase */
	EV_F_TREE_UP = 1u << 3,   /* tree: towards the root */
	EV_F_TREE_DOWN = 1u << 4, /* tree: away from the root */
	EV_F_SYNTH = 1u << 5,     /* synthesized, not observed */
	EV_F_IREQ = 1u << 6,      /* DEP: irequires (wait for start, not end) */
	EV_F_UNLINKED = 1u << 7,  /* GPU event with no launching call found */
	EV_F_GROUP = 1u << 8,     /* op is part of an NCCL group */
	EV_F_CLIPPED = 1u << 9,   /* duration was clipped to the next kernel */
	EV_F_FALLBACK = 1u << 10, /* matched by the time fallback, not by id */
	EV_F_NOFLOW = 1u << 11,   /* GPU event linked to its call by correlation id only (1.1) */
	EV_F_KNOWN_MASK = (1u << 12) - 1,
	EV_F_KNOWN_MASK_1_0 = (1u << 11) - 1, /* the bits a 1.0 stream may set */
};

/* Decoded record.  Field meanings per type are in docs/FORMAT.md. */
struct ev_rec {
	uint8_t type, op, algo, proto, dtype, redop;
	uint16_t flags;
	uint32_t rank;
	uint32_t stream;
	int64_t ts;      /* start, ns from the segment's origin */
	uint64_t dur;    /* ns */
	uint64_t bytes;
	uint64_t name;   /* string id (0 = none) */
	uint64_t sig;    /* string id (0 = none) */
	uint64_t comm;
	uint32_t seq;
	int32_t peer;    /* -1 = none */
	uint32_t id;
	uint16_t channel;
	uint16_t src;
	uint32_t step;
	uint32_t aux;
	uint16_t nthreads;   /* threads per block of the op's kernel, 0 unknown */
	uint8_t chunk_steps; /* NCCL chunkSteps, 0 unknown */
	uint8_t slice_steps; /* NCCL sliceSteps, 0 unknown */
	uint32_t step_size;  /* NCCL stepSize in bytes, 0 unknown; a GPU event's
	                      * trace index + 1 (docs/FORMAT.md section 5) */
};

/* A record with every field zero except peer = -1. */
void ev_rec_init(struct ev_rec *r);
/* Encode into buf[EV_RECORD_SIZE] (unescaped). */
void ev_rec_encode(const struct ev_rec *r, unsigned char *buf);
/* Decode from buf of at least EV_RECORD_SIZE bytes (extra bytes of a later
 * minor version are ignored by the caller passing only the first 96). */
void ev_rec_decode(const unsigned char *buf, struct ev_rec *r);
/* End time, ts + dur, saturated at INT64_MAX: the format allows any ts and
 * dur, and an end past the largest time stays there instead of wrapping
 * negative (docs/FORMAT.md §9). */
static inline int64_t ev_rec_end(const struct ev_rec *r)
{
	/* Room above ts, computed without signed overflow for any ts. */
	uint64_t room = r->ts >= 0 ? (uint64_t)(INT64_MAX - r->ts) : (uint64_t)INT64_MAX + (uint64_t)(-(r->ts + 1)) + 1u;
	return r->dur > room ? INT64_MAX : (int64_t)((uint64_t)r->ts + r->dur);
}

/* Names of enum values, as ev-view prints them and parses them back.
 * ev_*_name returns NULL for a value without a name.  ev_*_parse returns
 * 0 and sets *v, or EV_ERR_ARG.  `op` depends on the record type. */
const char *ev_type_name(unsigned type);
int ev_type_parse(const char *s, unsigned *v);
const char *ev_op_name(unsigned type, unsigned op);
int ev_op_parse(unsigned type, const char *s, unsigned *v);
const char *ev_algo_name(unsigned v);
int ev_algo_parse(const char *s, unsigned *v);
const char *ev_proto_name(unsigned v);
int ev_proto_parse(const char *s, unsigned *v);
const char *ev_dtype_name(unsigned v);
int ev_dtype_parse(const char *s, unsigned *v);
unsigned ev_dtype_size(unsigned v); /* bytes per element, 0 unknown */
const char *ev_redop_name(unsigned v);
int ev_redop_parse(const char *s, unsigned *v);
const char *ev_coll_name(unsigned v); /* enum ev_coll */
int ev_coll_parse(const char *s, unsigned *v);
const char *ev_kclass_name(unsigned v);
int ev_kclass_parse(const char *s, unsigned *v);
/* flags <-> "intra|phase_rs|..." ("" for none).  buf >= 160 bytes. */
void ev_flags_format(unsigned flags, char *buf, size_t n);
int ev_flags_parse(const char *s, unsigned *v);

/* ------------------------------------------------------------------ */
/* Little-endian helpers.                                              */

static inline uint16_t ev_le16(const unsigned char *p) { return (uint16_t)(p[0] | p[1] << 8); }
static inline uint32_t ev_le32(const unsigned char *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}
static inline uint64_t ev_le64(const unsigned char *p) { return ev_le32(p) | (uint64_t)ev_le32(p + 4) << 32; }
static inline void ev_put16(unsigned char *p, uint16_t v) { p[0] = (unsigned char)v; p[1] = (unsigned char)(v >> 8); }
static inline void ev_put32(unsigned char *p, uint32_t v)
{
	p[0] = (unsigned char)v; p[1] = (unsigned char)(v >> 8);
	p[2] = (unsigned char)(v >> 16); p[3] = (unsigned char)(v >> 24);
}
static inline void ev_put64(unsigned char *p, uint64_t v) { ev_put32(p, (uint32_t)v); ev_put32(p + 4, (uint32_t)(v >> 32)); }

/* ------------------------------------------------------------------ */
/* Strings.  A string's id is ev_hash64() of its bytes (0 for "").      */

uint64_t ev_hash64(const void *data, size_t len);

typedef struct ev_strtab ev_strtab;
ev_strtab *ev_strtab_new(void); /* NULL on out of memory */
void ev_strtab_free(ev_strtab *t);
/* Intern text; *id receives its id.  EV_OK, EV_ERR_NOMEM, or
 * EV_ERR_COLLISION when another text already has this id. */
int ev_strtab_intern(ev_strtab *t, const char *text, size_t len, uint64_t *id) EV_RESULT_USED;
/* Define a string under a given id (as read from a #str line): checks that
 * the id is the text's hash.  EV_OK, EV_ERR_FORMAT, EV_ERR_COLLISION, EV_ERR_NOMEM. */
int ev_strtab_define(ev_strtab *t, uint64_t id, const char *text, size_t len) EV_RESULT_USED;
/* A reader's record of what its segment defined, without a set of its
 * own: ev_strtab_new_stamp gives a stamp no other caller gets (0 once they
 * run out); ev_strtab_define_in is ev_strtab_define where a string new to
 * the table keeps stamp (*fresh set), so that ev_strtab_stamp(id) ==
 * stamp says the segment defined it.  A string the table already held
 * keeps its old stamp (*fresh 0): the caller remembers that one itself. */
uint32_t ev_strtab_new_stamp(ev_strtab *t);
int ev_strtab_define_in(ev_strtab *t, uint64_t id, const char *text, size_t len, uint32_t stamp,
                        int *fresh) EV_RESULT_USED;
uint32_t ev_strtab_stamp(const ev_strtab *t, uint64_t id); /* 0 when unknown */
/* Text of id, or NULL when unknown; id 0 gives "".  *len may be NULL. */
const char *ev_strtab_get(const ev_strtab *t, uint64_t id, size_t *len);
size_t ev_strtab_count(const ev_strtab *t);
/* Every string of from into t, under the same ids (a table filled on
 * another thread).  EV_OK, EV_ERR_COLLISION, EV_ERR_NOMEM. */
int ev_strtab_absorb(ev_strtab *t, const ev_strtab *from) EV_RESULT_USED;

/* ------------------------------------------------------------------ */
/* Text escaping for text fields: \ -> \\, TAB -> \t, LF -> \n.        */

/* Escape src into dst (capacity n, needs 2*len+1); returns bytes written,
 * NUL-terminated. */
size_t ev_text_escape(const char *src, size_t len, char *dst, size_t n);
/* 1 when text[0, n) starts, after a UTF-8 byte order mark and whitespace,
 * with '{' or '[': JSON, not an ev stream (a reader's message, and
 * ev-stats report, which converts Kineto JSON itself, decide by it). */
int ev_looks_json(const char *text, size_t n);
/* Unescape in place; returns new length, or (size_t)-1 on a bad escape. */
size_t ev_text_unescape(char *s, size_t len);
/* Write s as a quoted JSON string into dst (capacity >= 6*len+3): control
 * characters, quote and backslash escaped, invalid UTF-8 bytes replaced by
 * U+FFFD.  Returns bytes written (not NUL-terminated). */
size_t ev_json_escape(const char *s, size_t len, char *dst, size_t cap);

/* ------------------------------------------------------------------ */
/* Byte input: files or "-", gzip sniffed by magic bytes, big reads.    */

typedef struct ev_input ev_input;
/* Open path ("-" = stdin).  EV_OK or EV_ERR_IO (errno set). */
int ev_input_open(ev_input **in, const char *path) EV_RESULT_USED;
/* Use an already open descriptor (not closed by ev_input_close when own==0). */
int ev_input_fdopen(ev_input **in, int fd, int own, const char *name) EV_RESULT_USED;
/* Read up to n bytes: returns bytes read, 0 at end, or a negative status. */
long ev_input_read(ev_input *in, void *buf, size_t n) EV_RESULT_USED;
/* Next line without its '\n'.  EV_REC (1) with *line and *len set (valid until
 * the next call), EV_EOF at the end, EV_ERR_TRUNCATED for a final line with
 * no newline (*line and *len still set), EV_ERR_LIMIT over the line limit. */
int ev_input_line(ev_input *in, const char **line, size_t *len) EV_RESULT_USED;
/* The next line if it is already buffered, exactly n bytes long and holds no
 * backslash (a record with nothing escaped): one look at its bytes for both
 * (SSE2) instead of a newline search and an escape search.  NULL otherwise, nothing
 * consumed: read it with ev_input_line. */
const char *ev_input_plain_line(ev_input *in, size_t n);
void ev_input_set_line_limit(ev_input *in, size_t max);
size_t ev_input_line_limit(const ev_input *in); /* default EV_LINE_MAX */
/* The longest line (without its LF) a reader takes by default, and so the
 * longest a writer emits (docs/FORMAT.md §9): 64 MiB. */
#define EV_LINE_MAX ((size_t)64 << 20)
/* Read buffer (and gzip input buffer) of inputs opened from now on: default
 * 256 KiB (it stays in the L2 cache, and each 4 KiB of it is a page fault at
 * first touch), clamped to [64 KiB, 16 MiB].  A tool that holds many inputs open
 * at once (ev-merge) makes it smaller; a longer line still grows the buffer
 * up to the line limit. */
void ev_input_set_default_buffer(size_t bytes);
int ev_input_is_gzip(const ev_input *in);
/* After EV_ERR_GZIP from a gzip input (corrupt, truncated or followed by
 * other data): what went wrong
 * and where ("gzip: the file ends inside the compressed data, ..."); NULL
 * when the gzip layer is not the cause. */
const char *ev_input_gzip_error(const ev_input *in);
uint64_t ev_input_offset(const ev_input *in); /* bytes consumed (decompressed) */
/* A plain (not gzip) regular file's size; -1 for any other input (a pipe,
 * a terminal, gzip), which can only be read front to back. */
int64_t ev_input_file_size(const ev_input *in);
/* Such a file's n bytes at offset into dst, on any thread, beside the
 * reads (pread: where they go on is not moved).  Bytes read, 0 at the end,
 * EV_ERR_IO; EV_ERR_ARG for any other input. */
long ev_input_pread(const ev_input *in, void *dst, size_t n, uint64_t offset);
/* Such a file's reads go on at offset (what was buffered is dropped).
 * EV_ERR_IO, EV_ERR_ARG for any other input. */
int ev_input_seek(ev_input *in, uint64_t offset) EV_RESULT_USED;
uint64_t ev_input_lineno(const ev_input *in); /* lines returned so far */
const char *ev_input_name(const ev_input *in); /* "standard input" for "-" */
int ev_input_close(ev_input *in);

/* ------------------------------------------------------------------ */
/* Byte output: buffered, to a temp name renamed on commit, or stdout.  */

typedef struct ev_output ev_output;
/* Open path ("-" or NULL = stdout).  A file is written as
 * "<dir>/.<base>.XXXXXX" and renamed over path by ev_output_close.  A
 * symlink is written through: its target is replaced and keeps its mode.
 * A path that leads to the regular file standard output writes
 * (/dev/stdout, /proc/self/fd/1) is standard output, written in place.
 * EV_ERR_SAMEFILE when path is an input of this process, EV_ERR_SAMEOUT
 * when standard output is a regular file that is one (see below). */
int ev_output_open(ev_output **out, const char *path) EV_RESULT_USED;
/* Buffered writes to a descriptor the caller opened and keeps (standard
 * error, a file it must write in place): no temp name, never closed here;
 * name is for messages. */
int ev_output_fdopen(ev_output **out, int fd, const char *name) EV_RESULT_USED;
int ev_output_write(ev_output *out, const void *buf, size_t n) EV_RESULT_USED;
int ev_output_printf(ev_output *out, const char *fmt, ...) EV_PRINTF(2, 3) EV_RESULT_USED;
int ev_output_putc(ev_output *out, int c) EV_RESULT_USED;
int ev_output_flush(ev_output *out) EV_RESULT_USED;
/* Buffer space for up to n bytes; commit with ev_output_commit(out, used). */
char *ev_output_reserve(ev_output *out, size_t n);
void ev_output_commit(ev_output *out, size_t used);
int ev_output_is_tty(const ev_output *out);
const char *ev_output_name(const ev_output *out); /* "standard output" for "-" */
/* Flush, close, rename.  Returns the first error seen, EV_ERR_PIPE for EPIPE. */
int ev_output_close(ev_output *out) EV_RESULT_USED;
/* Discard: remove the temp file (no rename), close.  Safe on NULL. */
void ev_output_abort(ev_output *out);
/* Remove every temp output still open (for signal handlers; async-safe). */
void ev_output_abort_all_signal(void);
/* Other temporary files to remove if a signal ends the process (the same
 * async-safe removal by ev_output_abort_all_signal).  Returns a slot or -1. */
int ev_temp_register(char *path);
void ev_temp_unregister(int slot);

/* Inputs are sacred.  Every file opened by ev_input_open/ev_input_fdopen is
 * remembered (device and inode, for the life of the process), and so is the
 * file an open ev_output will replace (symlinks followed); opening an output
 * onto a remembered input, or an input that an open output will replace,
 * fails with EV_ERR_SAMEFILE.  Standard output opened as an ev_output is
 * remembered the same way when it is a regular file (`tool x >> x`, as
 * cat's "input file is output file"): EV_ERR_SAMEOUT.  Tools that read files by other means (SQLite)
 * note them with ev_files_note_input(); ev_files_check_output() asks before
 * anything is written. */
int ev_files_note_input(int fd) EV_RESULT_USED;
int ev_files_note_input_path(const char *path) EV_RESULT_USED;
int ev_files_check_output(const char *path) EV_RESULT_USED;

/* ------------------------------------------------------------------ */
/* Metadata from text lines: #src #rank #comm #ring #tree #process      */
/* #thread #meta.                                                       */

struct ev_kv { char *key; char *val; };

struct ev_src_info { uint32_t n; char *label; char *file; struct ev_kv *kv; size_t nkv; };
struct ev_rank_info { uint32_t rank; struct ev_kv *kv; size_t nkv; };
struct ev_comm_info { uint64_t id; uint32_t nranks; int32_t *ranks; /* comm rank i -> global, -1 unknown */
	struct ev_kv *kv; size_t nkv; };
struct ev_ring_info { uint64_t comm; uint32_t channel; uint32_t n; int32_t *order; /* global ranks in ring order */ };
struct ev_tree_node { int32_t rank, up, down[3]; };
struct ev_tree_info { uint64_t comm; uint32_t channel; size_t n; struct ev_tree_node *nodes; };
/* #process: a process of a rank's trace, its name and labels (NULL: not said). */
struct ev_process_info { uint32_t rank, pid; char *name, *labels; };
/* #thread: a CPU thread of a rank's records (their stream), the process
 * it ran in, its name (NULL: not said), and the order of its first line
 * among the #thread lines (0 first). */
struct ev_thread_info { uint32_t rank, tid, pid; char *name; size_t order; };

typedef struct ev_meta ev_meta;
ev_meta *ev_meta_new(void);
void ev_meta_free(ev_meta *m);
/* Parse one text line (without '\n') and add it.  Lines other than the
 * kinds above are ignored (EV_OK).  EV_ERR_FORMAT on a malformed line, and
 * on a #comm line that contradicts an earlier one of the same id (another
 * size, or another global rank for a member both name): then
 * ev_meta_conflict() describes the earlier line. */
int ev_meta_add_line(ev_meta *m, const char *line, size_t len) EV_RESULT_USED;
/* The same, saying where the line is (input name, line number) so that a
 * conflict found later can name it. */
int ev_meta_add_line_at(ev_meta *m, const char *line, size_t len, const char *name, uint64_t lineno) EV_RESULT_USED;
/* After ev_meta_add_line failed on a conflict: "line 3 (#comm 7 nranks=4
 * ...)" or "a.ev line 3 (...)" when name differs from the failing line's;
 * NULL after any other result. */
const char *ev_meta_conflict(const ev_meta *m);
/* Lookups return NULL when absent.  Later lines of the same key merge
 * into (#tree nodes, #rank/#src/#comm key=values, #comm members a line
 * left unknown, -1) or replace earlier ones (#ring). */
const struct ev_src_info *ev_meta_src(const ev_meta *m, uint32_t n);
const struct ev_rank_info *ev_meta_rank(const ev_meta *m, uint32_t rank);
const struct ev_comm_info *ev_meta_comm(const ev_meta *m, uint64_t id);
const struct ev_ring_info *ev_meta_ring(const ev_meta *m, uint64_t comm, uint32_t channel);
const struct ev_tree_info *ev_meta_tree(const ev_meta *m, uint64_t comm, uint32_t channel);
/* #process and #thread lines replace what earlier ones of the same
 * (rank, pid) or (rank, tid) said. */
const struct ev_process_info *ev_meta_process(const ev_meta *m, uint32_t rank, uint32_t pid);
const struct ev_thread_info *ev_meta_thread(const ev_meta *m, uint32_t rank, uint32_t tid);
/* Iteration in order of first appearance. */
size_t ev_meta_nsrc(const ev_meta *m);
const struct ev_src_info *ev_meta_src_at(const ev_meta *m, size_t i);
size_t ev_meta_nrank(const ev_meta *m);
const struct ev_rank_info *ev_meta_rank_at(const ev_meta *m, size_t i);
size_t ev_meta_ncomm(const ev_meta *m);
const struct ev_comm_info *ev_meta_comm_at(const ev_meta *m, size_t i);
size_t ev_meta_nring(const ev_meta *m);
const struct ev_ring_info *ev_meta_ring_at(const ev_meta *m, size_t i);
size_t ev_meta_ntree(const ev_meta *m);
const struct ev_tree_info *ev_meta_tree_at(const ev_meta *m, size_t i);
size_t ev_meta_nprocess(const ev_meta *m);
const struct ev_process_info *ev_meta_process_at(const ev_meta *m, size_t i);
size_t ev_meta_nthread(const ev_meta *m);
const struct ev_thread_info *ev_meta_thread_at(const ev_meta *m, size_t i);
/* `#meta` key=value pairs, later values replace earlier ones. */
const char *ev_meta_get(const ev_meta *m, const char *key);
/* Value of key in a kv list, or NULL. */
const char *ev_kv_get(const struct ev_kv *kv, size_t n, const char *key);

/* ------------------------------------------------------------------ */
/* Reader.                                                              */

typedef struct ev_reader ev_reader;
/* Open an ev stream.  strtab may be shared by several readers and
 * writers (it must outlive them); meta likewise (NULL: the reader makes its
 * own, see ev_reader_meta).  EV_OK or EV_ERR_IO/EV_ERR_NOMEM. */
int ev_reader_open(ev_reader **r, const char *path, ev_strtab *strtab, ev_meta *meta) EV_RESULT_USED;
int ev_reader_from_input(ev_reader **r, ev_input *in, ev_strtab *strtab, ev_meta *meta) EV_RESULT_USED;
/* Next item: EV_REC (rec filled), EV_TEXT (a text line other than
 * #ev/#str/#end: ev_reader_text gives it; it was already added to the
 * meta store), EV_EOF, or an error < 0 (details in ev_reader_errdetail).
 * With ev_reader_skip_text(r, 1) text lines are not returned. */
int ev_read(ev_reader *r, struct ev_rec *rec) EV_RESULT_USED;
void ev_reader_skip_text(ev_reader *r, int skip);
/* Decode only type, flags, name and sig (other fields read as zero): for
 * filters that forward records unchanged with ev_write_escaped. */
void ev_reader_lazy_decode(ev_reader *r, int lazy);
/* Return every line verbatim: EV_TEXT also for #ev, #str and #end lines
 * (still checked and interned).  For ev-view's lossless TSV. */
void ev_reader_raw_text(ev_reader *r, int raw);
void ev_reader_text(const ev_reader *r, const char **line, size_t *len);
/* The escaped line (without '\n') of the last EV_REC, valid until the next
 * ev_read; *line is NULL when the record's size is not EV_RECORD_SIZE (a
 * newer minor version) and so must be re-encoded. */
void ev_reader_record_line(const ev_reader *r, const char **line, size_t *len);
/* A run of records at once, for filters that pass records on unchanged:
 * when the next lines are records of the current version (EV_RECORD_SIZE
 * bytes) that ev_read would accept, up to max of them (at most what is
 * buffered) are checked and taken together: *span and *len cover their
 * lines, each ending in LF, as they appear in the input (valid until the
 * next read), *n counts them and EV_REC is returned (rec is not filled,
 * and ev_reader_raw and ev_reader_record_line say nothing about a run's
 * records: the span is what there is).  Otherwise it is ev_read: the
 * status, with *n = 0 and rec filled for an EV_REC.  A record ev_read would
 * refuse ends the run; the next call reports it. */
int ev_read_run(ev_reader *r, struct ev_rec *rec, size_t max, const char **span, size_t *len,
                uint64_t *n) EV_RESULT_USED;
/* Raw record bytes of the last EV_REC (unescaped, ev_reader_recsize bytes). */
const unsigned char *ev_reader_raw(const ev_reader *r);
size_t ev_reader_recsize(const ev_reader *r);
ev_strtab *ev_reader_strtab(const ev_reader *r);
ev_meta *ev_reader_meta(const ev_reader *r);
/* Header key=value of the current segment ("clock", "origin", ...). */
const char *ev_reader_header(const ev_reader *r, const char *key);
uint64_t ev_reader_recno(const ev_reader *r);  /* records read, 1-based of the last */
uint64_t ev_reader_lineno(const ev_reader *r); /* line number of the last item */
uint32_t ev_reader_segments(const ev_reader *r);
const char *ev_reader_name(const ev_reader *r);
/* 1 when the input is a regular file (plain or gzip): reading it never waits
 * on another process, as a pipe's reader does. */
int ev_reader_from_file(const ev_reader *r);
/* "line 12: record size 80, expected 96" for the last error. */
const char *ev_reader_errdetail(const ev_reader *r);
int ev_reader_close(ev_reader *r);

/* ------------------------------------------------------------------ */
/* Writer.                                                              */

typedef struct ev_writer ev_writer;
/* Open an ev writer on path ("-" = stdout).  strtab resolves the
 * string ids of written records (must outlive the writer). */
int ev_writer_open(ev_writer **w, const char *path, ev_strtab *strtab) EV_RESULT_USED;
/* Set a header key (before the first item of a segment), e.g.
 * ("origin", "unix").  "clock" defaults to "ns". */
int ev_writer_header(ev_writer *w, const char *key, const char *val) EV_RESULT_USED;
/* Write one record; emits #str lines for name/sig first when this segment
 * has not defined them.  EV_ERR_NOSTR when strtab lacks the text.  Every
 * writer refuses a line that readers would (EV_LINE_MAX): EV_ERR_LIMIT
 * for a string whose #str line would be longer, nothing of it written. */
int ev_write(ev_writer *w, const struct ev_rec *rec) EV_RESULT_USED;
/* Write a record given as its escaped line (from ev_reader_record_line)
 * without re-encoding it; rec must be that line's decoded form (its strings
 * are emitted as ev_write does).  The fast path of pass-through filters. */
int ev_write_escaped(ev_writer *w, const struct ev_rec *rec, const char *line, size_t len) EV_RESULT_USED;
/* Write a run of n record lines as ev_read_run gave them (each ending in
 * LF).  Their strings must already be in this segment: a pass-through
 * writes the input's #str lines with ev_write_line_raw as they come, and
 * the input defined each before its first record. */
int ev_write_run(ev_writer *w, const char *span, size_t len, uint64_t n) EV_RESULT_USED;
/* Write a metadata text line (without '\n').  Exact duplicates of lines
 * already written in this output are dropped.  #ev/#str/#end lines are
 * refused with EV_ERR_ARG (use the functions here), lines longer than
 * EV_LINE_MAX with EV_ERR_LIMIT. */
int ev_write_text(ev_writer *w, const char *line, size_t len) EV_RESULT_USED;
/* printf into a text line (no '\n' in fmt), deduplicated as above. */
int ev_write_textf(ev_writer *w, const char *fmt, ...) EV_PRINTF(2, 3) EV_RESULT_USED;
/* Lossless pass-through for ev-view --pack: write a verbatim line of any
 * kind.  "#ev" starts a segment (ending any open one), "#str" is checked and
 * marks its id defined, "#end" ends the segment with the true count. */
int ev_write_line_raw(ev_writer *w, const char *line, size_t len) EV_RESULT_USED;
/* End the current segment (writes "#end N"); the next write starts a new
 * one with the same header keys.  Called by ev_writer_close. */
int ev_writer_end_segment(ev_writer *w) EV_RESULT_USED;
uint64_t ev_writer_count(const ev_writer *w); /* records written in all segments */
ev_output *ev_writer_output(ev_writer *w);
/* End the segment (an empty stream still gets "#ev" and "#end 0"), flush,
 * close, rename.  Returns the first error. */
int ev_writer_close(ev_writer *w) EV_RESULT_USED;
void ev_writer_abort(ev_writer *w);

/* ------------------------------------------------------------------ */
/* Large work buffers (lib/stream/ev_bigmem.c).                          */

/* Reserve `bytes` of zero-filled memory that never moves and is backed only
 * where it is touched, with transparent huge pages advised (one fault per
 * 2 MiB where the kernel allows).  NULL when the address space cannot be
 * had (a `ulimit -v`, strict overcommit): use malloc then.  Release with the
 * same size. */
void *ev_big_reserve(size_t bytes);
void ev_big_release(void *p, size_t bytes);

/* ------------------------------------------------------------------ */
/* External sort of records in bounded memory.                          */

/* The stream's order (docs/FORMAT.md): -1, 0 or 1 as a comes before, with
 * or after b by (ts, rank, stream, seq).  The sorter and ev-merge break
 * its ties by arrival. */
static inline int ev_rec_order_cmp(const struct ev_rec *a, const struct ev_rec *b)
{
	if (a->ts != b->ts)
		return a->ts < b->ts ? -1 : 1;
	if (a->rank != b->rank)
		return a->rank < b->rank ? -1 : 1;
	if (a->stream != b->stream)
		return a->stream < b->stream ? -1 : 1;
	if (a->seq != b->seq)
		return a->seq < b->seq ? -1 : 1;
	return 0;
}

/* Records are ordered by (ts, rank, stream, seq), ties by the order they
 * were added, so detail records stay after their op.  When the buffer of
 * `budget` bytes fills, a sorted run is written to tmpdir ($TMPDIR or
 * /tmp when NULL); runs are removed by ev_sorter_close and by
 * ev_output_abort_all_signal. */
typedef struct ev_sorter ev_sorter;
int ev_sorter_open(ev_sorter **s, uint64_t budget, const char *tmpdir) EV_RESULT_USED;
int ev_sorter_add(ev_sorter *s, const struct ev_rec *rec) EV_RESULT_USED;
/* Write every record in order.  fix, if not NULL, may change a record just
 * before it is written (not its sort key); a non-zero return stops.  With
 * w NULL nothing is written: fix receives the records in order (a sink). */
int ev_sorter_finish(ev_sorter *s, ev_writer *w, int (*fix)(void *ctx, struct ev_rec *rec), void *ctx) EV_RESULT_USED;
uint64_t ev_sorter_count(const ev_sorter *s);
unsigned ev_sorter_runs(const ev_sorter *s);
/* Path of the run file behind the last EV_ERR_IO, for messages. */
const char *ev_sorter_errpath(const ev_sorter *s);
void ev_sorter_close(ev_sorter *s);

/* ------------------------------------------------------------------ */
/* k-way merge of sorted sources (lib/stream/ev_kmerge.c).              */

/* The least of k sources' current records: a binary heap in the stream's
 * order (ev_rec_order_cmp), ties by a number given with each record (the
 * source's index, or its arrival number), so a merge is deterministic.  It
 * keeps a pointer to each source's current record, which the caller
 * overwrites in place with the source's next one.  Used by the sorter's
 * run merge and by ev-merge; memory is k slots, allocated once. */
struct ev_kmerge_slot { const struct ev_rec *rec; uint64_t tie; size_t src; };
struct ev_kmerge { struct ev_kmerge_slot *v; size_t n, cap; };
/* Room for k sources (k may be 0).  EV_OK or EV_ERR_NOMEM. */
int ev_kmerge_init(struct ev_kmerge *h, size_t k) EV_RESULT_USED;
void ev_kmerge_free(struct ev_kmerge *h);
/* Source src, whose current record is *rec.  EV_ERR_ARG when k are in. */
int ev_kmerge_add(struct ev_kmerge *h, size_t src, const struct ev_rec *rec, uint64_t tie) EV_RESULT_USED;
/* The source whose record comes first (h->n > 0). */
static inline size_t ev_kmerge_top(const struct ev_kmerge *h) { return h->v[0].src; }
/* The top source's record now holds its next one, with this tie. */
void ev_kmerge_next(struct ev_kmerge *h, uint64_t tie);
/* The top source has ended. */
void ev_kmerge_drop(struct ev_kmerge *h);

/* ------------------------------------------------------------------ */
/* Time order check used by tools that need order.                      */

struct ev_order { int64_t last_ts; uint64_t recno; int started; };
/* EV_OK, or EV_ERR_ORDER when ts is below the previous one. */
static inline int ev_order_check(struct ev_order *o, int64_t ts)
{
	if (o->started && ts < o->last_ts)
		return EV_ERR_ORDER;
	o->started = 1;
	o->last_ts = ts;
	return EV_OK;
}

/* ------------------------------------------------------------------ */
/* Small utilities.                                                     */

/* v in decimal at p, no terminator; returns the end.  p needs room for
 * 20 bytes.  Inline, as the TSV and JSON writers call it per field. */
static inline char *ev_put_dec(char *p, uint64_t v)
{
	char tmp[20];
	int n = 0;
	do {
		tmp[n++] = (char)('0' + v % 10);
		v /= 10;
	} while (v);
	while (n)
		*p++ = tmp[--n];
	return p;
}

/* Strict number parsing: the whole string, no sign where unsigned,
 * range-checked.  0 or EV_ERR_ARG / EV_ERR_RANGE. */
int ev_parse_u64(const char *s, uint64_t *v);
int ev_parse_i64(const char *s, int64_t *v);
int ev_parse_u32(const char *s, uint32_t *v);
int ev_parse_i32(const char *s, int32_t *v);
int ev_parse_double(const char *s, double *v); /* finite only */
/* Size with optional K/M/G/T suffix (powers of 1024): "64M". */
int ev_parse_size(const char *s, uint64_t *v);
/* Parse a decimal number with an optional fraction and scale it by
 * 10^scale exactly (no floating point): ("12.345", 3) -> 12345.
 * Extra fraction digits beyond scale are rounded half away from zero. */
int ev_parse_decimal_scaled(const char *s, size_t len, unsigned scale, int64_t *v);
uint64_t ev_now_ns(void); /* monotonic clock */
/* The message fmt into err[n] (nothing when err is NULL or n is 0), and
 * rc back: for calls that report through a caller's (err, errlen)
 * buffer, so that `return ev_errf(err, n, EV_ERR_FORMAT, ...)` is one
 * statement. */
int ev_errf(char *err, size_t n, int rc, const char *fmt, ...) EV_PRINTF(4, 5);
/* Sort doubles ascending in place, allocating nothing (lib/stream/sort_f64.c):
 * qsort in glibc copies the whole array first, doubling the peak memory of
 * a large exact sample store at the moment it is read. */
void ev_sort_f64(double *v, size_t n);
/* All n bytes to fd, again after EINTR and short writes.  EV_OK, or
 * EV_ERR_IO with errno set. */
int ev_write_all(int fd, const void *p, size_t n);

/* Messages (lib/stream/ev_say.c).  The library prints nothing: what a
 * user should read goes, when it arises, to a function of the caller's, so
 * errors, warnings and notes keep their order (ev_cli_say prints them the
 * tools' way).  A function that says its failure returns its status too. */
enum ev_say_kind { EV_SAY_ERROR = 0, EV_SAY_WARN = 1, EV_SAY_NOTE = 2 };
struct ev_say { void (*fn)(void *ctx, enum ev_say_kind kind, const char *text); void *ctx; };
/* printf to s->fn, the whole text however long (nothing when fn is NULL). */
void ev_say(const struct ev_say *s, enum ev_say_kind kind, const char *fmt, ...) EV_PRINTF(3, 4);
/* The error "NAME: why" for a file: strerror(errno) for EV_ERR_IO with
 * errno set, else ev_strerror(status); nothing for EV_ERR_PIPE (whoever
 * read it went away). */
void ev_say_file(const struct ev_say *s, const char *name, int status);
/* A reader's error: "NAME: detail" (ev_reader_errdetail, else
 * ev_strerror); nothing for EV_ERR_PIPE. */
void ev_say_reader(const struct ev_say *s, const ev_reader *r, int status);

/* Growable array of fixed-size elements (no per-record malloc: grows
 * geometrically). */
struct ev_vec { void *data; size_t len, cap, elem; };
void ev_vec_init(struct ev_vec *v, size_t elem);
void *ev_vec_push(struct ev_vec *v); /* pointer to a new zeroed slot, NULL on ENOMEM */
void ev_vec_free(struct ev_vec *v);

/* Open-addressing map from 64-bit keys (any value except 0) to 64-bit values. */
struct ev_map { uint64_t *keys; uint64_t *vals; size_t cap, len; };
void ev_map_init(struct ev_map *m);
int ev_map_put(struct ev_map *m, uint64_t key, uint64_t val) EV_RESULT_USED; /* EV_OK/EV_ERR_NOMEM/EV_ERR_ARG(key 0) */
uint64_t *ev_map_get(const struct ev_map *m, uint64_t key); /* NULL if absent */
void ev_map_free(struct ev_map *m);

#endif /* EV_STREAM_H */
