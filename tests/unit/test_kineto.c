/* SPDX-License-Identifier: MIT */
/*
 * test_kineto.c - lib/kineto called directly: the one-pass event scanner,
 * the link window, ranks from paths, op categories, and whole conversions
 * of small documents (linking through the call stack, old-era collective
 * inference, counted clamps, refused values, dialects, nesting).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "ev.h"
#include "ev/kineto.h"
#include "kineto/kineto_window.h"
#include "unit.h"

static int scan(const char *s, struct ev_kevent *e) { return ev_kineto_scan_event(s, strlen(s), 0, e); }

static void test_scan_fields(void)
{
	struct ev_kevent e;
	const char *ev = "{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"k\\\"1\",\"pid\":0,\"tid\":7,\"ts\":12.5,\"dur\":3,"
	                 "\"args\":{\"stream\":7,\"correlation\":99,\"External id\":5,\"grid\":[2,3,1],\"x\":{\"stream\":1},"
	                 "\"Collective name\":\"allreduce\"},\"stream\":1}";
	CHECK(scan(ev, &e) == EV_OK);
	CHECK(e.is_object);
	CHECK(ev_kspan_eq(&e.f[EV_KF_PH], "X"));
	CHECK(ev_kspan_eq(&e.f[EV_KF_CAT], "kernel"));
	char buf[32];
	CHECK(ev_kspan_text(&e.f[EV_KF_NAME], buf, sizeof buf) == 3 && strcmp(buf, "k\"1") == 0);
	int64_t v;
	CHECK(ev_kspan_us_to_ns(&e.f[EV_KF_TS], &v) == 0 && v == 12500);
	CHECK(ev_kspan_i64(&e.f[EV_KA_STREAM], &v) == 0 && v == 7); /* args' stream, not a nested one */
	CHECK(ev_kspan_i64(&e.f[EV_KA_CORRELATION], &v) == 0 && v == 99);
	CHECK(ev_kspan_i64(&e.f[EV_KA_EXTERNAL_ID], &v) == 0 && v == 5);
	CHECK(e.f[EV_KA_GRID].type == '[' && e.f[EV_KA_GRID].n == 7);
	CHECK(ev_kspan_eq(&e.f[EV_KA_COLL_NAME], "allreduce"));
	/* A repeated key keeps its first value. */
	CHECK(scan("{\"ts\":1,\"ts\":2}", &e) == EV_OK && ev_kspan_eq(&e.f[EV_KF_TS], "1"));
	/* Valid JSON that is not an object: no members. */
	CHECK(scan(" [1, {\"ts\": 3}] ", &e) == EV_OK && !e.is_object && !e.f[EV_KF_TS].type);
}

/* Whitespace of every kind and length 0..40 in every gap of an event (the
 * scanner skips runs 16 bytes at a time): the same members as without it;
 * a byte below ' ' that is not whitespace, put anywhere in a run, is refused. */
static void test_scan_whitespace(void)
{
	static const char *const parts[] = { "{", "\"ts\"", ":", "12.5", ",", "\"args\"", ":", "{", "\"stream\"", ":",
	                                     "7", ",", "\"grid\"", ":", "[", "2", ",", "3", "]", "}", "}" };
	const size_t nparts = sizeof parts / sizeof parts[0];
	static const char ws[] = " \n\t\r";
	char text[1024];
	struct ev_kevent e;
	int64_t v;
	for (size_t gap = 0; gap <= nparts; gap++) {
		for (size_t run = 0; run <= 40; run++) {
			for (int bad = 0; bad < 2; bad++) {
				if (bad && run == 0)
					continue;
				size_t o = 0;
				for (size_t i = 0; i <= nparts; i++) {
					if (i == gap)
						for (size_t k = 0; k < run; k++)
							text[o++] = bad && k == run / 2 ? '\f' : ws[(k * 7 + run) % 4];
					if (i < nparts) {
						memcpy(text + o, parts[i], strlen(parts[i]));
						o += strlen(parts[i]);
					}
				}
				int rc = ev_kineto_scan_event(text, o, 0, &e);
				if (bad) {
					CHECK(rc == EV_ERR_FORMAT);
					continue;
				}
				CHECK(rc == EV_OK);
				CHECK(ev_kspan_us_to_ns(&e.f[EV_KF_TS], &v) == 0 && v == 12500);
				CHECK(ev_kspan_i64(&e.f[EV_KA_STREAM], &v) == 0 && v == 7);
				/* The grid's extent holds the whitespace inside it. */
				const char *open = memchr(text, '[', o), *close = memchr(text, ']', o);
				CHECK(e.f[EV_KA_GRID].type == '[' && e.f[EV_KA_GRID].p == open &&
				      e.f[EV_KA_GRID].n == (uint32_t)(close - open + 1));
			}
		}
	}
}

