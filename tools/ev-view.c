/* SPDX-License-Identifier: MIT */
/*
 * ev-view - decode ev streams to TSV, CSV or JSON Lines, encode TSV back, filter
 *
 * The TSV form is lossless: every text line is kept verbatim and every
 * record field has a column, so `ev-view x.ev | ev-view --pack` gives back
 * the same bytes and users can edit streams with awk in between.
 */
#include <getopt.h>
#include <regex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ev.h"

enum format { FMT_TSV, FMT_CSV, FMT_JSONL, FMT_EV };

/* Record fields in column order; the TSV header row names them. */
enum col {
	C_TYPE, C_OP, C_RANK, C_STREAM, C_TS, C_DUR, C_BYTES, C_NAME, C_SIG, C_COMM,
	C_SEQ, C_PEER, C_ID, C_CHANNEL, C_STEP, C_AUX, C_ALGO, C_PROTO, C_DTYPE,
	C_REDOP, C_FLAGS, C_SRC, C_NTHREADS, C_CHUNK_STEPS, C_SLICE_STEPS, C_STEP_SIZE,
	NCOLS
};
static const char *const col_names[NCOLS] = {
	"type", "op", "rank", "stream", "ts", "dur", "bytes", "name", "sig", "comm",
	"seq", "peer", "id", "channel", "step", "aux", "algo", "proto", "dtype",
	"redop", "flags", "src", "nthreads", "chunk_steps", "slice_steps", "step_size",
};

struct range { uint32_t lo, hi; };

