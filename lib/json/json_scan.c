/* SPDX-License-Identifier: MIT */
/*
 * json_scan.c - streaming reader for large JSON trace files: returns one
 * value of the top-level object (or one element of its big array) at a time,
 * so memory is bounded by the largest single value, and tokenizes a value
 * with jsmn.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define JSMN_STATIC
#define JSMN_STRICT
/* Parent links: closing a container finds its parent at once.  Without
 * them jsmn looks back over every token so far, which makes an object of
 * n arrays (an NPKit event with n sizes) quadratic. */
#define JSMN_PARENT_LINKS
#include <jsmn.h>

#include "ev/json.h"
#include "ev/stream.h"
#include "json/json_bytes.h"

#define CHUNK (1u << 18)

enum state { ST_START, ST_MEMBERS, ST_ARRAY, ST_ELEMS, ST_AFTER_ARRAY, ST_DONE };

/* Containers open around the reader: '{' an object whose members are
 * offered one by one, '[' an entered array whose elements are offered, 'i'
 * the items array (its elements are returned).  The document's own object
 * is the first. */
#define NEST_MAX 16

struct ev_json {
	ev_input *in;
	char *array_key;
	size_t max_value;
	unsigned char *buf;      /* input chunk */
	size_t pos, end;
	uint64_t base;           /* offset of buf[0] */
	int eof;
	char *val;               /* current value's text */
	size_t vlen, vcap;
	char *key;
	size_t klen, kcap;
	enum state st;
	int bare;                /* document is a bare array */
	int (*want)(void *ctx, const char *key, size_t len);
	void *want_ctx;
	int discard;             /* scanning a member nobody wants: count, don't copy */
	uint64_t dlen;
	int (*nest)(void *ctx, int depth, const char *key, size_t len);
	void *nest_ctx;
	char lvl[NEST_MAX];
	int depth;
	char detail[256];
};

int ev_json_open(ev_json **out, ev_input *in, const char *array_key, size_t max_value)
{
	ev_json *j = calloc(1, sizeof *j);
	*out = NULL;
	if (!j)
		return EV_ERR_NOMEM;
	j->in = in;
	j->array_key = strdup(array_key ? array_key : "traceEvents");
	j->max_value = max_value ? max_value : (64u << 20);
	j->buf = malloc(CHUNK);
	if (!j->array_key || !j->buf) {
		ev_json_close(j);
		return EV_ERR_NOMEM;
	}
	*out = j;
	return EV_OK;
}

void ev_json_close(ev_json *j)
{
	if (!j)
		return;
	free(j->array_key);
	free(j->buf);
	free(j->val);
	free(j->key);
	free(j);
}

const char *ev_json_errdetail(const ev_json *j) { return j->detail; }

void ev_json_want(ev_json *j, int (*want)(void *ctx, const char *key, size_t len), void *ctx)
{
	j->want = want;
	j->want_ctx = ctx;
}

void ev_json_nest(ev_json *j, int (*choose)(void *ctx, int depth, const char *key, size_t len), void *ctx)
{
	j->nest = choose;
	j->nest_ctx = ctx;
}

static int fail(ev_json *j, int rc, const char *msg)
{
	snprintf(j->detail, sizeof j->detail, "byte %llu: %s", (unsigned long long)(j->base + j->pos), msg);
	return rc;
}

/* Next byte, or -1 at the end, or < -1 for an input error (status - 1). */
static int getb(ev_json *j)
{
	if (j->pos == j->end) {
		if (j->eof)
			return -1;
		j->base += j->end;
		long got = ev_input_read(j->in, j->buf, CHUNK);
		if (got < 0)
			return (int)got - 1;
		j->pos = 0;
		j->end = (size_t)got;
		if (got == 0) {
			j->eof = 1;
			return -1;
		}
	}
	return j->buf[j->pos++];
}

