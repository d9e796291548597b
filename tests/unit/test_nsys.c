/* SPDX-License-Identifier: MIT */
/*
 * test_nsys.c - unit tests of the Nsight Systems reader (ev/nsys.h) on
 * small exports built here with the SQLite API in memory: annotated and
 * stock NCCL, payload decoding, bad values, the profiled window, missing
 * members, NCCL_DEBUG log lines, and write failures.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ev.h"
#include "ev/nsys.h"
#include "unit.h"

/* ---- helpers ---------------------------------------------------------- */

static char warnings[8192];
static int nwarnings;

static void collect(void *ctx, const char *msg)
{
	(void)ctx;
	size_t n = strlen(warnings);
	snprintf(warnings + n, sizeof warnings - n, "%s\n", msg);
	nwarnings++;
}

static sqlite3 *db_from(const char *sql)
{
	sqlite3 *db = NULL;
	char *err = NULL;
	if (sqlite3_open(":memory:", &db) != SQLITE_OK || sqlite3_exec(db, sql, NULL, NULL, &err) != SQLITE_OK) {
		fprintf(stderr, "test db: %s\n", err ? err : sqlite3_errmsg(db));
		sqlite3_free(err);
		abort();
	}
	return db;
}

/* Results of one conversion: every coll/p2p/kernel record, the header. */
struct result {
	int status;
	char err[512];
	char origin[16];
	struct ev_rec recs[64];
	int n;
	char comm_line[256];
	struct ev_nsys_file_stats fs;
	int interned_markers; /* consumed_markers found in the string table */
};

/* Annotated markers of annotated_sql that become other records (or a
 * #comm line) and are not written: they must not be interned, since their
 * per-operation numbers would make memory grow with the operations. */
#define COMM_MARKER "commHash 0xab commId 0xcd rank 0 nranks 1 pid 7"
#define CALL_MARKER "ncclAllReduce(): commHash 0xab, stream 0x10, data_size 64, type_size 4, red_op 0, pid 7"
#define INFO_MARKER                                                                                              \
	"collType 4 root 0 redOp 0 algo 1 proto 2 commHash 0xab stream 0x10 data_size 64 type_size 4 chunkSize 1 " \
	"chunkCount 16 chunkSteps 4 sliceSteps 2 stepSize 4096 pid 7"
static const char *const consumed_markers[] = { COMM_MARKER, CALL_MARKER, INFO_MARKER };

/* A new name for every conversion: a file read back is an input of this
 * process, and the library refuses to write onto inputs. */
static char out_path[64];
static int nout;

static void convert(struct result *res, sqlite3 *db, const char *name, const struct ev_nsys_opts *opts)
{
	ev_nsys *ns = NULL;
	ev_writer *w = NULL;
	struct ev_nsys_opts o = opts ? *opts : (struct ev_nsys_opts){ 0 };
	memset(res, 0, sizeof *res);
	unlink(out_path);
	snprintf(out_path, sizeof out_path, "/tmp/test_nsys.%ld.%d.ev", (long)getpid(), nout++);
	warnings[0] = '\0';
	nwarnings = 0;
	o.warn = collect;
	int rc = ev_nsys_new(&ns, &o);
	if (!rc)
		rc = ev_nsys_add_db(ns, db, name);
	else
		sqlite3_close(db);
	if (!rc)
		rc = ev_nsys_prepare(ns);
	if (!rc && (rc = ev_writer_open(&w, out_path, ev_nsys_strtab(ns))) == 0) {
		rc = ev_nsys_write(ns, w, NULL, NULL);
		if (!rc)
			rc = ev_writer_close(w);
		else
			ev_writer_abort(w);
		if (!rc)
			ev_nsys_finish(ns);
	}
	res->status = rc;
	if (rc)
		snprintf(res->err, sizeof res->err, "%s", ev_nsys_errmsg(ns));
	else
		ev_nsys_file_stats(ns, 0, &res->fs);
	for (size_t i = 0; ns && i < sizeof consumed_markers / sizeof *consumed_markers; i++) {
		const char *m = consumed_markers[i];
		res->interned_markers += ev_strtab_get(ev_nsys_strtab(ns), ev_hash64(m, strlen(m)), NULL) != NULL;
	}
	ev_nsys_free(ns);
	if (rc)
		return;
	ev_strtab *st = ev_strtab_new();
	ev_reader *r;
	if (ev_reader_open(&r, out_path, st, NULL) != EV_OK)
		abort();
	struct ev_rec rec;
	int k;
	while ((k = ev_read(r, &rec)) > 0) {
		if (k == EV_TEXT) {
			const char *line;
			size_t len;
			ev_reader_text(r, &line, &len);
			if (len > 6 && !strncmp(line, "#comm ", 6))
				snprintf(res->comm_line, sizeof res->comm_line, "%.*s", (int)len, line);
			continue;
		}
		if (res->n < 64)
			res->recs[res->n++] = rec;
		const char *org = ev_reader_header(r, "origin");
		snprintf(res->origin, sizeof res->origin, "%s", org ? org : "");
	}
	CHECK(k == EV_EOF);
	CHECK(ev_reader_close(r) == EV_OK);
	ev_strtab_free(st);
}

