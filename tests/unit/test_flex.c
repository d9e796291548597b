/* SPDX-License-Identifier: MIT */
/*
 * test_flex.c - lib/flex: acelyzer's classes, name normalisation, dialect
 * evidence, event parsing (hex counters, peers, sync tags), device time
 * with overflow correction, compiler logs, the converter on B/E pairs, and
 * acelyzer's tables (ev_flex_stats) on a small record set worked by hand.
 */
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <unistd.h>

#include "ev.h"
#include "ev/flex.h"
#include "flex/iterdet_int.h"
#include "unit.h"

static unsigned cls(const char *n, int coll)
{
	return ev_flex_classify(n, strlen(n), coll);
}

static void test_classes(void)
{
	CHECK(cls("add_11 Cmpt Prep", 0) == EV_FC_COMPUTE_PREP);
	CHECK(cls("add_11 Cmpt Exec", 0) == EV_FC_COMPUTE_EXEC);
	CHECK(cls("AllReduce_all_reduce_4_Add_1 Cmpt Exec", 1) == EV_FC_COMPUTE_EXEC);
	CHECK(cls("x DmaI", 0) == EV_FC_DATA_IN);
	CHECK(cls("x DmaO", 0) == EV_FC_DATA_OUT);
	CHECK(cls("SenRdmaSend_82227 [sync=A_s0_r1_0] DmaO", 1) == EV_FC_P2PRDMA_SEND_DATA);
	CHECK(cls("SenRdmaReceive_1 [524288B] [sync=A] DmaI", 1) == EV_FC_P2PRDMA_RECV_DATA);
	CHECK(cls("SenRdmaSend_1 - Set BcList [sync=A] DmaO", 1) == EV_FC_MAIU_PROTOCOL_SERIAL);
	CHECK(cls("SenRdmaSend_1 - Xseg to rank 2 [sync=A] DmaO", 1) == EV_FC_MAIU_PROTOCOL_SERIAL);
	CHECK(cls("Host DMA Wait for ACK DmaI", 1) == EV_FC_HDMA_WAIT_ACK);
	CHECK(cls("Host DMA Send Instruction", 1) == EV_FC_HDMA_SIGNAL_DATA);
	CHECK(cls("Host DMA x DmaO", 1) == EV_FC_HDMA_SEND_DATA);
	CHECK(cls("DLM Wait", 1) == EV_FC_HDMA_WAIT_DATA);
	CHECK(cls("Compute of Foo", 0) == EV_FC_SEN_DATA_CONVERT);
	CHECK(cls("Compute of SenFusedDeviceNode_3", 0) == EV_FC_OTHER);
	CHECK(cls("PrepareAndSyncRdma", 0) == EV_FC_MAIU_WIREUP);
	CHECK(cls("Barrier: all", 0) == EV_FC_MAIU_BARRIER);
	CHECK(cls("Flex RoundTrip", 0) == EV_FC_ROUNDTRIP_FLEX);
	CHECK(cls("AIU Roundtrip", 0) == EV_FC_ROUNDTRIP_AIU);
	CHECK(cls("LaunchComputeStream", 0) == EV_FC_OTHER);
	CHECK(ev_flex_refine(EV_FC_DATA_OUT, 1, 128) == EV_FC_PROTOCOL_SIGNAL_DATA);
	CHECK(ev_flex_refine(EV_FC_DATA_IN, 1, 128) == EV_FC_PROTOCOL_SIGNAL_ACK);
	CHECK(ev_flex_refine(EV_FC_DATA_IN, 1, 4096) == EV_FC_PROTOCOL_RECV_DATA);
	CHECK(ev_flex_refine(EV_FC_DATA_OUT, 0, 0) == EV_FC_PROTOCOL_SEND_DATA);
	CHECK(ev_flex_refine(EV_FC_COMPUTE_EXEC, 1, 128) == EV_FC_COMPUTE_EXEC);
	unsigned c;
	for (unsigned i = 0; i < EV_FC_COUNT; i++)
		CHECK(ev_flex_class_parse(ev_flex_class_name(i), strlen(ev_flex_class_name(i)), &c) == EV_OK && c == i);
	CHECK(ev_flex_class_parse("NOPE", 4, &c) == EV_ERR_ARG);
	CHECK(ev_flex_instr("a DmaI", 6) == 0 && ev_flex_instr("a Cmpt Exec", 11) == 2 && ev_flex_instr("x", 1) == -1);
}

static void test_norm(void)
{
	char out[128];
	const char *n = "AllReduce_all_reduce_4_Add_1 Cmpt Exec";
	ev_flex_norm_name(n, strlen(n), out);
	CHECK(!strcmp(out, "AllReduce_all_reduce_[N]_Add_[N] Cmpt Exec"));
	n = "view-VirtualReshape-Output-LxRelayout Cmpt Exec";
	ev_flex_norm_name(n, strlen(n), out);
	CHECK(!strcmp(out, n));
	n = "conv-12x_3";
	ev_flex_norm_name(n, strlen(n), out);
	CHECK(!strcmp(out, "conv_[N]x_[N]"));
}

