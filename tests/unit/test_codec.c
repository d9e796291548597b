/* SPDX-License-Identifier: MIT */
/*
 * test_codec.c - unit tests of the ev stream library: record encoding,
 * escaping, string ids, segments, truncation and version checks.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ev.h"
#include "stream/internal.h" /* struct ev_output: its descriptor, to watch the file grow */
#include "unit.h"

static char tmpdir[] = "/tmp/ev-unit-XXXXXX";

static char *path_in_tmp(const char *name)
{
	static char buf[4][256];
	static int next;
	char *p = buf[next++ & 3];
	snprintf(p, 256, "%s/%s", tmpdir, name);
	return p;
}

static void write_file(const char *path, const void *data, size_t n)
{
	FILE *f = fopen(path, "wb");
	if (!f || (n && fwrite(data, 1, n, f) != n) || fclose(f) != 0) {
		perror(path);
		exit(2);
	}
}

static char *read_file(const char *path, size_t *n)
{
	FILE *f = fopen(path, "rb");
	if (!f) {
		perror(path);
		exit(2);
	}
	size_t cap = 1 << 16, len = 0;
	char *b = malloc(cap);
	size_t got;
	while ((got = fread(b + len, 1, cap - len, f)) > 0) {
		len += got;
		if (len == cap)
			b = realloc(b, cap *= 2);
	}
	fclose(f);
	*n = len;
	return b;
}

/* Read a whole stream: returns the final status, counts records. */
static int read_all(const char *path, uint64_t *nrec, struct ev_rec *last, char *detail, size_t dn)
{
	ev_reader *r;
	struct ev_rec rec;
	int rc = ev_reader_open(&r, path, NULL, NULL);
	*nrec = 0;
	if (rc)
		return rc;
	while ((rc = ev_read(r, &rec)) > 0)
		if (rc == EV_REC) {
			(*nrec)++;
			if (last)
				*last = rec;
		}
	if (detail)
		snprintf(detail, dn, "%s", ev_reader_errdetail(r));
	ev_reader_close(r);
	return rc;
}

static void test_hash(void)
{
	CHECK(ev_hash64("", 0) == 0);
	CHECK(ev_hash64("a", 1) != 0);
	CHECK(ev_hash64("a", 1) != ev_hash64("b", 1));
	CHECK(ev_hash64("abcdefgh", 8) != ev_hash64("abcdefgh\0", 9));
	/* Test vectors published in docs/FORMAT.md; they pin the algorithm. */
	CHECK(ev_hash64("a", 1) == 0xcff5f949b826a543ULL);
	CHECK(ev_hash64("ncclDevKernel_Generic_1", 23) == 0x615986352a6b6112ULL);
}

static void test_record_roundtrip(void)
{
	struct ev_rec a, b;
	unsigned char buf[EV_RECORD_SIZE];
	ev_rec_init(&a);
	CHECK(a.peer == -1);
	a.type = EV_COLL; a.op = EV_OP_ALLREDUCE; a.algo = EV_ALGO_RING; a.proto = EV_PROTO_LL128;
	a.dtype = EV_DT_BFLOAT16; a.redop = EV_RED_SUM; a.flags = EV_F_INTRA | EV_F_GROUP;
	a.rank = 4000000000u; a.stream = 7; a.ts = -123456789012345; a.dur = UINT64_MAX;
	a.bytes = 1ULL << 40; a.name = 0x0a5c0a5c0a5c0a5cULL; a.sig = 42; a.comm = 0xFFFFFFFFFFFFFFFFULL;
	a.seq = 99; a.peer = -7; a.id = 12; a.channel = 65535; a.src = 3; a.step = 8; a.aux = 0xDEADBEEF;
	a.nthreads = 512; a.chunk_steps = 4; a.slice_steps = 2; a.step_size = 524288;
	ev_rec_encode(&a, buf);
	ev_rec_decode(buf, &b);
	CHECK(memcmp(&a, &b, sizeof a) == 0);
	/* Fixed offsets, little-endian: spot checks against FORMAT.md section 4. */
	CHECK(buf[0] == EV_COLL && buf[6] == EV_F_INTRA && buf[7] == 1);
	CHECK(ev_le32(buf + 8) == 4000000000u);
	CHECK(ev_le64(buf + 56) == UINT64_MAX);
	CHECK((int32_t)ev_le32(buf + 68) == -7);
	CHECK(ev_le16(buf + 76) == 65535 && ev_le16(buf + 88) == 512 && buf[90] == 4 && buf[91] == 2);
	CHECK(ev_le32(buf + 92) == 524288);
	/* Every other field at its offset too (encoding is one copy of the
	 * struct on little-endian hosts: this holds the struct to the spec). */
	CHECK(buf[1] == EV_OP_ALLREDUCE && buf[2] == EV_ALGO_RING && buf[3] == EV_PROTO_LL128);
	CHECK(buf[4] == EV_DT_BFLOAT16 && buf[5] == EV_RED_SUM);
	CHECK(ev_le32(buf + 12) == 7 && (int64_t)ev_le64(buf + 16) == -123456789012345);
	CHECK(ev_le64(buf + 24) == UINT64_MAX && ev_le64(buf + 32) == 1ULL << 40);
	CHECK(ev_le64(buf + 40) == 0x0a5c0a5c0a5c0a5cULL && ev_le64(buf + 48) == 42);
	CHECK(ev_le32(buf + 64) == 99 && ev_le32(buf + 72) == 12 && ev_le16(buf + 78) == 3);
	CHECK(ev_le32(buf + 80) == 8 && ev_le32(buf + 84) == 0xDEADBEEF);
}

static void test_enum_names(void)
{
	unsigned v;
	CHECK(strcmp(ev_type_name(EV_KERNEL), "kernel") == 0);
	CHECK(ev_type_parse("coll", &v) == 0 && v == EV_COLL);
	CHECK(ev_type_parse("10", &v) != 0); /* 0x0A never names a type */
	CHECK(ev_type_parse("31", &v) == 0 && v == 31);
	CHECK(ev_op_parse(EV_COLL, "reducescatter", &v) == 0 && v == EV_OP_REDUCESCATTER);
	CHECK(ev_op_parse(EV_KERNEL, "gemm", &v) == 0 && v == EV_KC_GEMM);
	CHECK(ev_op_parse(EV_KERNEL, "allreduce", &v) != 0);
	CHECK(ev_dtype_size(EV_DT_BFLOAT16) == 2 && ev_dtype_size(EV_DT_FLOAT64) == 8);
	char buf[160];
	ev_flags_format(EV_F_PHASE_RS | EV_F_IREQ | (1u << 13), buf, sizeof buf);
	CHECK(strcmp(buf, "phase_rs|ireq|b13") == 0);
	CHECK(ev_flags_parse(buf, &v) == 0 && v == (EV_F_PHASE_RS | EV_F_IREQ | (1u << 13)));
	CHECK(ev_flags_parse("nonsense", &v) != 0);
}

static void test_text_escape(void)
{
	char out[64], in[] = "a\\b\tc\nd";
	size_t n = ev_text_escape(in, strlen(in), out, sizeof out);
	CHECK(n == 10 && strcmp(out, "a\\\\b\\tc\\nd") == 0);
	n = ev_text_unescape(out, n);
	CHECK(n == strlen(in) && memcmp(out, in, n) == 0);
	char bad[] = "x\\q";
	CHECK(ev_text_unescape(bad, 3) == (size_t)-1);
	char j[64];
	n = ev_json_escape("q\"\x01\xff", 4, j, sizeof j);
	CHECK(n == 17 && memcmp(j, "\"q\\\"\\u0001\\ufffd\"", n) == 0);
}

/* Write records whose every byte is 0x0A or 0x5C and read them back. */
static void test_escape_heavy_records(void)
{
	ev_strtab *st = ev_strtab_new();
	ev_writer *w;
	const char *p = path_in_tmp("heavy.ev");
	CHECK(ev_writer_open(&w, p, st) == EV_OK);
	struct ev_rec r[2];
	for (int k = 0; k < 2; k++) {
		unsigned char raw[EV_RECORD_SIZE];
		memset(raw, k ? 0x5C : 0x0A, sizeof raw);
		raw[0] = EV_KERNEL;
		raw[6] = raw[7] = 0; /* flags: reserved bits must stay zero */
		ev_rec_decode(raw, &r[k]);
		r[k].name = r[k].sig = 0;
		CHECK(ev_write(w, &r[k]) == EV_OK);
	}
	CHECK(ev_writer_close(w) == EV_OK);
	ev_reader *rd;
	struct ev_rec got;
	CHECK(ev_reader_open(&rd, p, st, NULL) == EV_OK);
	for (int k = 0; k < 2; k++) {
		CHECK(ev_read(rd, &got) == EV_REC);
		CHECK(memcmp(&got, &r[k], sizeof got) == 0);
	}
	CHECK(ev_read(rd, &got) == EV_EOF);
	ev_reader_close(rd);
	ev_strtab_free(st);
}

