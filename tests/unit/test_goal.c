/* SPDX-License-Identifier: MIT */
/*
 * test_goal.c - lib/goal called directly: the text and binary encodings of
 * known schedules, the checks (matching, dependencies, widths, limits), rank
 * selections, rank parts and the checks of ev_goal_join; the builder's
 * arena.
 */
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ev.h"
#include "ev/goal.h"
#include "goal/goal_int.h"
#include "unit.h"

static char dir[64];

static void path_of(char *buf, size_t n, const char *name)
{
	snprintf(buf, n, "%s/%s", dir, name);
}

static char *slurp(const char *path, size_t *n)
{
	FILE *f = fopen(path, "rb");
	*n = 0;
	if (!f)
		return NULL;
	static char buf[1 << 16];
	*n = fread(buf, 1, sizeof buf - 1, f);
	buf[*n] = '\0';
	fclose(f);
	return buf;
}

/* A whole file, however long (malloc'd). */
static char *slurp_all(const char *path, size_t *n)
{
	FILE *f = fopen(path, "rb");
	char *buf = NULL;
	*n = 0;
	if (!f)
		return NULL;
	if (fseek(f, 0, SEEK_END) == 0) {
		long len = ftell(f);
		rewind(f);
		if (len >= 0 && (buf = malloc((size_t)len + 1)) != NULL)
			*n = fread(buf, 1, (size_t)len, f);
	}
	fclose(f);
	return buf;
}

static void put_file(const char *path, const void *data, size_t n)
{
	FILE *f = fopen(path, "wb");
	CHECK(f && fwrite(data, 1, n, f) == n);
	if (f)
		fclose(f);
}

/* Records of a schedule, in the order coll-expand would write them. */
static struct ev_rec op(unsigned type, uint32_t rank, uint32_t id, uint32_t stream, int32_t peer, uint64_t size,
                        uint32_t tag)
{
	struct ev_rec r;
	ev_rec_init(&r);
	r.type = (uint8_t)type;
	r.rank = rank;
	r.id = id;
	r.stream = stream;
	r.peer = peer;
	if (type == EV_CALC)
		r.dur = size;
	else
		r.bytes = size;
	r.aux = tag;
	return r;
}

static struct ev_rec dep(uint32_t rank, uint32_t id, uint32_t target, int ireq)
{
	struct ev_rec r;
	ev_rec_init(&r);
	r.type = EV_DEP;
	r.rank = rank;
	r.id = id;
	r.aux = target;
	r.flags = ireq ? EV_F_IREQ : 0;
	return r;
}

/* The ev2goal.bats small schedule: a zero calc folded into its dependent,
 * a duplicate dependency dropped, an irequires kept. */
static const struct ev_rec *small(size_t *n)
{
	static struct ev_rec r[16];
	size_t k = 0;
	r[k++] = op(EV_CALC, 0, 0, 7, -1, 100, 0);
	r[k++] = op(EV_RECV, 1, 0, 7, 0, 1024, 42);
	r[k++] = op(EV_CALC, 0, 1, 7, -1, 0, 0); /* folded: stands for l0 */
	r[k++] = dep(0, 1, 0, 0);
	r[k++] = op(EV_SEND, 0, 2, 7, 1, 1024, 42);
	r[k++] = dep(0, 2, 1, 0);
	r[k++] = dep(0, 2, 0, 0); /* the same op again: a duplicate */
	r[k++] = op(EV_SEND, 1, 1, 9, 0, 8, 43);
	r[k++] = dep(1, 1, 0, 0);
	r[k++] = op(EV_RECV, 0, 3, 9, 1, 8, 43);
	r[k++] = dep(0, 3, 2, 0);
	r[k++] = op(EV_CALC, 0, 4, 9, -1, 50, 0);
	r[k++] = dep(0, 4, 3, 1);
	r[k++] = op(EV_CALC, 1, 2, 7, -1, 5, 0);
	*n = k;
	return r;
}

static void opts(struct ev_goal_opts *o, int binary)
{
	ev_goal_opts_init(o);
	o->binary = binary;
	o->spool_parent = dir;
}

/* Feed records; returns the first failing status (0: all accepted and
 * finished) and leaves the builder in *gp. */
static int feed(ev_goal **gp, const struct ev_goal_opts *o, const struct ev_rec *r, size_t n)
{
	CHECK(ev_goal_new(gp, o) == EV_OK);
	ev_goal_source(*gp, "t.ev");
	for (size_t i = 0; i < n; i++) {
		int rc = ev_goal_add(*gp, &r[i], i + 1);
		if (rc)
			return rc;
	}
	return ev_goal_finish(*gp);
}

/* Write the schedule to dir/name and return its bytes. */
static char *write_out(ev_goal *g, const char *name, size_t *n)
{
	char path[128];
	ev_output *out;
	path_of(path, sizeof path, name);
	CHECK(ev_output_open(&out, path) == EV_OK);
	CHECK(ev_goal_write(g, out) == EV_OK);
	CHECK(ev_output_close(out) == EV_OK);
	return slurp(path, n);
}

static const char small_goal[] = "num_ranks 2\n"
                                "rank 0 {\n"
                                "l0: calc 100 cpu 0\n"
                                "l1: send 1024b to 1 tag 42 cpu 0 nic 0\n"
                                "l1 requires l0\n"
                                "l2: recv 8b from 1 tag 43 cpu 1 nic 0\n"
                                "l2 requires l1\n"
                                "l3: calc 50 cpu 1\n"
                                "l3 irequires l2\n"
                                "}\n"
                                "rank 1 {\n"
                                "l0: recv 1024b from 0 tag 42 cpu 0 nic 0\n"
                                "l1: send 8b to 0 tag 43 cpu 1 nic 0\n"
                                "l1 requires l0\n"
                                "l2: calc 5 cpu 0\n"
                                "}\n";

