/* SPDX-License-Identifier: MIT */
/*
 * test_align.c - clock alignment (lib/align) called directly: the fit, its
 * inverse on Unix-epoch times, the solver over coll, p2p and kernel anchors,
 * configurations kept apart, configuration names and ids, pass 1 over ev
 * files, the report (its TSV byte for byte the printf format it replaced)
 * and the #meta lines.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ev.h"
#include "unit.h"

#define BASE 1759300000000000000LL /* a Unix-epoch time in ns */

/* A rank clock: local = true + off + drift * (true - t0). */
static int64_t local_time(int64_t t, int64_t off, double drift, int64_t t0)
{
	return t + off + (int64_t)llround(drift * (double)(t - t0));
}

static void test_fit_offset_only(void)
{
	int64_t tr[50], d[50];
	double scratch[250];
	struct ev_align_fit f;
	for (int i = 0; i < 50; i++) {
		tr[i] = BASE + i * 1000000LL;
		d[i] = 1234567 + (i % 3) - 1; /* +-1 ns noise */
	}
	CHECK(ev_align_fit(tr, d, 50, EV_ALIGN_OFFSET, 1000000000, scratch, &f) == EV_OK);
	CHECK(llabs(f.offset - 1234567) <= 1);
	CHECK(f.drift == 0);
	CHECK(f.drift_note == EV_DRIFT_NOT_ASKED);
	CHECK(f.used == 50 && f.outliers == 0);
	CHECK(f.resid_max <= 2);
	CHECK(ev_align_apply_fit(&f, BASE + 1234567) - BASE <= 1);
	CHECK(ev_align_fit(tr, d, 0, EV_ALIGN_OFFSET, 0, scratch, &f) == EV_ERR_ARG);
}

static void test_fit_outliers(void)
{
	int64_t tr[40], d[40];
	double scratch[200];
	struct ev_align_fit f;
	for (int i = 0; i < 40; i++) {
		tr[i] = BASE + i * 1000000LL;
		d[i] = -5000000 + (i % 5 == 0 ? 3000000 : 0); /* every fifth a straggler */
	}
	CHECK(ev_align_fit(tr, d, 40, EV_ALIGN_OFFSET, 0, scratch, &f) == EV_OK);
	CHECK(f.offset == -5000000);
	CHECK(f.outliers == 8);
}

/* +2 s and 50 ppm over 10 minutes: the drift is fitted and the inverse puts
 * every rank time back within a nanosecond or two, even at Unix-epoch
 * magnitudes where a double has 256 ns steps. */
static void test_fit_drift_unix(void)
{
	enum { N = 600 };
	static int64_t tr[N], d[N];
	static double scratch[5 * N];
	struct ev_align_fit f;
	const int64_t off = 2000000000, t0 = BASE;
	const double drift = 50e-6;
	for (int i = 0; i < N; i++) {
		tr[i] = BASE + (int64_t)i * 1000000000LL;
		d[i] = local_time(tr[i], off, drift, t0) - tr[i];
	}
	CHECK(ev_align_fit(tr, d, N, EV_ALIGN_DRIFT, 1000000000, scratch, &f) == EV_OK);
	CHECK(f.drift_note == EV_DRIFT_FITTED);
	CHECK(fabs(f.drift - drift) < 1e-9);
	int64_t worst = 0;
	for (int i = 0; i < N; i++) {
		int64_t back = ev_align_apply_fit(&f, local_time(tr[i], off, drift, t0)) - tr[i];
		if (llabs(back) > worst)
			worst = llabs(back);
	}
	CHECK(worst <= 2);
	/* The old way, the drift applied at the rank's own clock, misses by
	 * drift x offset = 100 us: the test above would catch it. */
	int64_t tl = local_time(tr[N - 1], off, drift, t0);
	double wrong = (double)tl - ((double)f.offset + f.drift * (double)(tl - f.t0));
	CHECK(fabs(wrong - (double)tr[N - 1]) > 50000);
	/* Offset-only mode on the same data: no drift. */
	CHECK(ev_align_fit(tr, d, N, EV_ALIGN_OFFSET, 1000000000, scratch, &f) == EV_OK);
	CHECK(f.drift == 0);
}

