/* SPDX-License-Identifier: MIT */
/*
 * nsys2ev - convert Nsight Systems SQLite exports to one ev stream
 *
 * Two passes.  The first runs small queries on each file (time base, hosts,
 * GPU processes, NCCL communicator, ring and tree markers, payload schemas)
 * and fixes the global ranks.  The second steps one ORDER BY start cursor per
 * table and file and merges them by time, so records are written as rows
 * arrive: memory holds the per-GPU NCCL operations that wait for their kernel
 * and caches keyed by distinct names, never the events themselves.
 */
#include <dirent.h>
#include <errno.h>
#include <getopt.h>
#include <regex.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ev.h"
#include "ev/nccl.h"

/* ---- options and state ---------------------------------------------- */

struct opts {
	struct ev_cli cli;
	int api, verbose;
	const char *node_regex;
	const char *rank_map;
	char **inputs;
	int ninputs;
};

enum cur_kind { CUR_KERNEL, CUR_MEMCPY, CUR_MEMSET, CUR_NVTX, CUR_RUNTIME, NCUR };
static const char *const cur_table[NCUR] = {
	"CUPTI_ACTIVITY_KIND_KERNEL", "CUPTI_ACTIVITY_KIND_MEMCPY", "CUPTI_ACTIVITY_KIND_MEMSET",
	"NVTX_EVENTS", "CUPTI_ACTIVITY_KIND_RUNTIME",
};

/* Payload schema entries we decode (NVTX_PAYLOAD_SCHEMA_ENTRIES), by name. */
enum pf { PF_COMM, PF_SIZE, PF_PEER, PF_ROOT, PF_REDOP, PF_NRANKS, PF_RANK, PF_DEVICE, NPF };
struct schema {
	int64_t domain, id;
	uint64_t size;
	int16_t off[NPF];  /* -1 = absent */
	uint8_t width[NPF];
};

struct file {
	char *path;        /* as given (for messages) */
	char *dbpath;      /* the file SQLite opens (a temp copy for gzip input) */
	int temp_slot;
	sqlite3 *db;
	int64_t offset;    /* added to every time stamp */
	int have_utc;
	char host[128], node[128];
	char version[64], schema_ver[32];
	int annotated;     /* annotated-NCCL markers present */
	int has_blobs;
	int64_t nccl_domain; /* -1 unknown */
	int has_runtime_launch;
	sqlite3_stmt *cur[NCUR];
	sqlite3_stmt *str_stmt;
	struct schema *schemas;
	size_t nschemas;
	uint64_t rows[NCUR];
	uint64_t skipped_nopid, skipped_bad;
};

/* One NCCL operation from its API call, waiting for its kernel. */
struct chan { uint64_t a, b, c, d; };
struct op {
	uint64_t unit;
	uint8_t kind, p2p, redop, algo, proto, chunk_steps, slice_steps, have_info, emitted, dtype_hint;
	uint16_t nthreads;
	uint32_t type_size, step_size, seq;
	int32_t peer;       /* comm rank of root or peer, -1 */
	uint64_t comm;      /* commHash as called */
	uint64_t bytes;     /* data_size as called */
	uint64_t stream_ptr;
	uint64_t name;      /* API function name string id */
	uint64_t chan_sum;  /* sum of workCount of channel marks */
	uint32_t nchan;
	struct chan *chans; /* capacity MAXCH, allocated once per slot */
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

struct thr { uint32_t tid; int depth; uint64_t group_unit; int group_open; };

struct gpu {
	int file;
	uint32_t pid;
	int64_t device;
	int64_t rank;
	uint64_t kernels;
	int64_t max_grid;
	/* pending ops, absolute counters into a ring of OPCAP */
	struct op *ops;
	uint64_t op_head, op_tail;
	struct unit *units;
	uint64_t unit_head, unit_tail, next_unit;
	struct thr *thr;
	size_t nthr;
	uint64_t recent_corr[64];
	unsigned recent_pos;
	struct ev_map ptr_stream;  /* stream pointer -> streamId + 1 */
	struct ev_map stream_ptr;  /* streamId + 1 -> stream pointer */
	uint64_t matched, fallback, unmatched_ops, kernels_alone;
};

struct comm_member { int gpu; int32_t rank; };
struct comm {
	uint64_t id;
	uint32_t nranks;
	int *gpu_of;          /* comm rank -> gpu index, -1 */
	int synthesized;
	int32_t *ring_next;   /* [MAXCH][nranks], -2 unknown */
	int32_t *tree;        /* [MAXCH][nranks][4] up,d0,d1,d2; -2 unknown */
	uint32_t nch_ring, nch_tree;
};

struct state {
	struct opts *o;
	ev_strtab *st;
	ev_writer *w;
	struct file *files;
	int nfiles;
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
	regex_t node_re;
	int have_node_re;
	char *buf;
	size_t bufcap;
	uint64_t names_fn[16];
};

static void usage(FILE *f)
{
	fputs(
"Usage: nsys2ev [options] FILE|DIR...\n"
"Convert Nsight Systems SQLite exports (nsys export --type sqlite; .sqlite or\n"
".sqlite.gz, directories searched for them) to one ev stream in time order.\n"
"Every GPU process is a rank; all files are merged by time.\n"
"\n"
"Records: every kernel, memcpy and memset; NVTX ranges and marks; runtime and\n"
"driver calls with --api; for every NCCL operation a coll or p2p record on the\n"
"GPU timeline (its kernel's start and duration) with kind, bytes, dtype, redop,\n"
"root or peer, communicator, seq, algo, proto, channels and threads.  With the\n"
"annotated NCCL of the ATLAHS toolchain also chunkSteps, sliceSteps, stepSize\n"
"and one chan record per channel.  #rank, #comm, #ring and #tree lines\n"
"describe the job.\n"
"\n"
"Options:\n"
"  -o, --output=FILE      write to FILE (via a temporary name) [stdout]\n"
"      --api              also write runtime and driver API calls\n"
"      --node-regex=RE    node name from the file path: the first group of the\n"
"                         POSIX extended RE (default: nid(\\d+), then\n"
"                         profile_<job>_<node>_<rank>.sqlite, then the host)\n"
"      --rank-map=FILE    fix ranks: lines 'NODE PID RANK' (NODE may also be\n"
"                         the file's host name or base name); '#' comments\n"
"  -f, --force            write binary output to a terminal\n"
"  -v, --verbose          per-file and per-rank counts on stderr: rows,\n"
"                         NCCL operations matched by correlation id, by the\n"
"                         time fallback, and unmatched\n"
"  -q, --quiet            no progress or warnings\n"
"  -h, --help             show this help and exit\n"
"  -V, --version          show version and exit\n"
"\n"
"Ranks: a GPU's rank in the largest communicator that covers it; GPUs in no\n"
"communicator follow in (node, pid) order.  Time: UTC ns (origin=unix) when\n"
"every file has TARGET_INFO_SESSION_START_TIME, else the trace clock.\n"
"\n"
"Exit status:\n"
"  0  success\n"
"  1  data or I/O error (not SQLite, not an nsys export, truncated or\n"
"     corrupt database, unreadable marker, write error)\n"
"  2  usage error\n"
"\n"
"Example:\n"
"  nsys2ev run/*.sqlite | ev-view --type=coll -c rank,ts,dur,op,bytes,seq\n",
	f);
}

/* ---- small helpers -------------------------------------------------- */

static uint64_t key3(uint64_t a, uint64_t b, uint64_t c)
{
	unsigned char buf[24];
	ev_put64(buf, a);
	ev_put64(buf + 8, b);
	ev_put64(buf + 16, c);
	uint64_t h = ev_hash64(buf, sizeof buf);
	return h ? h : 1;
}

static int intern(struct state *s, const char *text, size_t len, uint64_t *id)
{
	return ev_strtab_intern(s->st, text, len, id);
}

static int intern_z(struct state *s, const char *text, uint64_t *id)
{
	return intern(s, text, strlen(text), id);
}

static const char *col_text(sqlite3_stmt *st, int i)
{
	const unsigned char *t = sqlite3_column_text(st, i);
	return t ? (const char *)t : NULL;
}

static int has_prefix(const char *s, const char *p)
{
	return strncmp(s, p, strlen(p)) == 0;
}

/* Number after the word `key` in a marker ("... data_size 4096, ..."): the
 * word must start the text or follow a space or comma.  Decimal, negative or
 * 0x hex; "(nil)" reads as 0.  Returns 0 when found. */
static int kv_get(const char *text, const char *key, int64_t *v)
{
	size_t kl = strlen(key);
	for (const char *p = strstr(text, key); p; p = strstr(p + 1, key)) {
		if (p != text && p[-1] != ' ' && p[-1] != ',')
			continue;
		const char *q = p + kl;
		if (*q != ' ' && *q != ':')
			continue;
		while (*q == ' ' || *q == ':')
			q++;
		if (strncmp(q, "(nil)", 5) == 0) {
			*v = 0;
			return 0;
		}
		char *end;
		errno = 0;
		if (q[0] == '0' && (q[1] == 'x' || q[1] == 'X')) {
			unsigned long long u = strtoull(q + 2, &end, 16);
			if (end == q + 2 || errno)
				return -1;
			*v = (int64_t)u;
		} else {
			long long x = strtoll(q, &end, 10);
			if (end == q || errno)
				return -1;
			*v = x;
		}
		return 0;
	}
	return -1;
}

static uint32_t pid_of(int64_t global)
{
	return (uint32_t)(((uint64_t)global >> 24) & 0xFFFFFF);
}

/* ---- NCCL vocabulary ------------------------------------------------ */

/* API function name ("AllReduce" after "nccl") -> collective. */
static unsigned api_kind(const char *fn, size_t n, int *p2p)
{
	static const struct { const char *name; unsigned op; int p2p; } map[] = {
		{ "AllReduce", EV_OP_ALLREDUCE, 0 }, { "AllGather", EV_OP_ALLGATHER, 0 },
		{ "ReduceScatter", EV_OP_REDUCESCATTER, 0 }, { "Broadcast", EV_OP_BROADCAST, 0 },
		{ "Bcast", EV_OP_BROADCAST, 0 }, { "Reduce", EV_OP_REDUCE, 0 },
		{ "AlltoAll", EV_OP_ALLTOALL, 0 }, { "AllToAll", EV_OP_ALLTOALL, 0 },
		{ "Gather", EV_OP_GATHER, 0 }, { "Scatter", EV_OP_SCATTER, 0 },
		{ "Send", EV_OP_SEND, 1 }, { "Recv", EV_OP_RECV, 1 },
	};
	for (size_t i = 0; i < sizeof map / sizeof map[0]; i++)
		if (strlen(map[i].name) == n && memcmp(map[i].name, fn, n) == 0) {
			*p2p = map[i].p2p;
			return map[i].op;
		}
	return EV_OP_UNKNOWN;
}

static unsigned dtype_from_size(uint32_t ts)
{
	switch (ts) {
	case 1: return EV_DT_INT8;
	case 2: return EV_DT_FLOAT16;
	case 4: return EV_DT_FLOAT32;
	case 8: return EV_DT_FLOAT64;
	default: return EV_DT_UNKNOWN;
	}
}

/* ---- opening a file defensively ------------------------------------- */

/* Copy a gzip-compressed input to a temporary file SQLite can open. */
static int gunzip_to_temp(struct state *s, struct file *f, ev_input *in, const unsigned char *head, long nhead)
{
	const char *dir = getenv("TMPDIR");
	size_t n = strlen(dir && *dir ? dir : "/tmp") + 32;
	f->dbpath = malloc(n);
	if (!f->dbpath)
		return ev_cli_error(&s->o->cli, "out of memory");
	snprintf(f->dbpath, n, "%s/nsys2ev.XXXXXX", dir && *dir ? dir : "/tmp");
	int fd = mkstemp(f->dbpath);
	if (fd < 0) {
		int e = errno;
		ev_cli_error(&s->o->cli, "%s: cannot create a temporary file: %s", f->dbpath, strerror(e));
		free(f->dbpath);
		f->dbpath = NULL;
		return 1;
	}
	f->temp_slot = ev_temp_register(f->dbpath);
	FILE *out = fdopen(fd, "wb");
	if (!out) {
		close(fd);
		return ev_cli_error(&s->o->cli, "%s: %s", f->dbpath, strerror(errno));
	}
	int status = 0, wfail = nhead > 0 && fwrite(head, 1, (size_t)nhead, out) != (size_t)nhead;
	char *buf = malloc(1 << 16);
	long r = 0;
	while (!wfail && buf && (r = ev_input_read(in, buf, 1 << 16)) > 0)
		wfail = fwrite(buf, 1, (size_t)r, out) != (size_t)r;
	free(buf);
	wfail |= fclose(out) != 0;
	if (!buf)
		status = ev_cli_error(&s->o->cli, "out of memory");
	else if (wfail)
		status = ev_cli_error(&s->o->cli, "%s: cannot write a temporary copy: %s", f->dbpath, strerror(errno));
	else if (r < 0)
		status = ev_cli_error(&s->o->cli, "%s: %s", f->path, r == EV_ERR_IO ? strerror(errno) : ev_strerror((int)r));
	return status;
}

static void file_close(struct file *f)
{
	for (int k = 0; k < NCUR; k++)
		sqlite3_finalize(f->cur[k]);
	sqlite3_finalize(f->str_stmt);
	if (f->db)
		sqlite3_close(f->db);
	f->db = NULL;
	if (f->dbpath && f->dbpath != f->path) {
		unlink(f->dbpath);
		if (f->temp_slot >= 0)
			ev_temp_unregister(f->temp_slot);
		free(f->dbpath);
	}
	f->dbpath = NULL;
	free(f->schemas);
	f->schemas = NULL;
}

/* Check the SQLite header and size, then open read-only with every feature a
 * crafted file could abuse turned off. */
static int file_open(struct state *s, struct file *f)
{
	struct opts *o = s->o;
	ev_input *in;
	unsigned char head[100];
	int rc = ev_input_open(&in, f->path);
	f->temp_slot = -1;
	if (rc)
		return ev_cli_error(&o->cli, "%s: %s", f->path, strerror(errno));
	long got = 0, r;
	while (got < (long)sizeof head && (r = ev_input_read(in, head + got, sizeof head - (size_t)got)) > 0)
		got += r;
	if (got >= 0 && ev_input_is_gzip(in)) {
		int st = gunzip_to_temp(s, f, in, head, got);
		ev_input_close(in);
		if (st)
			return st;
	} else {
		ev_input_close(in);
		f->dbpath = f->path;
	}
	if (got == 0)
		return ev_cli_error(&o->cli, "%s: empty file, not an SQLite database", f->path);
	if (got < 100 || memcmp(head, "SQLite format 3", 16) != 0)
		return ev_cli_error(&o->cli, "%s: not an SQLite database (nsys export --type sqlite)", f->path);
	struct stat sb;
	if (stat(f->dbpath, &sb) != 0)
		return ev_cli_error(&o->cli, "%s: %s", f->path, strerror(errno));
	uint32_t psize = (uint32_t)head[16] << 8 | head[17];
	if (psize == 1)
		psize = 65536;
	uint32_t pages = (uint32_t)head[28] << 24 | (uint32_t)head[29] << 16 | (uint32_t)head[30] << 8 | head[31];
	int count_valid = memcmp(head + 24, head + 92, 4) == 0 && pages > 0;
	if (count_valid && (uint64_t)sb.st_size < (uint64_t)psize * pages)
		return ev_cli_error(&o->cli, "%s: truncated SQLite database (%lld of %llu bytes)", f->path,
		                    (long long)sb.st_size, (unsigned long long)psize * pages);
	rc = sqlite3_open_v2(f->dbpath, &f->db, SQLITE_OPEN_READONLY | SQLITE_OPEN_NOMUTEX, NULL);
	if (rc != SQLITE_OK)
		return ev_cli_error(&o->cli, "%s: cannot open: %s", f->path, f->db ? sqlite3_errmsg(f->db) : sqlite3_errstr(rc));
	sqlite3_db_config(f->db, SQLITE_DBCONFIG_DEFENSIVE, 1, (int *)NULL);
	sqlite3_db_config(f->db, SQLITE_DBCONFIG_TRUSTED_SCHEMA, 0, (int *)NULL);
	sqlite3_db_config(f->db, SQLITE_DBCONFIG_ENABLE_LOAD_EXTENSION, 0, (int *)NULL);
	sqlite3_db_config(f->db, SQLITE_DBCONFIG_ENABLE_TRIGGER, 0, (int *)NULL);
#ifdef SQLITE_DBCONFIG_ENABLE_VIEW
	sqlite3_db_config(f->db, SQLITE_DBCONFIG_ENABLE_VIEW, 0, (int *)NULL);
#endif
	sqlite3_limit(f->db, SQLITE_LIMIT_LENGTH, 256 << 20);
	/* A quick structural check turns a damaged file into one clear error
	 * before any output. */
	sqlite3_stmt *st = NULL;
	rc = sqlite3_prepare_v2(f->db, "SELECT count(*) FROM sqlite_master", -1, &st, NULL);
	if (rc == SQLITE_OK)
		rc = sqlite3_step(st);
	sqlite3_finalize(st);
	if (rc != SQLITE_ROW)
		return ev_cli_error(&o->cli, "%s: not a readable SQLite database: %s", f->path, sqlite3_errmsg(f->db));
	return 0;
}

static int table_exists(struct file *f, const char *table)
{
	sqlite3_stmt *st;
	int yes = 0;
	if (sqlite3_prepare_v2(f->db, "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?", -1, &st, NULL) != SQLITE_OK)
		return 0;
	sqlite3_bind_text(st, 1, table, -1, SQLITE_STATIC);
	yes = sqlite3_step(st) == SQLITE_ROW;
	sqlite3_finalize(st);
	return yes;
}

static int column_exists(struct file *f, const char *table, const char *col)
{
	sqlite3_stmt *st;
	int yes = 0;
	if (sqlite3_prepare_v2(f->db, "SELECT 1 FROM pragma_table_info(?) WHERE name = ?", -1, &st, NULL) != SQLITE_OK)
		return 0;
	sqlite3_bind_text(st, 1, table, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 2, col, -1, SQLITE_STATIC);
	yes = sqlite3_step(st) == SQLITE_ROW;
	sqlite3_finalize(st);
	return yes;
}

/* "col" if the column exists, else "NULL", appended to a SELECT list. */
static void add_col(char *sql, size_t cap, struct file *f, const char *table, const char *col, const char *alt)
{
	size_t n = strlen(sql);
	snprintf(sql + n, cap - n, "%s%s", n && sql[n - 1] != ' ' ? ", " : "",
	         column_exists(f, table, col) ? col : alt ? alt : "NULL");
}

static int sql_error(struct state *s, struct file *f, const char *what)
{
	return ev_cli_error(&s->o->cli, "%s: %s: %s", f->path, what, sqlite3_errmsg(f->db));
}

/* Run a query and call fn for each row; SQLite errors are data errors. */
static int query_rows(struct state *s, struct file *f, const char *sql, const char *what,
                      int (*fn)(struct state *, struct file *, sqlite3_stmt *, void *), void *ctx)
{
	sqlite3_stmt *st;
	if (sqlite3_prepare_v2(f->db, sql, -1, &st, NULL) != SQLITE_OK)
		return sql_error(s, f, what);
	int rc, status = 0;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW)
		if ((status = fn(s, f, st, ctx)) != 0)
			break;
	if (!status && rc != SQLITE_DONE)
		status = sql_error(s, f, what);
	sqlite3_finalize(st);
	return status;
}

