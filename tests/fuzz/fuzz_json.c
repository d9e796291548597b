/* SPDX-License-Identifier: MIT */
/*
 * fuzz_json.c - the streaming JSON scanner and the jsmn tokenizer on
 * arbitrary bytes.  Every item must lie inside the input, every token
 * inside its item, ev_json_skip must move forward, and string tokens must
 * unescape into their bounds.
 */
#include "fuzz.h"

#include "ev/kineto.h"

#include "ev.h"

#define MAX_TOKS 4096

/* Does a raw control character (< 0x20) appear inside a string?  JSON
 * forbids it and jsmn refuses it; kineto2ev's scanner lets it through. */
static int control_in_string(const char *t, size_t n)
{
	int in = 0;
	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)t[i];
		if (in && c == '\\')
			i++;
		else if (c == '"')
			in = !in;
		else if (in && c < 0x20)
			return 1;
	}
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *path = fuzz_input_file(data, size, "in.json");
	static struct ev_json_tok toks[MAX_TOKS];
	ev_input *in;
	ev_json *j;
	struct ev_json_item it;
	int rc;
	if (ev_input_open(&in, path) != EV_OK)
		abort();
	/* A small value limit so the limit path runs too. */
	if (ev_json_open(&j, in, "traceEvents", 1 << 16) != EV_OK)
		abort();
	while ((rc = ev_json_next(j, &it)) > 0) {
		if (it.kind != EV_JSON_ELEM && it.kind != EV_JSON_TOP)
			abort();
		/* Plain input: the value's text is what the file holds there. */
		if (!ev_input_is_gzip(in) &&
		    (it.offset > size || it.len > size - it.offset || (it.len && memcmp(it.text, data + it.offset, it.len))))
			abort();
		int n = ev_json_tokenize(it.text, it.len, toks, MAX_TOKS);
		/* The one-pass event scanner is at least as strict as jsmn plus
		 * the separator check on containers (jsmn's strict mode refuses a
		 * bare top-level number) and raw control characters in strings:
		 * what it accepts, they accept. */
		struct ev_kevent e;
		if (it.len && (it.text[0] == '{' || it.text[0] == '[') && !control_in_string(it.text, it.len) &&
		    ev_kineto_scan_event(it.text, it.len, 0, &e) == EV_OK && n < 0 && n != EV_ERR_LIMIT)
			abort();
		if (n < 0)
			continue;
		if (n == 0 || n > MAX_TOKS)
			abort();
		for (int i = 0; i < n; i++) {
			if (toks[i].start < 0 || toks[i].end < toks[i].start || (size_t)toks[i].end > it.len)
				abort();
			int next = ev_json_skip(toks, i);
			if (next <= i || next > n)
				abort();
			if (toks[i].type == EV_JT_STRING) {
				char *s = malloc((size_t)(toks[i].end - toks[i].start) + 1);
				if (!s)
					abort();
				size_t len = ev_json_str(it.text, toks, i, s);
				if (len != (size_t)-1 && len > (size_t)(toks[i].end - toks[i].start))
					abort();
				free(s);
			}
		}
		if (toks[0].type == EV_JT_OBJECT) {
			(void)ev_json_get(it.text, toks, 0, "ph");
			(void)ev_json_get(it.text, toks, 0, "args");
		}
	}
	if (rc < 0 && !*ev_json_errdetail(j))
		abort();
	ev_json_close(j);
	ev_input_close(in);
	return 0;
}
