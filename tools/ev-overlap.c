/* SPDX-License-Identifier: MIT */
/*
 * ev-overlap - which communication ran under each compute kernel.
 *
 * One sweep per rank over a time-ordered stream.  A compute kernel stays
 * open until the stream passes its end; every communication kernel that
 * starts before then is intersected with it, and communication kernels
 * still running when it starts are intersected on arrival.  Overlaps of one
 * kernel arrive in start order, so their union is merged on the fly.
 * Memory holds only the intervals open at one instant.
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ev.h"

enum mode { M_EV, M_TABLE, M_SUMMARY };
#define MAX_NAMES 4

struct opts {
	struct ev_cli cli;
	enum mode mode;
	enum ev_table_fmt fmt;
	enum ev_rules rules;
	unsigned class_mask;
	int kernel_names;
	char **inputs;
	int ninputs;
};

static void usage(FILE *f)
{
	fputs(
"Usage: ev-overlap [options] [FILE...]\n"
"For every compute kernel (GEMM by default), the communication kernels that\n"
"ran at the same time on its rank: how many, which, the largest single\n"
"overlap and the union of all overlaps (no double counting).  Per rank:\n"
"communication time, the part hidden under computation, the exposed part and\n"
"HTA's comp_comm_overlap percentage.  Input must be in time order (one rank,\n"
"or ranks merged by ev-merge).\n"
"\n"
"Output (one of):\n"
"                         the input stream with an overlap record after each\n"
"                         compute kernel's end, and '#meta overlap.srcS.rankR.*'\n"
"                         totals at the end [default]\n"
"      --table            one row per compute kernel instance\n"
"      --summary          one row per rank\n"
"      --csv, --json, --md  table format [TSV]\n"
"\n"
"Options:\n"
"      --class=LIST       compute kernel classes to report, e.g. gemm,attention\n"
"                         or 'all' (every non-communication kernel) [gemm]\n"
"      --kernel-names     name overlapping communication by kernel name, not by\n"
"                         the collective (allreduce, ...) its coll record gives\n"
"      --rules=SET        what is communication: tracelens, tracelens-2025,\n"
"                         hta (reproduces HTA's overlap percentage) [tracelens]\n"
"  -o, --output=FILE      write to FILE (via a temporary name) [stdout]\n"
"  -f, --force            write binary output to a terminal\n"
"  -q, --quiet            no warnings\n"
"  -h, --help             show this help and exit\n"
"  -V, --version          show version and exit\n"
"\n"
"Table columns: src, rank, stream, ts (kernel start, ns), dur_us, name, sig,\n"
"comm_count, comm_names (up to 4, ';'-separated, '...' when more),\n"
"max_overlap_pct and max_overlap_name (the single largest overlap),\n"
"overlap_us (union) and overlap_pct (of the kernel's duration).\n"
"\n"
"Exit status:\n"
"  0  success\n"
"  1  data or I/O error (malformed, truncated or unordered input)\n"
"  2  usage error\n"
"\n"
"Example:\n"
"  ev-merge rank*.ev | ev-overlap --table | sort -t$'\\t' -k12,12gr | head\n", f);
}

struct comp { /* an open compute kernel */
	struct ev_rec rec;
	int64_t end;            /* ev_rec_end(&rec) */
	uint64_t seq;           /* open order, for ties in the close heap */
	int64_t cur_s, cur_e;   /* current merged overlap interval */
	uint64_t uni;           /* merged overlap before it */
	uint64_t best;          /* largest single overlap */
	uint64_t best_name;
	uint32_t count;
	uint64_t names[MAX_NAMES];
	uint32_t nnames;
	int more;
};

struct comm { int64_t s, e; uint64_t name; };

struct rankstate {
	uint32_t rank, src;
	struct comp *open;
	size_t nopen, capopen;
	struct comm *act;
	size_t nact, capact;
	struct ev_cover cov;    /* classes: computation, communication */
	int64_t t0;
	uint64_t kernels, overlapped;
};

/* The close heap: every open compute kernel by (end, rank index, open
 * order), so that closing costs O(log open) and never visits idle ranks. */