/* ---- registries: GPUs, communicators, strings ------------------------ */

static struct gpu *gpu_find(struct state *s, int file, uint32_t pid)
{
	uint64_t *v = ev_map_get(&s->gpu_idx, key3((uint64_t)file, pid, 0x67707500));
	return v ? &s->gpus[*v - 1] : NULL;
}

static struct gpu *gpu_add(struct state *s, int file, uint32_t pid)
{
	struct gpu *g = gpu_find(s, file, pid);
	if (g)
		return g;
	if (s->ngpus == s->capgpus) {
		size_t cap = s->capgpus ? 2 * s->capgpus : 16;
		struct gpu *n = realloc(s->gpus, cap * sizeof *n);
		if (!n)
			return NULL;
		s->gpus = n;
		s->capgpus = cap;
	}
	g = &s->gpus[s->ngpus];
	memset(g, 0, sizeof *g);
	g->file = file;
	g->pid = pid;
	g->device = -1;
	g->rank = -1;
	ev_map_init(&g->ptr_stream);
	ev_map_init(&g->stream_ptr);
	if (ev_map_put(&s->gpu_idx, key3((uint64_t)file, pid, 0x67707500), s->ngpus + 1))
		return NULL;
	s->ngpus++;
	return g;
}

static struct comm *comm_find(struct state *s, uint64_t id)
{
	uint64_t *v = ev_map_get(&s->comm_idx, id ? id : 1);
	return v ? &s->comms[*v - 1] : NULL;
}

static struct comm *comm_add(struct state *s, uint64_t id, uint32_t nranks)
{
	struct comm *c = comm_find(s, id);
	if (c)
		return c->nranks == nranks ? c : NULL;
	if (nranks == 0 || nranks > (1u << 20))
		return NULL;
	if (s->ncomms == s->capcomms) {
		size_t cap = s->capcomms ? 2 * s->capcomms : 8;
		struct comm *n = realloc(s->comms, cap * sizeof *n);
		if (!n)
			return NULL;
		s->comms = n;
		s->capcomms = cap;
	}
	c = &s->comms[s->ncomms];
	memset(c, 0, sizeof *c);
	c->id = id;
	c->nranks = nranks;
	c->gpu_of = malloc(nranks * sizeof *c->gpu_of);
	if (!c->gpu_of)
		return NULL;
	for (uint32_t i = 0; i < nranks; i++)
		c->gpu_of[i] = -1;
	if (ev_map_put(&s->comm_idx, id ? id : 1, s->ncomms + 1))
		return NULL;
	s->ncomms++;
	return c;
}

/* Global comm id of (file, pid, commHash) as an API call names it. */
static uint64_t comm_id_of(struct state *s, int file, uint32_t pid, uint64_t hash)
{
	uint64_t *v = ev_map_get(&s->comm_alias, key3((uint64_t)file, pid, hash));
	return v ? *v : hash;
}

/* Global rank of comm rank r of comm id, or -1. */
static int32_t comm_global(struct state *s, uint64_t id, int64_t r)
{
	struct comm *c = comm_find(s, id);
	if (!c || r < 0 || r >= c->nranks || c->gpu_of[r] < 0)
		return -1;
	return (int32_t)s->gpus[c->gpu_of[r]].rank;
}

/* ev string id of StringIds(id) in file f, cached. */
static int str_of(struct state *s, struct file *f, int fi, int64_t sid, uint64_t *out)
{
	uint64_t key = key3((uint64_t)fi, (uint64_t)sid, 0x737472);
	uint64_t *v = ev_map_get(&s->strs, key);
	if (v) {
		*out = *v;
		return 0;
	}
	if (!f->str_stmt &&
	    sqlite3_prepare_v2(f->db, "SELECT value FROM StringIds WHERE id = ?", -1, &f->str_stmt, NULL) != SQLITE_OK)
		return sql_error(s, f, "StringIds");
	sqlite3_reset(f->str_stmt);
	sqlite3_bind_int64(f->str_stmt, 1, sid);
	int rc = sqlite3_step(f->str_stmt);
	const char *t = "";
	size_t n = 0;
	if (rc == SQLITE_ROW) {
		t = col_text(f->str_stmt, 0);
		n = t ? (size_t)sqlite3_column_bytes(f->str_stmt, 0) : 0;
		if (!t)
			t = "";
	} else if (rc != SQLITE_DONE) {
		return sql_error(s, f, "StringIds");
	}
	if (intern(s, t, n, out) != EV_OK)
		return ev_cli_error(&s->o->cli, "out of memory");
	if (ev_map_put(&s->strs, key, *out))
		return ev_cli_error(&s->o->cli, "out of memory");
	return 0;
}

/* ---- pass 1: what each file holds ------------------------------------ */

static int row_meta(struct state *s, struct file *f, sqlite3_stmt *st, void *ctx)
{
	(void)s;
	(void)ctx;
	const char *k = col_text(st, 0), *v = col_text(st, 1);
	if (!k || !v)
		return 0;
	if (!strcmp(k, "EXPORT_PRODUCT_VERSION"))
		snprintf(f->version, sizeof f->version, "%s", v);
	else if (!strcmp(k, "EXPORT_SCHEMA_VERSION"))
		snprintf(f->schema_ver, sizeof f->schema_ver, "%s", v);
	else if (!strcmp(k, "EXPORT_PARAM_INCLUDE_BLOBS"))
		f->has_blobs = !strcmp(v, "true") || !strcmp(v, "1");
	else if (!strcmp(k, "EXPORT_PARAM_TIME_NORMALIZE"))
		f->offset = !strcmp(v, "true") || !strcmp(v, "1") ? 1 : 0; /* flag until the start time is read */
	return 0;
}

static int row_start_time(struct state *s, struct file *f, sqlite3_stmt *st, void *ctx)
{
	(void)s;
	(void)ctx;
	if (f->have_utc || sqlite3_column_type(st, 0) == SQLITE_NULL)
		return 0;
	int64_t utc = sqlite3_column_int64(st, 0), sys = sqlite3_column_int64(st, 1);
	int normalized = f->offset == 1;
	f->offset = normalized ? utc : utc - sys;
	f->have_utc = 1;
	return 0;
}

static int row_host(struct state *s, struct file *f, sqlite3_stmt *st, void *ctx)
{
	(void)s;
	(void)ctx;
	const char *v = col_text(st, 0);
	if (v && !f->host[0])
		snprintf(f->host, sizeof f->host, "%s", v);
	return 0;
}

static int row_gpu(struct state *s, struct file *f, sqlite3_stmt *st, void *ctx)
{
	int fi = (int)(f - s->files);
	int64_t gp = sqlite3_column_int64(st, 0), dev = sqlite3_column_int64(st, 1);
	int64_t n = sqlite3_column_int64(st, 2);
	(void)ctx;
	struct gpu *g = gpu_add(s, fi, pid_of(gp));
	if (!g)
		return ev_cli_error(&s->o->cli, "out of memory");
	/* The device with the most kernels names the GPU of a process. */
	if (g->device < 0 || (int64_t)g->kernels < n) {
		g->device = dev;
		g->kernels = (uint64_t)n;
	}
	return 0;
}

static int row_grid(struct state *s, struct file *f, sqlite3_stmt *st, void *ctx)
{
	(void)ctx;
	struct gpu *g = gpu_find(s, (int)(f - s->files), pid_of(sqlite3_column_int64(st, 0)));
	if (g)
		g->max_grid = sqlite3_column_int64(st, 1);
	return 0;
}

static int entry_field(const char *name)
{
	static const char *const names[NPF][3] = {
		{ "NCCL communicator ID", NULL, NULL }, { "Message size [bytes]", "Bytes", "Message size" },
		{ "Peer rank", "Peer", NULL }, { "Root", "Root rank", NULL }, { "Reduction operation", NULL, NULL },
		{ "No. of ranks", "Number of ranks", NULL }, { "Rank", NULL, NULL }, { "CUDA device", NULL, NULL },
	};
	for (int i = 0; i < NPF; i++)
		for (int k = 0; k < 3 && names[i][k]; k++)
			if (!strcmp(name, names[i][k]))
				return i;
	return -1;
}

static unsigned entry_width(int64_t type)
{
	switch (type) {
	case 18: case 22: case 3: case 4: case 8: case 9: return 8; /* (u)int64, size_t, (u)long */
	case 1: case 2: case 10: case 11: return 1;
	case 12: case 13: return 2;
	default: return 4; /* int, (u)int32, enums (>= 2^24) */
	}
}

/* NVTX_PAYLOAD_SCHEMA_ENTRIES rows, ordered by schema and index. */
static int row_entry(struct state *s, struct file *f, sqlite3_stmt *st, void *ctx)
{
	(void)ctx;
	int64_t dom = sqlite3_column_int64(st, 0), sid = sqlite3_column_int64(st, 1);
	const char *name = col_text(st, 3);
	int64_t type = sqlite3_column_int64(st, 4);
	struct schema *sc = NULL;
	for (size_t i = 0; i < f->nschemas; i++)
		if (f->schemas[i].domain == dom && f->schemas[i].id == sid)
			sc = &f->schemas[i];
	if (!sc) {
		struct schema *n = realloc(f->schemas, (f->nschemas + 1) * sizeof *n);
		if (!n)
			return ev_cli_error(&s->o->cli, "out of memory");
		f->schemas = n;
		sc = &n[f->nschemas++];
		memset(sc, 0, sizeof *sc);
		sc->domain = dom;
		sc->id = sid;
		for (int k = 0; k < NPF; k++)
			sc->off[k] = -1;
		sc->size = 0; /* running end offset until the schema size is known */
	}
	unsigned w = entry_width(type);
	int64_t off = sqlite3_column_type(st, 5) == SQLITE_NULL ? -1 : sqlite3_column_int64(st, 5);
	if (off < 0) /* NULL: the natural position after the previous entry */
		off = (int64_t)((sc->size + w - 1) / w * w);
	if (off > 4096)
		return 0;
	sc->size = (uint64_t)off + w;
	int k = name ? entry_field(name) : -1;
	if (k >= 0 && sc->off[k] < 0) {
		sc->off[k] = (int16_t)off;
		sc->width[k] = (uint8_t)w;
		if ((k == PF_COMM || k == PF_SIZE) && f->nccl_domain < 0)
			f->nccl_domain = dom;
	}
	return 0;
}

