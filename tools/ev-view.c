/* SPDX-License-Identifier: MIT */
/*
 * ev-view - decode ev streams to TSV, CSV or JSON Lines, encode TSV back, filter
 *
 * The TSV form is lossless: every text line is kept verbatim and every
 * record field has a column, so `ev-view x.ev | ev-view --pack` gives back
 * the same bytes and users can edit streams with awk in between.
 */
#include <regex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ev.h"
#include "ev/tsv.h"

enum format { FMT_TSV, FMT_CSV, FMT_JSONL, FMT_EV };

struct range { uint32_t lo, hi; };

struct opts {
	struct ev_cli cli;
	enum format format;
	int pack, no_meta, no_header;
	struct ev_rowfmt row;       /* columns and text format of rows */
	uint32_t type_mask;          /* bit per record type; 0 = all */
	struct range *ranks, *srcs;
	size_t nranks, nsrcs;
	int cols_given;              /* --columns */
	const char *name_re;
	regex_t re;
	int have_re;                 /* re is compiled */
	int64_t from, to;
	int have_from, have_to;
	int any_filter;
	char **inputs;
	int ninputs;
};

static void usage(FILE *f)
{
	fputs(
"Usage: ev-view [options] [FILE...]\n"
"Decode ev streams to text (TSV, CSV, JSON Lines) or filter them, and encode\n"
"TSV back into an ev stream.  FILE defaults to standard input; several FILEs\n"
"are read one after the other; gzip input is detected.\n"
"\n"
"Output:\n"
"      --tsv              TSV with a header row of column names [default]\n"
"      --csv              CSV (RFC 4180), header row, no text lines\n"
"      --jsonl            one JSON object per record, no text lines\n"
"      --ev               an ev stream (filtering only)\n"
"  -p, --pack             read TSV as written by ev-view (text lines, header\n"
"                         row, records) and write an ev stream\n"
"  -c, --columns=LIST     text output columns, e.g. type,rank,ts,dur,name\n"
"  -M, --no-meta          TSV: leave out text lines (#ev, #str, #rank, ...)\n"
"  -H, --no-header        TSV/CSV: leave out the header row\n"
"      --ids              print string ids (name_id, sig_id) instead of texts\n"
"  -o, --output=FILE      write to FILE (via a temporary name) [stdout]\n"
"  -f, --force            write binary ev output to a terminal\n"
"  -q, --quiet            no progress line or warnings\n"
"\n"
"Filters (records must pass all of them; text lines always pass):\n"
"  -t, --type=LIST        record types, e.g. kernel,coll\n"
"  -r, --rank=LIST        ranks, e.g. 0,2,4-7\n"
"  -s, --src=LIST         sources (#src numbers), e.g. 0-1\n"
"  -n, --name=REGEX       name matches a POSIX extended regular expression\n"
"      --from=NS          start time at or after NS\n"
"      --to=NS            start time before NS\n"
"\n"
EV_CLI_HELP_HV
"\n"
"Columns: type op rank stream ts dur bytes name sig comm seq peer id channel\n"
"step aux algo proto dtype redop flags src nthreads chunk_steps slice_steps\n"
"step_size.  Enumerations print as words (docs/FORMAT.md); 0 prints as '-'\n"
"for algo, proto, dtype, redop and flags.  With --pack, missing columns are 0\n"
"(peer -1) and columns may come in any order.\n"
"\n"
EV_CLI_HELP_EXIT("bad or truncated input, write error")
"\n"
"Example:\n"
"  ev-view --type=kernel --rank=0 -c ts,dur,name run.ev | sort -t$'\\t' -k2,2nr | head\n"
"  ev-view run.ev | awk -F'\\t' '/^#/ || $1 == \"type\" || $3 != 7' | ev-view --pack -o no7.ev\n",
	f);
}