static const struct ev_rec *find(const struct result *res, unsigned type, int nth)
{
	for (int i = 0; i < res->n; i++)
		if (res->recs[i].type == type && nth-- == 0)
			return &res->recs[i];
	return NULL;
}

static int count(const struct result *res, unsigned type)
{
	int n = 0;
	for (int i = 0; i < res->n; i++)
		n += res->recs[i].type == type;
	return n;
}

/* The minimal ATLAHS schema: markers carry the pid. */
static const char *const annotated_sql =
	"CREATE TABLE StringIds (id INTEGER PRIMARY KEY, value TEXT);"
	"INSERT INTO StringIds VALUES (1, 'ncclDevKernel_AllReduce_Sum_f32_RING_LL(ncclDevComm*, unsigned long, ncclWork*)');"
	"INSERT INTO StringIds VALUES (2, 'gemm_kernel');"
	"CREATE TABLE NVTX_EVENTS (start INT, end INT NULL, text TEXT);"
	"CREATE TABLE CUPTI_ACTIVITY_KIND_KERNEL (start, end, deviceId, streamId, globalPid, demangledName);"
	"INSERT INTO NVTX_EVENTS VALUES (100, NULL, '" COMM_MARKER "');"
	"INSERT INTO NVTX_EVENTS VALUES (200, 300, '" CALL_MARKER "');"
	"INSERT INTO NVTX_EVENTS VALUES (210, NULL, '" INFO_MARKER "');"
	"INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL VALUES (400, 900, 0, 3, 7 << 24, 1);"
	"INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL VALUES (50, 90, 0, 3, 7 << 24, 2);"
	"INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL VALUES (1000, 1100, 0, 3, 7 << 24, 2);";

/* ---- tests ------------------------------------------------------------ */

static void test_marker_num(void)
{
	int64_t v = 0;
	CHECK(ev_nsys_marker_num("commHash 0xab commId 0xcd rank 3", "rank", &v) == 0 && v == 3);
	CHECK(ev_nsys_marker_num("commHash 0xab commId 0xcd rank 3", "commId", &v) == 0 && v == 0xcd);
	CHECK(ev_nsys_marker_num("x, data_size 4096, type_size 4", "data_size", &v) == 0 && v == 4096);
	CHECK(ev_nsys_marker_num("stream (nil), pid 5", "stream", &v) == 0 && v == 0);
	CHECK(ev_nsys_marker_num("peer -1 x", "peer", &v) == 0 && v == -1);
	CHECK(ev_nsys_marker_num("nsys profiling start, pid: 77", "pid", &v) == 0 && v == 77);
	/* A key inside another word does not count; a missing number fails. */
	CHECK(ev_nsys_marker_num("nranks 4", "ranks", &v) != 0);
	CHECK(ev_nsys_marker_num("rank x", "rank", &v) != 0);
	CHECK(ev_nsys_marker_num("rank", "rank", &v) != 0);
	CHECK(ev_nsys_marker_num("size 99999999999999999999999", "size", &v) != 0);
}