struct hent { int64_t end; uint32_t ri; uint64_t seq; };

struct state {
	struct opts *o;
	ev_strtab *st;
	ev_meta *meta;
	ev_writer *w;
	ev_output *out;
	ev_table *t;
	struct rankstate *ranks;
	size_t nranks;
	struct ev_map rank_idx;     /* rank + 1 -> index + 1 */
	struct ev_map comm_cache;   /* name -> is comm + 1 */
	struct ev_map class_cache;  /* name -> class + 1 */
	struct ev_order order;
	struct ev_rec pending;      /* a communication kernel awaiting its collective */
	int have_pending;
	struct hent *heap;
	size_t nheap, capheap;
	uint64_t nseq;
	int header_done;
	uint64_t nkernels, ncomm, nselected; /* to say why a result is empty */
};

static const char *str_of(struct state *s, uint64_t id)
{
	const char *t = ev_strtab_get(s->st, id, NULL);
	return t ? t : "";
}

static int cached(struct ev_map *m, uint64_t key, unsigned *v)
{
	uint64_t *c = key ? ev_map_get(m, key) : NULL;
	if (!c)
		return 0;
	*v = (unsigned)(*c - 1);
	return 1;
}

static int is_comm(struct state *s, const struct ev_rec *r)
{
	unsigned v;
	if (r->type != EV_KERNEL)
		return 0;
	if (cached(&s->comm_cache, r->name, &v))
		return (int)v;
	v = (unsigned)ev_is_comm_name(s->o->rules, str_of(s, r->name));
	if (r->name && ev_map_put(&s->comm_cache, r->name, v + 1) != EV_OK)
		return -1;
	return (int)v;
}

static int kclass(struct state *s, const struct ev_rec *r, unsigned *k)
{
	if (cached(&s->class_cache, r->name, k))
		return EV_OK;
	*k = ev_kernel_class(s->o->rules, str_of(s, r->name));
	return r->name ? ev_map_put(&s->class_cache, r->name, *k + 1) : EV_OK;
}

static struct rankstate *rank_of(struct state *s, uint32_t src, uint32_t rank)
{
	uint64_t key = ((uint64_t)src << 32 | rank) + 1;
	uint64_t *i = ev_map_get(&s->rank_idx, key);
	if (i)
		return &s->ranks[*i - 1];
	struct rankstate *nr = realloc(s->ranks, (s->nranks + 1) * sizeof *nr);
	if (!nr)
		return NULL;
	s->ranks = nr;
	struct rankstate *r = &s->ranks[s->nranks++];
	memset(r, 0, sizeof *r);
	r->rank = rank;
	r->src = src;
	ev_cover_init(&r->cov);
	if (ev_map_put(&s->rank_idx, key, s->nranks) != EV_OK)
		return NULL;
	return r;
}

static void intersect(struct comp *k, int64_t s, int64_t e, uint64_t name)
{
	int64_t ks = k->rec.ts, ke = k->end;
	int64_t a = s > ks ? s : ks, b = e < ke ? e : ke;
	if (b <= a)
		return;
	uint64_t ov = ev_span(a, b);
	k->count++;
	if (ov > k->best) {
		k->best = ov;
		k->best_name = name;
	}
	uint32_t i;
	for (i = 0; i < k->nnames && k->names[i] != name; i++)
		;
	if (i == k->nnames) {
		if (k->nnames < MAX_NAMES)
			k->names[k->nnames++] = name;
		else
			k->more = 1;
	}
	/* Overlaps arrive in start order: merge into the running union. */
	if (k->cur_e <= k->cur_s) {
		k->cur_s = a;
		k->cur_e = b;
	} else if (a > k->cur_e) {
		k->uni += ev_span(k->cur_s, k->cur_e);
		k->cur_s = a;
		k->cur_e = b;
	} else if (b > k->cur_e) {
		k->cur_e = b;
	}
}

static uint64_t union_of(const struct comp *k)
{
	return k->uni + ev_span(k->cur_s, k->cur_e);
}

