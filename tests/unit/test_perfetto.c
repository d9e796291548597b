/* SPDX-License-Identifier: MIT */
/*
 * test_perfetto.c - lib/perfetto called directly on short record sequences
 * built in memory: processes, tracks and extra lanes, flows between ranks
 * (messages, collectives, launches), counter tracks, times and layouts,
 * gzip, and the failures (order, the event limit, the output).
 */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>

#include "ev.h"
#include "unit.h"

static char dir[64];

/* A timeline of recs written to a file and read back whole. */
struct tl {
	ev_strtab *st;
	ev_meta *meta;
	char path[128];
	char *json;   /* the output, NUL-terminated (malloc'd) */
	size_t len;
	int status;   /* of the first call that failed, or EV_OK */
	struct ev_perfetto_error err;
	struct ev_perfetto_stats stats;
};

static void tl_init(struct tl *t, const char *const *meta_lines)
{
	memset(t, 0, sizeof *t);
	t->st = ev_strtab_new();
	t->meta = ev_meta_new();
	CHECK(t->st && t->meta);
	for (size_t i = 0; meta_lines && meta_lines[i]; i++)
		CHECK(ev_meta_add_line(t->meta, meta_lines[i], strlen(meta_lines[i])) == EV_OK);
	snprintf(t->path, sizeof t->path, "%s/out.json", dir);
}

static uint64_t str(struct tl *t, const char *s)
{
	uint64_t id = 0;
	CHECK(ev_strtab_intern(t->st, s, strlen(s), &id) == EV_OK);
	return id;
}

/* Read path whole (gzip is inflated by gzread; plain files pass through). */
static char *slurp(const char *path, size_t *n)
{
	gzFile f = gzopen(path, "rb");
	size_t cap = 1 << 16, len = 0;
	char *buf = malloc(cap);
	if (!f || !buf) {
		if (f)
			gzclose(f);
		free(buf);
		return NULL;
	}
	int got;
	while ((got = gzread(f, buf + len, (unsigned)(cap - len - 1))) > 0) {
		len += (size_t)got;
		if (cap - len < 2) {
			char *nb = realloc(buf, cap * 2);
			if (!nb)
				break;
			buf = nb;
			cap *= 2;
		}
	}
	gzclose(f);
	buf[len] = '\0';
	*n = len;
	return buf;
}

/* Write recs[0..n) with options o to out_path (t->path when NULL). */
static void tl_run(struct tl *t, const struct ev_perfetto_opts *o, const struct ev_rec *recs, size_t n,
                   const char *out_path)
{
	ev_output *out;
	ev_perfetto *p = NULL;
	const char *path = out_path ? out_path : t->path;
	CHECK(ev_output_open(&out, path) == EV_OK);
	t->status = ev_perfetto_new(&p, o, t->st, t->meta, out);
	CHECK(t->status == EV_OK && p);
	for (size_t i = 0; p && i < n && t->status == EV_OK; i++)
		t->status = ev_perfetto_add(p, &recs[i]);
	if (p && t->status == EV_OK)
		t->status = ev_perfetto_finish(p);
	if (p) {
		t->err = *ev_perfetto_error(p);
		ev_perfetto_get_stats(p, &t->stats);
	}
	ev_perfetto_free(p);
	if (t->status == EV_OK) {
		CHECK(ev_output_close(out) == EV_OK);
		t->json = slurp(path, &t->len);
		CHECK(t->json != NULL);
	} else {
		ev_output_abort(out);
	}
}

static void tl_free(struct tl *t)
{
	free(t->json);
	ev_strtab_free(t->st);
	ev_meta_free(t->meta);
}

/* 1 if the output has this text. */
static int has(const struct tl *t, const char *s)
{
	return t->json && strstr(t->json, s) != NULL;
}

static size_t count(const struct tl *t, const char *s)
{
	size_t k = 0;
	for (const char *q = t->json; q && (q = strstr(q, s)) != NULL; q += strlen(s))
		k++;
	return k;
}