static enum ev_dialect sniff_text(const char *doc)
{
	struct ev_flex_sniff s;
	struct ev_json_tok t[256];
	ev_flex_sniff_init(&s);
	int n = ev_json_tokenize(doc, strlen(doc), t, 256);
	if (n < 0)
		return (enum ev_dialect)-1;
	/* a bare array of events */
	for (int i = 1, k = 0; k < t[0].size; k++, i = ev_json_skip(t, i))
		ev_flex_sniff_event(&s, doc, t, i);
	return ev_flex_sniff_verdict(&s);
}

static void test_sniff(void)
{
	CHECK(sniff_text("[{\"ph\":\"B\",\"name\":\"a\",\"attr\":{\"TS1\":\"1\",\"TS5\":\"2\"}}]") == EV_DIALECT_FLEX);
	CHECK(sniff_text("[{\"ph\":\"X\",\"name\":\"k Cmpt Exec\"}]") == EV_DIALECT_FLEX);
	CHECK(sniff_text("[{\"ph\":\"X\",\"name\":\"k\",\"args\":{\"CollGroup\":\"g\"}}]") == EV_DIALECT_FLEX);
	CHECK(sniff_text("[{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"k Cmpt Exec\"}]") == EV_DIALECT_KINETO);
	CHECK(sniff_text("[{\"ph\":\"M\",\"name\":\"process_name\"}]") == EV_DIALECT_META_ONLY);
	CHECK(sniff_text("[]") == EV_DIALECT_EMPTY);
	CHECK(sniff_text("[{\"ph\":\"X\",\"name\":\"frame\",\"cat\":\"render\"}]") == EV_DIALECT_UNKNOWN);
	struct ev_flex_sniff s;
	ev_flex_sniff_init(&s);
	ev_flex_sniff_top(&s, "deviceProperties", 16, "[]", 2);
	CHECK(ev_flex_sniff_verdict(&s) == EV_DIALECT_KINETO);
	ev_flex_sniff_init(&s);
	const char *od = "{\"Application\":\"Acelyzer: Trace Post-Processing Tool\"}";
	ev_flex_sniff_top(&s, "otherData", 9, od, strlen(od));
	CHECK(ev_flex_sniff_verdict(&s) == EV_DIALECT_PROCESSED);
	char what[256];
	ev_flex_sniff_describe(&s, what, sizeof what);
	CHECK(strstr(what, "first top-level key \"otherData\"") != NULL);
	ev_flex_sniff_describe(&s, what, 8); /* truncation is safe */
	CHECK(strlen(what) < 8);
	/* The producer of a processed view, as kineto2ev names it. */
	CHECK(!strcmp(ev_processed_producer(od, strlen(od)), "Acelyzer"));
	const char *pf = "{\"producer\":\"ev2perfetto (evkit) 0.1.0\"}";
	CHECK(!strcmp(ev_processed_producer(pf, strlen(pf)), "ev2perfetto"));
	CHECK(ev_processed_producer("{\"producer\":\"x\"}", 16) == NULL);
	CHECK(ev_processed_producer(NULL, 0) == NULL);
}

/* EV_SNIFF_FLEX_ONLY stops at the first PyTorch event: a file whose later
 * part is broken sniffs as Kineto with it, and fails to parse without it
 * (the full read goes on to look for a processed view's otherData). */
static void test_sniff_flex_only(void)
{
	char path[] = "/tmp/ev-sniff-XXXXXX";
	int fd = mkstemp(path);
	CHECK(fd >= 0);
	if (fd < 0)
		return;
	const char *doc = "{\"metadata\":{},\"traceEvents\":[{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"k\","
	                  "\"ts\":1,\"dur\":1},{\"ph\":\"X\",\"cat\":";
	CHECK(write(fd, doc, strlen(doc)) == (ssize_t)strlen(doc));
	close(fd);
	enum ev_dialect d = EV_DIALECT_UNKNOWN;
	CHECK(ev_flex_sniff_file(path, 1000, EV_SNIFF_FLEX_ONLY, &d, NULL, 0) == EV_OK);
	CHECK(d == EV_DIALECT_KINETO);
	CHECK(ev_flex_sniff_file(path, 1000, 0, &d, NULL, 0) != EV_OK);
	unlink(path);
}

static int parse(const char *doc, struct ev_flex_event *e, char *buf, size_t cap)
{
	static struct ev_json_tok t[256];
	int n = ev_json_tokenize(doc, strlen(doc), t, 256);
	if (n < 0)
		return n;
	return ev_flex_event_parse(doc, t, 0, buf, cap, e);
}