static const char *src_label(struct state *s, uint32_t src, char *buf, size_t n)
{
	const struct ev_src_info *si = ev_meta_src(s->meta, src);
	if (si && si->label && *si->label)
		return si->label;
	snprintf(buf, n, "%u", src);
	return buf;
}

static int emit(struct state *s, const struct comp *k)
{
	uint64_t uni = union_of(k);
	double dur = (double)k->rec.dur;
	if (s->o->mode == M_EV) {
		struct ev_rec o;
		ev_rec_init(&o);
		o.type = EV_OVERLAP;
		o.op = k->rec.op;
		o.rank = k->rec.rank;
		o.stream = k->rec.stream;
		o.src = k->rec.src;
		o.ts = k->end;
		o.dur = k->rec.dur;
		o.bytes = uni;
		o.aux = k->count;
		o.step = dur > 0 ? (uint32_t)((double)k->best * 1000.0 / dur + 0.5) : 0;
		o.name = k->rec.name;
		o.sig = k->best_name;
		o.id = k->rec.id;
		return ev_write(s->w, &o);
	}
	if (s->o->mode != M_TABLE)
		return EV_OK;
	char names[4096] = "", b[16];
	size_t n = 0;
	for (uint32_t i = 0; i < k->nnames; i++)
		n += (size_t)snprintf(names + n, n < sizeof names ? sizeof names - n : 0, "%s%s", i ? ";" : "",
		                      str_of(s, k->names[i]));
	if (k->more && n < sizeof names)
		snprintf(names + n, sizeof names - n, ";...");
	ev_table *t = s->t;
	int rc = ev_table_str(t, src_label(s, k->rec.src, b, sizeof b));
	rc = rc ? rc : ev_table_u64(t, k->rec.rank);
	rc = rc ? rc : ev_table_u64(t, k->rec.stream);
	rc = rc ? rc : ev_table_i64(t, k->rec.ts);
	rc = rc ? rc : ev_table_f64(t, dur / 1e3);
	rc = rc ? rc : ev_table_str(t, str_of(s, k->rec.name));
	rc = rc ? rc : ev_table_str(t, str_of(s, k->rec.sig));
	rc = rc ? rc : ev_table_u64(t, k->count);
	rc = rc ? rc : ev_table_str(t, names);
	rc = rc ? rc : ev_table_f64(t, dur > 0 ? 100.0 * (double)k->best / dur : 0);
	rc = rc ? rc : ev_table_str(t, str_of(s, k->best_name));
	rc = rc ? rc : ev_table_f64(t, (double)uni / 1e3);
	rc = rc ? rc : ev_table_f64(t, dur > 0 ? 100.0 * (double)uni / dur : 0);
	return rc;
}

static int hent_less(const struct hent *x, const struct hent *y)
{
	if (x->end != y->end)
		return x->end < y->end;
	if (x->ri != y->ri)
		return x->ri < y->ri;
	return x->seq < y->seq;
}

static int heap_push(struct state *s, struct hent e)
{
	if (s->nheap == s->capheap) {
		size_t cap = s->capheap ? 2 * s->capheap : 64;
		struct hent *nh = realloc(s->heap, cap * sizeof *nh);
		if (!nh)
			return EV_ERR_NOMEM;
		s->heap = nh;
		s->capheap = cap;
	}
	size_t i = s->nheap++;
	while (i > 0 && hent_less(&e, &s->heap[(i - 1) / 2])) {
		s->heap[i] = s->heap[(i - 1) / 2];
		i = (i - 1) / 2;
	}
	s->heap[i] = e;
	return EV_OK;
}

static struct hent heap_pop(struct state *s)
{
	struct hent top = s->heap[0], e = s->heap[--s->nheap];
	size_t i = 0, n = s->nheap;
	for (;;) {
		size_t c = 2 * i + 1;
		if (c >= n)
			break;
		if (c + 1 < n && hent_less(&s->heap[c + 1], &s->heap[c]))
			c++;
		if (!hent_less(&s->heap[c], &e))
			break;
		s->heap[i] = s->heap[c];
		i = c;
	}
	if (n)
		s->heap[i] = e;
	return top;
}