/* Decode an NCCL payload blob: a 32-byte header (domain, schema id, payload
 * size, ...) then the payload.  Fills vals/mask; returns 0 if decoded. */
static int decode_payload(const struct file *f, const unsigned char *b, size_t n, int64_t vals[NPF], unsigned *mask)
{
	*mask = 0;
	if (!b || n < 32)
		return -1;
	int64_t dom = (int64_t)ev_le64(b), sid = (int64_t)ev_le64(b + 8);
	uint64_t psize = ev_le64(b + 16);
	if (psize > n - 32)
		psize = n - 32;
	const struct schema *sc = NULL;
	for (size_t i = 0; i < f->nschemas; i++)
		if (f->schemas[i].domain == dom && f->schemas[i].id == sid)
			sc = &f->schemas[i];
	if (!sc)
		return -1;
	const unsigned char *p = b + 32;
	for (int k = 0; k < NPF; k++) {
		if (sc->off[k] < 0 || (uint64_t)sc->off[k] + sc->width[k] > psize)
			continue;
		const unsigned char *q = p + sc->off[k];
		switch (sc->width[k]) {
		case 8: vals[k] = (int64_t)ev_le64(q); break;
		case 2: vals[k] = (int16_t)ev_le16(q); break;
		case 1: vals[k] = (int8_t)q[0]; break;
		default: vals[k] = (int32_t)ev_le32(q); break;
		}
		*mask |= 1u << k;
	}
	return 0;
}

/* Blob bytes of a column: a BLOB, or hex text as some front ends write it. */
static const unsigned char *col_blob(struct state *s, sqlite3_stmt *st, int i, size_t *n)
{
	int type = sqlite3_column_type(st, i);
	if (type == SQLITE_BLOB) {
		*n = (size_t)sqlite3_column_bytes(st, i);
		return sqlite3_column_blob(st, i);
	}
	if (type != SQLITE_TEXT)
		return NULL;
	const char *t = col_text(st, i);
	size_t len = (size_t)sqlite3_column_bytes(st, i);
	if (!t || len < 64 || len % 2 || len / 2 > s->bufcap) {
		if (t && len >= 64 && len % 2 == 0 && len / 2 > s->bufcap) {
			char *nb = realloc(s->buf, len / 2);
			if (!nb)
				return NULL;
			s->buf = nb;
			s->bufcap = len / 2;
		} else {
			return NULL;
		}
	}
	for (size_t k = 0; k < len; k += 2) {
		int hi = t[k], lo = t[k + 1];
		hi = hi >= '0' && hi <= '9' ? hi - '0' : hi >= 'a' && hi <= 'f' ? hi - 'a' + 10 : hi >= 'A' && hi <= 'F' ? hi - 'A' + 10 : -1;
		lo = lo >= '0' && lo <= '9' ? lo - '0' : lo >= 'a' && lo <= 'f' ? lo - 'a' + 10 : lo >= 'A' && lo <= 'F' ? lo - 'A' + 10 : -1;
		if (hi < 0 || lo < 0)
			return NULL;
		s->buf[k / 2] = (char)(hi << 4 | lo);
	}
	*n = len / 2;
	return (const unsigned char *)s->buf;
}

/* pid of an NVTX row: from globalTid, else the marker's "pid N". */
static int row_pid(sqlite3_stmt *st, int col, const char *text, uint32_t *pid)
{
	if (col >= 0 && sqlite3_column_type(st, col) != SQLITE_NULL) {
		*pid = pid_of(sqlite3_column_int64(st, col));
		return 0;
	}
	int64_t v;
	if (text && (kv_get(text, "pid", &v) == 0) && v >= 0 && v <= 0xFFFFFF) {
		*pid = (uint32_t)v;
		return 0;
	}
	return -1;
}

/* CommInitRank* payloads (stock NCCL 2.25+ with blobs). */
static int row_init_payload(struct state *s, struct file *f, sqlite3_stmt *st, void *ctx)
{
	(void)ctx;
	size_t n;
	const unsigned char *b = col_blob(s, st, 1, &n);
	int64_t v[NPF];
	unsigned m;
	uint32_t pid;
	if (!b || decode_payload(f, b, n, v, &m) || row_pid(st, 0, NULL, &pid))
		return 0;
	unsigned need = 1u << PF_COMM | 1u << PF_NRANKS | 1u << PF_RANK;
	if ((m & need) != need || v[PF_RANK] < 0 || v[PF_RANK] >= v[PF_NRANKS])
		return 0;
	int fi = (int)(f - s->files);
	struct gpu *g = gpu_find(s, fi, pid);
	if (!g)
		return 0;
	struct comm *c = comm_add(s, (uint64_t)v[PF_COMM], (uint32_t)v[PF_NRANKS]);
	if (!c) {
		ev_cli_warn(&s->o->cli, "%s: communicator %llx: inconsistent rank count, ignored", f->path,
		            (unsigned long long)v[PF_COMM]);
		return 0;
	}
	c->gpu_of[v[PF_RANK]] = (int)(g - s->gpus);
	if (ev_map_put(&s->comm_rank, key3((uint64_t)fi, pid, c->id), (uint64_t)v[PF_RANK] + 1))
		return ev_cli_error(&s->o->cli, "out of memory");
	return 0;
}

struct usage { uint64_t hash; int gpu; };
static struct ev_vec g_usage;     /* of struct usage: comms seen only in calls */
static struct ev_map g_usage_seen;

static int row_comm_info(struct state *s, struct file *f, sqlite3_stmt *st, void *ctx)
{
	(void)ctx;
	const char *t = col_text(st, 1);
	int64_t hash, id, rank, nranks;
	uint32_t pid;
	int fi = (int)(f - s->files);
	if (!t || kv_get(t, "commHash", &hash) || kv_get(t, "commId", &id) || kv_get(t, "rank", &rank) ||
	    kv_get(t, "nranks", &nranks) || row_pid(st, 0, t, &pid) || nranks <= 0 || rank < 0 || rank >= nranks) {
		f->skipped_bad++;
		return 0;
	}
	struct gpu *g = gpu_add(s, fi, pid);
	struct comm *c = g ? comm_add(s, (uint64_t)id, (uint32_t)nranks) : NULL;
	if (!g)
		return ev_cli_error(&s->o->cli, "out of memory");
	if (!c) {
		ev_cli_warn(&s->o->cli, "%s: communicator %llx: inconsistent rank count, marker ignored", f->path,
		            (unsigned long long)id);
		return 0;
	}
	c->gpu_of[rank] = (int)(g - s->gpus);
	f->annotated = 1;
	if (ev_map_put(&s->comm_alias, key3((uint64_t)fi, pid, (uint64_t)hash), (uint64_t)id) ||
	    ev_map_put(&s->comm_rank, key3((uint64_t)fi, pid, (uint64_t)id), (uint64_t)rank + 1))
		return ev_cli_error(&s->o->cli, "out of memory");
	return 0;
}

/* Numbers separated by single punctuation characters: "3->0->1", "1/-1/-1->0->2". */
static int parse_chain(const char *p, int64_t *v, int n)
{
	for (int i = 0; i < n; i++) {
		char *end;
		errno = 0;
		v[i] = strtoll(p, &end, 10);
		if (end == p || errno)
			return -1;
		p = end;
		if (i + 1 < n) {
			if (*p == '-' && p[1] == '>')
				p += 2;
			else if (*p == '/')
				p++;
			else
				return -1;
		}
	}
	return 0;
}

static int row_topo(struct state *s, struct file *f, sqlite3_stmt *st, void *ctx)
{
	(void)ctx;
	const char *t = col_text(st, 1);
	int fi = (int)(f - s->files);
	int64_t hash;
	uint32_t pid;
	if (!t || kv_get(t, "commHash", &hash) || row_pid(st, 0, t, &pid)) {
		f->skipped_bad++;
		return 0;
	}
	if (t[0] == 'n') { /* an API call: remember comms that lack init markers */
		f->annotated = 1;
		if (ev_map_get(&s->comm_alias, key3((uint64_t)fi, pid, (uint64_t)hash)))
			return 0;
		struct gpu *g = gpu_add(s, fi, pid);
		if (!g)
			return ev_cli_error(&s->o->cli, "out of memory");
		uint64_t k = key3((uint64_t)(g - s->gpus), (uint64_t)hash, 0x757365);
		if (ev_map_get(&g_usage_seen, k))
			return 0;
		struct usage *u = ev_vec_push(&g_usage);
		if (!u || ev_map_put(&g_usage_seen, k, 1))
			return ev_cli_error(&s->o->cli, "out of memory");
		u->hash = (uint64_t)hash;
		u->gpu = (int)(g - s->gpus);
		return 0;
	}
	uint64_t *id = ev_map_get(&s->comm_alias, key3((uint64_t)fi, pid, (uint64_t)hash));
	struct comm *c = id ? comm_find(s, *id) : NULL;
	const char *rp = strstr(t, " Rings [");
	const char *tp = strstr(t, " Trees [");
	const char *p = rp ? rp + 8 : tp ? tp + 8 : NULL;
	char *end;
	long ch = p ? strtol(p, &end, 10) : -1;
	if (!c || !p || ch < 0 || ch >= MAXCH || end[0] != ']' || end[1] != ' ') {
		f->skipped_bad++;
		return 0;
	}
	int64_t v[5];
	size_t n = c->nranks;
	if (rp) {
		if (parse_chain(end + 2, v, 3) || v[1] < 0 || v[1] >= (int64_t)n || v[2] < 0 || v[2] >= (int64_t)n) {
			f->skipped_bad++;
			return 0;
		}
		if (!c->ring_next) {
			c->ring_next = malloc(MAXCH * n * sizeof *c->ring_next);
			if (!c->ring_next)
				return ev_cli_error(&s->o->cli, "out of memory");
			for (size_t i = 0; i < MAXCH * n; i++)
				c->ring_next[i] = -2;
		}
		c->ring_next[(size_t)ch * n + (size_t)v[1]] = (int32_t)v[2];
		if ((uint32_t)ch + 1 > c->nch_ring)
			c->nch_ring = (uint32_t)ch + 1;
	} else {
		/* d0/d1/d2->me->up */
		if (parse_chain(end + 2, v, 5) || v[3] < 0 || v[3] >= (int64_t)n) {
			f->skipped_bad++;
			return 0;
		}
		if (!c->tree) {
			c->tree = malloc(MAXCH * n * 4 * sizeof *c->tree);
			if (!c->tree)
				return ev_cli_error(&s->o->cli, "out of memory");
			for (size_t i = 0; i < MAXCH * n * 4; i++)
				c->tree[i] = -2;
		}
		int32_t *node = c->tree + ((size_t)ch * n + (size_t)v[3]) * 4;
		node[0] = (int32_t)v[4];
		node[1] = (int32_t)v[0];
		node[2] = (int32_t)v[1];
		node[3] = (int32_t)v[2];
		if ((uint32_t)ch + 1 > c->nch_tree)
			c->nch_tree = (uint32_t)ch + 1;
	}
	return 0;
}

static void node_from_path(struct state *s, struct file *f, int fi)
{
	regmatch_t m[4];
	const char *base = strrchr(f->path, '/');
	base = base ? base + 1 : f->path;
	regex_t re;
	if (s->have_node_re && regexec(&s->node_re, f->path, 2, m, 0) == 0 && m[1].rm_so >= 0) {
		snprintf(f->node, sizeof f->node, "%.*s", (int)(m[1].rm_eo - m[1].rm_so), f->path + m[1].rm_so);
		return;
	}
	if (regcomp(&re, "nid0*([0-9]+)", REG_EXTENDED) == 0) {
		int ok = regexec(&re, base, 2, m, 0) == 0;
		regfree(&re);
		if (ok) {
			snprintf(f->node, sizeof f->node, "%.*s", (int)(m[1].rm_eo - m[1].rm_so), base + m[1].rm_so);
			return;
		}
	}
	if (regcomp(&re, "profile_([0-9]+)_([0-9]+)_([0-9]+)\\.sqlite", REG_EXTENDED) == 0) {
		int ok = regexec(&re, base, 4, m, 0) == 0;
		regfree(&re);
		if (ok) {
			snprintf(f->node, sizeof f->node, "%.*s", (int)(m[2].rm_eo - m[2].rm_so), base + m[2].rm_so);
			return;
		}
	}
	if (f->host[0])
		snprintf(f->node, sizeof f->node, "%s", f->host);
	else
		snprintf(f->node, sizeof f->node, "%d", fi);
}