/* One byte to escape (LF or backslash), or two side by side, at every
 * position of a record the writer may set freely: the line holds one escape
 * per such byte and reads back as the same record. */
static void test_escape_every_position(void)
{
	ev_strtab *st = ev_strtab_new();
	ev_writer *w;
	const char *p = path_in_tmp("positions.ev");
	CHECK(ev_writer_open(&w, p, st) == EV_OK);
	enum { MAXR = 3 * EV_RECORD_SIZE };
	static struct ev_rec r[MAXR];
	static int nesc[MAXR];
	int n = 0;
	for (int pair = 0; pair < 3; pair++)
		for (size_t j = 8; j < EV_RECORD_SIZE; j++) {
			if (j >= 40 && j < 56)
				continue; /* name and sig: string ids, 0 here */
			unsigned char raw[EV_RECORD_SIZE];
			memset(raw, 'A', sizeof raw);
			raw[0] = EV_KERNEL;
			raw[6] = raw[7] = 0;
			memset(raw + 40, 0, 16);
			raw[j] = pair == 1 ? '\\' : '\n';
			nesc[n] = 1;
			if (pair == 2 && j + 1 < EV_RECORD_SIZE && (j + 1 < 40 || j + 1 >= 56)) {
				raw[j + 1] = '\\';
				nesc[n] = 2;
			}
			ev_rec_decode(raw, &r[n]);
			CHECK(ev_write(w, &r[n]) == EV_OK);
			n++;
		}
	CHECK(ev_writer_close(w) == EV_OK);
	ev_reader *rd;
	struct ev_rec got;
	CHECK(ev_reader_open(&rd, p, st, NULL) == EV_OK);
	for (int k = 0; k < n; k++) {
		CHECK(ev_read(rd, &got) == EV_REC);
		CHECK(memcmp(&got, &r[k], sizeof got) == 0);
		const char *line;
		size_t len;
		ev_reader_record_line(rd, &line, &len);
		CHECK(len == EV_RECORD_SIZE + (size_t)nesc[k]);
	}
	CHECK(ev_read(rd, &got) == EV_EOF);
	ev_reader_close(rd);
	ev_strtab_free(st);
}

/* A bad record anywhere in a stream (the first, the last, either side of
 * 64 and 128 records) is named by its own record and line number. */
static void test_error_position(void)
{
	static const int bad_at[] = { 1, 2, 63, 64, 65, 66, 128, 129, 200 };
	for (size_t b = 0; b < sizeof bad_at / sizeof bad_at[0]; b++) {
		/* A file read once is an input for the rest of the process: a new
		 * name each time. */
		char name[32];
		snprintf(name, sizeof name, "badrec%zu.ev", b);
		const char *p = path_in_tmp(name);
		ev_strtab *st = ev_strtab_new();
		ev_writer *w;
		CHECK(ev_writer_open(&w, p, st) == EV_OK);
		struct ev_rec r;
		ev_rec_init(&r);
		r.type = EV_KERNEL;
		r.dur = 0x4141414141414141ULL; /* no byte to escape anywhere */
		for (int i = 1; i <= 200; i++) {
			r.ts = 0x4141414141414100LL + i;
			CHECK(ev_write(w, &r) == EV_OK);
		}
		CHECK(ev_writer_close(w) == EV_OK);
		ev_strtab_free(st);
		/* Set a reserved flag bit of record bad_at[b] (line bad_at[b] + 1):
		 * records hold NUL bytes, so lines are counted byte by byte. */
		FILE *f = fopen(p, "r+b");
		int c, lineno = 1;
		long at = 0;
		while (f && lineno < bad_at[b] + 1 && (c = fgetc(f)) != EOF) {
			at++;
			if (c == '\n')
				lineno++;
		}
		CHECK(f && lineno == bad_at[b] + 1 && fseek(f, at + 7, SEEK_SET) == 0 && fputc(0x40, f) != EOF);
		if (f)
			fclose(f);
		uint64_t n;
		char detail[512], want[64];
		CHECK(read_all(p, &n, NULL, detail, sizeof detail) == EV_ERR_FORMAT);
		CHECK(n == (uint64_t)bad_at[b] - 1);
		snprintf(want, sizeof want, "record %d (line %d)", bad_at[b], bad_at[b] + 1);
		CHECK(strstr(detail, want) != NULL);
	}
}

static void test_strings(void)
{
	ev_strtab *st = ev_strtab_new();
	uint64_t id;
	/* 100k distinct strings, then a maximal (1 MiB, all escapes) one. */
	ev_writer *w;
	const char *p = path_in_tmp("strings.ev");
	CHECK(ev_writer_open(&w, p, st) == EV_OK);
	char name[32];
	struct ev_rec r;
	ev_rec_init(&r);
	r.type = EV_KERNEL;
	for (int i = 0; i < 100000; i++) {
		int n = snprintf(name, sizeof name, "kernel_%d", i);
		CHECK(ev_strtab_intern(st, name, (size_t)n, &id) == EV_OK);
		r.name = id;
		r.ts = i;
		if (ev_write(w, &r) != EV_OK) {
			CHECK(0);
			break;
		}
	}
	size_t big = 1 << 20;
	char *text = malloc(big);
	for (size_t i = 0; i < big; i++)
		text[i] = "\\\t\nx"[i % 4];
	CHECK(ev_strtab_intern(st, text, big, &id) == EV_OK);
	r.name = id;
	r.ts = 100000;
	CHECK(ev_write(w, &r) == EV_OK);
	CHECK(ev_writer_close(w) == EV_OK);
	CHECK(ev_strtab_count(st) == 100001);

	ev_strtab *st2 = ev_strtab_new();
	ev_reader *rd;
	CHECK(ev_reader_open(&rd, p, st2, NULL) == EV_OK);
	uint64_t n = 0;
	int rc;
	struct ev_rec got;
	while ((rc = ev_read(rd, &got)) == EV_REC)
		n++;
	CHECK(rc == EV_EOF && n == 100001);
	size_t len;
	const char *t = ev_strtab_get(st2, got.name, &len);
	CHECK(t && len == big && memcmp(t, text, big) == 0);
	CHECK(ev_strtab_count(st2) == 100001);
	ev_reader_close(rd);
	/* A different text under an existing id is a collision. */
	CHECK(ev_strtab_define(st2, got.name, "other", 5) == EV_ERR_FORMAT);
	free(text);
	ev_strtab_free(st);
	ev_strtab_free(st2);

	/* The recent-text cache: names alike in their first, middle and last
	 * eight bytes (the cheap key's words), lengths 0 to 40, interned three
	 * times over in an order that evicts and hits, always get their own
	 * id, and the table holds each text once. */
	ev_strtab *st3 = ev_strtab_new();
	char alike[64];
	size_t counted[3];
	for (int round = 0; round < 3; round++) {
		for (size_t n3 = 0; n3 <= 40; n3++)
			for (int v = 0; v < 40; v++) {
				memset(alike, 'k', sizeof alike);
				if (n3 > 0)
					alike[(size_t)v % n3] = (char)('A' + v % 26); /* anywhere, the keyed words too */
				if (n3 > 17)
					alike[8 + (size_t)v % (n3 - 16)] = (char)('a' + v % 26); /* between them */
				CHECK(ev_strtab_intern(st3, alike, n3, &id) == EV_OK);
				CHECK(id == ev_hash64(alike, n3));
				size_t got_len;
				const char *got3 = ev_strtab_get(st3, id, &got_len);
				CHECK(got3 && got_len == n3 && memcmp(got3, alike, n3) == 0);
			}
		counted[round] = ev_strtab_count(st3);
	}
	CHECK(counted[0] > 1000 && counted[1] == counted[0] && counted[2] == counted[0]);
	ev_strtab_free(st3);

	/* 10,000 names (more than the id caches' 4096 slots) used three times
	 * round, in an order that hits, misses and evicts: each #str is written
	 * once, before its first use, and every record reads back its name. */
	ev_strtab *st4 = ev_strtab_new();
	p = path_in_tmp("revisit.ev");
	CHECK(ev_writer_open(&w, p, st4) == EV_OK);
	for (int i = 0; i < 30000; i++) {
		int k = (i * 7919) % 10000;
		int n4 = snprintf(name, sizeof name, "k%d", k);
		CHECK(ev_strtab_intern(st4, name, (size_t)n4, &id) == EV_OK);
		r.name = id;
		r.ts = i;
		CHECK(ev_write(w, &r) == EV_OK);
	}
	CHECK(ev_writer_close(w) == EV_OK);
	FILE *f = fopen(p, "rb");
	char line[256];
	size_t nstr = 0;
	while (f && fgets(line, sizeof line, f))
		nstr += strncmp(line, "#str ", 5) == 0;
	if (f)
		fclose(f);
	CHECK(nstr == 10000);
	ev_strtab *st5 = ev_strtab_new();
	CHECK(ev_reader_open(&rd, p, st5, NULL) == EV_OK);
	n = 0;
	while ((rc = ev_read(rd, &got)) == EV_REC) {
		int n5 = snprintf(name, sizeof name, "k%d", (int)((got.ts * 7919) % 10000));
		const char *t5 = ev_strtab_get(st5, got.name, &len);
		CHECK(t5 && len == (size_t)n5 && memcmp(t5, name, len) == 0);
		n++;
	}
	CHECK(rc == EV_EOF && n == 30000);
	ev_reader_close(rd);
	ev_strtab_free(st4);
	ev_strtab_free(st5);
}