static void test_log_parse(void)
{
	struct ev_nsys_log_line l;
	CHECK(ev_nsys_log_parse("node1:4242:4250 [1] NCCL INFO AllReduce: opCount 1a sendbuff 0x7f00 recvbuff 0x7f80 "
	                        "count 1048576 datatype 7 op 2 root 0 comm 0x55d0 [nranks=4] stream 0x5600",
	                        &l) == EV_NSYS_LOG_COLL);
	CHECK(!strcmp(l.host, "node1") && l.pid == 4242 && l.tid == 4250);
	CHECK(l.coll == EV_OP_ALLREDUCE && l.op_count == 0x1a && l.count == 1048576);
	CHECK(l.dtype == EV_DT_FLOAT32 && l.redop == EV_RED_MAX && l.root == 0 && l.comm == 0x55d0 && l.nranks == 4);
	CHECK(ev_nsys_log_parse("h:1:1 [0] NCCL INFO Send: opCount 0 sendbuff 0x1 recvbuff (nil) count 64 datatype 0 "
	                        "op 0 root 1 comm 0x9 [nranks=2] stream 0x2", &l) == EV_NSYS_LOG_COLL);
	CHECK(l.coll == EV_OP_SEND && l.root == 1 && l.dtype == EV_DT_INT8);
	CHECK(ev_nsys_log_parse("h:10:11 [0] NCCL INFO comm 0x55d0 rank 2 nranks 4 cudaDev 2 nvmlDev 2 busId 3b000 "
	                        "commId 0x9c1bd4bc26c2a1f9 - Init COMPLETE", &l) == EV_NSYS_LOG_INIT);
	CHECK(l.rank == 2 && l.nranks == 4 && l.device == 2 && l.comm == 0x55d0 && l.comm_id == 0x9c1bd4bc26c2a1f9ull);
	CHECK(ev_nsys_log_parse("h:10:11 [0] NCCL INFO Channel 01/02 :    0   1   2   3", &l) == EV_NSYS_LOG_RING);
	CHECK(l.channel == 1 && l.nchannels == 2 && l.rest && strstr(l.rest, "0   1   2   3"));
	CHECK(ev_nsys_log_parse("h:10:11 [0] NCCL INFO Trees [0] 1/-1/-1->0->-1 [1] 1/-1/-1->0->-1", &l) == EV_NSYS_LOG_TREE);
	CHECK(ev_nsys_log_parse("h:10:11 [0] NCCL INFO 2 coll channels, 2 collnet channels, 0 nvls channels, "
	                        "4 p2p channels, 2 p2p channels per peer", &l) == EV_NSYS_LOG_CHANNELS);
	CHECK(l.nchannels == 2 && l.p2p_channels == 4);
	CHECK(ev_nsys_log_parse("h:10:11 [0] NCCL INFO Bootstrap : Using eth0", &l) == 0);
	CHECK(ev_nsys_log_parse("random text", &l) == 0);
	CHECK(ev_nsys_log_parse("h:1:1 NCCL INFO Frobnicate: opCount 0 count 5", &l) == 0);
}

static void test_annotated(void)
{
	struct result res;
	convert(&res, db_from(annotated_sql), "min.sqlite", NULL);
	CHECK(res.status == 0);
	CHECK(!strcmp(res.origin, "trace"));
	const struct ev_rec *c = find(&res, EV_COLL, 0);
	CHECK(c != NULL);
	if (c) {
		CHECK(c->op == EV_OP_ALLREDUCE && c->ts == 400 && c->dur == 500 && c->bytes == 64);
		CHECK(c->comm == 0xcd && c->algo == EV_ALGO_RING && c->proto == EV_PROTO_SIMPLE);
		CHECK(c->step_size == 4096 && c->chunk_steps == 4 && c->slice_steps == 2);
		CHECK(c->dtype == EV_DT_FLOAT32 && c->redop == EV_RED_SUM);
		CHECK(c->flags & EV_F_FALLBACK);
	}
	CHECK(count(&res, EV_KERNEL) == 3);
	CHECK(strstr(res.comm_line, "#comm 205 nranks=1 ranks=0") != NULL);
	CHECK(nwarnings == 0);
	CHECK(res.interned_markers == 0);
}