/* Integers read in place (at most 18 digits) and the long way (signs,
 * fractions, exponents, 19 digits and more) agree with the parser. */
static void test_kspan_integers(void)
{
	static const struct { const char *text; char type; int ok; int64_t v; } cases[] = {
		{ "0", 'n', 1, 0 },
		{ "7", 'n', 1, 7 },
		{ "007", '"', 1, 7 },
		{ "123456789012345678", 'n', 1, 123456789012345678LL },
		{ "9223372036854775807", 'n', 1, INT64_MAX },
		{ "-9223372036854775808", 'n', 1, INT64_MIN },
		{ "-42", 'n', 1, -42 },
		{ "12.7", 'n', 1, 12 },
		{ "1e3", 'n', 1, 1000 },
		{ "12x", '"', 0, 0 },
		{ "", '"', 0, 0 },
		{ "99999999999999999999", 'n', 0, 0 },
		{ "true", 'l', 0, 0 },
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		struct ev_kspan s = { .p = cases[i].text, .n = (uint32_t)strlen(cases[i].text), .type = cases[i].type };
		int64_t v = -1;
		int rc = ev_kspan_i64(&s, &v);
		CHECK(cases[i].ok ? rc == 0 && v == cases[i].v : rc != 0);
	}
}

/* Microseconds to nanoseconds: the decimal parser's answer where it reads
 * the text (signs, rounding past three decimals), the double fallback for
 * exponents, and a refusal where nanoseconds would overflow. */
static void test_kspan_us_to_ns(void)
{
	static const char *const texts[] = {
		"0", "5", "12.5", "12.34", "12.345", "0.001", "4458676983543.183", "99999999999999.999",
		"999999999999999.999", "123456789012345", "12.3456", "12.3455", "12.9999", "-3.5", "-0.0004",
		"9223372036854775", "9223372036854776", "0.0005",
	};
	for (size_t i = 0; i < sizeof texts / sizeof texts[0]; i++) {
		struct ev_kspan sp = { .p = texts[i], .n = (uint32_t)strlen(texts[i]), .type = 'n' };
		int64_t want = 0, got = -1;
		int wrc = ev_parse_decimal_scaled(texts[i], strlen(texts[i]), 3, &want);
		int grc = ev_kspan_us_to_ns(&sp, &got);
		CHECK(wrc == 0 ? grc == 0 && got == want : grc != 0);
	}
	struct ev_kspan e3 = { .p = "1.5e3", .n = 5, .type = 'n' }, str = { .p = "12", .n = 2, .type = '"' };
	int64_t v;
	CHECK(ev_kspan_us_to_ns(&e3, &v) == 0 && v == 1500000);
	CHECK(ev_kspan_us_to_ns(&str, &v) != 0); /* a string is not a time */
}

static void test_scan_strict(void)
{
	static const char *const bad[] = {
		"{\"a\":1,}", "{,}", "[1 2]", "[1,]", "{\"a\" 1}", "{\"a\":01}", "{\"a\":1.}", "{\"a\":tru}",
		"{\"a\":\"\\x\"}", "{\"a\":\"\\u12G4\"}", "{\"a\":1} x", "{\"a\":-}", "{\"a\":1e}", "{\"a\":\"open}", "",
		"{\"a\":[1,2}", "{\"a\":{\"b\":1]}",
	};
	struct ev_kevent e;
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
		CHECK(scan(bad[i], &e) == EV_ERR_FORMAT);
	CHECK(scan("{\"a\":[true,false,null,-1.5e+3,\"\\u00e9\"],\"b\":{}}", &e) == EV_OK);
	/* Token limit: keys and values. */
	CHECK(ev_kineto_scan_event("{\"a\":1,\"b\":2}", 13, 4, &e) == EV_ERR_RANGE);
	CHECK(ev_kineto_scan_event("{\"a\":1,\"b\":2}", 13, 5, &e) == EV_OK);
	/* The limit is compared on the way out: bad text past the limit is
	 * still refused as too many tokens, bad text before it as bad. */
	CHECK(ev_kineto_scan_event("{\"a\":1,\"b\":2,}", 14, 4, &e) == EV_ERR_RANGE);
	CHECK(ev_kineto_scan_event("{\"a\":1 \"b\":2}", 13, 4, &e) == EV_ERR_FORMAT);
	CHECK(ev_kineto_scan_event("{\"a\":{\"b\":1,\"c\":2},\"d\":x}", 25, 5, &e) == EV_ERR_RANGE);
	CHECK(ev_kineto_scan_event("{\"a\":{\"b\":1,\"c\":2},\"d\":x}", 25, 0, &e) == EV_ERR_FORMAT);
	CHECK(ev_kineto_scan_event("{\"a\":{\"b\":1,\"c\":2}}", 19, 5, &e) == EV_ERR_RANGE);
	CHECK(ev_kineto_scan_event("{\"a\":{\"b\":1,\"c\":2}}", 19, 7, &e) == EV_OK);
}