static void test_fit_short_span_and_noise(void)
{
	int64_t tr[8], d[8];
	double scratch[40];
	struct ev_align_fit f;
	/* 8 collectives in 14 ms on a shared clock, jitter of a few us. */
	static const int jit[8] = { 3000, -2000, 1500, -4000, 2500, 0, -1000, 3500 };
	for (int i = 0; i < 8; i++) {
		tr[i] = BASE + i * 2000000LL;
		d[i] = jit[i];
	}
	CHECK(ev_align_fit(tr, d, 8, EV_ALIGN_DRIFT, 1000000000, scratch, &f) == EV_OK);
	CHECK(f.drift == 0 && f.drift_note == EV_DRIFT_SHORT_SPAN);
	/* Span allowed, but the slope is noise. */
	CHECK(ev_align_fit(tr, d, 8, EV_ALIGN_DRIFT, 0, scratch, &f) == EV_OK);
	CHECK(f.drift == 0 && (f.drift_note == EV_DRIFT_NOISE || f.drift_note == EV_DRIFT_IMPLAUSIBLE));
	/* Too few anchors. */
	CHECK(ev_align_fit(tr, d, 5, EV_ALIGN_DRIFT, 0, scratch, &f) == EV_OK);
	CHECK(f.drift_note == EV_DRIFT_FEW);
}

static void test_apply_saturates(void)
{
	struct ev_align_fit f;
	memset(&f, 0, sizeof f);
	f.offset = -10;
	CHECK(ev_align_apply_fit(&f, INT64_MAX - 5) == INT64_MAX);
	f.offset = 10;
	CHECK(ev_align_apply_fit(&f, INT64_MIN + 5) == INT64_MIN);
}

static struct ev_rec rec(unsigned type, unsigned op, uint32_t rank, uint32_t stream, int64_t ts, uint64_t dur)
{
	struct ev_rec r;
	ev_rec_init(&r);
	r.type = (uint8_t)type;
	r.op = (uint8_t)op;
	r.rank = rank;
	r.stream = stream;
	r.ts = ts;
	r.dur = dur;
	return r;
}

/* Four ranks of one configuration with offsets and drifts, through the
 * anchors of one kind; every rank comes back within 10 us. */
static void run_solver(const char *what)
{
	static const int64_t off[4] = { 0, 1230000, -37000000, 2000000000 };
	static const double drift[4] = { 0, 50e-6, -20e-6, 50e-6 };
	struct ev_align_opts o;
	ev_align *a;
	ev_align_opts_default(&o);
	o.mode = EV_ALIGN_DRIFT;
	CHECK(ev_align_new(&a, &o) == EV_OK);
	uint64_t kname = ev_hash64("ncclDevKernel_AllReduce", 23);
	for (int r = 0; r < 4; r++)
		for (int i = 0; i < 600; i++) {
			int64_t end = BASE + (int64_t)i * 1000000000LL + 750000000;
			int64_t le = local_time(end, off[r], drift[r], BASE), ls = le - 200000;
			struct ev_rec x = rec(EV_KERNEL, EV_KC_GEMM, (uint32_t)r, 7, ls - 300000, 1000);
			CHECK(ev_align_add(a, 0, (uint32_t)r, &x) == EV_OK);
			if (!strcmp(what, "coll")) {
				x = rec(EV_COLL, EV_OP_ALLREDUCE, (uint32_t)r, 4, ls, (uint64_t)(le - ls));
				x.comm = 77;
				x.seq = (uint32_t)i;
			} else if (!strcmp(what, "p2p")) {
				/* A chain 0 -> 1 -> 2 -> 3: only neighbours share anchors. */
				if (r == 3)
					continue;
				x = rec(EV_P2P, EV_OP_SEND, (uint32_t)r, 4, ls, (uint64_t)(le - ls));
				x.comm = 78;
				x.seq = (uint32_t)i;
				x.peer = r + 1;
				CHECK(ev_align_add(a, 0, (uint32_t)r, &x) == EV_OK);
				int64_t le2 = local_time(end, off[r + 1], drift[r + 1], BASE);
				x = rec(EV_P2P, EV_OP_RECV, (uint32_t)r + 1, 4, le2 - 1000, 1000);
				x.comm = 78;
				x.seq = (uint32_t)i;
				x.peer = r;
				CHECK(ev_align_add(a, 0, (uint32_t)r + 1, &x) == EV_OK);
				continue;
			} else {
				x = rec(EV_KERNEL, EV_KC_COMM, (uint32_t)r, 4, ls, (uint64_t)(le - ls));
				x.name = kname;
			}
			CHECK(ev_align_add(a, 0, (uint32_t)r, &x) == EV_OK);
		}
	CHECK(ev_align_solve(a) == EV_OK);
	CHECK(ev_align_count(a) == 4);
	CHECK(ev_align_at(a, 0)->state == EV_ALIGNED_REF);
	for (int r = 1; r < 4; r++) {
		const struct ev_align_rank *ar = ev_align_get(a, 0, (uint32_t)r);
		CHECK(ar && ar->state == EV_ALIGNED);
		if (!ar)
			continue;
		CHECK(ar->fit.drift_note == EV_DRIFT_FITTED);
		for (int i = 0; i < 600; i += 37) {
			int64_t end = BASE + (int64_t)i * 1000000000LL + 750000000;
			int64_t got = ev_align_apply(a, 0, (uint32_t)r, local_time(end, off[r], drift[r], BASE));
			if (llabs(got - end) > 10000) {
				fprintf(stderr, "%s: rank %d iteration %d off by %lld ns\n", what, r, i, (long long)(got - end));
				CHECK(0);
				break;
			}
		}
	}
	if (!strcmp(what, "p2p"))
		CHECK(ev_align_get(a, 0, 3)->via == 2);
	ev_align_free(a);
}

