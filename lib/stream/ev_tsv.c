/* SPDX-License-Identifier: MIT */
/*
 * ev_tsv.c - the text forms of records (ev/tsv.h): rows of named columns
 * as TSV, CSV or JSON Lines, and the reverse, TSV rows packed back into
 * records.  The TSV form is lossless, so streams can be edited with awk.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ev/stream.h"
#include "ev/tsv.h"

const char *const ev_col_names[EV_NCOLS] = {
	"type", "op", "rank", "stream", "ts", "dur", "bytes", "name", "sig", "comm",
	"seq", "peer", "id", "channel", "step", "aux", "algo", "proto", "dtype",
	"redop", "flags", "src", "nthreads", "chunk_steps", "slice_steps", "step_size",
};

int ev_col_index(const char *name, size_t len)
{
	for (int i = 0; i < EV_NCOLS; i++)
		if (strlen(ev_col_names[i]) == len && memcmp(ev_col_names[i], name, len) == 0)
			return i;
	/* --ids output names the string columns name_id and sig_id. */
	if (len == 7 && memcmp(name, "name_id", 7) == 0)
		return EV_COL_NAME_ID;
	if (len == 6 && memcmp(name, "sig_id", 6) == 0)
		return EV_COL_SIG_ID;
	return -1;
}

static char *put_i64(char *p, int64_t v)
{
	if (v < 0) {
		*p++ = '-';
		return ev_put_dec(p, (uint64_t)0 - (uint64_t)v);
	}
	return ev_put_dec(p, (uint64_t)v);
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
	return name ? put_str(p, name) : ev_put_dec(p, v);
}

static char *put_hex(char *p, uint64_t v)
{
	static const char hex[] = "0123456789abcdef";
	for (int i = 15; i >= 0; i--)
		*p++ = hex[(v >> (i * 4)) & 15];
	return p;
}