static int skip_ws(ev_json *j)
{
	for (;;) {
		int c = getb(j);
		if (c != ' ' && c != '\t' && c != '\n' && c != '\r')
			return c;
	}
}

/* Append n bytes to val (bulk), within max_value. */
static int append(ev_json *j, const unsigned char *p, size_t n)
{
	if (j->discard) {
		j->dlen += n;
		return EV_OK;
	}
	if (n > j->max_value - j->vlen)
		return EV_ERR_LIMIT;
	if (j->vlen + n + 1 > j->vcap) {
		size_t cap = j->vcap ? j->vcap : 4096;
		while (cap < j->vlen + n + 1)
			cap *= 2;
		if (cap > j->max_value + 1)
			cap = j->max_value + 1;
		char *nv = realloc(j->val, cap);
		if (!nv)
			return EV_ERR_NOMEM;
		j->val = nv;
		j->vcap = cap;
	}
	memcpy(j->val + j->vlen, p, n);
	j->vlen += n;
	return EV_OK;
}

static int input_error(ev_json *j, int c)
{
	int rc = c + 1;
	if ((rc == EV_ERR_TRUNCATED || rc == EV_ERR_GZIP) && ev_input_gzip_error(j->in)) {
		snprintf(j->detail, sizeof j->detail, "%s", ev_input_gzip_error(j->in));
		return rc;
	}
	if (rc == EV_ERR_TRUNCATED || rc == EV_ERR_GZIP)
		return fail(j, rc, "compressed input is truncated or damaged");
	return fail(j, rc, "read error");
}

/* Bytes that matter outside strings while finding a value's end:
 * brackets, separators, whitespace and the quote that opens a string; inside
 * a container, only brackets and quotes. */
static const unsigned char stop_outside[256] = {
	['{'] = 1, ['['] = 1, ['}'] = 1, [']'] = 1, [','] = 1, ['"'] = 1,
	[' '] = 1, ['\t'] = 1, ['\n'] = 1, ['\r'] = 1,
};
static const unsigned char stop_nested[256] = {
	['{'] = 1, ['['] = 1, ['}'] = 1, [']'] = 1, ['"'] = 1,
};

/* Copy one JSON value whose first byte c was just read into val.  The end
 * is found by a tight loop over the input buffer (strings, nesting) and the
 * bytes are copied in bulk; nesting deeper than EV_JSON_MAX_DEPTH is
 * refused here, before anything tokenizes the value.  The value's syntax
 * is checked by whoever parses it. */