static void test_solver_coll(void) { run_solver("coll"); }
static void test_solver_p2p_chain(void) { run_solver("p2p"); }
static void test_solver_kernels(void) { run_solver("kernel"); }

/* Kernel ordinals are used only where both ranks ran as many such kernels:
 * a rank whose trace starts one kernel late is not aligned by them. */
static void test_kernel_count_mismatch(void)
{
	struct ev_align_opts o;
	ev_align *a;
	ev_align_opts_default(&o);
	CHECK(ev_align_new(&a, &o) == EV_OK);
	uint64_t kname = ev_hash64("ncclKernel", 10);
	for (int r = 0; r < 2; r++)
		for (int i = r; i < 20; i++) {
			struct ev_rec x = rec(EV_KERNEL, EV_KC_COMM, (uint32_t)r, 4, BASE + i * 1000000LL, 1000);
			x.name = kname;
			CHECK(ev_align_add(a, 0, (uint32_t)r, &x) == EV_OK);
		}
	CHECK(ev_align_solve(a) == EV_OK);
	CHECK(ev_align_get(a, 0, 1)->state == EV_UNALIGNED);
	CHECK(ev_align_apply(a, 0, 1, 42) == 42);
	ev_align_free(a);
}

/* Two configurations with the same ranks are never aligned to each other. */
static void test_configurations_apart(void)
{
	struct ev_align_opts o;
	ev_align *a;
	ev_align_opts_default(&o);
	CHECK(ev_align_new(&a, &o) == EV_OK);
	for (uint32_t cfg = 0; cfg < 2; cfg++)
		for (uint32_t r = 0; r < 2; r++)
			for (int i = 0; i < 10; i++) {
				int64_t shift = r ? (cfg ? 5000000 : -3000000) : 0;
				/* Same comm and seq in both configurations. */
				struct ev_rec x = rec(EV_COLL, EV_OP_ALLREDUCE, r, 4, BASE + i * 1000000LL + shift, 1000);
				x.comm = 9;
				x.seq = (uint32_t)i;
				CHECK(ev_align_add(a, cfg, r, &x) == EV_OK);
			}
	CHECK(ev_align_solve(a) == EV_OK);
	CHECK(ev_align_count(a) == 4);
	CHECK(ev_align_get(a, 0, 1)->fit.offset == -3000000);
	CHECK(ev_align_get(a, 1, 1)->fit.offset == 5000000);
	ev_align_free(a);
}