/* Close every compute kernel that ended at or before t (all: every one), in
 * end order (ties: rank first seen, then open order), so overlap records
 * keep the output in time order. */
static int close_until(struct state *s, int64_t t, int all)
{
	int rc = EV_OK;
	while (!rc && s->nheap && (all || s->heap[0].end <= t)) {
		struct hent e = heap_pop(s);
		struct rankstate *rs = &s->ranks[e.ri];
		size_t i;
		for (i = 0; i < rs->nopen && rs->open[i].seq != e.seq; i++)
			;
		if (i == rs->nopen)
			continue; /* cannot happen: every open kernel is in the heap once */
		struct comp k = rs->open[i];
		rs->open[i] = rs->open[--rs->nopen];
		rs->overlapped += k.count > 0;
		rc = emit(s, &k);
	}
	return rc;
}

/* Forget the communication kernels of a rank that ended by t: they cannot
 * overlap anything that starts at t or later. */
static void prune_act(struct rankstate *rs, int64_t t)
{
	size_t w = 0;
	for (size_t i = 0; i < rs->nact; i++)
		if (rs->act[i].e > t)
			rs->act[w++] = rs->act[i];
	rs->nact = w;
}

/* A communication kernel meets the compute kernels open on its rank. */
static int add_comm(struct rankstate *rs, const struct ev_rec *r, int64_t now)
{
	int64_t end = ev_rec_end(r);
	prune_act(rs, now);
	for (size_t i = 0; i < rs->nopen; i++)
		intersect(&rs->open[i], r->ts, end, r->name);
	if (rs->nact == rs->capact) {
		size_t cap = rs->capact ? 2 * rs->capact : 16;
		struct comm *na = realloc(rs->act, cap * sizeof *na);
		if (!na)
			return EV_ERR_NOMEM;
		rs->act = na;
		rs->capact = cap;
	}
	rs->act[rs->nact++] = (struct comm){ r->ts, end, r->name };
	return EV_OK;
}

/* The held communication kernel, named by the collective record that
 * follows it (same rank, stream and start) unless --kernel-names. */
static int flush_pending(struct state *s, const struct ev_rec *next)
{
	if (!s->have_pending)
		return EV_OK;
	struct ev_rec *p = &s->pending;
	s->have_pending = 0;
	if (next && !s->o->kernel_names && (next->type == EV_COLL || next->type == EV_P2P) && next->src == p->src &&
	    next->rank == p->rank && next->stream == p->stream && next->ts == p->ts) {
		const char *kind = ev_coll_name(next->op);
		if (kind && ev_strtab_intern(s->st, kind, strlen(kind), &p->name) != EV_OK)
			return EV_ERR_NOMEM;
	}
	struct rankstate *rs = rank_of(s, p->src, p->rank);
	return rs ? add_comm(rs, p, next ? next->ts : p->ts) : EV_ERR_NOMEM;
}

static int on_record(struct state *s, const struct ev_rec *r)
{
	int rc = flush_pending(s, r);
	if (rc)
		return rc;
	if ((rc = close_until(s, r->ts, 0)) != EV_OK)
		return rc;
	if (r->type != EV_KERNEL)
		return EV_OK;
	struct rankstate *rs = rank_of(s, r->src, r->rank);
	if (!rs)
		return EV_ERR_NOMEM;
	int comm = is_comm(s, r);
	if (comm < 0)
		return EV_ERR_NOMEM;
	if (!rs->cov.started)
		rs->t0 = r->ts;
	double a = (double)ev_span(rs->t0, r->ts);
	double z = a + (double)ev_span(r->ts, ev_rec_end(r)); /* saturated end */
	s->nkernels++;
	s->ncomm += comm > 0;
	if (comm)
		ev_cover_add(&rs->cov, 1, a, z);
	else if (s->o->rules != EV_RULES_HTA || ev_hta_kind(str_of(s, r->name)) == EV_HTA_COMPUTATION)
		ev_cover_add(&rs->cov, 0, a, z);
	if (comm) {
		/* Held until the next record: it may be the collective's. */
		s->pending = *r;
		s->have_pending = 1;
		return EV_OK;
	}
	unsigned k;
	if ((rc = kclass(s, r, &k)) != EV_OK)
		return rc;
	if (!(s->o->class_mask & (1u << k)))
		return EV_OK;
	rs->kernels++;
	s->nselected++;
	if (rs->nopen == rs->capopen) {
		size_t cap = rs->capopen ? 2 * rs->capopen : 16;
		struct comp *no = realloc(rs->open, cap * sizeof *no);
		if (!no)
			return EV_ERR_NOMEM;
		rs->open = no;
		rs->capopen = cap;
	}
	struct comp *c = &rs->open[rs->nopen++];
	memset(c, 0, sizeof *c);
	c->rec = *r;
	c->end = ev_rec_end(r);
	c->seq = s->nseq++;
	if ((rc = heap_push(s, (struct hent){ c->end, (uint32_t)(rs - s->ranks), c->seq })) != EV_OK)
		return rc;
	prune_act(rs, r->ts);
	for (size_t i = 0; i < rs->nact; i++)
		intersect(c, rs->act[i].s, rs->act[i].e, rs->act[i].name);
	return EV_OK;
}