static void test_text_small(void)
{
	size_t n, len;
	const struct ev_rec *r = small(&n);
	struct ev_goal_opts o;
	ev_goal *g;
	opts(&o, 0);
	CHECK(feed(&g, &o, r, n) == EV_OK);
	CHECK(ev_goal_nranks(g) == 2);
	char *t = write_out(g, "s.goal", &len);

	CHECK(t && strcmp(t, small_goal) == 0);
	struct ev_goal_stats st;
	ev_goal_get_stats(g, &st);
	CHECK(st.ops == 7 && st.send == 2 && st.recv == 2 && st.calc == 3);
	CHECK(st.requires == 3 && st.irequires == 1 && st.folded_zero_calcs == 1 && st.duplicate_deps == 1);
	CHECK(st.lines == 16 && st.lanes == 2 && st.max_cpu == 1);
	CHECK(st.hist[4] == 1 && st.hist[11] == 1); /* 8 bytes and 1024 bytes */
	struct ev_goal_rank_stats rs;
	ev_goal_get_rank_stats(g, 0, &rs);
	CHECK(rs.sends == 1 && rs.recvs == 1 && rs.calcs == 2 && rs.bytes_sent == 1024);
	ev_goal_free(g);
	/* The spool directory is gone with the builder. */
	char cmd[160];
	snprintf(cmd, sizeof cmd, "ls -A %s | grep -q ev2goal", dir);
	CHECK(system(cmd) != 0);
}

static void put_node(unsigned char *p, uint32_t ndeps, unsigned type, uint32_t peer, uint64_t size, uint32_t tag,
                     unsigned cpu, uint32_t nreq, uint32_t roff, uint32_t nireq, uint32_t ioff)
{
	ev_put32(p, ndeps);
	p[4] = (unsigned char)type;
	ev_put32(p + 5, peer);
	ev_put64(p + 9, size);
	ev_put32(p + 17, tag);
	p[21] = (unsigned char)cpu;
	p[22] = 0;
	ev_put32(p + 23, nreq);
	ev_put32(p + 27, roff);
	ev_put32(p + 31, nireq);
	ev_put32(p + 35, ioff);
}

static void test_binary_layout(void)
{
	/* Rank 0: l0 calc 5; l1 send 8b to 1 tag 3 requires l0; l2 calc 2
	 * irequires l0.  Rank 1: l0 recv 8b from 0 tag 3. */
	struct ev_rec r[8];
	size_t k = 0;
	r[k++] = op(EV_CALC, 0, 0, 0, -1, 5, 0);
	r[k++] = op(EV_SEND, 0, 1, 0, 1, 8, 3);
	r[k++] = dep(0, 1, 0, 0);
	r[k++] = op(EV_RECV, 1, 0, 1, 0, 8, 3);
	r[k++] = op(EV_CALC, 0, 2, 1, -1, 2, 0);
	r[k++] = dep(0, 2, 0, 1);
	struct ev_goal_opts o;
	ev_goal *g;
	opts(&o, 1);
	o.cpu = EV_GOAL_CPU_LANE;
	CHECK(feed(&g, &o, r, k) == EV_OK);
	size_t len;
	char *b = write_out(g, "s.bin", &len);
	unsigned char want[256];
	memset(want, 0, sizeof want);
	uint64_t s0 = 8 + 4 + 3 * 39 + 2 * 4, s1 = 8 + 4 + 39;
	ev_put64(want, 4223);
	ev_put32(want + 8, 2);
	want[12] = 1; /* max cpu */
	want[13] = 0;
	ev_put64(want + 14, 38); /* 4 + 2 + 16 * 2, after the magic */
	ev_put64(want + 22, 38 + s0);
	ev_put64(want + 30, 38 + s0);
	ev_put64(want + 38, 38 + s0 + s1);
	unsigned char *p = want + 46;
	ev_put32(p, 3);
	ev_put32(p + 4, 1);
	ev_put32(p + 8, 0); /* root l0 */
	p += 12;
	put_node(p, 0, 3, 0, 5, 0, 0, 1, 0, 1, 1);
	put_node(p + 39, 1, 1, 1, 8, 3, 0, 0, 2, 0, 2);
	put_node(p + 78, 1, 3, 0, 2, 0, 1, 0, 2, 0, 2);
	p += 117;
	ev_put32(p, 1); /* l0: requires-successor l1 */
	ev_put32(p + 4, 2); /* l0: irequires-successor l2 */
	p += 8;
	ev_put32(p, 1);
	ev_put32(p + 4, 1);
	ev_put32(p + 8, 0);
	put_node(p + 12, 0, 2, 0, 8, 3, 1, 0, 0, 0, 0);
	p += 12 + 39;
	CHECK(b && len == (size_t)(p - want));
	CHECK(b && memcmp(b, want, (size_t)(p - want)) == 0);
	ev_goal_free(g);
}

/* One op with more successors than a spool buffer holds (its requires
 * list goes out in pieces, turned around first) and one with fewer (written
 * back to front): both come out in the order their dependents were added,
 * with every successor once. */
static void test_long_successor_lists(void)
{
	enum { N = 40000 };
	struct ev_goal_opts o;
	ev_goal *g;
	opts(&o, 1);
	CHECK(ev_goal_new(&g, &o) == EV_OK);
	ev_goal_source(g, "t.ev");
	uint64_t recno = 0;
	struct ev_rec r = op(EV_CALC, 0, 0, 0, -1, 1, 0);
	CHECK(ev_goal_add(g, &r, ++recno) == EV_OK);
	for (uint32_t i = 1; i <= N; i++) {
		r = op(EV_CALC, 0, i, 0, -1, 1, 0);
		CHECK(ev_goal_add(g, &r, ++recno) == EV_OK);
		r = dep(0, i, 0, i % 6 == 0);
		CHECK(ev_goal_add(g, &r, ++recno) == EV_OK);
	}
	CHECK(ev_goal_finish(g) == EV_OK);
	char path[128];
	ev_output *out;
	path_of(path, sizeof path, "long.bin");
	CHECK(ev_output_open(&out, path) == EV_OK);
	CHECK(ev_goal_write(g, out) == EV_OK);
	CHECK(ev_output_close(out) == EV_OK);
	size_t len;
	unsigned char *b = (unsigned char *)slurp_all(path, &len);
	/* Header 14, jump table 16, then the section: counts, the root, the
	 * nodes, the appendix. */
	size_t sec = 14 + 16, nodes = sec + 8 + 4, app = nodes + (size_t)(N + 1) * 39;
	CHECK(b && len == app + 4 * (size_t)N);
	if (b && len == app + 4 * (size_t)N) {
		CHECK(ev_le32(b + sec) == N + 1 && ev_le32(b + sec + 4) == 1);
		uint32_t nr = ev_le32(b + nodes + 23), roff = ev_le32(b + nodes + 27);
		uint32_t ni = ev_le32(b + nodes + 31), ioff = ev_le32(b + nodes + 35);
		CHECK(nr == N - N / 6 && ni == N / 6 && roff == 0 && ioff == nr);
		/* A rank's successor buffer is 32 KiB below 256 ranks. */
		CHECK(4 * (size_t)nr > 32 << 10 && 4 * (size_t)ni < 32 << 10);
		uint32_t want_r = 1, want_i = 6, bad = 0;
		for (uint32_t k = 0; k < nr; k++, want_r += want_r % 6 == 5 ? 2 : 1)
			bad += ev_le32(b + app + 4 * (size_t)k) != want_r;
		for (uint32_t k = 0; k < ni; k++, want_i += 6)
			bad += ev_le32(b + app + 4 * ((size_t)nr + k)) != want_i;
		CHECK(bad == 0);
	}
	free(b);
	ev_goal_free(g);
}