/* Strings interned in a table of their own (another thread's) join
 * another table under the same ids; one it has already adds nothing. */
static void test_strtab_absorb(void)
{
	ev_strtab *a = ev_strtab_new(), *b = ev_strtab_new();
	uint64_t x, y, z;
	size_t n;
	CHECK(a && b);
	CHECK(ev_strtab_intern(a, "shared", 6, &x) == EV_OK);
	CHECK(ev_strtab_intern(b, "shared", 6, &x) == EV_OK);
	for (int i = 0; i < 3000; i++) { /* past b's first table size */
		char s[32];
		int len = snprintf(s, sizeof s, "kernel_%d", i);
		CHECK(ev_strtab_intern(b, s, (size_t)len, &y) == EV_OK);
	}
	CHECK(ev_strtab_intern(b, "last", 4, &z) == EV_OK);
	CHECK(ev_strtab_absorb(a, b) == EV_OK);
	CHECK(ev_strtab_count(a) == 3002);
	const char *t = ev_strtab_get(a, z, &n);
	CHECK(t && n == 4 && !memcmp(t, "last", 4));
	CHECK(ev_strtab_get(a, y, NULL) && !strcmp(ev_strtab_get(a, y, NULL), "kernel_2999"));
	ev_strtab_free(b);
	b = ev_strtab_new();
	CHECK(ev_strtab_define(b, x, "shared", 6) == EV_OK);
	CHECK(ev_strtab_absorb(a, b) == EV_OK); /* the same text: nothing new */
	CHECK(ev_strtab_count(a) == 3002);
	ev_strtab_free(a);
	ev_strtab_free(b);
}

static void test_segments_and_errors(void)
{
	char detail[512];
	uint64_t n;
	struct ev_rec last;
	/* Build one valid segment with two records. */
	ev_strtab *st = ev_strtab_new();
	ev_writer *w;
	const char *seg = path_in_tmp("seg.ev");
	CHECK(ev_writer_open(&w, seg, st) == EV_OK);
	CHECK(ev_writer_header(w, "origin", "unix") == EV_OK);
	CHECK(ev_write_text(w, "#rank 0 host=a", 14) == EV_OK);
	CHECK(ev_write_text(w, "#rank 0 host=a", 14) == EV_OK); /* deduplicated */
	CHECK(ev_write_text(w, "#frob unknown", 13) == EV_OK);
	struct ev_rec r;
	ev_rec_init(&r);
	r.type = EV_KERNEL;
	CHECK(ev_strtab_intern(st, "k", 1, &r.name) == EV_OK);
	CHECK(ev_write(w, &r) == EV_OK);
	r.ts = 5;
	CHECK(ev_write(w, &r) == EV_OK);
	CHECK(ev_writer_close(w) == EV_OK);
	ev_strtab_free(st);

	size_t len;
	char *data = read_file(seg, &len);
	CHECK(strstr(data, "#ev 1.1 96 clock=ns origin=unix\n") == data);
	CHECK(memmem(data, len, "#rank 0 host=a\n#frob", 20) != NULL); /* one copy */
	CHECK(read_all(seg, &n, &last, detail, sizeof detail) == EV_EOF && n == 2 && last.ts == 5);

	/* Concatenated segments read as one stream. */
	char *two = malloc(2 * len);
	memcpy(two, data, len);
	memcpy(two + len, data, len);
	const char *cat = path_in_tmp("cat.ev");
	write_file(cat, two, 2 * len);
	CHECK(read_all(cat, &n, NULL, NULL, 0) == EV_EOF && n == 4);

	/* Truncations: without #end, without the final newline, mid-record. */
	const char *t = path_in_tmp("trunc.ev");
	char *end = memmem(data, len, "#end", 4);
	write_file(t, data, (size_t)(end - data));
	CHECK(read_all(t, &n, NULL, detail, sizeof detail) == EV_ERR_TRUNCATED && strstr(detail, "truncated"));
	write_file(t, data, len - 1);
	CHECK(read_all(t, &n, NULL, detail, sizeof detail) == EV_ERR_TRUNCATED);
	write_file(t, data, (size_t)(end - data) - 10);
	CHECK(read_all(t, &n, NULL, detail, sizeof detail) == EV_ERR_TRUNCATED);
	/* Two segments where the first lost its #end. */
	memcpy(two, data, (size_t)(end - data));
	memcpy(two + (end - data), data, len);
	write_file(t, two, (size_t)(end - data) + len);
	CHECK(read_all(t, &n, NULL, detail, sizeof detail) == EV_ERR_TRUNCATED && strstr(detail, "no #end"));

	/* Wrong #end count. */
	char *bad = malloc(len + 16);
	size_t pre = (size_t)(end - data);
	memcpy(bad, data, pre);
	size_t bl = pre + (size_t)sprintf(bad + pre, "#end 3\n");
	write_file(t, bad, bl);
	CHECK(read_all(t, &n, NULL, detail, sizeof detail) == EV_ERR_TRUNCATED && strstr(detail, "#end says 3"));

	/* Unknown major version; unknown minor with a larger record is fine. */
	const char *v2 = "#ev 2.0 96 clock=ns\n#end 0\n";
	write_file(t, v2, strlen(v2));
	CHECK(read_all(t, &n, NULL, detail, sizeof detail) == EV_ERR_VERSION);
	char future[512];
	unsigned char rec[104];
	memset(rec, 0, sizeof rec);
	rec[0] = EV_MARK;
	rec[16] = 9;
	memset(rec + 96, 0x33, 8);
	size_t fl = (size_t)sprintf(future, "#ev 1.7 104 clock=ns\n");
	memcpy(future + fl, rec, sizeof rec);
	fl += sizeof rec;
	fl += (size_t)sprintf(future + fl, "\n#end 1\n");
	write_file(t, future, fl);
	CHECK(read_all(t, &n, &last, detail, sizeof detail) == EV_EOF && n == 1 && last.ts == 9 && last.type == EV_MARK);
	/* Wrong record size for 1.0. */
	fl = (size_t)sprintf(future, "#ev 1.0 96\n");
	memcpy(future + fl, rec, 95);
	fl += 95;
	fl += (size_t)sprintf(future + fl, "\n#end 1\n");
	write_file(t, future, fl);
	CHECK(read_all(t, &n, NULL, detail, sizeof detail) == EV_ERR_FORMAT && strstr(detail, "record size 95"));
	/* Reserved flag bit set. */
	fl = (size_t)sprintf(future, "#ev 1.0 96\n");
	memcpy(future + fl, rec, 96);
	future[fl + 7] = (char)0x80;
	fl += 96;
	fl += (size_t)sprintf(future + fl, "\n#end 1\n");
	write_file(t, future, fl);
	CHECK(read_all(t, &n, NULL, detail, sizeof detail) == EV_ERR_FORMAT && strstr(detail, "reserved"));
	/* Bit 11 (noflow) is 1.1's: reserved in a 1.0 stream, read in a 1.1
	 * one; bit 12 is reserved in 1.1 and a newer minor's own. */
	static const struct { const char *ver; unsigned char hi; int rc; } fv[] = {
		{ "1.0", 0x08, EV_ERR_FORMAT }, { "1.1", 0x08, EV_EOF }, { "1.1", 0x10, EV_ERR_FORMAT },
		{ "1.2", 0x10, EV_EOF },
	};
	for (size_t i = 0; i < sizeof fv / sizeof fv[0]; i++) {
		fl = (size_t)sprintf(future, "#ev %s 96\n", fv[i].ver);
		memcpy(future + fl, rec, 96);
		future[fl + 7] = (char)fv[i].hi;
		fl += 96;
		fl += (size_t)sprintf(future + fl, "\n#end 1\n");
		write_file(t, future, fl);
		CHECK(read_all(t, &n, &last, detail, sizeof detail) == fv[i].rc);
		CHECK(fv[i].rc != EV_EOF || last.flags == (unsigned)fv[i].hi << 8);
	}
	/* Invalid escape. */
	fl = (size_t)sprintf(future, "#ev 1.0 96\n");
	memcpy(future + fl, rec, 96);
	future[fl + 20] = '\\';
	future[fl + 21] = 'x';
	fl += 96;
	fl += (size_t)sprintf(future + fl, "\n#end 1\n");
	write_file(t, future, fl);
	CHECK(read_all(t, &n, NULL, detail, sizeof detail) == EV_ERR_FORMAT && strstr(detail, "escape"));
	/* A record naming an undefined string. */
	fl = (size_t)sprintf(future, "#ev 1.0 96\n");
	memcpy(future + fl, rec, 96);
	future[fl + 40] = 1;
	fl += 96;
	fl += (size_t)sprintf(future + fl, "\n#end 1\n");
	write_file(t, future, fl);
	CHECK(read_all(t, &n, NULL, detail, sizeof detail) == EV_ERR_NOSTR);
	/* A #str whose id is not its hash. */
	const char *badstr = "#ev 1.0 96\n#str 0000000000000001 abc\n#end 0\n";
	write_file(t, badstr, strlen(badstr));
	CHECK(read_all(t, &n, NULL, detail, sizeof detail) == EV_ERR_FORMAT && strstr(detail, "hash"));
	/* Empty input and garbage. */
	write_file(t, "", 0);
	CHECK(read_all(t, &n, NULL, detail, sizeof detail) == EV_ERR_FORMAT && strstr(detail, "empty"));
	write_file(t, "hello\n", 6);
	CHECK(read_all(t, &n, NULL, detail, sizeof detail) == EV_ERR_FORMAT);
	free(bad);
	free(two);
	free(data);
}