static struct ev_rec rec(unsigned type, uint32_t rank, uint32_t stream, int64_t ts, uint64_t dur)
{
	struct ev_rec r;
	ev_rec_init(&r);
	r.type = (uint8_t)type;
	r.rank = rank;
	r.stream = stream;
	r.ts = ts;
	r.dur = dur;
	return r;
}

static void opts(struct ev_perfetto_opts *o)
{
	ev_perfetto_opts_init(o);
	CHECK(o->max_pending == 1000000 && o->max_events == 0 && o->layout == EV_PERFETTO_LAYOUT_RANK);
}

/* One kernel: the whole document, byte for byte. */
static void test_one_kernel(void)
{
	static const char *const meta[] = { "#rank 0 host=nodeA device=3", NULL };
	struct tl t;
	struct ev_perfetto_opts o;
	tl_init(&t, meta);
	opts(&o);
	struct ev_rec r = rec(EV_KERNEL, 0, 7, 1000, 2500);
	r.name = str(&t, "gemm");
	r.op = EV_KC_GEMM;
	tl_run(&t, &o, &r, 1, NULL);
	CHECK(t.status == EV_OK);
	const char *want =
		"{\"traceEvents\":[\n"
		"{\"ph\":\"M\",\"pid\":0,\"tid\":0,\"name\":\"process_name\",\"args\":{\"name\":\"rank 0 GPU (device 3, nodeA)\"}},\n"
		"{\"ph\":\"M\",\"pid\":0,\"tid\":0,\"name\":\"process_sort_index\",\"args\":{\"sort_index\":0}},\n"
		"{\"ph\":\"M\",\"pid\":0,\"tid\":7,\"name\":\"thread_name\",\"args\":{\"name\":\"stream 7\"}},\n"
		"{\"ph\":\"M\",\"pid\":0,\"tid\":7,\"name\":\"thread_sort_index\",\"args\":{\"sort_index\":112}},\n"
		"{\"ph\":\"X\",\"pid\":0,\"tid\":7,\"name\":\"gemm\",\"cat\":\"kernel\",\"ts\":0.000,\"dur\":2.500,"
		"\"args\":{\"rank\":0,\"class\":\"gemm\",\"stream\":7}},\n"
		"{\"ph\":\"C\",\"pid\":0,\"tid\":0,\"name\":\"kernels\",\"ts\":0.000,\"args\":{\"running\":1}},\n"
		"{\"ph\":\"C\",\"pid\":0,\"tid\":0,\"name\":\"kernels\",\"ts\":2.500,\"args\":{\"running\":0}}\n"
		"],\n\"displayTimeUnit\":\"ns\",\n"
		"\"otherData\":{\"producer\":\"" EV_PERFETTO_PRODUCER "\",\"time\":\"relative\",\"ts_base_ns\":\"1000\","
		"\"records\":1,\"flows\":0}}\n";
	CHECK(t.json && strcmp(t.json, want) == 0);
	if (t.json && strcmp(t.json, want) != 0)
		fprintf(stderr, "got:\n%s", t.json);
	CHECK(t.stats.records == 1 && t.stats.events == 7 && t.stats.json_bytes == t.len);
	tl_free(&t);
}

/* Slices that overlap without nesting go to extra lanes; past the last
 * lane they are clipped to their enclosing slice. */