/* The message of a failing schedule contains want. */
static void expect_error(const struct ev_rec *r, size_t n, const struct ev_goal_opts *o, int status, const char *want)
{
	ev_goal *g;
	int rc = feed(&g, o, r, n);
	const struct ev_goal_error *e = ev_goal_error(g);
	CHECK(rc == status);
	CHECK(!e->in_output && strstr(e->msg, want) != NULL);
	if (!strstr(e->msg, want))
		fprintf(stderr, "  got: %s (want: %s)\n", e->msg, want);
	ev_goal_free(g);
}

static void test_checks(void)
{
	struct ev_goal_opts o;
	struct ev_rec r[8];
	opts(&o, 0);
	/* Unmatched send, named by its record. */
	r[0] = op(EV_SEND, 0, 0, 0, 1, 8, 4);
	expect_error(r, 1, &o, EV_ERR_FORMAT, "t.ev: record 1: rank 0: send to rank 1 tag 4 has no matching recv");
	/* FIFO size mismatch. */
	r[1] = op(EV_RECV, 1, 0, 0, 0, 16, 4);
	expect_error(r, 2, &o, EV_ERR_FORMAT, "record 2: rank 1 recv of 16 bytes from rank 0 tag 4 is matched (FIFO) by a send of 8 bytes");
	/* ... and without the check it is written. */
	o.check = 0;
	ev_goal *g;
	CHECK(feed(&g, &o, r, 2) == EV_OK);
	ev_goal_free(g);
	o.check = 1;
	/* Dependencies: later, self, dangling, misplaced; ids backwards. */
	r[0] = op(EV_CALC, 0, 0, 0, -1, 1, 0);
	r[1] = op(EV_CALC, 0, 1, 0, -1, 1, 0);
	r[2] = dep(0, 1, 1, 0);
	expect_error(r, 3, &o, EV_ERR_FORMAT, "rank 0 op 1 depends on op 1, which is not earlier");
	r[1] = op(EV_CALC, 0, 3, 0, -1, 1, 0);
	r[2] = dep(0, 3, 2, 0);
	expect_error(r, 3, &o, EV_ERR_FORMAT, "rank 0 op 3 depends on op 2, which is not defined (dangling dependency)");
	r[2] = dep(0, 2, 0, 0);
	expect_error(r, 3, &o, EV_ERR_FORMAT, "record 3: rank 0: dep of op 2 does not follow that op");
	r[1] = op(EV_CALC, 0, 0, 0, -1, 1, 0);
	expect_error(r, 2, &o, EV_ERR_FORMAT, "rank 0: op id 0 after op 0");
	/* Field widths. */
	o.cpu = EV_GOAL_CPU_LANE;
	r[0] = op(EV_CALC, 0, 0, 300, -1, 1, 0);
	expect_error(r, 1, &o, EV_ERR_RANGE, "cpu 300 does not fit GOAL's 8-bit cpu field");
	o.cpu = EV_GOAL_CPU_DENSE;
	o.nic = EV_GOAL_NIC_CHANNEL;
	r[0] = op(EV_SEND, 0, 0, 0, 1, 1, 0);
	r[0].channel = 256;
	expect_error(r, 1, &o, EV_ERR_RANGE, "nic 256 does not fit GOAL's 8-bit nic field");
	o.nic_mod = 4; /* 256 % 4 = 0: fits, then the unmatched send is reported */
	expect_error(r, 1, &o, EV_ERR_FORMAT, "has no matching recv");
	o.nic = EV_GOAL_NIC_ZERO;
	o.nic_mod = 0;
	/* Limits: ranks and peers are bounded, the table is sparse. */
	r[0] = op(EV_CALC, EV_GOAL_MAX_RANKS, 0, 0, -1, 1, 0);
	expect_error(r, 1, &o, EV_ERR_RANGE, "rank 1048576 is not below the limit of 1048576 ranks");
	r[0] = op(EV_SEND, 0, 0, 0, 2000000000, 1, 0);
	expect_error(r, 1, &o, EV_ERR_RANGE, "peer 2000000000 is not below the limit");
	r[0] = op(EV_SEND, 0, 0, 0, -1, 1, 0);
	expect_error(r, 1, &o, EV_ERR_FORMAT, "send without a destination (peer -1)");
	o.num_ranks = 2;
	r[0] = op(EV_CALC, 5, 0, 0, -1, 1, 0);
	expect_error(r, 1, &o, EV_ERR_RANGE, "rank 5 is not below --num-ranks=2");
	o.num_ranks = 0;
	/* A rank near the limit costs its own state, not a table up to it. */
	r[0] = op(EV_CALC, EV_GOAL_MAX_RANKS - 1, 0, 0, -1, 1, 0);
	CHECK(feed(&g, &o, r, 1) == EV_OK);
	CHECK(ev_goal_nranks(g) == EV_GOAL_MAX_RANKS);
	ev_goal_free(g);
	/* Nothing to schedule. */
	r[0] = op(EV_KERNEL, 0, 0, 0, -1, 1, 0);
	expect_error(r, 1, &o, EV_ERR_FORMAT, "no send, recv or calc records");
	/* The window. */
	struct ev_rec w[4];
	w[0] = op(EV_CALC, 0, 0, 0, -1, 1, 0);
	w[1] = op(EV_CALC, 0, 100, 0, -1, 1, 0);
	w[2] = dep(0, 100, 0, 0);
	o.window = 16;
	expect_error(w, 3, &o, EV_ERR_RANGE, "100 ops back, which left the window of 16 ops; raise --window");
	o.window = 128;
	CHECK(feed(&g, &o, w, 3) == EV_OK);
	ev_goal_free(g);
}