static void test_event(void)
{
	char buf[1024];
	struct ev_flex_event e;
	const char *d = "{\"attr\":{\"TS1\":\"0xc06cc211\",\"TS2\":\"0xc06cc211\",\"TS3\":\"0xc0732073\",\"TS4\":\"0xc0736e0e\","
	                "\"TS5\":\"0xc0736e14\",\"Bytes\":\"524288\",\"CollGroup\":\"G_4\",\"Peers\":\"0,1,2\",\"Type\":\"Set BCList\"},"
	                "\"name\":\"S - Set BcList [sync=G_4_s3_r0x7_6] DmaO\",\"ph\":\"B\",\"pid\":3,"
	                "\"tid\":15514734831341844875,\"ts\":1475000720166.077}";
	CHECK(parse(d, &e, buf, sizeof buf) == EV_OK);
	CHECK(e.ph == 'B' && e.pid == 3 && e.tid == 15514734831341844875ull);
	CHECK(e.ts == 1475000720166077ll && e.have_ts);
	CHECK(e.have_cyc && e.cyc[0] == 0xc06cc211u && e.cyc[3] == 0xc0736e0eu);
	CHECK(e.have_bytes && e.bytes == 524288);
	CHECK(e.group_len == 3 && !memcmp(e.group, "G_4", 3));
	CHECK(e.npeers == 3 && e.peers[2] == 2 && e.ctype == EV_FT_BCLIST);
	CHECK(e.sync_len == 13 && !memcmp(e.sync, "G_4_s3_r0x7_6", 13));
	const char *r = "{\"name\":\"RdmaRecv_5_x\",\"ph\":\"X\",\"pid\":0,\"ts\":1,\"dur\":2.5,"
	                "\"args\":{\"Type\":\"WDone Barrier\",\"correlation\":77}}";
	CHECK(parse(r, &e, buf, sizeof buf) == EV_OK);
	CHECK(e.npeers == 1 && e.peers[0] == 5 && e.ctype == EV_FT_DONE && e.dur == 2500 && e.correlation == 77);
	CHECK(!e.have_cyc);
	CHECK(parse("{\"name\":\"a\",\"ph\":\"B\",\"ts\":\"soon\"}", &e, buf, sizeof buf) == EV_ERR_FORMAT);
	CHECK(parse("[1]", &e, buf, sizeof buf) == EV_ERR_FORMAT);
	CHECK(parse("{\"name\":\"a\",\"ph\":\"X\",\"ts\":5,\"dur\":-1}", &e, buf, sizeof buf) == EV_OK && e.have_dur < 0);
}

static void test_device_time(void)
{
	struct ev_flex_event e;
	memset(&e, 0, sizeof e);
	e.name = "k Cmpt Exec";
	e.name_len = strlen(e.name);
	e.have_cyc = 1;
	uint64_t c[5] = { 100, 100, 1000, 6000, 6005 };
	memcpy(e.cyc, c, sizeof c);
	int64_t ts;
	uint64_t dur;
	CHECK(ev_flex_device_time(&e, 10000, 10000, 1000000, &ts, &dur) == 0);
	CHECK(dur == 5000 && ts == 15000);
	CHECK(ev_flex_device_time(&e, 10000, 10000, 500000, &ts, &dur) == 0 && dur == 10000 && ts == 10000);
	/* TS4 wrapped past 2^32: corrected. */
	uint64_t w[5] = { 0xFFFFF000u, 0xFFFFF000u, 0xFFFFFF00u, 0x100, 0x105 };
	memcpy(e.cyc, w, sizeof w);
	CHECK(ev_flex_device_time(&e, 0, 100000, 1000000, &ts, &dur) == 1 && dur == 0x200);
	/* No instruction keyword: host start, TS1..TS5. */
	e.name = "other";
	e.name_len = 5;
	memcpy(e.cyc, c, sizeof c);
	CHECK(ev_flex_device_time(&e, 7, 1, 1000000, &ts, &dur) == 0 && ts == 7 && dur == 5905);
	CHECK(ev_flex_cycles_ns(1100, 1100000) == 1000);
	CHECK(ev_flex_cycles_ns(1, 3000000) == 0 && ev_flex_cycles_ns(2, 3000000) == 1);
}

/* Files opened as inputs are remembered by inode for the process's life
 * (inputs are sacred): removed only at the end, so that a later temp file
 * cannot reuse the inode and be refused as an output. */
static char complog_path[] = "/tmp/test_flex_logXXXXXX";