static int pass1(struct state *s, int fi)
{
	struct file *f = &s->files[fi];
	char sql[1024];
	int st = 0;
	f->nccl_domain = -1;
	if ((st = file_open(s, f)) != 0)
		return st;
	int have[NCUR];
	for (int k = 0; k < NCUR; k++)
		have[k] = table_exists(f, cur_table[k]);
	if (!have[CUR_KERNEL] && !have[CUR_MEMCPY] && !have[CUR_MEMSET] && !have[CUR_NVTX])
		return ev_cli_error(&s->o->cli, "%s: not an Nsight Systems export (no CUPTI_ACTIVITY_KIND_* or NVTX_EVENTS table)",
		                    f->path);
	if (have[CUR_KERNEL] && (!column_exists(f, cur_table[CUR_KERNEL], "start") ||
	                         !column_exists(f, cur_table[CUR_KERNEL], "end") ||
	                         !column_exists(f, cur_table[CUR_KERNEL], "demangledName")))
		return ev_cli_error(&s->o->cli, "%s: table CUPTI_ACTIVITY_KIND_KERNEL lacks start, end or demangledName", f->path);
	if ((have[CUR_KERNEL] || have[CUR_RUNTIME]) && !table_exists(f, "StringIds"))
		return ev_cli_error(&s->o->cli, "%s: no StringIds table: names cannot be resolved", f->path);
	if (table_exists(f, "META_DATA_EXPORT") &&
	    (st = query_rows(s, f, "SELECT name, value FROM META_DATA_EXPORT", "META_DATA_EXPORT", row_meta, NULL)))
		return st;
	if (table_exists(f, "TARGET_INFO_SESSION_START_TIME") &&
	    column_exists(f, "TARGET_INFO_SESSION_START_TIME", "utcEpochNs") &&
	    column_exists(f, "TARGET_INFO_SESSION_START_TIME", "systemClockNs") &&
	    (st = query_rows(s, f, "SELECT utcEpochNs, systemClockNs FROM TARGET_INFO_SESSION_START_TIME",
	                     "TARGET_INFO_SESSION_START_TIME", row_start_time, NULL)))
		return st;
	if (!f->have_utc)
		f->offset = 0;
	if (table_exists(f, "TARGET_INFO_SYSTEM_ENV") &&
	    (st = query_rows(s, f, "SELECT value FROM TARGET_INFO_SYSTEM_ENV WHERE name = 'Hostname'",
	                     "TARGET_INFO_SYSTEM_ENV", row_host, NULL)))
		return st;
	node_from_path(s, f, fi);
	/* GPU processes: whoever ran kernels or memory operations. */
	for (int k = CUR_KERNEL; k <= CUR_MEMSET; k++) {
		if (!have[k])
			continue;
		snprintf(sql, sizeof sql, "SELECT ");
		add_col(sql, sizeof sql, f, cur_table[k], "globalPid", "0");
		add_col(sql, sizeof sql, f, cur_table[k], "deviceId", "0");
		size_t n = strlen(sql);
		snprintf(sql + n, sizeof sql - n, ", count(*) FROM %s GROUP BY 1, 2", cur_table[k]);
		if ((st = query_rows(s, f, sql, cur_table[k], row_gpu, NULL)))
			return st;
	}
	if (have[CUR_KERNEL] && column_exists(f, cur_table[CUR_KERNEL], "gridX") &&
	    column_exists(f, cur_table[CUR_KERNEL], "globalPid") &&
	    (st = query_rows(s, f,
	                     "SELECT globalPid, max(gridX) FROM CUPTI_ACTIVITY_KIND_KERNEL WHERE demangledName IN "
	                     "(SELECT id FROM StringIds WHERE value LIKE 'nccl%' OR value LIKE '%ncclDevKernel%' "
	                     "OR value LIKE '%ncclKernel%') GROUP BY 1",
	                     "CUPTI_ACTIVITY_KIND_KERNEL", row_grid, NULL)))
		return st;
	if (table_exists(f, "NVTX_PAYLOAD_SCHEMA_ENTRIES") &&
	    column_exists(f, "NVTX_PAYLOAD_SCHEMA_ENTRIES", "offset") &&
	    (st = query_rows(s, f,
	                     "SELECT domainId, schemaId, idx, name, type, offset FROM NVTX_PAYLOAD_SCHEMA_ENTRIES "
	                     "GROUP BY domainId, schemaId, idx ORDER BY domainId, schemaId, idx",
	                     "NVTX_PAYLOAD_SCHEMA_ENTRIES", row_entry, NULL)))
		return st;
	int nvtx_tid = have[CUR_NVTX] && column_exists(f, "NVTX_EVENTS", "globalTid");
	if (have[CUR_NVTX] && !column_exists(f, "NVTX_EVENTS", "text"))
		have[CUR_NVTX] = 0;
	if (have[CUR_NVTX]) {
		snprintf(sql, sizeof sql,
		         "SELECT %s, text FROM NVTX_EVENTS WHERE text LIKE 'commHash %% commId %%' ORDER BY start",
		         nvtx_tid ? "globalTid" : "NULL");
		if ((st = query_rows(s, f, sql, "NVTX_EVENTS", row_comm_info, NULL)))
			return st;
		if (f->has_blobs && column_exists(f, "NVTX_EVENTS", "binaryData") &&
		    column_exists(f, "NVTX_EVENTS", "textId") && f->nschemas &&
		    (st = query_rows(s, f,
		                     "SELECT n.globalTid, n.binaryData FROM NVTX_EVENTS n JOIN StringIds s ON s.id = n.textId "
		                     "WHERE s.value LIKE 'ncclCommInit%' OR s.value = 'ncclCommSplit' ORDER BY n.start",
		                     "NVTX_EVENTS", row_init_payload, NULL)))
			return st;
	}
	return 0;
}

/* Second half of pass 1, after every file's communicators are known. */
static int pass1_topology(struct state *s, int fi)
{
	struct file *f = &s->files[fi];
	char sql[512];
	if (!table_exists(f, "NVTX_EVENTS") || !column_exists(f, "NVTX_EVENTS", "text"))
		return 0;
	snprintf(sql, sizeof sql,
	         "SELECT %s, text FROM NVTX_EVENTS WHERE text LIKE 'commHash %% Rings [%%' OR "
	         "text LIKE 'commHash %% Trees [%%' OR text LIKE 'nccl%%(): commHash %%' ORDER BY start",
	         column_exists(f, "NVTX_EVENTS", "globalTid") ? "globalTid" : "NULL");
	return query_rows(s, f, sql, "NVTX_EVENTS", row_topo, NULL);
}

/* ---- communicators without init markers; global ranks ---------------- */

static struct state *g_sort_state;

static int node_cmp(const char *a, const char *b)
{
	size_t la = strspn(a, "0123456789"), lb = strspn(b, "0123456789");
	if (la && !a[la] && lb && !b[lb]) {
		while (*a == '0' && a[1]) a++, la--;
		while (*b == '0' && b[1]) b++, lb--;
		if (la != lb)
			return la < lb ? -1 : 1;
	}
	return strcmp(a, b);
}

static int gpu_order(const void *pa, const void *pb)
{
	const struct gpu *a = &g_sort_state->gpus[*(const int *)pa], *b = &g_sort_state->gpus[*(const int *)pb];
	int c = node_cmp(g_sort_state->files[a->file].node, g_sort_state->files[b->file].node);
	if (c)
		return c;
	if (a->pid != b->pid)
		return a->pid < b->pid ? -1 : 1;
	return strcmp(g_sort_state->files[a->file].path, g_sort_state->files[b->file].path);
}

static int usage_order(const void *pa, const void *pb)
{
	const struct usage *a = pa, *b = pb;
	if (a->hash != b->hash)
		return a->hash < b->hash ? -1 : 1;
	return gpu_order(&a->gpu, &b->gpu);
}

/* ATLAHS' fallback: members in (node, pid) order, ring in rank order, tree
 * a binary heap, as many channels as the widest NCCL kernel. */
static int synthesize(struct state *s)
{
	struct usage *u = g_usage.data;
	size_t n = g_usage.len;
	g_sort_state = s;
	if (n)
		qsort(u, n, sizeof *u, usage_order);
	for (size_t i = 0; i < n;) {
		size_t j = i;
		while (j < n && u[j].hash == u[i].hash)
			j++;
		uint32_t nr = (uint32_t)(j - i);
		struct comm *c = comm_find(s, u[i].hash) ? NULL : comm_add(s, u[i].hash, nr);
		if (!c) {
			i = j;
			continue;
		}
		c->synthesized = 1;
		int64_t nch = 1;
		for (uint32_t r = 0; r < nr; r++) {
			struct gpu *g = &s->gpus[u[i + r].gpu];
			c->gpu_of[r] = u[i + r].gpu;
			if (g->max_grid > nch)
				nch = g->max_grid;
			if (ev_map_put(&s->comm_rank, key3((uint64_t)g->file, g->pid, c->id), r + 1))
				return ev_cli_error(&s->o->cli, "out of memory");
		}
		if (nch > MAXCH)
			nch = MAXCH;
		c->ring_next = malloc(MAXCH * nr * sizeof *c->ring_next);
		c->tree = malloc(MAXCH * nr * 4 * sizeof *c->tree);
		if (!c->ring_next || !c->tree)
			return ev_cli_error(&s->o->cli, "out of memory");
		for (size_t k = 0; k < MAXCH * nr; k++)
			c->ring_next[k] = -2;
		for (size_t k = 0; k < MAXCH * nr * 4; k++)
			c->tree[k] = -2;
		for (int64_t ch = 0; ch < nch; ch++)
			for (uint32_t r = 0; r < nr; r++) {
				c->ring_next[(size_t)ch * nr + r] = (int32_t)((r + 1) % nr);
				int32_t *node = c->tree + ((size_t)ch * nr + r) * 4;
				node[0] = r ? (int32_t)((r - 1) / 2) : -1;
				node[1] = 2 * r + 1 < nr ? (int32_t)(2 * r + 1) : -1;
				node[2] = 2 * r + 2 < nr ? (int32_t)(2 * r + 2) : -1;
				node[3] = -1;
			}
		c->nch_ring = c->nch_tree = (uint32_t)nch;
		ev_cli_warn(&s->o->cli, "communicator %016llx: no init markers; %u members, rings and trees synthesized "
		            "in (node, pid) order", (unsigned long long)c->id, nr);
		i = j;
	}
	return 0;
}

static int comm_order(const void *pa, const void *pb)
{
	const struct comm *a = &g_sort_state->comms[*(const int *)pa], *b = &g_sort_state->comms[*(const int *)pb];
	if (a->nranks != b->nranks)
		return a->nranks > b->nranks ? -1 : 1;
	return a->id < b->id ? -1 : a->id > b->id;
}

static int read_rank_map(struct state *s)
{
	FILE *in = fopen(s->o->rank_map, "r");
	if (!in)
		return ev_cli_error(&s->o->cli, "%s: %s", s->o->rank_map, strerror(errno));
	char line[1024];
	int status = 0;
	unsigned lineno = 0;
	while (!status && fgets(line, sizeof line, in)) {
		lineno++;
		char node[512], extra[2];
		long long pid, rank;
		char *h = strchr(line, '#');
		if (h)
			*h = '\0';
		int n = sscanf(line, "%511s %lld %lld %1s", node, &pid, &rank, extra);
		if (n <= 0)
			continue;
		if (n != 3 || pid < 0 || rank < 0 || rank > INT32_MAX) {
			status = ev_cli_error(&s->o->cli, "%s: line %u: expected 'NODE PID RANK'", s->o->rank_map, lineno);
			break;
		}
		int hit = 0;
		for (size_t i = 0; i < s->ngpus; i++) {
			struct gpu *g = &s->gpus[i];
			struct file *f = &s->files[g->file];
			const char *base = strrchr(f->path, '/');
			base = base ? base + 1 : f->path;
			if (g->pid == (uint32_t)pid && (!strcmp(node, f->node) || !strcmp(node, f->host) || !strcmp(node, base))) {
				g->rank = rank;
				hit = 1;
			}
		}
		if (!hit)
			ev_cli_warn(&s->o->cli, "%s: line %u: no GPU process %s pid %lld in the inputs", s->o->rank_map, lineno, node, pid);
	}
	if (!status && ferror(in))
		status = ev_cli_error(&s->o->cli, "%s: %s", s->o->rank_map, strerror(errno));
	fclose(in);
	return status;
}

static int assign_ranks(struct state *s)
{
	struct ev_map used;
	int status = 0;
	int64_t next = 0;
	ev_map_init(&used);
	int *order = malloc((s->ngpus + s->ncomms + 1) * sizeof *order);
	if (!order)
		return ev_cli_error(&s->o->cli, "out of memory");
	g_sort_state = s;
	if (s->o->rank_map && (status = read_rank_map(s)) != 0)
		goto out;
	for (size_t i = 0; i < s->ngpus; i++)
		if (s->gpus[i].rank >= 0) {
			if (ev_map_get(&used, (uint64_t)s->gpus[i].rank + 1)) {
				status = ev_cli_error(&s->o->cli, "%s: rank %lld given to two GPU processes", s->o->rank_map,
				                      (long long)s->gpus[i].rank);
				goto out;
			}
			if (ev_map_put(&used, (uint64_t)s->gpus[i].rank + 1, 1))
				goto nomem;
			if (s->gpus[i].rank >= next)
				next = s->gpus[i].rank + 1;
		}
	for (size_t i = 0; i < s->ncomms; i++)
		order[i] = (int)i;
	qsort(order, s->ncomms, sizeof *order, comm_order);
	for (size_t i = 0; i < s->ncomms; i++) {
		struct comm *c = &s->comms[order[i]];
		for (uint32_t r = 0; r < c->nranks; r++) {
			if (c->gpu_of[r] < 0 || s->gpus[c->gpu_of[r]].rank >= 0)
				continue;
			int64_t want = ev_map_get(&used, (uint64_t)r + 1) ? next : r;
			s->gpus[c->gpu_of[r]].rank = want;
			if (ev_map_put(&used, (uint64_t)want + 1, 1))
				goto nomem;
			if (want >= next)
				next = want + 1;
		}
	}
	for (size_t i = 0; i < s->ngpus; i++)
		order[i] = (int)i;
	qsort(order, s->ngpus, sizeof *order, gpu_order);
	for (size_t i = 0; i < s->ngpus; i++) {
		struct gpu *g = &s->gpus[order[i]];
		if (g->rank >= 0)
			continue;
		while (ev_map_get(&used, (uint64_t)next + 1))
			next++;
		g->rank = next;
		if (ev_map_put(&used, (uint64_t)next + 1, 1))
			goto nomem;
	}
	goto out;
nomem:
	status = ev_cli_error(&s->o->cli, "out of memory");
out:
	free(order);
	ev_map_free(&used);
	return status;
}

/* ---- metadata lines -------------------------------------------------- */

/* A key=value value: escaped, spaces replaced (values may not hold one). */
static const char *kv_value(const char *v, char *buf, size_t cap)
{
	if (!v || !*v)
		return "-";
	ev_text_escape(v, strnlen(v, (cap - 1) / 2), buf, cap);
	for (char *p = buf; *p; p++)
		if (*p == ' ')
			*p = '_';
	return buf;
}

static int grow_line(struct state *s, size_t need)
{
	if (need <= s->bufcap)
		return 0;
	size_t cap = s->bufcap ? s->bufcap : 4096;
	while (cap < need)
		cap *= 2;
	char *n = realloc(s->buf, cap);
	if (!n)
		return EV_ERR_NOMEM;
	s->buf = n;
	s->bufcap = cap;
	return 0;
}

