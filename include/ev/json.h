/* SPDX-License-Identifier: MIT */
/*
 * ev/json.h - streaming JSON: one top-level value at a time, then tokens.
 */
#ifndef EV_JSON_H
#define EV_JSON_H

#include "ev/stream.h"

/* ------------------------------------------------------------------ */
/* Streaming JSON (lib/json/json_scan.c): one value at a time, then jsmn.    */

/* Reads a JSON document of the form {"k": v, ..., "<array_key>": [e, ...],
 * ...} or a bare array [e, ...] and returns the elements of the big array
 * one by one (EV_JSON_ELEM) and the other top-level members (EV_JSON_TOP)
 * in document order.  Memory: the largest single value (<= max_value). */
enum { EV_JSON_ELEM = 1, EV_JSON_TOP = 2 };
/* Deepest nesting of arrays and objects accepted in one value: deeper input
 * is refused with EV_ERR_LIMIT while it is scanned, before any tokenizing. */
#define EV_JSON_MAX_DEPTH 256
struct ev_json_item {
	int kind;
	const char *key; size_t key_len; /* EV_JSON_TOP: the member name */
	const char *text; size_t len;    /* the value's JSON text */
	uint64_t offset;                 /* byte offset of the value */
	int depth;                       /* containers open around it (nested reading) */
};
typedef struct ev_json ev_json;
int ev_json_open(ev_json **j, ev_input *in, const char *array_key, size_t max_value) EV_RESULT_USED;
/* 1 = item, 0 = end of document, < 0 error (details in ev_json_errdetail). */
int ev_json_next(ev_json *j, struct ev_json_item *it) EV_RESULT_USED;
const char *ev_json_errdetail(const ev_json *j);
/* In-place reading of the big array's elements, for a caller that parses
 * an element in one pass itself: ev_json_peek gives the buffered text from
 * the next element's first byte to the end of what has been read (1), or 0
 * when the caller must use ev_json_next (not inside the array, or nothing
 * buffered).  After parsing one complete value of n bytes that ends before
 * the end of that text, ev_json_consume(j, n) moves past it and its
 * separator (EV_OK or an error as ev_json_next gives).  A value that runs
 * to the end of the buffered text is read with ev_json_next instead. */
int ev_json_peek(ev_json *j, const char **text, size_t *len, uint64_t *offset);
int ev_json_consume(ev_json *j, size_t n) EV_RESULT_USED;
/* Between two elements of the big array (where ev_json_peek would look),
 * go on at offset of the input (a plain file: ev_input_seek), where
 * another reader stopped: at an element's first byte (elem 1), or at the
 * array's ']' (elem 0; EV_ERR_FORMAT when something else is there).
 * EV_ERR_ARG when not inside the array. */
int ev_json_jump(ev_json *j, uint64_t offset, int elem) EV_RESULT_USED;
/* 1 between two elements of the big array (its ']' not yet read). */
int ev_json_in_array(const ev_json *j);
/* Top-level members (other than the array) for which want() returns 0 are
 * scanned without being copied or size-limited: ev_json_next returns them
 * with text NULL and len their size.  Unset: every member is copied. */
void ev_json_want(ev_json *j, int (*want)(void *ctx, const char *key, size_t len), void *ctx);
/* Nested reading, for documents whose big arrays sit deeper than the top
 * level (rocprofv3's {"rocprofiler-sdk-tool": [{..., "buffer_records":
 * {"kernel_dispatch": [...]}}]}).  Once set, array_key and want are not
 * used: choose() is asked about each member (key) and each element of an
 * entered array (key NULL), with depth the number of containers open
 * around it (1 for a member of the document's object), and answers
 * EV_JSON_SKIP (scanned past, returned with text NULL), EV_JSON_COPY
 * (returned whole), EV_JSON_ENTER (an object or array: its members or
 * elements are offered in turn; a scalar is copied) or EV_JSON_ITEMS (an
 * array: its elements are returned as EV_JSON_ELEM with the array's key,
 * and ev_json_peek/ev_json_consume work inside it).  At most 16 containers
 * are open at once (EV_ERR_LIMIT beyond). */
enum { EV_JSON_SKIP = 0, EV_JSON_COPY = 1, EV_JSON_ENTER = 2, EV_JSON_ITEMS = 3 };
void ev_json_nest(ev_json *j, int (*choose)(void *ctx, int depth, const char *key, size_t len), void *ctx);
void ev_json_close(ev_json *j);

/* Tokens of one JSON value (jsmn, strict mode). */
enum { EV_JT_UNDEF = 0, EV_JT_OBJECT = 1, EV_JT_ARRAY = 2, EV_JT_STRING = 4, EV_JT_PRIMITIVE = 8 };
struct ev_json_tok { int type, start, end, size; };
/* Tokenize text into toks[max].  Returns the token count, or EV_ERR_FORMAT
 * (invalid JSON) or EV_ERR_LIMIT (more than max tokens). */
int ev_json_tokenize(const char *text, size_t len, struct ev_json_tok *toks, int max);
/* Index of the token after the value at i. */
int ev_json_skip(const struct ev_json_tok *t, int i);
/* Value token of member key in the object at i, or -1. */
int ev_json_get(const char *text, const struct ev_json_tok *t, int i, const char *key);
/* Does string or primitive token i equal s? */
int ev_json_eq(const char *text, const struct ev_json_tok *t, int i, const char *s);
/* Unescape string token i into out (capacity >= token length + 1): \uXXXX
 * becomes UTF-8.  Returns the length, or (size_t)-1 on a bad escape. */
size_t ev_json_str(const char *text, const struct ev_json_tok *t, int i, char *out);

#endif /* EV_JSON_H */