static int scan_value(ev_json *j, int c)
{
	int depth = 0, in_str = 0, rc;
	j->vlen = 0;
	j->dlen = 0;
	if (c < -1)
		return input_error(j, c);
	if (c == -1)
		return fail(j, EV_ERR_TRUNCATED, "truncated JSON: a value is missing");
	if (c == ',' || c == '}' || c == ']' || c == ':') /* "[,", "[}", "{"a":}" ...: nothing where a value must be */
		return fail(j, EV_ERR_FORMAT, "invalid JSON: a value is missing");
	size_t i = j->pos - 1, from = i; /* the value starts at the byte just read */
	for (;;) {
		const unsigned char *b = j->buf;
		size_t end = j->end;
		while (i < end) {
			if (in_str) {
				size_t k = (size_t)(ev_json_str_stop((const char *)b + i, (const char *)b + end) - (const char *)b);
				if (k == end) {
					i = end;
					break;
				}
				if (b[k] == '\\') {
					i = k + 2;
					if (i > end) {
						in_str = 2; /* escape continues in the next chunk */
						i = end;
						break;
					}
					continue;
				}
				in_str = 0;
				i = k + 1;
				if (depth == 0)
					goto done;
				continue;
			}
			/* Inside a container, whitespace and commas need no look
			 * (pretty-printed traces are a third indentation). */
			const unsigned char *stop = depth ? stop_nested : stop_outside;
			while (i < end && !stop[b[i]])
				i++;
			if (i == end)
				break;
			unsigned char ch = b[i];
			if (ch == '"') {
				in_str = 1;
				i++;
			} else if (ch == '{' || ch == '[') {
				if (++depth > EV_JSON_MAX_DEPTH) {
					j->pos = i;
					char msg[96];
					snprintf(msg, sizeof msg, "JSON nested deeper than %d levels", EV_JSON_MAX_DEPTH);
					return fail(j, EV_ERR_LIMIT, msg);
				}
				i++;
			} else if (ch == '}' || ch == ']') {
				if (depth == 0)
					goto done; /* belongs to the container around this value */
				i++;
				if (--depth == 0)
					goto done;
			} else if (depth == 0) {
				goto done; /* ',' or whitespace ends a number or literal */
			} else {
				i++;
			}
		}
		/* The chunk ends inside the value: keep what we have, read on. */
		if ((rc = append(j, b + from, end - from)) != EV_OK)
			goto limit;
		j->pos = end;
		c = getb(j);
		if (c < -1)
			return input_error(j, c);
		if (c == -1) {
			if (depth == 0 && !in_str) {
				i = from = j->pos;
				goto done_at_eof;
			}
			return fail(j, EV_ERR_TRUNCATED, in_str ? "truncated JSON inside a string" :
			                                          "truncated JSON: the document ends inside a value");
		}
		j->pos--;
		i = from = j->pos;
		if (in_str == 2) { /* the byte after a backslash */
			in_str = 1;
			i++;
		}
	}
done:
	if ((rc = append(j, j->buf + from, i - from)) != EV_OK)
		goto limit;
	j->pos = i;
done_at_eof:
	if (j->vlen == 0 && (!j->discard || j->dlen == 0))
		return fail(j, EV_ERR_FORMAT, "invalid JSON: a value is missing");
	if (j->val)
		j->val[j->vlen] = '\0';
	return EV_OK;
limit:
	if (rc == EV_ERR_LIMIT) {
		char msg[96];
		snprintf(msg, sizeof msg, "a value is larger than the limit of %zu bytes", j->max_value);
		return fail(j, rc, msg);
	}
	return fail(j, rc, "out of memory");
}

/* Read a member name into key (the opening quote already read). */
static int scan_key(ev_json *j)
{
	int rc = scan_value(j, '"');
	if (rc)
		return rc;
	if (j->vlen + 1 > j->kcap) {
		char *nk = realloc(j->key, j->vlen + 1);
		if (!nk)
			return fail(j, EV_ERR_NOMEM, "out of memory");
		j->key = nk;
		j->kcap = j->vlen + 1;
	}
	/* Keep the raw text between the quotes; keys with escapes are rare. */
	memcpy(j->key, j->val + 1, j->vlen - 2);
	j->klen = j->vlen - 2;
	j->key[j->klen] = '\0';
	return EV_OK;
}

int ev_json_peek(ev_json *j, const char **text, size_t *len, uint64_t *offset)
{
	if (j->st != ST_ARRAY)
		return 0;
	const char *b = (const char *)j->buf;
	size_t p = (size_t)(ev_json_skip_ws(b + j->pos, b + j->end) - b);
	if (p >= j->end || j->buf[p] == ']')
		return 0;
	j->pos = p;
	*text = (const char *)j->buf + p;
	*len = j->end - p;
	*offset = j->base + p;
	return 1;
}

int ev_json_consume(ev_json *j, size_t n)
{
	j->pos += n;
	int c = skip_ws(j);
	if (c == ']') {
		j->depth--;
		j->st = ST_AFTER_ARRAY;
		return EV_OK;
	}
	if (c == ',')
		return EV_OK;
	return c < -1 ? input_error(j, c) : fail(j, c == -1 ? EV_ERR_TRUNCATED : EV_ERR_FORMAT,
	                                      c == -1 ? "truncated JSON inside the event array" : "expected ',' or ']' in the event array");
}