/* Thinning keeps memory bounded and the kept anchors still span the run. */
static void test_thinning(void)
{
	struct ev_align_opts o;
	ev_align *a;
	ev_align_opts_default(&o);
	o.mode = EV_ALIGN_DRIFT;
	o.anchors_per_rank = 256;
	CHECK(ev_align_new(&a, &o) == EV_OK);
	for (uint32_t r = 0; r < 2; r++)
		for (int i = 0; i < 20000; i++) {
			int64_t t = BASE + i * 30000000LL; /* 10 minutes */
			struct ev_rec x = rec(EV_COLL, EV_OP_ALLREDUCE, r, 4, local_time(t, r ? 700000 : 0, r ? 30e-6 : 0, BASE), 0);
			x.comm = 5;
			x.seq = (uint32_t)i;
			CHECK(ev_align_add(a, 0, r, &x) == EV_OK);
		}
	CHECK(ev_align_thinning(a, EV_ANCHOR_COLL) >= 6);
	CHECK(ev_align_solve(a) == EV_OK);
	const struct ev_align_rank *r1 = ev_align_get(a, 0, 1);
	CHECK(r1->anchors[EV_ANCHOR_COLL] == 20000);
	CHECK(r1->used[EV_ANCHOR_COLL] < 256 && r1->used[EV_ANCHOR_COLL] > 64);
	CHECK(r1->fit.span > 500000000000ULL);
	CHECK(fabs(r1->fit.drift - 30e-6) < 1e-9);
	ev_align_free(a);
}

static void test_start_mode(void)
{
	struct ev_align_opts o;
	ev_align *a;
	ev_align_opts_default(&o);
	o.mode = EV_ALIGN_START;
	CHECK(ev_align_new(&a, &o) == EV_OK);
	struct ev_rec x = rec(EV_KERNEL, 0, 3, 0, 500, 10);
	CHECK(ev_align_add(a, 0, 3, &x) == EV_OK);
	x.ts = 400;
	CHECK(ev_align_add(a, 0, 3, &x) == EV_OK);
	CHECK(ev_align_solve(a) == EV_OK);
	CHECK(ev_align_apply(a, 0, 3, 400) == 0);
	CHECK(ev_align_apply(a, 0, 3, 450) == 50);
	ev_align_free(a);
}

static void test_config_name(void)
{
	ev_meta *m = ev_meta_new();
	const char *line = "#src 4 file=r3.json rank=3 base_ns=17 threads=256 label=base channels=28";
	CHECK(ev_meta_add_line(m, line, strlen(line)) == EV_OK);
	char buf[128];
	size_t n = ev_align_config_name(ev_meta_src(m, 4), NULL, 0, buf, sizeof buf);
	CHECK(strcmp(buf, "channels=28 label=base threads=256") == 0);
	CHECK(n == strlen(buf));
	const char *keys[] = { "threads" };
	ev_align_config_name(ev_meta_src(m, 4), keys, 1, buf, sizeof buf);
	CHECK(strcmp(buf, "threads=256") == 0);
	/* Truncation reports the full length. */
	CHECK(ev_align_config_name(ev_meta_src(m, 4), NULL, 0, buf, 8) == n);
	CHECK(ev_align_per_rank_key("base_ns") && !ev_align_per_rank_key("threads"));
	ev_meta_free(m);
}

static void add_lines(ev_meta *m, const char *const *lines, size_t n)
{
	for (size_t i = 0; i < n; i++)
		CHECK(ev_meta_add_line(m, lines[i], strlen(lines[i])) == EV_OK);
}

/* input= is a rank's file when each input holds other ranks, and a run
 * when two inputs give the same rank of the same configuration. */
static void test_input_is_config(void)
{
	const char *per_rank[] = { "#src 0 file=a.json rank=0 input=r0.ev", "#src 1 file=b.json rank=1 input=r1.ev" };
	const char *per_run[] = { "#src 0 file=a.json rank=0 input=base.ev", "#src 1 file=b.json rank=1 input=base.ev",
		                  "#src 2 file=c.json rank=0 input=test.ev", "#src 3 file=d.json rank=1 input=test.ev" };
	const char *labelled[] = { "#src 0 rank=0 input=x.ev label=base", "#src 1 rank=0 input=y.ev label=test" };
	ev_meta *m = ev_meta_new();
	add_lines(m, per_rank, 2);
	CHECK(!ev_align_input_is_config(m));
	ev_meta_free(m);
	m = ev_meta_new();
	add_lines(m, per_run, 4);
	CHECK(ev_align_input_is_config(m));
	ev_meta_free(m);
	/* Labels already tell the runs apart. */
	m = ev_meta_new();
	add_lines(m, labelled, 2);
	CHECK(!ev_align_input_is_config(m));
	ev_meta_free(m);
}