/* Read PATH to its end with strtab st (shared by the caller's readers). */
static int read_with(const char *path, ev_strtab *st)
{
	ev_reader *r;
	struct ev_rec rec;
	int rc = ev_reader_open(&r, path, st, NULL);
	if (rc)
		return rc;
	while ((rc = ev_read(r, &rec)) > 0)
		;
	ev_reader_close(r);
	return rc;
}

/* A string is defined for the segment whose #str defined it, whichever
 * reader of a shared table defined it first (the table's stamp) or
 * defined it again (the reader's own set). */
static void test_str_defined_per_segment(void)
{
	ev_strtab *st = ev_strtab_new();
	ev_writer *w;
	const char *one = path_in_tmp("def1.ev"), *bare = path_in_tmp("def0.ev"), *two = path_in_tmp("def2.ev");
	CHECK(ev_writer_open(&w, one, st) == EV_OK);
	struct ev_rec r;
	ev_rec_init(&r);
	r.type = EV_KERNEL;
	CHECK(ev_strtab_intern(st, "k", 1, &r.name) == EV_OK);
	CHECK(ev_write(w, &r) == EV_OK);
	CHECK(ev_writer_close(w) == EV_OK);
	ev_strtab_free(st);
	/* The same segment without its #str line, and the two in a row. */
	size_t n, b = 0;
	char *text = read_file(one, &n), *buf = malloc(2 * n);
	const char *str = strstr(text, "#str "), *eol = str ? strchr(str, '\n') : NULL;
	CHECK(buf && str && eol);
	if (!buf || !str || !eol) {
		free(text);
		free(buf);
		return;
	}
	memcpy(buf, text, (size_t)(str - text));
	b = (size_t)(str - text);
	memcpy(buf + b, eol + 1, n - (size_t)(eol + 1 - text));
	b += n - (size_t)(eol + 1 - text);
	write_file(bare, buf, b);
	/* def2: def1's segment, then the bare one, whose record names "k"
	 * that only the first segment defined. */
	memmove(buf + n, buf, b);
	memcpy(buf, text, n);
	write_file(two, buf, n + b);
	free(text);
	free(buf);
	CHECK(read_with(one, NULL) == EV_EOF);
	CHECK(read_with(bare, NULL) == EV_ERR_NOSTR);
	CHECK(read_with(two, NULL) == EV_ERR_NOSTR);
	/* One table for several readers: the first defines "k" (its stamp),
	 * the next defines it again (already held), a third without a #str
	 * may not name it. */
	st = ev_strtab_new();
	CHECK(read_with(one, st) == EV_EOF);
	CHECK(read_with(one, st) == EV_EOF);
	CHECK(read_with(bare, st) == EV_ERR_NOSTR);
	CHECK(read_with(two, st) == EV_ERR_NOSTR);
	/* Two readers open at once on one table. */
	ev_reader *ra, *rb;
	struct ev_rec rec;
	int rca, rcb;
	CHECK(ev_reader_open(&ra, one, st, NULL) == EV_OK && ev_reader_open(&rb, bare, st, NULL) == EV_OK);
	while ((rca = ev_read(ra, &rec)) > 0 && rca != EV_REC)
		;
	while ((rcb = ev_read(rb, &rec)) > 0)
		;
	CHECK(rca == EV_REC && rcb == EV_ERR_NOSTR);
	ev_reader_close(ra);
	ev_reader_close(rb);
	ev_strtab_free(st);
	/* The stamp API: a fresh string takes the stamp, a held one keeps its own. */
	st = ev_strtab_new();
	uint32_t s1 = ev_strtab_new_stamp(st), s2 = ev_strtab_new_stamp(st);
	uint64_t id = ev_hash64("abc", 3);
	int fresh = -1;
	size_t len = 0;
	CHECK(s1 && s2 && s1 != s2);
	CHECK(ev_strtab_define_in(st, id, "abc", 3, s1, &fresh) == EV_OK && fresh == 1 && ev_strtab_stamp(st, id) == s1);
	CHECK(ev_strtab_define_in(st, id, "abc", 3, s2, &fresh) == EV_OK && fresh == 0 && ev_strtab_stamp(st, id) == s1);
	CHECK(ev_strtab_stamp(st, ev_hash64("abd", 3)) == 0);
	CHECK(!strcmp(ev_strtab_get(st, id, &len), "abc") && len == 3);
	ev_strtab_free(st);
	remove(one);
	remove(bare);
	remove(two);
}

static void test_meta(void)
{
	ev_meta *m = ev_meta_new();
	const char *lines[] = {
		"#src 1 label=base file=a\\tb.ev threads=256",
		"#rank 3 host=n1 device=2",
		"#comm 77 nranks=4 ranks=0,1,2,3 name=pg0",
		"#ring 77 0 0 1 3 2",
		"#tree 77 1 0:-1:1,-1,-1 1:0:-1,-1,-1",
		"#tree 77 1 2:0:-1,-1,-1",
		"#meta nccl_version=2.20.5",
		"#whatever is ignored",
	};
	for (size_t i = 0; i < sizeof lines / sizeof lines[0]; i++)
		CHECK(ev_meta_add_line(m, lines[i], strlen(lines[i])) == EV_OK);
	const struct ev_src_info *s = ev_meta_src(m, 1);
	CHECK(s && strcmp(s->label, "base") == 0 && strcmp(s->file, "a\tb.ev") == 0);
	CHECK(s && strcmp(ev_kv_get(s->kv, s->nkv, "threads"), "256") == 0);
	const struct ev_comm_info *c = ev_meta_comm(m, 77);
	CHECK(c && c->nranks == 4 && c->ranks[3] == 3);
	const struct ev_ring_info *r = ev_meta_ring(m, 77, 0);
	CHECK(r && r->n == 4 && r->order[2] == 3);
	CHECK(ev_meta_ring(m, 77, 1) == NULL);
	const struct ev_tree_info *t = ev_meta_tree(m, 77, 1);
	CHECK(t && t->n == 3 && t->nodes[2].rank == 2 && t->nodes[2].up == 0);
	CHECK(strcmp(ev_meta_get(m, "nccl_version"), "2.20.5") == 0);
	CHECK(ev_meta_rank(m, 3) && strcmp(ev_kv_get(ev_meta_rank(m, 3)->kv, ev_meta_rank(m, 3)->nkv, "host"), "n1") == 0);
	const char *bad1 = "#comm 5 nranks=3 ranks=0,1";
	CHECK(ev_meta_add_line(m, bad1, strlen(bad1)) == EV_ERR_FORMAT);
	const char *bad2 = "#ring x 0 1";
	CHECK(ev_meta_add_line(m, bad2, strlen(bad2)) == EV_ERR_FORMAT);
	CHECK(ev_meta_conflict(m) == NULL);
	ev_meta_free(m);
}

/* One #comm id, several lines: repeats and members left unknown merge,
 * another size or another member is a conflict naming the earlier line,
 * and leaves what was known as it was. */