/* Profiling marks cut the records outside; --window narrows further. */
static void test_window(void)
{
	char sql[4096];
	snprintf(sql, sizeof sql, "%s"
	         "INSERT INTO NVTX_EVENTS VALUES (150, NULL, 'nsys profiling start, pid: 7');"
	         "INSERT INTO NVTX_EVENTS VALUES (950, NULL, 'nsys profiling stopped, pid: 7');", annotated_sql);
	struct result res;
	convert(&res, db_from(sql), "win.sqlite", NULL);
	CHECK(res.status == 0);
	CHECK(count(&res, EV_KERNEL) == 1 && count(&res, EV_COLL) == 1);
	CHECK(res.fs.cut_before >= 1 && res.fs.cut_after == 1);
	CHECK(strstr(warnings, "win.sqlite: ") && strstr(warnings, "after the profiled window"));
	/* --window=all keeps everything; a range keeps its part. */
	struct ev_nsys_opts o = { .window = EV_NSYS_WIN_ALL };
	convert(&res, db_from(sql), "win.sqlite", &o);
	CHECK(res.status == 0 && count(&res, EV_KERNEL) == 3);
	o = (struct ev_nsys_opts){ .window = EV_NSYS_WIN_ALL, .have_range = 1, .t0 = 0, .t1 = 120 };
	convert(&res, db_from(sql), "win.sqlite", &o);
	CHECK(res.status == 0 && count(&res, EV_KERNEL) == 1 && count(&res, EV_COLL) == 0);
	if (res.n)
		CHECK(res.recs[0].ts == 50);
}

/* --steps NAME:FROM-TO keeps the chosen NVTX ranges' span. */
static void test_steps(void)
{
	char sql[4096];
	snprintf(sql, sizeof sql, "%s"
	         "INSERT INTO NVTX_EVENTS VALUES (40, 95, 'step 0 pid 7');"
	         "INSERT INTO NVTX_EVENTS VALUES (180, 960, 'step 1 pid 7');"
	         "INSERT INTO NVTX_EVENTS VALUES (990, 1200, 'step 2 pid 7');", annotated_sql);
	struct ev_nsys_opts o = { .steps = "step", .step_from = 1, .step_to = 1 };
	struct result res;
	convert(&res, db_from(sql), "steps.sqlite", &o);
	CHECK(res.status == 0 && count(&res, EV_KERNEL) == 1 && count(&res, EV_COLL) == 1);
	o.step_from = o.step_to = 7;
	convert(&res, db_from(sql), "steps.sqlite", &o);
	CHECK(res.status == EV_ERR_FORMAT && strstr(res.err, "no NVTX range named 'step*' numbered 7-7"));
}