static void test_tracks_and_lanes(void)
{
	struct tl t;
	struct ev_perfetto_opts o;
	tl_init(&t, NULL);
	opts(&o);
	o.no_counters = 1;
	struct ev_rec r[12];
	size_t n = 0;
	r[n++] = rec(EV_KERNEL, 1, 7, 0, 100);  /* lane 0 */
	r[n++] = rec(EV_KERNEL, 1, 7, 10, 20);  /* nests in it: lane 0 */
	r[n++] = rec(EV_KERNEL, 1, 7, 50, 100); /* overruns it: lane 1 */
	r[n++] = rec(EV_API, 1, 300, 60, 5);    /* CPU thread 300 */
	struct ev_rec s = rec(EV_SEND, 1, 0, 70, 5);
	s.channel = 3;
	s.peer = -1;
	r[n++] = s;                             /* NCCL channel 3 */
	r[n++] = rec(EV_CALC, 1, 2, 80, 5);     /* schedule lane 2 */
	tl_run(&t, &o, r, n, NULL);
	CHECK(t.status == EV_OK);
	CHECK(has(&t, "\"pid\":2,\"tid\":7,\"name\":\"thread_name\",\"args\":{\"name\":\"stream 7\"}"));
	CHECK(has(&t, "\"pid\":2,\"tid\":1610612736,\"name\":\"thread_name\",\"args\":{\"name\":\"stream 7 #2\"}"));
	CHECK(has(&t, "\"pid\":3,\"tid\":300,\"name\":\"thread_name\",\"args\":{\"name\":\"thread 300\"}"));
	CHECK(has(&t, "\"pid\":2,\"tid\":1073741827,\"name\":\"thread_name\",\"args\":{\"name\":\"NCCL channel 3\"}"));
	CHECK(has(&t, "\"pid\":2,\"tid\":1342177282,\"name\":\"thread_name\",\"args\":{\"name\":\"lane 2\"}"));
	CHECK(has(&t, "\"name\":\"process_name\",\"args\":{\"name\":\"rank 1 GPU\"}"));
	CHECK(has(&t, "\"name\":\"process_name\",\"args\":{\"name\":\"rank 1 CPU\"}"));
	CHECK(has(&t, "\"name\":\"send to -1\",\"cat\":\"send\""));
	CHECK(has(&t, "\"name\":\"calc gap\",\"cat\":\"calc\""));
	CHECK(t.stats.lanes == 1 && t.stats.clipped == 0);
	tl_free(&t);

	/* Ten slices each overrunning the one before: 8 lanes, 2 clipped. */
	tl_init(&t, NULL);
	for (int i = 0; i < 10; i++)
		r[i] = rec(EV_KERNEL, 0, 7, i * 10, 100);
	tl_run(&t, &o, r, 10, NULL);
	CHECK(t.status == EV_OK);
	CHECK(t.stats.lanes == EV_PERFETTO_MAX_LANES - 1 && t.stats.clipped == 2);
	CHECK(has(&t, "\"name\":\"stream 7 #8\"") && !has(&t, "\"name\":\"stream 7 #9\""));
	CHECK(has(&t, "\"ts\":0.090,\"dur\":0.010,\"args\":{\"rank\":0,\"class\":\"other\",\"stream\":7,"
	              "\"clipped_from_ns\":100}"));
	tl_free(&t);
}

/* A send on rank 0 and its receive on rank 1 (posted first): one arrow,
 * from the send's start to the same instant inside the receive. */