struct opts {
	struct ev_cli cli;
	enum format format;
	int pack, no_meta, no_header, ids;
	int cols[NCOLS], ncols;
	uint32_t type_mask;          /* bit per record type; 0 = all */
	struct range *ranks, *srcs;
	size_t nranks, nsrcs;
	const char *name_re;
	regex_t re;
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
"  -h, --help             show this help and exit\n"
"  -V, --version          show version and exit\n"
"\n"
"Columns: type op rank stream ts dur bytes name sig comm seq peer id channel\n"
"step aux algo proto dtype redop flags src nthreads chunk_steps slice_steps\n"
"step_size.  Enumerations print as words (docs/FORMAT.md); 0 prints as '-'\n"
"for algo, proto, dtype, redop and flags.  With --pack, missing columns are 0\n"
"(peer -1) and columns may come in any order.\n"
"\n"
"Exit status:\n"
"  0  success\n"
"  1  data or I/O error (bad or truncated input, write error)\n"
"  2  usage error\n"
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

static int col_index(const char *name, size_t len)
{
	for (int i = 0; i < NCOLS; i++)
		if (strlen(col_names[i]) == len && memcmp(col_names[i], name, len) == 0)
			return i;
	/* --ids output names the string columns name_id and sig_id. */
	if (len == 7 && memcmp(name, "name_id", 7) == 0)
		return C_NAME + 100;
	if (len == 6 && memcmp(name, "sig_id", 6) == 0)
		return C_SIG + 100;
	return -1;
}

static int parse_columns(struct opts *o, const char *s)
{
	o->ncols = 0;
	while (*s) {
		const char *e = strchr(s, ',');
		size_t len = e ? (size_t)(e - s) : strlen(s);
		int c = col_index(s, len);
		if (c < 0 || c >= 100 || o->ncols == NCOLS)
			return EV_ERR_ARG;
		o->cols[o->ncols++] = c;
		if (!e)
			break;
		s = e + 1;
	}
	return o->ncols ? EV_OK : EV_ERR_ARG;
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

static char *put_u64(char *p, uint64_t v)
{
	char tmp[24];
	int n = 0;
	do {
		tmp[n++] = (char)('0' + v % 10);
		v /= 10;
	} while (v);
	while (n)
		*p++ = tmp[--n];
	return p;
}

static char *put_i64(char *p, int64_t v)
{
	if (v < 0) {
		*p++ = '-';
		return put_u64(p, (uint64_t)0 - (uint64_t)v);
	}
	return put_u64(p, (uint64_t)v);
}

static char *put_str(char *p, const char *s)
{
	size_t n = strlen(s);
	memcpy(p, s, n);
	return p + n;
}

static char *put_enum(char *p, const char *name, unsigned v, int dash_zero)
{
	if (dash_zero && v == 0)
		return put_str(p, "-");
	return name ? put_str(p, name) : put_u64(p, v);
}

static char *put_hex(char *p, uint64_t v)
{
	static const char hex[] = "0123456789abcdef";
	for (int i = 15; i >= 0; i--)
		*p++ = hex[(v >> (i * 4)) & 15];
	return p;
}

/* Text of a string field, escaped for the output format. */
static char *put_text(char *p, enum format f, const char *s, size_t len)
{
	if (f == FMT_TSV)
		return p + ev_text_escape(s, len, p, 2 * len + 1);
	if (f == FMT_CSV) {
		int quote = len && (memchr(s, ',', len) || memchr(s, '"', len) || memchr(s, '\n', len) ||
		                    memchr(s, '\r', len));
		if (quote)
			*p++ = '"';
		for (size_t i = 0; i < len; i++) {
			if (s[i] == '"')
				*p++ = '"';
			*p++ = s[i];
		}
		if (quote)
			*p++ = '"';
		return p;
	}
	return p + ev_json_escape(s, len, p, 6 * len + 3);
}

/* Worst-case bytes for one formatted field besides strings. */
#define FIELD_MAX 64

static int write_row(struct opts *o, ev_output *out, const struct ev_rec *r, const ev_strtab *st)
{
	size_t nlen = 0, slen = 0;
	const char *name = ev_strtab_get(st, r->name, &nlen), *sig = ev_strtab_get(st, r->sig, &slen);
	if (!name || !sig)
		return EV_ERR_NOSTR;
	size_t need = (size_t)o->ncols * (FIELD_MAX + 16) + 6 * (nlen + slen) + 16;
	char *start = ev_output_reserve(out, need), *p = start;
	char flags[160];
	if (!p) {
		int rc = ev_output_flush(out);
		return rc ? rc : EV_ERR_NOMEM;
	}
	char sep = o->format == FMT_CSV ? ',' : '\t';
	if (o->format == FMT_JSONL)
		*p++ = '{';
	for (int i = 0; i < o->ncols; i++) {
		int c = o->cols[i];
		if (o->format == FMT_JSONL) {
			if (i)
				*p++ = ',';
			*p++ = '"';
			p = put_str(p, col_names[c]);
			if (o->ids && (c == C_NAME || c == C_SIG))
				p = put_str(p, "_id");
			*p++ = '"';
			*p++ = ':';
		} else if (i) {
			*p++ = sep;
		}
		/* JSON: enum words and texts are strings, numbers are numbers. */
		int q = o->format == FMT_JSONL &&
		        (c == C_TYPE || c == C_OP || c == C_ALGO || c == C_PROTO || c == C_DTYPE ||
		         c == C_REDOP || c == C_FLAGS || (o->ids && (c == C_NAME || c == C_SIG)));
		if (q)
			*p++ = '"';
		switch (c) {
		case C_TYPE: p = put_enum(p, ev_type_name(r->type), r->type, 0); break;
		case C_OP: p = put_enum(p, ev_op_name(r->type, r->op), r->op, 0); break;
		case C_RANK: p = put_u64(p, r->rank); break;
		case C_STREAM: p = put_u64(p, r->stream); break;
		case C_TS: p = put_i64(p, r->ts); break;
		case C_DUR: p = put_u64(p, r->dur); break;
		case C_BYTES: p = put_u64(p, r->bytes); break;
		case C_NAME:
			p = o->ids ? put_hex(p, r->name) : put_text(p, o->format, name, nlen);
			break;
		case C_SIG:
			p = o->ids ? put_hex(p, r->sig) : put_text(p, o->format, sig, slen);
			break;
		case C_COMM: p = put_u64(p, r->comm); break;
		case C_SEQ: p = put_u64(p, r->seq); break;
		case C_PEER: p = put_i64(p, r->peer); break;
		case C_ID: p = put_u64(p, r->id); break;
		case C_CHANNEL: p = put_u64(p, r->channel); break;
		case C_STEP: p = put_u64(p, r->step); break;
		case C_AUX: p = put_u64(p, r->aux); break;
		case C_ALGO: p = put_enum(p, ev_algo_name(r->algo), r->algo, 1); break;
		case C_PROTO: p = put_enum(p, ev_proto_name(r->proto), r->proto, 1); break;
		case C_DTYPE: p = put_enum(p, ev_dtype_name(r->dtype), r->dtype, 1); break;
		case C_REDOP: p = put_enum(p, ev_redop_name(r->redop), r->redop, 1); break;
		case C_FLAGS:
			ev_flags_format(r->flags, flags, sizeof flags);
			p = put_str(p, *flags ? flags : "-");
			break;
		case C_SRC: p = put_u64(p, r->src); break;
		case C_NTHREADS: p = put_u64(p, r->nthreads); break;
		case C_CHUNK_STEPS: p = put_u64(p, r->chunk_steps); break;
		case C_SLICE_STEPS: p = put_u64(p, r->slice_steps); break;
		case C_STEP_SIZE: p = put_u64(p, r->step_size); break;
		default: break;
		}
		if (q)
			*p++ = '"';
	}
	if (o->format == FMT_JSONL)
		*p++ = '}';
	*p++ = '\n';
	ev_output_commit(out, (size_t)(p - start));
	return EV_OK;
}

static int write_header_row(const struct opts *o, ev_output *out)
{
	int rc = EV_OK;
	for (int i = 0; i < o->ncols && !rc; i++) {
		int c = o->cols[i];
		if (i)
			rc = ev_output_putc(out, o->format == FMT_CSV ? ',' : '\t');
		if (!rc)
			rc = ev_output_printf(out, "%s%s", col_names[c], o->ids && (c == C_NAME || c == C_SIG) ? "_id" : "");
	}
	return rc ? rc : ev_output_putc(out, '\n');
}

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
		/* Segments are kept; strings are re-emitted as records need them. */
		if (len >= 4 && memcmp(line, "#str", 4) == 0)
			return EV_OK;
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
		rc = write_row(v->o, v->sk->out, rec, ev_reader_strtab(r));
	}
	return rc ? output_failed(v, rc) : EV_OK;
}