static int cmp_rank(const void *a, const void *b)
{
	const struct rankstate *x = a, *y = b;
	if (x->src != y->src)
		return x->src < y->src ? -1 : 1;
	return x->rank < y->rank ? -1 : x->rank > y->rank;
}

static int totals(struct state *s)
{
	static const char *const cols[] = {
		"src", "rank", "comm_us", "hidden_comm_us", "exposed_comm_us", "comp_comm_overlap_pct", "compute_kernels",
		"overlapped_kernels",
	};
	int rc = EV_OK;
	ev_table *t = NULL;
	if (s->nranks > 1)
		qsort(s->ranks, s->nranks, sizeof *s->ranks, cmp_rank);
	if (s->o->mode == M_SUMMARY && (rc = ev_table_open(&t, s->out, s->o->fmt, cols, 8)) != EV_OK)
		return rc;
	for (size_t i = 0; i < s->nranks && !rc; i++) {
		struct rankstate *rs = &s->ranks[i];
		ev_cover_finish(&rs->cov);
		double comm = ev_cover_measure(&rs->cov, 2, 0), hidden = ev_cover_measure(&rs->cov, 3, 0);
		double pct = comm > 0 ? 100.0 * hidden / comm : 0;
		if (s->o->mode == M_SUMMARY) {
			char b[16];
			rc = ev_table_str(t, src_label(s, rs->src, b, sizeof b));
			rc = rc ? rc : ev_table_u64(t, rs->rank);
			rc = rc ? rc : ev_table_f64(t, comm / 1e3);
			rc = rc ? rc : ev_table_f64(t, hidden / 1e3);
			rc = rc ? rc : ev_table_f64(t, (comm - hidden) / 1e3);
			rc = rc ? rc : ev_table_f64(t, pct);
			rc = rc ? rc : ev_table_u64(t, rs->kernels);
			rc = rc ? rc : ev_table_u64(t, rs->overlapped);
		} else if (s->o->mode == M_EV) {
			rc = ev_write_textf(s->w, "#meta overlap.src%u.rank%u.comm_ns=%.0f overlap.src%u.rank%u.hidden_ns=%.0f "
			                    "overlap.src%u.rank%u.comp_comm_overlap_pct=%.2f",
			                    rs->src, rs->rank, comm, rs->src, rs->rank, hidden, rs->src, rs->rank, pct);
		}
	}
	if (t) {
		int rc2 = ev_table_close(t);
		rc = rc ? rc : rc2;
	}
	return rc;
}

/* The first input's origin goes into the output header, before anything
 * else is written. */
static int header(struct state *s, ev_reader *r)
{
	if (s->o->mode != M_EV || s->header_done)
		return EV_OK;
	s->header_done = 1;
	const char *origin = ev_reader_header(r, "origin");
	return origin ? ev_writer_header(s->w, "origin", origin) : EV_OK;
}

/* An output failure, reported naming the output. */
static int out_error(struct state *s, int rc)
{
	if (rc == EV_ERR_PIPE)
		return rc;
	ev_cli_file_error(&s->o->cli, s->o->cli.output, rc);
	return EV_FILTER_REPORTED;
}