static void test_meta_comm_conflict(void)
{
	ev_meta *m = ev_meta_new();
	const char *ok[] = {
		"#comm 9 nranks=3 ranks=4,-1,-1",
		"#comm 9 nranks=3 ranks=4,-1,-1",
		"#comm 9 name=pg1",
		"#comm 9 ranks=-1,5,-1",
	};
	for (size_t i = 0; i < sizeof ok / sizeof ok[0]; i++)
		CHECK(ev_meta_add_line_at(m, ok[i], strlen(ok[i]), "a.ev", i + 1) == EV_OK);
	const struct ev_comm_info *c = ev_meta_comm(m, 9);
	CHECK(c && c->nranks == 3 && c->ranks[0] == 4 && c->ranks[1] == 5 && c->ranks[2] == -1);
	CHECK(c && strcmp(ev_kv_get(c->kv, c->nkv, "name"), "pg1") == 0);
	const char *size = "#comm 9 nranks=4";
	CHECK(ev_meta_add_line_at(m, size, strlen(size), "a.ev", 7) == EV_ERR_FORMAT);
	CHECK(ev_meta_conflict(m) &&
	      strcmp(ev_meta_conflict(m), "line 4 (#comm 9 ranks=-1,5,-1): 4 ranks here, 3 there") == 0);
	const char *member = "#comm 9 nranks=3 ranks=4,6,7";
	CHECK(ev_meta_add_line_at(m, member, strlen(member), "b.ev", 2) == EV_ERR_FORMAT);
	CHECK(ev_meta_conflict(m) && strcmp(ev_meta_conflict(m), "a.ev line 4 (#comm 9 ranks=-1,5,-1): comm rank 1 is "
	                                    "global rank 6 here, 5 there") == 0);
	CHECK(c->nranks == 3 && c->ranks[1] == 5 && c->ranks[2] == -1);
	/* A line added without a place still names the earlier one's. */
	CHECK(ev_meta_add_line(m, member, strlen(member)) == EV_ERR_FORMAT);
	CHECK(ev_meta_conflict(m) && strncmp(ev_meta_conflict(m), "a.ev line 4 (", 13) == 0);
	ev_meta_free(m);
	m = ev_meta_new();
	CHECK(ev_meta_add_line(m, ok[0], strlen(ok[0])) == EV_OK);
	CHECK(ev_meta_add_line(m, size, strlen(size)) == EV_ERR_FORMAT);
	CHECK(ev_meta_conflict(m) && strcmp(ev_meta_conflict(m), "an earlier line (#comm 9 nranks=3 ranks=4,-1,-1): 4 "
	                                    "ranks here, 3 there") == 0);
	ev_meta_free(m);
}

/* Writers emit nothing a reader refuses: a string whose #str line passes
 * EV_LINE_MAX, as it is or once escaped, and a text line longer than it,
 * are EV_ERR_LIMIT; a line of exactly EV_LINE_MAX is written and read. */
static void test_writer_line_limit(void)
{
	ev_strtab *st = ev_strtab_new();
	size_t n = EV_LINE_MAX - 22; /* "#str " + 16 hex digits + ' ' */
	char *text = malloc(EV_LINE_MAX + 2);
	CHECK(st && text);
	if (!st || !text)
		return;
	memset(text, 'x', EV_LINE_MAX + 1);
	struct ev_rec r;
	ev_rec_init(&r);
	r.type = EV_KERNEL;
	const char *p = path_in_tmp("limit.ev");
	ev_writer *w;
	/* One byte too long. */
	CHECK(ev_strtab_intern(st, text, n + 1, &r.name) == EV_OK);
	CHECK(ev_writer_open(&w, p, st) == EV_OK);
	CHECK(ev_write(w, &r) == EV_ERR_LIMIT);
	ev_writer_abort(w);
	/* Short enough as it is, too long escaped (a backslash is two bytes). */
	text[0] = '\\';
	CHECK(ev_strtab_intern(st, text, n, &r.name) == EV_OK);
	CHECK(ev_writer_open(&w, p, st) == EV_OK);
	CHECK(ev_write(w, &r) == EV_ERR_LIMIT);
	/* A text line: one byte too long, or a #str line given whole. */
	text[0] = '#';
	CHECK(ev_write_text(w, text, EV_LINE_MAX + 1) == EV_ERR_LIMIT);
	CHECK(ev_write_line_raw(w, text, EV_LINE_MAX + 1) == EV_ERR_LIMIT);
	ev_writer_abort(w);
	CHECK(access(p, F_OK) != 0);
	/* Exactly at the limit: written, and read back. */
	text[0] = 'x';
	CHECK(ev_strtab_intern(st, text, n, &r.name) == EV_OK);
	CHECK(ev_writer_open(&w, p, st) == EV_OK);
	CHECK(ev_write(w, &r) == EV_OK);
	CHECK(ev_writer_close(w) == EV_OK);
	ev_strtab *st2 = ev_strtab_new();
	ev_reader *rd;
	struct ev_rec got;
	CHECK(ev_reader_open(&rd, p, st2, NULL) == EV_OK);
	CHECK(ev_read(rd, &got) == EV_REC && got.name == r.name);
	CHECK(ev_read(rd, &got) == EV_EOF);
	ev_reader_close(rd);
	ev_strtab_free(st2);
	remove(p);
	free(text);
	ev_strtab_free(st);
}

static void test_numbers(void)
{
	uint64_t u;
	int64_t i;
	CHECK(ev_parse_u64("18446744073709551615", &u) == 0 && u == UINT64_MAX);
	CHECK(ev_parse_u64("18446744073709551616", &u) == EV_ERR_RANGE);
	/* The overflow test's edges: 1844674407370955161 then a last digit
	 * of 5 fits, 6 and 9 do not; a larger prefix never fits. */
	CHECK(ev_parse_u64("18446744073709551610", &u) == 0 && u == UINT64_MAX - 5);
	CHECK(ev_parse_u64("18446744073709551619", &u) == EV_ERR_RANGE);
	CHECK(ev_parse_u64("18446744073709551620", &u) == EV_ERR_RANGE);
	CHECK(ev_parse_u64("99999999999999999999", &u) == EV_ERR_RANGE);
	CHECK(ev_parse_u64("018446744073709551615", &u) == 0 && u == UINT64_MAX);
	CHECK(ev_parse_i64("9223372036854775808", &i) == EV_ERR_RANGE);
	CHECK(ev_parse_u64("1hello", &u) == EV_ERR_ARG);
	CHECK(ev_parse_u64("-1", &u) == EV_ERR_ARG);
	CHECK(ev_parse_i64("-9223372036854775808", &i) == 0 && i == INT64_MIN);
	CHECK(ev_parse_size("64M", &u) == 0 && u == 64u << 20);
	CHECK(ev_parse_decimal_scaled("1700000000123456.789", 20, 3, &i) == 0 && i == 1700000000123456789LL);
	CHECK(ev_parse_decimal_scaled("12.3456", 7, 3, &i) == 0 && i == 12346);
	CHECK(ev_parse_decimal_scaled("-0.5", 4, 3, &i) == 0 && i == -500);
	CHECK(ev_parse_decimal_scaled("1e3", 3, 3, &i) == EV_ERR_ARG);
	CHECK(ev_parse_decimal_scaled(".", 1, 3, &i) == EV_ERR_ARG);
	CHECK(ev_parse_decimal_scaled("9223372036854775.807", 20, 3, &i) == 0 && i == INT64_MAX);
	CHECK(ev_parse_decimal_scaled("9223372036854775.808", 20, 3, &i) == EV_ERR_RANGE);
	CHECK(ev_parse_decimal_scaled("18446744073709551.616", 21, 3, &i) == EV_ERR_RANGE);
	CHECK(ev_parse_decimal_scaled("18446744073709551616", 20, 0, &i) == EV_ERR_RANGE);
}

static void test_gzip_input(void)
{
	/* gzip a small stream with the gzip tool, twice concatenated. */
	const char *plain = path_in_tmp("g.ev");
	ev_strtab *st = ev_strtab_new();
	ev_writer *w;
	CHECK(ev_writer_open(&w, plain, st) == EV_OK);
	struct ev_rec r;
	ev_rec_init(&r);
	r.type = EV_MARK;
	for (int k = 0; k < 1000; k++) {
		r.ts = k;
		CHECK(ev_write(w, &r) == EV_OK);
	}
	CHECK(ev_writer_close(w) == EV_OK);
	ev_strtab_free(st);
	char cmd[1024];
	snprintf(cmd, sizeof cmd, "gzip -c %s > %s.gz && cat %s.gz %s.gz > %s.2.gz", plain, plain, plain, plain, plain);
	CHECK(system(cmd) == 0);
	uint64_t n;
	snprintf(cmd, sizeof cmd, "%s.2.gz", plain);
	CHECK(read_all(cmd, &n, NULL, NULL, 0) == EV_EOF && n == 2000);
	/* A cut gzip file is an error, not a shorter stream. */
	snprintf(cmd, sizeof cmd, "head -c 300 %s.gz > %s.cut.gz", plain, plain);
	CHECK(system(cmd) == 0);
	snprintf(cmd, sizeof cmd, "%s.cut.gz", plain);
	CHECK(read_all(cmd, &n, NULL, NULL, 0) < 0);
}

/* Write bytes to a file and open it as an ev_input. */
static ev_input *input_of(const char *name, const void *bytes, size_t n)
{
	const char *path = path_in_tmp(name);
	FILE *f = fopen(path, "wb");
	CHECK(f && fwrite(bytes, 1, n, f) == n && fclose(f) == 0);
	ev_input *in = NULL;
	CHECK(ev_input_open(&in, path) == EV_OK);
	return in;
}