static void test_message_flow(void)
{
	static const char *const meta[] = { "#comm 5 nranks=2 ranks=0,1", NULL };
	struct tl t;
	struct ev_perfetto_opts o;
	tl_init(&t, meta);
	opts(&o);
	struct ev_rec r[3];
	r[0] = rec(EV_RECV, 1, 0, 100, 50);
	r[1] = rec(EV_SEND, 0, 0, 120, 10);
	r[2] = rec(EV_SEND, 0, 0, 140, 10); /* nobody receives it */
	for (int i = 0; i < 3; i++) {
		r[i].comm = 5;
		r[i].channel = 3;
		r[i].bytes = 8;
		r[i].peer = r[i].type == EV_SEND ? 1 : 0;
		r[i].op = EV_OP_ALLREDUCE;
	}
	tl_run(&t, &o, r, 3, NULL);
	CHECK(t.status == EV_OK);
	CHECK(has(&t, "{\"ph\":\"s\",\"pid\":0,\"tid\":1073741827,\"id\":1,\"cat\":\"message\",\"name\":\"message\","
	              "\"ts\":0.020}"));
	CHECK(has(&t, "{\"ph\":\"f\",\"pid\":2,\"tid\":1073741827,\"bp\":\"e\",\"id\":1,\"cat\":\"message\","
	              "\"name\":\"message\",\"ts\":0.020}"));
	CHECK(count(&t, "\"ph\":\"s\"") == 1 && count(&t, "\"ph\":\"f\"") == 1);
	CHECK(t.stats.flows == 1 && t.stats.flows_by_kind[EV_PERFETTO_MESSAGE] == 1 && t.stats.unmatched == 1);
	CHECK(has(&t, "\"args\":{\"rank\":0,\"bytes\":8,\"comm\":\"5\",\"seq\":0,\"peer\":1,\"channel\":3,\"step\":0,"
	              "\"collective\":\"allreduce\"}}"));
	/* Wire bytes in flight on the sender. */
	CHECK(has(&t, "{\"ph\":\"C\",\"pid\":0,\"tid\":0,\"name\":\"wire in flight\",\"ts\":0.020,\"args\":{\"bytes\":8}}"));
	tl_free(&t);

	/* --no-flows: no arrow, and nothing waits. */
	tl_init(&t, meta);
	o.no_flows = 1;
	tl_run(&t, &o, r, 3, NULL);
	CHECK(t.status == EV_OK && !has(&t, "\"ph\":\"s\"") && t.stats.flows == 0 && t.stats.unmatched == 0);
	tl_free(&t);

	/* max_pending 0: ends that would wait are dropped and counted. */
	tl_init(&t, meta);
	o.no_flows = 0;
	o.max_pending = 0;
	tl_run(&t, &o, r, 3, NULL);
	CHECK(t.status == EV_OK && t.stats.flows == 0 && t.stats.dropped == 3);
	tl_free(&t);
}

/* A collective chained across three ranks, and a launch arrow. */
static void test_collective_and_launch(void)
{
	struct tl t;
	struct ev_perfetto_opts o;
	tl_init(&t, NULL);
	opts(&o);
	struct ev_rec r[5];
	r[0] = rec(EV_API, 0, 100, 0, 10);
	r[0].id = 42;
	for (uint32_t i = 0; i < 3; i++) {
		r[1 + i] = rec(EV_COLL, i, 4, 20 + i * 10, 100);
		r[1 + i].op = EV_OP_ALLREDUCE;
		r[1 + i].comm = 9;
		r[1 + i].aux = 3;
		r[1 + i].bytes = 64;
	}
	r[4] = rec(EV_KERNEL, 0, 7, 60, 10);
	r[4].id = 42;
	tl_run(&t, &o, r, 5, NULL);
	CHECK(t.status == EV_OK);
	CHECK(t.stats.flows_by_kind[EV_PERFETTO_COLLECTIVE] == 2 && t.stats.flows_by_kind[EV_PERFETTO_LAUNCH] == 1);
	CHECK(t.stats.flows == 3 && t.stats.incomplete == 0);
	CHECK(has(&t, "{\"ph\":\"s\",\"pid\":0,\"tid\":4,\"id\":1,\"cat\":\"collective\",\"name\":\"allreduce\""));
	CHECK(has(&t, "{\"ph\":\"f\",\"pid\":2,\"tid\":4,\"bp\":\"e\",\"id\":1,\"cat\":\"collective\""));
	CHECK(has(&t, "{\"ph\":\"s\",\"pid\":2,\"tid\":4,\"id\":2,\"cat\":\"collective\""));
	CHECK(has(&t, "{\"ph\":\"f\",\"pid\":4,\"tid\":4,\"bp\":\"e\",\"id\":2,\"cat\":\"collective\""));
	CHECK(has(&t, "{\"ph\":\"s\",\"pid\":1,\"tid\":100,\"id\":3,\"cat\":\"launch\",\"name\":\"launch\",\"ts\":0.000}"));
	CHECK(has(&t, "{\"ph\":\"f\",\"pid\":0,\"tid\":7,\"bp\":\"e\",\"id\":3,\"cat\":\"launch\",\"name\":\"launch\","
	              "\"ts\":0.060}"));
	CHECK(has(&t, "\"nranks\":3"));
	tl_free(&t);
}