/* Text of a string field, escaped for the output format. */
static char *put_text(char *p, enum ev_row_fmt f, const char *s, size_t len)
{
	if (f == EV_ROW_TSV)
		return p + ev_text_escape(s, len, p, 2 * len + 1);
	if (f == EV_ROW_CSV) {
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

int ev_row_write(const struct ev_rowfmt *o, ev_output *out, const struct ev_rec *r, const ev_strtab *st)
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
	char sep = o->fmt == EV_ROW_CSV ? ',' : '\t';
	if (o->fmt == EV_ROW_JSONL)
		*p++ = '{';
	for (int i = 0; i < o->ncols; i++) {
		int c = o->cols[i];
		if (o->fmt == EV_ROW_JSONL) {
			if (i)
				*p++ = ',';
			*p++ = '"';
			p = put_str(p, ev_col_names[c]);
			if (o->ids && (c == EV_COL_NAME || c == EV_COL_SIG))
				p = put_str(p, "_id");
			*p++ = '"';
			*p++ = ':';
		} else if (i) {
			*p++ = sep;
		}
		/* JSON: enum words and texts are strings, numbers are numbers. */
		int q = o->fmt == EV_ROW_JSONL &&
		        (c == EV_COL_TYPE || c == EV_COL_OP || c == EV_COL_ALGO || c == EV_COL_PROTO || c == EV_COL_DTYPE ||
		         c == EV_COL_REDOP || c == EV_COL_FLAGS || (o->ids && (c == EV_COL_NAME || c == EV_COL_SIG)));
		if (q)
			*p++ = '"';
		switch (c) {
		case EV_COL_TYPE: p = put_enum(p, ev_type_name(r->type), r->type, 0); break;
		case EV_COL_OP: p = put_enum(p, ev_op_name(r->type, r->op), r->op, 0); break;
		case EV_COL_RANK: p = ev_put_dec(p, r->rank); break;
		case EV_COL_STREAM: p = ev_put_dec(p, r->stream); break;
		case EV_COL_TS: p = put_i64(p, r->ts); break;
		case EV_COL_DUR: p = ev_put_dec(p, r->dur); break;
		case EV_COL_BYTES: p = ev_put_dec(p, r->bytes); break;
		case EV_COL_NAME:
			p = o->ids ? put_hex(p, r->name) : put_text(p, o->fmt, name, nlen);
			break;
		case EV_COL_SIG:
			p = o->ids ? put_hex(p, r->sig) : put_text(p, o->fmt, sig, slen);
			break;
		case EV_COL_COMM: p = ev_put_dec(p, r->comm); break;
		case EV_COL_SEQ: p = ev_put_dec(p, r->seq); break;
		case EV_COL_PEER: p = put_i64(p, r->peer); break;
		case EV_COL_ID: p = ev_put_dec(p, r->id); break;
		case EV_COL_CHANNEL: p = ev_put_dec(p, r->channel); break;
		case EV_COL_STEP: p = ev_put_dec(p, r->step); break;
		case EV_COL_AUX: p = ev_put_dec(p, r->aux); break;
		case EV_COL_ALGO: p = put_enum(p, ev_algo_name(r->algo), r->algo, 1); break;
		case EV_COL_PROTO: p = put_enum(p, ev_proto_name(r->proto), r->proto, 1); break;
		case EV_COL_DTYPE: p = put_enum(p, ev_dtype_name(r->dtype), r->dtype, 1); break;
		case EV_COL_REDOP: p = put_enum(p, ev_redop_name(r->redop), r->redop, 1); break;
		case EV_COL_FLAGS:
			ev_flags_format(r->flags, flags, sizeof flags);
			p = put_str(p, *flags ? flags : "-");
			break;
		case EV_COL_SRC: p = ev_put_dec(p, r->src); break;
		case EV_COL_NTHREADS: p = ev_put_dec(p, r->nthreads); break;
		case EV_COL_CHUNK_STEPS: p = ev_put_dec(p, r->chunk_steps); break;
		case EV_COL_SLICE_STEPS: p = ev_put_dec(p, r->slice_steps); break;
		case EV_COL_STEP_SIZE: p = ev_put_dec(p, r->step_size); break;
		default: break;
		}
		if (q)
			*p++ = '"';
	}
	if (o->fmt == EV_ROW_JSONL)
		*p++ = '}';
	*p++ = '\n';
	ev_output_commit(out, (size_t)(p - start));
	return EV_OK;
}

int ev_row_header(const struct ev_rowfmt *o, ev_output *out)
{
	int rc = EV_OK;
	for (int i = 0; i < o->ncols && !rc; i++) {
		int c = o->cols[i];
		if (i)
			rc = ev_output_putc(out, o->fmt == EV_ROW_CSV ? ',' : '\t');
		if (!rc)
			rc = ev_output_printf(out, "%s%s", ev_col_names[c], o->ids && (c == EV_COL_NAME || c == EV_COL_SIG) ? "_id" : "");
	}
	return rc ? rc : ev_output_putc(out, '\n');
}

/* A row whose fields are all column names is a header row: a data row
 * cannot be one, because its type field must name a record type. */
static int is_header_row(const char *line, size_t len)
{
	size_t i = 0;
	while (i <= len) {
		size_t j = i;
		while (j < len && line[j] != '\t')
			j++;
		if (ev_col_index(line + i, j - i) < 0)
			return 0;
		i = j + 1;
	}
	return 1;
}

static int parse_header_row(struct ev_tsv_packer *pk, char *line, size_t len)
{
	pk->ncols = 0;
	size_t i = 0;
	while (i <= len) {
		size_t j = i;
		while (j < len && line[j] != '\t')
			j++;
		int c = ev_col_index(line + i, j - i);
		if (c < 0) {
			snprintf(pk->err, sizeof pk->err, "unknown column '%.*s' in header row", (int)(j - i), line + i);
			return EV_ERR_FORMAT;
		}
		for (int k = 0; k < pk->ncols; k++)
			if (pk->map[k] == c) {
				snprintf(pk->err, sizeof pk->err, "column '%.*s' appears twice", (int)(j - i), line + i);
				return EV_ERR_FORMAT;
			}
		if (pk->ncols == EV_NCOLS) {
			snprintf(pk->err, sizeof pk->err, "too many columns in header row");
			return EV_ERR_FORMAT;
		}
		pk->map[pk->ncols++] = c;
		i = j + 1;
	}
	pk->have_header = 1;
	return EV_OK;
}

/* A number's parse status as the packer reports it: too big for its
 * field (EV_ERR_RANGE) is told apart from not a number at all. */
static int num_status(int rc) { return rc == EV_ERR_RANGE ? rc : rc ? EV_ERR_FORMAT : EV_OK; }

static int parse_field(int c, char *s, size_t len, struct ev_rec *r, ev_strtab *st, const char **what)
{
	unsigned v;
	uint32_t u32;
	s[len] = '\0';
	*what = c == EV_COL_NAME_ID ? "name_id" : c == EV_COL_SIG_ID ? "sig_id" : ev_col_names[c];
	switch (c) {
	case EV_COL_TYPE:
		if (ev_type_parse(s, &v))
			return EV_ERR_FORMAT;
		r->type = (uint8_t)v;
		return EV_OK;
	case EV_COL_OP:
		/* The op's words depend on the type, which may come later in the row. */
		return EV_OK;
	case EV_COL_RANK: return ev_parse_u32(s, &r->rank) ? EV_ERR_FORMAT : EV_OK;
	case EV_COL_STREAM: return ev_parse_u32(s, &r->stream) ? EV_ERR_FORMAT : EV_OK;
	case EV_COL_TS: return num_status(ev_parse_i64(s, &r->ts));
	case EV_COL_DUR: return num_status(ev_parse_u64(s, &r->dur));
	case EV_COL_BYTES: return ev_parse_u64(s, &r->bytes) ? EV_ERR_FORMAT : EV_OK;
	case EV_COL_NAME:
	case EV_COL_SIG: {
		size_t n = ev_text_unescape(s, len);
		uint64_t id;
		if (n == (size_t)-1)
			return EV_ERR_FORMAT;
		if (ev_strtab_intern(st, s, n, &id))
			return EV_ERR_COLLISION;
		if (c == EV_COL_NAME)
			r->name = id;
		else
			r->sig = id;
		return EV_OK;
	}
	case EV_COL_NAME_ID:
	case EV_COL_SIG_ID: {
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
		if (c == EV_COL_NAME_ID)
			r->name = id;
		else
			r->sig = id;
		return EV_OK;
	}
	case EV_COL_COMM: return ev_parse_u64(s, &r->comm) ? EV_ERR_FORMAT : EV_OK;
	case EV_COL_SEQ: return ev_parse_u32(s, &r->seq) ? EV_ERR_FORMAT : EV_OK;
	case EV_COL_PEER: return ev_parse_i32(s, &r->peer) ? EV_ERR_FORMAT : EV_OK;
	case EV_COL_ID: return ev_parse_u32(s, &r->id) ? EV_ERR_FORMAT : EV_OK;
	case EV_COL_CHANNEL:
	case EV_COL_SRC:
	case EV_COL_NTHREADS:
		if (ev_parse_u32(s, &u32) || u32 > 0xFFFF)
			return EV_ERR_FORMAT;
		if (c == EV_COL_CHANNEL)
			r->channel = (uint16_t)u32;
		else if (c == EV_COL_SRC)
			r->src = (uint16_t)u32;
		else
			r->nthreads = (uint16_t)u32;
		return EV_OK;
	case EV_COL_STEP: return ev_parse_u32(s, &r->step) ? EV_ERR_FORMAT : EV_OK;
	case EV_COL_AUX: return ev_parse_u32(s, &r->aux) ? EV_ERR_FORMAT : EV_OK;
	case EV_COL_STEP_SIZE: return ev_parse_u32(s, &r->step_size) ? EV_ERR_FORMAT : EV_OK;
	case EV_COL_CHUNK_STEPS:
	case EV_COL_SLICE_STEPS:
		if (ev_parse_u32(s, &u32) || u32 > 0xFF)
			return EV_ERR_FORMAT;
		if (c == EV_COL_CHUNK_STEPS)
			r->chunk_steps = (uint8_t)u32;
		else
			r->slice_steps = (uint8_t)u32;
		return EV_OK;
	case EV_COL_ALGO: case EV_COL_PROTO: case EV_COL_DTYPE: case EV_COL_REDOP: {
		int bad;
		if (strcmp(s, "-") == 0)
			v = 0, bad = 0;
		else
			bad = c == EV_COL_ALGO ? ev_algo_parse(s, &v) : c == EV_COL_PROTO ? ev_proto_parse(s, &v) :
			      c == EV_COL_DTYPE ? ev_dtype_parse(s, &v) : ev_redop_parse(s, &v);
		if (bad)
			return EV_ERR_FORMAT;
		if (c == EV_COL_ALGO) r->algo = (uint8_t)v;
		else if (c == EV_COL_PROTO) r->proto = (uint8_t)v;
		else if (c == EV_COL_DTYPE) r->dtype = (uint8_t)v;
		else r->redop = (uint8_t)v;
		return EV_OK;
	}
	case EV_COL_FLAGS:
		if (ev_flags_parse(s, &v) || (v & ~(unsigned)EV_F_KNOWN_MASK))
			return EV_ERR_FORMAT;
		r->flags = (uint16_t)v;
		return EV_OK;
	default:
		return EV_ERR_FORMAT;
	}
}

void ev_tsv_packer_init(struct ev_tsv_packer *pk)
{
	memset(pk, 0, sizeof *pk);
}

int ev_tsv_pack_line(struct ev_tsv_packer *pk, char *line, size_t len, struct ev_rec *r, ev_strtab *st)
{
	int rc;
	pk->err[0] = '\0';
	line[len] = '\0';
	if (len > 0 && line[0] == '#')
		return EV_TEXT;
	/* The first row of an input is its header row; later header rows
	 * (from concatenated TSV files) are recognised by their fields. */
	if (!pk->have_header || is_header_row(line, len))
		return parse_header_row(pk, line, len) == EV_OK ? EV_OK : EV_ERR_FORMAT;
	ev_rec_init(r);
	char *p = line;
	const char *op_text = NULL;
	for (int i = 0; i < pk->ncols; i++) {
		char *tab = i + 1 < pk->ncols ? strchr(p, '\t') : NULL;
		if (i + 1 < pk->ncols && !tab) {
			snprintf(pk->err, sizeof pk->err, "%d fields, the header row has %d", i + 1, pk->ncols);
			return EV_ERR_FORMAT;
		}
		size_t flen = tab ? (size_t)(tab - p) : strlen(p);
		if (!tab && i + 1 == pk->ncols && memchr(p, '\t', flen)) {
			snprintf(pk->err, sizeof pk->err, "more fields than the header row's %d", pk->ncols);
			return EV_ERR_FORMAT;
		}
		const char *what;
		if (pk->map[i] == EV_COL_OP) {
			p[flen] = '\0';
			op_text = p;
		} else if ((rc = parse_field(pk->map[i], p, flen, r, st, &what)) != EV_OK) {
			if (rc == EV_ERR_COLLISION)
				snprintf(pk->err, sizeof pk->err, "%s: %s", what, ev_strerror(rc));
			else if (rc == EV_ERR_RANGE)
				snprintf(pk->err, sizeof pk->err, "%s value '%.*s' out of range", what, (int)(flen > 60 ? 60 : flen), p);
			else
				snprintf(pk->err, sizeof pk->err, "bad %s value '%.*s'", what, (int)(flen > 60 ? 60 : flen), p);
			return rc == EV_ERR_COLLISION ? rc : EV_ERR_FORMAT;
		}
		p += flen + 1;
	}
	if (r->type == 0) {
		snprintf(pk->err, sizeof pk->err, "record has no type");
		return EV_ERR_FORMAT;
	}
	if (op_text) {
		unsigned v;
		if (ev_op_parse(r->type, op_text, &v)) {
			const char *tn = ev_type_name(r->type);
			snprintf(pk->err, sizeof pk->err, "bad op value '%.60s' for type %s", op_text, tn ? tn : "?");
			return EV_ERR_FORMAT;
		}
		r->op = (uint8_t)v;
	}
	return EV_REC;
}