static void test_complog(void)
{
	char *path = complog_path;
	int fd = mkstemp(path);
	CHECK(fd >= 0);
	const char *log =
		"noise\n~~~~ Ideal/Total Cycles ~~~~\n---\nName   Ideal Cy.\n---\n"
		"conv_1-opCatConv_fp16      100\n"
		"x-Precompute-opCatConv_fp16  5\n"
		"odd-NA    7\n"
		"conv_1-opCatOther   999\n"
		"Total\t\t107\n====== Perf Summary End ======\n"
		"after-opCatScalar 3\n";
	CHECK(write(fd, log, strlen(log)) == (ssize_t)strlen(log));
	close(fd);
	struct ev_flex_complog cl;
	memset(&cl, 0, sizeof cl);
	CHECK(ev_flex_complog_read(&cl, path) == EV_OK);
	CHECK(cl.n == 2 && cl.tables == 1 && cl.total == 107);
	const struct ev_flex_kernel_info *k = ev_flex_complog_find(&cl, "conv_1 Cmpt Exec", 16);
	CHECK(k && k->ideal == 100 && !strcmp(k->category, "Conv_fp16"));
	k = ev_flex_complog_find(&cl, "odd", 3);
	CHECK(k && !strcmp(k->category, "NotAvailable"));
	CHECK(!ev_flex_complog_find(&cl, "after Cmpt Exec", 15));
	ev_flex_complog_free(&cl);
	fd = open(path, O_WRONLY | O_TRUNC);
	CHECK(fd >= 0 && write(fd, "nothing\n", 8) == 8);
	close(fd);
	CHECK(ev_flex_complog_read(&cl, path) == EV_ERR_FORMAT);
	ev_flex_complog_free(&cl);
}

/* The converter: nested and overlapping B/E on one thread, unmatched ends. */
static void test_convert(void)
{
	ev_strtab *st = ev_strtab_new();
	struct ev_flex_opts o;
	ev_flex_opts_init(&o);
	ev_flex_conv *c;
	CHECK(st && ev_flex_conv_new(&c, &o, st) == EV_OK);
	const char *evs[] = {
		"{\"name\":\"outer\",\"ph\":\"B\",\"pid\":2,\"tid\":1,\"ts\":1}",
		"{\"name\":\"inner\",\"ph\":\"B\",\"pid\":2,\"tid\":1,\"ts\":2}",
		"{\"name\":\"inner\",\"ph\":\"E\",\"pid\":2,\"tid\":1,\"ts\":3}",
		"{\"name\":\"outer\",\"ph\":\"E\",\"pid\":2,\"tid\":1,\"ts\":9}",
		"{\"name\":\"late\",\"ph\":\"E\",\"pid\":2,\"tid\":1,\"ts\":9}",
		"{\"name\":\"open\",\"ph\":\"B\",\"pid\":5,\"tid\":1,\"ts\":9}",
		"{\"name\":\"rev\",\"ph\":\"B\",\"pid\":2,\"tid\":1,\"ts\":9}",
		"{\"name\":\"rev\",\"ph\":\"E\",\"pid\":2,\"tid\":1,\"ts\":8}",
	};
	char buf[512];
	for (size_t i = 0; i < sizeof evs / sizeof *evs; i++) {
		struct ev_flex_event e;
		CHECK(parse(evs[i], &e, buf, sizeof buf) == EV_OK);
		CHECK(ev_flex_conv_event(c, 0, &e) == EV_OK);
	}
	ev_flex_conv_end_source(c, 0);
	const struct ev_flex_counts *n = ev_flex_conv_counts(c);
	CHECK(n->pairs == 2 && n->unmatched_b == 1 && n->unmatched_e == 1 && n->reversed == 1);
	char path[] = "/tmp/test_flex_evXXXXXX";
	int fd = mkstemp(path);
	close(fd);
	ev_writer *w;
	int wrc = ev_writer_open(&w, path, st);
	CHECK(wrc == EV_OK);
	if (wrc != EV_OK) {
		ev_flex_conv_free(c);
		ev_strtab_free(st);
		return;
	}
	CHECK(ev_flex_conv_finish(c, w) == EV_OK);
	CHECK(ev_writer_close(w) == EV_OK);
	CHECK(n->records == 2 && n->cls[EV_FC_OTHER] == 2);
	CHECK(ev_flex_conv_nranks(c) == 1 && ev_flex_conv_rank(c, 0) == 2); /* pid 5 never completed a slice */
	ev_reader *r;
	struct ev_rec rec;
	CHECK(ev_reader_open(&r, path, st, NULL) == EV_OK);
	ev_reader_skip_text(r, 1);
	CHECK(ev_read(r, &rec) == EV_REC && rec.ts == 1000 && rec.dur == 8000 && rec.rank == 2 && rec.type == EV_RANGE);
	CHECK(ev_read(r, &rec) == EV_REC && rec.ts == 2000 && rec.dur == 1000 && rec.stream == 1);
	CHECK(ev_read(r, &rec) == EV_EOF);
	CHECK(ev_reader_close(r) == EV_OK);
	unlink(path);
	ev_flex_conv_free(c);
	ev_strtab_free(st);
}

/* ---- acelyzer's tables (lib/flex/stats*.c) ---- */

struct spec {
	uint8_t type, op;
	uint32_t rank;
	int64_t ts;
	uint64_t dur, bytes;
	const char *name, *sig, *comm; /* comm: "" for communicator 0 */
	uint32_t seq, aux;
};

/* Three ranks in ns: rank 0 a Prep and three Exec kernels (conv_1, conv_2
 * one name once normalised), rank 1 one kernel, rank 2 a copy and no
 * kernel; collective AllReduce_g seq 1 on both its ranks, seq 2 on rank 1
 * only, and one coll record of communicator 0 that cannot be matched. */