static int write_meta(struct state *s)
{
	int rc = 0;
	char a[1024], b[512], c[512], d[256];
	for (int i = 0; i < s->nfiles && !rc; i++) {
		struct file *f = &s->files[i];
		rc = ev_write_textf(s->w, "#src %d file=%s node=%s host=%s nsys=%s schema=%s nccl=%s", i,
		                    kv_value(f->path, a, sizeof a), kv_value(f->node, b, sizeof b), kv_value(f->host, c, sizeof c),
		                    kv_value(f->version, d, sizeof d), f->schema_ver[0] ? f->schema_ver : "-",
		                    f->annotated ? "annotated" : f->has_blobs ? "stock-blobs" : "stock");
	}
	int *order = malloc((s->ngpus + 1) * sizeof *order);
	if (!order)
		return EV_ERR_NOMEM;
	for (size_t i = 0; i < s->ngpus; i++)
		order[i] = (int)i;
	for (size_t i = 1; i < s->ngpus; i++) /* by rank; few GPUs */
		for (size_t j = i; j > 0 && s->gpus[order[j - 1]].rank > s->gpus[order[j]].rank; j--) {
			int t = order[j];
			order[j] = order[j - 1];
			order[j - 1] = t;
		}
	for (size_t i = 0; i < s->ngpus && !rc; i++) {
		struct gpu *g = &s->gpus[order[i]];
		struct file *f = &s->files[g->file];
		rc = ev_write_textf(s->w, "#rank %lld host=%s node=%s pid=%u device=%lld src=%d", (long long)g->rank,
		                    kv_value(f->host, a, sizeof a), kv_value(f->node, b, sizeof b), g->pid,
		                    (long long)g->device, g->file);
	}
	free(order);
	for (size_t i = 0; i < s->ncomms && !rc; i++) {
		struct comm *cm = &s->comms[i];
		if ((rc = grow_line(s, 64 + (size_t)cm->nranks * 12 * 6)) != 0)
			return rc;
		size_t n = (size_t)snprintf(s->buf, s->bufcap, "#comm %llu nranks=%u ranks=", (unsigned long long)cm->id, cm->nranks);
		for (uint32_t r = 0; r < cm->nranks; r++)
			n += (size_t)snprintf(s->buf + n, s->bufcap - n, "%s%d", r ? "," : "", comm_global(s, cm->id, r));
		if (cm->synthesized)
			n += (size_t)snprintf(s->buf + n, s->bufcap - n, " synthesized=1");
		rc = ev_write_text(s->w, s->buf, n);
		for (uint32_t ch = 0; ch < cm->nch_ring && !rc && cm->ring_next; ch++) {
			int32_t *next = cm->ring_next + (size_t)ch * cm->nranks;
			n = (size_t)snprintf(s->buf, s->bufcap, "#ring %llu %u", (unsigned long long)cm->id, ch);
			int32_t r = 0;
			uint32_t k;
			for (k = 0; k < cm->nranks; k++) {
				int32_t gr = comm_global(s, cm->id, r);
				if (gr < 0 || next[r] < 0)
					break;
				n += (size_t)snprintf(s->buf + n, s->bufcap - n, " %d", gr);
				r = next[r];
				if (r == 0 && k + 1 < cm->nranks)
					break;
			}
			if (k == cm->nranks && r == 0)
				rc = ev_write_text(s->w, s->buf, n);
			else
				ev_cli_warn(&s->o->cli, "communicator %016llx channel %u: ring markers incomplete, no #ring line",
				            (unsigned long long)cm->id, ch);
		}
		for (uint32_t ch = 0; ch < cm->nch_tree && !rc && cm->tree; ch++) {
			n = (size_t)snprintf(s->buf, s->bufcap, "#tree %llu %u", (unsigned long long)cm->id, ch);
			size_t start = n;
			for (uint32_t r = 0; r < cm->nranks; r++) {
				int32_t *node = cm->tree + ((size_t)ch * cm->nranks + r) * 4;
				if (node[0] == -2 || comm_global(s, cm->id, r) < 0)
					continue;
				int32_t gl[4];
				for (int k = 0; k < 4; k++)
					gl[k] = node[k] < 0 ? -1 : comm_global(s, cm->id, node[k]);
				n += (size_t)snprintf(s->buf + n, s->bufcap - n, " %d:%d:%d,%d,%d", comm_global(s, cm->id, r), gl[0],
				                      gl[1], gl[2], gl[3]);
			}
			if (n > start)
				rc = ev_write_text(s->w, s->buf, n);
		}
	}
	return rc;
}

/* ---- pass 2: NCCL operations waiting for their kernels ---------------- */

static struct thr *thr_get(struct gpu *g, uint32_t tid)
{
	for (size_t i = 0; i < g->nthr; i++)
		if (g->thr[i].tid == tid)
			return &g->thr[i];
	struct thr *n = realloc(g->thr, (g->nthr + 1) * sizeof *n);
	if (!n)
		return NULL;
	g->thr = n;
	memset(&n[g->nthr], 0, sizeof *n);
	n[g->nthr].tid = tid;
	return &n[g->nthr++];
}

static int gpu_queues(struct gpu *g)
{
	if (g->ops)
		return 0;
	g->ops = calloc(OPCAP, sizeof *g->ops);
	g->units = calloc(UNITCAP, sizeof *g->units);
	g->next_unit = 1;
	return g->ops && g->units ? 0 : EV_ERR_NOMEM;
}

static struct unit *unit_get(struct gpu *g, uint64_t id)
{
	if (!id || g->unit_tail == g->unit_head)
		return NULL;
	uint64_t first = g->units[g->unit_head % UNITCAP].id;
	if (id < first || id - first >= g->unit_tail - g->unit_head)
		return NULL;
	struct unit *u = &g->units[(g->unit_head + (id - first)) % UNITCAP];
	return u->id == id ? u : NULL;
}

/* Pop emitted ops and finished units from the queue heads. */
static void gpu_tidy(struct gpu *g)
{
	while (g->op_head < g->op_tail && g->ops[g->op_head % OPCAP].emitted)
		g->op_head++;
	while (g->unit_head < g->unit_tail) {
		struct unit *u = &g->units[g->unit_head % UNITCAP];
		if (u->nops || !u->closed)
			break;
		g->unit_head++;
	}
}

static void drop_oldest_unit(struct gpu *g)
{
	struct unit *u = &g->units[g->unit_head % UNITCAP];
	for (uint64_t i = g->op_head; i < g->op_tail; i++) {
		struct op *p = &g->ops[i % OPCAP];
		if (p->unit == u->id && !p->emitted) {
			p->emitted = 1;
			g->unmatched_ops++;
		}
	}
	g->unit_head++;
	gpu_tidy(g);
}

static uint64_t unit_new(struct gpu *g, uint32_t tid, int64_t start, int64_t end, int closed)
{
	if (g->unit_tail - g->unit_head == UNITCAP)
		drop_oldest_unit(g);
	struct unit *u = &g->units[g->unit_tail % UNITCAP];
	memset(u, 0, sizeof *u);
	u->id = g->next_unit++;
	u->tid = tid;
	u->start = start;
	u->end = end;
	u->closed = closed;
	g->unit_tail++;
	return u->id;
}

static struct op *op_new(struct state *s, struct gpu *g)
{
	if (g->op_tail - g->op_head == OPCAP) {
		struct op *old = &g->ops[g->op_head % OPCAP];
		if (!old->emitted) {
			old->emitted = 1;
			g->unmatched_ops++;
			struct unit *u = unit_get(g, old->unit);
			if (u && u->nops)
				u->nops--;
		}
		g->op_head++;
		gpu_tidy(g);
	}
	struct op *p = &g->ops[g->op_tail % OPCAP];
	struct chan *keep = p->chans;
	memset(p, 0, sizeof *p);
	p->chans = keep;
	p->peer = -1;
	g->op_tail++;
	(void)s;
	return p;
}

static uint32_t next_seq(struct state *s, uint64_t rank, uint64_t comm, uint64_t what)
{
	uint64_t key = key3(rank, comm, what);
	uint64_t *v = ev_map_get(&s->seq, key);
	uint32_t seq = v ? (uint32_t)*v : 0;
	if (ev_map_put(&s->seq, key, (uint64_t)seq + 1))
		return UINT32_MAX;
	return seq;
}

/* An NCCL API call: one op, in the thread's open group or in a unit of its own. */
struct call {
	unsigned kind;
	int p2p;
	int64_t comm, bytes, type_size, redop, root, peer, stream;
	unsigned have; /* bit per field present */
	uint64_t name;
};
enum { HC_COMM = 1, HC_BYTES = 2, HC_TS = 4, HC_REDOP = 8, HC_ROOT = 16, HC_PEER = 32, HC_STREAM = 64 };

static int add_call(struct state *s, struct gpu *g, uint32_t tid, int64_t start, int64_t end, const struct call *c)
{
	struct thr *th = thr_get(g, tid);
	if (!th || gpu_queues(g))
		return EV_ERR_NOMEM;
	uint64_t unit;
	struct unit *u;
	if (th->depth > 0 && (u = unit_get(g, th->group_unit)) != NULL) {
		unit = th->group_unit;
	} else {
		unit = unit_new(g, tid, start, end, 1);
		u = unit_get(g, unit);
	}
	struct op *p = op_new(s, g);
	u = unit_get(g, unit);
	if (!u) { /* dropped by op_new's overflow handling */
		p->emitted = 1;
		g->unmatched_ops++;
		return 0;
	}
	u->nops++;
	u->total++;
	p->unit = unit;
	p->kind = (uint8_t)c->kind;
	p->p2p = (uint8_t)c->p2p;
	p->name = c->name;
	p->comm = (c->have & HC_COMM) ? (uint64_t)c->comm : 0;
	p->bytes = (c->have & HC_BYTES) && c->bytes > 0 ? (uint64_t)c->bytes : 0;
	p->type_size = (c->have & HC_TS) && c->type_size > 0 && c->type_size < 256 ? (uint32_t)c->type_size : 0;
	p->redop = (c->have & HC_REDOP) ? (uint8_t)ev_nccl_redop_code(c->redop) : 0;
	if (c->p2p)
		p->peer = (c->have & HC_PEER) ? (int32_t)c->peer : -1;
	else if ((c->have & HC_ROOT) && (c->kind == EV_OP_BROADCAST || c->kind == EV_OP_REDUCE))
		p->peer = (int32_t)c->root;
	p->stream_ptr = (c->have & HC_STREAM) ? (uint64_t)c->stream : 0;
	uint64_t comm = comm_id_of(s, g->file, g->pid, p->comm);
	p->seq = next_seq(s, (uint64_t)g->rank, comm,
	                  p->p2p ? ((uint64_t)(uint32_t)p->peer << 8 | p->kind) : 0xC011ull << 40);
	return 0;
}

static int group_mark(struct gpu *g, uint32_t tid, int64_t start, int64_t end, int is_start)
{
	struct thr *th = thr_get(g, tid);
	if (!th || gpu_queues(g))
		return EV_ERR_NOMEM;
	if (is_start) {
		if (th->depth++ == 0)
			th->group_unit = unit_new(g, tid, start, end, 0);
		return 0;
	}
	if (th->depth == 0)
		return 0;
	if (--th->depth == 0) {
		struct unit *u = unit_get(g, th->group_unit);
		if (u) {
			u->start = start;
			u->end = end;
			u->closed = 1;
		}
		th->group_unit = 0;
		gpu_tidy(g);
	}
	return 0;
}

/* coll_info marker: the oldest pending collective with the same kind,
 * communicator and size, else the oldest one without its info. */
static void coll_info(struct gpu *g, const char *t, uint64_t *bad)
{
	int64_t type, root, redop, algo, proto, hash, size, ts, cs, ss, step;
	if (kv_get(t, "collType", &type) || kv_get(t, "algo", &algo) || kv_get(t, "proto", &proto) ||
	    kv_get(t, "commHash", &hash) || kv_get(t, "data_size", &size)) {
		(*bad)++;
		return;
	}
	struct op *best = NULL;
	for (int pass = 0; pass < 2 && !best; pass++)
		for (uint64_t i = g->op_head; g->ops && i < g->op_tail; i++) {
			struct op *p = &g->ops[i % OPCAP];
			if (p->emitted || p->p2p || p->have_info)
				continue;
			if (pass == 0 && (p->kind != ev_nccl_func_code(type) || p->comm != (uint64_t)hash || p->bytes != (uint64_t)size))
				continue;
			best = p;
			break;
		}
	if (!best) {
		(*bad)++;
		return;
	}
	best->have_info = 1;
	best->algo = (uint8_t)ev_nccl_algo_code(algo);
	best->proto = (uint8_t)ev_nccl_proto_code(proto);
	if (!kv_get(t, "redOp", &redop))
		best->redop = (uint8_t)ev_nccl_redop_code(redop);
	if (!kv_get(t, "root", &root) && (best->kind == EV_OP_BROADCAST || best->kind == EV_OP_REDUCE))
		best->peer = (int32_t)root;
	if (!kv_get(t, "type_size", &ts) && ts > 0 && ts < 256)
		best->type_size = (uint32_t)ts;
	if (!kv_get(t, "chunkSteps", &cs) && cs > 0 && cs < 256)
		best->chunk_steps = (uint8_t)cs;
	if (!kv_get(t, "sliceSteps", &ss) && ss > 0 && ss < 256)
		best->slice_steps = (uint8_t)ss;
	if (!kv_get(t, "stepSize", &step) && step > 0 && step <= UINT32_MAX)
		best->step_size = (uint32_t)step;
}

static int add_chan(struct op *p, uint64_t a, uint64_t b, uint64_t c, uint64_t d)
{
	if (!p->chans && !(p->chans = malloc(MAXCH * sizeof *p->chans)))
		return EV_ERR_NOMEM;
	if (p->nchan < MAXCH)
		p->chans[p->nchan++] = (struct chan){ a, b, c, d };
	p->chan_sum += a;
	return 0;
}

/* coll_kernel marker (one per channel): the oldest collective whose element
 * count it names and whose channels do not cover that count yet. */
static int coll_kernel(struct gpu *g, const char *t, uint64_t *bad)
{
	int64_t warps, count, chunk, work, last, off;
	if (kv_get(t, "nWarps", &warps) || kv_get(t, "count", &count) || kv_get(t, "chunkCount", &chunk) ||
	    kv_get(t, "workCount", &work) || kv_get(t, "lastChunkCount", &last) || kv_get(t, "workOffset", &off) ||
	    count < 0 || chunk < 0 || work < 0 || last < 0 || off < 0) {
		(*bad)++;
		return 0;
	}
	struct op *best = NULL, *last_info = NULL;
	for (uint64_t i = g->op_head; g->ops && i < g->op_tail; i++) {
		struct op *p = &g->ops[i % OPCAP];
		if (p->emitted || p->p2p)
			continue;
		if (p->have_info)
			last_info = p;
		uint64_t elems = p->type_size ? p->bytes / p->type_size : p->bytes;
		if ((elems == (uint64_t)count || p->bytes == (uint64_t)count) && p->chan_sum < (uint64_t)count) {
			best = p;
			break;
		}
	}
	if (!best)
		best = last_info;
	if (!best) {
		(*bad)++;
		return 0;
	}
	if (warps > 0 && warps * 32 <= UINT16_MAX)
		best->nthreads = (uint16_t)(warps * 32);
	return add_chan(best, (uint64_t)work, (uint64_t)off, (uint64_t)chunk, (uint64_t)last);
}