/* A number the scanner keeps carries its integer part, read in the same
 * pass: ev_kspan_i64 and ev_kspan_us_to_ns must answer from it exactly as
 * from the text (a span made by hand), for signs, fractions, exponents,
 * 8, 9, 16 and 18 to 20 digits and the overflow edges, with the number
 * in the middle of a long text and as its last bytes. */
static void test_scan_numbers(void)
{
	static const char *const nums[] = {
		"0", "-0", "7", "-42", "12.7", "-12.7", "1e3", "1.5E-2", "-2.5e+1", "12345678", "100000000",
		"1234567890123456", "123456789012345678", "-123456789012345678", "1234567890123456789",
		"9223372036854775807", "-9223372036854775808", "9999999999999999999", "99999999999999999999",
		"4458676983543.183", "4458676983543.1835", "4458676983543.18349", "0.0005", "-0.0004", "-0.0005",
		"9000000000000000", "9000000000000001", "-9000000000000000.9995", "9223372036854775", "12.9999",
		"12.3455", "0.1",
	};
	for (size_t i = 0; i < sizeof nums / sizeof nums[0]; i++)
		for (int last = 0; last < 2; last++) {
			char ev[256];
			if (last)
				snprintf(ev, sizeof ev, "{\"ts\":%s,\"args\":{\"External id\":%s}}", nums[i], nums[i]);
			else
				snprintf(ev, sizeof ev, "{\"ts\": %s , \"pid\":%s,\"args\":{\"External id\":%s, \"x\":1}, "
				         "\"name\":\"%s\"}", nums[i], nums[i], nums[i], "padding past eight bytes");
			struct ev_kevent e;
			CHECK(scan(ev, &e) == EV_OK);
			struct ev_kspan text = { .p = nums[i], .n = (uint32_t)strlen(nums[i]), .type = 'n' };
			int64_t want = 0, got = 1;
			int wrc = ev_kspan_us_to_ns(&text, &want);
			CHECK(e.f[EV_KF_TS].type == 'n' && e.f[EV_KF_TS].n == text.n);
			CHECK(wrc == 0 ? ev_kspan_us_to_ns(&e.f[EV_KF_TS], &got) == 0 && got == want
			               : ev_kspan_us_to_ns(&e.f[EV_KF_TS], &got) != 0);
			wrc = ev_kspan_i64(&text, &want);
			got = ~want; /* anything else */
			CHECK(wrc == 0 ? ev_kspan_i64(&e.f[EV_KA_EXTERNAL_ID], &got) == 0 && got == want
			               : ev_kspan_i64(&e.f[EV_KA_EXTERNAL_ID], &got) != 0);
		}
}

static void test_scan_depth(void)
{
	/* Depth 10,000 is refused as too deep, at once (no tokenizing first). */
	size_t n = 10000;
	char *s = malloc(2 * n + 16);
	memset(s, '[', n);
	memset(s + n, ']', n);
	struct ev_kevent e;
	clock_t t0 = clock();
	CHECK(ev_kineto_scan_event(s, 2 * n, 0, &e) == EV_ERR_LIMIT);
	CHECK((double)(clock() - t0) / CLOCKS_PER_SEC < 0.5);
	size_t d = EV_JSON_MAX_DEPTH;
	memset(s, '[', d);
	memset(s + d, ']', d);
	CHECK(ev_kineto_scan_event(s, 2 * d, 0, &e) == EV_OK);
	free(s);
}