static void test_ranks(void)
{
	struct ev_goal_ranks s;
	CHECK(ev_goal_ranks_parse(&s, "0-2,7") == EV_OK);
	CHECK(ev_goal_ranks_has(&s, 0) && ev_goal_ranks_has(&s, 2) && ev_goal_ranks_has(&s, 7));
	CHECK(!ev_goal_ranks_has(&s, 3) && !ev_goal_ranks_has(&s, 8) && !ev_goal_ranks_empty(&s));
	ev_goal_ranks_free(&s);
	CHECK(ev_goal_ranks_parse(&s, "1%3") == EV_OK);
	CHECK(ev_goal_ranks_has(&s, 4) && !ev_goal_ranks_has(&s, 5));
	ev_goal_ranks_free(&s);
	CHECK(ev_goal_ranks_empty(&s) && ev_goal_ranks_has(&s, 12345));
	CHECK(ev_goal_ranks_parse(&s, "3%3") == EV_ERR_ARG);
	CHECK(ev_goal_ranks_parse(&s, "5-2") == EV_ERR_ARG);
	CHECK(ev_goal_ranks_parse(&s, "1,,2") == EV_ERR_ARG);
	CHECK(ev_goal_ranks_parse(&s, "x") == EV_ERR_ARG);
	CHECK(ev_goal_ranks_empty(&s));
}

/* Join dir/parts into dir/joined.  Returns the status; msg gets the error. */
static int join(const char *parts, int binary, struct ev_goal_error *err, uint32_t *n)
{
	char path[128];
	ev_output *out;
	path_of(path, sizeof path, "joined");
	CHECK(ev_output_open(&out, path) == EV_OK);
	int rc = ev_goal_join(parts, binary, 0, out, n, err);
	if (rc)
		ev_output_abort(out);
	else
		CHECK(ev_output_close(out) == EV_OK);
	return rc;
}

static void expect_join_error(const char *parts, int binary, const char *want)
{
	struct ev_goal_error err;
	uint32_t n;
	char path[128];
	CHECK(join(parts, binary, &err, &n) != EV_OK);
	CHECK(!err.in_output && strstr(err.msg, want) != NULL);
	if (!strstr(err.msg, want))
		fprintf(stderr, "  got: %s (want: %s)\n", err.msg, want);
	path_of(path, sizeof path, "joined");
	CHECK(access(path, F_OK) != 0); /* nothing written */
}