/* ---- configuration ids, pass 1, report, #meta -------------------------- */

static void test_cfgs(void)
{
	struct ev_align_cfgs c;
	uint32_t id = 99;
	ev_align_cfgs_init(&c);
	CHECK(ev_align_cfgs_id(&c, "threads=256", &id) == EV_OK && id == 0);
	CHECK(ev_align_cfgs_id(&c, "", &id) == EV_OK && id == 1);
	CHECK(ev_align_cfgs_id(&c, "threads=256", &id) == EV_OK && id == 0);
	CHECK(c.n == 2 && strcmp(c.names[1], "") == 0);
	ev_align_cfgs_free(&c);
	CHECK(c.n == 0);
	CHECK(ev_align_cfgs_id(&c, "x", &id) == EV_OK && id == 0);
	ev_align_cfgs_free(&c);
}

/* Messages a library call said, one per line as "E|W|N text". */
struct said { char buf[8192]; size_t len; int errors, warnings, notes; };

static void say_to(void *ctx, enum ev_say_kind kind, const char *text)
{
	struct said *s = ctx;
	s->errors += kind == EV_SAY_ERROR;
	s->warnings += kind == EV_SAY_WARN;
	s->notes += kind == EV_SAY_NOTE;
	if (s->len < sizeof s->buf)
		s->len += (size_t)snprintf(s->buf + s->len, sizeof s->buf - s->len, "%c %s\n",
		                           kind == EV_SAY_ERROR ? 'E' : kind == EV_SAY_WARN ? 'W' : 'N', text);
}

static char tmpdir[64];

static void path_of(char *buf, size_t n, const char *name)
{
	snprintf(buf, n, "%s/%s", tmpdir, name);
}

/* The whole file, NUL-terminated (or NULL). */
static char *slurp(const char *path)
{
	FILE *f = fopen(path, "rb");
	if (!f)
		return NULL;
	char *b = calloc(1, 1 << 16);
	size_t n = b ? fread(b, 1, (1 << 16) - 1, f) : 0;
	(void)n;
	fclose(f);
	return b;
}

/* An ev file of the given text lines and records. */
static void write_ev(const char *name, const char *origin, const char *const *lines, size_t nl,
                     const struct ev_rec *r, size_t nr)
{
	char path[128];
	path_of(path, sizeof path, name);
	ev_strtab *st = ev_strtab_new();
	ev_writer *w;
	CHECK(ev_writer_open(&w, path, st) == EV_OK);
	if (origin)
		CHECK(ev_writer_header(w, "origin", origin) == EV_OK);
	for (size_t i = 0; i < nl; i++)
		CHECK(ev_write_text(w, lines[i], strlen(lines[i])) == EV_OK);
	for (size_t i = 0; i < nr; i++)
		CHECK(ev_write(w, &r[i]) == EV_OK);
	CHECK(ev_writer_close(w) == EV_OK);
	ev_strtab_free(st);
}

/* The caller's sources for the scan: source s of any input is configuration
 * s; it counts what it was asked. */
struct sources { int src_lines, asked; };

static int scan_src_line(void *ctx, size_t i, ev_reader *r, const char *line, size_t len)
{
	(void)i;
	(void)r;
	(void)line;
	(void)len;
	((struct sources *)ctx)->src_lines++;
	return EV_OK;
}

static int scan_config_of(void *ctx, size_t i, uint32_t src, uint32_t *config)
{
	(void)i;
	((struct sources *)ctx)->asked++;
	*config = src;
	return EV_OK;
}