/* p2p_kernel marker (one per channel part of a send or receive). */
static int p2p_kernel(struct gpu *g, const char *t, uint64_t *bad)
{
	int64_t bytes, warps, type, peer, proto, chunk = 0;
	if (kv_get(t, "Bytes", &bytes) || kv_get(t, "p2pType", &type) || kv_get(t, "peer", &peer) ||
	    kv_get(t, "proto", &proto) || bytes < 0 || (type != 1 && type != 2)) {
		(*bad)++;
		return 0;
	}
	unsigned kind = type == 1 ? EV_OP_SEND : EV_OP_RECV;
	struct op *best = NULL;
	for (uint64_t i = g->op_head; g->ops && i < g->op_tail; i++) {
		struct op *p = &g->ops[i % OPCAP];
		if (p->emitted || !p->p2p || p->kind != kind || p->peer != peer)
			continue;
		if (p->chan_sum < p->bytes || (p->bytes == 0 && p->nchan == 0)) {
			best = p;
			break;
		}
	}
	if (!best) {
		(*bad)++;
		return 0;
	}
	best->proto = (uint8_t)ev_nccl_proto_code(proto);
	if (!kv_get(t, "nWarps", &warps) && warps > 0 && warps * 32 <= UINT16_MAX)
		best->nthreads = (uint16_t)(warps * 32);
	if (!kv_get(t, "chunkSize", &chunk) && chunk > 0 && chunk <= UINT32_MAX)
		best->step_size = (uint32_t)chunk;
	return add_chan(best, (uint64_t)bytes, 0, chunk > 0 ? (uint64_t)chunk : 0, 0);
}

/* Per kernel name: class and NCCL facts, computed once per distinct name. */
struct kinfo { uint8_t kclass, nccl, kind, dtype, algo, proto; };

static int kinfo_of(struct state *s, uint64_t name, struct kinfo *ki)
{
	static struct ev_map cache; /* name id -> packed kinfo + 1 */
	uint64_t *v = ev_map_get(&cache, name ? name : 1);
	if (v) {
		uint64_t x = *v - 1;
		ki->kclass = (uint8_t)x, ki->nccl = (uint8_t)(x >> 8), ki->kind = (uint8_t)(x >> 16);
		ki->dtype = (uint8_t)(x >> 24), ki->algo = (uint8_t)(x >> 32), ki->proto = (uint8_t)(x >> 40);
		return 0;
	}
	if (!s) { /* cleanup */
		ev_map_free(&cache);
		return 0;
	}
	const char *t = ev_strtab_get(s->st, name, NULL);
	if (!t)
		t = "";
	memset(ki, 0, sizeof *ki);
	/* One vocabulary for every converter (lib/nccl/names.c, lib/analysis/classify.c). */
	struct ev_nccl_kname kn;
	ki->kclass = (uint8_t)ev_kernel_class(EV_RULES_TRACELENS, t);
	ki->nccl = ev_nccl_kernel_decode(t, &kn);
	if (ki->nccl) {
		ki->kclass = EV_KC_COMM;
		ki->kind = (uint8_t)kn.coll;
		ki->dtype = (uint8_t)kn.dtype;
		ki->algo = (uint8_t)kn.algo;
		ki->proto = (kn.known & EV_NCCL_K_PROTO) ? (uint8_t)kn.proto : 0;
	}
	uint64_t x = (uint64_t)ki->kclass | (uint64_t)ki->nccl << 8 | (uint64_t)ki->kind << 16 |
	             (uint64_t)ki->dtype << 24 | (uint64_t)ki->algo << 32 | (uint64_t)ki->proto << 40;
	return ev_map_put(&cache, name ? name : 1, x + 1);
}

static int kind_fits(unsigned kernel, const struct op *p)
{
	if (kernel == EV_OP_UNKNOWN)
		return 1;
	if (kernel == EV_OP_SENDRECV)
		return p->p2p || p->kind == EV_OP_ALLTOALL || p->kind == EV_OP_GATHER || p->kind == EV_OP_SCATTER;
	return !p->p2p;
}

static int stream_fits(struct gpu *g, const struct op *p, uint32_t stream)
{
	if (!p->stream_ptr)
		return 1;
	uint64_t *sv = ev_map_get(&g->ptr_stream, p->stream_ptr);
	if (sv)
		return *sv == (uint64_t)stream + 1;
	uint64_t *pv = ev_map_get(&g->stream_ptr, (uint64_t)stream + 1);
	return !pv || *pv == p->stream_ptr;
}

static int emit_op(struct state *s, struct gpu *g, struct op *p, const struct ev_rec *k, const struct kinfo *ki,
                   int group, int fallback)
{
	struct ev_rec r;
	ev_rec_init(&r);
	uint64_t comm = comm_id_of(s, g->file, g->pid, p->comm);
	struct comm *c = comm_find(s, comm);
	r.type = p->p2p ? EV_P2P : EV_COLL;
	r.op = p->kind;
	r.rank = k->rank;
	r.stream = k->stream;
	r.ts = k->ts;
	r.dur = k->dur;
	r.src = k->src;
	r.bytes = p->bytes;
	if (c && (p->kind == EV_OP_ALLGATHER || p->kind == EV_OP_REDUCESCATTER))
		r.bytes = p->bytes * c->nranks; /* the call names the smaller buffer */
	int same = ki->kind == p->kind || (ki->kind == EV_OP_SENDRECV && p->p2p);
	r.dtype = same && ki->dtype && ki->kind != EV_OP_SENDRECV ? ki->dtype : (uint8_t)dtype_from_size(p->type_size);
	if ((p->kind == EV_OP_ALLGATHER || p->kind == EV_OP_BROADCAST || p->p2p) && p->type_size <= 1)
		r.dtype = p->type_size == 1 ? EV_DT_INT8 : r.dtype;
	if (!r.dtype && (p->p2p || p->kind == EV_OP_ALLGATHER || p->kind == EV_OP_BROADCAST))
		r.dtype = EV_DT_INT8; /* sizes in bytes */
	if (p->kind == EV_OP_ALLREDUCE || p->kind == EV_OP_REDUCE || p->kind == EV_OP_REDUCESCATTER)
		r.redop = p->redop;
	r.comm = comm;
	r.seq = p->seq;
	r.peer = p->peer >= 0 ? comm_global(s, comm, p->peer) : -1;
	r.id = k->id;
	r.channel = (uint16_t)(p->nchan ? p->nchan : k->aux);
	r.nthreads = k->nthreads ? k->nthreads : p->nthreads;
	r.algo = p->have_info ? p->algo : same ? ki->algo : 0;
	r.proto = p->proto ? p->proto : same ? ki->proto : 0;
	r.chunk_steps = p->chunk_steps;
	r.slice_steps = p->slice_steps;
	r.step_size = p->step_size;
	r.aux = c ? c->nranks : 0;
	r.name = k->name;
	r.sig = p->name;
	r.flags = (uint16_t)((group ? EV_F_GROUP : 0) | (fallback ? EV_F_FALLBACK : 0));
	int rc = ev_write(s->w, &r);
	for (uint32_t i = 0; i < p->nchan && !rc; i++) {
		struct ev_rec ch = r;
		ch.type = EV_CHAN;
		ch.flags = 0;
		ch.peer = -1;
		ch.channel = (uint16_t)i;
		ch.bytes = p->chans[i].a;
		ch.dur = p->chans[i].b;
		ch.aux = (uint32_t)p->chans[i].c;
		ch.step = (uint32_t)p->chans[i].d;
		ch.name = ch.sig = 0;
		ch.algo = ch.proto = ch.redop = 0;
		ch.chunk_steps = ch.slice_steps = 0;
		ch.step_size = 0;
		ch.nthreads = 0;
		rc = ev_write(s->w, &ch);
	}
	p->emitted = 1;
	if (fallback)
		g->fallback++;
	else
		g->matched++;
	return rc;
}

/* An NCCL kernel: find the ops it runs (by correlation id, else the oldest
 * compatible unit whose launch was not seen) and write them at its time. */
static int nccl_kernel(struct state *s, struct gpu *g, const struct ev_rec *k, int64_t raw_start, const struct kinfo *ki)
{
	struct unit *u = NULL;
	int fallback = 0;
	for (uint64_t i = g->unit_head; g->units && i < g->unit_tail && !u; i++) {
		struct unit *x = &g->units[i % UNITCAP];
		for (uint32_t j = 0; j < x->ncorr; j++)
			if (x->corr[j] == k->id && k->id) {
				u = x;
				break;
			}
	}
	if (!u) {
		for (unsigned j = 0; j < 64; j++)
			if (k->id && g->recent_corr[j] == k->id)
				return 0; /* another kernel of an op set already written */
	}
	if (!u) {
		for (uint64_t i = g->unit_head; g->units && i < g->unit_tail && !u; i++) {
			struct unit *x = &g->units[i % UNITCAP];
			if (!x->closed || x->ncorr || !x->nops || x->start > raw_start)
				continue;
			for (uint64_t q = g->op_head; q < g->op_tail; q++) {
				struct op *p = &g->ops[q % OPCAP];
				if (p->unit == x->id && !p->emitted && kind_fits(ki->kind, p) && stream_fits(g, p, k->stream)) {
					u = x;
					fallback = 1;
					break;
				}
			}
		}
	}
	if (!u) {
		/* No API call known: a collective from the kernel alone. */
		struct ev_rec r = *k;
		r.type = EV_COLL;
		r.op = ki->kind;
		r.dtype = ki->dtype;
		r.algo = ki->algo;
		r.proto = ki->proto;
		r.channel = (uint16_t)k->aux;
		r.aux = 0;
		r.flags = EV_F_UNLINKED;
		r.seq = next_seq(s, k->rank, 0, 0xC011ull << 40);
		g->kernels_alone++;
		return ev_write(s->w, &r);
	}
	int group = u->total > 1;
	int rc = 0, any = 0;
	for (uint64_t q = g->op_head; q < g->op_tail && !rc; q++) {
		struct op *p = &g->ops[q % OPCAP];
		if (p->unit != u->id || p->emitted || !stream_fits(g, p, k->stream))
			continue;
		if (p->stream_ptr && !ev_map_get(&g->ptr_stream, p->stream_ptr)) {
			if (ev_map_put(&g->ptr_stream, p->stream_ptr, (uint64_t)k->stream + 1) ||
			    ev_map_put(&g->stream_ptr, (uint64_t)k->stream + 1, p->stream_ptr))
				return EV_ERR_NOMEM;
		}
		rc = emit_op(s, g, p, k, ki, group, fallback);
		u->nops--;
		any = 1;
	}
	if (!any)
		g->kernels_alone++;
	if (u->ncorr < NCORR && k->id) {
		int have = 0;
		for (uint32_t j = 0; j < u->ncorr; j++)
			have |= u->corr[j] == k->id;
		if (!have)
			u->corr[u->ncorr++] = k->id;
	}
	g->recent_corr[g->recent_pos++ % 64] = k->id;
	gpu_tidy(g);
	return rc;
}

/* ---- pass 2: rows to records ----------------------------------------- */

static int prepare_cursors(struct state *s, struct file *f, int has_nccl)
{
	char sql[1536];
	const char *t;
	size_t n;
	/* kernels: start end globalPid deviceId streamId correlationId demangledName gridX blockX */
	if (table_exists(f, t = cur_table[CUR_KERNEL])) {
		snprintf(sql, sizeof sql, "SELECT start, end");
		static const char *const kc[] = { "globalPid", "deviceId", "streamId", "correlationId" };
		for (int i = 0; i < 4; i++)
			add_col(sql, sizeof sql, f, t, kc[i], "0");
		add_col(sql, sizeof sql, f, t, "demangledName", NULL);
		add_col(sql, sizeof sql, f, t, "gridX", "0");
		add_col(sql, sizeof sql, f, t, "blockX", "0");
		n = strlen(sql);
		snprintf(sql + n, sizeof sql - n, " FROM %s ORDER BY start", t);
		if (sqlite3_prepare_v2(f->db, sql, -1, &f->cur[CUR_KERNEL], NULL) != SQLITE_OK)
			return sql_error(s, f, t);
	}
	for (int k = CUR_MEMCPY; k <= CUR_MEMSET; k++) {
		if (!table_exists(f, t = cur_table[k]))
			continue;
		snprintf(sql, sizeof sql, "SELECT start, end");
		static const char *const mc[] = { "globalPid", "deviceId", "streamId", "correlationId", "bytes", "copyKind" };
		for (int i = 0; i < (k == CUR_MEMCPY ? 6 : 5); i++)
			add_col(sql, sizeof sql, f, t, mc[i], "0");
		n = strlen(sql);
		snprintf(sql + n, sizeof sql - n, " FROM %s ORDER BY start", t);
		if (sqlite3_prepare_v2(f->db, sql, -1, &f->cur[k], NULL) != SQLITE_OK)
			return sql_error(s, f, t);
	}
	/* NVTX: start end eventType globalTid domainId text textId binaryData */
	if (table_exists(f, t = cur_table[CUR_NVTX]) && column_exists(f, t, "start")) {
		snprintf(sql, sizeof sql, "SELECT start");
		static const char *const nc[] = { "end", "eventType", "globalTid", "domainId", "text", "textId", "binaryData" };
		for (int i = 0; i < 7; i++)
			add_col(sql, sizeof sql, f, t, nc[i], NULL);
		n = strlen(sql);
		snprintf(sql + n, sizeof sql - n, " FROM %s%s ORDER BY start", t,
		         column_exists(f, t, "eventType") ? " WHERE eventType IN (34, 59, 60)" : "");
		if (sqlite3_prepare_v2(f->db, sql, -1, &f->cur[CUR_NVTX], NULL) != SQLITE_OK)
			return sql_error(s, f, t);
	}
	/* runtime: start end globalTid correlationId nameId; only launches
	 * unless --api */
	if ((s->o->api || has_nccl) && table_exists(f, t = cur_table[CUR_RUNTIME]) && column_exists(f, t, "nameId") &&
	    column_exists(f, t, "globalTid") && column_exists(f, t, "correlationId")) {
		snprintf(sql, sizeof sql,
		         "SELECT start, end, globalTid, correlationId, nameId FROM %s%s ORDER BY start", t,
		         s->o->api ? "" : " WHERE nameId IN (SELECT id FROM StringIds WHERE value LIKE 'cudaLaunchKernel%' "
		                          "OR value LIKE 'cuLaunchKernel%' OR value LIKE 'cudaLaunchCooperativeKernel%' "
		                          "OR value LIKE 'cuLaunchCooperativeKernel%')");
		if (sqlite3_prepare_v2(f->db, sql, -1, &f->cur[CUR_RUNTIME], NULL) != SQLITE_OK)
			return sql_error(s, f, t);
		f->has_runtime_launch = 1;
	}
	return 0;
}