int ev_json_in_array(const ev_json *j)
{
	return j->st == ST_ARRAY;
}

int ev_json_jump(ev_json *j, uint64_t offset, int elem)
{
	int rc;
	if (j->st != ST_ARRAY)
		return EV_ERR_ARG;
	if ((rc = ev_input_seek(j->in, offset)) != EV_OK)
		return rc;
	j->base = offset;
	j->pos = j->end = 0;
	j->eof = 0;
	if (elem)
		return EV_OK;
	int c = skip_ws(j);
	if (c != ']')
		return c < -1 ? input_error(j, c) : fail(j, EV_ERR_FORMAT, "expected the ']' of the event array");
	j->depth--;
	j->st = ST_AFTER_ARRAY;
	return EV_OK;
}

/* After the '[' of the event array (the top level or the member named
 * array_key): an empty array is over at once; otherwise the first
 * element's byte is put back for ev_json_peek/ev_json_next (the end of
 * input or a read error puts nothing back: the array's next read meets
 * it).  Both places that open the array share this. */
static void open_array(ev_json *j)
{
	j->st = ST_ARRAY;
	int c = skip_ws(j);
	if (c == ']') {
		j->depth--;
		j->st = ST_AFTER_ARRAY;
	} else if (c >= 0) {
		j->pos--;
	}
}

/* One more container open around the reader (kind as in lvl). */
static int push(ev_json *j, char kind)
{
	if (j->depth == NEST_MAX)
		return fail(j, EV_ERR_LIMIT, "JSON containers entered deeper than the reader follows");
	j->lvl[j->depth++] = kind;
	return EV_OK;
}

/* After the '{' or '[' of an entered container: its members or elements
 * come next, or it is empty and over. */
static void enter(ev_json *j, int c)
{
	int d = skip_ws(j);
	if (d == (c == '{' ? '}' : ']')) {
		j->depth--;
		j->st = ST_AFTER_ARRAY;
		return;
	}
	if (d >= 0)
		j->pos--;
	j->st = c == '{' ? ST_MEMBERS : ST_ELEMS;
}

/* Into the container that c opens, when the caller's choice is to enter
 * it: 1 entered, 0 not, or a negative error. */
static int maybe_enter(ev_json *j, int choice, int c)
{
	if (choice != EV_JSON_ENTER || (c != '{' && c != '['))
		return 0;
	int rc = push(j, (char)c);
	if (rc != EV_OK)
		return rc;
	enter(j, c);
	return 1;
}