static struct ev_rec coll_at(uint32_t rank, uint16_t src, uint32_t seq, int64_t end)
{
	struct ev_rec x = rec(EV_COLL, EV_OP_ALLREDUCE, rank, 4, end - 1000, 1000);
	x.comm = 7;
	x.seq = seq;
	x.src = src;
	return x;
}

/* Pass 1 over two files: one holding ranks 0 and 1 (several clocks), one
 * rank 2 that runs 3 us late; the header-only scan stops at the first
 * record; a missing file is said and returned. */
static void test_scan(void)
{
	const char *l0[] = { "#src 0 run=a", "#rank 0 world_size=4" };
	const char *l1[] = { "#src 0 run=a file=r2" };
	struct ev_rec r0[20], r1[10];
	for (uint32_t i = 0; i < 10; i++) {
		r0[2 * i] = coll_at(0, 0, i, BASE + i * 1000000LL);
		r0[2 * i + 1] = coll_at(1, 0, i, BASE + i * 1000000LL + 500);
		r1[i] = coll_at(2, 0, i, BASE + i * 1000000LL + 3000);
	}
	write_ev("s0.ev", "unix", l0, 2, r0, 20);
	write_ev("s1.ev", "trace", l1, 1, r1, 10);
	char p0[128], p1[128], p2[128];
	path_of(p0, sizeof p0, "s0.ev");
	path_of(p1, sizeof p1, "s1.ev");
	path_of(p2, sizeof p2, "nosuch.ev");
	const char *paths[] = { p0, p1, p2 };
	struct sources src = { 0, 0 };
	struct said said;
	memset(&said, 0, sizeof said);
	struct ev_align_scan s;
	memset(&s, 0, sizeof s);
	s.paths = paths;
	s.names = paths;
	s.n = 2;
	s.src_line = scan_src_line;
	s.config_of = scan_config_of;
	s.ctx = &src;
	s.say = (struct ev_say){ say_to, &said };
	CHECK(ev_align_scan_run(&s) == EV_OK);
	CHECK(src.src_lines == 2 && src.asked == 0);
	struct ev_align_opts o;
	ev_align *a;
	ev_align_opts_default(&o);
	CHECK(ev_align_new(&a, &o) == EV_OK);
	s.al = a;
	src.src_lines = 0;
	CHECK(ev_align_scan_run(&s) == EV_OK);
	CHECK(src.src_lines == 2);
	CHECK(src.asked == 2); /* once per input: the source does not change */
	CHECK(s.several_clocks == 1);
	CHECK(strcmp(s.origin, "unix") == 0 && s.world_size == 4);
	CHECK(ev_align_count(a) == 3);
	CHECK(ev_align_get(a, 0, 1)->fit.offset == 500);
	CHECK(ev_align_get(a, 0, 2)->fit.offset == 3000);
	CHECK(said.len == 0);
	ev_align_free(a);
	/* A file that is not there: said as the caller names it. */
	s.al = NULL;
	s.n = 3;
	const char *names[] = { p0, p1, "-" };
	s.names = names;
	CHECK(ev_align_scan_run(&s) == EV_ERR_IO);
	CHECK(said.errors == 1 && strcmp(said.buf, "E standard input: No such file or directory\n") == 0);
}

/* The old hand-printed row: the table must give these bytes. */
static void old_row(char *b, size_t n, const char *cname, const struct ev_align_rank *r, const char *state,
                    const char *note)
{
	const struct ev_align_fit *f = &r->fit;
	snprintf(b, n, "%s\t%u\t%s\t%u\t%lld\t%.6f\t%lld\t%llu\t%llu\t%llu\t%llu\t%llu\t%llu\t%zu\t%.0f\t%.0f\t%llu\t%s\n",
	         cname, r->rank, state, r->via, (long long)f->offset, f->drift * 1e6, (long long)f->t0,
	         (unsigned long long)r->anchors[0], (unsigned long long)r->anchors[1], (unsigned long long)r->anchors[2],
	         (unsigned long long)r->used[0], (unsigned long long)r->used[1], (unsigned long long)r->used[2],
	         f->outliers, f->resid_med, f->resid_max, (unsigned long long)f->span, note);
}