static void test_window(void)
{
	struct kwin w;
	kwin_init(&w, 1024);
	struct kwin_ent e;
	memset(&e, 0, sizeof e);
	for (uint32_t i = 1; i <= 5000; i++) {
		e.op = i;
		CHECK(kwin_put(&w, 0x1000 + (uint64_t)i * 7919, &e) == EV_OK);
	}
	/* The last 1024 are there, older ones evicted. */
	int found = 0, stale = 0;
	for (uint32_t i = 1; i <= 5000; i++) {
		const struct kwin_ent *g = kwin_get(&w, 0x1000 + (uint64_t)i * 7919);
		if (g && g->op == i)
			found++;
		if (g && i <= 5000 - 1024)
			stale++;
	}
	CHECK(found == 1024);
	CHECK(stale == 0);
	CHECK(w.evicted == 5000 - 1024);
	/* A key put again shadows its older entry, which evicts cleanly. */
	e.op = 1;
	CHECK(kwin_put(&w, 42, &e) == EV_OK);
	e.op = 2;
	CHECK(kwin_put(&w, 42, &e) == EV_OK);
	CHECK(kwin_get(&w, 42)->op == 2);
	kwin_free(&w);
}

/* The index grows from a few thousand slots to twice the window while
 * entries are put, some keys again: at every size the window answers as a
 * plain list of its last `cap` puts would (newest entry of a key, nothing
 * evicted). */
static void test_window_growth(void)
{
	enum { CAP = 16384, PUTS = 3 * CAP, KEYS = 20000 };
	static uint64_t put_key[PUTS];
	struct kwin w;
	kwin_init(&w, CAP);
	CHECK(w.cap == CAP && w.imask < w.imax);
	struct kwin_ent e;
	memset(&e, 0, sizeof e);
	uint64_t x = 12345;
	uint32_t first_mask = w.imask;
	for (uint32_t i = 0; i < PUTS; i++) {
		x = x * 6364136223846793005ULL + 1442695040888963407ULL;
		put_key[i] = 1 + (x >> 33) % KEYS; /* repeats, so keys shadow older entries */
		e.op = i + 1;
		CHECK(kwin_put(&w, put_key[i], &e) == EV_OK);
		if (i % 4099 != 0 && i != CAP - 1 && i != PUTS - 1)
			continue;
		/* Every key against the list: its newest put among the last CAP. */
		for (uint64_t k = 1; k <= KEYS; k += 7) {
			uint32_t want = 0;
			for (uint32_t j = i + 1; j-- > 0 && i - j < CAP;)
				if (put_key[j] == k) {
					want = j + 1;
					break;
				}
			const struct kwin_ent *g = kwin_get(&w, k);
			CHECK(want ? g && g->op == want : g == NULL);
		}
	}
	CHECK(first_mask < w.imask && w.imask == w.imax);
	CHECK(w.evicted == PUTS - CAP);
	kwin_free(&w);
}

static void test_rank_from_path(void)
{
	int64_t r = -1;
	CHECK(ev_kineto_rank_from_path("run/rank3/trace.json", &r) == 0 && r == 3);
	CHECK(ev_kineto_rank_from_path("run/rank_12-x.json", &r) == 0 && r == 12);
	CHECK(ev_kineto_rank_from_path("x/worker5.pt.trace.json", &r) == 0 && r == 5);
	/* A rank beats a worker number; the mix is reported as ambiguous. */
	CHECK(ev_kineto_rank_from_path("rank3/worker0.json", &r) == 2 && r == 3);
	CHECK(ev_kineto_rank_from_path("rank1/rank2.json", &r) == 2 && r == 2);
	CHECK(ev_kineto_rank_from_path("trace.json", &r) == 1);
}