/* "0,2,4-7" into ranges. */
static int parse_ranges(const char *s, struct range **out, size_t *n)
{
	char *copy = strdup(s), *save = NULL;
	if (!copy)
		return EV_ERR_NOMEM;
	for (char *tok = strtok_r(copy, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		struct range r;
		char *dash = strchr(tok, '-');
		if (dash)
			*dash = '\0';
		if (ev_parse_u32(tok, &r.lo) || (dash ? ev_parse_u32(dash + 1, &r.hi) : (r.hi = r.lo, 0)) ||
		    r.hi < r.lo) {
			free(copy);
			return EV_ERR_ARG;
		}
		struct range *nr = realloc(*out, (*n + 1) * sizeof *nr);
		if (!nr) {
			free(copy);
			return EV_ERR_NOMEM;
		}
		*out = nr;
		nr[(*n)++] = r;
	}
	free(copy);
	return *n ? EV_OK : EV_ERR_ARG;
}

static int in_ranges(const struct range *r, size_t n, uint32_t v)
{
	for (size_t i = 0; i < n; i++)
		if (v >= r[i].lo && v <= r[i].hi)
			return 1;
	return 0;
}

static int parse_columns(struct opts *o, const char *s)
{
	o->row.ncols = 0;
	while (*s) {
		const char *e = strchr(s, ',');
		size_t len = e ? (size_t)(e - s) : strlen(s);
		int c = ev_col_index(s, len);
		if (c < 0 || c >= EV_NCOLS || o->row.ncols == EV_NCOLS)
			return EV_ERR_ARG;
		o->row.cols[o->row.ncols++] = c;
		if (!e)
			break;
		s = e + 1;
	}
	return o->row.ncols ? EV_OK : EV_ERR_ARG;
}

/* ---- filtering ------------------------------------------------------ */

struct filter_state {
	struct ev_map name_ok; /* name id -> 1 match, 2 no match */
};

static int keep(const struct opts *o, struct filter_state *fs, const struct ev_rec *r, const ev_strtab *st)
{
	if (!o->any_filter)
		return 1;
	if (o->type_mask && !(o->type_mask & (1u << r->type)))
		return 0;
	if (o->nranks && !in_ranges(o->ranks, o->nranks, r->rank))
		return 0;
	if (o->nsrcs && !in_ranges(o->srcs, o->nsrcs, r->src))
		return 0;
	if (o->have_from && r->ts < o->from)
		return 0;
	if (o->have_to && r->ts >= o->to)
		return 0;
	if (o->name_re) {
		uint64_t key = r->name ? r->name : 1; /* 1: stands for the empty name */
		uint64_t *v = ev_map_get(&fs->name_ok, key);
		if (!v) {
			const char *text = ev_strtab_get(st, r->name, NULL);
			uint64_t res = regexec(&o->re, text ? text : "", 0, NULL, 0) == 0 ? 1 : 2;
			if (ev_map_put(&fs->name_ok, key, res))
				return -1;
			return res == 1;
		}
		return *v == 1;
	}
	return 1;
}

/* ---- text output ---------------------------------------------------- */

/* ---- decoding ------------------------------------------------------- */

struct sink {
	ev_output *out;   /* text formats */
	ev_writer *w;     /* FMT_EV */
};

/* The driver's callbacks (ev_filter_run). */
struct view_ctx {
	struct opts *o;
	struct sink *sk;
	struct filter_state *fs;
	int copy; /* every record goes out as it came (copy_rec, copy_run) */
};

static int output_failed(struct view_ctx *v, int rc)
{
	ev_cli_file_error(&v->o->cli, v->o->cli.output, rc);
	return EV_FILTER_REPORTED;
}

static int view_text(void *ctx, ev_reader *r, const char *line, size_t len)
{
	struct view_ctx *v = ctx;
	struct sink *sk = v->sk;
	int rc = EV_OK;
	(void)r;
	if (sk->w) {
		/* Segments are kept; strings are re-emitted as records need them,
		 * or, when every record is copied, go out as they come: runs of
		 * records (copy_run) are written as they are, their strings
		 * already there. */
		if (len >= 4 && memcmp(line, "#str", 4) == 0 && (len == 4 || line[4] == ' ')) {
			if (v->copy)
				rc = ev_write_line_raw(sk->w, line, len);
			return rc ? output_failed(v, rc) : EV_OK;
		}
		if ((len >= 3 && memcmp(line, "#ev", 3) == 0) || (len >= 4 && memcmp(line, "#end", 4) == 0))
			rc = ev_write_line_raw(sk->w, line, len);
		else
			rc = ev_write_text(sk->w, line, len);
	} else if (v->o->format == FMT_TSV && !v->o->no_meta) {
		rc = ev_output_write(sk->out, line, len);
		if (!rc)
			rc = ev_output_putc(sk->out, '\n');
	}
	return rc ? output_failed(v, rc) : EV_OK;
}

static int view_rec(void *ctx, ev_reader *r, struct ev_rec *rec)
{
	struct view_ctx *v = ctx;
	int rc, k = keep(v->o, v->fs, rec, ev_reader_strtab(r));
	if (k < 0)
		return EV_ERR_NOMEM;
	if (!k)
		return EV_OK;
	if (v->sk->w) {
		const char *line;
		size_t len;
		ev_reader_record_line(r, &line, &len);
		rc = ev_write_escaped(v->sk->w, rec, line, len);
	} else {
		rc = ev_row_write(&v->o->row, v->sk->out, rec, ev_reader_strtab(r));
	}
	return rc ? output_failed(v, rc) : EV_OK;
}

/* ev to ev with no filter: every record goes out as it came (the stage of
 * a pipeline, where each call on the way costs). */
static int copy_rec(void *ctx, ev_reader *r, struct ev_rec *rec)
{
	struct view_ctx *v = ctx;
	const char *line;
	size_t len;
	ev_reader_record_line(r, &line, &len);
	int rc = ev_write_escaped(v->sk->w, rec, line, len);
	return rc ? output_failed(v, rc) : EV_OK;
}

/* The same for a run of records (ev_read_run): their lines as they are. */
static int copy_run(void *ctx, ev_reader *r, const char *span, size_t len, uint64_t n)
{
	struct view_ctx *v = ctx;
	(void)r;
	int rc = ev_write_run(v->sk->w, span, len, n);
	return rc ? output_failed(v, rc) : EV_OK;
}

/* ---- packing TSV ---------------------------------------------------- */

static int pack_one(struct opts *o, ev_input *in, ev_writer *w, struct ev_tsv_packer *pk, ev_strtab *st,
                    struct filter_state *fs, uint64_t *nrec)
{
	const char *cline;
	size_t len;
	int rc;
	const char *name = ev_input_name(in);
	char *buf = NULL;
	size_t cap = 0;
	for (;;) {
		rc = ev_input_line(in, &cline, &len);
		unsigned long long lineno = (unsigned long long)ev_input_lineno(in);
		if (rc == EV_EOF)
			break;
		if (rc == EV_ERR_TRUNCATED) {
			rc = ev_cli_error(&o->cli, "%s: line %llu: last line has no newline (truncated input)", name, lineno);
			goto out;
		}
		if (rc < 0) {
			rc = ev_cli_input_error(&o->cli, name, rc);
			goto out;
		}
		if (len + 1 > cap) {
			cap = len + 1 > 4096 ? len + 1 : 4096;
			free(buf);
			buf = malloc(cap);
			if (!buf) {
				rc = ev_cli_error(&o->cli, "out of memory");
				goto out;
			}
		}
		memcpy(buf, cline, len);
		struct ev_rec r;
		rc = ev_tsv_pack_line(pk, buf, len, &r, st);
		if (rc == EV_TEXT) {
			rc = ev_write_line_raw(w, buf, len);
			if (rc == EV_ERR_FORMAT || rc == EV_ERR_VERSION || rc == EV_ERR_COLLISION) {
				rc = ev_cli_error(&o->cli, "%s: line %llu: %s", name, lineno, ev_strerror(rc));
				goto out;
			}
			if (rc) {
				rc = ev_cli_file_error(&o->cli, o->cli.output, rc);
				goto out;
			}
			continue;
		}
		if (rc < 0) {
			rc = ev_cli_error(&o->cli, "%s: line %llu: %s", name, lineno, pk->err);
			goto out;
		}
		if (rc != EV_REC)
			continue; /* a header row */
		int k = keep(o, fs, &r, st);
		if (k < 0) {
			rc = ev_cli_error(&o->cli, "out of memory");
			goto out;
		}
		if (!k)
			continue;
		if ((rc = ev_write(w, &r)) != EV_OK) {
			rc = ev_cli_file_error(&o->cli, o->cli.output, rc);
			goto out;
		}
		if ((++*nrec & 0xFFFF) == 0)
			ev_cli_progress(&o->cli, *nrec, ev_input_offset(in));
	}
	rc = 0;
out:
	free(buf);
	return rc;
}

/* ---- main ----------------------------------------------------------- */

static int run(struct opts *o)
{
	int status = 0, rc;
	uint64_t nrec = 0;
	ev_strtab *st = ev_strtab_new();
	ev_meta *meta = ev_meta_new();
	struct filter_state fs;
	struct sink sk = { NULL, NULL };
	ev_map_init(&fs.name_ok);
	if (!st || !meta) {
		status = ev_cli_error(&o->cli, "out of memory");
		goto done;
	}
	int binary = o->pack || o->format == FMT_EV;
	if (binary && ev_cli_check_binary_out(&o->cli)) {
		status = 1;
		goto done;
	}
	rc = binary ? ev_writer_open(&sk.w, o->cli.output, st) : ev_output_open(&sk.out, o->cli.output);
	if (rc) {
		status = ev_cli_file_error(&o->cli, o->cli.output, rc);
		goto done;
	}
	if (!binary && !o->no_header && o->format != FMT_JSONL && (rc = ev_row_header(&o->row, sk.out)) != EV_OK) {
		status = ev_cli_file_error(&o->cli, o->cli.output, rc);
		goto done;
	}
	struct ev_tsv_packer pk;
	ev_tsv_packer_init(&pk);
	if (o->pack) {
		status = ev_cli_note_inputs(&o->cli, o->inputs, (size_t)o->ninputs);
		for (int i = 0; i < o->ninputs && !status; i++) {
			ev_input *in;
			if ((rc = ev_input_open(&in, o->inputs[i])) != EV_OK) {
				status = ev_cli_input_error(&o->cli, o->inputs[i], rc);
				break;
			}
			status = pack_one(o, in, sk.w, &pk, st, &fs, &nrec);
			ev_input_close(in);
		}
	} else {
		struct view_ctx v = { o, &sk, &fs, 0 };
		struct ev_filter f = { EV_FILTER_RAW_TEXT, NULL, view_text, view_rec, NULL, NULL };
		/* Records go out as they came: no need to decode every field. */
		if (sk.w && !o->any_filter) {
			f.flags |= EV_FILTER_LAZY;
			f.rec = copy_rec;
			f.run = copy_run;
			v.copy = 1;
		}
		status = ev_filter_run(&o->cli, o->inputs, (size_t)o->ninputs, st, meta, &f, &v);
	}
	ev_cli_progress_done(&o->cli);
	if (!status)
		status = ev_cli_close_ev_output(&o->cli, &sk.w, &sk.out);
done:
	ev_writer_abort(sk.w);
	ev_output_abort(sk.out);
	ev_map_free(&fs.name_ok);
	ev_strtab_free(st);
	ev_meta_free(meta);
	return status;
}

enum { OPT_TSV = 256, OPT_CSV, OPT_JSONL, OPT_EV, OPT_IDS, OPT_FROM, OPT_TO };

static const struct option longopts[] = {
	EV_CLI_COMMON_LONG,
	{ "tsv", no_argument, NULL, OPT_TSV },
	{ "csv", no_argument, NULL, OPT_CSV },
	{ "jsonl", no_argument, NULL, OPT_JSONL },
	{ "ev", no_argument, NULL, OPT_EV },
	{ "ids", no_argument, NULL, OPT_IDS },
	{ "from", required_argument, NULL, OPT_FROM },
	{ "to", required_argument, NULL, OPT_TO },
	{ "pack", no_argument, NULL, 'p' },
	{ "columns", required_argument, NULL, 'c' },
	{ "no-meta", no_argument, NULL, 'M' },
	{ "no-header", no_argument, NULL, 'H' },
	{ "type", required_argument, NULL, 't' },
	{ "rank", required_argument, NULL, 'r' },
	{ "src", required_argument, NULL, 's' },
	{ "name", required_argument, NULL, 'n' },
	{ NULL, 0, NULL, 0 },
};

/* --type: a comma list of record types into the mask. */
static int parse_types(struct opts *o, const char *arg)
{
	char *copy = strdup(arg), *save = NULL;
	if (!copy)
		return ev_cli_error(&o->cli, "out of memory");
	for (char *tok = strtok_r(copy, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		unsigned v;
		if (ev_type_parse(tok, &v)) {
			/* The message names the word before its buffer goes. */
			int rc = ev_cli_usage_error(&o->cli, "--type: unknown record type '%s'", tok);
			free(copy);
			return rc;
		}
		o->type_mask |= 1u << v;
	}
	free(copy);
	return 0;
}

static int on_opt(void *ctx, int code, const char *arg)
{
	struct opts *o = ctx;
	switch (code) {
	case OPT_TSV: o->format = FMT_TSV; break;
	case OPT_CSV: o->format = FMT_CSV; break;
	case OPT_JSONL: o->format = FMT_JSONL; break;
	case OPT_EV: o->format = FMT_EV; break;
	case OPT_IDS: o->row.ids = 1; break;
	case OPT_FROM:
		if (ev_parse_i64(arg, &o->from))
			return ev_cli_usage_error(&o->cli, "--from: not a time in ns: '%s'", arg);
		o->have_from = 1;
		break;
	case OPT_TO:
		if (ev_parse_i64(arg, &o->to))
			return ev_cli_usage_error(&o->cli, "--to: not a time in ns: '%s'", arg);
		o->have_to = 1;
		break;
	case 'p': o->pack = 1; break;
	case 'c':
		if (parse_columns(o, arg))
			return ev_cli_usage_error(&o->cli, "--columns: unknown column in '%s'", arg);
		o->cols_given = 1;
		break;
	case 'M': o->no_meta = 1; break;
	case 'H': o->no_header = 1; break;
	case 't': return parse_types(o, arg);
	case 'r':
		if (parse_ranges(arg, &o->ranks, &o->nranks))
			return ev_cli_usage_error(&o->cli, "--rank: expected a list like 0,2,4-7, got '%s'", arg);
		break;
	case 's':
		if (parse_ranges(arg, &o->srcs, &o->nsrcs))
			return ev_cli_usage_error(&o->cli, "--src: expected a list like 0,2-3, got '%s'", arg);
		break;
	case 'n': o->name_re = arg; break;
	}
	return 0;
}

static const struct ev_cli_opts options = { "pc:MHt:r:s:n:", longopts, on_opt, usage };

/* What the options say together, and the inputs; then the run.  Returns
 * the exit status. */
static int start(struct opts *o, char **inputs, int ninputs)
{
	static char *stdin_only[] = { (char *)"-" };
	if (o->pack && o->format != FMT_TSV)
		return ev_cli_usage_error(&o->cli, "--pack reads TSV and writes ev; it takes no output format");
	if ((o->pack || o->format == FMT_EV) && o->cols_given)
		return ev_cli_usage_error(&o->cli, "--columns applies to text output only");
	if (o->name_re) {
		int e = regcomp(&o->re, o->name_re, REG_EXTENDED | REG_NOSUB);
		if (e) {
			char msg[128];
			regerror(e, &o->re, msg, sizeof msg);
			return ev_cli_usage_error(&o->cli, "--name: %s", msg);
		}
		o->have_re = 1;
	}
	o->any_filter = o->type_mask || o->nranks || o->nsrcs || o->name_re || o->have_from || o->have_to;
	o->inputs = ninputs ? inputs : stdin_only;
	o->ninputs = ninputs ? ninputs : 1;
	o->row.fmt = o->format == FMT_CSV ? EV_ROW_CSV : o->format == FMT_JSONL ? EV_ROW_JSONL : EV_ROW_TSV;
	return run(o);
}

int main(int argc, char **argv)
{
	struct opts o;
	int first;
	memset(&o, 0, sizeof o);
	ev_cli_init(&o.cli, "ev-view");
	for (int i = 0; i < EV_NCOLS; i++)
		o.row.cols[i] = i;
	o.row.ncols = EV_NCOLS;
	int status = ev_cli_getopt(&o.cli, argc, argv, &options, &o, &first);
	if (status == EV_CLI_RUN)
		status = start(&o, argv + first, argc - first);
	if (o.have_re)
		regfree(&o.re);
	free(o.ranks);
	free(o.srcs);
	return ev_cli_finish(&o.cli, status);
}