static const struct spec recs[] = {
	{ EV_MEMCPY, 0, 2, 0, 100, 4096, "x DmaI", "DATA_IN x", NULL, 0, 0 },
	{ EV_COUNTER, 0, 0, 100, 0, 7, "power", NULL, NULL, 0, 0 },
	{ EV_RANGE, 0, 0, 500, 500, 0, "conv_1 Cmpt Prep", "COMPUTE_PREP", NULL, 0, 0 },
	{ EV_KERNEL, 0, 0, 1000, 4000, 0, "conv_1 Cmpt Exec", "COMPUTE_EXEC", NULL, 0, 0 },
	{ EV_KERNEL, 0, 1, 2000, 6000, 0, "conv_3 Cmpt Exec", "COMPUTE_EXEC", NULL, 0, 0 },
	{ EV_KERNEL, 0, 0, 6000, 2000, 0, "conv_2 Cmpt Exec", "COMPUTE_EXEC", NULL, 0, 0 },
	{ EV_KERNEL, 0, 0, 9000, 1000, 0, "relu Cmpt Exec", "COMPUTE_EXEC", NULL, 0, 0 },
	{ EV_COLL, EV_OP_ALLREDUCE, 0, 10000, 3000, 1000, "ar", NULL, "AllReduce_g", 1, 2 },
	{ EV_COLL, EV_OP_ALLREDUCE, 1, 11000, 4000, 2000, "ar", NULL, "AllReduce_g", 1, 2 },
	{ EV_COLL, EV_OP_ALLREDUCE, 1, 16000, 1000, 500, "ar", NULL, "AllReduce_g", 2, 2 },
	{ EV_COLL, EV_OP_ALLREDUCE, 2, 20000, 100, 64, "ar", NULL, "", 1, 2 },
};

static uint64_t id_of(ev_strtab *st, const char *s)
{
	uint64_t id = 0;
	if (s && ev_strtab_intern(st, s, strlen(s), &id) != EV_OK)
		return 0;
	return id;
}

/* The records through table t as the CSV text it writes (NULL on error). */
static char *flex_table(enum ev_flex_table t, const struct ev_flex_complog *cl, uint64_t max_samples,
                        struct ev_flex_stats_counts *n)
{
	static char text[2048];
	char path[] = "/tmp/test_flex_tabXXXXXX";
	int fd = mkstemp(path);
	ev_strtab *st = ev_strtab_new();
	ev_output *out = NULL;
	ev_table *tab = NULL;
	ev_flex_stats *s = NULL;
	struct ev_flex_stats_opts o = { .table = t, .core_khz = 1100000, .max_samples = max_samples, .cl = cl };
	size_t ncols;
	const char *const *cols = ev_flex_table_cols(t, &ncols);
	int rc = fd < 0 || !st ? EV_ERR_IO : ev_output_open(&out, path);
	rc = rc ? rc : ev_table_open(&tab, out, EV_TABLE_CSV, cols, ncols);
	rc = rc ? rc : ev_flex_stats_new(&s, &o, st, tab);
	for (size_t i = 0; i < sizeof recs / sizeof *recs && !rc; i++) {
		const struct spec *p = &recs[i];
		struct ev_rec r;
		ev_rec_init(&r);
		r.type = p->type;
		r.op = p->op;
		r.rank = p->rank;
		r.ts = p->ts;
		r.dur = p->dur;
		r.bytes = p->bytes;
		r.name = id_of(st, p->name);
		r.sig = id_of(st, p->sig);
		r.comm = id_of(st, p->comm);
		r.seq = p->seq;
		r.aux = p->aux;
		rc = ev_flex_stats_add(s, &r);
	}
	rc = rc ? rc : ev_flex_stats_finish(s);
	if (s)
		ev_flex_stats_get_counts(s, n);
	ev_flex_stats_free(s);
	int crc = ev_table_close(tab);
	rc = rc ? rc : crc;
	if (out && (crc = ev_output_close(out)) != EV_OK && !rc)
		rc = crc;
	ev_strtab_free(st);
	FILE *f = rc ? NULL : fopen(path, "r");
	size_t len = f ? fread(text, 1, sizeof text - 1, f) : 0;
	text[len] = '\0';
	if (f)
		fclose(f);
	if (fd >= 0) {
		close(fd);
		unlink(path);
	}
	return rc ? NULL : text;
}

static int same(const char *got, const char *want)
{
	if (got && !strcmp(got, want))
		return 1;
	fprintf(stderr, "got:\n%swant:\n%s", got ? got : "(error)\n", want);
	return 0;
}