/* Bad values are counted per file and kind, naming the table and row. */
static void test_bad_values(void)
{
	char sql[4096];
	snprintf(sql, sizeof sql, "%s"
	         "INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL VALUES ('abc', 900, 0, 3, 7 << 24, 2);"
	         "INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL VALUES ('later', 900, 0, 3, 7 << 24, 2);"
	         "INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL VALUES (1200, 1100, 0, 3, 7 << 24, 2);"
	         "INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL VALUES (1300, 1400, 0, 3, 7 << 24, 99);", annotated_sql);
	struct result res;
	convert(&res, db_from(sql), "bad.sqlite", NULL);
	CHECK(res.status == 0);
	CHECK(count(&res, EV_KERNEL) == 5); /* the two 'abc'/'later' rows are left out */
	CHECK(strstr(warnings, "bad.sqlite: CUPTI_ACTIVITY_KIND_KERNEL: 2 rows: start is not an integer") != NULL);
	CHECK(strstr(warnings, "or before start; duration 0") != NULL);
	CHECK(strstr(warnings, "string id not in StringIds") != NULL);
	/* Each kind once. */
	CHECK(nwarnings == 3);
	/* A start time that is not a number leaves the trace clock, said. */
	snprintf(sql, sizeof sql, "%s"
	         "CREATE TABLE TARGET_INFO_SESSION_START_TIME (utcEpochNs, systemClockNs);"
	         "INSERT INTO TARGET_INFO_SESSION_START_TIME VALUES ('soon', 0);", annotated_sql);
	convert(&res, db_from(sql), "utc.sqlite", NULL);
	CHECK(res.status == 0 && !strcmp(res.origin, "trace"));
	CHECK(strstr(warnings, "utc.sqlite: TARGET_INFO_SESSION_START_TIME: utcEpochNs or systemClockNs") != NULL);
	/* An absurd epoch (INT64_MAX) would saturate every time: refused too. */
	snprintf(sql, sizeof sql, "%s"
	         "CREATE TABLE TARGET_INFO_SESSION_START_TIME (utcEpochNs, systemClockNs);"
	         "INSERT INTO TARGET_INFO_SESSION_START_TIME VALUES (9223372036854775807, 0);", annotated_sql);
	convert(&res, db_from(sql), "max.sqlite", NULL);
	CHECK(res.status == 0 && !strcmp(res.origin, "trace") && count(&res, EV_KERNEL) == 3);
	/* A good one gives UTC. */
	snprintf(sql, sizeof sql, "%s"
	         "CREATE TABLE TARGET_INFO_SESSION_START_TIME (utcEpochNs, systemClockNs);"
	         "INSERT INTO TARGET_INFO_SESSION_START_TIME VALUES (1700000000000000000, 40);", annotated_sql);
	convert(&res, db_from(sql), "ok.sqlite", NULL);
	CHECK(res.status == 0 && !strcmp(res.origin, "unix"));
	if (res.n)
		CHECK(res.recs[0].ts == 1700000000000000000 + 50 - 40);
}

/* Stock NCCL: payload values decoded by the schema entries' names. */
static void put_hex(char *out, const unsigned char *b, size_t n)
{
	for (size_t i = 0; i < n; i++)
		sprintf(out + 2 * i, "%02X", b[i]);
}

static void make_blob(char *hex, uint64_t schema, const unsigned char *payload, size_t n)
{
	unsigned char b[64] = { 0 };
	ev_put64(b, 1);
	ev_put64(b + 8, schema);
	ev_put64(b + 16, n);
	memcpy(b + 32, payload, n);
	put_hex(hex, b, 32 + n);
}

static const char *const stock_schema =
	"CREATE TABLE StringIds (id INTEGER PRIMARY KEY, value TEXT);"
	"INSERT INTO StringIds VALUES (1, 'ncclDevKernel_AllReduce_Sum_bf16_RING_LL(ncclDevKernelArgsStorage<4096ul>)');"
	"INSERT INTO StringIds VALUES (2, 'ncclAllReduce'), (3, 'ncclCommInitRankConfig'), (4, 'cuLaunchKernelEx');"
	"CREATE TABLE META_DATA_EXPORT (name, value);"
	"CREATE TABLE NVTX_EVENTS (start, end, eventType, text, globalTid, textId, domainId, binaryData);"
	"CREATE TABLE NVTX_PAYLOAD_SCHEMA_ENTRIES (domainId, schemaId, idx, flags, type, name, offset);"
	"INSERT INTO NVTX_PAYLOAD_SCHEMA_ENTRIES VALUES (1, 16777221, 0, 0, 18, 'NCCL communicator ID', NULL),"
	" (1, 16777221, 1, 0, 22, 'Message size [bytes]', 8), (1, 16777221, 2, 0, 16777232, 'Reduction operation', 16),"
	" (1, 16777227, 0, 0, 18, 'NCCL communicator ID', NULL), (1, 16777227, 1, 0, 5, 'No. of ranks', 8),"
	" (1, 16777227, 2, 0, 5, 'Rank', 12), (1, 16777227, 3, 0, 5, 'CUDA device', 16);"
	"CREATE TABLE CUPTI_ACTIVITY_KIND_KERNEL (start, end, deviceId, streamId, globalPid, demangledName, correlationId, gridX, blockX);"
	"CREATE TABLE CUPTI_ACTIVITY_KIND_RUNTIME (start, end, globalTid, correlationId, nameId);";

