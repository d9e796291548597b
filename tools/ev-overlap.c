/* SPDX-License-Identifier: MIT */
/*
 * ev-overlap - which communication ran under each compute kernel.
 *
 * The front end of the overlap sweep in lib/analysis/overlap.c: options,
 * the input loop, and the output as an ev stream with overlap records, a
 * table per kernel or a summary per rank.
 */
#include <stdio.h>
#include <string.h>

#include "ev.h"

enum mode { M_EV, M_TABLE, M_SUMMARY };

struct opts {
	struct ev_cli cli;
	enum mode mode;
	enum ev_table_fmt fmt;
	struct ev_overlap_opts ov;
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
EV_CLI_HELP_HV
"\n"
"Table columns: src, rank, stream, ts (kernel start, ns), dur_us, name, sig,\n"
"comm_count, comm_names (up to 4, ';'-separated, '...' when more),\n"
"max_overlap_pct and max_overlap_name (the single largest overlap),\n"
"overlap_us (union) and overlap_pct (of the kernel's duration).\n"
"\n"
EV_CLI_HELP_EXIT("malformed, truncated or unordered input")
"\n"
"Example:\n"
"  ev-merge rank*.ev | ev-overlap --table | sort -t$'\\t' -k12,12gr | head\n", f);
}

struct state {
	struct opts *o;
	ev_strtab *st;
	ev_meta *meta;
	ev_writer *w;
	ev_output *out;
	ev_table *t;
	ev_overlap *ov;
	struct ev_order order;
	int header_done;
};

static const char *str_of(struct state *s, uint64_t id)
{
	const char *t = ev_strtab_get(s->st, id, NULL);
	return t ? t : "";
}

static const char *src_label(struct state *s, uint32_t src, char *buf, size_t n)
{
	const struct ev_src_info *si = ev_meta_src(s->meta, src);
	if (si && si->label && *si->label)
		return si->label;
	snprintf(buf, n, "%u", src);
	return buf;
}

/* A closed compute kernel: an overlap record at its end, or a table row. */
static int emit(void *ctx, const struct ev_overlap_kernel *k)
{
	struct state *s = ctx;
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
		o.bytes = k->union_ns;
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
	rc = rc ? rc : ev_table_f64(t, (double)k->union_ns / 1e3);
	rc = rc ? rc : ev_table_f64(t, dur > 0 ? 100.0 * (double)k->union_ns / dur : 0);
	return rc;
}

/* The per-rank totals: the summary table, or #meta lines at the end of
 * the stream. */