static void test_parts_and_join(void)
{
	size_t n, len = 0;
	const struct ev_rec *r = small(&n);
	struct ev_goal_opts o;
	ev_goal *g;
	char parts[96], p0[128], p1[128];
	path_of(parts, sizeof parts, "parts");
	CHECK(mkdir(parts, 0700) == 0);
	opts(&o, 0);
	o.spool_parent = parts;
	CHECK(feed(&g, &o, r, n) == EV_OK);
	CHECK(ev_goal_write_parts(g, parts) == EV_OK);
	ev_goal_free(g);
	CHECK(ev_goal_part_name(p0, sizeof p0, parts, 0, 0) == EV_OK);
	CHECK(ev_goal_part_name(p1, sizeof p1, parts, 1, 0) == EV_OK);
	char *t = slurp(p1, &len);
	CHECK(t && strcmp(t, strstr(small_goal, "rank 1 {")) == 0);
	struct ev_goal_error err;
	uint32_t np;
	CHECK(join(parts, 0, &err, &np) == EV_OK && np == 2);
	char joined[128];
	path_of(joined, sizeof joined, "joined");
	t = slurp(joined, &len);
	CHECK(t && strcmp(t, small_goal) == 0);
	unlink(joined);

	/* Damaged parts: each is named with its line. */
	static const struct { const char *text, *want; } bad[] = {
		{ "rank 1 {\nl0: calc 5 cpu 0\n", "rank_1.goal: line 2: truncated: rank 1's block has no closing }" },
		{ "rank 1 {\nl0: calc 5 cpu 0\n}", "rank_1.goal: line 3: truncated: the last line has no newline" },
		{ "", "rank_1.goal: line 1: empty part" },
		{ "rank 0 {\n}\n", "rank_1.goal: line 1: expected `rank 1 {`" },
		{ "\x7f""ELF\x02\x01\n", "rank_1.goal: line 1: expected `rank 1 {`" },
		{ "rank 1 {\nl0: send 8b to 2 tag 0 cpu 0 nic 0\n}\n",
		  "rank_1.goal: line 2: peer 2 is not below num_ranks 2" },
		{ "rank 1 {\nl0: send 8b to -1 tag 0 cpu 0 nic 0\n}\n", "rank_1.goal: line 2: not a GOAL line" },
		{ "rank 1 {\nl1: calc 5 cpu 0\n}\n", "rank_1.goal: line 2: label l1 where l0 comes next" },
		{ "rank 1 {\nl0: calc 5 cpu 0\nl0 requires l0\n}\n", "rank_1.goal: line 3: l0 requires l0, which is not earlier" },
		{ "rank 1 {\nl0: calc 5 cpu 0\nl1: calc 5 cpu 0\nl0 requires l1\n}\n",
		  "rank_1.goal: line 4: a requires line that does not follow its op" },
		{ "rank 1 {\nl0: calc 5 cpu 256\n}\n", "rank_1.goal: line 2: not a GOAL calc line" },
		{ "rank 1 {\nl0: calc 5 cpu 0 nic 0\n}\n", "rank_1.goal: line 2: text after the end of a GOAL op line" },
		{ "rank 1 {\nl0: calc 05 cpu 0\n}\n", "rank_1.goal: line 2: not a GOAL calc line" },
		{ "rank 1 {\n}\nrank 2 {\n}\n", "rank_1.goal: line 3: text after the closing }" },
		{ "rank 1 {\nl0: recv 8b from 0 tag 99999999999 cpu 0 nic 0\n}\n", "rank_1.goal: line 2: not a GOAL send/recv line" },
	};
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		put_file(p1, bad[i].text, strlen(bad[i].text));
		expect_join_error(parts, 0, bad[i].want);
	}
	/* recv from any source is what --no-check writes: accepted. */
	const char *any = "rank 1 {\nl0: recv 8b from -1 tag 0 cpu 0 nic 0\n}\n";
	put_file(p1, any, strlen(any));
	CHECK(join(parts, 0, &err, &np) == EV_OK);
	unlink(joined);
	/* A missing part before an existing one. */
	char p3[128];
	CHECK(ev_goal_part_name(p3, sizeof p3, parts, 3, 0) == EV_OK);
	put_file(p3, "rank 3 {\n}\n", 11);
	expect_join_error(parts, 0, "rank_2.goal is missing but rank_3.goal exists");
	unlink(p3);
	unlink(p0);
	unlink(p1);
	expect_join_error(parts, 0, "rank_0.goal: No such file");

	/* Binary parts. */
	opts(&o, 1);
	CHECK(feed(&g, &o, r, n) == EV_OK);
	size_t blen;
	char *whole = write_out(g, "one.bin", &blen);
	static char copy[4096];
	CHECK(whole && blen < sizeof copy);
	memcpy(copy, whole, blen);
	ev_goal_free(g);
	o.spool_parent = parts;
	CHECK(feed(&g, &o, r, n) == EV_OK);
	CHECK(ev_goal_write_parts(g, parts) == EV_OK);
	ev_goal_free(g);
	CHECK(join(parts, 1, &err, &np) == EV_OK && np == 2);
	t = slurp(joined, &len);
	CHECK(t && len == blen && memcmp(t, copy, blen) == 0);
	unlink(joined);
	CHECK(ev_goal_part_name(p1, sizeof p1, parts, 1, 1) == EV_OK);
	char *sec = slurp(p1, &len);
	static char s1[1024];
	CHECK(sec && len < sizeof s1 && len > 20);
	memcpy(s1, sec, len);
	put_file(p1, s1, len - 3);
	expect_join_error(parts, 1, "rank_1.bin: byte");
	put_file(p1, s1, 5);
	expect_join_error(parts, 1, "truncated rank section");
	size_t node0 = 8 + 4 * ev_le32((unsigned char *)s1 + 4); /* after the roots */
	CHECK(node0 == 16);                                       /* rank 1 has two roots */
	s1[node0 + 4] = 9;                                        /* the first node's type */
	put_file(p1, s1, len);
	expect_join_error(parts, 1, "rank_1.bin: node 0 (byte 16): type is not send, recv or calc");
	s1[node0 + 4] = 2;
	ev_put32((unsigned char *)s1 + node0 + 5, 7); /* recv from rank 7 of 2 */
	put_file(p1, s1, len);
	expect_join_error(parts, 1, "peer is not below the number of parts");
	unlink(p1);
	CHECK(ev_goal_part_name(p0, sizeof p0, parts, 0, 1) == EV_OK);
	unlink(p0);
	rmdir(parts);
}

/* ---- the threaded feed ---------------------------------------------- */

/* Records past the first that ev_goal_feed adds on the caller's thread,
 * with what its items must keep: DEPs right after their op, after another
 * rank's op (alone), after a record of another type, more DEPs than one
 * item holds, irequires, folded zero-length calcs and matched messages.
 * Returns the count. */
static size_t feed_records(struct ev_rec *r, size_t cap)
{
	size_t n = 0;
	for (uint32_t k = 0; n + 16 < cap; k++) {
		struct ev_rec dl[4][2];
		int nd[4] = { 0, 0, 0, 0 };
		for (uint32_t rank = 0; rank < 4; rank++) {
			if (rank == 0)
				r[n++] = op(EV_SEND, 0, k, 1, 1, 64 + k % 5, k);
			else if (rank == 1)
				r[n++] = op(EV_RECV, 1, k, 1, 0, 64 + k % 5, k);
			else
				r[n++] = op(EV_CALC, rank, k, 2 + k % 3, -1, k % 4 == 0 ? 0 : k % 9 + 1, 0);
			if (rank == 3 && k == 700)
				for (uint32_t t = k - 600; t < k - 2; t++)
					r[n++] = dep(3, k, t, t % 3 == 0); /* more than one stage of the reader */
			if (k > 0)
				dl[rank][nd[rank]++] = dep(rank, k, k - 1, 0);
			if (k > 1)
				dl[rank][nd[rank]++] = dep(rank, k, k - 2, rank == 3);
			if (k % 7 == 3 && rank == 2) {
				struct ev_rec kr;
				ev_rec_init(&kr);
				kr.type = EV_KERNEL;
				kr.rank = 2;
				r[n++] = kr; /* between an op and its DEPs */
			}
			/* Every fifth step rank 0's DEPs come between rank 1's op and
			 * its last DEP. */
			if (rank == 0 && k % 5 == 2)
				continue;
			int late = rank == 1 && k % 5 == 2 && nd[1] > 1;
			for (int i = 0; i < nd[rank] - late; i++)
				r[n++] = dl[rank][i];
			if (rank == 1 && k % 5 == 2)
				for (int i = 0; i < nd[0]; i++)
					r[n++] = dl[0][i];
			if (late)
				r[n++] = dl[1][nd[1] - 1];
		}
	}
	return n;
}

/* The schedule of r[0..n) added record by record, and fed from a file
 * through ev_goal_feed (a reader thread past the first records): the same
 * bytes and counts, in text and binary. */