static void test_stats_tables(void)
{
	struct ev_flex_stats_counts n;
	size_t nc;
	CHECK(ev_flex_table_cols(EV_FLEX_CLASSES, &nc)[0] && nc == 4);
	CHECK(!strcmp(ev_flex_table_names[EV_FLEX_COLLS], "colls") && !ev_flex_table_names[EV_FLEX_NTABLES]);
	/* conv_[N] on rank 0: 4 and 2 us, sample stdev sqrt 2; 6 of 7 us. */
	CHECK(same(flex_table(EV_FLEX_SUMMARY, NULL, 100, &n),
	           "rank,name,calls,total_us,mean_us,median_us,min_us,max_us,stdev_us,percent\n"
	           "0,conv_[N] Cmpt Exec,2,6,3,3,2,4,1.414,85.71\n"
	           "0,relu Cmpt Exec,1,1,1,1,1,1,0,14.29\n"
	           "1,conv_[N] Cmpt Exec,1,6,6,6,6,6,0,100\n"));
	CHECK(n.records == 11 && n.kernels == 4 && n.sketched == 0);
	CHECK(flex_table(EV_FLEX_SUMMARY, NULL, 1, &n) && n.sketched >= 1);
	/* acelyzer's stats_v2: elapsed over the kernels (rank 0 1 to 10 us),
	 * fractions of it; rank 2 has a collective and no kernel: only comm. */
	CHECK(same(flex_table(EV_FLEX_STATS, NULL, 100, &n),
	           "pid,elapsed_time,comp_active_atime,comm_active_atime,comp_active_atime_perc,comm_active_atime_perc\n"
	           "0,9,7,3,0.7777777777777778,0.3333333333333333\n"
	           "1,6,6,5,1,0.8333333333333334\n"
	           "2,,,0.1,,\n"));
	/* Kernel spans: rank 0 1 to 10 us; rank 2 has no kernel, no row. */
	CHECK(same(flex_table(EV_FLEX_ACTIVE, NULL, 100, &n),
	           "rank,kernel_time_us,elapsed_time_us,start_us,end_us,active_pct\n"
	           "0,7,9,1,10,77.78\n"
	           "1,6,6,2,8,100\n"));
	/* Classes from the sig's first word (none: OTHER); colls and counter
	 * samples are no acelyzer events: not counted. */
	CHECK(same(flex_table(EV_FLEX_CLASSES, NULL, 100, &n),
	           "rank,class,events,total_us\n"
	           "0,COMPUTE_PREP,1,0.5\n"
	           "0,COMPUTE_EXEC,3,7\n"
	           "1,COMPUTE_EXEC,1,6\n"
	           "2,DATA_IN,1,0.1\n"));
	/* seq 1 complete: 2(2-1) x 2000 B in [10, 15] us; seq 2 seen on one of
	 * its two ranks, written at the end; communicator 0 never matched. */
	CHECK(same(flex_table(EV_FLEX_COLLS, NULL, 100, &n),
	           "collective,seq,kind,nranks,ranks_seen,bytes,coll_data_bytes,start_us,end_us,span_us,bandwidth_gbps\n"
	           "AllReduce_g,1,allreduce,2,2,2000,4000,10,15,5,0.8\n"
	           "AllReduce_g,2,allreduce,2,1,500,1000,16,17,1,1\n"));
	CHECK(n.colls == 4 && n.colls_incomplete == 1 && n.colls_evicted == 0);
	/* Without logs every kernel is 'other'; its time equals Total's, which
	 * comes first (acelyzer's stable sort of Total, StcdpHbm, other). */
	CHECK(same(flex_table(EV_FLEX_CATEGORIES, NULL, 100, &n),
	           "Pid,Phase,Category,Kernel_Time,Frac_Time,Calls,Ideal_Time,Ideal_Cyc,Frac_Ideal,PT_Util\n"
	           "0,UNKN,StcdpHbm,0,0,0,0,0,0,0\n"
	           "0,UNKN,Total,7,1,3,0,0,0,0\n"
	           "0,UNKN,other,7,1,3,0,0,0,0\n"
	           "1,UNKN,StcdpHbm,0,0,0,0,0,0,0\n"
	           "1,UNKN,Total,6,1,1,0,0,0,0\n"
	           "1,UNKN,other,6,1,1,0,0,0,0\n"));
	CHECK(n.missing == 4 && n.ideal_clipped == 0);
}

/* Categories from a compiler log at 1100 MHz: conv_1 2200 cycles = 2 us
 * of its 4; conv_3 (12 us of 6) and relu (91 us of 1) longer than they
 * ran, so not counted; conv_2 not in the log: other.  Rows by time
 * ascending, ties in acelyzer's order: Total, then the categories. */