/* The escaped line of raw[0..n) at o; returns its end. */
static size_t escape_line(char *o, const unsigned char *raw, size_t n)
{
	size_t k = 0;
	for (size_t i = 0; i < n; i++) {
		if (raw[i] == '\n' || raw[i] == '\\') {
			o[k++] = '\\';
			o[k++] = raw[i] == '\n' ? 'n' : '\\';
		} else {
			o[k++] = (char)raw[i];
		}
	}
	o[k++] = '\n';
	return k;
}

/* The reader's ways for a record line (nothing escaped, escapes, the
 * general way near the end of its buffer) read the same records: random
 * bytes in every free field, so most lines have escapes somewhere and some
 * have many; and a malformed escaped line in the middle of a stream is the
 * same error, naming its record, as the general way gives. */
static void test_record_line_ways(void)
{
	enum { N = 4000, BAD_AT = 1500 };
	static unsigned char raws[N][EV_RECORD_SIZE];
	static char text[N * (2 * EV_RECORD_SIZE + 1) + 256];
	uint64_t seed = 0x9E3779B97F4A7C15ull;
	size_t len = (size_t)snprintf(text, sizeof text, "#ev 1.0 96 clock=ns\n");
	for (int i = 0; i < N; i++) {
		unsigned char *raw = raws[i];
		for (size_t j = 0; j < EV_RECORD_SIZE; j++) {
			seed = seed * 6364136223846793005ull + 1442695040888963407ull;
			unsigned v = (unsigned)(seed >> 56);
			/* A fifth of the bytes an LF or a backslash, on some lines all. */
			raw[j] = (unsigned char)(i % 97 == 0 ? (v & 1 ? '\n' : '\\') : v % 5 == 0 ? (v & 8 ? '\n' : '\\') : v);
		}
		raw[0] = EV_KERNEL;
		raw[6] = raw[7] = 0;          /* flags */
		memset(raw + 40, 0, 16);      /* name and sig: no strings */
		len += escape_line(text + len, raw, EV_RECORD_SIZE);
	}
	len += (size_t)snprintf(text + len, sizeof text - len, "#end %d\n", N);
	const char *p = path_in_tmp("ways.ev");
	write_file(p, text, len);
	ev_reader *rd;
	struct ev_rec got, want;
	int bad = 0;
	CHECK(ev_reader_open(&rd, p, NULL, NULL) == EV_OK);
	for (int i = 0; i < N; i++) {
		ev_rec_decode(raws[i], &want);
		bad += ev_read(rd, &got) != EV_REC || memcmp(&got, &want, sizeof got) != 0;
		bad += memcmp(ev_reader_raw(rd), raws[i], EV_RECORD_SIZE) != 0;
	}
	CHECK(bad == 0);
	CHECK(ev_read(rd, &got) == EV_EOF);
	ev_reader_close(rd);

	/* Record BAD_AT made wrong, each way; the message names it. */
	static const struct {
		const char *what, *msg;
	} cases[] = {
		{ "invalid escape", "invalid escape in record" },
		{ "escape at the end", "record ends in an unfinished escape" },
		{ "one byte short", "record size 95, expected 96" },
		{ "one byte long", "record longer than the header's record size" },
		{ "line ends early", "record size" },
	};
	for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
		len = (size_t)snprintf(text, sizeof text, "#ev 1.0 96 clock=ns\n");
		for (int i = 0; i < N; i++) {
			if (i + 1 != BAD_AT) {
				len += escape_line(text + len, raws[i], EV_RECORD_SIZE);
				continue;
			}
			unsigned char raw[EV_RECORD_SIZE + 1];
			memcpy(raw, raws[i], EV_RECORD_SIZE);
			/* Nothing to escape before an escaped backslash at 10 (line
			 * bytes 10 and 11), nor in the last two bytes. */
			memset(raw + 1, 'B', 15);
			raw[6] = raw[7] = 0;
			raw[10] = '\\';
			raw[EV_RECORD_SIZE - 2] = raw[EV_RECORD_SIZE - 1] = 'A';
			raw[EV_RECORD_SIZE] = 'A';
			size_t n = c == 2 ? EV_RECORD_SIZE - 1 : c == 3 ? EV_RECORD_SIZE + 1 : EV_RECORD_SIZE;
			size_t k = escape_line(text + len, raw, n);
			if (c == 0)
				text[len + 11] = 'x'; /* "\\x": an unknown escape */
			if (c == 1)
				text[len + k - 2] = '\\';  /* the line ends in a lone backslash */
			if (c == 4)
				text[len + 50] = '\n';      /* a raw LF halfway: two short lines */
			len += k;
		}
		len += (size_t)snprintf(text + len, sizeof text - len, "#end %d\n", N);
		char name[32], detail[512], where[64];
		snprintf(name, sizeof name, "ways%zu.ev", c);
		p = path_in_tmp(name);
		write_file(p, text, len);
		uint64_t n;
		CHECK(read_all(p, &n, NULL, detail, sizeof detail) < 0);
		snprintf(where, sizeof where, "record %d", BAD_AT);
		if (n != BAD_AT - 1 || !strstr(detail, where) || !strstr(detail, cases[c].msg))
			fprintf(stderr, "  %s: %llu records, %s\n", cases[c].what, (unsigned long long)n, detail);
		CHECK(n == BAD_AT - 1 && strstr(detail, where) && strstr(detail, cases[c].msg));
	}
}

/* ev_write's bytes, not only what reads back: each record line is the
 * record's 96 bytes with LF and backslash escaped, then LF, whether it has
 * no byte to escape (the record encoded in place), some, or all, over many
 * output buffers. */
static void test_write_bytes(void)
{
	enum { N = 30000 };
	static char want[N * (2 * EV_RECORD_SIZE + 1)];
	ev_writer *w;
	const char *p = path_in_tmp("bytes.ev");
	CHECK(ev_writer_open(&w, p, NULL) == EV_OK);
	uint64_t seed = 0x243F6A8885A308D3ull;
	size_t len = 0;
	int bad = 0, plain = 0;
	for (int i = 0; i < N; i++) {
		unsigned char raw[EV_RECORD_SIZE];
		for (size_t j = 0; j < EV_RECORD_SIZE; j++) {
			seed = seed * 6364136223846793005ull + 1442695040888963407ull;
			unsigned v = (unsigned)(seed >> 56);
			/* Every third record none to escape, every 101st all. */
			raw[j] = (unsigned char)(i % 101 == 0 ? (v & 1 ? '\n' : '\\')
			                         : i % 3 == 0 && (v == '\n' || v == '\\') ? 'A' : v);
		}
		raw[0] = EV_KERNEL;
		raw[6] = raw[7] = 0;     /* flags */
		memset(raw + 40, 0, 16); /* name and sig: no strings */
		plain += memchr(raw, '\n', sizeof raw) == NULL && memchr(raw, '\\', sizeof raw) == NULL;
		struct ev_rec r;
		ev_rec_decode(raw, &r);
		bad += ev_write(w, &r) != EV_OK;
		len += escape_line(want + len, raw, EV_RECORD_SIZE);
	}
	CHECK(bad == 0 && plain > N / 3);
	CHECK(ev_writer_close(w) == EV_OK);
	size_t n;
	char *got = read_file(p, &n);
	/* The header line, the records, then "#end N". */
	char *nl = got ? memchr(got, '\n', n) : NULL;
	CHECK(nl && strncmp(got, "#ev ", 4) == 0);
	if (nl) {
		size_t at = (size_t)(nl + 1 - got);
		CHECK(n - at >= len && memcmp(nl + 1, want, len) == 0);
		char end[32];
		int k = snprintf(end, sizeof end, "#end %d\n", N);
		CHECK(n - at == len + (size_t)k && memcmp(got + at + len, end, (size_t)k) == 0);
	}
	free(got);
}

/* ev_read_run hands over the same records as ev_read, as their lines, in
 * runs of at most max; a record ev_read would refuse (a reserved flag bit,
 * a string never defined) ends the run before it and is reported by the
 * next call with its own record number; text lines come one at a time. */
/* The start of line k (0-based) of text[0..len): records hold NUL bytes,
 * so lines are found with memchr. */
static char *line_at(char *text, size_t len, int k)
{
	char *l = text;
	while (k-- > 0) {
		char *nl = memchr(l, '\n', len - (size_t)(l - text));
		if (!nl)
			return NULL;
		l = nl + 1;
	}
	return l;
}