static void test_op_category(void)
{
	CHECK(!strcmp(ev_op_category("aten::mm", NULL), "GEMM"));
	CHECK(!strcmp(ev_op_category("aten::addmm", "Cijk_Ailk"), "GEMM"));
	CHECK(!strcmp(ev_op_category("aten::cudnn_convolution", NULL), "CONV_fwd"));
	CHECK(!strcmp(ev_op_category("aten::convolution_backward", NULL), "CONV_bwd"));
	CHECK(!strcmp(ev_op_category("aten::_scaled_dot_product_flash_attention", NULL), "SDPA_fwd"));
	/* TraceLens has no category for the flash kernels' aten ops (its
	 * reports on the Qwen and BERT traces put them in "other"). */
	CHECK(!strcmp(ev_op_category("aten::_flash_attention_forward", "attn_fwd"), "other"));
	CHECK(!strcmp(ev_op_category("aten::_flash_attention_backward", NULL), "other"));
	CHECK(!strcmp(ev_op_category("aten::native_layer_norm_backward", NULL), "NORM_bwd"));
	CHECK(!strcmp(ev_op_category("record_param_comms", NULL), "record_param_comms"));
	CHECK(!strcmp(ev_op_category("nccl:all_reduce", NULL), "NCCL"));
	CHECK(!strcmp(ev_op_category("triton_poi_fused_add_0", NULL), "triton"));
	CHECK(!strcmp(ev_op_category("aten::sum", NULL), "reduce"));
	CHECK(!strcmp(ev_op_category("aten::result_type_x", "void at::native::vectorized_elementwise_kernel<4>"),
	              "elementwise"));
	CHECK(!strcmp(ev_op_category("aten::foo", "void at::native::reduce_kernel<512>"), "reduce"));
	CHECK(!strcmp(ev_op_category("aten::foo", "sm90_xmma_gemm"), "other"));
	/* TraceLens's InferenceAttention: paged/varlen attention of vLLM,
	 * SGLang and aiter, and their KV-cache writes. */
	static const char *const inference_attention[] = {
		"vllm::unified_attention_with_output", "aiter::mha_varlen_fwd", "aiter::fmha_v3_varlen_fwd",
		"aiter::mha_batch_prefill", "sglang_profiler::attention_paged_attention_ragged", "aiter::pa_decode_gluon",
		"aiter::pa_sparse_prefill_opus_fwd", "sglang_profiler::tilelang_kernel_tilelang_sparse_fwd",
		"vllm::gdn_attention_core", "aiter::linear_attention_with_output_base", "sglang::store_cache",
		"_C_cache_ops::reshape_and_cache_flash", "_C_cache_ops::concat_and_cache_mla",
		"aiter::get_mla_metadata_v1", "aiter::indexer_score_topk",
	};
	for (size_t i = 0; i < sizeof inference_attention / sizeof inference_attention[0]; i++) {
		const char *c = ev_op_category(inference_attention[i], "kernel_unified_attention_2d");
		CHECK(!strcmp(c, "InferenceAttention"));
		if (strcmp(c, "InferenceAttention"))
			fprintf(stderr, "  %s: %s\n", inference_attention[i], c);
	}
}

/* ---- whole conversions --------------------------------------------- */

static char dir[64];

static const char *write_doc(const char *name, const char *text)
{
	static char path[128];
	snprintf(path, sizeof path, "%s/%s", dir, name);
	FILE *f = fopen(path, "w");
	fputs(text, f);
	fclose(f);
	return path;
}

struct conv {
	ev_kineto *k;
	int rc;
	char err[512];
	char out[128];
};

static void convert(struct conv *c, const char *name, const char *doc)
{
	struct ev_kineto_opts o;
	memset(&o, 0, sizeof o);
	o.sort_bytes = 1u << 20;
	c->err[0] = '\0';
	CHECK(ev_kineto_new(&c->k, &o, 1) == EV_OK);
	const char *path = write_doc(name, doc);
	ev_kineto_file(c->k, 0)->path = path;
	ev_input *in;
	CHECK(ev_input_open(&in, path) == EV_OK);
	c->rc = ev_kineto_read(c->k, 0, in, c->err, sizeof c->err);
	ev_input_close(in);
	/* (a file read back is an input of this process: never written again) */
	snprintf(c->out, sizeof c->out, "%s/%s.ev", dir, name);
	if (c->rc == EV_OK) {
		if (ev_kineto_file(c->k, 0)->rank < 0)
			ev_kineto_file(c->k, 0)->rank = 0;
		ev_writer *w;
		CHECK(ev_writer_open(&w, c->out, ev_kineto_strtab(c->k)) == EV_OK);
		CHECK(ev_kineto_write(c->k, w) == EV_OK);
		CHECK(ev_writer_close(w) == EV_OK);
	}
}