static void test_stats_categories(void)
{
	char path[] = "/tmp/test_flex_logXXXXXX";
	int fd = mkstemp(path);
	const char *log = "~~~~ Ideal/Total Cycles ~~~~\n---\nName   Ideal Cy.\n---\n"
	                  "conv_1-opCatConv_fp16  2200\nconv_3-opCatConv_fp16  13200\nrelu-opCatScalar  99999\n"
	                  "Total\t\t115399\n====== Perf Summary End ======\n";
	CHECK(fd >= 0 && write(fd, log, strlen(log)) == (ssize_t)strlen(log));
	if (fd >= 0)
		close(fd);
	struct ev_flex_complog cl;
	memset(&cl, 0, sizeof cl);
	CHECK(ev_flex_complog_read(&cl, path) == EV_OK && cl.n == 3);
	struct ev_flex_stats_counts n;
	CHECK(same(flex_table(EV_FLEX_CATEGORIES, &cl, 100, &n),
	           "Pid,Phase,Category,Kernel_Time,Frac_Time,Calls,Ideal_Time,Ideal_Cyc,Frac_Ideal,PT_Util\n"
	           "0,UNKN,StcdpHbm,0,0,0,0,0,0,0\n"
	           "0,UNKN,Scalar,1,0.1429,1,0,0,0,0\n"
	           "0,UNKN,other,2,0.2857,1,0,0,0,0\n"
	           "0,UNKN,Conv_fp16,4,0.5714,1,2,2200,1,0.5\n"
	           "0,UNKN,Total,7,1,3,2,2200,1,0.2857\n"
	           "1,UNKN,StcdpHbm,0,0,0,0,0,0,0\n"
	           "1,UNKN,other,0,0,0,0,0,0,0\n"
	           "1,UNKN,Scalar,0,0,0,0,0,0,0\n"
	           "1,UNKN,Total,6,1,1,0,0,0,0\n"
	           "1,UNKN,Conv_fp16,6,1,1,0,0,0,0\n"));
	CHECK(n.kernels == 4 && n.missing == 1 && n.ideal_clipped == 2);
	ev_flex_complog_free(&cl);
	unlink(path);
}

/* More collectives open than the matcher holds: the oldest is written
 * before the end, incomplete, and counted. */
static void test_stats_colls_bound(void)
{
	char path[] = "/tmp/test_flex_bndXXXXXX";
	int fd = mkstemp(path);
	ev_strtab *st = ev_strtab_new();
	ev_output *out = NULL;
	ev_table *tab = NULL;
	ev_flex_stats *s = NULL;
	struct ev_flex_stats_opts o = { .table = EV_FLEX_COLLS, .core_khz = 1100000, .max_samples = 100 };
	size_t ncols;
	const char *const *cols = ev_flex_table_cols(EV_FLEX_COLLS, &ncols);
	int rc = fd < 0 || !st ? EV_ERR_IO : ev_output_open(&out, path);
	rc = rc ? rc : ev_table_open(&tab, out, EV_TABLE_CSV, cols, ncols);
	rc = rc ? rc : ev_flex_stats_new(&s, &o, st, tab);
	struct ev_rec r;
	ev_rec_init(&r);
	r.type = EV_COLL;
	r.op = EV_OP_ALLGATHER;
	r.comm = id_of(st, "G");
	r.aux = 2;
	r.dur = 10;
	for (uint32_t i = 1; i <= EV_COLLMATCH_MAX_OPEN + 1 && !rc; i++) {
		r.seq = i;
		r.ts = (int64_t)i * 100;
		rc = ev_flex_stats_add(s, &r);
	}
	CHECK(rc == EV_OK);
	struct ev_flex_stats_counts n;
	memset(&n, 0, sizeof n);
	if (s)
		ev_flex_stats_get_counts(s, &n);
	CHECK(n.colls_incomplete == 1); /* seq 1, written on the last arrival */
	CHECK(rc == EV_OK && ev_flex_stats_finish(s) == EV_OK);
	if (s)
		ev_flex_stats_get_counts(s, &n);
	CHECK(n.colls == EV_COLLMATCH_MAX_OPEN + 1 && n.colls_evicted == 1 &&
	      n.colls_incomplete == EV_COLLMATCH_MAX_OPEN + 1);
	ev_flex_stats_free(s);
	CHECK(ev_table_close(tab) == EV_OK && out && ev_output_close(out) == EV_OK);
	ev_strtab_free(st);
	char line[2][160];
	FILE *f = fopen(path, "r");
	CHECK(f && fgets(line[0], sizeof line[0], f) && fgets(line[1], sizeof line[1], f) &&
	      !strcmp(line[1], "G,1,allgather,2,1,0,0,0.1,0.11,0.01,0\n"));
	if (f)
		fclose(f);
	if (fd >= 0) {
		close(fd);
		unlink(path);
	}
}

/* Kernels named by letters, one every 10 ns from 0 unless ts says. */
static void feed(struct fs_iterdet *d, const char *word, int64_t *t)
{
	for (const char *c = word; *c; c++, *t += 10)
		CHECK(fs_iterdet_add(d, (uint64_t)*c, *t) == EV_OK);
}