static void test_read_run(void)
{
	enum { N = 3000, BAD_FLAG = 1234, BAD_STR = 2345 };
	ev_strtab *st = ev_strtab_new();
	uint64_t name;
	CHECK(ev_strtab_intern(st, "kernel_a", 8, &name) == EV_OK);
	const char *p = path_in_tmp("run.ev");
	ev_writer *w;
	CHECK(ev_writer_open(&w, p, st) == EV_OK);
	static struct ev_rec r[N];
	for (int i = 0; i < N; i++) {
		ev_rec_init(&r[i]);
		r[i].type = EV_KERNEL;
		r[i].ts = (int64_t)i * 0x0A5C0A5C; /* LF and backslash bytes: escaped lines */
		r[i].dur = (uint64_t)i;
		r[i].name = i % 3 ? name : 0;
		CHECK(ev_write(w, &r[i]) == EV_OK);
		if (i == N / 2)
			CHECK(ev_write_text(w, "#meta half=1", 12) == EV_OK);
	}
	CHECK(ev_writer_close(w) == EV_OK);
	for (int pass = 0; pass < 2; pass++) {
		size_t len;
		char *text = read_file(p, &len);
		if (pass == 1) {
			/* Record BAD_FLAG gets a reserved flag bit; record BAD_STR
			 * names a string no #str defines. */
			/* Line 0 is #ev, line 1 record 1, line 2 the #str of the name. */
			char *l = line_at(text, len, BAD_FLAG + 1);
			CHECK(l != NULL);
			if (!l)
				break;
			l[7] = 0x40; /* the flags' high byte */
			ev_reader *rd;
			struct ev_rec got;
			write_file(p, text, len);
			CHECK(ev_reader_open(&rd, p, NULL, NULL) == EV_OK);
			uint64_t seen = 0, n;
			const char *span;
			size_t sl;
			int rc;
			while ((rc = ev_read_run(rd, &got, 100, &span, &sl, &n)) > 0)
				seen += rc == EV_REC ? (n ? n : 1) : 0;
			CHECK(rc == EV_ERR_FORMAT && seen == BAD_FLAG - 1);
			char want[48];
			snprintf(want, sizeof want, "record %d", BAD_FLAG);
			CHECK(strstr(ev_reader_errdetail(rd), want) && strstr(ev_reader_errdetail(rd), "reserved flag"));
			ev_reader_close(rd);
			free(text);
			/* The undefined string: a name id no #str has. */
			text = read_file(path_in_tmp("run.ev"), &len);
			l = line_at(text, len, BAD_FLAG + 1);
			CHECK(l != NULL);
			if (!l)
				break;
			l[7] = 0; /* the flags mended */
			/* Lines: #ev, record 1, the #str of the name, the records, the
			 * #meta line after record N / 2 + 1. */
			l = line_at(text, len, BAD_STR + 2);
			CHECK(l != NULL);
			if (!l)
				break;
			/* A name id no #str defined: the first byte of the name, at 40
			 * when nothing before it on the line is escaped (ts's escapes
			 * are at 8..15: the name then starts later; put the byte at the
			 * start of the name wherever it is). */
			size_t at = 40;
			for (size_t j = 0; j < at; j++)
				if (l[j] == '\\')
					at++, j++;
			l[at] = 0x77;
			write_file(p, text, len);
			CHECK(ev_reader_open(&rd, p, NULL, NULL) == EV_OK);
			seen = 0;
			while ((rc = ev_read_run(rd, &got, 100, &span, &sl, &n)) > 0)
				seen += rc == EV_REC ? (n ? n : 1) : 0;
			if (rc != EV_ERR_NOSTR)
				fprintf(stderr, "  rc %d: %s\n", rc, ev_reader_errdetail(rd));
			CHECK(rc == EV_ERR_NOSTR);
			snprintf(want, sizeof want, "record %d", BAD_STR);
			CHECK(ev_reader_recno(rd) == BAD_STR - 1 && strstr(ev_reader_errdetail(rd), want));
			ev_reader_close(rd);
			free(text);
			break;
		}
		free(text);
		/* The good stream: runs and ev_read agree, record for record. */
		ev_reader *a, *b;
		CHECK(ev_reader_open(&a, p, NULL, NULL) == EV_OK && ev_reader_open(&b, p, NULL, NULL) == EV_OK);
		uint64_t k = 0, runs = 0, texts = 0, n;
		int rc, bad = 0;
		struct ev_rec x, y;
		const char *span;
		size_t sl;
		while ((rc = ev_read_run(a, &x, 100, &span, &sl, &n)) > 0) {
			if (rc == EV_TEXT) {
				texts++;
				CHECK(ev_read(b, &y) == EV_TEXT);
				continue;
			}
			if (!n) {
				bad += ev_read(b, &y) != EV_REC || memcmp(&x, &y, sizeof x) != 0;
				k++;
				continue;
			}
			runs++;
			bad += n > 100;
			/* The span is the records' lines, one after the other. */
			const char *q = span, *e = span + sl;
			for (uint64_t j = 0; j < n; j++) {
				const char *line;
				size_t ll;
				bad += ev_read(b, &y) != EV_REC;
				ev_reader_record_line(b, &line, &ll);
				bad += (size_t)(e - q) < ll + 1 || memcmp(q, line, ll) != 0 || q[ll] != '\n';
				q += ll + 1;
				k++;
			}
			bad += q != e;
			bad += ev_reader_recno(a) != ev_reader_recno(b);
		}
		CHECK(rc == EV_EOF && ev_read(b, &y) == EV_EOF);
		CHECK(bad == 0 && k == N && texts == 1 && runs >= N / 100);
		ev_reader_close(a);
		ev_reader_close(b);
	}
	ev_strtab_free(st);
}

/* ev_input_plain_line: a buffered line of exactly n bytes with no
 * backslash, else nothing consumed.  Every position of a newline or a
 * backslash is tried (the 16-byte steps and the tail). */
static void test_plain_line(void)
{
	enum { N = 96 };
	char buf[2 * (N + 1)];
	memset(buf, 'a', sizeof buf);
	buf[N] = '\n';
	buf[2 * N + 1] = '\n';
	ev_input *in = input_of("plain1", buf, sizeof buf);
	const char *l = ev_input_plain_line(in, N);
	CHECK(l && l[0] == 'a' && ev_input_lineno(in) == 1 && ev_input_offset(in) == N + 1);
	CHECK(ev_input_plain_line(in, N - 1) == NULL); /* wrong length */
	CHECK(ev_input_plain_line(in, N) != NULL && ev_input_lineno(in) == 2);
	CHECK(ev_input_plain_line(in, N) == NULL); /* nothing left */
	ev_input_close(in);
	for (int pos = 0; pos < N; pos++) {
		for (int k = 0; k < 2; k++) {
			memset(buf, 'a', sizeof buf);
			buf[pos] = k ? '\\' : '\n';
			buf[N] = '\n';
			buf[2 * N + 1] = '\n';
			in = input_of("plain2", buf, sizeof buf);
			CHECK(ev_input_plain_line(in, N) == NULL);
			size_t len = 0;
			/* Not consumed: the line reader still sees the first line. */
			CHECK(ev_input_line(in, &l, &len) == EV_REC && len == (k ? (size_t)N : (size_t)pos));
			ev_input_close(in);
		}
	}
	/* The newline after the n bytes must be buffered too. */
	in = input_of("plain3", buf, N);
	CHECK(ev_input_plain_line(in, N) == NULL);
	ev_input_close(in);
}

/* ev_input_read: the bytes and offsets are the same whether a read is
 * served from the buffer (the first 64 KiB read at open), read straight
 * into the caller's buffer (plain input, a large request) or inflated. */
static void test_input_read_paths(void)
{
	const size_t n = (1u << 20) + 12345;
	unsigned char *data = malloc(n), *got = malloc(n);
	CHECK(data && got);
	if (!data || !got) {
		free(data);
		free(got);
		return;
	}
	uint64_t x = 7;
	for (size_t i = 0; i < n; i++) {
		x = x * 6364136223846793005ULL + 1442695040888963407ULL;
		data[i] = (unsigned char)(x >> 56);
	}
	data[0] = '{'; /* not the gzip magic */
	ev_input *in = input_of("direct", data, n);
	const char *plain = path_in_tmp("direct");
	char cmd[600];
	snprintf(cmd, sizeof cmd, "gzip -c %s > %s.gz", plain, plain);
	CHECK(system(cmd) == 0);
	snprintf(cmd, sizeof cmd, "%s.gz", plain);
	for (int gz = 0; gz < 2; gz++) {
		if (gz) {
			ev_input_close(in);
			in = NULL;
			CHECK(ev_input_open(&in, cmd) == EV_OK && ev_input_is_gzip(in));
		}
		size_t have = 0;
		long r = ev_input_read(in, got, 10); /* from the buffer */
		CHECK(r == 10);
		have += r > 0 ? (size_t)r : 0;
		while (have < n) {
			/* 256 KiB requests: straight into got when nothing is buffered. */
			size_t want = n - have < (256u << 10) ? n - have : (256u << 10);
			r = ev_input_read(in, got + have, want);
			CHECK(r > 0);
			if (r <= 0)
				break;
			have += (size_t)r;
			CHECK(ev_input_offset(in) == have);
		}
		CHECK(have == n && memcmp(got, data, n) == 0);
		CHECK(ev_input_read(in, got, 1u << 18) == 0); /* the end, and again */
		CHECK(ev_input_read(in, got, 1u << 18) == 0);
	}
	ev_input_close(in);
	free(data);
	free(got);
}