/* Two configurations: one named with a tab and a backslash (kept as they
 * are), rank 1 aligned 5 us late with a noisy anchor; one unnamed without
 * any anchor.  Rank 2 of world_size 3 is missing from both. */
static void test_report(void)
{
	struct ev_align_opts o;
	ev_align *a;
	ev_align_opts_default(&o);
	CHECK(ev_align_new(&a, &o) == EV_OK);
	for (uint32_t i = 0; i < 12; i++) {
		struct ev_rec x = coll_at(0, 0, i, BASE + i * 1000000LL);
		CHECK(ev_align_add(a, 0, 0, &x) == EV_OK);
		x = coll_at(1, 0, i, BASE + i * 1000000LL + 5000 + (i == 3 ? 40000 : (int64_t)(i % 3)));
		CHECK(ev_align_add(a, 0, 1, &x) == EV_OK);
		x = rec(EV_KERNEL, EV_KC_GEMM, 0, 1, BASE + i, 10);
		CHECK(ev_align_add(a, 1, 0, &x) == EV_OK);
		x.rank = 1;
		CHECK(ev_align_add(a, 1, 1, &x) == EV_OK);
	}
	CHECK(ev_align_solve(a) == EV_OK);
	struct ev_align_cfgs c;
	uint32_t id;
	ev_align_cfgs_init(&c);
	CHECK(ev_align_cfgs_id(&c, "label=we\tird x\\y", &id) == EV_OK && id == 0);
	CHECK(ev_align_cfgs_id(&c, "", &id) == EV_OK && id == 1);
	char path[128];
	path_of(path, sizeof path, "rep.tsv");
	ev_output *out;
	CHECK(ev_output_open(&out, path) == EV_OK);
	struct said said;
	memset(&said, 0, sizeof said);
	struct ev_align_report rep = { &c, "trace", "kineto2ev", 3, 0, out, { say_to, &said } };
	CHECK(ev_align_report_write(a, &rep) == EV_OK);
	CHECK(ev_output_close(out) == EV_OK);
	char want[4096];
	size_t w = (size_t)snprintf(want, sizeof want, "%s",
	                            "config\trank\tstate\tvia\toffset_ns\tdrift_ppm\tt0_ns\tanchors_coll\tanchors_p2p\t"
	                            "anchors_kernel\tused_coll\tused_p2p\tused_kernel\toutliers\tresid_median_ns\t"
	                            "resid_max_ns\tspan_ns\tnote\n");
	static const char *const states[] = { "reference", "aligned", "start", "unaligned" };
	for (size_t k = 0; k < ev_align_count(a); k++) {
		const struct ev_align_rank *r = ev_align_at(a, k);
		const char *note = r->state == EV_ALIGNED ? ev_drift_note_text(r->fit.drift_note)
		                   : r->state == EV_UNALIGNED ? "no anchor shared with an aligned rank" : "";
		old_row(want + w, sizeof want - w, r->config ? "(single)" : "label=we\tird x\\y", r, states[r->state], note);
		w += strlen(want + w);
	}
	char *got = slurp(path);
	CHECK(got && strcmp(got, want) == 0);
	free(got);
	const struct ev_align_rank *r1 = ev_align_get(a, 0, 1);
	CHECK(r1->state == EV_ALIGNED && r1->fit.offset >= 5000 && r1->fit.offset <= 5002 && r1->fit.outliers == 1);
	CHECK(said.errors == 0 && said.notes == 6 && said.warnings == 4);
	CHECK(strstr(said.buf, "N align coll: configuration label=we\tird x\\y: 2 ranks, anchors coll 24, p2p 0, kernel 0\n"));
	CHECK(strstr(said.buf, "N align:   rank 0: reference\n"));
	CHECK(strstr(said.buf, "N align:   rank 1: left on its own clock\n"));
	CHECK(strstr(said.buf, "W configuration (single): no coll or p2p records with a communicator; and no NCCL kernels either: nothing to align by\n"));
	CHECK(strstr(said.buf, "W configuration (single): no rank could be aligned; times left as they are\n"));
	CHECK(strstr(said.buf, "W configuration label=we\tird x\\y: 1 of world_size 3 rank(s) missing: 2\n"));
	CHECK(strstr(said.buf, "W configuration (single): 1 of world_size 3 rank(s) missing: 2\n"));
	/* Without a table only the messages; ranks that are input numbers are
	 * never missing. */
	memset(&said, 0, sizeof said);
	rep.tsv = NULL;
	rep.rank_is_input = 1;
	CHECK(ev_align_report_write(a, &rep) == EV_OK);
	CHECK(said.notes == 6 && said.warnings == 2 && !strstr(said.buf, "missing"));
	/* The #meta lines: two configurations, so each rank is named by its
	 * configuration; the unaligned rank is left out. */
	char evpath[128];
	path_of(evpath, sizeof evpath, "meta.ev");
	ev_strtab *st = ev_strtab_new();
	ev_writer *wr;
	CHECK(ev_writer_open(&wr, evpath, st) == EV_OK);
	CHECK(ev_align_write_meta(a, &c, wr) == EV_OK);
	CHECK(ev_writer_close(wr) == EV_OK);
	ev_strtab_free(st);
	got = slurp(evpath);
	char line[256];
	snprintf(line, sizeof line, "#meta align.cfg0.rank1.offset_ns=%lld align.cfg0.rank1.drift_ppm=0.000000 align.cfg0.rank1.t0_ns=%lld\n",
	         (long long)r1->fit.offset, (long long)r1->fit.t0);
	CHECK(got && strstr(got, line));
	CHECK(got && strstr(got, "#meta align.cfg1.rank0.offset_ns=0 "));
	CHECK(got && !strstr(got, "align.cfg1.rank1."));
	CHECK(got && strstr(got, "#meta align.cfg0=label=we\\tird,x\\\\y\n#meta align.cfg1=\n#meta align.mode=coll\n"));
	free(got);
	ev_align_cfgs_free(&c);
	ev_align_free(a);
}