static int on_text(void *ctx, ev_reader *r, const char *line, size_t len)
{
	struct state *s = ctx;
	int rc = header(s, r);
	if (!rc && s->o->mode == M_EV)
		rc = ev_write_text(s->w, line, len);
	return rc ? out_error(s, rc) : EV_OK;
}

static int on_rec(void *ctx, ev_reader *r, struct ev_rec *rec)
{
	struct state *s = ctx;
	/* Order across the whole stream, not per input: overlap records
	 * are written in time order. */
	if (ev_order_check(&s->order, rec->ts) != EV_OK) {
		ev_cli_error(&s->o->cli, "%s: record %llu: out of order (ts %lld after %lld); sort with ev-merge --sort",
		             ev_reader_name(r), (unsigned long long)ev_reader_recno(r), (long long)rec->ts,
		             (long long)s->order.last_ts);
		return EV_FILTER_REPORTED;
	}
	int rc = header(s, r);
	if (!rc)
		rc = on_record(s, rec);
	if (!rc && s->o->mode == M_EV)
		rc = ev_write(s->w, rec);
	return rc ? out_error(s, rc) : EV_OK;
}

/* Never an empty or all-zero answer without a word on stderr. */
static void explain(const struct state *s)
{
	char cl[256];
	size_t w = 0;
	cl[0] = '\0';
	for (unsigned k = 0; k < 32; k++)
		if (s->o->class_mask & (1u << k) && ev_kclass_name(k))
			w += (size_t)snprintf(cl + w, w < sizeof cl ? sizeof cl - w : 0, "%s%s", w ? "," : "", ev_kclass_name(k));
	if (s->nkernels == 0)
		ev_cli_warn(&s->o->cli, "no kernels in the input: nothing to overlap");
	else if (s->nselected == 0)
		ev_cli_warn(&s->o->cli, "no compute kernel of class %s among %llu kernels: nothing to report (try --class=all)",
		            cl, (unsigned long long)s->nkernels);
	else if (s->ncomm == 0)
		ev_cli_warn(&s->o->cli, "no communication kernels among %llu kernels (--rules=%s): every overlap is 0",
		            (unsigned long long)s->nkernels, ev_rules_name(s->o->rules));
}

static int run(struct opts *o)
{
	static const char *const cols[] = {
		"src", "rank", "stream", "ts", "dur_us", "name", "sig", "comm_count", "comm_names", "max_overlap_pct",
		"max_overlap_name", "overlap_us", "overlap_pct",
	};
	struct state s;
	int status = 0, rc;
	memset(&s, 0, sizeof s);
	s.o = o;
	s.st = ev_strtab_new();
	s.meta = ev_meta_new();
	ev_map_init(&s.rank_idx);
	ev_map_init(&s.comm_cache);
	ev_map_init(&s.class_cache);
	if (!s.st || !s.meta) {
		status = ev_cli_error(&o->cli, "out of memory");
		goto done;
	}
	if (o->mode == M_EV) {
		if (ev_cli_check_binary_out(&o->cli)) {
			status = 1;
			goto done;
		}
		rc = ev_writer_open(&s.w, o->cli.output, s.st);
	} else {
		rc = ev_output_open(&s.out, o->cli.output);
		if (!rc && o->mode == M_TABLE)
			rc = ev_table_open(&s.t, s.out, o->fmt, cols, sizeof cols / sizeof cols[0]);
	}
	if (rc) {
		status = ev_cli_file_error(&o->cli, o->cli.output, rc);
		goto done;
	}
	struct ev_filter f = { 0, NULL, on_text, on_rec, NULL, NULL };
	status = ev_filter_run(&o->cli, o->inputs, (size_t)o->ninputs, s.st, s.meta, &f, &s);
	if (!status && (rc = flush_pending(&s, NULL)) == EV_OK && (rc = close_until(&s, 0, 1)) == EV_OK)
		rc = totals(&s);
	if (!status && !rc && !o->cli.quiet)
		explain(&s);
	if (!status && rc)
		status = ev_cli_file_error(&o->cli, o->cli.output, rc);
	if (!status && s.t) {
		rc = ev_table_close(s.t);
		s.t = NULL;
		if (rc)
			status = ev_cli_file_error(&o->cli, o->cli.output, rc);
	}
	if (!status) {
		rc = s.w ? ev_writer_close(s.w) : ev_output_close(s.out);
		s.w = NULL;
		s.out = NULL;
		if (rc)
			status = ev_cli_file_error(&o->cli, o->cli.output, rc);
	}
done:
	if (s.t) {
		int ignored = ev_table_close(s.t); /* already failing */
		(void)ignored;
	}
	ev_writer_abort(s.w);
	ev_output_abort(s.out);
	for (size_t i = 0; i < s.nranks; i++) {
		free(s.ranks[i].open);
		free(s.ranks[i].act);
	}
	free(s.ranks);
	free(s.heap);
	ev_map_free(&s.rank_idx);
	ev_map_free(&s.comm_cache);
	ev_map_free(&s.class_cache);
	ev_meta_free(s.meta);
	ev_strtab_free(s.st);
	return status;
}