/* ---- packing TSV ---------------------------------------------------- */

struct packer {
	int map[NCOLS + 2]; /* column position -> field */
	int ncols;
	int have_header;
	char **field;
	size_t field_cap;
};

/* A row whose fields are all column names is a header row: a data row
 * cannot be one, because its type field must name a record type. */
static int is_header_row(const char *line, size_t len)
{
	size_t i = 0;
	while (i <= len) {
		size_t j = i;
		while (j < len && line[j] != '\t')
			j++;
		if (col_index(line + i, j - i) < 0)
			return 0;
		i = j + 1;
	}
	return 1;
}

static int parse_header_row(struct packer *pk, char *line, size_t len, char *err, size_t errn)
{
	pk->ncols = 0;
	size_t i = 0;
	while (i <= len) {
		size_t j = i;
		while (j < len && line[j] != '\t')
			j++;
		int c = col_index(line + i, j - i);
		if (c < 0) {
			snprintf(err, errn, "unknown column '%.*s' in header row", (int)(j - i), line + i);
			return EV_ERR_FORMAT;
		}
		for (int k = 0; k < pk->ncols; k++)
			if (pk->map[k] == c) {
				snprintf(err, errn, "column '%.*s' appears twice", (int)(j - i), line + i);
				return EV_ERR_FORMAT;
			}
		if (pk->ncols == NCOLS) {
			snprintf(err, errn, "too many columns in header row");
			return EV_ERR_FORMAT;
		}
		pk->map[pk->ncols++] = c;
		i = j + 1;
	}
	pk->have_header = 1;
	return EV_OK;
}