static void test_feed_threads(void)
{
	enum { CAP = 40000 };
	struct ev_rec *r = malloc(CAP * sizeof *r);
	CHECK(r != NULL);
	if (!r)
		return;
	size_t n = feed_records(r, CAP);
	char evpath[128];
	path_of(evpath, sizeof evpath, "feed.ev");
	ev_strtab *st = ev_strtab_new();
	ev_writer *w;
	CHECK(ev_writer_open(&w, evpath, st) == EV_OK);
	for (size_t i = 0; i < n; i++)
		CHECK(ev_write(w, &r[i]) == EV_OK);
	CHECK(ev_writer_close(w) == EV_OK);
	for (int binary = 0; binary < 2; binary++) {
		struct ev_goal_opts o;
		opts(&o, binary);
		o.estimate = 1;
		ev_goal *a = NULL, *b = NULL;
		CHECK(feed(&a, &o, r, n) == EV_OK);
		CHECK(ev_goal_new(&b, &o) == EV_OK);
		ev_reader *rd;
		CHECK(ev_reader_open(&rd, evpath, st, NULL) == EV_OK);
		ev_reader_skip_text(rd, 1);
		uint64_t recno = 0;
		int rrc = 0;
		CHECK(ev_goal_feed(b, rd, &recno, &rrc, NULL, NULL) == 0);
		CHECK(rrc == 0 && recno == n);
		ev_reader_close(rd);
		CHECK(ev_goal_finish(b) == EV_OK);
		struct ev_goal_stats sa, sb;
		ev_goal_get_stats(a, &sa);
		ev_goal_get_stats(b, &sb);
		CHECK(memcmp(&sa, &sb, sizeof sa) == 0);
		CHECK(sa.ignored_records > 0 && sa.folded_zero_calcs > 0 && sa.irequires > 0);
		char pa[128], pb[128];
		size_t na, nb;
		path_of(pa, sizeof pa, "fa.goal");
		path_of(pb, sizeof pb, "fb.goal");
		ev_output *out;
		CHECK(ev_output_open(&out, pa) == EV_OK && ev_goal_write(a, out) == EV_OK && ev_output_close(out) == EV_OK);
		CHECK(ev_output_open(&out, pb) == EV_OK && ev_goal_write(b, out) == EV_OK && ev_output_close(out) == EV_OK);
		char *ta = slurp_all(pa, &na), *tb = slurp_all(pb, &nb);
		CHECK(ta && tb && na == nb && na > 100000 && memcmp(ta, tb, na) == 0);
		free(ta);
		free(tb);
		ev_goal_free(a);
		ev_goal_free(b);
	}
	/* A DEP that does not follow its op, past the first records: the
	 * error names that record. */
	size_t bad = n - 40;
	struct ev_rec orig = r[bad];
	r[bad] = dep(2, 1, 0, 0);
	path_of(evpath, sizeof evpath, "feedbad.ev"); /* feed.ev was read: an input */
	CHECK(ev_writer_open(&w, evpath, st) == EV_OK);
	for (size_t i = 0; i < n; i++)
		CHECK(ev_write(w, &r[i]) == EV_OK);
	CHECK(ev_writer_close(w) == EV_OK);
	struct ev_goal_opts o;
	opts(&o, 1);
	ev_goal *g = NULL;
	CHECK(ev_goal_new(&g, &o) == EV_OK);
	ev_goal_source(g, "feedbad.ev");
	ev_reader *rd;
	CHECK(ev_reader_open(&rd, evpath, st, NULL) == EV_OK);
	ev_reader_skip_text(rd, 1);
	uint64_t recno = 0;
	int rrc = 0;
	CHECK(ev_goal_feed(g, rd, &recno, &rrc, NULL, NULL) == EV_ERR_FORMAT);
	CHECK(rrc == 0 && recno == bad + 1);
	char want[160];
	snprintf(want, sizeof want, "feedbad.ev: record %zu: rank 2: dep of op 1 does not follow that op", bad + 1);
	CHECK(strcmp(ev_goal_error(g)->msg, want) == 0);
	ev_reader_close(rd);
	ev_goal_free(g);
	/* Fed through the reader thread, the send/recv check names the same
	 * op as record by record: a size mismatch in the middle, one between
	 * the last ops (found at ev_goal_finish), a send without its receive,
	 * and a mismatch on an op that was waiting when the thread started. */
	r[bad] = orig;
	size_t mid = n / 2, last = n, first = 2048; /* feed.c's FIRST records: on the caller's thread */
	while (mid < n && r[mid].type != EV_RECV)
		mid++;
	while (last > 0 && r[last - 1].type != EV_RECV)
		last--;
	while (first > 0 && r[first - 1].type != EV_RECV)
		first--;
	CHECK(mid < n && last > mid && first > 0);
	struct ev_rec *v = malloc(n * sizeof *v);
	CHECK(v != NULL);
	for (int c = 0; v && c < 4; c++) {
		memcpy(v, r, n * sizeof *v);
		if (c == 3)
			v[first - 1].bytes += 1; /* a recv waiting when the thread starts */
		else if (c == 0)
			v[mid].bytes += 1;
		else if (c == 1)
			v[last - 1].bytes += 1;
		else
			v[last - 1].aux += 1000000; /* its send and it left alone */
		char name[32];
		snprintf(name, sizeof name, "feedmatch%d.ev", c);
		path_of(evpath, sizeof evpath, name);
		CHECK(ev_writer_open(&w, evpath, st) == EV_OK);
		for (size_t i = 0; i < n; i++)
			CHECK(ev_write(w, &v[i]) == EV_OK);
		CHECK(ev_writer_close(w) == EV_OK);
		ev_goal *a = NULL, *b = NULL;
		int ra = feed(&a, &o, v, n);
		CHECK(ev_goal_new(&b, &o) == EV_OK);
		ev_goal_source(b, "t.ev"); /* feed() names its input so */
		CHECK(ev_reader_open(&rd, evpath, st, NULL) == EV_OK);
		ev_reader_skip_text(rd, 1);
		recno = 0;
		int rb = ev_goal_feed(b, rd, &recno, &rrc, NULL, NULL);
		ev_reader_close(rd);
		if (!rb)
			rb = ev_goal_finish(b);
		const char *ma = ev_goal_error(a)->msg, *mb = ev_goal_error(b)->msg;
		CHECK(ra == EV_ERR_FORMAT && rb == EV_ERR_FORMAT && strcmp(ma, mb) == 0);
		const char *kind = c == 2 ? "has no matching" : "is matched (FIFO) by a";
		CHECK(strstr(ma, kind) != NULL);
		if (strcmp(ma, mb) != 0 || !strstr(ma, kind))
			fprintf(stderr, "  case %d: record by record: %s\n  fed: %s\n", c, ma, mb);
		ev_goal_free(a);
		ev_goal_free(b);
	}
	free(v);
	ev_strtab_free(st);
	free(r);
}