/* The records of the output of type t, in order. */
static int records(const char *path, unsigned t, struct ev_rec *out, int max)
{
	ev_reader *r;
	ev_strtab *st = ev_strtab_new();
	int n = 0, rc;
	if (!st || ev_reader_open(&r, path, st, NULL) != EV_OK)
		return -1;
	ev_reader_skip_text(r, 1);
	struct ev_rec rec;
	while ((rc = ev_read(r, &rec)) == EV_REC)
		if (rec.type == t && n < max)
			out[n++] = rec;
	if (rc != EV_EOF)
		n = -2; /* the stream must read back cleanly */
	(void)ev_reader_close(r);
	ev_strtab_free(st);
	return n;
}

static void test_link_through_call_stack(void)
{
	/* The runtime call's External id (7) names the outer op; the call is
	 * inside aten::mm on its thread, and aten::mm is what TraceLens gives
	 * the kernel.  A second kernel has no call: its own External id. */
	struct conv c;
	convert(&c, "link.json",
	        "{\"traceEvents\":[\n"
	        "{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"aten::linear\",\"pid\":1,\"tid\":1,\"ts\":0,\"dur\":100,\"args\":{\"External id\":7}},\n"
	        "{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"aten::mm\",\"pid\":1,\"tid\":1,\"ts\":10,\"dur\":50,\"args\":{\"External id\":8}},\n"
	        "{\"ph\":\"X\",\"cat\":\"cuda_runtime\",\"name\":\"cudaLaunchKernel\",\"pid\":1,\"tid\":1,\"ts\":20,\"dur\":5,\"args\":{\"correlation\":3,\"External id\":7}},\n"
	        "{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"sm90_gemm\",\"pid\":0,\"tid\":7,\"ts\":30,\"dur\":5,\"args\":{\"correlation\":3,\"External id\":7,\"stream\":7}},\n"
	        "{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"lonely\",\"pid\":0,\"tid\":7,\"ts\":200,\"dur\":5,\"args\":{\"correlation\":4,\"External id\":7,\"stream\":7}},\n"
	        "{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"orphan\",\"pid\":0,\"tid\":7,\"ts\":300,\"dur\":5,\"args\":{\"correlation\":5,\"stream\":7}}\n"
	        "]}");
	CHECK(c.rc == EV_OK);
	const struct ev_kineto_file *fi = ev_kineto_file(c.k, 0);
	CHECK(fi->gpu_events == 3);
	CHECK(fi->linked_stack == 1);
	CHECK(fi->linked_ext == 1);
	CHECK(fi->unlinked == 1);
	struct ev_rec k[4];
	CHECK(records(c.out, EV_KERNEL, k, 4) == 3);
	CHECK(k[0].step == 8 && !(k[0].flags & EV_F_UNLINKED));
	CHECK(k[0].sig == ev_hash64("aten::mm", 8));
	CHECK(k[1].step == 7 && (k[1].flags & EV_F_UNLINKED));
	CHECK(k[2].step == 0 && k[2].sig == 0 && (k[2].flags & EV_F_UNLINKED));
	ev_kineto_free(c.k);
}

/* A cpu_op's signature is its name and shapes with the whitespace between
 * JSON tokens dropped: pretty-printed arguments (indentation runs past
 * sixteen bytes) give the same signature as compact ones. */