/* A time plus the file's UTC offset; garbage times near the int64 limits
 * saturate instead of overflowing (they sort last and show as such). */
static int64_t shift_time(int64_t t, int64_t off)
{
	int64_t r;
	if (__builtin_add_overflow(t, off, &r))
		return off > 0 ? INT64_MAX : INT64_MIN;
	return r;
}

static uint64_t dur_of(int64_t start, int64_t end)
{
	return end > start ? (uint64_t)(end - start) : 0;
}

static int do_kernel(struct state *s, int fi, sqlite3_stmt *st)
{
	struct file *f = &s->files[fi];
	int64_t start = sqlite3_column_int64(st, 0), end = sqlite3_column_int64(st, 1);
	struct gpu *g = gpu_find(s, fi, pid_of(sqlite3_column_int64(st, 2)));
	if (!g) {
		f->skipped_nopid++;
		return 0;
	}
	struct ev_rec r;
	struct kinfo ki;
	ev_rec_init(&r);
	r.type = EV_KERNEL;
	r.rank = (uint32_t)g->rank;
	r.stream = (uint32_t)sqlite3_column_int64(st, 4);
	r.ts = shift_time(start, f->offset);
	r.dur = dur_of(start, end);
	r.id = (uint32_t)sqlite3_column_int64(st, 5);
	int64_t grid = sqlite3_column_int64(st, 7), block = sqlite3_column_int64(st, 8);
	r.aux = grid > 0 && grid <= UINT32_MAX ? (uint32_t)grid : 0;
	r.nthreads = block > 0 && block <= UINT16_MAX ? (uint16_t)block : 0;
	r.src = (uint16_t)fi;
	int rc = str_of(s, f, fi, sqlite3_column_int64(st, 6), &r.name);
	if (rc)
		return -1;
	if (kinfo_of(s, r.name, &ki))
		return EV_ERR_NOMEM;
	r.op = ki.kclass;
	if ((rc = ev_write(s->w, &r)) != 0)
		return rc;
	return ki.nccl ? nccl_kernel(s, g, &r, start, &ki) : 0;
}

static int do_mem(struct state *s, int fi, sqlite3_stmt *st, int memcpy_)
{
	struct file *f = &s->files[fi];
	int64_t start = sqlite3_column_int64(st, 0), end = sqlite3_column_int64(st, 1);
	struct gpu *g = gpu_find(s, fi, pid_of(sqlite3_column_int64(st, 2)));
	if (!g) {
		f->skipped_nopid++;
		return 0;
	}
	struct ev_rec r;
	ev_rec_init(&r);
	r.type = memcpy_ ? EV_MEMCPY : EV_MEMSET;
	r.rank = (uint32_t)g->rank;
	r.stream = (uint32_t)sqlite3_column_int64(st, 4);
	r.ts = shift_time(start, f->offset);
	r.dur = dur_of(start, end);
	r.id = (uint32_t)sqlite3_column_int64(st, 5);
	int64_t b = sqlite3_column_int64(st, 6);
	r.bytes = b > 0 ? (uint64_t)b : 0;
	r.src = (uint16_t)fi;
	if (memcpy_) {
		switch (sqlite3_column_int64(st, 7)) {
		case 1: r.op = EV_CP_HTOD; break;
		case 2: r.op = EV_CP_DTOH; break;
		case 8: r.op = EV_CP_DTOD; break;
		case 9: r.op = EV_CP_HTOH; break;
		case 10: r.op = EV_CP_PTOP; break;
		default: r.op = EV_CP_UNKNOWN; break;
		}
	}
	return ev_write(s->w, &r);
}

static const char *const nccl_api_names[] = {
	"ncclAllReduce", "ncclAllGather", "ncclReduceScatter", "ncclBroadcast", "ncclBcast", "ncclReduce",
	"ncclSend", "ncclRecv", "ncclAlltoAll", "ncclAllToAll", "ncclGather", "ncclScatter",
};

/* Stock NCCL range (registered name) -> a call, sizes from the payload. */
static int stock_call(struct state *s, struct file *f, sqlite3_stmt *st, const char *name, struct call *c)
{
	size_t i, n = sizeof nccl_api_names / sizeof nccl_api_names[0];
	for (i = 0; i < n; i++)
		if (!strcmp(name, nccl_api_names[i]))
			break;
	if (i == n)
		return 0;
	memset(c, 0, sizeof *c);
	c->kind = api_kind(name + 4, strlen(name + 4), &c->p2p);
	size_t bl;
	const unsigned char *b = col_blob(s, st, 7, &bl);
	int64_t v[NPF];
	unsigned m;
	if (b && decode_payload(f, b, bl, v, &m) == 0) {
		if (m & 1u << PF_COMM)
			c->comm = v[PF_COMM], c->have |= HC_COMM;
		if (m & 1u << PF_SIZE)
			c->bytes = v[PF_SIZE], c->have |= HC_BYTES;
		if (m & 1u << PF_PEER)
			c->peer = v[PF_PEER], c->have |= HC_PEER;
		if (m & 1u << PF_ROOT)
			c->root = v[PF_ROOT], c->have |= HC_ROOT;
		if (m & 1u << PF_REDOP)
			c->redop = v[PF_REDOP], c->have |= HC_REDOP;
	}
	return 1;
}

/* Annotated call "ncclAllReduce(): commHash 0x.., stream 0x.., data_size .." */
static int annotated_call(const char *t, struct call *c)
{
	const char *paren = strstr(t, "(): ");
	if (!paren || !has_prefix(t, "nccl"))
		return 0;
	memset(c, 0, sizeof *c);
	c->kind = api_kind(t + 4, (size_t)(paren - t - 4), &c->p2p);
	if (c->kind == EV_OP_UNKNOWN)
		return 0;
	if (!kv_get(t, "commHash", &c->comm)) c->have |= HC_COMM;
	if (!kv_get(t, "data_size", &c->bytes)) c->have |= HC_BYTES;
	if (!kv_get(t, "type_size", &c->type_size)) c->have |= HC_TS;
	if (!kv_get(t, "red_op", &c->redop)) c->have |= HC_REDOP;
	if (!kv_get(t, "root", &c->root)) c->have |= HC_ROOT;
	if (!kv_get(t, "receiver_rank", &c->peer) || !kv_get(t, "sender_rank", &c->peer) || !kv_get(t, "peer", &c->peer))
		c->have |= HC_PEER;
	if (!kv_get(t, "stream", &c->stream)) c->have |= HC_STREAM;
	return 1;
}

static int do_nvtx(struct state *s, int fi, sqlite3_stmt *st)
{
	struct file *f = &s->files[fi];
	int64_t start = sqlite3_column_int64(st, 0);
	int mark = sqlite3_column_type(st, 1) == SQLITE_NULL;
	int64_t end = mark ? start : sqlite3_column_int64(st, 1);
	const char *text = col_text(st, 5);
	struct ev_rec r;
	ev_rec_init(&r);
	r.ts = shift_time(start, f->offset);
	r.dur = dur_of(start, end);
	r.src = (uint16_t)fi;
	r.type = mark ? EV_MARK : EV_RANGE;
	r.op = EV_RG_NVTX;
	if (text) {
		if (intern(s, text, (size_t)sqlite3_column_bytes(st, 5), &r.name))
			return EV_ERR_NOMEM;
	} else if (sqlite3_column_type(st, 6) != SQLITE_NULL) {
		if (str_of(s, f, fi, sqlite3_column_int64(st, 6), &r.name))
			return -1;
	}
	const char *name = ev_strtab_get(s->st, r.name, NULL);
	if (!name)
		name = "";
	uint32_t pid;
	if (row_pid(st, 3, name, &pid)) {
		f->skipped_nopid++;
		return 0;
	}
	struct gpu *g = gpu_find(s, fi, pid);
	if (!g) {
		f->skipped_nopid++;
		return 0;
	}
	uint32_t tid = sqlite3_column_type(st, 3) != SQLITE_NULL ? (uint32_t)(sqlite3_column_int64(st, 3) & 0xFFFFFF) : pid;
	r.rank = (uint32_t)g->rank;
	r.stream = tid;
	struct call c;
	int rc;
	if (f->annotated && text && name[0] && (name[0] == 'n' || name[0] == 'c' || name[0] == 'B')) {
		if (has_prefix(name, "ncclGroupStart()") || has_prefix(name, "ncclGroupEnd()")) {
			if ((rc = group_mark(g, tid, start, end, name[9] == 'S')) != 0)
				return rc;
			r.op = EV_RG_NCCL;
			if (intern_z(s, name[9] == 'S' ? "ncclGroupStart" : "ncclGroupEnd", &r.name))
				return EV_ERR_NOMEM;
			return ev_write(s->w, &r);
		}
		if (annotated_call(name, &c)) {
			const char *paren = strstr(name, "()");
			if (intern(s, name, (size_t)(paren - name), &c.name))
				return EV_ERR_NOMEM;
			if ((rc = add_call(s, g, tid, start, end, &c)) != 0)
				return rc;
			r.op = EV_RG_NCCL;
			r.name = c.name;
			return ev_write(s->w, &r);
		}
		/* Markers that become coll/p2p/chan records and #comm/#ring/#tree
		 * lines are not written again as marks. */
		if (has_prefix(name, "collType ")) {
			coll_info(g, name, &f->skipped_bad);
			return 0;
		}
		if (has_prefix(name, "nWarps ") && strstr(name, "workCount"))
			return coll_kernel(g, name, &f->skipped_bad);
		if (has_prefix(name, "Bytes ") && strstr(name, "p2pType"))
			return p2p_kernel(g, name, &f->skipped_bad);
		if (has_prefix(name, "commHash "))
			return 0;
	} else if (!f->annotated && name[0] == 'n' && has_prefix(name, "nccl") && !text &&
	           (f->nccl_domain < 0 || sqlite3_column_type(st, 4) == SQLITE_NULL ||
	            sqlite3_column_int64(st, 4) == f->nccl_domain)) {
		r.op = EV_RG_NCCL;
		if (!strcmp(name, "ncclGroupStart") || !strcmp(name, "ncclGroupEnd")) {
			if ((rc = group_mark(g, tid, start, end, name[9] == 'S')) != 0)
				return rc;
		} else if (stock_call(s, f, st, name, &c)) {
			c.name = r.name;
			if ((rc = add_call(s, g, tid, start, end, &c)) != 0)
				return rc;
		}
	}
	if (has_prefix(name, "nccl"))
		r.op = EV_RG_NCCL;
	return ev_write(s->w, &r);
}

static int do_runtime(struct state *s, int fi, sqlite3_stmt *st)
{
	struct file *f = &s->files[fi];
	int64_t start = sqlite3_column_int64(st, 0), end = sqlite3_column_int64(st, 1);
	int64_t gt = sqlite3_column_int64(st, 2);
	struct gpu *g = gpu_find(s, fi, pid_of(gt));
	if (!g) {
		if (s->o->api)
			f->skipped_nopid++;
		return 0;
	}
	uint32_t tid = (uint32_t)(gt & 0xFFFFFF);
	struct ev_rec r;
	ev_rec_init(&r);
	r.type = EV_API;
	r.rank = (uint32_t)g->rank;
	r.stream = tid;
	r.ts = shift_time(start, f->offset);
	r.dur = dur_of(start, end);
	r.id = (uint32_t)sqlite3_column_int64(st, 3);
	r.src = (uint16_t)fi;
	if (str_of(s, f, fi, sqlite3_column_int64(st, 4), &r.name))
		return -1;
	const char *name = ev_strtab_get(s->st, r.name, NULL);
	if (!name)
		name = "";
	r.op = has_prefix(name, "cu") && !has_prefix(name, "cuda") ? EV_API_DRIVER : EV_API_RUNTIME;
	if (g->units && (has_prefix(name, "cudaLaunch") || has_prefix(name, "cuLaunch"))) {
		/* A launch inside an NCCL call or group end: note its correlation
		 * id on the newest unit of this thread whose window holds it. */
		for (uint64_t i = g->unit_tail; i > g->unit_head; i--) {
			struct unit *u = &g->units[(i - 1) % UNITCAP];
			if (u->tid != tid || !u->closed || !u->nops || start < u->start || start > u->end)
				continue;
			if (u->ncorr < NCORR && r.id)
				u->corr[u->ncorr++] = r.id;
			break;
		}
	}
	return s->o->api ? ev_write(s->w, &r) : 0;
}

/* ---- the time merge over every table of every file -------------------- */

struct cursor { int64_t ts; int file, kind; uint64_t row; };

static int cur_less(const struct cursor *a, const struct cursor *b)
{
	if (a->ts != b->ts)
		return a->ts < b->ts;
	if (a->file != b->file)
		return a->file < b->file;
	return a->kind < b->kind;
}

static void heap_down(struct cursor *h, size_t n, size_t i)
{
	for (;;) {
		size_t l = 2 * i + 1, m = i;
		if (l < n && cur_less(&h[l], &h[m]))
			m = l;
		if (l + 1 < n && cur_less(&h[l + 1], &h[m]))
			m = l + 1;
		if (m == i)
			return;
		struct cursor t = h[i];
		h[i] = h[m];
		h[m] = t;
		i = m;
	}
}

/* Step a cursor: 1 = a row, 0 = done, -1 = error (reported). */
static int cur_step(struct state *s, struct cursor *c)
{
	struct file *f = &s->files[c->file];
	sqlite3_stmt *st = f->cur[c->kind];
	int rc = sqlite3_step(st);
	if (rc == SQLITE_ROW) {
		c->row++;
		f->rows[c->kind]++;
		c->ts = shift_time(sqlite3_column_int64(st, 0), f->offset);
		return 1;
	}
	if (rc == SQLITE_DONE)
		return 0;
	ev_cli_error(&s->o->cli, "%s: %s: row %llu: %s", f->path, cur_table[c->kind], (unsigned long long)c->row + 1,
	             sqlite3_errmsg(f->db));
	return -1;
}