int ev_json_next(ev_json *j, struct ev_json_item *it)
{
	int c, rc;
	for (;;) {
		switch (j->st) {
		case ST_START:
			c = skip_ws(j);
			if (c == '[') {
				j->bare = 1;
				(void)push(j, 'i');
				open_array(j);
				continue;
			}
			if (c != '{')
				return c == -1 ? fail(j, EV_ERR_FORMAT, "empty input: not a JSON trace")
				               : c < -1 ? input_error(j, c) : fail(j, EV_ERR_FORMAT, "not a JSON object or array");
			(void)push(j, '{');
			c = skip_ws(j);
			if (c == '}') {
				j->st = ST_DONE;
				continue;
			}
			if (c >= 0)
				j->pos--;
			j->st = ST_MEMBERS;
			continue;
		case ST_MEMBERS:
			c = skip_ws(j);
			if (c != '"')
				return c < -1 ? input_error(j, c) : fail(j, c == -1 ? EV_ERR_TRUNCATED : EV_ERR_FORMAT,
				                                      c == -1 ? "truncated JSON" : "expected a member name");
			if ((rc = scan_key(j)) != EV_OK)
				return rc;
			c = skip_ws(j);
			if (c != ':')
				return fail(j, c == -1 ? EV_ERR_TRUNCATED : EV_ERR_FORMAT, "expected ':'");
			c = skip_ws(j);
			int choice = j->nest ? j->nest(j->nest_ctx, j->depth, j->key, j->klen) : EV_JSON_COPY;
			if (c == '[' && (j->nest ? choice == EV_JSON_ITEMS : strcmp(j->key, j->array_key) == 0)) {
				if ((rc = push(j, 'i')) != EV_OK)
					return rc;
				open_array(j);
				continue;
			}
			if ((rc = maybe_enter(j, choice, c)) != 0) {
				if (rc < 0)
					return rc;
				continue;
			}
			it->offset = j->base + j->pos - 1;
			it->depth = j->depth;
			j->discard = j->nest ? choice == EV_JSON_SKIP : j->want && !j->want(j->want_ctx, j->key, j->klen);
			rc = scan_value(j, c);
			int skipped = j->discard;
			j->discard = 0;
			if (rc != EV_OK)
				return rc;
			it->kind = EV_JSON_TOP;
			it->key = j->key;
			it->key_len = j->klen;
			it->text = skipped ? NULL : j->val;
			it->len = skipped ? (size_t)j->dlen : j->vlen;
			j->st = ST_AFTER_ARRAY; /* same follow-up: ',' or '}' */
			return 1;
		case ST_ARRAY:
			c = skip_ws(j);
			it->offset = j->base + j->pos - 1;
			it->depth = j->depth; /* before the array's end may close it */
			if ((rc = scan_value(j, c)) != EV_OK)
				return rc;
			c = skip_ws(j);
			if (c == ']') {
				j->depth--;
				j->st = ST_AFTER_ARRAY;
			} else if (c != ',')
				return c < -1 ? input_error(j, c) : fail(j, c == -1 ? EV_ERR_TRUNCATED : EV_ERR_FORMAT,
				                                      c == -1 ? "truncated JSON inside the event array" : "expected ',' or ']' in the event array");
			it->kind = EV_JSON_ELEM;
			/* Nested reading names the array the element is in (no key
			 * is read inside it, so the array's own is still there). */
			it->key = j->nest ? j->key : NULL;
			it->key_len = j->nest ? j->klen : 0;
			it->text = j->val;
			it->len = j->vlen;
			return 1;
		case ST_ELEMS: {
			c = skip_ws(j);
			int ec = j->nest(j->nest_ctx, j->depth, NULL, 0);
			if ((rc = maybe_enter(j, ec, c)) != 0) {
				if (rc < 0)
					return rc;
				continue;
			}
			it->offset = j->base + j->pos - 1;
			it->depth = j->depth;
			j->discard = ec == EV_JSON_SKIP;
			rc = scan_value(j, c);
			int eskip = j->discard;
			j->discard = 0;
			if (rc != EV_OK)
				return rc;
			it->kind = EV_JSON_ELEM;
			it->key = NULL;
			it->key_len = 0;
			it->text = eskip ? NULL : j->val;
			it->len = eskip ? (size_t)j->dlen : j->vlen;
			j->st = ST_AFTER_ARRAY;
			return 1;
		}
		case ST_AFTER_ARRAY:
			c = skip_ws(j);
			if (j->depth == 0) {
				/* A read error here (a gzip member without its
				 * trailer) is that error, not trailing data. */
				if (c < -1)
					return input_error(j, c);
				if (c != -1)
					return fail(j, EV_ERR_FORMAT, j->bare ? "data after the end of the array" :
					                                        "data after the end of the document");
				j->st = ST_DONE;
				continue;
			}
			if (j->lvl[j->depth - 1] == '[') {
				if (c == ',' || c == ']') {
					if (c == ']')
						j->depth--;
					j->st = c == ',' ? ST_ELEMS : ST_AFTER_ARRAY;
					continue;
				}
				return c < -1 ? input_error(j, c) : fail(j, c == -1 ? EV_ERR_TRUNCATED : EV_ERR_FORMAT,
				                                      c == -1 ? "truncated JSON inside an array" : "expected ',' or ']'");
			}
			if (c == ',') {
				j->st = ST_MEMBERS;
				continue;
			}
			if (c == '}') {
				j->depth--;
				continue;
			}
			return c < -1 ? input_error(j, c) : fail(j, c == -1 ? EV_ERR_TRUNCATED : EV_ERR_FORMAT,
			                                      c == -1 ? "truncated JSON: the document does not end" : "expected ',' or '}'");
		case ST_DONE:
			return 0;
		}
	}
}