/* Compute classes: "all" means every class but communication, which is
 * what the kernels are overlapped with. */
static int parse_classes(struct opts *o, const char *arg)
{
	unsigned m;
	if (ev_kclass_list_parse(arg, &m) != EV_OK)
		return -1;
	if (!strcmp(arg, "all"))
		m &= ~(1u << EV_KC_COMM);
	else if (m & (1u << EV_KC_COMM))
		return -1;
	o->class_mask = m;
	return 0;
}

int main(int argc, char **argv)
{
	static const struct option longopts[] = {
		EV_CLI_COMMON_LONG,
		{ "table", no_argument, NULL, 1 },
		{ "summary", no_argument, NULL, 2 },
		{ "class", required_argument, NULL, 3 },
		{ "rules", required_argument, NULL, 4 },
		{ "csv", no_argument, NULL, 5 },
		{ "json", no_argument, NULL, 6 },
		{ "md", no_argument, NULL, 7 },
		{ "tsv", no_argument, NULL, 8 },
		{ "kernel-names", no_argument, NULL, 9 },
		{ NULL, 0, NULL, 0 },
	};
	struct opts o;
	int c;
	memset(&o, 0, sizeof o);
	ev_cli_init(&o.cli, "ev-overlap");
	o.class_mask = 1u << EV_KC_GEMM;
	while ((c = getopt_long(argc, argv, EV_CLI_COMMON_SHORT, longopts, NULL)) != -1) {
		switch (ev_cli_common(&o.cli, c, optarg)) {
		case EV_CLI_HANDLED: continue;
		case EV_CLI_WANT_HELP: usage(stdout); return ev_cli_finish(&o.cli, 0);
		case EV_CLI_DONE: return ev_cli_finish(&o.cli, 0);
		default: break;
		}
		switch (c) {
		case 1: o.mode = M_TABLE; break;
		case 2: o.mode = M_SUMMARY; break;
		case 3:
			if (parse_classes(&o, optarg))
				return ev_cli_usage_error(&o.cli, "--class: unknown or communication class in '%s'", optarg);
			break;
		case 4: {
			/* In the order of enum ev_rules. */
			static const char *const words[] = { "tracelens", "tracelens-2025", "hta", NULL };
			unsigned w;
			int rc = ev_cli_word(&o.cli, "--rules", optarg, words, &w);
			if (rc)
				return rc;
			o.rules = (enum ev_rules)w;
			break;
		}
		case 5: o.fmt = EV_TABLE_CSV; break;
		case 6: o.fmt = EV_TABLE_JSON; break;
		case 7: o.fmt = EV_TABLE_MD; break;
		case 8: o.fmt = EV_TABLE_TSV; break;
		case 9: o.kernel_names = 1; break;
		default: return ev_cli_try_help(&o.cli);
		}
	}
	o.inputs = argv + optind;
	o.ninputs = optind < argc ? argc - optind : 0;
	return ev_cli_finish(&o.cli, run(&o));
}