static int totals(struct state *s)
{
	static const char *const cols[] = {
		"src", "rank", "comm_us", "hidden_comm_us", "exposed_comm_us", "comp_comm_overlap_pct", "compute_kernels",
		"overlapped_kernels",
	};
	int rc = EV_OK;
	ev_table *t = NULL;
	size_t n;
	const struct ev_overlap_rank *ranks = ev_overlap_ranks(s->ov, &n);
	if (s->o->mode == M_SUMMARY && (rc = ev_table_open(&t, s->out, s->o->fmt, cols, 8)) != EV_OK)
		return rc;
	for (size_t i = 0; i < n && !rc; i++) {
		const struct ev_overlap_rank *rs = &ranks[i];
		double comm = rs->comm_ns, hidden = rs->hidden_ns;
		if (s->o->mode == M_SUMMARY) {
			char b[16];
			rc = ev_table_str(t, src_label(s, rs->src, b, sizeof b));
			rc = rc ? rc : ev_table_u64(t, rs->rank);
			rc = rc ? rc : ev_table_f64(t, comm / 1e3);
			rc = rc ? rc : ev_table_f64(t, hidden / 1e3);
			rc = rc ? rc : ev_table_f64(t, (comm - hidden) / 1e3);
			rc = rc ? rc : ev_table_f64(t, rs->overlap_pct);
			rc = rc ? rc : ev_table_u64(t, rs->kernels);
			rc = rc ? rc : ev_table_u64(t, rs->overlapped);
		} else if (s->o->mode == M_EV) {
			rc = ev_write_textf(s->w, "#meta overlap.src%u.rank%u.comm_ns=%.0f overlap.src%u.rank%u.hidden_ns=%.0f "
			                    "overlap.src%u.rank%u.comp_comm_overlap_pct=%.2f",
			                    rs->src, rs->rank, comm, rs->src, rs->rank, hidden, rs->src, rs->rank,
			                    rs->overlap_pct);
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
		ev_cli_order_error(&s->o->cli, ev_reader_name(r), ev_reader_recno(r), rec->ts, s->order.last_ts);
		return EV_FILTER_REPORTED;
	}
	int rc = header(s, r);
	if (!rc)
		rc = ev_overlap_add(s->ov, rec);
	if (!rc && s->o->mode == M_EV)
		rc = ev_write(s->w, rec);
	return rc ? out_error(s, rc) : EV_OK;
}

/* Never an empty or all-zero answer without a word on stderr. */
static void explain(const struct state *s)
{
	char cl[256];
	size_t w = 0;
	struct ev_overlap_counts n = ev_overlap_counts(s->ov);
	cl[0] = '\0';
	for (unsigned k = 0; k < 32; k++)
		if (s->o->ov.class_mask & (1u << k) && ev_kclass_name(k))
			w += (size_t)snprintf(cl + w, w < sizeof cl ? sizeof cl - w : 0, "%s%s", w ? "," : "", ev_kclass_name(k));
	if (n.kernels == 0)
		ev_cli_warn(&s->o->cli, "no kernels in the input: nothing to overlap");
	else if (n.selected == 0)
		ev_cli_warn(&s->o->cli, "no compute kernel of class %s among %llu kernels: nothing to report (try --class=all)",
		            cl, (unsigned long long)n.kernels);
	else if (n.comm == 0)
		ev_cli_warn(&s->o->cli, "no communication kernels among %llu kernels (--rules=%s): every overlap is 0",
		            (unsigned long long)n.kernels, ev_rules_name(s->o->ov.rules));
}

static int run(struct opts *o, char **inputs, int ninputs)
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
	if (!s.st || !s.meta || ev_overlap_new(&s.ov, s.st, &o->ov, emit, &s) != EV_OK) {
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
	status = ev_filter_run(&o->cli, inputs, (size_t)ninputs, s.st, s.meta, &f, &s);
	if (!status && (rc = ev_overlap_finish(s.ov)) == EV_OK)
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
	if (!status)
		status = ev_cli_close_ev_output(&o->cli, &s.w, &s.out);
done:
	if (s.t) {
		int ignored = ev_table_close(s.t); /* already failing */
		(void)ignored;
	}
	ev_writer_abort(s.w);
	ev_output_abort(s.out);
	ev_overlap_free(s.ov);
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
	o->ov.class_mask = m;
	return 0;
}

enum {
	OPT_TABLE = 256, OPT_SUMMARY, OPT_CLASS, OPT_RULES, OPT_CSV, OPT_JSON, OPT_MD, OPT_TSV, OPT_KERNEL_NAMES
};

static const struct option longopts[] = {
	EV_CLI_COMMON_LONG,
	{ "table", no_argument, NULL, OPT_TABLE },
	{ "summary", no_argument, NULL, OPT_SUMMARY },
	{ "class", required_argument, NULL, OPT_CLASS },
	{ "rules", required_argument, NULL, OPT_RULES },
	{ "csv", no_argument, NULL, OPT_CSV },
	{ "json", no_argument, NULL, OPT_JSON },
	{ "md", no_argument, NULL, OPT_MD },
	{ "tsv", no_argument, NULL, OPT_TSV },
	{ "kernel-names", no_argument, NULL, OPT_KERNEL_NAMES },
	{ NULL, 0, NULL, 0 },
};

static int on_opt(void *ctx, int code, const char *arg)
{
	/* In the order of enum ev_rules. */
	static const char *const rules[] = { "tracelens", "tracelens-2025", "hta", NULL };
	struct opts *o = ctx;
	unsigned w;
	int rc;
	switch (code) {
	case OPT_TABLE: o->mode = M_TABLE; break;
	case OPT_SUMMARY: o->mode = M_SUMMARY; break;
	case OPT_CLASS:
		if (parse_classes(o, arg))
			return ev_cli_usage_error(&o->cli, "--class: unknown or communication class in '%s'", arg);
		break;
	case OPT_RULES:
		if ((rc = ev_cli_word(&o->cli, "--rules", arg, rules, &w)) != 0)
			return rc;
		o->ov.rules = (enum ev_rules)w;
		break;
	case OPT_CSV: o->fmt = EV_TABLE_CSV; break;
	case OPT_JSON: o->fmt = EV_TABLE_JSON; break;
	case OPT_MD: o->fmt = EV_TABLE_MD; break;
	case OPT_TSV: o->fmt = EV_TABLE_TSV; break;
	case OPT_KERNEL_NAMES: o->ov.kernel_names = 1; break;
	}
	return 0;
}

static const struct ev_cli_opts options = { "", longopts, on_opt, usage };

int main(int argc, char **argv)
{
	struct opts o;
	int first;
	memset(&o, 0, sizeof o);
	ev_cli_init(&o.cli, "ev-overlap");
	o.ov.class_mask = 1u << EV_KC_GEMM;
	int status = ev_cli_getopt(&o.cli, argc, argv, &options, &o, &first);
	if (status == EV_CLI_RUN)
		status = run(&o, argv + first, argc - first);
	return ev_cli_finish(&o.cli, status);
}