/* Text extent of token i (jsmn leaves the quotes out of strings). */
static int tok_from(const struct ev_json_tok *t, int i) { return t[i].type == EV_JT_STRING ? t[i].start - 1 : t[i].start; }
static int tok_to(const struct ev_json_tok *t, int i) { return t[i].type == EV_JT_STRING ? t[i].end + 1 : t[i].end; }

/* Is text[a, b) whitespace with exactly `sep` once in it (sep 0: none)? */
static int gap_ok(const char *text, int a, int b, char sep)
{
	int seen = 0;
	for (int k = a; k < b; k++) {
		char c = text[k];
		if (c == ' ' || c == '\t' || c == '\n' || c == '\r')
			continue;
		if (sep && c == sep && !seen) {
			seen = 1;
			continue;
		}
		return 0;
	}
	return seen == (sep != 0);
}


/* jsmn's strict mode still accepts "[1,]", "[1 2]" and "{,}": check the
 * separators between the tokens of container i.  Returns the index after
 * its subtree, -1 on a bad separator, -2 when nested too deep. */
static int check_separators(const char *text, const struct ev_json_tok *t, int i, int depth)
{
	if (t[i].type != EV_JT_ARRAY && t[i].type != EV_JT_OBJECT)
		return i + 1;
	if (depth > EV_JSON_MAX_DEPTH)
		return -2;
	int obj = t[i].type == EV_JT_OBJECT;
	int pos = t[i].start + 1, j = i + 1;
	for (int c = 0; c < t[i].size; c++) {
		if (!gap_ok(text, pos, tok_from(t, j), c ? ',' : 0))
			return -1;
		if (obj) {
			int v = j + 1;
			if (t[j].type != EV_JT_STRING || !gap_ok(text, tok_to(t, j), tok_from(t, v), ':'))
				return -1;
			j = v;
		}
		int next = check_separators(text, t, j, depth + 1);
		if (next < 0)
			return next;
		pos = tok_to(t, j);
		j = next;
	}
	return gap_ok(text, pos, t[i].end - 1, 0) ? j : -1;
}

int ev_json_tokenize(const char *text, size_t len, struct ev_json_tok *toks, int max)
{
	jsmn_parser p;
	jsmntok_t tmp[256];
	jsmntok_t *jt = max <= 256 ? tmp : malloc((size_t)max * sizeof *jt);
	if (!jt)
		return EV_ERR_NOMEM;
	jsmn_init(&p);
	int n = jsmn_parse(&p, text, len, jt, (unsigned)max);
	if (n >= 0) {
		for (int i = 0; i < n; i++) {
			/* jsmn's numbering changed between releases: map by name. */
			toks[i].type = jt[i].type == JSMN_OBJECT ? EV_JT_OBJECT : jt[i].type == JSMN_ARRAY ? EV_JT_ARRAY :
			               jt[i].type == JSMN_STRING ? EV_JT_STRING : jt[i].type == JSMN_PRIMITIVE ? EV_JT_PRIMITIVE :
			               EV_JT_UNDEF;
			toks[i].start = jt[i].start;
			toks[i].end = jt[i].end;
			toks[i].size = jt[i].size;
		}
		/* jsmn accepts a prefix; a value must be exactly one token tree. */
		int end = n > 0 && ev_json_skip(toks, 0) == n ? check_separators(text, toks, 0, 0) : -1;
		n = end == n ? n : end == -2 ? EV_ERR_LIMIT : EV_ERR_FORMAT;
	} else {
		n = n == JSMN_ERROR_NOMEM ? EV_ERR_LIMIT : EV_ERR_FORMAT;
	}
	if (jt != tmp)
		free(jt);
	return n;
}