static void test_op_signature(void)
{
	static const char *const args[2] = {
		"{\"External id\":1,\"Input Dims\":[[64,64],[64,64]],\"Input type\":[\"float\",\"c10::Half\"],"
		"\"Input Strides\":[[64,1],[1,64]],\"Concrete Inputs\":[\"\",\"abc\",\"[1,2]\"]}",
		"{\n      \"External id\": 1,\n      \"Input Dims\": [\n                    [64, 64],\n"
		"                    [64,\t64]\n                  ],\n      \"Input type\": [\"float\", \"c10::Half\"],\n"
		"      \"Input Strides\": [[64, 1], [1,\r\n                                    64]],\n"
		"      \"Concrete Inputs\": [\"\",   \"abc\",\n \"[1,2]\"]\n    }",
	};
	static const char want[] = "aten::mm dims=[[64,64],[64,64]] types=[\"float\",\"c10::Half\"] "
	                           "strides=[[64,1],[1,64]] concrete=[\"\",\"abc\",\"[1,2]\"]";
	for (int i = 0; i < 2; i++) {
		char doc[1024], name[32];
		snprintf(doc, sizeof doc,
		         "{\"traceEvents\":[\n{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"aten::mm\",\"pid\":1,\"tid\":1,"
		         "\"ts\":0,\"dur\":10,\"args\":%s}\n]}",
		         args[i]);
		snprintf(name, sizeof name, "sig%d.json", i);
		struct conv c;
		convert(&c, name, doc);
		CHECK(c.rc == EV_OK);
		struct ev_rec r[2];
		CHECK(records(c.out, EV_RANGE, r, 2) == 1);
		CHECK(r[0].sig == ev_hash64(want, sizeof want - 1));
		ev_kineto_free(c.k);
	}
	/* Blanks inside strings are the value's, not layout: kept, as
	 * TraceLens groups ops by that text ('long int', '[True, False]'). */
	static const char keep[] = "aten::mm types=[\"long int\"] concrete=[\"[True, False]\"]";
	struct conv c;
	convert(&c, "sig2.json",
	        "{\"traceEvents\":[\n{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"aten::mm\",\"pid\":1,\"tid\":1,"
	        "\"ts\":0,\"dur\":10,\"args\":{\"External id\":1,\"Input type\": [ \"long int\" ],"
	        "\"Concrete Inputs\":[\"[True, False]\"]}}\n]}");
	CHECK(c.rc == EV_OK);
	struct ev_rec r[2];
	CHECK(records(c.out, EV_RANGE, r, 2) == 1);
	CHECK(r[0].sig == ev_hash64(keep, sizeof keep - 1));
	ev_kineto_free(c.k);
}

static void test_old_era_collectives(void)
{
	/* PyTorch <= 2.1: no collective arguments; the nccl:all_reduce
	 * annotation gives the size (2 x 3 floats), the kernel name the rest. */
	struct conv c;
	convert(&c, "old.json",
	        "{\"distributedInfo\":{\"backend\":\"nccl\",\"rank\":2,\"world_size\":4},\"traceEvents\":[\n"
	        "{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"c10d::allreduce_\",\"pid\":1,\"tid\":1,\"ts\":0,\"dur\":100,\"args\":{\"External id\":1}},\n"
	        "{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"record_param_comms\",\"pid\":1,\"tid\":1,\"ts\":1,\"dur\":90,\"args\":{\"External id\":2}},\n"
	        "{\"ph\":\"X\",\"cat\":\"user_annotation\",\"name\":\"nccl:all_reduce\",\"pid\":1,\"tid\":1,\"ts\":2,\"dur\":80,\"args\":{\"Input Dims\":[[2,3]],\"Input type\":[\"float\"]}},\n"
	        "{\"ph\":\"X\",\"cat\":\"cuda_runtime\",\"name\":\"cudaLaunchKernel\",\"pid\":1,\"tid\":1,\"ts\":5,\"dur\":5,\"args\":{\"correlation\":9}},\n"
	        "{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"ncclKernel_AllReduce_RING_LL_Sum_float(ncclWorkElem)\",\"pid\":0,\"tid\":7,\"ts\":30,\"dur\":5,\"args\":{\"correlation\":9,\"stream\":7}},\n"
	        "{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"ncclKernel_AllReduce_RING_LL_Sum_float(ncclWorkElem)\",\"pid\":0,\"tid\":7,\"ts\":130,\"dur\":5,\"args\":{\"correlation\":19,\"stream\":7}}\n"
	        "]}");
	CHECK(c.rc == EV_OK);
	const struct ev_kineto_file *fi = ev_kineto_file(c.k, 0);
	CHECK(fi->rank == 2 && fi->world == 4);
	CHECK(fi->inferred_colls == 2);
	CHECK(fi->inferred_no_size == 1); /* the second launch has no annotation */
	struct ev_rec r[4];
	CHECK(records(c.out, EV_COLL, r, 4) == 2);
	CHECK(r[0].op == EV_OP_ALLREDUCE && r[0].bytes == 24 && r[0].dtype == EV_DT_FLOAT32);
	/* Ring as spelled; "_LL" and "_Sum" are in every kernel name of that
	 * era whatever ran, so the vocabulary leaves protocol unknown. */
	CHECK(r[0].algo == EV_ALGO_RING && r[0].proto == EV_PROTO_UNKNOWN);
	CHECK(r[0].aux == 4 && r[0].rank == 2 && r[0].seq == 0 && r[1].seq == 1);
	CHECK(r[0].comm != 0 && r[0].comm == r[1].comm);
	CHECK(r[0].sig == ev_hash64("record_param_comms", 18));
	CHECK(!(r[0].flags & 0x8000));
	ev_kineto_free(c.k);
}