/* Counter tracks: samples where the value changes, one per instant; a
 * counter record is a sample of its own series on the CPU process. */
static void test_counters(void)
{
	struct tl t;
	struct ev_perfetto_opts o;
	tl_init(&t, NULL);
	opts(&o);
	struct ev_rec r[4];
	r[0] = rec(EV_KERNEL, 0, 7, 0, 50);
	r[1] = rec(EV_KERNEL, 0, 8, 10, 40); /* both end at 50: one sample there */
	r[2] = rec(EV_COUNTER, 0, 0, 20, 0);
	r[2].name = str(&t, "power");
	r[2].bytes = 300;
	r[3] = rec(EV_DEP, 0, 0, 30, 0);
	tl_run(&t, &o, r, 4, NULL);
	CHECK(t.status == EV_OK);
	CHECK(has(&t, "{\"ph\":\"C\",\"pid\":0,\"tid\":0,\"name\":\"kernels\",\"ts\":0.000,\"args\":{\"running\":1}}"));
	CHECK(has(&t, "{\"ph\":\"C\",\"pid\":0,\"tid\":0,\"name\":\"kernels\",\"ts\":0.010,\"args\":{\"running\":2}}"));
	CHECK(has(&t, "{\"ph\":\"C\",\"pid\":0,\"tid\":0,\"name\":\"kernels\",\"ts\":0.050,\"args\":{\"running\":0}}"));
	CHECK(count(&t, "\"name\":\"kernels\"") == 3);
	CHECK(has(&t, "{\"ph\":\"C\",\"pid\":1,\"tid\":0,\"name\":\"power\",\"ts\":0.020,\"args\":{\"value\":300}}"));
	CHECK(t.stats.skipped == 1 && t.stats.records == 4);
	tl_free(&t);

	tl_init(&t, NULL);
	o.no_counters = 1;
	r[2].name = str(&t, "power");
	tl_run(&t, &o, r, 4, NULL);
	CHECK(t.status == EV_OK && !has(&t, "\"kernels\"") && has(&t, "\"name\":\"power\""));
	tl_free(&t);
}

/* Layout, absolute times, rank prefixes, and gzip giving the same text. */
static void test_options(void)
{
	struct tl t, z;
	struct ev_perfetto_opts o;
	tl_init(&t, NULL);
	opts(&o);
	o.layout = EV_PERFETTO_LAYOUT_AORTA;
	o.absolute = 1;
	o.rank_prefix = 1;
	struct ev_rec r[2];
	r[0] = rec(EV_KERNEL, 2, 7, 1765217844837674381LL, 1001);
	r[1] = rec(EV_MARK, 2, 9, 1765217844837674400LL, 0);
	r[1].name = str(&t, "here");
	r[1].op = EV_RG_USER;
	tl_run(&t, &o, r, 2, NULL);
	CHECK(t.status == EV_OK);
	CHECK(has(&t, "{\"ph\":\"X\",\"pid\":2000,\"tid\":7,\"name\":\"[R2] kernel other\",\"cat\":\"kernel\","
	              "\"ts\":1765217844837674.381,\"dur\":1.001"));
	CHECK(has(&t, "{\"ph\":\"i\",\"pid\":2500,\"tid\":9,\"name\":\"[R2] here\",\"cat\":\"user\","
	              "\"ts\":1765217844837674.400,\"s\":\"t\""));
	CHECK(has(&t, "\"time\":\"absolute\",\"ts_base_ns\":\"0\""));

	tl_init(&z, NULL);
	r[1].name = str(&z, "here");
	o.gzip = 1;
	char gz[160];
	snprintf(gz, sizeof gz, "%s/out.json.gz", dir);
	tl_run(&z, &o, r, 2, gz);
	CHECK(z.status == EV_OK && t.json && z.json && strcmp(t.json, z.json) == 0);
	CHECK(z.stats.json_bytes == t.len);
	tl_free(&t);
	tl_free(&z);
}