static void test_iterdet(void)
{
	struct fs_iterdet d;
	int64_t t = 0;
	/* A one-off X, then ABCDE: found at the end of the second copy (11
	 * kernels, prefix 1 < 11/3), first interval 60 - 10; the third copy
	 * another 50. */
	fs_iterdet_init(&d, 100);
	feed(&d, "XABCDEABCD", &t);
	CHECK(d.state == 0);
	feed(&d, "E", &t);
	CHECK(d.state == 1 && d.rlen == 5 && d.iterations == 1 && d.prev == 60 && d.sum == 50);
	feed(&d, "ABCDE", &t);
	CHECK(d.iterations == 2 && d.prev == 110 && d.sum == 100);
	/* A copy without C: at the second kernel too many (ABDEAB) the tail AB
	 * begins the word; its copy ABCDE (from 200) is not counted, only its
	 * start kept; the next one, at 265, is: 65. */
	feed(&d, "ABDEABCDE", &t);
	CHECK(d.iterations == 2 && d.skips == 1 && d.restarted == 0 && d.prev == 200);
	t = 265;
	feed(&d, "ABCDE", &t);
	CHECK(d.iterations == 3 && d.sum == 165 && fs_iterdet_mean(&d) == 55.0);
	fs_iterdet_free(&d);
	/* Nothing under 10 kernels; then the first split that works, not the
	 * shortest period: ten A's are AAAAA twice. */
	fs_iterdet_init(&d, 100);
	t = 0;
	feed(&d, "AAAAAAAAA", &t);
	CHECK(d.state == 0);
	feed(&d, "A", &t);
	CHECK(d.state == 1 && d.rlen == 5 && d.sum == 50);
	fs_iterdet_free(&d);
	/* No repetition within the window: given up, nothing kept. */
	fs_iterdet_init(&d, 12);
	t = 0;
	feed(&d, "ABCDEFGHIJKL", &t);
	CHECK(d.state == 2 && d.iterations == 0 && !d.name && fs_iterdet_mean(&d) == 0);
	feed(&d, "ABCDEFGHIJKL", &t);
	CHECK(d.state == 2 && d.iterations == 0);
	fs_iterdet_free(&d);
}

/* acelyzer's text of an active table whose columns come in another
 * order: each field found by name; NaN as Python prints it; a missing
 * column, a non-integer pid and a table without text refused. */
static const char *acetext(const char *const *cols, size_t n, const char *const *cells, int *rc)
{
	char path[] = "/tmp/ev-acetext-XXXXXX";
	int fd = mkstemp(path);
	ev_output *out = NULL;
	ev_table *t = NULL;
	struct ev_flex_acetext a;
	struct ev_table_sink sink;
	static char buf[512];
	*rc = fd < 0 ? EV_ERR_IO : ev_output_open(&out, path);
	if (!*rc)
		*rc = ev_flex_acetext_sink(&a, EV_FLEX_ACTIVE, out, &sink);
	if (!*rc)
		*rc = ev_table_open_sink(&t, &sink, "active", cols, n);
	for (size_t i = 0; i < n && !*rc; i++)
		*rc = ev_table_str(t, cells[i]);
	if (t) {
		int c = ev_table_close(t);
		*rc = *rc ? *rc : c;
	}
	if (out && !*rc)
		*rc = ev_output_close(out);
	else if (out)
		ev_output_abort(out);
	if (*rc) {
		if (fd >= 0)
			close(fd);
		unlink(path);
		return NULL;
	}
	return unit_read_back(path, fd, buf, sizeof buf);
}

static void test_acetext(void)
{
	static const char *const cols[] = { "rank", "active_pct", "end_us", "start_us", "elapsed_time_us",
		                            "kernel_time_us" };
	static const char *const cells[] = { "3", "74.4249", "2097962449295.471", "2097962448913.566", "",
		                             "284.2385" };
	int rc;
	const char *s = acetext(cols, 6, cells, &rc);
	CHECK(rc == EV_OK && s &&
	      strcmp(s, "Total Kernel Time  \t  Elapsed Time\t  Start Time\t         End Time  \t Active percentage  \t   pid \n"
	                "  284.238\t        nan\t  2097962448913.566\t 2097962449295.471\t 74.42\t    3\n") == 0);
	CHECK(!acetext(cols, 5, cells, &rc) && rc == EV_ERR_ARG);
	static const char *const bad[] = { "3.5", "1", "1", "1", "1", "1" };
	CHECK(!acetext(cols, 6, bad, &rc) && rc == EV_ERR_FORMAT);
	struct ev_flex_acetext a;
	struct ev_table_sink sink;
	CHECK(ev_flex_acetext_has(EV_FLEX_SUMMARY) && ev_flex_acetext_has(EV_FLEX_TS_ANALYSIS) &&
	      !ev_flex_acetext_has(EV_FLEX_STATS));
	CHECK(ev_flex_acetext_sink(&a, EV_FLEX_STATS, NULL, &sink) == EV_ERR_ARG);
}

int main(void)
{
	RUN(test_classes);
	RUN(test_norm);
	RUN(test_sniff);
	RUN(test_sniff_flex_only);
	RUN(test_event);
	RUN(test_device_time);
	RUN(test_complog);
	RUN(test_convert);
	RUN(test_stats_tables);
	RUN(test_stats_categories);
	RUN(test_stats_colls_bound);
	RUN(test_iterdet);
	RUN(test_acetext);
	unlink(complog_path);
	return unit_report("test_flex");
}