static int parse_field(int c, char *s, size_t len, struct ev_rec *r, ev_strtab *st, const char **what)
{
	unsigned v;
	uint32_t u32;
	s[len] = '\0';
	*what = c >= 100 ? col_names[c - 100] : col_names[c];
	switch (c) {
	case C_TYPE:
		if (ev_type_parse(s, &v))
			return EV_ERR_FORMAT;
		r->type = (uint8_t)v;
		return EV_OK;
	case C_OP:
		/* The op's words depend on the type, which may come later in the row. */
		return EV_OK;
	case C_RANK: return ev_parse_u32(s, &r->rank) ? EV_ERR_FORMAT : EV_OK;
	case C_STREAM: return ev_parse_u32(s, &r->stream) ? EV_ERR_FORMAT : EV_OK;
	case C_TS: return ev_parse_i64(s, &r->ts) ? EV_ERR_FORMAT : EV_OK;
	case C_DUR: return ev_parse_u64(s, &r->dur) ? EV_ERR_FORMAT : EV_OK;
	case C_BYTES: return ev_parse_u64(s, &r->bytes) ? EV_ERR_FORMAT : EV_OK;
	case C_NAME:
	case C_SIG: {
		size_t n = ev_text_unescape(s, len);
		uint64_t id;
		if (n == (size_t)-1)
			return EV_ERR_FORMAT;
		if (ev_strtab_intern(st, s, n, &id))
			return EV_ERR_COLLISION;
		if (c == C_NAME)
			r->name = id;
		else
			r->sig = id;
		return EV_OK;
	}
	case C_NAME + 100:
	case C_SIG + 100: {
		uint64_t id = 0;
		if (len != 16)
			return EV_ERR_FORMAT;
		for (size_t i = 0; i < 16; i++) {
			char ch = s[i];
			int d = ch >= '0' && ch <= '9' ? ch - '0' : ch >= 'a' && ch <= 'f' ? ch - 'a' + 10 : -1;
			if (d < 0)
				return EV_ERR_FORMAT;
			id = id << 4 | (uint64_t)d;
		}
		if (c == C_NAME + 100)
			r->name = id;
		else
			r->sig = id;
		return EV_OK;
	}
	case C_COMM: return ev_parse_u64(s, &r->comm) ? EV_ERR_FORMAT : EV_OK;
	case C_SEQ: return ev_parse_u32(s, &r->seq) ? EV_ERR_FORMAT : EV_OK;
	case C_PEER: return ev_parse_i32(s, &r->peer) ? EV_ERR_FORMAT : EV_OK;
	case C_ID: return ev_parse_u32(s, &r->id) ? EV_ERR_FORMAT : EV_OK;
	case C_CHANNEL:
	case C_SRC:
	case C_NTHREADS:
		if (ev_parse_u32(s, &u32) || u32 > 0xFFFF)
			return EV_ERR_FORMAT;
		if (c == C_CHANNEL)
			r->channel = (uint16_t)u32;
		else if (c == C_SRC)
			r->src = (uint16_t)u32;
		else
			r->nthreads = (uint16_t)u32;
		return EV_OK;
	case C_STEP: return ev_parse_u32(s, &r->step) ? EV_ERR_FORMAT : EV_OK;
	case C_AUX: return ev_parse_u32(s, &r->aux) ? EV_ERR_FORMAT : EV_OK;
	case C_STEP_SIZE: return ev_parse_u32(s, &r->step_size) ? EV_ERR_FORMAT : EV_OK;
	case C_CHUNK_STEPS:
	case C_SLICE_STEPS:
		if (ev_parse_u32(s, &u32) || u32 > 0xFF)
			return EV_ERR_FORMAT;
		if (c == C_CHUNK_STEPS)
			r->chunk_steps = (uint8_t)u32;
		else
			r->slice_steps = (uint8_t)u32;
		return EV_OK;
	case C_ALGO: case C_PROTO: case C_DTYPE: case C_REDOP: {
		int bad;
		if (strcmp(s, "-") == 0)
			v = 0, bad = 0;
		else
			bad = c == C_ALGO ? ev_algo_parse(s, &v) : c == C_PROTO ? ev_proto_parse(s, &v) :
			      c == C_DTYPE ? ev_dtype_parse(s, &v) : ev_redop_parse(s, &v);
		if (bad)
			return EV_ERR_FORMAT;
		if (c == C_ALGO) r->algo = (uint8_t)v;
		else if (c == C_PROTO) r->proto = (uint8_t)v;
		else if (c == C_DTYPE) r->dtype = (uint8_t)v;
		else r->redop = (uint8_t)v;
		return EV_OK;
	}
	case C_FLAGS:
		if (ev_flags_parse(s, &v) || (v & ~(unsigned)EV_F_KNOWN_MASK))
			return EV_ERR_FORMAT;
		r->flags = (uint16_t)v;
		return EV_OK;
	default:
		return EV_ERR_FORMAT;
	}
}