/* Failures: records out of order, the event limit, a full output. */
static void test_errors(void)
{
	struct tl t;
	struct ev_perfetto_opts o;
	tl_init(&t, NULL);
	opts(&o);
	unlink(t.path);
	struct ev_rec r[3];
	r[0] = rec(EV_KERNEL, 0, 7, 500, 10);
	r[1] = rec(EV_KERNEL, 1, 7, 400, 10);
	tl_run(&t, &o, r, 2, NULL);
	CHECK(t.status == EV_ERR_ORDER && t.err.status == EV_ERR_ORDER && !t.err.in_output);
	CHECK(strcmp(t.err.msg, "out of order (ts 400 after 500); sort with ev-merge --sort") == 0);
	CHECK(access(t.path, F_OK) != 0); /* aborted: no output left */
	tl_free(&t);

	/* The first kernel gives 5 events (metadata, its slice), the second more. */
	tl_init(&t, NULL);
	o.max_events = 6;
	r[1] = rec(EV_KERNEL, 0, 7, 600, 10);
	tl_run(&t, &o, r, 2, NULL);
	CHECK(t.status == EV_ERR_LIMIT && strcmp(t.err.msg, "more than 6 trace events") == 0);
	tl_free(&t);

	/* A full device: the caller's output failed (once the JSON outgrows
	 * its buffer), and the message is the caller's to write. */
	ev_output *out;
	ev_perfetto *p;
	int rc = EV_OK;
	tl_init(&t, NULL);
	o.max_events = 0;
	CHECK(ev_output_open(&out, "/dev/full") == EV_OK);
	CHECK(ev_perfetto_new(&p, &o, t.st, t.meta, out) == EV_OK);
	for (int i = 0; i < 100000 && rc == EV_OK; i++) {
		r[0] = rec(EV_KERNEL, 0, 7, i * 10, 5);
		rc = ev_perfetto_add(p, &r[0]);
	}
	CHECK(rc == EV_ERR_IO && ev_perfetto_error(p)->in_output && ev_perfetto_error(p)->msg[0] == '\0');
	CHECK(ev_perfetto_add(p, &r[0]) == EV_ERR_IO && ev_perfetto_finish(p) == EV_ERR_IO);
	ev_perfetto_free(p);
	ev_output_abort(out);
	tl_free(&t);

	struct ev_rec e = rec(EV_DEP, 0, 0, 0, 0);
	CHECK(ev_perfetto_events_max(&e) == 0);
	e.type = EV_MARK;
	CHECK(ev_perfetto_events_max(&e) == 1);
	e.type = EV_SEND;
	CHECK(ev_perfetto_events_max(&e) == 2);
}

/* --tb's writer: one file per rank through the open callback, named by the
 * worker; GPU events on pid = the device from #rank device=, a flex2ev
 * collective span as nccl:<coll> with an external id, the closing keys. */
struct tb_ctx { char paths[4][160]; ev_output *outs[4]; int n; };

static int tb_open_cb(void *ctx, uint32_t rank, const char *worker, ev_output **out)
{
	struct tb_ctx *c = ctx;
	(void)rank;
	CHECK(c->n < 4);
	snprintf(c->paths[c->n], sizeof c->paths[0], "%s/%s.pt.trace.json", dir, worker);
	int rc = ev_output_open(out, c->paths[c->n]);
	c->outs[c->n++] = *out;
	return rc;
}