static int pass2(struct state *s)
{
	struct cursor *h = malloc((size_t)s->nfiles * NCUR * sizeof *h);
	size_t n = 0;
	int status = 0, rc = 0;
	uint64_t nrows = 0;
	if (!h)
		return ev_cli_error(&s->o->cli, "out of memory");
	for (int i = 0; i < s->nfiles && !status; i++)
		for (int k = 0; k < NCUR && !status; k++) {
			if (!s->files[i].cur[k])
				continue;
			h[n] = (struct cursor){ 0, i, k, 0 };
			int r = cur_step(s, &h[n]);
			if (r < 0)
				status = 1;
			else if (r > 0)
				n++;
		}
	for (size_t i = n / 2; i-- > 0;)
		heap_down(h, n, i);
	while (n && !status) {
		struct cursor *c = &h[0];
		sqlite3_stmt *st = s->files[c->file].cur[c->kind];
		switch (c->kind) {
		case CUR_KERNEL: rc = do_kernel(s, c->file, st); break;
		case CUR_MEMCPY: rc = do_mem(s, c->file, st, 1); break;
		case CUR_MEMSET: rc = do_mem(s, c->file, st, 0); break;
		case CUR_NVTX: rc = do_nvtx(s, c->file, st); break;
		default: rc = do_runtime(s, c->file, st); break;
		}
		if (rc == -1) { /* already reported */
			status = 1;
			break;
		}
		if (rc) {
			status = rc == EV_ERR_NOMEM ? ev_cli_error(&s->o->cli, "out of memory")
			                            : ev_cli_file_error(&s->o->cli, s->o->cli.output, rc);
			break;
		}
		int r = cur_step(s, c);
		if (r < 0) {
			status = 1;
			break;
		}
		if (r == 0)
			h[0] = h[--n];
		heap_down(h, n, 0);
		if ((++nrows & 0xFFFF) == 0)
			ev_cli_progress(&s->o->cli, ev_writer_count(s->w), 0);
	}
	free(h);
	return status;
}

static int run(struct opts *o)
{
	struct state s;
	int status = 0, rc;
	memset(&s, 0, sizeof s);
	s.o = o;
	s.st = ev_strtab_new();
	s.nfiles = o->ninputs;
	s.files = calloc((size_t)o->ninputs, sizeof *s.files);
	ev_map_init(&s.gpu_idx);
	ev_map_init(&s.comm_idx);
	ev_map_init(&s.comm_alias);
	ev_map_init(&s.comm_rank);
	ev_map_init(&s.strs);
	ev_map_init(&s.seq);
	ev_vec_init(&g_usage, sizeof(struct usage));
	ev_map_init(&g_usage_seen);
	if (!s.st || !s.files) {
		status = ev_cli_error(&o->cli, "out of memory");
		goto done;
	}
	if (o->node_regex) {
		if (regcomp(&s.node_re, o->node_regex, REG_EXTENDED)) {
			status = ev_cli_error(&o->cli, "--node-regex: invalid regular expression '%s'", o->node_regex);
			goto done;
		}
		s.have_node_re = 1;
	}
	for (int i = 0; i < s.nfiles; i++) {
		s.files[i].path = o->inputs[i];
		s.files[i].temp_slot = -1;
	}
	for (int i = 0; i < s.nfiles && !status; i++)
		status = pass1(&s, i);
	for (int i = 0; i < s.nfiles && !status; i++)
		status = pass1_topology(&s, i);
	if (status)
		goto done;
	for (int i = 0; i < s.nfiles; i++) {
		struct file *f = &s.files[i];
		int any = 0;
		for (size_t k = 0; k < s.ngpus; k++)
			any |= s.gpus[k].file == i;
		if (!any) {
			status = ev_cli_error(&o->cli, "%s: empty trace: no kernels, memory operations or NCCL markers", f->path);
			goto done;
		}
	}
	if ((status = synthesize(&s)) != 0 || (status = assign_ranks(&s)) != 0)
		goto done;
	int all_utc = 1;
	for (int i = 0; i < s.nfiles; i++)
		all_utc &= s.files[i].have_utc;
	if (!all_utc) {
		for (int i = 0; i < s.nfiles; i++) {
			if (s.files[i].have_utc && s.nfiles > 1)
				ev_cli_warn(&o->cli, "%s: not every input has a UTC start time; using each trace's own clock", s.files[i].path);
			s.files[i].offset = 0;
		}
	}
	for (int i = 0; i < s.nfiles && !status; i++) {
		int has_nccl = s.files[i].annotated;
		for (size_t k = 0; k < s.ngpus; k++)
			has_nccl |= s.gpus[k].file == i && s.gpus[k].max_grid > 0;
		status = prepare_cursors(&s, &s.files[i], has_nccl);
	}
	if (status)
		goto done;
	if (ev_cli_check_binary_out(&o->cli)) {
		status = 1;
		goto done;
	}
	if ((rc = ev_writer_open(&s.w, o->cli.output, s.st)) != EV_OK) {
		status = ev_cli_file_error(&o->cli, o->cli.output, rc);
		goto done;
	}
	rc = ev_writer_header(s.w, "origin", all_utc ? "unix" : "trace");
	if (!rc)
		rc = ev_writer_header(s.w, "producer", "nsys2ev");
	if (!rc)
		rc = write_meta(&s);
	if (rc) {
		status = rc == EV_ERR_NOMEM ? ev_cli_error(&o->cli, "out of memory") : ev_cli_file_error(&o->cli, o->cli.output, rc);
		goto done;
	}
	if ((status = pass2(&s)) != 0)
		goto done;
	ev_cli_progress_done(&o->cli);
	rc = ev_writer_close(s.w);
	s.w = NULL;
	if (rc) {
		status = ev_cli_file_error(&o->cli, o->cli.output, rc);
		goto done;
	}
	uint64_t unmatched = 0, fallback = 0, bad = 0, nopid = 0;
	for (size_t k = 0; k < s.ngpus; k++) {
		struct gpu *g = &s.gpus[k];
		for (uint64_t i = g->op_head; g->ops && i < g->op_tail; i++)
			if (!g->ops[i % OPCAP].emitted)
				g->unmatched_ops++;
		unmatched += g->unmatched_ops;
		fallback += g->fallback;
	}
	for (int i = 0; i < s.nfiles; i++) {
		struct file *f = &s.files[i];
		bad += f->skipped_bad;
		nopid += f->skipped_nopid;
		if (o->verbose && !o->cli.quiet)
			fprintf(stderr, "nsys2ev: %s: node %s: %llu kernels, %llu memcpy, %llu memset, %llu NVTX, %llu runtime rows; "
			        "%llu rows of processes without GPU work skipped, %llu markers not understood\n",
			        f->path, f->node, (unsigned long long)f->rows[CUR_KERNEL], (unsigned long long)f->rows[CUR_MEMCPY],
			        (unsigned long long)f->rows[CUR_MEMSET], (unsigned long long)f->rows[CUR_NVTX],
			        (unsigned long long)f->rows[CUR_RUNTIME], (unsigned long long)f->skipped_nopid,
			        (unsigned long long)f->skipped_bad);
	}
	if (o->verbose && !o->cli.quiet)
		for (size_t k = 0; k < s.ngpus; k++) {
			struct gpu *g = &s.gpus[k];
			fprintf(stderr, "nsys2ev: rank %lld (pid %u, device %lld): NCCL operations: %llu matched by correlation id, "
			        "%llu by time fallback, %llu unmatched; %llu NCCL kernels without a call\n",
			        (long long)g->rank, g->pid, (long long)g->device, (unsigned long long)g->matched,
			        (unsigned long long)g->fallback, (unsigned long long)g->unmatched_ops,
			        (unsigned long long)g->kernels_alone);
		}
	if (unmatched)
		ev_cli_warn(&o->cli, "%llu NCCL operations had no kernel and were left out (-v for details)",
		            (unsigned long long)unmatched);
	if (bad)
		ev_cli_warn(&o->cli, "%llu NCCL markers could not be parsed or placed and were skipped (-v for details)",
		            (unsigned long long)bad);
	if (nopid && o->verbose)
		ev_cli_warn(&o->cli, "%llu rows of processes without GPU work were skipped", (unsigned long long)nopid);
	(void)fallback;
done:
	ev_writer_abort(s.w);
	for (int i = 0; s.files && i < s.nfiles; i++)
		file_close(&s.files[i]);
	for (size_t k = 0; k < s.ngpus; k++) {
		struct gpu *g = &s.gpus[k];
		for (size_t i = 0; g->ops && i < OPCAP; i++)
			free(g->ops[i].chans);
		free(g->ops);
		free(g->units);
		free(g->thr);
		ev_map_free(&g->ptr_stream);
		ev_map_free(&g->stream_ptr);
	}
	for (size_t k = 0; k < s.ncomms; k++) {
		free(s.comms[k].gpu_of);
		free(s.comms[k].ring_next);
		free(s.comms[k].tree);
	}
	struct kinfo dummy;
	kinfo_of(NULL, 0xFFFFFFFFFFFFFFFFull, &dummy);
	free(s.comms);
	free(s.gpus);
	free(s.files);
	free(s.buf);
	if (s.have_node_re)
		regfree(&s.node_re);
	ev_map_free(&s.gpu_idx);
	ev_map_free(&s.comm_idx);
	ev_map_free(&s.comm_alias);
	ev_map_free(&s.comm_rank);
	ev_map_free(&s.strs);
	ev_map_free(&s.seq);
	ev_vec_free(&g_usage);
	ev_map_free(&g_usage_seen);
	ev_strtab_free(s.st);
	return status;
}

/* ---- inputs: files and directories ------------------------------------ */

static int path_cmp(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static int sqlite_name(const char *n)
{
	size_t l = strlen(n);
	return (l > 7 && !strcmp(n + l - 7, ".sqlite")) || (l > 10 && !strcmp(n + l - 10, ".sqlite.gz"));
}

/* Append the .sqlite(.gz) files under dir, recursively, sorted. */
static int scan_dir(struct ev_cli *cli, const char *dir, struct ev_vec *out, int depth)
{
	DIR *d = opendir(dir);
	if (!d)
		return ev_cli_error(cli, "%s: %s", dir, strerror(errno));
	struct ev_vec names;
	ev_vec_init(&names, sizeof(char *));
	struct dirent *e;
	int status = 0;
	while (!status && (e = readdir(d)) != NULL) {
		if (e->d_name[0] == '.')
			continue;
		size_t n = strlen(dir) + strlen(e->d_name) + 2;
		char *p = malloc(n), **slot = p ? ev_vec_push(&names) : NULL;
		if (!slot) {
			free(p);
			status = ev_cli_error(cli, "out of memory");
			break;
		}
		snprintf(p, n, "%s/%s", dir, e->d_name);
		*slot = p;
	}
	closedir(d);
	if (names.len)
		qsort(names.data, names.len, sizeof(char *), path_cmp);
	for (size_t i = 0; i < names.len; i++) {
		char *p = ((char **)names.data)[i];
		struct stat sb;
		if (!status && stat(p, &sb) == 0) {
			if (S_ISDIR(sb.st_mode) && depth < 16) {
				status = scan_dir(cli, p, out, depth + 1);
			} else if (S_ISREG(sb.st_mode) && sqlite_name(p)) {
				char **slot = ev_vec_push(out);
				if (!slot) {
					status = ev_cli_error(cli, "out of memory");
				} else {
					*slot = p;
					continue;
				}
			}
		}
		free(p);
	}
	ev_vec_free(&names);
	return status;
}

int main(int argc, char **argv)
{
	static const struct option longopts[] = {
		EV_CLI_COMMON_LONG,
		{ "api", no_argument, NULL, 1 },
		{ "node-regex", required_argument, NULL, 2 },
		{ "rank-map", required_argument, NULL, 3 },
		{ "verbose", no_argument, NULL, 'v' },
		{ NULL, 0, NULL, 0 },
	};
	struct opts o;
	int c;
	memset(&o, 0, sizeof o);
	ev_cli_init(&o.cli, "nsys2ev");
	while ((c = getopt_long(argc, argv, EV_CLI_COMMON_SHORT "v", longopts, NULL)) != -1) {
		switch (ev_cli_common(&o.cli, c, optarg)) {
		case EV_CLI_HANDLED: continue;
		case EV_CLI_WANT_HELP: usage(stdout); return ev_cli_finish(&o.cli, 0);
		case EV_CLI_DONE: return ev_cli_finish(&o.cli, 0);
		default: break;
		}
		switch (c) {
		case 1: o.api = 1; break;
		case 2: o.node_regex = optarg; break;
		case 3: o.rank_map = optarg; break;
		case 'v': o.verbose = 1; break;
		default: return ev_cli_try_help(&o.cli);
		}
	}
	if (optind >= argc) {
		if (isatty(STDIN_FILENO)) {
			fputs("Usage: nsys2ev [options] FILE|DIR...  (nsys2ev --help for more)\n", stderr);
			return 2;
		}
		return ev_cli_usage_error(&o.cli, "no input file (SQLite needs a file, not standard input)");
	}
	/* Expand directories; a directory without exports is an error. */
	struct ev_vec inputs;
	ev_vec_init(&inputs, sizeof(char *));
	int status = 0;
	for (int i = optind; i < argc && !status; i++) {
		struct stat sb;
		if (stat(argv[i], &sb) != 0) {
			status = ev_cli_error(&o.cli, "%s: %s", argv[i], strerror(errno));
			break;
		}
		if (S_ISDIR(sb.st_mode)) {
			size_t before = inputs.len;
			status = scan_dir(&o.cli, argv[i], &inputs, 0);
			if (!status && inputs.len == before)
				status = ev_cli_error(&o.cli, "%s: directory holds no .sqlite or .sqlite.gz files", argv[i]);
			continue;
		}
		char *copy = strdup(argv[i]), **slot = copy ? ev_vec_push(&inputs) : NULL;
		if (!slot) {
			free(copy);
			status = ev_cli_error(&o.cli, "out of memory");
			break;
		}
		*slot = copy;
	}
	if (!status && inputs.len > 65535)
		status = ev_cli_usage_error(&o.cli, "at most 65535 inputs");
	if (!status) {
		o.inputs = inputs.data;
		o.ninputs = (int)inputs.len;
		ev_cli_cleanup_on_signal(NULL);
		status = run(&o);
	}
	for (size_t i = 0; i < inputs.len; i++)
		free(((char **)inputs.data)[i]);
	ev_vec_free(&inputs);
	return ev_cli_finish(&o.cli, status);
}