static void stock_db(char *sql, size_t cap, int blobs, int nranks, int hex_text)
{
	unsigned char init[24] = { 0 }, ar[24] = { 0 };
	char hinit[200], har[200];
	ev_put64(init, 0xc0ffee);
	ev_put32(init + 8, (uint32_t)nranks);
	ev_put64(ar, 0xc0ffee);
	ev_put64(ar + 8, 1 << 20);
	ev_put32(ar + 16, 2); /* ncclMax */
	make_blob(hinit, 16777227, init, 24);
	make_blob(har, 16777221, ar, 24);
	const char *q = hex_text ? "'" : "X'";
	snprintf(sql, cap, "%s"
	         "INSERT INTO META_DATA_EXPORT VALUES ('EXPORT_PARAM_INCLUDE_BLOBS', '%s');"
	         "INSERT INTO NVTX_EVENTS VALUES (10, 20, 59, NULL, (7 << 24) | 7, 3, 1, %s%s%s);"
	         "INSERT INTO NVTX_EVENTS VALUES (100, 200, 59, NULL, (7 << 24) | 7, 2, 1, %s%s%s);"
	         "INSERT INTO CUPTI_ACTIVITY_KIND_RUNTIME VALUES (150, 160, (7 << 24) | 7, 42, 4);"
	         "INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL VALUES (300, 800, 0, 7, 7 << 24, 1, 42, 2, 544);",
	         stock_schema, blobs ? "true" : "false", blobs ? q : "", blobs ? hinit : "NULL", blobs ? "'" : "",
	         blobs ? q : "", blobs ? har : "NULL", blobs ? "'" : "");
}

static void test_stock_payload(void)
{
	char sql[8192];
	struct result res;
	for (int hex = 0; hex < 2; hex++) {
		stock_db(sql, sizeof sql, 1, 1, hex);
		convert(&res, db_from(sql), "stock.sqlite", NULL);
		CHECK(res.status == 0);
		const struct ev_rec *c = find(&res, EV_COLL, 0);
		CHECK(c != NULL);
		if (c) {
			CHECK(c->bytes == 1 << 20 && c->comm == 0xc0ffee && c->redop == EV_RED_MAX);
			CHECK(c->dtype == EV_DT_BFLOAT16 && c->id == 42 && !(c->flags & EV_F_FALLBACK));
			CHECK(c->ts == 300 && c->channel == 2 && c->nthreads == 544);
			CHECK(c->algo == EV_ALGO_RING && c->proto == EV_PROTO_SIMPLE); /* from the name and 544 threads */
		}
		CHECK(strstr(res.comm_line, "nranks=1 ranks=0") != NULL);
	}
}

/* A communicator with a member whose export is missing is named. */
static void test_missing_member(void)
{
	char sql[8192];
	struct result res;
	stock_db(sql, sizeof sql, 1, 3, 0);
	convert(&res, db_from(sql), "rank0.sqlite", NULL);
	CHECK(res.status == 0);
	CHECK(strstr(warnings, "communicator 0000000000c0ffee (3 ranks): ranks 1,2 have no export among the files "
	                       "read (rank0.sqlite)") != NULL);
}