static void test_tb(void)
{
	char w[64];
	struct tl t;
	const char *meta[] = { "#rank 0 host=node.a device=aiu3 pid=42", "#rank 1 device=gpu", NULL };
	tl_init(&t, meta);
	ev_tb_worker(t.meta, 0, w, sizeof w);
	CHECK(strcmp(w, "node_a_0") == 0);
	ev_tb_worker(t.meta, 1, w, sizeof w);
	CHECK(strcmp(w, "worker_1") == 0);
	struct ev_rec r[4];
	r[0] = rec(EV_API, 0, 9, 100, 10);
	r[0].id = 5;
	r[1] = rec(EV_KERNEL, 0, 7, 200, 50);
	r[1].id = 5;
	r[1].name = str(&t, "gemm");
	r[2] = rec(EV_COLL, 1, 0, 300, 40);
	r[2].op = 1;
	r[2].flags = EV_F_SYNTH;
	r[3] = rec(EV_DEP, 1, 0, 300, 0);
	struct ev_perfetto_opts o;
	opts(&o);
	struct tb_ctx c = { .n = 0 };
	ev_tb *tb = NULL;
	CHECK(ev_tb_new(&tb, &o, t.st, t.meta, tb_open_cb, &c) == EV_OK);
	for (size_t i = 0; i < 4; i++)
		CHECK(ev_tb_add(tb, &r[i]) == EV_OK);
	CHECK(ev_tb_finish(tb) == EV_OK);
	struct ev_tb_stats s;
	ev_tb_get_stats(tb, &s);
	CHECK(s.records == 4 && s.ranks == 2 && s.skipped == 1 && s.dev_guessed == 1);
	struct ev_rec late = rec(EV_KERNEL, 0, 7, 50, 1);
	CHECK(ev_tb_add(tb, &late) == EV_ERR_ORDER);
	ev_tb_free(tb);
	CHECK(c.n == 2);
	for (int i = 0; i < c.n; i++)
		CHECK(ev_output_close(c.outs[i]) == EV_OK);
	t.json = slurp(c.paths[0], &t.len);
	CHECK(has(&t, "{\"schemaVersion\":1,\"traceEvents\":["));
	CHECK(has(&t, "{\"ph\":\"X\",\"pid\":42,\"tid\":9,\"name\":\"api\",\"cat\":\"cuda_runtime\""));
	CHECK(has(&t, "{\"ph\":\"X\",\"pid\":3,\"tid\":7,\"name\":\"gemm\",\"cat\":\"kernel\",\"ts\":0.100,\"dur\":0.050,"
	              "\"args\":{\"rank\":0,\"device\":3,\"stream\":7,\"correlation\":5"));
	CHECK(has(&t, "\"deviceProperties\":[{\"id\":0},{\"id\":1},{\"id\":2},{\"id\":3,\"name\":\"aiu3\"}]"));
	CHECK(has(&t, "\"distributedInfo\":{\"rank\":0,\"world_size\":2}"));
	CHECK(has(&t, "\"baseTimeNanoseconds\":100"));
	free(t.json);
	t.json = slurp(c.paths[1], &t.len);
	CHECK(has(&t, "\"pid\":1,\"tid\":0,\"name\":\"nccl:all_reduce\",\"cat\":\"gpu_user_annotation\""));
	CHECK(has(&t, "\"external id\":1"));
	CHECK(has(&t, "\"name\":\"PyTorch Profiler (0)\",\"cat\":\"Trace\",\"ts\":0.200,\"dur\":0.040"));
	tl_free(&t);
}

int main(void)
{
	snprintf(dir, sizeof dir, "/tmp/test_perfetto.XXXXXX");
	if (!mkdtemp(dir)) {
		perror("mkdtemp");
		return 1;
	}
	RUN(test_one_kernel);
	RUN(test_tracks_and_lanes);
	RUN(test_message_flow);
	RUN(test_collective_and_launch);
	RUN(test_counters);
	RUN(test_options);
	RUN(test_errors);
	RUN(test_tb);
	char cmd[128];
	snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
	if (system(cmd) != 0)
		fprintf(stderr, "could not remove %s\n", dir);
	return unit_report("test_perfetto");
}