int ev_json_skip(const struct ev_json_tok *t, int i)
{
	int pending = 1;
	while (pending > 0) {
		pending--;
		if (t[i].type == EV_JT_OBJECT)
			pending += 2 * t[i].size;
		else if (t[i].type == EV_JT_ARRAY)
			pending += t[i].size;
		i++;
	}
	return i;
}

int ev_json_eq(const char *text, const struct ev_json_tok *t, int i, const char *s)
{
	size_t n = strlen(s);
	return (size_t)(t[i].end - t[i].start) == n && memcmp(text + t[i].start, s, n) == 0;
}

int ev_json_get(const char *text, const struct ev_json_tok *t, int i, const char *key)
{
	if (t[i].type != EV_JT_OBJECT)
		return -1;
	int n = t[i].size, k = i + 1;
	for (int m = 0; m < n; m++) {
		if (t[k].type == EV_JT_STRING && ev_json_eq(text, t, k, key))
			return k + 1;
		k = ev_json_skip(t, k + 1);
	}
	return -1;
}

static int hex4(const char *s, unsigned *v)
{
	*v = 0;
	for (int i = 0; i < 4; i++) {
		char c = s[i];
		int d = c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
		if (d < 0)
			return -1;
		*v = *v << 4 | (unsigned)d;
	}
	return 0;
}

size_t ev_json_str(const char *text, const struct ev_json_tok *t, int i, char *out)
{
	const char *s = text + t[i].start, *e = text + t[i].end;
	size_t o = 0;
	while (s < e) {
		if (*s != '\\') {
			out[o++] = *s++;
			continue;
		}
		if (s + 1 >= e)
			return (size_t)-1;
		char c = s[1];
		s += 2;
		switch (c) {
		case '"': out[o++] = '"'; break;
		case '\\': out[o++] = '\\'; break;
		case '/': out[o++] = '/'; break;
		case 'b': out[o++] = '\b'; break;
		case 'f': out[o++] = '\f'; break;
		case 'n': out[o++] = '\n'; break;
		case 'r': out[o++] = '\r'; break;
		case 't': out[o++] = '\t'; break;
		case 'u': {
			unsigned cp, lo;
			if (e - s < 4 || hex4(s, &cp))
				return (size_t)-1;
			s += 4;
			if (cp >= 0xD800 && cp <= 0xDBFF && e - s >= 6 && s[0] == '\\' && s[1] == 'u' && !hex4(s + 2, &lo) &&
			    lo >= 0xDC00 && lo <= 0xDFFF) {
				cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
				s += 6;
			} else if (cp >= 0xD800 && cp <= 0xDFFF) {
				cp = 0xFFFD; /* a lone surrogate */
			}
			/* At most 4 bytes; the escape took at least 6, so out stays within bounds. */
			if (cp < 0x80) {
				out[o++] = (char)cp;
			} else if (cp < 0x800) {
				out[o++] = (char)(0xC0 | cp >> 6);
				out[o++] = (char)(0x80 | (cp & 0x3F));
			} else if (cp < 0x10000) {
				out[o++] = (char)(0xE0 | cp >> 12);
				out[o++] = (char)(0x80 | ((cp >> 6) & 0x3F));
				out[o++] = (char)(0x80 | (cp & 0x3F));
			} else {
				out[o++] = (char)(0xF0 | cp >> 18);
				out[o++] = (char)(0x80 | ((cp >> 12) & 0x3F));
				out[o++] = (char)(0x80 | ((cp >> 6) & 0x3F));
				out[o++] = (char)(0x80 | (cp & 0x3F));
			}
			break;
		}
		default:
			return (size_t)-1;
		}
	}
	out[o] = '\0';
	return o;
}