static void test_output_atomic(void)
{
	ev_output *o;
	const char *p = path_in_tmp("atomic.txt");
	CHECK(ev_output_open(&o, p) == EV_OK);
	CHECK(ev_output_printf(o, "hello %d\n", 1) == EV_OK);
	CHECK(access(p, F_OK) != 0); /* nothing under the final name yet */
	ev_output_abort(o);
	CHECK(access(p, F_OK) != 0);
	CHECK(ev_output_open(&o, p) == EV_OK);
	CHECK(ev_output_printf(o, "hello %d\n", 2) == EV_OK);
	CHECK(ev_output_close(o) == EV_OK);
	size_t n;
	char *d = read_file(p, &n);
	CHECK(n == 8 && memcmp(d, "hello 2\n", 8) == 0);
	free(d);
	CHECK(ev_output_open(&o, "/dev/full") == EV_OK);
	CHECK(ev_output_printf(o, "x") == EV_OK);
	CHECK(ev_output_close(o) == EV_ERR_IO && errno == ENOSPC);
}

/* The size of the file behind o so far. */
static uint64_t output_size(const ev_output *o)
{
	struct stat st;
	CHECK(fstat(o->fd, &st) == 0);
	return (uint64_t)st.st_size;
}

/* A mix of every way into an ev_output: the bytes come out whole and in
 * order, and a regular file only ever grows to a multiple of the block
 * size (OUT_BUF, 256 KiB), but after a reservation larger than the slack,
 * which writes what it has and is aligned again by the next block.  skip:
 * bytes already in the file (standard output open at an offset). */
static void output_mix(ev_output *o, const char *path, uint64_t skip)
{
	const uint64_t block = 1u << 18;
	size_t cap = 12u << 20, n = 0;
	unsigned char *want = malloc(cap);
	uint32_t x = 12345;
	int aligned = 1;
	for (int op = 0; n < 9u << 20; op++) {
		x = x * 1103515245u + 12345u;
		uint32_t r = x >> 8, kind = r % 16;
		/* The bytes of this step: a record's reservation, a write (small
		 * to several blocks), a character, a number printed, or now and
		 * then a reservation larger than the slack. */
		size_t k = kind < 9 ? 1 + r % 300 : kind < 11 ? r % 5000 : kind == 11 ? r % 700000 : kind < 14 ? 1 :
		           kind == 14 ? 9 : r % 8 ? 0 : 100000 + r % 1000;
		for (size_t i = 0; i < k; i++)
			want[n + i] = (unsigned char)(n + i);
		if (kind < 9 || kind == 15) {
			char *p = ev_output_reserve(o, kind < 9 ? k + 64 : k);
			CHECK(p != NULL);
			memcpy(p, want + n, k);
			ev_output_commit(o, k);
			if (kind == 15 && k)
				aligned = 0;
		} else if (kind < 12) {
			CHECK(ev_output_write(o, want + n, k) == EV_OK);
		} else if (kind < 14) {
			CHECK(ev_output_putc(o, (char)want[n]) == EV_OK);
		} else {
			snprintf((char *)want + n, 10, "%09u", (unsigned)(n % 1000000000u));
			CHECK(ev_output_printf(o, "%s", (char *)want + n) == EV_OK);
		}
		n += k;
		uint64_t size = output_size(o);
		if (size != skip && aligned)
			CHECK(size % block == 0);
		else if (size % block == 0)
			aligned = 1; /* the next block put it right */
	}
	CHECK(ev_output_close(o) == EV_OK);
	size_t got;
	char *d = read_file(path, &got);
	CHECK(got == skip + n && memcmp(d + skip, want, n) == 0);
	free(d);
	free(want);
}

static void test_output_blocks(void)
{
	ev_output *o;
	const char *p = path_in_tmp("blocks.bin");
	CHECK(ev_output_open(&o, p) == EV_OK);
	output_mix(o, p, 0);
	/* Standard output redirected to a file that already holds 1000 bytes:
	 * the first block ends at 256 KiB of the file, not of the output. */
	char *q = strdup(path_in_tmp("stdout.bin"));
	char head[1000];
	memset(head, 'h', sizeof head);
	write_file(q, head, sizeof head);
	fflush(stdout);
	int saved = dup(STDOUT_FILENO), fd = open(q, O_WRONLY | O_APPEND);
	CHECK(saved >= 0 && fd >= 0 && dup2(fd, STDOUT_FILENO) == STDOUT_FILENO);
	close(fd);
	CHECK(ev_output_open(&o, "-") == EV_OK);
	output_mix(o, q, sizeof head);
	CHECK(dup2(saved, STDOUT_FILENO) == STDOUT_FILENO);
	close(saved);
	free(q);
}

/* A file says so; a pipe does not (ev2goal's builder spins only on files). */
static void test_reader_from_file(void)
{
	const char *p = path_in_tmp("from-file.ev");
	write_file(p, "", 0);
	ev_strtab *st = ev_strtab_new();
	ev_reader *r;
	CHECK(ev_reader_open(&r, p, st, NULL) == EV_OK);
	CHECK(ev_reader_from_file(r) == 1);
	ev_reader_close(r);
	int fds[2];
	CHECK(pipe(fds) == 0);
	close(fds[1]); /* nothing will come: the reader sees the end at once */
	ev_input *in;
	CHECK(ev_input_fdopen(&in, fds[0], 1, "pipe") == EV_OK);
	CHECK(ev_reader_from_input(&r, in, st, NULL) == EV_OK);
	CHECK(ev_reader_from_file(r) == 0);
	ev_reader_close(r);
	ev_strtab_free(st);
}

/* End times saturate instead of overflowing for format-legal extremes. */
static void test_rec_end(void)
{
	struct ev_rec r;
	ev_rec_init(&r);
	r.ts = 100, r.dur = 50;
	CHECK(ev_rec_end(&r) == 150);
	r.ts = INT64_MAX - 10, r.dur = 11;
	CHECK(ev_rec_end(&r) == INT64_MAX);
	r.ts = INT64_MAX, r.dur = UINT64_MAX;
	CHECK(ev_rec_end(&r) == INT64_MAX);
	r.ts = INT64_MIN, r.dur = UINT64_MAX;
	CHECK(ev_rec_end(&r) == INT64_MAX);
	r.ts = INT64_MIN, r.dur = (uint64_t)INT64_MAX;
	CHECK(ev_rec_end(&r) == -1);
	r.ts = -5, r.dur = 3;
	CHECK(ev_rec_end(&r) == -2);
	r.ts = -5, r.dur = (uint64_t)INT64_MAX;
	CHECK(ev_rec_end(&r) == INT64_MAX - 5);
}

/* ev_write_all: every byte, in order; a bad descriptor is EV_ERR_IO with
 * errno set. */
static void test_write_all(void)
{
	size_t n = (3u << 20) + 7;
	unsigned char *a = malloc(n), *b = malloc(n);
	CHECK(a && b);
	if (!a || !b) {
		free(a);
		free(b);
		return;
	}
	for (size_t i = 0; i < n; i++)
		a[i] = (unsigned char)(i * 131 + (i >> 12));
	const char *path = path_in_tmp("write-all.bin");
	FILE *f = fopen(path, "w+b");
	CHECK(f != NULL);
	if (f) {
		CHECK(ev_write_all(fileno(f), a, n) == EV_OK);
		CHECK(ev_write_all(fileno(f), a, 0) == EV_OK);
		rewind(f);
		CHECK(fread(b, 1, n, f) == n && memcmp(a, b, n) == 0);
		CHECK(fgetc(f) == EOF);
		fclose(f);
	}
	errno = 0;
	CHECK(ev_write_all(-1, a, 1) == EV_ERR_IO && errno == EBADF);
	free(a);
	free(b);
}

int main(void)
{
	if (!mkdtemp(tmpdir)) {
		perror("mkdtemp");
		return 2;
	}
	RUN(test_hash);
	RUN(test_record_roundtrip);
	RUN(test_enum_names);
	RUN(test_text_escape);
	RUN(test_escape_heavy_records);
	RUN(test_escape_every_position);
	RUN(test_error_position);
	RUN(test_strings);
	RUN(test_strtab_absorb);
	RUN(test_segments_and_errors);
	RUN(test_str_defined_per_segment);
	RUN(test_meta);
	RUN(test_meta_comm_conflict);
	RUN(test_writer_line_limit);
	RUN(test_numbers);
	RUN(test_gzip_input);
	RUN(test_plain_line);
	RUN(test_record_line_ways);
	RUN(test_write_bytes);
	RUN(test_read_run);
	RUN(test_input_read_paths);
	RUN(test_output_atomic);
	RUN(test_output_blocks);
	RUN(test_reader_from_file);
	RUN(test_rec_end);
	RUN(test_write_all);
	char cmd[128];
	snprintf(cmd, sizeof cmd, "rm -rf %s", tmpdir);
	if (system(cmd) != 0)
		fprintf(stderr, "could not remove %s\n", tmpdir);
	return unit_report("test_codec");
}