/* r[0..n) handed through an ev_goal_pipe (the builder on its own thread);
 * the status of the first failure, ev_goal_pipe_end's included. */
static int pipe_feed(ev_goal **gp, const struct ev_goal_opts *o, const struct ev_rec *r, size_t n, size_t sync_at)
{
	ev_goal_pipe *p;
	CHECK(ev_goal_new(gp, o) == EV_OK);
	ev_goal_source(*gp, "t.ev");
	CHECK(ev_goal_pipe_start(*gp, &p) == EV_OK);
	CHECK(p != NULL);
	int rc = EV_OK;
	for (size_t i = 0; i < n && !rc; i++) {
		rc = p ? ev_goal_pipe_add(p, &r[i], i + 1) : ev_goal_add(*gp, &r[i], i + 1);
		if (!rc && p && i + 1 == sync_at)
			rc = ev_goal_pipe_sync(p);
	}
	if (rc) {
		/* A failure seen: what the builder says is readable once synced. */
		CHECK(ev_goal_pipe_sync(p) == rc);
		ev_goal_pipe_free(p);
		return rc;
	}
	if ((rc = ev_goal_pipe_end(p)) != EV_OK)
		return rc;
	return ev_goal_finish(*gp);
}

/* The same schedule record by record and through a pipe (more batches than
 * its ring holds, a sync on the way): the same bytes and counts, in text
 * and binary.  A DEP that does not follow its op fails with the message of
 * record by record, whether the caller sees it at a batch boundary or at
 * the end; a pipe given up half way is freed without the rest. */
static void test_pipe(void)
{
	enum { CAP = 120000 };
	struct ev_rec *r = malloc(CAP * sizeof *r);
	CHECK(r != NULL);
	if (!r)
		return;
	size_t n = feed_records(r, CAP);
	for (int binary = 0; binary < 2; binary++) {
		struct ev_goal_opts o;
		opts(&o, binary);
		o.estimate = 1;
		ev_goal *a = NULL, *b = NULL;
		CHECK(feed(&a, &o, r, n) == EV_OK);
		CHECK(pipe_feed(&b, &o, r, n, n / 3) == EV_OK);
		struct ev_goal_stats sa, sb;
		ev_goal_get_stats(a, &sa);
		ev_goal_get_stats(b, &sb);
		CHECK(memcmp(&sa, &sb, sizeof sa) == 0);
		CHECK(sa.ignored_records > 0 && sa.irequires > 0);
		char pa[128], pb[128];
		size_t na, nb;
		path_of(pa, sizeof pa, "pa.goal");
		path_of(pb, sizeof pb, "pb.goal");
		ev_output *out;
		CHECK(ev_output_open(&out, pa) == EV_OK && ev_goal_write(a, out) == EV_OK && ev_output_close(out) == EV_OK);
		CHECK(ev_output_open(&out, pb) == EV_OK && ev_goal_write(b, out) == EV_OK && ev_output_close(out) == EV_OK);
		char *ta = slurp_all(pa, &na), *tb = slurp_all(pb, &nb);
		CHECK(ta && tb && na == nb && na > 100000 && memcmp(ta, tb, na) == 0);
		free(ta);
		free(tb);
		ev_goal_free(a);
		ev_goal_free(b);
	}
	struct ev_goal_opts o;
	opts(&o, 0);
	for (int c = 0; c < 2; c++) {
		/* Early: seen when a later batch is handed over; last: at the end. */
		size_t bad = c == 0 ? 5000 : n - 3;
		struct ev_rec orig = r[bad];
		r[bad] = dep(2, 1, 0, 0);
		ev_goal *a = NULL, *b = NULL;
		int ra = feed(&a, &o, r, n), rb = pipe_feed(&b, &o, r, n, 0);
		CHECK(ra == EV_ERR_FORMAT && rb == EV_ERR_FORMAT);
		CHECK(strcmp(ev_goal_error(a)->msg, ev_goal_error(b)->msg) == 0);
		char want[96];
		snprintf(want, sizeof want, "record %zu: rank 2: dep of op 1 does not follow that op", bad + 1);
		CHECK(strstr(ev_goal_error(b)->msg, want) != NULL);
		ev_goal_free(a);
		ev_goal_free(b);
		r[bad] = orig;
	}
	ev_goal *g = NULL;
	ev_goal_pipe *p = NULL;
	CHECK(ev_goal_new(&g, &o) == EV_OK);
	CHECK(ev_goal_pipe_start(g, &p) == EV_OK && p != NULL);
	for (size_t i = 0; p && i < n / 2; i++)
		CHECK(ev_goal_pipe_add(p, &r[i], i + 1) == EV_OK);
	ev_goal_pipe_free(p);
	ev_goal_free(g);
	/* --nic=rail reads the caller's metadata: no thread. */
	o.nic = EV_GOAL_NIC_RAIL;
	CHECK(ev_goal_new(&g, &o) == EV_OK);
	p = (ev_goal_pipe *)1;
	CHECK(ev_goal_pipe_start(g, &p) == EV_OK && p == NULL);
	ev_goal_free(g);
	free(r);
}

/* The arena: blocks that do not overlap, zero when asked even when used
 * again, a freed block reused for its size, large blocks returned, and the
 * malloc path when reservations fail (ASan checks that release frees it). */