/* No payload values: the warning says what to re-export; a log fills in. */
static void test_no_payload_and_log(void)
{
	char sql[8192];
	struct result res;
	stock_db(sql, sizeof sql, 0, 1, 0);
	convert(&res, db_from(sql), "noblobs.sqlite", NULL);
	CHECK(res.status == 0);
	const struct ev_rec *c = find(&res, EV_COLL, 0);
	CHECK(c && c->bytes == 0);
	CHECK(strstr(warnings, "noblobs.sqlite: 1 of 1 NCCL calls have no size") != NULL);
	CHECK(strstr(warnings, "--include-blobs=true") != NULL);
	char log[] = "/tmp/test_nsys_log.XXXXXX";
	int fd = mkstemp(log);
	CHECK(fd >= 0);
	FILE *f = fdopen(fd, "w");
	fputs("host:7:7 [0] NCCL INFO comm 0x5500 rank 0 nranks 1 cudaDev 0 nvmlDev 0 busId 1000 commId 0xfeed - Init START\n"
	      "host:7:7 [0] NCCL INFO Channel 00/01 :    0\n"
	      "host:7:7 [0] NCCL INFO AllReduce: opCount 0 sendbuff 0x1 recvbuff 0x2 count 2048 datatype 9 op 3 root 0 "
	      "comm 0x5500 [nranks=1] stream 0x9\n"
	      "host:99:99 [0] NCCL INFO AllReduce: opCount 0 sendbuff 0x1 recvbuff 0x2 count 8 datatype 9 op 0 root 0 "
	      "comm 0x7700 [nranks=1] stream 0x9\n", f);
	fclose(f);
	struct ev_nsys_opts o = { .nccl_log = log };
	stock_db(sql, sizeof sql, 0, 1, 0);
	convert(&res, db_from(sql), "noblobs.sqlite", &o);
	CHECK(res.status == 0);
	c = find(&res, EV_COLL, 0);
	CHECK(c != NULL);
	if (c)
		CHECK(c->bytes == 4096 && c->comm == 0xfeed && c->redop == EV_RED_MIN && c->dtype == EV_DT_BFLOAT16);
	CHECK(strstr(res.comm_line, "#comm 65261 nranks=1 ranks=0") != NULL);
	CHECK(strstr(warnings, "1 of 2 NCCL calls logged by processes that are in none of the exports") != NULL);
	CHECK(strstr(warnings, "have no size") == NULL);
	unlink(log);
}

/* Not an export, a damaged query, and an unwritable output: statuses with
 * messages, nothing printed. */
static void test_errors(void)
{
	struct result res;
	convert(&res, db_from("CREATE TABLE foo (a); INSERT INTO foo VALUES (1);"), "other.sqlite", NULL);
	CHECK(res.status == EV_ERR_FORMAT);
	CHECK(!strcmp(res.err, "other.sqlite: not an Nsight Systems export (no CUPTI_ACTIVITY_KIND_* or NVTX_EVENTS table)"));
	convert(&res, db_from("CREATE TABLE CUPTI_ACTIVITY_KIND_KERNEL (start, deviceId);"), "nocol.sqlite", NULL);
	CHECK(res.status == EV_ERR_FORMAT && strstr(res.err, "lacks start, end or demangledName"));
	ev_nsys *ns;
	CHECK(ev_nsys_new(&ns, &(struct ev_nsys_opts){ .node_regex = "(" }) == EV_ERR_ARG);
	CHECK(strstr(ev_nsys_errmsg(ns), "--node-regex") != NULL);
	ev_nsys_free(ns);
	CHECK(ev_nsys_new(&ns, NULL) == EV_OK);
	CHECK(ev_nsys_add_file(ns, "/nonexistent/x.sqlite") == EV_ERR_IO);
	CHECK(strstr(ev_nsys_errmsg(ns), "/nonexistent/x.sqlite: ") == ev_nsys_errmsg(ns));
	ev_nsys_free(ns);
	/* A write failure in the main pass is a status with the output named. */
	ev_writer *w;
	CHECK(ev_nsys_new(&ns, NULL) == EV_OK);
	CHECK(ev_nsys_add_db(ns, db_from(annotated_sql), "min.sqlite") == EV_OK);
	CHECK(ev_nsys_prepare(ns) == EV_OK);
	if (access("/dev/full", W_OK) == 0 && ev_writer_open(&w, "-", ev_nsys_strtab(ns)) == EV_OK) {
		/* stdout redirected to /dev/full for the write. */
		fflush(stdout);
		int saved = dup(1);
		FILE *full = freopen("/dev/full", "w", stdout);
		int rc = ev_nsys_write(ns, w, NULL, NULL);
		if (!rc)
			rc = ev_writer_close(w);
		else
			ev_writer_abort(w);
		fflush(stdout);
		dup2(saved, 1);
		close(saved);
		(void)full;
		CHECK(rc != EV_OK);
	}
	ev_nsys_free(ns);
}

int main(void)
{
	RUN(test_marker_num);
	RUN(test_log_parse);
	RUN(test_annotated);
	RUN(test_window);
	RUN(test_steps);
	RUN(test_bad_values);
	RUN(test_stock_payload);
	RUN(test_missing_member);
	RUN(test_no_payload_and_log);
	RUN(test_errors);
	unlink(out_path);
	return unit_report("test_nsys");
}