/* The table cells the report needs: printf's fixed decimals (the sign of a
 * small negative kept) and a name's bytes as they are. */
static void test_table_cells(void)
{
	char path[128];
	path_of(path, sizeof path, "cells.tsv");
	ev_output *out;
	ev_table *t;
	static const char *const cols[] = { "a", "b", "c", "d" };
	CHECK(ev_output_open(&out, path) == EV_OK);
	CHECK(ev_table_open(&t, out, EV_TABLE_TSV, cols, 4) == EV_OK);
	CHECK(ev_table_fixed(t, -1e-9, 6) == EV_OK);
	CHECK(ev_table_fixed(t, 2.5, 0) == EV_OK);
	CHECK(ev_table_fixed(t, NAN, 3) == EV_OK);
	CHECK(ev_table_str_raw(t, "x\ty\\z") == EV_OK);
	CHECK(ev_table_close(t) == EV_OK);
	CHECK(ev_output_close(out) == EV_OK);
	char *got = slurp(path);
	CHECK(got && strcmp(got, "a\tb\tc\td\n-0.000000\t2\t\tx\ty\\z\n") == 0);
	free(got);
}

int main(void)
{
	RUN(test_fit_offset_only);
	RUN(test_fit_outliers);
	RUN(test_fit_drift_unix);
	RUN(test_fit_short_span_and_noise);
	RUN(test_apply_saturates);
	RUN(test_solver_coll);
	RUN(test_solver_p2p_chain);
	RUN(test_solver_kernels);
	RUN(test_kernel_count_mismatch);
	RUN(test_configurations_apart);
	RUN(test_thinning);
	RUN(test_start_mode);
	RUN(test_config_name);
	RUN(test_input_is_config);
	snprintf(tmpdir, sizeof tmpdir, "/tmp/evkit-test-align.XXXXXX");
	if (!mkdtemp(tmpdir)) {
		perror("mkdtemp");
		return 1;
	}
	RUN(test_cfgs);
	RUN(test_scan);
	RUN(test_report);
	RUN(test_table_cells);
	static const char *const made[] = { "s0.ev", "s1.ev", "rep.tsv", "meta.ev", "cells.tsv" };
	for (size_t i = 0; i < sizeof made / sizeof *made; i++) {
		char p[128];
		path_of(p, sizeof p, made[i]);
		unlink(p);
	}
	rmdir(tmpdir);
	return unit_report("test_align");
}