static void arena_blocks(struct goal_arena *a, int reuse)
{
	enum { N = 200 };
	unsigned char *p[N];
	size_t sz[N];
	for (int i = 0; i < N; i++) {
		sz[i] = (size_t)(i % 17 + 1) * 37 * (size_t)(1 + i % 5) * (i % 3 == 0 ? 97 : 1);
		p[i] = goal_arena_alloc(a, sz[i], i % 2);
		CHECK(p[i] != NULL);
		if (!p[i])
			return;
		if (i % 2)
			for (size_t k = 0; k < sz[i]; k += 61)
				CHECK(p[i][k] == 0);
		memset(p[i], i & 0xFF, sz[i]);
	}
	/* Nothing overwrote another block. */
	for (int i = 0; i < N; i++) {
		CHECK(p[i][0] == (unsigned char)i && p[i][sz[i] - 1] == (unsigned char)i);
		CHECK((uintptr_t)p[i] % 16 == 0);
	}
	/* A freed block comes back for the same size class (in the arena; malloc
	 * may hand out any address), zeroed if asked. */
	goal_arena_free(a, p[7], sz[7]);
	unsigned char *q = goal_arena_alloc(a, sz[7], 1);
	CHECK(q != NULL && (!reuse || q == p[7]));
	size_t nz = 0;
	for (size_t k = 0; q && k < sz[7]; k++)
		nz += q[k] != 0;
	CHECK(nz == 0);
	goal_arena_free(a, p[9], sz[9]);
	unsigned char *q9 = goal_arena_alloc(a, sz[9], 0);
	CHECK(q9 != NULL && (!reuse || q9 == p[9]));
	p[7] = q;
	p[9] = q9;
	for (int i = 0; i < N; i++)
		goal_arena_free(a, p[i], sz[i]);
}

static void test_arena(void)
{
	struct goal_arena a;
	goal_arena_init(&a);
	arena_blocks(&a, 1);
	CHECK(a.nchunks >= 1);
	for (size_t i = 1; i < a.nchunks; i++)
		CHECK(a.chunks[i - 1].base + a.chunks[i - 1].size <= a.chunks[i].base);
	/* A block larger than a chunk has a reservation of its own, returned
	 * when it is freed; it reads as zero. */
	size_t before = a.nchunks, big = (size_t)40 << 20;
	unsigned char *b = goal_arena_alloc(&a, big, 1);
	CHECK(b != NULL);
	if (b) {
		CHECK(b[0] == 0 && b[big - 1] == 0);
		b[0] = b[big - 1] = 1;
		CHECK(a.nchunks == before + 1);
		goal_arena_free(&a, b, big);
		CHECK(a.nchunks == before);
	}
	/* A freed block of 128 KiB or more is handed back to the kernel but for
	 * its first page, a smaller one is kept as it is; asked for again with
	 * zero set, either is all zero. */
	for (int round = 0; round < 4; round++) {
		size_t mid = (size_t)(round < 2 ? 256 : 16) << 10;
		unsigned char *m = goal_arena_alloc(&a, mid, round % 2);
		CHECK(m != NULL);
		if (!m)
			break;
		memset(m, 0xAB, mid);
		goal_arena_free(&a, m, mid);
		unsigned char *m2 = goal_arena_alloc(&a, mid, 1);
		CHECK(m2 == m);
		size_t nonzero = 0;
		for (size_t k = 0; m2 && k < mid; k++)
			nonzero += m2[k] != 0;
		CHECK(nonzero == 0);
		goal_arena_free(&a, m2, mid);
	}
	/* Freed blocks of 128 KiB or more wait backed (counted idle) until 16
	 * MiB of them wait; the ones past that are handed back.  Taken again
	 * with zero set, both kinds are all zero; a waiting one taken leaves
	 * the idle count. */
	{
		enum { NB = 40 };
		size_t bs = (size_t)512 << 10;
		unsigned char *blk[NB];
		int n = 0;
		for (; n < NB; n++) {
			if (!(blk[n] = goal_arena_alloc(&a, bs, 0)))
				break;
			memset(blk[n], 0xCD, bs);
		}
		CHECK(n == NB);
		size_t idle0 = a.idle; /* blocks freed by arena_blocks, maybe */
		for (int i = 0; i < n; i++)
			goal_arena_free(&a, blk[i], bs);
		/* As many as fit in 16 MiB with what already waited. */
		CHECK(a.idle - idle0 == (((size_t)16 << 20) - idle0) / bs * bs);
		CHECK(a.idle <= ((size_t)16 << 20));
		size_t nonzero = 0;
		for (int i = 0; i < n; i++) {
			unsigned char *m = goal_arena_alloc(&a, bs, 1);
			CHECK(m != NULL);
			if (!m)
				break;
			for (size_t k = 0; k < bs; k += 509)
				nonzero += m[k] != 0;
			blk[i] = m;
		}
		CHECK(nonzero == 0);
		CHECK(a.idle == idle0);
		for (int i = 0; i < n; i++)
			goal_arena_free(&a, blk[i], bs);
	}
	goal_arena_release(&a);
	CHECK(a.nchunks == 0 && a.chunks == NULL);

	/* Reservations refused: every block from malloc, all freed by the
	 * release (LeakSanitizer under make asan). */
	goal_arena_init(&a);
	a.no_reserve = 1;
	arena_blocks(&a, 0);
	CHECK(a.nchunks == 0 && a.mallocd == NULL);
	unsigned char *m = goal_arena_alloc(&a, 1000, 1);
	CHECK(m != NULL && m[999] == 0 && a.mallocd != NULL);
	goal_arena_release(&a);
	CHECK(a.mallocd == NULL);
}

int main(void)
{
	snprintf(dir, sizeof dir, "/tmp/test_goal.XXXXXX");
	if (!mkdtemp(dir)) {
		perror("mkdtemp");
		return 1;
	}
	RUN(test_text_small);
	RUN(test_binary_layout);
	RUN(test_long_successor_lists);
	RUN(test_checks);
	RUN(test_ranks);
	RUN(test_parts_and_join);
	RUN(test_feed_threads);
	RUN(test_pipe);
	RUN(test_arena);
	char cmd[128];
	snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
	if (system(cmd) != 0)
		fprintf(stderr, "could not remove %s\n", dir);
	return unit_report("test_goal");
}