static void test_counted_clamps_and_refusals(void)
{
	struct conv c;
	convert(&c, "clamp.json",
	        "[{\"ph\":\"X\",\"name\":\"a\",\"pid\":1,\"tid\":1,\"ts\":5,\"dur\":-1},\n"
	        "{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"k\",\"pid\":0,\"tid\":1,\"ts\":5,\"dur\":1,\"args\":{\"stream\":1099511627776}},\n"
	        "{\"ph\":\"B\",\"name\":\"open\",\"pid\":1,\"tid\":2,\"ts\":6},{\"ph\":\"E\",\"pid\":1,\"tid\":3,\"ts\":7}]");
	CHECK(c.rc == EV_OK);
	const struct ev_kineto_file *fi = ev_kineto_file(c.k, 0);
	CHECK(fi->neg_dur == 1);
	CHECK(fi->big_stream == 1);
	CHECK(fi->unmatched_b == 1);
	CHECK(fi->unmatched_e == 1);
	ev_kineto_free(c.k);

	convert(&c, "group.json",
	        "[{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"ncclDevKernel_AllReduce_Sum_f32_RING_LL\",\"pid\":0,\"tid\":1,\"ts\":5,\"dur\":1,"
	        "\"args\":{\"Collective name\":\"allreduce\",\"Group size\":-3}}]");
	CHECK(c.rc == EV_ERR_RANGE && strstr(c.err, "Group size -3"));
	ev_kineto_free(c.k);

	convert(&c, "rank.json", "{\"distributedInfo\":{\"rank\":99999999999},\"traceEvents\":[{\"ph\":\"i\",\"ts\":1}]}");
	CHECK(c.rc == EV_ERR_RANGE && strstr(c.err, "rank 99999999999"));
	ev_kineto_free(c.k);
}

static void test_dialects_and_depth(void)
{
	struct conv c;
	convert(&c, "rocprof.json",
	        "{\"rocprofiler-sdk-tool\":[{\"metadata\":{\"pid\":1},\"kernel_dispatch\":[{\"dispatch_info\":{}}]}]}");
	CHECK(c.rc == EV_ERR_FORMAT && strstr(c.err, "rocprof JSON") && strstr(c.err, "not a Kineto trace") && strstr(c.err, "rocprof2ev"));
	ev_kineto_free(c.k);

	/* 2 MB of nested arrays: a depth error, quickly. */
	size_t n = 1u << 20;
	char *s = malloc(2 * n + 32);
	strcpy(s, "{\"traceEvents\":[");
	size_t o = strlen(s);
	memset(s + o, '[', n);
	memset(s + o + n, ']', n);
	strcpy(s + o + 2 * n, "]}");
	clock_t t0 = clock();
	convert(&c, "deep.json", s);
	CHECK(c.rc == EV_ERR_LIMIT && strstr(c.err, "nested deeper than 256"));
	CHECK((double)(clock() - t0) / CLOCKS_PER_SEC < 2.0);
	ev_kineto_free(c.k);
	free(s);
}

int main(void)
{
	const char *t = getenv("TMPDIR");
	snprintf(dir, sizeof dir, "%s/kineto-unit.XXXXXX", t && *t && strlen(t) < 30 ? t : "/tmp");
	if (!mkdtemp(dir))
		return 1;
	RUN(test_scan_fields);
	RUN(test_scan_strict);
	RUN(test_scan_whitespace);
	RUN(test_kspan_integers);
	RUN(test_kspan_us_to_ns);
	RUN(test_scan_numbers);
	RUN(test_scan_depth);
	RUN(test_window);
	RUN(test_window_growth);
	RUN(test_rank_from_path);
	RUN(test_op_category);
	RUN(test_link_through_call_stack);
	RUN(test_op_signature);
	RUN(test_old_era_collectives);
	RUN(test_counted_clamps_and_refusals);
	RUN(test_dialects_and_depth);
	char cmd[128];
	snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
	if (system(cmd) != 0)
		fprintf(stderr, "could not remove %s\n", dir);
	return unit_report("test_kineto");
}