static int pack_one(struct opts *o, ev_input *in, ev_writer *w, struct packer *pk, ev_strtab *st,
                    struct filter_state *fs, uint64_t *nrec)
{
	const char *cline;
	size_t len;
	int rc;
	char err[256];
	const char *name = ev_input_name(in);
	char *buf = NULL;
	size_t cap = 0;
	for (;;) {
		rc = ev_input_line(in, &cline, &len);
		uint64_t lineno = ev_input_lineno(in);
		if (rc == EV_EOF)
			break;
		if (rc == EV_ERR_TRUNCATED) {
			ev_cli_error(&o->cli, "%s: line %llu: last line has no newline (truncated input)", name,
			             (unsigned long long)lineno);
			rc = 1;
			goto out;
		}
		if (rc < 0) {
			ev_cli_file_error(&o->cli, name, rc);
			rc = 1;
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
		buf[len] = '\0';
		if (len > 0 && buf[0] == '#') {
			rc = ev_write_line_raw(w, buf, len);
			if (rc == EV_ERR_FORMAT || rc == EV_ERR_VERSION || rc == EV_ERR_COLLISION) {
				ev_cli_error(&o->cli, "%s: line %llu: %s", name, (unsigned long long)lineno, ev_strerror(rc));
				rc = 1;
				goto out;
			}
			if (rc) {
				rc = ev_cli_file_error(&o->cli, o->cli.output, rc);
				goto out;
			}
			continue;
		}
		/* The first row of an input is its header row; later header rows
		 * (from concatenated TSV files) are recognised by their fields. */
		if (!pk->have_header || is_header_row(buf, len)) {
			if (parse_header_row(pk, buf, len, err, sizeof err)) {
				rc = ev_cli_error(&o->cli, "%s: line %llu: %s", name, (unsigned long long)lineno, err);
				goto out;
			}
			continue;
		}
		struct ev_rec r;
		ev_rec_init(&r);
		char *p = buf;
		const char *op_text = NULL;
		for (int i = 0; i < pk->ncols; i++) {
			char *tab = i + 1 < pk->ncols ? strchr(p, '\t') : NULL;
			if (i + 1 < pk->ncols && !tab) {
				rc = ev_cli_error(&o->cli, "%s: line %llu: %d fields, the header row has %d", name,
				                  (unsigned long long)lineno, i + 1, pk->ncols);
				goto out;
			}
			size_t flen = tab ? (size_t)(tab - p) : strlen(p);
			if (!tab && i + 1 == pk->ncols && memchr(p, '\t', flen)) {
				rc = ev_cli_error(&o->cli, "%s: line %llu: more fields than the header row's %d", name,
				                  (unsigned long long)lineno, pk->ncols);
				goto out;
			}
			const char *what;
			if (pk->map[i] == C_OP) {
				p[flen] = '\0';
				op_text = p;
			} else if ((rc = parse_field(pk->map[i], p, flen, &r, st, &what)) != EV_OK) {
				rc = ev_cli_error(&o->cli, "%s: line %llu: bad %s value '%.*s'", name,
				                  (unsigned long long)lineno, what, (int)(flen > 60 ? 60 : flen), p);
				goto out;
			}
			p += flen + 1;
		}
		if (r.type == 0) {
			rc = ev_cli_error(&o->cli, "%s: line %llu: record has no type", name, (unsigned long long)lineno);
			goto out;
		}
		if (op_text) {
			unsigned v;
			if (ev_op_parse(r.type, op_text, &v)) {
				rc = ev_cli_error(&o->cli, "%s: line %llu: bad op value '%s' for type %s", name,
				                  (unsigned long long)lineno, op_text, ev_type_name(r.type) ? ev_type_name(r.type) : "?");
				goto out;
			}
			r.op = (uint8_t)v;
		}
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
	if (!binary && !o->no_header && o->format != FMT_JSONL && (rc = write_header_row(o, sk.out)) != EV_OK) {
		status = ev_cli_file_error(&o->cli, o->cli.output, rc);
		goto done;
	}
	struct packer pk;
	memset(&pk, 0, sizeof pk);
	if (o->pack) {
		for (int i = 0; i < o->ninputs && !status; i++) {
			ev_input *in;
			if ((rc = ev_input_open(&in, o->inputs[i])) != EV_OK) {
				status = ev_cli_file_error(&o->cli, o->inputs[i], rc);
				break;
			}
			status = pack_one(o, in, sk.w, &pk, st, &fs, &nrec);
			ev_input_close(in);
		}
	} else {
		struct view_ctx v = { o, &sk, &fs };
		struct ev_filter f = { EV_FILTER_RAW_TEXT, NULL, view_text, view_rec, NULL };
		/* Records go out as they came: no need to decode every field. */
		if (sk.w && !o->any_filter)
			f.flags |= EV_FILTER_LAZY;
		status = ev_filter_run(&o->cli, o->inputs, (size_t)o->ninputs, st, meta, &f, &v);
	}
	ev_cli_progress_done(&o->cli);
	if (!status) {
		rc = sk.w ? ev_writer_close(sk.w) : ev_output_close(sk.out);
		sk.w = NULL;
		sk.out = NULL;
		if (rc)
			status = ev_cli_file_error(&o->cli, o->cli.output, rc);
	}
done:
	ev_writer_abort(sk.w);
	ev_output_abort(sk.out);
	ev_map_free(&fs.name_ok);
	ev_strtab_free(st);
	ev_meta_free(meta);
	return status;
}

int main(int argc, char **argv)
{
	static const struct option longopts[] = {
		EV_CLI_COMMON_LONG,
		{ "tsv", no_argument, NULL, 1 },
		{ "csv", no_argument, NULL, 2 },
		{ "jsonl", no_argument, NULL, 3 },
		{ "ev", no_argument, NULL, 4 },
		{ "ids", no_argument, NULL, 5 },
		{ "from", required_argument, NULL, 6 },
		{ "to", required_argument, NULL, 7 },
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
	struct opts o;
	int c, status;
	memset(&o, 0, sizeof o);
	ev_cli_init(&o.cli, "ev-view");
	for (int i = 0; i < NCOLS; i++)
		o.cols[i] = i;
	o.ncols = NCOLS;
	int cols_given = 0;
	while ((c = getopt_long(argc, argv, EV_CLI_COMMON_SHORT "pc:MHt:r:s:n:", longopts, NULL)) != -1) {
		switch (ev_cli_common(&o.cli, c, optarg)) {
		case EV_CLI_HANDLED: continue;
		case EV_CLI_WANT_HELP: usage(stdout); return ev_cli_finish(&o.cli, 0);
		case EV_CLI_DONE: return ev_cli_finish(&o.cli, 0);
		default: break;
		}
		switch (c) {
		case 1: o.format = FMT_TSV; break;
		case 2: o.format = FMT_CSV; break;
		case 3: o.format = FMT_JSONL; break;
		case 4: o.format = FMT_EV; break;
		case 5: o.ids = 1; break;
		case 6:
			if (ev_parse_i64(optarg, &o.from))
				return ev_cli_usage_error(&o.cli, "--from: not a time in ns: '%s'", optarg);
			o.have_from = 1;
			break;
		case 7:
			if (ev_parse_i64(optarg, &o.to))
				return ev_cli_usage_error(&o.cli, "--to: not a time in ns: '%s'", optarg);
			o.have_to = 1;
			break;
		case 'p': o.pack = 1; break;
		case 'c':
			if (parse_columns(&o, optarg))
				return ev_cli_usage_error(&o.cli, "--columns: unknown column in '%s'", optarg);
			cols_given = 1;
			break;
		case 'M': o.no_meta = 1; break;
		case 'H': o.no_header = 1; break;
		case 't': {
			char *copy = strdup(optarg), *save = NULL;
			for (char *tok = strtok_r(copy, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
				unsigned v;
				if (ev_type_parse(tok, &v)) {
					/* The message names the word before its buffer goes. */
					int rc = ev_cli_usage_error(&o.cli, "--type: unknown record type '%s'", tok);
					free(copy);
					return rc;
				}
				o.type_mask |= 1u << v;
			}
			free(copy);
			break;
		}
		case 'r':
			if (parse_ranges(optarg, &o.ranks, &o.nranks))
				return ev_cli_usage_error(&o.cli, "--rank: expected a list like 0,2,4-7, got '%s'", optarg);
			break;
		case 's':
			if (parse_ranges(optarg, &o.srcs, &o.nsrcs))
				return ev_cli_usage_error(&o.cli, "--src: expected a list like 0,2-3, got '%s'", optarg);
			break;
		case 'n':
			o.name_re = optarg;
			break;
		default:
			return ev_cli_try_help(&o.cli);
		}
	}
	if (o.pack && o.format != FMT_TSV)
		return ev_cli_usage_error(&o.cli, "--pack reads TSV and writes ev; it takes no output format");
	if ((o.pack || o.format == FMT_EV) && cols_given)
		return ev_cli_usage_error(&o.cli, "--columns applies to text output only");
	if (o.name_re) {
		int e = regcomp(&o.re, o.name_re, REG_EXTENDED | REG_NOSUB);
		if (e) {
			char msg[128];
			regerror(e, &o.re, msg, sizeof msg);
			return ev_cli_usage_error(&o.cli, "--name: %s", msg);
		}
	}
	o.any_filter = o.type_mask || o.nranks || o.nsrcs || o.name_re || o.have_from || o.have_to;
	static char *stdin_only[] = { (char *)"-" };
	o.inputs = optind < argc ? argv + optind : stdin_only;
	o.ninputs = optind < argc ? argc - optind : 1;
	status = run(&o);
	if (o.name_re)
		regfree(&o.re);
	free(o.ranks);
	free(o.srcs);
	return ev_cli_finish(&o.cli, status);
}
